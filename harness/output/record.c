// SPDX-License-Identifier: Apache-2.0
/* record.c: the recording of a run (docs/recording.md), read back, and the VTK files of rigid
 * bodies and contacts.
 *
 * A frame is assembled in one buffer and written with one fwrite and a flush, so a reader sees
 * whole frames or a cut tail, never a frame with a wrong length prefix in front of it.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../../sim/fl_fem.h"
#include "../../sim/fl_geometry.h"
#include "../../sim/fl_mesh.h"
#include "../../peers/fl_peer.h"
#include "fl_record.h"

static const char MAGIC[8] = {'F', 'L', 'R', 'E', 'C', '0', '1', '\n'};
#define FRAME_TAG 0x314d5246u /* "FRM1" read as a little-endian u32 */
#define FRAME_FIXED 64        /* bytes of a frame payload before its arrays (version 2) */
#define FRAME_FIXED_V1 56     /* version 1: no energy */
#define BODY_BYTES 52         /* version 2: pose and velocities, 13 float32 (version 1: 28) */
#define VERT_BYTES 20         /* version 2: position, von Mises, strain, 5 float32 (v1: 12) */
#define CONTACT_BYTES 52      /* 10 float32 + 3 int32 */
#define RECORD_VERSION 2
#define SLIP_RATIO 0.99       /* |gamma_t| >= this x mu gamma_n: on the cone's edge, sliding */

struct fl_recorder {
  FILE *f;
  int nsolver;
  fl_int nbody, nvert;
  double *vm, *strain;  /* per tet scratch of the largest deformable body */
  double *vv;           /* per vertex: rest volume around it, then accumulated fields */
  unsigned char *buf;
  size_t cap;
};


//---- header ----

/* Scene bounds from the initial poses of every bounded body and deformable mesh. */
static void scene_bounds(const fl_world *w, double lo[3], double hi[3]) {
  for (int c = 0; c < 3; c++) {
    lo[c] = INFINITY;
    hi[c] = -INFINITY;
  }
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    if (b->shape.type == FL_SHAPE_PLANE) continue;
    double l[3], h[3];
    fl_shape_aabb(&b->shape, b->pos, b->quat, 0, l, h);
    for (int c = 0; c < 3; c++) {
      lo[c] = fmin(lo[c], l[c]);
      hi[c] = fmax(hi[c], h[c]);
    }
  }
  for (fl_int k = 0; k < w->nfem; k++) {
    const fl_fem_body *fb = w->fem[k];
    for (fl_int v = 0; v < fb->mesh->nvert; v++)
      for (int c = 0; c < 3; c++) {
        lo[c] = fmin(lo[c], fb->x[3 * v + c]);
        hi[c] = fmax(hi[c], fb->x[3 * v + c]);
      }
  }
  for (int c = 0; c < 3; c++)
    if (!(lo[c] <= hi[c])) lo[c] = -1, hi[c] = 1; // nothing bounded: a 2 m box about 0
}


/* Contact c's impulse in the world frame (N s, on the second body) and whether it slides. */
static int contact_impulse(const fl_problem *p, const double *gamma, fl_int c, double imp[3]) {
  const double *fr = p->frame + 9 * c, *g = gamma + 3 * c;
  for (int k = 0; k < 3; k++) imp[k] = g[0] * fr[k] + g[1] * fr[3 + k] + g[2] * fr[6 + k];
  return g[0] > 0 && hypot(g[1], g[2]) >= SLIP_RATIO * p->mu[c] * g[0];
}


/* The scene's middle (m) and the half side of the square that draws a plane (m). */
static double scene_middle(const fl_world *w, double mid[3]) {
  double lo[3], hi[3];
  scene_bounds(w, lo, hi);
  double d[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
  for (int k = 0; k < 3; k++) mid[k] = 0.5 * (lo[k] + hi[k]);
  return fmax(0.75 * fl_v3_norm(d), 0.05);
}


/* A plane is drawn as a square under the scene's middle `mid`: the middle's position in the
 * plane's frame (x, y) into pc; (0, 0) for other shapes. */
static void plane_centre(const fl_body *b, const double mid[3], double pc[2]) {
  pc[0] = pc[1] = 0;
  if (b->shape.type != FL_SHAPE_PLANE) return;
  double R[9], rel[3] = {mid[0] - b->pos[0], mid[1] - b->pos[1], mid[2] - b->pos[2]};
  fl_quat_to_mat(b->quat, R);
  pc[0] = R[0] * rel[0] + R[3] * rel[1] + R[6] * rel[2];
  pc[1] = R[1] * rel[0] + R[4] * rel[1] + R[7] * rel[2];
}


static cJSON *num_array(const double *x, size_t n) {
  cJSON *a = cJSON_CreateArray();
  for (size_t k = 0; a && k < n; k++) {
    // 7 significant digits: the viewer draws in float32
    char s[32];
    snprintf(s, sizeof s, "%.7g", x[k]);
    cJSON_AddItemToArray(a, cJSON_CreateRaw(s));
  }
  return a;
}


static cJSON *int_array(const fl_int *x, size_t n) {
  cJSON *a = cJSON_CreateArray();
  for (size_t k = 0; a && k < n; k++) cJSON_AddItemToArray(a, cJSON_CreateNumber(x[k]));
  return a;
}


static const char *kind_name(fl_body_kind k) {
  return k == FL_BODY_DYNAMIC ? "dynamic" : k == FL_BODY_FIXED ? "fixed" : "prescribed";
}


static const char *shape_name(fl_shape_type t) {
  static const char *const n[] = {"plane", "sphere", "box", "capsule", "cylinder", "convex"};
  return (int)t >= 0 && (int)t < FL_SHAPE_NTYPES ? n[t] : "unknown";
}


/* Appends a mesh to `meshes` unless an equal one is there; returns its index or an error.
 * Spheres and boxes share a unit mesh scaled per body. */
static int add_mesh(cJSON *meshes, const fl_shape *s, double plane_half, const double pc[2]) {
  fl_shape unit;
  memset(&unit, 0, sizeof unit);
  const fl_shape *src = s;
  int rc = FL_OK;
  if (s->type == FL_SHAPE_SPHERE) rc = fl_shape_make_sphere(1, &unit), src = &unit;
  if (s->type == FL_SHAPE_BOX) rc = fl_shape_make_box(1, 1, 1, &unit), src = &unit;
  fl_int nv, nt;
  double *v;
  fl_int *t;
  if (rc >= 0) rc = fl_shape_tessellate(src, plane_half, pc, &nv, &v, &nt, &t);
  fl_shape_free(&unit);
  if (rc < 0) return rc;
  cJSON *m = cJSON_CreateObject();
  cJSON_AddItemToObject(m, "vert", num_array(v, 3 * (size_t)nv));
  cJSON_AddItemToObject(m, "tri", int_array(t, 3 * (size_t)nt));
  cJSON_AddBoolToObject(m, "smooth", s->type == FL_SHAPE_SPHERE || s->type == FL_SHAPE_CAPSULE);
  fl_free(v);
  fl_free(t);
  int n = cJSON_GetArraySize(meshes);
  for (int k = 0; k < n; k++)
    if (cJSON_Compare(cJSON_GetArrayItem(meshes, k), m, 1)) {
      cJSON_Delete(m);
      return k;
    }
  cJSON_AddItemToArray(meshes, m);
  return n;
}


static cJSON *header_json(const fl_world *w, const char *problem, int nsolver,
                          const char *const *solvers, int every, long steps) {
  cJSON *h = cJSON_CreateObject();
  cJSON_AddStringToObject(h, "format", "frictionlab-recording");
  cJSON_AddNumberToObject(h, "version", RECORD_VERSION);
  cJSON_AddStringToObject(h, "scene", w->name);
  cJSON_AddStringToObject(h, "problem", problem);
  cJSON_AddNumberToObject(h, "dt", w->dt);
  cJSON_AddNumberToObject(h, "every", every);
  cJSON_AddNumberToObject(h, "steps", (double)steps);
  cJSON *sv = cJSON_AddArrayToObject(h, "solvers");
  for (int k = 0; k < nsolver; k++) cJSON_AddItemToArray(sv, cJSON_CreateString(solvers[k]));
  cJSON *rs = cJSON_AddObjectToObject(h, "reasons");
  for (int c = -16; c <= 16; c++) {
    char key[16];
    snprintf(key, sizeof key, "%d", c);
    cJSON_AddStringToObject(rs, key, fl_reason_name(c));
  }
  double lo[3], hi[3];
  scene_bounds(w, lo, hi);
  double d[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]}, len = fl_v3_norm(d);
  double mid[3], half = scene_middle(w, mid);
  cJSON *bd = cJSON_AddArrayToObject(h, "bounds");
  cJSON_AddItemToArray(bd, num_array(lo, 3));
  cJSON_AddItemToArray(bd, num_array(hi, 3));
  cJSON_AddNumberToObject(h, "length", len);
  double smallest = INFINITY; // of the dynamic bodies, deformable ones by their box's diagonal
  for (fl_int i = 0; i < w->nbody; i++)
    if (w->body[i].kind == FL_BODY_DYNAMIC) smallest = fmin(smallest, w->body[i].size);
  for (fl_int k = 0; k < w->nfem; k++) {
    const fl_fem_body *fb = w->fem[k];
    double l[3] = {INFINITY, INFINITY, INFINITY}, u[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (fl_int v = 0; v < fb->mesh->nvert; v++)
      for (int c = 0; c < 3; c++) {
        l[c] = fmin(l[c], fb->x[3 * v + c]);
        u[c] = fmax(u[c], fb->x[3 * v + c]);
      }
    double e[3] = {u[0] - l[0], u[1] - l[1], u[2] - l[2]};
    if (fb->mesh->nvert > 0) smallest = fmin(smallest, fl_v3_norm(e));
  }
  if (isfinite(smallest)) cJSON_AddNumberToObject(h, "pen_limit", 0.01 * smallest);
  cJSON *meshes = cJSON_AddArrayToObject(h, "meshes");
  cJSON *bodies = cJSON_AddArrayToObject(h, "bodies");
  // spheres and boxes share one unit mesh each: made once, not tessellated, printed and
  // compared per body (a 1e5-sphere scene spent two minutes here)
  int unit_mesh[2] = {-1, -1};
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    double pc[2];
    plane_centre(b, mid, pc);
    int u = b->shape.type == FL_SHAPE_SPHERE ? 0 : b->shape.type == FL_SHAPE_BOX ? 1 : -1;
    int mi = u >= 0 && unit_mesh[u] >= 0 ? unit_mesh[u] : add_mesh(meshes, &b->shape, half, pc);
    if (u >= 0 && mi >= 0) unit_mesh[u] = mi;
    if (mi < 0) {
      cJSON_Delete(h);
      return NULL;
    }
    double scale[3] = {1, 1, 1};
    if (b->shape.type == FL_SHAPE_SPHERE) scale[0] = scale[1] = scale[2] = b->shape.size[0];
    if (b->shape.type == FL_SHAPE_BOX) memcpy(scale, b->shape.size, sizeof scale);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", b->name);
    cJSON_AddStringToObject(o, "kind", kind_name(b->kind));
    cJSON_AddStringToObject(o, "shape", shape_name(b->shape.type));
    cJSON_AddNumberToObject(o, "mesh", mi);
    cJSON_AddItemToObject(o, "scale", num_array(scale, 3));
    cJSON_AddNumberToObject(o, "size", isfinite(b->size) ? b->size : len);
    cJSON_AddItemToArray(bodies, o);
  }
  cJSON *def = cJSON_AddArrayToObject(h, "deformable");
  fl_int first = 0;
  for (fl_int k = 0; k < w->nfem; k++) {
    const fl_mesh *me = w->fem[k]->mesh;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", w->fem[k]->name);
    cJSON_AddNumberToObject(o, "first", first);
    cJSON_AddNumberToObject(o, "nvert", me->nvert);
    cJSON_AddItemToObject(o, "tri", int_array(me->tri, 3 * (size_t)me->ntri));
    cJSON_AddBoolToObject(o, "plane_strain", w->fem[k]->plane_strain != 0);
    cJSON_AddItemToArray(def, o);
    first += me->nvert;
  }
  cJSON_AddNumberToObject(h, "nvert", first);
  // a plane-strain body is a 2-D problem in x, y: the viewer looks along its z axis
  for (fl_int k = 0; k < w->nfem; k++)
    if (w->fem[k]->plane_strain) {
      cJSON_AddStringToObject(h, "view_axis", "z");
      break;
    }
  return h;
}


int fl_record_begin(FILE *f, const fl_world *w, const char *problem, int nsolver,
                    const char *const *solvers, int every, long steps, fl_recorder **out) {
  *out = NULL;
  cJSON *h = header_json(w, problem, nsolver, solvers, every, steps);
  char *text = h ? cJSON_PrintUnformatted(h) : NULL;
  cJSON_Delete(h);
  if (!text) return fl_errcode() < 0 ? fl_errcode() : fl_seterr(FL_ERR_NOMEM, "record: out of memory");
  fl_recorder *r = fl_calloc(1, sizeof *r);
  if (!r) {
    free(text);
    return fl_seterr(FL_ERR_NOMEM, "record: out of memory");
  }
  r->f = f;
  r->nsolver = nsolver;
  r->nbody = w->nbody;
  for (fl_int k = 0; k < w->nfem; k++) r->nvert += w->fem[k]->mesh->nvert;
  uint32_t len = (uint32_t)strlen(text);
  unsigned char l4[4] = {(unsigned char)len, (unsigned char)(len >> 8), (unsigned char)(len >> 16),
                         (unsigned char)(len >> 24)};
  int ok = fwrite(MAGIC, 1, 8, f) == 8 && fwrite(l4, 1, 4, f) == 4 &&
           fwrite(text, 1, len, f) == len && fflush(f) == 0;
  free(text);
  if (!ok) {
    fl_free(r);
    return fl_seterr(FL_ERR_IO, "record: cannot write the recording's header");
  }
  *out = r;
  return FL_OK;
}


void fl_record_free(fl_recorder *r) {
  if (!r) return;
  fl_free(r->vm);
  fl_free(r->strain);
  fl_free(r->vv);
  fl_free(r->buf);
  fl_free(r);
}


size_t fl_record_frame_bytes(const fl_world *w, long nc) {
  size_t nv = 0;
  for (fl_int k = 0; k < w->nfem; k++) nv += (size_t)w->fem[k]->mesh->nvert;
  return 8 + FRAME_FIXED + BODY_BYTES * (size_t)w->nbody + VERT_BYTES * nv +
         CONTACT_BYTES * (size_t)(nc > 0 ? nc : 0);
}


long fl_record_auto_every(const fl_world *w, long steps, int nsolver, double budget) {
  long nc = 3 * (long)w->nbody + 100 * (long)w->nfem;
  for (fl_int i = 0; i < w->nbody; i++) { // a hydroelastic patch: one contact per triangle
    long m = w->body[i].hydro_mesh;
    if (w->body[i].hydro_modulus > 0) nc += m > 0 ? m : 6 * m * m;
  }
  double per = (double)fl_record_frame_bytes(w, nc);
  double want = per * (double)(steps + 1) * nsolver / budget;
  return want > 1 ? (long)ceil(want) : 1;
}


//---- frames ----

static unsigned char *put32(unsigned char *p, uint32_t x) {
  p[0] = (unsigned char)x;
  p[1] = (unsigned char)(x >> 8);
  p[2] = (unsigned char)(x >> 16);
  p[3] = (unsigned char)(x >> 24);
  return p + 4;
}
static unsigned char *puti(unsigned char *p, long x) { return put32(p, (uint32_t)(int32_t)x); }
static unsigned char *putf(unsigned char *p, double x) {
  float f = (float)x;
  uint32_t u;
  memcpy(&u, &f, 4);
  return put32(p, u);
}
static unsigned char *putd(unsigned char *p, double x) {
  uint64_t u;
  memcpy(&u, &x, 8);
  p = put32(p, (uint32_t)u);
  return put32(p, (uint32_t)(u >> 32));
}


/* a side's code in a frame: rigid body index, -1 for none, -2 - k for deformable body k */
static long side_code(fl_int body, fl_int fem) { return body >= 0 ? body : fem >= 0 ? -2 - (long)fem : -1; }


/* Per-vertex von Mises stress (Pa) and equivalent strain of deformable body k into vm and eps
 * (nvert each): the rest-volume-weighted mean over the tets around each vertex. */
static int vertex_fields(fl_recorder *r, const fl_world *w, int k, float *vm, float *eps) {
  const fl_fem_body *b = w->fem[k];
  const fl_mesh *m = b->mesh;
  size_t nt = (size_t)(m->ntet > 0 ? m->ntet : 1), nv = (size_t)(m->nvert > 0 ? m->nvert : 1);
  fl_free(r->vm);
  fl_free(r->strain);
  fl_free(r->vv);
  r->vm = fl_malloc(nt * sizeof(double));
  r->strain = fl_malloc(nt * sizeof(double));
  r->vv = fl_calloc(3 * nv, sizeof(double));
  if (!r->vm || !r->strain || !r->vv) return fl_seterr(FL_ERR_NOMEM, "record: out of memory");
  FL_TRY(fl_fem_von_mises(w, k, r->vm, NULL));
  FL_TRY(fl_fem_equivalent_strain(w, k, r->strain));
  double *vol = r->vv, *svm = r->vv + nv, *seps = r->vv + 2 * nv;
  for (fl_int e = 0; e < m->ntet; e++) {
    const fl_int *t = m->tet + 4 * e;
    double wv = fabs(b->vol[e]);
    for (int a = 0; a < 4; a++) {
      vol[t[a]] += wv;
      svm[t[a]] += wv * r->vm[e];
      seps[t[a]] += wv * r->strain[e];
    }
  }
  for (fl_int v = 0; v < m->nvert; v++) {
    vm[v] = vol[v] > 0 ? (float)(svm[v] / vol[v]) : 0;
    eps[v] = vol[v] > 0 ? (float)(seps[v] / vol[v]) : 0;
  }
  return FL_OK;
}


/* one frame; the contacts are the world's problem's (ext NULL) or the nx given in ext */
static int write_frame(fl_recorder *r, int solver, long step, fl_world *w, const fl_step_info *info,
                       long nx, const fl_record_contact *ext) {
  const fl_problem *p = info && !ext ? fl_world_problem(w) : NULL;
  const double *v, *gamma;
  fl_world_solution(w, &v, &gamma);
  fl_int nc = ext ? (fl_int)nx : p && gamma ? p->nc : 0;
  size_t need = fl_record_frame_bytes(w, nc);
  if (need > r->cap) {
    unsigned char *b = fl_realloc(r->buf, need);
    if (!b) return fl_seterr(FL_ERR_NOMEM, "record: out of memory");
    r->buf = b;
    r->cap = need;
  }
  unsigned char *q = r->buf;
  q = put32(q, FRAME_TAG);
  q = put32(q, (uint32_t)(need - 8));
  q = puti(q, solver);
  q = puti(q, step);
  q = putd(q, w->t);
  q = puti(q, info ? info->res.iters : 0);
  q = puti(q, info ? info->res.reason : 0);
  q = putd(q, info ? info->res.error : NAN);
  q = putd(q, info ? info->met.natmap : NAN);
  q = puti(q, w->nbody);
  q = puti(q, r->nvert);
  q = puti(q, nc);
  q = puti(q, 0);
  double kin = 0, pot = 0;
  fl_world_energy_momentum(w, &kin, &pot, NULL, NULL);
  q = putd(q, kin + pot);
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    for (int c = 0; c < 3; c++) q = putf(q, b->pos[c]);
    for (int c = 0; c < 4; c++) q = putf(q, b->quat[c]);
    for (int c = 0; c < 3; c++) q = putf(q, b->vel[c]);
    for (int c = 0; c < 3; c++) q = putf(q, b->omega[c]);
  }
  for (fl_int k = 0; k < w->nfem; k++) {
    const fl_fem_body *fb = w->fem[k];
    for (fl_int j = 0; j < 3 * fb->mesh->nvert; j++) q = putf(q, fb->x[j]);
  }
  // per-vertex fields after all positions: von Mises (Pa) of every body, then strain
  unsigned char *qs = q + 4 * (size_t)r->nvert;
  for (fl_int k = 0; k < w->nfem; k++) {
    fl_int nv = w->fem[k]->mesh->nvert;
    float *vm = fl_malloc(2 * (size_t)(nv > 0 ? nv : 1) * sizeof(float));
    if (!vm) return fl_seterr(FL_ERR_NOMEM, "record: out of memory");
    int rc = vertex_fields(r, w, (int)k, vm, vm + nv);
    for (fl_int j = 0; rc >= 0 && j < nv; j++) {
      q = putf(q, vm[j]);
      qs = putf(qs, vm[nv + j]);
    }
    fl_free(vm);
    FL_TRY(rc);
  }
  q = qs;
  for (fl_int c = 0; ext && c < nc; c++) {
    const fl_record_contact *e = ext + c;
    for (int k = 0; k < 3; k++) q = putf(q, e->point[k]);
    for (int k = 0; k < 3; k++) q = putf(q, e->normal[k]);
    for (int k = 0; k < 3; k++) q = putf(q, e->impulse[k]);
    q = putf(q, e->phi);
    q = puti(q, e->side[0]);
    q = puti(q, e->side[1]);
    q = put32(q, e->sliding ? 1u : 0u);
  }
  for (fl_int c = 0; !ext && c < nc; c++) {
    const double *fr = p->frame + 9 * c;
    double imp[3];
    unsigned slip = (unsigned)contact_impulse(p, gamma, c, imp);
    fl_int body[2] = {-1, -1}, fem[2] = {-1, -1};
    fl_world_contact_sides(w, c, body, fem);
    for (int k = 0; k < 3; k++) q = putf(q, p->point[3 * c + k]);
    for (int k = 0; k < 3; k++) q = putf(q, fr[k]);
    for (int k = 0; k < 3; k++) q = putf(q, imp[k]);
    q = putf(q, p->phi0[c]);
    q = puti(q, side_code(body[0], fem[0]));
    q = puti(q, side_code(body[1], fem[1]));
    q = put32(q, slip);
  }
  if (fwrite(r->buf, 1, need, r->f) != need || fflush(r->f) != 0)
    return fl_seterr(FL_ERR_IO, "record: write failed (disk full?)");
  return FL_OK;
}


int fl_record_frame(fl_recorder *r, int solver, long step, fl_world *w, const fl_step_info *info) {
  return write_frame(r, solver, step, w, info, 0, NULL);
}


int fl_record_frame_contacts(fl_recorder *r, int solver, long step, fl_world *w,
                             const fl_step_info *info, long nc, const fl_record_contact *c) {
  static const fl_record_contact none;
  return write_frame(r, solver, step, w, info, nc > 0 ? nc : 0, nc > 0 ? c : &none);
}


//---- reading back ----

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}


int fl_record_read_info(const char *path, fl_record_info *info) {
  memset(info, 0, sizeof *info);
  FILE *f = NULL;
  if (access(path, F_OK) != 0)
    return fl_seterr(FL_ERR_IO, "%s: cannot open: no recording there", path);
  FL_TRY(fl_open_input(path, "recording (.flrec)", 0, &f));
  unsigned char head[12];
  size_t got = fread(head, 1, 12, f);
  if (got < 12 || memcmp(head, MAGIC, 8) != 0) {
    fclose(f);
    return fl_seterr(FL_ERR_FORMAT, "%s: byte 0: expected the recording magic \"FLREC01\" and a "
                                    "header length (not a FrictionLab recording, or empty)", path);
  }
  uint32_t hl = get32(head + 8);
  char *text = hl < (1u << 30) ? fl_malloc((size_t)hl + 1) : NULL;
  if (!text || fread(text, 1, hl, f) != hl) {
    fl_free(text);
    fclose(f);
    return fl_seterr(FL_ERR_FORMAT, "%s: byte 12: header of %u bytes cut short", path, hl);
  }
  text[hl] = 0;
  cJSON *h = cJSON_Parse(text);
  fl_free(text);
  const cJSON *fmt = cJSON_GetObjectItem(h, "format"), *ver = cJSON_GetObjectItem(h, "version");
  const cJSON *sv = cJSON_GetObjectItem(h, "solvers"), *bd = cJSON_GetObjectItem(h, "bodies");
  const cJSON *nv = cJSON_GetObjectItem(h, "nvert"), *sc = cJSON_GetObjectItem(h, "scene");
  if (!h || !cJSON_IsString(fmt) || strcmp(fmt->valuestring, "frictionlab-recording") != 0 ||
      !cJSON_IsNumber(ver) || (ver->valuedouble != 1 && ver->valuedouble != 2) ||
      !cJSON_IsArray(sv) || !cJSON_IsArray(bd) || !cJSON_IsNumber(nv)) {
    cJSON_Delete(h);
    fclose(f);
    return fl_seterr(FL_ERR_FORMAT, "%s: byte 12: expected a JSON header with format "
                                    "\"frictionlab-recording\", version 1 or 2, solvers, bodies "
                                    "and nvert", path);
  }
  // a count read as a double: checked before the cast (1e300 or -5 was cast as is)
  double nvd = nv->valuedouble;
  if (!(nvd >= 0 && nvd <= (double)INT32_MAX) || nvd != floor(nvd)) {
    cJSON_Delete(h);
    fclose(f);
    return fl_seterr(FL_ERR_FORMAT, "%s: byte 12: header \"nvert\": %g, expected an integer in "
                                    "[0, 2^31 - 1]", path, nvd);
  }
  info->version = (int)ver->valuedouble;
  // version 1 frames have no energy, poses without velocities and vertices without fields
  long fixed_len = info->version == 1 ? FRAME_FIXED_V1 : FRAME_FIXED;
  long body_len = info->version == 1 ? 28 : BODY_BYTES, vert_len = info->version == 1 ? 12 : VERT_BYTES;
  info->nsolver = cJSON_GetArraySize(sv);
  info->nbody = cJSON_GetArraySize(bd);
  long nvert = (long)nv->valuedouble;
  snprintf(info->scene, sizeof info->scene, "%s", cJSON_IsString(sc) ? sc->valuestring : "");
  cJSON_Delete(h);
  info->header_bytes = 12 + (long)hl;
  long off = info->header_bytes;
  unsigned char fixed[8 + FRAME_FIXED_V1]; // the counts, at the same offsets in both versions
  int rc = FL_OK;
  for (;;) {
    if (fseek(f, off, SEEK_SET) != 0) break;
    got = fread(fixed, 1, sizeof fixed, f);
    if (got < sizeof fixed) break;
    uint32_t tag = get32(fixed), len = get32(fixed + 4);
    long solver = (int32_t)get32(fixed + 8), nb = (int32_t)get32(fixed + 48);
    long nvf = (int32_t)get32(fixed + 52), nc = (int32_t)get32(fixed + 56);
    long expect = fixed_len + body_len * nb + vert_len * nvf + CONTACT_BYTES * nc;
    if (tag != FRAME_TAG || nc < 0 || nb < 0 || nvf < 0 || solver < 0 || solver >= info->nsolver || nb != info->nbody ||
        nvf != nvert || (long)len != expect) {
      rc = fl_seterr(FL_ERR_FORMAT, "%s: byte %ld (frame %ld): expected a frame of solver 0..%d "
                                    "with %d bodies and %ld vertices, length %ld", path, off,
                     info->frames, info->nsolver - 1, info->nbody, nvert, expect);
      break;
    }
    // the whole frame must be there
    if (fseek(f, off + 8 + (long)len - 1, SEEK_SET) != 0 || fgetc(f) == EOF) break;
    info->frames++;
    if (solver < 32) info->frames_of[solver]++;
    off += 8 + (long)len;
  }
  info->bytes_whole = off;
  fseek(f, 0, SEEK_END);
  info->bytes_file = ftell(f);
  info->cut = info->bytes_file > info->bytes_whole;
  fclose(f);
  return rc;
}


//---- VTK ----

int fl_vtk_write_rigid(fl_world *w, const char *path_bodies, const char *path_contacts) {
  // bodies: every shape's surface at its pose; planes as a square the size of the scene
  double mid[3], half = scene_middle(w, mid);
  fl_int np = 0, nt = 0, cap_p = 0, cap_t = 0;
  double *x = NULL, *vel = NULL, *id = NULL;
  fl_int *tri = NULL;
  int rc = FL_OK;
  for (fl_int i = 0; rc >= 0 && i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    double pc[2];
    plane_centre(b, mid, pc);
    fl_int nv, ntr;
    double *v;
    fl_int *t;
    rc = fl_shape_tessellate(&b->shape, half, pc, &nv, &v, &ntr, &t);
    if (rc < 0) break;
    if (np + nv > cap_p) {
      cap_p = 2 * (np + nv);
      double *a = fl_realloc(x, 3 * (size_t)cap_p * sizeof(double));
      if (a) x = a;
      double *c = fl_realloc(vel, 3 * (size_t)cap_p * sizeof(double));
      if (c) vel = c;
      if (!a || !c) rc = fl_seterr(FL_ERR_NOMEM, "vtk: out of memory");
    }
    if (rc >= 0 && nt + ntr > cap_t) {
      cap_t = 2 * (nt + ntr);
      fl_int *a = fl_realloc(tri, 3 * (size_t)cap_t * sizeof(fl_int));
      double *c = a ? fl_realloc(id, (size_t)cap_t * sizeof(double)) : NULL;
      if (a) tri = a;
      if (c) id = c;
      if (!a || !c) rc = fl_seterr(FL_ERR_NOMEM, "vtk: out of memory");
    }
    for (fl_int k = 0; rc >= 0 && k < nv; k++) {
      double *xw = x + 3 * (np + k), *vw = vel + 3 * (np + k), r[3];
      fl_quat_rotate(b->quat, v + 3 * k, r);
      double wr[3];
      fl_v3_cross(b->omega, r, wr);
      for (int c = 0; c < 3; c++) {
        xw[c] = b->pos[c] + r[c];
        vw[c] = b->vel[c] + wr[c];
      }
    }
    for (fl_int k = 0; rc >= 0 && k < ntr; k++) {
      for (int c = 0; c < 3; c++) tri[3 * (nt + k) + c] = np + t[3 * k + c];
      id[nt + k] = (double)i;
    }
    if (rc >= 0) {
      np += nv;
      nt += ntr;
    }
    fl_free(v);
    fl_free(t);
  }
  if (rc >= 0) {
    fl_vtk_field pf = {"velocity", 3, vel}, cf = {"body_id", 1, id};
    rc = fl_vtp_write(path_bodies, np, x, 0, NULL, nt, tri, 1, &pf, 1, &cf);
  }
  fl_free(x);
  fl_free(vel);
  fl_free(id);
  fl_free(tri);
  if (rc < 0 || !path_contacts) return rc;
  // contacts of the last step
  const fl_problem *p = fl_world_problem(w);
  const double *v, *gamma;
  fl_world_solution(w, &v, &gamma);
  fl_int nc = p && gamma ? p->nc : 0;
  double *buf = fl_malloc((size_t)(nc > 0 ? nc : 1) * 11 * sizeof(double));
  fl_int *vert = fl_malloc((size_t)(nc > 0 ? nc : 1) * sizeof(fl_int));
  if (!buf || !vert) {
    fl_free(buf);
    fl_free(vert);
    return fl_seterr(FL_ERR_NOMEM, "vtk: out of memory");
  }
  double *pt = buf, *nrm = buf + 3 * nc, *imp = buf + 6 * nc, *phi = buf + 9 * nc, *slip = buf + 10 * nc;
  for (fl_int c = 0; c < nc; c++) {
    for (int k = 0; k < 3; k++) {
      pt[3 * c + k] = p->point[3 * c + k];
      nrm[3 * c + k] = p->frame[9 * c + k];
    }
    slip[c] = contact_impulse(p, gamma, c, imp + 3 * c);
    phi[c] = p->phi0[c];
    vert[c] = c;
  }
  fl_vtk_field f[4] = {{"normal", 3, nrm}, {"impulse", 3, imp}, {"phi", 1, phi}, {"slip", 1, slip}};
  rc = fl_vtp_write(path_contacts, nc, pt, nc, vert, 0, NULL, 4, f, 0, NULL);
  fl_free(buf);
  fl_free(vert);
  return rc;
}


//---- merging ----

/* The header of the recording at path (parsed JSON; the caller deletes it) or NULL. */
static cJSON *read_header(const char *path) {
  FILE *f = NULL;
  if (fl_open_input(path, "recording (.flrec)", 0, &f) < 0) f = NULL;
  unsigned char head[12];
  cJSON *h = NULL;
  if (f && fread(head, 1, 12, f) == 12 && memcmp(head, MAGIC, 8) == 0) {
    uint32_t hl = get32(head + 8);
    char *text = hl < (1u << 30) ? fl_malloc((size_t)hl + 1) : NULL;
    if (text && fread(text, 1, hl, f) == hl) {
      text[hl] = 0;
      h = cJSON_Parse(text);
    }
    fl_free(text);
  }
  if (f) fclose(f);
  return h;
}


char *fl_record_scene_key(const char *path) {
  cJSON *h = read_header(path);
  if (!h) return NULL;
  cJSON_DeleteItemFromObject(h, "solvers");
  cJSON_DeleteItemFromObject(h, "problem");
  char *text = cJSON_PrintUnformatted(h);
  cJSON_Delete(h);
  return text;
}


int fl_record_merge(const char *const *paths, const char *const *names, int n, const char *out) {
  cJSON *h = NULL, *all = cJSON_CreateArray();
  int rc = all ? FL_OK : fl_seterr(FL_ERR_NOMEM, "record: out of memory");
  int *offset = fl_calloc((size_t)(n > 0 ? n : 1), sizeof(int));
  if (!offset) rc = fl_seterr(FL_ERR_NOMEM, "record: out of memory");
  for (int k = 0; rc >= 0 && k < n; k++) {
    cJSON *hk = read_header(paths[k]);
    const cJSON *sv = cJSON_GetObjectItem(hk, "solvers");
    if (!cJSON_IsArray(sv)) {
      cJSON_Delete(hk);
      rc = fl_seterr(FL_ERR_FORMAT, "%s: byte 12: expected a recording header with solvers", paths[k]);
      break;
    }
    offset[k] = cJSON_GetArraySize(all);
    const cJSON *it;
    if (names && names[k] && cJSON_GetArraySize(sv) == 1)
      cJSON_AddItemToArray(all, cJSON_CreateString(names[k]));
    else
      cJSON_ArrayForEach(it, sv) cJSON_AddItemToArray(all, cJSON_Duplicate(it, 1));
    if (!h) h = hk;
    else cJSON_Delete(hk);
  }
  if (rc >= 0 && h) {
    cJSON_ReplaceItemInObject(h, "solvers", all);
    all = NULL;
  }
  char *text = rc >= 0 && h ? cJSON_PrintUnformatted(h) : NULL;
  if (rc >= 0 && !text) rc = fl_seterr(FL_ERR_NOMEM, "record: out of memory");
  FILE *f = rc >= 0 ? fopen(out, "wb") : NULL;
  if (rc >= 0 && !f) rc = fl_seterr(FL_ERR_IO, "%s: cannot write", out);
  if (rc >= 0) {
    uint32_t len = (uint32_t)strlen(text);
    unsigned char l4[4];
    put32(l4, len);
    if (fwrite(MAGIC, 1, 8, f) != 8 || fwrite(l4, 1, 4, f) != 4 || fwrite(text, 1, len, f) != len)
      rc = fl_seterr(FL_ERR_IO, "%s: write failed", out);
  }
  // every whole frame of each file, its solver index moved past the files before it
  for (int k = 0; rc >= 0 && k < n; k++) {
    fl_record_info info;
    rc = fl_record_read_info(paths[k], &info);
    if (rc < 0) break;
    FILE *in = fopen(paths[k], "rb");
    size_t body = (size_t)(info.bytes_whole - info.header_bytes);
    unsigned char *b = in ? fl_malloc(body + 1) : NULL;
    if (!in || !b || fseek(in, info.header_bytes, SEEK_SET) != 0 || fread(b, 1, body, in) != body)
      rc = fl_seterr(FL_ERR_IO, "%s: cannot read", paths[k]);
    for (size_t off = 0; rc >= 0 && off + 12 <= body; off += 8 + get32(b + off + 4))
      put32(b + off + 8, (uint32_t)((int32_t)get32(b + off + 8) + offset[k]));
    if (rc >= 0 && fwrite(b, 1, body, f) != body) rc = fl_seterr(FL_ERR_IO, "%s: write failed", out);
    if (in) fclose(in);
    fl_free(b);
  }
  if (f && fclose(f) != 0 && rc >= 0) rc = fl_seterr(FL_ERR_IO, "%s: write failed", out);
  if (rc < 0 && f) remove(out);
  free(text);
  cJSON_Delete(h);
  cJSON_Delete(all);
  fl_free(offset);
  return rc;
}


int fl_record_peer_frame(fl_recorder *rec, int sidx, long step, fl_world *w,
                         const fl_step_info *info, const struct fl_peer *peer) {
  int n = fl_peer_contacts(peer);
  fl_record_contact *c = fl_calloc((size_t)(n > 0 ? n : 1), sizeof *c);
  if (!c) return fl_seterr(FL_ERR_NOMEM, "recording: out of memory");
  int rc = FL_OK;
  for (int i = 0; rc >= 0 && i < n; i++) {
    fl_peer_contact_info pc;
    rc = fl_peer_contact(peer, i, &pc);
    if (rc < 0) break;
    memcpy(c[i].point, pc.point, sizeof pc.point);
    memcpy(c[i].normal, pc.normal, sizeof pc.normal);
    memcpy(c[i].impulse, pc.impulse, sizeof pc.impulse);
    c[i].phi = pc.dist;
    c[i].side[0] = pc.body[0];
    c[i].side[1] = pc.body[1];
    c[i].sliding = pc.sliding;
  }
  if (rc >= 0) rc = fl_record_frame_contacts(rec, sidx, step, w, info, n, c);
  fl_free(c);
  return rc;
}

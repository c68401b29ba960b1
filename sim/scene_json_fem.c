// SPDX-License-Identifier: Apache-2.0
/* scene_json_fem.c: the deformable bodies of scene files (docs/scene-format.md): parsing
 * "deformable" entries into the world and writing them back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fl_fem.h"
#include "scene_json_impl.h"

//---- deformable bodies ----

/* Vertex indices from "vertices" (array of indices) or "box" ({"lo": [3], "hi": [3]}, rest
 * positions) of obj; *idx allocated with fl_malloc. */
static int vertex_set(const jctx *c, const cJSON *obj, const char *path, int k, fl_int **sel,
                      fl_int *n) {
  *sel = NULL;
  *n = 0;
  const fl_fem_body *b = c->w->fem[k];
  const cJSON *vl = cJSON_GetObjectItemCaseSensitive(obj, "vertices");
  const cJSON *bx = cJSON_GetObjectItemCaseSensitive(obj, "box");
  if ((vl != NULL) == (bx != NULL))
    return fl__json_jerr(
        c, path, "expected exactly one of \"vertices\" (indices) or \"box\" ({\"lo\", \"hi\"})");
  char p[256];
  if (bx) {
    fl__json_sub(p, sizeof p, path, "box");
    static const char *const keys[] = {"lo", "hi", NULL};
    FL_TRY(fl__json_check_keys(c, bx, p, keys));
    double lo[3], hi[3];
    FL_TRY(fl__json_get_vec(c, bx, "lo", p, 3, 1, NULL, 0, lo));
    FL_TRY(fl__json_get_vec(c, bx, "hi", p, 3, 1, NULL, 0, hi));
    int rc = fl_mesh_select_box(b->mesh, lo, hi, 1e-9, sel, n);
    if (rc < 0) return fl__json_jfail(c, p, rc);
    if (*n == 0)
      return fl__json_jerr(c, p, "the box selects no vertex of the mesh (rest positions)");
    return FL_OK;
  }
  fl__json_sub(p, sizeof p, path, "vertices");
  int m = cJSON_IsArray(vl) ? cJSON_GetArraySize(vl) : 0;
  if (m < 1) return fl__json_jerr(c, p, "expected a non-empty array of vertex indices");
  *sel = fl_malloc((size_t)m * sizeof(fl_int));
  if (!*sel) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", c->file);
  int i = 0;
  for (const cJSON *e = vl->child; e; e = e->next, i++) {
    if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 ||
        e->valuedouble >= b->mesh->nvert) {
      fl_free(*sel);
      *sel = NULL;
      char q[256];
      fl__json_idx(q, sizeof q, p, i);
      return fl__json_jerr(c, q, "expected a vertex index in [0, %d)", (int)b->mesh->nvert);
    }
    (*sel)[i] = (fl_int)e->valuedouble;
  }
  *n = m;
  return FL_OK;
}


static int parse_hold(const jctx *c, const cJSON *h, const char *path, int k) {
  static const char *const keys[] = {"vertices", "box", "axes", "velocity", NULL};
  FL_TRY(fl__json_check_keys(c, h, path, keys));
  const char *ax = "xyz";
  FL_TRY(fl__json_get_str(c, h, "axes", path, "xyz", &ax));
  int axes = 0;
  for (const char *t = ax; *t; t++) {
    const char *q = strchr("xyz", *t);
    if (!q) {
      char p[256];
      fl__json_sub(p, sizeof p, path, "axes");
      return fl__json_jerr(c, p, "'%s': expected a non-empty subset of \"xyz\"", ax);
    }
    axes |= 1 << (q - "xyz");
  }
  if (!axes) {
    char p[256];
    fl__json_sub(p, sizeof p, path, "axes");
    return fl__json_jerr(c, p, "expected a non-empty subset of \"xyz\"");
  }
  double vel[3];
  FL_TRY(fl__json_get_vec(c, h, "velocity", path, 3, 0, NULL, 0, vel));
  fl_int *idx = NULL, n = 0;
  FL_TRY(vertex_set(c, h, path, k, &idx, &n));
  int rc = fl_fem_hold_vertices(c->w, k, n, idx, axes, vel);
  fl_free(idx);
  return rc < 0 ? fl__json_jfail(c, path, rc) : FL_OK;
}


static int parse_load(const jctx *c, const cJSON *h, const char *path, int k) {
  static const char *const keys[] = {"vertices", "box", "force", NULL};
  FL_TRY(fl__json_check_keys(c, h, path, keys));
  double f[3];
  FL_TRY(fl__json_get_vec(c, h, "force", path, 3, 1, NULL, 0, f));
  fl_int *idx = NULL, n = 0;
  FL_TRY(vertex_set(c, h, path, k, &idx, &n));
  const fl_fem_body *b = c->w->fem[k];
  int rc = fl_fem_add_nodal_force(c->w, k, n, idx, f, b->f_t0, b->f_t1);
  fl_free(idx);
  return rc < 0 ? fl__json_jfail(c, path, rc) : FL_OK;
}


/* The mesh of a deformable body from a generator, a file or inline arrays. */
static int parse_mesh(const jctx *c, const cJSON *m, const char *path, fl_fem_mesh_src *src,
                      fl_mesh **out) {
  static const char *const keys[] = {"type", "size", "cells", "radius", "length", "rings",
                                     "layers", "resolution", "path", "vertices", "tets", NULL};
  FL_TRY(fl__json_check_keys(c, m, path, keys));
  int type;
  FL_TRY(fl__json_get_enum(c, m, "type", path, "box|cylinder|sphere|file|inline", -1, &type));
  memset(src, 0, sizeof *src);
  int rc = FL_OK;
  double x;
  switch (type) {
  case 0: {
    double ncell[3];
    static const double one[3] = {1, 1, 1};
    FL_TRY(fl__json_get_vec(c, m, "size", path, 3, 1, NULL, 1, src->size));
    FL_TRY(fl__json_get_vec(c, m, "cells", path, 3, 0, one, 1, ncell));
    for (int k = 0; k < 3; k++) {
      if (ncell[k] != floor(ncell[k]) || ncell[k] > 1000) {
        char p[256];
        fl__json_sub(p, sizeof p, path, "cells");
        return fl__json_jerr(c, p, "expected 3 integers in [1, 1000]");
      }
      src->n[k] = (int)ncell[k];
    }
    snprintf(src->type, sizeof src->type, "box");
    rc = fl_mesh_box(src->size, src->n[0], src->n[1], src->n[2], out);
    break;
  }
  case 1:
    FL_TRY(fl__json_get_num(c, m, "radius", path, 1, 0, 1e-300, 1e300, 0, &src->size[0]));
    FL_TRY(fl__json_get_num(c, m, "length", path, 1, 0, 1e-300, 1e300, 0, &src->size[1]));
    FL_TRY(fl__json_get_num(c, m, "rings", path, 0, 4, 1, 1000, 0, &x));
    if (x != floor(x)) return fl__json_jerr(c, path, "rings must be an integer");
    src->n[0] = (int)x;
    FL_TRY(fl__json_get_num(c, m, "layers", path, 0, 2, 1, 1000, 0, &x));
    if (x != floor(x)) return fl__json_jerr(c, path, "layers must be an integer");
    src->n[1] = (int)x;
    snprintf(src->type, sizeof src->type, "cylinder");
    rc = fl_mesh_cylinder(src->size[0], src->size[1], src->n[0], src->n[1], out);
    break;
  case 2:
    FL_TRY(fl__json_get_num(c, m, "radius", path, 1, 0, 1e-300, 1e300, 0, &src->size[0]));
    FL_TRY(fl__json_get_num(c, m, "resolution", path, 0, 3, 1, 200, 0, &x));
    if (x != floor(x)) return fl__json_jerr(c, path, "resolution must be an integer");
    src->n[0] = (int)x;
    snprintf(src->type, sizeof src->type, "sphere");
    rc = fl_mesh_sphere(src->size[0], src->n[0], out);
    break;
  case 3: {
    const char *fp = NULL;
    FL_TRY(fl__json_get_str(c, m, "path", path, NULL, &fp));
    // relative to the scene file's folder
    char full[1024];
    const char *slash = strrchr(c->file, '/');
    if (fp[0] != '/' && slash)
      snprintf(full, sizeof full, "%.*s/%s", (int)(slash - c->file), c->file, fp);
    else
      snprintf(full, sizeof full, "%s", fp);
    char *real = realpath(full, NULL);
    const char *use = real ? real : full;
    if (strlen(use) >= sizeof src->path) {
      free(real);
      return fl__json_jerr(c, path, "mesh path longer than %d characters",
                           (int)sizeof src->path - 1);
    }
    memcpy(src->path, use, strlen(use) + 1);
    free(real);
    snprintf(src->type, sizeof src->type, "file");
    rc = fl_mesh_read(src->path, out);
    break;
  }
  default: {
    const cJSON *vl = cJSON_GetObjectItemCaseSensitive(m, "vertices");
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(m, "tets");
    char pv[256], pt[256];
    fl__json_sub(pv, sizeof pv, path, "vertices");
    fl__json_sub(pt, sizeof pt, path, "tets");
    int nv = cJSON_IsArray(vl) ? cJSON_GetArraySize(vl) : 0;
    int nt = cJSON_IsArray(tl) ? cJSON_GetArraySize(tl) : 0;
    if (nv < 12 || nv % 3)
      return fl__json_jerr(c, pv, "expected a flat array of 3 n >= 12 coordinates (m)");
    if (nt < 4 || nt % 4)
      return fl__json_jerr(c, pt, "expected a flat array of 4 n >= 4 vertex indices");
    double *X = fl_malloc((size_t)nv * sizeof(double));
    fl_int *T = fl_malloc((size_t)nt * sizeof(fl_int));
    if (!X || !T) {
      fl_free(X);
      fl_free(T);
      return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", c->file);
    }
    int i = 0;
    for (const cJSON *e = vl->child; e && rc >= 0; e = e->next, i++) {
      if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) {
        char q[256];
        fl__json_idx(q, sizeof q, pv, i);
        rc = fl__json_jerr(c, q, "expected a finite number");
      } else {
        X[i] = e->valuedouble;
      }
    }
    i = 0;
    for (const cJSON *e = tl->child; e && rc >= 0; e = e->next, i++) {
      if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble)) {
        char q[256];
        fl__json_idx(q, sizeof q, pt, i);
        rc = fl__json_jerr(c, q, "expected an integer vertex index");
      } else {
        T[i] = (fl_int)fmax(-1, fmin(e->valuedouble, 2e9));
      }
    }
    if (rc >= 0) rc = fl_mesh_create(nv / 3, X, nt / 4, T, path, out);
    fl_free(X);
    fl_free(T);
    if (rc < 0) return rc == FL_ERR_FORMAT ? rc : fl__json_jfail(c, path, rc);
    return FL_OK;
  }
  }
  return rc < 0 ? fl__json_jfail(c, path, rc) : FL_OK;
}


int fl__json_parse_deformable(const jctx *c, const cJSON *b, const char *path) {
  static const char *const keys[] = {"name", "kind", "material", "mesh", "model", "density",
                                     "damping", "plane_strain", "mass_matrix", "volume", "position",
                                     "velocity", "hold", "loads", "load_ramp", "positions",
                                     "velocities", NULL};
  FL_TRY(fl__json_check_keys(c, b, path, keys));
  fl_fem_desc d;
  memset(&d, 0, sizeof d);
  const char *name = NULL;
  if (cJSON_GetObjectItemCaseSensitive(b, "name")) {
    FL_TRY(fl__json_get_str(c, b, "name", path, NULL, &name));
    FL_TRY(fl__json_name(c, path, "name", name, "body name"));
    int rb, rf;
    fl__names_find(c, name, &rb, &rf);
    if (rb >= 0 || rf >= 0)
      return fl__json_jerr(c, path, "a second body named '%s' (names must be unique)", name);
  }
  d.name = name;
  FL_TRY(fl__json_material_ref(c, b, "material", path, &d.material));
  char p[256];
  // constitutive model
  const cJSON *mo = cJSON_GetObjectItemCaseSensitive(b, "model");
  fl__json_sub(p, sizeof p, path, "model");
  if (!mo)
    return fl__json_jerr(c, p, "missing; expected {\"type\": %s, ...}", FL_FEM_MODEL_CHOICES);
  static const char *const mkeys[] = {"type", "E", "nu", "c1", "c2", "kappa", NULL};
  FL_TRY(fl__json_check_keys(c, mo, p, mkeys));
  int model;
  FL_TRY(fl__json_get_enum(c, mo, "type", p, FL_FEM_MODEL_CHOICES, -1, &model));
  d.model.model = model;
  int mr = model == FL_FEM_MOONEY_RIVLIN;
  FL_TRY(fl__json_get_num(c, mo, "E", p, !mr, 0, mr ? 0 : 1e-300, 1e300, 0, &d.model.E));
  FL_TRY(fl__json_get_num(c, mo, "nu", p, !mr, 0, -1, 1, 0, &d.model.nu));
  FL_TRY(fl__json_get_num(c, mo, "c1", p, mr, 0, 0, 1e300, 0, &d.model.c1));
  FL_TRY(fl__json_get_num(c, mo, "c2", p, mr, 0, 0, 1e300, 0, &d.model.c2));
  FL_TRY(fl__json_get_num(c, mo, "kappa", p, mr, 0, 0, 1e300, 0, &d.model.kappa));
  if (fl_fem_material_check(&d.model, p) < 0) return fl__json_jerr(c, p, "%s", fl_errmsg());
  FL_TRY(fl__json_get_num(c, b, "density", path, 1, 0, 1e-300, 1e300, 0, &d.density));
  const cJSON *dm = cJSON_GetObjectItemCaseSensitive(b, "damping");
  d.beta = 0.01;
  if (dm) {
    fl__json_sub(p, sizeof p, path, "damping");
    static const char *const dkeys[] = {"alpha", "beta", NULL};
    FL_TRY(fl__json_check_keys(c, dm, p, dkeys));
    FL_TRY(fl__json_get_num(c, dm, "alpha", p, 0, 0, 0, 1e9, 0, &d.alpha));
    FL_TRY(fl__json_get_num(c, dm, "beta", p, 0, 0.01, 0, 1e9, 0, &d.beta));
  }
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(b, "plane_strain");
  if (ps && !cJSON_IsBool(ps)) {
    fl__json_sub(p, sizeof p, path, "plane_strain");
    return fl__json_jerr(c, p, "expected true or false");
  }
  d.plane_strain = cJSON_IsTrue(ps);
  int mm;
  FL_TRY(fl__json_get_enum(c, b, "mass_matrix", path, "consistent|lumped", 0, &mm));
  d.lumped = mm;
  int vol;
  FL_TRY(fl__json_get_enum(c, b, "volume", path, "element|nodal", 0, &vol));
  if (vol && !mr) {
    fl__json_sub(p, sizeof p, path, "volume");
    return fl__json_jerr(c, p, "\"nodal\" needs the mooney_rivlin model; expected \"element\"");
  }
  d.nodal_volume = vol;
  FL_TRY(fl__json_get_vec(c, b, "position", path, 3, 0, NULL, 0, d.pos));
  FL_TRY(fl__json_get_vec(c, b, "velocity", path, 3, 0, NULL, 0, d.vel));
  // mesh
  const cJSON *me = cJSON_GetObjectItemCaseSensitive(b, "mesh");
  fl__json_sub(p, sizeof p, path, "mesh");
  if (!me)
    return fl__json_jerr(c, p,
                         "missing; expected {\"type\": box|cylinder|sphere|file|inline, ...}");
  fl_fem_mesh_src src;
  fl_mesh *mesh = NULL;
  FL_TRY(parse_mesh(c, me, p, &src, &mesh));
  int k = fl_world_add_fem(c->w, &d, &mesh);
  if (k < 0) return fl__json_jfail(c, path, k);
  FL_TRY(fl__names_add_last(c, 1));
  fl_fem_body *fb = c->w->fem[k];
  fb->src = src;
  double ramp[2] = {0, 0};
  FL_TRY(fl__json_get_vec(c, b, "load_ramp", path, 2, 0, NULL, 0, ramp));
  fb->f_t0 = ramp[0];
  fb->f_t1 = ramp[1];
  const cJSON *arr;
  static const char *const lists[] = {"hold", "loads"};
  for (int l = 0; l < 2; l++) {
    arr = cJSON_GetObjectItemCaseSensitive(b, lists[l]);
    if (!arr) continue;
    fl__json_sub(p, sizeof p, path, lists[l]);
    if (!cJSON_IsArray(arr)) return fl__json_jerr(c, p, "expected an array");
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
      char q[256];
      fl__json_idx(q, sizeof q, p, i);
      FL_TRY(l == 0 ? parse_hold(c, e, q, k) : parse_load(c, e, q, k));
    }
  }
  // an exported state: current positions and velocities of every vertex
  static const char *const st[] = {"positions", "velocities"};
  for (int l = 0; l < 2; l++) {
    arr = cJSON_GetObjectItemCaseSensitive(b, st[l]);
    if (!arr) continue;
    FL_TRY(fl__json_get_vec(c, b, st[l], path, (int)fb->ndof, 1, NULL, 0, l == 0 ? fb->x : fb->v));
  }
  for (fl_int q = 0; q < fb->ndof; q++) {
    if (fb->held[q]) fb->v[q] = fb->v_held[q];
  }
  return FL_OK;
}


/* Vertices grouped by a key of nk doubles (hold: axes and velocity; loads: force). */
static cJSON *vertex_groups(fl_int nvert, int nk, const double *key, const unsigned char *use,
                            int *ngroup) {
  cJSON *arr = cJSON_CreateArray();
  *ngroup = 0;
  unsigned char *done = fl_calloc((size_t)(nvert > 0 ? nvert : 1), 1);
  if (!done) return arr;
  for (fl_int i = 0; i < nvert; i++) {
    if (!use[i] || done[i]) continue;
    const double *ki = key + (size_t)nk * (size_t)i;
    cJSON *g = cJSON_CreateObject(), *vl = cJSON_CreateArray();
    for (fl_int j = i; j < nvert; j++) {
      if (!use[j] || done[j] || memcmp(ki, key + (size_t)nk * (size_t)j, (size_t)nk * sizeof(double)))
        continue;
      done[j] = 1;
      cJSON_AddItemToArray(vl, cJSON_CreateNumber((double)j));
    }
    cJSON_AddItemToObject(g, "vertices", vl);
    cJSON_AddItemToArray(arr, g);
    (*ngroup)++;
  }
  fl_free(done);
  return arr;
}


cJSON *fl__json_deformable(const fl_world *w, fl_int k) {
  const fl_fem_body *b = w->fem[k];
  const fl_mesh *m = b->mesh;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", b->name);
  cJSON_AddStringToObject(o, "kind", "deformable");
  cJSON_AddStringToObject(o, "material", w->mat[b->material].name);
  cJSON *me = cJSON_AddObjectToObject(o, "mesh");
  const fl_fem_mesh_src *s = &b->src;
  int inl = 0;
  if (!strcmp(s->type, "box")) {
    cJSON_AddStringToObject(me, "type", "box");
    cJSON_AddItemToObject(me, "size", fl__json_vec(s->size, 3));
    double n[3] = {s->n[0], s->n[1], s->n[2]};
    cJSON_AddItemToObject(me, "cells", fl__json_vec(n, 3));
  } else if (!strcmp(s->type, "cylinder")) {
    cJSON_AddStringToObject(me, "type", "cylinder");
    cJSON_AddItemToObject(me, "radius", fl__json_num(s->size[0]));
    cJSON_AddItemToObject(me, "length", fl__json_num(s->size[1]));
    cJSON_AddNumberToObject(me, "rings", s->n[0]);
    cJSON_AddNumberToObject(me, "layers", s->n[1]);
  } else if (!strcmp(s->type, "sphere")) {
    cJSON_AddStringToObject(me, "type", "sphere");
    cJSON_AddItemToObject(me, "radius", fl__json_num(s->size[0]));
    cJSON_AddNumberToObject(me, "resolution", s->n[0]);
  } else if (!strcmp(s->type, "file")) {
    cJSON_AddStringToObject(me, "type", "file");
    cJSON_AddStringToObject(me, "path", s->path);
  } else {
    // inline: rest positions already include the translation
    inl = 1;
    cJSON_AddStringToObject(me, "type", "inline");
    cJSON_AddItemToObject(me, "vertices", fl__json_vec(m->X, 3 * (int)m->nvert));
    cJSON *t = cJSON_AddArrayToObject(me, "tets");
    for (fl_int q = 0; q < 4 * m->ntet; q++) cJSON_AddItemToArray(t, cJSON_CreateNumber((double)m->tet[q]));
  }
  cJSON *mo = cJSON_AddObjectToObject(o, "model");
  cJSON_AddStringToObject(mo, "type", fl_fem_model_name(b->model.model));
  if (b->model.model == FL_FEM_MOONEY_RIVLIN) {
    cJSON_AddItemToObject(mo, "c1", fl__json_num(b->model.c1));
    cJSON_AddItemToObject(mo, "c2", fl__json_num(b->model.c2));
    cJSON_AddItemToObject(mo, "kappa", fl__json_num(b->model.kappa));
  } else {
    cJSON_AddItemToObject(mo, "E", fl__json_num(b->model.E));
    cJSON_AddItemToObject(mo, "nu", fl__json_num(b->model.nu));
  }
  cJSON_AddItemToObject(o, "density", fl__json_num(b->density));
  cJSON *dm = cJSON_AddObjectToObject(o, "damping");
  cJSON_AddItemToObject(dm, "alpha", fl__json_num(b->alpha));
  cJSON_AddItemToObject(dm, "beta", fl__json_num(b->beta));
  cJSON_AddBoolToObject(o, "plane_strain", b->plane_strain);
  cJSON_AddStringToObject(o, "mass_matrix", b->lumped ? "lumped" : "consistent");
  cJSON_AddStringToObject(o, "volume", b->nodal_volume ? "nodal" : "element");
  double zero[3] = {0, 0, 0};
  cJSON_AddItemToObject(o, "position", fl__json_vec(inl ? zero : b->pos, 3));
  // holds grouped by (axes, velocity); plane strain's own z holds are implied
  fl_int nv = m->nvert;
  double *key = fl_calloc((size_t)(4 * (nv > 0 ? nv : 1)), sizeof(double));
  unsigned char *use = fl_calloc((size_t)(nv > 0 ? nv : 1), 1);
  if (key && use) {
    for (fl_int i = 0; i < nv; i++) {
      int axes = 0;
      for (int c = 0; c < 3; c++) {
        if (b->held[3 * i + c] && !(b->plane_strain && c == 2)) {
          axes |= 1 << c;
          key[4 * i + 1 + c] = b->v_held[3 * i + c];
        }
      }
      key[4 * i] = axes;
      use[i] = axes != 0;
    }
    int ng;
    cJSON *hs = vertex_groups(nv, 4, key, use, &ng);
    for (cJSON *g = hs->child; g; g = g->next) {
      fl_int v0 = (fl_int)cJSON_GetArrayItem(cJSON_GetObjectItem(g, "vertices"), 0)->valuedouble;
      int axes = (int)key[4 * v0];
      char ax[4] = "";
      for (int c = 0; c < 3; c++) {
        if (axes & (1 << c)) strncat(ax, &"xyz"[c], 1);
      }
      double vel[3];
      for (int c = 0; c < 3; c++) vel[c] = (axes & (1 << c)) ? b->v_held[3 * v0 + c] : 0;
      cJSON_AddStringToObject(g, "axes", ax);
      cJSON_AddItemToObject(g, "velocity", fl__json_vec(vel, 3));
    }
    if (ng) cJSON_AddItemToObject(o, "hold", hs);
    else cJSON_Delete(hs);
    // loads grouped by force
    for (fl_int i = 0; i < nv; i++) {
      memcpy(key + 3 * i, b->f_node + 3 * i, 3 * sizeof(double));
      use[i] = b->f_node[3 * i] != 0 || b->f_node[3 * i + 1] != 0 || b->f_node[3 * i + 2] != 0;
    }
    cJSON *ls = vertex_groups(nv, 3, key, use, &ng);
    for (cJSON *g = ls->child; g; g = g->next) {
      fl_int v0 = (fl_int)cJSON_GetArrayItem(cJSON_GetObjectItem(g, "vertices"), 0)->valuedouble;
      cJSON_AddItemToObject(g, "force", fl__json_vec(b->f_node + 3 * v0, 3));
    }
    if (ng) {
      cJSON_AddItemToObject(o, "loads", ls);
      double r[2] = {b->f_t0, b->f_t1};
      cJSON_AddItemToObject(o, "load_ramp", fl__json_vec(r, 2));
    } else {
      cJSON_Delete(ls);
    }
  }
  fl_free(key);
  fl_free(use);
  // the current state when it is not the rest state with one velocity
  if (memcmp(b->x, m->X, (size_t)b->ndof * sizeof(double)))
    cJSON_AddItemToObject(o, "positions", fl__json_vec(b->x, (int)b->ndof));
  int uniform = 1;
  for (fl_int q = 3; q < b->ndof && uniform; q++) uniform = b->v[q] == b->v[q % 3];
  if (uniform && nv > 0) cJSON_AddItemToObject(o, "velocity", fl__json_vec(b->v, 3));
  else cJSON_AddItemToObject(o, "velocities", fl__json_vec(b->v, (int)b->ndof));
  return o;
}

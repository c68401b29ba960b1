// SPDX-License-Identifier: Apache-2.0
/* peer_mujoco.c: MuJoCo as a peer simulator (fl_peer.h): the MJCF writer (always built) and
 * the stepping through MuJoCo's C API (only with FL_HAVE_MUJOCO).
 *
 * Outline: check the world (fl_mjcf_check); write MJCF (option, free bodies with explicit
 * mass and inertia, world geoms for fixed bodies, per-geom friction or explicit pairs); load it;
 * set qpos/qvel from the world's state exactly; per step set the applied forces, mj_step, copy
 * poses and velocities back, keep the solver statistics and MuJoCo's stage timers.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../sim/fl_world.h"
#include "fl_peer_impl.h"

#ifdef FL_HAVE_MUJOCO
#include <setjmp.h>

#include <mujoco/mujoco.h>
#endif

//---- names and option keys (built or not) ----

static const char *const peer_names[] = {"mujoco-pgs", "mujoco-cg", "mujoco-newton", NULL};


static int peer_index(const char *name) {
  for (int k = 0; name && peer_names[k]; k++)
    if (!strcmp(name, peer_names[k])) return k;
  return -1;
}


static const char *mj_unavailable(const char *name) {
#ifdef FL_HAVE_MUJOCO
  (void)name;
  return NULL;
#else
  return peer_index(name) >= 0 ? "this build has no MuJoCo (install libmujoco-dev and "
                                 "libqhull-dev, then configure again with FL_WITH_MUJOCO=ON)"
                               : NULL;
#endif
}


void fl_mjcf_opts_default(fl_mjcf_opts *o) {
  memset(o, 0, sizeof *o);
  o->solver = "Newton";
  o->elliptic = 0;
  o->solref[0] = 0.02;
  o->solref[1] = 1;
  double imp[5] = {0.9, 0.95, 0.001, 0.5, 2};
  memcpy(o->solimp, imp, sizeof imp);
  o->iterations = 100;
  o->tolerance = 1e-8;
}


//---- what MJCF can express ----

static void pair_law(const fl_world *w, int a, int b, double *mu, double *k) {
  fl__peer_pair_law(w, a, b, mu, k, NULL);
}


/* 1 when bodies of kinds ka and kb can touch in the stepper (one of them dynamic). */
static int can_meet(const fl_body *a, const fl_body *b) {
  return a->kind == FL_BODY_DYNAMIC || b->kind == FL_BODY_DYNAMIC;
}


static unsigned char *materials_meeting(const fl_world *w) { return fl__peer_materials_meeting(w); }


int fl_mjcf_check(const fl_world *w) {
  if (!w) return fl_seterr(FL_ERR_INVAL, "fl_mjcf_check: NULL world");
  if (w->nfem > 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "MJCF: world '%s' has %d deformable (FEM) bodies; MuJoCo "
                     "2.2 has no volumetric FEM bodies", w->name, (int)w->nfem);
  if (w->njoint > 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "MJCF: world '%s' has %d joints; joints are not mapped "
                     "to MuJoCo (bilateral rows between free bodies have no MJCF element that "
                     "keeps FrictionLab's anchors and compliance)", w->name, (int)w->njoint);
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    if (b->hydro_modulus > 0)
      return fl_seterr(FL_ERR_UNSUPPORTED, "MJCF: body '%s' is hydroelastic (E_h = %g Pa); MuJoCo "
                       "has no pressure-field contact patches", b->name, b->hydro_modulus);
    if (b->kind == FL_BODY_PRESCRIBED &&
        (fl_v3_norm(b->vel) > 0 || fl_v3_norm(b->omega) > 0))
      return fl_seterr(FL_ERR_UNSUPPORTED, "MJCF: body '%s' moves with a prescribed velocity; "
                       "MuJoCo's mocap bodies move without a velocity in the contact "
                       "constraints, which changes the contact law", b->name);
    if (b->kind == FL_BODY_DYNAMIC && b->shape.type == FL_SHAPE_PLANE)
      return fl_seterr(FL_ERR_UNSUPPORTED, "MJCF: dynamic body '%s' is a plane; MuJoCo planes "
                       "must be static", b->name);
  }
  // contact laws: only rigid contact has an equivalent (MuJoCo's solref spring is per unit of
  // effective mass, FrictionLab's stiffness is N/m)
  unsigned char *used = materials_meeting(w);
  if (!used) return fl_seterr(FL_ERR_NOMEM, "MJCF: out of memory");
  fl_int nm = w->nmat;
  int rc = FL_OK;
  for (fl_int a = 0; a < nm && rc == FL_OK; a++)
    for (fl_int b = a; b < nm && rc == FL_OK; b++) {
      if (!used[a * nm + b]) continue;
      double mu, k;
      pair_law(w, (int)a, (int)b, &mu, &k);
      if (isfinite(k))
        rc = fl_seterr(FL_ERR_UNSUPPORTED, "MJCF: materials '%s' and '%s' meet with a compliant "
                       "law (stiffness %g N/m); MuJoCo's soft constraints (solref, solimp) are "
                       "per unit of effective mass and have no N/m equivalent", w->mat[a].name,
                       w->mat[b].name, k);
    }
  fl_free(used);
  return rc;
}


//---- the writer ----

static void put_vec(FILE *f, const char *attr, const double *x, int n) {
  fprintf(f, " %s=\"", attr);
  for (int k = 0; k < n; k++) fprintf(f, "%s%.17g", k ? " " : "", x[k]);
  fputc('"', f);
}


/* Geom attributes of a shape (type, size, mesh); hull k names the mesh. */
static void put_shape(FILE *f, const fl_shape *s, fl_int body) {
  switch (s->type) {
  case FL_SHAPE_PLANE:
    fprintf(f, " type=\"plane\" size=\"0 0 1\"");
    break;
  case FL_SHAPE_SPHERE:
    fprintf(f, " type=\"sphere\"");
    put_vec(f, "size", s->size, 1);
    break;
  case FL_SHAPE_BOX:
    fprintf(f, " type=\"box\"");
    put_vec(f, "size", s->size, 3);
    break;
  case FL_SHAPE_CAPSULE:
    fprintf(f, " type=\"capsule\"");
    put_vec(f, "size", s->size, 2);
    break;
  case FL_SHAPE_CYLINDER:
    fprintf(f, " type=\"cylinder\"");
    put_vec(f, "size", s->size, 2);
    break;
  case FL_SHAPE_CONVEX:
    fprintf(f, " type=\"mesh\" mesh=\"hull%d\"", (int)body);
    break;
  }
}


static void put_contact_params(FILE *f, const fl_mjcf_opts *o) {
  put_vec(f, "solref", o->solref, 2);
  put_vec(f, "solimp", o->solimp, 5);
}


int fl_mjcf_write(const fl_world *w, const fl_mjcf_opts *o, FILE *f) {
  if (!w || !o || !f) return fl_seterr(FL_ERR_INVAL, "fl_mjcf_write: NULL argument");
  FL_TRY(fl_mjcf_check(w));
  fl_int nm = w->nmat;
  unsigned char *used = materials_meeting(w);
  if (!used) return fl_seterr(FL_ERR_NOMEM, "MJCF: out of memory");
  // per-geom friction is exact when every meeting pair combines as max(mu_a, mu_b)
  unsigned char *explicit_pair = fl_calloc((size_t)(nm * nm) + 1, 1);
  if (!explicit_pair) {
    fl_free(used);
    return fl_seterr(FL_ERR_NOMEM, "MJCF: out of memory");
  }
  int nexplicit = 0;
  for (fl_int a = 0; a < nm; a++)
    for (fl_int b = 0; b < nm; b++) {
      if (!used[a * nm + b]) continue;
      double mu, k, mx = fmax(w->mat[a].mu, w->mat[b].mu);
      pair_law(w, (int)a, (int)b, &mu, &k);
      if (fabs(mu - mx) > 1e-12 * fmax(1, mx)) {
        explicit_pair[a * nm + b] = 1;
        nexplicit++;
      }
    }
  fl_int ndyn = 0;
  for (fl_int i = 0; i < w->nbody; i++) ndyn += w->body[i].kind == FL_BODY_DYNAMIC;

  fprintf(f, "<mujoco model=\"%s\">\n", w->name[0] ? w->name : "frictionlab");
  fprintf(f, "  <!-- written by FrictionLab from world '%s' at t = %.17g s -->\n", w->name, w->t);
  fprintf(f, "  <compiler angle=\"radian\" inertiafromgeom=\"false\" boundmass=\"0\" "
             "boundinertia=\"0\"/>\n");
  fprintf(f, "  <option");
  put_vec(f, "timestep", &w->dt, 1);
  put_vec(f, "gravity", w->gravity, 3);
  fprintf(f, " integrator=\"Euler\" cone=\"%s\" solver=\"%s\" iterations=\"%d\"",
          o->elliptic ? "elliptic" : "pyramidal", o->solver, o->iterations);
  put_vec(f, "tolerance", &o->tolerance, 1);
  fprintf(f, " noslip_iterations=\"0\"/>\n");
  // buffers, fixed at compile time in MuJoCo 2.2: room for 10 contacts per body and their rows
  // (4 was too few for the heap of box_pile; a fuller step stops with MuJoCo's warning),
  // capped so that mjData, whose size is an int
  // and which holds J (rows x nv) and A (rows x rows) densely, stays under 1.5 GB
  long nv = 6 * (long)ndyn, rows = o->elliptic ? 3 : 4;
  long ncon = 64 + 10 * (long)ndyn, nefc = rows * ncon;
  double cap = 1.5e9, per = 24.0 * (double)nv;
  if ((double)nefc * (per + 12.0 * (double)nefc) > cap) {
    nefc = (long)((-per + sqrt(per * per + 48.0 * cap)) / 24.0);
    ncon = nefc / rows;
  }
  if (!o->modern) fprintf(f, "  <size nconmax=\"%ld\" njmax=\"%ld\"/>\n", ncon, nefc);
  fprintf(f, "  <default>\n    <geom condim=\"3\" margin=\"0\" gap=\"0\"");
  put_contact_params(f, o);
  fprintf(f, "/>\n  </default>\n");
  // convex hulls as meshes (MuJoCo takes their hull again; the vertices are the hull's)
  int nhull = 0;
  for (fl_int i = 0; i < w->nbody; i++) nhull += w->body[i].shape.type == FL_SHAPE_CONVEX;
  if (nhull) {
    fprintf(f, "  <asset>\n");
    for (fl_int i = 0; i < w->nbody; i++) {
      const fl_shape *s = &w->body[i].shape;
      if (s->type != FL_SHAPE_CONVEX) continue;
      fprintf(f, "    <mesh name=\"hull%d\"", (int)i);
      put_vec(f, "vertex", s->vert, 3 * (int)s->nvert);
      fprintf(f, "/>\n");
    }
    fprintf(f, "  </asset>\n");
  }
  // bodies: fixed ones are world geoms, dynamic ones free bodies in body order
  fprintf(f, "  <worldbody>\n");
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    double mu = w->mat[b->material].mu;
    if (b->kind != FL_BODY_DYNAMIC) {
      fprintf(f, "    <geom name=\"g%d\"", (int)i);
      put_shape(f, &b->shape, i);
      put_vec(f, "pos", b->pos, 3);
      put_vec(f, "quat", b->quat, 4);
      fprintf(f, " friction=\"%.17g 0 0\"/>\n", mu);
      continue;
    }
    fprintf(f, "    <body name=\"b%d\"", (int)i);
    put_vec(f, "pos", b->pos, 3);
    put_vec(f, "quat", b->quat, 4);
    fprintf(f, ">\n      <freejoint name=\"j%d\"/>\n      <inertial pos=\"0 0 0\"", (int)i);
    put_vec(f, "mass", &b->mass, 1);
    const double *I = b->inertia;
    double full[6] = {I[0], I[4], I[8], I[1], I[2], I[5]};
    put_vec(f, "fullinertia", full, 6);
    fprintf(f, "/>\n      <geom name=\"g%d\"", (int)i);
    put_shape(f, &b->shape, i);
    fprintf(f, " friction=\"%.17g 0 0\"/>\n    </body>\n", mu);
  }
  fprintf(f, "  </worldbody>\n");
  // explicit pairs where MuJoCo's max rule differs from the world's rule; MuJoCo then skips
  // the same geom pair in its dynamic (contype/conaffinity) collisions
  if (nexplicit) {
    fprintf(f, "  <contact>\n");
    for (fl_int i = 0; i < w->nbody; i++)
      for (fl_int j = i + 1; j < w->nbody; j++) {
        const fl_body *a = &w->body[i], *b = &w->body[j];
        if (!can_meet(a, b) || !explicit_pair[a->material * nm + b->material]) continue;
        double mu, k;
        pair_law(w, a->material, b->material, &mu, &k);
        fprintf(f, "    <pair geom1=\"g%d\" geom2=\"g%d\" condim=\"3\" friction=\"%.17g %.17g 0 0 0\"",
                (int)i, (int)j, mu, mu);
        put_contact_params(f, o);
        fprintf(f, "/>\n");
      }
    fprintf(f, "  </contact>\n");
  }
  fprintf(f, "</mujoco>\n");
  fl_free(used);
  fl_free(explicit_pair);
  if (ferror(f)) return fl_seterr(FL_ERR_IO, "MJCF: write failed");
  return FL_OK;
}


//---- options ----


static const char *const peer_keys[] = {"cone", "solref", "solimp", "iterations", "tolerance",
                                        NULL};

/* Up to n numbers separated by commas or spaces into x; returns how many, -1 on junk. */
static int parse_numbers(const char *s, double *x, int n) {
  int k = 0;
  while (*s) {
    while (*s == ' ' || *s == ',') s++;
    if (!*s) break;
    char *end;
    double v = strtod(s, &end);
    if (end == s || k == n || !isfinite(v)) return -1;
    x[k++] = v;
    s = end;
  }
  return k;
}


/* Applies one "key=value" (key without prefix) to o. */
static int apply_option(fl_mjcf_opts *o, const char *key, const char *val, const char *set) {
  if (!strcmp(key, "cone")) {
    if (!strcmp(val, "pyramidal")) o->elliptic = 0;
    else if (!strcmp(val, "elliptic")) o->elliptic = 1;
    else return fl_seterr(FL_ERR_OPTION_RANGE, "--set %s: cone: expected pyramidal|elliptic", set);
    return FL_OK;
  }
  if (!strcmp(key, "solref")) {
    double x[2];
    if (parse_numbers(val, x, 2) != 2 || !(x[0] > 0) || !(x[1] > 0))
      return fl_seterr(FL_ERR_OPTION_RANGE, "--set %s: solref: expected two positive numbers "
                       "TIMECONST,DAMPRATIO (s, 1)", set);
    memcpy(o->solref, x, sizeof x);
    return FL_OK;
  }
  if (!strcmp(key, "solimp")) {
    double x[5] = {0, 0, 0, 0.5, 2};
    int n = parse_numbers(val, x, 5);
    if ((n != 3 && n != 5) || !(x[0] > 0 && x[0] < 1) || !(x[1] > 0 && x[1] < 1) ||
        !(x[2] >= 0) || !(x[3] > 0 && x[3] < 1) || !(x[4] >= 1))
      return fl_seterr(FL_ERR_OPTION_RANGE, "--set %s: solimp: expected D0,DWIDTH,WIDTH"
                       "[,MIDPOINT,POWER] with D0, DWIDTH, MIDPOINT in (0, 1), WIDTH >= 0 (m), "
                       "POWER >= 1", set);
    memcpy(o->solimp, x, sizeof x);
    return FL_OK;
  }
  if (!strcmp(key, "iterations")) {
    char *end;
    long n = strtol(val, &end, 10);
    if (*end || n < 1 || n > 1000000)
      return fl_seterr(FL_ERR_OPTION_RANGE, "--set %s: iterations: expected 1..1000000", set);
    o->iterations = (int)n;
    return FL_OK;
  }
  if (!strcmp(key, "tolerance")) {
    char *end;
    double v = strtod(val, &end);
    if (*end || !(v >= 0) || !isfinite(v))
      return fl_seterr(FL_ERR_OPTION_RANGE, "--set %s: tolerance: expected a number >= 0", set);
    o->tolerance = v;
    return FL_OK;
  }
  return fl_seterr(FL_ERR_UNKNOWN_OPTION, "--set %s: '%s' is no option of the MuJoCo peers; "
                   "expected cone, solref, solimp, iterations or tolerance", set, key);
}


int fl__mjcf_options(const char *name, const char *group, const char *solver, int nset,
                     const char *const *set, fl_mjcf_opts *o) {
  fl_mjcf_opts_default(o);
  o->solver = solver;
  for (int k = 0; k < nset; k++) {
    char buf[256], *key, *val;
    int rc = fl__peer_setting(set[k], name, group, peer_keys, buf, sizeof buf, &key, &val);
    if (rc < 0) return rc;
    if (rc == 0) FL_TRY(apply_option(o, key, val, set[k]));
  }
  return FL_OK;
}


#ifdef FL_HAVE_MUJOCO
static const char *const mj_solver_names[] = {"PGS", "CG", "Newton"};

/* Options of peer `name` from the settings (see fl_peer.h). */
static int peer_options(const char *name, int nset, const char *const *set, fl_mjcf_opts *o) {
  return fl__mjcf_options(name, "mujoco", mj_solver_names[peer_index(name)], nset, set, o);
}



static void options_json(const fl_mjcf_opts *o, char *buf, size_t n) {
  snprintf(buf, n,
           "{\"simulator\":\"MuJoCo %s\",\"solver\":\"%s\",\"cone\":\"%s\",\"solref\":[%.17g,%.17g],"
           "\"solimp\":[%.17g,%.17g,%.17g,%.17g,%.17g],\"iterations\":%d,\"tolerance\":%.17g,"
           "\"integrator\":\"Euler\"}",
           mj_versionString(), o->solver, o->elliptic ? "elliptic" : "pyramidal", o->solref[0],
           o->solref[1], o->solimp[0], o->solimp[1], o->solimp[2], o->solimp[3], o->solimp[4],
           o->iterations, o->tolerance);
}


static int mj_options_resolve(const char *name, int nset, const char *const *set, char *buf,
                              size_t n) {
  if (peer_index(name) < 0)
    return fl_seterr(FL_ERR_UNKNOWN_SOLVER, "peer '%s': expected mujoco-pgs, mujoco-cg or "
                     "mujoco-newton", name ? name : "(null)");
  fl_mjcf_opts o;
  FL_TRY(peer_options(name, nset, set, &o));
  options_json(&o, buf, n);
  return FL_OK;
}


//---- the peer ----

typedef struct mj_peer {
  char name[32];
  fl_mjcf_opts opt;
  mjModel *m;
  mjData *d;
  fl_int nbody;       /* the world's bodies when created */
  fl_int *mjbody;     /* (nbody) MuJoCo body id of each dynamic body, -1 otherwise */
  fl_int *geombody;   /* (ngeom) FrictionLab body of each MuJoCo geom ("g<i>"), -1 unknown */
  fl_iter_stat hist[mjNSOLVER];
  int nhist;
  fl_peer_stages st;
  double impulse;     /* total normal impulse of the last step (N s) */
  int ncon;           /* contacts of the last step that became constraints */
  int broken;         /* MuJoCo raised an error: the data is not usable */
  char json[512];
} mj_peer;


static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


static mjtNum timer_cb(void) { return wall_now(); }

// MuJoCo's messages: kept for the next error instead of its log file and stdout
static char mj_msg[512];
static void warn_cb(const char *msg) { snprintf(mj_msg, sizeof mj_msg, "%s", msg); }

// MuJoCo's errors (its stack exhausted, ...) would end the process: jump back to the call
static jmp_buf mj_jump;
static int mj_armed;
static void error_cb(const char *msg) {
  snprintf(mj_msg, sizeof mj_msg, "%s", msg);
  if (mj_armed) longjmp(mj_jump, 1);
  fprintf(stderr, "MuJoCo error outside a peer call: %s\n", msg);
  abort();
}


static void mj_free(void *self) {
  mj_peer *p = self;
  if (!p) return;
  if (p->d) mj_deleteData(p->d);
  if (p->m) mj_deleteModel(p->m);
  fl_free(p->mjbody);
  fl_free(p->geombody);
  fl_free(p);
}


static int mj_create(const char *name, const fl_world *w, int nset, const char *const *set,
                     const char *mjcf_path, void **out) {
  if (!out || !w) return fl_seterr(FL_ERR_INVAL, "fl_peer_create: NULL argument");
  *out = NULL;
  if (peer_index(name) < 0)
    return fl_seterr(FL_ERR_UNKNOWN_SOLVER, "peer '%s': expected mujoco-pgs, mujoco-cg or "
                     "mujoco-newton", name ? name : "(null)");
  mj_peer *p = fl_calloc(1, sizeof *p);
  if (!p) return fl_seterr(FL_ERR_NOMEM, "peer: out of memory");
  snprintf(p->name, sizeof p->name, "%s", name);
  int rc = peer_options(name, nset, set, &p->opt);
  // the MJCF: to the given path, or a temporary file
  char tmp[64] = "";
  const char *path = mjcf_path;
  FILE *f = NULL;
  if (rc >= 0) rc = fl_mjcf_check(w);
  if (rc >= 0 && !path) {
    snprintf(tmp, sizeof tmp, "/tmp/frictionlab-mjcf-XXXXXX");
    int fd = mkstemp(tmp);
    if (fd < 0) rc = fl_seterr(FL_ERR_IO, "peer %s: cannot create a temporary MJCF file", name);
    else f = fdopen(fd, "w");
    path = tmp;
  } else if (rc >= 0) {
    f = fopen(path, "w");
  }
  if (rc >= 0 && !f) rc = fl_seterr(FL_ERR_IO, "peer %s: cannot write MJCF to %s", name, path);
  if (rc >= 0) rc = fl_mjcf_write(w, &p->opt, f);
  if (f && fclose(f) != 0 && rc >= 0)
    rc = fl_seterr(FL_ERR_IO, "peer %s: cannot write MJCF to %s", name, path);
  if (rc >= 0) {
    char err[1024] = "";
    mju_user_warning = warn_cb;
    mju_user_error = error_cb;
    mjcb_time = timer_cb;
    mj_msg[0] = 0;
    if (setjmp(mj_jump)) {
      mj_armed = 0;
      snprintf(err, sizeof err, "%s", mj_msg);
    } else {
      mj_armed = 1;
      p->m = mj_loadXML(path, NULL, err, sizeof err);
      if (p->m) p->d = mj_makeData(p->m);
      mj_armed = 0;
    }
    if (!p->m || !p->d)
      rc = fl_seterr(FL_ERR_FORMAT, "peer %s: MuJoCo refused the MJCF (%s): %s", name,
                     mjcf_path ? mjcf_path : "temporary file", err[0] ? err : mj_msg);
  }
  if (tmp[0]) unlink(tmp);
  if (rc >= 0) {
    p->mjbody = fl_malloc((size_t)(w->nbody > 0 ? w->nbody : 1) * sizeof(fl_int));
    p->geombody = fl_malloc((size_t)(p->m->ngeom > 0 ? p->m->ngeom : 1) * sizeof(fl_int));
    if (!p->d || !p->mjbody || !p->geombody) rc = fl_seterr(FL_ERR_NOMEM, "peer %s: out of memory", name);
  }
  for (int g = 0; rc >= 0 && g < p->m->ngeom; g++) { // the MJCF names geom g<i> after body i
    const char *gn = mj_id2name(p->m, mjOBJ_GEOM, g);
    int i = -1;
    p->geombody[g] = gn && sscanf(gn, "g%d", &i) == 1 && i >= 0 && i < w->nbody ? i : -1;
  }
  if (rc < 0) {
    mj_free(p);
    return rc;
  }
  // the exact state: poses and velocities (MuJoCo's free-joint angular velocity is in the
  // body frame, FrictionLab's in the world frame)
  p->nbody = w->nbody;
  int id = 1;
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    p->mjbody[i] = -1;
    if (b->kind != FL_BODY_DYNAMIC) continue;
    p->mjbody[i] = id;
    int j = p->m->body_jntadr[id];
    mjtNum *q = p->d->qpos + p->m->jnt_qposadr[j], *v = p->d->qvel + p->m->jnt_dofadr[j];
    double R[9];
    fl_quat_to_mat(b->quat, R);
    for (int k = 0; k < 3; k++) {
      q[k] = b->pos[k];
      v[k] = b->vel[k];
    }
    for (int k = 0; k < 4; k++) q[3 + k] = b->quat[k];
    fl_m3_multv(R, b->omega, v + 3);
    id++;
  }
  options_json(&p->opt, p->json, sizeof p->json);
  *out = p;
  return FL_OK;
}


static int mj_step_peer(void *self, fl_world *w, fl_step_info *info) {
  mj_peer *p = self;
  if (w->nbody != p->nbody)
    return fl_seterr(FL_ERR_STATE, "peer %s: the world has %d bodies, the model %d", p->name,
                     (int)w->nbody, (int)p->nbody);
  mjModel *m = p->m;
  mjData *d = p->d;
  // applied forces at the step's start time, at the centre of mass (world frame)
  mju_zero(d->xfrc_applied, 6 * m->nbody);
  for (fl_int k = 0; k < w->nforce; k++) {
    const fl_force *fo = &w->force[k];
    int id = p->mjbody[fo->body];
    if (id < 0) continue;
    double s = fl_force_scale(fo, w->t);
    for (int c = 0; c < 3; c++) {
      d->xfrc_applied[6 * id + c] += s * fo->f[c];
      d->xfrc_applied[6 * id + 3 + c] += s * fo->tau[c];
    }
  }
  int warn0[mjNWARNING];
  for (int k = 0; k < mjNWARNING; k++) warn0[k] = d->warning[k].number;
  memset(d->timer, 0, sizeof d->timer);
  mj_msg[0] = 0;
  if (p->broken)
    return fl_seterr(FL_ERR_STATE, "peer %s: stepped after a MuJoCo error", p->name);
  if (setjmp(mj_jump)) {
    mj_armed = 0;
    p->broken = 1;
    return fl_seterr(FL_ERR_LIBRARY, "peer %s: step %d: MuJoCo error: %s", p->name,
                     (int)w->step, mj_msg);
  }
  mj_armed = 1;
  mj_step(m, d);
  mj_armed = 0;
  for (int k = 0; k < mjNWARNING; k++) {
    if (d->warning[k].number > warn0[k])
      return fl_seterr(FL_ERR_STATE, "peer %s: step %d: MuJoCo warning %d: %s", p->name,
                       (int)w->step, k, mj_msg[0] ? mj_msg : "(no text)");
  }
  // poses and velocities back into the world
  for (fl_int i = 0; i < w->nbody; i++) {
    int id = p->mjbody[i];
    if (id < 0) continue;
    fl_body *b = &w->body[i];
    int j = m->body_jntadr[id];
    const mjtNum *q = d->qpos + m->jnt_qposadr[j], *v = d->qvel + m->jnt_dofadr[j];
    for (int k = 0; k < 3; k++) {
      b->pos[k] = q[k];
      b->vel[k] = v[k];
    }
    for (int k = 0; k < 4; k++) b->quat[k] = q[3 + k];
    double R[9];
    fl_quat_to_mat(b->quat, R);
    fl_m3_mulv(R, v + 3, b->omega);
  }
  w->t += w->dt;
  // solver statistics of this step (MuJoCo keeps at most mjNSOLVER records)
  int iters = d->solver_iter;
  int pgs = m->opt.solver == mjSOL_PGS;
  p->nhist = iters < mjNSOLVER ? iters : mjNSOLVER;
  for (int k = 0; k < p->nhist; k++) {
    fl_iter_stat *st = &p->hist[k];
    fl_iter_stat_init(st, k + 1);
    st->error = d->solver[k].improvement;
    st->gradient = pgs ? NAN : d->solver[k].gradient;
    st->step = pgs ? NAN : d->solver[k].lineslope;
    st->nactive = d->solver[k].nactive;
    st->nchange = d->solver[k].nchange;
    st->neval = pgs ? -1 : d->solver[k].neval;
    st->inner_iters = pgs ? -1 : d->solver[k].nupdate;
  }
  // the normal impulse of the step's contacts (see fl_peer.h)
  p->impulse = 0;
  p->ncon = 0;
  for (int c = 0; c < d->ncon; c++) {
    if (d->contact[c].efc_address < 0) continue; // found but not a constraint (distance >= 0)
    p->ncon++;
    mjtNum fr[6];
    mj_contactForce(m, d, c, fr);
    p->impulse += fr[0] * m->opt.timestep;
  }
  // stage times (see fl_peer_stages)
  const mjTimerStat *t = d->timer;
  p->st.step_s = t[mjTIMER_STEP].duration;
  p->st.collide_s = t[mjTIMER_POS_COLLISION].duration;
  p->st.setup_s = t[mjTIMER_POS_MAKE].duration + t[mjTIMER_POS_PROJECT].duration;
  p->st.solve_s = t[mjTIMER_CONSTRAINT].duration;
  p->st.integrate_s = t[mjTIMER_STEP].duration - t[mjTIMER_FORWARD].duration;
  p->st.assemble_s = t[mjTIMER_FORWARD].duration - p->st.collide_s - p->st.setup_s -
                     p->st.solve_s;
  FL_TRY(fl_world_set_peer_contacts(w, p->ncon));
  if (info) {
    memset(info, 0, sizeof *info);
    info->step = w->step;
    info->t = w->t;
    info->nbody_pairs = -1;
    info->nc = p->ncon;
    info->nh = 0;
    info->collide_s = p->st.collide_s;
    info->assemble_s = p->st.assemble_s;
    info->solve_s = p->st.setup_s + p->st.solve_s;
    info->integrate_s = p->st.integrate_s;
    info->collide_cpu_s = info->assemble_cpu_s = NAN;
    info->warm_matched = -1;
    info->res.iters = iters;
    info->res.reason = d->nefc == 0 ? FL_CONVERGED_EXACT
                       : iters < m->opt.iterations ? FL_CONVERGED_ATOL
                                                   : FL_DIVERGED_MAX_ITER;
    info->res.error = p->nhist > 0 ? p->hist[p->nhist - 1].error : 0;
    info->res.solve_s = p->st.solve_s;
    info->res.setup_s = p->st.setup_s;
    info->res.monitor_s = 0;
    info->res.history_len = p->nhist;
    info->res.history_lost = iters - p->nhist;
    info->res.device_s = info->res.device_bytes = NAN;
    fl_metrics *me = &info->met;
    me->natmap = me->natmap_raw = me->momentum = me->signorini = me->cone = me->dual = NAN;
    me->dissipation = me->penetration = me->bilateral = me->norm_q = me->norm_u = NAN;
    me->norm_gamma = NAN;
  }
  w->step++;
  return FL_OK;
}


static void mj_stages(const void *self, fl_peer_stages *st) { *st = ((const mj_peer *)self)->st; }


static const fl_iter_stat *mj_history(const void *self, int *n) {
  const mj_peer *p = self;
  *n = p->nhist;
  return p->hist;
}


static int mj_contacts(const void *self) { return ((const mj_peer *)self)->ncon; }
static double mj_impulse(const void *self) { return ((const mj_peer *)self)->impulse; }


static int mj_contact(const void *self, int i, fl_peer_contact_info *out) {
  const mj_peer *p = self;
  if ( i < 0 || i >= p->ncon) return fl_seterr(FL_ERR_INVAL, "peer contact %d out of range", i);
  const mjModel *m = p->m;
  mjData *d = p->d;
  int k = -1;
  for (int c = 0; c < d->ncon; c++) // the i-th contact that became a constraint
    if (d->contact[c].efc_address >= 0 && ++k == i) {
      const mjContact *con = &d->contact[c];
      mjtNum fr[6];
      mj_contactForce(m, d, c, fr);
      // frame rows: normal (from geom1 to geom2), two tangents; the force is geom1's on geom2
      for (int a = 0; a < 3; a++) {
        out->point[a] = con->pos[a];
        out->normal[a] = con->frame[a];
        out->impulse[a] = m->opt.timestep * (fr[0] * con->frame[a] + fr[1] * con->frame[3 + a] +
                                             fr[2] * con->frame[6 + a]);
      }
      out->dist = con->dist;
      out->body[0] = con->geom1 >= 0 && con->geom1 < m->ngeom ? p->geombody[con->geom1] : -1;
      out->body[1] = con->geom2 >= 0 && con->geom2 < m->ngeom ? p->geombody[con->geom2] : -1;
      out->sliding = fr[0] > 0 && hypot(fr[1], fr[2]) >= 0.99 * con->friction[0] * fr[0];
      return FL_OK;
    }
  return fl_seterr(FL_ERR_INVAL, "peer contact %d out of range", i);
}


static const char *mj_options_json(const void *self) { return ((const mj_peer *)self)->json; }

#endif

const fl__peer_ops fl__peer_mujoco_ops = {
    .names = peer_names,
    .group = "mujoco",
    .unavailable = mj_unavailable,
#ifdef FL_HAVE_MUJOCO
    .create = mj_create,
    .free = mj_free,
    .step = mj_step_peer,
    .stages = mj_stages,
    .history = mj_history,
    .contacts = mj_contacts,
    .normal_impulse = mj_impulse,
    .contact = mj_contact,
    .options_json = mj_options_json,
    .options_resolve = mj_options_resolve,
#endif
};

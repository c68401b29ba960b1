// SPDX-License-Identifier: Apache-2.0
/* peer_py.c: peers that run in a Python process of the project's virtual environment
 * (scripts/setup makes .venv with pinned drake and mujoco from PyPI): Drake's MultibodyPlant
 * (drake-sap, drake-similar, drake-lagged, drake-tamsi: its discrete contact approximations) and
 * MuJoCo's current release (mujoco4-pgs, mujoco4-cg, mujoco4-newton). docs/peers.md.
 *
 * Outline: check what the simulator can express (refused with the reason before any process
 * starts); write the scene as JSON (and MJCF for MuJoCo) into a temporary folder or beside the
 * given path; start `python python/fl_peer_py.py SCENE.json` with pipes; it builds the model and
 * answers "ok {json}" or "err MESSAGE". Steps are run ahead in chunks ("step K" on its stdin,
 * with the chunk's applied forces; K records back on its stdout), each chunk's steps timed
 * together inside the process so that the interpreter is not counted, then played back one per
 * fl_peer_step: poses and velocities into the world, the simulator's statistics into info.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fl_peer_impl.h"

#define NH 10          /* header doubles per record (fl_peer_py.py) */
#define CHUNK_MAX 4096 /* steps run ahead at most */

static const char *const drake_names[] = {"drake-sap", "drake-similar", "drake-lagged",
                                          "drake-tamsi", NULL};
static const char *const mj4_names[] = {"mujoco4-pgs", "mujoco4-cg", "mujoco4-newton", NULL};
static const char *const mj4_solvers[] = {"PGS", "CG", "Newton"};
static const char *const drake_keys[] = {"stiffness", "beta", "stiction_tolerance", "contact",
                                         "hydro_modulus", NULL};

//---- where the environment is ----

static const char *venv_dir(void) {
  const char *e = getenv("FL_VENV");
  return e && *e ? e : FL_SOURCE_DIR "/.venv";
}


static const char *script_path(void) {
  static char buf[1024];
  const char *e = getenv("FL_PYTHON_DIR");
  snprintf(buf, sizeof buf, "%s/fl_peer_py.py", e && *e ? e : FL_SOURCE_DIR "/python");
  return buf;
}


/* Version of distribution `dist` installed in the venv (from its dist-info folder), or NULL. */
static const char *venv_version(const char *dist, char *buf, size_t n) {
  char pat[1200];
  snprintf(pat, sizeof pat, "%s/lib/python3*/site-packages/%s-*.dist-info", venv_dir(), dist);
  glob_t g;
  const char *v = NULL;
  if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0) {
    const char *base = strrchr(g.gl_pathv[0], '/');
    base = base ? base + 1 : g.gl_pathv[0];
    snprintf(buf, n, "%s", base + strlen(dist) + 1);
    char *dot = strstr(buf, ".dist-info");
    if (dot) *dot = 0;
    v = buf;
  }
  globfree(&g);
  return v;
}


static int is_drake(const char *name) { return name && !strncmp(name, "drake-", 6); }


static const char *py_unavailable(const char *name) {
  static char why[1400];
  char py[1100], ver[64];
  snprintf(py, sizeof py, "%s/bin/python", venv_dir());
  const char *dist = is_drake(name) ? "drake" : "mujoco";
  if (access(py, X_OK) != 0) {
    snprintf(why, sizeof why, "no Python environment at %s (run scripts/setup: it installs the "
             "pinned drake and mujoco from PyPI there; FL_VENV names another)", venv_dir());
    return why;
  }
  if (!venv_version(dist, ver, sizeof ver)) {
    snprintf(why, sizeof why, "the Python environment %s has no %s package (scripts/setup "
             "installs it; docs/peers.md says which versions install on which Python)",
             venv_dir(), dist);
    return why;
  }
  if (!is_drake(name) && strtol(ver, NULL, 10) < 3) {
    snprintf(why, sizeof why, "the Python environment %s has mujoco %s; the mujoco4-* peers "
             "want MuJoCo 3 or later", venv_dir(), ver);
    return why;
  }
  if (access(script_path(), R_OK) != 0) {
    snprintf(why, sizeof why, "cannot read %s", script_path());
    return why;
  }
  return NULL;
}


//---- options ----

typedef struct py_opts {
  double stiffness; /* N/m given to rigid materials (Drake has no rigid point contact) */
  double beta;      /* SAP's near-rigid threshold (Drake's default 1) */
  double vs;        /* stiction tolerance (m/s; Drake's default 1e-4) */
  int hydro;        /* 0: point contact, 1: hydroelastic (compliant bodies, rigid planes) */
  double modulus;   /* hydroelastic modulus (Pa) of every body but the planes */
  fl_mjcf_opts mj;  /* MuJoCo's */
} py_opts;


static int num_opt(const char *key, const char *val, const char *set, double lo, double *out) {
  char *end;
  double v = strtod(val, &end);
  if (end == val || *end || !isfinite(v) || !(v > lo))
    return fl_seterr(FL_ERR_OPTION_RANGE, "--set %s: %s: expected a finite number > %g", set,
                     key, lo);
  *out = v;
  return FL_OK;
}


static int py_options(const char *name, int nset, const char *const *set, py_opts *o) {
  memset(o, 0, sizeof *o);
  // rigid materials: SAP's near-rigid R_n exceeds 1/(dt^2 k) at any useful k, so a stiff k
  // leaves drake-sap exactly near-rigid; the Hunt-Crossley models have no such clamp and their
  // solves degrade at k = 1e12 (similar: "Hessian negative"; TAMSI does not converge), so
  // 1e8 N/m (a 1000 kg body on one contact sinks 0.1 mm)
  o->stiffness = !strcmp(name, "drake-sap") ? 1e12 : 1e8;
  o->beta = 1.0;
  o->vs = 1e-4;
  o->modulus = 1e9;
  if (!is_drake(name)) {
    int k = 0;
    while (strcmp(mj4_names[k], name) != 0) k++;
    FL_TRY(fl__mjcf_options(name, "mujoco4", mj4_solvers[k], nset, set, &o->mj));
    o->mj.modern = 1;
    return FL_OK;
  }
  for (int k = 0; k < nset; k++) {
    char buf[256], *key, *val;
    int rc = fl__peer_setting(set[k], name, "drake", drake_keys, buf, sizeof buf, &key, &val);
    if (rc < 0) return rc;
    if (rc > 0) continue;
    if (!strcmp(key, "stiffness")) FL_TRY(num_opt(key, val, set[k], 0, &o->stiffness));
    else if (!strcmp(key, "beta")) FL_TRY(num_opt(key, val, set[k], 0, &o->beta));
    else if (!strcmp(key, "stiction_tolerance")) FL_TRY(num_opt(key, val, set[k], 0, &o->vs));
    else if (!strcmp(key, "hydro_modulus")) FL_TRY(num_opt(key, val, set[k], 0, &o->modulus));
    else if (!strcmp(key, "contact") && (!strcmp(val, "point") || !strcmp(val, "hydroelastic")))
      o->hydro = !strcmp(val, "hydroelastic");
    else if (!strcmp(key, "contact"))
      return fl_seterr(FL_ERR_OPTION_RANGE, "--set %s: contact: expected point|hydroelastic", set[k]);
    else
      return fl_seterr(FL_ERR_UNKNOWN_OPTION, "--set %s: '%s' is no option of the Drake peers; "
                       "expected stiffness, beta, stiction_tolerance, contact or hydro_modulus", set[k], key);
  }
  return FL_OK;
}


static void options_json(const char *name, const py_opts *o, const char *sim, char *buf,
                         size_t n) {
  if (is_drake(name))
    snprintf(buf, n, "{\"simulator\":\"%s\",\"approximation\":\"%s\",\"contact_model\":\"%s\","
             "\"rigid_stiffness\":%.17g,\"hydro_modulus\":%.17g,\"near_rigid_threshold\":%.17g,"
             "\"stiction_tolerance\":%.17g,\"sap_solver\":\"Drake's defaults\"}",
             sim, name + 6, o->hydro ? "hydroelastic" : "point", o->stiffness, o->modulus, o->beta,
             o->vs);
  else
    snprintf(buf, n, "{\"simulator\":\"%s\",\"solver\":\"%s\",\"cone\":\"%s\",\"solref\":[%.17g,"
             "%.17g],\"solimp\":[%.17g,%.17g,%.17g,%.17g,%.17g],\"iterations\":%d,"
             "\"tolerance\":%.17g,\"integrator\":\"Euler\"}",
             sim, o->mj.solver, o->mj.elliptic ? "elliptic" : "pyramidal", o->mj.solref[0],
             o->mj.solref[1], o->mj.solimp[0], o->mj.solimp[1], o->mj.solimp[2], o->mj.solimp[3],
             o->mj.solimp[4], o->mj.iterations, o->mj.tolerance);
}


static void sim_name(const char *name, char *buf, size_t n) {
  char ver[64];
  const char *dist = is_drake(name) ? "drake" : "mujoco";
  const char *v = venv_version(dist, ver, sizeof ver);
  snprintf(buf, n, "%s %s (PyPI, %s)", is_drake(name) ? "Drake" : "MuJoCo", v ? v : "?",
           venv_dir());
}


static int py_options_resolve(const char *name, int nset, const char *const *set, char *buf,
                              size_t n) {
  py_opts o;
  FL_TRY(py_options(name, nset, set, &o));
  char sim[1200];
  sim_name(name, sim, sizeof sim);
  options_json(name, &o, sim, buf, n);
  return FL_OK;
}


//---- what Drake can express ----

static const char *shape_name(fl_shape_type t) {
  switch (t) {
  case FL_SHAPE_PLANE: return "plane";
  case FL_SHAPE_SPHERE: return "sphere";
  case FL_SHAPE_BOX: return "box";
  case FL_SHAPE_CAPSULE: return "capsule";
  case FL_SHAPE_CYLINDER: return "cylinder";
  case FL_SHAPE_CONVEX: return "convex";
  }
  return "?";
}


/* FL_OK when Drake's MultibodyPlant can express w for peer `name`, else FL_ERR_UNSUPPORTED
 * with the first feature it cannot. */
static int drake_check(const char *name, const fl_world *w) {
  if (w->nfem > 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: world '%s' has %d deformable (FEM) bodies; the peer "
                     "maps rigid bodies only", name, w->name, (int)w->nfem);
  if (w->njoint > 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: world '%s' has %d joints; joints are not mapped to "
                     "Drake's MultibodyPlant (yet)", name, w->name, (int)w->njoint);
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    if (b->hydro_modulus > 0)
      return fl_seterr(FL_ERR_UNSUPPORTED, "%s: body '%s' is hydroelastic; FrictionLab's patch "
                       "(a pressure disk on a cylinder) has no one-to-one Drake equivalent "
                       "(Drake's hydroelastic fields are of its own making)", name, b->name);
    if (b->kind == FL_BODY_PRESCRIBED && (fl_v3_norm(b->vel) > 0 || fl_v3_norm(b->omega) > 0))
      return fl_seterr(FL_ERR_UNSUPPORTED, "%s: body '%s' moves with a prescribed velocity; the "
                       "peer welds fixed bodies to the world and has no prescribed motion",
                       name, b->name);
    if (b->kind == FL_BODY_DYNAMIC && b->shape.type == FL_SHAPE_PLANE)
      return fl_seterr(FL_ERR_UNSUPPORTED, "%s: dynamic body '%s' is a plane; Drake's half "
                       "spaces must be anchored", name, b->name);
  }
  // contact laws: Drake gives each geometry its own material and combines two as FrictionLab's
  // defaults do (friction harmonic, stiffness in series, dissipation time scales summed), so
  // every pair that meets must combine that way
  unsigned char *used = fl__peer_materials_meeting(w);
  if (!used) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", name);
  fl_int nm = w->nmat;
  int rc = FL_OK, sap = !strcmp(name, "drake-sap");
  for (fl_int a = 0; a < nm && rc == FL_OK; a++)
    for (fl_int b = a; b < nm && rc == FL_OK; b++) {
      if (!used[a * nm + b]) continue;
      const fl_material *ma = &w->mat[a], *mb = &w->mat[b];
      double mu, k, td, mu_d, k_d, td_d;
      fl__peer_pair_law(w, (int)a, (int)b, &mu, &k, &td);
      fl_material_combine(ma, mb, FL_MU_HARMONIC, &mu_d, &k_d, &td_d);
      int same_k = (isinf(k) && isinf(k_d)) || fabs(k - k_d) <= 1e-12 * fabs(k);
      if (fabs(mu - mu_d) > 1e-12 * fmax(1, mu) || !same_k || fabs(td - td_d) > 1e-15)
        rc = fl_seterr(FL_ERR_UNSUPPORTED, "%s: materials '%s' and '%s' meet with mu %g, k %g, "
                       "tau_d %g; Drake combines per-geometry materials as mu %g (harmonic), k %g "
                       "(in series), tau_d %g (sum) and has no law per pair", name, ma->name,
                       mb->name, mu, k, td, mu_d, k_d, td_d);
      else if (!sap && isfinite(k) && td > 0)
        rc = fl_seterr(FL_ERR_UNSUPPORTED, "%s: materials '%s' and '%s' meet with a compliant law "
                       "damped by tau_d = %g s; Drake's %s approximation damps point contact the "
                       "Hunt-Crossley way (force k x (1 + d xdot)), which has no equivalent of "
                       "FrictionLab's linear k tau_d xdot (drake-sap takes it)", name, ma->name,
                       mb->name, td, name + 6);
    }
  fl_free(used);
  return rc;
}


//---- the scene file ----

static cJSON *vec(const double *x, int n) { return cJSON_CreateDoubleArray(x, n); }


static int write_scene(const char *name, const fl_world *w, const py_opts *o, const char *path,
                       const char *tmpdir, const char *mjcf, int nforce) {
  cJSON *r = cJSON_CreateObject();
  if (!r) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", name);
  cJSON_AddStringToObject(r, "peer", name);
  cJSON_AddNumberToObject(r, "dt", w->dt);
  cJSON_AddNumberToObject(r, "t0", w->t);
  cJSON_AddItemToObject(r, "gravity", vec(w->gravity, 3));
  cJSON_AddNumberToObject(r, "forces", nforce > 0);
  cJSON_AddStringToObject(r, "tmpdir", tmpdir);
  if (mjcf) cJSON_AddStringToObject(r, "mjcf", mjcf);
  char tap[1200];
  snprintf(tap, sizeof tap, "%s/lib/fl_sap_tap.so", venv_dir());
  if (is_drake(name) && access(tap, R_OK) == 0) cJSON_AddStringToObject(r, "sap_tap", tap);
  cJSON *op = cJSON_AddObjectToObject(r, "options");
  cJSON_AddNumberToObject(op, "stiffness", o->stiffness);
  cJSON_AddNumberToObject(op, "beta", o->beta);
  cJSON_AddNumberToObject(op, "stiction_tolerance", o->vs);
  cJSON_AddStringToObject(op, "contact", o->hydro ? "hydroelastic" : "point");
  cJSON_AddNumberToObject(op, "hydro_modulus", o->modulus);
  cJSON *bodies = cJSON_AddArrayToObject(r, "bodies");
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    const fl_material *m = &w->mat[b->material];
    const fl_shape *s = &b->shape;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToArray(bodies, j);
    cJSON_AddNumberToObject(j, "index", (double)i);
    cJSON_AddStringToObject(j, "name", b->name);
    cJSON_AddNumberToObject(j, "dynamic", b->kind == FL_BODY_DYNAMIC);
    cJSON_AddStringToObject(j, "shape", shape_name(s->type));
    cJSON_AddItemToObject(j, "size", vec(s->size, 3));
    if (s->type == FL_SHAPE_CONVEX) {
      cJSON_AddItemToObject(j, "vert", vec(s->vert, 3 * (int)s->nvert));
      cJSON *faces = cJSON_AddArrayToObject(j, "faces");
      for (fl_int f = 0; f < s->nface; f++) {
        cJSON *fa = cJSON_CreateArray();
        for (fl_int q = s->face_ptr[f]; q < s->face_ptr[f + 1]; q++)
          cJSON_AddItemToArray(fa, cJSON_CreateNumber((double)s->face_vert[q]));
        cJSON_AddItemToArray(faces, fa);
      }
    }
    cJSON_AddItemToObject(j, "pos", vec(b->pos, 3));
    cJSON_AddItemToObject(j, "quat", vec(b->quat, 4));
    cJSON_AddItemToObject(j, "vel", vec(b->vel, 3));
    cJSON_AddItemToObject(j, "omega", vec(b->omega, 3));
    cJSON_AddNumberToObject(j, "mass", b->mass);
    cJSON_AddItemToObject(j, "inertia", vec(b->inertia, 9));
    cJSON_AddNumberToObject(j, "mu", m->mu);
    if (isinf(m->stiffness)) cJSON_AddNullToObject(j, "stiffness");
    else cJSON_AddNumberToObject(j, "stiffness", m->stiffness);
    cJSON_AddNumberToObject(j, "tau_d", m->tau_d);
  }
  char *txt = cJSON_Print(r);
  cJSON_Delete(r);
  if (!txt) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", name);
  FILE *f = fopen(path, "w");
  int ok = f && fputs(txt, f) >= 0;
  if (f && fclose(f) != 0) ok = 0;
  cJSON_free(txt);
  return ok ? FL_OK : fl_seterr(FL_ERR_IO, "%s: cannot write the scene to %s", name, path);
}


//---- the process ----

typedef struct py_peer {
  char name[32];
  py_opts opt;
  pid_t pid;
  FILE *to, *from;      /* its stdin, its stdout */
  char errpath[64];     /* its stderr */
  char tmpdir[64];      /* removed at the end ("" when none) */
  char scene[1200];
  fl_int nbody, ndyn;
  fl_int *dyn;          /* (ndyn) world index of each dynamic body */
  double *rec;          /* (CHUNK_MAX x (NH + 13 ndyn)) the steps run ahead */
  int nrec, next;       /* records held, next to play */
  long expect;          /* steps still expected (fl_peer_expect), or -1 */
  int chunk;            /* the last chunk's size */
  double *force;        /* (CHUNK_MAX x ndyn x 6) */
  fl_peer_stages st;
  fl_iter_stat hist[1];
  int nhist, ncon;
  double impulse;
  int broken;
  char json[2048];
} py_peer;


/* The tail of the process's stderr, for a message. */
static const char *err_tail(const py_peer *p, char *buf, size_t n) {
  buf[0] = 0;
  FILE *f = fopen(p->errpath, "r");
  if (!f) return buf;
  fseek(f, 0, SEEK_END);
  long len = ftell(f), from = len > (long)n - 1 ? len - (long)n + 1 : 0;
  fseek(f, from, SEEK_SET);
  size_t got = fread(buf, 1, n - 1, f);
  buf[got] = 0;
  fclose(f);
  // the last non-empty line that is no Python warning
  char *line = NULL;
  for (char *s = strtok(buf, "\n"); s; s = strtok(NULL, "\n"))
    if (!strstr(s, "Warning") && !strstr(s, "WARNING") && s[0] != ' ') line = s;
  return line ? line : buf;
}


static void rm_tmpdir(const char *dir) {
  if (!dir[0]) return;
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char f[1200];
      snprintf(f, sizeof f, "%s/%s", dir, e->d_name);
      unlink(f);
    }
    closedir(d);
  }
  rmdir(dir);
}


static void py_free(void *self) {
  py_peer *p = self;
  if (!p) return;
  if (p->to) {
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGPIPE, &ign, &old);
    fputs("quit\n", p->to);
    fclose(p->to);
    sigaction(SIGPIPE, &old, NULL);
  }
  if (p->from) fclose(p->from);
  if (p->pid > 0) {
    int st;
    while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
  if (p->errpath[0]) unlink(p->errpath);
  rm_tmpdir(p->tmpdir);
  fl_free(p->dyn);
  fl_free(p->rec);
  fl_free(p->force);
  fl_free(p);
}


/* Starts the script on p->scene with pipes; FL_OK or FL_ERR_LIBRARY. */
static int spawn(py_peer *p) {
  int in[2], out[2];
  snprintf(p->errpath, sizeof p->errpath, "/tmp/frictionlab-peer-err-XXXXXX");
  int efd = mkstemp(p->errpath);
  if (efd < 0) {
    p->errpath[0] = 0;
    return fl_seterr(FL_ERR_IO, "%s: cannot create a temporary file", p->name);
  }
  if (pipe(in) != 0 || pipe(out) != 0) {
    close(efd);
    return fl_seterr(FL_ERR_LIBRARY, "%s: pipe: %s", p->name, strerror(errno));
  }
  char py[1100], tap[1200];
  snprintf(py, sizeof py, "%s/bin/python", venv_dir());
  snprintf(tap, sizeof tap, "%s/lib/fl_sap_tap.so", venv_dir());
  int use_tap = is_drake(p->name) && access(tap, R_OK) == 0;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(efd);
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    return fl_seterr(FL_ERR_LIBRARY, "%s: fork: %s", p->name, strerror(errno));
  }
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(efd, 2);
    for (int fd = 3; fd < 1024; fd++) close(fd);
    if (use_tap) setenv("LD_PRELOAD", tap, 1);
    setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
    setenv("OMP_NUM_THREADS", "1", 0); // one core each, as FrictionLab's own solvers
    execl(py, py, "-u", script_path(), p->scene, (char *)NULL);
    fprintf(stderr, "cannot run %s: %s\n", py, strerror(errno));
    _exit(127);
  }
  close(efd);
  close(in[0]);
  close(out[1]);
  p->pid = pid;
  p->to = fdopen(in[1], "w");
  p->from = fdopen(out[0], "r");
  if (!p->to || !p->from) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", p->name);
  return FL_OK;
}


static int py_create(const char *name, const fl_world *w, int nset, const char *const *set,
                     const char *path, void **out) {
  *out = NULL;
  py_peer *p = fl_calloc(1, sizeof *p);
  if (!p) return fl_seterr(FL_ERR_NOMEM, "peer: out of memory");
  snprintf(p->name, sizeof p->name, "%s", name);
  p->expect = -1;
  int rc = py_options(name, nset, set, &p->opt);
  if (rc >= 0) rc = is_drake(name) ? drake_check(name, w) : fl_mjcf_check(w);
  p->nbody = w->nbody;
  for (fl_int i = 0; i < w->nbody; i++) p->ndyn += w->body[i].kind == FL_BODY_DYNAMIC;
  if (rc >= 0) {
    p->dyn = fl_malloc((size_t)(p->ndyn + 1) * sizeof(fl_int));
    p->rec = fl_malloc((size_t)CHUNK_MAX * (size_t)(NH + 13 * p->ndyn) * sizeof(double));
    p->force = fl_calloc((size_t)CHUNK_MAX * (size_t)(6 * p->ndyn + 1), sizeof(double));
    if (!p->dyn || !p->rec || !p->force) rc = fl_seterr(FL_ERR_NOMEM, "%s: out of memory", name);
  }
  if (rc >= 0) {
    fl_int n = 0;
    for (fl_int i = 0; i < w->nbody; i++)
      if (w->body[i].kind == FL_BODY_DYNAMIC) p->dyn[n++] = i;
  }
  // the files: a temporary folder for the meshes (and the scene when no path is given)
  snprintf(p->tmpdir, sizeof p->tmpdir, "/tmp/frictionlab-peer-XXXXXX");
  if (rc >= 0 && !mkdtemp(p->tmpdir)) {
    p->tmpdir[0] = 0;
    rc = fl_seterr(FL_ERR_IO, "%s: cannot create a temporary folder", name);
  }
  char mjcf[1300] = "";
  if (rc >= 0) {
    if (path) {
      snprintf(p->scene, sizeof p->scene, "%s", path);
      char *dot = strrchr(p->scene, '.'), *sl = strrchr(p->scene, '/');
      if (dot && (!sl || dot > sl)) *dot = 0;
      if (!is_drake(name)) snprintf(mjcf, sizeof mjcf, "%s.xml", p->scene);
      strncat(p->scene, ".json", sizeof p->scene - strlen(p->scene) - 1);
    } else {
      snprintf(p->scene, sizeof p->scene, "%s/scene.json", p->tmpdir);
      if (!is_drake(name)) snprintf(mjcf, sizeof mjcf, "%s/scene.xml", p->tmpdir);
    }
  }
  if (rc >= 0 && mjcf[0]) {
    FILE *f = fopen(mjcf, "w");
    if (!f) rc = fl_seterr(FL_ERR_IO, "%s: cannot write MJCF to %s", name, mjcf);
    else {
      rc = fl_mjcf_write(w, &p->opt.mj, f);
      if (fclose(f) != 0 && rc >= 0) rc = fl_seterr(FL_ERR_IO, "%s: cannot write MJCF to %s", name, mjcf);
    }
  }
  if (rc >= 0) rc = write_scene(name, w, &p->opt, p->scene, p->tmpdir, mjcf[0] ? mjcf : NULL, (int)w->nforce);
  if (rc >= 0) rc = spawn(p);
  // the answer: "ok {json}" or "err message"
  char line[4096];
  if (rc >= 0) {
    if (!fgets(line, sizeof line, p->from)) {
      char tail[2048];
      rc = fl_seterr(FL_ERR_LIBRARY, "%s: the Python process ended before answering: %s", name,
                     err_tail(p, tail, sizeof tail));
    } else {
      line[strcspn(line, "\n")] = 0;
      if (!strncmp(line, "err ", 4))
        rc = fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s", name, line + 4);
      else if (strncmp(line, "ok ", 3) != 0)
        rc = fl_seterr(FL_ERR_LIBRARY, "%s: unexpected answer from the Python process: %.200s",
                       name, line);
    }
  }
  if (rc >= 0) {
    cJSON *info = cJSON_Parse(line + 3);
    const cJSON *sim = info ? cJSON_GetObjectItem(info, "simulator") : NULL;
    const cJSON *nd = info ? cJSON_GetObjectItem(info, "ndyn") : NULL;
    const cJSON *tapj = info ? cJSON_GetObjectItem(info, "sap_tap") : NULL;
    if (!cJSON_IsString(sim) || !cJSON_IsNumber(nd) || (fl_int)nd->valuedouble != p->ndyn)
      rc = fl_seterr(FL_ERR_LIBRARY, "%s: the Python process answered %.200s (expected %d "
                     "dynamic bodies)", name, line, (int)p->ndyn);
    else {
      char simv[1400];
      snprintf(simv, sizeof simv, "%s (PyPI, %s)%s", sim->valuestring, venv_dir(),
               is_drake(name) && !cJSON_IsTrue(tapj) ? ", SAP iterations not read" : "");
      options_json(name, &p->opt, simv, p->json, sizeof p->json);
    }
    cJSON_Delete(info);
  }
  if (rc < 0) {
    py_free(p);
    return rc;
  }
  *out = p;
  return FL_OK;
}


static void py_expect(void *self, long steps) { ((py_peer *)self)->expect = steps; }


/* Runs the next chunk of steps ahead. */
static int run_chunk(py_peer *p, const fl_world *w) {
  // as many as the caller said it will take (fl_peer_expect), else doubling chunks from 16
  long k = p->expect > 0 ? p->expect : (p->chunk ? 2L * p->chunk : 16);
  if (k > CHUNK_MAX) k = CHUNK_MAX;
  p->chunk = (int)k;
  size_t nd = (size_t)p->ndyn;
  if (w->nforce > 0) {
    memset(p->force, 0, (size_t)k * nd * 6 * sizeof(double));
    for (long j = 0; j < k; j++) {
      double t = w->t + (double)j * w->dt;
      for (fl_int q = 0; q < w->nforce; q++) {
        const fl_force *fo = &w->force[q];
        fl_int i = 0;
        while (i < p->ndyn && p->dyn[i] != fo->body) i++;
        if (i == p->ndyn) continue;
        double s = fl_force_scale(fo, t), *g = p->force + ((size_t)j * nd + (size_t)i) * 6;
        for (int c = 0; c < 3; c++) {
          g[c] += s * fo->tau[c];
          g[3 + c] += s * fo->f[c];
        }
      }
    }
  }
  struct sigaction ign = {.sa_handler = SIG_IGN}, old;
  sigaction(SIGPIPE, &ign, &old);
  int ok = fprintf(p->to, "step %ld\n", k) > 0;
  if (ok && w->nforce > 0) ok = fwrite(p->force, sizeof(double) * 6 * nd, (size_t)k, p->to) == (size_t)k;
  if (ok) ok = fflush(p->to) == 0;
  sigaction(SIGPIPE, &old, NULL);
  size_t per = (size_t)(NH + 13 * p->ndyn);
  if (ok) ok = fread(p->rec, sizeof(double) * per, (size_t)k, p->from) == (size_t)k;
  if (!ok) {
    p->broken = 1;
    char tail[2048];
    return fl_seterr(FL_ERR_LIBRARY, "%s: steps %d to %ld: the Python process stopped: %s",
                     p->name, (int)w->step, (long)w->step + k - 1, err_tail(p, tail, sizeof tail));
  }
  p->nrec = (int)k;
  p->next = 0;
  return FL_OK;
}


static int py_step(void *self, fl_world *w, fl_step_info *info) {
  py_peer *p = self;
  if (w->nbody != p->nbody)
    return fl_seterr(FL_ERR_STATE, "peer %s: the world has %d bodies, the model %d", p->name,
                     (int)w->nbody, (int)p->nbody);
  if (p->broken) return fl_seterr(FL_ERR_STATE, "peer %s: stepped after an error", p->name);
  if (p->next >= p->nrec) FL_TRY(run_chunk(p, w));
  if (p->expect > 0) p->expect--;
  const double *r = p->rec + (size_t)p->next++ * (size_t)(NH + 13 * p->ndyn);
  if (r[0] < 0) { // the simulator failed at this step (fl_peer_py.py: FAILED)
    p->broken = 1;
    char tail[2048];
    return fl_seterr(FL_ERR_LIBRARY, "%s: step %d: %s", p->name, (int)w->step,
                     err_tail(p, tail, sizeof tail));
  }
  for (fl_int i = 0; i < p->ndyn; i++) {
    fl_body *b = &w->body[p->dyn[i]];
    const double *x = r + NH + 13 * i;
    memcpy(b->pos, x, 3 * sizeof(double));
    memcpy(b->quat, x + 3, 4 * sizeof(double));
    memcpy(b->vel, x + 7, 3 * sizeof(double));
    memcpy(b->omega, x + 10, 3 * sizeof(double));
    for (int c = 0; c < 13; c++)
      if (!isfinite(x[c]))
        return fl_seterr(FL_ERR_STATE, "peer %s: step %d: body '%s' has a non-finite state",
                         p->name, (int)w->step, b->name);
  }
  w->t += w->dt;
  p->ncon = isfinite(r[0]) ? (int)r[0] : 0;
  p->impulse = r[8];
  p->st.step_s = r[2];
  p->st.collide_s = r[3];
  p->st.assemble_s = r[4];
  p->st.setup_s = r[5];
  p->st.solve_s = r[6];
  p->st.integrate_s = r[7];
  int iters = isfinite(r[1]) ? (int)r[1] : -1;
  p->nhist = 0;
  if (isfinite(r[9]) && iters > 0) { // MuJoCo: the last iteration's improvement
    fl_iter_stat_init(&p->hist[0], iters);
    p->hist[0].error = r[9];
    p->nhist = 1;
  }
  FL_TRY(fl_world_set_peer_contacts(w, p->ncon));
  if (info) {
    memset(info, 0, sizeof *info);
    info->step = w->step;
    info->t = w->t;
    info->nbody_pairs = -1;
    info->nc = p->ncon;
    info->nh = 0;
    // Drake times whole steps only: its time is the solve's, the stages NaN
    int whole = !isfinite(r[6]);
    info->collide_s = r[3];
    info->assemble_s = r[4];
    info->solve_s = whole ? r[2] : r[5] + r[6];
    info->integrate_s = r[7];
    info->collide_cpu_s = info->assemble_cpu_s = NAN;
    info->warm_matched = -1;
    // iterations: MuJoCo's (the largest over its islands), SAP's Newton iterations read from
    // Drake's solver (drake_sap_tap.c); 0 where unknown (TAMSI, no tap), said in the manifest
    info->res.iters = iters > 0 ? iters : 0;
    info->res.reason = p->ncon == 0 && iters <= 0 ? FL_CONVERGED_EXACT : FL_CONVERGED_ATOL;
    if (!is_drake(p->name) && iters >= p->opt.mj.iterations) info->res.reason = FL_DIVERGED_MAX_ITER;
    info->res.error = p->nhist ? p->hist[0].error : 0;
    info->res.solve_s = whole ? r[2] : r[6];
    info->res.setup_s = whole ? 0 : r[5];
    info->res.history_len = p->nhist;
    info->res.device_s = info->res.device_bytes = NAN;
    fl_metrics *me = &info->met;
    me->natmap = me->natmap_raw = me->momentum = me->signorini = me->cone = me->dual = NAN;
    me->dissipation = me->penetration = me->bilateral = me->norm_q = me->norm_u = NAN;
    me->norm_gamma = NAN;
  }
  w->step++;
  return FL_OK;
}


static void py_stages(const void *self, fl_peer_stages *st) { *st = ((const py_peer *)self)->st; }


static const fl_iter_stat *py_history(const void *self, int *n) {
  const py_peer *p = self;
  *n = p->nhist;
  return p->hist;
}


// no per-contact records: the count is in the step's info (nc) and steps.csv
static int py_contacts(const void *self) {
  (void)self;
  return 0;
}
static double py_impulse(const void *self) { return ((const py_peer *)self)->impulse; }
static int py_contact(const void *self, int i, fl_peer_contact_info *out) {
  (void)self;
  (void)out;
  return fl_seterr(FL_ERR_INVAL, "peer contact %d: the Python peers keep no contact records", i);
}
static const char *py_options_json(const void *self) { return ((const py_peer *)self)->json; }


const fl__peer_ops fl__peer_drake_ops = {
    .names = drake_names, .group = "drake", .unavailable = py_unavailable, .own_clock = 1,
    .create = py_create, .free = py_free, .step = py_step, .stages = py_stages,
    .history = py_history, .contacts = py_contacts, .normal_impulse = py_impulse,
    .contact = py_contact, .options_json = py_options_json,
    .options_resolve = py_options_resolve, .expect = py_expect,
};

const fl__peer_ops fl__peer_mujoco4_ops = {
    .names = mj4_names, .group = "mujoco4", .unavailable = py_unavailable, .own_clock = 1,
    .create = py_create, .free = py_free, .step = py_step, .stages = py_stages,
    .history = py_history, .contacts = py_contacts, .normal_impulse = py_impulse,
    .contact = py_contact, .options_json = py_options_json,
    .options_resolve = py_options_resolve, .expect = py_expect,
};

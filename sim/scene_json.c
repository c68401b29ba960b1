/* scene_json.c: scene files (JSON, parsed with cJSON); the format is docs/scene-format.md.
 *
 * Loading validates everything and names the file, the JSON path and what was expected:
 * unknown keys, wrong types, sizes, ranges, unknown names. Saving writes a world's current
 * state as the initial state of a scene file that loads back to the same world (shapes in body
 * frames, explicit masses and inertias, joint rest rotations, 17 significant digits).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fl_fem.h"
#include "fl_hydro.h"
#include "world_impl.h"

//---- error context ----

typedef struct jctx {
  const char *file;
  fl_world *w;
} jctx;

__attribute__((format(printf, 3, 4))) static int jerr(const jctx *c, const char *path,
                                                      const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return fl_seterr(FL_ERR_FORMAT, "%s: %s: %s", c->file, path[0] ? path : "(top level)", msg);
}


/* The error of a call that failed on an element: FL_ERR_FORMAT naming the path, except out of
 * memory, which keeps its code. */
static int jfail(const jctx *c, const char *path, int rc) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s", fl_errmsg());
  if (rc == FL_ERR_NOMEM) return fl_seterr(rc, "%s: %s: %s", c->file, path, msg);
  return jerr(c, path, "%s", msg);
}


/* path + "." + key, or path + "[i]" (paths are kept short enough for 256-byte buffers) */
static void sub(char *out, size_t n, const char *path, const char *key) {
  if (path[0]) snprintf(out, n, "%.190s.%.60s", path, key);
  else snprintf(out, n, "%.60s", key);
}


static void idx(char *out, size_t n, const char *path, int i) {
  snprintf(out, n, "%.190s[%d]", path, i);
}


/* Rejects keys outside `allowed` (typos would otherwise be silently ignored). */
static int check_keys(const jctx *c, const cJSON *obj, const char *path,
                      const char *const *allowed) {
  if (!cJSON_IsObject(obj)) return jerr(c, path, "expected an object");
  for (const cJSON *it = obj->child; it; it = it->next) {
    int ok = 0;
    for (int k = 0; allowed[k]; k++) ok |= strcmp(it->string, allowed[k]) == 0;
    if (!ok) {
      char list[512] = "";
      for (int k = 0; allowed[k]; k++) {
        strncat(list, k ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, allowed[k], sizeof list - strlen(list) - 1);
      }
      char p[256];
      sub(p, sizeof p, path, it->string);
      return jerr(c, p, "unknown key; expected one of: %s", list);
    }
  }
  return FL_OK;
}


/* A number (or "inf"/"-inf" when inf_ok) in [lo, hi]; missing: *out = dflt unless required. */
static int get_num(const jctx *c, const cJSON *obj, const char *key, const char *path,
                   int required, double dflt, double lo, double hi, int inf_ok, double *out) {
  char p[256];
  sub(p, sizeof p, path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (required) return jerr(c, p, "missing; expected a number in [%g, %g]", lo, hi);
    *out = dflt;
    return FL_OK;
  }
  double x;
  if (cJSON_IsNumber(v)) {
    x = v->valuedouble;
  } else if (inf_ok && cJSON_IsString(v) && strcmp(v->valuestring, "inf") == 0) {
    x = INFINITY;
  } else {
    return jerr(c, p, "expected a number%s in [%g, %g]", inf_ok ? " (or \"inf\")" : "", lo, hi);
  }
  if (!(x >= lo && x <= hi) || (isinf(x) && !inf_ok))
    return jerr(c, p, "%g is out of range; expected a number in [%g, %g]", x, lo, hi);
  *out = x;
  return FL_OK;
}


/* An array of exactly n finite numbers; missing: dflt (or zeros) unless required. */
static int get_vec(const jctx *c, const cJSON *obj, const char *key, const char *path, int n,
                   int required, const double *dflt, int positive, double *out) {
  char p[256];
  sub(p, sizeof p, path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (required)
      return jerr(c, p, "missing; expected an array of %d %snumbers", n, positive ? "positive " : "");
    for (int i = 0; i < n; i++) out[i] = dflt ? dflt[i] : 0;
    return FL_OK;
  }
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n)
    return jerr(c, p, "expected an array of %d %snumbers", n, positive ? "positive " : "");
  int i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || (positive && !(e->valuedouble > 0))) {
      char q[256];
      idx(q, sizeof q, p, i);
      return jerr(c, q, "expected a finite %snumber (an array of %d)", positive ? "positive " : "", n);
    }
    out[i] = e->valuedouble;
  }
  return FL_OK;
}


static int get_str(const jctx *c, const cJSON *obj, const char *key, const char *path,
                   const char *dflt, const char **out) {
  char p[256];
  sub(p, sizeof p, path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (!dflt) return jerr(c, p, "missing; expected a string");
    *out = dflt;
    return FL_OK;
  }
  if (!cJSON_IsString(v)) return jerr(c, p, "expected a string");
  *out = v->valuestring;
  return FL_OK;
}


/* One of "a|b|c" -> its index. */
static int get_enum(const jctx *c, const cJSON *obj, const char *key, const char *path,
                    const char *choices, int dflt, int *out) {
  const char *s = NULL;
  char p[256];
  sub(p, sizeof p, path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (dflt < 0) return jerr(c, p, "missing; expected one of %s", choices);
    *out = dflt;
    return FL_OK;
  }
  if (!cJSON_IsString(v)) return jerr(c, p, "expected a string, one of %s", choices);
  s = v->valuestring;
  int k = 0;
  for (const char *t = choices; *t; k++) {
    const char *bar = strchr(t, '|');
    size_t len = bar ? (size_t)(bar - t) : strlen(t);
    if (strlen(s) == len && strncmp(s, t, len) == 0) {
      *out = k;
      return FL_OK;
    }
    if (!bar) break;
    t = bar + 1;
  }
  return jerr(c, p, "'%s' is not one of %s", s, choices);
}


/* A body by name or index; null (when allow_world) is -1, the world. */
static int get_body_ref(const jctx *c, const cJSON *obj, const char *key, const char *path,
                        int allow_world, int *out) {
  char p[256];
  sub(p, sizeof p, path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v || cJSON_IsNull(v)) {
    if (allow_world) {
      *out = -1;
      return FL_OK;
    }
    return jerr(c, p, "missing; expected a body name or index");
  }
  if (cJSON_IsString(v)) {
    int b = fl_world_find_body(c->w, v->valuestring);
    if (b < 0) return jerr(c, p, "no body named '%s'", v->valuestring);
    *out = b;
    return FL_OK;
  }
  if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && v->valuedouble >= 0 &&
      v->valuedouble < c->w->nbody) {
    *out = (int)v->valuedouble;
    return FL_OK;
  }
  return jerr(c, p, "expected a body name or an index in [0, %d)%s", (int)c->w->nbody,
              allow_world ? " (or null for the world)" : "");
}


//---- sections ----

static int parse_deformable(const jctx *c, const cJSON *b, const char *path);

static int parse_material(const jctx *c, const cJSON *m, const char *path) {
  static const char *const keys[] = {"name", "mu", "stiffness", "tau_d", NULL};
  FL_TRY(check_keys(c, m, path, keys));
  const char *name = NULL;
  double mu, k, tau;
  FL_TRY(get_str(c, m, "name", path, NULL, &name));
  FL_TRY(get_num(c, m, "mu", path, 1, 0, 0, 1e6, 0, &mu));
  FL_TRY(get_num(c, m, "stiffness", path, 0, INFINITY, 1e-300, INFINITY, 1, &k));
  FL_TRY(get_num(c, m, "tau_d", path, 0, 0, 0, 1e6, 0, &tau));
  if (strlen(name) >= 32 || !name[0]) return jerr(c, path, "name must have 1 to 31 characters");
  int existing = fl_world_find_material(c->w, name);
  if (existing == 0) {
    // "default" redefines the built-in material
    c->w->mat[0].mu = mu;
    c->w->mat[0].stiffness = k;
    c->w->mat[0].tau_d = tau;
    return FL_OK;
  }
  if (existing > 0) return jerr(c, path, "material '%s' is defined twice", name);
  int rc = fl_world_add_material(c->w, name, mu, k, tau);
  return rc < 0 ? jfail(c, path, rc) : FL_OK;
}


static int material_ref(const jctx *c, const cJSON *obj, const char *key, const char *path,
                        int *out) {
  const char *name = NULL;
  FL_TRY(get_str(c, obj, key, path, "default", &name));
  *out = fl_world_find_material(c->w, name);
  if (*out < 0) {
    char p[256];
    sub(p, sizeof p, path, key);
    return jerr(c, p, "no material named '%s' (define it in \"materials\")", name);
  }
  return FL_OK;
}


static int parse_shape(const jctx *c, const cJSON *s, const char *path, fl_shape *out) {
  static const char *const keys[] = {"type", "size", "segments", "vertices", NULL};
  FL_TRY(check_keys(c, s, path, keys));
  int type;
  FL_TRY(get_enum(c, s, "type", path, "plane|sphere|box|capsule|cylinder|convex", -1, &type));
  double sz[3];
  int rc = FL_OK;
  char p[256];
  sub(p, sizeof p, path, "size");
  switch (type) {
  case 0: rc = fl_shape_make_plane(out); break;
  case 1:
    FL_TRY(get_vec(c, s, "size", path, 1, 1, NULL, 1, sz));
    rc = fl_shape_make_sphere(sz[0], out);
    break;
  case 2:
    FL_TRY(get_vec(c, s, "size", path, 3, 1, NULL, 1, sz));
    rc = fl_shape_make_box(sz[0], sz[1], sz[2], out);
    break;
  case 3:
    FL_TRY(get_vec(c, s, "size", path, 2, 1, NULL, 1, sz));
    rc = fl_shape_make_capsule(sz[0], sz[1], out);
    break;
  case 4: {
    double seg;
    FL_TRY(get_vec(c, s, "size", path, 2, 1, NULL, 1, sz));
    FL_TRY(get_num(c, s, "segments", path, 0, FL_CYL_SEGMENTS_DEFAULT, 3, 1024, 0, &seg));
    rc = fl_shape_make_cylinder(sz[0], sz[1], (fl_int)seg, out);
    break;
  }
  default: {
    sub(p, sizeof p, path, "vertices");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, "vertices");
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
    if (n < 4) return jerr(c, p, "expected an array of at least 4 points [x, y, z]");
    double *pts = fl_malloc((size_t)n * 3 * sizeof(double));
    if (!pts) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", c->file);
    int i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
      int ok = cJSON_IsArray(e) && cJSON_GetArraySize(e) == 3;
      int k = 0;
      for (const cJSON *x = ok ? e->child : NULL; x; x = x->next, k++) {
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble)) ok = 0;
        else pts[3 * i + k] = x->valuedouble;
      }
      if (!ok) {
        fl_free(pts);
        char q[256];
        idx(q, sizeof q, p, i);
        return jerr(c, q, "expected a point [x, y, z] of 3 finite numbers");
      }
    }
    rc = fl_shape_make_convex(pts, n, out);
    fl_free(pts);
    break;
  }
  }
  if (rc < 0) return jfail(c, p, rc);
  return FL_OK;
}


/* "hydroelastic": {"modulus": E_h (Pa), "fan": n | "rings": n} on a cylinder or a sphere
 * (sim/fl_hydro.h; no mesh key: the shape's default) */
static int parse_hydro(const jctx *c, const cJSON *h, const char *path, const fl_shape *s,
                       double *modulus, int *mesh) {
  static const char *const keys[] = {"modulus", "fan", "rings", NULL};
  char p[256];
  sub(p, sizeof p, path, "hydroelastic");
  if (!cJSON_IsObject(h))
    return jerr(c, p, "expected an object {\"modulus\": E_h (Pa), \"fan\": n or \"rings\": n}");
  FL_TRY(check_keys(c, h, p, keys));
  if (s->type != FL_SHAPE_CYLINDER && s->type != FL_SHAPE_SPHERE)
    return jerr(c, p, "hydroelastic patches are built for cylinders and spheres only (cylinders against "
                   "planes, spheres against planes and polyhedra)");
  FL_TRY(get_num(c, h, "modulus", p, 1, 0, 1, 1e15, 0, modulus));
  const cJSON *fan = cJSON_GetObjectItemCaseSensitive(h, "fan");
  const cJSON *rings = cJSON_GetObjectItemCaseSensitive(h, "rings");
  if (fan && rings) return jerr(c, p, "give one of \"fan\" and \"rings\", not both");
  double n = 0;
  if (fan) FL_TRY(get_num(c, h, "fan", p, 1, 0, 3, 100000, 0, &n));
  if (rings) FL_TRY(get_num(c, h, "rings", p, 1, 0, 1, 200, 0, &n));
  if (n != floor(n)) {
    char q[256];
    sub(q, sizeof q, p, fan ? "fan" : "rings");
    return jerr(c, q, "%g is not a whole number of %s", n, fan ? "triangles" : "rings");
  }
  *mesh = rings ? -(int)n : (int)n; // 0: the shape's default
  return FL_OK;
}


static int parse_body(const jctx *c, const cJSON *b, const char *path) {
  static const char *const keys[] = {"name", "kind", "material", "shape", "density", "mass",
                                     "inertia", "position", "orientation", "velocity",
                                     "angular_velocity", "hydroelastic", NULL};
  const cJSON *kd = cJSON_GetObjectItemCaseSensitive(b, "kind");
  if (cJSON_IsString(kd) && !strcmp(kd->valuestring, "deformable"))
    return parse_deformable(c, b, path);
  FL_TRY(check_keys(c, b, path, keys));
  const char *name = NULL;
  if (cJSON_GetObjectItemCaseSensitive(b, "name")) {
    FL_TRY(get_str(c, b, "name", path, NULL, &name));
    if (!name[0] || strlen(name) >= 32) return jerr(c, path, "name must have 1 to 31 characters");
    if (fl_world_find_body(c->w, name) >= 0 || fl_world_find_fem(c->w, name) >= 0)
      return jerr(c, path, "a second body named '%s' (names must be unique)", name);
  }
  fl_body_desc d;
  memset(&d, 0, sizeof d);
  d.name = name;
  int kind;
  FL_TRY(get_enum(c, b, "kind", path, "dynamic|fixed|prescribed|deformable", 0, &kind));
  d.kind = (fl_body_kind)kind;
  FL_TRY(material_ref(c, b, "material", path, &d.material));
  static const double qid[4] = {1, 0, 0, 0};
  FL_TRY(get_vec(c, b, "position", path, 3, 0, NULL, 0, d.pos));
  FL_TRY(get_vec(c, b, "orientation", path, 4, 0, qid, 0, d.quat));
  double qn = sqrt(d.quat[0] * d.quat[0] + d.quat[1] * d.quat[1] + d.quat[2] * d.quat[2] +
                   d.quat[3] * d.quat[3]);
  if (!(qn > 1e-12)) {
    char p[256];
    sub(p, sizeof p, path, "orientation");
    return jerr(c, p, "expected a nonzero quaternion [w, x, y, z]");
  }
  FL_TRY(get_vec(c, b, "velocity", path, 3, 0, NULL, 0, d.vel));
  FL_TRY(get_vec(c, b, "angular_velocity", path, 3, 0, NULL, 0, d.omega));
  const cJSON *has_d = cJSON_GetObjectItemCaseSensitive(b, "density");
  const cJSON *has_m = cJSON_GetObjectItemCaseSensitive(b, "mass");
  const cJSON *has_i = cJSON_GetObjectItemCaseSensitive(b, "inertia");
  double inertia[9];
  if (kind == FL_BODY_DYNAMIC) {
    if ((has_d != NULL) == (has_m != NULL))
      return jerr(c, path, "a dynamic body needs exactly one of \"density\" (kg/m^3) or \"mass\" (kg)");
    if (has_d) FL_TRY(get_num(c, b, "density", path, 1, 0, 1e-300, 1e300, 0, &d.density));
    if (has_m) FL_TRY(get_num(c, b, "mass", path, 1, 0, 1e-300, 1e300, 0, &d.mass));
    if (has_i) {
      if (!has_m) return jerr(c, path, "\"inertia\" goes with \"mass\", not \"density\"");
      char p[256];
      sub(p, sizeof p, path, "inertia");
      int n = cJSON_IsArray(has_i) ? cJSON_GetArraySize(has_i) : 0;
      if (n == 3) {
        double diag[3];
        FL_TRY(get_vec(c, b, "inertia", path, 3, 1, NULL, 1, diag));
        memset(inertia, 0, sizeof inertia);
        inertia[0] = diag[0];
        inertia[4] = diag[1];
        inertia[8] = diag[2];
      } else if (n == 9) {
        FL_TRY(get_vec(c, b, "inertia", path, 9, 1, NULL, 0, inertia));
      } else {
        return jerr(c, p, "expected 3 principal moments or 9 entries (kg m^2, body frame)");
      }
      d.inertia = inertia;
    }
  } else if (has_d || has_m || has_i) {
    return jerr(c, path, "fixed and prescribed bodies take no density, mass or inertia");
  }
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(b, "shape");
  char p[256];
  sub(p, sizeof p, path, "shape");
  if (!sh) return jerr(c, p, "missing; expected an object with \"type\"");
  fl_shape s;
  memset(&s, 0, sizeof s);
  FL_TRY(parse_shape(c, sh, p, &s));
  double hmod = 0;
  int hmesh = 0;
  const cJSON *hy = cJSON_GetObjectItemCaseSensitive(b, "hydroelastic");
  if (hy) {
    int rc = parse_hydro(c, hy, path, &s, &hmod, &hmesh);
    if (rc < 0) {
      fl_shape_free(&s);
      return rc;
    }
  }
  int rc = fl_world_add_body(c->w, &d, &s);
  if (rc < 0) {
    fl_shape_free(&s);
    return jfail(c, path, rc);
  }
  c->w->body[rc].hydro_modulus = hmod;
  c->w->body[rc].hydro_mesh = hmesh;
  return FL_OK;
}


static int parse_joint(const jctx *c, const cJSON *j, const char *path) {
  static const char *const keys[] = {"type", "body_a", "body_b", "anchor_a", "anchor_b", "axis",
                                     "rest_length", "stiffness", "damping", "drive",
                                     "rest_rotation", "axis_b", NULL};
  FL_TRY(check_keys(c, j, path, keys));
  fl_joint jt;
  memset(&jt, 0, sizeof jt);
  int type;
  FL_TRY(get_enum(c, j, "type", path, FL_JOINT_TYPE_CHOICES, -1, &type));
  jt.type = (fl_joint_type)type;
  FL_TRY(get_body_ref(c, j, "body_a", path, 1, &jt.body_a));
  FL_TRY(get_body_ref(c, j, "body_b", path, 0, &jt.body_b));
  FL_TRY(get_vec(c, j, "anchor_a", path, 3, 0, NULL, 0, jt.anchor_a));
  FL_TRY(get_vec(c, j, "anchor_b", path, 3, 0, NULL, 0, jt.anchor_b));
  static const double ez[3] = {0, 0, 1};
  FL_TRY(get_vec(c, j, "axis", path, 3, 0, ez, 0, jt.axis));
  FL_TRY(get_num(c, j, "stiffness", path, 0, INFINITY, 1e-300, INFINITY, 1, &jt.stiffness));
  FL_TRY(get_num(c, j, "damping", path, 0, 0, 0, 1e300, 0, &jt.damping));
  if (type == FL_JOINT_DISTANCE) {
    const cJSON *rl = cJSON_GetObjectItemCaseSensitive(j, "rest_length");
    if (rl) {
      FL_TRY(get_num(c, j, "rest_length", path, 1, 0, 0, 1e300, 0, &jt.rest_length));
    } else {
      // default: the current distance of the anchors
      double pa[3], pb[3];
      const double *an[2] = {jt.anchor_a, jt.anchor_b};
      int bd[2] = {jt.body_a, jt.body_b};
      double *pt[2] = {pa, pb};
      for (int k = 0; k < 2; k++) {
        if (bd[k] < 0) {
          memcpy(pt[k], an[k], 3 * sizeof(double));
        } else {
          const fl_body *bb = &c->w->body[bd[k]];
          fl_quat_rotate(bb->quat, an[k], pt[k]);
          for (int i = 0; i < 3; i++) pt[k][i] += bb->pos[i];
        }
      }
      double dd[3] = {pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]};
      jt.rest_length = fl_v3_norm(dd);
    }
  }
  const cJSON *dr = cJSON_GetObjectItemCaseSensitive(j, "drive");
  if (dr) {
    char p[256];
    sub(p, sizeof p, path, "drive");
    static const char *const dkeys[] = {"velocity", "max_force", NULL};
    FL_TRY(check_keys(c, dr, p, dkeys));
    if (type != FL_JOINT_PRISMATIC && type != FL_JOINT_REVOLUTE)
      return jerr(c, p, "only prismatic and revolute joints take a drive");
    jt.driven = 1;
    FL_TRY(get_num(c, dr, "velocity", p, 1, 0, -1e300, 1e300, 0, &jt.drive_velocity));
    FL_TRY(get_num(c, dr, "max_force", p, 0, INFINITY, 1e-300, INFINITY, 1, &jt.drive_max_force));
  }
  int k = fl_world_add_joint(c->w, &jt);
  if (k < 0) return jfail(c, path, k);
  // a saved rest rotation and axis (a file written mid-run) override the ones from the poses
  fl_joint *J = &c->w->joint[k];
  if (cJSON_GetObjectItemCaseSensitive(j, "rest_rotation"))
    FL_TRY(get_vec(c, j, "rest_rotation", path, 4, 1, NULL, 0, J->qrel));
  if (cJSON_GetObjectItemCaseSensitive(j, "axis_b"))
    FL_TRY(get_vec(c, j, "axis_b", path, 3, 1, NULL, 0, J->axis_b));
  return FL_OK;
}


static int parse_force(const jctx *c, const cJSON *f, const char *path) {
  static const char *const keys[] = {"body", "force", "torque", "ramp", NULL};
  FL_TRY(check_keys(c, f, path, keys));
  fl_force F;
  memset(&F, 0, sizeof F);
  FL_TRY(get_body_ref(c, f, "body", path, 0, &F.body));
  FL_TRY(get_vec(c, f, "force", path, 3, 0, NULL, 0, F.f));
  FL_TRY(get_vec(c, f, "torque", path, 3, 0, NULL, 0, F.tau));
  double r[2] = {0, 0};
  FL_TRY(get_vec(c, f, "ramp", path, 2, 0, NULL, 0, r));
  F.t0 = r[0];
  F.t1 = r[1];
  int rf = fl_world_add_force(c->w, &F);
  if (rf < 0) return jfail(c, path, rf);
  return FL_OK;
}


static int parse_group(const jctx *c, const cJSON *g, const char *path) {
  static const char *const keys[] = {"kind", "bodies", "param", "deformable", NULL};
  FL_TRY(check_keys(c, g, path, keys));
  int kind;
  FL_TRY(get_enum(c, g, "kind", path, "stack|arch|slope|chain|coin|force|press|pose", -1, &kind));
  char p[256];
  sub(p, sizeof p, path, "bodies");
  const cJSON *bl = cJSON_GetObjectItemCaseSensitive(g, "bodies");
  int n = cJSON_IsArray(bl) ? cJSON_GetArraySize(bl) : 0;
  if (n < 1) return jerr(c, p, "expected a non-empty array of body names or indices");
  double par[8] = {0};
  int np = 0;
  const cJSON *pl = cJSON_GetObjectItemCaseSensitive(g, "param");
  if (pl) {
    np = cJSON_IsArray(pl) ? cJSON_GetArraySize(pl) : -1;
    char q[256];
    sub(q, sizeof q, path, "param");
    if (np < 0 || np > 8) return jerr(c, q, "expected an array of at most 8 numbers");
    FL_TRY(get_vec(c, g, "param", path, np, 1, NULL, 0, par));
  }
  // "deformable": true: the bodies are deformable ones, by name (arch groups)
  const cJSON *df = cJSON_GetObjectItemCaseSensitive(g, "deformable");
  if (df && !cJSON_IsBool(df)) {
    char q[256];
    sub(q, sizeof q, path, "deformable");
    return jerr(c, q, "expected true or false");
  }
  int fem = cJSON_IsTrue(df);
  if (fem && kind + 1 != FL_OBS_ARCH) {
    char q[256];
    sub(q, sizeof q, path, "deformable");
    return jerr(c, q, "only arch groups read deformable bodies");
  }
  fl_int *ids = fl_malloc((size_t)n * sizeof(fl_int));
  if (!ids) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", c->file);
  int i = 0, rc = FL_OK;
  for (const cJSON *e = bl->child; e && rc >= 0; e = e->next, i++) {
    char q[256];
    idx(q, sizeof q, p, i);
    int b = -1;
    if (fem) {
      b = cJSON_IsString(e) ? fl_world_find_fem(c->w, e->valuestring) : -1;
      if (b < 0) rc = jerr(c, q, "expected the name of a deformable body");
    } else {
      cJSON *tmp = cJSON_CreateObject();
      cJSON_AddItemReferenceToObject(tmp, "b", (cJSON *)e);
      rc = get_body_ref(c, tmp, "b", "", 0, &b);
      cJSON_Delete(tmp);
      if (rc < 0) rc = jerr(c, q, "expected a body name or an index in [0, %d)", (int)c->w->nbody);
    }
    if (rc >= 0) ids[i] = b;
  }
  if (rc >= 0) {
    int rg = fem ? fl_world_add_fem_group(c->w, (fl_obs_kind)(kind + 1), n, ids, par, np)
                 : fl_world_add_group(c->w, (fl_obs_kind)(kind + 1), n, ids, par, np);
    if (rg < 0) rc = jfail(c, path, rg);
  }
  fl_free(ids);
  return rc;
}


static int parse_limit(const jctx *c, const cJSON *e, const char *path) {
  static const char *const keys[] = {"observable", "min", "max", "label", NULL};
  FL_TRY(check_keys(c, e, path, keys));
  const char *obs = NULL, *label = NULL;
  FL_TRY(get_str(c, e, "observable", path, NULL, &obs));
  if (!obs) {
    char p[256];
    sub(p, sizeof p, path, "observable");
    return jerr(c, p, "missing; expected an observable's name");
  }
  FL_TRY(get_str(c, e, "label", path, "limit", &label));
  double lo, hi;
  FL_TRY(get_num(c, e, "min", path, 0, -INFINITY, -1e300, 1e300, 0, &lo));
  FL_TRY(get_num(c, e, "max", path, 0, INFINITY, -1e300, 1e300, 0, &hi));
  if (!cJSON_GetObjectItemCaseSensitive(e, "min") && !cJSON_GetObjectItemCaseSensitive(e, "max"))
    return jerr(c, path, "expected \"min\", \"max\" or both");
  int k = fl_world_add_limit(c->w, obs, lo, hi, label);
  if (k < 0) return jfail(c, path, k);
  return FL_OK;
}


/* Runs `fn` on every element of the array `key` (optional). */
static int each(const jctx *c, const cJSON *root, const char *key,
                int (*fn)(const jctx *, const cJSON *, const char *)) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!a) return FL_OK;
  if (!cJSON_IsArray(a)) return jerr(c, key, "expected an array");
  int i = 0;
  for (const cJSON *e = a->child; e; e = e->next, i++) {
    char p[256];
    idx(p, sizeof p, key, i);
    FL_TRY(fn(c, e, p));
  }
  return FL_OK;
}


static int parse_pair(const jctx *c, const cJSON *e, const char *path) {
  static const char *const keys[] = {"materials", "mu", "stiffness", "tau_d", NULL};
  FL_TRY(check_keys(c, e, path, keys));
  char p[256];
  sub(p, sizeof p, path, "materials");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "materials");
  if (!cJSON_IsArray(m) || cJSON_GetArraySize(m) != 2 || !cJSON_IsString(m->child) ||
      !cJSON_IsString(m->child->next))
    return jerr(c, p, "expected two material names");
  int ma = fl_world_find_material(c->w, m->child->valuestring);
  int mb = fl_world_find_material(c->w, m->child->next->valuestring);
  if (ma < 0 || mb < 0)
    return jerr(c, p, "no material named '%s'", ma < 0 ? m->child->valuestring
                                                       : m->child->next->valuestring);
  double mu, k, tau;
  FL_TRY(get_num(c, e, "mu", path, 1, 0, 0, 1e6, 0, &mu));
  FL_TRY(get_num(c, e, "stiffness", path, 0, INFINITY, 1e-300, INFINITY, 1, &k));
  FL_TRY(get_num(c, e, "tau_d", path, 0, 0, 0, 1e6, 0, &tau));
  int rp = fl_world_set_pair(c->w, ma, mb, mu, k, tau);
  if (rp < 0) return jfail(c, path, rp);
  return FL_OK;
}


static cJSON *num(double x);
static cJSON *vec(const double *x, int n);

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
    return jerr(c, path, "expected exactly one of \"vertices\" (indices) or \"box\" ({\"lo\", \"hi\"})");
  char p[256];
  if (bx) {
    sub(p, sizeof p, path, "box");
    static const char *const keys[] = {"lo", "hi", NULL};
    FL_TRY(check_keys(c, bx, p, keys));
    double lo[3], hi[3];
    FL_TRY(get_vec(c, bx, "lo", p, 3, 1, NULL, 0, lo));
    FL_TRY(get_vec(c, bx, "hi", p, 3, 1, NULL, 0, hi));
    int rc = fl_mesh_select_box(b->mesh, lo, hi, 1e-9, sel, n);
    if (rc < 0) return jfail(c, p, rc);
    if (*n == 0) return jerr(c, p, "the box selects no vertex of the mesh (rest positions)");
    return FL_OK;
  }
  sub(p, sizeof p, path, "vertices");
  int m = cJSON_IsArray(vl) ? cJSON_GetArraySize(vl) : 0;
  if (m < 1) return jerr(c, p, "expected a non-empty array of vertex indices");
  *sel = fl_malloc((size_t)m * sizeof(fl_int));
  if (!*sel) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", c->file);
  int i = 0;
  for (const cJSON *e = vl->child; e; e = e->next, i++) {
    if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 ||
        e->valuedouble >= b->mesh->nvert) {
      fl_free(*sel);
      *sel = NULL;
      char q[256];
      idx(q, sizeof q, p, i);
      return jerr(c, q, "expected a vertex index in [0, %d)", (int)b->mesh->nvert);
    }
    (*sel)[i] = (fl_int)e->valuedouble;
  }
  *n = m;
  return FL_OK;
}


static int parse_hold(const jctx *c, const cJSON *h, const char *path, int k) {
  static const char *const keys[] = {"vertices", "box", "axes", "velocity", NULL};
  FL_TRY(check_keys(c, h, path, keys));
  const char *ax = "xyz";
  FL_TRY(get_str(c, h, "axes", path, "xyz", &ax));
  int axes = 0;
  for (const char *t = ax; *t; t++) {
    const char *q = strchr("xyz", *t);
    if (!q) {
      char p[256];
      sub(p, sizeof p, path, "axes");
      return jerr(c, p, "'%s': expected a non-empty subset of \"xyz\"", ax);
    }
    axes |= 1 << (q - "xyz");
  }
  if (!axes) {
    char p[256];
    sub(p, sizeof p, path, "axes");
    return jerr(c, p, "expected a non-empty subset of \"xyz\"");
  }
  double vel[3];
  FL_TRY(get_vec(c, h, "velocity", path, 3, 0, NULL, 0, vel));
  fl_int *idx = NULL, n = 0;
  FL_TRY(vertex_set(c, h, path, k, &idx, &n));
  int rc = fl_fem_hold_vertices(c->w, k, n, idx, axes, vel);
  fl_free(idx);
  return rc < 0 ? jfail(c, path, rc) : FL_OK;
}


static int parse_load(const jctx *c, const cJSON *h, const char *path, int k) {
  static const char *const keys[] = {"vertices", "box", "force", NULL};
  FL_TRY(check_keys(c, h, path, keys));
  double f[3];
  FL_TRY(get_vec(c, h, "force", path, 3, 1, NULL, 0, f));
  fl_int *idx = NULL, n = 0;
  FL_TRY(vertex_set(c, h, path, k, &idx, &n));
  const fl_fem_body *b = c->w->fem[k];
  int rc = fl_fem_add_nodal_force(c->w, k, n, idx, f, b->f_t0, b->f_t1);
  fl_free(idx);
  return rc < 0 ? jfail(c, path, rc) : FL_OK;
}


/* The mesh of a deformable body from a generator, a file or inline arrays. */
static int parse_mesh(const jctx *c, const cJSON *m, const char *path, fl_fem_mesh_src *src,
                      fl_mesh **out) {
  static const char *const keys[] = {"type", "size", "cells", "radius", "length", "rings",
                                     "layers", "resolution", "path", "vertices", "tets", NULL};
  FL_TRY(check_keys(c, m, path, keys));
  int type;
  FL_TRY(get_enum(c, m, "type", path, "box|cylinder|sphere|file|inline", -1, &type));
  memset(src, 0, sizeof *src);
  int rc = FL_OK;
  double x;
  switch (type) {
  case 0: {
    double ncell[3];
    static const double one[3] = {1, 1, 1};
    FL_TRY(get_vec(c, m, "size", path, 3, 1, NULL, 1, src->size));
    FL_TRY(get_vec(c, m, "cells", path, 3, 0, one, 1, ncell));
    for (int k = 0; k < 3; k++) {
      if (ncell[k] != floor(ncell[k]) || ncell[k] > 1000) {
        char p[256];
        sub(p, sizeof p, path, "cells");
        return jerr(c, p, "expected 3 integers in [1, 1000]");
      }
      src->n[k] = (int)ncell[k];
    }
    snprintf(src->type, sizeof src->type, "box");
    rc = fl_mesh_box(src->size, src->n[0], src->n[1], src->n[2], out);
    break;
  }
  case 1:
    FL_TRY(get_num(c, m, "radius", path, 1, 0, 1e-300, 1e300, 0, &src->size[0]));
    FL_TRY(get_num(c, m, "length", path, 1, 0, 1e-300, 1e300, 0, &src->size[1]));
    FL_TRY(get_num(c, m, "rings", path, 0, 4, 1, 1000, 0, &x));
    if (x != floor(x)) return jerr(c, path, "rings must be an integer");
    src->n[0] = (int)x;
    FL_TRY(get_num(c, m, "layers", path, 0, 2, 1, 1000, 0, &x));
    if (x != floor(x)) return jerr(c, path, "layers must be an integer");
    src->n[1] = (int)x;
    snprintf(src->type, sizeof src->type, "cylinder");
    rc = fl_mesh_cylinder(src->size[0], src->size[1], src->n[0], src->n[1], out);
    break;
  case 2:
    FL_TRY(get_num(c, m, "radius", path, 1, 0, 1e-300, 1e300, 0, &src->size[0]));
    FL_TRY(get_num(c, m, "resolution", path, 0, 3, 1, 200, 0, &x));
    if (x != floor(x)) return jerr(c, path, "resolution must be an integer");
    src->n[0] = (int)x;
    snprintf(src->type, sizeof src->type, "sphere");
    rc = fl_mesh_sphere(src->size[0], src->n[0], out);
    break;
  case 3: {
    const char *fp = NULL;
    FL_TRY(get_str(c, m, "path", path, NULL, &fp));
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
      return jerr(c, path, "mesh path longer than %d characters", (int)sizeof src->path - 1);
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
    sub(pv, sizeof pv, path, "vertices");
    sub(pt, sizeof pt, path, "tets");
    int nv = cJSON_IsArray(vl) ? cJSON_GetArraySize(vl) : 0;
    int nt = cJSON_IsArray(tl) ? cJSON_GetArraySize(tl) : 0;
    if (nv < 12 || nv % 3) return jerr(c, pv, "expected a flat array of 3 n >= 12 coordinates (m)");
    if (nt < 4 || nt % 4) return jerr(c, pt, "expected a flat array of 4 n >= 4 vertex indices");
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
        idx(q, sizeof q, pv, i);
        rc = jerr(c, q, "expected a finite number");
      } else {
        X[i] = e->valuedouble;
      }
    }
    i = 0;
    for (const cJSON *e = tl->child; e && rc >= 0; e = e->next, i++) {
      if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble)) {
        char q[256];
        idx(q, sizeof q, pt, i);
        rc = jerr(c, q, "expected an integer vertex index");
      } else {
        T[i] = (fl_int)fmax(-1, fmin(e->valuedouble, 2e9));
      }
    }
    if (rc >= 0) rc = fl_mesh_create(nv / 3, X, nt / 4, T, path, out);
    fl_free(X);
    fl_free(T);
    if (rc < 0) return rc == FL_ERR_FORMAT ? rc : jfail(c, path, rc);
    return FL_OK;
  }
  }
  return rc < 0 ? jfail(c, path, rc) : FL_OK;
}


static int parse_deformable(const jctx *c, const cJSON *b, const char *path) {
  static const char *const keys[] = {"name", "kind", "material", "mesh", "model", "density",
                                     "damping", "plane_strain", "mass_matrix", "volume", "position",
                                     "velocity", "hold", "loads", "load_ramp", "positions",
                                     "velocities", NULL};
  FL_TRY(check_keys(c, b, path, keys));
  fl_fem_desc d;
  memset(&d, 0, sizeof d);
  const char *name = NULL;
  if (cJSON_GetObjectItemCaseSensitive(b, "name")) {
    FL_TRY(get_str(c, b, "name", path, NULL, &name));
    if (!name[0] || strlen(name) >= 32) return jerr(c, path, "name must have 1 to 31 characters");
    if (fl_world_find_body(c->w, name) >= 0 || fl_world_find_fem(c->w, name) >= 0)
      return jerr(c, path, "a second body named '%s' (names must be unique)", name);
  }
  d.name = name;
  FL_TRY(material_ref(c, b, "material", path, &d.material));
  char p[256];
  // constitutive model
  const cJSON *mo = cJSON_GetObjectItemCaseSensitive(b, "model");
  sub(p, sizeof p, path, "model");
  if (!mo) return jerr(c, p, "missing; expected {\"type\": %s, ...}", FL_FEM_MODEL_CHOICES);
  static const char *const mkeys[] = {"type", "E", "nu", "c1", "c2", "kappa", NULL};
  FL_TRY(check_keys(c, mo, p, mkeys));
  int model;
  FL_TRY(get_enum(c, mo, "type", p, FL_FEM_MODEL_CHOICES, -1, &model));
  d.model.model = model;
  int mr = model == FL_FEM_MOONEY_RIVLIN;
  FL_TRY(get_num(c, mo, "E", p, !mr, 0, mr ? 0 : 1e-300, 1e300, 0, &d.model.E));
  FL_TRY(get_num(c, mo, "nu", p, !mr, 0, -1, 1, 0, &d.model.nu));
  FL_TRY(get_num(c, mo, "c1", p, mr, 0, 0, 1e300, 0, &d.model.c1));
  FL_TRY(get_num(c, mo, "c2", p, mr, 0, 0, 1e300, 0, &d.model.c2));
  FL_TRY(get_num(c, mo, "kappa", p, mr, 0, 0, 1e300, 0, &d.model.kappa));
  if (fl_fem_material_check(&d.model, p) < 0) return jerr(c, p, "%s", fl_errmsg());
  FL_TRY(get_num(c, b, "density", path, 1, 0, 1e-300, 1e300, 0, &d.density));
  const cJSON *dm = cJSON_GetObjectItemCaseSensitive(b, "damping");
  d.beta = 0.01;
  if (dm) {
    sub(p, sizeof p, path, "damping");
    static const char *const dkeys[] = {"alpha", "beta", NULL};
    FL_TRY(check_keys(c, dm, p, dkeys));
    FL_TRY(get_num(c, dm, "alpha", p, 0, 0, 0, 1e9, 0, &d.alpha));
    FL_TRY(get_num(c, dm, "beta", p, 0, 0.01, 0, 1e9, 0, &d.beta));
  }
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(b, "plane_strain");
  if (ps && !cJSON_IsBool(ps)) {
    sub(p, sizeof p, path, "plane_strain");
    return jerr(c, p, "expected true or false");
  }
  d.plane_strain = cJSON_IsTrue(ps);
  int mm;
  FL_TRY(get_enum(c, b, "mass_matrix", path, "consistent|lumped", 0, &mm));
  d.lumped = mm;
  int vol;
  FL_TRY(get_enum(c, b, "volume", path, "element|nodal", 0, &vol));
  if (vol && !mr) {
    sub(p, sizeof p, path, "volume");
    return jerr(c, p, "\"nodal\" needs the mooney_rivlin model; expected \"element\"");
  }
  d.nodal_volume = vol;
  FL_TRY(get_vec(c, b, "position", path, 3, 0, NULL, 0, d.pos));
  FL_TRY(get_vec(c, b, "velocity", path, 3, 0, NULL, 0, d.vel));
  // mesh
  const cJSON *me = cJSON_GetObjectItemCaseSensitive(b, "mesh");
  sub(p, sizeof p, path, "mesh");
  if (!me) return jerr(c, p, "missing; expected {\"type\": box|cylinder|sphere|file|inline, ...}");
  fl_fem_mesh_src src;
  fl_mesh *mesh = NULL;
  FL_TRY(parse_mesh(c, me, p, &src, &mesh));
  int k = fl_world_add_fem(c->w, &d, &mesh);
  if (k < 0) return jfail(c, path, k);
  fl_fem_body *fb = c->w->fem[k];
  fb->src = src;
  double ramp[2] = {0, 0};
  FL_TRY(get_vec(c, b, "load_ramp", path, 2, 0, NULL, 0, ramp));
  fb->f_t0 = ramp[0];
  fb->f_t1 = ramp[1];
  const cJSON *arr;
  static const char *const lists[] = {"hold", "loads"};
  for (int l = 0; l < 2; l++) {
    arr = cJSON_GetObjectItemCaseSensitive(b, lists[l]);
    if (!arr) continue;
    sub(p, sizeof p, path, lists[l]);
    if (!cJSON_IsArray(arr)) return jerr(c, p, "expected an array");
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
      char q[256];
      idx(q, sizeof q, p, i);
      FL_TRY(l == 0 ? parse_hold(c, e, q, k) : parse_load(c, e, q, k));
    }
  }
  // an exported state: current positions and velocities of every vertex
  static const char *const st[] = {"positions", "velocities"};
  for (int l = 0; l < 2; l++) {
    arr = cJSON_GetObjectItemCaseSensitive(b, st[l]);
    if (!arr) continue;
    FL_TRY(get_vec(c, b, st[l], path, (int)fb->ndof, 1, NULL, 0, l == 0 ? fb->x : fb->v));
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


static cJSON *deformable_json(const fl_world *w, fl_int k) {
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
    cJSON_AddItemToObject(me, "size", vec(s->size, 3));
    double n[3] = {s->n[0], s->n[1], s->n[2]};
    cJSON_AddItemToObject(me, "cells", vec(n, 3));
  } else if (!strcmp(s->type, "cylinder")) {
    cJSON_AddStringToObject(me, "type", "cylinder");
    cJSON_AddItemToObject(me, "radius", num(s->size[0]));
    cJSON_AddItemToObject(me, "length", num(s->size[1]));
    cJSON_AddNumberToObject(me, "rings", s->n[0]);
    cJSON_AddNumberToObject(me, "layers", s->n[1]);
  } else if (!strcmp(s->type, "sphere")) {
    cJSON_AddStringToObject(me, "type", "sphere");
    cJSON_AddItemToObject(me, "radius", num(s->size[0]));
    cJSON_AddNumberToObject(me, "resolution", s->n[0]);
  } else if (!strcmp(s->type, "file")) {
    cJSON_AddStringToObject(me, "type", "file");
    cJSON_AddStringToObject(me, "path", s->path);
  } else {
    // inline: rest positions already include the translation
    inl = 1;
    cJSON_AddStringToObject(me, "type", "inline");
    cJSON_AddItemToObject(me, "vertices", vec(m->X, 3 * (int)m->nvert));
    cJSON *t = cJSON_AddArrayToObject(me, "tets");
    for (fl_int q = 0; q < 4 * m->ntet; q++) cJSON_AddItemToArray(t, cJSON_CreateNumber((double)m->tet[q]));
  }
  cJSON *mo = cJSON_AddObjectToObject(o, "model");
  cJSON_AddStringToObject(mo, "type", fl_fem_model_name(b->model.model));
  if (b->model.model == FL_FEM_MOONEY_RIVLIN) {
    cJSON_AddItemToObject(mo, "c1", num(b->model.c1));
    cJSON_AddItemToObject(mo, "c2", num(b->model.c2));
    cJSON_AddItemToObject(mo, "kappa", num(b->model.kappa));
  } else {
    cJSON_AddItemToObject(mo, "E", num(b->model.E));
    cJSON_AddItemToObject(mo, "nu", num(b->model.nu));
  }
  cJSON_AddItemToObject(o, "density", num(b->density));
  cJSON *dm = cJSON_AddObjectToObject(o, "damping");
  cJSON_AddItemToObject(dm, "alpha", num(b->alpha));
  cJSON_AddItemToObject(dm, "beta", num(b->beta));
  cJSON_AddBoolToObject(o, "plane_strain", b->plane_strain);
  cJSON_AddStringToObject(o, "mass_matrix", b->lumped ? "lumped" : "consistent");
  cJSON_AddStringToObject(o, "volume", b->nodal_volume ? "nodal" : "element");
  double zero[3] = {0, 0, 0};
  cJSON_AddItemToObject(o, "position", vec(inl ? zero : b->pos, 3));
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
        if (axes & (1 << c)) strncat(ax, "xyz" + c, 1);
      }
      double vel[3];
      for (int c = 0; c < 3; c++) vel[c] = (axes & (1 << c)) ? b->v_held[3 * v0 + c] : 0;
      cJSON_AddStringToObject(g, "axes", ax);
      cJSON_AddItemToObject(g, "velocity", vec(vel, 3));
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
      cJSON_AddItemToObject(g, "force", vec(b->f_node + 3 * v0, 3));
    }
    if (ng) {
      cJSON_AddItemToObject(o, "loads", ls);
      double r[2] = {b->f_t0, b->f_t1};
      cJSON_AddItemToObject(o, "load_ramp", vec(r, 2));
    } else {
      cJSON_Delete(ls);
    }
  }
  fl_free(key);
  fl_free(use);
  // the current state when it is not the rest state with one velocity
  if (memcmp(b->x, m->X, (size_t)b->ndof * sizeof(double)))
    cJSON_AddItemToObject(o, "positions", vec(b->x, (int)b->ndof));
  int uniform = 1;
  for (fl_int q = 3; q < b->ndof && uniform; q++) uniform = b->v[q] == b->v[q % 3];
  if (uniform && nv > 0) cJSON_AddItemToObject(o, "velocity", vec(b->v, 3));
  else cJSON_AddItemToObject(o, "velocities", vec(b->v, (int)b->ndof));
  return o;
}

//---- load ----

int fl_world_parse_json(const char *text, const char *where, fl_world **out) {
  *out = NULL;
  const char *endp = NULL;
  cJSON *root = cJSON_ParseWithOpts(text, &endp, 1);
  if (!root) {
    // line and column of the parse error
    int line = 1, col = 1;
    for (const char *t = text; endp && t < endp; t++) {
      if (*t == '\n') {
        line++;
        col = 1;
      } else {
        col++;
      }
    }
    return fl_seterr(FL_ERR_FORMAT, "%s: line %d, column %d: not valid JSON", where, line, col);
  }
  fl_world *w = NULL;
  int rc = fl_world_create(&w);
  jctx c = {where, w};
  static const char *const keys[] = {"format", "version", "name", "gravity", "dt", "duration",
                                     "margin", "speculative", "friction_rule", "materials",
                                     "pairs", "bodies",
                                     "joints", "forces", "observe", "fem", "limits",
                                     "start_separated", NULL};
  if (rc >= 0) rc = check_keys(&c, root, "", keys);
  if (rc >= 0) {
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (fmt && (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "frictionlab-scene") != 0))
      rc = jerr(&c, "format", "expected \"frictionlab-scene\"");
  }
  double ver = 1;
  if (rc >= 0) rc = get_num(&c, root, "version", "", 0, 1, 1, 1, 0, &ver);
  const char *name = "scene";
  if (rc >= 0) rc = get_str(&c, root, "name", "", "scene", &name);
  if (rc >= 0) snprintf(w->name, sizeof w->name, "%s", name);
  static const double g0[3] = {0, 0, -9.81};
  if (rc >= 0) rc = get_vec(&c, root, "gravity", "", 3, 0, g0, 0, w->gravity);
  if (rc >= 0) rc = get_num(&c, root, "dt", "", 1, 0, 1e-12, 10, 0, &w->dt);
  if (rc >= 0) rc = get_num(&c, root, "duration", "", 0, 1, 0, 1e9, 0, &w->duration);
  if (rc >= 0) rc = get_num(&c, root, "margin", "", 0, 1e-3, 0, 1e6, 0, &w->margin);
  if (rc >= 0) rc = get_num(&c, root, "speculative", "", 0, 0, 0, 1, 0, &w->speculative);
  int rule = 0;
  if (rc >= 0) rc = get_enum(&c, root, "friction_rule", "", FL_MU_RULE_CHOICES, 0, &rule);
  if (rc >= 0) w->mu_rule = (fl_mu_rule)rule;
  if (rc >= 0) rc = each(&c, root, "materials", parse_material);
  if (rc >= 0) rc = each(&c, root, "pairs", parse_pair);
  if (rc >= 0) rc = each(&c, root, "bodies", parse_body);
  if (rc >= 0 && w->nbody + w->nfem == 0) rc = jerr(&c, "bodies", "missing or empty; expected at least one body");
  const cJSON *fe = cJSON_GetObjectItemCaseSensitive(root, "fem");
  if (rc >= 0 && fe) {
    static const char *const fkeys[] = {"solve", "allow_inversion", NULL};
    rc = check_keys(&c, fe, "fem", fkeys);
    int solve = FL_FEM_SCHUR;
    if (rc >= 0) rc = get_enum(&c, fe, "solve", "fem", FL_FEM_SOLVE_CHOICES, FL_FEM_SCHUR, &solve);
    w->fem_solve = (fl_fem_solve)solve;
    const cJSON *ai = cJSON_GetObjectItemCaseSensitive(fe, "allow_inversion");
    if (rc >= 0 && ai && !cJSON_IsBool(ai))
      rc = jerr(&c, "fem.allow_inversion", "expected true or false");
    w->fem_allow_inversion = cJSON_IsTrue(ai);
  }
  if (rc >= 0) rc = each(&c, root, "joints", parse_joint);
  if (rc >= 0) rc = each(&c, root, "forces", parse_force);
  if (rc >= 0) rc = each(&c, root, "observe", parse_group);
  if (rc >= 0) rc = each(&c, root, "limits", parse_limit);
  if (rc >= 0 && w->nlimit > 0) {
    // every declared limit must name an observable of this scene
    const fl_obs_limit *lim;
    const fl_int *ix;
    fl_int nl;
    if (fl_world_limits(w, &lim, &ix, &nl) < 0) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", fl_errmsg()); // fl_seterr rewrites the message buffer
      rc = fl_seterr(FL_ERR_FORMAT, "%s: %s", where, msg);
    }
  }
  const cJSON *ss = cJSON_GetObjectItemCaseSensitive(root, "start_separated");
  if (rc >= 0 && ss && !cJSON_IsBool(ss)) rc = jerr(&c, "start_separated", "expected true or false");
  if (rc >= 0) w->start_separated = cJSON_IsTrue(ss);
  cJSON_Delete(root);
  if (rc < 0) {
    fl_world_free(w);
    return rc;
  }
  fl_world_reset_start(w);
  if (w->start_separated) {
    // a scene that declares it starts separated: an overlap is an error, not a warning
    fl_overlap ov;
    int nov = 0;
    rc = fl_world_overlaps(w, FL_OVERLAP_TOL, &ov, 1, &nov);
    if (rc >= 0 && nov > 0)
      rc = jerr(&c, "start_separated", "bodies '%s' and '%s' overlap by %.3g m at t = 0 (%d "
                "overlapping pair%s); expected every body apart (overlaps above %g m)",
                w->body[ov.a].name, w->body[ov.b].name, ov.depth, nov, nov > 1 ? "s" : "",
                FL_OVERLAP_TOL);
    if (rc < 0) {
      fl_world_free(w);
      return rc;
    }
  }
  *out = w;
  return FL_OK;
}


int fl_world_load_json(const char *path, fl_world **out) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return fl_seterr(FL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = fl_malloc(cap);
  int rc = buf ? FL_OK : fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
  while (rc >= 0) {
    if (n + 1 >= cap) {
      char *nb = fl_realloc(buf, cap *= 2);
      if (!nb) {
        rc = fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
        break;
      }
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) rc = fl_seterr(FL_ERR_IO, "%s: read error", path);
      break;
    }
  }
  fclose(f);
  if (rc >= 0) {
    buf[n] = 0;
    rc = fl_world_parse_json(buf, path, out);
  }
  fl_free(buf);
  return rc;
}


//---- save ----

/* A number with 17 significant digits, so that it reads back to the same double (cJSON's own
 * printer accepts a one-ulp difference). */
static cJSON *num(double x) {
  char buf[40];
  if (x == 0) return cJSON_CreateNumber(0);
  snprintf(buf, sizeof buf, "%.17g", x);
  return cJSON_CreateRaw(buf);
}


static cJSON *vec(const double *x, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, num(x[i]));
  return a;
}


static void add_law(cJSON *o, double mu, double k, double tau) {
  cJSON_AddItemToObject(o, "mu", num(mu));
  if (isinf(k)) cJSON_AddStringToObject(o, "stiffness", "inf");
  else cJSON_AddItemToObject(o, "stiffness", num(k));
  cJSON_AddItemToObject(o, "tau_d", num(tau));
}


static cJSON *world_json(const fl_world *w) {
  static const char *const rules[] = {"harmonic", "min", "geometric", "max", "mean"};
  static const char *const kinds[] = {"dynamic", "fixed", "prescribed"};
  static const char *const types[] = {"plane", "sphere", "box", "capsule", "cylinder", "convex"};
  static const char *const jtypes[] = {"weld", "ball", "distance", "prismatic", "revolute"};
  static const char *const gkinds[] = {"", "stack", "arch", "slope", "chain", "coin", "force", "press",
                                      "pose"};
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "format", "frictionlab-scene");
  cJSON_AddNumberToObject(r, "version", 1);
  cJSON_AddStringToObject(r, "name", w->name);
  cJSON_AddItemToObject(r, "gravity", vec(w->gravity, 3));
  cJSON_AddItemToObject(r, "dt", num(w->dt));
  cJSON_AddItemToObject(r, "duration", num(w->duration));
  cJSON_AddItemToObject(r, "margin", num(w->margin));
  if (w->speculative > 0) cJSON_AddItemToObject(r, "speculative", num(w->speculative));
  cJSON_AddStringToObject(r, "friction_rule", rules[w->mu_rule]);
  if (w->start_separated) cJSON_AddBoolToObject(r, "start_separated", 1);
  cJSON *mats = cJSON_AddArrayToObject(r, "materials");
  for (fl_int i = 0; i < w->nmat; i++) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", w->mat[i].name);
    add_law(m, w->mat[i].mu, w->mat[i].stiffness, w->mat[i].tau_d);
    cJSON_AddItemToArray(mats, m);
  }
  if (w->npair) {
    cJSON *pairs = cJSON_AddArrayToObject(r, "pairs");
    for (fl_int i = 0; i < w->npair; i++) {
      cJSON *m = cJSON_CreateObject();
      const char *nm[2] = {w->mat[w->pair[i].mat_a].name, w->mat[w->pair[i].mat_b].name};
      cJSON_AddItemToObject(m, "materials", cJSON_CreateStringArray(nm, 2));
      add_law(m, w->pair[i].mu, w->pair[i].stiffness, w->pair[i].tau_d);
      cJSON_AddItemToArray(pairs, m);
    }
  }
  cJSON *bodies = cJSON_AddArrayToObject(r, "bodies");
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", b->name);
    cJSON_AddStringToObject(o, "kind", kinds[b->kind]);
    cJSON_AddStringToObject(o, "material", w->mat[b->material].name);
    cJSON *s = cJSON_AddObjectToObject(o, "shape");
    cJSON_AddStringToObject(s, "type", types[b->shape.type]);
    switch (b->shape.type) {
    case FL_SHAPE_SPHERE: cJSON_AddItemToObject(s, "size", vec(b->shape.size, 1)); break;
    case FL_SHAPE_BOX: cJSON_AddItemToObject(s, "size", vec(b->shape.size, 3)); break;
    case FL_SHAPE_CAPSULE: cJSON_AddItemToObject(s, "size", vec(b->shape.size, 2)); break;
    case FL_SHAPE_CYLINDER:
      cJSON_AddItemToObject(s, "size", vec(b->shape.size, 2));
      cJSON_AddNumberToObject(s, "segments", b->shape.cyl_segments);
      break;
    case FL_SHAPE_CONVEX: {
      cJSON *v = cJSON_AddArrayToObject(s, "vertices");
      for (fl_int k = 0; k < b->shape.nvert; k++) cJSON_AddItemToArray(v, vec(b->shape.vert + 3 * k, 3));
      break;
    }
    default: break;
    }
    if (b->kind == FL_BODY_DYNAMIC) {
      cJSON_AddItemToObject(o, "mass", num(b->mass));
      cJSON_AddItemToObject(o, "inertia", vec(b->inertia, 9));
    }
    cJSON_AddItemToObject(o, "position", vec(b->pos, 3));
    cJSON_AddItemToObject(o, "orientation", vec(b->quat, 4));
    if (b->kind != FL_BODY_FIXED) {
      cJSON_AddItemToObject(o, "velocity", vec(b->vel, 3));
      cJSON_AddItemToObject(o, "angular_velocity", vec(b->omega, 3));
    }
    if (b->hydro_modulus > 0) {
      cJSON *h = cJSON_AddObjectToObject(o, "hydroelastic");
      cJSON_AddItemToObject(h, "modulus", num(b->hydro_modulus));
      int mesh = b->hydro_mesh;
      if (mesh) cJSON_AddNumberToObject(h, mesh > 0 ? "fan" : "rings", mesh > 0 ? mesh : -mesh);
    }
    cJSON_AddItemToArray(bodies, o);
  }
  for (fl_int k = 0; k < w->nfem; k++) cJSON_AddItemToArray(bodies, deformable_json(w, k));
  if (w->nfem && (w->fem_solve != FL_FEM_SCHUR || w->fem_allow_inversion)) {
    cJSON *fe = cJSON_AddObjectToObject(r, "fem");
    cJSON_AddStringToObject(fe, "solve", w->fem_solve == FL_FEM_FULL ? "full" : "schur");
    cJSON_AddBoolToObject(fe, "allow_inversion", w->fem_allow_inversion);
  }
  if (w->njoint) {
    cJSON *js = cJSON_AddArrayToObject(r, "joints");
    for (fl_int i = 0; i < w->njoint; i++) {
      const fl_joint *j = &w->joint[i];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "type", jtypes[j->type]);
      if (j->body_a < 0) cJSON_AddNullToObject(o, "body_a");
      else cJSON_AddStringToObject(o, "body_a", w->body[j->body_a].name);
      cJSON_AddStringToObject(o, "body_b", w->body[j->body_b].name);
      cJSON_AddItemToObject(o, "anchor_a", vec(j->anchor_a, 3));
      cJSON_AddItemToObject(o, "anchor_b", vec(j->anchor_b, 3));
      cJSON_AddItemToObject(o, "axis", vec(j->axis, 3));
      if (j->type == FL_JOINT_DISTANCE) {
        cJSON_AddItemToObject(o, "rest_length", num(j->rest_length));
        if (isinf(j->stiffness)) cJSON_AddStringToObject(o, "stiffness", "inf");
        else cJSON_AddItemToObject(o, "stiffness", num(j->stiffness));
        cJSON_AddItemToObject(o, "damping", num(j->damping));
      }
      if (j->driven) {
        cJSON *d = cJSON_AddObjectToObject(o, "drive");
        cJSON_AddItemToObject(d, "velocity", num(j->drive_velocity));
        if (isinf(j->drive_max_force)) cJSON_AddStringToObject(d, "max_force", "inf");
        else cJSON_AddItemToObject(d, "max_force", num(j->drive_max_force));
      }
      cJSON_AddItemToObject(o, "rest_rotation", vec(j->qrel, 4));
      cJSON_AddItemToObject(o, "axis_b", vec(j->axis_b, 3));
      cJSON_AddItemToArray(js, o);
    }
  }
  if (w->nforce) {
    cJSON *fs = cJSON_AddArrayToObject(r, "forces");
    for (fl_int i = 0; i < w->nforce; i++) {
      const fl_force *f = &w->force[i];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "body", w->body[f->body].name);
      cJSON_AddItemToObject(o, "force", vec(f->f, 3));
      cJSON_AddItemToObject(o, "torque", vec(f->tau, 3));
      double rr[2] = {f->t0, f->t1};
      cJSON_AddItemToObject(o, "ramp", vec(rr, 2));
      cJSON_AddItemToArray(fs, o);
    }
  }
  if (w->ngroup) {
    cJSON *gs = cJSON_AddArrayToObject(r, "observe");
    for (fl_int i = 0; i < w->ngroup; i++) {
      const fl_obs_group *g = &w->group[i];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "kind", gkinds[g->kind]);
      cJSON *bl = cJSON_AddArrayToObject(o, "bodies");
      int fem = g->deformable;
      for (fl_int k = 0; k < g->n; k++)
        cJSON_AddItemToArray(bl, cJSON_CreateString(fem ? w->fem[g->body[k]]->name
                                                        : w->body[g->body[k]].name));
      if (fem) cJSON_AddTrueToObject(o, "deformable");
      if (g->kind == FL_OBS_SLOPE) cJSON_AddItemToObject(o, "param", vec(g->param, 6));
      if (g->kind == FL_OBS_PRESS) cJSON_AddItemToObject(o, "param", vec(g->param, 6));
      cJSON_AddItemToArray(gs, o);
    }
  }
  if (w->nlimit) {
    cJSON *ls = cJSON_AddArrayToObject(r, "limits");
    for (fl_int i = 0; i < w->nlimit; i++) {
      const fl_obs_limit *l = &w->limit[i];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "observable", l->obs);
      if (isfinite(l->lo)) cJSON_AddItemToObject(o, "min", num(l->lo));
      if (isfinite(l->hi)) cJSON_AddItemToObject(o, "max", num(l->hi));
      cJSON_AddStringToObject(o, "label", l->label);
      cJSON_AddItemToArray(ls, o);
    }
  }
  return r;
}


int fl_world_save_json(const fl_world *w, const char *path) {
  // names must be unique for references by name
  for (fl_int i = 0; i < w->nbody; i++) {
    for (fl_int k = 0; k < i; k++) {
      if (strcmp(w->body[i].name, w->body[k].name) == 0)
        return fl_seterr(FL_ERR_INVAL, "%s: bodies %d and %d share the name '%s'", path, (int)k,
                         (int)i, w->body[i].name);
    }
  }
  cJSON *r = world_json(w);
  char *text = r ? cJSON_Print(r) : NULL;
  cJSON_Delete(r);
  if (!text) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  int rc = FL_OK;
  if (!f) {
    rc = fl_seterr(FL_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno));
  } else {
    size_t n = strlen(text);
    if (fwrite(text, 1, n, f) != n || fputc('\n', f) == EOF) rc = fl_seterr(FL_ERR_IO, "%s: write error", tmp);
    if (fclose(f) != 0 && rc >= 0) rc = fl_seterr(FL_ERR_IO, "%s: write error", tmp);
    if (rc >= 0 && rename(tmp, path) != 0)
      rc = fl_seterr(FL_ERR_IO, "%s: cannot rename into place: %s", path, strerror(errno));
    if (rc < 0) remove(tmp);
  }
  free(text);
  return rc;
}

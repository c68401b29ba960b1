// SPDX-License-Identifier: Apache-2.0
/* scene_json.c: scene files (JSON, parsed with cJSON); the format is docs/scene-format.md.
 * This file reads and writes the world and its rigid parts; scene_json_fem.c the deformable
 * bodies, scene_json_kit.c the checked accessors both use.
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

#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "fl_fem.h"
#include "fl_hydro.h"
#include "scene_json_impl.h"
#include "scenes_impl.h" /* the run parameters' ranges */

//---- sections ----

static int parse_material(const jctx *c, const cJSON *m, const char *path) {
  static const char *const keys[] = {"name", "mu", "stiffness", "tau_d", NULL};
  FL_TRY(fl__json_check_keys(c, m, path, keys));
  const char *name = NULL;
  double mu, k, tau;
  FL_TRY(fl__json_get_str(c, m, "name", path, NULL, &name));
  FL_TRY(fl__json_get_num(c, m, "mu", path, 1, 0, 0, 1e6, 0, &mu));
  FL_TRY(fl__json_get_num(c, m, "stiffness", path, 0, INFINITY, 1e-300, INFINITY, 1, &k));
  FL_TRY(fl__json_get_num(c, m, "tau_d", path, 0, 0, 0, 1e6, 0, &tau));
  FL_TRY(fl__json_name(c, path, "name", name, "material name"));
  int existing = fl_world_find_material(c->w, name);
  if (existing == 0) {
    // "default" redefines the built-in material
    c->w->mat[0].mu = mu;
    c->w->mat[0].stiffness = k;
    c->w->mat[0].tau_d = tau;
    return FL_OK;
  }
  if (existing > 0) return fl__json_jerr(c, path, "material '%s' is defined twice", name);
  int rc = fl_world_add_material(c->w, name, mu, k, tau);
  return rc < 0 ? fl__json_jfail(c, path, rc) : FL_OK;
}


static int parse_shape(const jctx *c, const cJSON *s, const char *path, fl_shape *out) {
  static const char *const keys[] = {"type", "size", "segments", "vertices", NULL};
  FL_TRY(fl__json_check_keys(c, s, path, keys));
  int type;
  FL_TRY(
      fl__json_get_enum(c, s, "type", path, "plane|sphere|box|capsule|cylinder|convex", -1, &type));
  double sz[3];
  int rc = FL_OK;
  char p[256];
  fl__json_sub(p, sizeof p, path, "size");
  switch (type) {
  case 0: rc = fl_shape_make_plane(out); break;
  case 1:
    FL_TRY(fl__json_get_vec(c, s, "size", path, 1, 1, NULL, 1, sz));
    rc = fl_shape_make_sphere(sz[0], out);
    break;
  case 2:
    FL_TRY(fl__json_get_vec(c, s, "size", path, 3, 1, NULL, 1, sz));
    rc = fl_shape_make_box(sz[0], sz[1], sz[2], out);
    break;
  case 3:
    FL_TRY(fl__json_get_vec(c, s, "size", path, 2, 1, NULL, 1, sz));
    rc = fl_shape_make_capsule(sz[0], sz[1], out);
    break;
  case 4: {
    double seg;
    FL_TRY(fl__json_get_vec(c, s, "size", path, 2, 1, NULL, 1, sz));
    FL_TRY(fl__json_get_num(c, s, "segments", path, 0, FL_CYL_SEGMENTS_DEFAULT, 3, 1024, 0, &seg));
    rc = fl_shape_make_cylinder(sz[0], sz[1], (fl_int)seg, out);
    break;
  }
  default: {
    fl__json_sub(p, sizeof p, path, "vertices");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, "vertices");
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
    if (n < 4) return fl__json_jerr(c, p, "expected an array of at least 4 points [x, y, z]");
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
        fl__json_idx(q, sizeof q, p, i);
        return fl__json_jerr(c, q, "expected a point [x, y, z] of 3 finite numbers");
      }
    }
    rc = fl_shape_make_convex(pts, n, out);
    fl_free(pts);
    break;
  }
  }
  if (rc < 0) return fl__json_jfail(c, p, rc);
  return FL_OK;
}


/* "hydroelastic": {"modulus": E_h (Pa), "fan": n | "rings": n} on a cylinder or a sphere
 * (sim/fl_hydro.h; no mesh key: the shape's default) */
static int parse_hydro(const jctx *c, const cJSON *h, const char *path, const fl_shape *s,
                       double *modulus, int *mesh) {
  static const char *const keys[] = {"modulus", "fan", "rings", NULL};
  char p[256];
  fl__json_sub(p, sizeof p, path, "hydroelastic");
  if (!cJSON_IsObject(h))
    return fl__json_jerr(c, p,
                         "expected an object {\"modulus\": E_h (Pa), \"fan\": n or \"rings\": n}");
  FL_TRY(fl__json_check_keys(c, h, p, keys));
  if (s->type != FL_SHAPE_CYLINDER && s->type != FL_SHAPE_SPHERE)
    return fl__json_jerr(
        c, p,
        "hydroelastic patches are built for cylinders and spheres only (cylinders against "
        "planes, spheres against planes and polyhedra)");
  FL_TRY(fl__json_get_num(c, h, "modulus", p, 1, 0, 1, 1e15, 0, modulus));
  const cJSON *fan = cJSON_GetObjectItemCaseSensitive(h, "fan");
  const cJSON *rings = cJSON_GetObjectItemCaseSensitive(h, "rings");
  if (fan && rings) return fl__json_jerr(c, p, "give one of \"fan\" and \"rings\", not both");
  double n = 0;
  if (fan) FL_TRY(fl__json_get_num(c, h, "fan", p, 1, 0, 3, 100000, 0, &n));
  if (rings) FL_TRY(fl__json_get_num(c, h, "rings", p, 1, 0, 1, 200, 0, &n));
  if (n != floor(n)) {
    char q[256];
    fl__json_sub(q, sizeof q, p, fan ? "fan" : "rings");
    return fl__json_jerr(c, q, "%g is not a whole number of %s", n, fan ? "triangles" : "rings");
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
    return fl__json_parse_deformable(c, b, path);
  FL_TRY(fl__json_check_keys(c, b, path, keys));
  const char *name = NULL;
  if (cJSON_GetObjectItemCaseSensitive(b, "name")) {
    FL_TRY(fl__json_get_str(c, b, "name", path, NULL, &name));
    FL_TRY(fl__json_name(c, path, "name", name, "body name"));
    int rb, rf;
    fl__names_find(c, name, &rb, &rf);
    if (rb >= 0 || rf >= 0)
      return fl__json_jerr(c, path, "a second body named '%s' (names must be unique)", name);
  }
  fl_body_desc d;
  memset(&d, 0, sizeof d);
  d.name = name;
  int kind;
  FL_TRY(fl__json_get_enum(c, b, "kind", path, "dynamic|fixed|prescribed|deformable", 0, &kind));
  d.kind = (fl_body_kind)kind;
  FL_TRY(fl__json_material_ref(c, b, "material", path, &d.material));
  static const double qid[4] = {1, 0, 0, 0};
  FL_TRY(fl__json_get_vec(c, b, "position", path, 3, 0, NULL, 0, d.pos));
  FL_TRY(fl__json_get_vec(c, b, "orientation", path, 4, 0, qid, 0, d.quat));
  double qn = sqrt(d.quat[0] * d.quat[0] + d.quat[1] * d.quat[1] + d.quat[2] * d.quat[2] +
                   d.quat[3] * d.quat[3]);
  if (!(qn > 1e-12)) {
    char p[256];
    fl__json_sub(p, sizeof p, path, "orientation");
    return fl__json_jerr(c, p, "expected a nonzero quaternion [w, x, y, z]");
  }
  FL_TRY(fl__json_get_vec(c, b, "velocity", path, 3, 0, NULL, 0, d.vel));
  FL_TRY(fl__json_get_vec(c, b, "angular_velocity", path, 3, 0, NULL, 0, d.omega));
  const cJSON *has_d = cJSON_GetObjectItemCaseSensitive(b, "density");
  const cJSON *has_m = cJSON_GetObjectItemCaseSensitive(b, "mass");
  const cJSON *has_i = cJSON_GetObjectItemCaseSensitive(b, "inertia");
  double inertia[9];
  if (kind == FL_BODY_DYNAMIC) {
    if ((has_d != NULL) == (has_m != NULL))
      return fl__json_jerr(
          c, path, "a dynamic body needs exactly one of \"density\" (kg/m^3) or \"mass\" (kg)");
    if (has_d) FL_TRY(fl__json_get_num(c, b, "density", path, 1, 0, 1e-300, 1e300, 0, &d.density));
    if (has_m) FL_TRY(fl__json_get_num(c, b, "mass", path, 1, 0, 1e-300, 1e300, 0, &d.mass));
    if (has_i) {
      if (!has_m) return fl__json_jerr(c, path, "\"inertia\" goes with \"mass\", not \"density\"");
      char p[256];
      fl__json_sub(p, sizeof p, path, "inertia");
      int n = cJSON_IsArray(has_i) ? cJSON_GetArraySize(has_i) : 0;
      if (n == 3) {
        double diag[3];
        FL_TRY(fl__json_get_vec(c, b, "inertia", path, 3, 1, NULL, 1, diag));
        memset(inertia, 0, sizeof inertia);
        inertia[0] = diag[0];
        inertia[4] = diag[1];
        inertia[8] = diag[2];
      } else if (n == 9) {
        FL_TRY(fl__json_get_vec(c, b, "inertia", path, 9, 1, NULL, 0, inertia));
      } else {
        return fl__json_jerr(c, p,
                             "expected 3 principal moments or 9 entries (kg m^2, body frame)");
      }
      d.inertia = inertia;
    }
  } else if (has_d || has_m || has_i) {
    return fl__json_jerr(c, path, "fixed and prescribed bodies take no density, mass or inertia");
  }
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(b, "shape");
  char p[256];
  fl__json_sub(p, sizeof p, path, "shape");
  if (!sh) return fl__json_jerr(c, p, "missing; expected an object with \"type\"");
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
    return fl__json_jfail(c, path, rc);
  }
  FL_TRY(fl__names_add_last(c, 0));
  c->w->body[rc].hydro_modulus = hmod;
  c->w->body[rc].hydro_mesh = hmesh;
  return FL_OK;
}


static int parse_joint(const jctx *c, const cJSON *j, const char *path) {
  static const char *const keys[] = {"type", "body_a", "body_b", "anchor_a", "anchor_b", "axis",
                                     "rest_length", "stiffness", "damping", "drive",
                                     "rest_rotation", "axis_b", NULL};
  FL_TRY(fl__json_check_keys(c, j, path, keys));
  fl_joint jt;
  memset(&jt, 0, sizeof jt);
  int type;
  FL_TRY(fl__json_get_enum(c, j, "type", path, FL_JOINT_TYPE_CHOICES, -1, &type));
  jt.type = (fl_joint_type)type;
  FL_TRY(fl__json_get_body_ref(c, j, "body_a", path, 1, &jt.body_a));
  FL_TRY(fl__json_get_body_ref(c, j, "body_b", path, 0, &jt.body_b));
  FL_TRY(fl__json_get_vec(c, j, "anchor_a", path, 3, 0, NULL, 0, jt.anchor_a));
  FL_TRY(fl__json_get_vec(c, j, "anchor_b", path, 3, 0, NULL, 0, jt.anchor_b));
  static const double ez[3] = {0, 0, 1};
  FL_TRY(fl__json_get_vec(c, j, "axis", path, 3, 0, ez, 0, jt.axis));
  FL_TRY(
      fl__json_get_num(c, j, "stiffness", path, 0, INFINITY, 1e-300, INFINITY, 1, &jt.stiffness));
  FL_TRY(fl__json_get_num(c, j, "damping", path, 0, 0, 0, 1e300, 0, &jt.damping));
  if (type == FL_JOINT_DISTANCE) {
    const cJSON *rl = cJSON_GetObjectItemCaseSensitive(j, "rest_length");
    if (rl) {
      FL_TRY(fl__json_get_num(c, j, "rest_length", path, 1, 0, 0, 1e300, 0, &jt.rest_length));
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
    fl__json_sub(p, sizeof p, path, "drive");
    static const char *const dkeys[] = {"velocity", "max_force", NULL};
    FL_TRY(fl__json_check_keys(c, dr, p, dkeys));
    if (type != FL_JOINT_PRISMATIC && type != FL_JOINT_REVOLUTE)
      return fl__json_jerr(c, p, "only prismatic and revolute joints take a drive");
    jt.driven = 1;
    FL_TRY(fl__json_get_num(c, dr, "velocity", p, 1, 0, -1e300, 1e300, 0, &jt.drive_velocity));
    FL_TRY(fl__json_get_num(c, dr, "max_force", p, 0, INFINITY, 1e-300, INFINITY, 1,
                            &jt.drive_max_force));
  }
  int k = fl_world_add_joint(c->w, &jt);
  if (k < 0) return fl__json_jfail(c, path, k);
  // a saved rest rotation and axis (a file written mid-run) override the ones from the poses
  fl_joint *J = &c->w->joint[k];
  if (cJSON_GetObjectItemCaseSensitive(j, "rest_rotation"))
    FL_TRY(fl__json_get_vec(c, j, "rest_rotation", path, 4, 1, NULL, 0, J->qrel));
  if (cJSON_GetObjectItemCaseSensitive(j, "axis_b"))
    FL_TRY(fl__json_get_vec(c, j, "axis_b", path, 3, 1, NULL, 0, J->axis_b));
  return FL_OK;
}


static int parse_force(const jctx *c, const cJSON *f, const char *path) {
  static const char *const keys[] = {"body", "force", "torque", "ramp", NULL};
  FL_TRY(fl__json_check_keys(c, f, path, keys));
  fl_force F;
  memset(&F, 0, sizeof F);
  FL_TRY(fl__json_get_body_ref(c, f, "body", path, 0, &F.body));
  FL_TRY(fl__json_get_vec(c, f, "force", path, 3, 0, NULL, 0, F.f));
  FL_TRY(fl__json_get_vec(c, f, "torque", path, 3, 0, NULL, 0, F.tau));
  double r[2] = {0, 0};
  FL_TRY(fl__json_get_vec(c, f, "ramp", path, 2, 0, NULL, 0, r));
  F.t0 = r[0];
  F.t1 = r[1];
  int rf = fl_world_add_force(c->w, &F);
  if (rf < 0) return fl__json_jfail(c, path, rf);
  return FL_OK;
}


static int parse_group(const jctx *c, const cJSON *g, const char *path) {
  static const char *const keys[] = {"kind", "bodies", "param", "deformable", NULL};
  FL_TRY(fl__json_check_keys(c, g, path, keys));
  int kind;
  FL_TRY(fl__json_get_enum(c, g, "kind", path, "stack|arch|slope|chain|coin|force|press|pose", -1,
                           &kind));
  char p[256];
  fl__json_sub(p, sizeof p, path, "bodies");
  const cJSON *bl = cJSON_GetObjectItemCaseSensitive(g, "bodies");
  int n = cJSON_IsArray(bl) ? cJSON_GetArraySize(bl) : 0;
  if (n < 1) return fl__json_jerr(c, p, "expected a non-empty array of body names or indices");
  double par[8] = {0};
  int np = 0;
  const cJSON *pl = cJSON_GetObjectItemCaseSensitive(g, "param");
  if (pl) {
    np = cJSON_IsArray(pl) ? cJSON_GetArraySize(pl) : -1;
    char q[256];
    fl__json_sub(q, sizeof q, path, "param");
    if (np < 0 || np > 8) return fl__json_jerr(c, q, "expected an array of at most 8 numbers");
    FL_TRY(fl__json_get_vec(c, g, "param", path, np, 1, NULL, 0, par));
  }
  // "deformable": true: the bodies are deformable ones, by name (arch groups)
  const cJSON *df = cJSON_GetObjectItemCaseSensitive(g, "deformable");
  if (df && !cJSON_IsBool(df)) {
    char q[256];
    fl__json_sub(q, sizeof q, path, "deformable");
    return fl__json_jerr(c, q, "expected true or false");
  }
  int fem = cJSON_IsTrue(df);
  if (fem && kind + 1 != FL_OBS_ARCH) {
    char q[256];
    fl__json_sub(q, sizeof q, path, "deformable");
    return fl__json_jerr(c, q, "only arch groups read deformable bodies");
  }
  fl_int *ids = fl_malloc((size_t)n * sizeof(fl_int));
  if (!ids) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", c->file);
  int i = 0, rc = FL_OK;
  for (const cJSON *e = bl->child; e && rc >= 0; e = e->next, i++) {
    char q[256];
    fl__json_idx(q, sizeof q, p, i);
    int b = -1;
    if (fem) {
      int rb = -1;
      if (cJSON_IsString(e)) fl__names_find(c, e->valuestring, &rb, &b);
      if (b < 0) rc = fl__json_jerr(c, q, "expected the name of a deformable body");
    } else {
      cJSON *tmp = cJSON_CreateObject();
      cJSON_AddItemReferenceToObject(tmp, "b", (cJSON *)e);
      rc = fl__json_get_body_ref(c, tmp, "b", "", 0, &b);
      cJSON_Delete(tmp);
      if (rc < 0)
        rc = fl__json_jerr(c, q, "expected a body name or an index in [0, %d)", (int)c->w->nbody);
    }
    if (rc >= 0) ids[i] = b;
  }
  if (rc >= 0) {
    int rg = fem ? fl_world_add_fem_group(c->w, (fl_obs_kind)(kind + 1), n, ids, par, np)
                 : fl_world_add_group(c->w, (fl_obs_kind)(kind + 1), n, ids, par, np);
    if (rg < 0) rc = fl__json_jfail(c, path, rg);
  }
  fl_free(ids);
  return rc;
}


static int parse_limit(const jctx *c, const cJSON *e, const char *path) {
  static const char *const keys[] = {"observable", "min", "max", "label", NULL};
  FL_TRY(fl__json_check_keys(c, e, path, keys));
  const char *obs = NULL, *label = NULL;
  FL_TRY(fl__json_get_str(c, e, "observable", path, NULL, &obs));
  if (!obs) {
    char p[256];
    fl__json_sub(p, sizeof p, path, "observable");
    return fl__json_jerr(c, p, "missing; expected an observable's name");
  }
  FL_TRY(fl__json_get_str(c, e, "label", path, "limit", &label));
  double lo, hi;
  FL_TRY(fl__json_get_num(c, e, "min", path, 0, -INFINITY, -1e300, 1e300, 0, &lo));
  FL_TRY(fl__json_get_num(c, e, "max", path, 0, INFINITY, -1e300, 1e300, 0, &hi));
  if (!cJSON_GetObjectItemCaseSensitive(e, "min") && !cJSON_GetObjectItemCaseSensitive(e, "max"))
    return fl__json_jerr(c, path, "expected \"min\", \"max\" or both");
  int k = fl_world_add_limit(c->w, obs, lo, hi, label);
  if (k < 0) return fl__json_jfail(c, path, k);
  return FL_OK;
}


/* Runs `fn` on every element of the array `key` (optional). */
static int each(const jctx *c, const cJSON *root, const char *key,
                int (*fn)(const jctx *, const cJSON *, const char *)) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!a) return FL_OK;
  if (!cJSON_IsArray(a)) return fl__json_jerr(c, key, "expected an array");
  int i = 0;
  for (const cJSON *e = a->child; e; e = e->next, i++) {
    char p[256];
    fl__json_idx(p, sizeof p, key, i);
    FL_TRY(fn(c, e, p));
  }
  return FL_OK;
}


static int parse_pair(const jctx *c, const cJSON *e, const char *path) {
  static const char *const keys[] = {"materials", "mu", "stiffness", "tau_d", NULL};
  FL_TRY(fl__json_check_keys(c, e, path, keys));
  char p[256];
  fl__json_sub(p, sizeof p, path, "materials");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "materials");
  if (!cJSON_IsArray(m) || cJSON_GetArraySize(m) != 2 || !cJSON_IsString(m->child) ||
      !cJSON_IsString(m->child->next))
    return fl__json_jerr(c, p, "expected two material names");
  int ma = fl_world_find_material(c->w, m->child->valuestring);
  int mb = fl_world_find_material(c->w, m->child->next->valuestring);
  if (ma < 0 || mb < 0)
    return fl__json_jerr(c, p, "no material named '%s'", ma < 0 ? m->child->valuestring
                                                       : m->child->next->valuestring);
  double mu, k, tau;
  FL_TRY(fl__json_get_num(c, e, "mu", path, 1, 0, 0, 1e6, 0, &mu));
  FL_TRY(fl__json_get_num(c, e, "stiffness", path, 0, INFINITY, 1e-300, INFINITY, 1, &k));
  FL_TRY(fl__json_get_num(c, e, "tau_d", path, 0, 0, 0, 1e6, 0, &tau));
  int rp = fl_world_set_pair(c->w, ma, mb, mu, k, tau);
  if (rp < 0) return fl__json_jfail(c, path, rp);
  return FL_OK;
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
  fl__names names = {NULL, 0, 0};
  jctx c = {where, w, &names};
  static const char *const keys[] = {"format", "version", "name", "gravity", "dt", "duration",
                                     "margin", "speculative", "max_recovery_speed",
                                     "friction_rule", "materials",
                                     "pairs", "bodies",
                                     "joints", "forces", "observe", "fem", "limits",
                                     "start_separated", NULL};
  if (rc >= 0) rc = fl__json_check_keys(&c, root, "", keys);
  if (rc >= 0) {
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (fmt && (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "frictionlab-scene") != 0))
      rc = fl__json_jerr(&c, "format", "expected \"frictionlab-scene\"");
  }
  double ver = 1;
  if (rc >= 0) rc = fl__json_get_num(&c, root, "version", "", 0, 1, 1, 1, 0, &ver);
  const char *name = "scene";
  if (rc >= 0) rc = fl__json_get_str(&c, root, "name", "", "scene", &name);
  if (rc >= 0) rc = fl__json_name(&c, "", "name", name, "scene name");
  if (rc >= 0) snprintf(w->name, sizeof w->name, "%s", name);
  static const double g0[3] = {0, 0, -9.81};
  if (rc >= 0) rc = fl__json_get_vec(&c, root, "gravity", "", 3, 0, g0, 0, w->gravity);
  if (rc >= 0) rc = fl__json_get_num(&c, root, "dt", "", 1, 0, FL__DT_MIN, FL__DT_MAX, 0, &w->dt);
  if (rc >= 0)
    rc = fl__json_get_num(&c, root, "duration", "", 0, 1, 0, FL__DURATION_MAX, 0, &w->duration);
  if (rc >= 0)
    rc = fl__json_get_num(&c, root, "margin", "", 0, 1e-3, 0, FL__MARGIN_MAX, 0, &w->margin);
  if (rc >= 0) rc = fl__json_get_num(&c, root, "speculative", "", 0, 0, 0, 1, 0, &w->speculative);
  if (rc >= 0)
    rc = fl__json_get_num(&c, root, "max_recovery_speed", "", 0, INFINITY, 0, INFINITY, 1,
                          &w->max_recovery);
  int rule = 0;
  if (rc >= 0) rc = fl__json_get_enum(&c, root, "friction_rule", "", FL_MU_RULE_CHOICES, 0, &rule);
  if (rc >= 0) w->mu_rule = (fl_mu_rule)rule;
  if (rc >= 0) rc = each(&c, root, "materials", parse_material);
  if (rc >= 0) rc = each(&c, root, "pairs", parse_pair);
  if (rc >= 0) rc = each(&c, root, "bodies", parse_body);
  if (rc >= 0 && w->nbody + w->nfem == 0)
    rc = fl__json_jerr(&c, "bodies", "missing or empty; expected at least one body");
  const cJSON *fe = cJSON_GetObjectItemCaseSensitive(root, "fem");
  if (rc >= 0 && fe) {
    static const char *const fkeys[] = {"solve", "allow_inversion", NULL};
    rc = fl__json_check_keys(&c, fe, "fem", fkeys);
    int solve = FL_FEM_SCHUR;
    if (rc >= 0)
      rc = fl__json_get_enum(&c, fe, "solve", "fem", FL_FEM_SOLVE_CHOICES, FL_FEM_SCHUR, &solve);
    w->fem_solve = (fl_fem_solve)solve;
    const cJSON *ai = cJSON_GetObjectItemCaseSensitive(fe, "allow_inversion");
    if (rc >= 0 && ai && !cJSON_IsBool(ai))
      rc = fl__json_jerr(&c, "fem.allow_inversion", "expected true or false");
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
  if (rc >= 0 && ss && !cJSON_IsBool(ss))
    rc = fl__json_jerr(&c, "start_separated", "expected true or false");
  if (rc >= 0) w->start_separated = cJSON_IsTrue(ss);
  cJSON_Delete(root);
  fl__names_free(&names);
  c.names = NULL; // later lookups (start_separated's message) do not need it
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
      rc = fl__json_jerr(&c, "start_separated",
                         "bodies '%s' and '%s' overlap by %.3g m at t = 0 (%d "
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
  FILE *f = NULL;
  // a regular file (a FIFO would block, /dev/zero never end) of at most FL_SCENE_FILE_MAX bytes;
  // cJSON holds about 8 bytes of tree per byte of text
  FL_TRY(fl_open_input(path, "scene file (.json)", FL_SCENE_FILE_MAX, &f));
  {
    struct stat st;
    double len = fstat(fileno(f), &st) == 0 ? (double)st.st_size : 0;
    if (fl_mem_check(path, "parsing the scene file", 9.0 * len) < 0) {
      fclose(f);
      return fl_errcode();
    }
  }
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

static void add_law(cJSON *o, double mu, double k, double tau) {
  cJSON_AddItemToObject(o, "mu", fl__json_num(mu));
  if (isinf(k)) cJSON_AddStringToObject(o, "stiffness", "inf");
  else cJSON_AddItemToObject(o, "stiffness", fl__json_num(k));
  cJSON_AddItemToObject(o, "tau_d", fl__json_num(tau));
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
  cJSON_AddItemToObject(r, "gravity", fl__json_vec(w->gravity, 3));
  cJSON_AddItemToObject(r, "dt", fl__json_num(w->dt));
  cJSON_AddItemToObject(r, "duration", fl__json_num(w->duration));
  cJSON_AddItemToObject(r, "margin", fl__json_num(w->margin));
  if (w->speculative > 0) cJSON_AddItemToObject(r, "speculative", fl__json_num(w->speculative));
  if (isfinite(w->max_recovery))
    cJSON_AddItemToObject(r, "max_recovery_speed", fl__json_num(w->max_recovery));
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
    case FL_SHAPE_SPHERE: cJSON_AddItemToObject(s, "size", fl__json_vec(b->shape.size, 1)); break;
    case FL_SHAPE_BOX: cJSON_AddItemToObject(s, "size", fl__json_vec(b->shape.size, 3)); break;
    case FL_SHAPE_CAPSULE: cJSON_AddItemToObject(s, "size", fl__json_vec(b->shape.size, 2)); break;
    case FL_SHAPE_CYLINDER:
      cJSON_AddItemToObject(s, "size", fl__json_vec(b->shape.size, 2));
      cJSON_AddNumberToObject(s, "segments", b->shape.cyl_segments);
      break;
    case FL_SHAPE_CONVEX: {
      cJSON *v = cJSON_AddArrayToObject(s, "vertices");
      for (fl_int k = 0; k < b->shape.nvert; k++)
        cJSON_AddItemToArray(v, fl__json_vec(b->shape.vert + 3 * k, 3));
      break;
    }
    default: break;
    }
    if (b->kind == FL_BODY_DYNAMIC) {
      cJSON_AddItemToObject(o, "mass", fl__json_num(b->mass));
      cJSON_AddItemToObject(o, "inertia", fl__json_vec(b->inertia, 9));
    }
    cJSON_AddItemToObject(o, "position", fl__json_vec(b->pos, 3));
    cJSON_AddItemToObject(o, "orientation", fl__json_vec(b->quat, 4));
    if (b->kind != FL_BODY_FIXED) {
      cJSON_AddItemToObject(o, "velocity", fl__json_vec(b->vel, 3));
      cJSON_AddItemToObject(o, "angular_velocity", fl__json_vec(b->omega, 3));
    }
    if (b->hydro_modulus > 0) {
      cJSON *h = cJSON_AddObjectToObject(o, "hydroelastic");
      cJSON_AddItemToObject(h, "modulus", fl__json_num(b->hydro_modulus));
      int mesh = b->hydro_mesh;
      if (mesh) cJSON_AddNumberToObject(h, mesh > 0 ? "fan" : "rings", mesh > 0 ? mesh : -mesh);
    }
    cJSON_AddItemToArray(bodies, o);
  }
  for (fl_int k = 0; k < w->nfem; k++) cJSON_AddItemToArray(bodies, fl__json_deformable(w, k));
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
      cJSON_AddItemToObject(o, "anchor_a", fl__json_vec(j->anchor_a, 3));
      cJSON_AddItemToObject(o, "anchor_b", fl__json_vec(j->anchor_b, 3));
      cJSON_AddItemToObject(o, "axis", fl__json_vec(j->axis, 3));
      if (j->type == FL_JOINT_DISTANCE) {
        cJSON_AddItemToObject(o, "rest_length", fl__json_num(j->rest_length));
        if (isinf(j->stiffness)) cJSON_AddStringToObject(o, "stiffness", "inf");
        else cJSON_AddItemToObject(o, "stiffness", fl__json_num(j->stiffness));
        cJSON_AddItemToObject(o, "damping", fl__json_num(j->damping));
      }
      if (j->driven) {
        cJSON *d = cJSON_AddObjectToObject(o, "drive");
        cJSON_AddItemToObject(d, "velocity", fl__json_num(j->drive_velocity));
        if (isinf(j->drive_max_force)) cJSON_AddStringToObject(d, "max_force", "inf");
        else cJSON_AddItemToObject(d, "max_force", fl__json_num(j->drive_max_force));
      }
      cJSON_AddItemToObject(o, "rest_rotation", fl__json_vec(j->qrel, 4));
      cJSON_AddItemToObject(o, "axis_b", fl__json_vec(j->axis_b, 3));
      cJSON_AddItemToArray(js, o);
    }
  }
  if (w->nforce) {
    cJSON *fs = cJSON_AddArrayToObject(r, "forces");
    for (fl_int i = 0; i < w->nforce; i++) {
      const fl_force *f = &w->force[i];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "body", w->body[f->body].name);
      cJSON_AddItemToObject(o, "force", fl__json_vec(f->f, 3));
      cJSON_AddItemToObject(o, "torque", fl__json_vec(f->tau, 3));
      double rr[2] = {f->t0, f->t1};
      cJSON_AddItemToObject(o, "ramp", fl__json_vec(rr, 2));
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
      if (g->kind == FL_OBS_SLOPE) cJSON_AddItemToObject(o, "param", fl__json_vec(g->param, 6));
      if (g->kind == FL_OBS_PRESS) cJSON_AddItemToObject(o, "param", fl__json_vec(g->param, 6));
      cJSON_AddItemToArray(gs, o);
    }
  }
  if (w->nlimit) {
    cJSON *ls = cJSON_AddArrayToObject(r, "limits");
    for (fl_int i = 0; i < w->nlimit; i++) {
      const fl_obs_limit *l = &w->limit[i];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "observable", l->obs);
      if (isfinite(l->lo)) cJSON_AddItemToObject(o, "min", fl__json_num(l->lo));
      if (isfinite(l->hi)) cJSON_AddItemToObject(o, "max", fl__json_num(l->hi));
      cJSON_AddStringToObject(o, "label", l->label);
      cJSON_AddItemToArray(ls, o);
    }
  }
  return r;
}


static int cmp_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}


int fl_world_save_json(const fl_world *w, const char *path) {
  // names must be unique for references by name: sorted, then neighbours compared (a pairwise
  // check was quadratic in bodies)
  if (w->nbody > 1) {
    const char **nm = fl_malloc(sizeof *nm * (size_t)w->nbody);
    if (!nm) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
    for (fl_int i = 0; i < w->nbody; i++) nm[i] = w->body[i].name;
    qsort(nm, (size_t)w->nbody, sizeof *nm, cmp_name);
    for (fl_int i = 1; i < w->nbody; i++) {
      if (strcmp(nm[i], nm[i - 1]) == 0) {
        int rc = fl_seterr(FL_ERR_INVAL, "%s: two bodies share the name '%s'", path, nm[i]);
        fl_free(nm);
        return rc;
      }
    }
    fl_free(nm);
  }
  fl__json_nonfinite = 0;
  cJSON *r = world_json(w);
  if (r && fl__json_nonfinite > 0) {
    cJSON_Delete(r);
    return fl_seterr(FL_ERR_INVAL, "%s: the scene holds %ld numbers that are inf or nan (a state "
                     "that blew up?); JSON has no such numbers: not written", path,
                     fl__json_nonfinite);
  }
  char *text = r ? cJSON_Print(r) : NULL;
  cJSON_Delete(r);
  if (!text) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
  // never onto a device, FIFO, symlink or folder; through a fresh temporary file (issue 51)
  fl_outfile o;
  int rc = fl_outfile_open(&o, path, "scene file");
  if (rc >= 0) {
    size_t n = strlen(text);
    if (fwrite(text, 1, n, o.f) != n || fputc('\n', o.f) == EOF) {
      fl_outfile_abort(&o);
      rc = fl_seterr(FL_ERR_IO, "%s: write error", path);
    } else {
      rc = fl_outfile_commit(&o);
    }
  }
  free(text);
  return rc;
}

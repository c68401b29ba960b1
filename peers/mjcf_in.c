// SPDX-License-Identifier: Apache-2.0
/* mjcf_in.c: a FrictionLab world from an MJCF model, read by MuJoCo's own parser (fl_peer.h,
 * fl_world_from_mjcf; docs/mjcf.md).
 *
 * mj_loadXML compiles the model (defaults, classes, includes, mesh files, inertias from geoms);
 * the world is built from the compiled mjModel and the poses of mj_kinematics at qpos0:
 *   - a body with one free joint, child of the world, is a dynamic body: its one colliding geom
 *     is its shape, placed at the geom's pose; its mass is body_mass and its inertia body_inertia
 *     in the inertial frame, turned into the geom's frame (the centre of mass must be the geom's
 *     centre: FrictionLab's shapes are centred on it);
 *   - a body without joints, child of the world, and every geom of the world body, are fixed
 *     bodies, one per geom;
 *   - geoms: plane, sphere, capsule, cylinder, box as they are; a mesh as the convex hull of its
 *     vertices (what MuJoCo collides too); a geom with contype = conaffinity = 0 (drawn only)
 *     is left out;
 *   - friction: the sliding coefficient of each geom is its material, combined by the max rule
 *     (MuJoCo's); contacts are rigid (solref, solimp are MuJoCo's soft-contact model);
 *   - gravity and time step from <option>.
 * Everything else that changes the motion is refused, naming the element: tendons, actuators,
 * equality constraints, explicit contact pairs and exclusions, joints other than one free
 * joint, bodies nested in bodies, mocap bodies, height fields, ellipsoids, torsional or rolling
 * friction (condim > 3), collision filtering by contype/conaffinity, a body of several geoms.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/fl_world.h"
#include "fl_peer.h"

#ifdef FL_HAVE_MUJOCO
#include <setjmp.h>

#include <mujoco/mujoco.h>

static const char *geom_type_name(int t) {
  static const char *const n[] = {"plane", "hfield", "sphere", "capsule", "ellipsoid",
                                  "cylinder", "box", "mesh"};
  return t >= 0 && t < 8 ? n[t] : "unknown";
}

static const char *joint_type_name(int t) {
  static const char *const n[] = {"free", "ball", "slide", "hinge"};
  return t >= 0 && t < 4 ? n[t] : "unknown";
}

/* "<kind> 'name'" or "<kind> #id" for messages */
static const char *label(const mjModel *m, int type, int id, const char *kind, char *buf,
                         size_t n) {
  const char *nm = mj_id2name(m, type, id);
  if (nm && nm[0]) snprintf(buf, n, "%s '%s'", kind, nm);
  else snprintf(buf, n, "%s #%d", kind, id);
  return buf;
}

static char load_msg[512];
static jmp_buf load_jump;
static void load_error(const char *msg) {
  snprintf(load_msg, sizeof load_msg, "%s", msg);
  longjmp(load_jump, 1);
}
static void load_warning(const char *msg) { snprintf(load_msg, sizeof load_msg, "%s", msg); }

/* the model's features FrictionLab cannot represent, the first one named */
static int refuse_model(const mjModel *m, const char *path) {
  char b[160];
  if (m->ntendon > 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s: tendons are not represented in FrictionLab",
                     path, label(m, mjOBJ_TENDON, 0, "tendon", b, sizeof b));
  if (m->nu > 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s: actuators are not represented in FrictionLab",
                     path, label(m, mjOBJ_ACTUATOR, 0, "actuator", b, sizeof b));
  if (m->neq > 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s: equality constraints are not represented in "
                     "FrictionLab", path, label(m, mjOBJ_EQUALITY, 0, "equality", b, sizeof b));
  if (m->npair > 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: contact pair #0: explicit <contact><pair> is not "
                     "represented (FrictionLab collides every pair of bodies)", path);
  if (m->nexclude > 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: contact exclude #0: <contact><exclude> is not "
                     "represented (FrictionLab collides every pair of bodies)", path);
  for (int j = 0; j < m->njnt; j++) {
    int body = m->jnt_bodyid[j];
    char bb[160];
    if (m->jnt_type[j] != mjJNT_FREE || m->body_jntnum[body] != 1)
      return fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s (%s) of %s: FrictionLab's rigid bodies are "
                       "free (one free joint) or fixed; articulated bodies are not represented",
                       path, label(m, mjOBJ_JOINT, j, "joint", b, sizeof b),
                       joint_type_name(m->jnt_type[j]), label(m, mjOBJ_BODY, body, "body", bb, sizeof bb));
  }
  for (int i = 1; i < m->nbody; i++) {
    char pb[160];
    if (m->body_parentid[i] != 0)
      return fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s is nested in %s: FrictionLab's bodies are free "
                       "or fixed, each with one shape", path, label(m, mjOBJ_BODY, i, "body", b, sizeof b),
                       label(m, mjOBJ_BODY, m->body_parentid[i], "body", pb, sizeof pb));
    if (m->body_mocapid[i] >= 0)
      return fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s: mocap bodies are not represented", path,
                       label(m, mjOBJ_BODY, i, "body", b, sizeof b));
  }
  for (int g = 0; g < m->ngeom; g++) {
    int t = m->geom_type[g];
    int drawn_only = m->geom_contype[g] == 0 && m->geom_conaffinity[g] == 0;
    if (drawn_only) continue;
    label(m, mjOBJ_GEOM, g, "geom", b, sizeof b);
    if (t == mjGEOM_HFIELD || t == mjGEOM_ELLIPSOID || t > mjGEOM_MESH)
      return fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s: type %s is not a FrictionLab shape (plane, "
                       "sphere, capsule, cylinder, box, mesh)", path, b, geom_type_name(t));
    if (m->geom_condim[g] > 3)
      return fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s: condim %d (torsional or rolling friction) is "
                       "not represented: FrictionLab has Coulomb sliding friction", path, b,
                       m->geom_condim[g]);
    if (m->geom_contype[g] != 1 || m->geom_conaffinity[g] != 1)
      return fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s: contype %d, conaffinity %d: collision "
                       "filtering is not represented (FrictionLab collides every pair)", path, b,
                       m->geom_contype[g], m->geom_conaffinity[g]);
  }
  return FL_OK;
}

/* the shape of geom g (body frame = the geom's frame) */
static int geom_shape(const mjModel *m, int g, const char *path, fl_shape *s) {
  const mjtNum *sz = m->geom_size + 3 * g;
  switch (m->geom_type[g]) {
  case mjGEOM_PLANE: return fl_shape_make_plane(s);
  case mjGEOM_SPHERE: return fl_shape_make_sphere(sz[0], s);
  case mjGEOM_CAPSULE: return fl_shape_make_capsule(sz[0], sz[1], s);
  case mjGEOM_CYLINDER: return fl_shape_make_cylinder(sz[0], sz[1], 0, s);
  case mjGEOM_BOX: return fl_shape_make_box(sz[0], sz[1], sz[2], s);
  case mjGEOM_MESH: {
    int id = m->geom_dataid[g], n = m->mesh_vertnum[id];
    double *pts = fl_malloc((size_t)(3 * n + 1) * sizeof *pts);
    if (!pts) return fl_seterr(FL_ERR_NOMEM, "%s: mesh of %d vertices: out of memory", path, n);
    const float *v = m->mesh_vert + 3 * m->mesh_vertadr[id];
    for (int k = 0; k < 3 * n; k++) pts[k] = v[k];
    int rc = fl_shape_make_convex(pts, n, s);
    fl_free(pts);
    return rc;
  }
  default: return fl_seterr(FL_ERR_UNSUPPORTED, "%s: geom type %d", path, m->geom_type[g]);
  }
}

/* the world's material for sliding friction mu (rigid), made on first use */
static int material_for(fl_world *w, double mu) {
  char name[32];
  // an identifier (fl_name_check): "mu_0.5", "mu_1e-06" ('+' of an exponent dropped)
  snprintf(name, sizeof name, "mu_%.9g", mu);
  for (char *q = name; *q; q++)
    if (*q == '+') memmove(q, q + 1, strlen(q));
  int k = fl_world_find_material(w, name);
  return k >= 0 ? k : fl_world_add_material(w, name, mu, INFINITY, 0);
}

/* applies "key=value" settings: the run parameters a scene file takes (fl_scene_run_params) */
static int apply_settings(fl_world *w, int nset, const char *const *set, const char *path) {
  return fl_scene_file_apply(w, path, nset, set);
}

int fl_world_from_mjcf(const char *path, int nset, const char *const *set, fl_world **out) {
  if (!out || !path) return fl_seterr(FL_ERR_INVAL, "fl_world_from_mjcf: NULL argument");
  *out = NULL;
  // a regular file of at most 1 GiB (MuJoCo's parser would block on a FIFO)
  FL_TRY(fl_check_input(path, "MJCF model (.xml)", 1073741824.0));
  // MuJoCo's errors end the process unless caught: jump back here, then restore the handlers
  void (*old_error)(const char *) = mju_user_error;
  void (*old_warning)(const char *) = mju_user_warning;
  char err[1024] = "";
  mjModel *volatile m = NULL;
  mjData *volatile d = NULL;
  load_msg[0] = 0;
  mju_user_error = load_error;
  mju_user_warning = load_warning;
  if (setjmp(load_jump)) {
    snprintf(err, sizeof err, "%s", load_msg);
  } else {
    m = mj_loadXML(path, NULL, err, sizeof err);
    if (m) {
      d = mj_makeData(m);
      if (d) mj_kinematics(m, d);
    }
  }
  mju_user_error = old_error;
  mju_user_warning = old_warning;
  if (!m || !d) {
    if (d) mj_deleteData(d);
    if (m) mj_deleteModel(m);
    return fl_seterr(FL_ERR_FORMAT, "%s: MuJoCo's parser refused the model: %s", path,
                     err[0] ? err : load_msg[0] ? load_msg : "(no message)");
  }
  fl_world *w = NULL;
  int rc = refuse_model(m, path);
  if (rc >= 0) rc = fl_world_create(&w);
  if (rc >= 0) {
    const char *base = strrchr(path, '/');
    snprintf(w->name, sizeof w->name, "%s", base ? base + 1 : path);
    char *dot = strrchr(w->name, '.');
    if (dot) *dot = 0;
    // the scene's name goes into file names: an identifier (fl_name_check), other bytes as '_'
    for (char *q = w->name; *q; q++) {
      unsigned char ch = (unsigned char)*q;
      if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '_' || ch == '-' || (ch == '.' && q != w->name)))
        *q = '_';
    }
    w->name[FL_NAME_MAX] = 0;
    w->dt = m->opt.timestep;
    for (int k = 0; k < 3; k++) w->gravity[k] = m->opt.gravity[k];
    w->mu_rule = FL_MU_MAX; // MuJoCo's rule for geoms that meet
    rc = apply_settings(w, nset, set, path);
  }
  for (int g = 0; rc >= 0 && g < m->ngeom; g++) {
    if (m->geom_contype[g] == 0 && m->geom_conaffinity[g] == 0) continue; // drawn only
    int body = m->geom_bodyid[g];
    int dynamic = body > 0 && m->body_jntnum[body] == 1;
    char bn[160], gn[160];
    label(m, mjOBJ_BODY, body, "body", bn, sizeof bn);
    label(m, mjOBJ_GEOM, g, "geom", gn, sizeof gn);
    // one colliding geom per body that is not the world
    if (body > 0) {
      int ncol = 0;
      for (int k = 0; k < m->body_geomnum[body]; k++) {
        int gg = m->body_geomadr[body] + k;
        ncol += !(m->geom_contype[gg] == 0 && m->geom_conaffinity[gg] == 0);
      }
      if (ncol > 1) {
        rc = fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s has %d colliding geoms: a FrictionLab body has "
                       "one shape", path, bn, ncol);
        break;
      }
    }
    if (dynamic && m->geom_type[g] == mjGEOM_PLANE) {
      rc = fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s: a plane on the free %s", path, gn, bn);
      break;
    }
    // the geom's world pose
    double pos[3], quat[4];
    for (int k = 0; k < 3; k++) pos[k] = d->geom_xpos[3 * g + k];
    {
      double R[9];
      for (int k = 0; k < 9; k++) R[k] = d->geom_xmat[9 * g + k];
      mjtNum q[4], Rm[9];
      for (int k = 0; k < 9; k++) Rm[k] = R[k];
      mju_mat2Quat(q, Rm);
      for (int k = 0; k < 4; k++) quat[k] = q[k];
    }
    fl_shape shape;
    memset(&shape, 0, sizeof shape);
    rc = geom_shape(m, g, path, &shape);
    if (rc < 0) {
      fl_seterr(rc, "%s: %s (%s): %s", path, gn, geom_type_name(m->geom_type[g]), fl_errmsg());
      break;
    }
    fl_body_desc bd;
    memset(&bd, 0, sizeof bd);
    const char *nm = mj_id2name(m, mjOBJ_GEOM, g);
    if (!nm || !nm[0]) nm = body > 0 ? mj_id2name(m, mjOBJ_BODY, body) : NULL;
    bd.name = nm && nm[0] ? nm : NULL;
    bd.kind = dynamic ? FL_BODY_DYNAMIC : FL_BODY_FIXED;
    double mu = m->geom_condim[g] == 1 ? 0 : m->geom_friction[3 * g];
    rc = material_for(w, mu);
    if (rc < 0) {
      fl_shape_free(&shape);
      break;
    }
    bd.material = rc;
    for (int k = 0; k < 3; k++) bd.pos[k] = pos[k];
    for (int k = 0; k < 4; k++) bd.quat[k] = quat[k];
    double inertia[9];
    if (dynamic) {
      // the centre of mass must be the geom's centre (a mesh's frame is its centre of mass in
      // MuJoCo's compiled model)
      double ipos[3], gpos[3], dist = 0;
      for (int k = 0; k < 3; k++) {
        ipos[k] = d->xipos[3 * body + k];
        gpos[k] = pos[k];
        dist += (ipos[k] - gpos[k]) * (ipos[k] - gpos[k]);
      }
      double size = fmax(m->geom_rbound[g], 1e-300);
      if (sqrt(dist) > 1e-9 * size && m->geom_type[g] != mjGEOM_MESH) {
        fl_shape_free(&shape);
        rc = fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s: its centre of mass lies %.3g m from its "
                       "geom's centre; FrictionLab's shapes are centred on it", path, bn,
                       sqrt(dist));
        break;
      }
      // I_geom = Rg^T Ri diag(I) Ri^T Rg (Ri, Rg: the inertial and the geom frame in the world)
      const mjtNum *Ri = d->ximat + 9 * body, *Rg = d->geom_xmat + 9 * g;
      const mjtNum *Id = m->body_inertia + 3 * body;
      double Rr[9]; // Rg^T Ri
      for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) {
          double s = 0;
          for (int k = 0; k < 3; k++) s += Rg[3 * k + a] * Ri[3 * k + c];
          Rr[3 * a + c] = s;
        }
      for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) {
          double s = 0;
          for (int k = 0; k < 3; k++) s += Rr[3 * a + k] * Id[k] * Rr[3 * c + k];
          inertia[3 * a + c] = s;
        }
      bd.mass = m->body_mass[body];
      bd.inertia = inertia;
      if (!(bd.mass > 0)) {
        fl_shape_free(&shape);
        rc = fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s: a free body of mass %g", path, bn, bd.mass);
        break;
      }
    }
    rc = fl_world_add_body(w, &bd, &shape);
    fl_shape_free(&shape);
    if (rc < 0) fl_seterr(rc, "%s: %s: %s", path, gn, fl_errmsg());
  }
  mj_deleteData(d);
  mj_deleteModel(m);
  if (rc < 0) {
    fl_world_free(w);
    return rc;
  }
  fl_world_reset_start(w);
  *out = w;
  return FL_OK;
}

#else /* no MuJoCo */

int fl_world_from_mjcf(const char *path, int nset, const char *const *set, fl_world **out) {
  if (out) *out = NULL;
  return fl_seterr(FL_ERR_UNSUPPORTED, "%s: reading MJCF needs MuJoCo's parser; this build has "
                   "no MuJoCo (libmujoco-dev)", path ? path : "(null)");
}

#endif

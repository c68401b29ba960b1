// SPDX-License-Identifier: Apache-2.0
/* world.c: bodies, materials and their combination rules, joints, forces, observable groups.
 *
 * The world keeps growable flat arrays of bodies, materials, joints, forces and observable
 * groups. Bodies own their shapes. See fl_world.h for the conventions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fl_fem.h"
#include "world_impl.h"

//---- growable arrays ----

//---- materials ----

static double combine_mu(double a, double b, fl_mu_rule rule) {
  switch (rule) {
  case FL_MU_MIN: return a < b ? a : b;
  case FL_MU_GEOMETRIC: return sqrt(a * b);
  case FL_MU_MAX: return a > b ? a : b;
  case FL_MU_MEAN: return 0.5 * (a + b);
  case FL_MU_HARMONIC:
  default: return (a + b > 0) ? 2 * a * b / (a + b) : 0;
  }
}


void fl_material_combine(const fl_material *a, const fl_material *b, fl_mu_rule rule, double *mu,
                         double *stiffness, double *tau_d) {
  if (mu) *mu = combine_mu(a->mu, b->mu, rule);
  // springs in series; a rigid side leaves the other's stiffness
  if (stiffness) {
    double ka = a->stiffness, kb = b->stiffness;
    if (isinf(ka)) *stiffness = kb;
    else if (isinf(kb)) *stiffness = ka;
    else *stiffness = ka * kb / (ka + kb);
  }
  if (tau_d) *tau_d = a->tau_d + b->tau_d;
}


static int check_law(const char *what, double mu, double k, double tau) {
  if (!(mu >= 0) || !isfinite(mu))
    return fl_seterr(FL_ERR_INVAL, "%s: mu = %g, expected a finite number >= 0", what, mu);
  if (!(k > 0))
    return fl_seterr(FL_ERR_INVAL, "%s: stiffness = %g, expected > 0 (inf = rigid)", what, k);
  if (!(tau >= 0) || !isfinite(tau))
    return fl_seterr(FL_ERR_INVAL, "%s: tau_d = %g, expected a finite number >= 0", what, tau);
  return FL_OK;
}


int fl_world_add_material(fl_world *w, const char *name, double mu, double stiffness,
                          double tau_d) {
  FL_TRY(check_law(name ? name : "material", mu, stiffness, tau_d));
  if (name) FL_TRY(fl_name_check(name, "fl_world_add_material", "material name"));
  FL_TRY(fl_grow((void **)&w->mat, &w->cap_mat, w->nmat + 1, sizeof(fl_material), "world"));
  fl_material *m = &w->mat[w->nmat];
  snprintf(m->name, sizeof m->name, "%s", name ? name : "");
  if (!name) snprintf(m->name, sizeof m->name, "mat%d", (int)w->nmat);
  m->mu = mu;
  m->stiffness = stiffness;
  m->tau_d = tau_d;
  return w->nmat++;
}


int fl_world_find_material(const fl_world *w, const char *name) {
  for (fl_int i = 0; i < w->nmat; i++) {
    if (strcmp(w->mat[i].name, name) == 0) return i;
  }
  return -1;
}


int fl_world_set_pair(fl_world *w, int mat_a, int mat_b, double mu, double stiffness,
                      double tau_d) {
  if (mat_a < 0 || mat_a >= w->nmat || mat_b < 0 || mat_b >= w->nmat)
    return fl_seterr(FL_ERR_INVAL, "pair law: material indices %d, %d out of range [0, %d)",
                     mat_a, mat_b, (int)w->nmat);
  FL_TRY(check_law("pair law", mu, stiffness, tau_d));
  for (fl_int i = 0; i < w->npair; i++) {
    fl_pair_material *p = &w->pair[i];
    if ((p->mat_a == mat_a && p->mat_b == mat_b) || (p->mat_a == mat_b && p->mat_b == mat_a)) {
      p->mu = mu;
      p->stiffness = stiffness;
      p->tau_d = tau_d;
      return FL_OK;
    }
  }
  FL_TRY(fl_grow((void **)&w->pair, &w->cap_pair, w->npair + 1, sizeof(fl_pair_material), "world"));
  w->pair[w->npair++] = (fl_pair_material){mat_a, mat_b, mu, stiffness, tau_d};
  return FL_OK;
}


//---- world ----

int fl_world_create(fl_world **out) {
  *out = NULL;
  fl_world *w = fl_calloc(1, sizeof *w);
  if (!w) return fl_seterr(FL_ERR_NOMEM, "world: out of memory");
  snprintf(w->name, sizeof w->name, "world");
  w->gravity[2] = -9.81;
  w->dt = 1e-3;
  w->duration = 1;
  w->margin = 1e-3;
  w->max_recovery = INFINITY;
  w->mu_rule = FL_MU_HARMONIC;
  w->compute_metrics = 1;
  w->observe_geometry = 1;
  // FL_COLLIDE_COHERENCE=0 switches the collision's reuse across steps off (to compare runs)
  const char *coh = getenv("FL_COLLIDE_COHERENCE");
  w->collide_coherence = !(coh && strcmp(coh, "0") == 0);
  w->fem_solve = FL_FEM_SCHUR;
  int rc = fl_world_add_material(w, "default", 0.5, INFINITY, 0);
  if (rc < 0) {
    fl_world_free(w);
    return rc;
  }
  *out = w;
  return FL_OK;
}


void fl_world_free(fl_world *w) {
  if (!w) return;
  for (int k = 0; k < FL__NKIND; k++) fl__body_kinds[k]->release(w);
  for (fl_int i = 0; i < w->ngroup; i++) fl_free(w->group[i].body);
  fl_free(w->mat);
  fl_free(w->pair);
  fl_free(w->joint);
  fl_free(w->force);
  fl_free(w->group);
  fl_free(w->limit);
  fl_world_impl *m = w->impl;
  if (m) {
    fl_free(m->lo);
    fl_free(m->hp);
    fl_free(m->hi);
    fl_free(m->skip);
    fl_free(m->ct);
    fl_problem_free(m->prob);
    fl_free(m->v);
    fl_free(m->gamma);
    fl_free(m->ws);
    fl_free(m->ws_gamma);
    fl_free(m->ws_gh);
    fl_free(m->obs_name);
    fl_free(m->all_limit);
    fl_free(m->limit_index);
    fl_free(m->obs_ct);
    fl_free(m->lift_v);
    fl_free(m->lift_ct);
    fl_free(m->obs_fct);
    fl_free(m->pose_body);
    fl_free(m);
  }
  fl_free(w);
}


int fl__world_impl(fl_world *w) {
  if (w->impl) return FL_OK;
  w->impl = fl_calloc(1, sizeof *w->impl);
  if (!w->impl) return fl_seterr(FL_ERR_NOMEM, "world: out of memory");
  w->impl->lift_step = -1;
  return FL_OK;
}


fl_int fl_world_nv(const fl_world *w) {
  fl_int nv = 0;
  for (int k = 0; k < FL__NKIND; k++) nv += fl__body_kinds[k]->nv(w);
  return nv;
}


//---- bodies ----

static int finite3(const double *x) { return isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2]); }


int fl_world_add_body(fl_world *w, const fl_body_desc *d, fl_shape *shape) {
  char nm[32];
  if (d->name) snprintf(nm, sizeof nm, "%s", d->name);
  else snprintf(nm, sizeof nm, "body%d", (int)w->nbody);
  // names become file-name parts and CSV cells: identifiers only (issue 51)
  if (d->name) FL_TRY(fl_name_check(d->name, "fl_world_add_body", "body name"));
  if (d->kind < FL_BODY_DYNAMIC || d->kind > FL_BODY_PRESCRIBED)
    return fl_seterr(FL_ERR_INVAL, "body %s: kind %d, expected dynamic, fixed or prescribed", nm,
                     (int)d->kind);
  if (d->material < 0 || d->material >= w->nmat)
    return fl_seterr(FL_ERR_INVAL, "body %s: material %d out of range [0, %d)", nm, d->material,
                     (int)w->nmat);
  if (!finite3(d->pos) || !finite3(d->vel) || !finite3(d->omega) || !isfinite(d->quat[0]) ||
      !finite3(d->quat + 1))
    return fl_seterr(FL_ERR_INVAL, "body %s: pose or velocity not finite", nm);
  if (shape->type == FL_SHAPE_PLANE && d->kind == FL_BODY_DYNAMIC)
    return fl_seterr(FL_ERR_INVAL, "body %s: a plane cannot be dynamic (fixed or prescribed)", nm);

  fl_body b;
  memset(&b, 0, sizeof b);
  snprintf(b.name, sizeof b.name, "%s", nm);
  b.kind = d->kind;
  b.material = d->material;
  double q[4] = {d->quat[0], d->quat[1], d->quat[2], d->quat[3]};
  if (q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0) q[0] = 1;
  // a quaternion that is unit to rounding is kept bit for bit (scene files read back exactly)
  double qn2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  if (fabs(qn2 - 1) > 1e-14) fl_quat_normalize(q);
  memcpy(b.quat, q, sizeof q);
  memcpy(b.pos, d->pos, sizeof b.pos);
  memcpy(b.vel, d->vel, sizeof b.vel);
  memcpy(b.omega, d->omega, sizeof b.omega);

  // convex shapes are recentred so that the body origin is the centre of volume
  if (shape->type == FL_SHAPE_CONVEX) {
    double shift[3], ws[3];
    fl_shape_recenter(shape, shift);
    fl_quat_rotate(q, shift, ws);
    for (int k = 0; k < 3; k++) b.pos[k] += ws[k];
  }

  // mass and inertia: from the density, or given
  if (d->kind == FL_BODY_DYNAMIC) {
    if (d->density > 0) {
      double com[3];
      int rc = fl_shape_mass_properties(shape, d->density, &b.mass, com, b.inertia);
      if (rc < 0) return fl_seterr(rc, "body %s: %s", nm, fl_errmsg());
      b.density = d->density;
    } else {
      if (!(d->mass > 0) || !isfinite(d->mass))
        return fl_seterr(FL_ERR_INVAL, "body %s: mass = %g, expected > 0 (or a density > 0)",
                         nm, d->mass);
      b.mass = d->mass;
      if (d->inertia) {
        memcpy(b.inertia, d->inertia, sizeof b.inertia);
      } else {
        double vol = fl_shape_volume(shape);
        if (!(vol > 0) || !isfinite(vol))
          return fl_seterr(FL_ERR_INVAL, "body %s: no inertia given and the shape has no volume", nm);
        int rc = fl_shape_mass_properties(shape, d->mass / vol, NULL, NULL, b.inertia);
        if (rc < 0) return fl_seterr(rc, "body %s: %s", nm, fl_errmsg());
      }
      // the inertia must be symmetric positive definite
      double I[9];
      memcpy(I, b.inertia, sizeof I);
      int sym = 1;
      for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
          if (!isfinite(I[3 * r + c]) ||
              fabs(I[3 * r + c] - I[3 * c + r]) > 1e-9 * (fabs(I[0]) + fabs(I[4]) + fabs(I[8])))
            sym = 0;
        }
      }
      if (!sym || fl_chol_factor(I, 3) < 0)
        return fl_seterr(FL_ERR_INVAL, "body %s: inertia is not symmetric positive definite", nm);
    }
    // derived quantities: a box of size 1e100 has an infinite inertia, one of 1e-120 a zero
    // one; either makes every step fail ("singular inertia") and breaks JSON out (issue 51)
    double I[9], Iinv[9];
    memcpy(I, b.inertia, sizeof I);
    int ok = isfinite(b.mass) && b.mass > 0 && isfinite(1 / b.mass);
    for (int k = 0; k < 9; k++) ok = ok && isfinite(I[k]);
    ok = ok && fl_chol_factor(I, 3) >= 0 && fl_m3_inv(b.inertia, Iinv) >= 0;
    for (int k = 0; ok && k < 9; k++) ok = isfinite(Iinv[k]);
    if (!ok)
      return fl_seterr(FL_ERR_INVAL, "body %s: mass %g kg, inertia diagonal [%g, %g, %g] kg m^2 "
                       "(from its shape and %s): expected finite, positive values with a finite "
                       "inverse (is a size or the density too large or too small?)", nm, b.mass,
                       b.inertia[0], b.inertia[4], b.inertia[8],
                       d->density > 0 ? "density" : "mass");
  }
  b.size = isfinite(shape->radius) ? 2 * shape->radius : INFINITY;
  memcpy(b.pos0, b.pos, sizeof b.pos);
  memcpy(b.quat0, b.quat, sizeof b.quat);
  FL_TRY(fl_grow((void **)&w->body, &w->cap_body, w->nbody + 1, sizeof(fl_body), "world"));
  b.shape = *shape;
  memset(shape, 0, sizeof *shape);
  // generalized velocities: 6 per dynamic body, in body order
  b.dof = -1;
  if (b.kind == FL_BODY_DYNAMIC) {
    b.dof = 0;
    for (fl_int i = w->nbody - 1; i >= 0; i--) {
      if (w->body[i].dof >= 0) {
        b.dof = w->body[i].dof + 6;
        break;
      }
    }
  }
  w->body[w->nbody] = b;
  return w->nbody++;
}


int fl_world_find_body(const fl_world *w, const char *name) {
  for (fl_int i = 0; i < w->nbody; i++) {
    if (strcmp(w->body[i].name, name) == 0) return i;
  }
  return -1;
}


//---- joints, forces, groups ----

int fl_joint_nrows(const fl_joint *j) {
  int n = 0;
  switch (j->type) {
  case FL_JOINT_WELD: n = 6; break;
  case FL_JOINT_BALL: n = 3; break;
  case FL_JOINT_DISTANCE: n = 1; break;
  case FL_JOINT_PRISMATIC: n = 5; break;
  case FL_JOINT_REVOLUTE: n = 5; break;
  }
  if (j->driven && (j->type == FL_JOINT_PRISMATIC || j->type == FL_JOINT_REVOLUTE)) n++;
  return n;
}


int fl_world_add_joint(fl_world *w, const fl_joint *j) {
  int nj = (int)w->njoint;
  if (j->type < FL_JOINT_WELD || j->type > FL_JOINT_REVOLUTE)
    return fl_seterr(FL_ERR_INVAL, "joint %d: type %d, expected one of " FL_JOINT_TYPE_CHOICES, nj,
                     (int)j->type);
  if (j->body_a < -1 || j->body_a >= w->nbody || j->body_b < 0 || j->body_b >= w->nbody ||
      j->body_a == j->body_b)
    return fl_seterr(FL_ERR_INVAL,
                     "joint %d: bodies (%d, %d), expected two different bodies in [0, %d) (the "
                     "first may be -1, the world)",
                     nj, j->body_a, j->body_b, (int)w->nbody);
  fl_joint c = *j;
  if (c.type == FL_JOINT_PRISMATIC || c.type == FL_JOINT_REVOLUTE) {
    if (!(fl_v3_normalize(c.axis) > 0))
      return fl_seterr(FL_ERR_INVAL, "joint %d: axis is zero, expected a nonzero vector", nj);
  }
  if (c.type == FL_JOINT_DISTANCE) {
    if (!(c.rest_length >= 0) || !(c.stiffness > 0) || !(c.damping >= 0))
      return fl_seterr(FL_ERR_INVAL,
                       "joint %d: distance joint needs rest_length >= 0, stiffness > 0 (inf = "
                       "rod), damping >= 0",
                       nj);
  }
  if (c.driven && !(c.drive_max_force > 0))
    return fl_seterr(FL_ERR_INVAL, "joint %d: drive_max_force must be > 0 (inf = unbounded)", nj);
  // rest relative rotation and the axis seen from b
  double qa[4] = {1, 0, 0, 0}, qac[4], Ra[9], Rb[9], aw[3];
  if (c.body_a >= 0) memcpy(qa, w->body[c.body_a].quat, sizeof qa);
  qac[0] = qa[0];
  qac[1] = -qa[1];
  qac[2] = -qa[2];
  qac[3] = -qa[3];
  fl_quat_mul(qac, w->body[c.body_b].quat, c.qrel);
  fl_quat_to_mat(qa, Ra);
  fl_quat_to_mat(w->body[c.body_b].quat, Rb);
  fl_m3_mulv(Ra, c.axis, aw);
  fl_m3_multv(Rb, aw, c.axis_b);
  FL_TRY(fl_grow((void **)&w->joint, &w->cap_joint, w->njoint + 1, sizeof(fl_joint), "world"));
  w->joint[w->njoint] = c;
  return w->njoint++;
}


int fl_world_add_force(fl_world *w, const fl_force *f) {
  if (f->body < 0 || f->body >= w->nbody)
    return fl_seterr(FL_ERR_INVAL, "force %d: body %d out of range [0, %d)", (int)w->nforce,
                     f->body, (int)w->nbody);
  if (!finite3(f->f) || !finite3(f->tau) || !isfinite(f->t0) || !isfinite(f->t1))
    return fl_seterr(FL_ERR_INVAL, "force %d: values must be finite", (int)w->nforce);
  FL_TRY(fl_grow((void **)&w->force, &w->cap_force, w->nforce + 1, sizeof(fl_force), "world"));
  w->force[w->nforce] = *f;
  return w->nforce++;
}


static int add_group(fl_world *w, fl_obs_kind kind, fl_int n, const fl_int *body,
                     const double *param, int nparam, int deformable) {
  if (kind < FL_OBS_STACK || kind > FL_OBS_POSE || n < 1 || nparam < 0 || nparam > 8)
    return fl_seterr(FL_ERR_INVAL, "observable group: kind %d with %d bodies and %d parameters",
                     (int)kind, (int)n, nparam);
  if (deformable && kind != FL_OBS_ARCH)
    return fl_seterr(FL_ERR_INVAL, "observable group: kind %d does not read deformable bodies "
                     "(only arch groups do)", (int)kind);
  fl_int nb = deformable ? w->nfem : w->nbody;
  for (fl_int i = 0; i < n; i++) {
    if (body[i] < 0 || body[i] >= nb)
      return fl_seterr(FL_ERR_INVAL, "observable group: %s body %d out of range [0, %d)",
                       deformable ? "deformable" : "rigid", (int)body[i], (int)nb);
  }
  FL_TRY(fl_grow((void **)&w->group, &w->cap_group, w->ngroup + 1, sizeof(fl_obs_group), "world"));
  fl_obs_group *g = &w->group[w->ngroup];
  memset(g, 0, sizeof *g);
  g->body = fl_malloc((size_t)n * sizeof(fl_int));
  if (!g->body) return fl_seterr(FL_ERR_NOMEM, "observable group: out of memory");
  memcpy(g->body, body, (size_t)n * sizeof(fl_int));
  g->kind = kind;
  g->n = n;
  g->deformable = deformable;
  for (int i = 0; i < nparam; i++) g->param[i] = param[i];
  // observable names change with the groups
  if (w->impl) w->impl->nobs = 0;
  return w->ngroup++;
}


int fl_world_add_group(fl_world *w, fl_obs_kind kind, fl_int n, const fl_int *body,
                       const double *param, int nparam) {
  return add_group(w, kind, n, body, param, nparam, 0);
}


int fl_world_add_fem_group(fl_world *w, fl_obs_kind kind, fl_int n, const fl_int *fem,
                           const double *param, int nparam) {
  return add_group(w, kind, n, fem, param, nparam, 1);
}


int fl_world_add_limit(fl_world *w, const char *obs, double lo, double hi, const char *label) {
  if (!obs || !*obs || strlen(obs) >= sizeof w->limit->obs)
    return fl_seterr(FL_ERR_INVAL, "limit: observable name '%s': expected 1 to %d characters",
                     obs ? obs : "(null)", (int)sizeof w->limit->obs - 1);
  if (!label || !*label || strlen(label) >= sizeof w->limit->label)
    return fl_seterr(FL_ERR_INVAL, "limit on %s: label '%s': expected 1 to %d characters", obs,
                     label ? label : "(null)", (int)sizeof w->limit->label - 1);
  if (isnan(lo) || isnan(hi) || lo > hi)
    return fl_seterr(FL_ERR_INVAL, "limit on %s: range [%g, %g]: expected min <= max, no NaN",
                     obs, lo, hi);
  FL_TRY(fl_grow((void **)&w->limit, &w->cap_limit, w->nlimit + 1, sizeof(fl_obs_limit), "world"));
  fl_obs_limit *l = &w->limit[w->nlimit];
  memset(l, 0, sizeof *l);
  snprintf(l->obs, sizeof l->obs, "%s", obs);
  snprintf(l->label, sizeof l->label, "%s", label);
  l->lo = lo;
  l->hi = hi;
  return w->nlimit++;
}


void fl_world_reset_start(fl_world *w) {
  for (int k = 0; k < FL__NKIND; k++) fl__body_kinds[k]->reset_start(w);
  w->t = 0;
  w->step = 0;
  if (w->impl) {
    w->impl->nws = 0;
    w->impl->nws_h = 0;
    w->impl->lift_step = -1;
  }
}


//---- energy and momentum ----

void fl_world_energy_momentum(const fl_world *w, double *kinetic, double *potential,
                              double p[3], double L[3]) {
  double ke = 0, pe = 0, P[3] = {0, 0, 0}, Lt[3] = {0, 0, 0};
  for (int k = 0; k < FL__NKIND; k++) fl__body_kinds[k]->energy(w, &ke, &pe, P, Lt);
  if (kinetic) *kinetic = ke;
  if (potential) *potential = pe;
  if (p) memcpy(p, P, sizeof P);
  if (L) memcpy(L, Lt, sizeof Lt);
}

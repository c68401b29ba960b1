// SPDX-License-Identifier: Apache-2.0
/* observables.c: what a run records about the world, measured from the geometry and the state,
 * never from the solver's output.
 *
 * Common: t, contacts (of the last prepared problem), pen_max (deepest overlap of any two
 * bodies by the narrow phase at margin 0 on the current poses), drift_max (largest centre
 * displacement of a dynamic body from its start), kinetic, potential (-m g.x), energy, linear
 * momentum px..pz, angular momentum about the origin Lx..Lz, joint_err (largest position error
 * of a joint row, m); then drift_<body> per dynamic body when there are at most 32.
 * Then, per deformable body (at most 32): elastic_<body> (J) and mindetF_<body> (smallest det F
 * of its tets). Groups (fl_obs_kind): stack, arch, slope, chain, coin, force, press; see
 * fl_world.h and docs/scenes.md. Then liftoff_ratio and liftoff_speed (FL_LIFTOFF_SLOPE), then
 * <body>.x .. <body>.wz per posed body (FL_OBS_POSE).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fl_fem.h"
#include "world_impl.h"

static const char *common_names[] = {"t",  "contacts", "pen_max", "drift_max", "kinetic",
                                     "potential", "energy", "px", "py", "pz",
                                     "Lx", "Ly", "Lz", "joint_err"};
#define NCOMMON 14
/* per-body drift columns drift_<name> for worlds with at most this many dynamic bodies */
#define DRIFT_BODIES_MAX 32


static fl_int ndynamic(const fl_world *w) {
  fl_int n = 0;
  for (fl_int i = 0; i < w->nbody; i++) n += w->body[i].kind == FL_BODY_DYNAMIC;
  return n;
}


/* A deformable body's size (m): the diagonal of its rest mesh's bounding box. */
static double fem_rest_size(const fl_fem_body *f) {
  const fl_mesh *me = f->mesh;
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (fl_int v = 0; v < me->nvert; v++)
    for (int c = 0; c < 3; c++) {
      lo[c] = fmin(lo[c], me->X[3 * v + c]);
      hi[c] = fmax(hi[c], me->X[3 * v + c]);
    }
  double d[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
  return me->nvert > 0 ? fl_v3_norm(d) : 0;
}


//---- names ----

static fl_int group_count(const fl_obs_group *g) {
  switch (g->kind) {
  case FL_OBS_STACK: return (g->n - 1) + 3;
  case FL_OBS_ARCH: return g->n + 3;
  case FL_OBS_SLOPE: return 3;
  case FL_OBS_CHAIN: return 2;
  case FL_OBS_COIN: return 3;
  case FL_OBS_FORCE: return 3 * g->n;
  case FL_OBS_PRESS: return 3;
  case FL_OBS_POSE: return 0; /* its columns come after every group's (pose_bodies) */
  }
  return 0;
}


/* the 13 columns of a posed body, after "<body>." */
static const char *const pose_suffix[13] = {"x",  "y",  "z",  "qw", "qx", "qy", "qz",
                                            "vx", "vy", "vz", "wx", "wy", "wz"};
#define NPOSE 13


/* The posed bodies into m->pose_body: the bodies of the pose groups (first mention), else every
 * dynamic body when there are at most DRIFT_BODIES_MAX of them, else none. */
static int pose_bodies(fl_world *w) {
  fl_world_impl *m = w->impl;
  fl_int n = 0, npg = 0;
  for (fl_int g = 0; g < w->ngroup; g++) {
    if (w->group[g].kind != FL_OBS_POSE) continue;
    npg++;
    n += w->group[g].n;
  }
  if (!npg) n = ndynamic(w) <= DRIFT_BODIES_MAX ? ndynamic(w) : 0;
  fl_free(m->pose_body);
  m->pose_body = fl_malloc((size_t)(n > 0 ? n : 1) * sizeof *m->pose_body);
  if (!m->pose_body) return fl_seterr(FL_ERR_NOMEM, "observables: out of memory");
  m->npose = 0;
  if (!npg) {
    for (fl_int i = 0; i < w->nbody && n > 0; i++)
      if (w->body[i].kind == FL_BODY_DYNAMIC) m->pose_body[m->npose++] = i;
    return FL_OK;
  }
  for (fl_int g = 0; g < w->ngroup; g++) {
    if (w->group[g].kind != FL_OBS_POSE) continue;
    for (fl_int i = 0; i < w->group[g].n; i++) {
      fl_int b = w->group[g].body[i], seen = 0;
      for (fl_int q = 0; q < m->npose; q++) seen |= m->pose_body[q] == b;
      if (!seen) m->pose_body[m->npose++] = b;
    }
  }
  return FL_OK;
}


static int build_names(fl_world *w) {
  FL_TRY(fl__world_impl(w));
  fl_world_impl *m = w->impl;
  if (m->nobs > 0) return FL_OK;
  fl_int nd = ndynamic(w), n = NCOMMON + (nd <= DRIFT_BODIES_MAX ? nd : 0);
  n += w->nfem <= DRIFT_BODIES_MAX ? 2 * w->nfem : 0;
  for (fl_int g = 0; g < w->ngroup; g++) n += group_count(&w->group[g]);
  FL_TRY(pose_bodies(w));
  n += 2 + NPOSE * m->npose;
  fl_free(m->obs_name);
  m->obs_name = fl_malloc((size_t)n * sizeof *m->obs_name);
  if (!m->obs_name) return fl_seterr(FL_ERR_NOMEM, "observables: out of memory");
  fl_int k = 0;
  for (int i = 0; i < NCOMMON; i++) snprintf(m->obs_name[k++], 40, "%s", common_names[i]);
  for (fl_int i = 0; nd <= DRIFT_BODIES_MAX && i < w->nbody; i++) {
    if (w->body[i].kind == FL_BODY_DYNAMIC) snprintf(m->obs_name[k++], 40, "drift_%.31s", w->body[i].name);
  }
  for (fl_int i = 0; w->nfem <= DRIFT_BODIES_MAX && i < w->nfem; i++) {
    snprintf(m->obs_name[k++], 40, "elastic_%.31s", w->fem[i]->name);
    snprintf(m->obs_name[k++], 40, "mindetF_%.31s", w->fem[i]->name);
  }
  for (fl_int gi = 0; gi < w->ngroup; gi++) {
    const fl_obs_group *g = &w->group[gi];
    // a second group of the same kind gets its index in the prefix
    int same = 0;
    for (fl_int h = 0; h < gi; h++) same += w->group[h].kind == g->kind;
    char pre[20]; /* "stack2", "arch" ...: short, so every name below fits in 40 */
    const char *kn = g->kind == FL_OBS_STACK ? "stack"
                   : g->kind == FL_OBS_ARCH  ? "arch"
                   : g->kind == FL_OBS_SLOPE ? "slope"
                   : g->kind == FL_OBS_COIN  ? "coin"
                   : g->kind == FL_OBS_FORCE ? "force"
                   : g->kind == FL_OBS_PRESS ? "press"
                   : g->kind == FL_OBS_POSE  ? "pose"
                                             : "chain";
    if (same) snprintf(pre, sizeof pre, "%s%d", kn, same + 1);
    else snprintf(pre, sizeof pre, "%s", kn);
    switch (g->kind) {
    case FL_OBS_STACK:
      for (fl_int i = 1; i < g->n; i++) snprintf(m->obs_name[k++], 40, "%s_pen_%d", pre, (int)i);
      snprintf(m->obs_name[k++], 40, "%s_tilt_max", pre);
      snprintf(m->obs_name[k++], 40, "%s_lateral_drift", pre);
      snprintf(m->obs_name[k++], 40, "%s_collapsed", pre);
      break;
    case FL_OBS_ARCH:
      for (fl_int i = 0; i < g->n; i++) snprintf(m->obs_name[k++], 40, "%s_disp_%d", pre, (int)i + 1);
      snprintf(m->obs_name[k++], 40, "%s_disp_max", pre);
      snprintf(m->obs_name[k++], 40, "%s_disp_rel_max", pre);
      snprintf(m->obs_name[k++], 40, "%s_stands", pre);
      break;
    case FL_OBS_SLOPE:
      snprintf(m->obs_name[k++], 40, "%s_ux", pre);
      snprintf(m->obs_name[k++], 40, "%s_ux_ref", pre);
      snprintf(m->obs_name[k++], 40, "%s_rel_err", pre);
      break;
    case FL_OBS_CHAIN:
      snprintf(m->obs_name[k++], 40, "%s_stretch", pre);
      snprintf(m->obs_name[k++], 40, "%s_tip_z", pre);
      break;
    case FL_OBS_COIN:
      snprintf(m->obs_name[k++], 40, "%s_v", pre);
      snprintf(m->obs_name[k++], 40, "%s_omega", pre);
      snprintf(m->obs_name[k++], 40, "%s_eps", pre);
      break;
    case FL_OBS_FORCE:
      for (fl_int i = 0; i < g->n; i++) {
        for (int c = 0; c < 3; c++)
          snprintf(m->obs_name[k++], 40, "%.30s_f%c", w->body[g->body[i]].name, "xyz"[c]);
      }
      break;
    case FL_OBS_PRESS:
      snprintf(m->obs_name[k++], 40, "%s_force", pre);
      snprintf(m->obs_name[k++], 40, "%s_approach", pre);
      snprintf(m->obs_name[k++], 40, "%s_overlap", pre);
      break;
    case FL_OBS_POSE:
      break;
    }
  }
  snprintf(m->obs_name[k++], 40, "liftoff_ratio");
  snprintf(m->obs_name[k++], 40, "liftoff_speed");
  for (fl_int q = 0; q < m->npose; q++) {
    for (int c = 0; c < NPOSE; c++)
      snprintf(m->obs_name[k++], 40, "%.31s.%s", w->body[m->pose_body[q]].name, pose_suffix[c]);
  }
  m->nobs = n;
  return FL_OK;
}


fl_int fl_world_nobs(const fl_world *w) {
  if (build_names((fl_world *)w) < 0) return 0;
  return w->impl->nobs;
}


const char *fl_world_obs_name(const fl_world *w, fl_int i) {
  if (build_names((fl_world *)w) < 0 || i < 0 || i >= w->impl->nobs) return NULL;
  return w->impl->obs_name[i];
}


static fl_int obs_find(const fl_world *w, const char *name) {
  for (fl_int i = 0; i < w->impl->nobs; i++)
    if (!strcmp(w->impl->obs_name[i], name)) return i;
  return -1;
}


int fl_world_limits(fl_world *w, const fl_obs_limit **lim, const fl_int **index, fl_int *n) {
  FL_TRY(build_names(w));
  fl_world_impl *m = w->impl;
  fl_int cap = w->nlimit + 2 + w->ngroup;
  fl_free(m->all_limit);
  fl_free(m->limit_index);
  m->all_limit = fl_calloc((size_t)cap, sizeof *m->all_limit);
  m->limit_index = fl_calloc((size_t)cap, sizeof *m->limit_index);
  if (!m->all_limit || !m->limit_index) return fl_seterr(FL_ERR_NOMEM, "limits: out of memory");
  fl_int k = 0;
  for (fl_int i = 0; i < w->nlimit; i++) {
    fl_int o = obs_find(w, w->limit[i].obs);
    if (o < 0)
      return fl_seterr(FL_ERR_INVAL, "limits[%d]: no observable named '%s' in scene %s (see "
                       "observables.csv's header for the names)", (int)i, w->limit[i].obs, w->name);
    m->all_limit[k] = w->limit[i];
    m->limit_index[k++] = o;
  }
  // automatic limits, where the scene declared none on the same observable
  double smallest = INFINITY;
  for (fl_int i = 0; i < w->nbody; i++)
    if (w->body[i].kind == FL_BODY_DYNAMIC && w->body[i].size < smallest) smallest = w->body[i].size;
  for (fl_int i = 0; i < w->nfem; i++) {
    double d = fem_rest_size(w->fem[i]);
    if (d > 0 && d < smallest) smallest = d;
  }
  for (fl_int o = 0; o < m->nobs; o++) {
    const char *name = m->obs_name[o], *us = strrchr(name, '_');
    fl_obs_limit l = {{0}, -INFINITY, INFINITY, {0}};
    if (!strcmp(name, "pen_max") && isfinite(smallest)) {
      l.hi = 0.01 * smallest; // 1 % of the smallest dynamic body, rigid or deformable
      snprintf(l.label, sizeof l.label, "penetration");
    } else if (!strcmp(name, "liftoff_ratio")) {
      l.hi = FL_LIFTOFF_SLOPE;
      snprintf(l.label, sizeof l.label, "liftoff");
    } else if (us && !strcmp(us, "_collapsed") && !strncmp(name, "stack", 5)) {
      l.hi = 0.5;
      snprintf(l.label, sizeof l.label, "collapse");
    } else if (us && !strcmp(us, "_stands") && !strncmp(name, "arch", 4)) {
      l.lo = 0.5;
      snprintf(l.label, sizeof l.label, "collapse");
    } else {
      continue;
    }
    int declared = 0;
    for (fl_int i = 0; i < w->nlimit; i++) declared |= !strcmp(w->limit[i].obs, name);
    if (declared || k >= cap) continue;
    snprintf(l.obs, sizeof l.obs, "%s", name);
    m->all_limit[k] = l;
    m->limit_index[k++] = o;
  }
  *lim = m->all_limit;
  *index = m->limit_index;
  *n = k;
  return FL_OK;
}


//---- geometry helpers ----


/* Deepest overlap (>= 0, m) between bodies i and j at their current poses. */
static int pair_penetration(const fl_world *w, fl_int i, fl_int j, double *pen) {
  const fl_body *a = &w->body[i], *b = &w->body[j];
  fl_manifold_point mp[FL_MANIFOLD_MAX];
  int n = fl_collide(&a->shape, a->pos, a->quat, &b->shape, b->pos, b->quat, 0.0, mp);
  *pen = 0;
  if (n == FL_ERR_UNSUPPORTED) return FL_OK;
  if (n < 0) return n;
  for (int k = 0; k < n; k++) {
    if (-mp[k].phi > *pen) *pen = -mp[k].phi;
  }
  return FL_OK;
}


int fl_world_set_peer_contacts(fl_world *w, fl_int nc) {
  FL_TRY(fl__world_impl(w));
  w->impl->peer_nc = nc;
  return FL_OK;
}


int fl_world_penetration(fl_world *w, double *pen) {
  FL_TRY(fl__world_impl(w));
  fl_world_impl *m = w->impl;
  FL_TRY(fl__collide_all(w, 0.0, 0.0, &m->obs_ct, &m->nobs_ct, &m->cap_obs_ct, NULL));
  double p = 0;
  for (fl_int c = 0; c < m->nobs_ct; c++) {
    if (-m->obs_ct[c].phi > p) p = -m->obs_ct[c].phi;
  }
  if (w->nfem > 0) {
    // the deformable bodies' own queries; the step's geometry time is left as the step set it
    double geo = m->fem_geometry_s;
    m->nobs_fct = 0;
    int rc = fl__fem_collide(w, 0.0, &m->obs_fct, &m->nobs_fct, &m->cap_obs_fct);
    m->fem_geometry_s = geo;
    FL_TRY(rc);
    for (fl_int c = 0; c < m->nobs_fct; c++) {
      if (-m->obs_fct[c].phi > p) p = -m->obs_fct[c].phi;
    }
  }
  *pen = p;
  return FL_OK;
}


/* Row `row` of u = J v + b of the last solved step. */
static double row_velocity(const fl_problem *p, const double *v, fl_int row) {
  double u = p->b[row];
  for (fl_int q = p->J->rowptr[row]; q < p->J->rowptr[row + 1]; q++) u += p->J->val[q] * v[p->J->col[q]];
  return u;
}


/* Deepest overlap (m, >= 0) of rigid body j's contacts at the end of the last solved step,
 * -(phi0 + dt u_n): exact for a translating flat face against mesh vertices (the press). */
static double contact_overlap(const fl_world *w, fl_int j) {
  const fl_world_impl *m = w->impl;
  if (!m || !m->prob || !m->solved || !m->v) return 0;
  const fl_problem *p = m->prob;
  double ov = 0;
  for (fl_int c = 0; c < p->nc; c++) {
    const fl__contact *ct = &m->ct[c];
    fl_int a = ct->a.kind == FL__KIND_RIGID ? ct->a.id : -1;
    fl_int b = ct->b.kind == FL__KIND_RIGID ? ct->b.id : -1;
    if (a != j && b != j) continue;
    double d = -(p->phi0[c] + p->dt * row_velocity(p, m->v, 3 * c));
    if (d > ov) ov = d;
  }
  return ov;
}


/* velocity of rigid body i's material point x (world frame) */
static void point_velocity(const fl_body *b, const double x[3], double out[3]) {
  double r[3] = {x[0] - b->pos[0], x[1] - b->pos[1], x[2] - b->pos[2]}, c[3];
  fl_v3_cross(b->omega, r, c);
  for (int k = 0; k < 3; k++) out[k] = b->vel[k] + c[k];
}


/* Lift-off from the poses and velocities every stepper leaves, peers included (fl_world.h,
 * FL_LIFTOFF_SLOPE): over the rigid pairs within the lift margin after this step, a pair is
 * pressed when its relative acceleration over the step, less gravity's, pushes its two sides
 * apart along the normal by more than 1e-3 |g| (the contact pushed; leaving an edge in free
 * fall does not) and sliding when its deepest point's relative tangential speed exceeds V =
 * |g| dt; such a pair's s = min(phi/dt, u_n) (its deepest gap after the step over dt, the
 * rate at which the step opened it, and the normal velocity there: 0 for an exact rigid
 * contact, < 0 for a compliant one) less rho |omega|^2 dt per turning side (rho: the point's
 * distance from that side's centre; a corner pivoting through a step opens that much). liftoff_ratio is
 * the largest s/|u_t|, liftoff_speed that pair's s; 0, 0 on the first observed step. The
 * values are kept per step, so observing a step twice gives the same answer. */
static int liftoff(fl_world *w, double *ratio, double *speed) {
  fl_world_impl *m = w->impl;
  *ratio = *speed = 0;
  if (!w->observe_geometry) return FL_OK;
  if (m->lift_step == (long)w->step && m->lift_v) {
    *ratio = m->lift_ratio;
    *speed = m->lift_speed;
    return FL_OK;
  }
  if (!m->lift_v && !(m->lift_v = fl_malloc((size_t)(w->nbody > 0 ? w->nbody : 1) * 3 * sizeof(double))))
    return fl_seterr(FL_ERR_NOMEM, "observables: out of memory");
  int have_prev = m->lift_step >= 0 && m->lift_step + 1 == (long)w->step && w->dt > 0;
  if (have_prev) {
    double g = fl_v3_norm(w->gravity), dt = w->dt, V = g * dt;
    if (!(V > 1e-6)) V = 1e-6;
    double amin = 1e-3 * V / dt;
    // the lift margin: the gap a lifted pair opens in a step at a slope well above the limit
    double smallest = INFINITY;
    for (fl_int i = 0; i < w->nbody; i++)
      if (w->body[i].kind == FL_BODY_DYNAMIC && w->body[i].size < smallest) smallest = w->body[i].size;
    double M = w->margin + (isfinite(smallest) ? 0.01 * smallest : 0);
    FL_TRY(fl__collide_all(w, M, 0.0, &m->lift_ct, &m->nlift_ct, &m->cap_lift_ct, NULL));
    // a pair's contacts are consecutive (fl__collide_all appends them pair by pair): its deepest
    for (fl_int c0 = 0, c1; c0 < m->nlift_ct; c0 = c1) {
      const fl__contact *ct = &m->lift_ct[c0];
      for (c1 = c0 + 1; c1 < m->nlift_ct && m->lift_ct[c1].a.id == ct->a.id &&
                        m->lift_ct[c1].b.id == ct->b.id && m->lift_ct[c1].a.kind == ct->a.kind &&
                        m->lift_ct[c1].b.kind == ct->b.kind; c1++)
        if (m->lift_ct[c1].phi < ct->phi) ct = &m->lift_ct[c1];
      if (ct->a.kind != FL__KIND_RIGID || ct->b.kind != FL__KIND_RIGID) continue;
      const fl_body *a = &w->body[ct->a.id], *b = &w->body[ct->b.id];
      const double *va0 = m->lift_v + 3 * ct->a.id, *vb0 = m->lift_v + 3 * ct->b.id;
      double an = 0;
      for (int k = 0; k < 3; k++) {
        double ga = a->kind == FL_BODY_DYNAMIC ? w->gravity[k] : 0;
        double gb = b->kind == FL_BODY_DYNAMIC ? w->gravity[k] : 0;
        an += ct->n[k] * (((b->vel[k] - vb0[k]) - (a->vel[k] - va0[k])) / dt - (gb - ga));
      }
      if (!(an > amin)) continue; // not pressed
      double ua[3], ub[3], u[3];
      point_velocity(a, ct->p, ua);
      point_velocity(b, ct->p, ub);
      for (int k = 0; k < 3; k++) u[k] = ub[k] - ua[k];
      double un = fl_v3_dot(u, ct->n), ut[3];
      for (int k = 0; k < 3; k++) ut[k] = u[k] - un * ct->n[k];
      // the gap opened over the step and still opening, less what the step's rotation leaves
      // at a turning corner (a pivot at rho from the centre: rho omega^2 dt^2 / 2 of gap and
      // as much of u_n dt; twice that allowed)
      double turn = 0;
      const fl_body *side[2] = {a, b};
      for (int q = 0; q < 2; q++) {
        if (side[q]->kind != FL_BODY_DYNAMIC) continue;
        double r[3] = {ct->p[0] - side[q]->pos[0], ct->p[1] - side[q]->pos[1], ct->p[2] - side[q]->pos[2]};
        turn += fl_v3_norm(r) * fl_v3_dot(side[q]->omega, side[q]->omega) * dt;
      }
      double uts = fl_v3_norm(ut), s = fmin(ct->phi / dt, un) - turn;
      if (!(uts > V)) continue; // not sliding
      if (s / uts > *ratio) {
        *ratio = s / uts;
        *speed = s;
      }
    }
  }
  for (fl_int i = 0; i < w->nbody; i++) memcpy(m->lift_v + 3 * i, w->body[i].vel, 3 * sizeof(double));
  m->lift_step = (long)w->step;
  m->lift_ratio = *ratio;
  m->lift_speed = *speed;
  return FL_OK;
}


int fl_world_overlaps(fl_world *w, double tol, fl_overlap *out, int max, int *n) {
  *n = 0;
  FL_TRY(fl__world_impl(w));
  fl_world_impl *m = w->impl;
  FL_TRY(fl__collide_all(w, 0.0, 0.0, &m->obs_ct, &m->nobs_ct, &m->cap_obs_ct, NULL));
  // the deepest contact of each pair (few pairs overlap: a linear search is enough)
  fl_overlap *pairs = fl_malloc((size_t)(m->nobs_ct > 0 ? m->nobs_ct : 1) * sizeof *pairs);
  if (!pairs) return fl_seterr(FL_ERR_NOMEM, "overlaps: out of memory");
  int np = 0;
  for (fl_int c = 0; c < m->nobs_ct; c++) {
    const fl__contact *ct = &m->obs_ct[c];
    if (ct->k > 0 || !(-ct->phi > tol)) continue;
    int k = 0;
    while (k < np && !(pairs[k].a == ct->a.id && pairs[k].b == ct->b.id)) k++;
    if (k == np) pairs[np++] = (fl_overlap){ct->a.id, ct->b.id, 0};
    if (-ct->phi > pairs[k].depth) pairs[k].depth = -ct->phi;
  }
  // deepest first (selection: np is small)
  for (int i = 0; i < np && i < max; i++) {
    int best = i;
    for (int k = i + 1; k < np; k++)
      if (pairs[k].depth > pairs[best].depth) best = k;
    fl_overlap t = pairs[i];
    pairs[i] = pairs[best];
    pairs[best] = t;
    out[i] = pairs[i];
  }
  *n = np;
  fl_free(pairs);
  return FL_OK;
}


/* Rotation angle (rad) between two unit quaternions. */
static double quat_angle(const double a[4], const double b[4]) {
  double d = fabs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]);
  if (d > 1) d = 1;
  return 2 * acos(d);
}


/* Largest displacement (m) of a point of body b from its start pose: over the vertices of a
 * polyhedron, else the centre plus radius times the rotation angle (a bound). */
static double body_displacement(const fl_body *b) {
  double dx[3] = {b->pos[0] - b->pos0[0], b->pos[1] - b->pos0[1], b->pos[2] - b->pos0[2]};
  if (b->shape.nvert > 0) {
    double R[9], R0[9], best = 0;
    fl_quat_to_mat(b->quat, R);
    fl_quat_to_mat(b->quat0, R0);
    for (fl_int v = 0; v < b->shape.nvert; v++) {
      const double *x = b->shape.vert + 3 * v;
      double y[3], y0[3], d[3];
      fl_m3_mulv(R, x, y);
      fl_m3_mulv(R0, x, y0);
      for (int k = 0; k < 3; k++) d[k] = dx[k] + y[k] - y0[k];
      double n = fl_v3_norm(d);
      if (n > best) best = n;
    }
    return best;
  }
  double r = isfinite(b->shape.radius) ? b->shape.radius : 0;
  return fl_v3_norm(dx) + r * quat_angle(b->quat, b->quat0);
}


/* Total contact force (N, world) on rigid body j from the last solved step's impulses. */
static void contact_force(const fl_world *w, fl_int j, double f[3]) {
  f[0] = f[1] = f[2] = 0;
  const fl_world_impl *m = w->impl;
  if (!m || !m->prob || !m->solved) return;
  const fl_problem *p = m->prob;
  for (fl_int c = 0; c < p->nc; c++) {
    // side a's body pushes with -gamma; side b's with +gamma, counted for rigid pairs only (a
    // rigid side b of a contact with a mesh, from rigid_vs_mesh, is not counted)
    const fl__contact *ct = &m->ct[c];
    double s = (ct->a.kind == FL__KIND_RIGID && ct->a.id == j) ? -1 : 0;
    if (ct->a.kind == FL__KIND_RIGID && ct->b.kind == FL__KIND_RIGID) s += ct->b.id == j;
    if (s == 0) continue;
    const double *fr = p->frame + 9 * c, *g = m->gamma + 3 * c;
    for (int q = 0; q < 3; q++) f[q] += s * (fr[q] * g[0] + fr[3 + q] * g[1] + fr[6 + q] * g[2]) / p->dt;
  }
}


//---- evaluation ----

int fl_world_observe(fl_world *w, double *val) {
  FL_TRY(build_names(w));
  fl_world_impl *m = w->impl;
  fl_int k = 0;
  double ke, pe, P[3], L[3], pen = NAN;
  if (w->observe_geometry) FL_TRY(fl_world_penetration(w, &pen));
  fl_world_energy_momentum(w, &ke, &pe, P, L);
  double drift = 0;
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    if (b->kind != FL_BODY_DYNAMIC) continue;
    double d[3] = {b->pos[0] - b->pos0[0], b->pos[1] - b->pos0[1], b->pos[2] - b->pos0[2]};
    double n = fl_v3_norm(d);
    if (n > drift) drift = n;
  }
  double jerr = 0;
  fl__jrow rows[8];
  for (fl_int j = 0; j < w->njoint; j++) {
    int nr = fl__joint_rows(w, &w->joint[j], w->dt, rows);
    for (int r = 0; r < nr; r++) {
      if (rows[r].positional && fabs(rows[r].g0) > jerr) jerr = fabs(rows[r].g0);
    }
  }
  val[k++] = w->t;
  val[k++] = m->prob ? m->prob->nc : m->peer_nc;
  val[k++] = pen;
  val[k++] = drift;
  val[k++] = ke;
  val[k++] = pe;
  val[k++] = ke + pe;
  for (int i = 0; i < 3; i++) val[k++] = P[i];
  for (int i = 0; i < 3; i++) val[k++] = L[i];
  val[k++] = jerr;
  // per-body drift from the start (small worlds only; drift_max covers the rest)
  if (ndynamic(w) <= DRIFT_BODIES_MAX) {
    for (fl_int i = 0; i < w->nbody; i++) {
      const fl_body *b = &w->body[i];
      if (b->kind != FL_BODY_DYNAMIC) continue;
      double d[3] = {b->pos[0] - b->pos0[0], b->pos[1] - b->pos0[1], b->pos[2] - b->pos0[2]};
      val[k++] = fl_v3_norm(d);
    }
  }
  for (fl_int i = 0; w->nfem <= DRIFT_BODIES_MAX && i < w->nfem; i++) {
    double el = NAN, jmin = NAN;
    FL_TRY(fl_fem_energy(w, (int)i, NULL, &el, NULL));
    FL_TRY(fl_fem_von_mises(w, (int)i, NULL, &jmin));
    val[k++] = el;
    val[k++] = jmin;
  }

  // up is against gravity (z when there is none)
  double up[3] = {-w->gravity[0], -w->gravity[1], -w->gravity[2]};
  if (!(fl_v3_normalize(up) > 0)) {
    up[0] = up[1] = 0;
    up[2] = 1;
  }
  for (fl_int gi = 0; gi < w->ngroup; gi++) {
    const fl_obs_group *g = &w->group[gi];
    switch (g->kind) {
    case FL_OBS_STACK: {
      // per interface penetration from the poses; tilt from the start orientation;
      // lateral drift across the up direction; collapsed when any of them is large
      double tilt = 0, lat = 0;
      int collapsed = 0;
      for (fl_int i = 1; i < g->n; i++) {
        double p = NAN;
        if (w->observe_geometry) FL_TRY(pair_penetration(w, g->body[i - 1], g->body[i], &p));
        val[k++] = p;
        const fl_body *b = &w->body[g->body[i]];
        double s = isfinite(b->size) ? b->size : 1;
        if (p > 0.25 * s) collapsed = 1;
      }
      for (fl_int i = 0; i < g->n; i++) {
        const fl_body *b = &w->body[g->body[i]];
        if (b->kind != FL_BODY_DYNAMIC) continue;
        double a = quat_angle(b->quat, b->quat0) * 180 / M_PI;
        double d[3] = {b->pos[0] - b->pos0[0], b->pos[1] - b->pos0[1], b->pos[2] - b->pos0[2]};
        double du = fl_v3_dot(d, up);
        for (int c = 0; c < 3; c++) d[c] -= du * up[c];
        double l = fl_v3_norm(d);
        if (a > tilt) tilt = a;
        if (l > lat) lat = l;
        if (a > 10 || l > 0.25 * b->size) collapsed = 1;
      }
      val[k++] = tilt;
      val[k++] = lat;
      val[k++] = collapsed;
      break;
    }
    case FL_OBS_ARCH: {
      double dmax = 0, rmax = 0;
      for (fl_int i = 0; i < g->n; i++) {
        double d, size;
        if (g->deformable) {
          // a deformable stone: largest vertex displacement, over its rest diameter
          const fl_fem_body *f = w->fem[g->body[i]];
          double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
          d = 0;
          for (fl_int v = 0; v < f->mesh->nvert; v++) {
            double dv[3];
            for (int c = 0; c < 3; c++) {
              dv[c] = f->x[3 * v + c] - f->x_start[3 * v + c];
              lo[c] = fmin(lo[c], f->x_start[3 * v + c]);
              hi[c] = fmax(hi[c], f->x_start[3 * v + c]);
            }
            d = fmax(d, fl_v3_norm(dv));
          }
          double diag[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
          size = fl_v3_norm(diag);
        } else {
          const fl_body *b = &w->body[g->body[i]];
          d = body_displacement(b);
          size = b->size;
        }
        val[k++] = d;
        if (d > dmax) dmax = d;
        if (d / size > rmax) rmax = d / size;
      }
      val[k++] = dmax;
      val[k++] = rmax;
      val[k++] = rmax < 0.01;
      break;
    }
    case FL_OBS_SLOPE: {
      // displacement along the downhill direction against the closed form (docs/scenes.md)
      const fl_body *b = &w->body[g->body[0]];
      const double *dn = g->param;
      double th = g->param[3], mu = g->param[4], gr = g->param[5], t = w->t;
      double ux = (b->pos[0] - b->pos0[0]) * dn[0] + (b->pos[1] - b->pos0[1]) * dn[1] +
                  (b->pos[2] - b->pos0[2]) * dn[2];
      double a = (mu <= 2.0 / 7.0 * tan(th)) ? gr * (sin(th) - mu * cos(th))
                                             : 5.0 / 7.0 * gr * sin(th);
      double ref = 0.5 * a * t * t;
      val[k++] = ux;
      val[k++] = ref;
      val[k++] = ref != 0 ? (ux - ref) / ref : NAN;
      break;
    }
    case FL_OBS_CHAIN: {
      double len = 0, len0 = 0;
      for (fl_int i = 1; i < g->n; i++) {
        const fl_body *a = &w->body[g->body[i - 1]], *b = &w->body[g->body[i]];
        double d[3], d0[3];
        for (int c = 0; c < 3; c++) {
          d[c] = b->pos[c] - a->pos[c];
          d0[c] = b->pos0[c] - a->pos0[c];
        }
        len += fl_v3_norm(d);
        len0 += fl_v3_norm(d0);
      }
      val[k++] = len0 > 0 ? len / len0 - 1 : 0;
      val[k++] = fl_v3_dot(w->body[g->body[g->n - 1]].pos, up);
      break;
    }
    case FL_OBS_COIN: {
      // speed across up, spin about up, eps = v/(|omega| R) (NAN without spin; R the
      // cylinder's radius, else param[0])
      const fl_body *b = &w->body[g->body[0]];
      double vu = fl_v3_dot(b->vel, up), vh[3], wz = fl_v3_dot(b->omega, up);
      for (int c = 0; c < 3; c++) vh[c] = b->vel[c] - vu * up[c];
      double v = fl_v3_norm(vh);
      double R = b->shape.type == FL_SHAPE_CYLINDER ? b->shape.size[0] : g->param[0];
      val[k++] = v;
      val[k++] = wz;
      val[k++] = (fabs(wz) * R > 0) ? v / (fabs(wz) * R) : NAN;
      break;
    }
    case FL_OBS_FORCE:
      for (fl_int i = 0; i < g->n; i++) {
        double f[3];
        contact_force(w, g->body[i], f);
        for (int c = 0; c < 3; c++) val[k++] = f[c];
      }
      break;
    case FL_OBS_POSE:
      break;
    case FL_OBS_PRESS: {
      const fl_body *b = &w->body[g->body[0]];
      double f[3], d[3] = {b->pos[0] - b->pos0[0], b->pos[1] - b->pos0[1], b->pos[2] - b->pos0[2]};
      contact_force(w, g->body[0], f);
      double len = g->param[0] > 0 ? g->param[0] : 1;
      double travel = fl_v3_dot(d, g->param + 1);
      val[k++] = -fl_v3_dot(f, g->param + 1) / len;
      val[k++] = travel;
      double sp = g->param[5]; // support index + 1, 0 for none (any value from a file)
      val[k++] = contact_overlap(w, g->body[0]) +
                 (sp >= 1 && sp <= (double)w->nbody ? contact_overlap(w, (fl_int)sp - 1) : 0);
      if (g->param[4] > 0 && travel > g->param[4])
        return fl_seterr(FL_ERR_STATE, "%s: step %lld, t = %g s: the plate '%s' has travelled "
                         "%g m, more than %g m: it has passed through what it presses",
                         w->name, (long long)w->step, w->t, b->name, travel, g->param[4]);
      break;
    }
    }
  }
  FL_TRY(liftoff(w, &val[k], &val[k + 1]));
  k += 2;
  for (fl_int q = 0; q < m->npose; q++) {
    const fl_body *b = &w->body[m->pose_body[q]];
    for (int c = 0; c < 3; c++) val[k++] = b->pos[c];
    for (int c = 0; c < 4; c++) val[k++] = b->quat[c];
    for (int c = 0; c < 3; c++) val[k++] = b->vel[c];
    for (int c = 0; c < 3; c++) val[k++] = b->omega[c];
  }
  return FL_OK;
}

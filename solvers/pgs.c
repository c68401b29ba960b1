// SPDX-License-Identifier: Apache-2.0
/* pgs.c: projected Gauss-Seidel on the common contact model (SOLVERS.md section 2), on the
 * relaxation library of relax.c (relax.h), which it shares with jacobi.c and gpu/.
 *
 * One iteration is one sweep over the contacts and bilateral rows in the chosen order; each
 * contact is relaxed by the local update of relax.c ("nf" or "block", with over-relaxation
 * omega) and each bilateral row likewise. After each item, global problems update
 * v += (J A^-1)_r^T dgamma_r (a sweep costs O(nnz of J A^-1)); local problems read
 * u_i = W_i gamma + q_i from W's rows. The own residual is relax.c's. The sweeps can be
 * accelerated (NNCG or Anderson mixing, docs/pgs-accel.md).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fl_contact_ops.h"
#include "../problems/fl_rig6.h"
#include "local_kit.h"
#include "relax.h"


//---- pgs ----

enum { ORDER_NATURAL = 0, ORDER_REVERSE = 1, ORDER_SYMMETRIC = 2, ORDER_SHUFFLE = 3, ORDER_COLOUR = 4 };

typedef struct pgs_opts {
  double omega;
  int local;
  int order;
  int residual_every; /* own residual (and the stopping test) every k sweeps and at the last */
  double step_tol;    /* stop when a sweep's ||dgamma|| <= step_tol ||gamma|| (0: never) */
  int accel;          /* ACCEL_NONE, ACCEL_NNCG or ACCEL_ANDERSON */
  int accel_m;        /* Anderson: past iterates kept */
  int accel_guard;    /* GUARD_RESIDUAL, GUARD_STEP or GUARD_NONE */
} pgs_opts;

enum { ACCEL_NONE = 0, ACCEL_NNCG = 1, ACCEL_ANDERSON = 2 };
enum { GUARD_RESIDUAL = 0, GUARD_STEP = 1, GUARD_NONE = 2 };

/* accelerated sweeps' arrays (malloc'd by pgs_setup when accel != none; NULL otherwise);
 * nrow-long: x (the iterate before the sweep), gs (the plain sweep's answer), p (NNCG's
 * direction), f (Anderson: the last sweep step); nv-long (global problems): vx, vs, bp, the
 * velocities of x, of gs and of p (B^T p); Anderson's window: dF, dG (m x nrow), dV
 * (m x nv), their Gram matrix dF^T dF (m x m), rhs (m) and chol (m x m) for its solve */
typedef struct pgs_accel {
  double *x, *gs, *p, *f, *vx, *vs, *bp;
  double *dF, *dG, *dV, *gram, *rhs, *chol;
  int m;
} pgs_accel;

typedef struct pgs_data {
  fl__relax r;
  pgs_accel a;
  long n_extrap, n_refused; /* accel: extrapolations kept, and refused by the guard (or
                               dropped sweeps of the step guard), over the last solve */
  uint64_t rng; /* splitmix64 state for the shuffle, seeded from the common seed */
} pgs_data;

static const fl_option_desc pgs_table[] = {
  {"omega", FL_OPT_REAL, offsetof(pgs_opts, omega), 1e-6, 1.999999, 1.0, NULL,
   "over-relaxation: gamma <- P_K(gamma + omega (gamma_new - gamma)), in (0, 2)"},
  {"local", FL_OPT_ENUM, offsetof(pgs_opts, local), 0, 1, FL_RELAX_NF, "nf|block",
   "local update: nf = normal then friction, block = P_K(gamma - rho uhat), rho = 3/tr W_ii"},
  {"order", FL_OPT_ENUM, offsetof(pgs_opts, order), 0, 4, ORDER_NATURAL,
   "natural|reverse|symmetric|shuffle|colour",
   "sweep order; symmetric = forward then backward in one iteration; shuffle = a new random "
   "permutation every sweep (common seed); colour = by colour of a greedy colouring of the "
   "contact graph (the order pgs-cuda runs in parallel)"},
  {"residual_every", FL_OPT_INT, offsetof(pgs_opts, residual_every), 1, 1000000, 1, NULL,
   "evaluate the own residual, and so test for convergence, after every k-th sweep and the "
   "last of the budget only (the residual costs about one sweep; the iterates are the same, "
   "a converged solve may stop up to k - 1 sweeps later)"},
  {"step_tol", FL_OPT_REAL, offsetof(pgs_opts, step_tol), 0, 1, 0, NULL,
   "stop after a sweep that changed the impulses by at most step_tol times their size "
   "(2-norms; its residual is then evaluated and recorded, reason CONVERGED_STAGNATION_OK); "
   "0 = never (a warm-started step whose impulses settled stops early)"},
  {"accel", FL_OPT_ENUM, offsetof(pgs_opts, accel), 0, 2, ACCEL_NONE, "none|nncg|anderson",
   "acceleration of the sweeps: nncg = nonsmooth nonlinear conjugate gradients (the sweep's "
   "step as the negative gradient, Fletcher-Reeves beta, restart when beta > 1); anderson = "
   "Anderson mixing of the last accel_m sweeps; the extrapolated impulses are projected on "
   "the cones (docs/pgs-accel.md)"},
  {"accel_m", FL_OPT_INT, offsetof(pgs_opts, accel_m), 1, 50, 5, NULL,
   "Anderson: how many past sweeps the mixing uses"},
  {"accel_guard", FL_OPT_ENUM, offsetof(pgs_opts, accel_guard), 0, 2, GUARD_RESIDUAL,
   "residual|step|none",
   "residual = keep an extrapolated iterate only when its own residual is below the last "
   "iterate's, else the plain sweep and a restart (the residual is then evaluated every "
   "sweep, a second time on a refusal; residual_every is not used); step (nncg only) = go "
   "back to the plain sweep's answer when the sweep from an extrapolated iterate made a "
   "larger step than the sweep before it (free; the residual every residual_every sweeps); "
   "none = keep every extrapolation"},
  {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}};


static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}


/* the contacts whose rows in J and B all are the same runs of 6 dofs (a rigid body or two):
 * their sweeps index v directly (fl__pgs_runs: relax.c's test hook) */

static int find_runs(fl_solver *s, fl__relax *r) {
  if (!r->global || r->nc == 0 || !fl__pgs_runs || r->run) return FL_OK;
  r->run = FL_ALLOC(&s->arena, 2 * r->nc, fl_int);
  if (!r->run) return fl_seterr(FL_ERR_NOMEM, "solver pgs: arena too small");
  for (fl_int i = 0; i < r->nc; i++) {
    fl_int d1, d2, r0 = 3 * i, k0 = r->J->rowptr[r0], n = r->J->rowptr[r0 + 1] - k0;
    int ok = fl__relax_row_runs(r->J, r0, &d1, &d2);
    // the other five rows: the same columns as the first
    for (int c = 0; c < 3 && ok; c++) {
      const fl_csr *m[2] = {r->J, r->B};
      for (int q = c == 0; q < 2 && ok; q++) {
        fl_int e0 = m[q]->rowptr[r0 + c];
        ok = m[q]->rowptr[r0 + c + 1] - e0 == n &&
             !memcmp(m[q]->col + e0, r->J->col + k0, (size_t)n * sizeof(fl_int));
      }
    }
    r->run[2 * i] = ok ? d1 : -1;
    r->run[2 * i + 1] = ok ? d2 : -1;
  }
  return FL_OK;
}


static void accel_free(pgs_accel *a) {
  double **b[] = {&a->x, &a->gs, &a->p, &a->f, &a->vx, &a->vs, &a->bp,
                  &a->dF, &a->dG, &a->dV, &a->gram, &a->rhs, &a->chol};
  for (size_t k = 0; k < sizeof b / sizeof b[0]; k++) {
    free(*b[k]);
    *b[k] = NULL;
  }
  a->m = 0;
}


/* the accelerated sweeps' arrays (pgs_accel), outside the arena so that the plain solve's
 * memory is unchanged */
static int accel_alloc(pgs_data *d, const pgs_opts *o) {
  pgs_accel *a = &d->a;
  accel_free(a);
  if (o->accel == ACCEL_NONE) return FL_OK;
  const fl__relax *r = &d->r;
  size_t n = (size_t)r->nrow + 1, nv = (size_t)(r->global ? r->nv : 0) + 1;
  size_t m = o->accel == ACCEL_ANDERSON ? (size_t)o->accel_m : 0;
  a->m = (int)m;
  a->x = malloc(n * sizeof(double));
  a->gs = malloc(n * sizeof(double));
  a->p = malloc(n * sizeof(double));
  a->f = malloc(n * sizeof(double));
  a->vx = malloc(nv * sizeof(double));
  a->vs = malloc(nv * sizeof(double));
  a->bp = malloc(nv * sizeof(double));
  int ok = a->x && a->gs && a->p && a->f && a->vx && a->vs && a->bp;
  if (ok && m > 0) {
    a->dF = malloc(m * n * sizeof(double));
    a->dG = malloc(m * n * sizeof(double));
    a->dV = malloc(m * nv * sizeof(double));
    a->gram = malloc(m * m * sizeof(double));
    a->rhs = malloc(m * sizeof(double));
    a->chol = malloc(m * m * sizeof(double));
    ok = a->dF && a->dG && a->dV && a->gram && a->rhs && a->chol;
  }
  if (!ok) {
    accel_free(a);
    return fl_seterr(FL_ERR_NOMEM, "solver pgs: accel: out of memory for %d rows, %d dofs",
                     (int)r->nrow, (int)r->nv);
  }
  return FL_OK;
}


static int pgs_setup(fl_solver *s, const fl_problem *p) {
  pgs_data *d = s->data;
  const pgs_opts *o = s->opts;
  FL_TRY(fl__relax_setup_core(s, p, &d->r, o->local, s->common.norm));
  FL_TRY(find_runs(s, &d->r));
  if (o->accel == ACCEL_ANDERSON && o->accel_guard == GUARD_STEP)
    return fl_seterr(FL_ERR_INVAL, "solver pgs: accel_guard=step is for accel=nncg; "
                                   "anderson takes accel_guard=residual or none");
  FL_TRY(accel_alloc(d, o));
  return o->order == ORDER_COLOUR ? fl__relax_colour(&d->r) : FL_OK;
}




/* pgs_item for a contact with runs (find_runs): the same sums in the same order as
 * fl__row_dot and fl__row_axpy over the runs' columns, without the column indices */
static inline __attribute__((always_inline)) double pgs_contact_runs(fl__relax *r, fl_int it,
                                                                      double omega, double *v,
                                                                      double *gamma) {
  fl_int r0 = 3 * it, d1 = r->run[2 * it], d2 = r->run[2 * it + 1];
  const double *jv = r->J->val, *bv = r->B->val;
  double *v1 = v + d1, *v2 = d2 >= 0 ? v + d2 : NULL;
  double u[3], nw[3];
  for (int c = 0; c < 3; c++) {
    const double *j = jv + r->J->rowptr[r0 + c];
    double acc = 0;
    DOT6(acc, j, v1);
    if (v2) DOT6(acc, j + 6, v2);
    u[c] = acc + (r->cq ? r->cq[r0 + c] : 0.0);
  }
  double *g = gamma + r0;
  // fl__relax_contact and fl__relax_apply_omega, inlined
  double mu = r->p->mu[it];
  if (r->variant == FL_RELAX_BLOCK)
    fl_hd_relax_block(mu, r->Rn[it], r->vhat[it], r->rho[it], u, g, nw);
  else
    fl_hd_relax_nf(r->Wd + 9 * it, mu, r->Rn[it], r->vhat[it], r->lt[it], u, g, nw);
  if (omega != 1.0) fl_hd_apply_omega(mu, omega, g, nw);
  double d2s = 0;
  for (int c = 0; c < 3; c++) {
    double dg = nw[c] - g[c];
    if (dg == 0.0) continue;
    g[c] = nw[c];
    d2s += dg * dg;
    const double *b = bv + r->B->rowptr[r0 + c];
    AXPY6(v1, dg, b);
    if (v2) AXPY6(v2, dg, b + 6);
  }
  return d2s;
}


/* relaxes one item (contact or bilateral row) and keeps v = v* + A^-1 J^T gamma; returns
 * ||dgamma||^2 */
static double pgs_item(fl__relax *r, fl_int it, double omega, double *v, double *gamma) {
  if (it < r->nc && r->run && r->run[2 * it] >= 0) return pgs_contact_runs(r, it, omega, v, gamma);
  if (it < r->nc) {
    fl_int r0 = 3 * it;
    double u[3], nw[3];
    for (int c = 0; c < 3; c++)
      u[c] = (r->global ? fl__row_dot(r->J, r0 + c, v) : fl__row_dot(r->W, r0 + c, gamma)) +
             (r->cq ? r->cq[r0 + c] : 0.0);
    double *g = gamma + r0;
    fl__relax_contact(r, it, u, g, nw);
    fl__relax_apply_omega(r, it, omega, g, nw);
    double d2 = 0;
    for (int c = 0; c < 3; c++) {
      double dg = nw[c] - g[c];
      if (dg == 0.0) continue;
      g[c] = nw[c];
      d2 += dg * dg;
      if (r->global) fl__row_axpy(r->B, r0 + c, dg, v);
    }
    return d2;
  }
  fl_int h = it - r->nc, row = 3 * r->nc + h;
  double uh = (r->global ? fl__row_dot(r->J, row, v) : 0.0) + (r->cq ? r->cq[row] : 0.0);
  double g = gamma[row];
  double nw = fl__relax_row(r, h, uh, g);
  if (omega != 1.0) nw = fl__relax_clamp_row(r, h, g + omega * (nw - g));
  double dg = nw - g;
  if (dg == 0.0) return 0.0;
  gamma[row] = nw;
  if (r->global) fl__row_axpy(r->B, row, dg, v);
  return dg * dg;
}


static int pgs_solve_accel(fl_solver *s, double *v, double *gamma, fl_iter_stat *st0);


static int pgs_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  pgs_data *d = s->data;
  const pgs_opts *o = s->opts;
  fl__relax *r = &d->r;
  fl_int nitem = r->nc + r->nh;
  d->rng = (uint64_t)s->common.seed * 0x2545F4914F6CDD1Dull + 1u;
  for (fl_int k = 0; k < nitem; k++)
    r->order[k] = o->order == ORDER_COLOUR ? r->colour_items[k] : k;
  for (fl_int i = 0; i < r->nc; i++) r->mode[i] = 0;

  //---- iteration 0: the guess ----
  fl__relax_start(r, v, gamma);
  s->cur_v = r->global ? v : NULL;
  s->cur_gamma = gamma;
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  fl__relax_residual(r, v, gamma, &st);
  if (o->accel != ACCEL_NONE) {
    d->n_extrap = d->n_refused = 0;
    return pgs_solve_accel(s, v, gamma, &st);
  }
  if (fl_solver_record(s, &st) != 0) return s->reason == FL_REASON_ABORT ? s->abort_code : FL_OK;

  for (int k = 1;; k++) {
    //---- sweep ----
    double d2 = 0;
    if (o->order == ORDER_SHUFFLE) {
      // Fisher-Yates with the solver's own generator
      for (fl_int a = nitem - 1; a > 0; a--) {
        fl_int b = (fl_int)(splitmix64(&d->rng) % (uint64_t)(a + 1));
        fl_int t = r->order[a];
        r->order[a] = r->order[b];
        r->order[b] = t;
      }
    }
    if (o->order != ORDER_REVERSE)
      for (fl_int a = 0; a < nitem; a++) {
        // a contact with runs here, without the call (pgs_item does the same)
        fl_int it = r->order[a];
        d2 += it < r->nc && r->run && r->run[2 * it] >= 0
                  ? pgs_contact_runs(r, it, o->omega, v, gamma)
                  : pgs_item(r, it, o->omega, v, gamma);
      }
    if (o->order == ORDER_REVERSE || o->order == ORDER_SYMMETRIC)
      for (fl_int a = nitem - 1; a >= 0; a--) d2 += pgs_item(r, r->order[a], o->omega, v, gamma);

    //---- record and test ----
    int settled = 0;
    if (o->step_tol > 0 && !s->common.never_stop) {
      double g2 = 0;
      for (fl_int q = 0; q < r->nrow; q++) g2 += gamma[q] * gamma[q];
      settled = d2 <= o->step_tol * o->step_tol * g2;
    }
    if (!settled && k % o->residual_every != 0 && k < s->common.max_iter) continue;
    fl_iter_stat_init(&st, k);
    fl__relax_residual(r, v, gamma, &st);
    st.step = o->omega;
    st.step_norm = sqrt(d2);
    if (fl_solver_record(s, &st) != 0) break;
    if (settled) {
      s->reason = FL_CONVERGED_STAGNATION_OK;
      break;
    }
  }
  return s->reason == FL_REASON_ABORT ? s->abort_code : FL_OK;
}


//---- accelerated sweeps (accel = nncg | anderson) ----

/* one sweep, as pgs_solve's loop makes it; returns ||dgamma||^2 */
static double pgs_sweep(pgs_data *d, const pgs_opts *o, double *v, double *gamma) {
  fl__relax *r = &d->r;
  fl_int nitem = r->nc + r->nh;
  double d2 = 0;
  if (o->order == ORDER_SHUFFLE)
    for (fl_int a = nitem - 1; a > 0; a--) {
      fl_int b = (fl_int)(splitmix64(&d->rng) % (uint64_t)(a + 1));
      fl_int t = r->order[a];
      r->order[a] = r->order[b];
      r->order[b] = t;
    }
  if (o->order != ORDER_REVERSE)
    for (fl_int a = 0; a < nitem; a++) d2 += pgs_item(r, r->order[a], o->omega, v, gamma);
  if (o->order == ORDER_REVERSE || o->order == ORDER_SYMMETRIC)
    for (fl_int a = nitem - 1; a >= 0; a--) d2 += pgs_item(r, r->order[a], o->omega, v, gamma);
  return d2;
}


/* gamma <- its projection on the cones and the rows' bounds; global problems keep
 * v = v* + B^T gamma by adding the rows of B of the entries that moved */
static void accel_project(const fl__relax *r, double *v, double *gamma) {
  for (fl_int i = 0; i < r->nc; i++) {
    double *g = gamma + 3 * i, z[3], mu = r->p->mu[i];
    // well inside the cone (the most): nothing to do, without hypot
    double mgn = mu * g[0];
    if (g[0] >= 0.0 && g[1] * g[1] + g[2] * g[2] <= 0.999 * mgn * mgn) continue;
    fl_hd_cone_project(mu, g, z);
    for (int c = 0; c < 3; c++) {
      double dz = z[c] - g[c];
      if (dz == 0.0) continue;
      g[c] = z[c];
      if (r->global) fl__row_axpy(r->B, 3 * i + c, dz, v);
    }
  }
  for (fl_int h = 0; h < r->nh; h++) {
    fl_int row = 3 * r->nc + h;
    double z = fl__relax_clamp_row(r, h, gamma[row]), dz = z - gamma[row];
    if (dz == 0.0) continue;
    gamma[row] = z;
    if (r->global) fl__row_axpy(r->B, row, dz, v);
  }
}


static double dot(const double *a, const double *b, fl_int n) {
  double s = 0;
  for (fl_int k = 0; k < n; k++) s += a[k] * b[k];
  return s;
}


/* Anderson (type II) on the sweep map G: with f = G(x) - x and the window's differences
 * dF_j = f_{j+1} - f_j, dG_j = G(x_{j+1}) - G(x_j), gamma <- G(x) - dG c where c minimizes
 * ||f - dF c|| (normal equations, Tikhonov 1e-10 of the trace); v the same with dV. Adds the
 * newest pair first. 1 when gamma and v were extrapolated, 0 when not (empty window or a
 * singular system: gamma and v stay the plain sweep's). */
static int anderson_step(pgs_data *d, fl_int nrow, fl_int nv, int *count, double *v,
                         double *gamma) {
  pgs_accel *a = &d->a;
  int m = a->m;
  size_t n = (size_t)nrow + 1, nvv = (size_t)nv + 1;
  // the newest pair, from the last sweep's f and plain answer (a->f, a->gs, a->vs)
  if (*count >= 0) {
    int slot = *count % m;
    double *df = a->dF + slot * n, *dg = a->dG + slot * n, *dv = a->dV + slot * nvv;
    for (fl_int q = 0; q < nrow; q++) {
      double fq = gamma[q] - a->x[q];
      df[q] = fq - a->f[q];
      dg[q] = gamma[q] - a->gs[q];
    }
    for (fl_int k = 0; k < nv; k++) dv[k] = v[k] - a->vs[k];
    int nvalid = *count + 1 < m ? *count + 1 : m;
    for (int j = 0; j < nvalid; j++) {
      double gj = dot(df, a->dF + j * n, nrow);
      a->gram[slot * m + j] = gj;
      a->gram[j * m + slot] = gj;
    }
  }
  // this sweep's f and plain answer, for the next pair
  for (fl_int q = 0; q < nrow; q++) {
    a->f[q] = gamma[q] - a->x[q];
    a->gs[q] = gamma[q];
  }
  if (nv > 0) memcpy(a->vs, v, (size_t)nv * sizeof *v);
  (*count)++;
  int nvalid = *count < m ? *count : m;
  if (*count <= 0 || nvalid == 0) return 0;
  double tr = 0;
  for (int j = 0; j < nvalid; j++) tr += a->gram[j * m + j];
  if (!(tr > 0) || !isfinite(tr)) return 0;
  for (int i = 0; i < nvalid; i++) {
    for (int j = 0; j < nvalid; j++) a->chol[i * nvalid + j] = a->gram[i * m + j];
    a->chol[i * nvalid + i] += 1e-10 * tr;
    a->rhs[i] = dot(a->dF + i * n, a->f, nrow);
  }
  if (fl_chol_factor(a->chol, nvalid) < 0) return 0;
  fl_chol_solve(a->chol, nvalid, a->rhs);
  for (int j = 0; j < nvalid; j++) {
    double c = a->rhs[j];
    if (!isfinite(c)) return 0;
  }
  for (int j = 0; j < nvalid; j++) {
    double c = a->rhs[j];
    const double *dg = a->dG + j * n, *dv = a->dV + j * nvv;
    for (fl_int q = 0; q < nrow; q++) gamma[q] -= c * dg[q];
    for (fl_int k = 0; k < nv; k++) v[k] -= c * dv[k];
  }
  return 1;
}


/* pgs_solve with accel != none: each iteration is one sweep x -> G(x), then an
 * extrapolation projected on the cones. accel_guard = residual: kept only if the own residual
 * fell below the last iterate's, else the plain sweep G(x) and a restart; step (NNCG): when
 * the next sweep's step grows (beta > 1) after an extrapolation, that sweep is dropped and
 * the iterate goes back to the plain G(x) before the extrapolation, and a restart */
static int pgs_solve_accel(fl_solver *s, double *v, double *gamma, fl_iter_stat *st0) {
  pgs_data *d = s->data;
  const pgs_opts *o = s->opts;
  fl__relax *r = &d->r;
  pgs_accel *a = &d->a;
  fl_int nrow = r->nrow, nv = r->global ? r->nv : 0;
  fl_iter_stat st = *st0; // iteration 0, evaluated by pgs_solve
  if (fl_solver_record(s, &st) != 0) return s->reason == FL_REASON_ABORT ? s->abort_code : FL_OK;
  double err_last = st.error, d2_last = 0;
  int have_dir = 0, count = -1; // NNCG: p holds a direction; Anderson: pairs made (-1: none)
  int guard_res = o->accel_guard == GUARD_RESIDUAL, guard_step = o->accel_guard == GUARD_STEP;
  int prev_extrap = 0; // NNCG: the last iteration kept an extrapolated iterate
  memcpy(a->x, gamma, (size_t)nrow * sizeof *gamma);
  if (nv > 0) memcpy(a->vx, v, (size_t)nv * sizeof *v);
  for (int k = 1;; k++) {
    double d2 = pgs_sweep(d, o, v, gamma);
    int extrap = 0, reverted = 0;
    if (o->accel == ACCEL_NNCG) {
      // Fletcher-Reeves beta on the sweep steps; restart (plain step) when it exceeds 1
      double beta = have_dir && d2_last > 0 ? d2 / d2_last : INFINITY;
      if (guard_step && prev_extrap && beta > 1.0) {
        // the sweep from the extrapolated iterate grew: back to the plain answer before it
        memcpy(gamma, a->gs, (size_t)nrow * sizeof *gamma);
        if (nv > 0) memcpy(v, a->vs, (size_t)nv * sizeof *v);
        reverted = 1;
      } else {
        d2_last = d2;
      }
      prev_extrap = 0;
      if (!reverted && beta <= 1.0) {
        prev_extrap = 1;
        if (guard_res || guard_step) {
          memcpy(a->gs, gamma, (size_t)nrow * sizeof *gamma);
          if (nv > 0) memcpy(a->vs, v, (size_t)nv * sizeof *v);
        }
        for (fl_int q = 0; q < nrow; q++) gamma[q] += beta * a->p[q];
        for (fl_int kk = 0; kk < nv; kk++) v[kk] += beta * a->bp[kk];
        extrap = 1;
      }
    } else {
      extrap = anderson_step(d, nrow, nv, &count, v, gamma);
    }
    if (extrap) accel_project(r, v, gamma);

    //---- record, test, and the guard ----
    int settled = 0; // step_tol on the plain sweep's step, as pgs_solve tests it
    if (o->step_tol > 0 && !s->common.never_stop) {
      double g2 = 0;
      for (fl_int q = 0; q < nrow; q++) g2 += gamma[q] * gamma[q];
      settled = d2 <= o->step_tol * o->step_tol * g2;
    }
    int eval = settled || guard_res || k % o->residual_every == 0 ||
               k >= s->common.max_iter;
    int neval = 0, refused = reverted;
    if (eval) {
      fl_iter_stat_init(&st, k);
      fl__relax_residual(r, v, gamma, &st);
      neval = 1;
      if (extrap && guard_res && !(st.error <= err_last)) {
        // refused: the plain sweep's answer, and a restart
        memcpy(gamma, a->gs, (size_t)nrow * sizeof *gamma);
        if (nv > 0) memcpy(v, a->vs, (size_t)nv * sizeof *v);
        fl_iter_stat_init(&st, k);
        fl__relax_residual(r, v, gamma, &st);
        neval = 2;
        refused = 1;
        extrap = 0;
        count = count > 0 ? 0 : count; // Anderson: the window starts again
      }
    }
    // NNCG's next direction: the step taken (the plain sweep's after a restart or refusal)
    // and the iterate the next sweep starts from (a->x, a->vx)
    if (o->accel == ACCEL_NNCG) {
      for (fl_int q = 0; q < nrow; q++) {
        a->p[q] = gamma[q] - a->x[q];
        a->x[q] = gamma[q];
      }
      for (fl_int kk = 0; kk < nv; kk++) {
        a->bp[kk] = v[kk] - a->vx[kk];
        a->vx[kk] = v[kk];
      }
      have_dir = !refused;
    } else {
      memcpy(a->x, gamma, (size_t)nrow * sizeof *gamma);
      if (nv > 0) memcpy(a->vx, v, (size_t)nv * sizeof *v);
    }
    d->n_extrap += extrap;
    d->n_refused += refused;
    if (!eval) continue;
    err_last = st.error;
    st.step = o->omega;
    st.step_norm = sqrt(d2);
    st.neval = neval;
    st.inner_iters = extrap + 2 * refused; // 1 kept, 2 refused, 0 plain (restart)
    if (fl_solver_record(s, &st) != 0) break;
    if (settled) {
      s->reason = FL_CONVERGED_STAGNATION_OK;
      break;
    }
  }
  return s->reason == FL_REASON_ABORT ? s->abort_code : FL_OK;
}


static void pgs_view(const fl_solver *s, FILE *f) {
  const pgs_data *d = s->data;
  fprintf(f, "  pgs: %s%s, %d contacts, %d bilateral rows, ||q|| = %g\n",
          d->r.global ? "velocity-based on A, J (W never formed)" : "on W, q",
          d->r.Bown ? ", J A^-1 by the rigid bodies' set-up" : "", (int)d->r.nc, (int)d->r.nh,
          d->r.norm_q);
  const pgs_opts *o = s->opts;
  if (o->accel != ACCEL_NONE)
    fprintf(f, "  pgs accel %s: %ld extrapolations kept, %ld refused by the guard\n",
            o->accel == ACCEL_NNCG ? "nncg" : "anderson", d->n_extrap, d->n_refused);
}


static void pgs_destroy(fl_solver *s) {
  pgs_data *d = s->data;
  fl__relax_free(&d->r);
  accel_free(&d->a);
}


const fl_solver_ops fl_pgs_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "pgs",
  .summary = "projected Gauss-Seidel, velocity-based (W never formed); rigid, compliant, "
             "bilateral",
  .opts_size = sizeof(pgs_opts),
  .options = pgs_table,
  .data_size = sizeof(pgs_data),
  .caps = FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_BILATERAL | FL_CAP_LOCAL | FL_CAP_WARMSTART |
          FL_CAP_V_FROM_GAMMA,
  .setup = pgs_setup,
  .solve = pgs_solve,
  .view = pgs_view,
  .destroy = pgs_destroy,
  .common_defaults = NULL,
};

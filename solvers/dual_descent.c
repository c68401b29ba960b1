// SPDX-License-Identifier: Apache-2.0
/* dual_descent.c: projected, diagonally preconditioned ascent on the dual problem, the
 * velocity-level form of Jacobi XPBD (thesis chapter 5, eqs. 117-125, Algorithm 3).
 *
 * Per row r (contact normal, two friction rows, bilateral rows), with u = J v + b:
 *
 *   h_n = -(u_n - vhat_n + R_n gamma_n)      (R_n = 1/(dt k (dt + tau_d)): the compliance K^-1
 *                                              in impulse units; 0 for rigid contact)
 *   h_t = -u_t                                (no slip wanted; the cone projection limits it)
 *   h_h = -(u_h + g0/dt + c gamma_h)
 *   P_r = 1 / (W_rr + R_r)                    (eq. 122 with W = J A^-1 J^T, the dt^2 absorbed
 *                                              by working with impulses)
 *   gamma <- Pi(gamma + alpha_r P h)          (Pi: gamma_n >= 0, ||gamma_t|| <= mu gamma_n,
 *                                              bounds of bilateral rows)
 *   v <- v* + A^-1 J^T gamma   (absolute, eq. 124) or v <- v + A^-1 J^T dgamma (incremental,
 *                                              XPBD). For this linearized problem the two agree
 *                                              up to round-off; they differ in the thesis only
 *                                              because constraints are re-linearized there.
 *
 * alpha_r defaults to mass splitting (Tonge et al. 2012): 1 / (largest number of contacts and
 * bilateral constraints on either clique of the row). All rows update from the same iterate
 * (Jacobi), so the sweep is parallel. Local problems (W, q only) work with u = W gamma + q.
 * Own residual: the natural map with De Saxce's correction of the current iterate (raw).
 * Divergence: the common test stops with DIVERGED_GROWTH (residual above FL_GROWTH_MAX times
 * its start) or DIVERGED_NAN; the solve then returns the iterate of least residual, which is
 * finite, so a diverging Jacobi never hands out NaN or Inf.
 */
#include <math.h>
#include <string.h>

#include "../core/fl_contact_ops.h"
#include "fl_solver_impl.h"

typedef struct {
  double alpha; /* step length; 0 = mass splitting */
  int update;   /* 0 absolute, 1 incremental */
} dd_opts;

static const fl_option_desc dd_table[] = {
  {"alpha", FL_OPT_REAL, offsetof(dd_opts, alpha), 0, 2, 0, NULL,
   "step length; 0 = mass splitting 1/(constraints on the busier clique)"},
  {"update", FL_OPT_ENUM, offsetof(dd_opts, update), 0, 0, 0, "absolute|incremental",
   "primal update: v = v* + A^-1 J^T gamma, or v += A^-1 J^T dgamma"},
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}};

typedef struct {
  fl_dynamics *dyn; /* owned (global problems) */
  const fl_csr *B;  /* J A^-1 rows, owned by dyn */
  double *wdiag;    /* (m) W_rr */
  double *rreg;     /* (m) R_r */
  double *vhat;     /* (nc) */
  double *step;     /* (m) alpha_r P_r */
  double *u;        /* (m) */
  double *dg;       /* (m) gamma increment */
  double *best;     /* (m) the iterate of least residual, returned when the solve diverges */
} dd_data;


static void dd_destroy(fl_solver *s) {
  dd_data *w = s->data;
  if (!w) return;
  fl_dynamics_free(w->dyn);
  w->dyn = NULL;
}


static int dd_setup(fl_solver *s, const fl_problem *p) {
  dd_data *w = s->data;
  const dd_opts *o = s->opts;
  fl_int m = fl_problem_nrows(p), nc = p->nc;
  size_t bytes = (size_t)(6 * m + nc + 9 * nc + p->ncl + p->nh + 64) * sizeof(double) + 512;
  FL_TRY(fl_solver_arena_reserve(s, bytes));
  fl_arena *a = &s->arena;
  w->wdiag = FL_ALLOC(a, m, double);
  w->rreg = FL_ALLOC(a, m, double);
  w->vhat = FL_ALLOC(a, nc, double);
  w->step = FL_ALLOC(a, m, double);
  w->u = FL_ALLOC(a, m, double);
  w->dg = FL_ALLOC(a, m, double);
  w->best = FL_ALLOC(a, m, double);
  double *blocks = FL_ALLOC(a, 9 * (size_t)nc, double);
  if (!w->wdiag || !w->rreg || !w->vhat || !w->step || !w->u || !w->dg || !w->best || !blocks)
    return FL_ERR_NOMEM;

  //---- Delassus diagonal ----
  if (p->kind == FL_PROBLEM_GLOBAL) {
    FL_TRY(fl_dynamics_create(p, &w->dyn));
    w->B = fl_dynamics_JAinv(w->dyn);
    if (!w->B) return fl_errcode() < 0 ? fl_errcode() : FL_ERR_NOMEM;
    FL_TRY(fl_dynamics_delassus_blocks(w->dyn, blocks, w->wdiag + 3 * nc));
    for (fl_int i = 0; i < nc; i++)
      for (int k = 0; k < 3; k++) w->wdiag[3 * i + k] = blocks[9 * i + 4 * k];
  } else {
    for (fl_int r = 0; r < m; r++) w->wdiag[r] = fl_csr_get(p->W, r, r);
  }

  //---- regularization, bias and step lengths ----
  for (fl_int i = 0; i < nc; i++) {
    double Rn, vh;
    fl_problem_normal_law(p, i, &Rn, &vh);
    w->rreg[3 * i] = Rn;
    w->rreg[3 * i + 1] = w->rreg[3 * i + 2] = 0;
    w->vhat[i] = vh;
  }
  for (fl_int h = 0; h < p->nh; h++) w->rreg[3 * nc + h] = p->compliance[h];

  // mass splitting: constraints per clique (contacts count once; local problems: 1)
  int *count = NULL;
  if (p->kind == FL_PROBLEM_GLOBAL && p->ncl > 0) {
    count = FL_ALLOC(a, p->ncl, int);
    if (!count) return FL_ERR_NOMEM;
    memset(count, 0, (size_t)p->ncl * sizeof(int));
    for (fl_int i = 0; i < nc; i++) {
      if (p->clique_a[i] >= 0) count[p->clique_a[i]]++;
      if (p->clique_b[i] >= 0) count[p->clique_b[i]]++;
    }
    // bilateral rows: each counts on every clique it touches
    for (fl_int h = 0; h < p->nh; h++) {
      fl_int row = 3 * nc + h, last = -1;
      for (fl_int q = p->J->rowptr[row]; q < p->J->rowptr[row + 1]; q++) {
        fl_int c = p->dof_clique[p->J->col[q]];
        if (c != last) count[c]++;
        last = c;
      }
    }
  }
  for (fl_int r = 0; r < m; r++) {
    double alpha = o->alpha;
    if (alpha == 0) {
      int n = 1;
      if (count && r < 3 * nc) {
        fl_int i = r / 3;
        if (p->clique_a[i] >= 0 && count[p->clique_a[i]] > n) n = count[p->clique_a[i]];
        if (p->clique_b[i] >= 0 && count[p->clique_b[i]] > n) n = count[p->clique_b[i]];
      } else if (count) {
        for (fl_int q = p->J->rowptr[r]; q < p->J->rowptr[r + 1]; q++) {
          int c = count[p->dof_clique[p->J->col[q]]];
          if (c > n) n = c;
        }
      }
      alpha = 1.0 / n;
    }
    double den = w->wdiag[r] + w->rreg[r];
    w->step[r] = den > 0 ? alpha / den : 0;
  }
  return FL_OK;
}


/* natural map with De Saxce's correction of (gamma, u), raw 2-norm, plus bilateral rows */
static double dd_residual(const fl_problem *p, const dd_data *w, const double *gamma,
                          const double *u) {
  double sum = 0;
  for (fl_int i = 0; i < p->nc; i++) {
    const double *g = gamma + 3 * i, *ui = u + 3 * i;
    double ut = hypot(ui[1], ui[2]);
    double uh[3] = {ui[0] - w->vhat[i] + w->rreg[3 * i] * g[0] + p->mu[i] * ut, ui[1], ui[2]};
    double x[3] = {g[0] - uh[0], g[1] - uh[1], g[2] - uh[2]}, px[3];
    fl_cone_project(p->mu[i], x, px);
    for (int k = 0; k < 3; k++) sum += (g[k] - px[k]) * (g[k] - px[k]);
  }
  for (fl_int h = 0; h < p->nh; h++) {
    fl_int r = 3 * p->nc + h;
    double e = u[r] + p->g0[h] / p->dt + p->compliance[h] * gamma[r];
    double x = gamma[r] - e;
    x = x < p->lo[h] ? p->lo[h] : x > p->hi[h] ? p->hi[h] : x;
    sum += (gamma[r] - x) * (gamma[r] - x);
  }
  return sqrt(sum);
}


static int dd_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  dd_data *w = s->data;
  const dd_opts *o = s->opts;
  fl_int nc = p->nc, m = fl_problem_nrows(p);
  int global = p->kind == FL_PROBLEM_GLOBAL;

  // a consistent start: v = v* + A^-1 J^T gamma for the incoming gamma
  if (global) {
    memcpy(v, p->vstar, (size_t)p->nv * sizeof(double));
    fl_csr_gemtv(w->B, 1, gamma, 1, v);
  }
  double last_step = NAN, best_err = INFINITY;
  for (int k = 0;; k++) {
    //---- velocities of the current iterate, its residual, record ----
    fl_problem_velocity(p, v, gamma, w->u);
    fl_iter_stat st;
    fl_iter_stat_init(&st, k);
    st.error = dd_residual(p, w, gamma, w->u);
    st.step_norm = last_step;
    int nact = 0;
    for (fl_int i = 0; i < nc; i++) nact += gamma[3 * i] > 0;
    st.nactive = nact;
    s->cur_v = global ? v : NULL;
    s->cur_gamma = gamma;
    if (st.error < best_err) {
      best_err = st.error;
      memcpy(w->best, gamma, (size_t)m * sizeof(double));
    }
    if (fl_solver_record(s, &st) != 0) break;

    //---- Jacobi ascent step with projection ----
    double sn = 0;
    for (fl_int i = 0; i < nc; i++) {
      double *g = gamma + 3 * i, *ui = w->u + 3 * i, *st3 = w->step + 3 * i;
      double g0[3] = {g[0], g[1], g[2]};
      double gn = g[0] - st3[0] * (ui[0] - w->vhat[i] + w->rreg[3 * i] * g[0]);
      gn = gn > 0 ? gn : 0;
      double gt1 = g[1] - st3[1] * ui[1], gt2 = g[2] - st3[2] * ui[2];
      fl_hd_disk_clamp(p->mu[i] * gn, &gt1, &gt2);
      g[0] = gn;
      g[1] = gt1;
      g[2] = gt2;
      for (int q = 0; q < 3; q++) {
        w->dg[3 * i + q] = g[q] - g0[q];
        sn += w->dg[3 * i + q] * w->dg[3 * i + q];
      }
    }
    for (fl_int h = 0; h < p->nh; h++) {
      fl_int r = 3 * nc + h;
      double e = w->u[r] + p->g0[h] / p->dt + p->compliance[h] * gamma[r];
      double g = gamma[r] - w->step[r] * e;
      g = g < p->lo[h] ? p->lo[h] : g > p->hi[h] ? p->hi[h] : g;
      w->dg[r] = g - gamma[r];
      sn += w->dg[r] * w->dg[r];
      gamma[r] = g;
    }
    last_step = sqrt(sn);

    //---- primal update ----
    if (global) {
      if (o->update == 1) {
        fl_csr_gemtv(w->B, 1, w->dg, 1, v);
      } else {
        memcpy(v, p->vstar, (size_t)p->nv * sizeof(double));
        fl_csr_gemtv(w->B, 1, gamma, 1, v);
      }
    }
  }
  // diverged (residual NaN or grown FL_GROWTH_MAX-fold, fl_solver_record's test): hand out
  // the best finite iterate, not the blown-up one; the negative reason stays
  int reason = s->reason;
  if ((reason == FL_DIVERGED_NAN || reason == FL_DIVERGED_GROWTH) && isfinite(best_err)) {
    memcpy(gamma, w->best, (size_t)m * sizeof(double));
    if (global) {
      memcpy(v, p->vstar, (size_t)p->nv * sizeof(double));
      fl_csr_gemtv(w->B, 1, gamma, 1, v);
    }
    // one more record, so that the history ends with (and the final metrics are of) the
    // returned iterate; the reason stays the divergence
    fl_problem_velocity(p, v, gamma, w->u);
    fl_iter_stat st;
    fl_iter_stat_init(&st, s->iters + 1);
    st.error = best_err;
    st.step_norm = 0;
    if (fl_solver_record(s, &st) == FL_REASON_ABORT) return s->abort_code;
    s->reason = reason;
  }
  return FL_OK;
}


static void dd_view(const fl_solver *s, FILE *f) {
  const dd_opts *o = s->opts;
  fprintf(f, "  dual descent: step %s, %s primal update\n",
          o->alpha == 0 ? "mass splitting" : "fixed", o->update ? "incremental" : "absolute");
}


const fl_solver_ops fl_dual_descent_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "dual-descent",
  .summary = "Jacobi XPBD-style projected dual ascent with mass splitting (Macklin 2020)",
  .opts_size = sizeof(dd_opts),
  .options = dd_table,
  .data_size = sizeof(dd_data),
  .caps = FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_BILATERAL | FL_CAP_LOCAL | FL_CAP_WARMSTART,
  .setup = dd_setup,
  .solve = dd_solve,
  .view = dd_view,
  .destroy = dd_destroy,
  .common_defaults = "max_iter=20,never_stop=true",
};

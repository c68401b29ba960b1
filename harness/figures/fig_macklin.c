// SPDX-License-Identifier: Apache-2.0
/* fig_macklin.c: the non-smooth Newton experiments of thesis chapter 4 (solver "nsn").
 *
 *   macklin-fig15  four iterative linear solvers on one captured Newton system, two scenes
 *   macklin-fig18  NCP preconditioning (identity, time step, effective mass) per Newton
 *                  iteration of one step: parabolic arch, table pile, heavy stack
 *   macklin-fig19  inner linear solver per Newton iteration (40 inner iterations), same scenes
 *   macklin-fig20  arch and heavy stack over time by inner linear solver
 *   macklin-fig22  quartiles of the error per Newton iteration over many steps, identity
 *                  against effective-mass scaling (PCR, 40 inner iterations)
 *
 * One-step figures (15, 18, 19) run the scene with nsn's defaults for a warm-up (0.5 s, 0.1 s
 * with --quick; the table pile 2 s, 1 s, so that its tables have landed), prepare the next
 * step and analyse that one problem. The seed used a flexible
 * beam for Fig. 22, which FrictionLab does not have; the heavy stack stands in (said in the
 * summary). Nothing is tuned to agree with the seed: summaries report what was measured.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../../sim/fl_loop.h"
#include "../../sim/fl_world.h"
#include "../../solvers/fl_lin.h"
#include "fl_figure.h"
#include "../run/fl_run.h"

/* The figures' tables, each declared once (header and rows from one column list). */
typedef struct hist_row {
  int iter;
  double residual, natural; /* relative to the first iteration's */
} hist_row;                 /* fig15_<scene>_<solver>.csv */
static const fl_csv_col hist_cols[] = {{"iter", FL_CSV_INT, offsetof(hist_row, iter), 0},
                                       {"residual", FL_CSV_G, offsetof(hist_row, residual), 10},
                                       {"natural", FL_CSV_G, offsetof(hist_row, natural), 10}};
typedef struct quart_row {
  int iter;
  double q[3]; /* the error's quartiles 25, 50, 75 (m/s) */
} quart_row;   /* fig22_<variant>.csv */
static const fl_csv_col quart_cols[] = {{"iter", FL_CSV_INT, offsetof(quart_row, iter), 0},
                                        {"q25", FL_CSV_G, offsetof(quart_row, q), 10},
                                        {"median", FL_CSV_G, offsetof(quart_row, q[1]), 10},
                                        {"q75", FL_CSV_G, offsetof(quart_row, q[2]), 10}};
typedef struct newton_row {
  int iter;
  double val[32]; /* variant k's field f at 4 k + f */
} newton_row;     /* <fig>_<scene>.csv */

//---- helpers ----

/* the thesis' formulation of nsn (Fischer-Burmeister, compliance form, inner lin) and budget;
 * a run's own options go after them */
#define NSN_OPTS "max_iter=8,ncp=fb"


/* nsn with the thesis' options, then opts (may be NULL), for a solve of a captured problem */
static int make_nsn(const char *opts, fl_solver **out) {
  FL_TRY(fl_register_all());
  fl_run_spec sp = {.opts = NSN_OPTS, .opts_last = opts};
  return fl_run_solver(&sp, "nsn", out, NULL);
}


/* ends the warm-up once the time passes *ctx (s) */
static int warm_each(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  (void)w;
  (void)k;
  (void)val;
  return info->t >= *(const double *)ctx ? FL_LOOP_STOP : FL_OK;
}


/* the scene after a warm-up with nsn's defaults, with the next step prepared */
static int warm_scene(fl_fig_ctx *ctx, const char *scene, fl_world **out) {
  // the tables of the pile are dropped: let them land first
  int pile = strcmp(scene, "table_pile") == 0;
  double t_warm = pile ? (ctx->quick ? 1.0 : 2.0) : (ctx->quick ? 0.1 : 0.5);
  FL_TRY(fl_register_all());
  fl_run_spec sp = {.scene = scene, .stepper = "nsn", .opts = NSN_OPTS, .steps = LONG_MAX,
                    .each = warm_each, .ctx = &t_warm};
  fl_run run;
  int rc = fl_run_open(&sp, &run);
  if (rc == FL_OK) rc = fl_run_go(&run);
  if (rc == FL_OK) rc = fl_world_prepare(run.world, NULL);
  if (rc == FL_OK) {
    *out = run.world; // the caller's now
    run.world = NULL;
  }
  fl_run_close(&run);
  return rc < 0 ? rc : FL_OK;
}


/* one solve of p with nsn(opts): per iteration (at most cap) the own error, err_normal,
 * err_friction and step_norm into col[4][cap]; *n records */
static int newton_curve(const fl_problem *p, const char *opts, int cap, double *col[4], int *n) {
  fl_solver *s = NULL;
  FL_TRY(make_nsn(opts, &s));
  double *v = calloc((size_t)p->nv + 1, sizeof(double));
  double *g = calloc((size_t)fl_problem_nrows(p) + 1, sizeof(double));
  fl_result res;
  int rc = (v && g) ? FL_OK : fl_seterr(FL_ERR_NOMEM, "figure: out of memory");
  if (rc == FL_OK) rc = fl_solver_setup(s, p);
  if (rc == FL_OK) rc = fl_solver_solve(s, p, v, g, &res);
  *n = 0;
  if (rc == FL_OK) {
    int nh;
    const fl_iter_stat *h = fl_solver_history(s, &nh);
    for (int k = 0; k < nh && k < cap; k++) {
      col[0][k] = h[k].error;
      col[1][k] = h[k].err_normal;
      col[2][k] = h[k].err_friction;
      col[3][k] = h[k].step_norm;
    }
    *n = nh < cap ? nh : cap;
  }
  free(v);
  free(g);
  fl_solver_destroy(s);
  return rc;
}


//---- Fig. 15: inner solvers on one captured Newton system ----

typedef struct capture {
  int at;
  fl_csr *K;
  double *rhs;
} capture;


static int capture_mon(const fl_solver *s, const fl_iter_stat *st, void *ctx) {
  capture *c = ctx;
  if (st->iter != c->at || c->K) return 0;
  const fl_csr *K;
  const double *rhs;
  if (fl_nsn_newton_system(s, &K, &rhs) != FL_OK) return 0;
  FL_TRY(fl_csr_copy(K, &c->K));
  c->rhs = malloc(sizeof(double) * (size_t)(K->nrow > 0 ? K->nrow : 1));
  if (!c->rhs) return fl_seterr(FL_ERR_NOMEM, "figure: out of memory");
  memcpy(c->rhs, rhs, sizeof(double) * (size_t)K->nrow);
  return 0;
}


static int fig15_scene(fl_fig_ctx *ctx, const char *scene, const char *title) {
  fl_world *w = NULL;
  FL_TRY(warm_scene(ctx, scene, &w));
  const fl_problem *p = fl_world_problem(w);
  fl_solver *s = NULL;
  capture cap = {2, NULL, NULL};
  int rc = make_nsn(NULL, &s);
  if (rc == FL_OK) rc = fl_solver_monitor_add(s, capture_mon, &cap, NULL);
  double *v = calloc((size_t)p->nv + 1, sizeof(double));
  double *g = calloc((size_t)fl_problem_nrows(p) + 1, sizeof(double));
  fl_result res;
  if (rc == FL_OK) rc = fl_solver_setup(s, p);
  if (rc == FL_OK) rc = fl_solver_solve(s, p, v, g, &res);
  if (rc == FL_OK && !cap.K)
    rc = fl_seterr(FL_ERR_STATE, "macklin-fig15: %s: no Newton system at iteration 2", scene);
  fl_fig_panel *pan = fl_fig_panel_add(ctx->fig, title, "inner iteration",
                                       "relative residual ||b - K x|| / ||b||", 0, 1);
  static const int types[4] = {FL_LIN_JACOBI, FL_LIN_GS, FL_LIN_PCG, FL_LIN_PCR};
  for (int k = 0; rc == FL_OK && k < 4; k++) {
    fl_lin_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.type = types[k];
    lo.max_iter = ctx->quick ? 40 : 100;
    fl_lin *l = NULL;
    double *x = calloc((size_t)cap.K->nrow + 1, sizeof(double));
    rc = x ? fl_lin_create(&lo, cap.K, &l) : FL_ERR_NOMEM;
    fl_lin_stat ls;
    if (rc == FL_OK) rc = fl_lin_solve(l, cap.K, cap.rhs, x, &ls);
    char csv[96];
    snprintf(csv, sizeof csv, "fig15_%s_%s.csv", scene, fl_lin_ops_get(types[k])->name);
    FILE *f = rc == FL_OK ? fl_fig_table(ctx, csv, hist_cols, 3) : NULL;
    if (rc == FL_OK && !f) rc = FL_ERR_IO;
    if (f) {
      int n;
      const double *nat, *r = fl_lin_history(l, &n, &nat);
      for (int i = 0; i < n; i++) {
        hist_row row = {i, r[0] > 0 ? r[i] / r[0] : r[i],
                        r[0] > 0 && nat[0] > 0 ? nat[i] / nat[0] : nat[i]};
        fl_csv_row(f, hist_cols, 3, &row);
      }
      // the results folder owns and closes f
      fl_fig_series_add(pan, csv, "iter", "residual", fl_lin_ops_get(types[k])->name, 0);
      fl_fig_say(ctx, "%s (Newton system of iteration 2, %d rows): %-6s residual %.3e after %d "
                      "iterations", scene, (int)cap.K->nrow, fl_lin_ops_get(types[k])->name,
                 ls.res0 > 0 ? ls.res / ls.res0 : ls.res, ls.iters);
    }
    fl_lin_free(l);
    free(x);
  }
  fl_csr_free(cap.K);
  free(cap.rhs);
  free(v);
  free(g);
  fl_solver_destroy(s);
  fl_world_free(w);
  return rc;
}


static int fig15(fl_fig_ctx *ctx) {
  FL_TRY(fig15_scene(ctx, "heavy_stack", "heavy stack 4096:1"));
  return fig15_scene(ctx, "arch_parabolic", "parabolic arch");
}

//---- Fig. 18 and 19: per Newton iteration of one step ----

typedef struct variant {
  const char *tag, *opts, *label;
} variant;


/* one CSV per scene (the results folder keeps at most 16 files open): iter, then per variant
 * <tag>_error, <tag>_normal, <tag>_friction, <tag>_step */
static int per_newton(fl_fig_ctx *ctx, const char *fig, const variant *vars, int nvar) {
  static const char *scenes[3] = {"arch_parabolic", "table_pile", "heavy_stack"};
  static const char *field[4] = {"error", "normal", "friction", "step"};
  int maxit = ctx->quick ? 8 : 20, cap = maxit + 1;
  double *buf = calloc((size_t)(4 * nvar * cap), sizeof(double));
  if (!buf) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", fig);
  int rc = FL_OK;
  for (int sc = 0; rc == FL_OK && sc < 3; sc++) {
    fl_world *w = NULL;
    rc = warm_scene(ctx, scenes[sc], &w);
    if (rc < 0) break;
    const fl_problem *p = fl_world_problem(w);
    int n = cap, has[8][4];
    for (int k = 0; rc == FL_OK && k < nvar && k < 8; k++) {
      double *col[4];
      for (int f = 0; f < 4; f++) col[f] = buf + (size_t)((4 * k + f) * cap);
      char opts[256];
      snprintf(opts, sizeof opts, "never_stop=1,max_iter=%d,%s", maxit, vars[k].opts);
      int nk = 0;
      rc = newton_curve(p, opts, cap, col, &nk);
      if (nk < n) n = nk;
      // a log axis needs one positive value per series
      for (int f = 0; f < 4; f++) {
        has[k][f] = 0;
        for (int i = 0; i < nk; i++) has[k][f] |= col[f][i] > 0;
      }
      if (rc == FL_OK)
        fl_fig_say(ctx, "%s, %s: own error after %d Newton iterations %.3e m/s", scenes[sc],
                   vars[k].label, nk - 1, nk > 0 ? col[0][nk - 1] : NAN);
    }
    // the CSV: one row per Newton iteration
    char csv[96], names[32][48], title[160], lab[160], y[48];
    snprintf(csv, sizeof csv, "%s_%s.csv", fig, scenes[sc]);
    fl_csv_col cols[33] = {{"iter", FL_CSV_INT, offsetof(newton_row, iter), 0}};
    int ncol = 1;
    for (int k = 0; k < nvar && k < 8; k++)
      for (int f = 0; f < 4; f++, ncol++) {
        snprintf(names[4 * k + f], sizeof names[0], "%s_%s", vars[k].tag, field[f]);
        size_t off = offsetof(newton_row, val) + (size_t)(4 * k + f) * sizeof(double);
        cols[ncol] = (fl_csv_col){names[4 * k + f], FL_CSV_G, off, 10};
      }
    FILE *fo = rc == FL_OK ? fl_fig_table(ctx, csv, cols, ncol) : NULL;
    if (rc == FL_OK && !fo) rc = FL_ERR_IO;
    for (int i = 0; fo && i < n; i++) {
      newton_row row = {.iter = i};
      for (int k = 0; k < nvar && k < 8; k++)
        for (int f = 0; f < 4; f++) row.val[4 * k + f] = buf[(4 * k + f) * cap + i];
      fl_csv_row(fo, cols, ncol, &row);
    }
    if (rc == FL_OK) {
      // one row of panels per scene, one unit per axis: colour is the variant, line style the
      // quantity
      snprintf(title, sizeof title, "%s (%d contacts): own and friction error", scenes[sc],
               (int)p->nc);
      fl_fig_panel *pe = fl_fig_panel_add(ctx->fig, title, "Newton iteration",
                                          "largest error (m/s)", 0, 1);
      snprintf(title, sizeof title, "%s: normal (penetration) error", scenes[sc]);
      fl_fig_panel *pn = fl_fig_panel_add(ctx->fig, title, "Newton iteration",
                                          "largest normal error (m)", 0, 1);
      snprintf(title, sizeof title, "%s: step size", scenes[sc]);
      fl_fig_panel *ps = fl_fig_panel_add(ctx->fig, title, "Newton iteration",
                                          "alpha ||dgamma||_inf (N s)", 0, 1);
      int nstep = 0;
      for (int k = 0; k < nvar && k < 8; k++) {
        static const char *what[3] = {"own error", "normal", "friction"};
        for (int f = 0; f < 3; f++) {
          if (!has[k][f]) continue;
          snprintf(y, sizeof y, "%s_%s", vars[k].tag, field[f]);
          snprintf(lab, sizeof lab, "%s %s", vars[k].label, what[f]);
          fl_fig_panel *to = f == 1 ? pn : pe;
          fl_fig_series_add(to, csv, "iter", y, f == 1 ? vars[k].label : lab, 0);
          fl_fig_series_style(to, vars[k].label, what[f]);
        }
        if (has[k][3]) {
          snprintf(y, sizeof y, "%s_step", vars[k].tag);
          fl_fig_series_add(ps, csv, "iter", y, vars[k].label, 0);
          fl_fig_series_style(ps, vars[k].label, NULL);
          nstep++;
        }
      }
      // no step at all (nothing active): show the own errors so the panel is not empty
      for (int k = 0; nstep == 0 && k < nvar && k < 8; k++) {
        snprintf(y, sizeof y, "%s_error", vars[k].tag);
        snprintf(lab, sizeof lab, "%s own error (m/s; no steps taken)", vars[k].label);
        fl_fig_series_add(ps, csv, "iter", y, lab, 0);
        fl_fig_series_style(ps, vars[k].label, NULL);
      }
    }
    fl_world_free(w);
  }
  free(buf);
  return rc;
}


static int fig18(fl_fig_ctx *ctx) {
  static const variant v[3] = {{"identity", "precond=identity", "identity r = 1"},
                               {"timestep", "precond=timestep", "time step r = dt^2"},
                               {"effmass", "precond=effmass", "effective mass"}};
  return per_newton(ctx, "fig18", v, 3);
}


static int fig19(fl_fig_ctx *ctx) {
  static const variant v[5] = {{"jacobi", "lin=jacobi", "Jacobi"},
                               {"gs", "lin=gs", "Gauss-Seidel"},
                               {"pcg", "lin=pcg", "PCG"},
                               {"pcr", "lin=pcr", "PCR"},
                               {"direct", "lin=direct", "direct (CHOLMOD)"}};
  return per_newton(ctx, "fig19", v, 5);
}

//---- Fig. 20: stability over time ----

static int fig20(fl_fig_ctx *ctx) {
  static const struct {
    const char *tag, *opts, *label;
  } runs[4] = {{"pcr", "max_iter=8,ncp=fb,lin=pcr", "NSN + PCR"}, // the thesis: 8 Newton its
               {"direct", "max_iter=8,ncp=fb,lin=direct", "NSN + direct"},
               {"jacobi", "max_iter=8,ncp=fb,lin=jacobi", "NSN + Jacobi"},
               {"gs", "max_iter=8,ncp=fb,lin=gs", "NSN + Gauss-Seidel"}};
  static const struct {
    const char *scene, *obs, *ylabel, *title;
  } sc[2] = {{"arch_parabolic", "arch_disp_max", "largest voussoir displacement (m)",
              "parabolic arch"},
             {"heavy_stack", "pen_max", "deepest penetration (m)", "heavy stack 4096:1"}};
  // medium is the thesis' 10 s: over the quick 0.25 s Gauss-Seidel's arch has not sagged yet
  // (0.85 mm, against 33 mm over 10 s)
  double dur = ctx->quick ? 0.25 : 10.0;
  for (int s = 0; s < 2; s++) {
    fl_fig_panel *p = fl_fig_panel_add(ctx->fig, sc[s].title, "time (s)", sc[s].ylabel, 0, 1);
    fl_fig_ref_add(p, 1e-3, "1 mm");
    for (int k = 0; k < 4; k++) {
      char csv[96];
      snprintf(csv, sizeof csv, "fig20_%s_%s.csv", sc[s].scene, runs[k].tag);
      fl_fig_sim sim;
      FL_TRY(fl_fig_simulate(ctx, csv, sc[s].scene, NULL, "nsn", runs[k].opts, dur, &sim));
      fl_fig_series_add(p, csv, "t", sc[s].obs, runs[k].label, 0);
      fl_fig_say(ctx, "%s, %s: max %s = %.4g m over %.3g s (%d steps, %.3g s solving)",
                 sc[s].scene, runs[k].label, sc[s].obs, fl_fig_sim_get(&sim, sc[s].obs, 1), dur,
                 sim.steps, sim.solve_s);
    }
  }
  return FL_OK;
}

//---- Fig. 22: quartiles over many steps ----

typedef struct quart {
  int cap_steps, cap_iter, step;
  double *err; /* (cap_steps x (cap_iter + 1)) relative error per step and iteration */
} quart;


static int quart_mon(const fl_solver *s, const fl_iter_stat *st, void *ctx) {
  quart *q = ctx;
  if (q->step < q->cap_steps && st->iter <= q->cap_iter)
    q->err[q->step * (q->cap_iter + 1) + st->iter] = st->error;
  return 0;
}


static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}


/* the monitor's step index follows the loop's */
static int quart_each(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  (void)w;
  (void)info;
  (void)val;
  ((quart *)ctx)->step = (int)k + 1;
  return FL_OK;
}


static int fig22(fl_fig_ctx *ctx) {
  static const variant v[2] = {{"identity", "precond=identity", "identity scaling"},
                               {"effmass", "precond=effmass", "effective-mass scaling"}};
  int nsteps = ctx->quick ? 10 : 132, nit = 20;
  fl_fig_panel *p = fl_fig_panel_add(ctx->fig, "heavy stack: error per Newton iteration over steps",
                                     "Newton iteration", "own error (m/s): quartiles", 0, 1);
  fl_fig_say(ctx, "the seed's flexible beam is not available; heavy_stack stands in (%d steps, "
                  "PCR with 40 inner iterations, %d Newton iterations per step)", nsteps, nit);
  for (int k = 0; k < 2; k++) {
    quart q = {nsteps, nit, 0, calloc((size_t)nsteps * (size_t)(nit + 1), sizeof(double))};
    double *col = calloc((size_t)nsteps, sizeof(double));
    char opts[160];
    snprintf(opts, sizeof opts, "never_stop=1,max_iter=%d,%s", nit, v[k].opts);
    fl_run_spec sp = {.scene = "heavy_stack", .stepper = "nsn", .opts = NSN_OPTS,
                      .opts_last = opts, .steps = nsteps, .each = quart_each, .ctx = &q};
    fl_run run;
    memset(&run, 0, sizeof run);
    int rc = (q.err && col) ? fl_register_all() : FL_ERR_NOMEM;
    if (rc == FL_OK) rc = fl_run_open(&sp, &run);
    if (rc == FL_OK) rc = fl_solver_monitor_add(run.solver, quart_mon, &q, NULL);
    if (rc == FL_OK) rc = fl_run_go(&run);
    char csv[96];
    snprintf(csv, sizeof csv, "fig22_%s.csv", v[k].tag);
    FILE *f = rc == FL_OK ? fl_fig_table(ctx, csv, quart_cols, 4) : NULL;
    if (rc == FL_OK && !f) rc = FL_ERR_IO;
    for (int it = 0; f && it <= nit; it++) {
      for (int st = 0; st < nsteps; st++) col[st] = q.err[st * (nit + 1) + it];
      qsort(col, (size_t)nsteps, sizeof(double), cmp_d);
      double q25 = col[nsteps / 4], q50 = col[nsteps / 2], q75 = col[(3 * nsteps) / 4];
      quart_row row = {it, {q25, q50, q75}};
      fl_csv_row(f, quart_cols, 4, &row);
      if (it == nit)
        fl_fig_say(ctx, "%s: after %d iterations the error quartiles are %.3e / %.3e / %.3e m/s",
                   v[k].label, nit, q25, q50, q75);
    }
    // f is owned and closed by the results folder
    if (rc == FL_OK) {
      char lab[160];
      snprintf(lab, sizeof lab, "%s, median", v[k].label);
      fl_fig_series_add(p, csv, "iter", "median", lab, 2);
      snprintf(lab, sizeof lab, "%s, 25 %%", v[k].label);
      fl_fig_series_add(p, csv, "iter", "q25", lab, 0);
      snprintf(lab, sizeof lab, "%s, 75 %%", v[k].label);
      fl_fig_series_add(p, csv, "iter", "q75", lab, 0);
    }
    fl_run_close(&run);
    free(q.err);
    free(col);
    FL_TRY(rc);
  }
  return FL_OK;
}


const fl_figure_recipe fl_fig_macklin15 = {
  "macklin-fig15", "004", "four iterative linear solvers on one Newton system, two scenes", NULL,
  fig15, NULL};
const fl_figure_recipe fl_fig_macklin18 = {
  "macklin-fig18", "004", "NCP preconditioning strategies on parabolic arch, table pile, heavy stack",
  NULL, fig18, NULL};
const fl_figure_recipe fl_fig_macklin19 = {
  "macklin-fig19", "004", "inner linear solver per Newton iteration, three scenes", NULL, fig19,
  NULL};
const fl_figure_recipe fl_fig_macklin20 = {
  "macklin-fig20", "004", "arch and heavy stack stability by solver", NULL, fig20, NULL};
const fl_figure_recipe fl_fig_macklin22 = {
  "macklin-fig22", "004",
  "convergence quartiles over many steps, identity vs effective-mass scaling (stand-in: heavy "
  "stack for the paper's flexible beam)",
  NULL, fig22, NULL};

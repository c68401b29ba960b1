// SPDX-License-Identifier: Apache-2.0
/* test_pgs_accel.c: PGS with accel = nncg and anderson (docs/pgs-accel.md) on a column of
 * point masses resting on the ground, whose answer is known in closed form and on which plain
 * PGS needs many sweeps (Gauss-Seidel on a chain with a heavy top). The accelerated sweeps must
 * reach the same answer in fewer sweeps (also with a bilateral row, and on the FCLIB problems
 * plain PGS wins), keep every impulse in its cone, and stop with a negative reason on NaN
 * data. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fl_test.h"
#include "problems/fl_problem.h"
#include "solvers/fl_solver.h"
#include "solvers/fl_solver_impl.h"

#define G 9.81
#define N 24 /* masses in the column */


/* N point masses (3 dofs each) stacked along z on the ground, dt 0.01, at rest but for a
 * horizontal velocity vx of all of them; the top one weighs `top`, the others 1 kg. Contact k
 * is under mass k (k = 0: the ground), frame (e_z, e_x, e_y), u_k = v_k - v_{k-1}; mu_ground
 * at the ground, mu between masses. */
static int column_rows(double top, double vx, double mu_ground, double mu, int nh,
                       fl_problem **out) {
  fl_problem *p;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_GLOBAL, 3 * N, N, nh, 0, &p));
  snprintf(p->name, sizeof p->name, "column");
  p->dt = 0.01;
  fl_int ai[3 * N], ti[6 * N + 3], tj[6 * N + 3];
  double av[3 * N], tv[6 * N + 3];
  int nt = 0;
  for (int k = 0; k < N; k++) {
    for (int c = 0; c < 3; c++) {
      ai[3 * k + c] = 3 * k + c;
      av[3 * k + c] = k == N - 1 ? top : 1.0;
      p->v0[3 * k + c] = p->vstar[3 * k + c] = c == 0 ? vx : 0.0;
    }
    p->vstar[3 * k + 2] = -G * p->dt;
    static const int axis[3] = {2, 0, 1}; // normal z, tangents x, y
    for (int c = 0; c < 3; c++) {
      ti[nt] = 3 * k + c, tj[nt] = 3 * k + axis[c], tv[nt++] = 1.0;
      if (k > 0) ti[nt] = 3 * k + c, tj[nt] = 3 * (k - 1) + axis[c], tv[nt++] = -1.0;
    }
    p->mu[k] = k == 0 ? mu_ground : mu;
  }
  // u_h = d . v of the top mass, d = (1, 0.5, 0.25): on all three dofs (one clique)
  for (int c = 0; nh && c < 3; c++)
    ti[nt] = 3 * N, tj[nt] = 3 * (N - 1) + c, tv[nt++] = 1.0 / (1 << c);
  int rc = fl_csr_from_triplets(3 * N, 3 * N, 3 * N, ai, ai, av, &p->A);
  if (!rc) rc = fl_csr_from_triplets(3 * N + nh, 3 * N, nt, ti, tj, tv, &p->J);
  if (!rc) rc = fl_problem_find_cliques(p);
  *out = p;
  return rc;
}


static int column(double top, double vx, double mu_ground, double mu, fl_problem **out) {
  return column_rows(top, vx, mu_ground, mu, 0, out);
}


/* the closed form: every mass at v = (vx - mu_ground g dt, 0, 0) when the ground slides
 * (vx > mu_ground g dt), else at rest; contact k carries the weight of the masses above it,
 * g dt M_k, and the tangential impulse -min(vx, mu_ground g dt) M_k / ... along x, M_k the
 * mass at and above k (the contacts between masses stick: mu > mu_ground) */
static void column_answer(double top, double vx, double mu_ground, double *v, double *gamma) {
  const double dt = 0.01;
  double dvx = vx > mu_ground * G * dt ? mu_ground * G * dt : vx;
  for (int k = 0; k < N; k++) {
    v[3 * k] = vx - dvx;
    v[3 * k + 1] = v[3 * k + 2] = 0.0;
    double M = top + (N - 1 - k);
    gamma[3 * k] = G * dt * M;
    gamma[3 * k + 1] = -dvx * M;
    gamma[3 * k + 2] = 0.0;
  }
}


/* solves with "key=value" options (NULL-terminated) */
static int run(const fl_problem *p, const char *const *opts, double *v, double *gamma,
               fl_result *res) {
  fl_solver *s;
  fl_register_all();
  FL_TRY(fl_solver_create("pgs", &s));
  for (int k = 0; opts && opts[k]; k++) {
    char key[64];
    const char *eq = strchr(opts[k], '=');
    snprintf(key, sizeof key, "%.*s", (int)(eq - opts[k]), opts[k]);
    int rc = fl_solver_set_option(s, key, eq + 1);
    if (rc) {
      fl_solver_destroy(s);
      return rc;
    }
  }
  int rc = fl_solver_setup(s, p);
  if (!rc) rc = fl_solver_solve(s, p, v, gamma, res);
  fl_solver_destroy(s);
  return rc;
}


/* every impulse in its cone: g_n >= 0, |g_t| <= mu g_n (to rounding) */
static int in_cones(const fl_problem *p, const double *gamma) {
  for (fl_int i = 0; i < p->nc; i++) {
    const double *g = gamma + 3 * i;
    if (!(g[0] >= 0.0) || !(hypot(g[1], g[2]) <= p->mu[i] * g[0] * (1 + 1e-12) + 1e-300))
      return 0;
  }
  return 1;
}


/* the solve of `accel` (none, nncg, anderson) on the column, its sweeps; the answer checked
 * against the closed form to 1e-10 (relative to the largest impulse) and the cones after */
static int solve_column_guard(double top, double vx, double mu_ground, const char *accel,
                              const char *order, const char *guard, int *sweeps) {
  fl_problem *p;
  ASSERT_OK(column(top, vx, mu_ground, 0.8, &p));
  double v[3 * N], g[3 * N], ve[3 * N], ge[3 * N];
  column_answer(top, vx, mu_ground, ve, ge);
  char a[64], o[64], gd[64];
  snprintf(a, sizeof a, "accel=%s", accel);
  snprintf(o, sizeof o, "order=%s", order);
  snprintf(gd, sizeof gd, "accel_guard=%s", guard);
  const char *opts[] = {a, o, gd, "norm=none", "abs_tol=1e-12", "max_iter=200000", NULL};
  fl_result res;
  ASSERT_OK(run(p, opts, v, g, &res));
  if (!(res.reason > 0))
    FL_FAIL_("accel %s: %s after %d sweeps, error %g", accel, fl_reason_name(res.reason),
             res.iters, res.error);
  double scale = ge[0];
  for (int k = 0; k < 3 * N; k++) {
    ASSERT_NEAR(g[k], ge[k], 1e-10 * scale);
    ASSERT_NEAR(v[k], ve[k], 1e-10);
  }
  ASSERT(in_cones(p, g));
  fprintf(stderr, "top %g vx %g accel %s order %s guard %s: %d sweeps, error %.3e\n", top, vx,
          accel, order, guard, res.iters, res.error);
  *sweeps = res.iters;
  fl_problem_free(p);
  return 0;
}


static int solve_column(double top, double vx, double mu_ground, const char *accel,
                        const char *order, int *sweeps) {
  return solve_column_guard(top, vx, mu_ground, accel, order, "residual", sweeps);
}


/* a bound on the sweeps that plain PGS exceeds on the column with a 100:1 top (about 59000
 * sweeps to 1e-12) and both accelerations meet (about 4100 and 160) */
#define SWEEPS_BOUND 10000

FL_TEST(column_at_rest_fewer_sweeps) {
  // no tangential load: Gauss-Seidel on a chain with a heavy top, the normal impulses alone
  int plain, nncg, anderson;
  ASSERT_OK(solve_column(100.0, 0.0, 0.3, "none", "natural", &plain));
  ASSERT_OK(solve_column(100.0, 0.0, 0.3, "nncg", "natural", &nncg));
  ASSERT_OK(solve_column(100.0, 0.0, 0.3, "anderson", "natural", &anderson));
  ASSERT(plain > SWEEPS_BOUND);
  ASSERT(nncg <= SWEEPS_BOUND);
  ASSERT(anderson <= SWEEPS_BOUND / 10);
  return 0;
}


FL_TEST(column_sliding_fewer_sweeps) {
  // frictional: the ground slides (mu_ground g dt < vx), the contacts above stick
  int plain, nncg, anderson;
  ASSERT_OK(solve_column(100.0, 1.0, 0.3, "none", "natural", &plain));
  ASSERT_OK(solve_column(100.0, 1.0, 0.3, "nncg", "natural", &nncg));
  ASSERT_OK(solve_column(100.0, 1.0, 0.3, "anderson", "natural", &anderson));
  ASSERT(plain > SWEEPS_BOUND);
  ASSERT(nncg <= SWEEPS_BOUND);
  ASSERT(anderson <= SWEEPS_BOUND / 10);
  return 0;
}


FL_TEST(column_nncg_step_guard) {
  // NNCG guarded by its own sweep steps (no residual needed) and unguarded: the same answer,
  // within the same bound
  int step, none;
  ASSERT_OK(solve_column_guard(100.0, 1.0, 0.3, "nncg", "natural", "step", &step));
  ASSERT_OK(solve_column_guard(100.0, 1.0, 0.3, "nncg", "natural", "none", &none));
  ASSERT(step <= SWEEPS_BOUND);
  ASSERT(none <= SWEEPS_BOUND);
  // anderson has no step guard: refused at set-up
  fl_problem *p;
  ASSERT_OK(column(100.0, 1.0, 0.3, 0.8, &p));
  double v[3 * N], g[3 * N];
  fl_result res;
  const char *opts[] = {"accel=anderson", "accel_guard=step", NULL};
  ASSERT(run(p, opts, v, g, &res) == FL_ERR_INVAL);
  fl_problem_free(p);
  return 0;
}


FL_TEST(column_other_orders) {
  // forward-backward and coloured sweeps reach the same answer, the accelerated ones sooner
  // (order=shuffle is another map every sweep: no acceleration to expect, none asserted)
  const char *orders[] = {"symmetric", "colour"};
  for (int k = 0; k < 2; k++) {
    int plain, nncg, anderson;
    ASSERT_OK(solve_column(100.0, 1.0, 0.3, "none", orders[k], &plain));
    ASSERT_OK(solve_column(100.0, 1.0, 0.3, "nncg", orders[k], &nncg));
    ASSERT_OK(solve_column(100.0, 1.0, 0.3, "anderson", orders[k], &anderson));
    ASSERT(nncg < plain / 4);
    ASSERT(anderson < plain / 4);
  }
  return 0;
}


/* a monitor that checks the cones at every record (cur_gamma is the iterate recorded) */
static int cones_every_record(const fl_solver *s, const fl_iter_stat *st, void *ctx) {
  (void)st;
  int *bad = ctx;
  if (!in_cones(s->prob, s->cur_gamma)) (*bad)++;
  return 0;
}


FL_TEST(iterates_stay_in_the_cones) {
  // every recorded iterate of both accelerations, with every guard, lies in the cones (the
  // extrapolations overshoot; the projection after them keeps them feasible)
  fl_problem *p;
  ASSERT_OK(column(100.0, 1.0, 0.3, 0.8, &p));
  ASSERT_OK(fl_register_all());
  const char *accel[] = {"nncg", "anderson"}, *guard[] = {"residual", "none", "step"};
  for (int a = 0; a < 2; a++)
    for (int gd = 0; gd < 3 - a; gd++) {
      fl_solver *s;
      ASSERT_OK(fl_solver_create("pgs", &s));
      ASSERT_OK(fl_solver_set_option(s, "accel", accel[a]));
      ASSERT_OK(fl_solver_set_option(s, "accel_guard", guard[gd]));
      ASSERT_OK(fl_solver_set_option(s, "max_iter", "3000"));
      ASSERT_OK(fl_solver_set_option(s, "norm", "none"));
      ASSERT_OK(fl_solver_set_option(s, "abs_tol", "1e-12"));
      int bad = 0;
      ASSERT_OK(fl_solver_monitor_add(s, cones_every_record, &bad, NULL));
      ASSERT_OK(fl_solver_setup(s, p));
      double v[3 * N], g[3 * N];
      fl_result res;
      ASSERT_OK(fl_solver_solve(s, p, v, g, &res));
      ASSERT_EQ(bad, 0);
      ASSERT(in_cones(p, g));
      ASSERT(res.iters > 10);
      fl_solver_destroy(s);
    }
  fl_problem_free(p);
  return 0;
}


FL_TEST(nan_data_negative_reason) {
  // a NaN in v* (and, apart, in a warm start) ends the solve with a negative reason
  fl_problem *p;
  ASSERT_OK(column(100.0, 1.0, 0.3, 0.8, &p));
  const char *accel[] = {"accel=nncg", "accel=anderson"};
  for (int a = 0; a < 2; a++)
    for (int c = 0; c < 2; c++) {
      double v[3 * N], g[3 * N];
      for (int k = 0; k < 3 * N; k++) g[k] = 0.0;
      double keep = p->vstar[5];
      if (c == 0) p->vstar[5] = NAN;
      else g[4] = NAN;
      const char *opts[] = {accel[a], "max_iter=100", c ? "warm_start=true" : "seed=1", NULL};
      fl_result res;
      ASSERT_OK(run(p, opts, v, g, &res));
      p->vstar[5] = keep;
      ASSERT(res.reason < 0);
    }
  fl_problem_free(p);
  return 0;
}


FL_TEST(fclib_pgs_winners) {
  // the FCLIB problems where plain PGS is the benchmark's fastest (local and global, the
  // rigid bodies' fast path among them): both accelerations converge to 1e-8 (Siconos's
  // normalization) within 300 sweeps, in the cones
  static const char *const files[] = {"Box_Stacks-i0122-82-5.hdf5",
                                      "LMGC_100_PR_PerioBox-i00361-60-03000.hdf5",
                                      "LMGC_GFC3D-i00501-4-00000.hdf5",
                                      "converted_from_siconos_dat/Rover4396.hdf5"};
  const char *accel[] = {"accel=nncg", "accel=anderson"};
  int nrun = 0;
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    char path[2048];
    snprintf(path, sizeof path, "%s/fclib/%s", fl_test_shared_dir(), files[f]);
    fl_problem *p;
    if (fl_problem_load_fclib(path, &p) != FL_OK) {
      printf("%s not loaded: %s\n", path, fl_errmsg());
      continue;
    }
    double *v = calloc((size_t)p->nv + 1, sizeof *v);
    double *g = calloc((size_t)fl_problem_nrows(p) + 1, sizeof *g);
    for (int a = 0; a < 2; a++) {
      const char *opts[] = {accel[a], "max_iter=300", "norm=siconos", "abs_tol=1e-8", NULL};
      fl_result res;
      ASSERT_OK(run(p, opts, v, g, &res));
      printf("%-44s %-14s iters %4d  error %.3e  %s\n", files[f], accel[a], res.iters,
             res.error, fl_reason_name(res.reason));
      ASSERT(res.reason > 0);
      ASSERT_LE(res.error, 1e-8);
      ASSERT(in_cones(p, g));
      nrun++;
    }
    free(v);
    free(g);
    fl_problem_free(p);
  }
  if (nrun == 0) SKIP("no FCLIB file loaded from %s/fclib", fl_test_shared_dir());
  return 0;
}


FL_TEST(step_tol_stops_accelerated_sweeps) {
  // without a residual tolerance, step_tol ends the accelerated sweeps once a sweep changes
  // the impulses by less than 1e-13 of their size, at the closed form
  fl_problem *p;
  ASSERT_OK(column(100.0, 1.0, 0.3, 0.8, &p));
  double v[3 * N], g[3 * N], ve[3 * N], ge[3 * N];
  column_answer(100.0, 1.0, 0.3, ve, ge);
  const char *accel[] = {"accel=nncg", "accel=anderson"};
  for (int a = 0; a < 2; a++) {
    const char *opts[] = {accel[a],    "max_iter=20000", "norm=none", "abs_tol=0",
                          "rel_tol=0", "step_tol=1e-13", NULL};
    fl_result res;
    ASSERT_OK(run(p, opts, v, g, &res));
    ASSERT_EQ(res.reason, FL_CONVERGED_STAGNATION_OK);
    ASSERT(res.iters < 20000);
    for (int k = 0; k < 3 * N; k++) ASSERT_NEAR(g[k], ge[k], 1e-8 * ge[0]);
  }
  fl_problem_free(p);
  return 0;
}


FL_TEST(column_with_a_bilateral_row) {
  // the sliding column with a compliant row on the top mass (u_h = v_x + v_y / 2 + v_z / 4,
  // compliance 0.05, and then bounded to |gamma_h| <= 0.5 N s): the accelerated solves meet
  // plain PGS run to 1e-13, the row's impulse within its bounds
  fl_problem *p;
  ASSERT_OK(column_rows(100.0, 1.0, 0.3, 0.8, 1, &p));
  p->compliance[0] = 0.05;
  for (int bounded = 0; bounded < 2; bounded++) {
    p->lo[0] = bounded ? -0.5 : -INFINITY;
    p->hi[0] = bounded ? 0.5 : INFINITY;
    double v0[3 * N], g0[3 * N + 1];
    const char *plain[] = {"norm=none", "abs_tol=1e-13", "max_iter=400000", NULL};
    fl_result res;
    ASSERT_OK(run(p, plain, v0, g0, &res));
    ASSERT(res.reason > 0);
    ASSERT(bounded ? g0[3 * N] == -0.5 : g0[3 * N] < -0.5); // the bound is active
    const char *accel[] = {"accel=nncg", "accel=anderson"};
    for (int a = 0; a < 2; a++) {
      double v[3 * N], g[3 * N + 1];
      const char *opts[] = {accel[a], "norm=none", "abs_tol=1e-13", "max_iter=400000", NULL};
      fl_result ra;
      ASSERT_OK(run(p, opts, v, g, &ra));
      ASSERT(ra.reason > 0);
      fprintf(stderr, "row bounded %d %s: %d sweeps against %d plain\n", bounded, accel[a],
              ra.iters, res.iters);
      ASSERT(ra.iters < res.iters / 4);
      for (int k = 0; k < 3 * N; k++) {
        ASSERT_NEAR(v[k], v0[k], 1e-10);
        ASSERT_NEAR(g[k], g0[k], 1e-10 * g0[0]);
      }
      ASSERT_NEAR(g[3 * N], g0[3 * N], 1e-10);
      ASSERT(g[3 * N] >= p->lo[0] && g[3 * N] <= p->hi[0]);
      ASSERT(in_cones(p, g));
    }
  }
  fl_problem_free(p);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
/* test_ipm.c: the interior-point method on the global form (solvers/ipm.c) reaches the closed
 * forms of the examples (one contact sticking and sliding, lifted from their local form; boxes
 * on four corners, rigid and compliant; a sliding box; a two-box stack), solves frictionless
 * contacts (1-D cones) with r_t = 0, refuses what it cannot solve, stops on its time limit, and
 * keeps the impulses bounded on the capped weighted pile; its crossover (active-set Newton)
 * converges quadratically on the sliding box and takes the capped pile to 1e-10. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../sim/fl_world.h"
#include "fl_test.h"
#include "problems/fl_problem.h"
#include "solvers/fl_solver.h"

/* solves `p` with ipm (options opts, then extra) to 1e-8 (Siconos's normalization); *s keeps
 * the solver for the caller (destroyed by it), g (3nc) and v (nv, NULL for local) the answer */
static int run_ipm(fl_problem *p, const char *extra, double *v, double *g, fl_result *res,
                   fl_solver **out) {
  ASSERT_OK(fl_register_all());
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("ipm", &s));
  ASSERT_OK(fl_solver_set_options(s, "abs_tol=1e-8,norm=siconos"));
  if (extra) ASSERT_OK(fl_solver_set_options(s, extra));
  ASSERT_OK(fl_solver_setup(s, p));
  ASSERT_OK(fl_solver_solve(s, p, v, g, res));
  printf("%s (%s): %s after %d iterations, error %.3e\n", p->name, extra ? extra : "defaults",
         fl_reason_name(res->reason), res->iters, res->error);
  *out = s;
  return 0;
}


/* example `name` to 1e-8 within max_iters iterations: the cones hold, v is the closed form's
 * and so is J'gamma (global) or gamma itself (one contact: unique) */
static int solve_example(const char *name, int max_iters, const char *extra) {
  fl_problem *p = NULL;
  ASSERT_OK(fl_problem_create_example(name, &p));
  int global = p->kind == FL_PROBLEM_GLOBAL;
  fl_int nr = fl_problem_nrows(p), nv = global ? p->nv : 1;
  double *g = calloc((size_t)nr, sizeof *g), *v = calloc((size_t)nv, sizeof *v);
  double *ge = calloc((size_t)nr, sizeof *ge), *ve = calloc((size_t)nv, sizeof *ve);
  ASSERT(g && v && ge && ve);
  fl_result res;
  fl_solver *s = NULL;
  if (run_ipm(p, extra, global ? v : NULL, g, &res, &s)) return 1;
  ASSERT_EQ(res.reason, FL_CONVERGED_ATOL);
  ASSERT(res.iters <= max_iters);
  const fl_metrics *m = fl_solver_final_metrics(s);
  ASSERT(m && m->natmap <= 1e-8);
  for (fl_int i = 0; i < p->nc; i++) {
    const double *gi = g + 3 * i;
    ASSERT(gi[0] >= 0);
    ASSERT(hypot(gi[1], gi[2]) <= p->mu[i] * gi[0] * (1 + 1e-12) + 1e-300);
  }
  ASSERT_OK(fl_example_solution(name, global ? ve : NULL, ge));
  if (!global) {
    for (fl_int r = 0; r < nr; r++) ASSERT_NEAR(g[r], ge[r], 1e-7);
  } else {
    double vs = 0;
    for (fl_int k = 0; k < p->nv; k++) vs = fmax(vs, fabs(ve[k]));
    for (fl_int k = 0; k < p->nv; k++) ASSERT_NEAR(v[k], ve[k], 1e-7 * fmax(vs, 1));
    double *f = calloc((size_t)p->nv, sizeof *f), *fe = calloc((size_t)p->nv, sizeof *fe);
    ASSERT(f && fe);
    fl_csr_gemtv(p->J, 1.0, g, 0.0, f);
    fl_csr_gemtv(p->J, 1.0, ge, 0.0, fe);
    double fs = 0;
    for (fl_int k = 0; k < p->nv; k++) fs = fmax(fs, fabs(fe[k]));
    for (fl_int k = 0; k < p->nv; k++) ASSERT_NEAR(f[k], fe[k], 1e-7 * fmax(fs, 1e-12));
    free(f), free(fe);
  }
  fl_solver_destroy(s);
  fl_problem_free(p);
  free(g), free(v), free(ge), free(ve);
  return 0;
}


/* one contact, W = [[2, .5, 0], [.5, 1, 0], [0, 0, 1]], sticking: gamma = -W^-1 q exactly */
FL_TEST(one_contact_stick) { return solve_example("one_contact_stick", 30, NULL); }

/* one contact, W = I, sliding: gamma_t = -mu gamma_n q_t / |q_t| */
FL_TEST(one_contact_slide) { return solve_example("one_contact_slide", 30, NULL); }

/* a box on four corners (12 rows on 6 dofs: W singular) */
FL_TEST(box_on_plane) { return solve_example("box_on_plane", 30, NULL); }

/* the same box on compliant contacts (E = R_n in the cone constraint) */
FL_TEST(box_on_plane_compliant) {
  return solve_example("box_on_plane_compliant", 30, NULL);
}

/* a box pushed along the plane, sliding on four corners (the shift's derivative matters) */
FL_TEST(box_push_slide) { return solve_example("box_push_slide", 30, NULL); }

/* two stacked boxes: 24 rows on 12 dofs */
FL_TEST(two_box_stack) { return solve_example("two_box_stack", 30, NULL); }

/* handed to pnewton at 1e-3, it reaches the same closed form */
/* the exact step by GMRES on the frozen matrix's Cholesky (what granular_1e4 gets, where the
 * LU does not fit) reaches the same closed forms */
FL_TEST(box_push_slide_gmres) { return solve_example("box_push_slide", 30, "ipm.inner=gmres"); }
FL_TEST(two_box_stack_gmres) { return solve_example("two_box_stack", 30, "ipm.inner=gmres"); }
FL_TEST(box_on_plane_gmres) { return solve_example("box_on_plane", 30, "ipm.inner=gmres"); }


FL_TEST(box_push_slide_polish) {
  return solve_example("box_push_slide", 30, "ipm.polish=true,ipm.polish_tol=1e-3");
}


/* The crossover from the first iterate (crossover_tol = 1) on the sliding box: the classes
 * (four sliding corners) are right at once and Newton converges quadratically (measured:
 * 1.3e-2, 1.5e-8, 8.8e-15 after the interior point's one iteration), to 1e-12 in 4 records;
 * the interior point alone stops at 7.2e-12 after 12 iterations (a failed factorization) */
FL_TEST(box_push_slide_crossover) {
  return solve_example("box_push_slide", 4,
                       "abs_tol=1e-12,ipm.crossover=true,ipm.crossover_tol=1");
}


/* Frictionless contacts (mu = 0: 1-D cones): the sliding box pushed with mu = 0 keeps its free
 * tangential motion (J'r has no x, y force and no moment about z), r_t = 0 exactly, and the
 * normal impulses carry the weight: the sum of r_n is m g dt plus what stops the free normal
 * motion, i.e. the closed form's normal total (friction does not change it on a flat plane) */
static int frictionless_box_run(const char *extra) {
  fl_problem *p = NULL;
  ASSERT_OK(fl_problem_create_example("box_push_slide", &p));
  fl_int nr = fl_problem_nrows(p);
  double *ge = calloc((size_t)nr, sizeof *ge), *ve = calloc((size_t)p->nv, sizeof *ve);
  double *g = calloc((size_t)nr, sizeof *g), *v = calloc((size_t)p->nv, sizeof *v);
  ASSERT(g && v && ge && ve);
  ASSERT_OK(fl_example_solution("box_push_slide", ve, ge));
  double rn_e = 0;
  for (fl_int i = 0; i < p->nc; i++) rn_e += ge[3 * i];
  for (fl_int i = 0; i < p->nc; i++) p->mu[i] = 0;
  fl_result res;
  fl_solver *s = NULL;
  if (run_ipm(p, extra, v, g, &res, &s)) return 1;
  ASSERT_EQ(res.reason, FL_CONVERGED_ATOL);
  ASSERT(res.iters <= 30);
  double rn = 0;
  for (fl_int i = 0; i < p->nc; i++) {
    ASSERT(g[3 * i] >= 0);
    ASSERT_EQ(g[3 * i + 1], 0.0);
    ASSERT_EQ(g[3 * i + 2], 0.0);
    rn += g[3 * i];
  }
  ASSERT_NEAR(rn, rn_e, 1e-7 * rn_e);
  // one body: its tangential velocities and spin about z are v*'s (no friction acts)
  ASSERT_EQ(p->nv, 6);
  ASSERT_NEAR(v[0], p->vstar[0], 1e-9);
  ASSERT_NEAR(v[1], p->vstar[1], 1e-9);
  ASSERT_NEAR(v[5], p->vstar[5], 1e-9);
  ASSERT_NEAR(v[2], 0.0, 1e-9); // resting on the plane: no normal velocity
  fl_solver_destroy(s);
  fl_problem_free(p);
  free(g), free(v), free(ge), free(ve);
  return 0;
}

FL_TEST(frictionless_box) { return frictionless_box_run(NULL); }

/* the crossover's frictionless rows (u_n = 0 or r_n = 0, r_t = 0) from the first iterate */
FL_TEST(frictionless_box_crossover) {
  return frictionless_box_run("abs_tol=1e-12,ipm.crossover=true,ipm.crossover_tol=1");
}


/* bilateral rows are refused (FL_ERR_UNSUPPORTED), and a factor above ipm.max_factor_gb too */
FL_TEST(refusals) {
  ASSERT_OK(fl_register_all());
  fl_problem *p = NULL;
  ASSERT_OK(fl_problem_create_example("pendulum_bilateral", &p));
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("ipm", &s));
  ASSERT_EQ(fl_solver_setup(s, p), FL_ERR_UNSUPPORTED);
  fl_solver_destroy(s);
  fl_problem_free(p);
  ASSERT_OK(fl_problem_create_example("two_box_stack", &p));
  const char *lin[] = {"ipm.newton_shift=true", "ipm.newton_shift=false"};
  for (int k = 0; k < 2; k++) {
    ASSERT_OK(fl_solver_create("ipm", &s));
    ASSERT_OK(fl_solver_set_options(s, lin[k]));
    ASSERT_OK(fl_solver_set_option(s, "ipm.max_factor_gb", "1e-9"));
    ASSERT_EQ(fl_solver_setup(s, p), FL_ERR_UNSUPPORTED);
    ASSERT_STR_CONTAINS(fl_errmsg(), "max_factor_gb");
    fl_solver_destroy(s);
  }
  fl_problem_free(p);
  return 0;
}


/* The 30-grain weighted pile (80000:1 cylinder) at step 40 of a PGS history, its penetration
 * recovery capped at 0: the world (*w, freed by the caller) and its problem (*p, the world's) */
static int capped_pile_problem(fl_world **w, fl_problem **p) {
  ASSERT_OK(fl_register_all());
  const char *set[] = {"n=30"};
  ASSERT_OK(fl_scene_create("granular", 1, set, w));
  (*w)->compute_metrics = 0;
  fl_solver *h = NULL;
  ASSERT_OK(fl_solver_create("pgs", &h));
  ASSERT_OK(fl_solver_set_options(h, "error_every=0"));
  for (int k = 0; k < 40; k++) ASSERT_OK(fl_world_step(*w, h, NULL));
  fl_solver_destroy(h);
  ASSERT_OK(fl_world_prepare(*w, NULL));
  *p = fl_world_problem(*w);
  (*p)->max_recovery = 0;
  return 0;
}


/* The 30-grain weighted pile (80000:1 cylinder, step 40 of a PGS history) with its penetration
 * recovery capped at 0 (the benchmark's capped steps, small; pnewton's
 * recovery_cap_solves_pile reaches 5.6e-9 there in 799 iterations). With the shift frozen
 * within each iteration the interior point reaches 1e-8 (measured: 881 iterations, 7.1e-9, raw
 * natural map 2.1e-7) with the impulses at the weight's load (|r_n| = 29.5 N s; uncapped
 * answers have 885). With the exact shift (the default) it stalls near 1e-3 on this pile. */
FL_TEST(capped_pile) {
  fl_world *w = NULL;
  fl_problem *p = NULL;
  if (capped_pile_problem(&w, &p)) return 1;
  ASSERT(p->nc > 60);
  fl_int nr = fl_problem_nrows(p);
  double *g = calloc((size_t)nr, sizeof *g), *v = calloc((size_t)p->nv, sizeof *v);
  ASSERT(g && v);
  fl_result res;
  fl_solver *s = NULL;
  if (run_ipm(p, "max_iter=1000,error_every=0,ipm.newton_shift=false", v, g, &res, &s)) return 1;
  const fl_metrics *m = fl_solver_final_metrics(s);
  ASSERT(m != NULL);
  double rn = 0;
  for (fl_int i = 0; i < p->nc; i++) rn += g[3 * i] * g[3 * i];
  rn = sqrt(rn);
  printf("capped pile: %d contacts, merit %.3e, raw natural map %.3e, |r_n| %.4g N s\n",
         (int)p->nc, fmax(m->natmap, m->momentum), m->natmap_raw, rn);
  ASSERT_EQ(res.reason, FL_CONVERGED_ATOL);
  ASSERT(fmax(m->natmap, m->momentum) <= 1e-8 && m->natmap_raw <= 1e-6);
  ASSERT(rn > 20 && rn < 50); // the weight's load (400 kg x 9.81 x 0.0083 = 33 N s) spread
  fl_solver_destroy(s);
  fl_world_free(w);
  free(g), free(v);
  return 0;
}


/* The crossover finishes what the interior point leaves on the same 30-grain capped pile: with
 * the shift frozen the interior point alone, asked for 1e-10, stops at 7.1e-9 (885 iterations,
 * a failed factorization; measured); with the crossover (from its best iterate below
 * crossover_tol = 1e-7) it converges to 7.6e-11 after 867 records, the last few the active-set
 * Newton steps (on the exported step: 5.3e-8 at iteration 869, then 3.9e-10, 1.8e-10, 8.0e-11,
 * one step each). The iteration counts are the records: the interior point's, then the
 * crossover's. */
FL_TEST(capped_pile_crossover) {
  fl_world *w = NULL;
  fl_problem *p = NULL;
  if (capped_pile_problem(&w, &p)) return 1;
  fl_int nr = fl_problem_nrows(p);
  double *g = calloc((size_t)nr, sizeof *g), *v = calloc((size_t)p->nv, sizeof *v);
  ASSERT(g && v);
  fl_result res;
  fl_solver *s = NULL;
  const char *opts = "max_iter=1000,error_every=0,abs_tol=1e-10,ipm.newton_shift=false";
  // without the crossover: no 1e-10
  if (run_ipm(p, opts, v, g, &res, &s)) return 1;
  ASSERT(res.reason != FL_CONVERGED_ATOL && res.error > 1e-9);
  int ipm_iters = res.iters;
  fl_solver_destroy(s);
  if (run_ipm(p, "max_iter=1000,error_every=0,abs_tol=1e-10,ipm.newton_shift=false,"
              "ipm.crossover=true", v, g, &res, &s)) return 1;
  ASSERT_EQ(res.reason, FL_CONVERGED_ATOL);
  const fl_metrics *m = fl_solver_final_metrics(s);
  ASSERT(m != NULL);
  printf("capped pile, crossover: merit %.3e, raw natural map %.3e after %d records (the "
         "interior point alone: %d)\n", fmax(m->natmap, m->momentum), m->natmap_raw, res.iters,
         ipm_iters);
  ASSERT(fmax(m->natmap, m->momentum) <= 1e-10);
  // 867 measured (rounding may move the interior point's hand-over by a few); fewer than the
  // interior point alone takes to fail
  ASSERT(res.iters >= 850 && res.iters <= 885 && res.iters < ipm_iters);
  for (fl_int i = 0; i < p->nc; i++) {
    const double *gi = g + 3 * i;
    ASSERT(gi[0] >= 0 && hypot(gi[1], gi[2]) <= p->mu[i] * gi[0] * (1 + 1e-9) + 1e-300);
  }
  fl_solver_destroy(s);
  fl_world_free(w);
  free(g), free(v);
  return 0;
}


/* The same 30-grain capped pile with the exact shift (the default): the interior point alone
 * stalls there (measured: steps shrinking geometrically from iteration 10, one sliding contact
 * at a time with y and rho both on their cones' boundary; a failed factorization after 72
 * iterations at 1.3e-3). Either short-step remedy takes it three orders further:
 * re-aligning such contacts' friction against their slip (align_step, the default; measured
 * 4.2e-7 after 1000 iterations) or retrying a short exact step with the shift frozen
 * (frozen_retry = 0.1: converged, 4.6e-9 after 782). */
FL_TEST(capped_pile_exact_shift) {
  fl_world *w = NULL;
  fl_problem *p = NULL;
  if (capped_pile_problem(&w, &p)) return 1;
  fl_int nr = fl_problem_nrows(p);
  double *g = calloc((size_t)nr, sizeof *g), *v = calloc((size_t)p->nv, sizeof *v);
  ASSERT(g && v);
  fl_result res;
  fl_solver *s = NULL;
  // without the remedies: the stall
  if (run_ipm(p, "max_iter=1000,error_every=0,ipm.align_step=0,ipm.frozen_retry=0", v, g, &res, &s))
    return 1;
  ASSERT(res.reason != FL_CONVERGED_ATOL && res.error > 1e-4);
  fl_solver_destroy(s);
  // the default (align_step) and the frozen retry instead
  const char *opts[] = {"max_iter=1000,error_every=0",
                        "max_iter=1000,error_every=0,ipm.align_step=0,ipm.frozen_retry=0.1"};
  for (int c = 0; c < 2; c++) {
    if (run_ipm(p, opts[c], v, g, &res, &s)) return 1;
    const fl_metrics *m = fl_solver_final_metrics(s);
    ASSERT(m != NULL);
    printf("  merit %.3e\n", fmax(m->natmap, m->momentum));
    ASSERT(fmax(m->natmap, m->momentum) <= 1e-6);
    for (fl_int i = 0; i < p->nc; i++) {
      const double *gi = g + 3 * i;
      ASSERT(gi[0] >= 0 && hypot(gi[1], gi[2]) <= p->mu[i] * gi[0] * (1 + 1e-9) + 1e-300);
    }
    fl_solver_destroy(s);
  }
  fl_world_free(w);
  free(g), free(v);
  return 0;
}


/* a time limit stops it with DIVERGED_TIME_LIMIT and a finite iterate, never "converged" */
FL_TEST(time_limit) {
  fl_problem *p = NULL;
  ASSERT_OK(fl_problem_create_example("two_box_stack", &p));
  fl_int nr = fl_problem_nrows(p);
  double *g = calloc((size_t)nr, sizeof *g), *v = calloc((size_t)p->nv, sizeof *v);
  ASSERT(g && v);
  fl_result res;
  fl_solver *s = NULL;
  if (run_ipm(p, "time_limit=1e-12", v, g, &res, &s)) return 1;
  ASSERT_EQ(res.reason, FL_DIVERGED_TIME_LIMIT);
  for (fl_int r = 0; r < nr; r++) ASSERT(isfinite(g[r]));
  fl_solver_destroy(s);
  fl_problem_free(p);
  free(g), free(v);
  return 0;
}

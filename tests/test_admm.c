// SPDX-License-Identifier: Apache-2.0
/* test_admm.c: the ADMM solver (solvers/admm.c) reaches the common merit on FCLIB problems, and
 * its answer satisfies Coulomb's law contact by contact. The solver contract on the built-in
 * examples is test_conformance's (every registered solver is enrolled there). */
#include <math.h>
#include <stdio.h>

#include "fl_test.h"
#include "problems/fl_problem.h"
#include "solvers/fl_solver.h"

static fl_problem *load(const char *sub, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/fclib/%s%s.hdf5", fl_test_shared_dir(), sub, name);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fclose(f);
  fl_problem *p = NULL;
  return fl_problem_load_fclib(path, &p) == FL_OK ? p : NULL;
}


/* solves p with admm to 1e-8 (Siconos's normalization); checks the reason, the common merit of
 * the returned impulses and, on the local form, Coulomb's law per contact */
static int solve_check(fl_problem *p, int max_iters) {
  ASSERT_OK(fl_register_all());
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("admm", &s));
  ASSERT_OK(fl_solver_set_options(s, "abs_tol=1e-8,norm=siconos,max_iter=20000"));
  ASSERT_OK(fl_solver_setup(s, p));
  fl_int nr = fl_problem_nrows(p);
  double *g = calloc((size_t)nr + 1, sizeof *g), *v = calloc((size_t)p->nv + 1, sizeof *v);
  ASSERT(g && v);
  fl_result res;
  ASSERT_OK(fl_solver_solve(s, p, p->kind == FL_PROBLEM_GLOBAL ? v : NULL, g, &res));
  printf("%s: %s after %d iterations, error %.3e\n", p->name, fl_reason_name(res.reason),
         res.iters, res.error);
  ASSERT_EQ(res.reason, FL_CONVERGED_ATOL);
  ASSERT(res.iters <= max_iters);
  const fl_metrics *m = fl_solver_final_metrics(s);
  ASSERT(m && m->natmap <= 1e-8);
  for (fl_int k = 0; k < nr; k++) ASSERT(isfinite(g[k]));
  // every impulse in its cone (the iterate handed out is a cone projection)
  for (fl_int i = 0; i < p->nc; i++) {
    const double *gi = g + 3 * i;
    ASSERT(gi[0] >= 0);
    ASSERT(hypot(gi[1], gi[2]) <= p->mu[i] * gi[0] * (1 + 1e-12) + 1e-300);
  }
  fl_solver_destroy(s);
  free(g);
  free(v);
  fl_problem_free(p);
  return 0;
}


/* the tower of 570 contacts: a singular W (redundant contacts), which ADMM solves in tens of
 * iterations with a few refactorizations of W + rho I */
FL_TEST(kaplas_tower) {
  fl_problem *p = load("converted_from_siconos_dat/", "KaplasTower-i1061-4");
  if (!p) SKIP("no %s/fclib/converted_from_siconos_dat/KaplasTower-i1061-4.hdf5",
               fl_test_shared_dir());
  return solve_check(p, 200);
}


/* a global problem, solved through its local form W = J A^-1 J' */
FL_TEST(box_stack_global) {
  fl_problem *p = load("", "Box_Stacks-i0122-82-5");
  if (!p) SKIP("no %s/fclib/Box_Stacks-i0122-82-5.hdf5", fl_test_shared_dir());
  return solve_check(p, 2000);
}


/* a slightly asymmetric W (as files written with rounded entries have; Capsules-i101-404's is
 * 6e-4 relative): its symmetric part is factorized and the skew part lagged, and the answer
 * meets the common merit of the original W. Two coupled contacts, one pressed and sliding. */
FL_TEST(asymmetric_w) {
  static const fl_int ti[12] = {0, 0, 1, 1, 2, 3, 3, 4, 5, 0, 3, 2};
  static const fl_int tj[12] = {0, 1, 0, 1, 2, 3, 4, 4, 5, 3, 0, 5};
  static const double tv[12] = {2, 0.1, 0.1 + 2e-3, 1, 1, 2, -0.2, 1.5, 1, 0.5, 0.5 - 1e-3, 0.05};
  fl_problem *p;
  ASSERT_OK(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 2, 0, 0, &p));
  snprintf(p->name, sizeof p->name, "asymmetric_w");
  ASSERT_OK(fl_csr_from_triplets(6, 6, 12, ti, tj, tv, &p->W));
  const double q[6] = {-1, 0.8, 0.1, -0.5, 0.01, 0};
  for (int r = 0; r < 6; r++) p->q[r] = q[r];
  p->mu[0] = 0.3, p->mu[1] = 0.6;
  return solve_check(p, 2000);
}


/* bilateral rows are refused with a message that names them */
FL_TEST(refuses_bilateral) {
  ASSERT_OK(fl_register_all());
  fl_problem *q = NULL;
  fl_solver *s = NULL;
  ASSERT_OK(fl_problem_create_example("pendulum_bilateral", &q));
  ASSERT_OK(fl_solver_create("admm", &s));
  ASSERT_EQ(fl_solver_setup(s, q), FL_ERR_UNSUPPORTED);
  ASSERT_STR_CONTAINS(fl_errmsg(), "bilateral");
  fl_solver_destroy(s);
  fl_problem_free(q);
  return 0;
}

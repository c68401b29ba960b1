// SPDX-License-Identifier: Apache-2.0
/* test_sparse_lu.c: the KLU wrapper (solvers/sparse_lu.c) solves row-stored systems exactly,
 * reuses its pivots across values of one pattern, and reports a singular matrix; NSN's
 * Alart-Curnier Newton gives the same answer with it as with UMFPACK. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fl_test.h"
#include "problems/fl_problem.h"
#include "solvers/fl_solver.h"
#include "solvers/sparse_lu.h"

/* G = [[4, 1, 0], [2, 5, 1], [0, 3, 6]] by rows, then the same pattern with other values */
FL_TEST(rows_refactor_singular) {
  static const fl_int ptr[4] = {0, 2, 5, 7}, idx[7] = {0, 1, 0, 1, 2, 1, 2};
  double val[7] = {4, 1, 2, 5, 1, 3, 6};
  const double xs[3] = {1, -2, 0.5};
  fl_splu *lu = NULL;
  for (int pass = 0; pass < 3; pass++) {
    if (pass == 1) // new values, same pattern: refactorized with the old pivots
      for (int k = 0; k < 7; k++) val[k] *= 1 + 0.1 * k;
    if (pass == 2) val[0] = 1e-3; // the old pivot order still works, or it refactors fully
    double b[3] = {0, 0, 0}, x[3];
    for (int i = 0; i < 3; i++)
      for (fl_int k = ptr[i]; k < ptr[i + 1]; k++) b[i] += val[k] * xs[idx[k]];
    ASSERT_EQ(fl_splu_solve_rows(&lu, 3, ptr, idx, val, b, x), 0);
    for (int i = 0; i < 3; i++) ASSERT_NEAR(x[i], xs[i], 1e-11);
  }
  // a zero row: singular
  double zval[7] = {4, 1, 0, 0, 0, 3, 6}, b[3] = {1, 1, 1}, x[3];
  ASSERT_EQ(fl_splu_solve_rows(&lu, 3, ptr, idx, zval, b, x), -1);
  fl_splu_free(&lu);
  ASSERT(lu == NULL);
  fl_splu_free(&lu); // NULL-safe
  return 0;
}


/* NSN's Alart-Curnier Newton with KLU (as prox's inner solves use it) and with UMFPACK: both
 * reach the tolerance on an FCLIB file, and their velocities u = W gamma + q agree (the impulses
 * of redundant contacts need not) */
FL_TEST(nsn_klu_and_umfpack_converge) {
  char path[1024];
  snprintf(path, sizeof path, "%s/fclib/converted_from_siconos_dat/OneObject-i100000-499.hdf5",
           fl_test_shared_dir());
  FILE *f = fopen(path, "rb");
  if (!f) SKIP("no %s", path);
  fclose(f);
  fl_problem *p = NULL;
  ASSERT_OK(fl_problem_load_fclib(path, &p));
  ASSERT_OK(fl_register_all());
  fl_int n = 3 * p->nc;
  double *u[2];
  const char *lu[2] = {"klu", "sparse"};
  for (int k = 0; k < 2; k++) {
    double *g = calloc((size_t)n, sizeof(double));
    u[k] = calloc((size_t)n, sizeof(double));
    ASSERT(g && u[k]);
    fl_solver *s = NULL;
    ASSERT_OK(fl_solver_create("nsn", &s));
    ASSERT_OK(fl_solver_set_options(s, "ncp=ac,abs_tol=1e-10,max_iter=200"));
    ASSERT_OK(fl_solver_set_option(s, "ac.lu", lu[k]));
    ASSERT_OK(fl_solver_setup(s, p));
    fl_result res;
    ASSERT_OK(fl_solver_solve(s, p, NULL, g, &res));
    printf("nsn ac.lu=%s: %s after %d iterations, error %.3e\n", lu[k],
           fl_reason_name(res.reason), res.iters, res.error);
    ASSERT_EQ(res.reason, FL_CONVERGED_ATOL);
    const fl_metrics *m = fl_solver_final_metrics(s);
    ASSERT(m && m->natmap <= 1e-9);
    memcpy(u[k], p->q, (size_t)n * sizeof(double));
    fl_csr_gemv(p->W, 1.0, g, 1.0, u[k]);
    fl_solver_destroy(s);
    free(g);
  }
  double dmax = 0, umax = 0;
  for (fl_int r = 0; r < n; r++) {
    dmax = fmax(dmax, fabs(u[0][r] - u[1][r]));
    umax = fmax(umax, fabs(u[1][r]));
  }
  printf("max |u_klu - u_umfpack| = %.3e of max |u| = %.3e\n", dmax, umax);
  ASSERT(dmax <= 1e-6 * umax);
  free(u[0]);
  free(u[1]);
  fl_problem_free(p);
  return 0;
}

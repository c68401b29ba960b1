// SPDX-License-Identifier: Apache-2.0
/* test_lin.c: the inner linear solvers of NSN (solvers/fl_lin.h) on known SPD systems.
 *
 * K = 2-D Laplacian (12 x 12 grid, Dirichlet) plus a diagonal spread over two decades, so
 * the diagonal preconditioner matters; x_true known, b = K x_true. Every solver is checked
 * against x_true; PCR's natural residual is monotone; CHOLMOD regularizes a singular K;
 * PETSc's CR + Jacobi reproduces our PCR iterate for iterate (serial here, 2 ranks in
 * test_petsc_mpi.c) and other KSPs run through the options string.
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <link.h>
#include <math.h>
#include <string.h>

#include "solvers/fl_lin.h"
#include "tests/fl_test.h"

#define G 12
#define N (G * G)

static fl_csr *laplacian(double base, double spread) {
  fl_int ti[5 * N], tj[5 * N];
  double tv[5 * N];
  int nt = 0;
  for (int i = 0; i < G; i++)
    for (int j = 0; j < G; j++) {
      int r = i * G + j;
      // diagonal: 4 + a smooth spread (base .. base spread), off-diagonals -1
      ti[nt] = tj[nt] = r;
      tv[nt++] = 4 + base * pow(spread, (double)r / (N - 1));
      const int nb[4][2] = {{i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}};
      for (int k = 0; k < 4; k++) {
        if (nb[k][0] < 0 || nb[k][0] >= G || nb[k][1] < 0 || nb[k][1] >= G) continue;
        ti[nt] = r;
        tj[nt] = nb[k][0] * G + nb[k][1];
        tv[nt++] = -1;
      }
    }
  fl_csr *K = NULL;
  if (fl_csr_from_triplets(N, N, nt, ti, tj, tv, &K) != FL_OK) return NULL;
  return K;
}


static void rhs_of(const fl_csr *K, double *xt, double *b) {
  for (int r = 0; r < N; r++) xt[r] = sin(0.37 * r) + 0.1 * r / N;
  fl_csr_gemv(K, 1.0, xt, 0.0, b);
}


static int solve_with(int type, int max_iter, double rel_tol, const char *popts, const fl_csr *K,
                      const double *b, double *x, fl_lin **keep) {
  fl_lin_opts o;
  memset(&o, 0, sizeof o);
  o.type = type;
  o.max_iter = max_iter;
  o.rel_tol = rel_tol;
  o.reg = 1e-12;
  if (popts) snprintf(o.petsc_options, sizeof o.petsc_options, "%s", popts);
  fl_lin *l = NULL;
  int rc = fl_lin_create(&o, K, &l);
  if (rc < 0) return rc;
  rc = fl_lin_solve(l, K, b, x, NULL);
  if (keep && rc == FL_OK)
    *keep = l;
  else
    fl_lin_free(l);
  return rc;
}


static double err_inf(const double *x, const double *y) {
  double e = 0;
  for (int r = 0; r < N; r++) e = fmax(e, fabs(x[r] - y[r]));
  return e;
}


FL_TEST(every_solver_finds_x) {
  fl_csr *K = laplacian(1, 100);
  ASSERT(K);
  double xt[N], b[N], x[N];
  rhs_of(K, xt, b);
  struct { int type, iters; double tol; } c[] = {
    {FL_LIN_JACOBI, 3000, 1e-7}, {FL_LIN_GS, 1500, 1e-7}, {FL_LIN_PCG, 300, 1e-9},
    {FL_LIN_PCR, 300, 1e-9}, {FL_LIN_DIRECT, 1, 1e-11}};
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    fl_lin *l = NULL;
    ASSERT_OK(solve_with(c[k].type, c[k].iters, 1e-12, NULL, K, b, x, &l));
    printf("%-7s %4d iterations  residual %.2e  |x - x_true| %.2e\n", l->ops->name, l->stat.iters,
           l->stat.res / l->stat.res0, err_inf(x, xt));
    ASSERT(l->stat.reason > 0);
    ASSERT_LE(err_inf(x, xt), c[k].tol);
    fl_lin_free(l);
  }
  fl_csr_free(K);
  return 0;
}


FL_TEST(pcr_natural_residual_monotone) {
  fl_csr *K = laplacian(1e-3, 10);
  ASSERT(K);
  double xt[N], b[N], x[N];
  rhs_of(K, xt, b);
  fl_lin *l = NULL;
  ASSERT_OK(solve_with(FL_LIN_PCR, 200, 1e-13, NULL, K, b, x, &l));
  int n;
  const double *nat, *r = fl_lin_history(l, &n, &nat);
  ASSERT(n > 20);
  for (int k = 1; k < n; k++) ASSERT_LE(nat[k], nat[k - 1] * (1 + 1e-12) + 1e-14 * nat[0]);
  // PCG on the same system is not monotone in the 2-norm (thesis Fig. 15): count the rises
  fl_lin *lc = NULL;
  ASSERT_OK(solve_with(FL_LIN_PCG, 200, 1e-13, NULL, K, b, x, &lc));
  int nc, rises = 0;
  const double *rc = fl_lin_history(lc, &nc, NULL);
  for (int k = 1; k < nc; k++) rises += rc[k] > rc[k - 1];
  printf("pcr %d iterations (natural norm monotone, final %.2e); pcg %d iterations, 2-norm rose "
         "%d times\n", n - 1, r[n - 1] / r[0], nc - 1, rises);
  fl_lin_free(l);
  fl_lin_free(lc);
  fl_csr_free(K);
  return 0;
}


FL_TEST(direct_regularizes_singular) {
  // two identical rows (redundant contacts): K = [1 1 0; 1 1 0; 0 0 2], b in the range
  fl_int ti[5] = {0, 0, 1, 1, 2}, tj[5] = {0, 1, 0, 1, 2};
  double tv[5] = {1, 1, 1, 1, 2};
  fl_csr *K = NULL;
  ASSERT_OK(fl_csr_from_triplets(3, 3, 5, ti, tj, tv, &K));
  double b[3] = {2, 2, 4}, x[3];
  fl_lin_opts o;
  memset(&o, 0, sizeof o);
  o.type = FL_LIN_DIRECT;
  o.max_iter = 1;
  o.reg = 1e-10;
  fl_lin *l = NULL;
  ASSERT_OK(fl_lin_create(&o, K, &l));
  fl_lin_stat st;
  ASSERT_OK(fl_lin_solve(l, K, b, x, &st));
  printf("singular K: %d retries, shift %.1e (of the unit-diagonal K), residual %.2e\n", st.nreg,
         st.reg_shift, st.res);
  ASSERT(st.reg_shift > 0 && st.reg_shift < 1e-6);
  ASSERT(st.reason == FL_LIN_EXACT);
  ASSERT_LE(st.res, 1e-6);
  ASSERT_NEAR(x[0], x[1], 1e-6); /* the minimum-norm split of the redundant pair */
  ASSERT_NEAR(x[2], 2, 1e-9);
  fl_lin_free(l);
  fl_csr_free(K);
  return 0;
}


FL_TEST(petsc_cr_matches_pcr_serial) {
#ifndef FL_HAVE_PETSC
  SKIP("built without PETSc");
#else
  fl_csr *K = laplacian(1, 100);
  ASSERT(K);
  double xt[N], b[N], x1[N], x2[N];
  rhs_of(K, xt, b);
  // a fixed budget of 15 iterations: the same recurrence, so the same iterate
  fl_lin *l1 = NULL, *l2 = NULL;
  ASSERT_OK(solve_with(FL_LIN_PCR, 15, 0, NULL, K, b, x1, &l1));
  ASSERT_OK(solve_with(FL_LIN_PETSC, 15, 0, "-ksp_type cr -pc_type jacobi", K, b, x2, &l2));
  ASSERT_EQ(l1->stat.iters, 15);
  ASSERT_EQ(l2->stat.iters, 15);
  double nx = 0;
  for (int r = 0; r < N; r++) nx = fmax(nx, fabs(x1[r]));
  printf("15 iterations: |x_pcr - x_petsc|_inf = %.2e (|x| %.2e), residuals %.6e vs %.6e\n",
         err_inf(x1, x2), nx, l1->stat.res, l2->stat.res);
  ASSERT_LE(err_inf(x1, x2), 1e-12 * nx);
  int n1, n2;
  const double *h1 = fl_lin_history(l1, &n1, NULL), *h2 = fl_lin_history(l2, &n2, NULL);
  ASSERT_EQ(n1, n2);
  for (int k = 0; k < n1; k++) ASSERT_NEAR(h1[k], h2[k], 1e-10 * h1[0]);
  fl_lin_free(l1);
  fl_lin_free(l2);
  // to the tolerance: both stop on ||b - K x|| <= 1e-10 ||b|| and agree to it
  ASSERT_OK(solve_with(FL_LIN_PCR, 500, 1e-10, NULL, K, b, x1, &l1));
  ASSERT_OK(solve_with(FL_LIN_PETSC, 500, 1e-10, "-ksp_type cr -pc_type jacobi", K, b, x2, &l2));
  ASSERT(l1->stat.reason == FL_LIN_CONVERGED && l2->stat.reason == FL_LIN_CONVERGED);
  ASSERT_EQ(l1->stat.iters, l2->stat.iters);
  ASSERT_LE(err_inf(x1, x2), 1e-9 * nx);
  ASSERT_LE(l2->stat.res, 1e-10 * l2->stat.res0);
  fl_lin_free(l1);
  fl_lin_free(l2);
  fl_csr_free(K);
  return 0;
#endif
}


FL_TEST(petsc_any_ksp_by_options) {
#ifndef FL_HAVE_PETSC
  SKIP("built without PETSc");
#else
  fl_csr *K = laplacian(1, 100);
  ASSERT(K);
  double xt[N], b[N], x1[N], x2[N];
  rhs_of(K, xt, b);
  // CG + Jacobi reproduces our PCG at a fixed budget
  fl_lin *l1 = NULL, *l2 = NULL;
  ASSERT_OK(solve_with(FL_LIN_PCG, 12, 0, NULL, K, b, x1, &l1));
  ASSERT_OK(solve_with(FL_LIN_PETSC, 12, 0, "-ksp_type cg -pc_type jacobi", K, b, x2, &l2));
  ASSERT_LE(err_inf(x1, x2), 1e-11);
  fl_lin_free(l1);
  fl_lin_free(l2);
  // GMRES with ICC: converges to x_true
  ASSERT_OK(solve_with(FL_LIN_PETSC, 200, 1e-12, "-ksp_type gmres -pc_type icc", K, b, x2, &l2));
  ASSERT(l2->stat.reason == FL_LIN_CONVERGED);
  ASSERT_LE(err_inf(x2, xt), 1e-9);
  fl_lin_free(l2);
  // an unknown type: an error naming the option, no crash
  int rc = solve_with(FL_LIN_PETSC, 10, 0, "-ksp_type nonsense", K, b, x2, NULL);
  ASSERT(rc < 0);
  ASSERT_STR_CONTAINS(fl_errmsg(), "lin.petsc_options");
  fl_csr_free(K);
  return 0;
#endif
}


#ifdef FL_HAVE_PETSC
static int petsc_seen(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  if (info->dlpi_name && strstr(info->dlpi_name, "frictionlab-petsc")) *(int *)data = 1;
  return 0;
}
static int petsc_module_loaded(void) {
  int seen = 0;
  dl_iterate_phdr(petsc_seen, &seen);
  return seen;
}
#endif

/* Naming lin=petsc (options, views) does not load PETSc (106 libraries, ~45 ms); the first use does. */
FL_TEST(petsc_module_loaded_on_first_use) {
  ASSERT(strcmp(fl_lin_type_name(FL_LIN_PCG), "pcg") == 0);
  ASSERT(strcmp(fl_lin_type_name(FL_LIN_PETSC), "petsc") == 0);
  ASSERT(strcmp(fl_lin_type_name(FL_LIN_NTYPES), "?") == 0);
#ifndef FL_HAVE_PETSC
  SKIP("built without PETSc");
#else
  ASSERT(!petsc_module_loaded());
  const fl_lin_ops *ops = fl_lin_ops_get(FL_LIN_PETSC);
  ASSERT(ops && strcmp(ops->name, "petsc") == 0);
  ASSERT(petsc_module_loaded());
  return 0;
#endif
}

// SPDX-License-Identifier: Apache-2.0
/* test_petsc_mpi.c: NSN with the "petsc" inner solver distributed over MPI ranks.
 *
 * mpi_worker: every rank builds the same 5-box stack (mass ratio 4096:1, phi0 = -0.1 mm) and
 * solves it twice: nsn with lin=pcr on its own, and nsn with lin=petsc, lin.petsc_comm=world,
 * "-ksp_type cr -pc_type jacobi", where the Newton matrix is distributed by rows over
 * PETSC_COMM_WORLD (MatCreateAIJ) and every rank gets the whole step back. The impulses must
 * agree to the inner tolerance. Run alone (one rank) it is the serial check.
 *
 * mpi2_agrees: runs mpi_worker under `mpiexec --allow-run-as-root --oversubscribe -n 2` and
 * checks that both ranks ran and agreed. Skipped (77) without PETSc or mpiexec.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "solvers/fl_solver.h"
#include "tests/fl_test.h"

#ifdef FL_HAVE_PETSC
#include <mpi.h>

#include "tests/fl_test_stack.h"

static int solve(const fl_problem *p, const char *const *opts, double *v, double *g) {
  fl_solver *s = NULL;
  fl_result res;
  int rc = fl_solver_create("nsn", &s);
  for (int k = 0; rc == FL_OK && opts[k]; k += 2) rc = fl_solver_set_option(s, opts[k], opts[k + 1]);
  if (rc == FL_OK) rc = fl_solver_setup(s, p);
  if (rc == FL_OK) rc = fl_solver_solve(s, p, v, g, &res);
  fl_solver_destroy(s);
  return rc;
}
#endif


FL_TEST(mpi_worker) {
#ifndef FL_HAVE_PETSC
  SKIP("built without PETSc");
#else
  const double m[5] = {8, 64, 512, 4096, 32768};
  fl_problem *p = fl_test_stack(5, m, 0.5, 0.5, 1.0 / 120, -1e-4);
  ASSERT(p);
  ASSERT_OK(fl_register_all());
  double v1[30], g1[60], v2[30], g2[60];
  // the Fischer-Burmeister Newton, whose inner linear solve is what this compares (the
  // Alart-Curnier default on such steps has no inner Krylov solve)
  const char *pcr[] = {"ncp", "fb", "lin", "pcr", "lin.rel_tol", "1e-10", NULL};
  const char *pet[] = {"ncp", "fb", "lin", "petsc", "lin.rel_tol", "1e-10", "lin.petsc_comm", "world",
                       "lin.petsc_options", "-ksp_type cr -pc_type jacobi", NULL};
  ASSERT_OK(solve(p, pcr, v1, g1));
  ASSERT_OK(solve(p, pet, v2, g2)); /* initializes PETSc (and MPI) on first use */
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double gmax = 0, dg = 0;
  for (int r = 0; r < 60; r++) {
    gmax = fmax(gmax, fabs(g1[r]));
    dg = fmax(dg, fabs(g1[r] - g2[r]));
  }
  printf("mpi_worker: rank %d of %d: |gamma_pcr - gamma_petsc|_inf = %.3e (|gamma| %.3e)\n", rank,
         size, dg, gmax);
  // 8 Newton iterations through inner solves that agree to rounding
  ASSERT_LE(dg, 1e-8 * gmax);
  printf("mpi_worker: rank %d of %d ok\n", rank, size);
  fl_problem_free(p);
  return 0;
#endif
}


FL_TEST(mpi2_agrees) {
#ifndef FL_HAVE_PETSC
  SKIP("built without PETSc");
#else
  if (system("command -v mpiexec > /dev/null 2>&1") != 0) SKIP("mpiexec not found");
  int inited = 0;
  MPI_Initialized(&inited);
  if (inited) SKIP("MPI already runs in this process (run the case on its own, as ctest does)");
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT(n > 0);
  exe[n] = 0;
  char cmd[4200];
  snprintf(cmd, sizeof cmd,
           "mpiexec --allow-run-as-root --oversubscribe -n 2 '%s' mpi_worker 2>&1", exe);
  FILE *f = popen(cmd, "r");
  ASSERT(f);
  char line[512];
  int ok = 0;
  while (fgets(line, sizeof line, f)) {
    fputs(line, stdout);
    if (strstr(line, "of 2 ok")) ok++;
  }
  int st = pclose(f);
  ASSERT_EQ(st, 0);
  ASSERT_EQ(ok, 2);
  return 0;
#endif
}

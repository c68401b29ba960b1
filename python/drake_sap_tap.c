// SPDX-License-Identifier: Apache-2.0
/* drake_sap_tap.c: reads the Newton iterations of Drake's SAP solver, which pydrake does not
 * expose (docs/peers.md). Preloaded (LD_PRELOAD) into the Python process that runs the Drake
 * peers, it takes the place of SapSolver<double>::SolveWithGuess (libdrake.so calls it through
 * its PLT), calls the real one and keeps SapStatistics::num_iters of every solve, which the
 * script reads with ctypes. Tied to Drake's symbol names and to SapStatistics starting with
 * `int num_iters; int num_line_search_iters;` (sap_solver.h, unchanged since 2022): scripts/setup
 * builds it beside the pinned drake, and the script checks that it counts one solve per step.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define SOLVE "_ZN5drake9multibody15contact_solvers8internal9SapSolverIdE14SolveWithGuessERKNS2_17SapContactProblemIdEERKN5Eigen6MatrixIdLin1ELi1ELi0ELin1ELi1EEEPNS2_16SapSolverResultsIdEE"
#define STATS "_ZNK5drake9multibody15contact_solvers8internal9SapSolverIdE14get_statisticsEv"

typedef int (*solve_fn)(void *self, const void *problem, const void *v_guess, void *results);
typedef const int *(*stats_fn)(const void *self);

#define RING 65536
static int iters[RING], line_search[RING];
static long ncall;

// the real solve; the name is Drake's mangled SapSolver<double>::SolveWithGuess(problem, v, results)
int _ZN5drake9multibody15contact_solvers8internal9SapSolverIdE14SolveWithGuessERKNS2_17SapContactProblemIdEERKN5Eigen6MatrixIdLin1ELi1ELi0ELin1ELi1EEEPNS2_16SapSolverResultsIdEE(
    void *self, const void *problem, const void *v_guess, void *results) {
  static solve_fn solve;
  static stats_fn stats;
  if (!solve) {
    // libdrake.so is loaded by Python's extension modules into their own (local) scope, where
    // RTLD_NEXT does not look: ask the loaded library itself
    void *h = dlopen("libdrake.so", RTLD_NOW | RTLD_NOLOAD);
    if (h) {
      solve = (solve_fn)dlsym(h, SOLVE);
      stats = (stats_fn)dlsym(h, STATS);
    }
    if (!solve) {
      fprintf(stderr, "drake_sap_tap: SapSolver<double>::SolveWithGuess not found in libdrake.so\n");
      abort();
    }
  }
  int status = solve(self, problem, v_guess, results);
  const int *st = stats ? stats(self) : 0;
  iters[ncall % RING] = st ? st[0] : -1;
  line_search[ncall % RING] = st ? st[1] : -1;
  ncall++;
  return status;
}

/* Solves so far. */
long fl_sap_tap_calls(void) { return ncall; }

/* Newton and line-search iterations of solve k (0-based, among the last RING), or -1. */
int fl_sap_tap_iters(long k) { return k >= 0 && k < ncall && ncall - k <= RING ? iters[k % RING] : -1; }
int fl_sap_tap_line_search(long k) {
  return k >= 0 && k < ncall && ncall - k <= RING ? line_search[k % RING] : -1;
}

// SPDX-License-Identifier: Apache-2.0
/* lin_gs.c: Gauss-Seidel (SOR with weight omega, 1 by default) on K x = b, the inner solver
 * "gs" of NSN. One iteration is one forward sweep in row order:
 *
 *   x_i <- x_i + omega (b_i - sum_j K_ij x_j) / K_ii,   i = 0 .. n-1.
 *
 * The true residual ||b - K x|| is recomputed after each sweep for the record (a second
 * matrix-vector product per iteration, kept because the residual curve is the point).
 */
#include <math.h>

#include "fl_lin.h"


static int gs_setup(fl_lin *l, const fl_csr *K) { return FL_OK; }


static int gs_solve(fl_lin *l, const fl_csr *K, const double *b, double *x) {
  fl_int n = l->n;
  double *r = l->w, *dinv = l->w + n;
  fl__lin_inv_diag(K, dinv);
  double omega = l->opts.omega > 0 ? l->opts.omega : 1.0;

  for (fl_int i = 0; i < n; i++) x[i] = 0;
  double res = sqrt(fl__lin_dot(n, b, b));
  if (fl__lin_record(l, res, NAN)) {
    l->stat.reason = FL_LIN_CONVERGED;
    return FL_OK;
  }
  for (int it = 1; it <= l->opts.max_iter; it++) {
    // forward sweep using the newest values
    for (fl_int i = 0; i < n; i++) {
      double s = b[i];
      for (fl_int k = K->rowptr[i]; k < K->rowptr[i + 1]; k++) s -= K->val[k] * x[K->col[k]];
      x[i] += omega * dinv[i] * s;
    }
    res = fl__lin_residual(K, b, x, r);
    if (fl__lin_step(l, it, res, NAN)) return FL_OK;
  }
  l->stat.reason = FL_LIN_MAX_ITER;
  return FL_OK;
}


const fl_lin_ops fl_lin_gs_ops = {"gs", gs_setup, gs_solve, NULL};

// SPDX-License-Identifier: Apache-2.0
/* lin_jacobi.c: weighted Jacobi iteration on K x = b (the inner solver "jacobi" of NSN).
 *
 *   x_{k+1} = x_k + omega D^-1 (b - K x_k),   D = diag(K).
 *
 * With omega = 0 (automatic) the weight is 1/G, G = max_i sum_j |K_ij| / sqrt(K_ii K_jj), the
 * Gershgorin bound of the spectrum of D^-1/2 K D^-1/2: then every eigenvalue of omega D^-1 K
 * lies in (0, 1] and the iteration converges on any SPD K (slowly when K is ill-conditioned,
 * which is the point of the comparison). One matrix-vector product per iteration.
 */
#include <math.h>

#include "fl_lin.h"


static double jacobi_weight(const fl_csr *K, const double *dinv) {
  double g = 0;
  for (fl_int i = 0; i < K->nrow; i++) {
    double s = 0;
    for (fl_int k = K->rowptr[i]; k < K->rowptr[i + 1]; k++)
      s += fabs(K->val[k]) * sqrt(dinv[i] * dinv[K->col[k]]);
    if (s > g) g = s;
  }
  return g > 0 ? 1.0 / g : 1.0;
}


static int jacobi_setup(fl_lin *l, const fl_csr *K) { return FL_OK; }


static int jacobi_solve(fl_lin *l, const fl_csr *K, const double *b, double *x) {
  fl_int n = l->n;
  double *r = l->w, *dinv = l->w + n;
  fl__lin_inv_diag(K, dinv);
  double omega = l->opts.omega > 0 ? l->opts.omega : jacobi_weight(K, dinv);

  // x = 0, r = b
  for (fl_int i = 0; i < n; i++) {
    x[i] = 0;
    r[i] = b[i];
  }
  double res = sqrt(fl__lin_dot(n, r, r));
  if (fl__lin_record(l, res, NAN)) {
    l->stat.reason = FL_LIN_CONVERGED;
    return FL_OK;
  }
  for (int it = 1; it <= l->opts.max_iter; it++) {
    // update from the current residual, then the residual of the new iterate
    for (fl_int i = 0; i < n; i++) x[i] += omega * dinv[i] * r[i];
    res = fl__lin_residual(K, b, x, r);
    if (fl__lin_step(l, it, res, NAN)) return FL_OK;
  }
  l->stat.reason = FL_LIN_MAX_ITER;
  return FL_OK;
}


const fl_lin_ops fl_lin_jacobi_ops = {"jacobi", jacobi_setup, jacobi_solve, NULL};

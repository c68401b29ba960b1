// SPDX-License-Identifier: Apache-2.0
/* lin_kit.c: what the inner linear solvers (lin_*.c) share: the residual history, the stopping
 * step, dot products, K x and residuals, the inverse diagonal.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fl_lin.h"
#include "fl_solver_impl.h"

int fl__lin_record(fl_lin *l, double res, double res_nat) {
  if (l->hist_len < l->hist_cap) {
    l->hist[l->hist_len] = res;
    l->hist_nat[l->hist_len] = res_nat;
    l->hist_len++;
  }
  double tol = l->opts.rel_tol * l->stat.res0;
  if (l->opts.abs_tol > tol) tol = l->opts.abs_tol;
  return res <= tol;
}


int fl__lin_step(fl_lin *l, int it, double res, double res_nat) {
  l->stat.iters = it;
  if (!isfinite(res)) {
    l->stat.reason = FL_LIN_NAN;
    fl__lin_record(l, res, NAN);
    return 1;
  }
  if (fl__lin_record(l, res, res_nat)) {
    l->stat.reason = FL_LIN_CONVERGED;
    return 1;
  }
  return 0;
}


double fl__lin_dot(fl_int n, const double *a, const double *b) {
  double s = 0;
  for (fl_int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}


/* t -/+ sum_k val[k] x[col[k]] over k in [k0, k1), terms taken one after another in k order
 * (the plain loop's rounding, four terms per loop trip) */
static inline double row_acc(double t, int sub, const fl_int *restrict col,
                             const double *restrict val, const double *restrict x, fl_int k0,
                             fl_int k1) {
  fl_int k = k0;
  if (sub) {
    for (; k + 4 <= k1; k += 4) {
      t -= val[k] * x[col[k]];
      t -= val[k + 1] * x[col[k + 1]];
      t -= val[k + 2] * x[col[k + 2]];
      t -= val[k + 3] * x[col[k + 3]];
    }
    for (; k < k1; k++) t -= val[k] * x[col[k]];
  } else {
    for (; k + 4 <= k1; k += 4) {
      t += val[k] * x[col[k]];
      t += val[k + 1] * x[col[k + 1]];
      t += val[k + 2] * x[col[k + 2]];
      t += val[k + 3] * x[col[k + 3]];
    }
    for (; k < k1; k++) t += val[k] * x[col[k]];
  }
  return t;
}


void fl__lin_gemv(const fl_csr *K, const double *x, double *y) {
  const fl_int *rp = K->rowptr;
  for (fl_int i = 0; i < K->nrow; i++) y[i] = row_acc(0.0, 0, K->col, K->val, x, rp[i], rp[i + 1]);
}


double fl__lin_residual(const fl_csr *K, const double *b, const double *x, double *r) {
  double s = 0;
  const fl_int *rp = K->rowptr;
  for (fl_int i = 0; i < K->nrow; i++) {
    double t = row_acc(b[i], 1, K->col, K->val, x, rp[i], rp[i + 1]);
    r[i] = t;
    s += t * t;
  }
  return sqrt(s);
}


void fl__lin_inv_diag(const fl_csr *K, double *dinv) {
  for (fl_int i = 0; i < K->nrow; i++) {
    double d = 0;
    for (fl_int k = K->rowptr[i]; k < K->rowptr[i + 1]; k++)
      if (K->col[k] == i) d = K->val[k];
    dinv[i] = d > 0 ? 1.0 / d : 1.0;
  }
}

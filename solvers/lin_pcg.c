// SPDX-License-Identifier: Apache-2.0
/* lin_pcg.c: preconditioned conjugate gradients, the inner solver "pcg" of NSN: M = diag(K)
 * (Jacobi, the default) or the diagonal blocks of K (lin.pc=block, lin_pc.c).
 *
 *   r = b, z = M^-1 r, p = z
 *   repeat: q = K p; a = (r.z)/(p.q); x += a p; r -= a q; z = M^-1 r;
 *           beta = (r.z)_new/(r.z); p = z + beta p
 *
 * CG minimizes the K-norm of the error, not the residual: ||r|| may rise between iterations,
 * which is what thesis Fig. 15 shows. Records ||r||_2 and the natural norm sqrt(r.z).
 * Stops with FL_LIN_BREAKDOWN when p.q <= 0 (K singular or indefinite along p).
 */
#include <math.h>

#include "fl_lin.h"


static int pcg_setup(fl_lin *l, const fl_csr *K) { return FL_OK; }


static int pcg_solve(fl_lin *l, const fl_csr *K, const double *b, double *x) {
  fl_int n = l->n;
  double *r = l->w, *z = l->w + n, *p = l->w + 2 * n, *q = l->w + 3 * n;
  fl__lin_pc_factor(l, K);

  // start from x = 0
  for (fl_int i = 0; i < n; i++) {
    x[i] = 0;
    r[i] = b[i];
  }
  fl__lin_pc_apply(l, r, z);
  for (fl_int i = 0; i < n; i++) p[i] = z[i];
  double rz = fl__lin_dot(n, r, z);
  if (fl__lin_record(l, sqrt(fl__lin_dot(n, r, r)), sqrt(fabs(rz)))) {
    l->stat.reason = FL_LIN_CONVERGED;
    return FL_OK;
  }
  for (int it = 1; it <= l->opts.max_iter; it++) {
    fl__lin_gemv(K, p, q);
    double pq = fl__lin_dot(n, p, q);
    if (!(pq > 0)) {
      l->stat.reason = isfinite(pq) ? FL_LIN_BREAKDOWN : FL_LIN_NAN;
      return FL_OK;
    }
    double a = rz / pq;
    for (fl_int i = 0; i < n; i++) {
      x[i] += a * p[i];
      r[i] -= a * q[i];
    }
    fl__lin_pc_apply(l, r, z);
    double rz_new = fl__lin_dot(n, r, z);
    double res = sqrt(fl__lin_dot(n, r, r));
    if (fl__lin_step(l, it, res, sqrt(fabs(rz_new)))) return FL_OK;
    if (rz == 0) break;
    double beta = rz_new / rz;
    rz = rz_new;
    for (fl_int i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
  }
  l->stat.reason = FL_LIN_MAX_ITER;
  return FL_OK;
}


const fl_lin_ops fl_lin_pcg_ops = {"pcg", pcg_setup, pcg_solve, NULL};

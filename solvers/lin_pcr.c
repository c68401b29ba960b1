// SPDX-License-Identifier: Apache-2.0
/* lin_pcr.c: preconditioned conjugate residuals, the inner solver "pcr" of NSN (thesis section
 * 4.7.2; with the diagonal preconditioner M = diag(K), the default, the same recurrence as
 * PETSc's KSPCR with PCJACOBI; lin.pc=block uses the diagonal blocks of K, lin_pc.c).
 *
 * It is CR applied to M^-1/2 K M^-1/2, so each iterate minimizes the natural residual norm
 * sqrt(r^T M^-1 r) = sqrt(r.z) over the Krylov space: that norm never increases, which is
 * what makes early termination safe. The plain 2-norm ||r|| is recorded too (it is what
 * the figures plot) but is monotone only without preconditioning.
 *
 *   r = b, z = M^-1 r, p = z, Kz = K z, Kp = Kz
 *   repeat: q = M^-1 Kp; a = (z.Kz)/(Kp.q); x += a p; r -= a Kp; z -= a q;
 *           Kz = K z; beta = (z.Kz)_new/(z.Kz); p = z + beta p; Kp = Kz + beta Kp
 *
 * One matrix-vector product per iteration. Stops with FL_LIN_BREAKDOWN when Kp.q <= 0 or
 * z.Kz <= 0 (a singular direction: the iterate so far is kept, as the thesis relies on).
 */
#include <math.h>

#include "fl_lin.h"


static int pcr_setup(fl_lin *l, const fl_csr *K) { return FL_OK; }


static int pcr_solve(fl_lin *l, const fl_csr *K, const double *b, double *x) {
  fl_int n = l->n;
  double *r = l->w, *z = l->w + n, *p = l->w + 2 * n, *q = l->w + 3 * n, *kz = l->w + 4 * n;
  double *kp = l->w + 5 * n;
  fl__lin_pc_factor(l, K);

  // start from x = 0
  for (fl_int i = 0; i < n; i++) {
    x[i] = 0;
    r[i] = b[i];
  }
  fl__lin_pc_apply(l, r, z);
  for (fl_int i = 0; i < n; i++) p[i] = z[i];
  fl__lin_gemv(K, z, kz);
  for (fl_int i = 0; i < n; i++) kp[i] = kz[i];
  double zkz = fl__lin_dot(n, z, kz);
  if (fl__lin_record(l, sqrt(fl__lin_dot(n, r, r)), sqrt(fabs(fl__lin_dot(n, r, z))))) {
    l->stat.reason = FL_LIN_CONVERGED;
    return FL_OK;
  }
  for (int it = 1; it <= l->opts.max_iter; it++) {
    fl__lin_pc_apply(l, kp, q);
    double kpq = fl__lin_dot(n, kp, q);
    if (!(kpq > 0) || !(zkz > 0)) {
      l->stat.reason = (isfinite(kpq) && isfinite(zkz)) ? FL_LIN_BREAKDOWN : FL_LIN_NAN;
      return FL_OK;
    }
    double a = zkz / kpq;
    for (fl_int i = 0; i < n; i++) {
      x[i] += a * p[i];
      r[i] -= a * kp[i];
      z[i] -= a * q[i];
    }
    fl__lin_gemv(K, z, kz);
    double zkz_new = fl__lin_dot(n, z, kz);
    double res = sqrt(fl__lin_dot(n, r, r));
    if (fl__lin_step(l, it, res, sqrt(fabs(fl__lin_dot(n, r, z))))) return FL_OK;
    double beta = zkz_new / zkz;
    zkz = zkz_new;
    for (fl_int i = 0; i < n; i++) {
      p[i] = z[i] + beta * p[i];
      kp[i] = kz[i] + beta * kp[i];
    }
  }
  l->stat.reason = FL_LIN_MAX_ITER;
  return FL_OK;
}


const fl_lin_ops fl_lin_pcr_ops = {"pcr", pcr_setup, pcr_solve, NULL};

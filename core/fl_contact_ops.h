// SPDX-License-Identifier: Apache-2.0
/* fl_contact_ops.h: the per-contact arithmetic of the relaxation solvers, written once for the
 * host and the device (GPU.md section 3).
 *
 * Every function here is `static inline` C that nvcc also compiles as __host__ __device__, so
 * the CPU solvers (solvers/pgs.c, jacobi.c, problems/problem.c's fl_cone_project) and the CUDA
 * kernels (gpu/) run the same statements, and the CPU tests exercise the arithmetic the kernels
 * run. No allocation, no globals, no library calls but sqrt and hypot.
 *
 * Conventions (SOLVERS.md sections 0 and 2): a contact's velocity u = (u_n, u_t1, u_t2) in m/s,
 * impulse g = (g_n, g_t1, g_t2) in N s, friction coefficient mu >= 0; its normal law adds R_n
 * (s/kg) times g_n and subtracts vhat_n (m/s) from u_n. W is the contact's 3x3 Delassus block
 * with R_n already added to W[0] (row-major, 1/kg). Arrays are caller-owned; `out` may not alias
 * the inputs unless said.
 */
#ifndef FL_CONTACT_OPS_H
#define FL_CONTACT_OPS_H

#include <math.h>

#ifdef __CUDACC__
#define FL_HD static inline __host__ __device__
#else
#define FL_HD static inline
#endif

/* Projection of x (3) onto the friction cone K_mu = {g : |g_t| <= mu g_n}: out (3). out may
 * alias x. */
FL_HD void fl_hd_cone_project(double mu, const double *x, double *out) {
  double xn = x[0], xt = hypot(x[1], x[2]);
  // inside K: keep; inside the polar cone (mu xt <= -xn): origin; else onto the boundary ray
  if (xt <= mu * xn) {
    out[0] = x[0];
    out[1] = x[1];
    out[2] = x[2];
  } else if (mu * xt <= -xn) {
    out[0] = out[1] = out[2] = 0.0;
  } else {
    double gn = (xn + mu * xt) / (1.0 + mu * mu);
    double s = xt > 0.0 ? mu * gn / xt : 0.0;
    out[0] = gn;
    out[1] = s * x[1];
    out[2] = s * x[2];
  }
}

/* Largest eigenvalue of the symmetric 2x2 [a b; b d]. */
FL_HD double fl_hd_eig2max(double a, double b, double d) {
  double h = 0.5 * (a - d);
  return 0.5 * (a + d) + sqrt(h * h + b * b);
}

/* Projects the tangential impulse (t1, t2) onto the disk of radius rad >= 0, in place. */
FL_HD void fl_hd_disk_clamp(double rad, double *t1, double *t2) {
  // well inside the disk: the rounded squares (a few eps each) with a margin of 1e-14 show
  // hypot (1 or 2 ulp) <= rad, so nothing changes; rad's range keeps rad^2 clear of underflow
  // and overflow. Saves the hypot of a sticking contact.
  if (rad > 1e-140 && rad < 1e140 && *t1 * *t1 + *t2 * *t2 <= rad * rad * (1.0 - 1e-14)) return;
  double nt = hypot(*t1, *t2);
  if (nt > rad) {
    double sc = nt > 0 ? rad / nt : 0.0;
    *t1 *= sc;
    *t2 *= sc;
  }
}

/* "nf" local update: one exact normal step on 0 <= g_n perp u_n - vhat_n + R_n g_n >= 0 with
 * W[0], then a scalar tangential step lt = 1/lambda_max(W_tt) on the tangential velocity after
 * the normal change, projected on the disk of radius mu g_n. out (3) is the new impulse. */
FL_HD void fl_hd_relax_nf(const double *W, double mu, double Rn, double vh, double lt,
                          const double *u, const double *g, double *out) {
  double gn = g[0];
  if (W[0] > 0) {
    gn = g[0] - (u[0] - vh + Rn * g[0]) / W[0];
    if (gn < 0) gn = 0;
  } else if (gn < 0) {
    gn = 0;
  }
  double dn = gn - g[0];
  double ut1 = u[1] + W[3] * dn, ut2 = u[2] + W[6] * dn;
  double t1 = g[1] - lt * ut1, t2 = g[2] - lt * ut2;
  fl_hd_disk_clamp(mu * gn, &t1, &t2);
  out[0] = gn;
  out[1] = t1;
  out[2] = t2;
}

/* "block" local update: out = P_K(g - rho uhat), uhat = (u_n - vhat_n + R_n g_n + mu |u_t|,
 * u_t) (De Saxce's correction), rho = 3 / trace(W). */
FL_HD void fl_hd_relax_block(double mu, double Rn, double vh, double rho, const double *u,
                             const double *g, double *out) {
  double uh0 = u[0] - vh + Rn * g[0] + mu * hypot(u[1], u[2]);
  double x[3] = {g[0] - rho * uh0, g[1] - rho * u[1], g[2] - rho * u[2]};
  fl_hd_cone_project(mu, x, out);
}

/* Relaxation: nw <- g + omega (nw - g), projected back onto K_mu when omega > 1; omega == 1
 * leaves nw as it is. */
FL_HD void fl_hd_apply_omega(double mu, double omega, const double *g, double *nw) {
  if (omega == 1.0) return;
  double x[3] = {g[0] + omega * (nw[0] - g[0]), g[1] + omega * (nw[1] - g[1]),
                 g[2] + omega * (nw[2] - g[2])};
  if (omega > 1.0) {
    fl_hd_cone_project(mu, x, nw);
  } else {
    nw[0] = x[0];
    nw[1] = x[1];
    nw[2] = x[2];
  }
}

/* One contact's part of the natural-map residual with De Saxce's correction (rho = 1):
 * returns |g - P_K(g - uhat)|^2; *wn = u_n - vhat_n + R_n g_n (for the Siconos norm); *mode =
 * 0 open (g_n <= 0), 1 stick (strictly inside the cone), 2 slip. */
FL_HD double fl_hd_natmap2(double mu, double Rn, double vh, const double *u, const double *g,
                           double *wn, int *mode) {
  double ut = hypot(u[1], u[2]);
  double w = u[0] - vh + Rn * g[0];
  double x[3] = {g[0] - (w + mu * ut), g[1] - u[1], g[2] - u[2]}, px[3];
  fl_hd_cone_project(mu, x, px);
  double s = 0;
  for (int c = 0; c < 3; c++) s += (g[c] - px[c]) * (g[c] - px[c]);
  *wn = w;
  int m = 0;
  if (g[0] > 0) m = hypot(g[1], g[2]) < mu * g[0] * (1.0 - 1e-9) ? 1 : 2;
  *mode = m;
  return s;
}

/* Box clamp of a bilateral row's impulse to [lo, hi]. */
FL_HD double fl_hd_clamp(double x, double lo, double hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

/* Bilateral row: new impulse clamp(g - res / Wh) with res = u_h + g0/dt + c g (u_h = J_h v +
 * b_h); Wh = W_hh + c; Wh <= 0 only clamps g. */
FL_HD double fl_hd_relax_row(double Wh, double g0_dt, double c, double lo, double hi, double u_h,
                             double g) {
  if (!(Wh > 0)) return fl_hd_clamp(g, lo, hi);
  return fl_hd_clamp(g - (u_h + g0_dt + c * g) / Wh, lo, hi);
}

#endif /* FL_CONTACT_OPS_H */

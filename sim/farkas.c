// SPDX-License-Identifier: Apache-2.0
/* farkas.c: the exact reference of the sliding and spinning disk (Farkas, Bartels, Unger, Wolf,
 * PRL 2003), closed forms of shared/reference/README.md:
 *
 *   eps <= 1: f = 4/(3 pi eps) [(1+eps^2) E(eps) - (1-eps^2) K(eps)]
 *             t = 4/(9 pi) [(4-2 eps^2) E(eps) - (1-eps^2) K(eps)]
 *   eps >= 1: f = 4/(3 pi) [(1+eps^2) E(1/eps) - (eps^2-1) K(1/eps)]
 *             t = 4/(9 pi eps) [2 eps^2 (2-eps^2) E(1/eps) + (eps^2-1)(2 eps^2-3) K(1/eps)]
 *
 * with K, E the complete elliptic integrals (computed here by the arithmetic-geometric mean),
 * and the motion dv/dt = -mu g f, domega/dt = -(2 mu g/R) t (I = m R^2/2).
 */
#include <math.h>

#include "fl_hydro.h"

/* AGM of 1 and k' = sqrt(1 - k^2): K = pi/(2 M) and S = sum 2^(n-1) c_n^2 (c_0 = k), so that
 * E = K (1 - S) and K - E = K S without cancellation; c_(n+1) = c_n^2/(4 a_(n+1)) keeps c
 * positive and quadratically shrinking */
static void agm(double k, double *K, double *S) {
  double a = 1, b = sqrt((1 - k) * (1 + k)), c = k, pw = 0.5, sum = 0.5 * k * k;
  for (int it = 0; it < 64; it++) {
    double an = 0.5 * (a + b);
    c = c * c / (4 * an);
    b = sqrt(a * b);
    a = an;
    pw *= 2;
    double term = pw * c * c;
    sum += term;
    if (term <= 1e-20 * sum) break;
  }
  *K = M_PI / (2 * a);
  *S = sum;
}


int fl_elliptic_ke(double k, double *K, double *E) {
  if (!(k >= 0 && k <= 1)) return fl_seterr(FL_ERR_INVAL, "elliptic: modulus %g outside [0, 1]", k);
  if (k == 1) {
    *K = INFINITY;
    *E = 1;
    return FL_OK;
  }
  double S;
  agm(k, K, &S);
  *E = *K * (1 - S);
  return FL_OK;
}


void fl_farkas_ft(double eps, double *f, double *t) {
  // with E = K (1 - S) the brackets of the closed forms become (no cancellation of K and E):
  //   eps < 1: (1+e^2) E - (1-e^2) K = K (2 e^2 - (1+e^2) S),
  //            (4-2e^2) E - (1-e^2) K = K (3 - e^2 - (4-2e^2) S)
  //   eps > 1 (modulus 1/e): (1+e^2) E - (e^2-1) K = K (2 - (1+e^2) S),
  //            2e^2 (2-e^2) E + (e^2-1)(2e^2-3) K = K (3 - e^2 - 2e^2 (2-e^2) S)
  double K, S, e2 = eps * eps;
  if (!(eps >= 0)) {
    *f = *t = NAN;
  } else if (isinf(eps)) {
    *f = 1;
    *t = 0;
  } else if (eps == 0) {
    *f = 0;
    *t = 2.0 / 3.0;
  } else if (eps == 1) {
    *f = 8 / (3 * M_PI); // E(1) = 1, (1-e^2) K -> 0
    *t = 8 / (9 * M_PI);
  } else if (eps < 1) {
    agm(eps, &K, &S);
    *f = 4 / (3 * M_PI * eps) * K * (2 * e2 - (1 + e2) * S);
    *t = 4 / (9 * M_PI) * K * (3 - e2 - (4 - 2 * e2) * S);
  } else {
    agm(1 / eps, &K, &S);
    *f = 4 / (3 * M_PI) * K * (2 - (1 + e2) * S);
    *t = 4 / (9 * M_PI * eps) * K * (3 - e2 - 2 * e2 * (2 - e2) * S);
  }
}


double fl_farkas_eps_star(void) {
  // bisection on h(eps) = f(eps) - 2 eps t(eps): negative near 0 (f ~ eps, 2 eps t ~ 4/3 eps),
  // positive at eps = 2
  double lo = 0.1, hi = 2;
  for (int it = 0; it < 200 && hi - lo > 1e-15; it++) {
    double mid = 0.5 * (lo + hi), f, t;
    fl_farkas_ft(mid, &f, &t);
    if (f - 2 * mid * t < 0) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}


/* time derivatives of (v, omega) */
static void rhs(const double y[2], double R, double mug, double dy[2]) {
  double v = y[0] > 0 ? y[0] : 0, w = y[1] > 0 ? y[1] : 0, f, t;
  if (v == 0 && w == 0) {
    dy[0] = dy[1] = 0;
    return;
  }
  fl_farkas_ft(w > 0 ? v / (w * R) : INFINITY, &f, &t);
  dy[0] = -mug * f;
  dy[1] = -2 * mug / R * t;
}


int fl_farkas_integrate(double v0, double omega0, double R, double mu, double g, double dt_out,
                        int nout, double *v, double *omega, double *t_stop, double *eps_end) {
  if (!(v0 >= 0) || !(omega0 >= 0) || !(v0 + omega0 > 0) || !(R > 0) || !(mu > 0) || !(g > 0) ||
      !(dt_out > 0) || nout < 0 || (nout > 0 && (!v || !omega)))
    return fl_seterr(FL_ERR_INVAL, "farkas: bad arguments (v0 %g, omega0 %g, R %g, mu %g, g %g, "
                     "dt_out %g, nout %d)", v0, omega0, R, mu, g, dt_out, nout);
  double mug = mu * g, y[2] = {v0, omega0}, s0 = v0 + omega0 * R, t = 0;
  int stopped = 0;
  double ts = NAN, ee = NAN;
  // march to the sample times; substeps of 1e-3 of the remaining time scale (v + omega R)/(mu g)
  int k = 0;
  double tnext = 0;
  for (;;) {
    while (k < nout && (stopped || t >= tnext - 1e-15 * (1 + tnext))) {
      v[k] = stopped ? 0 : y[0];
      omega[k] = stopped ? 0 : y[1];
      k++;
      tnext = k * dt_out;
    }
    if (stopped && k >= nout) break;
    double s = y[0] + y[1] * R;
    if (s <= 1e-15 * s0) {
      if (!stopped) {
        stopped = 1;
        ts = t;
        ee = y[1] > 0 ? y[0] / (y[1] * R) : INFINITY;
      }
      continue;
    }
    double h = 1e-3 * s / mug;
    if (k < nout && t + h > tnext) h = tnext - t;
    if (h <= 0) h = 1e-15;
    double k1[2], k2[2], k3[2], k4[2], z[2];
    rhs(y, R, mug, k1);
    for (int i = 0; i < 2; i++) z[i] = y[i] + 0.5 * h * k1[i];
    rhs(z, R, mug, k2);
    for (int i = 0; i < 2; i++) z[i] = y[i] + 0.5 * h * k2[i];
    rhs(z, R, mug, k3);
    for (int i = 0; i < 2; i++) z[i] = y[i] + h * k3[i];
    rhs(z, R, mug, k4);
    for (int i = 0; i < 2; i++) {
      y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
      if (y[i] < 0) y[i] = 0;
    }
    t += h;
  }
  if (t_stop) *t_stop = ts;
  if (eps_end) *eps_end = ee;
  return FL_OK;
}


/* f and t of point loads wgt (n) at xy (n x 2, m) of a disk of radius R moving along +x at
 * eps omega R and spinning at omega about +z (normalized by the total load) */
static void point_ft(const double *xy, const double *wgt, int n, double R, double eps, double *f,
                     double *t) {
  double F = 0, T = 0, W = 0;
  for (int i = 0; i < n; i++) {
    double x = xy[2 * i] / R, y = xy[2 * i + 1] / R;
    double sx = eps - y, sy = x, s = hypot(sx, sy);
    W += wgt[i];
    if (s == 0) continue;
    F += wgt[i] * sx / s;
    T += wgt[i] * (x * sy - y * sx) / s;
  }
  *f = F / W;
  *t = T / W;
}


double fl_patch_eps_star(const double *xy, const double *wgt, int n, double R) {
  if (!xy || !wgt || n < 1 || !(R > 0)) return NAN;
  double lo = 0.02, hi = 5, f, t;
  point_ft(xy, wgt, n, R, lo, &f, &t);
  if (!(f - 2 * lo * t < 0)) return NAN;
  point_ft(xy, wgt, n, R, hi, &f, &t);
  if (!(f - 2 * hi * t > 0)) return NAN;
  for (int it = 0; it < 200 && hi - lo > 1e-14; it++) {
    double mid = 0.5 * (lo + hi);
    point_ft(xy, wgt, n, R, mid, &f, &t);
    if (f - 2 * mid * t < 0) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

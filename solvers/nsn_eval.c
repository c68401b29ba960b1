// SPDX-License-Identifier: Apache-2.0
/* nsn_eval.c: the non-smooth Newton's evaluation of an iterate, which the Fischer-Burmeister
 * and min Newton (nsn.c) and the Alart-Curnier Newton (nsn_ac.c) share: the NCP functions, the
 * residuals and errors at (v, gamma), the iteration record. nsn.c describes the method.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "nsn_impl.h"

//---- NCP functions (appendix A) ----

double fl__nsn_ncp(int kind, double a, double b, double *da, double *db) {
  if (kind == 1) {
    // min-map: active (a) branch when a <= b
    if (a <= b) {
      *da = 1;
      *db = 0;
      return a;
    }
    *da = 0;
    *db = 1;
    return b;
  }
  // Fischer-Burmeister a + b - sqrt(a^2 + b^2); at (0, 0) the convention da = 0, db = 1
  double n = hypot(a, b);
  if (n == 0) {
    *da = 0;
    *db = 1;
    return 0;
  }
  *da = 1 - a / n;
  *db = 1 - b / n;
  // both positive: a + b - n cancels, use 2ab / (a + b + n)
  if (a > 0 && b > 0) return 2 * a * b / (a + b + n);
  return a + b - n;
}


double fl__nsn_friction_compliance(int kind, double ut, double gt, double gn, double mu,
                                   double rho) {
  double cap = mu * gn; /* cone radius (N s) */
  double m = cap - gt;  /* margin to the cone */
  if (kind == 1) {
    // min-map: stick when |u_t| <= rho m, else W = (|u_t| - rho m) / (mu gamma_n)
    if (ut <= rho * m) return 0;
    return (ut - rho * m) / cap;
  }
  // FB: |u_t|^{n+1} = |u_t| - psi = sqrt(ut^2 + rho^2 m^2) - rho m and
  //     |gamma_t|^{n+1} = |gamma_t| + psi/rho = mu gn - rho m^2 / (ut + n), W = ratio
  double rm = rho * m, n = hypot(ut, rm);
  double num = rm > 0 ? (n + rm > 0 ? ut * ut / (n + rm) : 0) : n - rm;
  double den = (ut + n > 0) ? cap - rho * m * m / (ut + n) : cap;
  if (num <= 0) return 0;
  // far outside the cone the FB target |gamma_t| may be <= 0: floor it (our safeguard)
  if (den < NSN_FB_DEN_FLOOR * cap) den = NSN_FB_DEN_FLOOR * cap;
  return num / den;
}


//---- evaluation of an iterate ----

/* u at (v, gamma); then every row's NCP value, derivative data for the Newton matrix (Cd,
 * phis, fixed, z), the friction fixed point W_f, and the recorded errors */
void fl__nsn_eval(nsn_data *d, const fl_problem *p, int ncp, const double *v,
                  const double *gamma, const double *bg) {
  if (d->global) {
    fl_csr_gemv(p->J, 1.0, v, 0.0, d->u);
    if (p->b)
      for (fl_int r = 0; r < d->n; r++) d->u[r] += p->b[r];
  } else {
    fl_csr_gemv(d->W, 1.0, gamma, 0.0, d->u);
    for (fl_int r = 0; r < d->n; r++) d->u[r] += p->q[r];
  }
  fl__nsn_eval_rows(d, p, ncp, v, gamma, bg);
}

/* fl__nsn_eval with u already in d->u */
void fl__nsn_eval_rows(nsn_data *d, const fl_problem *p, int ncp, const double *v,
                       const double *gamma, const double *bg) {
  fl_int nc = d->nc;

  double err_n = 0, err_f = 0, err_b = 0, err = 0, m2 = 0;
  int nact = 0, nstick = 0, nslip = 0;
  for (fl_int i = 0; i < nc; i++) {
    fl_int r = 3 * i;
    double gn = gamma[r], si = d->s[i];

    // normal row: phi_n = NCP(C_n, rho_n gamma_n)
    double C = si * (d->u[r] - d->vhat[i] + d->R[i] * gn);
    double a, b;
    double phi = fl__nsn_ncp(ncp, C, d->rho_n[i] * gn, &a, &b);
    if (a <= NSN_ALPHA_MIN) {
      double den = b * d->rho_n[i] + a * si * d->R[i];
      d->fixed[r] = 1;
      d->z[r] = den > 0 ? -phi / den : -gn;
      d->Cd[r] = 0;
      d->phis[r] = 0;
    } else {
      d->fixed[r] = 0;
      d->z[r] = 0;
      d->Cd[r] = d->R[i] + b * d->rho_n[i] / (a * si);
      d->phis[r] = phi / (a * si);
    }
    m2 += (phi / si) * (phi / si);
    double en = fabs(fmin(C, d->rho_em[i] * gn));
    if (en > err_n) err_n = en;
    if (en / si > err) err = en / si;

    // friction rows: active when mu gamma_n > 0
    double ut1 = d->u[r + 1], ut2 = d->u[r + 2], gt1 = gamma[r + 1], gt2 = gamma[r + 2];
    double ut = hypot(ut1, ut2), gt = hypot(gt1, gt2), mu = p->mu[i];
    if (mu * gn > 0) {
      double Wf = fl__nsn_friction_compliance(ncp, ut, gt, gn, mu, d->rho_f[i]);
      d->Wf[i] = Wf;
      for (int k = 1; k <= 2; k++) {
        d->fixed[r + k] = 0;
        d->z[r + k] = 0;
        d->Cd[r + k] = Wf;
        d->phis[r + k] = d->u[r + k] + Wf * gamma[r + k];
        m2 += d->phis[r + k] * d->phis[r + k];
      }
      if (Wf > 0 && gt >= (1 - 1e-3) * mu * gn)
        nslip++;
      else
        nstick++;
    } else {
      d->Wf[i] = 0;
      for (int k = 1; k <= 2; k++) {
        d->fixed[r + k] = 1;
        d->z[r + k] = -gamma[r + k];
        d->Cd[r + k] = 0;
        d->phis[r + k] = 0;
        double e = d->wtt[i] * gamma[r + k];
        m2 += e * e;
      }
    }
    if (gn > 0) nact++;

    // r-independent friction error: natural map of the disk given gamma_n, scaled by W_tt
    double rf = d->wtt[i], cap = mu * (gn > 0 ? gn : 0) * rf;
    double x1 = rf * gt1 - ut1, x2 = rf * gt2 - ut2, xn = hypot(x1, x2);
    if (xn > cap) {
      double sc = xn > 0 ? cap / xn : 0;
      x1 *= sc;
      x2 *= sc;
    }
    double ef = hypot(rf * gt1 - x1, rf * gt2 - x2);
    if (ef > err_f) err_f = ef;
    if (ef > err) err = ef;
  }

  // bilateral rows: equality, or held at a bound (min-map on the box)
  for (fl_int h = 0; h < d->nh; h++) {
    fl_int r = 3 * nc + h;
    double c = p->compliance ? p->compliance[h] : 0;
    double res = d->u[r] + (p->g0 ? p->g0[h] : 0) / p->dt + c * gamma[r];
    double lo = p->lo ? p->lo[h] : -INFINITY, hi = p->hi ? p->hi[h] : INFINITY;
    double t = gamma[r] - res / d->rho_b[h], eff;
    if (t < lo) {
      d->fixed[r] = 1;
      d->z[r] = lo - gamma[r];
      eff = (gamma[r] - lo) * d->rho_b[h];
    } else if (t > hi) {
      d->fixed[r] = 1;
      d->z[r] = hi - gamma[r];
      eff = (gamma[r] - hi) * d->rho_b[h];
    } else {
      d->fixed[r] = 0;
      d->z[r] = 0;
      d->Cd[r] = c;
      d->phis[r] = res;
      eff = res;
    }
    m2 += eff * eff;
    if (fabs(eff) > err_b) err_b = fabs(eff);
    if (fabs(eff) > err) err = fabs(eff);
  }

  // momentum: the Newton iterate v against v* + A^-1 J^T gamma (= A^-1 g, m/s)
  if (d->global) {
    double em = 0;
    for (fl_int j = 0; j < d->nv; j++) {
      double e = v[j] - p->vstar[j] - bg[j];
      m2 += e * e;
      if (fabs(e) > em) em = fabs(e);
    }
    d->err_m = em;
    if (em > err) err = em;
  }

  d->err_n = err_n;
  d->err_f = err_f;
  d->err_b = err_b;
  d->error = err;
  d->merit = sqrt(m2);
  d->nactive = nact;
  d->nstick = nstick;
  d->nslip = nslip;
}


void fl__nsn_fill_stat(const nsn_data *d, fl_iter_stat *st) {
  st->error = d->error;
  st->objective = d->merit;
  st->err_normal = d->err_n;
  st->err_friction = d->err_f;
  st->nactive = d->nactive;
  st->nstick = d->nstick;
  st->nslip = d->nslip;
}

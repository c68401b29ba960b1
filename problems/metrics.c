// SPDX-License-Identifier: Apache-2.0
/* metrics.c: solver-independent measures of a returned pair (v, gamma).
 *
 * Every solver's answer is judged by the same numbers (ARCHITECTURE.md section 5), whatever
 * model the solver itself iterates on. With u = J v + b (global) or W gamma + q (local) and the
 * problem's normal law (R_n, vhat_n) per contact:
 *
 *   ut     = (u_n - vhat_n + R_n gamma_n, u_t)     the local-form velocity, W gamma + q
 *   uhat   = (ut_n + mu ||u_t||, u_t)              De Saxce's modified velocity
 *   natmap = || gamma - P_K(gamma - uhat) ||_2     over all contacts (rho = 1)
 *
 * which vanishes exactly at solutions of  K_mu contains gamma perp uhat in K*_mu.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "fl_problem.h"

static double dmax(double a, double b) { return a > b ? a : b; }


/* momentum residual ||D (A (v - v*) - J^T gamma)|| / max(||D A v||, ||D A v*||, ||D J^T gamma||)
 * with D = diag(A)^-1/2: relative to the largest term of the balance, so that the guess
 * v = 0, gamma = 0 scores 1, not the raw ||D A v*||; w is scratch of 3 nv doubles. A zero
 * denominator (nothing moves, nothing pushes) leaves the raw norm. */
static double momentum(const fl_problem *p, const double *v, const double *gamma, double *w) {
  fl_int nv = p->nv;
  double *av = w, *avs = w + nv, *jtg = w + 2 * nv;
  fl_csr_gemv(p->A, 1.0, v, 0.0, av);
  fl_csr_gemv(p->A, 1.0, p->vstar, 0.0, avs);
  for (fl_int k = 0; k < nv; k++) jtg[k] = 0.0;
  if (p->J) fl_csr_gemtv(p->J, 1.0, gamma, 0.0, jtg);
  double num = 0.0, nav = 0.0, navs = 0.0, njg = 0.0;
  for (fl_int k = 0; k < nv; k++) {
    double diag = fl_csr_get(p->A, k, k);
    double d2 = diag > 0.0 ? 1.0 / diag : 1.0; /* D_kk^2 */
    double res = av[k] - avs[k] - jtg[k];
    num += d2 * res * res;
    nav += d2 * av[k] * av[k];
    navs += d2 * avs[k] * avs[k];
    njg += d2 * jtg[k] * jtg[k];
  }
  num = sqrt(num);
  double den = dmax(dmax(sqrt(nav), sqrt(navs)), sqrt(njg));
  return den > 0.0 ? num / den : num;
}


int fl_problem_metrics(const fl_problem *p, const double *v, const double *gamma,
                       fl_norm_kind norm, fl_metrics *out) {
  if (!p || !gamma || !out) return fl_seterr(FL_ERR_INVAL, "fl_problem_metrics: NULL argument");
  int global = p->kind == FL_PROBLEM_GLOBAL;
  if (global && !v) return fl_seterr(FL_ERR_INVAL, "%s: metrics of a global problem need v", p->name);
  fl_int nc = p->nc, nh = p->nh, nrow = fl_problem_nrows(p), nv = global ? p->nv : 0;

  // scratch: u (nrow), q (nrow), momentum work (3 nv)
  size_t nscr = (size_t)(2 * nrow + 3 * nv);
  double *scr = fl_malloc((nscr > 0 ? nscr : 1) * sizeof(double));
  if (!scr) return fl_seterr(FL_ERR_NOMEM, "%s: no memory for metrics", p->name);
  double *u = scr, *q = scr + nrow, *work = scr + 2 * nrow;

  // u = J v + b or W gamma + q; q of the local form = J v* + b - (vhat_n, 0, 0)
  fl_problem_velocity(p, v, gamma, u);
  if (global) {
    for (fl_int r = 0; r < nrow; r++) q[r] = p->b ? p->b[r] : 0.0;
    if (p->J) fl_csr_gemv(p->J, 1.0, p->vstar, 1.0, q);
  } else {
    memcpy(q, p->q, (size_t)(3 * nc) * sizeof(double));
  }

  fl_metrics m;
  memset(&m, 0, sizeof(m));
  double nat2 = 0.0, nq2 = 0.0, nu2 = 0.0, ng2 = 0.0;
  for (fl_int i = 0; i < nc; i++) {
    const double *g = gamma + 3 * i, *ui = u + 3 * i;
    double R, vhat, mu = p->mu[i];
    fl_problem_normal_law(p, i, &R, &vhat);
    q[3 * i] -= vhat;

    // local-form velocity ut and De Saxce's uhat
    double utn = ui[0] - vhat + R * g[0];
    double ntu = hypot(ui[1], ui[2]);
    double uhat[3] = {utn + mu * ntu, ui[1], ui[2]};

    // natural map: gamma - P_K(gamma - uhat)
    double y[3] = {g[0] - uhat[0], g[1] - uhat[1], g[2] - uhat[2]}, py[3];
    fl_cone_project(mu, y, py);
    for (int k = 0; k < 3; k++) nat2 += (g[k] - py[k]) * (g[k] - py[k]);

    // norms for the normalizations
    nq2 += q[3 * i] * q[3 * i] + q[3 * i + 1] * q[3 * i + 1] + q[3 * i + 2] * q[3 * i + 2];
    nu2 += utn * utn + ui[1] * ui[1] + ui[2] * ui[2];
    ng2 += g[0] * g[0] + g[1] * g[1] + g[2] * g[2];

    // Signorini on the normal law, cone and dual-cone feasibility, maximum dissipation
    double ntg = hypot(g[1], g[2]);
    m.signorini = dmax(m.signorini, fabs(fmin(g[0], utn)));
    m.cone = dmax(m.cone, dmax(ntg - mu * g[0], -g[0]));
    m.dual = dmax(m.dual, mu * ntu - uhat[0]);
    m.dissipation = dmax(m.dissipation, fabs(g[1] * ui[1] + g[2] * ui[2] + mu * g[0] * ntu));
    if (global) m.penetration = dmax(m.penetration, -(p->phi0[i] + p->dt * ui[0]));
  }
  m.natmap_raw = sqrt(nat2);
  m.norm_q = sqrt(nq2);
  m.norm_u = sqrt(nu2);
  m.norm_gamma = sqrt(ng2);

  // normalizations (see fl_norm_kind)
  switch (norm) {
  case FL_NORM_FCLIB:
    m.natmap = m.natmap_raw / (1.0 + sqrt(m.norm_q));
    break;
  case FL_NORM_SICONOS: {
    double s = dmax(m.norm_q, dmax(m.norm_gamma, m.norm_u));
    m.natmap = s > DBL_EPSILON ? m.natmap_raw / s : m.natmap_raw;
    break;
  }
  default:
    m.natmap = m.natmap_raw;
    break;
  }

  // bilateral rows: natural map of  lo <= gamma_h perp e_h = J_h v + b_h + g0/dt + c gamma_h
  for (fl_int h = 0; h < nh; h++) {
    fl_int r = 3 * nc + h;
    double e = u[r] + p->g0[h] / p->dt + p->compliance[h] * gamma[r];
    double y = gamma[r] - e;
    double cl = y < p->lo[h] ? p->lo[h] : (y > p->hi[h] ? p->hi[h] : y);
    m.bilateral = dmax(m.bilateral, fabs(gamma[r] - cl));
  }

  m.momentum = global && p->A ? momentum(p, v, gamma, work) : NAN;
  fl_free(scr);
  *out = m;
  return FL_OK;
}


double fl_metrics_merit(const fl_metrics *m, double raw0) {
  double r = m->natmap;
  if (!isnan(m->momentum)) r = isnan(r) ? r : fmax(r, m->momentum); // global problems
  if (isnan(r) || isinf(r)) return INFINITY;
  if (raw0 > 0 && !(m->natmap_raw <= FL_MERIT_GROWTH_MAX * raw0)) return INFINITY;
  return r;
}

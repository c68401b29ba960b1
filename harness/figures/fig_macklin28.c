// SPDX-License-Identifier: Apache-2.0
/* fig_macklin28.c: thesis Fig. 28, conditioning of the primal and dual Hessians.
 *
 * A 1-D chain of n particles of mass m hangs from a fixed anchor by springs of stiffness k:
 * constraint i is C_i = x_i - x_(i-1) - L (x_0 the anchor), so J is n x n lower bidiagonal with
 * 1 on the diagonal and -1 below it. For a time step dt the Hessians (thesis eqs. 126-127) are
 *
 *   primal  H_p = M + dt^2 J^T K J          dual  H_d = dt^2 J M^-1 J^T + K^-1.
 *
 * Left panel: the last particle's mass grows (mass ratio r = m_n/m). Right panel: the last
 * spring's stiffness grows (stiffness ratio r = k_n/k). Their exact condition numbers
 * lambda_max/lambda_min come from LAPACK's dsyev (symmetric eigenvalues). The seed's claim: the
 * two mirror each other; the dual degrades with mass ratio, the primal with stiffness ratio.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "fl_figure.h"

/* LAPACK (Debian liblapack): eigenvalues of a symmetric matrix, ascending. */
extern void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
                   double *w, double *work, const int *lwork, int *info);

enum { NMAX = 64 };

/* condition number of a symmetric positive definite n x n matrix (row-major = column-major) */
static int cond_spd(double *a, int n, double *cond) {
  double w[NMAX], work[4 * NMAX * NMAX];
  int lwork = 4 * NMAX * NMAX, info = 0;
  dsyev_("N", "U", &n, a, &n, w, work, &lwork, &info);
  if (info != 0) return fl_seterr(FL_ERR_LIBRARY, "LAPACK dsyev failed (info %d)", info);
  if (!(w[0] > 0)) return fl_seterr(FL_ERR_NOT_SPD, "Hessian not positive definite (%g)", w[0]);
  *cond = w[n - 1] / w[0];
  return FL_OK;
}


/* condition numbers of both Hessians for per-particle masses m[] and spring stiffnesses k[] */
static int chain_cond(int n, const double *m, const double *k, double dt, double *cp,
                      double *cd) {
  double J[NMAX * NMAX], Hp[NMAX * NMAX], Hd[NMAX * NMAX];
  memset(J, 0, sizeof J);
  for (int i = 0; i < n; i++) {
    J[i * n + i] = 1;
    if (i > 0) J[i * n + i - 1] = -1;
  }
  for (int a = 0; a < n; a++) {
    for (int b = 0; b < n; b++) {
      double sp = (a == b) ? m[a] : 0, sd = (a == b) ? 1 / k[a] : 0;
      for (int c = 0; c < n; c++) {
        sp += dt * dt * J[c * n + a] * k[c] * J[c * n + b]; // (J^T K J)_ab
        sd += dt * dt * J[a * n + c] * J[b * n + c] / m[c]; // (J M^-1 J^T)_ab
      }
      Hp[a * n + b] = sp;
      Hd[a * n + b] = sd;
    }
  }
  FL_TRY(cond_spd(Hp, n, cp));
  return cond_spd(Hd, n, cd);
}


/* a sweep's CSV: one row per ratio */
typedef struct cond_row {
  double ratio, primal, dual; /* the ratio, then the two condition numbers */
} cond_row;
static const fl_csv_col cond_cols[] = {{"ratio", FL_CSV_G, offsetof(cond_row, ratio), 6},
                                       {"primal", FL_CSV_G, offsetof(cond_row, primal), 10},
                                       {"dual", FL_CSV_G, offsetof(cond_row, dual), 10}};


/* one sweep of the ratio for one kind (mass or stiffness) and spring stiffness k0 */
static int sweep(fl_fig_ctx *ctx, const char *file, int mass, double k0, int npts) {
  const int n = 10;
  const double m0 = 1.0, dt = 1.0 / 60;
  FILE *f = fl_fig_table(ctx, file, cond_cols, 3);
  if (!f) return fl_errcode();
  double m[NMAX], k[NMAX], c0[2] = {0, 0};
  for (int s = 0; s < npts; s++) {
    double r = pow(10.0, 6.0 * s / (npts - 1)), cp, cd;
    for (int i = 0; i < n; i++) {
      m[i] = m0;
      k[i] = k0;
    }
    if (mass) {
      m[n - 1] = r * m0;
    } else {
      k[n - 1] = r * k0;
    }
    FL_TRY(chain_cond(n, m, k, dt, &cp, &cd));
    cond_row row = {r, cp, cd};
    fl_csv_row(f, cond_cols, 3, &row);
    if (s == 0) {
      c0[0] = cp;
      c0[1] = cd;
    }
    if (s == npts - 1)
      fl_fig_say(ctx, "%s ratio 1 -> %.0e, k = %.0e N/m (dt^2 k = %.3g kg): primal cond %.3g -> %.3g, "
                 "dual cond %.3g -> %.3g", mass ? "mass" : "stiffness", r, k0, dt * dt * k0,
                 c0[0], cp, c0[1], cd);
  }
  return FL_OK;
}


static int run(fl_fig_ctx *ctx) {
  const int npts = ctx->quick ? 7 : 37;
  fl_fig_say(ctx, "1-D chain of 10 particles of 1 kg hanging from an anchor, dt = 1/60 s; "
                  "exact eigenvalues (LAPACK dsyev)");
  FL_TRY(sweep(ctx, "mass_ratio.csv", 1, 1e10, npts));
  FL_TRY(sweep(ctx, "stiffness_ratio.csv", 0, 1e10, npts));
  FL_TRY(sweep(ctx, "mass_ratio_soft.csv", 1, 1e6, npts));
  fl_fig_say(ctx, "the mirror image holds while dt^2 k dominates the heavy mass; with k = 1e6 N/m "
                  "the primal Hessian degrades too once the mass exceeds dt^2 k (third panel)");
  const char *lp = "primal M + dt^2 J^T K J", *ld = "dual dt^2 J M^-1 J^T + K^-1";
  fl_fig_panel *p = fl_fig_panel_add(ctx->fig, "mass ratio, k = 1e10 N/m (last particle heavier)",
                                     "mass ratio m_n / m", "condition number", 1, 1);
  fl_fig_series_add(p, "mass_ratio.csv", "ratio", "primal", lp, 2);
  fl_fig_series_add(p, "mass_ratio.csv", "ratio", "dual", ld, 2);
  p = fl_fig_panel_add(ctx->fig, "stiffness ratio, k = 1e10 N/m (last spring stiffer)",
                       "stiffness ratio k_n / k", "condition number", 1, 1);
  fl_fig_series_add(p, "stiffness_ratio.csv", "ratio", "primal", lp, 2);
  fl_fig_series_add(p, "stiffness_ratio.csv", "ratio", "dual", ld, 2);
  p = fl_fig_panel_add(ctx->fig, "mass ratio, softer springs k = 1e6 N/m",
                       "mass ratio m_n / m", "condition number", 1, 1);
  fl_fig_series_add(p, "mass_ratio_soft.csv", "ratio", "primal", lp, 2);
  fl_fig_series_add(p, "mass_ratio_soft.csv", "ratio", "dual", ld, 2);
  return FL_OK;
}


/* exposed for tests: condition numbers of the chain with the last mass and spring scaled */
int fl__fig28_chain_cond(int n, double mass_ratio, double stiff_ratio, double dt, double *cp,
                         double *cd);
int fl__fig28_chain_cond(int n, double mass_ratio, double stiff_ratio, double dt, double *cp,
                         double *cd) {
  double m[NMAX], k[NMAX];
  if (n < 1 || n > NMAX) return fl_seterr(FL_ERR_INVAL, "chain of %d particles (1..%d)", n, NMAX);
  for (int i = 0; i < n; i++) {
    m[i] = 1;
    k[i] = 1e6;
  }
  m[n - 1] *= mass_ratio;
  k[n - 1] *= stiff_ratio;
  return chain_cond(n, m, k, dt, cp, cd);
}


const fl_figure_recipe fl_fig_macklin28 = {
  "macklin-fig28", "004",
  "condition numbers of the primal and dual Hessians of a 1-D chain against mass and stiffness ratio",
  NULL, run, NULL};

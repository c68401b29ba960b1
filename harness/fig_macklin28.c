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


static int run(fl_fig_ctx *ctx) {
  const int n = 10;
  const double m0 = 1.0, k0 = 1e6, dt = 1.0 / 60;
  const int npts = ctx->quick ? 9 : 49;
  FILE *fm = fl_fig_csv(ctx, "mass_ratio.csv", "ratio,primal,dual");
  FILE *fk = fl_fig_csv(ctx, "stiffness_ratio.csv", "ratio,primal,dual");
  if (!fm || !fk) return fl_errcode();
  double m[NMAX], k[NMAX], first[4] = {0}, last[4] = {0};
  for (int s = 0; s < npts; s++) {
    double r = pow(10.0, 8.0 * s / (npts - 1)), cp, cd;
    // mass ratio: the last particle is r times heavier
    for (int i = 0; i < n; i++) {
      m[i] = m0;
      k[i] = k0;
    }
    m[n - 1] = r * m0;
    FL_TRY(chain_cond(n, m, k, dt, &cp, &cd));
    fprintf(fm, "%.6g,%.10g,%.10g\n", r, cp, cd);
    if (s == 0) first[0] = cp, first[1] = cd;
    if (s == npts - 1) last[0] = cp, last[1] = cd;
    // stiffness ratio: the last spring is r times stiffer
    m[n - 1] = m0;
    k[n - 1] = r * k0;
    FL_TRY(chain_cond(n, m, k, dt, &cp, &cd));
    fprintf(fk, "%.6g,%.10g,%.10g\n", r, cp, cd);
    if (s == 0) first[2] = cp, first[3] = cd;
    if (s == npts - 1) last[2] = cp, last[3] = cd;
  }
  fl_fig_say(ctx, "chain of %d particles, m = %g kg, k = %g N/m, dt = %.6g s", n, m0, k0, dt);
  fl_fig_say(ctx, "mass ratio 1 -> 1e8:      primal cond %.3g -> %.3g, dual cond %.3g -> %.3g",
             first[0], last[0], first[1], last[1]);
  fl_fig_say(ctx, "stiffness ratio 1 -> 1e8: primal cond %.3g -> %.3g, dual cond %.3g -> %.3g",
             first[2], last[2], first[3], last[3]);

  fl_fig_panel *p = fl_fig_panel_add(ctx->fig, "mass ratio (last particle heavier)",
                                     "mass ratio m_n / m", "condition number", 1, 1);
  fl_fig_series_add(p, "mass_ratio.csv", "ratio", "primal", "primal M + dt^2 J^T K J", 2);
  fl_fig_series_add(p, "mass_ratio.csv", "ratio", "dual", "dual dt^2 J M^-1 J^T + K^-1", 2);
  p = fl_fig_panel_add(ctx->fig, "stiffness ratio (last spring stiffer)",
                       "stiffness ratio k_n / k", "condition number", 1, 1);
  fl_fig_series_add(p, "stiffness_ratio.csv", "ratio", "primal", "primal M + dt^2 J^T K J", 2);
  fl_fig_series_add(p, "stiffness_ratio.csv", "ratio", "dual", "dual dt^2 J M^-1 J^T + K^-1", 2);
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

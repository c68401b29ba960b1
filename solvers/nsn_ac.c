// SPDX-License-Identifier: Apache-2.0
/* nsn_ac.c: the non-smooth Newton's Alart-Curnier exact Newton (ncp=ac; nsn.c describes the
 * solver and its options, docs/nsn.md the method's robustness measures).
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <umfpack.h>

#include "nsn_impl.h"

//---- Alart-Curnier exact Newton (ncp=ac, local problems) ----
//
// Per contact, with u = W gamma + q, x_n = gamma_n - rho_n u_n, y = gamma_t - rho_t u_t and the
// disk radius R = mu max(0, x_n) (Alart and Curnier 1991; Siconos's NSN-AC):
//   F_n = gamma_n - max(0, x_n),   F_t = gamma_t - P_disk(R)(y).
// F = 0 is exactly Coulomb's law. Its generalized Jacobian is G = A + B W with 3x3 blocks
// A = dF/dgamma, B = dF/du per contact; G is not symmetric, so it is factorized by UMFPACK.

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}


/* the largest eigenvalue of the symmetric 3x3 block of W at rows and columns r..r+2
 * (trigonometric closed form of the characteristic cubic) */
static double block_lambda_max(const fl_csr *W, fl_int r) {
  double a[3][3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) a[i][j] = fl_csr_get(W, r + i, r + j);
  for (int i = 0; i < 3; i++) // symmetrize (rounding)
    for (int j = i + 1; j < 3; j++) a[i][j] = a[j][i] = 0.5 * (a[i][j] + a[j][i]);
  double p1 = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
  double q = (a[0][0] + a[1][1] + a[2][2]) / 3;
  if (p1 <= 1e-300) return fmax(a[0][0], fmax(a[1][1], a[2][2]));
  double p2 = (a[0][0] - q) * (a[0][0] - q) + (a[1][1] - q) * (a[1][1] - q) +
              (a[2][2] - q) * (a[2][2] - q) + 2 * p1;
  double pp = sqrt(p2 / 6), b[3][3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) b[i][j] = (a[i][j] - (i == j ? q : 0)) / pp;
  double detb = b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1]) -
                b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0]) +
                b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0]);
  double rr = fmax(-1.0, fmin(1.0, 0.5 * detb));
  return q + 2 * pp * cos(acos(rr) / 3);
}


/* the arrays, and G's dense storage or its sparse pattern (fixed in a solve: every product
 * entry is kept, zero or not) */
int fl__nsn_ac_setup(nsn_data *d, int dense, int spectral) {
  const fl_csr *W = d->W;
  fl_int n = d->n, nc = d->nc;
  size_t nn = (size_t)(n > 0 ? n : 1), nnc = (size_t)(nc > 0 ? nc : 1);
  size_t nnh = (size_t)(d->nh > 0 ? d->nh : 1);
  d->acF = fl_malloc((6 * nn + 20 * nnc + 3 * nnh) * sizeof(double));
  if (!d->acF) return fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (ac)");
  d->acFt = d->acF + nn;
  d->acut = d->acFt + nn;
  d->acgt = d->acut + nn;
  d->acdx = d->acgt + nn;
  d->acwdx = d->acdx + nn;
  d->acblk = d->acwdx + nn;
  d->acrn = d->acblk + 18 * nnc;
  d->acrt = d->acrn + nnc;
  d->acrh = d->acrt + nnc;
  d->acbh = d->acrh + nnh;
  for (fl_int h = 0; h < d->nh; h++) { // bilateral rows: rho = 1/W_hh
    double whh = d->wdiag[3 * nc + h];
    d->acrh[h] = whh > DBL_MIN ? 1.0 / whh : 1.0;
  }
  for (fl_int i = 0; i < nc; i++) {
    double wnn = d->wdiag[3 * i];
    d->acrn[i] = wnn > DBL_MIN ? 1.0 / wnn : 1.0;
    d->acrt[i] = 1.0 / d->wtt[i];
    if (spectral) { // one rho = 1/lambda_max of the contact's block for all three rows
      double lm = block_lambda_max(W, 3 * i);
      if (lm > DBL_MIN) d->acrn[i] = d->acrt[i] = 1.0 / lm;
    }
  }
  if (d->acbest || d->acpolish > 0) {
    d->acbestg = fl_malloc(nn * sizeof(double));
    if (!d->acbestg) return fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (ac)");
  }
  if (dense) {
    d->acG = fl_calloc(nn * nn, sizeof(double));
    d->acpiv = fl_malloc(2 * nn * sizeof(int));
    if (!d->acG || !d->acpiv) return fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (ac, dense G)");
    for (size_t i = 0; i < nn; i++) d->acpiv[nn + i] = -1; // fl_lu_factor's last[]: G is zero
    return FL_OK;
  }

  int *mark = fl_malloc(nn * sizeof(int)), *list = fl_malloc(nn * sizeof(int));
  fl_int *loc = fl_malloc(nn * sizeof(fl_int));
  d->jptr = fl_malloc((nn + 1) * sizeof(int));
  d->wpos = fl_malloc((size_t)(W->nnz > 0 ? W->nnz : 1) * sizeof(fl_int));
  d->dpos = fl_malloc(nn * sizeof(fl_int));
  int rc = FL_OK;
  if (!mark || !list || !loc || !d->jptr || !d->wpos || !d->dpos) {
    rc = fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (ac)");
    goto out;
  }
  for (fl_int c = 0; c < n; c++) mark[c] = -1;

  // first pass: the size of each contact's column list
  size_t nnz = 0;
  for (fl_int i = 0; i < nc; i++) {
    int len = 0;
    for (fl_int r = 3 * i; r < 3 * i + 3; r++) {
      if (mark[r] != i) mark[r] = i, len++;
      for (fl_int k = W->rowptr[r]; k < W->rowptr[r + 1]; k++)
        if (mark[W->col[k]] != i) mark[W->col[k]] = i, len++;
    }
    nnz += 3 * (size_t)len;
  }
  for (fl_int r = 3 * nc; r < n; r++) // a bilateral row: W's row (its diagonal included)
    nnz += (size_t)(W->rowptr[r + 1] - W->rowptr[r]) + 1;
  d->jcol = fl_malloc((nnz > 0 ? nnz : 1) * sizeof(int));
  d->jval = fl_calloc(nnz > 0 ? nnz : 1, sizeof(double));
  if (!d->jcol || !d->jval) {
    rc = fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (ac Jacobian)");
    goto out;
  }
  for (fl_int c = 0; c < n; c++) mark[c] = -1;
  d->jptr[0] = 0;
  for (fl_int i = 0; i < nc; i++) {
    int len = 0;
    for (fl_int r = 3 * i; r < 3 * i + 3; r++) {
      if (mark[r] != i) mark[r] = i, list[len++] = r;
      for (fl_int k = W->rowptr[r]; k < W->rowptr[r + 1]; k++)
        if (mark[W->col[k]] != i) mark[W->col[k]] = i, list[len++] = W->col[k];
    }
    qsort(list, (size_t)len, sizeof(int), cmp_int);
    for (int q = 0; q < len; q++) loc[list[q]] = q;
    for (int a = 0; a < 3; a++) {
      fl_int r = 3 * i + a;
      d->jptr[r + 1] = d->jptr[r] + len;
      memcpy(d->jcol + d->jptr[r], list, (size_t)len * sizeof(int));
      d->dpos[r] = loc[r];
      for (fl_int k = W->rowptr[r]; k < W->rowptr[r + 1]; k++) d->wpos[k] = loc[W->col[k]];
    }
  }
  for (fl_int r = 3 * nc; r < n; r++) {
    int len = 0, mk = (int)(r + nc); // a mark no contact uses
    mark[r] = mk, list[len++] = r;
    for (fl_int k = W->rowptr[r]; k < W->rowptr[r + 1]; k++)
      if (mark[W->col[k]] != mk) mark[W->col[k]] = mk, list[len++] = W->col[k];
    qsort(list, (size_t)len, sizeof(int), cmp_int);
    for (int q = 0; q < len; q++) loc[list[q]] = q;
    d->jptr[r + 1] = d->jptr[r] + len;
    memcpy(d->jcol + d->jptr[r], list, (size_t)len * sizeof(int));
    d->dpos[r] = loc[r];
    for (fl_int k = W->rowptr[r]; k < W->rowptr[r + 1]; k++) d->wpos[k] = loc[W->col[k]];
  }
out:
  fl_free(mark);
  fl_free(list);
  fl_free(loc);
  return rc;
}


/* F at (gamma, u) into F; the blocks A, B (row-major 3x3 each) into blk when non-NULL;
 * returns 0.5 ||F||^2 */
static double ac_eval(const nsn_data *d, const fl_problem *p, const double *gamma,
                      const double *u, double *F, double *blk) {
  double th = 0;
  for (fl_int i = 0; i < d->nc; i++) {
    const double *g = gamma + 3 * i, *ui = u + 3 * i;
    double rn = d->acrn[i], rt = d->acrt[i], mu = p->mu[i];
    double *f = F + 3 * i, A[9] = {0}, B[9] = {0};
    double xn = g[0] - rn * ui[0], pn = xn > 0 ? xn : 0;
    f[0] = g[0] - pn;
    if (xn > 0)
      B[0] = rn;
    else
      A[0] = 1;
    double y1 = g[1] - rt * ui[1], y2 = g[2] - rt * ui[2], R = mu * pn, ny = hypot(y1, y2);
    if (!(R > 0)) { // no cone: gamma_t -> 0
      f[1] = g[1];
      f[2] = g[2];
      A[4] = A[8] = 1;
    } else if (ny <= R) { // stick: u_t -> 0
      f[1] = rt * ui[1];
      f[2] = rt * ui[2];
      B[4] = B[8] = rt;
    } else { // slide: gamma_t on the cone's edge
      double e1 = y1 / ny, e2 = y2 / ny, c = R / ny;
      f[1] = g[1] - R * e1;
      f[2] = g[2] - R * e2;
      double G11 = c * (1 - e1 * e1), G12 = -c * e1 * e2, G22 = c * (1 - e2 * e2);
      A[4] = 1 - G11, A[5] = -G12, A[7] = -G12, A[8] = 1 - G22;
      B[4] = rt * G11, B[5] = rt * G12, B[7] = rt * G12, B[8] = rt * G22;
      // through R = mu x_n (x_n > 0 here)
      A[3] = -mu * e1, A[6] = -mu * e2;
      B[3] = mu * e1 * rn, B[6] = mu * e2 * rn;
    }
    th += f[0] * f[0] + f[1] * f[1] + f[2] * f[2];
    if (blk) {
      memcpy(blk + 18 * i, A, sizeof A);
      memcpy(blk + 18 * i + 9, B, sizeof B);
    }
  }
  // bilateral rows: F_h = gamma_h - P_[lo,hi](gamma_h - rho_h u_h), u_h the row's residual;
  // inside the box F_h = rho_h u_h (an equality row: A = 0, B = rho_h), at a bound A = 1
  for (fl_int h = 0; h < d->nh; h++) {
    fl_int r = 3 * d->nc + h;
    double rh = d->acrh[h], x = gamma[r] - rh * u[r], f, a = 0, b = 0;
    if (x < p->lo[h]) {
      f = gamma[r] - p->lo[h];
      a = 1;
    } else if (x > p->hi[h]) {
      f = gamma[r] - p->hi[h];
      a = 1;
    } else {
      f = rh * u[r];
      b = rh;
    }
    F[r] = f;
    th += f * f;
    if (blk) {
      d->acbh[2 * h] = a;
      d->acbh[2 * h + 1] = b;
    }
  }
  return 0.5 * th;
}


/* G = A + B (W + acmu diag W) into jval from the blocks */
static void ac_build(nsn_data *d) {
  const fl_csr *W = d->W;
  double mu = d->acmu;
  for (fl_int i = 0; i < d->nc; i++) {
    const double *A = d->acblk + 18 * i, *B = A + 9;
    for (int a = 0; a < 3; a++) {
      fl_int r = 3 * i + a;
      double *row = d->jval + d->jptr[r];
      for (int q = 0; q < d->jptr[r + 1] - d->jptr[r]; q++) row[q] = 0;
      for (int b = 0; b < 3; b++) {
        row[d->dpos[3 * i + b]] += A[3 * a + b];
        double bb = B[3 * a + b];
        if (bb == 0) continue;
        fl_int w = 3 * i + b;
        for (fl_int k = W->rowptr[w]; k < W->rowptr[w + 1]; k++) row[d->wpos[k]] += bb * W->val[k];
        if (mu > 0) row[d->dpos[w]] += bb * mu * d->wdiag[w];
      }
    }
  }
  for (fl_int h = 0; h < d->nh; h++) {
    fl_int r = 3 * d->nc + h;
    double a = d->acbh[2 * h], bb = d->acbh[2 * h + 1], *row = d->jval + d->jptr[r];
    for (int q = 0; q < d->jptr[r + 1] - d->jptr[r]; q++) row[q] = 0;
    row[d->dpos[r]] += a;
    if (bb == 0) continue;
    for (fl_int k = W->rowptr[r]; k < W->rowptr[r + 1]; k++) row[d->wpos[k]] += bb * W->val[k];
    if (mu > 0) row[d->dpos[r]] += bb * mu * d->wdiag[r];
  }
}


/* G = A + B (W + acmu diag W) into the dense row-major acG */
static void ac_build_dense(nsn_data *d) {
  const fl_csr *W = d->W;
  fl_int n = d->n;
  double mu = d->acmu;
  // zero what the last factorization wrote: row i of its factors ends at column last[i]
  const int *last = d->acpiv + n;
  for (fl_int i = 0; i < n; i++)
    if (last[i] >= 0)
      memset(d->acG + (size_t)i * (size_t)n, 0, (size_t)(last[i] + 1) * sizeof(double));
  for (fl_int i = 0; i < d->nc; i++) {
    const double *A = d->acblk + 18 * i, *B = A + 9;
    for (int a = 0; a < 3; a++) {
      double *row = d->acG + (size_t)(3 * i + a) * (size_t)n;
      for (int b = 0; b < 3; b++) {
        fl_int w = 3 * i + b;
        row[w] += A[3 * a + b];
        double bb = B[3 * a + b];
        if (bb == 0) continue;
        for (fl_int k = W->rowptr[w]; k < W->rowptr[w + 1]; k++) row[W->col[k]] += bb * W->val[k];
        if (mu > 0) row[w] += bb * mu * d->wdiag[w];
      }
    }
  }
  for (fl_int h = 0; h < d->nh; h++) {
    fl_int r = 3 * d->nc + h;
    double a = d->acbh[2 * h], bb = d->acbh[2 * h + 1], *row = d->acG + (size_t)r * (size_t)n;
    row[r] += a;
    if (bb == 0) continue;
    for (fl_int k = W->rowptr[r]; k < W->rowptr[r + 1]; k++) row[W->col[k]] += bb * W->val[k];
    if (mu > 0) row[r] += bb * mu * d->wdiag[r];
  }
}


/* Newton direction G dx = -F into acdx; 0 on success, -1 when the factorization failed or
 * the direction is not finite (the caller falls back) */
static int ac_direction(nsn_data *d) {
  fl_int n = d->n;
  if (d->acG) {
    ac_build_dense(d);
    if (fl_lu_factor(d->acG, n, d->acpiv, d->acpiv + n) != FL_OK) return -1;
    for (fl_int r = 0; r < n; r++) d->acdx[r] = -d->acF[r];
    fl_lu_solve(d->acG, n, d->acpiv, d->acdx);
    for (fl_int r = 0; r < n; r++)
      if (!isfinite(d->acdx[r])) return -1;
    return 0;
  }
  ac_build(d);
  if (d->acklu) {
    for (fl_int r = 0; r < n; r++) d->acFt[r] = -d->acF[r];
    int rc = fl_splu_solve_rows(&d->klu, n, d->jptr, d->jcol, d->jval, d->acFt, d->acdx);
    return rc ? -1 : 0;
  }
  // jptr/jcol/jval read as compressed columns is G^T, so solve with the transpose
  if (!d->sym && umfpack_di_symbolic(n, n, d->jptr, d->jcol, d->jval, &d->sym, NULL, NULL) !=
                     UMFPACK_OK) {
    if (d->sym) umfpack_di_free_symbolic(&d->sym);
    return -1;
  }
  if (d->num) umfpack_di_free_numeric(&d->num);
  int st = umfpack_di_numeric(d->jptr, d->jcol, d->jval, d->sym, &d->num, NULL, NULL);
  if (st != UMFPACK_OK) return -1; // singular G included (status > 0)
  for (fl_int r = 0; r < n; r++) d->acFt[r] = -d->acF[r];
  st = umfpack_di_solve(UMFPACK_At, d->jptr, d->jcol, d->jval, d->acdx, d->acFt, d->num, NULL,
                        NULL);
  if (st != UMFPACK_OK) return -1;
  for (fl_int r = 0; r < n; r++)
    if (!isfinite(d->acdx[r])) return -1;
  return 0;
}


/* the trial d->acgt: u = W x + q (+ tk diag(W) x, the Tikhonov term) into d->acut, F into
 * d->acFt, the blocks; returns 0.5 ||F||^2 */
static double ac_trial(nsn_data *d, const fl_problem *p, double tk) {
  fl_int n = d->n;
  fl_csr_gemv(d->W, 1.0, d->acgt, 0.0, d->acut);
  if (tk > 0)
    for (fl_int r = 0; r < n; r++) d->acut[r] += p->q[r] + tk * d->wdiag[r] * d->acgt[r];
  else
    for (fl_int r = 0; r < n; r++) d->acut[r] += p->q[r];
  return ac_eval(d, p, d->acgt, d->acut, d->acFt, d->acblk);
}

/* the trial gamma + t dx of the search without the Tikhonov term: u = u0 + t W dx is linear
 * in t, so with u0 = W gamma + q (d->u) and W dx (d->acwdx, one product per Newton
 * iteration) a trial costs no product with W; returns 0.5 ||F||^2 */
static double ac_trial_line(nsn_data *d, const fl_problem *p, const double *gamma, double t) {
  for (fl_int r = 0; r < d->n; r++) {
    d->acgt[r] = gamma[r] + t * d->acdx[r];
    d->acut[r] = d->u[r] + t * d->acwdx[r];
  }
  return ac_eval(d, p, d->acgt, d->acut, d->acFt, d->acblk);
}

/* the fallback step into d->acgt, from gamma: one projected Gauss-Seidel sweep over the
 * contacts, each contact's block set to its Alart-Curnier projection (max(0, x_n),
 * P_disk(mu x_n)(y)) with u from the contacts already swept (and the Tikhonov term tk);
 * with rho = 1/lambda_max of the block each update is a projected gradient step on the
 * contact's block, which does not grow the impulses the way the simultaneous (Jacobi)
 * projection gamma - F can on strongly coupled contacts (arches) */
static void ac_gs_sweep(nsn_data *d, const fl_problem *p, const double *gamma, double tk) {
  const fl_csr *W = d->W;
  double *x = d->acgt;
  memcpy(x, gamma, (size_t)d->n * sizeof(double));
  for (fl_int i = 0; i < d->nc; i++) {
    double u[3];
    for (int a = 0; a < 3; a++) {
      fl_int r = 3 * i + a;
      double t = p->q[r] + tk * d->wdiag[r] * x[r];
      for (fl_int k = W->rowptr[r]; k < W->rowptr[r + 1]; k++) t += W->val[k] * x[W->col[k]];
      u[a] = t;
    }
    double *g = x + 3 * i, rn = d->acrn[i], rt = d->acrt[i];
    double xn = g[0] - rn * u[0], pn = xn > 0 ? xn : 0;
    double y1 = g[1] - rt * u[1], y2 = g[2] - rt * u[2], R = p->mu[i] * pn, ny = hypot(y1, y2);
    if (ny > R) {
      double c = ny > 0 ? R / ny : 0;
      y1 *= c;
      y2 *= c;
    }
    if (!isfinite(pn) || !isfinite(y1) || !isfinite(y2)) continue; // leave the block
    g[0] = pn;
    g[1] = y1;
    g[2] = y2;
  }
  for (fl_int h = 0; h < d->nh; h++) { // bilateral rows: P_[lo,hi](gamma_h - rho_h u_h)
    fl_int r = 3 * d->nc + h;
    double u = p->q[r] + tk * d->wdiag[r] * x[r];
    for (fl_int k = W->rowptr[r]; k < W->rowptr[r + 1]; k++) u += W->val[k] * x[W->col[k]];
    double y = x[r] - d->acrh[h] * u;
    y = y < p->lo[h] ? p->lo[h] : y > p->hi[h] ? p->hi[h] : y;
    if (isfinite(y)) x[r] = y;
  }
}

/* ac.compliance c > 0: W's diagonal regularized ((1 + c) W_ii, level 0), rigid (W_ii, level
 * 1) or between ((1 + c NSN_AC_POLISH2) W_ii, level 2: the polish's second try) */
void fl__nsn_ac_set_rigid(nsn_data *d, int level) {
  size_t nr = (size_t)(d->n > 0 ? d->n : 1);
  for (fl_int r = 0; r < d->n; r++) {
    if (d->acdk[r] < 0) continue;
    double w0 = d->acwd[nr + (size_t)r];
    d->acWc->val[d->acdk[r]] =
        level == 0 ? d->acwd[r] : level == 1 ? w0 : w0 * (1 + d->accomp * NSN_AC_POLISH2);
  }
}

/* ncp=ac on a global problem pg (solved in its local form): v = v* + A^-1 J^T gamma */
static void ac_hand_out_v(const nsn_data *d, const fl_problem *pg, const double *gamma,
                          double *v) {
  if (!d->pl || !v) return;
  memcpy(v, pg->vstar, (size_t)pg->nv * sizeof(double));
  fl_csr_gemtv(d->B, 1.0, gamma, 1.0, v);
}

/* the whole solve with ncp=ac: Armijo on 0.5 ||F||^2 along the Newton direction, or the
 * projection step gamma - F (= P(gamma - rho u)) when the direction fails or the search does.
 * The Jacobian is G = A + B (W + acreg diag W): W of redundant contacts is singular, and so is
 * the exact G wherever they are active and stick (acreg = 1e-11 by default).
 *
 * Restart (acrestart > 0; global problems by default): after acrestart iterations without
 * convergence the solve starts again once from gamma = 0 on the Tikhonov-regularized problem
 * W + tk diag W (u = W gamma + q + tk diag(W) gamma), whose solution is unique: tk starts at
 * NSN_AC_TK0, is multiplied by NSN_AC_TK_SHRINK after each full Newton step, never exceeds
 * rel = ||F|| / (||F|| + ||gamma||) of the unregularized F, and is 0 once below 1e-15: a
 * continuation to the original problem. It catches the Newton iterations that stall where
 * redundant contacts carry opposed impulses (a warm start after the contact set changed, the
 * Jacobian's kinks between stick and slip). The error recorded is always that of the
 * original problem.
 *
 * A global problem pg is solved in its local form d->pl from the incoming gamma (zero unless
 * warm_start); v is handed out whenever a record may read it and at the end. */
int fl__nsn_solve_ac(fl_solver *s, const fl_problem *pg, double *v, double *gamma) {
  nsn_data *d = s->data;
  const nsn_opts *o = s->opts;
  const fl_problem *p = d->pl ? d->pl : pg;
  fl_int n = d->n;
  s->cur_v = d->pl ? v : NULL;
  s->cur_gamma = gamma;
  if (d->num) umfpack_di_free_numeric(&d->num);
  if (d->sym) umfpack_di_free_symbolic(&d->sym);
  fl_splu_free(&d->klu);
  d->acmu = d->acreg;

  // a guess that already solves the rigid problem (warm start from an answer) is taken as is
  int rigid0 = 0;
  if (d->acpolish > 0 && s->common.warm_start) {
    fl__nsn_ac_set_rigid(d, 1);
    fl__nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
    rigid0 = d->error <= s->common.abs_tol;
    if (!rigid0) fl__nsn_ac_set_rigid(d, 0);
  }
  if (!rigid0) fl__nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  fl__nsn_fill_stat(d, &st);
  double th = ac_eval(d, p, gamma, d->u, d->acF, d->acblk);
  st.objective = sqrt(2 * th);
  if (d->pl && fl_solver_wants_iterate(s, 0)) ac_hand_out_v(d, pg, gamma, v);
  int stop0 = fl_solver_record(s, &st) != 0;
  if (rigid0) { // back to the regularized problem (never_stop goes on with it)
    fl__nsn_ac_set_rigid(d, 0);
    if (!stop0) {
      fl__nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
      th = ac_eval(d, p, gamma, d->u, d->acF, d->acblk);
    }
  }
  if (stop0) {
    ac_hand_out_v(d, pg, gamma, v);
    return FL_OK;
  }

  int tikhonov = 0, nmk = 0; /* nmk: merits in the non-monotone history */
  int nfb = 0; /* ac.fallback=switch: projection steps that raised the merit so far */
  double tk = 0, tlast = 0; /* the Tikhonov weight (restarted solve); the last step length */
  double best_err = d->error; /* ac.best: the least own residual so far, its iterate */
  if (d->acbest) memcpy(d->acbestg, gamma, (size_t)n * sizeof(double));
  /* polish: 0 = solving the regularized problem (or the only one), > 0 = iterations left on
   * the rigid problem after the regularized one converged; d->acbestg keeps its solution and
   * reg_reason its reason */
  int polish = 0, reg_reason = 0, plevel = 0;
  for (int k = 1;; k++) {
    int restart = !polish && d->acrestart > 0 && k == d->acrestart;
    if (restart) { // not converged: restart from zero on the regularized problem
      tikhonov = 1;
      tk = NSN_AC_TK0;
      memset(gamma, 0, (size_t)n * sizeof(double));
      fl__nsn_eval(d, p, NCP_FB, NULL, gamma, NULL); // d->u = q
    }
    if (tikhonov) { // the weight, capped by the unregularized residual at gamma (u = d->u)
      ac_eval(d, p, gamma, d->u, d->acFt, NULL);
      double f2 = 0, g2 = 0;
      for (fl_int r = 0; r < n; r++) {
        f2 += d->acFt[r] * d->acFt[r];
        g2 += gamma[r] * gamma[r];
      }
      double rel = sqrt(f2) / (sqrt(f2) + sqrt(g2) + DBL_MIN);
      if (!restart && tlast == 1) tk *= NSN_AC_TK_SHRINK; // a full Newton step: tighten
      tk = fmin(tk, rel);
      if (!(tk >= 1e-15)) tk = 0;
      d->acmu = fmax(d->acreg, tk);
      memcpy(d->acgt, gamma, (size_t)n * sizeof(double));
      th = ac_trial(d, p, tk);
      memcpy(d->acF, d->acFt, (size_t)n * sizeof(double));
    }
    int newton = ac_direction(d) == 0;
    double t = 1, tht = NAN;
    int neval = 0, ok = 0;
    if (newton && d->ls == LS_NONE) { // fixed step (alpha), kept when finite
      t = o->alpha;
      for (fl_int r = 0; r < n; r++) d->acgt[r] = gamma[r] + t * d->acdx[r];
      tht = ac_trial(d, p, tk);
      neval = 1;
      ok = isfinite(tht);
    } else if (newton) { // Armijo: the Newton direction's slope is -||F||^2 = -2 th
      // non-monotone (ac.nonmono > 0): the reference is the largest merit of the last
      // iterations, so that a full step through a kink of F may raise the merit for a while
      double ref = th;
      for (int j = 0; j < d->acnm && j < nmk; j++) ref = fmax(ref, d->acthist[j]);
      // d->u = W gamma + q: the trials along the line (ac_trial_line); local problems only,
      // so that world steps keep their iterates to the bit (their trajectories are chaotic in
      // the rounding, docs/nsn.md)
      int line = !(tk > 0) && !d->pl;
      if (line) fl_csr_gemv(d->W, 1.0, d->acdx, 0.0, d->acwdx);
      for (int tr = 0; tr < 30 && !ok; tr++, t *= 0.5) {
        if (line) {
          tht = ac_trial_line(d, p, gamma, t);
        } else {
          for (fl_int r = 0; r < n; r++) d->acgt[r] = gamma[r] + t * d->acdx[r];
          tht = ac_trial(d, p, tk);
        }
        neval++;
        if (isfinite(tht) && tht <= ref - 2e-4 * t * th) ok = 1;
      }
      if (ok) t *= 2; // undo the last halving
    }
    if (!ok) { // guarded fallback: the projection (fixed-point) step, kept when finite
      int sweep = d->acfb == FB_GS || (d->acfb == FB_SWITCH && nfb >= NSN_AC_FB_SWITCH);
      if (sweep)
        ac_gs_sweep(d, p, gamma, tk);
      else
        for (fl_int r = 0; r < n; r++) d->acgt[r] = gamma[r] - d->acF[r];
      tht = ac_trial(d, p, tk);
      neval++;
      t = 0;
      ok = isfinite(tht);
      for (fl_int r = 0; ok && r < n; r++) ok = isfinite(d->acgt[r]);
      if (!sweep && !(tht < th)) nfb++; // a projection step that raised the merit
    }
    tlast = t;
    if (d->acnm > 0) { // the merit history of the non-monotone search (newest first)
      memmove(d->acthist + 1, d->acthist, (size_t)(d->acnm - 1) * sizeof(double));
      d->acthist[0] = th;
      nmk++;
    }
    double dmax = 0;
    if (ok) {
      for (fl_int r = 0; r < n; r++) {
        double e = fabs(d->acgt[r] - gamma[r]);
        if (e > dmax) dmax = e;
      }
      memcpy(gamma, d->acgt, (size_t)n * sizeof(double));
      memcpy(d->acF, d->acFt, (size_t)n * sizeof(double));
      th = tht;
    } else { // nothing finite to take: keep the iterate and its blocks
      memcpy(d->acgt, gamma, (size_t)n * sizeof(double));
      th = ac_trial(d, p, tk);
      memcpy(d->acF, d->acFt, (size_t)n * sizeof(double));
    }
    if (tk > 0) { // d->acut holds the regularized u; the record is of the original problem
      fl__nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
    } else { // d->acut = W gamma + q, computed as fl__nsn_eval would
      memcpy(d->u, d->acut, (size_t)n * sizeof(double));
      fl__nsn_eval_rows(d, p, NCP_FB, NULL, gamma, NULL);
    }
    fl_iter_stat_init(&st, k);
    fl__nsn_fill_stat(d, &st);
    st.objective = sqrt(2 * th);
    st.step = t; // 0 marks the fallback step
    st.step_norm = dmax;
    st.inner_iters = newton;
    st.neval = neval;
    if (d->pl && fl_solver_wants_iterate(s, k)) ac_hand_out_v(d, pg, gamma, v);
    if (!polish && d->acbest && d->error < best_err) {
      best_err = d->error;
      memcpy(d->acbestg, gamma, (size_t)n * sizeof(double));
    }
    int stop = fl_solver_record(s, &st) != 0;
    if (!ok && !stop) {
      s->reason = FL_DIVERGED_LINE_SEARCH;
      stop = 1;
    }
    if (polish) { // rigid iterations: done when converged, else back to the regularized answer
      polish--;
      if (stop && s->reason > 0) {
        fl__nsn_ac_set_rigid(d, 0);
        break;
      }
      if ((stop || polish == 0 || !ok) && plevel == 1) {
        // the rigid problem (redundant contacts: its impulses are not unique) did not
        // converge: a second try with 1/100 of the compliance, from the same start
        plevel = 2;
        fl__nsn_ac_set_rigid(d, 2);
        memcpy(gamma, d->acbestg, (size_t)n * sizeof(double));
        polish = d->acpolish;
        nmk = 0;
        fl__nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
        th = ac_eval(d, p, gamma, d->u, d->acF, d->acblk);
        s->reason = FL_ITERATING;
        continue;
      }
      if (stop || polish == 0 || !ok) {
        fl__nsn_ac_set_rigid(d, 0);
        memcpy(gamma, d->acbestg, (size_t)n * sizeof(double));
        fl__nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
        fl_iter_stat_init(&st, s->iters + 1);
        fl__nsn_fill_stat(d, &st);
        st.objective = sqrt(2 * ac_eval(d, p, gamma, d->u, d->acFt, NULL));
        st.step = 0;
        if (d->pl) ac_hand_out_v(d, pg, gamma, v);
        if (fl_solver_record(s, &st) == FL_REASON_ABORT) return s->abort_code;
        s->reason = reg_reason;
        break;
      }
      continue;
    }
    if (!stop) continue;
    if (s->reason > 0 && d->acpolish > 0 && d->acdk) {
      // the regularized problem converged: polish on the rigid one from its solution
      reg_reason = s->reason;
      memcpy(d->acbestg, gamma, (size_t)n * sizeof(double));
      fl__nsn_ac_set_rigid(d, 1);
      plevel = 1;
      polish = d->acpolish;
      tikhonov = 0;
      tk = 0;
      d->acmu = d->acreg;
      nmk = 0;
      fl__nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
      th = ac_eval(d, p, gamma, d->u, d->acF, d->acblk);
      if (d->error <= s->common.abs_tol) { // already a rigid solution
        fl__nsn_ac_set_rigid(d, 0);
        break;
      }
      s->reason = FL_ITERATING;
      continue;
    }
    break;
  }
  // not converged: hand out the iterate of least own residual, recorded as one more
  // iteration so that the history ends with (and the final metrics are of) what is handed
  // out; the reason stays negative
  int reason = s->reason;
  if (d->acbest && reason < 0 && reason != FL_REASON_ABORT) {
    int changed = best_err < d->error;
    if (changed) {
      memcpy(gamma, d->acbestg, (size_t)n * sizeof(double));
      fl__nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
    }
    // no kinetic energy from an unconverged answer: with w = A^-1 J^T gamma, handing out
    // v = v* + t w changes the kinetic energy by t gamma^T J v* + t^2/2 gamma^T J w, and a
    // Coulomb answer only adds the work of prescribed bodies, -t gamma^T b. So gamma is scaled
    // to the largest t in [0, 1] with t gamma^T u* + t^2/2 gamma^T W gamma <= 0, u* = J v* + b
    // the free relative velocity: a cone is a cone, so t gamma stays admissible. (The position
    // correction of deep overlaps is what a failed step would otherwise turn into energy.)
    if (d->pl && v) {
      double *Jv = d->acut, *Jvs = d->acFt;
      ac_hand_out_v(d, pg, gamma, v);
      fl_csr_gemv(pg->J, 1.0, v, 0.0, Jv);
      fl_csr_gemv(pg->J, 1.0, pg->vstar, 0.0, Jvs);
      double gu = 0, gwg = 0;
      for (fl_int r = 0; r < n; r++) {
        gu += gamma[r] * (Jvs[r] + (pg->b ? pg->b[r] : 0));
        gwg += gamma[r] * (Jv[r] - Jvs[r]);
      }
      if (gu + 0.5 * gwg > 1e-12 * fabs(gwg) || !isfinite(gu + gwg)) {
        double t = gu < 0 && gwg > 0 && isfinite(gu + gwg) ? fmin(1.0, -2 * gu / gwg) : 0;
        for (fl_int r = 0; r < n; r++) gamma[r] *= t;
        fl__nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
        changed = 1;
      }
    }
    if (changed) {
      fl_iter_stat_init(&st, s->iters + 1);
      fl__nsn_fill_stat(d, &st);
      st.objective = sqrt(2 * ac_eval(d, p, gamma, d->u, d->acFt, NULL));
      st.step = 0;
      if (d->pl) ac_hand_out_v(d, pg, gamma, v);
      if (fl_solver_record(s, &st) == FL_REASON_ABORT) return s->abort_code;
      s->reason = reason;
    }
  }
  ac_hand_out_v(d, pg, gamma, v);
  return FL_OK;
}

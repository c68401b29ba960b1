// SPDX-License-Identifier: Apache-2.0
/* lin_direct.c: the inner solver "direct": sparse Cholesky (CHOLMOD) of the Newton matrix
 * K = J A^-1 J^T + C, regularized.
 *
 * The pattern of K is fixed for a whole NSN solve, so the symbolic analysis (fill-reducing
 * ordering) runs once in setup and each Newton iteration only refactors numerically. A
 * symmetric CSR with both triangles is the CSC of the same matrix; CHOLMOD reads its upper
 * triangle (stype = 1).
 *
 * Redundant rigid contacts (four coplanar corners) make K singular, and CHOLMOD then often
 * "succeeds" with a pivot at rounding level, which turns any inconsistent part of the
 * right-hand side into an enormous step. So K is always regularized: it is scaled to unit
 * diagonal, Khat = D^-1/2 K D^-1/2 (a copy of the values, made in setup), and Khat + reg I is
 * factored (reg = lin.reg, a shift relative to every diagonal entry; the identity shift of the
 * NSN paper's section 8.4, which changes the Newton step, not the model). When CHOLMOD still
 * reports "not positive definite" the shift grows x100 (at most 8 times). x = D^-1/2 y with
 * (Khat + reg I) y = D^-1/2 b. Records one "iteration" with the true ||b - K x||.
 */
#include <math.h>
#include <string.h>

#include <cholmod.h>

#include "fl_lin.h"
#include "local_kit.h"

typedef struct direct_impl {
  fl__chol ch;
  double *sval, *dsq; /* scaled values of K (nnz), D^-1/2 (n) */
} direct_impl;


static void direct_destroy(fl_lin *l) {
  direct_impl *d = l->impl;
  if (!d) return;
  fl__chol_free(&d->ch);
  fl_free(d->sval);
  fl_free(d->dsq);
  fl_free(d);
  l->impl = NULL;
}


static int direct_setup(fl_lin *l, const fl_csr *K) {
  direct_impl *d = fl_calloc(1, sizeof(*d));
  if (!d) return fl_seterr(FL_ERR_NOMEM, "lin direct: out of memory");
  l->impl = d;
  d->sval = fl_malloc((size_t)(K->nnz > 0 ? K->nnz : 1) * sizeof(double));
  d->dsq = fl_malloc((size_t)(K->nrow > 0 ? K->nrow : 1) * sizeof(double));
  if (!d->sval || !d->dsq) return fl_seterr(FL_ERR_NOMEM, "lin direct: out of memory");
  if (fl__chol_start(&d->ch) < 0)
    return fl_seterr(FL_ERR_LIBRARY, "lin direct: cholmod_start failed");
  if (fl__chol_analyze(&d->ch, K) < 0)
    return fl_seterr(fl__cholmod_err(d->ch.cc.status),
                     "lin direct: cholmod_analyze failed (status %d)", d->ch.cc.status);
  return FL_OK;
}


static int direct_solve(fl_lin *l, const fl_csr *K, const double *b, double *x) {
  direct_impl *d = l->impl;
  fl_int n = l->n;
  // unit-diagonal scaling Khat = D^-1/2 K D^-1/2
  for (fl_int i = 0; i < n; i++) {
    double kii = fl_csr_get(K, i, i);
    d->dsq[i] = kii > 0 ? 1.0 / sqrt(kii) : 1.0;
  }
  for (fl_int i = 0; i < n; i++)
    for (fl_int k = K->rowptr[i]; k < K->rowptr[i + 1]; k++)
      d->sval[k] = K->val[k] * d->dsq[i] * d->dsq[K->col[k]];

  double res0 = sqrt(fl__lin_dot(n, b, b));
  fl__lin_record(l, res0, NAN);

  // factor Khat + reg I, growing the shift while CHOLMOD reports not positive definite
  double rel = l->opts.reg > 0 ? l->opts.reg : 1e-12;
  double beta[2] = {rel, 0};
  int ok = 0;
  for (int attempt = 0; attempt <= 8; attempt++) {
    if (fl__chol_factor(&d->ch, K, d->sval, beta[0])) {
      ok = 1;
      break;
    }
    if (d->ch.cc.status < 0)
      return fl_seterr(fl__cholmod_err(d->ch.cc.status),
                       "lin direct: cholmod_factorize failed (status %d)", d->ch.cc.status);
    beta[0] *= 100;
    l->stat.nreg = attempt + 1;
  }
  l->stat.reg_shift = ok ? beta[0] : NAN;
  if (!ok) {
    for (fl_int i = 0; i < n; i++) x[i] = 0;
    l->stat.reason = FL_LIN_BREAKDOWN;
    return FL_OK;
  }

  // solve with reused workspaces, then measure the true residual
  double *bs = l->w + n;
  for (fl_int i = 0; i < n; i++) bs[i] = d->dsq[i] * b[i];
  if (fl__chol_solve(&d->ch, n, bs) < 0)
    return fl_seterr(fl__cholmod_err(d->ch.cc.status),
                     "lin direct: cholmod_solve2 failed (status %d)", d->ch.cc.status);
  const double *y = d->ch.X->x;
  for (fl_int i = 0; i < n; i++) x[i] = d->dsq[i] * y[i];
  double res = fl__lin_residual(K, b, x, l->w);
  l->stat.iters = 1;
  fl__lin_record(l, res, NAN);
  l->stat.reason = isfinite(res) ? FL_LIN_EXACT : FL_LIN_NAN;
  return FL_OK;
}


const fl_lin_ops fl_lin_direct_ops = {"direct", direct_setup, direct_solve, direct_destroy};

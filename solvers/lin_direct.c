/* lin_direct.c: the inner solver "direct": sparse Cholesky (CHOLMOD) of the Newton matrix
 * K = J A^-1 J^T + C, regularized when it is not positive definite.
 *
 * The pattern of K is fixed for a whole NSN solve, so the symbolic analysis (fill-reducing
 * ordering) runs once in setup and each Newton iteration only refactors numerically. A
 * symmetric CSR with both triangles is the CSC of the same matrix; CHOLMOD is told to read
 * its upper triangle (stype = 1), with no copy. When the factorization reports "not positive
 * definite" (redundant rigid contacts make K singular), K + beta I is factored instead with
 * beta = reg * max_i K_ii, grown by 100 per retry (at most 8 retries; CHOLMOD's
 * factorize_p adds the shift without touching K). Records one "iteration" whose residual is
 * the true ||b - K x||.
 */
#include <math.h>
#include <string.h>

#include <cholmod.h>

#include "fl_lin.h"

typedef struct direct_impl {
  cholmod_common cc;
  cholmod_factor *L;
  cholmod_dense *X, *Y, *E; /* solve2 workspaces, reused */
  int started;
} direct_impl;


static void wrap(const fl_csr *K, cholmod_sparse *A) {
  memset(A, 0, sizeof(*A));
  A->nrow = (size_t)K->nrow;
  A->ncol = (size_t)K->ncol;
  A->nzmax = (size_t)K->nnz;
  A->p = K->rowptr;
  A->i = K->col;
  A->x = K->val;
  A->stype = 1;
  A->itype = CHOLMOD_INT;
  A->xtype = CHOLMOD_REAL;
  A->dtype = CHOLMOD_DOUBLE;
  A->sorted = 1;
  A->packed = 1;
}


static void direct_destroy(fl_lin *l) {
  direct_impl *d = l->impl;
  if (!d) return;
  if (d->started) {
    cholmod_free_factor(&d->L, &d->cc);
    cholmod_free_dense(&d->X, &d->cc);
    cholmod_free_dense(&d->Y, &d->cc);
    cholmod_free_dense(&d->E, &d->cc);
    cholmod_finish(&d->cc);
  }
  fl_free(d);
  l->impl = NULL;
}


static int direct_setup(fl_lin *l, const fl_csr *K) {
  direct_impl *d = fl_calloc(1, sizeof(*d));
  if (!d) return fl_seterr(FL_ERR_NOMEM, "lin direct: out of memory");
  l->impl = d;
  if (!cholmod_start(&d->cc)) return fl_seterr(FL_ERR_LIBRARY, "lin direct: cholmod_start failed");
  d->started = 1;
  d->cc.print = 0; /* errors come back as codes, not prints */
  d->cc.quick_return_if_not_posdef = 1;
  cholmod_sparse A;
  wrap(K, &A);
  d->L = cholmod_analyze(&A, &d->cc);
  if (!d->L)
    return fl_seterr(FL_ERR_LIBRARY, "lin direct: cholmod_analyze failed (status %d)",
                     d->cc.status);
  return FL_OK;
}


static int direct_solve(fl_lin *l, const fl_csr *K, const double *b, double *x) {
  direct_impl *d = l->impl;
  fl_int n = l->n;
  cholmod_sparse A;
  wrap(K, &A);

  double res0 = sqrt(fl__lin_dot(n, b, b));
  fl__lin_record(l, res0, NAN);

  // factor K, or K + beta I with a growing shift when K is not positive definite
  double dmax = 0;
  for (fl_int i = 0; i < n; i++) {
    double kii = fl_csr_get(K, i, i);
    if (kii > dmax) dmax = kii;
  }
  if (dmax <= 0) dmax = 1;
  double beta[2] = {0, 0};
  double rel = l->opts.reg > 0 ? l->opts.reg : 1e-12;
  int ok = 0;
  for (int attempt = 0; attempt <= 8; attempt++) {
    d->cc.status = CHOLMOD_OK;
    int rc = cholmod_factorize_p(&A, beta, NULL, 0, d->L, &d->cc);
    if (rc && d->cc.status == CHOLMOD_OK && d->L->minor == (size_t)n) {
      ok = 1;
      break;
    }
    if (d->cc.status < 0)
      return fl_seterr(FL_ERR_LIBRARY, "lin direct: cholmod_factorize failed (status %d)",
                       d->cc.status);
    beta[0] = rel * dmax;
    rel *= 100;
    l->stat.nreg = attempt + 1;
  }
  l->stat.reg_shift = ok ? beta[0] : NAN;
  if (!ok) {
    for (fl_int i = 0; i < n; i++) x[i] = 0;
    l->stat.reason = FL_LIN_BREAKDOWN;
    return FL_OK;
  }

  // solve with reused workspaces, then measure the true residual
  cholmod_dense B;
  memset(&B, 0, sizeof(B));
  B.nrow = (size_t)n;
  B.ncol = 1;
  B.nzmax = (size_t)n;
  B.d = (size_t)n;
  B.x = (void *)b;
  B.xtype = CHOLMOD_REAL;
  B.dtype = CHOLMOD_DOUBLE;
  if (!cholmod_solve2(CHOLMOD_A, d->L, &B, NULL, &d->X, NULL, &d->Y, &d->E, &d->cc))
    return fl_seterr(FL_ERR_LIBRARY, "lin direct: cholmod_solve2 failed (status %d)",
                     d->cc.status);
  memcpy(x, d->X->x, (size_t)n * sizeof(double));
  double res = fl__lin_residual(K, b, x, l->w);
  l->stat.iters = 1;
  fl__lin_record(l, res, NAN);
  l->stat.reason = isfinite(res) ? FL_LIN_EXACT : FL_LIN_NAN;
  return FL_OK;
}


const fl_lin_ops fl_lin_direct_ops = {"direct", direct_setup, direct_solve, direct_destroy};

// SPDX-License-Identifier: Apache-2.0
/* lin_pc.c: the preconditioners M of the Krylov inner solvers (pcg, pcr).
 *
 *   diag   M = diag(K) (entries <= 0 taken as 1): the thesis' Jacobi preconditioner;
 *   block  M = the diagonal blocks of K over a partition of the rows that the caller gives
 *          (fl_lin_opts.block_ptr/block_idx; NSN passes one block of 3 rows per contact and
 *          one row per bilateral constraint). Each block is factored by dense Cholesky when K's
 *          values are set (fl__lin_pc_factor, once per inner solve); a block that is not
 *          numerically positive definite falls back to its diagonal.
 *
 * Positions of the block entries in K are found once (fl__lin_pc_setup), so factoring gathers
 * without searching and nothing is allocated per solve.
 */
#include <math.h>
#include <string.h>

#include "fl_lin.h"

struct fl__lin_pc {
  int block;        /* 0: diagonal */
  fl_int nblock;
  fl_int *ptr;      /* (nblock + 1) rows of block b: idx[ptr[b] .. ptr[b+1]) */
  fl_int *idx;      /* (n) */
  fl_int *foff;     /* (nblock + 1) offset of block b's m x m factor in L and kpos */
  fl_int *kpos;     /* (foff[nblock]) position in K of entry (i, j) of each block, -1 if absent */
  double *L;        /* (foff[nblock]) Cholesky factors, row-major lower triangle */
  unsigned char *ok;/* (nblock) 1 when the block is factored, 0: diagonal fallback */
  double *dinv;     /* (n) 1/K_ii (1 where K_ii <= 0) */
  fl_int *kdiag;    /* (n) position of K_ii, -1 if absent */
  double *t;        /* (max block size) gather buffer */
};


void fl__lin_pc_free(fl_lin *l) {
  fl__lin_pc *pc = l->pc;
  if (!pc) return;
  fl_free(pc->ptr);
  fl_free(pc->idx);
  fl_free(pc->foff);
  fl_free(pc->kpos);
  fl_free(pc->L);
  fl_free(pc->ok);
  fl_free(pc->dinv);
  fl_free(pc->kdiag);
  fl_free(pc->t);
  fl_free(pc);
  l->pc = NULL;
}


/* position of column j in row i of K (binary search), -1 if absent */
static fl_int kfind(const fl_csr *K, fl_int i, fl_int j) {
  fl_int lo = K->rowptr[i], hi = K->rowptr[i + 1] - 1;
  while (lo <= hi) {
    fl_int m = lo + (hi - lo) / 2;
    if (K->col[m] == j) return m;
    if (K->col[m] < j) lo = m + 1;
    else hi = m - 1;
  }
  return -1;
}


int fl__lin_pc_setup(fl_lin *l, const fl_csr *K) {
  const fl_lin_opts *o = &l->opts;
  fl_int n = l->n;
  fl__lin_pc *pc = fl_calloc(1, sizeof(*pc));
  if (!pc) return fl_seterr(FL_ERR_NOMEM, "inner solver: out of memory (preconditioner)");
  l->pc = pc;
  size_t nn = (size_t)(n > 0 ? n : 1);
  pc->dinv = fl_malloc(nn * sizeof(double));
  pc->kdiag = fl_malloc(nn * sizeof(fl_int));
  if (!pc->dinv || !pc->kdiag) goto nomem;
  for (fl_int i = 0; i < n; i++) pc->kdiag[i] = kfind(K, i, i);
  if (o->pc != FL_LIN_PC_BLOCK) return FL_OK;

  // the partition: the caller's, or every row alone
  pc->block = 1;
  fl_int nb = o->block_ptr ? o->nblock : n;
  pc->nblock = nb;
  pc->ptr = fl_malloc(((size_t)nb + 1) * sizeof(fl_int));
  pc->idx = fl_malloc(nn * sizeof(fl_int));
  pc->foff = fl_malloc(((size_t)nb + 1) * sizeof(fl_int));
  pc->ok = fl_malloc((size_t)nb + 1);
  if (!pc->ptr || !pc->idx || !pc->foff || !pc->ok) goto nomem;
  if (o->block_ptr) {
    if (o->block_ptr[0] != 0 || o->block_ptr[nb] != n)
      return fl_seterr(FL_ERR_INVAL, "inner solver: the blocks cover %d rows, K has %d",
                       (int)(o->block_ptr[nb] - o->block_ptr[0]), (int)n);
    memcpy(pc->ptr, o->block_ptr, ((size_t)nb + 1) * sizeof(fl_int));
    memcpy(pc->idx, o->block_idx, (size_t)n * sizeof(fl_int));
  } else {
    for (fl_int b = 0; b <= nb; b++) pc->ptr[b] = b;
    for (fl_int i = 0; i < n; i++) pc->idx[i] = i;
  }
  fl_int mmax = 1;
  pc->foff[0] = 0;
  for (fl_int b = 0; b < nb; b++) {
    fl_int m = pc->ptr[b + 1] - pc->ptr[b];
    if (m < 0 || m > FL_LIN_BLOCK_MAX)
      return fl_seterr(FL_ERR_INVAL, "inner solver: block %d has %d rows (at most %d)", (int)b,
                       (int)m, FL_LIN_BLOCK_MAX);
    if (m > mmax) mmax = m;
    pc->foff[b + 1] = pc->foff[b] + m * m;
  }
  for (fl_int k = 0; k < n; k++)
    if (pc->idx[k] < 0 || pc->idx[k] >= n)
      return fl_seterr(FL_ERR_INVAL, "inner solver: block row %d out of range", (int)pc->idx[k]);
  size_t nf = (size_t)pc->foff[nb] + 1;
  pc->kpos = fl_malloc(nf * sizeof(fl_int));
  pc->L = fl_malloc(nf * sizeof(double));
  pc->t = fl_malloc((size_t)mmax * sizeof(double));
  if (!pc->kpos || !pc->L || !pc->t) goto nomem;
  for (fl_int b = 0; b < nb; b++) {
    const fl_int *ix = pc->idx + pc->ptr[b];
    fl_int m = pc->ptr[b + 1] - pc->ptr[b];
    for (fl_int i = 0; i < m; i++)
      for (fl_int j = 0; j < m; j++) pc->kpos[pc->foff[b] + i * m + j] = kfind(K, ix[i], ix[j]);
  }
  return FL_OK;
nomem:
  return fl_seterr(FL_ERR_NOMEM, "inner solver: out of memory (preconditioner)");
}


void fl__lin_pc_factor(fl_lin *l, const fl_csr *K) {
  fl__lin_pc *pc = l->pc;
  for (fl_int i = 0; i < l->n; i++) {
    double d = pc->kdiag[i] >= 0 ? K->val[pc->kdiag[i]] : 0;
    pc->dinv[i] = d > 0 ? 1.0 / d : 1.0;
  }
  if (!pc->block) return;
  for (fl_int b = 0; b < pc->nblock; b++) {
    fl_int m = pc->ptr[b + 1] - pc->ptr[b];
    double *A = pc->L + pc->foff[b];
    const fl_int *kp = pc->kpos + pc->foff[b];
    // lower triangle, row-major; Cholesky with a relative pivot floor
    int ok = 1;
    for (fl_int j = 0; j < m && ok; j++) {
      for (fl_int i = j; i < m; i++) A[i * m + j] = kp[i * m + j] >= 0 ? K->val[kp[i * m + j]] : 0;
      double d = A[j * m + j], d0 = d;
      for (fl_int k = 0; k < j; k++) d -= A[j * m + k] * A[j * m + k];
      if (!(d > 1e-12 * d0)) {
        ok = 0;
        break;
      }
      d = sqrt(d);
      A[j * m + j] = d;
      for (fl_int i = j + 1; i < m; i++) {
        double s = A[i * m + j];
        for (fl_int k = 0; k < j; k++) s -= A[i * m + k] * A[j * m + k];
        A[i * m + j] = s / d;
      }
    }
    pc->ok[b] = (unsigned char)ok;
  }
}


void fl__lin_pc_apply(const fl_lin *l, const double *r, double *z) {
  const fl__lin_pc *pc = l->pc;
  if (!pc->block) {
    for (fl_int i = 0; i < l->n; i++) z[i] = pc->dinv[i] * r[i];
    return;
  }
  double *t = pc->t;
  for (fl_int b = 0; b < pc->nblock; b++) {
    const fl_int *ix = pc->idx + pc->ptr[b];
    fl_int m = pc->ptr[b + 1] - pc->ptr[b];
    if (!pc->ok[b]) {
      for (fl_int i = 0; i < m; i++) z[ix[i]] = pc->dinv[ix[i]] * r[ix[i]];
      continue;
    }
    const double *L = pc->L + pc->foff[b];
    for (fl_int i = 0; i < m; i++) {
      double s = r[ix[i]];
      for (fl_int k = 0; k < i; k++) s -= L[i * m + k] * t[k];
      t[i] = s / L[i * m + i];
    }
    for (fl_int i = m - 1; i >= 0; i--) {
      double s = t[i];
      for (fl_int k = i + 1; k < m; k++) s -= L[k * m + i] * t[k];
      t[i] = s / L[i * m + i];
    }
    for (fl_int i = 0; i < m; i++) z[ix[i]] = t[i];
  }
}

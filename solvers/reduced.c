// SPDX-License-Identifier: Apache-2.0
/* reduced.c: the reduced Newton matrix of pnewton and ipm (reduced.h). */
#include <stdlib.h>
#include <string.h>

#include "reduced.h"


static int cmp_int(const void *a, const void *b) {
  fl_int x = *(const fl_int *)a, y = *(const fl_int *)b;
  return (x > y) - (x < y);
}


/* position of entry (i, j) in K, -1 if absent */
static fl_int kfind(const fl_csr *K, fl_int i, fl_int j) {
  fl_int lo = K->rowptr[i], hi = K->rowptr[i + 1] - 1;
  while (lo <= hi) {
    fl_int m = (lo + hi) / 2;
    if (K->col[m] == j) return m;
    if (K->col[m] < j) lo = m + 1;
    else hi = m - 1;
  }
  return -1;
}


int fl__reduced_build(fl_reduced *R, const fl_problem *p, double max_b, const char *who,
                      const char *opt) {
  fl_int nc = p->nc, nv = p->nv;
  const fl_csr *J = p->J, *A = p->A;
  R->nc = nc, R->nv = nv;
  R->cptr = fl_malloc(((size_t)nc + 1) * sizeof(fl_int));
  R->kptr = fl_malloc(((size_t)nc + 1) * sizeof(fl_int));
  if (!R->cptr || !R->kptr) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", who);
  // the columns each contact touches, and J's dense 3 x ncols block
  R->cptr[0] = 0;
  for (fl_int i = 0; i < nc; i++) {
    fl_int m = 0;
    for (int a = 0; a < 3; a++) m += J->rowptr[3 * i + a + 1] - J->rowptr[3 * i + a];
    R->cptr[i + 1] = R->cptr[i] + m; // an upper bound first, compacted below
  }
  R->ccol = fl_malloc((size_t)(R->cptr[nc] > 0 ? R->cptr[nc] : 1) * sizeof(fl_int));
  if (!R->ccol) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", who);
  fl_int at = 0;
  for (fl_int i = 0; i < nc; i++) {
    fl_int b0 = at;
    for (int a = 0; a < 3; a++)
      for (fl_int k = J->rowptr[3 * i + a]; k < J->rowptr[3 * i + a + 1]; k++)
        R->ccol[at++] = J->col[k];
    qsort(R->ccol + b0, (size_t)(at - b0), sizeof(fl_int), cmp_int);
    fl_int m = b0;
    for (fl_int k = b0; k < at; k++)
      if (k == b0 || R->ccol[k] != R->ccol[m - 1]) R->ccol[m++] = R->ccol[k];
    at = m;
    R->cptr[i] = b0;
  }
  R->cptr[nc] = at;
  R->jblk = fl_calloc((size_t)(3 * (at > 0 ? at : 1)), sizeof(double));
  if (!R->jblk) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", who);
  fl_int mmax = 1;
  for (fl_int i = 0; i < nc; i++)
    if (R->cptr[i + 1] - R->cptr[i] > mmax) mmax = R->cptr[i + 1] - R->cptr[i];
  R->dj = fl_malloc((size_t)(3 * mmax) * sizeof(double));
  if (!R->dj) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", who);
  R->kptr[0] = 0;
  for (fl_int i = 0; i < nc; i++) {
    fl_int c0 = R->cptr[i], m = R->cptr[i + 1] - c0;
    for (int a = 0; a < 3; a++)
      for (fl_int k = J->rowptr[3 * i + a]; k < J->rowptr[3 * i + a + 1]; k++)
        for (fl_int c = 0; c < m; c++)
          if (R->ccol[c0 + c] == J->col[k]) R->jblk[3 * c0 + a * m + c] += J->val[k];
    R->kptr[i + 1] = R->kptr[i] + m * m;
  }
  // K's pattern: A's and every contact's column pairs
  size_t nt = (size_t)A->nnz + (size_t)R->kptr[nc];
  if ((double)nt * 28 > max_b) // the triplets (16 bytes each) and K (12 per entry)
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: %s: the reduced matrix alone would take %.3g GB to "
                     "assemble (%zu entries), above %s = %g", who, p->name,
                     (double)nt * 28 / 1e9, nt, opt, max_b / 1e9);
  fl_int *ti = fl_malloc(nt * sizeof(fl_int)), *tj = fl_malloc(nt * sizeof(fl_int));
  double *tv = fl_calloc(nt, sizeof(double));
  R->kpos = fl_malloc((size_t)(R->kptr[nc] > 0 ? R->kptr[nc] : 1) * sizeof(fl_int));
  R->apos = fl_malloc((size_t)(A->nnz > 0 ? A->nnz : 1) * sizeof(fl_int));
  int rc = (!ti || !tj || !tv || !R->kpos || !R->apos)
             ? fl_seterr(FL_ERR_NOMEM, "%s: out of memory", who) : FL_OK;
  if (rc == FL_OK) {
    size_t t = 0;
    for (fl_int i = 0; i < nv; i++)
      for (fl_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) ti[t] = i, tj[t++] = A->col[k];
    for (fl_int i = 0; i < nc; i++) {
      fl_int c0 = R->cptr[i], m = R->cptr[i + 1] - c0;
      for (fl_int a = 0; a < m; a++)
        for (fl_int b = 0; b < m; b++) ti[t] = R->ccol[c0 + a], tj[t++] = R->ccol[c0 + b];
    }
    rc = fl_csr_from_triplets(nv, nv, (fl_int)t, ti, tj, tv, &R->K);
  }
  fl_free(ti);
  fl_free(tj);
  fl_free(tv);
  FL_TRY(rc);
  for (fl_int i = 0; i < nv; i++)
    for (fl_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) R->apos[k] = kfind(R->K, i, A->col[k]);
  for (fl_int i = 0; i < nc; i++) {
    fl_int c0 = R->cptr[i], m = R->cptr[i + 1] - c0;
    for (fl_int a = 0; a < m; a++)
      for (fl_int b = 0; b < m; b++)
        R->kpos[R->kptr[i] + a * m + b] = kfind(R->K, R->ccol[c0 + a], R->ccol[c0 + b]);
  }
  return FL_OK;
}


void fl__reduced_reset(fl_reduced *R, const fl_csr *A) {
  fl_csr *K = R->K;
  memset(K->val, 0, (size_t)K->nnz * sizeof(double));
  for (fl_int k = 0; k < A->nnz; k++) K->val[R->apos[k]] += A->val[k];
}


void fl__reduced_add(fl_reduced *R, fl_int i, const double M[9]) {
  fl_int c0 = R->cptr[i], m = R->cptr[i + 1] - c0;
  const double *Jb = R->jblk + 3 * c0;
  const fl_int *kp = R->kpos + R->kptr[i];
  double *MJ = R->dj, *Kv = R->K->val;
  for (int a = 0; a < 3; a++)
    for (fl_int c = 0; c < m; c++)
      MJ[a * m + c] = M[3 * a] * Jb[c] + M[3 * a + 1] * Jb[m + c] + M[3 * a + 2] * Jb[2 * m + c];
  for (fl_int x = 0; x < m; x++) {
    double j0 = Jb[x], j1 = Jb[m + x], j2 = Jb[2 * m + x];
    for (fl_int y = 0; y < m; y++)
      Kv[kp[x * m + y]] += j0 * MJ[y] + j1 * MJ[m + y] + j2 * MJ[2 * m + y];
  }
}


void fl__reduced_free(fl_reduced *R) {
  if (!R) return;
  fl_csr_free(R->K);
  fl_free(R->apos);
  fl_free(R->cptr);
  fl_free(R->ccol);
  fl_free(R->jblk);
  fl_free(R->kptr);
  fl_free(R->kpos);
  fl_free(R->dj);
  memset(R, 0, sizeof(*R));
}

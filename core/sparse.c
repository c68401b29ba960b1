// SPDX-License-Identifier: Apache-2.0
/* sparse.c: CSR matrices (CSC is the CSR of the transpose) and 3x3 block-sparse rows. */
#include <stdlib.h>
#include <string.h>

#include "fl_core.h"

int fl_csr_alloc(fl_int nrow, fl_int ncol, fl_int nnz, fl_csr **out) {
  *out = NULL;
  if (nrow < 0 || ncol < 0 || nnz < 0) {
    return fl_seterr(FL_ERR_INVAL, "sparse matrix: negative size %d x %d, nnz %d", nrow, ncol,
                     nnz);
  }
  fl_csr *a = fl_calloc(1, sizeof *a);
  if (!a) return fl_seterr(FL_ERR_NOMEM, "sparse matrix: out of memory");
  a->nrow = nrow;
  a->ncol = ncol;
  a->nnz = nnz;
  a->rowptr = fl_calloc((size_t)nrow + 1, sizeof(fl_int));
  a->col = fl_malloc((size_t)nnz * sizeof(fl_int));
  a->val = fl_malloc((size_t)nnz * sizeof(double));
  if (!a->rowptr || !a->col || !a->val) {
    fl_csr_free(a);
    return fl_seterr(FL_ERR_NOMEM, "sparse matrix %d x %d with %d entries: out of memory", nrow,
                     ncol, nnz);
  }
  *out = a;
  return FL_OK;
}


void fl_csr_free(fl_csr *a) {
  if (!a) return;
  fl_free(a->rowptr);
  fl_free(a->col);
  fl_free(a->val);
  fl_free(a);
}


// sort each row by column and sum duplicates, in place (insertion sort: rows are short)
static void csr_canonicalize(fl_csr *a) {
  fl_int w = 0;
  for (fl_int r = 0; r < a->nrow; r++) {
    fl_int s = a->rowptr[r], e = a->rowptr[r + 1];
    for (fl_int k = s + 1; k < e; k++) {
      fl_int c = a->col[k];
      double v = a->val[k];
      fl_int m = k - 1;
      while (m >= s && a->col[m] > c) {
        a->col[m + 1] = a->col[m];
        a->val[m + 1] = a->val[m];
        m--;
      }
      a->col[m + 1] = c;
      a->val[m + 1] = v;
    }
    fl_int start = w;
    for (fl_int k = s; k < e; k++) {
      if (w > start && a->col[w - 1] == a->col[k]) {
        a->val[w - 1] += a->val[k];
      } else {
        a->col[w] = a->col[k];
        a->val[w] = a->val[k];
        w++;
      }
    }
    a->rowptr[r] = start;
  }
  a->rowptr[a->nrow] = w;
  a->nnz = w;
}


int fl_csr_from_triplets(fl_int nrow, fl_int ncol, fl_int nt, const fl_int *i, const fl_int *j,
                         const double *v, fl_csr **out) {
  *out = NULL;
  for (fl_int k = 0; k < nt; k++) {
    if (i[k] < 0 || i[k] >= nrow || j[k] < 0 || j[k] >= ncol) {
      return fl_seterr(FL_ERR_INVAL, "triplet %d: index (%d, %d) outside %d x %d", k, i[k], j[k],
                       nrow, ncol);
    }
  }
  fl_csr *a;
  FL_TRY(fl_csr_alloc(nrow, ncol, nt, &a));
  // count, prefix sum, scatter
  for (fl_int k = 0; k < nt; k++) a->rowptr[i[k] + 1]++;
  for (fl_int r = 0; r < nrow; r++) a->rowptr[r + 1] += a->rowptr[r];
  fl_int *next = fl_malloc((size_t)(nrow + 1) * sizeof(fl_int));
  if (!next) {
    fl_csr_free(a);
    return fl_seterr(FL_ERR_NOMEM, "triplets: out of memory");
  }
  memcpy(next, a->rowptr, (size_t)(nrow + 1) * sizeof(fl_int));
  for (fl_int k = 0; k < nt; k++) {
    fl_int p = next[i[k]]++;
    a->col[p] = j[k];
    a->val[p] = v[k];
  }
  fl_free(next);
  csr_canonicalize(a);
  *out = a;
  return FL_OK;
}


int fl_csr_from_csc(fl_int nrow, fl_int ncol, const fl_int *colptr, const fl_int *row,
                    const double *val, fl_csr **out) {
  // the CSC arrays are the CSR of the transpose: transpose that
  fl_csr t = {ncol, nrow, colptr[ncol], (fl_int *)colptr, (fl_int *)row, (double *)val};
  return fl_csr_transpose(&t, out);
}


int fl_csr_transpose(const fl_csr *a, fl_csr **out) {
  fl_csr *t;
  *out = NULL;
  FL_TRY(fl_csr_alloc(a->ncol, a->nrow, a->nnz, &t));
  for (fl_int k = 0; k < a->rowptr[a->nrow]; k++) t->rowptr[a->col[k] + 1]++;
  for (fl_int c = 0; c < a->ncol; c++) t->rowptr[c + 1] += t->rowptr[c];
  fl_int *next = fl_malloc((size_t)(a->ncol + 1) * sizeof(fl_int));
  if (!next) {
    fl_csr_free(t);
    return fl_seterr(FL_ERR_NOMEM, "transpose: out of memory");
  }
  memcpy(next, t->rowptr, (size_t)(a->ncol + 1) * sizeof(fl_int));
  // rows visited in order, so each output row comes out sorted
  for (fl_int r = 0; r < a->nrow; r++) {
    for (fl_int k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) {
      fl_int p = next[a->col[k]]++;
      t->col[p] = r;
      t->val[p] = a->val[k];
    }
  }
  fl_free(next);
  t->nnz = t->rowptr[t->nrow];
  *out = t;
  return FL_OK;
}


int fl_csr_copy(const fl_csr *a, fl_csr **out) {
  fl_csr *c;
  *out = NULL;
  FL_TRY(fl_csr_alloc(a->nrow, a->ncol, a->nnz, &c));
  memcpy(c->rowptr, a->rowptr, (size_t)(a->nrow + 1) * sizeof(fl_int));
  memcpy(c->col, a->col, (size_t)a->nnz * sizeof(fl_int));
  memcpy(c->val, a->val, (size_t)a->nnz * sizeof(double));
  *out = c;
  return FL_OK;
}


void fl_csr_gemv(const fl_csr *a, double alpha, const double *x, double beta, double *y) {
  const fl_int *rp = a->rowptr, *col = a->col;
  const double *val = a->val;
  for (fl_int r = 0; r < a->nrow; r++) {
    double s = 0;
    fl_int k = rp[r], ke = rp[r + 1];
    // four terms a pass, added in column order as one at a time
    for (; k + 3 < ke; k += 4) {
      s += val[k] * x[col[k]];
      s += val[k + 1] * x[col[k + 1]];
      s += val[k + 2] * x[col[k + 2]];
      s += val[k + 3] * x[col[k + 3]];
    }
    for (; k < ke; k++) s += val[k] * x[col[k]];
    y[r] = alpha * s + (beta == 0 ? 0 : beta * y[r]);
  }
}


void fl_csr_gemtv(const fl_csr *a, double alpha, const double *x, double beta, double *y) {
  for (fl_int c = 0; c < a->ncol; c++) y[c] = (beta == 0 ? 0 : beta * y[c]);
  const fl_int *rp = a->rowptr, *col = a->col;
  const double *val = a->val;
  for (fl_int r = 0; r < a->nrow; r++) {
    double xr = alpha * x[r];
    if (xr == 0) continue;
    fl_int k = rp[r], ke = rp[r + 1];
    // four updates a pass, in column order as one at a time (a repeated column too)
    for (; k + 3 < ke; k += 4) {
      y[col[k]] += val[k] * xr;
      y[col[k + 1]] += val[k + 1] * xr;
      y[col[k + 2]] += val[k + 2] * xr;
      y[col[k + 3]] += val[k + 3] * xr;
    }
    for (; k < ke; k++) y[col[k]] += val[k] * xr;
  }
}


double fl_csr_get(const fl_csr *a, fl_int i, fl_int j) {
  fl_int lo = a->rowptr[i], hi = a->rowptr[i + 1] - 1;
  while (lo <= hi) {
    fl_int m = lo + (hi - lo) / 2;
    if (a->col[m] == j) return a->val[m];
    if (a->col[m] < j) {
      lo = m + 1;
    } else {
      hi = m - 1;
    }
  }
  return 0;
}


int fl_csr_matmul(const fl_csr *a, const fl_csr *b, fl_csr **out) {
  *out = NULL;
  if (a->ncol != b->nrow) {
    return fl_seterr(FL_ERR_INVAL, "matmul: %d x %d times %d x %d", a->nrow, a->ncol, b->nrow,
                     b->ncol);
  }
  // Gustavson: a dense marker row, two passes (count, fill)
  fl_int *mark = fl_malloc((size_t)(b->ncol > 0 ? b->ncol : 1) * sizeof(fl_int));
  double *acc = fl_calloc((size_t)(b->ncol > 0 ? b->ncol : 1), sizeof(double));
  fl_int *rowptr = fl_calloc((size_t)a->nrow + 1, sizeof(fl_int));
  if (!mark || !acc || !rowptr) {
    fl_free(mark);
    fl_free(acc);
    fl_free(rowptr);
    return fl_seterr(FL_ERR_NOMEM, "matmul: out of memory");
  }
  for (fl_int c = 0; c < b->ncol; c++) mark[c] = -1;
  long nnz = 0;
  for (fl_int r = 0; r < a->nrow; r++) {
    for (fl_int k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) {
      fl_int m = a->col[k];
      for (fl_int l = b->rowptr[m]; l < b->rowptr[m + 1]; l++) {
        if (mark[b->col[l]] != r) {
          mark[b->col[l]] = r;
          nnz++;
        }
      }
    }
    rowptr[r + 1] = (fl_int)nnz;
  }
  if (nnz > INT32_MAX) {
    fl_free(mark);
    fl_free(acc);
    fl_free(rowptr);
    return fl_seterr(FL_ERR_NOMEM, "matmul: product has %ld entries (index type limit)", nnz);
  }
  fl_csr *c;
  int rc = fl_csr_alloc(a->nrow, b->ncol, (fl_int)nnz, &c);
  if (rc < 0) {
    fl_free(mark);
    fl_free(acc);
    fl_free(rowptr);
    return rc;
  }
  memcpy(c->rowptr, rowptr, (size_t)(a->nrow + 1) * sizeof(fl_int));
  for (fl_int col = 0; col < b->ncol; col++) mark[col] = -1;
  for (fl_int r = 0; r < a->nrow; r++) {
    fl_int w = c->rowptr[r];
    for (fl_int k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) {
      fl_int m = a->col[k];
      for (fl_int l = b->rowptr[m]; l < b->rowptr[m + 1]; l++) {
        fl_int j = b->col[l];
        if (mark[j] != r) {
          mark[j] = r;
          c->col[w++] = j;
        }
        acc[j] += a->val[k] * b->val[l];
      }
    }
    for (fl_int p = c->rowptr[r]; p < c->rowptr[r + 1]; p++) {
      c->val[p] = acc[c->col[p]];
      acc[c->col[p]] = 0;
    }
  }
  fl_free(mark);
  fl_free(acc);
  fl_free(rowptr);
  csr_canonicalize(c);
  *out = c;
  return FL_OK;
}


//---- 3x3 block-sparse rows ----

int fl_bsr3_from_csr(const fl_csr *a, fl_bsr3 **out) {
  *out = NULL;
  if (a->nrow % 3 || a->ncol % 3) {
    return fl_seterr(FL_ERR_INVAL, "BSR3: %d x %d is not made of 3x3 blocks", a->nrow, a->ncol);
  }
  fl_int nbr = a->nrow / 3, nbc = a->ncol / 3;
  fl_bsr3 *b = fl_calloc(1, sizeof *b);
  fl_int *mark = fl_malloc((size_t)(nbc > 0 ? nbc : 1) * sizeof(fl_int));
  if (!b || !mark) goto nomem;
  b->nbrow = nbr;
  b->nbcol = nbc;
  b->rowptr = fl_calloc((size_t)nbr + 1, sizeof(fl_int));
  if (!b->rowptr) goto nomem;
  for (fl_int c = 0; c < nbc; c++) mark[c] = -1;
  // count blocks per block row
  for (fl_int I = 0; I < nbr; I++) {
    fl_int cnt = 0;
    for (fl_int r = 3 * I; r < 3 * I + 3; r++) {
      for (fl_int k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) {
        fl_int J = a->col[k] / 3;
        if (mark[J] != I) {
          mark[J] = I;
          cnt++;
        }
      }
    }
    b->rowptr[I + 1] = b->rowptr[I] + cnt;
  }
  b->nnzb = b->rowptr[nbr];
  b->col = fl_malloc((size_t)(b->nnzb > 0 ? b->nnzb : 1) * sizeof(fl_int));
  b->val = fl_calloc((size_t)(b->nnzb > 0 ? b->nnzb : 1) * 9, sizeof(double));
  if (!b->col || !b->val) goto nomem;
  // block columns of each row, sorted; then scatter values
  for (fl_int c = 0; c < nbc; c++) mark[c] = -1;
  for (fl_int I = 0; I < nbr; I++) {
    fl_int w = b->rowptr[I];
    for (fl_int r = 3 * I; r < 3 * I + 3; r++) {
      for (fl_int k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) {
        fl_int J = a->col[k] / 3;
        if (mark[J] != I) {
          mark[J] = I;
          b->col[w++] = J;
        }
      }
    }
    fl_int s = b->rowptr[I], e = b->rowptr[I + 1];
    for (fl_int p = s + 1; p < e; p++) {
      fl_int c = b->col[p], m = p - 1;
      while (m >= s && b->col[m] > c) {
        b->col[m + 1] = b->col[m];
        m--;
      }
      b->col[m + 1] = c;
    }
    for (fl_int r = 3 * I; r < 3 * I + 3; r++) {
      for (fl_int k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) {
        fl_int J = a->col[k] / 3;
        // binary search for the block
        fl_int lo = s, hi = e - 1;
        while (lo < hi) {
          fl_int m = (lo + hi) / 2;
          if (b->col[m] < J) {
            lo = m + 1;
          } else {
            hi = m;
          }
        }
        b->val[9 * lo + 3 * (r - 3 * I) + (a->col[k] - 3 * J)] += a->val[k];
      }
    }
  }
  fl_free(mark);
  *out = b;
  return FL_OK;
nomem:
  fl_free(mark);
  fl_bsr3_free(b);
  return fl_seterr(FL_ERR_NOMEM, "BSR3: out of memory");
}


void fl_bsr3_free(fl_bsr3 *a) {
  if (!a) return;
  fl_free(a->rowptr);
  fl_free(a->col);
  fl_free(a->val);
  fl_free(a);
}


void fl_bsr3_gemv(const fl_bsr3 *a, const double *x, double beta, double *y) {
  for (fl_int I = 0; I < a->nbrow; I++) {
    double s[3] = {0, 0, 0};
    for (fl_int k = a->rowptr[I]; k < a->rowptr[I + 1]; k++) {
      const double *B = a->val + 9 * k, *xj = x + 3 * a->col[k];
      for (int r = 0; r < 3; r++) s[r] += B[3 * r] * xj[0] + B[3 * r + 1] * xj[1] + B[3 * r + 2] * xj[2];
    }
    for (int r = 0; r < 3; r++) y[3 * I + r] = s[r] + (beta == 0 ? 0 : beta * y[3 * I + r]);
  }
}


const double *fl_bsr3_block(const fl_bsr3 *a, fl_int I, fl_int J) {
  fl_int lo = a->rowptr[I], hi = a->rowptr[I + 1] - 1;
  while (lo <= hi) {
    fl_int m = lo + (hi - lo) / 2;
    if (a->col[m] == J) return a->val + 9 * m;
    if (a->col[m] < J) {
      lo = m + 1;
    } else {
      hi = m - 1;
    }
  }
  return NULL;
}

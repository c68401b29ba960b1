// SPDX-License-Identifier: Apache-2.0
/* sparse_lu.h: a sparse LU (KLU) for a sequence of matrices of one pattern, as Newton
 * iterations produce them: the ordering once per pattern, the pivot sequence of the last full
 * factorization reused (klu_refactor) while the reciprocal condition estimate stays above
 * FL_SPLU_RCOND_MIN, a full (pivoting) factorization otherwise. The rows are not rescaled
 * (KLU's scale = -1): callers pass rows of comparable size. */
#ifndef FL_SPARSE_LU_H
#define FL_SPARSE_LU_H

#include "../core/fl_core.h"

#define FL_SPLU_RCOND_MIN 1e-12

typedef struct fl_splu fl_splu;

/* Solves G x = b where (ptr, idx, val) is G stored by rows (CSR; n x n, int indices), i.e. G^T
 * by columns. *lu is created on first use (NULL in) and holds the ordering for this pattern:
 * free it (fl_splu_free) when the pattern changes. b and x are (n) and may alias. Returns 0, or
 * -1 when G is singular to working precision or x is not finite (x is then undefined), or
 * FL_ERR_NOMEM. */
int fl_splu_solve_rows(fl_splu **lu, fl_int n, const fl_int *ptr, const fl_int *idx,
                       const double *val, const double *b, double *x);

/* Frees *lu and sets it to NULL (NULL-safe). */
void fl_splu_free(fl_splu **lu);

#endif

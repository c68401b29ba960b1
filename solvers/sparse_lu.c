// SPDX-License-Identifier: Apache-2.0
/* sparse_lu.c: KLU for repeated Newton systems of one pattern (sparse_lu.h).
 *
 * KLU (left-looking, no BLAS) has a small fixed cost per factorization, which is what the
 * Alart-Curnier Newton iterations of prox's inner solves pay many times on systems of a few
 * hundred rows: on Capsules-i101-404, prox takes 2.7x fewer instructions than with UMFPACK
 * (docs/benchmark.md). klu_refactor keeps the previous pivots, so it is checked with the
 * condition estimate and redone with pivoting when that is poor. */
#include <math.h>
#include <string.h>

#include <klu.h>

#include "sparse_lu.h"

struct fl_splu {
  klu_common kc;
  klu_symbolic *sym;
  klu_numeric *num;
  fl_int n;
};


void fl_splu_free(fl_splu **lu) {
  if (!lu || !*lu) return;
  fl_splu *s = *lu;
  if (s->num) klu_free_numeric(&s->num, &s->kc);
  if (s->sym) klu_free_symbolic(&s->sym, &s->kc);
  fl_free(s);
  *lu = NULL;
}


int fl_splu_solve_rows(fl_splu **lu, fl_int n, const fl_int *ptr, const fl_int *idx,
                       const double *val, const double *b, double *x) {
  fl_splu *s = *lu;
  if (!s) {
    s = fl_calloc(1, sizeof(*s));
    if (!s) return fl_seterr(FL_ERR_NOMEM, "sparse LU: out of memory");
    *lu = s;
    klu_defaults(&s->kc);
    // no row scaling and no checks of the matrix (scale = -1): the Alart-Curnier rows come
    // scaled by rho = 1/W_ii, and the scaling cost 9 % of prox's instructions on
    // Capsules-i101-404 (the pivots and iterations are the same)
    s->kc.scale = -1;
    s->n = n;
    // KLU reads columns: the CSR arrays are G^T's columns (solved below with klu_tsolve)
    s->sym = klu_analyze(n, (int *)ptr, (int *)idx, &s->kc);
    if (!s->sym) return -1;
  }
  int ok = 0;
  if (s->num) {
    ok = klu_refactor((int *)ptr, (int *)idx, (double *)val, s->sym, s->num, &s->kc) &&
         klu_rcond(s->sym, s->num, &s->kc) && s->kc.rcond > FL_SPLU_RCOND_MIN;
  }
  if (!ok) {
    if (s->num) klu_free_numeric(&s->num, &s->kc);
    s->num = klu_factor((int *)ptr, (int *)idx, (double *)val, s->sym, &s->kc);
    if (!s->num || s->kc.status != KLU_OK) {
      if (s->num) klu_free_numeric(&s->num, &s->kc);
      return -1;
    }
  }
  if (x != b) memcpy(x, b, (size_t)n * sizeof(double));
  if (!klu_tsolve(s->sym, s->num, n, 1, x, &s->kc)) return -1;
  for (fl_int r = 0; r < n; r++)
    if (!isfinite(x[r])) return -1;
  return 0;
}

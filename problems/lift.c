// SPDX-License-Identifier: Apache-2.0
/* lift.c: a local problem (W, q, mu) as an equivalent global one (docs/lift.md).
 *
 * W is symmetric positive semidefinite for every local problem that comes from dynamics
 * (W = H M^-1 H^T, plus any regularization), often singular (more contact rows than dofs).
 * LAPACK's pivoted Cholesky (dpstrf, complete diagonal pivoting with rank detection) gives
 *
 *     P^T W P = L L^T + S,     L (n x r) lower trapezoidal,  S the unfactored Schur complement,
 *
 * and stops at the first pivot <= tol = n u max_i W_ii (LAPACK's default), so every entry of S
 * (PSD for PSD W) is <= tol. With C = P L the global problem
 *
 *     A = I_r (one clique),  J = C (3nc x r),  v* = v0 = 0,  b = q,  phi0 = 0, rigid, dt = 1
 *
 * has J A^-1 J^T = C C^T = W - P S P^T, so u = J v + b = W gamma + q - P S P^T gamma at the
 * balance v = J^T gamma: the same contact problem up to the dropped S. J A^-1 J^T is
 * symmetric, so only the symmetric part of W is lifted; a skew part (some FCLIB files store W
 * with one) is the lift's error together with S. Both are measured after the lift (one
 * dsyrk): psd_error = max |sym(W) - C C^T| (round-off and S) and exactness = max |W - C C^T|,
 * relative to max |W_ij|. A symmetric part that is not PSD to FL_LIFT_MAX_ERROR cannot be
 * written as J A^-1 J^T and is refused.
 *
 * CHOLMOD (used for A elsewhere) factors SPD matrices without pivoting and detects no rank, so
 * the lift is dense: O(n^2) memory, O(n r^2) flops for the factorization and O(n^2 r) for the
 * exactness check, n = 3 nc.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fl_problem.h"

/* LAPACK / BLAS (Fortran interfaces) */
extern void dpstrf_(const char *uplo, const int *n, double *a, const int *lda, int *piv,
                    int *rank, const double *tol, double *work, int *info);
extern void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k,
                   const double *alpha, const double *a, const int *lda, const double *beta,
                   double *c, const int *ldc);


int fl_problem_lift_local(const fl_problem *local, fl_problem **global, fl_lift_info *info) {
  if (global) *global = NULL;
  if (info) {
    info->rank = -1;
    info->exactness = info->asymmetry = info->psd_error = NAN;
  }
  if (!local || !global)
    return fl_seterr(FL_ERR_INVAL, "fl_problem_lift_local: NULL argument");
  const char *nm = local->name;
  if (local->kind != FL_PROBLEM_LOCAL || !local->W || !local->q)
    return fl_seterr(FL_ERR_INVAL,
                     "fl_problem_lift_local: problem %s is not a local problem with W and q", nm);
  fl_int nc = local->nc;
  if (nc > FL_LIFT_MAX_CONTACTS)
    return fl_seterr(FL_ERR_UNSUPPORTED,
                     "fl_problem_lift_local: problem %s has %d contacts; the dense lift takes at "
                     "most %d (3 nc x 3 nc dense matrices)", nm, (int)nc, FL_LIFT_MAX_CONTACTS);
  int n = 3 * (int)nc;
  const fl_csr *W = local->W;
  if (W->nrow != n || W->ncol != n)
    return fl_seterr(FL_ERR_FORMAT, "fl_problem_lift_local: problem %s: W is %d x %d, expected %d x %d",
                     nm, (int)W->nrow, (int)W->ncol, n, n);

  size_t nn = (size_t)n * (size_t)n;
  double *S = fl_calloc(nn + 1, sizeof(double));   /* symmetrized W, factored in place */
  double *C = fl_calloc(nn + 1, sizeof(double));   /* C = P L (n x r, column-major), then C C^T */
  double *work = fl_malloc((2 * (size_t)n + 1) * sizeof(double));
  int *piv = fl_malloc(((size_t)n + 1) * sizeof(int));
  int *inv = fl_malloc(((size_t)n + 1) * sizeof(int));
  fl_problem *g = NULL;
  int rc = FL_OK;
  if (!S || !C || !work || !piv || !inv) {
    rc = fl_seterr(FL_ERR_NOMEM, "fl_problem_lift_local: problem %s: out of memory for %d x %d "
                   "dense matrices", nm, n, n);
    goto done;
  }

  // C = W (column-major), then S = (W + W^T)/2 and the skew part's largest entry
  double wmax = 0.0, skew = 0.0;
  for (int i = 0; i < n; i++)
    for (fl_int q = W->rowptr[i]; q < W->rowptr[i + 1]; q++) {
      int j = (int)W->col[q];
      double w = W->val[q];
      if (!isfinite(w)) {
        rc = fl_seterr(FL_ERR_FORMAT, "fl_problem_lift_local: problem %s: W(%d, %d) = %g", nm, i,
                       j, w);
        goto done;
      }
      C[(size_t)i + (size_t)j * (size_t)n] += w;
      if (fabs(w) > wmax) wmax = fabs(w);
    }
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) {
      double a = C[(size_t)i + (size_t)j * (size_t)n], b = C[(size_t)j + (size_t)i * (size_t)n];
      S[(size_t)i + (size_t)j * (size_t)n] = S[(size_t)j + (size_t)i * (size_t)n] = 0.5 * (a + b);
      if (0.5 * fabs(a - b) > skew) skew = 0.5 * fabs(a - b);
    }
  memset(C, 0, nn * sizeof(double));

  // P^T S P = L L^T + (trailing block <= tol), rank r
  int r = 0, linfo = 0;
  double tol = -1.0; /* LAPACK's default: n u max_i S_ii */
  if (n > 0) {
    dpstrf_("L", &n, S, &n, piv, &r, &tol, work, &linfo);
    if (linfo < 0) {
      rc = fl_seterr(FL_ERR_LIBRARY, "fl_problem_lift_local: problem %s: LAPACK dpstrf argument "
                     "%d is invalid", nm, -linfo);
      goto done;
    }
  }
  // C = P L: row piv[k] - 1 of C is row k of L (columns 0 .. min(k, r - 1))
  for (int k = 0; k < n; k++) inv[piv[k] - 1] = k;
  for (int j = 0; j < r; j++)
    for (int k = j; k < n; k++)
      C[(size_t)(piv[k] - 1) + (size_t)j * (size_t)n] = S[(size_t)k + (size_t)j * (size_t)n];

  // the lifted problem: A = I_r as one clique, J = C, b = q, v* = 0, rigid contact, dt = 1
  rc = fl_problem_alloc(FL_PROBLEM_GLOBAL, r, nc, 0, r > 0 ? 1 : 0, &g);
  if (rc < 0) goto done;
  snprintf(g->name, sizeof g->name, "%s", local->name);
  g->dt = 1.0;
  rc = fl_csr_alloc(r, r, r, &g->A);
  if (rc < 0) goto done;
  for (int i = 0; i < r; i++) {
    g->A->rowptr[i + 1] = i + 1;
    g->A->col[i] = i;
    g->A->val[i] = 1.0;
  }
  if (r > 0) {
    g->clique_ptr[0] = 0;
    g->clique_ptr[1] = r;
    for (int i = 0; i < r; i++) {
      g->clique_dof[i] = i;
      g->dof_clique[i] = 0;
    }
  }
  size_t nnz = 0;
  for (int i = 0; i < n; i++) {
    int k = inv[i], m = k < r ? k + 1 : r;
    for (int j = 0; j < m; j++) nnz += C[(size_t)i + (size_t)j * (size_t)n] != 0.0;
  }
  if (nnz > (size_t)INT32_MAX) {
    rc = fl_seterr(FL_ERR_UNSUPPORTED, "fl_problem_lift_local: problem %s: J would have %zu "
                   "entries", nm, nnz);
    goto done;
  }
  rc = fl_csr_alloc(n, r, (fl_int)nnz, &g->J);
  if (rc < 0) goto done;
  {
    fl_int at = 0;
    for (int i = 0; i < n; i++) {
      int k = inv[i], m = k < r ? k + 1 : r;
      for (int j = 0; j < m; j++) {
        double c = C[(size_t)i + (size_t)j * (size_t)n];
        if (c == 0.0) continue;
        g->J->col[at] = j;
        g->J->val[at++] = c;
      }
      g->J->rowptr[i + 1] = at;
    }
  }
  for (int i = 0; i < n; i++) g->b[i] = local->q[i];
  for (fl_int i = 0; i < nc; i++) {
    g->mu[i] = local->mu[i];
    g->phi0[i] = 0.0;
    g->stiffness[i] = INFINITY;
    g->tau_d[i] = 0.0;
    g->feature[i] = local->feature ? local->feature[i] : -1;
    int any = 0;
    for (int row = 3 * (int)i; row < 3 * (int)i + 3; row++)
      any |= g->J->rowptr[row + 1] > g->J->rowptr[row];
    g->clique_a[i] = any ? 0 : -1;
    g->clique_b[i] = -1;
    for (int a = 0; a < 9; a++) g->frame[9 * i + a] = (a % 4 == 0) ? 1.0 : 0.0;
  }

  // the errors against G = C C^T (its lower triangle in S): of W itself (exactness) and of
  // its symmetric part (the factorization's own), over the stored entries of W and their
  // mirrors, then over the entries where W stores nothing on either side
  double etot = 0.0, epsd = 0.0;
  if (n > 0) {
    const double one = 1.0, zero = 0.0;
    memset(S, 0, nn * sizeof(double));
    if (r > 0) dsyrk_("L", "N", &n, &r, &one, C, &n, &zero, S, &n);
    memset(C, 0, nn * sizeof(double)); /* C now marks the positions compared */
    for (int i = 0; i < n; i++)
      for (fl_int q = W->rowptr[i]; q < W->rowptr[i + 1]; q++) {
        int j = (int)W->col[q], a = i > j ? i : j, b = i > j ? j : i;
        size_t at = (size_t)a + (size_t)b * (size_t)n;
        if (C[at] != 0.0) continue;
        C[at] = 1.0;
        double wij = W->val[q], wji = i == j ? wij : fl_csr_get(W, j, i), gab = S[at];
        double e = fmax(fabs(wij - gab), fabs(wji - gab));
        if (e > etot) etot = e;
        e = fabs(0.5 * (wij + wji) - gab);
        if (e > epsd) epsd = e;
      }
    for (int j = 0; j < n; j++)
      for (int i = j; i < n; i++) {
        size_t at = (size_t)i + (size_t)j * (size_t)n;
        if (C[at] == 0.0 && fabs(S[at]) > etot) etot = fabs(S[at]);
        if (C[at] == 0.0 && fabs(S[at]) > epsd) epsd = fabs(S[at]);
      }
  }
  double scale = wmax > 0.0 ? wmax : 1.0;
  if (info) {
    info->rank = r;
    info->exactness = etot / scale;
    info->asymmetry = skew / scale;
    info->psd_error = epsd / scale;
  }
  if (!(epsd / scale <= FL_LIFT_MAX_ERROR)) {
    rc = fl_seterr(FL_ERR_UNSUPPORTED,
                   "fl_problem_lift_local: problem %s: the symmetric part of W is not positive "
                   "semidefinite (its rank-%d pivoted Cholesky reproduces it to %.3g of max "
                   "|W_ij|, more than %g), so no A, J give it as J A^-1 J^T", nm, r,
                   epsd / scale, FL_LIFT_MAX_ERROR);
    goto done;
  }
  rc = fl_problem_validate(g, "fl_problem_lift_local");

done:
  fl_free(S);
  fl_free(C);
  fl_free(work);
  fl_free(piv);
  fl_free(inv);
  if (rc < 0) {
    fl_problem_free(g);
    return rc;
  }
  *global = g;
  return FL_OK;
}

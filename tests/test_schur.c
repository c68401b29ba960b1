// SPDX-License-Identifier: Apache-2.0
/* test_schur.c: the Schur complement from a constrained CHOLMOD factor (sim/fl_schur.h)
 * against a dense elimination, plus solves, recovery, edge cases, errors and timings. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/fl_core.h"
#include "../sim/fl_schur.h"
#include "fl_test.h"

/* a small local RNG (xorshift64*) so runs are reproducible */
static double urand(unsigned long long *st) {
  *st ^= *st >> 12;
  *st ^= *st << 25;
  *st ^= *st >> 27;
  return (double)((*st * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}


/* SPD matrix on an nx x ny x nz grid: a graph Laplacian with random edge weights in
 * [0.5, 1.5] (7-point stencil), `nextra` random long-range edges, and a random positive
 * diagonal in [shift, 2 shift] (shift > 0; shift = 0 gives a plain Laplacian plus 1e-2). */
static fl_csr *grid_spd(int nx, int ny, int nz, int nextra, double shift, unsigned long long seed) {
  int n = nx * ny * nz;
  // one diagonal triplet per node, four per edge (at most 3 grid edges per node)
  size_t cap = (size_t)n * 13 + 4 * (size_t)nextra;
  fl_int *ti = malloc(cap * sizeof(fl_int)), *tj = malloc(cap * sizeof(fl_int));
  double *tv = malloc(cap * sizeof(double));
  unsigned long long st = seed * 0x9E3779B97F4A7C15ULL + 1;
  size_t nt = 0;
#define EDGE(a, b, w)                                                                          \
  do {                                                                                         \
    double w_ = (w);                                                                           \
    ti[nt] = (a), tj[nt] = (b), tv[nt++] = -w_;                                                \
    ti[nt] = (b), tj[nt] = (a), tv[nt++] = -w_;                                                \
    ti[nt] = (a), tj[nt] = (a), tv[nt++] = w_;                                                 \
    ti[nt] = (b), tj[nt] = (b), tv[nt++] = w_;                                                 \
  } while (0)
  for (int z = 0; z < nz; z++)
    for (int y = 0; y < ny; y++)
      for (int x = 0; x < nx; x++) {
        int i = x + nx * (y + ny * z);
        double d = shift > 0 ? shift * (1 + urand(&st)) : 1e-2;
        ti[nt] = i, tj[nt] = i, tv[nt++] = d;
        if (x + 1 < nx) EDGE(i, i + 1, 0.5 + urand(&st));
        if (y + 1 < ny) EDGE(i, i + nx, 0.5 + urand(&st));
        if (z + 1 < nz) EDGE(i, i + nx * ny, 0.5 + urand(&st));
      }
  for (int e = 0; e < nextra; e++) {
    int a = (int)(urand(&st) * n), b = (int)(urand(&st) * n);
    if (a != b) EDGE(a, b, 0.1 + urand(&st));
  }
#undef EDGE
  fl_csr *A = NULL;
  if (fl_csr_from_triplets(n, n, (fl_int)nt, ti, tj, tv, &A) != FL_OK) A = NULL;
  free(ti), free(tj), free(tv);
  return A;
}


/* np distinct random indices in [0, n), ascending */
static void random_set(int n, int np, unsigned long long seed, fl_int *p) {
  unsigned long long st = seed * 0xD1B54A32D192ED03ULL + 7;
  unsigned char *in = calloc((size_t)n, 1);
  for (int k = 0; k < np;) {
    int i = (int)(urand(&st) * n);
    if (!in[i]) in[i] = 1, k++;
  }
  for (int i = 0, k = 0; i < n; i++)
    if (in[i]) p[k++] = i;
  free(in);
}


static double *to_dense(const fl_csr *A) {
  double *D = calloc((size_t)A->nrow * (size_t)A->ncol, sizeof(double));
  for (fl_int i = 0; i < A->nrow; i++)
    for (fl_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
      D[(size_t)i * (size_t)A->ncol + (size_t)A->col[k]] += A->val[k];
  return D;
}


/* Sref = A_pp - A_pn A_nn^-1 A_np by a dense Cholesky of A_nn (np x np, order of p) */
static int dense_schur(const fl_csr *A, int np, const fl_int *p, double *Sref) {
  int n = A->nrow, m = n - np;
  double *D = to_dense(A);
  int *isp = calloc((size_t)n, sizeof(int)), *nidx = malloc((size_t)(m + 1) * sizeof(int));
  for (int k = 0; k < np; k++) isp[p[k]] = 1;
  for (int i = 0, k = 0; i < n; i++)
    if (!isp[i]) nidx[k++] = i;
  double *Ann = malloc((size_t)(m > 0 ? m : 1) * (size_t)(m > 0 ? m : 1) * sizeof(double));
  double *z = malloc((size_t)(m + 1) * sizeof(double));
  for (int a = 0; a < m; a++)
    for (int b = 0; b < m; b++) Ann[(size_t)a * m + b] = D[(size_t)nidx[a] * n + nidx[b]];
  int rc = m > 0 ? fl_chol_factor(Ann, m) : FL_OK;
  for (int c = 0; c < np && rc == FL_OK; c++) {
    // z = A_nn^-1 A_n,p[c]
    for (int a = 0; a < m; a++) z[a] = D[(size_t)nidx[a] * n + p[c]];
    if (m > 0) fl_chol_solve(Ann, m, z);
    for (int r = 0; r < np; r++) {
      double s = D[(size_t)p[r] * n + p[c]];
      for (int a = 0; a < m; a++) s -= D[(size_t)p[r] * n + nidx[a]] * z[a];
      Sref[(size_t)r * np + c] = s;
    }
  }
  free(D), free(isp), free(nidx), free(Ann), free(z);
  return rc;
}


static double max_abs(const double *x, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
  return m;
}


/* max |A_n dv| / (|A| |dv|) over the non-participating rows and max |(A dv)_p - S dv_p| /
 * (|S| |dv_p|) over the participating ones, for a random dv_p */
static int check_recover(const fl_csr *A, const fl_schur *s, int np, const fl_int *p,
                         unsigned long long seed, double *err_n, double *err_p) {
  int n = A->nrow;
  const double *S = fl_schur_matrix(s);
  double *dvp = malloc((size_t)(np + 1) * sizeof(double)), *dv = malloc((size_t)n * sizeof(double));
  double *Adv = malloc((size_t)n * sizeof(double));
  unsigned long long st = seed + 99;
  for (int k = 0; k < np; k++) dvp[k] = 2 * urand(&st) - 1;
  int rc = fl_schur_recover(s, dvp, dv);
  if (rc == FL_OK) {
    fl_csr_gemv(A, 1.0, dv, 0.0, Adv);
    double anorm = max_abs(A->val, (size_t)A->nnz), dvn = max_abs(dv, (size_t)n);
    int *isp = calloc((size_t)n, sizeof(int));
    *err_n = 0;
    *err_p = 0;
    for (int k = 0; k < np; k++) {
      isp[p[k]] = 1;
      if (dv[p[k]] != dvp[k]) *err_p = INFINITY; // dv_p is copied exactly
    }
    for (int i = 0; i < n; i++)
      if (!isp[i]) *err_n = fmax(*err_n, fabs(Adv[i]) / (anorm * dvn + 1e-300));
    double snorm = np ? max_abs(S, (size_t)np * np) : 0, dvpn = max_abs(dvp, (size_t)np);
    for (int r = 0; r < np; r++) {
      double sr = 0;
      for (int c = 0; c < np; c++) sr += S[(size_t)r * np + c] * dvp[c];
      *err_p = fmax(*err_p, fabs(Adv[p[r]] - sr) / (snorm * dvpn + 1e-300));
    }
    free(isp);
  }
  free(dvp), free(dv), free(Adv);
  return rc;
}


/* |A x - b| / |b| (2-norms) for x = A^-1 b from fl_schur_solve, random b */
static int check_solve(const fl_csr *A, const fl_schur *s, unsigned long long seed, double *res,
                       int *alias_same) {
  int n = A->nrow;
  double *b = calloc((size_t)n, sizeof(double)), *x = calloc((size_t)n, sizeof(double));
  double *r = malloc((size_t)n * sizeof(double));
  unsigned long long st = seed + 5;
  for (int i = 0; i < n; i++) b[i] = 2 * urand(&st) - 1;
  int rc = fl_schur_solve(s, b, x);
  if (rc == FL_OK) {
    memcpy(r, b, (size_t)n * sizeof(double));
    fl_csr_gemv(A, 1.0, x, -1.0, r);
    double rr = 0, bb = 0;
    for (int i = 0; i < n; i++) rr += r[i] * r[i], bb += b[i] * b[i];
    *res = sqrt(rr / bb);
    // x = b aliasing gives the same numbers
    rc = fl_schur_solve(s, b, b);
    *alias_same = rc == FL_OK && memcmp(b, x, (size_t)n * sizeof(double)) == 0;
  }
  free(b), free(x), free(r);
  return rc;
}


/* the factor's permutation ends with exactly p's set */
static int perm_ok(const fl_schur *s, int n, int np, const fl_int *p) {
  fl_int *perm = malloc((size_t)n * sizeof(fl_int));
  int *isp = calloc((size_t)n, sizeof(int)), *seen = calloc((size_t)n, sizeof(int));
  int ok = fl_schur_perm(s, perm) == FL_OK;
  for (int k = 0; k < np; k++) isp[p[k]] = 1;
  for (int k = 0; k < n && ok; k++) {
    ok = perm[k] >= 0 && perm[k] < n && !seen[perm[k]] && isp[perm[k]] == (k >= n - np);
    if (ok) seen[perm[k]] = 1;
  }
  free(perm), free(isp), free(seen);
  return ok;
}


//---- against a dense elimination ----

FL_TEST(matches_dense) {
  // grids of about 300 rows, random participating sets of several sizes
  const int dims[3][3] = {{7, 7, 6}, {10, 6, 5}, {5, 5, 12}};
  const int nps[5] = {1, 9, 40, 120, 250};
  int ncase = 0;
  for (int g = 0; g < 3; g++)
    for (int t = 0; t < 5; t++) {
      unsigned long long seed = (unsigned long long)(17 * g + t + 1);
      fl_csr *A = grid_spd(dims[g][0], dims[g][1], dims[g][2], 30, g == 1 ? 0.0 : 0.3, seed);
      ASSERT(A != NULL);
      int n = A->nrow, np = nps[t];
      fl_int *p = malloc((size_t)np * sizeof(fl_int));
      random_set(n, np, seed, p);
      fl_schur *s = NULL;
      ASSERT_OK(fl_schur_create(A, np, p, &s));
      ASSERT_EQ(fl_schur_np(s), np);
      ASSERT(perm_ok(s, n, np, p));
      double *Sref = malloc((size_t)np * np * sizeof(double));
      ASSERT_OK(dense_schur(A, np, p, Sref));
      const double *S = fl_schur_matrix(s);
      ASSERT(S != NULL);
      double err = 0, ref = max_abs(Sref, (size_t)np * np);
      for (size_t k = 0; k < (size_t)np * np; k++) err = fmax(err, fabs(S[k] - Sref[k]));
      ASSERT_LE(err / ref, 1e-12);
      // S is symmetric
      for (int r = 0; r < np; r++)
        for (int c = 0; c < r; c++) ASSERT(S[(size_t)r * np + c] == S[(size_t)c * np + r]);
      double res;
      int same;
      ASSERT_OK(check_solve(A, s, seed, &res, &same));
      ASSERT_LE(res, 1e-12);
      ASSERT(same);
      double en, ep;
      ASSERT_OK(check_recover(A, s, np, p, seed, &en, &ep));
      ASSERT_LE(en, 1e-12);
      ASSERT_LE(ep, 1e-12);
      fl_schur_free(s);
      free(Sref), free(p);
      fl_csr_free(A);
      ncase++;
    }
  ASSERT_EQ(ncase, 15);
  return 0;
}


//---- edge cases ----

/* A refactor on the kept ordering and analysis gives what a fresh create gives, to the bit
 * (S and the solves); another participating set or another pattern is refused (0). */
FL_TEST(refactor_equals_create) {
  fl_csr *A = grid_spd(6, 5, 4, 0, 1.0, 11), *B = grid_spd(6, 5, 4, 0, 2.0, 12),
         *C = grid_spd(6, 5, 4, 8, 1.0, 13);
  ASSERT(A && B && C);
  int n = (int)A->nrow, np = 20;
  ASSERT(A->nnz == B->nnz && !memcmp(A->col, B->col, (size_t)A->nnz * sizeof(fl_int)));
  ASSERT(C->nnz != A->nnz);
  fl_int p[20], q[20];
  random_set(n, np, 5, p);
  random_set(n, np, 6, q);
  ASSERT(memcmp(p, q, sizeof p) != 0);
  fl_schur *s = NULL, *t = NULL;
  ASSERT_OK(fl_schur_create(A, np, p, &s));
  ASSERT_EQ(fl_schur_refactor(s, B, np, p), 1);
  ASSERT_OK(fl_schur_create(B, np, p, &t));
  ASSERT(!memcmp(fl_schur_matrix(s), fl_schur_matrix(t), (size_t)np * (size_t)np * sizeof(double)));
  double *b = malloc((size_t)n * sizeof(double)), *x1 = malloc((size_t)n * sizeof(double)),
         *x2 = malloc((size_t)n * sizeof(double));
  unsigned long long st = 99;
  for (int i = 0; i < n; i++) b[i] = urand(&st) - 0.5;
  ASSERT_OK(fl_schur_solve(s, b, x1));
  ASSERT_OK(fl_schur_solve(t, b, x2));
  ASSERT(!memcmp(x1, x2, (size_t)n * sizeof(double)));
  ASSERT_OK(fl_schur_recover(s, b, x1));
  ASSERT_OK(fl_schur_recover(t, b, x2));
  ASSERT(!memcmp(x1, x2, (size_t)n * sizeof(double)));
  // the refactored object still solves A's successor: B x = b to round-off
  double res = 0;
  int alias = 0;
  ASSERT_OK(check_solve(B, s, 7, &res, &alias));
  ASSERT(res < 1e-10 && alias);
  ASSERT_EQ(fl_schur_refactor(s, B, np, q), 0);
  ASSERT_EQ(fl_schur_refactor(s, C, np, p), 0);
  ASSERT_EQ(fl_schur_refactor(s, B, np - 1, p), 0);
  free(b), free(x1), free(x2);
  fl_schur_free(s);
  fl_schur_free(t);
  fl_csr_free(A);
  fl_csr_free(B);
  fl_csr_free(C);
  return 0;
}


FL_TEST(np_zero_is_a_factor) {
  fl_csr *A = grid_spd(7, 7, 6, 20, 0.3, 3);
  ASSERT(A != NULL);
  fl_schur *s = NULL;
  ASSERT_OK(fl_schur_create(A, 0, NULL, &s));
  ASSERT(fl_schur_matrix(s) == NULL);
  ASSERT_EQ(fl_schur_np(s), 0);
  double res;
  int same;
  ASSERT_OK(check_solve(A, s, 3, &res, &same));
  ASSERT_LE(res, 1e-12);
  ASSERT(same);
  // recovery with no participating rows is the zero vector
  double *dv = malloc((size_t)A->nrow * sizeof(double));
  for (fl_int i = 0; i < A->nrow; i++) dv[i] = 1;
  ASSERT_OK(fl_schur_recover(s, NULL, dv));
  ASSERT_LE(max_abs(dv, (size_t)A->nrow), 0.0);
  free(dv);
  fl_schur_free(s);
  fl_csr_free(A);
  return 0;
}


FL_TEST(np_all_gives_A) {
  fl_csr *A = grid_spd(6, 5, 4, 10, 0.3, 4);
  ASSERT(A != NULL);
  int n = A->nrow;
  fl_int *p = malloc((size_t)n * sizeof(fl_int));
  for (int i = 0; i < n; i++) p[i] = i;
  fl_schur *s = NULL;
  ASSERT_OK(fl_schur_create(A, n, p, &s));
  ASSERT(perm_ok(s, n, n, p));
  double *D = to_dense(A);
  const double *S = fl_schur_matrix(s);
  double err = 0;
  for (size_t k = 0; k < (size_t)n * n; k++) err = fmax(err, fabs(S[k] - D[k]));
  ASSERT_LE(err / max_abs(D, (size_t)n * n), 1e-13);
  double en, ep, res;
  int same;
  ASSERT_OK(check_recover(A, s, n, p, 4, &en, &ep));
  ASSERT_LE(ep, 1e-13);
  ASSERT_OK(check_solve(A, s, 4, &res, &same));
  ASSERT_LE(res, 1e-12);
  fl_schur_free(s);
  free(D), free(p);
  fl_csr_free(A);
  return 0;
}


FL_TEST(one_by_one) {
  fl_int r[2] = {0, 1}, c[1] = {0}, p[1] = {0};
  double v[1] = {4};
  fl_csr A = {1, 1, 1, r, c, v};
  fl_schur *s = NULL;
  ASSERT_OK(fl_schur_create(&A, 1, p, &s));
  ASSERT_NEAR(fl_schur_matrix(s)[0], 4.0, 1e-15);
  double x = 2;
  ASSERT_OK(fl_schur_solve(s, &x, &x));
  ASSERT_NEAR(x, 0.5, 1e-15);
  fl_schur_free(s);
  return 0;
}


//---- errors ----

FL_TEST(not_spd_is_an_error) {
  // a diagonal matrix with one negative entry: the message names that row
  enum { N = 12 };
  fl_int r[N + 1], c[N], p[3] = {0, 4, 11};
  double v[N];
  for (int i = 0; i < N; i++) r[i] = i, c[i] = i, v[i] = 1 + i;
  r[N] = N;
  v[5] = -1;
  fl_csr D = {N, N, N, r, c, v};
  fl_schur *s = (fl_schur *)(void *)&D; /* any non-NULL value: it must come back NULL */
  fl_clearerr();
  ASSERT_EQ(fl_schur_create(&D, 3, p, &s), FL_ERR_NOT_SPD);
  ASSERT(s == NULL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "not positive definite");
  ASSERT_STR_CONTAINS(fl_errmsg(), "row/column 5 of A");
  // an indefinite grid matrix (Laplacian shifted down): an error, not a crash
  fl_csr *A = grid_spd(7, 7, 6, 0, 0.0, 9);
  ASSERT(A != NULL);
  for (fl_int i = 0; i < A->nrow; i++)
    for (fl_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
      if (A->col[k] == i) A->val[k] -= 2.0;
  fl_int q[4] = {1, 50, 100, 200};
  ASSERT_EQ(fl_schur_create(A, 4, q, &s), FL_ERR_NOT_SPD);
  ASSERT(s == NULL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "not positive definite");
  // the same with every row participating and with none
  ASSERT_EQ(fl_schur_create(A, 0, NULL, &s), FL_ERR_NOT_SPD);
  fl_csr_free(A);
  return 0;
}


FL_TEST(invalid_arguments) {
  fl_csr *A = grid_spd(4, 4, 4, 0, 0.3, 2);
  ASSERT(A != NULL);
  fl_schur *s = NULL;
  fl_int unsorted[3] = {3, 1, 7}, dup[3] = {1, 3, 3}, out[2] = {5, 64}, neg[1] = {-1};
  ASSERT_EQ(fl_schur_create(A, 3, unsorted, &s), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "ascending");
  ASSERT_EQ(fl_schur_create(A, 3, dup, &s), FL_ERR_INVAL);
  ASSERT_EQ(fl_schur_create(A, 2, out, &s), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "p[1] = 64");
  ASSERT_EQ(fl_schur_create(A, 1, neg, &s), FL_ERR_INVAL);
  ASSERT_EQ(fl_schur_create(A, 65, unsorted, &s), FL_ERR_INVAL);
  ASSERT_EQ(fl_schur_create(A, -1, unsorted, &s), FL_ERR_INVAL);
  ASSERT_EQ(fl_schur_create(A, 2, NULL, &s), FL_ERR_INVAL);
  ASSERT_EQ(fl_schur_create(NULL, 0, NULL, &s), FL_ERR_INVAL);
  ASSERT_EQ(fl_schur_create(A, 0, NULL, NULL), FL_ERR_INVAL);
  fl_int nrow = A->nrow;
  A->nrow = nrow - 1; // not square
  ASSERT_EQ(fl_schur_create(A, 0, NULL, &s), FL_ERR_INVAL);
  A->nrow = nrow;
  ASSERT(s == NULL);
  ASSERT_EQ(fl_schur_solve(NULL, A->val, A->val), FL_ERR_INVAL);
  ASSERT_EQ(fl_schur_recover(NULL, A->val, A->val), FL_ERR_INVAL);
  fl_schur_free(NULL);
  ASSERT(fl_schur_matrix(NULL) == NULL);
  fl_csr_free(A);
  return 0;
}


FL_TEST(fault_injection) {
  // every failing allocation of ours returns FL_ERR_NOMEM and leaks nothing (ASan checks)
  fl_csr *A = grid_spd(5, 5, 4, 5, 0.3, 6);
  ASSERT(A != NULL);
  fl_int p[6] = {0, 7, 33, 40, 61, 99};
  int done = 0;
  for (long k = 0; k < 64 && !done; k++) {
    fl_schur *s = NULL;
    fl_alloc_fail_after(k);
    int rc = fl_schur_create(A, 6, p, &s);
    fl_alloc_fail_after(-1);
    if (rc == FL_OK) {
      double *dv = malloc((size_t)A->nrow * sizeof(double)), dvp[6] = {1, 2, 3, 4, 5, 6};
      fl_alloc_fail_after(0);
      int rr = fl_schur_recover(s, dvp, dv);
      fl_alloc_fail_after(-1);
      ASSERT_EQ(rr, FL_ERR_NOMEM);
      free(dv);
      fl_schur_free(s);
      done = 1;
    } else {
      ASSERT_EQ(rc, FL_ERR_NOMEM);
      ASSERT(s == NULL);
    }
  }
  ASSERT(done);
  fl_csr_free(A);
  return 0;
}


//---- timings (printed, not asserted) ----

/* scalar 3D grid Laplacian (7-point, random weights) plus a mass-like diagonal, with np participating rows
 * from a patch of the top face; prints the factor+Schur time and checks the solve and
 * (A dv)_p = S dv_p, (A dv)_n = 0 for a recovered dv */
static int time_grid(int k, int np) {
  fl_csr *A = grid_spd(k, k, k, 0, 0.05, 11);
  ASSERT(A != NULL);
  int n = A->nrow;
  fl_int *p = malloc((size_t)np * sizeof(fl_int));
  int side = (int)ceil(sqrt((double)np)), z = k - 1, at = 0;
  for (int y = 0; y < side && at < np; y++)
    for (int x = 0; x < side && at < np; x++) p[at++] = x + k * (y + k * z);
  // ascending: rows of the patch already come in increasing index order
  double t0 = fl_time_now();
  fl_schur *s = NULL;
  ASSERT_OK(fl_schur_create(A, np, p, &s));
  double t1 = fl_time_now();
  ASSERT(perm_ok(s, n, np, p));
  double res;
  int same;
  ASSERT_OK(check_solve(A, s, 1, &res, &same));
  double t2 = fl_time_now();
  double en, ep;
  ASSERT_OK(check_recover(A, s, np, p, 1, &en, &ep));
  double t3 = fl_time_now();
  printf("schur: 3D grid %d^3 = %d dofs, np = %d: factor + Schur %.3f s, solve %.3f s, recover "
         "%.3f s; |Ax-b|/|b| = %.1e, recover rows n %.1e, rows p %.1e\n",
         k, n, np, t1 - t0, t2 - t1, t3 - t2, res, en, ep);
  fflush(stdout);
  ASSERT_LE(res, 1e-10);
  ASSERT_LE(en, 1e-12);
  ASSERT_LE(ep, 1e-10);
  fl_schur_free(s);
  free(p);
  fl_csr_free(A);
  return 0;
}


FL_TEST(slow_timing_grid_31) { return time_grid(31, 300); }

/* the 1e5-dof grid is a measurement (grid_31 checks the same code): by hand only,
 * `build/test_schur slow_timing_grid_46` (docs/fem.md) */
FL_MEASURE(slow_timing_grid_46) { return time_grid(46, 300); }

// SPDX-License-Identifier: Apache-2.0
/* test_core.c: the core module against closed forms and invariants. */
#include <string.h>

#include "../core/fl_core.h"
#include "fl_test.h"

FL_TEST(errors_from_one_list) {
  ASSERT(strcmp(fl_errname(FL_ERR_NOMEM), "FL_ERR_NOMEM") == 0);
  ASSERT(strcmp(fl_strerror(FL_OK), "success") == 0);
  ASSERT(strcmp(fl_errname(-999), "FL_ERR_UNKNOWN") == 0);
  ASSERT_EQ(fl_seterr(FL_ERR_FORMAT, "file %s: bad", "x.h5"), FL_ERR_FORMAT);
  ASSERT_EQ(fl_errcode(), FL_ERR_FORMAT);
  ASSERT_STR_CONTAINS(fl_errmsg(), "file x.h5: bad");
  // wrapping the previous message in a new one (the loaders' "FILE: /path: <message>")
  ASSERT_EQ(fl_seterr(FL_ERR_IO, "%s: /group: %s", "y.h5", fl_errmsg()), FL_ERR_IO);
  ASSERT(strcmp(fl_errmsg(), "y.h5: /group: file x.h5: bad") == 0);
  fl_clearerr();
  ASSERT_EQ(fl_errcode(), FL_OK);
  return 0;
}

FL_TEST(arena_marks_and_high_water) {
  fl_arena a;
  ASSERT_OK(fl_arena_init(&a, 1024));
  double *x = FL_ALLOC(&a, 10, double);
  ASSERT(x != NULL);
  ASSERT_EQ((uintptr_t)x % _Alignof(double), 0);
  size_t m = fl_arena_mark(&a);
  int *y = FL_ALLOC(&a, 100, int);
  ASSERT(y != NULL);
  size_t high = a.high;
  fl_arena_release(&a, m);
  ASSERT_EQ(a.used, m);
  ASSERT_EQ(a.high, high);
  // exhaustion is an error code with the place, not an abort
  ASSERT(FL_ALLOC(&a, 1000, double) == NULL);
  ASSERT_EQ(fl_errcode(), FL_ERR_NOMEM);
  ASSERT_STR_CONTAINS(fl_errmsg(), "arena exhausted");
  fl_arena_free(&a);
  return 0;
}

FL_TEST(fault_injection) {
  fl_csr *c = NULL;
  fl_int i[2] = {0, 1}, j[2] = {1, 0};
  double v[2] = {1, 2};
  // every allocation failure point returns FL_ERR_NOMEM and leaks nothing (ASan checks)
  for (long n = 0; n < 8; n++) {
    fl_alloc_fail_after(n);
    int rc = fl_csr_from_triplets(2, 2, 2, i, j, v, &c);
    fl_alloc_fail_after(-1);
    if (rc == FL_OK) {
      fl_csr_free(c);
      break;
    }
    ASSERT_EQ(rc, FL_ERR_NOMEM);
    ASSERT(c == NULL);
  }
  return 0;
}

FL_TEST(vec3_frame_right_handed) {
  double ns[4][3] = {{0, 0, 1}, {1, 0, 0}, {0.3, -0.4, 0.866}, {-1, -1, -1}};
  for (int k = 0; k < 4; k++) {
    double n[3] = {ns[k][0], ns[k][1], ns[k][2]}, t1[3], t2[3], c[3];
    fl_v3_normalize(n);
    fl_v3_tangents(n, t1, t2);
    ASSERT_NEAR(fl_v3_dot(n, t1), 0, 1e-15);
    ASSERT_NEAR(fl_v3_dot(n, t2), 0, 1e-15);
    ASSERT_NEAR(fl_v3_dot(t1, t2), 0, 1e-15);
    ASSERT_NEAR(fl_v3_norm(t1), 1, 1e-15);
    fl_v3_cross(n, t1, c);
    ASSERT_NEAR(fl_v3_dot(c, t2), 1, 1e-15);
  }
  return 0;
}

FL_TEST(mat3_inverse_and_products) {
  double a[9] = {4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2}, ai[9], p[9];
  ASSERT_OK(fl_m3_inv(a, ai));
  fl_m3_mul(a, ai, p);
  for (int k = 0; k < 9; k++) ASSERT_NEAR(p[k], (k % 4 == 0) ? 1 : 0, 1e-14);
  double s[9] = {1, 2, 3, 2, 4, 6, 0, 0, 1};
  ASSERT_EQ(fl_m3_inv(s, ai), FL_ERR_NOT_SPD);
  double w[3] = {1, -2, 0.5}, x[3] = {0.3, 0.7, -1}, sk[9], r1[3], r2[3];
  fl_m3_skew(w, sk);
  fl_m3_mulv(sk, x, r1);
  fl_v3_cross(w, x, r2);
  for (int k = 0; k < 3; k++) ASSERT_NEAR(r1[k], r2[k], 1e-15);
  return 0;
}

FL_TEST(quaternion_rotation_and_integration) {
  double axis[3] = {0, 0, 1}, q[4], v[3] = {1, 0, 0}, r[3];
  fl_quat_from_axis_angle(axis, M_PI / 2, q);
  fl_quat_rotate(q, v, r);
  ASSERT_NEAR(r[0], 0, 1e-15);
  ASSERT_NEAR(r[1], 1, 1e-15);
  // integrating a constant spin of 1 rad/s for 1 s in small steps turns by 1 rad
  double qi[4] = {1, 0, 0, 0}, w[3] = {0, 0, 1};
  for (int k = 0; k < 100000; k++) fl_quat_integrate(qi, w, 1e-5);
  ASSERT_NEAR(2 * atan2(qi[3], qi[0]), 1.0, 1e-6);
  ASSERT_NEAR(qi[0] * qi[0] + qi[1] * qi[1] + qi[2] * qi[2] + qi[3] * qi[3], 1, 1e-14);
  // composition: rotating by a then b equals rotating by b*a
  double qa[4], qb[4], qab[4], x[3] = {0.2, -0.5, 0.9}, y1[3], y2[3];
  double ax1[3] = {1, 2, 3}, ax2[3] = {-1, 0.5, 0};
  fl_quat_from_axis_angle(ax1, 0.7, qa);
  fl_quat_from_axis_angle(ax2, -1.3, qb);
  fl_quat_rotate(qa, x, y1);
  fl_quat_rotate(qb, y1, y1);
  fl_quat_mul(qb, qa, qab);
  fl_quat_rotate(qab, x, y2);
  for (int k = 0; k < 3; k++) ASSERT_NEAR(y1[k], y2[k], 1e-15);
  return 0;
}

FL_TEST(cholesky_and_ldlt_solve) {
  // SPD 4x4 from B^T B + I
  double B[16] = {1, 2, 0, 1, 0, 1, 3, 0, 2, 0, 1, 1, 1, 1, 0, 2}, A[16], L[16], LD[16];
  for (int i = 0; i < 4; i++) {
    for (int j = 0; j < 4; j++) {
      double s = (i == j);
      for (int k = 0; k < 4; k++) s += B[k * 4 + i] * B[k * 4 + j];
      A[i * 4 + j] = s;
    }
  }
  memcpy(L, A, sizeof A);
  memcpy(LD, A, sizeof A);
  double x[4] = {1, -2, 3, 0.5}, b[4], b2[4];
  for (int i = 0; i < 4; i++) {
    b[i] = 0;
    for (int j = 0; j < 4; j++) b[i] += A[i * 4 + j] * x[j];
  }
  memcpy(b2, b, sizeof b);
  ASSERT_OK(fl_chol_factor(L, 4));
  fl_chol_solve(L, 4, b);
  ASSERT_OK(fl_ldlt_factor(LD, 4));
  fl_ldlt_solve(LD, 4, b2);
  for (int i = 0; i < 4; i++) {
    ASSERT_NEAR(b[i], x[i], 1e-12);
    ASSERT_NEAR(b2[i], x[i], 1e-12);
  }
  double neg[4] = {1, 2, 2, 1};
  ASSERT_EQ(fl_chol_factor(neg, 2), FL_ERR_NOT_SPD);
  return 0;
}

/* fl_lu_factor on a nonsymmetric block-tridiagonal matrix with a zero leading pivot (a row
 * swap is needed) and zero blocks the factorization skips: the solve recovers x to round-off,
 * last[] never reaches past the band plus the swap's fill, and a singular matrix is refused */
FL_TEST(lu_block_sparse_with_pivoting) {
  enum { N = 6 };
  double A[N * N] = {0}, F[N * N], x[N] = {1, -2, 3, 0.5, -1, 2}, b[N];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      if (abs(i - j) <= 1) A[i * N + j] = (i == j ? 4.0 : 0.0) + 0.5 * i - 0.25 * j + 1.0;
  A[0] = 0; // forces the swap of rows 0 and 1
  for (int i = 0; i < N; i++) {
    b[i] = 0;
    for (int j = 0; j < N; j++) b[i] += A[i * N + j] * x[j];
  }
  memcpy(F, A, sizeof A);
  int piv[N], last[N];
  ASSERT_OK(fl_lu_factor(F, N, piv, last));
  ASSERT_EQ(piv[0], 1);
  fl_lu_solve(F, N, piv, b);
  for (int i = 0; i < N; i++) ASSERT_NEAR(b[i], x[i], 1e-12);
  for (int i = 0; i < N; i++) ASSERT(last[i] <= (i + 2 < N ? i + 2 : N - 1));
  double S[4] = {1, 2, 2, 4};
  ASSERT_EQ(fl_lu_factor(S, 2, piv, last), FL_ERR_NOT_SPD);
  return 0;
}

FL_TEST(csr_triplets_transpose_product) {
  // A = [1 0 2; 0 3 0], with a duplicate (0,2) split into 1.5 + 0.5
  fl_int i[4] = {0, 1, 0, 0}, j[4] = {2, 1, 0, 2};
  double v[4] = {1.5, 3, 1, 0.5};
  fl_csr *a, *t, *p, *c;
  ASSERT_OK(fl_csr_from_triplets(2, 3, 4, i, j, v, &a));
  ASSERT_EQ(a->nnz, 3);
  ASSERT_NEAR(fl_csr_get(a, 0, 2), 2, 0);
  ASSERT_NEAR(fl_csr_get(a, 1, 0), 0, 0);
  ASSERT_OK(fl_csr_transpose(a, &t));
  ASSERT_NEAR(fl_csr_get(t, 2, 0), 2, 0);
  ASSERT_OK(fl_csr_matmul(a, t, &p)); // A A^T = [5 0; 0 9]
  ASSERT_NEAR(fl_csr_get(p, 0, 0), 5, 0);
  ASSERT_NEAR(fl_csr_get(p, 1, 1), 9, 0);
  ASSERT_NEAR(fl_csr_get(p, 0, 1), 0, 0);
  fl_csr_free(p);
  p = NULL;
  double x[3] = {1, 1, 1}, y[2] = {7, 7}, z[3];
  fl_csr_gemv(a, 2, x, 1, y); // 2 A x + y = (6+7, 6+7)
  ASSERT_NEAR(y[0], 13, 0);
  ASSERT_NEAR(y[1], 13, 0);
  double w[2] = {1, -1};
  fl_csr_gemtv(a, 1, w, 0, z); // A^T w = (1, -3, 2)
  ASSERT_NEAR(z[0], 1, 0);
  ASSERT_NEAR(z[1], -3, 0);
  ASSERT_NEAR(z[2], 2, 0);
  // CSC of A: colptr (0,1,2,3), rows (0,1,0)
  fl_int cp[4] = {0, 1, 2, 3}, ri[3] = {0, 1, 0};
  double cv[3] = {1, 3, 2};
  ASSERT_OK(fl_csr_from_csc(2, 3, cp, ri, cv, &c));
  for (fl_int r = 0; r < 2; r++) {
    for (fl_int k = 0; k < 3; k++) ASSERT_NEAR(fl_csr_get(c, r, k), fl_csr_get(a, r, k), 0);
  }
  ASSERT_EQ(fl_csr_from_triplets(2, 2, 1, (fl_int[]){2}, (fl_int[]){0}, (double[]){1}, &p),
            FL_ERR_INVAL);
  fl_csr_free(a);
  fl_csr_free(t);
  fl_csr_free(c);
  fl_csr_free(NULL);
  return 0;
}

FL_TEST(bsr3_matches_csr) {
  // 6x6 with blocks (0,0), (0,1), (1,1)
  fl_int i[6] = {0, 2, 1, 4, 5, 3}, j[6] = {0, 2, 4, 4, 3, 5};
  double v[6] = {1, 2, 3, 4, 5, 6};
  fl_csr *a;
  fl_bsr3 *b;
  ASSERT_OK(fl_csr_from_triplets(6, 6, 6, i, j, v, &a));
  ASSERT_OK(fl_bsr3_from_csr(a, &b));
  ASSERT_EQ(b->nnzb, 3);
  ASSERT(fl_bsr3_block(b, 1, 0) == NULL);
  ASSERT_NEAR(fl_bsr3_block(b, 0, 1)[3 * 1 + 1], 3, 0);
  double x[6] = {1, 2, 3, 4, 5, 6}, y1[6], y2[6];
  fl_csr_gemv(a, 1, x, 0, y1);
  fl_bsr3_gemv(b, x, 0, y2);
  for (int k = 0; k < 6; k++) ASSERT_NEAR(y1[k], y2[k], 0);
  fl_csr_free(a);
  fl_bsr3_free(b);
  return 0;
}

typedef struct {
  int n;
  double x;
  int flag;
  int mode;
  char name[FL_OPT_STRLEN];
} opts_t;

static const fl_option_desc table[] = {
    {"n", FL_OPT_INT, offsetof(opts_t, n), 1, 100, 10, NULL, "count"},
    {"x", FL_OPT_REAL, offsetof(opts_t, x), 0, INFINITY, 1.5, NULL, "scale"},
    {"flag", FL_OPT_BOOL, offsetof(opts_t, flag), 0, 1, 0, NULL, "switch"},
    {"mode", FL_OPT_ENUM, offsetof(opts_t, mode), 0, 0, 1, "fast|exact|slow", "mode"},
    {"name", FL_OPT_STRING, offsetof(opts_t, name), 0, 0, 0, "abc", "label"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL}};

FL_TEST(options_parse_check_and_format) {
  opts_t o;
  char buf[64];
  fl_options_defaults(table, &o);
  ASSERT_EQ(o.n, 10);
  ASSERT_NEAR(o.x, 1.5, 0);
  ASSERT_EQ(o.mode, 1);
  ASSERT(strcmp(o.name, "abc") == 0);
  ASSERT_OK(fl_options_set(table, &o, "t", "n", "42"));
  ASSERT_OK(fl_options_set(table, &o, "t", "x", "inf"));
  ASSERT_OK(fl_options_set(table, &o, "t", "flag", "yes"));
  ASSERT_OK(fl_options_set(table, &o, "t", "mode", "slow"));
  ASSERT_EQ(o.n, 42);
  ASSERT(isinf(o.x));
  ASSERT_EQ(o.flag, 1);
  fl_options_format(fl_options_find(table, "mode"), &o, buf, sizeof buf);
  ASSERT(strcmp(buf, "slow") == 0);
  ASSERT_EQ(fl_options_set(table, &o, "pgs", "omeg", "1"), FL_ERR_UNKNOWN_OPTION);
  ASSERT_STR_CONTAINS(fl_errmsg(), "pgs: unknown option 'omeg' (valid: n, x, flag, mode, name)");
  ASSERT_EQ(fl_options_set(table, &o, "t", "n", "4.5"), FL_ERR_OPTION_TYPE);
  ASSERT_STR_CONTAINS(fl_errmsg(), "expected an integer in [1, 100]");
  ASSERT_EQ(fl_options_set(table, &o, "t", "n", "0"), FL_ERR_OPTION_RANGE);
  ASSERT_EQ(fl_options_set(table, &o, "t", "x", "-1"), FL_ERR_OPTION_RANGE);
  ASSERT_EQ(fl_options_set(table, &o, "t", "x", "nan"), FL_ERR_OPTION_TYPE);
  ASSERT_EQ(fl_options_set(table, &o, "t", "mode", "medium"), FL_ERR_OPTION_RANGE);
  ASSERT_STR_CONTAINS(fl_errmsg(), "one of fast|exact|slow");
  ASSERT_EQ(fl_options_set(table, &o, "t", "flag", "2"), FL_ERR_OPTION_TYPE);
  ASSERT_EQ(o.n, 42); // failed sets leave the value alone
  return 0;
}

FL_TEST(timer_is_monotonic) {
  double t0 = fl_time_now(), t1 = fl_time_now();
  ASSERT(t1 >= t0);
  ASSERT(t0 > 0);
  fl_progress p;
  fl_progress_begin(&p, "x", 10);
  fl_progress_update(&p, 5);
  fl_progress_end(&p);
  ASSERT_EQ(p.active, 0);
  return 0;
}


/* fl_split_list: entries in order, empty ones dropped, and too long or too many is an error. */
FL_TEST(split_list) {
  char buf[32];
  const char *out[3];
  ASSERT_EQ(fl_split_list(NULL, buf, sizeof buf, out, 3), 0);
  ASSERT_EQ(fl_split_list("", buf, sizeof buf, out, 3), 0);
  ASSERT_EQ(fl_split_list("a=1,,b=2", buf, sizeof buf, out, 3), 2);
  ASSERT(strcmp(out[0], "a=1") == 0 && strcmp(out[1], "b=2") == 0);
  ASSERT_EQ(fl_split_list("a,b,c,d", buf, sizeof buf, out, 3), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "more than 3 entries");
  ASSERT_EQ(fl_split_list("a=0123456789012345678901234567890123", buf, sizeof buf, out, 3),
            FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "longer than 31");
  return 0;
}


/* fl_edit_distance and fl_options_suggest: a near miss of a key (one edit, a swap of
 * neighbours) is named; a far one is not. */
FL_TEST(options_suggest_near_misses) {
  ASSERT_EQ(fl_edit_distance("max_iter", "max_iter"), 0);
  ASSERT_EQ(fl_edit_distance("max_iters", "max_iter"), 1);
  ASSERT_EQ(fl_edit_distance("mxa_iter", "max_iter"), 1); // a swap is one edit
  ASSERT_EQ(fl_edit_distance("kitten", "sitting"), 3);
  ASSERT_EQ(fl_edit_distance("", "abc"), 3);
  ASSERT(fl_options_suggest(table, "mdoe") && strcmp(fl_options_suggest(table, "mdoe"), "mode") == 0);
  ASSERT(fl_options_suggest(table, "flags") && strcmp(fl_options_suggest(table, "flags"), "flag") == 0);
  ASSERT(fl_options_suggest(table, "speed") == NULL);
  ASSERT(fl_options_suggest(table, "flag") == NULL); // an exact key is not a near miss
  opts_t o;
  fl_options_defaults(table, &o);
  ASSERT_EQ(fl_options_set(table, &o, "t", "nmae", "x"), FL_ERR_UNKNOWN_OPTION);
  ASSERT_STR_CONTAINS(fl_errmsg(), "did you mean 'name'?");
  return 0;
}

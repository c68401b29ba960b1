// SPDX-License-Identifier: Apache-2.0
/* fl_test.h: a minimal test harness (libuv task.h style).
 *
 *   FL_TEST(name) { ASSERT_NEAR(x, 1.0, 1e-12); }
 *
 * CMake scans each tests/test_<module>.c for FL_TEST(name) and adds one CTest test
 * "<module>.<name>" per case, running `test_<module> name`. Exit codes: 0 pass, 1 fail,
 * 77 skipped (SKIP). Without arguments every case runs.
 * Data beside the project: fl_test_shared_dir() is $FL_SHARED_DIR (set by CMake to ../shared).
 */
#ifndef FL_TEST_H
#define FL_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FL_TEST_MAX 256
#define FL_TEST_SKIP_CODE 77

typedef int (*fl_test_fn)(void);
static struct { const char *name; fl_test_fn fn; } fl_tests_[FL_TEST_MAX];
static int fl_ntests_;

/* Tests self-register (constructors are fine here; the solver registry is explicit). */
#define FL_TEST(tc)                                                          \
  static int fl_test_##tc(void);                                             \
  __attribute__((constructor)) static void fl_test_reg_##tc(void) {         \
    if (fl_ntests_ < FL_TEST_MAX) {                                          \
      fl_tests_[fl_ntests_].name = #tc;                                      \
      fl_tests_[fl_ntests_++].fn = fl_test_##tc;                             \
    }                                                                        \
  }                                                                          \
  static int fl_test_##tc(void)

/* A case the executable runs when named (`test_X CASE`) but CTest does not register (its
 * pattern in CMakeLists.txt is "FL_TEST(" at the start of a line): measurements too long for
 * the suite whose correctness a smaller FL_TEST covers. */
#define FL_MEASURE(tc) FL_TEST(tc)

#define FL_FAIL_(...)                                                        \
  do {                                                                       \
    fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                          \
    fprintf(stderr, __VA_ARGS__);                                            \
    fprintf(stderr, "\n");                                                   \
    return 1;                                                                \
  } while (0)

#define ASSERT(c)                                                            \
  do {                                                                       \
    if (!(c)) FL_FAIL_("assertion failed: %s", #c);                          \
  } while (0)
#define ASSERT_EQ(a, b)                                                      \
  do {                                                                       \
    long long fa_ = (long long)(a), fb_ = (long long)(b);                    \
    if (fa_ != fb_) FL_FAIL_("%s == %s: %lld != %lld", #a, #b, fa_, fb_);    \
  } while (0)
#define ASSERT_OK(e)                                                         \
  do {                                                                       \
    int fo_ = (e);                                                           \
    if (fo_ != 0) FL_FAIL_("%s returned %d: %s", #e, fo_, fl_errmsg());      \
  } while (0)
/* |a - b| <= tol, NaN fails. */
#define ASSERT_NEAR(a, b, tol)                                               \
  do {                                                                       \
    double fa_ = (double)(a), fb_ = (double)(b), ft_ = (double)(tol);        \
    if (!(fabs(fa_ - fb_) <= ft_))                                           \
      FL_FAIL_("%s ~ %s: %.17g vs %.17g (diff %.3g > tol %.3g)", #a, #b, fa_, fb_, \
               fabs(fa_ - fb_), ft_);                                        \
  } while (0)
#define ASSERT_LE(a, b)                                                      \
  do {                                                                       \
    double fa_ = (double)(a), fb_ = (double)(b);                             \
    if (!(fa_ <= fb_)) FL_FAIL_("%s <= %s: %.17g > %.17g", #a, #b, fa_, fb_); \
  } while (0)
#define ASSERT_STR_CONTAINS(hay, needle)                                     \
  do {                                                                       \
    const char *fh_ = (hay), *fn_ = (needle);                                \
    if (!fh_ || !strstr(fh_, fn_)) FL_FAIL_("\"%s\" does not contain \"%s\"", fh_ ? fh_ : "(null)", fn_); \
  } while (0)
#define SKIP(...)                                                            \
  do {                                                                       \
    fprintf(stderr, "skipped: ");                                            \
    fprintf(stderr, __VA_ARGS__);                                            \
    fprintf(stderr, "\n");                                                   \
    return FL_TEST_SKIP_CODE;                                                \
  } while (0)

static inline const char *fl_test_shared_dir(void) {
  const char *d = getenv("FL_SHARED_DIR");
  return (d && *d) ? d : "../shared";
}

int main(int argc, char **argv) {
  int failed = 0, ran = 0;
  for (int k = 0; k < fl_ntests_; k++) {
    if (argc > 1 && strcmp(argv[1], fl_tests_[k].name) != 0) continue;
    ran++;
    int rc = fl_tests_[k].fn();
    if (argc > 1) return rc;
    printf("%-40s %s\n", fl_tests_[k].name, rc == 0 ? "ok" : rc == FL_TEST_SKIP_CODE ? "skip" : "FAIL");
    if (rc != 0 && rc != FL_TEST_SKIP_CODE) failed++;
  }
  if (argc > 1 && ran == 0) {
    fprintf(stderr, "no test named %s\n", argv[1]);
    return 1;
  }
  return failed ? 1 : 0;
}

#endif /* FL_TEST_H */

// SPDX-License-Identifier: Apache-2.0
/* fuzz_profile_csv.c: the solve folders `profile --from DIR` reads: the input up to its first
 * NUL byte is steps.csv, the rest iters.csv. */
#include "../harness/fl_harness.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = memchr(data, 0, size);
  size_t n1 = nul ? (size_t)(nul - data) : size;
  char p1[512], p2[512], dir[512];
  fz_write("steps.csv", data, n1, p1, sizeof p1);
  fz_write("iters.csv", nul ? nul + 1 : data, nul ? size - n1 - 1 : 0, p2, sizeof p2);
  fz_path(dir, sizeof dir, "");
  int np, ns;
  int rc = fl_profile_read_costs(dir, 1e-6, &np, &ns);
  fz_expect_message(rc);
  return 0;
}

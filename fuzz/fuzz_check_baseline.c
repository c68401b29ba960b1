// SPDX-License-Identifier: Apache-2.0
/* fuzz_check_baseline.c: `check` baselines (results/baselines/<case>.json) as check reads them:
 * steps, each solver's entry and options, the comparison. */
#include "../harness/fl_harness.h"
#include "../solvers/fl_solver.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  static int reg;
  if (!reg) {
    fl_register_all();
    reg = 1;
  }
  int n;
  int rc = fl_check_read_baseline((const char *)data, size, &n);
  fz_expect_message(rc);
  return 0;
}

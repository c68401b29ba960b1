// SPDX-License-Identifier: Apache-2.0
/* fuzz_fclib.c: FCLIB HDF5 files (local and global) through fl_problem_load_fclib, which reads
 * each file in a child process first; a file it loads must pass fl_problem_validate, save, and
 * load back (a saved file the loader refuses was a bug). */
#include "../problems/fl_problem.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[512], back[512];
  fz_write("in.hdf5", data, size, path, sizeof path);
  fl_problem *p = NULL, *q = NULL;
  int rc = fl_problem_load_fclib(path, &p);
  fz_expect_message(rc);
  if (rc < 0) return 0;
  if (fl_problem_validate(p, path) < 0) {
    fprintf(stderr, "loaded but invalid: %s\n", fl_errmsg());
    abort();
  }
  fz_path(back, sizeof back, "back.hdf5");
  if (fl_problem_save_fclib(p, back, "fuzz", NULL, NULL) < 0 ||
      fl_problem_load_fclib(back, &q) < 0) {
    fprintf(stderr, "save and load back failed: %s\n", fl_errmsg());
    abort();
  }
  fl_problem_free(p);
  fl_problem_free(q);
  return 0;
}

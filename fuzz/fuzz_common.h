// SPDX-License-Identifier: Apache-2.0
/* fuzz_common.h: what every libFuzzer target shares (docs/robustness.md).
 *
 * The parsers read files, so each input is written to a file in a private temporary folder
 * (under /dev/shm when it exists) and handed to the real reader. A memory limit of 64 MiB
 * (FL_MEM_LIMIT_MB) keeps an input from asking for more than libFuzzer's 2 GB malloc limit,
 * and stdout (the commands' tables) goes to /dev/null.
 */
#ifndef FL_FUZZ_COMMON_H
#define FL_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/fl_core.h"

static char fz_dir_[256];

/* Once per process: the temporary folder, the memory limit, a quiet stdout. */
static inline void fz_init(void) {
  if (fz_dir_[0]) return;
  const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  snprintf(fz_dir_, sizeof fz_dir_, "%s/fl-fuzz-XXXXXX", base);
  if (!mkdtemp(fz_dir_)) abort();
  setenv("FL_MEM_LIMIT_MB", "64", 1);
  if (!freopen("/dev/null", "w", stdout)) abort();
}

/* path of file `name` in the temporary folder (a static buffer per call site is the caller's) */
static inline void fz_path(char *out, size_t n, const char *name) {
  fz_init();
  snprintf(out, n, "%s/%s", fz_dir_, name);
}

/* writes data to file `name` in the folder; its path into out */
static inline void fz_write(const char *name, const uint8_t *data, size_t size, char *out, size_t n) {
  fz_path(out, n, name);
  FILE *f = fopen(out, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  if (fclose(f) != 0) abort();
}

/* a failed call must leave a message: an error without one is a bug of the reader */
static inline void fz_expect_message(int rc) {
  if (rc < 0 && fl_errmsg()[0] == '\0') {
    fprintf(stderr, "error %d without a message\n", rc);
    abort();
  }
}

#endif

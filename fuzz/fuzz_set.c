// SPDX-License-Identifier: Apache-2.0
/* fuzz_set.c: `--set` option strings. The first byte picks a registered solver; the rest is a
 * comma-separated list of key=value settings, applied as `solve --set` does (prefixed keys for
 * other solvers skipped) and as one list (fl_solver_set_options); a setting that is accepted
 * must print back (fl_solver_options_json) as valid text. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>

#include "../harness/fl_harness.h"
#include "../solvers/fl_solver.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  static const char *const *names;
  static int nsolver;
  if (!names) {
    fl_register_all();
    names = fl_solver_list();
    while (names[nsolver]) nsolver++;
  }
  if (size < 1 || size > 4096) return 0;
  char text[4097], buf[4097];
  memcpy(text, data + 1, size - 1);
  text[size - 1] = 0;
  fl_solver *s = NULL;
  if (fl_solver_create(names[data[0] % nsolver], &s) < 0) abort();
  const char *item[64];
  int n = fl_split_list(text, buf, sizeof buf, item, 64);
  fz_expect_message(n);
  if (n >= 0) {
    fz_expect_message(fl_harness_apply_sets(s, n, (char *const *)item));
  }
  fz_expect_message(fl_solver_set_options(s, text));
  char *json = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&json, &len);
  if (!f) abort();
  fl_solver_options_json(s, f);
  fclose(f);
  cJSON *j = cJSON_ParseWithLength(json, len);
  if (!j) {
    fprintf(stderr, "options JSON does not parse: %s\n", json);
    abort();
  }
  cJSON_Delete(j);
  free(json);
  fl_solver_destroy(s);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
/* fuzz_scene.c: scene files (docs/scene-format.md) through fl_world_parse_json; a scene that
 * loads is saved, must load back, and takes three steps with PGS. */
#include "../sim/fl_world.h"
#include "../solvers/fl_solver.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_init();
  // scenes are small: 16 MiB keeps generated meshes to what steps in milliseconds
  setenv("FL_MEM_LIMIT_MB", "16", 1);
  static fl_solver *pgs;
  if (!pgs) {
    fl_register_all();
    if (fl_solver_create("pgs", &pgs) < 0 || fl_solver_set_options(pgs, "max_iter=20") < 0)
      abort();
  }
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  fl_world *w = NULL, *w2 = NULL;
  int rc = fl_world_parse_json(text, "fuzz.json", &w);
  free(text);
  fz_expect_message(rc);
  if (rc < 0) return 0;
  char back[512];
  fz_path(back, sizeof back, "back.json");
  if (fl_world_save_json(w, back) < 0 || fl_world_load_json(back, &w2) < 0) {
    fprintf(stderr, "save and load back failed: %s\n", fl_errmsg());
    abort();
  }
  fl_world_free(w2);
  for (int k = 0; k < 3; k++) {
    fl_step_info info;
    if (fl_world_step(w, pgs, &info) < 0) {
      fz_expect_message(-1);
      break;
    }
  }
  fl_world_free(w);
  return 0;
}

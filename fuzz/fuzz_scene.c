// SPDX-License-Identifier: Apache-2.0
/* fuzz_scene.c: scene files (docs/scene-format.md) through fl_world_parse_json; a scene that
 * loads is saved, must load back, and takes three steps with PGS. Issue 51's invariants: every
 * name that loads is an identifier (fl_name_check), every dynamic body's mass and inertia are
 * finite and positive, the saved file loads back (cJSON reads no bare inf/nan), and the last step's problem exports
 * as FCLIB (with the stepper's guess: save_guess overflowed on two bilateral rows) and is
 * read back. Once per process: a FIFO and a folder in place of a scene file are refused at once. */
#include <sys/stat.h>

#include "../problems/fl_problem.h"
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
  static int files_checked;
  if (!files_checked) {
    files_checked = 1;
    char fifo[512], dir[512];
    fz_path(fifo, sizeof fifo, "fifo.json");
    fz_path(dir, sizeof dir, "dir.json");
    if (mkfifo(fifo, 0600) != 0 || mkdir(dir, 0700) != 0) abort();
    fl_world *x = NULL;
    // a FIFO with no writer blocked the reader forever; a folder said only "read error"
    if (fl_world_load_json(fifo, &x) != FL_ERR_IO || !strstr(fl_errmsg(), "is a FIFO")) abort();
    if (fl_world_load_json(dir, &x) != FL_ERR_IO || !strstr(fl_errmsg(), "is a folder")) abort();
    remove(fifo);
    rmdir(dir);
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
  // what loads is well formed: identifiers for names, finite positive derived quantities
  if (fl_name_check(w->name, "fuzz", "scene name") < 0) abort();
  for (fl_int i = 0; i < w->nmat; i++)
    if (fl_name_check(w->mat[i].name, "fuzz", "material name") < 0) abort();
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    if (fl_name_check(b->name, "fuzz", "body name") < 0) abort();
    if (b->kind != FL_BODY_DYNAMIC) continue;
    int ok = isfinite(b->mass) && b->mass > 0;
    for (int k = 0; k < 9; k++) ok = ok && isfinite(b->inertia[k]);
    if (!ok) {
      fprintf(stderr, "body %s loaded with mass %g, inertia %g\n", b->name, b->mass, b->inertia[0]);
      abort();
    }
  }
  char back[512];
  fz_path(back, sizeof back, "back.json");
  if (fl_world_save_json(w, back) < 0 || fl_world_load_json(back, &w2) < 0) {
    fprintf(stderr, "save and load back failed: %s\n", fl_errmsg());
    abort();
  }
  fl_world_free(w2);
  // (the load back is the strict-JSON check: cJSON reads no bare inf or nan)
  int stepped = 0;
  for (int k = 0; k < 3; k++) {
    fl_step_info info;
    if (fl_world_step(w, pgs, &info) < 0) {
      fz_expect_message(-1);
      break;
    }
    stepped = k + 1;
  }
  // the last step's problem as FCLIB, with the stepper's guess, and back
  const fl_problem *p = stepped ? fl_world_problem(w) : NULL;
  if (p && p->nc + p->nh > 0) {
    char fc[512];
    fz_path(fc, sizeof fc, "step.hdf5");
    const double *v, *g;
    fl_world_solution(w, &v, &g);
    int rc2 = fl_problem_save_fclib(p, fc, "fuzz", v, g);
    fz_expect_message(rc2);
    if (rc2 >= 0) {
      // read back: a refusal must say why (the reader is stricter than the writer on some
      // contact graphs: "touches more than two cliques")
      fl_problem *q = NULL;
      fz_expect_message(fl_problem_load_fclib(fc, &q));
      fl_problem_free(q);
    }
  }
  fl_world_free(w);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
/* test_run_spec.c: a run spec (harness/run/fl_run.h) steps the same world as the set-up it
 * replaced, names a refused setting, resolves duration / dt, and closes safely. */
#include <math.h>
#include <string.h>

#include "../harness/run/fl_run.h"
#include "fl_test.h"


/* The run of 5 steps of heavy_stack with PGS (max_iter=7) through the spec and by hand: the
 * same state, bit for bit, and the same iteration count. */
FL_TEST(same_as_by_hand) {
  ASSERT_OK(fl_register_all());
  const char *set[1] = {"max_iter=7"};
  fl_run_spec sp = {.scene = "heavy_stack", .stepper = "pgs", .opts = "error_every=0",
                    .nset = 1, .set = set, .steps = 5};
  fl_run run;
  ASSERT_OK(fl_run_open(&sp, &run));
  ASSERT(run.solver != NULL && run.peer == NULL);
  ASSERT_EQ(run.bad_set, -1);
  ASSERT_OK(fl_run_go(&run));
  ASSERT_EQ(run.loop.taken, 5);

  fl_world *w = NULL;
  fl_solver *s = NULL;
  ASSERT_OK(fl_scene_open("heavy_stack", 0, NULL, NULL, &w));
  ASSERT_OK(fl_solver_create("pgs", &s));
  ASSERT_OK(fl_solver_set_option(s, "error_every", "0"));
  ASSERT_OK(fl_solver_set_option(s, "max_iter", "7"));
  fl_loop l = {.stepper = fl_stepper_solver(s), .steps = 5};
  ASSERT_OK(fl_loop_run(&l, w));
  ASSERT_EQ(l.iters, run.loop.iters);
  ASSERT_EQ(w->nbody, run.world->nbody);
  for (fl_int i = 0; i < w->nbody; i++) {
    ASSERT(memcmp(w->body[i].pos, run.world->body[i].pos, sizeof w->body[i].pos) == 0);
    ASSERT(memcmp(w->body[i].vel, run.world->body[i].vel, sizeof w->body[i].vel) == 0);
  }
  fl_loop_free(&l);
  fl_solver_destroy(s);
  fl_world_free(w);
  fl_run_close(&run);
  fl_run_close(&run); // twice: nothing left to free
  return 0;
}


/* A refused setting is named by its index; nothing stays open. */
FL_TEST(bad_setting_named) {
  ASSERT_OK(fl_register_all());
  const char *set[3] = {"max_iter=5", "pgs.omega=1.1", "omega=not-a-number"};
  fl_run_spec sp = {.scene = "heavy_stack", .stepper = "pgs", .nset = 3, .set = set, .steps = 1};
  fl_run run;
  int rc = fl_run_open(&sp, &run);
  ASSERT(rc < 0);
  ASSERT_EQ(run.bad_set, 2);
  ASSERT(run.world == NULL && run.solver == NULL);
  fl_run_close(&run);
  fl_solver *s = NULL;
  ASSERT(fl_run_solver(&sp, "no-such-solver", &s, NULL) == FL_ERR_UNKNOWN_SOLVER);
  ASSERT(s == NULL);
  return 0;
}


/* steps < 0: round(duration / dt), the given duration or the scene's; world switches set. */
FL_TEST(steps_from_duration) {
  ASSERT_OK(fl_register_all());
  fl_run_spec sp = {.scene = "heavy_stack", .steps = -1, .duration = 0.05,
                    .flags = FL_RUN_NO_METRICS | FL_RUN_CPU_TIMES};
  fl_run run;
  ASSERT_OK(fl_run_open(&sp, &run));
  ASSERT_EQ(run.steps, lround(0.05 / run.world->dt));
  ASSERT_EQ(run.world->compute_metrics, 0);
  ASSERT_EQ(run.world->cpu_times, 1);
  double own = round(run.world->duration / run.world->dt);
  fl_run_close(&run);
  sp.duration = 0;
  ASSERT_OK(fl_run_open(&sp, &run));
  ASSERT_EQ(run.steps, (long)own);
  fl_run_close(&run);
  // more than FL_RUN_MAX_STEPS from duration / dt: refused
  sp.duration = 1e12;
  ASSERT(fl_run_open(&sp, &run) == FL_ERR_OPTION_RANGE);
  ASSERT(run.world == NULL);
  // a given count is kept as it is, LONG_MAX included (a run ended by its `each`)
  sp.steps = 9223372036854775807L;
  ASSERT_OK(fl_run_open(&sp, &run));
  ASSERT(run.steps == 9223372036854775807L);
  fl_run_close(&run);
  return 0;
}

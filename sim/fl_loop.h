// SPDX-License-Identifier: Apache-2.0
/* fl_loop.h: the one loop that steps a world, for every command and figure that runs a scene.
 *
 * One place for what every run of steps does: take the step (FrictionLab's stepper with a
 * solver, or another simulator through the same small table, peers/fl_peer.h), count the
 * failed steps (the solver's reason < 0) and the iterations, write the recording frame on its
 * interval, compute the observables and tally the world's limits (fl_world_limits). What is a
 * caller's own (its CSV rows, a figure's sampled force, a verify case's measurement, a
 * benchmark's stage times) goes in the `each` callback, called once after every step.
 *
 * Order within one step k (0-based): step, frame (when due), observables and limits, each.
 * The step's wall time is taken around the step call alone (step_s).
 *
 * The loop lives in sim/ (layer 4), so it cannot name a peer (layer 5) or the recording
 * (harness/, layer 6): a peer hands in its fl_stepper (fl_peer_stepper), a recording its
 * frame callback. Errors: FL_OK or a negative FL_ERR_* with fl_errmsg() set by the step,
 * the observables or a callback.
 */
#ifndef FL_LOOP_H
#define FL_LOOP_H
// layer 4: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 4
#error "sim/fl_loop.h is in sim/, layer 4: a lower layer may not include it (docs/layers.md)"
#endif

#include "fl_world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How one step is taken. step: one step of w->dt, info (may be NULL) filled as by
 * fl_world_step; FL_OK or a negative error. history (may be NULL): the iteration records of
 * the step just taken, *n of them, owned by the stepper and valid until its next step, or
 * NULL. self: the stepper's state (not owned by the loop). */
typedef struct fl_stepper {
  int (*step)(void *self, fl_world *w, fl_step_info *info);
  const fl_iter_stat *(*history)(void *self, const fl_step_info *info, int *n);
  void *self;
} fl_stepper;

/* FrictionLab's own stepper with solver s (not owned; NULL only for a world without
 * contacts or joints): fl_world_step, and the solver's records when the step had rows. */
fl_stepper fl_stepper_solver(fl_solver *s);

/* One limit's tally over the run (the world's limits, in fl_world_limits' order). */
typedef struct fl_loop_tally {
  long steps; /* steps with the observable outside [lo, hi] (NaN counts as outside) */
  long first; /* the first such step, -1 when none */
  long last;  /* the latest such step, -1 when none (== k: outside at step k) */
  double worst; /* the value farthest outside (NaN is the farthest; the first of equals) */
  double far;   /* its distance outside (INFINITY for NaN) */
} fl_loop_tally;

/* `each` returns FL_OK to go on, FL_LOOP_STOP to end the run after this step (counted in
 * taken; fl_loop_run then returns FL_OK), or a negative error, returned as it is. */
#define FL_LOOP_STOP 1

typedef struct fl_loop {
  /* set by the caller; zero leaves a part off */
  fl_stepper stepper;
  long steps;       /* steps to take (>= 0) */
  int observe;      /* 1: fl_world_observe after every step into obs, and tally the limits */
  long frame_every; /* > 0: frame() with the initial state (step 0, info NULL), then after
                       each step whose count is a multiple of it, and after the last */
  int (*frame)(void *ctx, fl_world *w, long step, const fl_step_info *info);
  int (*each)(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *obs);
  void *ctx;        /* handed to frame and each */

  /* filled by fl_loop_run */
  long taken;        /* steps taken (the index of a step that failed with an error) */
  long failed;       /* steps whose solver reason was < 0 (not converged) */
  long first_failed; /* the first of them, -1 when none */
  long iters;        /* iterations over all steps */
  long limit_steps;  /* steps with any limit outside */
  double step_s;     /* wall time of the last step call (s) */
  double wall_s;     /* wall time of the whole loop, callbacks included (s) */
  fl_int nobs;       /* observables (fl_world_nobs), when observe */
  double *obs;       /* their values after the last step (owned; fl_loop_free) */
  fl_int nlimit;     /* the world's limits, when observe */
  const fl_obs_limit *limit; /* them (owned by the world: fl_world_limits) */
  fl_loop_tally *tally; /* nlimit tallies (owned; fl_loop_free) */
} fl_loop;

/* Runs l->steps steps of w with l->stepper (the parts set in l). The results are reset and
 * filled; obs and tally must be NULL (a zero-initialized fl_loop) or an earlier run's, which
 * are freed. Returns FL_OK (also after FL_LOOP_STOP) or the first negative error: of the
 * step (l->taken is its index), the observables, the limits, frame or each; FL_ERR_NOMEM. */
int fl_loop_run(fl_loop *l, fl_world *w);

/* Frees what fl_loop_run allocated (obs, tally); NULL-safe; the settings stay. */
void fl_loop_free(fl_loop *l);

#ifdef __cplusplus
}
#endif

#endif

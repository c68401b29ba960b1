// SPDX-License-Identifier: Apache-2.0
/* loop.c: the one stepping loop (fl_loop.h). */
#include <math.h>
#include <string.h>

#include "fl_loop.h"


static int solver_step(void *self, fl_world *w, fl_step_info *info) {
  return fl_world_step(w, self, info);
}


static const fl_iter_stat *solver_history(void *self, const fl_step_info *info, int *n) {
  *n = 0;
  // a step without rows did not call the solver: its records are an older step's
  return info->nc + info->nh > 0 ? fl_solver_history(self, n) : NULL;
}


fl_stepper fl_stepper_solver(fl_solver *s) {
  fl_stepper st = {solver_step, solver_history, s};
  return st;
}


/* the limits after step k: tallies, and whether any is outside */
static void tally_limits(fl_loop *l, const fl_obs_limit *lim, const fl_int *ix, long k) {
  int out = 0;
  for (fl_int j = 0; j < l->nlimit; j++) {
    double x = l->obs[ix[j]];
    if (x >= lim[j].lo && x <= lim[j].hi) continue;
    out = 1;
    fl_loop_tally *t = &l->tally[j];
    double far = isnan(x) ? INFINITY : x > lim[j].hi ? x - lim[j].hi : lim[j].lo - x;
    if (t->steps++ == 0) t->first = k;
    t->last = k;
    if (t->steps == 1 || far > t->far) {
      t->worst = x;
      t->far = far;
    }
  }
  l->limit_steps += out;
}


int fl_loop_run(fl_loop *l, fl_world *w) {
  fl_loop_free(l);
  l->taken = l->failed = l->iters = l->limit_steps = 0;
  l->first_failed = -1;
  l->step_s = l->wall_s = 0;
  l->nobs = l->nlimit = 0;
  l->limit = NULL;
  const fl_int *ix = NULL;
  if (l->observe) {
    l->nobs = fl_world_nobs(w);
    FL_TRY(fl_world_limits(w, &l->limit, &ix, &l->nlimit));
    l->obs = fl_malloc((size_t)(l->nobs + 1) * sizeof *l->obs);
    l->tally = fl_calloc((size_t)l->nlimit + 1, sizeof *l->tally);
    if (!l->obs || !l->tally) {
      fl_loop_free(l);
      return fl_seterr(FL_ERR_NOMEM, "stepping loop: out of memory");
    }
    for (fl_int j = 0; j < l->nlimit; j++) l->tally[j].first = l->tally[j].last = -1;
  }
  int framed = l->frame && l->frame_every > 0;
  double t0 = fl_time_now();
  int rc = framed ? l->frame(l->ctx, w, 0, NULL) : FL_OK;
  for (long k = 0; rc >= 0 && k < l->steps; k++) {
    fl_step_info info;
    double s0 = fl_time_now();
    rc = l->stepper.step(l->stepper.self, w, &info);
    l->step_s = fl_time_now() - s0;
    if (rc < 0) break;
    if (framed && ((k + 1) % l->frame_every == 0 || k == l->steps - 1)) {
      rc = l->frame(l->ctx, w, k + 1, &info);
      if (rc < 0) break;
    }
    if (l->observe) {
      rc = fl_world_observe(w, l->obs);
      if (rc < 0) break;
      tally_limits(l, l->limit, ix, k);
    }
    l->taken++;
    l->iters += info.res.iters;
    if (info.res.reason < 0) {
      if (l->failed++ == 0) l->first_failed = k;
    }
    if (l->each) rc = l->each(l->ctx, w, k, &info, l->obs);
    if (rc == FL_LOOP_STOP) {
      rc = FL_OK;
      break;
    }
  }
  l->wall_s = fl_time_now() - t0;
  return rc < 0 ? rc : FL_OK;
}


void fl_loop_free(fl_loop *l) {
  if (!l) return;
  fl_free(l->obs);
  fl_free(l->tally);
  l->obs = NULL;
  l->tally = NULL;
  l->nlimit = 0;
}

// SPDX-License-Identifier: Apache-2.0
/* run.c: a run spec opened, stepped and closed (fl_run.h): the one place that builds a world
 * for a run, picks its solver or peer and applies the stepper's settings. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../fl_harness.h"
#include "fl_run.h"


int fl_run_solver(const fl_run_spec *sp, const char *name, fl_solver **out, int *bad) {
  if (bad) *bad = -1;
  *out = NULL;
  fl_solver *s = NULL;
  FL_TRY(fl_solver_create(name, &s));
  int rc = FL_OK;
  if (sp->opts && *sp->opts) rc = fl_solver_set_options(s, sp->opts);
  // one at a time, so that a refusal names its setting (the same as all at once: each is
  // sorted alone, later ones win)
  for (int k = 0; rc >= 0 && k < sp->nset; k++) {
    rc = fl_harness_apply_sets(s, 1, (char *const *)&sp->set[k]);
    if (rc < 0 && bad) *bad = k;
  }
  if (rc >= 0 && sp->opts_last && *sp->opts_last) rc = fl_solver_set_options(s, sp->opts_last);
  if (rc < 0) {
    fl_solver_destroy(s);
    return rc;
  }
  *out = s;
  return FL_OK;
}


static int open_world(const fl_run_spec *sp, fl_world **w) {
  if (sp->scene_text) return fl_world_parse_json(sp->scene_text, sp->scene, w);
  return fl_scene_open(sp->scene, sp->nscene, sp->scene_set, sp->read_model, w);
}


int fl_run_open(const fl_run_spec *spec, fl_run *run) {
  if (run) memset(run, 0, sizeof *run);
  if (!spec || !run || !spec->scene) return fl_seterr(FL_ERR_INVAL, "fl_run_open: NULL argument");
  run->spec = *spec;
  run->bad_set = -1;
  run->loop.first_failed = -1;
  const fl_run_spec *sp = &run->spec;
  fl_world *w = NULL;
  FL_TRY(open_world(sp, &w));
  run->world = w;
  if (sp->flags & FL_RUN_CPU_TIMES) w->cpu_times = 1;
  if (sp->flags & FL_RUN_NO_METRICS) w->compute_metrics = 0;
  if (sp->flags & FL_RUN_NO_GEOMETRY) w->observe_geometry = 0;
  int rc = FL_OK;
  run->steps = sp->steps; // a given count as it is (LONG_MAX: until `each` stops the run)
  if (sp->steps < 0) {
    double d = sp->duration > 0 ? sp->duration : w->duration, n = round(d / w->dt);
    if (n <= FL_RUN_MAX_STEPS)
      run->steps = (long)n;
    else
      rc = fl_seterr(FL_ERR_OPTION_RANGE, "%s: duration / dt = %g / %g = %g steps, expected at "
                     "most %ld", sp->scene, d, w->dt, n, FL_RUN_MAX_STEPS);
  }
  if (rc >= 0 && sp->stepper && !(sp->flags & FL_RUN_NO_PEER) && fl_peer_find(sp->stepper)) {
    char xml[1200];
    if (sp->staging) snprintf(xml, sizeof xml, "%s/%s.xml", sp->staging, sp->stepper);
    int np = sp->peer_set ? sp->npeer_set : sp->nset;
    const char *const *ps = sp->peer_set ? sp->peer_set : sp->set;
    rc = fl_peer_create(sp->stepper, w, np, ps, sp->staging ? xml : NULL, &run->peer);
  } else if (rc >= 0 && sp->stepper) {
    rc = fl_run_solver(sp, sp->stepper, &run->solver, &run->bad_set);
  }
  if (rc < 0) {
    int bad = run->bad_set;
    fl_run_close(run);
    run->bad_set = bad;
    return rc;
  }
  run->stepper = run->peer ? fl_peer_stepper(run->peer) : fl_stepper_solver(run->solver);
  return FL_OK;
}


int fl_run_go(fl_run *run) {
  if (!run || !run->world) return fl_seterr(FL_ERR_INVAL, "fl_run_go: no open run");
  const fl_run_spec *sp = &run->spec;
  fl_loop_free(&run->loop);
  fl_loop *l = &run->loop;
  memset(l, 0, sizeof *l);
  l->stepper = run->stepper;
  l->steps = run->steps;
  l->observe = sp->observe;
  l->frame_every = sp->frame_every;
  l->frame = sp->frame;
  l->each = sp->each;
  l->ctx = sp->ctx;
  l->first_failed = -1;
  fl_peer_expect(run->peer, l->steps); // a hint: a peer in another process runs them ahead
  return fl_loop_run(l, run->world);
}


void fl_run_close(fl_run *run) {
  if (!run) return;
  fl_loop_free(&run->loop);
  fl_solver_destroy(run->solver);
  fl_peer_free(run->peer);
  fl_world_free(run->world);
  run->solver = NULL;
  run->peer = NULL;
  run->world = NULL;
}

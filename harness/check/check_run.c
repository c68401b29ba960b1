// SPDX-License-Identifier: Apache-2.0
/* check_run.c: one case of `frictionlab check`: the scene stepped through the stepping loop
 * with one solver, and its record (failed steps, quantiles of the merit, joint and own
 * residuals, iterations, penetration, drift, limits). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../sim/fl_loop.h"
#include "../../sim/fl_world.h"
#include "../fl_harness.h"
#include "check_impl.h"
#include "../run/fl_run.h"


static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}


/* quantile of sorted data (nearest rank); 0 for no data */
static double quant(const double *x, int n, double p) {
  if (n == 0) return 0;
  int k = (int)ceil(p * n) - 1;
  return x[k < 0 ? 0 : k >= n ? n - 1 : k];
}


static int obs_index(fl_world *w, const char *name) {
  for (fl_int i = 0; i < fl_world_nobs(w); i++)
    if (!strcmp(fl_world_obs_name(w, i), name)) return (int)i;
  return -1;
}


int fl__check_file_steps(const char *file, double *own, double *duration, double *dt) {
  fl_run_spec sp = {.scene = file};
  fl_run run;
  int rc = fl_run_open(&sp, &run);
  if (rc < 0) return rc;
  const fl_world *w = run.world;
  *own = floor(w->duration / w->dt + 0.5);
  *duration = w->duration;
  *dt = w->dt;
  fl_run_close(&run);
  return FL_OK;
}


/* what check measures after each step (fl_loop each) */
typedef struct check_step_ctx {
  record *r;
  double *merit, *joint, *own; /* per step, sorted afterwards */
  int ipen, idrift;            /* observables pen_max and drift_max, -1 when none */
  int n;                       /* steps measured */
} check_step_ctx;


static int check_each(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  (void)w;
  (void)k;
  check_step_ctx *c = ctx;
  record *r = c->r;
  int n = c->n++;
  // no contact: nothing for the merit to measure (the metric is NaN there)
  c->merit[n] = info->nc == 0 ? 0 : fmin(fl_metrics_merit(&info->met, NAN), 1e300);
  c->joint[n] = isfinite(info->met.bilateral) ? info->met.bilateral : (info->nh > 0 ? 1e300 : 0);
  // the solver's own residual at return: what a looser tolerance moves first
  c->own[n] = info->nc + info->nh == 0 ? 0 : isfinite(info->res.error) ? fabs(info->res.error) : 1e300;
  if (c->ipen >= 0 && val[c->ipen] > r->q[6]) r->q[6] = val[c->ipen];
  if (c->idrift >= 0) r->q[7] = val[c->idrift];
  r->merit_last = c->merit[n];
  return FL_OK;
}


int fl__check_run_case(const case_input *in, const char *solver, const char *opts, int steps,
                        int nset, char **set, record *r) {
  memset(r, 0, sizeof *r);
  double *merit = NULL, *joint = NULL, *own = NULL;
  // a case's scene: a scene file as it is, or a canonical scene with the case's settings
  char buf[512];
  const char *sset[16];
  int ns = in->file ? 0 : fl_split_list(in->set, buf, sizeof buf, sset, 16);
  if (ns < 0) return ns;
  fl_run_spec sp = {.scene = in->file ? in->file : in->scene, .nscene = ns, .scene_set = sset,
                    .stepper = solver, .opts = opts, .nset = nset, .set = (const char *const *)set,
                    .steps = steps, .observe = 1, .each = check_each};
  fl_run run;
  int rc = fl_run_open(&sp, &run);
  if (rc < 0) return rc;
  fl_world *w = run.world;
  merit = fl_malloc((size_t)(steps + 1) * sizeof *merit);
  joint = fl_malloc((size_t)(steps + 1) * sizeof *joint);
  own = fl_malloc((size_t)(steps + 1) * sizeof *own);
  if (!merit || !joint || !own) {
    rc = fl_seterr(FL_ERR_NOMEM, "check: out of memory");
    goto done;
  }
  // the scene's limits (declared, and the world's automatic ones): a bad one is the input's
  // error; the loop counts the steps outside any
  const fl_obs_limit *lim = NULL;
  const fl_int *limi = NULL;
  fl_int nlim = 0;
  rc = fl_world_limits(w, &lim, &limi, &nlim);
  if (rc < 0) goto done;
  check_step_ctx c = {r, merit, joint, own, obs_index(w, "pen_max"), obs_index(w, "drift_max"), 0};
  run.spec.ctx = &c;
  int src = fl_run_go(&run);
  const fl_loop loop = run.loop;
  r->nlim = loop.nlimit < MAXLIM ? (int)loop.nlimit : MAXLIM;
  for (int k = 0; k < r->nlim; k++) {
    r->lim[k] = loop.limit[k];
    r->lim_steps[k] = (int)loop.tally[k].steps;
    r->lim_first[k] = (int)loop.tally[k].first;
    r->lim_worst[k] = loop.tally[k].worst;
    r->lim_far[k] = loop.tally[k].far;
  }
  r->q[0] = (double)loop.failed;
  r->q[QLIMIT] = (double)loop.limit_steps;
  long iters = loop.iters;
  int n = c.n;
  double wall = loop.wall_s;
  if (src < 0) {
    // a solver that cannot take the scene, or a failed step: the record's status
    r->status = src == FL_ERR_UNSUPPORTED ? 1 : 2;
    goto done;
  }
  qsort(merit, (size_t)n, sizeof *merit, cmp_d);
  qsort(joint, (size_t)n, sizeof *joint, cmp_d);
  qsort(own, (size_t)n, sizeof *own, cmp_d);
  r->q[1] = quant(merit, n, 0.5);
  r->q[2] = quant(merit, n, 0.9);
  r->q[3] = quant(merit, n, 1.0);
  r->q[4] = quant(joint, n, 0.9);
  r->q[5] = n ? (double)iters / n : 0;
  r->q[QOWN] = quant(own, n, 0.9);
  r->q[QSOLVE] = wall;
done:
  fl_free(merit);
  fl_free(joint);
  fl_free(own);
  fl_run_close(&run);
  return rc;
}

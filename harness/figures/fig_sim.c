// SPDX-License-Identifier: Apache-2.0
/* fig_sim.c: run a canonical scene with one solver for a figure recipe, recording per step the
 * solver's iterations, reason, time, the common merit and every observable of the scene. */
#define _GNU_SOURCE /* open_memstream */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../sim/fl_loop.h"
#include "../../sim/fl_world.h"
#include "fl_figure.h"
#include "../output/fl_record.h"
#include "../run/fl_run.h"


/* splits "a=1,b=2" into at most `max` strings in buf (modified copy); returns the count */


/* a figure run's CSV: one row per step, the solver's figures then every observable but "t" */
typedef struct sim_row {
  double t;
  int iters, reason;
  double solve_s, merit, bilateral, mu_used, momentum;
  double obs[FL_FIG_SIM_MAXOBS];
} sim_row;
#define R(m) offsetof(sim_row, m)
static const fl_csv_col sim_head[] = {
  {"t", FL_CSV_G, R(t), 6},                 {"iterations", FL_CSV_INT, R(iters), 0},
  {"reason", FL_CSV_INT, R(reason), 0},     {"solve_s", FL_CSV_G, R(solve_s), 4},
  {"merit", FL_CSV_G, R(merit), 6},         {"bilateral", FL_CSV_G, R(bilateral), 6},
  {"mu_used", FL_CSV_G, R(mu_used), 6},     {"momentum", FL_CSV_G, R(momentum), 6}};
#undef R
#define NSIM_HEAD (int)(sizeof sim_head / sizeof sim_head[0])


/* a figure run's row after each step (fl_loop each) */
typedef struct sim_step_ctx {
  FILE *f;
  fl_fig_sim *out;
  fl_int nobs;
  fl_fig_rec *rec;
  const fl_csv_col *cols; /* sim_head and the observables' columns */
  int ncols;
  sim_row row;
} sim_step_ctx;


static int sim_frame(void *ctx, fl_world *w, long step, const fl_step_info *info) {
  return fl_fig_record_step(((sim_step_ctx *)ctx)->rec, w, step, info);
}


static int sim_each(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  (void)k;
  sim_step_ctx *c = ctx;
  fl_fig_sim *out = c->out;
  FILE *f = c->f;
  out->solve_s += info->solve_s;
  // friction used: the largest ||gamma_t|| / gamma_n over contacts that carry load
  const fl_problem *pb = fl_world_problem(w);
  const double *gv, *gg;
  fl_world_solution(w, &gv, &gg);
  double mu_used = 0, gmax = 0;
  for (fl_int q = 0; pb && gg && q < pb->nc; q++) gmax = fmax(gmax, gg[3 * q]);
  for (fl_int q = 0; pb && gg && q < pb->nc; q++)
    if (gg[3 * q] > 1e-6 * gmax) mu_used = fmax(mu_used, hypot(gg[3 * q + 1], gg[3 * q + 2]) / gg[3 * q]);
  if (mu_used > out->mu_used_max) out->mu_used_max = mu_used;
  sim_row *row = &c->row;
  row->t = info->t;
  row->iters = info->res.iters;
  row->reason = info->res.reason;
  row->solve_s = info->solve_s;
  row->merit = info->nc > 0 ? fl_metrics_merit(&info->met, NAN) : NAN;
  row->bilateral = info->met.bilateral;
  row->mu_used = mu_used;
  row->momentum = info->met.momentum;
  for (fl_int i = 0; i < c->nobs; i++) {
    row->obs[i] = val[i];
    out->last[i] = val[i];
    if (fabs(val[i]) > out->maxabs[i]) out->maxabs[i] = fabs(val[i]);
  }
  fl_csv_row(f, c->cols, c->ncols, row);
  return FL_OK;
}


int fl_fig_simulate(fl_fig_ctx *ctx, const char *csv, const char *scene, const char *scene_set,
                    const char *solver, const char *solver_set, double duration,
                    fl_fig_sim *out) {
  char sbuf[1024];
  const char *sset[32];
  int ns = fl_split_list(scene_set, sbuf, sizeof sbuf, sset, 32);
  memset(out, 0, sizeof *out);
  if (ns < 0) return ns;
  fl_run_spec sp = {.scene = scene, .nscene = ns, .scene_set = sset, .stepper = solver,
                    .opts = solver_set, .steps = -1, .duration = duration, .observe = 1,
                    .frame = sim_frame, .each = sim_each};
  fl_run run;
  int rc = fl_run_open(&sp, &run);
  if (rc < 0) return rc;
  fl_world *w = run.world;
  fl_int nobs = fl_world_nobs(w);
  if (rc >= 0 && nobs > FL_FIG_SIM_MAXOBS)
    rc = fl_seterr(FL_ERR_INVAL, "figure: scene %s has %d observables (max %d)", scene, (int)nobs,
                   FL_FIG_SIM_MAXOBS);
  FILE *f = NULL;
  // the CSV's columns: sim_head, then each observable but "t" (the row's time already)
  fl_csv_col *cols = NULL;
  int ncols = NSIM_HEAD;
  if (rc >= 0) {
    cols = fl_malloc((size_t)(NSIM_HEAD + nobs) * sizeof *cols);
    if (!cols) rc = fl_seterr(FL_ERR_NOMEM, "figure: out of memory");
  }
  if (rc >= 0) {
    memcpy(cols, sim_head, sizeof sim_head);
    for (fl_int i = 0; i < nobs; i++) {
      const char *nm = fl_world_obs_name(w, i);
      snprintf(out->name[out->nobs], sizeof out->name[0], "%s", nm);
      out->maxabs[out->nobs] = 0;
      out->nobs++;
      if (strcmp(nm, "t") == 0) continue;
      cols[ncols++] = (fl_csv_col){nm, FL_CSV_G,
                                   offsetof(sim_row, obs) + (size_t)i * sizeof(double), 9};
    }
    f = fl_fig_table(ctx, csv, cols, ncols);
    if (!f) rc = fl_errcode();
  }
  int steps = (int)run.steps;
  // the run's recording and viewer beside its CSV
  fl_fig_rec fr = {.ctx = ctx, .steps = steps};
  snprintf(fr.stem, sizeof fr.stem, "%s", csv);
  char *dot = strrchr(fr.stem, '.');
  if (dot) *dot = 0;
  snprintf(fr.label, sizeof fr.label, "%s %s", solver, solver_set ? solver_set : "");
  sim_step_ctx *c = fl_malloc(sizeof *c); // the row holds every observable: not on the stack
  if (!c && rc >= 0) rc = fl_seterr(FL_ERR_NOMEM, "figure: out of memory");
  if (c) *c = (sim_step_ctx){.f = f, .out = out, .nobs = nobs, .rec = &fr, .cols = cols,
                             .ncols = ncols};
  run.spec.ctx = c;
  if (rc >= 0) {
    run.spec.frame_every = fl_fig_record_every(&fr, w);
    rc = fl_run_go(&run);
  }
  out->steps = (int)run.loop.taken;
  out->nfail = (int)run.loop.failed;
  out->iters = run.loop.iters;
  if (rc >= 0 && run.solver)
    fl_fig_manifest_run(ctx, csv, scene, scene_set, run.solver, steps * w->dt, out->steps,
                        out->nfail);
  rc = fl_fig_record_end(&fr, rc);
  fl_run_close(&run);
  fl_free(c);
  fl_free(cols);
  return rc < 0 ? rc : FL_OK;
}


/* records one run in the figure's manifest ("runs"): scene, overrides, solver and its
 * resolved options, so the figure's data can be regenerated from the manifest alone */
void fl_fig_manifest_run(fl_fig_ctx *ctx, const char *csv, const char *scene,
                         const char *scene_set, const fl_solver *s, double duration, int steps,
                         int nfail) {
  cJSON *man = fl_results_manifest(ctx->res);
  if (!man) return;
  cJSON *runs = cJSON_GetObjectItemCaseSensitive(man, "runs");
  if (!runs) runs = cJSON_AddArrayToObject(man, "runs");
  cJSON *o = cJSON_CreateObject();
  if (!runs || !o) {
    cJSON_Delete(o);
    return;
  }
  cJSON_AddStringToObject(o, "csv", csv);
  cJSON_AddStringToObject(o, "scene", scene);
  cJSON_AddStringToObject(o, "scene_set", scene_set ? scene_set : "");
  cJSON_AddStringToObject(o, "solver", fl_solver_name(s));
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (f) {
    fl_solver_options_json(s, f);
    fclose(f);
    cJSON *opts = text ? cJSON_ParseWithLength(text, len) : NULL;
    if (opts) cJSON_AddItemToObject(o, "options", opts);
    free(text);
  }
  cJSON_AddNumberToObject(o, "duration_s", duration);
  cJSON_AddNumberToObject(o, "steps", steps);
  cJSON_AddNumberToObject(o, "failed_steps", nfail);
  cJSON_AddItemToArray(runs, o);
}


double fl_fig_sim_get(const fl_fig_sim *s, const char *name, int max) {
  for (int i = 0; i < s->nobs; i++)
    if (strcmp(s->name[i], name) == 0) return max ? s->maxabs[i] : s->last[i];
  return NAN;
}


int fl_fig_record_step(void *ctx, fl_world *w, long step, const fl_step_info *info) {
  fl_fig_rec *r = ctx;
  if (step == 0) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.flrec", fl_results_staging(r->ctx->res), r->stem);
    // its own stream, closed at the end: a figure's results keep few streams open
    r->f = fopen(path, "wb");
    if (!r->f) return fl_seterr(FL_ERR_IO, "%s: cannot write", path);
    fl_fig_record_every(r, w);
    const char *labels[1] = {r->label};
    FL_TRY(fl_record_begin(r->f, w, w->name, 1, labels, (int)r->every, r->steps, &r->rec));
  }
  if (!r->rec || !(step == 0 || step % r->every == 0 || step == r->steps)) return FL_OK;
  return fl_record_frame(r->rec, 0, step, w, info);
}


long fl_fig_record_every(fl_fig_rec *r, const fl_world *w) {
  if (r->steps <= 0) r->steps = lround(w->duration / w->dt);
  r->every = fl_record_auto_every(w, r->steps, 1, FL_FIG_RECORD_BUDGET);
  return r->every;
}


int fl_fig_record_end(fl_fig_rec *r, int rc) {
  fl_record_free(r->rec);
  r->rec = NULL;
  if (r->f && fclose(r->f) != 0 && rc >= 0) rc = fl_seterr(FL_ERR_IO, "%s.flrec: write failed", r->stem);
  r->f = NULL;
  return rc; // the pages: fl_fig_viewers, once the recipe is done
}

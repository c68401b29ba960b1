// SPDX-License-Identifier: Apache-2.0
/* verdict.c: what `run` checks about each stepper's run (fl_run_verdict, fl_run.h): failed
 * steps, NaN or infinite energy, an energy gain above FL_RUN_ENERGY_GAIN x the scene's scale,
 * the scene's limits; the per-step flags of steps.csv and the status line. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../sim/fl_fem.h"
#include "fl_run.h"


/* total energy E = kinetic + potential + elastic from the observables (J) */
static double total_energy(const fl_world *w, const double *val) {
  double e = 0;
  for (fl_int i = 0; i < fl_world_nobs(w); i++) {
    const char *n = fl_world_obs_name(w, i);
    if (!strcmp(n, "energy") || !strncmp(n, "elastic_", 8)) e += val[i];
  }
  return e;
}


/* whether something outside the system does work on it */
static int external_work(const fl_world *w) {
  if (w->nforce > 0) return 1;
  for (fl_int j = 0; j < w->njoint; j++)
    if (w->joint[j].driven) return 1;
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    if (b->kind == FL_BODY_PRESCRIBED && (fl_v3_norm(b->vel) > 0 || fl_v3_norm(b->omega) > 0))
      return 1;
  }
  return 0;
}


int fl_run_verdict_begin(fl_world *w, double *val, fl_run_verdict *sum) {
  memset(sum, 0, sizeof *sum);
  sum->first_failed = sum->energy_first = sum->nonfinite_first = -1;
  const fl_obs_limit *lim;
  const fl_int *ix;
  fl_int nl;
  FL_TRY(fl_world_limits(w, &lim, &ix, &nl));
  for (fl_int k = 0; k < nl && k < FL_RUN_MAX_LIMITS; k++) {
    fl_run_limit *t = &sum->limit[sum->nlimit++];
    snprintf(t->obs, sizeof t->obs, "%s", lim[k].obs);
    snprintf(t->label, sizeof t->label, "%s", lim[k].label);
    t->lo = lim[k].lo;
    t->hi = lim[k].hi;
    t->first = -1;
    t->worst = NAN;
  }
  FL_TRY(fl_world_observe(w, val));
  double g = fl_v3_norm(w->gravity), s = 0, k0 = 0, el0 = 0;
  for (fl_int i = 0; i < w->nbody; i++)
    if (w->body[i].kind == FL_BODY_DYNAMIC && isfinite(w->body[i].size))
      s += w->body[i].mass * g * w->body[i].size;
  // deformable bodies: the same m |g| size, with size the rest mesh's bounding-box diagonal
  for (fl_int b = 0; b < w->nfem; b++) {
    const fl_mesh *me = w->fem[b]->mesh;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (fl_int v = 0; v < me->nvert; v++)
      for (int c = 0; c < 3; c++) {
        lo[c] = fmin(lo[c], me->X[3 * v + c]);
        hi[c] = fmax(hi[c], me->X[3 * v + c]);
      }
    double d[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    if (me->nvert > 0) s += w->fem[b]->mass * g * fl_v3_norm(d);
  }
  for (fl_int i = 0; i < fl_world_nobs(w); i++) {
    const char *n = fl_world_obs_name(w, i);
    if (!strcmp(n, "kinetic")) k0 = val[i];
    if (!strncmp(n, "elastic_", 8)) el0 += val[i];
  }
  sum->e0 = total_energy(w, val);
  sum->escale = s + k0 + el0;
  sum->external = external_work(w);
  sum->energy_checked = !sum->external && sum->escale > 0 && isfinite(sum->escale) &&
                        isfinite(sum->e0);
  return FL_OK;
}


/* the failed steps and the limits are the stepping loop's (l) */
void fl_run_verdict_step(fl_run_verdict *sum, const fl_world *w, const double *val, long k,
                         const fl_step_info *info, const fl_loop *l, char *buf, size_t n) {
  sum->fallback += info->res.fallback > 0;
  sum->solve_s += info->solve_s;
  sum->collide_s += info->collide_s;
  sum->assemble_s += info->assemble_s;
  if (val[2] > sum->pen_max) sum->pen_max = val[2];
  int reason = info->res.reason;
  buf[0] = '\0';
#define ADD(label)                                                                        \
  do {                                                                                    \
    if (!strstr(buf, label)) {                                                            \
      size_t u = strlen(buf);                                                             \
      snprintf(buf + u, n - u, "%s%s", u ? ";" : "", label);                              \
    }                                                                                     \
  } while (0)
  if (reason < 0) ADD("failed");
  double e = total_energy(w, val);
  if (!isfinite(e)) {
    // a NaN or infinite energy: the state is lost, whether or not the gain is checked
    if (sum->nonfinite_first < 0) {
      sum->nonfinite_first = k;
      sum->nonfinite = e;
    }
    sum->nonfinite_steps++;
    ADD("energy");
  } else if (sum->energy_checked) {
    double gain = e - sum->e0;
    if (gain > sum->egain) sum->egain = gain;
    if (!(gain <= FL_RUN_ENERGY_GAIN * sum->escale)) {
      sum->energy_steps++;
      if (sum->energy_first < 0) sum->energy_first = k;
      ADD("energy");
    }
  }
  for (fl_int j = 0; j < l->nlimit && j < sum->nlimit; j++)
    if (l->tally[j].last == k) ADD(sum->limit[j].label);
#undef ADD
}


const char *fl_run_verdict_text(const fl_run_verdict *s, char *buf, size_t n) {
  buf[0] = '\0';
  size_t u = 0;
  if (s->error[0]) u += (size_t)snprintf(buf + u, n - u, "%s", s->error);
  if (s->failed && u < n)
    u += (size_t)snprintf(buf + u, n - u, "%sfailed %d of %ld steps (first %ld)", u ? "; " : "",
                          s->failed, s->steps, s->first_failed);
  if (s->energy_steps && u < n)
    u += (size_t)snprintf(buf + u, n - u, "%senergy +%.3g J (%.3g x the scale %.3g J) from step %ld",
                          u ? "; " : "", s->egain, s->egain / s->escale, s->escale, s->energy_first);
  if (s->nonfinite_steps && u < n)
    u += (size_t)snprintf(buf + u, n - u, "%senergy %s from step %ld (%ld steps)", u ? "; " : "",
                          isnan(s->nonfinite) ? "NaN" : s->nonfinite > 0 ? "+inf" : "-inf",
                          s->nonfinite_first, s->nonfinite_steps);
  for (int j = 0; j < s->nlimit && u < n; j++) {
    const fl_run_limit *t = &s->limit[j];
    if (!t->steps) continue;
    if (t->worst > t->hi)
      u += (size_t)snprintf(buf + u, n - u, "%s%s: %s %.3g > %.3g in %ld steps from step %ld",
                            u ? "; " : "", t->label, t->obs, t->worst, t->hi, t->steps, t->first);
    else
      u += (size_t)snprintf(buf + u, n - u, "%s%s: %s %.3g < %.3g in %ld steps from step %ld",
                            u ? "; " : "", t->label, t->obs, t->worst, t->lo, t->steps, t->first);
  }
  if (!u) snprintf(buf, n, "ok");
  return buf;
}


void fl_run_verdict_end(fl_run_verdict *v, const fl_loop *l, int rc) {
  v->steps = l->taken;
  v->iters = l->iters;
  v->failed = (int)l->failed;
  v->first_failed = l->first_failed;
  v->wall_s = l->wall_s;
  for (int j = 0; j < v->nlimit && j < l->nlimit; j++) {
    v->limit[j].steps = l->tally[j].steps;
    v->limit[j].first = l->tally[j].first;
    if (l->tally[j].steps) v->limit[j].worst = l->tally[j].worst;
  }
  if (rc < 0) snprintf(v->error, sizeof v->error, "%s: %s", fl_errname(rc), fl_errmsg());
}


void fl_run_verdict_json(const fl_run_verdict *su, cJSON *r) {
  cJSON_AddNumberToObject(r, "steps", (double)su->steps);
  cJSON_AddNumberToObject(r, "iterations", (double)su->iters);
  cJSON_AddNumberToObject(r, "steps_not_converged", su->failed);
  cJSON_AddNumberToObject(r, "solve_s", su->solve_s);
  cJSON_AddNumberToObject(r, "collide_s", su->collide_s);
  cJSON_AddNumberToObject(r, "assemble_s", su->assemble_s);
  cJSON_AddNumberToObject(r, "wall_s", su->wall_s);
  cJSON_AddNumberToObject(r, "pen_max", su->pen_max);
  cJSON *fl = cJSON_AddObjectToObject(r, "flags");
  cJSON_AddNumberToObject(fl, "failed_steps", su->failed);
  cJSON_AddNumberToObject(fl, "first_failed_step", (double)su->first_failed);
  cJSON_AddNumberToObject(fl, "fallback_steps", su->fallback);
  cJSON *en = cJSON_AddObjectToObject(fl, "energy");
  cJSON_AddBoolToObject(en, "checked", su->energy_checked);
  // NaN or infinite energy (any run): steps and the first of them (-1: none)
  cJSON_AddNumberToObject(en, "nonfinite_steps", (double)su->nonfinite_steps);
  cJSON_AddNumberToObject(en, "nonfinite_first_step", (double)su->nonfinite_first);
  if (su->energy_checked) {
    cJSON_AddNumberToObject(en, "initial_J", su->e0);
    cJSON_AddNumberToObject(en, "scale_J", su->escale);
    cJSON_AddNumberToObject(en, "allowed_gain", FL_RUN_ENERGY_GAIN);
    cJSON_AddNumberToObject(en, "largest_gain_J", su->egain);
    cJSON_AddNumberToObject(en, "steps", (double)su->energy_steps);
    cJSON_AddNumberToObject(en, "first_step", (double)su->energy_first);
  }
  cJSON *ls = cJSON_AddArrayToObject(fl, "limits");
  for (int q = 0; q < su->nlimit; q++) {
    const fl_run_limit *t = &su->limit[q];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "observable", t->obs);
    cJSON_AddStringToObject(o, "label", t->label);
    if (isfinite(t->lo)) cJSON_AddNumberToObject(o, "min", t->lo);
    if (isfinite(t->hi)) cJSON_AddNumberToObject(o, "max", t->hi);
    cJSON_AddNumberToObject(o, "steps", (double)t->steps);
    cJSON_AddNumberToObject(o, "first_step", (double)t->first);
    if (t->steps) cJSON_AddNumberToObject(o, "worst", isfinite(t->worst) ? t->worst : 1e300);
    cJSON_AddItemToArray(ls, o);
  }
}


void fl_run_verdict_checked(const fl_run_verdict *s, FILE *f) {
  fprintf(f, "(checked: solver failures; NaN or infinite energy; energy gain above %g x %.3g J%s",
          FL_RUN_ENERGY_GAIN, s->escale,
          s->energy_checked ? "" : s->external ? ", not checked here: external work"
                                               : ", not checked here: no finite initial energy");
  for (int q = 0; q < s->nlimit; q++)
    fprintf(f, "; %s %s %s %.3g", s->limit[q].label, s->limit[q].obs,
            isfinite(s->limit[q].hi) ? "<=" : ">=",
            isfinite(s->limit[q].hi) ? s->limit[q].hi : s->limit[q].lo);
  fprintf(f, "; per step in steps.csv's flags column)\n");
}

// SPDX-License-Identifier: Apache-2.0
/* check_judge.c: how `frictionlab check` judges (docs/check.md): a case's record against its
 * baseline, new tolerances from the spread between two builds, the warnings of a recording, and
 * the quick verify suite's rows against verify.json. A case regresses when
 *
 *     new > base (1 + rel) + abs
 *
 * with (rel, abs) stored per case and quantity in the baseline (floors: check_cases.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check_cases.h"
#include "../run/fl_run.h"

/* tolerance = max(floor, SPREAD_FACTOR x measured spread between two builds) */
#define SPREAD_FACTOR 4.0
/* a recorded case whose last step ends above this common merit is far from converged */
#define FAR_MERIT 1e-3
/* tolerance of a verify row's error (relative error, or absolute where the answer is 0) */
#define VERIFY_REL 0.01
#define VERIFY_ABS 1e-9
const char fl__check_verify_rule[] = "verdict unchanged; error <= base (1 + 0.01) + 1e-9";


const char *fl__check_status_name(int st) { return st == 0 ? "ok" : st == 1 ? "unsupported" : "error"; }


const char *fl__check_outcome(const record *r, int steps) {
  if (r->status != 0) return fl__check_status_name(r->status);
  return r->q[0] == 0 ? "no failed step" : r->q[0] >= steps ? "fails every step" : "fails some steps";
}


/* (rel, abs) of quantity q of a case: the baseline's own, else the floors */
static void case_tol(const cJSON *bs, int q, double *rel, double *ab) {
  *rel = fl__check_q[q].rel;
  *ab = fl__check_q[q].abs;
  const cJSON *t = cJSON_GetObjectItem(cJSON_GetObjectItem(bs, "tolerance"), fl__check_q[q].name);
  if (!t) return;
  const cJSON *r = cJSON_GetObjectItem(t, "rel"), *a = cJSON_GetObjectItem(t, "abs");
  if (cJSON_IsNumber(r)) *rel = r->valuedouble;
  if (cJSON_IsNumber(a)) *ab = a->valuedouble;
}


/* the tolerance object of a new record: floors widened by the spread against `other` (the
 * same case recorded by another build), and the spread itself for the record */
void fl__check_add_tolerance(cJSON *o, const record *r, const cJSON *other) {
  cJSON *tol = cJSON_AddObjectToObject(o, "tolerance");
  cJSON *spr = other ? cJSON_AddObjectToObject(o, "spread") : NULL;
  for (int q = 0; q < NQ; q++) {
    if (isinf(fl__check_q[q].rel)) continue;
    double rel = fl__check_q[q].rel, ab = fl__check_q[q].abs;
    const cJSON *oq = cJSON_GetObjectItem(other, fl__check_q[q].name);
    if (cJSON_IsNumber(oq)) {
      double a = r->q[q], b = oq->valuedouble, d = fabs(a - b), m = fmax(fabs(a), fabs(b));
      if (q == 0) {
        ab = fmax(ab, ceil(SPREAD_FACTOR * d)); // failed steps: whole steps
      } else if (d > 0) {
        rel = fmax(rel, SPREAD_FACTOR * d / m);
      }
      cJSON_AddNumberToObject(spr, fl__check_q[q].name, m > 0 ? d / m : 0);
    }
    cJSON *t = cJSON_AddObjectToObject(tol, fl__check_q[q].name);
    cJSON_AddNumberToObject(t, "rel", rel);
    cJSON_AddNumberToObject(t, "abs", ab);
  }
}


/* The progress bar (stderr, on a terminal only) and the table rows (stdout) share a terminal:
 * a row first clears the bar's line, which is drawn again at the next update. */
void fl__check_row_begin(const check_tally *t) {
  if (t->bar && t->bar->active) fputs("\r\033[K", stderr);
}


/* Whether `--set` lowered this solver's iteration budget (max_iter, for all solvers or as
 * solver.max_iter): then fewer iterations are the cut, not an improvement. */
int fl__check_budget_cut(const char *solver, int nset, char **set) {
  size_t n = strlen(solver);
  for (int k = 0; k < nset; k++) {
    const char *key = set[k];
    if (strncmp(key, solver, n) == 0 && key[n] == '.') key += n + 1;
    if (strncmp(key, "max_iter=", 9) == 0) return 1;
  }
  return 0;
}


void fl__check_compare(const char *label, const char *solver, const cJSON *bs, const record *r,
                       int steps, int cut, check_tally *t) {
  int before = t->regressions;
  const char *bst = cJSON_GetStringValue(cJSON_GetObjectItem(bs, "status"));
  if (!bst || strcmp(bst, fl__check_status_name(r->status)) != 0) {
    int worse = r->status != 0 && bst && !strcmp(bst, "ok");
    fl__check_row_begin(t);
    printf("%-22s %-16s %-12s %-10s %12s %12s\n", label, solver, "status",
           worse ? "REGRESSED" : "CHANGED", bst ? bst : "?", fl__check_status_name(r->status));
    t->regressions += worse;
    t->regressed_cases += worse;
    t->changed += !worse;
    t->quantities++;
    return;
  }
  if (r->status != 0) return;
  // an expected outcome that no longer holds: the baseline is stale (better or worse)
  const char *bout = cJSON_GetStringValue(cJSON_GetObjectItem(bs, "outcome"));
  const char *now = fl__check_outcome(r, steps);
  if (bout && strcmp(bout, now) && (!strcmp(bout, "fails every step") || !strcmp(bout, "no failed step"))) {
    int worse = !strcmp(bout, "no failed step");
    fl__check_row_begin(t);
    printf("%-22s %-16s %-12s %-10s %12s %12s\n", label, solver, "outcome",
           worse ? "REGRESSED" : "CHANGED", bout, now);
    if (worse) t->regressions++;
    else t->changed++;
  }
  for (int q = 0; q < NQ; q++) {
    const cJSON *bq = cJSON_GetObjectItem(bs, fl__check_q[q].name);
    if (!cJSON_IsNumber(bq) || q == QSOLVE) continue;
    double b = bq->valuedouble, v = r->q[q], rel, ab;
    case_tol(bs, q, &rel, &ab);
    int worse = v > b * (1 + rel) + ab;
    int moved = fabs(v - b) > 0.5 * (rel * fabs(b) + ab) && fabs(v - b) > 1e-12 * fabs(b);
    t->quantities++;
    if (worse || moved) {
      // fewer iterations under a budget cut by --set are the cut itself
      const char *verdict = worse ? "REGRESSED" : v >= b ? "moved"
                            : q == QITERS && cut ? "cut budget" : "improved";
      fl__check_row_begin(t);
      char change[32];
      if (b != 0) snprintf(change, sizeof change, "%+8.2f%%", 100 * (v - b) / fabs(b));
      else snprintf(change, sizeof change, "%9s", "new");
      printf("%-22s %-16s %-12s %-10s %12.6g %12.6g %s (allowed %+.3g%%)\n", label, solver,
             fl__check_q[q].name, verdict, b, v, change,
             b != 0 ? 100 * (rel + ab / fabs(b)) : INFINITY);
    }
    t->regressions += worse;
  }
  t->regressed_cases += t->regressions > before;
}


/* What a recording should not hide: a solver failing every step, a last step far from
 * converged, and the scene's limits crossed (declared ones and the automatic ones). */
void fl__check_warn_record(const char *label, const char *solver, const record *r, int steps) {
  if (r->status != 0) return;
  if (r->q[0] >= steps)
    printf("warning: %s %s fails every one of its %d steps: the baseline records a solver that "
           "never converged (give it a budget with --set %s.max_iter=N)\n", label, solver, steps, solver);
  if (!(r->merit_last <= FAR_MERIT))
    printf("warning: %s %s ends far from converged: the last step's merit is %.3g (> %g)\n",
           label, solver, r->merit_last, FAR_MERIT);
  for (int l = 0; l < r->nlim; l++) {
    if (!r->lim_steps[l]) continue;
    printf("warning: %s %s: %s: %s %.6g outside [%g, %g] in %d of %d steps from step %d\n", label,
           solver, r->lim[l].label, r->lim[l].obs, r->lim_worst[l], r->lim[l].lo, r->lim[l].hi,
           r->lim_steps[l], steps, r->lim_first[l]);
  }
}


//---- the quick verify suite against verify.json ----

static cJSON *child_object(cJSON *o, const char *key) {
  cJSON *c = cJSON_GetObjectItem(o, key);
  return c ? c : cJSON_AddObjectToObject(o, key);
}


/* Per row of the suite (docs/verify.md): the verdict and the error of every quantity. A
 * verdict that was "pass" and is no longer, or a new "error", is a regression; another change
 * of verdict (a failure that now passes) means the baseline is stale; an error above
 * base (1 + VERIFY_REL) + VERIFY_ABS is a regression too (a failing row can fail worse). */


int fl__check_verify_row(void *ctx, const fl_verify_row *r) {
  check_verify_ctx *v = ctx;
  char key[96], label[40], who[160];
  const char *set = *r->settings ? r->settings : "defaults";
  snprintf(key, sizeof key, "%s.%s", r->case_name, r->quantity);
  snprintf(label, sizeof label, "verify:%s", r->case_name);
  snprintf(who, sizeof who, "%s%s%s%s", r->solver, *r->settings ? "(" : "", r->settings,
           *r->settings ? ")" : ""); /* one word: the table stays columns */
  v->rows++;
  if (v->update) {
    cJSON *o = cJSON_AddObjectToObject(child_object(child_object(v->solvers, r->solver), set), key);
    if (!o) return fl_seterr(FL_ERR_NOMEM, "check: out of memory");
    cJSON_AddStringToObject(o, "verdict", r->verdict);
    // NaN is JSON null: a measurement that was NaN
    if (isfinite(r->rel_error)) cJSON_AddNumberToObject(o, "error", r->rel_error);
    else cJSON_AddNullToObject(o, "error");
    if (isfinite(r->expected)) cJSON_AddNumberToObject(o, "expected", r->expected);
    if (isfinite(r->measured)) cJSON_AddNumberToObject(o, "measured", r->measured);
    if (isfinite(r->tolerance)) cJSON_AddNumberToObject(o, "verify_tolerance", r->tolerance);
    return FL_OK;
  }
  const cJSON *bs = cJSON_GetObjectItem(
    cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v->base, "solvers"), r->solver), set), key);
  if (!bs) {
    printf("%-22s %-16s %-12s %-10s\n", label, who, r->quantity, "MISSING");
    v->t->missing++;
    return FL_OK;
  }
  v->t->quantities++;
  const char *bv = cJSON_GetStringValue(cJSON_GetObjectItem(bs, "verdict"));
  if (!bv || strcmp(bv, r->verdict)) {
    int worse = (bv && !strcmp(bv, "pass")) || !strcmp(r->verdict, "error");
    printf("%-22s %-16s %-12s %-10s %12s %12s\n", label, who, r->quantity,
           worse ? "REGRESSED" : "CHANGED", bv ? bv : "?", r->verdict);
    v->t->regressions += worse;
    v->t->changed += !worse;
    return FL_OK;
  }
  const cJSON *be = cJSON_GetObjectItem(bs, "error");
  if (r->status != 0 || !be) return FL_OK;
  double b = cJSON_IsNumber(be) ? be->valuedouble : NAN, e = r->rel_error;
  int worse = isnan(b) ? 0 : isnan(e) || e > b * (1 + VERIFY_REL) + VERIFY_ABS;
  int better = !isnan(b) && !isnan(e) && e < b * (1 - VERIFY_REL) - VERIFY_ABS;
  if (worse || better)
    printf("%-22s %-16s %-12s %-10s %12.6g %12.6g (error; allowed +%g%% + %g)\n", label, who,
           r->quantity, worse ? "REGRESSED" : "improved", b, e, 100 * VERIFY_REL, VERIFY_ABS);
  v->t->regressions += worse;
  return FL_OK;
}


/* a baseline's text judged as check would judge a record (fl_harness.h; the fuzzer's entry) */
int fl_check_read_baseline(const char *text, size_t len, int *ncase) {
  *ncase = 0;
  cJSON *base = cJSON_ParseWithLength(text, len);
  if (!base) return fl_seterr(FL_ERR_FORMAT, "baseline: not JSON");
  const cJSON *bsteps = cJSON_GetObjectItem(base, "steps");
  int steps = cJSON_IsNumber(bsteps) ? bsteps->valueint : 0;
  if (steps < 1) {
    cJSON_Delete(base);
    return fl_seterr(FL_ERR_FORMAT, "baseline: no valid \"steps\" (expected a positive integer)");
  }
  // the same comparison as `check`, of a record with every quantity 1 against each solver's
  // entry, after its options are applied to that solver
  record r;
  memset(&r, 0, sizeof r);
  for (int q = 0; q < NQ; q++) r.q[q] = 1;
  check_tally t = {0};
  const char *const *solvers = fl_solver_list();
  int rc = FL_OK;
  for (int k = 0; solvers[k] && rc >= 0; k++) {
    const cJSON *bs = cJSON_GetObjectItem(cJSON_GetObjectItem(base, "solvers"), solvers[k]);
    if (!bs) continue;
    const char *opts = cJSON_GetStringValue(cJSON_GetObjectItem(bs, "options"));
    fl_solver *s = NULL;
    fl_run_spec os = {.opts = opts};
    rc = fl_run_solver(&os, solvers[k], &s, NULL);
    fl_solver_destroy(s);
    if (rc < 0) break;
    fl__check_compare("baseline", solvers[k], bs, &r, steps, 0, &t);
    (*ncase)++;
  }
  cJSON_Delete(base);
  return rc;
}

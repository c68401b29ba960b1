// SPDX-License-Identifier: Apache-2.0
/* check.c: `frictionlab check`, accuracy regression checks against recorded baselines.
 *
 * A case is one scene (canonical, or a user's scene file) run for a stated number of steps with
 * one solver at stated options. Its record: steps whose solver ended with a negative reason,
 * quantiles over the steps of the common merit (contact natural map, FCLIB normalization), of
 * the joint residual and of the solver's own residual at return, the mean iteration count, and
 * observables measured from the geometry
 * (deepest penetration over the run, final largest drift of a body from its start). Every
 * quantity is "lower is better"; a case regresses when
 *
 *     new > base (1 + rel) + abs
 *
 * with (rel, abs) stored per case and quantity in the baseline. `--update --spread-from DIR`
 * chooses them from the spread between this build's record and another build's (DIR, recorded
 * by the other build with `--update --dir DIR`): rel = max(floor, 4 x relative spread). The
 * floors and the per-scene steps and solver options are in the tables below; docs/check.md
 * gives the reasons and the mutation table. A case whose solver fails every step records that
 * as its expected outcome, and a later run that no longer does is reported (the baseline is
 * stale either way).
 *
 * Baselines: results/baselines/<scene>.json for canonical scenes, found beside the executable
 * (../results/baselines from the build folder) or in the source tree, or given with
 * --baselines DIR; <file>.baseline.json beside a user's scene file. Missing baselines are an
 * error unless --update.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../../sim/fl_world.h"
#include "fl_args.h"
#include "../fl_harness.h"
#include "check_impl.h"
#include "fl_verify.h"
#include "../run/fl_run.h"

/* a scene file checked at its own duration beyond this many steps is cut, and says so */
enum { FILE_MAXSTEPS = 100000 };
/* a recorded case whose last step ends above this common merit is far from converged */
#define FAR_MERIT 1e-3
/* the quick verify suite's CPU solvers (peers are not FrictionLab's to check) */
static const char verify_solvers[] = "pgs,jacobi,primal-descent,dual-descent,sap,nsn,prox";
/* tolerance of a verify row's error (relative error, or absolute where the answer is 0) */
#define VERIFY_REL 0.01
#define VERIFY_ABS 1e-9

/* the recorded quantities, in this order */
static const char *const qname[NQ] = {"nfail",      "merit_p50", "merit_p90",
                                      "merit_max",  "joint_p90", "iters_mean",
                                      "pen_max",    "drift_max", "own_p90",
                                      "solve_s",    "limit_steps"};
/* tolerance floors (rel, abs) per quantity: what is allowed when two builds agree exactly.
 * They absorb round-off on another compiler or BLAS without hiding a 1 % change in accuracy;
 * solve_s is informative only. */
static const double qrel[NQ] = {0, 0.01, 0.01, 0.01, 0.01, 0.02, 0.01, 0.01, 0.1, INFINITY, 0};
static const double qabs[NQ] = {0, 1e-12, 1e-12, 1e-12, 1e-12, 0.05, 1e-10, 1e-9, 1e-14, INFINITY, 0};
/* tolerance = max(floor, SPREAD_FACTOR x measured spread between two builds) */
#define SPREAD_FACTOR 4.0

/* Per-scene case set-up: enough steps for contact to happen and the solver to matter, and
 * scene overrides keeping a case small. Scenes not listed run DEFAULT_STEPS as they are. */
enum { DEFAULT_STEPS = 20 };
typedef struct {
  const char *scene, *set;
  int steps;
} scene_case;
static const scene_case scene_cases[] = {
  {"granular", "n=60", 20},   /* 60 grains: contact from step 0, 238 contacts by step 200 */
  {"table_pile", NULL, 60},   /* the first contact is at step 35 */
  {"box_pile", NULL, 30},     /* the bottom layer lands from step 16, the second follows */
  {"spinning_coin", "rings=8", 20}, /* not the default 12 rings: the one coin couples every
                                       triangle, so NSN's Alart-Curnier Jacobian (3 nc rows) is
                                       dense and its LU grows like rows^2.5: 1.2 s a step at 8
                                       rings (1152 rows), 7-9 s at 12 (2592), 0.1 s on the fan
                                       (3 Newton iterations each; docs/coin.md) */
  {NULL, NULL, 0},
};

/* Per-case solver options, so that a case's solver converges where a modest budget allows it
 * (a case that fails every step can only regress in its merit). Applied before --set. */
typedef struct {
  const char *scene, *solver, *opts; /* scene "*": every scene */
} solver_case;
static const solver_case solver_cases[] = {
  {"*", "nsn", "max_iter=30"},              /* its 8-iteration default fails every step */
  {"cylinder_press", "pgs", "max_iter=5000"}, /* converges in 1354 sweeps on average */
  {"*", "admm", "max_iter=2000"}, /* 1e5 by default, sized for single FCLIB problems: on world
                                    steps a failing step would take 1e5 iterations */
  {NULL, NULL, NULL},
};




static const scene_case *find_scene_case(const char *scene) {
  for (const scene_case *c = scene_cases; c->scene; c++)
    if (!strcmp(c->scene, scene)) return c;
  return NULL;
}


/* the case options of (scene, solver), comma-joined into buf (n bytes) */
static const char *case_opts(const char *scene, const char *solver, char *buf, size_t n) {
  buf[0] = '\0';
  for (const solver_case *c = solver_cases; c->scene; c++) {
    if (strcmp(c->solver, solver) || (strcmp(c->scene, "*") && strcmp(c->scene, scene)))
      continue;
    size_t len = strlen(buf);
    snprintf(buf + len, n - len, "%s%s", len ? "," : "", c->opts);
  }
  return buf;
}


static const char *status_name(int st) { return st == 0 ? "ok" : st == 1 ? "unsupported" : "error"; }


static const char *outcome_name(const record *r, int steps) {
  if (r->status != 0) return status_name(r->status);
  return r->q[0] == 0 ? "no failed step" : r->q[0] >= steps ? "fails every step" : "fails some steps";
}


/* the command line as declared (fl_args.h); copied into check_args */
typedef struct check_cli {
  fl_arg_multi pos, set_arg;
  int update;
  long steps;
  const char *only, *solver_list, *dir, *spread_dir;
} check_cli;

#define A(m) offsetof(check_cli, m)
static const fl_arg_desc check_flags[] = {
  {"--update", FL_ARG_FLAG, A(update), 0, 0, NULL, NULL,
   "record the baselines (after a deliberate change), at --steps N if given (default: per "
   "scene, see docs/check.md; a scene file: its duration); with --solver, other solvers' "
   "records in the file are kept"},
  {"--only", FL_ARG_STR, A(only), 0, 0, "LIST", NULL,
   "canonical scenes by name, comma-separated (verify: the analytic suite alone)"},
  {"--solver", FL_ARG_STR, A(solver_list), 0, 0, "a,b", NULL,
   "these solvers only (default: every registered CPU solver)"},
  {"--steps", FL_ARG_INT, A(steps), 1, MAXSTEPS, "N", NULL,
   "steps per case; without --update it must equal the baseline's"},
  {"--set", FL_ARG_MULTI, A(set_arg), 0, 0, "k=v", NULL,
   "a solver option on top of the case's (to see a regression on purpose); docs/usage.md, "
   "\"What --set means\""},
  {"--baselines", FL_ARG_STR, A(dir), 0, 0, "DIR", NULL,
   "where baselines are (--dir is the same); default: results/baselines beside the "
   "executable's folder, else in the source tree; for a scene file, FILE.baseline.json beside it"},
  {"--dir", FL_ARG_STR, A(dir), 0, 0, "DIR", NULL, NULL},
  {"--spread-from", FL_ARG_STR, A(spread_dir), 0, 0, "D", NULL,
   "with --update: set each tolerance from the spread between this build and the records "
   "another build wrote to D (max(floor, 4 x spread))"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef A

static const fl_cmd_spec check_spec = {
  "check", "[SCENE.json]", 1, offsetof(check_cli, pos),
  "Runs every canonical scene (or the scene file given) with every registered CPU solver for a\n"
  "stated number of steps and compares accuracy with the recorded baselines: failed steps,\n"
  "merit quantiles over steps, joint residual, mean iterations, deepest penetration, final\n"
  "drift and steps outside the scene's limits, each with its own tolerance; then the quick\n"
  "analytic suite of `frictionlab verify` (--only verify selects it alone): each quantity's\n"
  "verdict and error against verify.json. Prints what moved; exits 1 on a regression, on a\n"
  "case whose expected outcome changed and on a missing baseline, 2 on bad arguments. A\n"
  "recording warns about a solver failing every step, a last step far from converged (merit\n"
  "above 1e-3) and limits crossed. A scene file runs its own duration (--steps N overrides).\n",
  NULL, check_flags};


static char *read_file(const char *path) {
  FILE *f = NULL;
  // a regular file of at most 64 MiB (a baseline is a few kB)
  if (fl_open_input(path, "baseline (.json)", 64.0 * 1048576, &f) < 0) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = n >= 0 ? fl_malloc((size_t)n + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    fl_free(buf);
    buf = NULL;
  }
  if (buf) buf[n] = '\0';
  fclose(f);
  return buf;
}


/* writes JSON text to path through a temporary file */
static int write_text(const char *path, const char *text) {
  fl_outfile o;
  FL_TRY(fl_outfile_open(&o, path, "baseline"));
  if (fputs(text, o.f) < 0 || fputc('\n', o.f) == EOF) {
    fl_outfile_abort(&o);
    return fl_seterr(FL_ERR_IO, "%s: write failed", path);
  }
  return fl_outfile_commit(&o);
}


static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}


/* Finds the canonical baselines folder: beside the executable's folder (build/frictionlab ->
 * results/baselines), then in the source tree this binary was built from. Writes the places
 * looked into `looked` for the error message. Returns 1 when found (path in out), else 0. */
static int find_baselines(char *out, size_t n, char *looked, size_t nl) {
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  looked[0] = '\0';
  const char *cand[2] = {NULL, FL_SOURCE_DIR "/results/baselines"};
  char buf[4200];
  if (len > 0) {
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(buf, sizeof buf, "%s/../results/baselines", exe);
    cand[0] = buf;
  }
  for (int k = 0; k < 2; k++) {
    if (!cand[k]) continue;
    size_t u = strlen(looked);
    snprintf(looked + u, nl - u, "%s%s", u ? ", " : "", cand[k]);
    if (is_dir(cand[k])) {
      char *real = realpath(cand[k], NULL);
      snprintf(out, n, "%s", real ? real : cand[k]);
      free(real);
      return 1;
    }
  }
  return 0;
}


/* FNV-1a of a file's bytes as 16 hex digits in out (17 bytes); "" when unreadable */
static void file_hash(const char *path, char *out) {
  char *text = read_file(path);
  out[0] = '\0';
  if (!text) return;
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) h = (h ^ *p) * 1099511628211ull;
  snprintf(out, 17, "%016llx", (unsigned long long)h);
  fl_free(text);
}


static cJSON *load_json(const char *path) {
  char *text = read_file(path);
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  fl_free(text);
  return j;
}


/* (rel, abs) of quantity q of a case: the baseline's own, else the floors */
static void case_tol(const cJSON *bs, int q, double *rel, double *ab) {
  *rel = qrel[q];
  *ab = qabs[q];
  const cJSON *t = cJSON_GetObjectItem(cJSON_GetObjectItem(bs, "tolerance"), qname[q]);
  if (!t) return;
  const cJSON *r = cJSON_GetObjectItem(t, "rel"), *a = cJSON_GetObjectItem(t, "abs");
  if (cJSON_IsNumber(r)) *rel = r->valuedouble;
  if (cJSON_IsNumber(a)) *ab = a->valuedouble;
}


/* the tolerance object of a new record: floors widened by the spread against `other` (the
 * same case recorded by another build), and the spread itself for the record */
static void add_tolerance(cJSON *o, const record *r, const cJSON *other) {
  cJSON *tol = cJSON_AddObjectToObject(o, "tolerance");
  cJSON *spr = other ? cJSON_AddObjectToObject(o, "spread") : NULL;
  for (int q = 0; q < NQ; q++) {
    if (isinf(qrel[q])) continue;
    double rel = qrel[q], ab = qabs[q];
    const cJSON *oq = cJSON_GetObjectItem(other, qname[q]);
    if (cJSON_IsNumber(oq)) {
      double a = r->q[q], b = oq->valuedouble, d = fabs(a - b), m = fmax(fabs(a), fabs(b));
      if (q == 0) {
        ab = fmax(ab, ceil(SPREAD_FACTOR * d)); // failed steps: whole steps
      } else if (d > 0) {
        rel = fmax(rel, SPREAD_FACTOR * d / m);
      }
      cJSON_AddNumberToObject(spr, qname[q], m > 0 ? d / m : 0);
    }
    cJSON *t = cJSON_AddObjectToObject(tol, qname[q]);
    cJSON_AddNumberToObject(t, "rel", rel);
    cJSON_AddNumberToObject(t, "abs", ab);
  }
}


typedef struct {
  int regressions, changed, cases, missing;
  int quantities, regressed_cases; /* quantities compared; cases with a regression */
} tally;


/* The progress bar (stderr, on a terminal only) and the table rows (stdout) share a terminal:
 * a row first clears the bar's line, which is drawn again at the next update. */
static fl_progress *check_bar;
static void row_begin(void) {
  if (check_bar && check_bar->active) fputs("\r\033[K", stderr);
}


/* Whether `--set` lowered this solver's iteration budget (max_iter, for all solvers or as
 * solver.max_iter): then fewer iterations are the cut, not an improvement. */
static int budget_cut(const char *solver, int nset, char **set) {
  size_t n = strlen(solver);
  for (int k = 0; k < nset; k++) {
    const char *key = set[k];
    if (strncmp(key, solver, n) == 0 && key[n] == '.') key += n + 1;
    if (strncmp(key, "max_iter=", 9) == 0) return 1;
  }
  return 0;
}


/* Compares record r of a case with its baseline bs and prints what moved. */
static void compare(const char *label, const char *solver, const cJSON *bs, const record *r,
                    int steps, int cut, tally *t) {
  int before = t->regressions;
  const char *bst = cJSON_GetStringValue(cJSON_GetObjectItem(bs, "status"));
  if (!bst || strcmp(bst, status_name(r->status)) != 0) {
    int worse = r->status != 0 && bst && !strcmp(bst, "ok");
    row_begin();
    printf("%-22s %-16s %-12s %-10s %12s %12s\n", label, solver, "status",
           worse ? "REGRESSED" : "CHANGED", bst ? bst : "?", status_name(r->status));
    t->regressions += worse;
    t->regressed_cases += worse;
    t->changed += !worse;
    t->quantities++;
    return;
  }
  if (r->status != 0) return;
  // an expected outcome that no longer holds: the baseline is stale (better or worse)
  const char *bout = cJSON_GetStringValue(cJSON_GetObjectItem(bs, "outcome"));
  const char *now = outcome_name(r, steps);
  if (bout && strcmp(bout, now) && (!strcmp(bout, "fails every step") || !strcmp(bout, "no failed step"))) {
    int worse = !strcmp(bout, "no failed step");
    row_begin();
    printf("%-22s %-16s %-12s %-10s %12s %12s\n", label, solver, "outcome",
           worse ? "REGRESSED" : "CHANGED", bout, now);
    if (worse) t->regressions++;
    else t->changed++;
  }
  for (int q = 0; q < NQ; q++) {
    const cJSON *bq = cJSON_GetObjectItem(bs, qname[q]);
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
      row_begin();
      char change[32];
      if (b != 0) snprintf(change, sizeof change, "%+8.2f%%", 100 * (v - b) / fabs(b));
      else snprintf(change, sizeof change, "%9s", "new");
      printf("%-22s %-16s %-12s %-10s %12.6g %12.6g %s (allowed %+.3g%%)\n", label, solver,
             qname[q], verdict, b, v, change,
             b != 0 ? 100 * (rel + ab / fabs(b)) : INFINITY);
    }
    t->regressions += worse;
  }
  t->regressed_cases += t->regressions > before;
}


/* What a recording should not hide: a solver failing every step, a last step far from
 * converged, and the scene's limits crossed (declared ones and the automatic ones). */
static void warn_record(const char *label, const char *solver, const record *r, int steps) {
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


typedef struct {
  int update, steps; /* steps 0: per scene */
  const char *only, *solver_list, *dir, *spread_dir, *file;
  int nset;
  char **set;
} check_args;


/* Checks (or records) every solver on one scene; baseline at path. Returns 0, or 2 on an
 * error of check itself (message printed). */
static int check_scene(const check_args *a, const case_input *in, const char *label,
                       const char *path, const char *other_path, tally *t) {
  cJSON *base = load_json(path);
  if (!a->update && !base) {
    row_begin();
    printf("%-22s %-16s %-12s %-10s (no baseline at %s)\n", label, "*", "-", "MISSING", path);
    t->missing++;
    return 0;
  }
  int steps = a->steps;
  if (!a->update) {
    const cJSON *bsteps = cJSON_GetObjectItem(base, "steps");
    int bn = cJSON_IsNumber(bsteps) ? bsteps->valueint : 0;
    if (bn < 1) {
      fprintf(stderr, "frictionlab check: %s: no valid \"steps\" (expected a positive integer)\n", path);
      cJSON_Delete(base);
      return 2;
    }
    if (steps && steps != bn) {
      fprintf(stderr, "frictionlab check: %s was recorded at %d steps, not %d: drop --steps to "
              "compare, or record at %d with --update\n", path, bn, steps, steps);
      cJSON_Delete(base);
      return 2;
    }
    steps = bn;
    const char *bset = cJSON_GetStringValue(cJSON_GetObjectItem(base, "scene_set"));
    if (in->scene && bset && strcmp(bset, in->set)) {
      fprintf(stderr, "frictionlab check: %s was recorded with scene settings '%s', the case "
              "table now says '%s': record again with --update\n", path, bset, in->set);
      cJSON_Delete(base);
      return 2;
    }
    if (in->file) {
      char h[17];
      file_hash(in->file, h);
      const char *bh = cJSON_GetStringValue(cJSON_GetObjectItem(base, "scene_hash"));
      if (bh && strcmp(bh, h)) {
        fprintf(stderr, "frictionlab check: %s changed since its baseline %s was recorded "
                "(content hash %s, baseline %s): record again with --update\n", in->file, path, h, bh);
        cJSON_Delete(base);
        return 2;
      }
    }
  } else if (!steps && in->file) {
    // a user's scene runs its own duration (cut at FILE_MAXSTEPS, and said)
    fl_run_spec sp = {.scene = in->file};
    fl_run run;
    if (fl_run_open(&sp, &run) < 0) {
      fprintf(stderr, "frictionlab check: %s\n", fl_errmsg());
      cJSON_Delete(base);
      return 2;
    }
    const fl_world *w = run.world;
    double own = floor(w->duration / w->dt + 0.5);
    steps = own < 1 ? 1 : own > FILE_MAXSTEPS ? FILE_MAXSTEPS : (int)own;
    printf("check: %s: %d steps (%s %g s at dt %g s; --steps N for another length)\n", in->file,
           steps, own > FILE_MAXSTEPS ? "cut from its duration" : "its duration", w->duration, w->dt);
    fl_run_close(&run);
  } else if (!steps) {
    const scene_case *sc = in->scene ? find_scene_case(in->scene) : NULL;
    steps = sc ? sc->steps : DEFAULT_STEPS;
  }
  cJSON *other = other_path ? load_json(other_path) : NULL;
  cJSON *out = NULL, *outs = NULL;
  if (a->update) {
    out = cJSON_CreateObject();
    cJSON_AddNumberToObject(out, "format", 2);
    cJSON_AddStringToObject(out, in->scene ? "scene" : "scene_file", in->scene ? in->scene : in->file);
    if (in->file) {
      char h[17];
      file_hash(in->file, h);
      cJSON_AddStringToObject(out, "scene_hash", h);
    }
    cJSON_AddNumberToObject(out, "steps", steps);
    cJSON_AddStringToObject(out, "scene_set", in->set);
    cJSON_AddStringToObject(out, "tolerance_rule",
                            other ? "max(floor, 4 x spread against another build)" : "floors");
    outs = cJSON_AddObjectToObject(out, "solvers");
    // a partial update keeps the other solvers' records when the steps agree
    const cJSON *bsteps = cJSON_GetObjectItem(base, "steps");
    if (a->solver_list && base && cJSON_IsNumber(bsteps) && bsteps->valueint == steps) {
      const cJSON *e;
      cJSON_ArrayForEach(e, cJSON_GetObjectItem(base, "solvers"))
        if (!fl_list_has(a->solver_list, e->string))
          cJSON_AddItemToObject(outs, e->string, cJSON_Duplicate(e, 1));
    }
  }
  const char *const *solvers = fl_solver_list();
  int err = 0;
  for (int k = 0; solvers[k] && !err; k++) {
    if (!fl_list_has(a->solver_list, solvers[k])) continue;
    // GPU solvers are checked against their CPU twins (tests/test_gpu.c), not against
    // baselines, and peer (Siconos) solvers are not FrictionLab's to check: only when named
    if (!a->solver_list &&
        (fl_solver_ops_caps(fl_solver_find(solvers[k])) & (FL_CAP_GPU | FL_CAP_PEER)))
      continue;
    const cJSON *bs = base ? cJSON_GetObjectItem(cJSON_GetObjectItem(base, "solvers"), solvers[k]) : NULL;
    if (!a->update && !bs) {
      row_begin();
      const char *so = fl_solver_ops_origin(fl_solver_find(solvers[k])); // a plug-in's file
      printf("%-22s %-16s %-12s %-10s (no record of %s in %s; record it with "
             "scripts/record-baselines --solver %s%s%s)\n", label, solvers[k], "-", "MISSING",
             solvers[k], path, solvers[k], so ? " --plugin " : "", so ? so : "");
      t->missing++;
      continue;
    }
    char obuf[512];
    const char *opts = a->update ? (in->scene ? case_opts(in->scene, solvers[k], obuf, sizeof obuf) : "")
                                 : cJSON_GetStringValue(cJSON_GetObjectItem(bs, "options"));
    record r;
    if (fl__check_run_case(in, solvers[k], opts ? opts : "", steps, a->nset, a->set, &r) < 0) {
      fprintf(stderr, "frictionlab check: %s with %s: %s\n", label, solvers[k], fl_errmsg());
      err = 2;
      break;
    }
    t->cases++;
    if (!a->update) {
      compare(label, solvers[k], bs, &r, steps, budget_cut(solvers[k], a->nset, a->set), t);
      if (check_bar) fl_progress_update(check_bar, check_bar->done + 1);
      continue;
    }
    cJSON *o = cJSON_AddObjectToObject(outs, solvers[k]);
    cJSON_AddStringToObject(o, "options", opts ? opts : "");
    cJSON_AddStringToObject(o, "status", status_name(r.status));
    cJSON_AddStringToObject(o, "outcome", outcome_name(&r, steps));
    if (r.status == 0) {
      for (int q = 0; q < NQ; q++) cJSON_AddNumberToObject(o, qname[q], r.q[q]);
      const cJSON *oc = cJSON_GetObjectItem(cJSON_GetObjectItem(other, "solvers"), solvers[k]);
      const cJSON *ost = cJSON_GetObjectItem(other, "steps");
      if (oc && (!cJSON_IsNumber(ost) || ost->valueint != steps)) oc = NULL;
      add_tolerance(o, &r, oc);
    }
    row_begin();
    printf("%-22s %-16s %-12s %-10s %s\n", label, solvers[k], "-", "recorded", outcome_name(&r, steps));
    if (check_bar) fl_progress_update(check_bar, check_bar->done + 1);
    warn_record(label, solvers[k], &r, steps);
  }
  if (a->update && !err) {
    char *txt = cJSON_Print(out);
    int rc = txt ? write_text(path, txt) : fl_seterr(FL_ERR_NOMEM, "check: out of memory");
    cJSON_free(txt);
    if (rc < 0) {
      fprintf(stderr, "frictionlab check: %s\n", fl_errmsg());
      err = 2;
    }
  }
  cJSON_Delete(out);
  cJSON_Delete(other);
  cJSON_Delete(base);
  return err;
}


//---- the quick verify suite as a baseline (verify.json) ----

/* Per row of the suite (docs/verify.md): the verdict and the error of every quantity. A
 * verdict that was "pass" and is no longer, or a new "error", is a regression; another change
 * of verdict (a failure that now passes) means the baseline is stale; an error above
 * base (1 + VERIFY_REL) + VERIFY_ABS is a regression too (a failing row can fail worse). */
typedef struct {
  const check_args *a;
  cJSON *solvers;     /* the record being written (update) */
  const cJSON *base;  /* the recorded one (compare) */
  tally *t;
  int rows;
} verify_ctx;


static cJSON *child_object(cJSON *o, const char *key) {
  cJSON *c = cJSON_GetObjectItem(o, key);
  return c ? c : cJSON_AddObjectToObject(o, key);
}


static int verify_row(void *ctx, const fl_verify_row *r) {
  verify_ctx *v = ctx;
  char key[96], label[40], who[160];
  const char *set = *r->settings ? r->settings : "defaults";
  snprintf(key, sizeof key, "%s.%s", r->case_name, r->quantity);
  snprintf(label, sizeof label, "verify:%s", r->case_name);
  snprintf(who, sizeof who, "%s%s%s%s", r->solver, *r->settings ? "(" : "", r->settings,
           *r->settings ? ")" : ""); /* one word: the table stays columns */
  v->rows++;
  if (v->a->update) {
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


/* Checks (or records) the quick verify suite against dir/verify.json. Returns 0, or 2 on an
 * error of check itself (message printed). */
static int check_verify(const check_args *a, const char *dir, tally *t) {
  int regressions_before = t->regressions; // the suite is one case of many quantities
  char path[8800];
  snprintf(path, sizeof path, "%s/verify.json", dir);
  cJSON *base = load_json(path);
  if (!a->update && !base) {
    printf("%-22s %-16s %-12s %-10s (no baseline at %s)\n", "verify", "*", "-", "MISSING", path);
    t->missing++;
    return 0;
  }
  // the suite's CPU solvers, narrowed by --solver
  char list[256] = "", buf[256];
  snprintf(buf, sizeof buf, "%s", verify_solvers);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
    if (fl_list_has(a->solver_list, tok) && fl_solver_find(tok)) {
      size_t l = strlen(list);
      snprintf(list + l, sizeof list - l, "%s%s", l ? "," : "", tok);
    }
  if (!*list) {
    cJSON_Delete(base);
    return 0;
  }
  cJSON *out = NULL;
  verify_ctx v = {a, NULL, base, t, 0};
  if (a->update) {
    out = cJSON_CreateObject();
    cJSON_AddNumberToObject(out, "format", 1);
    cJSON_AddStringToObject(out, "suite", "frictionlab verify --quick (docs/verify.md)");
    cJSON_AddStringToObject(out, "tolerance_rule", "verdict unchanged; error <= base (1 + 0.01) + 1e-9");
    v.solvers = cJSON_AddObjectToObject(out, "solvers");
    // a partial update keeps the other solvers' records
    const cJSON *e;
    if (a->solver_list)
      cJSON_ArrayForEach(e, cJSON_GetObjectItem(base, "solvers"))
        if (!fl_list_has(a->solver_list, e->string))
          cJSON_AddItemToObject(v.solvers, e->string, cJSON_Duplicate(e, 1));
  }
  fl_verify_opts o = {1, NULL, list, a->nset, (const char *const *)a->set};
  int rc = fl__verify_run(&o, verify_row, &v);
  if (rc >= 0 && a->update) {
    char *txt = cJSON_Print(out);
    rc = txt ? write_text(path, txt) : fl_seterr(FL_ERR_NOMEM, "check: out of memory");
    cJSON_free(txt);
    if (rc >= 0) printf("%-22s %-16s %-12s %-10s %d quantities of the quick suite\n", "verify", list, "-", "recorded", v.rows);
  }
  cJSON_Delete(out);
  cJSON_Delete(base);
  if (rc < 0) {
    fprintf(stderr, "frictionlab check: verify: %s\n", fl_errmsg());
    return 2;
  }
  t->cases++;
  t->regressed_cases += t->regressions > regressions_before;
  return 0;
}


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
  tally t = {0};
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
    compare("baseline", solvers[k], bs, &r, steps, 0, &t);
    (*ncase)++;
  }
  cJSON_Delete(base);
  return rc;
}


int fl_cmd_check(int argc, char **argv) {
  check_args a = {0};
  check_cli cli;
  memset(&cli, 0, sizeof cli);
  int prc = fl_args_parse(&check_spec, argc, argv, &cli);
  if (prc) return prc == 1 ? 0 : 2;
  if (cli.pos.n > 0 && fl_scene_kind_of(cli.pos.v[0]) != FL_SCENE_FILE) {
    fprintf(stderr, "frictionlab check: unknown argument '%s' (expected a scene file ending in "
                    ".json)\n", cli.pos.v[0]);
    return 2;
  }
  a.update = cli.update;
  a.steps = (int)cli.steps;
  a.only = cli.only;
  a.solver_list = cli.solver_list;
  a.dir = cli.dir;
  a.spread_dir = cli.spread_dir;
  a.file = cli.pos.n > 0 ? cli.pos.v[0] : NULL;
  a.nset = cli.set_arg.n;
  a.set = (char **)cli.set_arg.v;
  if (a.spread_dir && !a.update) {
    fprintf(stderr, "frictionlab check: --spread-from needs --update\n");
    return 2;
  }
  if (a.file && a.only) {
    fprintf(stderr, "frictionlab check: --only selects canonical scenes; not with a scene file\n");
    return 2;
  }
  fl_register_all();
  if (a.solver_list) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", a.solver_list);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
      if (!fl_solver_find(t)) {
        fprintf(stderr, "frictionlab check: unknown solver '%s'\n", t);
        return 2;
      }
  }
  if (a.only) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", a.only);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
      if (!fl_scene_find(t) && strcmp(t, "verify")) {
        fprintf(stderr, "frictionlab check: unknown scene '%s'\n", t);
        return 2;
      }
  }
  if (a.spread_dir && !is_dir(a.spread_dir)) {
    fprintf(stderr, "frictionlab check: --spread-from %s: not a folder\n", a.spread_dir);
    return 2;
  }

  char dir[4400], looked[8400];
  tally t = {0};
  fl_progress bar = {0};
  if (a.file) {
    // a user's scene: its baseline beside it, or DIR/<stem>.json
    if (access(a.file, R_OK) != 0) {
      fprintf(stderr, "frictionlab check: %s: cannot read: %s\n", a.file, strerror(errno));
      return 2;
    }
    const char *base = strrchr(a.file, '/');
    base = base ? base + 1 : a.file;
    char stem[1024], path[4200], other[4200];
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(base) - 5), base);
    if (a.dir) snprintf(path, sizeof path, "%s/%s.json", a.dir, stem);
    else snprintf(path, sizeof path, "%.*s.baseline.json", (int)(strlen(a.file) - 5), a.file);
    if (a.spread_dir) snprintf(other, sizeof other, "%s/%s.json", a.spread_dir, stem);
    if (a.dir && !a.update && !is_dir(a.dir)) {
      fprintf(stderr, "frictionlab check: --baselines %s: not a folder\n", a.dir);
      return 2;
    }
    printf("%-22s %-16s %-12s %-10s %12s %12s %9s\n", "scene", "solver", "quantity", "verdict",
           "baseline", "now", "change");
    case_input in = {NULL, a.file, ""};
    int rc = check_scene(&a, &in, stem, path, a.spread_dir ? other : NULL, &t);
    if (rc) return rc;
    snprintf(dir, sizeof dir, "%s", path);
  } else {
    if (a.dir) {
      snprintf(dir, sizeof dir, "%s", a.dir);
      if (a.update && mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "frictionlab check: %s: cannot create: %s\n", dir, strerror(errno));
        return 2;
      }
      if (!is_dir(dir)) {
        fprintf(stderr, "frictionlab check: --baselines %s: not a folder (record baselines there "
                "with --update)\n", dir);
        return 2;
      }
    } else if (!find_baselines(dir, sizeof dir, looked, sizeof looked)) {
      fprintf(stderr, "frictionlab check: no baselines folder; looked in %s. Give one with "
              "--baselines DIR (record with --update --baselines DIR)\n", looked);
      return 2;
    }
    printf("%-22s %-16s %-12s %-10s %12s %12s %9s\n", "scene", "solver", "quantity", "verdict",
           "baseline", "now", "change");
    fflush(stdout);
    // progress over the (scene, solver) cases, on a terminal
    long ncase = 0;
    for (const fl_scene_desc *const *sc = fl_scene_list(); *sc; sc++) {
      if (!fl_list_has(a.only, (*sc)->name)) continue;
      for (const char *const *sv = fl_solver_list(); *sv; sv++)
        ncase += fl_list_has(a.solver_list, *sv) &&
                 (a.solver_list ||
                  !(fl_solver_ops_caps(fl_solver_find(*sv)) & (FL_CAP_GPU | FL_CAP_PEER)));
    }
    fl_progress_begin(&bar, "check", ncase);
    check_bar = &bar;
    for (const fl_scene_desc *const *sc = fl_scene_list(); *sc; sc++) {
      const char *scene = (*sc)->name;
      if (!fl_list_has(a.only, scene)) continue;
      char path[8800], other[8800];
      snprintf(path, sizeof path, "%s/%s.json", dir, scene);
      if (a.spread_dir) snprintf(other, sizeof other, "%s/%s.json", a.spread_dir, scene);
      const scene_case *c = find_scene_case(scene);
      case_input in = {scene, NULL, c && c->set ? c->set : ""};
      int rc = check_scene(&a, &in, scene, path, a.spread_dir ? other : NULL, &t);
      if (rc) {
        fl_progress_end(&bar);
        check_bar = NULL;
        return rc;
      }
    }
    row_begin();
    bar.active = 0; // the table is complete: no closing bar under it
    check_bar = NULL;
    // the quick analytic suite (its own durations; --steps does not apply)
    if (fl_list_has(a.only, "verify")) {
      int rc = check_verify(&a, dir, &t);
      if (rc) return rc;
    }
  }
  if (a.update) {
    printf("check --update: %d cases recorded in %s\n", t.cases, dir);
    return 0;
  }
  // a case is one solver on one scene; each case compares several quantities
  printf("check: %d case%s, %d quantities against %s: %d regressions in %d case%s, %d changed "
         "outcomes, %d without baseline\n", t.cases, t.cases == 1 ? "" : "s", t.quantities, dir,
         t.regressions, t.regressed_cases, t.regressed_cases == 1 ? "" : "s", t.changed, t.missing);
  if (t.missing)
    printf("check: a case without a baseline fails; record it with scripts/record-baselines "
           "--solver NAME (check's options pass through, --plugin PATH and --only SCENE "
           "included), or in this build alone with frictionlab check --update --solver NAME "
           "(docs/usage.md, \"Adding a solver\")\n");
  return t.regressions || t.changed || t.missing ? 1 : 0;
}

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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../sim/fl_world.h"
#include "fl_harness.h"

enum { NQ = 10, MAXSTEPS = 4096, QOWN = 8, QSOLVE = 9 };

/* the recorded quantities, in this order */
static const char *const qname[NQ] = {"nfail",      "merit_p50", "merit_p90",
                                      "merit_max",  "joint_p90", "iters_mean",
                                      "pen_max",    "drift_max", "own_p90",
                                      "solve_s"};
/* tolerance floors (rel, abs) per quantity: what is allowed when two builds agree exactly.
 * They absorb round-off on another compiler or BLAS without hiding a 1 % change in accuracy;
 * solve_s is informative only. */
static const double qrel[NQ] = {0, 0.01, 0.01, 0.01, 0.01, 0.02, 0.01, 0.01, 0.1, INFINITY};
static const double qabs[NQ] = {0, 1e-12, 1e-12, 1e-12, 1e-12, 0.05, 1e-10, 1e-9, 1e-14, INFINITY};
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
  {NULL, NULL, NULL},
};


typedef struct {
  int status; /* 0 ok, 1 unsupported, 2 error */
  double q[NQ];
} record;


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


/* what a case runs on: a canonical scene with overrides, or a scene file */
typedef struct {
  const char *scene; /* canonical name, or NULL */
  const char *file;  /* scene file, or NULL */
  const char *set;   /* "k=v,k=v" overrides of the canonical scene, or "" */
} case_input;


static int create_world(const case_input *in, fl_world **w) {
  if (in->file) return fl_world_load_json(in->file, w);
  char buf[512];
  const char *sset[16];
  int ns = fl_split_list(in->set, buf, sizeof buf, sset, 16);
  if (ns < 0) return ns;
  return fl_scene_create(in->scene, ns, sset, w);
}


/* Runs one case; a solver that cannot take the problem (unsupported) or errs becomes the
 * record's status, not a failure of check itself. Returns FL_OK or the error of creating the
 * scene or the solver or of an option. */
static int run_case(const case_input *in, const char *solver, const char *opts, int steps,
                    int nset, char **set, record *r) {
  memset(r, 0, sizeof *r);
  fl_world *w = NULL;
  fl_solver *s = NULL;
  double *val = NULL, *merit = NULL, *joint = NULL, *own = NULL;
  int rc = create_world(in, &w);
  if (rc < 0) return rc;
  rc = fl_solver_create(solver, &s);
  if (rc >= 0 && opts && *opts) rc = fl_solver_set_options(s, opts);
  if (rc >= 0) rc = fl_harness_apply_sets(s, nset, set);
  if (rc < 0) goto done;
  val = fl_malloc((size_t)(fl_world_nobs(w) + 1) * sizeof *val);
  merit = fl_malloc((size_t)(steps + 1) * sizeof *merit);
  joint = fl_malloc((size_t)(steps + 1) * sizeof *joint);
  own = fl_malloc((size_t)(steps + 1) * sizeof *own);
  if (!val || !merit || !joint || !own) {
    rc = fl_seterr(FL_ERR_NOMEM, "check: out of memory");
    goto done;
  }
  int ipen = obs_index(w, "pen_max"), idrift = obs_index(w, "drift_max");
  long iters = 0;
  int n = 0;
  double t0 = fl_time_now();
  for (int k = 0; k < steps; k++) {
    fl_step_info info;
    int src = fl_world_step(w, s, &info);
    if (src == FL_ERR_UNSUPPORTED) {
      r->status = 1;
      goto done;
    }
    if (src < 0 || fl_world_observe(w, val) < 0) {
      r->status = 2;
      goto done;
    }
    if (info.res.reason < 0) r->q[0] += 1;
    // no contact: nothing for the merit to measure (the metric is NaN there)
    merit[n] = info.nc == 0 ? 0 : fmin(fl_metrics_merit(&info.met, NAN), 1e300);
    joint[n] = isfinite(info.met.bilateral) ? info.met.bilateral : (info.nh > 0 ? 1e300 : 0);
    // the solver's own residual at return: what a looser tolerance moves first
    own[n] = info.nc + info.nh == 0 ? 0 : isfinite(info.res.error) ? fabs(info.res.error) : 1e300;
    n++;
    iters += info.res.iters;
    if (ipen >= 0 && val[ipen] > r->q[6]) r->q[6] = val[ipen];
    if (idrift >= 0) r->q[7] = val[idrift];
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
  r->q[QSOLVE] = fl_time_now() - t0;
done:
  fl_free(val);
  fl_free(merit);
  fl_free(joint);
  fl_free(own);
  fl_solver_destroy(s);
  fl_world_free(w);
  return rc;
}


static const char *status_name(int st) { return st == 0 ? "ok" : st == 1 ? "unsupported" : "error"; }


static const char *outcome_name(const record *r, int steps) {
  if (r->status != 0) return status_name(r->status);
  return r->q[0] == 0 ? "no failed step" : r->q[0] >= steps ? "fails every step" : "fails some steps";
}


static void usage(FILE *f) {
  fprintf(f,
    "usage: frictionlab check [SCENE.json] [--update] [--only SCENE[,SCENE]] [--solver a,b]\n"
    "                         [--steps N] [--set [solver.]key=value]... [--baselines DIR]\n"
    "                         [--spread-from DIR]\n"
    "\n"
    "Runs every canonical scene (or the scene file given) with every registered CPU solver for a\n"
    "stated number of steps and compares accuracy with the recorded baselines: failed steps,\n"
    "merit quantiles over steps, joint residual, mean iterations, deepest penetration and\n"
    "final drift, each with its own tolerance. Prints what moved; exits 1 on a regression, on\n"
    "a case whose expected outcome changed and on a missing baseline, 2 on bad arguments.\n"
    "\n"
    "  --baselines DIR  where baselines are (--dir is the same); default: results/baselines\n"
    "                   beside the executable's folder, else in the source tree; for a scene\n"
    "                   file, FILE.baseline.json beside it\n"
    "  --update         record the baselines (after a deliberate change), at --steps N if\n"
    "                   given (default: per scene, see docs/check.md); with --solver, other\n"
    "                   solvers' records in the file are kept\n"
    "  --spread-from D  with --update: set each tolerance from the spread between this build\n"
    "                   and the records another build wrote to D (max(floor, 4 x spread))\n"
    "  --steps N        steps per case; without --update it must equal the baseline's\n"
    "  --set k=v        a solver option on top of the case's (to see a regression on purpose)\n");
}


static int in_list(const char *list, const char *name) {
  if (!list) return 1;
  size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)); p += n) {
    int start = p == list || p[-1] == ',', end = p[n] == '\0' || p[n] == ',';
    if (start && end) return 1;
  }
  return 0;
}


static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
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
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return fl_seterr(FL_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno));
  int ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
  if (fclose(f) != 0) ok = 0;
  if (!ok || rename(tmp, path) != 0) {
    remove(tmp);
    return fl_seterr(FL_ERR_IO, "%s: write failed", path);
  }
  return FL_OK;
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
} tally;


/* Compares record r of a case with its baseline bs and prints what moved. */
static void compare(const char *label, const char *solver, const cJSON *bs, const record *r,
                    int steps, tally *t) {
  const char *bst = cJSON_GetStringValue(cJSON_GetObjectItem(bs, "status"));
  if (!bst || strcmp(bst, status_name(r->status)) != 0) {
    int worse = r->status != 0 && bst && !strcmp(bst, "ok");
    printf("%-22s %-16s %-12s %-10s %12s %12s\n", label, solver, "status",
           worse ? "REGRESSED" : "CHANGED", bst ? bst : "?", status_name(r->status));
    t->regressions += worse;
    t->changed += !worse;
    return;
  }
  if (r->status != 0) return;
  // an expected outcome that no longer holds: the baseline is stale (better or worse)
  const char *bout = cJSON_GetStringValue(cJSON_GetObjectItem(bs, "outcome"));
  const char *now = outcome_name(r, steps);
  if (bout && strcmp(bout, now) && (!strcmp(bout, "fails every step") || !strcmp(bout, "no failed step"))) {
    int worse = !strcmp(bout, "no failed step");
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
    if (worse || moved) {
      char change[32];
      if (b != 0) snprintf(change, sizeof change, "%+8.2f%%", 100 * (v - b) / fabs(b));
      else snprintf(change, sizeof change, "%9s", "new");
      printf("%-22s %-16s %-12s %-10s %12.6g %12.6g %s (allowed %+.3g%%)\n", label, solver,
             qname[q], worse ? "REGRESSED" : v < b ? "improved" : "moved", b, v, change,
             b != 0 ? 100 * (rel + ab / fabs(b)) : INFINITY);
    }
    t->regressions += worse;
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
        if (!in_list(a->solver_list, e->string))
          cJSON_AddItemToObject(outs, e->string, cJSON_Duplicate(e, 1));
    }
  }
  const char *const *solvers = fl_solver_list();
  int err = 0;
  for (int k = 0; solvers[k] && !err; k++) {
    if (!in_list(a->solver_list, solvers[k])) continue;
    // GPU solvers are checked against their CPU twins (tests/test_gpu.c), not against
    // baselines, and peer (Siconos) solvers are not FrictionLab's to check: only when named
    if (!a->solver_list &&
        (fl_solver_ops_caps(fl_solver_find(solvers[k])) & (FL_CAP_GPU | FL_CAP_PEER)))
      continue;
    const cJSON *bs = base ? cJSON_GetObjectItem(cJSON_GetObjectItem(base, "solvers"), solvers[k]) : NULL;
    if (!a->update && !bs) {
      printf("%-22s %-16s %-12s %-10s\n", label, solvers[k], "-", "MISSING");
      t->missing++;
      continue;
    }
    char obuf[512];
    const char *opts = a->update ? (in->scene ? case_opts(in->scene, solvers[k], obuf, sizeof obuf) : "")
                                 : cJSON_GetStringValue(cJSON_GetObjectItem(bs, "options"));
    record r;
    if (run_case(in, solvers[k], opts ? opts : "", steps, a->nset, a->set, &r) < 0) {
      fprintf(stderr, "frictionlab check: %s with %s: %s\n", label, solvers[k], fl_errmsg());
      err = 2;
      break;
    }
    t->cases++;
    if (!a->update) {
      compare(label, solvers[k], bs, &r, steps, t);
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
    printf("%-22s %-16s %-12s %-10s %s\n", label, solvers[k], "-", "recorded", outcome_name(&r, steps));
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


static int is_json(const char *s) {
  size_t n = strlen(s);
  return n > 5 && strcmp(s + n - 5, ".json") == 0;
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
  tally t = {0, 0, 0, 0};
  const char *const *solvers = fl_solver_list();
  int rc = FL_OK;
  for (int k = 0; solvers[k] && rc >= 0; k++) {
    const cJSON *bs = cJSON_GetObjectItem(cJSON_GetObjectItem(base, "solvers"), solvers[k]);
    if (!bs) continue;
    const char *opts = cJSON_GetStringValue(cJSON_GetObjectItem(bs, "options"));
    fl_solver *s = NULL;
    rc = fl_solver_create(solvers[k], &s);
    if (rc >= 0 && opts && *opts) rc = fl_solver_set_options(s, opts);
    fl_solver_destroy(s);
    if (rc < 0) break;
    compare("baseline", solvers[k], bs, &r, steps, &t);
    (*ncase)++;
  }
  cJSON_Delete(base);
  return rc;
}


int fl_cmd_check(int argc, char **argv) {
  check_args a = {0};
  char *set[32];
  a.set = set;
  for (int k = 0; k < argc; k++) {
    const char *arg = argv[k];
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(arg, "--update")) {
      a.update = 1;
    } else if (!strcmp(arg, "--only") || !strcmp(arg, "--solver") || !strcmp(arg, "--set") ||
               !strcmp(arg, "--dir") || !strcmp(arg, "--baselines") || !strcmp(arg, "--steps") ||
               !strcmp(arg, "--spread-from")) {
      if (k + 1 >= argc) {
        fprintf(stderr, "frictionlab check: %s needs a value\n", arg);
        return 2;
      }
      const char *v = argv[++k];
      if (!strcmp(arg, "--only")) a.only = v;
      else if (!strcmp(arg, "--solver")) a.solver_list = v;
      else if (!strcmp(arg, "--dir") || !strcmp(arg, "--baselines")) a.dir = v;
      else if (!strcmp(arg, "--spread-from")) a.spread_dir = v;
      else if (!strcmp(arg, "--set")) {
        if (a.nset >= 32) {
          fprintf(stderr, "frictionlab check: more than 32 --set\n");
          return 2;
        }
        set[a.nset++] = (char *)v;
      } else {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end || n < 1 || n > MAXSTEPS) {
          fprintf(stderr, "frictionlab check: --steps %s: expected an integer in [1, %d]\n", v,
                  MAXSTEPS);
          return 2;
        }
        a.steps = (int)n;
      }
    } else if (arg[0] != '-' && is_json(arg) && !a.file) {
      a.file = arg;
    } else {
      fprintf(stderr, "frictionlab check: unknown argument '%s'%s\n", arg,
              arg[0] != '-' ? " (expected a scene file ending in .json)" : "");
      usage(stderr);
      return 2;
    }
  }
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
      if (!fl_scene_find(t)) {
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
    for (const fl_scene_desc *const *sc = fl_scene_list(); *sc; sc++) {
      const char *scene = (*sc)->name;
      if (!in_list(a.only, scene)) continue;
      char path[8800], other[8800];
      snprintf(path, sizeof path, "%s/%s.json", dir, scene);
      if (a.spread_dir) snprintf(other, sizeof other, "%s/%s.json", a.spread_dir, scene);
      const scene_case *c = find_scene_case(scene);
      case_input in = {scene, NULL, c && c->set ? c->set : ""};
      int rc = check_scene(&a, &in, scene, path, a.spread_dir ? other : NULL, &t);
      if (rc) return rc;
    }
  }
  if (a.update) {
    printf("check --update: %d cases recorded in %s\n", t.cases, dir);
    return 0;
  }
  printf("check: %d cases against %s: %d regressions, %d changed outcomes, %d without baseline\n",
         t.cases, dir, t.regressions, t.changed, t.missing);
  if (t.missing)
    printf("check: a case without a baseline fails; record it with --update\n");
  return t.regressions || t.changed || t.missing ? 1 : 0;
}

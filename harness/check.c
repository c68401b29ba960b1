/* check.c: `frictionlab check`, accuracy regression checks against committed baselines.
 *
 * A case is one canonical scene run for a few steps with one solver at its default options.
 * Its record: steps whose solver ended with a negative reason, quantiles over the steps of the
 * common merit (contact natural map, FCLIB normalization) and of the joint residual, the mean
 * iteration count, and observables measured from the geometry (deepest penetration over the
 * run, final largest drift of a body from its start). Baselines live in
 * results/baselines/<scene>.json with the tolerances used to compare them; every quantity is
 * "lower is better", and a case regresses when
 *
 *     new > base (1 + rel) + abs        (nfail: new > base; status ok -> error/diverged)
 *
 * Improvements and small moves are shown but pass. `--update` rewrites the baselines after a
 * deliberate change. The run is deterministic for one build, so tolerances only absorb the
 * differences between compilers and flags.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "../sim/fl_world.h"
#include "fl_harness.h"

enum { NQ = 9, MAXSTEPS = 4096 };

/* the recorded quantities, in this order */
static const char *const qname[NQ] = {"nfail",      "merit_p50", "merit_p90",
                                      "merit_max",  "joint_p90", "iters_mean",
                                      "pen_max",    "drift_max", "solve_s"};
/* default tolerances (rel, abs) per quantity; solve_s is informative only (never fails) */
static const double qrel[NQ] = {0, 1.0, 1.0, 1.0, 1.0, 0.25, 0.5, 0.5, INFINITY};
static const double qabs[NQ] = {0, 1e-9, 1e-9, 1e-9, 1e-9, 2, 1e-6, 1e-5, INFINITY};

/* per-scene overrides so that every case is small */
static const char *scene_sets(const char *scene) {
  if (!strcmp(scene, "granular")) return "n=60";
  if (!strcmp(scene, "table_pile")) return NULL;
  return NULL;
}


typedef struct {
  int status; /* 0 ok, 1 unsupported, 2 error */
  double q[NQ];
} record;


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


/* runs one case; solver errors become status 2 (recorded), not failures of check itself */
static int run_case(const char *scene, const char *solver, int steps, int nset, char **set,
                    record *r) {
  memset(r, 0, sizeof *r);
  const char *ss = scene_sets(scene);
  const char *sset[1] = {ss};
  fl_world *w = NULL;
  fl_solver *s = NULL;
  double *val = NULL, *merit = NULL, *joint = NULL;
  int rc = fl_scene_create(scene, ss ? 1 : 0, sset, &w);
  if (rc < 0) return rc;
  rc = fl_solver_create(solver, &s);
  if (rc >= 0) rc = fl_harness_apply_sets(s, nset, set);
  if (rc < 0) goto done;
  val = fl_malloc((size_t)(fl_world_nobs(w) + 1) * sizeof *val);
  merit = fl_malloc((size_t)(steps + 1) * sizeof *merit);
  joint = fl_malloc((size_t)(steps + 1) * sizeof *joint);
  if (!val || !merit || !joint) {
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
    if (src < 0) {
      r->status = 2;
      goto done;
    }
    if (fl_world_observe(w, val) < 0) {
      r->status = 2;
      goto done;
    }
    if (info.res.reason < 0) r->q[0] += 1;
    merit[n] = isfinite(info.met.natmap) ? info.met.natmap : 1e300;
    joint[n] = isfinite(info.met.bilateral) ? info.met.bilateral : (info.nh > 0 ? 1e300 : 0);
    n++;
    iters += info.res.iters;
    if (ipen >= 0 && val[ipen] > r->q[6]) r->q[6] = val[ipen];
    if (idrift >= 0) r->q[7] = val[idrift];
  }
  qsort(merit, (size_t)n, sizeof *merit, cmp_d);
  qsort(joint, (size_t)n, sizeof *joint, cmp_d);
  r->q[1] = quant(merit, n, 0.5);
  r->q[2] = quant(merit, n, 0.9);
  r->q[3] = quant(merit, n, 1.0);
  r->q[4] = quant(joint, n, 0.9);
  r->q[5] = n ? (double)iters / n : 0;
  r->q[8] = fl_time_now() - t0;
done:
  fl_free(val);
  fl_free(merit);
  fl_free(joint);
  fl_solver_destroy(s);
  fl_world_free(w);
  return rc;
}


static const char *status_name(int st) { return st == 0 ? "ok" : st == 1 ? "unsupported" : "error"; }


static void usage(FILE *f) {
  fprintf(f,
    "usage: frictionlab check [--update] [--only SCENE[,SCENE]] [--solver a,b] [--steps N]\n"
    "                         [--set [solver.]key=value]... [--dir DIR]\n"
    "\n"
    "Runs every canonical scene for N steps (default 20; granular with 60 grains) with every\n"
    "registered solver at its defaults and compares accuracy with the baselines in DIR\n"
    "(default results/baselines): failed steps, merit quantiles over steps, joint residual,\n"
    "mean iterations, deepest penetration and final drift. Prints what moved and exits 1 on\n"
    "a regression beyond the stored tolerances. --update rewrites the baselines (after a\n"
    "deliberate change). --set changes solver options, e.g. to see a regression on purpose.\n");
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


int fl_cmd_check(int argc, char **argv) {
  const char *only = NULL, *solver_list = NULL, *dir = "results/baselines";
  char *set[32];
  int nset = 0, update = 0, steps = 20;
  for (int k = 0; k < argc; k++) {
    const char *a = argv[k];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--update")) {
      update = 1;
    } else if (!strcmp(a, "--only") || !strcmp(a, "--solver") || !strcmp(a, "--set") ||
               !strcmp(a, "--dir") || !strcmp(a, "--steps")) {
      if (k + 1 >= argc) {
        fprintf(stderr, "frictionlab check: %s needs a value\n", a);
        return 2;
      }
      const char *v = argv[++k];
      if (!strcmp(a, "--only")) only = v;
      else if (!strcmp(a, "--solver")) solver_list = v;
      else if (!strcmp(a, "--dir")) dir = v;
      else if (!strcmp(a, "--set") && nset < 32) set[nset++] = (char *)v;
      else if (!strcmp(a, "--steps")) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end || n < 1 || n > MAXSTEPS) {
          fprintf(stderr, "frictionlab check: --steps %s: expected an integer in [1, %d]\n", v,
                  MAXSTEPS);
          return 2;
        }
        steps = (int)n;
      }
    } else {
      fprintf(stderr, "frictionlab check: unknown argument '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  fl_register_all();
  const char *const *solvers = fl_solver_list();
  if (solver_list) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", solver_list);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
      if (!fl_solver_find(t)) {
        fprintf(stderr, "frictionlab check: unknown solver '%s'\n", t);
        return 2;
      }
  }
  if (only) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", only);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
      if (!fl_scene_find(t)) {
        fprintf(stderr, "frictionlab check: unknown scene '%s'\n", t);
        return 2;
      }
  }
  if (update && mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "frictionlab check: %s: cannot create: %s\n", dir, strerror(errno));
    return 1;
  }

  int regressions = 0, cases = 0, missing = 0;
  printf("%-22s %-16s %-12s %-10s %12s %12s %8s\n", "scene", "solver", "quantity", "verdict",
         "baseline", "now", "change");
  for (const fl_scene_desc *const *sc = fl_scene_list(); *sc; sc++) {
    const char *scene = (*sc)->name;
    if (!in_list(only, scene)) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", dir, scene);
    char *text = update ? NULL : read_file(path);
    cJSON *base = text ? cJSON_Parse(text) : NULL;
    fl_free(text);
    if (!update && !base) {
      printf("%-22s %-16s %-12s %-10s (no baseline at %s)\n", scene, "*", "-", "missing", path);
      missing++;
      continue;
    }
    cJSON *out = update ? cJSON_CreateObject() : NULL, *outs = NULL;
    if (update) {
      cJSON_AddStringToObject(out, "scene", scene);
      cJSON_AddNumberToObject(out, "steps", steps);
      const char *ss = scene_sets(scene);
      cJSON_AddStringToObject(out, "scene_set", ss ? ss : "");
      cJSON *tol = cJSON_AddObjectToObject(out, "tolerance");
      for (int q = 0; q < NQ; q++) {
        if (isinf(qrel[q])) continue;
        cJSON *t = cJSON_AddObjectToObject(tol, qname[q]);
        cJSON_AddNumberToObject(t, "rel", qrel[q]);
        cJSON_AddNumberToObject(t, "abs", qabs[q]);
      }
      outs = cJSON_AddObjectToObject(out, "solvers");
    }
    int bsteps = base ? cJSON_GetObjectItem(base, "steps") ? cJSON_GetObjectItem(base, "steps")->valueint : steps : steps;
    for (int k = 0; solvers[k]; k++) {
      if (!in_list(solver_list, solvers[k])) continue;
      cJSON *bs = base ? cJSON_GetObjectItem(cJSON_GetObjectItem(base, "solvers"), solvers[k]) : NULL;
      if (!update && !bs) {
        printf("%-22s %-16s %-12s %-10s\n", scene, solvers[k], "-", "missing");
        missing++;
        continue;
      }
      record r;
      int rc = run_case(scene, solvers[k], update ? steps : bsteps, nset, set, &r);
      if (rc < 0) {
        fprintf(stderr, "frictionlab check: %s with %s: %s\n", scene, solvers[k], fl_errmsg());
        cJSON_Delete(base);
        cJSON_Delete(out);
        return 2;
      }
      cases++;
      if (update) {
        cJSON *o = cJSON_AddObjectToObject(outs, solvers[k]);
        cJSON_AddStringToObject(o, "status", status_name(r.status));
        if (r.status == 0)
          for (int q = 0; q < NQ; q++) cJSON_AddNumberToObject(o, qname[q], r.q[q]);
        printf("%-22s %-16s %-12s %-10s\n", scene, solvers[k], "-",
               r.status == 0 ? "recorded" : status_name(r.status));
        continue;
      }
      // compare
      const char *bst = cJSON_GetStringValue(cJSON_GetObjectItem(bs, "status"));
      if (!bst || strcmp(bst, status_name(r.status)) != 0) {
        int worse = r.status != 0 && bst && !strcmp(bst, "ok");
        printf("%-22s %-16s %-12s %-10s %12s %12s\n", scene, solvers[k], "status",
               worse ? "REGRESSED" : "changed", bst ? bst : "?", status_name(r.status));
        regressions += worse;
        continue;
      }
      if (r.status != 0) continue;
      cJSON *tol = cJSON_GetObjectItem(base, "tolerance");
      for (int q = 0; q < NQ; q++) {
        cJSON *bq = cJSON_GetObjectItem(bs, qname[q]);
        if (!cJSON_IsNumber(bq)) continue;
        double b = bq->valuedouble, now = r.q[q];
        double rel = qrel[q], ab = qabs[q];
        cJSON *t = cJSON_GetObjectItem(tol, qname[q]);
        if (t) {
          rel = cJSON_GetNumberValue(cJSON_GetObjectItem(t, "rel"));
          ab = cJSON_GetNumberValue(cJSON_GetObjectItem(t, "abs"));
        }
        int informative = !t || isnan(rel);
        int worse = !informative && now > b * (1 + rel) + ab;
        int moved = fabs(now - b) > 1e-12 * (fabs(b) + 1e-300) + (q == 8 ? INFINITY : 0);
        if (worse || (moved && q != 8 && fabs(now - b) > 0.05 * fabs(b) + ab * 0.1)) {
          char change[32];
          if (b != 0) snprintf(change, sizeof change, "%+7.0f%%", 100 * (now - b) / fabs(b));
          else snprintf(change, sizeof change, "%8s", "new");
          printf("%-22s %-16s %-12s %-10s %12.4g %12.4g %s\n", scene, solvers[k], qname[q],
                 worse ? "REGRESSED" : now < b ? "improved" : "moved", b, now, change);
        }
        regressions += worse;
      }
    }
    if (update) {
      char *txt = cJSON_Print(out);
      int rc = txt ? write_text(path, txt) : fl_seterr(FL_ERR_NOMEM, "check: out of memory");
      cJSON_free(txt);
      cJSON_Delete(out);
      if (rc < 0) {
        fprintf(stderr, "frictionlab check: %s\n", fl_errmsg());
        return 1;
      }
    }
    cJSON_Delete(base);
  }
  if (update) {
    printf("check --update: %d cases recorded in %s/\n", cases, dir);
    return 0;
  }
  printf("check: %d cases, %d regressions, %d without baseline\n", cases, regressions, missing);
  return regressions ? 1 : 0;
}

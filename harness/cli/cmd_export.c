// SPDX-License-Identifier: Apache-2.0
/* cmd_export.c: `frictionlab export PROBLEM|FILE.json --steps A:B --out DIR` writes the contact
 * problems of steps A..B of a scene as FCLIB global files; `--scene-json FILE` writes the scene
 * itself as a scene file instead.
 *
 * Outline: build the world; step it with a solver (default pgs) from step 0; for every step k
 * in [A, B] write the assembled problem together with the solver's solution (v, gamma) to
 * DIR/<scene>-step<k>.hdf5 through fl_problem_save_fclib, with the stepper's warm start
 * (gamma_guess: step k-1's impulses matched by feature) as the file's /guesses/1; the folder is
 * staged and committed like a run's (manifest.json lists the files).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../sim/fl_loop.h"
#include "../../sim/fl_world.h"
#include "fl_args.h"
#include "../fl_harness.h"
#include "fl_settings.h"
#include "../../peers/fl_peer.h"
#include "../run/fl_run.h"

#define EXIT_USAGE 2
#define MAX_SETS 128


typedef struct export_args {
  fl_arg_multi pos, set_arg;
  const char *out, *steps, *solver, *scene_json, *max_recovery, *mem_limit;
  int force;
} export_args;

#define A(m) offsetof(export_args, m)
static const fl_arg_desc export_flags[] = {
  {"--steps", FL_ARG_STR, A(steps), 0, 0, "A:B", NULL,
   "steps A to B (inclusive, 0-based; A alone is one step); with --scene-json: N, the state "
   "after N steps"},
  {"--out", FL_ARG_STR, A(out), 0, 0, "DIR", NULL, "folder of the FCLIB files"},
  {"--solver", FL_ARG_STR, A(solver), 0, 0, "NAME", "pgs", "the solver that steps the scene"},
  {"--set", FL_ARG_MULTI, A(set_arg), 0, 0, "key=value", NULL,
   "a scene parameter or a solver option (docs/usage.md, \"What --set means\")"},
  {"--max-recovery-speed", FL_ARG_STR, A(max_recovery), 0, 0, "V", NULL,
   "cap (m/s) on the rigid contacts' penetration recovery -phi0/dt in the steps written "
   "(from step A on; the history before A keeps the scene's law): FCLIB's free velocity "
   "asks at most V of separation, and the files' titles say so"},
  {"--scene-json", FL_ARG_STR, A(scene_json), 0, 0, "FILE", NULL,
   "write the scene as a scene file (docs/scene-format.md) instead, through a temporary file; "
   "an existing regular file is replaced, anything else (folder, symlink, FIFO, device) never"},
  {"--force", FL_ARG_FLAG, A(force), 0, 0, NULL, NULL, "replace an existing --out folder"},
  {"--mem-limit", FL_ARG_STR, A(mem_limit), 0, 0, "GB", NULL,
   "the limit memory estimates are checked against before allocating; default 8 GiB or "
   "FL_MEM_LIMIT_MB"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef A

static const fl_cmd_spec export_spec = {
  "export", "PROBLEM|FILE.json|MODEL.xml", 1, offsetof(export_args, pos),
  "Writes the contact problems of steps A to B of a scene as FCLIB global files\n"
  "DIR/<scene>-step<k>.hdf5 (--steps A:B --out DIR), each with the solution the solver found\n"
  "and, as FCLIB's /guesses/1, the warm start a simulation offers at that step (step k-1's\n"
  "impulses matched by contact feature; `solve --set warm_start=true` starts from it).\n"
  "A scene's joints (bilateral rows) go to FCLIB's /fclib_global/G and /vectors/b, their\n"
  "impulses to /solution/l and /guesses/1/l. A step with no contact and no joint has nothing\n"
  "to solve: it is skipped with a warning (manifest: skipped_steps); none in A..B is an error.\n"
  "--scene-json FILE\n"
  "writes the scene as a scene file instead: its initial state, or with --steps N the state\n"
  "after N steps with the solver.\n",
  NULL, export_flags};


/* steps a.. as FCLIB files (fl_loop each) */
typedef struct export_step_ctx {
  fl_results *res;
  cJSON *files; /* the manifest's list of files */
  cJSON *overlap; /* the manifest's per-file overlap summary */
  long first;   /* the first step written */
  double cap;   /* m/s, the recovery cap from step `first` on (INFINITY: none) */
  fl_progress *bar;
  cJSON *skipped; /* the manifest's steps with nothing to solve (no file written) */
  long written;   /* files written */
} export_step_ctx;


static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}


/* the step's overlaps: how deep the bodies are and what separation speed the rigid normal law
 * asks to undo it (-phi0/dt, before and after the world's cap), as a manifest entry */
static int overlap_summary(const fl_problem *p, const char *name, cJSON *arr) {
  fl_int n = 0;
  double *d = fl_malloc((size_t)(p->nc + 1) * sizeof *d);
  if (!d) return fl_seterr(FL_ERR_NOMEM, "export: out of memory");
  double asked = 0, capped = 0;
  for (fl_int i = 0; i < p->nc; i++) {
    double vh;
    fl_problem_normal_law(p, i, NULL, &vh);
    if (vh > capped) capped = vh;
    if (p->phi0[i] >= 0) continue;
    d[n++] = -p->phi0[i];
    if (-p->phi0[i] / p->dt > asked) asked = -p->phi0[i] / p->dt;
  }
  qsort(d, (size_t)n, sizeof *d, cmp_double);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "file", name);
  cJSON_AddNumberToObject(o, "contacts", (double)p->nc);
  cJSON_AddNumberToObject(o, "overlapping", (double)n);
  cJSON_AddNumberToObject(o, "max_overlap_m", n ? d[n - 1] : 0);
  cJSON_AddNumberToObject(o, "median_overlap_m", n ? d[n / 2] : 0);
  cJSON_AddNumberToObject(o, "max_recovery_speed_asked", asked);
  cJSON_AddNumberToObject(o, "max_recovery_speed_kept", capped);
  cJSON_AddItemToArray(arr, o);
  fl_free(d);
  return FL_OK;
}


static int export_each(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  (void)info;
  (void)val;
  export_step_ctx *c = ctx;
  int rc = FL_OK;
  const fl_problem *pk = fl_world_problem(w);
  if (k >= c->first && pk && pk->nc == 0 && pk->nh == 0) {
    // no contact and no joint: `solve` refuses such a file (nothing to solve), so none is
    // written; said on stderr and in the manifest's "skipped_steps" (issue 51)
    fprintf(stderr, "frictionlab export: warning: step %ld has no contact and no joint (nothing "
                    "to solve): no file written for it\n", k);
    cJSON_AddItemToArray(c->skipped, cJSON_CreateNumber((double)k));
  } else if (k >= c->first) {
    char path[4096], name[256], title[256];
    snprintf(name, sizeof name, "%s-step%ld.hdf5", w->name, k);
    snprintf(path, sizeof path, "%s/%s", fl_results_staging(c->res), name);
    int nt = snprintf(title, sizeof title, "FrictionLab scene %s, step %ld, t = %g s", w->name, k,
                      w->t - w->dt);
    // a capped recovery is baked into w (FCLIB's free velocity): say so in the file's title
    if (isfinite(w->max_recovery) && nt > 0 && (size_t)nt < sizeof title)
      snprintf(title + nt, sizeof title - (size_t)nt,
               ", penetration recovery capped at %g m/s", w->max_recovery);
    const double *v, *g;
    fl_world_solution(w, &v, &g);
    rc = fl_problem_save_fclib(fl_world_problem(w), path, title, v, g);
    if (rc >= 0) cJSON_AddItemToArray(c->files, cJSON_CreateString(name)), c->written++;
    if (rc >= 0) rc = overlap_summary(fl_world_problem(w), name, c->overlap);
  }
  // the cap holds from the first step written on (this callback runs after step k)
  if (k + 1 == c->first && isfinite(c->cap)) w->max_recovery = c->cap;
  fl_progress_update(c->bar, k + 1);
  return rc;
}


int fl_cmd_export(int argc, char **argv) {
  fl_register_all();
  export_args ea;
  memset(&ea, 0, sizeof ea);
  int prc = fl_args_parse(&export_spec, argc, argv, &ea);
  if (prc) return prc == 1 ? 0 : EXIT_USAGE;
  if (fl_cli_mem_limit("export", ea.mem_limit)) return EXIT_USAGE;
  const char *out = ea.out, *steps = ea.steps, *solver = ea.solver, *scene_json = ea.scene_json;
  int force = ea.force;
  if (ea.pos.n == 0) {
    fprintf(stderr, "frictionlab export: no problem given (a scene name or FILE.json)\n");
    return EXIT_USAGE;
  }
  const char *input = ea.pos.v[0];
  // the settings, sorted once (fl_settings.h); the solver's only when it steps
  static fl_settings set;
  fl_settings_ctx ctx = {"export", input, 1, &solver, 0};
  fl_settings_init(&set, &ctx);
  for (int i = 0; i < ea.set_arg.n; i++) {
    if (fl_settings_add(&set, ea.set_arg.v[i], 0) < 0) {
      fprintf(stderr, "frictionlab export: %s\n", fl_errmsg());
      return EXIT_USAGE;
    }
  }
  const char *scene_sets[MAX_SETS];
  int nscene = fl_settings_scene(&set, scene_sets, MAX_SETS);
  const char *solver_sets[MAX_SETS];
  int nsolver_sets = fl_settings_for_peers(&set, solver_sets, MAX_SETS);
  // a canonical scene, a scene file or an MJCF model (MuJoCo's parser), its scene.* settings;
  // the solver (only when it steps) evaluates the metrics on its final iterate only
  fl_run_spec sp = {.scene = input, .nscene = nscene, .scene_set = scene_sets,
                    .read_model = fl_world_from_mjcf, .flags = FL_RUN_NO_PEER, .opts = "error_every=0",
                    .nset = nsolver_sets, .set = solver_sets, .steps = 0};
  fl_run run;
  int rc = fl_run_open(&sp, &run);
  if (rc < 0) {
    fprintf(stderr, "frictionlab export: %s\n", fl_errmsg());
    return rc == FL_ERR_UNKNOWN_PROBLEM || rc == FL_ERR_UNKNOWN_OPTION ||
                   rc == FL_ERR_OPTION_TYPE || rc == FL_ERR_OPTION_RANGE
               ? EXIT_USAGE
               : 1;
  }

  //---- the scene as a scene file, at its start or after --steps N ----
  if (scene_json) {
    long n = 0;
    if (steps) {
      char *end;
      n = strtol(steps, &end, 10);
      if (*end || n < 0) {
        fprintf(stderr, "frictionlab export: --steps %s with --scene-json: expected one step count "
                "N >= 0 (the state after N steps is written)\n", steps);
        fl_run_close(&run);
        return EXIT_USAGE;
      }
    }
    if (out || ea.max_recovery) {
      fprintf(stderr, "frictionlab export: %s is for FCLIB files; --scene-json names its file\n",
              out ? "--out" : "--max-recovery-speed");
      fl_run_close(&run);
      return EXIT_USAGE;
    }
    // a device, FIFO, symlink or folder at FILE is never replaced, --force or not (issue 51)
    if (fl_check_output(scene_json, "--scene-json file") < 0) {
      fprintf(stderr, "frictionlab export: %s\n", fl_errmsg());
      fl_run_close(&run);
      return 1;
    }
    if (n > 0) { // the same scene again, with the solver that steps it
      fl_run_close(&run);
      sp.stepper = solver;
      sp.steps = n;
      if (fl_run_open(&sp, &run) < 0) {
        fprintf(stderr, "frictionlab export: --solver/--set: %s\n", fl_errmsg());
        return EXIT_USAGE;
      }
    }
    rc = fl_run_go(&run);
    if (rc >= 0) rc = fl_world_save_json(run.world, scene_json);
    fl_run_close(&run);
    if (rc < 0) {
      fprintf(stderr, "frictionlab export: %s\n", fl_errmsg());
      return 1;
    }
    if (n > 0) printf("%s after %ld steps with %s -> %s\n", input, n, solver, scene_json);
    else printf("%s -> %s\n", input, scene_json);
    return 0;
  }

  //---- steps as FCLIB files ----
  long a = -1, b = -1;
  if (steps) {
    char *end;
    a = strtol(steps, &end, 10);
    if (*end == ':') b = strtol(end + 1, &end, 10);
    else b = a;
    if (*end || a < 0 || b < a) a = -1;
  }
  if (a < 0 || !out) {
    fprintf(stderr, "frictionlab export: expected --steps A:B (0 <= A <= B) and --out DIR%s\n",
            steps && a < 0 ? " (bad --steps)" : "");
    fl_run_close(&run);
    return EXIT_USAGE;
  }
  double cap = INFINITY;
  if (ea.max_recovery) {
    char *end;
    cap = strtod(ea.max_recovery, &end);
    if (*end || !(cap >= 0)) {
      fprintf(stderr, "frictionlab export: --max-recovery-speed %s: expected a speed >= 0 (m/s)\n",
              ea.max_recovery);
      fl_run_close(&run);
      return EXIT_USAGE;
    }
  }
  fl_run_close(&run); // the same scene again, with the solver that steps it
  sp.stepper = solver;
  sp.steps = b + 1;
  sp.each = export_each;
  if (fl_run_open(&sp, &run) < 0) {
    if (run.bad_set >= 0)
      fprintf(stderr, "frictionlab export: --set '%s': %s\n", solver_sets[run.bad_set], fl_errmsg());
    else
      fprintf(stderr, "frictionlab export: --solver: %s\n", fl_errmsg());
    return EXIT_USAGE;
  }
  fl_world *w = run.world;
  // the scene's name makes the files' names: an identifier, so that they stay inside DIR
  if (fl_name_check(w->name, "export", "scene name") < 0) {
    fprintf(stderr, "frictionlab export: %s\n", fl_errmsg());
    fl_run_close(&run);
    return 1;
  }
  fl_results *res = NULL;
  if (fl_results_begin(out, "export", force, &res) < 0) {
    fprintf(stderr, "frictionlab export: %s\n", fl_errmsg());
    fl_run_close(&run);
    return 1;
  }
  cJSON *man = fl_results_manifest(res);
  cJSON_AddStringToObject(man, "problem", input);
  cJSON_AddNumberToObject(man, "dt", w->dt);
  cJSON *files = cJSON_AddArrayToObject(man, "files");
  cJSON *overlap = cJSON_AddArrayToObject(man, "overlap");
  fl_results_add_solver(res, run.solver);
  fl_progress bar;
  fl_progress_begin(&bar, "export", b + 1);
  cJSON *skipped = cJSON_AddArrayToObject(man, "skipped_steps");
  export_step_ctx c = {res, files, overlap, a, cap, &bar, skipped, 0};
  if (a == 0 && isfinite(cap)) w->max_recovery = cap;
  if (isfinite(cap)) cJSON_AddNumberToObject(man, "max_recovery_speed", cap);
  run.spec.ctx = &c;
  rc = fl_run_go(&run);
  fl_progress_end(&bar);
  fl_run_close(&run);
  if (rc >= 0 && c.written == 0)
    rc = fl_seterr(FL_ERR_INVAL, "%s: steps %ld..%ld have no contact and no joint: nothing to "
                   "export (FCLIB problems need at least one; try later steps)", input, a, b);
  if (rc < 0) {
    fprintf(stderr, "frictionlab export: %s\n", fl_errmsg());
    fl_results_abort(res);
    return 1;
  }
  if (fl_results_commit(res) < 0) {
    fprintf(stderr, "frictionlab export: %s\n", fl_errmsg());
    return 1;
  }
  printf("%s: steps %ld..%ld -> %s\n", input, a, b, out);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
/* cmd_run.c: `frictionlab run PROBLEM|FILE.json --solver a,b --steps N --set key=value
 * --out DIR`.
 *
 * Outline: parse the arguments; sort each --set into scene parameters and solver options;
 * build the scene once and every solver once to check them (bad input leaves no folder);
 * create the results folder; for each solver rebuild the scene and step it N times
 * (collide, assemble, solve, integrate), writing per step and solver one row of steps.csv
 * (contacts, iterations, reason, times, final errors, observables), the solver's iteration
 * records to iters.csv and the observables to observables.csv; commit the folder; print a
 * summary per solver.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "../../sim/fl_fem.h"
#include "../../sim/fl_loop.h"
#include "../../sim/fl_world.h"
#include "fl_args.h"
#include "../fl_harness.h"
#include "../../peers/fl_peer.h"
#include "../output/fl_record.h"
#include "../output/fl_run_csv.h"
#include "../run/fl_run.h"
#include "fl_settings.h"

#define EXIT_USAGE 2
#define RECORD_BUDGET 12e6 /* bytes: the automatic recording interval keeps the file below */
#define MAX_SOLVERS 32
#define MAX_SETS 128

typedef struct run_args {
  fl_arg_multi pos;               /* the scene name or .json file */
  fl_arg_multi solver_arg;        /* --solver values */
  fl_arg_multi set_arg;           /* --set values */
  long steps;                     /* -1: duration/dt */
  long every;                     /* observables every k steps */
  const char *out;
  const char *mem_limit; /* --mem-limit GB: FL_MEM_LIMIT_MB for this process */
  int force;
  long vtk;          /* > 0: bodies, contacts and deformable meshes as VTK every vtk steps */
  long record;       /* recording interval in steps: 0 off, -1 automatic (RECORD_BUDGET) */
  const char *input;              /* pos.v[0] */
  const char *solvers[MAX_SOLVERS];
  int nsolvers;
  char solver_buf[1024];
  fl_settings set;                /* --set, sorted (fl_settings.h) */
  const char *scene_sets[MAX_SETS]; /* "key=value" for the scene */
  int nscene;
  const char *solver_sets[MAX_SETS]; /* what the peers receive */
  int nsolver_sets;
  const char *staging; /* the results' staging folder (set once it exists) */
} run_args;

#define A(m) offsetof(run_args, m)
static const fl_arg_desc run_flags[] = {
  {"--solver", FL_ARG_MULTI, A(solver_arg), 0, 0, "a,b", "pgs",
   "solvers (or peers) by registered name"},
  {"--steps", FL_ARG_INT, A(steps), 0, FL_RUN_MAX_STEPS, "N", NULL,
   "steps to take (default: the scene's duration / dt)"},
  {"--set", FL_ARG_MULTI, A(set_arg), 0, 0, "key=value", NULL,
   "a scene parameter (mu=0.2, scene.dt=0.01, heavy_stack.n=3), or a solver option for every "
   "solver (max_iter=20, warm_start=1) or for one (pgs.omega=1.2); docs/usage.md, \"What --set "
   "means\". Scene files take scene.dt, scene.duration, scene.margin, scene.speculative "
   "and scene.fem_solve=full|schur"},
  {"--out", FL_ARG_STR, A(out), 0, 0, "DIR", NULL,
   "results folder (default results/runs/run-<problem>-<date>-<time>)"},
  {"--every", FL_ARG_INT, A(every), 1, 1000000000L, "K", "1", "observables.csv every K steps"},
  {"--record", FL_ARG_INT, A(record), 0, 1000000000L, "K", NULL,
   "record every K-th step (and the first and last) for the viewer; 0: no recording, no viewer "
   "(default: every step, or the interval that keeps the recording under 12 MB)"},
  {"--vtk", FL_ARG_INT, A(vtk), 1, 1000000000L, "K", NULL,
   "VTK files every K steps (and the last) for ParaView, per solver in vtk/<solver>/: "
   "bodies_<step>.vtp (rigid bodies' surfaces, velocity), contacts_<step>.vtp (points with "
   "normal, impulse, phi, slip) and <body>_<step>.vtu per deformable body (velocity, von Mises "
   "stress); each series has its .pvd, the time series ParaView opens"},
  {"--force", FL_ARG_FLAG, A(force), 0, 0, NULL, NULL, "replace an existing --out folder"},
  {"--mem-limit", FL_ARG_STR, A(mem_limit), 0, 0, "GB", NULL,
   "the limit memory estimates (meshes, FEM systems, broad-phase pairs, contact problems, "
   "files) are checked "
   "against before allocating; default 8 GiB or FL_MEM_LIMIT_MB"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef A

static const fl_cmd_spec run_spec = {
  "run", "PROBLEM|FILE.json|MODEL.xml", 1, offsetof(run_args, pos),
  "Simulates a canonical scene (see `frictionlab list problems` or docs/scenes.md) or a scene\n"
  "file (docs/scene-format.md) with each solver from the same initial state, and writes a\n"
  "results folder: manifest.json, steps.csv (one row per step and solver: contacts,\n"
  "iterations, reason, times, final errors, observables), iters.csv (one row per solver\n"
  "iteration), observables.csv (one row per K steps and solver), recording.flrec (poses,\n"
  "contacts and impulses per step: docs/recording.md) and viewer.html, which plays every\n"
  "solver's run side by side in a browser (`frictionlab view DIR`). MODEL.xml is an MJCF model,\n"
  "read with MuJoCo's parser (docs/mjcf.md; needs a build with MuJoCo).\n",
  "Solvers evaluate the common metrics only on their final iterate (error_every=0) unless\n"
  "--set error_every=K says otherwise.\n",
  run_flags};


static int parse_args(int argc, char **argv, run_args *a) {
  memset(a, 0, sizeof *a);
  a->steps = -1;
  a->record = -1;
  int rc = fl_args_parse(&run_spec, argc, argv, a);
  if (rc) return rc == 1 ? 1 : EXIT_USAGE;
  if (fl_cli_mem_limit("run", a->mem_limit)) return EXIT_USAGE;
  if (a->pos.n == 0) {
    fprintf(stderr, "frictionlab run: no problem given (expected a scene name or FILE.json; "
                    "see `frictionlab list problems`)\n");
    return EXIT_USAGE;
  }
  a->input = a->pos.v[0];
  // solvers: default pgs; every name must be registered
  const char *names[MAX_SOLVERS + 1];
  int nn = fl_args_names(&a->solver_arg, a->solver_buf, sizeof a->solver_buf, names, MAX_SOLVERS + 1);
  if (nn < 0) {
    fprintf(stderr, "frictionlab run: --solver: list too long\n");
    return EXIT_USAGE;
  }
  if (nn == 0) names[nn++] = "pgs";
  for (int j = 0; j < nn; j++) {
    const char *tok = names[j];
    if (*tok && fl_peer_unavailable(tok)) {
      fprintf(stderr, "frictionlab run: --solver %s: %s\n", tok, fl_peer_unavailable(tok));
      return EXIT_USAGE;
    }
    if (!*tok || (!fl_solver_find(tok) && !fl_peer_find(tok))) {
      fprintf(stderr, "frictionlab run: --solver: unknown solver '%s'; registered: ", tok);
      const char *const *sn = fl_solver_list();
      for (int i = 0; sn && sn[i]; i++) fprintf(stderr, "%s%s", i ? ", " : "", sn[i]);
      for (const char *const *pn = fl_peer_list(); *pn; pn++) fprintf(stderr, ", %s", *pn);
      fprintf(stderr, "\n");
      return EXIT_USAGE;
    }
    for (int i = 0; i < a->nsolvers; i++) {
      if (strcmp(a->solvers[i], tok) == 0) {
        fprintf(stderr, "frictionlab run: --solver: '%s' is given twice\n", tok);
        return EXIT_USAGE;
      }
    }
    if (a->nsolvers == MAX_SOLVERS) return EXIT_USAGE;
    a->solvers[a->nsolvers++] = tok;
  }
  // sort the settings: scene parameters, solver options (fl_settings.h)
  fl_settings_ctx ctx = {"run", a->input, a->nsolvers, a->solvers, 0};
  fl_settings_init(&a->set, &ctx);
  for (int i = 0; i < a->set_arg.n; i++) {
    if (fl_settings_add(&a->set, a->set_arg.v[i], 0) < 0) {
      fprintf(stderr, "frictionlab run: %s\n", fl_errmsg());
      return EXIT_USAGE;
    }
  }
  a->nscene = fl_settings_scene(&a->set, a->scene_sets, MAX_SETS);
  a->nsolver_sets = fl_settings_for_peers(&a->set, a->solver_sets, MAX_SETS);
  return 0;
}


/* The run of `stepper` (NULL: the scene alone): a canonical scene, a scene file or an MJCF
 * model with scene.* overrides; solvers evaluate the metrics on their final iterate only. */
static fl_run_spec spec_of(const run_args *a, const char *stepper) {
  fl_run_spec sp = {.scene = a->input, .nscene = a->nscene, .scene_set = a->scene_sets,
                    .read_model = fl_world_from_mjcf, .flags = FL_RUN_CPU_TIMES,
                    .stepper = stepper, .opts = "error_every=0", .nset = a->nsolver_sets,
                    .set = a->solver_sets, .steps = a->steps};
  return sp;
}


/* What to add to a solver's refusal of an unprefixed key: on a scene file, which keys it takes
 * (scene.*); on a canonical scene, the scene parameter the key nearly spells. */
static const char *set_hint(const run_args *a, const char *key, int rc) {
  static char hint[256];
  hint[0] = 0;
  if (rc != FL_ERR_UNKNOWN_OPTION || strchr(key, '.')) return hint;
  if (fl_scene_kind_of(a->input) != FL_SCENE_BUILTIN) {
    snprintf(hint, sizeof hint, ". A scene file takes scene.dt, scene.duration, scene.margin, "
             "scene.speculative and scene.fem_solve=full|schur; its other values (friction, "
             "bodies) are edited in the file (docs/scene-format.md)");
  } else {
    const fl_scene_desc *d = fl_scene_find(a->input);
    const char *near = d ? fl_options_suggest(d->params, key) : NULL;
    if (near) snprintf(hint, sizeof hint, ". Or did you mean %s's parameter '%s'?", a->input, near);
  }
  return hint;
}


/* Creates solver `name` with run's defaults and the applicable settings (fl_run_solver); a
 * refused setting is named, with a hint. */
static int make_solver(const run_args *a, const char *name, fl_solver **out) {
  fl_run_spec sp = spec_of(a, name);
  int bad = -1, rc = fl_run_solver(&sp, name, out, &bad);
  if (rc < 0 && bad >= 0) {
    char key[192];
    const char *t = a->solver_sets[bad], *eq = strchr(t, '=');
    snprintf(key, sizeof key, "%.*s", eq ? (int)(eq - t) : (int)strlen(t), t);
    fl_seterr(rc, "--set '%s': %s%s", t, fl_errmsg(), set_hint(a, key, rc));
  }
  return rc;
}


static void default_out(const char *input, char *buf, size_t n) {
  char stem[64], prefix[128];
  const char *base = strrchr(input, '/');
  snprintf(stem, sizeof stem, "%s", base ? base + 1 : input);
  char *dot = strrchr(stem, '.');
  if (dot && fl_scene_kind_of(input) != FL_SCENE_BUILTIN) *dot = 0;
  snprintf(prefix, sizeof prefix, "results/runs/run-%s", stem);
  fl_results_default_dir(prefix, buf, n);
}


//---- frames ----

//---- one solver's simulation ----

/* one solver's run as the stepping loop sees it */
typedef struct run_step_ctx {
  const run_args *a;
  const char *sname;
  int sidx;
  long nsteps, bar0;
  FILE *steps, *iters, *obs;
  fl_recorder *rec;
  fl_peer *peer;
  fl_vtk_series *ser;
  fl_progress *bar;
  fl_run_verdict *sum;
  fl_loop *loop;
  const fl_csv_col *cols, *ocols; /* steps.csv's and observables.csv's (fl_run_steps_cols) */
  int ncols, nocols;
} run_step_ctx;


/* the recording's frame (fl_loop frame): a peer's with its own contacts */
static int run_frame(void *ctx, fl_world *w, long step, const fl_step_info *info) {
  run_step_ctx *c = ctx;
  if (c->peer && info) return fl_record_peer_frame(c->rec, c->sidx, step, w, info, c->peer);
  return fl_record_frame(c->rec, c->sidx, step, w, info);
}


/* after step k (fl_loop each): VTK, the summary, steps.csv, iters.csv and observables.csv */
static int run_each(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  run_step_ctx *c = ctx;
  const run_args *a = c->a;
  fl_run_verdict *sum = c->sum;
  const char *sname = c->sname;
  if (c->ser && ((k + 1) % a->vtk == 0 || k == c->nsteps - 1))
    FL_TRY(fl_vtk_series_frame(c->ser, w, k + 1));
  char flags[256];
  fl_run_verdict_step(sum, w, val, k, info, c->loop, flags, sizeof flags);
  FILE *steps = c->steps, *iters = c->iters, *obs = c->obs;
  // steps.csv
  fl_run_step_row row = {k, sname, (long)info->nbody_pairs, (long)info->nc, (long)info->nh,
                  info->res.iters, info->res.reason, fl_reason_name(info->res.reason),
                  info->solve_s, info->collide_s, info->assemble_s, info->collide_cpu_s,
                  info->assemble_cpu_s, info->warm_matched, info->res.error, info->met, val,
                  flags};
  fl_csv_row(steps, c->cols, c->ncols, &row);
  // iters.csv: the solver's records of this step
  int nh = 0;
  const fl_stepper *st = &c->loop->stepper;
  const fl_iter_stat *h = st->history(st->self, info, &nh);
  fl_csv_col ic[FL_ITERS_NCOLS];
  if (h && nh > 0) fl_iters_cols(ic, 0);
  for (int i = 0; h && i < nh; i++) {
    fl_iters_row ir = {k, NULL, sname, h[i]};
    fl_csv_row(iters, ic, FL_ITERS_NCOLS, &ir);
  }
  // observables.csv every `every` steps and at the last
  if (k % a->every == 0 || k == c->nsteps - 1) {
    fl_csv_row(obs, c->ocols, c->nocols, &row);
  }
  fl_progress_update(c->bar, c->bar0 + k + 1);
  return FL_OK;
}


static int simulate(const run_args *a, int sidx, long nsteps, FILE *steps, FILE *iters, FILE *obs,
                    fl_recorder *rec, fl_progress *bar, long bar0, fl_run_verdict *sum,
                    cJSON *final) {
  const char *sname = a->solvers[sidx];
  memset(sum, 0, sizeof *sum);
  fl_run_spec sp = spec_of(a, sname);
  sp.staging = a->staging; // a peer's MJCF beside the results
  sp.steps = nsteps;
  sp.observe = 1;
  sp.frame_every = rec ? a->record : 0;
  sp.frame = run_frame;
  sp.each = run_each;
  fl_run run;
  double *val = NULL;
  int rc = fl_run_open(&sp, &run);
  fl_world *w = run.world;
  fl_int nobs = rc >= 0 ? fl_world_nobs(w) : 0;
  if (rc >= 0) {
    val = fl_malloc((size_t)(nobs > 0 ? nobs : 1) * sizeof(double));
    if (!val) rc = fl_seterr(FL_ERR_NOMEM, "run: out of memory");
  }
  if (rc >= 0) rc = fl_run_verdict_begin(w, val, sum);
  fl_vtk_series *ser = NULL;
  if (rc >= 0 && a->vtk > 0) {
    ser = fl_vtk_series_open(a->staging, sname, w);
    if (!ser) rc = FL_ERR_NOMEM;
    if (rc >= 0) rc = fl_vtk_series_frame(ser, w, 0);
  }
  int ncols = 0, nocols = 0;
  fl_csv_col *cols = NULL;
  const fl_csv_col *ocols = NULL;
  if (rc >= 0 && !(cols = fl_run_steps_cols(w, &ncols, &ocols, &nocols)))
    rc = fl_seterr(FL_ERR_NOMEM, "run: out of memory");
  run_step_ctx ctx = {a, sname, sidx, nsteps, bar0, steps, iters, obs, rec, run.peer, ser, bar,
                      sum, &run.loop, cols, ocols, ncols, nocols};
  run.spec.ctx = &ctx;
  if (rc >= 0) rc = fl_run_go(&run);
  if (ser) {
    int rv = fl_vtk_series_close(ser, w);
    if (rc >= 0) rc = rv;
  }
  fl_run_verdict_end(sum, &run.loop, rc);
  if (rc >= 0 && final && sum->steps > 0) {
    for (fl_int i = 0; i < nobs; i++) {
      double v = run.loop.obs[i];
      cJSON_AddNumberToObject(final, fl_world_obs_name(w, i), isfinite(v) ? v : 0);
    }
  }
  fl_free(cols);
  fl_free(val);
  fl_run_close(&run);
  return rc;
}


//---- the command ----

int fl_cmd_run(int argc, char **argv) {
  fl_register_all();
  run_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc != 0) return rc == 1 ? 0 : rc;

  // check the scene and every solver before anything is written
  fl_run_spec scene_only = spec_of(&a, NULL);
  fl_run chk;
  if (fl_run_open(&scene_only, &chk) < 0) {
    fprintf(stderr, "frictionlab run: %s\n", fl_errmsg());
    int code = fl_errcode();
    return (code == FL_ERR_UNKNOWN_PROBLEM || code == FL_ERR_UNKNOWN_OPTION ||
            code == FL_ERR_OPTION_TYPE || code == FL_ERR_OPTION_RANGE)
               ? EXIT_USAGE
               : 1;
  }
  fl_world *w = chk.world;
  // bodies that start inside each other: said, not silently pushed apart
  fl_overlap ov[3];
  int nov = 0;
  if (fl_world_overlaps(w, FL_OVERLAP_TOL, ov, 3, &nov) == FL_OK) {
    for (int k = 0; k < nov && k < 3; k++)
      fprintf(stderr, "frictionlab run: warning: %s: bodies '%s' and '%s' overlap by %.3g m at "
              "t = 0\n", a.input, w->body[ov[k].a].name, w->body[ov[k].b].name, ov[k].depth);
    if (nov > 3) fprintf(stderr, "frictionlab run: warning: ... %d overlapping pairs in all\n", nov);
  }
  long nsteps = chk.steps;
  double dt = w->dt;
  char wname[64];
  snprintf(wname, sizeof wname, "%s", w->name);
  // the CSV headers' columns (observable names quoted by fl_csv_str's rule)
  int ncols = 0, nocols = 0;
  const fl_csv_col *ocols = NULL;
  fl_csv_col *cols = fl_run_steps_cols(w, &ncols, &ocols, &nocols);
  fl_run_close(&chk);
  if (!cols) return 1;
  for (int j = 0; j < a.nsolvers; j++) {
    // a peer must express the scene and take its options (else the reason, before any folder)
    fl_run_spec ps = spec_of(&a, a.solvers[j]);
    fl_run pr;
    if (!fl_peer_find(a.solvers[j])) continue;
    int prc = fl_run_open(&ps, &pr);
    fl_run_close(&pr);
    if (prc < 0) {
      fprintf(stderr, "frictionlab run: %s: %s\n", a.solvers[j], fl_errmsg());
      fl_free(cols);
      return fl_errcode() == FL_ERR_UNSUPPORTED ? 1 : EXIT_USAGE;
    }
  }
  for (int j = 0; j < a.nsolvers; j++) {
    fl_solver *s;
    if (fl_peer_find(a.solvers[j])) continue;
    if (make_solver(&a, a.solvers[j], &s) < 0) {
      fprintf(stderr, "frictionlab run: solver '%s': %s\n", a.solvers[j], fl_errmsg());
      fl_free(cols);
      return EXIT_USAGE;
    }
    fl_solver_destroy(s);
  }

  char outbuf[512];
  if (!a.out) {
    default_out(a.input, outbuf, sizeof outbuf);
    a.out = outbuf;
  }
  fl_results *res = NULL;
  if (fl_results_begin(a.out, "run", a.force, &res) < 0) {
    fprintf(stderr, "frictionlab run: %s\n", fl_errmsg());
    fl_free(cols);
    return 1;
  }
  a.staging = fl_results_staging(res);
  FILE *steps = fl_results_file(res, "steps.csv");
  FILE *iters = fl_results_file(res, "iters.csv");
  FILE *obs = fl_results_file(res, "observables.csv");
  if (!steps || !iters || !obs) {
    fprintf(stderr, "frictionlab run: %s\n", fl_errmsg());
    fl_results_abort(res);
    fl_free(cols);
    return 1;
  }
  fl_csv_header(steps, cols, ncols);
  fl_csv_col ic[FL_ITERS_NCOLS];
  fl_iters_cols(ic, 0);
  fl_csv_header(iters, ic, FL_ITERS_NCOLS);
  fl_csv_header(obs, ocols, nocols);
  fl_free(cols);

  cJSON *man = fl_results_manifest(res);
  cJSON_AddStringToObject(man, "problem", a.input);
  cJSON_AddStringToObject(man, "scene", wname);
  cJSON_AddNumberToObject(man, "dt", dt);
  cJSON_AddNumberToObject(man, "steps", (double)nsteps);
  cJSON *sp = cJSON_AddArrayToObject(man, "scene_settings");
  for (int i = 0; i < a.nscene; i++) cJSON_AddItemToArray(sp, cJSON_CreateString(a.scene_sets[i]));
  cJSON *runs = cJSON_AddObjectToObject(man, "runs");
  for (int j = 0; j < a.nsolvers; j++) {
    fl_solver *s;
    if (fl_peer_find(a.solvers[j])) {
      char js[1024];
      if (fl_peer_options_resolve(a.solvers[j], a.nsolver_sets, a.solver_sets, js, sizeof js) >= 0)
        cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(man, "solvers"), a.solvers[j],
                              cJSON_Parse(js));
      continue;
    }
    if (make_solver(&a, a.solvers[j], &s) == 0) {
      fl_results_add_solver(res, s);
      fl_solver_destroy(s);
    }
  }

  // the recording: every step unless that passes RECORD_BUDGET bytes
  fl_recorder *rec = NULL;
  if (a.record != 0) {
    fl_run r0;
    FILE *rf = NULL;
    int rr = fl_run_open(&scene_only, &r0);
    fl_world *w0 = r0.world;
    if (rr >= 0 && a.record < 0) a.record = fl_record_auto_every(w0, nsteps, a.nsolvers, RECORD_BUDGET);
    if (rr >= 0) rf = fl_results_file(res, FL_RECORD_FILE);
    if (rr >= 0 && !rf) rr = fl_errcode();
    if (rr >= 0) rr = fl_record_begin(rf, w0, a.input, a.nsolvers, a.solvers, (int)a.record, nsteps, &rec);
    fl_run_close(&r0);
    if (rr < 0) {
      fprintf(stderr, "frictionlab run: %s\n", fl_errmsg());
      fl_results_abort(res);
      return 1;
    }
    cJSON *ro = cJSON_AddObjectToObject(man, "recording");
    cJSON_AddStringToObject(ro, "file", FL_RECORD_FILE);
    cJSON_AddNumberToObject(ro, "every", (double)a.record);
  }

  fl_progress bar;
  fl_progress_begin(&bar, "run", nsteps * a.nsolvers);
  fl_run_verdict sums[MAX_SOLVERS];
  int failed = 0;
  for (int j = 0; j < a.nsolvers; j++) {
    cJSON *r = cJSON_AddObjectToObject(runs, a.solvers[j]);
    cJSON *final = cJSON_CreateObject();
    int src = simulate(&a, j, nsteps, steps, iters, obs, rec, &bar, (long)j * nsteps, &sums[j], final);
    // a size refused against the memory limit (contact problem, broad phase) is the scene's, not
    // the solver's: no results folder, the estimate and the limit on stderr (issue 51, item 5)
    if (src == FL_ERR_NOMEM) {
      fl_progress_end(&bar);
      fprintf(stderr, "frictionlab run: %s: %s\n", a.solvers[j], sums[j].error);
      cJSON_Delete(final);
      fl_record_free(rec);
      fl_results_abort(res);
      return 1;
    }
    fl_run_verdict_json(&sums[j], r);
    cJSON_AddItemToObject(r, "final_observables", final);
    if (sums[j].error[0]) {
      cJSON_AddStringToObject(r, "error", sums[j].error);
      failed = 1;
    }
  }
  fl_progress_end(&bar);
  fl_record_free(rec);
  // the viewer, from the recording as written (the same file `frictionlab view` reads)
  char viewer_note[512] = "";
  if (rec) {
    char rp[1200], vp[1200];
    snprintf(rp, sizeof rp, "%s/%s", a.staging, FL_RECORD_FILE);
    snprintf(vp, sizeof vp, "%s/%s", a.staging, FL_VIEWER_FILE);
    FILE *rf = fl_results_file(res, FL_RECORD_FILE);
    fl_record_info ri;
    int rv = rf && fflush(rf) == 0 ? fl_viewer_write(rp, vp, &ri) : fl_errcode();
    if (rv >= 0)
      snprintf(viewer_note, sizeof viewer_note, "viewer: %s/%s (%ld frames, every %ld steps; "
               "`frictionlab view %s`)", a.out, FL_VIEWER_FILE, ri.frames, a.record, a.out);
    else
      snprintf(viewer_note, sizeof viewer_note, "no viewer.html: %s (the recording is in %s)",
               fl_errmsg(), FL_RECORD_FILE);
  }
  if (fl_results_commit(res) < 0) {
    fprintf(stderr, "frictionlab run: %s\n", fl_errmsg());
    return 1;
  }
  printf("%s: %ld steps of %g s -> %s\n", a.input, nsteps, dt, a.out);
  if (viewer_note[0]) printf("%s\n", viewer_note);
  printf("%-16s %8s %10s %12s %10s %10s  %s\n", "solver", "steps", "iters/step", "pen_max (m)",
         "solve (s)", "wall (s)", "status");
  for (int j = 0; j < a.nsolvers; j++) {
    const fl_run_verdict *s = &sums[j];
    char st[1024];
    printf("%-16s %8ld %10.1f %12.3g %10.3g %10.3g  %s\n", a.solvers[j], s->steps,
           s->steps ? (double)s->iters / s->steps : 0.0, s->pen_max, s->solve_s, s->wall_s,
           fl_run_verdict_text(s, st, sizeof st));
  }
  for (int j = 0; j < a.nsolvers; j++)
    if (sums[j].fallback)
      printf("%s: %d of %ld steps solved again with a fallback law (sap: friction=soft; "
             "iterations counted)\n", a.solvers[j], sums[j].fallback, sums[j].steps);
  if (a.nsolvers > 0) fl_run_verdict_checked(&sums[0], stdout);
  return failed ? 1 : 0;
}

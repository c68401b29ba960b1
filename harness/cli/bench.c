// SPDX-License-Identifier: Apache-2.0
/* bench.c: `frictionlab bench`, solvers (and the collision and assembly stages of a scene)
 * timed against each other in one run.
 *
 * The state is fixed first (a scene advanced --warmup steps with --warmup-solver, or a file),
 * then each stage is repeated --reps times on that same state: collision (broad and narrow
 * phase) and assembly of fl_problem, and for every solver a fresh handle's setup and solve of
 * the same problem. Minimum and median wall times are reported, per solve and per iteration,
 * with ratios to the first solver measured in the same run, so numbers from different machines
 * are compared as ratios. Nothing here asserts on time; results go to bench.csv.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../sim/fl_fem.h"
#include "../../sim/fl_loop.h"
#include "../../sim/fl_world.h"
#include "bench_impl.h"
#include "../fl_harness.h"
#include "../output/fl_run_csv.h"
#include "../../peers/fl_peer.h"
#include "fl_settings.h"
#include "../run/fl_run.h"

#define MAXSOLV 16
#define MAXSET 32

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}


static double median(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, cmp_double);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}


static double minimum(const double *x, int n) {
  double m = INFINITY;
  for (int k = 0; k < n; k++) m = fmin(m, x[k]);
  return m;
}


#define A(m) offsetof(fl__bench_cli, m)
static const fl_arg_desc bench_flags[] = {
  {"--solver", FL_ARG_MULTI, A(solver_arg), 0, 0, "a,b", NULL,
   "solvers by registered name (with --steps also peer simulators: mujoco-pgs, mujoco-cg, "
   "mujoco-newton; peers/fl_peer.h)"},
  {"--set", FL_ARG_MULTI, A(set_arg), 0, 0, "key=value", NULL,
   "[solver.]key=value, or a scene parameter (docs/usage.md, \"What --set means\")"},
  {"--scene-set", FL_ARG_MULTI, A(scene_set_arg), 0, 0, "key=value", NULL,
   "a scene parameter (the same as --set scene.key=value)"},
  {"--warmup", FL_ARG_INT, A(warmup), 0, 1000000, "N", "0",
   "one problem: steps of the scene before it is captured"},
  {"--warmup-solver", FL_ARG_STR, A(warmup_solver), 0, 0, "S", "pgs",
   "one problem: the solver of the warm-up steps"},
  {"--reps", FL_ARG_INT, A(reps), 1, 1000000, "R", "5", "repetitions of each stage or run"},
  {"--steps", FL_ARG_INT, A(steps), 1, 100000000L, "N", NULL,
   "whole steps: take N steps of a canonical scene with each solver, R times interleaved"},
  {"--callgrind", FL_ARG_FLAG, A(callgrind), 0, 0, NULL, NULL,
   "with --steps: count instructions per step with valgrind, whole and by stage"},
  {"--callgrind-child", FL_ARG_FLAG, A(child), 0, 0, NULL, NULL, NULL},
  {"--out", FL_ARG_STR, A(out), 0, 0, "DIR", NULL, "results folder"},
  {"--force", FL_ARG_FLAG, A(force), 0, 0, NULL, NULL, "replace an existing --out folder"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef A

static const fl_cmd_spec bench_spec = {
  "bench", "PROBLEM|SCENE", 1, offsetof(fl__bench_cli, pos),
  "Times solvers against each other on one fixed problem: PROBLEM is a scene (advanced N\n"
  "warm-up steps with solver S, then captured), a scene file (.json), an FCLIB file (.hdf5)\n"
  "or a built-in example. For scenes the collision and assembly stages are timed too. Each\n"
  "stage runs R times; bench.csv gives minimum and median wall times, per solve and per\n"
  "iteration, and ratios to the first solver of the same run; GPU solvers add their kernel\n"
  "time per iteration and the bandwidth it achieves. Use --set never_stop=true --set\n"
  "max_iter=K for fixed-budget timings.\n"
  "\n"
  "Whole steps (--steps N): takes N steps of the scene with each solver, R times interleaved,\n"
  "and reports per step the minimum and median wall time and its stages (collision,\n"
  "assembly, solver set-up, solve, integration, other), the deepest penetration from the\n"
  "poses and, with --callgrind, the instructions per step counted by valgrind inside the step\n"
  "calls, whole and by stage.\n",
  NULL, bench_flags};


static int ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && strcmp(s + n - m, suf) == 0;
}


/* the warm-up's progress bar after step k (fl_loop each) */
static int warmup_each(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  (void)w;
  (void)info;
  (void)val;
  fl_progress_update(ctx, k + 1);
  return FL_OK;
}


int fl_cmd_bench(int argc, char **argv) {
  static fl__bench_cli c; // static: its lists are large
  memset(&c, 0, sizeof c);
  int prc = fl_args_parse(&bench_spec, argc, argv, &c);
  if (prc) return prc == 1 ? 0 : 2;
  if (c.steps > 0) return fl__bench_steps_run(&c);
  const char *prob_arg = c.pos.n ? c.pos.v[0] : NULL, *out = c.out, *warm_solver = c.warmup_solver;
  char solver_buf[1024];
  char *solver_list = NULL, *set[MAXSET], *sset[MAXSET];
  int nset = 0, nsset = 0, warmup = (int)c.warmup, reps = (int)c.reps, force = c.force, status = 1;
  if (c.callgrind) {
    fprintf(stderr, "frictionlab bench: --callgrind counts whole steps: give --steps N\n");
    return 2;
  }
  // the --solver values as one comma list
  solver_buf[0] = 0;
  for (int i = 0; i < c.solver_arg.n; i++) {
    if (strlen(solver_buf) + strlen(c.solver_arg.v[i]) + 2 > sizeof solver_buf) {
      fprintf(stderr, "frictionlab bench: --solver: list too long\n");
      return 2;
    }
    if (i) strcat(solver_buf, ",");
    strcat(solver_buf, c.solver_arg.v[i]);
    solver_list = solver_buf;
  }
  for (int i = 0; i < c.set_arg.n && nset < MAXSET; i++) set[nset++] = (char *)c.set_arg.v[i];
  for (int i = 0; i < c.scene_set_arg.n && nsset < MAXSET; i++)
    sset[nsset++] = (char *)c.scene_set_arg.v[i];
  if (!prob_arg || !solver_list) {
    fprintf(stderr, "frictionlab bench: needs a PROBLEM and --solver\n");
    fl_args_usage(&bench_spec, stderr);
    return 2;
  }
  fl_register_all();

  //---- solvers: names and options checked before anything runs ----
  char sbuf[1024];
  const char *solv[MAXSOLV];
  int nsolv = 0;
  snprintf(sbuf, sizeof sbuf, "%s", solver_list);
  for (char *t = strtok(sbuf, ","); t && nsolv < MAXSOLV; t = strtok(NULL, ",")) solv[nsolv++] = t;
  // --set KEY=V of the scene's scope joins --scene-set (fl_settings.h)
  fl_settings_ctx sctx = {"bench", fl_scene_find(prob_arg) ? prob_arg : NULL, nsolv, solv, 0};
  if (fl_settings_split(&sctx, &nset, (const char **)set, &nsset, (const char **)sset, MAXSET) < 0) {
    fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
    return 2;
  }
  for (int s = 0; s < nsolv; s++) {
    fl_solver *h;
    if (fl_peer_prefix(solv[s])) {
      fprintf(stderr, "frictionlab bench: %s is a peer simulator: it steps whole scenes "
                      "(bench SCENE --steps N --solver %s)\n", solv[s], solv[s]);
      return 2;
    }
    fl_run_spec chk = {.nset = nset, .set = (const char *const *)set};
    if (fl_run_solver(&chk, solv[s], &h, NULL) < 0) {
      fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
      return 2;
    }
    fl_solver_destroy(h);
  }

  //---- the problem: a world state, or a file or example ----
  fl_world *w = NULL;
  fl_problem *owned = NULL, *p = NULL;
  // a scene: its run (the harness's common metrics are no part of a step), with the warm-up
  // solver when there are warm-up steps
  fl_run_spec wsp = {.scene = prob_arg, .nscene = nsset, .scene_set = (const char *const *)sset,
                     .flags = FL_RUN_NO_METRICS, .steps = warmup, .each = warmup_each};
  fl_run run;
  memset(&run, 0, sizeof run);
  fl_results *res = NULL;
  double *tcol = NULL, *tasm = NULL, *tsol = NULL, *tit = NULL;
  int rc;
  if (ends_with(prob_arg, ".hdf5")) {
    rc = fl_problem_load_fclib(prob_arg, &owned);
  } else if (fl_scene_kind_of(prob_arg) == FL_SCENE_FILE || fl_scene_find(prob_arg)) {
    rc = fl_run_open(&wsp, &run);
    w = run.world;
  } else {
    rc = fl_problem_create_example(prob_arg, &owned);
  }
  if (rc < 0) {
    fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
    status = 2;
    goto done;
  }
  tcol = fl_calloc((size_t)reps, sizeof(double));
  tasm = fl_calloc((size_t)reps, sizeof(double));
  tsol = fl_calloc((size_t)reps, sizeof(double));
  tit = fl_calloc((size_t)reps, sizeof(double));
  if (!tcol || !tasm || !tsol || !tit) {
    fprintf(stderr, "frictionlab bench: out of memory\n");
    goto done;
  }
  if (w && warmup > 0) {
    fl_run_close(&run); // the same scene again, with the warm-up solver
    wsp.stepper = warm_solver;
    wsp.flags |= FL_RUN_NO_PEER;
    w = NULL;
    if (fl_run_open(&wsp, &run) < 0) {
      fprintf(stderr, "frictionlab bench: --warmup-solver: %s\n", fl_errmsg());
      status = 2;
      goto done;
    }
    w = run.world;
    fl_progress wbar;
    fl_progress_begin(&wbar, "bench warm-up", warmup);
    run.spec.ctx = &wbar;
    int wrc = fl_run_go(&run);
    fl_progress_end(&wbar);
    if (wrc < 0) {
      fprintf(stderr, "frictionlab bench: warm-up step %ld: %s\n", run.loop.taken, fl_errmsg());
      goto done;
    }
  }
  if (!out) out = "results/bench/latest";
  if (fl_results_begin(out, "bench", force, &res) < 0) {
    fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
    goto done;
  }
  FILE *f = fl_results_file(res, "bench.csv");
  if (!f) {
    fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
    goto done;
  }
  fl_csv_header(f, fl_bench_cols, FL_BENCH_NCOLS);
  char label[160];
  snprintf(label, sizeof label, "%s", prob_arg);
  int nbody = w ? (int)w->nbody : 0;

  //---- collision and assembly stages (and the deformable bodies' share of them) ----
  if (w) {
    double *tfem[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3 && w->nfem > 0; k++) tfem[k] = fl_calloc((size_t)reps, sizeof(double));
    fl_fem_timing ft = {0};
    for (int r = 0; r < reps; r++) {
      fl_step_info info;
      if (fl_world_prepare(w, &info) < 0) {
        fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
        for (int k = 0; k < 3; k++) fl_free(tfem[k]);
        goto done;
      }
      tcol[r] = info.collide_s;
      tasm[r] = info.assemble_s;
      if (w->nfem > 0 && tfem[0] && tfem[1] && tfem[2]) {
        fl_world_fem_timing(w, &ft);
        tfem[0][r] = ft.geometry_s;
        tfem[1][r] = ft.element_s;
        tfem[2][r] = ft.schur_s;
      }
    }
    if (w->nfem > 0 && tfem[0] && tfem[1] && tfem[2]) {
      // CPU times (s): vertex queries, element loop and assembly, factor + Schur complement + v*
      fl_int ntet = 0;
      for (fl_int k = 0; k < w->nfem; k++) ntet += w->fem[k]->mesh->ntet;
      const char *fst[3] = {"fem_geometry", "fem_elements", "fem_factor_schur"};
      for (int k = 0; k < 3; k++) {
        double mn = minimum(tfem[k], reps), md = median(tfem[k], reps);
        fl_bench_row row = {.problem = label, .what = fst[k], .reps = reps, .nbody = nbody,
                            .nv = (int)ft.nfree, .min_s = mn, .median_s = md, .has_times = 1};
        fl_csv_row(f, fl_bench_cols, FL_BENCH_NCOLS, &row);
        printf("%-10s %-16s min %.4g s  median %.4g s  (%d tets, %d free dofs, %d in the "
               "problem, %s)\n", label, fst[k], mn, md, (int)ntet, (int)ft.nfree,
               (int)ft.nparticipating, w->fem_solve == FL_FEM_SCHUR ? "schur" : "full");
      }
    }
    for (int k = 0; k < 3; k++) fl_free(tfem[k]);
    p = fl_world_problem(w);
    const char *stage[2] = {"collide", "assemble"};
    double *tt[2] = {tcol, tasm};
    for (int k = 0; k < 2; k++) {
      double mn = minimum(tt[k], reps), md = median(tt[k], reps);
      fl_bench_row row = {.problem = label, .what = stage[k], .reps = reps, .nbody = nbody,
                          .nc = (int)p->nc, .nv = (int)p->nv, .min_s = mn, .median_s = md,
                          .has_nc = 1, .has_times = 1};
      fl_csv_row(f, fl_bench_cols, FL_BENCH_NCOLS, &row);
      printf("%-10s %-16s min %.4g s  median %.4g s  (%d bodies, %d contacts)\n", label, stage[k],
             mn, md, nbody, (int)p->nc);
    }
  } else {
    p = owned;
  }

  //---- solvers on the same problem ----
  double base_med = NAN, base_it = NAN;
  double *v = fl_calloc((size_t)p->nv + 1, sizeof(double));
  double *g = fl_calloc((size_t)fl_problem_nrows(p) + 1, sizeof(double));
  if (!v || !g) {
    fl_free(v);
    fl_free(g);
    fprintf(stderr, "frictionlab bench: out of memory\n");
    goto done;
  }
  fl_progress bar;
  fl_progress_begin(&bar, "bench", (long)nsolv * reps);
  for (int s = 0; s < nsolv; s++) {
    fl_result r0 = {0};
    int unsupported = 0;
    double dev_it = INFINITY, dev_bw = NAN; /* GPU solvers: fastest kernel time per iteration */
    for (int r = 0; r < reps; r++) {
      fl_solver *h = NULL;
      fl_result rr;
      fl_run_spec one = {.nset = nset, .set = (const char *const *)set,
                         .opts_last = "error_every=0"};
      rc = fl_run_solver(&one, solv[s], &h, NULL);
      double t0 = fl_time_now();
      if (rc >= 0) rc = fl_solver_setup(h, p);
      if (rc >= 0) rc = fl_solver_solve(h, p, v, g, &rr);
      double t1 = fl_time_now();
      // GPU solvers: their view names the device, the colours and the memory held there
      if (rc >= 0 && r == 0 && (fl_solver_caps(h) & FL_CAP_GPU)) fl_solver_view(h, stdout);
      fl_solver_destroy(h);
      if (rc == FL_ERR_UNSUPPORTED) {
        printf("%-10s %-16s unsupported: %s\n", label, solv[s], fl_errmsg());
        unsupported = 1;
        break;
      }
      if (rc < 0) {
        fprintf(stderr, "frictionlab bench: %s on %s: %s\n", solv[s], label, fl_errmsg());
        fl_free(v);
        fl_free(g);
        goto done;
      }
      tsol[r] = t1 - t0; // setup + solve: what a step pays
      tit[r] = rr.iters > 0 ? rr.solve_s / rr.iters : NAN;
      if (rr.iters > 0 && rr.device_s > 0 && rr.device_s / rr.iters < dev_it) {
        dev_it = rr.device_s / rr.iters;
        dev_bw = rr.device_bytes / rr.device_s * 1e-9;
      }
      r0 = rr;
      fl_progress_update(&bar, (long)s * reps + r + 1);
    }
    if (bar.active) fputs("\r\033[K", stderr); // the row below replaces the bar's line
    fl_bench_row row = {.problem = label, .what = solv[s], .nbody = nbody, .nc = (int)p->nc,
                        .nv = (int)p->nv, .has_nc = 1};
    if (unsupported) {
      row.reason = "unsupported";
      fl_csv_row(f, fl_bench_cols, FL_BENCH_NCOLS, &row);
      continue;
    }
    double mn = minimum(tsol, reps), md = median(tsol, reps);
    double mi = minimum(tit, reps), mdi = median(tit, reps);
    if (s == 0) {
      base_med = md;
      base_it = mdi;
    }
    row.reps              = reps;
    row.iterations        = r0.iters;
    row.reason            = fl_reason_name(r0.reason);
    row.min_s             = mn;
    row.median_s          = md;
    row.min_per_iter_s    = mi;
    row.median_per_iter_s = mdi;
    row.ratio_median      = md / base_med;
    row.ratio_per_iter    = mdi / base_it;
    row.device_per_iter_s = dev_it;
    row.device_GBps       = dev_bw;
    row.has_times = row.has_solve = 1;
    row.has_device = isfinite(dev_it);
    // the accuracy of the answer timed (the last repetition's): times compare only at equal
    // accuracy. The common merit (docs/merit.md) and the deepest penetration (m)
    fl_metrics m;
    double merit = INFINITY, pen = NAN;
    if (fl_problem_metrics(p, p->nv > 0 ? v : NULL, g, FL_NORM_FCLIB, &m) == FL_OK) {
      merit = fl_metrics_merit(&m, NAN);
      pen = m.penetration;
    }
    row.merit         = merit;
    row.penetration_m = pen;
    fl_csv_row(f, fl_bench_cols, FL_BENCH_NCOLS, &row);
    printf("%-10s %-16s min %.4g s  median %.4g s  %4d its  %.3g s/it  x%.3g of %s (%s)  "
           "merit %.3g  penetration %.3g m\n",
           label, solv[s], mn, md, r0.iters, mdi, md / base_med, solv[0],
           fl_reason_name(r0.reason), merit, pen);
    if (isfinite(dev_it))
      printf("%-10s %-16s device kernels %.3g s/it (CUDA events, fastest rep), %.0f GB/s of "
             "compulsory traffic\n", label, solv[s], dev_it, dev_bw);
  }
  fl_progress_end(&bar);
  fl_free(v);
  fl_free(g);
  {
    cJSON *man = fl_results_manifest(res);
    cJSON_AddStringToObject(man, "problem", prob_arg);
    cJSON_AddNumberToObject(man, "reps", reps);
    cJSON_AddNumberToObject(man, "warmup", warmup);
    cJSON_AddNumberToObject(man, "nbody", nbody);
    cJSON_AddNumberToObject(man, "nc", p->nc);
  }
  rc = fl_results_commit(res);
  res = NULL;
  if (rc < 0) {
    fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
    goto done;
  }
  printf("bench written to %s/bench.csv\n", out);
  status = 0;
done:
  fl_results_abort(res);
  fl_run_close(&run);
  fl_problem_free(owned);
  fl_free(tcol);
  fl_free(tasm);
  fl_free(tsol);
  fl_free(tit);
  return status;
}

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
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../sim/fl_fem.h"
#include "../sim/fl_world.h"
#include "fl_harness.h"
#include "fl_peer.h"
#include "fl_settings.h"

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


static void usage(FILE *f) {
  fprintf(f,
    "usage: frictionlab bench PROBLEM --solver a,b [--set [solver.]key=value]...\n"
    "                         [--scene-set key=value]... [--warmup N] [--warmup-solver S]\n"
    "                         [--reps R] [--out DIR] [--force]\n"
    "\n"
    "Times solvers against each other on one fixed problem: PROBLEM is a scene (advanced N\n"
    "warm-up steps with solver S, default pgs, then captured), a scene file (.json), an FCLIB\n"
    "file (.hdf5) or a built-in example. For scenes the collision and assembly stages are\n"
    "timed too. Each stage runs R times (default 5); bench.csv gives minimum and median wall\n"
    "times, per solve and per iteration, and ratios to the first solver of the same run;\n"
    "GPU solvers add their kernel time per iteration and the bandwidth it achieves.\n"
    "Use --set never_stop=true --set max_iter=K for fixed-budget timings.\n"
    "\n"
    "Whole steps: frictionlab bench SCENE --steps N --solver a,b [--set ...] [--scene-set ...]\n"
    "                         [--reps R] [--callgrind] [--out DIR] [--force]\n"
    "takes N steps of the scene with each solver, R times interleaved, and reports per step the\n"
    "minimum and median wall time and its stages (collision, assembly, solver set-up, solve,\n"
    "integration, other), the deepest penetration from the poses and, with --callgrind, the\n"
    "instructions per step counted by valgrind inside the step calls, whole and by stage.\n"
    "Solvers may be peer\n"
    "simulators (mujoco-pgs, mujoco-cg, mujoco-newton; harness/fl_peer.h).\n");
}


int fl_harness_apply_sets(fl_solver *s, int nset, char *const *set) {
  // one solver, no scene: the rule of fl_settings.h, without notes
  static fl_settings st;
  const char *name = fl_solver_name(s);
  fl_settings_ctx ctx = {"bench", NULL, 1, &name, 1};
  fl_settings_init(&st, &ctx);
  for (int k = 0; k < nset; k++) FL_TRY(fl_settings_add(&st, set[k], 0));
  return fl_settings_apply(&st, s, NULL);
}


static int ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && strcmp(s + n - m, suf) == 0;
}


int fl_cmd_bench(int argc, char **argv) {
  for (int k = 0; k < argc; k++)
    if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
      usage(stdout);
      return 0;
    }
  if (fl__bench_steps_wanted(argc, argv)) return fl__bench_steps(argc, argv);
  const char *prob_arg = NULL, *out = NULL, *warm_solver = "pgs";
  char *solver_list = NULL, *set[MAXSET], *sset[MAXSET];
  int nset = 0, nsset = 0, warmup = 0, reps = 5, force = 0, status = 1;
  for (int k = 0; k < argc; k++) {
    const char *a = argv[k];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(a, "--force")) {
      force = 1;
      continue;
    }
    if (a[0] != '-') {
      if (prob_arg) {
        fprintf(stderr, "frictionlab bench: one PROBLEM, got '%s' and '%s'\n", prob_arg, a);
        return 2;
      }
      prob_arg = a;
      continue;
    }
    if (k + 1 >= argc) {
      fprintf(stderr, "frictionlab bench: %s needs a value\n", a);
      return 2;
    }
    const char *v = argv[++k];
    char *end;
    if (!strcmp(a, "--solver")) {
      solver_list = (char *)v;
    } else if (!strcmp(a, "--set") && nset < MAXSET) {
      set[nset++] = (char *)v;
    } else if (!strcmp(a, "--scene-set") && nsset < MAXSET) {
      sset[nsset++] = (char *)v;
    } else if (!strcmp(a, "--out")) {
      out = v;
    } else if (!strcmp(a, "--warmup-solver")) {
      warm_solver = v;
    } else if (!strcmp(a, "--warmup") || !strcmp(a, "--reps")) {
      long n = strtol(v, &end, 10);
      if (*end || n < (a[2] == 'r' ? 1 : 0) || n > 1000000) {
        fprintf(stderr, "frictionlab bench: %s %s: expected a %s integer\n", a, v,
                a[2] == 'r' ? "positive" : "non-negative");
        return 2;
      }
      if (a[2] == 'r') reps = (int)n;
      else warmup = (int)n;
    } else {
      fprintf(stderr, "frictionlab bench: unknown argument '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (!prob_arg || !solver_list) {
    fprintf(stderr, "frictionlab bench: needs a PROBLEM and --solver\n");
    usage(stderr);
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
    if (fl_solver_create(solv[s], &h) < 0 || fl_harness_apply_sets(h, nset, set) < 0) {
      fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
      fl_solver_destroy(h);
      return 2;
    }
    fl_solver_destroy(h);
  }

  //---- the problem: a world state, or a file or example ----
  fl_world *w = NULL;
  fl_problem *owned = NULL, *p = NULL;
  fl_solver *ws = NULL;
  fl_results *res = NULL;
  double *tcol = NULL, *tasm = NULL, *tsol = NULL, *tit = NULL;
  int rc;
  if (ends_with(prob_arg, ".hdf5")) {
    rc = fl_problem_load_fclib(prob_arg, &owned);
  } else if (ends_with(prob_arg, ".json")) {
    rc = fl_world_load_json(prob_arg, &w);
  } else if (fl_scene_find(prob_arg)) {
    rc = fl_scene_create(prob_arg, nsset, (const char *const *)sset, &w);
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
  if (w) {
    w->compute_metrics = 0;
    if (warmup > 0) {
      if (fl_solver_create(warm_solver, &ws) < 0) {
        fprintf(stderr, "frictionlab bench: --warmup-solver: %s\n", fl_errmsg());
        status = 2;
        goto done;
      }
      fl_progress wbar;
      fl_progress_begin(&wbar, "bench warm-up", warmup);
      for (int k = 0; k < warmup; k++) {
        fl_step_info info;
        if (fl_world_step(w, ws, &info) < 0) {
          fl_progress_end(&wbar);
          fprintf(stderr, "frictionlab bench: warm-up step %d: %s\n", k, fl_errmsg());
          goto done;
        }
        fl_progress_update(&wbar, k + 1);
      }
      fl_progress_end(&wbar);
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
  fprintf(f, "problem,what,reps,nbody,nc,nv,iterations,reason,min_s,median_s,min_per_iter_s,"
             "median_per_iter_s,ratio_median,ratio_per_iter,device_per_iter_s,device_GBps,merit,"
             "penetration_m\n");
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
        fl_csv_str(f, label);
        fprintf(f, ",%s,%d,%d,,%d,,,%.6g,%.6g,,,,,,,,\n", fst[k], reps, nbody, (int)ft.nfree, mn, md);
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
      fl_csv_str(f, label);
      fprintf(f, ",%s,%d,%d,%d,%d,,,%.6g,%.6g,,,,,,,,\n", stage[k], reps, nbody, (int)p->nc,
              (int)p->nv, mn, md);
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
      rc = fl_solver_create(solv[s], &h);
      if (rc >= 0) rc = fl_harness_apply_sets(h, nset, set);
      if (rc >= 0) rc = fl_solver_set_option(h, "error_every", "0");
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
    fl_csv_str(f, label);
    fputc(',', f);
    fl_csv_str(f, solv[s]);
    if (unsupported) {
      fprintf(f, ",0,%d,%d,%d,,unsupported,,,,,,,,,,\n", nbody, (int)p->nc, (int)p->nv);
      continue;
    }
    double mn = minimum(tsol, reps), md = median(tsol, reps);
    double mi = minimum(tit, reps), mdi = median(tit, reps);
    if (s == 0) {
      base_med = md;
      base_it = mdi;
    }
    fprintf(f, ",%d,%d,%d,%d,%d,%s,%.6g,%.6g,%.6g,%.6g,%.4g,%.4g,", reps, nbody, (int)p->nc,
            (int)p->nv, r0.iters, fl_reason_name(r0.reason), mn, md, mi, mdi, md / base_med,
            mdi / base_it);
    if (isfinite(dev_it)) fprintf(f, "%.6g,%.6g,", dev_it, dev_bw);
    else fprintf(f, ",,");
    // the accuracy of the answer timed (the last repetition's): times compare only at equal
    // accuracy. The common merit (docs/merit.md) and the deepest penetration (m)
    fl_metrics m;
    double merit = INFINITY, pen = NAN;
    if (fl_problem_metrics(p, p->nv > 0 ? v : NULL, g, FL_NORM_FCLIB, &m) == FL_OK) {
      merit = fl_metrics_merit(&m, NAN);
      pen = m.penetration;
    }
    fprintf(f, "%.4g,%.4g\n", merit, pen);
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
  fl_solver_destroy(ws);
  fl_world_free(w);
  fl_problem_free(owned);
  fl_free(tcol);
  fl_free(tasm);
  fl_free(tsol);
  fl_free(tit);
  return status;
}

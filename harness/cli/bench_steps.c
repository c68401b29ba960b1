// SPDX-License-Identifier: Apache-2.0
/* bench_steps.c: `frictionlab bench SCENE --steps N --solver a,b [--callgrind]`, whole
 * simulation steps timed against each other, FrictionLab's solvers and peer simulators alike.
 *
 * Outline: for each of R repetitions, for each solver in turn (interleaved, so that a change
 * of machine load spreads over all of them), build the scene afresh and take N steps, timing
 * each whole step (wall) and its stages: collision, assembly, solver set-up, solve,
 * integration, and the rest (FrictionLab: the guess and warm-start bookkeeping; MuJoCo: its
 * timers' own cost). Per repetition the mean per step; over repetitions the minimum and the
 * median. The deepest penetration (from the poses, after every step of the first repetition,
 * outside the timing) is FrictionLab's measure for every solver. --callgrind re-runs this
 * program under valgrind's callgrind with collection switched on only inside the step calls
 * and reports instructions per step per solver. Nothing here asserts on time.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../../sim/fl_loop.h"
#include "../../sim/fl_world.h"
#include "bench_impl.h"
#include "../fl_harness.h"
#include "../output/fl_run_csv.h"
#include "../../peers/fl_peer.h"
#include "fl_settings.h"
#include "../run/fl_run.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define FL_HAVE_CALLGRIND_H 1
#endif
#endif

#define MAXSOLV 16
#define MAXSET 64

typedef struct step_args {
  const char *scene;
  char solver_buf[1024];
  const char *solv[MAXSOLV];
  int nsolv;
  const char *set[MAXSET], *sset[MAXSET];
  int nset, nsset;
  long steps;
  int reps;
  const char *out;
  int force, callgrind, child;
} step_args;

/* Per solver and repetition: means per step (s) of the whole step and of each stage (bench.csv's
 * collide_s ... other_s, in this order: fl_bench_steps_cols). */
enum { ST_STEP, ST_COLLIDE, ST_ASSEMBLE, ST_SETUP, ST_SOLVE, ST_INTEGRATE, ST_OTHER, NST };


static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}


static double median_of(const double *x, int n) {
  double *c = fl_malloc((size_t)n * sizeof(double));
  if (!c) return NAN;
  memcpy(c, x, (size_t)n * sizeof(double));
  qsort(c, (size_t)n, sizeof *c, cmp_double);
  double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
  fl_free(c);
  return m;
}


static int fill(const fl__bench_cli *c, step_args *a) {
  memset(a, 0, sizeof *a);
  a->scene = c->pos.n ? c->pos.v[0] : NULL;
  a->steps = c->steps;
  a->reps = (int)c->reps;
  a->out = c->out;
  a->force = c->force;
  a->callgrind = c->callgrind;
  a->child = c->child;
  if (c->warmup > 0) {
    fprintf(stderr, "frictionlab bench: --warmup is for one captured problem, not with --steps\n");
    return 2;
  }
  for (int i = 0; i < c->solver_arg.n; i++) {
    size_t u = strlen(a->solver_buf);
    if (u + strlen(c->solver_arg.v[i]) + 2 > sizeof a->solver_buf) return 2;
    if (u) strcat(a->solver_buf, ",");
    strcat(a->solver_buf, c->solver_arg.v[i]);
  }
  for (int i = 0; i < c->set_arg.n; i++) {
    if (a->nset == MAXSET) return 2;
    a->set[a->nset++] = c->set_arg.v[i];
  }
  for (int i = 0; i < c->scene_set_arg.n; i++) {
    if (a->nsset == MAXSET) return 2;
    a->sset[a->nsset++] = c->scene_set_arg.v[i];
  }
  if (!a->scene || !a->solver_buf[0]) {
    fprintf(stderr, "frictionlab bench: --steps needs a SCENE and --solver\n");
    return 2;
  }
  if (!fl_scene_find(a->scene)) {
    fprintf(stderr, "frictionlab bench: --steps runs canonical scenes; '%s' is none (see "
                    "`frictionlab list problems`)\n", a->scene);
    return 2;
  }
  for (char *t = strtok(a->solver_buf, ","); t; t = strtok(NULL, ",")) {
    if (a->nsolv == MAXSOLV) return 2;
    if (fl_peer_unavailable(t)) {
      fprintf(stderr, "frictionlab bench: --solver %s: %s\n", t, fl_peer_unavailable(t));
      return 2;
    }
    if (!fl_peer_find(t) && !fl_solver_find(t)) {
      fprintf(stderr, "frictionlab bench: --solver: unknown solver '%s'\n", t);
      return 2;
    }
    a->solv[a->nsolv++] = t;
  }
  // --set KEY=V of the scene's scope joins --scene-set (fl_settings.h)
  fl_settings_ctx ctx = {"bench", a->scene, a->nsolv, a->solv, 0};
  if (fl_settings_split(&ctx, &a->nset, a->set, &a->nsset, a->sset, MAXSET) < 0) {
    fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
    return 2;
  }
  return 0;
}


/* callgrind's collection on around each step call alone: a stepper around another */
static int cg_step(void *self, fl_world *w, fl_step_info *info) {
  const fl_stepper *in = self;
#ifdef FL_HAVE_CALLGRIND_H
  CALLGRIND_TOGGLE_COLLECT;
#endif
  int rc = in->step(in->self, w, info);
#ifdef FL_HAVE_CALLGRIND_H
  CALLGRIND_TOGGLE_COLLECT;
#endif
  return rc;
}


/* one run's sums (fl_loop each): stage means, contacts, iterations, deepest penetration */
typedef struct bench_step_ctx {
  const fl_loop *loop; /* its step_s: the step call's wall time */
  fl_peer *peer;
  double n;            /* steps of the run, the means' divisor */
  double *mean, nc, its, deepest;
  int pen;             /* 1: the penetration after every step */
  const fl_solver *s;  /* FrictionLab's solver (NULL for a peer): its history's evaluations */
  double ls;           /* line-search evaluations (fl_iter_stat.neval) per step, mean */
} bench_step_ctx;


static int bench_each(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  (void)k;
  (void)val;
  bench_step_ctx *b = ctx;
  double st[NST];
  st[ST_STEP] = b->loop->step_s;
  if (fl_peer_own_clock(b->peer)) { // it ran this step ahead in its own process: its own clock
    fl_peer_stages ps;
    fl_peer_stages_last(b->peer, &ps);
    st[ST_STEP] = ps.step_s;
  }
  st[ST_COLLIDE] = info->collide_s;
  st[ST_ASSEMBLE] = info->assemble_s;
  if (b->peer) {
    fl_peer_stages ps;
    fl_peer_stages_last(b->peer, &ps);
    st[ST_SETUP] = ps.setup_s;
    st[ST_SOLVE] = ps.solve_s;
  } else {
    st[ST_SETUP] = info->nc + info->nh > 0 ? info->res.setup_s : 0;
    st[ST_SOLVE] = info->nc + info->nh > 0 ? info->res.solve_s : 0;
  }
  st[ST_INTEGRATE] = info->integrate_s;
  st[ST_OTHER] = st[ST_STEP];
  for (int q = ST_COLLIDE; q < ST_OTHER; q++) st[ST_OTHER] -= st[q];
  for (int q = 0; q < NST; q++) b->mean[q] += st[q] / b->n;
  b->nc += (double)info->nc / b->n;
  b->its += (double)info->res.iters / b->n;
  if (b->s && info->nc + info->nh > 0) {
    int nh = 0;
    const fl_iter_stat *h = fl_solver_history(b->s, &nh);
    for (int i = 0; h && i < nh; i++)
      if (h[i].neval > 0) b->ls += (double)h[i].neval / b->n;
  }
  if (b->pen) {
    double p = 0;
    FL_TRY(fl_world_penetration(w, &p));
    if (p > b->deepest) b->deepest = p;
  }
  return FL_OK;
}


/* One solver's run of a->steps steps: means per step of every stage into mean[NST], deepest
 * penetration (when pen != NULL), mean contacts, iterations (it_mean[0]) and line-search
 * evaluations (it_mean[1]; NAN for a peer). cg: toggle callgrind's collection around every step
 * call. */
static int run_one(const step_args *a, const char *sname, int cg, double mean[NST], double *pen,
                   double *nc_mean, double it_mean[2]) {
  // the harness's common metrics are no part of a step
  fl_run_spec sp = {.scene = a->scene, .nscene = a->nsset, .scene_set = a->sset,
                    .flags = FL_RUN_NO_METRICS, .stepper = sname, .nset = a->nset, .set = a->set,
                    .opts_last = "error_every=0", .steps = a->steps, .each = bench_each};
  fl_run run;
  int rc = fl_run_open(&sp, &run);
  for (int k = 0; k < NST; k++) mean[k] = 0;
  fl_stepper inner = run.stepper;
  if (cg) run.stepper = (fl_stepper){cg_step, NULL, &inner};
  bench_step_ctx b = {&run.loop, run.peer, (double)a->steps, mean, 0, 0, 0, pen != NULL,
                      run.solver, 0};
  run.spec.ctx = &b;
  if (rc >= 0) rc = fl_run_go(&run);
  double nc = b.nc, its = b.its, deepest = b.deepest;
  if (rc < 0) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", fl_errmsg());
    fl_seterr(rc, "%s on %s: %s", sname, a->scene, msg);
  }
  if (pen) *pen = deepest;
  *nc_mean = nc;
  it_mean[0] = its;
  it_mean[1] = run.peer ? NAN : b.ls;
  fl_run_close(&run);
  return rc;
}


//---- instructions: this program again under callgrind ----

/* The child: one run per solver, collection on only inside the steps, one dump per solver. */
static int callgrind_child(const step_args *a) {
#ifdef FL_HAVE_CALLGRIND_H
  for (int s = 0; s < a->nsolv; s++) {
    double mean[NST], nc, it[2];
    CALLGRIND_ZERO_STATS;
    if (run_one(a, a->solv[s], 1, mean, NULL, &nc, it) < 0) {
      fprintf(stderr, "frictionlab bench (callgrind): %s\n", fl_errmsg());
      return 1;
    }
    CALLGRIND_DUMP_STATS_AT(a->solv[s]);
  }
  return 0;
#else
  (void)a;
  fprintf(stderr, "frictionlab bench: built without valgrind/callgrind.h\n");
  return 1;
#endif
}


/* The total Ir of one callgrind dump file ("totals:" or "summary:" line), or -1. */
static double dump_total(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[512];
  double tot = -1;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "totals:", 7)) tot = strtod(line + 7, NULL);
    else if (!strncmp(line, "summary:", 8) && tot < 0) tot = strtod(line + 8, NULL);
  }
  fclose(f);
  return tot;
}


/* Instruction stages of one dump (per step), from callgrind_annotate's inclusive counts of the
 * stage functions: FrictionLab: collision the body kinds' collision hooks (rigid_collide,
 * fem_collide; the stepper calls them, not fl__collide_all), assembly the rest of
 * fl_world_prepare, set-up fl_solver_setup, solve fl_solver_solve, other the rest of the step
 * (the guess, warm-start bookkeeping, integration); MuJoCo: collision mj_collision, set-up
 * mj_makeConstraint + mj_projectConstraint, solve mj_fwdConstraint, other mj_Euler (the
 * integration), assembly the rest of mj_step. NAN where a function was not found. */
enum { IS_COLLIDE, IS_ASSEMBLE, IS_SETUP, IS_SOLVE, IS_OTHER, NIS };
static const char *const is_name[NIS] = {"collide", "assemble", "setup", "solve", "other"};
_Static_assert(NST - 1 == FL_BENCH_NSTAGE && NIS == FL_BENCH_NINSTR, "bench.csv's stage columns");

static void dump_stages(const char *path, int peer, double total, long steps, double out[NIS]) {
  for (int k = 0; k < NIS; k++) out[k] = NAN;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "callgrind_annotate --inclusive=yes --threshold=100 '%s' 2>/dev/null",
           path);
  FILE *f = popen(cmd, "r");
  if (!f) return;
  // inclusive counts of the functions of interest
  static const char *const fn[] = {"rigid_collide",   "fl_world_prepare", "fl_solver_setup",
                                   "fl_solver_solve", "mj_collision",     "mj_makeConstraint",
                                   "mj_projectConstraint", "mj_fwdConstraint", "mj_Euler",
                                   "fem_collide"};
  enum { NFN = sizeof fn / sizeof fn[0] };
  double c[NFN];
  for (int k = 0; k < NFN; k++) c[k] = NAN;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    // "  1,234,567 (12.34%)  file:function[.part.0] [object]"
    char num[64];
    int n = 0;
    const char *p = line;
    while (*p == ' ') p++;
    while ((*p >= '0' && *p <= '9') || *p == ',') {
      if (*p != ',' && n < 63) num[n++] = *p;
      p++;
    }
    num[n] = 0;
    if (!n) continue;
    const char *colon = strchr(p, ':');
    if (!colon) continue;
    const char *name = colon + 1;
    size_t len = strcspn(name, " .[\n");
    for (int k = 0; k < NFN; k++)
      if (strlen(fn[k]) == len && !strncmp(name, fn[k], len) && isnan(c[k])) c[k] = strtod(num, NULL);
  }
  pclose(f);
  double x[NIS];
  if (peer) {
    x[IS_COLLIDE] = c[4];
    x[IS_SETUP] = c[5] + (isnan(c[6]) ? 0 : c[6]);
    x[IS_SOLVE] = c[7];
    x[IS_OTHER] = c[8];
    x[IS_ASSEMBLE] = total - x[IS_COLLIDE] - x[IS_SETUP] - x[IS_SOLVE] - x[IS_OTHER];
  } else {
    // a kind without bodies is never called: its hook is absent from the dump
    double rc = isnan(c[0]) ? 0 : c[0], fc = isnan(c[9]) ? 0 : c[9];
    x[IS_COLLIDE] = isnan(c[0]) && isnan(c[9]) ? NAN : rc + fc;
    x[IS_ASSEMBLE] = c[1] - x[IS_COLLIDE];
    x[IS_SETUP] = c[2];
    x[IS_SOLVE] = c[3];
    x[IS_OTHER] = total - c[1] - c[2] - c[3];
  }
  for (int k = 0; k < NIS; k++) out[k] = x[k] / (double)steps;
}


/* Instructions per step of every solver (instr[s]) and their stages (stage[NIS s + k]), by
 * running the child under valgrind. */
static int callgrind_parent(const step_args *a, double *instr, double *stage) {
  for (int s = 0; s < a->nsolv; s++) instr[s] = NAN;
  for (int s = 0; s < NIS * a->nsolv; s++) stage[s] = NAN;
#ifndef FL_HAVE_CALLGRIND_H
  return fl_seterr(FL_ERR_UNSUPPORTED, "bench --callgrind: built without valgrind/callgrind.h "
                   "(install valgrind and configure again)");
#else
  char dir[] = "/tmp/frictionlab-cg-XXXXXX";
  if (!mkdtemp(dir)) return fl_seterr(FL_ERR_IO, "bench --callgrind: cannot make a temporary folder");
  char outfile[128], steps[32], exe[4096];
  snprintf(outfile, sizeof outfile, "--callgrind-out-file=%s/cg.out", dir);
  snprintf(steps, sizeof steps, "%ld", a->steps);
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return fl_seterr(FL_ERR_IO, "bench --callgrind: cannot find this program's path");
  exe[n] = 0;
  const char *av[20 + 2 * MAXSET + 2 * MAXSET];
  int k = 0;
  av[k++] = "valgrind";
  av[k++] = "-q";
  av[k++] = "--tool=callgrind";
  av[k++] = "--collect-atstart=no";
  av[k++] = outfile;
  av[k++] = exe;
  av[k++] = "bench";
  av[k++] = a->scene;
  av[k++] = "--steps";
  av[k++] = steps;
  char solvers[1024] = "";
  for (int s = 0; s < a->nsolv; s++) {
    strcat(solvers, s ? "," : "");
    strcat(solvers, a->solv[s]);
  }
  av[k++] = "--solver";
  av[k++] = solvers;
  for (int i = 0; i < a->nset; i++) {
    av[k++] = "--set";
    av[k++] = a->set[i];
  }
  for (int i = 0; i < a->nsset; i++) {
    av[k++] = "--scene-set";
    av[k++] = a->sset[i];
  }
  av[k++] = "--callgrind-child";
  av[k] = NULL;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return fl_seterr(FL_ERR_IO, "bench --callgrind: fork failed");
  if (pid == 0) {
    // valgrind's own chatter goes away; the child's errors stay on stderr
    FILE *nul = freopen("/dev/null", "w", stdout);
    (void)nul;
    execvp("valgrind", (char *const *)av);
    fprintf(stderr, "frictionlab bench --callgrind: cannot run valgrind (apt-get install "
                    "valgrind)\n");
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  int rc = FL_OK;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    rc = fl_seterr(FL_ERR_LIBRARY, "bench --callgrind: valgrind exited with status %d",
                   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  // dumps cg.out.1, cg.out.2, ... in solver order (callgrind numbers them from 1)
  for (int s = 0; s < a->nsolv && rc >= 0; s++) {
    char path[256];
    snprintf(path, sizeof path, "%s/cg.out.%d", dir, s + 1);
    double t = dump_total(path);
    if (t < 0) rc = fl_seterr(FL_ERR_FORMAT, "bench --callgrind: no totals in %s", path);
    else instr[s] = t / (double)a->steps;
    if (rc >= 0) dump_stages(path, fl_peer_find(a->solv[s]), t, a->steps, stage + NIS * s);
  }
  // the temporary folder and its files
  DIR *d = opendir(dir);
  if (d) {
    for (struct dirent *e; (e = readdir(d));) {
      if (e->d_name[0] == '.') continue;
      char path[512];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
  return rc;
#endif
}


//---- the command ----

int fl__bench_steps_run(const fl__bench_cli *c) {
  fl_register_all();
  step_args a;
  int rc = fill(c, &a);
  if (rc) return rc;
  if (a.child) return callgrind_child(&a);
  // everything checked before anything is written: the scene, every solver and peer
  for (int s = 0; s < a.nsolv; s++) {
    double mean[NST], nc, it[2];
    step_args one = a;
    one.steps = 0;
    if (run_one(&one, a.solv[s], 0, mean, NULL, &nc, it) < 0) {
      fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
      return fl_errcode() == FL_ERR_UNSUPPORTED ? 1 : 2;
    }
  }
  long nstep = a.steps;
  int ns = a.nsolv, R = a.reps;
  double *m = fl_calloc((size_t)(ns * R * NST), sizeof(double));
  double *tmp = fl_calloc((size_t)R, sizeof(double));
  double pen[MAXSOLV], nc[MAXSOLV], its[MAXSOLV], lss[MAXSOLV], instr[MAXSOLV];
  double istage[NIS * MAXSOLV];
  if (!m || !tmp) {
    fl_free(m);
    fl_free(tmp);
    fprintf(stderr, "frictionlab bench: out of memory\n");
    return 1;
  }
  printf("bench %s: %ld steps, %d interleaved repetitions of %d solvers\n", a.scene, nstep, R, ns);
  fl_progress bar;
  fl_progress_begin(&bar, "bench", (long)R * ns);
  for (int r = 0; r < R; r++)
    for (int s = 0; s < ns; s++) {
      double ncm, itm[2];
      if (run_one(&a, a.solv[s], 0, m + (s * R + r) * NST, r == 0 ? &pen[s] : NULL, &ncm,
                  itm) < 0) {
        fl_progress_end(&bar);
        fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
        fl_free(m);
        fl_free(tmp);
        return 1;
      }
      if (r == 0) {
        nc[s] = ncm;
        its[s] = itm[0];
        lss[s] = itm[1];
      }
      fl_progress_update(&bar, (long)r * ns + s + 1);
    }
  fl_progress_end(&bar);
  for (int s = 0; s < ns; s++) instr[s] = NAN;
  for (int s = 0; s < NIS * ns; s++) istage[s] = NAN;
  if (a.callgrind && callgrind_parent(&a, instr, istage) < 0) {
    fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
    fl_free(m);
    fl_free(tmp);
    return 1;
  }
  // results: one row per solver
  fl_results *res = NULL;
  const char *out = a.out ? a.out : "results/bench/latest";
  if (fl_results_begin(out, "bench", a.force, &res) < 0) {
    fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
    fl_free(m);
    fl_free(tmp);
    return 1;
  }
  FILE *f = fl_results_file(res, "bench.csv");
  if (!f) {
    fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
    fl_results_abort(res);
    fl_free(m);
    fl_free(tmp);
    return 1;
  }
  fl_csv_header(f, fl_bench_steps_cols, FL_BENCH_STEPS_NCOLS);
  printf("%-16s %9s %9s %8s %8s %8s %8s %8s %8s %8s %10s %12s %7s %7s\n", "solver", "min (us)",
         "med (us)", "collide", "assemble", "setup", "solve", "integr.", "other", "iters",
         "pen_max (m)", "instr/step", "x med", "ls/step");
  double base = NAN, base_i = NAN;
  for (int s = 0; s < ns; s++) {
    const double *x = m + s * R * NST;
    double col[NST], mn = INFINITY;
    for (int q = 0; q < NST; q++) {
      for (int r = 0; r < R; r++) tmp[r] = x[r * NST + q];
      col[q] = median_of(tmp, R);
      if (q == ST_STEP)
        for (int r = 0; r < R; r++) mn = fmin(mn, tmp[r]);
    }
    if (s == 0) {
      base = col[ST_STEP];
      base_i = instr[0];
    }
    fl_bench_steps_row row = {.problem = a.scene, .solver = a.solv[s], .steps = nstep, .reps = R,
                              .nc_mean = nc[s], .iters_mean = its[s], .step_min_s = mn,
                              .step_median_s = col[ST_STEP], .pen_max = pen[s],
                              .instr_per_step = instr[s], .ratio_median = col[ST_STEP] / base,
                              .ratio_instr = instr[s] / base_i, .ls_evals_mean = lss[s]};
    for (int q = ST_COLLIDE; q < NST; q++) row.stage_s[q - ST_COLLIDE] = col[q];
    for (int q = 0; q < NIS; q++) {
      row.instr[q]     = istage[NIS * s + q];
      row.has_stage[q] = isfinite(row.instr[q]);
    }
    row.has_instr       = isfinite(instr[s]);
    row.has_ratio_instr = isfinite(instr[s]) && isfinite(base_i);
    row.has_ls          = isfinite(lss[s]);
    fl_csv_row(f, fl_bench_steps_cols, FL_BENCH_STEPS_NCOLS, &row);
    printf("%-16s %9.2f %9.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.1f %10.3g %12.0f %7.3g %7.1f\n",
           a.solv[s], 1e6 * mn, 1e6 * col[ST_STEP], 1e6 * col[ST_COLLIDE], 1e6 * col[ST_ASSEMBLE],
           1e6 * col[ST_SETUP], 1e6 * col[ST_SOLVE], 1e6 * col[ST_INTEGRATE], 1e6 * col[ST_OTHER],
           its[s], pen[s], instr[s], col[ST_STEP] / base, lss[s]);
  }
  printf("(stage columns: medians over repetitions of the mean per step, us; instr/step from "
         "callgrind, %s)\n", a.callgrind ? "collected inside the step calls only" : "not asked");
  if (a.callgrind) {
    printf("%-16s %12s %12s %12s %12s %12s   (instructions per step by stage)\n", "solver",
           is_name[0], is_name[1], is_name[2], is_name[3], is_name[4]);
    for (int s = 0; s < ns; s++) {
      printf("%-16s", a.solv[s]);
      for (int q = 0; q < NIS; q++) printf(" %12.0f", istage[NIS * s + q]);
      printf("\n");
    }
  }
  cJSON *man = fl_results_manifest(res);
  cJSON_AddStringToObject(man, "problem", a.scene);
  cJSON_AddStringToObject(man, "mode", "steps");
  cJSON_AddNumberToObject(man, "steps", (double)nstep);
  cJSON_AddNumberToObject(man, "reps", R);
  cJSON_AddBoolToObject(man, "callgrind", a.callgrind);
  cJSON *ss = cJSON_AddArrayToObject(man, "scene_settings");
  for (int i = 0; i < a.nsset; i++) cJSON_AddItemToArray(ss, cJSON_CreateString(a.sset[i]));
  cJSON *so = cJSON_AddArrayToObject(man, "settings");
  for (int i = 0; i < a.nset; i++) cJSON_AddItemToArray(so, cJSON_CreateString(a.set[i]));
  cJSON *sv = cJSON_GetObjectItemCaseSensitive(man, "solvers");
  for (int s = 0; s < ns; s++) {
    if (fl_peer_find(a.solv[s])) {
      char js[1024];
      if (sv && fl_peer_options_resolve(a.solv[s], a.nset, a.set, js, sizeof js) >= 0)
        cJSON_AddItemToObject(sv, a.solv[s], cJSON_Parse(js));
    } else {
      fl_solver *h = NULL;
      fl_run_spec opt = {.nset = a.nset, .set = a.set}; // the options as resolved, for the record
      if (fl_run_solver(&opt, a.solv[s], &h, NULL) >= 0) fl_results_add_solver(res, h);
      fl_solver_destroy(h);
    }
  }
  fl_free(m);
  fl_free(tmp);
  if (fl_results_commit(res) < 0) {
    fprintf(stderr, "frictionlab bench: %s\n", fl_errmsg());
    return 1;
  }
  printf("bench written to %s/bench.csv\n", out);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
/* profile.c: `frictionlab profile`, Dolan-More performance profiles (the costs read back from
 * a solve folder and the profile computed: harness/campaign/costs.c).
 *
 * For problems p and solvers s with cost c(p,s) (time or iterations to reach the tolerance,
 * INFINITY when s never reached it), the ratio r(p,s) = c(p,s) / min_s c(p,s) and the profile
 *
 *     rho_s(tau) = |{p : r(p,s) <= tau}| / np
 *
 * is the fraction of problems that s solves within a factor tau of the best solver. The
 * denominator counts every problem, also those no solver solved (Dolan and More 2002), so
 * rho_s(inf) is the fraction s solves at all.
 *
 * `frictionlab profile` does not run solvers itself: it runs `frictionlab solve` on the given
 * problems (or reads the results folder of an earlier solve with --from) and takes the costs
 * from iters.csv: the first record whose common merit (the normalized natural-map residual,
 * the same measure for every solver) is <= tol.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "../../core/fl_campaign.h"
#include "../campaign/fl_camp.h"
#include "fl_args.h"
#include "../figures/fl_figure.h"
#include "../output/fl_run_csv.h"

/* the distinct problems or solvers of a folder (fl_camp.h) */
typedef fl_camp_names names;

/* the command line as declared (fl_args.h) */
typedef struct profile_cli {
  fl_arg_list pos;
  fl_arg_multi solver_arg, set_arg, from;
  const char *tol, *out, *norm, *wall_limit, *mem_limit, *shard;
  int force;
} profile_cli;

#define A(m) offsetof(profile_cli, m)
static const fl_arg_desc profile_flags[] = {
  {"--solver", FL_ARG_MULTI, A(solver_arg), 0, 0, "a,b", NULL, "solvers, as for solve"},
  {"--set", FL_ARG_MULTI, A(set_arg), 0, 0, "key=value", NULL,
   "solver options, as for solve (docs/usage.md, \"What --set means\")"},
  {"--norm", FL_ARG_STR, A(norm), 0, 0, "KIND", NULL, "normalization, as for solve"},
  {"--tol", FL_ARG_STR, A(tol), 0, 0, "T", "1e-6",
   "'solved' means the common merit reached T"},
  {"--from", FL_ARG_MULTI, A(from), 0, 0, "SOLVE_RESULTS", NULL,
   "take the costs from an earlier solve's folder instead of solving; given several times, "
   "from the folders of one campaign's shards, merged as `frictionlab collect` merges them "
   "(into DIR/solve/)"},
  {"--shard", FL_ARG_STR, A(shard), 0, 0, "I/N", NULL,
   "solve only shard I of N of the problems, as for solve (profile the shards together with "
   "--from S0 --from S1 ...)"},
  {"--out", FL_ARG_STR, A(out), 0, 0, "DIR", NULL,
   "results folder (default results/profiles/profile-<date>-<time>)"},
  {"--force", FL_ARG_FLAG, A(force), 0, 0, NULL, NULL, "replace an existing --out folder"},
  {"--wall-limit", FL_ARG_STR, A(wall_limit), 0, 0, "SECONDS", NULL,
   "each (problem, solver) pair in its own process, killed after SECONDS, as for solve"},
  {"--mem-limit", FL_ARG_STR, A(mem_limit), 0, 0, "GB", NULL,
   "each pair's process may grow by GB gigabytes of address space, as for solve"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef A

static const fl_cmd_spec profile_spec = {
  "profile", "[PROBLEM|FOLDER]...", -1, offsetof(profile_cli, pos),
  "Dolan-More performance profiles: the fraction of problems each solver solves within a\n"
  "factor tau of the best, by time and by iterations, where 'solved' means the common merit\n"
  "(normalized natural-map residual, the same for every solver) reached --tol.\n"
  "Problems are FCLIB files, folders of them, or built-in examples; they are solved as\n"
  "`frictionlab solve` does into DIR/solve/ (with the --solver and --set given), or taken from\n"
  "an earlier solve's folder with --from. Writes costs.csv, profile_time.csv,\n"
  "profile_iters.csv, pictures (gnuplot and matplotlib) and manifest.json to DIR.\n",
  NULL, profile_flags};


/* writes one profile (cost matrix) as CSV and a panel */
static int write_profile(fl_fig_ctx *ctx, const char *file, const char *what, const names *pr,
                         const names *so, const double *cost) {
  int np = pr->n, ns = so->n;
  // tau grid: every distinct ratio (the step corners) plus a log grid up to the largest
  double rmax = 1;
  for (int p = 0; p < np; p++) {
    double best = INFINITY;
    for (int s = 0; s < ns; s++) best = fmin(best, cost[p * ns + s]);
    for (int s = 0; s < ns; s++) {
      double c = cost[p * ns + s];
      if (isfinite(c) && best > 0 && c / best > rmax) rmax = c / best;
    }
  }
  rmax *= 2;
  int ntau = 200;
  double *tau = fl_malloc((size_t)ntau * sizeof *tau), *rho = fl_malloc((size_t)(ntau * ns + 1) * sizeof *rho);
  if (!tau || !rho) {
    fl_free(tau);
    fl_free(rho);
    return fl_seterr(FL_ERR_NOMEM, "profile: out of memory");
  }
  for (int t = 0; t < ntau; t++) tau[t] = pow(rmax, (double)t / (ntau - 1));
  int rc = fl_perf_profile(np, ns, cost, ntau, tau, rho);
  fl_csv_col *cols = fl_malloc((size_t)(ns + 1) * sizeof *cols);
  FILE       *f    = rc < 0 || !cols ? NULL : fl_results_file(ctx->res, file);
  if (!f) {
    fl_free(cols);
    fl_free(tau);
    fl_free(rho);
    return rc < 0 ? rc : cols ? fl_errcode() : fl_seterr(FL_ERR_NOMEM, "profile: out of memory");
  }
  fl_profile_cols(cols, ns, so->s, ntau);
  fl_csv_header(f, cols, ns + 1);
  for (int t = 0; t < ntau; t++) {
    fl_profile_row row = {tau[t], rho + t};
    fl_csv_row(f, cols, ns + 1, &row);
  }
  fl_free(cols);
  char title[160];
  snprintf(title, sizeof title, "performance profile by %s (%d problems)", what, np);
  char xl[96];
  snprintf(xl, sizeof xl, "tau (ratio to the best %s)", what);
  fl_fig_panel *pn = fl_fig_panel_add(ctx->fig, title, xl, "fraction of problems solved", 1, 0);
  for (int s = 0; s < ns; s++) {
    fl_fig_series_add(pn, file, "tau", so->s[s], so->s[s], 0);
    fl_fig_say(ctx, "by %s: %-16s best on %.0f%%, solves %.0f%% at all", what, so->s[s],
               100 * rho[s * ntau], 100 * rho[s * ntau + ntau - 1]);
  }
  fl_free(tau);
  fl_free(rho);
  return FL_OK;
}


int fl_cmd_profile(int argc, char **argv) {
  const char *from = NULL, *out = NULL;
  double tol = 1e-6;
  int force = 0, status = 1;
  char outbuf[256], solvedir[4096];
  names probs = {0}, solvers = {0};
  double *ctime = NULL, *citer = NULL;
  fl_results *res = NULL;

  //---- arguments: ours, and solve's (--solver, --set, --norm) ----
  profile_cli c;
  memset(&c, 0, sizeof c);
  int prc = fl_args_parse(&profile_spec, argc, argv, &c);
  if (prc) {
    status = prc == 1 ? 0 : prc < 0 ? 1 : 2;
    goto done;
  }
  from = c.from.n > 0 ? c.from.v[0] : NULL;
  out = c.out;
  force = c.force;
  {
    char *end;
    tol = strtod(c.tol, &end);
    if (*end || !(tol > 0)) {
      fprintf(stderr, "frictionlab profile: --tol %s: expected a positive number\n", c.tol);
      status = 2;
      goto done;
    }
  }
  int nsolve = c.pos.n;
  if (!out) {
    time_t now = time(NULL);
    struct tm tmv;
    localtime_r(&now, &tmv);
    strftime(outbuf, sizeof outbuf, "results/profiles/profile-%Y%m%d-%H%M%S", &tmv);
    out = outbuf;
  }
  if (from && nsolve > 0) {
    fprintf(stderr, "frictionlab profile: give problems or --from, not both\n");
    status = 2;
    goto done;
  }

  //---- the results folder, then solve into it (or read --from) ----
  // campaigns (docs/campaigns.md): rank 0 owns the folder and the profile; every rank solves
  int rank = fl_campaign_rank();
  if (rank > 0) {
    int ready = fl_campaign_bcast_int(0);
    if (!ready || from) { // no folder, or nothing to solve
      status = !ready;
      goto done;
    }
  } else if (fl_results_begin(out, "profile", force, &res) < 0) {
    fprintf(stderr, "frictionlab profile: %s\n", fl_errmsg());
    fl_campaign_bcast_int(0);
    goto done;
  } else {
    fl_campaign_bcast_int(1);
  }
  if (from && c.from.n > 1) {
    // several folders: merged into solve/ as collect merges shards
    snprintf(solvedir, sizeof solvedir, "%s/solve", fl_results_staging(res));
    char *cargv[FL_ARG_MAX_MULTI + 3];
    int   cn = 0;
    for (int k = 0; k < c.from.n; k++) cargv[cn++] = (char *)c.from.v[k];
    cargv[cn++] = "--out";
    cargv[cn++] = solvedir;
    cargv[cn]   = NULL;
    if (fl_cmd_collect(cn, cargv) != 0) {
      fprintf(stderr, "frictionlab profile: the --from folders could not be merged\n");
      goto done;
    }
  } else if (from) {
    snprintf(solvedir, sizeof solvedir, "%s", from);
  } else {
    // rank > 0 never writes: the folder is rank 0's
    snprintf(solvedir, sizeof solvedir, "%s/solve", rank > 0 ? out : fl_results_staging(res));
    // the solve folder is inside this one, which moves to `out` when complete: name that.
    // Files that hold no readable problem (e.g. rolling friction) are reported and skipped.
    char shown[4200];
    snprintf(shown, sizeof shown, "%s/solve", out);
    fl_solve_job job = {c.pos.n,     c.pos.v, c.solver_arg.n, c.solver_arg.v, c.set_arg.n,
                        c.set_arg.v, c.norm,  solvedir,       shown,          0,
                        0,           1,       c.wall_limit,   c.mem_limit,
                        c.shard,     0,       0,              0};
    int rc = fl_solve_run(&job);
    if (rank > 0) {
      status = rc;
      goto done;
    }
    if (rc != 0) {
      fprintf(stderr, "frictionlab profile: the solve step failed (exit %d)\n", rc);
      status = rc;
      goto done;
    }
  }
  if (fl_camp_read_costs(solvedir, tol, &probs, &solvers, &ctime, &citer) < 0) {
    fprintf(stderr, "frictionlab profile: %s\n", fl_errmsg());
    goto done;
  }

  //---- costs table, profiles, pictures ----
  {
    fl_fig fig;
    memset(&fig, 0, sizeof fig);
    snprintf(fig.title, sizeof fig.title, "Dolan-More performance profiles, merit <= %g", tol);
    fl_fig_ctx ctx = {res, 0, &fig, fl_results_file(res, "summary.txt"), 1, FL_FIG_FULL};
    FILE *fc = fl_results_file(res, "costs.csv");
    if (fc) fl_csv_header(fc, fl_cost_cols, FL_COST_NCOLS);
    if (!fc || !ctx.summary) {
      fprintf(stderr, "frictionlab profile: %s\n", fl_errmsg());
      goto done;
    }
    for (int p = 0; p < probs.n; p++) {
      for (int s = 0; s < solvers.n; s++) {
        double t = ctime[p * solvers.n + s], it = citer[p * solvers.n + s];
        fl_cost_row row = {probs.s[p], solvers.s[s], isfinite(t), t, it};
        fl_csv_row(fc, fl_cost_cols, FL_COST_NCOLS, &row);
      }
    }
    fl_fig_say(&ctx, "%d problems, %d solvers, tolerance %g on the common merit", probs.n,
               solvers.n, tol);
    // by iterations the cost is the iterates evaluated, iterations + 1: a problem solved at
    // iteration 0 (the initial guess) then still ranks the solvers that needed more
    for (int k = 0; k < probs.n * solvers.n; k++) citer[k] += 1;
    fl_fig_say(&ctx, "the iteration profile counts iterations + 1 (iterates evaluated, the "
               "initial guess included), so that problems solved at iteration 0 count");
    if (write_profile(&ctx, "profile_time.csv", "time", &probs, &solvers, ctime) < 0 ||
        write_profile(&ctx, "profile_iters.csv", "iterations", &probs, &solvers, citer) < 0 ||
        fl_fig_render(&fig, fl_results_staging(res)) < 0) {
      fprintf(stderr, "frictionlab profile: %s\n", fl_errmsg());
      goto done;
    }
    cJSON *man = fl_results_manifest(res);
    cJSON_AddNumberToObject(man, "tol", tol);
    cJSON_AddStringToObject(man, "solve_results", from && c.from.n == 1 ? from : "solve/");
    if (c.from.n > 1) {
      cJSON *fr = cJSON_AddArrayToObject(man, "from");
      for (int k = 0; k < c.from.n; k++) cJSON_AddItemToArray(fr, cJSON_CreateString(c.from.v[k]));
    }
  }
  if (fl_results_commit(res) < 0) {
    res = NULL;
    fprintf(stderr, "frictionlab profile: %s\n", fl_errmsg());
    goto done;
  }
  res = NULL;
  printf("profile written to %s (costs.csv, profile_time.csv, profile_iters.csv, figure.png)\n",
         out);
  status = 0;
done:
  fl_results_abort(res);
  fl_args_free(&profile_spec, &c);
  fl_camp_names_free(&probs);
  fl_camp_names_free(&solvers);
  fl_free(ctime);
  fl_free(citer);
  return status;
}

// SPDX-License-Identifier: Apache-2.0
/* profile.c: Dolan-More performance profiles and `frictionlab profile`.
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

int fl_perf_profile(int np, int ns, const double *cost, int ntau, const double *tau,
                    double *rho) {
  if (np < 0 || ns < 0 || ntau < 0) return fl_seterr(FL_ERR_INVAL, "profile: negative size");
  for (int s = 0; s < ns; s++)
    for (int t = 0; t < ntau; t++) rho[s * ntau + t] = 0;
  if (np == 0) return FL_OK;
  for (int p = 0; p < np; p++) {
    // best cost on this problem
    double best = INFINITY;
    for (int s = 0; s < ns; s++) {
      double c = cost[p * ns + s];
      if (isnan(c) || c < 0) return fl_seterr(FL_ERR_INVAL, "profile: cost[%d][%d] = %g", p, s, c);
      if (c < best) best = c;
    }
    if (isinf(best)) continue;
    for (int s = 0; s < ns; s++) {
      double c = cost[p * ns + s];
      if (isinf(c)) continue;
      // a zero best cost (e.g. solved at iteration 0) makes every solver with cost 0 ratio 1
      double r = best > 0 ? c / best : (c == 0 ? 1 : INFINITY);
      for (int t = 0; t < ntau; t++)
        if (r <= tau[t] * (1 + 1e-12)) rho[s * ntau + t] += 1.0 / np;
    }
  }
  return FL_OK;
}


//---- a small CSV reader (fields may be quoted, as fl_csv_str writes them) ----

enum { MAXF = 64 };

/* splits `line` in place into at most MAXF fields; returns their number */
static int csv_split(char *line, char **f) {
  int n = 0;
  char *p = line;
  while (n < MAXF) {
    if (*p == '"') {
      char *w = ++p;
      f[n++] = w;
      while (*p && !(*p == '"' && p[1] != '"')) {
        if (*p == '"') p++;
        *w++ = *p++;
      }
      if (*p == '"') p++;
      *w = '\0';
      if (*p == ',') p++;
      else break;
    } else {
      f[n++] = p;
      char *c = strpbrk(p, ",\r\n");
      if (!c || *c != ',') {
        if (c) *c = '\0';
        break;
      }
      *c = '\0';
      p = c + 1;
    }
  }
  return n;
}


static int col_of(char **hdr, int n, const char *name) {
  for (int k = 0; k < n; k++)
    if (strcmp(hdr[k], name) == 0) return k;
  return -1;
}


/* the distinct strings seen so far (problems or solvers), in order of appearance */
typedef struct {
  char **s;
  int n, cap;
} names;

static int names_index(names *nm, const char *s) {
  for (int k = 0; k < nm->n; k++)
    if (strcmp(nm->s[k], s) == 0) return k;
  if (nm->n == nm->cap) {
    int cap = nm->cap ? 2 * nm->cap : 16;
    char **t = fl_realloc(nm->s, (size_t)cap * sizeof *t);
    if (!t) return -1;
    nm->s = t;
    nm->cap = cap;
  }
  size_t len = strlen(s) + 1;
  nm->s[nm->n] = fl_malloc(len);
  if (!nm->s[nm->n]) return -1;
  memcpy(nm->s[nm->n], s, len);
  return nm->n++;
}


/* the index of s, or -1 when it is not among the names */
static int names_find(const names *nm, const char *s) {
  for (int k = 0; k < nm->n; k++)
    if (strcmp(nm->s[k], s) == 0) return k;
  return -1;
}


/* a CSV number (nan and inf included) into *x; 0 when the field is not one */
static int csv_number(const char *f, double *x) {
  char *end;
  *x = strtod(f, &end);
  return end != f && *end == '\0';
}


static void names_free(names *nm) {
  for (int k = 0; k < nm->n; k++) fl_free(nm->s[k]);
  fl_free(nm->s);
}


/* reads iters.csv of a solve folder: cost by time (s) and by iterations to reach merit <= tol.
 * Rows of steps.csv decide which pairs exist; pairs never below tol cost INFINITY. */
static int read_costs(const char *dir, double tol, names *probs, names *solvers,
                      double **ctime, double **citer) {
  char path[4096], line[8192];
  char *f[MAXF], *hdr[MAXF];
  char hbuf[8192];
  *ctime = *citer = NULL;
  //---- pass 1: steps.csv names the problems and solvers ----
  if (snprintf(path, sizeof path, "%s/steps.csv", dir) >= (int)sizeof path)
    return fl_seterr(FL_ERR_INVAL, "%s: folder name too long", dir);
  FILE *in = NULL;
  FL_TRY(fl_open_input(path, "results table (.csv)", 0, &in));
  if (!fgets(hbuf, sizeof hbuf, in)) {
    fclose(in);
    return fl_seterr(FL_ERR_FORMAT, "%s: empty file, expected a header row", path);
  }
  int nh = csv_split(hbuf, hdr), cp = col_of(hdr, nh, "problem"), cs = col_of(hdr, nh, "solver");
  if (cp < 0 || cs < 0) {
    fclose(in);
    return fl_seterr(FL_ERR_FORMAT, "%s: header lacks the columns problem and solver", path);
  }
  while (fgets(line, sizeof line, in)) {
    int n = csv_split(line, f);
    if (n <= cp || n <= cs) continue;
    if (names_index(probs, f[cp]) < 0 || names_index(solvers, f[cs]) < 0) {
      fclose(in);
      return fl_seterr(FL_ERR_NOMEM, "profile: out of memory");
    }
  }
  fclose(in);
  size_t np = (size_t)probs->n, ns = (size_t)solvers->n;
  FL_TRY(fl_mem_check(path, "the cost table of its problems x solvers",
                      2.0 * (double)np * (double)ns * sizeof(double)));
  *ctime = fl_malloc((np * ns + 1) * sizeof(double));
  *citer = fl_malloc((np * ns + 1) * sizeof(double));
  if (!*ctime || !*citer) return fl_seterr(FL_ERR_NOMEM, "profile: out of memory");
  for (size_t k = 0; k < np * ns; k++) (*ctime)[k] = (*citer)[k] = INFINITY;
  //---- pass 2: first record under the tolerance ----
  if (snprintf(path, sizeof path, "%s/iters.csv", dir) >= (int)sizeof path)
    return fl_seterr(FL_ERR_INVAL, "%s: folder name too long", dir);
  FL_TRY(fl_open_input(path, "results table (.csv)", 0, &in));
  if (!fgets(hbuf, sizeof hbuf, in)) {
    fclose(in);
    return fl_seterr(FL_ERR_FORMAT, "%s: empty file, expected a header row", path);
  }
  nh = csv_split(hbuf, hdr);
  cp = col_of(hdr, nh, "problem");
  cs = col_of(hdr, nh, "solver");
  int ci = col_of(hdr, nh, "iter"), ct = col_of(hdr, nh, "time"), cm = col_of(hdr, nh, "merit");
  if (cp < 0 || cs < 0 || ci < 0 || ct < 0 || cm < 0) {
    fclose(in);
    return fl_seterr(FL_ERR_FORMAT,
                     "%s: header lacks one of the columns problem, solver, iter, time, merit",
                     path);
  }
  long row = 1;
  int need = cp;
  if (cs > need) need = cs;
  if (ci > need) need = ci;
  if (ct > need) need = ct;
  if (cm > need) need = cm;
  while (fgets(line, sizeof line, in)) {
    row++;
    int n = csv_split(line, f);
    if (n == 1 && f[0][0] == '\0') continue; // a blank line
    if (n <= need) {
      fclose(in);
      return fl_seterr(FL_ERR_FORMAT, "%s: row %ld: %d fields, expected at least %d", path, row,
                       n, need + 1);
    }
    // the names come from steps.csv: a pair it lacks is an inconsistent folder
    int p = names_find(probs, f[cp]), s = names_find(solvers, f[cs]);
    if (p < 0 || s < 0) {
      int rc = fl_seterr(FL_ERR_FORMAT, "%s: row %ld: %s '%.200s' does not appear in steps.csv",
                         path, row, p < 0 ? "problem" : "solver", p < 0 ? f[cp] : f[cs]);
      fclose(in);
      return rc;
    }
    double merit, t, it;
    if (!csv_number(f[cm], &merit) || !csv_number(f[ct], &t) || !csv_number(f[ci], &it)) {
      fclose(in);
      return fl_seterr(FL_ERR_FORMAT, "%s: row %ld: merit, time and iter must be numbers", path,
                       row);
    }
    size_t k = (size_t)p * ns + (size_t)s;
    if (merit <= tol && isinf((*ctime)[k])) {
      (*ctime)[k] = t;
      (*citer)[k] = it;
    }
  }
  fclose(in);
  return FL_OK;
}


int fl_profile_read_costs(const char *dir, double tol, int *nprob, int *nsolver) {
  names probs = {0}, solvers = {0};
  double *ctime = NULL, *citer = NULL;
  int rc = read_costs(dir, tol, &probs, &solvers, &ctime, &citer);
  *nprob = probs.n;
  *nsolver = solvers.n;
  names_free(&probs);
  names_free(&solvers);
  fl_free(ctime);
  fl_free(citer);
  return rc;
}


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
  if (read_costs(solvedir, tol, &probs, &solvers, &ctime, &citer) < 0) {
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
  names_free(&probs);
  names_free(&solvers);
  fl_free(ctime);
  fl_free(citer);
  return status;
}

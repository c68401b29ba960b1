// SPDX-License-Identifier: Apache-2.0
/* cmd_solve.c: `frictionlab solve [FILE|EXAMPLE]... --solver a,b --set key=value --out DIR`.
 *
 * Outline: parse the arguments; check every solver name and every option on a throw-away
 * handle of each solver; load every problem; only then create the results folder (so bad
 * input never leaves a folder behind); solve each problem with each solver on a fresh handle;
 * write steps.csv, iters.csv and manifest.json; commit the folder; print a table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../../core/fl_campaign.h"
#include "../campaign/fl_camp.h"
#include "fl_args.h"
#include "../fl_harness.h"
#include "../output/fl_run_csv.h"
#include "fl_settings.h"
#include "../../solvers/fl_plugin.h"

#define EXIT_USAGE 2

/* One row of the summary: what happened to (problem, solver) (fl_camp.h). */
typedef fl_camp_outcome outcome;

/* One --set as given (points into argv). */
typedef struct setting {
  const char *arg;
} setting;

typedef struct solve_args {
  const char **inputs;
  int ninputs;
  char *solver_buf; /* owned copies of the --solver values, comma-split in place */
  const char **solvers;
  int nsolvers;
  setting *sets;
  int nsets;
  fl_settings set; /* the --set list sorted (fl_settings.h) */
  const char *out;
  int force;
  int examples;   /* --examples: every built-in example besides the inputs */
  int keep_going; /* --keep-going: skip unreadable inputs instead of stopping */
  int norm;
  const char *norm_name;
  double wall_limit; /* s; > 0: every pair in its own process, killed past this (guarded) */
  double mem_limit;  /* GB; > 0: that process's address-space limit */
  int guard_plugins; /* a solver comes from a plug-in: every pair in its own process */
  int save_solution; /* --save-solution */
  char *save_dir;    /* where the answers go: <staging folder>/solutions (set once it exists) */
  fl_problem **probs; /* the loaded problems and where each came from, for the answers' files */
  const char **sources;
  int np;
  int resume, retry_failed, shard_i, shard_n; /* docs/campaigns.md */
} solve_args;


/* a converged answer whose common merit is above this is the solution of the solver's own
 * (regularized) model, not of the rigid law (profile's default tolerance; docs/merit.md) */
#define OWN_MODEL_MERIT 1e-6


/* the command line as declared (fl_args.h) */
typedef struct solve_cli {
  fl_arg_list pos;
  fl_arg_multi solver_arg, set_arg;
  const char *out, *norm, *wall_limit, *mem_limit, *shard;
  int force, examples, keep_going, save_solution, resume, retry_failed;
} solve_cli;

#define A(m) offsetof(solve_cli, m)
static const fl_arg_desc solve_flags[] = {
  {"--solver", FL_ARG_MULTI, A(solver_arg), 0, 0, "a,b", NULL,
   "solvers by registered name (see `frictionlab list solvers`)"},
  {"--set", FL_ARG_MULTI, A(set_arg), 0, 0, "key=value", NULL,
   "an option for every solver (common options: max_iter, abs_tol, rel_tol, time_limit, "
   "warm_start, seed, error_every, norm, ...); prefix the key with a solver's name "
   "(pgs.omega=1.2) to set it for that solver only; later settings win (docs/usage.md, "
   "\"What --set means\")"},
  {"--out", FL_ARG_STR, A(out), 0, 0, "DIR", NULL,
   "results folder (default results/runs/solve-<date>-<time>); must not exist or be empty, "
   "unless --force"},
  {"--norm", FL_ARG_STR, A(norm), 0, 0, "KIND", "fclib",
   "normalization of the natural-map residual in steps.csv and of the solvers' merit: fclib, "
   "siconos or none"},
  {"--force", FL_ARG_FLAG, A(force), 0, 0, NULL, NULL, "replace an existing --out folder"},
  {"--examples", FL_ARG_FLAG, A(examples), 0, 0, NULL, NULL,
   "also solve every built-in example (the default without problems)"},
  {"--keep-going", FL_ARG_FLAG, A(keep_going), 0, 0, NULL, NULL,
   "report unreadable problem files on stderr and in the manifest (\"skipped\") and solve the "
   "others, instead of stopping (files of a kind FrictionLab does not model, e.g. rolling "
   "friction, are always skipped this way)"},
  {"--save-solution", FL_ARG_FLAG, A(save_solution), 0, 0, NULL, NULL,
   "write each pair's answer (reactions r, l and velocities v, u) in FCLIB's solution layout: "
   "solutions/<problem>.<solver>.hdf5 in the results folder, a copy of the problem's file with "
   "its /solution (`frictionlab score` scores it again; Siconos and h5py read it)"},
  {"--wall-limit", FL_ARG_STR, A(wall_limit), 0, 0, "SECONDS", NULL,
   "run each (problem, solver) pair in its own process and kill it after SECONDS of wall "
   "time, set-up included (recorded as status error, reason WALL_LIMIT); a pair that crashes "
   "is recorded as CRASHED and the others go on. Solvers check time_limit only between "
   "iterations; this bounds what they do not (a factorization that takes minutes)"},
  {"--mem-limit", FL_ARG_STR, A(mem_limit), 0, 0, "GB", NULL,
   "run each pair in its own process whose address space may grow by at most GB gigabytes "
   "beyond the harness's (which holds the loaded problems); a solver that runs out is "
   "recorded as an error (NOMEM where it says so) and the others go on"},
  {"--resume", FL_ARG_FLAG, A(resume), 0, 0, NULL, NULL,
   "take over the pairs that --out (or a killed run's staging folder of it) already holds "
   "with the same settings (solver, options, problem file content) and solve the rest; "
   "without such a folder, start one (docs/campaigns.md)"},
  {"--retry-failed", FL_ARG_FLAG, A(retry_failed), 0, 0, NULL, NULL,
   "with --resume: solve again the pairs that ended with an error"},
  {"--shard", FL_ARG_STR, A(shard), 0, 0, "I/N", NULL,
   "solve only shard I of N (0 <= I < N): the problems are dealt largest first (by file size) "
   "onto the least loaded shard, and only this shard's are loaded; merge the N folders with "
   "`frictionlab collect`"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef A

static const fl_cmd_spec solve_spec = {
  "solve", "[FILE|FOLDER|EXAMPLE]...", -1, offsetof(solve_cli, pos),
  "Solves each problem (an FCLIB .hdf5 file, a folder of them, or a built-in example by name;\n"
  "none given = every built-in example) with each solver (none given = every registered CPU\n"
  "solver; GPU and peer (Siconos) solvers when named) and writes a results folder:\n"
  "manifest.json, steps.csv (one row per problem and solver), iters.csv (one row per\n"
  "iteration).\n",
  "The common metrics are evaluated at every iteration (error_every=1) unless --set\n"
  "error_every=K says otherwise; their time is kept out of the solve time.\n",
  solve_flags};


static void print_solver_names(FILE *f) {
  const char *const *names = fl_solver_list();
  for (int i = 0; names && names[i]; i++) fprintf(f, "%s%s", i ? ", " : "", names[i]);
}


static void args_free(solve_args *a) {
  fl_free(a->save_dir);
  fl_free(a->sets);
  fl_free(a->solvers);
  fl_free(a->solver_buf);
  fl_free(a->inputs);
}


// appends the comma-separated names of one --solver value
static int add_solvers(solve_args *a, const char *value) {
  size_t old = a->solver_buf ? strlen(a->solver_buf) : 0;
  // keep all values in one buffer joined by commas, then split it at the end
  char *buf = fl_realloc(a->solver_buf, old + strlen(value) + 2);
  if (!buf) return -1;
  if (old) buf[old++] = ',';
  strcpy(buf + old, value);
  a->solver_buf = buf;
  return 0;
}


static int split_solvers(solve_args *a) {
  if (!a->solver_buf) return 0;
  int n = 1;
  for (const char *c = a->solver_buf; *c; c++) n += *c == ',';
  a->solvers = fl_calloc((size_t)n, sizeof *a->solvers);
  if (!a->solvers) return -1;
  for (char *tok = a->solver_buf, *next; tok; tok = next) {
    next = strchr(tok, ',');
    if (next) *next++ = '\0';
    if (*tok == '\0') {
      fprintf(stderr, "frictionlab solve: --solver: empty solver name in the list (expected "
                      "comma-separated names: ");
      print_solver_names(stderr);
      fprintf(stderr, ")\n");
      return EXIT_USAGE;
    }
    if (!fl_solver_find(tok)) {
      fprintf(stderr, "frictionlab solve: --solver: unknown solver '%s'; registered solvers: ",
              tok);
      print_solver_names(stderr);
      fprintf(stderr, "\n");
      return EXIT_USAGE;
    }
    for (int i = 0; i < a->nsolvers; i++) {
      if (strcmp(a->solvers[i], tok) == 0) {
        fprintf(stderr, "frictionlab solve: --solver: '%s' is given twice\n", tok);
        return EXIT_USAGE;
      }
    }
    a->solvers[a->nsolvers++] = tok;
  }
  return 0;
}


// records one --set as given; it is sorted once the solvers are known (fl_settings.h)
static int add_setting(solve_args *a, const char *arg) {
  setting *s = fl_realloc(a->sets, (size_t)(a->nsets + 1) * sizeof *s);
  if (!s) return -1;
  a->sets = s;
  setting *t = &a->sets[a->nsets];
  memset(t, 0, sizeof *t);
  t->arg = arg;
  a->nsets++;
  return 0;
}


static int parse_norm(solve_args *a, const char *v) {
  static const struct {
    const char *name;
    int kind;
  } norms[] = {{"fclib", FL_NORM_FCLIB}, {"siconos", FL_NORM_SICONOS}, {"none", FL_NORM_NONE}};
  for (size_t i = 0; i < sizeof norms / sizeof norms[0]; i++) {
    if (strcmp(v, norms[i].name) == 0) {
      a->norm      = norms[i].kind;
      a->norm_name = norms[i].name;
      return 0;
    }
  }
  fprintf(stderr, "frictionlab solve: --norm '%s': unknown normalization; expected one of "
                  "fclib, siconos, none\n", v);
  return EXIT_USAGE;
}


// a positive finite number, or NULL (no limit: *x = 0); 0 ok, EXIT_USAGE with a message
static int parse_limit(const char *flag, const char *v, double max, double *x) {
  *x = 0;
  if (!v) return 0;
  char  *end;
  double d = strtod(v, &end);
  // bounded: the value is cast to an integer (rlim_t, seconds) later
  if (end == v || *end || !isfinite(d) || !(d > 0) || d > max) {
    fprintf(stderr, "frictionlab solve: %s %s: expected a positive number up to %g\n", flag, v,
            max);
    return EXIT_USAGE;
  }
  *x = d;
  return 0;
}


// 0 ok, 1 --help printed, EXIT_USAGE on a usage error (message printed), -1 out of memory
static int fill_args(solve_args *a, const fl_solve_job *j) {
  a->norm      = FL_NORM_FCLIB;
  a->norm_name = "fclib";
  a->inputs = fl_calloc((size_t)j->ninputs + 1, sizeof *a->inputs);
  if (!a->inputs) return -1;
  for (int i = 0; i < j->ninputs; i++) a->inputs[a->ninputs++] = j->inputs[i];
  a->out = j->out;
  a->force = j->force;
  a->examples = j->examples;
  a->keep_going = j->keep_going;
  a->save_solution = j->save_solution;
  for (int i = 0; i < j->nsolver_arg; i++)
    if (add_solvers(a, j->solver_arg[i]) != 0) return -1;
  for (int i = 0; i < j->nset; i++)
    if (add_setting(a, j->set[i]) != 0) return -1;
  if (parse_norm(a, j->norm ? j->norm : "fclib") != 0) return EXIT_USAGE;
  a->resume       = j->resume;
  a->retry_failed = j->retry_failed;
  a->shard_n      = 1;
  if (j->shard && fl_pairs_parse_shard(j->shard, &a->shard_i, &a->shard_n) < 0) {
    fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
    return EXIT_USAGE;
  }
  if (a->retry_failed && !a->resume) {
    fprintf(stderr, "frictionlab solve: --retry-failed goes with --resume\n");
    return EXIT_USAGE;
  }
  if (parse_limit("--wall-limit", j->wall_limit, 1e9, &a->wall_limit) != 0 ||
      parse_limit("--mem-limit", j->mem_limit, 1e6, &a->mem_limit) != 0)
    return EXIT_USAGE;
  if (a->save_solution && fl_campaign_size() > 1) {
    // the answers are written by the process that solves the pair, into rank 0's folder
    fprintf(stderr, "frictionlab solve: --save-solution is not supported in a campaign over "
                    "MPI ranks\n");
    return EXIT_USAGE;
  }
  if ((a->wall_limit > 0 || a->mem_limit > 0) && fl_campaign_size() > 1) {
    // fork under MPI is not portable; a campaign bounds its ranks by the launcher instead
    fprintf(stderr, "frictionlab solve: --wall-limit and --mem-limit run pairs in child "
                    "processes, which a campaign over MPI ranks does not support\n");
    return EXIT_USAGE;
  }

  int rc = split_solvers(a);
  if (rc != 0) return rc;
  if (a->nsolvers == 0) {
    // default: every registered CPU solver (the same table on every machine); GPU and peer
    // (Siconos) solvers run when named
    const char *const *names = fl_solver_list();
    int n = 0;
    while (names && names[n]) n++;
    if (n == 0) {
      fprintf(stderr, "frictionlab solve: no solvers are registered\n");
      return 1;
    }
    a->solvers = fl_calloc((size_t)n, sizeof *a->solvers);
    if (!a->solvers) return -1;
    for (int i = 0; i < n; i++)
      if (!(fl_solver_ops_caps(fl_solver_find(names[i])) & (FL_CAP_GPU | FL_CAP_PEER)))
        a->solvers[a->nsolvers++] = names[i];
  }

  // the settings, sorted once by the rule of fl_settings.h (no scene here)
  fl_settings_ctx ctx = {"solve", NULL, a->nsolvers, a->solvers, 0};
  fl_settings_init(&a->set, &ctx);
  for (int k = 0; k < a->nsets; k++) {
    if (fl_settings_add(&a->set, a->sets[k].arg, 0) < 0) {
      fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
      return EXIT_USAGE;
    }
  }
  return 0;
}


// creates solver `name` with the harness defaults and every applicable --set; prints the
// problem and returns EXIT_USAGE on a bad option, 1 on another error
static int make_solver(const solve_args *a, const char *name, fl_solver **out) {
  *out = NULL;
  fl_solver *s = NULL;
  if (fl_solver_create(name, &s) < 0) {
    fprintf(stderr, "frictionlab solve: solver '%s': %s\n", name, fl_errmsg());
    return fl_errcode() == FL_ERR_UNKNOWN_SOLVER ? EXIT_USAGE : 1;
  }
  // the harness's defaults: comparable merit at every iteration, one normalization for all
  if (fl_solver_set_option(s, "error_every", "1") < 0 ||
      fl_solver_set_option(s, "norm", a->norm_name) < 0) {
    fprintf(stderr, "frictionlab solve: solver '%s': %s\n", name, fl_errmsg());
    fl_solver_destroy(s);
    return 1;
  }
  int bad = -1;
  if (fl_settings_apply(&a->set, s, &bad) < 0) {
    const fl_setting *t = &a->set.s[bad];
    fprintf(stderr, "frictionlab solve: --set '%s': %s\n", t->text, fl_errmsg());
    if (t->scope == FL_SET_EVERY && fl_errcode() == FL_ERR_UNKNOWN_OPTION) {
      fprintf(stderr, "  (an option without a solver prefix goes to every selected solver; "
                      "write <solver>.%s=%s to set it for one solver)\n", t->key, t->value);
    }
    fl_solver_destroy(s);
    return EXIT_USAGE;
  }
  *out = s;
  return 0;
}


// loads one argument: an existing file is an FCLIB file, a bare name a built-in example
static int load_input(const char *arg, fl_problem **out) {
  struct stat st;
  *out = NULL;
  if (stat(arg, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return fl_seterr(FL_ERR_IO, "%s: is a folder (expected an FCLIB .hdf5 file)", arg);
    }
    return fl_problem_load_fclib(arg, out);
  }
  int looks_like_path = strchr(arg, '/') != NULL || strstr(arg, ".hdf5") || strstr(arg, ".h5");
  if (looks_like_path) {
    return fl_seterr(FL_ERR_IO, "%s: cannot open: %s (expected an FCLIB .hdf5 file)", arg,
                     strerror(errno));
  }
  int rc = fl_problem_create_example(arg, out);
  if (rc == FL_ERR_UNKNOWN_PROBLEM) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", fl_errmsg());
    return fl_seterr(rc, "'%s' is neither a file nor a built-in example (%s)", arg, msg);
  }
  return rc;
}


//---- one (problem, solver) pair ----

static void write_step(FILE *f, const fl_problem *p, const char *label, const char *solver,
                       const outcome *o, const fl_result *res, const fl_metrics *m) {
  fl_solve_step_row r = {
    .problem = label, .solver = solver, .kind = p->kind == FL_PROBLEM_LOCAL ? "local" : "global",
    .nc = (long)p->nc, .nv = (long)p->nv, .nh = (long)p->nh, .status = o->status,
    .reason = o->reason, .iterations = res ? res->iters : NAN, .reason_code = o->code,
    .solve_s = res ? res->solve_s : NAN, .setup_s = res ? res->setup_s : NAN,
    .monitor_s = res ? res->monitor_s : NAN, .error = res ? res->error : NAN,
    .merit = o->merit, .history_lost = res ? res->history_lost : 0L};
  if (m) r.met = *m;
  else fl_csv_metrics_nan(&r.met);
  fl_csv_col c[FL_SOLVE_STEPS_NCOLS];
  fl_solve_steps_cols(c);
  fl_csv_row(f, c, FL_SOLVE_STEPS_NCOLS, &r);
}


/* With warm_start set, a problem that carries a guess (an FCLIB file's /guesses/1, e.g. the
 * previous step's impulses that `frictionlab export` writes) starts from it: gamma = the guess,
 * v = v* + A^-1 J' gamma; without one the start stays zero. */
static int start_from_guess(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  char ws[16];
  if (!p->gamma_guess || fl_solver_get_option(s, "warm_start", ws, sizeof ws) < 0 ||
      !(strcmp(ws, "true") == 0 || strcmp(ws, "1") == 0))
    return FL_OK;
  fl_int nr = fl_problem_nrows(p);
  memcpy(gamma, p->gamma_guess, (size_t)nr * sizeof *gamma);
  if (p->kind != FL_PROBLEM_GLOBAL || p->nv == 0) return FL_OK;
  fl_dynamics *dyn = NULL;
  double *t = fl_calloc((size_t)p->nv, sizeof *t);
  int rc = t ? fl_dynamics_create(p, &dyn) : fl_seterr(FL_ERR_NOMEM, "out of memory");
  if (rc >= 0) {
    fl_csr_gemtv(p->J, 1.0, gamma, 0.0, t);
    fl_dynamics_solve_A(dyn, t, v);
    for (fl_int k = 0; k < p->nv; k++) v[k] += p->vstar[k];
  }
  fl_dynamics_free(dyn);
  fl_free(t);
  return rc;
}


/* Records a pair that ended without an answer (unsupported, an error, killed at the wall
 * limit, crashed): *o as status/reason/code say, one steps.csv row, no iteration records, a
 * manifest note and a line (stderr when broke, stdout otherwise). Returns broke. */
static int record_no_answer(const char *label, const char *sname, const fl_problem *p,
                            FILE *steps, cJSON *notes, outcome *o, const char *status,
                            const char *reason, int code, const char *message, int broke) {
  memset(o, 0, sizeof *o);
  o->status  = status;
  o->reason  = reason;
  o->code    = code;
  o->iters   = -1;
  o->solve_s = o->natmap = o->merit = o->own = NAN;
  cJSON *n = cJSON_CreateObject();
  cJSON_AddStringToObject(n, "problem", label);
  cJSON_AddStringToObject(n, "solver", sname);
  cJSON_AddStringToObject(n, "status", status);
  cJSON_AddStringToObject(n, "message", message);
  cJSON_AddItemToArray(notes, n);
  fprintf(broke ? stderr : stdout, "%s / %s: %s: %s\n", label, sname, status, message);
  write_step(steps, p, label, sname, o, NULL, NULL);
  return broke;
}


/* --save-solution: the answer of (p, sname) as <save_dir>/<label>.<solver>.hdf5, a byte copy
 * of p's FCLIB file with its /solution (fl_solution_save), or p as FrictionLab writes it for a
 * built-in example. '/' in a label becomes '_'. FL_OK or fl_solution_save's error. */
static int save_answer(const solve_args *a, const fl_problem *p, const char *label,
                       const char *sname, const double *v, const double *gamma) {
  const char *src = NULL;
  struct stat st;
  for (int i = 0; i < a->np; i++)
    if (a->probs[i] == p && stat(a->sources[i], &st) == 0 && S_ISREG(st.st_mode))
      src = a->sources[i]; // a file (load_input's rule): copied; an example: written anew
  char path[4096];
  int  n = snprintf(path, sizeof path, "%s/%s.%s.hdf5", a->save_dir, label, sname);
  if (n < 0 || (size_t)n >= sizeof path)
    return fl_seterr(FL_ERR_IO, "%s: the path of the answer is too long", a->save_dir);
  for (char *c = path + strlen(a->save_dir) + 1; *c; c++)
    if (*c == '/') *c = '_';
  return fl_solution_save(p, src, p->nv > 0 ? v : NULL, gamma, path);
}


// runs one solver on one problem; fills *o; returns 0, or 1 when the solver broke
static int solve_one(const solve_args *a, const char *sname, const fl_problem *p,
                     const char *label, FILE *steps, FILE *iters, cJSON *notes, outcome *o) {
  memset(o, 0, sizeof *o);
  o->iters  = -1;
  o->solve_s = o->natmap = o->merit = o->own = NAN;
  fl_solver *s = NULL;
  if (make_solver(a, sname, &s) != 0) return 1; // checked before; only out of memory now

  int rc = fl_solver_setup(s, p);
  fl_result res;
  memset(&res, 0, sizeof res);
  double *v = NULL, *gamma = NULL;
  if (rc >= 0) {
    v     = fl_calloc(p->nv > 0 ? (size_t)p->nv : 1, sizeof *v);
    gamma = fl_calloc(fl_problem_nrows(p) > 0 ? (size_t)fl_problem_nrows(p) : 1, sizeof *gamma);
    if (!v || !gamma) rc = fl_seterr(FL_ERR_NOMEM, "out of memory for %s", label);
  }
  if (rc >= 0) rc = start_from_guess(s, p, v, gamma);
  if (rc >= 0) rc = fl_solver_solve(s, p, p->nv > 0 ? v : NULL, gamma, &res);

  int broke = 0;
  if (rc < 0) {
    // unsupported is an answer ("this solver needs A and J"), anything else a failure
    int unsup = rc == FL_ERR_UNSUPPORTED;
    broke = record_no_answer(label, sname, p, steps, notes, o, unsup ? "unsupported" : "error",
                             unsup ? "UNSUPPORTED" : fl_errname(rc), rc, fl_errmsg(), !unsup);
  } else {
    fl_metrics m;
    int        mrc = fl_problem_metrics(p, p->nv > 0 ? v : NULL, gamma, (fl_norm_kind)a->norm, &m);
    o->status = "returned";
    o->reason = fl_reason_name(res.reason);
    o->code   = res.reason;
    o->iters  = res.iters;
    o->solve_s = res.solve_s;
    o->natmap = mrc == FL_OK ? m.natmap : NAN;
    o->own = res.error;
    int                 nh = 0;
    const fl_iter_stat *h  = fl_solver_history(s, &nh);
    // the common measure of the returned iterate: its history record when the solver kept
    // one (with the growth test against the start), else from the metrics alone
    o->merit = nh > 0 && h[nh - 1].iter == res.iters && !isnan(h[nh - 1].merit)
                   ? h[nh - 1].merit
                   : (mrc == FL_OK ? fl_metrics_merit(&m, NAN) : INFINITY);
    write_step(steps, p, label, sname, o, &res, mrc == FL_OK ? &m : NULL);
    fl_csv_col ic[FL_ITERS_NCOLS];
    if (h && nh > 0) fl_iters_cols(ic, 1);
    for (int k = 0; h && k < nh; k++) {
      fl_iters_row ir = {0, label, sname, h[k]};
      fl_csv_row(iters, ic, FL_ITERS_NCOLS, &ir);
    }
    if (res.history_lost > 0) {
      fprintf(stderr, "%s / %s: warning: %ld iteration records did not fit in the history\n",
              label, sname, res.history_lost);
    }
    if (a->save_dir && save_answer(a, p, label, sname, v, gamma) < 0) {
      fprintf(stderr, "%s / %s: --save-solution: %s\n", label, sname, fl_errmsg());
      broke = 1;
    }
  }
  fl_free(v);
  fl_free(gamma);
  fl_solver_destroy(s);
  return broke;
}


//---- a pair's record (harness/campaign/pack.c) ----

/* one pair for fl_camp_pack_run (run_pair, a guarded pair's child) */
typedef struct pair_job {
  const solve_args *a;
  const char *sname, *label;
  const fl_problem *p;
  int guard; /* 1: in a child process (solve_one_guarded) */
} pair_job;

static int solve_one_guarded(const solve_args *a, const char *sname, const fl_problem *p,
                             const char *label, FILE *steps, FILE *iters, cJSON *notes,
                             outcome *o);

static int pair_solve(void *vc, FILE *steps, FILE *iters, cJSON *notes, outcome *o) {
  const pair_job *g = vc;
  return g->guard ? solve_one_guarded(g->a, g->sname, g->p, g->label, steps, iters, notes, o)
                  : solve_one(g->a, g->sname, g->p, g->label, steps, iters, notes, o);
}


//---- guarded pairs: --wall-limit, --mem-limit, plug-in solvers (harness/campaign/guard.c) ----

/* 1 when solver `name` was added by a plug-in file (fl_plugin_load): outside code, which may
 * crash, so that a campaign with it runs every pair guarded (a crash costs its pair only).
 * Solvers a program registered itself (Python's) are not: they are the program's own. */
static int from_plugin(const char *name) {
  const char *o = fl_solver_ops_origin(fl_solver_find(name));
  for (int k = 0; o && k < fl_plugin_count(); k++)
    if (fl_plugin_path(k) && strcmp(o, fl_plugin_path(k)) == 0) return 1;
  return 0;
}

/* Whether the pairs run guarded: asked for with a limit, or a plug-in's solver is among them
 * (then every pair, the built-in ones too, so that all are timed the same way). Fork under
 * MPI is not portable: a campaign over ranks runs plug-ins unguarded. */
static int guarded(const solve_args *a) {
  return a->wall_limit > 0 || a->mem_limit > 0 || (a->guard_plugins && fl_campaign_size() == 1);
}


/* in the child: the pair solved into its packed text */
static char *guard_make(void *vc) {
  pair_job g = *(const pair_job *)vc;
  outcome  oc;
  int      broke;
  g.guard = 0;
  return fl_camp_pack_run(pair_solve, &g, &oc, &broke);
}

/* solve_one in a child process (fl_camp_guard_run) whose wall time is bounded by
 * a->wall_limit and whose address space may grow by a->mem_limit GB beyond the harness's at
 * the fork; the child sends its rows as one packed text (fl_camp_pack). Past the wall limit
 * the pair is recorded as WALL_LIMIT (not a failure: the limit was asked for); a signal or a
 * broken message is CRASHED (a failure); out of memory under --mem-limit is NOMEM, not a
 * failure. Returns broke, as solve_one. */
static int solve_one_guarded(const solve_args *a, const char *sname, const fl_problem *p,
                             const char *label, FILE *steps, FILE *iters, cJSON *notes,
                             outcome *o) {
  pair_job          g   = {a, sname, label, p, 0};
  char             *buf = NULL;
  int               wst = 0;
  fl_camp_child_end end = fl_camp_guard_run(a->wall_limit, a->mem_limit, guard_make, &g, &buf, &wst);
  fl_camp_verdict   v;
  int               broke;
  if (fl_camp_guard_verdict(end, wst, a->wall_limit, a->mem_limit, &v)) {
    broke = record_no_answer(label, sname, p, steps, notes, o, "error", v.reason, v.code, v.msg,
                             v.broke);
  } else {
    broke = fl_camp_unpack(buf, steps, iters, notes, o);
    if (broke < 0) {
      broke = record_no_answer(label, sname, p, steps, notes, o, "error", "CRASHED", FL_ERR_IO,
                               "the child process sent a malformed record", 1);
    } else if (broke && a->mem_limit > 0 && o->code == FL_ERR_NOMEM) {
      broke = 0; // the limit was asked for: running out of it is an answer
    }
  }
  free(buf);
  return broke;
}


//---- campaigns: one record per pair, committed as it finishes (harness/campaign/) ----

typedef struct pair_ctx {
  const solve_args *a;
  fl_problem **probs;
  char **labels;
  outcome *outs;
} pair_ctx;

/* fl_camp_loop's run: pair k solved (in a child process when guarded) into its packed text. */
static char *run_pair(void *vc, long k, int *broke) {
  pair_ctx         *c = vc;
  const solve_args *a = c->a;
  int      i = (int)(k / a->nsolvers), j = (int)(k % a->nsolvers);
  pair_job g = {a, a->solvers[j], c->labels[i], c->probs[i], guarded(a)};
  return fl_camp_pack_run(pair_solve, &g, &c->outs[k], broke);
}

/* Serial: solves the pairs the store lacks, each committed as it finishes, then writes the
 * folder's files from the records in the serial order. Returns the number of broken solves, or
 * -1 (message printed). */
static long solve_pairs_stored(const solve_args *a, fl_problem **probs, char **labels, int np,
                               FILE *steps, FILE *iters, cJSON *notes, outcome *outs,
                               fl_pairs *store) {
  long         npairs = (long)np * a->nsolvers;
  pair_ctx     ctx    = {a, probs, labels, outs};
  fl_camp_loop loop   = {"solve", npairs, store, run_pair, &ctx};
  if (fl_camp_run(&loop) < 0) {
    fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
    return -1;
  }
  return fl_camp_write_records("solve", store, npairs, steps, iters, notes, outs);
}


//---- the dynamic deal over MPI ranks (harness/campaign/deal.c) ----

typedef struct deal_ctx {
  const solve_args *a;
  fl_problem **probs;
  char **labels;
  const char **in;
  outcome *outs;
  int cur;           /* worker: the problem loaded, -1 none */
  char *skip;        /* rank 0: problems that could not be loaded */
  char **info;       /* rank 0: each problem's "kind nv nc nh", from its first pair */
  cJSON *skipped;    /* rank 0: the manifest's "skipped" */
  int failed;        /* rank 0: a problem failed to load without --keep-going */
} deal_ctx;

// worker: pair k, its problem loaded first (the previous one freed: one problem per rank)
static char *deal_work(void *vc, long k, int *broke, char *info, size_t ninfo, int *skip) {
  deal_ctx         *c = vc;
  const solve_args *a = c->a;
  int               i = (int)(k / a->nsolvers);
  if (c->cur != i) {
    if (c->cur >= 0) fl_problem_free(c->probs[c->cur]);
    if (c->cur >= 0) c->probs[c->cur] = NULL;
    c->cur = -1;
    if (load_input(c->in[i], &c->probs[i]) < 0) {
      *skip = 1;
      snprintf(info, ninfo, "%c %s", fl_errcode() == FL_ERR_UNSUPPORTED ? 'U' : 'E', fl_errmsg());
      return NULL;
    }
    c->cur = i;
  }
  const fl_problem *p = c->probs[i];
  snprintf(info, ninfo, "%s %ld %ld %ld", p->kind == FL_PROBLEM_LOCAL ? "local" : "global",
           (long)p->nv, (long)p->nc, (long)p->nh);
  pair_ctx pc = {a, c->probs, c->labels, c->outs};
  return run_pair(&pc, k, broke);
}

// rank 0: a problem's sizes, or why it could not be loaded
static int deal_got(void *vc, long k, const char *info, int skip) {
  deal_ctx *c = vc;
  int       i = (int)(k / c->a->nsolvers);
  if (!skip) {
    if (!c->info[i]) {
      size_t n = strlen(info) + 1;
      if ((c->info[i] = fl_malloc(n))) memcpy(c->info[i], info, n);
    }
    return 0;
  }
  if (c->skip[i]) return 0; // said already
  c->skip[i] = 1;
  int unsupported = info[0] == 'U';
  const char *msg = info[0] && info[1] ? info + 2 : info;
  fprintf(stderr, "frictionlab solve: %s%s\n", unsupported ? "skipped: " : "", msg);
  if (!(c->a->keep_going || unsupported)) {
    c->failed = 1;
    return -1;
  }
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "source", c->in[i]);
  cJSON_AddStringToObject(o, "message", msg);
  cJSON_AddItemToArray(c->skipped, o);
  return 0;
}

static int deal_skipped(void *vc, long k) {
  deal_ctx *c = vc;
  return c->skip[k / c->a->nsolvers];
}

/* Over MPI ranks: rank 0 deals the pairs, largest problem first, as workers free up, and
 * commits each record as it arrives (the store); then writes the folder's files in the serial
 * order and adds the problems to the manifest. Returns the broken solves (every rank), or -1. */
static long solve_pairs_dealt(const solve_args *a, fl_problem **probs, char **labels,
                              const char **in, int np, FILE *steps, FILE *iters, cJSON *notes,
                              outcome *outs, fl_pairs *store, fl_results *res) {
  int      rank = fl_campaign_rank();
  long     npairs = (long)np * a->nsolvers, nbroke = 0;
  deal_ctx c = {a, probs, labels, in, outs, -1, NULL, NULL, NULL, 0};
  long    *order = NULL;
  double  *size  = NULL;
  int      ok    = 1;
  if (rank == 0) {
    c.skip    = fl_calloc((size_t)np + 1, 1);
    c.info    = fl_calloc((size_t)np + 1, sizeof *c.info);
    order     = fl_calloc((size_t)npairs + 1, sizeof *order);
    size      = fl_calloc((size_t)np + 1, sizeof *size);
    c.skipped = cJSON_GetObjectItemCaseSensitive(fl_results_manifest(res), "skipped");
    ok        = c.skip && c.info && order && size;
    for (int i = 0; ok && i < np; i++) size[i] = fl_pairs_source_size(in[i]);
    if (ok) fl_camp_order_by_size(size, a->nsolvers, npairs, order);
  }
  if (!fl_campaign_bcast_int(ok)) {
    fprintf(stderr, "frictionlab solve: rank 0: out of memory for the deal\n");
    nbroke = -1;
    goto out;
  }
  fl_camp_deal d = {"solve", npairs, store, order, deal_work, deal_got, deal_skipped, &c};
  long r = fl_camp_deal_run(&d);
  if (r < 0) {
    if (rank == 0 && !c.failed) fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
    nbroke = -1;
    goto out;
  }
  if (rank == 0) {
    nbroke = fl_camp_write_records("solve", store, npairs, steps, iters, notes, outs);
    cJSON *jp = cJSON_GetObjectItemCaseSensitive(fl_results_manifest(res), "problems");
    for (int i = 0; i < np; i++) {
      char kind[16] = "";
      long nv = 0, nc = 0, nh = 0;
      if (!c.info[i] || sscanf(c.info[i], "%15s %ld %ld %ld", kind, &nv, &nc, &nh) != 4) continue;
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "name", labels[i]);
      cJSON_AddStringToObject(o, "source", in[i]);
      cJSON_AddStringToObject(o, "kind", kind);
      cJSON_AddNumberToObject(o, "nv", (double)nv);
      cJSON_AddNumberToObject(o, "nc", (double)nc);
      cJSON_AddNumberToObject(o, "nh", (double)nh);
      cJSON_AddItemToArray(jp, o);
    }
  }
  nbroke = fl_campaign_bcast_int((int)nbroke);
out:
  if (c.cur >= 0) {
    fl_problem_free(probs[c.cur]);
    probs[c.cur] = NULL;
  }
  for (int i = 0; c.info && i < np; i++) fl_free(c.info[i]);
  fl_free(c.info);
  fl_free(c.skip);
  fl_free(order);
  fl_free(size);
  return nbroke;
}


/* --save-solution: <staging>/solutions, and what save_answer needs to find each problem's file. */
static int make_save_dir(solve_args *a, const fl_results *res, fl_problem **probs,
                         const char **in, int np) {
  const char *stage = fl_results_staging(res);
  size_t      n     = strlen(stage) + sizeof "/solutions";
  a->save_dir = fl_malloc(n);
  if (!a->save_dir) return fl_seterr(FL_ERR_NOMEM, "out of memory");
  snprintf(a->save_dir, n, "%s/solutions", stage);
  if (mkdir(a->save_dir, 0777) < 0)
    return fl_seterr(FL_ERR_IO, "%s: cannot create: %s", a->save_dir, strerror(errno));
  a->probs   = probs;
  a->sources = in;
  a->np      = np;
  return FL_OK;
}


/* The table: a converged row whose merit is above OWN_MODEL_MERIT is marked "own model": the
 * solver met its own test on its own (regularized) model, and the merit says how far that
 * answer is from the rigid law; a note under the table says so once. */
static void print_table(const solve_args *a, char **labels, int np, const outcome *o) {
  int wp = 7, ws = 6, nown = 0;
  for (int i = 0; i < np; i++) wp = (int)strlen(labels[i]) > wp ? (int)strlen(labels[i]) : wp;
  for (int j = 0; j < a->nsolvers; j++) {
    ws = (int)strlen(a->solvers[j]) > ws ? (int)strlen(a->solvers[j]) : ws;
  }
  printf("%-*s  %-*s  %8s  %-24s  %10s  %10s  %10s  %s\n", wp, "problem", ws, "solver", "iters",
         "reason", "solve_s", "own_err", "merit", "note");
  for (int i = 0; i < np; i++) {
    for (int j = 0; j < a->nsolvers; j++) {
      const outcome *r = &o[i * a->nsolvers + j];
      printf("%-*s  %-*s  ", wp, labels[i], ws, a->solvers[j]);
      if (r->iters >= 0) printf("%8d  ", r->iters);
      else printf("%8s  ", "-");
      printf("%-24s  ", r->reason ? r->reason : "?");
      if (isnan(r->solve_s)) {
        printf("%10s  %10s  %10s\n", "-", "-", "-");
        continue;
      }
      int own = r->code > 0 && !(r->merit <= OWN_MODEL_MERIT);
      nown += own;
      printf("%10.4g  %10.3e  %10.3e  %s\n", r->solve_s, r->own, r->merit, own ? "own model" : "");
    }
  }
  if (nown)
    printf("own model: %d converged row%s met the solver's own test (own_err) on its own, "
           "regularized model; merit above %g is how far that answer is from the rigid law "
           "(docs/merit.md)\n", nown, nown > 1 ? "s" : "", OWN_MODEL_MERIT);
}


/* Every source's label (an FCLIB file's stem or the example's name, with "~2", "~3", ... when
 * two share one) and its shard: computed from the names alone, so that a shard loads only its
 * own problems and labels them as the whole campaign does. -1 when out of memory. */
static int campaign_labels(const solve_args *a, int nex, const char *const *examples,
                           char ***labels, int **owner, int *nall) {
  int     nin  = nex + a->ninputs;
  char  **lab  = fl_calloc((size_t)nin + 1, sizeof *lab);
  int    *own  = fl_calloc((size_t)nin + 1, sizeof *own);
  double *size = fl_calloc((size_t)nin + 1, sizeof *size);
  *labels = lab;
  *owner  = own;
  *nall   = lab ? nin : 0;
  if (!lab || !own || !size) {
    fl_free(size);
    return -1;
  }
  for (int k = 0; k < nin; k++) {
    const char *src = k < nex ? examples[k] : a->inputs[k - nex];
    char base[128]; // as fl_problem's name
    fl_pairs_label_base(src, base, sizeof base);
    int dup = 1;
    for (int j = 0; j < k; j++) {
      if (strncmp(lab[j], base, strlen(base)) == 0 &&
          (lab[j][strlen(base)] == '\0' || lab[j][strlen(base)] == '~')) {
        dup++;
      }
    }
    size_t len = strlen(base) + 16;
    if (!(lab[k] = fl_malloc(len))) {
      fl_free(size);
      return -1;
    }
    if (dup > 1) snprintf(lab[k], len, "%s~%d", base, dup);
    else snprintf(lab[k], len, "%s", base);
    size[k] = fl_pairs_source_size(src);
  }
  if (a->shard_n > 1) fl_pairs_deal(nin, size, a->shard_n, own);
  fl_free(size);
  return 0;
}


/* --resume into an existing campaign folder (one with pairs/): it is replaced at the commit. */
static int campaign_resumable(const solve_args *a) {
  char        path[4200];
  struct stat st;
  snprintf(path, sizeof path, "%s/pairs", a->out);
  return a->resume && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}


/* Rank 0 of a serial campaign: the store of per-pair records in the staging folder, each pair
 * named with its settings hash; with --resume, the records of --out and of killed runs'
 * staging folders of it (*orphans, removed once the new folder is in place) taken over.
 * Returns 0 or -1 (message printed). */
static int campaign_store(const solve_args *a, fl_results *res, const char **in, char **labels,
                          int np, fl_pairs **store, char ***orphans, int *norphans,
                          long *resumed) {
  long      npairs = (long)np * a->nsolvers;
  uint64_t *sh     = fl_calloc((size_t)a->nsolvers + 1, sizeof *sh);
  int       rc     = sh ? fl_pairs_open(fl_results_staging(res), npairs, store)
                        : fl_seterr(FL_ERR_NOMEM, "out of memory");
  for (int j = 0; rc >= 0 && j < a->nsolvers; j++) {
    fl_solver *s = NULL;
    rc = make_solver(a, a->solvers[j], &s) != 0 ? fl_seterr(FL_ERR_NOMEM, "out of memory")
                                                : fl_pairs_solver_hash(s, &sh[j]);
    fl_solver_destroy(s);
  }
  for (int i = 0; rc >= 0 && i < np; i++) {
    uint64_t ph = 0;
    rc = fl_pairs_source_hash(in[i], &ph);
    for (int j = 0; rc >= 0 && j < a->nsolvers; j++) {
      uint64_t h = fl_pairs_hash(sh[j], &ph, sizeof ph);
      rc = fl_pairs_define(*store, (long)i * a->nsolvers + j, labels[i], a->solvers[j], h);
    }
  }
  fl_free(sh);
  long stale = 0, st = 0;
  if (rc >= 0 && a->resume) {
    long n = fl_pairs_adopt(*store, a->out, a->retry_failed, &stale);
    rc     = n < 0 ? (int)n : fl_pairs_orphans(a->out, orphans, norphans);
    for (int k = 0; rc >= 0 && k < *norphans; k++) {
      long m = fl_pairs_adopt(*store, (*orphans)[k], a->retry_failed, &st);
      rc     = m < 0 ? (int)m : rc;
      n += m > 0 ? m : 0;
      stale += st;
    }
    if (rc >= 0) {
      *resumed = n;
      fprintf(stderr, "frictionlab solve: --resume: %ld of %ld pair(s) taken over from %s%s",
              n, npairs, a->out, *norphans ? " and killed runs' staging folders" : "");
      if (stale) fprintf(stderr, "; %ld done under other settings are solved again", stale);
      fprintf(stderr, "\n");
    }
  }
  if (rc < 0) fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
  return rc < 0 ? -1 : 0;
}


int fl_cmd_solve(int argc, char **argv) {
  solve_cli c;
  memset(&c, 0, sizeof c);
  int rc = fl_args_parse(&solve_spec, argc, argv, &c);
  if (rc == 0) {
    fl_solve_job j = {c.pos.n,  c.pos.v,       c.solver_arg.n, c.solver_arg.v, c.set_arg.n,
                      c.set_arg.v, c.norm,     c.out,          NULL,           c.force,
                      c.examples, c.keep_going, c.wall_limit, c.mem_limit, c.shard, c.resume,
                      c.retry_failed, c.save_solution};
    rc = fl_solve_run(&j);
  } else {
    rc = rc == 1 ? 0 : rc < 0 ? 1 : EXIT_USAGE;
  }
  fl_args_free(&solve_spec, &c);
  return rc;
}


int fl_solve_run(const fl_solve_job *job) {
  fl_register_all();
  solve_args a;
  memset(&a, 0, sizeof a);
  fl_problem **probs  = NULL;
  char       **labels = NULL;
  const char **in     = NULL; /* source of each loaded problem */
  cJSON       *skipped = NULL;
  outcome     *outs   = NULL;
  fl_results  *res    = NULL;
  int          np = 0, status = 0;
  int          rank = fl_campaign_rank(); // campaigns: rank 0 alone writes and prints
  int          announce = 0;
  FILE        *steps = NULL, *iters = NULL;
  cJSON       *notes = NULL;
  char       **expanded = NULL; /* the inputs with folders expanded */
  int          nexpanded = 0;
  char       **all_labels = NULL; /* every source's label (shards load only some) */
  int         *owner = NULL;      /* every source's shard */
  fl_pairs    *store = NULL;      /* one record per finished pair (harness/campaign/) */
  char       **orphans = NULL;    /* staging folders of killed runs taken over by --resume */
  int          norphans = 0, sig = 0, nall = 0;
  long         resumed = 0;

  int rc = fill_args(&a, job);
  if (rc != 0) {
    status = rc == 1 ? 0 : rc < 0 ? 1 : rc;
    if (rc < 0) fprintf(stderr, "frictionlab solve: out of memory\n");
    goto done;
  }
  for (int j = 0; j < a.nsolvers; j++) a.guard_plugins |= from_plugin(a.solvers[j]);
  if (guarded(&a)) fl_camp_guard_begin(); // before any problem is loaded
  // SIGTERM, SIGINT from here on: loading goes on, then no pair starts and the folder is kept
  // (with the pairs a --resume took over) and marked interrupted
  fl_pairs_signals_on();

  // every solver and every option is checked before anything is loaded or written
  for (int j = 0; j < a.nsolvers; j++) {
    fl_solver *s = NULL;
    rc           = make_solver(&a, a.solvers[j], &s);
    fl_solver_destroy(s);
    if (rc != 0) {
      status = rc;
      goto done;
    }
  }

  // folders: every FCLIB file under them, as profile takes them
  if (fl_inputs_expand(a.ninputs, a.inputs, "solve", rank == 0 ? stdout : NULL, &expanded,
                       &nexpanded) < 0) {
    if (rank == 0) fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
    status = 1;
    goto done;
  }
  {
    const char **was = a.inputs;
    a.inputs = fl_calloc((size_t)nexpanded + 1, sizeof *a.inputs);
    if (!a.inputs) {
      a.inputs = was;
      fprintf(stderr, "frictionlab solve: out of memory\n");
      status = 1;
      goto done;
    }
    fl_free(was);
    for (int k = 0; k < nexpanded; k++) a.inputs[k] = expanded[k];
    a.ninputs = nexpanded;
  }

  // problems: the built-in examples (--examples, or no problems given), then the arguments
  const char *const *examples = fl_examples_list();
  int                nex      = 0;
  while (examples && examples[nex]) nex++;
  if (a.ninputs > 0 && !a.examples) nex = 0;
  int nin = nex + a.ninputs;
  if (nin == 0) {
    fprintf(stderr, "frictionlab solve: no problems given and no built-in examples exist\n");
    status = 1;
    goto done;
  }
  in      = fl_calloc((size_t)nin, sizeof *in);
  probs   = fl_calloc((size_t)nin, sizeof *probs);
  labels  = fl_calloc((size_t)nin, sizeof *labels);
  skipped = cJSON_CreateArray();
  if (!in || !probs || !labels || !skipped) {
    fprintf(stderr, "frictionlab solve: out of memory\n");
    status = 1;
    goto done;
  }
  if (campaign_labels(&a, nex, examples, &all_labels, &owner, &nall) < 0) {
    fprintf(stderr, "frictionlab solve: out of memory\n");
    status = 1;
    goto done;
  }
  for (int k = 0; k < nin; k++) {
    const char *src = k < nex ? examples[k] : a.inputs[k - nex];
    if (owner[k] != a.shard_i) continue; // another shard's (--shard)
    // over MPI ranks each worker loads a problem when it is dealt one of its pairs
    if (fl_campaign_size() == 1 && load_input(src, &probs[np]) < 0) {
      // a well-formed file of a kind FrictionLab does not model (rolling friction, ...) is
      // skipped and recorded like an unsupported solver; malformed input stops the run
      // unless --keep-going
      int unsupported = fl_errcode() == FL_ERR_UNSUPPORTED;
      if (rank == 0)
        fprintf(stderr, "frictionlab solve: %s%s\n", unsupported ? "skipped: " : "", fl_errmsg());
      if ((a.keep_going || unsupported) && fl_errcode() != FL_ERR_NOMEM) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "source", src);
        cJSON_AddStringToObject(o, "message", fl_errmsg());
        cJSON_AddItemToArray(skipped, o);
        continue;
      }
      status = 1;
      goto done;
    }
    in[np] = src;
    // its label, unique over every source given (campaign_labels)
    size_t len = strlen(all_labels[k]) + 1;
    labels[np] = fl_malloc(len);
    np++;
    if (!labels[np - 1]) {
      fprintf(stderr, "frictionlab solve: out of memory\n");
      status = 1;
      goto done;
    }
    memcpy(labels[np - 1], all_labels[k], len);
  }
  if (np == 0 && a.shard_n > 1) {
    fprintf(stderr, "frictionlab solve: shard %d/%d: no problem was dealt to it (%d problem(s) "
                    "for %d shards)\n", a.shard_i, a.shard_n, nin, a.shard_n);
    status = 1;
    goto done;
  }
  if (np == 0) {
    fprintf(stderr, "frictionlab solve: none of the %d problem(s) could be loaded\n", nin);
    status = 1;
    goto done;
  }

  // the results folder (rank 0's; the other ranks only solve)
  char outbuf[512];
  if (!a.out) {
    fl_results_default_dir("results/runs/solve", outbuf, sizeof outbuf);
    a.out = outbuf;
  }
  if (rank > 0) {
    notes = cJSON_CreateArray();
    if (!fl_campaign_bcast_int(0)) { // rank 0 could not begin the folder
      status = 1;
      goto done;
    }
    goto solve;
  }
  announce = 1; // from here rank 0 owes the others a word on whether the folder is ready
  if (fl_results_begin(a.out, "solve", a.force || campaign_resumable(&a), &res) < 0) {
    fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
    status = 1;
    goto done;
  }
  if (a.save_solution && make_save_dir(&a, res, probs, in, np) < 0) {
    fprintf(stderr, "frictionlab solve: --save-solution: %s\n", fl_errmsg());
    status = 1;
    goto done;
  }
  steps = fl_results_file(res, "steps.csv");
  iters = fl_results_file(res, "iters.csv");
  if (!steps || !iters) {
    fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
    status = 1;
    goto done;
  }
  fl_csv_col sc[FL_SOLVE_STEPS_NCOLS], ic[FL_ITERS_NCOLS];
  fl_solve_steps_cols(sc);
  fl_csv_header(steps, sc, FL_SOLVE_STEPS_NCOLS);
  fl_iters_cols(ic, 1);
  fl_csv_header(iters, ic, FL_ITERS_NCOLS);

  // manifest: options of every solver, the problems, the settings
  cJSON *man = fl_results_manifest(res);
  for (int j = 0; j < a.nsolvers; j++) {
    fl_solver *s = NULL;
    if (make_solver(&a, a.solvers[j], &s) != 0 || fl_results_add_solver(res, s) < 0) {
      fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
      fl_solver_destroy(s);
      status = 1;
      goto done;
    }
    fl_solver_destroy(s);
  }
  cJSON_AddStringToObject(man, "norm", a.norm_name);
  if (a.save_solution) cJSON_AddStringToObject(man, "solutions", "solutions");
  cJSON_AddNumberToObject(man, "ranks", fl_campaign_size());
  cJSON *jsets = cJSON_AddArrayToObject(man, "settings");
  for (int k = 0; k < a.nsets; k++) cJSON_AddItemToArray(jsets, cJSON_CreateString(a.sets[k].arg));
  cJSON *jprobs = cJSON_AddArrayToObject(man, "problems");
  for (int i = 0; i < np && probs[i]; i++) { // (over MPI ranks: added as pairs arrive)
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", labels[i]);
    cJSON_AddStringToObject(o, "source", in[i]);
    cJSON_AddStringToObject(o, "kind", probs[i]->kind == FL_PROBLEM_LOCAL ? "local" : "global");
    cJSON_AddNumberToObject(o, "nv", probs[i]->nv);
    cJSON_AddNumberToObject(o, "nc", probs[i]->nc);
    cJSON_AddNumberToObject(o, "nh", probs[i]->nh);
    cJSON_AddItemToArray(jprobs, o);
  }
  cJSON_AddItemToObject(man, "skipped", skipped);
  skipped = NULL; // owned by the manifest now
  notes   = cJSON_AddArrayToObject(man, "notes");
  if (campaign_store(&a, res, in, labels, np, &store, &orphans, &norphans, &resumed) < 0) {
    status = 1;
    goto done;
  }
  fl_campaign_bcast_int(1);
  announce = 0;

solve:
  // solve every pair
  outs = fl_calloc((size_t)np * (size_t)a.nsolvers, sizeof *outs);
  if (!outs) {
    fprintf(stderr, "frictionlab solve: out of memory\n");
    status = 1;
    goto done;
  }
  long nbroke = fl_campaign_size() > 1
                    ? solve_pairs_dealt(&a, probs, labels, in, np, steps, iters, notes, outs,
                                        store, res)
                    : solve_pairs_stored(&a, probs, labels, np, steps, iters, notes, outs, store);
  sig = fl_campaign_bcast_int(store ? fl_pairs_signalled() : 0);
  if (nbroke < 0) {
    status = 1;
    goto done;
  }
  if (store && fl_camp_state(fl_results_staging(res), fl_results_manifest(res), store, resumed,
                             sig, a.shard_i, a.shard_n, all_labels, nall) < 0) {
    fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
    status = 1;
    goto done;
  }
  if (rank > 0) { // rank 0 writes the folder and the table
    status = sig ? 128 + sig : nbroke > 0;
    goto done;
  }

  if (fl_results_commit(res) < 0) {
    res = NULL;
    fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
    status = 1;
    goto done;
  }
  res = NULL;
  for (int k = 0; k < norphans; k++) fl_pairs_rmtree(orphans[k]); // taken over, now committed
  if (sig) {
    fprintf(stderr, "frictionlab solve: stopped by signal %d (%s): %ld of %ld pair(s) done are "
                    "in %s (campaign.json says \"interrupted\"); run the same command with "
                    "--resume to solve the rest\n", sig, strsignal(sig), fl_pairs_ndone(store),
            fl_pairs_npairs(store), job->shown_out ? job->shown_out : a.out);
    status = 128 + sig;
    goto done;
  }
  print_table(&a, labels, np, outs);
  printf("\nresults written to %s (manifest.json, steps.csv, iters.csv%s)\n",
         job->shown_out ? job->shown_out : a.out,
         a.save_solution ? ", solutions/<problem>.<solver>.hdf5" : "");
  if (np < nin) {
    printf("%d of %d problem(s) could not be loaded and were skipped (see the messages above "
           "and \"skipped\" in manifest.json)\n", nin - np, nin);
  }
  if (nbroke > 0) {
    fprintf(stderr, "frictionlab solve: %ld solve(s) failed with an error (see steps.csv and "
                    "manifest.json notes)\n", nbroke);
    status = 1;
  }

done:
  fl_pairs_signals_off();
  fl_pairs_close(store);
  for (int k = 0; k < norphans; k++) fl_free(orphans[k]);
  fl_free(orphans);
  for (int k = 0; all_labels && k < nall; k++) fl_free(all_labels[k]);
  fl_free(all_labels);
  fl_free(owner);
  if (announce) fl_campaign_bcast_int(0); // the folder failed: the other ranks stop
  if (rank > 0) cJSON_Delete(notes);
  fl_results_abort(res);
  cJSON_Delete(skipped);
  fl_free(in);
  for (int i = 0; i < np; i++) {
    fl_problem_free(probs[i]);
    fl_free(labels[i]);
  }
  fl_free(probs);
  fl_free(labels);
  fl_free(outs);
  args_free(&a);
  fl_inputs_free(expanded, nexpanded);
  return status;
}

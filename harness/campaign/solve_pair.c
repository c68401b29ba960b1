// SPDX-License-Identifier: Apache-2.0
/* solve_pair.c: one (problem, solver) pair of a `solve` campaign (fl_solve.h): the solver
 * made, the problem loaded, solved from its guess, its rows written; the same pair in a child
 * process under --wall-limit and --mem-limit or for a plug-in's solver. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "../../core/fl_campaign.h"
#include "../../solvers/fl_plugin.h"
#include "../output/fl_run_csv.h"
#include "../run/fl_run.h"
#include "fl_solve.h"

#define EXIT_USAGE 2

/* One row of the summary: what happened to (problem, solver) (fl_camp.h). */
typedef fl_camp_outcome outcome;


#define CMD(a) ((a)->cmd ? (a)->cmd : "solve")


static void print_solver_names(FILE *f) {
  const char *const *names = fl_solver_list();
  for (int i = 0; names && names[i]; i++) fprintf(f, "%s%s", i ? ", " : "", names[i]);
}


void fl_solve_args_free(fl_solve_args *a) {
  fl_free(a->save_dir);
  fl_free(a->sets);
  fl_free(a->solvers);
  fl_free(a->solver_buf);
  fl_free(a->inputs);
}


// appends the comma-separated names of one --solver value
static int add_solvers(fl_solve_args *a, const char *value) {
  size_t old = a->solver_buf ? strlen(a->solver_buf) : 0;
  // keep all values in one buffer joined by commas, then split it at the end
  char *buf = fl_realloc(a->solver_buf, old + strlen(value) + 2);
  if (!buf) return -1;
  if (old) buf[old++] = ',';
  strcpy(buf + old, value);
  a->solver_buf = buf;
  return 0;
}


static int split_solvers(fl_solve_args *a) {
  if (!a->solver_buf) return 0;
  int n = 1;
  for (const char *c = a->solver_buf; *c; c++) n += *c == ',';
  a->solvers = fl_calloc((size_t)n, sizeof *a->solvers);
  if (!a->solvers) return -1;
  for (char *tok = a->solver_buf, *next; tok; tok = next) {
    next = strchr(tok, ',');
    if (next) *next++ = '\0';
    if (*tok == '\0') {
      fprintf(stderr, "frictionlab %s: --solver: empty solver name in the list (expected "
                      "comma-separated names: ", CMD(a));
      print_solver_names(stderr);
      fprintf(stderr, ")\n");
      return EXIT_USAGE;
    }
    if (!fl_solver_find(tok)) {
      fprintf(stderr, "frictionlab %s: --solver: unknown solver '%s'; registered solvers: ",
              CMD(a), tok);
      print_solver_names(stderr);
      fprintf(stderr, "\n");
      return EXIT_USAGE;
    }
    for (int i = 0; i < a->nsolvers; i++) {
      if (strcmp(a->solvers[i], tok) == 0) {
        fprintf(stderr, "frictionlab %s: --solver: '%s' is given twice\n", CMD(a), tok);
        return EXIT_USAGE;
      }
    }
    a->solvers[a->nsolvers++] = tok;
  }
  return 0;
}


static int parse_norm(fl_solve_args *a, const char *v) {
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
  fprintf(stderr, "frictionlab %s: --norm '%s': unknown normalization; expected one of "
                  "fclib, siconos, none\n", CMD(a), v);
  return EXIT_USAGE;
}


int fl_solve_choose(fl_solve_args *a, int nsolver_arg, const char *const *solver_arg, int nset,
                    const char *const *set, const char *norm) {
  a->norm      = FL_NORM_FCLIB;
  a->norm_name = "fclib";
  for (int i = 0; i < nsolver_arg; i++)
    if (add_solvers(a, solver_arg[i]) != 0) return -1;
  if (nset > 0) {
    a->sets = fl_calloc((size_t)nset, sizeof *a->sets);
    if (!a->sets) return -1;
    for (int i = 0; i < nset; i++) a->sets[a->nsets++] = set[i];
  }
  if (parse_norm(a, norm ? norm : "fclib") != 0) return EXIT_USAGE;
  int rc = split_solvers(a);
  if (rc != 0) return rc;
  if (a->nsolvers == 0) {
    // default: every registered CPU solver (the same table on every machine); GPU and peer
    // (Siconos) solvers run when named
    const char *const *names = fl_solver_list();
    int n = 0;
    while (names && names[n]) n++;
    if (n == 0) {
      fprintf(stderr, "frictionlab %s: no solvers are registered\n", CMD(a));
      return 1;
    }
    a->solvers = fl_calloc((size_t)n, sizeof *a->solvers);
    if (!a->solvers) return -1;
    for (int i = 0; i < n; i++)
      if (!(fl_solver_ops_caps(fl_solver_find(names[i])) & (FL_CAP_GPU | FL_CAP_PEER)))
        a->solvers[a->nsolvers++] = names[i];
  }

  // the settings, sorted once by the rule of fl_settings.h (no scene here); the notes say
  // "solve" for plan too, as they did
  fl_settings_ctx ctx = {"solve", NULL, a->nsolvers, a->solvers, 0};
  fl_settings_init(&a->set, &ctx);
  for (int k = 0; k < a->nsets; k++) {
    if (fl_settings_add(&a->set, a->sets[k], 0) < 0) {
      fprintf(stderr, "frictionlab %s: %s\n", CMD(a), fl_errmsg());
      return EXIT_USAGE;
    }
  }
  return 0;
}


// creates solver `name` with the harness defaults, then every applicable --set (the run
// room's order: opts, then the settings one by one); prints the problem and returns
// EXIT_USAGE on a bad option, 1 on another error
int fl_solve_make_solver(const fl_solve_args *a, const char *name, fl_solver **out) {
  // the harness's defaults: comparable merit at every iteration, one normalization for all
  char defaults[64];
  snprintf(defaults, sizeof defaults, "error_every=1,norm=%s", a->norm_name);
  // each --set sorted alone for this one solver picks what a->set picks for it: another
  // solver's setting is skipped either way (fl_settings.h)
  fl_run_spec sp = {.opts = defaults, .nset = a->nsets, .set = a->sets};
  int bad = -1, rc = fl_run_solver(&sp, name, out, &bad);
  if (rc >= 0) return 0;
  if (bad < 0) { // the solver itself or the defaults
    fprintf(stderr, "frictionlab %s: solver '%s': %s\n", CMD(a), name, fl_errmsg());
    return fl_errcode() == FL_ERR_UNKNOWN_SOLVER ? EXIT_USAGE : 1;
  }
  const fl_setting *t = &a->set.s[bad]; // a->set holds the --set values in the same order
  fprintf(stderr, "frictionlab %s: --set '%s': %s\n", CMD(a), t->text, fl_errmsg());
  if (t->scope == FL_SET_EVERY && fl_errcode() == FL_ERR_UNKNOWN_OPTION) {
    fprintf(stderr, "  (an option without a solver prefix goes to every selected solver; "
                    "write <solver>.%s=%s to set it for one solver)\n", t->key, t->value);
  }
  return EXIT_USAGE;
}


// loads one argument: an existing file is an FCLIB file, a bare name a built-in example
int fl_solve_load(const char *arg, fl_problem **out) {
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
static int save_answer(const fl_solve_args *a, const fl_problem *p, const char *label,
                       const char *sname, const double *v, const double *gamma) {
  const char *src = NULL;
  struct stat st;
  for (int i = 0; i < a->np; i++)
    if (a->probs[i] == p && stat(a->sources[i], &st) == 0 && S_ISREG(st.st_mode))
      src = a->sources[i]; // a file (fl_solve_load's rule): copied; an example: written anew
  char path[4096];
  int  n = snprintf(path, sizeof path, "%s/%s.%s.hdf5", a->save_dir, label, sname);
  if (n < 0 || (size_t)n >= sizeof path)
    return fl_seterr(FL_ERR_IO, "%s: the path of the answer is too long", a->save_dir);
  for (char *c = path + strlen(a->save_dir) + 1; *c; c++)
    if (*c == '/') *c = '_';
  return fl_solution_save(p, src, p->nv > 0 ? v : NULL, gamma, path);
}


// runs one solver on one problem; fills *o; returns 0, or 1 when the solver broke
static int solve_one(const fl_solve_args *a, const char *sname, const fl_problem *p,
                     const char *label, FILE *steps, FILE *iters, cJSON *notes, outcome *o) {
  memset(o, 0, sizeof *o);
  o->iters  = -1;
  o->solve_s = o->natmap = o->merit = o->own = NAN;
  fl_solver *s = NULL;
  if (fl_solve_make_solver(a, sname, &s) != 0) return 1; // checked before; only out of memory now

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
  const fl_solve_args *a;
  const char *sname, *label;
  const fl_problem *p;
  int guard; /* 1: in a child process (solve_one_guarded) */
} pair_job;

static int solve_one_guarded(const fl_solve_args *a, const char *sname, const fl_problem *p,
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
int fl_solve_from_plugin(const char *name) {
  const char *o = fl_solver_ops_origin(fl_solver_find(name));
  for (int k = 0; o && k < fl_plugin_count(); k++)
    if (fl_plugin_path(k) && strcmp(o, fl_plugin_path(k)) == 0) return 1;
  return 0;
}

/* Whether the pairs run guarded: asked for with a limit, or a plug-in's solver is among them
 * (then every pair, the built-in ones too, so that all are timed the same way). Fork under
 * MPI is not portable: a campaign over ranks runs plug-ins unguarded. */
int fl_solve_guarded(const fl_solve_args *a) {
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
static int solve_one_guarded(const fl_solve_args *a, const char *sname, const fl_problem *p,
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


/* fl_camp_loop's run and an MPI worker's: the pair solved (in a child process when guarded)
 * into its packed text. */
char *fl_solve_pair_run(const fl_solve_args *a, const char *sname, const char *label,
                        const fl_problem *p, outcome *o, int *broke) {
  pair_job g = {a, sname, label, p, fl_solve_guarded(a)};
  return fl_camp_pack_run(pair_solve, &g, o, broke);
}

// SPDX-License-Identifier: Apache-2.0
/* fl_harness.h: the frictionlab command line and the results folders it writes.
 *
 * Each sub-command is one function taking the arguments after its name; it returns the
 * process exit status (0 success, 1 failure, 2 usage error) and prints its own messages.
 */
#ifndef FL_HARNESS_H
#define FL_HARNESS_H
// layer 6: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 6
#error "harness/fl_harness.h is in harness/, layer 6: a lower layer may not include it (docs/layers.md)"
#endif

#include "../core/fl_core.h"
#include "../problems/fl_problem.h"
#include "../solvers/fl_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- sub-commands ----*/

/* One sub-command: `fn(argc, argv)` receives the arguments after the sub-command's name and
 * returns the exit status (0 success, 1 failure, 2 usage error). harness/cli/main.c keeps the
 * table; a new sub-command is one row there plus its declaration here. */
typedef int (*fl_cmd_fn)(int argc, char **argv);
typedef struct fl_subcommand {
  const char *name;    /* "solve" */
  fl_cmd_fn fn;
  const char *summary; /* one line for `frictionlab help` */
} fl_subcommand;

int fl_cmd_list(int argc, char **argv);   /* frictionlab list [solvers|problems|figures] */
int fl_cmd_solve(int argc, char **argv);  /* frictionlab solve FILE... --solver a,b ... */
/* The problem arguments of `solve` and `profile`: a folder becomes every FCLIB file (.hdf5,
 * .h5) under it, subfolders included, sorted by name; other arguments are kept as given. Per
 * folder, one line to `report` (NULL: none) prefixed by `cmd` says how many files it gave, how
 * many came from which subfolders and what was skipped. *out: n_out strings and a NULL, owned by
 * the caller (fl_inputs_free). Returns FL_OK, FL_ERR_IO (a folder without a file, unreadable)
 * or FL_ERR_NOMEM. */
int fl_inputs_expand(int n, const char *const *args, const char *cmd, FILE *report,
                     char ***out, int *n_out);
void fl_inputs_free(char **list, int n);
/* One `solve`, as its command line says it (fl_cmd_solve parses into this; profile fills it
 * itself). Strings are the caller's and must outlive the call. */
typedef struct fl_solve_job {
  int ninputs;
  const char *const *inputs;     /* FCLIB files, folders, built-in example names */
  int nsolver_arg;
  const char *const *solver_arg; /* "a,b" lists (--solver values); none: every CPU solver */
  int nset;
  const char *const *set;        /* --set values (fl_settings.h) */
  const char *norm;              /* "fclib" (NULL), "siconos" or "none" */
  const char *out;               /* results folder; NULL: results/runs/solve-<date>-<time> */
  const char *shown_out;         /* the folder named as written (profile: where its staging
                                    folder will be moved), NULL: out */
  int force, examples, keep_going;
  const char *wall_limit;        /* --wall-limit SECONDS or NULL: each (problem, solver) pair
                                    runs in a child process killed after that much wall time */
  const char *mem_limit;         /* --mem-limit GB or NULL: how far that child's address
                                    space may grow beyond the harness's */
  const char *shard;             /* --shard I/N or NULL: only shard I's problems */
  int resume, retry_failed;      /* --resume, --retry-failed (docs/campaigns.md) */
  int save_solution;             /* --save-solution: each pair's answer in solutions/ (profile
                                    saves nothing: 0) */
} fl_solve_job;
/* Runs a solve; returns the exit status as fl_cmd_solve does (0, 1, 2). */
int fl_solve_run(const fl_solve_job *job);
int fl_cmd_reproduce(int argc, char **argv); /* frictionlab reproduce FIGURE|all [--quick] */
int fl_cmd_profile(int argc, char **argv);   /* frictionlab profile PROBLEMS... | --from DIR */
int fl_cmd_bench(int argc, char **argv);     /* frictionlab bench PROBLEM --solver a,b */
int fl_cmd_check(int argc, char **argv);     /* frictionlab check [--update] */
int fl_cmd_run(int argc, char **argv);     /* frictionlab run PROBLEM|FILE.json --solver a,b --steps N */
int fl_cmd_export(int argc, char **argv);
int fl_cmd_verify(int argc, char **argv);  /* frictionlab verify [--quick] [--only CASES] */
int fl_cmd_score(int argc, char **argv);   /* frictionlab score PROBLEM SOLUTION */
int fl_cmd_view(int argc, char **argv);    /* frictionlab view RESULTS_DIR [--print] [--rebuild] */  /* frictionlab export PROBLEM --steps A:B --out DIR */

/* Dolan-More performance profile. cost is (np x ns) row-major: the cost of solver s on problem
 * p (time, iterations; INFINITY when s did not solve p; >= 0, no NaN). For each solver s and
 * each tau[t] (>= 1), rho[s * ntau + t] = fraction of the np problems with
 * cost[p][s] <= tau[t] * min_s' cost[p][s']. Problems no solver solved count in the
 * denominator. Returns FL_OK or FL_ERR_INVAL (negative size, NaN or negative cost). */
int fl_perf_profile(int np, int ns, const double *cost, int ntau, const double *tau,
                    double *rho);

/* Reads a solve folder as `profile --from DIR` does (steps.csv names the problems and solvers,
 * iters.csv gives each pair's cost to reach merit <= tol) and frees what it read; *nprob and
 * *nsolver get the counts. FL_OK, or FL_ERR_IO / FL_ERR_FORMAT naming the file and row (a short
 * row, a non-numeric cost, a pair steps.csv lacks) or FL_ERR_NOMEM. */
int fl_profile_read_costs(const char *dir, double tol, int *nprob, int *nsolver);

/* Reads a `check` baseline (JSON text of len bytes, results/baselines/<case>.json) as `check`
 * does: its steps, each registered solver's entry, options applied to that solver, and the
 * comparison of a record of ones against it (printed to stdout). *ncase gets the entries
 * compared. FL_OK, FL_ERR_FORMAT (not JSON, no valid steps) or the options' error. */
int fl_check_read_baseline(const char *text, size_t len, int *ncase);


/* Applies "key=value" settings (as given to --set) to one solver by the rule of fl_settings.h,
 * with no scene and without notes: a key prefixed with another registered solver's or a peer's
 * name ("sap.beta=1" for a pgs handle) is skipped, every other key goes to
 * fl_solver_set_option. Returns FL_OK or its error (FL_ERR_INVAL for a setting without '=' or
 * a scene.KEY), with a message naming the setting. */
int fl_harness_apply_sets(fl_solver *s, int nset, char *const *set);


/*---- the command line of this process ----*/

/* Records the full command line (main's argc/argv) for manifests. The strings must outlive
 * the program (main's argv does). */
void fl_harness_set_argv(int argc, char **argv);

/*---- results folders ----*/

/* A results folder is written in a staging folder beside its target ("<parent>/.<name>.staging-
 * <host>-<pid>"; a later command removes it as stale only when <host> is this machine and the
 * process is gone) and renamed into place by fl_results_commit, so a reader never sees a half-written
 * folder: on any error, fl_results_abort (or fl_results_free without commit) removes the
 * staging folder and everything in it. Layout written by `solve` (and later `run`):
 *
 *   manifest.json  command line, resolved options of every solver, versions, git revision,
 *                  machine, date, plus whatever the command adds (fl_results_manifest)
 *   steps.csv      one row per problem (or step) and solver
 *   iters.csv      one row per iteration
 *
 * Not thread-safe; one handle per folder. */
typedef struct fl_results fl_results;
struct cJSON;

/* Checks that `dir` can be written (it does not exist, or is an empty folder, or `force` is
 * set), creates missing parent folders and the staging folder, and starts the manifest with
 * "command", "frictionlab" (version, git revision), "libraries", "compiler", "machine" and
 * "date". `command` is the sub-command's name ("solve"). Errors: FL_ERR_IO (message names the
 * folder and the system error), FL_ERR_INVAL (dir exists and is not empty, without force:
 * message says to pass --force or choose another folder), FL_ERR_NOMEM. On error *out is NULL
 * and nothing is left on disk but parent folders that were created. */
int fl_results_begin(const char *dir, const char *command, int force, fl_results **out);

/* A default results folder: "<prefix>-<YYYYmmdd-HHMMSS>" in local time, with "-2", "-3", ...
 * appended while that path exists (two runs in the same second). Writes at most n bytes to buf
 * (the caller's). */
void fl_results_default_dir(const char *prefix, char *buf, size_t n);

/* The staging folder (where files go until commit) and the final target folder. */
const char *fl_results_staging(const fl_results *r);
const char *fl_results_target(const fl_results *r);

/* The manifest being built (a cJSON object owned by r): add keys with cJSON calls before
 * commit. */
struct cJSON *fl_results_manifest(fl_results *r);

/* Adds the resolved options of a solver to manifest "solvers"[name] (from
 * fl_solver_options_json). Returns FL_OK, FL_ERR_FORMAT if the solver's JSON does not parse
 * (message names the solver), FL_ERR_NOMEM. */
int fl_results_add_solver(fl_results *r, const fl_solver *s);

/* Opens `name` (a plain file name such as "steps.csv") for writing inside the staging folder.
 * The stream is owned by r and closed by commit/abort; do not fclose it. Opening the same
 * name twice returns the same stream. NULL on error (FL_ERR_IO naming the file). */
FILE *fl_results_file(fl_results *r, const char *name);

/* Writes manifest.json, closes every file (checking for write errors), and renames the staging
 * folder to the target. With force, an existing target is removed first. On error the staging
 * folder is removed and the error (FL_ERR_IO naming the file) returned. Frees r either way. */
int fl_results_commit(fl_results *r);

/* Removes the staging folder and frees r. NULL-safe. */
void fl_results_abort(fl_results *r);

/*---- the CSV writer (harness/output/csv.c): every CSV the commands write ----*/

/* Writes `s` as one CSV field (quoted when it holds a comma, quote or newline): the one
 * quoting rule, for header cells and text cells alike. */
void fl_csv_str(FILE *f, const char *s);
/* Writes a number as a CSV field with 10 significant digits; NaN as "nan", infinities as
 * "inf"/"-inf". */
void fl_csv_num(FILE *f, double x);

/* A CSV declared once as a table of columns, from which both its header and its rows are
 * written: each column's name, the kind of its value and where that value lives in the row
 * (a byte offset into the row struct the caller passes). The tables of the commands' CSVs are
 * in harness/output/ (fl_run_csv.h). */
typedef enum fl_csv_kind {
  FL_CSV_REAL,  /* double at off, written by fl_csv_num */
  FL_CSV_REALS, /* const double * at off; element idx of that array, by fl_csv_num */
  FL_CSV_INT,   /* int at off, "%d" */
  FL_CSV_LONG,  /* long at off, "%ld" */
  FL_CSV_STR,   /* const char * at off (NULL: empty), quoted by fl_csv_str */
  FL_CSV_G4,    /* double at off, "%.4g" (bench.csv's ratios; NaN as printf writes it) */
  FL_CSV_G6,    /* double at off, "%.6g" (bench.csv's times) */
  FL_CSV_F0,    /* double at off, "%.0f" (a count held as a double: bytes, instructions) */
  FL_CSV_G,     /* double at off, "%.*g" with precision idx (a figure's "%.9g"; NaN as printf
                 * writes it) */
  FL_CSV_F,     /* double at off, "%.*f" with precision idx (a figure's "%.1f") */
  /* or'ed into any kind but FL_CSV_REALS, FL_CSV_G and FL_CSV_F: the cell is empty unless the
   * int at byte offset idx of the row is nonzero (a column that some rows leave empty, as
   * bench.csv's) */
  FL_CSV_IF = 0x100
} fl_csv_kind;
typedef struct fl_csv_col {
  const char *name; /* header cell, quoted by fl_csv_str's rule */
  fl_csv_kind kind;
  size_t off;       /* byte offset of the value in the row */
  int idx;          /* FL_CSV_REALS: the element; FL_CSV_G, FL_CSV_F: the precision; with
                     * FL_CSV_IF: the gate's offset; else 0 */
} fl_csv_col;
/* Writes the n column names, comma-separated, and a newline. */
void fl_csv_header(FILE *f, const fl_csv_col *c, int n);
/* Writes one row of the n columns read from `row`, comma-separated, and a newline. */
void fl_csv_row(FILE *f, const fl_csv_col *c, int n, const void *row);
/* Appends src[0..nsrc) to dst after its first n columns, adding base to each offset (a table
 * of a struct nested in the row at base); returns n + nsrc. dst holds at least that many. */
int fl_csv_cols_join(fl_csv_col *dst, int n, const fl_csv_col *src, int nsrc, size_t base);
/* The columns of one iteration record (iter,time,error,merit,momentum,objective,step_length,
 * inner_iters), with offsets into fl_iter_stat. */
#define FL_CSV_NITER 8
extern const fl_csv_col fl_csv_iter_cols[FL_CSV_NITER];
/* The columns of the common metrics (natmap,natmap_raw,momentum,signorini,cone,dual,
 * dissipation,penetration,bilateral), with offsets into fl_metrics. */
#define FL_CSV_NMETRICS 9
extern const fl_csv_col fl_csv_metrics_cols[FL_CSV_NMETRICS];
/* Sets every metric of fl_csv_metrics_cols to NaN (a row without metrics writes "nan"s). */
void fl_csv_metrics_nan(fl_metrics *m);

#ifdef __cplusplus
}
#endif
#endif /* FL_HARNESS_H */

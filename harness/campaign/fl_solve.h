// SPDX-License-Identifier: Apache-2.0
/* fl_solve.h: the `solve` campaign below its command (harness/cli/cmd_solve.c parses the
 * command line into fl_solve_args, plans the folder, calls these and prints the table).
 *
 *   solve_pair.c: one (problem, solver) pair: the solver made with the harness's defaults and
 *     the --set list, a problem loaded, solved from its guess, its steps.csv row and iters.csv
 *     rows, a manifest note when it has no answer, --save-solution's file; the same pair in a
 *     child process (--wall-limit, --mem-limit, plug-in solvers; guard.c);
 *   solve_camp.c: the campaign's pairs: labels, shards and the problems loaded, the results
 *     folder's files and manifest, the store of records and --resume, the serial pair loop
 *     (loop.c) and the MPI deal's callbacks (deal.c), --save-solution's folder.
 *
 * Messages start "frictionlab solve: " (profile runs solve too; `plan` sets a.cmd). */
#ifndef FL_SOLVE_H
#define FL_SOLVE_H
#if defined(FL_LAYER) && FL_LAYER < 6
#error "harness/campaign/fl_solve.h is in harness/, layer 6: a lower layer may not include it (docs/layers.md)"
#endif

#include <stdio.h>

#include "../cli/fl_settings.h"
#include "../fl_harness.h"
#include "fl_camp.h"

struct cJSON;

/* A solve campaign as the command line asked for it (cmd_solve.c fills it). */
typedef struct fl_solve_args {
  const char **inputs;
  int ninputs;
  char *solver_buf; /* owned copies of the --solver values, comma-split in place */
  const char **solvers;
  int nsolvers;
  const char **sets; /* the --set values as given (owned array, strings in argv) */
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
  const char *cmd; /* the command messages name; NULL: "solve" */
} fl_solve_args;

/*---- one pair (solve_pair.c) ----*/

/* The solvers, normalization and settings of a campaign as `solve` and `plan` take them: the
 * --solver values (a,b lists; none: every registered CPU solver), the --norm name (NULL:
 * fclib) and the --set values, checked and sorted into a (solvers, norm, sets, set). Returns 0;
 * 2 on a usage error, 1 when no solver is registered (message printed); -1 out of memory.
 * Free a with fl_solve_args_free. */
int fl_solve_choose(fl_solve_args *a, int nsolver_arg, const char *const *solver_arg, int nset,
                    const char *const *set, const char *norm);
/* Frees what a owns (NULL-safe members). */
void fl_solve_args_free(fl_solve_args *a);

/* Creates solver `name` through the run room (fl_run_solver) with the harness's defaults
 * (error_every=1, a's norm) and then every --set that applies to it. Returns 0; 2 on a bad
 * option or an unknown solver, 1 on another error (message printed). *out: fl_solver_destroy. */
int fl_solve_make_solver(const fl_solve_args *a, const char *name, fl_solver **out);
/* Loads one argument: an existing file is an FCLIB file, a bare name a built-in example.
 * FL_OK or the loader's error (message names the argument). */
int fl_solve_load(const char *arg, fl_problem **out);
/* 1 when solver `name` was added by a plug-in file (fl_plugin_load). */
int fl_solve_from_plugin(const char *name);
/* Whether the pairs run guarded, each in a child process: a limit was asked for, or a
 * plug-in's solver is among them (not over MPI ranks). */
int fl_solve_guarded(const fl_solve_args *a);
/* Pair (p, sname) solved (guarded when fl_solve_guarded) into its record (fl_camp_pack): *o
 * filled, *broke 1 when the solver failed. NULL when out of memory; free(). */
char *fl_solve_pair_run(const fl_solve_args *a, const char *sname, const char *label,
                        const fl_problem *p, fl_camp_outcome *o, int *broke);

/*---- the campaign's pairs (solve_camp.c) ----*/

/* Every source's label (an FCLIB file's stem or the example's name, "~2", "~3", ... when two
 * share one) and its shard (a's --shard), from the names alone: the nex examples, then
 * a->inputs. *labels (*nall strings) and *owner: fl_free. -1 when out of memory. */
int fl_solve_labels(const fl_solve_args *a, int nex, const char *const *examples,
                    char ***labels, int **owner, int *nall);
/* The problems of this shard: every source's label and shard (fl_solve_labels into
 * *all_labels, *owner, *nall), then each of this shard's sources (the nex examples, then
 * a->inputs) loaded into probs[*np] with its label (a copy) and source in[*np] (arrays of
 * nex + a->ninputs; over MPI ranks nothing is loaded here: each worker loads its own). A source
 * that cannot be loaded is reported; with --keep-going, or when it is of a kind FrictionLab
 * does not model, it is skipped and added to `skipped`. Returns 0, or -1 when a source stops
 * the run or none is left (message printed; what was loaded stays for the caller to free). */
int fl_solve_sources(const fl_solve_args *a, int nex, const char *const *examples,
                     fl_problem **probs, char **labels, const char **in, int *np,
                     struct cJSON *skipped, char ***all_labels, int **owner, int *nall);
/* --resume into an existing campaign folder (one with pairs/): it is replaced at the commit. */
int fl_solve_resumable(const fl_solve_args *a);
/* Rank 0: the store of per-pair records in res's staging folder, each pair named with its
 * settings hash; with --resume, the records of --out and of killed runs' staging folders
 * (*orphans, to remove once the new folder is in place) taken over (*resumed of them).
 * Returns 0 or -1 (message printed). */
int fl_solve_store(const fl_solve_args *a, fl_results *res, const char **in, char **labels,
                   int np, fl_pairs **store, char ***orphans, int *norphans, long *resumed);
/* --save-solution: creates <staging>/solutions and records where each problem came from. */
int fl_solve_save_dir(fl_solve_args *a, const fl_results *res, fl_problem **probs,
                      const char **in, int np);
/* Rank 0, once res is begun: --save-solution's folder (fl_solve_save_dir), steps.csv and
 * iters.csv with their headers (*steps, *iters: owned by res), and the manifest: every
 * solver's options, norm, ranks, the settings, the problems loaded, *skipped (taken: set to
 * NULL) and an empty "notes" (*notes). Returns 0 or -1 (message printed). */
int fl_solve_folder(fl_solve_args *a, fl_results *res, fl_problem **probs, char **labels,
                    const char **in, int np, struct cJSON **skipped, FILE **steps, FILE **iters,
                    struct cJSON **notes);
/* Serial: solves the np x nsolvers pairs the store lacks, each committed as it finishes, then
 * writes steps.csv, iters.csv, the notes and outs[] from the records in the serial order.
 * Returns the number of broken solves, or -1 (message printed). */
long fl_solve_pairs_stored(const fl_solve_args *a, fl_problem **probs, char **labels, int np,
                           FILE *steps, FILE *iters, struct cJSON *notes, fl_camp_outcome *outs,
                           fl_pairs *store);
/* Over MPI ranks (collective): rank 0 deals the pairs, largest problem first, as workers free
 * up (each worker loads the problem of its pair from in[]), commits each record as it arrives,
 * then writes the files as above and adds the problems to res's manifest. Returns the broken
 * solves (on every rank), or -1. */
long fl_solve_pairs_dealt(const fl_solve_args *a, fl_problem **probs, char **labels,
                          const char **in, int np, FILE *steps, FILE *iters, struct cJSON *notes,
                          fl_camp_outcome *outs, fl_pairs *store, fl_results *res);

#endif /* FL_SOLVE_H */

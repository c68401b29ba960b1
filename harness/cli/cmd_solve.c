// SPDX-License-Identifier: Apache-2.0
/* cmd_solve.c: `frictionlab solve [FILE|EXAMPLE]... --solver a,b --set key=value --out DIR`.
 *
 * Outline: parse the arguments; check every solver name and every option on a throw-away
 * handle of each solver; load every problem; only then create the results folder (so bad
 * input never leaves a folder behind); solve each problem with each solver on a fresh handle;
 * write steps.csv, iters.csv and manifest.json; commit the folder; print a table. The pairs'
 * work (one pair, a guarded child, the store, the MPI deal) is in harness/campaign/
 * (fl_solve.h): this file parses, plans, calls and prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../../core/fl_campaign.h"
#include "../campaign/fl_camp.h"
#include "../campaign/fl_solve.h"
#include "fl_args.h"
#include "../fl_harness.h"
#include "fl_settings.h"

#define EXIT_USAGE 2

/* One row of the summary: what happened to (problem, solver) (fl_camp.h). */
typedef fl_camp_outcome outcome;

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
static int fill_args(fl_solve_args *a, const fl_solve_job *j) {
  a->inputs = fl_calloc((size_t)j->ninputs + 1, sizeof *a->inputs);
  if (!a->inputs) return -1;
  for (int i = 0; i < j->ninputs; i++) a->inputs[a->ninputs++] = j->inputs[i];
  a->out = j->out;
  a->force = j->force;
  a->examples = j->examples;
  a->keep_going = j->keep_going;
  a->save_solution = j->save_solution;
  // the solvers, --norm and the --set list, as plan takes them too (solve_pair.c)
  int rc = fl_solve_choose(a, j->nsolver_arg, j->solver_arg, j->nset, j->set, j->norm);
  if (rc != 0) return rc;
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
  return 0;
}


/* The table: a converged row whose merit is above OWN_MODEL_MERIT is marked "own model": the
 * solver met its own test on its own (regularized) model, and the merit says how far that
 * answer is from the rigid law; a note under the table says so once. */
static void print_table(const fl_solve_args *a, char **labels, int np, const outcome *o) {
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
  fl_solve_args a;
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
  for (int j = 0; j < a.nsolvers; j++) a.guard_plugins |= fl_solve_from_plugin(a.solvers[j]);
  if (fl_solve_guarded(&a)) fl_camp_guard_begin(); // before any problem is loaded
  // SIGTERM, SIGINT from here on: loading goes on, then no pair starts and the folder is kept
  // (with the pairs a --resume took over) and marked interrupted
  fl_pairs_signals_on();

  // every solver and every option is checked before anything is loaded or written
  for (int j = 0; j < a.nsolvers; j++) {
    fl_solver *s = NULL;
    rc           = fl_solve_make_solver(&a, a.solvers[j], &s);
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
  if (fl_solve_sources(&a, nex, examples, probs, labels, in, &np, skipped, &all_labels, &owner,
                       &nall) < 0) {
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
  if (fl_results_begin(a.out, "solve", a.force || fl_solve_resumable(&a), &res) < 0) {
    fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
    status = 1;
    goto done;
  }
  if (fl_solve_folder(&a, res, probs, labels, in, np, &skipped, &steps, &iters, &notes) < 0) {
    status = 1;
    goto done;
  }
  if (fl_solve_store(&a, res, in, labels, np, &store, &orphans, &norphans, &resumed) < 0) {
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
                    ? fl_solve_pairs_dealt(&a, probs, labels, in, np, steps, iters, notes, outs,
                                        store, res)
                    : fl_solve_pairs_stored(&a, probs, labels, np, steps, iters, notes, outs, store);
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
  fl_solve_args_free(&a);
  fl_inputs_free(expanded, nexpanded);
  return status;
}

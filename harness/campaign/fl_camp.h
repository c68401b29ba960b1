// SPDX-License-Identifier: Apache-2.0
/* fl_camp.h: campaigns that outlive a batch job (docs/campaigns.md).
 *
 * A campaign is a list of (problem, solver) pairs. This module keeps it out of the commands:
 *   - identity: a pair is (problem label, solver name) and its settings hash, FNV-1a 64 over
 *     the solver's name, its resolved options (fl_solver_options_json) and the problem file's
 *     bytes (a built-in example: its name), so a resumed or collected pair is known to be the
 *     same computation;
 *   - a store: one record per finished pair, <folder>/pairs/<id>.json, written to a temporary
 *     name and renamed, so a kill loses at most the pair in progress;
 *   - signals: SIGTERM and SIGINT set a flag that the pair loop reads between pairs (a second
 *     signal kills as before);
 *   - shards: `--shard I/N` deals problems to N shards, largest first onto the least loaded
 *     (by file size), the same deal in every shard without loading anything;
 *   - progress lines on stderr when it is not a terminal;
 *   - a pair's record: its rows, notes and outcome as one JSON text (pack.c);
 *   - a pair in a child process, under a wall-time and an address-space limit (guard.c).
 */
#ifndef FL_CAMP_H
#define FL_CAMP_H
#if defined(FL_LAYER) && FL_LAYER < 6
#error "harness/campaign/fl_camp.h is in harness/, layer 6: a lower layer may not include it (docs/layers.md)"
#endif

#include <stdint.h>
#include <stdio.h>

#include "../../solvers/fl_solver.h"

struct cJSON;

/*---- identity ----*/

/* FNV-1a 64 of n bytes, continuing from h (start from FL_PAIRS_HASH0). */
#define FL_PAIRS_HASH0 0xcbf29ce484222325ULL
uint64_t fl_pairs_hash(uint64_t h, const void *data, size_t n);
/* The hash of a problem source: an existing file's bytes, else the text "example:" + src.
 * Returns FL_OK or FL_ERR_IO (message names the file). */
int fl_pairs_source_hash(const char *src, uint64_t *h);
/* The hash of a configured solver: its name and resolved options as JSON text. */
int fl_pairs_solver_hash(const fl_solver *s, uint64_t *h);
/* A hash as 16 hex digits and a NUL (buf of 17 bytes). */
void fl_pairs_hex(uint64_t h, char *buf);

/* The label `solve` gives a source before making it unique: an FCLIB file's stem, or the
 * example's name (what the loaded problem's name would be). Writes at most n bytes. */
void fl_pairs_label_base(const char *src, char *buf, size_t n);

/*---- shards ----*/

/* Parses "I/N" (0 <= I < N). Returns FL_OK or FL_ERR_INVAL (message names the text). */
int fl_pairs_parse_shard(const char *text, int *i, int *n);
/* A size estimate of a source in bytes (the file's size; a built-in example: 0). */
double fl_pairs_source_size(const char *src);
/* Deals np items of size[] to nshards: largest first onto the least loaded, ties to the lower
 * shard and the earlier item. owner[np] gets each item's shard. */
void fl_pairs_deal(int np, const double *size, int nshards, int *owner);
/* The labels `solve` gives its sources, the nex examples ex[] then in[] (nin): each one's
 * fl_pairs_label_base, with "~2", "~3", ... when two share one, so that every shard labels a
 * source as the whole campaign does; each one's size (fl_pairs_source_size) and shard of
 * nshards (fl_pairs_deal; 0 when nshards <= 1). lab, size and owner hold nex + nin; lab[k] is
 * fl_malloc'd (fl_free). FL_OK or FL_ERR_NOMEM (the labels made so far are set). */
int fl_pairs_labels(int nex, const char *const *ex, int nin, const char *const *in, int nshards,
                    char **lab, double *size, int *owner);

/*---- the store of finished pairs ----*/

typedef struct fl_pairs fl_pairs;

/* Opens the store of `dir` (creates dir/pairs) for npairs pairs. FL_OK, FL_ERR_IO, NOMEM. */
int fl_pairs_open(const char *dir, long npairs, fl_pairs **out);
/* Names pair k (strings are copied) with its settings hash. */
int fl_pairs_define(fl_pairs *ps, long k, const char *problem, const char *solver, uint64_t hash);
/* Takes over the finished pairs of an earlier folder `from` (a results folder or a staging
 * folder with pairs/): a record of pair k with the same problem, solver and settings hash is
 * linked (or copied) into this store and k marked done; with retry_failed, records of pairs
 * that failed (an error) are left to run again. *nstale (may be NULL) counts records of the
 * same pair under other settings (not taken). Returns the number taken, or a negative error. */
long fl_pairs_adopt(fl_pairs *ps, const char *from, int retry_failed, long *nstale);
/* Whether pair k has a record. */
int fl_pairs_done(const fl_pairs *ps, long k);
/* Commits pair k's record: `record` is a JSON object's text (the command's own content); it is
 * wrapped with the pair's identity and `broke` and made visible atomically. FL_OK or FL_ERR_IO. */
int fl_pairs_put(fl_pairs *ps, long k, const char *record, int broke);
/* Pair k's record text (fl_free), NULL when it has none or it is unreadable (error set). */
char *fl_pairs_get(const fl_pairs *ps, long k);
/* Number of pairs; of those with a record; of those that failed. */
long fl_pairs_npairs(const fl_pairs *ps);
long fl_pairs_ndone(const fl_pairs *ps);
long fl_pairs_nfailed(const fl_pairs *ps);
void fl_pairs_close(fl_pairs *ps);

/* Finished pairs of a staging folder of `target` left by a dead process of this host (killed
 * without a chance to leave its folder): their paths, for fl_pairs_adopt and removal after a
 * commit. *out: n strings (fl_free each, then the array). FL_OK or FL_ERR_NOMEM. */
int fl_pairs_orphans(const char *target, char ***out, int *n);
/* Removes a folder tree (the orphans once taken over). */
int fl_pairs_rmtree(const char *path);

/*---- the pair loop ----*/

/* A campaign's pairs as the command solves them: run(ctx, k, &broke) solves pair k and returns
 * its record (a JSON object's text, malloc'd; NULL: out of memory) and whether it failed. */
typedef struct fl_camp_loop {
  const char *label; /* the command, for progress lines ("solve") */
  long npairs;
  fl_pairs *store;   /* pairs it holds already (resumed) are skipped */
  char *(*run)(void *ctx, long k, int *broke);
  void *ctx;
} fl_camp_loop;

/* Runs every pair the store lacks, in order, committing each as it finishes; between pairs it
 * stops when a signal arrived (fl_pairs_signalled; install the handlers first). Progress goes
 * to stderr: the bar on a terminal, lines otherwise. Returns the number of pairs run, or a
 * negative error (a record that could not be written: message set). */
long fl_camp_run(const fl_camp_loop *loop);

/* The dynamic deal under MPI (deal.c): rank 0 hands out pairs in `order` (largest first) as
 * ranks free up and commits each pair's record as it arrives; ranks 1..N-1 solve what they are
 * given. Collective. work(ctx, k, &broke, info, ninfo, &skip) on a worker solves pair k and
 * returns its record (malloc'd), or sets skip (its problem could not be loaded; info holds the
 * message) and returns NULL; info (one line) travels to rank 0's got(ctx, k, info, skip), which
 * returns < 0 to stop dealing (the run fails). skipped(ctx, k) on rank 0 says pair k is not to
 * be dealt (its problem was skipped). Signals (fl_pairs_signals_on on every rank) stop the
 * dealing after the pairs in progress. Returns, on every rank, the number of pairs done in the
 * store (rank 0's count), or a negative error when the deal broke down or got() refused. */
typedef struct fl_camp_deal {
  const char *label;
  long npairs;
  fl_pairs *store;   /* rank 0 */
  const long *order; /* rank 0: npairs indices */
  char *(*work)(void *ctx, long k, int *broke, char *info, size_t ninfo, int *skip);
  int (*got)(void *ctx, long k, const char *info, int skip);
  int (*skipped)(void *ctx, long k);
  void *ctx;
} fl_camp_deal;
long fl_camp_deal_run(const fl_camp_deal *d);
/* The deal's order of npairs pairs (pair k belongs to problem k / nsolvers): by their problem's
 * size[] (fl_pairs_source_size), largest first, ties in the serial order. order: npairs. */
void fl_camp_order_by_size(const double *size, int nsolvers, long npairs, long *order);

/* Writes the campaign's state: "campaign" in the manifest `man` and campaign.json in `dir`:
 * state ("complete", or "interrupted" with the signal), pairs, done, failed, resumed, shard,
 * and "order": the labels of every problem of the whole campaign (all shards), in order, by
 * which `collect` puts shards' rows back in the serial order.
 * FL_OK or FL_ERR_IO. */
int fl_camp_state(const char *dir, struct cJSON *man, const fl_pairs *ps, long resumed,
                  int sig, int shard_i, int shard_n, char *const *labels, int nlabels);

/*---- a solve campaign's costs, read back (costs.c): what `profile` ranks ----*/

/* The distinct strings of a column (problems or solvers), in order of appearance. */
typedef struct fl_camp_names {
  char **s;
  int n, cap;
} fl_camp_names;
void fl_camp_names_free(fl_camp_names *nm);
/* Reads a solve folder `dir`: steps.csv names the pairs (probs x solvers, filled in order of
 * appearance), iters.csv gives each pair's cost by time (s) and by iterations to its first
 * record whose merit is <= tol: *ctime and *citer, probs->n x solvers->n, row-major by
 * problem (fl_free); INFINITY for a pair never below tol. FL_OK, FL_ERR_IO, FL_ERR_FORMAT
 * (message names the file and row), FL_ERR_NOMEM. fl_perf_profile (fl_harness.h) is here too. */
int fl_camp_read_costs(const char *dir, double tol, fl_camp_names *probs,
                       fl_camp_names *solvers, double **ctime, double **citer);

/* `frictionlab collect DIR... --out DIR` (collect.c). */
int fl_cmd_collect(int argc, char **argv);
/* `frictionlab plan PROBLEMS... --solver ...` (plan.c). */
int fl_cmd_plan(int argc, char **argv);

/*---- signals ----*/

/* Installs SIGTERM and SIGINT handlers that only record the signal; a second one restores the
 * default action and re-raises it. */
void fl_pairs_signals_on(void);
/* The signal received since fl_pairs_signals_on, 0 when none. */
int fl_pairs_signalled(void);
/* Restores the previous handlers. */
void fl_pairs_signals_off(void);

/*---- progress lines ----*/

/* When stderr is not a terminal: a line "LABEL: D/T pairs done, F failed, E elapsed, ~L left"
 * at most every `every` seconds (FL_PROGRESS_EVERY overrides; <= 0 turns them off) and one at
 * the end. On a terminal nothing (the bar of fl_progress is drawn instead). */
typedef struct fl_pairs_progress {
  const char *label;
  long total, skipped;
  double t0, last, every;
  int on;
} fl_pairs_progress;
void fl_pairs_progress_begin(fl_pairs_progress *p, const char *label, long total, long skipped);
void fl_pairs_progress_update(fl_pairs_progress *p, long done, long failed);
void fl_pairs_progress_end(fl_pairs_progress *p, long done, long failed);

/*---- a pair's record: its rows, notes and outcome as one text (pack.c) ----*/

/* What happened to one (problem, solver) pair: the row of solve's summary table. The strings
 * are static (names of reasons and errors). */
typedef struct fl_camp_outcome {
  const char *status; /* "returned" (an answer; how good, the merit says), "unsupported", "error" */
  const char *reason; /* reason name or error name */
  int code;           /* reason or error code */
  int iters;
  double solve_s, natmap, merit;
  double own;         /* the solver's own residual at its answer (its model, maybe regularized) */
} fl_camp_outcome;

/* One pair's output as one JSON text: its rows of steps.csv and iters.csv (NULL: none), its
 * manifest notes (a JSON array, referenced, not taken), its outcome and whether the solver
 * broke. Non-finite numbers travel as strings ("inf", "nan"), since JSON has none. This is
 * what a pair's record holds, what an MPI worker sends rank 0 and what a guarded pair's child
 * sends its parent. Returns a malloc'd text (free()), NULL when out of memory. */
char *fl_camp_pack(const char *steps, const char *iters, struct cJSON *notes,
                   const fl_camp_outcome *o, int broke);
/* The reverse: appends the rows to steps and iters, copies the notes into `notes` and fills
 * *o (its strings static again: a reason's name is looked up from its code). Returns broke (0
 * or 1), or -1 when the text is malformed. */
int fl_camp_unpack(const char *txt, FILE *steps, FILE *iters, struct cJSON *notes,
                   fl_camp_outcome *o);

/* Runs solve(ctx, steps, iters, notes, o) with its rows written into memory and packs what it
 * wrote with its outcome *o (fl_camp_pack): one pair's record, for the store, an MPI worker's
 * result or a guarded child's message. *broke gets solve's return (not set when out of
 * memory). Returns a malloc'd text (free()), NULL when out of memory. */
char *fl_camp_pack_run(int (*solve)(void *ctx, FILE *steps, FILE *iters, struct cJSON *notes,
                                    fl_camp_outcome *o),
                       void *ctx, fl_camp_outcome *o, int *broke);
/* The folder's rows from the store's records in the serial order: pair k's record unpacked into
 * steps, iters, notes and outs[k] (npairs of them); a pair without one (interrupted before it
 * ran) is NOT_RUN in outs. Returns the number of broken pairs, or -1 (an unreadable or malformed
 * record: a message "frictionlab LABEL: pair K: ..." printed). */
long fl_camp_write_records(const char *label, fl_pairs *store, long npairs, FILE *steps,
                           FILE *iters, struct cJSON *notes, fl_camp_outcome *outs);

/*---- a pair in a child process: --wall-limit, --mem-limit, plug-in solvers (guard.c) ----*/

/* How a guarded child ended. */
typedef enum fl_camp_child_end {
  FL_CAMP_CHILD_SENT,   /* it sent its text and exited 0: *text holds it */
  FL_CAMP_CHILD_KILLED, /* past the wall limit: its process group was killed */
  FL_CAMP_CHILD_ENDED,  /* it died or exited without sending: *wstatus as waitpid gave it */
  FL_CAMP_CHILD_NOPIPE, /* no pipe could be made (nothing ran) */
  FL_CAMP_CHILD_NOFORK  /* no child could be forked (nothing ran) */
} fl_camp_child_end;

/* Runs make(ctx) in a child process (its own process group, killed with the parent) whose wall
 * time is bounded by wall_limit_s (<= 0: none) and whose address space may grow by
 * mem_limit_gb gigabytes beyond the parent's at the fork (<= 0: no limit); the child writes
 * the text make returns through a pipe and exits without the parent's atexit handlers. The
 * parent's buffered output is flushed first. On SENT, *text is a NUL-terminated malloc'd text
 * (the caller frees it); otherwise *text is NULL. */
fl_camp_child_end fl_camp_guard_run(double wall_limit_s, double mem_limit_gb,
                                    char *(*make)(void *ctx), void *ctx, char **text,
                                    int *wstatus);
/* What a guarded child's end means for its pair when it sent no text. */
typedef struct fl_camp_verdict {
  const char *reason; /* "WALL_LIMIT" (past --wall-limit, asked for) or "CRASHED" */
  int code;           /* FL_DIVERGED_TIME_LIMIT or FL_ERR_IO */
  int broke;          /* 1: a failure of the pair (CRASHED), 0: the limit asked for */
  char msg[160];      /* one sentence: why */
} fl_camp_verdict;
/* Fills *v for an end other than SENT (wall_limit_s and mem_limit_gb as given to
 * fl_camp_guard_run, named in the message) and returns 1; returns 0 on SENT (the caller
 * unpacks the text). */
int fl_camp_guard_verdict(fl_camp_child_end end, int wstatus, double wall_limit_s,
                          double mem_limit_gb, fl_camp_verdict *v);
/* OpenMP's thread pool does not survive fork(): call this in the parent before anything is
 * loaded when pairs will run guarded (parallel regions inactive from here on; each child gets
 * them back). */
void fl_camp_guard_begin(void);

#endif

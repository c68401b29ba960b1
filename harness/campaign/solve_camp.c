// SPDX-License-Identifier: Apache-2.0
/* solve_camp.c: the pairs of a `solve` campaign (fl_solve.h): labels, shards and the problems
 * loaded, the results folder's files and manifest, the store of records and --resume, the
 * serial pair loop and the MPI deal's callbacks, --save-solution's folder. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "../../core/fl_campaign.h"
#include "../output/fl_run_csv.h"
#include "fl_solve.h"

/* One row of the summary: what happened to (problem, solver) (fl_camp.h). */
typedef fl_camp_outcome outcome;


//---- campaigns: one record per pair, committed as it finishes (harness/campaign/) ----

typedef struct pair_ctx {
  const fl_solve_args *a;
  fl_problem **probs;
  char **labels;
  outcome *outs;
} pair_ctx;

/* fl_camp_loop's run: pair k solved (in a child process when guarded) into its packed text. */
static char *run_pair(void *vc, long k, int *broke) {
  pair_ctx         *c = vc;
  const fl_solve_args *a = c->a;
  int      i = (int)(k / a->nsolvers), j = (int)(k % a->nsolvers);
  return fl_solve_pair_run(a, a->solvers[j], c->labels[i], c->probs[i], &c->outs[k], broke);
}

/* Serial: solves the pairs the store lacks, each committed as it finishes, then writes the
 * folder's files from the records in the serial order. Returns the number of broken solves, or
 * -1 (message printed). */
long fl_solve_pairs_stored(const fl_solve_args *a, fl_problem **probs, char **labels, int np,
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
  const fl_solve_args *a;
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
  const fl_solve_args *a = c->a;
  int               i = (int)(k / a->nsolvers);
  if (c->cur != i) {
    if (c->cur >= 0) fl_problem_free(c->probs[c->cur]);
    if (c->cur >= 0) c->probs[c->cur] = NULL;
    c->cur = -1;
    if (fl_solve_load(c->in[i], &c->probs[i]) < 0) {
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
long fl_solve_pairs_dealt(const fl_solve_args *a, fl_problem **probs, char **labels,
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
int fl_solve_save_dir(fl_solve_args *a, const fl_results *res, fl_problem **probs,
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


/* Every source's label (an FCLIB file's stem or the example's name, with "~2", "~3", ... when
 * two share one) and its shard: computed from the names alone, so that a shard loads only its
 * own problems and labels them as the whole campaign does. -1 when out of memory. */
int fl_solve_labels(const fl_solve_args *a, int nex, const char *const *examples,
                    char ***labels, int **owner, int *nall) {
  int     nin  = nex + a->ninputs;
  char  **lab  = fl_calloc((size_t)nin + 1, sizeof *lab);
  int    *own  = fl_calloc((size_t)nin + 1, sizeof *own);
  double *size = fl_calloc((size_t)nin + 1, sizeof *size);
  *labels = lab;
  *owner  = own;
  *nall   = lab ? nin : 0;
  int rc = lab && own && size ? fl_pairs_labels(nex, examples, a->ninputs, a->inputs,
                                                 a->shard_n, lab, size, own)
                               : -1;
  fl_free(size);
  return rc < 0 ? -1 : 0;
}


/* --resume into an existing campaign folder (one with pairs/): it is replaced at the commit. */
int fl_solve_resumable(const fl_solve_args *a) {
  char        path[4200];
  struct stat st;
  snprintf(path, sizeof path, "%s/pairs", a->out);
  return a->resume && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}


/* Rank 0 of a serial campaign: the store of per-pair records in the staging folder, each pair
 * named with its settings hash; with --resume, the records of --out and of killed runs'
 * staging folders of it (*orphans, removed once the new folder is in place) taken over.
 * Returns 0 or -1 (message printed). */
int fl_solve_store(const fl_solve_args *a, fl_results *res, const char **in, char **labels,
                   int np, fl_pairs **store, char ***orphans, int *norphans,
                   long *resumed) {
  long      npairs = (long)np * a->nsolvers;
  uint64_t *sh     = fl_calloc((size_t)a->nsolvers + 1, sizeof *sh);
  int       rc     = sh ? fl_pairs_open(fl_results_staging(res), npairs, store)
                        : fl_seterr(FL_ERR_NOMEM, "out of memory");
  for (int j = 0; rc >= 0 && j < a->nsolvers; j++) {
    fl_solver *s = NULL;
    rc = fl_solve_make_solver(a, a->solvers[j], &s) != 0 ? fl_seterr(FL_ERR_NOMEM, "out of memory")
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


/* Rank 0, once the folder is begun: --save-solution's folder, steps.csv and iters.csv with
 * their headers, and the manifest: options of every solver, the problems, the settings. */
int fl_solve_folder(fl_solve_args *a, fl_results *res, fl_problem **probs, char **labels,
                    const char **in, int np, cJSON **skipped, FILE **steps, FILE **iters,
                    cJSON **notes) {
  if (a->save_solution && fl_solve_save_dir(a, res, probs, in, np) < 0) {
    fprintf(stderr, "frictionlab solve: --save-solution: %s\n", fl_errmsg());
    return -1;
  }
  *steps = fl_results_file(res, "steps.csv");
  *iters = fl_results_file(res, "iters.csv");
  if (!*steps || !*iters) {
    fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
    return -1;
  }
  fl_csv_col sc[FL_SOLVE_STEPS_NCOLS], ic[FL_ITERS_NCOLS];
  fl_solve_steps_cols(sc);
  fl_csv_header(*steps, sc, FL_SOLVE_STEPS_NCOLS);
  fl_iters_cols(ic, 1);
  fl_csv_header(*iters, ic, FL_ITERS_NCOLS);

  cJSON *man = fl_results_manifest(res);
  for (int j = 0; j < a->nsolvers; j++) {
    fl_solver *s = NULL;
    if (fl_solve_make_solver(a, a->solvers[j], &s) != 0 || fl_results_add_solver(res, s) < 0) {
      fprintf(stderr, "frictionlab solve: %s\n", fl_errmsg());
      fl_solver_destroy(s);
      return -1;
    }
    fl_solver_destroy(s);
  }
  cJSON_AddStringToObject(man, "norm", a->norm_name);
  if (a->save_solution) cJSON_AddStringToObject(man, "solutions", "solutions");
  cJSON_AddNumberToObject(man, "ranks", fl_campaign_size());
  cJSON *jsets = cJSON_AddArrayToObject(man, "settings");
  for (int k = 0; k < a->nsets; k++)
    cJSON_AddItemToArray(jsets, cJSON_CreateString(a->sets[k]));
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
  cJSON_AddItemToObject(man, "skipped", *skipped);
  *skipped = NULL; // owned by the manifest now
  *notes   = cJSON_AddArrayToObject(man, "notes");
  return 0;
}


/* The problems of this shard (fl_solve.h). */
int fl_solve_sources(const fl_solve_args *a, int nex, const char *const *examples,
                     fl_problem **probs, char **labels, const char **in, int *np, cJSON *skipped,
                     char ***all_labels, int **owner, int *nall) {
  int rank = fl_campaign_rank(), nin = nex + a->ninputs;
  if (fl_solve_labels(a, nex, examples, all_labels, owner, nall) < 0) {
    fprintf(stderr, "frictionlab solve: out of memory\n");
    return -1;
  }
  for (int k = 0; k < nin; k++) {
    const char *src = k < nex ? examples[k] : a->inputs[k - nex];
    if ((*owner)[k] != a->shard_i) continue; // another shard's (--shard)
    // over MPI ranks each worker loads a problem when it is dealt one of its pairs
    if (fl_campaign_size() == 1 && fl_solve_load(src, &probs[*np]) < 0) {
      // a well-formed file of a kind FrictionLab does not model (rolling friction, ...) is
      // skipped and recorded like an unsupported solver; malformed input stops the run
      // unless --keep-going
      int unsupported = fl_errcode() == FL_ERR_UNSUPPORTED;
      if (rank == 0)
        fprintf(stderr, "frictionlab solve: %s%s\n", unsupported ? "skipped: " : "", fl_errmsg());
      if ((a->keep_going || unsupported) && fl_errcode() != FL_ERR_NOMEM) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "source", src);
        cJSON_AddStringToObject(o, "message", fl_errmsg());
        cJSON_AddItemToArray(skipped, o);
        continue;
      }
      return -1;
    }
    in[*np] = src;
    // its label, unique over every source given (fl_solve_labels)
    size_t len = strlen((*all_labels)[k]) + 1;
    labels[*np] = fl_malloc(len);
    (*np)++;
    if (!labels[*np - 1]) {
      fprintf(stderr, "frictionlab solve: out of memory\n");
      return -1;
    }
    memcpy(labels[*np - 1], (*all_labels)[k], len);
  }
  if (*np == 0 && a->shard_n > 1) {
    fprintf(stderr, "frictionlab solve: shard %d/%d: no problem was dealt to it (%d problem(s) "
                    "for %d shards)\n", a->shard_i, a->shard_n, nin, a->shard_n);
    return -1;
  }
  if (*np == 0) {
    fprintf(stderr, "frictionlab solve: none of the %d problem(s) could be loaded\n", nin);
    return -1;
  }
  return 0;
}

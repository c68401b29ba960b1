// SPDX-License-Identifier: Apache-2.0
/* check_cases.h: what `frictionlab check` runs and how it judges a record (docs/check.md): the
 * case table and the quantities' floors (check_cases.c), the comparison of a record with its
 * baseline (check_judge.c). harness/cli/check.c is the command. Internal to harness/. */
#ifndef FL_CHECK_CASES_H
#define FL_CHECK_CASES_H
#if defined(FL_LAYER) && FL_LAYER < 6
#error "harness/check/check_cases.h is in harness/, layer 6: a lower layer may not include it (docs/layers.md)"
#endif

#include <stddef.h>

#include "../fl_harness.h"
#include "check_impl.h"
#include "../verify/fl_verify.h"

struct cJSON;

//---- the table (check_cases.c) ----

/* A recorded quantity: its name in the baseline and its tolerance floors (rel, abs), what is
 * allowed when two builds agree exactly; rel INFINITY: informative, never compared. */
typedef struct check_quantity {
  const char *name;
  double rel, abs;
} check_quantity;
extern const check_quantity fl__check_q[NQ]; /* in the record's order (check_impl.h) */

/* A row of the case table: a canonical scene run with settings for a number of steps, every
 * registered CPU solver on it, with per-solver options (applied before --set). The row "*"
 * holds what every scene gets; a scene without a row of its own runs as it is. */
enum { CHECK_MAXOPTS = 4 };
typedef struct check_case {
  const char *scene; /* a canonical scene, or "*" */
  const char *set;   /* the scene's settings "k=v,k=v", or NULL */
  int steps;         /* 0: the "*" row's */
  const char *opts[CHECK_MAXOPTS][2]; /* {solver, "k=v,k=v"} */
} check_case;

/* A canonical scene's settings ("" for none) and steps. */
const char *fl__check_scene_set(const char *scene);
int fl__check_scene_steps(const char *scene);
/* The options of solver on scene (the "*" row's, then the scene's), comma-joined into buf. */
const char *fl__check_solver_opts(const char *scene, const char *solver, char *buf, size_t n);

/* the quick verify suite's CPU solvers (peers are not FrictionLab's to check) */
extern const char fl__check_verify_solvers[];
/* a scene file checked at its own duration beyond this many steps is cut, and says so */
enum { CHECK_FILE_MAXSTEPS = 100000 };

//---- judging (check_judge.c) ----

/* what a check run found; bar: the progress bar on the terminal, or NULL */
typedef struct check_tally {
  int regressions, changed, cases, missing;
  int quantities, regressed_cases; /* quantities compared; cases with a regression */
  fl_progress *bar;
} check_tally;

/* Starts a table row on stdout: clears the progress bar's line (drawn again at its next
 * update) when one is active. */
void fl__check_row_begin(const check_tally *t);
const char *fl__check_status_name(int status);
/* "no failed step", "fails some steps", "fails every step", or the status */
const char *fl__check_outcome(const record *r, int steps);
/* Compares record r of a case with its baseline bs (one solver's entry) and prints what
 * moved. cut: --set lowered the solver's iteration budget (fewer iterations are the cut). */
void fl__check_compare(const char *label, const char *solver, const struct cJSON *bs,
                       const record *r, int steps, int cut, check_tally *t);
/* Whether --set lowers solver's iteration budget (max_iter, or solver.max_iter). */
int fl__check_budget_cut(const char *solver, int nset, char **set);
/* Adds the tolerance object of a new record to o: the floors widened by the spread against
 * `other` (the same case recorded by another build, or NULL), and that spread. */
void fl__check_add_tolerance(struct cJSON *o, const record *r, const struct cJSON *other);
/* Prints what a recording should not hide: a solver failing every step, a last step far from
 * converged, the scene's limits crossed. */
void fl__check_warn_record(const char *label, const char *solver, const record *r, int steps);

/* The quick verify suite against verify.json: per row the verdict and the error of every
 * quantity. update: record into `solvers`; else compare with base. */
typedef struct check_verify_ctx {
  int update;
  struct cJSON *solvers;    /* the record being written (update) */
  const struct cJSON *base; /* the recorded one (compare) */
  check_tally *t;
  int rows;
} check_verify_ctx;
int fl__check_verify_row(void *ctx, const fl_verify_row *r); /* an fl_verify_row_fn */
/* the rule verify_row applies, as the record states it */
extern const char fl__check_verify_rule[];

#endif /* FL_CHECK_CASES_H */

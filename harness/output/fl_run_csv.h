// SPDX-License-Identifier: Apache-2.0
/* fl_run_csv.h: the columns of steps.csv and iters.csv (run and solve), declared once: the row
 * structs the commands fill and the column tables (fl_csv_col, fl_harness.h) from which both
 * the header and the rows are written. A new column is one field here and one table entry in
 * run_csv.c. */
#ifndef FL_RUN_CSV_H
#define FL_RUN_CSV_H

#include "../../sim/fl_world.h"
#include "../fl_harness.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One row of run's steps.csv: step k of one solver (times in s, as fl_step_info). */
typedef struct fl_run_step_row {
  long step;
  const char *solver;
  long pairs, nc, nh;
  int iters, reason;
  const char *reason_name;
  double solve_s, collide_s, assemble_s, collide_cpu_s, assemble_cpu_s;
  int warm_matched;
  double error;
  fl_metrics met;
  const double *obs; /* the world's observables (fl_world_nobs), in its order */
  const char *flags;
} fl_run_step_row;

/* Index of the first observable's column in fl_run_steps_cols' table. */
#define FL_RUN_STEPS_OBS0 (15 + FL_CSV_NMETRICS)

/* steps.csv's columns for world w: step ... error, the metrics, one per observable (its name
 * cut at 40 characters) and flags (*ncols of them); and in *obs observables.csv's: step, solver
 * and the observables (*nobs_cols), read from the same fl_run_step_row. One allocation (the
 * names and *obs included) that the caller frees with fl_free. NULL when out of memory. */
fl_csv_col *fl_run_steps_cols(const fl_world *w, int *ncols, const fl_csv_col **obs,
                              int *nobs_cols);

/* One row of iters.csv: run's step or solve's problem, the solver and one iteration record. */
typedef struct fl_iters_row {
  long step;
  const char *problem;
  const char *solver;
  fl_iter_stat st;
} fl_iters_row;

#define FL_ITERS_NCOLS (2 + FL_CSV_NITER)

/* iters.csv's columns into c[FL_ITERS_NCOLS]: "step" (by_problem 0) or "problem" (1), then
 * "solver" and the record's (fl_csv_iter_cols). */
void fl_iters_cols(fl_csv_col *c, int by_problem);

#ifdef __cplusplus
}
#endif
#endif /* FL_RUN_CSV_H */

// SPDX-License-Identifier: Apache-2.0
/* fl_run_csv.h: the columns of every CSV the commands write, declared once: the row structs
 * the commands fill and the column tables (fl_csv_col, fl_harness.h) from which both the header
 * and the rows are written (run's and solve's steps.csv, iters.csv, observables.csv; bench.csv
 * of both bench modes; profile's costs.csv and profiles; plan's pairs). A new column is one
 * field here and one table entry in run_csv.c. */
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

/* One row of solve's steps.csv: one (problem, solver) pair. */
typedef struct fl_solve_step_row {
  const char *problem, *solver;
  const char *kind; /* "local" or "global" */
  long nc, nv, nh;
  const char *status, *reason; /* fl_camp_outcome's */
  double iterations;           /* NaN: no answer */
  int reason_code;
  double solve_s, setup_s, monitor_s, error, merit; /* fl_result's (s); NaN: no answer */
  long history_lost;
  fl_metrics met; /* of the answer; NaN when not measured (fl_csv_metrics_nan) */
} fl_solve_step_row;

#define FL_SOLVE_STEPS_NCOLS (16 + FL_CSV_NMETRICS)

/* solve's steps.csv columns into c[FL_SOLVE_STEPS_NCOLS]: problem ... history_lost, then the
 * metrics. */
void fl_solve_steps_cols(fl_csv_col *c);

/* One row of bench.csv (`bench PROBLEM`): a stage of the step (collide, assemble, a deformable
 * body's share) or a solver on the problem. Times in s. The has_* gates say which cells the
 * row fills (0: empty). */
typedef struct fl_bench_row {
  const char *problem, *what; /* what: the stage or the solver */
  int reps, nbody, nc, nv, iterations;
  const char *reason; /* NULL: empty */
  double min_s, median_s, min_per_iter_s, median_per_iter_s, ratio_median, ratio_per_iter;
  double device_per_iter_s, device_GBps, merit, penetration_m;
  int has_nc;     /* nc */
  int has_times;  /* min_s, median_s */
  int has_solve;  /* iterations, the per-iteration times, the ratios, merit, penetration_m */
  int has_device; /* device_per_iter_s, device_GBps (a GPU solver's kernels) */
} fl_bench_row;

#define FL_BENCH_NCOLS 18
extern const fl_csv_col fl_bench_cols[FL_BENCH_NCOLS];

/* One row of bench.csv (`bench --steps`): one solver or peer stepping the scene; the stage
 * times are the medians over repetitions of the mean per step (s), the instructions per step
 * from callgrind. */
#define FL_BENCH_NSTAGE 6 /* collide, assemble, setup, solve, integrate, other */
#define FL_BENCH_NINSTR 5 /* collide, assemble, setup, solve, other */
typedef struct fl_bench_steps_row {
  const char *problem, *solver;
  long steps;
  int reps;
  double nc_mean, iters_mean, step_min_s, step_median_s;
  double stage_s[FL_BENCH_NSTAGE];
  double pen_max, instr_per_step, ratio_median, ratio_instr;
  double instr[FL_BENCH_NINSTR];
  double ls_evals_mean;
  int has_instr;                   /* instr_per_step */
  int has_ratio_instr;             /* ratio_instr */
  int has_stage[FL_BENCH_NINSTR]; /* instr[k] */
  int has_ls;                      /* ls_evals_mean */
} fl_bench_steps_row;

#define FL_BENCH_STEPS_NCOLS (13 + FL_BENCH_NSTAGE + FL_BENCH_NINSTR)
extern const fl_csv_col fl_bench_steps_cols[FL_BENCH_STEPS_NCOLS];

/* One row of profile's costs.csv: a (problem, solver) pair's cost; time_s and iterations are
 * infinite when the solver did not solve the problem. */
typedef struct fl_cost_row {
  const char *problem, *solver;
  int solved;
  double time_s, iterations;
} fl_cost_row;

#define FL_COST_NCOLS 5
extern const fl_csv_col fl_cost_cols[FL_COST_NCOLS];

/* One row of profile's profile_time.csv or profile_iters.csv: tau and, for solver s, the
 * fraction of problems solved within tau of the best, rho[s * stride]. */
typedef struct fl_profile_row {
  double tau;
  const double *rho;
} fl_profile_row;

/* The profile's columns into c[1 + ns]: "tau" and one per solver, named names[s] (not copied). */
void fl_profile_cols(fl_csv_col *c, int ns, char *const *names, int stride);

/* One row of plan's table: one pair of the campaign. */
typedef struct fl_plan_row {
  long pair;
  const char *problem, *source, *solver;
  const char *settings_hash; /* 16 hex digits */
  double bytes;              /* the source's size (fl_pairs_source_size) */
  int shard;
} fl_plan_row;

#define FL_PLAN_NCOLS 7
extern const fl_csv_col fl_plan_cols[FL_PLAN_NCOLS];

#ifdef __cplusplus
}
#endif
#endif /* FL_RUN_CSV_H */

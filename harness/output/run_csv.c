// SPDX-License-Identifier: Apache-2.0
/* run_csv.c: the column tables of steps.csv and iters.csv (fl_run_csv.h). */

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "fl_run_csv.h"

#define S(m) offsetof(fl_run_step_row, m)
static const fl_csv_col steps_head[] = {
  {"step", FL_CSV_LONG, S(step), 0},
  {"solver", FL_CSV_STR, S(solver), 0},
  {"pairs", FL_CSV_LONG, S(pairs), 0},
  {"nc", FL_CSV_LONG, S(nc), 0},
  {"nh", FL_CSV_LONG, S(nh), 0},
  {"iters", FL_CSV_INT, S(iters), 0},
  {"reason", FL_CSV_INT, S(reason), 0},
  {"reason_name", FL_CSV_STR, S(reason_name), 0},
  {"solve_s", FL_CSV_REAL, S(solve_s), 0},
  {"collide_s", FL_CSV_REAL, S(collide_s), 0},
  {"assemble_s", FL_CSV_REAL, S(assemble_s), 0},
  {"collide_cpu_s", FL_CSV_REAL, S(collide_cpu_s), 0},
  {"assemble_cpu_s", FL_CSV_REAL, S(assemble_cpu_s), 0},
  {"warm_matched", FL_CSV_INT, S(warm_matched), 0},
  {"error", FL_CSV_REAL, S(error), 0}};
#define NHEAD ((int)(sizeof steps_head / sizeof steps_head[0]))
_Static_assert(NHEAD + FL_CSV_NMETRICS == FL_RUN_STEPS_OBS0, "FL_RUN_STEPS_OBS0");


fl_csv_col *fl_run_steps_cols(const fl_world *w, int *ncols, const fl_csv_col **obs,
                              int *nobs_cols) {
  int nobs = (int)fl_world_nobs(w);
  int n = FL_RUN_STEPS_OBS0 + nobs + 1, no = 2 + nobs;
  fl_csv_col *c = fl_malloc((size_t)(n + no) * sizeof *c + (size_t)nobs * 41 + 1);
  if (!c) return NULL;
  char *names = (char *)(c + n + no);
  memcpy(c, steps_head, sizeof steps_head);
  fl_csv_cols_join(c, NHEAD, fl_csv_metrics_cols, FL_CSV_NMETRICS, S(met));
  for (int i = 0; i < nobs; i++) {
    char *nm = names + (size_t)i * 41;
    snprintf(nm, 41, "%.40s", fl_world_obs_name(w, i));
    c[FL_RUN_STEPS_OBS0 + i] = (fl_csv_col){nm, FL_CSV_REALS, S(obs), i};
  }
  c[n - 1] = (fl_csv_col){"flags", FL_CSV_STR, S(flags), 0};
  // observables.csv: step, solver and the observables, the same columns
  fl_csv_cols_join(c + n, fl_csv_cols_join(c + n, 0, c, 2, 0), c + FL_RUN_STEPS_OBS0, nobs, 0);
  *ncols = n;
  *obs = c + n;
  *nobs_cols = no;
  return c;
}
#undef S


void fl_iters_cols(fl_csv_col *c, int by_problem) {
  static const fl_csv_col head[3] = {{"step", FL_CSV_LONG, offsetof(fl_iters_row, step), 0},
                                     {"problem", FL_CSV_STR, offsetof(fl_iters_row, problem), 0},
                                     {"solver", FL_CSV_STR, offsetof(fl_iters_row, solver), 0}};
  c[0] = head[by_problem ? 1 : 0];
  fl_csv_cols_join(c, fl_csv_cols_join(c, 1, head + 2, 1, 0), fl_csv_iter_cols, FL_CSV_NITER,
                   offsetof(fl_iters_row, st));
}

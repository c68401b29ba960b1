// SPDX-License-Identifier: Apache-2.0
/* run_csv.c: the column tables of the commands' CSVs (fl_run_csv.h). */

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


#define P(m) offsetof(fl_solve_step_row, m)
static const fl_csv_col solve_head[] = {
  {"problem", FL_CSV_STR, P(problem), 0},     {"solver", FL_CSV_STR, P(solver), 0},
  {"kind", FL_CSV_STR, P(kind), 0},           {"nc", FL_CSV_LONG, P(nc), 0},
  {"nv", FL_CSV_LONG, P(nv), 0},              {"nh", FL_CSV_LONG, P(nh), 0},
  {"status", FL_CSV_STR, P(status), 0},       {"iterations", FL_CSV_REAL, P(iterations), 0},
  {"reason", FL_CSV_STR, P(reason), 0},       {"reason_code", FL_CSV_INT, P(reason_code), 0},
  {"solve_s", FL_CSV_REAL, P(solve_s), 0},    {"setup_s", FL_CSV_REAL, P(setup_s), 0},
  {"monitor_s", FL_CSV_REAL, P(monitor_s), 0}, {"error", FL_CSV_REAL, P(error), 0},
  {"merit", FL_CSV_REAL, P(merit), 0},        {"history_lost", FL_CSV_LONG, P(history_lost), 0}};
_Static_assert(sizeof solve_head / sizeof solve_head[0] + FL_CSV_NMETRICS ==
                 FL_SOLVE_STEPS_NCOLS, "FL_SOLVE_STEPS_NCOLS");

void fl_solve_steps_cols(fl_csv_col *c) {
  int n = (int)(sizeof solve_head / sizeof solve_head[0]);
  memcpy(c, solve_head, sizeof solve_head);
  fl_csv_cols_join(c, n, fl_csv_metrics_cols, FL_CSV_NMETRICS, P(met));
}
#undef P


#define B(m) offsetof(fl_bench_row, m)
#define IF(k) ((k) | FL_CSV_IF)
const fl_csv_col fl_bench_cols[FL_BENCH_NCOLS] = {
  {"problem", FL_CSV_STR, B(problem), 0},
  {"what", FL_CSV_STR, B(what), 0},
  {"reps", FL_CSV_INT, B(reps), 0},
  {"nbody", FL_CSV_INT, B(nbody), 0},
  {"nc", IF(FL_CSV_INT), B(nc), B(has_nc)},
  {"nv", FL_CSV_INT, B(nv), 0},
  {"iterations", IF(FL_CSV_INT), B(iterations), B(has_solve)},
  {"reason", FL_CSV_STR, B(reason), 0},
  {"min_s", IF(FL_CSV_G6), B(min_s), B(has_times)},
  {"median_s", IF(FL_CSV_G6), B(median_s), B(has_times)},
  {"min_per_iter_s", IF(FL_CSV_G6), B(min_per_iter_s), B(has_solve)},
  {"median_per_iter_s", IF(FL_CSV_G6), B(median_per_iter_s), B(has_solve)},
  {"ratio_median", IF(FL_CSV_G4), B(ratio_median), B(has_solve)},
  {"ratio_per_iter", IF(FL_CSV_G4), B(ratio_per_iter), B(has_solve)},
  {"device_per_iter_s", IF(FL_CSV_G6), B(device_per_iter_s), B(has_device)},
  {"device_GBps", IF(FL_CSV_G6), B(device_GBps), B(has_device)},
  {"merit", IF(FL_CSV_G4), B(merit), B(has_solve)},
  {"penetration_m", IF(FL_CSV_G4), B(penetration_m), B(has_solve)}};
#undef B


#define T(m) offsetof(fl_bench_steps_row, m)
const fl_csv_col fl_bench_steps_cols[FL_BENCH_STEPS_NCOLS] = {
  {"problem", FL_CSV_STR, T(problem), 0},
  {"solver", FL_CSV_STR, T(solver), 0},
  {"steps", FL_CSV_LONG, T(steps), 0},
  {"reps", FL_CSV_INT, T(reps), 0},
  {"nc_mean", FL_CSV_G6, T(nc_mean), 0},
  {"iters_mean", FL_CSV_G6, T(iters_mean), 0},
  {"step_min_s", FL_CSV_G6, T(step_min_s), 0},
  {"step_median_s", FL_CSV_G6, T(step_median_s), 0},
  {"collide_s", FL_CSV_G6, T(stage_s[0]), 0},
  {"assemble_s", FL_CSV_G6, T(stage_s[1]), 0},
  {"setup_s", FL_CSV_G6, T(stage_s[2]), 0},
  {"solve_s", FL_CSV_G6, T(stage_s[3]), 0},
  {"integrate_s", FL_CSV_G6, T(stage_s[4]), 0},
  {"other_s", FL_CSV_G6, T(stage_s[5]), 0},
  {"pen_max", FL_CSV_G6, T(pen_max), 0},
  {"instr_per_step", IF(FL_CSV_F0), T(instr_per_step), T(has_instr)},
  {"ratio_median", FL_CSV_G4, T(ratio_median), 0},
  {"ratio_instr", IF(FL_CSV_G4), T(ratio_instr), T(has_ratio_instr)},
  {"instr_collide", IF(FL_CSV_F0), T(instr[0]), T(has_stage[0])},
  {"instr_assemble", IF(FL_CSV_F0), T(instr[1]), T(has_stage[1])},
  {"instr_setup", IF(FL_CSV_F0), T(instr[2]), T(has_stage[2])},
  {"instr_solve", IF(FL_CSV_F0), T(instr[3]), T(has_stage[3])},
  {"instr_other", IF(FL_CSV_F0), T(instr[4]), T(has_stage[4])},
  {"ls_evals_mean", IF(FL_CSV_G6), T(ls_evals_mean), T(has_ls)}};
#undef T
#undef IF


#define C(m) offsetof(fl_cost_row, m)
const fl_csv_col fl_cost_cols[FL_COST_NCOLS] = {
  {"problem", FL_CSV_STR, C(problem), 0},  {"solver", FL_CSV_STR, C(solver), 0},
  {"solved", FL_CSV_INT, C(solved), 0},    {"time_s", FL_CSV_REAL, C(time_s), 0},
  {"iterations", FL_CSV_REAL, C(iterations), 0}};
#undef C


void fl_profile_cols(fl_csv_col *c, int ns, char *const *names, int stride) {
  c[0] = (fl_csv_col){"tau", FL_CSV_REAL, offsetof(fl_profile_row, tau), 0};
  for (int s = 0; s < ns; s++)
    c[1 + s] = (fl_csv_col){names[s], FL_CSV_REALS, offsetof(fl_profile_row, rho), s * stride};
}


#define L(m) offsetof(fl_plan_row, m)
const fl_csv_col fl_plan_cols[FL_PLAN_NCOLS] = {
  {"pair", FL_CSV_LONG, L(pair), 0},     {"problem", FL_CSV_STR, L(problem), 0},
  {"source", FL_CSV_STR, L(source), 0},  {"solver", FL_CSV_STR, L(solver), 0},
  {"settings_hash", FL_CSV_STR, L(settings_hash), 0},
  {"bytes", FL_CSV_F0, L(bytes), 0},     {"shard", FL_CSV_INT, L(shard), 0}};
#undef L

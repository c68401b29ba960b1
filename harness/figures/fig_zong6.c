// SPDX-License-Identifier: Apache-2.0
/* fig_zong6.c: seed 003 Fig. 6 with FEM instead of MPM: an elastic cube (0.1 m, 0.4 kg,
 * E 1e5 Pa, nu 0.4, mu 0.8) squeezed between two rigid panels pushed with 10 N each.
 *
 * At steady state each panel carries the push as normal force (10 N) and half the cube's
 * weight as vertical friction (m g / 2 = 1.962 N). The recipe runs the elastic_cube scene with
 * SAP and plots the contact forces on both panels against time, the analytic values marked,
 * and the relative errors at the end.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "fl_figure.h"

/* final.csv: one row per panel and force component */
typedef struct final_row {
  const char *panel, *quantity;
  double value, expected, rel_err;
} final_row;
#define R(m) offsetof(final_row, m)
static const fl_csv_col final_cols[] = {
  {"panel", FL_CSV_STR, R(panel), 0},       {"quantity", FL_CSV_STR, R(quantity), 0},
  {"value", FL_CSV_G, R(value), 9},         {"expected", FL_CSV_G, R(expected), 9},
  {"rel_err", FL_CSV_G, R(rel_err), 4}};
#undef R
#define NFINAL (int)(sizeof final_cols / sizeof final_cols[0])

static int run(fl_fig_ctx *ctx) {
  double dur = ctx->quick ? 0.3 : 1.0, m = 0.4, g = 9.81, F = 10;
  fl_fig_panel *pn = fl_fig_panel_add(ctx->fig, "normal force on each panel", "time (s)",
                                      "contact force along x (N)", 0, 0);
  fl_fig_panel *pt = fl_fig_panel_add(ctx->fig, "vertical friction force on each panel",
                                      "time (s)", "contact force along z (N)", 0, 0);
  fl_fig_sim sim;
  FL_TRY(fl_fig_simulate(ctx, "sap.csv", "elastic_cube", NULL, "sap", NULL, dur, &sim));
  fl_fig_series_add(pn, "sap.csv", "t", "left_fx", "left panel (SAP)", 0);
  fl_fig_series_add(pn, "sap.csv", "t", "right_fx", "right panel (SAP)", 0);
  fl_fig_series_add(pt, "sap.csv", "t", "left_fz", "left panel (SAP)", 0);
  fl_fig_series_add(pt, "sap.csv", "t", "right_fz", "right panel (SAP)", 0);
  fl_fig_ref_add(pn, F, "+10 N (push)");
  fl_fig_ref_add(pn, -F, "-10 N (push)");
  fl_fig_ref_add(pt, -0.5 * m * g, "-m g / 2 = -1.962 N");
  FILE *tab = fl_fig_table(ctx, "final.csv", final_cols, NFINAL);
  if (!tab) return fl_errcode();
  static const char *names[4] = {"left_fx", "right_fx", "left_fz", "right_fz"};
  double expect[4] = {-F, F, -0.5 * m * g, -0.5 * m * g};
  for (int k = 0; k < 4; k++) {
    double v = fl_fig_sim_get(&sim, names[k], 0), err = fabs(v - expect[k]) / fabs(expect[k]);
    final_row row = {k % 2 ? "right" : "left", k < 2 ? "normal" : "friction", v, expect[k], err};
    fl_csv_row(tab, final_cols, NFINAL, &row);
    fl_fig_say(ctx, "%-8s at t = %.2f s: %9.5f N, expected %9.5f N, error %.3f%%", names[k], dur, v,
               expect[k], 100 * err);
  }
  fl_fig_say(ctx, "%d steps, %d failed, %ld SAP iterations", sim.steps, sim.nfail, sim.iters);
  return FL_OK;
}


const fl_figure_recipe fl_fig_zong6 = {
  "zong-fig6", "003", "elastic FEM cube held between two pushed panels: contact forces (stand-in: FEM for the "
  "paper's MPM)", NULL,
  run, NULL};

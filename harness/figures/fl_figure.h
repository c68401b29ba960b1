// SPDX-License-Identifier: Apache-2.0
/* fl_figure.h: figure recipes for `frictionlab reproduce` (internal to harness/).
 *
 * A recipe computes what one paper figure shows and writes it as CSV files into the figure's
 * staging folder, then describes the picture as a plot specification (panels of series, each
 * series one CSV file with named x and y columns). The harness turns the specification into
 * figure.json, renders it with gnuplot (figure-gnuplot.png, from a generated figure.gp) and
 * with matplotlib (figure.png and figure.pdf, by scripts/plot_figure.py), and commits the
 * folder results/figures/<name>/ with a manifest. So every figure is regenerable from its
 * folder alone: `gnuplot figure.gp`, or `/usr/bin/python3 scripts/plot_figure.py figure.json`.
 *
 * Recipes whose prerequisites (a solver, a scene) are missing report why through `missing`,
 * and are listed as unavailable rather than faked.
 */
#ifndef FL_FIGURE_H
#define FL_FIGURE_H
// layer 6: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 6
#error "harness/fl_figure.h is in harness/, layer 6: a lower layer may not include it (docs/layers.md)"
#endif

#include <stdio.h>

#include "../fl_harness.h"

#define FL_FIG_MAX_SERIES 32
/* fl_fig_series.points: the panel's bar series are stacked, in the order added, one bar per x */
#define FL_FIG_BARS 3
#define FL_FIG_MAX_PANELS 9
#define FL_FIG_MAX_REFS 4

typedef struct fl_fig_series {
  char csv[96];    /* file name in the figure folder, with a header row */
  char x[48];      /* column names */
  char y[48];
  char label[160]; /* legend: solver and options */
  int points;      /* 1 markers, 0 lines, 2 lines and markers, FL_FIG_BARS stacked bars */
  /* What identifies the curve (fl_fig_series_style): the colour stands for `group` (a solver
   * or strategy) and the line style for `kind` (a quantity). Empty: each series its own group,
   * one kind. */
  char group[64], kind[64];
  /* Set by fl_fig_render: indices into the kit's palette, dash list and marker list (0: no
   * marker). No two series of a panel share colour, dash, marker and points; a series whose
   * points equal an earlier one's gets a marker of its own and a note in its label. */
  int color, dash, marker;
} fl_fig_series;

typedef struct fl_fig_panel {
  char title[160];
  char xlabel[96]; /* with units, e.g. "time (s)" */
  char ylabel[96];
  int logx, logy;
  fl_fig_series series[FL_FIG_MAX_SERIES];
  int nseries;
  double ref[FL_FIG_MAX_REFS];       /* horizontal reference lines (y values) */
  char ref_label[FL_FIG_MAX_REFS][96];
  int nref;
  char not_drawn[320]; /* filled by fl_fig_render: labels of series without a drawable point */
  char xtics[48];      /* column of the series' CSV naming each x (tick labels), or "" */
} fl_fig_panel;

typedef struct fl_fig {
  char title[200];
  fl_fig_panel panel[FL_FIG_MAX_PANELS];
  int npanel;
} fl_fig;

/* What a recipe gets. */
typedef struct fl_fig_ctx {
  fl_results *res; /* the figure's results folder (staging); files via fl_fig_table */
  int quick;       /* reduced size for CI */
  fl_fig *fig;     /* the plot specification to fill */
  FILE *summary;   /* summary.txt: the figure's numbers in words, also printed */
  int jobs;        /* runs a recipe may do at once in worker processes (--jobs; 1: none) */
  int tier;        /* FL_FIG_FULL, FL_FIG_MEDIUM or FL_FIG_QUICK (quick != 0 exactly for quick) */
} fl_fig_ctx;

/* Sizes of a figure: the paper's (full), one that keeps the full figure's conclusion in
 * minutes (medium: only recipes that read ctx->tier have one; the others run their quick size
 * there), and the reduced one CI runs (quick). Zero is full, as a zeroed context is. */
enum { FL_FIG_FULL = 0, FL_FIG_MEDIUM = 1, FL_FIG_QUICK = 2 };

typedef struct fl_figure_recipe {
  const char *name; /* "macklin-fig28" */
  const char *seed; /* "004" */
  const char *what; /* one line */
  /* NULL when the recipe can run, else a static string saying what is missing. */
  const char *(*missing)(void);
  /* Writes CSVs and fills ctx->fig. Returns FL_OK or an error code with fl_seterr. NULL while
   * the recipe is not written; `needs` then says what it waits for. */
  int (*run)(fl_fig_ctx *ctx);
  const char *needs;
} fl_figure_recipe;

/* The registry (harness/figures/figures.c): every figure of PROBLEMS.md section 7, NULL-terminated. */
const fl_figure_recipe *const *fl_figures(void);
const fl_figure_recipe *fl_figure_find(const char *name);
/* Why a figure cannot run now, or NULL if it can. */
const char *fl_figure_missing(const fl_figure_recipe *r);
/* The paper a figure reproduces, as "first author year" (e.g. "Macklin 2020"), and its full
 * reference (authors, title, venue, year, DOI or arXiv id); static strings, "-" when none. */
const char *fl_figure_cite(const fl_figure_recipe *r);
const char *fl_figure_reference(const fl_figure_recipe *r);
/* The tier a figure runs at when `tier` is asked for (a figure without a medium size runs its
 * quick size for medium), and its estimated wall time there (s, one process on the 2-core
 * build machine; 0 when not measured). */
int fl_figure_tier(const fl_figure_recipe *r, int tier);
double fl_figure_estimate(const fl_figure_recipe *r, int tier, int jobs);
const char *fl_figure_tier_name(int tier);

/* A figure's table declared once: opens `name` in the figure's folder and writes the header of
 * the n columns of `cols` (fl_csv_col, harness/fl_harness.h); each row is then written from
 * the same table with fl_csv_row(f, cols, n, &row). NULL on error (message set). The file is
 * the results folder's (closed with it). */
FILE *fl_fig_table(fl_fig_ctx *ctx, const char *name, const fl_csv_col *cols, int n);
/* Appends a panel / a series / a reference line; silently capped at the maxima above. */
fl_fig_panel *fl_fig_panel_add(fl_fig *f, const char *title, const char *xlabel,
                               const char *ylabel, int logx, int logy);
void fl_fig_series_add(fl_fig_panel *p, const char *csv, const char *x, const char *y,
                       const char *label, int points);
void fl_fig_ref_add(fl_fig_panel *p, double y, const char *label);
/* Names what the last series added to p stands for: its colour follows `group` (e.g. the
 * solver), its line style `kind` (e.g. the quantity); NULL leaves one unset. */
void fl_fig_series_style(fl_fig_panel *p, const char *group, const char *kind);
/* Labels the panel's x ticks with the text of `column` in its series' CSV (one tick per row,
 * at the row's x); for categories such as the examples of a table. */
void fl_fig_panel_xtics(fl_fig_panel *p, const char *column);
/* Reads the columns `xcol` and `ycol` of the CSV file `name` in the shared reference folder
 * ($FL_SHARED_DIR/reference, else the folder CMake was given as FL_SHARED_DIR) into x and y (at
 * most cap rows; lines starting with '#' are comments, the first other line is the header).
 * Returns the number of rows (>= 1), or FL_ERR_IO (unreadable file) / FL_ERR_FORMAT (a missing
 * column, a bad number, no rows) with a message naming the file and line. */
int fl_fig_reference_csv(const char *name, const char *xcol, const char *ycol, double *x,
                         double *y, int cap);
/* Prints to the summary file and stdout. */
void fl_fig_say(fl_fig_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes figure.json and figure.gp into `dir` and renders them (gnuplot, then matplotlib via
 * Debian's /usr/bin/python3 or $FL_PYTHON). A series with no point the panel's axes can show
 * (finite, positive on a log axis) is left out of both legends and named under its panel
 * ("not drawn"); long titles are wrapped. f is not modified. Errors name the tool and its
 * exit status. */
int fl_fig_render(const fl_fig *f, const char *dir);

/*---- simulating a scene for a recipe (harness/figures/fig_sim.c) ----*/

#define FL_FIG_SIM_MAXOBS 1024 /* 13 pose columns per body: 32 bodies need 470 */

/* What a simulation gave: totals and, per observable, the last value and the largest |value|. */
typedef struct fl_fig_sim {
  int steps, nfail;  /* steps run; steps whose solver ended with a negative reason */
  long iters;        /* iterations summed over steps */
  double solve_s;    /* solver wall time summed over steps (s) */
  double mu_used_max;/* largest ||gamma_t|| / gamma_n of a loaded contact over the run */
  int nobs;
  char name[FL_FIG_SIM_MAXOBS][40];
  double last[FL_FIG_SIM_MAXOBS], maxabs[FL_FIG_SIM_MAXOBS];
} fl_fig_sim;

/* Simulates canonical scene `scene` (overrides "key=value,key=value" or NULL) for `duration`
 * seconds (0 = the scene's own) with solver `solver` (options likewise), writing CSV `csv` in
 * the figure folder: t, iterations, reason, solve_s, merit (common natural map of the contacts),
 * bilateral (largest joint-row residual), mu_used (largest ||gamma_t||/gamma_n of a loaded
 * contact: the friction the solution uses), momentum (relative momentum residual
 * ||D (A (v - v*) - J^T gamma)|| / scale, fl_metrics), then every
 * observable of the scene, one row per step. A diverged step is recorded, not an error.
 * Returns FL_OK or the error of a scene, solver or option. */
/* A run's recording and viewer in a figure's folder: <stem>.flrec and <stem>.html
 * (docs/recording.md), at most FL_FIG_RECORD_BUDGET bytes of recording per run. Fill ctx, stem
 * (the CSV's name without its extension), label (the run's pane title) and steps (planned;
 * 0: the scene's duration / dt),
 * zero the rest, pass fl_fig_record_step as a step observer (or call it with step 0 and info
 * NULL, then after every step), then call fl_fig_record_end once. */
#define FL_FIG_RECORD_BUDGET 4e6
typedef struct fl_fig_rec {
  fl_fig_ctx *ctx;
  char stem[200], label[200];
  long steps;
  /* set by fl_fig_record_step */
  long every;
  FILE *f;
  struct fl_recorder *rec;
} fl_fig_rec;
struct fl_world;
struct fl_step_info;
/* Observer (fl_step_observer's signature; ctx is the fl_fig_rec): begins the recording at step
 * 0, then records every `every`-th step and the last planned one. Returns FL_OK or the error. */
int fl_fig_record_step(void *ctx, struct fl_world *w, long step, const struct fl_step_info *info);
/* The recording interval of r for world w at its initial state (steps, >= 1): what
 * fl_fig_record_step will use, for a stepping loop's frame_every (sim/fl_loop.h). Sets
 * r->steps when it was 0 and r->every. */
long fl_fig_record_every(fl_fig_rec *r, const struct fl_world *w);
/* Closes the recording. Returns rc when rc < 0, else FL_OK or the write error. The pages are
 * written once the recipe is done, by fl_fig_viewers. */
int fl_fig_record_end(fl_fig_rec *r, int rc);
/* The viewer pages of the recordings in a figure's folder dir (when this build has the
 * viewer): the runs of one scene with the same settings (fl_record_scene_key) on one page,
 * their solvers side by side, named viewer_<what their CSV stems share>.html; a run alone gets
 * <stem>.html. Returns FL_OK, or the error of a recording or a page. */
int fl_fig_viewers(const char *dir);

int fl_fig_simulate(fl_fig_ctx *ctx, const char *csv, const char *scene, const char *scene_set,
                    const char *solver, const char *solver_set, double duration,
                    fl_fig_sim *out);
/* An observable of a finished simulation: its last value, or (max != 0) its largest |value|;
 * NAN when the scene has no such observable. */
double fl_fig_sim_get(const fl_fig_sim *s, const char *name, int max);

/* Records one run in the figure's manifest ("runs"): csv (the data file it wrote, or the table
 * it is a row of), scene and its overrides (NULL: none), solver name and resolved options,
 * simulated duration (s), steps taken and failed. fl_fig_simulate records its own runs; a
 * figure that steps a solver itself calls this. Nothing is recorded when memory runs out. */
void fl_fig_manifest_run(fl_fig_ctx *ctx, const char *csv, const char *scene,
                         const char *scene_set, const fl_solver *s, double duration, int steps,
                         int nfail);

/* Recipes (one file each, harness/figures/fig_*.c). */
extern const fl_figure_recipe fl_fig_macklin15; /* fig_macklin.c (nsn) */
extern const fl_figure_recipe fl_fig_macklin18;
extern const fl_figure_recipe fl_fig_macklin19;
extern const fl_figure_recipe fl_fig_macklin20;
extern const fl_figure_recipe fl_fig_macklin22;
extern const fl_figure_recipe fl_fig_macklin26;
extern const fl_figure_recipe fl_fig_macklin27;
extern const fl_figure_recipe fl_fig_macklin28;
extern const fl_figure_recipe fl_fig_macklin30;
extern const fl_figure_recipe fl_fig_macklin31;
extern const fl_figure_recipe fl_fig_han4;        /* fig_han4.c */
extern const fl_figure_recipe fl_fig_han_table1;
extern const fl_figure_recipe fl_fig_masterjohn5; /* fig_masterjohn.c */
extern const fl_figure_recipe fl_fig_masterjohn6;
extern const fl_figure_recipe fl_fig_zong3;
extern const fl_figure_recipe fl_fig_zong6;
extern const fl_figure_recipe fl_fig_han5;
extern const fl_figure_recipe fl_fig_peers_heavy_stack; /* fig_peers.c (MuJoCo peers) */


#endif /* FL_FIGURE_H */

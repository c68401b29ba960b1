// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE
/* figures.c: the figure registry, plot specifications and their rendering, and
 * `frictionlab reproduce`. See fl_figure.h. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fl_figure.h"

//---- the registry: every figure of PROBLEMS.md section 7 ----


static const fl_figure_recipe *const registry[] = {
  &fl_fig_macklin15, &fl_fig_macklin18, &fl_fig_macklin19, &fl_fig_macklin20, &fl_fig_macklin22,
  &fl_fig_macklin26, &fl_fig_macklin27, &fl_fig_macklin28, &fl_fig_macklin30, &fl_fig_macklin31,
  &fl_fig_han4,    &fl_fig_han5,      &fl_fig_han_table1,    &fl_fig_masterjohn5, &fl_fig_masterjohn6,
  &fl_fig_zong3,     &fl_fig_zong6,     &fl_fig_peers_heavy_stack, NULL};


const fl_figure_recipe *const *fl_figures(void) { return registry; }


const fl_figure_recipe *fl_figure_find(const char *name) {
  for (int k = 0; registry[k]; k++)
    if (strcmp(registry[k]->name, name) == 0) return registry[k];
  return NULL;
}


const char *fl_figure_missing(const fl_figure_recipe *r) {
  if (!r->run) return r->needs ? r->needs : "no recipe";
  return r->missing ? r->missing() : NULL;
}


//---- the papers (the seed files in ../shared/seeds/, by number) ----

static const struct {
  const char *seed, *cite, *reference;
} papers[] = {
  {"000", "Han 2023",
   "X. Han, J. Masterjohn, A. Castro. A Convex Formulation of Frictional Contact between Rigid "
   "and Deformable Bodies. IEEE Robotics and Automation Letters 8(10):6219-6226, 2023. "
   "arXiv:2303.08912"},
  {"001", "Macklin 2019",
   "M. Macklin, K. Erleben, M. Mueller, N. Chentanez, S. Jeschke, V. Makoviychuk. Non-Smooth "
   "Newton Methods for Deformable Multi-Body Dynamics. ACM Transactions on Graphics 38(5), "
   "article 20, 2019. doi:10.1145/3338695"},
  {"002", "Masterjohn 2022",
   "J. Masterjohn, D. Guoy, J. Shepherd, A. Castro. Velocity Level Approximation of Pressure "
   "Field Contact Patches. IEEE Robotics and Automation Letters 7(4):11593-11600, 2022. "
   "arXiv:2110.04157"},
  {"003", "Zong 2024",
   "Z. Zong, C. Jiang, X. Han. A Convex Formulation of Frictional Contact for the Material Point "
   "Method and Rigid Bodies. IEEE/RSJ International Conference on Intelligent Robots and Systems "
   "(IROS), 2024. arXiv:2403.13783"},
  {"004", "Macklin 2020",
   "M. Macklin. Simulation for Learning and Robotics: Numerical Methods for Contact, "
   "Deformation, and Identification. PhD thesis, University of Copenhagen, 2020"},
};


const char *fl_figure_cite(const fl_figure_recipe *r) {
  for (size_t k = 0; r->seed && k < sizeof papers / sizeof papers[0]; k++)
    if (strcmp(papers[k].seed, r->seed) == 0) return papers[k].cite;
  return "-";
}


const char *fl_figure_reference(const fl_figure_recipe *r) {
  for (size_t k = 0; r->seed && k < sizeof papers / sizeof papers[0]; k++)
    if (strcmp(papers[k].seed, r->seed) == 0) return papers[k].reference;
  return "-";
}


//---- sizes and time estimates ----

/* Wall time per tier (s), measured with one process on the 2-core build machine (docs/results.md):
 * est[tier], and est_par[tier] with --jobs at least the figure's independent runs (0: the same).
 * `medium` marks recipes whose quick size changes the conclusion, which read ctx->tier. */
static const struct {
  const char *name;
  int medium;
  double est[3], est_par[3];
} sizes[] = {
  {"macklin-fig15", 0, {3.1, 2.6, 2.6}, {0}},
  {"macklin-fig18", 0, {4.4, 3.6, 3.6}, {0}},
  {"macklin-fig19", 0, {3.6, 3.6, 3.6}, {0}},
  {"macklin-fig20", 1, {41, 41, 2.2}, {0}},
  {"macklin-fig22", 0, {3.0, 1.3, 1.3}, {0}},
  {"macklin-fig26", 0, {5.6, 2.4, 2.4}, {0}},
  {"macklin-fig27", 0, {4.2, 2.0, 2.0}, {0}},
  {"macklin-fig28", 0, {3.1, 2.4, 2.4}, {0}},
  {"macklin-fig30", 0, {4.3, 1.6, 1.6}, {0}},
  {"macklin-fig31", 0, {2.6, 1.4, 1.4}, {0}},
  {"han-fig4", 1, {13600, 190, 42}, {8100, 135, 30}},
  {"han-fig5", 0, {186, 31, 31}, {0}},
  {"han-table1", 1, {1002, 190, 7.2}, {0}},
  {"masterjohn-fig5", 0, {286, 3.0, 3.0}, {0}},
  {"masterjohn-fig6", 0, {150, 2.4, 2.4}, {0}},
  {"zong-fig3", 0, {3.2, 1.5, 1.5}, {0}},
  {"zong-fig6", 0, {27, 5.1, 5.1}, {0}},
  {"peers-heavy-stack", 0, {24, 2.0, 2.0}, {0}},
};


static int size_index(const fl_figure_recipe *r) {
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
    if (strcmp(sizes[k].name, r->name) == 0) return (int)k;
  return -1;
}


int fl_figure_tier(const fl_figure_recipe *r, int tier) {
  if (tier != FL_FIG_MEDIUM) return tier;
  int k = size_index(r);
  return k >= 0 && sizes[k].medium ? FL_FIG_MEDIUM : FL_FIG_QUICK;
}


double fl_figure_estimate(const fl_figure_recipe *r, int tier, int jobs) {
  int k = size_index(r);
  if (k < 0) return 0;
  tier = fl_figure_tier(r, tier);
  if (jobs > 1 && sizes[k].est_par[tier] > 0) return sizes[k].est_par[tier];
  return sizes[k].est[tier];
}


const char *fl_figure_tier_name(int tier) {
  return tier == FL_FIG_QUICK ? "quick" : tier == FL_FIG_MEDIUM ? "medium" : "full";
}


//---- plot specification ----

fl_fig_panel *fl_fig_panel_add(fl_fig *f, const char *title, const char *xlabel,
                               const char *ylabel, int logx, int logy) {
  if (f->npanel >= FL_FIG_MAX_PANELS) return &f->panel[FL_FIG_MAX_PANELS - 1];
  fl_fig_panel *p = &f->panel[f->npanel++];
  memset(p, 0, sizeof *p);
  snprintf(p->title, sizeof p->title, "%s", title);
  snprintf(p->xlabel, sizeof p->xlabel, "%s", xlabel);
  snprintf(p->ylabel, sizeof p->ylabel, "%s", ylabel);
  p->logx = logx;
  p->logy = logy;
  return p;
}


void fl_fig_series_add(fl_fig_panel *p, const char *csv, const char *x, const char *y,
                       const char *label, int points) {
  if (p->nseries >= FL_FIG_MAX_SERIES) return;
  fl_fig_series *s = &p->series[p->nseries++];
  snprintf(s->csv, sizeof s->csv, "%s", csv);
  snprintf(s->x, sizeof s->x, "%s", x);
  snprintf(s->y, sizeof s->y, "%s", y);
  snprintf(s->label, sizeof s->label, "%s", label);
  s->points = points;
}


void fl_fig_series_style(fl_fig_panel *p, const char *group, const char *kind) {
  if (p->nseries < 1) return;
  fl_fig_series *s = &p->series[p->nseries - 1];
  if (group) snprintf(s->group, sizeof s->group, "%s", group);
  if (kind) snprintf(s->kind, sizeof s->kind, "%s", kind);
}


//---- styles: the kit's palette, dashes and markers, shared by both renderers ----

#define NCOLOR 10
#define NDASH 5
#define NMARKER 8
/* matplotlib's tab10, as hex for both renderers */
static const char *const palette[NCOLOR] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                            "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                            "#bcbd22", "#17becf"};
/* gnuplot point types of the markers 1.. (0: none): circle, square, triangle, cross, plus,
 * diamond, triangle down */
static const int gp_point[NMARKER] = {0, 7, 5, 9, 2, 1, 13, 11};


void fl_fig_panel_xtics(fl_fig_panel *p, const char *column) {
  snprintf(p->xtics, sizeof p->xtics, "%s", column);
}


static const char *style_name(int points) {
  return points == 1 ? "points" : points == 2 ? "linespoints" : points == FL_FIG_BARS ? "bars"
                                                                                  : "lines";
}


void fl_fig_ref_add(fl_fig_panel *p, double y, const char *label) {
  if (p->nref >= FL_FIG_MAX_REFS) return;
  p->ref[p->nref] = y;
  snprintf(p->ref_label[p->nref], sizeof p->ref_label[0], "%s", label);
  p->nref++;
}


FILE *fl_fig_table(fl_fig_ctx *ctx, const char *name, const fl_csv_col *cols, int n) {
  FILE *f = fl_results_file(ctx->res, name);
  if (f) fl_csv_header(f, cols, n);
  return f;
}


void fl_fig_say(fl_fig_ctx *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (ctx->summary) {
    va_list aq;
    va_copy(aq, ap);
    vfprintf(ctx->summary, fmt, aq);
    va_end(aq);
    fputc('\n', ctx->summary);
  }
  printf("  ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}


//---- rendering ----

/* s with its spaces turned into line breaks so that no line is longer than width characters
 * (a word longer than that stays whole); into buf (n bytes), returned */
static const char *wrap_text(const char *s, int width, char *buf, size_t n) {
  snprintf(buf, n, "%s", s);
  int col = 0;
  char *last_space = NULL;
  for (char *c = buf; *c; c++, col++) {
    if (*c == ' ') last_space = c;
    if (col >= width && last_space) {
      *last_space = '\n';
      col = (int)(c - last_space);
      last_space = NULL;
    }
  }
  return buf;
}


/* gnuplot string literal: double quotes, with backslash and quote escaped, newlines as \n */
static void gp_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '\n') {
      fputs("\\n", f);
      continue;
    }
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
  fputc('"', f);
}


static long load_points(const char *dir, const fl_fig_series *se, int logx, int logy,
                        double **xy);

/* The one data file both renderers draw from (FL_FIG_DATA in the figure's folder): per line or
 * point series, in panel order, its drawable points (finite, positive on a log axis: what
 * load_points keeps), one block per series ("x,y" header, then x,y rows at full precision),
 * blocks two blank lines apart, so that gnuplot's `index N` and plot_figure.py read the same
 * points. Bars are read from their CSV by both (a histogram needs its rows). */
#define FL_FIG_DATA "figure-data.dat"

static int is_data_series(const fl_fig_series *se) { return se->points != FL_FIG_BARS; }


/* the block of series s of panel k in FL_FIG_DATA, or -1 for bars */
static int data_index(const fl_fig *fig, int k, int s) {
  if (!is_data_series(&fig->panel[k].series[s])) return -1;
  int n = 0;
  for (int j = 0; j <= k; j++)
    for (int i = 0; i < (j < k ? fig->panel[j].nseries : s); i++)
      n += is_data_series(&fig->panel[j].series[i]);
  return n;
}


static int write_data(const fl_fig *fig, const char *dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, FL_FIG_DATA);
  FILE *f = fopen(path, "w");
  if (!f) return fl_seterr(FL_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  int rc = FL_OK, first = 1;
  for (int k = 0; rc >= 0 && k < fig->npanel; k++) {
    const fl_fig_panel *p = &fig->panel[k];
    for (int s = 0; rc >= 0 && s < p->nseries; s++) {
      const fl_fig_series *se = &p->series[s];
      if (!is_data_series(se)) continue;
      double *xy = NULL;
      long n = load_points(dir, se, p->logx, p->logy, &xy);
      if (n < 0) {
        rc = fl_seterr(FL_ERR_IO, "%s/%s: cannot read columns '%s' and '%s'", dir, se->csv, se->x,
                       se->y);
        break;
      }
      fprintf(f, "%s# panel %d, series %d: %s (%s: %s, %s)\nx,y\n", first ? "" : "\n\n", k, s,
              se->label, se->csv, se->x, se->y);
      for (long i = 0; i < n; i++) fprintf(f, "%.17g,%.17g\n", xy[2 * i], xy[2 * i + 1]);
      free(xy);
      first = 0;
    }
  }
  if (fclose(f) != 0 && rc >= 0) rc = fl_seterr(FL_ERR_IO, "%s: write failed", path);
  return rc;
}


/* Reads the header line of a CSV into line[n] (clobbered) and sets *ia and *ib to the columns
 * named a and b (left as they are when absent). */
static void head_columns(FILE *in, char *line, int n, const char *a, int *ia, const char *b,
                         int *ib) {
  if (!fgets(line, n, in)) return;
  line[strcspn(line, "\r\n")] = 0;
  int c = 0;
  for (char *t = line, *e; t; t = e ? e + 1 : NULL, c++) {
    e = strchr(t, ',');
    if (e) *e = 0;
    if (!strcmp(t, a)) *ia = c;
    if (!strcmp(t, b)) *ib = c;
  }
}


/* The tick names of an xtics panel: the x and the `names` column of every row of series se
 * whose x is finite (rows whose y is missing name a tick too), as gnuplot's explicit
 * `set xtics (...)` list; what plot_figure.py draws. */
static void gp_xtics(FILE *f, const char *dir, const fl_fig_series *se, const char *names) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, se->csv);
  FILE *in = fopen(path, "r");
  if (!in) return;
  static char line[65536];
  int ix = -1, in_ = -1, n = 0;
  head_columns(in, line, sizeof line, se->x, &ix, names, &in_);
  fprintf(f, "set xtics (");
  while (ix >= 0 && in_ >= 0 && fgets(line, sizeof line, in)) {
    line[strcspn(line, "\r\n")] = 0;
    double x = NAN;
    const char *name = "";
    int c = 0;
    for (char *t = line, *e; t; t = e ? e + 1 : NULL, c++) {
      e = strchr(t, ',');
      if (e) *e = 0;
      if (c == ix) {
        char *end;
        x = strtod(t, &end);
        if (end == t) x = NAN;
      }
      if (c == in_) name = t;
    }
    if (!isfinite(x)) continue;
    fprintf(f, "%s", n++ ? ", " : "");
    gp_str(f, name);
    fprintf(f, " %.17g", x);
  }
  fprintf(f, ")\n");
  fclose(in);
}


static int write_gnuplot(const fl_fig *fig, const char *path, const char *dir) {
  FILE *f = fopen(path, "w");
  if (!f) return fl_seterr(FL_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  int cols = fig->npanel > 6 ? 3 : fig->npanel > 1 ? 2 : 1, rows = (fig->npanel + cols - 1) / cols;
  fprintf(f, "# Generated by frictionlab reproduce; run `gnuplot figure.gp` in this folder.\n");
  fprintf(f, "set terminal pngcairo size %d,%d enhanced font 'sans,10'\n", 820 * cols,
          440 * rows + 40);
  fprintf(f, "set output 'figure-gnuplot.png'\nset datafile separator ','\nset datafile columnheaders\n");
  // the legend beside the frame, never over the data
  fprintf(f, "set datafile missing 'nan'\nset grid\nset key outside right top font ',8'\n");
  char wrapped[512];
  fprintf(f, "set multiplot layout %d,%d title ", rows, cols);
  gp_str(f, wrap_text(fig->title, 90 * cols, wrapped, sizeof wrapped));
  fprintf(f, " noenhanced\n");
  for (int k = 0; k < fig->npanel; k++) {
    const fl_fig_panel *p = &fig->panel[k];
    fprintf(f, "unset logscale\nunset label 1\nset title ");
    gp_str(f, wrap_text(p->title, 80, wrapped, sizeof wrapped));
    if (p->not_drawn[0]) {
      char note[400];
      snprintf(note, sizeof note, "not drawn (no points): %s", p->not_drawn);
      fprintf(f, " noenhanced\nset label 1 ");
      gp_str(f, wrap_text(note, 90, wrapped, sizeof wrapped));
      fprintf(f, " at graph 0.02, graph 0.04 font ',7' noenhanced");
    }
    fprintf(f, " noenhanced\nset xlabel ");
    gp_str(f, p->xlabel);
    fprintf(f, " noenhanced\nset ylabel ");
    gp_str(f, p->ylabel);
    fprintf(f, " noenhanced\n");
    if (p->logx) fprintf(f, "set logscale x\nset format x '10^{%%L}'\n");
    else fprintf(f, "set format x '%%g'\n");
    if (p->logy) fprintf(f, "set logscale y\nset format y '10^{%%L}'\n");
    else fprintf(f, "set format y '%%g'\n");
    if (p->nseries + p->nref == 0) fprintf(f, "unset logscale\n"); // an empty frame
    // stacked bars: gnuplot's row-stacked histograms, one bar per CSV row at 0, 1, ...; the
    // bars fill the frame, so the key goes beside it
    int bars = 0;
    for (int s = 0; s < p->nseries; s++) bars |= p->series[s].points == FL_FIG_BARS;
    if (bars)
      fprintf(f, "set style histogram rowstacked\nset style fill solid 0.8 border -1\n"
                 "set boxwidth 0.75\nset key outside top right\n");
    // category names are text (no subscripts); points get half a category of room each side
    if (p->xtics[0] && !bars && p->nseries > 0) gp_xtics(f, dir, &p->series[0], p->xtics);
    if (p->xtics[0]) fprintf(f, "set xtics rotate by -30 font ',7' noenhanced\n");
    if (p->xtics[0] && !bars) fprintf(f, "set offsets 0.5, 0.5, 0, 0\n");
    // gnuplot sizes the key beside the frame by the terminal's character width, not the key's
    // smaller font: long entries would squeeze the frame (measured: 0.2 character per
    // character of the longest entry gives the room back without overlapping the frame)
    size_t longest = 0;
    for (int s = 0; s < p->nseries; s++) longest = fmax(longest, strlen(p->series[s].label));
    for (int r = 0; r < p->nref; r++) longest = fmax(longest, strlen(p->ref_label[r]));
    fprintf(f, "set key width %d\n", -(int)(0.2 * (double)longest));
    fprintf(f, "plot ");
    int first = 1;
    for (int s = 0; s < p->nseries; s++) {
      const fl_fig_series *se = &p->series[s];
      if (se->points == FL_FIG_BARS) fprintf(f, "%s'%s' using ", first ? "" : ", \\\n     ", se->csv);
      else fprintf(f, "%s'" FL_FIG_DATA "' index %d using ", first ? "" : ", \\\n     ",
                   data_index(fig, k, s));
      if (se->points == FL_FIG_BARS) {
        fprintf(f, "(column(");
        gp_str(f, se->y);
        fprintf(f, "))");
        if (p->xtics[0]) {
          fprintf(f, ":xtic(stringcolumn(");
          gp_str(f, p->xtics);
          fprintf(f, "))");
        }
        fprintf(f, " with histograms lc rgb '%s' title ", palette[se->color % NCOLOR]);
      } else {
        fprintf(f, "1:2"); // the block's x,y (category ticks: gp_xtics above)
        int pt = gp_point[se->marker % NMARKER];
        if (se->points == 1) fprintf(f, " with points pt %d ps 0.8", pt ? pt : 7);
        else if (se->points == 2 || pt) fprintf(f, " with linespoints pt %d ps 0.6 pi %d",
                                                pt ? pt : 7, se->points == 2 ? 1 : 8);
        else fprintf(f, " with lines");
        fprintf(f, " lw 2 dt %d lc rgb '%s' title ", 1 + se->dash % NDASH,
                palette[se->color % NCOLOR]);
      }
      gp_str(f, se->label);
      fprintf(f, " noenhanced");
      first = 0;
    }
    for (int r = 0; r < p->nref; r++) {
      // each reference its own dash (and a grey for every second one)
      fprintf(f, "%s%.17g with lines dt %d lw 1.5 lc rgb '%s' title ", first ? "" : ", \\\n     ",
              p->ref[r], 2 + r % 4, r % 2 ? "#555555" : "black");
      gp_str(f, p->ref_label[r]);
      fprintf(f, " noenhanced");
      first = 0;
    }
    if (first) fprintf(f, "[0:1] [0:1] NaN notitle");
    fprintf(f, "\n");
    if (bars) fprintf(f, "set style fill empty\nset key outside right top\n");
    if (p->xtics[0]) fprintf(f, "set xtics norotate font '' enhanced\nset offsets 0, 0, 0, 0\n");
  }
  fprintf(f, "unset multiplot\n");
  if (fclose(f) != 0) return fl_seterr(FL_ERR_IO, "%s: write failed", path);
  return FL_OK;
}


static int write_json(const fl_fig *fig, const char *path) {
  cJSON *root = cJSON_CreateObject(), *panels = cJSON_AddArrayToObject(root, "panels");
  cJSON_AddStringToObject(root, "title", fig->title);
  cJSON_AddStringToObject(root, "data", FL_FIG_DATA); // the points both renderers draw
  for (int k = 0; k < fig->npanel; k++) {
    const fl_fig_panel *p = &fig->panel[k];
    cJSON *jp = cJSON_CreateObject(), *js = cJSON_AddArrayToObject(jp, "series");
    cJSON_AddStringToObject(jp, "title", p->title);
    cJSON_AddStringToObject(jp, "xlabel", p->xlabel);
    cJSON_AddStringToObject(jp, "ylabel", p->ylabel);
    cJSON_AddBoolToObject(jp, "logx", p->logx);
    cJSON_AddBoolToObject(jp, "logy", p->logy);
    for (int s = 0; s < p->nseries; s++) {
      const fl_fig_series *se = &p->series[s];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "csv", se->csv);
      cJSON_AddStringToObject(o, "x", se->x);
      cJSON_AddStringToObject(o, "y", se->y);
      cJSON_AddStringToObject(o, "label", se->label);
      cJSON_AddStringToObject(o, "style", style_name(se->points));
      cJSON_AddStringToObject(o, "color", palette[se->color % NCOLOR]);
      cJSON_AddNumberToObject(o, "dash", se->dash % NDASH);
      cJSON_AddNumberToObject(o, "marker", se->marker % NMARKER);
      if (data_index(fig, k, s) >= 0) cJSON_AddNumberToObject(o, "data_index", data_index(fig, k, s));
      if (se->group[0]) cJSON_AddStringToObject(o, "group", se->group);
      if (se->kind[0]) cJSON_AddStringToObject(o, "kind", se->kind);
      cJSON_AddItemToArray(js, o);
    }
    if (p->not_drawn[0]) cJSON_AddStringToObject(jp, "not_drawn", p->not_drawn);
    if (p->xtics[0]) cJSON_AddStringToObject(jp, "xtics", p->xtics);
    cJSON *jr = cJSON_AddArrayToObject(jp, "refs");
    for (int r = 0; r < p->nref; r++) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddNumberToObject(o, "y", p->ref[r]);
      cJSON_AddStringToObject(o, "label", p->ref_label[r]);
      cJSON_AddStringToObject(o, "color", r % 2 ? "#555555" : "#000000");
      cJSON_AddNumberToObject(o, "dash", 1 + r % 4);
      cJSON_AddItemToArray(jr, o);
    }
    cJSON_AddItemToArray(panels, jp);
  }
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
  FILE *f = fopen(path, "w");
  int ok = f && fputs(text, f) >= 0;
  if (f && fclose(f) != 0) ok = 0;
  cJSON_free(text);
  if (!ok) return fl_seterr(FL_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  return FL_OK;
}


/* runs argv in `dir`, output to dir/render.log; returns the exit status or -1 */
static int run_in(const char *dir, char *const argv[]) {
  // every stream: the figure's CSV files must be on disk for the plotter, and unflushed
  // output would otherwise be written twice, once by the child
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (chdir(dir) != 0) _exit(126);
    if (!freopen("render.log", "a", stdout) || !freopen("render.log", "a", stderr)) _exit(126);
    execvp(argv[0], argv);
    _exit(127);
  }
  int status;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}


/* the end of dir/render.log, for error messages (the folder is removed after a failure) */
static const char *log_tail(const char *dir) {
  static char buf[600];
  char path[4096];
  snprintf(path, sizeof path, "%s/render.log", dir);
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return "(no render.log)";
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, n > (long)sizeof buf - 1 ? n - (long)sizeof buf + 1 : 0, SEEK_SET);
  size_t got = fread(buf, 1, sizeof buf - 1, f);
  buf[got] = '\0';
  fclose(f);
  for (char *c = buf; *c; c++)
    if (*c == '\n') *c = ' ';
  return buf;
}


int fl_fig_reference_csv(const char *name, const char *xcol, const char *ycol, double *x,
                         double *y, int cap) {
  const char *d = getenv("FL_SHARED_DIR");
#ifdef FL_SHARED_DIR_DEFAULT
  if (!d || !*d) d = FL_SHARED_DIR_DEFAULT;
#endif
  if (!d || !*d) d = "../shared";
  char path[1200], line[1024];
  snprintf(path, sizeof path, "%s/reference/%s", d, name);
  FILE *f = fopen(path, "r");
  if (!f) return fl_seterr(FL_ERR_IO, "%s: cannot read the reference curve (set FL_SHARED_DIR to "
                           "the shared folder)", path);
  int ix = -1, iy = -1, n = 0, lineno = 0, rc = FL_OK;
  while (rc >= 0 && fgets(line, sizeof line, f)) {
    lineno++;
    line[strcspn(line, "\r\n")] = 0;
    if (line[0] == '#' || line[0] == 0) continue;
    int col = 0;
    double vx = NAN, vy = NAN;
    for (char *tok = line, *next; tok; tok = next, col++) {
      next = strchr(tok, ',');
      if (next) *next++ = 0;
      if (ix < 0 || iy < 0) {
        if (!strcmp(tok, xcol)) ix = col;
        if (!strcmp(tok, ycol)) iy = col;
        continue;
      }
      if (col != ix && col != iy) continue;
      char *end;
      double v = strtod(tok, &end);
      if (end == tok || *end) {
        rc = fl_seterr(FL_ERR_FORMAT, "%s: line %d, column %d: '%s' is not a number", path,
                       lineno, col + 1, tok);
        break;
      }
      if (col == ix) vx = v;
      else vy = v;
    }
    if (rc < 0) break;
    if (col > 0 && (ix < 0 || iy < 0)) {
      rc = fl_seterr(FL_ERR_FORMAT, "%s: line %d: the header has no column '%s' or '%s'", path,
                     lineno, xcol, ycol);
      break;
    }
    if (isnan(vx) && isnan(vy)) continue; // the header line
    if (isnan(vx) || isnan(vy)) {
      rc = fl_seterr(FL_ERR_FORMAT, "%s: line %d: expected both '%s' and '%s'", path, lineno,
                     xcol, ycol);
      break;
    }
    if (n < cap) {
      x[n] = vx;
      y[n] = vy;
      n++;
    }
  }
  fclose(f);
  if (rc < 0) return rc;
  if (n == 0) return fl_seterr(FL_ERR_FORMAT, "%s: no data rows", path);
  return n;
}


/* the plotting scripts: $FL_SCRIPTS_DIR, else the source tree's scripts/ */
static const char *scripts_dir(void) {
  const char *d = getenv("FL_SCRIPTS_DIR");
  if (d && *d) return d;
#ifdef FL_SOURCE_DIR
  return FL_SOURCE_DIR "/scripts";
#else
  return "scripts";
#endif
}


static long load_points(const char *dir, const fl_fig_series *se, int logx, int logy,
                        double **xy);

/* Points of series se (in dir) that a renderer can draw on the panel's axes: finite x and y,
 * positive on a log axis; 0 when the file or a column cannot be read. */
static long drawable_points(const char *dir, const fl_fig_series *se, int logx, int logy) {
  double *xy = NULL;
  long n = load_points(dir, se, logx, logy, &xy);
  free(xy);
  return n;
}


static int render_spec(const fl_fig *fig, const char *dir);


/* The drawable points of series se (as drawable_points counts them) into *xy (x0 y0 x1 y1 ...,
 * malloc'd); returns their number, or -1. */
static long load_points(const char *dir, const fl_fig_series *se, int logx, int logy,
                        double **xy) {
  *xy = NULL;
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, se->csv);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  static char line[65536];
  int ix = -1, iy = -1;
  long n = 0, cap = 0;
  head_columns(f, line, sizeof line, se->x, &ix, se->y, &iy);
  while (ix >= 0 && iy >= 0 && fgets(line, sizeof line, f)) {
    double x = NAN, y = NAN;
    int c = 0;
    for (char *t = line, *e; t; t = e ? e + 1 : NULL, c++) {
      e = strchr(t, ',');
      if (c == ix || c == iy) {
        char *end;
        double v = strtod(t, &end);
        if (end == t) v = NAN;
        if (c == ix) x = v;
        if (c == iy) y = v;
      }
    }
    if (!(isfinite(x) && isfinite(y) && (!logx || x > 0) && (!logy || y > 0))) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 256;
      double *t = realloc(*xy, (size_t)(2 * cap) * sizeof *t);
      if (!t) {
        free(*xy);
        *xy = NULL;
        fclose(f);
        return -1;
      }
      *xy = t;
    }
    (*xy)[2 * n] = x;
    (*xy)[2 * n + 1] = y;
    n++;
  }
  fclose(f);
  return n;
}


/* the same curve to the eye: every point within 0.1 % (a line's width on a log axis) */
static int same_points(const double *a, long na, const double *b, long nb) {
  if (na != nb || na <= 0) return 0;
  for (long k = 0; k < 2 * na; k++)
    if (fabs(a[k] - b[k]) > 1e-3 * fmax(fabs(a[k]), fabs(b[k])) + 1e-300) return 0;
  return 1;
}


/* Hidden curves: a line is drawn about 1 % of a frame's height thick and the later series of
 * a panel are drawn over the earlier ones, so a series most of whose points lie within that
 * of a later series' line is not seen. These are the tolerances of that test (shared with
 * scripts/plot_figure.py --check, which repeats it). */
#define HIDE_TOL_Y 0.01  /* of the panel's y range (of log10 y on a log axis) */
#define HIDE_TOL_X 0.005 /* of the panel's x range: the neighbourhood a line's width covers */
#define HIDE_SHARE 0.9   /* share of a series' points under later lines that hides it */

static double axis_v(double v, int log_axis) { return log_axis ? log10(v) : v; }


/* whether (x, y) (axis units) lies within tol_y of e's line (n points, xy pairs in data units,
 * x increasing) anywhere in [x - wx, x + wx] */
static int under_line(const double *e, long n, double x, double y, double wx, double tol_y,
                      int logx, int logy) {
  double xa = x - wx, xb = x + wx, lo = INFINITY, hi = -INFINITY;
  // first point at or after xa (binary search)
  long a = 0, b = n;
  while (a < b) {
    long m = (a + b) / 2;
    if (axis_v(e[2 * m], logx) < xa) a = m + 1;
    else b = m;
  }
  // the segments meeting [xa, xb], clipped to it
  for (long j = a > 0 ? a - 1 : 0; j + 1 < n; j++) {
    double x0 = axis_v(e[2 * j], logx), x1 = axis_v(e[2 * j + 2], logx);
    double y0 = axis_v(e[2 * j + 1], logy), y1 = axis_v(e[2 * j + 3], logy);
    if (x0 > xb) break;
    if (x1 < xa) continue;
    double ca = fmax(x0, xa), cb = fmin(x1, xb);
    double ya = x1 > x0 ? y0 + (y1 - y0) * (ca - x0) / (x1 - x0) : y0;
    double yb = x1 > x0 ? y0 + (y1 - y0) * (cb - x0) / (x1 - x0) : y1;
    lo = fmin(lo, fmin(ya, yb));
    hi = fmax(hi, fmax(ya, yb));
  }
  if (n == 1 && fabs(axis_v(e[0], logx) - x) <= wx) lo = hi = axis_v(e[1], logy);
  return y >= lo - tol_y && y <= hi + tol_y;
}


static int increasing_x(const double *xy, long n) {
  for (long k = 1; k < n; k++)
    if (!(xy[2 * k] >= xy[2 * k - 2])) return 0;
  return 1;
}


/* Colour from the group, dash from the kind, markers where colours run out; then a series
 * lying exactly on an earlier one gets a marker of its own and says so in its label, and so
 * does a series hidden under later ones (HIDE_SHARE of its points under their lines); last,
 * no two series keep the same (colour, dash, marker, points). */
static void assign_styles(fl_fig_panel *p, const char *dir) {
  int explicit_kind = 0;
  for (int s = 0; s < p->nseries; s++) explicit_kind |= p->series[s].kind[0] != 0;
  const char *gkey[FL_FIG_MAX_SERIES], *kkey[FL_FIG_MAX_SERIES];
  int ng = 0, nk = 0;
  for (int s = 0; s < p->nseries; s++) {
    fl_fig_series *se = &p->series[s];
    const char *g = se->group[0] ? se->group : se->label, *k = se->kind;
    int gi = 0, ki = 0;
    while (gi < ng && strcmp(gkey[gi], g)) gi++;
    if (gi == ng) gkey[ng++] = g;
    while (ki < nk && strcmp(kkey[ki], k)) ki++;
    if (ki == nk) kkey[nk++] = k;
    se->color = gi % NCOLOR;
    // more groups than colours: the dash tells them apart unless it already stands for a
    // quantity, then a marker does
    se->dash = explicit_kind ? ki : gi / NCOLOR;
    se->marker = explicit_kind && gi >= NCOLOR ? 1 + (gi / NCOLOR) % (NMARKER - 1) : 0;
    if (se->points == FL_FIG_BARS) se->color = s % NCOLOR, se->dash = 0, se->marker = 0;
  }
  // curves hidden exactly under an earlier one
  double *pts[FL_FIG_MAX_SERIES];
  long npt[FL_FIG_MAX_SERIES];
  for (int s = 0; s < p->nseries; s++)
    npt[s] = p->series[s].points == FL_FIG_BARS ? -1
                                                : load_points(dir, &p->series[s], p->logx, p->logy,
                                                              &pts[s]);
  int next_marker = 2, dup_of[FL_FIG_MAX_SERIES];
  for (int s = 0; s < p->nseries; s++) dup_of[s] = -1;
  for (int s = 1; s < p->nseries; s++) {
    if (npt[s] <= 0) continue;
    for (int e = 0; e < s; e++) {
      if (npt[e] <= 0 || !same_points(pts[e], npt[e], pts[s], npt[s])) continue;
      fl_fig_series *se = &p->series[s];
      dup_of[s] = e;
      se->marker = next_marker;
      next_marker = next_marker + 1 < NMARKER ? next_marker + 1 : 2;
      // room for both labels, then cut to the label's size (a long pair loses its end)
      char lab[2 * sizeof se->label + 8];
      snprintf(lab, sizeof lab, "%s (on %s)", se->label, p->series[e].label);
      snprintf(se->label, sizeof se->label, "%.*s", (int)sizeof se->label - 1, lab);
      break;
    }
  }
  // curves hidden under later ones (near, not exactly equal): the panel's ranges in axis units
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (int s = 0; s < p->nseries; s++)
    for (long k = 0; k < npt[s]; k++) {
      double x = axis_v(pts[s][2 * k], p->logx), y = axis_v(pts[s][2 * k + 1], p->logy);
      x0 = fmin(x0, x), x1 = fmax(x1, x), y0 = fmin(y0, y), y1 = fmax(y1, y);
    }
  for (int r = 0; r < p->nref; r++)
    if (!p->logy || p->ref[r] > 0) {
      y0 = fmin(y0, axis_v(p->ref[r], p->logy));
      y1 = fmax(y1, axis_v(p->ref[r], p->logy));
    }
  double wx = HIDE_TOL_X * (x1 > x0 ? x1 - x0 : 1), ty = HIDE_TOL_Y * (y1 > y0 ? y1 - y0 : 1);
  for (int s = 0; s < p->nseries; s++) {
    fl_fig_series *se = &p->series[s];
    if (npt[s] <= 0 || se->marker) continue;
    long under = 0, by[FL_FIG_MAX_SERIES] = {0};
    for (long k = 0; k < npt[s]; k++) {
      double x = axis_v(pts[s][2 * k], p->logx), y = axis_v(pts[s][2 * k + 1], p->logy);
      int hit = 0;
      for (int e = s + 1; e < p->nseries; e++) {
        // an exact copy already says it lies on s
        if (npt[e] <= 0 || dup_of[e] == s || !increasing_x(pts[e], npt[e])) continue;
        if (under_line(pts[e], npt[e], x, y, wx, ty, p->logx, p->logy)) by[e]++, hit = 1;
      }
      under += hit;
    }
    if (under < HIDE_SHARE * npt[s]) continue;
    int top = s + 1;
    for (int e = s + 1; e < p->nseries; e++)
      if (by[e] > by[top]) top = e;
    se->marker = next_marker;
    next_marker = next_marker + 1 < NMARKER ? next_marker + 1 : 2;
    // the covering series named by the start of its label: a legend entry stays short enough
    // for gnuplot's key beside the frame
    char lab[2 * sizeof se->label + 16];
    const char *tl = p->series[top].label;
    snprintf(lab, sizeof lab, "%s (under %.32s%s%s)", se->label, tl, strlen(tl) > 32 ? "..." : "",
             by[top] < under ? " and others" : "");
    snprintf(se->label, sizeof se->label, "%.*s", (int)sizeof se->label - 1, lab);
  }
  for (int s = 0; s < p->nseries; s++)
    if (npt[s] >= 0) free(pts[s]);
  // the last guarantee: distinct styles (markers first, then dashes; 40 pairs per colour)
  for (int s = 1; s < p->nseries; s++)
    for (int e = 0, tries = 0; e < s && tries < 64; e++) {
      fl_fig_series *a = &p->series[e], *b = &p->series[s];
      if (a->color == b->color && a->dash % NDASH == b->dash % NDASH &&
          a->marker % NMARKER == b->marker % NMARKER && a->points == b->points) {
        if (++b->marker >= NMARKER) b->marker = 0, b->dash = (b->dash + 1) % NDASH;
        e = -1; // check again from the start
        tries++;
      }
    }
}


int fl_fig_render(const fl_fig *given, const char *dir) {
  fflush(NULL); // the recipes' CSV files are still open in the results folder
  // a series with nothing to draw gets no legend entry: it is named under its panel instead
  fl_fig *fig = fl_malloc(sizeof *fig);
  if (!fig) return fl_seterr(FL_ERR_NOMEM, "figure: out of memory");
  *fig = *given;
  for (int k = 0; k < fig->npanel; k++) {
    fl_fig_panel *p = &fig->panel[k];
    int keep = 0;
    p->not_drawn[0] = 0;
    for (int s = 0; s < p->nseries; s++) {
      if (drawable_points(dir, &p->series[s], p->logx, p->logy) > 0) {
        p->series[keep++] = p->series[s];
        continue;
      }
      char item[sizeof p->series[s].label + 2];
      snprintf(item, sizeof item, "%s%s", p->not_drawn[0] ? "; " : "", p->series[s].label);
      size_t u = strlen(p->not_drawn);
      if (u + strlen(item) < sizeof p->not_drawn) memcpy(p->not_drawn + u, item, strlen(item) + 1);
    }
    p->nseries = keep;
    assign_styles(p, dir);
  }
  int rc = render_spec(fig, dir);
  fl_free(fig);
  return rc;
}


static int render_spec(const fl_fig *fig, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/figure.json", dir);
  FL_TRY(write_json(fig, path));
  snprintf(path, sizeof path, "%s/figure.gp", dir);
  FL_TRY(write_data(fig, dir));
  FL_TRY(write_gnuplot(fig, path, dir));
  char *gp[] = {"gnuplot", "figure.gp", NULL};
  int rc = run_in(dir, gp);
  if (rc != 0)
    return fl_seterr(FL_ERR_LIBRARY, "%s: gnuplot figure.gp failed (exit %d): %s", dir, rc,
                     log_tail(dir));
  const char *py = getenv("FL_PYTHON");
  if (!py || !*py) py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  snprintf(path, sizeof path, "%s/plot_figure.py", scripts_dir());
  char *mp[] = {(char *)py, path, "figure.json", NULL};
  rc = run_in(dir, mp);
  if (rc != 0)
    return fl_seterr(FL_ERR_LIBRARY, "%s: matplotlib (%s %s) failed (exit %d): %s", dir, py,
                     path, rc, log_tail(dir));
  return FL_OK;
}

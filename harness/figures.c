/* figures.c: the figure registry, plot specifications and their rendering, and
 * `frictionlab reproduce`. See fl_figure.h. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fl_figure.h"

//---- the registry: every figure of PROBLEMS.md section 7 ----

static const fl_figure_recipe pend_macklin15 = {
  "macklin-fig15", "004", "four iterative linear solvers on one Newton system, two scenes", NULL,
  NULL, "the nsn solver's captured Newton systems and the heavy_stack and arch scenes"};
static const fl_figure_recipe pend_macklin18 = {
  "macklin-fig18", "004", "NCP preconditioning strategies on parabolic arch, table pile, heavy stack",
  NULL, NULL, "the nsn solver and the arch_parabolic, table_pile and heavy_stack scenes"};
static const fl_figure_recipe pend_macklin19 = {
  "macklin-fig19", "004", "inner linear solver per Newton iteration, three scenes", NULL, NULL,
  "the nsn solver with its six inner solvers and three scenes"};
static const fl_figure_recipe pend_macklin20 = {
  "macklin-fig20", "004", "arch and heavy stack stability by solver", NULL, NULL,
  "the nsn solver and the arch_parabolic and heavy_stack scenes"};
static const fl_figure_recipe pend_macklin22 = {
  "macklin-fig22", "004", "convergence quartiles over many steps, identity vs effective-mass scaling",
  NULL, NULL, "the nsn solver and a long scene run"};
static const fl_figure_recipe pend_han4 = {
  "han-fig4", "000", "cylinder press force against displacement, four meshes, reference", NULL,
  NULL, "FEM bodies (Mooney-Rivlin tetrahedra), which FrictionLab does not have yet"};
static const fl_figure_recipe pend_hantab1 = {
  "han-table1", "000", "scene statistics and real-time rates", NULL, NULL,
  "the arch_masonry scene, the cylinder press (FEM) and the sap solver"};
static const fl_figure_recipe pend_master5 = {
  "masterjohn-fig5", "002", "coin eps* against eps0", NULL, NULL,
  "hydroelastic contact patches and the spinning_coin scene"};
static const fl_figure_recipe pend_master6 = {
  "masterjohn-fig6", "002", "coin convergence in time step and mesh size", NULL, NULL,
  "hydroelastic contact patches and the spinning_coin scene"};

static const fl_figure_recipe *const registry[] = {
  &pend_macklin15, &pend_macklin18, &pend_macklin19, &pend_macklin20, &pend_macklin22,
  &fl_fig_macklin26, &fl_fig_macklin27, &fl_fig_macklin28, &fl_fig_macklin30, &fl_fig_macklin31,
  &pend_han4,      &fl_fig_han5,      &pend_hantab1,    &pend_master5,      &pend_master6,
  &fl_fig_zong3,     NULL};


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


void fl_fig_ref_add(fl_fig_panel *p, double y, const char *label) {
  if (p->nref >= FL_FIG_MAX_REFS) return;
  p->ref[p->nref] = y;
  snprintf(p->ref_label[p->nref], sizeof p->ref_label[0], "%s", label);
  p->nref++;
}


FILE *fl_fig_csv(fl_fig_ctx *ctx, const char *name, const char *header) {
  FILE *f = fl_results_file(ctx->res, name);
  if (f) fprintf(f, "%s\n", header);
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

/* gnuplot string literal: double quotes, with backslash and quote escaped */
static void gp_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
  fputc('"', f);
}


static int write_gnuplot(const fl_fig *fig, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return fl_seterr(FL_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  int cols = fig->npanel > 1 ? 2 : 1, rows = (fig->npanel + cols - 1) / cols;
  fprintf(f, "# Generated by frictionlab reproduce; run `gnuplot figure.gp` in this folder.\n");
  fprintf(f, "set terminal pngcairo size %d,%d enhanced font 'sans,10'\n", 640 * cols,
          440 * rows + 40);
  fprintf(f, "set output 'figure-gnuplot.png'\nset datafile separator ','\nset datafile columnheaders\n");
  fprintf(f, "set datafile missing 'nan'\nset grid\nset key top right font ',8'\n");
  fprintf(f, "set multiplot layout %d,%d title ", rows, cols);
  gp_str(f, fig->title);
  fprintf(f, " noenhanced\n");
  for (int k = 0; k < fig->npanel; k++) {
    const fl_fig_panel *p = &fig->panel[k];
    fprintf(f, "unset logscale\nset title ");
    gp_str(f, p->title);
    fprintf(f, " noenhanced\nset xlabel ");
    gp_str(f, p->xlabel);
    fprintf(f, " noenhanced\nset ylabel ");
    gp_str(f, p->ylabel);
    fprintf(f, " noenhanced\n");
    if (p->logx) fprintf(f, "set logscale x\nset format x '10^{%%L}'\n");
    else fprintf(f, "set format x '%%g'\n");
    if (p->logy) fprintf(f, "set logscale y\nset format y '10^{%%L}'\n");
    else fprintf(f, "set format y '%%g'\n");
    fprintf(f, "plot ");
    int first = 1;
    for (int s = 0; s < p->nseries; s++) {
      const fl_fig_series *se = &p->series[s];
      fprintf(f, "%s'%s' using ", first ? "" : ", \\\n     ", se->csv);
      gp_str(f, se->x);
      fprintf(f, ":");
      gp_str(f, se->y);
      fprintf(f, " with %s lw 2 title ",
              se->points == 1 ? "points pt 7 ps 0.8" : se->points == 2 ? "linespoints pt 7 ps 0.6" : "lines");
      gp_str(f, se->label);
      fprintf(f, " noenhanced");
      first = 0;
    }
    for (int r = 0; r < p->nref; r++) {
      fprintf(f, "%s%.17g with lines dt 2 lc rgb 'black' title ", first ? "" : ", \\\n     ",
              p->ref[r]);
      gp_str(f, p->ref_label[r]);
      fprintf(f, " noenhanced");
      first = 0;
    }
    if (first) fprintf(f, "NaN notitle");
    fprintf(f, "\n");
  }
  fprintf(f, "unset multiplot\n");
  if (fclose(f) != 0) return fl_seterr(FL_ERR_IO, "%s: write failed", path);
  return FL_OK;
}


static int write_json(const fl_fig *fig, const char *path) {
  cJSON *root = cJSON_CreateObject(), *panels = cJSON_AddArrayToObject(root, "panels");
  cJSON_AddStringToObject(root, "title", fig->title);
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
      cJSON_AddStringToObject(o, "style",
                              se->points == 1 ? "points" : se->points == 2 ? "linespoints" : "lines");
      cJSON_AddItemToArray(js, o);
    }
    cJSON *jr = cJSON_AddArrayToObject(jp, "refs");
    for (int r = 0; r < p->nref; r++) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddNumberToObject(o, "y", p->ref[r]);
      cJSON_AddStringToObject(o, "label", p->ref_label[r]);
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


int fl_fig_render(const fl_fig *fig, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/figure.json", dir);
  FL_TRY(write_json(fig, path));
  snprintf(path, sizeof path, "%s/figure.gp", dir);
  FL_TRY(write_gnuplot(fig, path));
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


//---- frictionlab reproduce ----

static void reproduce_usage(FILE *f) {
  fprintf(f,
          "usage: frictionlab reproduce FIGURE|all [--quick] [--out DIR] [--force]\n"
          "  Regenerates a paper figure: data (CSV), pictures (gnuplot PNG, matplotlib PNG and\n"
          "  PDF) and a manifest under DIR/<figure>/ (DIR defaults to results/figures).\n"
          "  --quick   a reduced version small enough for CI\n"
          "  --force   replace an existing figure folder\n"
          "  'frictionlab list figures' lists the figures and what unavailable ones need.\n");
}


static int reproduce_one(const fl_figure_recipe *r, const char *outdir, int quick, int force) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/%s", outdir, r->name);
  printf("%s (seed %s): %s%s\n", r->name, r->seed, r->what, quick ? " [quick]" : "");
  fl_results *res;
  int rc = fl_results_begin(dir, "reproduce", force, &res);
  if (rc < 0) {
    fprintf(stderr, "frictionlab reproduce: %s\n", fl_errmsg());
    return rc;
  }
  cJSON *man = fl_results_manifest(res);
  cJSON_AddStringToObject(man, "figure", r->name);
  cJSON_AddStringToObject(man, "seed", r->seed);
  cJSON_AddBoolToObject(man, "quick", quick);
  fl_fig fig;
  memset(&fig, 0, sizeof fig);
  snprintf(fig.title, sizeof fig.title, "%s: %s", r->name, r->what);
  fl_fig_ctx ctx = {res, quick, &fig, fl_results_file(res, "summary.txt")};
  double t0 = fl_time_now();
  rc = ctx.summary ? r->run(&ctx) : fl_errcode();
  if (rc >= 0) rc = fl_fig_render(&fig, fl_results_staging(res));
  if (rc < 0) {
    fprintf(stderr, "frictionlab reproduce %s: %s\n", r->name, fl_errmsg());
    fl_results_abort(res);
    return rc;
  }
  cJSON_AddNumberToObject(man, "seconds", fl_time_now() - t0);
  rc = fl_results_commit(res);
  if (rc < 0) {
    fprintf(stderr, "frictionlab reproduce %s: %s\n", r->name, fl_errmsg());
    return rc;
  }
  printf("  wrote %s/ (%.1f s)\n", dir, fl_time_now() - t0);
  return FL_OK;
}


int fl_cmd_reproduce(int argc, char **argv) {
  const char *which = NULL, *outdir = "results/figures";
  int quick = 0, force = 0;
  for (int k = 0; k < argc; k++) {
    if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
      reproduce_usage(stdout);
      return 0;
    } else if (strcmp(argv[k], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[k], "--force") == 0) {
      force = 1;
    } else if (strcmp(argv[k], "--out") == 0) {
      if (k + 1 >= argc) {
        fprintf(stderr, "frictionlab reproduce: --out needs a folder\n");
        return 2;
      }
      outdir = argv[++k];
    } else if (argv[k][0] == '-') {
      fprintf(stderr, "frictionlab reproduce: unknown argument '%s'\n", argv[k]);
      reproduce_usage(stderr);
      return 2;
    } else if (which) {
      fprintf(stderr, "frictionlab reproduce: one FIGURE or 'all', got '%s' and '%s'\n", which,
              argv[k]);
      return 2;
    } else {
      which = argv[k];
    }
  }
  if (!which) {
    reproduce_usage(stderr);
    return 2;
  }
  fl_register_all();
  if (strcmp(which, "all") != 0) {
    const fl_figure_recipe *r = fl_figure_find(which);
    if (!r) {
      fprintf(stderr, "frictionlab reproduce: unknown figure '%s' (valid:", which);
      for (int k = 0; registry[k]; k++) fprintf(stderr, " %s", registry[k]->name);
      fprintf(stderr, ", all)\n");
      return 2;
    }
    const char *why = fl_figure_missing(r);
    if (why) {
      fprintf(stderr, "frictionlab reproduce: %s is unavailable: it needs %s\n", r->name, why);
      return 1;
    }
    return reproduce_one(r, outdir, quick, force) < 0 ? 1 : 0;
  }
  int ok = 0, failed = 0, unavailable = 0;
  for (int k = 0; registry[k]; k++) {
    const fl_figure_recipe *r = registry[k];
    const char *why = fl_figure_missing(r);
    if (why) {
      printf("%s: unavailable (needs %s)\n", r->name, why);
      unavailable++;
      continue;
    }
    if (reproduce_one(r, outdir, quick, force) < 0) {
      failed++;
    } else {
      ok++;
    }
  }
  printf("reproduce all: %d written, %d failed, %d unavailable (in %s/)\n", ok, failed,
         unavailable, outdir);
  return failed ? 1 : 0;
}

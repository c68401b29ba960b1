// SPDX-License-Identifier: Apache-2.0
/* verify.c: `frictionlab verify`, cases with closed-form answers judged on the motion: the
 * command (flags, the table, the figure, the results folder); the engine that runs and judges
 * the cases is harness/verify/ (fl_verify.h, verify_impl.h).
 *
 * Each case is a small scene (generated as scene-file JSON by verify_cases.c, written into
 * the results folder so that `frictionlab run` replays it) and a judge that reads the probe
 * bodies' positions and velocities from the world after every step and compares them with the
 * answer of the time-stepping scheme itself: the stepper is semi-implicit Euler (v_{n+1} from
 * the impulses of the step, forces evaluated at the step's start t_n, x_{n+1} = x_n + dt
 * v_{n+1}), so an exact solver of the rigid contact problem reproduces a short recursion to
 * round-off (fl__verify_ref_*). The continuous closed forms and the discrete ones are derived
 * in docs/verify.md.
 *
 * Every case runs with every CPU solver at its defaults, with the settings docs/ recommend (as
 * separate rows) and with MuJoCo's three solvers where the scene can be written as MJCF.
 * A row's verdict per quantity: pass when |measured - expected| <= tol (relative to |expected|,
 * absolute when the expected value is 0), fail otherwise (NaN included), unsupported when the
 * solver or peer cannot take the scene, error when the step failed.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "../figures/fl_figure.h"
#include "fl_args.h"
#include "../fl_harness.h"
#include "../../peers/fl_peer.h"
#include "../verify/fl_verify.h"

#include "../verify/verify_impl.h"

#define NROWS fl__verify_nrows()
#define ROW(j) (*fl__verify_row(j))


//---- row labels ----

static void row_label(const vsolver *r, char *buf, size_t n) {
  if (*r->settings) snprintf(buf, n, "%s %s", r->solver, r->settings);
  else snprintf(buf, n, "%s", r->solver);
}


/* a short column label for the table: solver (abbreviated) and a row number for settings */
static void row_short(int i, char *buf, size_t n) {
  const vsolver *r = &ROW(i);
  const char *s = r->solver;
  const char *ab = !strcmp(s, "primal-descent") ? "primal" : !strcmp(s, "dual-descent") ? "dual"
                 : !strcmp(s, "mujoco-pgs") ? "mj-pgs" : !strcmp(s, "mujoco-cg") ? "mj-cg"
                 : !strcmp(s, "mujoco-newton") ? "mj-newt" : !strcmp(s, "drake-sap") ? "dk-sap"
                 : !strcmp(s, "drake-similar") ? "dk-sim" : !strcmp(s, "drake-lagged") ? "dk-lag"
                 : !strcmp(s, "drake-tamsi") ? "dk-tamsi" : !strcmp(s, "mujoco4-pgs") ? "mj4-pgs"
                 : !strcmp(s, "mujoco4-cg") ? "mj4-cg" : !strcmp(s, "mujoco4-newton") ? "mj4-newt" : s;
  char sc[16]; // Siconos's bridges: sc-<rest>, scg-<rest> for its global (gfc3d) ones
  if (!strncmp(s, "siconos-gfc3d-", 14)) snprintf(sc, sizeof sc, "scg-%.8s", s + 14), ab = sc;
  else if (!strncmp(s, "siconos-", 8)) snprintf(sc, sizeof sc, "sc-%.8s", s + 8), ab = sc;
  int variant = 0;
  for (int k = 0; k < i; k++)
    if (!strcmp(ROW(k).solver, s)) variant++;
  if (variant) snprintf(buf, n, "%.10s/%d", ab, variant);
  else snprintf(buf, n, "%s", ab);
}


//---- the command ----

/* the command line as declared (fl_args.h) */
typedef struct verify_cli {
  fl_arg_multi set_arg;
  int quick, force;
  const char *only, *solvers, *out;
} verify_cli;

#define A(m) offsetof(verify_cli, m)
static const fl_arg_desc verify_flags[] = {
  {"--quick", FL_ARG_FLAG, A(quick), 0, 0, NULL, NULL,
   "shorter runs, without the coin, the arches and Hertz (CI; check's baseline)"},
  {"--only", FL_ARG_STR, A(only), 0, 0, "LIST", NULL, "cases by name (see below)"},
  {"--solver", FL_ARG_STR, A(solvers), 0, 0, "LIST", NULL, "rows of these solvers or peers only"},
  {"--out", FL_ARG_STR, A(out), 0, 0, "DIR", NULL,
   "results folder (default results/verify/verify-<date>)"},
  {"--force", FL_ARG_FLAG, A(force), 0, 0, NULL, NULL, "replace an existing folder"},
  {"--set", FL_ARG_MULTI, A(set_arg), 0, 0, "k=v", NULL,
   "[solver.]key=value on top of every row's settings (mujoco.KEY for the peers); rows keep "
   "their names, so say so when reporting such a run (docs/usage.md, \"What --set means\")"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef A

static const char verify_about[] =
  "Runs cases with closed-form answers (a box sliding to rest, on a slope below, at and above\n"
  "its friction angle, dragged by a growing force; a sphere sliding into rolling and rolling\n"
  "down a slope; a block on a turntable; heavy on light; a compliant contact's sink; the\n"
  "coin's eps*; two masonry arches standing above and falling below their friction limits;\n"
  "Hertz line contact on a FEM cylinder; zong-fig6's FEM cube held by friction and squeezed\n"
  "without it; a block on a block; a tall box tipping or sliding; a resting stack and pyramid;\n"
  "a FEM block sliding to rest) with every registered solver at its defaults, with the\n"
  "settings docs/ recommend, and with MuJoCo's solvers where the scene can be written for\n"
  "them. Each quantity is judged on the motion (positions and velocities read from the\n"
  "world) against the time-stepping scheme's own answer or a published result\n"
  "(docs/verify.md).\n"
  "Writes verify.csv (case, solver, settings, quantity, expected, measured, rel_error,\n"
  "tolerance, verdict), summary.txt, the cases' scene files and a figure; prints the table.\n"
  "Exit 0 when it ran (failures are results), 2 on bad arguments.\n";


/* the command's spec, its notes listing the cases */
static const fl_cmd_spec *verify_spec(void) {
  static char notes[8192];
  static fl_cmd_spec spec = {"verify", NULL, 0, 0, verify_about, notes, verify_flags};
  if (!notes[0]) {
    size_t u = (size_t)snprintf(notes, sizeof notes, "cases:\n");
    for (int i = 0; i < NCASES && u < sizeof notes; i++)
      u += (size_t)snprintf(notes + u, sizeof notes - u, "  %-20s %s\n", fl__verify_cases[i].name,
                            fl__verify_cases[i].what);
  }
  return &spec;
}




/* collects rows for the command's outputs */
typedef struct vcollect {
  FILE *csv;
  int ncase, nrow;           /* table size (cases and rows selected) */
  int ci[FL_VERIFY_MAXCASES], ri[FL_VERIFY_MAXROWS]; /* selected indices */
  char cell[FL_VERIFY_MAXCASES][FL_VERIFY_MAXROWS][8];
  double ratio[FL_VERIFY_MAXCASES][FL_VERIFY_MAXROWS];
  int failed[FL_VERIFY_MAXCASES][FL_VERIFY_MAXROWS];
  int status[FL_VERIFY_MAXCASES][FL_VERIFY_MAXROWS];
  char msg[FL_VERIFY_MAXCASES][FL_VERIFY_MAXROWS][200];
  int npass, nfail, nunsup, nerror;
  FILE *fails; /* detail lines for summary.txt (a temporary stream) */
} vcollect;


static int case_index(const char *name) {
  for (int i = 0; i < NCASES; i++)
    if (!strcmp(fl__verify_cases[i].name, name)) return i;
  return -1;
}


static int row_index(const char *solver, const char *settings) {
  for (int j = 0; j < NROWS; j++)
    if (!strcmp(ROW(j).solver, solver) && !strcmp(ROW(j).settings, settings)) return j;
  return -1;
}


/* verify.csv's columns, read from an fl_verify_row (settings "" written as "defaults") */
#define V(m) offsetof(fl_verify_row, m)
static const fl_csv_col verify_cols[] = {
  {"case", FL_CSV_STR, V(case_name), 0},    {"solver", FL_CSV_STR, V(solver), 0},
  {"settings", FL_CSV_STR, V(settings), 0}, {"quantity", FL_CSV_STR, V(quantity), 0},
  {"expected", FL_CSV_REAL, V(expected), 0}, {"measured", FL_CSV_REAL, V(measured), 0},
  {"rel_error", FL_CSV_REAL, V(rel_error), 0}, {"tolerance", FL_CSV_REAL, V(tolerance), 0},
  {"verdict", FL_CSV_STR, V(verdict), 0},   {"steps", FL_CSV_INT, V(steps), 0},
  {"failed_steps", FL_CSV_INT, V(nfail), 0}};
#undef V
#define NVERIFY ((int)(sizeof verify_cols / sizeof verify_cols[0]))


static int collect_row(void *ctx, const fl_verify_row *vr) {
  vcollect *vc = ctx;
  fl_verify_row out = *vr;
  if (!*out.settings) out.settings = "defaults";
  fl_csv_row(vc->csv, verify_cols, NVERIFY, &out);
  int i = case_index(vr->case_name), j = row_index(vr->solver, vr->settings);
  if (i < 0 || j < 0) return FL_OK;
  vc->status[i][j] = vr->status;
  snprintf(vc->msg[i][j], sizeof vc->msg[i][j], "%s", vr->message ? vr->message : "");
  if (vr->status == 0) {
    double e = vr->rel_error / vr->tolerance;
    if (isnan(e)) e = INFINITY;
    if (!(e <= vc->ratio[i][j])) vc->ratio[i][j] = e;
    if (!vr->pass) {
      vc->failed[i][j] = 1;
      char lab[160];
      row_label(&ROW(j), lab, sizeof lab);
      fprintf(vc->fails, "  %-20s %-44s %-16s expected %-12.6g measured %-12.6g error %.3g (tolerance %.3g)\n",
              vr->case_name, lab, vr->quantity, vr->expected, vr->measured, vr->rel_error,
              vr->tolerance);
    }
  } else {
    vc->ratio[i][j] = NAN;
  }
  return FL_OK;
}


static void print_table(FILE *f, const vcollect *vc) {
  char sh[24];
  fprintf(f, "%-20s", "case");
  for (int b = 0; b < vc->nrow; b++) {
    row_short(vc->ri[b], sh, sizeof sh);
    fprintf(f, " %-8s", sh);
  }
  fprintf(f, "\n");
  for (int a = 0; a < vc->ncase; a++) {
    int i = vc->ci[a];
    fprintf(f, "%-20s", fl__verify_cases[i].name);
    for (int b = 0; b < vc->nrow; b++) {
      int j = vc->ri[b];
      const char *cell = vc->status[i][j] == 1 ? "unsup" : vc->status[i][j] == 2 ? "error"
                       : vc->failed[i][j] ? "FAIL" : "pass";
      fprintf(f, " %-8s", cell);
    }
    fprintf(f, "\n");
  }
  fprintf(f, "\ncolumns:\n");
  for (int b = 0; b < vc->nrow; b++) {
    char lab[160];
    row_short(vc->ri[b], sh, sizeof sh);
    row_label(&ROW(vc->ri[b]), lab, sizeof lab);
    fprintf(f, "  %-8s %s%s%s%s\n", sh, lab, ROW(vc->ri[b]).why ? " (" : "",
            ROW(vc->ri[b]).why ? ROW(vc->ri[b]).why : "", ROW(vc->ri[b]).why ? ")" : "");
  }
}


/* the figure: worst error/tolerance per case, one series (markers) per row, one panel per
 * family of solvers so that a panel's few colours stay distinct */
static int fig_group(const char *solver) {
  if (!strcmp(solver, "pgs") || !strcmp(solver, "jacobi")) return 0;
  if (strstr(solver, "descent")) return 1;
  if (!strcmp(solver, "sap") || !strncmp(solver, "drake", 5)) return 2;
  if (!strncmp(solver, "mujoco", 6)) return 4;
  return 3; /* nsn, prox */
}


/* a row of fig_<row>.csv: the case's place on the x axis, its name, worst error / tolerance */
typedef struct fig_row {
  int x;
  const char *name;
  double ratio;
} fig_row;
static const fl_csv_col fig_cols[3] = {{"x", FL_CSV_INT, offsetof(fig_row, x), 0},
                                       {"case", FL_CSV_STR, offsetof(fig_row, name), 0},
                                       {"ratio", FL_CSV_REAL, offsetof(fig_row, ratio), 0}};

static int write_figure(fl_results *res, const vcollect *vc, fl_fig *fig) {
  static const char *const title[5] = {"PGS and Jacobi", "primal and dual descent",
                                       "SAP (FrictionLab's, Drake's)", "NSN and PROX",
                                       "MuJoCo (peers)"};
  memset(fig, 0, sizeof *fig);
  snprintf(fig->title, sizeof fig->title, "frictionlab verify: worst error / tolerance per case "
           "(below 1 passes; no marker: unsupported)");
  fl_fig_panel *panel[5] = {NULL};
  for (int b = 0; b < vc->nrow; b++) {
    int j = vc->ri[b], g = fig_group(ROW(j).solver);
    if (!panel[g]) {
      panel[g] = fl_fig_panel_add(fig, title[g], "case", "error / tolerance", 0, 1);
      if (!panel[g]) return fl_seterr(FL_ERR_NOMEM, "verify: figure");
      fl_fig_ref_add(panel[g], 1.0, "tolerance");
      fl_fig_panel_xtics(panel[g], "case");
    }
    char name[64], lab[160], sh[24];
    row_short(j, sh, sizeof sh);
    for (char *q = sh; *q; q++)
      if (*q == '/') *q = '_';
    snprintf(name, sizeof name, "fig_%s.csv", sh);
    FILE *f = fl_results_file(res, name);
    if (!f) return FL_ERR_IO;
    fl_csv_header(f, fig_cols, 3);
    for (int a = 0; a < vc->ncase; a++) {
      int i = vc->ci[a];
      double r = vc->ratio[i][j];
      // a zero error is drawn at the bottom of the log axis; a NaN state far above
      if (r == 0) r = 1e-6;
      if (isinf(r)) r = 1e6;
      fig_row row = {a + 1, fl__verify_cases[i].name, isnan(r) ? r : fmax(r, 1e-6)};
      fl_csv_row(f, fig_cols, 3, &row);
    }
    if (fflush(f) != 0) return fl_seterr(FL_ERR_IO, "verify: %s: write failed", name);
    row_label(&ROW(j), lab, sizeof lab);
    fl_fig_series_add(panel[g], name, "x", "ratio", lab, 1);
  }
  return FL_OK;
}


int fl_cmd_verify(int argc, char **argv) {
  fl_verify_opts o = {0};
  static verify_cli cli;
  memset(&cli, 0, sizeof cli);
  int prc = fl_args_parse(verify_spec(), argc, argv, &cli);
  if (prc) return prc == 1 ? 0 : 2;
  for (int k = 0; k < cli.set_arg.n; k++) {
    if (!strchr(cli.set_arg.v[k], '=')) {
      fprintf(stderr, "frictionlab verify: --set %s: expected [solver.]key=value\n", cli.set_arg.v[k]);
      return 2;
    }
  }
  o.quick = cli.quick;
  o.only = cli.only;
  o.solvers = cli.solvers;
  o.nset = cli.set_arg.n;
  o.set = cli.set_arg.v;
  const char *outdir = cli.out;
  int force = cli.force;
  fl_register_all();
  vcollect *vc = fl_calloc(1, sizeof *vc);
  if (!vc) {
    fprintf(stderr, "frictionlab verify: out of memory\n");
    return 1;
  }
  // names must exist: a typo would silently select nothing
  char buf[512];
  int bad = 0;
  if (o.only) {
    snprintf(buf, sizeof buf, "%s", o.only);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
      if (case_index(t) < 0) {
        fprintf(stderr, "frictionlab verify: --only %s: no such case; expected one of:", t);
        for (int i = 0; i < NCASES; i++) fprintf(stderr, " %s", fl__verify_cases[i].name);
        fprintf(stderr, "\n");
        bad = 1;
      }
  }
  if (o.solvers) {
    snprintf(buf, sizeof buf, "%s", o.solvers);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
      int found = 0;
      for (int j = 0; j < NROWS; j++) found |= !strcmp(ROW(j).solver, t);
      if (!found) {
        fprintf(stderr, "frictionlab verify: --solver %s: not one of the suite's solvers:", t);
        for (int j = 0; j < NROWS; j++)
          if (j == 0 || strcmp(ROW(j).solver, ROW(j - 1).solver)) fprintf(stderr, " %s", ROW(j).solver);
        fprintf(stderr, "\n");
        bad = 1;
      }
    }
  }
  if (bad) {
    fl_free(vc);
    return 2;
  }
  for (int i = 0; i < NCASES; i++)
    if (fl_list_has(o.only, fl__verify_cases[i].name) && (!o.quick || fl__verify_cases[i].quick)) vc->ci[vc->ncase++] = i;
  for (int j = 0; j < NROWS; j++)
    if (fl_list_has(o.solvers, ROW(j).solver)) vc->ri[vc->nrow++] = j;

  char out[1024];
  if (outdir) snprintf(out, sizeof out, "%s", outdir);
  else fl_results_default_dir("results/verify/verify", out, sizeof out);
  fl_results *res = NULL;
  int rc = fl_results_begin(out, "verify", force, &res);
  if (rc < 0) {
    fprintf(stderr, "frictionlab verify: %s\n", fl_errmsg());
    fl_free(vc);
    return rc == FL_ERR_INVAL ? 2 : 1;
  }
  vc->csv = fl_results_file(res, "verify.csv");
  FILE *sum = fl_results_file(res, "summary.txt");
  vc->fails = tmpfile();
  if (!vc->csv || !sum || !vc->fails) {
    fprintf(stderr, "frictionlab verify: %s\n", fl_errmsg());
    goto fail;
  }
  fl_csv_header(vc->csv, verify_cols, NVERIFY);
  // each case's scene, replayable with `frictionlab run`
  {
    char path[1200];
    snprintf(path, sizeof path, "%s/cases", fl_results_staging(res));
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
      fl_seterr(FL_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
      fprintf(stderr, "frictionlab verify: %s\n", fl_errmsg());
      goto fail;
    }
    for (int a = 0; a < vc->ncase; a++) {
      const vcase *c = &fl__verify_cases[vc->ci[a]];
      snprintf(path, sizeof path, "%s/cases/%s.json", fl_results_staging(res), c->name);
      if (fl__verify_write_case(c, o.quick, path) < 0) {
        fprintf(stderr, "frictionlab verify: %s: %s\n", path, fl_errmsg());
        goto fail;
      }
    }
  }
  double t0 = fl_time_now();
  rc = fl__verify_run(&o, collect_row, vc);
  if (rc < 0) {
    fprintf(stderr, "frictionlab verify: %s\n", fl_errmsg());
    goto fail;
  }
  double wall = fl_time_now() - t0;
  // totals per (case, row)
  int npass = 0, nfail = 0, nun = 0, nerr = 0;
  for (int a = 0; a < vc->ncase; a++)
    for (int b = 0; b < vc->nrow; b++) {
      int i = vc->ci[a], j = vc->ri[b];
      if (vc->status[i][j] == 1) nun++;
      else if (vc->status[i][j] == 2) nerr++;
      else if (vc->failed[i][j]) nfail++;
      else npass++;
    }
  FILE *outs[2] = {stdout, sum};
  for (int k = 0; k < 2; k++) {
    FILE *f = outs[k];
    fprintf(f, "frictionlab verify%s: %d cases x %d solver rows in %.1f s: %d pass, %d fail, "
            "%d unsupported, %d error (a row passes a case when every quantity is within its "
            "tolerance)\n\n", o.quick ? " --quick" : "", vc->ncase, vc->nrow, wall, npass, nfail,
            nun, nerr);
    print_table(f, vc);
  }
  // failures and reasons in the summary
  fprintf(sum, "\nfailed quantities:\n");
  rewind(vc->fails);
  char line[512];
  while (fgets(line, sizeof line, vc->fails)) fputs(line, sum);
  fprintf(sum, "\nunsupported or error:\n");
  for (int a = 0; a < vc->ncase; a++)
    for (int b = 0; b < vc->nrow; b++) {
      int i = vc->ci[a], j = vc->ri[b];
      if (vc->status[i][j] == 0) continue;
      char lab[160];
      row_label(&ROW(j), lab, sizeof lab);
      fprintf(sum, "  %-20s %-44s %s: %s\n", fl__verify_cases[i].name, lab,
              vc->status[i][j] == 1 ? "unsupported" : "error", vc->msg[i][j]);
    }
  fl_fig fig;
  rc = write_figure(res, vc, &fig);
  if (rc < 0) {
    fprintf(stderr, "frictionlab verify: %s\n", fl_errmsg());
    goto fail;
  }
  // a missing plotting tool costs the picture, not the verdicts
  if (fl_fig_render(&fig, fl_results_staging(res)) < 0)
    fprintf(stderr, "frictionlab verify: figure not drawn: %s\n", fl_errmsg());
  cJSON *man = fl_results_manifest(res);
  cJSON_AddBoolToObject(man, "quick", o.quick);
  cJSON_AddNumberToObject(man, "pass", npass);
  cJSON_AddNumberToObject(man, "fail", nfail);
  cJSON_AddNumberToObject(man, "unsupported", nun);
  cJSON_AddNumberToObject(man, "error", nerr);
  // the peers' simulators and versions (docs/peers.md), as run and bench record them
  for (int b = 0; b < vc->nrow; b++) {
    const char *pn = ROW(vc->ri[b]).solver;
    char js[2048];
    if (!fl_peer_find(pn) || fl_peer_options_resolve(pn, 0, NULL, js, sizeof js) < 0) continue;
    cJSON *peers = cJSON_GetObjectItem(man, "peers");
    if (!peers) peers = cJSON_AddObjectToObject(man, "peers");
    cJSON *pj = cJSON_Parse(js);
    if (peers && pj && !cJSON_GetObjectItem(peers, pn)) cJSON_AddItemToObject(peers, pn, pj);
    else cJSON_Delete(pj);
  }
  fclose(vc->fails);
  vc->fails = NULL;
  if (fl_results_commit(res) < 0) {
    fprintf(stderr, "frictionlab verify: %s\n", fl_errmsg());
    fl_free(vc);
    return 1;
  }
  printf("\nverify written to %s (verify.csv, summary.txt, figure.png, cases/*.json)\n", out);
  fl_free(vc);
  return 0;
fail:
  if (vc->fails) fclose(vc->fails);
  fl_results_abort(res);
  fl_free(vc);
  return 1;
}

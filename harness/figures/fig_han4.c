// SPDX-License-Identifier: Apache-2.0
/* fig_han4.c: seed 000 Fig. 4 (the rubber cylinder press, force per unit length against total
 * plate approach for four meshes, with the published reference) and seed 000 Table I / Fig. 2
 * (scene statistics, real-time rates and where the time goes).
 *
 * Both run scenes through scene_stats(), which steps a canonical scene with SAP at the seed's
 * tolerance (relative 1e-6; han-fig4 with near-rigid contact, beta 0.01), writes one CSV row
 * per step (time, contacts, iterations, the scene's press observables when it has them, the
 * stage times, the contacts' overlap) and totals what Table I and Fig. 2 report. han-fig4's
 * approach is the plate travel less the contacts' overlap (docs/fem.md). Process CPU time (all threads) is what the real-time rate divides by, so a
 * rate is per core even when the element loop runs on several threads.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../../sim/fl_fem.h"
#include "../../sim/fl_loop.h"
#include "fl_figure.h"
#include "../run/fl_run.h"

/* The figure's tables, each declared once (header and rows from one column list). */
typedef struct press_row {
  double t, approach, force, geometry_s, schur_s, element_s, sap_s, step_s, overlap,
    approach_rigid; /* s, m, MN/m, s (5 times), m, m */
  int contacts, iters;
} press_row; /* mesh<N>.csv: one row per step */
#define R(m) offsetof(press_row, m)
static const fl_csv_col press_cols[] = {
  {"t", FL_CSV_G, R(t), 6},                     {"contacts", FL_CSV_INT, R(contacts), 0},
  {"iterations", FL_CSV_INT, R(iters), 0},      {"approach_m", FL_CSV_G, R(approach), 9},
  {"force_MN_per_m", FL_CSV_G, R(force), 9},    {"geometry_s", FL_CSV_G, R(geometry_s), 4},
  {"schur_s", FL_CSV_G, R(schur_s), 4},         {"element_s", FL_CSV_G, R(element_s), 4},
  {"sap_s", FL_CSV_G, R(sap_s), 4},             {"step_s", FL_CSV_G, R(step_s), 4},
  {"overlap_m", FL_CSV_G, R(overlap), 9},
  {"approach_rigid_m", FL_CSV_G, R(approach_rigid), 9}};
/* reference.csv, vm201.csv: a force against approach curve */
static const fl_csv_col curve_cols[] = {{"approach_m", FL_CSV_G, R(approach), 6},
                                        {"force_MN_per_m", FL_CSV_G, R(force), 6}};
#undef R
typedef struct target_row {
  int mesh, tets;
  double approach, force, vm201, rel_err, reference, rel_err_reference, overlap, force_travel;
} target_row; /* targets.csv: per mesh and VM201 target (m, MN/m, MN/m, -, MN/m, -, m, MN/m) */
#define R(m) offsetof(target_row, m)
static const fl_csv_col target_cols[] = {
  {"mesh", FL_CSV_INT, R(mesh), 0},
  {"tets", FL_CSV_INT, R(tets), 0},
  {"approach_m", FL_CSV_F, R(approach), 3},
  {"force_MN_per_m", FL_CSV_G, R(force), 6},
  {"vm201_MN_per_m", FL_CSV_F, R(vm201), 3},
  {"rel_err", FL_CSV_G, R(rel_err), 4},
  {"reference_MN_per_m", FL_CSV_G, R(reference), 4},
  {"rel_err_reference", FL_CSV_G, R(rel_err_reference), 4},
  {"overlap_m", FL_CSV_G, R(overlap), 4},
  {"force_at_travel_MN_per_m", FL_CSV_G, R(force_travel), 6}};
#undef R
#define NCOLS(c) (int)(sizeof c / sizeof c[0])

/* The references, read from the shared reference folder (fl_fig_reference_csv):
 * Bijelonja, Demirdzic and Muzaferija (2005), the finite-volume solution of the rubber cylinder
 * (R 0.2 m, Mooney-Rivlin c1 0.293 MPa, c2 0.177 MPa, K 1410 MPa, plane strain, frictionless
 * rigid plates), seed 000's reference [46]: total plate approach (m) and force per unit length
 * (MN/m), the solids4foam copy of the data; and ANSYS VM201's two targets (from Sussman and
 * Bathe 1987): 0.25 MN/m at 0.1 m, 1.40 MN/m at 0.2 m. */
#define BIJ_FILE "cylinder_bijelonja2005_force_vs_total_displacement.csv"
#define VM201_FILE "cylinder_vm201_targets.csv"
enum { REF_CAP = 256 };

typedef struct han4_refs {
  double bij_d[REF_CAP], bij_f[REF_CAP];
  int nbij;
  double vm201_d[2], vm201_f[2];
} han4_refs;


static int refs_load(han4_refs *r) {
  int n = fl_fig_reference_csv(BIJ_FILE, "total_displacement_m", "force_per_length_MN_per_m",
                               r->bij_d, r->bij_f, REF_CAP);
  if (n < 0) return n;
  r->nbij = n;
  n = fl_fig_reference_csv(VM201_FILE, "total_displacement_m", "force_MN_per_m", r->vm201_d,
                           r->vm201_f, 2);
  if (n < 0) return n;
  if (n != 2) return fl_seterr(FL_ERR_FORMAT, "%s: expected two targets, found %d", VM201_FILE, n);
  return FL_OK;
}


/* NULL when the reference curves can be read, else why not. */
static const char *han4_missing(void) {
  static char why[512];
  han4_refs *r = fl_malloc(sizeof *r);
  if (!r) return "out of memory";
  int rc = refs_load(r);
  fl_free(r);
  if (rc >= 0) return NULL;
  snprintf(why, sizeof why, "%s", fl_errmsg());
  return why;
}


/* Totals of one run (Table I's columns and Fig. 2's split). */
typedef struct scene_stats_t {
  int steps, nfail;
  fl_int dofs;            /* 6 per dynamic rigid body + 3 per vertex of deformable bodies */
  fl_int cmax;            /* largest number of contact constraints in a step */
  double cmean;           /* mean over steps */
  double sim_s, cpu_s;    /* simulated time, process CPU time (s) */
  double wall_s;          /* wall time of the steps (s) */
  double geometry_s, schur_s, element_s, sap_s, other_s; /* wall time per stage (s) */
  fl_int ntet;
  /* press runs: approach (m, the plate's travel), force (MN/m) and the contacts' overlap at
   * the plate and the support (m) per step (owned, NULL otherwise) */
  double *approach, *force, *overlap;
} scene_stats_t;


static void stats_free(scene_stats_t *st) {
  fl_free(st->approach);
  fl_free(st->force);
  fl_free(st->overlap);
  st->approach = st->force = st->overlap = NULL;
}


/* SAP's settings: the seed's tolerance; the press adds near-rigid contact (docs/fem.md: with
 * the default beta = 1 the light plate sinks up to 10 mm into the cylinder) */
#define SAP_OPTS "rel_tol=1e-6"
#define SAP_OPTS_PRESS "rel_tol=1e-6,beta=0.01"

/* one press or scene run as the stepping loop sees it */
typedef struct han_step_ctx {
  const fl_loop *loop;   /* its step_s: the step call's wall time */
  fl_fig_rec *rec;       /* the recording (frames only when a CSV is written) */
  FILE *f;               /* the CSV, or NULL */
  scene_stats_t *st;
  fl_int iforce, iappr, iover; /* observables press_force, press_approach, press_overlap */
  double stop;           /* stop once the approach less the overlap passes it (m; 0: never) */
  double csum;           /* contacts summed over steps */
} han_step_ctx;


static int han_frame(void *ctx, fl_world *w, long step, const fl_step_info *info) {
  return fl_fig_record_step(((han_step_ctx *)ctx)->rec, w, step, info);
}


static int han_each(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  han_step_ctx *c = ctx;
  scene_stats_t *st = c->st;
  double dt_wall = c->loop->step_s;
  fl_fem_timing ft;
  fl_world_fem_timing(w, &ft);
  double geo = info->collide_s + ft.geometry_s, sch = ft.schur_s + ft.recover_s;
  st->geometry_s += geo;
  st->schur_s += sch;
  st->element_s += ft.element_s;
  st->sap_s += info->solve_s;
  st->wall_s += dt_wall;
  if (info->nc > st->cmax) st->cmax = info->nc;
  c->csum += (double)info->nc;
  double ap = c->iappr >= 0 ? val[c->iappr] : NAN, fo = c->iforce >= 0 ? 1e-6 * val[c->iforce] : NAN;
  double ov = c->iover >= 0 ? val[c->iover] : NAN;
  if (st->approach) {
    st->approach[k] = ap;
    st->force[k] = fo;
    st->overlap[k] = ov;
  }
  if (c->f) {
    press_row row = {info->t, ap, fo, geo, sch, ft.element_s, info->solve_s, dt_wall, ov, ap - ov,
                     (int)info->nc, info->res.iters};
    fl_csv_row(c->f, press_cols, NCOLS(press_cols), &row);
  }
  return c->stop > 0 && ap - ov > c->stop ? FL_LOOP_STOP : FL_OK;
}


/* Runs `scene` with overrides `set` ("k=v,k=v") for `duration` s (0: the scene's) with SAP and
 * the options `opts`, writing `csv` (NULL: no file); a press run stops early once its
 * approach less the contacts' overlap passes `stop` m (0: never); `manifest_csv` non-NULL
 * records the run in the figure's manifest under that name. Returns FL_OK or the first
 * error of the scene, the solver or a step (a step that fails stops the run: the error names
 * it). */
static int scene_stats(fl_fig_ctx *ctx, const char *csv, const char *scene, const char *set,
                       const char *opts, double duration, double stop, scene_stats_t *st,
                       const char *manifest_csv) {
  memset(st, 0, sizeof *st);
  char sbuf[1024];
  const char *sset[32];
  int ns = fl_split_list(set, sbuf, sizeof sbuf, sset, 32);
  if (ns < 0) return ns;
  FILE *f = NULL;
  fl_run_spec sp = {.scene = scene, .nscene = ns, .scene_set = sset,
                    .flags = FL_RUN_NO_METRICS | FL_RUN_NO_GEOMETRY, .stepper = "sap",
                    .opts = opts, .steps = -1, .duration = duration, .observe = 1,
                    .frame = han_frame, .each = han_each};
  fl_run run;
  int rc = fl_run_open(&sp, &run);
  if (rc < 0) return rc;
  fl_world *w = run.world;
  fl_int nobs = fl_world_nobs(w), iforce = -1, iappr = -1, iover = -1;
  for (fl_int i = 0; i < nobs; i++) {
    if (!strcmp(fl_world_obs_name(w, i), "press_force")) iforce = i;
    if (!strcmp(fl_world_obs_name(w, i), "press_approach")) iappr = i;
    if (!strcmp(fl_world_obs_name(w, i), "press_overlap")) iover = i;
  }
  int steps = (int)run.steps;
  for (fl_int b = 0; b < w->nbody; b++) st->dofs += w->body[b].kind == FL_BODY_DYNAMIC ? 6 : 0;
  for (fl_int k = 0; k < w->nfem; k++) {
    st->dofs += w->fem[k]->ndof;
    st->ntet += w->fem[k]->mesh->ntet;
  }
  if (rc >= 0 && iforce >= 0) {
    st->approach = fl_malloc((size_t)(steps + 1) * sizeof(double));
    st->force = fl_malloc((size_t)(steps + 1) * sizeof(double));
    st->overlap = fl_malloc((size_t)(steps + 1) * sizeof(double));
    if (!st->approach || !st->force || !st->overlap)
      rc = fl_seterr(FL_ERR_NOMEM, "figure: out of memory");
  }
  if (rc >= 0 && csv) {
    f = fl_fig_table(ctx, csv, press_cols, NCOLS(press_cols));
    if (!f) rc = fl_errcode();
  }
  // a figure's run (csv given) is recorded for the viewer: <csv stem>.flrec and .html
  fl_fig_rec rec = {.ctx = ctx, .steps = steps};
  han_step_ctx c = {&run.loop, &rec, f, st, iforce, iappr, iover, stop, 0};
  run.spec.ctx = &c;
  if (rc >= 0 && csv) {
    snprintf(rec.stem, sizeof rec.stem, "%s", csv);
    char *dot = strrchr(rec.stem, '.');
    if (dot) *dot = 0;
    snprintf(rec.label, sizeof rec.label, "sap %s", opts);
    run.spec.frame_every = fl_fig_record_every(&rec, w);
  }
  double cpu0 = fl_cpu_now();
  if (rc >= 0) rc = fl_run_go(&run);
  st->steps = (int)run.loop.taken;
  st->nfail = (int)run.loop.failed;
  double csum = c.csum;
  st->cpu_s = fl_cpu_now() - cpu0;
  rc = fl_fig_record_end(&rec, rc);
  st->sim_s = st->steps * w->dt;
  st->cmean = st->steps ? csum / st->steps : 0;
  st->other_s = st->wall_s - st->geometry_s - st->schur_s - st->element_s - st->sap_s;
  if (st->other_s < 0) st->other_s = 0;
  if (rc >= 0 && manifest_csv)
    fl_fig_manifest_run(ctx, manifest_csv, scene, set, run.solver, st->sim_s, st->steps,
                        st->nfail);
  fl_run_close(&run);
  if (rc < 0) stats_free(st);
  return rc < 0 ? rc : FL_OK;
}


/* y at x on the polyline (x ascending in the part that matters; the first crossing), NAN when
 * x is outside the range. */
static double interp(const double *xs, const double *ys, int n, double x) {
  for (int i = 1; i < n; i++) {
    double a = xs[i - 1], b = xs[i];
    if ((a <= x && x <= b) && b > a) return ys[i - 1] + (ys[i] - ys[i - 1]) * (x - a) / (b - a);
  }
  return NAN;
}


//---- han-fig4 ----

/* What the figure needs of one mesh's run; plain data, so that a worker process can send it
 * through a pipe. */
typedef struct mesh_result {
  int rc;                /* FL_OK or the run's error code */
  char err[512];         /* the error's message when rc < 0 */
  int steps, nfail, ntet;
  double cpu_s, sim_s;   /* process CPU time of the run, simulated time (s) */
  double f_at[2];        /* force (MN/m) at the targets' approach, measured as the plate travel
                            minus the contacts' overlap; NAN where the run did not get there */
  double f_travel[2];    /* the same at the plate travel itself (the overlap counted) */
  double ov_at[2];       /* the overlap (m) where f_at was read */
  double last_approach;  /* travel minus overlap at the last step (m) */
} mesh_result;


/* Runs mesh m of the press (writes mesh<m>.csv and its recording) and fills out; d: the
 * two target approaches (m). A run stops once its approach less the overlap passes STOP_PAST
 * beyond the farther target. */
#define STOP_PAST 0.005
static void mesh_run(fl_fig_ctx *ctx, int m, double force, double ramp, const double d[2],
                     mesh_result *out) {
  memset(out, 0, sizeof *out);
  char set[160], csv[32];
  snprintf(set, sizeof set, "mesh=%d,force=%g,ramp=%g,duration=%g", m, force, ramp, ramp);
  snprintf(csv, sizeof csv, "mesh%d.csv", m);
  scene_stats_t st;
  out->rc = scene_stats(ctx, csv, "cylinder_press", set, SAP_OPTS_PRESS, ramp,
                        fmax(d[0], d[1]) + STOP_PAST, &st, NULL);
  if (out->rc < 0) {
    snprintf(out->err, sizeof out->err, "%s", fl_errmsg());
    return;
  }
  out->steps = st.steps;
  out->nfail = st.nfail;
  out->ntet = (int)st.ntet;
  out->cpu_s = st.cpu_s;
  out->sim_s = st.sim_s;
  // the cylinder's own compression: the plate travel less the overlap at both contacts
  for (int i = 0; i < st.steps; i++) st.approach[i] -= st.overlap[i];
  for (int k = 0; k < 2; k++) {
    out->f_at[k] = interp(st.approach, st.force, st.steps, d[k]);
    out->ov_at[k] = interp(st.approach, st.overlap, st.steps, d[k]);
  }
  out->last_approach = st.steps ? st.approach[st.steps - 1] : NAN;
  for (int i = 0; i < st.steps; i++) st.approach[i] += st.overlap[i];
  for (int k = 0; k < 2; k++) out->f_travel[k] = interp(st.approach, st.force, st.steps, d[k]);
  stats_free(&st);
}


/* Runs meshes 1..n into res[0..n-1]: in this process, or with ctx->jobs > 1 in up to that many
 * worker processes at once, the finest mesh first (it takes longest). A worker writes its
 * mesh's files into the figure's staging folder and sends its mesh_result through a pipe; its
 * FEM loop runs on one thread, since the workers already share the cores. Returns FL_OK or
 * the error of a fork or a worker that ended without a result. */
static int run_meshes(fl_fig_ctx *ctx, int n, double force, double ramp, const double d[2],
                      mesh_result *res) {
  if (ctx->jobs <= 1) {
    for (int m = 1; m <= n; m++) mesh_run(ctx, m, force, ramp, d, &res[m - 1]);
    return FL_OK;
  }
  int fd[8];
  pid_t pid[8] = {0};
  int running = 0, rc = FL_OK;
  fflush(NULL); // nothing buffered may be written twice
  for (int m = n; m >= 1 && rc >= 0; m--) {
    if (running == ctx->jobs) {
      while (waitpid(-1, NULL, 0) < 0 && errno == EINTR) {}
      running--;
    }
    int p[2];
    if (pipe(p) != 0) {
      rc = fl_seterr(FL_ERR_IO, "han-fig4: pipe: %s", strerror(errno));
      break;
    }
    pid_t c = fork();
    if (c < 0) {
      close(p[0]);
      close(p[1]);
      rc = fl_seterr(FL_ERR_IO, "han-fig4: fork: %s", strerror(errno));
      break;
    }
    if (c == 0) {
      close(p[0]);
#ifdef _OPENMP
      omp_set_num_threads(1);
#endif
      mesh_result r;
      mesh_run(ctx, m, force, ramp, d, &r);
      fflush(NULL);
      const char *b = (const char *)&r;
      size_t left = sizeof r;
      while (left > 0) {
        ssize_t w = write(p[1], b, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(1);
        b += w;
        left -= (size_t)w;
      }
      _exit(0);
    }
    close(p[1]);
    fd[m - 1] = p[0];
    pid[m - 1] = c;
    running++;
  }
  // every worker started gets read and reaped, also after an error
  for (int m = n; m >= 1; m--) {
    if (!pid[m - 1]) continue;
    size_t got = 0;
    char *b = (char *)&res[m - 1];
    while (got < sizeof res[m - 1]) {
      ssize_t r = read(fd[m - 1], b + got, sizeof res[m - 1] - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += (size_t)r;
    }
    close(fd[m - 1]);
    int status = 0;
    while (waitpid(pid[m - 1], &status, 0) < 0 && errno == EINTR) {}
    if (got != sizeof res[m - 1] && rc >= 0)
      rc = fl_seterr(FL_ERR_STATE, "han-fig4: the worker of mesh %d ended without a result "
                     "(%s %d)", m, WIFSIGNALED(status) ? "signal" : "exit status",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  }
  return rc;
}


/* The figure on the references rf: runs the meshes, writes the CSVs and the summary. */
static int han4_body(fl_fig_ctx *ctx, const han4_refs *rf, int nmesh, double force, double ramp) {
  const double *vm_d = rf->vm201_d, *vm_f = rf->vm201_f;
  // the title names the meshes drawn: 1-4 at full size, 1-2 at medium and quick size
  char title[96];
  snprintf(title, sizeof title, "rubber cylinder press (plane strain), meshes 1-%d", nmesh);
  fl_fig_panel *p = fl_fig_panel_add(ctx->fig, title,
                                     "total approach of the plates less the contacts' overlap (m)",
                                     "force per unit length (MN/m)", 0, 0);
  FILE *ref = fl_fig_table(ctx, "reference.csv", curve_cols, NCOLS(curve_cols));
  if (!ref) return fl_errcode();
  for (int i = 0; i < rf->nbij; i++) {
    press_row row = {.approach = rf->bij_d[i], .force = rf->bij_f[i]};
    fl_csv_row(ref, curve_cols, NCOLS(curve_cols), &row);
  }
  FILE *vm = fl_fig_table(ctx, "vm201.csv", curve_cols, NCOLS(curve_cols));
  if (!vm) return fl_errcode();
  for (int i = 0; i < 2; i++) {
    press_row row = {.approach = vm_d[i], .force = vm_f[i]};
    fl_csv_row(vm, curve_cols, NCOLS(curve_cols), &row);
  }
  FILE *tab = fl_fig_table(ctx, "targets.csv", target_cols, NCOLS(target_cols));
  if (!tab) return fl_errcode();
  fl_fig_say(ctx, "load %.2f MN/m ramped over %g s (stopped 5 mm past %.1f m), dt 0.01 s, SAP "
             "%s%s", 1e-6 * force, ramp, vm_d[1], SAP_OPTS_PRESS,
             ctx->quick ? " (quick: meshes 1-2, not the seed's load)"
             : ctx->tier == FL_FIG_MEDIUM ? " (medium: meshes 1-2, the seed's load over a tenth "
                                            "of its ramp)" : "");
  fl_fig_say(ctx, "approach = plate travel less the contacts' overlap at the plate and the "
             "ground (press_overlap; near-rigid contact keeps it to micrometres); in brackets "
             "the force at the plate travel itself");
  if (ctx->jobs > 1)
    fl_fig_say(ctx, "meshes run in %d worker processes at once, each on one thread",
               ctx->jobs < nmesh ? ctx->jobs : nmesh);
  mesh_result res[4];
  memset(res, 0, sizeof res);
  FL_TRY(run_meshes(ctx, nmesh, force, ramp, vm_d, res));
  double err_prev = NAN;
  for (int m = 1; m <= nmesh; m++) {
    const mesh_result *r = &res[m - 1];
    if (r->rc < 0) return fl_seterr(r->rc, "%s", r->err);
    char csv[32], label[64];
    snprintf(csv, sizeof csv, "mesh%d.csv", m);
    snprintf(label, sizeof label, "mesh %d (%d tets)", m, r->ntet);
    fl_fig_series_add(p, csv, "approach_rigid_m", "force_MN_per_m", label, 0);
    for (int k = 0; k < 2; k++) {
      double fv = r->f_at[k];
      double fr = interp(rf->bij_d, rf->bij_f, rf->nbij, vm_d[k]);
      double e = (fv - vm_f[k]) / vm_f[k], er = (fv - fr) / fr;
      target_row row = {m, r->ntet, vm_d[k], fv, vm_f[k], e, fr, er, r->ov_at[k], r->f_travel[k]};
      fl_csv_row(tab, target_cols, NCOLS(target_cols), &row);
      if (isfinite(fv))
        fl_fig_say(ctx, "mesh %d (%4d tets): %.4f MN/m at %.1f m (overlap %.1f um; at the plate "
                   "travel %.4f), VM201 %.2f: %+6.2f %%, reference curve %.3f: %+6.2f %%", m,
                   r->ntet, fv, vm_d[k], 1e6 * r->ov_at[k], r->f_travel[k], vm_f[k], 100 * e, fr,
                   100 * er);
      else
        fl_fig_say(ctx, "mesh %d (%4d tets): the run did not reach %.1f m (largest approach "
                   "%.4f m)", m, r->ntet, vm_d[k], r->last_approach);
      if (k == 1 && isfinite(e)) {
        if (isfinite(err_prev))
          fl_fig_say(ctx, "  error at 0.2 m %s under refinement (%.2f %% -> %.2f %%)",
                     fabs(e) < fabs(err_prev) ? "falls" : "does not fall", 100 * fabs(err_prev),
                     100 * fabs(e));
        err_prev = e;
      }
    }
    fl_fig_say(ctx, "mesh %d: %d steps (%d failed) in %.1f s CPU: real-time rate %.3f", m,
               r->steps, r->nfail, r->cpu_s, r->sim_s / r->cpu_s);
  }
  fl_fig_series_add(p, "reference.csv", "approach_m", "force_MN_per_m",
                    "Bijelonja et al. 2005 (finite volumes)", 2);
  fl_fig_series_add(p, "vm201.csv", "approach_m", "force_MN_per_m", "VM201 targets", 1);
  return FL_OK;
}


static int han4_run(fl_fig_ctx *ctx) {
  // full: seed 000's loading rate (1.4 MN/m over 500 s, dt 0.01), carried on to 1.75 MN/m
  // (625 s) since without the contacts' give the cylinder is short of 0.2 m at 1.4 MN/m; each
  // run stops 5 mm past 0.2 m. quick: the coarsest two meshes, the load to 0.3 MN/m over 10 s
  // (short of 0.2 m); medium: the coarsest two at the full figure's load over a tenth of its
  // ramp (past 0.2 m, within a few % of the slow ramp)
  int nmesh = ctx->tier == FL_FIG_FULL ? 4 : 2;
  double force = ctx->quick ? 0.3e6 : 1.75e6,
         ramp = ctx->quick ? 10 : ctx->tier == FL_FIG_MEDIUM ? 62.5 : 625;
  han4_refs *rf = fl_malloc(sizeof *rf);
  if (!rf) return fl_seterr(FL_ERR_NOMEM, "han-fig4: out of memory");
  int rc = refs_load(rf);
  if (rc >= 0) rc = han4_body(ctx, rf, nmesh, force, ramp);
  fl_free(rf);
  return rc;
}


const fl_figure_recipe fl_fig_han4 = {
  "han-fig4", "000",
  "cylinder press force against displacement, reference; meshes 1-4 at full size, 1-2 at medium "
  "and quick size",
  han4_missing, han4_run, NULL};


//---- han-table1 (and the cost split of seed 000 Fig. 2) ----

/* The arch rows are seed 000's setup (springers on knife edges) for its 10 minutes: at mu 0.2
 * the first seconds are the collapse, where SAP works hardest, and the rest is rubble. Seed 000's
 * rows (arch and press) run SAP's convex model, the paper's (it solves the convex approximation,
 * the friction cone), as han-fig5 does. The press's plates are frictionless, so there the model
 * does not matter: mesh 1 over 600 steps of 0.01 s gives the same force, approach, contacts
 * and iterations to every digit with either model. The cube (seed 003, not in the paper) keeps
 * SAP's default, the lagged model. */
#define T1_CONVEX "rel_tol=1e-6,model=convex"
typedef struct table_row {
  const char *label, *scene, *set;
  double dur, dur_quick;   /* simulated time (s), full and --quick */
  int quick;               /* also in --quick */
  const char *seed;        /* the seed's row: DoFs, dt, rate, constraints mean (max); or "" */
  const char *opts;        /* SAP's options */
} table_row;

static const table_row rows[] = {
  {"arch mu=0.2 (rigid stones)", "arch_masonry", "base=edges,mu=0.2", 600, 1, 1,
   "225 DoFs, dt 0.04, rate 7.26, 259.5 (357) [deformable stones]", T1_CONVEX},
  {"arch mu=1.0 (rigid stones)", "arch_masonry", "base=edges,mu=1", 600, 1, 1,
   "225 DoFs, dt 0.04, rate 6.29, 320.2 (364) [deformable stones]", T1_CONVEX},
  {"arch mu=0.2 (deformable stones)", "arch_masonry", "base=edges,mu=0.2,kind=deformable",
   600, 1, 1, "225 DoFs, dt 0.04, rate 7.26, 259.5 (357)", T1_CONVEX},
  {"arch mu=1.0 (deformable stones)", "arch_masonry", "base=edges,mu=1,kind=deformable",
   600, 1, 1, "225 DoFs, dt 0.04, rate 6.29, 320.2 (364)", T1_CONVEX},
  {"cylinder press mesh 1", "cylinder_press", "mesh=1,ramp=50", 50, 0.5, 1, "", T1_CONVEX},
  {"cylinder press mesh 2", "cylinder_press", "mesh=2,ramp=50", 50, 0.5, 1, "", T1_CONVEX},
  {"cylinder press mesh 3", "cylinder_press", "mesh=3,ramp=50", 50, 0.5, 0, "", T1_CONVEX},
  {"cylinder press mesh 4", "cylinder_press", "mesh=4,ramp=50", 50, 0.5, 0,
   "3796 DoFs (4151 tets), dt 0.01, rate 0.06, 248.3 (335)", T1_CONVEX},
  {"elastic cube (seed 003 Fig. 6)", "elastic_cube", NULL, 1, 0.3, 1, "(not in the seed)",
   SAP_OPTS},
};


/* "convex" when opts choose SAP's convex model, else "lagged" (SAP's default) */
static const char *row_model(const char *opts) {
  return strstr(opts, "model=convex") ? "convex" : "lagged";
}


/* a row of table1.csv: one example's run (seed 000 Table I's columns, and the paper's rate) */
typedef struct table1_row {
  int row, dofs, tets, cmax, nfail;
  const char *example, *model, *seed;
  double dt, sim_s, cpu_s, rate, cmean, pct[5], seed_rate;
} table1_row;
#define T1(m) offsetof(table1_row, m)
static const fl_csv_col table1_cols[] = {
  {"row", FL_CSV_INT, T1(row), 0},          {"example", FL_CSV_STR, T1(example), 0},
  {"dofs", FL_CSV_INT, T1(dofs), 0},        {"tets", FL_CSV_INT, T1(tets), 0},
  {"dt_s", FL_CSV_G, T1(dt), 6},            {"sim_s", FL_CSV_G, T1(sim_s), 6},
  {"cpu_s", FL_CSV_G, T1(cpu_s), 4},        {"realtime_rate", FL_CSV_G, T1(rate), 4},
  {"constraints_mean", FL_CSV_F, T1(cmean), 1}, {"constraints_max", FL_CSV_INT, T1(cmax), 0},
  {"geometry_pct", FL_CSV_F, T1(pct[0]), 1}, {"schur_pct", FL_CSV_F, T1(pct[1]), 1},
  {"element_pct", FL_CSV_F, T1(pct[2]), 1}, {"sap_pct", FL_CSV_F, T1(pct[3]), 1},
  {"other_pct", FL_CSV_F, T1(pct[4]), 1},   {"failed_steps", FL_CSV_INT, T1(nfail), 0},
  {"sap_model", FL_CSV_STR, T1(model), 0},  {"seed_rate", FL_CSV_G, T1(seed_rate), 4},
  {"seed", FL_CSV_STR, T1(seed), 0}};
#undef T1
#define NT1 ((int)(sizeof table1_cols / sizeof table1_cols[0]))


static int table1_run(fl_fig_ctx *ctx) {
  FILE *tab = fl_fig_table(ctx, "table1.csv", table1_cols, NT1);
  if (!tab) return fl_errcode();
  fl_fig_panel *p = fl_fig_panel_add(ctx->fig, "cost split per example (seed 000 Fig. 2)",
                                     "example", "share of the step time (%)", 0, 0);
  fl_fig_panel_xtics(p, "example");
  static const char *stage[5] = {"geometry_pct", "schur_pct", "element_pct", "sap_pct",
                                 "other_pct"};
  static const char *slabel[5] = {"geometry queries", "Schur complement", "FEM element work",
                                  "SAP", "other"};
  for (int k = 0; k < 5; k++)
    fl_fig_series_add(p, "table1.csv", "row", stage[k], slabel[k], FL_FIG_BARS);
  // Table I's real-time rates, beside the paper's where it gives one
  fl_fig_panel *pr = fl_fig_panel_add(ctx->fig, "real-time rate per example (seed 000 Table I); "
                                      "SAP's convex model (the paper's) on its rows, the "
                                      "default lagged on the cube",
                                      "example", "simulated time / CPU time (one core)", 0, 1);
  fl_fig_panel_xtics(pr, "example");
  fl_fig_series_add(pr, "table1.csv", "row", "realtime_rate", "FrictionLab", 1);
  fl_fig_series_add(pr, "table1.csv", "row", "seed_rate", "the paper (Table I)", 1);
  fl_fig_ref_add(pr, 1, "real time");
  fl_fig_say(ctx, "SAP's model per row: convex (the paper's, seed 000's friction cone) on the "
             "arch and press rows (the press's plates are frictionless: the same run either way), "
             "SAP's default lagged model on the cube (seed 003, not in the paper)");
  fl_fig_say(ctx, "%-32s %-6s %6s %6s %8s %9s  %-16s %s", "example", "model", "DoFs", "dt",
             "rate", "constr.", "geo/schur/elem/sap/other %", "seed 000 Table I");
  int row = 0;
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    const table_row *t = &rows[r];
    // medium: the full rows without cylinder meshes 3-4, most of the full run's time
    if (ctx->quick && !t->quick) continue;
    if (ctx->tier == FL_FIG_MEDIUM && !t->quick) continue;
    double dur = ctx->quick ? t->dur_quick : t->dur;
    scene_stats_t st;
    FL_TRY(scene_stats(ctx, NULL, t->scene, t->set, t->opts, dur, 0, &st, "table1.csv"));
    double tot = st.geometry_s + st.schur_s + st.element_s + st.sap_s + st.other_s;
    double pct[5] = {st.geometry_s, st.schur_s, st.element_s, st.sap_s, st.other_s};
    for (int k = 0; k < 5; k++) pct[k] = tot > 0 ? 100 * pct[k] / tot : 0;
    double dt = st.steps ? st.sim_s / st.steps : 0, rate = st.sim_s / st.cpu_s;
    // the paper's rate of this very row (not of the deformable row a rigid one is set beside)
    const char *sr = strchr(t->seed, '[') ? NULL : strstr(t->seed, "rate ");
    double seed_rate = sr ? strtod(sr + 5, NULL) : NAN;
    // (seed_rate before the seed text, which fl_csv_str quotes where it holds a comma)
    const char *model = row_model(t->opts);
    table1_row tr = {++row, (int)st.dofs, (int)st.ntet, (int)st.cmax, st.nfail, t->label, model,
                     t->seed, dt, st.sim_s, st.cpu_s, rate, st.cmean,
                     {pct[0], pct[1], pct[2], pct[3], pct[4]}, seed_rate};
    fl_csv_row(tab, table1_cols, NT1, &tr);
    fl_fig_say(ctx, "%-32s %-6s %6d %6g %8.3f %6.1f (%d)  %4.0f %4.0f %4.0f %4.0f %4.0f    %s",
               t->label, model, (int)st.dofs, dt, rate, st.cmean, (int)st.cmax, pct[0], pct[1],
               pct[2], pct[3], pct[4], t->seed);
    stats_free(&st);
  }
  fl_fig_say(ctx, "rate = simulated time / process CPU time over %s; constraints = contact "
             "points per step (mean, max); the cylinder rows ramp the seed's 1.4 MN/m over 50 s, "
             "not 500 s", ctx->quick ? "the short --quick runs"
                          : ctx->tier == FL_FIG_MEDIUM ? "each run (medium: meshes 3-4 left out)"
                                                       : "each run");
  return FL_OK;
}


const fl_figure_recipe fl_fig_han_table1 = {
  "han-table1", "000", "scene statistics and real-time rates", NULL, table1_run, NULL};

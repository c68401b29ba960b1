// SPDX-License-Identifier: Apache-2.0
/* verify.c: `frictionlab verify`, cases with closed-form answers judged on the motion.
 *
 * Each case is a small scene (generated here as scene-file JSON, written into the results
 * folder so that `frictionlab run` replays it) and a judge that reads the probe bodies'
 * positions and velocities from the world after every step and compares them with the answer
 * of the time-stepping scheme itself: the stepper is semi-implicit Euler (v_{n+1} from the
 * impulses of the step, forces evaluated at the step's start t_n, x_{n+1} = x_n + dt v_{n+1}),
 * so an exact solver of the rigid contact problem reproduces a short recursion to
 * round-off (fl__verify_ref_*). The continuous closed forms and the discrete ones are derived in docs/verify.md.
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
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "../../sim/fl_loop.h"
#include "../../sim/fl_world.h"
#include "../../sim/fl_fem.h"
#include "../figures/fl_figure.h"
#include "fl_args.h"
#include "../fl_harness.h"
#include "../../peers/fl_peer.h"
#include "../verify/fl_verify.h"

#include "../verify/verify_impl.h"
#include "../run/fl_run.h"



//---- the solver rows ----

typedef struct vsolver {
  const char *solver;   /* registered solver or peer name */
  const char *settings; /* "k=v,k=v" or "" (defaults) */
  const char *why;      /* where the setting is recommended */
} vsolver;

static const vsolver base_rows[] = {
  {"pgs", "", NULL},
  {"pgs", "max_iter=1000", "a larger sweep budget"},
  {"jacobi", "", NULL},
  {"primal-descent", "", NULL},
  {"dual-descent", "", NULL},
  {"sap", "", NULL},
  {"sap", "model=sap", "SAP's convex model named explicitly"},
  {"sap", "beta=0.01", "docs/sap.md: near-rigid contact"},
  {"nsn", "", NULL},
  {"nsn", "ncp=ac", "docs/nsn.md: Alart-Curnier"},
  {"nsn", "line_search=backtrack,warm_start=true", "docs/bench-world.md: world steps"},
  {"prox", "", NULL},
  {"mujoco-pgs", "", NULL},
  {"mujoco-cg", "", NULL},
  {"mujoco-newton", "", NULL},
  {"drake-sap", "", NULL},
  {"drake-similar", "", NULL},
  {"drake-lagged", "", NULL},
  {"drake-tamsi", "", NULL},
  {"drake-sap", "contact=hydroelastic", "docs/peers.md: Drake's own contact for boxes"},
  {"drake-lagged", "contact=hydroelastic", "docs/peers.md: Drake's own contact for boxes"},
  {"mujoco4-pgs", "", NULL},
  {"mujoco4-cg", "", NULL},
  {"mujoco4-newton", "", NULL},
};
#define NBASE ((int)(sizeof base_rows / sizeof base_rows[0]))
#define NROWS_MAX (NBASE + 32)

/* The suite's rows: the list above, then every other registered solver (built-in or plug-in:
 * pnewton, admm, ipm, ...) at its defaults, so that none goes unjudged (issue 50). Filled on
 * first use, after fl_register_all. */
static const char defer_why[] =
  "not run unless named with --solver: a Siconos bridge, a child process per step (minutes)";
static vsolver rows[NROWS_MAX];
static char row_names[NROWS_MAX][64]; /* copies: the registry's list moves on registration */
static int nrows;
static int verify_nrows(void) {
  if (nrows) return nrows;
  fl_register_all();
  for (int j = 0; j < NBASE; j++) rows[nrows++] = base_rows[j];
  const char *const *reg = fl_solver_list();
  for (int k = 0; reg && reg[k] && nrows < NROWS_MAX; k++) {
    int seen = 0;
    for (int j = 0; j < nrows; j++) seen |= !strcmp(rows[j].solver, reg[k]);
    if (seen) continue;
    snprintf(row_names[nrows], sizeof row_names[nrows], "%s", reg[k]);
    // a plug-in's row names its file (the table's legend), a Siconos bridge's why it waits
    const char *origin = fl_solver_ops_origin(fl_solver_find(reg[k]));
    rows[nrows] = (vsolver){row_names[nrows], "",
                            origin ? origin : strncmp(reg[k], "siconos-", 8) ? NULL : defer_why};
    nrows++;
  }
  return nrows;
}
#define NROWS verify_nrows()


//---- running one (case, row) ----

typedef struct vresult {
  int status; /* 0 ran, 1 unsupported, 2 error */
  char msg[200];
  int nq;
  vq q[MAXQ];
  int steps, nfail;
  double wall_s;
} vresult;


static void traj_free(vtraj *tr) {
  fl_free(tr->t);
  for (int b = 0; b < MAXPROBE; b++) {
    fl_free(tr->x[b]);
    fl_free(tr->v[b]);
    fl_free(tr->w[b]);
    fl_free(tr->q[b]);
  }
}


static void traj_store(vtraj *tr, const fl_world *w, const int *probe, int nprobe) {
  int i = tr->n++;
  tr->t[i] = w->t;
  for (int b = 0; b < nprobe; b++) {
    if (probe[b] < 0) { // deformable body -1 - probe[b]: centre of mass, mean velocity
      int k = -1 - probe[b];
      double p[3], com[3], m = w->fem[k]->mass;
      fl_fem_momentum(w, k, p, com);
      for (int c = 0; c < 3; c++) {
        tr->x[b][3 * i + c] = com[c];
        tr->v[b][3 * i + c] = p[c] / m;
        tr->w[b][3 * i + c] = 0;
      }
      static const double q1[4] = {1, 0, 0, 0};
      memcpy(tr->q[b] + 4 * i, q1, sizeof q1);
      continue;
    }
    const fl_body *bd = &w->body[probe[b]];
    memcpy(tr->x[b] + 3 * i, bd->pos, 3 * sizeof(double));
    memcpy(tr->v[b] + 3 * i, bd->vel, 3 * sizeof(double));
    memcpy(tr->w[b] + 3 * i, bd->omega, 3 * sizeof(double));
    memcpy(tr->q[b] + 4 * i, bd->quat, 4 * sizeof(double));
  }
}


/* The scene of case c into sp: its canonical scene with its settings (and its quick ones in
 * --quick; their texts in sbuf, 256 bytes, and ss, 12 pointers), or the case's scene file as
 * text (scene_json). */
static int case_scene(const vcase *c, int quick, const char *scene_json, char *sbuf,
                      const char **ss, fl_run_spec *sp) {
  if (!c->canonical) {
    sp->scene = c->name;
    sp->scene_text = scene_json;
    return FL_OK;
  }
  char all[256];
  snprintf(all, sizeof all, "%s%s%s", c->canonical_set ? c->canonical_set : "",
           quick && c->quick_set ? "," : "", quick && c->quick_set ? c->quick_set : "");
  int ns = fl_split_list(all, sbuf, 256, ss, 12);
  if (ns < 0) return ns;
  sp->scene = c->canonical;
  sp->nscene = ns;
  sp->scene_set = ss;
  return FL_OK;
}


/* what a case measures after each step (fl_loop each) */
typedef struct verify_step_ctx {
  const vcase *c;
  vtraj *tr;
  const int *probe; /* the probed bodies */
  int nprobe;
  double *obs;      /* the observables of a case with a `track`, else NULL */
  fl_int itrack;    /* the tracked one */
} verify_step_ctx;


static int verify_each(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  (void)k;
  (void)info;
  (void)val;
  verify_step_ctx *v = ctx;
  const vcase *c = v->c;
  vtraj *tr = v->tr;
  if (c->rest_R > 0) {
    const fl_body *pb = &w->body[v->probe[0]]; /* a rigid probe (the coin) */
    if (hypot(pb->vel[0], pb->vel[1]) + fabs(pb->omega[2]) * c->rest_R < c->rest_speed) {
      traj_store(tr, w, v->probe, v->nprobe);
      return FL_LOOP_STOP;
    }
  }
  double pen = 0;
  if (fl_world_penetration(w, &pen) >= 0 && !(pen <= tr->pen_max)) tr->pen_max = pen;
  if (v->obs && fl_world_observe(w, v->obs) == FL_OK && !(v->obs[v->itrack] <= tr->obs_max))
    tr->obs_max = v->obs[v->itrack]; /* NaN propagates */
  if (v->obs) tr->obs_end = v->obs[v->itrack];
  traj_store(tr, w, v->probe, v->nprobe);
  return FL_OK;
}


/* Runs case c with row r for `duration` seconds and judges it. Returns FL_OK (the outcome is
 * in out, an unsupported or failing step included) or an error of verify itself. */
static int run_one(const vcase *c, const vsolver *r, double duration, const char *scene_json,
                   const fl_verify_opts *o, vresult *out) {
  memset(out, 0, sizeof *out);
  double *obs = NULL; /* the observables of a case with a `track` */
  vtraj tr;
  memset(&tr, 0, sizeof tr);
  fl_run run;
  memset(&run, 0, sizeof run);
  int steps = (int)lround(duration / c->dt), probe[MAXPROBE], nprobe = 0;
  // the row's settings, prefixed by its solver's name
  char sets[8][96], setbuf[256];
  const char *split[8], *setp[8];
  int nset = fl_split_list(r->settings, setbuf, sizeof setbuf, split, 8);
  if (nset < 0) return nset;
  for (int k = 0; k < nset; k++) {
    snprintf(sets[k], sizeof sets[k], "%s.%s", r->solver, split[k]);
    setp[k] = sets[k];
  }
  // the extra settings: peers' keys to peers, the others to registered solvers (after the
  // row's)
  const char *pset[16], *sset[24];
  int npset = 0, nsset = 0;
  for (int k = 0; k < nset && npset < 16; k++) pset[npset++] = setp[k];
  for (int k = 0; k < nset; k++) sset[nsset++] = setp[k];
  for (int k = 0; k < o->nset; k++) {
    char pre[64];
    const char *dot = strchr(o->set[k], '.'), *eq = strchr(o->set[k], '=');
    size_t pl = dot && (!eq || dot < eq) ? (size_t)(dot - o->set[k]) : 0;
    snprintf(pre, sizeof pre, "%.*s", (int)(pl < sizeof pre ? pl : sizeof pre - 1), o->set[k]);
    if (pl && fl_peer_prefix(pre)) {
      if (npset < 16) pset[npset++] = o->set[k];
    } else if (nsset < nset + 16) {
      sset[nsset++] = o->set[k];
    }
  }
  char sbuf[256];
  const char *ss[12];
  fl_run_spec sp = {.flags = FL_RUN_NO_METRICS, .stepper = r->solver, .opts = "error_every=0",
                    .nset = nsset, .set = sset, .npeer_set = npset, .peer_set = pset,
                    .steps = steps, .each = verify_each};
  int rc = case_scene(c, o->quick, scene_json, sbuf, ss, &sp);
  if (rc >= 0) rc = fl_run_open(&sp, &run);
  if (rc == FL_ERR_UNSUPPORTED) {
    out->status = 1;
    snprintf(out->msg, sizeof out->msg, "%s", fl_errmsg());
    return FL_OK;
  }
  if (rc < 0) return rc;
  fl_world *w = run.world;
  for (int b = 0; b < MAXPROBE && c->probe[b]; b++) {
    probe[b] = fl_world_find_body(w, c->probe[b]);
    int kf = probe[b] < 0 ? fl_world_find_fem(w, c->probe[b]) : -1;
    if (kf >= 0) probe[b] = -1 - kf; /* a deformable probe (traj_store) */
    if (probe[b] < 0 && kf < 0) {
      rc = fl_seterr(FL_ERR_STATE, "verify: case %s has no body %s", c->name, c->probe[b]);
      goto done;
    }
    nprobe++;
  }
  tr.dt = c->dt;
  tr.t = fl_malloc((size_t)(steps + 1) * sizeof(double));
  int okm = tr.t != NULL;
  for (int b = 0; b < nprobe; b++) {
    tr.x[b] = fl_malloc((size_t)(steps + 1) * 3 * sizeof(double));
    tr.v[b] = fl_malloc((size_t)(steps + 1) * 3 * sizeof(double));
    tr.w[b] = fl_malloc((size_t)(steps + 1) * 3 * sizeof(double));
    tr.q[b] = fl_malloc((size_t)(steps + 1) * 4 * sizeof(double));
    okm = okm && tr.x[b] && tr.v[b] && tr.w[b] && tr.q[b];
  }
  if (!okm) {
    rc = fl_seterr(FL_ERR_NOMEM, "verify: out of memory");
    goto done;
  }
  traj_store(&tr, w, probe, nprobe);
  fl_int itrack = -1, nobs = c->track ? fl_world_nobs(w) : 0;
  for (fl_int k = 0; k < nobs && itrack < 0; k++)
    if (!strcmp(fl_world_obs_name(w, k), c->track)) itrack = k;
  if (c->track && itrack < 0) {
    rc = fl_seterr(FL_ERR_STATE, "verify: case %s has no observable %s", c->name, c->track);
    goto done;
  }
  if (c->track && !(obs = fl_malloc((size_t)nobs * sizeof(double)))) {
    rc = fl_seterr(FL_ERR_NOMEM, "verify: out of memory");
    goto done;
  }
  verify_step_ctx vc = {c, &tr, probe, nprobe, obs, itrack};
  run.spec.ctx = &vc;
  int src = fl_run_go(&run);
  const fl_loop loop = run.loop;
  if (src == FL_ERR_UNSUPPORTED) {
    out->status = 1;
    snprintf(out->msg, sizeof out->msg, "%s", fl_errmsg());
    goto done;
  }
  if (src < 0) {
    out->status = 2;
    snprintf(out->msg, sizeof out->msg, "step %ld: %s", loop.taken, fl_errmsg());
    goto done;
  }
  out->nfail = (int)loop.failed;
  steps = (int)loop.taken; // fewer when the probe came to rest
  out->wall_s = loop.wall_s;
  tr.steps = steps;
  tr.nfail = out->nfail;
  out->steps = steps;
  tr.world = w;
  rc = c->judge(c, &tr, out->q);
  if (rc >= 0) {
    out->nq = rc;
    rc = FL_OK;
  }
done:
  fl_free(obs);
  traj_free(&tr);
  fl_run_close(&run);
  return rc;
}


//---- verdicts ----

static const char *verdict_name(const vresult *r, int k) {
  if (r->status == 1) return "unsupported";
  if (r->status == 2) return "error";
  return qpass(&r->q[k]) ? "pass" : "fail";
}


static void row_label(const vsolver *r, char *buf, size_t n) {
  if (*r->settings) snprintf(buf, n, "%s %s", r->solver, r->settings);
  else snprintf(buf, n, "%s", r->solver);
}


/* a short column label for the table: solver (abbreviated) and a row number for settings */
static void row_short(int i, char *buf, size_t n) {
  const vsolver *r = &rows[i];
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
    if (!strcmp(rows[k].solver, s)) variant++;
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


static int row_available(const vsolver *r, char *why, size_t n) {
  if (fl_peer_find(r->solver)) return 1;
  const char *pu = fl_peer_unavailable(r->solver);
  if (pu) {
    snprintf(why, n, "%s", pu);
    return 0;
  }
  if (!fl_solver_find(r->solver)) {
    snprintf(why, n, "solver %s is not registered in this build", r->solver);
    return 0;
  }
  return 1;
}


int fl__verify_run(const fl_verify_opts *o, fl_verify_row_fn fn, void *ctx) {
  fl_register_all();
  for (int i = 0; i < NCASES; i++) {
    const vcase *c = &fl__verify_cases[i];
    if (!fl_list_has(o->only, c->name) || (o->quick && !c->quick)) continue;
    double dur = o->quick ? c->dur_quick : c->dur;
    char *json = fl__verify_scene_text(c, dur);
    if (c->scene && !json) return FL_ERR_NOMEM; /* message set */
    int rc = FL_OK;
    for (int j = 0; j < NROWS && rc >= 0; j++) {
      const vsolver *r = &rows[j];
      if (!fl_list_has(o->solvers, r->solver)) continue;
      char why[200];
      vresult res;
      if (r->why == defer_why && !o->solvers) { // deferred: say so, as unsupported
        memset(&res, 0, sizeof res);
        res.status = 1;
        snprintf(res.msg, sizeof res.msg, "%s", defer_why);
      } else if (!row_available(r, why, sizeof why)) {
        memset(&res, 0, sizeof res);
        res.status = 1;
        snprintf(res.msg, sizeof res.msg, "%s", why);
      } else {
        if ((rc = run_one(c, r, dur, json, o, &res)) < 0) break;
      }
      for (int k = 0; k < (res.status ? 1 : res.nq) && rc >= 0; k++) {
        fl_verify_row vr;
        memset(&vr, 0, sizeof vr);
        vr.case_name = c->name;
        vr.solver = r->solver;
        vr.settings = r->settings;
        vr.status = res.status;
        vr.message = res.msg;
        vr.nfail = res.nfail;
        vr.steps = res.steps;
        if (res.status == 0) {
          vr.quantity = res.q[k].name;
          vr.expected = res.q[k].expected;
          vr.measured = res.q[k].measured;
          vr.rel_error = qerr(&res.q[k]);
          vr.tolerance = res.q[k].tol;
          vr.pass = qpass(&res.q[k]);
        } else {
          vr.quantity = "-";
          vr.expected = vr.measured = vr.rel_error = vr.tolerance = NAN;
        }
        vr.verdict = verdict_name(&res, k);
        rc = fn(ctx, &vr);
      }
    }
    fl_free(json);
    if (rc < 0) return rc;
  }
  return FL_OK;
}


/* collects rows for the command's outputs */
typedef struct vcollect {
  FILE *csv;
  int ncase, nrow;           /* table size (cases and rows selected) */
  int ci[FL_VERIFY_MAXCASES], ri[NROWS_MAX]; /* selected indices */
  char cell[FL_VERIFY_MAXCASES][NROWS_MAX][8];
  double ratio[FL_VERIFY_MAXCASES][NROWS_MAX];
  int failed[FL_VERIFY_MAXCASES][NROWS_MAX];
  int status[FL_VERIFY_MAXCASES][NROWS_MAX];
  char msg[FL_VERIFY_MAXCASES][NROWS_MAX][200];
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
    if (!strcmp(rows[j].solver, solver) && !strcmp(rows[j].settings, settings)) return j;
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
      row_label(&rows[j], lab, sizeof lab);
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
    row_label(&rows[vc->ri[b]], lab, sizeof lab);
    fprintf(f, "  %-8s %s%s%s%s\n", sh, lab, rows[vc->ri[b]].why ? " (" : "",
            rows[vc->ri[b]].why ? rows[vc->ri[b]].why : "", rows[vc->ri[b]].why ? ")" : "");
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


static int write_figure(fl_results *res, const vcollect *vc, fl_fig *fig) {
  static const char *const title[5] = {"PGS and Jacobi", "primal and dual descent",
                                       "SAP (FrictionLab's, Drake's)", "NSN and PROX",
                                       "MuJoCo (peers)"};
  memset(fig, 0, sizeof *fig);
  snprintf(fig->title, sizeof fig->title, "frictionlab verify: worst error / tolerance per case "
           "(below 1 passes; no marker: unsupported)");
  fl_fig_panel *panel[5] = {NULL};
  for (int b = 0; b < vc->nrow; b++) {
    int j = vc->ri[b], g = fig_group(rows[j].solver);
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
    fprintf(f, "x,case,ratio\n");
    for (int a = 0; a < vc->ncase; a++) {
      int i = vc->ci[a];
      double r = vc->ratio[i][j];
      // a zero error is drawn at the bottom of the log axis; a NaN state far above
      if (r == 0) r = 1e-6;
      if (isinf(r)) r = 1e6;
      fprintf(f, "%d,%s,", a + 1, fl__verify_cases[i].name);
      fl_csv_num(f, isnan(r) ? r : fmax(r, 1e-6));
      fputc('\n', f);
    }
    if (fflush(f) != 0) return fl_seterr(FL_ERR_IO, "verify: %s: write failed", name);
    row_label(&rows[j], lab, sizeof lab);
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
      for (int j = 0; j < NROWS; j++) found |= !strcmp(rows[j].solver, t);
      if (!found) {
        fprintf(stderr, "frictionlab verify: --solver %s: not one of the suite's solvers:", t);
        for (int j = 0; j < NROWS; j++)
          if (j == 0 || strcmp(rows[j].solver, rows[j - 1].solver)) fprintf(stderr, " %s", rows[j].solver);
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
    if (fl_list_has(o.solvers, rows[j].solver)) vc->ri[vc->nrow++] = j;

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
      if (c->canonical) {
        // a canonical scene: its scene file as `export --scene-json` writes it
        char sbuf[256];
        const char *ss[12];
        fl_run_spec sp = {0};
        fl_run cr;
        memset(&cr, 0, sizeof cr);
        int wrc = case_scene(c, o.quick, NULL, sbuf, ss, &sp);
        if (wrc >= 0) wrc = fl_run_open(&sp, &cr);
        if (wrc >= 0) wrc = fl_world_save_json(cr.world, path);
        fl_run_close(&cr);
        if (wrc < 0) {
          fprintf(stderr, "frictionlab verify: %s: %s\n", path, fl_errmsg());
          goto fail;
        }
        continue;
      }
      char *json = fl__verify_scene_text(c, o.quick ? c->dur_quick : c->dur);
      FILE *f = json ? fopen(path, "w") : NULL;
      int werr = !f || fputs(json, f) < 0;
      werr |= f && fclose(f) != 0;
      fl_free(json);
      if (werr) {
        fprintf(stderr, "frictionlab verify: %s: cannot write\n", path);
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
      row_label(&rows[j], lab, sizeof lab);
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
    const char *pn = rows[vc->ri[b]].solver;
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

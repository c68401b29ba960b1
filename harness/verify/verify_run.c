// SPDX-License-Identifier: Apache-2.0
/* verify_run.c: the analytic suite's engine (fl_verify.h): the solver rows, running one (case,
 * row) through the run room (harness/run/) while storing the probe bodies' trajectory, and
 * fl__verify_run, which judges every selected (case, row) and hands the rows to a callback.
 * The command (flags, table, figure, results folder) is harness/cli/verify.c; docs/verify.md
 * says what the cases measure.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../sim/fl_loop.h"
#include "../../sim/fl_world.h"
#include "../../sim/fl_fem.h"
#include "../fl_harness.h"
#include "../../peers/fl_peer.h"
#include "fl_verify.h"

#include "verify_impl.h"
#include "../run/fl_run.h"


//---- the solver rows ----

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
#define NROWS_MAX FL_VERIFY_MAXROWS /* verify_impl.h: the command's tables have this room */
_Static_assert(NBASE + 32 == NROWS_MAX,
               "verify_impl.h: FL_VERIFY_MAXROWS is the table's rows and 32 more");

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


int fl__verify_nrows(void) { return verify_nrows(); }


const vsolver *fl__verify_row(int j) { return &rows[j]; }


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


//---- the suite ----

static const char *verdict_name(const vresult *r, int k) {
  if (r->status == 1) return "unsupported";
  if (r->status == 2) return "error";
  return qpass(&r->q[k]) ? "pass" : "fail";
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


int fl__verify_write_case(const vcase *c, int quick, const char *path) {
  if (c->canonical) {
    // a canonical scene: its scene file as `export --scene-json` writes it
    char sbuf[256];
    const char *ss[12];
    fl_run_spec sp = {0};
    fl_run cr;
    memset(&cr, 0, sizeof cr);
    int wrc = case_scene(c, quick, NULL, sbuf, ss, &sp);
    if (wrc >= 0) wrc = fl_run_open(&sp, &cr);
    if (wrc >= 0) wrc = fl_world_save_json(cr.world, path);
    fl_run_close(&cr);
    return wrc;
  }
  char *json = fl__verify_scene_text(c, quick ? c->dur_quick : c->dur);
  FILE *f = json ? fopen(path, "w") : NULL;
  int werr = !f || fputs(json, f) < 0;
  werr |= f && fclose(f) != 0;
  fl_free(json);
  return werr ? fl_seterr(FL_ERR_IO, "cannot write") : FL_OK;
}

// SPDX-License-Identifier: Apache-2.0
/* fig_peers.c: `peers-heavy-stack`, FrictionLab's solvers beside MuJoCo's on the five-box
 * 4096:1 stack.
 *
 * The heavy_stack scene (dt 1/120) for 2 s (0.5 s with --quick) with SAP, NSN (PCR, and the
 * Alart-Curnier Newton with its near-rigid setting, docs/bench-world.md) and MuJoCo's
 * PGS, CG and Newton, each at its default setting and at its stiff one (SAP near-rigid,
 * sap.beta=0.001; MuJoCo's stiffest reference, solref 0.0167 1, two steps, the least MuJoCo
 * accepts at this dt; NSN solves the rigid problem either way, so it runs once). Per step:
 * the deepest penetration, measured by FrictionLab on the poses for every solver, and the
 * whole step's process CPU time (for Drake and MuJoCo 4, which run ahead in a Python process,
 * the wall time per step measured inside them). drake-sap and mujoco4-newton only where the
 * Python environment has them (scripts/setup). Two panels: penetration against time, time per
 * step against time. CPU time, not wall time: on a shared machine a step's wall time counts
 * the time other processes held the core. It is still a measurement on whatever machine runs
 * the recipe, so the panel states the load average around the run and the cores; `bench
 * --callgrind` counts instructions (this machine's kernel gives no hardware counters to
 * perf_event_open), `bench --steps` interleaves repetitions.
 */
#include <stdlib.h>
#include <unistd.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../sim/fl_loop.h"
#include "../../sim/fl_world.h"
#include "fl_figure.h"
#include "../../peers/fl_peer.h"
#include "../run/fl_run.h"
#include <cjson/cJSON.h>

static const char *missing(void) {
  return fl_peer_find("mujoco-newton") ? NULL
                                       : "MuJoCo (libmujoco-dev and libqhull-dev; this build "
                                         "has no MuJoCo peers)";
}


typedef struct variant {
  const char *solver;  /* registered solver or peer */
  const char *setting; /* "key=value" or NULL */
  const char *label;
  const char *opts;    /* solver options "k=v,k=v" (fl_solver_set_options) or NULL */
  const char *csv;     /* the CSV's name, or NULL: solver[-stiff].csv */
} variant;


/* a variant's CSV: one row per step */
typedef struct peers_row {
  double t, pen, step_us; /* s, m, CPU microseconds */
  int contacts, iters;
} peers_row;
#define R(m) offsetof(peers_row, m)
static const fl_csv_col peers_cols[] = {
  {"t", FL_CSV_G, R(t), 9},                 {"pen_max", FL_CSV_G, R(pen), 9},
  {"step_us", FL_CSV_G, R(step_us), 6},     {"contacts", FL_CSV_INT, R(contacts), 0},
  {"iters", FL_CSV_INT, R(iters), 0}};
#undef R
#define NPEERS (int)(sizeof peers_cols / sizeof peers_cols[0])


/* one variant's row after each step (fl_loop each): penetration, the step's CPU time */
typedef struct peers_step_ctx {
  const fl_loop *loop;
  const fl_peer *peer; /* its own clock, when it has one (fl_peer_own_clock) */
  FILE *f;
  double pen_max, tsum;
  long its;
  double cpu_last; /* process CPU time when the last step began (fl_cpu_now, s) */
} peers_step_ctx;


static int peers_each(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  (void)k;
  (void)val;
  peers_step_ctx *c = ctx;
  // the CPU time since the last step began: this step and the loop's bookkeeping, not the
  // penetration query and the row below (the clock is read again after them)
  double dt = fl_cpu_now() - c->cpu_last, pen = 0;
  if (fl_peer_own_clock(c->peer)) {
    fl_peer_stages st;
    fl_peer_stages_last(c->peer, &st);
    dt = st.step_s;
  }
  int rc = fl_world_penetration(w, &pen);
  c->pen_max = fmax(c->pen_max, pen);
  c->tsum += dt;
  c->its += info->res.iters;
  peers_row row = {w->t, pen, 1e6 * dt, (int)info->nc, info->res.iters};
  fl_csv_row(c->f, peers_cols, NPEERS, &row);
  c->cpu_last = fl_cpu_now();
  return rc;
}


/* Steps the stack with one variant, one CSV row per step; summary into the ctx. */
static int simulate(fl_fig_ctx *ctx, const variant *v, long nstep, const char *csv) {
  FILE *f = fl_fig_table(ctx, csv, peers_cols, NPEERS);
  if (!f) return fl_errcode();
  const char *set[1] = {v->setting};
  int nset = v->setting ? 1 : 0;
  fl_run_spec sp = {.scene = "heavy_stack", .flags = FL_RUN_NO_METRICS, .stepper = v->solver,
                    .nset = nset, .set = set, .opts_last = v->opts, .steps = nstep,
                    .each = peers_each};
  fl_run rn;
  int rc = fl_run_open(&sp, &rn);
  fl_peer *peer = rn.peer;
  peers_step_ctx c = {&rn.loop, peer, f, 0, 0, 0, fl_cpu_now()};
  rn.spec.ctx = &c;
  if (rc >= 0) rc = fl_run_go(&rn);
  double pen_max = c.pen_max, tsum = c.tsum;
  long its = c.its;
  char js[2048]; // the peer's simulator and version in the manifest (docs/peers.md)
  if (rc >= 0 && peer && fl_peer_options_resolve(v->solver, nset, set, js, sizeof js) >= 0) {
    cJSON *man = fl_results_manifest(ctx->res);
    cJSON *peers = cJSON_GetObjectItem(man, "peers");
    if (!peers) peers = cJSON_AddObjectToObject(man, "peers");
    cJSON *pj = cJSON_Parse(js);
    if (peers && pj) cJSON_AddItemToObject(peers, csv, pj);
    else cJSON_Delete(pj);
  }
  if (rc >= 0)
    fl_fig_say(ctx, "%-36s deepest penetration %.3g m, %.1f us per step (mean %s), %.1f "
                    "iterations per step", v->label, pen_max, 1e6 * tsum / (double)nstep,
               fl_peer_own_clock(peer) ? "wall, inside its process" : "process CPU",
               (double)its / (double)nstep);
  fl_run_close(&rn);
  return rc;
}


static int run(fl_fig_ctx *ctx) {
  static const variant vs[] = {
    {"sap", NULL, "SAP, defaults", NULL, NULL},
    {"sap", "sap.beta=0.001", "SAP near-rigid (beta 0.001)", NULL, NULL},
    {"nsn", NULL, "NSN, defaults (Alart-Curnier, rigid polish)", NULL, NULL},
    {"nsn", NULL, "NSN (Fischer-Burmeister, PCR), rigid", "ncp=fb", "nsn-fb.csv"},
    {"nsn", NULL, "NSN (Alart-Curnier, LU), near-rigid 1e-6",
     "ncp=ac,warm_start=true,ac.compliance=1e-6", "nsn-ac-near-rigid.csv"},
    {"mujoco-newton", NULL, "MuJoCo Newton, solref 0.02 1", NULL, NULL},
    {"mujoco-newton", "solref=0.0167,1", "MuJoCo Newton, solref 0.0167 1", NULL, NULL},
    {"mujoco-cg", NULL, "MuJoCo CG, solref 0.02 1", NULL, NULL},
    {"mujoco-cg", "solref=0.0167,1", "MuJoCo CG, solref 0.0167 1", NULL, NULL},
    {"mujoco-pgs", NULL, "MuJoCo PGS, solref 0.02 1", NULL, NULL},
    {"mujoco-pgs", "solref=0.0167,1", "MuJoCo PGS, solref 0.0167 1", NULL, NULL},
    // today's peers where the Python environment has them (scripts/setup): Drake's own SAP
    // (its time per step from inside Drake) and MuJoCo 4's Newton at its defaults
    {"drake-sap", NULL, "Drake SAP (point contact), defaults", NULL, NULL},
    {"mujoco4-newton", NULL, "MuJoCo 4 Newton, solref 0.02 1", NULL, NULL},
  };
  long nstep = ctx->quick ? 60 : 240;
  fl_fig_panel *pp = fl_fig_panel_add(ctx->fig, "heavy_stack (4096:1): deepest penetration",
                                      "time (s)", "penetration (m)", 0, 1);
  // the load around the runs goes into the timing panel's title, once they are done
  double load0[3] = {NAN, NAN, NAN}, load1[3] = {NAN, NAN, NAN};
  if (getloadavg(load0, 3) < 1) load0[0] = NAN;
  fl_fig_panel *pt = fl_fig_panel_add(ctx->fig, "", "time (s)", "process CPU time per step (us)",
                                      0, 1);
  for (size_t k = 0; k < sizeof vs / sizeof vs[0]; k++) {
    char csv[64];
    if (fl_peer_unavailable(vs[k].solver)) {
      fl_fig_say(ctx, "%-36s left out: %s", vs[k].label, fl_peer_unavailable(vs[k].solver));
      continue;
    }
    if (vs[k].csv)
      snprintf(csv, sizeof csv, "%s", vs[k].csv);
    else
      snprintf(csv, sizeof csv, "%s%s.csv", vs[k].solver, vs[k].setting ? "-stiff" : "");
    FL_TRY(simulate(ctx, &vs[k], nstep, csv));
    fl_fig_series_add(pp, csv, "t", "pen_max", vs[k].label, 0);
    fl_fig_series_add(pt, csv, "t", "step_us", vs[k].label, 0);
  }
  fl_fig_ref_add(pp, 1e-3, "1 mm");
  if (getloadavg(load1, 3) < 1) load1[0] = NAN;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  snprintf(pt->title, sizeof pt->title, "heavy_stack (4096:1): CPU time per step, measured at "
           "load average %.1f to %.1f on %ld cores (quiet: below %ld); Drake, MuJoCo 4: wall "
           "time in their process", load0[0], load1[0], ncpu, ncpu);
  fl_fig_say(ctx, "time per step: process CPU time of the step (Drake and MuJoCo 4: wall time "
             "inside their Python process), measured at a load average (1 min) of %.2f before "
             "and %.2f after the runs on %ld cores: %s", load0[0], load1[0], ncpu,
             load0[0] < ncpu && load1[0] < ncpu ? "a quiet machine"
                                                : "not a quiet machine, the times are inflated");
  fl_fig_say(ctx, "penetration from FrictionLab's narrow phase on each solver's poses (MuJoCo's "
                  "own box-box distances report half the overlap in 2.2.2)");
  return FL_OK;
}


const fl_figure_recipe fl_fig_peers_heavy_stack = {
  "peers-heavy-stack", "n/a",
  "penetration and time per step of SAP, NSN and MuJoCo's PGS, CG, Newton on the 4096:1 stack",
  missing, run, NULL};

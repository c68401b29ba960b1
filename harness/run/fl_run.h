// SPDX-License-Identifier: Apache-2.0
/* fl_run.h: a run is a value. One fl_run_spec says what to run (a scene or scene file with
 * its settings, a stepper with its settings, how many steps, the world's switches and the
 * loop's callbacks); fl_run_open builds the world and the solver or peer, fl_run_go steps it
 * through the one stepping loop (sim/fl_loop.h), fl_run_close frees it. Every command and
 * figure that runs a scene goes through here, so that no other place builds a world, picks a
 * stepper or applies a stepper's settings.
 *
 * The room sits between harness/output/ (which it may use) and the commands and figures
 * (which use it); a setting's scope is the one --set rule (fl_harness_apply_sets,
 * fl_harness.h). The run's verdict (failed steps, energy, limits) is fl_run_verdict below.
 * Errors: FL_OK or a negative FL_ERR_* with fl_errmsg() set, as everywhere.
 */
#ifndef FL_RUN_H
#define FL_RUN_H
// layer 6: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 6
#error "harness/run/fl_run.h is in harness/, layer 6: a lower layer may not include it (docs/layers.md)"
#endif

#include <stddef.h>
#include <stdio.h>

#include "../../peers/fl_peer.h"
#include "../../sim/fl_loop.h"
#include "../../sim/fl_world.h"
#include "../../solvers/fl_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* world switches (fl_run_spec.flags) */
#define FL_RUN_CPU_TIMES 1   /* w->cpu_times = 1: collide_cpu_s and assemble_cpu_s */
#define FL_RUN_NO_METRICS 2  /* w->compute_metrics = 0: no common metrics after each solve */
#define FL_RUN_NO_GEOMETRY 4 /* w->observe_geometry = 0 */
#define FL_RUN_NO_PEER 8     /* the stepper is a registered solver, never a peer */

/* Most steps of one run taken from duration / dt (--steps has the same bound). */
#define FL_RUN_MAX_STEPS 1000000000L

/* What to run. Strings and arrays are the caller's and must outlive the run. A zero spec
 * with `scene` set opens that scene alone (no stepper). */
typedef struct fl_run_spec {
  /* the scene */
  const char *scene;      /* canonical scene name, scene file (*.json) or MJCF model (*.xml);
                             with scene_text: the name that messages give the text */
  const char *scene_text; /* a scene file's JSON text instead of a file, or NULL */
  int nscene;             /* scene settings "KEY=V" (fl_scene_open; not for scene_text) */
  const char *const *scene_set;
  fl_scene_reader read_model; /* MJCF reader (fl_world_from_mjcf), NULL: models refused */
  int flags;                  /* FL_RUN_* */

  /* the stepper: a registered solver (plug-ins included) or a peer (fl_peer_find); NULL:
   * none (a world without contacts or joints, or the scene alone) */
  const char *stepper;
  const char *opts;       /* a solver's options "k=v,k=v" applied first (fl_solver_set_options) */
  int nset;               /* settings by the --set rule (fl_harness_apply_sets), in order, after
                             opts; a peer receives them as they are */
  const char *const *set;
  int npeer_set;          /* with peer_set != NULL: what a peer receives instead of set */
  const char *const *peer_set;
  const char *opts_last;  /* a solver's options applied after set */
  const char *staging;    /* a peer's MJCF goes to <staging>/<stepper>.xml (kept); NULL: a
                             temporary file */

  /* the loop */
  long steps;       /* >= 0: steps to take; < 0: round(duration / dt) */
  double duration;  /* s, with steps < 0; <= 0: the scene's duration */
  int observe;      /* fl_loop's */
  long frame_every;
  int (*frame)(void *ctx, fl_world *w, long step, const fl_step_info *info);
  int (*each)(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *obs);
  void *ctx;
} fl_run_spec;

/* An open run. Between fl_run_open and fl_run_go a caller may read the world, change `steps`
 * and the spec copy's loop part (frame_every, frame, each, ctx), and wrap `stepper`. */
typedef struct fl_run {
  fl_run_spec spec;   /* a copy of the spec given */
  fl_world *world;    /* owned */
  fl_solver *solver;  /* owned; NULL for a peer or no stepper */
  fl_peer *peer;      /* owned; NULL for a solver or no stepper */
  fl_stepper stepper; /* the solver's or peer's (fl_stepper_solver(NULL) without one) */
  long steps;         /* the steps the spec resolves to; fl_run_go takes this many */
  int bad_set;        /* the index in spec.set of the setting a solver refused, -1: none */
  fl_loop loop;       /* fl_run_go's: taken, failed, first_failed, iters, wall_s, obs, tally */
} fl_run;

/* Creates registered solver `name` with spec's options and settings (opts, set, opts_last;
 * the rest of spec is not read): for checking a stepper's settings, a manifest's resolved
 * options, and solve's and plan's solvers (fl_solve_make_solver). *bad (may be NULL): as
 * fl_run.bad_set. Returns FL_OK or the error of fl_solver_create / fl_solver_set_option
 * (their message); *out is NULL on error. */
int fl_run_solver(const fl_run_spec *spec, const char *name, fl_solver **out, int *bad);

/* Opens a run: the world (fl_scene_open, or the text), its switches, the number of steps and
 * the stepper. Errors keep the code and message of the
 * part that failed (the scene's name the file's, key and range; the solver's or peer's, e.g.
 * FL_ERR_UNSUPPORTED for a peer that cannot express the world), and FL_ERR_OPTION_RANGE when
 * duration / dt is more than FL_RUN_MAX_STEPS steps (a given count is the caller's); what was built is freed again (fl_run_close is still
 * safe). */
int fl_run_open(const fl_run_spec *spec, fl_run *run);

/* Fills run->loop from the spec's loop part, run->steps and run->stepper, tells a peer how
 * many steps to expect (fl_peer_expect) and runs the loop (fl_loop_run):
 * FL_OK or the loop's error (run->loop.taken: the step that failed). May be called again
 * (the world goes on from where it is). */
int fl_run_go(fl_run *run);

/* Frees the loop's results, the stepper and the world; NULL-safe, and safe after a failed
 * open. */
void fl_run_close(fl_run *run);

/*---- the run's verdict: what `run` checks and says about each stepper's run ----*/

/* Energy gain flagged: E(t) - E(0) > FL_RUN_ENERGY_GAIN x S, with E = kinetic + potential +
 * elastic and S = K(0) + elastic(0) + sum over dynamic rigid and deformable bodies of m |g|
 * size (the energy of raising each body by its own size): a scale independent of where z = 0
 * is. Not checked where forces, drives or moving prescribed bodies do work on the system. */
#define FL_RUN_ENERGY_GAIN 0.1
#define FL_RUN_MAX_LIMITS 64

/* one limit's crossings over a run */
typedef struct fl_run_limit {
  char obs[40], label[24];
  double lo, hi;
  long steps, first; /* steps outside [lo, hi], the first of them (-1: none) */
  double worst;      /* the value farthest outside */
} fl_run_limit;

typedef struct fl_run_verdict {
  long steps;
  long iters;
  int failed;         /* steps whose reason was < 0 */
  int fallback;       /* steps the solver solved again with a fallback law (fl_result) */
  long first_failed;  /* -1: none */
  double solve_s, collide_s, assemble_s, wall_s;
  double pen_max;     /* largest pen_max over the run (m) */
  int energy_checked; /* 0 where external work makes a gain legitimate */
  int external;       /* forces, drives or moving prescribed bodies do work */
  double e0, escale;  /* E(0) and the scale S (J) */
  double egain;       /* largest E(t) - E(0) (J) */
  long energy_steps, energy_first;
  long nonfinite_steps, nonfinite_first; /* steps whose energy is NaN or infinite, the first */
  double nonfinite;   /* the energy at nonfinite_first (NaN, +inf or -inf) */
  int nlimit;
  fl_run_limit limit[FL_RUN_MAX_LIMITS];
  char error[256];    /* error that stopped the run, "" if none */
} fl_run_verdict;

/* Starts v (zeroed here) from w's initial state: the limits, E(0), the scale, whether the
 * energy is checked. val: fl_world_nobs(w) doubles of scratch. FL_OK or the observables'
 * error. */
int fl_run_verdict_begin(fl_world *w, double *val, fl_run_verdict *v);

/* After step k (the loop's each, l the loop): tallies the step's times, penetration (val[2]),
 * energy and fallback into v, and writes the step's flags into buf (n bytes; "" when none,
 * else ';'-separated labels: failed, energy, a limit's label). */
void fl_run_verdict_step(fl_run_verdict *v, const fl_world *w, const double *val, long k,
                         const fl_step_info *info, const fl_loop *l, char *buf, size_t n);

/* After the run: the loop's counts and limit tallies into v, and rc's error (rc < 0). */
void fl_run_verdict_end(fl_run_verdict *v, const fl_loop *l, int rc);

/* v's status in words: "ok", or what went wrong (buf, n bytes); returns buf. */
const char *fl_run_verdict_text(const fl_run_verdict *v, char *buf, size_t n);

/* v into a manifest's run object r: steps, iterations, times, pen_max and "flags" (failed
 * steps, energy, limits) (r is a cJSON object). */
struct cJSON;
void fl_run_verdict_json(const fl_run_verdict *v, struct cJSON *r);

/* The line that says what was checked (the energy scale, the limits) to f. */
void fl_run_verdict_checked(const fl_run_verdict *v, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* FL_RUN_H */

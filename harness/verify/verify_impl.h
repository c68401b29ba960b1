// SPDX-License-Identifier: Apache-2.0
/* verify_impl.h: the analytic suite's cases and rows as the engine (verify_run.c) runs them and
 * the command (harness/cli/verify.c) prints them: the case table and its scenes
 * (verify_cases.c), the closed forms and judges (verify_judge.c), the solver rows. Internal to
 * harness/. */
#ifndef FL_VERIFY_IMPL_H
#define FL_VERIFY_IMPL_H
// layer 6: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 6
#error "harness/verify/verify_impl.h is in harness/, layer 6: a lower layer may not include it (docs/layers.md)"
#endif

#include <math.h>
#include <stddef.h>

#include "../../sim/fl_world.h"

#define G 9.81
#define PI 3.14159265358979323846
#define MAXQ 6     /* quantities per case */
#define MAXPROBE 6 /* bodies a judge reads (a resting pyramid reads six) */

//---- a run's trajectory ----

/* Probe bodies' state after each step (index 0: the initial state). */
typedef struct vtraj {
  int n;          /* states stored (steps + 1) */
  int steps, nfail;
  double dt;
  double *t;      /* (n) s */
  double *x[MAXPROBE], *v[MAXPROBE], *w[MAXPROBE]; /* (3 n) each */
  double *q[MAXPROBE]; /* (4 n) orientations (w, x, y, z); identity for a deformable probe */
  double pen_max; /* deepest penetration over the run (m), from the geometry */
  double obs_max; /* largest value over the run of the case's `track` observable */
  double obs_end; /* its value after the last step */
  fl_world *world; /* the world after the last step (judges reading observables or FEM nodes) */
} vtraj;

/* one quantity of a case: expected, tolerance; absolute when expected is 0. An `atleast`
 * quantity is a lower bound: its error is expected / measured, its tolerance 1. */
typedef struct vq {
  char name[40];
  double expected, measured, tol;
  int atleast;
} vq;

/* A case is one row of the table in verify_cases.c: a scene built from the row's parameters p
 * (or a canonical scene with settings), run for its duration at its dt with every solver row,
 * and a judge of the run (verify_judge.c) that fills its quantities with their tolerances. */
typedef struct vcase vcase;
struct cJSON;
typedef struct cJSON *vscene(const vcase *c, double duration); /* the scene file as a cJSON tree */
typedef int vjudge(const vcase *c, const vtraj *tr, vq *q);      /* fills q, returns how many */
struct vcase {
  const char *name, *what;
  vscene *scene;   /* the scene from p (NULL: `canonical`) */
  vjudge *judge;   /* the quantities of a finished run */
  double p[6];     /* case parameters, see each scene and judge */
  int quick;       /* part of --quick */
  double dt, dur, dur_quick; /* s: the step, the full and the --quick durations */
  const char *probe[MAXPROBE]; /* body names read: a rigid body, or a deformable one (its
                                  centre of mass and mean velocity; w zero) */
  const char *canonical;       /* a canonical scene instead of scene(), or NULL */
  const char *canonical_set;   /* its settings "k=v,k=v" */
  const char *quick_set;       /* settings added to canonical_set in --quick, or NULL */
  double rest_R;               /* > 0: the run ends once the probe's v + |omega_z| rest_R is
                                  below rest_speed (a coin at rest has nothing more to show) */
  double rest_speed;
  const char *track;           /* an observable whose largest value over the run is kept
                                  (vtraj.obs_max), or NULL */
};

/* The judges (verify_judge.c; docs/verify.md says what each measures). */
vjudge fl__vj_slide, fl__vj_slope, fl__vj_drag, fl__vj_sphere_slide, fl__vj_sphere_roll,
  fl__vj_roll, fl__vj_turntable, fl__vj_turntable_driven, fl__vj_blocks, fl__vj_tip, fl__vj_rest,
  fl__vj_fem_slide, fl__vj_heavy, fl__vj_sink, fl__vj_coin, fl__vj_arch_stand, fl__vj_arch_fall,
  fl__vj_hertz, fl__vj_cube_hang, fl__vj_cube_compress;

/* Case c's scene file for a run of `duration` s, as text (fl_free it), or NULL for a canonical
 * scene (c->scene NULL) or out of memory (fl_errmsg says). */
char *fl__verify_scene_text(const vcase *c, double duration);

/* relative error, or absolute when the expected value is 0 */
static inline double qerr(const vq *q) {
  if (q->atleast) return q->measured > 0 ? q->expected / q->measured : q->measured == 0 ? INFINITY : NAN;
  double d = fabs(q->measured - q->expected);
  return q->expected != 0 ? d / fabs(q->expected) : d;
}


static inline int qpass(const vq *q) { return qerr(q) <= q->tol; } /* NaN fails */

/* The cases, in the order verify runs and prints them. */
extern const vcase fl__verify_cases[];
extern const int fl__verify_ncases;
#define NCASES fl__verify_ncases
#define FL_VERIFY_MAXCASES 48 /* room for the cases in the command's tables */

//---- the solver rows (verify_run.c) ----

/* One row of the suite: a solver or peer at settings. */
typedef struct vsolver {
  const char *solver;   /* registered solver or peer name */
  const char *settings; /* "k=v,k=v" or "" (defaults) */
  const char *why;      /* where the setting is recommended, a plug-in's file, or NULL */
} vsolver;

#define FL_VERIFY_MAXROWS 56 /* the rows' table (24) and 32 more registered solvers */

/* The number of rows (the table, then every other registered solver at its defaults); the
 * first call registers the solvers and fills them. */
int fl__verify_nrows(void);
/* Row j, 0 <= j < fl__verify_nrows() (static storage). */
const vsolver *fl__verify_row(int j);

/* Writes case c's scene file to path, as `frictionlab run` replays it: a canonical scene built
 * with its settings (and its --quick ones when quick) and saved as `export --scene-json` does,
 * or the case's generated scene for its (quick) duration. Returns FL_OK or an error (fl_errmsg
 * says; "cannot write" when the file could not be written). */
int fl__verify_write_case(const vcase *c, int quick, const char *path);

#endif /* FL_VERIFY_IMPL_H */

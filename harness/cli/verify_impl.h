// SPDX-License-Identifier: Apache-2.0
/* verify_impl.h: the analytic suite's cases (verify_cases.c: scenes, judges, the case table)
 * as the command (verify.c) runs them. Internal to harness/cli/. */
#ifndef FL_VERIFY_IMPL_H
#define FL_VERIFY_IMPL_H

#include <math.h>
#include <stddef.h>

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

typedef struct vcase vcase;
struct vcase {
  const char *name, *what;
  double p[6];   /* case parameters, see each case */
  int quick;     /* part of --quick */
  /* scene JSON into buf; duration from the case (quick or full) */
  void (*scene)(const vcase *c, double duration, char *buf, size_t n);
  /* quantities of a finished run */
  int (*judge)(const vcase *c, const vtraj *tr, vq *q);
  double dt, dur, dur_quick;
  const char *probe[MAXPROBE]; /* body names read: a rigid body, or a deformable one (its
                                  centre of mass and mean velocity; w zero) */
  const char *canonical;       /* a canonical scene instead of scene(), or NULL */
  const char *canonical_set;   /* its settings "k=v,k=v" */
  double rest_R;               /* > 0: the run ends once the probe's v + |omega_z| rest_R is
                                  below rest_speed (a coin at rest has nothing more to show) */
  double rest_speed;
  const char *track;           /* an observable whose largest value over the run is kept
                                  (vtraj.obs_max), or NULL */
  const char *quick_set;       /* settings added to canonical_set in --quick, or NULL */
};


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

#endif /* FL_VERIFY_IMPL_H */

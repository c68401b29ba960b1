// SPDX-License-Identifier: Apache-2.0
/* fl_verify.h: the analytic suite of `frictionlab verify` (harness/verify/; the command is
 * harness/cli/verify.c), for the command and for `check`, which records the quick suite's
 * verdicts and errors as a baseline.
 *
 * Not thread-safe (the suite keeps a static scene buffer). Internal to harness/.
 */
#ifndef FL_VERIFY_H
#define FL_VERIFY_H
// layer 6: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 6
#error "harness/verify/fl_verify.h is in harness/, layer 6: a lower layer may not include it (docs/layers.md)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Which part of the suite to run. */
typedef struct fl_verify_opts {
  int quick;           /* 1: the shorter durations (CI) */
  const char *only;    /* comma-separated case names, or NULL for every case */
  const char *solvers; /* comma-separated solver or peer names, or NULL for every row */
  int nset;            /* extra settings "[solver.]key=value" applied after each row's own to */
  const char *const *set; /* registered solvers (fl_harness_apply_sets; peers ignore them) */
} fl_verify_opts;

/* One judged quantity of one (case, solver row); strings are static or live during the
 * callback only. A row that did not run (status 1 unsupported, 2 error) comes once, with
 * quantity "-", NaN numbers and the reason in message. */
typedef struct fl_verify_row {
  const char *case_name, *solver, *settings; /* settings "k=v,k=v", "" for the defaults */
  const char *quantity;                      /* "distance_m" */
  double expected, measured;                 /* in the quantity's unit */
  double rel_error;  /* |measured - expected| / |expected|, absolute when expected is 0; for a
                        lower bound (expected the bound, tolerance 1) expected / measured */
  double tolerance;  /* on rel_error */
  int pass;          /* rel_error <= tolerance (0 for NaN) */
  const char *verdict; /* "pass", "fail", "unsupported", "error" */
  int status;          /* 0 ran, 1 unsupported, 2 error */
  const char *message; /* why unsupported or error, else "" */
  int steps, nfail;    /* steps run; steps whose solver ended with a negative reason */
} fl_verify_row;

/* Called once per row; a negative return stops the suite with that code. */
typedef int (*fl_verify_row_fn)(void *ctx, const fl_verify_row *row);

/* Runs the selected cases and rows and reports every judged quantity to fn. An unsupported
 * or failing run is a row, not an error. Returns FL_OK, the callback's error, or an error of
 * the suite itself (a scene that does not parse: FL_ERR_FORMAT; FL_ERR_NOMEM). */
int fl__verify_run(const fl_verify_opts *o, fl_verify_row_fn fn, void *ctx);

/*---- the scheme's own answers (docs/verify.md), for the judges and tests/test_verify.c ----*/

/* A point mass on a rigid Coulomb contact under the stepper's semi-implicit Euler, per unit
 * mass: tangential acceleration a(t) = a0 + a1 min(t, t1) evaluated at each step's start
 * (t accumulated as t += dt), normal acceleration gn (m/s^2) into the contact, friction mu.
 * vs = v_n + dt a(t_n); v_{n+1} = 0 when |vs| <= mu gn dt, else vs - sign(vs) mu gn dt;
 * x_{n+1} = x_n + dt v_{n+1}. Writes x and v (nsteps + 1 each, caller's; x[0] = 0, v[0] = v0). */
void fl__verify_ref_1d(double dt, int nsteps, double v0, double mu, double gn, double a0,
                       double a1, double t1, double *x, double *v);
/* A solid sphere (I = 2/5 m R^2) on a rigid plane under the same scheme: initial speed v0 and
 * no spin, tangential acceleration a, normal gn. The friction impulse per unit mass removes
 * the free slip us over 3.5 (1 + m R^2/I) and is bounded by mu gn dt. Writes x, v and the
 * slip u = v - R w (nsteps + 1 each). */
void fl__verify_ref_sphere(double dt, int nsteps, double v0, double mu, double gn, double a,
                           double *x, double *v, double *u);
/* A round body rolling on a rigid plane (sphere k = 5/2, solid cylinder on its side k = 2,
 * k = m R^2/I) under the same scheme: initial speed v0 and spin w0 = v0/R (rolling; spin = 1)
 * or none (spin = 0), tangential acceleration a, normal gn. The sticking impulse per unit mass
 * is us/(1 + k) (us the free slip), bounded by mu gn dt; the spin gains k times it (R w).
 * Writes x, v and the slip u = v - R w (nsteps + 1 each). Continuous limit when rolling:
 * a/(1 + 1/k) (2/3 g sin for a cylinder); slipping when mu < tan(theta)/(1 + k). */
void fl__verify_ref_roll(double dt, int nsteps, double v0, int spin, double mu, double gn,
                         double a, double k, double *x, double *v, double *u);
/* Two blocks, a lower one (m1, kg) on a rigid plane (friction mu0) and an upper one (m2) on it
 * (mu1), at rest at t = 0, a constant horizontal force F (N) on the lower one, gravity 9.81:
 * the same scheme with the stack's fixed normal impulses (m1 + m2) g dt and m2 g dt, each
 * step's two friction impulses the maximal-dissipation ones. Writes x1, v1 (lower) and x2, v2
 * (upper) along F (nsteps + 1 each). Continuous limits: together at (F - mu0 (m1 + m2) g)/(m1 +
 * m2) while that is at most mu1 g; otherwise a2 = mu1 g, a1 = (F - mu1 m2 g - mu0 (m1 + m2) g)/m1. */
void fl__verify_ref_blocks(double dt, int nsteps, double m1, double m2, double F, double mu0,
                           double mu1, double *x1, double *v1, double *x2, double *v2);
/* A box of half width hw and half height hh (m) standing on a rigid plane, pushed along +x by
 * F(t) = fmax g min(t/T, 1) per unit mass at height h above the plane (its centre of mass force
 * and the world-fixed moment F (h - hh)), turning about its front bottom edge as a hinge in the
 * same scheme: at rest while the moment about the edge tau(0, t_k) = F h - g hw is <= 0, then
 * omega += dt tau(theta_k, t_k)/I_p, theta += dt omega, I_p = (4 hw^2 + 4 hh^2)/12 + hw^2 + hh^2
 * per unit mass, tau = F (h - hh + hw sin theta + hh cos theta) + g (hh sin theta - hw cos theta).
 * Writes theta (rad) and omega (rad/s), n + 1 each. */
void fl__verify_ref_tip(double dt, int n, double fmax, double T, double h, double hw, double hh,
                        double *th, double *om);
/* A point mass co-rotating at radius r0 on a plane turning at omega (rad/s) about z through the
 * origin, gravity 9.81, friction mu; the surface velocity is taken at the step's start point.
 * Returns the radius (m) after nsteps. */
double fl__verify_ref_turntable(double dt, int nsteps, double r0, double omega, double mu);
/* The same recursion; *release (when non-NULL) gets the first step (0-based) after which the
 * relative velocity exceeds thr (m/s), -1 if none within nsteps. Returns the radius (m). */
double fl__verify_ref_turntable_release(double dt, int nsteps, double r0, double omega, double mu,
                                        double thr, int *release);

#ifdef __cplusplus
}
#endif
#endif /* FL_VERIFY_H */

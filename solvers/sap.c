// SPDX-License-Identifier: Apache-2.0
/* sap.c: SAP, the semi-analytic primal contact solver of Castro, Permenter and Han (2022), as in
 * Drake (facts in design/SAP.md, model in design/SOLVERS.md section 1).
 *
 * SAP minimizes the strictly convex, unconstrained cost
 *
 *     l(v) = 1/2 ||v - v*||_A^2 + sum_k l_k(vc_k),      vc = J v + b,
 *
 * where each constraint k has a regularization R_k (diagonal), a bias vhat_k, the unprojected
 * impulse y_k = R_k^-1 (vhat_k - vc_k), the impulse gamma_k = P_k(y_k) (projection onto the
 * friction cone in the R norm for contacts, clamp to bounds for bilateral rows) and the cost
 * l_k = 1/2 gamma_k^T R_k gamma_k (contacts) or its continuous envelope for clamped rows. Then
 *
 *     grad l = A (v - v*) - J^T gamma,     H = A + J^T G J,     G_k = dP_k/dy_k R_k^-1.
 *
 * Newton's direction dv = -H^-1 grad comes from a dense Cholesky (small problems) or CHOLMOD's
 * supernodal Cholesky (symbolic analysis once in setup, numeric factorization per iteration),
 * and the step length from an exact line search on l(alpha) (convex in alpha) or Armijo
 * backtracking. Along the line, only the constraint terms are re-evaluated: with cached
 * dp = A dv, dvc = J dv and dv^T A dv, one trial costs O(rows).
 *
 * Contact rows are normal first (n, t1, t2) here (Drake orders tangent first).
 *
 * Every contact (rigid near-rigid, compliant, a hydroelastic triangle, a deformable vertex) takes
 * the convex model that option `model` names, one function per model (con_eval; docs/sap.md
 * section 1.1): `convex` (alias `sap`), the cone projection above, which lifts a sliding contact
 * by about mu |v_t|; `similar` (Castro, Han, Masterjohn 2023), the normal law evaluated at
 * v_n - mu |v_t|_s, which lifts it likewise; `lagged` (the default; SAP.md section 4.4), the
 * normal law alone plus a regularized Coulomb friction bounded by mu n0, which does not. n0 is
 * the spring's start-of-step force for a compliant contact and, a rigid contact having none, the
 * last step's normal impulse the stepper matched (gamma_guess); a step is solved again with its
 * own normal impulses where the lag would move a contact by more than vs (new contacts,
 * impacts; option `passes`). Drake's similar and lagged use Hunt-Crossley dissipation; here the
 * problem's linear tau_d is kept so that every solver sees the same normal law.
 *
 * Stopping (Drake's rule): ||D grad|| <= abs_tol + rel_tol max(||D A v||, ||D J^T gamma||) with
 * D = diag(A)^-1/2, or cost stagnation with a step alpha > 0.5. SAP applies this rule itself
 * (the spine's test relative to iteration 0 does not fit SAP's scale), so after iteration 0 it
 * clears s->error0 and sets s->reason when its rule holds; max_iter, time_limit, NaN and the
 * monitors stay with the spine.
 *
 * This file: the cone projection, the constraint models, the Newton iteration and the ops table;
 * sap_setup.c: the set-up (constraint blocks, regularization, CHOLMOD analysis).
 */
#include <cholmod.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "sap_impl.h"

#define OO(m) offsetof(sap_opts, m)
static const fl_option_desc sap_table[] = {
  {"beta", FL_OPT_REAL, OO(beta), 0, 1e3, 1.0, NULL,
   "near-rigid parameter of contacts: R_n >= beta^2/(4 pi^2) w (0 = off; 1e-3..1e-2 stiffer)"},
  {"beta_h", FL_OPT_REAL, OO(beta_h), 0, 1e3, 0.1, NULL,
   "near-rigid parameter of bilateral rows"},
  {"sigma", FL_OPT_REAL, OO(sigma), 1e-12, 1e3, 1e-3, NULL,
   "tangential regularization R_t = sigma w (slip in stiction about sigma mu dt g)"},
  {"line_search", FL_OPT_ENUM, OO(line_search), 0, 1, LS_EXACT, "exact|backtracking",
   "exact (Newton with bisection on l'(alpha)) or Armijo backtracking"},
  {"linear", FL_OPT_ENUM, OO(linear), 0, 3, LIN_AUTO, "auto|dense|cholmod|pcg",
   "Newton system: dense Cholesky, CHOLMOD, PCG (conjugate gradients on H with an incomplete "
   "Cholesky preconditioner, to an inexact-Newton tolerance), or auto (dense when nv <= "
   "dense_max or when the constraint blocks hold more than 4 nv^2 dof pairs, PCG when "
   "nv >= pcg_min, else CHOLMOD)"},
  {"dense_max", FL_OPT_INT, OO(dense_max), 0, 100000, 96, NULL,
   "largest nv solved densely with linear=auto"},
  {"cholmod", FL_OPT_ENUM, OO(cholmod), 0, 2, CHOL_AUTO, "auto|supernodal|simplicial",
   "CHOLMOD factorization: supernodal, simplicial, or auto (CHOLMOD picks supernodal when "
   "flops/nnz(L) >= 40; per-supernode overhead makes supernodal slow on many 6x6 cliques)"},
  {"start", FL_OPT_ENUM, OO(start), 0, 1, START_V0, "v0|vstar",
   "initial guess when warm_start is off: v0 (Drake) or v*"},
  {"alpha_max", FL_OPT_REAL, OO(alpha_max), 1.0, 100, 1.5, NULL,
   "largest step of the exact line search"},
  {"ls_tol", FL_OPT_REAL, OO(ls_tol), 1e-16, 1, 1e-8, NULL,
   "exact line search tolerance on l'(alpha)/|l'(0)|"},
  {"ls_max_iter", FL_OPT_INT, OO(ls_max_iter), 1, 1000, 100, NULL,
   "line-search iterations (exact: 100, backtracking uses at most 40)"},
  {"ls_rho", FL_OPT_REAL, OO(ls_rho), 0.01, 0.99, 0.8, NULL, "backtracking factor"},
  {"ls_c", FL_OPT_REAL, OO(ls_c), 0, 0.5, 1e-4, NULL, "Armijo constant"},
  {"cost_abs_tol", FL_OPT_REAL, OO(cost_abs_tol), 0, INFINITY, 1e-30, NULL,
   "stagnation test: absolute cost change (J)"},
  {"cost_rel_tol", FL_OPT_REAL, OO(cost_rel_tol), 0, 1, 1e-15, NULL,
   "stagnation test: relative cost change (with alpha > 0.5)"},
  {"model", FL_OPT_ENUM, OO(model), 0, 3, MODEL_LAGGED, "convex|similar|lagged|sap",
   "contact model of every contact (rigid near-rigid, compliant, hydroelastic, FEM): lagged "
   "(default: the normal law alone, friction bounded by mu n0 with n0 the start-of-step "
   "spring force, or for rigid contacts the last step's normal impulse; a sliding body stays "
   "on its surface), convex (SAP's cone projection; sliding contacts separate at about "
   "mu |v_t|: bodies hop), similar (Castro et al. 2023's regularized cone; also lifts sliding "
   "contacts by mu |v_t|); sap = convex (old name)"},
  {"vs", FL_OPT_REAL, OO(vs), 1e-12, 1e3, 1e-4, NULL,
   "similar, lagged friction=soft: stiction tolerance of the regularized friction (m/s); "
   "lagged: the velocity a re-lag must exceed (passes)"},
  {"passes", FL_OPT_INT, OO(passes), 1, 10, 2, NULL,
   "lagged: solves per step; after each, the contacts whose bound mu n0 would move them by more "
   "than vs (m/s) against mu gamma_n take their normal impulse as n0 and the step is solved "
   "again (new contacts, impacts); 1 = plain lag"},
  {"friction", FL_OPT_ENUM, OO(friction), 0, 1, FRIC_HUBER, "huber|soft",
   "lagged: friction law; huber (default: the Moreau envelope of mu n0 |v_t| with R_t, "
   "stiction gamma_t = -v_t/R_t up to the bound, exact Coulomb beyond it) or soft "
   "(mu n0 sqrt(|v_t|^2 + eps^2), eps = max(vs, mu sigma w n0): Drake's; creeps at the friction "
   "angle, but Newton needs fewer iterations on granular piles)"},
  {"lag_sigma", FL_OPT_REAL, OO(lag_sigma), 1e-12, 1e3, 5e-4, NULL,
   "lagged huber: stiction R_t = lag_sigma w (a sticking contact slips at most mu n0 R_t)"},
  {"stick_tol", FL_OPT_REAL, OO(stick_tol), 0, 1e3, 0, NULL,
   "lagged huber: once the step is solved, contacts inside or near the stiction region "
   "(|v_t| < 2 mu n0 R_t) that slip faster than stick_tol (m/s) get R_t = stick_tol/(10 mu n0) "
   "and the step is solved once more from there (Newton with those contacts sticking); "
   "0 = off"},
  {"fallback", FL_OPT_BOOL, OO(fallback), 0, 1, 1, NULL,
   "lagged huber: a step that Newton cannot solve (max_iter, line search, stagnation) is "
   "solved again with friction=soft from its best iterate, with a max_iter budget of its own; "
   "counted in the result's fallback (1 = on)"},
  {"predict", FL_OPT_BOOL, OO(predict), 0, 1, 1, NULL,
   "lagged huber: where the Newton step reverses the slip of sliding contacts, the step is "
   "taken again with them (and the sticking ones) sticking, if that descends (one more "
   "factorization; the same answer, fewer iterations: docs/sap.md section 2.1; 0 = off)"},
  {"predict_alpha", FL_OPT_REAL, OO(predict_alpha), 0, 1.5, 0.1, NULL,
   "predict: when the line search along the predicted direction stops below this step, the "
   "plain Newton direction's line search is run too and the lower cost taken (a wrong "
   "prediction stalled Newton at steps of 1e-4; docs/sap.md section 2.1; 0 = never)"},
  {"line_cache", FL_OPT_BOOL, OO(line_cache), 0, 1, 1, NULL,
   "after a Newton step, J v and A (v - v*) move by alpha J dv and alpha A dv (the line "
   "search's caches) instead of being multiplied out again: the same to round-off, two "
   "sparse products fewer an iteration (0 = multiply)"},
  {"reassemble", FL_OPT_ENUM, OO(reassemble), 0, 1, 1, "all|changed",
   "sparse Newton matrix after the first of a solve: all (A and every constraint block again) "
   "or changed (only the blocks whose G changed since the last assembly, by J^T dG J: the "
   "same matrix to round-off)"},
  {"ldl", FL_OPT_BOOL, OO(ldl), 0, 1, 1, NULL,
   "simplicial CHOLMOD factor: after CHOLMOD's first numeric factorization of a solve, the "
   "Newton matrix is factorized again by SAP's own up-looking LDL^T on that factor's fixed "
   "pattern (row lists made once a solve; CHOLMOD finds each row's pattern anew every time); "
   "the same factor to round-off (0 = CHOLMOD every time)"},
  {"pcg_min", FL_OPT_INT, OO(pcg_min), 0, 100000000, 20000, NULL,
   "linear=auto: the PCG inner solve from this many dofs on (0 = never); 20000 is about 3300 "
   "grains of the granular lattice: a loaded step under PCG costs 1.9x CHOLMOD's at 343 "
   "grains, 1.15x at 1000; at 3375 PCG's whole first step costs 0.24x one CHOLMOD "
   "iteration (docs/sap.md 2.5)"},
  {"pcg_eta", FL_OPT_REAL, OO(pcg_eta), 1e-14, 0.9, 0.01, NULL,
   "PCG: largest forcing term; a direction is solved to ||D r|| <= min(pcg_eta, "
   "||D grad||/scale) ||D rhs|| (scale: the momentum scale of the rel_tol test)"},
  {"pcg_max_iter", FL_OPT_INT, OO(pcg_max_iter), 1, 100000, 1000, NULL,
   "PCG: conjugate-gradient iterations a Newton direction"},
  {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}};
#undef OO

//---- projection onto the friction cone in the R norm ----

/* Projects y = (y_n, y_t1, y_t2) onto { ||g_t|| <= mu g_n } in the norm of R = diag(R_n, R_t,
 * R_t) (R[1] == R[2]) and writes the derivative G = dP/dy R^-1 (row-major 3x3, symmetric PSD)
 * when G is not NULL. Returns MODE_STICK, MODE_SLIDE or MODE_NONE. */
int fl__sap_project(double mu, const double R[3], const double y[3], double g[3], double G[9]) {
  double Rn = R[0], Rt = R[1];
  double yn = y[0], yt1 = y[1], yt2 = y[2];
  // soft norm: y_r never vanishes, so the direction t = y_t / y_r is always defined
  double yr = sqrt(yt1 * yt1 + yt2 * yt2 + SAP_EPS_SOFT * SAP_EPS_SOFT);
  double muh = mu * Rt / Rn;

  // stiction: y inside the cone, gamma = y, G = R^-1
  if (yr <= mu * yn) {
    g[0] = yn;
    g[1] = yt1;
    g[2] = yt2;
    if (G) {
      memset(G, 0, 9 * sizeof *G);
      G[0] = 1.0 / Rn;
      G[4] = G[8] = 1.0 / Rt;
    }
    return MODE_STICK;
  }
  // no contact: y inside the polar cone (in the R metric)
  if (yn <= -muh * yr) {
    g[0] = g[1] = g[2] = 0.0;
    if (G) memset(G, 0, 9 * sizeof *G);
    return MODE_NONE;
  }
  // sliding: gamma_n = (y_n + muh y_r)/(1 + mu muh), gamma_t = mu gamma_n t
  double f = 1.0 / (1.0 + mu * muh);
  double t1 = yt1 / yr, t2 = yt2 / yr;
  double gn = (yn + muh * yr) * f;
  g[0] = gn;
  g[1] = mu * gn * t1;
  g[2] = mu * gn * t2;
  if (G) {
    // dP/dy blocks: dgn/dyn = f, dgn/dyt = muh f t^T, dgt/dyn = mu f t,
    // dgt/dyt = a (I - t t^T) + b t t^T with a = mu gn/y_r, b = mu muh f; then G = dP/dy R^-1
    // (symmetric since muh/R_t = mu/R_n)
    double a = mu * gn / yr, b = mu * muh * f;
    G[0] = f / Rn;
    G[1] = G[3] = mu * f * t1 / Rn;
    G[2] = G[6] = mu * f * t2 / Rn;
    G[4] = (a * (1.0 - t1 * t1) + b * t1 * t1) / Rt;
    G[8] = (a * (1.0 - t2 * t2) + b * t2 * t2) / Rt;
    G[5] = G[7] = (b - a) * t1 * t2 / Rt;
  }
  return MODE_SLIDE;
}


//---- constraint evaluation ----

/* The lagged model of a contact (SAP.md section 4.4 with the problem's own linear dissipation in
 * place of Hunt-Crossley's): with x = vhat_n - v_n and s = sqrt(|v_t|^2 + eps^2),
 *
 *     l = (x)_+^2/(2 R_n) + mu n0 (s - eps),   gamma = ((x)_+/R_n, -mu n0 v_t/s),
 *
 * so the normal impulse is exactly the contact's normal law (the compliant gamma_n = dt (-k (phi0
 * + dt v_n) - tau_d k v_n)_+, or the near-rigid spring of a rigid contact) and friction is a
 * regularized Coulomb law whose bound mu n0 is fixed within the pass. The cost is convex and C1; G is its Hessian
 * (normal: 1/R_n when x > 0; tangential: mu n0 (s^2 I - v_t v_t^T)/s^3). Arguments: f = mu n0
 * (N s), e = eps (m/s), the normal R_n and vhat_n, vc = (v_n, v_t1, v_t2) (m/s); writes gam
 * (N s), G (row-major 3x3, may be NULL) and the mode; returns l (J). */
double fl__sap_lagged(double f, double e, double Rn, double vhn, const double vc[3], double gam[3],
                      double G[9], int *mode) {
  double x = vhn - vc[0];
  double gn = x > 0.0 ? x / Rn : 0.0;
  double t1 = vc[1], t2 = vc[2], tt = t1 * t1 + t2 * t2;
  double s = sqrt(tt + e * e);
  gam[0] = gn;
  gam[1] = -f * t1 / s;
  gam[2] = -f * t2 / s;
  if (G) {
    double c = f / (s * s * s);
    memset(G, 0, 9 * sizeof *G);
    G[0] = x > 0.0 ? 1.0 / Rn : 0.0;
    G[4] = c * (s * s - t1 * t1);
    G[8] = c * (s * s - t2 * t2);
    G[5] = G[7] = -c * t1 * t2;
  }
  *mode = (x <= 0.0 && f == 0.0) ? MODE_NONE : (tt <= e * e ? MODE_STICK : MODE_SLIDE);
  // s - eps = tt/(s + eps) without cancellation at small slip
  return 0.5 * gn * x + f * tt / (s + e);
}


/* The lagged model with the Huber friction: the normal law of fl__sap_lagged and, for
 * friction, the Moreau envelope of f |v_t| with parameter R_t,
 *
 *     l_t = |v_t|^2/(2 R_t)            gamma_t = -v_t/R_t           when |v_t| < f R_t (stiction)
 *         = f |v_t| - f^2 R_t/2        gamma_t = -f v_t/|v_t|       otherwise (sliding),
 *
 * i.e. gamma_t is the projection of -v_t/R_t on the disk of radius f = mu n0: exact Coulomb
 * friction beyond the stiction region, a sticking contact slipping at R_t |gamma_t| <= f R_t.
 * Convex and C1; G is its Hessian (stiction: I/R_t; sliding: f (I - t t^T)/|v_t|,
 * t = v_t/|v_t|). Arguments: f (N s), Rt (s/kg), R_n, vhat_n, vc (m/s); writes gam (N s), G
 * (row-major 3x3, may be NULL) and the mode; returns l (J). */
/* |v_t| of a slip (m/s): sqrt of the sum of squares, not hypot (libm's hypot guards against
 * overflow at about 40 instructions a call, an eighth of a line-search evaluation; slips are far
 * from 1e154 m/s, and below 1e-154 m/s the square's underflow to 0 leaves gamma_t unchanged) */
static inline double slip_norm(double t1, double t2) { return sqrt(t1 * t1 + t2 * t2); }

double fl__sap_lagged_huber(double f, double Rt, double Rn, double vhn, const double vc[3],
                            double gam[3], double G[9], int *mode) {
  double x = vhn - vc[0];
  double gn = x > 0.0 ? x / Rn : 0.0;
  double t1 = vc[1], t2 = vc[2], ut = slip_norm(t1, t2);
  int stick = f > 0.0 && ut < f * Rt;
  double lt;
  gam[0] = gn;
  if (G) {
    memset(G, 0, 9 * sizeof *G);
    G[0] = x > 0.0 ? 1.0 / Rn : 0.0;
  }
  if (stick) {
    gam[1] = -t1 / Rt;
    gam[2] = -t2 / Rt;
    if (G) G[4] = G[8] = 1.0 / Rt;
    lt = 0.5 * ut * ut / Rt;
  } else if (ut > 0.0) {
    double c = f / ut, n1 = t1 / ut, n2 = t2 / ut; // (n1, n2) the unit slip direction
    gam[1] = -f * n1;
    gam[2] = -f * n2;
    if (G) {
      G[4] = c * n2 * n2;
      G[8] = c * n1 * n1;
      G[5] = G[7] = -c * n1 * n2;
    }
    lt = f * (ut - 0.5 * f * Rt);
  } else {
    gam[1] = gam[2] = 0.0; // f = 0 at zero slip
    lt = 0.0;
  }
  *mode = (x <= 0.0 && f == 0.0) ? MODE_NONE : (stick ? MODE_STICK : MODE_SLIDE);
  return 0.5 * gn * x + lt;
}


/* The similar model of a contact (Castro, Han, Masterjohn 2023; SAP.md section 4.4 with the
 * problem's linear normal law): the normal law evaluated at z = v_n - mu (s - eps),
 * s = sqrt(|v_t|^2 + eps^2), x = vhat_n - z,
 *
 *     l = (x)_+^2/(2 R_n),   gamma = (n, -mu n v_t/s),   n = (x)_+/R_n,
 *
 * convex because (x)_+^2 is convex non-decreasing in x and x is convex in vc. Hessian
 * G = (1/R_n) a a^T [x > 0] + mu n (s^2 I - v_t v_t^T)/s^3 (tangential block), a = (1, -mu v_t/s).
 * Arguments: mu, e = eps (m/s), R_n, vhat_n, vc = (v_n, v_t1, v_t2) (m/s); writes gam (N s),
 * G (row-major 3x3, may be NULL) and the mode; returns l (J). */
double fl__sap_similar(double mu, double e, double Rn, double vhn, const double vc[3],
                       double gam[3], double G[9], int *mode) {
  double t1 = vc[1], t2 = vc[2], tt = t1 * t1 + t2 * t2;
  double s = sqrt(tt + e * e);
  // s - eps = tt/(s + eps) without cancellation at small slip
  double x = vhn - vc[0] + mu * tt / (s + e);
  double gn = x > 0.0 ? x / Rn : 0.0;
  gam[0] = gn;
  gam[1] = -mu * gn * t1 / s;
  gam[2] = -mu * gn * t2 / s;
  if (G) {
    double a[3] = {1.0, -mu * t1 / s, -mu * t2 / s}, ir = x > 0.0 ? 1.0 / Rn : 0.0;
    double c = mu * gn / (s * s * s);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) G[3 * i + j] = ir * a[i] * a[j];
    G[4] += c * (s * s - t1 * t1);
    G[8] += c * (s * s - t2 * t2);
    G[5] -= c * t1 * t2;
    G[7] -= c * t1 * t2;
  }
  *mode = x <= 0.0 ? MODE_NONE : (tt <= e * e ? MODE_STICK : MODE_SLIDE);
  return 0.5 * gn * (x > 0.0 ? x : 0.0);
}


/* evaluates constraint k at its velocity vc (its rows): impulse gam, Hessian block G (nrow^2,
 * may be NULL), mode; returns its cost l_k (J) */
static double con_eval(const sap_data *d, const fl_problem *p, fl_int k, const double *vc,
                       double *gam, double *G, int *mode) {
  fl_int r = con_row(d, k);
  const double *R = d->R + r, *vh = d->vhat + r;
  if (k < d->nc && d->model == MODEL_LAGGED && d->huber) {
    // a hinted contact is evaluated as sticking (an unbounded f): the quadratic stiction model
    double f = d->hint_on && d->hint[k] ? INFINITY : p->mu[k] * d->n0[k];
    return fl__sap_lagged_huber(f, d->rts[k] * R[1], R[0], vh[0], vc, gam, G, mode);
  }
  if (k < d->nc && d->model == MODEL_LAGGED)
    return fl__sap_lagged(p->mu[k] * d->n0[k], d->eps[k], R[0], vh[0], vc, gam, G, mode);
  if (k < d->nc && d->model == MODEL_SIMILAR)
    return fl__sap_similar(p->mu[k], d->eps[k], R[0], vh[0], vc, gam, G, mode);
  if (k < d->nc) {
    double y[3];
    for (int j = 0; j < 3; j++) y[j] = (vh[j] - vc[j]) / R[j];
    *mode = fl__sap_project(p->mu[k], R, y, gam, G);
    return 0.5 * (R[0] * gam[0] * gam[0] + R[1] * (gam[1] * gam[1] + gam[2] * gam[2]));
  }
  // bilateral row: gamma = clamp(y, lo, hi); cost R (gamma y - gamma^2/2), continuous in y
  fl_int h = k - d->nc;
  double y = (vh[0] - vc[0]) / R[0];
  double lo = p->lo ? p->lo[h] : -INFINITY, hi = p->hi ? p->hi[h] : INFINITY;
  double gb = y < lo ? lo : (y > hi ? hi : y);
  int inside = y > lo && y < hi;
  gam[0] = gb;
  if (G) G[0] = inside ? 1.0 / R[0] : 0.0;
  *mode = inside ? MODE_STICK : MODE_NONE;
  return R[0] * (gb * y - 0.5 * gb * gb);
}


/* evaluates every constraint at vc: gamma (nr), G blocks (9 nc + nh, may be NULL), modes
 * (ncon, may be NULL); returns the constraint cost */
static double eval_all(const sap_data *d, const fl_problem *p, const double *vc, double *gam,
                       double *G, int *modes) {
  double cost = 0.0;
  for (fl_int k = 0; k < d->ncon; k++) {
    fl_int r = con_row(d, k);
    double *Gk = G ? G + (k < d->nc ? 9 * k : 9 * d->nc + (k - d->nc)) : NULL;
    int mode;
    cost += con_eval(d, p, k, vc + r, gam + r, Gk, &mode);
    if (modes) modes[k] = mode;
  }
  return cost;
}


/* contact k of the lagged Huber model at vc + alpha dvc (its rows): adds its cost to *c,
 * -dvc.gamma to *s1 and dvc^T G dvc to *s2. The arithmetic of fl__sap_lagged_huber and of
 * eval_line's generic loop, operation for operation (bit-identical), without G's zero entries
 * (their terms add +-0 to a sum that is never -0), the mode or a call */
static inline void huber_line(const sap_data *d, const fl_problem *p, fl_int k, const double *vc,
                              const double *dvc, double alpha, double *c, double *s1,
                              double *s2) {
  fl_int r = 3 * k;
  const double *e = dvc + r;
  double x0 = vc[r] + alpha * e[0], t1 = vc[r + 1] + alpha * e[1],
         t2 = vc[r + 2] + alpha * e[2];
  double f = d->hint_on && d->hint[k] ? INFINITY : p->mu[k] * d->n0[k];
  double Rt = d->rts[k] * d->R[r + 1], Rn = d->R[r];
  double x = d->vhat[r] - x0;
  double gn = x > 0.0 ? x / Rn : 0.0, g0 = x > 0.0 ? 1.0 / Rn : 0.0;
  double ut = slip_norm(t1, t2);
  double gam1, gam2, lt, g4, g5, g8;
  if (f > 0.0 && ut < f * Rt) {
    gam1 = -t1 / Rt;
    gam2 = -t2 / Rt;
    g4 = g8 = 1.0 / Rt;
    g5 = 0.0;
    lt = 0.5 * ut * ut / Rt;
  } else if (ut > 0.0) {
    double cc = f / ut, n1 = t1 / ut, n2 = t2 / ut;
    gam1 = -f * n1;
    gam2 = -f * n2;
    g4 = cc * n2 * n2;
    g8 = cc * n1 * n1;
    g5 = -cc * n1 * n2;
    lt = f * (ut - 0.5 * f * Rt);
  } else {
    gam1 = gam2 = 0.0;
    g4 = g5 = g8 = 0.0;
    lt = 0.0;
  }
  *c += 0.5 * gn * x + lt;
  *s1 -= e[0] * gn;
  *s1 -= e[1] * gam1;
  *s1 -= e[2] * gam2;
  *s2 += e[0] * g0 * e[0];
  *s2 += e[1] * g4 * e[1];
  *s2 += e[1] * g5 * e[2];
  *s2 += e[2] * g5 * e[1];
  *s2 += e[2] * g8 * e[2];
}


/* along the line vc + alpha dvc: constraint cost, -dvc.gamma(alpha) and dvc^T G(alpha) dvc */
static void eval_line(const sap_data *d, const fl_problem *p, const double *vc,
                      const double *dvc, double alpha, double *cost, double *d1, double *d2) {
  double c = 0.0, s1 = 0.0, s2 = 0.0;
  int huber = d->model == MODEL_LAGGED && d->huber;
  for (fl_int k = 0; k < d->ncon; k++) {
    fl_int r = con_row(d, k), n = con_nrow(d, k);
    double x[3], gam[3], G[9];
    int mode;
    if (huber && n == 3) {
      huber_line(d, p, k, vc, dvc, alpha, &c, &s1, &s2);
      continue;
    }
    if (n == 3) {
      // a contact: the same sums in the same order with the bounds fixed (unrolled)
      for (int j = 0; j < 3; j++) x[j] = vc[r + j] + alpha * dvc[r + j];
      c += con_eval(d, p, k, x, gam, G, &mode);
      const double *e = dvc + r;
      s1 -= e[0] * gam[0];
      s1 -= e[1] * gam[1];
      s1 -= e[2] * gam[2];
      if (d->model == MODEL_LAGGED && d->huber) {
        // the Huber block has G[1] = G[2] = G[3] = G[6] = 0: its zero terms, which leave the
        // sum unchanged (s2 is never -0), are skipped
        s2 += e[0] * G[0] * e[0];
        s2 += e[1] * G[4] * e[1];
        s2 += e[1] * G[5] * e[2];
        s2 += e[2] * G[7] * e[1];
        s2 += e[2] * G[8] * e[2];
        continue;
      }
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) s2 += e[i] * G[i * 3 + j] * e[j];
      continue;
    }
    for (fl_int j = 0; j < n; j++) x[j] = vc[r + j] + alpha * dvc[r + j];
    c += con_eval(d, p, k, x, gam, G, &mode);
    for (fl_int i = 0; i < n; i++) {
      s1 -= dvc[r + i] * gam[i];
      for (fl_int j = 0; j < n; j++) s2 += dvc[r + i] * G[i * n + j] * dvc[r + j];
    }
  }
  *cost = c;
  *d1 = s1;
  *d2 = s2;
}


//---- Newton ----

/* workspace of one solve (arena) */
typedef struct sap_work {
  double *vc, *G, *g, *dv, *dp, *dvc, *vmv, *Avs, *Av, *jg, *rhs, *T;
  double *upd;    /* (2 nv) zeros: predict's two rank-one update vectors (the simplicial factor) */
  double *dvp;    /* (nv) predict: the plain Newton direction, kept while the predicted one is tried */
  double *Gh;     /* (9 nc + nh) reassemble=changed: the G blocks the sparse H holds (d->h_ok) */
  /* sap.ldl: row k of L's pattern is rcol/rpos[rptr[k] .. rptr[k+1]) (columns ascending, their
   * entries' positions in L->x), built from L after a numeric factorization (rptr NULL until
   * then); xw (nv) zeros */
  int *rptr, *rcol, *rpos;
  double *xw;
  double *vbest;  /* lagged huber with fallback: the iterate of least err so far */
  double ebest;   /* its err */
  int *mode, *mode_prev;
} sap_work;


/* adds a contact's lower block J_k^T G_k J_k (B: its 3 x m rows of J, G: 3 x 3) to H->x at
 * the positions hp (b outer, a >= b), T (3 m) scratch: the generic loop of newton_factor with
 * n = 3 fixed, the same products summed in the same order, unrolled; without the loop's
 * leading 0.0 + (it turns a -0 sum into +0, and H never holds -0): bit-identical H */
static void contact_block(const double *G, const double *B, fl_int m, double *T,
                          const fl_int *hp, double *hx, int huber) {
  const double *B0 = B, *B1 = B + m, *B2 = B + 2 * m;
  double *T0 = T, *T1 = T + m, *T2 = T + 2 * m;
  if (huber && G[0] == 0.0) {
    // and no normal row (a separated contact, or a change of the tangent block alone): the
    // two tangent rows only
    for (fl_int a = 0; a < m; a++) {
      T1[a] = G[4] * B1[a] + G[5] * B2[a];
      T2[a] = G[7] * B1[a] + G[8] * B2[a];
    }
    for (fl_int b = 0; b < m; b++) {
      double t1 = T1[b], t2 = T2[b];
      for (fl_int a = b; a < m; a++) hx[*hp++] += B1[a] * t1 + B2[a] * t2;
    }
    return;
  }
  if (huber) {
    // the Huber block has G[1] = G[2] = G[3] = G[6] = +0: their terms are left out (T may
    // then hold +0 where it held -0, which leaves every sum into hx, never -0, unchanged)
    for (fl_int a = 0; a < m; a++) {
      T0[a] = G[0] * B0[a];
      T1[a] = G[4] * B1[a] + G[5] * B2[a];
      T2[a] = G[7] * B1[a] + G[8] * B2[a];
    }
  } else {
    for (fl_int a = 0; a < m; a++) {
      T0[a] = G[0] * B0[a] + G[1] * B1[a] + G[2] * B2[a];
      T1[a] = G[3] * B0[a] + G[4] * B1[a] + G[5] * B2[a];
      T2[a] = G[6] * B0[a] + G[7] * B1[a] + G[8] * B2[a];
    }
  }
  for (fl_int b = 0; b < m; b++) {
    double t0 = T0[b], t1 = T1[b], t2 = T2[b];
    for (fl_int a = b; a < m; a++) hx[*hp++] += B0[a] * t0 + B1[a] * t1 + B2[a] * t2;
  }
}


/* sap.ldl: the row lists of the simplicial LDL^T factor L (numeric: its pattern is set) into
 * w->rptr, rcol, rpos; returns 0 when L's pattern does not fit the lists sized in setup */
static int ldl_rows(const sap_data *d, const sap_work *w) {
  const cholmod_factor *L = d->L;
  const int *Lp = L->p, *Li = L->i, *Lnz = L->nz;
  fl_int nv = d->nv;
  size_t tot = 0;
  memset(w->rptr, 0, ((size_t)nv + 1) * sizeof(int));
  for (fl_int j = 0; j < nv; j++) {
    if (Lnz[j] < 1 || Li[Lp[j]] != (int)j) return 0; // the diagonal first
    for (int q = Lp[j] + 1; q < Lp[j] + Lnz[j]; q++) w->rptr[Li[q] + 1]++;
    tot += (size_t)Lnz[j];
  }
  if (tot > d->ldl_nnz) return 0;
  for (fl_int k = 0; k < nv; k++) w->rptr[k + 1] += w->rptr[k];
  // columns in ascending order: each row's list ascends
  int *at = (int *)w->xw; // scratch of nv ints (xw holds nv doubles), zeroed again below
  memcpy(at, w->rptr, (size_t)nv * sizeof(int));
  for (fl_int j = 0; j < nv; j++)
    for (int q = Lp[j] + 1; q < Lp[j] + Lnz[j]; q++) {
      int e = at[Li[q]]++;
      w->rcol[e] = (int)j;
      w->rpos[e] = q;
    }
  memset(w->xw, 0, (size_t)nv * sizeof(double));
  return 1;
}


/* sap.ldl: L D L^T = H (H->x upper, columns sorted, the natural order of L) on L's pattern, by
 * rows (up-looking): row k of L solves L D l = H(0:k-1, k) along its row list; D in the
 * columns' first entries. Returns 0, or -1 on a pivot that is not positive. */
static int ldl_numeric(const sap_data *d, const sap_work *w) {
  const int *Hp = d->H->p, *Hi = d->H->i, *Lp = d->L->p, *Li = d->L->i;
  const double *Hx = d->H->x;
  double *Lx = d->L->x, *x = w->xw;
  fl_int nv = d->nv;
  for (fl_int k = 0; k < nv; k++) {
    for (int q = Hp[k]; q < Hp[k + 1]; q++) x[Hi[q]] += Hx[q];
    double dk = x[k];
    x[k] = 0.0;
    for (int e = w->rptr[k]; e < w->rptr[k + 1]; e++) {
      int j = w->rcol[e], pos = w->rpos[e];
      double yj = x[j];
      x[j] = 0.0;
      for (int q = Lp[j] + 1; q < pos; q++) x[Li[q]] -= Lx[q] * yj;
      double lkj = yj / Lx[Lp[j]];
      dk -= lkj * yj;
      Lx[pos] = lkj;
    }
    if (!(dk > 0.0)) return -1;
    Lx[Lp[k]] = dk;
  }
  return 0;
}


/* assembles H = A + J^T G J and factorizes it; FL_OK or a negative reason */
static int newton_factor(sap_data *d, const fl_problem *p, const sap_work *w) {
  const fl_csr *A = p->A;
  fl_int nv = d->nv;
  double *hx = d->dense ? d->Hd : (double *)d->H->x;
  if (d->dense) {
    memset(d->Hd, 0, (size_t)nv * (size_t)nv * sizeof(double));
    for (fl_int i = 0; i < nv; i++)
      for (fl_int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
        d->Hd[(size_t)i * (size_t)nv + (size_t)A->col[q]] = A->val[q];
  } else if (!(w->Gh && d->h_ok)) {
    memset(hx, 0, (size_t)((int *)d->H->p)[nv] * sizeof(double));
    for (fl_int q = 0; q < A->nnz; q++)
      if (d->apos[q] >= 0) hx[d->apos[q]] += A->val[q];
  }
  // constraint blocks M = J_k^T G_k J_k; with Gh, H holds them for Gh already (after the first
  // assembly of a solve) and a block whose G changed adds J_k^T (G_k - Gh_k) J_k
  int huber = d->model == MODEL_LAGGED && d->huber;
  int incr = !d->dense && w->Gh && d->h_ok;
  double dG[9];
  for (fl_int k = 0; k < d->ncon; k++) {
    fl_int n = con_nrow(d, k);
    fl_int gk = k < d->nc ? 9 * k : 9 * d->nc + (k - d->nc);
    const double *Gk = w->G + gk;
    if (incr) {
      double *Hk = w->Gh + gk;
      int same = 1;
      for (fl_int q = 0; q < n * n; q++) same &= Gk[q] == Hk[q];
      if (same) continue;
      for (fl_int q = 0; q < n * n; q++) {
        dG[q] = Gk[q] - Hk[q];
        Hk[q] = Gk[q];
      }
      Gk = dG;
    } else if (!d->dense && w->Gh) {
      memcpy(w->Gh + gk, Gk, (size_t)(n * n) * sizeof(double));
    }
    int zero = 1;
    for (fl_int q = 0; q < n * n; q++) zero &= Gk[q] == 0.0;
    if (zero) continue;
    const fl_int *S = d->dof + d->dptr[k];
    fl_int m = d->dptr[k + 1] - d->dptr[k];
    const double *B = d->Jb + d->jptr[k];
    if (n == 3 && !d->dense) {
      contact_block(Gk, B, m, w->T, d->hpos + d->hptr[k], hx, huber);
      continue;
    }
    // T = G_k J_k (n x m)
    for (fl_int i = 0; i < n; i++)
      for (fl_int a = 0; a < m; a++) {
        double t = 0.0;
        for (fl_int j = 0; j < n; j++) t += Gk[i * n + j] * B[j * m + a];
        w->T[i * m + a] = t;
      }
    if (d->dense) {
      // the lower triangle only (S ascending: a >= b is row >= column): fl_chol_factor reads
      // no other entry
      for (fl_int a = 0; a < m; a++)
        for (fl_int b = 0; b <= a; b++) {
          double t = 0.0;
          for (fl_int i = 0; i < n; i++) t += B[i * m + a] * w->T[i * m + b];
          d->Hd[(size_t)S[a] * (size_t)nv + (size_t)S[b]] += t;
        }
    } else {
      const fl_int *hp = d->hpos + d->hptr[k];
      for (fl_int b = 0; b < m; b++)
        for (fl_int a = b; a < m; a++) {
          double t = 0.0;
          for (fl_int i = 0; i < n; i++) t += B[i * m + a] * w->T[i * m + b];
          hx[*hp++] += t;
        }
    }
  }
  d->nfactor++;
  if (!d->dense && w->Gh) d->h_ok = 1;
  if (d->dense) {
    if (fl_chol_factor(d->Hd, (int)nv) < 0) return FL_DIVERGED_LINEAR_SOLVER;
    return FL_OK;
  }
  if (d->pcg) return fl__sap_pcg_factor(d); // its preconditioner (sap_pcg.c)
  // sap.ldl: SAP's own numeric factorization once L's pattern is known (a pivot that is not
  // positive leaves it to CHOLMOD)
  const cholmod_factor *L = d->L;
  int own = w->rptr && L->xtype == CHOLMOD_REAL && !L->is_super && !L->is_ll;
  if (own && d->ldl_rows && ldl_numeric(d, w) == 0) return FL_OK;
  if (own && d->ldl_rows) memset(w->xw, 0, (size_t)nv * sizeof(double));
  // numeric factorization on the symbolic analysis of setup
  if (!cholmod_factorize(d->H, d->L, &d->cm) || d->cm.status != CHOLMOD_OK)
    return FL_DIVERGED_LINEAR_SOLVER;
  if (w->rptr && !d->ldl_rows && !d->L->is_super && !d->L->is_ll)
    d->ldl_rows = ldl_rows(d, w);
  return FL_OK;
}


/* solves H dv = rhs with the factorization (dv may alias rhs for the dense path) */
static int newton_solve(sap_data *d, const sap_work *w, double *dv) {
  fl_int nv = d->nv;
  if (d->dense) {
    if (dv != w->rhs) memcpy(dv, w->rhs, (size_t)nv * sizeof(double));
    fl_chol_solve(d->Hd, (int)nv, dv);
    return FL_OK;
  }
  if (d->pcg) {
    // inexact: the forcing term is relative to SAP's momentum scale (its rel_tol test)
    double sp = 0.0, sj = 0.0;
    for (fl_int i = 0; i < nv; i++) {
      double a = d->Dsc[i] * (w->Av[i] + w->Avs[i]), b = d->Dsc[i] * w->jg[i];
      sp += a * a, sj += b * b;
    }
    return fl__sap_pcg_solve(d, w->rhs, w->g, sqrt(sp > sj ? sp : sj), dv);
  }
  cholmod_dense B;
  memset(&B, 0, sizeof B);
  B.nrow = B.d = B.nzmax = (size_t)nv;
  B.ncol = 1;
  B.x = w->rhs;
  B.xtype = CHOLMOD_REAL;
  B.dtype = CHOLMOD_DOUBLE;
  // H permuted in setup: the permutation CHOLMOD's solve would apply, done here
  if (d->perm) {
    for (fl_int k = 0; k < nv; k++) d->prhs[k] = w->rhs[d->perm[k]];
    B.x = d->prhs;
  }
  if (!cholmod_solve2(CHOLMOD_A, d->L, &B, NULL, &d->X, NULL, &d->Y, &d->E, &d->cm))
    return FL_DIVERGED_LINEAR_SOLVER;
  const double *x = d->X->x;
  if (d->perm)
    for (fl_int k = 0; k < nv; k++) dv[d->perm[k]] = x[k];
  else
    memcpy(dv, x, (size_t)nv * sizeof(double));
  return FL_OK;
}


/* exact line search: root of f(alpha) = l'(alpha)/|l'(0)| on [0, alpha_max] by Newton with a
 * bisection safeguard (l is convex in alpha, so f is increasing). la0 = l_A(0) terms:
 * l'(alpha) = dp.(v - v*) + alpha dv^T A dv - dvc.gamma(alpha). Returns alpha, or -1 on
 * failure; counts evaluations in *neval. */
static double ls_exact(const sap_data *d, const fl_problem *p, const sap_opts *o,
                       const double *vc, const double *dvc, double dpv, double dAd, double dl0,
                       double la0, int *neval) {
  double amax = o->alpha_max, c, d1, d2;
  eval_line(d, p, vc, dvc, amax, &c, &d1, &d2);
  (*neval)++;
  double dlmax = dpv + amax * dAd + d1, ddlmax = dAd + d2;
  // the cost still decreases at alpha_max: take it
  if (dlmax <= 0.0) return amax;
  // early exit when the possible decrease is at round-off level
  double lmax = la0 + amax * dpv + 0.5 * amax * amax * dAd + c;
  if (-dl0 < o->cost_abs_tol + o->cost_rel_tol * fabs(lmax)) return 1.0;
  double scale = fabs(dl0);
  double lo = 0.0, hi = amax;
  double alpha = -dl0 / ddlmax;
  if (!(alpha > 0.0) || alpha >= amax) alpha = 0.5 * amax;
  double xtol = 1e-8 * alpha, dx_prev = hi - lo;
  for (int it = 0; it < o->ls_max_iter; it++) {
    eval_line(d, p, vc, dvc, alpha, &c, &d1, &d2);
    (*neval)++;
    double f = (dpv + alpha * dAd + d1) / scale, fp = (dAd + d2) / scale;
    if (fabs(f) < o->ls_tol) return alpha;
    if (f < 0.0) lo = alpha;
    else hi = alpha;
    // Newton unless it leaves the bracket or is slow (|2 f| > |dx_prev f'|), then bisect
    double next = fp > 0.0 ? alpha - f / fp : -1.0;
    double dx;
    if (!(next > lo && next < hi) || fabs(2.0 * f) > fabs(dx_prev * fp)) {
      next = 0.5 * (lo + hi);
      dx = 0.5 * (hi - lo);
    } else {
      dx = fabs(next - alpha);
    }
    dx_prev = dx;
    alpha = next;
    if (dx < xtol) return alpha;
  }
  return -1.0;
}


/* Armijo backtracking from alpha_max = 1/rho: stops once the cost rises again as alpha shrinks.
 * Returns alpha, or -1 on failure. */
static double ls_backtrack(const sap_data *d, const fl_problem *p, const sap_opts *o,
                           const double *vc, const double *dvc, double dpv, double dAd,
                           double dl0, double l0, double la0, int *neval) {
  double rho = o->ls_rho, ca = o->ls_c, c, d1, d2;
  double a_prev = 1.0 / rho;
  eval_line(d, p, vc, dvc, a_prev, &c, &d1, &d2);
  (*neval)++;
  double l_prev = la0 + a_prev * dpv + 0.5 * a_prev * a_prev * dAd + c;
  if (dpv + a_prev * dAd + d1 < 0.0) return a_prev;
  int nmax = o->ls_max_iter < 40 ? o->ls_max_iter : 40;
  double alpha = a_prev, l = l_prev;
  for (int it = 0; it < nmax; it++) {
    alpha = rho * a_prev;
    eval_line(d, p, vc, dvc, alpha, &c, &d1, &d2);
    (*neval)++;
    l = la0 + alpha * dpv + 0.5 * alpha * alpha * dAd + c;
    int arm = l <= l0 + ca * alpha * dl0, arm_prev = l_prev <= l0 + ca * a_prev * dl0;
    if (l > l_prev) {
      if (arm_prev) return a_prev;
      if (arm) return alpha;
    }
    a_prev = alpha;
    l_prev = l;
  }
  return l <= l0 + ca * alpha * dl0 ? alpha : -1.0;
}


static double dnorm(const double *Dsc, const double *x, fl_int n) {
  double s = 0.0;
  for (fl_int i = 0; i < n; i++) s += (Dsc[i] * x[i]) * (Dsc[i] * x[i]);
  return sqrt(s);
}


/* state at v: vc, gamma, G, modes, the cost, grad, ||D grad|| and the momentum scale */
typedef struct sap_state {
  double cost, lA, err, scale;
  int nstick, nslip, nnone, nchange;
} sap_state;


/* alpha < 0: vc = J v + b and A (v - v*) from v; alpha >= 0: v has just moved by alpha dv, and
 * both move along the line by alpha dvc and alpha dp (the caches of that step: linear maps, so
 * the same to round-off, without the two products) */
static void eval_state(const sap_data *d, const fl_problem *p, const double *v, double *gamma,
                       const sap_work *w, sap_state *st, double alpha) {
  fl_int nv = d->nv;
  if (alpha < 0.0) {
    // vc = J v + b
    fl_csr_gemv(p->J, 1.0, v, 0.0, w->vc);
    if (p->b)
      for (fl_int r = 0; r < d->nr; r++) w->vc[r] += p->b[r];
  } else {
    for (fl_int r = 0; r < d->nr; r++) w->vc[r] += alpha * w->dvc[r];
  }
  double lc = eval_all(d, p, w->vc, gamma, w->G, w->mode);
  // A (v - v*), J^T gamma, grad
  for (fl_int i = 0; i < nv; i++) w->vmv[i] = v[i] - p->vstar[i];
  if (alpha < 0.0)
    fl_csr_gemv(p->A, 1.0, w->vmv, 0.0, w->Av);
  else
    for (fl_int i = 0; i < nv; i++) w->Av[i] += alpha * w->dp[i];
  fl_csr_gemtv(p->J, 1.0, gamma, 0.0, w->jg);
  double lA = 0.0;
  for (fl_int i = 0; i < nv; i++) {
    lA += 0.5 * w->vmv[i] * w->Av[i];
    w->g[i] = w->Av[i] - w->jg[i];
  }
  st->lA = lA;
  st->cost = lA + lc;
  st->err = dnorm(d->Dsc, w->g, nv);
  // scale: max(||D A v||, ||D J^T gamma||) with A v = A (v - v*) + A v*
  double sp = 0.0;
  for (fl_int i = 0; i < nv; i++) {
    double x = d->Dsc[i] * (w->Av[i] + w->Avs[i]);
    sp += x * x;
  }
  double sj = dnorm(d->Dsc, w->jg, nv);
  st->scale = sqrt(sp) > sj ? sqrt(sp) : sj;
  st->nstick = st->nslip = st->nnone = st->nchange = 0;
  for (fl_int k = 0; k < d->nc; k++) {
    st->nstick += w->mode[k] == MODE_STICK;
    st->nslip += w->mode[k] == MODE_SLIDE;
    st->nnone += w->mode[k] == MODE_NONE;
    st->nchange += w->mode[k] != w->mode_prev[k];
  }
  memcpy(w->mode_prev, w->mode, (size_t)d->ncon * sizeof(int));
}


static void fill_stat(fl_iter_stat *is, const sap_state *st) {
  is->error = st->err;
  is->objective = st->cost;
  is->gradient = st->scale > 0.0 ? st->err / st->scale : NAN;
  is->nactive = st->nstick + st->nslip;
  is->nstick = st->nstick;
  is->nslip = st->nslip;
  is->nchange = st->nchange;
}


/* the soft-norm velocity of contact k's friction, eps = max(vs, mu sigma w n0) */
static void set_eps(sap_data *d, const fl_problem *p, const sap_opts *o, fl_int k) {
  double e = p->mu[k] * o->sigma * d->w[k] * d->n0[k];
  d->eps[k] = e > o->vs ? e : o->vs;
}


/* lagged: replaces n0 by the normal impulse of gamma where that would move the contact by more
 * than vs (m/s): at the velocity vc, contact k's friction would change by mu |gamma_n - n0|
 * |v_t|/s, and one holding more than mu gamma_n would start to slide by its excess
 * (|gamma_t| - mu gamma_n)_+. The first over the contact's stiffness 1/w + mu n0 eps^2/s^3 (its
 * inverse Delassus estimate plus the regularized friction's slope), the second over 1/w (the
 * contact leaves stiction), is a velocity. New
 * contacts (n0 = 0) that slide and impacts are the usual cases; a sticking contact whose load
 * changes is not (its slip, below eps, scales by n0/gamma_n). Only those contacts are
 * re-lagged (the others keep the last step's bound, and the next pass starts close). Returns
 * whether any was. */
static int relag(sap_data *d, const fl_problem *p, const sap_opts *o, const double *vc,
                 const double *gamma) {
  int n = 0;
  for (fl_int k = 0; k < d->nc; k++) {
    const double *u = vc + 3 * k, *g = gamma + 3 * k;
    double ut = d->huber ? slip_norm(u[1], u[2]) : hypot(u[1], u[2]);
    if (d->huber) {
      // Huber: a sliding contact's friction changes by mu |gamma_n - n0|, which moves it by
      // that over its response 1/w, or, where the bound grows, at most by its slip (it sticks);
      // a sticking one's friction does not depend on n0 while it stays below the bound
      double f = p->mu[k] * d->n0[k], rt = d->rts[k] * d->R[3 * k + 1];
      double dv = f > 0.0 && ut < f * rt ? 0.0 : p->mu[k] * fabs(g[0] - d->n0[k]) * d->w[k];
      if (g[0] > d->n0[k] && dv > ut) dv = ut;
      double ex = hypot(g[1], g[2]) - p->mu[k] * g[0];
      if (dv > o->vs || ex * d->w[k] > o->vs) {
        d->n0[k] = g[0] > 0.0 ? g[0] : 0.0;
        set_eps(d, p, o, k);
        n++;
      }
      continue;
    }
    double s = sqrt(ut * ut + d->eps[k] * d->eps[k]);
    double df = p->mu[k] * fabs(g[0] - d->n0[k]) * ut / s;
    double ex = hypot(g[1], g[2]) - p->mu[k] * g[0];
    // the contact's own response: 1/w, stiffened where it sticks by the regularized law's
    // slope mu n0 eps^2/s^3 (a sticking contact's slip only scales with the bound)
    double e2 = d->eps[k] * d->eps[k];
    double resp = d->w[k] / (1.0 + d->w[k] * p->mu[k] * d->n0[k] * e2 / (s * s * s));
    if (df * resp > o->vs || ex * d->w[k] > o->vs) {
      d->n0[k] = g[0] > 0.0 ? g[0] : 0.0;
      set_eps(d, p, o, k);
      n++;
    }
  }
  return n > 0;
}


/* lagged huber: marks (hint) and stiffens the contacts whose slip at vc lies in or near the
 * stiction region, |v_t| < 2 mu n0 R_t, and exceeds stick_tol: R_t = stick_tol/(10 mu n0), so
 * that a contact that keeps sticking slips at most stick_tol/10. Returns how many were
 * stiffened. */
static int stiction_stage(sap_data *d, const fl_problem *p, const sap_opts *o, const double *vc) {
  int n = 0;
  for (fl_int k = 0; k < d->nc; k++) {
    const double *u = vc + 3 * k;
    double ut = slip_norm(u[1], u[2]), f = p->mu[k] * d->n0[k];
    double rt = d->rts[k] * d->R[3 * k + 1];
    d->hint[k] = 0;
    if (!(f > 0.0) || ut >= 2.0 * f * rt || ut <= o->stick_tol) continue;
    double want = 0.1 * o->stick_tol / f;
    d->hint[k] = 1;
    if (want < rt) {
      d->rts[k] = want / d->R[3 * k + 1];
      n++;
    }
  }
  return n;
}


/* lagged huber, after a plain Newton direction dv: marks (hint) the contacts that stick now and
 * the sliding ones whose slip the full step reverses, u_t . (u_t + du_t) < 0. The line then
 * passes through their stiction region, where the 1-D cost has a kink: the exact line search
 * stops there and sticks one such contact per iteration (table_pile: 20 iterations a step);
 * the direction of the model in which they stick sticks them all at once. Returns how many
 * slip reversals there are (0: keep the plain direction). */
static int predict_stick(sap_data *d, const fl_problem *p, const sap_work *w) {
  fl_csr_gemv(p->J, 1.0, w->dv, 0.0, w->dvc);
  int n = 0;
  for (fl_int k = 0; k < d->nc; k++) {
    const double *u = w->vc + 3 * k, *du = w->dvc + 3 * k;
    d->hint[k] = 0;
    if (!(p->mu[k] * d->n0[k] > 0.0)) continue;
    if (w->mode[k] == MODE_STICK) {
      d->hint[k] = 1;
      continue;
    }
    if (u[1] * (u[1] + du[1]) + u[2] * (u[2] + du[2]) < 0.0) {
      d->hint[k] = 1;
      n++;
    }
  }
  return n;
}


/* L D L^T + x x^T + y y^T in place (simplicial LDL^T, columns' rows ascending, the diagonal D
 * first): Gill, Golub, Murray and Saunders' method C1 along the elimination tree from j, the
 * first nonzero of x and y (their nonzeros lie on that path: a clique of H). Each entry gets
 * the x update then the y update, the arithmetic of two rank-one updates in turn, with L's
 * column read once. Leaves x and y zero. */
static void ldl_rank2(const int *Lp, const int *Li, const int *Lnz, double *Lx, double *x,
                      double *y, int j) {
  double ax = 1.0, ay = 1.0;
  while (j >= 0) {
    int p0 = Lp[j], n = Lnz[j];
    double px = x[j], py = y[j], bx = 0.0, by = 0.0;
    x[j] = y[j] = 0.0;
    if (px != 0.0) {
      double dj = Lx[p0], dbar = dj + ax * px * px;
      bx = px * ax / dbar;
      ax *= dj / dbar;
      Lx[p0] = dbar;
    }
    if (py != 0.0) {
      double dj = Lx[p0], dbar = dj + ay * py * py;
      by = py * ay / dbar;
      ay *= dj / dbar;
      Lx[p0] = dbar;
    }
    if (px != 0.0 && py != 0.0) {
      for (int q = p0 + 1; q < p0 + n; q++) {
        int i = Li[q];
        double l = Lx[q];
        x[i] -= px * l;
        l += bx * x[i];
        y[i] -= py * l;
        Lx[q] = l + by * y[i];
      }
    } else if (px != 0.0 || py != 0.0) {
      double p = px != 0.0 ? px : py, b = px != 0.0 ? bx : by, *z = px != 0.0 ? x : y;
      for (int q = p0 + 1; q < p0 + n; q++) {
        int i = Li[q];
        z[i] -= p * Lx[q];
        Lx[q] += b * z[i];
      }
    }
    j = n > 1 ? Li[p0 + 1] : -1;
  }
}


/* predict on the simplicial factor: the predicted model's H differs from the plain one only in
 * the tangent blocks of the hinted contacts that slide now, f (I - t t^T)/|u_t| -> I/R_t, i.e.
 * by t t^T/R_t + (1/R_t - f/|u_t|) s s^T (s = t turned by 90 degrees, both terms >= 0 since
 * |u_t| >= f R_t): two rank-one updates of L per such contact instead of assembling and
 * factorizing H again (the same matrix up to round-off). Returns 1 when L is the predicted
 * model's factor, 0 when this factor cannot be updated (dense, supernodal, LL^T). */
static int predict_update(sap_data *d, const fl_problem *p, const sap_work *w) {
  cholmod_factor *L = d->L;
  if (d->dense || !d->perm || !w->upd || L->is_super || L->is_ll || L->xtype != CHOLMOD_REAL)
    return 0;
  const int *Lp = L->p, *Li = L->i, *Lnz = L->nz, *pinv = d->perm + d->nv;
  double *Lx = L->x, *x = w->upd, *y = w->upd + d->nv;
  for (fl_int k = 0; k < d->nc; k++) {
    if (!d->hint[k]) continue;
    const double *u = w->vc + 3 * k;
    double f = p->mu[k] * d->n0[k], rt = d->rts[k] * d->R[3 * k + 1], ut = slip_norm(u[1], u[2]);
    if (!(f > 0.0) || ut < f * rt || !(ut > 0.0)) continue; // its block is I/R_t already
    double n1 = u[1] / ut, n2 = u[2] / ut;
    const fl_int *S = d->dof + d->dptr[k];
    fl_int m = d->dptr[k + 1] - d->dptr[k];
    const double *B1 = d->Jb + d->jptr[k] + m, *B2 = B1 + m;
    // x along t, y along s (zero when the slip sits on the region's edge)
    double lt = 1.0 / rt, ls = 1.0 / rt - f / ut;
    double sx = sqrt(lt), sy = ls > 0.0 ? sqrt(ls) : 0.0;
    int jmin = (int)d->nv;
    for (fl_int a = 0; a < m; a++) {
      int j = pinv[S[a]];
      x[j] = sx * (n1 * B1[a] + n2 * B2[a]);
      y[j] = sy * (-n2 * B1[a] + n1 * B2[a]);
      if (j < jmin) jmin = j;
    }
    ldl_rank2(Lp, Li, Lnz, Lx, x, y, jmin);
  }
  d->nupdate++;
  return 1;
}


/* what a Newton iteration leaves: go on, SAP's rules ended the pass (s->reason set, converged or
 * stagnated), or the solve stops (the spine's reason, or a failure set in s->reason) */
enum { NI_GO = 0, NI_DONE = 1, NI_STOP = 2 };

/* along w->dv: the caches dp = A dv, dvc = J dv, dv^T A dv (*dAd), dp.(v - v*) (*dpv),
 * l'(0) = grad.dv (*dl0), |dv|^2 (*dvn), and the line search. Returns alpha (0 when dv does
 * not descend, at round-off), -1 when the line search fails, -2 on a non-finite slope. */
static double line_step(const sap_data *d, const fl_problem *p, const sap_opts *o,
                        const sap_work *w, const sap_state *st, double *dAd, double *dpv,
                        double *dl0, double *dvn, int *neval, int dvc_ok) {
  fl_int nv = d->nv;
  fl_csr_gemv(p->A, 1.0, w->dv, 0.0, w->dp);
  if (!dvc_ok) fl_csr_gemv(p->J, 1.0, w->dv, 0.0, w->dvc); // else predict_stick's, the same
  double a = 0.0, b = 0.0, c = 0.0, n = 0.0;
  for (fl_int i = 0; i < nv; i++) {
    a += w->dv[i] * w->dp[i];
    b += w->dp[i] * w->vmv[i];
    c += w->g[i] * w->dv[i];
    n += w->dv[i] * w->dv[i];
  }
  *dAd = a, *dpv = b, *dl0 = c, *dvn = n;
  if (!(c < 0.0)) return isfinite(c) ? 0.0 : -2.0; // no descent left (round-off)
  if (o->line_search == LS_EXACT)
    return ls_exact(d, p, o, w->vc, w->dvc, b, a, c, st->lA, neval);
  return ls_backtrack(d, p, o, w->vc, w->dvc, b, a, c, st->cost, st->lA, neval);
}


/* one Newton iteration k >= 1 from the state st at v: direction, line search, update, record,
 * SAP's stopping rules; st becomes the new state. Returns NI_GO, NI_DONE or NI_STOP. */
static int newton_iteration(fl_solver *s, sap_data *d, const fl_problem *p, const sap_opts *o,
                            const sap_work *wp, double *v, double *gamma, sap_state *st, int k) {
  const fl_solve_common *cm = &s->common;
  sap_work w = *wp;
  fl_int nv = d->nv;
  // Newton direction dv = -H^-1 grad; at the start of a stiction stage, the direction of the
  // model in which the contacts that stuck in the last stage stick (their quadratic stiction
  // with the new R_t, unbounded): the exact step when no contact changes mode. Its gradient
  // is A (v - v*) - J^T gamma_model (gamma_model in dvc, free until the caches below).
  int hinted = d->hint_on, predicted = 0, dvc_ok = 0;
  for (int tr = 0;; tr++) {
    if (d->hint_on) {
      eval_all(d, p, w.vc, w.dvc, w.G, NULL);
      fl_csr_gemtv(p->J, 1.0, w.dvc, 0.0, w.rhs);
      for (fl_int i = 0; i < nv; i++) w.rhs[i] -= w.Av[i];
      d->hint_on = 0;
    } else {
      for (fl_int i = 0; i < nv; i++) w.rhs[i] = -w.g[i];
    }
    int rc = newton_factor(d, p, &w);
    if (rc == FL_OK) rc = newton_solve(d, &w, w.dv);
    if (rc != FL_OK) {
      s->reason = rc;
      return NI_STOP;
    }
    // predict_stick leaves dvc = J dv (kept when it finds no reversal)
    dvc_ok = !hinted && tr == 0 && o->predict && d->huber;
    if (dvc_ok && predict_stick(d, p, &w)) {
      dvc_ok = 0;
      // contacts that the full step takes through their stiction region: the direction of the
      // model in which they (and those sticking now) stick, if it descends on the true cost
      // (else the plain direction, kept in dp)
      memcpy(w.dp, w.dv, (size_t)nv * sizeof(double));
      d->hint_on = 1;
      eval_all(d, p, w.vc, w.dvc, w.G, NULL);
      d->hint_on = 0;
      fl_csr_gemtv(p->J, 1.0, w.dvc, 0.0, w.rhs);
      for (fl_int i = 0; i < nv; i++) w.rhs[i] -= w.Av[i];
      rc = predict_update(d, p, &w) ? FL_OK : newton_factor(d, p, &w);
      if (rc == FL_OK) rc = newton_solve(d, &w, w.dv);
      if (rc != FL_OK) {
        s->reason = rc;
        return NI_STOP;
      }
      double dl = 0.0;
      for (fl_int i = 0; i < nv; i++) dl += w.g[i] * w.dv[i];
      if (!(dl < 0.0)) {
        memcpy(w.dv, w.dp, (size_t)nv * sizeof(double));
      } else if (w.dvp) {
        memcpy(w.dvp, w.dp, (size_t)nv * sizeof(double));
        predicted = 1;
      }
      break;
    }
    if (!hinted || tr > 0) break;
    // the model's direction must descend on the true cost; else the plain Newton direction
    double dl = 0.0;
    for (fl_int i = 0; i < nv; i++) dl += w.g[i] * w.dv[i];
    if (dl < 0.0) break;
    eval_all(d, p, w.vc, w.dvc, w.G, NULL);
  }
  // caches: dp = A dv, dvc = J dv, dv^T A dv, dp.(v - v*), l'(0) = grad.dv; line search
  double dAd, dpv, dl0, dvn;
  int neval = 0;
  double alpha = line_step(d, p, o, &w, st, &dAd, &dpv, &dl0, &dvn, &neval, dvc_ok);
  // the predicted model can be wrong about the contacts its step crosses: a short step along it
  // (down to alpha ~ 1e-4 for several iterations on table_pile), a failed line search, or a
  // slope at round-off, where the line search's early exit takes alpha = 1 and the cost rose.
  // Then the plain direction's line search too, and the lower cost of the two
  if (predicted && alpha != -2.0 &&
      (alpha < o->predict_alpha || -dl0 < o->cost_abs_tol + o->cost_rel_tol * fabs(st->cost))) {
    double c, d1, d2, lpred = INFINITY;
    if (alpha >= 0.0) {
      eval_line(d, p, w.vc, w.dvc, alpha, &c, &d1, &d2);
      neval++;
      lpred = st->lA + alpha * dpv + 0.5 * alpha * alpha * dAd + c;
    }
    double *t = w.dv;
    w.dv = w.dvp;
    w.dvp = t;
    double qAd, qpv, ql0, qvn;
    double beta = line_step(d, p, o, &w, st, &qAd, &qpv, &ql0, &qvn, &neval, 0);
    double lplain = INFINITY;
    if (beta >= 0.0) {
      eval_line(d, p, w.vc, w.dvc, beta, &c, &d1, &d2);
      neval++;
      lplain = st->lA + beta * qpv + 0.5 * beta * beta * qAd + c;
    }
    if (lplain <= lpred || beta == -2.0) {
      alpha = beta;
      dAd = qAd, dpv = qpv, dl0 = ql0, dvn = qvn;
    } else {
      t = w.dv;
      w.dv = w.dvp;
      w.dvp = t;
      fl_csr_gemv(p->A, 1.0, w.dv, 0.0, w.dp);
      fl_csr_gemv(p->J, 1.0, w.dv, 0.0, w.dvc);
    }
  }
  if (alpha == -2.0) {
    s->reason = FL_DIVERGED_NAN;
    return NI_STOP;
  }
  if (alpha < 0.0) {
    s->reason = FL_DIVERGED_LINE_SEARCH;
    return NI_STOP;
  }
  // update and evaluate
  for (fl_int i = 0; i < nv; i++) v[i] += alpha * w.dv[i];
  double cost_prev = st->cost;
  eval_state(d, p, v, gamma, &w, st, o->line_cache ? alpha : -1.0);
  fl_iter_stat is;
  fl_iter_stat_init(&is, k);
  fill_stat(&is, st);
  is.step = alpha;
  is.step_norm = fabs(alpha) * sqrt(dvn);
  is.neval = neval;
  is.inner_iters = 1;
  // the spine's own tests: a positive reason (converged, e.g. abs_tol) ends the pass only
  int r = fl_solver_record(s, &is);
  if (r != 0) return r > 0 ? NI_DONE : NI_STOP;
  if (cm->never_stop) return NI_GO;
  // Drake's rules: momentum balance, then cost stagnation with a long step
  double tol = cm->abs_tol + cm->rel_tol * st->scale;
  if (st->err <= tol) {
    s->reason = st->err <= cm->abs_tol ? FL_CONVERGED_ATOL : FL_CONVERGED_RTOL;
    return NI_DONE;
  }
  double dc = fabs(st->cost - cost_prev);
  if (dc < o->cost_abs_tol + o->cost_rel_tol * 0.5 * (fabs(st->cost) + fabs(cost_prev))) {
    if (alpha > 0.5) {
      s->reason = FL_CONVERGED_STAGNATION_OK;
      return NI_DONE;
    }
    if (alpha == 0.0) {
      s->reason = FL_DIVERGED_STAGNATION;
      return NI_DONE;
    }
  }
  return NI_GO;
}


/* with fallback: the iterate v of least err so far goes to w->vbest */
static void keep_best(const sap_data *d, sap_work *w, const double *v, const sap_state *st) {
  if (w->vbest && st->err < w->ebest) {
    w->ebest = st->err;
    memcpy(w->vbest, v, (size_t)d->nv * sizeof(double));
  }
}


/* Newton's passes of one step from the state st (iteration *kp recorded, s->reason 0 or the
 * guess's), the lagged re-lag passes and the stiction stage included; *kp is the last recorded
 * iteration on return, s->reason the outcome. With w->vbest set, keeps there the iterate of
 * least err (w->ebest). */
static void solve_passes(fl_solver *s, sap_data *d, const fl_problem *p, const sap_opts *o,
                         sap_work *w, double *v, double *gamma, sap_state *st, int *kp) {
  const fl_solve_common *cm = &s->common;
  fl_iter_stat is;
  int reason;
  double tol;
  for (int pass = 1;; pass++) {
    if (s->reason <= 0) {
      int ni;
      do {
        ni = newton_iteration(s, d, p, o, w, v, gamma, st, ++*kp);
        keep_best(d, w, v, st);
      } while (ni == NI_GO);
      if (ni == NI_STOP || s->reason <= 0) return;
    }
    // lagged: solve again with n0 = this step's normal impulses where the lag matters
    if (d->model != MODEL_LAGGED || cm->never_stop || pass >= o->passes ||
        !relag(d, p, o, w->vc, gamma))
      break;
    // the stiction stage rides along with a further pass (one Newton solve for both)
    int hint = d->huber && o->stick_tol > 0.0 && stiction_stage(d, p, o, w->vc) > 0;
    eval_state(d, p, v, gamma, w, st, -1.0);
    ++*kp;
    fl_iter_stat_init(&is, *kp);
    fill_stat(&is, st);
    is.inner_iters = 0; // no factorization: the start of a pass (the cost function changed)
    reason = fl_solver_record(s, &is);
    if (reason < 0) return;
    tol = cm->abs_tol + cm->rel_tol * st->scale;
    if (reason == 0 && st->err <= tol) s->reason = st->err <= cm->abs_tol ? FL_CONVERGED_ATOL : FL_CONVERGED_RTOL;
    else d->hint_on = hint;
  }
  d->hint_on = 0;
  // lagged huber: the stiction stage (section 1.1): contacts in or near stiction that slip
  // faster than stick_tol get R_t = stick_tol/(10 mu n0), and Newton goes on from the answer
  // with them sticking; at most one stage (a contact that then slides no longer depends on R_t)
  if (d->huber && o->stick_tol > 0.0 && !cm->never_stop && s->reason > 0 &&
      stiction_stage(d, p, o, w->vc)) {
    s->reason = 0;
    eval_state(d, p, v, gamma, w, st, -1.0);
    ++*kp;
    fl_iter_stat_init(&is, *kp);
    fill_stat(&is, st);
    is.inner_iters = 0; // the start of the stage (the cost function changed)
    reason = fl_solver_record(s, &is);
    if (reason < 0) return;
    tol = cm->abs_tol + cm->rel_tol * st->scale;
    if (reason == 0 && st->err <= tol) {
      s->reason = st->err <= cm->abs_tol ? FL_CONVERGED_ATOL : FL_CONVERGED_RTOL;
    } else if (reason == 0) {
      d->hint_on = 1;
      int ni;
      do {
        ni = newton_iteration(s, d, p, o, w, v, gamma, st, ++*kp);
        keep_best(d, w, v, st);
      } while (ni == NI_GO);
    }
    d->hint_on = 0;
  }
}


static int sap_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  sap_data *d = SD(s);
  const sap_opts *o = SO(s);
  const fl_solve_common *cm = &s->common;
  fl_int nv = d->nv;
  size_t mark = fl_arena_mark(&s->arena);

  // workspace (sized in setup)
  sap_work w;
  fl_arena *ar = &s->arena;
  w.vc = FL_ALLOC(ar, d->nr + 1, double);
  w.dvc = FL_ALLOC(ar, d->nr + 1, double);
  w.G = FL_ALLOC(ar, 9 * d->nc + d->nh + 1, double);
  w.g = FL_ALLOC(ar, nv + 1, double);
  w.dv = FL_ALLOC(ar, nv + 1, double);
  w.dp = FL_ALLOC(ar, nv + 1, double);
  w.vmv = FL_ALLOC(ar, nv + 1, double);
  w.Avs = FL_ALLOC(ar, nv + 1, double);
  w.Av = FL_ALLOC(ar, nv + 1, double);
  w.jg = FL_ALLOC(ar, nv + 1, double);
  w.rhs = FL_ALLOC(ar, nv + 1, double);
  w.T = FL_ALLOC(ar, 3 * d->mmax + 1, double);
  w.mode = FL_ALLOC(ar, d->ncon + 1, int);
  w.mode_prev = FL_ALLOC(ar, d->ncon + 1, int);
  w.upd = NULL;
  w.dvp = NULL;
  w.Gh = NULL;
  d->h_ok = 0;
  w.rptr = w.rcol = w.rpos = NULL;
  w.xw = NULL;
  d->ldl_rows = 0;
  if (o->ldl && d->ldl_nnz > 0) {
    w.rptr = FL_ALLOC(ar, nv + 2, int);
    w.rcol = FL_ALLOC(ar, d->ldl_nnz + 1, int);
    w.rpos = FL_ALLOC(ar, d->ldl_nnz + 1, int);
    w.xw = FL_ALLOC(ar, nv + 1, double);
    if (!w.rptr || !w.rcol || !w.rpos || !w.xw)
      return fl_seterr(FL_ERR_NOMEM, "%s: arena too small", s->ops->name);
  }
  // not under PCG: there it made the lattice's loaded steps fall back to the soft friction
  // (test sap_pcg.pcg_steps_converge_on_the_lattice); PCG reads H assembled whole
  if (o->reassemble && !d->dense && !d->pcg) {
    w.Gh = FL_ALLOC(ar, 9 * d->nc + d->nh + 1, double);
    if (!w.Gh) return fl_seterr(FL_ERR_NOMEM, "%s: arena too small", s->ops->name);
  }
  if (o->predict && o->predict_alpha > 0.0 && d->huber) {
    w.dvp = FL_ALLOC(ar, nv + 1, double);
    if (!w.dvp) return fl_seterr(FL_ERR_NOMEM, "%s: arena too small", s->ops->name);
  }
  if (o->predict && d->perm) {
    w.upd = FL_ALLOC(ar, 2 * nv + 1, double);
    if (!w.upd) return fl_seterr(FL_ERR_NOMEM, "%s: arena too small", s->ops->name);
    memset(w.upd, 0, 2 * (size_t)nv * sizeof(double));
  }
  if (!w.vc || !w.dvc || !w.G || !w.g || !w.dv || !w.dp || !w.vmv || !w.Avs || !w.Av || !w.jg ||
      !w.rhs || !w.T || !w.mode || !w.mode_prev)
    return fl_seterr(FL_ERR_NOMEM, "%s: arena too small", s->ops->name);
  for (fl_int k = 0; k < d->ncon; k++) w.mode_prev[k] = -1;
  fl_csr_gemv(p->A, 1.0, p->vstar, 0.0, w.Avs);

  // guess: the incoming v with warm_start, else v0 (Drake) or v*; non-participating dofs
  // take v* (their part of the cost is minimized there exactly)
  if (!cm->warm_start && o->start == START_V0 && p->v0)
    memcpy(v, p->v0, (size_t)nv * sizeof(double));
  for (fl_int i = 0; i < nv; i++)
    if (!d->part[i]) v[i] = p->vstar[i];
  d->nfactor = 0;
  d->nupdate = 0;
  fl__sap_pcg_reset(d);

  // the lag of this solve starts from setup's n0 (a previous solve may have re-lagged it)
  d->hint_on = 0;
  if (d->model != MODEL_CONVEX)
    for (fl_int k = 0; k < d->nc; k++) {
      d->rts[k] = o->lag_sigma / o->sigma; // the Huber friction's R_t = lag_sigma w
      d->n0[k] = d->n0s[k];
      set_eps(d, p, o, k);
    }

  // iteration 0
  sap_state st;
  eval_state(d, p, v, gamma, &w, &st, -1.0);
  s->cur_v = v;
  s->cur_gamma = gamma;
  fl_iter_stat is;
  fl_iter_stat_init(&is, 0);
  fill_stat(&is, &st);
  int reason = fl_solver_record(s, &is);
  // SAP's own rule replaces the spine's test relative to iteration 0
  s->error0 = NAN;
  double tol = cm->abs_tol + cm->rel_tol * st.scale;
  if (reason < 0) goto done;
  if (reason == 0 && !cm->never_stop && st.err <= tol) s->reason = FL_CONVERGED_EXACT;

  int k = 0;
  w.vbest = NULL;
  w.ebest = INFINITY;
  int fallback = d->huber && o->fallback && !cm->never_stop;
  if (fallback) {
    w.vbest = FL_ALLOC(ar, nv + 1, double);
    if (!w.vbest) return fl_seterr(FL_ERR_NOMEM, "%s: arena too small", s->ops->name);
    keep_best(d, &w, v, &st);
  }
  solve_passes(s, d, p, o, &w, v, gamma, &st, &k);
  // lagged huber: a step Newton could not solve is solved again with the soft friction (smooth,
  // fewer mode changes; section 1.4), from the best iterate, with a max_iter budget of its own
  if (fallback && (s->reason == FL_DIVERGED_MAX_ITER || s->reason == FL_DIVERGED_LINE_SEARCH ||
                   s->reason == FL_DIVERGED_STAGNATION || s->reason == FL_DIVERGED_GROWTH)) {
    memcpy(v, w.vbest, (size_t)nv * sizeof(double));
    d->huber = 0;
    d->h_ok = 0; // the soft friction's blocks: assemble H anew
    d->hint_on = 0;
    for (fl_int c = 0; c < d->nc; c++) {
      d->n0[c] = d->n0s[c];
      set_eps(d, p, o, c);
    }
    s->fallback++;
    s->reason = 0;
    int max_iter = s->common.max_iter;
    s->common.max_iter = k + max_iter;
    w.vbest = NULL;
    eval_state(d, p, v, gamma, &w, &st, -1.0);
    k++;
    fl_iter_stat_init(&is, k);
    fill_stat(&is, &st);
    is.inner_iters = 0; // the start of the fallback solve (the cost function changed)
    reason = fl_solver_record(s, &is);
    if (reason == 0) {
      tol = cm->abs_tol + cm->rel_tol * st.scale;
      if (st.err <= tol) s->reason = st.err <= cm->abs_tol ? FL_CONVERGED_ATOL : FL_CONVERGED_RTOL;
      solve_passes(s, d, p, o, &w, v, gamma, &st, &k);
    }
    s->common.max_iter = max_iter;
    d->huber = 1;
  }
done:
  fl_arena_release(&s->arena, mark);
  if (s->reason == FL_REASON_ABORT) return s->abort_code < 0 ? s->abort_code : FL_ERR_STATE;
  return FL_OK;
}


static void sap_view(const fl_solver *s, FILE *f) {
  const sap_data *d = SD(s);
  if (!d) return;
  double wmin = INFINITY, wmax = 0.0;
  for (fl_int k = 0; k < d->ncon; k++) {
    if (d->w[k] < wmin) wmin = d->w[k];
    if (d->w[k] > wmax) wmax = d->w[k];
  }
  fprintf(f, "  sap: nv %d, %d contacts, %d bilateral rows, Delassus estimate w in [%g, %g]\n",
          (int)d->nv, (int)d->nc, (int)d->nh, d->ncon ? wmin : 0.0, wmax);
  if (d->dense) {
    fprintf(f, "  sap: dense Cholesky of the %d x %d Hessian\n", (int)d->nv, (int)d->nv);
  } else if (d->pcg) {
    long it, ns;
    double sh;
    fl__sap_pcg_stats(d, &it, &ns, &sh);
    fprintf(f, "  sap: PCG, IC(0) on nnz(tril H) %d, %ld CG iterations for %ld directions in "
            "the last solve, diagonal shift %g\n", ((const int *)d->H->p)[d->nv], it, ns, sh);
  } else if (d->H && d->L) {
    fprintf(f, "  sap: CHOLMOD %s, AMD ordering, nnz(tril H) %d, nnz(L) %.0f, flops %.3g\n",
            d->L->is_super ? "supernodal" : "simplicial", ((const int *)d->H->p)[d->nv],
            d->cm.lnz, d->cm.fl);
  }
  fprintf(f, "  sap: %d factorizations and %d predicted updates in the last solve\n", d->nfactor,
          d->nupdate);
}


const fl_solver_ops fl_sap_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "sap",
  .summary = "SAP (Castro et al. 2022): convex primal Newton with exact line search on a "
             "regularized compliant model; stops when ||D grad|| <= abs_tol + rel_tol "
             "max(||D A v||, ||D J^T gamma||) (rel_tol relative to the momentum scale, as Drake)",
  .opts_size = sizeof(sap_opts),
  .options = sap_table,
  .data_size = sizeof(sap_data),
  .caps = FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_BILATERAL | FL_CAP_NEEDS_AJ |
          FL_CAP_WARMSTART | FL_CAP_REGULARIZED,
  .setup = fl__sap_setup,
  .solve = sap_solve,
  .view = sap_view,
  .destroy = fl__sap_destroy,
  .common_defaults = "max_iter=100,abs_tol=1e-14,rel_tol=1e-6",
};

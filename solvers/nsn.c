/* nsn.c: non-smooth Newton with complementarity preconditioning (Macklin et al. 2019; thesis
 * chapter 4 and appendix A; SOLVERS.md section 3), and the registry of its inner linear
 * solvers (fl_lin.h).
 *
 * Unknowns and units. fl_problem's unknowns are impulses gamma (N s); the thesis' multipliers
 * are forces lambda = gamma / dt. We iterate on (v, gamma) and keep the thesis' r factors in
 * force units, so an NCP argument r lambda is written rho gamma with rho = r / dt:
 *
 *   precond      r (normal)              r (friction)        rho_n = r_n/dt    rho_f = r_f/dt
 *   identity     1                       1                   1/dt              1/dt
 *   timestep     dt^2                    dt                  dt                1
 *   effmass      dt s (W_nn + R_n)       dt W_tt             s (W_nn + R_n)    W_tt
 *
 * with W = J A^-1 J^T, W_tt the mean of the two tangential diagonal entries, s = dt + tau_d
 * and R_n the compliance of the common model (fl_problem_normal_law). For rigid contact
 * (R_n = tau_d = 0) the effective-mass row is the thesis' r = dt^2 [J M^-1 J^T]_ii. The
 * time-step strategy uses dt^2 for normal and dt for friction rows, the same split of one dt
 * as the effective-mass strategy (a velocity-force relation has one dt fewer).
 *
 * Residuals at an iterate (v, gamma), u = J v + b:
 *   momentum  g = A (v - v*) - J^T gamma
 *   normal    phi_n = NCP(C_n, rho_n gamma_n),  C_n = s (u_n - vhat_n + R_n gamma_n)  (m)
 *             i.e. C_n = phi0 + (dt + tau_d) u_n + gamma_n / (k dt): the next-step gap with
 *             the compliant law folded in; rigid contact is k = INFINITY.
 *   friction  phi_f = u_t + W_f gamma_t (m/s) for active contacts (mu gamma_n > 0), where the
 *             friction compliance W_f >= 0 comes from the slack fixed point (thesis eq. 72,
 *             paper appendix A) and is held constant during the step, which keeps the Newton
 *             matrix symmetric; inactive contacts get gamma_t -> 0.
 *   bilateral phi_h = J_h v + b_h + g0_h/dt + c_h gamma_h; a row whose impulse would leave
 *             [lo, hi] is held at the bound (min-map on the box).
 *
 * Newton step (compliance form, thesis eq. 80, H = A): eliminating dv = A^-1 (J^T dgamma - g)
 * and dividing each normal row by a s (a = dNCP/dC) gives the symmetric system
 *
 *   [W + C] dgamma = J A^-1 g - phi~,     C_n = R_n + b rho_n / (a s),  C_f = W_f,  C_h = c_h,
 *   phi~_n = phi_n / (a s),  phi~_f = phi_f,  phi~_h = phi_h,   J A^-1 g = (u - b) - J v* - W gamma,
 *
 * (b = dNCP/d(rho gamma)). Row scaling leaves the Newton step unchanged, so this is the exact
 * semismooth Newton step apart from the friction fixed point. Rows whose increment is known
 * (normal rows with a <= 1e-10, where the limit is dgamma_n = -phi_n/(b rho_n); inactive
 * friction rows, dgamma_t = -gamma_t; bilateral rows at a bound) are taken out: their rows and
 * columns of W are zeroed and their known increments z moved to the right-hand side, which
 * keeps the matrix symmetric positive semidefinite. The matrix W is constant during a solve
 * (A and J are), so it is formed once in setup and only the diagonal and masks change.
 *
 * Update: gamma += alpha dgamma, v += alpha (v* + A^-1 J^T (gamma + dgamma) - v), with alpha
 * = 0.75 (damped, default) or a backtracking search on the 2-norm of the residual vector
 * (phi_n/s, phi_f, phi_h, A^-1 g). Start: v = 0, gamma = 0 (thesis), or v = v* (start=free), or the
 * incoming guess with warm_start. The momentum residual of the iterate decays as
 * (1 - alpha)^k from a zero start; with project_v (default) the v handed out and recorded is
 * v* + A^-1 J^T gamma, which satisfies momentum exactly (one product with (J A^-1)^T per
 * iteration, needed for the update anyway).
 *
 * Errors recorded per Newton iteration, independent of the chosen r so that strategies can
 * be compared: err_normal = max_i |min(C_n, s (W_nn + R_n) gamma_n)| (m), err_friction =
 * max_i ||rho gamma_t - P_disk(mu rho gamma_n)(rho gamma_t - u_t)|| with rho = W_tt (m/s),
 * bilateral max |phi_h|; the own residual `error` is max(err_normal_i / s_i, err_friction,
 * err_bilateral, err_momentum) in m/s, err_momentum = ||A^-1 g||_inf = ||v - v* - A^-1 J^T
 * gamma||_inf (the zero start satisfies every complementarity condition but not momentum). step_norm = alpha ||dgamma||_inf (N s); objective = merit (2-norm).
 *
 * Local problems (FCLIB local: u = W gamma + q, no A): the same iteration on gamma alone, with
 * the file's W as the matrix and J A^-1 g = 0 (ncp=fb|min), or by default (ncp=auto) the
 * Alart-Curnier exact Newton below, with an Armijo search on 0.5 ||F||^2 (docs/nsn.md,
 * "Robustness and the proximal loop"). Every path falls back to the projection step when the
 * Newton direction is not finite or not usable, and never hands out a non-finite iterate.
 *
 * ncp=ac on a global problem (the default, ncp=auto, unless it has bilateral rows): solved in
 * its local form (fl_problem_local_form, formed in setup as prox does: W = J A^-1 J^T +
 * diag(R_n), q = J v* + b - vhat_n), handing out v = v* + A^-1 J^T gamma; bilateral rows,
 * which the local form cannot express, are refused. On global problems the auto values make it
 * near-rigid (ac.compliance: W_ii (1 + 3e-4)), non-monotone in its search (ac.nonmono), polished
 * on the rigid problem once the near-rigid one converged (ac.polish), and a solve that fails
 * hands out its best iterate with no kinetic energy added (ac.best; nsn_solve_ac).
 * World steps have redundant contacts (four or more per face), where W is singular, so there
 * the Jacobian is regularized (ac.reg) and a solve that has not converged after ac.restart
 * iterations restarts once from gamma = 0 with a Tikhonov continuation (nsn_solve_ac). Their
 * Jacobians are small, so they are factorized densely (ac.lu).
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <umfpack.h>

#include "sparse_lu.h"

#include "fl_lin.h"
#include "fl_solver_impl.h"

#define NSN_ALPHA_MIN 1e-10 /* normal rows with dNCP/dC below this are decoupled */
#define NSN_FB_DEN_FLOOR 0.1 /* FB friction fixed point: target |gamma_t| >= 0.1 mu gamma_n */
#define NSN_AC_DENSE_MAX 384 /* ac.lu=auto: dense LU on global problems up to this many rows */
#define NSN_AC_TK0 1e-2      /* ac restart: initial Tikhonov weight (relative to diag W) */
#define NSN_AC_TK_SHRINK 1e-3 /* ac restart: the weight's factor after a full Newton step */
#define NSN_AC_COMPLIANCE 3e-4 /* ac.compliance=auto on global problems (world steps) */
#define NSN_AC_NONMONO 5     /* ac.nonmono=auto on global problems */
#define NSN_AC_POLISH 4      /* ac.polish=auto on global problems */
#define NSN_AC_POLISH2 1e-2  /* the polish's second try: compliance c 1e-2 */

//---- NCP functions (appendix A) ----

double fl__nsn_ncp(int kind, double a, double b, double *da, double *db) {
  if (kind == 1) {
    // min-map: active (a) branch when a <= b
    if (a <= b) {
      *da = 1;
      *db = 0;
      return a;
    }
    *da = 0;
    *db = 1;
    return b;
  }
  // Fischer-Burmeister a + b - sqrt(a^2 + b^2); at (0, 0) the convention da = 0, db = 1
  double n = hypot(a, b);
  if (n == 0) {
    *da = 0;
    *db = 1;
    return 0;
  }
  *da = 1 - a / n;
  *db = 1 - b / n;
  // both positive: a + b - n cancels, use 2ab / (a + b + n)
  if (a > 0 && b > 0) return 2 * a * b / (a + b + n);
  return a + b - n;
}


double fl__nsn_friction_compliance(int kind, double ut, double gt, double gn, double mu,
                                   double rho) {
  double cap = mu * gn; /* cone radius (N s) */
  double m = cap - gt;  /* margin to the cone */
  if (kind == 1) {
    // min-map: stick when |u_t| <= rho m, else W = (|u_t| - rho m) / (mu gamma_n)
    if (ut <= rho * m) return 0;
    return (ut - rho * m) / cap;
  }
  // FB: |u_t|^{n+1} = |u_t| - psi = sqrt(ut^2 + rho^2 m^2) - rho m and
  //     |gamma_t|^{n+1} = |gamma_t| + psi/rho = mu gn - rho m^2 / (ut + n), W = ratio
  double rm = rho * m, n = hypot(ut, rm);
  double num = rm > 0 ? (n + rm > 0 ? ut * ut / (n + rm) : 0) : n - rm;
  double den = (ut + n > 0) ? cap - rho * m * m / (ut + n) : cap;
  if (num <= 0) return 0;
  // far outside the cone the FB target |gamma_t| may be <= 0: floor it (our safeguard)
  if (den < NSN_FB_DEN_FLOOR * cap) den = NSN_FB_DEN_FLOOR * cap;
  return num / den;
}


//---- inner linear solver registry ----

const fl_lin_ops *fl_lin_ops_get(int type) {
  switch (type) {
    case FL_LIN_JACOBI: return &fl_lin_jacobi_ops;
    case FL_LIN_GS: return &fl_lin_gs_ops;
    case FL_LIN_PCG: return &fl_lin_pcg_ops;
    case FL_LIN_PCR: return &fl_lin_pcr_ops;
    case FL_LIN_DIRECT: return &fl_lin_direct_ops;
#ifdef FL_HAVE_PETSC
    case FL_LIN_PETSC: return &fl_lin_petsc_ops;
#endif
    default: return NULL;
  }
}


void fl_lin_free(fl_lin *l) {
  if (!l) return;
  if (l->ops && l->ops->destroy) l->ops->destroy(l);
  fl__lin_pc_free(l);
  fl_free(l->w);
  fl_free(l->hist);
  fl_free(l);
}


int fl_lin_create(const fl_lin_opts *o, const fl_csr *K, fl_lin **out) {
  *out = NULL;
  const fl_lin_ops *ops = fl_lin_ops_get(o->type);
  if (!ops)
    return fl_seterr(FL_ERR_UNSUPPORTED,
                     "nsn: lin=%s is not available in this build (PETSc not found at "
                     "configure time); available: jacobi, gs, pcg, pcr, direct",
                     o->type == FL_LIN_PETSC ? "petsc" : "?");
  fl_lin *l = fl_calloc(1, sizeof(*l));
  if (!l) return fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (inner solver)");
  l->ops = ops;
  l->opts = *o;
  l->n = K->nrow;
  l->hist_cap = (o->max_iter > 0 ? o->max_iter : 1) + 2;
  size_t n = (size_t)(l->n > 0 ? l->n : 1);
  l->w = fl_calloc(8 * n, sizeof(double));
  l->hist = fl_calloc(2 * (size_t)l->hist_cap, sizeof(double));
  if (!l->w || !l->hist) {
    fl_lin_free(l);
    return fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (inner solver)");
  }
  l->hist_nat = l->hist + l->hist_cap;
  int rc = fl__lin_pc_setup(l, K);
  l->opts.block_ptr = l->opts.block_idx = NULL; /* borrowed: the preconditioner copied them */
  if (rc == FL_OK) rc = ops->setup(l, K);
  if (rc < 0) {
    fl_lin_free(l);
    return rc;
  }
  *out = l;
  return FL_OK;
}


int fl_lin_solve(fl_lin *l, const fl_csr *K, const double *b, double *x, fl_lin_stat *st) {
  l->hist_len = 0;
  memset(&l->stat, 0, sizeof(l->stat));
  l->stat.res_nat = NAN;
  l->stat.res0 = sqrt(fl__lin_dot(l->n, b, b));
  int rc = l->ops->solve(l, K, b, x);
  if (rc < 0) return rc;
  // the true final residual, whatever the method tracked
  l->stat.res = fl__lin_residual(K, b, x, l->w);
  if (l->hist_len > 0) l->stat.res_nat = l->hist_nat[l->hist_len - 1];
  if (!isfinite(l->stat.res)) l->stat.reason = FL_LIN_NAN;
  if (st) *st = l->stat;
  return FL_OK;
}


const double *fl_lin_history(const fl_lin *l, int *n, const double **nat) {
  if (!l) {
    *n = 0;
    if (nat) *nat = NULL;
    return NULL;
  }
  *n = l->hist_len;
  if (nat) *nat = l->hist_nat;
  return l->hist;
}


int fl__lin_record(fl_lin *l, double res, double res_nat) {
  if (l->hist_len < l->hist_cap) {
    l->hist[l->hist_len] = res;
    l->hist_nat[l->hist_len] = res_nat;
    l->hist_len++;
  }
  double tol = l->opts.rel_tol * l->stat.res0;
  if (l->opts.abs_tol > tol) tol = l->opts.abs_tol;
  return res <= tol;
}


int fl__lin_step(fl_lin *l, int it, double res, double res_nat) {
  l->stat.iters = it;
  if (!isfinite(res)) {
    l->stat.reason = FL_LIN_NAN;
    fl__lin_record(l, res, NAN);
    return 1;
  }
  if (fl__lin_record(l, res, res_nat)) {
    l->stat.reason = FL_LIN_CONVERGED;
    return 1;
  }
  return 0;
}


double fl__lin_dot(fl_int n, const double *a, const double *b) {
  double s = 0;
  for (fl_int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}


/* t -/+ sum_k val[k] x[col[k]] over k in [k0, k1), terms taken one after another in k order
 * (the plain loop's rounding, four terms per loop trip) */
static inline double row_acc(double t, int sub, const fl_int *restrict col,
                             const double *restrict val, const double *restrict x, fl_int k0,
                             fl_int k1) {
  fl_int k = k0;
  if (sub) {
    for (; k + 4 <= k1; k += 4) {
      t -= val[k] * x[col[k]];
      t -= val[k + 1] * x[col[k + 1]];
      t -= val[k + 2] * x[col[k + 2]];
      t -= val[k + 3] * x[col[k + 3]];
    }
    for (; k < k1; k++) t -= val[k] * x[col[k]];
  } else {
    for (; k + 4 <= k1; k += 4) {
      t += val[k] * x[col[k]];
      t += val[k + 1] * x[col[k + 1]];
      t += val[k + 2] * x[col[k + 2]];
      t += val[k + 3] * x[col[k + 3]];
    }
    for (; k < k1; k++) t += val[k] * x[col[k]];
  }
  return t;
}


void fl__lin_gemv(const fl_csr *K, const double *x, double *y) {
  const fl_int *rp = K->rowptr;
  for (fl_int i = 0; i < K->nrow; i++) y[i] = row_acc(0.0, 0, K->col, K->val, x, rp[i], rp[i + 1]);
}


double fl__lin_residual(const fl_csr *K, const double *b, const double *x, double *r) {
  double s = 0;
  const fl_int *rp = K->rowptr;
  for (fl_int i = 0; i < K->nrow; i++) {
    double t = row_acc(b[i], 1, K->col, K->val, x, rp[i], rp[i + 1]);
    r[i] = t;
    s += t * t;
  }
  return sqrt(s);
}


void fl__lin_inv_diag(const fl_csr *K, double *dinv) {
  for (fl_int i = 0; i < K->nrow; i++) {
    double d = 0;
    for (fl_int k = K->rowptr[i]; k < K->rowptr[i + 1]; k++)
      if (K->col[k] == i) d = K->val[k];
    dinv[i] = d > 0 ? 1.0 / d : 1.0;
  }
}


//---- options ----

enum { NCP_FB = 0, NCP_MIN = 1, NCP_AC = 2, NCP_AUTO = 3 };
enum { PRE_IDENTITY = 0, PRE_TIMESTEP = 1, PRE_EFFMASS = 2 };
enum { LS_NONE = 0, LS_BACKTRACK = 1, LS_AUTO = 2 };
enum { START_ZERO = 0, START_FREE = 1 };
enum { PC_DIAG = 0, PC_BLOCK = 1, PC_PAIR = 2 };
enum { LU_AUTO = 0, LU_DENSE = 1, LU_SPARSE = 2, LU_KLU = 3 };
enum { RHO_DIAG = 0, RHO_SPECTRAL = 1 };
enum { FB_AUTO = 0, FB_PROJECTION = 1, FB_GS = 2 };

typedef struct nsn_opts {
  int ncp;
  int precond;
  double alpha;
  int line_search;
  int start;
  int project_v;
  int lin;
  int lin_max_iter;
  double lin_rel_tol;
  double lin_abs_tol;
  double lin_omega;
  double lin_reg;
  char lin_petsc_options[FL_OPT_STRLEN];
  int lin_petsc_comm;
  int lin_pc;
  double ac_reg;
  int ac_restart;
  int ac_lu;
  double ac_compliance;
  int ac_rho;
  int ac_fallback;
  int ac_best;
  int ac_nonmono;
  int ac_polish;
} nsn_opts;

#define OO(f) offsetof(nsn_opts, f)
static const fl_option_desc nsn_options[] = {
  {"ncp", FL_OPT_ENUM, OO(ncp), 0, 0, NCP_AUTO, "fb|min|ac|auto",
   "NCP function: Fischer-Burmeister or min-map (compliance form, inner lin), ac = Alart-"
   "Curnier with its exact Jacobian and an LU (ac.lu), on global problems through their local "
   "form W = J A^-1 J^T, q (no bilateral rows); auto = ac, except fb on global problems with "
   "bilateral rows or no contacts. On world steps ac is near-rigid (ac.compliance 3e-4) with "
   "a rigid polish (ac.polish), so stick and slip are Coulomb's to rounding; a step that does "
   "not converge returns a negative reason and its best iterate, capped so that it adds no "
   "kinetic energy (docs/nsn.md)"},
  {"precond", FL_OPT_ENUM, OO(precond), 0, 0, PRE_EFFMASS, "identity|timestep|effmass",
   "complementarity preconditioning r: 1, dt^2 (friction dt), or dt^2 W_ii (friction dt W_ii)"},
  {"alpha", FL_OPT_REAL, OO(alpha), 1e-6, 1, 0.75, NULL,
   "damped Newton step fraction (line_search=none)"},
  {"line_search", FL_OPT_ENUM, OO(line_search), 0, 0, LS_AUTO, "none|backtrack|auto",
   "none: fixed alpha; backtrack: Armijo, halve from 1 until the merit decreases enough; "
   "auto = backtrack on local problems and with ncp=ac, none on global problems with "
   "ncp=fb|min (the old world-step setting, which can stall with contacts stuck)"},
  {"start", FL_OPT_ENUM, OO(start), 0, 0, START_ZERO, "zero|free",
   "starting iterate without warm_start: v = 0, gamma = 0 (thesis) or v = v*, gamma = 0"},
  {"project_v", FL_OPT_BOOL, OO(project_v), 0, 1, 1, NULL,
   "hand out v = v* + A^-1 J^T gamma (momentum exact) instead of the Newton iterate v"},
  {"lin", FL_OPT_ENUM, OO(lin), 0, 0, FL_LIN_PCR, FL_LIN_CHOICES,
   "inner linear solver of the Newton system"},
  {"lin.max_iter", FL_OPT_INT, OO(lin_max_iter), 1, 1e8, 40, NULL,
   "inner iterations per Newton iteration (iterative solvers)"},
  {"lin.rel_tol", FL_OPT_REAL, OO(lin_rel_tol), 0, 1, 1e-10, NULL,
   "inner stop when ||b - K x|| <= rel_tol ||b||"},
  {"lin.abs_tol", FL_OPT_REAL, OO(lin_abs_tol), 0, INFINITY, 0, NULL,
   "inner stop when ||b - K x|| <= abs_tol"},
  {"lin.omega", FL_OPT_REAL, OO(lin_omega), 0, 2, 0, NULL,
   "jacobi/gs relaxation weight; 0 = automatic (jacobi 1/Gershgorin bound, gs 1)"},
  {"lin.reg", FL_OPT_REAL, OO(lin_reg), 0, 1, 1e-10, NULL,
   "direct: shift reg I added to the unit-diagonal scaled K (x100 while not positive definite)"},
  {"lin.petsc_options", FL_OPT_STRING, OO(lin_petsc_options), 0, 0, 0,
   "-ksp_type cr -pc_type jacobi", "lin=petsc: PETSc options choosing the KSP and PC"},
  {"lin.petsc_comm", FL_OPT_ENUM, OO(lin_petsc_comm), 0, 0, 0, "self|world",
   "lin=petsc: self, or distribute K over PETSC_COMM_WORLD (all ranks solve together)"},
  {"lin.pc", FL_OPT_ENUM, OO(lin_pc), 0, 0, PC_DIAG, "diag|block|pair",
   "pcg/pcr preconditioner: diag K, its 3x3 contact blocks, or its blocks of contacts "
   "between the same two cliques"},
  {"ac.reg", FL_OPT_REAL, OO(ac_reg), -1, 1, -1, NULL,
   "ncp=ac: Jacobian A + B (W + reg diag W), which keeps it invertible where W is singular "
   "(redundant contacts); -1 = auto: 1e-11 on global problems, 0 on local ones"},
  {"ac.restart", FL_OPT_INT, OO(ac_restart), -1, 1e8, -1, NULL,
   "ncp=ac: after this many Newton iterations without convergence restart once from gamma = 0 "
   "with a Tikhonov continuation (0: never); -1 = auto: 10 on global problems, 0 on local ones"},
  {"ac.lu", FL_OPT_ENUM, OO(ac_lu), 0, 0, LU_AUTO, "auto|dense|sparse|klu",
   "ncp=ac: the Jacobian's LU: dense (partial pivoting), sparse (UMFPACK) or klu (KLU, the "
   "pivots reused while the condition estimate allows: fewer instructions on the well-"
   "conditioned systems of prox's inner solves); auto = dense on global problems of at most "
   "384 rows (world steps: many small solves), sparse otherwise"},
  {"ac.compliance", FL_OPT_REAL, OO(ac_compliance), -1, 1, -1, NULL,
   "ncp=ac: near-rigid regularization c: W_ii of every row becomes (1 + c) W_ii, a compliance "
   "c W_ii (s/kg) per contact row as SAP's regularization; 0 = the rigid problem; -1 = auto: "
   "3e-4 on global problems (world steps), 0 on local ones"},
  {"ac.rho", FL_OPT_ENUM, OO(ac_rho), 0, 0, RHO_DIAG, "diag|spectral",
   "ncp=ac: the Alart-Curnier parameters rho: diag = 1/W_nn and 1/W_tt per contact; "
   "spectral = 1/lambda_max of the contact's 3x3 block of W for all three rows (Siconos's "
   "default; on world steps it stalls more often than diag)"},
  {"ac.fallback", FL_OPT_ENUM, OO(ac_fallback), 0, 0, FB_AUTO, "auto|projection|gs",
   "ncp=ac: the step taken when the Newton direction fails or the line search finds no "
   "decrease: projection (gamma - F, all contacts at once) or gs (one projected Gauss-Seidel "
   "sweep over the contacts); auto = gs on global problems, projection on local ones"},
  {"ac.best", FL_OPT_ENUM, OO(ac_best), 0, 0, 0, "auto|off|on",
   "ncp=ac: a solve that does not converge hands out the iterate of least own residual "
   "(recorded as one more iteration; the reason stays negative); auto = on global problems"},
  {"ac.nonmono", FL_OPT_INT, OO(ac_nonmono), -1, 16, -1, NULL,
   "ncp=ac: non-monotone Armijo search: accept a step whose merit is below the largest of the "
   "last M iterations' (0: monotone); -1 = auto: 5 on global problems, 0 on local ones"},
  {"ac.polish", FL_OPT_INT, OO(ac_polish), -1, 1000, -1, NULL,
   "ncp=ac with ac.compliance > 0: after the regularized problem converged, at most this many "
   "Newton iterations on the rigid one from its solution; the rigid answer is handed out when "
   "they converge, else the regularized one (0: never); -1 = auto: 4 on global problems"},
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

//---- state ----

typedef struct nsn_data {
  fl_int n, nc, nh, nv;
  int global;
  fl_dynamics *dyn;    /* global problems */
  const fl_csr *B;     /* J A^-1, owned by dyn */
  fl_csr *Wown;        /* J A^-1 J^T (global) */
  const fl_csr *W;     /* the Delassus matrix in use */
  fl_csr *K;           /* Newton matrix: pattern(W) + diagonal */
  fl_int *wmap;        /* (nnz W) position of each W entry in K */
  fl_int *kdiag;       /* (n) position of K_ii */
  fl_int nblock;       /* inner preconditioner's blocks (lin.pc=block|pair) */
  fl_int *blk_ptr, *blk_idx; /* (nblock + 1), (n) */
  fl_lin *lin;
  int built;           /* K and rhs hold a Newton system */

  void *buf;           /* one allocation for the arrays below */
  double *R, *vhat, *s, *rho_n, *rho_f, *rho_em, *wtt, *Wf; /* (nc) */
  double *rho_b;       /* (nh) */
  double *wdiag;       /* (n) */
  double *Cd, *phis, *z, *u, *Jvs, *rhs, *y, *dg, *tmp, *g0; /* (n) */
  unsigned char *fixed; /* (n) */
  double *vit, *vtr, *bg, *bdg, *bgt; /* (nv) */

  /* evaluation of the current iterate */
  double err_n, err_f, err_b, err_m, error, merit;
  int nactive, nstick, nslip;

  int ncp, ls;         /* resolved ncp and line_search (auto decided by the problem kind) */
  double *gsave, *vsave, *bgsave; /* (n), (nv), (nv): the iterate before a step (guard) */

  /* ncp=ac (local problems): Jacobian G = Ablk + Bblk W in CSR (int indices for UMFPACK);
   * the three rows of contact i share one column list: W's rows of the contact plus its
   * diagonal block */
  int *jptr, *jcol;
  double *jval;
  fl_int *wpos;        /* (nnz W) offset of each W entry in its contact's column list */
  fl_int *dpos;        /* (3 nc) offset of column 3i+b in contact i's column list */
  double *acF, *acFt, *acut, *acgt, *acdx, *acblk; /* (n) x5, (18 nc) */
  double *acrn, *acrt; /* (nc) Alart-Curnier rho: 1/W_nn, 1/W_tt */
  void *sym, *num;     /* UMFPACK symbolic and numeric factors */
  fl_splu *klu;        /* ac.lu=klu: KLU's factors (sparse_lu.h) */
  int acklu;           /* resolved ac.lu is klu */
  double *acG;         /* ac.lu=dense: G row-major (n x n), its LU in place */
  int *acpiv;          /* (2n) its row interchanges, then fl_lu_factor's last[] */
  double acreg;        /* resolved ac.reg */
  int acrestart;       /* resolved ac.restart */
  fl_csr *acWc;        /* ac.compliance > 0: the regularized W (pl->W or Wown), whose diagonal
                          ac_set_rigid switches between (1 + c) W_ii and W_ii */
  fl_int *acdk;        /* (n) position of W_ii in acWc->val */
  double *acwd;        /* (2n) regularized, then rigid W_ii */
  int acpolish;        /* resolved ac.polish: rigid Newton iterations after a regularized solve */
  double accomp;       /* resolved ac.compliance */
  int acnm;           /* ac.nonmono: merits kept for the non-monotone search */
  double acthist[16];  /* their values, newest first */
  int acfb, acbest;    /* resolved ac.fallback (FB_GS or FB_PROJECTION), ac.best (0/1) */
  double *acbestg;     /* (n) ac.best: the iterate of least own residual */
  double acmu;         /* Jacobian G = A + B (W + acmu diag W) of the current iteration */
  fl_problem *pl;      /* ncp=ac on a global problem: its local form (owned); dyn and B give
                          the velocities handed out, v* + A^-1 J^T gamma */
} nsn_data;


static void nsn_destroy(fl_solver *s) {
  nsn_data *d = s->data;
  if (!d) return;
  fl_lin_free(d->lin);
  fl_csr_free(d->K);
  fl_free(d->wmap);
  fl_free(d->kdiag);
  fl_free(d->blk_ptr);
  fl_free(d->blk_idx);
  fl_csr_free(d->Wown);
  fl_dynamics_free(d->dyn);
  fl_free(d->buf);
  fl_free(d->jptr);
  fl_free(d->jcol);
  fl_free(d->jval);
  fl_free(d->wpos);
  fl_free(d->dpos);
  fl_free(d->acF);
  fl_free(d->acbestg);
  fl_free(d->acdk);
  fl_free(d->acwd);
  fl_problem_free(d->pl);
  fl_free(d->acG);
  fl_free(d->acpiv);
  if (d->num) umfpack_di_free_numeric(&d->num);
  if (d->sym) umfpack_di_free_symbolic(&d->sym);
  fl_splu_free(&d->klu);
  memset(d, 0, sizeof(*d));
}


/* K's pattern: W's with every diagonal entry present; wmap/kdiag locate entries */
static int build_pattern(nsn_data *d) {
  const fl_csr *W = d->W;
  fl_int n = d->n, nnz = W->nnz;
  for (fl_int i = 0; i < n; i++) {
    int has = 0;
    for (fl_int k = W->rowptr[i]; k < W->rowptr[i + 1]; k++) has |= (W->col[k] == i);
    if (!has) nnz++;
  }
  FL_TRY(fl_csr_alloc(n, n, nnz, &d->K));
  d->wmap = fl_malloc((size_t)(W->nnz > 0 ? W->nnz : 1) * sizeof(fl_int));
  d->kdiag = fl_malloc((size_t)(n > 0 ? n : 1) * sizeof(fl_int));
  if (!d->wmap || !d->kdiag) return fl_seterr(FL_ERR_NOMEM, "nsn: out of memory");
  fl_int q = 0;
  d->K->rowptr[0] = 0;
  for (fl_int i = 0; i < n; i++) {
    int done = 0;
    for (fl_int k = W->rowptr[i]; k < W->rowptr[i + 1]; k++) {
      fl_int j = W->col[k];
      if (!done && j > i) {
        d->kdiag[i] = q;
        d->K->col[q++] = i;
        done = 1;
      }
      if (j == i) {
        d->kdiag[i] = q;
        done = 1;
      }
      d->wmap[k] = q;
      d->K->col[q++] = j;
    }
    if (!done) {
      d->kdiag[i] = q;
      d->K->col[q++] = i;
    }
    d->K->rowptr[i + 1] = q;
  }
  for (fl_int k = 0; k < q; k++) d->K->val[k] = 0;
  return FL_OK;
}


/* the inner preconditioner's partition: each contact's 3 rows (pair: the rows of every contact
 * between the same two cliques, in contact order, up to FL_LIN_BLOCK_MAX rows), then each
 * bilateral row alone. Pairs are grouped through one sort of the contacts by (clique_a,
 * clique_b, index), so the partition costs O(nc log nc). */
static const fl_problem *blocks_p_; /* qsort has no context argument; set-up is not threaded */
static int pair_cmp(const void *x, const void *y) {
  fl_int i = *(const fl_int *)x, j = *(const fl_int *)y;
  const fl_problem *p = blocks_p_;
  if (p->clique_a[i] != p->clique_a[j]) return p->clique_a[i] < p->clique_a[j] ? -1 : 1;
  if (p->clique_b[i] != p->clique_b[j]) return p->clique_b[i] < p->clique_b[j] ? -1 : 1;
  return (i > j) - (i < j);
}

static int nsn_blocks(nsn_data *d, const fl_problem *p, int pair) {
  fl_int nc = d->nc, n = d->n;
  pair = pair && d->global && p->clique_a && p->clique_b;
  d->blk_ptr = fl_malloc(((size_t)n + 2) * sizeof(fl_int));
  d->blk_idx = fl_malloc(((size_t)n + 1) * sizeof(fl_int));
  fl_int *order = fl_malloc(((size_t)nc + 1) * sizeof(fl_int));
  if (!d->blk_ptr || !d->blk_idx || !order) {
    fl_free(order);
    return fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (preconditioner blocks)");
  }
  for (fl_int i = 0; i < nc; i++) order[i] = i;
  if (pair) {
    blocks_p_ = p;
    qsort(order, (size_t)nc, sizeof *order, pair_cmp);
  }
  fl_int nb = 0, w = 0;
  d->blk_ptr[0] = 0;
  for (fl_int k = 0; k < nc; k++) {
    fl_int i = order[k];
    // a new block unless this contact joins the previous one's pair and the block has room
    if (k > 0) {
      fl_int h = order[k - 1];
      int same = pair && p->clique_a[i] == p->clique_a[h] && p->clique_b[i] == p->clique_b[h] &&
                 w - d->blk_ptr[nb] + 3 <= FL_LIN_BLOCK_MAX;
      if (!same) d->blk_ptr[++nb] = w;
    }
    for (int r = 0; r < 3; r++) d->blk_idx[w++] = 3 * i + r;
  }
  if (nc > 0) d->blk_ptr[++nb] = w;
  for (fl_int r = 3 * nc; r < n; r++) {
    d->blk_idx[w++] = r;
    d->blk_ptr[++nb] = w;
  }
  fl_free(order);
  d->nblock = nb;
  return FL_OK;
}

static int ac_setup(nsn_data *d, int dense, int spectral);

static int nsn_setup(fl_solver *s, const fl_problem *p) {
  nsn_data *d = s->data;
  const nsn_opts *o = s->opts;
  d->nc = p->nc;
  d->nh = p->nh;
  d->nv = p->nv;
  d->n = fl_problem_nrows(p);
  d->global = p->kind == FL_PROBLEM_GLOBAL;
  // auto: Alart-Curnier, except on global problems with bilateral rows (its local form
  // cannot express them) or without contacts (nothing for it to solve), which keep
  // Fischer-Burmeister
  d->ncp = o->ncp == NCP_AUTO ? (d->global && (p->nh > 0 || p->nc == 0) ? NCP_FB : NCP_AC)
                              : o->ncp;
  d->ls = o->line_search == LS_AUTO ? (d->global && d->ncp != NCP_AC ? LS_NONE : LS_BACKTRACK)
                                     : o->line_search;
  d->acreg = o->ac_reg >= 0 ? o->ac_reg : (d->global ? 1e-11 : 0);
  d->acrestart = o->ac_restart >= 0 ? o->ac_restart : (d->global ? 10 : 0);
  d->acfb = o->ac_fallback == FB_AUTO ? (d->global ? FB_GS : FB_PROJECTION) : o->ac_fallback;
  d->acbest = o->ac_best == 0 ? d->global : o->ac_best == 2;
  d->acnm = o->ac_nonmono >= 0 ? o->ac_nonmono : (d->global ? NSN_AC_NONMONO : 0);
  double accomp = o->ac_compliance >= 0 ? o->ac_compliance
                                         : (d->global ? NSN_AC_COMPLIANCE : 0);
  d->acpolish = o->ac_polish >= 0 ? o->ac_polish : (d->global ? NSN_AC_POLISH : 0);
  if (!(accomp > 0)) d->acpolish = 0;
  d->accomp = accomp;
  int rho_spectral = o->ac_rho == RHO_SPECTRAL;
  if (d->ncp == NCP_AC && d->global) {
    // its local form, as prox: W = J A^-1 J^T + diag(R_n), q = J v* + b - vhat_n
    if (p->nh > 0)
      return fl_seterr(FL_ERR_UNSUPPORTED, "nsn: ncp=ac: global problem %s has %d bilateral "
                       "rows, which its local form (W, q, mu) cannot express (use ncp=fb or min)",
                       p->name, (int)p->nh);
    FL_TRY(fl_problem_local_problem(p, &d->dyn, &d->pl));
    d->B = fl_dynamics_JAinv(d->dyn);
    p = d->pl; // from here on the local problem
    d->global = 0;
    d->nv = 0;
  }

  // the Delassus matrix W (constant during a solve)
  if (d->global) {
    FL_TRY(fl_dynamics_create(p, &d->dyn));
    d->B = fl_dynamics_JAinv(d->dyn);
    if (!d->B) return fl_seterr(FL_ERR_NOMEM, "nsn: J A^-1 of %s could not be formed", p->name);
    FL_TRY(fl_dynamics_delassus(d->dyn, &d->Wown));
    d->W = d->Wown;
  } else {
    if (p->nh > 0 || !p->W || !p->q)
      return fl_seterr(FL_ERR_UNSUPPORTED, "nsn: local problem %s needs W and q and no "
                       "bilateral rows", p->name);
    d->W = p->W;
  }
  if (d->ncp == NCP_AC && accomp > 0) { // near-rigid: W_ii (1 + c), on an own copy
    fl_csr *Wc = d->pl ? d->pl->W : NULL;
    if (!Wc) {
      FL_TRY(fl_csr_copy(d->W, &d->Wown));
      Wc = d->Wown;
    }
    size_t nr = (size_t)(Wc->nrow > 0 ? Wc->nrow : 1);
    d->acdk = fl_malloc(nr * sizeof(fl_int));
    d->acwd = fl_malloc(2 * nr * sizeof(double));
    if (!d->acdk || !d->acwd) return fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (ac)");
    for (fl_int r = 0; r < Wc->nrow; r++) {
      d->acdk[r] = -1;
      d->acwd[r] = d->acwd[nr + (size_t)r] = 0;
      for (fl_int k = Wc->rowptr[r]; k < Wc->rowptr[r + 1]; k++)
        if (Wc->col[k] == r) {
          d->acdk[r] = k;
          d->acwd[nr + (size_t)r] = Wc->val[k];  // rigid
          d->acwd[r] = Wc->val[k] *= 1 + accomp; // regularized
        }
    }
    d->acWc = Wc;
    d->W = Wc;
  }
  if (d->W->nrow != d->n || d->W->ncol != d->n)
    return fl_seterr(FL_ERR_FORMAT, "nsn: %s: W is %dx%d, expected %dx%d", p->name,
                     (int)d->W->nrow, (int)d->W->ncol, (int)d->n, (int)d->n);
  if (d->ncp != NCP_AC) FL_TRY(build_pattern(d)); // ac has its own Jacobian pattern

  // flat arrays in one allocation
  size_t nc = (size_t)d->nc, nh = (size_t)d->nh, n = (size_t)d->n, nv = (size_t)d->nv;
  size_t nd = 8 * nc + nh + 12 * n + 7 * nv + 1;
  d->buf = fl_calloc(nd * sizeof(double) + n + 1, 1);
  if (!d->buf) return fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (%s)", p->name);
  double *w = d->buf;
  d->R = w, w += nc;
  d->vhat = w, w += nc;
  d->s = w, w += nc;
  d->rho_n = w, w += nc;
  d->rho_f = w, w += nc;
  d->rho_em = w, w += nc;
  d->wtt = w, w += nc;
  d->Wf = w, w += nc;
  d->rho_b = w, w += nh;
  d->wdiag = w, w += n;
  d->Cd = w, w += n;
  d->phis = w, w += n;
  d->z = w, w += n;
  d->u = w, w += n;
  d->Jvs = w, w += n;
  d->rhs = w, w += n;
  d->y = w, w += n;
  d->dg = w, w += n;
  d->tmp = w, w += n;
  d->g0 = w, w += n;
  d->gsave = w, w += n;
  d->vsave = w, w += nv;
  d->bgsave = w, w += nv;
  d->vit = w, w += nv;
  d->vtr = w, w += nv;
  d->bg = w, w += nv;
  d->bdg = w, w += nv;
  d->bgt = w, w += nv;
  d->fixed = (unsigned char *)(w + 1);

  // per-row constants: diagonal of W, normal law, r factors
  for (fl_int i = 0; i < d->n; i++) d->wdiag[i] = fl_csr_get(d->W, i, i);
  double dt = p->dt;
  for (fl_int i = 0; i < d->nc; i++) {
    fl_problem_normal_law(p, i, &d->R[i], &d->vhat[i]);
    double td = (d->global && p->tau_d) ? p->tau_d[i] : 0;
    d->s[i] = dt + td;
    double wnn = d->wdiag[3 * i] > 0 ? d->wdiag[3 * i] : 0;
    double wtt = 0.5 * (d->wdiag[3 * i + 1] + d->wdiag[3 * i + 2]);
    d->wtt[i] = wtt > DBL_MIN ? wtt : 1.0 / dt;
    d->rho_em[i] = d->s[i] * (wnn + d->R[i]);
    if (!(d->rho_em[i] > DBL_MIN)) d->rho_em[i] = d->s[i] / dt;
    switch (o->precond) {
      case PRE_IDENTITY:
        d->rho_n[i] = 1.0 / dt;
        d->rho_f[i] = 1.0 / dt;
        break;
      case PRE_TIMESTEP:
        d->rho_n[i] = dt;
        d->rho_f[i] = 1.0;
        break;
      default:
        d->rho_n[i] = d->rho_em[i];
        d->rho_f[i] = d->wtt[i];
        break;
    }
  }
  for (fl_int h = 0; h < d->nh; h++) {
    fl_int r = 3 * d->nc + h;
    double c = p->compliance ? p->compliance[h] : 0;
    d->rho_b[h] = d->wdiag[r] + c > DBL_MIN ? d->wdiag[r] + c : 1.0;
  }
  if (d->global) fl_csr_gemv(p->J, 1.0, p->vstar, 0.0, d->Jvs);

  if (d->ncp == NCP_AC) { // no inner solver
    int dense = o->ac_lu == LU_DENSE || (o->ac_lu == LU_AUTO && d->pl && d->n <= NSN_AC_DENSE_MAX);
    d->acklu = !dense && o->ac_lu == LU_KLU;
    return ac_setup(d, dense, rho_spectral);
  }

  // the inner solver on K's pattern
  fl_lin_opts lo;
  memset(&lo, 0, sizeof(lo));
  lo.type = o->lin;
  lo.max_iter = o->lin_max_iter;
  lo.rel_tol = o->lin_rel_tol;
  lo.abs_tol = o->lin_abs_tol;
  lo.omega = o->lin_omega;
  lo.reg = o->lin_reg;
  memcpy(lo.petsc_options, o->lin_petsc_options, sizeof(lo.petsc_options));
  lo.petsc_world = o->lin_petsc_comm;
  if (o->lin_pc != PC_DIAG) {
    FL_TRY(nsn_blocks(d, p, o->lin_pc == PC_PAIR));
    lo.pc = FL_LIN_PC_BLOCK;
    lo.nblock = d->nblock;
    lo.block_ptr = d->blk_ptr;
    lo.block_idx = d->blk_idx;
  }
  FL_TRY(fl_lin_create(&lo, d->K, &d->lin));
  d->built = 0;
  return FL_OK;
}


//---- evaluation of an iterate ----

static void nsn_eval_rows(nsn_data *d, const fl_problem *p, int ncp, const double *v,
                          const double *gamma, const double *bg);

/* u at (v, gamma); then every row's NCP value, derivative data for the Newton matrix (Cd,
 * phis, fixed, z), the friction fixed point W_f, and the recorded errors */
static void nsn_eval(nsn_data *d, const fl_problem *p, int ncp, const double *v,
                     const double *gamma, const double *bg) {
  if (d->global) {
    fl_csr_gemv(p->J, 1.0, v, 0.0, d->u);
    if (p->b)
      for (fl_int r = 0; r < d->n; r++) d->u[r] += p->b[r];
  } else {
    fl_csr_gemv(d->W, 1.0, gamma, 0.0, d->u);
    for (fl_int r = 0; r < d->n; r++) d->u[r] += p->q[r];
  }
  nsn_eval_rows(d, p, ncp, v, gamma, bg);
}

/* nsn_eval with u already in d->u */
static void nsn_eval_rows(nsn_data *d, const fl_problem *p, int ncp, const double *v,
                          const double *gamma, const double *bg) {
  fl_int nc = d->nc;

  double err_n = 0, err_f = 0, err_b = 0, err = 0, m2 = 0;
  int nact = 0, nstick = 0, nslip = 0;
  for (fl_int i = 0; i < nc; i++) {
    fl_int r = 3 * i;
    double gn = gamma[r], si = d->s[i];

    // normal row: phi_n = NCP(C_n, rho_n gamma_n)
    double C = si * (d->u[r] - d->vhat[i] + d->R[i] * gn);
    double a, b;
    double phi = fl__nsn_ncp(ncp, C, d->rho_n[i] * gn, &a, &b);
    if (a <= NSN_ALPHA_MIN) {
      double den = b * d->rho_n[i] + a * si * d->R[i];
      d->fixed[r] = 1;
      d->z[r] = den > 0 ? -phi / den : -gn;
      d->Cd[r] = 0;
      d->phis[r] = 0;
    } else {
      d->fixed[r] = 0;
      d->z[r] = 0;
      d->Cd[r] = d->R[i] + b * d->rho_n[i] / (a * si);
      d->phis[r] = phi / (a * si);
    }
    m2 += (phi / si) * (phi / si);
    double en = fabs(fmin(C, d->rho_em[i] * gn));
    if (en > err_n) err_n = en;
    if (en / si > err) err = en / si;

    // friction rows: active when mu gamma_n > 0
    double ut1 = d->u[r + 1], ut2 = d->u[r + 2], gt1 = gamma[r + 1], gt2 = gamma[r + 2];
    double ut = hypot(ut1, ut2), gt = hypot(gt1, gt2), mu = p->mu[i];
    if (mu * gn > 0) {
      double Wf = fl__nsn_friction_compliance(ncp, ut, gt, gn, mu, d->rho_f[i]);
      d->Wf[i] = Wf;
      for (int k = 1; k <= 2; k++) {
        d->fixed[r + k] = 0;
        d->z[r + k] = 0;
        d->Cd[r + k] = Wf;
        d->phis[r + k] = d->u[r + k] + Wf * gamma[r + k];
        m2 += d->phis[r + k] * d->phis[r + k];
      }
      if (Wf > 0 && gt >= (1 - 1e-3) * mu * gn)
        nslip++;
      else
        nstick++;
    } else {
      d->Wf[i] = 0;
      for (int k = 1; k <= 2; k++) {
        d->fixed[r + k] = 1;
        d->z[r + k] = -gamma[r + k];
        d->Cd[r + k] = 0;
        d->phis[r + k] = 0;
        double e = d->wtt[i] * gamma[r + k];
        m2 += e * e;
      }
    }
    if (gn > 0) nact++;

    // r-independent friction error: natural map of the disk given gamma_n, scaled by W_tt
    double rf = d->wtt[i], cap = mu * (gn > 0 ? gn : 0) * rf;
    double x1 = rf * gt1 - ut1, x2 = rf * gt2 - ut2, xn = hypot(x1, x2);
    if (xn > cap) {
      double sc = xn > 0 ? cap / xn : 0;
      x1 *= sc;
      x2 *= sc;
    }
    double ef = hypot(rf * gt1 - x1, rf * gt2 - x2);
    if (ef > err_f) err_f = ef;
    if (ef > err) err = ef;
  }

  // bilateral rows: equality, or held at a bound (min-map on the box)
  for (fl_int h = 0; h < d->nh; h++) {
    fl_int r = 3 * nc + h;
    double c = p->compliance ? p->compliance[h] : 0;
    double res = d->u[r] + (p->g0 ? p->g0[h] : 0) / p->dt + c * gamma[r];
    double lo = p->lo ? p->lo[h] : -INFINITY, hi = p->hi ? p->hi[h] : INFINITY;
    double t = gamma[r] - res / d->rho_b[h], eff;
    if (t < lo) {
      d->fixed[r] = 1;
      d->z[r] = lo - gamma[r];
      eff = (gamma[r] - lo) * d->rho_b[h];
    } else if (t > hi) {
      d->fixed[r] = 1;
      d->z[r] = hi - gamma[r];
      eff = (gamma[r] - hi) * d->rho_b[h];
    } else {
      d->fixed[r] = 0;
      d->z[r] = 0;
      d->Cd[r] = c;
      d->phis[r] = res;
      eff = res;
    }
    m2 += eff * eff;
    if (fabs(eff) > err_b) err_b = fabs(eff);
    if (fabs(eff) > err) err = fabs(eff);
  }

  // momentum: the Newton iterate v against v* + A^-1 J^T gamma (= A^-1 g, m/s)
  if (d->global) {
    double em = 0;
    for (fl_int j = 0; j < d->nv; j++) {
      double e = v[j] - p->vstar[j] - bg[j];
      m2 += e * e;
      if (fabs(e) > em) em = fabs(e);
    }
    d->err_m = em;
    if (em > err) err = em;
  }

  d->err_n = err_n;
  d->err_f = err_f;
  d->err_b = err_b;
  d->error = err;
  d->merit = sqrt(m2);
  d->nactive = nact;
  d->nstick = nstick;
  d->nslip = nslip;
}


//---- Alart-Curnier exact Newton (ncp=ac, local problems) ----
//
// Per contact, with u = W gamma + q, x_n = gamma_n - rho_n u_n, y = gamma_t - rho_t u_t and the
// disk radius R = mu max(0, x_n) (Alart and Curnier 1991; Siconos's NSN-AC):
//   F_n = gamma_n - max(0, x_n),   F_t = gamma_t - P_disk(R)(y).
// F = 0 is exactly Coulomb's law. Its generalized Jacobian is G = A + B W with 3x3 blocks
// A = dF/dgamma, B = dF/du per contact; G is not symmetric, so it is factorized by UMFPACK.

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}


/* the largest eigenvalue of the symmetric 3x3 block of W at rows and columns r..r+2
 * (trigonometric closed form of the characteristic cubic) */
static double block_lambda_max(const fl_csr *W, fl_int r) {
  double a[3][3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) a[i][j] = fl_csr_get(W, r + i, r + j);
  for (int i = 0; i < 3; i++) // symmetrize (rounding)
    for (int j = i + 1; j < 3; j++) a[i][j] = a[j][i] = 0.5 * (a[i][j] + a[j][i]);
  double p1 = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
  double q = (a[0][0] + a[1][1] + a[2][2]) / 3;
  if (p1 <= 1e-300) return fmax(a[0][0], fmax(a[1][1], a[2][2]));
  double p2 = (a[0][0] - q) * (a[0][0] - q) + (a[1][1] - q) * (a[1][1] - q) +
              (a[2][2] - q) * (a[2][2] - q) + 2 * p1;
  double pp = sqrt(p2 / 6), b[3][3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) b[i][j] = (a[i][j] - (i == j ? q : 0)) / pp;
  double detb = b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1]) -
                b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0]) +
                b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0]);
  double rr = fmax(-1.0, fmin(1.0, 0.5 * detb));
  return q + 2 * pp * cos(acos(rr) / 3);
}


/* the arrays, and G's dense storage or its sparse pattern (fixed in a solve: every product
 * entry is kept, zero or not) */
static int ac_setup(nsn_data *d, int dense, int spectral) {
  const fl_csr *W = d->W;
  fl_int n = d->n, nc = d->nc;
  size_t nn = (size_t)(n > 0 ? n : 1), nnc = (size_t)(nc > 0 ? nc : 1);
  d->acF = fl_malloc((5 * nn + 20 * nnc) * sizeof(double));
  if (!d->acF) return fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (ac)");
  d->acFt = d->acF + nn;
  d->acut = d->acFt + nn;
  d->acgt = d->acut + nn;
  d->acdx = d->acgt + nn;
  d->acblk = d->acdx + nn;
  d->acrn = d->acblk + 18 * nnc;
  d->acrt = d->acrn + nnc;
  for (fl_int i = 0; i < nc; i++) {
    double wnn = d->wdiag[3 * i];
    d->acrn[i] = wnn > DBL_MIN ? 1.0 / wnn : 1.0;
    d->acrt[i] = 1.0 / d->wtt[i];
    if (spectral) { // one rho = 1/lambda_max of the contact's block for all three rows
      double lm = block_lambda_max(W, 3 * i);
      if (lm > DBL_MIN) d->acrn[i] = d->acrt[i] = 1.0 / lm;
    }
  }
  if (d->acbest || d->acpolish > 0) {
    d->acbestg = fl_malloc(nn * sizeof(double));
    if (!d->acbestg) return fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (ac)");
  }
  if (dense) {
    d->acG = fl_calloc(nn * nn, sizeof(double));
    d->acpiv = fl_malloc(2 * nn * sizeof(int));
    if (!d->acG || !d->acpiv) return fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (ac, dense G)");
    for (size_t i = 0; i < nn; i++) d->acpiv[nn + i] = -1; // fl_lu_factor's last[]: G is zero
    return FL_OK;
  }

  int *mark = fl_malloc(nn * sizeof(int)), *list = fl_malloc(nn * sizeof(int));
  fl_int *loc = fl_malloc(nn * sizeof(fl_int));
  d->jptr = fl_malloc((nn + 1) * sizeof(int));
  d->wpos = fl_malloc((size_t)(W->nnz > 0 ? W->nnz : 1) * sizeof(fl_int));
  d->dpos = fl_malloc(3 * nnc * sizeof(fl_int));
  int rc = FL_OK;
  if (!mark || !list || !loc || !d->jptr || !d->wpos || !d->dpos) {
    rc = fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (ac)");
    goto out;
  }
  for (fl_int c = 0; c < n; c++) mark[c] = -1;

  // first pass: the size of each contact's column list
  size_t nnz = 0;
  for (fl_int i = 0; i < nc; i++) {
    int len = 0;
    for (fl_int r = 3 * i; r < 3 * i + 3; r++) {
      if (mark[r] != i) mark[r] = i, len++;
      for (fl_int k = W->rowptr[r]; k < W->rowptr[r + 1]; k++)
        if (mark[W->col[k]] != i) mark[W->col[k]] = i, len++;
    }
    nnz += 3 * (size_t)len;
  }
  d->jcol = fl_malloc((nnz > 0 ? nnz : 1) * sizeof(int));
  d->jval = fl_calloc(nnz > 0 ? nnz : 1, sizeof(double));
  if (!d->jcol || !d->jval) {
    rc = fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (ac Jacobian)");
    goto out;
  }
  for (fl_int c = 0; c < n; c++) mark[c] = -1;
  d->jptr[0] = 0;
  for (fl_int i = 0; i < nc; i++) {
    int len = 0;
    for (fl_int r = 3 * i; r < 3 * i + 3; r++) {
      if (mark[r] != i) mark[r] = i, list[len++] = r;
      for (fl_int k = W->rowptr[r]; k < W->rowptr[r + 1]; k++)
        if (mark[W->col[k]] != i) mark[W->col[k]] = i, list[len++] = W->col[k];
    }
    qsort(list, (size_t)len, sizeof(int), cmp_int);
    for (int q = 0; q < len; q++) loc[list[q]] = q;
    for (int a = 0; a < 3; a++) {
      fl_int r = 3 * i + a;
      d->jptr[r + 1] = d->jptr[r] + len;
      memcpy(d->jcol + d->jptr[r], list, (size_t)len * sizeof(int));
      d->dpos[r] = loc[r];
      for (fl_int k = W->rowptr[r]; k < W->rowptr[r + 1]; k++) d->wpos[k] = loc[W->col[k]];
    }
  }
out:
  fl_free(mark);
  fl_free(list);
  fl_free(loc);
  return rc;
}


/* F at (gamma, u) into F; the blocks A, B (row-major 3x3 each) into blk when non-NULL;
 * returns 0.5 ||F||^2 */
static double ac_eval(const nsn_data *d, const fl_problem *p, const double *gamma,
                      const double *u, double *F, double *blk) {
  double th = 0;
  for (fl_int i = 0; i < d->nc; i++) {
    const double *g = gamma + 3 * i, *ui = u + 3 * i;
    double rn = d->acrn[i], rt = d->acrt[i], mu = p->mu[i];
    double *f = F + 3 * i, A[9] = {0}, B[9] = {0};
    double xn = g[0] - rn * ui[0], pn = xn > 0 ? xn : 0;
    f[0] = g[0] - pn;
    if (xn > 0)
      B[0] = rn;
    else
      A[0] = 1;
    double y1 = g[1] - rt * ui[1], y2 = g[2] - rt * ui[2], R = mu * pn, ny = hypot(y1, y2);
    if (!(R > 0)) { // no cone: gamma_t -> 0
      f[1] = g[1];
      f[2] = g[2];
      A[4] = A[8] = 1;
    } else if (ny <= R) { // stick: u_t -> 0
      f[1] = rt * ui[1];
      f[2] = rt * ui[2];
      B[4] = B[8] = rt;
    } else { // slide: gamma_t on the cone's edge
      double e1 = y1 / ny, e2 = y2 / ny, c = R / ny;
      f[1] = g[1] - R * e1;
      f[2] = g[2] - R * e2;
      double G11 = c * (1 - e1 * e1), G12 = -c * e1 * e2, G22 = c * (1 - e2 * e2);
      A[4] = 1 - G11, A[5] = -G12, A[7] = -G12, A[8] = 1 - G22;
      B[4] = rt * G11, B[5] = rt * G12, B[7] = rt * G12, B[8] = rt * G22;
      // through R = mu x_n (x_n > 0 here)
      A[3] = -mu * e1, A[6] = -mu * e2;
      B[3] = mu * e1 * rn, B[6] = mu * e2 * rn;
    }
    th += f[0] * f[0] + f[1] * f[1] + f[2] * f[2];
    if (blk) {
      memcpy(blk + 18 * i, A, sizeof A);
      memcpy(blk + 18 * i + 9, B, sizeof B);
    }
  }
  return 0.5 * th;
}


/* G = A + B (W + acmu diag W) into jval from the blocks */
static void ac_build(nsn_data *d) {
  const fl_csr *W = d->W;
  double mu = d->acmu;
  for (fl_int i = 0; i < d->nc; i++) {
    const double *A = d->acblk + 18 * i, *B = A + 9;
    for (int a = 0; a < 3; a++) {
      fl_int r = 3 * i + a;
      double *row = d->jval + d->jptr[r];
      for (int q = 0; q < d->jptr[r + 1] - d->jptr[r]; q++) row[q] = 0;
      for (int b = 0; b < 3; b++) {
        row[d->dpos[3 * i + b]] += A[3 * a + b];
        double bb = B[3 * a + b];
        if (bb == 0) continue;
        fl_int w = 3 * i + b;
        for (fl_int k = W->rowptr[w]; k < W->rowptr[w + 1]; k++) row[d->wpos[k]] += bb * W->val[k];
        if (mu > 0) row[d->dpos[w]] += bb * mu * d->wdiag[w];
      }
    }
  }
}


/* G = A + B (W + acmu diag W) into the dense row-major acG */
static void ac_build_dense(nsn_data *d) {
  const fl_csr *W = d->W;
  fl_int n = d->n;
  double mu = d->acmu;
  // zero what the last factorization wrote: row i of its factors ends at column last[i]
  const int *last = d->acpiv + n;
  for (fl_int i = 0; i < n; i++)
    if (last[i] >= 0)
      memset(d->acG + (size_t)i * (size_t)n, 0, (size_t)(last[i] + 1) * sizeof(double));
  for (fl_int i = 0; i < d->nc; i++) {
    const double *A = d->acblk + 18 * i, *B = A + 9;
    for (int a = 0; a < 3; a++) {
      double *row = d->acG + (size_t)(3 * i + a) * (size_t)n;
      for (int b = 0; b < 3; b++) {
        fl_int w = 3 * i + b;
        row[w] += A[3 * a + b];
        double bb = B[3 * a + b];
        if (bb == 0) continue;
        for (fl_int k = W->rowptr[w]; k < W->rowptr[w + 1]; k++) row[W->col[k]] += bb * W->val[k];
        if (mu > 0) row[w] += bb * mu * d->wdiag[w];
      }
    }
  }
}


/* Newton direction G dx = -F into acdx; 0 on success, -1 when the factorization failed or
 * the direction is not finite (the caller falls back) */
static int ac_direction(nsn_data *d) {
  fl_int n = d->n;
  if (d->acG) {
    ac_build_dense(d);
    if (fl_lu_factor(d->acG, n, d->acpiv, d->acpiv + n) != FL_OK) return -1;
    for (fl_int r = 0; r < n; r++) d->acdx[r] = -d->acF[r];
    fl_lu_solve(d->acG, n, d->acpiv, d->acdx);
    for (fl_int r = 0; r < n; r++)
      if (!isfinite(d->acdx[r])) return -1;
    return 0;
  }
  ac_build(d);
  if (d->acklu) {
    for (fl_int r = 0; r < n; r++) d->acFt[r] = -d->acF[r];
    int rc = fl_splu_solve_rows(&d->klu, n, d->jptr, d->jcol, d->jval, d->acFt, d->acdx);
    return rc ? -1 : 0;
  }
  // jptr/jcol/jval read as compressed columns is G^T, so solve with the transpose
  if (!d->sym && umfpack_di_symbolic(n, n, d->jptr, d->jcol, d->jval, &d->sym, NULL, NULL) !=
                     UMFPACK_OK) {
    if (d->sym) umfpack_di_free_symbolic(&d->sym);
    return -1;
  }
  if (d->num) umfpack_di_free_numeric(&d->num);
  int st = umfpack_di_numeric(d->jptr, d->jcol, d->jval, d->sym, &d->num, NULL, NULL);
  if (st != UMFPACK_OK) return -1; // singular G included (status > 0)
  for (fl_int r = 0; r < n; r++) d->acFt[r] = -d->acF[r];
  st = umfpack_di_solve(UMFPACK_At, d->jptr, d->jcol, d->jval, d->acdx, d->acFt, d->num, NULL,
                        NULL);
  if (st != UMFPACK_OK) return -1;
  for (fl_int r = 0; r < n; r++)
    if (!isfinite(d->acdx[r])) return -1;
  return 0;
}


static void fill_stat(const nsn_data *d, fl_iter_stat *st);

/* the trial d->acgt: u = W x + q (+ tk diag(W) x, the Tikhonov term) into d->acut, F into
 * d->acFt, the blocks; returns 0.5 ||F||^2 */
static double ac_trial(nsn_data *d, const fl_problem *p, double tk) {
  fl_int n = d->n;
  fl_csr_gemv(d->W, 1.0, d->acgt, 0.0, d->acut);
  if (tk > 0)
    for (fl_int r = 0; r < n; r++) d->acut[r] += p->q[r] + tk * d->wdiag[r] * d->acgt[r];
  else
    for (fl_int r = 0; r < n; r++) d->acut[r] += p->q[r];
  return ac_eval(d, p, d->acgt, d->acut, d->acFt, d->acblk);
}

/* the fallback step into d->acgt, from gamma: one projected Gauss-Seidel sweep over the
 * contacts, each contact's block set to its Alart-Curnier projection (max(0, x_n),
 * P_disk(mu x_n)(y)) with u from the contacts already swept (and the Tikhonov term tk);
 * with rho = 1/lambda_max of the block each update is a projected gradient step on the
 * contact's block, which does not grow the impulses the way the simultaneous (Jacobi)
 * projection gamma - F can on strongly coupled contacts (arches) */
static void ac_gs_sweep(nsn_data *d, const fl_problem *p, const double *gamma, double tk) {
  const fl_csr *W = d->W;
  double *x = d->acgt;
  memcpy(x, gamma, (size_t)d->n * sizeof(double));
  for (fl_int i = 0; i < d->nc; i++) {
    double u[3];
    for (int a = 0; a < 3; a++) {
      fl_int r = 3 * i + a;
      double t = p->q[r] + tk * d->wdiag[r] * x[r];
      for (fl_int k = W->rowptr[r]; k < W->rowptr[r + 1]; k++) t += W->val[k] * x[W->col[k]];
      u[a] = t;
    }
    double *g = x + 3 * i, rn = d->acrn[i], rt = d->acrt[i];
    double xn = g[0] - rn * u[0], pn = xn > 0 ? xn : 0;
    double y1 = g[1] - rt * u[1], y2 = g[2] - rt * u[2], R = p->mu[i] * pn, ny = hypot(y1, y2);
    if (ny > R) {
      double c = ny > 0 ? R / ny : 0;
      y1 *= c;
      y2 *= c;
    }
    if (!isfinite(pn) || !isfinite(y1) || !isfinite(y2)) continue; // leave the block
    g[0] = pn;
    g[1] = y1;
    g[2] = y2;
  }
}

/* ac.compliance c > 0: W's diagonal regularized ((1 + c) W_ii, level 0), rigid (W_ii, level
 * 1) or between ((1 + c NSN_AC_POLISH2) W_ii, level 2: the polish's second try) */
static void ac_set_rigid(nsn_data *d, int level) {
  size_t nr = (size_t)(d->n > 0 ? d->n : 1);
  for (fl_int r = 0; r < d->n; r++) {
    if (d->acdk[r] < 0) continue;
    double w0 = d->acwd[nr + (size_t)r];
    d->acWc->val[d->acdk[r]] =
        level == 0 ? d->acwd[r] : level == 1 ? w0 : w0 * (1 + d->accomp * NSN_AC_POLISH2);
  }
}

/* ncp=ac on a global problem pg (solved in its local form): v = v* + A^-1 J^T gamma */
static void ac_hand_out_v(const nsn_data *d, const fl_problem *pg, const double *gamma,
                          double *v) {
  if (!d->pl || !v) return;
  memcpy(v, pg->vstar, (size_t)pg->nv * sizeof(double));
  fl_csr_gemtv(d->B, 1.0, gamma, 1.0, v);
}

/* the whole solve with ncp=ac: Armijo on 0.5 ||F||^2 along the Newton direction, or the
 * projection step gamma - F (= P(gamma - rho u)) when the direction fails or the search does.
 * The Jacobian is G = A + B (W + acreg diag W): W of redundant contacts is singular, and so is
 * the exact G wherever they are active and stick (acreg = 0 on local problems by default).
 *
 * Restart (acrestart > 0; global problems by default): after acrestart iterations without
 * convergence the solve starts again once from gamma = 0 on the Tikhonov-regularized problem
 * W + tk diag W (u = W gamma + q + tk diag(W) gamma), whose solution is unique: tk starts at
 * NSN_AC_TK0, is multiplied by NSN_AC_TK_SHRINK after each full Newton step, never exceeds
 * rel = ||F|| / (||F|| + ||gamma||) of the unregularized F, and is 0 once below 1e-15: a
 * continuation to the original problem. It catches the Newton iterations that stall where
 * redundant contacts carry opposed impulses (a warm start after the contact set changed, the
 * Jacobian's kinks between stick and slip). The error recorded is always that of the
 * original problem.
 *
 * A global problem pg is solved in its local form d->pl from the incoming gamma (zero unless
 * warm_start); v is handed out whenever a record may read it and at the end. */
static int nsn_solve_ac(fl_solver *s, const fl_problem *pg, double *v, double *gamma) {
  nsn_data *d = s->data;
  const nsn_opts *o = s->opts;
  const fl_problem *p = d->pl ? d->pl : pg;
  fl_int n = d->n;
  s->cur_v = d->pl ? v : NULL;
  s->cur_gamma = gamma;
  if (d->num) umfpack_di_free_numeric(&d->num);
  if (d->sym) umfpack_di_free_symbolic(&d->sym);
  fl_splu_free(&d->klu);
  d->acmu = d->acreg;

  // a guess that already solves the rigid problem (warm start from an answer) is taken as is
  int rigid0 = 0;
  if (d->acpolish > 0 && s->common.warm_start) {
    ac_set_rigid(d, 1);
    nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
    rigid0 = d->error <= s->common.abs_tol;
    if (!rigid0) ac_set_rigid(d, 0);
  }
  if (!rigid0) nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  fill_stat(d, &st);
  double th = ac_eval(d, p, gamma, d->u, d->acF, d->acblk);
  st.objective = sqrt(2 * th);
  if (d->pl && fl_solver_wants_iterate(s, 0)) ac_hand_out_v(d, pg, gamma, v);
  int stop0 = fl_solver_record(s, &st) != 0;
  if (rigid0) { // back to the regularized problem (never_stop goes on with it)
    ac_set_rigid(d, 0);
    if (!stop0) {
      nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
      th = ac_eval(d, p, gamma, d->u, d->acF, d->acblk);
    }
  }
  if (stop0) {
    ac_hand_out_v(d, pg, gamma, v);
    return FL_OK;
  }

  int tikhonov = 0, nmk = 0; /* nmk: merits in the non-monotone history */
  double tk = 0, tlast = 0; /* the Tikhonov weight (restarted solve); the last step length */
  double best_err = d->error; /* ac.best: the least own residual so far, its iterate */
  if (d->acbest) memcpy(d->acbestg, gamma, (size_t)n * sizeof(double));
  /* polish: 0 = solving the regularized problem (or the only one), > 0 = iterations left on
   * the rigid problem after the regularized one converged; d->acbestg keeps its solution and
   * reg_reason its reason */
  int polish = 0, reg_reason = 0, plevel = 0;
  for (int k = 1;; k++) {
    int restart = !polish && d->acrestart > 0 && k == d->acrestart;
    if (restart) { // not converged: restart from zero on the regularized problem
      tikhonov = 1;
      tk = NSN_AC_TK0;
      memset(gamma, 0, (size_t)n * sizeof(double));
      nsn_eval(d, p, NCP_FB, NULL, gamma, NULL); // d->u = q
    }
    if (tikhonov) { // the weight, capped by the unregularized residual at gamma (u = d->u)
      ac_eval(d, p, gamma, d->u, d->acFt, NULL);
      double f2 = 0, g2 = 0;
      for (fl_int r = 0; r < n; r++) {
        f2 += d->acFt[r] * d->acFt[r];
        g2 += gamma[r] * gamma[r];
      }
      double rel = sqrt(f2) / (sqrt(f2) + sqrt(g2) + DBL_MIN);
      if (!restart && tlast == 1) tk *= NSN_AC_TK_SHRINK; // a full Newton step: tighten
      tk = fmin(tk, rel);
      if (!(tk >= 1e-15)) tk = 0;
      d->acmu = fmax(d->acreg, tk);
      memcpy(d->acgt, gamma, (size_t)n * sizeof(double));
      th = ac_trial(d, p, tk);
      memcpy(d->acF, d->acFt, (size_t)n * sizeof(double));
    }
    int newton = ac_direction(d) == 0;
    double t = 1, tht = NAN;
    int neval = 0, ok = 0;
    if (newton && d->ls == LS_NONE) { // fixed step (alpha), kept when finite
      t = o->alpha;
      for (fl_int r = 0; r < n; r++) d->acgt[r] = gamma[r] + t * d->acdx[r];
      tht = ac_trial(d, p, tk);
      neval = 1;
      ok = isfinite(tht);
    } else if (newton) { // Armijo: the Newton direction's slope is -||F||^2 = -2 th
      // non-monotone (ac.nonmono > 0): the reference is the largest merit of the last
      // iterations, so that a full step through a kink of F may raise the merit for a while
      double ref = th;
      for (int j = 0; j < d->acnm && j < nmk; j++) ref = fmax(ref, d->acthist[j]);
      for (int tr = 0; tr < 30 && !ok; tr++, t *= 0.5) {
        for (fl_int r = 0; r < n; r++) d->acgt[r] = gamma[r] + t * d->acdx[r];
        tht = ac_trial(d, p, tk);
        neval++;
        if (isfinite(tht) && tht <= ref - 2e-4 * t * th) ok = 1;
      }
      if (ok) t *= 2; // undo the last halving
    }
    if (!ok) { // guarded fallback: the projection (fixed-point) step, kept when finite
      if (d->acfb == FB_GS)
        ac_gs_sweep(d, p, gamma, tk);
      else
        for (fl_int r = 0; r < n; r++) d->acgt[r] = gamma[r] - d->acF[r];
      tht = ac_trial(d, p, tk);
      neval++;
      t = 0;
      ok = isfinite(tht);
      for (fl_int r = 0; ok && r < n; r++) ok = isfinite(d->acgt[r]);
    }
    tlast = t;
    if (d->acnm > 0) { // the merit history of the non-monotone search (newest first)
      memmove(d->acthist + 1, d->acthist, (size_t)(d->acnm - 1) * sizeof(double));
      d->acthist[0] = th;
      nmk++;
    }
    double dmax = 0;
    if (ok) {
      for (fl_int r = 0; r < n; r++) {
        double e = fabs(d->acgt[r] - gamma[r]);
        if (e > dmax) dmax = e;
      }
      memcpy(gamma, d->acgt, (size_t)n * sizeof(double));
      memcpy(d->acF, d->acFt, (size_t)n * sizeof(double));
      th = tht;
    } else { // nothing finite to take: keep the iterate and its blocks
      memcpy(d->acgt, gamma, (size_t)n * sizeof(double));
      th = ac_trial(d, p, tk);
      memcpy(d->acF, d->acFt, (size_t)n * sizeof(double));
    }
    if (tk > 0) { // d->acut holds the regularized u; the record is of the original problem
      nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
    } else { // d->acut = W gamma + q, computed as nsn_eval would
      memcpy(d->u, d->acut, (size_t)n * sizeof(double));
      nsn_eval_rows(d, p, NCP_FB, NULL, gamma, NULL);
    }
    fl_iter_stat_init(&st, k);
    fill_stat(d, &st);
    st.objective = sqrt(2 * th);
    st.step = t; // 0 marks the fallback step
    st.step_norm = dmax;
    st.inner_iters = newton;
    st.neval = neval;
    if (d->pl && fl_solver_wants_iterate(s, k)) ac_hand_out_v(d, pg, gamma, v);
    if (!polish && d->acbest && d->error < best_err) {
      best_err = d->error;
      memcpy(d->acbestg, gamma, (size_t)n * sizeof(double));
    }
    int stop = fl_solver_record(s, &st) != 0;
    if (!ok && !stop) {
      s->reason = FL_DIVERGED_LINE_SEARCH;
      stop = 1;
    }
    if (polish) { // rigid iterations: done when converged, else back to the regularized answer
      polish--;
      if (stop && s->reason > 0) {
        ac_set_rigid(d, 0);
        break;
      }
      if ((stop || polish == 0 || !ok) && plevel == 1) {
        // the rigid problem (redundant contacts: its impulses are not unique) did not
        // converge: a second try with 1/100 of the compliance, from the same start
        plevel = 2;
        ac_set_rigid(d, 2);
        memcpy(gamma, d->acbestg, (size_t)n * sizeof(double));
        polish = d->acpolish;
        nmk = 0;
        nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
        th = ac_eval(d, p, gamma, d->u, d->acF, d->acblk);
        s->reason = FL_ITERATING;
        continue;
      }
      if (stop || polish == 0 || !ok) {
        ac_set_rigid(d, 0);
        memcpy(gamma, d->acbestg, (size_t)n * sizeof(double));
        nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
        fl_iter_stat_init(&st, s->iters + 1);
        fill_stat(d, &st);
        st.objective = sqrt(2 * ac_eval(d, p, gamma, d->u, d->acFt, NULL));
        st.step = 0;
        if (d->pl) ac_hand_out_v(d, pg, gamma, v);
        if (fl_solver_record(s, &st) == FL_REASON_ABORT) return s->abort_code;
        s->reason = reg_reason;
        break;
      }
      continue;
    }
    if (!stop) continue;
    if (s->reason > 0 && d->acpolish > 0 && d->acdk) {
      // the regularized problem converged: polish on the rigid one from its solution
      reg_reason = s->reason;
      memcpy(d->acbestg, gamma, (size_t)n * sizeof(double));
      ac_set_rigid(d, 1);
      plevel = 1;
      polish = d->acpolish;
      tikhonov = 0;
      tk = 0;
      d->acmu = d->acreg;
      nmk = 0;
      nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
      th = ac_eval(d, p, gamma, d->u, d->acF, d->acblk);
      if (d->error <= s->common.abs_tol) { // already a rigid solution
        ac_set_rigid(d, 0);
        break;
      }
      s->reason = FL_ITERATING;
      continue;
    }
    break;
  }
  // not converged: hand out the iterate of least own residual, recorded as one more
  // iteration so that the history ends with (and the final metrics are of) what is handed
  // out; the reason stays negative
  int reason = s->reason;
  if (d->acbest && reason < 0 && reason != FL_REASON_ABORT) {
    int changed = best_err < d->error;
    if (changed) {
      memcpy(gamma, d->acbestg, (size_t)n * sizeof(double));
      nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
    }
    // no kinetic energy from an unconverged answer: with w = A^-1 J^T gamma, handing out
    // v = v* + t w changes the kinetic energy by t gamma^T J v* + t^2/2 gamma^T J w, and a
    // Coulomb answer only adds the work of prescribed bodies, -t gamma^T b. So gamma is scaled
    // to the largest t in [0, 1] with t gamma^T u* + t^2/2 gamma^T W gamma <= 0, u* = J v* + b
    // the free relative velocity: a cone is a cone, so t gamma stays admissible. (The position
    // correction of deep overlaps is what a failed step would otherwise turn into energy.)
    if (d->pl && v) {
      double *Jv = d->acut, *Jvs = d->acFt;
      ac_hand_out_v(d, pg, gamma, v);
      fl_csr_gemv(pg->J, 1.0, v, 0.0, Jv);
      fl_csr_gemv(pg->J, 1.0, pg->vstar, 0.0, Jvs);
      double gu = 0, gwg = 0;
      for (fl_int r = 0; r < n; r++) {
        gu += gamma[r] * (Jvs[r] + (pg->b ? pg->b[r] : 0));
        gwg += gamma[r] * (Jv[r] - Jvs[r]);
      }
      if (gu + 0.5 * gwg > 1e-12 * fabs(gwg) || !isfinite(gu + gwg)) {
        double t = gu < 0 && gwg > 0 && isfinite(gu + gwg) ? fmin(1.0, -2 * gu / gwg) : 0;
        for (fl_int r = 0; r < n; r++) gamma[r] *= t;
        nsn_eval(d, p, NCP_FB, NULL, gamma, NULL);
        changed = 1;
      }
    }
    if (changed) {
      fl_iter_stat_init(&st, s->iters + 1);
      fill_stat(d, &st);
      st.objective = sqrt(2 * ac_eval(d, p, gamma, d->u, d->acFt, NULL));
      st.step = 0;
      if (d->pl) ac_hand_out_v(d, pg, gamma, v);
      if (fl_solver_record(s, &st) == FL_REASON_ABORT) return s->abort_code;
      s->reason = reason;
    }
  }
  ac_hand_out_v(d, pg, gamma, v);
  return FL_OK;
}


//---- Newton system ----

/* K = P W P + diag, rhs = J A^-1 g - phi~ - W z (free rows), 0 (fixed rows) */
static void nsn_build(nsn_data *d, const fl_problem *p, const double *gamma) {
  const fl_csr *W = d->W;
  fl_csr *K = d->K;
  fl_int n = d->n;

  // matrix values with the known rows and columns taken out
  for (fl_int i = 0; i < n; i++) {
    for (fl_int k = K->rowptr[i]; k < K->rowptr[i + 1]; k++) K->val[k] = 0;
    if (d->fixed[i]) {
      K->val[d->kdiag[i]] = d->wdiag[i] > 0 ? d->wdiag[i] : 1;
      continue;
    }
    for (fl_int k = W->rowptr[i]; k < W->rowptr[i + 1]; k++)
      if (!d->fixed[W->col[k]]) K->val[d->wmap[k]] = W->val[k];
    K->val[d->kdiag[i]] += d->Cd[i];
  }

  // right-hand side: J A^-1 g = (u - b) - J v* - W gamma (global), 0 (local)
  fl_csr_gemv(W, 1.0, d->z, 0.0, d->tmp);
  if (d->global) {
    fl_csr_gemv(W, 1.0, gamma, 0.0, d->g0);
    for (fl_int i = 0; i < n; i++)
      d->g0[i] = d->u[i] - (p->b ? p->b[i] : 0) - d->Jvs[i] - d->g0[i];
  } else {
    for (fl_int i = 0; i < n; i++) d->g0[i] = 0;
  }
  for (fl_int i = 0; i < n; i++)
    d->rhs[i] = d->fixed[i] ? 0 : d->g0[i] - d->phis[i] - d->tmp[i];
  d->built = 1;
}


/* the trial iterate gamma + a dg, v from the update rule, into (gt, vt); vout gets the
 * handed-out velocity */
static void nsn_step(nsn_data *d, const fl_problem *p, double a, const double *gamma,
                     double *gt, double *vt, double *bgt) {
  for (fl_int i = 0; i < d->n; i++) gt[i] = gamma[i] + a * d->dg[i];
  if (!d->global) return;
  // v_it <- (1 - a) v_it + a (v* + A^-1 J^T (gamma + dg)); bg = A^-1 J^T gamma
  for (fl_int j = 0; j < d->nv; j++) {
    vt[j] = (1 - a) * d->vit[j] + a * (p->vstar[j] + d->bg[j] + d->bdg[j]);
    bgt[j] = d->bg[j] + a * d->bdg[j];
  }
}


static void fill_stat(const nsn_data *d, fl_iter_stat *st) {
  st->error = d->error;
  st->objective = d->merit;
  st->err_normal = d->err_n;
  st->err_friction = d->err_f;
  st->nactive = d->nactive;
  st->nstick = d->nstick;
  st->nslip = d->nslip;
}


static void hand_out_v(nsn_data *d, const fl_problem *p, int project, double *v) {
  if (!d->global || !v) return;
  for (fl_int j = 0; j < d->nv; j++) v[j] = project ? p->vstar[j] + d->bg[j] : d->vit[j];
}


/* fallback direction into dg: the projection (fixed-point) step P(gamma - u / W_ii) - gamma
 * per contact and bilateral row, from the u of the last evaluation */
static void proj_direction(nsn_data *d, const fl_problem *p, const double *gamma) {
  for (fl_int i = 0; i < d->nc; i++) {
    fl_int r = 3 * i;
    double wn = d->wdiag[r] + d->R[i], wn_ = wn > DBL_MIN ? wn : 1;
    double gn = gamma[r] - (d->u[r] - d->vhat[i] + d->R[i] * gamma[r]) / wn_;
    gn = gn > 0 ? gn : 0;
    double t1 = gamma[r + 1] - d->u[r + 1] / d->wtt[i], t2 = gamma[r + 2] - d->u[r + 2] / d->wtt[i];
    double cap = p->mu[i] * gn, nt = hypot(t1, t2);
    if (nt > cap) {
      double c = nt > 0 ? cap / nt : 0;
      t1 *= c;
      t2 *= c;
    }
    d->dg[r] = gn - gamma[r];
    d->dg[r + 1] = t1 - gamma[r + 1];
    d->dg[r + 2] = t2 - gamma[r + 2];
  }
  for (fl_int h = 0; h < d->nh; h++) {
    fl_int r = 3 * d->nc + h;
    double c = p->compliance ? p->compliance[h] : 0;
    double res = d->u[r] + (p->g0 ? p->g0[h] : 0) / p->dt + c * gamma[r];
    double lo = p->lo ? p->lo[h] : -INFINITY, hi = p->hi ? p->hi[h] : INFINITY;
    double g = gamma[r] - res / d->rho_b[h];
    d->dg[r] = (g < lo ? lo : g > hi ? hi : g) - gamma[r];
  }
  for (fl_int r = 0; r < d->n; r++)
    if (!isfinite(d->dg[r])) d->dg[r] = 0;
}


static int nsn_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  nsn_data *d = s->data;
  const nsn_opts *o = s->opts;
  fl_int n = d->n;
  if (d->ncp == NCP_AC) return nsn_solve_ac(s, p, v, gamma);

  // starting iterate: zero (thesis), free motion, or the incoming guess
  if (d->global) {
    if (s->common.warm_start)
      memcpy(d->vit, v, (size_t)d->nv * sizeof(double));
    else if (o->start == START_FREE)
      memcpy(d->vit, p->vstar, (size_t)d->nv * sizeof(double));
    else
      memset(d->vit, 0, (size_t)d->nv * sizeof(double));
    fl_csr_gemtv(d->B, 1.0, gamma, 0.0, d->bg);
  }
  d->built = 0;
  s->cur_v = v;
  s->cur_gamma = gamma;

  nsn_eval(d, p, d->ncp, d->vit, gamma, d->bg);
  hand_out_v(d, p, o->project_v, v);
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  fill_stat(d, &st);
  if (fl_solver_record(s, &st) != 0) return FL_OK;

  double *gtr = d->tmp; /* trial gamma reuses tmp after the build */
  for (int k = 1;; k++) {
    // Newton system at the current iterate and its inner solve
    nsn_build(d, p, gamma);
    fl_lin_stat ls;
    FL_TRY(fl_lin_solve(d->lin, d->K, d->rhs, d->y, &ls));
    int fallback = ls.reason == FL_LIN_NAN;
    for (fl_int i = 0; i < n; i++) {
      d->dg[i] = d->fixed[i] ? d->z[i] : d->y[i];
      if (!isfinite(d->dg[i])) fallback = 1;
    }
    // guard: keep the iterate, so that a step with no finite result can be undone
    memcpy(d->gsave, gamma, (size_t)n * sizeof(double));
    if (d->global) {
      memcpy(d->vsave, d->vit, (size_t)d->nv * sizeof(double));
      memcpy(d->bgsave, d->bg, (size_t)d->nv * sizeof(double));
    }
    double m0 = d->merit, a = o->alpha;
    int neval = 0, failed = 0;
    for (int attempt = 0;; attempt++) {
      if (fallback) proj_direction(d, p, gamma);
      if (d->global) fl_csr_gemtv(d->B, 1.0, d->dg, 0.0, d->bdg);

      // step: damped, or backtracking (Armijo) on the residual 2-norm
      a = fallback ? 1 : o->alpha;
      if (d->ls == LS_BACKTRACK) {
        a = 1;
        for (int t = 0;; t++) {
          nsn_step(d, p, a, gamma, gtr, d->vtr, d->bgt);
          nsn_eval(d, p, d->ncp, d->vtr, gtr, d->bgt);
          neval++;
          if (d->merit <= (1 - 1e-4 * a) * m0 || t >= 10 || !isfinite(d->merit)) break;
          a *= 0.5;
        }
        memcpy(gamma, gtr, (size_t)n * sizeof(double));
        if (d->global) {
          memcpy(d->vit, d->vtr, (size_t)d->nv * sizeof(double));
          memcpy(d->bg, d->bgt, (size_t)d->nv * sizeof(double));
        }
      } else {
        nsn_step(d, p, a, gamma, gtr, d->vtr, d->bgt);
        memcpy(gamma, gtr, (size_t)n * sizeof(double));
        if (d->global) {
          memcpy(d->vit, d->vtr, (size_t)d->nv * sizeof(double));
          memcpy(d->bg, d->bgt, (size_t)d->nv * sizeof(double));
        }
        nsn_eval(d, p, d->ncp, d->vit, gamma, d->bg);
        neval++;
      }
      int finite = isfinite(d->merit) && isfinite(d->error);
      for (fl_int i = 0; finite && i < n; i++) finite = isfinite(gamma[i]);
      if (finite) break;
      // undo; try the projection step once, else stop with the last finite iterate
      memcpy(gamma, d->gsave, (size_t)n * sizeof(double));
      if (d->global) {
        memcpy(d->vit, d->vsave, (size_t)d->nv * sizeof(double));
        memcpy(d->bg, d->bgsave, (size_t)d->nv * sizeof(double));
      }
      nsn_eval(d, p, d->ncp, d->vit, gamma, d->bg);
      if (fallback) {
        failed = 1;
        a = 0;
        break;
      }
      fallback = 1;
    }
    double dgmax = 0;
    for (fl_int i = 0; i < n; i++)
      if (fabs(gamma[i] - d->gsave[i]) > dgmax) dgmax = fabs(gamma[i] - d->gsave[i]);
    hand_out_v(d, p, o->project_v, v);

    fl_iter_stat_init(&st, k);
    fill_stat(d, &st);
    st.step = fallback ? 0 : a; // 0 marks the projection (fallback) step
    st.step_norm = dgmax;
    st.inner_iters = ls.iters;
    st.inner_residual = ls.res;
    st.neval = neval;
    if (fl_solver_record(s, &st) != 0) break;
    if (failed) {
      s->reason = FL_DIVERGED_LINE_SEARCH;
      break;
    }
  }
  return FL_OK;
}


static void nsn_view(const fl_solver *s, FILE *f) {
  const nsn_data *d = s->data;
  if (d && (d->jptr || d->acG)) {
    if (d->acG)
      fprintf(f, "nsn: Alart-Curnier, dense LU, Jacobian %d rows", (int)d->n);
    else
      fprintf(f, "nsn: Alart-Curnier, sparse LU (UMFPACK), Jacobian %d rows, %d nonzeros",
              (int)d->n, d->jptr[d->n]);
    fprintf(f, "%s\n", d->pl ? " (local form of a global problem)" : "");
    return;
  }
  const fl_lin_ops *ops = fl_lin_ops_get(((const nsn_opts *)s->opts)->lin);
  fprintf(f, "nsn: inner solver %s", ops ? ops->name : "(unavailable)");
  if (d && d->K)
    fprintf(f, ", Newton matrix %d rows, %d nonzeros%s\n", (int)d->n, (int)d->K->nnz,
            d->global ? "" : " (local W)");
  else
    fprintf(f, ", not set up\n");
}


//---- accessors (fl_lin.h) ----

extern const fl_solver_ops fl_nsn_ops;

const double *fl_nsn_inner_history(const fl_solver *s, int *n, const double **nat) {
  *n = 0;
  if (nat) *nat = NULL;
  if (!s || s->ops != &fl_nsn_ops || !s->data) return NULL;
  const nsn_data *d = s->data;
  return fl_lin_history(d->lin, n, nat);
}


int fl_nsn_newton_system(const fl_solver *s, const fl_csr **K, const double **rhs) {
  if (!s || s->ops != &fl_nsn_ops || !s->data)
    return fl_seterr(FL_ERR_INVAL, "fl_nsn_newton_system: not an nsn solver");
  const nsn_data *d = s->data;
  if (!d->built) return fl_seterr(FL_ERR_STATE, "fl_nsn_newton_system: no system built yet");
  *K = d->K;
  *rhs = d->rhs;
  return FL_OK;
}


const fl_solver_ops fl_nsn_ops = {
  FL_SOLVER_ABI,
  "nsn",
  "non-smooth Newton (FB/min-map NCP, complementarity preconditioning, inner jacobi|gs|pcg|"
  "pcr|direct|petsc)",
  sizeof(nsn_opts),
  nsn_options,
  sizeof(nsn_data),
  FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_BILATERAL | FL_CAP_LOCAL | FL_CAP_WARMSTART
#ifdef FL_HAVE_PETSC
      | FL_CAP_MPI
#endif
  ,
  nsn_setup,
  nsn_solve,
  nsn_view,
  nsn_destroy,
  "max_iter=100",
};

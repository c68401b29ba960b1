// SPDX-License-Identifier: Apache-2.0
/* nsn.c: non-smooth Newton with complementarity preconditioning (Macklin et al. 2019; thesis
 * chapter 4 and appendix A; SOLVERS.md section 3): the driver (options, set-up, the Newton
 * iteration with the Fischer-Burmeister or min NCP). The Alart-Curnier Newton (ncp=ac) is in
 * nsn_ac.c, the NCP functions and the evaluation of an iterate that both use in nsn_eval.c, the
 * registry of the inner linear solvers (fl_lin.h) in lin.c.
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
 * ncp=ac on a global problem (the default, ncp=auto, unless it has no contacts): solved in
 * its local form (fl_problem_local_form, formed in setup as prox does: W = J A^-1 J^T +
 * diag(R_n), q = J v* + b - vhat_n), handing out v = v* + A^-1 J^T gamma; with bilateral rows
 * the local form covers them too (ac_local_with_rows: W_hh + c_h, q_h = J_h v* + b_h + g0_h/dt),
 * each an equality row F_h = rho_h u_h or held at its bound. On global problems the auto values
 * make the contact rows near-rigid (ac.compliance: W_ii (1 + 3e-4); joint rows stay rigid),
 * non-monotone in its search (ac.nonmono), polished on the rigid problem once the near-rigid
 * one converged (ac.polish), and a solve that fails hands out its best iterate with no kinetic
 * energy added (ac.best; fl__nsn_solve_ac).
 * World steps have redundant contacts (four or more per face), where W is singular, so there
 * the Jacobian is regularized (ac.reg) and a solve that has not converged after ac.restart
 * iterations restarts once from gamma = 0 with a Tikhonov continuation (fl__nsn_solve_ac). Their
 * Jacobians are small, so they are factorized densely (ac.lu).
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <umfpack.h>

#include "nsn_impl.h"

//---- options ----

#define OO(f) offsetof(nsn_opts, f)
static const fl_option_desc nsn_options[] = {
  {"ncp", FL_OPT_ENUM, OO(ncp), 0, 0, NCP_AUTO, "fb|min|ac|auto",
   "NCP function: Fischer-Burmeister or min-map (compliance form, inner lin), ac = Alart-"
   "Curnier with its exact Jacobian and an LU (ac.lu), on global problems through their local "
   "form W = J A^-1 J^T, q (bilateral rows as equality rows, or held at their bounds); auto = "
   "ac, except fb on global problems without contacts. On world steps ac is near-rigid "
   "(ac.compliance 3e-4 on contact rows) with a rigid polish (ac.polish), so stick and slip "
   "are Coulomb's to rounding; a step that does "
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
   "(redundant contacts); -1 = auto: 1e-11"},
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
  {"ac.fallback", FL_OPT_ENUM, OO(ac_fallback), 0, 0, FB_AUTO, "auto|projection|gs|switch",
   "ncp=ac: the step taken when the Newton direction fails or the line search finds no "
   "decrease: projection (gamma - F, all contacts at once) or gs (one projected Gauss-Seidel "
   "sweep over the contacts) or switch (projection until 5 projection steps have raised "
   "the merit, gs from then on); auto = gs on global problems, switch on local ones (the "
   "projection alone lets KaplasTower-i1061-4 wander, gs alone stalls Capsules-i101-404)"},
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
  fl_free(d->plq);
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

/* ncp=ac on a global problem p with bilateral rows: its local form over all n = 3 nc + nh rows
 * into d->pl (as fl_problem_local_problem, which has no bilateral rows), and d->dyn:
 * W = J A^-1 J^T + diag(R_n, 0, 0, ..., c_h), q = J v* + b - (vhat_n, 0, 0, ..., -g0_h/dt),
 * so that (W gamma + q)_h = J_h v + b_h + g0_h/dt + c_h gamma_h is the row's residual; its
 * bounds lo, hi are kept (d->plq holds q, lo, hi; g0 and compliance are folded in) */
static int ac_local_with_rows(nsn_data *d, const fl_problem *p) {
  fl_int nc = p->nc, nh = p->nh, m = 3 * nc, n = m + nh;
  FL_TRY(fl_dynamics_create(p, &d->dyn));
  if (!fl_dynamics_JAinv(d->dyn))
    return fl_errcode() < 0 ? fl_errcode() : fl_seterr(FL_ERR_NOMEM, "%s: J A^-1", p->name);
  FL_TRY(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, nc, 0, 0, &d->pl));
  fl_problem *l = d->pl;
  memcpy(l->name, p->name, sizeof l->name);
  l->dt = p->dt;
  memcpy(l->mu, p->mu, (size_t)nc * sizeof(double));
  d->plq = fl_malloc(((size_t)n + 2 * (size_t)nh) * sizeof(double));
  if (!d->plq) return fl_seterr(FL_ERR_NOMEM, "nsn: out of memory (%s, local form)", p->name);
  l->nh = nh;
  l->q = d->plq;
  l->lo = d->plq + n;
  l->hi = l->lo + nh;
  FL_TRY(fl_dynamics_delassus(d->dyn, &l->W));
  double *q = l->q;
  for (fl_int r = 0; r < n; r++) q[r] = p->b ? p->b[r] : 0.0;
  fl_csr_gemv(p->J, 1.0, p->vstar, 1.0, q);
  for (fl_int r = 0; r < n; r++) { // the diagonal terms: R_n, c_h (W's pattern holds W_rr)
    double add = 0;
    if (r < m) {
      if (r % 3 == 0) {
        double vhat;
        fl_problem_normal_law(p, r / 3, &add, &vhat);
        q[r] -= vhat;
      }
    } else {
      fl_int h = r - m;
      add = p->compliance ? p->compliance[h] : 0;
      q[r] += (p->g0 ? p->g0[h] : 0) / p->dt;
      l->lo[h] = p->lo ? p->lo[h] : -INFINITY;
      l->hi[h] = p->hi ? p->hi[h] : INFINITY;
    }
    if (add == 0) continue;
    fl_int k = l->W->rowptr[r];
    while (k < l->W->rowptr[r + 1] && l->W->col[k] != r) k++;
    if (k == l->W->rowptr[r + 1])
      return fl_seterr(FL_ERR_STATE, "nsn: %s: W has no diagonal entry in row %d", p->name, (int)r);
    l->W->val[k] += add;
  }
  return FL_OK;
}

static int nsn_setup(fl_solver *s, const fl_problem *p) {
  nsn_data *d = s->data;
  const nsn_opts *o = s->opts;
  d->nc = p->nc;
  d->nh = p->nh;
  d->nv = p->nv;
  d->n = fl_problem_nrows(p);
  d->global = p->kind == FL_PROBLEM_GLOBAL;
  // auto: Alart-Curnier (bilateral rows included, as equality rows of its local form), except
  // on global problems without contacts, which keep Fischer-Burmeister
  d->ncp = o->ncp == NCP_AUTO ? (d->global && p->nc == 0 ? NCP_FB : NCP_AC) : o->ncp;
  d->ls = o->line_search == LS_AUTO ? (d->global && d->ncp != NCP_AC ? LS_NONE : LS_BACKTRACK)
                                     : o->line_search;
  d->acreg = o->ac_reg >= 0 ? o->ac_reg : 1e-11;
  d->acrestart = o->ac_restart >= 0 ? o->ac_restart : (d->global ? 10 : 0);
  d->acfb = o->ac_fallback == FB_AUTO ? (d->global ? FB_GS : FB_SWITCH) : o->ac_fallback;
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
      FL_TRY(ac_local_with_rows(d, p));
    else
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
    if ((p->nh > 0 && p != d->pl) || !p->W || !p->q)
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
      if (r >= 3 * d->nc) continue; // contact rows only: joints stay rigid
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
    return fl__nsn_ac_setup(d, dense, rho_spectral);
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
  if (d->ncp == NCP_AC) return fl__nsn_solve_ac(s, p, v, gamma);

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

  fl__nsn_eval(d, p, d->ncp, d->vit, gamma, d->bg);
  hand_out_v(d, p, o->project_v, v);
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  fl__nsn_fill_stat(d, &st);
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
          fl__nsn_eval(d, p, d->ncp, d->vtr, gtr, d->bgt);
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
        fl__nsn_eval(d, p, d->ncp, d->vit, gamma, d->bg);
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
      fl__nsn_eval(d, p, d->ncp, d->vit, gamma, d->bg);
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
    fl__nsn_fill_stat(d, &st);
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
  /* the name only: describing a run must not load the PETSc module */
  fprintf(f, "nsn: inner solver %s", fl_lin_type_name(((const nsn_opts *)s->opts)->lin));
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

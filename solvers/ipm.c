// SPDX-License-Identifier: Apache-2.0
/* ipm.c: primal-dual interior-point method on the global form (docs/ipm.md).
 *
 * Coulomb's law with De Saxce's change is, for a fixed shift s_i = mu_i |u_t,i|, the optimality
 * system of a convex second-order-cone program in the velocities:
 *
 *   minimize 1/2 v'A v - (A v*)'v  subject to  y_i = S_i u_i + s_i e_0 + E_i rho_i in L (each i),
 *
 * u_i = J_i v + b_i - vhat_i e_0 the local velocity, S_i = diag(1, mu_i, mu_i), L the Lorentz
 * cone (y_0 >= |y_t|), E_i = diag(R_n,i, 0, 0) a compliant contact's normal compliance. Its
 * multiplier rho_i in L is the impulse in scaled tangents, r_i = S_i rho_i; both cones are
 * then the self-dual L. A frictionless contact (mu_i = 0) keeps only the normal component: a
 * 1-D cone, y_0 >= 0, rho_0 = r_n >= 0.
 *
 * Each iteration is a Mehrotra predictor-corrector step with Nesterov-Todd scaling W_i
 * (W_i rho_i = W_i^-1 y_i = lambda_i). The Newton system reduces onto the dofs:
 *
 *   (A + sum_i J_i'S_i D_i S_i J_i) dv = -r_d + sum_i J_i'S_i D_i (W_i t_i - r_p,i),
 *   D_i = (W_i^2 + E_i + eps_i I)^-1,
 *
 * with the shift frozen within the iteration (ipm.newton_shift=0) an SPD nv x nv matrix with a
 * pattern fixed by the contacts: CHOLMOD analyzes it once in setup and factorizes it
 * numerically once per iteration (predictor and corrector share the factor). By default
 * (newton_shift=1) the shift's derivative mu t_i'du_t (t_i = u_t/|u_t|) joins the cone
 * constraint's linearization, S_i J_i becomes G_i J_i = (S_i + mu e_0 t_i') J_i on the right of
 * D_i, the matrix A + sum J_i'S_i D_i G_i J_i is not symmetric, and UMFPACK factorizes it (the
 * same pattern, analyzed once): the exact Newton step of Coulomb's law, not of a convex
 * program. Where that LU would not fit (ipm.inner=auto, max_factor_gb), the exact step is
 * solved by GMRES preconditioned by the Cholesky of the frozen matrix (the two differ by one
 * rank-one term per friction contact). After a short exact step, sliding contacts pinned with
 * y and rho on their cones' boundary and the friction not against the slip get it turned
 * (ipm.align_step: the stall of docs/ipm.md, "Issue 52"). eps_i = ipm.reg w_i (w_i the
 * contact's mean Delassus diagonal) is a proximal term on rho centred at the current
 * iterate: it leaves the residuals (hence the answer) unchanged,
 * bounds D_i and damps the motion of the impulses along W's null space (the self-stress of
 * piles). The shift s is updated from the current velocities after every step. After a step,
 * a contact whose constraint value g_i + E_i rho_i is inside its cone at least ipm.snap times
 * as deep as y_i takes it as y_i (its cone residual, left by the shift's nonlinearity, is
 * dropped rather than carried).
 *
 * Own residual: the common merit (natural map with De Saxce's correction, normalized as the
 * common `norm` option says) at the impulses r = S rho and the velocities they make exactly,
 * v(r) = v* + A^-1 J'r (momentum holds); the merit is not monotone along the path, so each
 * record's error is the smallest so far and solve returns that iterate. Records: objective = the
 * complementarity measure mu = y'rho / (number of cones), step = the step length, gradient =
 * ||r_d|| (momentum residual of the interior iterate), inner_residual = ||r_p|| (cone
 * constraint residual), inner_iters = factorizations so far, neval = 2 (triangular solves).
 * Global problems without bilateral rows only.
 */
#include <float.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>

#include <cholmod.h>
#include <umfpack.h>

#include "local_kit.h"
#include "reduced.h"

typedef struct {
  double reg;          /* eps_i = reg w_i */
  double frac;         /* fraction of the step to the cones' boundary */
  double init_scale;   /* the cold start's distance to the cones' boundary, in units of the
                          free motion's rms velocity */
  double max_factor_gb; /* refuse a problem whose Cholesky factor exceeds this */
  int shift_update;    /* 1: s from the current v every iteration; 0: s from v* only */
  int stall_iter;      /* stop after this many iterations without a new best merit */
  double warm_margin;  /* a warm start's distance to the boundary, relative to init_scale's */
  int newton_shift;    /* 1: the shift's derivative in Newton's matrix (LU); 0: frozen (Cholesky) */
  double smooth;       /* the shift's smoothing, relative to the complementarity */
  double snap;         /* y_i := g_i + E rho_i when that keeps this fraction of y_i's depth */
  int lu_ordering;     /* UMFPACK: 0 its default strategy, 1 symmetric + AMD, 2 symmetric + METIS */
  double unblock;      /* push of the contacts that block a short step, relative to |y_i|, |rho_i| */
  double unblock_step; /* a step shorter than this is short */
  int polish;          /* 1: pnewton from the interior point's best iterate */
  double polish_tol;   /* hand over when the merit falls below this */
  char polish_set[FL_OPT_STRLEN]; /* pnewton's options, ';'-separated */
  int rounds;          /* with shift_update = 0: a fixed point over convex solves */
  int switch_frozen;   /* a stalled exact-shift iteration goes on with the shift frozen */
  double round_rel;    /* a round ends when the complementarity falls by this factor */
  int round_max;       /* or after this many iterations */
  int crossover;       /* 1: active-set Newton from the best iterate (crossover_tol) */
  double crossover_tol; /* the merit below which the crossover is tried */
  int crossover_iter;  /* its most Newton steps per try */
  double crossover_reg; /* its proximal weight on the impulses' step, relative to w_i */
  int crossover_halve; /* halvings of a step that raises the merit (0: full steps) */
  double crossover_rho; /* the classification's z = r - (u + mu |u_t| e_0) / crossover_rho */
  double align_step;   /* a step shorter than this re-aligns the blocking sliding contacts */
  double align_cos;    /* ... whose y_t, rho_t make a cosine above this */
  double align_keep;   /* ... to |rho_t| = align_keep rho_0, opposite y_t */
  double align_depth;  /* ... where both y and rho are this close to the boundary (relative) */
  double frozen_retry; /* an exact step shorter than this is retried with the shift frozen */
  double collapse_step; /* with switch_frozen: steps this short ... */
  int collapse_iter;   /* ... this many times in a row freeze the shift (0: off) */
  int inner;           /* exact step: 0 auto, 1 LU, 2 GMRES on the frozen matrix's Cholesky */
  int gmres_m;         /* GMRES's restart length */
  int gmres_max;       /* its most iterations per solve */
  double gmres_tol;    /* its relative residual */
} ipm_opts;

#define IO(f) offsetof(ipm_opts, f)
static const fl_option_desc ipm_table[] = {
  {"reg", FL_OPT_REAL, IO(reg), 0, 1, 1e-6, NULL,
   "proximal weight on the impulses, relative to each contact's mean Delassus diagonal "
   "(bounds the Newton matrix and the growth of self-stress; 0: none)"},
  {"frac", FL_OPT_REAL, IO(frac), 0.5, 1, 0.99, NULL,
   "fraction of the largest step that stays inside the cones"},
  {"init_scale", FL_OPT_REAL, IO(init_scale), 1e-12, 1e12, 1.0, NULL,
   "cold start: distance of y and rho from the cones' boundary, in units of the free motion's "
   "rms velocity (and that over the mean Delassus diagonal for impulses)"},
  {"max_factor_gb", FL_OPT_REAL, IO(max_factor_gb), 0, 1e6, 2.0, NULL,
   "setup refuses (unsupported) a problem whose factor (UMFPACK's LU estimate with "
   "newton_shift, CHOLMOD's Cholesky without) is above this many GB"},
  {"shift_update", FL_OPT_BOOL, IO(shift_update), 0, 1, 1, NULL,
   "1: De Saxce's shift mu |u_t| follows the current velocities every iteration; 0: it stays "
   "at the first iterate's (a convex problem, not Coulomb's law: for measurements)"},
  {"stall_iter", FL_OPT_INT, IO(stall_iter), 1, 1e6, 100, NULL,
   "stop (STAGNATION) after this many iterations without a new best merit"},
  {"warm_margin", FL_OPT_REAL, IO(warm_margin), 1e-12, 1e6, 1e-2, NULL,
   "warm start: distance of the guess's y and rho from the cones' boundary, relative to a cold "
   "start's"},
  {"newton_shift", FL_OPT_BOOL, IO(newton_shift), 0, 1, 1, NULL,
   "1: Newton's matrix has the derivative of De Saxce's shift mu |u_t| (exact Newton step, "
   "non-symmetric: UMFPACK's LU); 0: the shift is frozen within an iteration (SPD: CHOLMOD's "
   "Cholesky; sliding contacts then converge slowly or not at all)"},
  {"smooth", FL_OPT_REAL, IO(smooth), 0, 1e12, 0, NULL,
   "De Saxce's shift is mu sqrt(|u_t|^2 + delta_i^2) with delta_i^2 = smooth x (the "
   "complementarity y'rho / cones) x w_i: smooths the kink at rest, vanishes at the answer"},
  {"polish", FL_OPT_BOOL, IO(polish), 0, 1, 0, NULL,
   "hand the best interior iterate to pnewton (warm start, the same tolerances, the rest of "
   "max_iter and time_limit) once the merit is below polish_tol or stalls for stall_iter "
   "iterations; its iterations are recorded after the interior point's (setup fails where "
   "pnewton's does, e.g. above pnewton.max_lu_gb)"},
  {"polish_tol", FL_OPT_REAL, IO(polish_tol), 0, 1e300, 1e-4, NULL,
   "merit below which the interior point hands over to pnewton (with polish)"},
  {"polish_set", FL_OPT_STRING, IO(polish_set), 0, 0, 0, "",
   "pnewton's options for the polish, separated by ';' (e.g. pnewton.sigma=1e-6)"},
  {"switch_frozen", FL_OPT_BOOL, IO(switch_frozen), 0, 1, 1, NULL,
   "with newton_shift: when stall_iter iterations bring no new best merit, go on with the "
   "shift frozen within each iteration (the same LU) instead of stopping"},
  {"rounds", FL_OPT_BOOL, IO(rounds), 0, 1, 0, NULL,
   "with shift_update = 0: the shift is updated from v(r) at the end of each round (a convex "
   "cone program solved until the complementarity has fallen by round_rel), and the iterate "
   "pushed back inside the cones by warm_margin (a fixed point over convex solves)"},
  {"round_rel", FL_OPT_REAL, IO(round_rel), 0, 1, 1e-8, NULL,
   "a round ends when the complementarity has fallen by this factor from its start"},
  {"round_max", FL_OPT_INT, IO(round_max), 1, 1e6, 40, NULL,
   "a round ends after at most this many iterations"},
  {"lu_ordering", FL_OPT_ENUM, IO(lu_ordering), 0, 0, 2, "default|amd|metis",
   "UMFPACK's strategy for the exact step's LU: its default, or the symmetric strategy with "
   "AMD or METIS on K + K' (the pattern is symmetric)"},
  {"unblock", FL_OPT_REAL, IO(unblock), 0, 1e6, 0, NULL,
   "after a step shorter than unblock_step, the contacts whose cones limited it have y_0 and "
   "rho_0 raised by this times |y_i| and |rho_i| (a local re-centring; 0: off)"},
  {"unblock_step", FL_OPT_REAL, IO(unblock_step), 0, 1, 1e-2, NULL,
   "the step length below which unblock acts"},
  {"snap", FL_OPT_REAL, IO(snap), 0, 1e300, 1, NULL,
   "after a step, a contact whose constraint value g_i + E_i rho_i lies inside its cone at "
   "least this fraction as deep as y_i takes it as y_i (its cone residual becomes 0; 0: off)"},
  {"crossover", FL_OPT_BOOL, IO(crossover), 0, 1, 0, NULL,
   "once the best merit is below crossover_tol (again after each further fall by 10, and at a "
   "stall): classify every contact from the best iterate (separated, sticking, sliding: the "
   "natural map's projection) and take full Newton steps on that smooth system in (v, r), "
   "re-classified after each; a result is kept only where its merit is lower"},
  {"crossover_tol", FL_OPT_REAL, IO(crossover_tol), 0, 1e300, 1e-7, NULL,
   "merit below which the crossover is tried"},
  {"crossover_iter", FL_OPT_INT, IO(crossover_iter), 1, 1e6, 30, NULL,
   "the most Newton steps of one crossover try (it also stops after 5 without a new best)"},
  {"crossover_reg", FL_OPT_REAL, IO(crossover_reg), 0, 1, 1e-6, NULL,
   "the crossover's proximal weight on the step of the contact rows' impulses, relative to "
   "w_i (redundant sticking contacts make the system singular without it)"},
  {"crossover_halve", FL_OPT_INT, IO(crossover_halve), 0, 60, 20, NULL,
   "the crossover halves a step whose merit is not below the current one at most this many "
   "times, and stops when none is (0: full steps, each kept only where it sets a new best)"},
  {"crossover_rho", FL_OPT_REAL, IO(crossover_rho), 1e-300, 1e300, 1, NULL,
   "the crossover's classification projects z = r - (u + mu |u_t| e_0) / crossover_rho (N s "
   "per m/s; 1: the merit's natural map)"},
  {"align_step", FL_OPT_REAL, IO(align_step), 0, 1, 0.1, NULL,
   "after a step shorter than this, a friction contact whose cones limited it and whose y_t "
   "and rho_t are not opposite (cosine above align_cos: a sliding contact with both on the "
   "cones' boundary and the friction not against the slip, which no short step can turn) gets "
   "rho_t turned against y_t, |rho_t| = align_keep rho_0 (0: off)"},
  {"align_cos", FL_OPT_REAL, IO(align_cos), -1, 1, -0.9, NULL,
   "align_step acts on contacts whose cosine of (y_t, rho_t) is above this"},
  {"align_depth", FL_OPT_REAL, IO(align_depth), 0, 1, 0.03, NULL,
   "align_step acts only where y and rho both lie this close to their cones' boundary, "
   "(x_0 - |x_t|) / x_0 below it"},
  {"align_keep", FL_OPT_REAL, IO(align_keep), 0, 1, 0.5, NULL,
   "align_step sets |rho_t| to this fraction of rho_0 (inside the cone)"},
  {"frozen_retry", FL_OPT_REAL, IO(frozen_retry), 0, 1, 0, NULL,
   "with newton_shift: an exact step shorter than this is computed again with the shift frozen "
   "(a second factorization) and the longer of the two is taken (0: off)"},
  {"collapse_step", FL_OPT_REAL, IO(collapse_step), 0, 1, 0.05, NULL,
   "with switch_frozen: collapse_iter exact steps in a row shorter than this freeze the shift "
   "as a stall does (steps that shrink geometrically: a contact pinned at its cones' "
   "boundary)"},
  {"collapse_iter", FL_OPT_INT, IO(collapse_iter), 0, 1000000, 0, NULL,
   "with switch_frozen: this many exact steps in a row shorter than collapse_step freeze the "
   "shift (0: off; only a stall of stall_iter iterations does)"},
  {"inner", FL_OPT_ENUM, IO(inner), 0, 0, 0, "auto|lu|gmres",
   "the exact step's linear solve (newton_shift): lu, UMFPACK's LU of the non-symmetric matrix; "
   "gmres, GMRES preconditioned by CHOLMOD's Cholesky of the frozen (symmetric) matrix, which "
   "differs from it by one rank-one term per friction contact (its factor is 18 times smaller "
   "on granular_1e4); auto: lu where UMFPACK's estimate is within max_factor_gb, else gmres"},
  {"gmres_m", FL_OPT_INT, IO(gmres_m), 1, 1000, 20, NULL,
   "inner=gmres: the restart length"},
  {"gmres_max", FL_OPT_INT, IO(gmres_max), 1, 100000, 60, NULL,
   "inner=gmres: the most GMRES iterations per solve (the last iterate is used)"},
  {"gmres_tol", FL_OPT_REAL, IO(gmres_tol), 0, 1, 1e-10, NULL,
   "inner=gmres: stop at this residual relative to the right-hand side's"},
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}};

typedef struct {
  fl_dynamics *dyn;
  fl_int nc, nv;
  fl_reduced red; /* K = A + sum J_i'S D S J_i (nv x nv), fixed pattern, both triangles */
  double *w, *Rn, *vhat, *eps; /* (nc) */
  double *Wm, *Wi, *D, *lam; /* (9 nc, 9 nc, 9 nc, 3 nc) NT scaling, its inverse, D_i, lambda */
  double *v, *y, *rho, *sh;  /* interior iterate (nv, 3nc, 3nc), shift (nc) */
  double *g, *rp, *rd;       /* (3nc) S u + s e_0, cone residual; (nv) momentum residual */
  double *dv, *dy, *drho, *dya, *drhoa, *t, *Wt; /* directions and work */
  double *rhs, *tmp, *f;     /* (nv) work; f = A v* */
  double *r, *vr, *u, *rbest, *vbest; /* the reported iterate r = S rho, v(r), u(r); the best */
  double norm_q;
  double lnz, flops;  /* the analysis: entries of the factors, flops per factorization */
  double fact_gb;     /* the factors' size estimate (GB) */
  double smooth2;     /* the shift's smoothing: delta_i^2 = smooth2 w_i */
  int nfact;
  fl__chol ch;        /* the reduced matrix's Cholesky factor (local_kit.h) */
  void *sym, *num;    /* UMFPACK (newton_shift) */
  double *that;       /* (2 nc) unit sliding direction u_t / |u_t| (0 at rest) */
  fl_solver *pol;     /* the polish (pnewton), set up with the problem; NULL: none */
  int k0;             /* the polish's iteration 0 is record k0 */
  int npol;           /* records of the polish in the last solve */
  long nunblock;      /* contacts re-centred (unblock) in the last solve */
  long nalign;        /* contacts re-aligned (align_step) in the last solve */
  long nretry, nretry_won; /* frozen retries in the last solve, and those taken */
  double *sdy, *sdrho, *sdv; /* (3nc, 3nc, nv) with frozen_retry: the exact step kept */
  int nxtry, nxit;    /* crossover tries and Newton steps in the last solve */
  double xbest;       /* the crossover's best merit in the last solve (INFINITY: none) */
  int switched;       /* the iteration where the shift was frozen after a stall (0: never) */
  int gm;             /* 1: the exact step by GMRES on the frozen matrix's Cholesky (inner) */
  double *xcol;       /* (3 nc) with gm: S D_i e_0 mu_i, the shift's derivative's column */
  double *gv, *gh, *gz, *gw; /* with gm: Krylov basis ((m+1) nv), Hessenberg and rotations
                              ((m+1) (m+3)), (nv), (3nc) */
  int gm_m, gm_max;   /* gmres_m, gmres_max */
  double gm_tol;      /* gmres_tol */
  long ngm;           /* GMRES iterations in the last solve */
  double gmres_worst; /* the largest relative residual GMRES ended with in the last solve */
  int empty;
} ipm_data;


static void ipm_destroy(fl_solver *s) {
  ipm_data *d = s->data;
  if (!d) return;
  fl__chol_free(&d->ch);
  if (d->num) umfpack_di_free_numeric(&d->num);
  if (d->sym) umfpack_di_free_symbolic(&d->sym);
  fl_solver_destroy(d->pol);
  fl_free(d->that);
  fl_free(d->sdy), fl_free(d->sdrho), fl_free(d->sdv);
  fl_free(d->xcol), fl_free(d->gv), fl_free(d->gh), fl_free(d->gz), fl_free(d->gw);
  fl_dynamics_free(d->dyn);
  fl__reduced_free(&d->red);
  double **arrs[] = {&d->w, &d->Rn, &d->vhat, &d->eps, &d->Wm, &d->Wi, &d->D,
                     &d->lam, &d->v, &d->y, &d->rho, &d->sh, &d->g, &d->rp, &d->rd, &d->dv,
                     &d->dy, &d->drho, &d->dya, &d->drhoa, &d->t, &d->Wt, &d->rhs, &d->tmp,
                     &d->f, &d->r, &d->vr, &d->u, &d->rbest, &d->vbest};
  for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) fl_free(*arrs[k]);
  memset(d, 0, sizeof(*d));
}


static int ipm_setup_factor(fl_solver *s, const fl_problem *p);

/* the polish: pnewton with the interior point's tolerances and norm, warm-started */
static int setup_polish(fl_solver *s, const fl_problem *p) {
  ipm_data *d = s->data;
  const ipm_opts *o = s->opts;
  FL_TRY(fl_solver_create("pnewton", &d->pol));
  char buf[FL_OPT_STRLEN + 64];
  const char *keys[] = {"abs_tol", "rel_tol", "norm", "never_stop"};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    FL_TRY(fl_solver_get_option(s, keys[k], buf, sizeof buf));
    FL_TRY(fl_solver_set_option(d->pol, keys[k], buf));
  }
  FL_TRY(fl_solver_set_options(d->pol, "warm_start=true,error_every=0"));
  snprintf(buf, sizeof buf, "%s", o->polish_set);
  for (char *c = buf; *c; c++)
    if (*c == ';') *c = ',';
  FL_TRY(fl_solver_set_options(d->pol, buf));
  return fl_solver_setup(d->pol, p);
}


static int ipm_setup(fl_solver *s, const fl_problem *p) {
  FL_TRY(ipm_setup_factor(s, p));
  ipm_data *d = s->data;
  if (!d->empty && ((const ipm_opts *)s->opts)->polish) {
    int rc = setup_polish(s, p);
    if (rc < 0) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", fl_errmsg());
      return fl_seterr(rc, "ipm: %s: the polish (pnewton) could not be set up: %s", p->name, msg);
    }
  }
  return FL_OK;
}


static int ipm_setup_factor(fl_solver *s, const fl_problem *p) {
  ipm_data *d = s->data;
  const ipm_opts *o = s->opts;
  if (p->kind != FL_PROBLEM_GLOBAL || p->nh > 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "ipm: %s: needs a global problem (A, J) without "
                     "bilateral rows", p->name);
  d->nc = p->nc, d->nv = p->nv;
  if (p->nc == 0) {
    d->empty = 1;
    return FL_OK;
  }
  fl_int nc = p->nc, nv = p->nv, n = 3 * nc;
  FL_TRY(fl_dynamics_create(p, &d->dyn));
  size_t sn = (size_t)n, sv = (size_t)nv, sc = (size_t)nc;
  double **vc[] = {&d->w, &d->Rn, &d->vhat, &d->eps, &d->sh};
  for (size_t k = 0; k < sizeof vc / sizeof vc[0]; k++)
    if (!(*vc[k] = fl_malloc(sc * sizeof(double)))) return fl_seterr(FL_ERR_NOMEM, "ipm: out of memory");
  double **v9[] = {&d->Wm, &d->Wi, &d->D};
  for (size_t k = 0; k < sizeof v9 / sizeof v9[0]; k++)
    if (!(*v9[k] = fl_malloc(9 * sc * sizeof(double)))) return fl_seterr(FL_ERR_NOMEM, "ipm: out of memory");
  double **vn[] = {&d->lam, &d->y, &d->rho, &d->g, &d->rp, &d->dy, &d->drho, &d->dya, &d->drhoa,
                   &d->t, &d->Wt, &d->r, &d->u, &d->rbest};
  for (size_t k = 0; k < sizeof vn / sizeof vn[0]; k++)
    if (!(*vn[k] = fl_malloc(sn * sizeof(double)))) return fl_seterr(FL_ERR_NOMEM, "ipm: out of memory");
  double **vv[] = {&d->v, &d->rd, &d->dv, &d->rhs, &d->tmp, &d->f, &d->vr, &d->vbest};
  for (size_t k = 0; k < sizeof vv / sizeof vv[0]; k++)
    if (!(*vv[k] = fl_malloc(sv * sizeof(double)))) return fl_seterr(FL_ERR_NOMEM, "ipm: out of memory");
  // Delassus diagonal blocks: each contact's scale w_i
  double *Wc = fl_malloc(9 * sc * sizeof(double));
  if (!Wc) return fl_seterr(FL_ERR_NOMEM, "ipm: out of memory");
  int rc = fl_dynamics_delassus_blocks(d->dyn, Wc, NULL);
  for (fl_int i = 0; i < nc && rc == FL_OK; i++) {
    fl_problem_normal_law(p, i, &d->Rn[i], &d->vhat[i]);
    double t = (Wc[9 * i] + Wc[9 * i + 4] + Wc[9 * i + 8]) / 3;
    if (!(t > 0) || !isfinite(t))
      rc = fl_seterr(FL_ERR_FORMAT, "ipm: %s: contact %ld has a zero Delassus block (its rows "
                     "of J are empty)", p->name, (long)i);
    if (!(p->mu[i] >= 0) || !isfinite(p->mu[i]))
      rc = fl_seterr(FL_ERR_FORMAT, "ipm: %s: contact %ld has friction coefficient %g; "
                     "expected a finite mu >= 0", p->name, (long)i, p->mu[i]);
    d->w[i] = t, d->eps[i] = o->reg * t;
  }
  fl_free(Wc);
  FL_TRY(rc);
  double max_b = o->max_factor_gb * 1e9;
  FL_TRY(fl__reduced_build(&d->red, p, max_b, "ipm", "ipm.max_factor_gb"));
  // f = A v*; the merit's normalization uses the local form's q = J v* + b - vhat
  fl_csr_gemv(p->A, 1.0, p->vstar, 0.0, d->f);
  fl_csr_gemv(p->J, 1.0, p->vstar, 0.0, d->u);
  double q2 = 0;
  for (fl_int r = 0; r < n; r++) {
    double qr = d->u[r] + (p->b ? p->b[r] : 0) - (r % 3 == 0 ? d->vhat[r / 3] : 0);
    q2 += qr * qr;
  }
  d->norm_q = sqrt(q2);
  d->that = fl_calloc(2 * sc, sizeof(double));
  if (!d->that) return fl_seterr(FL_ERR_NOMEM, "ipm: out of memory");
  if (o->newton_shift && o->frozen_retry > 0) {
    d->sdy = fl_malloc(sn * sizeof(double)), d->sdrho = fl_malloc(sn * sizeof(double));
    d->sdv = fl_malloc(sv * sizeof(double));
    if (!d->sdy || !d->sdrho || !d->sdv) return fl_seterr(FL_ERR_NOMEM, "ipm: out of memory");
  }
  if (o->newton_shift) {
    // K is stored by rows: UMFPACK reads it as K' by columns (solved with UMFPACK_At)
    double ctl[UMFPACK_CONTROL], info[UMFPACK_INFO];
    umfpack_di_defaults(ctl);
    // the pattern is symmetric and the values nearly so: the symmetric strategy orders A + A'
    // like a Cholesky (the default's column ordering filled granular_1e4's LU 20 times more)
    if (o->lu_ordering > 0) {
      ctl[UMFPACK_STRATEGY] = UMFPACK_STRATEGY_SYMMETRIC;
      ctl[UMFPACK_ORDERING] = o->lu_ordering == 1 ? UMFPACK_ORDERING_AMD : UMFPACK_ORDERING_METIS;
    }
    const fl_csr *K = d->red.K;
    if (umfpack_di_symbolic(nv, nv, K->rowptr, K->col, K->val, &d->sym, ctl, info) != UMFPACK_OK)
      return fl_seterr(FL_ERR_LIBRARY, "ipm: %s: UMFPACK's symbolic analysis failed (%ld dofs)",
                       p->name, (long)nv);
    double lu_b = info[UMFPACK_NUMERIC_SIZE_ESTIMATE] * info[UMFPACK_SIZE_OF_UNIT];
    d->lnz = info[UMFPACK_LNZ_ESTIMATE] + info[UMFPACK_UNZ_ESTIMATE];
    d->flops = info[UMFPACK_FLOPS_ESTIMATE], d->fact_gb = lu_b / 1e9;
    if (lu_b > max_b && o->inner == 1)
      return fl_seterr(FL_ERR_UNSUPPORTED, "ipm: %s: UMFPACK estimates %.3g GB of LU factors "
                       "(%.2g flops per factorization) for the %ld x %ld reduced matrix, above "
                       "ipm.max_factor_gb = %g", p->name, lu_b / 1e9, d->flops, (long)nv,
                       (long)nv, max_b / 1e9);
    if (lu_b <= max_b && o->inner != 2) return FL_OK;
    // the LU does not fit (or gmres asked): GMRES on the frozen matrix's Cholesky
    umfpack_di_free_symbolic(&d->sym);
    d->sym = NULL, d->gm = 1;
    size_t m = (size_t)o->gmres_m;
    d->xcol = fl_malloc(3 * sc * sizeof(double));
    d->gv = fl_malloc((m + 1) * sv * sizeof(double));
    d->gh = fl_malloc((m + 1) * (m + 3) * sizeof(double));
    d->gz = fl_malloc(sv * sizeof(double));
    d->gw = fl_malloc(sn * sizeof(double));
    d->gm_m = o->gmres_m, d->gm_max = o->gmres_max, d->gm_tol = o->gmres_tol;
    if (!d->xcol || !d->gv || !d->gh || !d->gz || !d->gw) return fl_seterr(FL_ERR_NOMEM, "ipm: out of memory");
  }
  if (fl__chol_start(&d->ch) < 0) return fl_seterr(FL_ERR_LIBRARY, "ipm: cholmod_start failed");
  if (fl__chol_analyze(&d->ch, d->red.K) < 0)
    return fl_seterr(fl__cholmod_err(d->ch.cc.status),
                     "ipm: %s: cholmod_analyze failed (status %d)", p->name, d->ch.cc.status);
  d->lnz = d->ch.cc.lnz, d->flops = d->ch.cc.fl;
  double lb = d->lnz * (sizeof(double) + sizeof(int));
  d->fact_gb = lb / 1e9;
  if (lb > max_b)
    return fl_seterr(FL_ERR_UNSUPPORTED, "ipm: %s: CHOLMOD's analysis puts the Cholesky factor "
                     "of the %ld x %ld reduced matrix at %.3g GB (%.3g entries, %.3g flops per "
                     "factorization), above ipm.max_factor_gb = %g", p->name, (long)nv, (long)nv,
                     lb / 1e9, d->lnz, d->flops, max_b / 1e9);
  return FL_OK;
}


/*---- one contact's cone algebra (k = 3: Lorentz cone; k = 1: the half-line) ----*/

/* largest a >= 0 with x + a dx in the cone (INFINITY: any); x strictly inside */
static double cone_step(int k, const double *x, const double *dx) {
  if (k == 1) return dx[0] < 0 ? -x[0] / dx[0] : INFINITY;
  double a = dx[0] * dx[0] - dx[1] * dx[1] - dx[2] * dx[2];
  double b = 2 * (x[0] * dx[0] - x[1] * dx[1] - x[2] * dx[2]);
  double nx = hypot(x[1], x[2]);
  double c = (x[0] - nx) * (x[0] + nx); // > 0
  // the cone is left where q(t) = a t^2 + b t + c first falls to 0; x_0 + t dx_0 >= 0 is
  // necessary too and catches a path through the apex, where rounding hides the double root
  double lin = dx[0] < 0 ? -x[0] / dx[0] : INFINITY;
  if (fabs(a) <= 1e-300) return fmin(lin, b < 0 ? -c / b : INFINITY);
  double disc = b * b - 4 * a * c;
  if (disc < 0 || (a > 0 && b >= 0)) return lin; // q stays positive (a > 0)
  double sq = sqrt(disc), q = -0.5 * (b + (b >= 0 ? sq : -sq));
  double r1 = q / a, r2 = q != 0 ? c / q : INFINITY, best = lin;
  if (r1 > 0 && r1 < best) best = r1;
  if (r2 > 0 && r2 < best) best = r2;
  return best;
}


/* Nesterov-Todd scaling of y, z (strictly inside): W (9), W^-1 (9), lambda = W z (3), and
 * (W^2 + eps I)^-1 into D (9) from W's spectrum (stable where y and z near the boundary make
 * W's eigenvalues differ by many orders) */
static void nt_scaling(int k, const double *y, const double *z, double eps, double *W, double *Wi,
                       double *lam, double *D) {
  memset(W, 0, 9 * sizeof(double));
  memset(Wi, 0, 9 * sizeof(double));
  if (k == 1) {
    double w = sqrt(y[0] / z[0]);
    W[0] = w, Wi[0] = 1 / w, lam[0] = sqrt(y[0] * z[0]), lam[1] = lam[2] = 0;
    memset(D, 0, 9 * sizeof(double));
    D[0] = 1 / (w * w + eps);
    return;
  }
  double ny0 = hypot(y[1], y[2]), nz0 = hypot(z[1], z[2]);
  double ny = sqrt((y[0] - ny0) * (y[0] + ny0)), nz = sqrt((z[0] - nz0) * (z[0] + nz0));
  double yb[3] = {y[0] / ny, y[1] / ny, y[2] / ny}, zb[3] = {z[0] / nz, z[1] / nz, z[2] / nz};
  double gam = sqrt(0.5 * (1 + yb[0] * zb[0] + yb[1] * zb[1] + yb[2] * zb[2]));
  double wb[3] = {(yb[0] + zb[0]) / (2 * gam), (yb[1] - zb[1]) / (2 * gam),
                  (yb[2] - zb[2]) / (2 * gam)};
  double beta = sqrt(ny / nz);
  // the square root of wb's quadratic representation: vb = (wb + e) / sqrt(2 (wb_0 + 1));
  // W = beta (2 vb vb' - Jm), W^-1 = (2 Jm vb vb' Jm - Jm) / beta, Jm = diag(1, -1, -1)
  double cv = 1 / sqrt(2 * (wb[0] + 1));
  double vb[3] = {(wb[0] + 1) * cv, wb[1] * cv, wb[2] * cv};
  double jv[3] = {vb[0], -vb[1], -vb[2]};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      double jm = a == b ? (a == 0 ? 1 : -1) : 0;
      W[3 * a + b] = beta * (2 * vb[a] * vb[b] - jm);
      Wi[3 * a + b] = (2 * jv[a] * jv[b] - jm) / beta;
    }
  for (int a = 0; a < 3; a++) lam[a] = W[3 * a] * z[0] + W[3 * a + 1] * z[1] + W[3 * a + 2] * z[2];
  // W's eigenpairs: beta (vb_0 +- |vb_t|)^2 on (1, +-th) / sqrt 2, beta on (0, th perp)
  double nv = hypot(vb[1], vb[2]), th[2] = {1, 0};
  if (nv > 0) th[0] = vb[1] / nv, th[1] = vb[2] / nv;
  double lp = beta * (vb[0] + nv) * (vb[0] + nv), lm = beta / ((vb[0] + nv) * (vb[0] + nv));
  double dp = 1 / (lp * lp + eps), dm = 1 / (lm * lm + eps), d0 = 1 / (beta * beta + eps);
  double q[3][3] = {{M_SQRT1_2, M_SQRT1_2 * th[0], M_SQRT1_2 * th[1]},
                    {M_SQRT1_2, -M_SQRT1_2 * th[0], -M_SQRT1_2 * th[1]},
                    {0, -th[1], th[0]}};
  double ev[3] = {dp, dm, d0};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      D[3 * a + b] = ev[0] * q[0][a] * q[0][b] + ev[1] * q[1][a] * q[1][b] + ev[2] * q[2][a] * q[2][b];
}


/* x o y (Jordan product) */
static void jprod(int k, const double *x, const double *y, double *o) {
  if (k == 1) {
    o[0] = x[0] * y[0], o[1] = o[2] = 0;
    return;
  }
  o[0] = x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
  o[1] = x[0] * y[1] + y[0] * x[1];
  o[2] = x[0] * y[2] + y[0] * x[2];
}


/* t with lam o t = r (lam strictly inside) */
static void jsolve(int k, const double *lam, const double *r, double *t) {
  if (k == 1) {
    t[0] = r[0] / lam[0], t[1] = t[2] = 0;
    return;
  }
  double det = lam[0] * lam[0] - lam[1] * lam[1] - lam[2] * lam[2];
  t[0] = (lam[0] * r[0] - lam[1] * r[1] - lam[2] * r[2]) / det;
  t[1] = (r[1] - t[0] * lam[1]) / lam[0];
  t[2] = (r[2] - t[0] * lam[2]) / lam[0];
}


static void mv3(const double *M, const double *x, double *o) {
  for (int a = 0; a < 3; a++) o[a] = M[3 * a] * x[0] + M[3 * a + 1] * x[1] + M[3 * a + 2] * x[2];
}


/* 3x3 SPD inverse by cofactors; 0 when singular */
static int inv3(const double *m, double *o) {
  double c0 = m[4] * m[8] - m[5] * m[7], c1 = m[5] * m[6] - m[3] * m[8], c2 = m[3] * m[7] - m[4] * m[6];
  double det = m[0] * c0 + m[1] * c1 + m[2] * c2;
  if (!(det > 0) || !isfinite(det)) return 0;
  o[0] = c0 / det, o[3] = c1 / det, o[6] = c2 / det;
  o[1] = (m[2] * m[7] - m[1] * m[8]) / det, o[4] = (m[0] * m[8] - m[2] * m[6]) / det;
  o[7] = (m[1] * m[6] - m[0] * m[7]) / det;
  o[2] = (m[1] * m[5] - m[2] * m[4]) / det, o[5] = (m[2] * m[3] - m[0] * m[5]) / det;
  o[8] = (m[0] * m[4] - m[1] * m[3]) / det;
  return 1;
}


static int cdim(const fl_problem *p, fl_int i) { return p->mu[i] > 0 ? 3 : 1; }


/*---- the iterate ----*/

/* u = J v + b - vhat e_0 (without compliance), written to d->u; g = S u + s e_0 with the shift
 * s = mu |u_t| updated when `shift`; rp = g + E rho - y; rd = A v - f - J'S rho */
static void residuals(ipm_data *d, const fl_problem *p, int shift) {
  fl_csr_gemv(p->J, 1.0, d->v, 0.0, d->u);
  for (fl_int i = 0; i < d->nc; i++) {
    double *ui = d->u + 3 * i, *gi = d->g + 3 * i, mu = p->mu[i];
    if (p->b) ui[0] += p->b[3 * i], ui[1] += p->b[3 * i + 1], ui[2] += p->b[3 * i + 2];
    ui[0] -= d->vhat[i];
    if (shift) {
      // smoothed |u_t| (sqrt(|u_t|^2 + delta^2), delta^2 = smooth mu_c w_i): the kink at rest
      // is what Newton crosses badly; delta vanishes with the complementarity mu_c
      double nt = sqrt(ui[1] * ui[1] + ui[2] * ui[2] + d->smooth2 * d->w[i]);
      d->sh[i] = mu * nt;
      d->that[2 * i] = nt > 0 ? ui[1] / nt : 0, d->that[2 * i + 1] = nt > 0 ? ui[2] / nt : 0;
    }
    gi[0] = ui[0] + d->sh[i], gi[1] = mu * ui[1], gi[2] = mu * ui[2];
    const double *yi = d->y + 3 * i, *zi = d->rho + 3 * i;
    double *rpi = d->rp + 3 * i;
    rpi[0] = gi[0] + d->Rn[i] * zi[0] - yi[0];
    rpi[1] = mu > 0 ? gi[1] - yi[1] : 0;
    rpi[2] = mu > 0 ? gi[2] - yi[2] : 0;
    double *ri = d->r + 3 * i;
    ri[0] = zi[0], ri[1] = mu * zi[1], ri[2] = mu * zi[2];
  }
  fl_csr_gemv(p->A, 1.0, d->v, 0.0, d->rd);
  fl_csr_gemtv(p->J, 1.0, d->r, 0.0, d->tmp);
  for (fl_int k = 0; k < d->nv; k++) d->rd[k] -= d->f[k] + d->tmp[k];
}


/* the reported iterate: r = S rho (d->r, as residuals() left it), v(r) = v* + A^-1 J'r into
 * vr, and the common merit at (r, u(r)); *raw gets the unnormalized natural map */
static double report(const fl_solver *sv, ipm_data *d, const fl_problem *p, double *raw) {
  fl_csr_gemtv(p->J, 1.0, d->r, 0.0, d->tmp);
  fl_dynamics_solve_A(d->dyn, d->tmp, d->vr);
  for (fl_int k = 0; k < d->nv; k++) d->vr[k] += p->vstar[k];
  double *u = d->t; // scratch: u(r) with compliance
  fl_csr_gemv(p->J, 1.0, d->vr, 0.0, u);
  for (fl_int i = 0; i < d->nc; i++) {
    if (p->b) u[3 * i] += p->b[3 * i], u[3 * i + 1] += p->b[3 * i + 1], u[3 * i + 2] += p->b[3 * i + 2];
    u[3 * i] += -d->vhat[i] + d->Rn[i] * d->r[3 * i];
  }
  double g2, u2;
  double rw = fl__natmap_residual(d->nc, p->mu, d->r, u, NULL, &g2, &u2);
  if (raw) *raw = rw;
  return rw / fl__merit_divisor(sv->common.norm, d->norm_q, g2, u2);
}


/* scalings at the current (y, rho); K = A + sum J'S D S J; numeric factorization.
 * 0, or -1 when a block or K is not positive definite. */
static int factor(ipm_data *d, const fl_problem *p, int newton) {
  const fl_csr *K = d->red.K;
  fl__reduced_reset(&d->red, p->A);
  for (fl_int i = 0; i < d->nc; i++) {
    int kk = cdim(p, i);
    double *Wm = d->Wm + 9 * i, *Wi = d->Wi + 9 * i, *Di = d->D + 9 * i, M[9];
    nt_scaling(kk, d->y + 3 * i, d->rho + 3 * i, d->eps[i], Wm, Wi, d->lam + 3 * i, Di);
    double mu = p->mu[i], sc[3] = {1, mu, mu};
    if (d->Rn[i] > 0 && kk == 1) {
      Di[0] = 1 / (Wm[0] * Wm[0] + d->Rn[i] + d->eps[i]);
    } else if (d->Rn[i] > 0) {
      // compliance: (W^2 + E + eps I)^-1 = W^-1 (I + W^-1 (E + eps I) W^-1)^-1 W^-1. Near the
      // cone's boundary W^2's eigenvalues spread by many orders and its cofactors cancel; the
      // middle matrix has eigenvalues >= 1, so its inverse stays accurate (W symmetric)
      double T[9], Ti[9], X[9];
      double e0 = d->Rn[i] + d->eps[i], e1 = d->eps[i];
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
          T[3 * a + b] = (a == b) + Wi[3 * a] * e0 * Wi[b] + Wi[3 * a + 1] * e1 * Wi[3 + b] +
                         Wi[3 * a + 2] * e1 * Wi[6 + b];
      if (!inv3(T, Ti)) return -1;
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
          X[3 * a + b] = Ti[3 * a] * Wi[b] + Ti[3 * a + 1] * Wi[3 + b] + Ti[3 * a + 2] * Wi[6 + b];
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
          Di[3 * a + b] = Wi[3 * a] * X[b] + Wi[3 * a + 1] * X[3 + b] + Wi[3 * a + 2] * X[6 + b];
    }
    for (int a = 0; a < 9; a++)
      if (!isfinite(Di[a])) return -1;
    // N = S D G_i with G_i = S (+ mu e_0 that' with the shift's derivative)
    double Gm[9] = {1, 0, 0, 0, mu, 0, 0, 0, mu};
    if (newton && kk == 3 && !d->gm) Gm[1] = mu * d->that[2 * i], Gm[2] = mu * d->that[2 * i + 1];
    if (d->gm) // the rank-one term GMRES applies: S D e_0 mu (that' on the tangent rows)
      for (int a = 0; a < 3; a++) d->xcol[3 * i + a] = kk == 3 ? sc[a] * Di[3 * a] * mu : 0;
    if (kk == 1) Gm[4] = Gm[8] = 0;
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++)
        M[3 * a + b] = sc[a] * (Di[3 * a] * Gm[b] + Di[3 * a + 1] * Gm[3 + b] + Di[3 * a + 2] * Gm[6 + b]);
    fl__reduced_add(&d->red, i, M);
  }
  if (d->sym) {
    if (d->num) umfpack_di_free_numeric(&d->num);
    if (umfpack_di_numeric(K->rowptr, K->col, K->val, d->sym, &d->num, NULL, NULL) != UMFPACK_OK)
      return -1;
    d->nfact++;
    return 0;
  }
  if (!fl__chol_factor(&d->ch, K, K->val, 0)) return -1;
  d->nfact++;
  return 0;
}


static double dot(fl_int n, const double *a, const double *b) {
  double s = 0;
  for (fl_int k = 0; k < n; k++) s += a[k] * b[k];
  return s;
}


/* y = K x for the exact step's matrix: the frozen K0 (d->red.K) plus, per friction contact,
 * J_i' xcol_i that_i' (J_i x)_t; w (3nc) scratch */
static void exact_apply(ipm_data *d, const fl_problem *p, const double *x, double *y, double *w) {
  fl_csr_gemv(d->red.K, 1.0, x, 0.0, y);
  fl_csr_gemv(p->J, 1.0, x, 0.0, w);
  for (fl_int i = 0; i < d->nc; i++) {
    double c = d->that[2 * i] * w[3 * i + 1] + d->that[2 * i + 1] * w[3 * i + 2];
    for (int a = 0; a < 3; a++) w[3 * i + a] = d->xcol[3 * i + a] * c;
  }
  fl_csr_gemtv(p->J, 1.0, w, 1.0, y);
}


/* K x = b for the exact step by restarted GMRES, right-preconditioned by the Cholesky of the
 * frozen matrix K0 (K - K0 is one rank-one term per friction contact): x from 0; the last
 * iterate after gmres_max iterations is used (it is a Newton direction, checked by the merit).
 * 0, or -1 on a failed solve or a non-finite iterate. */
static int gmres(ipm_data *d, const fl_problem *p, const double *b, double *x) {
  fl_int nv = d->nv;
  int m = d->gm_m, maxit = d->gm_max;
  double tol = d->gm_tol;
  double *V = d->gv, *H = d->gh, *cs = H + (size_t)(m + 1) * m, *sn = cs + (m + 1);
  double *g = sn + (m + 1);
  double bn = sqrt(dot(nv, b, b)), rel = 0;
  memset(x, 0, (size_t)nv * sizeof(double));
  if (!(bn > 0)) return 0;
  int its = 0;
  while (its < maxit) {
    // r = b - K x into V[0]
    double *v0 = V;
    exact_apply(d, p, x, v0, d->gw);
    for (fl_int k = 0; k < nv; k++) v0[k] = b[k] - v0[k];
    double beta = sqrt(dot(nv, v0, v0));
    rel = beta / bn;
    if (rel <= tol) break;
    for (fl_int k = 0; k < nv; k++) v0[k] /= beta;
    memset(g, 0, (size_t)(m + 1) * sizeof(double));
    g[0] = beta;
    int j = 0;
    for (; j < m && its < maxit; j++, its++) {
      // w = K M^-1 v_j
      if (fl__chol_solve(&d->ch, nv, V + (size_t)j * nv) < 0) return -1;
      double *w = V + (size_t)(j + 1) * nv;
      exact_apply(d, p, d->ch.X->x, w, d->gw);
      double *h = H + (size_t)j * (m + 1);
      for (int q = 0; q <= j; q++) { // modified Gram-Schmidt
        const double *vq = V + (size_t)q * nv;
        h[q] = dot(nv, w, vq);
        for (fl_int k = 0; k < nv; k++) w[k] -= h[q] * vq[k];
      }
      h[j + 1] = sqrt(dot(nv, w, w));
      if (h[j + 1] > 0)
        for (fl_int k = 0; k < nv; k++) w[k] /= h[j + 1];
      for (int q = 0; q < j; q++) { // the earlier rotations
        double t = cs[q] * h[q] + sn[q] * h[q + 1];
        h[q + 1] = -sn[q] * h[q] + cs[q] * h[q + 1], h[q] = t;
      }
      double den = hypot(h[j], h[j + 1]);
      cs[j] = den > 0 ? h[j] / den : 1, sn[j] = den > 0 ? h[j + 1] / den : 0;
      h[j] = den, h[j + 1] = 0;
      g[j + 1] = -sn[j] * g[j], g[j] = cs[j] * g[j];
      d->ngm++;
      if (fabs(g[j + 1]) / bn <= tol || !(den > 0)) {
        j++, its++;
        break;
      }
    }
    // y = H^-1 g (upper triangular, j x j); x += M^-1 V y
    for (int q = j - 1; q >= 0; q--) {
      double t = g[q];
      for (int c = q + 1; c < j; c++) t -= H[(size_t)c * (m + 1) + q] * g[c];
      g[q] = t / H[(size_t)q * (m + 1) + q];
    }
    memset(d->gz, 0, (size_t)nv * sizeof(double));
    for (int q = 0; q < j; q++)
      for (fl_int k = 0; k < nv; k++) d->gz[k] += g[q] * V[(size_t)q * nv + k];
    if (fl__chol_solve(&d->ch, nv, d->gz) < 0) return -1;
    for (fl_int k = 0; k < nv; k++) x[k] += ((const double *)d->ch.X->x)[k];
    if (j == 0) break;
  }
  exact_apply(d, p, x, d->gz, d->gw);
  double r2 = 0;
  for (fl_int k = 0; k < nv; k++) r2 += (b[k] - d->gz[k]) * (b[k] - d->gz[k]);
  rel = sqrt(r2) / bn;
  if (rel > d->gmres_worst) d->gmres_worst = rel;
  for (fl_int k = 0; k < nv; k++)
    if (!isfinite(x[k])) return -1;
  return 0;
}


/* the direction for the complementarity right-hand side t (W t given in d->Wt): dv, dy, drho.
 * 0, or -1 on a failed solve. */
static int direction(ipm_data *d, const fl_problem *p, int newton, double *dy, double *drho) {
  fl_int nc = d->nc, nv = d->nv;
  // rhs = -rd + J'S D (W t - rp)
  double *z = drho; // scratch: S D (W t - rp), contact rows
  for (fl_int i = 0; i < nc; i++) {
    double e[3], x[3], mu = p->mu[i];
    for (int a = 0; a < 3; a++) e[a] = d->Wt[3 * i + a] - d->rp[3 * i + a];
    mv3(d->D + 9 * i, e, x);
    z[3 * i] = x[0], z[3 * i + 1] = mu * x[1], z[3 * i + 2] = mu * x[2];
  }
  fl_csr_gemtv(p->J, 1.0, z, 0.0, d->rhs);
  for (fl_int k = 0; k < nv; k++) d->rhs[k] -= d->rd[k];
  if (d->sym) {
    const fl_csr *K = d->red.K;
    if (umfpack_di_solve(UMFPACK_At, K->rowptr, K->col, K->val, d->dv, d->rhs, d->num, NULL,
                         NULL) != UMFPACK_OK)
      return -1;
  } else if (d->gm && newton) {
    if (gmres(d, p, d->rhs, d->dv) < 0) return -1;
  } else {
    if (fl__chol_solve(&d->ch, nv, d->rhs) < 0) return -1;
    memcpy(d->dv, d->ch.X->x, (size_t)nv * sizeof(double));
  }
  for (fl_int k = 0; k < nv; k++)
    if (!isfinite(d->dv[k])) return -1;
  // drho = D (W t - rp - S J dv), dy = W t - W^2 drho = W (t - W drho)
  fl_csr_gemv(p->J, 1.0, d->dv, 0.0, dy); // dy: J dv first
  for (fl_int i = 0; i < nc; i++) {
    double mu = p->mu[i], e[3], x[3], wx[3];
    double gd[3] = {dy[3 * i], mu * dy[3 * i + 1], mu * dy[3 * i + 2]};
    if (newton && mu > 0)
      gd[0] += mu * (d->that[2 * i] * dy[3 * i + 1] + d->that[2 * i + 1] * dy[3 * i + 2]);
    for (int a = 0; a < 3; a++) e[a] = d->Wt[3 * i + a] - d->rp[3 * i + a] - gd[a];
    mv3(d->D + 9 * i, e, x);
    mv3(d->Wm + 9 * i, x, wx);
    for (int a = 0; a < 3; a++) e[a] = d->t[3 * i + a] - wx[a];
    mv3(d->Wm + 9 * i, e, wx);
    if (cdim(p, i) == 1) x[1] = x[2] = wx[1] = wx[2] = 0;
    for (int a = 0; a < 3; a++) drho[3 * i + a] = x[a], dy[3 * i + a] = wx[a];
  }
  return 0;
}


/* W t into d->Wt from d->t */
static void scale_t(ipm_data *d, const fl_problem *p) {
  for (fl_int i = 0; i < d->nc; i++) {
    mv3(d->Wm + 9 * i, d->t + 3 * i, d->Wt + 3 * i);
    if (cdim(p, i) == 1) d->Wt[3 * i + 1] = d->Wt[3 * i + 2] = 0;
  }
}


/* largest step in (0, inf] keeping y + a dy and rho + a drho in the cones */
static double max_step(const ipm_data *d, const fl_problem *p, const double *dy, const double *drho) {
  double a = INFINITY;
  for (fl_int i = 0; i < d->nc; i++) {
    int k = cdim(p, i);
    a = fmin(a, cone_step(k, d->y + 3 * i, dy + 3 * i));
    a = fmin(a, cone_step(k, d->rho + 3 * i, drho + 3 * i));
  }
  return a;
}


/* puts x strictly inside its cone, at least `margin` from the boundary along e_0 */
static void push_inside(int k, double *x, double margin) {
  if (k == 1) {
    x[1] = x[2] = 0;
    x[0] = fmax(x[0], 0) + margin;
    return;
  }
  double nt = hypot(x[1], x[2]);
  x[0] = fmax(x[0], nt) + margin;
}


/* the polish's records become the interior point's, after its own (iteration k0 + j) */
static int polish_monitor(const fl_solver *ps, const fl_iter_stat *pst, void *ctx) {
  fl_solver *sv = ctx;
  ipm_data *d = sv->data;
  if (pst->iter == 0) return 0; // the hand-over point, already recorded
  fl_iter_stat st = *pst;
  st.iter = d->k0 + pst->iter;
  st.merit = st.momentum = NAN;
  fl_solver_iterate(ps, &sv->cur_v, &sv->cur_gamma);
  d->npol++;
  if (fl_solver_record(sv, &st) != 0) return FL_ERR_STATE; // stops the polish: sv has a reason
  return 0;
}


/* pnewton from (v, gamma), the interior point's best; record k0 was the hand-over */
static int run_polish(fl_solver *sv, const fl_problem *p, double *v, double *gamma, int k0) {
  ipm_data *d = sv->data;
  fl_solver *ps = d->pol;
  d->k0 = k0;
  ps->common.max_iter = sv->common.max_iter - k0 > 1 ? sv->common.max_iter - k0 : 1;
  ps->common.time_limit = sv->common.time_limit - fl_solver_elapsed(sv);
  if (!(ps->common.time_limit > 0)) ps->common.time_limit = 1e-9;
  if (ps->nmon == 0) FL_TRY(fl_solver_monitor_add(ps, polish_monitor, sv, NULL));
  else ps->mon[0].ctx = sv;
  fl_result res;
  sv->reason = FL_ITERATING;
  int rc = fl_solver_solve(ps, p, v, gamma, &res);
  sv->cur_v = v, sv->cur_gamma = gamma;
  if (sv->reason == FL_REASON_ABORT) return sv->abort_code;
  if (sv->reason != FL_ITERATING) return FL_OK; // the interior point's test stopped it
  if (rc < 0) return rc;
  sv->reason = res.reason; // pnewton's own stop (stagnation, line search, ...)
  return FL_OK;
}


/*---- crossover: Newton on the smooth system of one classification ----*/

/* Contact classes from the natural map's projection of z = r - (u + mu |u_t| e_0) / w onto
 * the friction cone: 0 separated (z in the polar cone: r = 0), 1 sticking (z inside: u = 0),
 * 2 sliding (z projects onto the boundary: u_n = 0, r_t = -mu r_n t, t the slip direction).
 * The crossover takes w = 1, the merit's own natural map: with w = w_i (the Delassus diagonal)
 * the 300-grain capped pile's interior iterate at 1.8e-5 gave sticking rows with |u| up to
 * 2.3e-3 m/s and a first step that raised the merit to 5e-3. */
static int classify(const fl_problem *p, fl_int i, const double *ri, const double *ui, double w,
                    double *zt) {
  double mu = p->mu[i], nut = hypot(ui[1], ui[2]);
  double z[3] = {ri[0] - (ui[0] + mu * nut) / w, ri[1] - ui[1] / w, ri[2] - ui[2] / w};
  if (!(mu > 0)) return z[0] > 0 ? 1 : 0;
  double nz = hypot(z[1], z[2]);
  zt[0] = z[1], zt[1] = z[2];
  if (nz <= mu * z[0]) return 1;
  if (mu * nz <= -z[0]) return 0;
  return 2;
}


/* Full Newton steps on [A v - J'r = f; per contact its class's rows] from (vbest, rbest),
 * re-classified after each step; an iterate replaces the best where its merit (report) is
 * lower. Records each step (iteration *krec + 1, ...). Returns 1 when a record stopped the
 * solve, 0 otherwise. */
static int crossover(fl_solver *sv, ipm_data *d, const fl_problem *p, double *best, int *krec,
                     double *v, double *gamma) {
  const ipm_opts *o = sv->opts;
  const fl_csr *A = p->A, *J = p->J;
  fl_int nc = d->nc, nv = d->nv, n = 3 * nc, N = nv + n;
  size_t bn = (size_t)n * sizeof(double), bv = (size_t)nv * sizeof(double);
  size_t mt = (size_t)A->nnz + 3 * (size_t)J->nnz + 9 * (size_t)nc;
  fl_int *ti = fl_malloc(mt * sizeof(fl_int)), *tj = fl_malloc(mt * sizeof(fl_int));
  fl_int *Ap = fl_malloc(((size_t)N + 1) * sizeof(fl_int)), *Ai = fl_malloc(mt * sizeof(fl_int));
  double *tx = fl_malloc(mt * sizeof(double)), *Ax = fl_malloc(mt * sizeof(double));
  double *F = fl_malloc((size_t)N * sizeof(double)), *dx = fl_malloc((size_t)N * sizeof(double));
  double *xr = fl_malloc(bn), *xv = fl_malloc(bv), *xu = fl_malloc(bn);
  int stop = 0, since = 0;
  double cur = *best; // the merit at the crossover's iterate
  double ut_eps = 1e-14 * (d->norm_q / sqrt((double)n) + 1e-300);
  d->nxtry++;
  if (!ti || !tj || !Ap || !Ai || !tx || !Ax || !F || !dx || !xr || !xv || !xu) goto done;
  memcpy(xr, d->rbest, bn);
  memcpy(xv, d->vbest, bv);
  for (int it = 0; it < o->crossover_iter; it++) {
    size_t t = 0;
    // momentum rows: A v - J'r = f
    fl_csr_gemv(A, 1.0, xv, 0.0, F);
    fl_csr_gemtv(J, 1.0, xr, 0.0, d->tmp);
    for (fl_int k = 0; k < nv; k++) F[k] = -(F[k] - d->f[k] - d->tmp[k]);
    for (fl_int k = 0; k < nv; k++)
      for (fl_int q = A->rowptr[k]; q < A->rowptr[k + 1]; q++)
        ti[t] = k, tj[t] = A->col[q], tx[t++] = A->val[q];
    for (fl_int row = 0; row < n; row++)
      for (fl_int q = J->rowptr[row]; q < J->rowptr[row + 1]; q++)
        ti[t] = J->col[q], tj[t] = nv + row, tx[t++] = -J->val[q];
    // u with compliance
    fl_csr_gemv(J, 1.0, xv, 0.0, xu);
    for (fl_int i = 0; i < nc; i++) {
      double *ui = xu + 3 * i;
      if (p->b) ui[0] += p->b[3 * i], ui[1] += p->b[3 * i + 1], ui[2] += p->b[3 * i + 2];
      ui[0] += -d->vhat[i] + d->Rn[i] * xr[3 * i];
    }
    for (fl_int i = 0; i < nc; i++) {
      const double *ri = xr + 3 * i, *ui = xu + 3 * i;
      double zt[2] = {0, 0}, mu = p->mu[i], del = o->crossover_reg * d->w[i];
      int c = classify(p, i, ri, ui, o->crossover_rho, zt);
      fl_int r0 = nv + 3 * i;
      if (c == 0) { // separated: r = 0
        for (int a = 0; a < 3; a++) ti[t] = r0 + a, tj[t] = r0 + a, tx[t++] = 1, F[r0 + a] = -ri[a];
        continue;
      }
      // in contact: u_n = 0 (the normal row of J, compliance and the proximal weight on dr_n)
      for (fl_int q = J->rowptr[3 * i]; q < J->rowptr[3 * i + 1]; q++)
        ti[t] = r0, tj[t] = J->col[q], tx[t++] = J->val[q];
      ti[t] = r0, tj[t] = r0, tx[t++] = d->Rn[i] + del;
      F[r0] = -ui[0];
      if (!(mu > 0)) { // frictionless: r_t = 0
        for (int a = 1; a < 3; a++) ti[t] = r0 + a, tj[t] = r0 + a, tx[t++] = 1, F[r0 + a] = -ri[a];
        continue;
      }
      if (c == 1) { // sticking: u_t = 0
        for (int a = 1; a < 3; a++) {
          for (fl_int q = J->rowptr[3 * i + a]; q < J->rowptr[3 * i + a + 1]; q++)
            ti[t] = r0 + a, tj[t] = J->col[q], tx[t++] = J->val[q];
          ti[t] = r0 + a, tj[t] = r0 + a, tx[t++] = del;
          F[r0 + a] = -ui[a];
        }
        continue;
      }
      // sliding: r_t + mu r_n th = 0, th = u_t / |u_t| with its derivative where u_t points
      // against z_t (the slip the projection asks for); else th = -z_t / |z_t|, held fixed
      double nut = hypot(ui[1], ui[2]), nzt = hypot(zt[0], zt[1]);
      int own = nut > ut_eps && ui[1] * zt[0] + ui[2] * zt[1] < 0;
      double th[2] = {own ? ui[1] / nut : -zt[0] / nzt, own ? ui[2] / nut : -zt[1] / nzt};
      for (int a = 1; a < 3; a++) {
        ti[t] = r0 + a, tj[t] = r0 + a, tx[t++] = 1;
        ti[t] = r0 + a, tj[t] = r0, tx[t++] = mu * th[a - 1];
        F[r0 + a] = -(ri[a] + mu * ri[0] * th[a - 1]);
        if (!own) continue;
        // d th = (I - th th') du_t / |u_t|, du_t = J_t dv
        for (int b = 1; b < 3; b++) {
          double pm = ((a == b) - th[a - 1] * th[b - 1]) * mu * ri[0] / nut;
          if (pm == 0) continue;
          for (fl_int q = J->rowptr[3 * i + b]; q < J->rowptr[3 * i + b + 1]; q++)
            ti[t] = r0 + a, tj[t] = J->col[q], tx[t++] = pm * J->val[q];
        }
      }
    }
    // the step: UMFPACK on the assembled (non-symmetric) matrix
    void *sym = NULL, *num = NULL;
    int ok = umfpack_di_triplet_to_col(N, N, (fl_int)t, ti, tj, tx, Ap, Ai, Ax, NULL) == UMFPACK_OK;
    ok = ok && umfpack_di_symbolic(N, N, Ap, Ai, Ax, &sym, NULL, NULL) == UMFPACK_OK;
    ok = ok && umfpack_di_numeric(Ap, Ai, Ax, sym, &num, NULL, NULL) == UMFPACK_OK;
    ok = ok && umfpack_di_solve(UMFPACK_A, Ap, Ai, Ax, dx, F, num, NULL, NULL) == UMFPACK_OK;
    if (num) umfpack_di_free_numeric(&num);
    if (sym) umfpack_di_free_symbolic(&sym);
    for (fl_int k = 0; ok && k < N; k++) ok = isfinite(dx[k]);
    if (!ok) break;
    d->nfact++;
    // the merit at r (v(r) exact, as the interior point reports); halved steps while it rises
    // (ipm.crossover_halve of them; 0: full steps only)
    double raw = NAN, err = INFINITY, alpha = 1;
    for (int h = 0; h <= o->crossover_halve; h++, alpha *= 0.5) {
      for (fl_int k = 0; k < n; k++) d->r[k] = xr[k] + alpha * dx[nv + k];
      // the impulses into their cones (a sliding row holds |r_t| = mu r_n only to first order)
      for (fl_int i = 0; i < nc; i++) {
        double x[3] = {d->r[3 * i], d->r[3 * i + 1], d->r[3 * i + 2]};
        fl_cone_project(p->mu[i], x, d->r + 3 * i);
      }
      err = report(sv, d, p, &raw);
      if (err < cur) break;
    }
    if (!(err < cur) && o->crossover_halve > 0) break;
    memcpy(xr, d->r, bn);
    memcpy(xv, d->vr, bv);
    cur = err;
    d->nxit++;
    if (err < d->xbest) d->xbest = err;
    if (err < *best) {
      *best = err, since = 0;
      memcpy(d->rbest, xr, bn);
      memcpy(d->vbest, xv, bv);
      memcpy(gamma, xr, bn);
      memcpy(v, xv, bv);
    } else {
      since++;
    }
    fl_iter_stat st;
    fl_iter_stat_init(&st, ++*krec);
    st.error = *best;
    st.step = alpha;
    st.inner_iters = d->nfact;
    st.neval = 1;
    if (fl_solver_record(sv, &st) != 0) {
      stop = 1;
      break;
    }
    if (!isfinite(err) || since >= 5) break;
  }
done:
  fl_free(ti), fl_free(tj), fl_free(Ap), fl_free(Ai), fl_free(tx), fl_free(Ax);
  fl_free(F), fl_free(dx), fl_free(xr), fl_free(xv), fl_free(xu);
  return stop;
}


/* Mehrotra's predictor-corrector direction (dv, dy, drho) at the factorization of this
 * iteration (factor), mu_c the complementarity; *sigma the centring. 0, or 1 on a failed solve */
static int pc_direction(ipm_data *d, const fl_problem *p, int newton, double mu_c, double *sigma) {
  fl_int nc = d->nc, n = 3 * nc;
  // predictor: t = -lambda (so W t = -y)
  for (fl_int r = 0; r < n; r++) d->t[r] = -d->lam[r];
  scale_t(d, p);
  int bad = direction(d, p, newton, d->dya, d->drhoa) != 0;
  if (!bad) {
    double aa = fmin(1, max_step(d, p, d->dya, d->drhoa)), ma = 0;
    for (fl_int r = 0; r < n; r++) ma += (d->y[r] + aa * d->dya[r]) * (d->rho[r] + aa * d->drhoa[r]);
    ma /= nc;
    *sigma = fmin(1, pow(fmax(ma, 0) / mu_c, 3));
    // corrector: lambda o t = -lambda o lambda - (W^-1 dy_a) o (W drho_a) + sigma mu e
    for (fl_int i = 0; i < nc; i++) {
      int kk = cdim(p, i);
      double a1[3], b1[3], c1[3], l2[3], rc[3];
      mv3(d->Wi + 9 * i, d->dya + 3 * i, a1);
      mv3(d->Wm + 9 * i, d->drhoa + 3 * i, b1);
      jprod(kk, a1, b1, c1);
      jprod(kk, d->lam + 3 * i, d->lam + 3 * i, l2);
      for (int a = 0; a < 3; a++) rc[a] = -l2[a] - c1[a] + (a == 0 ? *sigma * mu_c : 0);
      jsolve(kk, d->lam + 3 * i, rc, d->t + 3 * i);
    }
    scale_t(d, p);
    bad = direction(d, p, newton, d->dy, d->drho) != 0;
  }
  return bad;
}


static int ipm_solve(fl_solver *sv, const fl_problem *p, double *v, double *gamma) {
  ipm_data *d = sv->data;
  const ipm_opts *o = sv->opts;
  if (d->empty) return fl__solver_answer_empty(sv, p, v, gamma); // a global problem
  sv->cur_v = v;
  sv->cur_gamma = gamma;
  fl_iter_stat st;
  fl_int nc = d->nc, n = 3 * nc, nv = d->nv;
  size_t bn = (size_t)n * sizeof(double), bv = (size_t)nv * sizeof(double);
  d->nfact = 0, d->smooth2 = 0, d->ngm = 0, d->gmres_worst = 0;
  // scales: the free motion's rms velocity and the impulse that changes it by that much
  double wmean = 0;
  for (fl_int i = 0; i < nc; i++) wmean += d->w[i] / nc;
  memcpy(d->v, p->vstar, bv);
  memset(d->rho, 0, bn);
  memset(d->y, 0, bn);
  residuals(d, p, 1);
  double urms = sqrt(dot(n, d->u, d->u) / n);
  if (!(urms > 0) || !isfinite(urms)) urms = 1;
  double tu = o->init_scale * urms, tr = tu / wmean;
  if (sv->common.warm_start) { // the guess's impulses: v = v(r), rho = S^-1 r pushed inside
    for (fl_int i = 0; i < nc; i++) {
      double mu = p->mu[i], *ri = d->r + 3 * i, *zi = d->rho + 3 * i;
      for (int a = 0; a < 3; a++) ri[a] = isfinite(gamma[3 * i + a]) ? gamma[3 * i + a] : 0;
      if (!(mu > 0)) ri[1] = ri[2] = 0;
      zi[0] = ri[0], zi[1] = mu > 0 ? ri[1] / mu : 0, zi[2] = mu > 0 ? ri[2] / mu : 0;
    }
    fl_csr_gemtv(p->J, 1.0, d->r, 0.0, d->tmp);
    fl_dynamics_solve_A(d->dyn, d->tmp, d->v);
    for (fl_int k = 0; k < nv; k++) d->v[k] += p->vstar[k];
  }
  for (fl_int i = 0; i < nc; i++)
    push_inside(cdim(p, i), d->rho + 3 * i, sv->common.warm_start ? o->warm_margin * tr : tr);
  residuals(d, p, 1);
  for (fl_int i = 0; i < nc; i++) {
    double *yi = d->y + 3 * i, *gi = d->g + 3 * i;
    yi[0] = gi[0] + d->Rn[i] * d->rho[3 * i], yi[1] = gi[1], yi[2] = gi[2];
    push_inside(cdim(p, i), yi, sv->common.warm_start ? o->warm_margin * tu : tu);
  }
  residuals(d, p, 0);
  double raw = NAN, err = report(sv, d, p, &raw), best = err;
  memcpy(gamma, d->r, bn);
  memcpy(v, d->vr, bv);
  memcpy(d->rbest, d->r, bn);
  memcpy(d->vbest, d->vr, bv);
  fl_iter_stat_init(&st, 0);
  st.error = err;
  st.objective = (dot(n, d->y, d->rho)) / nc;
  st.inner_iters = 0;
  if (fl_solver_record(sv, &st) != 0) return FL_OK;
  int since_best = 0, newton = o->newton_shift && o->shift_update, round_it = 0, nround = 0;
  double mu_round = dot(n, d->y, d->rho) / nc;
  d->npol = 0, d->switched = 0, d->nunblock = 0, d->nalign = 0, d->nretry = d->nretry_won = 0;
  d->nxtry = 0, d->nxit = 0, d->xbest = INFINITY;
  int koff = 0; // records taken by the crossover
  int nshort = 0; // exact steps in a row shorter than collapse_step
  double xlast = INFINITY; // the best merit at the last crossover try
  for (int k = 1;; k++) {
    int bad = factor(d, p, newton) != 0;
    double mu_c = dot(n, d->y, d->rho) / nc, alpha = 0, sigma = NAN;
    if (!bad) bad = pc_direction(d, p, newton, mu_c, &sigma);
    if (!bad) {
      alpha = fmin(1, o->frac * max_step(d, p, d->dy, d->drho));
      if (newton && alpha < o->frozen_retry && d->sdy) {
        // the exact step is short: the frozen shift's step from the same point, if longer
        memcpy(d->sdy, d->dy, bn), memcpy(d->sdrho, d->drho, bn), memcpy(d->sdv, d->dv, bv);
        double s2 = NAN, a2 = 0;
        d->nretry++;
        if (factor(d, p, 0) == 0 && pc_direction(d, p, 0, mu_c, &s2) == 0)
          a2 = fmin(1, o->frac * max_step(d, p, d->dy, d->drho));
        if (a2 > alpha) {
          alpha = a2, sigma = s2;
          d->nretry_won++;
        } else {
          memcpy(d->dy, d->sdy, bn), memcpy(d->drho, d->sdrho, bn), memcpy(d->dv, d->sdv, bv);
        }
      }
      for (fl_int r = 0; r < n; r++) {
        d->y[r] += alpha * d->dy[r];
        d->rho[r] += alpha * d->drho[r];
      }
      for (fl_int r = 0; r < nv; r++) d->v[r] += alpha * d->dv[r];
      if (alpha < o->unblock_step && o->unblock > 0) {
        // the contacts that blocked a short step: pushed back inside (a local re-centring)
        double amax = alpha / o->frac;
        for (fl_int i = 0; i < nc; i++) {
          int kk = cdim(p, i);
          double *yi = d->y + 3 * i, *zi = d->rho + 3 * i;
          double ay = cone_step(kk, yi, d->dy + 3 * i), az = cone_step(kk, zi, d->drho + 3 * i);
          if (fmin(ay, az) > 10 * amax) continue;
          double ny = kk == 1 ? fabs(yi[0]) : sqrt(dot(3, yi, yi));
          double nz = kk == 1 ? fabs(zi[0]) : sqrt(dot(3, zi, zi));
          yi[0] += o->unblock * ny, zi[0] += o->unblock * nz;
          d->nunblock++;
        }
      }
      if (newton && alpha < o->align_step) {
        // a sliding contact has y on the cone's boundary (u_n = 0); where rho is on it too and
        // rho_t does not point against y_t the pair is not complementary, and turning rho_t
        // along the boundary takes steps that shrink geometrically (measured: one such contact
        // held a granular_1e3 stand-in for 100 iterations): turn the friction against the
        // slip
        double amax = alpha / o->frac;
        for (fl_int i = 0; i < nc; i++) {
          if (cdim(p, i) == 1) continue;
          double *yi = d->y + 3 * i, *zi = d->rho + 3 * i;
          double ay = cone_step(3, yi, d->dy + 3 * i), az = cone_step(3, zi, d->drho + 3 * i);
          if (fmin(ay, az) > 10 * amax) continue;
          double nyt = hypot(yi[1], yi[2]), nzt = hypot(zi[1], zi[2]);
          if (!(nyt > 0) || !(nzt > 0)) continue;
          if (yi[0] - nyt > o->align_depth * yi[0] || zi[0] - nzt > o->align_depth * zi[0]) continue;
          if ((yi[1] * zi[1] + yi[2] * zi[2]) / (nyt * nzt) <= o->align_cos) continue;
          double sc = o->align_keep * zi[0] / nyt;
          zi[1] = -sc * yi[1], zi[2] = -sc * yi[2];
          d->nalign++;
        }
      }
      d->smooth2 = o->smooth * dot(n, d->y, d->rho) / nc;
      residuals(d, p, o->shift_update);
      if (o->snap > 0) {
        for (fl_int i = 0; i < nc; i++) {
          int kk = cdim(p, i);
          double *yi = d->y + 3 * i, *rpi = d->rp + 3 * i, c[3];
          for (int a = 0; a < 3; a++) c[a] = yi[a] + rpi[a];
          double dc = kk == 1 ? c[0] : c[0] - hypot(c[1], c[2]);
          double dyy = kk == 1 ? yi[0] : yi[0] - hypot(yi[1], yi[2]);
          if (dc >= o->snap * dyy)
            for (int a = 0; a < 3; a++) yi[a] = c[a], rpi[a] = 0;
        }
      }
      err = report(sv, d, p, &raw);
      if (!isfinite(err)) bad = 2;
    }
    round_it++;
    if (!bad && o->rounds && !o->shift_update &&
        (dot(n, d->y, d->rho) / nc <= o->round_rel * mu_round || round_it >= o->round_max)) {
      // the next round: the shift at v(r), the iterate pushed back inside
      memcpy(d->v, d->vr, bv);
      residuals(d, p, 1);
      for (fl_int i = 0; i < nc; i++) {
        double *yi = d->y + 3 * i, *gi = d->g + 3 * i;
        push_inside(cdim(p, i), d->rho + 3 * i, o->warm_margin * tr);
        yi[0] = gi[0] + d->Rn[i] * d->rho[3 * i], yi[1] = gi[1], yi[2] = gi[2];
        push_inside(cdim(p, i), yi, o->warm_margin * tu);
      }
      residuals(d, p, 0);
      mu_round = dot(n, d->y, d->rho) / nc, round_it = 0, nround++;
      since_best = 0;
    }
    if (!bad && err < best) {
      best = err, since_best = 0;
      memcpy(d->rbest, d->r, bn);
      memcpy(d->vbest, d->vr, bv);
    } else {
      since_best++;
    }
    // hand out the best iterate so far (the merit is not monotone along the path)
    memcpy(gamma, d->rbest, bn);
    memcpy(v, d->vbest, bv);
    fl_iter_stat_init(&st, k + koff);
    st.error = best;
    st.objective = dot(n, d->y, d->rho) / nc;
    st.step = alpha;
    st.gradient = sqrt(dot(nv, d->rd, d->rd));
    st.inner_residual = sqrt(dot(n, d->rp, d->rp));
    st.inner_iters = d->nfact;
    st.neval = 2;
    if (fl_solver_record(sv, &st) != 0) break;
    if (o->crossover && ((best <= o->crossover_tol && best <= 0.1 * xlast) ||
                         ((since_best >= o->stall_iter || bad) && best < xlast))) {
      xlast = best;
      int kr = k + koff;
      int stop = crossover(sv, d, p, &best, &kr, v, gamma);
      koff = kr - k;
      if (stop) break;
    }
    if (d->pol && (best <= o->polish_tol || since_best >= o->stall_iter || bad))
      return run_polish(sv, p, v, gamma, k + koff);
    if (bad) {
      sv->reason = bad == 2 ? FL_DIVERGED_NAN : FL_DIVERGED_LINEAR_SOLVER;
      break;
    }
    nshort = newton && !bad && alpha < o->collapse_step ? nshort + 1 : 0;
    if (newton && o->switch_frozen && o->collapse_iter > 0 && nshort >= o->collapse_iter) {
      newton = 0, since_best = 0, d->switched = k; // the exact steps collapse: freeze the shift
      continue;
    }
    if (since_best >= o->stall_iter && newton && o->switch_frozen) {
      newton = 0, since_best = 0, d->switched = k; // the exact step stalls: freeze the shift
      continue;
    }
    if (since_best >= o->stall_iter) {
      sv->reason = FL_DIVERGED_STAGNATION;
      break;
    }
  }
  return sv->reason == FL_REASON_ABORT ? sv->abort_code : FL_OK;
}


static void ipm_view(const fl_solver *s, FILE *f) {
  const ipm_data *d = s->data;
  if (d && d->switched) fprintf(f, "ipm: the shift was frozen after a stall at iteration %d\n", d->switched);
  if (d && d->nxtry)
    fprintf(f, "ipm: crossover: %d tries, %d Newton steps, best merit %.3g\n", d->nxtry, d->nxit,
            d->xbest);
  if (d && d->pol) fprintf(f, "ipm: %d of the last solve's records are the polish's (pnewton)\n", d->npol);
  if (d && d->nretry)
    fprintf(f, "ipm: %ld short exact steps retried with the shift frozen, %ld of them taken\n",
            d->nretry, d->nretry_won);
  if (d && d->nalign) fprintf(f, "ipm: %ld contacts re-aligned (align_step)\n", d->nalign);
  if (d && d->gm)
    fprintf(f, "ipm: the exact step by GMRES on the frozen matrix's Cholesky: %ld iterations in "
            "the last solve, largest final relative residual %.3g\n", d->ngm, d->gmres_worst);
  fprintf(f, "ipm: reduced system %ld x %ld, %ld nonzeros; %s factors %.4g entries (%.3g GB), "
          "%.3g flops per factorization; %d factorizations in the last solve\n",
          d && d->red.K ? (long)d->red.K->nrow : 0L, d && d->red.K ? (long)d->red.K->nrow : 0L,
          d && d->red.K ? (long)d->red.K->nnz : 0L, d && d->sym ? "LU (UMFPACK)" : "Cholesky (CHOLMOD)",
          d ? d->lnz : 0.0, d ? d->fact_gb : 0.0, d ? d->flops : 0.0, d ? d->nfact : 0);
}


const fl_solver_ops fl_ipm_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "ipm",
  .summary = "primal-dual interior point (Nesterov-Todd, Mehrotra) on the global form's cone "
             "program with De Saxce's shift; LU (UMFPACK) of A + J^T D J, or Cholesky "
             "(CHOLMOD) with the shift frozen",
  .opts_size = sizeof(ipm_opts),
  .options = ipm_table,
  .data_size = sizeof(ipm_data),
  .caps = FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_NEEDS_AJ | FL_CAP_WARMSTART,
  .setup = ipm_setup,
  .solve = ipm_solve,
  .view = ipm_view,
  .destroy = ipm_destroy,
  .common_defaults = "max_iter=500",
};

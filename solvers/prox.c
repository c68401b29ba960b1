// SPDX-License-Identifier: Apache-2.0
/* prox.c: proximal-point outer loop with an inner NSN (as Siconos's FRICTION_3D_PROX).
 *
 * On a local problem (u = W gamma + q, Coulomb's law per contact) each outer iteration solves
 * the regularized problem
 *
 *   W' = W + sigma I,   q' = q - sigma gamma_k,   gamma_{k+1} = its solution,
 *
 * whose fixed point gamma_{k+1} = gamma_k is a solution of the original problem (the sigma
 * terms cancel). sigma = 1/alpha in Siconos's notation (N s per m/s inverted: W's units). W'
 * is better conditioned than W, so the inner solver (nsn with ncp=ac: exact Alart-Curnier
 * Newton, warm-started at gamma_k, its Jacobians factorized by KLU) converges where it does not
 * on W itself (Capsules files).
 *
 * sigma adapts: it starts at prox.sigma times the mean diagonal of W; an inner solve that
 * converges in at most prox.fast iterations divides it by prox.shrink (closer to the original
 * problem, fewer outer iterations), one that fails multiplies it by prox.shrink and its result
 * is kept only if the outer error decreased. On local problems sigma is also held at most
 * prox.sigma_err x (outer error) x mean W_ii, as Siconos's PROX sets alpha = 5 err: the
 * regularization vanishes with the error, so the outer iteration converges superlinearly
 * (Capsules-i101-404: 2 outer iterations instead of 7). There a step that raised the outer
 * error is undone and counts as a failure, and the rule does not go below the sigma that
 * followed the last failure. The inner solves search non-monotonically (ac.nonmono=8: on
 * W + sigma I with small sigma the monotone Armijo steps shrink for many iterations at the
 * stick/slip kinks; 67 inner iterations become 48 on Capsules-i101-404). The inner tolerance is
 * max(0.1 abs_tol, prox.inner_rel x the current outer error), taken as a raw residual and
 * multiplied by the normalization's divisor where that is below 1 (so that it always lies
 * below the raw error the inner solve starts from).
 *
 * Own residual: the natural map with De Saxce's correction, ||gamma - P_K(gamma - uhat)||_2,
 * normalized as the common `norm` option says (fclib: / (1 + sqrt ||q||); siconos: / max(||q||,
 * ||gamma||, ||u||); none: raw), i.e. the common merit, so abs_tol is the merit tolerance.
 * Records: step = sigma of the inner solve, inner_iters = its Newton iterations.
 * Global problems without bilateral rows are solved in their local form (fl_problem_local_form:
 * W = J A^-1 J^T, q = J v* + b, formed in setup), handing out v = v* + A^-1 J^T gamma.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "../core/fl_contact_ops.h"
#include "local_kit.h"

#define PROX_KLU_MAX 1500 /* inner LU by KLU up to this many rows, UMFPACK above */

typedef struct {
  double sigma;     /* initial sigma / mean W_ii */
  double shrink;    /* sigma factor per adaptation */
  int fast;         /* inner iterations counted as fast */
  int inner_max_iter;
  double inner_rel; /* inner tolerance relative to the outer error */
  double sigma_err; /* local problems, > 0: sigma <= sigma_err x err x mean W_ii */
} prox_opts;

#define PO(f) offsetof(prox_opts, f)
static const fl_option_desc prox_table[] = {
  {"sigma", FL_OPT_REAL, PO(sigma), 1e-12, 1e12, 1.0, NULL,
   "initial proximal weight sigma (= 1/alpha) relative to the mean diagonal of W"},
  {"shrink", FL_OPT_REAL, PO(shrink), 1, 1e6, 10.0, NULL,
   "sigma is divided by this after a fast inner solve and multiplied after a failed one"},
  {"fast", FL_OPT_INT, PO(fast), 0, 1e6, 6, NULL,
   "an inner solve converging in at most this many Newton iterations is fast"},
  {"inner_max_iter", FL_OPT_INT, PO(inner_max_iter), 1, 1e8, 50, NULL,
   "Newton iterations of each inner nsn solve"},
  {"inner_rel", FL_OPT_REAL, PO(inner_rel), 0, 1, 1e-2, NULL,
   "inner tolerance relative to the current outer error (floor 0.1 abs_tol)"},
  {"sigma_err", FL_OPT_REAL, PO(sigma_err), 0, 1e12, 0.3, NULL,
   "local problems, > 0: sigma is at most sigma_err x (outer error) x mean W_ii, from the "
   "start and after every inner solve that lowered the outer error; a step that raised it "
   "is undone and counts as failed (sigma x shrink, and the rule stays above that); "
   "0 = the halving rule alone (prox.fast, prox.shrink), which global problems keep"},
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}};

typedef struct {
  fl_problem *pp;   /* the regularized problem (owned): W' and q' change per outer step */
  fl_problem *pl;   /* global problems: their local form (owned); NULL for local ones */
  fl_dynamics *dyn; /* global problems: A's factors, for B = J A^-1 */
  const fl_csr *B;  /* J A^-1, owned by dyn */
  fl_int *diag;     /* (n) position of W'_ii in pp->W */
  double *wdiag;    /* (n) W_ii */
  double *gk, *u;   /* (n) */
  fl_solver *inner; /* nsn */
  double wmean, norm_q;
  double scale; /* divisor of the last prox_error (its norm), > 0 */
  int empty;        /* no contact rows: the answer is v*, gamma empty */
} prox_data;


static void prox_destroy(fl_solver *s) {
  prox_data *d = s->data;
  if (!d) return;
  fl_solver_destroy(d->inner);
  fl_problem_free(d->pp);
  fl_problem_free(d->pl);
  fl_dynamics_free(d->dyn);
  fl_free(d->diag);
  fl_free(d->wdiag);
  fl_free(d->gk);
  fl_free(d->u);
  memset(d, 0, sizeof(*d));
}


/* W with every diagonal entry stored (FCLIB files may omit zero ones) */
static int copy_with_diag(const fl_csr *W, fl_csr **out) {
  fl_int n = W->nrow, nnz = W->nnz;
  for (fl_int i = 0; i < n; i++) {
    int has = 0;
    for (fl_int k = W->rowptr[i]; k < W->rowptr[i + 1]; k++) has |= W->col[k] == i;
    nnz += !has;
  }
  FL_TRY(fl_csr_alloc(n, W->ncol, nnz, out));
  fl_csr *A = *out;
  fl_int q = 0;
  A->rowptr[0] = 0;
  for (fl_int i = 0; i < n; i++) {
    int done = 0;
    for (fl_int k = W->rowptr[i]; k < W->rowptr[i + 1]; k++) {
      if (!done && W->col[k] > i) {
        A->col[q] = i, A->val[q++] = 0;
        done = 1;
      }
      done |= W->col[k] == i;
      A->col[q] = W->col[k], A->val[q++] = W->val[k];
    }
    if (!done) A->col[q] = i, A->val[q++] = 0;
    A->rowptr[i + 1] = q;
  }
  A->nnz = q;
  return FL_OK;
}


static int prox_setup(fl_solver *s, const fl_problem *p) {
  prox_data *d = s->data;
  const prox_opts *o = s->opts;
  if (p->nh > 0 || (p->kind == FL_PROBLEM_LOCAL && (!p->W || !p->q)))
    return fl_seterr(FL_ERR_UNSUPPORTED, "prox: %s: needs contact rows only (no bilateral "
                     "rows) and, for a local problem, W and q", p->name);
  if (p->nc == 0) {
    d->empty = 1;
    return FL_OK;
  }
  if (p->kind == FL_PROBLEM_GLOBAL) {
    FL_TRY(fl_problem_local_problem(p, &d->dyn, &d->pl));
    d->B = fl_dynamics_JAinv(d->dyn);
    p = d->pl;
  }
  fl_int n = 3 * p->nc;
  size_t nn = (size_t)(n > 0 ? n : 1);
  FL_TRY(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, p->nc, 0, 0, &d->pp));
  fl_problem *pp = d->pp;
  snprintf(pp->name, sizeof pp->name, "%s", p->name);
  memcpy(pp->mu, p->mu, (size_t)p->nc * sizeof(double));
  FL_TRY(copy_with_diag(p->W, &pp->W));
  d->diag = fl_malloc(nn * sizeof(fl_int));
  d->wdiag = fl_malloc(nn * sizeof(double));
  d->gk = fl_malloc(nn * sizeof(double));
  d->u = fl_malloc(nn * sizeof(double));
  if (!d->diag || !d->wdiag || !d->gk || !d->u) return fl_seterr(FL_ERR_NOMEM, "prox: out of memory");
  double sum = 0, q2 = 0;
  for (fl_int i = 0; i < n; i++) {
    for (fl_int k = pp->W->rowptr[i]; k < pp->W->rowptr[i + 1]; k++)
      if (pp->W->col[k] == i) d->diag[i] = k;
    d->wdiag[i] = pp->W->val[d->diag[i]];
    sum += fabs(d->wdiag[i]);
    q2 += p->q[i] * p->q[i];
  }
  d->wmean = n > 0 && sum > 0 ? sum / n : 1;
  d->norm_q = sqrt(q2);
  memcpy(pp->q, p->q, nn * sizeof(double));
  FL_TRY(fl_solver_create("nsn", &d->inner));
  char buf[128];
  // KLU below PROX_KLU_MAX rows: W + sigma I keeps the Newton matrices well conditioned, and
  // KLU's small cost per factorization takes 2.7x fewer instructions than UMFPACK on
  // Capsules-i101-404 (675 rows); from Kaplas's 1710 rows on, UMFPACK's dense fronts win
  // a non-monotone search (ac.nonmono): on W + sigma I with small sigma the monotone Armijo
  // steps shrink for many iterations at the stick/slip kinks
  snprintf(buf, sizeof buf,
           "warm_start=1,error_every=0,norm=none,ncp=ac,ac.nonmono=8,ac.lu=%s,max_iter=%d",
           n <= PROX_KLU_MAX ? "klu" : "sparse", o->inner_max_iter);
  return fl_solver_set_options(d->inner, buf);
}


/* the own residual (see the top), u = W gamma + q into d->u */
static double prox_error(const fl_solver *s, const fl_problem *p, const double *gamma) {
  prox_data *d = s->data;
  double g2, u2;
  double raw = fl__local_residual(p, gamma, d->u, NULL, &g2, &u2);
  // the normalization's divisor, kept to state the inner (raw) tolerance
  d->scale = fl__merit_divisor(s->common.norm, d->norm_q, g2, u2);
  return raw / d->scale;
}


static int prox_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  prox_data *d = s->data;
  const prox_opts *o = s->opts;
  if (d->empty) return fl__solver_answer_empty(s, p, v, gamma); // nothing to solve
  fl_problem *pp = d->pp;
  const fl_problem *pg = p; // the problem as given (global or local)
  if (d->pl) p = d->pl;
  fl_int n = 3 * p->nc;
  s->cur_v = d->pl ? v : NULL;
  s->cur_gamma = gamma;
  fl__global_velocity(d->B, pg, gamma, v);

  double err = prox_error(s, p, gamma);
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  st.error = err;
  if (fl_solver_record(s, &st) != 0) return FL_OK;

  double sigma = o->sigma * d->wmean;
  // the error rule on local problems only: on world steps (global problems through their
  // local form) a small sigma from rest lets arch_masonry's steps fail (measured), while the
  // halving rule alone keeps them
  double serr = d->pl ? 0 : o->sigma_err;
  if (serr > 0) sigma = fmin(sigma, serr * err * d->wmean);
  double sfloor = 0; /* sigma of the last failed inner solve, times shrink: the error rule
                        does not go below it again (no ping-pong between fail and shrink) */
  for (int k = 1;; k++) {
    // the regularized problem at gamma_k, solved from gamma_k
    memcpy(d->gk, gamma, (size_t)n * sizeof(double));
    for (fl_int r = 0; r < n; r++) {
      pp->W->val[d->diag[r]] = d->wdiag[r] + sigma;
      pp->q[r] = p->q[r] - sigma * gamma[r];
    }
    char tol[64];
    // the inner solver measures raw residuals (norm=none), and its solve starts at the outer
    // raw error err * scale: the tolerance must lie below that, or the inner solve stops at
    // its start and the outer loop never moves (a small q under norm=siconos). So the
    // normalized tolerance is taken as raw, but scaled down where the divisor is below 1.
    snprintf(tol, sizeof tol, "%.17g",
             fmax(0.1 * s->common.abs_tol, o->inner_rel * err) * fmin(1.0, d->scale));
    FL_TRY(fl_solver_set_option(d->inner, "abs_tol", tol));
    if (isfinite(s->common.time_limit)) { // the inner solve keeps to what is left of the limit
      snprintf(tol, sizeof tol, "%.17g", fmax(0.0, s->common.time_limit - fl_solver_elapsed(s)));
      FL_TRY(fl_solver_set_option(d->inner, "time_limit", tol));
    }
    FL_TRY(fl_solver_setup(d->inner, pp));
    fl_result res;
    FL_TRY(fl_solver_solve(d->inner, pp, NULL, gamma, &res));
    int finite = 1;
    for (fl_int r = 0; finite && r < n; r++) finite = isfinite(gamma[r]);
    double e = finite ? prox_error(s, p, gamma) : NAN;
    double used = sigma;
    // with the error rule, a converged inner solve whose step raised the outer error counts
    // as a failed one: sigma was too small for the problem's conditioning (arches from rest)
    int grew = serr > 0 && res.reason > 0 && !(e <= err);
    if (res.reason > 0 && !grew) {
      if (res.iters <= o->fast) sigma /= o->shrink;
      if (serr > 0) // the error rule, which alone does not go below the last failure's
        sigma = fmin(sigma, fmax(serr * e * d->wmean, sfloor));
    } else if (res.reason < 0 || grew) {
      sigma *= o->shrink;
      if (serr > 0) sfloor = fmax(sfloor, sigma);
    }
    if (!(e < err) && (res.reason < 0 || grew)) { // a failed or grown step: undo it
      memcpy(gamma, d->gk, (size_t)n * sizeof(double));
      e = err;
    }
    if (sigma < DBL_MIN) sigma = DBL_MIN;
    err = e;
    fl_iter_stat_init(&st, k);
    st.error = err;
    st.step = used;
    st.inner_iters = res.iters;
    st.inner_residual = res.error;
    double dm = 0;
    for (fl_int r = 0; r < n; r++) dm = fmax(dm, fabs(gamma[r] - d->gk[r]));
    st.step_norm = dm;
    fl__global_velocity(d->B, pg, gamma, v);
    if (fl_solver_record(s, &st) != 0) break;
  }
  return FL_OK;
}


static void prox_view(const fl_solver *s, FILE *f) {
  const prox_data *d = s->data;
  fprintf(f, "prox: inner nsn (ncp=ac)%s\n", d && d->pp ? "" : ", not set up");
}


const fl_solver_ops fl_prox_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "prox",
  .summary = "proximal point (W + sigma I, adaptive sigma) with an inner Alart-Curnier NSN "
             "(Siconos's PROX); global problems through their local form",
  .opts_size = sizeof(prox_opts),
  .options = prox_table,
  .data_size = sizeof(prox_data),
  .caps = FL_CAP_RIGID | FL_CAP_LOCAL | FL_CAP_WARMSTART,
  .setup = prox_setup,
  .solve = prox_solve,
  .view = prox_view,
  .destroy = prox_destroy,
  .common_defaults = "max_iter=200",
};

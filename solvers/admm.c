// SPDX-License-Identifier: Apache-2.0
/* admm.c: ADMM on the local problem with De Saxce's correction (as Siconos's FRICTION_3D_ADMM
 * and the proximal-ADMM of GPU contact engines). Derivation: docs/admm.md.
 *
 * With s = (mu ||u_t||, 0, 0) per contact held at its latest value, the problem is the cone QP
 *
 *   min 1/2 r'W r + (q + s)'r   s.t.  r = z,  z in K (the friction cones),
 *
 * whose optimality conditions are u + s = -y in K*, y' z = 0 (y the multiplier of r = z), i.e.
 * Coulomb's law once s matches u. Scaled ADMM (xi = y / rho), over-relaxed by alpha:
 *
 *   r    = (W + rho I)^-1 (-q - s + rho (z - xi))          one triangular solve pair
 *   rh   = alpha r + (1 - alpha) z
 *   z'   = P_K(rh + xi)                                    per-contact cone projections
 *   xi'  = xi + rh - z'
 *   s'   = (mu ||(W z' + q)_t||, 0, 0)
 *
 * W + rho I is symmetric positive definite (W = H M^-1 H' is positive semidefinite), so it is
 * factorized by CHOLMOD: the symbolic analysis once in setup, a numeric refactorization only
 * when rho changes. rho adapts by residual balancing: every admm.adapt_every iterations the
 * candidate rho sqrt((||r - z|| / max(||r||, ||z||)) / (||rho (z' - z)|| / ||y||)) replaces rho
 * only when it differs by more than the factor admm.adapt_factor (xi is rescaled with it).
 *
 * Own residual: the common merit at z (a point of K), the natural map with De Saxce's
 * correction normalized as `norm` says (as solvers/prox.c). Records: step = rho,
 * inner_iters = 1 on a refactorization, else 0. Global problems without bilateral rows are
 * solved in their local form (fl_problem_local_problem), handing out v = v* + A^-1 J' gamma.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include <cholmod.h>

#include "local_kit.h"

typedef struct {
  double rho;          /* initial rho / mean W_ii */
  double alpha;        /* over-relaxation */
  int adapt_every;     /* iterations between rho updates (0: fixed rho) */
  double adapt_factor; /* refactorize only when rho changes by more than this */
} admm_opts;

#define AO(f) offsetof(admm_opts, f)
static const fl_option_desc admm_table[] = {
  {"rho", FL_OPT_REAL, AO(rho), 1e-12, 1e12, 1.0, NULL,
   "initial penalty rho relative to the mean diagonal of W"},
  {"alpha", FL_OPT_REAL, AO(alpha), 0.1, 1.99, 1.6, NULL,
   "over-relaxation alpha in (0, 2): rh = alpha r + (1 - alpha) z"},
  {"adapt_every", FL_OPT_INT, AO(adapt_every), 0, 1e8, 10, NULL,
   "iterations between residual-balancing updates of rho (0: rho fixed)"},
  {"adapt_factor", FL_OPT_REAL, AO(adapt_factor), 1, 1e12, 5.0, NULL,
   "rho is changed (and W + rho I refactorized) only when the balanced value differs by more "
   "than this factor"},
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}};

typedef struct {
  fl_problem *pl;   /* global problems: their local form (owned); NULL for local ones */
  fl_dynamics *dyn; /* global problems: A's factors, for B = J A^-1 */
  const fl_csr *B;  /* J A^-1, owned by dyn */
  fl_csr *Ws;       /* W not symmetric: its symmetric part (owned), factorized in W's place */
  fl__chol ch;       /* W + rho I's factor (local_kit.h) */
  double *r, *xi, *s, *u, *rhs, *zold, *tmp, *zbest; /* (n) */
  double wmean, norm_q;
  double raw; /* the last admm_error's raw (unnormalized) residual */
  int empty; /* no contact rows */
} admm_data;


static void admm_destroy(fl_solver *s) {
  admm_data *d = s->data;
  if (!d) return;
  fl__chol_free(&d->ch);
  fl_problem_free(d->pl);
  fl_dynamics_free(d->dyn);
  fl_free(d->r);
  fl_free(d->xi);
  fl_free(d->s);
  fl_free(d->u);
  fl_free(d->rhs);
  fl_free(d->zold);
  fl_free(d->tmp);
  fl_free(d->zbest);
  fl_csr_free(d->Ws);
  memset(d, 0, sizeof(*d));
}


/* Ws = (W + W') / 2 */
static int symmetric_part(const fl_csr *W, fl_csr **out) {
  fl_int nnz = W->nnz, n = W->nrow;
  size_t m = (size_t)(2 * nnz > 0 ? 2 * nnz : 1);
  fl_int *ti = fl_malloc(m * sizeof(fl_int)), *tj = fl_malloc(m * sizeof(fl_int));
  double *tv = fl_malloc(m * sizeof(double));
  int rc = FL_OK;
  if (!ti || !tj || !tv) {
    rc = fl_seterr(FL_ERR_NOMEM, "admm: out of memory");
  } else {
    fl_int t = 0;
    for (fl_int i = 0; i < n; i++)
      for (fl_int k = W->rowptr[i]; k < W->rowptr[i + 1]; k++) {
        ti[t] = i, tj[t] = W->col[k], tv[t++] = 0.5 * W->val[k];
        ti[t] = W->col[k], tj[t] = i, tv[t++] = 0.5 * W->val[k];
      }
    rc = fl_csr_from_triplets(n, n, t, ti, tj, tv, out);
  }
  fl_free(ti);
  fl_free(tj);
  fl_free(tv);
  return rc;
}


static int admm_setup(fl_solver *s, const fl_problem *p) {
  admm_data *d = s->data;
  if (p->nh > 0 || (p->kind == FL_PROBLEM_LOCAL && (!p->W || !p->q)))
    return fl_seterr(FL_ERR_UNSUPPORTED, "admm: %s: needs contact rows only (no bilateral "
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
  const fl_csr *W = p->W;
  fl_int n = 3 * p->nc;
  // W should be symmetric (both triangles stored: CHOLMOD reads one); files rounded on
  // output are not quite, and their symmetric part is factorized instead
  double asym = 0, wmax = 0, sum = 0, q2 = 0;
  for (fl_int i = 0; i < n; i++) {
    for (fl_int k = W->rowptr[i]; k < W->rowptr[i + 1]; k++) {
      asym = fmax(asym, fabs(W->val[k] - fl_csr_get(W, W->col[k], i)));
      wmax = fmax(wmax, fabs(W->val[k]));
    }
    sum += fabs(fl_csr_get(W, i, i));
    q2 += p->q[i] * p->q[i];
  }
  if (!(asym <= 0.1 * wmax))
    return fl_seterr(FL_ERR_UNSUPPORTED, "admm: %s: W is far from symmetric (max |W_ij - W_ji| "
                     "= %g, max |W_ij| = %g); ADMM factorizes its symmetric part + rho I by "
                     "Cholesky", p->name, asym, wmax);
  if (asym > 1e-12 * wmax) FL_TRY(symmetric_part(W, &d->Ws));
  d->wmean = sum > 0 ? sum / n : 1;
  d->norm_q = sqrt(q2);
  size_t nn = (size_t)n;
  d->r = fl_malloc(nn * sizeof(double));
  d->xi = fl_malloc(nn * sizeof(double));
  d->s = fl_malloc(nn * sizeof(double));
  d->u = fl_malloc(nn * sizeof(double));
  d->rhs = fl_malloc(nn * sizeof(double));
  d->zold = fl_malloc(nn * sizeof(double));
  d->tmp = fl_malloc(nn * sizeof(double));
  d->zbest = fl_malloc(nn * sizeof(double));
  if (!d->r || !d->xi || !d->s || !d->u || !d->rhs || !d->zold || !d->tmp || !d->zbest)
    return fl_seterr(FL_ERR_NOMEM, "admm: out of memory");
  if (fl__chol_start(&d->ch) < 0) return fl_seterr(FL_ERR_LIBRARY, "admm: cholmod_start failed");
  if (fl__chol_analyze(&d->ch, d->Ws ? d->Ws : W) < 0)
    return fl_seterr(fl__cholmod_err(d->ch.cc.status),
                     "admm: %s: cholmod_analyze failed (status %d)", p->name, d->ch.cc.status);
  return FL_OK;
}


/* numeric factorization of W + rho I */
static int factor(admm_data *d, const fl_problem *p, double rho) {
  const fl_csr *Wf = d->Ws ? d->Ws : p->W;
  if (!fl__chol_factor(&d->ch, Wf, Wf->val, rho))
    return fl_seterr(FL_ERR_LIBRARY, "admm: %s: W + %g I is not positive definite (CHOLMOD "
                     "status %d): W is not positive semidefinite", p->name, rho, d->ch.cc.status);
  return FL_OK;
}


/* x = (W + rho I)^-1 b */
static int chol_solve(admm_data *d, fl_int n, double *b, double *x) {
  if (fl__chol_solve(&d->ch, n, b) < 0)
    return fl_seterr(fl__cholmod_err(d->ch.cc.status), "admm: cholmod_solve2 failed (status %d)",
                     d->ch.cc.status);
  memcpy(x, d->ch.X->x, (size_t)n * sizeof(double));
  return FL_OK;
}


/* u = W z + q, s = De Saxce's correction at u; the common merit at z (see the top) */
static double admm_error(const fl_solver *sv, const fl_problem *p, const double *z) {
  admm_data *d = sv->data;
  double g2, u2;
  d->raw = fl__local_residual(p, z, d->u, d->s, &g2, &u2);
  return d->raw / fl__merit_divisor(sv->common.norm, d->norm_q, g2, u2);
}


static int admm_solve(fl_solver *sv, const fl_problem *p, double *v, double *gamma) {
  admm_data *d = sv->data;
  const admm_opts *o = sv->opts;
  if (d->empty) return fl__solver_answer_empty(sv, p, v, gamma);
  const fl_problem *pg = p;
  if (d->pl) p = d->pl;
  fl_int n = 3 * p->nc;
  double *z = gamma; // the iterate handed out is z, a point of K
  sv->cur_v = d->pl ? v : NULL;
  sv->cur_gamma = gamma;
  // a warm start is projected onto K; y = -(u + s) there, i.e. xi = -(u + s) / rho
  for (fl_int i = 0; i < p->nc; i++) {
    double g[3] = {z[3 * i], z[3 * i + 1], z[3 * i + 2]};
    fl_cone_project(p->mu[i], g, z + 3 * i);
  }
  fl__global_velocity(d->B, pg, z, v);
  double err = admm_error(sv, p, z);
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  st.error = err;
  if (fl_solver_record(sv, &st) != 0) return FL_OK;

  double rho = o->rho * d->wmean;
  FL_TRY(factor(d, p, rho));
  for (fl_int r = 0; r < n; r++) d->xi[r] = -(d->u[r] + d->s[r]) / rho;
  memcpy(d->r, z, (size_t)n * sizeof(double));
  double a = o->alpha, best = err, raw0 = d->raw, rho_min = 1e-6 * d->wmean;
  memcpy(d->zbest, z, (size_t)n * sizeof(double));
  for (int k = 1;; k++) {
    int refac = 0;
    for (fl_int r = 0; r < n; r++) d->rhs[r] = -p->q[r] - d->s[r] + rho * (z[r] - d->xi[r]);
    if (d->Ws) { // the skew part (W - Ws) r taken at the previous r (linearized ADMM)
      fl_csr_gemv(d->Ws, 1.0, d->r, 0.0, d->tmp);
      fl_csr_gemv(p->W, -1.0, d->r, 1.0, d->tmp);
      for (fl_int r = 0; r < n; r++) d->rhs[r] += d->tmp[r];
    }
    FL_TRY(chol_solve(d, n, d->rhs, d->r));
    memcpy(d->zold, z, (size_t)n * sizeof(double));
    double rp2 = 0, rr2 = 0, zz2 = 0, dz2 = 0, y2 = 0;
    for (fl_int i = 0; i < p->nc; i++) {
      double x[3];
      for (int c = 0; c < 3; c++) {
        fl_int r = 3 * i + c;
        d->rhs[r] = a * d->r[r] + (1 - a) * d->zold[r]; // rh
        x[c] = d->rhs[r] + d->xi[r];
      }
      fl_cone_project(p->mu[i], x, z + 3 * i);
      for (int c = 0; c < 3; c++) {
        fl_int r = 3 * i + c;
        d->xi[r] += d->rhs[r] - z[r];
        double e = d->r[r] - z[r], dz = z[r] - d->zold[r];
        rp2 += e * e, rr2 += d->r[r] * d->r[r], zz2 += z[r] * z[r], dz2 += dz * dz;
        y2 += d->xi[r] * d->xi[r];
      }
    }
    err = admm_error(sv, p, z);
    if (!(err <= 1e3 * best) || (raw0 > 0 && !(d->raw <= 1e3 * raw0))) {
      // diverging (a small rho lets z drift along W's null space, which a normalization by
      // ||gamma|| hides, hence the raw test): back to the best iterate
      // with rho x100, and rho kept above a tenth of that from now on
      memcpy(z, d->zbest, (size_t)n * sizeof(double));
      err = admm_error(sv, p, z);
      double nr = fmin(100 * rho, 1e6 * d->wmean);
      rho_min = fmax(rho_min, nr / 10);
      rho = nr;
      FL_TRY(factor(d, p, rho));
      refac = 1;
      for (fl_int r = 0; r < n; r++) d->xi[r] = -(d->u[r] + d->s[r]) / rho;
      memcpy(d->r, z, (size_t)n * sizeof(double));
    } else if (err < best) {
      best = err;
      memcpy(d->zbest, z, (size_t)n * sizeof(double));
    }
    if (!refac && o->adapt_every > 0 && k % o->adapt_every == 0 && rp2 > 0 && dz2 > 0 && y2 > 0) {
      // residual balancing, primal ||r - z|| / max(||r||, ||z||) against dual
      // ||rho dz|| / ||y|| (y = rho xi, so rho cancels in the dual ratio)
      double prim = sqrt(rp2) / fmax(sqrt(fmax(rr2, zz2)), DBL_MIN);
      double dual = sqrt(dz2) / sqrt(y2);
      double cand = rho * sqrt(prim / dual);
      if (isfinite(cand) && (cand > o->adapt_factor * rho || cand * o->adapt_factor < rho)) {
        // at most x100 per update, within [rho_min, 1e6 mean W_ii] (W + rho I stays well
        // conditioned enough for the factorization where W is singular)
        cand = fmin(fmax(cand, rho / 100), rho * 100);
        cand = fmin(fmax(cand, rho_min), 1e6 * d->wmean);
        if (cand != rho) {
          for (fl_int r = 0; r < n; r++) d->xi[r] *= rho / cand;
          rho = cand;
          FL_TRY(factor(d, p, rho));
          refac = 1;
        }
      }
    }
    fl_iter_stat_init(&st, k);
    st.error = err;
    st.step = rho;
    st.inner_iters = refac;
    st.step_norm = sqrt(dz2);
    fl__global_velocity(d->B, pg, z, v);
    if (fl_solver_record(sv, &st) != 0) break;
  }
  return FL_OK;
}


static void admm_view(const fl_solver *s, FILE *f) {
  const admm_data *d = s->data;
  fprintf(f, "admm: W + rho I by CHOLMOD%s\n", d && d->ch.L ? "" : ", not set up");
}


const fl_solver_ops fl_admm_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "admm",
  .summary = "ADMM with De Saxce's correction (W + rho I by CHOLMOD, adaptive rho, "
             "over-relaxation; Siconos's ADMM); global problems through their local form",
  .opts_size = sizeof(admm_opts),
  .options = admm_table,
  .data_size = sizeof(admm_data),
  .caps = FL_CAP_RIGID | FL_CAP_LOCAL | FL_CAP_WARMSTART,
  .setup = admm_setup,
  .solve = admm_solve,
  .view = admm_view,
  .destroy = admm_destroy,
  .common_defaults = "max_iter=100000",
};

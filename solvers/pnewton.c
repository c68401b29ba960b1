// SPDX-License-Identifier: Apache-2.0
/* pnewton.c: proximal Alart-Curnier Newton on the global form (docs/pnewton.md).
 *
 * The unknowns are the impulses r (3nc) with the velocities v = v* + A^-1 J^T r eliminated
 * exactly (A is block diagonal by body: its inverse is cheap). Each outer (proximal) iteration
 * k solves, by semismooth Newton, the regularized problem
 *
 *   F_sigma(r) = AC(r, u(r) + Sigma (r - r_k)) = 0,    u(r) = J v(r) + b - vhat + R_n r_n,
 *
 * with AC Alart-Curnier's function per contact and Sigma = s diag(w_i) (w_i the mean diagonal
 * of contact i's Delassus block W_ii). The Newton system (A_i, B_i the generalized Jacobian
 * blocks of AC in r and u) is never formed in the contact space, whose matrix W = J A^-1 J^T
 * is singular for piles (more contact rows than dofs) and much denser than A and J. With
 * G_i = A_i + B_i (R_i + Sigma_i) (invertible for s > 0) and D_i = G_i^-1 B_i the contact
 * corrections are eliminated instead:
 *
 *   (A + sum_i J_i^T D_i J_i) dv = -sum_i J_i^T G_i^-1 F_i,   dr_i = G_i^-1 (-F_i - B_i J_i dv),
 *
 * an nv x nv sparse system with the pattern of the body adjacency graph (UMFPACK: symbolic
 * analysis once, a numeric factorization per Newton iteration). A backtracking search on
 * ||F_sigma|| globalizes each Newton step. s adapts as prox.c's sigma does: an inner solve
 * that converges in at most pnewton.fast iterations divides it by pnewton.shrink, a failed one
 * multiplies it.
 *
 * Friction continuation (pnewton.mu_steps > 0): Newton's function uses t mu, t stepping from 0
 * (frictionless, a convex problem Newton solves from far) to 1, each stage started from the last
 * answer; the own residual and the convergence test stay on the problem's mu.
 *
 * Own residual: the common merit (natural map with De Saxce's correction, normalized as the
 * common `norm` option says), the same quantity prox and admm stop on. Records (one per Newton
 * iteration): step = the search's step length (0: no decrease found), objective = ||F_sigma||,
 * inner_iters = Newton iterations into the current proximal step (0 after a new centre),
 * neval = residual evaluations of the search. Global problems without bilateral rows only.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include <umfpack.h>

#include "local_kit.h"
#include "reduced.h"

typedef struct {
  double sigma;  /* initial s: Sigma = s diag(w_i) */
  double shrink; /* s factor per adaptation */
  double sigma_min; /* floor of s */
  int fast;      /* inner Newton iterations counted as fast */
  int inner_max_iter;
  double inner_rel; /* inner stop: ||F_sigma|| <= inner_rel ||F(r_k)|| */
  double rho;       /* Alart-Curnier parameter: > 0 fixed, 0: 1/w_i per contact */
  double max_lu_gb; /* refuse a problem whose LU UMFPACK estimates above this */
  int mu_steps;     /* friction continuation: stages mu_j = (j / mu_steps) mu (0: off) */
  int mu_stage_iter; /* Newton iterations before a stage counts as failed */
  double mu_tol;    /* a stage ends when its own merit falls below this */
  int mu_adapt;     /* 1: a failed stage halves the step and starts from the last solved one */
} pn_opts;

#define PO(f) offsetof(pn_opts, f)
static const fl_option_desc pn_table[] = {
  {"sigma", FL_OPT_REAL, PO(sigma), 1e-14, 1e12, 1e-3, NULL,
   "initial proximal weight s, relative to each contact's mean Delassus diagonal"},
  {"shrink", FL_OPT_REAL, PO(shrink), 1, 1e6, 10.0, NULL,
   "s is divided by this after a fast inner solve and multiplied after a failed one"},
  {"sigma_min", FL_OPT_REAL, PO(sigma_min), 0, 1, 1e-10, NULL,
   "floor of s (the reduced matrix's condition grows like 1/s)"},
  {"fast", FL_OPT_INT, PO(fast), 0, 1e6, 10, NULL,
   "an inner solve converging in at most this many Newton iterations is fast"},
  {"inner_max_iter", FL_OPT_INT, PO(inner_max_iter), 1, 1e6, 10, NULL,
   "Newton iterations per proximal step"},
  {"inner_rel", FL_OPT_REAL, PO(inner_rel), 0, 1, 1e-2, NULL,
   "a proximal step ends when ||F_sigma|| falls below this times ||F|| at its start"},
  {"rho", FL_OPT_REAL, PO(rho), 0, 1e12, 0, NULL,
   "Alart-Curnier parameter rho (impulse per velocity): 0 = 1/w_i per contact"},
  {"max_lu_gb", FL_OPT_REAL, PO(max_lu_gb), 0, 1e6, 1.0, NULL,
   "setup refuses (unsupported) a problem whose reduced matrix or LU factors UMFPACK's "
   "symbolic analysis estimates above this many GB (3D piles fill in: 1e5 grains would need "
   "tens of GB)"},
  {"mu_steps", FL_OPT_INT, PO(mu_steps), 0, 1e6, 0, NULL,
   "friction continuation: solve mu_j = t_j mu from t_0 = 0 (frictionless) to t = 1 in steps "
   "of at most 1 / mu_steps, each started from the last stage's answer (0: off)"},
  {"mu_stage_iter", FL_OPT_INT, PO(mu_stage_iter), 1, 1e6, 60, NULL,
   "a continuation stage not solved in this many Newton iterations fails (what follows: "
   "mu_adapt)"},
  {"mu_adapt", FL_OPT_BOOL, PO(mu_adapt), 0, 1, 0, NULL,
   "continuation step control: 0 = a stage that runs out of iterations hands its iterate to "
   "the next; 1 = the step is halved and the stage starts again from the last solved one (finds "
   "where a branch of answers ends)"},
  {"mu_tol", FL_OPT_REAL, PO(mu_tol), 0, 1, 1e-10, NULL,
   "a continuation stage is solved when its own merit (natural map with the stage's mu, "
   "normalized as `norm` says) falls below this"},
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}};

typedef struct {
  fl_dynamics *dyn;
  fl_int nc, nv;
  fl_reduced red; /* K = A + sum J_i^T D_i J_i (nv x nv), fixed pattern; scratch dj = D_i J_i */
  double *w, *rho, *Rn, *vhat; /* (nc) */
  double *G, *B;  /* (nc x 9) G_i^-1 and B_i */
  double *r, *rk, *dr, *v, *dv, *u, *F, *rt, *vt, *ut, *Ft, *rhs, *tmp; /* work */
  void *sym, *num;
  double norm_q;
  double lu_gb, lu_flops; /* UMFPACK's estimates for one factorization */
  double *mu;             /* (nc) the friction of Newton's function: the problem's, or a
                             continuation stage's t mu */
  double *rok;            /* (3 nc) continuation: the last solved stage's impulses */
  double t_solved;        /* continuation: the largest t solved (-1: none yet) */
  double t_failed;        /* continuation: the smallest t that failed above t_solved (INF: none) */
  int empty;
} pn_data;


static void pn_destroy(fl_solver *s) {
  pn_data *d = s->data;
  if (!d) return;
  if (d->num) umfpack_di_free_numeric(&d->num);
  if (d->sym) umfpack_di_free_symbolic(&d->sym);
  fl_dynamics_free(d->dyn);
  fl__reduced_free(&d->red);
  double **arrs[] = {&d->w, &d->rho, &d->Rn, &d->vhat, &d->G, &d->B, &d->r, &d->rk,
                     &d->dr, &d->v, &d->dv, &d->u, &d->F, &d->rt, &d->vt, &d->ut, &d->Ft,
                     &d->rhs, &d->tmp};
  for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) fl_free(*arrs[k]);
  fl_free(d->mu);
  fl_free(d->rok);
  memset(d, 0, sizeof(*d));
}


static int pn_setup(fl_solver *s, const fl_problem *p) {
  pn_data *d = s->data;
  if (p->kind != FL_PROBLEM_GLOBAL || p->nh > 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "pnewton: %s: needs a global problem (A, J) without "
                     "bilateral rows", p->name);
  d->nc = p->nc, d->nv = p->nv;
  if (p->nc == 0) {
    d->empty = 1;
    return FL_OK;
  }
  fl_int nc = p->nc, nv = p->nv, n = 3 * nc;
  FL_TRY(fl_dynamics_create(p, &d->dyn));
  size_t sn = (size_t)n, sv = (size_t)nv, sc = (size_t)nc;
  d->w = fl_malloc(sc * sizeof(double));
  d->rho = fl_malloc(sc * sizeof(double));
  d->Rn = fl_malloc(sc * sizeof(double));
  d->vhat = fl_malloc(sc * sizeof(double));
  d->G = fl_malloc(9 * sc * sizeof(double));
  d->B = fl_malloc(9 * sc * sizeof(double));
  double **vn[] = {&d->r, &d->rk, &d->dr, &d->u, &d->F, &d->rt, &d->ut, &d->Ft};
  for (size_t k = 0; k < sizeof vn / sizeof vn[0]; k++) *vn[k] = fl_malloc(sn * sizeof(double));
  double **vv[] = {&d->v, &d->dv, &d->vt, &d->rhs, &d->tmp};
  for (size_t k = 0; k < sizeof vv / sizeof vv[0]; k++) *vv[k] = fl_malloc(sv * sizeof(double));
  d->mu = fl_malloc(sc * sizeof(double));
  d->rok = fl_malloc(sn * sizeof(double));
  if (!d->mu || !d->rok) return fl_seterr(FL_ERR_NOMEM, "pnewton: out of memory");
  memcpy(d->mu, p->mu, sc * sizeof(double));
  if (!d->w || !d->rho || !d->Rn || !d->vhat || !d->G || !d->B || !d->r || !d->rk || !d->dr ||
      !d->u || !d->F || !d->rt || !d->ut || !d->Ft || !d->v || !d->dv || !d->vt || !d->rhs ||
      !d->tmp)
    return fl_seterr(FL_ERR_NOMEM, "pnewton: out of memory");
  // Delassus diagonal blocks: each contact's scale w_i and Alart-Curnier parameter 1/w_i
  double *Wc = fl_malloc(9 * sc * sizeof(double));
  if (!Wc) return fl_seterr(FL_ERR_NOMEM, "pnewton: out of memory");
  int rc = fl_dynamics_delassus_blocks(d->dyn, Wc, NULL);
  for (fl_int i = 0; i < nc && rc == FL_OK; i++) {
    fl_problem_normal_law(p, i, &d->Rn[i], &d->vhat[i]);
    double t = (Wc[9 * i] + Wc[9 * i + 4] + Wc[9 * i + 8]) / 3 + d->Rn[i] / 3;
    if (!(t > 0) || !isfinite(t))
      rc = fl_seterr(FL_ERR_FORMAT, "pnewton: %s: contact %ld has a zero Delassus block (its "
                     "rows of J are empty)", p->name, (long)i);
    d->w[i] = t, d->rho[i] = ((const pn_opts *)s->opts)->rho > 0 ? ((const pn_opts *)s->opts)->rho : 1 / t;
  }
  fl_free(Wc);
  FL_TRY(rc);
  double max_b = ((const pn_opts *)s->opts)->max_lu_gb * 1e9;
  FL_TRY(fl__reduced_build(&d->red, p, max_b, "pnewton", "pnewton.max_lu_gb"));
  // the merit's normalization uses the local form's q = J v* + b - vhat
  fl_csr_gemv(p->J, 1.0, p->vstar, 0.0, d->u);
  double q2 = 0;
  for (fl_int r = 0; r < n; r++) {
    double qr = d->u[r] + (p->b ? p->b[r] : 0) - (r % 3 == 0 ? d->vhat[r / 3] : 0);
    q2 += qr * qr;
  }
  d->norm_q = sqrt(q2);
  // K is stored by rows: UMFPACK reads it as K^T by columns (solved with UMFPACK_At)
  double ctl[UMFPACK_CONTROL], info[UMFPACK_INFO];
  umfpack_di_defaults(ctl);
  const fl_csr *K = d->red.K;
  if (umfpack_di_symbolic(nv, nv, K->rowptr, K->col, K->val, &d->sym, ctl, info) !=
      UMFPACK_OK)
    return fl_seterr(FL_ERR_LIBRARY, "pnewton: %s: UMFPACK's symbolic analysis failed (%ld dofs)",
                     p->name, (long)nv);
  double lu_b = info[UMFPACK_NUMERIC_SIZE_ESTIMATE] * info[UMFPACK_SIZE_OF_UNIT];
  if (lu_b > max_b)
    return fl_seterr(FL_ERR_UNSUPPORTED, "pnewton: %s: UMFPACK estimates %.3g GB of LU factors "
                     "(%.2g flops per factorization) for the %ld x %ld reduced matrix, above "
                     "pnewton.max_lu_gb = %g", p->name, lu_b / 1e9, info[UMFPACK_FLOPS_ESTIMATE],
                     (long)nv, (long)nv, max_b / 1e9);
  d->lu_gb = lu_b / 1e9, d->lu_flops = info[UMFPACK_FLOPS_ESTIMATE];
  return FL_OK;
}


/* u = J v + b - vhat + R_n r_n (the local form's velocity), v given */
static void local_u(const pn_data *d, const fl_problem *p, const double *v, const double *r,
                    double *u) {
  fl_csr_gemv(p->J, 1.0, v, 0.0, u);
  for (fl_int i = 0; i < d->nc; i++) {
    if (p->b) u[3 * i] += p->b[3 * i], u[3 * i + 1] += p->b[3 * i + 1], u[3 * i + 2] += p->b[3 * i + 2];
    u[3 * i] += -d->vhat[i] + d->Rn[i] * r[3 * i];
  }
}


/* Alart-Curnier's function of one contact at (r, u), rho > 0, and, when Ab/Bb are given, its
 * generalized Jacobian blocks dF = Ab dr + Bb du (3x3 row-major) */
static void ac_contact(double mu, double rho, const double *r, const double *u, double *F,
                       double *Ab, double *Bb) {
  double tn = r[0] - rho * u[0];
  double z[2] = {r[1] - rho * u[1], r[2] - rho * u[2]};
  double R = mu * fmax(tn, 0), nz = hypot(z[0], z[1]);
  if (Ab) memset(Ab, 0, 9 * sizeof(double)), memset(Bb, 0, 9 * sizeof(double));
  if (tn > 0) {
    F[0] = rho * u[0];
    if (Bb) Bb[0] = rho;
  } else {
    F[0] = r[0];
    if (Ab) Ab[0] = 1;
  }
  if (nz <= R) { // sticking (or z = 0 at R = 0): F_t = rho u_t
    F[1] = rho * u[1], F[2] = rho * u[2];
    if (Bb) Bb[4] = rho, Bb[8] = rho;
    return;
  }
  double e[2] = {z[0] / nz, z[1] / nz}, c = R / nz;
  F[1] = r[1] - R * e[0], F[2] = r[2] - R * e[1];
  if (!Ab) return;
  for (int a = 0; a < 2; a++) {
    if (tn > 0) Ab[3 * (a + 1)] = -mu * e[a], Bb[3 * (a + 1)] = mu * rho * e[a];
    for (int b = 0; b < 2; b++) {
      double P = c * ((a == b) - e[a] * e[b]);
      Ab[3 * (a + 1) + b + 1] = (a == b) - P;
      Bb[3 * (a + 1) + b + 1] = rho * P;
    }
  }
}


/* ||F_sigma(r)|| with v = v(r) given: u = local_u, then AC at u + s w (r - rk); fills d->u
 * (unregularized u) and F, and the Jacobian blocks into d->G (A_i) and d->B when jac */
static double eval_F(pn_data *d, const fl_problem *p, const double *r, const double *v, double s,
                     double *u, double *F, int jac) {
  local_u(d, p, v, r, u);
  double sum = 0;
  for (fl_int i = 0; i < d->nc; i++) {
    double us[3];
    for (int a = 0; a < 3; a++) us[a] = u[3 * i + a] + s * d->w[i] * (r[3 * i + a] - d->rk[3 * i + a]);
    ac_contact(d->mu[i], d->rho[i], r + 3 * i, us, F + 3 * i, jac ? d->G + 9 * i : NULL,
               jac ? d->B + 9 * i : NULL);
    for (int a = 0; a < 3; a++) sum += F[3 * i + a] * F[3 * i + a];
  }
  return sqrt(sum);
}


/* the common merit at (r, u): natural map with De Saxce's correction, normalized */
static double merit(const fl_solver *sv, const pn_data *d, const double *mu, const double *r,
                    const double *u) {
  double g2, u2;
  double raw = fl__natmap_residual(d->nc, mu, r, u, NULL, &g2, &u2);
  return raw / fl__merit_divisor(sv->common.norm, d->norm_q, g2, u2);
}


/* 3x3 inverse (row-major); 0 when singular */
static int inv3(const double *m, double *o) {
  double c0 = m[4] * m[8] - m[5] * m[7], c1 = m[5] * m[6] - m[3] * m[8], c2 = m[3] * m[7] - m[4] * m[6];
  double det = m[0] * c0 + m[1] * c1 + m[2] * c2;
  double sc = fabs(m[0]) + fabs(m[1]) + fabs(m[2]) + fabs(m[3]) + fabs(m[4]) + fabs(m[5]) +
              fabs(m[6]) + fabs(m[7]) + fabs(m[8]);
  if (!(fabs(det) > 1e-14 * sc * sc * sc)) return 0;
  o[0] = c0 / det, o[3] = c1 / det, o[6] = c2 / det;
  o[1] = (m[2] * m[7] - m[1] * m[8]) / det, o[4] = (m[0] * m[8] - m[2] * m[6]) / det;
  o[7] = (m[1] * m[6] - m[0] * m[7]) / det;
  o[2] = (m[1] * m[5] - m[2] * m[4]) / det, o[5] = (m[2] * m[3] - m[0] * m[5]) / det;
  o[8] = (m[0] * m[4] - m[1] * m[3]) / det;
  return 1;
}


/* The Newton direction (dr, dv) of F_sigma at the point whose blocks eval_F(jac) left in G
 * (A_i) and B. Returns 0, or -1 when a G_i or K is singular. */
static int direction(pn_data *d, const fl_problem *p, double s) {
  fl_reduced *R = &d->red;
  const fl_csr *K = R->K;
  fl__reduced_reset(R, p->A);
  memset(d->rhs, 0, (size_t)d->nv * sizeof(double));
  for (fl_int i = 0; i < d->nc; i++) {
    double *Ai = d->G + 9 * i, *Bi = d->B + 9 * i, G[9], Gi[9], D[9], cf[3];
    double reg[3] = {d->Rn[i] + s * d->w[i], s * d->w[i], s * d->w[i]};
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) G[3 * a + b] = Ai[3 * a + b] + Bi[3 * a + b] * reg[b];
    if (!inv3(G, Gi)) return -1;
    memcpy(Ai, Gi, sizeof Gi); // G now holds G_i^-1
    for (int a = 0; a < 3; a++) {
      cf[a] = 0;
      for (int b = 0; b < 3; b++) {
        cf[a] += Gi[3 * a + b] * d->F[3 * i + b];
        D[3 * a + b] = 0;
        for (int c = 0; c < 3; c++) D[3 * a + b] += Gi[3 * a + c] * Bi[3 * c + b];
      }
    }
    fl_int c0 = R->cptr[i], m = R->cptr[i + 1] - c0;
    const double *Jb = R->jblk + 3 * c0;
    for (fl_int x = 0; x < m; x++)
      d->rhs[R->ccol[c0 + x]] -= Jb[x] * cf[0] + Jb[m + x] * cf[1] + Jb[2 * m + x] * cf[2];
    fl__reduced_add(R, i, D);
  }
  if (d->num) umfpack_di_free_numeric(&d->num);
  int st = umfpack_di_numeric(K->rowptr, K->col, K->val, d->sym, &d->num, NULL, NULL);
  if (st != UMFPACK_OK) return -1;
  st = umfpack_di_solve(UMFPACK_At, K->rowptr, K->col, K->val, d->dv, d->rhs, d->num, NULL, NULL);
  if (st != UMFPACK_OK) return -1;
  // dr_i = G_i^-1 (-F_i - B_i J_i dv)
  fl_csr_gemv(p->J, 1.0, d->dv, 0.0, d->ut); // ut: J dv
  for (fl_int i = 0; i < d->nc; i++) {
    const double *Gi = d->G + 9 * i, *Bi = d->B + 9 * i, *jd = d->ut + 3 * i;
    double t[3];
    for (int a = 0; a < 3; a++)
      t[a] = -d->F[3 * i + a] - (Bi[3 * a] * jd[0] + Bi[3 * a + 1] * jd[1] + Bi[3 * a + 2] * jd[2]);
    for (int a = 0; a < 3; a++)
      d->dr[3 * i + a] = Gi[3 * a] * t[0] + Gi[3 * a + 1] * t[1] + Gi[3 * a + 2] * t[2];
  }
  for (fl_int k = 0; k < d->nv; k++)
    if (!isfinite(d->dv[k])) return -1;
  return 0;
}


/* v = v* + A^-1 J^T r */
static void velocity_of(pn_data *d, const fl_problem *p, const double *r, double *v) {
  fl_csr_gemtv(p->J, 1.0, r, 0.0, d->tmp);
  fl_dynamics_solve_A(d->dyn, d->tmp, v);
  for (fl_int k = 0; k < d->nv; k++) v[k] += p->vstar[k];
}


/* the friction of Newton's function: t times the problem's (t = 1: the problem itself) */
static void stage_mu(pn_data *d, const fl_problem *p, double t) {
  for (fl_int i = 0; i < d->nc; i++) d->mu[i] = t >= 1 ? p->mu[i] : t * p->mu[i];
}


static int pn_solve(fl_solver *sv, const fl_problem *p, double *v, double *gamma) {
  pn_data *d = sv->data;
  const pn_opts *o = sv->opts;
  if (d->empty) return fl__solver_answer_empty(sv, p, v, gamma); // a global problem
  sv->cur_v = v;
  sv->cur_gamma = gamma;
  fl_iter_stat st;
  fl_int nc = d->nc, n = 3 * nc, nv = d->nv;
  size_t bn = (size_t)n * sizeof(double), bv = (size_t)nv * sizeof(double);
  // the guess (gamma, zero without warm_start) projected onto the cones; v = v(r)
  for (fl_int i = 0; i < nc; i++) {
    double g[3] = {gamma[3 * i], gamma[3 * i + 1], gamma[3 * i + 2]};
    fl_cone_project(p->mu[i], g, d->r + 3 * i);
  }
  memcpy(d->rk, d->r, bn);
  velocity_of(d, p, d->r, d->v);
  // friction continuation: stage t (mu_j = t mu); a cold start begins frictionless, a warm
  // one with the problem itself (t = 1) and falls back to t = 0 if that stage fails
  int cont = o->mu_steps > 0, stage_it = 0;
  double t = 1, dt = cont ? 1.0 / o->mu_steps : 1, dt_min = dt / 1024;
  d->t_solved = -1, d->t_failed = INFINITY;
  int tried1 = 0; // the stage t = 1 has run out of iterations once after a fall-back
  if (cont && !sv->common.warm_start) t = 0, tried1 = 1;
  stage_mu(d, p, t);
  memcpy(d->rok, d->r, bn); // where a failed stage starts again (the guess until one is solved)
  double s = o->sigma;
  double phi = eval_F(d, p, d->r, d->v, s, d->u, d->F, 1);
  double err = merit(sv, d, p->mu, d->r, d->u);
  memcpy(gamma, d->r, bn);
  memcpy(v, d->v, bv);
  fl_iter_stat_init(&st, 0);
  st.error = err;
  st.objective = phi;
  if (fl_solver_record(sv, &st) != 0) return FL_OK;
  double phik = phi; // ||F|| at the proximal centre r_k (F_sigma = F there)
  int inner = 0;
  for (int k = 1;; k++) {
    int ok = direction(d, p, s) == 0, neval = 0;
    double alpha = 1, pt = INFINITY;
    if (ok) {
      for (int h = 0; h <= 20; h++, alpha *= 0.5) {
        for (fl_int r = 0; r < n; r++) d->rt[r] = d->r[r] + alpha * d->dr[r];
        for (fl_int r = 0; r < nv; r++) d->vt[r] = d->v[r] + alpha * d->dv[r];
        pt = eval_F(d, p, d->rt, d->vt, s, d->ut, d->Ft, 0);
        neval++;
        if (pt * pt <= (1 - 2e-4 * alpha) * phi * phi) break;
      }
      ok = pt * pt <= (1 - 2e-4 * alpha) * phi * phi;
    }
    inner++;
    if (ok) {
      memcpy(d->r, d->rt, bn);
      memcpy(d->v, d->vt, bv);
      phi = pt;
    }
    // the proximal step ends (converged, or out of inner iterations / stuck)
    int done = ok && phi <= o->inner_rel * phik;
    if (done || !ok || inner >= o->inner_max_iter) {
      if (done && inner <= o->fast) s = fmax(s / o->shrink, o->sigma_min);
      else if (!done) s = fmin(s * o->shrink, 1e12);
      memcpy(d->rk, d->r, bn); // the new proximal centre: F_sigma = F there
      inner = 0;
    }
    phi = eval_F(d, p, d->r, d->v, s, d->u, d->F, 1);
    if (inner == 0) phik = phi;
    err = merit(sv, d, p->mu, d->r, d->u);
    memcpy(gamma, d->r, bn);
    memcpy(v, d->v, bv);
    fl_iter_stat_init(&st, k);
    st.error = err;
    st.objective = phi;
    st.step = ok ? alpha : 0;
    st.neval = neval;
    st.inner_iters = inner;
    if (fl_solver_record(sv, &st) != 0) break;
    if (!cont) continue;
    // continuation: next stage when this one is solved, a shorter step when it fails
    stage_it++;
    int next = 0, restore = 0;
    if (t < 1 && merit(sv, d, d->mu, d->r, d->u) <= o->mu_tol) {
      d->t_solved = t, next = 1;
      memcpy(d->rok, d->r, bn);
      if (4 * stage_it <= o->mu_stage_iter) dt = fmin(2 * dt, 1.0 / o->mu_steps); // easy: longer
      t = fmin(t + dt, 1);
    } else if (stage_it >= o->mu_stage_iter && t > 0 && (t < 1 || !tried1)) {
      d->t_failed = fmin(d->t_failed, t);
      next = 1;
      if (d->t_solved < 0 && t >= 1) { // a warm start's first stage failed: begin frictionless
        t = 0, restore = 1, tried1 = 1;
      } else if (o->mu_adapt && dt >= dt_min) { // a shorter step from the last solved stage
        dt /= 2, t = fmin(d->t_solved + dt, 1), restore = 1;
      } else { // on from this stage's iterate
        t = fmin(t + dt, 1);
      }
    }
    if (!next) continue;
    // a new stage: Newton's function changes (mu), the proximal term starts again
    stage_mu(d, p, t);
    if (restore) {
      memcpy(d->r, d->rok, bn);
      velocity_of(d, p, d->r, d->v);
    }
    memcpy(d->rk, d->r, bn);
    s = o->sigma, inner = 0, stage_it = 0;
    phik = phi = eval_F(d, p, d->r, d->v, s, d->u, d->F, 1);
  }
  return FL_OK;
}


static void pn_view(const fl_solver *s, FILE *f) {
  const pn_data *d = s->data;
  fprintf(f, "pnewton: reduced system %ld x %ld, %ld nonzeros; UMFPACK estimates %.3g GB of "
          "LU factors, %.3g flops per factorization\n", d && d->red.K ? (long)d->red.K->nrow : 0L,
          d && d->red.K ? (long)d->red.K->nrow : 0L, d && d->red.K ? (long)d->red.K->nnz : 0L,
          d ? d->lu_gb : 0.0, d ? d->lu_flops : 0.0);
  if (d && ((const pn_opts *)s->opts)->mu_steps > 0)
    fprintf(f, "pnewton: friction continuation: largest fraction of mu solved %g, smallest "
            "failed %g\n", d->t_solved, d->t_failed);
}


const fl_solver_ops fl_pnewton_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "pnewton",
  .summary = "proximal Alart-Curnier Newton on the global form (contact corrections "
             "eliminated onto the dofs: sparse LU of A + J^T D J, never W)",
  .opts_size = sizeof(pn_opts),
  .options = pn_table,
  .data_size = sizeof(pn_data),
  .caps = FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_NEEDS_AJ | FL_CAP_WARMSTART,
  .setup = pn_setup,
  .solve = pn_solve,
  .view = pn_view,
  .destroy = pn_destroy,
  .common_defaults = "max_iter=1000",
};

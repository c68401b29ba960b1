// SPDX-License-Identifier: Apache-2.0
/* damped_jacobi.c: a FrictionLab solver plug-in, "damped-jacobi" (docs/plugins.md).
 *
 * Damped projected Jacobi on the local form u = W gamma + q of the problem: every contact i
 * takes, from the same iterate,
 *
 *   uhat_i = u_i + (mu_i ||u_t,i||, 0, 0)                  (De Saxce's correction)
 *   g_i    = P_K(gamma_i - rho_i uhat_i),  rho_i = rho_scale * 3 / trace(W_ii)
 *
 * and gamma <- (1 - omega) gamma + omega g. Its own residual is the natural map
 * ||gamma - P_K(gamma - uhat)||_2 / (1 + ||q||_2). A local problem (FCLIB's W, q) is used as
 * it is; a global one (A, J) is brought to its local form with the library's operators
 * (fl_problem_local_form), and the velocities follow from the impulses, v = v* + A^-1 J^T gamma.
 *
 * It uses nothing but the installed headers: the pattern for a solver of your own.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <frictionlab/frictionlab.h>

typedef struct dj_opts {
  double omega;     /* damping in (0, 1] */
  double rho_scale; /* step scale on 3 / trace(W_ii) */
} dj_opts;

typedef struct dj_data {
  fl_dynamics *dyn; /* global problems: A's factorization, J A^-1 */
  fl_csr *W_own;    /* global problems: the local form's W (owned) */
  const fl_csr *W;  /* W in use (the problem's or W_own) */
  const double *q;  /* q in use */
  double *q_own, *rho, *u, *g; /* q (3nc) of a global problem, steps (nc), u and g (3nc) */
  double norm_q;
} dj_data;

static const fl_option_desc dj_table[] = {
  {"omega", FL_OPT_REAL, offsetof(dj_opts, omega), 1e-6, 1, 0.5, NULL,
   "damping: gamma <- (1 - omega) gamma + omega P_K(gamma - rho uhat)"},
  {"rho_scale", FL_OPT_REAL, offsetof(dj_opts, rho_scale), 1e-6, 100, 1, NULL,
   "step rho_i = rho_scale * 3 / trace(W_ii)"},
  {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}};


static void dj_destroy(fl_solver *s) {
  dj_data *d = fl_solver_data(s);
  fl_dynamics_free(d->dyn);
  fl_csr_free(d->W_own);
  fl_free(d->q_own);
  fl_free(d->rho);
  fl_free(d->u);
  fl_free(d->g);
  memset(d, 0, sizeof *d);
}


static int dj_setup(fl_solver *s, const fl_problem *p) {
  dj_data *d = fl_solver_data(s);
  const dj_opts *o = fl_solver_opts(s);
  size_t n3 = 3 * (size_t)p->nc + 1;
  d->rho = fl_calloc((size_t)p->nc + 1, sizeof(double));
  d->u = fl_calloc(n3, sizeof(double));
  d->g = fl_calloc(n3, sizeof(double));
  if (!d->rho || !d->u || !d->g) return fl_seterr(FL_ERR_NOMEM, "damped-jacobi: out of memory");
  if (p->kind == FL_PROBLEM_LOCAL) {
    d->W = p->W;
    d->q = p->q;
  } else {
    d->q_own = fl_calloc(n3, sizeof(double));
    if (!d->q_own) return fl_seterr(FL_ERR_NOMEM, "damped-jacobi: out of memory");
    FL_TRY(fl_dynamics_create(p, &d->dyn));
    FL_TRY(fl_problem_local_form(p, d->dyn, &d->W_own, d->q_own));
    if (!fl_dynamics_JAinv(d->dyn)) return fl_errcode() < 0 ? fl_errcode() : FL_ERR_NOMEM;
    d->W = d->W_own;
    d->q = d->q_own;
  }
  double nq = 0;
  for (fl_int k = 0; k < 3 * p->nc; k++) nq += d->q[k] * d->q[k];
  d->norm_q = sqrt(nq);
  for (fl_int i = 0; i < p->nc; i++) {
    double tr = 0;
    for (int c = 0; c < 3; c++) tr += fl_csr_get(d->W, 3 * i + c, 3 * i + c);
    d->rho[i] = tr > 0 ? o->rho_scale * 3.0 / tr : 1.0;
  }
  return FL_OK;
}


/* u = W gamma + q, uhat in place, and the residual ||gamma - P_K(gamma - uhat)|| / (1 + ||q||) */
static double residual(const fl_problem *p, dj_data *d, const double *gamma) {
  memcpy(d->u, d->q, 3 * (size_t)p->nc * sizeof(double));
  fl_csr_gemv(d->W, 1.0, gamma, 1.0, d->u);
  double r2 = 0;
  for (fl_int i = 0; i < p->nc; i++) {
    double *u = d->u + 3 * i, x[3], px[3];
    u[0] += p->mu[i] * hypot(u[1], u[2]);
    for (int c = 0; c < 3; c++) x[c] = gamma[3 * i + c] - u[c];
    fl_cone_project(p->mu[i], x, px);
    for (int c = 0; c < 3; c++) r2 += (gamma[3 * i + c] - px[c]) * (gamma[3 * i + c] - px[c]);
  }
  return sqrt(r2) / (1 + d->norm_q);
}


/* v = v* + A^-1 J^T gamma (global problems) */
static void velocities(const fl_problem *p, dj_data *d, const double *gamma, double *v) {
  if (!d->dyn || !v) return;
  memcpy(v, p->vstar, (size_t)p->nv * sizeof(double));
  fl_csr_gemtv(fl_dynamics_JAinv(d->dyn), 1.0, gamma, 1.0, v);
}


static int dj_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  dj_data *d = fl_solver_data(s);
  const dj_opts *o = fl_solver_opts(s);
  fl_iter_stat st;
  velocities(p, d, gamma, v);
  fl_solver_set_iterate(s, p->kind == FL_PROBLEM_GLOBAL ? v : NULL, gamma);
  fl_iter_stat_init(&st, 0);
  st.error = residual(p, d, gamma);
  if (fl_solver_record(s, &st) != 0) return fl_solver_exit_code(s);
  for (int k = 1;; k++) {
    // d->u holds uhat of the current iterate (from residual)
    double step2 = 0;
    for (fl_int i = 0; i < p->nc; i++) {
      double x[3], px[3];
      for (int c = 0; c < 3; c++) x[c] = gamma[3 * i + c] - d->rho[i] * d->u[3 * i + c];
      fl_cone_project(p->mu[i], x, px);
      for (int c = 0; c < 3; c++) d->g[3 * i + c] = px[c];
    }
    for (fl_int r = 0; r < 3 * p->nc; r++) {
      double dg = o->omega * (d->g[r] - gamma[r]);
      gamma[r] += dg;
      step2 += dg * dg;
    }
    velocities(p, d, gamma, v);
    fl_iter_stat_init(&st, k);
    st.error = residual(p, d, gamma);
    st.step = o->omega;
    st.step_norm = sqrt(step2);
    if (fl_solver_record(s, &st) != 0) break;
  }
  return fl_solver_exit_code(s);
}


static void dj_view(const fl_solver *s, FILE *f) {
  dj_data *d = fl_solver_data((fl_solver *)s);
  fprintf(f, "  damped-jacobi: %s, ||q|| = %g\n", d->dyn ? "on the local form of A, J" : "on W, q",
          d->norm_q);
}


static const fl_solver_ops dj_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "damped-jacobi",
  .summary = "damped projected Jacobi on the local form W, q (plug-in example, examples/plugin)",
  .opts_size = sizeof(dj_opts),
  .options = dj_table,
  .data_size = sizeof(dj_data),
  .caps = FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_LOCAL | FL_CAP_WARMSTART,
  .setup = dj_setup,
  .solve = dj_solve,
  .view = dj_view,
  .destroy = dj_destroy,
  .common_defaults = "max_iter=2000",
};


static int add_solvers(fl_plugin *pl) { return fl_plugin_add_solver(pl, &dj_ops); }

FL_PLUGIN_REGISTER(add_solvers)

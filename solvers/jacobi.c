// SPDX-License-Identifier: Apache-2.0
/* jacobi.c: projected Jacobi on the common contact model (SOLVERS.md section 2).
 *
 * Every contact and bilateral row takes the local update of relax.c, as in PGS ("nf" or "block"),
 * all computed from the same iterate, then the impulse changes are applied together with a
 * relaxation omega:
 *
 *   u = J v + b (or W gamma + q);  dgamma_i = omega (local_i(u_i, gamma_i) - gamma_i);
 *   gamma += dgamma;  v += A^-1 J^T dgamma  (one product with (J A^-1)^T).
 *
 * The default omega (option value 0) is the mass-splitting relaxation 1/m, m = the most
 * constraints sharing one clique (Tonge et al. 2012): each clique's mass is split among the
 * contacts acting on it. For local problems m is the most nonzero 3x3 blocks in a block row
 * of W. For omega > 1 the relaxed impulse is projected back onto the cone (rows: clamped).
 *
 * The u computed for the own residual of an iterate is reused by the next update, so an
 * iteration costs one product with J and one with (J A^-1)^T; the residual is the same exact
 * natural-map residual as pgs.c's (relax.c).
 */
#include <math.h>
#include <string.h>

#include "relax.h"

typedef struct jacobi_opts {
  double omega;
  int local;
} jacobi_opts;

typedef struct jacobi_data {
  fl__relax r;
  double omega; /* resolved relaxation */
} jacobi_data;

static const fl_option_desc jacobi_table[] = {
  {"omega", FL_OPT_REAL, offsetof(jacobi_opts, omega), 0, 1.999999, 0.0, NULL,
   "relaxation in (0, 2); 0 = mass splitting 1/(most constraints per clique)"},
  {"local", FL_OPT_ENUM, offsetof(jacobi_opts, local), 0, 1, FL_RELAX_NF, "nf|block",
   "local update: nf = normal then friction, block = P_K(gamma - rho uhat), rho = 3/tr W_ii"},
  {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}};


static int jacobi_setup(fl_solver *s, const fl_problem *p) {
  jacobi_data *d = s->data;
  const jacobi_opts *o = s->opts;
  FL_TRY(fl__relax_setup(s, p, &d->r, o->local, s->common.norm));
  d->omega = o->omega > 0 ? o->omega : 1.0 / (double)d->r.max_per_clique;
  return FL_OK;
}


static int jacobi_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  jacobi_data *d = s->data;
  fl__relax *r = &d->r;
  double omega = d->omega;
  for (fl_int i = 0; i < r->nc; i++) r->mode[i] = 0;

  //---- iteration 0: the guess (its residual leaves u of the iterate in r->u) ----
  fl__relax_start(r, v, gamma);
  s->cur_v = r->global ? v : NULL;
  s->cur_gamma = gamma;
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  fl__relax_residual(r, v, gamma, &st);
  if (fl_solver_record(s, &st) != 0) return s->reason == FL_REASON_ABORT ? s->abort_code : FL_OK;

  for (int k = 1;; k++) {
    //---- local updates, all from the same iterate ----
    double d2 = 0;
    for (fl_int i = 0; i < r->nc; i++) {
      const double *g = gamma + 3 * i;
      double nw[3];
      fl__relax_contact(r, i, r->u + 3 * i, g, nw);
      fl__relax_apply_omega(r, i, omega, g, nw);
      for (int c = 0; c < 3; c++) r->dg[3 * i + c] = nw[c] - g[c];
    }
    for (fl_int h = 0; h < r->nh; h++) {
      fl_int row = 3 * r->nc + h;
      double g = gamma[row];
      double nw = fl__relax_row(r, h, r->u[row], g);
      nw = fl__relax_clamp_row(r, h, g + omega * (nw - g));
      r->dg[row] = nw - g;
    }

    //---- apply: gamma += dgamma, v += A^-1 J^T dgamma ----
    for (fl_int k2 = 0; k2 < r->nrow; k2++) {
      gamma[k2] += r->dg[k2];
      d2 += r->dg[k2] * r->dg[k2];
    }
    if (r->global && r->nrow > 0) fl_csr_gemtv(r->B, 1.0, r->dg, 1.0, v);

    //---- record and test ----
    fl_iter_stat_init(&st, k);
    fl__relax_residual(r, v, gamma, &st);
    st.step = omega;
    st.step_norm = sqrt(d2);
    if (fl_solver_record(s, &st) != 0) break;
  }
  return s->reason == FL_REASON_ABORT ? s->abort_code : FL_OK;
}


static void jacobi_view(const fl_solver *s, FILE *f) {
  const jacobi_data *d = s->data;
  fprintf(f, "  jacobi: %s, %d contacts, %d bilateral rows, omega = %g (most constraints per "
          "clique %d), ||q|| = %g\n",
          d->r.global ? "velocity-based on A, J (W never formed)" : "on W, q", (int)d->r.nc,
          (int)d->r.nh, d->omega, d->r.max_per_clique, d->r.norm_q);
}


static void jacobi_destroy(fl_solver *s) {
  jacobi_data *d = s->data;
  fl__relax_free(&d->r);
}


const fl_solver_ops fl_jacobi_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "jacobi",
  .summary = "projected Jacobi with mass-splitting relaxation, velocity-based; rigid, "
             "compliant, bilateral",
  .opts_size = sizeof(jacobi_opts),
  .options = jacobi_table,
  .data_size = sizeof(jacobi_data),
  .caps = FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_BILATERAL | FL_CAP_LOCAL | FL_CAP_WARMSTART,
  .setup = jacobi_setup,
  .solve = jacobi_solve,
  .view = jacobi_view,
  .destroy = jacobi_destroy,
  .common_defaults = NULL,
};

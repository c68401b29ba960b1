// SPDX-License-Identifier: Apache-2.0
/* relax_gpu.c: jacobi-cuda and pgs-cuda, the device twins of solvers/jacobi.c and pgs.c.
 *
 * Set-up is the CPU solvers' own (fl__relax_setup: the diagonal blocks of W, the normal law,
 * the steps, J A^-1), then everything an iteration reads goes to the device once per solve's
 * set-up; the iterate goes up once per solve and comes back once at the end, or before a
 * record whose metrics or monitors read it (fl_solver_wants_iterate). Per iteration only the
 * eight residual sums cross the bus.
 *
 * jacobi-cuda runs jacobi.c's iteration (same omega, same local update): its iterate equals
 * jacobi's. pgs-cuda relaxes the items of one colour of a greedy colouring at once
 * (fl__relax_colour): its iterate equals pgs's with order=colour. Both need a CUDA device at
 * set-up (FL_ERR_UNSUPPORTED without one) and report their kernel time and bytes in fl_result.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../solvers/relax.h"
#include "fl_gpu.h"

typedef struct gpu_opts {
  double omega;
  int local;
} gpu_opts;

typedef struct gpu_data {
  fl__relax r;
  fl_gpu_relax *g;
  double omega;
} gpu_data;

static const fl_option_desc jacobi_cuda_table[] = {
  {"omega", FL_OPT_REAL, offsetof(gpu_opts, omega), 0, 1.999999, 0.0, NULL,
   "relaxation in (0, 2); 0 = mass splitting 1/(most constraints per clique), as jacobi"},
  {"local", FL_OPT_ENUM, offsetof(gpu_opts, local), 0, 1, FL_RELAX_NF, "nf|block",
   "local update: nf = normal then friction, block = P_K(gamma - rho uhat), rho = 3/tr W_ii"},
  {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}};

static const fl_option_desc pgs_cuda_table[] = {
  {"omega", FL_OPT_REAL, offsetof(gpu_opts, omega), 1e-6, 1.999999, 1.0, NULL,
   "over-relaxation: gamma <- P_K(gamma + omega (gamma_new - gamma)), in (0, 2)"},
  {"local", FL_OPT_ENUM, offsetof(gpu_opts, local), 0, 1, FL_RELAX_NF, "nf|block",
   "local update: nf = normal then friction, block = P_K(gamma - rho uhat), rho = 3/tr W_ii"},
  {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}};


static int is_pgs(const fl_solver *s) { return strcmp(s->ops->name, "pgs-cuda") == 0; }


static int gpu_setup(fl_solver *s, const fl_problem *p) {
  gpu_data *d = s->data;
  const gpu_opts *o = s->opts;
  const char *nm = s->ops->name;
  if (fl_gpu_device_count() < 1)
    return fl_seterr(FL_ERR_UNSUPPORTED, "solver %s: no CUDA device on this machine", nm);
  FL_TRY(fl__relax_setup(s, p, &d->r, o->local, s->common.norm));
  fl__relax *r = &d->r;
  d->omega = is_pgs(s) ? o->omega : (o->omega > 0 ? o->omega : 1.0 / (double)r->max_per_clique);
  if (is_pgs(s)) FL_TRY(fl__relax_colour(r));

  fl_gpu_relax_desc g = {0};
  g.global = r->global;
  g.nc = (int)r->nc;
  g.nh = (int)r->nh;
  g.nrow = (int)r->nrow;
  g.nv = (int)r->nv;
  g.variant = r->variant;
  const fl_csr *A = r->global ? r->J : r->W;
  if (A && r->nrow > 0) {
    g.A_ptr = A->rowptr;
    g.A_col = A->col;
    g.A_val = A->val;
    g.A_nnz = (int)A->nnz;
  }
  if (r->global && r->nrow > 0) {
    const fl_csr *bt;
    FL_TRY(fl__relax_bt(r, &bt));
    g.B_ptr = r->B->rowptr;
    g.B_col = r->B->col;
    g.B_val = r->B->val;
    g.B_nnz = (int)r->B->nnz;
    g.BT_ptr = bt->rowptr;
    g.BT_col = bt->col;
    g.BT_val = bt->val;
  }
  g.cq = r->cq;
  g.vstar = p->vstar;
  g.Wd = r->Wd;
  g.Rn = r->Rn;
  g.vhat = r->vhat;
  g.lt = r->lt;
  g.rho = r->rho;
  g.mu = p->mu;
  g.Wh = r->Wh;
  // bilateral rows: the constants of fl_hd_relax_row, defaults filled in
  size_t nh = (size_t)r->nh;
  double *rows = malloc(sizeof(double) * (4 * nh + 1));
  if (!rows) {
    return fl_seterr(FL_ERR_NOMEM, "solver %s: out of memory", nm);
  }
  for (size_t h = 0; h < nh; h++) {
    rows[h] = p->g0 ? p->g0[h] / p->dt : 0.0;
    rows[nh + h] = p->compliance ? p->compliance[h] : 0.0;
    rows[2 * nh + h] = p->lo ? p->lo[h] : -INFINITY;
    rows[3 * nh + h] = p->hi ? p->hi[h] : INFINITY;
  }
  g.g0dt = rows;
  g.comp = rows + nh;
  g.lo = rows + 2 * nh;
  g.hi = rows + 3 * nh;
  g.ncolour = r->ncolour;
  g.colour_ptr = r->colour_ptr;
  g.colour_items = r->colour_items;
  char err[600];
  int rc = fl_gpu_relax_create(&g, &d->g, err, sizeof err);
  free(rows);
  if (rc < 0) return fl_seterr(FL_ERR_LIBRARY, "solver %s: problem %s: %s", nm, p->name, err);
  return FL_OK;
}


static int gpu_fail(const fl_solver *s) {
  return fl_seterr(FL_ERR_LIBRARY, "solver %s: %s", s->ops->name, fl_gpu_last_error());
}


/* residual of the device iterate into st */
static int gpu_residual(fl_solver *s, fl_iter_stat *st, double *dg2) {
  gpu_data *d = s->data;
  fl_gpu_sums sm;
  if (fl_gpu_relax_residual(d->g, &sm) < 0) return gpu_fail(s);
  st->error = fl__relax_normalize(&d->r, sqrt(sm.natmap2), sm.ng2, sm.nw2);
  st->nactive = sm.nact;
  st->nstick = sm.nstick;
  st->nslip = sm.nslip;
  st->nchange = sm.nchange;
  *dg2 = sm.dg2;
  return FL_OK;
}


/* records st (*reason: fl_solver_record's); the host iterate is refreshed first when the
 * record reads it. Returns FL_OK or an error code. */
static int gpu_record(fl_solver *s, fl_iter_stat *st, double *v, double *gamma, int *reason) {
  gpu_data *d = s->data;
  if (fl_solver_wants_iterate(s, st->iter) && fl_gpu_relax_download(d->g, v, gamma) < 0)
    return gpu_fail(s);
  *reason = fl_solver_record(s, st);
  return FL_OK;
}


static int gpu_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  gpu_data *d = s->data;
  fl__relax *r = &d->r;
  int pgs = is_pgs(s);
  s->cur_v = r->global ? v : NULL;
  s->cur_gamma = gamma;
  fl_gpu_relax_reset_counters(d->g);
  if (fl_gpu_relax_upload(d->g, NULL, gamma) < 0 || fl_gpu_relax_start(d->g) < 0)
    return gpu_fail(s);

  fl_iter_stat st;
  double dg2;
  fl_iter_stat_init(&st, 0);
  FL_TRY(gpu_residual(s, &st, &dg2));
  int reason = 0;
  FL_TRY(gpu_record(s, &st, v, gamma, &reason));
  for (int k = 1; reason == 0; k++) {
    if ((pgs ? fl_gpu_relax_pgs(d->g, d->omega) : fl_gpu_relax_jacobi(d->g, d->omega)) < 0)
      return gpu_fail(s);
    fl_iter_stat_init(&st, k);
    FL_TRY(gpu_residual(s, &st, &dg2));
    st.step = d->omega;
    st.step_norm = sqrt(dg2);
    FL_TRY(gpu_record(s, &st, v, gamma, &reason));
  }
  if (fl_gpu_relax_download(d->g, v, gamma) < 0) return gpu_fail(s);
  fl_gpu_relax_counters(d->g, &s->device_s, &s->device_bytes);
  return s->reason == FL_REASON_ABORT ? s->abort_code : FL_OK;
}


static void gpu_view(const fl_solver *s, FILE *f) {
  const gpu_data *d = s->data;
  char name[128] = "?";
  double peak = NAN;
  fl_gpu_device_info(name, sizeof name, &peak);
  fprintf(f, "  %s: on %s (peak %.0f GB/s), %s, %d contacts, %d bilateral rows, omega = %g",
          s->ops->name, name, peak * 1e-9,
          d->r.global ? "velocity-based on A, J (W never formed)" : "on W, q", (int)d->r.nc,
          (int)d->r.nh, d->omega);
  if (d->r.ncolour > 0) fprintf(f, ", %d colours", d->r.ncolour);
  if (d->g) fprintf(f, ", %.1f MB on the device", 1e-6 * (double)fl_gpu_relax_bytes(d->g));
  fprintf(f, "\n");
  const char *what[3] = {"start", "sweeps", "residuals"};
  for (int k = 0; d->g && k < 3; k++) {
    double t, b;
    int n;
    fl_gpu_relax_split(d->g, k, &t, &b, &n);
    if (n > 0)
      fprintf(f, "    last solve, %-9s %4d calls, %.3g us each, %.0f GB/s (%.3g MB each)\n",
              what[k], n, 1e6 * t / n, b / t * 1e-9, 1e-6 * b / n);
  }
}


static void gpu_destroy(fl_solver *s) {
  gpu_data *d = s->data;
  fl_gpu_relax_free(d->g);
  d->g = NULL;
  fl__relax_free(&d->r);
}


const fl_solver_ops fl_jacobi_cuda_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "jacobi-cuda",
  .summary = "projected Jacobi on a CUDA device, jacobi's iteration (equal iterates); rigid, "
             "compliant, bilateral",
  .opts_size = sizeof(gpu_opts),
  .options = jacobi_cuda_table,
  .data_size = sizeof(gpu_data),
  .caps = FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_BILATERAL | FL_CAP_LOCAL | FL_CAP_WARMSTART |
          FL_CAP_GPU,
  .setup = gpu_setup,
  .solve = gpu_solve,
  .view = gpu_view,
  .destroy = gpu_destroy,
  .common_defaults = NULL,
};


const fl_solver_ops fl_pgs_cuda_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "pgs-cuda",
  .summary = "projected Gauss-Seidel on a CUDA device, colour by colour (equals pgs with "
             "order=colour); rigid, compliant, bilateral",
  .opts_size = sizeof(gpu_opts),
  .options = pgs_cuda_table,
  .data_size = sizeof(gpu_data),
  .caps = FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_BILATERAL | FL_CAP_LOCAL | FL_CAP_WARMSTART |
          FL_CAP_GPU,
  .setup = gpu_setup,
  .solve = gpu_solve,
  .view = gpu_view,
  .destroy = gpu_destroy,
  .common_defaults = NULL,
};

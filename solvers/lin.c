/* lin.c: the registry of the inner linear solvers (fl_lin.h) and the helpers they share
 * (lin_*.c); the non-smooth Newton (nsn.c) is their main user.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fl_lin.h"
#include "fl_solver_impl.h"

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

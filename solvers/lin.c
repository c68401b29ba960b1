// SPDX-License-Identifier: Apache-2.0
/* lin.c: the registry of the inner linear solvers (fl_lin.h); lin_kit.c holds the helpers they
 * share (lin_*.c). The non-smooth Newton (nsn.c) is their main user.
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

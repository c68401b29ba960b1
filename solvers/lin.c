// SPDX-License-Identifier: Apache-2.0
/* lin.c: the registry of the inner linear solvers (fl_lin.h); lin_kit.c holds the helpers they
 * share (lin_*.c). The non-smooth Newton (nsn.c) is their main user.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fl_campaign.h"
#include "fl_lin.h"
#include "fl_solver_impl.h"

#ifdef FL_HAVE_PETSC
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>

/* The module frictionlab-petsc.so (fl_lin.h): $FL_PETSC_MODULE, else beside the object that
 * holds this code (the build tree: build/ holds the library, the test programs and the
 * module), else in its frictionlab/ folder (installed: <libdir>/frictionlab/). Loaded once,
 * never unloaded (PETSc's finalization runs from it at exit). */
static const fl_lin_ops *petsc_ops;
static char petsc_why[1024];
static pthread_once_t petsc_once = PTHREAD_ONCE_INIT;

static const fl_lin_petsc_host petsc_host = {sizeof(fl_lin), fl_seterr, fl_calloc, fl_free,
                                             fl__lin_record, fl_campaign_size};

static int petsc_try(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  size_t at = strlen(petsc_why); /* every place tried goes into the message */
  if (!h) {
    const char *e = dlerror();
    snprintf(petsc_why + at, sizeof petsc_why - at, "%s%s", at ? "; " : "", e ? e : path);
    return 0;
  }
  fl_lin_petsc_entry_fn entry;
  *(void **)&entry = dlsym(h, FL_LIN_PETSC_ENTRY);
  petsc_ops = entry ? entry(&petsc_host) : NULL;
  if (!petsc_ops)
    snprintf(petsc_why + at, sizeof petsc_why - at, "%s%s: %s", at ? "; " : "", path,
             entry ? "built for another version of libfrictionlab" : "no " FL_LIN_PETSC_ENTRY);
  if (!petsc_ops) dlclose(h); /* refused: nothing of it is in use */
  return petsc_ops != NULL;
}

static void petsc_load(void) {
  const char *env = getenv("FL_PETSC_MODULE");
  if (env && env[0]) {
    petsc_try(env);
    return;
  }
  char path[PATH_MAX];
  const char *tail[] = {"/frictionlab-petsc.so", "/frictionlab/frictionlab-petsc.so"};
  for (int k = 0; k < 2; k++) {
    if (!fl__lib_dir(path, sizeof path, tail[k])) {
      snprintf(petsc_why, sizeof petsc_why, "cannot tell where libfrictionlab is (dladdr)");
      return;
    }
    if (petsc_try(path)) return;
  }
}

static const fl_lin_ops *petsc_module_ops(void) {
  pthread_once(&petsc_once, petsc_load);
  return petsc_ops;
}
#endif

//---- inner linear solver registry ----

const char *fl_lin_type_name(int type) {
  static const char *const names[FL_LIN_NTYPES] = {"jacobi", "gs", "pcg", "pcr", "direct",
                                                   "petsc"};
  return type >= 0 && type < FL_LIN_NTYPES ? names[type] : "?";
}

const fl_lin_ops *fl_lin_ops_get(int type) {
  switch (type) {
    case FL_LIN_JACOBI: return &fl_lin_jacobi_ops;
    case FL_LIN_GS: return &fl_lin_gs_ops;
    case FL_LIN_PCG: return &fl_lin_pcg_ops;
    case FL_LIN_PCR: return &fl_lin_pcr_ops;
    case FL_LIN_DIRECT: return &fl_lin_direct_ops;
#ifdef FL_HAVE_PETSC
    case FL_LIN_PETSC: return petsc_module_ops();
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
#ifdef FL_HAVE_PETSC
  if (!ops && o->type == FL_LIN_PETSC)
    return fl_seterr(FL_ERR_LIBRARY,
                     "nsn: lin=petsc: cannot load the PETSc module frictionlab-petsc.so (%s); "
                     "FL_PETSC_MODULE=PATH names it",
                     petsc_why);
#endif
  if (!ops)
    return fl_seterr(FL_ERR_UNSUPPORTED,
                     "nsn: lin=%s is not available in this build (PETSc not found at "
                     "configure time); available: jacobi, gs, pcg, pcr, direct",
                     fl_lin_type_name(o->type));
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

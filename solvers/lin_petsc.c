// SPDX-License-Identifier: Apache-2.0
/* lin_petsc.c: the inner solver "petsc": any PETSc KSP and PC on the Newton matrix, chosen by
 * PETSc's own options (lin.petsc_options="-ksp_type cr -pc_type jacobi", the default pair).
 *
 * PETSc is initialized lazily on first use (PetscInitializeNoArguments, which calls MPI_Init
 * only when MPI is not initialized yet) and finalized at exit when we started it. Each
 * context gets its own options prefix ("flnsnN_"), so two solvers with different options
 * strings do not see each other's options.
 *
 * Tolerances are ours, not PETSc's: a convergence test builds the true residual b - K x with
 * KSPBuildResidual at every iteration and stops on lin.rel_tol / lin.abs_tol / max_it. This
 * sidesteps the PETSc 3.18 trap where KSPCR with KSP_NORM_UNPRECONDITIONED reports 2 ||r0||
 * forever, and makes "petsc" stop on the same quantity as "pcr". The true residual of each
 * iteration goes to the inner history (natural norms are not available: NAN).
 *
 * With lin.petsc_comm=world the matrix is distributed by rows over PETSC_COMM_WORLD
 * (MatCreateAIJ); every rank must then solve the same system collectively and gets the whole
 * solution back (VecScatterCreateToAll).
 *
 * Built as the module frictionlab-petsc.so (CMakeLists.txt), not into libfrictionlab: lin.c
 * loads it on first use and hands it the few library functions it calls (fl_lin_petsc_host),
 * so that a process that never solves with PETSc never loads it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fl_campaign.h"
#include "fl_lin.h"

#ifdef FL_HAVE_PETSC
#include <petscksp.h>

// the library's functions, through the table lin.c passes in (fl_lin_petsc_module)
static const fl_lin_petsc_host *host;
#define fl_seterr host->seterr
#define fl_calloc host->calloc
#define fl_free host->free
#define fl__lin_record host->record
#define fl_campaign_size host->campaign_size

typedef struct petsc_impl {
  MPI_Comm comm;
  Mat A;
  Vec b, x, t1, t2, xall;
  VecScatter scat;
  KSP ksp;
  PetscInt rstart, rend, max_it;
  PetscInt *cols;  /* row buffer when PetscInt and fl_int differ */
  double bnorm;
  fl_lin *l;
  char prefix[32];
} petsc_impl;

static int petsc_started_here;
static int petsc_prefix_count;

#define PCALL(expr)                                                                     \
  do {                                                                                  \
    PetscErrorCode pe_ = (expr);                                                        \
    if (pe_)                                                                            \
      return fl_seterr(FL_ERR_LIBRARY, "lin petsc: %s failed (PETSc error %d)%s", #expr, \
                       (int)pe_, petsc_hint(pe_));                                      \
  } while (0)


static const char *petsc_hint(PetscErrorCode e) {
  return (e == PETSC_ERR_ARG_UNKNOWN_TYPE || e == PETSC_ERR_ARG_WRONG || e == PETSC_ERR_SUP)
             ? "; check lin.petsc_options (a KSP or PC type PETSc does not know or support)"
             : "";
}


static void petsc_atexit(void) {
  PetscBool fin = PETSC_FALSE;
  PetscFinalized(&fin);
  if (!fin) PetscFinalize();
}


// initialize PETSc once, whether or not MPI is already running
static int petsc_init(void) {
  PetscBool init = PETSC_FALSE;
  PetscInitialized(&init);
  if (init) return FL_OK;
  PetscBool fin = PETSC_FALSE;
  PetscFinalized(&fin);
  if (fin) return fl_seterr(FL_ERR_STATE, "lin petsc: PETSc was already finalized");
  if (PetscInitializeNoArguments())
    return fl_seterr(FL_ERR_LIBRARY, "lin petsc: PetscInitialize failed");
  petsc_started_here = 1;
  atexit(petsc_atexit);
  // errors come back as codes with our message, not as PETSc tracebacks
  PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  return FL_OK;
}


// convergence test on the true residual (see the top comment)
static PetscErrorCode petsc_converged(KSP ksp, PetscInt it, PetscReal rnorm,
                                      KSPConvergedReason *reason, void *ctx) {
  petsc_impl *d = ctx;
  Vec r;
  PetscReal tn;
  PetscCall(KSPBuildResidual(ksp, d->t1, d->t2, &r));
  PetscCall(VecNorm(r, NORM_2, &tn));
  fl_lin *l = d->l;
  int done = fl__lin_record(l, (double)tn, NAN);
  l->stat.iters = (int)it;
  if (!isfinite((double)tn))
    *reason = KSP_DIVERGED_NANORINF;
  else if (done)
    *reason = KSP_CONVERGED_RTOL;
  else if (it >= d->max_it)
    *reason = KSP_DIVERGED_ITS;
  else
    *reason = KSP_CONVERGED_ITERATING;
  return 0;
}


static void petsc_destroy(fl_lin *l) {
  petsc_impl *d = l->impl;
  if (!d) return;
  PetscBool fin = PETSC_FALSE;
  PetscFinalized(&fin);
  if (!fin) {
    KSPDestroy(&d->ksp);
    MatDestroy(&d->A);
    VecDestroy(&d->b);
    VecDestroy(&d->x);
    VecDestroy(&d->t1);
    VecDestroy(&d->t2);
    VecDestroy(&d->xall);
    VecScatterDestroy(&d->scat);
  }
  fl_free(d->cols);
  fl_free(d);
  l->impl = NULL;
}


static int petsc_setup(fl_lin *l, const fl_csr *K) {
  // in a campaign each rank solves different pairs: a collective solve would wait forever
  if (l->opts.petsc_world && fl_campaign_size() > 1) {
    return fl_seterr(FL_ERR_UNSUPPORTED,
                     "lin petsc: lin.petsc_comm=world cannot run inside an MPI campaign (the "
                     "ranks solve different problems); use lin.petsc_comm=self");
  }
  FL_TRY(petsc_init());
  petsc_impl *d = fl_calloc(1, sizeof(*d));
  if (!d) return fl_seterr(FL_ERR_NOMEM, "lin petsc: out of memory");
  l->impl = d;
  d->l = l;
  d->comm = l->opts.petsc_world ? PETSC_COMM_WORLD : PETSC_COMM_SELF;

  // row ownership and preallocation of the local rows
  PetscInt N = l->n, m = PETSC_DECIDE, end = 0;
  PCALL(PetscSplitOwnership(d->comm, &m, &N));
  if (MPI_Scan(&m, &end, 1, MPIU_INT, MPI_SUM, d->comm) != MPI_SUCCESS)
    return fl_seterr(FL_ERR_LIBRARY, "lin petsc: MPI_Scan failed");
  d->rstart = end - m;
  d->rend = end;
  PetscInt *dnz = fl_calloc((size_t)m + 1, sizeof(PetscInt));
  PetscInt *onz = fl_calloc((size_t)m + 1, sizeof(PetscInt));
  fl_int maxrow = 0;
  for (fl_int i = 0; i < K->nrow; i++)
    if (K->rowptr[i + 1] - K->rowptr[i] > maxrow) maxrow = K->rowptr[i + 1] - K->rowptr[i];
  d->cols = fl_calloc((size_t)maxrow + 1, sizeof(PetscInt));
  if (!dnz || !onz || !d->cols) {
    fl_free(dnz);
    fl_free(onz);
    return fl_seterr(FL_ERR_NOMEM, "lin petsc: out of memory");
  }
  for (PetscInt i = d->rstart; i < d->rend; i++)
    for (fl_int k = K->rowptr[i]; k < K->rowptr[i + 1]; k++) {
      PetscInt j = K->col[k];
      if (j >= d->rstart && j < d->rend)
        dnz[i - d->rstart]++;
      else
        onz[i - d->rstart]++;
    }
  PetscErrorCode pe = MatCreateAIJ(d->comm, m, m, N, N, 0, dnz, 0, onz, &d->A);
  fl_free(dnz);
  fl_free(onz);
  PCALL(pe);
  PCALL(MatSetOption(d->A, MAT_SYMMETRIC, PETSC_TRUE));
  PCALL(MatCreateVecs(d->A, &d->x, &d->b));
  PCALL(VecDuplicate(d->x, &d->t1));
  PCALL(VecDuplicate(d->x, &d->t2));
  PCALL(VecScatterCreateToAll(d->x, &d->scat, &d->xall));

  // the KSP: CR + Jacobi unless the options string says otherwise
  snprintf(d->prefix, sizeof(d->prefix), "flnsn%d_", ++petsc_prefix_count);
  PCALL(KSPCreate(d->comm, &d->ksp));
  PCALL(KSPSetOptionsPrefix(d->ksp, d->prefix));
  PCALL(KSPSetType(d->ksp, KSPCR));
  PC pc;
  PCALL(KSPGetPC(d->ksp, &pc));
  PCALL(PCSetType(pc, PCJACOBI));
  PCALL(KSPSetTolerances(d->ksp, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT,
                         (PetscInt)l->opts.max_iter));
  if (l->opts.petsc_options[0]) {
    PCALL(PetscOptionsPrefixPush(NULL, d->prefix));
    pe = PetscOptionsInsertString(NULL, l->opts.petsc_options);
    PetscOptionsPrefixPop(NULL);
    if (pe)
      return fl_seterr(FL_ERR_OPTION_TYPE,
                       "lin.petsc_options: PETSc could not parse \"%s\" (PETSc error %d); "
                       "expected PETSc options such as \"-ksp_type cr -pc_type jacobi\"",
                       l->opts.petsc_options, (int)pe);
  }
  pe = KSPSetFromOptions(d->ksp);
  if (pe)
    return fl_seterr(FL_ERR_OPTION_RANGE,
                     "lin.petsc_options: PETSc rejected \"%s\" (PETSc error %d); expected a "
                     "KSP and PC that PETSc knows, e.g. \"-ksp_type cr -pc_type jacobi\"",
                     l->opts.petsc_options, (int)pe);
  PCALL(KSPSetInitialGuessNonzero(d->ksp, PETSC_FALSE));
  PCALL(KSPGetTolerances(d->ksp, NULL, NULL, NULL, &d->max_it));
  PCALL(KSPSetConvergenceTest(d->ksp, petsc_converged, d, NULL));
  return FL_OK;
}


static int petsc_solve(fl_lin *l, const fl_csr *K, const double *b, double *x) {
  petsc_impl *d = l->impl;
  fl_int n = l->n;

  // local rows of K and b
  for (PetscInt i = d->rstart; i < d->rend; i++) {
    fl_int k0 = K->rowptr[i], cnt = K->rowptr[i + 1] - k0;
    for (fl_int k = 0; k < cnt; k++) d->cols[k] = K->col[k0 + k];
    PCALL(MatSetValues(d->A, 1, &i, cnt, d->cols, K->val + k0, INSERT_VALUES));
  }
  PCALL(MatAssemblyBegin(d->A, MAT_FINAL_ASSEMBLY));
  PCALL(MatAssemblyEnd(d->A, MAT_FINAL_ASSEMBLY));
  PetscScalar *pb;
  PCALL(VecGetArray(d->b, &pb));
  for (PetscInt i = d->rstart; i < d->rend; i++) pb[i - d->rstart] = b[i];
  PCALL(VecRestoreArray(d->b, &pb));

  // solve (the convergence test records every iteration), then gather x everywhere
  PCALL(KSPSetOperators(d->ksp, d->A, d->A));
  PCALL(KSPSolve(d->ksp, d->b, d->x));
  PCALL(VecScatterBegin(d->scat, d->x, d->xall, INSERT_VALUES, SCATTER_FORWARD));
  PCALL(VecScatterEnd(d->scat, d->x, d->xall, INSERT_VALUES, SCATTER_FORWARD));
  const PetscScalar *px;
  PCALL(VecGetArrayRead(d->xall, &px));
  for (fl_int i = 0; i < n; i++) x[i] = px[i];
  PCALL(VecRestoreArrayRead(d->xall, &px));

  KSPConvergedReason why;
  PetscInt its;
  PCALL(KSPGetConvergedReason(d->ksp, &why));
  PCALL(KSPGetIterationNumber(d->ksp, &its));
  l->stat.iters = (int)its;
  if (why == KSP_DIVERGED_NANORINF)
    l->stat.reason = FL_LIN_NAN;
  else if (why > 0)
    l->stat.reason = FL_LIN_CONVERGED;
  else if (why == KSP_DIVERGED_ITS)
    l->stat.reason = FL_LIN_MAX_ITER;
  else
    l->stat.reason = FL_LIN_BREAKDOWN;
  return FL_OK;
}


static const fl_lin_ops petsc_ops = {"petsc", petsc_setup, petsc_solve, petsc_destroy};

__attribute__((visibility("default"))) const fl_lin_ops *fl_lin_petsc_module(
    const fl_lin_petsc_host *h) {
  if (!h || h->lin_size != sizeof(fl_lin)) return NULL;
  host = h;
  return &petsc_ops;
}

#else
typedef int fl_lin_petsc_unused_; /* PETSc not compiled in: "petsc" is reported unsupported */
#endif

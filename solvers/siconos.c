// SPDX-License-Identifier: Apache-2.0
/* siconos.c: Siconos Numerics 4.4's frictional-contact solvers as FrictionLab solvers
 * (docs/siconos.md). Built only with FL_HAVE_SICONOS (CMake finds the headers).
 *
 * Nine ops tables share one implementation; the solver's name picks the Siconos solver id
 * and its options. Local solvers (fc3d_driver) take the local form (W, q, mu): the problem's
 * own for a local problem, W = J A^-1 J^T + diag(R_n), q = J v* + b - vhat_n for a global one
 * (fl_problem_local_form; v = v* + A^-1 J^T gamma afterwards). Global solvers (gfc3d_driver)
 * take M = A (both triangles), H = J^T, q = A v* (Siconos 4.4: M v = q + H r) and
 * b = b - (vhat_n, 0, 0), rigid contact only.
 *
 * Isolation: Siconos 4.4 (Debian) is built with assertions and aborts on some inputs, so every
 * solve runs in a forked child. The library is dlopen'ed in the child only, never in the
 * harness, so its OpenBLAS (loaded as a dependency) cannot interpose BLAS symbols for CHOLMOD
 * and starts no thread pool in the harness; OPENBLAS_NUM_THREADS=1 is set before the load.
 * RTLD_DEEPBIND makes Siconos bind to its own dependencies first: without it, its sequential
 * MUMPS's MPI stubs resolve to the harness's OpenMPI (PETSc), which aborts before MPI_Init.
 * The child writes the answer, the per-iteration errors (Siconos's Callback, where the solver
 * calls it) and a status into an anonymous shared mapping; the parent waits with the common
 * time_limit and kills the child past it. Abort or signal: FL_DIVERGED_BREAKDOWN; time-out:
 * FL_DIVERGED_TIME_LIMIT; the harness goes on.
 */
#define _GNU_SOURCE /* dladdr */
#include "fl_solver_impl.h"

#ifdef FL_HAVE_SICONOS

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "FrictionContactProblem.h"
#include "Friction_cst.h"
#include "GlobalFrictionContactProblem.h"
#include "NumericsMatrix.h"
#include "SolverOptions.h"

#define SIC_LIB "libsiconos_numerics.so.7"
#define SIC_HIST_MAX (1 << 20) /* records kept in the shared mapping; later ones are counted */

enum { FAULT_NONE = 0, FAULT_ABORT = 1, FAULT_HANG = 2 };

typedef struct sic_opts {
  int shuffle;        /* nsgs: new contact order every sweep */
  double omega;       /* nsgs: relaxation (1 = none) */
  double rho;         /* nsn, admm, vi-eg: fixed rho (0 = Siconos's default strategy) */
  double alpha;       /* prox: initial proximal parameter (0 = Siconos's default) */
  int inner_max_iter; /* prox: iterations of the inner Newton solver (0 = default) */
  int fault;          /* test hook: none | abort | hang in the child before the solve */
} sic_opts;

typedef struct sic_kind {
  const char *name;
  int id;     /* Siconos solver id */
  int global; /* gfc3d_driver */
} sic_kind;

static const sic_kind sic_kinds[] = {
  {"siconos-nsgs", SICONOS_FRICTION_3D_NSGS, 0},
  {"siconos-nsn-ac", SICONOS_FRICTION_3D_NSN_AC, 0},
  {"siconos-nsn-fb", SICONOS_FRICTION_3D_NSN_FB, 0},
  {"siconos-prox", SICONOS_FRICTION_3D_PROX, 0},
  {"siconos-admm", SICONOS_FRICTION_3D_ADMM, 0},
  {"siconos-vi-eg", SICONOS_FRICTION_3D_VI_EG, 0},
  {"siconos-gfc3d-nsgs-wr", SICONOS_GLOBAL_FRICTION_3D_NSGS_WR, 1},
  {"siconos-gfc3d-prox-wr", SICONOS_GLOBAL_FRICTION_3D_PROX_WR, 1},
  {"siconos-gfc3d-admm", SICONOS_GLOBAL_FRICTION_3D_ADMM, 1},
};

typedef struct sic_data {
  const sic_kind *kind;
  fl_csr *W;        /* local form (owned) for local solvers on a global problem */
  double *q;        /* (3nc) local q (owned) or NULL when the problem's is used */
  const fl_csr *Wp; /* the W passed to Siconos (W or p->W) */
  const double *qp;
  fl_dynamics *dyn; /* global problem, local solver: to recover v */
  fl_csr *H;        /* global solvers: J^T over contact rows (nv x 3nc), owned */
  double *gq, *gb;  /* global solvers: q = A v* (nv), b - vhat (3nc), owned */
  int last_signal;  /* signal that ended the last child, 0 if none */
  int last_info;    /* Siconos's info of the last solve */
  double last_driver_s; /* seconds inside the driver in the child */
} sic_data;

/* the shared mapping: header, then gamma (3nc), u (3nc), v (nv), rec_err, rec_t (hcap) */
typedef struct sic_shm {
  volatile int status; /* 0 running, 1 done, 2 could not run (msg) */
  int error_only;      /* set by the parent: evaluate Siconos's error of the given answer */
  int info, iters;
  int nrec;            /* records written (may exceed hcap: counted, not kept) */
  int hcap;
  double t0;
  double err_final, driver_s;
  int blas_threads;
  char blas[512];
  char msg[256];
} sic_shm;

typedef struct sic_view {
  sic_shm *h;
  double *gamma, *u, *v, *rec_err, *rec_t;
} sic_view;

static size_t shm_bytes(fl_int m, fl_int nv, int hcap) {
  return sizeof(sic_shm) + 16 + sizeof(double) * ((size_t)2 * m + (size_t)nv + 2 * (size_t)hcap);
}

static void shm_view(void *base, fl_int m, fl_int nv, int hcap, sic_view *w) {
  w->h = base;
  double *d = (double *)((char *)base + ((sizeof(sic_shm) + 15) & ~(size_t)15));
  w->gamma = d;
  w->u = d + m;
  w->v = d + 2 * m;
  w->rec_err = d + 2 * m + nv;
  w->rec_t = d + 2 * m + nv + hcap;
}

static const sic_kind *kind_of(const fl_solver *s) {
  for (size_t k = 0; k < sizeof sic_kinds / sizeof sic_kinds[0]; k++)
    if (strcmp(sic_kinds[k].name, s->ops->name) == 0) return &sic_kinds[k];
  return NULL;
}


//---- option tables ----

#define SO(f) offsetof(sic_opts, f)
#define FAULT_OPT                                                                              \
  {"fault", FL_OPT_ENUM, SO(fault), 0, 2, FAULT_NONE, "none|abort|hang",                      \
   "test hook: the child process calls abort() or sleeps instead of solving"}
#define END_OPT {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}

static const fl_option_desc nsgs_table[] = {
  {"shuffle", FL_OPT_BOOL, SO(shuffle), 0, 1, 0, NULL,
   "shuffle the contact order every sweep (Siconos's NSGS_SHUFFLE_TRUE_EACH_LOOP)"},
  {"omega", FL_OPT_REAL, SO(omega), 1e-6, 1.999999, 1.0, NULL,
   "relaxation of each local update (1 = none)"},
  FAULT_OPT, END_OPT};
static const fl_option_desc nsn_table[] = {
  {"rho", FL_OPT_REAL, SO(rho), 0, INFINITY, 0, NULL,
   "fixed rho of the Alart-Curnier/Fischer-Burmeister map; 0 = Siconos's spectral-norm "
   "strategy"},
  FAULT_OPT, END_OPT};
static const fl_option_desc prox_table[] = {
  {"alpha", FL_OPT_REAL, SO(alpha), 0, INFINITY, 0, NULL,
   "initial proximal parameter; 0 = Siconos's default"},
  {"inner_max_iter", FL_OPT_INT, SO(inner_max_iter), 0, 2147483646.0, 0, NULL,
   "iteration budget of the inner solver per proximal step; 0 = Siconos's default"},
  FAULT_OPT, END_OPT};
static const fl_option_desc rho_table[] = {
  {"rho", FL_OPT_REAL, SO(rho), 0, INFINITY, 0, NULL,
   "fixed step/penalty rho; 0 = Siconos's default (adaptive) strategy"},
  FAULT_OPT, END_OPT};


//---- setup (parent) ----

static void sic_destroy(fl_solver *s) {
  sic_data *d = s->data;
  if (!d) return;
  fl_csr_free(d->W);
  fl_csr_free(d->H);
  free(d->q);
  free(d->gq);
  free(d->gb);
  fl_dynamics_free(d->dyn);
  memset(d, 0, sizeof *d);
}


static int sic_setup(fl_solver *s, const fl_problem *p) {
  sic_data *d = s->data;
  const char *nm = s->ops->name;
  sic_destroy(s);
  d->kind = kind_of(s);
  if (!d->kind) return fl_seterr(FL_ERR_INVAL, "solver %s: not a Siconos solver", nm);
  if (p->nh > 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "solver %s: problem %s has %d bilateral rows; Siconos's "
                     "frictional-contact solvers take contact rows only", nm, p->name, (int)p->nh);
  fl_int m = 3 * p->nc;
  if (!d->kind->global) {
    if (p->kind == FL_PROBLEM_LOCAL) {
      if (!p->W || !p->q || p->W->nrow != m || p->W->ncol != m)
        return fl_seterr(FL_ERR_INVAL, "solver %s: local problem %s: W or q missing or not %d x %d",
                         nm, p->name, (int)m, (int)m);
      d->Wp = p->W;
      d->qp = p->q;
      return FL_OK;
    }
    d->q = malloc(sizeof(double) * (size_t)(m > 0 ? m : 1));
    if (!d->q) return fl_seterr(FL_ERR_NOMEM, "solver %s: setup: q (%d doubles)", nm, (int)m);
    FL_TRY(fl_dynamics_create(p, &d->dyn));
    FL_TRY(fl_problem_local_form(p, d->dyn, &d->W, d->q));
    d->Wp = d->W;
    d->qp = d->q;
    return FL_OK;
  }
  // global: rigid contact only (gfc3d has no normal compliance)
  for (fl_int i = 0; i < p->nc; i++)
    if (isfinite(p->stiffness[i]))
      return fl_seterr(FL_ERR_UNSUPPORTED, "solver %s: problem %s: contact %d is compliant; "
                       "Siconos's gfc3d solvers take rigid contact only", nm, p->name, (int)i);
  if (!p->A || !p->J || !p->vstar || p->J->nrow != m || p->A->nrow != p->nv)
    return fl_seterr(FL_ERR_INVAL, "solver %s: global problem %s: A, J or v* missing or J not "
                     "%d rows", nm, p->name, (int)m);
  fl_csr *Jc = p->J;
  FL_TRY(fl_csr_transpose(Jc, &d->H));
  d->gq = malloc(sizeof(double) * (size_t)(p->nv > 0 ? p->nv : 1));
  d->gb = malloc(sizeof(double) * (size_t)(m > 0 ? m : 1));
  if (!d->gq || !d->gb) return fl_seterr(FL_ERR_NOMEM, "solver %s: setup: q, b", nm);
  fl_csr_gemv(p->A, 1.0, p->vstar, 0.0, d->gq);
  for (fl_int i = 0; i < p->nc; i++) {
    double Rn, vhat;
    fl_problem_normal_law(p, i, &Rn, &vhat);
    for (int c = 0; c < 3; c++)
      d->gb[3 * i + c] = (p->b ? p->b[3 * i + c] : 0.0) - (c == 0 ? vhat : 0.0);
  }
  return FL_OK;
}


//---- the child ----

typedef struct sic_api {
  NumericsMatrix *(*NM_create)(NM_types, int, int);
  void (*NM_triplet_alloc)(NumericsMatrix *, CS_INT);
  void (*NM_entry)(NumericsMatrix *, int, int, double);
  FrictionContactProblem *(*fc_new)(int, int, NumericsMatrix *, double *, double *);
  GlobalFrictionContactProblem *(*gfc_new)(void);
  SolverOptions *(*opt_create)(int);
  int (*fc3d_driver)(FrictionContactProblem *, double *, double *, SolverOptions *);
  int (*gfc3d_driver)(GlobalFrictionContactProblem *, double *, double *, double *,
                      SolverOptions *);
  int (*fc3d_error)(FrictionContactProblem *, double *, double *, double, SolverOptions *,
                    double, double *);
  int (*gfc3d_error)(GlobalFrictionContactProblem *, double *, double *, double *, double,
                     SolverOptions *, double, double, double *);
  void (*set_verbose)(int);
} sic_api;

static int load_api(void *h, sic_api *a) {
#define SYM(f, n) (*(void **)&a->f = dlsym(h, n)) != NULL
  return SYM(NM_create, "NM_create") && SYM(NM_triplet_alloc, "NM_triplet_alloc") &&
         SYM(NM_entry, "NM_entry") && SYM(fc_new, "frictionContactProblem_new_with_data") &&
         SYM(gfc_new, "globalFrictionContactProblem_new") &&
         SYM(opt_create, "solver_options_create") && SYM(fc3d_driver, "fc3d_driver") &&
         SYM(gfc3d_driver, "gfc3d_driver") && SYM(fc3d_error, "fc3d_compute_error") &&
         SYM(gfc3d_error, "gfc3d_compute_error") && SYM(set_verbose, "numerics_set_verbose");
#undef SYM
}

/* a CSR matrix as a Siconos sparse (triplet) matrix, every stored entry */
static NumericsMatrix *to_nm(const sic_api *a, const fl_csr *c) {
  NumericsMatrix *M = a->NM_create(NM_SPARSE, (int)c->nrow, (int)c->ncol);
  a->NM_triplet_alloc(M, c->nnz > 0 ? c->nnz : 1);
  for (fl_int i = 0; i < c->nrow; i++)
    for (fl_int k = c->rowptr[i]; k < c->rowptr[i + 1]; k++)
      a->NM_entry(M, (int)i, (int)c->col[k], c->val[k]);
  return M;
}

static void on_iteration(void *env, int size, double *r, double *u, double error, void *extra) {
  sic_view *w = env;
  int k = w->h->nrec++;
  if (k < w->h->hcap) {
    w->rec_err[k] = error;
    w->rec_t[k] = fl_time_now() - w->h->t0;
  }
}

/* which library provides the BLAS that Siconos's cblas calls bind to: loaded with
 * RTLD_DEEPBIND, Siconos searches its own dependencies first, as dlsym on its handle does */
static void note_blas(void *h, sic_shm *sh) {
  void *f = dlsym(h, "cblas_dnrm2");
  Dl_info di;
  char real[4096];
  const char *path = f && dladdr(f, &di) && di.dli_fname ? di.dli_fname : "?";
  snprintf(sh->blas, sizeof sh->blas, "%.500s", realpath(path, real) ? real : path);
  int (*nth)(void) = (int (*)(void))dlsym(h, "openblas_get_num_threads");
  sh->blas_threads = nth ? nth() : -1;
}

static void set_params(const fl_solver *s, SolverOptions *o) {
  const sic_opts *op = s->opts;
  o->iparam[SICONOS_IPARAM_MAX_ITER] = s->common.max_iter;
  o->dparam[SICONOS_DPARAM_TOL] = s->common.abs_tol;
  switch (kind_of(s)->id) {
  case SICONOS_FRICTION_3D_NSGS:
  case SICONOS_GLOBAL_FRICTION_3D_NSGS_WR:
    if (op->shuffle) {
      o->iparam[SICONOS_FRICTION_3D_NSGS_SHUFFLE] = SICONOS_FRICTION_3D_NSGS_SHUFFLE_TRUE_EACH_LOOP;
      o->iparam[SICONOS_FRICTION_3D_NSGS_SHUFFLE_SEED] = s->common.seed;
    }
    if (op->omega != 1.0) {
      o->iparam[SICONOS_FRICTION_3D_NSGS_RELAXATION] = SICONOS_FRICTION_3D_NSGS_RELAXATION_TRUE;
      o->dparam[SICONOS_FRICTION_3D_NSGS_RELAXATION_VALUE] = op->omega;
    }
    break;
  case SICONOS_FRICTION_3D_NSN_AC:
  case SICONOS_FRICTION_3D_NSN_FB:
    if (op->rho > 0) {
      o->iparam[SICONOS_FRICTION_3D_NSN_RHO_STRATEGY] =
        SICONOS_FRICTION_3D_NSN_FORMULATION_RHO_STRATEGY_CONSTANT;
      o->dparam[SICONOS_FRICTION_3D_NSN_RHO] = op->rho;
    }
    break;
  case SICONOS_FRICTION_3D_PROX:
  case SICONOS_GLOBAL_FRICTION_3D_PROX_WR:
    if (op->alpha > 0) o->dparam[SICONOS_FRICTION_3D_PROXIMAL_DPARAM_ALPHA] = op->alpha;
    if (op->inner_max_iter > 0 && o->numberOfInternalSolvers > 0 && o->internalSolvers[0])
      o->internalSolvers[0]->iparam[SICONOS_IPARAM_MAX_ITER] = op->inner_max_iter;
    break;
  case SICONOS_FRICTION_3D_ADMM:
  case SICONOS_GLOBAL_FRICTION_3D_ADMM:
    if (op->rho > 0) {
      o->iparam[SICONOS_FRICTION_3D_ADMM_IPARAM_RHO_STRATEGY] =
        SICONOS_FRICTION_3D_ADMM_RHO_STRATEGY_CONSTANT;
      o->iparam[SICONOS_FRICTION_3D_ADMM_IPARAM_INITIAL_RHO] =
        SICONOS_FRICTION_3D_ADMM_INITIAL_RHO_GIVEN;
      o->dparam[SICONOS_FRICTION_3D_ADMM_RHO] = op->rho;
    }
    break;
  case SICONOS_FRICTION_3D_VI_EG:
    if (op->rho > 0) o->dparam[3] = op->rho; /* SICONOS_VI_DPARAM_RHO: > 0 = fixed */
    break;
  default: break;
  }
}

static double nrm2(fl_int n, const double *x) {
  double s2 = 0;
  for (fl_int k = 0; k < n; k++) s2 += x[k] * x[k];
  return sqrt(s2);
}

/* runs in the child; never returns */
static void child_main(const fl_solver *s, const fl_problem *p, sic_view *w) {
  const sic_data *d = s->data;
  const sic_opts *op = s->opts;
  sic_shm *sh = w->h;
  // Siconos prints on stdout; the harness's stdout (tables, CSV) must stay clean
  int dn = open("/dev/null", O_WRONLY);
  if (dn >= 0) dup2(dn, 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  if (op->fault == FAULT_ABORT) abort();
  if (op->fault == FAULT_HANG)
    for (;;) pause();
  void *h = dlopen(SIC_LIB, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  sic_api a;
  if (!h || !load_api(h, &a)) {
    snprintf(sh->msg, sizeof sh->msg, "%s: %s", SIC_LIB, h ? "missing symbols" : dlerror());
    sh->status = 2;
    _exit(0);
  }
  note_blas(h, sh);
  a.set_verbose(0);
  fl_int m = 3 * p->nc;
  double tol = s->common.abs_tol;
  SolverOptions *o = a.opt_create(d->kind->id);
  set_params(s, o);
  Callback cb = {w, on_iteration};
  o->callback = &cb;
  double e0 = NAN, ef = NAN;
  if (!d->kind->global) {
    NumericsMatrix *M = to_nm(&a, d->Wp);
    double *q = malloc(sizeof(double) * (size_t)(m > 0 ? m : 1));
    memcpy(q, d->qp, sizeof(double) * (size_t)m);
    FrictionContactProblem *fp = a.fc_new(3, (int)p->nc, M, q, p->mu);
    double nq = nrm2(m, q);
    a.fc3d_error(fp, w->gamma, w->u, tol, o, nq, &e0);
    if (sh->error_only) {
      sh->err_final = e0;
      sh->status = 1;
      _exit(0);
    }
    sh->t0 = fl_time_now();
    sh->nrec = 0;
    on_iteration(w, (int)m, w->gamma, w->u, e0, NULL);
    sh->info = a.fc3d_driver(fp, w->gamma, w->u, o);
    sh->driver_s = fl_time_now() - sh->t0;
    a.fc3d_error(fp, w->gamma, w->u, tol, o, nq, &ef);
  } else {
    GlobalFrictionContactProblem *gp = a.gfc_new();
    gp->dimension = 3;
    gp->numberOfContacts = (int)p->nc;
    gp->M = to_nm(&a, p->A);
    gp->H = to_nm(&a, d->H);
    gp->q = d->gq;
    gp->b = d->gb;
    gp->mu = p->mu;
    double nq = nrm2(p->nv, d->gq), nb = nrm2(m, d->gb);
    a.gfc3d_error(gp, w->gamma, w->u, w->v, tol, o, nq, nb, &e0);
    if (sh->error_only) {
      sh->err_final = e0;
      sh->status = 1;
      _exit(0);
    }
    sh->t0 = fl_time_now();
    sh->nrec = 0;
    on_iteration(w, (int)m, w->gamma, w->u, e0, NULL);
    sh->info = a.gfc3d_driver(gp, w->gamma, w->u, w->v, o);
    sh->driver_s = fl_time_now() - sh->t0;
    a.gfc3d_error(gp, w->gamma, w->u, w->v, tol, o, nq, nb, &ef);
  }
  sh->iters = o->iparam[SICONOS_IPARAM_ITER_DONE];
  sh->err_final = ef;
  sh->status = 1;
  _exit(0); /* no atexit handlers, no flush of the parent's stdio buffers */
}


//---- solve (parent) ----

/* forks the child on the mapping w and waits for it under the time limit, polling with a
 * short, growing sleep; *timed_out when it was killed at the limit */
static int run_child(fl_solver *s, const fl_problem *p, sic_view *w, int *wst, int *timed_out) {
  fflush(NULL); /* nothing buffered is duplicated into the child */
  double t_fork = fl_time_now();
  pid_t pid = fork();
  if (pid < 0) return fl_seterr(FL_ERR_IO, "solver %s: fork: %s", s->ops->name, strerror(errno));
  if (pid == 0) child_main(s, p, w);
  long nap = 20000;
  for (;;) {
    pid_t r = waitpid(pid, wst, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    if (fl_time_now() - t_fork > s->common.time_limit) {
      kill(pid, SIGKILL);
      while (waitpid(pid, wst, 0) < 0 && errno == EINTR) {}
      *timed_out = 1;
      break;
    }
    struct timespec ts = {0, nap};
    nanosleep(&ts, NULL);
    if (nap < 2000000) nap *= 2;
  }
  return FL_OK;
}


static int sic_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  sic_data *d = s->data;
  const char *nm = s->ops->name;
  fl_int m = 3 * p->nc, nv = d->kind->global ? p->nv : 0;
  long hc = (long)s->common.max_iter + 2;
  int hcap = hc < SIC_HIST_MAX ? (int)hc : SIC_HIST_MAX;
  size_t bytes = shm_bytes(m, nv, hcap);
  void *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    return fl_seterr(FL_ERR_NOMEM, "solver %s: shared mapping of %zu bytes: %s", nm, bytes,
                     strerror(errno));
  sic_view w;
  shm_view(base, m, nv, hcap, &w);
  w.h->hcap = hcap;
  memcpy(w.gamma, gamma, sizeof(double) * (size_t)m);
  if (nv > 0) memcpy(w.v, v, sizeof(double) * (size_t)nv);

  int wst = 0, timed_out = 0;
  int frc = run_child(s, p, &w, &wst, &timed_out);
  if (frc < 0) {
    munmap(base, bytes);
    return frc;
  }
  d->last_signal = WIFSIGNALED(wst) ? WTERMSIG(wst) : 0;
  int done = !timed_out && WIFEXITED(wst) && w.h->status == 1;
  if (!timed_out && WIFEXITED(wst) && w.h->status == 2) {
    int rc = fl_seterr(FL_ERR_UNSUPPORTED, "solver %s: cannot load Siconos: %s", nm, w.h->msg);
    munmap(base, bytes);
    return rc;
  }
  d->last_info = done ? w.h->info : -1;
  d->last_driver_s = done ? w.h->driver_s : NAN;

  // the answer: kept only from a finished child; else the guess stays
  if (done) {
    memcpy(gamma, w.gamma, sizeof(double) * (size_t)m);
    if (d->kind->global) {
      memcpy(v, w.v, sizeof(double) * (size_t)p->nv);
    } else if (p->kind == FL_PROBLEM_GLOBAL && v) {
      // v = v* + A^-1 J^T gamma
      fl_csr_gemtv(p->J, 1.0, gamma, 0.0, v);
      fl_dynamics_solve_A(d->dyn, v, v);
      for (fl_int k = 0; k < p->nv; k++) v[k] += p->vstar[k];
    }
  }

  /* replay into the history, one record per iteration as the contract wants: 0 = the guess,
   * 1..K-1 = the errors Siconos's callback reported (error NAN and the end time where the
   * solver reports fewer than it counts, e.g. ADMM), K = the answer with Siconos's error
   * recomputed on it. A child that did not finish leaves the guess: one record. Metrics are
   * evaluated on the returned answer only (the callbacks' iterates are not kept). */
  int ncb = w.h->nrec - 1;
  int K = !done ? 0 : (w.h->iters > ncb ? w.h->iters : ncb);
  int use_cb = ncb >= K;
  int rc = FL_OK;
  for (int k = 0; k <= K; k++) {
    fl_iter_stat st;
    fl_iter_stat_init(&st, k);
    double tk = done ? w.h->driver_s : NAN;
    if (k == K && done) {
      st.error = w.h->err_final;
    } else if ((k == 0 || use_cb) && k < hcap && k <= ncb) {
      st.error = w.rec_err[k];
      tk = w.rec_t[k];
    }
    s->cur_v = k == K && p->kind == FL_PROBLEM_GLOBAL ? v : NULL;
    s->cur_gamma = k == K ? gamma : NULL;
    if (fl_solver_record(s, &st) == FL_REASON_ABORT) {
      rc = s->abort_code;
      break;
    }
    if (s->hist_len > 0) s->hist[s->hist_len - 1].t = isfinite(tk) ? tk : 0.0;
  }
  if (rc >= 0) {
    if (timed_out) {
      s->reason = FL_DIVERGED_TIME_LIMIT;
    } else if (!done) {
      s->reason = FL_DIVERGED_BREAKDOWN;
      fprintf(stderr, "%s: %s: Siconos's child process %s %d: DIVERGED_BREAKDOWN\n", nm,
              p->name, d->last_signal ? "died of signal" : "exited with status",
              d->last_signal ? d->last_signal : WEXITSTATUS(wst));
    } else if (!isfinite(w.h->err_final)) {
      s->reason = FL_DIVERGED_NAN;
    } else if (w.h->info == 0) {
      s->reason = FL_CONVERGED_ATOL;
    } else {
      s->reason = w.h->iters >= s->common.max_iter ? FL_DIVERGED_MAX_ITER : FL_DIVERGED_BREAKDOWN;
    }
  }
  munmap(base, bytes);
  return rc;
}


int fl__siconos_error(fl_solver *s, const fl_problem *p, const double *v, const double *gamma,
                      double *err) {
  sic_data *d = s->data;
  if (!s->is_setup || !d->kind)
    return fl_seterr(FL_ERR_STATE, "fl__siconos_error: solver %s not set up", s->ops->name);
  fl_int m = 3 * p->nc, nv = d->kind->global ? p->nv : 0;
  size_t bytes = shm_bytes(m, nv, 1);
  void *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return fl_seterr(FL_ERR_NOMEM, "fl__siconos_error: shared mapping");
  sic_view w;
  shm_view(base, m, nv, 1, &w);
  w.h->hcap = 1;
  w.h->error_only = 1;
  memcpy(w.gamma, gamma, sizeof(double) * (size_t)m);
  if (nv > 0) memcpy(w.v, v, sizeof(double) * (size_t)nv);
  int wst = 0, timed_out = 0;
  int rc = run_child(s, p, &w, &wst, &timed_out);
  if (rc >= 0 && !(WIFEXITED(wst) && !timed_out && w.h->status == 1))
    rc = fl_seterr(FL_ERR_STATE, "fl__siconos_error: solver %s: the child failed (%s)",
                   s->ops->name, w.h->status == 2 ? w.h->msg : "abort, signal or time-out");
  *err = w.h->err_final;
  munmap(base, bytes);
  return rc;
}


static void sic_view_fn(const fl_solver *s, FILE *f) {
  const sic_data *d = s->data;
  fprintf(f, "  %s: Siconos 4.4 %s in a child process (%s); last info %d, driver %.3g s%s\n",
          s->ops->name, d->kind && d->kind->global ? "gfc3d_driver" : "fc3d_driver", SIC_LIB,
          d->last_info, d->last_driver_s, d->last_signal ? ", child killed by a signal" : "");
}


int fl_siconos_blas(char *buf, size_t n, int *threads) {
  // the same probe as the child's, in a throw-away child so the harness never loads Siconos
  size_t bytes = sizeof(sic_shm);
  sic_shm *sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) return fl_seterr(FL_ERR_NOMEM, "fl_siconos_blas: shared mapping");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    void *h = dlopen(SIC_LIB, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (h) {
      note_blas(h, sh);
      sh->status = 1;
    }
    _exit(0);
  }
  int wst;
  if (pid > 0) while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {}
  int ok = pid > 0 && sh->status == 1;
  if (ok) {
    snprintf(buf, n, "%s", sh->blas);
    *threads = sh->blas_threads;
  }
  munmap(sh, bytes);
  return ok ? FL_OK : fl_seterr(FL_ERR_NOT_FOUND, "fl_siconos_blas: %s not loadable", SIC_LIB);
}


#define SIC_OPS(var, nm_, table, summary_, caps_, defaults)                                      \
  const fl_solver_ops var = {                                                                    \
    .abi_version = FL_SOLVER_ABI,                                                                \
    .name = nm_,                                                                                 \
    .summary = summary_,                                                                         \
    .opts_size = sizeof(sic_opts),                                                               \
    .options = table,                                                                            \
    .data_size = sizeof(sic_data),                                                               \
    .caps = caps_,                                                                               \
    .setup = sic_setup,                                                                          \
    .solve = sic_solve,                                                                          \
    .view = sic_view_fn,                                                                         \
    .destroy = sic_destroy,                                                                      \
    .common_defaults = defaults,                                                                 \
  }

#define LOCAL_CAPS (FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_LOCAL | FL_CAP_WARMSTART | FL_CAP_PEER)
#define GLOBAL_CAPS (FL_CAP_RIGID | FL_CAP_NEEDS_AJ | FL_CAP_WARMSTART | FL_CAP_PEER)

SIC_OPS(fl_siconos_nsgs_ops, "siconos-nsgs", nsgs_table,
        "Siconos 4.4 NSGS (fc3d) on the local form, in a child process", LOCAL_CAPS,
        "max_iter=10000,time_limit=600");
SIC_OPS(fl_siconos_nsn_ac_ops, "siconos-nsn-ac", nsn_table,
        "Siconos 4.4 nonsmooth Newton, Alart-Curnier (fc3d), in a child process", LOCAL_CAPS,
        "max_iter=1000,time_limit=600");
SIC_OPS(fl_siconos_nsn_fb_ops, "siconos-nsn-fb", nsn_table,
        "Siconos 4.4 nonsmooth Newton, Fischer-Burmeister (fc3d), in a child process",
        LOCAL_CAPS, "max_iter=1000,time_limit=600");
SIC_OPS(fl_siconos_prox_ops, "siconos-prox", prox_table,
        "Siconos 4.4 proximal point with inner nonsmooth Newton (fc3d), in a child process",
        LOCAL_CAPS, "max_iter=1000,time_limit=600");
SIC_OPS(fl_siconos_admm_ops, "siconos-admm", rho_table,
        "Siconos 4.4 ADMM (fc3d), in a child process", LOCAL_CAPS,
        "max_iter=10000,time_limit=600");
SIC_OPS(fl_siconos_vi_eg_ops, "siconos-vi-eg", rho_table,
        "Siconos 4.4 extra-gradient on the VI form (fc3d), in a child process", LOCAL_CAPS,
        "max_iter=10000,time_limit=600");
SIC_OPS(fl_siconos_gfc3d_nsgs_wr_ops, "siconos-gfc3d-nsgs-wr", nsgs_table,
        "Siconos 4.4 NSGS on the reduced local problem (gfc3d), in a child process",
        GLOBAL_CAPS, "max_iter=10000,time_limit=600");
SIC_OPS(fl_siconos_gfc3d_prox_wr_ops, "siconos-gfc3d-prox-wr", prox_table,
        "Siconos 4.4 proximal point on the reduced local problem (gfc3d), in a child process",
        GLOBAL_CAPS, "max_iter=1000,time_limit=600");
SIC_OPS(fl_siconos_gfc3d_admm_ops, "siconos-gfc3d-admm", rho_table,
        "Siconos 4.4 ADMM on the global problem (gfc3d), in a child process", GLOBAL_CAPS,
        "max_iter=10000,time_limit=600");

#else
typedef int fl__siconos_absent; /* ISO C wants a non-empty translation unit */
#endif /* FL_HAVE_SICONOS */

// SPDX-License-Identifier: Apache-2.0
/* nsn_impl.h: what the non-smooth Newton's files share (nsn.c: driver and Fischer-Burmeister;
 * nsn_eval.c: NCP functions and the evaluation of an iterate;
 * nsn_ac.c: Alart-Curnier): its constants, options and state. Never included outside solvers/.
 */
#ifndef FL_NSN_IMPL_H
#define FL_NSN_IMPL_H
// layer 3: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 3
#error "solvers/nsn_impl.h is in solvers/, layer 3: a lower layer may not include it (docs/layers.md)"
#endif

#include "sparse_lu.h"

#include "fl_lin.h"
#include "fl_solver_impl.h"

#define NSN_ALPHA_MIN 1e-10 /* normal rows with dNCP/dC below this are decoupled */
#define NSN_FB_DEN_FLOOR 0.1 /* FB friction fixed point: target |gamma_t| >= 0.1 mu gamma_n */
#define NSN_AC_DENSE_MAX 384 /* ac.lu=auto: dense LU on global problems up to this many rows */
#define NSN_AC_TK0 1e-2      /* ac restart: initial Tikhonov weight (relative to diag W) */
#define NSN_AC_TK_SHRINK 1e-3 /* ac restart: the weight's factor after a full Newton step */
#define NSN_AC_COMPLIANCE 3e-4 /* ac.compliance=auto on global problems (world steps) */
#define NSN_AC_NONMONO 5     /* ac.nonmono=auto on global problems */
#define NSN_AC_POLISH 4      /* ac.polish=auto on global problems */
#define NSN_AC_POLISH2 1e-2  /* the polish's second try: compliance c 1e-2 */

//---- options ----

enum { NCP_FB = 0, NCP_MIN = 1, NCP_AC = 2, NCP_AUTO = 3 };
enum { PRE_IDENTITY = 0, PRE_TIMESTEP = 1, PRE_EFFMASS = 2 };
enum { LS_NONE = 0, LS_BACKTRACK = 1, LS_AUTO = 2 };
enum { START_ZERO = 0, START_FREE = 1 };
enum { PC_DIAG = 0, PC_BLOCK = 1, PC_PAIR = 2 };
enum { LU_AUTO = 0, LU_DENSE = 1, LU_SPARSE = 2, LU_KLU = 3 };
enum { RHO_DIAG = 0, RHO_SPECTRAL = 1 };
enum { FB_AUTO = 0, FB_PROJECTION = 1, FB_GS = 2, FB_SWITCH = 3 };
#define NSN_AC_FB_SWITCH 5 /* ac.fallback=switch: sweeps after this many rising projections */

typedef struct nsn_opts {
  int ncp;
  int precond;
  double alpha;
  int line_search;
  int start;
  int project_v;
  int lin;
  int lin_max_iter;
  double lin_rel_tol;
  double lin_abs_tol;
  double lin_omega;
  double lin_reg;
  char lin_petsc_options[FL_OPT_STRLEN];
  int lin_petsc_comm;
  int lin_pc;
  double ac_reg;
  int ac_restart;
  int ac_lu;
  double ac_compliance;
  int ac_rho;
  int ac_fallback;
  int ac_best;
  int ac_nonmono;
  int ac_polish;
} nsn_opts;

//---- state ----

typedef struct nsn_data {
  fl_int n, nc, nh, nv;
  int global;
  fl_dynamics *dyn;    /* global problems */
  const fl_csr *B;     /* J A^-1, owned by dyn */
  fl_csr *Wown;        /* J A^-1 J^T (global) */
  const fl_csr *W;     /* the Delassus matrix in use */
  fl_csr *K;           /* Newton matrix: pattern(W) + diagonal */
  fl_int *wmap;        /* (nnz W) position of each W entry in K */
  fl_int *kdiag;       /* (n) position of K_ii */
  fl_int nblock;       /* inner preconditioner's blocks (lin.pc=block|pair) */
  fl_int *blk_ptr, *blk_idx; /* (nblock + 1), (n) */
  fl_lin *lin;
  int built;           /* K and rhs hold a Newton system */

  void *buf;           /* one allocation for the arrays below */
  double *R, *vhat, *s, *rho_n, *rho_f, *rho_em, *wtt, *Wf; /* (nc) */
  double *rho_b;       /* (nh) */
  double *wdiag;       /* (n) */
  double *Cd, *phis, *z, *u, *Jvs, *rhs, *y, *dg, *tmp, *g0; /* (n) */
  unsigned char *fixed; /* (n) */
  double *vit, *vtr, *bg, *bdg, *bgt; /* (nv) */

  /* evaluation of the current iterate */
  double err_n, err_f, err_b, err_m, error, merit;
  int nactive, nstick, nslip;

  int ncp, ls;         /* resolved ncp and line_search (auto decided by the problem kind) */
  double *gsave, *vsave, *bgsave; /* (n), (nv), (nv): the iterate before a step (guard) */

  /* ncp=ac (local problems): Jacobian G = Ablk + Bblk W in CSR (int indices for UMFPACK);
   * the three rows of contact i share one column list: W's rows of the contact plus its
   * diagonal block */
  int *jptr, *jcol;
  double *jval;
  fl_int *wpos;        /* (nnz W) offset of each W entry in its contact's column list */
  fl_int *dpos;        /* (3 nc) offset of column 3i+b in contact i's column list */
  double *acF, *acFt, *acut, *acgt, *acdx, *acwdx, *acblk; /* (n) x6, (18 nc) */
  double *acrn, *acrt; /* (nc) Alart-Curnier rho: 1/W_nn, 1/W_tt */
  void *sym, *num;     /* UMFPACK symbolic and numeric factors */
  fl_splu *klu;        /* ac.lu=klu: KLU's factors (sparse_lu.h) */
  int acklu;           /* resolved ac.lu is klu */
  double *acG;         /* ac.lu=dense: G row-major (n x n), its LU in place */
  int *acpiv;          /* (2n) its row interchanges, then fl_lu_factor's last[] */
  double acreg;        /* resolved ac.reg */
  int acrestart;       /* resolved ac.restart */
  fl_csr *acWc;        /* ac.compliance > 0: the regularized W (pl->W or Wown), whose diagonal
                          ac_set_rigid switches between (1 + c) W_ii and W_ii */
  fl_int *acdk;        /* (n) position of W_ii in acWc->val */
  double *acwd;        /* (2n) regularized, then rigid W_ii */
  int acpolish;        /* resolved ac.polish: rigid Newton iterations after a regularized solve */
  double accomp;       /* resolved ac.compliance */
  int acnm;           /* ac.nonmono: merits kept for the non-monotone search */
  double acthist[16];  /* their values, newest first */
  int acfb, acbest;    /* resolved ac.fallback (FB_GS or FB_PROJECTION), ac.best (0/1) */
  double *acbestg;     /* (n) ac.best: the iterate of least own residual */
  double acmu;         /* Jacobian G = A + B (W + acmu diag W) of the current iteration */
  fl_problem *pl;      /* ncp=ac on a global problem: its local form (owned); dyn and B give
                          the velocities handed out, v* + A^-1 J^T gamma; with bilateral
                          rows its nh, q (3 nc + nh), lo and hi (nh) live in plq */
  double *plq;         /* owned: pl's q, lo, hi when the global problem has bilateral rows */
  double *acrh, *acbh; /* (nh), (2 nh) ac: bilateral rows' rho = 1/W_hh, their A and B */
} nsn_data;


/* u at (v, gamma), then every row's NCP value, the Newton matrix's data and the errors
 * (nsn_eval.c) */
void fl__nsn_eval(nsn_data *d, const fl_problem *p, int ncp, const double *v,
                  const double *gamma, const double *bg);
/* fl__nsn_eval with u already in d->u (nsn_eval.c) */
void fl__nsn_eval_rows(nsn_data *d, const fl_problem *p, int ncp, const double *v,
                       const double *gamma, const double *bg);
/* The iteration record of the current iterate (nsn_eval.c). */
void fl__nsn_fill_stat(const nsn_data *d, fl_iter_stat *st);

/* ncp=ac (nsn_ac.c): set-up of the Jacobian's pattern and LU (dense or UMFPACK) and rho */
int fl__nsn_ac_setup(nsn_data *d, int dense, int spectral);
/* ncp=ac: the diagonal of W used in G, (1 + c) W_ii (level 0) or W_ii (1), or the polish's (2) */
void fl__nsn_ac_set_rigid(nsn_data *d, int level);
/* ncp=ac: the solve (the ops table's solve for ncp=ac) */
int fl__nsn_solve_ac(fl_solver *s, const fl_problem *pg, double *v, double *gamma);

#endif /* FL_NSN_IMPL_H */

// SPDX-License-Identifier: Apache-2.0
/* sap_impl.h: what SAP's files share (sap.c: projection, models, Newton; sap_setup.c: the
 * set-up): constants, options, private state. Never included outside solvers/ and tests/.
 */
#ifndef FL_SAP_IMPL_H
#define FL_SAP_IMPL_H
// layer 3: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 3
#error "solvers/sap_impl.h is in solvers/, layer 3: a lower layer may not include it (docs/layers.md)"
#endif

#include <cholmod.h>

#include "fl_solver_impl.h"

/* soft norm's regularization of the tangential impulse (N s): 1e-7, Drake's value */
#define SAP_EPS_SOFT 1e-7
#define SAP_TWO_PI_SQ (4.0 * M_PI * M_PI)

/* internal entry points (tests call them; prototypes repeated there) */
int fl__sap_project(double mu, const double R[3], const double y[3], double gamma[3],
                    double G[9]);
double fl__sap_lagged(double f, double e, double Rn, double vhn, const double vc[3], double gam[3],
                      double G[9], int *mode);
double fl__sap_similar(double mu, double e, double Rn, double vhn, const double vc[3],
                       double gam[3], double G[9], int *mode);
double fl__sap_lagged_huber(double f, double Rt, double Rn, double vhn, const double vc[3],
                            double gam[3], double G[9], int *mode);

enum { LS_EXACT = 0, LS_BACKTRACK = 1 };
enum { LIN_AUTO = 0, LIN_DENSE = 1, LIN_CHOLMOD = 2, LIN_PCG = 3 };
enum { START_V0 = 0, START_VSTAR = 1 };
enum { CHOL_AUTO = 0, CHOL_SUPERNODAL = 1, CHOL_SIMPLICIAL = 2 };
enum { MODE_STICK = 0, MODE_SLIDE = 1, MODE_NONE = 2 };
/* contact models; "sap" is the old name of the convex one, kept for command lines */
enum { MODEL_CONVEX = 0, MODEL_SIMILAR = 1, MODEL_LAGGED = 2, MODEL_SAP = 3 };
enum { FRIC_HUBER = 0, FRIC_SOFT = 1 };

typedef struct sap_opts {
  double beta;         /* near-rigid parameter of contacts */
  double beta_h;       /* near-rigid parameter of bilateral rows */
  double sigma;        /* tangential regularization R_t = sigma w */
  int line_search;     /* exact | backtracking */
  int linear;          /* auto | dense | cholmod */
  int dense_max;       /* auto: dense when nv <= dense_max */
  int cholmod;         /* CHOLMOD factorization: auto | supernodal | simplicial */
  int start;           /* guess without warm_start: v0 | vstar */
  double alpha_max;    /* exact line search bracket [0, alpha_max] */
  double ls_tol;       /* exact: |l'(alpha)| / |l'(0)| tolerance */
  int ls_max_iter;     /* line-search iterations */
  double ls_rho;       /* backtracking factor */
  double ls_c;         /* Armijo constant */
  double cost_abs_tol; /* stagnation: absolute change of the cost (J) */
  double cost_rel_tol; /* stagnation: relative change of the cost */
  int model;           /* contact model of every contact: convex | similar | lagged (| sap) */
  double vs;           /* similar, lagged: stiction tolerance of the regularized friction (m/s) */
  int passes;          /* lagged: solves per step (n0 re-lagged to the last normal impulses) */
  int friction;        /* lagged: regularized friction law, huber | soft */
  double stick_tol;    /* lagged huber: largest slip of a sticking contact (m/s); 0 = off */
  double lag_sigma;    /* lagged huber: R_t = lag_sigma w */
  int fallback;        /* lagged huber: a failed step is solved again with the soft friction */
  int predict;         /* lagged huber: a step that reverses slips is retaken with them sticking */
  double predict_alpha; /* predict: below this step the plain direction is tried too (0 = never) */
  int line_cache;      /* J v and A v after a step moved along the line (alpha J dv, alpha A dv) */
  int reassemble;      /* sparse H: the constraint blocks whose G changed, by their change */
  int ldl;             /* simplicial factor: SAP's own numeric LDL^T on CHOLMOD's pattern */
  int pcg_min;         /* auto: PCG (sap_pcg.c) when nv >= pcg_min; 0 = never */
  double pcg_eta;      /* PCG: largest forcing term (relative residual of a direction) */
  int pcg_max_iter;    /* PCG: CG iterations a direction */
} sap_opts;

/* the PCG inner solve's state (sap_pcg.c) */
typedef struct sap_pcg sap_pcg;

/* the CHOLMOD set-up kept across setups (sap_setup.c) */
typedef struct sap_keep sap_keep;

/* private state, made in setup, freed in destroy */
typedef struct sap_data {
  fl_int nv, nc, nh, nr, ncon;
  /* constraints: contacts 0..nc-1 (3 rows at 3k), bilateral rows nc..ncon-1 (1 row) */
  fl_int *dptr;   /* (ncon + 1) into dof */
  fl_int *dof;    /* dofs each constraint touches, ascending */
  fl_int *jptr;   /* (ncon + 1) into Jb */
  double *Jb;     /* dense rows of J restricted to the constraint's dofs, row-major */
  fl_int mmax;    /* largest dof count of a constraint */
  double *R;      /* (nr) regularization per row */
  double *vhat;   /* (nr) bias per row */
  double *w;      /* (ncon) Delassus estimate */
  int model;      /* MODEL_CONVEX | MODEL_SIMILAR | MODEL_LAGGED */
  double *n0s;    /* (nc) similar, lagged: start-of-step normal impulse (N s) made in setup */
  double *n0;     /* (nc) the one a solve uses (lagged passes update it) */
  double *eps;    /* (nc) similar, lagged: soft-norm velocity of the friction (m/s) */
  int huber;      /* lagged friction is the Huber (Moreau) one, R_t = rts[k] R[3k+1] */
  unsigned char *hint; /* (nc) stiction stage: the contact stuck at the end of the last stage */
  int hint_on;    /* evaluate hinted contacts as sticking (the stage's first direction) */
  double *rts;    /* (nc) R_t of the Huber friction over R[3k+1] = sigma w */
  double *Adiag;  /* (nv) */
  double *Dsc;    /* (nv) diag(A)^-1/2 */
  unsigned char *part; /* (nv) dof touched by a constraint (through its clique) */
  int dense;      /* linear solver used */
  sap_pcg *pcg;   /* PCG inner solve on H (no CHOLMOD factor) when not NULL */
  double *Hd;     /* (nv x nv) dense Newton matrix */
  /* cholmod */
  int cm_on;
  cholmod_common cm;
  cholmod_sparse *H; /* lower triangle, pattern of A + sum J_k^T J_k */
  cholmod_factor *L;
  cholmod_dense *X, *Y, *E;
  fl_int *apos;   /* (nnz of A) position of each A entry in H->x, -1 above the diagonal */
  fl_int *hptr;   /* (ncon + 1) into hpos */
  fl_int *hpos;   /* lower pairs (a >= b) of each constraint block, b outer */
  int *perm;      /* (2 nv) simplicial: H is P H0 P^T (upper, natural order), perm[k] the dof of
                   * its row k, perm[nv + dof] that dof's row; NULL when H is H0 itself (lower,
                   * CHOLMOD permutes it) */
  double *prhs;   /* (nv) the permuted right-hand side, with perm */
  fl_int *karow, *kacol; /* copies of A's pattern (rowptr, col): the key of what is kept */
  size_t arena_bytes;
  /* last solve */
  int nfactor;
  int nupdate;    /* predict's rank-one updates of the factor instead of a factorization */
  int h_ok;       /* sparse H->x holds A + J^T Gh J (Gh in the solve's work): add the changes */
  size_t ldl_nnz; /* sap.ldl: nnz of the simplicial factor's pattern (ColCount), 0 = not used */
  int ldl_rows;   /* sap.ldl: this solve's row lists of L are built */
} sap_data;

#define SD(s) ((sap_data *)(s)->data)
#define SO(s) ((const sap_opts *)(s)->opts)

/* rows of constraint k (3 for a contact, 1 for a bilateral row) and its first row */
static inline fl_int con_nrow(const sap_data *d, fl_int k) { return k < d->nc ? 3 : 1; }
static inline fl_int con_row(const sap_data *d, fl_int k) {
  return k < d->nc ? 3 * k : 2 * d->nc + k;
}

/* sap_setup.c: the ops table's setup and destroy */
int fl__sap_setup(fl_solver *s, const fl_problem *p);
void fl__sap_destroy(fl_solver *s);

/* sap_pcg.c: the PCG inner solve on the assembled lower H (d->H), IC(0) preconditioned.
 * setup: after H's pattern (FL_OK or an error set); factor: the incomplete factor of d->H's
 * values (FL_OK or FL_DIVERGED_LINEAR_SOLVER); solve: dv (nv) ~ H^-1 rhs to
 * ||D r|| <= min(pcg_eta, ||D g||/scale) ||D rhs||, g the gradient (nv), scale SAP's
 * momentum scale (sqrt(J)); stats: CG iterations and directions since reset. */
int fl__sap_pcg_setup(sap_data *d, const sap_opts *o, const char *nm);
void fl__sap_pcg_free(sap_data *d);
int fl__sap_pcg_factor(sap_data *d);
int fl__sap_pcg_solve(sap_data *d, const double *rhs, const double *g, double scale, double *dv);
void fl__sap_pcg_stats(const sap_data *d, long *iters, long *solves, double *shift);
void fl__sap_pcg_reset(sap_data *d);

#endif /* FL_SAP_IMPL_H */

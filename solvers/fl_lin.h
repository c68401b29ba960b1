// SPDX-License-Identifier: Apache-2.0
/* fl_lin.h: the inner linear solvers of the Newton solvers, a small registry internal to
 * solvers/ (the way PETSc's KSP sits inside SNES), plus the NSN internals that tests and the
 * figure recipes read (NCP functions, inner residual history, captured Newton systems).
 *
 * An inner solver solves K x = b for a symmetric positive (semi)definite K stored as a CSR
 * matrix with both triangles and every diagonal entry present. The pattern of K is fixed at
 * fl_lin_create; its values may change between solves (NSN rebuilds the diagonal and masks
 * every Newton iteration). Every solve starts from x = 0 and records the residual of every
 * inner iteration in a history preallocated for lin.max_iter + 1 entries (entry 0 is the
 * initial residual ||b||), so nothing is allocated per iteration except inside CHOLMOD's and
 * PETSc's own calls (documented in docs/nsn.md).
 *
 * Names (lin=...): jacobi, gs (Gauss-Seidel, forward sweeps), pcg, pcr (both with the
 * diagonal preconditioner), direct (CHOLMOD, regularized when not positive definite), petsc
 * (any KSP and PC through PETSc's options; only when built with FL_HAVE_PETSC).
 *
 * Not thread-safe; one fl_lin per solver handle.
 */
#ifndef FL_LIN_H
#define FL_LIN_H
// layer 3: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 3
#error "solvers/fl_lin.h is in solvers/, layer 3: a lower layer may not include it (docs/layers.md)"
#endif

#include "fl_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- options and statistics ----*/

/* Index order of the "lin" enum option ("jacobi|gs|pcg|pcr|direct|petsc"). */
enum { FL_LIN_JACOBI = 0, FL_LIN_GS, FL_LIN_PCG, FL_LIN_PCR, FL_LIN_DIRECT, FL_LIN_PETSC, FL_LIN_NTYPES };
#define FL_LIN_CHOICES "jacobi|gs|pcg|pcr|direct|petsc"

typedef struct fl_lin_opts {
  int type;          /* FL_LIN_* */
  int max_iter;      /* iteration budget (iterative solvers) */
  double rel_tol;    /* stop when ||b - K x||_2 <= rel_tol ||b||_2 */
  double abs_tol;    /* or when ||b - K x||_2 <= abs_tol */
  double omega;      /* relaxation of jacobi / gs; 0 = automatic (jacobi: 1/Gershgorin bound of
                        D^-1/2 K D^-1/2, which always converges on SPD K; gs: 1) */
  double reg;        /* direct: first relative diagonal shift tried when K is not positive
                        definite (times max diag K, grown x100 per retry) */
  char petsc_options[FL_OPT_STRLEN]; /* PETSc options string ("-ksp_type cr -pc_type jacobi") */
  int petsc_world;   /* 1: distribute K over PETSC_COMM_WORLD (every rank must call with the same
                        K and b, collectively); 0: PETSC_COMM_SELF */
  int pc;            /* preconditioner of pcg and pcr: FL_LIN_PC_DIAG (M = diag K, the default
                        when zero) or FL_LIN_PC_BLOCK (M = the diagonal blocks of K) */
  /* FL_LIN_PC_BLOCK's partition of the rows: block b is rows block_idx[block_ptr[b] ..
   * block_ptr[b + 1]) (at most FL_LIN_BLOCK_MAX rows each; every row in exactly one block).
   * Borrowed: copied at fl_lin_create. NULL block_ptr: every row its own block. */
  fl_int nblock;
  const fl_int *block_ptr; /* (nblock + 1), block_ptr[0] = 0, block_ptr[nblock] = n */
  const fl_int *block_idx; /* (n) */
} fl_lin_opts;

/* Preconditioners of the Krylov inner solvers (fl_lin_opts.pc). */
enum { FL_LIN_PC_DIAG = 0, FL_LIN_PC_BLOCK = 1 };
#define FL_LIN_PC_CHOICES "diag|block"
#define FL_LIN_BLOCK_MAX 64

/* Why an inner solve stopped. */
enum {
  FL_LIN_CONVERGED = 1,  /* tolerance met */
  FL_LIN_EXACT = 2,      /* direct factorization */
  FL_LIN_MAX_ITER = -1,  /* budget used up (normal for fixed-budget Newton) */
  FL_LIN_BREAKDOWN = -2, /* zero curvature / singular direction met (Krylov) */
  FL_LIN_NAN = -3
};

typedef struct fl_lin_stat {
  int reason;        /* FL_LIN_* above */
  int iters;         /* inner iterations done (1 for direct) */
  double res0;       /* ||b||_2 */
  double res;        /* final ||b - K x||_2 */
  double res_nat;    /* final natural norm sqrt(r^T D^-1 r) (D = diag K), the norm PCR
                        minimizes; NAN where not computed */
  int nreg;          /* direct: number of regularized retries (0 = factored as is) */
  double reg_shift;  /* direct: absolute diagonal shift finally used (0 if none) */
} fl_lin_stat;

typedef struct fl_lin fl_lin;
typedef struct fl__lin_pc fl__lin_pc; /* preconditioner state (lin_pc.c) */

/* One inner solver's implementation. */
typedef struct fl_lin_ops {
  const char *name;
  /* Allocates what the solver needs for matrices with K's pattern (may keep a pointer to K's
   * pattern, which must outlive the context). */
  int (*setup)(fl_lin *l, const fl_csr *K);
  /* Solves K x = b from x = 0, records each iteration with fl__lin_record, fills l->stat. */
  int (*solve)(fl_lin *l, const fl_csr *K, const double *b, double *x);
  void (*destroy)(fl_lin *l);
} fl_lin_ops;

/* The context (visible to the implementations in solvers/lin_*.c). */
struct fl_lin {
  const fl_lin_ops *ops;
  fl_lin_opts opts;
  fl_int n;
  double *w;          /* (8 n) scratch vectors owned by the context */
  double *hist;       /* (hist_cap) ||r||_2 per inner iteration of the last solve */
  double *hist_nat;   /* (hist_cap) natural norm per inner iteration, NAN if n/a */
  int hist_cap, hist_len;
  fl_lin_stat stat;
  void *impl;         /* solver-specific state (direct, petsc) */
  fl__lin_pc *pc;     /* preconditioner of pcg/pcr (lin_pc.c), made at fl_lin_create */
};

/*---- the registry ----*/

/* Ops of an inner solver by type (NULL when not compiled in, e.g. petsc without PETSc). */
const fl_lin_ops *fl_lin_ops_get(int type);
/* The option name of a type ("pcg", "petsc"...), without loading anything; "?" if unknown.
 * Static storage. */
const char *fl_lin_type_name(int type);
/* Creates a context for n x n matrices with the pattern of K (CSR, both triangles, every
 * diagonal present). FL_ERR_UNSUPPORTED (petsc not compiled), FL_ERR_NOMEM, FL_ERR_LIBRARY. */
int fl_lin_create(const fl_lin_opts *o, const fl_csr *K, fl_lin **out);
/* Solves K x = b (x: n, output; b: n). Returns FL_OK whenever it ran (see l->stat.reason),
 * an error code when a library call failed. */
int fl_lin_solve(fl_lin *l, const fl_csr *K, const double *b, double *x, fl_lin_stat *st);
void fl_lin_free(fl_lin *l); /* NULL-safe */
/* Residual history of the last solve: *n entries (entry 0 = ||b||); natural norms may be NULL. */
const double *fl_lin_history(const fl_lin *l, int *n, const double **nat);

/*---- helpers for the implementations ----*/

/* Stores one residual; returns 1 when the tolerance is met (iteration may stop). */
int fl__lin_record(fl_lin *l, double res, double res_nat);
/* End of iteration `it` with residual res (natural norm res_nat): counts it, records it and
 * returns 1 with l->stat.reason set when the solve is over (FL_LIN_NAN for a non-finite res,
 * FL_LIN_CONVERGED at the tolerance), else 0. */
int fl__lin_step(fl_lin *l, int it, double res, double res_nat);
/* y = K x (n): the same sums in the same order as fl_csr_gemv(K, 1, x, 0, y), so the same
 * result to the last bit, with a four-way unrolled inner loop. */
void fl__lin_gemv(const fl_csr *K, const double *x, double *y);
/* r = b - K x; returns ||r||_2. */
double fl__lin_residual(const fl_csr *K, const double *b, const double *x, double *r);
/* dinv[i] = 1 / K_ii (1 where K_ii <= 0). */
void fl__lin_inv_diag(const fl_csr *K, double *dinv);
double fl__lin_dot(fl_int n, const double *a, const double *b);
/* The preconditioner M of l->opts.pc (lin_pc.c). setup: finds the positions of the diagonal
 * and of the block entries in K's pattern (FL_ERR_NOMEM, FL_ERR_INVAL for a bad partition);
 * factor: takes K's current values (diagonal inverses; block Cholesky factors, a block that is
 * not numerically positive definite falling back to its diagonal); apply: z = M^-1 r (n). */
int fl__lin_pc_setup(fl_lin *l, const fl_csr *K);
void fl__lin_pc_factor(fl_lin *l, const fl_csr *K);
void fl__lin_pc_apply(const fl_lin *l, const double *r, double *z);
void fl__lin_pc_free(fl_lin *l);

extern const fl_lin_ops fl_lin_jacobi_ops, fl_lin_gs_ops, fl_lin_pcg_ops, fl_lin_pcr_ops,
    fl_lin_direct_ops;
#ifdef FL_HAVE_PETSC
/* The "petsc" inner solver is a module of its own, frictionlab-petsc.so (lin_petsc.c), loaded
 * on first use: PETSc linked into the library cost every process about 45 ms of start-up (106
 * shared libraries to load and relocate). The module calls back into the library through this
 * table only (libfrictionlab hides its fl__ names). */
typedef struct fl_lin_petsc_host {
  size_t lin_size; /* sizeof(fl_lin) of the library: the module refuses another layout */
  int (*seterr)(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
  void *(*calloc)(size_t n, size_t size);
  void (*free)(void *p);
  int (*record)(fl_lin *l, double res, double res_nat);
  int (*campaign_size)(void);
} fl_lin_petsc_host;
/* The module's one exported function: its operations, or NULL when host->lin_size differs. */
#define FL_LIN_PETSC_ENTRY "fl_lin_petsc_module"
typedef const fl_lin_ops *(*fl_lin_petsc_entry_fn)(const fl_lin_petsc_host *host);
#endif

/*---- NSN internals exposed for tests and figure recipes ----*/

/* NCP functions of the normal rows with the r factor folded into b (appendix A of the thesis):
 * kind 0 = Fischer-Burmeister phi = a + b - sqrt(a^2 + b^2), kind 1 = min-map phi = min(a, b).
 * Returns phi and, in *da, *db, an element of the generalized gradient: FB at (0, 0) takes the
 * thesis' convention da = 0, db = 1; min-map takes (1, 0) when a <= b, else (0, 1). */
double fl__nsn_ncp(int kind, double a, double b, double *da, double *db);

/* Friction compliance of one contact from the slack fixed point (thesis eq. 72 in the form of
 * the paper's appendix A): with ut = ||u_t|| (m/s), gt = ||gamma_t||, gn = gamma_n (N s) and
 * rho = r/dt (m/s per N s), psi = NCP(ut, rho (mu gn - gt)) and
 * W = (ut - psi) / (gt + psi/rho), floored at 0; W = 0 where 0/0 (stick). The result has units
 * (m/s)/(N s); phi_f = u_t + W gamma_t. Requires mu gn > 0 (active contact). */
double fl__nsn_friction_compliance(int kind, double ut, double gt, double gn, double mu,
                                   double rho);

/* History of the inner solver during the last (or current, from a monitor) Newton iteration
 * of an "nsn" solver: *n residuals ||b - K x||_2 (entry 0 = ||b||) and, if nat != NULL, the
 * natural norms. Returns NULL (and *n = 0) when s is not an nsn solver or nothing ran. */
const double *fl_nsn_inner_history(const fl_solver *s, int *n, const double **nat);

/* The Newton system K dgamma = rhs built in the last (or current) Newton iteration of an nsn
 * solver: K (CSR owned by the solver, overwritten next iteration) and rhs (n). FL_ERR_STATE if
 * none was built. Copy them (e.g. from a monitor at iteration k) to keep them. */
int fl_nsn_newton_system(const fl_solver *s, const fl_csr **K, const double **rhs);

#ifdef __cplusplus
}
#endif
#endif /* FL_LIN_H */

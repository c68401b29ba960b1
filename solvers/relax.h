// SPDX-License-Identifier: Apache-2.0
/* relax.h: what the projected relaxation solvers (pgs.c, jacobi.c) share. Private to solvers/.
 *
 * The model (SOLVERS.md sections 0 and 2): per contact i, with u_i = J_i v + b_i (global) or
 * u_i = W_i gamma + q_i (local), R_n and vhat_n from fl_problem_normal_law,
 *
 *     K_mu  contains  gamma_i  perpendicular to  uhat_i  in  K*_mu,
 *     uhat_i = (u_n - vhat_n + R_n gamma_n + mu ||u_t||, u_t),
 *
 * and per bilateral row h: J_h v + b_h + g0_h/dt + c_h gamma_h = 0 with lo_h <= gamma_h <= hi_h
 * (a box-constrained linear complementarity row).
 *
 * Global problems are solved velocity-based: the invariant v = v* + A^-1 J^T gamma is kept by
 * adding (J A^-1)_r^T dgamma_r after each change, so W = J A^-1 J^T is never formed; only its
 * 3x3 diagonal blocks (fl_dynamics_delassus_blocks) are used.
 */
#ifndef FL_RELAX_H
#define FL_RELAX_H
// layer 3: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 3
#error "solvers/relax.h is in solvers/, layer 3: a lower layer may not include it (docs/layers.md)"
#endif

#include "fl_solver_impl.h"

enum { FL_RELAX_NF = 0, FL_RELAX_BLOCK = 1 }; /* local-update variants */

typedef struct fl__relax {
  const fl_problem *p;
  int global;             /* 1: velocity-based on A, J; 0: on W, q */
  fl_int nc, nh, nrow, nv;
  int variant;            /* FL_RELAX_NF or FL_RELAX_BLOCK */
  int norm;               /* fl_norm_kind of the own residual */
  fl_dynamics *dyn;       /* global: owned (freed by fl__relax_free) */
  const fl_csr *B;        /* global: J A^-1, owned by dyn or Bown */
  fl_csr *Bown;           /* global, rigid bodies only: B made by the setup itself (owned) */
  fl_csr *BT;             /* global: B^T once fl__relax_bt made it (owned; fl__relax_free) */
  const fl_csr *J;        /* global: the problem's J */
  const fl_csr *W;        /* local: the problem's W */
  const double *cq;       /* (nrow) constant term: b (global) or q (local) */
  double norm_q;          /* ||q|| of the local form, q = J v* + b - (vhat_n, 0, 0) */
  int max_per_clique;     /* most constraints sharing one clique (local: blocks per block row) */

  /* arena arrays */
  double *Wd;             /* (nc x 9) W_ii + diag(R_n, 0, 0), row-major */
  double *Rn, *vhat;      /* (nc) normal law */
  double *lt;             /* (nc) tangential step 1/lambda_max(W_tt) (0: no tangential mass) */
  double *rho;            /* (nc) block step 3/trace(W_ii + R_n) (0: degenerate) */
  double *Wh;             /* (nh) W_hh + c_h */
  double *u;              /* (nrow) velocities of the current iterate (after fl__relax_residual) */
  double *dg;             /* (nrow) impulse change of one Jacobi iteration */
  int *mode;              /* (nc) 0 open, 1 stick, 2 slip at the last residual */
  fl_int *order;          /* (nc + nh) sweep order: items < nc are contacts, then rows */
  fl_int *run;            /* (2 nc) or NULL, global, set by pgs: the first dofs d1 < d2 of the
                             runs of 6 that are the columns of all three rows of contact i in J
                             and B (d2 = -1: one run), or d1 = -1 (another pattern) */

  /* colouring (fl__relax_colour; malloc'd, freed by fl__relax_free) */
  int ncolour;            /* 0 until coloured */
  fl_int *colour_ptr;     /* (ncolour + 1) items of colour c: colour_items[colour_ptr[c]..] */
  fl_int *colour_items;   /* (nc + nh) items by colour, increasing index within a colour */
} fl__relax;

/* test hook: 0 sweeps every contact through the rows' column indices (pgs.c's runs off) and
 * sets up every global problem through fl_dynamics (the rigid bodies' own set-up off) */
extern int fl__pgs_runs;

/* Sizes the arena and precomputes the diagonal blocks, steps and ||q||; `variant` and `norm`
 * are stored. Local problems with bilateral rows give FL_ERR_UNSUPPORTED. */
int fl__relax_setup(fl_solver *s, const fl_problem *p, fl__relax *r, int variant, int norm);
/* fl__relax_setup without max_per_clique (which only the Jacobi step needs; PGS's setup). */
int fl__relax_setup_core(fl_solver *s, const fl_problem *p, fl__relax *r, int variant, int norm);
/* Frees what setup made outside the arena. NULL-safe on a zeroed struct. */
void fl__relax_free(fl__relax *r);

/* Global problems: B^T, made on the first call and kept (the colouring and the GPU solvers
 * both read it). Sets *bt (owned by r), or NULL for a local problem or one without rows.
 * FL_ERR_NOMEM on allocation failure. */
int fl__relax_bt(fl__relax *r, const fl_csr **bt);

/* Greedy colouring of the items (contacts, then bilateral rows, in index order; each takes the
 * smallest colour none of its neighbours has): two items are neighbours when their rows of
 * J A^-1 share a degree of freedom (global) or their block of W is nonzero (local), so the
 * items of one colour can be relaxed at once and the result equals a Gauss-Seidel sweep in
 * colour order. Fills ncolour, colour_ptr, colour_items, and r->order in colour order.
 * FL_ERR_NOMEM on allocation failure. */
int fl__relax_colour(fl__relax *r);

/* Global problems: v = v* + A^-1 J^T gamma (restores the invariant for a guess). */
void fl__relax_start(const fl__relax *r, double *v, const double *gamma);

/* Local update of contact i from its velocity u (3) and impulse g (3): out (3) is the new
 * impulse before relaxation (see relax.c for the formulas). */
void fl__relax_contact(const fl__relax *r, fl_int i, const double u[3], const double g[3],
                       double out[3]);
/* Local update of bilateral row h from its velocity u_h = J_h v + b_h: the new impulse. */
double fl__relax_row(const fl__relax *r, fl_int h, double u_h, double g_h);
/* Relaxed impulse g + omega (new - g), projected back onto K_mu (contacts, when omega > 1). */
void fl__relax_apply_omega(const fl__relax *r, fl_int i, double omega, const double g[3],
                           double nw[3]);
double fl__relax_clamp_row(const fl__relax *r, fl_int h, double x);

/* Computes u of every row for (v, gamma), then the own residual: the natural-map residual with
 * De Saxce's correction over contacts plus gamma_h - clamp(gamma_h - res_h) over bilateral rows,
 * normalized with r->norm; fills st->error, nactive, nstick, nslip, nchange. */
void fl__relax_residual(fl__relax *r, const double *v, const double *gamma, fl_iter_stat *st);

/* The own residual from its raw value and the sums |gamma|^2, |(w_n, u_t)|^2 over contacts,
 * normalized with r->norm (none: raw; fclib: raw / (1 + sqrt||q||); siconos: raw /
 * max(||q||, |gamma|, |w|)). */
double fl__relax_normalize(const fl__relax *r, double raw, double ng2, double nw2);

/* 1 and d1 (and d2) when the columns of row r of m are one run of 6 dofs from d1 (6 entries,
 * *d2 = -1) or two, from d1 < d2 (12 entries); 0 when not. */
int fl__relax_row_runs(const fl_csr *m, fl_int r, fl_int *d1, fl_int *d2);

/* The runs' kernels (relax.c and pgs.c). A run of 6 written out (gcc -O2 keeps the loop and its
 * counter otherwise); terms in order. */
#define DOT6(acc, a, x)                                                                          \
  do {                                                                                           \
    acc += (a)[0] * (x)[0];                                                                      \
    acc += (a)[1] * (x)[1];                                                                      \
    acc += (a)[2] * (x)[2];                                                                      \
    acc += (a)[3] * (x)[3];                                                                      \
    acc += (a)[4] * (x)[4];                                                                      \
    acc += (a)[5] * (x)[5];                                                                      \
  } while (0)
/* x[0..5] += s a[0..5] two entries at a time: each entry gets the same rounded product and
 * sum as the scalar statement x[k] += s * a[k] (no fused multiply-add on either path) */
typedef double v2d __attribute__((vector_size(16), aligned(8), may_alias));
static inline void axpy6(double *x, double s, const double *a) {
  v2d sv = {s, s};
  v2d *xv = (v2d *)x;
  const v2d *av = (const v2d *)a;
  v2d x0 = xv[0] + sv * av[0], x1 = xv[1] + sv * av[1], x2 = xv[2] + sv * av[2];
  xv[0] = x0, xv[1] = x1, xv[2] = x2;
}
#define AXPY6(x, s, a) axpy6((x), (s), (a))

/* Row dot and row update on a CSR matrix. */
static inline double fl__row_dot(const fl_csr *m, fl_int row, const double *x) {
  double acc = 0;
  for (fl_int k = m->rowptr[row]; k < m->rowptr[row + 1]; k++) acc += m->val[k] * x[m->col[k]];
  return acc;
}
static inline void fl__row_axpy(const fl_csr *m, fl_int row, double a, double *x) {
  for (fl_int k = m->rowptr[row]; k < m->rowptr[row + 1]; k++) x[m->col[k]] += a * m->val[k];
}

#endif /* FL_RELAX_H */

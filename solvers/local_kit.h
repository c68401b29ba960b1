// SPDX-License-Identifier: Apache-2.0
/* local_kit.h: pieces shared by the solvers that work on the local (dual) problem
 * W gamma + q after building it from a global one (prox, admm): the natural-map residual with
 * De Saxce's correction, its normalizations, the global velocities of an answer, and
 * CHOLMOD's views of FrictionLab's arrays. Internal to solvers/.
 */
#ifndef FL_LOCAL_KIT_H
#define FL_LOCAL_KIT_H
// layer 3: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 3
#error "solvers/local_kit.h is in solvers/, layer 3: a lower layer may not include it (docs/layers.md)"
#endif

#include <cholmod.h>

#include "fl_solver_impl.h"

/* Natural-map residual of a local problem p (W, q, mu; nc contacts) at gamma (3nc):
 * u = W gamma + q is written to u (3nc, caller's), De Saxce's correction mu |u_t| e_n to s
 * (3nc, may be NULL); returns sqrt(sum_i |gamma_i - P_K(gamma_i - u_i - mu|u_t| e_n)|^2) (the
 * raw residual, in gamma's units) and sets *g2 = |gamma|^2, *u2 = |u|^2 for the norms. */
double fl__local_residual(const fl_problem *p, const double *gamma, double *u, double *s,
                          double *g2, double *u2);

/* The same natural-map residual at gamma and a given u = W gamma + q (both 3nc, nc contacts,
 * friction coefficients mu): for solvers that have u another way (pnewton: u = J v + b). s as
 * above (may be NULL), *g2 = |gamma|^2, *u2 = |u|^2. */
double fl__natmap_residual(fl_int nc, const double *mu, const double *gamma, const double *u,
                           double *s, double *g2, double *u2);

/* Divisor of a raw residual under the common norm (FL_NORM_*): 1 for none, 1 + sqrt(|q|) for
 * fclib (libfclib 3.1's merit, as fl_problem_metrics), max(|q|, |gamma|, |u|) for siconos (1
 * when that is 0). norm_q = |q|, g2 and u2 as fl__local_residual sets them. Always > 0. */
double fl__merit_divisor(int norm, double norm_q, double g2, double u2);

/* Velocities of a global problem's answer: v = v* + B^T gamma with B = J A^-1 (3nc x nv) from
 * fl_dynamics_JAinv; v (nv) is the caller's. Nothing when B or v is NULL (a local problem). */
void fl__global_velocity(const fl_csr *B, const fl_problem *p, const double *gamma, double *v);

/* CHOLMOD's view (no copy) of a symmetric CSR matrix K with both triangles stored, with the
 * values val (K's nnz; K->val or a scaled copy): the CSC of K read as its upper triangle
 * (stype 1). A borrows K's arrays and val: they must outlive A. */
void fl__cholmod_view(const fl_csr *K, double *val, cholmod_sparse *A);

/* The FL_ERR code for a failed CHOLMOD call's Common status: FL_ERR_NOMEM when CHOLMOD ran
 * out of memory or the problem is too large for its integers (so that a run under a memory
 * limit reports it as such), else FL_ERR_LIBRARY. */
static inline int fl__cholmod_err(int status) {
  return status == CHOLMOD_OUT_OF_MEMORY || status == CHOLMOD_TOO_LARGE ? FL_ERR_NOMEM
                                                                         : FL_ERR_LIBRARY;
}

/* CHOLMOD's view of the n-vector x as a dense n x 1 matrix (no copy; x outlives B). */
void fl__cholmod_dense_view(fl_int n, double *x, cholmod_dense *B);

/* CHOLMOD's life cycle for a solver's one sparse symmetric matrix (a zeroed struct is
 * "not started"): start (errors as codes, not prints; a factorization stops at the first
 * non-positive pivot), analyze the pattern, factorize K + shift I numerically, solve with
 * reused workspaces, free. The callers write their own messages from cc.status. */
typedef struct fl__chol {
  cholmod_common cc;
  cholmod_factor *L;
  cholmod_dense *X, *Y, *E; /* solve2 workspaces, reused */
  int started;
} fl__chol;
/* cholmod_start and the settings above: 0, or -1 when cholmod_start failed. */
int fl__chol_start(fl__chol *c);
/* The symbolic analysis of K (fl__cholmod_view): 0, or -1 (L NULL; cc.status says why). */
int fl__chol_analyze(fl__chol *c, const fl_csr *K);
/* The numeric factorization of K with values val (K's nnz) plus shift I: 1 when it succeeded
 * and is positive definite, 0 when not (cc.status < 0 for an error of CHOLMOD's). */
int fl__chol_factor(fl__chol *c, const fl_csr *K, double *val, double shift);
/* x = c->X->x = (K + shift I)^-1 b for the last factorization (b n-long, not changed): 0, or
 * -1 when cholmod_solve2 failed (cc.status). */
int fl__chol_solve(fl__chol *c, fl_int n, double *b);
/* Frees the factor and workspaces and finishes CHOLMOD when started; NULL-safe. */
void fl__chol_free(fl__chol *c);

#endif /* FL_LOCAL_KIT_H */

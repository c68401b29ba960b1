// SPDX-License-Identifier: Apache-2.0
/* fl_schur.h: the Schur complement of a sparse SPD matrix onto a set of participating DoFs,
 * read from a constrained sparse Cholesky factor (seed 000 section VI-B; design/FEM.md
 * section 3).
 *
 * With the n participating rows p ordered last and the others (the "n" block, m = n - np rows)
 * first, a fill-reducing ordering P constrained that way (CAMD with two constraint sets) gives
 *
 *     P A P^T = [A_nn  A_np] = [L11   0 ] [L11^T  L21^T]
 *               [A_pn  A_pp]   [L21  L22] [  0    L22^T],
 *
 * so S = A_pp - A_pn A_nn^-1 A_np = L22 L22^T: the Schur complement is the trailing block of
 * the factor, never formed with A_nn^-1. The same factor solves A x = b (free motion, eq. 10)
 * and recovers the non-participating velocities after a contact solve (eq. 15).
 *
 * CHOLMOD (int version) does the work: cholmod_camd for the ordering, cholmod_analyze_p with
 * that ordering and no postorder (a postorder of the elimination tree may interleave the two
 * sets), a supernodal or simplicial numeric factorization (CHOLMOD_AUTO), then conversion to a
 * simplicial, packed, monotonic LL^T so that the trailing block can be read column by column.
 * CHOLMOD never prints; its failures come back as FL_ERR_* codes with a message (fl_errmsg).
 *
 * Units are those of A (e.g. kg for a mass-like matrix); vectors are in the original ordering
 * of A unless said. An fl_schur object is not thread-safe (solves share its workspaces);
 * distinct objects are independent.
 */
#ifndef FL_SCHUR_H
#define FL_SCHUR_H
// layer 4: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 4
#error "sim/fl_schur.h is in sim/, layer 4: a lower layer may not include it (docs/layers.md)"
#endif

#include "../core/fl_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fl_schur fl_schur; /* opaque: the factor, S and workspaces */

/* Factors the SPD matrix A and forms the dense Schur complement onto the rows p.
 *   A    n x n symmetric positive definite, both triangles stored (only one triangle is read,
 *        so A is assumed symmetric); n >= 1. Not retained: A may be freed after the call.
 *   np   number of participating rows, 0 <= np <= n. np = 0 gives a factor for solves only
 *        (S is NULL); np = n gives S = A (up to rounding).
 *   p    (np) participating row indices, strictly ascending, in [0, n); may be NULL if np = 0.
 *   out  on FL_OK, a new object owned by the caller (free with fl_schur_free); NULL otherwise.
 * S = A_pp - A_pn A_nn^-1 A_np is np x np, row-major, rows and columns in the order of p.
 * Returns FL_OK; FL_ERR_INVAL (bad sizes or p); FL_ERR_NOMEM; FL_ERR_NOT_SPD when a pivot is
 * not positive (the message names the row/column of A, in the original ordering, where the
 * factorization stopped); FL_ERR_LIBRARY for any other CHOLMOD failure. */
int fl_schur_create(const fl_csr *A, fl_int np, const fl_int *p, fl_schur **out);

/* Factors A again on the ordering and symbolic analysis of s when A has the same size and
 * nonzero pattern (rowptr and col) as the matrix s was created or last refactored from and p
 * is the same set (np, p equal): S, the factor and the solves are then those fl_schur_create
 * would give, to the bit, without its ordering and analysis (a FEM body whose contact dofs do
 * not change between steps). Returns 1 when refactored; 0 when the structure differs (s is
 * unchanged: call fl_schur_create instead); an error of fl_schur_create's kinds otherwise
 * (FL_ERR_NOT_SPD, FL_ERR_NOMEM, FL_ERR_LIBRARY), after which s may only be freed. */
int fl_schur_refactor(fl_schur *s, const fl_csr *A, fl_int np, const fl_int *p);

/* Frees everything s owns. NULL-safe. */
void fl_schur_free(fl_schur *s);

/* The Schur complement S (np x np, row-major, order of p), owned by s and valid until
 * fl_schur_free; NULL when np = 0. */
const double *fl_schur_matrix(const fl_schur *s);

/* The number np of participating rows given to fl_schur_create. */
fl_int fl_schur_np(const fl_schur *s);

/* Copies the fill-reducing permutation into perm (n, owned by the caller): row k of the factor
 * is row perm[k] of A, and perm[n - np .. n) is p's set (in the factor's order, not p's).
 * For checks and diagnostics. Returns FL_OK or FL_ERR_INVAL (NULL argument). */
int fl_schur_perm(const fl_schur *s, fl_int *perm);

/* x = A^-1 b, b and x (n) in the original ordering; x may alias b.
 * Returns FL_OK, FL_ERR_INVAL (NULL argument), or FL_ERR_NOMEM / FL_ERR_LIBRARY from CHOLMOD. */
int fl_schur_solve(const fl_schur *s, const double *b, double *x);

/* Recovery after a contact solve in the participating DoFs (seed eq. 15): given dv_p (np, in
 * the order of p), writes dv (n, original ordering) with dv[p[k]] = dv_p[k] exactly and
 *     dv_n = -A_nn^-1 A_np dv_p,
 * so that (A dv)_n = 0 and (A dv)_p = S dv_p. Computed from the same factor, with no second
 * factorization: in the permuted ordering, u = [u1; dv_p] with L11^T u1 = -L21^T dv_p (one
 * triangular solve with L^T), and dv = P^T u. This equals P^T L^-T [0; L22^T dv_p].
 * dv_p is read in full before dv is written, so the two may overlap. With np = 0, dv = 0.
 * Returns FL_OK, FL_ERR_INVAL (NULL argument), or FL_ERR_NOMEM / FL_ERR_LIBRARY from CHOLMOD. */
int fl_schur_recover(const fl_schur *s, const double *dv_p, double *dv);

#ifdef __cplusplus
}
#endif

#endif /* FL_SCHUR_H */

// SPDX-License-Identifier: Apache-2.0
/* reduced.h: the reduced (dof-space) Newton matrix K = A + sum_i J_i^T M_i J_i of the global
 * solvers that eliminate the contact unknowns (pnewton, ipm), with M_i a 3x3 block per contact.
 * K's pattern (A's entries plus every contact's column pairs) is fixed by A and J, so it is
 * built once in setup with the positions where A and each contact's block add into it; each
 * iteration then resets K's values to A and adds the blocks. Internal to solvers/.
 */
#ifndef FL_REDUCED_H
#define FL_REDUCED_H
// layer 3: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 3
#error "solvers/reduced.h is in solvers/, layer 3: a lower layer may not include it (docs/layers.md)"
#endif

#include "fl_solver_impl.h"

/* Everything is owned by the struct (fl__reduced_free). ncols_i = cptr[i+1] - cptr[i] is the
 * number of distinct dofs contact i's three rows of J touch. */
typedef struct {
  fl_int nc, nv;
  fl_csr *K;    /* (nv x nv) the reduced matrix, both triangles, rows sorted */
  fl_int *apos; /* (A nnz) position of A's entries in K */
  fl_int *cptr; /* (nc + 1) contact i's columns are ccol[cptr[i] .. cptr[i+1]), ascending */
  fl_int *ccol;
  double *jblk; /* (3 x ncols_i per contact, row-major, at 3 cptr[i]) J_i's dense block */
  fl_int *kptr; /* (nc + 1) contact i's K positions at kpos[kptr[i] ..), ncols_i^2 */
  fl_int *kpos; /* row-major ncols_i x ncols_i per contact */
  double *dj;   /* (3 x the most columns a contact touches) scratch: M_i J_i */
} fl_reduced;

/* Builds R (zeroed by the caller) for the global problem p (A: nv x nv, J: 3nc x nv; nc > 0).
 * Refuses (FL_ERR_UNSUPPORTED) when the triplets and K would take more than max_b bytes; the
 * messages start with `who` ("pnewton") and name the option `opt` ("pnewton.max_lu_gb", in GB)
 * that sets max_b. Returns FL_OK, FL_ERR_UNSUPPORTED or FL_ERR_NOMEM; on failure what was built
 * stays in R for fl__reduced_free. */
int fl__reduced_build(fl_reduced *R, const fl_problem *p, double max_b, const char *who,
                      const char *opt);

/* K's values = A's (A the matrix R was built from). */
void fl__reduced_reset(fl_reduced *R, const fl_csr *A);

/* K += J_i^T M J_i for contact i, M (3x3, row-major; any matrix, K stays symmetric only when M
 * is). Uses R->dj as scratch. */
void fl__reduced_add(fl_reduced *R, fl_int i, const double M[9]);

/* Frees what R owns and zeroes it (NULL-safe, and safe on a partly built R). */
void fl__reduced_free(fl_reduced *R);

#endif

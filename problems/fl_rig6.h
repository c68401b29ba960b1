// SPDX-License-Identifier: Apache-2.0
/* fl_rig6.h: the solve with a rigid body's 6x6 Cholesky factor, shared by problems/dynamics.c
 * (A^-1 products) and solvers/pgs.c (its own J A^-1 for scenes of rigid bodies), which must
 * give the same bits.
 *
 * A rigid body's mass matrix is block diagonal (m I, then the 3x3 inertia), so its Cholesky
 * factor L (36 doubles, the layout of dynamics.c's dense clique factors) has zeros outside the
 * diagonal of the first block and the triangle of the second.
 */
#ifndef FL_RIG6_H
#define FL_RIG6_H

/* Solves L L^T x = b in place (b: 6 entries, kg m/s or N s in, m/s out) without the terms
 * whose factor entry is zero: the same results as the full triangular solves when no entry of
 * b is -0 (then s - 0 * b_k = s, and the skipped terms all come before the others in their
 * sums). L is read only; nothing is allocated. */
static inline void fl_rig6_solve(const double *L, double *b) {
  for (int i = 0; i < 3; i++) b[i] = b[i] / L[7 * i] / L[7 * i];
  b[3] = b[3] / L[21];
  b[4] = (b[4] - L[27] * b[3]) / L[28];
  b[5] = (b[5] - L[33] * b[3] - L[34] * b[4]) / L[35];
  b[5] = b[5] / L[35];
  b[4] = (b[4] - L[34] * b[5]) / L[28];
  b[3] = (b[3] - L[27] * b[4] - L[33] * b[5]) / L[21];
}

#endif

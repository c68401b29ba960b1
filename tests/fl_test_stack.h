// SPDX-License-Identifier: Apache-2.0
/* fl_test_stack.h: a hand-made stack problem shared by the NSN and PETSc/MPI tests.
 *
 * fl_test_stack(nb, m, h, mu, dt, phi0): nb cubes of edge h stacked on the ground, masses m[k]
 * (kg) from the bottom up (nb <= 16), four corner contacts under each cube (normal +z from the
 * lower body to the upper, rows normal first), at rest with every contact at signed distance
 * phi0 (m); dofs per body (v, omega) with A = diag(m, m, m, I, I, I), I = m h^2/6; v* is one step
 * of gravity. The caller owns the problem (fl_problem_free); NULL on error.
 */
#ifndef FL_TEST_STACK_H
#define FL_TEST_STACK_H

#include <stdio.h>
#include <stdlib.h>

#include "problems/fl_problem.h"

static fl_problem *fl_test_stack(int nb, const double *m, double h, double mu, double dt,
                                 double phi0) {
  int nc = 4 * nb, nv = 6 * nb;
  fl_problem *p = NULL;
  if (nb > 16 || fl_problem_alloc(FL_PROBLEM_GLOBAL, nv, nc, 0, 0, &p) != FL_OK) return NULL;
  p->dt = dt;
  snprintf(p->name, sizeof p->name, "stack%d", nb);
  fl_int ai[6 * 16], aj[6 * 16];
  double av[6 * 16];
  for (int b = 0; b < nb; b++)
    for (int q = 0; q < 6; q++) {
      ai[6 * b + q] = aj[6 * b + q] = 6 * b + q;
      av[6 * b + q] = q < 3 ? m[b] : m[b] * h * h / 6;
    }
  fl_csr_from_triplets(nv, nv, nv, ai, aj, av, &p->A);
  // J: per contact row and body, 3 linear and 3 angular entries
  int cap = 3 * nc * 12, nt = 0;
  fl_int *ti = malloc(sizeof(fl_int) * (size_t)cap), *tj = malloc(sizeof(fl_int) * (size_t)cap);
  double *tv = malloc(sizeof(double) * (size_t)cap);
  const double dirs[3][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
  for (int b = 0; b < nb; b++)
    for (int c = 0; c < 4; c++) {
      int i = 4 * b + c;
      double px = (c & 1 ? 0.5 : -0.5) * h, py = (c & 2 ? 0.5 : -0.5) * h, pz = b * h;
      for (int rr = 0; rr < 3; rr++)
        for (int side = 0; side < 2; side++) {
          int body = side == 0 ? b : b - 1;
          if (body < 0) continue;
          const double *d = dirs[rr];
          double sg = side == 0 ? 1 : -1;
          double r[3] = {px, py, pz - (h / 2 + body * h)};
          double rxd[3] = {r[1] * d[2] - r[2] * d[1], r[2] * d[0] - r[0] * d[2],
                           r[0] * d[1] - r[1] * d[0]};
          for (int q = 0; q < 3; q++) {
            ti[nt] = 3 * i + rr, tj[nt] = 6 * body + q, tv[nt++] = sg * d[q];
            ti[nt] = 3 * i + rr, tj[nt] = 6 * body + 3 + q, tv[nt++] = sg * rxd[q];
          }
        }
      p->mu[i] = mu;
      p->phi0[i] = phi0;
    }
  fl_csr_from_triplets(3 * nc, nv, nt, ti, tj, tv, &p->J);
  free(ti);
  free(tj);
  free(tv);
  for (int b = 0; b < nb; b++) p->vstar[6 * b + 2] = -9.81 * dt;
  if (fl_problem_find_cliques(p) != FL_OK) {
    fl_problem_free(p);
    return NULL;
  }
  return p;
}

#endif /* FL_TEST_STACK_H */

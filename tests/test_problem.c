// SPDX-License-Identifier: Apache-2.0
/* test_problem.c: fl_problem creation, cliques, validation, the shared operators on A and J
 * (apply/solve A, J A^-1, Delassus blocks and full W, local form), the example problems and
 * the lift of local problems to global ones (fl_problem_lift_local). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fl_test.h"
#include "problems/fl_problem.h"

#ifdef FL_HAVE_LIBFCLIB
#include <fclib.h>
#endif

//---- helpers ----

/* deterministic uniform numbers in [-1, 1) (xorshift64) */
static uint64_t rng_state = 88172645463325252ull;
static double urand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}


/* dense row-major copy of a CSR matrix */
static double *dense_of(const fl_csr *m) {
  double *d = calloc((size_t)m->nrow * (size_t)m->ncol + 1, sizeof(double));
  for (fl_int r = 0; r < m->nrow; r++) {
    for (fl_int k = m->rowptr[r]; k < m->rowptr[r + 1]; k++) d[(size_t)r * m->ncol + m->col[k]] += m->val[k];
  }
  return d;
}


/* solves M X = B (n x n, nrhs columns, both row-major n x nrhs for B) by Gaussian elimination
 * with partial pivoting, independent of the code under test */
static void gauss_solve(int n, double *M, int nrhs, double *B) {
  for (int k = 0; k < n; k++) {
    int piv = k;
    for (int i = k + 1; i < n; i++) if (fabs(M[i * n + k]) > fabs(M[piv * n + k])) piv = i;
    if (piv != k) {
      for (int j = 0; j < n; j++) { double t = M[k * n + j]; M[k * n + j] = M[piv * n + j]; M[piv * n + j] = t; }
      for (int j = 0; j < nrhs; j++) { double t = B[k * nrhs + j]; B[k * nrhs + j] = B[piv * nrhs + j]; B[piv * nrhs + j] = t; }
    }
    for (int i = k + 1; i < n; i++) {
      double f = M[i * n + k] / M[k * n + k];
      for (int j = k; j < n; j++) M[i * n + j] -= f * M[k * n + j];
      for (int j = 0; j < nrhs; j++) B[i * nrhs + j] -= f * B[k * nrhs + j];
    }
  }
  for (int i = n - 1; i >= 0; i--) {
    for (int j = 0; j < nrhs; j++) {
      double s = B[i * nrhs + j];
      for (int k = i + 1; k < n; k++) s -= M[i * n + k] * B[k * nrhs + j];
      B[i * nrhs + j] = s / M[i * n + i];
    }
  }
}


/* a global problem with the given cliques (lists of dofs) whose blocks of A are random SPD
 * (dense for small cliques, banded-plus-random sparse for big ones) and a random J whose rows
 * each touch one or two cliques */
typedef struct gen_spec {
  int nv, nc, nh, ncl;
  const int *clique_of; /* (nv) clique of each dof */
} gen_spec;

static fl_problem *gen_problem(const gen_spec *g) {
  fl_problem *p;
  if (fl_problem_alloc(FL_PROBLEM_GLOBAL, g->nv, g->nc, g->nh, 0, &p) != FL_OK) return NULL;
  snprintf(p->name, sizeof(p->name), "generated");
  int nv = g->nv, nrow = 3 * g->nc + g->nh;
  int cap = nv * 40 + nrow * 40 + 16, nt = 0;
  fl_int *ti = malloc(sizeof(fl_int) * (size_t)cap), *tj = malloc(sizeof(fl_int) * (size_t)cap);
  double *tv = malloc(sizeof(double) * (size_t)cap);
  // A: diagonal dominance makes each block SPD; entries only inside a clique, symmetric
  for (int i = 0; i < nv; i++) {
    ti[nt] = i; tj[nt] = i; tv[nt++] = 20.0 + 5.0 * urand();
    for (int j = i + 1; j < nv; j++) {
      if (g->clique_of[i] != g->clique_of[j]) continue;
      int size = 0;
      for (int k = 0; k < nv; k++) size += g->clique_of[k] == g->clique_of[i];
      if (size > 12 && j - i > 2 && urand() < 0.9) continue; /* sparse big blocks */
      double v = 0.5 * urand();
      ti[nt] = i; tj[nt] = j; tv[nt++] = v;
      ti[nt] = j; tj[nt] = i; tv[nt++] = v;
    }
  }
  fl_csr_from_triplets(nv, nv, nt, ti, tj, tv, &p->A);
  // J: every row of constraint c touches two random dofs in each of its (one or two) cliques
  nt = 0;
  for (int r = 0; r < nrow; r++) {
    int c = r < 3 * g->nc ? r / 3 : g->nc + (r - 3 * g->nc);
    int base[2] = {(c * 7919 + 13) % nv, (c * 104729 + 71) % nv};
    for (int k = 0; k < 4; k++) {
      int cl = g->clique_of[base[k / 2]], size = 0, pick, d = base[k / 2];
      for (int i = 0; i < nv; i++) size += g->clique_of[i] == cl;
      pick = (int)((urand() + 1.0) * 0.5 * size) % size;
      for (int i = 0; i < nv; i++) {
        if (g->clique_of[i] == cl && pick-- == 0) { d = i; break; }
      }
      ti[nt] = r; tj[nt] = d; tv[nt++] = urand();
    }
  }
  fl_csr_from_triplets(nrow, nv, nt, ti, tj, tv, &p->J);
  for (int i = 0; i < nv; i++) { p->vstar[i] = urand(); p->v0[i] = urand(); }
  for (int r = 0; r < nrow; r++) p->b[r] = 0.1 * urand();
  for (int i = 0; i < g->nc; i++) p->mu[i] = 0.5;
  free(ti); free(tj); free(tv);
  if (fl_problem_find_cliques(p) != FL_OK) {
    fl_problem_free(p);
    return NULL;
  }
  return p;
}


//---- creation ----

FL_TEST(alloc_defaults) {
  fl_problem *p;
  ASSERT_OK(fl_problem_alloc(FL_PROBLEM_GLOBAL, 12, 3, 2, 0, &p));
  ASSERT_EQ(p->nv, 12);
  ASSERT_EQ(fl_problem_nrows(p), 11);
  ASSERT_NEAR(p->dt, 1.0, 0);
  ASSERT(p->A == NULL && p->J == NULL && p->W == NULL && p->q == NULL && p->gamma_guess == NULL);
  for (int i = 0; i < 3; i++) {
    ASSERT(isinf(p->stiffness[i]) && p->stiffness[i] > 0);
    ASSERT_EQ(p->tau_d[i], 0);
    ASSERT_EQ(p->clique_a[i], -1);
    ASSERT_EQ(p->clique_b[i], -1);
    ASSERT_EQ(p->feature[i], -1);
    ASSERT_EQ(p->phi0[i], 0);
  }
  for (int h = 0; h < 2; h++) ASSERT(isinf(p->lo[h]) && p->lo[h] < 0 && isinf(p->hi[h]) && p->hi[h] > 0);
  for (int r = 0; r < 11; r++) ASSERT_EQ(p->b[r], 0);
  // every array is writable over its whole length (ASan checks the layout)
  memset(p->v0, 0, 12 * sizeof(double));
  memset(p->vstar, 0, 12 * sizeof(double));
  memset(p->frame, 0, 27 * sizeof(double));
  memset(p->point, 0, 9 * sizeof(double));
  memset(p->clique_ptr, 0, 13 * sizeof(fl_int));
  memset(p->clique_dof, 0, 12 * sizeof(fl_int));
  fl_problem_free(p);

  ASSERT_OK(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 2, 0, 0, &p));
  ASSERT(p->q != NULL && p->v0 == NULL && p->b == NULL && p->clique_ptr == NULL);
  fl_problem_free(p);
  fl_problem_free(NULL);
  return 0;
}


FL_TEST(alloc_invalid) {
  fl_problem *p = (fl_problem *)1;
  ASSERT_EQ(fl_problem_alloc(FL_PROBLEM_GLOBAL, -1, 0, 0, 0, &p), FL_ERR_INVAL);
  ASSERT(p == NULL);
  ASSERT_EQ(fl_problem_alloc(FL_PROBLEM_LOCAL, 6, 1, 0, 0, &p), FL_ERR_INVAL);
  ASSERT_EQ(fl_problem_alloc(FL_PROBLEM_GLOBAL, 3, 1, 0, 4, &p), FL_ERR_INVAL);
  ASSERT_EQ(fl_problem_alloc(FL_PROBLEM_GLOBAL, 3, INT32_MAX / 2, 0, 0, &p), FL_ERR_INVAL);
  return 0;
}


/* every allocation of alloc, the examples and the dynamics fails once in turn: each failure
 * returns FL_ERR_NOMEM and leaks nothing (checked by the sanitizer build) */
FL_TEST(alloc_fault_injection) {
  const char *names[] = {"two_box_stack", "one_contact_slide", "pendulum_bilateral"};
  for (int e = 0; e < 3; e++) {
    int ok = 0;
    for (long n = 0; n < 200 && !ok; n++) {
      fl_problem *p = NULL;
      fl_alloc_fail_after(n);
      int rc = fl_problem_create_example(names[e], &p);
      fl_alloc_fail_after(-1);
      if (rc == FL_OK) {
        ok = 1;
        fl_problem_free(p);
      } else {
        ASSERT_EQ(rc, FL_ERR_NOMEM);
        ASSERT(p == NULL);
      }
    }
    ASSERT(ok);
  }
  // the dynamics, J A^-1 and W of a problem with a CHOLMOD clique
  int clique_of[80];
  for (int i = 0; i < 80; i++) clique_of[i] = i < 70 ? 0 : 1 + (i - 70) / 5;
  gen_spec g = {80, 6, 1, 0, clique_of};
  fl_problem *p = gen_problem(&g);
  ASSERT(p != NULL);
  int ok = 0;
  for (long n = 0; n < 400 && !ok; n++) {
    fl_dynamics *d = NULL;
    fl_csr *W = NULL;
    fl_alloc_fail_after(n);
    int rc = fl_dynamics_create(p, &d);
    if (rc == FL_OK) rc = fl_dynamics_delassus(d, &W);
    fl_alloc_fail_after(-1);
    if (rc == FL_OK) ok = 1;
    else ASSERT_EQ(rc, FL_ERR_NOMEM);
    fl_csr_free(W);
    fl_dynamics_free(d);
  }
  ASSERT(ok);
  fl_problem_free(p);
  return 0;
}


//---- cliques ----

/* A with blocks on {0, 2, 5}, {1, 4}, {3} and a diagonal rigid body on dofs 6..11 */
FL_TEST(cliques_block_matrix) {
  fl_problem *p;
  ASSERT_OK(fl_problem_alloc(FL_PROBLEM_GLOBAL, 12, 3, 0, 0, &p));
  fl_int ai[] = {0, 0, 2, 2, 5, 5, 0, 2, 5, 1, 4, 1, 4, 3, 6, 7, 8, 9, 10, 11};
  fl_int aj[] = {2, 5, 0, 5, 0, 2, 0, 2, 5, 4, 1, 1, 4, 3, 6, 7, 8, 9, 10, 11};
  double av[] = {1, 1, 1, 1, 1, 1, 4, 4, 4, 1, 1, 3, 3, 2, 1, 1, 1, 2, 2, 2};
  ASSERT_OK(fl_csr_from_triplets(12, 12, 20, ai, aj, av, &p->A));
  // contact 0: cliques {0,2,5} and {1,4}; contact 1: {3} and the body; contact 2: the body only
  fl_int ji[] = {0, 0, 1, 2, 3, 3, 3, 4, 4, 5, 5, 6, 6, 6, 7, 7, 8};
  fl_int jj[] = {0, 4, 2, 5, 3, 6, 7, 8, 9, 10, 11, 6, 7, 8, 9, 10, 11};
  double jv[] = {1, -1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  ASSERT_OK(fl_csr_from_triplets(9, 12, 17, ji, jj, jv, &p->J));
  ASSERT_OK(fl_problem_find_cliques(p));
  // the two multi-dof components touched only by contact 0 stay apart
  ASSERT_EQ(p->ncl, 4);
  fl_int ptr[] = {0, 3, 5, 6, 12}, dof[] = {0, 2, 5, 1, 4, 3, 6, 7, 8, 9, 10, 11};
  for (int c = 0; c <= 4; c++) ASSERT_EQ(p->clique_ptr[c], ptr[c]);
  for (int k = 0; k < 12; k++) ASSERT_EQ(p->clique_dof[k], dof[k]);
  for (int k = 0; k < 12; k++) ASSERT_EQ(p->clique_dof[p->clique_ptr[p->dof_clique[k]]] <= k, 1);
  ASSERT_EQ(p->dof_clique[4], 1);
  ASSERT_EQ(p->dof_clique[11], 3);
  ASSERT_EQ(p->clique_a[0], 0);
  ASSERT_EQ(p->clique_b[0], 1);
  ASSERT_EQ(p->clique_a[1], 2);
  ASSERT_EQ(p->clique_b[1], 3);
  ASSERT_EQ(p->clique_a[2], 3);
  ASSERT_EQ(p->clique_b[2], -1);
  ASSERT_OK(fl_problem_validate(p, "blocks"));

  // a contact touching three cliques is refused ({3} is also touched by contact 1, so it is
  // not joined with the two blocks that only contact 0 touches)
  fl_csr_free(p->J);
  fl_int ki[] = {0, 0, 1, 3};
  fl_int kj[] = {0, 1, 3, 3};
  ASSERT_OK(fl_csr_from_triplets(9, 12, 4, ki, kj, jv, &p->J));
  ASSERT_EQ(fl_problem_find_cliques(p), FL_ERR_UNSUPPORTED);
  ASSERT_STR_CONTAINS(fl_errmsg(), "more than two cliques");
  fl_problem_free(p);
  return 0;
}


/* Two bodies whose translations are diagonal and whose rotations are full 3x3 blocks (the
 * world's export), touching only each other through one contact: the translations cannot be
 * told apart by their constraint sets, so both bodies become one clique and the contact
 * touches one clique, not three. */
FL_TEST(cliques_isolated_pair_with_rotation_blocks) {
  fl_problem *p;
  ASSERT_OK(fl_problem_alloc(FL_PROBLEM_GLOBAL, 12, 1, 0, 0, &p));
  fl_int ai[48], aj[48], n = 0;
  double av[48];
  for (int b = 0; b < 2; b++) {
    for (int t = 0; t < 3; t++, n++) {
      ai[n] = aj[n] = 6 * b + t;
      av[n] = 2.0;
    }
    for (int r = 0; r < 3; r++) {
      for (int c = 0; c < 3; c++, n++) {
        ai[n] = 6 * b + 3 + r;
        aj[n] = 6 * b + 3 + c;
        av[n] = r == c ? 1.0 : 0.1;
      }
    }
  }
  ASSERT_OK(fl_csr_from_triplets(12, 12, n, ai, aj, av, &p->A));
  // normal along x through both centres; tangents also turn both bodies
  fl_int ji[] = {0, 0, 1, 1, 1, 1, 2, 2, 2, 2};
  fl_int jj[] = {0, 6, 1, 5, 7, 11, 2, 4, 8, 10};
  double jv[] = {1, -1, 1, 0.5, -1, 0.5, 1, -0.5, -1, -0.5};
  ASSERT_OK(fl_csr_from_triplets(3, 12, 10, ji, jj, jv, &p->J));
  ASSERT_OK(fl_problem_find_cliques(p));
  ASSERT_EQ(p->ncl, 1);
  ASSERT_EQ(p->clique_a[0], 0);
  ASSERT_EQ(p->clique_b[0], -1);
  ASSERT_OK(fl_problem_validate(p, "pair"));
  fl_problem_free(p);
  return 0;
}


/* find_cliques recovers the bodies of the examples from A and J alone */
FL_TEST(cliques_of_examples) {
  const char *names[] = {"box_on_plane", "two_box_stack", "box_push_slide"};
  for (int e = 0; e < 3; e++) {
    fl_problem *p;
    ASSERT_OK(fl_problem_create_example(names[e], &p));
    fl_int ncl = p->ncl, a[8], b[8], dc[12];
    for (int i = 0; i < p->nc; i++) { a[i] = p->clique_a[i]; b[i] = p->clique_b[i]; }
    for (int k = 0; k < p->nv; k++) dc[k] = p->dof_clique[k];
    ASSERT_OK(fl_problem_find_cliques(p));
    ASSERT_EQ(p->ncl, ncl);
    for (int k = 0; k < p->nv; k++) ASSERT_EQ(p->dof_clique[k], dc[k]);
    for (int i = 0; i < p->nc; i++) { ASSERT_EQ(p->clique_a[i], a[i]); ASSERT_EQ(p->clique_b[i], b[i]); }
    fl_problem_free(p);
  }
  return 0;
}


//---- validation ----

FL_TEST(validate_rejects) {
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example("box_on_plane", &p));
  ASSERT_OK(fl_problem_validate(p, "box"));
  p->mu[2] = -0.1;
  ASSERT_EQ(fl_problem_validate(p, "box.hdf5"), FL_ERR_FORMAT);
  ASSERT_STR_CONTAINS(fl_errmsg(), "box.hdf5: contact 2: mu");
  p->mu[2] = NAN;
  ASSERT_EQ(fl_problem_validate(p, "box"), FL_ERR_FORMAT);
  p->mu[2] = 0.5;
  p->vstar[1] = INFINITY;
  ASSERT_EQ(fl_problem_validate(p, "box"), FL_ERR_FORMAT);
  ASSERT_STR_CONTAINS(fl_errmsg(), "vstar[1]");
  p->vstar[1] = 0;
  p->A->val[0] = -1.0;
  ASSERT_EQ(fl_problem_validate(p, "box"), FL_ERR_FORMAT);
  ASSERT_STR_CONTAINS(fl_errmsg(), "A(0, 0)");
  p->A->val[0] = 1.0;
  p->J->col[0] = 17;
  ASSERT_EQ(fl_problem_validate(p, "box"), FL_ERR_FORMAT);
  ASSERT_STR_CONTAINS(fl_errmsg(), "column out of range");
  fl_problem_free(p);
  ASSERT_EQ(fl_problem_create_example("no_such_problem", &p), FL_ERR_UNKNOWN_PROBLEM);
  ASSERT_STR_CONTAINS(fl_errmsg(), "two_box_stack");
  return 0;
}


//---- the shared operators ----

FL_TEST(cone_projection) {
  double out[3];
  double in1[3] = {1, 0.1, 0.1};
  fl_cone_project(0.5, in1, out);
  ASSERT_NEAR(out[0], 1, 0);
  ASSERT_NEAR(out[1], 0.1, 0);
  double in2[3] = {-1, 0.1, 0.2};
  fl_cone_project(0.5, in2, out);
  ASSERT(out[0] == 0 && out[1] == 0 && out[2] == 0);
  // boundary: (x_n + mu |x_t|)/(1 + mu^2) = (0 + 0.5*2)/1.25 = 0.8, x_t scaled to mu*0.8
  double in3[3] = {0, 2, 0};
  fl_cone_project(0.5, in3, out);
  ASSERT_NEAR(out[0], 0.8, 1e-15);
  ASSERT_NEAR(out[1], 0.4, 1e-15);
  ASSERT_NEAR(out[2], 0.0, 0);
  // mu = 0: projection onto the half line
  fl_cone_project(0.0, in3, out);
  ASSERT(out[0] == 0 && out[1] == 0);
  // random points: the residual x - P(x) is orthogonal to P(x) and P(x) is in the cone
  for (int k = 0; k < 1000; k++) {
    double x[3] = {urand(), urand(), urand()}, mu = 1.0 + urand();
    fl_cone_project(mu, x, out);
    ASSERT_LE(hypot(out[1], out[2]), mu * out[0] + 1e-15);
    double dot = (x[0] - out[0]) * out[0] + (x[1] - out[1]) * out[1] + (x[2] - out[2]) * out[2];
    ASSERT_NEAR(dot, 0.0, 1e-14);
  }
  return 0;
}


FL_TEST(apply_solve_roundtrip) {
  // cliques of sizes 1, 6, 6, 20 (dense) and 100 (CHOLMOD)
  int nv = 133, clique_of[133];
  for (int i = 0; i < nv; i++) {
    clique_of[i] = i < 1 ? 0 : i < 7 ? 1 : i < 13 ? 2 : i < 33 ? 3 : 4;
  }
  gen_spec g = {nv, 10, 2, 0, clique_of};
  fl_problem *p = gen_problem(&g);
  ASSERT(p != NULL);
  ASSERT_EQ(p->ncl, 5);
  fl_dynamics *d;
  ASSERT_OK(fl_dynamics_create(p, &d));
  double x0[133], y[133], x[133];
  for (int i = 0; i < nv; i++) x0[i] = urand();
  fl_dynamics_apply_A(d, x0, y);
  fl_dynamics_solve_A(d, y, x);
  for (int i = 0; i < nv; i++) ASSERT_NEAR(x[i], x0[i], 1e-12);
  // in place (x aliases y)
  fl_dynamics_solve_A(d, y, y);
  for (int i = 0; i < nv; i++) ASSERT_NEAR(y[i], x0[i], 1e-12);
  fl_dynamics_free(d);
  fl_problem_free(p);
  return 0;
}


/* the 100-dof sparse SPD clique through CHOLMOD agrees with an independent dense solve */
FL_TEST(cholmod_vs_dense) {
  int nv = 100, clique_of[100] = {0};
  gen_spec g = {nv, 4, 0, 0, clique_of};
  fl_problem *p = gen_problem(&g);
  ASSERT(p != NULL);
  ASSERT_EQ(p->ncl, 1);
  ASSERT(p->A->nnz < nv * nv / 4); /* sparse */
  fl_dynamics *d;
  ASSERT_OK(fl_dynamics_create(p, &d));
  double rhs[100], x[100], *M = dense_of(p->A);
  for (int i = 0; i < nv; i++) rhs[i] = urand();
  fl_dynamics_solve_A(d, rhs, x);
  gauss_solve(nv, M, 1, rhs);
  for (int i = 0; i < nv; i++) ASSERT_NEAR(x[i], rhs[i], 1e-12 * (1.0 + fabs(rhs[i])));
  free(M);
  fl_dynamics_free(d);

  // the same clique shrunk to 60 dofs goes the dense way and agrees too
  fl_problem_free(p);
  g.nv = 60;
  p = gen_problem(&g);
  ASSERT(p != NULL);
  ASSERT_OK(fl_dynamics_create(p, &d));
  M = dense_of(p->A);
  for (int i = 0; i < 60; i++) rhs[i] = urand();
  fl_dynamics_solve_A(d, rhs, x);
  gauss_solve(60, M, 1, rhs);
  for (int i = 0; i < 60; i++) ASSERT_NEAR(x[i], rhs[i], 1e-12 * (1.0 + fabs(rhs[i])));
  free(M);
  fl_dynamics_free(d);
  fl_problem_free(p);
  return 0;
}


/* J A^-1, the Delassus blocks, the bilateral diagonal and the full W against dense
 * J A^-1 J^T computed independently */
FL_TEST(delassus_vs_dense) {
  int nv = 97, clique_of[97];
  for (int i = 0; i < nv; i++) clique_of[i] = i < 6 ? 0 : i < 12 ? 1 : i < 18 ? 2 : 3; /* 79-dof FEM */
  gen_spec g = {nv, 8, 3, 0, clique_of};
  fl_problem *p = gen_problem(&g);
  ASSERT(p != NULL);
  int m = fl_problem_nrows(p);
  fl_dynamics *d;
  ASSERT_OK(fl_dynamics_create(p, &d));

  // dense reference: X = A^-1 J^T (nv x m), Wref = J X
  double *M = dense_of(p->A), *Jd = dense_of(p->J);
  double *X = calloc((size_t)nv * m, sizeof(double));
  for (int i = 0; i < nv; i++) for (int r = 0; r < m; r++) X[i * m + r] = Jd[r * nv + i];
  gauss_solve(nv, M, m, X);
  double *Wref = calloc((size_t)m * m, sizeof(double));
  for (int r = 0; r < m; r++) for (int s = 0; s < m; s++) {
    double sum = 0;
    for (int i = 0; i < nv; i++) sum += Jd[r * nv + i] * X[i * m + s];
    Wref[r * m + s] = sum;
  }

  // J A^-1
  const fl_csr *B = fl_dynamics_JAinv(d);
  ASSERT(B != NULL);
  double *Bd = dense_of(B);
  for (int r = 0; r < m; r++) for (int i = 0; i < nv; i++) ASSERT_NEAR(Bd[r * nv + i], X[i * m + r], 1e-12);

  // blocks
  double *Wc = malloc(sizeof(double) * 9 * (size_t)p->nc), Wh[3];
  ASSERT_OK(fl_dynamics_delassus_blocks(d, Wc, Wh));
  for (int i = 0; i < p->nc; i++) for (int a = 0; a < 3; a++) for (int b = 0; b < 3; b++) {
    ASSERT_NEAR(Wc[9 * i + 3 * a + b], Wref[(3 * i + a) * m + 3 * i + b], 1e-12);
  }
  for (int h = 0; h < 3; h++) ASSERT_NEAR(Wh[h], Wref[(3 * p->nc + h) * m + 3 * p->nc + h], 1e-12);

  // the full W, exactly symmetric, with the blocks inside it bit for bit
  fl_csr *W;
  ASSERT_OK(fl_dynamics_delassus(d, &W));
  ASSERT_EQ(W->nrow, m);
  double *Wd = dense_of(W);
  for (int r = 0; r < m; r++) for (int s = 0; s < m; s++) {
    ASSERT_NEAR(Wd[r * m + s], Wref[r * m + s], 1e-12);
    ASSERT(Wd[r * m + s] == Wd[s * m + r]);
  }
  for (int i = 0; i < p->nc; i++) ASSERT(Wc[9 * i + 1] == fl_csr_get(W, 3 * i, 3 * i + 1));

  free(M); free(Jd); free(X); free(Wref); free(Bd); free(Wc); free(Wd);
  fl_csr_free(W);
  fl_dynamics_free(d);
  fl_problem_free(p);
  return 0;
}


/* local form of the compliant box: W = J A^-1 J^T + diag(R_n, 0, 0), q = J v* - (vhat_n, 0, 0) */
/* J A^-1 and W are estimated against fl_mem_limit() before they are built (issue 51, item 5):
 * box_on_plane has 12 rows on one 6-dof clique, so J A^-1 holds 72 entries (864 bytes at 12 a
 * value and column) and W's pattern at most 12 + 12^2 = 156 (2496 bytes at 16). */
FL_TEST(delassus_size_refused) {
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example("box_on_plane", &p));
  const char *lims[2] = {"0.0005", "0.002"}; /* MiB: 524 bytes refuse J A^-1, 2097 refuse W */
  const char *what[2] = {"J A^-1 needs about", "the Delassus matrix W = J A^-1 J^T needs about"};
  for (int k = 0; k < 2; k++) {
    setenv("FL_MEM_LIMIT_MB", lims[k], 1);
    fl_dynamics *d;
    ASSERT_OK(fl_dynamics_create(p, &d));
    fl_csr *W = NULL;
    int rc = fl_dynamics_delassus(d, &W);
    unsetenv("FL_MEM_LIMIT_MB");
    ASSERT_EQ(rc, FL_ERR_NOMEM);
    ASSERT(W == NULL);
    ASSERT(strstr(fl_errmsg(), what[k]) != NULL);
    ASSERT(strstr(fl_errmsg(), "(raise it with --mem-limit GB or FL_MEM_LIMIT_MB)") != NULL);
    fl_dynamics_free(d);
  }
  // the default limit: built, 12 x 12
  fl_dynamics *d;
  ASSERT_OK(fl_dynamics_create(p, &d));
  fl_csr *W;
  ASSERT_OK(fl_dynamics_delassus(d, &W));
  ASSERT_EQ(W->nrow, 12);
  ASSERT_EQ(W->nnz, 144);
  fl_csr_free(W);
  fl_dynamics_free(d);
  fl_problem_free(p);
  return 0;
}


FL_TEST(local_form) {
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example("box_on_plane_compliant", &p));
  fl_dynamics *d;
  ASSERT_OK(fl_dynamics_create(p, &d));
  fl_csr *W, *W0;
  double q[12];
  ASSERT_OK(fl_problem_local_form(p, d, &W, q));
  ASSERT_OK(fl_dynamics_delassus(d, &W0));
  // R_n = 1/(dt k (dt + tau)) = 1/(0.01 * 1e4 * 0.02) = 0.5; vhat = -phi0/(dt + tau)
  double R = 0.5, vhat = (9.81 / 4e4) / 0.02;
  for (int r = 0; r < 12; r++) for (int s = 0; s < 12; s++) {
    double extra = (r == s && r % 3 == 0) ? R : 0.0;
    ASSERT_NEAR(fl_csr_get(W, r, s), fl_csr_get(W0, r, s) + extra, 1e-15);
  }
  // corner normal: vertical unit mass plus two tilts, 1/m + (h^2 + h^2)/I = 1 + 0.125/(1/24) = 4
  ASSERT_NEAR(fl_csr_get(W0, 0, 0), 4.0, 1e-13);
  for (int i = 0; i < 4; i++) {
    ASSERT_NEAR(q[3 * i], -9.81 * 0.01 - vhat, 1e-15);
    ASSERT_NEAR(q[3 * i + 1], 0.0, 1e-15);
  }
  // the same without a dynamics object
  fl_csr *W2;
  double q2[12];
  ASSERT_OK(fl_problem_local_form(p, NULL, &W2, q2));
  ASSERT_EQ(W2->nnz, W->nnz);
  for (int k = 0; k < W->nnz; k++) ASSERT(W2->val[k] == W->val[k]);
  // and as a local problem of its own, with the dynamics that formed it
  fl_problem *l;
  fl_dynamics *dl;
  ASSERT_OK(fl_problem_local_problem(p, &dl, &l));
  ASSERT_EQ(l->kind, FL_PROBLEM_LOCAL);
  ASSERT_EQ(l->nc, p->nc);
  ASSERT(l->dt == p->dt && strcmp(l->name, p->name) == 0);
  ASSERT_EQ(l->W->nnz, W->nnz);
  for (int k = 0; k < W->nnz; k++) ASSERT(l->W->val[k] == W->val[k]);
  for (int r = 0; r < 12; r++) ASSERT(l->q[r] == q[r]);
  for (int i = 0; i < 4; i++) ASSERT(l->mu[i] == p->mu[i]);
  ASSERT(fl_dynamics_JAinv(dl) != NULL);
  fl_problem *l2 = l;
  fl_dynamics *dl2 = dl;
  ASSERT_EQ(fl_problem_local_problem(l, &dl2, &l2), FL_ERR_INVAL); // l is local; outs NULLed
  ASSERT(l2 == NULL && dl2 == NULL);
  fl_problem_free(l);
  fl_dynamics_free(dl);
  fl_csr_free(W); fl_csr_free(W0); fl_csr_free(W2);
  fl_dynamics_free(d);
  fl_problem_free(p);

  // local problems are copied; bilateral rows are refused
  ASSERT_OK(fl_problem_create_example("one_contact_stick", &p));
  ASSERT_OK(fl_problem_local_form(p, NULL, &W, q));
  ASSERT_NEAR(fl_csr_get(W, 0, 1), 0.5, 0);
  ASSERT_NEAR(q[0], -2.0, 0);
  fl_csr_free(W);
  ASSERT_EQ(fl_dynamics_create(p, &d), FL_ERR_UNSUPPORTED);
  fl_problem_free(p);
  ASSERT_OK(fl_problem_create_example("pendulum_bilateral", &p));
  ASSERT_EQ(fl_problem_local_form(p, NULL, &W, q), FL_ERR_UNSUPPORTED);
  ASSERT_EQ(fl_problem_local_problem(p, &d, &l), FL_ERR_UNSUPPORTED);
  fl_problem_free(p);
  return 0;
}


FL_TEST(not_spd) {
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example("box_on_plane", &p));
  p->A->val[4] = -0.5; /* inertia entry */
  fl_dynamics *d;
  ASSERT_EQ(fl_dynamics_create(p, &d), FL_ERR_NOT_SPD);
  fl_problem_free(p);
  // a 70-dof clique (CHOLMOD) with a negative pivot
  int clique_of[70] = {0};
  gen_spec g = {70, 2, 0, 0, clique_of};
  p = gen_problem(&g);
  ASSERT(p != NULL);
  for (fl_int k = p->A->rowptr[40]; k < p->A->rowptr[41]; k++) if (p->A->col[k] == 40) p->A->val[k] = -3;
  ASSERT_EQ(fl_dynamics_create(p, &d), FL_ERR_NOT_SPD);
  ASSERT_STR_CONTAINS(fl_errmsg(), "not SPD");
  fl_problem_free(p);
  // unvalidated data with an index out of range is refused, not followed
  ASSERT_OK(fl_problem_create_example("two_box_stack", &p));
  p->J->col[3] = 12;
  ASSERT_EQ(fl_dynamics_create(p, &d), FL_ERR_FORMAT);
  ASSERT_STR_CONTAINS(fl_errmsg(), "J has a column index 12");
  fl_problem_free(p);
  return 0;
}


//---- examples: the closed forms satisfy the equations ----

FL_TEST(examples_closed_forms) {
  const char *const *names = fl_examples_list();
  int n = 0;
  for (; names[n]; n++) {
    fl_problem *p;
    ASSERT_OK(fl_problem_create_example(names[n], &p));
    ASSERT_OK(fl_problem_validate(p, names[n]));
    double v[12] = {0}, g[24] = {0};
    ASSERT_OK(fl_example_solution(names[n], v, g));
    fl_metrics m;
    ASSERT_OK(fl_problem_metrics(p, v, g, FL_NORM_NONE, &m));
    ASSERT_LE(m.natmap_raw, 1e-15);
    ASSERT_LE(m.bilateral, 1e-15);
    if (p->kind == FL_PROBLEM_GLOBAL) ASSERT_LE(m.momentum, 1e-14);
    fl_problem_free(p);
  }
  ASSERT(n >= 7);

  // the stated sums: box normals m g dt, stack 11 m g dt below and 10 m g dt between
  double g[24] = {0}, v[12];
  fl_example_solution("two_box_stack", v, g);
  double low = 0, mid = 0;
  for (int i = 0; i < 4; i++) { low += g[3 * i]; mid += g[3 * (4 + i)]; }
  ASSERT_NEAR(low, 11 * 9.81 * 0.01, 1e-15);
  ASSERT_NEAR(mid, 10 * 9.81 * 0.01, 1e-15);
  fl_example_solution("box_push_slide", v, g);
  ASSERT_NEAR(v[0], 0.5 + (9.81 - 0.5 * 9.81) * 0.01, 1e-15);
  ASSERT_NEAR(g[0] + g[3] + g[6] + g[9], 9.81 * 0.01, 1e-15);
  ASSERT_NEAR(g[1] + g[4] + g[7] + g[10], -0.5 * 9.81 * 0.01, 1e-15);
  fl_example_solution("one_contact_slide", v, g);
  ASSERT_NEAR(g[1], -0.278543, 1e-6);
  ASSERT_NEAR(g[2], -0.111417, 1e-6);
  return 0;
}


//---- FCLIB data through libfclib (the reader under test is fclib_io.c's; this checks the
//     operators at the sizes of the shared files) ----

#ifdef FL_HAVE_LIBFCLIB
/* A = M, J = H^T, b = w, v* = M^-1 f from a global FCLIB file read by libfclib */
static int load_with_libfclib(const char *path, fl_problem **out, double **f) {
  struct fclib_global *g = fclib_read_global(path);
  if (!g) return FL_ERR_IO;
  int nv = g->M->n, nc = g->H->n / 3;
  fl_problem *p;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_GLOBAL, nv, nc, 0, 0, &p));
  // triplets: i = row, p = column
  FL_TRY(fl_csr_from_triplets(nv, nv, g->M->nz, g->M->i, g->M->p, g->M->x, &p->A));
  FL_TRY(fl_csr_from_triplets(3 * nc, nv, g->H->nz, g->H->p, g->H->i, g->H->x, &p->J));
  memcpy(p->b, g->w, sizeof(double) * 3 * (size_t)nc);
  memcpy(p->mu, g->mu, sizeof(double) * (size_t)nc);
  *f = malloc(sizeof(double) * (size_t)nv);
  memcpy(*f, g->f, sizeof(double) * (size_t)nv);
  fclib_delete_global(g);
  free(g);
  *out = p;
  return fl_problem_find_cliques(p);
}
#endif


FL_TEST(fclib_sizes) {
#ifndef FL_HAVE_LIBFCLIB
  SKIP("libfclib not found");
#else
  char path[1024];
  const char *files[] = {"Spheres-i099-356-679.hdf5", "LMGC_GFC3D-i00501-4-00000.hdf5"};
  for (int k = 0; k < 2; k++) {
    snprintf(path, sizeof(path), "%s/fclib/%s", fl_test_shared_dir(), files[k]);
    if (access(path, R_OK) != 0) SKIP("%s not found", path);
    fl_problem *p;
    double *f;
    ASSERT_OK(load_with_libfclib(path, &p, &f));
    fl_dynamics *d;
    ASSERT_OK(fl_dynamics_create(p, &d));
    if (k == 0) {
      // 2000 spheres: 6-dof cliques for the spheres in contact, at most two per contact
      ASSERT_EQ(p->nv, 12000);
      int six = 0;
      for (int c = 0; c < p->ncl; c++) six += p->clique_ptr[c + 1] - p->clique_ptr[c] == 6;
      ASSERT(six >= 300);
    } else {
      // LMGC90: two 81-dof FEM bodies, factorized by CHOLMOD
      ASSERT_EQ(p->ncl, 2);
      ASSERT_EQ(p->clique_ptr[1], 81);
    }
    // v* = M^-1 f and back
    double *y = malloc(sizeof(double) * (size_t)p->nv);
    fl_dynamics_solve_A(d, f, p->vstar);
    fl_dynamics_apply_A(d, p->vstar, y);
    double err = 0, nf = 0;
    for (int i = 0; i < p->nv; i++) { err = fmax(err, fabs(y[i] - f[i])); nf = fmax(nf, fabs(f[i])); }
    ASSERT_LE(err, 1e-12 * (1 + nf));
    // W rows against A^-1 J_r^T for a few rows
    fl_csr *W;
    ASSERT_OK(fl_dynamics_delassus(d, &W));
    double *jr = calloc((size_t)p->nv, sizeof(double));
    for (int r = 0; r < fl_problem_nrows(p); r += 97) {
      memset(jr, 0, sizeof(double) * (size_t)p->nv);
      for (fl_int e = p->J->rowptr[r]; e < p->J->rowptr[r + 1]; e++) jr[p->J->col[e]] = p->J->val[e];
      fl_dynamics_solve_A(d, jr, jr);
      for (int s = 0; s < fl_problem_nrows(p); s++) {
        double ref = 0, scale = 0;
        for (fl_int e = p->J->rowptr[s]; e < p->J->rowptr[s + 1]; e++) {
          ref += p->J->val[e] * jr[p->J->col[e]];
          scale += fabs(p->J->val[e] * jr[p->J->col[e]]);
        }
        ASSERT_NEAR(fl_csr_get(W, r, s), ref, 1e-12 * (1 + scale));
      }
    }
    free(jr);
    free(y);
    free(f);
    fl_csr_free(W);
    fl_dynamics_free(d);
    fl_problem_free(p);
  }
  return 0;
#endif
}


//---- the lift of a local problem (problems/lift.c) ----

/* a local problem with W = C0 C0^T (+ skew K, K_ij = kappa (i - j)/n) from a random n x k C0,
 * q random, mu 0.5 */
static fl_problem *lift_local(fl_int nc, int k, double kappa) {
  int n = 3 * (int)nc;
  double *c0 = malloc(sizeof(double) * (size_t)n * (size_t)k);
  for (int i = 0; i < n * k; i++) c0[i] = urand();
  fl_int *ti = malloc(sizeof(fl_int) * (size_t)n * (size_t)n);
  fl_int *tj = malloc(sizeof(fl_int) * (size_t)n * (size_t)n);
  double *tv = malloc(sizeof(double) * (size_t)n * (size_t)n);
  int nt = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double w = kappa * (double)(i - j) / n;
      for (int a = 0; a < k; a++) w += c0[i * k + a] * c0[j * k + a];
      ti[nt] = i, tj[nt] = j, tv[nt++] = w;
    }
  fl_problem *p = NULL;
  if (fl_problem_alloc(FL_PROBLEM_LOCAL, 0, nc, 0, 0, &p) == FL_OK &&
      fl_csr_from_triplets(n, n, nt, ti, tj, tv, &p->W) == FL_OK) {
    snprintf(p->name, sizeof p->name, "lift%d_%d", n, k);
    for (int i = 0; i < n; i++) p->q[i] = urand();
    for (fl_int i = 0; i < nc; i++) p->mu[i] = 0.5;
  }
  free(c0), free(ti), free(tj), free(tv);
  return p;
}


/* max_ij |W_ij - (J A^-1 J^T)_ij| / max |W_ij| computed densely here (A^-1 by the Gaussian
 * elimination above, not by the code under test), and the structure of the lifted problem */
static double lift_error(const fl_problem *p, const fl_problem *g) {
  int n = 3 * (int)p->nc, r = (int)g->nv;
  if (g->kind != FL_PROBLEM_GLOBAL || g->nc != p->nc || g->nh != 0 || g->J->nrow != n ||
      g->J->ncol != r || g->A->nrow != r || g->dt != 1.0)
    return INFINITY;
  for (int i = 0; i < n; i++)
    if (g->b[i] != p->q[i]) return INFINITY;
  for (int i = 0; i < r; i++)
    if (g->vstar[i] != 0.0 || g->v0[i] != 0.0) return INFINITY;
  for (fl_int i = 0; i < p->nc; i++)
    if (g->mu[i] != p->mu[i] || !isinf(g->stiffness[i]) || g->phi0[i] != 0.0) return INFINITY;
  double *W = dense_of(p->W), *J = dense_of(g->J), *A = dense_of(g->A);
  // X = A^-1 J^T (r x n)
  double *X = malloc(sizeof(double) * ((size_t)r * (size_t)n + 1));
  for (int i = 0; i < r; i++)
    for (int j = 0; j < n; j++) X[i * n + j] = J[j * r + i];
  if (r > 0) gauss_solve(r, A, n, X);
  double e = 0, wmax = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int a = 0; a < r; a++) s += J[i * r + a] * X[a * n + j];
      e = fmax(e, fabs(W[i * n + j] - s));
      wmax = fmax(wmax, fabs(W[i * n + j]));
    }
  free(W), free(J), free(A), free(X);
  return wmax > 0 ? e / wmax : e;
}


FL_TEST(lift_spd_and_rank_deficient) {
  // full rank (SPD, k > n), rank 7 of 12, rank 1 of 6: W = J A^-1 J^T to round-off
  const struct {
    fl_int nc;
    int k, rank;
  } cases[] = {{4, 20, 12}, {4, 7, 7}, {2, 1, 1}, {10, 13, 13}};
  for (int c = 0; c < 4; c++) {
    fl_problem *p = lift_local(cases[c].nc, cases[c].k, 0.0), *g;
    ASSERT(p);
    fl_lift_info li;
    ASSERT_OK(fl_problem_lift_local(p, &g, &li));
    ASSERT_OK(fl_problem_validate(g, "lift"));
    double e = lift_error(p, g);
    printf("nc %d, rank %d: rank found %d, error %.3g (lift says %.3g)\n", (int)cases[c].nc,
           cases[c].rank, (int)li.rank, e, li.exactness);
    ASSERT_EQ(li.rank, cases[c].rank);
    ASSERT_EQ(g->nv, cases[c].rank);
    ASSERT_EQ(g->ncl, 1);
    ASSERT_LE(e, 1e-14);
    ASSERT_LE(li.exactness, 1e-14);
    ASSERT_NEAR(li.exactness, e, 2e-15);
    ASSERT_EQ(li.asymmetry, 0.0);
    ASSERT_LE(li.psd_error, li.exactness);
    // J A^-1 J^T = W means u = J v + b at the balance v = J^T gamma is W gamma + q
    fl_int n = 3 * p->nc;
    double *gam = malloc(sizeof(double) * (size_t)n), *u = malloc(sizeof(double) * (size_t)n);
    double *ul = malloc(sizeof(double) * (size_t)n), *v = malloc(sizeof(double) * ((size_t)g->nv + 1));
    for (fl_int i = 0; i < n; i++) gam[i] = urand();
    fl_csr_gemtv(g->J, 1.0, gam, 0.0, v);
    fl_problem_velocity(g, v, gam, u);
    fl_problem_velocity(p, NULL, gam, ul);
    for (fl_int i = 0; i < n; i++) ASSERT_NEAR(u[i], ul[i], 1e-13 * (1 + fabs(ul[i])));
    free(gam), free(u), free(ul), free(v);
    fl_problem_free(g);
    fl_problem_free(p);
  }
  return 0;
}


FL_TEST(lift_asymmetric_indefinite_and_zero) {
  // a skew part is not representable: the symmetric part is lifted, the skew part reported
  fl_problem *p = lift_local(3, 5, 1e-3), *g;
  ASSERT(p);
  fl_lift_info li;
  ASSERT_OK(fl_problem_lift_local(p, &g, &li));
  ASSERT_EQ(li.rank, 5);
  ASSERT_LE(li.psd_error, 1e-14);
  double e = lift_error(p, g);
  printf("skew 1e-3 (i - j)/n: asymmetry %.3g, exactness %.3g (measured here %.3g)\n",
         li.asymmetry, li.exactness, e);
  ASSERT_NEAR(li.exactness, e, 2e-15);
  ASSERT(li.asymmetry > 1e-5 && li.exactness >= li.asymmetry - li.psd_error);
  fl_problem_free(g);
  fl_problem_free(p);

  // indefinite: W = diag(1, -1, 1) is no J A^-1 J^T
  static const fl_int ij[3] = {0, 1, 2};
  static const double w[3] = {1, -1, 1};
  ASSERT_OK(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 1, 0, 0, &p));
  snprintf(p->name, sizeof p->name, "indefinite");
  ASSERT_OK(fl_csr_from_triplets(3, 3, 3, ij, ij, w, &p->W));
  ASSERT_EQ(fl_problem_lift_local(p, &g, &li), FL_ERR_UNSUPPORTED);
  ASSERT(g == NULL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "indefinite: the symmetric part of W is not positive semidefinite");
  ASSERT_EQ(li.rank, 2); // the two positive pivots, then -1 stops it
  ASSERT_NEAR(li.psd_error, 1.0, 1e-15);
  fl_problem_free(p);

  // W = 0: no dofs, every row of J empty
  static const double z[3] = {0, 0, 0};
  ASSERT_OK(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 1, 0, 0, &p));
  ASSERT_OK(fl_csr_from_triplets(3, 3, 3, ij, ij, z, &p->W));
  ASSERT_OK(fl_problem_lift_local(p, &g, &li));
  ASSERT_EQ(g->nv, 0);
  ASSERT_EQ(g->J->nnz, 0);
  ASSERT_EQ(g->clique_a[0], -1);
  ASSERT_EQ(li.exactness, 0.0);
  fl_problem_free(g);

  // arguments
  ASSERT_EQ(fl_problem_lift_local(p, NULL, &li), FL_ERR_INVAL);
  ASSERT_EQ(fl_problem_lift_local(NULL, &g, NULL), FL_ERR_INVAL);
  fl_problem *glob;
  ASSERT_OK(fl_problem_create_example("box_on_plane", &glob));
  ASSERT_EQ(fl_problem_lift_local(glob, &g, NULL), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "box_on_plane is not a local problem");
  fl_problem_free(glob);
  fl_problem_free(p);
  return 0;
}


FL_TEST(lift_one_contact_examples_exact) {
  // the closed-form local solutions of the one-contact examples solve their lifts exactly:
  // (v, gamma) = (J^T gamma*, gamma*) has zero natural map and zero momentum residual
  const char *names[] = {"one_contact_slide", "one_contact_stick"};
  for (int e = 0; e < 2; e++) {
    fl_problem *p, *g;
    ASSERT_OK(fl_problem_create_example(names[e], &p));
    ASSERT_OK(fl_problem_lift_local(p, &g, NULL));
    ASSERT_EQ(g->nv, 3);
    double gam[3], v[3];
    ASSERT_OK(fl_example_solution(names[e], NULL, gam));
    fl_csr_gemtv(g->J, 1.0, gam, 0.0, v);
    fl_metrics ml, mg;
    ASSERT_OK(fl_problem_metrics(p, NULL, gam, FL_NORM_NONE, &ml));
    ASSERT_OK(fl_problem_metrics(g, v, gam, FL_NORM_NONE, &mg));
    printf("%s: natural map local %.3g, lifted %.3g, momentum %.3g\n", names[e], ml.natmap_raw,
           mg.natmap_raw, mg.momentum);
    ASSERT_LE(ml.natmap_raw, 1e-15);
    ASSERT_LE(mg.natmap_raw, 1e-15);
    ASSERT_LE(mg.momentum, 1e-15);
    fl_problem_free(g);
    fl_problem_free(p);
  }
  return 0;
}


FL_TEST(lift_fclib_local_files) {
  // every FCLIB local file at hand lifts, its symmetric part reproduced to round-off; prints
  // the table of docs/lift.md (nc, rank, errors, seconds)
  const char *files[] = {"Capsules-i97-269.hdf5",
                         "Capsules-i125-1213.hdf5",
                         "LMGC_100_PR_PerioBox-i00361-60-03000.hdf5",
                         "local_problem_test.hdf5",
                         "converted_from_siconos_dat/BoxesStack1-i100000-32.hdf5",
                         "converted_from_siconos_dat/Capsules-i101-404.hdf5",
                         "converted_from_siconos_dat/FrictionContact3D_1c.hdf5",
                         "converted_from_siconos_dat/KaplasTower-i1061-4.hdf5",
                         "converted_from_siconos_dat/OneObject-i100000-499.hdf5",
                         "converted_from_siconos_dat/Rover4396.hdf5",
                         NULL};
  int ran = 0;
  printf("%-38s %5s %5s %9s %10s %10s %10s %8s\n", "problem", "nc", "rank", "nnz(J)",
         "exactness", "asymmetry", "psd_error", "lift_s");
  for (int f = 0; files[f]; f++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/fclib/%s", fl_test_shared_dir(), files[f]);
    if (access(path, R_OK) != 0) continue;
    fl_problem *p, *g;
    ASSERT_OK(fl_problem_load_fclib(path, &p));
    ASSERT_EQ(p->kind, FL_PROBLEM_LOCAL);
    fl_lift_info li;
    double t = fl_time_now();
    ASSERT_OK(fl_problem_lift_local(p, &g, &li));
    t = fl_time_now() - t;
    printf("%-38s %5d %5d %9d %10.3g %10.3g %10.3g %8.3f\n", p->name, (int)p->nc, (int)li.rank,
           (int)g->J->nnz, li.exactness, li.asymmetry, li.psd_error, t);
    ASSERT_LE(li.psd_error, 1e-13);
    ASSERT(li.rank > 0 && li.rank <= 3 * p->nc);
    ASSERT_LE(li.exactness, li.asymmetry + li.psd_error + 1e-15);
    fl_problem_free(g);
    fl_problem_free(p);
    ran++;
  }
  if (!ran) SKIP("no FCLIB local file under %s/fclib", fl_test_shared_dir());
  return 0;
}

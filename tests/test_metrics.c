// SPDX-License-Identifier: Apache-2.0
/* test_metrics.c: the solver-independent metrics on cases worked out by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fl_test.h"
#include "problems/fl_problem.h"

#ifdef FL_HAVE_LIBFCLIB
#define FCLIB_WITH_MERIT_FUNCTIONS 1
#include <fclib.h>
#endif

static fl_metrics metrics_of(const fl_problem *p, const double *v, const double *g, fl_norm_kind k) {
  fl_metrics m;
  memset(&m, 0xff, sizeof(m));
  if (fl_problem_metrics(p, v, g, k, &m) != FL_OK) m.natmap = NAN;
  return m;
}


/* W = I, q = (-1, 0.5, 0.2), mu = 0.3 slides with gamma = (1, -0.278543, -0.111417) */
FL_TEST(slide_solution) {
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example("one_contact_slide", &p));
  double g[3] = {1.0, -0.278543, -0.111417};
  fl_metrics m = metrics_of(p, NULL, g, FL_NORM_NONE);
  ASSERT_LE(m.natmap_raw, 1e-6);
  ASSERT_NEAR(m.natmap, m.natmap_raw, 0);
  // u = gamma + q = (0, u_t) with u_t = q_t (1 - mu/||q_t||): Signorini, cone, dual vanish,
  // and friction opposes sliding at full strength
  ASSERT_LE(m.signorini, 1e-15);
  ASSERT_LE(m.cone, 1e-6);
  ASSERT_LE(m.dual, 1e-15);
  ASSERT_LE(m.dissipation, 1e-6);
  ASSERT(isnan(m.momentum));
  ASSERT_EQ(m.penetration, 0);
  ASSERT_EQ(m.bilateral, 0);
  // exact closed form: zero to rounding
  fl_example_solution("one_contact_slide", NULL, g);
  m = metrics_of(p, NULL, g, FL_NORM_NONE);
  ASSERT_LE(m.natmap_raw, 1e-15);
  fl_problem_free(p);
  return 0;
}


/* gamma = (1, 0, 0) for the slide problem, by hand:
 *   u = (0, 0.5, 0.2), s = ||u_t|| = sqrt(0.29), uhat = (mu s, 0.5, 0.2),
 *   y = gamma - uhat = (1 - mu s, -0.5, -0.2) lies outside K and its polar cone, so
 *   P(y)_n = (y_n + mu s)/(1 + mu^2) = 1/1.09 and |P(y)_t| = mu/1.09 along -u_t:
 *   gamma - P(y) = (0.09/1.09, 0.3/1.09 along u_t), norm sqrt(0.0081 + 0.09)/1.09.
 *   Dissipation |gamma_t . u_t + mu gamma_n s| = mu s. */
FL_TEST(slide_perturbed) {
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example("one_contact_slide", &p));
  double g[3] = {1.0, 0.0, 0.0}, s = sqrt(0.29);
  double raw = sqrt(0.0981) / 1.09, nq = sqrt(1.29);
  fl_metrics m = metrics_of(p, NULL, g, FL_NORM_NONE);
  ASSERT_NEAR(m.natmap_raw, raw, 1e-15);
  ASSERT_NEAR(m.natmap_raw, 0.287348, 1e-6);
  ASSERT_NEAR(m.norm_q, nq, 1e-15);
  ASSERT_NEAR(m.norm_u, s, 1e-15);
  ASSERT_NEAR(m.norm_gamma, 1.0, 0);
  ASSERT_NEAR(m.dissipation, 0.3 * s, 1e-15);
  ASSERT_EQ(m.signorini, 0);
  ASSERT_EQ(m.cone, 0);
  ASSERT_LE(m.dual, 1e-16);
  // normalizations: libfclib divides by 1 + sqrt(||q||), Siconos by max(||q||, ||r||, ||u||)
  m = metrics_of(p, NULL, g, FL_NORM_FCLIB);
  ASSERT_NEAR(m.natmap, raw / (1.0 + sqrt(nq)), 1e-15);
  m = metrics_of(p, NULL, g, FL_NORM_SICONOS);
  ASSERT_NEAR(m.natmap, raw / nq, 1e-15);

  // gamma = 0: u = q penetrates at 1 m/s; Signorini |min(0, -1)| = 1, dual (-u_n)_+ = 1;
  // y = -uhat = (1 - mu s, -0.5, -0.2) projects as above, so the residual is |P(y)| = 1/1.09 *
  // sqrt(1 + mu^2)
  double z[3] = {0, 0, 0};
  m = metrics_of(p, NULL, z, FL_NORM_NONE);
  ASSERT_NEAR(m.signorini, 1.0, 1e-15);
  ASSERT_NEAR(m.dual, 1.0, 1e-15);
  ASSERT_NEAR(m.natmap_raw, sqrt(1.09) / 1.09, 1e-15);
  fl_problem_free(p);
  return 0;
}


/* the stick case gamma = -W^-1 q and cone violations by hand */
FL_TEST(stick_and_cone) {
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example("one_contact_stick", &p));
  double g[3];
  fl_example_solution("one_contact_stick", NULL, g);
  fl_metrics m = metrics_of(p, NULL, g, FL_NORM_FCLIB);
  ASSERT_LE(m.natmap_raw, 1e-15);
  ASSERT_LE(m.dissipation, 1e-15);
  ASSERT_NEAR(m.norm_u, 0.0, 1e-15);
  ASSERT_EQ(m.cone, 0);
  // outside the cone: ||gamma_t|| - mu gamma_n = 2 - 1 = 1 (mu = 1)
  double out[3] = {1, 0, 2};
  m = metrics_of(p, NULL, out, FL_NORM_NONE);
  ASSERT_NEAR(m.cone, 1.0, 1e-15);
  // a pulling normal impulse: max((0 + 0.2), (0.2)) = 0.2
  double pull[3] = {-0.2, 0, 0};
  m = metrics_of(p, NULL, pull, FL_NORM_NONE);
  ASSERT_NEAR(m.cone, 0.2, 1e-15);
  // mu = 0.5 on the same point: ||gamma_t|| - mu gamma_n = 0.1 < 0.2
  p->mu[0] = 0.5;
  m = metrics_of(p, NULL, pull, FL_NORM_NONE);
  ASSERT_NEAR(m.cone, 0.2, 1e-15);
  fl_problem_free(p);
  return 0;
}


/* momentum residual: zero on exact solutions, raw norm by hand otherwise */
FL_TEST(momentum) {
  const char *names[] = {"box_on_plane", "box_push_slide", "two_box_stack", "pendulum_bilateral",
                         "box_on_plane_compliant"};
  double v[12], g[24];
  for (int e = 0; e < 5; e++) {
    fl_problem *p;
    ASSERT_OK(fl_problem_create_example(names[e], &p));
    fl_example_solution(names[e], v, g);
    fl_metrics m = metrics_of(p, v, g, FL_NORM_NONE);
    ASSERT_LE(m.momentum, 1e-14);
    ASSERT_LE(m.natmap_raw, 1e-15);
    fl_problem_free(p);
  }
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example("box_on_plane", &p));
  // v = 0, gamma = 0: residual D(-A v*), as large as the largest term of the balance: 1
  memset(v, 0, sizeof(v));
  memset(g, 0, sizeof(g));
  fl_metrics m = metrics_of(p, v, g, FL_NORM_NONE);
  ASSERT_NEAR(m.momentum, 1.0, 1e-15);
  // v = v* (free fall), gamma = 0: momentum exact; every corner sinks at g dt, so each contact
  // contributes |gamma - P(gamma - uhat)| = g dt: natmap = 2 g dt; the step ends 0.981 mm deep
  memcpy(v, p->vstar, 6 * sizeof(double));
  m = metrics_of(p, v, g, FL_NORM_NONE);
  ASSERT_NEAR(m.momentum, 0.0, 0);
  ASSERT_NEAR(m.natmap_raw, 2 * 9.81 * 0.01, 1e-15);
  ASSERT_NEAR(m.penetration, 9.81 * 0.01 * 0.01, 1e-17);
  ASSERT_NEAR(m.norm_q, 2 * 9.81 * 0.01, 1e-15);
  // v = 0 with twice the weight on each corner: momentum residual = m g dt / (2 m g dt) = 1/2
  memset(v, 0, sizeof(v));
  for (int i = 0; i < 4; i++) g[3 * i] = 2 * 9.81 * 0.01 / 4;
  m = metrics_of(p, v, g, FL_NORM_NONE);
  ASSERT_NEAR(m.momentum, 0.5, 1e-15);
  fl_problem_free(p);
  return 0;
}


/* compliant contact: the spring sag is a penetration, not an error */
FL_TEST(compliant) {
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example("box_on_plane_compliant", &p));
  double v[6], g[12];
  fl_example_solution("box_on_plane_compliant", v, g);
  fl_metrics m = metrics_of(p, v, g, FL_NORM_NONE);
  ASSERT_LE(m.natmap_raw, 1e-15);
  ASSERT_LE(m.signorini, 1e-15);
  ASSERT_NEAR(m.penetration, 9.81 / 4e4, 1e-18);
  // the rigid model's answer (same impulses) violates the compliant law by the spring's
  // stretch rate: uhat_n = u_n - vhat_n + R_n gamma_n = 0 - vhat + R m g dt/4 = 0 here, but
  // half the impulse leaves -R m g dt/8 = -vhat/2 in the normal velocity
  for (int i = 0; i < 4; i++) g[3 * i] *= 0.5;
  m = metrics_of(p, v, g, FL_NORM_NONE);
  double vhat = 9.81 / 4e4 / 0.02;
  ASSERT_NEAR(m.dual, vhat / 2, 1e-15);
  ASSERT_NEAR(m.natmap_raw, 2 * vhat / 2, 1e-15);
  fl_problem_free(p);
  return 0;
}


/* bilateral rows: the joint's violation, and a row sitting at an allowed bound */
FL_TEST(bilateral) {
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example("pendulum_bilateral", &p));
  double v[6], g[3] = {0, 0, 0};
  memcpy(v, p->vstar, sizeof(v));
  // free fall: the anchor moves down at g dt
  fl_metrics m = metrics_of(p, v, g, FL_NORM_NONE);
  ASSERT_NEAR(m.bilateral, 9.81 * 0.01, 1e-15);
  // an upper bound of 0 on the vertical row: the joint may not pull, so that row is satisfied
  p->hi[2] = 0.0;
  m = metrics_of(p, v, g, FL_NORM_NONE);
  ASSERT_NEAR(m.bilateral, 0.0, 0);
  // a bound violated by gamma itself: |gamma - clamp(gamma - e)| with gamma = 0.5 > hi = 0
  g[2] = 0.5;
  m = metrics_of(p, v, g, FL_NORM_NONE);
  ASSERT_NEAR(m.bilateral, 0.5, 1e-15);
  fl_problem_free(p);
  return 0;
}


/* FL_NORM_FCLIB against libfclib's own fclib_merit_local on a two-contact local problem
 * written and read back with libfclib */
FL_TEST(fclib_merit_agrees) {
#ifndef FL_HAVE_LIBFCLIB
  SKIP("libfclib not found");
#else
  // W (6 x 6) SPD with coupling between the contacts, stored compressed-column
  double Wd[36] = {3, 0.5, 0.2, 1, 0, 0.1,  0.5, 2, 0.1, 0, 0.3, 0,  0.2, 0.1, 2, 0.2, 0, 0,
                   1, 0, 0.2, 4, 0.4, 0.3,  0, 0.3, 0, 0.4, 2, 0.2,  0.1, 0, 0, 0.3, 0.2, 3};
  int colp[7], rowi[36], nz = 0;
  double xv[36];
  for (int j = 0; j < 6; j++) {
    colp[j] = nz;
    for (int i = 0; i < 6; i++) {
      if (Wd[i * 6 + j] != 0) { rowi[nz] = i; xv[nz++] = Wd[i * 6 + j]; }
    }
  }
  colp[6] = nz;
  double q[6] = {-1.0, 0.4, -0.3, 0.2, 0.1, 0.7}, mu[2] = {0.4, 0.8};
  struct fclib_matrix fW = {.nzmax = nz, .m = 6, .n = 6, .p = colp, .i = rowi, .x = xv,
                            .nz = -1, .info = NULL};
  struct fclib_local loc = {.spacedim = 3, .W = &fW, .V = NULL, .R = NULL, .mu = mu, .q = q,
                            .s = NULL, .info = NULL};
  char path[256];
  snprintf(path, sizeof(path), "test_metrics_fclib_%d.hdf5", (int)getpid());
  unlink(path);
  ASSERT(fclib_write_local(&loc, path) == 1);
  struct fclib_local *rd = fclib_read_local(path);
  ASSERT(rd != NULL);

  // the same problem as an fl_problem
  fl_problem *p;
  ASSERT_OK(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 2, 0, 0, &p));
  ASSERT_OK(fl_csr_from_csc(6, 6, colp, rowi, xv, &p->W));
  memcpy(p->q, q, sizeof(q));
  memcpy(p->mu, mu, sizeof(mu));

  double gam[4][6] = {{0, 0, 0, 0, 0, 0},
                      {0.5, -0.1, 0.2, 0.0, 0.0, 0.0},
                      {0.4, 0.3, -0.1, 0.2, 0.5, -0.6},
                      {1.3, -2.0, 0.7, -0.1, 0.2, 0.05}};
  for (int k = 0; k < 4; k++) {
    double u[6];
    fl_problem_velocity(p, NULL, gam[k], u);
    struct fclib_solution sol = {.v = NULL, .u = u, .r = gam[k], .l = NULL};
    double ref = fclib_merit_local(rd, MERIT_1, &sol);
    fl_metrics m = metrics_of(p, NULL, gam[k], FL_NORM_FCLIB);
    ASSERT(ref > 0);
    ASSERT_NEAR(m.natmap, ref, 1e-14 * ref);
  }
  fclib_delete_local(rd);
  free(rd);
  unlink(path);
  fl_problem_free(p);
  return 0;
#endif
}

FL_TEST(merit_is_one_honest_definition) {
  fl_metrics m;
  memset(&m, 0, sizeof m);
  m.natmap = 1e-9;
  m.natmap_raw = 2e-9;
  m.momentum = NAN; // a local problem: the natural map alone
  ASSERT_EQ(fl_metrics_merit(&m, NAN), 1e-9);
  m.momentum = 0.5; // a global one: momentum counts
  ASSERT_EQ(fl_metrics_merit(&m, NAN), 0.5);
  m.momentum = 1e-12;
  ASSERT_EQ(fl_metrics_merit(&m, NAN), 1e-9);
  m.natmap = NAN;
  ASSERT(isinf(fl_metrics_merit(&m, NAN)));
  m.natmap = 1e-9;
  m.momentum = INFINITY;
  ASSERT(isinf(fl_metrics_merit(&m, NAN)));
  // a raw residual grown past FL_MERIT_GROWTH_MAX times its start is never solved
  m.momentum = NAN;
  m.natmap_raw = 2e5;
  ASSERT(isinf(fl_metrics_merit(&m, 1.0)));
  ASSERT_EQ(fl_metrics_merit(&m, 100.0), 1e-9);
  return 0;
}


FL_TEST(global_guess_is_not_solved_at_iteration_0) {
  // a box resting on a plane, guess v = 0, gamma = 0: u = J v + b = 0 satisfies the natural
  // map, which once counted the guess as solved; A (v - v*) - J^T gamma = -A v* != 0 does not
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example("box_on_plane", &p));
  double *v = calloc((size_t)p->nv, sizeof *v), *g = calloc((size_t)(3 * p->nc), sizeof *g);
  fl_metrics m;
  ASSERT_OK(fl_problem_metrics(p, v, g, FL_NORM_FCLIB, &m));
  ASSERT(m.momentum > 0.5);
  ASSERT(fl_metrics_merit(&m, NAN) > 0.5);
  // the exact solution is solved by the same measure
  ASSERT_OK(fl_example_solution("box_on_plane", v, g));
  ASSERT_OK(fl_problem_metrics(p, v, g, FL_NORM_FCLIB, &m));
  ASSERT(fl_metrics_merit(&m, NAN) < 1e-12);
  free(v);
  free(g);
  fl_problem_free(p);
  return 0;
}

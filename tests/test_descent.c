// SPDX-License-Identifier: Apache-2.0
/* test_descent.c: primal descent and dual descent against finite differences and closed forms. */
#include "../solvers/fl_solver_impl.h"
#include "fl_test.h"

/* A point mass m (nv = 3) above the ground with one contact, normal +z (rows z, x, y), plus
 * optionally a bilateral row pulling along x. */
static fl_problem *point_mass(double m, double g, double dt, double phi0, double k, double tau,
                              double mu, int bilateral) {
  fl_problem *p;
  if (fl_problem_alloc(FL_PROBLEM_GLOBAL, 3, 1, bilateral ? 1 : 0, 0, &p) < 0) return NULL;
  p->dt = dt;
  fl_int ai[3] = {0, 1, 2};
  double av[3] = {m, m, m};
  fl_csr_from_triplets(3, 3, 3, ai, ai, av, &p->A);
  fl_int ji[4] = {0, 1, 2, 3}, jj[4] = {2, 0, 1, 0};
  double jv[4] = {1, 1, 1, 1};
  fl_csr_from_triplets(3 + (bilateral ? 1 : 0), 3, 3 + (bilateral ? 1 : 0), ji, jj, jv, &p->J);
  p->vstar[2] = -g * dt;
  p->phi0[0] = phi0;
  p->stiffness[0] = k;
  p->tau_d[0] = tau;
  p->mu[0] = mu;
  if (bilateral) {
    p->g0[0] = 0.01;
    p->compliance[0] = 1e-4;
  }
  if (fl_problem_find_cliques(p) < 0) {
    fl_problem_free(p);
    return NULL;
  }
  snprintf(p->name, sizeof p->name, "point_mass");
  return p;
}

static int gradient_check(fl_problem *p, const char *const *opts, const double *v,
                          const double *dir) {
  fl_solver *s;
  ASSERT_OK(fl_register_all());
  ASSERT_OK(fl_solver_create("primal-descent", &s));
  for (int k = 0; opts[k]; k += 2) ASSERT_OK(fl_solver_set_option(s, opts[k], opts[k + 1]));
  ASSERT_OK(fl_solver_setup(s, p));
  double gam[4], grad[3], gtmp[3], vp[3], vm[3];
  fl__primal_descent_eval(s, p, v, gam, grad);
  double hstep = 1e-7, dd = 0;
  for (int k = 0; k < 3; k++) {
    vp[k] = v[k] + hstep * dir[k];
    vm[k] = v[k] - hstep * dir[k];
    dd += grad[k] * dir[k];
  }
  double fp = fl__primal_descent_eval(s, p, vp, gam, gtmp);
  double fm = fl__primal_descent_eval(s, p, vm, gam, gtmp);
  double fd = (fp - fm) / (2 * hstep);
  ASSERT_NEAR(fd, dd, 1e-6 * (fabs(dd) + 1e-3));
  fl_solver_destroy(s);
  return 0;
}

FL_TEST(primal_gradient_normal_and_bilateral) {
  // frictionless: the gradient is the exact derivative of g (p = 2 and p = 3)
  fl_problem *p = point_mass(2.0, 9.81, 0.01, -1e-3, 1e5, 0.02, 0.0, 1);
  ASSERT(p != NULL);
  double v[3] = {0.3, -0.2, -0.4}, dir[3] = {0.6, -0.3, 0.8};
  const char *o2[] = {"p", "2", NULL}, *o3[] = {"p", "3", NULL};
  if (gradient_check(p, o2, v, dir)) return 1;
  if (gradient_check(p, o3, v, dir)) return 1;
  fl_problem_free(p);
  return 0;
}

FL_TEST(primal_gradient_friction) {
  // tangential directions only (J_n dir = 0), so the lagged normal impulse is constant:
  // stick (small slip) and slip (large slip), relaxed and smooth laws
  fl_problem *p = point_mass(1.0, 9.81, 0.01, -2e-3, 1e4, 0, 0.5, 0);
  ASSERT(p != NULL);
  double dir[3] = {0.8, -0.6, 0};
  double vstick[3] = {1e-5, 2e-5, -0.1}, vslip[3] = {0.5, 0.2, -0.1};
  const char *relaxed[] = {"k_f", "1e4", NULL}, *smooth[] = {"k_f", "1e4", "friction", "smooth", NULL};
  if (gradient_check(p, relaxed, vstick, dir)) return 1;
  if (gradient_check(p, relaxed, vslip, dir)) return 1;
  if (gradient_check(p, smooth, vstick, dir)) return 1;
  if (gradient_check(p, smooth, vslip, dir)) return 1;
  fl_problem_free(p);
  return 0;
}

FL_TEST(primal_penalty_sink_depth) {
  // rigid contact under the penalty k_n. From rest at phi0 = 0 one step sinks by
  // m g dt^2 / (m + dt^2 k_n) (momentum balance m (v + g dt) = dt k_n (-dt v)); at the resting
  // depth phi0 = -m g / k_n the body stays put (v = 0, gamma_n = m g dt).
  double m = 3.0, g = 9.81, dt = 0.01, kn = 1e6;
  double phis[2] = {0, -m * g / kn};
  for (int c = 0; c < 2; c++) {
    fl_problem *p = point_mass(m, g, dt, phis[c], INFINITY, 0, 0.5, 0);
    fl_solver *s;
    ASSERT_OK(fl_register_all());
    ASSERT_OK(fl_solver_create("primal-descent", &s));
    ASSERT_OK(fl_solver_set_option(s, "k_n", "1e6"));
    ASSERT_OK(fl_solver_set_option(s, "max_iter", "2000"));
    ASSERT_OK(fl_solver_set_option(s, "never_stop", "false"));
    ASSERT_OK(fl_solver_set_option(s, "abs_tol", "1e-13"));
    ASSERT_OK(fl_solver_setup(s, p));
    double v[3], gam[3];
    fl_result res;
    ASSERT_OK(fl_solver_solve(s, p, v, gam, &res));
    ASSERT(res.reason > 0);
    if (c == 0) {
      double depth = -(p->phi0[0] + dt * v[2]), want = m * g * dt * dt / (m + dt * dt * kn);
      ASSERT_NEAR(depth, want, 1e-10 * want);
      ASSERT_NEAR(gam[0], m * (v[2] + g * dt), 1e-12);
    } else {
      ASSERT_NEAR(v[2], 0, 1e-12);
      ASSERT_NEAR(gam[0], m * g * dt, 1e-12);
    }
    // the objective decreases monotonically on this convex problem
    int n;
    const fl_iter_stat *h = fl_solver_history(s, &n);
    for (int k = 1; k < n; k++) ASSERT_LE(h[k].objective, h[k - 1].objective + 1e-15);
    fl_solver_destroy(s);
    fl_problem_free(p);
  }
  return 0;
}

FL_TEST(primal_compliant_rest_is_exact) {
  // a compliant contact already at its rest depth m g / k stays there: v = 0
  double m = 1.5, g = 9.81, dt = 0.005, k = 2e4;
  fl_problem *p = point_mass(m, g, dt, -m * g / k, k, 0.01, 0.3, 0);
  fl_solver *s;
  ASSERT_OK(fl_register_all());
  ASSERT_OK(fl_solver_create("primal-descent", &s));
  ASSERT_OK(fl_solver_set_option(s, "max_iter", "500"));
  ASSERT_OK(fl_solver_set_option(s, "never_stop", "false"));
  ASSERT_OK(fl_solver_set_option(s, "abs_tol", "1e-12"));
  ASSERT_OK(fl_solver_setup(s, p));
  double v[3], gam[3];
  fl_result res;
  ASSERT_OK(fl_solver_solve(s, p, v, gam, &res));
  ASSERT(res.reason > 0);
  ASSERT_NEAR(v[2], 0, 1e-10);
  ASSERT_NEAR(gam[0], m * g * dt, 1e-10);
  // the common model's natural map agrees: p = 2 is exactly the compliant law
  ASSERT_LE(fl_solver_final_metrics(s)->natmap_raw, 1e-9);
  fl_solver_destroy(s);
  fl_problem_free(p);
  return 0;
}

FL_TEST(dual_one_contact_slide_local) {
  // W = I, q = (-1, 0.5, 0.2), mu = 0.3: gamma = (1, -0.278543, -0.111417)
  fl_problem *p;
  ASSERT_OK(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 1, 0, 0, &p));
  fl_int ii[3] = {0, 1, 2};
  double one[3] = {1, 1, 1};
  ASSERT_OK(fl_csr_from_triplets(3, 3, 3, ii, ii, one, &p->W));
  p->q[0] = -1;
  p->q[1] = 0.5;
  p->q[2] = 0.2;
  p->mu[0] = 0.3;
  fl_solver *s;
  ASSERT_OK(fl_register_all());
  ASSERT_OK(fl_solver_create("dual-descent", &s));
  ASSERT_OK(fl_solver_set_option(s, "never_stop", "false"));
  ASSERT_OK(fl_solver_set_option(s, "abs_tol", "1e-12"));
  ASSERT_OK(fl_solver_setup(s, p));
  double gam[3];
  fl_result res;
  ASSERT_OK(fl_solver_solve(s, p, NULL, gam, &res));
  ASSERT(res.reason > 0);
  double nt = hypot(0.5, 0.2);
  ASSERT_NEAR(gam[0], 1, 1e-12);
  ASSERT_NEAR(gam[1], -0.3 * 0.5 / nt, 1e-12);
  ASSERT_NEAR(gam[2], -0.3 * 0.2 / nt, 1e-12);
  ASSERT_NEAR(gam[1], -0.278543, 1e-6);
  fl_solver_destroy(s);
  fl_problem_free(p);
  return 0;
}

FL_TEST(dual_compliant_and_rigid_rest) {
  // dual descent holds a resting mass with gamma_n = m g dt, rigid and compliant;
  // the absolute and incremental primal updates agree on this linear problem
  double m = 2.0, g = 9.81, dt = 0.01;
  double ks[2] = {INFINITY, 1e5};
  for (int c = 0; c < 2; c++) {
    double phi0 = isinf(ks[c]) ? 0 : -m * g / ks[c];
    fl_problem *p = point_mass(m, g, dt, phi0, ks[c], 0, 0.5, 0);
    double vs[2][3];
    for (int upd = 0; upd < 2; upd++) {
      fl_solver *s;
      ASSERT_OK(fl_register_all());
      ASSERT_OK(fl_solver_create("dual-descent", &s));
      ASSERT_OK(fl_solver_set_option(s, "max_iter", "200"));
      ASSERT_OK(fl_solver_set_option(s, "update", upd ? "incremental" : "absolute"));
      ASSERT_OK(fl_solver_setup(s, p));
      double gam[3];
      fl_result res;
      ASSERT_OK(fl_solver_solve(s, p, vs[upd], gam, &res));
      ASSERT_EQ(res.reason, FL_STOPPED_ITS);
      ASSERT_NEAR(gam[0], m * g * dt, 1e-10);
      ASSERT_NEAR(vs[upd][2], 0, 1e-10);
      fl_solver_destroy(s);
    }
    for (int k = 0; k < 3; k++) ASSERT_NEAR(vs[0][k], vs[1][k], 1e-14);
    fl_problem_free(p);
  }
  return 0;
}

FL_TEST(descent_rejects_bad_options) {
  fl_solver *s;
  ASSERT_OK(fl_register_all());
  ASSERT_OK(fl_solver_create("primal-descent", &s));
  ASSERT_EQ(fl_solver_set_option(s, "p", "1"), FL_ERR_OPTION_RANGE);
  ASSERT_EQ(fl_solver_set_option(s, "friction", "sticky"), FL_ERR_OPTION_RANGE);
  ASSERT_STR_CONTAINS(fl_errmsg(), "relaxed|smooth");
  ASSERT_OK(fl_solver_set_option(s, "primal-descent.alpha", "0.25"));
  fl_solver_destroy(s);
  ASSERT_OK(fl_solver_create("dual-descent", &s));
  ASSERT_EQ(fl_solver_set_option(s, "alpha", "-1"), FL_ERR_OPTION_RANGE);
  fl_solver_destroy(s);
  return 0;
}

FL_TEST(dual_divergence_is_a_negative_reason_and_never_solved) {
  // two contacts whose normals are coupled (W_12 = -0.99) with step 1.5: Jacobi's iteration
  // matrix has an eigenvalue 1 - 1.5 x 1.99 = -1.99, so dual descent diverges. Under the
  // siconos normalization raw/max(||q||, ||gamma||, ||u||) the blow-up once looked solved.
  fl_problem *p;
  ASSERT_OK(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 2, 0, 0, &p));
  fl_int ii[8] = {0, 1, 2, 3, 4, 5, 0, 3}, jj[8] = {0, 1, 2, 3, 4, 5, 3, 0};
  double vv[8] = {1, 1, 1, 1, 1, 1, -0.99, -0.99};
  ASSERT_OK(fl_csr_from_triplets(6, 6, 8, ii, jj, vv, &p->W));
  p->q[0] = -1;
  p->q[3] = -0.5;
  p->mu[0] = p->mu[1] = 0.5;
  fl_solver *s;
  ASSERT_OK(fl_register_all());
  ASSERT_OK(fl_solver_create("dual-descent", &s));
  ASSERT_OK(fl_solver_set_options(s, "alpha=1.5,max_iter=200,norm=siconos"));
  ASSERT_OK(fl_solver_setup(s, p));
  double gam[6];
  fl_result res;
  ASSERT_OK(fl_solver_solve(s, p, NULL, gam, &res));
  ASSERT_EQ(res.reason, FL_DIVERGED_GROWTH);
  ASSERT(res.iters < 200);
  int nh = 0;
  const fl_iter_stat *h = fl_solver_history(s, &nh);
  // the answer is the finite iterate of least residual (recorded last), and the common merit
  // does not call it solved
  ASSERT(nh > 1 && isfinite(h[nh - 1].merit) && h[nh - 1].merit > 1e-8);
  for (int k = 0; k < 6; k++) ASSERT(isfinite(gam[k]));
  fl_solver_destroy(s);
  fl_problem_free(p);
  return 0;
}

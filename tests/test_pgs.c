// SPDX-License-Identifier: Apache-2.0
/* test_pgs.c: PGS and Jacobi on hand-made problems with closed-form answers, and on the FCLIB
 * files beside the project (honest stalls allowed there: a negative reason with a finite
 * residual). Problems are built here with fl_problem_alloc so that each answer is derived
 * next to its data. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fl_contact_ops.h"
#include "fl_test.h"
#include "problems/fl_problem.h"
#include "solvers/fl_solver.h"

#define G 9.81


//---- problem builders ----

/* one local contact with a 3x3 W (row-major) */
static int local1(const double W[9], const double q[3], double mu, fl_problem **out) {
  fl_int ti[9], tj[9];
  double tv[9];
  int nt = 0;
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      if (W[3 * a + b] != 0) {
        ti[nt] = a;
        tj[nt] = b;
        tv[nt++] = W[3 * a + b];
      }
  fl_problem *p;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 1, 0, 0, &p));
  snprintf(p->name, sizeof p->name, "local1");
  int rc = fl_csr_from_triplets(3, 3, nt, ti, tj, tv, &p->W);
  memcpy(p->q, q, 3 * sizeof(double));
  p->mu[0] = mu;
  *out = p;
  return rc;
}


/* row [d^T, (r x d)^T] of a point at r from the centre of a rigid body (6 dofs) */
static void body_row(fl_int row, const double r[3], const double d[3], fl_int *ti, fl_int *tj,
                     double *tv, int *nt) {
  double rxd[3] = {r[1] * d[2] - r[2] * d[1], r[2] * d[0] - r[0] * d[2],
                   r[0] * d[1] - r[1] * d[0]};
  for (int c = 0; c < 3; c++) {
    ti[*nt] = row, tj[*nt] = c, tv[(*nt)++] = d[c];
    ti[*nt] = row, tj[*nt] = 3 + c, tv[(*nt)++] = rxd[c];
  }
}


/* a rigid box (mass m, half sizes a, a, h) on the ground with four corner contacts, frames
 * (e_z, e_x, e_y), dt 0.01, initial velocity vx along x; rigid unless k is finite */
static int box(double m, double vx, double mu, double k, double tau, fl_problem **out) {
  const double a = 0.5, h = 0.1, dt = 0.01;
  fl_problem *p;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_GLOBAL, 6, 4, 0, 0, &p));
  snprintf(p->name, sizeof p->name, "box");
  p->dt = dt;
  fl_int ai[6], aj[6], ti[72], tj[72];
  double av[6], tv[72];
  double I[3] = {m / 3 * (a * a + h * h), m / 3 * (a * a + h * h), m / 3 * (2 * a * a)};
  for (int k2 = 0; k2 < 6; k2++) {
    ai[k2] = aj[k2] = k2;
    av[k2] = k2 < 3 ? m : I[k2 - 3];
    p->v0[k2] = p->vstar[k2] = 0;
  }
  p->v0[0] = p->vstar[0] = vx;
  p->vstar[2] = -G * dt;
  static const double fr[3][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
  int nt = 0;
  for (int i = 0; i < 4; i++) {
    double r[3] = {i < 2 ? a : -a, i % 2 ? a : -a, -h};
    for (int c = 0; c < 3; c++) body_row(3 * i + c, r, fr[c], ti, tj, tv, &nt);
    p->mu[i] = mu;
    p->stiffness[i] = k;
    p->tau_d[i] = tau;
  }
  int rc = fl_csr_from_triplets(6, 6, 6, ai, aj, av, &p->A);
  if (!rc) rc = fl_csr_from_triplets(12, 6, nt, ti, tj, tv, &p->J);
  if (!rc) rc = fl_problem_find_cliques(p);
  *out = p;
  return rc;
}


/* a point mass m (3 dofs) with one contact below it (frame e_z, e_x, e_y) and nh pendulum
 * rows; with nh = 1 and nc = 0 the mass hangs at (0, 0, -L) from a rod: row u_h = -v_z */
static int particle(double m, fl_int nc, fl_int nh, fl_problem **out) {
  fl_problem *p;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_GLOBAL, 3, nc, nh, 0, &p));
  snprintf(p->name, sizeof p->name, "particle");
  p->dt = 0.01;
  fl_int ai[3] = {0, 1, 2}, ti[4], tj[4];
  double av[3] = {m, m, m}, tv[4];
  int nt = 0;
  if (nc) {
    ti[nt] = 0, tj[nt] = 2, tv[nt++] = 1.0;
    ti[nt] = 1, tj[nt] = 0, tv[nt++] = 1.0;
    ti[nt] = 2, tj[nt] = 1, tv[nt++] = 1.0;
    p->mu[0] = 0.5;
  }
  if (nh) ti[nt] = 3 * nc, tj[nt] = 2, tv[nt++] = -1.0;
  for (int k = 0; k < 3; k++) p->v0[k] = p->vstar[k] = 0;
  p->vstar[2] = -G * p->dt;
  int rc = fl_csr_from_triplets(3, 3, 3, ai, ai, av, &p->A);
  if (!rc) rc = fl_csr_from_triplets(3 * nc + nh, 3, nt, ti, tj, tv, &p->J);
  if (!rc) rc = fl_problem_find_cliques(p);
  *out = p;
  return rc;
}


//---- running ----

/* solves with "key=value" options (NULL-terminated); v, gamma sized by the caller */
static int run(const char *name, const fl_problem *p, const char *const *opts, double *v,
               double *gamma, fl_result *res) {
  fl_solver *s;
  fl_register_all();
  FL_TRY(fl_solver_create(name, &s));
  for (int k = 0; opts && opts[k]; k++) {
    char key[64];
    const char *eq = strchr(opts[k], '=');
    snprintf(key, sizeof key, "%.*s", (int)(eq - opts[k]), opts[k]);
    int rc = fl_solver_set_option(s, key, eq + 1);
    if (rc) {
      fl_solver_destroy(s);
      return rc;
    }
  }
  int rc = fl_solver_setup(s, p);
  if (!rc) rc = fl_solver_solve(s, p, v, gamma, res);
  fl_solver_destroy(s);
  return rc;
}

static const char *const solvers[] = {"pgs", "jacobi"};
/* the configurations every small problem is run with */
static const char *const *configs[] = {
  (const char *const[]){"max_iter=20000", "norm=none", "abs_tol=1e-10", NULL},
  (const char *const[]){"max_iter=20000", "norm=none", "abs_tol=1e-10", "local=block", NULL},
  (const char *const[]){"max_iter=20000", "norm=none", "abs_tol=1e-10", "omega=0.8", NULL},
};
#define NCONFIG 3


//---- local problems ----

FL_TEST(slide_one_contact) {
  // W = I, q = (-1, 0.5, 0.2), mu = 0.3: gamma_n = 1, gamma_t = -mu q_t/||q_t||
  const double W[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, q[3] = {-1, 0.5, 0.2};
  fl_problem *p;
  ASSERT_OK(local1(W, q, 0.3, &p));
  for (int sv = 0; sv < 2; sv++)
    for (int c = 0; c < NCONFIG; c++) {
      double g[3];
      fl_result res;
      ASSERT_OK(run(solvers[sv], p, configs[c], NULL, g, &res));
      ASSERT(res.reason > 0);
      ASSERT_LE(res.error, 1e-10);
      ASSERT_NEAR(g[0], 1.0, 1e-8);
      ASSERT_NEAR(g[1], -0.278543, 1e-6);
      ASSERT_NEAR(g[2], -0.111417, 1e-6);
      ASSERT_NEAR(g[1], -0.3 * 0.5 / sqrt(0.29), 1e-9);
    }
  fl_problem_free(p);
  return 0;
}


FL_TEST(stick_one_contact) {
  // anisotropic SPD W, stick: u = 0, gamma = -W^-1 q = (43/35, -32/35, -1/10), inside the cone
  const double W[9] = {2, 0.5, 0, 0.5, 1, 0, 0, 0, 1}, q[3] = {-2, 0.3, 0.1};
  fl_problem *p;
  ASSERT_OK(local1(W, q, 1.0, &p));
  for (int sv = 0; sv < 2; sv++)
    for (int c = 0; c < NCONFIG; c++) {
      double g[3];
      fl_result res;
      ASSERT_OK(run(solvers[sv], p, configs[c], NULL, g, &res));
      ASSERT(res.reason > 0);
      ASSERT_NEAR(g[0], 43.0 / 35.0, 1e-8);
      ASSERT_NEAR(g[1], -32.0 / 35.0, 1e-8);
      ASSERT_NEAR(g[2], -0.1, 1e-8);
    }
  fl_problem_free(p);
  return 0;
}


FL_TEST(slide_anisotropic) {
  // sliding with an anisotropic W_tt: the scalar tangential step keeps the right fixed point.
  // Check Coulomb's law on the answer: u_n = 0, ||gamma_t|| = mu gamma_n, u_t = -l gamma_t.
  const double W[9] = {2, 0.3, 0.1, 0.3, 1, 0.2, 0.1, 0.2, 3}, q[3] = {-1, 0.8, -0.6};
  fl_problem *p;
  ASSERT_OK(local1(W, q, 0.2, &p));
  for (int sv = 0; sv < 2; sv++)
    for (int c = 0; c < NCONFIG; c++) {
      double g[3], u[3];
      fl_result res;
      ASSERT_OK(run(solvers[sv], p, configs[c], NULL, g, &res));
      ASSERT(res.reason > 0);
      fl_problem_velocity(p, NULL, g, u);
      ASSERT_NEAR(u[0], 0.0, 1e-9);
      ASSERT_NEAR(hypot(g[1], g[2]), 0.2 * g[0], 1e-9);
      // u_t anti-parallel to gamma_t: cross product zero, dot product negative
      ASSERT_NEAR(u[1] * g[2] - u[2] * g[1], 0.0, 1e-9);
      ASSERT(u[1] * g[1] + u[2] * g[2] < 0);
    }
  fl_problem_free(p);
  return 0;
}


FL_TEST(separating_contact) {
  // q_n > 0: the contact opens, gamma = 0 is exact at the guess (0 iterations)
  const double W[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, q[3] = {1, 0.5, 0.2};
  fl_problem *p;
  ASSERT_OK(local1(W, q, 0.3, &p));
  double g[3] = {5, 5, 5};
  fl_result res;
  ASSERT_OK(run("pgs", p, NULL, NULL, g, &res));
  ASSERT_EQ(res.reason, FL_CONVERGED_EXACT);
  ASSERT_EQ(res.iters, 0);
  ASSERT_EQ(g[0], 0.0);
  ASSERT_EQ(g[1], 0.0);
  fl_problem_free(p);
  return 0;
}


//---- rigid box on a plane ----

FL_TEST(box_resting) {
  // at rest: v = 0 and the normal impulses carry the weight, sum = m g dt; no net friction
  // (sticking corners may hold self-equilibrated tangential impulses: statically indeterminate)
  const double m = 2.0;
  fl_problem *p;
  ASSERT_OK(box(m, 0.0, 0.5, INFINITY, 0.0, &p));
  for (int sv = 0; sv < 2; sv++)
    for (int c = 0; c < NCONFIG; c++) {
      double v[6], g[12];
      fl_result res;
      ASSERT_OK(run(solvers[sv], p, configs[c], v, g, &res));
      ASSERT(res.reason > 0);
      double sn = 0, s1 = 0, s2 = 0;
      for (int i = 0; i < 4; i++) {
        sn += g[3 * i];
        s1 += g[3 * i + 1];
        s2 += g[3 * i + 2];
        ASSERT(g[3 * i] >= 0);
        ASSERT_LE(hypot(g[3 * i + 1], g[3 * i + 2]), 0.5 * g[3 * i] * (1 + 1e-9) + 1e-15);
      }
      ASSERT_NEAR(sn, m * G * 0.01, 1e-9);
      ASSERT_NEAR(s1, 0.0, 1e-9);
      ASSERT_NEAR(s2, 0.0, 1e-9);
      for (int k = 0; k < 6; k++) ASSERT_NEAR(v[k], 0.0, 1e-9);
    }
  fl_problem_free(p);
  return 0;
}


FL_TEST(box_sliding) {
  // v0 = 1 m/s along x, mu = 0.5: the box slides (mu m g dt < m v0) without tipping (mu h < a):
  // v_x = v0 - mu g dt, v_y = v_z = w = 0, friction sums to -mu m g dt along x
  const double m = 2.0, mu = 0.5, dt = 0.01;
  fl_problem *p;
  ASSERT_OK(box(m, 1.0, mu, INFINITY, 0.0, &p));
  for (int sv = 0; sv < 2; sv++)
    for (int c = 0; c < NCONFIG; c++) {
      double v[6], g[12];
      fl_result res;
      ASSERT_OK(run(solvers[sv], p, configs[c], v, g, &res));
      ASSERT(res.reason > 0);
      double sn = 0, s1 = 0, s2 = 0;
      for (int i = 0; i < 4; i++) sn += g[3 * i], s1 += g[3 * i + 1], s2 += g[3 * i + 2];
      ASSERT_NEAR(sn, m * G * dt, 1e-9);
      ASSERT_NEAR(s1, -mu * m * G * dt, 1e-9);
      ASSERT_NEAR(s2, 0.0, 1e-9);
      ASSERT_NEAR(v[0], 1.0 - mu * G * dt, 1e-9);
      for (int k = 1; k < 6; k++) ASSERT_NEAR(v[k], 0.0, 1e-9);
    }
  fl_problem_free(p);
  return 0;
}


FL_TEST(own_residual_is_natmap) {
  // the own residual of the returned iterate equals the common natural-map residual
  // (norm none and fclib) on a problem without bilateral rows, at every budget
  fl_problem *p;
  ASSERT_OK(fl_register_all());
  ASSERT_OK(box(2.0, 1.0, 0.5, INFINITY, 0.0, &p));
  const char *norms[2] = {"norm=none", "norm=fclib"};
  for (int sv = 0; sv < 2; sv++)
    for (int nk = 0; nk < 2; nk++)
      for (int it = 0; it < 4; it++) {
        char mi[32];
        snprintf(mi, sizeof mi, "max_iter=%d", it);
        const char *opts[] = {mi, norms[nk], "abs_tol=0", NULL};
        fl_solver *s;
        ASSERT_OK(fl_solver_create(solvers[sv], &s));
        for (int k = 0; opts[k]; k++) {
          char key[32];
          const char *eq = strchr(opts[k], '=');
          snprintf(key, sizeof key, "%.*s", (int)(eq - opts[k]), opts[k]);
          ASSERT_OK(fl_solver_set_option(s, key, eq + 1));
        }
        double v[6], g[12];
        fl_result res;
        ASSERT_OK(fl_solver_setup(s, p));
        ASSERT_OK(fl_solver_solve(s, p, v, g, &res));
        fl_metrics m;
        ASSERT_OK(fl_problem_metrics(p, v, g, nk ? FL_NORM_FCLIB : FL_NORM_NONE, &m));
        ASSERT_NEAR(res.error, m.natmap, 1e-12 * (1 + m.natmap));
        const fl_metrics *fm = fl_solver_final_metrics(s);
        ASSERT(fm != NULL);
        ASSERT_NEAR(fm->natmap, m.natmap, 1e-15);
        fl_solver_destroy(s);
      }
  fl_problem_free(p);
  return 0;
}


FL_TEST(orderings) {
  // every ordering converges to the same physics; the shuffle is reproducible by seed
  fl_problem *p;
  ASSERT_OK(box(2.0, 1.0, 0.5, INFINITY, 0.0, &p));
  const char *orders[] = {"order=natural", "order=reverse", "order=symmetric", "order=shuffle"};
  for (int o = 0; o < 4; o++) {
    const char *opts[] = {orders[o], "norm=none", "abs_tol=1e-10", "max_iter=5000", NULL};
    double v[6], g[12];
    fl_result res;
    ASSERT_OK(run("pgs", p, opts, v, g, &res));
    ASSERT(res.reason > 0);
    ASSERT_NEAR(v[0], 1.0 - 0.5 * G * 0.01, 1e-9);
  }
  double g1[12], g2[12], v[6];
  fl_result r1, r2;
  const char *sh[] = {"order=shuffle", "seed=7", "max_iter=3", "never_stop=1", NULL};
  ASSERT_OK(run("pgs", p, sh, v, g1, &r1));
  ASSERT_OK(run("pgs", p, sh, v, g2, &r2));
  ASSERT_EQ(r1.reason, FL_STOPPED_ITS);
  for (int k = 0; k < 12; k++) ASSERT_EQ(g1[k], g2[k]);
  fl_problem_free(p);
  return 0;
}


FL_TEST(warm_start_exact) {
  // restarting from a converged answer is exact at iteration 0
  fl_problem *p;
  ASSERT_OK(box(2.0, 1.0, 0.5, INFINITY, 0.0, &p));
  double v[6], g[12];
  fl_result res;
  const char *o1[] = {"norm=none", "abs_tol=1e-12", "max_iter=5000", NULL};
  ASSERT_OK(run("pgs", p, o1, v, g, &res));
  ASSERT(res.reason > 0);
  const char *o2[] = {"norm=none", "abs_tol=1e-11", "warm_start=1", NULL};
  ASSERT_OK(run("pgs", p, o2, v, g, &res));
  ASSERT_EQ(res.reason, FL_CONVERGED_EXACT);
  ASSERT_EQ(res.iters, 0);
  fl_problem_free(p);
  return 0;
}


FL_TEST(jacobi_mass_splitting) {
  // four contacts share the box's clique: the default relaxation is 1/4
  fl_problem *p;
  ASSERT_OK(box(2.0, 0.0, 0.5, INFINITY, 0.0, &p));
  fl_solver *s;
  fl_register_all();
  ASSERT_OK(fl_solver_create("jacobi", &s));
  ASSERT_OK(fl_solver_setup(s, p));
  char buf[4096] = "";
  FILE *f = fmemopen(buf, sizeof buf - 1, "w");
  fl_solver_view(s, f);
  fclose(f);
  ASSERT_STR_CONTAINS(buf, "omega = 0.25 (most constraints per clique 4)");
  double v[6], g[12];
  fl_result res;
  ASSERT_OK(fl_solver_solve(s, p, v, g, &res));
  const fl_iter_stat *h = fl_solver_history(s, NULL);
  ASSERT_NEAR(h[1].step, 0.25, 0);
  fl_solver_destroy(s);
  fl_problem_free(p);
  return 0;
}


//---- compliant contact ----

FL_TEST(compliant_sinks_to_mg_over_k) {
  // a particle on a spring-damper contact (k = 1e4 N/m, tau_d = 0.05 s) stepped 300 times
  // from phi = 0 at rest: it settles at phi = -m g / k with gamma_n = m g dt
  const double m = 1.0, k = 1e4, dt = 0.01;
  fl_problem *p;
  ASSERT_OK(particle(m, 1, 0, &p));
  p->stiffness[0] = k;
  p->tau_d[0] = 0.05;
  for (int sv = 0; sv < 2; sv++) {
    double phi = 0, vz = 0, v[3], g[3];
    for (int step = 0; step < 300; step++) {
      p->phi0[0] = phi;
      p->v0[2] = vz;
      p->vstar[2] = vz - G * dt;
      fl_result res;
      const char *opts[] = {"norm=none", "abs_tol=1e-14", "max_iter=1000", NULL};
      ASSERT_OK(run(solvers[sv], p, opts, v, g, &res));
      ASSERT(res.reason > 0);
      vz = v[2];
      phi += dt * vz;
    }
    ASSERT_NEAR(phi, -m * G / k, 1e-12);
    ASSERT_NEAR(g[0], m * G * dt, 1e-12);
  }
  fl_problem_free(p);
  return 0;
}


//---- bilateral rows ----

FL_TEST(pendulum_row) {
  // a mass hanging from a rod, row u_h = -v_z, one step from rest:
  // hard: v_z = 0, gamma = -m g dt; compliance c: gamma = -m g dt / (1 + m c);
  // bounded below by -m g dt / 2: gamma = lo and v_z = -g dt / 2; error g0: v_z = g0/dt
  const double m = 2.0, dt = 0.01;
  fl_problem *p;
  ASSERT_OK(particle(m, 0, 1, &p));
  const char *opts[] = {"norm=none", "abs_tol=1e-13", "max_iter=100", NULL};
  for (int sv = 0; sv < 2; sv++) {
    double v[3], g[1];
    fl_result res;
    p->compliance[0] = 0;
    ASSERT_OK(run(solvers[sv], p, opts, v, g, &res));
    ASSERT(res.reason > 0);
    ASSERT_NEAR(g[0], -m * G * dt, 1e-12);
    ASSERT_NEAR(v[2], 0.0, 1e-12);

    p->compliance[0] = 0.3;
    ASSERT_OK(run(solvers[sv], p, opts, v, g, &res));
    ASSERT_NEAR(g[0], -m * G * dt / (1 + m * 0.3), 1e-12);

    p->compliance[0] = 0;
    p->lo[0] = -0.5 * m * G * dt;
    ASSERT_OK(run(solvers[sv], p, opts, v, g, &res));
    ASSERT(res.reason > 0);
    ASSERT_NEAR(g[0], -0.5 * m * G * dt, 1e-12);
    ASSERT_NEAR(v[2], -0.5 * G * dt, 1e-12);
    p->lo[0] = -INFINITY;

    p->g0[0] = 1e-3;
    ASSERT_OK(run(solvers[sv], p, opts, v, g, &res));
    ASSERT_NEAR(v[2], 1e-3 / dt, 1e-12);
    ASSERT_NEAR(g[0], -m * (1e-3 / dt + G * dt), 1e-12);
    p->g0[0] = 0;
  }
  fl_problem_free(p);
  return 0;
}


//---- FCLIB files ----

/* runs one solver on every FCLIB file of the shared folder; converged or an honest stall */
static int fclib_all(const char *solver, int max_iter) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/fclib", fl_test_shared_dir());
  DIR *dd = opendir(dir);
  if (!dd) SKIP("no folder %s", dir);
  struct dirent *e;
  int nrun = 0;
  while ((e = readdir(dd))) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 5, ".hdf5") != 0) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    fl_problem *p;
    if (fl_problem_load_fclib(path, &p) != FL_OK) {
      // files the reader declines (e.g. rolling friction) are its tests' business
      printf("%-48s not loaded: %s\n", e->d_name, fl_errmsg());
      continue;
    }
    double *v = calloc((size_t)p->nv + 1, sizeof *v);
    double *g = calloc((size_t)fl_problem_nrows(p) + 1, sizeof *g);
    char mi[32];
    snprintf(mi, sizeof mi, "max_iter=%d", max_iter);
    const char *opts[] = {mi, "error_every=0", NULL};
    fl_result res;
    int rc = run(solver, p, opts, v, g, &res);
    if (rc) {
      fprintf(stderr, "%s on %s: %s\n", solver, path, fl_errmsg());
      closedir(dd);
      return 1;
    }
    printf("%-48s %-7s nc %5d  iters %5d  error %.3e  %s  %.3f s\n", e->d_name, solver,
           (int)p->nc, res.iters, res.error, fl_reason_name(res.reason), res.solve_s);
    // converged below the tolerance, or an honest negative reason with a finite residual
    if (res.reason > 0) ASSERT_LE(res.error, 1e-8);
    else ASSERT(res.reason < 0 && isfinite(res.error) && res.error > 1e-8);
    nrun++;
    free(v);
    free(g);
    fl_problem_free(p);
  }
  closedir(dd);
  if (nrun == 0) SKIP("no FCLIB file loaded from %s", dir);
  return 0;
}


FL_TEST(fclib_pgs) { return fclib_all("pgs", 300); }
FL_TEST(fclib_jacobi) { return fclib_all("jacobi", 300); }


//---- memory ----

/* a monitor that forbids allocation from iteration 1 to the last one (N) */
static int forbid_alloc(const fl_solver *s, const fl_iter_stat *st, void *ctx) {
  int last = *(int *)ctx;
  fl_alloc_fail_after(st->iter == last ? -1 : 0);
  return 0;
}


FL_TEST(no_allocation_in_the_loop) {
  // every allocation between the first and the last record fails: the sweeps, the residual
  // and the spine's recording (error_every = 0) must not need any
  fl_problem *pg, *pl;
  const double W[9] = {2, 0.3, 0.1, 0.3, 1, 0.2, 0.1, 0.2, 3}, q[3] = {-1, 0.8, -0.6};
  ASSERT_OK(box(2.0, 1.0, 0.5, INFINITY, 0.0, &pg));
  ASSERT_OK(local1(W, q, 0.2, &pl));
  ASSERT_OK(fl_register_all());
  int last = 300;
  for (int sv = 0; sv < 2; sv++)
    for (int k = 0; k < 2; k++) {
      fl_problem *p = k ? pl : pg;
      fl_solver *s;
      ASSERT_OK(fl_solver_create(solvers[sv], &s));
      ASSERT_OK(fl_solver_set_option(s, "max_iter", "300"));
      ASSERT_OK(fl_solver_set_option(s, "never_stop", "1"));
      ASSERT_OK(fl_solver_set_option(s, "error_every", "0"));
      if (sv == 0) ASSERT_OK(fl_solver_set_option(s, "order", "shuffle"));
      ASSERT_OK(fl_solver_monitor_add(s, forbid_alloc, &last, NULL));
      ASSERT_OK(fl_solver_setup(s, p));
      double v[6], g[12];
      fl_result res;
      int rc = fl_solver_solve(s, p, v, g, &res);
      fl_alloc_fail_after(-1);
      ASSERT_OK(rc);
      ASSERT_EQ(res.reason, FL_STOPPED_ITS);
      ASSERT_LE(res.error, 1e-8);
      fl_solver_destroy(s);
    }
  fl_problem_free(pg);
  fl_problem_free(pl);
  return 0;
}


//---- the built-in examples against their closed forms ----

FL_TEST(examples_closed_form) {
  // v is unique, hence so is the net impulse J^T gamma = A (v - v*); local examples have a
  // unique gamma (W SPD)
  const char *const *names = fl_examples_list();
  for (int e = 0; names[e]; e++) {
    fl_problem *p;
    ASSERT_OK(fl_problem_create_example(names[e], &p));
    fl_int nrow = fl_problem_nrows(p), nv = p->nv;
    double *v = calloc((size_t)nv + 1, sizeof *v), *g = calloc((size_t)nrow + 1, sizeof *g);
    double *ve = calloc((size_t)nv + 1, sizeof *ve), *ge = calloc((size_t)nrow + 1, sizeof *ge);
    double *jg = calloc((size_t)nv + 1, sizeof *jg), *jge = calloc((size_t)nv + 1, sizeof *jge);
    ASSERT_OK(fl_example_solution(names[e], ve, ge));
    for (int sv = 0; sv < 2; sv++) {
      fl_result res;
      const char *opts[] = {"norm=none", "abs_tol=1e-12", "max_iter=50000", NULL};
      ASSERT_OK(run(solvers[sv], p, opts, v, g, &res));
      if (!(res.reason > 0))
        FL_FAIL_("%s on %s: %s, error %g", solvers[sv], names[e], fl_reason_name(res.reason),
                 res.error);
      if (p->kind == FL_PROBLEM_LOCAL) {
        for (fl_int k = 0; k < nrow; k++) ASSERT_NEAR(g[k], ge[k], 1e-9);
        continue;
      }
      fl_csr_gemtv(p->J, 1.0, g, 0.0, jg);
      fl_csr_gemtv(p->J, 1.0, ge, 0.0, jge);
      for (fl_int k = 0; k < nv; k++) {
        ASSERT_NEAR(v[k], ve[k], 1e-9);
        ASSERT_NEAR(jg[k], jge[k], 1e-9);
      }
    }
    free(v), free(g), free(ve), free(ge), free(jg), free(jge);
    fl_problem_free(p);
  }
  return 0;
}


/* fl_hd_disk_clamp skips hypot well inside the disk: the same bits as the hypot test alone,
 * on random points at ratios |t| / rad from 0 to 2 (many within 1e-12 of the rim), radii over
 * the whole range (near underflow and overflow too), signed zeros, infinities and NaN */
FL_TEST(disk_clamp_inside_same_bits) {
  uint64_t st = 99;
  int inside = 0, rim = 0;
  for (int k = 0; k < 400000; k++) {
    double u[4];
    for (int i = 0; i < 4; i++) {
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      u[i] = (double)(st >> 11) / 9007199254740992.0;
    }
    double rad = pow(10.0, -300 + 600 * u[0]), ang = 6.283185307179586 * u[1];
    double ratio = k % 4 == 0 ? 1.0 + (u[2] - 0.5) * 1e-12 : 2.0 * u[2];
    if (k % 7 == 0) rad = k % 14 == 0 ? 0.0 : 1.0;
    double t[2] = {ratio * rad * cos(ang), ratio * rad * sin(ang)};
    if (k % 101 == 0) t[u[3] < 0.5] = k % 202 == 0 ? -0.0 : (u[3] < 0.25 ? NAN : INFINITY);
    double a[2] = {t[0], t[1]}, b[2] = {t[0], t[1]};
    fl_hd_disk_clamp(rad, &a[0], &a[1]);
    double nt = hypot(b[0], b[1]);
    if (nt > rad) {
      double sc = nt > 0 ? rad / nt : 0.0;
      b[0] *= sc;
      b[1] *= sc;
    } else {
      inside++;
      rim += ratio > 1.0 - 1e-12;
    }
    ASSERT(memcmp(a, b, sizeof a) == 0);
  }
  fprintf(stderr, "inside %d of 400000, near the rim %d\n", inside, rim);
  ASSERT(inside > 150000);
  ASSERT(rim > 20000);
  return 0;
}


FL_TEST(step_tol_stops_settled_sweeps) {
  // the stick problem above with no residual tolerance: step_tol ends the sweeps once they
  // change gamma by less than 1e-12 of its size, near the closed form, with the residual of
  // the last sweep recorded; without it the whole budget runs
  const double W[9] = {2, 0.5, 0, 0.5, 1, 0, 0, 0, 1}, q[3] = {-2, 0.3, 0.1};
  fl_problem *p;
  ASSERT_OK(local1(W, q, 1.0, &p));
  const char *const on[] = {"max_iter=5000", "norm=none", "abs_tol=0", "rel_tol=0",
                            "residual_every=100", "step_tol=1e-12", NULL};
  const char *const off[] = {"max_iter=5000", "norm=none", "abs_tol=0", "rel_tol=0",
                             "residual_every=100", NULL};
  double g[3];
  fl_result res;
  ASSERT_OK(run("pgs", p, on, NULL, g, &res));
  ASSERT_EQ(res.reason, FL_CONVERGED_STAGNATION_OK);
  ASSERT(res.iters > 5 && res.iters < 200);
  ASSERT(res.iters % 100 != 0); // stopped between the residual's own sweeps
  ASSERT(res.error < 1e-9);
  ASSERT_NEAR(g[0], 43.0 / 35.0, 1e-9);
  ASSERT_NEAR(g[1], -32.0 / 35.0, 1e-9);
  ASSERT_NEAR(g[2], -0.1, 1e-9);
  ASSERT_OK(run("pgs", p, off, NULL, g, &res));
  ASSERT(res.reason != FL_CONVERGED_STAGNATION_OK);
  ASSERT(res.iters % 100 == 0); // only the residual's own sweeps (or the budget) end it
  fl_problem_free(p);
  return 0;
}

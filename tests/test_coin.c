// SPDX-License-Identifier: Apache-2.0
/* test_coin.c: hydroelastic patches and the spinning coin (issue 8): the patch's pressure
 * integrates exactly at the polygon centroids, a resting disk's contact forces add up to its
 * weight, the Farkas closed forms against shared/reference/farkas_uniform_disk_force_torque.csv,
 * the complete elliptic integrals, the fan's discrete fixed point, and a short coin run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/fl_hydro.h"
#include "../sim/fl_world.h"
#include "../solvers/fl_solver.h"
#include "fl_test.h"

#define R_COIN 0.01213
#define H_COIN 0.000875
#define E_H 1e9

/* a fixed plane at z = 0 and one dynamic body (shape s, description d) made hydroelastic with
 * modulus E and patch mesh `mesh`; NULL on error */
static fl_world *plane_and_body(fl_shape *s, const fl_body_desc *d, double E, int mesh) {
  fl_world *w = NULL;
  if (fl_world_create(&w) < 0) return NULL;
  fl_shape pl;
  fl_body_desc g;
  memset(&g, 0, sizeof g);
  g.kind = FL_BODY_FIXED;
  g.quat[0] = 1;
  int b = -1;
  if (fl_shape_make_plane(&pl) < 0 || fl_world_add_body(w, &g, &pl) < 0 ||
      (b = fl_world_add_body(w, d, s)) < 0) {
    fl_world_free(w);
    return NULL;
  }
  w->body[b].hydro_modulus = E;
  w->body[b].hydro_mesh = mesh;
  return w;
}


/* a plane at z = 0 and a hydroelastic coin whose bottom cap centre is at depth `depth` below the
 * plane, tilted by `tilt` (rad) about the x axis */
static fl_world *coin_world(double depth, double tilt, int mesh) {
  fl_shape s;
  fl_body_desc d;
  if (fl_shape_make_cylinder(R_COIN, H_COIN, 0, &s) < 0) return NULL;
  memset(&d, 0, sizeof d);
  d.kind = FL_BODY_DYNAMIC;
  d.density = 7000;
  double ex[3] = {1, 0, 0};
  fl_quat_from_axis_angle(ex, tilt, d.quat);
  // the bottom cap centre is at -H (R e_z) from the centre
  double Rm[9];
  fl_quat_to_mat(d.quat, Rm);
  for (int k = 0; k < 3; k++) d.pos[k] = H_COIN * Rm[3 * k + 2];
  d.pos[2] -= depth;
  return plane_and_body(&s, &d, E_H, mesh);
}


FL_TEST(mesh_counts_and_areas) {
  for (int n = 3; n <= 200; n += 49) {
    double *t = NULL;
    fl_int nt = 0;
    ASSERT_OK(fl_hydro_disk_mesh(R_COIN, n, &t, &nt));
    ASSERT_EQ(nt, n);
    double A = 0;
    for (fl_int k = 0; k < nt; k++) {
      const double *q = t + 6 * k;
      A += 0.5 * ((q[2] - q[0]) * (q[5] - q[1]) - (q[4] - q[0]) * (q[3] - q[1]));
    }
    ASSERT_NEAR(A, 0.5 * n * R_COIN * R_COIN * sin(2 * M_PI / n), 1e-15);
    fl_free(t);
  }
  for (int N = 1; N <= 12; N++) {
    double *t = NULL;
    fl_int nt = 0;
    ASSERT_OK(fl_hydro_disk_mesh(R_COIN, -N, &t, &nt));
    ASSERT_EQ(nt, 6 * N * N);
    double A = 0, Amin = INFINITY;
    for (fl_int k = 0; k < nt; k++) {
      const double *q = t + 6 * k;
      double a = 0.5 * fabs((q[2] - q[0]) * (q[5] - q[1]) - (q[4] - q[0]) * (q[3] - q[1]));
      A += a;
      if (a < Amin) Amin = a;
    }
    // the triangles tile the inscribed 6N-gon without overlap or degenerate pieces
    ASSERT_NEAR(A, 0.5 * 6 * N * R_COIN * R_COIN * sin(2 * M_PI / (6 * N)), 1e-15);
    ASSERT(Amin > 0.1 * A / nt);
    fl_free(t);
  }
  double *t = NULL;
  fl_int nt = 0;
  ASSERT(fl_hydro_disk_mesh(R_COIN, 2, &t, &nt) == FL_ERR_INVAL);
  ASSERT(fl_hydro_disk_mesh(R_COIN, -201, &t, &nt) == FL_ERR_INVAL);
  ASSERT(fl_hydro_disk_mesh(-1, 10, &t, &nt) == FL_ERR_INVAL);
  return 0;
}


/* A tilted coin entirely below the plane: the sum of A p0 over the polygons is the exact
 * integral of the linear field over the projected cap polygon, area/|cos| times the pressure at
 * the image of the cap centre. */
FL_TEST(patch_pressure_exact_at_centroids) {
  const double tilt = 0.01, depth = 2e-4; // the cap's raised rim stays below the plane
  for (int mesh = 0; mesh < 3; mesh++) {
    int m = mesh == 0 ? 0 : mesh == 1 ? 37 : -5;
    int nside = mesh == 0 ? FL_HYDRO_FAN_DEFAULT : mesh == 1 ? 37 : 30;
    fl_world *w = coin_world(depth, tilt, m);
    ASSERT(w);
    fl_hydro_face *f = NULL;
    fl_int nf = 0, cap = 0;
    int rc = fl_hydro_patch(&w->body[0], &w->body[1], 0, &f, &nf, &cap);
    ASSERT_EQ(rc, nf);
    ASSERT_EQ(nf, mesh == 2 ? 150 : nside);
    double c = cos(tilt), g = E_H * c / H_COIN;
    double Apoly = 0.5 * nside * R_COIN * R_COIN * sin(2 * M_PI / nside) / c;
    // the cap centre (0, 0, -depth) projects along the axis onto the plane: depth along the
    // axis d = depth/cos
    double exact = Apoly * E_H * (depth / c) / H_COIN;
    double sumF = 0, sumA = 0;
    for (fl_int k = 0; k < nf; k++) {
      sumF += f[k].area * f[k].p0;
      sumA += f[k].area;
      ASSERT_NEAR(f[k].g, g, 1e-9 * g);
      ASSERT_NEAR(f[k].k, f[k].g * f[k].area, 1e-12 * f[k].k);
      ASSERT_NEAR(f[k].phi0, -f[k].p0 / f[k].g, 1e-20);
      ASSERT_NEAR(f[k].n[2], 1, 1e-15);
      ASSERT_NEAR(f[k].p[2], 0, 1e-15);
      ASSERT(f[k].p0 > 0);
    }
    ASSERT_NEAR(sumA, Apoly, 1e-12 * Apoly);
    ASSERT_NEAR(sumF, exact, 1e-10 * exact);
    fl_free(f);
    fl_world_free(w);
  }
  return 0;
}


/* A coin tilted so that the plane cuts its cap: the clipped patch's sum of A p0 against an
 * independent midpoint quadrature of the linear field over the immersed part of the cap. */
FL_TEST(patch_pressure_clipped) {
  const double tilt = 0.02, depth = 5e-5;
  fl_world *w = coin_world(depth, tilt, 0);
  ASSERT(w);
  fl_hydro_face *f = NULL;
  fl_int nf = 0, cap = 0;
  ASSERT(fl_hydro_patch(&w->body[0], &w->body[1], 0, &f, &nf, &cap) > 0);
  double sumF = 0;
  for (fl_int k = 0; k < nf; k++) sumF += f[k].area * f[k].p0;
  // quadrature over the cap (body coordinates x, y; the inscribed 152-gon), immersed depth of a
  // cap point d = (depth - y sin)/cos along the axis (the cap rises with y), plane area element
  // dA = dx dy / cos
  const int N = 1200;
  double c = cos(tilt), s = sin(tilt), h = 2 * R_COIN / N, q = 0;
  double ap = R_COIN * cos(M_PI / FL_HYDRO_FAN_DEFAULT); // apothem of the 152-gon
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++) {
      double x = -R_COIN + (i + 0.5) * h, y = -R_COIN + (j + 0.5) * h;
      // inside the 152-gon: below every side's apothem
      double th = atan2(y, x), r = hypot(x, y);
      double sector = floor(th / (2 * M_PI / FL_HYDRO_FAN_DEFAULT));
      double mid = (sector + 0.5) * 2 * M_PI / FL_HYDRO_FAN_DEFAULT;
      if (r * cos(th - mid) > ap) continue;
      double d = (depth - y * s) / c;
      if (d <= 0) continue;
      q += E_H * d / H_COIN * h * h / c;
    }
  }
  double sumA = 0, Afull = 0.5 * FL_HYDRO_FAN_DEFAULT * R_COIN * R_COIN *
                                sin(2 * M_PI / FL_HYDRO_FAN_DEFAULT) / c;
  for (fl_int k = 0; k < nf; k++) sumA += f[k].area;
  ASSERT(sumA < 0.9 * Afull && sumA > 0.1 * Afull); // the plane cuts the cap
  ASSERT_NEAR(sumF, q, 2e-3 * q);
  fl_free(f);
  fl_world_free(w);
  return 0;
}


/* A coin at rest on the plane: the patch's normal impulses carry its weight (SAP and Jacobi). */
FL_TEST(resting_disk_carries_weight) {
  fl_register_all();
  const char *solvers[] = {"sap", "jacobi", "sap"}; // the first convex, the last lagged
  for (int si = 0; si < 3; si++) {
    // 6 rings (216 triangles): the default's ring patch at a quarter of its cost (Jacobi's
    // 2000 sweeps on the default 864 took 49 s under load)
    const char *set[] = {"speed=0", "duration=0.05", "rings=6"};
    fl_world *w = NULL;
    ASSERT_OK(fl_scene_create("spinning_coin", 3, set, &w));
    fl_solver *s = NULL;
    ASSERT_OK(fl_solver_create(solvers[si], &s));
    if (si == 0) ASSERT_OK(fl_solver_set_option(s, "model", "convex"));
    if (si == 1) ASSERT_OK(fl_solver_set_option(s, "max_iter", "2000"));
    if (si == 2) ASSERT_OK(fl_solver_set_option(s, "model", "lagged"));
    fl_int coin = fl_world_find_body(w, "coin");
    ASSERT(coin >= 0);
    double mg = w->body[coin].mass * fl_v3_norm(w->gravity);
    for (int k = 0; k < 50; k++) {
      fl_step_info info;
      ASSERT_OK(fl_world_step(w, s, &info));
      ASSERT_EQ(info.nc, 6 * 6 * 6);
    }
    const double *v, *gam;
    fl_world_solution(w, &v, &gam);
    const fl_problem *p = fl_world_problem(w);
    double N = 0, Ft[3] = {0, 0, 0};
    for (fl_int c = 0; c < p->nc; c++) {
      N += gam[3 * c] * p->frame[9 * c + 2]; // normal impulse along world z
      for (int d = 0; d < 3; d++)
        Ft[d] += gam[3 * c + 1] * p->frame[9 * c + 3 + d] + gam[3 * c + 2] * p->frame[9 * c + 6 + d];
      ASSERT(p->stiffness[c] > 0 && isfinite(p->stiffness[c]));
    }
    ASSERT_NEAR(N / w->dt, mg, 1e-6 * mg);
    // no net friction at rest (a solver may leave self-balancing tangential impulses)
    double T = fl_v3_norm(Ft) / w->dt;
    if (!(T < 1e-6 * mg)) FL_FAIL_("%s: net friction %g N at rest (weight %g N)", solvers[si], T, mg);
    ASSERT(fabs(w->body[coin].vel[2]) < 1e-6);
    fl_solver_destroy(s);
    fl_world_free(w);
  }
  return 0;
}


FL_TEST(elliptic_agm) {
  double K, E;
  ASSERT_OK(fl_elliptic_ke(0, &K, &E));
  ASSERT_NEAR(K, M_PI / 2, 1e-15);
  ASSERT_NEAR(E, M_PI / 2, 1e-15);
  // Abramowitz & Stegun table 17.1/17.2 values at modulus 0.5 (m = 0.25)
  ASSERT_OK(fl_elliptic_ke(0.5, &K, &E));
  ASSERT_NEAR(K, 1.685750354812596, 1e-14);
  ASSERT_NEAR(E, 1.467462209339427, 1e-14);
  // Legendre's relation E K' + E' K - K K' = pi/2 at k = 0.8, k' = 0.6
  double K2, E2;
  ASSERT_OK(fl_elliptic_ke(0.8, &K, &E));
  ASSERT_OK(fl_elliptic_ke(0.6, &K2, &E2));
  ASSERT_NEAR(E * K2 + E2 * K - K * K2, M_PI / 2, 1e-14);
  ASSERT_OK(fl_elliptic_ke(1, &K, &E));
  ASSERT(isinf(K) && E == 1);
  ASSERT(fl_elliptic_ke(1.5, &K, &E) == FL_ERR_INVAL);
  ASSERT(fl_elliptic_ke(NAN, &K, &E) == FL_ERR_INVAL);
  return 0;
}


FL_TEST(farkas_against_reference_csv) {
  char path[1024];
  snprintf(path, sizeof path, "%s/reference/farkas_uniform_disk_force_torque.csv",
           fl_test_shared_dir());
  FILE *fp = fopen(path, "r");
  // the shared folder is data beside the project (as for the FCLIB tests): absent, skip
  if (!fp) SKIP("no %s", path);
  char line[256];
  int rows = 0;
  double worst = 0;
  while (fgets(line, sizeof line, fp)) {
    double e, fr, tr;
    if (line[0] == '#' || sscanf(line, "%lf,%lf,%lf", &e, &fr, &tr) != 3) continue;
    double f, t;
    fl_farkas_ft(e, &f, &t);
    // the file's rows beyond eps = 10 carry rounding errors up to 3e-12 (checked against
    // 40-digit mpmath: t(50) = 0.00500016668541979, the file has ...688241); ours agree with
    // mpmath to 2e-15 there
    double d = fmax(fabs(f - fr), fabs(t - tr)), tol = e <= 10 ? 1e-13 : 5e-12;
    if (d > worst) worst = d;
    if (d > tol) {
      fclose(fp);
      FL_FAIL_("eps %g: f %.15f t %.15f, reference %.15f %.15f", e, f, t, fr, tr);
    }
    rows++;
  }
  fclose(fp);
  ASSERT(rows > 300);
  ASSERT(worst < 5e-12);
  // beyond the file: t(50) from mpmath with 40 digits
  double f50, t50;
  fl_farkas_ft(50, &f50, &t50);
  ASSERT_NEAR(t50, 0.005000166685419792, 2e-14);
  ASSERT_NEAR(f50, 0.9999499974996874, 2e-15);
  ASSERT_NEAR(fl_farkas_eps_star(), 0.6530018, 5e-8);
  return 0;
}


/* The exact uniform disk reaches eps* from any start, and the fan's fixed point under uniform
 * pressure is the seed's discrete value to 0.02 %. */
FL_TEST(fixed_points) {
  const double e0[] = {0.1, 1, 10};
  for (int i = 0; i < 3; i++) {
    double ts, ee, v[3], w[3];
    ASSERT_OK(fl_farkas_integrate(e0[i] / sqrt(1 + e0[i] * e0[i]), 1 / sqrt(1 + e0[i] * e0[i]) / R_COIN,
                                  R_COIN, 0.2, 9.81, 0.1, 3, v, w, &ts, &ee));
    ASSERT_NEAR(ee, 0.6530018, 1e-5);
    ASSERT(ts > 0.3 && ts < 0.7);
    ASSERT_NEAR(v[0], e0[i] / sqrt(1 + e0[i] * e0[i]), 1e-15);
  }
  double *tri = NULL;
  fl_int n = 0;
  ASSERT_OK(fl_hydro_disk_mesh(R_COIN, 0, &tri, &n));
  double xy[2 * FL_HYDRO_FAN_DEFAULT], wgt[FL_HYDRO_FAN_DEFAULT];
  for (fl_int k = 0; k < n; k++) {
    const double *q = tri + 6 * k;
    xy[2 * k] = (q[0] + q[2] + q[4]) / 3;
    xy[2 * k + 1] = (q[1] + q[3] + q[5]) / 3;
    wgt[k] = 1;
  }
  fl_free(tri);
  double ef = fl_patch_eps_star(xy, wgt, (int)n, R_COIN);
  ASSERT(fabs(ef / 0.64426 - 1) < 2.5e-4);
  // a fine grid of equal loads over the disk approaches the continuum 0.6530
  enum { G = 200 };
  static double gxy[2 * G * G], gw[G * G];
  int m = 0;
  for (int i = 0; i < G; i++)
    for (int j = 0; j < G; j++) {
      double x = -1 + (i + 0.5) * 2.0 / G, y = -1 + (j + 0.5) * 2.0 / G;
      if (x * x + y * y >= 1) continue;
      gxy[2 * m] = x * R_COIN;
      gxy[2 * m + 1] = y * R_COIN;
      gw[m++] = 1;
    }
  ASSERT_NEAR(fl_patch_eps_star(gxy, gw, m, R_COIN), 0.6530018, 2e-3);
  return 0;
}


/* The published uniform disk (Farkas et al. 2003) from the scene's start (eps0, speed), sampled
 * every dt and read as fl_coin_simulate reads a run: eps where v + omega R last exceeded 10 mu
 * g dt; *ts the time it stops. From 0.3 m/s at eps0 = 1: 0.683661 and 0.144913 s. */
static double disk_readout(double eps0, double speed, double dt, double *ts) {
  double mug = 0.2 * 9.81, v0 = speed * eps0 / sqrt(1 + eps0 * eps0), w0 = speed / sqrt(1 + eps0 * eps0) / R_COIN;
  if (fl_farkas_integrate(v0, w0, R_COIN, 0.2, 9.81, dt, 0, NULL, NULL, ts, NULL) < 0) return NAN;
  int n = (int)(*ts / dt) + 3;
  double *v = calloc(2 * (size_t)n, sizeof *v), *w = v ? v + n : NULL, e = NAN;
  if (v && fl_farkas_integrate(v0, w0, R_COIN, 0.2, 9.81, dt, n, v, w, NULL, NULL) == FL_OK)
    for (int k = 1; k < n; k++)
      if (v[k] + w[k] * R_COIN > 10 * mug * dt) e = v[k] / (w[k] * R_COIN);
  free(v);
  return e;
}


/* A short coin run (eps0 = 1, 0.3 m/s: 150 steps) on the default patch (rings) with a solver
 * that keeps the normal law free of friction: eps read at 10 mu g dt and the stop time within
 * 0.5 % of the published disk's own trajectory from the same start (0.683661, 0.144913 s; the
 * disk has not reached its limit 0.6530018 at that speed). Before issue 50 the default was the
 * seed's 152-triangle fan, judged against the seed's discrete 0.64426, which is that mesh's
 * value, not the disk's. */
static int short_coin_run(const char *solver, const char *options) {
  fl_register_all();
  fl_coin_run r;
  double ts, eref = disk_readout(1, 0.3, 1e-3, &ts);
  ASSERT_NEAR(eref, 0.683661, 1e-5);
  ASSERT_OK(fl_coin_simulate("eps0=1,speed=0.3", solver, options, &r, NULL, NULL, NULL, 0));
  ASSERT_EQ(r.nfail, 0);
  fprintf(stderr, "%s: eps %.6f (disk %.6f, %+.3f %%), stop %.4f s (disk %.6f s)\n", solver,
          r.eps_star, eref, 100 * (r.eps_star / eref - 1), r.t_stop, ts);
  if (!(fabs(r.eps_star / eref - 1) < 5e-3)) FL_FAIL_("eps %.6f, not within 0.5 %% of %.6f", r.eps_star, eref);
  if (!(fabs(r.t_stop - ts) < 5e-3 * ts + 1e-3)) FL_FAIL_("stop %.4f s, disk %.6f s", r.t_stop, ts);
  return 0;
}

/* Jacobi runs on the seed's fan (fan=152), not the default rings: on a ring patch it cannot
 * converge (jacobi_stalls_on_ring_patch below; docs/coin.md). On the fan, whose triangles all
 * lie at 2R/3 and so need no redistribution, it converges (about 45 sweeps a step) and must give
 * the fan's own answer: SAP-lagged's run on the same fan from the same start, eps within 0.5 %
 * and the stop time within a step (measured: Jacobi 0.64430, 0.150 s; SAP 0.64444, 0.150 s),
 * and the seed's value for that mesh, 0.64426, within 0.5 %. */
FL_TEST(slow_coin_eps_star_jacobi) {
  fl_register_all();
  fl_coin_run j, s;
  ASSERT_OK(fl_coin_simulate("eps0=1,speed=0.3,fan=152", "jacobi", "max_iter=1000", &j, NULL, NULL,
                             NULL, 0));
  ASSERT_OK(fl_coin_simulate("eps0=1,speed=0.3,fan=152", "sap", "model=lagged", &s, NULL, NULL,
                             NULL, 0));
  fprintf(stderr, "fan 152: jacobi eps %.6f stop %.4f s (%d failed); sap %.6f, %.4f s\n",
          j.eps_star, j.t_stop, j.nfail, s.eps_star, s.t_stop);
  ASSERT_EQ(j.nfail, 0);
  ASSERT_EQ(s.nfail, 0);
  ASSERT(fabs(j.eps_star / s.eps_star - 1) < 5e-3);
  ASSERT(fabs(j.t_stop - s.t_stop) < 1.5e-3);
  ASSERT(fabs(j.eps_star / 0.64426 - 1) < 5e-3);
  return 0;
}

/* The limit docs/coin.md states: Jacobi cannot converge on a stiff ring patch. Its step on each
 * contact is 1/m (m = 864 contacts on the one coin), and a change of how the load is shared
 * between rings (total force and moment fixed) is seen only through the triangles' compliance,
 * about 1e-3 of W's rigid diagonal, so such modes shrink by about 1e-6 a sweep; a larger omega
 * diverges (the rigid modes' eigenvalues are about m). From the cold start (which loads the inner
 * triangles more) the own residual stalls near 4.4e-7 against abs_tol 1e-8. Pinned here so
 * that the doc changes with the code. */
FL_TEST(jacobi_stalls_on_ring_patch) {
  fl_register_all();
  const char *set[] = {"eps0=1", "speed=0.3"};
  fl_world *w = NULL;
  ASSERT_OK(fl_scene_create("spinning_coin", 2, set, &w));
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("jacobi", &s));
  ASSERT_OK(fl_solver_set_option(s, "max_iter", "1000"));
  fl_step_info info;
  ASSERT_OK(fl_world_step(w, s, &info));
  fprintf(stderr, "jacobi, %d contacts: reason %d after %d sweeps, own residual %.3g\n",
          (int)info.nc, (int)info.res.reason, (int)info.res.iters, info.res.error);
  ASSERT_EQ(info.nc, 6 * FL_COIN_RINGS_DEFAULT * FL_COIN_RINGS_DEFAULT);
  ASSERT(info.res.reason < 0);
  ASSERT(info.res.error > 1e-7);
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}
FL_TEST(coin_eps_star_sap_lagged) { return short_coin_run("sap", "model=lagged"); }


/* The scene's observables at the start: v, omega and eps = v/(omega R) as set. */
FL_TEST(scene_observables) {
  fl_world *w = NULL;
  ASSERT_OK(fl_scene_create("spinning_coin", 0, NULL, &w));
  fl_int no = fl_world_nobs(w);
  double val[64];
  ASSERT(no <= 64);
  ASSERT_OK(fl_world_observe(w, val));
  int found = 0;
  for (fl_int i = 0; i < no; i++) {
    const char *nm = fl_world_obs_name(w, i);
    if (strcmp(nm, "coin_eps") == 0) {
      ASSERT_NEAR(val[i], 1, 1e-12);
      found++;
    }
    if (strcmp(nm, "coin_v") == 0) {
      ASSERT_NEAR(val[i], sqrt(0.5), 1e-12);
      found++;
    }
  }
  ASSERT_EQ(found, 2);
  fl_world_free(w);
  return 0;
}


/* A sliding and spinning coin stays on the plane when friction does not feed back into the
 * normal law: Jacobi (the Coulomb problem) and SAP with the lagged model: every triangle in
 * contact, the normal impulses carry the weight, the friction is mu times it. */
static int coin_stays_down(const char *solver, const char *opt, const char *val) {
  fl_register_all();
  const char *set[] = {"eps0=1", "speed=1"};
  fl_world *w = NULL;
  ASSERT_OK(fl_scene_create("spinning_coin", 2, set, &w));
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create(solver, &s));
  ASSERT_OK(fl_solver_set_option(s, opt, val));
  fl_int coin = fl_world_find_body(w, "coin");
  double mg = w->body[coin].mass * fl_v3_norm(w->gravity);
  for (int k = 0; k < 20; k++) {
    fl_step_info info;
    ASSERT_OK(fl_world_step(w, s, &info));
    ASSERT_EQ(info.nc, 6 * FL_COIN_RINGS_DEFAULT * FL_COIN_RINGS_DEFAULT);
    ASSERT(fabs(w->body[coin].vel[2]) < 1e-3);
    const double *v, *gam;
    fl_world_solution(w, &v, &gam);
    const fl_problem *p = fl_world_problem(w);
    double N = 0, T = 0;
    for (fl_int c = 0; c < p->nc; c++) {
      N += gam[3 * c];
      T += hypot(gam[3 * c + 1], gam[3 * c + 2]);
    }
    if (k >= 5) ASSERT_NEAR(N / w->dt, mg, 0.02 * mg);
    ASSERT_NEAR(T, 0.2 * N, 1e-3 * N); // every triangle slides
  }
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}


/* The seed's fan stays selectable (`fan=152`: 152 contacts); a fan of 1 or 2 triangles is
 * refused with a message naming the scene and the parameter. */
FL_TEST(scene_patch_options) {
  fl_register_all();
  const char *fan[] = {"fan=152"}, *bad[] = {"fan=2"};
  fl_world *w = NULL;
  ASSERT_OK(fl_scene_create("spinning_coin", 1, fan, &w));
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("sap", &s));
  fl_step_info info;
  ASSERT_OK(fl_world_step(w, s, &info));
  ASSERT_EQ(info.nc, FL_HYDRO_FAN_DEFAULT);
  fl_solver_destroy(s);
  fl_world_free(w);
  w = NULL;
  ASSERT(fl_scene_create("spinning_coin", 1, bad, &w) < 0);
  ASSERT(w == NULL);
  ASSERT(strstr(fl_errmsg(), "spinning_coin") && strstr(fl_errmsg(), "fan"));
  return 0;
}


/* Jacobi's steps on the 12 rings end unconverged (jacobi_stalls_on_ring_patch): the sums checked
 * here (weight, mu times normal, no lift) hold all the same; how the load is shared between
 * triangles, which they do not see, is what Jacobi gets wrong. */
FL_TEST(sliding_coin_stays_down_jacobi) { return coin_stays_down("jacobi", "max_iter", "1000"); }
FL_TEST(sliding_coin_stays_down_sap_lagged) { return coin_stays_down("sap", "model", "lagged"); }


/* The criterion: SAP (lagged model) from a 20 m/s start reads eps* within 0.5 % of the
 * seed's 0.64426 for every eps0 of seed 002 Fig. 5 (measured: within 0.11 %), on the seed's
 * own 152-triangle fan (`fan=152`), whose value 0.64426 is. */
FL_TEST(slow_coin_eps_star_sap_lagged_all_starts) {
  fl_register_all();
  const double eps0[] = {0.1, 0.3, 1, 3, 10};
  for (int i = 0; i < 5; i++) {
    char set[96];
    snprintf(set, sizeof set, "eps0=%g,speed=20,duration=15,fan=152", eps0[i]);
    fl_coin_run r;
    ASSERT_OK(fl_coin_simulate(set, "sap", "model=lagged", &r, NULL, NULL, NULL, 0));
    ASSERT_EQ(r.nfail, 0);
    if (!(fabs(r.eps_star / 0.64426 - 1) < 5e-3))
      FL_FAIL_("eps0 %g: eps* %.6f, not within 0.5 %% of 0.64426", eps0[i], r.eps_star);
  }
  return 0;
}


/* (v, omega R) after every step of a 0.3 m/s, eps0 = 1 run over 0.3 s, zero after rest */
static int coin_traj(const char *set, double *v, double *wr, int n) {
  double *t = calloc((size_t)n, sizeof *t);
  fl_coin_run r;
  int rc = fl_coin_simulate(set, "sap", "model=lagged", &r, t, v, wr, n);
  free(t);
  for (int k = rc >= 0 ? r.nsample : 0; k < n; k++) v[k] = wr[k] = 0;
  return rc;
}


static double traj_err(const double *v, const double *wr, int n, const double *rv,
                       const double *rw, int stride) {
  double num = 0, den = 0;
  for (int k = 0; k < n; k++) {
    int j = (k + 1) * stride - 1;
    num += (v[k] - rv[j]) * (v[k] - rv[j]) + (wr[k] - rw[j]) * (wr[k] - rw[j]);
    den += rv[j] * rv[j] + rw[j] * rw[j];
  }
  return sqrt(num / den);
}


/* Seed 002 Fig. 6 with SAP's lagged model: the trajectory error is first order in dt (4, 2,
 * 1 ms against 0.1 ms; measured local slopes 1.00, 1.08) and second order in mesh size (rings
 * R/2, R/3, R/4 against R/24; measured 2.38, 2.15). */
FL_TEST(coin_convergence_orders_sap_lagged) {
  fl_register_all();
  enum { NREF = 3000 };
  double *rv = calloc(4 * NREF, sizeof(double)), *rw = rv + NREF, *v = rv + 2 * NREF,
         *wr = rv + 3 * NREF;
  ASSERT(rv);
  // time step on the seed's fan, as masterjohn-fig6
  ASSERT_OK(coin_traj("eps0=1,speed=0.3,duration=0.3,dt=1e-4,fan=152", rv, rw, NREF));
  const int mult[3] = {40, 20, 10};
  double e[3];
  for (int i = 0; i < 3; i++) {
    char set[96];
    int n = NREF / mult[i];
    snprintf(set, sizeof set, "eps0=1,speed=0.3,duration=0.3,dt=%g,fan=152", mult[i] * 1e-4);
    ASSERT_OK(coin_traj(set, v, wr, n));
    e[i] = traj_err(v, wr, n, rv, rw, mult[i]);
  }
  for (int i = 1; i < 3; i++) {
    double sl = log(e[i - 1] / e[i]) / log(2.0);
    if (!(sl > 0.85 && sl < 1.3)) FL_FAIL_("time step: local slope %.3f (errors %g %g)", sl, e[i - 1], e[i]);
  }
  ASSERT(e[2] < 1e-3);
  // mesh: rings of size R/N at dt 1 ms
  ASSERT_OK(coin_traj("eps0=1,speed=0.3,duration=0.3,rings=24", rv, rw, 300));
  const int rings[3] = {2, 3, 4};
  for (int i = 0; i < 3; i++) {
    char set[96];
    snprintf(set, sizeof set, "eps0=1,speed=0.3,duration=0.3,rings=%d", rings[i]);
    ASSERT_OK(coin_traj(set, v, wr, 300));
    e[i] = traj_err(v, wr, 300, rv, rw, 1);
  }
  for (int i = 1; i < 3; i++) {
    double sl = log(e[i - 1] / e[i]) / log((double)rings[i] / rings[i - 1]);
    if (!(sl > 1.8 && sl < 2.6)) FL_FAIL_("mesh: local slope %.3f (errors %g %g)", sl, e[i - 1], e[i]);
  }
  free(rv);
  return 0;
}


//---- a hydroelastic sphere on a plane ----

/* total force of a compliant sphere (radius r, field E (1 - |x - C|/r)) whose centre is dc above
 * a rigid plane: 2 pi E (a^2/2 - (r^3 - dc^3)/(3 r)), a^2 = r^2 - dc^2 */
static double sphere_force(double E, double r, double dc) {
  return 2 * M_PI * E * ((r * r - dc * dc) / 2 - (r * r * r - dc * dc * dc) / (3 * r));
}


static fl_world *sphere_world(double r, double E, double dc, int mesh, double mass) {
  fl_shape s;
  fl_body_desc d;
  if (fl_shape_make_sphere(r, &s) < 0) return NULL;
  memset(&d, 0, sizeof d);
  d.kind = FL_BODY_DYNAMIC;
  d.mass = mass;
  d.quat[0] = 1;
  d.pos[2] = dc;
  return plane_and_body(&s, &d, E, mesh);
}


/* The sphere's patch: the centroid rule integrates the radial field to second order in the
 * ring size (the field is not linear on the plane), every face has k = g A, phi0 = -p0/g. */
FL_TEST(sphere_patch_force_second_order) {
  const double r = 0.05, E = 1e6, dc = r - 0.004;
  double F = sphere_force(E, r, dc), err[3];
  const int rings[3] = {4, 8, 16};
  for (int i = 0; i < 3; i++) {
    fl_world *w = sphere_world(r, E, dc, -rings[i], 1.0);
    ASSERT(w);
    fl_hydro_face *f = NULL;
    fl_int nf = 0, cap = 0;
    ASSERT(fl_hydro_patch(&w->body[0], &w->body[1], 0.0, &f, &nf, &cap) == 6 * rings[i] * rings[i]);
    double sum = 0, area = 0;
    for (fl_int k = 0; k < nf; k++) {
      sum += f[k].area * f[k].p0;
      area += f[k].area;
      ASSERT_NEAR(f[k].k, f[k].g * f[k].area, 1e-12 * f[k].k);
      ASSERT_NEAR(f[k].phi0, -f[k].p0 / f[k].g, 1e-15);
      ASSERT_NEAR(f[k].n[2], 1, 0);
    }
    // the polygon disk inscribed in the contact circle
    ASSERT(area < M_PI * (r * r - dc * dc) && area > 0.97 * M_PI * (r * r - dc * dc));
    err[i] = fabs(sum / F - 1);
    fl_free(f);
    fl_world_free(w);
  }
  fprintf(stderr, "sphere patch force errors (rings 4, 8, 16): %.3e %.3e %.3e\n", err[0], err[1], err[2]);
  if (!(err[0] < 0.05 && err[1] / err[2] > 3.0 && err[0] / err[1] > 3.0))
    FL_FAIL_("sphere patch force errors %g %g %g (rings 4, 8, 16): not second order", err[0],
             err[1], err[2]);
  return 0;
}


/* A hydroelastic ball comes to rest where its patch carries its weight: the depth matches the
 * root of sphere_force(dc) = m g within the 6-ring quadrature error (1 %). Dropped from first
 * touch with a dissipation time scale of 10 ms, it settles within the second simulated. */
FL_TEST(resting_sphere_depth) {
  fl_register_all();
  const double r = 0.05, E = 1e6, m = 1.0, g = 9.81;
  // closed-form depth by bisection on dc
  double lo = r - 0.02, hi = r;
  for (int it = 0; it < 200; it++) {
    double mid = 0.5 * (lo + hi);
    if (sphere_force(E, r, mid) > m * g) lo = mid;
    else hi = mid;
  }
  double depth = r - 0.5 * (lo + hi);
  fl_world *w = sphere_world(r, E, r, 0, m);
  ASSERT(w);
  w->dt = 1e-3;
  w->mat[0].tau_d = 0.01; // about half of critical damping at the resting stiffness
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("sap", &s));
  ASSERT_OK(fl_solver_set_option(s, "model", "lagged"));
  for (int k = 0; k < 1000; k++) {
    fl_step_info info;
    ASSERT_OK(fl_world_step(w, s, &info));
  }
  ASSERT(fabs(w->body[1].vel[2]) < 1e-6);
  double d = r - w->body[1].pos[2];
  fprintf(stderr, "resting depth %.6g m, closed form %.6g m (%+.3f %%)\n", d, depth, 100 * (d / depth - 1));
  if (!(fabs(d / depth - 1) < 0.01))
    FL_FAIL_("resting depth %.6g m, closed form %.6g m", d, depth);
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}


/* A compliant sphere on a rigid box: on the middle of the top face the patch is the plane's
 * (same faces, same pressures); with its centre straight above an edge the top face keeps
 * exactly half of the disk (the inscribed ring polygon is centrally symmetric) and the side
 * face, whose plane passes through the centre, gives none; beyond the edge both faces carry. */
FL_TEST(sphere_on_box_faces) {
  const double r = 0.05, E = 1e6, dc = r - 0.004, hb = 0.2;
  fl_world *w = sphere_world(r, E, dc, -8, 1.0);
  ASSERT(w);
  fl_shape bs;
  fl_body_desc d;
  memset(&d, 0, sizeof d);
  d.kind = FL_BODY_FIXED;
  d.quat[0] = 1;
  d.pos[2] = -hb; // top face at z = 0
  ASSERT_OK(fl_shape_make_box(hb, hb, hb, &bs));
  int box = fl_world_add_body(w, &d, &bs);
  ASSERT(box >= 0);
  fl_hydro_face *f = NULL;
  fl_int nf = 0, cap = 0;
  ASSERT_EQ(fl_hydro_patch(&w->body[0], &w->body[1], 0.0, &f, &nf, &cap), 384);
  double Fp = 0, Ap = 0;
  for (fl_int k = 0; k < nf; k++) Fp += f[k].area * f[k].p0, Ap += f[k].area;
  nf = 0;
  ASSERT_EQ(fl_hydro_patch(&w->body[box], &w->body[1], 0.0, &f, &nf, &cap), 384);
  double Fb = 0;
  for (fl_int k = 0; k < nf; k++) {
    Fb += f[k].area * f[k].p0;
    ASSERT_NEAR(f[k].n[2], 1, 1e-15);
  }
  ASSERT_NEAR(Fb, Fp, 1e-12 * Fp);
  // centre above the edge x = hb of the top face
  w->body[1].pos[0] = hb;
  nf = 0;
  ASSERT(fl_hydro_patch(&w->body[box], &w->body[1], 0.0, &f, &nf, &cap) > 0);
  double Fe = 0, Ae = 0;
  for (fl_int k = 0; k < nf; k++) {
    Fe += f[k].area * f[k].p0;
    Ae += f[k].area;
    ASSERT_NEAR(f[k].n[2], 1, 1e-15); // only the top face
    ASSERT(f[k].p[0] <= hb + 1e-15);
  }
  ASSERT_NEAR(Ae, Ap / 2, 1e-12 * Ap);
  ASSERT_NEAR(Fe, Fp / 2, 0.01 * Fp); // the centroid rule on the cut triangles
  // beyond the edge (centre 2 mm outside and 46 mm above the corner line): both faces
  w->body[1].pos[0] = hb + 0.002;
  nf = 0;
  ASSERT(fl_hydro_patch(&w->body[box], &w->body[1], 0.0, &f, &nf, &cap) > 0);
  int top = 0, side = 0;
  for (fl_int k = 0; k < nf; k++) {
    top += f[k].n[2] > 0.5;
    side += f[k].n[0] > 0.5;
    ASSERT(f[k].g > 0 && f[k].area > 0);
  }
  ASSERT(top > 0 && side > 0);
  fl_free(f);
  fl_world_free(w);
  return 0;
}


/* The stepper uses the box patch: a hydroelastic ball resting on a box top settles to the depth
 * it has on a plane. */
FL_TEST(resting_sphere_on_box) {
  fl_register_all();
  const double r = 0.05, E = 1e6, hb = 0.2;
  double depth[2];
  for (int on_box = 0; on_box < 2; on_box++) {
    fl_world *w = sphere_world(r, E, r, 0, 1.0);
    ASSERT(w);
    if (on_box) {
      w->body[0].pos[2] = -1; // the plane out of reach
      fl_shape bs;
      fl_body_desc d;
      memset(&d, 0, sizeof d);
      d.kind = FL_BODY_FIXED;
      d.quat[0] = 1;
      d.pos[2] = -hb;
      ASSERT_OK(fl_shape_make_box(hb, hb, hb, &bs));
      ASSERT(fl_world_add_body(w, &d, &bs) >= 0);
    }
    w->dt = 1e-3;
    w->mat[0].tau_d = 0.01;
    fl_solver *s = NULL;
    ASSERT_OK(fl_solver_create("sap", &s));
    ASSERT_OK(fl_solver_set_option(s, "model", "lagged"));
    for (int k = 0; k < 1000; k++) {
      fl_step_info info;
      ASSERT_OK(fl_world_step(w, s, &info));
      if (k == 999) ASSERT_EQ(info.nc, 216);
    }
    depth[on_box] = r - w->body[1].pos[2];
    fl_solver_destroy(s);
    fl_world_free(w);
  }
  ASSERT_NEAR(depth[1], depth[0], 1e-9);
  return 0;
}

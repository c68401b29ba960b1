// SPDX-License-Identifier: Apache-2.0
/* test_world.c: the rigid-body world against closed forms (issue 3 "Done when"): block on an
 * incline (stick and slide), a sliding box's stopping distance, free flight (momentum, angular
 * momentum), a pendulum's period, a spring's period, drives, prescribed motion, a resting
 * stack's energy, material rules and warm-start matching. Every simulation uses PGS with a
 * generous sweep budget.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../sim/fl_loop.h"
#include "../sim/fl_world.h"
#include "../solvers/fl_solver.h"
#include "fl_test.h"

//---- helpers ----

static fl_solver *pgs(int sweeps) {
  fl_solver *s = NULL;
  fl_register_all();
  if (fl_solver_create("pgs", &s) < 0) return NULL;
  char buf[32];
  snprintf(buf, sizeof buf, "%d", sweeps);
  fl_solver_set_option(s, "max_iter", buf);
  fl_solver_set_option(s, "abs_tol", "1e-12");
  fl_solver_set_option(s, "error_every", "0");
  return s;
}


static fl_body_desc desc(const char *name, fl_body_kind kind, int mat) {
  fl_body_desc d;
  memset(&d, 0, sizeof d);
  d.name = name;
  d.kind = kind;
  d.material = mat;
  d.quat[0] = 1;
  return d;
}


/* A fixed plane through the origin tilted by theta about y; returns its index. */
static int add_slope(fl_world *w, double theta, int mat) {
  fl_shape s;
  if (fl_shape_make_plane(&s) < 0) return -1;
  fl_body_desc d = desc("slope", FL_BODY_FIXED, mat);
  double ey[3] = {0, 1, 0};
  fl_quat_from_axis_angle(ey, theta, d.quat);
  return fl_world_add_body(w, &d, &s);
}


/* A box of half extents h resting on the tilted plane, mass m. */
static int add_box_on_slope(fl_world *w, double theta, double h, double m, int mat) {
  fl_shape s;
  if (fl_shape_make_box(h, h, h, &s) < 0) return -1;
  fl_body_desc d = desc("box", FL_BODY_DYNAMIC, mat);
  d.mass = m;
  double ey[3] = {0, 1, 0};
  fl_quat_from_axis_angle(ey, theta, d.quat);
  d.pos[0] = h * sin(theta);
  d.pos[2] = h * cos(theta);
  return fl_world_add_body(w, &d, &s);
}


static int run_steps(fl_world *w, fl_solver *s, int n) {
  for (int k = 0; k < n; k++) {
    fl_step_info info;
    int rc = fl_world_step(w, s, &info);
    if (rc < 0) return rc;
  }
  return FL_OK;
}


//---- block on an incline ----

/* mu >= tan(theta): the block stays put. */
FL_TEST(incline_sticks) {
  fl_world *w;
  ASSERT_OK(fl_world_create(&w));
  w->dt = 1e-3;
  double th = 20 * M_PI / 180;
  int mat = fl_world_add_material(w, "m", 0.5, INFINITY, 0); // tan 20 deg = 0.364
  ASSERT(add_slope(w, th, mat) >= 0);
  int b = add_box_on_slope(w, th, 0.1, 2.0, mat);
  ASSERT(b >= 0);
  fl_world_reset_start(w);
  fl_solver *s = pgs(200);
  ASSERT(s);
  ASSERT_OK(run_steps(w, s, 500));
  double d[3];
  for (int k = 0; k < 3; k++) d[k] = w->body[b].pos[k] - w->body[b].pos0[k];
  ASSERT_LE(fl_v3_norm(d), 1e-5);
  ASSERT_LE(fl_v3_norm(w->body[b].vel), 1e-5);
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}


/* mu < tan(theta): the block slides with a = g (sin - mu cos). Symplectic Euler gives the
 * velocity a t exactly for a constant acceleration. */
FL_TEST(incline_slides) {
  double th = 30 * M_PI / 180, mu = 0.3, g = 9.81;
  fl_world *w;
  ASSERT_OK(fl_world_create(&w));
  w->dt = 1e-3;
  int mat = fl_world_add_material(w, "m", mu, INFINITY, 0);
  ASSERT(add_slope(w, th, mat) >= 0);
  int b = add_box_on_slope(w, th, 0.1, 2.0, mat);
  ASSERT(b >= 0);
  fl_world_reset_start(w);
  fl_solver *s = pgs(200);
  ASSERT(s);
  ASSERT_OK(run_steps(w, s, 500));
  double a = g * (sin(th) - mu * cos(th)), t = w->t;
  double down[3] = {cos(th), 0, -sin(th)};
  double v = fl_v3_dot(w->body[b].vel, down);
  ASSERT_NEAR(v, a * t, 0.01 * a * t);
  double dx[3];
  for (int k = 0; k < 3; k++) dx[k] = w->body[b].pos[k] - w->body[b].pos0[k];
  ASSERT_NEAR(fl_v3_dot(dx, down), 0.5 * a * t * t, 0.01 * 0.5 * a * t * t);
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}


/* A box sliding on flat ground at v0 stops after v0^2/(2 mu g). */
FL_TEST(sliding_box_stops) {
  double mu = 0.5, g = 9.81, v0 = 2.0;
  fl_world *w;
  ASSERT_OK(fl_world_create(&w));
  w->dt = 1e-3;
  int mat = fl_world_add_material(w, "m", mu, INFINITY, 0);
  ASSERT(add_slope(w, 0, mat) >= 0);
  int b = add_box_on_slope(w, 0, 0.1, 1.0, mat);
  ASSERT(b >= 0);
  w->body[b].vel[0] = v0;
  fl_world_reset_start(w);
  fl_solver *s = pgs(200);
  ASSERT(s);
  ASSERT_OK(run_steps(w, s, 700));
  double d = w->body[b].pos[0] - w->body[b].pos0[0], ref = v0 * v0 / (2 * mu * g);
  ASSERT_NEAR(d, ref, 0.01 * ref);
  ASSERT_LE(fl_v3_norm(w->body[b].vel), 1e-6);
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}


//---- the rolling ball of seed 003 Fig. 3 ----

static int ball_case(double mu) {
  char set[64];
  snprintf(set, sizeof set, "mu=%g", mu);
  const char *sets[1] = {set};
  fl_world *w;
  ASSERT_OK(fl_scene_create("ball_slope", 1, sets, &w));
  fl_solver *s = pgs(100);
  ASSERT(s);
  int n = (int)lround(w->duration / w->dt);
  ASSERT_OK(run_steps(w, s, n));
  fl_int no = fl_world_nobs(w);
  double val[64];
  ASSERT(no <= 64);
  ASSERT_OK(fl_world_observe(w, val));
  double ux = NAN, ref = NAN;
  for (fl_int i = 0; i < no; i++) {
    if (strcmp(fl_world_obs_name(w, i), "slope_ux") == 0) ux = val[i];
    if (strcmp(fl_world_obs_name(w, i), "slope_ux_ref") == 0) ref = val[i];
  }
  // the closed form, written out here independently of observables.c
  double th = M_PI / 4, g = 9.81, t = w->t;
  double a = (mu <= 2.0 / 7.0 * tan(th)) ? g * (sin(th) - mu * cos(th)) : 5.0 / 7.0 * g * sin(th);
  ASSERT_NEAR(ref, 0.5 * a * t * t, 1e-12);
  ASSERT_NEAR(ux, ref, 0.01 * ref);
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}

FL_TEST(ball_slope_mu0) { return ball_case(0.0); }
FL_TEST(ball_slope_mu02) { return ball_case(0.2); }
FL_TEST(ball_slope_mu03) { return ball_case(0.3); }
FL_TEST(ball_slope_mu06) { return ball_case(0.6); }


//---- free flight ----

/* No gravity, no contact: linear momentum is exact; the angular momentum of a tumbling box
 * (spinning off its principal axes) drifts only by the explicit gyroscopic term's O(dt). */
FL_TEST(free_flight_momentum) {
  fl_world *w;
  ASSERT_OK(fl_world_create(&w));
  w->gravity[2] = 0;
  w->dt = 1e-4;
  fl_shape s;
  ASSERT_OK(fl_shape_make_box(0.3, 0.2, 0.1, &s));
  fl_body_desc d = desc("box", FL_BODY_DYNAMIC, 0);
  d.density = 1000;
  d.vel[0] = 1;
  d.vel[1] = -2;
  d.omega[0] = 3;
  d.omega[1] = 1;
  d.omega[2] = -2;
  ASSERT(fl_world_add_body(w, &d, &s) >= 0);
  fl_world_reset_start(w);
  double P0[3], L0[3], P[3], L[3], ke0, ke;
  fl_world_energy_momentum(w, &ke0, NULL, P0, L0);
  ASSERT_OK(run_steps(w, NULL, 10000));
  fl_world_energy_momentum(w, &ke, NULL, P, L);
  for (int k = 0; k < 3; k++) ASSERT_NEAR(P[k], P0[k], 1e-12 * fl_v3_norm(P0));
  double dL[3] = {L[0] - L0[0], L[1] - L0[1], L[2] - L0[2]};
  ASSERT_LE(fl_v3_norm(dL), 1e-2 * fl_v3_norm(L0));
  ASSERT_NEAR(ke, ke0, 2e-2 * ke0);
  // the centre moved in a straight line
  ASSERT_NEAR(w->body[0].pos[0], 1.0 * w->t, 1e-9);
  ASSERT_NEAR(w->body[0].pos[1], -2.0 * w->t, 1e-9);
  fl_world_free(w);
  return 0;
}


//---- pendulum period ----

/* A sphere on a rigid rod from a fixed pivot, small amplitude: the period of the physical
 * pendulum T = 2 pi sqrt((L^2 + 2 r^2/5)/(g L)). */
FL_TEST(pendulum_period) {
  double L = 1.0, r = 0.05, g = 9.81, th0 = 5 * M_PI / 180;
  fl_world *w;
  ASSERT_OK(fl_world_create(&w));
  w->dt = 1e-3;
  fl_shape s;
  ASSERT_OK(fl_shape_make_sphere(r, &s));
  fl_body_desc d = desc("bob", FL_BODY_DYNAMIC, 0);
  d.mass = 1;
  d.pos[0] = L * sin(th0);
  d.pos[2] = -L * cos(th0);
  int b = fl_world_add_body(w, &d, &s);
  ASSERT(b >= 0);
  fl_joint j;
  memset(&j, 0, sizeof j);
  j.type = FL_JOINT_DISTANCE;
  j.body_a = -1;
  j.body_b = b;
  j.rest_length = L;
  j.stiffness = INFINITY;
  ASSERT(fl_world_add_joint(w, &j) >= 0);
  fl_world_reset_start(w);
  fl_solver *sv = pgs(50);
  ASSERT(sv);
  // times of downward zero crossings of x (interpolated)
  double cross[8];
  int nx = 0;
  double xprev = w->body[b].pos[0];
  for (int k = 0; k < 8000 && nx < 4; k++) {
    fl_step_info info;
    ASSERT_OK(fl_world_step(w, sv, &info));
    double x = w->body[b].pos[0];
    if (xprev > 0 && x <= 0) cross[nx++] = w->t - w->dt * x / (x - xprev);
    xprev = x;
  }
  ASSERT(nx == 4);
  double T = (cross[3] - cross[0]) / 3;
  double Tref = 2 * M_PI * sqrt((L * L + 0.4 * r * r) / (g * L));
  ASSERT_NEAR(T, Tref, 0.01 * Tref);
  // the rod keeps its length
  ASSERT_NEAR(fl_v3_norm(w->body[b].pos), L, 1e-4);
  fl_solver_destroy(sv);
  fl_world_free(w);
  return 0;
}


/* A mass on a distance spring (no gravity) oscillates with T = 2 pi sqrt(m/k). */
FL_TEST(spring_period) {
  double m = 1, k = 100, L = 1;
  fl_world *w;
  ASSERT_OK(fl_world_create(&w));
  w->gravity[2] = 0;
  w->dt = 1e-4;
  fl_shape s;
  ASSERT_OK(fl_shape_make_sphere(0.05, &s));
  fl_body_desc d = desc("bob", FL_BODY_DYNAMIC, 0);
  d.mass = m;
  d.pos[0] = L + 0.1;
  int b = fl_world_add_body(w, &d, &s);
  ASSERT(b >= 0);
  fl_joint j;
  memset(&j, 0, sizeof j);
  j.type = FL_JOINT_DISTANCE;
  j.body_a = -1;
  j.body_b = b;
  j.rest_length = L;
  j.stiffness = k;
  ASSERT(fl_world_add_joint(w, &j) >= 0);
  fl_world_reset_start(w);
  fl_solver *sv = pgs(20);
  ASSERT(sv);
  double cross[4];
  int nx = 0;
  double xprev = w->body[b].pos[0] - L;
  for (int it = 0; it < 40000 && nx < 3; it++) {
    fl_step_info info;
    ASSERT_OK(fl_world_step(w, sv, &info));
    double x = w->body[b].pos[0] - L;
    if (xprev > 0 && x <= 0) cross[nx++] = w->t - w->dt * x / (x - xprev);
    xprev = x;
  }
  ASSERT(nx == 3);
  double T = (cross[2] - cross[0]) / 2, Tref = 2 * M_PI * sqrt(m / k);
  ASSERT_NEAR(T, Tref, 0.01 * Tref);
  fl_solver_destroy(sv);
  fl_world_free(w);
  return 0;
}


//---- drives, prescribed motion ----

/* A revolute joint to the world driven at 2 rad/s turns its body by 2 rad in 1 s; a prismatic
 * drive moves its body at 0.5 m/s along the axis against gravity. */
FL_TEST(driven_joints) {
  fl_world *w;
  ASSERT_OK(fl_world_create(&w));
  w->dt = 1e-3;
  fl_shape s;
  ASSERT_OK(fl_shape_make_box(0.5, 0.1, 0.1, &s));
  fl_body_desc d = desc("wheel", FL_BODY_DYNAMIC, 0);
  d.density = 500;
  int a = fl_world_add_body(w, &d, &s);
  ASSERT(a >= 0);
  ASSERT_OK(fl_shape_make_box(0.1, 0.1, 0.1, &s));
  d = desc("slider", FL_BODY_DYNAMIC, 0);
  d.density = 500;
  d.pos[0] = 5;
  int b = fl_world_add_body(w, &d, &s);
  ASSERT(b >= 0);
  fl_joint j;
  memset(&j, 0, sizeof j);
  j.type = FL_JOINT_REVOLUTE;
  j.body_a = -1;
  j.body_b = a;
  j.axis[2] = 1;
  j.driven = 1;
  j.drive_velocity = 2;
  j.drive_max_force = INFINITY;
  ASSERT(fl_world_add_joint(w, &j) >= 0);
  memset(&j, 0, sizeof j);
  j.type = FL_JOINT_PRISMATIC;
  j.body_a = -1;
  j.body_b = b;
  j.anchor_a[0] = 5;
  j.axis[2] = 1;
  j.driven = 1;
  j.drive_velocity = 0.5;
  j.drive_max_force = INFINITY;
  ASSERT(fl_world_add_joint(w, &j) >= 0);
  fl_world_reset_start(w);
  fl_solver *sv = pgs(50);
  ASSERT(sv);
  ASSERT_OK(run_steps(w, sv, 1000));
  // rotation angle about z from the quaternion (the body turns about its centre)
  const double *q = w->body[a].quat;
  double ang = 2 * atan2(q[3], q[0]);
  ASSERT_NEAR(ang, 2.0, 0.01 * 2.0);
  ASSERT_NEAR(fl_v3_norm(w->body[a].pos), 0, 1e-6);
  ASSERT_NEAR(w->body[b].pos[2], 0.5, 0.005);
  ASSERT_NEAR(w->body[b].pos[0], 5, 1e-6);
  ASSERT_NEAR(w->body[b].pos[1], 0, 1e-6);
  fl_solver_destroy(sv);
  fl_world_free(w);
  return 0;
}


/* A box on a prescribed conveyor plate moving at 1 m/s is dragged by friction; it reaches the
 * plate's speed after v/(mu g) s and then moves with it. */
FL_TEST(prescribed_conveyor) {
  fl_world *w;
  ASSERT_OK(fl_world_create(&w));
  w->dt = 1e-3;
  int mat = fl_world_add_material(w, "m", 0.5, INFINITY, 0);
  fl_shape s;
  ASSERT_OK(fl_shape_make_box(5, 5, 0.1, &s));
  fl_body_desc d = desc("belt", FL_BODY_PRESCRIBED, mat);
  d.pos[2] = -0.1;
  d.vel[0] = 1;
  ASSERT(fl_world_add_body(w, &d, &s) >= 0);
  ASSERT_OK(fl_shape_make_box(0.1, 0.1, 0.1, &s));
  d = desc("box", FL_BODY_DYNAMIC, mat);
  d.mass = 1;
  d.pos[2] = 0.1;
  int b = fl_world_add_body(w, &d, &s);
  ASSERT(b >= 0);
  fl_world_reset_start(w);
  fl_solver *sv = pgs(100);
  ASSERT(sv);
  ASSERT_OK(run_steps(w, sv, 100)); // 0.1 s: still slipping, v = mu g t
  ASSERT_NEAR(w->body[b].vel[0], 0.5 * 9.81 * w->t, 0.01 * 0.5 * 9.81 * w->t);
  ASSERT_OK(run_steps(w, sv, 400)); // 0.5 s: sticking
  ASSERT_NEAR(w->body[b].vel[0], 1.0, 1e-6);
  ASSERT_NEAR(w->body[b].pos[2], 0.1, 1e-4);
  fl_solver_destroy(sv);
  fl_world_free(w);
  return 0;
}


//---- a resting stack, warm start ----

/* Three boxes resting on each other: energy never grows and every impulse is matched by
 * feature id from the previous step once the stack is at rest. */
FL_TEST(resting_stack_energy) {
  fl_world *w;
  ASSERT_OK(fl_world_create(&w));
  w->dt = 1.0 / 120;
  w->margin = 5e-3;
  fl_shape s;
  ASSERT_OK(fl_shape_make_plane(&s));
  fl_body_desc d = desc("ground", FL_BODY_FIXED, 0);
  ASSERT(fl_world_add_body(w, &d, &s) >= 0);
  for (int k = 0; k < 3; k++) {
    ASSERT_OK(fl_shape_make_box(0.25, 0.25, 0.25, &s));
    d = desc(NULL, FL_BODY_DYNAMIC, 0);
    d.mass = 10;
    d.pos[2] = 0.25 + 0.5 * k;
    ASSERT(fl_world_add_body(w, &d, &s) >= 0);
  }
  fl_world_reset_start(w);
  fl_solver *sv = pgs(3000); // converged to 1e-12: an unconverged PGS leaves nm gaps
  ASSERT(sv);
  ASSERT_OK(fl_solver_set_option(sv, "warm_start", "1"));
  double ke, pe;
  fl_world_energy_momentum(w, &ke, &pe, NULL, NULL);
  double E0 = ke + pe, Emax = E0;
  fl_step_info info;
  for (int k = 0; k < 240; k++) {
    ASSERT_OK(fl_world_step(w, sv, &info));
    fl_world_energy_momentum(w, &ke, &pe, NULL, NULL);
    if (ke + pe > Emax) Emax = ke + pe;
  }
  // 1 nanojoule on a 30 kg stack of 0.75 m mean height (E0 ~ 220 J)
  ASSERT_LE(Emax - E0, 1e-9);
  ASSERT(info.nc >= 12); // 4 or more per face pair
  ASSERT_EQ(info.warm_matched, info.nc);
  double pen;
  ASSERT_OK(fl_world_penetration(w, &pen));
  ASSERT_LE(pen, 1e-6);
  fl_solver_destroy(sv);
  fl_world_free(w);
  return 0;
}


//---- materials and assembly ----

FL_TEST(material_rules) {
  fl_material a = {"a", 0.4, 1e6, 0.01}, b = {"b", 0.6, 3e6, 0.02}, r = {"r", 0.6, INFINITY, 0};
  double mu, k, tau;
  fl_material_combine(&a, &b, FL_MU_HARMONIC, &mu, &k, &tau);
  ASSERT_NEAR(mu, 2 * 0.4 * 0.6 / 1.0, 1e-15);
  ASSERT_NEAR(k, 0.75e6, 1e-6);
  ASSERT_NEAR(tau, 0.03, 1e-15);
  fl_material_combine(&a, &b, FL_MU_MIN, &mu, NULL, NULL);
  ASSERT_NEAR(mu, 0.4, 0);
  fl_material_combine(&a, &b, FL_MU_GEOMETRIC, &mu, NULL, NULL);
  ASSERT_NEAR(mu, sqrt(0.24), 1e-15);
  fl_material_combine(&a, &r, FL_MU_MAX, &mu, &k, NULL);
  ASSERT_NEAR(mu, 0.6, 0);
  ASSERT_NEAR(k, 1e6, 0);
  fl_material_combine(&r, &r, FL_MU_MEAN, &mu, &k, NULL);
  ASSERT(isinf(k));
  // an explicit pair law overrides the rules in the assembled problem
  fl_world *w;
  ASSERT_OK(fl_world_create(&w));
  int ma = fl_world_add_material(w, "a", 0.4, 1e6, 0.01);
  int mb = fl_world_add_material(w, "b", 0.6, 3e6, 0.02);
  ASSERT_OK(fl_world_set_pair(w, mb, ma, 0.9, 5e5, 0.5));
  ASSERT(add_slope(w, 0, ma) >= 0);
  ASSERT(add_box_on_slope(w, 0, 0.1, 1, mb) >= 0);
  ASSERT_OK(fl_world_prepare(w, NULL));
  fl_problem *p = fl_world_problem(w);
  ASSERT(p && p->nc == 4);
  ASSERT_NEAR(p->mu[0], 0.9, 0);
  ASSERT_NEAR(p->stiffness[0], 5e5, 0);
  ASSERT_NEAR(p->tau_d[0], 0.5, 0);
  ASSERT_LE(fl_world_add_material(w, "bad", -1, 1, 0), -1);
  ASSERT_STR_CONTAINS(fl_errmsg(), "mu");
  fl_world_free(w);
  return 0;
}


/* The assembled problem: A holds the mass and the world inertia, v* has gravity, the contact
 * rows give u_n = relative normal velocity (> 0 separating) and the frame is normal first. */
FL_TEST(assembly_rows) {
  fl_world *w;
  ASSERT_OK(fl_world_create(&w));
  w->dt = 0.01;
  ASSERT(add_slope(w, 0, 0) >= 0);
  int b = add_box_on_slope(w, 0, 0.1, 2.0, 0);
  ASSERT(b >= 0);
  w->body[b].vel[2] = 0.3;   // moving up: separating
  w->body[b].omega[0] = 0.7; // rolling about x
  ASSERT_OK(fl_world_prepare(w, NULL));
  fl_problem *p = fl_world_problem(w);
  ASSERT(p->nv == 6 && p->nc == 4 && p->ncl == 1);
  ASSERT_OK(fl_problem_validate(p, "assembly"));
  ASSERT_NEAR(fl_csr_get(p->A, 0, 0), 2.0, 0);
  double Iref = 2.0 * (0.2 * 0.2 + 0.2 * 0.2) / 12;
  ASSERT_NEAR(fl_csr_get(p->A, 3, 3), Iref, 1e-14);
  ASSERT_NEAR(p->vstar[2], 0.3 - 9.81 * 0.01, 1e-14);
  double u[12];
  fl_problem_velocity(p, p->v0, NULL, u);
  for (fl_int c = 0; c < 4; c++) {
    const double *pt = p->point + 3 * c;
    // the body's point velocity: v + w x r
    double r[3] = {pt[0] - w->body[b].pos[0], pt[1] - w->body[b].pos[1], pt[2] - w->body[b].pos[2]};
    double wr[3], vp[3];
    fl_v3_cross(w->body[b].omega, r, wr);
    for (int k = 0; k < 3; k++) vp[k] = w->body[b].vel[k] + wr[k];
    ASSERT_NEAR(p->frame[9 * c + 2], 1.0, 1e-12); // normal +z from the ground to the box
    ASSERT_NEAR(u[3 * c], vp[2], 1e-12);
    ASSERT_NEAR(u[3 * c + 1], fl_v3_dot(vp, p->frame + 9 * c + 3), 1e-12);
    ASSERT_NEAR(u[3 * c + 2], fl_v3_dot(vp, p->frame + 9 * c + 6), 1e-12);
    ASSERT_EQ(p->clique_a[c], -1);
    ASSERT_EQ(p->clique_b[c], 0);
  }
  fl_world_free(w);
  return 0;
}


//---- out of memory ----

/* Every allocation of building a scene (boxes, convex voussoirs, joints), stepping it and
 * writing/reading it as a scene file may fail: the call returns FL_ERR_NOMEM (or succeeds),
 * nothing crashes, nothing leaks (ASan). */
static int faults_of(const char *scene, const char *set, fl_solver *s) {
  char path[64];
  snprintf(path, sizeof path, "alloc_faults_%d.json", (int)getpid());
  int failures = 0;
  for (long n = 0; n < 2000; n++) {
    fl_world *w = NULL, *w2 = NULL;
    fl_alloc_fail_after(n);
    int rc = fl_scene_create(scene, 1, &set, &w);
    if (rc >= 0) rc = fl_world_step(w, s, NULL);
    if (rc >= 0) rc = fl_world_step(w, s, NULL);
    if (rc >= 0) {
      double val[64];
      rc = fl_world_observe(w, val);
    }
    if (rc >= 0) rc = fl_world_save_json(w, path);
    if (rc >= 0) rc = fl_world_load_json(path, &w2);
    fl_alloc_fail_after(-1);
    if (rc < 0) {
      failures++;
      if (rc != FL_ERR_NOMEM) FL_FAIL_("%s, fault after %ld allocations: %d %s", scene, n, rc, fl_errmsg());
    }
    fl_world_free(w);
    fl_world_free(w2);
    if (rc >= 0) break; // every allocation of the sequence has failed once
  }
  remove(path);
  ASSERT(failures > 10);
  return 0;
}

FL_TEST(alloc_faults) {
  fl_solver *s = pgs(10);
  ASSERT(s);
  int rc = faults_of("heavy_stack", "n=2", s) || faults_of("arch_parabolic", "n=3", s) ||
           faults_of("pendulum_mass_ratio", "ratio=10", s);
  fl_solver_destroy(s);
  return rc;
}


/* Warm start: on a resting stack the impulses matched by feature id from the previous step
 * start PGS (warm_start=1) far closer to the solution than zero does on the same problem, and
 * it reaches the tolerance in fewer sweeps. (Not many fewer: the redundant contacts of a face
 * pair leave the distribution of the load free, and PGS converges slowly along it.) */
FL_TEST(warm_start_saves_sweeps) {
  fl_world *w;
  const char *set[2] = {"n=3", "ratio=1"};
  ASSERT_OK(fl_scene_create("heavy_stack", 2, set, &w));
  fl_solver *warm = pgs(5000), *cold = pgs(5000);
  ASSERT(warm && cold);
  ASSERT_OK(fl_solver_set_option(warm, "warm_start", "1"));
  ASSERT_OK(fl_solver_set_option(warm, "abs_tol", "1e-10"));
  ASSERT_OK(fl_solver_set_option(cold, "abs_tol", "1e-10"));
  for (int k = 0; k < 30; k++) ASSERT_OK(fl_world_step(w, warm, NULL));
  fl_step_info info;
  ASSERT_OK(fl_world_prepare(w, &info));
  fl_problem *p = fl_world_problem(w);
  ASSERT_EQ(info.warm_matched, p->nc);
  // the same problem from zero
  double *v = calloc((size_t)p->nv, sizeof(double));
  double *g = calloc((size_t)fl_problem_nrows(p), sizeof(double));
  fl_result rcold;
  ASSERT_OK(fl_solver_setup(cold, p));
  ASSERT_OK(fl_solver_solve(cold, p, v, g, &rcold));
  int nh;
  double e0cold = fl_solver_history(cold, &nh)[0].error;
  ASSERT_OK(fl_world_finish(w, warm, &info));
  double e0warm = fl_solver_history(warm, &nh)[0].error;
  ASSERT(rcold.reason > 0 && info.res.reason > 0);
  ASSERT_LE(e0warm * 20, e0cold);
  ASSERT_LE(info.res.iters, rcold.iters * 0.8);
  free(v);
  free(g);
  fl_solver_destroy(warm);
  fl_solver_destroy(cold);
  fl_world_free(w);
  return 0;
}


//---- the stepping loop (sim/fl_loop.h) ----

/* frames seen by the loop's frame callback: their step numbers */
typedef struct {
  long step[64];
  int n;
} frames_seen;


static int note_frame(void *ctx, fl_world *w, long step, const fl_step_info *info) {
  (void)w;
  frames_seen *f = ctx;
  if (f->n < 64) f->step[f->n] = step;
  f->n++;
  return (step == 0) == (info == NULL) ? FL_OK : FL_ERR_STATE; /* info only after a step */
}


/* The loop takes the same steps as fl_world_step called by hand (the poses equal bit for bit)
 * and counts what a hand-written loop counts: failed steps, the first of them, iterations,
 * and per limit of the scene the steps outside it and the first. heavy_stack with 5 PGS
 * sweeps fails steps and sinks past its penetration limit, so every count is exercised. The
 * recording's frames come at 0, every 7th step and the last. */
FL_TEST(loop_counts_as_stepping_by_hand) {
  enum { N = 60 };
  fl_world *wa, *wb;
  ASSERT_OK(fl_scene_create("heavy_stack", 0, NULL, &wa));
  ASSERT_OK(fl_scene_create("heavy_stack", 0, NULL, &wb));
  fl_solver *sa = pgs(5), *sb = pgs(5);
  ASSERT(sa && sb);
  // by hand
  const fl_obs_limit *lim;
  const fl_int *ix;
  fl_int nl;
  ASSERT_OK(fl_world_limits(wa, &lim, &ix, &nl));
  ASSERT(nl > 0 && nl < 16);
  double val[512];
  ASSERT(fl_world_nobs(wa) <= 512);
  long failed = 0, first_failed = -1, iters = 0, out_steps[16] = {0}, out_first[16], any = 0;
  for (int j = 0; j < 16; j++) out_first[j] = -1;
  for (long k = 0; k < N; k++) {
    fl_step_info info;
    ASSERT_OK(fl_world_step(wa, sa, &info));
    ASSERT_OK(fl_world_observe(wa, val));
    iters += info.res.iters;
    if (info.res.reason < 0 && failed++ == 0) first_failed = k;
    int out = 0;
    for (fl_int j = 0; j < nl; j++) {
      double x = val[ix[j]];
      if (x >= lim[j].lo && x <= lim[j].hi) continue;
      out = 1;
      if (out_steps[j]++ == 0) out_first[j] = k;
    }
    any += out;
  }
  // through the loop
  frames_seen fr = {{0}, 0};
  fl_loop l = {.stepper = fl_stepper_solver(sb), .steps = N, .observe = 1, .frame_every = 7,
               .frame = note_frame, .ctx = &fr};
  ASSERT_OK(fl_loop_run(&l, wb));
  ASSERT_EQ(l.taken, N);
  ASSERT_EQ(l.failed, failed);
  ASSERT_EQ(l.first_failed, first_failed);
  ASSERT_EQ(l.iters, iters);
  ASSERT_EQ(l.limit_steps, any);
  ASSERT_EQ(l.nlimit, nl);
  for (fl_int j = 0; j < nl; j++) {
    ASSERT_EQ(l.tally[j].steps, out_steps[j]);
    ASSERT_EQ(l.tally[j].first, out_first[j]);
  }
  ASSERT(failed > 0 && any > 0); /* the counts above compared something */
  for (fl_int i = 0; i < wa->nbody; i++)
    ASSERT(memcmp(wa->body[i].pos, wb->body[i].pos, sizeof wa->body[i].pos) == 0);
  for (fl_int i = 0; i < fl_world_nobs(wb); i++)
    ASSERT(val[i] == l.obs[i] || (isnan(val[i]) && isnan(l.obs[i])));
  // frames: 0, 7, 14, ..., 56 and the last, 60
  ASSERT_EQ(fr.n, 10);
  for (int k = 0; k < 9; k++) ASSERT_EQ(fr.step[k], 7L * k);
  ASSERT_EQ(fr.step[9], (long)N);
  fl_loop_free(&l);
  fl_solver_destroy(sa);
  fl_solver_destroy(sb);
  fl_world_free(wa);
  fl_world_free(wb);
  return 0;
}


static int stop_at_ten(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  (void)ctx;
  (void)w;
  (void)info;
  (void)val;
  return k == 9 ? FL_LOOP_STOP : FL_OK;
}


/* FL_LOOP_STOP from the callback ends the run after that step, which counts: ten steps of
 * dt taken, the world's time 10 dt. */
FL_TEST(loop_stops_when_asked) {
  fl_world *w;
  ASSERT_OK(fl_scene_create("ball_slope", 0, NULL, &w));
  fl_solver *s = pgs(100);
  ASSERT(s);
  fl_loop l = {.stepper = fl_stepper_solver(s), .steps = 1000, .each = stop_at_ten};
  ASSERT_OK(fl_loop_run(&l, w));
  ASSERT_EQ(l.taken, 10L);
  ASSERT_EQ((long)w->step, 10L);
  ASSERT_NEAR(w->t, 10 * w->dt, 1e-12);
  fl_loop_free(&l);
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
/* test_verify.c: the analytic suite of `frictionlab verify` (docs/verify.md). The scheme's
 * own answers (fl__verify_ref_*) against their discrete closed forms and their continuous
 * limits, then each case simulated with NSN's Alart-Curnier setting (a solver that solves the
 * rigid step exactly) and judged on the motion: every quantity within its tolerance.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/verify/fl_verify.h"
#include "../sim/fl_world.h"
#include "fl_test.h"

#define G 9.81
#define NMAX 200001

static double xs[NMAX], vs[NMAX], us[NMAX];


//---- the scheme's answers ----

/* sliding to rest: K = ceil(v0/(a dt)) - 1 slipping steps, d = dt (K v0 - a dt K(K+1)/2);
 * d -> v0^2/(2 a) as dt -> 0 */
FL_TEST(ref_slide_closed_form) {
  double v0 = 2, mu = 0.5, a = mu * G;
  double dts[2] = {0.01, 1e-5};
  for (int k = 0; k < 2; k++) {
    double dt = dts[k];
    int n = (int)(1.0 / dt);
    fl__verify_ref_1d(dt, n, v0, mu, G, 0, 0, 0, xs, vs);
    double K = ceil(v0 / (a * dt)) - 1, d = dt * (K * v0 - a * dt * K * (K + 1) / 2);
    ASSERT_NEAR(xs[n], d, 1e-12);
    ASSERT(vs[(int)K] > 0 && vs[(int)K + 1] == 0);
    ASSERT_LE(fabs(xs[n] - v0 * v0 / (2 * a)), v0 * dt); /* first order in dt */
  }
  return 0;
}


/* slope: x_n = a dt^2 n (n + 1)/2 with a = g (sin - mu cos) above the friction angle; 0 below */
FL_TEST(ref_slope_closed_form) {
  double mu = 0.5, dt = 0.01, th = 35 * M_PI / 180, a = G * (sin(th) - mu * cos(th));
  int n = 100;
  fl__verify_ref_1d(dt, n, 0, mu, G * cos(th), G * sin(th), 0, 0, xs, vs);
  ASSERT_NEAR(xs[n], a * dt * dt * n * (n + 1) / 2, 1e-12);
  ASSERT_NEAR(vs[n], a * n * dt, 1e-12);
  th = 20 * M_PI / 180;
  fl__verify_ref_1d(dt, n, 0, mu, G * cos(th), G * sin(th), 0, 0, xs, vs);
  ASSERT_EQ(xs[n] == 0, 1);
  th = atan(mu);
  fl__verify_ref_1d(dt, n, 0, mu, G * cos(th), G * sin(th), 0, 0, xs, vs);
  ASSERT_LE(fabs(xs[n]), 1e-15);
  return 0;
}


/* a force c m t from rest: sticks until t_on = mu g/c, then x = c dt^3 M (M+1)(M+2)/6 after
 * M slipping steps (continuous: c (t - t_on)^3/6) */
FL_TEST(ref_drag_closed_form) {
  double mu = 0.5, dt = 0.01, ton = 0.5, c = mu * G / ton;
  int non = 50, n = 90, M = n - 1 - non;
  fl__verify_ref_1d(dt, n, 0, mu, G, 0, c, 2 * ton, xs, vs);
  ASSERT_LE(fabs(xs[non + 1]), 1e-15); /* still stuck at t_on */
  ASSERT_NEAR(xs[n], c * dt * dt * dt * M * (M + 1.0) * (M + 2.0) / 6, 1e-12);
  ASSERT_NEAR(vs[n], c * dt * dt * M * (M + 1.0) / 2, 1e-12);
  double T = n * dt;
  ASSERT_LE(fabs(xs[n] - c * pow(T - ton, 3) / 6) / xs[n], 0.1); /* O(dt/(T - t_on)) */
  return 0;
}


/* sphere released sliding: rolls at t = 2 v0/(7 mu g) (within a step), after 12 v0^2/(49 mu g)
 * (within v0 dt), at exactly 5 v0/7 (angular momentum about the contact point) */
FL_TEST(ref_sphere_closed_form) {
  double v0 = 3, mu = 0.2, dt = 0.01;
  int n = 100;
  fl__verify_ref_sphere(dt, n, v0, mu, G, 0, xs, vs, us);
  ASSERT_NEAR(vs[n], 5 * v0 / 7, 1e-12);
  int kr = -1;
  for (int i = 1; i <= n && kr < 0; i++)
    if (us[i] == 0) kr = i;
  ASSERT(kr > 0);
  ASSERT_LE(fabs(kr * dt - 2 * v0 / (7 * mu * G)), dt);
  ASSERT_LE(fabs(xs[kr] - 12 * v0 * v0 / (49 * mu * G)), v0 * dt);
  /* rolling down a slope without slip: a = 5/7 g sin, x_n = a dt^2 n (n+1)/2 */
  double th = 30 * M_PI / 180, a = 5.0 / 7 * G * sin(th);
  fl__verify_ref_sphere(dt, n, 0, 0.5, G * cos(th), G * sin(th), xs, vs, us);
  ASSERT_NEAR(xs[n], a * dt * dt * n * (n + 1) / 2, 1e-12);
  for (int i = 0; i <= n; i++) ASSERT_LE(fabs(us[i]), 1e-12);
  return 0;
}


/* rolling: a solid cylinder on its side (k = m R^2/I = 2) rolls down theta with a = 2/3 g sin
 * and x_n = a dt^2 n (n+1)/2 while mu >= tan(theta)/3; below it slips with a = g (sin - mu
 * cos) and its spin grows at 2 mu g cos / R; a sphere (k = 5/2) is fl__verify_ref_sphere */
FL_TEST(ref_roll_closed_form) {
  double dt = 0.01, th = 40 * M_PI / 180, a = 2.0 / 3 * G * sin(th);
  int n = 200;
  fl__verify_ref_roll(dt, n, 0, 0, 0.5, G * cos(th), G * sin(th), 2, xs, vs, us);
  ASSERT_NEAR(xs[n], a * dt * dt * n * (n + 1) / 2, 1e-12);
  for (int i = 0; i <= n; i++) ASSERT_LE(fabs(us[i]), 1e-12);
  double mu = 0.15, as = G * (sin(th) - mu * cos(th)), aw = 2 * mu * G * cos(th);
  ASSERT(mu < tan(th) / 3);
  fl__verify_ref_roll(dt, n, 0, 0, mu, G * cos(th), G * sin(th), 2, xs, vs, us);
  ASSERT_NEAR(vs[n], as * n * dt, 1e-12);
  ASSERT_NEAR(us[n], (as - aw) * n * dt, 1e-12);
  double x2[201], v2[201], u2[201];
  fl__verify_ref_sphere(dt, n, 0.5, 0.2, G, 0.3, xs, vs, us);
  fl__verify_ref_roll(dt, n, 0.5, 0, 0.2, G, 0.3, 2.5, x2, v2, u2);
  ASSERT_NEAR(xs[n], x2[n], 0);
  // rolling at 1 m/s on flat ground: x = v0 t, no slip
  fl__verify_ref_roll(dt, n, 1.0, 1, 0.5, G, 0, 2, xs, vs, us);
  ASSERT_NEAR(xs[n], n * dt, 1e-12);
  ASSERT_NEAR(us[n], 0, 0);
  return 0;
}


/* turntable: co-rotating, the explicit position update spirals out by sqrt(1 + w^2 dt^2) per
 * step; beyond r_c = mu g/w^2 the block slips outward */
FL_TEST(ref_turntable_closed_form) {
  double mu = 0.5, om = 2 * M_PI, rc = mu * G / (om * om), dt = 1e-3;
  int n = 1000;
  double r = fl__verify_ref_turntable(dt, n, 0.9 * rc, om, mu);
  ASSERT_NEAR(r / (0.9 * rc), pow(1 + om * om * dt * dt, n / 2.0), 1e-10);
  r = fl__verify_ref_turntable(dt, n, 1.1 * rc, om, mu);
  ASSERT(r > 1.3 * rc);
  /* the continuous limit: no drift below r_c */
  r = fl__verify_ref_turntable(1e-5, 100000, 0.99 * rc, om, mu);
  ASSERT_NEAR(r, 0.99 * rc, 2e-3 * rc);
  return 0;
}


/* two blocks (issue 50): stuck together they move at a = (F - mu0 (m1 + m2) g)/(m1 + m2),
 * x_n = a dt^2 n (n + 1)/2, whatever dt, while m2 a <= mu1 m2 g; above it the upper block
 * slips at a2 = mu1 g and the lower one runs at a1 = (F - mu1 m2 g - mu0 (m1 + m2) g)/m1 */
FL_TEST(ref_blocks_closed_form) {
  static double x2[NMAX], v2[NMAX];
  double dt = 0.01, m1 = 2, m2 = 1, mu0 = 0.1, mu1 = 0.3;
  int n = 100;
  double F = 9, a = (F - mu0 * (m1 + m2) * G) / (m1 + m2);
  ASSERT(a <= mu1 * G);
  fl__verify_ref_blocks(dt, n, m1, m2, F, mu0, mu1, xs, vs, x2, v2);
  ASSERT_NEAR(xs[n], a * dt * dt * n * (n + 1) / 2, 1e-12);
  ASSERT_NEAR(vs[n], a * n * dt, 1e-12);
  ASSERT_NEAR(x2[n], xs[n], 1e-12);
  F = 14;
  double a1 = (F - mu1 * m2 * G - mu0 * (m1 + m2) * G) / m1, a2 = mu1 * G;
  ASSERT((F - mu0 * (m1 + m2) * G) / (m1 + m2) > mu1 * G);
  fl__verify_ref_blocks(dt, n, m1, m2, F, mu0, mu1, xs, vs, x2, v2);
  ASSERT_NEAR(xs[n], a1 * dt * dt * n * (n + 1) / 2, 1e-12);
  ASSERT_NEAR(vs[n], a1 * n * dt, 1e-12);
  ASSERT_NEAR(x2[n], a2 * dt * dt * n * (n + 1) / 2, 1e-12);
  ASSERT_NEAR(v2[n], a2 * n * dt, 1e-12);
  /* at the threshold F = (m1 + m2)(mu0 + mu1) g the blocks still move together */
  F = (m1 + m2) * (mu0 + mu1) * G;
  fl__verify_ref_blocks(dt, n, m1, m2, F, mu0, mu1, xs, vs, x2, v2);
  ASSERT_NEAR(x2[n], xs[n], 1e-12);
  /* below the ground's friction nothing moves */
  fl__verify_ref_blocks(dt, n, m1, m2, 0.9 * mu0 * (m1 + m2) * G, mu0, mu1, xs, vs, x2, v2);
  ASSERT(xs[n] == 0 && x2[n] == 0);
  return 0;
}


/* tipping: the hinge stands until the first step with F(t_k) h > m g w/2, t_k > T hw/(h fmax),
 * then its first step turns at dt (F(t_k) h - m g hw)/I_p exactly; as dt -> 0 it converges to
 * the continuous rotation (RK4 at dt 1e-5 here) at first order */
FL_TEST(ref_tip_closed_form) {
  double fmax = 0.35, T = 1, h = 0.4, hw = 0.1, hh = 0.2, dt = 0.01;
  double Ip = (4 * hw * hw + 4 * hh * hh) / 12 + hw * hw + hh * hh;
  int n = 120;
  fl__verify_ref_tip(dt, n, fmax, T, h, hw, hh, xs, vs);
  int k0 = (int)floor(T * hw / (h * fmax) / dt) + 1; /* the first t_k past the threshold */
  ASSERT_EQ(k0, 72);
  ASSERT(xs[k0] == 0 && vs[k0] == 0);
  ASSERT_NEAR(vs[k0 + 1], dt * (fmax * G * k0 * dt / T * h - G * hw) / Ip, 1e-15);
  ASSERT(xs[n] > atan(hw / hh)); /* past the toppling angle after 1.2 s */
  /* the continuous rotation from the threshold time, RK4 */
  double t = T * hw / (h * fmax), th = 0, om = 0, hstep = 1e-5;
  for (; t < n * dt - 0.5 * hstep; t += hstep) {
    double k[4][2], y[2] = {th, om};
    for (int s = 0; s < 4; s++) {
      double c = s == 0 ? 0 : s == 3 ? 1 : 0.5, a = y[0] + (s ? c * hstep * k[s - 1][0] : 0);
      double w = y[1] + (s ? c * hstep * k[s - 1][1] : 0), tt = t + c * hstep, F = fmax * G * fmin(tt / T, 1);
      k[s][0] = w;
      k[s][1] = (F * (h - hh + hw * sin(a) + hh * cos(a)) + G * (hh * sin(a) - hw * cos(a))) / Ip;
    }
    th += hstep / 6 * (k[0][0] + 2 * k[1][0] + 2 * k[2][0] + k[3][0]);
    om += hstep / 6 * (k[0][1] + 2 * k[1][1] + 2 * k[2][1] + k[3][1]);
  }
  double e1 = fabs(xs[n] - th) / th;
  fl__verify_ref_tip(dt / 10, 10 * n, fmax, T, h, hw, hh, xs, vs);
  double e2 = fabs(xs[10 * n] - th) / th;
  fprintf(stderr, "hinge after 1.2 s: continuous %.6f rad, dt 0.01 off by %.3g, dt 0.001 by %.3g\n", th, e1, e2);
  ASSERT(e2 < e1 / 5 && e2 < 0.02);
  return 0;
}


//---- the cases in the world ----

typedef struct {
  const char *settings; /* the row to judge */
  int nq, npass, nother;
  char why[512];
} seen;


static int on_row(void *ctx, const fl_verify_row *r) {
  seen *s = ctx;
  if (strcmp(r->settings, s->settings)) return FL_OK;
  if (r->status != 0) {
    s->nother++;
    return FL_OK;
  }
  s->nq++;
  s->npass += r->pass;
  if (!r->pass) {
    size_t l = strlen(s->why);
    snprintf(s->why + l, sizeof s->why - l, "%s %s: expected %.9g measured %.9g; ", r->case_name,
             r->quantity, r->expected, r->measured);
  }
  return FL_OK;
}


/* every quantity of the cases passes with NSN's Alart-Curnier setting (quick durations, or
 * the full ones for cases of the full suite only) */
static int cases_pass_row(int quick, const char *only, const char *settings, int nq_min) {
  fl_register_all();
  fl_verify_opts o = {quick, only, "nsn", 0, NULL};
  seen s = {settings, 0, 0, 0, ""};
  ASSERT_OK(fl__verify_run(&o, on_row, &s));
  if (s.npass != s.nq) fprintf(stderr, "failed: %s\n", s.why);
  ASSERT_EQ(s.nother, 0);
  ASSERT(s.nq >= nq_min);
  ASSERT_EQ(s.npass, s.nq);
  return 0;
}


static int cases_pass_at(int quick, const char *only, int nq_min) {
  return cases_pass_row(quick, only, "ncp=ac", nq_min);
}


static int cases_pass(const char *only, int nq_min) { return cases_pass_at(1, only, nq_min); }


FL_TEST(slide) { return cases_pass("slide", 3); }
/* issue 50: the rolling family (a cylinder on its side rolling down 40 deg and slipping below
 * tan/3, rolling on flat ground; a sphere slipping) with the full 200 steps: SAP, NSN, PGS
 * and Jacobi at their defaults reproduce the scheme's distance and speed within 0.1 %, never
 * leave the plane (no airborne step, no lift), and lose under 0.1 % of the energy per second */
static int rolling_pass(const char *solver) {
  fl_register_all();
  fl_verify_opts o = {0, "roll_cyl,roll_cyl_slip,roll_cyl_flat,roll_sphere_slip", solver, 0, NULL};
  seen s = {"", 0, 0, 0, ""};
  ASSERT_OK(fl__verify_run(&o, on_row, &s));
  if (s.npass != s.nq) fprintf(stderr, "%s failed: %s\n", solver, s.why);
  ASSERT_EQ(s.nother, 0);
  ASSERT_EQ(s.nq, 21);
  ASSERT_EQ(s.npass, s.nq);
  return 0;
}
FL_TEST(rolling_sap) { return rolling_pass("sap"); }
FL_TEST(rolling_nsn) { return rolling_pass("nsn"); }
FL_TEST(rolling_pgs) { return rolling_pass("pgs"); }
FL_TEST(rolling_jacobi) { return rolling_pass("jacobi"); }

/* a solver at its defaults passes every quantity of the named cases (full durations) */
static int defaults_pass(const char *only, const char *solver, int nq) {
  fl_register_all();
  fl_verify_opts o = {0, only, solver, 0, NULL};
  seen s = {"", 0, 0, 0, ""};
  ASSERT_OK(fl__verify_run(&o, on_row, &s));
  if (s.npass != s.nq) fprintf(stderr, "%s failed: %s\n", solver, s.why);
  ASSERT_EQ(s.nother, 0);
  ASSERT_EQ(s.nq, nq);
  ASSERT_EQ(s.npass, s.nq);
  return 0;
}
/* issue 50: the same cylinder rolling at 1 m/s on a fixed box's top face (roll_cyl_box, 6
 * quantities): the box sees the round cylinder (sim/collide.c, box_cylinder_face), so it keeps
 * its speed and never leaves the face; on the 24-sided polygon NSN's cylinder slowed from 1 to
 * 0.20 m/s over the 2 s and bumped 0.85 mm */
FL_TEST(rolling_on_box_sap) { return defaults_pass("roll_cyl_box", "sap", 6); }
FL_TEST(rolling_on_box_nsn) { return defaults_pass("roll_cyl_box", "nsn", 6); }
FL_TEST(rolling_on_box_pgs) { return defaults_pass("roll_cyl_box", "pgs", 6); }
/* issue 50: a block on a block, stuck together and slipping (9 quantities): SAP, NSN and PGS
 * at their defaults reproduce fl__verify_ref_blocks within 0.1 % (NSN and PGS to 1e-9) */
#define BLOCKS "block_on_block_stick,block_on_block_slip"
FL_TEST(block_on_block_sap) { return defaults_pass(BLOCKS, "sap", 9); }
FL_TEST(block_on_block_nsn) { return defaults_pass(BLOCKS, "nsn", 9) || cases_pass_at(0, BLOCKS, 9); }
FL_TEST(block_on_block_pgs) { return defaults_pass(BLOCKS, "pgs", 9); }

/* issue 50: a tall box (0.2 wide, 0.4 high) pushed at its top by a ramped force: at mu 0.1 <
 * (w/2)/h it slides upright (onset, distance and speed of fl__verify_ref_1d, no rotation); at
 * mu 0.5 it tips about its front edge from the step where F h > m g w/2 (0.73 s), the edge
 * does not slide, and the angle follows the hinge recursion within 1 % (8 quantities) */
#define TIPS "tip_vs_slide_slides,tip_vs_slide_tips"
FL_TEST(tip_vs_slide_sap) { return defaults_pass(TIPS, "sap", 8); }
FL_TEST(tip_vs_slide_nsn) { return defaults_pass(TIPS, "nsn", 8) || cases_pass_at(0, TIPS, 8); }
FL_TEST(tip_vs_slide_pgs) { return defaults_pass(TIPS, "pgs", 8); }

/* issue 50: a stack of five boxes and a 3-2-1 pyramid placed touching stay at rest (no body
 * moves 0.1 mm or reaches 1 mm/s in 2 s): NSN at its defaults and with Alart-Curnier, PGS at its
 * defaults on the pyramid and with 1000 sweeps on both, SAP with beta 0.01 on both. SAP at its
 * defaults (beta 1) settles the stack by 0.40 mm (its near-rigid contact's give) and PGS's 100
 * sweeps let it sink 2.3 mm: failures reported in docs/verify.md, not asserted here */
#define RESTS "stack_rest,pyramid_rest"
static int rest_row(const char *solver, const char *settings, const char *only, int nq) {
  fl_register_all();
  fl_verify_opts o = {0, only, solver, 0, NULL};
  seen s = {settings, 0, 0, 0, ""};
  ASSERT_OK(fl__verify_run(&o, on_row, &s));
  if (s.npass != s.nq) fprintf(stderr, "%s %s failed: %s\n", solver, settings, s.why);
  ASSERT_EQ(s.nother, 0);
  ASSERT_EQ(s.nq, nq);
  ASSERT_EQ(s.npass, s.nq);
  return 0;
}
FL_TEST(rest_nsn) { return defaults_pass(RESTS, "nsn", 4) || cases_pass_at(0, RESTS, 4); }
FL_TEST(rest_pgs) { return defaults_pass("pyramid_rest", "pgs", 2) || rest_row("pgs", "max_iter=1000", RESTS, 4); }
FL_TEST(rest_sap) { return rest_row("sap", "beta=0.01", RESTS, 4); }

/* issue 50: a deformable 0.1 m cube (48 linear tets, E 1e6 Pa) sliding to rest from 2 m/s at
 * mu 0.5: its centre of mass follows the rigid slide's recursion (0.39779 m, stopped at 0.41 s)
 * within 0.1 % (NSN -1.07e-4: the block's elastic settling and shear, 1.08e-5 at E 1e7), ends at
 * rest and does not rise: SAP, NSN and PGS at their defaults */
FL_TEST(fem_slide_sap) { return defaults_pass("fem_slide", "sap", 4); }
FL_TEST(fem_slide_nsn) { return defaults_pass("fem_slide", "nsn", 4); }
FL_TEST(fem_slide_pgs) { return defaults_pass("fem_slide", "pgs", 4); }

FL_TEST(slope_gravity_tilted) { return cases_pass("slope_below_g,slope_at_g,slope_above_g", 9); }
FL_TEST(slope_plane_tilted) { return cases_pass("slope_below_tilt,slope_at_tilt,slope_above_tilt", 9); }
FL_TEST(drag) { return cases_pass("drag", 4); }
FL_TEST(sphere_slide) { return cases_pass("sphere_slide", 3); }
FL_TEST(sphere_roll) { return cases_pass("sphere_roll", 3); }
FL_TEST(turntable) { return cases_pass("turntable_stick,turntable_slip", 2); }
/* issue 50: the driven turntable (a revolute joint's drive row holds the table at 2 pi rad/s):
 * sticking, the radius after k steps is r0 (1 + omega^2 dt^2)^(k/2), and step k + 1 asks for
 * omega^2 r_k of friction, so the recursion's first slipping step is k + 1 with the closed
 * form k = floor(2 ln(r_c/r0) / ln(1 + omega^2 dt^2)) + 1; NSN at its defaults (Alart-Curnier
 * with the joint's rows) releases the cube there (release_s: slip above 1e-4 m/s, within one
 * step at dt 0.01 and 0.1 % at 1e-3) and ends at the recursion's radius within 0.1 % */
FL_TEST(turntable_driven) {
  double mu = 0.5, om = 2 * M_PI, rc = mu * G / (om * om), r0 = 0.95 * rc;
  double dts[2] = {0.01, 1e-3};
  for (int k = 0; k < 2; k++) {
    double dt = dts[k], w2 = om * om * dt * dt;
    int n = (int)(3.0 / dt), kr;
    fl__verify_ref_turntable_release(dt, n, r0, om, mu, 0, &kr);
    int kc = (int)floor(2 * log(rc / r0) / log1p(w2)) + 1;
    ASSERT_EQ(kr, kc + 1); /* the step after: its start point is r_kc's end point */
    ASSERT(r0 * pow(1 + w2, 0.5 * (kc - 1)) * om * om <= mu * G);
    ASSERT(r0 * pow(1 + w2, 0.5 * kc) * om * om > mu * G);
  }
  return cases_pass_row(0, "turntable_driven,turntable_coarse", "", 4);
}
FL_TEST(heavy_on_light) { return cases_pass("heavy_on_light", 4); }
FL_TEST(compliant_sink) { return cases_pass("compliant_sink", 1); }
/* issue 50: the coin against the published disk read the same way (eps 0.667222 at 10 mu g dt,
 * stop 0.483045 s from 1 m/s, eps0 1). SAP at its defaults passes both on the default 12-ring
 * patch (measured -0.27 %, +0.2 %) and fails both on the seed's fan (-3.45 %, +3.5 %). */
typedef struct {
  int eps_pass, eps_fail, fan_fail, n;
} coin_seen;
static int on_coin(void *ctx, const fl_verify_row *r) {
  coin_seen *s = ctx;
  if (strcmp(r->settings, "") || r->status != 0) return FL_OK;
  s->n++;
  if (!strcmp(r->case_name, "coin_eps")) {
    if (r->pass) s->eps_pass++;
    else {
      s->eps_fail++;
      fprintf(stderr, "coin_eps %s: expected %.9g measured %.9g\n", r->quantity, r->expected, r->measured);
    }
    if (!strcmp(r->quantity, "eps_star") && fabs(r->expected - 0.667222) > 1e-6) s->eps_fail++;
  }
  if (!strcmp(r->case_name, "coin_fan")) s->fan_fail += !r->pass;
  return FL_OK;
}
FL_TEST(coin_default_patch_sap) {
  fl_register_all();
  fl_verify_opts o = {0, "coin_eps,coin_fan", "sap", 0, NULL};
  coin_seen s = {0, 0, 0, 0};
  ASSERT_OK(fl__verify_run(&o, on_coin, &s));
  ASSERT_EQ(s.n, 4);
  ASSERT_EQ(s.eps_pass, 2);
  ASSERT_EQ(s.eps_fail, 0);
  ASSERT_EQ(s.fan_fail, 2);
  return 0;
}
/* the 25-stone arch on knife edges stands at mu 1.0 and falls at 0.2 (seed 000) */
FL_TEST(arch_knife_edges) { return cases_pass_at(0, "arch_stand,arch_fall", 2); }
/* the semicircular arch stands at 1.2 and falls at 0.8 times its sliding limit 0.309215
 * (9 s in Release: labelled slow, out of the sanitizer pass) */
FL_TEST(slow_semiarch_sliding_limit) { return cases_pass_at(0, "semiarch_stand,semiarch_fall", 2); }
/* Hertz line contact on the 12-ring FEM cylinder: the plates' approach within 2 % (NSN at its
 * defaults: Alart-Curnier with the bilateral rows). 10 s in Release: labelled slow. */
FL_TEST(slow_hertz_line) { return cases_pass_row(0, "hertz_line", "", 1); }
/* zong-fig6's FEM cube (2 cells per edge in --quick): the panels' normal forces equal the
 * push and each carries m g / 2 of friction, the cube at rest; frictionless and without
 * gravity it takes the uniaxial strains F/(E a^2) and nu F/(E a^2). NSN with the settings of
 * docs/bench-world.md (the default passes too since NSN's Alart-Curnier takes the joints'
 * rows; with Fischer-Burmeister it left the friction split 0.16 % uneven after 5 failed steps). */
FL_TEST(elastic_cube) {
  return cases_pass_row(1, "cube_hang,cube_compress", "line_search=backtrack,warm_start=true", 10);
}

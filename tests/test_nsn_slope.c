// SPDX-License-Identifier: Apache-2.0
/* test_nsn_slope.c: NSN's default on simulation steps against the closed form of a box on a
 * slope (docs/nsn.md, "The default on world steps").
 *
 * A 1 kg cube (edge 0.2 m) rests on the plane z = 0 with gravity tilted by theta about y, so
 * that x is downhill: g = 9.81 (sin theta, 0, -cos theta). Above the friction angle
 * (tan theta > mu) it slides with a = g (sin theta - mu cos theta); below it sticks. The
 * stepper is semi-implicit Euler, so after n steps from rest v = n a dt and the displacement is
 * a dt^2 n (n + 1) / 2 exactly (the Coulomb solution of every step is the closed form).
 *
 * tests/data/slope_slide.json is the scene at theta = 30 deg, mu = 0.5, dt = 0.01 s;
 * tests/data/slope_slide-step0.hdf5 its first step exported to FCLIB (`frictionlab export
 * tests/data/slope_slide.json --steps 0`), on which the old world-step setting of NSN
 * (Fischer-Burmeister, damped step 0.75 without line search) fails and keeps the box stuck.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fl_world.h"
#include "solvers/fl_solver.h"
#include "tests/fl_test.h"

#define G 9.81
#define DT 0.01

static const char *src_dir(void) {
  const char *d = getenv("FL_SOURCE_DIR");
  return d && *d ? d : FL_SOURCE_DIR;
}

/* the slope scene as a scene file's text: theta (deg), mu; force_x > 0 instead puts the box
 * on a level plane (theta ignored) with a horizontal force ramped from 0 at t = 0 to force_x
 * at t = 1 s */
static void scene_text(char *buf, size_t n, double theta, double mu, double force_x) {
  double t = theta * M_PI / 180, gx = force_x > 0 ? 0 : G * sin(t),
         gz = force_x > 0 ? -G : -G * cos(t);
  char forces[160] = "";
  if (force_x > 0)
    snprintf(forces, sizeof forces,
             ",\"forces\": [{\"body\": \"box\", \"force\": [%.17g, 0, 0], \"ramp\": [0, 1]}]",
             force_x);
  snprintf(buf, n,
           "{\"format\": \"frictionlab-scene\", \"name\": \"slope\", \"gravity\": [%.17g, 0, "
           "%.17g], \"dt\": %g, \"margin\": 0.001, \"materials\": [{\"name\": \"default\", "
           "\"mu\": %.17g}], \"bodies\": [{\"name\": \"ground\", \"kind\": \"fixed\", \"shape\": "
           "{\"type\": \"plane\"}}, {\"name\": \"box\", \"shape\": {\"type\": \"box\", \"size\": "
           "[0.1, 0.1, 0.1]}, \"mass\": 1.0, \"position\": [0, 0, 0.1]}]%s}",
           gx, gz, DT, mu, forces);
}

/* n steps of the scene with nsn and opts ("k=v,..."); the box's x velocity and displacement,
 * the largest |z - 0.1| over the run (m) and the failed steps; 0 or the failing line */
static int run_scene(double theta, double mu, double force_x, const char *opts, int n,
                     double *vx, double *dx, double *dz, int *failed, double *onset) {
  char text[1024];
  scene_text(text, sizeof text, theta, mu, force_x);
  fl_world *w = NULL;
  fl_solver *s = NULL;
  ASSERT_OK(fl_world_parse_json(text, "slope", &w));
  ASSERT_OK(fl_register_all());
  ASSERT_OK(fl_solver_create("nsn", &s));
  if (opts && *opts) ASSERT_OK(fl_solver_set_options(s, opts));
  int b = fl_world_find_body(w, "box");
  ASSERT(b >= 0);
  double x0 = w->body[b].pos[0];
  *failed = 0;
  *dz = 0;
  if (onset) *onset = NAN;
  for (int k = 0; k < n; k++) {
    fl_step_info info;
    ASSERT_OK(fl_world_step(w, s, &info));
    *failed += info.res.reason < 0;
    *dz = fmax(*dz, fabs(w->body[b].pos[2] - 0.1));
    if (onset && isnan(*onset) && w->body[b].vel[0] > 1e-6) *onset = w->t;
    ASSERT(isfinite(w->body[b].vel[0]) && isfinite(w->body[b].pos[0]));
  }
  *vx = w->body[b].vel[0];
  *dx = w->body[b].pos[0] - x0;
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}

/* the default slides at the closed form above the friction angle (20 steps: v and the
 * displacement within 1 % of n a dt and a dt^2 n (n + 1)/2, no hop), sticks below it, and holds
 * at the borderline mu = tan theta */
FL_TEST(default_slope_closed_form) {
  double th = 30, mu = 0.5, a = G * (sin(th * M_PI / 180) - mu * cos(th * M_PI / 180));
  int n = 20, failed;
  double vx, dx, dz;
  ASSERT_OK(run_scene(th, mu, 0, NULL, n, &vx, &dx, &dz, &failed, NULL));
  printf("slide: v %.9g (closed form %.9g), dx %.9g (%.9g), |dz| %.3g, failed %d\n", vx,
         n * a * DT, dx, a * DT * DT * n * (n + 1) / 2, dz, failed);
  ASSERT_EQ(failed, 0);
  ASSERT_NEAR(vx, n * a * DT, 0.01 * n * a * DT);
  ASSERT_NEAR(dx, a * DT * DT * n * (n + 1) / 2, 0.01 * a * DT * DT * n * (n + 1) / 2);
  ASSERT(dz < 1e-4);
  // below the friction angle: sticks (mu 0.7 > tan 30 deg = 0.577)
  ASSERT_OK(run_scene(th, 0.7, 0, NULL, 100, &vx, &dx, &dz, &failed, NULL));
  printf("stick: v %.3g, dx %.3g, failed %d\n", vx, dx, failed);
  ASSERT_EQ(failed, 0);
  ASSERT(fabs(dx) < 1e-5);
  // borderline mu = tan theta: Coulomb allows rest, the box holds (slides 0 in 1 s)
  ASSERT_OK(run_scene(th, tan(th * M_PI / 180), 0, NULL, 100, &vx, &dx, &dz, &failed, NULL));
  printf("borderline: v %.3g, dx %.3g, failed %d\n", vx, dx, failed);
  ASSERT_EQ(failed, 0);
  ASSERT(fabs(dx) < 1e-4);
  return 0;
}


/* a box dragged by a horizontal force ramped at 9.81 N/s through mu m g = 4.905 N (mu 0.5):
 * the stepper applies the force of the step's start t_k = k dt, so the closed form of the
 * discrete motion is v_n = sum_k dt max(0, F(t_k) - mu m g)/m (the force only grows, so a box
 * that moves keeps moving): it starts in the step that begins after t* = 0.5 s (the first one
 * with v > 1e-6 m/s ends at 0.52 s) and has v = 9.81 dt^2 (1 + ... + 49) = 1.2017 m/s at 1 s
 * (the continuous 9.81 (t - t*)^2 / 2 = 1.2263 m/s differs by the step's first-order error) */
FL_TEST(default_drag_onset) {
  int failed, n = 100;
  double vx, dx, dz, onset, vex = 0, t_on = NAN;
  ASSERT_OK(run_scene(0, 0.5, G, NULL, n, &vx, &dx, &dz, &failed, &onset));
  for (int k = 0; k < n; k++) {
    double f = G * (k * DT) - 0.5 * G;
    if (f > 0) {
      vex += DT * f;
      if (isnan(t_on) && vex > 1e-6) t_on = (k + 1) * DT;
    }
  }
  printf("drag: onset %.4g s (discrete closed form %.4g, continuous 0.5), v(1 s) %.9g (%.9g), "
         "failed %d, |dz| %.3g\n", onset, t_on, vx, vex, failed, dz);
  ASSERT_EQ(failed, 0);
  ASSERT_NEAR(onset, t_on, 1e-9);
  ASSERT_NEAR(vx, vex, 0.01 * vex);
  ASSERT(dz < 1e-4);
  return 0;
}


/* the slope's first step in FCLIB: the old world-step setting (ncp=fb, line_search=none, the
 * damped step alpha = 0.75, 100 Newton iterations) fails and leaves the box nearly stuck; the
 * default converges with the box's downhill velocity a dt within 1 % */
FL_TEST(fclib_slope_step_old_sticks_new_slides) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/data/slope_slide-step0.hdf5", src_dir());
  fl_problem *p = NULL;
  int rc = fl_problem_load_fclib(path, &p);
  if (rc == FL_ERR_UNSUPPORTED) SKIP("no FCLIB reader in this build");
  ASSERT_OK(rc);
  ASSERT(p->kind == FL_PROBLEM_GLOBAL && p->nv == 6);
  double a = G * (sin(M_PI / 6) - 0.5 * cos(M_PI / 6)), vex = a * DT;
  const char *opts[2] = {"ncp=fb,line_search=none,alpha=0.75,max_iter=100", ""};
  double vx[2];
  int reason[2];
  for (int k = 0; k < 2; k++) {
    fl_solver *s = NULL;
    ASSERT_OK(fl_register_all());
    ASSERT_OK(fl_solver_create("nsn", &s));
    if (*opts[k]) ASSERT_OK(fl_solver_set_options(s, opts[k]));
    double *v = fl_calloc((size_t)p->nv, sizeof(double));
    double *g = fl_calloc((size_t)(3 * p->nc), sizeof(double));
    ASSERT(v && g);
    fl_result res;
    ASSERT_OK(fl_solver_setup(s, p));
    ASSERT_OK(fl_solver_solve(s, p, v, g, &res));
    vx[k] = v[0];
    reason[k] = res.reason;
    printf("%s: reason %s after %d iterations, v_x %.9g (closed form %.9g), v_z %.3g\n",
           *opts[k] ? opts[k] : "default", fl_reason_name(res.reason), res.iters, v[0], vex,
           v[2]);
    for (int j = 0; j < p->nv; j++) ASSERT(isfinite(v[j]));
    if (k == 1) {
      ASSERT(fabs(v[2]) < 0.01 * vex); // stays on the plane
      for (int j = 3; j < 6; j++) ASSERT(fabs(v[j]) < 0.01 * vex / 0.1); // no rotation
    }
    fl_free(v);
    fl_free(g);
    fl_solver_destroy(s);
  }
  fl_problem_free(p);
  ASSERT(reason[0] < 0);
  ASSERT(vx[0] < 0.9 * vex); // stuck or late: at least 10 % of the step's slip missing
  ASSERT(reason[1] > 0);
  ASSERT_NEAR(vx[1], vex, 0.01 * vex);
  return 0;
}

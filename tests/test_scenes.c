// SPDX-License-Identifier: Apache-2.0
/* test_scenes.c: the canonical scenes (build, run, observables, their documented geometry),
 * scene parameters, scene files (round trip to the same result, validation messages), and the
 * heavy stack under PGS (PROBLEMS.md section 1: PGS at 20 sweeps does not hold it).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../sim/fl_world.h"
#include "../solvers/fl_solver.h"
#include "fl_test.h"

static fl_solver *pgs(int sweeps) {
  fl_solver *s = NULL;
  fl_register_all();
  if (fl_solver_create("pgs", &s) < 0) return NULL;
  char buf[32];
  snprintf(buf, sizeof buf, "%d", sweeps);
  fl_solver_set_option(s, "max_iter", buf);
  fl_solver_set_option(s, "error_every", "0");
  return s;
}


static double obs(fl_world *w, const char *name) {
  double val[512];
  fl_int n = fl_world_nobs(w);
  if (n > 512 || fl_world_observe(w, val) < 0) return NAN;
  for (fl_int i = 0; i < n; i++) {
    if (strcmp(fl_world_obs_name(w, i), name) == 0) return val[i];
  }
  return NAN;
}


//---- every scene ----

/* Each scene builds with its defaults (granular smaller), takes 3 PGS steps, and reports finite
 * common observables plus its group's. */
FL_TEST(every_scene_runs) {
  const fl_scene_desc *const *list = fl_scene_list();
  int n = 0;
  for (int i = 0; list[i]; i++, n++) {
    const char *set[1] = {"n=64"};
    int nset = strcmp(list[i]->name, "granular") == 0;
    fl_world *w;
    int rc = fl_scene_create(list[i]->name, nset, set, &w);
    if (rc < 0) FL_FAIL_("%s: %s", list[i]->name, fl_errmsg());
    ASSERT(w->dt > 0 && w->duration > 0);
    fl_solver *s = pgs(50);
    ASSERT(s);
    for (int k = 0; k < 3; k++) {
      fl_step_info info;
      rc = fl_world_step(w, s, &info);
      if (rc < 0) FL_FAIL_("%s step %d: %s", list[i]->name, k, fl_errmsg());
    }
    double val[512];
    fl_int no = fl_world_nobs(w);
    ASSERT(no >= 14 && no <= 512);
    ASSERT_OK(fl_world_observe(w, val));
    for (fl_int k = 0; k < no; k++) {
      if (!isfinite(val[k])) FL_FAIL_("%s: observable %s = %g", list[i]->name,
                                      fl_world_obs_name(w, k), val[k]);
    }
    ASSERT_NEAR(val[0], 3 * w->dt, 1e-12); // t
    fl_solver_destroy(s);
    fl_world_free(w);
  }
  // the eleven rigid scenes of issue 3 (other modules may add more)
  static const char *const names[] = {"heavy_stack", "arch_parabolic", "arch_masonry",
    "ball_slope", "pendulum_mass_ratio", "pendulum_stiffness_ratio", "chain", "cylinder_stack",
    "capsule_lean", "table_pile", "granular"};
  for (int i = 0; i < 11; i++) ASSERT(fl_scene_find(names[i]) != NULL);
  ASSERT(n >= 11);
  return 0;
}


FL_TEST(scene_parameters) {
  fl_world *w;
  const char *bad[1] = {"heavy_stack.nope=1"};
  ASSERT(fl_scene_create("heavy_stack", 1, bad, &w) < 0);
  ASSERT_STR_CONTAINS(fl_errmsg(), "nope");
  ASSERT(w == NULL);
  ASSERT_EQ(fl_scene_create("no_such_scene", 0, NULL, &w), FL_ERR_UNKNOWN_PROBLEM);
  ASSERT_STR_CONTAINS(fl_errmsg(), "heavy_stack");
  const char *range[1] = {"mu=-1"};
  ASSERT(fl_scene_create("heavy_stack", 1, range, &w) < 0);
  ASSERT_STR_CONTAINS(fl_errmsg(), "mu");
  // the documented defaults and overrides: 3 scaled cubes of 8, 64, 512 kg, heavy at the bottom
  const char *ok[3] = {"scene.n=3", "sizes=scaled", "heavy_stack.order=heavy-bottom"};
  ASSERT_OK(fl_scene_create("heavy_stack", 3, ok, &w));
  ASSERT_EQ(w->nbody, 4);
  ASSERT_NEAR(w->body[1].mass, 512, 1e-9);
  ASSERT_NEAR(w->body[3].mass, 8, 1e-12);
  ASSERT_NEAR(w->body[1].shape.size[0], 0.4, 1e-12);        // 0.8 m cube
  ASSERT_NEAR(w->body[3].pos[2], 0.8 + 0.4 + 0.1, 1e-12);  // on top of 0.8 and 0.4
  ASSERT_NEAR(w->dt, 1.0 / 120, 0);
  fl_world_free(w);
  return 0;
}


/* The parabolic arch: 20 voussoirs from 110 kg (springing) to about 15 kg (crown), each
 * touching its neighbours, none overlapping at the start. */
FL_TEST(arch_parabolic_geometry) {
  fl_world *w;
  ASSERT_OK(fl_scene_create("arch_parabolic", 0, NULL, &w));
  ASSERT_EQ(w->nbody, 21);
  ASSERT_NEAR(w->body[1].mass, 110, 1e-9);
  ASSERT_NEAR(w->body[20].mass, 110, 1e-6); // symmetric
  double mmin = INFINITY;
  for (int i = 1; i <= 20; i++) mmin = fmin(mmin, w->body[i].mass);
  ASSERT_NEAR(mmin, 15, 0.5);
  ASSERT_NEAR(w->body[10].mass, mmin, 1e-6);
  ASSERT_OK(fl_world_prepare(w, NULL));
  fl_problem *p = fl_world_problem(w);
  ASSERT(p->nc >= 4 * 19 + 8);
  double pen;
  ASSERT_OK(fl_world_penetration(w, &pen));
  ASSERT_LE(pen, 1e-9);
  fl_world_free(w);
  return 0;
}


/* The masonry arch: 25 stones; with the gaps closed every joint is in contact (4 points per
 * joint, 4 per springing) without overlap; as-is, only the springings touch. */
FL_TEST(arch_masonry_geometry) {
  fl_world *w;
  ASSERT_OK(fl_scene_create("arch_masonry", 0, NULL, &w));
  ASSERT_EQ(w->nbody, 26);
  ASSERT_OK(fl_world_prepare(w, NULL));
  ASSERT_EQ(fl_world_problem(w)->nc, 4 * 24 + 8);
  double pen;
  ASSERT_OK(fl_world_penetration(w, &pen));
  ASSERT_LE(pen, 1e-6);
  fl_world_free(w);
  const char *asis[1] = {"gaps=as-is"};
  ASSERT_OK(fl_scene_create("arch_masonry", 1, asis, &w));
  ASSERT_OK(fl_world_prepare(w, NULL));
  ASSERT_EQ(fl_world_problem(w)->nc, 8);
  fl_world_free(w);
  // seed 000's knife edges: two fixed prisms whose ridges, at the springers' base height,
  // touch the middle of each springer's base along a line (2 contact points each)
  const char *edges[1] = {"base=edges"};
  ASSERT_OK(fl_scene_create("arch_masonry", 1, edges, &w));
  ASSERT_EQ(w->nbody, 28);
  ASSERT_OK(fl_world_prepare(w, NULL));
  ASSERT_EQ(fl_world_problem(w)->nc, 4 * 24 + 4);
  ASSERT_OK(fl_world_penetration(w, &pen));
  ASSERT_LE(pen, 1e-6);
  fl_world_free(w);
  const char *big[1] = {"stones=101"};
  ASSERT_OK(fl_scene_create("arch_masonry", 1, big, &w));
  ASSERT_EQ(w->nbody, 102);
  ASSERT_OK(fl_world_prepare(w, NULL));
  ASSERT_EQ(fl_world_problem(w)->nc, 4 * 100 + 8);
  fl_world_free(w);
  return 0;
}


//---- scene files ----

static int run_n(fl_world *w, int n, int sweeps) {
  fl_solver *s = NULL;
  if (sweeps > 0) {
    s = pgs(sweeps);
  } else if (fl_register_all() == 0 && fl_solver_create("nsn", &s) == 0) { // a Newton solve
    fl_solver_set_option(s, "error_every", "0");
  }
  if (!s) return -1;
  for (int k = 0; k < n; k++) {
    int rc = fl_world_step(w, s, NULL);
    if (rc < 0) {
      fl_solver_destroy(s);
      return rc;
    }
  }
  fl_solver_destroy(s);
  return 0;
}


/* A canonical scene written as a scene file loads back to a world that runs to the same state:
 * bit for bit for primitives. Convex hulls are rebuilt from their vertices (the same vertices
 * and masses to 1e-12, faces perhaps numbered differently); the stepper orders each manifold's
 * points by position, so the arch runs to the same state to rounding. */
static int roundtrip(const char *scene, int nset, const char *const *set, int steps, int sweeps,
                     double tol) {
  fl_world *a, *b;
  ASSERT_OK(fl_scene_create(scene, nset, set, &a));
  char path[256];
  snprintf(path, sizeof path, "scene_roundtrip_%s_%d.json", scene, (int)getpid());
  ASSERT_OK(fl_world_save_json(a, path));
  ASSERT_OK(fl_world_load_json(path, &b));
  remove(path);
  ASSERT_EQ(a->nbody, b->nbody);
  ASSERT_EQ(a->njoint, b->njoint);
  ASSERT_EQ(fl_world_nobs(a), fl_world_nobs(b));
  ASSERT_NEAR(a->dt, b->dt, 0);
  for (fl_int i = 0; i < a->nbody; i++) {
    ASSERT_NEAR(a->body[i].mass, b->body[i].mass, 1e-12 * a->body[i].mass);
    for (int k = 0; k < 3; k++) ASSERT_NEAR(a->body[i].pos[k], b->body[i].pos[k], 1e-12);
    for (int k = 0; k < 9; k++)
      ASSERT_NEAR(a->body[i].inertia[k], b->body[i].inertia[k], 1e-12 * (1 + a->body[i].inertia[0]));
    // a rebuilt hull has the same vertices (in some order)
    const fl_shape *sa = &a->body[i].shape, *sb = &b->body[i].shape;
    ASSERT_EQ(sa->nvert, sb->nvert);
    ASSERT_EQ(sa->nface, sb->nface);
    for (fl_int v = 0; v < sa->nvert; v++) {
      double best = INFINITY;
      for (fl_int u = 0; u < sb->nvert; u++) {
        double d[3] = {sa->vert[3 * v] - sb->vert[3 * u], sa->vert[3 * v + 1] - sb->vert[3 * u + 1],
                       sa->vert[3 * v + 2] - sb->vert[3 * u + 2]};
        best = fmin(best, fl_v3_norm(d));
      }
      ASSERT_LE(best, 1e-12);
    }
  }
  ASSERT_OK(run_n(a, steps, sweeps));
  ASSERT_OK(run_n(b, steps, sweeps));
  for (fl_int i = 0; i < a->nbody; i++) {
    for (int k = 0; k < 3; k++) {
      ASSERT_NEAR(a->body[i].pos[k], b->body[i].pos[k], tol);
      ASSERT_NEAR(a->body[i].vel[k], b->body[i].vel[k], tol);
    }
    for (int k = 0; k < 4; k++) ASSERT_NEAR(a->body[i].quat[k], b->body[i].quat[k], tol);
  }
  double va[512], vb[512];
  ASSERT_OK(fl_world_observe(a, va));
  ASSERT_OK(fl_world_observe(b, vb));
  for (fl_int k = 0; k < fl_world_nobs(a); k++) ASSERT_NEAR(va[k], vb[k], tol * (1 + fabs(va[k])));
  fl_world_free(a);
  fl_world_free(b);
  return 0;
}

FL_TEST(json_roundtrip_heavy_stack) { return roundtrip("heavy_stack", 0, NULL, 60, 50, 0); }
FL_TEST(json_roundtrip_ball_slope) { return roundtrip("ball_slope", 0, NULL, 200, 50, 0); }
FL_TEST(json_roundtrip_pendulum) { return roundtrip("pendulum_mass_ratio", 0, NULL, 100, 50, 0); }
FL_TEST(json_roundtrip_arch) { return roundtrip("arch_parabolic", 0, NULL, 20, 200, 1e-7); }
FL_TEST(json_roundtrip_capsule) { return roundtrip("capsule_lean", 0, NULL, 60, 50, 0); }
/* the coin keeps its hydroelastic patch (modulus and mesh) through a scene file */
FL_TEST(json_roundtrip_coin) {
  const char *set[] = {"rings=3"};
  if (roundtrip("spinning_coin", 0, NULL, 30, 50, 0)) return 1;
  if (roundtrip("spinning_coin", 1, set, 30, 50, 0)) return 1;
  fl_world *a, *b;
  ASSERT_OK(fl_scene_create("spinning_coin", 1, set, &a));
  char path[256];
  snprintf(path, sizeof path, "scene_roundtrip_coin_%d.json", (int)getpid());
  ASSERT_OK(fl_world_save_json(a, path));
  ASSERT_OK(fl_world_load_json(path, &b));
  remove(path);
  fl_int ia = fl_world_find_body(a, "coin"), ib = fl_world_find_body(b, "coin");
  ASSERT(ia >= 0 && ib >= 0);
  ASSERT_NEAR(b->body[ib].hydro_modulus, 1e9, 0);
  ASSERT_EQ(b->body[ib].hydro_mesh, -3);
  fl_step_info info;
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("jacobi", &s));
  ASSERT_OK(fl_world_step(b, s, &info));
  ASSERT_EQ(info.nc, 6 * 3 * 3); // one compliant point contact per ring triangle
  fl_solver_destroy(s);
  fl_world_free(a);
  fl_world_free(b);
  return 0;
}


/* Everything a scene file can say, parsed back: materials and a pair law, kinds, shapes,
 * density or mass and inertia, velocities, joints with drives, ramped forces, groups. */
FL_TEST(json_full_format) {
  const char *text =
    "{\"format\": \"frictionlab-scene\", \"version\": 1, \"name\": \"demo\",\n"
    " \"gravity\": [0, 0, -10], \"dt\": 0.005, \"duration\": 0.5, \"margin\": 0.002,\n"
    " \"friction_rule\": \"min\",\n"
    " \"materials\": [{\"name\": \"steel\", \"mu\": 0.3, \"stiffness\": 1e9, \"tau_d\": 0.001},\n"
    "               {\"name\": \"rubber\", \"mu\": 0.9}],\n"
    " \"pairs\": [{\"materials\": [\"steel\", \"rubber\"], \"mu\": 0.7, \"stiffness\": \"inf\"}],\n"
    " \"bodies\": [\n"
    "  {\"name\": \"ground\", \"kind\": \"fixed\", \"shape\": {\"type\": \"plane\"}, \"material\": \"rubber\"},\n"
    "  {\"name\": \"box\", \"shape\": {\"type\": \"box\", \"size\": [0.1, 0.2, 0.3]}, \"density\": 1000,\n"
    "   \"position\": [0, 0, 0.3], \"velocity\": [1, 0, 0], \"material\": \"steel\"},\n"
    "  {\"name\": \"ball\", \"shape\": {\"type\": \"sphere\", \"size\": [0.1]}, \"mass\": 2,\n"
    "   \"inertia\": [0.01, 0.01, 0.01], \"position\": [1, 0, 0.1]},\n"
    "  {\"name\": \"pill\", \"shape\": {\"type\": \"capsule\", \"size\": [0.05, 0.2]}, \"density\": 500,\n"
    "   \"position\": [2, 0, 0.05], \"orientation\": [0.7071067811865476, 0.7071067811865476, 0, 0]},\n"
    "  {\"name\": \"can\", \"shape\": {\"type\": \"cylinder\", \"size\": [0.1, 0.1], \"segments\": 12},\n"
    "   \"density\": 800, \"position\": [3, 0, 0.1]},\n"
    "  {\"name\": \"wedge\", \"shape\": {\"type\": \"convex\", \"vertices\": [[0,0,0],[1,0,0],[0,1,0],[0,0,1]]},\n"
    "   \"density\": 600, \"position\": [4, 0, 0]},\n"
    "  {\"name\": \"belt\", \"kind\": \"prescribed\", \"shape\": {\"type\": \"box\", \"size\": [1, 1, 0.1]},\n"
    "   \"position\": [0, 5, -0.1], \"velocity\": [0.5, 0, 0]}],\n"
    " \"joints\": [{\"type\": \"revolute\", \"body_a\": null, \"body_b\": \"can\", \"anchor_a\": [3, 0, 0.1],\n"
    "              \"axis\": [0, 0, 1], \"drive\": {\"velocity\": 1, \"max_force\": 100}},\n"
    "             {\"type\": \"distance\", \"body_a\": \"box\", \"body_b\": \"ball\", \"stiffness\": 1000}],\n"
    " \"forces\": [{\"body\": \"ball\", \"force\": [0, 5, 0], \"ramp\": [0, 1]}],\n"
    " \"observe\": [{\"kind\": \"chain\", \"bodies\": [\"box\", \"ball\"]}]}\n";
  fl_world *w;
  ASSERT_OK(fl_world_parse_json(text, "demo.json", &w));
  ASSERT_EQ(w->nbody, 7);
  ASSERT_EQ(w->nmat, 3);
  ASSERT_EQ(w->mu_rule, FL_MU_MIN);
  ASSERT_NEAR(w->gravity[2], -10, 0);
  ASSERT_NEAR(w->body[1].mass, 1000 * 0.2 * 0.4 * 0.6, 1e-9);
  ASSERT_NEAR(w->body[2].inertia[4], 0.01, 0);
  ASSERT_EQ(w->body[6].kind, FL_BODY_PRESCRIBED);
  ASSERT_EQ(w->body[6].dof, -1);
  ASSERT_NEAR(w->body[5].mass, 600.0 / 6, 1e-9); // unit tetrahedron
  ASSERT_NEAR(w->body[5].pos[0], 4.25, 1e-12);   // recentred on its centroid
  ASSERT_EQ(w->njoint, 2);
  ASSERT_NEAR(w->joint[1].rest_length, sqrt(1 + 0.04), 1e-12); // distance of the anchors
  ASSERT_EQ(w->joint[0].driven, 1);
  ASSERT_NEAR(fl_force_scale(&w->force[0], 0.25), 0.25, 1e-15);
  // common, drift of 5 dynamic bodies, chain, lift-off, pose of 5 dynamic bodies
  ASSERT_EQ(fl_world_nobs(w), 14 + 5 + 2 + 2 + 13 * 5);
  ASSERT(strcmp(fl_world_obs_name(w, 14), "drift_box") == 0);
  // the pair law overrides the rule between steel and rubber; elsewhere min applies
  ASSERT_OK(fl_world_prepare(w, NULL));
  fl_problem *p = fl_world_problem(w);
  int found = 0;
  for (fl_int c = 0; c < p->nc; c++) {
    if (p->point[3 * c + 0] > -0.2 && p->point[3 * c + 0] < 0.2 && p->point[3 * c + 1] < 1) {
      ASSERT_NEAR(p->mu[c], 0.7, 0);
      ASSERT(isinf(p->stiffness[c]));
      found++;
    }
  }
  ASSERT(found >= 4);
  ASSERT_OK(run_n(w, 10, 50));
  fl_world_free(w);
  return 0;
}


/* Bad files name the file, the JSON path and what was expected. */
static int bad(const char *text, const char *want_path, const char *want_text) {
  fl_world *w = (fl_world *)1;
  int rc = fl_world_parse_json(text, "bad.json", &w);
  ASSERT(rc < 0);
  ASSERT(w == NULL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "bad.json");
  ASSERT_STR_CONTAINS(fl_errmsg(), want_path);
  ASSERT_STR_CONTAINS(fl_errmsg(), want_text);
  return 0;
}

#define BODY0 "{\"name\": \"g\", \"kind\": \"fixed\", \"shape\": {\"type\": \"plane\"}}"

FL_TEST(json_validation) {
  if (bad("{\"dt\": 0.01, \"bodies\": [" BODY0 ", {\"shape\": {\"type\": \"box\", \"size\": [1, -2, 3]}, "
          "\"density\": 1}]}", "bodies[1].shape.size[1]", "positive")) return 1;
  if (bad("{\"dt\": 0.01, \"bodies\": [" BODY0 ", {\"shape\": {\"type\": \"box\", \"size\": [1, 2]}, "
          "\"density\": 1}]}", "bodies[1].shape.size", "array of 3")) return 1;
  if (bad("{\"dt\": 0.01, \"bodies\": [" BODY0 ", " BODY0 "]}", "bodies[1]", "second body named"))
    return 1;
  if (bad("{\"dt\": 0.01, \"bodies\": [{\"shape\": {\"type\": \"cone\"}, \"mass\": 1}]}",
          "bodies[0].shape.type", "plane|sphere|box")) return 1;
  if (bad("{\"dt\": 0.01, \"bodies\": [{\"shape\": {\"type\": \"sphere\", \"size\": [1]}}]}",
          "bodies[0]", "exactly one of \"density\"")) return 1;
  if (bad("{\"dt\": 0.01, \"bodys\": []}", "bodys", "unknown key")) return 1;
  if (bad("{\"bodies\": [" BODY0 "]}", "dt", "missing")) return 1;
  if (bad("{\"dt\": 0.01, \"bodies\": [" BODY0 "], \"joints\": [{\"type\": \"ball\", \"body_b\": "
          "\"nobody\"}]}", "joints[0].body_b", "no body named 'nobody'")) return 1;
  if (bad("{\"dt\": 0.01, \"bodies\": [" BODY0 "], \"materials\": [{\"name\": \"x\", \"mu\": -1}]}",
          "materials[0].mu", "out of range")) return 1;
  if (bad("{\"dt\": 0.01,\n \"bodies\": [,]}", "line 2", "not valid JSON")) return 1;
  if (bad("{\"dt\": 0.01, \"bodies\": [{\"shape\": {\"type\": \"plane\"}, \"mass\": 1}]}",
          "bodies[0]", "plane cannot be dynamic")) return 1;
#define COIN0 "{\"shape\": {\"type\": \"cylinder\", \"size\": [0.01, 0.001]}, \"mass\": 0.005, "
  if (bad("{\"dt\": 0.01, \"bodies\": [" COIN0 "\"hydroelastic\": {\"fan\": 12}}]}",
          "bodies[0].hydroelastic.modulus", "missing")) return 1;
  if (bad("{\"dt\": 0.01, \"bodies\": [" COIN0 "\"hydroelastic\": {\"modulus\": 1e9, \"fan\": 12, "
          "\"rings\": 2}}]}", "bodies[0].hydroelastic", "not both")) return 1;
  if (bad("{\"dt\": 0.01, \"bodies\": [" COIN0 "\"hydroelastic\": {\"modulus\": 1e9, \"fan\": 12.5}}]}",
          "bodies[0].hydroelastic.fan", "whole number")) return 1;
  if (bad("{\"dt\": 0.01, \"bodies\": [" COIN0 "\"hydroelastic\": {\"modulus\": 1e9, \"rings\": 0}}]}",
          "bodies[0].hydroelastic.rings", "out of range")) return 1;
  if (bad("{\"dt\": 0.01, \"bodies\": [{\"shape\": {\"type\": \"box\", \"size\": [1, 1, 1]}, \"mass\": 1, "
          "\"hydroelastic\": {\"modulus\": 1e9}}]}", "bodies[0].hydroelastic", "cylinders and spheres only")) return 1;
#undef COIN0
  fl_world *w;
  ASSERT_EQ(fl_world_load_json("no/such/file.json", &w), FL_ERR_IO);
  ASSERT_STR_CONTAINS(fl_errmsg(), "no/such/file.json");
  return 0;
}


//---- the heavy stack and PGS (PROBLEMS.md section 1) ----

/* PGS at 20 sweeps does not hold the 4096:1 stack for 10 s: the deepest interface
 * penetration exceeds 1 cm or the stack collapses (docs/scenes.md records what 200 sweeps
 * do). */
FL_TEST(slow_heavy_stack_pgs20_fails) {
  fl_world *w;
  ASSERT_OK(fl_scene_create("heavy_stack", 0, NULL, &w));
  fl_solver *s = pgs(20);
  ASSERT(s);
  int n = (int)lround(w->duration / w->dt);
  double worst = 0;
  int collapsed = 0;
  for (int k = 0; k < n; k++) {
    ASSERT_OK(fl_world_step(w, s, NULL));
    for (int i = 1; i <= 5; i++) {
      char nm[32];
      snprintf(nm, sizeof nm, "stack_pen_%d", i);
      double p = obs(w, nm);
      if (p > worst) worst = p;
    }
    if (obs(w, "stack_collapsed") > 0) collapsed = 1;
    if (collapsed && worst > 0.01) break;
  }
  ASSERT(worst > 0.01 || collapsed);
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}

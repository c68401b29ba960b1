// SPDX-License-Identifier: Apache-2.0
/* test_collide_coherence.c: the polyhedron pairs' reuse of the last whole separating-axis
 * search across steps (sim/collide_poly.c, "temporal coherence"; fl_world.collide_coherence):
 * the contacts are those of the whole search to the bit, the bound lets a resting pair skip
 * the edge-pair loop and refuses a pair turned past its margin.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../core/fl_core.h"
#include "../problems/fl_problem.h"
#include "../sim/collide_impl.h"
#include "../sim/fl_world.h"
#include "../sim/world_impl.h"
#include "../solvers/fl_solver.h"
#include "fl_test.h"


/* a frustum of a square pyramid (a general hexahedron, not a box): bottom half width hb at
 * z = -hz, top half width ht at z = +hz, the top turned by `twist` rad about z */
static int frustum(double hb, double ht, double hz, double twist, fl_shape *out) {
  double p[24];
  for (int k = 0; k < 4; k++) {
    double sx = (k == 0 || k == 3) ? -1 : 1, sy = k < 2 ? -1 : 1;
    p[3 * k] = sx * hb, p[3 * k + 1] = sy * hb, p[3 * k + 2] = -hz;
    double x = sx * ht, y = sy * ht, c = cos(twist), s = sin(twist);
    p[12 + 3 * k] = c * x - s * y, p[12 + 3 * k + 1] = s * x + c * y, p[12 + 3 * k + 2] = hz;
  }
  return fl_shape_make_convex(p, 8, out);
}


static void qaxis(double ax, double ay, double az, double angle, double q[4]) {
  double n = sqrt(ax * ax + ay * ay + az * az), s = sin(angle / 2) / n;
  q[0] = cos(angle / 2), q[1] = ax * s, q[2] = ay * s, q[3] = az * s;
}


/* the pair at (pb, qb) over a at the origin, with the entry and without: the same contacts to
 * the bit; returns the count */
static int same_both_ways(const fl_shape *a, const fl_shape *b, const double pb[3],
                          const double qb[4], double margin, fl__hull_pair *hc, int *ok) {
  static const double p0[3] = {0, 0, 0}, q0[4] = {1, 0, 0, 0};
  pose A, B;
  make_pose(p0, q0, &A);
  make_pose(pb, qb, &B);
  fl_manifold_point m1[FL_MANIFOLD_MAX], m0[FL_MANIFOLD_MAX];
  memset(m1, 0, sizeof m1);
  memset(m0, 0, sizeof m0);
  int n1 = fl__collide_posed(a, &A, b, &B, margin, hc, m1);
  int n0 = fl__collide_posed(a, &A, b, &B, margin, NULL, m0);
  *ok = n1 == n0 && n0 >= 0 && memcmp(m1, m0, sizeof m0) == 0;
  return n0;
}


/* b (a frustum upside down) resting on a's top face 0.1 mm deep: the first call makes the
 * reference, a 1 um shift reuses it (the edge-pair loop is skipped), a turn of 0.02 rad about x
 * moves b's vertices by up to 0.02 r_b = 1.3e-2 m, far past the face preference's margin
 * 1e-4 (r_a + r_b) = 1.3e-4 m: the bound refuses and the whole search runs (and makes the next
 * reference). Every call's contacts are those without the entry, to the bit. */
FL_TEST(bound_skips_resting_and_refuses_turned) {
  fl_shape a, b;
  ASSERT_OK(frustum(0.5, 0.4, 0.2, 0.1, &a));
  ASSERT_OK(frustum(0.4, 0.5, 0.2, -0.05, &b));
  fl__hull_pair hc;
  memset(&hc, 0, sizeof hc);
  double margin = 0.01, pb[3] = {0.01, -0.02, 0.4 - 1e-4}, q[4] = {1, 0, 0, 0};
  int ok = 0;
  int n = same_both_ways(&a, &b, pb, q, margin, &hc, &ok);
  ASSERT(ok);
  ASSERT(n >= 4); // the clipped face polygon
  ASSERT_EQ((int)hc.full, 1);
  ASSERT_EQ((int)hc.skipped, 0);
  ASSERT_EQ(hc.valid, 1);
  // b's bottom face (its face that points down) is the reference face's partner; the lead of
  // a's top face over its other faces is about the frustum's height
  ASSERT(hc.lead_a > 0.1 && hc.lead_b > 0.1);
  pb[0] += 1e-6;
  same_both_ways(&a, &b, pb, q, margin, &hc, &ok);
  ASSERT(ok);
  ASSERT_EQ((int)hc.skipped, 1);
  ASSERT_EQ((int)hc.full, 1);
  qaxis(1, 0, 0, 0.02, q);
  same_both_ways(&a, &b, pb, q, margin, &hc, &ok);
  ASSERT(ok);
  ASSERT_EQ((int)hc.skipped, 1); // refused
  ASSERT_EQ((int)hc.full, 2);
  // the refusal waits one call (a new reference, no try), then tries again from it
  pb[1] += 1e-6;
  same_both_ways(&a, &b, pb, q, margin, &hc, &ok);
  ASSERT(ok);
  ASSERT_EQ((int)hc.full, 3);
  pb[1] += 1e-6;
  same_both_ways(&a, &b, pb, q, margin, &hc, &ok);
  ASSERT(ok);
  ASSERT_EQ((int)hc.skipped, 2);
  fl_shape_free(&a);
  fl_shape_free(&b);
  return 0;
}


static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 11;
}


static double urand(uint64_t *s) { return (double)lcg(s) / 9007199254740992.0; }


/* the deepest gap of b at (pb, q) over a (margin 1: every point), or 1 when none */
static double least_gap(const fl_shape *a, const fl_shape *b, const double pb[3],
                        const double q[4]) {
  static const double p0[3] = {0, 0, 0}, q0[4] = {1, 0, 0, 0};
  fl_manifold_point m[FL_MANIFOLD_MAX];
  int n = fl_collide(a, p0, q0, b, pb, q, 1.0, m);
  double g = 1;
  for (int i = 0; i < n; i++) g = fmin(g, m[i].phi);
  return g;
}


/* Random walks of b about contact with a: any orientation, over a's top face or its rim (face,
 * edge and vertex contacts, and edge pairs that win), overlapping up to 2 mm, touching,
 * separated within and beyond the margin; steps from 1e-7 m to 1 cm and 1e-8 to 0.03 rad.
 * With the entry kept along each walk the contacts are those of the whole search, call for
 * call, to the bit; resting stretches skip the edge-pair loop and large steps run it. */
static int random_walks(int walks, unsigned long *skipped, unsigned long *full, int *ncontact);

FL_TEST(random_walks_same_contacts) {
  unsigned long skipped = 0, full = 0;
  int ncontact = 0;
  ASSERT_OK(random_walks(300, &skipped, &full, &ncontact));
  printf("%d calls with contacts; edge-pair loop skipped %lu times, whole search %lu\n",
         ncontact, skipped, full);
  ASSERT(ncontact > 4000);
  ASSERT(skipped > 1000 && full > 1000); // both ways exercised
  return 0;
}


/* The same walks with the whole search run also where the reference lets it go: its best
 * faces are the reference's, no face or edge pair is above the margin, and no edge pair's
 * separation is above the bound dbar + delta, in every call checked. */
FL_TEST(random_walks_bound_holds) {
  unsigned long skipped = 0, full = 0;
  int ncontact = 0;
  fl__cl_coherence_check = 1;
  fl__cl_coherence_checked = fl__cl_coherence_wrong = 0;
  int rc = random_walks(300, &skipped, &full, &ncontact);
  fl__cl_coherence_check = 0;
  ASSERT_OK(rc);
  printf("%lu calls checked, %lu contradict the reference\n", fl__cl_coherence_checked,
         fl__cl_coherence_wrong);
  ASSERT(fl__cl_coherence_checked > 1000);
  ASSERT_EQ((int)fl__cl_coherence_wrong, 0);
  return 0;
}


static int random_walks(int walks, unsigned long *skipped, unsigned long *full, int *ncontact) {
  fl_shape a, b;
  FL_TRY(frustum(0.5, 0.4, 0.2, 0.1, &a));
  FL_TRY(frustum(0.4, 0.5, 0.2, -0.05, &b));
  uint64_t st = 2026;
  for (int walk = 0; walk < walks; walk++) {
    fl__hull_pair hc;
    memset(&hc, 0, sizeof hc);
    // a quarter of the walks near b's resting pose (small tilts), the rest anything
    double tilt = walk % 4 == 0 ? 0.35 * urand(&st) : 3.14159 * urand(&st);
    double ax = urand(&st) - 0.5, ay = urand(&st) - 0.5, az = urand(&st) - 0.5;
    double r = walk % 4 == 0 ? 0.2 : 1.3;
    double pb[3] = {r * (urand(&st) - 0.5), r * (urand(&st) - 0.5), 1.0};
    double q[4], ang = 0;
    qaxis(ax, ay, az, tilt, q);
    // lower b onto a: its deepest gap to a target in [-2, 4] mm
    double target = -0.002 + 0.006 * urand(&st);
    for (int it = 0; it < 60; it++) {
      double g = least_gap(&a, &b, pb, q);
      if (fabs(g - target) < 1e-5) break;
      pb[2] -= g >= 1 ? 0.05 : 0.7 * (g - target);
    }
    double step_t = pow(10, -7 + 5 * urand(&st)), step_r = pow(10, -8 + 6.5 * urand(&st));
    for (int k = 0; k < 30; k++) {
      qaxis(ax, ay, az, tilt + ang, q);
      int ok = 0;
      *ncontact += same_both_ways(&a, &b, pb, q, 0.003, &hc, &ok) > 0;
      if (!ok) {
        printf("walk %d call %d: contacts differ\n", walk, k);
        return FL_ERR_STATE;
      }
      for (int i = 0; i < 3; i++) pb[i] += step_t * (urand(&st) - 0.5);
      ang += step_r * (urand(&st) - 0.5);
    }
    *skipped += hc.skipped, *full += hc.full;
  }
  fl_shape_free(&a);
  fl_shape_free(&b);
  return FL_OK;
}


static fl_solver *make_solver(const char *name, int sweeps) {
  fl_solver *s = NULL;
  fl_register_all();
  if (fl_solver_create(name, &s) < 0) return NULL;
  if (strcmp(name, "pgs") == 0) {
    char buf[32];
    snprintf(buf, sizeof buf, "%d", sweeps);
    fl_solver_set_option(s, "max_iter", buf);
    fl_solver_set_option(s, "residual_every", buf);
    fl_solver_set_option(s, "warm_start", "true");
  } else {
    fl_solver_set_option(s, "beta", "0.001");
  }
  fl_solver_set_option(s, "error_every", "0");
  return s;
}


/* N steps of a scene with the reuse on and off: every step's contacts (count, points, frames,
 * gaps) and every body's state after it are the same to the bit. *skipped: the calls that
 * skipped the edge-pair loop. */
static int same_steps(const char *scene, const char *solver, int nsteps, unsigned long *skipped) {
  const char *set[1] = {"speculative=1"};
  fl_world *w[2] = {NULL, NULL};
  fl_solver *s[2] = {make_solver(solver, 8), make_solver(solver, 8)};
  int rc = s[0] && s[1] ? FL_OK : FL_ERR_STATE;
  for (int k = 0; k < 2 && rc >= 0; k++) {
    rc = fl_scene_create(scene, 1, set, &w[k]);
    if (rc >= 0) w[k]->collide_coherence = k == 0, w[k]->compute_metrics = 0;
  }
  for (int t = 0; t < nsteps && rc >= 0; t++) {
    fl_step_info info[2];
    rc = fl_world_prepare(w[0], &info[0]);
    if (rc >= 0) rc = fl_world_prepare(w[1], &info[1]);
    if (rc < 0) break;
    const fl_problem *p0 = fl_world_problem(w[0]), *p1 = fl_world_problem(w[1]);
    fl_int nc = p0->nc;
    if (p1->nc != nc || (nc > 0 && (memcmp(p0->phi0, p1->phi0, (size_t)nc * sizeof(double)) ||
                                    memcmp(p0->point, p1->point, (size_t)nc * 3 * sizeof(double)) ||
                                    memcmp(p0->frame, p1->frame, (size_t)nc * 9 * sizeof(double))))) {
      printf("%s/%s step %d: contacts differ (%d and %d)\n", scene, solver, t, (int)nc,
             (int)p1->nc);
      rc = FL_ERR_STATE;
      break;
    }
    rc = fl_world_finish(w[0], s[0], &info[0]);
    if (rc >= 0) rc = fl_world_finish(w[1], s[1], &info[1]);
    for (fl_int i = 0; rc >= 0 && i < w[0]->nbody; i++) {
      const fl_body *x = &w[0]->body[i], *y = &w[1]->body[i];
      if (memcmp(x->pos, y->pos, sizeof x->pos) || memcmp(x->quat, y->quat, sizeof x->quat) ||
          memcmp(x->vel, y->vel, sizeof x->vel) || memcmp(x->omega, y->omega, sizeof x->omega)) {
        printf("%s/%s step %d: body %s differs\n", scene, solver, t, x->name);
        rc = FL_ERR_STATE;
      }
    }
  }
  *skipped = 0;
  const fl_world_impl *m = rc >= 0 ? w[0]->impl : NULL;
  for (fl_int k = 0; m && k < m->cap_hp; k++) *skipped += m->hp[k].skipped;
  if (rc >= 0 && w[1]->impl->nhp != 0) rc = FL_ERR_STATE; // off: no entries made
  fl_world_free(w[0]);
  fl_world_free(w[1]);
  fl_solver_destroy(s[0]);
  fl_solver_destroy(s[1]);
  return rc;
}


FL_TEST(arch_masonry_same_steps) {
  unsigned long sk = 0;
  // SAP holds the arch: nearly every hull pair skips its edge-pair loop
  ASSERT_OK(same_steps("arch_masonry", "sap", 40, &sk));
  printf("arch_masonry/sap: %lu calls skipped the edge-pair loop\n", sk);
  ASSERT(sk > 500);
  // PGS at 8 sweeps lets the arch sag and open: few pairs rest, the rest run the whole search
  ASSERT_OK(same_steps("arch_masonry", "pgs", 60, &sk));
  printf("arch_masonry/pgs: %lu calls skipped the edge-pair loop\n", sk);
  // the reference's claims against the whole search at every call it would skip
  fl__cl_coherence_check = 1;
  fl__cl_coherence_checked = fl__cl_coherence_wrong = 0;
  int rc = same_steps("arch_masonry", "sap", 40, &sk);
  fl__cl_coherence_check = 0;
  ASSERT_OK(rc);
  printf("arch_masonry/sap: %lu calls checked, %lu contradict the reference\n",
         fl__cl_coherence_checked, fl__cl_coherence_wrong);
  ASSERT(fl__cl_coherence_checked > 500);
  ASSERT_EQ((int)fl__cl_coherence_wrong, 0);
  return 0;
}


FL_TEST(box_pile_table_pile_same_steps) {
  // boxes only: the pairs keep the box closed forms and bound, and make no entries
  unsigned long sk = 0;
  ASSERT_OK(same_steps("box_pile", "pgs", 40, &sk));
  ASSERT_EQ((int)sk, 0);
  ASSERT_OK(same_steps("table_pile", "pgs", 60, &sk));
  ASSERT_EQ((int)sk, 0);
  return 0;
}

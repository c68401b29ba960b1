// SPDX-License-Identifier: Apache-2.0
/* test_collide.c: shapes, mass properties, narrow phase and broad phase against closed forms
 * and invariants. */
#include <stdint.h>

#include "../core/fl_core.h"
#include "../sim/fl_geometry.h"
#include "fl_test.h"

static const double q_id[4] = {1, 0, 0, 0};


static void qaxis(double ax, double ay, double az, double angle, double q[4]) {
  double a[3] = {ax, ay, az};
  fl_quat_from_axis_angle(a, angle, q);
}


/* index of the point of m (n points) nearest to x, and its distance */
static int nearest(const fl_manifold_point *m, int n, const double x[3], double *dist) {
  int best = -1;
  double bd = INFINITY;
  for (int i = 0; i < n; i++) {
    double d = 0;
    for (int k = 0; k < 3; k++) d += (m[i].p[k] - x[k]) * (m[i].p[k] - x[k]);
    if (d < bd) bd = d, best = i;
  }
  *dist = sqrt(bd);
  return best;
}


/* every point has normal n and signed distance phi */
static int all_normal_phi(const fl_manifold_point *m, int n, const double nrm[3], double phi,
                          double tol) {
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < 3; k++)
      if (!(fabs(m[i].n[k] - nrm[k]) <= tol)) return 0;
    if (!(fabs(m[i].phi - phi) <= tol)) return 0;
  }
  return 1;
}


/* feature ids of a manifold are unique */
static int unique_features(const fl_manifold_point *m, int n) {
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (m[i].feature == m[j].feature) return 0;
  return 1;
}


/*---- polyhedron against plane ----*/

FL_TEST(box_on_plane_four_corners) {
  fl_shape plane, box;
  ASSERT_OK(fl_shape_make_plane(&plane));
  ASSERT_OK(fl_shape_make_box(0.5, 0.3, 0.2, &box));
  double p0[3] = {0, 0, 0}, pb[3] = {1.0, -2.0, 0.2 - 0.01};
  fl_manifold_point m[FL_MANIFOLD_MAX];
  int n = fl_collide(&plane, p0, q_id, &box, pb, q_id, 0.001, m);
  ASSERT_EQ(n, 4);
  double up[3] = {0, 0, 1};
  ASSERT(all_normal_phi(m, n, up, -0.01, 1e-14));
  ASSERT(unique_features(m, n));
  // the corners, midway between the plane (z = 0) and the box's bottom (z = -0.01)
  for (int sx = -1; sx <= 1; sx += 2)
    for (int sy = -1; sy <= 1; sy += 2) {
      double x[3] = {1.0 + 0.5 * sx, -2.0 + 0.3 * sy, -0.005}, d;
      nearest(m, n, x, &d);
      ASSERT_LE(d, 1e-14);
    }
  // swapped: the normal flips, phi and points stay
  fl_manifold_point w[FL_MANIFOLD_MAX];
  ASSERT_EQ(fl_collide(&box, pb, q_id, &plane, p0, q_id, 0.001, w), 4);
  double down[3] = {0, 0, -1};
  ASSERT(all_normal_phi(w, 4, down, -0.01, 1e-14));
  // a tilted plane (30 degrees about x) through the origin and a box resting on it
  double qp[4];
  qaxis(1, 0, 0, M_PI / 6, qp);
  double nrm[3] = {0, -sin(M_PI / 6), cos(M_PI / 6)};
  double pc[3] = {0.2 + 0.1 * nrm[0], 0.2 * nrm[1] + 0.3 * cos(M_PI / 6),
                  0.2 * nrm[2] + 0.3 * sin(M_PI / 6)};
  // centre at height 0.2 - 0.02 above the plane along its normal
  for (int k = 0; k < 3; k++) pc[k] = 0.18 * nrm[k];
  n = fl_collide(&plane, p0, qp, &box, pc, qp, 0.0, m);
  ASSERT_EQ(n, 4);
  ASSERT(all_normal_phi(m, n, nrm, -0.02, 1e-13));
  fl_shape_free(&box);
  fl_shape_free(&plane);
  return 0;
}


FL_TEST(corner_contact_tilted_box) {
  // a unit cube stood on a corner: its body diagonal (1,1,1)/sqrt(3) turned to -z
  fl_shape ground, cube, plane;
  ASSERT_OK(fl_shape_make_box(5, 5, 0.5, &ground));
  ASSERT_OK(fl_shape_make_box(0.5, 0.5, 0.5, &cube));
  ASSERT_OK(fl_shape_make_plane(&plane));
  double v[3] = {1 / sqrt(3.0), 1 / sqrt(3.0), 1 / sqrt(3.0)}, down[3] = {0, 0, -1}, ax[3];
  fl_v3_cross(v, down, ax);
  double q[4];
  fl_quat_from_axis_angle(ax, acos(fl_v3_dot(v, down)), q);
  double pen = 0.004, pg[3] = {0, 0, -0.5}, pc[3] = {0.3, -0.2, 0.5 * sqrt(3.0) - pen};
  fl_manifold_point m[FL_MANIFOLD_MAX];
  int n = fl_collide(&ground, pg, q_id, &cube, pc, q, 0.001, m);
  ASSERT_EQ(n, 1);
  double up[3] = {0, 0, 1};
  ASSERT(all_normal_phi(m, n, up, -pen, 1e-12));
  ASSERT_NEAR(m[0].p[0], 0.3, 1e-12);
  ASSERT_NEAR(m[0].p[1], -0.2, 1e-12);
  ASSERT_NEAR(m[0].p[2], -pen / 2, 1e-12);
  // the cube's lowest corner is its vertex 7 (+,+,+), the ground's top face is face 5 (+z)
  ASSERT_EQ(m[0].feature, (int64_t)((uint64_t)FL_FEAT(FL_FEAT_FACE, 5) << 32 |
                                    FL_FEAT(FL_FEAT_VERTEX, 7)));
  // the same against a plane
  double p0[3] = {0, 0, 0};
  n = fl_collide(&plane, p0, q_id, &cube, pc, q, 0.001, m);
  ASSERT_EQ(n, 1);
  ASSERT(all_normal_phi(m, n, up, -pen, 1e-12));
  fl_shape_free(&ground);
  fl_shape_free(&cube);
  fl_shape_free(&plane);
  return 0;
}


/*---- box against box ----*/

FL_TEST(box_box_face_rotated_octagon) {
  fl_shape a, b;
  ASSERT_OK(fl_shape_make_box(0.5, 0.5, 0.5, &a));
  ASSERT_OK(fl_shape_make_box(0.5, 0.5, 0.5, &b));
  double pa[3] = {0, 0, 0}, pb[3] = {0, 0, 1 - 0.02}, q[4];
  qaxis(0, 0, 1, M_PI / 4, q);
  fl_manifold_point m[FL_MANIFOLD_MAX];
  int n = fl_collide(&a, pa, q_id, &b, pb, q, 0.0, m);
  // the two squares overlap in a regular octagon with corners (+-0.5, +-(sqrt(2)/2 - 0.5))
  ASSERT_EQ(n, 8);
  double up[3] = {0, 0, 1};
  ASSERT(all_normal_phi(m, n, up, -0.02, 1e-13));
  ASSERT(unique_features(m, n));
  double c = sqrt(0.5) - 0.5;
  double oct[8][2] = {{0.5, c}, {0.5, -c}, {-0.5, c}, {-0.5, -c},
                      {c, 0.5}, {-c, 0.5}, {c, -0.5}, {-c, -0.5}};
  for (int k = 0; k < 8; k++) {
    double x[3] = {oct[k][0], oct[k][1], 0.49}, d;
    nearest(m, n, x, &d);
    ASSERT_LE(d, 1e-13);
  }
  // offset, not rotated: the overlap rectangle [-0.2, 0.5] x [-0.4, 0.5]
  double po[3] = {0.3, 0.1, 1 - 0.03};
  n = fl_collide(&a, pa, q_id, &b, po, q_id, 0.0, m);
  ASSERT_EQ(n, 4);
  ASSERT(all_normal_phi(m, n, up, -0.03, 1e-13));
  double rect[4][2] = {{-0.2, -0.4}, {0.5, -0.4}, {0.5, 0.5}, {-0.2, 0.5}};
  for (int k = 0; k < 4; k++) {
    double x[3] = {rect[k][0], rect[k][1], 0.485}, d;
    nearest(m, n, x, &d);
    ASSERT_LE(d, 1e-13);
  }
  // a small box on a large one: the small box's bottom face, all four corners
  fl_shape big;
  ASSERT_OK(fl_shape_make_box(3, 3, 0.5, &big));
  double ps[3] = {0.7, -0.4, 1 - 0.005};
  n = fl_collide(&big, pa, q_id, &a, ps, q, 0.0, m);
  ASSERT_EQ(n, 4);
  ASSERT(all_normal_phi(m, n, up, -0.005, 1e-13));
  for (int k = 0; k < 4; k++) {
    double t = M_PI / 4 + k * M_PI / 2;
    double x[3] = {0.7 + sqrt(0.5) * cos(t + M_PI / 4), -0.4 + sqrt(0.5) * sin(t + M_PI / 4),
                   0.5 - 0.0025}, d;
    nearest(m, n, x, &d);
    ASSERT_LE(d, 1e-13);
  }
  fl_shape_free(&big);
  fl_shape_free(&a);
  fl_shape_free(&b);
  return 0;
}


/* sim/collide_impl.h: the Gauss-map test's shared dots on (1) or off (0) */
extern int fl__cl_arc_share;


FL_TEST(box_box_shared_arc_dots_same_contacts) {
  // boxes of three sizes at random poses near contact (overlapping, touching, separated within
  // and beyond the margin): the contacts with the Gauss-map dots shared among a box's parallel
  // edges are those of the per-pair dots, to the bit
  fl_shape box[3];
  ASSERT_OK(fl_shape_make_box(0.5, 0.5, 0.5, &box[0]));
  ASSERT_OK(fl_shape_make_box(0.4, 0.25, 0.1, &box[1]));
  ASSERT_OK(fl_shape_make_box(1.0, 0.2, 0.3, &box[2]));
  uint64_t st = 12345;
  int ncontact = 0, nedge = 0;
  for (int t = 0; t < 3000; t++) {
    double r[12];
    for (int k = 0; k < 12; k++) {
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      r[k] = (double)(st >> 11) / 9007199254740992.0; // [0, 1)
    }
    const fl_shape *a = &box[t % 3], *b = &box[(t / 3) % 3];
    double qa[4], qb[4], pa[3] = {0, 0, 0}, dir[3];
    qaxis(r[0] - 0.5, r[1] - 0.5, r[2] - 0.5 + 1e-3, 6.3 * r[3], qa);
    qaxis(r[4] - 0.5, r[5] - 0.5 + 1e-3, r[6] - 0.5, 6.3 * r[7], qb);
    for (int k = 0; k < 3; k++) dir[k] = r[8 + k] - 0.5;
    double dn = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    double dist = (0.3 + 1.2 * r[11]) * (a->radius + b->radius) * 0.8;
    double pb[3] = {dist * dir[0] / dn, dist * dir[1] / dn, dist * dir[2] / dn};
    fl_manifold_point m1[FL_MANIFOLD_MAX], m0[FL_MANIFOLD_MAX];
    memset(m1, 0, sizeof m1);
    memset(m0, 0, sizeof m0);
    fl__cl_arc_share = 1;
    int n1 = fl_collide(a, pa, qa, b, pb, qb, 0.02, m1);
    fl__cl_arc_share = 0;
    int n0 = fl_collide(a, pa, qa, b, pb, qb, 0.02, m0);
    fl__cl_arc_share = 1;
    ASSERT_EQ(n1, n0);
    ASSERT(n1 >= 0);
    ASSERT(memcmp(m1, m0, (size_t)n1 * sizeof *m1) == 0);
    ncontact += n1 > 0;
    nedge += n1 == 1 && (m1[0].feature >> 60) == FL_FEAT_EDGE;
  }
  fprintf(stderr, "pairs in contact %d of 3000, edge-edge %d\n", ncontact, nedge);
  ASSERT(ncontact > 300);
  ASSERT(nedge > 10);
  for (int k = 0; k < 3; k++) fl_shape_free(&box[k]);
  return 0;
}


extern int fl__cl_box_fast;


/* the contacts of one pose with the box closed forms (and the separating-axis hints and
 * placements once per call, which the same switch turns off) on and off: same count, same
 * bits; returns the count */
static int box_fast_same(const fl_shape *a, const double pa[3], const double qa[4],
                         const fl_shape *b, const double pb[3], const double qb[4],
                         double margin, fl_manifold_point *m1) {
  fl_manifold_point m0[FL_MANIFOLD_MAX];
  memset(m1, 0, FL_MANIFOLD_MAX * sizeof *m1);
  memset(m0, 0, sizeof m0);
  fl__cl_box_fast = 1;
  int n1 = fl_collide(a, pa, qa, b, pb, qb, margin, m1);
  fl__cl_box_fast = 0;
  int n0 = fl_collide(a, pa, qa, b, pb, qb, margin, m0);
  fl__cl_box_fast = 1;
  if (n1 != n0 || n1 < 0 || memcmp(m1, m0, (size_t)(n1 > 0 ? n1 : 0) * sizeof *m1) != 0) {
    fprintf(stderr, "box closed forms: %d contacts against %d, or other bits\n", n1, n0);
    return -1;
  }
  return n1;
}


FL_TEST(box_box_closed_forms_same_contacts) {
  // the box closed forms (face separations, the bound that skips the edge pairs, the exact
  // distance's box bounds) against the general loops, to the bit: random poses near contact,
  // and boxes lying on one another with small tilts and gaps (a pile's resting pairs; some
  // exactly aligned), with a margin that reaches the exact distance of separated pairs; the
  // same three shapes recur, so the separating-axis hints of earlier poses are tested too
  fl_shape box[3];
  ASSERT_OK(fl_shape_make_box(0.5, 0.5, 0.5, &box[0]));
  ASSERT_OK(fl_shape_make_box(0.4, 0.25, 0.1, &box[1]));
  ASSERT_OK(fl_shape_make_box(1.0, 0.2, 0.3, &box[2]));
  uint64_t st = 2024;
  int ncontact = 0, nedge = 0, nface = 0, nsep = 0;
  fl_manifold_point m[FL_MANIFOLD_MAX];
  for (int t = 0; t < 6000; t++) {
    double r[12];
    for (int k = 0; k < 12; k++) {
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      r[k] = (double)(st >> 11) / 9007199254740992.0; // [0, 1)
    }
    const fl_shape *a = &box[t % 3], *b = &box[(t / 3) % 3];
    double qa[4], qb[4], pa[3] = {0, 0, 0}, pb[3];
    int n;
    if (t % 2 == 0) {
      double dir[3];
      qaxis(r[0] - 0.5, r[1] - 0.5, r[2] - 0.5 + 1e-3, 6.3 * r[3], qa);
      qaxis(r[4] - 0.5, r[5] - 0.5 + 1e-3, r[6] - 0.5, 6.3 * r[7], qb);
      for (int k = 0; k < 3; k++) dir[k] = r[8 + k] - 0.5;
      double dn = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
      double dist = (0.3 + 1.2 * r[11]) * (a->radius + b->radius) * 0.8;
      for (int k = 0; k < 3; k++) pb[k] = dist * dir[k] / dn;
      n = box_fast_same(a, pa, qa, b, pb, qb, 0.02, m);
    } else {
      // b on top of a: tilts up to 0.05 rad (none for one pose in 8), a turn about z, gaps
      // from -5 mm to 45 mm, offsets that let b overhang a's edge
      double tilt = (t % 16 == 1) ? 0 : 0.05 * (r[0] - 0.5);
      qaxis(r[1] - 0.5, r[2] - 0.5, 0, tilt, qa);
      qaxis(0, 0, 1, (t % 16 == 1) ? 0 : 6.3 * r[3], qb);
      double gap = -0.005 + 0.05 * r[4];
      pb[0] = (r[5] - 0.5) * 2 * a->size[0], pb[1] = (r[6] - 0.5) * 2 * a->size[1];
      pb[2] = a->size[2] + b->size[2] + gap;
      n = box_fast_same(a, pa, qa, b, pb, qb, 0.05, m);
      nface += n > 1;
    }
    ASSERT(n >= 0);
    ncontact += n > 0;
    nedge += n == 1 && (m[0].feature >> 60) == FL_FEAT_EDGE;
    nsep += n > 0 && m[0].phi > 0;
  }
  fprintf(stderr, "pairs in contact %d of 6000, edge-edge %d, resting face %d, separated %d\n",
          ncontact, nedge, nface, nsep);
  ASSERT(ncontact > 2000);
  ASSERT(nedge > 10);
  ASSERT(nface > 1000);
  ASSERT(nsep > 500);
  for (int k = 0; k < 3; k++) fl_shape_free(&box[k]);
  return 0;
}


FL_TEST(hull_hull_placed_once_same_contacts) {
  // general hexahedra (boxes with every vertex moved, as the stones of an arch) at random
  // poses near contact and resting on one another: the edge-pair loop with b's vertices,
  // normals and first Gauss-map dots placed once per call against the per-pair loop, to the bit
  uint64_t st = 77;
  int ncontact = 0, nface = 0;
  fl_manifold_point m[FL_MANIFOLD_MAX];
  for (int t = 0; t < 3000; t++) {
    double r[12], pts[2][24];
    fl_shape h[2];
    for (int s = 0; s < 2; s++) {
      for (int v = 0; v < 8; v++)
        for (int k = 0; k < 3; k++) {
          st = st * 6364136223846793005ULL + 1442695040888963407ULL;
          double u = (double)(st >> 11) / 9007199254740992.0;
          double half = k == 2 ? 0.2 : 0.5;
          pts[s][3 * v + k] = ((v >> k) & 1 ? half : -half) + 0.08 * (u - 0.5);
        }
      ASSERT_OK(fl_shape_make_convex(pts[s], 8, &h[s]));
    }
    for (int k = 0; k < 12; k++) {
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      r[k] = (double)(st >> 11) / 9007199254740992.0;
    }
    double qa[4], qb[4], pa[3] = {0, 0, 0}, pb[3];
    int n;
    if (t % 2 == 0) {
      double dir[3];
      qaxis(r[0] - 0.5, r[1] - 0.5, r[2] - 0.5 + 1e-3, 6.3 * r[3], qa);
      qaxis(r[4] - 0.5, r[5] - 0.5 + 1e-3, r[6] - 0.5, 6.3 * r[7], qb);
      for (int k = 0; k < 3; k++) dir[k] = r[8 + k] - 0.5;
      double dn = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
      double dist = (0.3 + 1.2 * r[11]) * (h[0].radius + h[1].radius) * 0.8;
      for (int k = 0; k < 3; k++) pb[k] = dist * dir[k] / dn;
      n = box_fast_same(&h[0], pa, qa, &h[1], pb, qb, 0.02, m);
    } else {
      qaxis(r[1] - 0.5, r[2] - 0.5, 0, 0.05 * (r[0] - 0.5), qa);
      qaxis(0, 0, 1, 0.3 * (r[3] - 0.5), qb);
      pb[0] = 0.6 * (r[5] - 0.5), pb[1] = 0.6 * (r[6] - 0.5);
      pb[2] = 0.4 + 0.06 * (r[4] - 0.5);
      n = box_fast_same(&h[0], pa, qa, &h[1], pb, qb, 0.05, m);
      nface += n > 1;
    }
    ASSERT(n >= 0);
    ncontact += n > 0;
    fl_shape_free(&h[0]);
    fl_shape_free(&h[1]);
  }
  fprintf(stderr, "pairs in contact %d of 3000, resting face %d\n", ncontact, nface);
  ASSERT(ncontact > 1000);
  ASSERT(nface > 500);
  return 0;
}


FL_TEST(box_box_edge_edge_crossed) {
  // a's top edge runs along x, b's bottom edge along y: one point, normal x cross y = z
  fl_shape a, b;
  ASSERT_OK(fl_shape_make_box(0.5, 0.5, 0.5, &a));
  ASSERT_OK(fl_shape_make_box(0.5, 0.5, 0.5, &b));
  double qa[4], qb[4], h = 0.5 * sqrt(2.0);
  qaxis(1, 0, 0, M_PI / 4, qa);
  qaxis(0, 1, 0, M_PI / 4, qb);
  double gaps[3] = {-0.01, 0.0, 0.003};
  for (int g = 0; g < 3; g++) {
    double pa[3] = {0.1, 0.2, 0}, pb[3] = {0.1, 0.2, 2 * h + gaps[g]};
    fl_manifold_point m[FL_MANIFOLD_MAX];
    int n = fl_collide(&a, pa, qa, &b, pb, qb, 0.005, m);
    ASSERT_EQ(n, 1);
    double up[3] = {0, 0, 1};
    for (int k = 0; k < 3; k++) ASSERT_NEAR(m[0].n[k], up[k], 1e-13);
    ASSERT_NEAR(m[0].phi, gaps[g], 1e-13);
    ASSERT_NEAR(m[0].p[0], 0.1, 1e-13);
    ASSERT_NEAR(m[0].p[1], 0.2, 1e-13);
    ASSERT_NEAR(m[0].p[2], h + gaps[g] / 2, 1e-13);
    ASSERT_EQ(m[0].feature >> 60, FL_FEAT_EDGE);
    ASSERT_EQ((m[0].feature >> 28) & 0xF, FL_FEAT_EDGE);
    // swapped
    fl_manifold_point w[FL_MANIFOLD_MAX];
    ASSERT_EQ(fl_collide(&b, pb, qb, &a, pa, qa, 0.005, w), 1);
    ASSERT_NEAR(w[0].n[2], -1, 1e-13);
    ASSERT_NEAR(w[0].phi, gaps[g], 1e-13);
  }
  fl_shape_free(&a);
  fl_shape_free(&b);
  return 0;
}


/* sim/collide_impl.h: the cosine of the nearly flat case's angle (2 switches the case off) */
extern double fl__cl_flat_cos;


/* Rodrigues: v rotated by angle th about the unit axis u */
static void rot_axis(const double u[3], double th, const double v[3], double out[3]) {
  double c = cos(th), s = sin(th), uv = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
  double x[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
  for (int k = 0; k < 3; k++) out[k] = v[k] * c + x[k] * s + u[k] * uv * (1 - c);
}


FL_TEST(box_box_nearly_flat_face_manifold) {
  // two cubes of half edge h = 0.25, b on a's top face, shifted by (0.05, 0.05) so that it
  // hangs over a's corner, tilted by 0.5 deg about the diagonal (1, 1, 0): an edge pair's axis
  // beats a's top face by a hair, and one edge point would let b pivot into a. The contact is
  // a's top face (z = h) against b's bottom face: the overlap of the two squares, clipped, its
  // four corners on b's bottom plane, normal +z, phi = z - h, p midway (z = h + phi / 2)
  const double h = 0.25, th = 0.5 * M_PI / 180, r2 = sqrt(0.5);
  fl_shape a, b;
  ASSERT_OK(fl_shape_make_box(h, h, h, &a));
  ASSERT_OK(fl_shape_make_box(h, h, h, &b));
  double u[3] = {r2, r2, 0}, qb[4], pa[3] = {0, 0, 0};
  qaxis(1, 1, 0, th, qb);
  // b's axes in the world, its corner (-h, -h, -h) and bottom plane ez . (x - pb) = -h
  double ex[3], ey[3], ez[3], e[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  rot_axis(u, th, e[0], ex), rot_axis(u, th, e[1], ey), rot_axis(u, th, e[2], ez);
  double gaps[2] = {0.002, -0.004}; // overlapping, and separated within the margin
  for (int g = 0; g < 2; g++) {
    double pb[3] = {0.05, 0.05, 2 * h - gaps[g]}, c0[3], want[4][3];
    for (int k = 0; k < 3; k++) c0[k] = pb[k] - h * (ex[k] + ey[k] + ez[k]);
    // 1: b's corner; 2: b's edge from c0 along ex meets x = h; 3: along ey meets y = h;
    // 4: a's corner (h, h) on b's bottom plane
    double s2 = (h - c0[0]) / (2 * h * ex[0]), s3 = (h - c0[1]) / (2 * h * ey[1]);
    for (int k = 0; k < 3; k++) {
      want[0][k] = c0[k];
      want[1][k] = c0[k] + s2 * 2 * h * ex[k];
      want[2][k] = c0[k] + s3 * 2 * h * ey[k];
    }
    want[3][0] = h, want[3][1] = h;
    want[3][2] = pb[2] + (-h - ez[0] * (h - pb[0]) - ez[1] * (h - pb[1])) / ez[2];
    fl_manifold_point m[FL_MANIFOLD_MAX];
    int n = fl_collide(&a, pa, q_id, &b, pb, qb, 0.01, m);
    ASSERT_EQ(n, 4);
    ASSERT(unique_features(m, n));
    double deepest = INFINITY;
    for (int i = 0; i < 4; i++) {
      double phi = want[i][2] - h, x[3] = {want[i][0], want[i][1], h + 0.5 * phi}, d;
      int j = nearest(m, n, x, &d);
      ASSERT_NEAR(d, 0, 1e-12);
      ASSERT_NEAR(m[j].phi, phi, 1e-12);
      ASSERT_NEAR(m[j].n[0], 0, 1e-12);
      ASSERT_NEAR(m[j].n[1], 0, 1e-12);
      ASSERT_NEAR(m[j].n[2], 1, 1e-12);
      deepest = fmin(deepest, phi);
    }
    // by hand: b's bottom plane is z = 2 h - gap - h / cos th - tan th (dx - dy) / sqrt 2
    // (dx, dy from b's centre), since ez = (sin th / sqrt 2, -sin th / sqrt 2, cos th); the
    // corner where b's edge leaves a's face at x = h is the deepest
    for (int i = 0; i < 4; i++) {
      double dx = want[i][0] - pb[0], dy = want[i][1] - pb[1];
      ASSERT_NEAR(want[i][2] - h, -gaps[g] - h * (1 / cos(th) - 1) - r2 * tan(th) * (dx - dy),
                  1e-14);
    }
    ASSERT_NEAR(deepest, want[1][2] - h, 1e-15);
    // the swapped call has the same points and b's face as reference
    fl_manifold_point w[FL_MANIFOLD_MAX];
    ASSERT_EQ(fl_collide(&b, pb, qb, &a, pa, q_id, 0.01, w), 4);
    // with the nearly flat case off, the same pose gives the one edge point, at the deepest
    // corner of the manifold (the edges' crossing)
    double saved = fl__cl_flat_cos;
    fl__cl_flat_cos = 2;
    int n1 = fl_collide(&a, pa, q_id, &b, pb, qb, 0.01, w);
    fl__cl_flat_cos = saved;
    ASSERT_EQ(n1, 1);
    ASSERT_EQ(w[0].feature >> 60, FL_FEAT_EDGE);
    ASSERT_EQ((w[0].feature >> 28) & 0xF, FL_FEAT_EDGE);
    ASSERT_NEAR(w[0].phi, deepest, 1e-6);
  }
  fl_shape_free(&a);
  fl_shape_free(&b);
  return 0;
}


FL_TEST(box_box_crossed_edges_keep_edge_point) {
  // a turned by 20 deg about x, b by -20 deg about y: a's top edge (along x) crosses b's bottom
  // edge (along y), 1 cm deep. Their faces are 28 deg apart, so the contact is the edges'
  // one point, normal +z, even with a margin wide enough for a face manifold (0.32 m: the
  // clipped face would give 3 points there)
  fl_shape a, b;
  ASSERT_OK(fl_shape_make_box(0.5, 0.5, 0.5, &a));
  ASSERT_OK(fl_shape_make_box(0.5, 0.5, 0.5, &b));
  double al = 20 * M_PI / 180, c = cos(al), s = sin(al), h = 0.5 * (c + s), qa[4], qb[4];
  qaxis(1, 0, 0, al, qa);
  qaxis(0, 1, 0, -al, qb);
  double pa[3] = {0.1, 0.2, 0}, pb[3] = {0.1, 0.2, 2 * h - 0.01};
  // a's top edge is at y = 0.2 + 0.5 (c - s), b's bottom edge at x = 0.1 - 0.5 (c - s)
  double want[3] = {0.1 - 0.5 * (c - s), 0.2 + 0.5 * (c - s), h - 0.005};
  double margins[2] = {0.005, 0.32};
  for (int g = 0; g < 2; g++) {
    fl_manifold_point m[FL_MANIFOLD_MAX];
    ASSERT_EQ(fl_collide(&a, pa, qa, &b, pb, qb, margins[g], m), 1);
    for (int k = 0; k < 3; k++) ASSERT_NEAR(m[0].p[k], want[k], 1e-12);
    ASSERT_NEAR(m[0].n[0], 0, 1e-12);
    ASSERT_NEAR(m[0].n[1], 0, 1e-12);
    ASSERT_NEAR(m[0].n[2], 1, 1e-12);
    ASSERT_NEAR(m[0].phi, -0.01, 1e-12);
    ASSERT_EQ(m[0].feature >> 60, FL_FEAT_EDGE);
    ASSERT_EQ((m[0].feature >> 28) & 0xF, FL_FEAT_EDGE);
  }
  // the angle test is what keeps it: taking every winning edge axis as flat gives 3 points
  double saved = fl__cl_flat_cos;
  fl__cl_flat_cos = -2;
  fl_manifold_point m[FL_MANIFOLD_MAX];
  int n = fl_collide(&a, pa, qa, &b, pb, qb, 0.32, m);
  fl__cl_flat_cos = saved;
  ASSERT_EQ(n, 3);
  fl_shape_free(&a);
  fl_shape_free(&b);
  return 0;
}


FL_TEST(box_box_margin) {
  fl_shape a, b;
  ASSERT_OK(fl_shape_make_box(0.5, 0.4, 0.3, &a));
  ASSERT_OK(fl_shape_make_box(0.2, 0.2, 0.2, &b));
  double pa[3] = {0, 0, 0}, pb[3] = {0.5 + 0.2 + 0.1, 0.05, 0};
  fl_manifold_point m[FL_MANIFOLD_MAX];
  // gap 0.1 beyond a margin of 0.05: nothing
  ASSERT_EQ(fl_collide(&a, pa, q_id, &b, pb, q_id, 0.05, m), 0);
  // gap 0.03 within the margin: the face's four points, phi = +0.03, normal +x
  pb[0] = 0.5 + 0.2 + 0.03;
  int n = fl_collide(&a, pa, q_id, &b, pb, q_id, 0.05, m);
  ASSERT_EQ(n, 4);
  double ex[3] = {1, 0, 0};
  ASSERT(all_normal_phi(m, n, ex, 0.03, 1e-13));
  for (int i = 0; i < n; i++) ASSERT_NEAR(m[i].p[0], 0.515, 1e-13);
  // margin 0: only touching or overlapping counts
  ASSERT_EQ(fl_collide(&a, pa, q_id, &b, pb, q_id, 0.0, m), 0);
  fl_shape_free(&a);
  fl_shape_free(&b);
  return 0;
}


/*---- spheres, capsules, cylinders against closed forms ----*/

FL_TEST(sphere_closed_forms) {
  fl_shape s1, s2, plane, box, cap, cyl, hull;
  ASSERT_OK(fl_shape_make_sphere(0.3, &s1));
  ASSERT_OK(fl_shape_make_sphere(0.2, &s2));
  ASSERT_OK(fl_shape_make_plane(&plane));
  ASSERT_OK(fl_shape_make_box(0.5, 0.4, 0.3, &box));
  ASSERT_OK(fl_shape_make_capsule(0.1, 0.5, &cap));
  ASSERT_OK(fl_shape_make_cylinder(0.4, 0.6, 0, &cyl));
  fl_manifold_point m[FL_MANIFOLD_MAX];
  double o[3] = {0, 0, 0};
  // sphere-sphere: phi = |c2 - c1| - r1 - r2 along the centre line
  double c2[3] = {0.2, 0.3, 0.25};
  double dist = sqrt(0.04 + 0.09 + 0.0625);
  ASSERT_EQ(fl_collide(&s1, o, q_id, &s2, c2, q_id, 0.1, m), 1);
  ASSERT_NEAR(m[0].phi, dist - 0.5, 1e-14);
  for (int k = 0; k < 3; k++) ASSERT_NEAR(m[0].n[k], c2[k] / dist, 1e-14);
  for (int k = 0; k < 3; k++)
    ASSERT_NEAR(m[0].p[k], c2[k] / dist * (0.3 + 0.5 * (dist - 0.5)), 1e-14);
  // sphere-plane (plane tilted 20 degrees about y, sphere 0.25 above it along its normal)
  double qp[4], nrm[3] = {sin(0.35), 0, cos(0.35)};
  qaxis(0, 1, 0, 0.35, qp);
  double cs[3] = {0.25 * nrm[0] + 0.1 * nrm[2], 0.7, 0.25 * nrm[2] - 0.1 * nrm[0]};
  ASSERT_EQ(fl_collide(&plane, o, qp, &s1, cs, q_id, 0.0, m), 1);
  ASSERT_NEAR(m[0].phi, -0.05, 1e-14);
  for (int k = 0; k < 3; k++) ASSERT_NEAR(m[0].n[k], nrm[k], 1e-14);
  // sphere-box: face, edge and corner regions
  double cf[3] = {0.5 + 0.25, 0.1, -0.2};
  ASSERT_EQ(fl_collide(&s1, cf, q_id, &box, o, q_id, 0.0, m), 1);
  ASSERT_NEAR(m[0].phi, -0.05, 1e-14);
  ASSERT_NEAR(m[0].n[0], -1, 1e-14);
  double ce[3] = {0.5 + 0.1, 0.4 + 0.2, 0.0};
  ASSERT_EQ(fl_collide(&s1, ce, q_id, &box, o, q_id, 0.0, m), 1);
  ASSERT_NEAR(m[0].phi, sqrt(0.05) - 0.3, 1e-14);
  ASSERT_NEAR(m[0].n[0], -0.1 / sqrt(0.05), 1e-14);
  ASSERT_NEAR(m[0].n[1], -0.2 / sqrt(0.05), 1e-14);
  double cc[3] = {-0.5 - 0.1, 0.4 + 0.1, -0.3 - 0.1};
  ASSERT_EQ(fl_collide(&s1, cc, q_id, &box, o, q_id, 0.0, m), 1);
  ASSERT_NEAR(m[0].phi, 0.1 * sqrt(3.0) - 0.3, 1e-14);
  // centre inside the box, nearest face +z at 0.05
  double ci[3] = {0.1, 0.0, 0.25};
  ASSERT_EQ(fl_collide(&s1, ci, q_id, &box, o, q_id, 0.0, m), 1);
  ASSERT_NEAR(m[0].phi, -0.05 - 0.3, 1e-14);
  ASSERT_NEAR(m[0].n[2], -1, 1e-14);
  // the same through the convex hull of the box's corners (general polyhedron code)
  ASSERT_OK(fl_shape_make_convex(box.vert, 8, &hull));
  const double *cases[4] = {cf, ce, cc, ci};
  for (int k = 0; k < 4; k++) {
    fl_manifold_point u[FL_MANIFOLD_MAX];
    ASSERT_EQ(fl_collide(&s1, cases[k], q_id, &box, o, q_id, 0.0, m), 1);
    ASSERT_EQ(fl_collide(&s1, cases[k], q_id, &hull, o, q_id, 0.0, u), 1);
    ASSERT_NEAR(u[0].phi, m[0].phi, 1e-14);
    for (int j = 0; j < 3; j++) ASSERT_NEAR(u[0].n[j], m[0].n[j], 1e-14);
    for (int j = 0; j < 3; j++) ASSERT_NEAR(u[0].p[j], m[0].p[j], 1e-14);
  }
  // sphere-capsule: capsule along x (rotated from z), sphere over its middle and past its end
  double qc[4];
  qaxis(0, 1, 0, M_PI / 2, qc);
  double cm[3] = {0.2, 0, 0.35};
  ASSERT_EQ(fl_collide(&s1, cm, q_id, &cap, o, qc, 0.0, m), 1);
  ASSERT_NEAR(m[0].phi, 0.35 - 0.4, 1e-14);
  ASSERT_NEAR(m[0].n[2], -1, 1e-14);
  double cx[3] = {0.5 + 0.3, 0.0, 0.2};
  ASSERT_EQ(fl_collide(&s1, cx, q_id, &cap, o, qc, 0.0, m), 1);
  ASSERT_NEAR(m[0].phi, sqrt(0.09 + 0.04) - 0.4, 1e-14);
  // sphere-cylinder (exact): over the cap, beside the side, off the rim
  double cup[3] = {0.1, 0.2, 0.6 + 0.25};
  ASSERT_EQ(fl_collide(&s1, cup, q_id, &cyl, o, q_id, 0.0, m), 1);
  ASSERT_NEAR(m[0].phi, -0.05, 1e-14);
  ASSERT_NEAR(m[0].n[2], -1, 1e-14);
  double cside[3] = {0.0, -(0.4 + 0.2), 0.3};
  ASSERT_EQ(fl_collide(&s1, cside, q_id, &cyl, o, q_id, 0.0, m), 1);
  ASSERT_NEAR(m[0].phi, -0.1, 1e-14);
  ASSERT_NEAR(m[0].n[1], 1, 1e-14);
  double crim[3] = {(0.4 + 0.15) * cos(0.3), (0.4 + 0.15) * sin(0.3), -0.6 - 0.2};
  ASSERT_EQ(fl_collide(&s1, crim, q_id, &cyl, o, q_id, 0.0, m), 1);
  ASSERT_NEAR(m[0].phi, 0.25 - 0.3, 1e-14);
  fl_shape_free(&s1), fl_shape_free(&s2), fl_shape_free(&plane), fl_shape_free(&box);
  fl_shape_free(&cap), fl_shape_free(&cyl), fl_shape_free(&hull);
  return 0;
}


FL_TEST(capsule_capsule_parallel_and_crossed) {
  fl_shape a, b;
  ASSERT_OK(fl_shape_make_capsule(0.1, 0.5, &a));
  ASSERT_OK(fl_shape_make_capsule(0.15, 0.3, &b));
  double qx[4], qy[4];
  qaxis(0, 1, 0, M_PI / 2, qx); // axis along x
  qaxis(1, 0, 0, M_PI / 2, qy); // axis along y
  fl_manifold_point m[FL_MANIFOLD_MAX];
  // parallel, both along x, b above a and shifted along x: overlap [0.1, 0.5] of a's axis
  double pa[3] = {0, 0, 0}, pb[3] = {0.4, 0, 0.24};
  int n = fl_collide(&a, pa, qx, &b, pb, qx, 0.0, m);
  ASSERT_EQ(n, 2);
  double up[3] = {0, 0, 1};
  ASSERT(all_normal_phi(m, n, up, -0.01, 1e-14));
  ASSERT(unique_features(m, n));
  double xs[2] = {m[0].p[0], m[1].p[0]};
  ASSERT_NEAR(fmin(xs[0], xs[1]), 0.1, 1e-14);
  ASSERT_NEAR(fmax(xs[0], xs[1]), 0.5, 1e-14);
  for (int i = 0; i < 2; i++) ASSERT_NEAR(m[i].p[2], 0.1 - 0.005, 1e-14);
  // crossed: a along x, b along y above: one point, normal +z
  double pc[3] = {0.2, -0.1, 0.24};
  n = fl_collide(&a, pa, qx, &b, pc, qy, 0.0, m);
  ASSERT_EQ(n, 1);
  ASSERT(all_normal_phi(m, n, up, -0.01, 1e-14));
  ASSERT_NEAR(m[0].p[0], 0.2, 1e-14);
  ASSERT_NEAR(m[0].p[1], 0.0, 1e-14);
  // end to end along x: the caps touch, phi = gap between the hemispheres
  double pe[3] = {0.5 + 0.3 + 0.1 + 0.15 + 0.02, 0, 0};
  n = fl_collide(&a, pa, qx, &b, pe, qx, 0.05, m);
  ASSERT_EQ(n, 1);
  ASSERT_NEAR(m[0].phi, 0.02, 1e-14);
  ASSERT_NEAR(m[0].n[0], 1, 1e-14);
  fl_shape_free(&a);
  fl_shape_free(&b);
  return 0;
}


FL_TEST(capsule_and_cylinder_on_plane_and_box) {
  fl_shape plane, cap, cyl, box;
  ASSERT_OK(fl_shape_make_plane(&plane));
  ASSERT_OK(fl_shape_make_capsule(0.1, 0.5, &cap));
  ASSERT_OK(fl_shape_make_cylinder(0.2, 0.4, 0, &cyl));
  ASSERT_OK(fl_shape_make_box(2, 2, 0.5, &box));
  fl_manifold_point m[FL_MANIFOLD_MAX];
  double o[3] = {0, 0, 0}, qx[4], up[3] = {0, 0, 1};
  qaxis(0, 1, 0, M_PI / 2, qx);
  // a capsule lying on a plane: both ends
  double pc[3] = {0.3, 0.1, 0.1 - 0.002};
  ASSERT_EQ(fl_collide(&plane, o, q_id, &cap, pc, qx, 0.0, m), 2);
  ASSERT(all_normal_phi(m, 2, up, -0.002, 1e-14));
  // ... and on a box's top face (z = 0.5)
  double pcb[3] = {0.3, 0.1, 0.5 + 0.1 - 0.002};
  ASSERT_EQ(fl_collide(&box, o, q_id, &cap, pcb, qx, 0.0, m), 2);
  ASSERT(all_normal_phi(m, 2, up, -0.002, 1e-14));
  ASSERT_NEAR(fabs(m[0].p[0] - m[1].p[0]), 1.0, 1e-14);
  // a capsule standing on a box's edge region, tilted: against the closed form of a sphere
  // (the lower hemisphere centre sits beyond the +x face, level with the top)
  double qt[4];
  qaxis(0, 1, 0, 0.3, qt);
  double pt[3] = {2 + 0.05 + 0.5 * sin(0.3), 0, 0.5 + 0.5 * cos(0.3)};
  ASSERT_EQ(fl_collide(&box, o, q_id, &cap, pt, qt, 0.0, m), 1);
  ASSERT_NEAR(m[0].phi, -0.05, 1e-12);
  // an upright cylinder on a plane: 8 rim points on its bottom cap
  double py[3] = {0, 0, 0.4 - 0.003};
  int n = fl_collide(&plane, o, q_id, &cyl, py, q_id, 0.0, m);
  ASSERT_EQ(n, 8);
  ASSERT(all_normal_phi(m, n, up, -0.003, 1e-14));
  for (int i = 0; i < n; i++)
    ASSERT_NEAR(hypot(m[i].p[0], m[i].p[1]), 0.2, 1e-14);
  // a lying cylinder: the two rim points at the bottom, exact (not the polygon's)
  double pl[3] = {0.5, 0.5, 0.2 - 0.001};
  n = fl_collide(&plane, o, q_id, &cyl, pl, qx, 0.0, m);
  ASSERT_EQ(n, 2);
  ASSERT(all_normal_phi(m, n, up, -0.001, 1e-14));
  ASSERT_NEAR(fabs(m[0].p[0] - m[1].p[0]), 0.8, 1e-14);
  // a tilted cylinder: the deepest rim point, phi = z_c - h cos(t) - r sin(t)
  double tq[4], t = 0.4;
  qaxis(0, 1, 0, t, tq);
  double pz[3] = {0, 0, 0.4 * cos(t) + 0.2 * sin(t) - 0.004};
  n = fl_collide(&plane, o, q_id, &cyl, pz, tq, 0.0, m);
  ASSERT_EQ(n, 1);
  ASSERT_NEAR(m[0].phi, -0.004, 1e-14);
  // an upright cylinder on a box: the polyhedral cap (24 sides) gives a full face contact
  double pbx[3] = {0.3, 0.2, 0.5 + 0.4 - 0.003};
  n = fl_collide(&box, o, q_id, &cyl, pbx, q_id, 0.0, m);
  ASSERT_EQ(n, 8);
  ASSERT(all_normal_phi(m, n, up, -0.003, 1e-13));
  fl_shape_free(&plane), fl_shape_free(&cap), fl_shape_free(&cyl), fl_shape_free(&box);
  return 0;
}


/*---- every pair: normals from a to b, swapping flips them ----*/

FL_TEST(swap_flips_normal_all_pairs) {
  fl_shape s[6];
  double pts[8 * 3];
  ASSERT_OK(fl_shape_make_plane(&s[0]));
  ASSERT_OK(fl_shape_make_sphere(0.3, &s[1]));
  ASSERT_OK(fl_shape_make_box(0.3, 0.25, 0.2, &s[2]));
  ASSERT_OK(fl_shape_make_capsule(0.15, 0.25, &s[3]));
  ASSERT_OK(fl_shape_make_cylinder(0.25, 0.2, 16, &s[4]));
  // a wedge-like hexahedron
  double w[8][3] = {{-0.3, -0.2, -0.2}, {0.3, -0.2, -0.2}, {-0.3, 0.2, -0.2}, {0.3, 0.2, -0.2},
                    {-0.2, -0.1, 0.2},  {0.2, -0.1, 0.2},  {-0.2, 0.1, 0.2},  {0.2, 0.1, 0.2}};
  memcpy(pts, w, sizeof(w));
  ASSERT_OK(fl_shape_make_convex(pts, 8, &s[5]));
  double qa[4], qb[4];
  double axa[3] = {0.3, -0.5, 0.8}, axb[3] = {-0.7, 0.2, 0.4};
  fl_quat_from_axis_angle(axa, 0.7, qa);
  fl_quat_from_axis_angle(axb, 1.1, qb);
  int npairs = 0;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) {
      if (i == 0 && j == 0) {
        fl_manifold_point m[FL_MANIFOLD_MAX];
        double o[3] = {0, 0, 0};
        ASSERT_EQ(fl_collide(&s[0], o, q_id, &s[0], o, q_id, 0, m), FL_ERR_UNSUPPORTED);
        ASSERT(!fl_collide_supported(FL_SHAPE_PLANE, FL_SHAPE_PLANE));
        continue;
      }
      ASSERT(fl_collide_supported(s[i].type, s[j].type));
      // b sits above a and overlaps it a little; a plane is always a (or b) at the origin
      double pa[3] = {0.05, -0.03, 0}, pb[3] = {-0.02, 0.04, 0.38};
      const double *qai = i == 0 ? q_id : qa, *qbj = j == 0 ? q_id : qb;
      if (j == 0) pb[2] = -0.25;
      if (i == 0) pb[2] = 0.15;
      fl_manifold_point m[FL_MANIFOLD_MAX], r[FL_MANIFOLD_MAX];
      int n = fl_collide(&s[i], pa, qai, &s[j], pb, qbj, 0.01, m);
      int nr = fl_collide(&s[j], pb, qbj, &s[i], pa, qai, 0.01, r);
      if (n != 1 && n < 1) FL_FAIL_("pair %d-%d: %d points", i, j, n);
      ASSERT_EQ(nr, n);
      ASSERT(unique_features(m, n));
      for (int k = 0; k < n; k++) {
        // normals point from a to b: the centre of b lies on the +n side of a's centre
        double d[3];
        for (int c = 0; c < 3; c++) d[c] = pb[c] - pa[c];
        if (!(fl_v3_dot(m[k].n, d) > 0)) FL_FAIL_("pair %d-%d point %d: normal towards a", i, j, k);
        ASSERT_NEAR(fl_v3_norm(m[k].n), 1, 1e-12);
        // the swapped manifold holds the same point with the normal flipped
        int hit = 0;
        for (int l = 0; l < nr && !hit; l++) {
          double e = 0;
          for (int c = 0; c < 3; c++)
            e += fabs(r[l].p[c] - m[k].p[c]) + fabs(r[l].n[c] + m[k].n[c]);
          int64_t sw = (int64_t)(((uint64_t)r[l].feature << 32) | ((uint64_t)r[l].feature >> 32));
          hit = e < 1e-10 && fabs(r[l].phi - m[k].phi) < 1e-12 && sw == m[k].feature;
        }
        if (!hit) FL_FAIL_("pair %d-%d point %d: not found flipped in the swapped manifold", i, j, k);
        if (!(m[k].phi < 0.01)) FL_FAIL_("pair %d-%d: phi %g", i, j, m[k].phi);
      }
      npairs++;
    }
  ASSERT_EQ(npairs, 35);
  for (int i = 0; i < 6; i++) fl_shape_free(&s[i]);
  return 0;
}


/*---- feature ids ----*/

/* the sorted feature ids of a manifold */
static int sorted_features(const fl_manifold_point *m, int n, int64_t *f) {
  for (int i = 0; i < n; i++) f[i] = m[i].feature;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && f[j] < f[j - 1]; j--) {
      int64_t t = f[j];
      f[j] = f[j - 1], f[j - 1] = t;
    }
  return n;
}


FL_TEST(feature_ids_stable_under_perturbation) {
  fl_shape a, b;
  ASSERT_OK(fl_shape_make_box(0.5, 0.5, 0.5, &a));
  ASSERT_OK(fl_shape_make_box(0.4, 0.3, 0.2, &b));
  struct { double ax[3], ang, pos[3]; } cfg[3] = {
      {{0, 0, 1}, M_PI / 4, {0, 0, 0.5 + 0.2 - 0.01}},     // face: clipped polygon
      {{0, 0, 1}, 0.3, {0.2, 0.1, 0.5 + 0.2 - 0.01}},      // face, offset and turned
      {{1, 1, 0}, 0.9553166181245093, {0.1, 0, 1.0}},     // tilted onto an edge or corner
  };
  for (int c = 0; c < 3; c++) {
    double q[4], pa[3] = {0, 0, 0};
    fl_quat_from_axis_angle(cfg[c].ax, cfg[c].ang, q);
    if (c == 2) {
      // drop b until its lowest point is 0.01 into a's top face
      fl_manifold_point t[FL_MANIFOLD_MAX];
      double lo[3], hi[3];
      fl_shape_aabb(&b, cfg[c].pos, q, 0, lo, hi);
      cfg[c].pos[2] += 0.5 - lo[2] - 0.01;
      ASSERT(fl_collide(&a, pa, q_id, &b, cfg[c].pos, q, 0, t) > 0);
    }
    fl_manifold_point m0[FL_MANIFOLD_MAX], m1[FL_MANIFOLD_MAX];
    int n0 = fl_collide(&a, pa, q_id, &b, cfg[c].pos, q, 0.0, m0);
    ASSERT(n0 > 0);
    ASSERT(unique_features(m0, n0));
    // a small perturbation of both poses
    double dq[4], q1[4], qa1[4], p1[3], pa1[3] = {1e-5, -2e-5, 0};
    double axp[3] = {0.3, 0.4, -0.2};
    fl_quat_from_axis_angle(axp, 1e-4, dq);
    fl_quat_mul(dq, q, q1);
    fl_quat_from_axis_angle(axp, -5e-5, qa1);
    for (int k = 0; k < 3; k++) p1[k] = cfg[c].pos[k] + (k == 2 ? -1e-5 : 3e-5);
    int n1 = fl_collide(&a, pa1, qa1, &b, p1, q1, 0.0, m1);
    ASSERT_EQ(n1, n0);
    int64_t f0[FL_MANIFOLD_MAX], f1[FL_MANIFOLD_MAX];
    sorted_features(m0, n0, f0);
    sorted_features(m1, n1, f1);
    for (int i = 0; i < n0; i++)
      if (f0[i] != f1[i]) FL_FAIL_("configuration %d: feature %d changed", c, i);
  }
  fl_shape_free(&a);
  fl_shape_free(&b);
  return 0;
}


/*---- mass properties ----*/

static int inertia_near(const double I[9], const double J[9], double tol) {
  for (int k = 0; k < 9; k++)
    if (!(fabs(I[k] - J[k]) <= tol)) return 0;
  return 1;
}


FL_TEST(mass_properties_closed_forms) {
  double rho = 2700, m, c[3], I[9];
  // box 0.6 x 0.4 x 0.2 m: m = rho V, I_xx = m (b^2 + c^2) / 12
  fl_shape box, sph, cyl, cap, hull;
  ASSERT_OK(fl_shape_make_box(0.3, 0.2, 0.1, &box));
  ASSERT_OK(fl_shape_mass_properties(&box, rho, &m, c, I));
  double mb = 2700 * 0.6 * 0.4 * 0.2;
  double Ib[9] = {mb * (0.16 + 0.04) / 12, 0, 0, 0, mb * (0.36 + 0.04) / 12, 0,
                  0, 0, mb * (0.36 + 0.16) / 12};
  ASSERT_NEAR(m, mb, 1e-12 * mb);
  ASSERT(inertia_near(I, Ib, 1e-12 * mb));
  // the hull of its 8 corners through the divergence theorem
  ASSERT_OK(fl_shape_make_convex(box.vert, 8, &hull));
  ASSERT_EQ(hull.nvert, 8);
  ASSERT_EQ(hull.nface, 6);
  ASSERT_EQ(hull.nedge, 12);
  ASSERT_OK(fl_shape_mass_properties(&hull, rho, &m, c, I));
  ASSERT_NEAR(m, mb, 1e-12 * mb);
  for (int k = 0; k < 3; k++) ASSERT_NEAR(c[k], 0, 1e-15);
  ASSERT(inertia_near(I, Ib, 1e-12 * Ib[0]));
  // the same box shifted and turned: com follows, inertia rotates as R I R^T
  double R[9], q[4], sh[3] = {1.5, -2.0, 0.7}, pts[24];
  qaxis(0.2, 0.9, -0.4, 0.8, q);
  fl_quat_to_mat(q, R);
  for (int v = 0; v < 8; v++) {
    fl_m3_mulv(R, box.vert + 3 * v, pts + 3 * v);
    for (int k = 0; k < 3; k++) pts[3 * v + k] += sh[k];
  }
  fl_shape moved;
  ASSERT_OK(fl_shape_make_convex(pts, 8, &moved));
  ASSERT_OK(fl_shape_mass_properties(&moved, rho, &m, c, I));
  ASSERT_NEAR(m, mb, 1e-12 * mb);
  for (int k = 0; k < 3; k++) ASSERT_NEAR(c[k], sh[k], 1e-13);
  double RI[9], RIRt[9], Rt[9];
  fl_m3_mul(R, Ib, RI);
  fl_m3_transpose(R, Rt);
  fl_m3_mul(RI, Rt, RIRt);
  ASSERT(inertia_near(I, RIRt, 1e-12 * Ib[0] * 10));
  double shift[3];
  fl_shape_recenter(&moved, shift);
  for (int k = 0; k < 3; k++) ASSERT_NEAR(shift[k], sh[k], 1e-13);
  ASSERT_OK(fl_shape_mass_properties(&moved, rho, &m, c, I));
  for (int k = 0; k < 3; k++) ASSERT_NEAR(c[k], 0, 1e-13);
  // sphere r = 0.25: m = 4/3 pi r^3 rho, I = 2/5 m r^2
  ASSERT_OK(fl_shape_make_sphere(0.25, &sph));
  ASSERT_OK(fl_shape_mass_properties(&sph, rho, &m, c, I));
  double ms = 4.0 / 3.0 * M_PI * 0.015625 * rho;
  ASSERT_NEAR(m, ms, 1e-12 * ms);
  ASSERT_NEAR(I[0], 0.4 * ms * 0.0625, 1e-12 * ms);
  ASSERT_NEAR(I[8], 0.4 * ms * 0.0625, 1e-12 * ms);
  // cylinder r = 0.2, length 1: m = pi r^2 L rho, I_zz = m r^2 / 2, I_xx = m (3 r^2 + L^2)/12
  ASSERT_OK(fl_shape_make_cylinder(0.2, 0.5, 0, &cyl));
  ASSERT_OK(fl_shape_mass_properties(&cyl, rho, &m, c, I));
  double mc = M_PI * 0.04 * rho;
  ASSERT_NEAR(m, mc, 1e-12 * mc);
  ASSERT_NEAR(I[8], mc * 0.02, 1e-12 * mc);
  ASSERT_NEAR(I[0], mc * (0.12 + 1.0) / 12, 1e-12 * mc);
  ASSERT_NEAR(I[4], I[0], 1e-15);
  // its polyhedron (a regular 24-gon prism) through the hull: V = (m/2) r^2 sin(2 pi/m) L,
  // I_zz = rho L m r^4 sin(2 pi/m) (2 + cos(2 pi/m)) / 12
  fl_shape prism;
  ASSERT_OK(fl_shape_make_convex(cyl.vert, cyl.nvert, &prism));
  ASSERT_EQ(prism.nface, 26);
  double mp, ang = 2 * M_PI / 24;
  ASSERT_OK(fl_shape_mass_properties(&prism, rho, &mp, c, I));
  double Vp = 12 * 0.04 * sin(ang) * 1.0;
  ASSERT_NEAR(mp, rho * Vp, 1e-12 * rho * Vp);
  double Izz = rho * 1.0 * 24 * 0.0016 * sin(ang) * (2 + cos(ang)) / 12;
  ASSERT_NEAR(I[8], Izz, 1e-12 * Izz);
  // capsule r = 0.1, half length 0.3: a cylinder of length 0.6 and a sphere of radius 0.1
  // whose halves sit 0.3 from the centre (parallel axis through the hemispheres' centroids)
  ASSERT_OK(fl_shape_make_capsule(0.1, 0.3, &cap));
  ASSERT_OK(fl_shape_mass_properties(&cap, 1000, &m, c, I));
  double mcy = 1000 * M_PI * 0.01 * 0.6, mh = 1000 * 2.0 / 3.0 * M_PI * 0.001;
  double d = 0.3 + 3 * 0.1 / 8, Ih = 83.0 / 320.0 * mh * 0.01;
  ASSERT_NEAR(m, mcy + 2 * mh, 1e-12 * m);
  ASSERT_NEAR(I[0], mcy * (3 * 0.01 + 0.36) / 12 + 2 * (Ih + mh * d * d), 1e-12 * m);
  ASSERT_NEAR(I[8], mcy * 0.01 / 2 + 2 * 0.4 * mh * 0.01, 1e-12 * m);
  // a plane has none
  fl_shape pl;
  ASSERT_OK(fl_shape_make_plane(&pl));
  ASSERT_EQ(fl_shape_mass_properties(&pl, rho, &m, c, I), FL_ERR_INVAL);
  ASSERT_EQ(fl_shape_mass_properties(&box, -1, &m, c, I), FL_ERR_INVAL);
  fl_shape_free(&box), fl_shape_free(&sph), fl_shape_free(&cyl), fl_shape_free(&cap);
  fl_shape_free(&hull), fl_shape_free(&moved), fl_shape_free(&prism), fl_shape_free(&pl);
  return 0;
}


/* signed volume of tetrahedron (a, b, c, d) */
static double tet_volume(const double *a, const double *b, const double *c, const double *d) {
  double u[3], v[3], w[3], x[3];
  for (int k = 0; k < 3; k++) u[k] = b[k] - a[k], v[k] = c[k] - a[k], w[k] = d[k] - a[k];
  fl_v3_cross(v, w, x);
  return fl_v3_dot(u, x) / 6;
}


/* reads an arch file (stone, vertex, x, y, z rows) and checks every stone's hull against a
 * tetrahedral decomposition; returns 0, 1 on failure, 77 when the file is missing */
static int check_arch_file(const char *name, int nstones) {
  char path[1024];
  snprintf(path, sizeof path, "%s/reference/%s", fl_test_shared_dir(), name);
  FILE *f = fopen(path, "r");
  if (!f) SKIP("%s not found", path);
  double (*v)[8][3] = calloc((size_t)nstones, sizeof(*v));
  int count = 0;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    int s, k;
    double x, y, z;
    if (sscanf(line, "%d,%d,%lf,%lf,%lf", &s, &k, &x, &y, &z) != 5) continue;
    ASSERT(s >= 1 && s <= nstones && k >= 0 && k < 8);
    v[s - 1][k][0] = x, v[s - 1][k][1] = y, v[s - 1][k][2] = z;
    count++;
  }
  fclose(f);
  ASSERT_EQ(count, 8 * nstones);
  // vertex k has bits (z, along the arch, across the arch): the hexahedron splits into the
  // six tetrahedra around its diagonal 0-7 (exact for planar faces)
  static const int tets[6][4] = {{0, 1, 3, 7}, {0, 3, 2, 7}, {0, 2, 6, 7},
                                 {0, 6, 4, 7}, {0, 4, 5, 7}, {0, 5, 1, 7}};
  for (int s = 0; s < nstones; s++) {
    fl_shape h;
    ASSERT_OK(fl_shape_make_convex(&v[s][0][0], 8, &h));
    ASSERT_EQ(h.nvert, 8);
    ASSERT_EQ(h.nface, 6);
    ASSERT_EQ(h.nedge, 12);
    for (int g = 0; g < 6; g++) ASSERT_EQ(h.face_ptr[g + 1] - h.face_ptr[g], 4);
    double vol = 0;
    for (int t = 0; t < 6; t++)
      vol += fabs(tet_volume(v[s][tets[t][0]], v[s][tets[t][1]], v[s][tets[t][2]], v[s][tets[t][3]]));
    double m, c[3], I[9];
    ASSERT_OK(fl_shape_mass_properties(&h, 1.0, &m, c, I));
    ASSERT_NEAR(m, vol, 1e-12 * vol);
    ASSERT_NEAR(fl_shape_volume(&h), vol, 1e-12 * vol);
    // the centroid lies midway in z (the stones are prisms along z)
    ASSERT_NEAR(c[2], 0.5 * (v[s][0][2] + v[s][1][2]), 1e-12);
    // recentred, the hull's centroid is the origin
    double shift[3];
    fl_shape_recenter(&h, shift);
    for (int k = 0; k < 3; k++) ASSERT_NEAR(shift[k], c[k], 1e-12);
    ASSERT_OK(fl_shape_mass_properties(&h, 1.0, &m, c, I));
    for (int k = 0; k < 3; k++) ASSERT_NEAR(c[k], 0, 1e-12);
    fl_shape_free(&h);
  }
  free(v);
  return 0;
}


FL_TEST(arch_stones_hexahedra) { return check_arch_file("arch_25_stones_vertices.csv", 25); }


FL_TEST(arch_101_stones_hexahedra) { return check_arch_file("arch_101_stones_vertices.csv", 101); }


/*---- convex hull invariants ----*/

static unsigned long long rng_state = 88172645463325252ULL;
static double urand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}


FL_TEST(convex_hull_random_points) {
  for (int trial = 0; trial < 3; trial++) {
    int n = 300;
    double *p = malloc(sizeof(double) * 3 * (size_t)n);
    for (int i = 0; i < n; i++) {
      // in a ball for trial 0, on a sphere for trial 1, in a flat box for trial 2
      double x[3];
      do {
        for (int k = 0; k < 3; k++) x[k] = 2 * urand() - 1;
      } while (fl_v3_dot(x, x) > 1);
      if (trial == 1) fl_v3_normalize(x);
      if (trial == 2) x[2] *= 0.05;
      for (int k = 0; k < 3; k++) p[3 * i + k] = 3 + x[k];
    }
    fl_shape h;
    ASSERT_OK(fl_shape_make_convex(p, n, &h));
    // every input point inside every face plane, every face planar and convex
    for (int f = 0; f < h.nface; f++) {
      const double *nf = h.face_normal + 3 * f;
      ASSERT_NEAR(fl_v3_norm(nf), 1, 1e-12);
      for (int i = 0; i < n; i++) ASSERT_LE(fl_v3_dot(nf, p + 3 * i) - h.face_offset[f], 1e-9);
      for (int k = h.face_ptr[f]; k < h.face_ptr[f + 1]; k++)
        ASSERT_LE(fabs(fl_v3_dot(nf, h.vert + 3 * h.face_vert[k]) - h.face_offset[f]), 1e-6);
    }
    // euler: V - E + F = 2, each edge beside two faces
    ASSERT_EQ(h.nvert - h.nedge + h.nface, 2);
    if (trial == 1) ASSERT_EQ(h.nvert, n); // every point of a sphere is a vertex
    double m, c[3], I[9];
    ASSERT_OK(fl_shape_mass_properties(&h, 1, &m, c, I));
    if (trial == 1) ASSERT(m < 4.0 / 3.0 * M_PI && m > 0.9 * 4.0 / 3.0 * M_PI);
    fl_shape_free(&h);
    free(p);
  }
  // a cube given with duplicated corners, face centres, edge midpoints and its centre: the
  // extra points lie on (or in) the hull and are dropped
  {
    double q[27 * 2 * 3];
    int m = 0;
    for (int rep = 0; rep < 2; rep++)
      for (int x = -1; x <= 1; x++)
        for (int y = -1; y <= 1; y++)
          for (int z = -1; z <= 1; z++) q[3 * m] = x, q[3 * m + 1] = y, q[3 * m + 2] = z, m++;
    fl_shape c;
    ASSERT_OK(fl_shape_make_convex(q, m, &c));
    ASSERT_EQ(c.nvert, 8);
    ASSERT_EQ(c.nface, 6);
    ASSERT_EQ(c.nedge, 12);
    ASSERT_NEAR(fl_shape_volume(&c), 8, 1e-14);
    fl_shape_free(&c);
  }
  // bad input: too few, coplanar, NaN
  fl_shape h;
  double sq[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};
  ASSERT_EQ(fl_shape_make_convex(sq, 3, &h), FL_ERR_INVAL);
  ASSERT_EQ(fl_shape_make_convex(sq, 4, &h), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "coplanar");
  sq[4] = NAN;
  ASSERT_EQ(fl_shape_make_convex(sq, 4, &h), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "point 1");
  ASSERT_EQ(fl_shape_make_box(1, -1, 1, &h), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "half extent y");
  fl_shape_free(&h);
  return 0;
}


/*---- bounding boxes and the broad phase ----*/

FL_TEST(aabb_tight) {
  fl_shape cyl, cap, box;
  ASSERT_OK(fl_shape_make_cylinder(0.3, 0.5, 0, &cyl));
  ASSERT_OK(fl_shape_make_capsule(0.3, 0.5, &cap));
  ASSERT_OK(fl_shape_make_box(0.3, 0.2, 0.5, &box));
  double q[4], p[3] = {1, 2, 3}, lo[3], hi[3];
  qaxis(0, 1, 0, M_PI / 6, q);
  // axis (sin 30, 0, cos 30): x extent 0.5 sin30 + 0.3 cos30, y 0.3, z 0.5 cos30 + 0.3 sin30
  fl_shape_aabb(&cyl, p, q, 0.01, lo, hi);
  ASSERT_NEAR(hi[0] - 1, 0.25 + 0.3 * cos(M_PI / 6) + 0.01, 1e-14);
  ASSERT_NEAR(hi[1] - 2, 0.31, 1e-14);
  ASSERT_NEAR(3 - lo[2], 0.5 * cos(M_PI / 6) + 0.15 + 0.01, 1e-14);
  fl_shape_aabb(&cap, p, q, 0, lo, hi);
  ASSERT_NEAR(hi[0] - 1, 0.25 + 0.3, 1e-14);
  fl_shape_aabb(&box, p, q, 0, lo, hi);
  ASSERT_NEAR(hi[0] - 1, 0.3 * cos(M_PI / 6) + 0.5 * sin(M_PI / 6), 1e-14);
  // a convex hull: the extremes of its rotated vertices
  fl_shape hull;
  ASSERT_OK(fl_shape_make_convex(box.vert, 8, &hull));
  double lo2[3], hi2[3];
  fl_shape_aabb(&hull, p, q, 0, lo2, hi2);
  fl_shape_aabb(&box, p, q, 0, lo, hi);
  for (int k = 0; k < 3; k++) {
    ASSERT_NEAR(lo2[k], lo[k], 1e-14);
    ASSERT_NEAR(hi2[k], hi[k], 1e-14);
  }
  // planes: bounded only along an axis the normal is aligned with (solid below)
  fl_shape pl;
  ASSERT_OK(fl_shape_make_plane(&pl));
  fl_shape_aabb(&pl, p, q_id, 0.01, lo, hi);
  ASSERT_NEAR(hi[2], 3.01, 1e-14);
  ASSERT(lo[2] == -INFINITY && lo[0] == -INFINITY && hi[0] == INFINITY && hi[1] == INFINITY);
  double qw[4];
  qaxis(0, 1, 0, -M_PI / 2, qw); // normal +z turned to -x: a wall at x = 1, solid on +x side
  fl_shape_aabb(&pl, p, qw, 0, lo, hi);
  ASSERT_NEAR(lo[0], 1, 1e-14);
  ASSERT(hi[0] == INFINITY && lo[2] == -INFINITY && hi[2] == INFINITY);
  fl_shape_aabb(&pl, p, q, 0, lo, hi); // tilted: unbounded
  for (int k = 0; k < 3; k++) ASSERT(lo[k] == -INFINITY && hi[k] == INFINITY);
  fl_shape_free(&cyl), fl_shape_free(&cap), fl_shape_free(&box), fl_shape_free(&hull);
  fl_shape_free(&pl);
  return 0;
}


extern fl_int fl__bp_sweep_max;


/* the grid (sweep_max 0) and the sweep along x (every box in it) against brute force */
static int broadphase_brute(fl_int sweep_max) {
  fl__bp_sweep_max = sweep_max;
  int n = 2000;
  double *lo = malloc(sizeof(double) * 3 * (size_t)(n + 1)),
         *hi = malloc(sizeof(double) * 3 * (size_t)(n + 1));
  unsigned char *skip = malloc((size_t)n + 1);
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < 3; k++) {
      // every 30th box is large (wide in the grid); a few are points
      double c = 10 * urand(), h = 0.05 + 0.3 * urand();
      if (i % 30 == 0) h = 0.5 + 2 * urand();
      if (i % 97 == 0) h = 0;
      lo[3 * i + k] = c - h;
      hi[3 * i + k] = c + h;
    }
    skip[i] = urand() < 0.2;
  }
  // one plane-like box unbounded in x and y, below z = 0.5
  lo[3 * n] = lo[3 * n + 1] = lo[3 * n + 2] = -INFINITY;
  hi[3 * n] = hi[3 * n + 1] = INFINITY;
  hi[3 * n + 2] = 0.5;
  skip[n] = 1;
  for (int with_skip = 0; with_skip < 2; with_skip++) {
    fl_int *pairs = NULL, np = 0;
    ASSERT_OK(fl_broadphase(n + 1, lo, hi, with_skip ? skip : NULL, &pairs, &np));
    // brute force in the same (i, j) order
    fl_int k = 0;
    for (int i = 0; i <= n; i++)
      for (int j = i + 1; j <= n; j++) {
        int ov = 1;
        for (int c = 0; c < 3; c++) ov &= !(lo[3 * i + c] > hi[3 * j + c] || lo[3 * j + c] > hi[3 * i + c]);
        if (with_skip && skip[i] && skip[j]) ov = 0;
        if (!ov) continue;
        if (k >= np) FL_FAIL_("brute force has more pairs than %d", (int)np);
        if (pairs[2 * k] != i || pairs[2 * k + 1] != j)
          FL_FAIL_("pair %d: (%d, %d) vs brute (%d, %d)", (int)k, (int)pairs[2 * k],
                   (int)pairs[2 * k + 1], i, j);
        k++;
      }
    ASSERT_EQ(k, np);
    ASSERT(np > 1000); // the test means something
    fl_free(pairs);
  }
  // all boxes at one place (a pile): every pair
  for (int i = 0; i < 300; i++)
    for (int k = 0; k < 3; k++) lo[3 * i + k] = 1, hi[3 * i + k] = 1.5 + 0.001 * (i % 7);
  {
    fl_int *pp = NULL, nn = 0;
    ASSERT_OK(fl_broadphase(300, lo, hi, NULL, &pp, &nn));
    ASSERT_EQ(nn, 300 * 299 / 2);
    for (fl_int k = 1; k < nn; k++)
      ASSERT(pp[2 * k - 2] < pp[2 * k] || (pp[2 * k - 2] == pp[2 * k] && pp[2 * k - 1] < pp[2 * k + 1]));
    fl_free(pp);
  }
  fl_int *pairs = NULL, np = 7;
  lo[0] = NAN;
  ASSERT_EQ(fl_broadphase(n, lo, hi, NULL, &pairs, &np), FL_ERR_INVAL);
  ASSERT_EQ(np, 0);
  ASSERT_OK(fl_broadphase(0, NULL, NULL, NULL, &pairs, &np));
  ASSERT_EQ(np, 0);
  free(lo), free(hi), free(skip);
  fl__bp_sweep_max = 128;
  return 0;
}


FL_TEST(broadphase_equals_brute_force) {
  ASSERT_EQ(broadphase_brute(0), 0);
  ASSERT_EQ(broadphase_brute(1 << 30), 0);
  return 0;
}


/*---- random poses: every point pair lies on the two surfaces ----*/

/* max over faces of n.x - d for a world point x: 0 on the surface of a polyhedron */
static double poly_sd(const fl_shape *s, const double pos[3], const double q[4], const double x[3]) {
  double R[9], d[3], xl[3];
  fl_quat_to_mat(q, R);
  for (int k = 0; k < 3; k++) d[k] = x[k] - pos[k];
  fl_m3_multv(R, d, xl);
  double m = -INFINITY;
  for (int f = 0; f < s->nface; f++)
    m = fmax(m, fl_v3_dot(s->face_normal + 3 * f, xl) - s->face_offset[f]);
  return m;
}


/* the distance to a cylinder's surface as its polygon (poly_sd) or as the round cylinder, which
 * the exact pairs (plane, sphere, a cylinder lying on a box's face) use; others: poly_sd */
static double surf_sd(const fl_shape *s, const double pos[3], const double q[4], const double x[3]) {
  double sp = poly_sd(s, pos, q, x);
  if (s->type != FL_SHAPE_CYLINDER) return sp;
  double R[9], d[3], xl[3];
  fl_quat_to_mat(q, R);
  for (int k = 0; k < 3; k++) d[k] = x[k] - pos[k];
  fl_m3_multv(R, d, xl);
  double rho = sqrt(xl[0] * xl[0] + xl[1] * xl[1]);
  double sr = fmax(rho - s->size[0], fabs(xl[2]) - s->size[1]);
  return fabs(sr) < fabs(sp) ? sr : sp;
}


FL_TEST(random_polyhedra_points_on_surfaces) {
  fl_shape s[4];
  ASSERT_OK(fl_shape_make_box(0.5, 0.3, 0.2, &s[0]));
  ASSERT_OK(fl_shape_make_box(0.2, 0.4, 0.3, &s[1]));
  ASSERT_OK(fl_shape_make_cylinder(0.3, 0.25, 12, &s[2]));
  double pts[40 * 3];
  for (int i = 0; i < 40; i++) {
    double x[3];
    do {
      for (int k = 0; k < 3; k++) x[k] = 2 * urand() - 1;
    } while (fl_v3_dot(x, x) > 1);
    fl_v3_normalize(x);
    for (int k = 0; k < 3; k++) pts[3 * i + k] = 0.35 * x[k];
  }
  ASSERT_OK(fl_shape_make_convex(pts, 40, &s[3]));
  int total = 0, deep = 0;
  for (int trial = 0; trial < 2000; trial++) {
    const fl_shape *a = &s[trial % 4], *b = &s[(trial / 4) % 4];
    double qa[4], qb[4], ax[3], pa[3] = {0, 0, 0}, pb[3];
    for (int k = 0; k < 3; k++) ax[k] = 2 * urand() - 1;
    fl_quat_from_axis_angle(ax, 2 * M_PI * urand(), qa);
    for (int k = 0; k < 3; k++) ax[k] = 2 * urand() - 1;
    fl_quat_from_axis_angle(ax, 2 * M_PI * urand(), qb);
    for (int k = 0; k < 3; k++) pb[k] = 0.7 * (2 * urand() - 1);
    fl_manifold_point m[FL_MANIFOLD_MAX];
    int n = fl_collide(a, pa, qa, b, pb, qb, 0.02, m);
    ASSERT(n >= 0 && n <= FL_MANIFOLD_MAX);
    // b's centre inside a: they overlap, so there must be a point with phi < 0
    if (poly_sd(a, pa, qa, pb) < -0.01) {
      ASSERT(n > 0);
      double mphi = INFINITY;
      for (int i = 0; i < n; i++) mphi = fmin(mphi, m[i].phi);
      ASSERT(mphi < 0);
      deep++;
    }
    ASSERT(unique_features(m, n));
    for (int i = 0; i < n; i++) {
      double xa[3], xb[3];
      for (int k = 0; k < 3; k++) {
        xa[k] = m[i].p[k] - 0.5 * m[i].phi * m[i].n[k];
        xb[k] = m[i].p[k] + 0.5 * m[i].phi * m[i].n[k];
      }
      ASSERT_LE(m[i].phi, 0.02);
      ASSERT_NEAR(fl_v3_norm(m[i].n), 1, 1e-12);
      // both ends on their surfaces
      double sa = surf_sd(a, pa, qa, xa), sb = surf_sd(b, pb, qb, xb);
      if (!(fabs(sa) <= 1e-9) || !(fabs(sb) <= 1e-9))
        FL_FAIL_("trial %d point %d: off the surfaces (%g, %g) types %d %d n %d feat %llx phi %g", trial, i, sa, sb, a->type, b->type, n, (unsigned long long)m[i].feature, m[i].phi);
      if (!(fabs(sa) <= 1e-9 || fabs(sb) <= 1e-9))
        FL_FAIL_("trial %d point %d: on neither surface (%g, %g)", trial, i, sa, sb);
      total++;
    }
  }
  ASSERT(total > 1000);
  ASSERT(deep > 50);
  for (int i = 0; i < 4; i++) fl_shape_free(&s[i]);
  return 0;
}


/* signed distance of a world point to a sphere, capsule or (on its surface exact) polyhedron */
static double shape_sd(const fl_shape *s, const double pos[3], const double q[4],
                       const double x[3]) {
  double R[9], d[3], xl[3];
  fl_quat_to_mat(q, R);
  for (int k = 0; k < 3; k++) d[k] = x[k] - pos[k];
  fl_m3_multv(R, d, xl);
  if (s->type == FL_SHAPE_SPHERE) return fl_v3_norm(xl) - s->size[0];
  if (s->type == FL_SHAPE_CAPSULE) {
    double z = fmin(fmax(xl[2], -s->size[1]), s->size[1]);
    return sqrt(xl[0] * xl[0] + xl[1] * xl[1] + (xl[2] - z) * (xl[2] - z)) - s->size[0];
  }
  return poly_sd(s, pos, q, x);
}


FL_TEST(random_round_shapes_points_on_surfaces) {
  fl_shape s[5];
  ASSERT_OK(fl_shape_make_sphere(0.3, &s[0]));
  ASSERT_OK(fl_shape_make_capsule(0.15, 0.3, &s[1]));
  ASSERT_OK(fl_shape_make_box(0.4, 0.3, 0.2, &s[2]));
  double w[8][3] = {{-0.3, -0.2, -0.2}, {0.3, -0.2, -0.2}, {-0.3, 0.2, -0.2}, {0.3, 0.2, -0.2},
                    {-0.2, -0.1, 0.2},  {0.2, -0.1, 0.2},  {-0.2, 0.1, 0.2},  {0.2, 0.1, 0.2}};
  ASSERT_OK(fl_shape_make_convex(&w[0][0], 8, &s[3]));
  ASSERT_OK(fl_shape_make_sphere(0.1, &s[4]));
  int total = 0;
  for (int trial = 0; trial < 3000; trial++) {
    const fl_shape *a = &s[trial % 5], *b = &s[(trial / 5) % 5];
    if (a->nvert && b->nvert) continue; // polyhedron pairs: the test above
    double qa[4], qb[4], ax[3], pa[3] = {0, 0, 0}, pb[3];
    for (int k = 0; k < 3; k++) ax[k] = 2 * urand() - 1;
    fl_quat_from_axis_angle(ax, 2 * M_PI * urand(), qa);
    for (int k = 0; k < 3; k++) ax[k] = 2 * urand() - 1;
    fl_quat_from_axis_angle(ax, 2 * M_PI * urand(), qb);
    for (int k = 0; k < 3; k++) pb[k] = 0.7 * (2 * urand() - 1);
    fl_manifold_point m[FL_MANIFOLD_MAX];
    int n = fl_collide(a, pa, qa, b, pb, qb, 0.02, m);
    ASSERT(n >= 0 && n <= 2);
    // b's centre inside a: overlap
    if (shape_sd(a, pa, qa, pb) < -0.01 && !(n > 0 && fmin(m[0].phi, m[n - 1].phi) < 0))
      FL_FAIL_("trial %d: overlapping %d-%d, %d points, phi %g", trial, a->type, b->type, n,
               n ? m[0].phi : 0.0);
    for (int i = 0; i < n; i++) {
      double xa[3], xb[3];
      for (int k = 0; k < 3; k++) {
        xa[k] = m[i].p[k] - 0.5 * m[i].phi * m[i].n[k];
        xb[k] = m[i].p[k] + 0.5 * m[i].phi * m[i].n[k];
      }
      ASSERT_LE(m[i].phi, 0.02);
      double sa = shape_sd(a, pa, qa, xa), sb = shape_sd(b, pb, qb, xb);
      // both ends on their surfaces, except that against a polyhedron's face a capsule's end
      // is x - r n for a point x of the clipped segment: the gap of the ball at x, which lies
      // inside the capsule when the segment is tilted
      int cp = a->nvert || b->nvert;
      int oka = a->type == FL_SHAPE_CAPSULE && cp ? sa <= 1e-9 && sa >= -a->size[0] : fabs(sa) <= 1e-9;
      int okb = b->type == FL_SHAPE_CAPSULE && cp ? sb <= 1e-9 && sb >= -b->size[0] : fabs(sb) <= 1e-9;
      if (!oka || !okb)
        FL_FAIL_("trial %d point %d: off the surfaces (%g, %g) types %d %d phi %g", trial, i, sa,
                 sb, a->type, b->type, m[i].phi);
      total++;
    }
  }
  ASSERT(total > 500);
  for (int i = 0; i < 5; i++) fl_shape_free(&s[i]);
  return 0;
}


/*---- allocation failures: every error path returns FL_ERR_NOMEM and leaves nothing behind ----*/

FL_TEST(allocation_failures) {
  double pts[60 * 3];
  for (int i = 0; i < 60; i++)
    for (int k = 0; k < 3; k++) pts[3 * i + k] = 2 * urand() - 1;
  int ok_hull = 0, ok_cyl = 0, ok_bp = 0;
  for (long fail = 0; fail < 200 && !(ok_hull && ok_cyl && ok_bp); fail++) {
    fl_shape s;
    if (!ok_hull) {
      fl_alloc_fail_after(fail);
      int rc = fl_shape_make_convex(pts, 60, &s);
      fl_alloc_fail_after(-1);
      if (rc == FL_OK) ok_hull = 1;
      else ASSERT_EQ(rc, FL_ERR_NOMEM);
      if (rc != FL_OK) ASSERT(s.vert == NULL && s.nvert == 0);
      fl_shape_free(&s);
    }
    if (!ok_cyl) {
      fl_alloc_fail_after(fail);
      int rc = fl_shape_make_cylinder(0.2, 0.3, 0, &s);
      fl_shape c2;
      int rc2 = rc == FL_OK ? fl_shape_copy(&s, &c2) : rc;
      fl_alloc_fail_after(-1);
      if (rc2 == FL_OK) {
        ok_cyl = 1;
        ASSERT_EQ(c2.nedge, s.nedge);
        fl_shape_free(&c2);
      } else {
        ASSERT_EQ(rc2, FL_ERR_NOMEM);
      }
      fl_shape_free(&s);
    }
    if (!ok_bp) {
      fl_int *pairs = NULL, np = -1;
      double lo[3 * 50], hi[3 * 50];
      for (int i = 0; i < 150; i++) lo[i] = urand(), hi[i] = lo[i] + 0.3;
      lo[0] = -INFINITY; // one unbounded box
      fl_alloc_fail_after(fail);
      int rc = fl_broadphase(50, lo, hi, NULL, &pairs, &np);
      fl_alloc_fail_after(-1);
      if (rc == FL_OK) {
        ok_bp = 1;
        ASSERT(np > 0);
      } else {
        ASSERT_EQ(rc, FL_ERR_NOMEM);
        ASSERT(pairs == NULL && np == 0);
      }
      fl_free(pairs);
    }
  }
  ASSERT(ok_hull && ok_cyl && ok_bp);
  return 0;
}


/* issue 50: a cylinder on its side keeps one contact line at its lowest generator whatever
 * its roll angle, with no fixed rim point inside the margin (such a point approaches along a
 * circle and its linear constraint kicked a rolling cylinder up); a cap lying flat keeps its
 * rim. */
FL_TEST(cylinder_rolled_keeps_its_lowest_line) {
  fl_shape plane, cyl;
  ASSERT_OK(fl_shape_make_plane(&plane));
  ASSERT_OK(fl_shape_make_cylinder(0.2, 0.4, 0, &cyl));
  fl_manifold_point m[FL_MANIFOLD_MAX];
  double o[3] = {0, 0, 0}, up[3] = {0, 0, 1}, margin = 1e-3;
  for (int k = 0; k <= 16; k++) {
    // axis along y (body z turned about x), then rolled by a about the axis: the rim point
    // at 45 degrees sits r (1 - cos) above the bottom, within the margin near a = 45 k degrees
    double a = k * M_PI / 32 + 0.05, qa[4], qr[4], q[4];
    qaxis(1, 0, 0, -M_PI / 2, qa);
    qaxis(0, 0, 1, a, qr);
    // q = qa * qr (the roll about the body axis first)
    q[0] = qa[0] * qr[0] - qa[1] * qr[1] - qa[2] * qr[2] - qa[3] * qr[3];
    q[1] = qa[0] * qr[1] + qa[1] * qr[0] + qa[2] * qr[3] - qa[3] * qr[2];
    q[2] = qa[0] * qr[2] - qa[1] * qr[3] + qa[2] * qr[0] + qa[3] * qr[1];
    q[3] = qa[0] * qr[3] + qa[1] * qr[2] - qa[2] * qr[1] + qa[3] * qr[0];
    double pc[3] = {0.1, 0.2, 0.2 - 1e-4};
    int n = fl_collide(&plane, o, q_id, &cyl, pc, q, margin, m);
    ASSERT_EQ(n, 2);
    ASSERT(all_normal_phi(m, n, up, -1e-4, 1e-13));
    ASSERT_NEAR(fabs(m[0].p[1] - m[1].p[1]), 0.8, 1e-12);
    ASSERT_NEAR(m[0].p[0], 0.1, 1e-12);
  }
  // upright and tilted by 1 urad or by 0.05 rad (a solver's small tilt): the bottom rim's 8
  // points within the margin (and its deepest one)
  double qt[4], pu[3] = {0, 0, 0.4 - 1e-4};
  qaxis(0, 1, 0, 1e-6, qt);
  int n = fl_collide(&plane, o, q_id, &cyl, pu, qt, margin, m);
  ASSERT(n >= 8);
  for (int i = 0; i < n; i++) ASSERT_NEAR(m[i].phi, -1e-4, 1e-6);
  // tilted by 0.2 rad: the rim spans 79 mm in height, so only its deepest point
  qaxis(0, 1, 0, 0.2, qt);
  double pv[3] = {0, 0, 0.4 * cos(0.2) + 0.2 * sin(0.2) - 1e-4};
  ASSERT_EQ(fl_collide(&plane, o, q_id, &cyl, pv, qt, margin, m), 1);
  ASSERT_NEAR(m[0].phi, -1e-4, 1e-13);
  fl_shape_free(&plane);
  fl_shape_free(&cyl);
  return 0;
}


FL_TEST(cylinder_polygon_against_box_and_capsule) {
  // a 24-sided cylinder lying on a box: body z turned to world x about y; its polygon has a
  // vertex at angle 0 (body +x), which the turn sends to world -z: a vertex line at radius r
  fl_shape cyl, box, cap;
  ASSERT_OK(fl_shape_make_cylinder(0.3, 0.5, 24, &cyl));
  ASSERT_OK(fl_shape_make_box(2, 2, 0.5, &box));
  ASSERT_OK(fl_shape_make_capsule(0.1, 0.2, &cap));
  double o[3] = {0, 0, 0}, q[4], up[3] = {0, 0, 1};
  qaxis(0, 1, 0, M_PI / 2, q);
  double pc[3] = {0.2, -0.1, 0.5 + 0.3 - 0.004};
  fl_manifold_point m[FL_MANIFOLD_MAX];
  int n = fl_collide(&box, o, q_id, &cyl, pc, q, 0.001, m);
  ASSERT_EQ(n, 2);
  ASSERT(all_normal_phi(m, n, up, -0.004, 1e-13));
  ASSERT_NEAR(fabs(m[0].p[0] - m[1].p[0]), 1.0, 1e-13); // the two cap ends of the line
  ASSERT_NEAR(m[0].p[1], -0.1, 1e-13);
  // turned by half a side (7.5 degrees about its axis) the polygon would rest on a side face
  // (4 points at z_c - r cos(7.5 deg) - 0.5); lying on the box's face the cylinder is round
  // (issue 50, box_cylinder_face): its lowest line again, at z_c - r - 0.5, at any roll
  double q2[4], qs[4];
  for (int k = 1; k <= 4; k++) {
    qaxis(0, 0, 1, k * M_PI / 48, qs);
    fl_quat_mul(q, qs, q2);
    double pf[3] = {0.2, -0.1, 0.5 + 0.3 - 0.002};
    n = fl_collide(&box, o, q_id, &cyl, pf, q2, 0.0, m);
    ASSERT_EQ(n, 2);
    ASSERT(all_normal_phi(m, n, up, -0.002, 1e-13));
    ASSERT_NEAR(fabs(m[0].p[0] - m[1].p[0]), 1.0, 1e-12);
    // the same pair the other way round: normal turned, the same depth and points
    fl_manifold_point mr[FL_MANIFOLD_MAX];
    double down1[3] = {0, 0, -1};
    ASSERT_EQ(fl_collide(&cyl, pf, q2, &box, o, q_id, 0.0, mr), 2);
    ASSERT(all_normal_phi(mr, 2, down1, -0.002, 1e-13));
    ASSERT_NEAR(mr[0].p[2] + mr[1].p[2], m[0].p[2] + m[1].p[2], 1e-13);
  }
  // over the box's edge (one end of the line off the face) the polyhedron pair decides
  double pe[3] = {1.8, -0.1, 0.5 + 0.3 - 0.002};
  n = fl_collide(&box, o, q_id, &cyl, pe, q, 0.0, m);
  ASSERT(n >= 1);
  // a capsule lying across the top cap of an upright cylinder: both ends on the cap polygon
  double pu[3] = {0, 0, 0}, qx[4];
  qaxis(0, 1, 0, M_PI / 2, qx);
  double pk[3] = {0.05, 0.02, 0.5 + 0.1 - 0.003};
  n = fl_collide(&cap, pk, qx, &cyl, pu, q_id, 0.0, m);
  ASSERT_EQ(n, 2);
  double down[3] = {0, 0, -1};
  ASSERT(all_normal_phi(m, n, down, -0.003, 1e-13));
  ASSERT_NEAR(fabs(m[0].p[0] - m[1].p[0]), 0.4, 1e-13);
  fl_shape_free(&cyl), fl_shape_free(&box), fl_shape_free(&cap);
  return 0;
}


/* issue 50: two cylinders side by side touch as round cylinders (their capsules' contact), at
 * any roll about their axes: along a line when parallel, at one point when crossed; a cap against
 * a side stays with the polyhedra */
FL_TEST(cylinders_side_by_side_are_round) {
  fl_shape c1, c2;
  ASSERT_OK(fl_shape_make_cylinder(0.2, 0.5, 0, &c1));
  ASSERT_OK(fl_shape_make_cylinder(0.1, 0.3, 0, &c2));
  fl_manifold_point m[FL_MANIFOLD_MAX];
  double o[3] = {0, 0, 0}, qy[4], up[3] = {0, 0, 1};
  qaxis(1, 0, 0, -M_PI / 2, qy); // body z onto world y: both lie along y
  for (int k = 0; k < 6; k++) {
    double qr[4], q2[4];
    qaxis(0, 0, 1, 0.13 * k, qr); // rolled about its own axis
    fl_quat_mul(qy, qr, q2);
    double p2[3] = {0, 0.1, 0.3 - 1e-4}; // parallel, on top: depth 1e-4
    int n = fl_collide(&c1, o, qy, &c2, p2, q2, 1e-3, m);
    ASSERT_EQ(n, 2);
    ASSERT(all_normal_phi(m, n, up, -1e-4, 1e-12));
    ASSERT_NEAR(fabs(m[0].p[1] - m[1].p[1]), 0.6, 1e-12); // the whole of the shorter one
    // crossed: c2 along x over c1 along y, one point
    double qx[4], q3[4];
    qaxis(0, 1, 0, M_PI / 2, qx);
    fl_quat_mul(qx, qr, q3);
    n = fl_collide(&c1, o, qy, &c2, p2, q3, 1e-3, m);
    ASSERT_EQ(n, 1);
    ASSERT(all_normal_phi(m, n, up, -1e-4, 1e-12));
  }
  // c2 standing on its cap on c1's side: not a side-side pair, the polyhedra answer
  double pu[3] = {0, 0, 0.2 + 0.3 - 1e-4};
  ASSERT(fl_collide(&c1, o, qy, &c2, pu, q_id, 1e-3, m) >= 1);
  // apart by more than the margin: nothing
  double pf[3] = {0, 0, 0.3 + 0.01};
  ASSERT_EQ(fl_collide(&c1, o, qy, &c2, pf, qy, 1e-3, m), 0);
  fl_shape_free(&c1), fl_shape_free(&c2);
  return 0;
}

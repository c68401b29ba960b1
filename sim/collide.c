// SPDX-License-Identifier: Apache-2.0
/* collide.c: narrow phase contact manifolds for every pair of shapes but plane-plane.
 *
 * Pairs are ranked plane < sphere < capsule < polyhedron (box, cylinder, convex); a pair is
 * solved in rank order and flipped afterwards (normal negated, feature halves swapped), so each
 * algorithm is written once:
 *   plane-sphere, plane-capsule      closed forms
 *   plane-polyhedron                 every vertex within the margin (cylinder: its lowest
 *                                    rim points; a flat cap's rim)
 *   box-cylinder                     a cylinder lying on a box's face as on that face's plane;
 *                                    edges, corners and caps as polyhedra
 *   cylinder-cylinder                side against side as the capsules around them; caps as
 *                                    polyhedra
 *   sphere-sphere, -capsule, -box    closed forms; sphere-cylinder on the exact round cylinder
 *   sphere-convex                    closest point on the faces and edges
 *   capsule-capsule                  closest points of the segments, two points when parallel
 *   capsule-polyhedron               separating axes (faces, edge x segment), the segment
 *                                    clipped to the face for face contacts
 *   polyhedron-polyhedron            separating axes (faces of both, edge pairs that build a
 *                                    face of the Minkowski difference, Gregorius' Gauss-map
 *                                    test), Sutherland-Hodgman clipping of the incident face
 *                                    against the reference face for face contacts, the closest
 *                                    points of the two edges for edge contacts
 * Candidates go into a stack buffer and are reduced to FL_MANIFOLD_MAX points keeping the
 * deepest one and then, greedily, the one farthest from those kept (widest spread).
 * This file: plane, sphere and capsule pairs and the dispatch; collide_poly.c: polyhedron
 * pairs; collide_kit.c: the candidate buffer, segments and closest points on a polyhedron.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "collide_impl.h"

/*---- plane against anything ----*/

static void plane_sphere(const pose *A, const fl_shape *b, const pose *Bp, double margin,
                         cbuf *B) {
  double n[3] = {A->R[2], A->R[5], A->R[8]}, d[3], pa[3];
  sub3(Bp->p, A->p, d);
  double h = dot3(n, d), phi = h - b->size[0];
  if (phi > margin) return;
  axpy3(-h, n, Bp->p, pa);
  fl__cl_add_a(B, pa, n, phi, FL_FEAT(FL_FEAT_FACE, 0), FL_FEAT(FL_FEAT_CENTER, 0));
}


static void plane_capsule(const pose *A, const fl_shape *b, const pose *Bp, double margin,
                          cbuf *B) {
  double n[3] = {A->R[2], A->R[5], A->R[8]}, p[3], d[3];
  fl__cl_cap_segment(b, Bp, p, d);
  for (int k = 0; k < 2; k++) {
    double e[3], r[3], pa[3];
    axpy3((double)k, d, p, e);
    sub3(e, A->p, r);
    double h = dot3(n, r), phi = h - b->size[0];
    if (phi > margin) continue;
    axpy3(-h, n, e, pa);
    fl__cl_add_a(B, pa, n, phi, FL_FEAT(FL_FEAT_FACE, 0), FL_FEAT(FL_FEAT_VERTEX, k));
  }
}


/* every vertex within the margin, the deepest first so it survives a full buffer */
static void plane_poly(const pose *A, const fl_shape *b, const pose *Bp, double margin,
                       cbuf *B) {
  double n[3] = {A->R[2], A->R[5], A->R[8]}, nb[3], r[3];
  // heights h_v = n . (R_b v + p_b - p_a) = (R_b^T n) . v + off
  mulvt(Bp->R, n, nb);
  sub3(Bp->p, A->p, r);
  double off = dot3(n, r);
  fl_int deep = 0;
  for (fl_int v = 1; v < b->nvert; v++)
    if (dot3(nb, b->vert + 3 * v) < dot3(nb, b->vert + 3 * deep)) deep = v;
  for (int pass = 0; pass < 2; pass++)
    for (fl_int v = 0; v < b->nvert; v++) {
      if ((pass == 0) != (v == deep)) continue;
      double h = dot3(nb, b->vert + 3 * v) + off, x[3], pa[3];
      if (h > margin) continue;
      to_world(Bp, b->vert + 3 * v, x);
      axpy3(-h, n, x, pa);
      fl__cl_add_a(B, pa, n, h, FL_FEAT(FL_FEAT_FACE, 0), FL_FEAT(FL_FEAT_VERTEX, v));
    }
}


/* exact cylinder on a plane: its true lowest points. The deepest point of each cap's rim (a
 * cylinder on its side: the two ends of the lowest generator, a line contact that follows the
 * roll), plus 8 fixed points per rim only while that cap faces the plane flat (a cylinder
 * standing on its cap rests on 8 points). Fixed rim points are left out otherwise:
 * on a curved rim a fixed point just ahead of the bottom, inside the margin, approaches the
 * plane along a circle, and its linearised constraint kicked a rolling cylinder up once per
 * 45 degrees of roll (issue 50). */
static void plane_cylinder(const pose *A, const fl_shape *b, const pose *Bp, double margin,
                           uint32_t fa, cbuf *B) {
  double n[3] = {A->R[2], A->R[5], A->R[8]}, ax[3] = {Bp->R[2], Bp->R[5], Bp->R[8]};
  double r = b->size[0], h = b->size[1], u[3];
  axpy3(-dot3(n, ax), ax, n, u); // n minus its axial part: the direction across the caps
  double ul = norm3(u);
  // a cap lies flat when tilted by under 0.1 rad (a solver's small tilt keeps the stack's
  // support; a fixed point's kick scales with r sin(tilt)) or when its rim's heights span no
  // more than the margin (a small cylinder falling flat meets the plane speculatively)
  int flat = ul <= 0.1 || 2 * r * ul <= fmax(margin, 1e-3 * r);
  for (int cap = 0; cap < 2; cap++) {
    double sgn = cap ? 1 : -1, cc[3], deep[3] = {0, 0, 0}, q[3];
    int has_deep = ul > 1e-9;
    axpy3(sgn * h, ax, Bp->p, cc);
    if (has_deep) {
      axpy3(-r / ul, u, cc, deep);
      sub3(deep, A->p, q);
      double phi = dot3(n, q), pa[3];
      if (phi <= margin) {
        axpy3(-phi, n, deep, pa);
        fl__cl_add_a(B, pa, n, phi, fa, FL_FEAT(FL_FEAT_EDGE, cap));
      }
    }
    // the rim of a cap that faces the plane flat (a cap facing away lies above the other one)
    if (!flat || sgn * dot3(n, ax) > 0) continue;
    for (int k = 0; k < 8; k++) {
      double xl[3] = {r * cos(M_PI / 4 * k), r * sin(M_PI / 4 * k), sgn * h}, x[3], pa[3], dd[3];
      to_world(Bp, xl, x);
      if (has_deep) {
        sub3(x, deep, dd);
        if (norm3(dd) <= 1e-6 * r) continue; // the same point as the deepest one
      }
      sub3(x, A->p, q);
      double phi = dot3(n, q);
      if (phi > margin) continue;
      axpy3(-phi, n, x, pa);
      fl__cl_add_a(B, pa, n, phi, fa, FL_FEAT(FL_FEAT_VERTEX, 8 * cap + k));
    }
  }
}


/* A cylinder lying on a box's face (issue 50): the exact lowest generator, as on a plane, where
 * the tessellated cylinder's separating axes would put the contact on a facet's corners (a
 * rolling cylinder would bump once per facet). Taken only when the face is the box's axis of
 * least penetration, the cylinder's axis lies within 0.1 rad of the face's plane and both ends of
 * the generator project inside the face: edges, corners and a cylinder on its cap stay with the
 * polyhedron pair. a: the box, b: the cylinder; 1 when it wrote the pair's contacts (into B, in
 * the order (box, cylinder), or flipped to (cylinder, box) with `swapped`). */
static int box_cylinder_face(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                             double margin, int swapped, cbuf *B) {
  double ax[3] = {Bp->R[2], Bp->R[5], Bp->R[8]}, d[3];
  double r = b->size[0], h = b->size[1];
  sub3(Bp->p, A->p, d);
  int best = -1;
  double sep = -INFINITY, nb[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) {
    double col[3] = {A->R[i], A->R[3 + i], A->R[6 + i]}, c = dot3(col, d), na = dot3(col, ax);
    double reach = r * sqrt(fmax(0, 1 - na * na)) + h * fabs(na);
    double si = fabs(c) - a->size[i] - reach; // along the face whose side the centre is on
    if (si > sep) sep = si, best = i, nb[0] = col[0], nb[1] = col[1], nb[2] = col[2];
  }
  if (best < 0 || sep > margin) return 0;
  double col[3] = {nb[0], nb[1], nb[2]}, sgn = dot3(col, d) >= 0 ? 1 : -1, n[3];
  for (int k = 0; k < 3; k++) n[k] = sgn * col[k];
  double na = dot3(n, ax);
  if (fabs(na) > sin(0.1)) return 0; // not on its side: the cap's rim meets the face
  // the ends of the lowest generator, in the face's two other coordinates
  double u[3];
  axpy3(-na, ax, n, u);
  double ul = norm3(u);
  for (int cap = 0; cap < 2; cap++) {
    double x[3], q[3];
    axpy3(cap ? h : -h, ax, Bp->p, x);
    axpy3(-r / ul, u, x, x);
    sub3(x, A->p, q);
    for (int i = 0; i < 3; i++) {
      if (i == best) continue;
      double ci = A->R[i] * q[0] + A->R[3 + i] * q[1] + A->R[6 + i] * q[2];
      if (fabs(ci) > a->size[i]) return 0; // over an edge: the polyhedron pair decides
    }
  }
  pose F = *A; // the face as a plane: its normal as the third column, a point on it
  F.R[2] = n[0], F.R[5] = n[1], F.R[8] = n[2];
  axpy3(a->size[best], n, A->p, F.p);
  uint32_t face = FL_FEAT(FL_FEAT_FACE, 2 * best + (sgn > 0));
  if (!swapped) {
    plane_cylinder(&F, b, Bp, margin, face, B);
    return 1;
  }
  static _Thread_local cbuf T;
  T.n = 0;
  plane_cylinder(&F, b, Bp, margin, face, &T);
  for (int i = 0; i < T.n && B->n < CAND_MAX; i++) { // the midpoint stays; normal and halves turn
    cand *c = B->c + B->n++;
    *c = T.c[i];
    for (int k = 0; k < 3; k++) c->n[k] = -T.c[i].n[k];
    c->fa = T.c[i].fb, c->fb = T.c[i].fa;
  }
  return 1;
}


/*---- sphere against anything ----*/

static const double ez[3] = {0, 0, 1};


static void sphere_sphere(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                          double margin, cbuf *B) {
  double d[3], n[3], pa[3];
  sub3(Bp->p, A->p, d);
  double dist = norm3(d), phi = dist - a->size[0] - b->size[0];
  if (phi > margin) return;
  fl__cl_dir_or(d, ez, n);
  axpy3(a->size[0], n, A->p, pa);
  fl__cl_add_a(B, pa, n, phi, FL_FEAT(FL_FEAT_CENTER, 0), FL_FEAT(FL_FEAT_CENTER, 0));
}


static void sphere_capsule(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                           double margin, cbuf *B) {
  double p[3], d[3], q[3], r[3], n[3], pa[3];
  fl__cl_cap_segment(b, Bp, p, d);
  sub3(A->p, p, r);
  double t = fmin(fmax(dot3(r, d) / dot3(d, d), 0), 1);
  axpy3(t, d, p, q);
  sub3(q, A->p, r);
  double phi = norm3(r) - a->size[0] - b->size[0];
  if (phi > margin) return;
  double fb[3];
  perp(d, fb); // centre on the axis: any direction across it
  fl__cl_dir_or(r, fb, n);
  axpy3(a->size[0], n, A->p, pa);
  fl__cl_add_a(B, pa, n, phi, FL_FEAT(FL_FEAT_CENTER, 0), fl__cl_cap_feat(t));
}


/* index of the box edge joining vertices u and v (box vertex bits: x, y, z) */
static fl_int box_edge(const fl_shape *b, fl_int u, fl_int v) {
  fl_int lo = u < v ? u : v, hi = u < v ? v : u;
  for (fl_int e = 0; e < b->nedge; e++)
    if (b->edge[2 * e] == lo && b->edge[2 * e + 1] == hi) return e;
  return 0;
}


static void sphere_box(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                       double margin, cbuf *B) {
  double c[3], q[3], nb[3], n[3], pb[3], qb[3];
  const double *h = b->size;
  to_body(Bp, A->p, c);
  int nclamp = 0, side[3];
  for (int i = 0; i < 3; i++) {
    side[i] = c[i] > h[i] ? 1 : c[i] < -h[i] ? -1 : 0;
    q[i] = side[i] ? side[i] * h[i] : c[i];
    nclamp += side[i] != 0;
  }
  double phi;
  uint32_t fb;
  if (nclamp > 0) {
    // outside: the clamped point is the closest; its feature follows the clamped axes
    double d[3];
    sub3(c, q, d);
    double dist = norm3(d);
    phi = dist - a->size[0];
    if (phi > margin) return;
    for (int i = 0; i < 3; i++) nb[i] = d[i] / dist;
    if (nclamp == 1) {
      int i = side[0] ? 0 : side[1] ? 1 : 2;
      fb = FL_FEAT(FL_FEAT_FACE, 2 * i + (side[i] > 0));
    } else if (nclamp == 3) {
      fb = FL_FEAT(FL_FEAT_VERTEX, (side[0] > 0) | (side[1] > 0) << 1 | (side[2] > 0) << 2);
    } else {
      // the edge runs along the free axis between its two corners
      int fr = !side[0] ? 0 : !side[1] ? 1 : 2;
      fl_int u = 0;
      for (int i = 0; i < 3; i++)
        if (i != fr && side[i] > 0) u |= 1 << i;
      fb = FL_FEAT(FL_FEAT_EDGE, box_edge(b, u, u | 1 << fr));
    }
    copy3(q, qb);
  } else {
    // inside: push out through the nearest face
    int i = 0;
    double best = INFINITY;
    for (int k = 0; k < 3; k++)
      if (h[k] - fabs(c[k]) < best) best = h[k] - fabs(c[k]), i = k;
    double s = c[i] >= 0 ? 1 : -1;
    nb[0] = nb[1] = nb[2] = 0;
    nb[i] = s;
    copy3(c, qb);
    qb[i] = s * h[i];
    phi = -best - a->size[0];
    if (phi > margin) return;
    fb = FL_FEAT(FL_FEAT_FACE, 2 * i + (s > 0));
  }
  // b's outward normal points at the sphere, so a -> b is its opposite
  mulv(Bp->R, nb, n);
  n[0] = -n[0], n[1] = -n[1], n[2] = -n[2];
  to_world(Bp, qb, pb);
  fl__cl_add_b(B, pb, n, phi, FL_FEAT(FL_FEAT_CENTER, 0), fb);
}


/* exact round cylinder: closest point on the solid, or the nearest surface from inside */
static void sphere_cylinder(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                            double margin, cbuf *B) {
  double c[3], q[3], nb[3], n[3], pb[3];
  double r = b->size[0], h = b->size[1];
  to_body(Bp, A->p, c);
  double rho = sqrt(c[0] * c[0] + c[1] * c[1]);
  double er[3] = {1, 0, 0};
  if (rho > 1e-300) er[0] = c[0] / rho, er[1] = c[1] / rho;
  double phi;
  uint32_t fb;
  if (rho <= r && fabs(c[2]) <= h) {
    double dside = r - rho, dcap = h - fabs(c[2]);
    if (dcap <= dside) {
      double s = c[2] >= 0 ? 1 : -1;
      nb[0] = nb[1] = 0, nb[2] = s;
      q[0] = c[0], q[1] = c[1], q[2] = s * h;
      phi = -dcap - a->size[0];
      fb = FL_FEAT(FL_FEAT_FACE, s > 0);
    } else {
      copy3(er, nb);
      q[0] = r * er[0], q[1] = r * er[1], q[2] = c[2];
      phi = -dside - a->size[0];
      fb = FL_FEAT(FL_FEAT_EDGE, 2);
    }
  } else {
    double rq = fmin(rho, r), zq = fmin(fmax(c[2], -h), h), d[3];
    q[0] = rq * er[0], q[1] = rq * er[1], q[2] = zq;
    sub3(c, q, d);
    double dist = norm3(d);
    for (int i = 0; i < 3; i++) nb[i] = d[i] / dist;
    phi = dist - a->size[0];
    fb = rho <= r ? FL_FEAT(FL_FEAT_FACE, c[2] > 0)
                  : fabs(c[2]) < h ? FL_FEAT(FL_FEAT_EDGE, 2) : FL_FEAT(FL_FEAT_EDGE, c[2] > 0);
  }
  if (phi > margin) return;
  mulv(Bp->R, nb, n);
  n[0] = -n[0], n[1] = -n[1], n[2] = -n[2];
  to_world(Bp, q, pb);
  fl__cl_add_b(B, pb, n, phi, FL_FEAT(FL_FEAT_CENTER, 0), fb);
}


static void sphere_poly(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                        double margin, cbuf *B) {
  double c[3], q[3], nb[3], n[3], pb[3];
  uint32_t fb = 0;
  to_body(Bp, A->p, c);
  double phi = fl__cl_poly_closest(b, c, q, nb, &fb) - a->size[0];
  if (phi > margin) return;
  mulv(Bp->R, nb, n);
  n[0] = -n[0], n[1] = -n[1], n[2] = -n[2];
  to_world(Bp, q, pb);
  fl__cl_add_b(B, pb, n, phi, FL_FEAT(FL_FEAT_CENTER, 0), fb);
}


/*---- capsule against capsule and polyhedra ----*/

static void capsule_capsule(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                            double margin, cbuf *B) {
  double p1[3], d1[3], p2[3], d2[3], c1[3], c2[3], s, t, ra = a->size[0], rb = b->size[0];
  fl__cl_cap_segment(a, A, p1, d1);
  fl__cl_cap_segment(b, Bp, p2, d2);
  fl__cl_seg_closest(p1, d1, p2, d2, &s, &t, c1, c2);
  double r[3], dist;
  sub3(c2, c1, r);
  dist = norm3(r);
  if (dist - ra - rb > margin) return;
  // a fallback normal for touching axes: across both axes, towards b's centre
  double fbk[3], cx[3], dc[3];
  cross3(d1, d2, cx);
  if (norm3(cx) > 1e-12 * norm3(d1) * norm3(d2)) {
    fl__cl_dir_or(cx, ez, fbk);
  } else {
    double u[3];
    fl__cl_dir_or(d1, ez, u);
    perp(u, fbk);
  }
  sub3(Bp->p, A->p, dc);
  if (dot3(fbk, dc) < 0) fbk[0] = -fbk[0], fbk[1] = -fbk[1], fbk[2] = -fbk[2];

  double sn = norm3(cx) / (norm3(d1) * norm3(d2));
  if (sn < PARALLEL_SIN) {
    // parallel: the two ends of the overlap of b's projection on a's axis
    double a2 = dot3(d1, d1), w0[3], w1[3];
    sub3(p2, p1, w0);
    axpy3(1, d2, w0, w1);
    double t0 = dot3(w0, d1) / a2, t1 = dot3(w1, d1) / a2;
    int e0 = 0, e1 = 1; // which end of b sits at t0, t1
    if (t0 > t1) {
      double x = t0;
      t0 = t1, t1 = x, e0 = 1, e1 = 0;
    }
    double lo = fmax(t0, 0), hi = fmin(t1, 1);
    if (hi - lo > 1e-9) {
      double ends[2] = {lo, hi};
      for (int k = 0; k < 2; k++) {
        double xa[3], w[3], xb[3], dd[3], n[3], pa[3];
        axpy3(ends[k], d1, p1, xa);
        sub3(xa, p2, w);
        double tb = fmin(fmax(dot3(w, d2) / dot3(d2, d2), 0), 1);
        axpy3(tb, d2, p2, xb);
        sub3(xb, xa, dd);
        double phi = norm3(dd) - ra - rb;
        if (phi > margin) continue;
        fl__cl_dir_or(dd, fbk, n);
        axpy3(ra, n, xa, pa);
        // the end comes from a (its endpoint) or from b (one of b's endpoints)
        int from_a = (k == 0) ? (t0 <= 0) : (t1 >= 1);
        uint32_t fa = from_a ? fl__cl_cap_feat(ends[k]) : FL_FEAT(FL_FEAT_EDGE, 2);
        uint32_t fb = from_a ? fl__cl_cap_feat(tb) : FL_FEAT(FL_FEAT_VERTEX, k == 0 ? e0 : e1);
        fl__cl_add_a(B, pa, n, phi, fa, fb);
      }
      if (B->n > 0) return;
    }
  }
  double n[3], pa[3];
  fl__cl_dir_or(r, fbk, n);
  axpy3(ra, n, c1, pa);
  fl__cl_add_a(B, pa, n, dist - ra - rb, fl__cl_cap_feat(s), fl__cl_cap_feat(t));
}


/* exact closest points of a segment s0 + [0,1] u and a convex polyhedron that it does not
 * intersect (body frame of the polyhedron): the closest pair joins an endpoint to the
 * polyhedron or the segment to one of its edges. Returns the distance; cs, cp the points, t the
 * segment parameter and fp the polyhedron's feature code. */
static double seg_poly_distance(const double s0[3], const double u[3], const fl_shape *b,
                                double cs[3], double cp[3], double *t, uint32_t *fp) {
  double best = INFINITY;
  for (int k = 0; k < 2; k++) {
    double e[3], q[3], nb[3];
    uint32_t f = 0;
    axpy3((double)k, u, s0, e);
    double d = fl__cl_poly_closest(b, e, q, nb, &f);
    if (d < best) best = d, copy3(e, cs), copy3(q, cp), *t = k, *fp = f;
  }
  for (fl_int j = 0; j < b->nedge; j++) {
    const double *v0 = b->vert + 3 * b->edge[2 * j], *v1 = b->vert + 3 * b->edge[2 * j + 1];
    double ed[3], c1[3], c2[3], r[3], sp, tp;
    sub3(v1, v0, ed);
    fl__cl_seg_closest(s0, u, v0, ed, &sp, &tp, c1, c2);
    sub3(c2, c1, r);
    double d = norm3(r);
    if (d < best) {
      best = d, copy3(c1, cs), copy3(c2, cp), *t = sp;
      *fp = tp <= 0 ? FL_FEAT(FL_FEAT_VERTEX, b->edge[2 * j])
                    : tp >= 1 ? FL_FEAT(FL_FEAT_VERTEX, b->edge[2 * j + 1])
                              : FL_FEAT(FL_FEAT_EDGE, j);
    }
  }
  return best;
}


/* one point from the exact closest points of a capsule (segment s0 + [0,1] u, radius r, in
 * b's frame) and a polyhedron b that the segment does not intersect */
static void exact_separated(const double s0[3], const double u[3], double r, const fl_shape *b,
                            const pose *Bp, double margin, cbuf *B) {
  double cs[3] = {0, 0, 0}, cp[3] = {0, 0, 0}, t = 0, d[3], nl[3], n[3], pb[3];
  uint32_t fp = 0;
  double dist = seg_poly_distance(s0, u, b, cs, cp, &t, &fp);
  if (dist - r > margin || !(dist > 0)) return;
  sub3(cp, cs, d);
  for (int i = 0; i < 3; i++) nl[i] = d[i] / dist;
  mulv(Bp->R, nl, n);
  to_world(Bp, cp, pb);
  fl__cl_add_b(B, pb, n, dist - r, fl__cl_cap_feat(t), fp);
}


/* capsule a against polyhedron b by separating axes in b's frame: b's face normals and the
 * cross products of the segment with b's edges (complete for a segment against a polytope);
 * the radius is subtracted at the end */
static void capsule_poly(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                         double margin, cbuf *B) {
  double r = a->size[0], pw[3], dw[3], s0[3], s1[3], u[3];
  fl__cl_cap_segment(a, A, pw, dw);
  to_body(Bp, pw, s0);
  double ew[3];
  axpy3(1, dw, pw, ew);
  to_body(Bp, ew, s1);
  sub3(s1, s0, u);
  double tol = FACE_PREF * (a->radius + b->radius);

  // faces: separation = min over the segment of n.x - d
  fl_int fbest = -1;
  double sf = -INFINITY;
  for (fl_int f = 0; f < b->nface; f++) {
    const double *nf = b->face_normal + 3 * f;
    double s = fmin(dot3(nf, s0), dot3(nf, s1)) - b->face_offset[f];
    if (s > sf) sf = s, fbest = f;
  }
  if (sf - r > margin) return;
  // edges: axis m = e x u, oriented to the side that separates more
  fl_int ebest = -1;
  double se = -INFINITY, mbest[3] = {0, 0, 0};
  for (fl_int e = 0; e < b->nedge; e++) {
    const double *v0 = b->vert + 3 * b->edge[2 * e], *v1 = b->vert + 3 * b->edge[2 * e + 1];
    double ed[3], m[3];
    sub3(v1, v0, ed);
    cross3(ed, u, m);
    double ml = norm3(m);
    if (ml <= 1e-6 * norm3(ed) * norm3(u)) continue; // parallel: the faces cover it
    for (int i = 0; i < 3; i++) m[i] /= ml;
    double pmin = INFINITY, pmax = -INFINITY;
    for (fl_int v = 0; v < b->nvert; v++) {
      double t = dot3(m, b->vert + 3 * v);
      if (t < pmin) pmin = t;
      if (t > pmax) pmax = t;
    }
    double q0 = dot3(m, s0), q1 = dot3(m, s1);
    double sp = fmin(q0, q1) - pmax, sm = pmin - fmax(q0, q1);
    double s = fmax(sp, sm);
    // only an edge that supports b along the axis builds a face of the minkowski difference
    // (a parallel edge that does gives the same axis)
    double e0 = dot3(m, v0), e1 = dot3(m, v1), stol = 1e-9 * (b->radius + norm3(u));
    int supp = sp >= sm ? (e0 >= pmax - stol && e1 >= pmax - stol)
                        : (e0 <= pmin + stol && e1 <= pmin + stol);
    if (supp && s > se) {
      se = s, ebest = e;
      for (int i = 0; i < 3; i++) mbest[i] = sp >= sm ? m[i] : -m[i];
    }
  }
  if (se - r > margin) return;

  double nb[3], n[3], pb[3];
  int separated = fmax(sf, se) > SEP_EXACT * (a->radius + b->radius);
  if (separated && ebest >= 0 && se > sf + tol) {
    exact_separated(s0, u, r, b, Bp, margin, B);
    return;
  }
  if (ebest >= 0 && se > sf + tol) {
    // edge contact: closest points of the segment and the edge
    const double *v0 = b->vert + 3 * b->edge[2 * ebest], *v1 = b->vert + 3 * b->edge[2 * ebest + 1];
    double ed[3], c1[3], c2[3], s, t;
    sub3(v1, v0, ed);
    fl__cl_seg_closest(s0, u, v0, ed, &s, &t, c1, c2);
    mulv(Bp->R, mbest, nb);
    n[0] = -nb[0], n[1] = -nb[1], n[2] = -nb[2];
    to_world(Bp, c2, pb);
    fl__cl_add_b(B, pb, n, se - r, fl__cl_cap_feat(s), FL_FEAT(FL_FEAT_EDGE, ebest));
    return;
  }
  // face contact: clip the segment to the face's side planes
  const double *nf = b->face_normal + 3 * fbest;
  double t0 = 0, t1 = 1;
  fl_int side0 = -1, side1 = -1;
  fl_int k0 = b->face_ptr[fbest], k1 = b->face_ptr[fbest + 1];
  for (fl_int k = k0; k < k1; k++) {
    fl_int kn = k + 1 < k1 ? k + 1 : k0;
    const double *p = b->vert + 3 * b->face_vert[k], *q = b->vert + 3 * b->face_vert[kn];
    double e[3], sd[3];
    sub3(q, p, e);
    cross3(e, nf, sd); // outward side normal
    double off = dot3(sd, p), g0 = dot3(sd, s0) - off, gu = dot3(sd, u);
    // g(t) = g0 + t gu <= 0 inside
    if (fabs(gu) <= 1e-300) {
      if (g0 > 0) t0 = 1, t1 = 0;
      continue;
    }
    double tc = -g0 / gu;
    if (gu > 0) {
      if (tc < t1) t1 = tc, side1 = b->face_edge[k];
    } else {
      if (tc > t0) t0 = tc, side0 = b->face_edge[k];
    }
  }
  mulv(Bp->R, nf, nb);
  n[0] = -nb[0], n[1] = -nb[1], n[2] = -nb[2];
  if (t0 > t1 && separated) {
    // the segment misses the face's prism: the exact closest points
    exact_separated(s0, u, r, b, Bp, margin, B);
    return;
  }
  if (t0 > t1) {
    // the segment misses the face's prism: its deeper end
    double h0 = dot3(nf, s0), h1 = dot3(nf, s1);
    t0 = t1 = h0 <= h1 ? 0 : 1;
    side0 = side1 = -1;
  }
  for (int k = 0; k < 2; k++) {
    double t = k ? t1 : t0, x[3], xb[3];
    if (k == 1 && t1 - t0 <= 1e-12) break;
    axpy3(t, u, s0, x);
    double h = dot3(nf, x) - b->face_offset[fbest], phi = h - r;
    if (phi > margin) continue;
    axpy3(-h, nf, x, xb);
    to_world(Bp, xb, pb);
    fl_int side = k ? side1 : side0;
    uint32_t fb = side >= 0 ? FL_FEAT(FL_FEAT_EDGE, side) : FL_FEAT(FL_FEAT_FACE, fbest);
    fl__cl_add_b(B, pb, n, phi, fl__cl_cap_feat(t), fb);
  }
}


/*---- dispatch ----*/

static int rank_of(fl_shape_type t) {
  switch (t) {
  case FL_SHAPE_PLANE: return 0;
  case FL_SHAPE_SPHERE: return 1;
  case FL_SHAPE_CAPSULE: return 2;
  default: return 3;
  }
}


int fl_collide_supported(fl_shape_type a, fl_shape_type b) {
  int ok = (unsigned)a < FL_SHAPE_NTYPES && (unsigned)b < FL_SHAPE_NTYPES;
  return ok && !(a == FL_SHAPE_PLANE && b == FL_SHAPE_PLANE);
}


/* Two cylinders side by side (issue 50): where the closest points of their axes lie on both
 * sides, not at a cap (the contact normal across both axes), the round cylinders touch as the
 * capsules around them do, along a line when parallel; anything with a cap stays with the
 * polyhedra. A cylinder lies inside its capsule, so no capsule contact means no contact. 1 when
 * it wrote the pair's contacts into B. */
static int cylinder_cylinder_side(const fl_shape *a, const pose *A, const fl_shape *b,
                                  const pose *Bp, double margin, cbuf *B) {
  // side against side: the axes apart, their closest points inside both (crossed) or their
  // spans overlapping (parallel); end to end or a cap in the way is not this pair
  double p1[3], d1[3], p2[3], d2[3], c1[3], c2[3], s, t, r[3], cx[3];
  fl__cl_cap_segment(a, A, p1, d1);
  fl__cl_cap_segment(b, Bp, p2, d2);
  fl__cl_seg_closest(p1, d1, p2, d2, &s, &t, c1, c2);
  sub3(c2, c1, r);
  if (norm3(r) <= 1e-6 * (a->size[0] + b->size[0])) return 0;
  cross3(d1, d2, cx);
  if (norm3(cx) / (norm3(d1) * norm3(d2)) >= PARALLEL_SIN) {
    if (!(s > 0 && s < 1 && t > 0 && t < 1)) return 0;
  } else {
    double a2 = dot3(d1, d1), w0[3], w1[3];
    sub3(p2, p1, w0);
    axpy3(1, d2, w0, w1);
    double t0 = dot3(w0, d1) / a2, t1 = dot3(w1, d1) / a2;
    if (fmin(fmax(t0, t1), 1) - fmax(fmin(t0, t1), 0) <= 1e-9) return 0;
  }
  static _Thread_local cbuf T;
  T.n = 0;
  capsule_capsule(a, A, b, Bp, margin, &T);
  double ua[3] = {A->R[2], A->R[5], A->R[8]}, ub[3] = {Bp->R[2], Bp->R[5], Bp->R[8]};
  for (int i = 0; i < T.n; i++)
    if (fabs(dot3(T.c[i].n, ua)) > 1e-6 || fabs(dot3(T.c[i].n, ub)) > 1e-6) return 0;
  for (int i = 0; i < T.n && B->n < CAND_MAX; i++) B->c[B->n++] = T.c[i];
  return 1;
}


/* a and b in rank order */
static void collide_ordered(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                            double margin, fl__hull_pair *hc, cbuf *B) {
  int ra = rank_of(a->type);
  fl_shape_type tb = b->type;
  if (ra == 0) {
    if (tb == FL_SHAPE_SPHERE) plane_sphere(A, b, Bp, margin, B);
    else if (tb == FL_SHAPE_CAPSULE) plane_capsule(A, b, Bp, margin, B);
    else if (tb == FL_SHAPE_CYLINDER) plane_cylinder(A, b, Bp, margin, FL_FEAT(FL_FEAT_FACE, 0), B);
    else plane_poly(A, b, Bp, margin, B);
  } else if (ra == 1) {
    if (tb == FL_SHAPE_SPHERE) sphere_sphere(a, A, b, Bp, margin, B);
    else if (tb == FL_SHAPE_CAPSULE) sphere_capsule(a, A, b, Bp, margin, B);
    else if (tb == FL_SHAPE_BOX) sphere_box(a, A, b, Bp, margin, B);
    else if (tb == FL_SHAPE_CYLINDER) sphere_cylinder(a, A, b, Bp, margin, B);
    else sphere_poly(a, A, b, Bp, margin, B);
  } else if (ra == 2) {
    if (tb == FL_SHAPE_CAPSULE) capsule_capsule(a, A, b, Bp, margin, B);
    else capsule_poly(a, A, b, Bp, margin, B);
  } else if (a->type == FL_SHAPE_BOX && tb == FL_SHAPE_CYLINDER &&
             box_cylinder_face(a, A, b, Bp, margin, 0, B)) {
  } else if (a->type == FL_SHAPE_CYLINDER && tb == FL_SHAPE_BOX &&
             box_cylinder_face(b, Bp, a, A, margin, 1, B)) {
  } else if (a->type == FL_SHAPE_CYLINDER && tb == FL_SHAPE_CYLINDER &&
             cylinder_cylinder_side(a, A, b, Bp, margin, B)) {
  } else {
    fl__cl_poly_poly(a, A, b, Bp, margin, hc, B);
  }
}


int fl__collide_check_shape(const fl_shape *s, const char *name) {
  if ((unsigned)s->type >= FL_SHAPE_NTYPES)
    return fl_seterr(FL_ERR_INVAL, "fl_collide: shape %s has unknown type %d", name, (int)s->type);
  if (rank_of(s->type) == 3 && (s->nvert < 4 || s->nface < 4 || !s->vert || !s->edge))
    return fl_seterr(FL_ERR_INVAL, "fl_collide: shape %s (type %d) has no polyhedron; build it "
                     "with an fl_shape_make_* function", name, (int)s->type);
  return FL_OK;
}


static int check_pose(const double p[3], const double q[4], const char *name) {
  double qn = 0;
  for (int i = 0; i < 4; i++) qn += q[i] * q[i];
  for (int i = 0; i < 3; i++)
    if (!isfinite(p[i]))
      return fl_seterr(FL_ERR_INVAL, "fl_collide: position of %s has %g in component %d", name,
                       p[i], i);
  if (!(qn > 1e-200) || !isfinite(qn))
    return fl_seterr(FL_ERR_INVAL, "fl_collide: quaternion of %s is zero or not finite", name);
  return FL_OK;
}


int fl_collide(const fl_shape *a, const double pa[3], const double qa[4], const fl_shape *b,
               const double pb[3], const double qb[4], double margin, fl_manifold_point *out) {
  if (!a || !pa || !qa || !b || !pb || !qb || !out)
    return fl_seterr(FL_ERR_INVAL, "fl_collide: NULL argument");
  if (!(margin >= 0) || !isfinite(margin))
    return fl_seterr(FL_ERR_INVAL, "fl_collide: margin = %g, expected a finite value >= 0 (m)",
                     margin);
  FL_TRY(fl__collide_check_shape(a, "a"));
  FL_TRY(fl__collide_check_shape(b, "b"));
  FL_TRY(check_pose(pa, qa, "a"));
  FL_TRY(check_pose(pb, qb, "b"));
  if (a->type == FL_SHAPE_PLANE && b->type == FL_SHAPE_PLANE)
    return fl_seterr(FL_ERR_UNSUPPORTED, "fl_collide: no contact algorithm for plane-plane");
  pose A, Bp;
  make_pose(pa, qa, &A);
  make_pose(pb, qb, &Bp);
  return fl__collide_posed(a, &A, b, &Bp, margin, NULL, out);
}


int fl__collide_posed(const fl_shape *a, const pose *Ap, const fl_shape *b, const pose *Bq,
                      double margin, fl__hull_pair *hc, fl_manifold_point *out) {
  if (!(margin >= 0) || !isfinite(margin))
    return fl_seterr(FL_ERR_INVAL, "fl_collide: margin = %g, expected a finite value >= 0 (m)",
                     margin);
  if (a->type == FL_SHAPE_PLANE && b->type == FL_SHAPE_PLANE)
    return fl_seterr(FL_ERR_UNSUPPORTED, "fl_collide: no contact algorithm for plane-plane");
  static _Thread_local cbuf B;
  B.n = 0;
  int flip = rank_of(a->type) > rank_of(b->type);
  if (flip)
    collide_ordered(b, Bq, a, Ap, margin, NULL, &B); // an entry keyed (a, b) is not (b, a)'s
  else
    collide_ordered(a, Ap, b, Bq, margin, hc, &B);
  fl__cl_reduce(&B, FL_MANIFOLD_MAX);
  for (int i = 0; i < B.n; i++) {
    const cand *c = B.c + i;
    fl_manifold_point *o = out + i;
    copy3(c->p, o->p);
    double s = flip ? -1 : 1;
    for (int k = 0; k < 3; k++) o->n[k] = s * c->n[k];
    o->phi = c->phi;
    uint32_t hi = flip ? c->fb : c->fa, lo = flip ? c->fa : c->fb;
    o->feature = (int64_t)(((uint64_t)hi << 32) | (uint64_t)lo);
  }
  return B.n;
}

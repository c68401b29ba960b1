/* collide.c: narrow phase contact manifolds for every pair of shapes but plane-plane.
 *
 * Pairs are ranked plane < sphere < capsule < polyhedron (box, cylinder, convex); a pair is
 * solved in rank order and flipped afterwards (normal negated, feature halves swapped), so each
 * algorithm is written once:
 *   plane-sphere, plane-capsule      closed forms
 *   plane-polyhedron                 every vertex within the margin (cylinder: exact rim points)
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
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "fl_geometry.h"

#define CAND_MAX 2100 /* >= 2 * FACE_MAX (shapes.c) + a few */
#define CLIP_MAX 2100

/* ties within this fraction of the shapes' size go to the face (then to a's face) so the
 * manifold does not flicker between equivalent choices */
#define FACE_PREF 1e-4
/* separated pairs farther apart than this fraction of the shapes' size get exact closest
 * points (closer ones keep the separating axis, whose direction rounding cannot spoil) */
#define SEP_EXACT 1e-6
/* polyhedra with at most this many edges get their gauss-map arcs cached per call */
#define GAUSS_CACHE 4096
/* capsule-capsule: sin of the angle below which the axes count as parallel (two points) */
#define PARALLEL_SIN 1e-2


/*---- vectors and poses ----*/

static inline double dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}


static inline void sub3(const double a[3], const double b[3], double o[3]) {
  o[0] = a[0] - b[0], o[1] = a[1] - b[1], o[2] = a[2] - b[2];
}


static inline void axpy3(double s, const double x[3], const double y[3], double o[3]) {
  o[0] = y[0] + s * x[0], o[1] = y[1] + s * x[1], o[2] = y[2] + s * x[2];
}


static inline void cross3(const double a[3], const double b[3], double o[3]) {
  double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
         z = a[0] * b[1] - a[1] * b[0];
  o[0] = x, o[1] = y, o[2] = z;
}


static inline double norm3(const double a[3]) { return sqrt(dot3(a, a)); }


static inline void copy3(const double a[3], double o[3]) { o[0] = a[0], o[1] = a[1], o[2] = a[2]; }


/* R x */
static inline void mulv(const double R[9], const double x[3], double o[3]) {
  double a = R[0] * x[0] + R[1] * x[1] + R[2] * x[2];
  double b = R[3] * x[0] + R[4] * x[1] + R[5] * x[2];
  double c = R[6] * x[0] + R[7] * x[1] + R[8] * x[2];
  o[0] = a, o[1] = b, o[2] = c;
}


/* R^T x */
static inline void mulvt(const double R[9], const double x[3], double o[3]) {
  double a = R[0] * x[0] + R[3] * x[1] + R[6] * x[2];
  double b = R[1] * x[0] + R[4] * x[1] + R[7] * x[2];
  double c = R[2] * x[0] + R[5] * x[1] + R[8] * x[2];
  o[0] = a, o[1] = b, o[2] = c;
}


typedef struct pose {
  double R[9]; /* body to world */
  double p[3]; /* body origin in the world */
} pose;


static void make_pose(const double pos[3], const double q[4], pose *P) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
  P->R[0] = 1 - 2 * (y * y + z * z);
  P->R[1] = 2 * (x * y - w * z);
  P->R[2] = 2 * (x * z + w * y);
  P->R[3] = 2 * (x * y + w * z);
  P->R[4] = 1 - 2 * (x * x + z * z);
  P->R[5] = 2 * (y * z - w * x);
  P->R[6] = 2 * (x * z - w * y);
  P->R[7] = 2 * (y * z + w * x);
  P->R[8] = 1 - 2 * (x * x + y * y);
  copy3(pos, P->p);
}


/* world point of a body point */
static inline void to_world(const pose *P, const double x[3], double o[3]) {
  double t[3];
  mulv(P->R, x, t);
  o[0] = t[0] + P->p[0], o[1] = t[1] + P->p[1], o[2] = t[2] + P->p[2];
}


/* body point of a world point */
static inline void to_body(const pose *P, const double x[3], double o[3]) {
  double t[3];
  sub3(x, P->p, t);
  mulvt(P->R, t, o);
}


/* some unit vector perpendicular to u (unit) */
static void perp(const double u[3], double o[3]) {
  double e[3] = {0, 0, 0};
  int k = fabs(u[0]) <= fabs(u[1]) ? (fabs(u[0]) <= fabs(u[2]) ? 0 : 2)
                                   : (fabs(u[1]) <= fabs(u[2]) ? 1 : 2);
  e[k] = 1;
  cross3(u, e, o);
  double n = norm3(o);
  o[0] /= n, o[1] /= n, o[2] /= n;
}


/*---- candidate points ----*/

typedef struct cand {
  double p[3], n[3], phi;
  uint32_t fa, fb;
} cand;

typedef struct cbuf {
  cand c[CAND_MAX];
  int n;
} cbuf;


/* adds a point given the point pa on a's surface, the normal n (a to b) and phi */
static void add_a(cbuf *B, const double pa[3], const double n[3], double phi, uint32_t fa,
                  uint32_t fb) {
  if (B->n >= CAND_MAX) return;
  cand *c = B->c + B->n++;
  axpy3(0.5 * phi, n, pa, c->p);
  copy3(n, c->n);
  c->phi = phi;
  c->fa = fa, c->fb = fb;
}


/* adds a point given the point pb on b's surface */
static void add_b(cbuf *B, const double pb[3], const double n[3], double phi, uint32_t fa,
                  uint32_t fb) {
  double pa[3];
  axpy3(-phi, n, pb, pa);
  add_a(B, pa, n, phi, fa, fb);
}


/* keeps at most m candidates: the deepest, then repeatedly the one farthest from all kept
 * (ties to the lower index, so the choice is deterministic) */
static void reduce(cbuf *B, int m) {
  if (B->n <= m) return;
  unsigned char keep[CAND_MAX];
  double dmin[CAND_MAX];
  memset(keep, 0, (size_t)B->n);
  int best = 0;
  for (int i = 1; i < B->n; i++)
    if (B->c[i].phi < B->c[best].phi) best = i;
  keep[best] = 1;
  for (int i = 0; i < B->n; i++) dmin[i] = INFINITY;
  for (int k = 1; k < m; k++) {
    int far = -1;
    for (int i = 0; i < B->n; i++) {
      if (keep[i]) continue;
      double d[3];
      sub3(B->c[i].p, B->c[best].p, d);
      if (dot3(d, d) < dmin[i]) dmin[i] = dot3(d, d);
      if (far < 0 || dmin[i] > dmin[far]) far = i;
    }
    keep[far] = 1;
    best = far;
  }
  int w = 0;
  for (int i = 0; i < B->n; i++)
    if (keep[i]) B->c[w++] = B->c[i];
  B->n = w;
}


/*---- segments ----*/

/* closest points c1 = p1 + s d1, c2 = p2 + t d2 of segments p1 + [0,1] d1 and p2 + [0,1] d2
 * (Ericson, Real-Time Collision Detection 5.1.9) */
static void seg_closest(const double p1[3], const double d1[3], const double p2[3],
                        const double d2[3], double *s_out, double *t_out, double c1[3],
                        double c2[3]) {
  double r[3];
  sub3(p1, p2, r);
  double a = dot3(d1, d1), e = dot3(d2, d2), f = dot3(d2, r);
  double s, t;
  if (a <= 1e-300 && e <= 1e-300) {
    s = t = 0;
  } else if (a <= 1e-300) {
    s = 0;
    t = fmin(fmax(f / e, 0), 1);
  } else {
    double c = dot3(d1, r);
    if (e <= 1e-300) {
      t = 0;
      s = fmin(fmax(-c / a, 0), 1);
    } else {
      double b = dot3(d1, d2), den = a * e - b * b;
      s = den > 1e-14 * a * e ? fmin(fmax((b * f - c * e) / den, 0), 1) : 0;
      t = (b * s + f) / e;
      if (t < 0) {
        t = 0;
        s = fmin(fmax(-c / a, 0), 1);
      } else if (t > 1) {
        t = 1;
        s = fmin(fmax((b - c) / a, 0), 1);
      }
    }
  }
  axpy3(s, d1, p1, c1);
  axpy3(t, d2, p2, c2);
  *s_out = s;
  *t_out = t;
}


/* feature code of a point at parameter t of a capsule's segment */
static uint32_t cap_feat(double t) {
  return t <= 0 ? FL_FEAT(FL_FEAT_VERTEX, 0)
                : t >= 1 ? FL_FEAT(FL_FEAT_VERTEX, 1) : FL_FEAT(FL_FEAT_EDGE, 2);
}


/* a capsule's segment in the world: start p and direction d (end = p + d) */
static void cap_segment(const fl_shape *s, const pose *P, double p[3], double d[3]) {
  double h = s->size[1];
  for (int i = 0; i < 3; i++) {
    d[i] = 2 * h * P->R[3 * i + 2];
    p[i] = P->p[i] - h * P->R[3 * i + 2];
  }
}


/*---- plane against anything ----*/

static void plane_sphere(const pose *A, const fl_shape *b, const pose *Bp, double margin,
                         cbuf *B) {
  double n[3] = {A->R[2], A->R[5], A->R[8]}, d[3], pa[3];
  sub3(Bp->p, A->p, d);
  double h = dot3(n, d), phi = h - b->size[0];
  if (phi > margin) return;
  axpy3(-h, n, Bp->p, pa);
  add_a(B, pa, n, phi, FL_FEAT(FL_FEAT_FACE, 0), FL_FEAT(FL_FEAT_CENTER, 0));
}


static void plane_capsule(const pose *A, const fl_shape *b, const pose *Bp, double margin,
                          cbuf *B) {
  double n[3] = {A->R[2], A->R[5], A->R[8]}, p[3], d[3];
  cap_segment(b, Bp, p, d);
  for (int k = 0; k < 2; k++) {
    double e[3], r[3], pa[3];
    axpy3((double)k, d, p, e);
    sub3(e, A->p, r);
    double h = dot3(n, r), phi = h - b->size[0];
    if (phi > margin) continue;
    axpy3(-h, n, e, pa);
    add_a(B, pa, n, phi, FL_FEAT(FL_FEAT_FACE, 0), FL_FEAT(FL_FEAT_VERTEX, k));
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
      add_a(B, pa, n, h, FL_FEAT(FL_FEAT_FACE, 0), FL_FEAT(FL_FEAT_VERTEX, v));
    }
}


/* exact cylinder on a plane: the deepest point of each rim, plus 8 fixed points per rim (so a
 * cylinder standing on its cap rests on 8 points) */
static void plane_cylinder(const pose *A, const fl_shape *b, const pose *Bp, double margin,
                           cbuf *B) {
  double n[3] = {A->R[2], A->R[5], A->R[8]}, ax[3] = {Bp->R[2], Bp->R[5], Bp->R[8]};
  double r = b->size[0], h = b->size[1], u[3];
  axpy3(-dot3(n, ax), ax, n, u); // n minus its axial part: the direction across the caps
  double ul = norm3(u);
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
        add_a(B, pa, n, phi, FL_FEAT(FL_FEAT_FACE, 0), FL_FEAT(FL_FEAT_EDGE, cap));
      }
    }
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
      add_a(B, pa, n, phi, FL_FEAT(FL_FEAT_FACE, 0), FL_FEAT(FL_FEAT_VERTEX, 8 * cap + k));
    }
  }
}


/*---- sphere against anything ----*/

/* normal from a to b along d (b's point minus a's point), or a fallback when d vanishes */
static void dir_or(const double d[3], const double fallback[3], double n[3]) {
  double l = norm3(d);
  if (l > 1e-300) {
    n[0] = d[0] / l, n[1] = d[1] / l, n[2] = d[2] / l;
  } else {
    copy3(fallback, n);
  }
}


static const double ez[3] = {0, 0, 1};


static void sphere_sphere(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                          double margin, cbuf *B) {
  double d[3], n[3], pa[3];
  sub3(Bp->p, A->p, d);
  double dist = norm3(d), phi = dist - a->size[0] - b->size[0];
  if (phi > margin) return;
  dir_or(d, ez, n);
  axpy3(a->size[0], n, A->p, pa);
  add_a(B, pa, n, phi, FL_FEAT(FL_FEAT_CENTER, 0), FL_FEAT(FL_FEAT_CENTER, 0));
}


static void sphere_capsule(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                           double margin, cbuf *B) {
  double p[3], d[3], q[3], r[3], n[3], pa[3];
  cap_segment(b, Bp, p, d);
  sub3(A->p, p, r);
  double t = fmin(fmax(dot3(r, d) / dot3(d, d), 0), 1);
  axpy3(t, d, p, q);
  sub3(q, A->p, r);
  double phi = norm3(r) - a->size[0] - b->size[0];
  if (phi > margin) return;
  double fb[3];
  perp(d, fb); // centre on the axis: any direction across it
  dir_or(r, fb, n);
  axpy3(a->size[0], n, A->p, pa);
  add_a(B, pa, n, phi, FL_FEAT(FL_FEAT_CENTER, 0), cap_feat(t));
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
  add_b(B, pb, n, phi, FL_FEAT(FL_FEAT_CENTER, 0), fb);
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
  add_b(B, pb, n, phi, FL_FEAT(FL_FEAT_CENTER, 0), fb);
}


/* closest point of a convex polyhedron to a body-frame point c: q, the outward direction nb
 * (unit, from q towards c, or the deepest face's normal from inside), the signed distance, and
 * the feature code */
static double poly_closest(const fl_shape *b, const double c[3], double q[3], double nb[3],
                           uint32_t *feat) {
  fl_int fmax_ = 0;
  double smax = -INFINITY;
  for (fl_int f = 0; f < b->nface; f++) {
    double s = dot3(b->face_normal + 3 * f, c) - b->face_offset[f];
    if (s > smax) smax = s, fmax_ = f;
  }
  if (smax <= 0) {
    // inside: the deepest face (least penetrated) is the way out
    copy3(b->face_normal + 3 * fmax_, nb);
    axpy3(-smax, nb, c, q);
    *feat = FL_FEAT(FL_FEAT_FACE, fmax_);
    return smax;
  }
  double best = INFINITY;
  // faces whose plane c is in front of, when its projection falls inside the polygon
  for (fl_int f = 0; f < b->nface; f++) {
    const double *nf = b->face_normal + 3 * f;
    double s = dot3(nf, c) - b->face_offset[f];
    if (s <= 0 || s >= best) continue;
    double x[3];
    axpy3(-s, nf, c, x);
    int inside = 1;
    for (fl_int k = b->face_ptr[f]; k < b->face_ptr[f + 1] && inside; k++) {
      fl_int k1 = k + 1 < b->face_ptr[f + 1] ? k + 1 : b->face_ptr[f];
      const double *u = b->vert + 3 * b->face_vert[k], *v = b->vert + 3 * b->face_vert[k1];
      double e[3], w[3], cr[3];
      sub3(v, u, e);
      sub3(x, u, w);
      cross3(e, w, cr);
      inside = dot3(cr, nf) >= 0;
    }
    if (!inside) continue;
    best = s;
    copy3(x, q);
    copy3(nf, nb);
    *feat = FL_FEAT(FL_FEAT_FACE, f);
  }
  // edges and their end vertices
  for (fl_int e = 0; e < b->nedge; e++) {
    const double *u = b->vert + 3 * b->edge[2 * e], *v = b->vert + 3 * b->edge[2 * e + 1];
    double d[3], w[3], x[3], r[3];
    sub3(v, u, d);
    sub3(c, u, w);
    double t = fmin(fmax(dot3(w, d) / dot3(d, d), 0), 1);
    axpy3(t, d, u, x);
    sub3(c, x, r);
    double dist = norm3(r);
    if (dist >= best) continue;
    best = dist;
    copy3(x, q);
    for (int i = 0; i < 3; i++) nb[i] = r[i] / dist;
    *feat = t <= 0 ? FL_FEAT(FL_FEAT_VERTEX, b->edge[2 * e])
                   : t >= 1 ? FL_FEAT(FL_FEAT_VERTEX, b->edge[2 * e + 1])
                            : FL_FEAT(FL_FEAT_EDGE, e);
  }
  return best;
}


static void sphere_poly(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                        double margin, cbuf *B) {
  double c[3], q[3], nb[3], n[3], pb[3];
  uint32_t fb = 0;
  to_body(Bp, A->p, c);
  double phi = poly_closest(b, c, q, nb, &fb) - a->size[0];
  if (phi > margin) return;
  mulv(Bp->R, nb, n);
  n[0] = -n[0], n[1] = -n[1], n[2] = -n[2];
  to_world(Bp, q, pb);
  add_b(B, pb, n, phi, FL_FEAT(FL_FEAT_CENTER, 0), fb);
}


/*---- capsule against capsule and polyhedra ----*/

static void capsule_capsule(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                            double margin, cbuf *B) {
  double p1[3], d1[3], p2[3], d2[3], c1[3], c2[3], s, t, ra = a->size[0], rb = b->size[0];
  cap_segment(a, A, p1, d1);
  cap_segment(b, Bp, p2, d2);
  seg_closest(p1, d1, p2, d2, &s, &t, c1, c2);
  double r[3], dist;
  sub3(c2, c1, r);
  dist = norm3(r);
  if (dist - ra - rb > margin) return;
  // a fallback normal for touching axes: across both axes, towards b's centre
  double fbk[3], cx[3], dc[3];
  cross3(d1, d2, cx);
  if (norm3(cx) > 1e-12 * norm3(d1) * norm3(d2)) {
    dir_or(cx, ez, fbk);
  } else {
    double u[3];
    dir_or(d1, ez, u);
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
        dir_or(dd, fbk, n);
        axpy3(ra, n, xa, pa);
        // the end comes from a (its endpoint) or from b (one of b's endpoints)
        int from_a = (k == 0) ? (t0 <= 0) : (t1 >= 1);
        uint32_t fa = from_a ? cap_feat(ends[k]) : FL_FEAT(FL_FEAT_EDGE, 2);
        uint32_t fb = from_a ? cap_feat(tb) : FL_FEAT(FL_FEAT_VERTEX, k == 0 ? e0 : e1);
        add_a(B, pa, n, phi, fa, fb);
      }
      if (B->n > 0) return;
    }
  }
  double n[3], pa[3];
  dir_or(r, fbk, n);
  axpy3(ra, n, c1, pa);
  add_a(B, pa, n, dist - ra - rb, cap_feat(s), cap_feat(t));
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
    double d = poly_closest(b, e, q, nb, &f);
    if (d < best) best = d, copy3(e, cs), copy3(q, cp), *t = k, *fp = f;
  }
  for (fl_int j = 0; j < b->nedge; j++) {
    const double *v0 = b->vert + 3 * b->edge[2 * j], *v1 = b->vert + 3 * b->edge[2 * j + 1];
    double ed[3], c1[3], c2[3], r[3], sp, tp;
    sub3(v1, v0, ed);
    seg_closest(s0, u, v0, ed, &sp, &tp, c1, c2);
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
  add_b(B, pb, n, dist - r, cap_feat(t), fp);
}


/* capsule a against polyhedron b by separating axes in b's frame: b's face normals and the
 * cross products of the segment with b's edges (complete for a segment against a polytope);
 * the radius is subtracted at the end */
static void capsule_poly(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                         double margin, cbuf *B) {
  double r = a->size[0], pw[3], dw[3], s0[3], s1[3], u[3];
  cap_segment(a, A, pw, dw);
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
    seg_closest(s0, u, v0, ed, &s, &t, c1, c2);
    mulv(Bp->R, mbest, nb);
    n[0] = -nb[0], n[1] = -nb[1], n[2] = -nb[2];
    to_world(Bp, c2, pb);
    add_b(B, pb, n, se - r, cap_feat(s), FL_FEAT(FL_FEAT_EDGE, ebest));
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
    add_b(B, pb, n, phi, cap_feat(t), fb);
  }
}


/*---- polyhedron against polyhedron ----*/

/* one convex polygon vertex during clipping: position and the label of the segment that
 * arrives at it (>= 0: incident face slot; < 0: -(reference face slot + 1)) */
typedef struct cvert {
  double x[3];
  int lab;
} cvert;


/* Gregorius' test: do the arcs (a, b) and (c, d) of the Gauss map cross? Normals of b are
 * passed negated, so a crossing is an edge pair that builds a face of the Minkowski
 * difference */
static int minkowski_face(const double a[3], const double b[3], const double c[3],
                          const double d[3]) {
  double bxa[3], dxc[3];
  cross3(b, a, bxa);
  cross3(d, c, dxc);
  double cba = dot3(c, bxa), dba = dot3(d, bxa), adc = dot3(a, dxc), bdc = dot3(b, dxc);
  return cba * dba < 0 && adc * bdc < 0 && cba * bdc > 0;
}


/* face contact with reference face f of shape `ref` (frame of ref) and the incident shape
 * `inc` placed in ref's frame by (R, t). Clips, keeps points within the margin and writes
 * them in the world (via ref's pose) with ref's outward normal, or its opposite when ref is b
 * (ref_is_b), features ordered (a, b). */
static void face_contact(const fl_shape *ref, const pose *Pref, const fl_shape *inc,
                         const double R[9], const double t[3], fl_int f, int ref_is_b,
                         int fallback, double margin, cbuf *B) {
  const double *nf = ref->face_normal + 3 * f;
  double df = ref->face_offset[f];
  // incident face: the most anti-parallel one
  double nfi[3];
  mulvt(R, nf, nfi); // ref normal in inc's frame
  fl_int g = 0;
  double gmin = INFINITY;
  for (fl_int k = 0; k < inc->nface; k++) {
    double c = dot3(inc->face_normal + 3 * k, nfi);
    if (c < gmin) gmin = c, g = k;
  }
  // per-thread scratch (no allocation, no large stack frame)
  static _Thread_local cvert buf0[CLIP_MAX], buf1[CLIP_MAX];
  cvert *in = buf0, *out = buf1;
  int nin = 0;
  fl_int g0 = inc->face_ptr[g], g1 = inc->face_ptr[g + 1];
  for (fl_int k = g0; k < g1 && nin < CLIP_MAX; k++) {
    double xl[3];
    mulv(R, inc->vert + 3 * inc->face_vert[k], xl);
    for (int i = 0; i < 3; i++) in[nin].x[i] = xl[i] + t[i];
    // the segment arriving at slot k is the previous slot's edge
    in[nin].lab = (int)((k == g0 ? g1 : k) - 1 - g0);
    nin++;
  }
  // sutherland-hodgman against the reference face's side planes
  fl_int r0 = ref->face_ptr[f], r1 = ref->face_ptr[f + 1];
  for (fl_int k = r0; k < r1 && nin > 0; k++) {
    fl_int kn = k + 1 < r1 ? k + 1 : r0;
    const double *p = ref->vert + 3 * ref->face_vert[k], *q = ref->vert + 3 * ref->face_vert[kn];
    double e[3], sd[3];
    sub3(q, p, e);
    cross3(e, nf, sd);
    double off = dot3(sd, p);
    int nout = 0;
    for (int i = 0; i < nin; i++) {
      const cvert *P = in + (i == 0 ? nin - 1 : i - 1), *Q = in + i;
      double dp = dot3(sd, P->x) - off, dq = dot3(sd, Q->x) - off;
      if (dq <= 0) {
        if (dp > 0 && nout < CLIP_MAX) {
          cvert *I = out + nout++;
          for (int j = 0; j < 3; j++) I->x[j] = P->x[j] + dp / (dp - dq) * (Q->x[j] - P->x[j]);
          I->lab = -(int)(k - r0) - 1;
        }
        if (nout < CLIP_MAX) out[nout++] = *Q;
      } else if (dp <= 0 && nout < CLIP_MAX) {
        cvert *I = out + nout++;
        for (int j = 0; j < 3; j++) I->x[j] = P->x[j] + dp / (dp - dq) * (Q->x[j] - P->x[j]);
        I->lab = Q->lab;
      }
    }
    cvert *tmp = in;
    in = out, out = tmp;
    nin = nout;
  }
  double nw[3], n[3];
  mulv(Pref->R, nf, nw);
  for (int i = 0; i < 3; i++) n[i] = ref_is_b ? -nw[i] : nw[i];
  if (nin == 0 && !fallback) return;
  if (nin == 0) {
    // overlapping, but the incident face misses the reference face (rare): the incident
    // shape's deepest vertex
    fl_int vd = 0;
    double hd = INFINITY;
    for (fl_int v = 0; v < inc->nvert; v++) {
      double xl[3];
      mulv(R, inc->vert + 3 * v, xl);
      double h = dot3(nf, xl) + dot3(nf, t) - df;
      if (h < hd) hd = h, vd = v;
    }
    if (hd > margin) return;
    double xl[3], xr[3], pr[3];
    mulv(R, inc->vert + 3 * vd, xl);
    for (int i = 0; i < 3; i++) xr[i] = xl[i] + t[i] - hd * nf[i];
    to_world(Pref, xr, pr);
    uint32_t fr = FL_FEAT(FL_FEAT_FACE, f), fi = FL_FEAT(FL_FEAT_VERTEX, vd);
    if (ref_is_b)
      add_b(B, pr, n, hd, fi, fr);
    else
      add_a(B, pr, n, hd, fr, fi);
    return;
  }
  for (int i = 0; i < nin; i++) {
    double h = dot3(nf, in[i].x) - df;
    if (h > margin) continue;
    // features from the labels of the segments arriving at and leaving the point
    int lin = in[i].lab, lout = in[(i + 1) % nin].lab;
    uint32_t fr, fi;
    if (lin >= 0 && lout >= 0) {
      fr = FL_FEAT(FL_FEAT_FACE, f);
      fi = FL_FEAT(FL_FEAT_VERTEX, inc->face_vert[g0 + lout]);
    } else if (lin < 0 && lout < 0) {
      fr = FL_FEAT(FL_FEAT_VERTEX, ref->face_vert[r0 - lout - 1]);
      fi = FL_FEAT(FL_FEAT_FACE, g);
    } else {
      int li = lin >= 0 ? lin : lout, lr = lin < 0 ? lin : lout;
      fr = FL_FEAT(FL_FEAT_EDGE, ref->face_edge[r0 - lr - 1]);
      fi = FL_FEAT(FL_FEAT_EDGE, inc->face_edge[g0 + li]);
    }
    // the point on the reference face, in the world
    double xr[3], pr[3];
    axpy3(-h, nf, in[i].x, xr);
    to_world(Pref, xr, pr);
    if (ref_is_b)
      add_b(B, pr, n, h, fi, fr);
    else
      add_a(B, pr, n, h, fr, fi);
  }
}


/* exact closest points of two disjoint convex polyhedra, in a's frame (b placed by Rab, tab):
 * the closest pair joins a vertex of one to the other (vertex-face, -edge, -vertex) or two
 * edges, so the minimum over those is exact. Returns the distance, the points ca (on a) and
 * cb (on b) and the feature codes. O(V_a (F_b + E_b) + V_b (F_a + E_a) + E_a E_b). */
static double poly_poly_distance(const fl_shape *a, const fl_shape *b, const double Rab[9],
                                 const double tab[3], double ca[3], double cb[3], uint32_t *fa,
                                 uint32_t *fb) {
  double best = INFINITY;
  // Candidates are skipped when a lower bound on their distance (from bounding spheres about
  // the body origins, or about the edges' midpoints) exceeds the best so far by more than
  // round-off: they could not win `d < best`, so the result is the same as without the test.
  double slack = 1e-9 * (a->radius + b->radius);
  // vertices of b against a
  for (fl_int v = 0; v < b->nvert; v++) {
    double x[3], q[3], nn[3];
    uint32_t f = 0;
    mulv(Rab, b->vert + 3 * v, x);
    axpy3(1, tab, x, x);
    if (norm3(x) - a->radius > best + slack) continue;
    double d = poly_closest(a, x, q, nn, &f);
    if (d < best) best = d, copy3(q, ca), copy3(x, cb), *fa = f, *fb = FL_FEAT(FL_FEAT_VERTEX, v);
  }
  // vertices of a against b (in b's frame, then back)
  for (fl_int v = 0; v < a->nvert; v++) {
    double x[3], xb[3], q[3], nn[3];
    uint32_t f = 0;
    sub3(a->vert + 3 * v, tab, x);
    mulvt(Rab, x, xb);
    if (norm3(xb) - b->radius > best + slack) continue;
    double d = poly_closest(b, xb, q, nn, &f);
    if (d < best) {
      best = d, copy3(a->vert + 3 * v, ca), *fa = FL_FEAT(FL_FEAT_VERTEX, v), *fb = f;
      mulv(Rab, q, cb);
      axpy3(1, tab, cb, cb);
    }
  }
  // edge pairs
  for (fl_int j = 0; j < b->nedge; j++) {
    double p2[3], q2[3], e2[3];
    mulv(Rab, b->vert + 3 * b->edge[2 * j], p2);
    axpy3(1, tab, p2, p2);
    mulv(Rab, b->vert + 3 * b->edge[2 * j + 1], q2);
    axpy3(1, tab, q2, q2);
    sub3(q2, p2, e2);
    double m2[3], h2 = 0.5 * norm3(e2);
    axpy3(0.5, e2, p2, m2);
    for (fl_int i = 0; i < a->nedge; i++) {
      const double *p1 = a->vert + 3 * a->edge[2 * i], *q1 = a->vert + 3 * a->edge[2 * i + 1];
      double e1[3], c1[3], c2[3], r[3], sp, tp, m1[3];
      sub3(q1, p1, e1);
      axpy3(0.5, e1, p1, m1);
      sub3(m2, m1, r);
      if (norm3(r) - 0.5 * norm3(e1) - h2 > best + slack) continue;
      seg_closest(p1, e1, p2, e2, &sp, &tp, c1, c2);
      sub3(c2, c1, r);
      double d = norm3(r);
      // endpoints are vertices, already covered with their own features
      if (d < best && sp > 0 && sp < 1 && tp > 0 && tp < 1) {
        best = d, copy3(c1, ca), copy3(c2, cb);
        *fa = FL_FEAT(FL_FEAT_EDGE, i), *fb = FL_FEAT(FL_FEAT_EDGE, j);
      }
    }
  }
  return best;
}


/* one point from the exact closest points of two disjoint polyhedra */
static void poly_exact(const fl_shape *a, const pose *A, const fl_shape *b, const double Rab[9],
                       const double tab[3], double margin, cbuf *B) {
  double xa[3] = {0, 0, 0}, xb[3] = {0, 0, 0}, dv[3], nl[3], n[3], pa[3];
  uint32_t fa = 0, fb = 0;
  double dist = poly_poly_distance(a, b, Rab, tab, xa, xb, &fa, &fb);
  if (dist > margin || !(dist > 0)) return;
  sub3(xb, xa, dv);
  for (int i = 0; i < 3; i++) nl[i] = dv[i] / dist;
  mulv(A->R, nl, n);
  to_world(A, xa, pa);
  add_a(B, pa, n, dist, fa, fb);
}


static void poly_poly(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                      double margin, cbuf *B) {
  // b in a's frame: x_a = Rab x_b + tab
  double Rab[9], tab[3], d[3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      Rab[3 * i + j] = A->R[i] * Bp->R[j] + A->R[3 + i] * Bp->R[3 + j] + A->R[6 + i] * Bp->R[6 + j];
  sub3(Bp->p, A->p, d);
  mulvt(A->R, d, tab);
  // a in b's frame: x_b = Rab^T x_a + tba
  double tba[3];
  mulvt(Rab, tab, tba);
  tba[0] = -tba[0], tba[1] = -tba[1], tba[2] = -tba[2];
  double tol = FACE_PREF * (a->radius + b->radius);

  // faces of a: separation = min over b's vertices of n . x - d
  fl_int fa = -1, fb = -1;
  double sa = -INFINITY, sb = -INFINITY;
  for (fl_int f = 0; f < a->nface; f++) {
    const double *nf = a->face_normal + 3 * f;
    double nb[3], m = INFINITY;
    mulvt(Rab, nf, nb);
    for (fl_int v = 0; v < b->nvert; v++) {
      double t = dot3(nb, b->vert + 3 * v);
      if (t < m) m = t;
    }
    double s = m + dot3(nf, tab) - a->face_offset[f];
    if (s > sa) sa = s, fa = f;
    if (s > margin) return;
  }
  for (fl_int f = 0; f < b->nface; f++) {
    const double *nf = b->face_normal + 3 * f;
    double na[3], m = INFINITY;
    mulv(Rab, nf, na);
    for (fl_int v = 0; v < a->nvert; v++) {
      double t = dot3(na, a->vert + 3 * v);
      if (t < m) m = t;
    }
    double s = m + dot3(nf, tba) - b->face_offset[f];
    if (s > sb) sb = s, fb = f;
    if (s > margin) return;
  }
  // edge pairs that build a face of the minkowski difference, in a's frame
  double ca[3] = {0, 0, 0};
  for (fl_int v = 0; v < a->nvert; v++) axpy3(1.0 / (double)a->nvert, a->vert + 3 * v, ca, ca);
  fl_int ea = -1, eb = -1;
  double se = -INFINITY, nbest[3] = {0, 0, 0};
  // the gauss-map arcs of a's edges (b x a of the two face normals) once per call
  static _Thread_local double arc_a[3 * GAUSS_CACHE];
  int cached = a->nedge <= GAUSS_CACHE;
  for (fl_int i = 0; cached && i < a->nedge; i++)
    cross3(a->face_normal + 3 * a->edge_face[2 * i + 1], a->face_normal + 3 * a->edge_face[2 * i],
           arc_a + 3 * i);
  for (fl_int j = 0; j < b->nedge; j++) {
    double p2[3], q2[3], e2[3], c[3], dd[3];
    mulv(Rab, b->vert + 3 * b->edge[2 * j], p2);
    axpy3(1, tab, p2, p2);
    mulv(Rab, b->vert + 3 * b->edge[2 * j + 1], q2);
    axpy3(1, tab, q2, q2);
    sub3(q2, p2, e2);
    mulv(Rab, b->face_normal + 3 * b->edge_face[2 * j], c);
    mulv(Rab, b->face_normal + 3 * b->edge_face[2 * j + 1], dd);
    double cn[3] = {-c[0], -c[1], -c[2]}, dn[3] = {-dd[0], -dd[1], -dd[2]}, dxc[3];
    cross3(dn, cn, dxc);
    for (fl_int i = 0; i < a->nedge; i++) {
      const double *an = a->face_normal + 3 * a->edge_face[2 * i];
      const double *bn = a->face_normal + 3 * a->edge_face[2 * i + 1];
      if (cached) {
        // minkowski_face with both arcs precomputed, cheapest test first
        const double *bxa = arc_a + 3 * i;
        double cba = dot3(cn, bxa), dba = dot3(dn, bxa);
        if (!(cba * dba < 0)) continue;
        double adc = dot3(an, dxc), bdc = dot3(bn, dxc);
        if (!(adc * bdc < 0 && cba * bdc > 0)) continue;
      } else if (!minkowski_face(an, bn, cn, dn)) {
        continue;
      }
      const double *p1 = a->vert + 3 * a->edge[2 * i], *q1 = a->vert + 3 * a->edge[2 * i + 1];
      double e1[3], nn[3], w[3];
      sub3(q1, p1, e1);
      cross3(e1, e2, nn);
      double l = norm3(nn);
      if (l <= 1e-6 * norm3(e1) * norm3(e2)) continue; // parallel edges: faces cover them
      for (int k = 0; k < 3; k++) nn[k] /= l;
      sub3(p1, ca, w);
      if (dot3(nn, w) < 0) nn[0] = -nn[0], nn[1] = -nn[1], nn[2] = -nn[2];
      sub3(p2, p1, w);
      double s = dot3(nn, w);
      if (s > se) se = s, ea = i, eb = j, copy3(nn, nbest);
      if (s > margin) return;
    }
  }

  int separated = fmax(se, fmax(sa, sb)) > SEP_EXACT * (a->radius + b->radius);
  if (ea >= 0 && se > fmax(sa, sb) + tol && separated) {
    // separated with an edge axis: the axis bounds the distance from below only, so take
    // the exact closest points (the face case below is exact by construction)
    poly_exact(a, A, b, Rab, tab, margin, B);
    return;
  }
  if (ea >= 0 && se > fmax(sa, sb) + tol) {
    // edge contact: one point midway between the closest points of the two edges
    const double *p1 = a->vert + 3 * a->edge[2 * ea], *q1 = a->vert + 3 * a->edge[2 * ea + 1];
    double p2[3], q2[3], e1[3], e2[3], c1[3], c2[3], s, t, w[3], n[3], pa[3];
    mulv(Rab, b->vert + 3 * b->edge[2 * eb], p2);
    axpy3(1, tab, p2, p2);
    mulv(Rab, b->vert + 3 * b->edge[2 * eb + 1], q2);
    axpy3(1, tab, q2, q2);
    sub3(q1, p1, e1);
    sub3(q2, p2, e2);
    seg_closest(p1, e1, p2, e2, &s, &t, c1, c2);
    sub3(c2, c1, w);
    double phi = dot3(nbest, w);
    if (phi > margin) return;
    mulv(A->R, nbest, n);
    to_world(A, c1, pa);
    add_a(B, pa, n, phi, FL_FEAT(FL_FEAT_EDGE, ea), FL_FEAT(FL_FEAT_EDGE, eb));
    return;
  }
  int n0 = B->n;
  if (sb > sa + tol) {
    double Rba[9];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Rba[3 * i + j] = Rab[3 * j + i];
    face_contact(b, Bp, a, Rba, tba, fb, 1, !separated, margin, B);
  } else {
    face_contact(a, A, b, Rab, tab, fa, 0, !separated, margin, B);
  }
  // separated, and the incident face misses the reference face: the exact closest points
  if (B->n == n0 && separated) poly_exact(a, A, b, Rab, tab, margin, B);
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


/* a and b in rank order */
static void collide_ordered(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                            double margin, cbuf *B) {
  int ra = rank_of(a->type);
  fl_shape_type tb = b->type;
  if (ra == 0) {
    if (tb == FL_SHAPE_SPHERE) plane_sphere(A, b, Bp, margin, B);
    else if (tb == FL_SHAPE_CAPSULE) plane_capsule(A, b, Bp, margin, B);
    else if (tb == FL_SHAPE_CYLINDER) plane_cylinder(A, b, Bp, margin, B);
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
  } else {
    poly_poly(a, A, b, Bp, margin, B);
  }
}


static int check_shape(const fl_shape *s, const char *name) {
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
  FL_TRY(check_shape(a, "a"));
  FL_TRY(check_shape(b, "b"));
  FL_TRY(check_pose(pa, qa, "a"));
  FL_TRY(check_pose(pb, qb, "b"));
  if (a->type == FL_SHAPE_PLANE && b->type == FL_SHAPE_PLANE)
    return fl_seterr(FL_ERR_UNSUPPORTED, "fl_collide: no contact algorithm for plane-plane");
  pose A, Bp;
  make_pose(pa, qa, &A);
  make_pose(pb, qb, &Bp);
  static _Thread_local cbuf B;
  B.n = 0;
  int flip = rank_of(a->type) > rank_of(b->type);
  if (flip)
    collide_ordered(b, &Bp, a, &A, margin, &B);
  else
    collide_ordered(a, &A, b, &Bp, margin, &B);
  reduce(&B, FL_MANIFOLD_MAX);
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

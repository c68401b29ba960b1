// SPDX-License-Identifier: Apache-2.0
/* collide_poly.c: polyhedron against polyhedron (collide.c describes the narrow phase):
 * separating axes with the Gauss-map test, clipping for face contacts, closest points of edges.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "collide_impl.h"

/*---- polyhedron against polyhedron ----*/

/* the Gauss-map test's dots shared by equal or opposite arcs (1); tests set 0 to compare */
int fl__cl_arc_share = 1;
/* the box closed forms and bounds and the edge-pair loop's placements once per call below (1);
 * tests set 0 to compare with the general loops */
int fl__cl_box_fast = 1;


static int is_box(const fl_shape *s) {
  return fl__cl_box_fast && s->type == FL_SHAPE_BOX && s->nvert == 8;
}


/* min over a box's vertices (+-h0, +-h1, +-h2) of n . v, the value the loop over the vertices
 * finds, to the bit: each product is +-|n_k| h_k exactly, rounding is symmetric and monotone in
 * each addend, so the vertex with every term negative gives the least rounded sum */
static inline double box_min_dot(const double n[3], const double h[3]) {
  return -((fabs(n[0]) * h[0] + fabs(n[1]) * h[1]) + fabs(n[2]) * h[2]);
}


/* boxes a and b (b placed in a's frame by Rab, tab): an upper bound on the separation the
 * edge-pair loop of fl__cl_poly_poly can find. A pair the Gauss-map test passes has its axis
 * n along a_k x b_l and both edges supporting along it, so its separation is at most
 * |n . tab| - h_a(n) - h_b(n) for that unit axis (boxes are symmetric about their origins).
 * Axes with sin(a_k, b_l) <= 1e-7 are left out: the loop drops its pairs below 1e-6. The
 * slack covers the rounding of both, which grows like eps / sin. */
static double box_edge_bound(const fl_shape *a, const fl_shape *b, const double Rab[9],
                             const double tab[3]) {
  // with R = Rab (b's axes as columns in a's frame) and n = a_k x b_l: n . tab, h_a(n) and
  // h_b(n) take two entries of R each (b_l x b_m = +-b_third), |n| = |(R_k1l, R_k2l)|
  const double *ha = a->size, *hb = b->size;
  double Q[9];
  for (int i = 0; i < 9; i++) Q[i] = fabs(Rab[i]);
  double best = -INFINITY;
  for (int k = 0; k < 3; k++) {
    int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    for (int l = 0; l < 3; l++) {
      int l1 = (l + 1) % 3, l2 = (l + 2) % 3;
      double r1 = Rab[3 * k1 + l], r2 = Rab[3 * k2 + l];
      double nl = sqrt(r1 * r1 + r2 * r2);
      if (nl <= 1e-7) continue;
      double td = fabs(tab[k2] * r1 - tab[k1] * r2);
      double hA = ha[k1] * Q[3 * k2 + l] + ha[k2] * Q[3 * k1 + l];
      double hB = hb[l1] * Q[3 * k + l2] + hb[l2] * Q[3 * k + l1];
      double sep = (td - hA - hB) / nl;
      if (sep > best) best = sep;
    }
  }
  return best + 1e-7 * (a->radius + b->radius + norm3(tab));
}


/* the index of the lowest set bit of m != 0 */
static inline int low_bit(uint32_t m) {
#if defined(__GNUC__)
  return __builtin_ctz(m);
#else
  int k = 0;
  for (; !(m & 1u); m >>= 1) k++;
  return k;
#endif
}


/* the larger and smaller of two bounds, inline (libm's fmax and fmin are calls; NaN and the
 * sign of zero do not matter for a bound). bmax(x, y) is also glibc's fmax on x86-64 (maxsd:
 * y when equal) for the separations below, which are never NaN */
static inline double bmax(double x, double y) { return x > y ? x : y; }
static inline double bmin(double x, double y) { return x < y ? x : y; }


/* the distance from x to a box of half extents h about its origin */
static inline double box_distance(const double x[3], const double h[3]) {
  double e0 = bmax(fabs(x[0]) - h[0], 0), e1 = bmax(fabs(x[1]) - h[1], 0),
         e2 = bmax(fabs(x[2]) - h[2], 0);
  return sqrt(e0 * e0 + e1 * e1 + e2 * e2);
}


/* a lower bound on the distance from x to a box of half extents h about its origin */
static inline double box_lower(const double x[3], const double h[3]) {
  return bmax(bmax(fabs(x[0]) - h[0], fabs(x[1]) - h[1]), fabs(x[2]) - h[2]);
}

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
 * (ref_is_b), features ordered (a, b). habs (may be NULL) gets the least |h| over the clipped
 * polygon, margin or not (INFINITY when it is empty): each clipped point lies on the incident
 * face and its foot on the reference face, |h| apart. */
static void face_contact(const fl_shape *ref, const pose *Pref, const fl_shape *inc,
                         const double R[9], const double t[3], fl_int f, int ref_is_b,
                         int fallback, double margin, double *habs, cbuf *B) {
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
      fl__cl_add_b(B, pr, n, hd, fi, fr);
    else
      fl__cl_add_a(B, pr, n, hd, fr, fi);
    return;
  }
  double hmin = INFINITY;
  for (int i = 0; i < nin; i++) {
    double h = dot3(nf, in[i].x) - df;
    if (habs) hmin = bmin(hmin, fabs(h));
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
      fl__cl_add_b(B, pr, n, h, fi, fr);
    else
      fl__cl_add_a(B, pr, n, h, fr, fi);
  }
  if (habs) *habs = hmin;
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
  // boxes have a tighter bound: the largest excess of a coordinate over the half extent
  int a_box = is_box(a), b_box = is_box(b);
  // and a vertex's distance to a box in closed form: the least of those bounds the answer
  // from above from the start (up to round-off, which the slack covers), so the tests below
  // skip against bmin(best, cut): still only candidates that cannot win
  // (the placed vertices are kept for the loops below: the same values)
  double cut = INFINITY, xa_b[24], xb_a[24];
  int keep_b = a_box && b->nvert <= 8, keep_a = b_box && a->nvert <= 8;
  for (fl_int v = 0; a_box && v < b->nvert; v++) {
    double x[3];
    mulv(Rab, b->vert + 3 * v, x);
    axpy3(1, tab, x, x);
    if (keep_b) copy3(x, xa_b + 3 * v);
    cut = bmin(cut, box_distance(x, a->size));
  }
  for (fl_int v = 0; b_box && v < a->nvert; v++) {
    double x[3], xb[3];
    sub3(a->vert + 3 * v, tab, x);
    mulvt(Rab, x, xb);
    if (keep_a) copy3(xb, xb_a + 3 * v);
    cut = bmin(cut, box_distance(xb, b->size));
  }
  // vertices of b against a
  for (fl_int v = 0; v < b->nvert; v++) {
    double x[3], q[3], nn[3];
    uint32_t f = 0;
    if (keep_b) {
      copy3(xa_b + 3 * v, x);
    } else {
      mulv(Rab, b->vert + 3 * v, x);
      axpy3(1, tab, x, x);
    }
    if (a_box && box_lower(x, a->size) > bmin(best, cut) + slack) continue;
    if (norm3(x) - a->radius > bmin(best, cut) + slack) continue;
    double d = fl__cl_poly_closest(a, x, q, nn, &f);
    if (d < best) best = d, copy3(q, ca), copy3(x, cb), *fa = f, *fb = FL_FEAT(FL_FEAT_VERTEX, v);
  }
  // vertices of a against b (in b's frame, then back)
  for (fl_int v = 0; v < a->nvert; v++) {
    double x[3], xb[3], q[3], nn[3];
    uint32_t f = 0;
    if (keep_a) {
      copy3(xb_a + 3 * v, xb);
    } else {
      sub3(a->vert + 3 * v, tab, x);
      mulvt(Rab, x, xb);
    }
    if (b_box && box_lower(xb, b->size) > bmin(best, cut) + slack) continue;
    if (norm3(xb) - b->radius > bmin(best, cut) + slack) continue;
    double d = fl__cl_poly_closest(b, xb, q, nn, &f);
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
    if (a_box) {
      // b's edge against the box a: per coordinate, the least |x_k| on the segment less h_k
      double lb = -INFINITY;
      for (int k = 0; k < 3; k++) {
        double lo = (p2[k] > 0) == (q2[k] > 0) && p2[k] != 0 && q2[k] != 0
                        ? bmin(fabs(p2[k]), fabs(q2[k])) : 0;
        lb = bmax(lb, lo - a->size[k]);
      }
      if (lb > bmin(best, cut) + slack) continue;
    }
    double m2[3], h2 = 0.5 * norm3(e2);
    axpy3(0.5, e2, p2, m2);
    for (fl_int i = 0; i < a->nedge; i++) {
      const double *p1 = a->vert + 3 * a->edge[2 * i], *q1 = a->vert + 3 * a->edge[2 * i + 1];
      double e1[3], c1[3], c2[3], r[3], sp, tp, m1[3];
      sub3(q1, p1, e1);
      axpy3(0.5, e1, p1, m1);
      sub3(m2, m1, r);
      if (norm3(r) - 0.5 * norm3(e1) - h2 > bmin(best, cut) + slack) continue;
      fl__cl_seg_closest(p1, e1, p2, e2, &sp, &tp, c1, c2);
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
  fl__cl_add_a(B, pa, n, dist, fa, fb);
}


/* min over s's vertices of n . x (n in s's frame): the box's closed form, or the vertex loop */
static inline double min_support(const fl_shape *s, const double n[3], int box) {
  if (box) return box_min_dot(n, s->size);
  double m = INFINITY;
  for (fl_int v = 0; v < s->nvert; v++) {
    double t = dot3(n, s->vert + 3 * v);
    if (t < m) m = t;
  }
  return m;
}


/* separation along face f of a (b placed in a's frame by Rab, tab): min over b's vertices
 * of n . x - d, as the face loop below makes it */
static inline double face_sep(const fl_shape *a, const fl_shape *b, const double Rab[9],
                              const double tab[3], fl_int f, int b_box) {
  const double *nf = a->face_normal + 3 * f;
  double nb[3];
  mulvt(Rab, nf, nb);
  return min_support(b, nb, b_box) + dot3(nf, tab) - a->face_offset[f];
}


/* the same for face f of b (a placed in b's frame by Rab^T, tba) */
static inline double face_sep_b(const fl_shape *a, const fl_shape *b, const double Rab[9],
                                const double tba[3], fl_int f, int a_box) {
  const double *nf = b->face_normal + 3 * f;
  double na[3];
  mulv(Rab, nf, na);
  return min_support(a, na, a_box) + dot3(nf, tba) - b->face_offset[f];
}


/* face_sep for two boxes: a's normal -+e_k makes R^T n -+(row k of R) and n . tab -+tab_k,
 * both exactly (the zero products add signed zeros only, which |.| and a nonzero sum do not
 * see), so the same value */
static inline double box_face_sep(const fl_shape *a, const fl_shape *b, const double Rab[9],
                                  const double tab[3], fl_int f) {
  int k = (int)(f / 2);
  double t = (f % 2) ? tab[k] : -tab[k];
  return box_min_dot(Rab + 3 * k, b->size) + t - a->face_offset[f];
}


/* face_sep_b for two boxes: R n is -+(column l of R), n . tba is -+tba_l */
static inline double box_face_sep_b(const fl_shape *a, const fl_shape *b, const double Rab[9],
                                    const double tba[3], fl_int f) {
  int l = (int)(f / 2);
  double col[3] = {Rab[l], Rab[3 + l], Rab[6 + l]}, t = (f % 2) ? tba[l] : -tba[l];
  return box_min_dot(col, a->size) + t - b->face_offset[f];
}


/* Separating axes remembered across calls, per pair of shapes (their addresses): the axis of
 * the last call that a pair left separated beyond its margin (a face of a, of b, or an edge
 * pair). It is tested first, with the same operations as the full search; when it still
 * separates beyond the margin, the full search would have left at some axis too, with no
 * contacts, so the pair is done. A stale or foreign hint (addresses reused) only costs its
 * test. 0 switches the hints off (tests compare). */
int fl__cl_sep_hints = 1;
#define SEP_HINTS 1024
typedef struct sep_hint {
  const fl_shape *a, *b;
  int kind; /* 0 none, 1 face of a, 2 face of b, 3 edge pair */
  fl_int i, j;
} sep_hint;
static _Thread_local sep_hint hints[SEP_HINTS];


static sep_hint *hint_of(const fl_shape *a, const fl_shape *b) {
  uint64_t h = (uint64_t)(uintptr_t)a * 0x9E3779B97F4A7C15ULL ^
               (uint64_t)(uintptr_t)b * 0xC2B2AE3D27D4EB4FULL;
  return hints + ((h >> 40) & (SEP_HINTS - 1));
}


static void hint_set(sep_hint *H, const fl_shape *a, const fl_shape *b, int kind, fl_int i,
                     fl_int j) {
  if (!H) return;
  H->a = a, H->b = b, H->kind = kind, H->i = i, H->j = j;
}


/* the edge-pair loop's test and separation for edges i of a and j of b, with its operations
 * (per-pair dots, a's vertex centroid): 1 when the pair builds a face of the Minkowski
 * difference and its separation *s is made, else 0 */
static int edge_pair_sep(const fl_shape *a, const fl_shape *b, const double Rab[9],
                         const double tab[3], fl_int i, fl_int j, double *s) {
  double p2[3], q2[3], e2[3], c[3], dd[3], cn[3], dn[3], dxc[3], bxa[3];
  mulv(Rab, b->vert + 3 * b->edge[2 * j], p2);
  axpy3(1, tab, p2, p2);
  mulv(Rab, b->vert + 3 * b->edge[2 * j + 1], q2);
  axpy3(1, tab, q2, q2);
  sub3(q2, p2, e2);
  mulv(Rab, b->face_normal + 3 * b->edge_face[2 * j], c);
  mulv(Rab, b->face_normal + 3 * b->edge_face[2 * j + 1], dd);
  for (int k = 0; k < 3; k++) cn[k] = -c[k], dn[k] = -dd[k];
  cross3(dn, cn, dxc);
  const double *an = a->face_normal + 3 * a->edge_face[2 * i];
  const double *bn = a->face_normal + 3 * a->edge_face[2 * i + 1];
  cross3(bn, an, bxa);
  double cba = dot3(cn, bxa), dba = dot3(dn, bxa);
  if (!(cba * dba < 0)) return 0;
  double adc = dot3(an, dxc), bdc = dot3(bn, dxc);
  if (!(adc * bdc < 0 && cba * bdc > 0)) return 0;
  const double *p1 = a->vert + 3 * a->edge[2 * i], *q1 = a->vert + 3 * a->edge[2 * i + 1];
  double e1[3], nn[3], w[3], ca[3] = {0, 0, 0};
  sub3(q1, p1, e1);
  cross3(e1, e2, nn);
  double l = norm3(nn);
  if (l <= 1e-6 * norm3(e1) * norm3(e2)) return 0;
  for (int k = 0; k < 3; k++) nn[k] /= l;
  for (fl_int v = 0; v < a->nvert; v++) axpy3(1.0 / (double)a->nvert, a->vert + 3 * v, ca, ca);
  sub3(p1, ca, w);
  if (dot3(nn, w) < 0) nn[0] = -nn[0], nn[1] = -nn[1], nn[2] = -nn[2];
  sub3(p2, p1, w);
  *s = dot3(nn, w);
  return 1;
}


/* the cosine of the largest angle between the reference and the incident face, and between
 * the reference face and a winning edge axis, for which the nearly flat case below takes the
 * face's clipped manifold */
double fl__cl_flat_cos = FLAT_COS;


/* An edge axis won the search by more than the tie tolerance. Where the best face (the one the
 * face branch of fl__cl_poly_poly would take as reference) and its incident face are nearly
 * parallel and the edge axis nearly along the face normal too, the two shapes meet face on
 * face (a box landing almost flat on another): the edge pair's one point would let the box
 * pivot into the other, so the clipped face manifold goes into B instead, points within the
 * margin only. Its points lie on both surfaces by construction (on the reference face and on
 * the incident face, in the reference face's prism), and their gaps along the face normal are
 * at most the true distances, so a separated pair is never given too large a gap. Returns 1
 * when it added points, 0 (B unchanged) when the caller keeps the edge point. */
static int flat_faces(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                      const double Rab[9], const double tab[3], const double tba[3], double sa,
                      double sb, fl_int fa, fl_int fb, double tol, const double nbest[3],
                      double margin, cbuf *B) {
  int ref_b = sb > sa + tol;
  const fl_shape *ref = ref_b ? b : a, *inc = ref_b ? a : b;
  fl_int f = ref_b ? fb : fa;
  if (f < 0) return 0;
  const double *nf = ref->face_normal + 3 * f;
  // the edge axis, a to b in a's frame, against the reference normal, outward from ref
  double nr[3];
  if (ref_b) {
    mulv(Rab, nf, nr);
    for (int k = 0; k < 3; k++) nr[k] = -nr[k];
  } else {
    copy3(nf, nr);
  }
  double c = fl__cl_flat_cos;
  if (!(dot3(nr, nbest) >= c)) return 0;
  // the incident face is the most anti-parallel one (as face_contact takes it)
  double nfi[3]; // nf in inc's frame
  if (ref_b)
    mulv(Rab, nf, nfi);
  else
    mulvt(Rab, nf, nfi);
  double gmin = INFINITY;
  for (fl_int k = 0; k < inc->nface; k++) gmin = bmin(gmin, dot3(inc->face_normal + 3 * k, nfi));
  if (!(-gmin >= c)) return 0;
  int n0 = B->n;
  if (ref_b) {
    double Rba[9];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Rba[3 * i + j] = Rab[3 * j + i];
    face_contact(b, Bp, a, Rba, tba, fb, 1, 0, margin, NULL, B);
  } else {
    face_contact(a, A, b, Rab, tab, fa, 0, 0, margin, NULL, B);
  }
  return B->n > n0;
}


/* Temporal coherence (hc, the pair's entry kept by the world). At a reference pose where the
 * whole search ran and a face won, the entry keeps b's placement (Rab, tab), the best faces of
 * a and of b with their leads over the runners-up, and dbar, an upper bound on the signed
 * distance D = max over unit axes u of the gap g(u) = min_B u.x - max_A u.y there. g(u) moves
 * by at most delta = |tab - tab0| + ||Rab - Rab0||_F r_b for every u (b's vertices move that
 * much), so at the new pose:
 *  - a face whose lead was above 2 delta (plus round-off) is still the best of its shape, by a
 *    strict margin: the face loops' choice and values are those of its one evaluation;
 *  - every edge pair the loop evaluates has s = g(u) for its axis u (its edges support the
 *    shapes along u), so s <= D <= dbar + delta. When that is at most the margin, below the
 *    best face's separation plus the face preference, and below the `separated` threshold (or
 *    the faces are above it), no edge pair can return early, win, or change `separated`: the
 *    loop is skipped with the contacts it would have given.
 * dbar: D is at most the distance |h| between any clipped point and its foot on the reference
 * face when the shapes are apart, and <= 0 <= |h| when they overlap; tighter, when the faces
 * and edges overlap (their maximum U < 0), D = U exactly (the maximum of g is taken at a face
 * of the Minkowski difference, every one of which the search evaluates unless two edges were
 * left out as nearly parallel, when only the |h| bound is used). Each
 * bound carries COH_SLACK (relative to the shapes' radii and |tab|) for round-off, including
 * the Gauss-map test's near-degenerate crossings (within eps / 1e-6 of a face normal). */
#define COH_SLACK 1e-8


/* tests: 1 runs the whole search also where the reference lets it go, and counts the calls
 * checked and those whose whole search contradicts the reference (other best faces, a face or
 * edge pair above the margin, an edge pair above the bound) */
int fl__cl_coherence_check = 0;
unsigned long fl__cl_coherence_checked = 0, fl__cl_coherence_wrong = 0;


/* a failed try: the pair waits longer before the next */
static void try_failed(fl__hull_pair *hc) {
  hc->fails = hc->fails < 4 ? hc->fails + 1 : 4;
  hc->wait = (1 << hc->fails) - 1;
}


/* the edge-pair loop's axis for edge i of a and b's edge p2 + t e2 (a's frame, ca a's vertex
 * centroid): 0 for nearly parallel edges (left to the faces), else 1 with the unit axis nn
 * outward from a and the separation *s along it */
static inline int edge_axis(const fl_shape *a, fl_int i, const double ca[3], const double p2[3],
                            const double e2[3], double nn[3], double *s) {
  const double *p1 = a->vert + 3 * a->edge[2 * i], *q1 = a->vert + 3 * a->edge[2 * i + 1];
  double e1[3], w[3];
  sub3(q1, p1, e1);
  cross3(e1, e2, nn);
  double l = norm3(nn);
  if (l <= 1e-6 * norm3(e1) * norm3(e2)) return 0;
  for (int k = 0; k < 3; k++) nn[k] /= l;
  sub3(p1, ca, w);
  if (dot3(nn, w) < 0) nn[0] = -nn[0], nn[1] = -nn[1], nn[2] = -nn[2];
  sub3(p2, p1, w);
  *s = dot3(nn, w);
  return 1;
}


/* what the whole search found, for a coherence reference (poly_poly_coherent) */
typedef struct search_rep {
  int done;            /* 1: the search reached its choice (no early return) */
  fl_int fa, fb, ea;   /* best faces of a and b; best edge of a (-1: none) */
  double sa, sb, s2a, s2b, se; /* their separations and the faces' runners-up (m) */
  int parallel;        /* an edge pair passed the Gauss-map test and was left out as parallel */
  int edges_all;       /* the edge-pair loop ran over every pair */
  int edge_won;        /* an edge axis won by more than the face preference */
  double habs;         /* least |h| over the clipped polygon (INFINITY: none) */
} search_rep;


/* b's pose in a's frame, x_a = Rab x_b + tab (Rab 3x3 row-major, tab in m), and a's in b's,
 * x_b = Rab^T x_a + tba; *tol = the face preference (m) and whether each shape is a box, as the
 * search and the coherence test both use them (outputs are the caller's). */
static void rel_pose(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                     double Rab[9], double tab[3], double tba[3], double *tol, int *a_box,
                     int *b_box) {
  double d[3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      Rab[3 * i + j] = A->R[i] * Bp->R[j] + A->R[3 + i] * Bp->R[3 + j] + A->R[6 + i] * Bp->R[6 + j];
  sub3(Bp->p, A->p, d);
  mulvt(A->R, d, tab);
  mulvt(Rab, tab, tba);
  tba[0] = -tba[0], tba[1] = -tba[1], tba[2] = -tba[2];
  *tol = FACE_PREF * (a->radius + b->radius);
  *a_box = is_box(a), *b_box = is_box(b);
}


/* The whole separating-axis search and the contacts it gives; rep (may be NULL) gets what a
 * coherence reference needs. */
static void poly_poly_search(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                             double margin, search_rep *rep, cbuf *B) {
  // b in a's frame (x_a = Rab x_b + tab) and a in b's (x_b = Rab^T x_a + tba)
  double Rab[9], tab[3], tba[3], tol;
  int a_box, b_box;
  rel_pose(a, A, b, Bp, Rab, tab, tba, &tol, &a_box, &b_box);

  // the axis that separated this pair last time, first
  sep_hint *H = fl__cl_sep_hints && fl__cl_box_fast ? hint_of(a, b) : NULL;
  if (H && H->a == a && H->b == b && H->kind) {
    double s = -INFINITY;
    if (H->kind == 1 && H->i < a->nface)
      s = a_box && b_box ? box_face_sep(a, b, Rab, tab, H->i)
                         : face_sep(a, b, Rab, tab, H->i, b_box);
    else if (H->kind == 2 && H->i < b->nface)
      s = a_box && b_box ? box_face_sep_b(a, b, Rab, tba, H->i)
                         : face_sep_b(a, b, Rab, tba, H->i, a_box);
    else if (H->kind == 3 && H->i < a->nedge && H->j < b->nedge &&
             !edge_pair_sep(a, b, Rab, tab, H->i, H->j, &s))
      s = -INFINITY;
    if (s > margin) return;
  }

  // faces of a: separation = min over b's vertices of n . x - d
  fl_int fa = -1, fb = -1;
  double sa = -INFINITY, sb = -INFINITY;
  if (rep) {
    // the same loops with the runners-up (never two boxes here)
    double s2a = -INFINITY, s2b = -INFINITY;
    for (fl_int f = 0; f < a->nface; f++) {
      double s = face_sep(a, b, Rab, tab, f, b_box);
      if (s > sa) s2a = sa, sa = s, fa = f;
      else if (s > s2a) s2a = s;
      if (s > margin) {
        hint_set(H, a, b, 1, f, 0);
        return;
      }
    }
    for (fl_int f = 0; f < b->nface; f++) {
      double s = face_sep_b(a, b, Rab, tba, f, a_box);
      if (s > sb) s2b = sb, sb = s, fb = f;
      else if (s > s2b) s2b = s;
      if (s > margin) {
        hint_set(H, a, b, 2, f, 0);
        return;
      }
    }
    rep->s2a = s2a, rep->s2b = s2b;
  } else {
    for (fl_int f = 0; f < a->nface; f++) {
      double s = a_box && b_box ? box_face_sep(a, b, Rab, tab, f)
                                : face_sep(a, b, Rab, tab, f, b_box);
      if (s > sa) sa = s, fa = f;
      if (s > margin) {
        hint_set(H, a, b, 1, f, 0);
        return;
      }
    }
    for (fl_int f = 0; f < b->nface; f++) {
      double s = a_box && b_box ? box_face_sep_b(a, b, Rab, tba, f)
                                : face_sep_b(a, b, Rab, tba, f, a_box);
      if (s > sb) sb = s, fb = f;
      if (s > margin) {
        hint_set(H, a, b, 2, f, 0);
        return;
      }
    }
  }
  // two boxes whose edge axes cannot change the outcome (no pair can separate by more than the
  // margin, win over the faces, or decide `separated` below): the edge-pair loop is skipped,
  // with the same contacts as after it
  fl_int nedge_b = b->nedge;
  if (a_box && b_box) {
    double sf = bmax(sa, sb), ub = box_edge_bound(a, b, Rab, tab);
    double sep = SEP_EXACT * (a->radius + b->radius);
    if (ub <= margin && ub < sf + tol && (sf > sep || ub <= sep)) nedge_b = 0;
  }
  // edge pairs that build a face of the minkowski difference, in a's frame
  double ca[3] = {0, 0, 0};
  for (fl_int v = 0; nedge_b > 0 && v < a->nvert; v++)
    axpy3(1.0 / (double)a->nvert, a->vert + 3 * v, ca, ca);
  fl_int ea = -1, eb = -1;
  double se = -INFINITY, nbest[3] = {0, 0, 0};
  int parallel = 0; // an edge pair passed the Gauss-map test and was left out as parallel
  // the gauss-map arcs of a's edges (b x a of the two face normals) once per call
  static _Thread_local double arc_a[3 * GAUSS_CACHE];
  int cached = nedge_b > 0 && a->nedge <= GAUSS_CACHE;
  for (fl_int i = 0; cached && i < a->nedge; i++)
    cross3(a->face_normal + 3 * a->edge_face[2 * i + 1], a->face_normal + 3 * a->edge_face[2 * i],
           arc_a + 3 * i);
  // a's arcs that are equal or opposite (parallel edges of a box: 3 distinct arcs for 12
  // edges) share their dots with b's normals c and d, and a's few face normals their dots
  // with d x c: both are then made once per edge of b, not once per edge pair. Exact: the
  // same dots of the same vectors, and a dot with a negated vector is the negated dot (the
  // two may differ in the sign of a zero only, which no test below can see).
  fl_int uarc[ARC_UNIQUE_MAX];
  signed char uof[ARC_UNIQUE_MAX];
  double usg[ARC_UNIQUE_MAX];
  fl_int nu = 0;
  int shared = fl__cl_arc_share && cached && a->nedge <= ARC_UNIQUE_MAX &&
               a->nface <= ARC_UNIQUE_MAX;
  if (shared) {
    // a cheap look first: does the first arc repeat at all (a box's does 3 times)?
    int again = 0;
    for (fl_int i = 1; !again && i < a->nedge; i++) {
      const double *x = arc_a + 3 * i;
      again = (x[0] == arc_a[0] && x[1] == arc_a[1] && x[2] == arc_a[2]) ||
              (x[0] == -arc_a[0] && x[1] == -arc_a[1] && x[2] == -arc_a[2]);
    }
    shared = again;
  }
  for (fl_int i = 0; shared && i < a->nedge; i++) {
    const double *x = arc_a + 3 * i;
    fl_int u = 0;
    double sg = 1.0;
    for (; u < nu; u++) {
      const double *y = arc_a + 3 * uarc[u];
      if (x[0] == y[0] && x[1] == y[1] && x[2] == y[2]) break;
      if (x[0] == -y[0] && x[1] == -y[1] && x[2] == -y[2]) {
        sg = -1.0;
        break;
      }
    }
    if (u == nu) uarc[nu++] = i;
    uof[i] = (signed char)u;
    usg[i] = sg;
    if (nu > a->nedge / 2) shared = 0; // few repeats: the per-pair dots are as cheap
  }
  // a box's arcs are +-e_m exactly (cross products of its +-e_k normals), and its normals are
  // too: a dot with one is +-one coordinate, the same value (a zero's sign aside, which only
  // meets the strict sign tests below)
  int uax[ARC_UNIQUE_MAX];
  double usgn[ARC_UNIQUE_MAX];
  int axis_dots = shared && a_box;
  for (fl_int u = 0; axis_dots && u < nu; u++) {
    const double *x = arc_a + 3 * uarc[u];
    int m = fabs(x[0]) == 1 ? 0 : fabs(x[1]) == 1 ? 1 : 2, o1 = (m + 1) % 3, o2 = (m + 2) % 3;
    axis_dots = fabs(x[m]) == 1 && x[o1] == 0 && x[o2] == 0;
    uax[u] = m, usgn[u] = x[m];
  }
  // small shapes: b's vertices and negated normals placed in a's frame once per call (each
  // is shared by several edges), and without shared arcs the first Gauss-map dots of every
  // (face of b, edge of a) once: the same operations on the same vectors as per edge pair
  static _Thread_local double vb_pre[3 * PRE_MAX], nb_pre[3 * PRE_MAX],
      dot_pre[PRE_MAX * PRE_MAX];
  // and the signs of those dots as bit masks over a's edges: an edge pair can pass the first
  // test (cba dba < 0) only where the two dots have strict opposite signs, so the loop below
  // visits those edges of a only, in order, and makes the exact test on them
  static _Thread_local uint32_t pos_pre[PRE_MAX], neg_pre[PRE_MAX];
  int pre = fl__cl_box_fast && nedge_b > 0 && b->nvert <= PRE_MAX && b->nface <= PRE_MAX &&
            a->nedge <= PRE_MAX;
  int pre_dots = pre && cached && !shared;
  for (fl_int v = 0; pre && v < b->nvert; v++) {
    mulv(Rab, b->vert + 3 * v, vb_pre + 3 * v);
    axpy3(1, tab, vb_pre + 3 * v, vb_pre + 3 * v);
  }
  for (fl_int f = 0; pre && f < b->nface; f++) {
    double c[3];
    mulv(Rab, b->face_normal + 3 * f, c);
    for (int k = 0; k < 3; k++) nb_pre[3 * f + k] = -c[k];
    uint32_t mp = 0, mn = 0;
    for (fl_int i = 0; pre_dots && i < a->nedge; i++) {
      double x = dot3(nb_pre + 3 * f, arc_a + 3 * i);
      dot_pre[f * a->nedge + i] = x;
      mp |= (uint32_t)(x > 0) << i, mn |= (uint32_t)(x < 0) << i;
    }
    pos_pre[f] = mp, neg_pre[f] = mn;
  }
  for (fl_int j = 0; j < nedge_b; j++) {
    double p2[3], q2[3], e2[3], cn[3], dn[3], dxc[3];
    fl_int fc = b->edge_face[2 * j], fdd = b->edge_face[2 * j + 1];
    if (pre) {
      copy3(vb_pre + 3 * b->edge[2 * j], p2);
      copy3(vb_pre + 3 * b->edge[2 * j + 1], q2);
      copy3(nb_pre + 3 * fc, cn);
      copy3(nb_pre + 3 * fdd, dn);
    } else {
      double c[3], dd[3];
      mulv(Rab, b->vert + 3 * b->edge[2 * j], p2);
      axpy3(1, tab, p2, p2);
      mulv(Rab, b->vert + 3 * b->edge[2 * j + 1], q2);
      axpy3(1, tab, q2, q2);
      mulv(Rab, b->face_normal + 3 * fc, c);
      mulv(Rab, b->face_normal + 3 * fdd, dd);
      for (int k = 0; k < 3; k++) cn[k] = -c[k], dn[k] = -dd[k];
    }
    sub3(q2, p2, e2);
    cross3(dn, cn, dxc);
    double cu[ARC_UNIQUE_MAX], du[ARC_UNIQUE_MAX], fd[ARC_UNIQUE_MAX];
    // an arc's first test holds for its whole group: (s x)(s y) = x y for s = +-1, exactly
    unsigned char pass[ARC_UNIQUE_MAX];
    int npass = 0;
    for (fl_int u = 0; shared && u < nu; u++) {
      if (axis_dots) {
        cu[u] = usgn[u] * cn[uax[u]], du[u] = usgn[u] * dn[uax[u]];
      } else {
        const double *bxa = arc_a + 3 * uarc[u];
        cu[u] = dot3(cn, bxa), du[u] = dot3(dn, bxa);
      }
      pass[u] = cu[u] * du[u] < 0;
      npass += pass[u];
    }
    if (shared && npass == 0) continue;
    for (fl_int f = 0; axis_dots && f < a->nface; f++)
      fd[f] = (f % 2) ? dxc[f / 2] : -dxc[f / 2];
    for (fl_int f = 0; shared && !axis_dots && f < a->nface; f++)
      fd[f] = dot3(a->face_normal + 3 * f, dxc);
    // precomputed first dots: only a's edges whose two dots have opposite signs, in order,
    // with the same tests and the same axis as the loop after this one
    uint32_t edges_left =
        pre_dots ? (pos_pre[fc] & neg_pre[fdd]) | (neg_pre[fc] & pos_pre[fdd]) : 0;
    for (; edges_left; edges_left &= edges_left - 1) {
      fl_int i = low_bit(edges_left);
      double cba = dot_pre[fc * a->nedge + i], dba = dot_pre[fdd * a->nedge + i];
      if (!(cba * dba < 0)) continue;
      const double *an = a->face_normal + 3 * a->edge_face[2 * i];
      const double *bn = a->face_normal + 3 * a->edge_face[2 * i + 1];
      double adc = dot3(an, dxc), bdc = dot3(bn, dxc);
      if (!(adc * bdc < 0 && cba * bdc > 0)) continue;
      double nn[3], s;
      if (!edge_axis(a, i, ca, p2, e2, nn, &s)) {
        parallel = 1;
        continue;
      }
      if (s > se) se = s, ea = i, eb = j, copy3(nn, nbest);
      if (s > margin) {
        hint_set(H, a, b, 3, i, j);
        return;
      }
    }
    for (fl_int i = 0; !pre_dots && i < a->nedge; i++) {
      const double *an = a->face_normal + 3 * a->edge_face[2 * i];
      const double *bn = a->face_normal + 3 * a->edge_face[2 * i + 1];
      if (shared) {
        // the test below with the dots made once per edge of b
        if (!pass[uof[i]]) continue;
        double cba = usg[i] * cu[uof[i]];
        double adc = fd[a->edge_face[2 * i]], bdc = fd[a->edge_face[2 * i + 1]];
        if (!(adc * bdc < 0 && cba * bdc > 0)) continue;
      } else if (cached) {
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
      if (l <= 1e-6 * norm3(e1) * norm3(e2)) { // parallel edges: faces cover them
        parallel = 1;
        continue;
      }
      for (int k = 0; k < 3; k++) nn[k] /= l;
      sub3(p1, ca, w);
      if (dot3(nn, w) < 0) nn[0] = -nn[0], nn[1] = -nn[1], nn[2] = -nn[2];
      sub3(p2, p1, w);
      double s = dot3(nn, w);
      if (s > se) se = s, ea = i, eb = j, copy3(nn, nbest);
      if (s > margin) {
        hint_set(H, a, b, 3, i, j);
        return;
      }
    }
  }

  int separated = bmax(se, bmax(sa, sb)) > SEP_EXACT * (a->radius + b->radius);
  if (rep) {
    rep->done = 1;
    rep->fa = fa, rep->fb = fb, rep->ea = ea;
    rep->sa = sa, rep->sb = sb, rep->se = se;
    rep->parallel = parallel, rep->edges_all = nedge_b == b->nedge;
    rep->edge_won = ea >= 0 && se > bmax(sa, sb) + tol;
    rep->habs = INFINITY;
  }
  if (ea >= 0 && se > bmax(sa, sb) + tol &&
      flat_faces(a, A, b, Bp, Rab, tab, tba, sa, sb, fa, fb, tol, nbest, margin, B))
    return;
  if (ea >= 0 && se > bmax(sa, sb) + tol && separated) {
    // separated with an edge axis: the axis bounds the distance from below only, so take
    // the exact closest points (the face case below is exact by construction)
    poly_exact(a, A, b, Rab, tab, margin, B);
    return;
  }
  if (ea >= 0 && se > bmax(sa, sb) + tol) {
    // edge contact: one point midway between the closest points of the two edges
    const double *p1 = a->vert + 3 * a->edge[2 * ea], *q1 = a->vert + 3 * a->edge[2 * ea + 1];
    double p2[3], q2[3], e1[3], e2[3], c1[3], c2[3], s, t, w[3], n[3], pa[3];
    mulv(Rab, b->vert + 3 * b->edge[2 * eb], p2);
    axpy3(1, tab, p2, p2);
    mulv(Rab, b->vert + 3 * b->edge[2 * eb + 1], q2);
    axpy3(1, tab, q2, q2);
    sub3(q1, p1, e1);
    sub3(q2, p2, e2);
    fl__cl_seg_closest(p1, e1, p2, e2, &s, &t, c1, c2);
    sub3(c2, c1, w);
    double phi = dot3(nbest, w);
    if (phi > margin) return;
    mulv(A->R, nbest, n);
    to_world(A, c1, pa);
    fl__cl_add_a(B, pa, n, phi, FL_FEAT(FL_FEAT_EDGE, ea), FL_FEAT(FL_FEAT_EDGE, eb));
    return;
  }
  int n0 = B->n;
  if (sb > sa + tol) {
    double Rba[9];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Rba[3 * i + j] = Rab[3 * j + i];
    face_contact(b, Bp, a, Rba, tba, fb, 1, !separated, margin, rep ? &rep->habs : NULL, B);
  } else {
    face_contact(a, A, b, Rab, tab, fa, 0, !separated, margin, rep ? &rep->habs : NULL, B);
  }
  // separated, and the incident face misses the reference face: the exact closest points
  if (B->n == n0 && separated) poly_exact(a, A, b, Rab, tab, margin, B);
}


/* The search with the pair's coherence entry hc (see the comment on COH_SLACK): the reference
 * is tried, and where it proves the edge pairs and the other faces cannot change the outcome,
 * the contacts are made from the best faces alone; else the whole search runs and makes a new
 * reference. The same contacts as poly_poly_search's, to the bit. */
static void poly_poly_coherent(const fl_shape *a, const pose *A, const fl_shape *b,
                               const pose *Bp, double margin, fl__hull_pair *hc, cbuf *B) {
  // a pair whose reference failed lately ignores its entry for a few calls (2^k - 1 after k
  // failures in a row, at most 15), then makes a new reference before it tries again: moving
  // pairs pay little for the bookkeeping (this only decides when to try, never the outcome)
  int fresh_only = 0;
  if (hc->wait > 0) {
    if (--hc->wait > 0) {
      poly_poly_search(a, A, b, Bp, margin, NULL, B);
      return;
    }
    fresh_only = 1;
  }
  // b in a's frame, as the search makes it
  double Rab[9], tab[3], tba[3], tol;
  int a_box, b_box;
  rel_pose(a, A, b, Bp, Rab, tab, tba, &tol, &a_box, &b_box);
  double slack = COH_SLACK * (a->radius + b->radius + norm3(tab));
  int tried = !fresh_only && hc->valid && hc->fa < a->nface && hc->fb < b->nface;
  int coherent = 0, sep_unsure = 0, claim = 0;
  double claim_ub = 0;
  if (tried) {
    double dr = 0, dt = 0;
    for (int k = 0; k < 9; k++) dr += (Rab[k] - hc->Rab[k]) * (Rab[k] - hc->Rab[k]);
    for (int k = 0; k < 3; k++) dt += (tab[k] - hc->tab[k]) * (tab[k] - hc->tab[k]);
    double delta = sqrt(dt) + sqrt(dr) * b->radius, need = 2 * (delta + slack);
    double ub = hc->dbar + delta + slack, thr = SEP_EXACT * (a->radius + b->radius);
    // a cheap look first: would the test below pass if the best face's separation had fallen
    // by delta? (a filter only: a pair it turns away runs the whole search)
    if (hc->lead_a > need && hc->lead_b > need && ub <= margin && ub < hc->sf - delta + tol) {
      // the face loops' maxima; one above the margin is where they would return (no contacts)
      sep_hint *H = fl__cl_sep_hints && fl__cl_box_fast ? hint_of(a, b) : NULL;
      fl_int fa = hc->fa, fb = hc->fb;
      double sa = face_sep(a, b, Rab, tab, fa, b_box);
      if (sa > margin) {
        hint_set(H, a, b, 1, fa, 0);
        return;
      }
      double sb = face_sep_b(a, b, Rab, tba, fb, a_box);
      if (sb > margin) {
        hint_set(H, a, b, 2, fb, 0);
        return;
      }
      double sf = bmax(sa, sb);
      coherent = ub <= margin && ub < sf + tol;
      // an edge pair might still decide `separated`, which only matters when the clipped
      // polygon is empty or gives no point: checked after the face contact
      sep_unsure = coherent && !(ub <= thr || sf > thr);
      if (coherent && fl__cl_coherence_check) {
        // tests: the whole search below, checked against what the reference claims
        claim = 1, claim_ub = ub;
        coherent = 0;
      }
      if (coherent) {
        // the face branch of the search, with no edge pair above the faces
        int separated = sf > thr, n0 = B->n;
        double habs = INFINITY, *hp = sep_unsure ? &habs : NULL;
        if (sb > sa + tol) {
          double Rba[9];
          for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) Rba[3 * i + j] = Rab[3 * j + i];
          face_contact(b, Bp, a, Rba, tba, fb, 1, !separated, margin, hp, B);
        } else {
          face_contact(a, A, b, Rab, tab, fa, 0, !separated, margin, hp, B);
        }
        if (!sep_unsure || (B->n > n0 && habs < INFINITY)) {
          if (B->n == n0 && separated) poly_exact(a, A, b, Rab, tab, margin, B);
          hc->skipped++;
          hc->fails = 0;
          return;
        }
        // `separated` mattered and the edge pairs were not evaluated: the whole search
        B->n = n0;
        coherent = 0;
      }
    }
    if (!claim) try_failed(hc);
  }
  search_rep r;
  memset(&r, 0, sizeof r);
  poly_poly_search(a, A, b, Bp, margin, &r, B);
  if (claim) {
    // the same best faces, no face or edge pair above the margin (no early return), no edge
    // pair above the bound and none that wins
    fl__cl_coherence_checked++;
    fl__cl_coherence_wrong += !r.done || r.fa != hc->fa || r.fb != hc->fb || r.se > claim_ub ||
                              r.edge_won;
  }
  if (!r.done) return; // separated beyond the margin: the reference stays as it was
  hc->full++;
  if (r.edge_won) {
    hc->valid = 0; // an edge axis won: the whole search runs again next time
    return;
  }
  // a new reference (a face won)
  double U = bmax(r.se, bmax(r.sa, r.sb));
  int sat = U < -slack && !r.parallel && r.edges_all;
  hc->valid = r.s2a > -INFINITY && r.s2b > -INFINITY && (sat || r.habs < INFINITY);
  if (hc->valid) {
    memcpy(hc->Rab, Rab, sizeof hc->Rab);
    copy3(tab, hc->tab);
    hc->dbar = (sat ? U : r.habs) + slack;
    hc->fa = r.fa, hc->fb = r.fb;
    hc->lead_a = r.sa - r.s2a, hc->lead_b = r.sb - r.s2b;
    hc->sf = bmax(r.sa, r.sb);
  }
}


void fl__cl_poly_poly(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                      double margin, fl__hull_pair *hc, cbuf *B) {
  // two boxes have closed forms and a bound on the edge pairs already
  if (hc && !(is_box(a) && is_box(b)))
    poly_poly_coherent(a, A, b, Bp, margin, hc, B);
  else
    poly_poly_search(a, A, b, Bp, margin, NULL, B);
}

// SPDX-License-Identifier: Apache-2.0
/* collide_kit.c: what the narrow phase's pair functions share (collide.c, collide_poly.c):
 * the candidate buffer and its reduction to a manifold, segment closest points, the closest
 * point of a polyhedron.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "collide_impl.h"

/*---- candidate points ----*/



/* adds a point given the point pa on a's surface, the normal n (a to b) and phi */
void fl__cl_add_a(cbuf *B, const double pa[3], const double n[3], double phi, uint32_t fa,
                  uint32_t fb) {
  if (B->n >= CAND_MAX) return;
  cand *c = B->c + B->n++;
  axpy3(0.5 * phi, n, pa, c->p);
  copy3(n, c->n);
  c->phi = phi;
  c->fa = fa, c->fb = fb;
}


/* adds a point given the point pb on b's surface */
void fl__cl_add_b(cbuf *B, const double pb[3], const double n[3], double phi, uint32_t fa,
                  uint32_t fb) {
  double pa[3];
  axpy3(-phi, n, pb, pa);
  fl__cl_add_a(B, pa, n, phi, fa, fb);
}


/* keeps at most m candidates: the deepest, then repeatedly the one farthest from all kept
 * (ties to the lower index, so the choice is deterministic) */
void fl__cl_reduce(cbuf *B, int m) {
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
void fl__cl_seg_closest(const double p1[3], const double d1[3], const double p2[3],
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
uint32_t fl__cl_cap_feat(double t) {
  return t <= 0 ? FL_FEAT(FL_FEAT_VERTEX, 0)
                : t >= 1 ? FL_FEAT(FL_FEAT_VERTEX, 1) : FL_FEAT(FL_FEAT_EDGE, 2);
}


/* a capsule's segment in the world: start p and direction d (end = p + d) */
void fl__cl_cap_segment(const fl_shape *s, const pose *P, double p[3], double d[3]) {
  double h = s->size[1];
  for (int i = 0; i < 3; i++) {
    d[i] = 2 * h * P->R[3 * i + 2];
    p[i] = P->p[i] - h * P->R[3 * i + 2];
  }
}


/* normal from a to b along d (b's point minus a's point), or a fallback when d vanishes */
void fl__cl_dir_or(const double d[3], const double fallback[3], double n[3]) {
  double l = norm3(d);
  if (l > 1e-300) {
    n[0] = d[0] / l, n[1] = d[1] / l, n[2] = d[2] / l;
  } else {
    copy3(fallback, n);
  }
}


/* closest point of a convex polyhedron to a body-frame point c: q, the outward direction nb
 * (unit, from q towards c, or the deepest face's normal from inside), the signed distance, and
 * the feature code */
double fl__cl_poly_closest(const fl_shape *b, const double c[3], double q[3], double nb[3],
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

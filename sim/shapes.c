// SPDX-License-Identifier: Apache-2.0
/* shapes.c: shape makers, convex hulls, mass properties, recentring and bounding boxes.
 *
 * Polyhedra (box, polyhedral cylinder, convex hull) share one representation: vertices, faces
 * as counter-clockwise vertex loops, outward normals and offsets, and the unique edges with the
 * two faces beside each (what the separating-axis tests of collide.c need).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fl_geometry.h"

/* the most vertices one face may have (clipping buffers in collide.c are sized from it) */
#define FACE_MAX 1024


/*---- small vector helpers ----*/

static inline double dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}


static inline void sub3(const double a[3], const double b[3], double o[3]) {
  o[0] = a[0] - b[0];
  o[1] = a[1] - b[1];
  o[2] = a[2] - b[2];
}


static inline void cross3(const double a[3], const double b[3], double o[3]) {
  double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
         z = a[0] * b[1] - a[1] * b[0];
  o[0] = x;
  o[1] = y;
  o[2] = z;
}


static inline double norm3(const double a[3]) { return sqrt(dot3(a, a)); }


/* rotation matrix of a (not necessarily unit) quaternion w, x, y, z; identity for a zero or
 * non-finite one */
static void quat_mat(const double q[4], double R[9]) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  double u[4] = {1, 0, 0, 0};
  if (n > 0 && isfinite(n))
    for (int k = 0; k < 4; k++) u[k] = q[k] / n;
  fl_quat_to_mat(u, R);
}


/*---- allocation and the polyhedron's derived data ----*/

void fl_shape_free(fl_shape *s) {
  if (!s) return;
  fl_free(s->vert);
  fl_free(s->face_ptr);
  fl_free(s->face_vert);
  fl_free(s->face_normal);
  fl_free(s->edge);
  fl_free(s->edge_face);
  fl_free(s->face_edge);
  fl_free(s->face_offset);
  memset(s, 0, sizeof(*s));
}


/* allocates the vertex and face arrays of a polyhedron with nv vertices, nf faces and nfv
 * face-vertex slots */
static int poly_alloc(fl_shape *s, fl_int nv, fl_int nf, fl_int nfv) {
  s->nvert = nv;
  s->nface = nf;
  s->vert = fl_malloc(sizeof(double) * 3 * (size_t)nv);
  s->face_ptr = fl_malloc(sizeof(fl_int) * (size_t)(nf + 1));
  s->face_vert = fl_malloc(sizeof(fl_int) * (size_t)nfv);
  s->face_normal = fl_malloc(sizeof(double) * 3 * (size_t)nf);
  s->face_offset = fl_malloc(sizeof(double) * (size_t)nf);
  s->face_edge = fl_malloc(sizeof(fl_int) * (size_t)nfv);
  if (!s->vert || !s->face_ptr || !s->face_vert || !s->face_normal || !s->face_offset ||
      !s->face_edge) {
    fl_shape_free(s);
    return fl_seterr(FL_ERR_NOMEM, "shape: out of memory for a polyhedron of %d vertices",
                     (int)nv);
  }
  return FL_OK;
}


typedef struct half_edge {
  fl_int lo, hi; /* vertex pair, lo < hi */
  fl_int face, slot;
} half_edge;


static int cmp_half_edge(const void *pa, const void *pb) {
  const half_edge *a = pa, *b = pb;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
  return (a->face > b->face) - (a->face < b->face);
}


/* from vert, face_ptr and face_vert: face normals (Newell), offsets, unique edges with their
 * faces, and the bounding radius. Fails when the faces do not close a 2-manifold. */
static int poly_finish(fl_shape *s) {
  fl_int nfv = s->face_ptr[s->nface];
  for (fl_int f = 0; f < s->nface; f++) {
    fl_int k0 = s->face_ptr[f], k1 = s->face_ptr[f + 1];
    double n[3] = {0, 0, 0};
    if (k1 - k0 > FACE_MAX) {
      fl_shape_free(s);
      return fl_seterr(FL_ERR_INVAL, "shape: a face has %d vertices (at most %d supported)",
                       (int)(k1 - k0), FACE_MAX);
    }
    // newell's normal is exact for planar polygons and a best fit otherwise
    for (fl_int k = k0; k < k1; k++) {
      const double *p = s->vert + 3 * s->face_vert[k];
      const double *q = s->vert + 3 * s->face_vert[k + 1 < k1 ? k + 1 : k0];
      n[0] += (p[1] - q[1]) * (p[2] + q[2]);
      n[1] += (p[2] - q[2]) * (p[0] + q[0]);
      n[2] += (p[0] - q[0]) * (p[1] + q[1]);
    }
    double len = norm3(n);
    if (!(len > 0)) {
      fl_shape_free(s);
      return fl_seterr(FL_ERR_INVAL, "shape: face %d is degenerate (zero area)", (int)f);
    }
    double *nf = s->face_normal + 3 * f;
    double d = -INFINITY;
    for (int i = 0; i < 3; i++) nf[i] = n[i] / len;
    // the offset is the supporting plane, so every vertex lies on or below it
    for (fl_int k = k0; k < k1; k++) {
      double t = dot3(nf, s->vert + 3 * s->face_vert[k]);
      if (t > d) d = t;
    }
    s->face_offset[f] = d;
  }
  // edges: pair up the half edges by sorting them on their vertex pair
  half_edge *he = fl_malloc(sizeof(half_edge) * (size_t)(nfv > 0 ? nfv : 1));
  if (!he) {
    fl_shape_free(s);
    return fl_seterr(FL_ERR_NOMEM, "shape: out of memory for %d half edges", (int)nfv);
  }
  for (fl_int f = 0; f < s->nface; f++) {
    fl_int k0 = s->face_ptr[f], k1 = s->face_ptr[f + 1];
    for (fl_int k = k0; k < k1; k++) {
      fl_int u = s->face_vert[k], v = s->face_vert[k + 1 < k1 ? k + 1 : k0];
      he[k].lo = u < v ? u : v;
      he[k].hi = u < v ? v : u;
      he[k].face = f;
      he[k].slot = k;
    }
  }
  qsort(he, (size_t)nfv, sizeof(half_edge), cmp_half_edge);
  int bad = (nfv % 2) != 0;
  for (fl_int k = 0; !bad && k < nfv; k += 2)
    bad = he[k].lo != he[k + 1].lo || he[k].hi != he[k + 1].hi || he[k].lo == he[k].hi ||
          (k + 2 < nfv && he[k + 2].lo == he[k].lo && he[k + 2].hi == he[k].hi);
  if (bad) {
    fl_free(he);
    fl_shape_free(s);
    return fl_seterr(FL_ERR_INVAL, "shape: the faces do not form a closed 2-manifold");
  }
  s->nedge = nfv / 2;
  s->edge = fl_malloc(sizeof(fl_int) * 2 * (size_t)s->nedge);
  s->edge_face = fl_malloc(sizeof(fl_int) * 2 * (size_t)s->nedge);
  if (!s->edge || !s->edge_face) {
    fl_free(he);
    fl_shape_free(s);
    return fl_seterr(FL_ERR_NOMEM, "shape: out of memory for %d edges", (int)(nfv / 2));
  }
  for (fl_int e = 0; e < s->nedge; e++) {
    s->edge[2 * e] = he[2 * e].lo;
    s->edge[2 * e + 1] = he[2 * e].hi;
    for (int h = 0; h < 2; h++) {
      const half_edge *x = he + 2 * e + h;
      // the face that runs lo -> hi counter-clockwise goes first
      int forward = s->face_vert[x->slot] == x->lo;
      s->edge_face[2 * e + (forward ? 0 : 1)] = x->face;
      s->face_edge[x->slot] = e;
    }
  }
  fl_free(he);
  double r2 = 0;
  for (fl_int v = 0; v < s->nvert; v++) {
    double t = dot3(s->vert + 3 * v, s->vert + 3 * v);
    if (t > r2) r2 = t;
  }
  s->radius = sqrt(r2);
  return FL_OK;
}


int fl_shape_copy(const fl_shape *src, fl_shape *out) {
  if (!src || !out) return fl_seterr(FL_ERR_INVAL, "fl_shape_copy: NULL argument");
  *out = *src;
  out->vert = NULL, out->face_ptr = NULL, out->face_vert = NULL, out->face_normal = NULL;
  out->edge = NULL, out->edge_face = NULL, out->face_edge = NULL, out->face_offset = NULL;
  if (src->nvert == 0) return FL_OK;
  fl_int nfv = src->face_ptr[src->nface];
  FL_TRY(poly_alloc(out, src->nvert, src->nface, nfv));
  out->edge = fl_malloc(sizeof(fl_int) * 2 * (size_t)src->nedge);
  out->edge_face = fl_malloc(sizeof(fl_int) * 2 * (size_t)src->nedge);
  if (!out->edge || !out->edge_face) {
    fl_shape_free(out);
    return fl_seterr(FL_ERR_NOMEM, "fl_shape_copy: out of memory");
  }
  memcpy(out->vert, src->vert, sizeof(double) * 3 * (size_t)src->nvert);
  memcpy(out->face_ptr, src->face_ptr, sizeof(fl_int) * (size_t)(src->nface + 1));
  memcpy(out->face_vert, src->face_vert, sizeof(fl_int) * (size_t)nfv);
  memcpy(out->face_edge, src->face_edge, sizeof(fl_int) * (size_t)nfv);
  memcpy(out->face_normal, src->face_normal, sizeof(double) * 3 * (size_t)src->nface);
  memcpy(out->face_offset, src->face_offset, sizeof(double) * (size_t)src->nface);
  memcpy(out->edge, src->edge, sizeof(fl_int) * 2 * (size_t)src->nedge);
  memcpy(out->edge_face, src->edge_face, sizeof(fl_int) * 2 * (size_t)src->nedge);
  return FL_OK;
}


/*---- makers ----*/

static int check_size(const char *what, const char *name, double x) {
  if (!(x > 0) || !isfinite(x))
    return fl_seterr(FL_ERR_INVAL, "%s: %s = %g, expected a positive finite length (m)", what,
                     name, x);
  return FL_OK;
}


int fl_shape_make_plane(fl_shape *out) {
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_shape_make_plane: NULL shape");
  memset(out, 0, sizeof(*out));
  out->type = FL_SHAPE_PLANE;
  out->radius = INFINITY;
  return FL_OK;
}


int fl_shape_make_sphere(double r, fl_shape *out) {
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_shape_make_sphere: NULL shape");
  memset(out, 0, sizeof(*out));
  FL_TRY(check_size("sphere", "radius", r));
  out->type = FL_SHAPE_SPHERE;
  out->size[0] = r;
  out->radius = r;
  return FL_OK;
}


int fl_shape_make_capsule(double r, double half_length, fl_shape *out) {
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_shape_make_capsule: NULL shape");
  memset(out, 0, sizeof(*out));
  FL_TRY(check_size("capsule", "radius", r));
  FL_TRY(check_size("capsule", "half_length", half_length));
  out->type = FL_SHAPE_CAPSULE;
  out->size[0] = r;
  out->size[1] = half_length;
  out->radius = r + half_length;
  return FL_OK;
}


int fl_shape_make_box(double hx, double hy, double hz, fl_shape *out) {
  // faces -x, +x, -y, +y, -z, +z, counter-clockwise seen from outside; vertex v has
  // coordinate signs from its bits (bit 0: x, bit 1: y, bit 2: z)
  static const fl_int fv[24] = {0, 4, 6, 2, 1, 3, 7, 5, 0, 1, 5, 4,
                                2, 6, 7, 3, 0, 2, 3, 1, 4, 5, 7, 6};
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_shape_make_box: NULL shape");
  memset(out, 0, sizeof(*out));
  FL_TRY(check_size("box", "half extent x", hx));
  FL_TRY(check_size("box", "half extent y", hy));
  FL_TRY(check_size("box", "half extent z", hz));
  FL_TRY(poly_alloc(out, 8, 6, 24));
  out->type = FL_SHAPE_BOX;
  out->size[0] = hx, out->size[1] = hy, out->size[2] = hz;
  for (int v = 0; v < 8; v++) {
    out->vert[3 * v] = (v & 1) ? hx : -hx;
    out->vert[3 * v + 1] = (v & 2) ? hy : -hy;
    out->vert[3 * v + 2] = (v & 4) ? hz : -hz;
  }
  for (int f = 0; f <= 6; f++) out->face_ptr[f] = 4 * f;
  memcpy(out->face_vert, fv, sizeof(fv));
  FL_TRY(poly_finish(out));
  // exact normals (newell's are exact here too, but say it plainly)
  for (int f = 0; f < 6; f++) {
    double *n = out->face_normal + 3 * f;
    n[0] = n[1] = n[2] = 0;
    n[f / 2] = (f % 2) ? 1 : -1;
    out->face_offset[f] = out->size[f / 2];
  }
  return FL_OK;
}


int fl_shape_make_cylinder(double r, double half_length, fl_int segments, fl_shape *out) {
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_shape_make_cylinder: NULL shape");
  memset(out, 0, sizeof(*out));
  FL_TRY(check_size("cylinder", "radius", r));
  FL_TRY(check_size("cylinder", "half_length", half_length));
  if (segments <= 0) segments = FL_CYL_SEGMENTS_DEFAULT;
  if (segments < 3 || segments > FACE_MAX)
    return fl_seterr(FL_ERR_INVAL, "cylinder: segments = %d, expected 3..%d (or <= 0 for %d)",
                     (int)segments, FACE_MAX, FL_CYL_SEGMENTS_DEFAULT);
  fl_int m = segments;
  // vertices: bottom ring 0..m-1, top ring m..2m-1; faces: m sides, bottom, top
  FL_TRY(poly_alloc(out, 2 * m, m + 2, 4 * m + 2 * m));
  out->type = FL_SHAPE_CYLINDER;
  out->size[0] = r, out->size[1] = half_length;
  out->cyl_segments = m;
  for (fl_int k = 0; k < m; k++) {
    double t = 2 * M_PI * (double)k / (double)m;
    double c = cos(t), s = sin(t);
    out->vert[3 * k] = out->vert[3 * (k + m)] = r * c;
    out->vert[3 * k + 1] = out->vert[3 * (k + m) + 1] = r * s;
    out->vert[3 * k + 2] = -half_length;
    out->vert[3 * (k + m) + 2] = half_length;
  }
  fl_int *fv = out->face_vert;
  for (fl_int k = 0; k < m; k++) {
    fl_int k1 = (k + 1) % m;
    out->face_ptr[k] = 4 * k;
    fv[4 * k] = k, fv[4 * k + 1] = k1, fv[4 * k + 2] = k1 + m, fv[4 * k + 3] = k + m;
  }
  out->face_ptr[m] = 4 * m;
  for (fl_int k = 0; k < m; k++) fv[4 * m + k] = m - 1 - k; // bottom, seen from below
  out->face_ptr[m + 1] = 5 * m;
  for (fl_int k = 0; k < m; k++) fv[5 * m + k] = m + k; // top
  out->face_ptr[m + 2] = 6 * m;
  FL_TRY(poly_finish(out));
  // the bounding radius of the exact cylinder
  out->radius = sqrt(r * r + half_length * half_length);
  return FL_OK;
}


/*---- convex hull: incremental with triangles, then coplanar triangles merged ----*/

typedef struct hull_tri {
  fl_int v[3];
  double n[3], d;
  int alive;
} hull_tri;

typedef struct hull {
  hull_tri *t;
  fl_int nt, cap;
} hull;


static int hull_add(hull *h, const double *pts, fl_int a, fl_int b, fl_int c) {
  if (h->nt == h->cap) {
    fl_int cap = h->cap ? 2 * h->cap : 64;
    hull_tri *t = fl_realloc(h->t, sizeof(hull_tri) * (size_t)cap);
    if (!t) return fl_seterr(FL_ERR_NOMEM, "convex hull: out of memory for %d facets", (int)cap);
    h->t = t;
    h->cap = cap;
  }
  hull_tri *t = h->t + h->nt++;
  double e1[3], e2[3];
  t->v[0] = a, t->v[1] = b, t->v[2] = c;
  sub3(pts + 3 * b, pts + 3 * a, e1);
  sub3(pts + 3 * c, pts + 3 * a, e2);
  cross3(e1, e2, t->n);
  double len = norm3(t->n);
  if (len > 0)
    for (int i = 0; i < 3; i++) t->n[i] /= len;
  t->d = dot3(t->n, pts + 3 * a);
  t->alive = 1;
  return FL_OK;
}


static int find_union(fl_int *par, fl_int x) {
  while (par[x] != x) x = par[x] = par[par[x]];
  return x;
}


/* removes polygon corners that lie on the straight line between their neighbours (within
 * tol): points added on an edge before the edge's end points were known. Such a vertex is
 * collinear in both faces beside the edge, so it leaves both loops; unused vertices are then
 * dropped and the rest renumbered. */
static void drop_collinear(fl_shape *s, double tol) {
  fl_int w = 0;
  for (fl_int f = 0; f < s->nface; f++) {
    fl_int k0 = s->face_ptr[f], k1 = s->face_ptr[f + 1], m = k1 - k0;
    fl_int *fv = s->face_vert + k0;
    int changed = 1;
    while (changed && m > 3) {
      changed = 0;
      for (fl_int k = 0; k < m && m > 3; k++) {
        const double *u = s->vert + 3 * fv[(k + m - 1) % m], *v = s->vert + 3 * fv[k],
                     *x = s->vert + 3 * fv[(k + 1) % m];
        double a[3], b[3], c[3];
        sub3(x, u, a);
        sub3(v, u, b);
        cross3(a, b, c);
        double la = norm3(a);
        if (la > 0 && norm3(c) / la <= tol && dot3(a, b) > 0 && dot3(a, b) < dot3(a, a)) {
          memmove(fv + k, fv + k + 1, sizeof(fl_int) * (size_t)(m - k - 1));
          m--, k--;
          changed = 1;
        }
      }
    }
    // compact the loop in place
    memmove(s->face_vert + w, fv, sizeof(fl_int) * (size_t)m);
    s->face_ptr[f] = w;
    w += m;
  }
  s->face_ptr[s->nface] = w;
  // renumber the vertices still in use (face_vert grows no larger, so reuse the arrays)
  fl_int nv = 0;
  fl_int *map = fl_malloc(sizeof(fl_int) * (size_t)(s->nvert > 0 ? s->nvert : 1));
  if (!map) return; // keep the collinear vertices: still a valid polyhedron
  for (fl_int v = 0; v < s->nvert; v++) map[v] = -1;
  for (fl_int k = 0; k < w; k++) map[s->face_vert[k]] = 0;
  for (fl_int v = 0; v < s->nvert; v++)
    if (map[v] == 0) {
      map[v] = nv;
      memmove(s->vert + 3 * nv, s->vert + 3 * v, sizeof(double) * 3);
      nv++;
    }
  for (fl_int k = 0; k < w; k++) s->face_vert[k] = map[s->face_vert[k]];
  s->nvert = nv;
  fl_free(map);
}


int fl_shape_make_convex(const double *pts, fl_int n, fl_shape *out) {
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_shape_make_convex: NULL shape");
  memset(out, 0, sizeof(*out));
  if (!pts || n < 4)
    return fl_seterr(FL_ERR_INVAL, "convex hull: %d points given, expected at least 4", (int)n);
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (fl_int i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) {
      double x = pts[3 * i + k];
      if (!isfinite(x))
        return fl_seterr(FL_ERR_INVAL, "convex hull: point %d coordinate %d is %g, expected a "
                         "finite number", (int)i, k, x);
      if (x < lo[k]) lo[k] = x;
      if (x > hi[k]) hi[k] = x;
    }
  double scale = 0;
  for (int k = 0; k < 3; k++) scale = fmax(scale, fmax(fabs(lo[k]), fabs(hi[k])) + (hi[k] - lo[k]));
  // eps decides "outside a facet"; merge_tol decides "coplanar with a neighbour"
  double eps = 1e-10 * scale, merge_tol = 1e-7 * scale;

  // initial tetrahedron from extreme points
  fl_int i0 = 0, i1 = -1, i2 = -1, i3 = -1;
  for (fl_int i = 1; i < n; i++)
    if (pts[3 * i] < pts[3 * i0]) i0 = i;
  double best = 0;
  for (fl_int i = 0; i < n; i++) {
    double d[3];
    sub3(pts + 3 * i, pts + 3 * i0, d);
    if (dot3(d, d) > best) best = dot3(d, d), i1 = i;
  }
  if (i1 < 0 || sqrt(best) <= 1e3 * eps)
    return fl_seterr(FL_ERR_INVAL, "convex hull: all %d points coincide", (int)n);
  double e01[3];
  sub3(pts + 3 * i1, pts + 3 * i0, e01);
  best = 0;
  for (fl_int i = 0; i < n; i++) {
    double d[3], c[3];
    sub3(pts + 3 * i, pts + 3 * i0, d);
    cross3(e01, d, c);
    if (dot3(c, c) > best) best = dot3(c, c), i2 = i;
  }
  if (i2 < 0 || sqrt(best) / norm3(e01) <= 1e3 * eps)
    return fl_seterr(FL_ERR_INVAL, "convex hull: the %d points are collinear", (int)n);
  double e02[3], nrm[3];
  sub3(pts + 3 * i2, pts + 3 * i0, e02);
  cross3(e01, e02, nrm);
  double nl = norm3(nrm);
  best = 0;
  for (fl_int i = 0; i < n; i++) {
    double d[3];
    sub3(pts + 3 * i, pts + 3 * i0, d);
    double t = fabs(dot3(nrm, d)) / nl;
    if (t > best) best = t, i3 = i;
  }
  if (i3 < 0 || best <= 1e3 * eps)
    return fl_seterr(FL_ERR_INVAL, "convex hull: the %d points are coplanar", (int)n);

  hull h = {NULL, 0, 0};
  fl_int *vis = NULL, *hor = NULL, *par = NULL, *vmap = NULL, *twin = NULL;
  int rc = FL_OK;
  {
    double d3[3];
    sub3(pts + 3 * i3, pts + 3 * i0, d3);
    // orient so that i3 lies below face (i0, i1, i2)
    if (dot3(nrm, d3) > 0) {
      fl_int t = i1;
      i1 = i2;
      i2 = t;
    }
  }
  if ((rc = hull_add(&h, pts, i0, i1, i2)) < 0 || (rc = hull_add(&h, pts, i0, i3, i1)) < 0 ||
      (rc = hull_add(&h, pts, i1, i3, i2)) < 0 || (rc = hull_add(&h, pts, i2, i3, i0)) < 0)
    goto done;

  // add the points one at a time: remove the facets it sees, fan the horizon to it
  fl_int vcap = 64, hcap = 64;
  vis = fl_malloc(sizeof(fl_int) * (size_t)vcap);
  hor = fl_malloc(sizeof(fl_int) * 2 * (size_t)hcap);
  if (!vis || !hor) {
    rc = fl_seterr(FL_ERR_NOMEM, "convex hull: out of memory");
    goto done;
  }
  for (fl_int p = 0; p < n; p++) {
    if (p == i0 || p == i1 || p == i2 || p == i3) continue;
    const double *x = pts + 3 * p;
    fl_int nvis = 0;
    for (fl_int t = 0; t < h.nt; t++) {
      if (!h.t[t].alive || dot3(h.t[t].n, x) - h.t[t].d <= eps) continue;
      if (nvis == vcap) {
        fl_int *nv2 = fl_realloc(vis, sizeof(fl_int) * 2 * (size_t)vcap);
        if (!nv2) {
          rc = fl_seterr(FL_ERR_NOMEM, "convex hull: out of memory");
          goto done;
        }
        vis = nv2;
        vcap *= 2;
      }
      vis[nvis++] = t;
    }
    if (nvis == 0) continue;
    // horizon: directed edges of visible facets whose reverse is not on a visible facet
    fl_int nhor = 0;
    for (fl_int a = 0; a < nvis; a++) {
      const hull_tri *ta = h.t + vis[a];
      for (int k = 0; k < 3; k++) {
        fl_int u = ta->v[k], v = ta->v[(k + 1) % 3];
        int shared = 0;
        for (fl_int b = 0; b < nvis && !shared; b++) {
          const hull_tri *tb = h.t + vis[b];
          for (int m = 0; m < 3; m++)
            if (tb->v[m] == v && tb->v[(m + 1) % 3] == u) shared = 1;
        }
        if (shared) continue;
        if (nhor == hcap) {
          fl_int *h2 = fl_realloc(hor, sizeof(fl_int) * 4 * (size_t)hcap);
          if (!h2) {
            rc = fl_seterr(FL_ERR_NOMEM, "convex hull: out of memory");
            goto done;
          }
          hor = h2;
          hcap *= 2;
        }
        hor[2 * nhor] = u;
        hor[2 * nhor + 1] = v;
        nhor++;
      }
    }
    for (fl_int a = 0; a < nvis; a++) h.t[vis[a]].alive = 0;
    for (fl_int k = 0; k < nhor; k++)
      if ((rc = hull_add(&h, pts, hor[2 * k], hor[2 * k + 1], p)) < 0) goto done;
    // compact now and then so dead facets do not pile up
    if (h.nt > 64 && h.nt > 4 * (2 * n)) {
      fl_int w = 0;
      for (fl_int t = 0; t < h.nt; t++)
        if (h.t[t].alive) h.t[w++] = h.t[t];
      h.nt = w;
    }
  }
  {
    // compact the live facets
    fl_int nt = 0;
    for (fl_int t = 0; t < h.nt; t++)
      if (h.t[t].alive) h.t[nt++] = h.t[t];
    h.nt = nt;
  }

  // merge neighbouring facets that are coplanar (each one's corners on the other's plane)
  par = fl_malloc(sizeof(fl_int) * (size_t)h.nt);
  vmap = fl_malloc(sizeof(fl_int) * (size_t)n);
  if (!par || !vmap) {
    rc = fl_seterr(FL_ERR_NOMEM, "convex hull: out of memory");
    goto done;
  }
  // twins: the half edge of the neighbouring facet across each edge (sort on vertex pairs)
  twin = fl_malloc(sizeof(fl_int) * 3 * (size_t)h.nt);
  half_edge *he = fl_malloc(sizeof(half_edge) * 3 * (size_t)h.nt);
  if (!twin || !he) {
    fl_free(he);
    rc = fl_seterr(FL_ERR_NOMEM, "convex hull: out of memory");
    goto done;
  }
  for (fl_int t = 0; t < h.nt; t++)
    for (int k = 0; k < 3; k++) {
      fl_int u = h.t[t].v[k], v = h.t[t].v[(k + 1) % 3];
      half_edge *x = he + 3 * t + k;
      x->lo = u < v ? u : v, x->hi = u < v ? v : u, x->face = t, x->slot = 3 * t + k;
    }
  qsort(he, 3 * (size_t)h.nt, sizeof(half_edge), cmp_half_edge);
  for (fl_int k = 0; k < 3 * h.nt; k++) twin[k] = -1;
  for (fl_int k = 0; k + 1 < 3 * h.nt; k++)
    if (he[k].lo == he[k + 1].lo && he[k].hi == he[k + 1].hi) {
      twin[he[k].slot] = he[k + 1].slot, twin[he[k + 1].slot] = he[k].slot;
      k++;
    }
  fl_free(he);
  // merge neighbouring facets that are coplanar (each one's corners on the other's plane)
  for (fl_int t = 0; t < h.nt; t++) par[t] = t;
  for (fl_int a = 0; a < h.nt; a++)
    for (int k = 0; k < 3; k++) {
      fl_int tw = twin[3 * a + k], b = tw / 3;
      if (tw < 0 || b <= a) continue;
      const hull_tri *ta = h.t + a, *tb = h.t + b;
      if (dot3(ta->n, tb->n) <= 0) continue;
      int flat = 1;
      for (int i = 0; i < 3 && flat; i++) {
        flat = fabs(dot3(ta->n, pts + 3 * tb->v[i]) - ta->d) <= merge_tol &&
               fabs(dot3(tb->n, pts + 3 * ta->v[i]) - tb->d) <= merge_tol;
      }
      if (flat) par[find_union(par, a)] = find_union(par, b);
    }

  // each group's boundary is one loop of directed edges seen by no other facet of the group
  {
    fl_int ngroup = 0, nbnd = 0;
    fl_int *gid = fl_malloc(sizeof(fl_int) * (size_t)h.nt);
    fl_int *be = fl_malloc(sizeof(fl_int) * 3 * 3 * (size_t)h.nt); // (u, v, group) boundary edges
    fl_int *gptr = NULL, *loop = NULL;
    if (!gid || !be) {
      fl_free(gid);
      fl_free(be);
      rc = fl_seterr(FL_ERR_NOMEM, "convex hull: out of memory");
      goto done;
    }
    for (fl_int t = 0; t < h.nt; t++) gid[t] = -1;
    for (fl_int t = 0; t < h.nt; t++) {
      fl_int r = find_union(par, t);
      if (gid[r] < 0) gid[r] = ngroup++;
      gid[t] = gid[r];
    }
    for (fl_int t = 0; t < h.nt; t++)
      for (int k = 0; k < 3; k++) {
        fl_int u = h.t[t].v[k], v = h.t[t].v[(k + 1) % 3], tw = twin[3 * t + k];
        if (tw >= 0 && gid[tw / 3] == gid[t]) continue; // inside the group
        be[3 * nbnd] = u, be[3 * nbnd + 1] = v, be[3 * nbnd + 2] = gid[t];
        nbnd++;
      }
    // renumber the used vertices
    fl_int nv = 0;
    for (fl_int i = 0; i < n; i++) vmap[i] = -1;
    for (fl_int k = 0; k < nbnd; k++)
      if (vmap[be[3 * k]] < 0) vmap[be[3 * k]] = nv++;
    gptr = fl_calloc((size_t)ngroup + 1, sizeof(fl_int));
    loop = fl_malloc(sizeof(fl_int) * (size_t)(nbnd > 0 ? nbnd : 1));
    if (!gptr || !loop || (rc = poly_alloc(out, nv, ngroup, nbnd)) < 0) {
      if (rc >= 0) rc = fl_seterr(FL_ERR_NOMEM, "convex hull: out of memory");
      fl_free(gid), fl_free(be), fl_free(gptr), fl_free(loop);
      goto done;
    }
    for (fl_int i = 0; i < n; i++)
      if (vmap[i] >= 0) memcpy(out->vert + 3 * vmap[i], pts + 3 * i, sizeof(double) * 3);
    for (fl_int k = 0; k < nbnd; k++) gptr[be[3 * k + 2] + 1]++;
    for (fl_int g = 0; g < ngroup; g++) gptr[g + 1] += gptr[g];
    // chain each group's boundary edges into a loop (u -> v -> ...)
    for (fl_int g = 0; g < ngroup && rc >= 0; g++) {
      fl_int m = 0, first = -1;
      for (fl_int k = 0; k < nbnd; k++)
        if (be[3 * k + 2] == g) loop[gptr[g] + m++] = k;
      fl_int *fvp = out->face_vert + gptr[g];
      fl_int e0 = loop[gptr[g]];
      first = be[3 * e0];
      fl_int cur = be[3 * e0 + 1];
      fvp[0] = vmap[first];
      for (fl_int k = 1; k < m && rc >= 0; k++) {
        fvp[k] = vmap[cur];
        // the boundary edge that starts where the previous one ended
        fl_int next = -1;
        for (fl_int j = 0; j < m; j++) {
          fl_int ej = loop[gptr[g] + j];
          if (be[3 * ej] == cur) {
            next = ej;
            break;
          }
        }
        if (next < 0)
          rc = fl_seterr(FL_ERR_INVAL, "convex hull: facet group %d has no closed boundary "
                         "(points too close to coplanar?)", (int)g);
        else
          cur = be[3 * next + 1];
      }
      if (rc >= 0 && cur != first)
        rc = fl_seterr(FL_ERR_INVAL, "convex hull: facet group %d boundary is not one loop",
                       (int)g);
    }
    for (fl_int g = 0; g <= ngroup; g++) out->face_ptr[g] = gptr[g];
    fl_free(gid), fl_free(be), fl_free(gptr), fl_free(loop);
    if (rc < 0) {
      fl_shape_free(out);
      goto done;
    }
    out->type = FL_SHAPE_CONVEX;
    drop_collinear(out, merge_tol);
    rc = poly_finish(out);
  }

done:
  fl_free(h.t);
  fl_free(vis);
  fl_free(hor);
  fl_free(par);
  fl_free(vmap);
  fl_free(twin);
  if (rc < 0) fl_shape_free(out);
  return rc;
}


/*---- mass properties ----*/

/* volume, first moment about ref and second moment tensor about ref of a closed polyhedron,
 * by the divergence theorem: the solid is the signed union of tetrahedra (ref, a, b, c) over a
 * fan triangulation of each face. For a tetrahedron with corners 0, a, b, c and D = det[a b c]:
 * V = D/6, int x = V (a+b+c)/4, int x x^T = D/120 (a a^T + b b^T + c c^T + s s^T), s = a+b+c. */
static void poly_moments(const fl_shape *s, const double ref[3], double *vol, double m1[3],
                         double m2[9]) {
  double V = 0, M1[3] = {0, 0, 0}, M2[9] = {0};
  for (fl_int f = 0; f < s->nface; f++) {
    fl_int k0 = s->face_ptr[f], k1 = s->face_ptr[f + 1];
    double a[3];
    sub3(s->vert + 3 * s->face_vert[k0], ref, a);
    for (fl_int k = k0 + 1; k + 1 < k1; k++) {
      double b[3], c[3], bc[3], sum[3];
      sub3(s->vert + 3 * s->face_vert[k], ref, b);
      sub3(s->vert + 3 * s->face_vert[k + 1], ref, c);
      cross3(b, c, bc);
      double D = dot3(a, bc);
      V += D / 6;
      for (int i = 0; i < 3; i++) {
        sum[i] = a[i] + b[i] + c[i];
        M1[i] += D / 24 * sum[i];
      }
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          M2[3 * i + j] += D / 120 * (a[i] * a[j] + b[i] * b[j] + c[i] * c[j] + sum[i] * sum[j]);
    }
  }
  *vol = V;
  memcpy(m1, M1, sizeof(M1));
  memcpy(m2, M2, sizeof(M2));
}


/* the mean of the vertices: an interior reference point that keeps the sums well scaled */
static void vert_mean(const fl_shape *s, double c[3]) {
  c[0] = c[1] = c[2] = 0;
  for (fl_int v = 0; v < s->nvert; v++)
    for (int i = 0; i < 3; i++) c[i] += s->vert[3 * v + i];
  for (int i = 0; i < 3 && s->nvert > 0; i++) c[i] /= (double)s->nvert;
}


double fl_shape_volume(const fl_shape *s) {
  if (!s) return NAN;
  double r = s->size[0], h = s->size[1];
  switch (s->type) {
  case FL_SHAPE_PLANE: return INFINITY;
  case FL_SHAPE_SPHERE: return 4.0 / 3.0 * M_PI * r * r * r;
  case FL_SHAPE_BOX: return 8 * s->size[0] * s->size[1] * s->size[2];
  case FL_SHAPE_CAPSULE: return M_PI * r * r * (2 * h) + 4.0 / 3.0 * M_PI * r * r * r;
  case FL_SHAPE_CYLINDER: return M_PI * r * r * (2 * h);
  case FL_SHAPE_CONVEX: {
    double ref[3], V, m1[3], m2[9];
    vert_mean(s, ref);
    poly_moments(s, ref, &V, m1, m2);
    return V;
  }
  }
  return NAN;
}


int fl_shape_mass_properties(const fl_shape *s, double density, double *mass, double com[3],
                             double inertia[9]) {
  if (!s) return fl_seterr(FL_ERR_INVAL, "fl_shape_mass_properties: NULL shape");
  if (!(density > 0) || !isfinite(density))
    return fl_seterr(FL_ERR_INVAL, "mass properties: density = %g, expected a positive finite "
                     "value (kg/m^3)", density);
  if (s->type == FL_SHAPE_PLANE)
    return fl_seterr(FL_ERR_INVAL, "mass properties: a plane is unbounded (make it fixed)");
  double m = 0, c[3] = {0, 0, 0}, I[9] = {0}, r = s->size[0], h = s->size[1];
  switch (s->type) {
  case FL_SHAPE_SPHERE:
    m = density * 4.0 / 3.0 * M_PI * r * r * r;
    I[0] = I[4] = I[8] = 0.4 * m * r * r;
    break;
  case FL_SHAPE_BOX: {
    double x = s->size[0], y = s->size[1], z = s->size[2];
    m = density * 8 * x * y * z;
    I[0] = m / 3 * (y * y + z * z);
    I[4] = m / 3 * (x * x + z * z);
    I[8] = m / 3 * (x * x + y * y);
    break;
  }
  case FL_SHAPE_CYLINDER:
    m = density * M_PI * r * r * 2 * h;
    I[0] = I[4] = m * (3 * r * r + 4 * h * h) / 12;
    I[8] = m * r * r / 2;
    break;
  case FL_SHAPE_CAPSULE: {
    // cylinder of length 2h plus two hemispheres of mass mh whose centres sit at h + 3r/8:
    // about a transverse axis each adds 2/5 mh r^2 + mh (h^2 + 3 h r / 4)
    double mc = density * M_PI * r * r * 2 * h, mh = density * 2.0 / 3.0 * M_PI * r * r * r;
    m = mc + 2 * mh;
    I[0] = I[4] = mc * (3 * r * r + 4 * h * h) / 12 + 2 * mh * (0.4 * r * r + h * h + 0.75 * h * r);
    I[8] = mc * r * r / 2 + 2 * mh * 0.4 * r * r;
    break;
  }
  case FL_SHAPE_CONVEX: {
    double ref[3], V, m1[3], m2[9];
    vert_mean(s, ref);
    poly_moments(s, ref, &V, m1, m2);
    if (!(V > 0))
      return fl_seterr(FL_ERR_INVAL, "mass properties: convex shape has volume %g", V);
    double d[3];
    for (int i = 0; i < 3; i++) d[i] = m1[i] / V; // centroid relative to ref
    for (int i = 0; i < 3; i++) c[i] = ref[i] + d[i];
    m = density * V;
    // covariance about the centroid, then I = tr(C) 1 - C
    double C[9];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) C[3 * i + j] = density * (m2[3 * i + j] - V * d[i] * d[j]);
    double tr = C[0] + C[4] + C[8];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) I[3 * i + j] = (i == j ? tr : 0) - C[3 * i + j];
    // exact symmetry
    I[1] = I[3] = 0.5 * (I[1] + I[3]);
    I[2] = I[6] = 0.5 * (I[2] + I[6]);
    I[5] = I[7] = 0.5 * (I[5] + I[7]);
    break;
  }
  default: break;
  }
  if (mass) *mass = m;
  if (com) memcpy(com, c, sizeof(c));
  if (inertia) memcpy(inertia, I, sizeof(I));
  return FL_OK;
}


void fl_shape_recenter(fl_shape *s, double shift[3]) {
  double c[3] = {0, 0, 0};
  if (s && s->type == FL_SHAPE_CONVEX && s->nvert > 0) {
    double ref[3], V, m1[3], m2[9];
    vert_mean(s, ref);
    poly_moments(s, ref, &V, m1, m2);
    for (int i = 0; i < 3; i++) c[i] = ref[i] + (V > 0 ? m1[i] / V : 0);
    for (fl_int v = 0; v < s->nvert; v++)
      for (int i = 0; i < 3; i++) s->vert[3 * v + i] -= c[i];
    for (fl_int f = 0; f < s->nface; f++) s->face_offset[f] -= dot3(s->face_normal + 3 * f, c);
    double r2 = 0;
    for (fl_int v = 0; v < s->nvert; v++) r2 = fmax(r2, dot3(s->vert + 3 * v, s->vert + 3 * v));
    s->radius = sqrt(r2);
  }
  if (shift) memcpy(shift, c, sizeof(c));
}


/*---- bounding boxes ----*/

void fl_shape_aabb(const fl_shape *s, const double pos[3], const double quat[4], double margin,
                   double lo[3], double hi[3]) {
  double R[9], e[3] = {0, 0, 0};
  quat_mat(quat, R);
  switch (s->type) {
  case FL_SHAPE_PLANE: {
    // solid below the plane: bounded only along an axis the normal is aligned with
    for (int i = 0; i < 3; i++) lo[i] = -INFINITY, hi[i] = INFINITY;
    for (int i = 0; i < 3; i++) {
      double ni = R[3 * i + 2];
      if (ni > 1 - 1e-12) hi[i] = pos[i] + margin;
      if (ni < -1 + 1e-12) lo[i] = pos[i] - margin;
    }
    return;
  }
  case FL_SHAPE_SPHERE: e[0] = e[1] = e[2] = s->size[0]; break;
  case FL_SHAPE_BOX:
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) e[i] += fabs(R[3 * i + j]) * s->size[j];
    break;
  case FL_SHAPE_CAPSULE:
    for (int i = 0; i < 3; i++) e[i] = fabs(R[3 * i + 2]) * s->size[1] + s->size[0];
    break;
  case FL_SHAPE_CYLINDER:
    // a disc of radius r with unit normal a reaches r sqrt(1 - a_i^2) along axis i
    for (int i = 0; i < 3; i++) {
      double a = R[3 * i + 2];
      e[i] = fabs(a) * s->size[1] + s->size[0] * sqrt(fmax(0.0, 1 - a * a));
    }
    break;
  case FL_SHAPE_CONVEX: {
    // the rows of R and the running bounds in scalars (registers), glibc's fmin and fmax on
    // x86-64 inline (minsd, maxsd: the second when equal; a NaN operand passed over): the
    // same values as the loop over fmin and fmax calls
    double l[3] = {INFINITY, INFINITY, INFINITY}, h[3] = {-INFINITY, -INFINITY, -INFINITY};
    double r0 = R[0], r1 = R[1], r2 = R[2], r3 = R[3], r4 = R[4], r5 = R[5], r6 = R[6],
           r7 = R[7], r8 = R[8];
    double l0 = l[0], l1 = l[1], l2 = l[2], h0 = h[0], h1 = h[1], h2 = h[2];
    for (fl_int v = 0; v < s->nvert; v++) {
      const double *x = s->vert + 3 * v;
      double w0 = r0 * x[0] + r1 * x[1] + r2 * x[2];
      double w1 = r3 * x[0] + r4 * x[1] + r5 * x[2];
      double w2 = r6 * x[0] + r7 * x[1] + r8 * x[2];
      l0 = l0 < w0 || w0 != w0 ? l0 : w0, h0 = h0 > w0 || w0 != w0 ? h0 : w0;
      l1 = l1 < w1 || w1 != w1 ? l1 : w1, h1 = h1 > w1 || w1 != w1 ? h1 : w1;
      l2 = l2 < w2 || w2 != w2 ? l2 : w2, h2 = h2 > w2 || w2 != w2 ? h2 : w2;
    }
    l[0] = l0, l[1] = l1, l[2] = l2, h[0] = h0, h[1] = h1, h[2] = h2;
    for (int i = 0; i < 3; i++) lo[i] = pos[i] + l[i] - margin, hi[i] = pos[i] + h[i] + margin;
    return;
  }
  }
  for (int i = 0; i < 3; i++) lo[i] = pos[i] - e[i] - margin, hi[i] = pos[i] + e[i] + margin;
}

// SPDX-License-Identifier: Apache-2.0
/* collide_impl.h: what the narrow phase's files share (collide.c, collide_kit.c,
 * collide_poly.c): tolerances, small vector and pose helpers, the candidate buffer.
 * Never included outside sim/ and tests/.
 */
#ifndef FL_COLLIDE_IMPL_H
#define FL_COLLIDE_IMPL_H
// layer 4: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 4
#error "sim/collide_impl.h is in sim/, layer 4: a lower layer may not include it (docs/layers.md)"
#endif

#include <math.h>
#include <stdint.h>

#include "fl_geometry.h"

#define CAND_MAX 2100 /* >= 2 * FACE_MAX (shapes.c) + a few */
#define CLIP_MAX 2100

/* ties within this fraction of the shapes' size go to the face (then to a's face) so the
 * manifold does not flicker between equivalent choices */
#define FACE_PREF 1e-4
/* cos 15 deg: faces and a winning edge axis this close to parallel make a face contact, not an
 * edge one (collide_poly.c, flat_faces) */
#define FLAT_COS 0.96592582628906829
/* separated pairs farther apart than this fraction of the shapes' size get exact closest
 * points (closer ones keep the separating axis, whose direction rounding cannot spoil) */
#define SEP_EXACT 1e-6
/* polyhedra with at most this many edges get their gauss-map arcs cached per call */
#define GAUSS_CACHE 4096
/* polyhedra with at most this many edges have their equal or opposite arcs grouped (boxes) */
#define ARC_UNIQUE_MAX 24
/* polyhedra with at most this many vertices, faces and edges get b's vertices, normals and the
 * first Gauss-map dots placed once per call in the edge-pair loop */
#define PRE_MAX 32

/* collide_poly.c: 1 (default) shares the Gauss-map test's dots among equal or opposite arcs;
 * 0 makes them per edge pair (the same results; tests compare the two) */
extern int fl__cl_arc_share;
/* collide_poly.c: 1 (default) uses closed forms and bounds for boxes (faces, edge pairs, exact
 * distance) and places b's vertices and normals once per call in the edge-pair loop; 0 the
 * general loops (the same results; tests compare the two) */
extern int fl__cl_box_fast;
/* collide_poly.c: the cosine below which faces are not nearly flat (FLAT_COS; tests and
 * experiments change it; 2 turns the flat case off) */
extern double fl__cl_flat_cos;
/* collide_poly.c: 1 (default) tests first the axis that separated a pair of shapes last time
 * (the same contacts; tests compare) */
extern int fl__cl_sep_hints;
/* collide_poly.c: 1 makes polyhedron pairs run the whole search also where their coherence
 * reference lets it go, and count in fl__cl_coherence_wrong the calls whose search contradicts
 * the reference's claims (tests); 0 (default) */
extern int fl__cl_coherence_check;
extern unsigned long fl__cl_coherence_checked, fl__cl_coherence_wrong;
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


static inline void make_pose(const double pos[3], const double q[4], pose *P) {
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
static inline void perp(const double u[3], double o[3]) {
  double e[3] = {0, 0, 0};
  int k = fabs(u[0]) <= fabs(u[1]) ? (fabs(u[0]) <= fabs(u[2]) ? 0 : 2)
                                   : (fabs(u[1]) <= fabs(u[2]) ? 1 : 2);
  e[k] = 1;
  cross3(u, e, o);
  double n = norm3(o);
  o[0] /= n, o[1] /= n, o[2] /= n;
}


/* What the separating-axis search of a pair of polyhedra (not two boxes) learned at a
 * reference pose, kept across steps by the world (rigid.c) so that the next steps can skip
 * searches whose outcome is provably the same (collide_poly.c, "temporal coherence"). The
 * owner zeroes an entry and fills the key and the guard; collide_poly.c fills the rest. */
typedef struct fl__hull_pair {
  fl_int i, j;               /* key: the bodies (i < j); used: 1 once set */
  int used;
  const fl_shape *a, *b;     /* guard: the shapes, vertex arrays and counts it was made for */
  const double *va, *vb;
  fl_int nva, nvb;
  int valid;                 /* 1: the reference below holds */
  double Rab[9], tab[3];     /* b in a's frame at the reference pose */
  double dbar;               /* m, upper bound on the signed distance there (SAT max when
                                overlapping, else a distance between points of the shapes) */
  fl_int fa, fb;             /* the best faces of a and of b there */
  double lead_a, lead_b;     /* m, their separations' leads over the runners-up */
  double sf;                 /* m, the larger of the two faces' separations there */
  int fails, wait;           /* failed tries in a row; calls left before the next try */
  unsigned long skipped;     /* calls whose edge-pair loop the reference let go (statistics) */
  unsigned long full;        /* calls that ran the whole search */
} fl__hull_pair;

/* fl_collide with the poses made (make_pose of each body's position and quaternion, as
 * fl_collide makes them): the same contacts and return codes, without the pose and shape
 * checks, which the caller makes (once per body, fl__collide_check_shape). hc: the pair's
 * coherence entry (used by polyhedron pairs only) or NULL. collide.c. */
int fl__collide_posed(const fl_shape *a, const pose *A, const fl_shape *b, const pose *B,
                      double margin, fl__hull_pair *hc, fl_manifold_point *out);
/* fl_collide's check of a shape (a known type; a polyhedron for boxes, cylinders and hulls):
 * FL_OK or FL_ERR_INVAL with a message naming the shape `name`. collide.c. */
int fl__collide_check_shape(const fl_shape *s, const char *name);


/*---- candidate points (collide_kit.c) ----*/

typedef struct cand {
  double p[3], n[3], phi;
  uint32_t fa, fb;
} cand;

typedef struct cbuf {
  cand c[CAND_MAX];
  int n;
} cbuf;

void fl__cl_add_a(cbuf *B, const double pa[3], const double n[3], double phi, uint32_t fa,
                  uint32_t fb);
void fl__cl_add_b(cbuf *B, const double pb[3], const double n[3], double phi, uint32_t fa,
                  uint32_t fb);
void fl__cl_reduce(cbuf *B, int m);
void fl__cl_seg_closest(const double p1[3], const double d1[3], const double p2[3],
                        const double d2[3], double *s_out, double *t_out, double c1[3],
                        double c2[3]);
uint32_t fl__cl_cap_feat(double t);
void fl__cl_cap_segment(const fl_shape *s, const pose *P, double p[3], double d[3]);
void fl__cl_dir_or(const double d[3], const double fallback[3], double n[3]);
double fl__cl_poly_closest(const fl_shape *b, const double c[3], double q[3], double nb[3],
                           uint32_t *feat);
void fl__cl_poly_poly(const fl_shape *a, const pose *A, const fl_shape *b, const pose *Bp,
                      double margin, fl__hull_pair *hc, cbuf *B);

#endif /* FL_COLLIDE_IMPL_H */

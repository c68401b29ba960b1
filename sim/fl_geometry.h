// SPDX-License-Identifier: Apache-2.0
/* fl_geometry.h: shapes, mass properties, narrow phase contact manifolds and the broad phase.
 *
 * Units are SI throughout: lengths in m, densities in kg/m^3, masses in kg, inertias in kg m^2.
 *
 * Frames. Every shape is described in its body frame. A pose is the world position of the
 * body frame's origin, pos[3], and a unit quaternion quat[4] = (w, x, y, z) that rotates body
 * vectors into the world frame (x_world = pos + R(quat) x_body). Quaternions need not be exactly
 * normalized; the functions here normalize a copy.
 *
 * Shapes (all centred on the body origin unless built from points):
 *   FL_SHAPE_PLANE    the half space z <= 0 of the body frame (surface z = 0, outward normal
 *                     +z). A plane of any orientation is a plane shape with a rotated pose.
 *   FL_SHAPE_SPHERE   radius size[0].
 *   FL_SHAPE_BOX      half extents size[0..2] along the body x, y, z axes.
 *   FL_SHAPE_CAPSULE  radius size[0], segment from (0,0,-size[1]) to (0,0,+size[1]).
 *   FL_SHAPE_CYLINDER radius size[0], half length size[1] along body z.
 *   FL_SHAPE_CONVEX   convex polyhedron (hull of given points).
 *
 * Polyhedral data. Boxes, cylinders and convex shapes carry a polyhedron (vert, faces, edges)
 * in the body frame: a box its exact 8 vertices and 6 faces; a cylinder a prism with
 * cyl_segments sides inscribed in the circle (used against everything but planes, spheres and
 * a box's face the cylinder lies on, see fl_collide); a convex shape its hull. Planes, spheres and capsules have nvert = nface =
 * nedge = 0 and NULL arrays. The arrays of a shape are owned by it (allocated with fl_malloc,
 * released by fl_shape_free); a shape may be copied with fl_shape_copy but not by struct
 * assignment if both copies are later freed.
 *
 * Contact conventions (fl_collide):
 *   - normal n points from shape a towards shape b (a unit vector in the world frame);
 *   - phi is the signed distance between the surfaces along n: > 0 apart, < 0 overlapping (m);
 *   - the contact point p is midway between the two surfaces: p = (pa + pb)/2 with
 *     pb - pa = phi n, pa on a's surface and pb on b's surface (exception: a capsule against
 *     a polyhedron's face gives, per clipped segment point x, the gap of the ball of radius r
 *     at x, so the capsule's end x - r n lies inside the capsule when the segment is tilted);
 *   - a pair returns every contact point with phi <= margin (the speculative margin, m);
 *   - feature ids: feature = ((int64_t)fa << 32) | fb, where fa and fb are 32-bit codes of the
 *     features of a and b that produced the point (FL_FEAT_* kind in bits 28..31, index in bits
 *     0..27: vertex, edge or face index of the polyhedron; CENTER 0 for a sphere; VERTEX 0/1
 *     for a capsule's end caps and EDGE 2 for its side; the exact cylinder's codes are listed in
 *     docs/collision.md). A clipped face-face point is (reference FACE, incident VERTEX), (side
 *     EDGE of the reference face, incident EDGE) where they cross, or (reference VERTEX,
 *     incident FACE). The same pair of features gives the same id from step to step, so
 *     impulses can be matched across steps; ids are unique within one manifold.
 *
 * Thread-safety: no global state (fl_collide's scratch, its separating-axis hints per pair of
 * shapes, which never change a result, and fl_seterr's message are thread-local), so every
 * function may run on several threads at once on different outputs.
 * See docs/collision.md for the algorithms and their limits.
 */
#ifndef FL_GEOMETRY_H
#define FL_GEOMETRY_H
// layer 4: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 4
#error "sim/fl_geometry.h is in sim/, layer 4: a lower layer may not include it (docs/layers.md)"
#endif

#include <stdint.h>

#include "../core/fl_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- shapes ----*/

typedef enum fl_shape_type {
  FL_SHAPE_PLANE,
  FL_SHAPE_SPHERE,
  FL_SHAPE_BOX,
  FL_SHAPE_CAPSULE,
  FL_SHAPE_CYLINDER,
  FL_SHAPE_CONVEX
} fl_shape_type;

#define FL_SHAPE_NTYPES 6

/* Default number of sides of the polyhedral cylinder (fl_shape_make_cylinder with segments
 * <= 0). With 24 sides the inscribed prism's radius varies between r cos(pi/24) = 0.9914 r and
 * r, i.e. a radial error of at most 0.86 %. */
#define FL_CYL_SEGMENTS_DEFAULT 24

typedef struct fl_shape {
  fl_shape_type type;
  double size[3];      /* sphere: r; box: half extents; capsule and cylinder: r, half length
                          along local z; plane and convex: unused (0) */
  fl_int nvert, nface; /* polyhedron (box, cylinder, convex), body frame; 0 otherwise */
  double *vert;        /* (nvert x 3) vertices (m) */
  fl_int *face_ptr;    /* (nface + 1) face f owns face_vert[face_ptr[f] .. face_ptr[f+1]) */
  fl_int *face_vert;   /* vertices of each face, counter-clockwise seen from outside */
  double *face_normal; /* (nface x 3) outward unit normals */
  fl_int cyl_segments; /* sides of the polyhedral cylinder (0 for other shapes) */
  /* extensions beyond the agreed interface (filled by every maker) */
  fl_int nedge;        /* unique edges of the polyhedron */
  fl_int *edge;        /* (nedge x 2) vertex pairs, edge[2e] < edge[2e+1] */
  fl_int *edge_face;   /* (nedge x 2) faces beside edge e: edge_face[2e] runs it from edge[2e]
                          to edge[2e+1] (counter-clockwise), edge_face[2e+1] the other way */
  fl_int *face_edge;   /* (face_ptr[nface]) edge from face_vert[k] to the next vertex of its face */
  double *face_offset; /* (nface) plane offsets d (m): face f lies in {x : n_f . x = d_f} and
                          every vertex has n_f . x <= d_f */
  double radius;       /* bounding radius about the body origin (m); INFINITY for a plane */
} fl_shape;

/* Makers. Each writes a complete shape into *out (any previous content is overwritten, not
 * freed) and returns FL_OK, FL_ERR_INVAL (non-positive, NaN or infinite size, named in the
 * message) or FL_ERR_NOMEM. On error *out is left empty (safe to fl_shape_free). */
int fl_shape_make_plane(fl_shape *out);
int fl_shape_make_sphere(double r, fl_shape *out);
int fl_shape_make_box(double hx, double hy, double hz, fl_shape *out);
int fl_shape_make_capsule(double r, double half_length, fl_shape *out);
/* segments: sides of the polyhedral approximation, 3..1024, or <= 0 for
 * FL_CYL_SEGMENTS_DEFAULT. The exact cylinder is used for mass properties, AABBs and against
 * planes; the polyhedron against boxes, convex shapes, capsules and other cylinders. */
int fl_shape_make_cylinder(double r, double half_length, fl_int segments, fl_shape *out);

/* Convex hull of n points (pts is n x 3, body frame, m). Faces are computed (quickhull with
 * exact-ish tolerance relative to the point cloud's extent) and coplanar facets are merged into
 * polygons, so a box's 8 corners give 6 quadrilaterals. Points inside the hull are dropped.
 * The shape is not recentred (see fl_shape_recenter). Returns FL_ERR_INVAL when n < 4, a point
 * is NaN/infinite, or the points are (nearly) coplanar; FL_ERR_NOMEM. */
int fl_shape_make_convex(const double *pts, fl_int n, fl_shape *out);

/* Deep copy of src into *out. FL_OK or FL_ERR_NOMEM. */
int fl_shape_copy(const fl_shape *src, fl_shape *out);

/* Frees the arrays and zeroes the struct. NULL-safe; safe on a zeroed or freed shape. */
void fl_shape_free(fl_shape *s);

/* Mass properties for a uniform density (kg/m^3): mass (kg), centre of mass com[3] (body
 * frame, m) and the inertia tensor about the centre of mass in body axes, inertia[9] (row-major,
 * kg m^2). Exact closed forms for sphere, box, capsule and cylinder (the exact round cylinder,
 * not its polygon); polyhedra by the divergence theorem over a triangulation of the faces
 * (Mirtich 1996 / Eberly), exact up to rounding. Any output pointer may be NULL. Returns
 * FL_ERR_INVAL for a plane (unbounded) or a density that is not positive and finite. */
int fl_shape_mass_properties(const fl_shape *s, double density, double *mass, double com[3],
                             double inertia[9]);

/* Volume (m^3) of a shape; INFINITY for a plane. */
double fl_shape_volume(const fl_shape *s);

/* Moves a convex shape's vertices so that its centre of volume is the body origin and returns
 * in shift[3] the centroid's position in the old frame (so old = new + shift; a body built from
 * world-frame points should then be placed at pos = shift). Sphere, box, capsule, cylinder and
 * plane are already centred: shift = 0. shift may be NULL. */
void fl_shape_recenter(fl_shape *s, double shift[3]);

/* World-frame axis-aligned bounding box of a shape at a pose, grown by margin (m) on every
 * side: lo[3], hi[3]. Exact (tight) for sphere, box, capsule, cylinder and convex; a plane gets
 * +-INFINITY on the axes it is not perpendicular to (and on all axes when tilted). */
void fl_shape_aabb(const fl_shape *s, const double pos[3], const double quat[4], double margin,
                   double lo[3], double hi[3]);

/* Triangle surface of a shape, for drawing only (viewer, VTK), in the body frame (m).
 * Polyhedra (box, cylinder, convex) fan-triangulate their own faces and keep their vertices;
 * spheres and capsules get a 24 x 12 latitude-longitude grid; a plane a square of half side
 * plane_half (m) in its surface z = 0, centred at (plane_centre[0], plane_centre[1]) of the
 * plane's frame (NULL: the origin). Triangles are counter-clockwise seen from outside.
 * *vert (nvert x 3) and *tri (ntri x 3) are allocated with fl_malloc and owned by the caller.
 * Returns FL_OK, FL_ERR_INVAL (a plane with plane_half not positive and finite) or
 * FL_ERR_NOMEM; the outputs are empty on error. */
int fl_shape_tessellate(const fl_shape *s, double plane_half, const double plane_centre[2],
                        fl_int *nvert, double **vert, fl_int *ntri, fl_int **tri);

/*---- narrow phase ----*/

/* Feature kinds of the 32-bit feature codes (bits 28..31). */
enum { FL_FEAT_VERTEX = 1, FL_FEAT_EDGE = 2, FL_FEAT_FACE = 3, FL_FEAT_CENTER = 4,
       FL_FEAT_CLIP = 5 };
#define FL_FEAT(kind, index) ((uint32_t)(((uint32_t)(kind) << 28) | ((uint32_t)(index) & 0x0FFFFFFFu)))

typedef struct fl_manifold_point {
  double p[3];     /* world point, midway between the two surfaces (m) */
  double n[3];     /* unit normal pointing from shape a towards shape b (world frame) */
  double phi;      /* signed distance (m), < 0 when overlapping */
  int64_t feature; /* id stable across steps for the same pair of features (see above) */
} fl_manifold_point;

#define FL_MANIFOLD_MAX 8

/* All contact points of shapes a and b at poses (pa, qa) and (pb, qb) with phi <= margin
 * (margin >= 0, m). Writes 0..FL_MANIFOLD_MAX points to out (room for FL_MANIFOLD_MAX) and
 * returns their number, or a negative code: FL_ERR_UNSUPPORTED for plane-plane (no algorithm),
 * FL_ERR_INVAL for NULL arguments or a negative/NaN margin. Points of one manifold share one
 * normal except for curved pairs (sphere, capsule). Face-face contacts are clipped (Sutherland-
 * Hodgman) and reduced to at most FL_MANIFOLD_MAX points keeping the deepest point and the
 * widest spread. Allocates nothing (scratch is thread-local static memory, about 380 kB per
 * thread); safe to call from several threads at once. */
int fl_collide(const fl_shape *a, const double pa[3], const double qa[4], const fl_shape *b,
               const double pb[3], const double qb[4], double margin, fl_manifold_point *out);

/* 1 when fl_collide has an algorithm for the pair of types (every pair but plane-plane). */
int fl_collide_supported(fl_shape_type a, fl_shape_type b);

/*---- broad phase ----*/

/* All pairs (i < j) of overlapping axis-aligned boxes among n boxes (lo, hi are n x 3; boxes
 * that touch count as overlapping), excluding pairs where both skip[i] and skip[j] are nonzero
 * (fixed bodies; skip may be NULL). Boxes with infinite extents (planes) are fine. A uniform
 * grid (cell 1.5 x the 95th percentile of the boxes' largest side) holds the boxes; larger
 * boxes query it, and unbounded ones are tested against all: O(n + k) for k pairs when
 * few boxes are much larger than the rest (see docs/collision.md); up to 128 boxes, one sweep
 * along x instead (the same pairs). On success *pairs (2 x npairs: pair k is
 * (*pairs)[2k], (*pairs)[2k+1], sorted by i then j) is allocated with fl_malloc and freed by the
 * caller with fl_free (NULL when npairs = 0). Returns FL_OK, FL_ERR_INVAL (n < 0, NULL arrays,
 * NaN bounds) or FL_ERR_NOMEM. */
int fl_broadphase(fl_int n, const double *lo, const double *hi, const unsigned char *skip,
                  fl_int **pairs, fl_int *npairs);

#ifdef __cplusplus
}
#endif
#endif /* FL_GEOMETRY_H */

// SPDX-License-Identifier: Apache-2.0
/* fem_collide.c: contacts of deformable bodies (see fl_fem.h and docs/fem.md).
 *
 * The query is vertex based, as the rows of J need barycentric weights on mesh vertices:
 *   mesh vs rigid   every boundary vertex x of the mesh against every rigid body whose AABB
 *                   (grown by the margin) holds it: the signed distance of x to the exact
 *                   shape (plane, sphere, box, capsule, round cylinder; a convex hull by its
 *                   deepest face plane), the normal of the shape's surface at the closest
 *                   point. Side a is the rigid body, side b the vertex (weight 1).
 *   rigid vs mesh   every vertex of a rigid polyhedron (box, convex hull, a cylinder's rim
 *                   points) against the boundary triangles of the mesh, as below; side a is
 *                   the triangle, side b the rigid body.
 *   mesh vs mesh    every boundary vertex of one mesh against the boundary triangles of the
 *                   other whose plane it is within [-depth, margin] of and whose projection
 *                   falls inside the triangle; the nearest such triangle. Side a is the
 *                   triangle (its three vertices with barycentric weights), side b the vertex.
 *                   Both directions are queried.
 * Misses: edge-edge contact between meshes (caught only once a vertex crosses), self-contact,
 * vertices deeper than `depth` (a fraction of the other mesh's surface edge length) in another
 * mesh. The feature id of a contact is its vertex, stable from step to step.
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "fl_fem.h"
#include "world_impl.h"

/* A new zeroed contact at the end of *ct. */
static int push(fl__contact **ct, fl_int *nct, fl_int *cap, fl__contact **out) {
  FL_TRY(fl_grow((void **)ct, cap, *nct + 1, sizeof(fl__contact), "fem contacts"));
  *out = &(*ct)[(*nct)++];
  memset(*out, 0, sizeof **out);
  return FL_OK;
}


/* Signed distance (m) of the body-frame point x to shape s, with the outward unit normal n
 * (body frame) of the surface at the closest point. */
static double shape_sdf(const fl_shape *s, const double x[3], double n[3]) {
  n[0] = n[1] = 0;
  n[2] = 1;
  switch (s->type) {
  case FL_SHAPE_PLANE:
    return x[2];
  case FL_SHAPE_SPHERE: {
    double r = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    if (r > 0) {
      for (int k = 0; k < 3; k++) n[k] = x[k] / r;
    }
    return r - s->size[0];
  }
  case FL_SHAPE_BOX: {
    double q[3], out2 = 0, inmax = -INFINITY;
    int kmax = 0;
    for (int k = 0; k < 3; k++) {
      q[k] = fabs(x[k]) - s->size[k];
      if (q[k] > 0) out2 += q[k] * q[k];
      if (q[k] > inmax) {
        inmax = q[k];
        kmax = k;
      }
    }
    if (out2 > 0) {
      double d = sqrt(out2);
      for (int k = 0; k < 3; k++) n[k] = q[k] > 0 ? copysign(q[k], x[k]) / d : 0;
      return d;
    }
    n[0] = n[1] = n[2] = 0;
    n[kmax] = x[kmax] >= 0 ? 1 : -1;
    return inmax;
  }
  case FL_SHAPE_CAPSULE: {
    double h = s->size[1], z = x[2] < -h ? -h : (x[2] > h ? h : x[2]);
    double d[3] = {x[0], x[1], x[2] - z};
    double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (r > 0) {
      for (int k = 0; k < 3; k++) n[k] = d[k] / r;
    } else {
      n[0] = 1;
      n[2] = 0;
    }
    return r - s->size[0];
  }
  case FL_SHAPE_CYLINDER: {
    double rho = sqrt(x[0] * x[0] + x[1] * x[1]);
    double dr = rho - s->size[0], dz = fabs(x[2]) - s->size[1];
    double er[3] = {1, 0, 0}, ez[3] = {0, 0, x[2] >= 0 ? 1 : -1};
    if (rho > 0) {
      er[0] = x[0] / rho;
      er[1] = x[1] / rho;
    }
    if (dr > 0 && dz > 0) {
      double d = sqrt(dr * dr + dz * dz);
      for (int k = 0; k < 3; k++) n[k] = (dr * er[k] + dz * ez[k]) / d;
      return d;
    }
    const double *e = dr > dz ? er : ez;
    memcpy(n, e, 3 * sizeof(double));
    return dr > dz ? dr : dz;
  }
  case FL_SHAPE_CONVEX: {
    // the deepest face plane: exact inside and over a face, a lower bound near edges outside
    double best = -INFINITY;
    for (fl_int f = 0; f < s->nface; f++) {
      const double *fn = s->face_normal + 3 * f;
      double d = fn[0] * x[0] + fn[1] * x[1] + fn[2] * x[2] - s->face_offset[f];
      if (d > best) {
        best = d;
        memcpy(n, fn, 3 * sizeof(double));
      }
    }
    return best;
  }
  }
  return INFINITY;
}


/* Mesh AABB over its boundary vertices at the current positions. */
static void mesh_box(const fl_fem_body *b, double lo[3], double hi[3]) {
  for (int k = 0; k < 3; k++) {
    lo[k] = INFINITY;
    hi[k] = -INFINITY;
  }
  for (fl_int i = 0; i < b->mesh->nsurf; i++) {
    const double *x = b->x + 3 * b->mesh->surf[i];
    for (int k = 0; k < 3; k++) {
      if (x[k] < lo[k]) lo[k] = x[k];
      if (x[k] > hi[k]) hi[k] = x[k];
    }
  }
}


static int boxes_overlap(const double alo[3], const double ahi[3], const double blo[3],
                         const double bhi[3], double margin) {
  for (int k = 0; k < 3; k++) {
    if (alo[k] > bhi[k] + margin || blo[k] > ahi[k] + margin) return 0;
  }
  return 1;
}


/* 1 when vertex i of body b has a free dof (a fully held vertex against a non-dynamic body
 * gives a row with no unknowns). */
static int vertex_free(const fl_fem_body *b, fl_int i) {
  return !b->held[3 * i] || !b->held[3 * i + 1] || !b->held[3 * i + 2];
}


static int mesh_vs_rigid(fl_world *w, fl_int k, fl_int j, double margin, fl__contact **ct,
                         fl_int *nct, fl_int *cap) {
  const fl_fem_body *b = w->fem[k];
  const fl_body *rb = &w->body[j];
  double R[9];
  fl_quat_to_mat(rb->quat, R);
  double lo[3], hi[3];
  fl_shape_aabb(&rb->shape, rb->pos, rb->quat, margin, lo, hi);
  int rigid_dyn = rb->dof >= 0;
  for (fl_int s = 0; s < b->mesh->nsurf; s++) {
    fl_int i = b->mesh->surf[s];
    const double *x = b->x + 3 * i;
    if (x[0] < lo[0] || x[0] > hi[0] || x[1] < lo[1] || x[1] > hi[1] || x[2] < lo[2] ||
        x[2] > hi[2])
      continue;
    if (!rigid_dyn && !vertex_free(b, i)) continue;
    double d[3], xl[3], nl[3];
    for (int c = 0; c < 3; c++) d[c] = x[c] - rb->pos[c];
    for (int c = 0; c < 3; c++) xl[c] = R[c] * d[0] + R[3 + c] * d[1] + R[6 + c] * d[2];
    double phi = shape_sdf(&rb->shape, xl, nl);
    if (!(phi <= margin)) continue;
    fl__contact *c;
    FL_TRY(push(ct, nct, cap, &c));
    memset(c, 0, sizeof *c);
    c->a = fl__rigid_side(j);
    c->b = (fl__side){
        .kind = FL__KIND_FEM, .id = k, .nvert = 1, .vert = {i, 0, 0}, .wt = {1, 0, 0}};
    fl_m3_mulv(R, nl, c->n);
    c->phi = phi;
    for (int q = 0; q < 3; q++) c->p[q] = x[q] - 0.5 * phi * c->n[q];
    c->feature = i;
  }
  return FL_OK;
}


/* Closest point data of x against triangle (p0, p1, p2): barycentric weights of x's
 * projection on the plane and the signed distance along the outward normal n. */
static double tri_plane(const double *p0, const double *p1, const double *p2, const double x[3],
                        double n[3], double wt[3]) {
  double e1[3], e2[3], r[3];
  for (int c = 0; c < 3; c++) {
    e1[c] = p1[c] - p0[c];
    e2[c] = p2[c] - p0[c];
    r[c] = x[c] - p0[c];
  }
  fl_v3_cross(e1, e2, n);
  double a2 = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  if (!(a2 > 0)) return NAN;
  for (int c = 0; c < 3; c++) n[c] /= a2;
  double phi = n[0] * r[0] + n[1] * r[1] + n[2] * r[2];
  // barycentric coordinates of the projection (Gram system)
  double d11 = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2];
  double d12 = e1[0] * e2[0] + e1[1] * e2[1] + e1[2] * e2[2];
  double d22 = e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2];
  double r1 = r[0] * e1[0] + r[1] * e1[1] + r[2] * e1[2];
  double r2 = r[0] * e2[0] + r[1] * e2[1] + r[2] * e2[2];
  double det = d11 * d22 - d12 * d12;
  double u = (d22 * r1 - d12 * r2) / det, v = (d11 * r2 - d12 * r1) / det;
  wt[0] = 1 - u - v;
  wt[1] = u;
  wt[2] = v;
  return phi;
}


/* 1 when x lies in one of mesh b's tets (barycentric coordinates >= -tol), at its current
 * positions. A vertex below a boundary triangle's plane is inside the mesh only if this
 * holds: beside a slanted face (a voussoir's joint, a wedge) a point outside the mesh can lie
 * below another face's plane and project into it. */
static int inside_mesh(const fl_fem_body *b, const double x[3]) {
  const fl_mesh *m = b->mesh;
  const double tol = 1e-9;
  for (fl_int e = 0; e < m->ntet; e++) {
    const fl_int *t = m->tet + 4 * e;
    const double *p0 = b->x + 3 * t[0];
    double D[9], r[3];
    for (int k = 0; k < 3; k++) {
      r[k] = x[k] - p0[k];
      for (int c = 0; c < 3; c++) D[3 * c + k] = b->x[3 * t[k + 1] + c] - p0[c];
    }
    // quick reject by the tet's box
    int out = 0;
    for (int c = 0; c < 3 && !out; c++) {
      double lo = p0[c], hi = p0[c];
      for (int k = 1; k < 4; k++) {
        lo = fmin(lo, b->x[3 * t[k] + c]);
        hi = fmax(hi, b->x[3 * t[k] + c]);
      }
      out = x[c] < lo - tol * (hi - lo + 1) || x[c] > hi + tol * (hi - lo + 1);
    }
    if (out) continue;
    double Di[9], l[3];
    if (fl_m3_inv(D, Di) < 0) continue;
    for (int c = 0; c < 3; c++) l[c] = Di[3 * c] * r[0] + Di[3 * c + 1] * r[1] + Di[3 * c + 2] * r[2];
    if (l[0] >= -tol && l[1] >= -tol && l[2] >= -tol && l[0] + l[1] + l[2] <= 1 + tol) return 1;
  }
  return 0;
}


/* Penetration depth (m) accepted against mesh a: half the mean length of its boundary edges. */
static double surface_depth(const fl_fem_body *A) {
  const fl_mesh *ma = A->mesh;
  double elen = 0;
  for (fl_int t = 0; t < ma->ntri; t++) {
    const fl_int *v = ma->tri + 3 * t;
    for (int e = 0; e < 3; e++) {
      const double *p = A->x + 3 * v[e], *q = A->x + 3 * v[(e + 1) % 3];
      elen += sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                   (p[2] - q[2]) * (p[2] - q[2]));
    }
  }
  return ma->ntri > 0 ? 0.5 * elen / (3.0 * (double)ma->ntri) : 0;
}


/* The boundary triangle of mesh A nearest to the world point x among those whose plane x is
 * within [-depth, margin] of and whose projection holds x (a point below a plane counts only
 * if it lies inside A). Returns the triangle, or -1; n (outward unit normal), wt (barycentric
 * weights, clamped to >= 0 and summing to 1) and phi (signed distance, m) describe it. */
static fl_int nearest_triangle(const fl_fem_body *A, const double x[3], double margin,
                               double depth, double n[3], double wt[3], double *phi) {
  const fl_mesh *ma = A->mesh;
  const double tol = 1e-9;
  int deep = -1; // whether x is inside mesh A: asked once, when a triangle would say so
  double best = INFINITY;
  fl_int bt = -1;
  for (fl_int t = 0; t < ma->ntri; t++) {
    const fl_int *v = ma->tri + 3 * t;
    const double *p0 = A->x + 3 * v[0], *p1 = A->x + 3 * v[1], *p2 = A->x + 3 * v[2];
    int far = 0;
    for (int c = 0; c < 3 && !far; c++) {
      double lo = fmin(p0[c], fmin(p1[c], p2[c])), hi = fmax(p0[c], fmax(p1[c], p2[c]));
      far = x[c] < lo - margin - depth || x[c] > hi + margin + depth;
    }
    if (far) continue;
    double tn[3], tw[3];
    double tphi = tri_plane(p0, p1, p2, x, tn, tw);
    if (!(tphi <= margin && tphi >= -depth)) continue;
    if (tw[0] < -tol || tw[1] < -tol || tw[2] < -tol) continue;
    if (tphi < 0 && deep < 0) deep = inside_mesh(A, x);
    if (tphi < 0 && !deep) continue;
    if (fabs(tphi) < best) {
      best = fabs(tphi);
      *phi = tphi;
      bt = t;
      memcpy(n, tn, sizeof tn);
      memcpy(wt, tw, sizeof tw);
    }
  }
  if (bt < 0) return -1;
  double ws = 0;
  for (int e = 0; e < 3; e++) ws += wt[e] = wt[e] < 0 ? 0 : wt[e];
  for (int e = 0; e < 3; e++) wt[e] /= ws;
  return bt;
}


/* Appends the contact of side b at world point x against triangle t of mesh ka (from
 * nearest_triangle: weights wt, normal n from the triangle to b, signed distance phi). */
static int push_triangle_contact(const fl_world *w, fl_int ka, fl_int t, const double wt[3],
                                 const double n[3], double phi, const double x[3], fl__side b,
                                 int64_t feature, fl__contact **ct, fl_int *nct, fl_int *cap) {
  const fl_int *v = w->fem[ka]->mesh->tri + 3 * t;
  fl__contact *c;
  FL_TRY(push(ct, nct, cap, &c));
  memset(c, 0, sizeof *c);
  c->a = (fl__side){.kind = FL__KIND_FEM, .id = ka, .nvert = 3, .vert = {v[0], v[1], v[2]},
                    .wt = {wt[0], wt[1], wt[2]}};
  c->b = b;
  memcpy(c->n, n, 3 * sizeof(double));
  c->phi = phi;
  for (int q = 0; q < 3; q++) c->p[q] = x[q] - 0.5 * phi * n[q];
  c->feature = feature;
  return FL_OK;
}


/* Boundary vertices of mesh kb against the boundary triangles of mesh ka. */
static int mesh_vs_mesh(fl_world *w, fl_int ka, fl_int kb, double margin, fl__contact **ct,
                        fl_int *nct, fl_int *cap) {
  const fl_fem_body *A = w->fem[ka], *B = w->fem[kb];
  double depth = surface_depth(A), alo[3], ahi[3];
  mesh_box(A, alo, ahi);
  for (fl_int s = 0; s < B->mesh->nsurf; s++) {
    fl_int i = B->mesh->surf[s];
    const double *x = B->x + 3 * i;
    int inside = 1;
    for (int c = 0; c < 3; c++) inside &= x[c] >= alo[c] - margin && x[c] <= ahi[c] + margin;
    if (!inside) continue;
    double n[3], wt[3], phi = 0;
    fl_int t = nearest_triangle(A, x, margin, depth, n, wt, &phi);
    if (t < 0) continue;
    const fl_int *v = A->mesh->tri + 3 * t;
    int anyfree = vertex_free(B, i);
    for (int e = 0; e < 3; e++) anyfree |= vertex_free(A, v[e]);
    if (!anyfree) continue;
    fl__side b = {.kind = FL__KIND_FEM, .id = kb, .nvert = 1, .vert = {i, 0, 0}, .wt = {1, 0, 0}};
    FL_TRY(push_triangle_contact(w, ka, t, wt, n, phi, x, b, i, ct, nct, cap));
  }
  return FL_OK;
}


/* The vertices of rigid polyhedron j (box, convex hull, a cylinder's rim points) against the
 * boundary triangles of mesh k: a knife edge or a corner pressing into a face between the
 * mesh's vertices, which mesh_vs_rigid cannot see. alo, ahi: the mesh's bounding box. Side a
 * is the triangle, side b the rigid body; the feature is the polyhedron's vertex. */
static int rigid_vs_mesh(fl_world *w, fl_int j, fl_int k, const double alo[3],
                         const double ahi[3], double margin, fl__contact **ct, fl_int *nct,
                         fl_int *cap) {
  const fl_body *rb = &w->body[j];
  const fl_shape *sh = &rb->shape;
  if (sh->nvert == 0) return FL_OK;
  const fl_fem_body *A = w->fem[k];
  double depth = -1, R[9]; /* depth: computed once a vertex is near the mesh */
  fl_quat_to_mat(rb->quat, R);
  for (fl_int i = 0; i < sh->nvert; i++) {
    double x[3];
    fl_m3_mulv(R, sh->vert + 3 * i, x);
    int inside = 1;
    for (int c = 0; c < 3; c++) {
      x[c] += rb->pos[c];
      inside &= x[c] >= alo[c] - margin && x[c] <= ahi[c] + margin;
    }
    if (!inside) continue;
    if (depth < 0) depth = surface_depth(A);
    double n[3], wt[3], phi = 0;
    fl_int t = nearest_triangle(A, x, margin, depth, n, wt, &phi);
    if (t < 0) continue;
    const fl_int *v = A->mesh->tri + 3 * t;
    int anyfree = rb->dof >= 0;
    for (int e = 0; e < 3; e++) anyfree |= vertex_free(A, v[e]);
    if (!anyfree) continue;
    fl__side b = fl__rigid_side(j);
    FL_TRY(push_triangle_contact(w, k, t, wt, n, phi, x, b, i, ct, nct, cap));
  }
  return FL_OK;
}


int fl__fem_collide(fl_world *w, double margin, fl__contact **ct, fl_int *nct, fl_int *cap) {
  if (!w->impl)
    return fl_seterr(FL_ERR_STATE, "fem collide: the world has no scratch (fl__world_impl)");
  double c0 = fl_cpu_now();
  int rc = FL_OK;
  for (fl_int k = 0; k < w->nfem && rc == FL_OK; k++) {
    double lo[3], hi[3];
    mesh_box(w->fem[k], lo, hi);
    for (fl_int j = 0; j < w->nbody && rc == FL_OK; j++) {
      const fl_body *rb = &w->body[j];
      double blo[3], bhi[3];
      fl_shape_aabb(&rb->shape, rb->pos, rb->quat, margin, blo, bhi);
      if (!boxes_overlap(lo, hi, blo, bhi, 0)) continue;
      rc = mesh_vs_rigid(w, k, j, margin, ct, nct, cap);
      if (rc == FL_OK) rc = rigid_vs_mesh(w, j, k, lo, hi, margin, ct, nct, cap);
    }
    for (fl_int l = k + 1; l < w->nfem && rc == FL_OK; l++) {
      double lo2[3], hi2[3];
      mesh_box(w->fem[l], lo2, hi2);
      if (!boxes_overlap(lo, hi, lo2, hi2, margin)) continue;
      rc = mesh_vs_mesh(w, k, l, margin, ct, nct, cap);
      if (rc == FL_OK) rc = mesh_vs_mesh(w, l, k, margin, ct, nct, cap);
    }
  }
  w->impl->fem_geometry_s = fl_cpu_now() - c0;
  return rc;
}

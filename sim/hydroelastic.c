// SPDX-License-Identifier: Apache-2.0
/* hydroelastic.c: compliant-rigid hydroelastic contact patches (seed 002 sections III-IV).
 *
 * A hydroelastic cylinder against a rigid plane:
 *   1. pick the cap facing the plane (outward normal m against the plane normal n);
 *   2. mesh the cap (fan or rings, fl_hydro_disk_mesh) and project each triangle onto the plane
 *      along the cylinder axis: the plane clipped by the cylinder's prism over that triangle;
 *   3. clip each projected triangle to depth d(x) = -m.(x - cap centre) >= -margin (the part of
 *      the plane inside the compliant body, plus the speculative margin);
 *   4. per polygon: area A, centroid c, p0 = E d(c)/hf, g = E (-m.n)/hf (the rigid plane's
 *      gradient is infinite, so the effective gradient is the compliant one), k = g A,
 *      phi0 = -p0/g.
 * The field is linear on the plane, so A p0 is the exact pressure integral of each polygon.
 * A hydroelastic sphere against a rigid plane or polyhedron: on each face, the disk of the
 * face's plane inside the sphere, meshed with rings and clipped to the face, the radial field
 * p = E (1 - |x - C|/r) sampled at the centroids (sphere_on_face).
 * See fl_hydro.h and docs/coin.md.
 */
#include <math.h>
#include <string.h>

#include "fl_hydro.h"
#include "world_impl.h"

//---- disk meshes ----

int fl_hydro_disk_mesh(double R, int mesh, double **tri, fl_int *ntri) {
  *tri = NULL;
  *ntri = 0;
  if (!(R > 0) || !isfinite(R)) return fl_seterr(FL_ERR_INVAL, "hydro mesh: radius %g is not positive", R);
  if (mesh == 0) mesh = FL_HYDRO_FAN_DEFAULT;
  if (mesh > 0) {
    if (mesh < 3 || mesh > 100000)
      return fl_seterr(FL_ERR_INVAL, "hydro mesh: fan of %d triangles (expected 3..100000)", mesh);
    double *t = fl_malloc((size_t)mesh * 6 * sizeof(double));
    if (!t) return fl_seterr(FL_ERR_NOMEM, "hydro mesh: out of memory");
    for (int k = 0; k < mesh; k++) {
      double a0 = 2 * M_PI * k / mesh, a1 = 2 * M_PI * (k + 1) / mesh;
      double *q = t + 6 * k;
      q[0] = q[1] = 0;
      q[2] = R * cos(a0);
      q[3] = R * sin(a0);
      q[4] = R * cos(a1);
      q[5] = R * sin(a1);
    }
    *tri = t;
    *ntri = mesh;
    return FL_OK;
  }
  int nr = -mesh;
  if (nr > 200) return fl_seterr(FL_ERR_INVAL, "hydro mesh: %d rings (expected 1..200)", nr);
  fl_int n = 6 * (fl_int)nr * nr;
  double *t = fl_malloc((size_t)n * 6 * sizeof(double));
  if (!t) return fl_seterr(FL_ERR_NOMEM, "hydro mesh: out of memory");
  fl_int m = 0;
  // ring i has 6 i vertices at radius i R/nr; the band between rings i-1 and i is triangulated
  // by merging the two rings' vertices in angle order (the centre is ring 0 with one vertex)
  for (int i = 1; i <= nr; i++) {
    int ni = 6 * i, no = (i == 1) ? 1 : 6 * (i - 1);
    double ri = R * i / nr, ro = R * (i - 1) / nr;
    int a = 0, b = 0; // next vertex of the inner (old) and outer (new) ring
    while (a < no || b < ni) {
      // angles of the current candidates (inner ring advanced by half a step of its own)
      double ta = (i == 1) ? INFINITY : 2 * M_PI * (a + 1) / no;
      double tb = 2 * M_PI * (b + 1) / ni;
      double ia = 2 * M_PI * a / no, ib = 2 * M_PI * b / ni;
      double *q = t + 6 * m++;
      q[0] = ro * cos(ia);
      q[1] = ro * sin(ia);
      q[2] = ri * cos(ib);
      q[3] = ri * sin(ib);
      if (b < ni && (a >= no || tb <= ta)) {
        q[4] = ri * cos(tb);
        q[5] = ri * sin(tb);
        b++;
      } else {
        q[4] = ro * cos(ta);
        q[5] = ro * sin(ta);
        a++;
      }
      if (i == 1 && b >= ni) a = no;
    }
  }
  if (m != n) {
    fl_free(t);
    return fl_seterr(FL_ERR_STATE, "hydro mesh: %d triangles for %d rings (expected %d)", (int)m,
                     nr, (int)n);
  }
  *tri = t;
  *ntri = n;
  return FL_OK;
}


//---- one pair ----

/* appends one polygon's compliant point contact: k = g A, phi0 = -p0/g (seed 002 eqs. 12-16) */
static int add_face(fl_hydro_face **faces, fl_int *nface, fl_int *cap, const double p[3],
                    const double n[3], double A, double p0, double g, fl_int tri) {
  FL_TRY(fl_grow((void **)faces, cap, *nface + 1, sizeof(fl_hydro_face), "hydro"));
  fl_hydro_face *f = &(*faces)[(*nface)++];
  memcpy(f->p, p, sizeof f->p);
  memcpy(f->n, n, sizeof f->n);
  f->area = A;
  f->p0 = p0;
  f->g = g;
  f->k = g * A;
  f->phi0 = -p0 / g;
  f->tri = (int)tri;
  return FL_OK;
}


static int patch_cylinder(const fl_body *plane, const fl_body *cyl, double margin,
                          fl_hydro_face **faces, fl_int *nface, fl_int *cap) {
  double E = cyl->hydro_modulus, R = cyl->shape.size[0], h = cyl->shape.size[1];
  double hf = h < R ? h : R;
  double Rp[9], Rc[9], n[3], u[3];
  fl__body_rot(plane, Rp);
  fl__body_rot(cyl, Rc);
  for (int k = 0; k < 3; k++) {
    n[k] = Rp[3 * k + 2]; // plane normal: body z of the plane
    u[k] = Rc[3 * k + 2]; // cylinder axis
  }
  double un = fl_v3_dot(u, n);
  // the cap facing the plane has outward normal m = s u with s = -sign(u.n)
  double s = un > 0 ? -1.0 : 1.0;
  double g = E * fabs(un) / hf; // grad p . n with grad p = -E m/hf
  if (!(g > 1e-14)) return 0;   // the caps are perpendicular to the plane: no positive gradient
  double cc[3], m[3];
  for (int k = 0; k < 3; k++) {
    m[k] = s * u[k];
    cc[k] = cyl->pos[k] + s * h * u[k];
  }
  // quick reject: the whole cap is more than margin above the plane
  double cdist = 0;
  for (int k = 0; k < 3; k++) cdist += n[k] * (cc[k] - plane->pos[k]);
  double spread = R * sqrt(fmax(0.0, 1 - un * un));
  if (cdist - spread > margin) return 0;

  double *tri = NULL;
  fl_int ntri = 0;
  FL_TRY(fl_hydro_disk_mesh(R, cyl->hydro_mesh, &tri, &ntri));
  int added = 0, rc = FL_OK;
  for (fl_int t = 0; t < ntri; t++) {
    // triangle vertices on the cap (world), projected onto the plane along u
    double X[8][3], d[8];
    int nv = 3;
    for (int v = 0; v < 3; v++) {
      double bl[3] = {tri[6 * t + 2 * v], tri[6 * t + 2 * v + 1], s * h}, y[3];
      fl_m3_mulv(Rc, bl, y);
      double dy = 0;
      for (int k = 0; k < 3; k++) {
        y[k] += cyl->pos[k];
        dy += n[k] * (y[k] - plane->pos[k]);
      }
      double tt = -dy / un; // y + tt u lies on the plane
      for (int k = 0; k < 3; k++) X[v][k] = y[k] + tt * u[k];
      d[v] = 0;
      for (int k = 0; k < 3; k++) d[v] -= m[k] * (X[v][k] - cc[k]);
    }
    // clip to d >= -margin (Sutherland-Hodgman against one linear function)
    double Y[8][3], dY[8];
    int ny = 0;
    for (int v = 0; v < nv; v++) {
      int w2 = (v + 1) % nv;
      double a = d[v] + margin, b = d[w2] + margin;
      if (a >= 0) {
        memcpy(Y[ny], X[v], sizeof Y[0]);
        dY[ny++] = d[v];
      }
      if ((a >= 0) != (b >= 0)) {
        double l = a / (a - b);
        for (int k = 0; k < 3; k++) Y[ny][k] = X[v][k] + l * (X[w2][k] - X[v][k]);
        dY[ny++] = d[v] + l * (d[w2] - d[v]);
      }
    }
    if (ny < 3) continue;
    // area and centroid (fan about the first vertex, signed along n)
    double A = 0, c[3] = {0, 0, 0}, dc = 0;
    for (int v = 1; v + 1 < ny; v++) {
      double e1[3], e2[3], cr[3];
      for (int k = 0; k < 3; k++) {
        e1[k] = Y[v][k] - Y[0][k];
        e2[k] = Y[v + 1][k] - Y[0][k];
      }
      fl_v3_cross(e1, e2, cr);
      double a = 0.5 * fl_v3_dot(cr, n);
      A += a;
      for (int k = 0; k < 3; k++) c[k] += a * (Y[0][k] + Y[v][k] + Y[v + 1][k]) / 3;
      dc += a * (dY[0] + dY[v] + dY[v + 1]) / 3;
    }
    if (A < 0) {
      A = -A;
      for (int k = 0; k < 3; k++) c[k] = -c[k];
      dc = -dc;
    }
    if (!(A > 1e-14)) continue;
    for (int k = 0; k < 3; k++) c[k] /= A;
    dc /= A; // the depth at the centroid (linear, so the mean of d weighted by area)
    rc = add_face(faces, nface, cap, c, n, A, E * dc / hf, g, t);
    if (rc < 0) break;
    added++;
  }
  fl_free(tri);
  return rc < 0 ? rc : added;
}


/* The patch of a compliant sphere (radius r, centre C, modulus E) on one planar face of a rigid
 * body: the face's plane has unit normal n (out of the rigid body) through point x0; the face is
 * the convex polygon poly (np vertices, counter-clockwise seen from outside) or, with np = 0,
 * the whole plane. The contact surface is the part of the face within r + margin of C: the disk
 * of radius sqrt((r + margin)^2 - dc^2) about the foot of C (dc its height above the plane) is
 * meshed (mesh, 0: FL_HYDRO_SPHERE_RINGS rings) and each triangle clipped to the face. The field
 * p = E (1 - |x - C|/r) is radial, so on the plane it is not linear and A p(centroid) is the
 * centroid rule (second order in the mesh size). The gradient along n is E dc/(r |x - C|): a
 * centre at or behind the plane gives none (skipped). tri0 offsets the feature ids (faces of
 * one body stay distinct). Returns the number of faces appended or a negative error. */
#define SPH_MAXV 256
static int sphere_on_face(const fl_body *sph, const double n[3], const double x0[3],
                          const double *poly, int np, int mesh, double margin, int tri0,
                          fl_hydro_face **faces, fl_int *nface, fl_int *cap) {
  double E = sph->hydro_modulus, r = sph->shape.size[0];
  double dc = 0;
  for (int k = 0; k < 3; k++) dc += n[k] * (sph->pos[k] - x0[k]);
  if (!(dc > 0) || dc >= r + margin) return 0;
  if (np > SPH_MAXV - 8)
    return fl_seterr(FL_ERR_UNSUPPORTED, "hydro patch: a face of %d vertices (at most %d)", np,
                     SPH_MAXV - 8);
  // an orthonormal frame (t1, t2, n) of the plane, and the face in its coordinates about the foot
  double t1[3], t2[3], foot[3], P[2 * SPH_MAXV];
  double a[3] = {fabs(n[0]) < 0.6 ? 1.0 : 0.0, fabs(n[0]) < 0.6 ? 0.0 : 1.0, 0.0};
  fl_v3_cross(n, a, t1);
  double l = fl_v3_norm(t1);
  for (int k = 0; k < 3; k++) t1[k] /= l;
  fl_v3_cross(n, t1, t2);
  for (int k = 0; k < 3; k++) foot[k] = sph->pos[k] - dc * n[k];
  for (int v = 0; v < np; v++) {
    double d[3] = {poly[3 * v] - foot[0], poly[3 * v + 1] - foot[1], poly[3 * v + 2] - foot[2]};
    P[2 * v] = fl_v3_dot(d, t1);
    P[2 * v + 1] = fl_v3_dot(d, t2);
  }
  // quick reject: the disk lies outside one edge of the face
  double am = sqrt((r + margin) * (r + margin) - dc * dc);
  for (int v = 0; v < np; v++) {
    int w = (v + 1) % np;
    double ex = P[2 * w] - P[2 * v], ey = P[2 * w + 1] - P[2 * v + 1], el = hypot(ex, ey);
    // inside is to the left of each edge: (-ey, ex) . (x - P_v) >= 0; the foot is at 0
    if (el > 0 && (-ey * -P[2 * v] + ex * -P[2 * v + 1]) / el < -am) return 0;
  }
  double *tri = NULL;
  fl_int ntri = 0;
  FL_TRY(fl_hydro_disk_mesh(am, mesh ? mesh : -FL_HYDRO_SPHERE_RINGS, &tri, &ntri));
  int added = 0, rc = FL_OK;
  for (fl_int t = 0; t < ntri && rc >= 0; t++) {
    // the triangle clipped to every edge of the face (Sutherland-Hodgman in the plane)
    double X[2 * SPH_MAXV], Y[2 * SPH_MAXV];
    int nx = 3;
    memcpy(X, tri + 6 * t, 6 * sizeof(double));
    for (int v = 0; v < np && nx >= 3; v++) {
      int w = (v + 1) % np, ny = 0;
      double ex = P[2 * w] - P[2 * v], ey = P[2 * w + 1] - P[2 * v + 1];
      for (int i = 0; i < nx; i++) {
        int j = (i + 1) % nx;
        double si = -ey * (X[2 * i] - P[2 * v]) + ex * (X[2 * i + 1] - P[2 * v + 1]);
        double sj = -ey * (X[2 * j] - P[2 * v]) + ex * (X[2 * j + 1] - P[2 * v + 1]);
        if (si >= 0) {
          Y[2 * ny] = X[2 * i];
          Y[2 * ny++ + 1] = X[2 * i + 1];
        }
        if ((si >= 0) != (sj >= 0)) {
          double u = si / (si - sj);
          Y[2 * ny] = X[2 * i] + u * (X[2 * j] - X[2 * i]);
          Y[2 * ny + 1] = X[2 * i + 1] + u * (X[2 * j + 1] - X[2 * i + 1]);
          ny++;
        }
      }
      memcpy(X, Y, 2 * (size_t)ny * sizeof(double));
      nx = ny;
    }
    if (nx < 3) continue;
    // area and centroid of the (convex, counter-clockwise) polygon
    double A = 0, cx = 0, cy = 0;
    for (int i = 0; i < nx; i++) {
      int j = (i + 1) % nx;
      double cr = X[2 * i] * X[2 * j + 1] - X[2 * j] * X[2 * i + 1];
      A += 0.5 * cr;
      cx += (X[2 * i] + X[2 * j]) * cr / 6;
      cy += (X[2 * i + 1] + X[2 * j + 1]) * cr / 6;
    }
    if (!(A > 1e-14)) continue;
    cx /= A;
    cy /= A;
    double rho = sqrt(cx * cx + cy * cy + dc * dc); // |centroid - C|
    double g = E * dc / (r * rho);
    if (!(g > 1e-14)) continue;
    double c[3];
    for (int k = 0; k < 3; k++) c[k] = foot[k] + cx * t1[k] + cy * t2[k];
    rc = add_face(faces, nface, cap, c, n, A, E * (1 - rho / r), g, tri0 + t);
    if (rc >= 0) added++;
  }
  fl_free(tri);
  return rc < 0 ? rc : added;
}


/* A compliant sphere against a rigid plane or polyhedron (box, convex hull, the cylinder's
 * prism): sphere_on_face for the plane, or for every face of the polyhedron; feature ids are
 * face f's triangles offset by f times the mesh's triangle count. */
static int patch_sphere(const fl_body *rig, const fl_body *sph, double margin,
                        fl_hydro_face **faces, fl_int *nface, fl_int *cap) {
  double Rr[9];
  fl__body_rot(rig, Rr);
  int mesh = sph->hydro_mesh ? sph->hydro_mesh : -FL_HYDRO_SPHERE_RINGS;
  if (rig->shape.type == FL_SHAPE_PLANE) {
    double n[3] = {Rr[2], Rr[5], Rr[8]};
    return sphere_on_face(sph, n, rig->pos, NULL, 0, mesh, margin, 0, faces, nface, cap);
  }
  const fl_shape *sh = &rig->shape;
  // far apart: the sphere's reach misses the polyhedron's bounding sphere
  double d[3] = {sph->pos[0] - rig->pos[0], sph->pos[1] - rig->pos[1], sph->pos[2] - rig->pos[2]};
  if (fl_v3_norm(d) > sh->radius + sph->shape.size[0] + margin) return 0;
  int per = mesh > 0 ? mesh : 6 * mesh * mesh, added = 0;
  double poly[3 * SPH_MAXV];
  for (fl_int f = 0; f < sh->nface; f++) {
    int np = (int)(sh->face_ptr[f + 1] - sh->face_ptr[f]);
    if (np > SPH_MAXV) np = SPH_MAXV; // sphere_on_face refuses it with a message
    for (int v = 0; v < np; v++) {
      double y[3];
      fl_m3_mulv(Rr, sh->vert + 3 * sh->face_vert[sh->face_ptr[f] + v], y);
      for (int k = 0; k < 3; k++) poly[3 * v + k] = y[k] + rig->pos[k];
    }
    double n[3];
    fl_m3_mulv(Rr, sh->face_normal + 3 * f, n);
    int rc = sphere_on_face(sph, n, poly, poly, np, mesh, margin, (int)f * per, faces, nface, cap);
    if (rc < 0) return rc;
    added += rc;
  }
  return added;
}


int fl_hydro_patch(const fl_body *plane, const fl_body *body, double margin, fl_hydro_face **faces,
                   fl_int *nface, fl_int *cap) {
  if (!plane || !body || !faces || !nface || !cap || !(margin >= 0))
    return fl_seterr(FL_ERR_INVAL, "hydro patch: bad arguments");
  if (!(body->hydro_modulus > 0) || plane->hydro_modulus > 0) return FL_ERR_UNSUPPORTED;
  if (body->shape.type == FL_SHAPE_CYLINDER && plane->shape.type == FL_SHAPE_PLANE)
    return patch_cylinder(plane, body, margin, faces, nface, cap);
  if (body->shape.type == FL_SHAPE_SPHERE &&
      (plane->shape.type == FL_SHAPE_PLANE || plane->shape.nface > 0))
    return patch_sphere(plane, body, margin, faces, nface, cap);
  return FL_ERR_UNSUPPORTED;
}


//---- the stepper's hook ----

int fl__hydro_collide(fl_world *w, fl_int i, fl_int j, double margin, fl__contact **ct,
                      fl_int *nct, fl_int *cap) {
  const fl_body *a = &w->body[i], *b = &w->body[j];
  const fl_body *pl = a, *cy = b;
  int flip = 0; // the normal must point from body i (the rigid one here) to body j
  if (a->hydro_modulus > 0) {
    pl = b;
    cy = a;
    flip = 1;
  }
  fl_hydro_face *f = NULL;
  fl_int nf = 0, fcap = 0;
  int rc = fl_hydro_patch(pl, cy, margin, &f, &nf, &fcap);
  if (rc == FL_ERR_UNSUPPORTED) return rc;
  if (rc >= 0 && nf > 0) rc = fl_grow((void **)ct, cap, *nct + nf, sizeof(fl__contact), "hydro");
  if (rc >= 0) {
    for (fl_int k = 0; k < nf; k++) {
      fl__contact *c = &(*ct)[(*nct)++];
      c->a = fl__rigid_side(i);
      c->b = fl__rigid_side(j);
      memcpy(c->p, f[k].p, sizeof c->p);
      for (int d = 0; d < 3; d++) c->n[d] = flip ? -f[k].n[d] : f[k].n[d];
      c->phi = f[k].phi0;
      c->k = f[k].k;
      uint32_t fp = FL_FEAT(FL_FEAT_FACE, 0), fc = FL_FEAT(FL_FEAT_FACE, f[k].tri);
      c->feature = flip ? ((int64_t)fc << 32) | fp : ((int64_t)fp << 32) | fc;
    }
    rc = (int)nf;
  }
  fl_free(f);
  return rc;
}

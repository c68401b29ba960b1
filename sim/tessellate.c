// SPDX-License-Identifier: Apache-2.0
/* tessellate.c: triangle surfaces of shapes, for drawing only (the viewer, VTK files).
 *
 * Collision never reads these: polyhedra are drawn from their own faces, round shapes from a
 * latitude-longitude grid that is fine enough to look round and coarse enough that a scene of
 * a thousand equal grains shares one small mesh.
 */
#include <math.h>
#include <string.h>

#include "fl_geometry.h"

enum { NLON = 24, NLAT = 12 }; /* sides around z, rings from pole to pole */


/* Surface of revolution about z: the north pole (0, 0, ztop), nr rings (z[k], r[k]) of NLON
 * vertices each, the south pole (0, 0, zbot). Triangles counter-clockwise seen from outside. */
static int revolve(double ztop, double zbot, int nr, const double *z, const double *r,
                   fl_int *nvert, double **vert, fl_int *ntri, fl_int **tri) {
  fl_int nv = 2 + (fl_int)nr * NLON, nt = 2 * NLON + 2 * (fl_int)(nr - 1) * NLON;
  double *v = fl_malloc((size_t)nv * 3 * sizeof(double));
  fl_int *t = fl_malloc((size_t)nt * 3 * sizeof(fl_int));
  if (!v || !t) {
    fl_free(v);
    fl_free(t);
    return fl_seterr(FL_ERR_NOMEM, "tessellate: out of memory");
  }
  const double pi = 3.14159265358979323846;
  v[0] = v[1] = 0;
  v[2] = ztop;
  for (int k = 0; k < nr; k++)
    for (int j = 0; j < NLON; j++) {
      double a = 2 * pi * j / NLON, *p = v + 3 * (1 + k * NLON + j);
      p[0] = r[k] * cos(a);
      p[1] = r[k] * sin(a);
      p[2] = z[k];
    }
  fl_int s = nv - 1, q = 0;
  v[3 * s] = v[3 * s + 1] = 0;
  v[3 * s + 2] = zbot;
#define RING(k, j) (1 + (fl_int)(k) * NLON + (fl_int)((j) % NLON))
#define TRI(x, y, w) (t[3 * q] = (x), t[3 * q + 1] = (y), t[3 * q + 2] = (w), q++)
  for (int j = 0; j < NLON; j++) TRI(0, RING(0, j), RING(0, j + 1));
  for (int k = 0; k + 1 < nr; k++)
    for (int j = 0; j < NLON; j++) {
      TRI(RING(k, j), RING(k + 1, j), RING(k + 1, j + 1));
      TRI(RING(k, j), RING(k + 1, j + 1), RING(k, j + 1));
    }
  for (int j = 0; j < NLON; j++) TRI(RING(nr - 1, j), s, RING(nr - 1, j + 1));
#undef RING
#undef TRI
  *nvert = nv;
  *vert = v;
  *ntri = q;
  *tri = t;
  return FL_OK;
}


int fl_shape_tessellate(const fl_shape *s, double plane_half, const double plane_centre[2],
                        fl_int *nvert, double **vert, fl_int *ntri, fl_int **tri) {
  *nvert = *ntri = 0;
  *vert = NULL;
  *tri = NULL;
  const double pi = 3.14159265358979323846;
  if (s->type == FL_SHAPE_PLANE) {
    if (!(plane_half > 0) || !isfinite(plane_half))
      return fl_seterr(FL_ERR_INVAL, "tessellate: plane half side %g: expected a positive number",
                       plane_half);
    double *v = fl_malloc(12 * sizeof(double));
    fl_int *t = fl_malloc(6 * sizeof(fl_int));
    if (!v || !t) {
      fl_free(v);
      fl_free(t);
      return fl_seterr(FL_ERR_NOMEM, "tessellate: out of memory");
    }
    double cx = plane_centre ? plane_centre[0] : 0, cy = plane_centre ? plane_centre[1] : 0;
    static const double corner[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
    for (int k = 0; k < 4; k++) {
      v[3 * k] = cx + plane_half * corner[k][0];
      v[3 * k + 1] = cy + plane_half * corner[k][1];
      v[3 * k + 2] = 0;
    }
    static const fl_int quad[6] = {0, 1, 2, 0, 2, 3};
    memcpy(t, quad, sizeof quad);
    *nvert = 4;
    *vert = v;
    *ntri = 2;
    *tri = t;
    return FL_OK;
  }
  if (s->type == FL_SHAPE_SPHERE || s->type == FL_SHAPE_CAPSULE) {
    // a sphere's rings at polar angles pi k / NLAT; a capsule's hemispheres moved apart by
    // +-h, with the equator ring on both
    double R = s->size[0], h = s->type == FL_SHAPE_CAPSULE ? s->size[1] : 0;
    double z[NLAT + 1], r[NLAT + 1];
    int nr = 0;
    for (int k = 1; k < NLAT; k++) {
      double th = pi * k / NLAT;
      if (h > 0 && 2 * k == NLAT) { // equator: top then bottom copy
        z[nr] = h;
        r[nr++] = R;
        z[nr] = -h;
        r[nr++] = R;
        continue;
      }
      z[nr] = R * cos(th) + (2 * k < NLAT ? h : -h);
      r[nr++] = R * sin(th);
    }
    return revolve(R + h, -R - h, nr, z, r, nvert, vert, ntri, tri);
  }
  if (s->nface <= 0 || !s->vert)
    return fl_seterr(FL_ERR_INVAL, "tessellate: shape type %d has no faces", (int)s->type);
  fl_int nt = 0;
  for (fl_int f = 0; f < s->nface; f++) nt += s->face_ptr[f + 1] - s->face_ptr[f] - 2;
  double *v = fl_malloc((size_t)s->nvert * 3 * sizeof(double));
  fl_int *t = fl_malloc((size_t)(nt > 0 ? nt : 1) * 3 * sizeof(fl_int));
  if (!v || !t) {
    fl_free(v);
    fl_free(t);
    return fl_seterr(FL_ERR_NOMEM, "tessellate: out of memory");
  }
  memcpy(v, s->vert, (size_t)s->nvert * 3 * sizeof(double));
  fl_int q = 0;
  for (fl_int f = 0; f < s->nface; f++) // faces are convex and counter-clockwise: a fan
    for (fl_int k = s->face_ptr[f] + 1; k + 1 < s->face_ptr[f + 1]; k++) {
      t[3 * q] = s->face_vert[s->face_ptr[f]];
      t[3 * q + 1] = s->face_vert[k];
      t[3 * q + 2] = s->face_vert[k + 1];
      q++;
    }
  *nvert = s->nvert;
  *vert = v;
  *ntri = q;
  *tri = t;
  return FL_OK;
}

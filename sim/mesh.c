// SPDX-License-Identifier: Apache-2.0
/* mesh.c: tetrahedral meshes: validation, the boundary, generators and selection (fl_mesh.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fl_fem.h"
#include "fl_mesh.h"

void fl_mesh_free(fl_mesh *m) {
  if (!m) return;
  fl_free(m->X);
  fl_free(m->tet);
  fl_free(m->tri);
  fl_free(m->surf);
  fl_free(m);
}


static double tet_volume(const double *X, const fl_int *t) {
  const double *a = X + 3 * t[0], *b = X + 3 * t[1], *c = X + 3 * t[2], *d = X + 3 * t[3];
  double u[3], v[3], w[3];
  for (int k = 0; k < 3; k++) {
    u[k] = b[k] - a[k];
    v[k] = c[k] - a[k];
    w[k] = d[k] - a[k];
  }
  return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
          u[2] * (v[0] * w[1] - v[1] * w[0])) / 6;
}


static double longest_edge(const double *X, const fl_int *t) {
  double best = 0;
  for (int i = 0; i < 4; i++) {
    for (int j = i + 1; j < 4; j++) {
      const double *a = X + 3 * t[i], *b = X + 3 * t[j];
      double d = sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                      (a[2] - b[2]) * (a[2] - b[2]));
      if (d > best) best = d;
    }
  }
  return best;
}


//---- boundary ----

typedef struct face_rec {
  fl_int key[3]; /* sorted vertices */
  fl_int v[3];   /* outward order */
} face_rec;

static int face_cmp(const void *pa, const void *pb) {
  const fl_int *a = ((const face_rec *)pa)->key, *b = ((const face_rec *)pb)->key;
  for (int k = 0; k < 3; k++) {
    if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
  }
  return 0;
}

static int edge_cmp(const void *pa, const void *pb) {
  const fl_int *a = pa, *b = pb;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] != b[1]) return a[1] < b[1] ? -1 : 1;
  return 0;
}


static void sort3(fl_int *k) {
  fl_int t;
  if (k[0] > k[1]) { t = k[0]; k[0] = k[1]; k[1] = t; }
  if (k[1] > k[2]) { t = k[1]; k[1] = k[2]; k[2] = t; }
  if (k[0] > k[1]) { t = k[0]; k[0] = k[1]; k[1] = t; }
}


/* Parity (0 or 1) of the order of three distinct vertices: their inversions mod 2. */
static int face_parity(const fl_int *v) {
  return ((v[0] > v[1]) + (v[0] > v[2]) + (v[1] > v[2])) & 1;
}


/* Boundary triangles (faces of one tet, outward) and vertices; manifold checks. */
static int build_boundary(fl_mesh *m, const char *where) {
  // outward faces of a positive tet (v0 v1 v2 v3)
  static const int F[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
  size_t nf = 4 * (size_t)m->ntet;
  face_rec *f = fl_malloc(nf * sizeof *f);
  if (!f) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", where);
  for (fl_int e = 0; e < m->ntet; e++) {
    for (int q = 0; q < 4; q++) {
      face_rec *r = &f[4 * e + q];
      for (int k = 0; k < 3; k++) r->v[k] = r->key[k] = m->tet[4 * e + F[q][k]];
      sort3(r->key);
    }
  }
  qsort(f, nf, sizeof *f, face_cmp);
  fl_int nb = 0;
  int rc = FL_OK;
  for (size_t i = 0; i < nf;) {
    size_t j = i + 1;
    while (j < nf && face_cmp(&f[i], &f[j]) == 0) j++;
    if (j - i > 2) {
      rc = fl_seterr(FL_ERR_INVAL, "%s: non-manifold: face (%d %d %d) shared by %d tets", where,
                     (int)f[i].key[0], (int)f[i].key[1], (int)f[i].key[2], (int)(j - i));
      break;
    }
    // two positive tets on either side of a face see it in opposite orders; the same order
    // means they lie on one side and overlap (a repeated tet, for one)
    if (j - i == 2 && face_parity(f[i].v) == face_parity(f[i + 1].v)) {
      rc = fl_seterr(FL_ERR_INVAL, "%s: two tets on the same side of face (%d %d %d): they "
                     "overlap (a repeated tet?)", where, (int)f[i].key[0], (int)f[i].key[1],
                     (int)f[i].key[2]);
      break;
    }
    if (j - i == 1) f[nb++] = f[i];
    i = j;
  }
  if (rc >= 0 && nb == 0)
    rc = fl_seterr(FL_ERR_INVAL, "%s: no boundary faces: every face is shared by two tets", where);
  if (rc < 0) {
    fl_free(f);
    return rc;
  }
  m->ntri = nb;
  m->tri = fl_malloc((size_t)(nb > 0 ? nb : 1) * 3 * sizeof(fl_int));
  fl_int *edges = fl_malloc((size_t)(nb > 0 ? nb : 1) * 6 * sizeof(fl_int));
  unsigned char *on = fl_calloc((size_t)m->nvert, 1);
  if (!m->tri || !edges || !on) {
    fl_free(f);
    fl_free(edges);
    fl_free(on);
    return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", where);
  }
  for (fl_int t = 0; t < nb; t++) {
    for (int k = 0; k < 3; k++) {
      fl_int a = f[t].v[k], b = f[t].v[(k + 1) % 3];
      m->tri[3 * t + k] = a;
      on[a] = 1;
      edges[6 * t + 2 * k] = a < b ? a : b;
      edges[6 * t + 2 * k + 1] = a < b ? b : a;
    }
  }
  fl_free(f);
  // a closed 2-manifold: every boundary edge in exactly two boundary triangles
  qsort(edges, 3 * (size_t)nb, 2 * sizeof(fl_int), edge_cmp);
  for (size_t i = 0; i < 3 * (size_t)nb && rc == FL_OK;) {
    size_t j = i + 1;
    while (j < 3 * (size_t)nb && edge_cmp(edges + 2 * i, edges + 2 * j) == 0) j++;
    if (j - i != 2)
      rc = fl_seterr(FL_ERR_INVAL, "%s: non-manifold surface at edge (%d %d): in %d boundary "
                     "triangles, expected 2", where, (int)edges[2 * i], (int)edges[2 * i + 1],
                     (int)(j - i));
    i = j;
  }
  fl_free(edges);
  if (rc < 0) {
    fl_free(on);
    return rc;
  }
  m->nsurf = 0;
  for (fl_int v = 0; v < m->nvert; v++) m->nsurf += on[v];
  m->surf = fl_malloc((size_t)(m->nsurf > 0 ? m->nsurf : 1) * sizeof(fl_int));
  if (!m->surf) {
    fl_free(on);
    return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", where);
  }
  fl_int k = 0;
  for (fl_int v = 0; v < m->nvert; v++) {
    if (on[v]) m->surf[k++] = v;
  }
  fl_free(on);
  return FL_OK;
}


int fl_mesh_create(fl_int nvert, const double *X, fl_int ntet, const fl_int *tet,
                   const char *where, fl_mesh **out) {
  *out = NULL;
  if (!where) where = "mesh";
  if (nvert < 4 || ntet < 1 || !X || !tet)
    return fl_seterr(FL_ERR_INVAL, "%s: %d vertices and %d tets, expected at least 4 and 1",
                     where, (int)nvert, (int)ntet);
  for (fl_int i = 0; i < 3 * nvert; i++) {
    if (!isfinite(X[i]))
      return fl_seterr(FL_ERR_INVAL, "%s: vertex %d has a non-finite coordinate", where,
                       (int)(i / 3));
  }
  for (fl_int e = 0; e < ntet; e++) {
    const fl_int *t = tet + 4 * e;
    for (int a = 0; a < 4; a++) {
      if (t[a] < 0 || t[a] >= nvert)
        return fl_seterr(FL_ERR_INVAL, "%s: tet %d: vertex index %d out of range [0, %d)", where,
                         (int)e, (int)t[a], (int)nvert);
      for (int b = 0; b < a; b++) {
        if (t[a] == t[b])
          return fl_seterr(FL_ERR_INVAL, "%s: tet %d repeats vertex %d", where, (int)e, (int)t[a]);
      }
    }
    double v = tet_volume(X, t), h = longest_edge(X, t);
    if (!(fabs(v) > 1e-12 * h * h * h))
      return fl_seterr(FL_ERR_INVAL, "%s: tet %d is degenerate (volume %g m^3, longest edge %g m)",
                       where, (int)e, v, h);
    if (v < 0)
      return fl_seterr(FL_ERR_INVAL, "%s: tet %d is inverted (volume %g m^3; expected the vertex "
                       "order with det[X1-X0, X2-X0, X3-X0] > 0)", where, (int)e, v);
  }
  fl_mesh *m = fl_calloc(1, sizeof *m);
  if (!m) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", where);
  m->nvert = nvert;
  m->ntet = ntet;
  m->X = fl_malloc((size_t)nvert * 3 * sizeof(double));
  m->tet = fl_malloc((size_t)ntet * 4 * sizeof(fl_int));
  if (!m->X || !m->tet) {
    fl_mesh_free(m);
    return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", where);
  }
  memcpy(m->X, X, (size_t)nvert * 3 * sizeof(double));
  memcpy(m->tet, tet, (size_t)ntet * 4 * sizeof(fl_int));
  int rc = build_boundary(m, where);
  if (rc < 0) {
    fl_mesh_free(m);
    return rc;
  }
  *out = m;
  return FL_OK;
}


double fl_mesh_volume(const fl_mesh *m) {
  double v = 0;
  for (fl_int e = 0; e < m->ntet; e++) v += tet_volume(m->X, m->tet + 4 * e);
  return v;
}


int fl_mesh_select_box(const fl_mesh *m, const double lo[3], const double hi[3], double tol,
                       fl_int **idx, fl_int *n) {
  *idx = NULL;
  *n = 0;
  fl_int cnt = 0;
  for (int pass = 0; pass < 2; pass++) {
    cnt = 0;
    for (fl_int v = 0; v < m->nvert; v++) {
      const double *x = m->X + 3 * v;
      int in = 1;
      for (int k = 0; k < 3; k++) in &= x[k] >= lo[k] - tol && x[k] <= hi[k] + tol;
      if (!in) continue;
      if (pass == 1) (*idx)[cnt] = v;
      cnt++;
    }
    if (pass == 0) {
      if (cnt == 0) return FL_OK;
      *idx = fl_malloc((size_t)cnt * sizeof(fl_int));
      if (!*idx) return fl_seterr(FL_ERR_NOMEM, "mesh: out of memory selecting vertices");
    }
  }
  *n = cnt;
  return FL_OK;
}


//---- generators ----

/* Orients every tet positively (generators only: their vertex order is ours to choose). */
static void orient(const double *X, fl_int *tet, fl_int ntet) {
  for (fl_int e = 0; e < ntet; e++) {
    fl_int *t = tet + 4 * e;
    if (tet_volume(X, t) < 0) {
      fl_int s = t[1];
      t[1] = t[2];
      t[2] = s;
    }
  }
}


static int check_count(const char *gen, const char *what, int n) {
  if (n < 1 || n > 1000)
    return fl_seterr(FL_ERR_INVAL, "%s mesh: %s = %d, expected an integer in [1, 1000]", gen, what, n);
  return FL_OK;
}


static int check_size(const char *gen, const char *what, double x) {
  if (!(x > 0) || !isfinite(x))
    return fl_seterr(FL_ERR_INVAL, "%s mesh: %s = %g, expected a finite number > 0 (m)", gen, what, x);
  return FL_OK;
}


/* Refuses a generated mesh of nv vertices and nt tets (counted in 64 bits) that overflows the
 * index type or whose memory estimate is above fl_mem_limit(): the arrays, their copies in the
 * mesh and the boundary's face records (4 per tet, 24 bytes each). */
static int check_mesh_size(const char *gen, long long nv, long long nt) {
  if (nv > INT32_MAX / 3 || nt > INT32_MAX / 4)
    return fl_seterr(FL_ERR_INVAL, "%s mesh: %lld vertices and %lld tets, above the limit of "
                     "2^31/3 vertices and 2^29 tets", gen, nv, nt);
  char what[160];
  snprintf(what, sizeof what, "%lld vertices and %lld tets (with their FEM system, about 8 kB "
           "a tet)", nv, nt);
  // a generated mesh becomes a deformable body: its FEM system counts too (fl_world_add_fem)
  double bytes = (double)nv * 2 * 3 * sizeof(double) +
                 (double)nt * (2 * 4 * sizeof(fl_int) + 96 + FL_FEM_BYTES_PER_TET);
  int rc = fl_mem_check("mesh", what, bytes);
  return rc < 0 ? fl_seterr(rc, "%s %s", gen, fl_errmsg()) : FL_OK;
}


/* The Kuhn grid of nx x ny x nz cells over [lo, lo + h n]: vertices and 6 tets per cell. */
static int kuhn_grid(const char *gen, const double lo[3], const double h[3], int nx, int ny, int nz,
                     double **Xp, fl_int **Tp, fl_int *nv, fl_int *nt) {
  fl_int n1[3] = {nx + 1, ny + 1, nz + 1};
  long long nv64 = (long long)n1[0] * n1[1] * n1[2], nt64 = 6LL * nx * ny * nz;
  FL_TRY(check_mesh_size(gen, nv64, nt64));
  *nv = (fl_int)nv64;
  *nt = (fl_int)nt64;
  double *X = fl_malloc((size_t)*nv * 3 * sizeof(double));
  fl_int *T = fl_malloc((size_t)*nt * 4 * sizeof(fl_int));
  if (!X || !T) {
    fl_free(X);
    fl_free(T);
    return fl_seterr(FL_ERR_NOMEM, "mesh: out of memory (%d vertices)", (int)*nv);
  }
#define VID(i, j, k) ((fl_int)(i) + n1[0] * ((fl_int)(j) + n1[1] * (fl_int)(k)))
  for (int k = 0; k <= nz; k++) {
    for (int j = 0; j <= ny; j++) {
      for (int i = 0; i <= nx; i++) {
        double *x = X + 3 * VID(i, j, k);
        x[0] = lo[0] + h[0] * i;
        x[1] = lo[1] + h[1] * j;
        x[2] = lo[2] + h[2] * k;
      }
    }
  }
  // the 6 tets around the diagonal of the unit cell, reflected along every axis whose cell
  // index is odd: still conforming (mirror cells share their face diagonals) and the whole
  // grid is mirror-symmetric about its mid-planes when the counts are even
  static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  fl_int e = 0;
  for (int k = 0; k < nz; k++) {
    for (int j = 0; j < ny; j++) {
      for (int i = 0; i < nx; i++) {
        int base[3] = {i, j, k};
        for (int p = 0; p < 6; p++) {
          int u[3] = {0, 0, 0};
          fl_int *t = T + 4 * e++;
          for (int s = 0; s < 4; s++) {
            if (s > 0) u[perm[p][s - 1]] = 1;
            int c[3];
            for (int a = 0; a < 3; a++) c[a] = base[a] + ((base[a] & 1) ? 1 - u[a] : u[a]);
            t[s] = VID(c[0], c[1], c[2]);
          }
        }
      }
    }
  }
#undef VID
  orient(X, T, *nt);
  *Xp = X;
  *Tp = T;
  return FL_OK;
}


int fl_mesh_box(const double size[3], int nx, int ny, int nz, fl_mesh **out) {
  *out = NULL;
  static const char *ax[3] = {"size[0]", "size[1]", "size[2]"};
  for (int k = 0; k < 3; k++) FL_TRY(check_size("box", ax[k], size[k]));
  FL_TRY(check_count("box", "nx", nx));
  FL_TRY(check_count("box", "ny", ny));
  FL_TRY(check_count("box", "nz", nz));
  double lo[3] = {-0.5 * size[0], -0.5 * size[1], -0.5 * size[2]};
  double h[3] = {size[0] / nx, size[1] / ny, size[2] / nz};
  double *X;
  fl_int *T, nv, nt;
  FL_TRY(kuhn_grid("box", lo, h, nx, ny, nz, &X, &T, &nv, &nt));
  // the far faces exactly at +size/2
  for (fl_int v = 0; v < nv; v++) {
    for (int k = 0; k < 3; k++) {
      if (X[3 * v + k] > 0.5 * size[k] - 1e-12 * size[k]) X[3 * v + k] = 0.5 * size[k];
    }
  }
  int rc = fl_mesh_create(nv, X, nt, T, "box mesh", out);
  fl_free(X);
  fl_free(T);
  return rc;
}


int fl_mesh_cylinder(double r, double len, int nring, int nlayer, fl_mesh **out) {
  *out = NULL;
  FL_TRY(check_size("cylinder", "radius", r));
  FL_TRY(check_size("cylinder", "length", len));
  FL_TRY(check_count("cylinder", "nring", nring));
  FL_TRY(check_count("cylinder", "nlayer", nlayer));
  // the disk: the centre, then ring i of 6 i vertices from angle 0
  fl_int nd = 1 + 3 * (fl_int)nring * (nring + 1);
  fl_int ntri = 6 * (fl_int)nring * nring;
  FL_TRY(check_mesh_size("cylinder", (long long)nd * (nlayer + 1), 3LL * ntri * nlayer));
  double *D = fl_malloc((size_t)nd * 2 * sizeof(double));
  fl_int *tri = fl_malloc((size_t)ntri * 3 * sizeof(fl_int));
  fl_int nv = nd * (nlayer + 1), nt = 3 * ntri * nlayer;
  double *X = fl_malloc((size_t)nv * 3 * sizeof(double));
  fl_int *T = fl_malloc((size_t)nt * 4 * sizeof(fl_int));
  int rc = FL_OK;
  if (!D || !tri || !X || !T) {
    rc = fl_seterr(FL_ERR_NOMEM, "cylinder mesh: out of memory");
    goto done;
  }
  D[0] = D[1] = 0;
  fl_int first = 1;
  for (int i = 1; i <= nring; i++) {
    int m = 6 * i;
    for (int j = 0; j < m; j++) {
      double a = 2 * M_PI * j / m, ri = r * i / nring;
      D[2 * (first + j)] = i == nring ? r * cos(a) : ri * cos(a);
      D[2 * (first + j) + 1] = i == nring ? r * sin(a) : ri * sin(a);
    }
    first += m;
  }
  // zip ring i-1 (m_in vertices) and ring i (m_out) by angle
  fl_int t = 0, in0 = 0, out0 = 1;
  for (int i = 1; i <= nring; i++) {
    int mi = i == 1 ? 1 : 6 * (i - 1), mo = 6 * i, p = 0, q = 0;
    while (p < mi || q < mo) {
      double ai = (p + 1 < mi || mi == 1) ? (double)(p + 1) / mi : 1.0;
      double ao = (double)(q + 1) / mo;
      fl_int *tr = tri + 3 * t++;
      if (q < mo && (p >= mi || ao <= ai + 1e-12)) {
        tr[0] = in0 + p % mi;
        tr[1] = out0 + q % mo;
        tr[2] = out0 + (q + 1) % mo;
        q++;
      } else {
        tr[0] = in0 + p % mi;
        tr[1] = out0 + q % mo;
        tr[2] = in0 + (p + 1) % mi;
        p++;
      }
      if (mi == 1 && q == mo) p = mi;
    }
    in0 = out0;
    out0 += mo;
  }
  if (t != ntri) {
    rc = fl_seterr(FL_ERR_STATE, "cylinder mesh: %d disk triangles, expected %d", (int)t, (int)ntri);
    goto done;
  }
  for (int l = 0; l <= nlayer; l++) {
    double z = -0.5 * len + len * l / nlayer;
    if (l == nlayer) z = 0.5 * len;
    for (fl_int v = 0; v < nd; v++) {
      double *x = X + 3 * (l * nd + v);
      x[0] = D[2 * v];
      x[1] = D[2 * v + 1];
      x[2] = z;
    }
  }
  // prisms into 3 tets: on a side quad (a, b) with a < b the diagonal joins b to a' (above a)
  fl_int e = 0;
  for (int l = 0; l < nlayer; l++) {
    for (fl_int k = 0; k < ntri; k++) {
      fl_int a[3] = {tri[3 * k], tri[3 * k + 1], tri[3 * k + 2]};
      sort3(a);
      fl_int b0 = l * nd, b1 = (l + 1) * nd;
      fl_int tt[3][4] = {{b0 + a[0], b0 + a[1], b0 + a[2], b1 + a[0]},
                         {b0 + a[1], b0 + a[2], b1 + a[0], b1 + a[1]},
                         {b0 + a[2], b1 + a[0], b1 + a[1], b1 + a[2]}};
      for (int s = 0; s < 3; s++) memcpy(T + 4 * e++, tt[s], 4 * sizeof(fl_int));
    }
  }
  orient(X, T, nt);
  rc = fl_mesh_create(nv, X, nt, T, "cylinder mesh", out);
done:
  fl_free(D);
  fl_free(tri);
  fl_free(X);
  fl_free(T);
  return rc;
}


int fl_mesh_sphere(double r, int n, fl_mesh **out) {
  *out = NULL;
  FL_TRY(check_size("sphere", "radius", r));
  FL_TRY(check_count("sphere", "n", n));
  double lo[3] = {-1, -1, -1}, h[3] = {1.0 / n, 1.0 / n, 1.0 / n};
  double *X;
  fl_int *T, nv, nt;
  FL_TRY(kuhn_grid("sphere", lo, h, 2 * n, 2 * n, 2 * n, &X, &T, &nv, &nt));
  for (fl_int v = 0; v < nv; v++) {
    double *x = X + 3 * v;
    // snap the grid to exact multiples so the boundary lies on |p|_inf = 1
    double inf = 0, two = 0;
    for (int k = 0; k < 3; k++) {
      x[k] = round(x[k] * n) / n;
      if (fabs(x[k]) > inf) inf = fabs(x[k]);
      two += x[k] * x[k];
    }
    double s = two > 0 ? r * inf / sqrt(two) : 0;
    for (int k = 0; k < 3; k++) x[k] *= s;
  }
  orient(X, T, nt);
  int rc = fl_mesh_create(nv, X, nt, T, "sphere mesh", out);
  fl_free(X);
  fl_free(T);
  return rc;
}

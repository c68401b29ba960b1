// SPDX-License-Identifier: Apache-2.0
/* mesh_io.c: Gmsh 4.1 ASCII and VTK XML (.vtu, ASCII) meshes in and out, ParaView series
 * (fl_mesh.h). Our own small readers: the formats are public and the subset is tiny (nodes and
 * tetrahedra), so a dependency (the Gmsh SDK, VTK) would be far larger than the code.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fl_mesh.h"

static int ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), k = strlen(suf);
  return n >= k && strcasecmp(s + n - k, suf) == 0;
}


//---- Gmsh 4.1 ----

typedef struct lines {
  FILE *f;
  const char *path;
  long no;
  char *buf;
  size_t cap;
} lines;

/* Next line (without the newline) or NULL at the end. */
static char *next_line(lines *L) {
  ssize_t n = getline(&L->buf, &L->cap, L->f);
  if (n < 0) return NULL;
  L->no++;
  while (n > 0 && (L->buf[n - 1] == '\n' || L->buf[n - 1] == '\r')) L->buf[--n] = 0;
  return L->buf;
}


static int msh_err(const lines *L, const char *what) {
  return fl_seterr(FL_ERR_FORMAT, "%s: line %ld: %s", L->path, L->no, what);
}


/* Reads n reals of the current line into v. */
static int parse_nums(lines *L, const char *s, int n, double *v, const char *what) {
  char *end;
  for (int k = 0; k < n; k++) {
    v[k] = strtod(s, &end);
    if (end == s) return msh_err(L, what);
    s = end;
  }
  return FL_OK;
}


/* Reads n integers of the current line into v, each in [lo, hi] (parsed as integers: a real,
 * NaN or an overflowing number is an error naming the line and `what`). */
static int parse_ints(lines *L, const char *s, int n, long long lo, long long hi, long long *v,
                      const char *what) {
  char *end;
  for (int k = 0; k < n; k++) {
    if (!fl_parse_ll(s, &end, lo, hi, &v[k]) || (*end && *end != ' ' && *end != '\t')) {
      char msg[320];
      snprintf(msg, sizeof msg, "%s (integer %d in [%lld, %lld])", what, k + 1, lo, hi);
      return msh_err(L, msg);
    }
    s = end;
  }
  return FL_OK;
}


#define MSH_MAX_TAG 100000000LL /* node tags index a table: at most 1e8 (0.4 GB) */

static int read_msh(const char *path, fl_mesh **out) {
  lines L = {NULL, path, 0, NULL, 0};
  FL_TRY(fl_open_input(path, "Gmsh .msh file", FL_MESH_FILE_MAX, &L.f));
  double *X = NULL;
  fl_int *T = NULL, *map = NULL, nv = 0, nt = 0, capt = 0;
  long long maxtag = 0;
  int rc = FL_OK, have_fmt = 0, have_nodes = 0, have_elems = 0;
  char *s;
  while (rc >= 0 && (s = next_line(&L))) {
    if (!strcmp(s, "$MeshFormat")) {
      s = next_line(&L);
      double v[3];
      if (have_fmt) {
        rc = msh_err(&L, "a second $MeshFormat section, expected one");
        break;
      }
      if (!s || parse_nums(&L, s, 3, v, "") < 0 || v[0] != 4.1 || v[1] != 0) {
        rc = msh_err(&L, "expected \"4.1 0 8\" (Gmsh format 4.1, ASCII); other versions and "
                         "binary files are not read");
        break;
      }
      have_fmt = 1;
    } else if (!strcmp(s, "$Nodes")) {
      if (have_nodes) {
        rc = msh_err(&L, "a second $Nodes section, expected one");
        break;
      }
      have_nodes = 1;
      long long h[4];
      if (!(s = next_line(&L)) ||
          (rc = parse_ints(&L, s, 4, 0, MSH_MAX_TAG, h,
                           "expected numEntityBlocks numNodes minNodeTag maxNodeTag")) < 0)
        break;
      if (h[1] < 4 || h[3] < h[1]) {
        rc = msh_err(&L, "node counts and tags out of range (at least 4 nodes, maxNodeTag >= "
                         "numNodes, tags <= 1e8)");
        break;
      }
      maxtag = h[3];
      long long total = h[1];
      if ((rc = fl_mem_check(path, "the $Nodes section (coordinates and tag table)",
                             (double)total * 3 * sizeof(double) +
                                 (double)(maxtag + 1) * sizeof(fl_int))) < 0)
        break;
      X = fl_malloc((size_t)total * 3 * sizeof(double));
      map = fl_malloc((size_t)(maxtag + 1) * sizeof(fl_int));
      if (!X || !map) {
        rc = fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
        break;
      }
      for (long long k = 0; k <= maxtag; k++) map[k] = -1;
      for (long long b = 0; b < h[0] && rc >= 0; b++) {
        long long bh[4];
        if (!(s = next_line(&L)) ||
            (rc = parse_ints(&L, s, 4, -MSH_MAX_TAG, MSH_MAX_TAG, bh,
                             "expected entityDim entityTag parametric numNodesInBlock")) < 0)
          break;
        if (bh[2] != 0) {
          rc = msh_err(&L, "parametric nodes are not read");
          break;
        }
        long long nb = bh[3];
        if (nb < 0 || nv + nb > total) {
          rc = msh_err(&L, nb < 0 ? "negative numNodesInBlock"
                                  : "more nodes than the $Nodes header announced");
          break;
        }
        for (long long k = 0; k < nb && rc >= 0; k++) {
          long long tag;
          if (!(s = next_line(&L)) ||
              (rc = parse_ints(&L, s, 1, 1, maxtag, &tag, "expected a node tag in [1, maxNodeTag]")) < 0)
            break;
          if (map[tag] >= 0) {
            rc = msh_err(&L, "node tag repeated");
            break;
          }
          map[tag] = nv + (fl_int)k;
        }
        for (long long k = 0; k < nb && rc >= 0; k++) {
          if (!(s = next_line(&L))) {
            rc = msh_err(&L, "expected node coordinates");
            break;
          }
          rc = parse_nums(&L, s, 3, X + 3 * (nv + k), "expected three coordinates x y z");
        }
        nv += (fl_int)nb;
      }
    } else if (!strcmp(s, "$Elements")) {
      if (!have_nodes) {
        rc = msh_err(&L, "$Elements before $Nodes");
        break;
      }
      if (have_elems) {
        rc = msh_err(&L, "a second $Elements section, expected one");
        break;
      }
      have_elems = 1;
      long long h[4];
      if (!(s = next_line(&L)) ||
          (rc = parse_ints(&L, s, 4, 0, INT32_MAX, h,
                           "expected numEntityBlocks numElements minElementTag maxElementTag")) < 0)
        break;
      for (long long b = 0; b < h[0] && rc >= 0; b++) {
        long long bh[4];
        if (!(s = next_line(&L)) ||
            (rc = parse_ints(&L, s, 4, -INT32_MAX, INT32_MAX, bh,
                             "expected entityDim entityTag elementType numElementsInBlock")) < 0)
          break;
        if (bh[3] < 0) {
          rc = msh_err(&L, "negative numElementsInBlock");
          break;
        }
        for (long long k = 0; k < bh[3] && rc >= 0; k++) {
          if (!(s = next_line(&L))) {
            rc = msh_err(&L, "expected an element");
            break;
          }
          if (bh[2] != 4) continue; // points, lines, triangles: not part of the solid
          long long v[5];
          if ((rc = parse_ints(&L, s, 5, 0, INT64_MAX, v, "expected a tetrahedron: tag n1 n2 n3 n4")) < 0)
            break;
          if (nt == capt) {
            if (capt >= INT32_MAX / 8) {
              rc = msh_err(&L, "more than 2^28 tetrahedra");
              break;
            }
            capt = capt ? 2 * capt : 1024;
            fl_int *nT = fl_realloc(T, (size_t)capt * 4 * sizeof(fl_int));
            if (!nT) {
              rc = fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
              break;
            }
            T = nT;
          }
          for (int a = 0; a < 4; a++) {
            long long tag = v[1 + a];
            if (tag < 1 || tag > maxtag || map[tag] < 0) {
              char msg[128];
              snprintf(msg, sizeof msg, "element %lld: unknown node tag %lld", v[0], tag);
              rc = msh_err(&L, msg);
              break;
            }
            T[4 * nt + a] = map[tag];
          }
          nt++;
        }
      }
    }
  }
  if (rc >= 0 && !have_fmt) rc = fl_seterr(FL_ERR_FORMAT, "%s: no $MeshFormat section (expected a Gmsh .msh file, format 4.1)", path);
  if (rc >= 0 && nt == 0) rc = fl_seterr(FL_ERR_FORMAT, "%s: no 4-node tetrahedra (element type 4)", path);
  if (rc >= 0) rc = fl_mesh_create(nv, X, nt, T, path, out);
  free(L.buf);
  fclose(L.f);
  fl_free(X);
  fl_free(T);
  fl_free(map);
  return rc;
}


//---- VTK .vtu (ASCII) ----

/* The text of the <DataArray ... Name="name" ...> inside `scope` (NULL: anywhere). */
static const char *vtu_array(const char *text, const char *scope, const char *name, const char **end) {
  const char *s = text;
  if (scope) {
    s = strstr(text, scope);
    if (!s) return NULL;
  }
  for (const char *p = strstr(s, "<DataArray"); p; p = strstr(p + 1, "<DataArray")) {
    const char *gt = strchr(p, '>');
    if (!gt) return NULL;
    if (name) {
      char key[96];
      snprintf(key, sizeof key, "Name=\"%s\"", name);
      const char *k = strstr(p, key);
      if (!k || k > gt) continue;
    }
    const char *fmt = strstr(p, "format=\"");
    if (fmt && fmt < gt && strncmp(fmt + 8, "ascii", 5) != 0) return NULL;
    *end = strstr(gt, "</DataArray>");
    return *end ? gt + 1 : NULL;
  }
  return NULL;
}


static int vtu_numbers(const char *path, const char *what, const char *s, const char *end,
                       double **out, long *n) {
  long cap = 1024, k = 0;
  double *v = fl_malloc((size_t)cap * sizeof(double));
  if (!v) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
  char *e;
  while (s < end) {
    while (s < end && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')) s++;
    if (s >= end) break;
    double x = strtod(s, &e);
    if (e == s) {
      fl_free(v);
      return fl_seterr(FL_ERR_FORMAT, "%s: DataArray %s: expected numbers (ASCII format)", path, what);
    }
    if (k == cap) {
      cap *= 2;
      double *nv = fl_realloc(v, (size_t)cap * sizeof(double));
      if (!nv) {
        fl_free(v);
        return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
      }
      v = nv;
    }
    v[k++] = x;
    s = e;
  }
  *out = v;
  *n = k;
  return FL_OK;
}


/* x as an integer in [lo, hi] into *out; 0 when it is not one (NaN, a fraction, too big). */
static int as_index(double x, long lo, long hi, long *out) {
  if (!(x >= (double)lo && x <= (double)hi) || x != floor(x)) return 0;
  *out = (long)x;
  return 1;
}


static int read_vtu(const char *path, fl_mesh **out) {
  // a regular file of known size (a folder, FIFO or device has none), opened without blocking
  FILE *f = NULL;
  FL_TRY(fl_open_input(path, "VTK .vtu file", FL_MESH_FILE_MAX, &f));
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    fclose(f);
    return fl_seterr(FL_ERR_IO, "%s: cannot stat", path);
  }
  long long len = (long long)st.st_size;
  // the text, then up to one double per two bytes of it (numbers and separators)
  int mrc = fl_mem_check(path, "reading the file", (double)len * (1 + 4.0 * sizeof(double) / 2));
  if (mrc < 0) {
    fclose(f);
    return mrc;
  }
  char *text = fl_malloc((size_t)len + 1);
  if (!text) {
    fclose(f);
    return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
  }
  size_t got = fread(text, 1, (size_t)len, f);
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    fl_free(text);
    return fl_seterr(FL_ERR_IO, "%s: read error", path);
  }
  text[got] = 0;
  int rc = FL_OK;
  double *P = NULL, *C = NULL, *O = NULL, *Ty = NULL;
  long np = 0, nc = 0, no = 0, nty = 0;
  fl_int *T = NULL, nt = 0;
  const char *end, *s;
  if (!strstr(text, "<UnstructuredGrid")) {
    rc = fl_seterr(FL_ERR_FORMAT, "%s: expected a VTK XML UnstructuredGrid", path);
    goto done;
  }
  static const char *const names[4] = {NULL, "connectivity", "offsets", "types"};
  static const char *const scopes[4] = {"<Points>", "<Cells>", "<Cells>", "<Cells>"};
  double **dst[4] = {&P, &C, &O, &Ty};
  long *cnt[4] = {&np, &nc, &no, &nty};
  for (int a = 0; a < 4 && rc >= 0; a++) {
    s = vtu_array(text, scopes[a], names[a], &end);
    if (!s) {
      rc = fl_seterr(FL_ERR_FORMAT, "%s: no ASCII DataArray %s in %s (binary and appended data are not read)",
                     path, names[a] ? names[a] : "of points", scopes[a]);
      break;
    }
    rc = vtu_numbers(path, names[a] ? names[a] : "Points", s, end, dst[a], cnt[a]);
  }
  if (rc < 0) goto done;
  if (np % 3 || no != nty) {
    rc = fl_seterr(FL_ERR_FORMAT, "%s: %ld point coordinates (expected 3 per point), %ld offsets and %ld types",
                   path, np, no, nty);
    goto done;
  }
  T = fl_malloc((size_t)(nty > 0 ? nty : 1) * 4 * sizeof(fl_int));
  if (!T) {
    rc = fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
    goto done;
  }
  if (np / 3 > INT32_MAX || nty > INT32_MAX / 4) {
    rc = fl_seterr(FL_ERR_FORMAT, "%s: %ld points and %ld cells, expected at most 2^31-1 points "
                   "and 2^29 cells", path, np / 3, nty);
    goto done;
  }
  for (long c = 0; c < nty; c++) {
    long lo = 0, hi, type, idx;
    if ((c && !as_index(O[c - 1], 0, nc, &lo)) || !as_index(O[c], 0, nc, &hi) || hi < lo) {
      rc = fl_seterr(FL_ERR_FORMAT, "%s: cell %ld: offsets out of range, expected integers in "
                     "[0, %ld] that do not decrease", path, c, nc);
      goto done;
    }
    if (!as_index(Ty[c], 0, 255, &type)) {
      rc = fl_seterr(FL_ERR_FORMAT, "%s: cell %ld: type %g, expected a VTK cell type (an integer "
                     "in [0, 255])", path, c, Ty[c]);
      goto done;
    }
    if (type != 10) continue; // only tetrahedra
    if (hi - lo != 4) {
      rc = fl_seterr(FL_ERR_FORMAT, "%s: cell %ld: a tetrahedron with %ld points", path, c, hi - lo);
      goto done;
    }
    for (int a = 0; a < 4; a++) {
      if (!as_index(C[lo + a], 0, np / 3 - 1, &idx)) {
        rc = fl_seterr(FL_ERR_FORMAT, "%s: cell %ld: connectivity entry %g, expected a point "
                       "index in [0, %ld)", path, c, C[lo + a], np / 3);
        goto done;
      }
      T[4 * nt + a] = (fl_int)idx;
    }
    nt++;
  }
  if (nt == 0) {
    rc = fl_seterr(FL_ERR_FORMAT, "%s: no tetrahedra (VTK cell type 10)", path);
    goto done;
  }
  rc = fl_mesh_create((fl_int)(np / 3), P, nt, T, path, out);
done:
  fl_free(text);
  fl_free(P);
  fl_free(C);
  fl_free(O);
  fl_free(Ty);
  fl_free(T);
  return rc;
}


int fl_mesh_read(const char *path, fl_mesh **out) {
  *out = NULL;
  if (ends_with(path, ".msh")) return read_msh(path, out);
  if (ends_with(path, ".vtu")) return read_vtu(path, out);
  return fl_seterr(FL_ERR_INVAL, "%s: unknown mesh format; expected a .msh (Gmsh 4.1) or .vtu file", path);
}


//---- writers: to a temporary file, renamed into place ----

static FILE *open_tmp(const char *path, char *tmp, size_t n) {
  snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) fl_seterr(FL_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno));
  return f;
}


static int close_tmp(FILE *f, const char *tmp, const char *path) {
  int bad = ferror(f);
  if (fclose(f) != 0) bad = 1;
  if (!bad && rename(tmp, path) == 0) return FL_OK;
  remove(tmp);
  return fl_seterr(FL_ERR_IO, "%s: write error", path);
}


int fl_mesh_write_msh(const fl_mesh *m, const char *path) {
  char tmp[1100];
  FILE *f = open_tmp(path, tmp, sizeof tmp);
  if (!f) return FL_ERR_IO;
  fprintf(f, "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n");
  fprintf(f, "$Nodes\n1 %d 1 %d\n3 1 0 %d\n", (int)m->nvert, (int)m->nvert, (int)m->nvert);
  for (fl_int v = 0; v < m->nvert; v++) fprintf(f, "%d\n", (int)v + 1);
  for (fl_int v = 0; v < m->nvert; v++)
    fprintf(f, "%.17g %.17g %.17g\n", m->X[3 * v], m->X[3 * v + 1], m->X[3 * v + 2]);
  fprintf(f, "$EndNodes\n$Elements\n1 %d 1 %d\n3 1 4 %d\n", (int)m->ntet, (int)m->ntet, (int)m->ntet);
  for (fl_int e = 0; e < m->ntet; e++) {
    const fl_int *t = m->tet + 4 * e;
    fprintf(f, "%d %d %d %d %d\n", (int)e + 1, (int)t[0] + 1, (int)t[1] + 1, (int)t[2] + 1, (int)t[3] + 1);
  }
  fprintf(f, "$EndElements\n");
  return close_tmp(f, tmp, path);
}


static void vtk_field(FILE *f, const fl_vtk_field *fd, fl_int n) {
  fprintf(f, "        <DataArray type=\"Float64\" Name=\"%s\" NumberOfComponents=\"%d\" format=\"ascii\">\n",
          fd->name, fd->ncomp);
  for (fl_int i = 0; i < n; i++) {
    for (int c = 0; c < fd->ncomp; c++) {
      double x = fd->val[(size_t)i * (size_t)fd->ncomp + (size_t)c];
      fprintf(f, c ? " %.9g" : "          %.9g", isfinite(x) ? x : 0.0);
    }
    fputc('\n', f);
  }
  fprintf(f, "        </DataArray>\n");
}


int fl_mesh_write_vtu(const fl_mesh *m, const double *x, int npf, const fl_vtk_field *pf, int ncf,
                      const fl_vtk_field *cf, const char *path) {
  if (!x) x = m->X;
  char tmp[1100];
  FILE *f = open_tmp(path, tmp, sizeof tmp);
  if (!f) return FL_ERR_IO;
  fprintf(f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
             "  <UnstructuredGrid>\n    <Piece NumberOfPoints=\"%d\" NumberOfCells=\"%d\">\n",
          (int)m->nvert, (int)m->ntet);
  fprintf(f, "      <Points>\n        <DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n");
  for (fl_int v = 0; v < m->nvert; v++)
    fprintf(f, "          %.17g %.17g %.17g\n", x[3 * v], x[3 * v + 1], x[3 * v + 2]);
  fprintf(f, "        </DataArray>\n      </Points>\n      <Cells>\n"
             "        <DataArray type=\"Int32\" Name=\"connectivity\" format=\"ascii\">\n");
  for (fl_int e = 0; e < m->ntet; e++) {
    const fl_int *t = m->tet + 4 * e;
    fprintf(f, "          %d %d %d %d\n", (int)t[0], (int)t[1], (int)t[2], (int)t[3]);
  }
  fprintf(f, "        </DataArray>\n        <DataArray type=\"Int32\" Name=\"offsets\" format=\"ascii\">\n");
  for (fl_int e = 0; e < m->ntet; e++) fprintf(f, "          %d\n", 4 * ((int)e + 1));
  fprintf(f, "        </DataArray>\n        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n");
  for (fl_int e = 0; e < m->ntet; e++) fprintf(f, "          10\n");
  fprintf(f, "        </DataArray>\n      </Cells>\n");
  if (npf > 0) {
    fprintf(f, "      <PointData>\n");
    for (int k = 0; k < npf; k++) vtk_field(f, &pf[k], m->nvert);
    fprintf(f, "      </PointData>\n");
  }
  if (ncf > 0) {
    fprintf(f, "      <CellData>\n");
    for (int k = 0; k < ncf; k++) vtk_field(f, &cf[k], m->ntet);
    fprintf(f, "      </CellData>\n");
  }
  fprintf(f, "    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n");
  return close_tmp(f, tmp, path);
}


int fl_vtp_write(const char *path, fl_int npt, const double *x, fl_int nverts, const fl_int *verts,
                 fl_int ntri, const fl_int *tri, int npf, const fl_vtk_field *pf, int ncf,
                 const fl_vtk_field *cf) {
  char tmp[1100];
  FILE *f = open_tmp(path, tmp, sizeof tmp);
  if (!f) return FL_ERR_IO;
  fprintf(f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
             "  <PolyData>\n    <Piece NumberOfPoints=\"%d\" NumberOfVerts=\"%d\" NumberOfLines=\"0\" "
             "NumberOfStrips=\"0\" NumberOfPolys=\"%d\">\n", (int)npt, (int)nverts, (int)ntri);
  fprintf(f, "      <Points>\n        <DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n");
  for (fl_int v = 0; v < npt; v++)
    fprintf(f, "          %.17g %.17g %.17g\n", x[3 * v], x[3 * v + 1], x[3 * v + 2]);
  fprintf(f, "        </DataArray>\n      </Points>\n");
  // a section with no cells is left out: readers take an absent section as empty
  if (nverts > 0) {
    fprintf(f, "      <Verts>\n        <DataArray type=\"Int32\" Name=\"connectivity\" format=\"ascii\">\n");
    for (fl_int k = 0; k < nverts; k++) fprintf(f, "          %d\n", (int)verts[k]);
    fprintf(f, "        </DataArray>\n        <DataArray type=\"Int32\" Name=\"offsets\" format=\"ascii\">\n");
    for (fl_int k = 0; k < nverts; k++) fprintf(f, "          %d\n", (int)k + 1);
    fprintf(f, "        </DataArray>\n      </Verts>\n");
  }
  if (ntri > 0) {
    fprintf(f, "      <Polys>\n        <DataArray type=\"Int32\" Name=\"connectivity\" format=\"ascii\">\n");
    for (fl_int k = 0; k < ntri; k++)
      fprintf(f, "          %d %d %d\n", (int)tri[3 * k], (int)tri[3 * k + 1], (int)tri[3 * k + 2]);
    fprintf(f, "        </DataArray>\n        <DataArray type=\"Int32\" Name=\"offsets\" format=\"ascii\">\n");
    for (fl_int k = 0; k < ntri; k++) fprintf(f, "          %d\n", 3 * ((int)k + 1));
    fprintf(f, "        </DataArray>\n      </Polys>\n");
  }
  if (npf > 0) {
    fprintf(f, "      <PointData>\n");
    for (int k = 0; k < npf; k++) vtk_field(f, &pf[k], npt);
    fprintf(f, "      </PointData>\n");
  }
  if (ncf > 0) {
    fprintf(f, "      <CellData>\n");
    for (int k = 0; k < ncf; k++) vtk_field(f, &cf[k], nverts + ntri);
    fprintf(f, "      </CellData>\n");
  }
  fprintf(f, "    </Piece>\n  </PolyData>\n</VTKFile>\n");
  return close_tmp(f, tmp, path);
}


int fl_pvd_write(const char *path, int n, const double *times, const char *const *files) {
  char tmp[1100];
  FILE *f = open_tmp(path, tmp, sizeof tmp);
  if (!f) return FL_ERR_IO;
  fprintf(f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n  <Collection>\n");
  for (int k = 0; k < n; k++)
    fprintf(f, "    <DataSet timestep=\"%.17g\" part=\"0\" file=\"%s\"/>\n", times[k], files[k]);
  fprintf(f, "  </Collection>\n</VTKFile>\n");
  return close_tmp(f, tmp, path);
}

// SPDX-License-Identifier: Apache-2.0
/* fl_mesh.h: tetrahedral meshes of deformable bodies: validation, boundary extraction,
 * generators (box, cylinder, sphere), Gmsh 4.1 and VTK reading and writing.
 *
 * A mesh is linear tetrahedra over rest positions X. Every tet is positively oriented
 * (det[X1-X0, X2-X0, X3-X0] > 0); an inverted or degenerate tet is an error, never flipped
 * silently. The boundary is the set of faces used by exactly one tet, oriented outward, and
 * must be a closed 2-manifold (every boundary edge in exactly two boundary triangles).
 *
 * Units SI (m). Ownership: a mesh owns its arrays; fl_mesh_free releases them. Functions
 * return FL_OK or a negative FL_ERR_* code with a message (fl_errmsg) naming the file or
 * generator, the place (line, element) and what was expected; on error *out is NULL and no
 * file is left half-written.
 */
#ifndef FL_MESH_H
#define FL_MESH_H

/* The largest .msh or .vtu file read (bytes): 2 GiB. */
#define FL_MESH_FILE_MAX 2147483648.0
// layer 4: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 4
#error "sim/fl_mesh.h is in sim/, layer 4: a lower layer may not include it (docs/layers.md)"
#endif

#include "../core/fl_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fl_mesh {
  fl_int nvert, ntet;
  double *X;    /* (nvert x 3) rest positions (m) */
  fl_int *tet;  /* (ntet x 4) vertex indices, positively oriented */
  fl_int ntri;
  fl_int *tri;  /* (ntri x 3) boundary triangles, counter-clockwise seen from outside */
  fl_int nsurf;
  fl_int *surf; /* (nsurf) boundary vertices, ascending */
} fl_mesh;

/* Frees a mesh and its arrays (NULL-safe). */
void fl_mesh_free(fl_mesh *m);

/* Builds a mesh from arrays (copied): X (nvert x 3), tet (ntet x 4). Checks nvert >= 4,
 * ntet >= 1, finite coordinates, indices in [0, nvert), four distinct vertices per tet, every
 * tet's volume > 1e-12 (longest edge)^3 ("tet k is inverted" / "degenerate"), no face in more
 * than two tets, a manifold boundary. Every message starts with `where`. Returns FL_OK,
 * FL_ERR_INVAL or FL_ERR_NOMEM. */
int fl_mesh_create(fl_int nvert, const double *X, fl_int ntet, const fl_int *tet,
                   const char *where, fl_mesh **out);

/* Generators, centred at the origin:
 *   box       size[0] x size[1] x size[2] (m) in nx x ny x nz cells, each cut into the 6 tets
 *             around its main diagonal (conforming);
 *   cylinder  radius r, axis z, z in [-len/2, len/2]; the disk has nring rings of 6 i
 *             vertices at radius r i / nring (the outer ring on the circle), extruded into
 *             nlayer layers, every prism cut into 3 tets by global vertex order (conforming);
 *   sphere    radius r: a (2n)^3 cube grid of [-1, 1]^3 mapped radially onto the ball
 *             (p -> r p |p|_inf / |p|_2), boundary vertices on the sphere.
 * Counts must be >= 1 (<= 1000), sizes positive and finite. */
int fl_mesh_box(const double size[3], int nx, int ny, int nz, fl_mesh **out);
int fl_mesh_cylinder(double r, double len, int nring, int nlayer, fl_mesh **out);
int fl_mesh_sphere(double r, int n, fl_mesh **out);

/* Sum of the tets' volumes (m^3). */
double fl_mesh_volume(const fl_mesh *m);

/* Vertices of rest positions inside [lo, hi] grown by tol (m): *idx (ascending, fl_malloc'ed,
 * caller frees; NULL when *n = 0). FL_OK or FL_ERR_NOMEM. */
int fl_mesh_select_box(const fl_mesh *m, const double lo[3], const double hi[3], double tol,
                       fl_int **idx, fl_int *n);

/* Reads a Gmsh .msh (format 4.1 ASCII: $Nodes and $Elements; 4-node tetrahedra, element type
 * 4, are kept, other elements ignored; node tags may have gaps) or a VTK .vtu (ASCII
 * unstructured grid, cell type 10), chosen by the extension. FL_ERR_IO (cannot open),
 * FL_ERR_FORMAT (syntax, naming the line or array) or FL_ERR_INVAL (fl_mesh_create's checks). */
int fl_mesh_read(const char *path, fl_mesh **out);

/* Writes Gmsh 4.1 ASCII (one volume entity; %.17g, so reading it back is exact). */
int fl_mesh_write_msh(const fl_mesh *m, const char *path);

/* A named field for VTK output: val is (n x ncomp), n = vertices or tets. */
typedef struct fl_vtk_field {
  const char *name;
  int ncomp;
  const double *val;
} fl_vtk_field;

/* Writes the mesh at positions x (nvert x 3; NULL: X) as a VTK XML unstructured grid (ASCII)
 * with npf point fields and ncf cell fields. Written to a temporary file and renamed. */
int fl_mesh_write_vtu(const fl_mesh *m, const double *x, int npf, const fl_vtk_field *pf, int ncf,
                      const fl_vtk_field *cf, const char *path);

/* Writes a VTK XML PolyData file (ASCII): npt points x (npt x 3, m), nverts one-point vertex
 * cells (verts: point indices; NULL when nverts is 0), ntri triangles (tri: ntri x 3 point
 * indices), npf point fields (npt tuples each) and ncf cell fields (nverts + ntri tuples: the
 * vertex cells first, then the triangles, VTK's cell order). Written to a temporary file and
 * renamed. Returns FL_OK or FL_ERR_IO naming the file. */
int fl_vtp_write(const char *path, fl_int npt, const double *x, fl_int nverts, const fl_int *verts,
                 fl_int ntri, const fl_int *tri, int npf, const fl_vtk_field *pf, int ncf,
                 const fl_vtk_field *cf);

/* Writes a ParaView collection: n frames at times (s) with file names relative to the .pvd. */
int fl_pvd_write(const char *path, int n, const double *times, const char *const *files);

#ifdef __cplusplus
}
#endif
#endif /* FL_MESH_H */

// SPDX-License-Identifier: Apache-2.0
/* test_mesh.c: tetrahedral meshes: generators against exact volumes and closed surfaces,
 * Gmsh and VTK round trips, and bad meshes rejected with the place named.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../sim/fl_mesh.h"
#include "fl_test.h"

/* Closed, outward surface: the area vectors sum to zero and the divergence theorem gives the
 * tets' volume. */
static int surface_closed(const fl_mesh *m, double *vol_surf) {
  double S[3] = {0, 0, 0}, V = 0, amax = 0;
  for (fl_int t = 0; t < m->ntri; t++) {
    const double *a = m->X + 3 * m->tri[3 * t], *b = m->X + 3 * m->tri[3 * t + 1],
                 *c = m->X + 3 * m->tri[3 * t + 2];
    double u[3], v[3], n[3];
    for (int k = 0; k < 3; k++) {
      u[k] = b[k] - a[k];
      v[k] = c[k] - a[k];
    }
    n[0] = 0.5 * (u[1] * v[2] - u[2] * v[1]);
    n[1] = 0.5 * (u[2] * v[0] - u[0] * v[2]);
    n[2] = 0.5 * (u[0] * v[1] - u[1] * v[0]);
    for (int k = 0; k < 3; k++) {
      S[k] += n[k];
      V += (a[k] + b[k] + c[k]) / 3 * n[k] / 3;
      if (fabs(n[k]) > amax) amax = fabs(n[k]);
    }
  }
  *vol_surf = V;
  return fabs(S[0]) + fabs(S[1]) + fabs(S[2]) < 1e-12 * amax * (double)m->ntri;
}


FL_TEST(box_volume_counts_surface) {
  double size[3] = {0.3, 0.2, 0.5};
  fl_mesh *m = NULL;
  ASSERT_OK(fl_mesh_box(size, 3, 2, 4, &m));
  ASSERT_EQ(m->ntet, 6 * 3 * 2 * 4);
  ASSERT_EQ(m->nvert, 4 * 3 * 5);
  ASSERT_EQ(m->ntri, 4 * (3 * 2 + 2 * 4 + 4 * 3));
  ASSERT_NEAR(fl_mesh_volume(m), 0.3 * 0.2 * 0.5, 1e-15);
  double vs;
  ASSERT(surface_closed(m, &vs));
  ASSERT_NEAR(vs, 0.3 * 0.2 * 0.5, 1e-14);
  // boundary vertices: all but the (nx-1)(ny-1)(nz-1) interior ones
  ASSERT_EQ(m->nsurf, m->nvert - 2 * 1 * 3);
  // mirror symmetric about x = 0 for an even count: every vertex has its mirror image
  fl_mesh *e = NULL;
  ASSERT_OK(fl_mesh_box(size, 4, 2, 2, &e));
  for (fl_int v = 0; v < e->nvert; v++) {
    int found = 0;
    for (fl_int u = 0; u < e->nvert && !found; u++)
      found = fabs(e->X[3 * u] + e->X[3 * v]) < 1e-15 && e->X[3 * u + 1] == e->X[3 * v + 1] &&
              e->X[3 * u + 2] == e->X[3 * v + 2];
    ASSERT(found);
  }
  fl_mesh_free(e);
  fl_mesh_free(m);
  return 0;
}


FL_TEST(cylinder_polygon_volume_and_rim) {
  double prev = INFINITY;
  for (int n = 1; n <= 8; n *= 2) {
    fl_mesh *m = NULL;
    double r = 0.1, len = 0.02;
    ASSERT_OK(fl_mesh_cylinder(r, len, n, 2, &m));
    // the outer ring is a regular 6n-gon on the circle: area 3 n r^2 sin(2 pi / 6n)
    double poly = 0.5 * 6 * n * r * r * sin(2 * M_PI / (6 * n));
    ASSERT_NEAR(fl_mesh_volume(m), poly * len, 1e-15);
    double vs;
    ASSERT(surface_closed(m, &vs));
    ASSERT_NEAR(vs, poly * len, 1e-15);
    ASSERT_EQ(m->ntet, 3 * 6 * n * n * 2);
    int rim = 0;
    for (fl_int v = 0; v < m->nvert; v++) {
      double rho = hypot(m->X[3 * v], m->X[3 * v + 1]);
      ASSERT(rho <= r * (1 + 1e-14));
      rim += fabs(rho - r) < 1e-14;
    }
    ASSERT_EQ(rim, 3 * 6 * n);
    double err = fabs(poly * len - M_PI * r * r * len);
    ASSERT(err < prev);
    prev = err;
    fl_mesh_free(m);
  }
  return 0;
}


FL_TEST(sphere_volume_converges) {
  double prev = INFINITY;
  for (int n = 1; n <= 6; n++) {
    fl_mesh *m = NULL;
    ASSERT_OK(fl_mesh_sphere(0.5, n, &m));
    double ref = 4.0 / 3.0 * M_PI * 0.125, err = fabs(fl_mesh_volume(m) - ref) / ref, vs;
    ASSERT(surface_closed(m, &vs));
    for (fl_int s = 0; s < m->nsurf; s++) {
      const double *x = m->X + 3 * m->surf[s];
      ASSERT_NEAR(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]), 0.5, 1e-14);
    }
    if (n == 4) ASSERT_LE(err, 0.05);
    ASSERT(err < prev);
    prev = err;
    fl_mesh_free(m);
  }
  return 0;
}


FL_TEST(msh_and_vtu_round_trip) {
  char dir[] = "/tmp/fl_mesh_XXXXXX", p[256];
  ASSERT(mkdtemp(dir));
  fl_mesh *m = NULL, *r = NULL;
  ASSERT_OK(fl_mesh_cylinder(0.3, 0.1, 3, 2, &m));
  snprintf(p, sizeof p, "%s/c.msh", dir);
  ASSERT_OK(fl_mesh_write_msh(m, p));
  ASSERT_OK(fl_mesh_read(p, &r));
  ASSERT_EQ(r->nvert, m->nvert);
  ASSERT_EQ(r->ntet, m->ntet);
  ASSERT(memcmp(r->X, m->X, (size_t)m->nvert * 3 * sizeof(double)) == 0);
  ASSERT(memcmp(r->tet, m->tet, (size_t)m->ntet * 4 * sizeof(fl_int)) == 0);
  remove(p);
  fl_mesh_free(r);
  snprintf(p, sizeof p, "%s/c.vtu", dir);
  double *vm = calloc((size_t)m->ntet, sizeof(double));
  fl_vtk_field cf = {"von_mises", 1, vm};
  ASSERT_OK(fl_mesh_write_vtu(m, NULL, 0, NULL, 1, &cf, p));
  ASSERT_OK(fl_mesh_read(p, &r));
  ASSERT(memcmp(r->X, m->X, (size_t)m->nvert * 3 * sizeof(double)) == 0);
  ASSERT(memcmp(r->tet, m->tet, (size_t)m->ntet * 4 * sizeof(fl_int)) == 0);
  remove(p);
  free(vm);
  fl_mesh_free(r);
  fl_mesh_free(m);
  // a hand-written file with gaps in the node tags and a triangle to ignore
  snprintf(p, sizeof p, "%s/h.msh", dir);
  FILE *f = fopen(p, "w");
  fprintf(f, "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 4 10 40\n3 1 0 4\n10\n20\n30\n40\n"
             "0 0 0\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n$Elements\n2 2 1 2\n2 1 2 1\n1 10 20 30\n"
             "3 1 4 1\n2 10 20 30 40\n$EndElements\n");
  fclose(f);
  ASSERT_OK(fl_mesh_read(p, &r));
  ASSERT_EQ(r->ntet, 1);
  ASSERT_EQ(r->ntri, 4);
  ASSERT_NEAR(fl_mesh_volume(r), 1.0 / 6, 1e-15);
  fl_mesh_free(r);
  remove(p);
  // a ParaView series
  snprintf(p, sizeof p, "%s/s.pvd", dir);
  const char *files[2] = {"a_0.vtu", "a_1.vtu"};
  double t[2] = {0, 0.5};
  ASSERT_OK(fl_pvd_write(p, 2, t, files));
  f = fopen(p, "r");
  char buf[1024];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  ASSERT_STR_CONTAINS(buf, "timestep=\"0.5\" part=\"0\" file=\"a_1.vtu\"");
  remove(p);
  rmdir(dir);
  return 0;
}


static void expect_bad(const char *dir, const char *name, const char *text, const char *needle) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  fputs(text, f);
  fclose(f);
  fl_mesh *m = (fl_mesh *)1;
  int rc = fl_mesh_read(p, &m);
  if (rc >= 0 || m != NULL || !strstr(fl_errmsg(), needle) || !strstr(fl_errmsg(), name)) {
    fprintf(stderr, "%s: rc %d, message '%s', expected '%s'\n", name, rc, fl_errmsg(), needle);
    exit(1);
  }
  remove(p);
}


#define MSH(nodes, elems)                                                                       \
  "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n" nodes "$EndNodes\n$Elements\n" elems         \
  "$EndElements\n"

FL_TEST(bad_meshes_rejected) {
  char dir[] = "/tmp/fl_mesh_XXXXXX";
  ASSERT(mkdtemp(dir));
  fl_mesh *m = (fl_mesh *)1;
  ASSERT(fl_mesh_read("/nonexistent/x.msh", &m) == FL_ERR_IO && m == NULL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "cannot open");
  expect_bad(dir, "v22.msh", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n", "4.1");
  expect_bad(dir, "inv.msh", MSH("1 5 1 5\n3 1 0 5\n1\n2\n3\n4\n5\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n0 0 -1\n",
                                 "1 1 1 1\n3 1 4 1\n1 1 3 2 4\n"), "tet 0 is inverted");
  expect_bad(dir, "flat.msh", MSH("1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n",
                                  "1 1 1 1\n3 1 4 1\n1 1 2 3 4\n"), "degenerate");
  expect_bad(dir, "tag.msh", MSH("1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n",
                                 "1 1 1 1\n3 1 4 1\n1 1 2 3 9\n"), "unknown node tag 9");
  // two tets sharing only an edge: the boundary is not a manifold
  expect_bad(dir, "edge.msh",
             MSH("1 6 1 6\n3 1 0 6\n1\n2\n3\n4\n5\n6\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n-1 0 0\n0 -1 -1\n",
                 "1 2 1 2\n3 1 4 2\n1 1 2 3 4\n2 1 5 6 4\n"), "non-manifold");
  expect_bad(dir, "empty.msh", MSH("1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n",
                                   "1 1 1 1\n2 1 2 1\n1 1 2 3\n"), "no 4-node tetrahedra");
  // arrays: out of range, repeated vertex
  double X[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  fl_int T[4] = {0, 1, 2, 7};
  ASSERT(fl_mesh_create(4, X, 1, T, "arrays", &m) == FL_ERR_INVAL && m == NULL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "out of range");
  fl_int T2[4] = {0, 1, 1, 3};
  ASSERT(fl_mesh_create(4, X, 1, T2, "arrays", &m) == FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "repeats");
  double sz[3] = {1, -1, 1};
  ASSERT(fl_mesh_box(sz, 1, 1, 1, &m) == FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "size[1]");
  ASSERT(fl_mesh_cylinder(1, 1, 0, 2, &m) == FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "nring");
  rmdir(dir);
  return 0;
}


/* Inputs that crashed or misread before: each is refused with a message, nothing allocated
 * past the memory limit, no undefined behaviour under the sanitizers. */
FL_TEST(hostile_meshes_rejected) {
  char dir[] = "/tmp/fl_mesh_XXXXXX";
  ASSERT(mkdtemp(dir));
  const char *nodes4 = "1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n";
  // a negative node-block size wrote outside the heap
  expect_bad(dir, "negblock.msh", MSH("1 4 1 4\n3 1 0 -4\n", "1 1 1 1\n3 1 4 1\n1 1 2 3 4\n"),
             "negative numNodesInBlock");
  // NaN counts and tags passed every range check and were cast to integers
  expect_bad(dir, "nantag.msh", MSH("1 4 1 nan\n", ""), "maxNodeTag");
  expect_bad(dir, "realcount.msh", MSH("1 4.5 1 4\n", ""), "numNodes");
  expect_bad(dir, "hugetag.msh", MSH("1 4 1 99999999999999999999\n", ""), "maxNodeTag");
  expect_bad(dir, "nanelem.msh", MSH("1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n",
                                     "1 1 1 1\n3 1 4 1\n1 1 2 nan 4\n"), "tetrahedron");
  // found by fuzz_msh: the same tet twice (vertex order 2 1 4 3 is 1 2 3 4 again) left no
  // boundary face at all, and two overlapping elements
  expect_bad(dir, "twice.msh", MSH("1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n",
                                   "1 2 1 2\n3 1 4 2\n1 1 2 3 4\n2 2 1 4 3\n"), "overlap (a repeated tet?)");
  // a second $Nodes section leaked the first and kept the first count
  char two[1024];
  snprintf(two, sizeof two, "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n%s$EndNodes\n$Nodes\n"
           "1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n", nodes4);
  expect_bad(dir, "twonodes.msh", two, "a second $Nodes section");
  // the memory estimate is checked before allocating: 1e8 tags need 0.4 GB
  setenv("FL_MEM_LIMIT_MB", "64", 1);
  expect_bad(dir, "bigtag.msh", MSH("1 4 1 100000000\n", ""), "above the limit of");
  unsetenv("FL_MEM_LIMIT_MB");
  // VTU: NaN and fractional indices, a folder and a FIFO named .vtu
  const char *vtu_head = "<VTKFile type=\"UnstructuredGrid\"><UnstructuredGrid><Piece>"
                         "<Points><DataArray format=\"ascii\">0 0 0 1 0 0 0 1 0 0 0 1</DataArray></Points><Cells>";
  char v[1024];
  snprintf(v, sizeof v, "%s<DataArray Name=\"connectivity\" format=\"ascii\">0 1 2 nan</DataArray>"
           "<DataArray Name=\"offsets\" format=\"ascii\">4</DataArray><DataArray Name=\"types\" "
           "format=\"ascii\">10</DataArray></Cells></Piece></UnstructuredGrid></VTKFile>", vtu_head);
  expect_bad(dir, "nanconn.vtu", v, "connectivity entry nan");
  snprintf(v, sizeof v, "%s<DataArray Name=\"connectivity\" format=\"ascii\">0 1 2 3</DataArray>"
           "<DataArray Name=\"offsets\" format=\"ascii\">nan</DataArray><DataArray Name=\"types\" "
           "format=\"ascii\">10</DataArray></Cells></Piece></UnstructuredGrid></VTKFile>", vtu_head);
  expect_bad(dir, "nanoff.vtu", v, "offsets out of range");
  snprintf(v, sizeof v, "%s<DataArray Name=\"connectivity\" format=\"ascii\">0 1 2 3</DataArray>"
           "<DataArray Name=\"offsets\" format=\"ascii\">4</DataArray><DataArray Name=\"types\" "
           "format=\"ascii\">1e300</DataArray></Cells></Piece></UnstructuredGrid></VTKFile>", vtu_head);
  expect_bad(dir, "bigtype.vtu", v, "VTK cell type");
  char p[300];
  fl_mesh *m = (fl_mesh *)1;
  snprintf(p, sizeof p, "%s/folder.vtu", dir);
  ASSERT(mkdir(p, 0700) == 0);
  ASSERT(fl_mesh_read(p, &m) == FL_ERR_IO && m == NULL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "is a folder, not a VTK .vtu file");
  rmdir(p);
  snprintf(p, sizeof p, "%s/fifo.vtu", dir);
  ASSERT(mkfifo(p, 0600) == 0);
  int fd = open(p, O_RDWR | O_NONBLOCK); // a writer end, so that opening to read does not block
  ASSERT(fd >= 0);
  ASSERT(fl_mesh_read(p, &m) == FL_ERR_IO && m == NULL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "is a FIFO, not a VTK .vtu file");
  close(fd);
  remove(p);
  // generators: counts whose products overflow a 32-bit int are refused with the estimate
  double sz[3] = {1, 1, 1};
  ASSERT(fl_mesh_box(sz, 1000, 1000, 1000, &m) == FL_ERR_INVAL && m == NULL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "6000000000 tets");
  ASSERT(fl_mesh_cylinder(1, 1, 1000, 1000, &m) == FL_ERR_INVAL && m == NULL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "cylinder mesh");
  ASSERT(fl_mesh_box(sz, 300, 300, 300, &m) == FL_ERR_NOMEM && m == NULL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "GB, above the limit");
  rmdir(dir);
  return 0;
}

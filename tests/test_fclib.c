// SPDX-License-Identifier: Apache-2.0
/* test_fclib.c: FCLIB files read and written with libhdf5 (problems/fclib_io.c).
 *
 * The shared files ($FL_SHARED_DIR/fclib, sizes from its MANIFEST.txt) are loaded; written
 * files read back bit-for-bit and, where libfclib is installed, libfclib reads them and its
 * merit agrees with ours; malformed files (made here from good ones with the HDF5 API) give
 * the expected error code with a message naming the file and the HDF5 path, and never leak
 * an HDF5 handle.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "problems/fl_problem.h"
#include "tests/fl_test.h"

#ifdef FL_HAVE_LIBFCLIB
#include <fclib.h>
#endif

//---- helpers ----

/* open HDF5 objects of every file (must be 0 between calls) */
static long h5_open_objects(void) {
  return (long)H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
}

static char tmpdir_[256];

/* a fresh temporary directory for one test case */
static const char *tmp_dir(void) {
  snprintf(tmpdir_, sizeof tmpdir_, "/tmp/fl_fclib_XXXXXX");
  if (!mkdtemp(tmpdir_)) return NULL;
  return tmpdir_;
}

static int rm_cb(const char *p, const struct stat *s, int flag, struct FTW *f) {
  return remove(p);
}

static void tmp_clean(void) {
  if (tmpdir_[0]) nftw(tmpdir_, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
  tmpdir_[0] = 0;
}

static const char *tmp_path(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/%s", tmpdir_, name);
  return buf;
}

/* the shared fclib folder, or NULL when it does not exist */
static const char *fclib_dir(char *buf, size_t n) {
  snprintf(buf, n, "%s/fclib", fl_test_shared_dir());
  struct stat st;
  return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? buf : NULL;
}

static int copy_file(const char *from, const char *to, long limit) {
  FILE  *a = fopen(from, "rb"), *b = fopen(to, "wb");
  int    ok = a && b;
  char   buf[8192];
  long   done = 0;
  size_t n;
  while (ok && (limit < 0 || done < limit) && (n = fread(buf, 1, sizeof buf, a)) > 0) {
    if (limit >= 0 && done + (long)n > limit) n = (size_t)(limit - done);
    ok = fwrite(buf, 1, n, b) == n;
    done += (long)n;
  }
  if (a) fclose(a);
  if (b) fclose(b);
  return ok ? 0 : -1;
}

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* number of entries in the temporary directory */
static int tmp_count(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", tmpdir_);
  FILE *f = popen(cmd, "r");
  int   n = -1;
  if (f) {
    if (fscanf(f, "%d", &n) != 1) n = -1;
    pclose(f);
  }
  return n;
}

static int csr_identical(const fl_csr *a, const fl_csr *b) {
  if (a->nrow != b->nrow || a->ncol != b->ncol || a->nnz != b->nnz) return 0;
  if (memcmp(a->rowptr, b->rowptr, (size_t)(a->nrow + 1) * sizeof(fl_int))) return 0;
  fl_int nnz = a->rowptr[a->nrow];
  if (memcmp(a->col, b->col, (size_t)nnz * sizeof(fl_int))) return 0;
  return memcmp(a->val, b->val, (size_t)nnz * sizeof(double)) == 0;
}

static uint64_t rng_ = 88172645463325252ull;

static double urand(void) { /* xorshift64 in [-1, 1) */
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  return (double)(rng_ >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Replaces (or, with n < 0, deletes) dataset hp of an existing file. */
static int h5_replace(const char *file, const char *hp, int is_int, long n, const void *buf) {
  hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return -1;
  int rc = 0;
  if (H5Lexists(f, hp, H5P_DEFAULT) > 0 && H5Ldelete(f, hp, H5P_DEFAULT) < 0) rc = -1;
  if (rc == 0 && n >= 0) {
    hsize_t dim = (hsize_t)n;
    hid_t   sp  = H5Screate_simple(1, &dim, NULL);
    hid_t   ds  = H5Dcreate2(f, hp, is_int ? H5T_STD_I32LE : H5T_IEEE_F64LE, sp, H5P_DEFAULT,
                             H5P_DEFAULT, H5P_DEFAULT);
    if (ds < 0 || H5Dwrite(ds, is_int ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                           H5P_DEFAULT, buf) < 0)
      rc = -1;
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(sp);
  }
  H5Fclose(f);
  return rc;
}

/* Reads a whole double or int dataset of a file into buf (at most n entries); -1 on error. */
static long h5_read(const char *file, const char *hp, int is_int, void *buf, long n) {
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return -1;
  hid_t ds  = H5Dopen2(f, hp, H5P_DEFAULT);
  long  len = -1;
  if (ds >= 0) {
    hid_t sp = H5Dget_space(ds);
    len      = (long)H5Sget_simple_extent_npoints(sp);
    if (len > n || H5Dread(ds, is_int ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                           H5P_DEFAULT, buf) < 0)
      len = -1;
    H5Sclose(sp);
    H5Dclose(ds);
  }
  H5Fclose(f);
  return len;
}

/* A small local problem: nc = 2, W = 2 I + 0.5 (off-diagonal couplings), q, mu. */
static int small_local(fl_problem **out) {
  fl_problem *p;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 2, 0, 0, &p));
  fl_int ti[10], tj[10];
  double tx[10];
  for (int k = 0; k < 6; k++) {
    ti[k] = tj[k] = k;
    tx[k]         = 2.0 + 0.25 * k;
  }
  ti[6] = 0, tj[6] = 3, tx[6] = 0.5;
  ti[7] = 3, tj[7] = 0, tx[7] = 0.5;
  ti[8] = 1, tj[8] = 4, tx[8] = -0.125;
  ti[9] = 4, tj[9] = 1, tx[9] = -0.125;
  int rc = fl_csr_from_triplets(6, 6, 10, ti, tj, tx, &p->W);
  if (rc < 0) {
    fl_problem_free(p);
    return rc;
  }
  const double q[6] = {-1, 0.5, 0.2, 0.3, -0.1, 0.05};
  memcpy(p->q, q, sizeof q);
  p->mu[0] = 0.3;
  p->mu[1] = 0.5;
  snprintf(p->name, sizeof p->name, "small_local");
  *out = p;
  return FL_OK;
}

/* A small global problem: two free 3-dof particles (masses 1 and 2), one contact between
 * particle 0 and the ground, one between the particles, and nh bilateral rows. */
static int small_global(fl_int nh, fl_problem **out) {
  fl_problem *p;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_GLOBAL, 6, 2, nh, 0, &p));
  fl_int ti[16], tj[16], nt = 0;
  double tx[16];
  for (int k = 0; k < 6; k++) {
    ti[nt] = tj[nt] = k;
    tx[nt++]        = k < 3 ? 1.0 : 2.0;
  }
  // particle 1's inertia couples its dofs (tridiagonal), particle 0's is diagonal
  for (int k = 3; k < 5; k++) {
    ti[nt] = k, tj[nt] = k + 1, tx[nt++] = 0.25;
    ti[nt] = k + 1, tj[nt] = k, tx[nt++] = 0.25;
  }
  int rc = fl_csr_from_triplets(6, 6, nt, ti, tj, tx, &p->A);
  // contact 0: normal z of particle 0; contact 1: relative velocity of 1 w.r.t. 0 along x
  nt                 = 0;
  const int jc[6][2] = {{0, 2}, {1, 0}, {2, 1}, {3, 0}, {4, 1}, {5, 2}};
  for (int r = 0; r < 3; r++) {
    ti[nt] = r, tj[nt] = jc[r][1], tx[nt++] = 1.0;
  }
  for (int r = 3; r < 6; r++) {
    ti[nt] = r, tj[nt] = 3 + jc[r][1], tx[nt++] = 1.0;
    ti[nt] = r, tj[nt] = jc[r][1], tx[nt++] = -1.0;
  }
  for (fl_int h = 0; h < nh; h++) { // particle 1's y velocity fixed
    ti[nt] = 6 + h, tj[nt] = 4, tx[nt++] = 1.0;
  }
  if (rc >= 0) rc = fl_csr_from_triplets(6 + nh, 6, nt, ti, tj, tx, &p->J);
  if (rc < 0) {
    fl_problem_free(p);
    return rc;
  }
  const double vs[6] = {0.1, 0, -1.0, -0.2, 0.3, -1.0};
  memcpy(p->vstar, vs, sizeof vs);
  for (int k = 0; k < 6 + nh; k++)
    p->b[k] = 0.01 * k;
  p->mu[0] = 0.4;
  p->mu[1] = 0.7;
  if (nh) p->g0[0] = 0.02;
  rc = fl_problem_find_cliques(p);
  if (rc < 0) {
    fl_problem_free(p);
    return rc;
  }
  snprintf(p->name, sizeof p->name, "small_global");
  *out = p;
  return FL_OK;
}

/* loads `file`, expecting error `code` and a message containing the file and `where` */
#define EXPECT_LOAD_ERROR(file, code, where)                                                       \
  do {                                                                                             \
    fl_problem *bad_ = (fl_problem *)0x1;                                                          \
    int         rc_  = fl_problem_load_fclib((file), &bad_);                                       \
    if (rc_ != (code))                                                                             \
      FL_FAIL_("load of %s returned %s (%s), expected %s", (file), fl_errname(rc_), fl_errmsg(),   \
               fl_errname(code));                                                                  \
    ASSERT(bad_ == NULL);                                                                          \
    ASSERT_STR_CONTAINS(fl_errmsg(), (file));                                                      \
    ASSERT_STR_CONTAINS(fl_errmsg(), (where));                                                     \
    ASSERT_EQ(h5_open_objects(), 0);                                                               \
  } while (0)

//---- the shared files ----

/* Every file of MANIFEST.txt loads with the listed kind and sizes (nc, ndof); the rolling
 * file is refused as unsupported. Converted files carry no sizes in the manifest: their nc
 * (the length of /fclib_local/vectors/mu, read with h5dump) is listed here. */
FL_TEST(load_shared_files) {
  char dir[512], path[1024], line[1024];
  if (!fclib_dir(dir, sizeof dir)) SKIP("no %s/fclib", fl_test_shared_dir());
  static const struct {
    const char *name;
    int         nc;
  } converted[] = {{"BoxesStack1-i100000-32.hdf5", 52}, {"Capsules-i101-404.hdf5", 225},
                   {"FrictionContact3D_1c.hdf5", 1},    {"KaplasTower-i1061-4.hdf5", 570},
                   {"OneObject-i100000-499.hdf5", 24},  {"Rover4396.hdf5", 2}};
  snprintf(path, sizeof path, "%s/MANIFEST.txt", dir);
  FILE *mf = fopen(path, "r");
  ASSERT(mf != NULL);
  int nlocal = 0, nglobal = 0, nrolling = 0;
  while (fgets(line, sizeof line, mf)) {
    char name[256], kind[64];
    long size;
    if (sscanf(line, "%255s %ld %*s %63s", name, &size, kind) != 3 || !strstr(name, ".hdf5"))
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const char *s;
    int         nc = -1, ndof = -1;
    if ((s = strstr(line, "nc="))) nc = atoi(s + 3);
    if ((s = strstr(line, "ndof="))) ndof = atoi(s + 5);
    for (size_t k = 0; k < sizeof converted / sizeof converted[0]; k++)
      if (strstr(name, converted[k].name)) nc = converted[k].nc;
    fl_problem *p = NULL;
    if (strcmp(kind, "GLOBAL_ROLLING") == 0) {
      EXPECT_LOAD_ERROR(path, FL_ERR_UNSUPPORTED, "/fclib_global_rolling");
      ASSERT_STR_CONTAINS(fl_errmsg(), "unsupported");
      nrolling++;
      continue;
    }
    int rc = fl_problem_load_fclib(path, &p);
    if (rc != FL_OK) FL_FAIL_("%s: %s", path, fl_errmsg());
    ASSERT_EQ(h5_open_objects(), 0);
    ASSERT(nc > 0);
    ASSERT_EQ(p->nc, nc);
    ASSERT_EQ(p->nh, 0);
    // the name is the file stem
    char stem[256];
    snprintf(stem, sizeof stem, "%s", strrchr(path, '/') + 1);
    *strstr(stem, ".hdf5") = 0;
    ASSERT(strcmp(p->name, stem) == 0);
    if (strcmp(kind, "LOCAL") == 0) {
      ASSERT_EQ(p->kind, FL_PROBLEM_LOCAL);
      ASSERT_EQ(p->nv, 0);
      ASSERT_EQ(p->W->nrow, 3 * nc);
      ASSERT_EQ(p->W->ncol, 3 * nc);
      ASSERT(p->A == NULL && p->J == NULL);
      nlocal++;
    } else {
      ASSERT(strcmp(kind, "GLOBAL") == 0);
      ASSERT_EQ(p->kind, FL_PROBLEM_GLOBAL);
      ASSERT_EQ(p->nv, ndof);
      ASSERT_EQ(p->A->nrow, ndof);
      ASSERT_EQ(p->J->nrow, 3 * nc);
      ASSERT_EQ(p->J->ncol, ndof);
      ASSERT(p->ncl >= 1 && p->ncl <= ndof);
      nglobal++;
    }
    for (fl_int i = 0; i < p->nc; i++)
      ASSERT(p->mu[i] >= 0 && isfinite(p->mu[i]));
    ASSERT_OK(fl_problem_validate(p, path));
    fl_problem_free(p);
  }
  fclose(mf);
  // 4 original local + 6 converted, 8 global, 1 rolling; and no .hdf5 file left out
  ASSERT_EQ(nlocal, 10);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "ls '%s'/*.hdf5 '%s'/converted_from_siconos_dat/*.hdf5 | wc -l", dir,
           dir);
  FILE *ls     = popen(cmd, "r");
  int   nfiles = -1;
  ASSERT(ls && fscanf(ls, "%d", &nfiles) == 1);
  pclose(ls);
  ASSERT_EQ(nfiles, nlocal + nglobal + nrolling);
  ASSERT_EQ(nglobal, 8);
  ASSERT_EQ(nrolling, 1);
  return 0;
}

/* A global file means A = M (both triangles, symmetric), J = H^T, b = w, A v* = f, v0 = 0,
 * rigid contact without gaps. CubeH8 stores only M's upper triangle; LMGC_GFC3D-i00001
 * stores both with round-off asymmetry; Box_Stacks stores triplets with nzmax > nz. */
FL_TEST(global_meaning) {
  char dir[512], path[1024];
  if (!fclib_dir(dir, sizeof dir)) SKIP("no %s/fclib", fl_test_shared_dir());
  const char *files[3] = {"CubeH8.hdf5", "LMGC_GFC3D-i00001-1-00000.hdf5",
                          "Box_Stacks-i0035-31-0.hdf5"};
  for (int k = 0; k < 3; k++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[k]);
    fl_problem *p;
    ASSERT_OK(fl_problem_load_fclib(path, &p));
    fl_int  nv = p->nv, nc3 = 3 * p->nc;
    double *f = malloc(sizeof(double) * (size_t)nv), *Av = malloc(sizeof(double) * (size_t)nv);
    double *w = malloc(sizeof(double) * (size_t)nc3);
    ASSERT_EQ(h5_read(path, "/fclib_global/vectors/f", 0, f, nv), nv);
    ASSERT_EQ(h5_read(path, "/fclib_global/vectors/w", 0, w, nc3), nc3);
    // b = w exactly
    ASSERT(memcmp(w, p->b, sizeof(double) * (size_t)nc3) == 0);
    // A symmetric, A v* = f to round-off
    for (fl_int i = 0; i < nv; i++)
      for (fl_int t = p->A->rowptr[i]; t < p->A->rowptr[i + 1]; t++)
        ASSERT(fl_csr_get(p->A, p->A->col[t], i) == p->A->val[t]);
    fl_csr_gemv(p->A, 1.0, p->vstar, 0.0, Av);
    double err = 0, fn = 0;
    for (fl_int i = 0; i < nv; i++) {
      err = fmax(err, fabs(Av[i] - f[i]));
      fn  = fmax(fn, fabs(f[i]));
    }
    ASSERT_LE(err, 1e-9 * fn);
    for (fl_int i = 0; i < nv; i++)
      ASSERT(p->v0[i] == 0);
    for (fl_int i = 0; i < p->nc; i++) {
      ASSERT(p->phi0[i] == 0);
      ASSERT(isinf(p->stiffness[i]));
    }
    ASSERT(p->dt == 1.0);
    free(f);
    free(Av);
    free(w);
    fl_problem_free(p);
  }
  // H's triplets (i = row = dof, p = column = contact row) are J's transposed entries
  snprintf(path, sizeof path, "%s/%s", dir, files[2]);
  int    I[485], P[485];
  double X[485];
  ASSERT_EQ(h5_read(path, "/fclib_global/H/i", 1, I, 485), 485);
  ASSERT_EQ(h5_read(path, "/fclib_global/H/p", 1, P, 485), 485);
  ASSERT_EQ(h5_read(path, "/fclib_global/H/x", 0, X, 485), 485);
  fl_problem *p;
  ASSERT_OK(fl_problem_load_fclib(path, &p));
  double sum = 0;
  for (int k = 0; k < 485; k++)
    sum += fabs(X[k]);
  ASSERT(sum > 0);
  for (int k = 0; k < 485; k++) {
    // no duplicates in this file, so every triplet is one entry of J
    ASSERT(fl_csr_get(p->J, P[k], I[k]) == X[k]);
  }
  ASSERT_EQ(p->J->rowptr[p->J->nrow], 485);
  fl_problem_free(p);
  return 0;
}

//---- round trips ----

/* local file (CSR) -> our file (CSC) -> the same W, q, mu bit for bit; solution too */
FL_TEST(roundtrip_local) {
  char dir[512], path[1024], out[512];
  if (!fclib_dir(dir, sizeof dir)) SKIP("no %s/fclib", fl_test_shared_dir());
  ASSERT(tmp_dir());
  snprintf(path, sizeof path, "%s/local_problem_test.hdf5", dir);
  fl_problem *a, *b;
  ASSERT_OK(fl_problem_load_fclib(path, &a));
  fl_int  m = 3 * a->nc;
  double *g = malloc(sizeof(double) * (size_t)m), *g2 = malloc(sizeof(double) * (size_t)m);
  double *u2 = malloc(sizeof(double) * (size_t)m);
  for (fl_int k = 0; k < m; k++)
    g[k] = urand();
  tmp_path(out, sizeof out, "local.hdf5");
  ASSERT_OK(fl_problem_save_fclib(a, out, "round trip", NULL, g));
  ASSERT_EQ(h5_open_objects(), 0);
  ASSERT_EQ(tmp_count(), 1); // no temporary left beside it
  // the usual permissions (the umask applies), and saving over an existing file replaces it
  struct stat st;
  mode_t      mask = umask(0);
  umask(mask);
  ASSERT(stat(out, &st) == 0);
  ASSERT_EQ(st.st_mode & 0777, 0666 & ~mask);
  ASSERT_OK(fl_problem_save_fclib(a, out, "round trip", NULL, g));
  ASSERT_EQ(tmp_count(), 1);
  ASSERT_OK(fl_problem_load_fclib(out, &b));
  ASSERT_EQ(b->kind, FL_PROBLEM_LOCAL);
  ASSERT_EQ(b->nc, a->nc);
  ASSERT(csr_identical(a->W, b->W));
  ASSERT(memcmp(a->q, b->q, sizeof(double) * (size_t)m) == 0);
  ASSERT(memcmp(a->mu, b->mu, sizeof(double) * (size_t)a->nc) == 0);
  ASSERT(strcmp(b->name, "local") == 0);
  // the solution: r identical, u = W r + q
  ASSERT_OK(fl_fclib_read_solution(out, 0, a->nc, NULL, g2, u2));
  ASSERT(memcmp(g, g2, sizeof(double) * (size_t)m) == 0);
  fl_problem_velocity(a, NULL, g, g2);
  for (fl_int k = 0; k < m; k++)
    ASSERT_NEAR(u2[k], g2[k], 1e-12 * (1 + fabs(g2[k])));
  // the written layout is compressed columns
  int nz = 0;
  ASSERT_EQ(h5_read(out, "/fclib_local/W/nz", 1, &nz, 1), 1);
  ASSERT_EQ(nz, -1);
  // written twice: same bytes in every array
  fl_problem_free(b);
  tmp_path(out, sizeof out, "local2.hdf5");
  ASSERT_OK(fl_problem_load_fclib(tmp_path(path, sizeof path, "local.hdf5"), &b));
  ASSERT_OK(fl_problem_save_fclib(b, out, "round trip", NULL, NULL));
  fl_problem_free(b);
  ASSERT_OK(fl_problem_load_fclib(out, &b));
  ASSERT(csr_identical(a->W, b->W));
  ASSERT_EQ(fl_fclib_read_solution(out, 0, a->nc, NULL, g2, NULL), FL_ERR_NOT_FOUND);
  ASSERT_STR_CONTAINS(fl_errmsg(), "/solution");
  fl_problem_free(a);
  fl_problem_free(b);
  free(g);
  free(g2);
  free(u2);
  tmp_clean();
  return 0;
}

/* global file (triplets) -> our file -> the same A, J, b, mu bit for bit, v* to round-off
 * (it goes through f = A v* and a solve), solution v and r bit for bit */
FL_TEST(roundtrip_global) {
  char dir[512], path[1024], out[512];
  if (!fclib_dir(dir, sizeof dir)) SKIP("no %s/fclib", fl_test_shared_dir());
  ASSERT(tmp_dir());
  snprintf(path, sizeof path, "%s/LMGC_GFC3D-i00501-4-00000.hdf5", dir);
  fl_problem *a, *b;
  ASSERT_OK(fl_problem_load_fclib(path, &a));
  fl_int  nv = a->nv, m = 3 * a->nc;
  double *v = malloc(sizeof(double) * (size_t)nv), *v2 = malloc(sizeof(double) * (size_t)nv);
  double *g = malloc(sizeof(double) * (size_t)m), *g2 = malloc(sizeof(double) * (size_t)m);
  double *u2 = malloc(sizeof(double) * (size_t)m), *u = malloc(sizeof(double) * (size_t)m);
  for (fl_int k = 0; k < nv; k++)
    v[k] = urand();
  for (fl_int k = 0; k < m; k++)
    g[k] = urand();
  tmp_path(out, sizeof out, "global.hdf5");
  ASSERT_OK(fl_problem_save_fclib(a, out, NULL, v, g));
  ASSERT_EQ(h5_open_objects(), 0);
  ASSERT_OK(fl_problem_load_fclib(out, &b));
  ASSERT_EQ(b->kind, FL_PROBLEM_GLOBAL);
  ASSERT_EQ(b->nv, nv);
  ASSERT_EQ(b->nc, a->nc);
  ASSERT(csr_identical(a->A, b->A));
  ASSERT(csr_identical(a->J, b->J));
  ASSERT(memcmp(a->b, b->b, sizeof(double) * (size_t)m) == 0);
  ASSERT(memcmp(a->mu, b->mu, sizeof(double) * (size_t)a->nc) == 0);
  ASSERT_EQ(b->ncl, a->ncl);
  double vmax = 0;
  for (fl_int k = 0; k < nv; k++)
    vmax = fmax(vmax, fabs(a->vstar[k]));
  for (fl_int k = 0; k < nv; k++)
    ASSERT_NEAR(b->vstar[k], a->vstar[k], 1e-9 * vmax);
  ASSERT_OK(fl_fclib_read_solution(out, nv, a->nc, v2, g2, u2));
  ASSERT(memcmp(v, v2, sizeof(double) * (size_t)nv) == 0);
  ASSERT(memcmp(g, g2, sizeof(double) * (size_t)m) == 0);
  fl_problem_velocity(a, v, g, u); // u = J v + b
  for (fl_int k = 0; k < m; k++)
    ASSERT_NEAR(u2[k], u[k], 1e-12 * (1 + fabs(u[k])));
  // the title defaults to the problem's name
  char  title[64] = {0};
  hid_t f         = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t ds = H5Dopen2(f, "/fclib_global/info/title", H5P_DEFAULT), ty = H5Dget_type(ds);
  ASSERT(H5Tget_size(ty) < sizeof title);
  ASSERT(H5Dread(ds, ty, H5S_ALL, H5S_ALL, H5P_DEFAULT, title) >= 0);
  H5Tclose(ty);
  H5Dclose(ds);
  H5Fclose(f);
  ASSERT(strcmp(title, "LMGC_GFC3D-i00501-4-00000") == 0);
  fl_problem_free(a);
  fl_problem_free(b);
  free(v);
  free(v2);
  free(g);
  free(g2);
  free(u);
  free(u2);
  tmp_clean();
  return 0;
}

/* A guess (gamma_guess, as the stepper offers the previous step's impulses) goes to
 * /guesses/1 (v = v* + A^-1 J' r, u = J v + w, r) and comes back as gamma_guess bit for bit;
 * a file without /guesses loads without one. */
FL_TEST(roundtrip_guess) {
  char dir[512], path[1024], out[512];
  if (!fclib_dir(dir, sizeof dir)) SKIP("no %s/fclib", fl_test_shared_dir());
  ASSERT(tmp_dir());
  snprintf(path, sizeof path, "%s/LMGC_GFC3D-i00501-4-00000.hdf5", dir);
  fl_problem *a, *b;
  ASSERT_OK(fl_problem_load_fclib(path, &a));
  ASSERT(a->gamma_guess == NULL);
  fl_int m = 3 * a->nc, nv = a->nv;
  a->gamma_guess = fl_calloc((size_t)m, sizeof(double));
  ASSERT(a->gamma_guess);
  for (fl_int k = 0; k < m; k++)
    a->gamma_guess[k] = urand();
  tmp_path(out, sizeof out, "guess.hdf5");
  ASSERT_OK(fl_problem_save_fclib(a, out, NULL, NULL, NULL));
  ASSERT_EQ(h5_open_objects(), 0);
  ASSERT_OK(fl_problem_load_fclib(out, &b));
  ASSERT(b->gamma_guess != NULL);
  ASSERT(memcmp(a->gamma_guess, b->gamma_guess, sizeof(double) * (size_t)m) == 0);
  // the guess's v balances momentum: A (v - v*) = J' r
  double *v = malloc(sizeof(double) * (size_t)nv), *t = malloc(sizeof(double) * (size_t)nv);
  double *jr = malloc(sizeof(double) * (size_t)nv);
  ASSERT(v && t && jr);
  hid_t f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t ds = H5Dopen2(f, "/guesses/1/v", H5P_DEFAULT);
  ASSERT(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
  H5Dclose(ds);
  H5Fclose(f);
  for (fl_int k = 0; k < nv; k++)
    v[k] -= a->vstar[k];
  fl_csr_gemv(a->A, 1.0, v, 0.0, t);
  fl_csr_gemtv(a->J, 1.0, a->gamma_guess, 0.0, jr);
  double s = 0;
  for (fl_int k = 0; k < nv; k++)
    s = fmax(s, fabs(jr[k]));
  for (fl_int k = 0; k < nv; k++)
    ASSERT_NEAR(t[k], jr[k], 1e-9 * (1 + s));
  fl_problem_free(a);
  fl_problem_free(b);
  free(v);
  free(t);
  free(jr);
  tmp_clean();
  return 0;
}

/* A problem with gaps and bilateral rows: w = b - vhat_n keeps the gaps; hard unbounded
 * bilateral rows become G (b_G = b + g0/dt); a bounded row is refused and leaves no file
 * behind. */
FL_TEST(roundtrip_gaps_bilateral) {
  char out[512];
  ASSERT(tmp_dir());
  fl_problem *a, *b;
  ASSERT_OK(small_global(1, &a));
  a->dt      = 0.01;
  a->phi0[0] = -0.003; // overlapping: vhat_n = 0.3
  tmp_path(out, sizeof out, "gaps.hdf5");
  ASSERT_OK(fl_problem_save_fclib(a, out, "gaps", NULL, NULL));
  ASSERT_OK(fl_problem_load_fclib(out, &b));
  ASSERT_EQ(b->nh, 1);
  ASSERT_EQ(b->nc, 2);
  ASSERT(csr_identical(a->A, b->A));
  ASSERT(csr_identical(a->J, b->J));
  // the local form q = J v* + b - vhat_n is the same: gap moved into b
  ASSERT_NEAR(b->b[0], a->b[0] - 0.3, 1e-15);
  for (int k = 1; k < 6; k++)
    ASSERT(b->b[k] == a->b[k]);
  ASSERT_NEAR(b->b[6], a->b[6] + 0.02 / 0.01, 1e-15);
  for (int k = 0; k < 6; k++)
    ASSERT_NEAR(b->vstar[k], a->vstar[k], 1e-15);
  ASSERT_EQ(b->ncl, 2);
  fl_problem_free(b);

  // a bounded bilateral row: unsupported, nothing written
  tmp_path(out, sizeof out, "bounded.hdf5");
  a->hi[0] = 5;
  ASSERT_EQ(fl_problem_save_fclib(a, out, NULL, NULL, NULL), FL_ERR_UNSUPPORTED);
  ASSERT_STR_CONTAINS(fl_errmsg(), "bilateral row 0");
  ASSERT(!file_exists(out));
  ASSERT_EQ(tmp_count(), 1);
  // a global solution needs v
  double g[7] = {0};
  a->hi[0]    = INFINITY;
  ASSERT_EQ(fl_problem_save_fclib(a, out, NULL, NULL, g), FL_ERR_INVAL);
  // an unwritable place: I/O error naming the file
  ASSERT_EQ(fl_problem_save_fclib(a, "/nonexistent-dir/x.hdf5", NULL, NULL, NULL), FL_ERR_IO);
  ASSERT_STR_CONTAINS(fl_errmsg(), "/nonexistent-dir/x.hdf5");
  ASSERT_EQ(h5_open_objects(), 0);
  fl_problem_free(a);
  tmp_clean();
  return 0;
}

/* Compliant contact becomes rigid contact plus one dof of mass 1/R_n per contact: the file's
 * local form equals the problem's (W = J A^-1 J^T + diag(R_n, 0, 0), q) to round-off, and the
 * stored solution has the same merit as (v, gamma) on the original. */
FL_TEST(roundtrip_compliant) {
  char out[512];
  ASSERT(tmp_dir());
  fl_problem *a, *b;
  ASSERT_OK(fl_problem_create_example("box_on_plane_compliant", &a));
  a->stiffness[2] = INFINITY; // one rigid contact among compliant ones: no extra dof for it
  fl_int nc = a->nc, m = 3 * nc, nv = a->nv;
  double *v = calloc((size_t)nv, sizeof(double)), *g = calloc((size_t)m, sizeof(double));
  ASSERT_OK(fl_example_solution("box_on_plane_compliant", v, g));
  tmp_path(out, sizeof out, "compliant.hdf5");
  ASSERT_OK(fl_problem_save_fclib(a, out, NULL, v, g));
  ASSERT_OK(fl_problem_load_fclib(out, &b));
  ASSERT_EQ(b->nc, nc);
  ASSERT_EQ(b->nv, nv + nc - 1);
  fl_dynamics *da, *db;
  fl_csr      *Wa, *Wb;
  double      *qa = malloc(sizeof(double) * (size_t)m), *qb = malloc(sizeof(double) * (size_t)m);
  ASSERT_OK(fl_dynamics_create(a, &da));
  ASSERT_OK(fl_dynamics_create(b, &db));
  ASSERT_OK(fl_problem_local_form(a, da, &Wa, qa));
  ASSERT_OK(fl_problem_local_form(b, db, &Wb, qb));
  double wmax = 0;
  for (fl_int i = 0; i < m; i++)
    for (fl_int j = 0; j < m; j++)
      wmax = fmax(wmax, fabs(fl_csr_get(Wa, i, j)));
  ASSERT(wmax > 0);
  for (fl_int i = 0; i < m; i++) {
    for (fl_int j = 0; j < m; j++)
      ASSERT_NEAR(fl_csr_get(Wb, i, j), fl_csr_get(Wa, i, j), 1e-13 * wmax);
    ASSERT_NEAR(qb[i], qa[i], 1e-13 * (1 + fabs(qa[i])));
  }
  // the diagonal carries R_n on compliant normal rows only
  double R0;
  fl_problem_normal_law(a, 0, &R0, NULL);
  ASSERT(R0 > 0);
  // the stored solution: v' = (v, R_n gamma_n); same natural map as (v, gamma) on a
  double     *v2 = malloc(sizeof(double) * (size_t)b->nv), *g2 = malloc(sizeof(double) * (size_t)m);
  fl_metrics  ma, mb;
  ASSERT_OK(fl_fclib_read_solution(out, b->nv, nc, v2, g2, NULL));
  ASSERT_NEAR(v2[nv], R0 * g[0], 1e-15 * (1 + fabs(R0 * g[0])));
  ASSERT_OK(fl_problem_metrics(a, v, g, FL_NORM_NONE, &ma));
  ASSERT_OK(fl_problem_metrics(b, v2, g2, FL_NORM_NONE, &mb));
  ASSERT_NEAR(mb.natmap_raw, ma.natmap_raw, 1e-12 * (1 + ma.norm_gamma));
  ASSERT(mb.momentum < 1e-12);
  fl_csr_free(Wa), fl_csr_free(Wb);
  fl_dynamics_free(da), fl_dynamics_free(db);
  fl_problem_free(a), fl_problem_free(b);
  free(v), free(g), free(v2), free(g2), free(qa), free(qb);
  tmp_clean();
  return 0;
}

//---- libfclib cross-checks ----

#ifdef FL_HAVE_LIBFCLIB
/* dense copy of an fclib matrix (any layout; triplet i = row, p = column) */
static double *fclib_dense(const struct fclib_matrix *a) {
  double *d = calloc((size_t)a->m * (size_t)a->n + 1, sizeof(double));
  if (a->nz >= 0) {
    for (int k = 0; k < a->nz; k++)
      d[(size_t)a->i[k] * (size_t)a->n + (size_t)a->p[k]] += a->x[k];
  } else {
    int ncomp = a->nz == -1 ? a->n : a->m;
    for (int c = 0; c < ncomp; c++)
      for (int k = a->p[c]; k < a->p[c + 1]; k++) {
        size_t r = a->nz == -1 ? (size_t)a->i[k] : (size_t)c,
               j = a->nz == -1 ? (size_t)c : (size_t)a->i[k];
        d[r * (size_t)a->n + j] += a->x[k];
      }
  }
  return d;
}

/* |dense(a) - B| == 0 entrywise, with B = b or its transpose */
static int fclib_equals(const struct fclib_matrix *a, const fl_csr *b, int transpose) {
  int m = transpose ? b->ncol : b->nrow, n = transpose ? b->nrow : b->ncol;
  if (a->m != m || a->n != n) return 0;
  double *d  = fclib_dense(a);
  int     ok = 1;
  for (int i = 0; i < b->nrow && ok; i++)
    for (int k = b->rowptr[i]; k < b->rowptr[i + 1]; k++) {
      size_t at = transpose ? (size_t)b->col[k] * (size_t)n + (size_t)i
                            : (size_t)i * (size_t)n + (size_t)b->col[k];
      if (d[at] != b->val[k]) ok = 0;
      d[at] = 0;
    }
  for (size_t k = 0; k < (size_t)m * (size_t)n && ok; k++)
    ok = d[k] == 0;
  free(d);
  return ok;
}
#endif

/* libfclib 3.1 reads the local and global files we write, with the same numbers */
FL_TEST(libfclib_reads_ours) {
#ifndef FL_HAVE_LIBFCLIB
  SKIP("libfclib not found at configure time");
#else
  char out[512];
  ASSERT(tmp_dir());
  fl_problem *p;
  // local
  ASSERT_OK(small_local(&p));
  double g[6] = {1, 0.1, -0.2, 0.5, 0, 0.3};
  tmp_path(out, sizeof out, "local.hdf5");
  ASSERT_OK(fl_problem_save_fclib(p, out, "small", NULL, g));
  struct fclib_local *L = fclib_read_local(out);
  ASSERT(L != NULL);
  ASSERT_EQ(L->spacedim, 3);
  ASSERT(fclib_equals(L->W, p->W, 0));
  ASSERT(memcmp(L->q, p->q, sizeof(double) * 6) == 0);
  ASSERT(memcmp(L->mu, p->mu, sizeof(double) * 2) == 0);
  ASSERT(L->info && L->info->title && strcmp(L->info->title, "small") == 0);
  struct fclib_solution *S = fclib_read_solution(out);
  ASSERT(S != NULL);
  ASSERT(memcmp(S->r, g, sizeof g) == 0);
  fclib_delete_solutions(S, 1);
  fclib_delete_local(L);
  free(L);
  fl_problem_free(p);

  // global, with a bilateral row as G
  ASSERT_OK(small_global(1, &p));
  double v[6] = {0.1, 0.2, 0.3, -0.1, -0.2, -0.3}, g7[7] = {1, 0.1, 0.2, 2, 0.3, 0.4, -1};
  tmp_path(out, sizeof out, "global.hdf5");
  ASSERT_OK(fl_problem_save_fclib(p, out, NULL, v, g7));
  struct fclib_global *G = fclib_read_global(out);
  ASSERT(G != NULL);
  ASSERT_EQ(G->spacedim, 3);
  ASSERT(fclib_equals(G->M, p->A, 0));
  fl_csr *Jc = NULL, *Jg = NULL; // contact rows and bilateral rows of J
  fl_int  ti[16], tj[16], nt = 0, tg[4], tgj[4], ng = 0;
  double  tx[16], tgx[4];
  for (fl_int r = 0; r < 7; r++)
    for (fl_int k = p->J->rowptr[r]; k < p->J->rowptr[r + 1]; k++) {
      if (r < 6) {
        ti[nt] = r, tj[nt] = p->J->col[k], tx[nt++] = p->J->val[k];
      } else {
        tg[ng] = r - 6, tgj[ng] = p->J->col[k], tgx[ng++] = p->J->val[k];
      }
    }
  ASSERT_OK(fl_csr_from_triplets(6, 6, nt, ti, tj, tx, &Jc));
  ASSERT_OK(fl_csr_from_triplets(1, 6, ng, tg, tgj, tgx, &Jg));
  ASSERT(fclib_equals(G->H, Jc, 1));
  ASSERT(G->G && fclib_equals(G->G, Jg, 1));
  double f[6];
  fl_csr_gemv(p->A, 1.0, p->vstar, 0.0, f);
  ASSERT(memcmp(G->f, f, sizeof f) == 0);
  ASSERT(memcmp(G->w, p->b, sizeof(double) * 6) == 0);
  ASSERT(memcmp(G->mu, p->mu, sizeof(double) * 2) == 0);
  ASSERT(G->b && G->b[0] == p->b[6] + p->g0[0] / p->dt);
  S = fclib_read_solution(out);
  ASSERT(S != NULL);
  ASSERT(memcmp(S->v, v, sizeof v) == 0);
  ASSERT(memcmp(S->r, g7, sizeof(double) * 6) == 0);
  ASSERT(S->l && S->l[0] == g7[6]);
  fclib_delete_solutions(S, 1);
  fclib_delete_global(G);
  free(G);
  fl_csr_free(Jc);
  fl_csr_free(Jg);
  fl_problem_free(p);

  // a real global problem (triplets in the original) re-written by us
  char dir[512], path[1024];
  if (fclib_dir(dir, sizeof dir)) {
    snprintf(path, sizeof path, "%s/Box_Stacks-i0122-82-5.hdf5", dir);
    ASSERT_OK(fl_problem_load_fclib(path, &p));
    tmp_path(out, sizeof out, "boxes.hdf5");
    ASSERT_OK(fl_problem_save_fclib(p, out, NULL, NULL, NULL));
    G = fclib_read_global(out);
    ASSERT(G != NULL);
    ASSERT(fclib_equals(G->M, p->A, 0));
    ASSERT(fclib_equals(G->H, p->J, 1));
    ASSERT(G->G == NULL);
    ASSERT(memcmp(G->w, p->b, sizeof(double) * (size_t)(3 * p->nc)) == 0);
    ASSERT(memcmp(G->mu, p->mu, sizeof(double) * (size_t)p->nc) == 0);
    fclib_delete_global(G);
    free(G);
    fl_problem_free(p);
  }
  tmp_clean();
  return 0;
#endif
}

/* On every local file, libfclib's fclib_merit_local equals our natural-map residual with
 * FL_NORM_FCLIB, at gamma = 0 and at a random gamma. libfclib multiplies W with CSparse's
 * cs_gaxpy, which does nothing unless W is stored in compressed columns, so the merit is
 * taken on our re-written copy (always compressed columns); at gamma = 0 W plays no part,
 * so the original file is checked too. */
FL_TEST(libfclib_merit_agrees) {
#ifndef FL_HAVE_LIBFCLIB
  SKIP("libfclib not found at configure time");
#else
  char dir[512], path[1024], out[512];
  if (!fclib_dir(dir, sizeof dir)) SKIP("no %s/fclib", fl_test_shared_dir());
  ASSERT(tmp_dir());
  const char *files[]  = {"local_problem_test.hdf5",
                          "Capsules-i97-269.hdf5",
                          "Capsules-i125-1213.hdf5",
                          "LMGC_100_PR_PerioBox-i00361-60-03000.hdf5",
                          "converted_from_siconos_dat/BoxesStack1-i100000-32.hdf5",
                          "converted_from_siconos_dat/Capsules-i101-404.hdf5",
                          "converted_from_siconos_dat/FrictionContact3D_1c.hdf5",
                          "converted_from_siconos_dat/KaplasTower-i1061-4.hdf5",
                          "converted_from_siconos_dat/OneObject-i100000-499.hdf5",
                          "converted_from_siconos_dat/Rover4396.hdf5"};
  int         nchecked = 0;
  for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[k]);
    fl_problem *p;
    ASSERT_OK(fl_problem_load_fclib(path, &p));
    fl_int m = 3 * p->nc;
    // a writable copy of the original (libfclib may open files read-write) and our copy
    char orig[512];
    tmp_path(orig, sizeof orig, "orig.hdf5");
    ASSERT_EQ(copy_file(path, orig, -1), 0);
    tmp_path(out, sizeof out, "ours.hdf5");
    ASSERT_OK(fl_problem_save_fclib(p, out, NULL, NULL, NULL));
    struct fclib_local *Lo = fclib_read_local(orig), *L = fclib_read_local(out);
    ASSERT(Lo && L);
    struct fclib_solution S = {0};
    S.r                     = calloc((size_t)m, sizeof(double));
    S.u                     = calloc((size_t)m, sizeof(double));
    fl_metrics mt;
    for (int trial = 0; trial < 3; trial++) {
      // gamma = 0, a random gamma, a random gamma in the cones
      for (fl_int i = 0; i < p->nc; i++) {
        double *r = S.r + 3 * i;
        r[0]      = trial == 0 ? 0 : trial == 1 ? urand() : 1 + urand();
        r[1]      = trial == 0 ? 0 : urand() * (trial == 2 ? 0.5 * p->mu[i] * r[0] : 1);
        r[2]      = trial == 0 ? 0 : urand() * (trial == 2 ? 0.5 * p->mu[i] * r[0] : 1);
      }
      ASSERT_OK(fl_problem_metrics(p, NULL, S.r, FL_NORM_FCLIB, &mt));
      double ref = fclib_merit_local(L, MERIT_1, &S);
      ASSERT_NEAR(mt.natmap, ref, 1e-12 * (1 + ref));
      if (trial == 0) ASSERT_NEAR(mt.natmap, fclib_merit_local(Lo, MERIT_1, &S), 1e-12 * (1 + ref));
      if (trial == 1) ASSERT(mt.natmap > 0);
      nchecked++;
    }
    free(S.r);
    free(S.u);
    fclib_delete_local(L);
    fclib_delete_local(Lo);
    free(L);
    free(Lo);
    fl_problem_free(p);
    remove(out);
    remove(orig);
  }
  ASSERT_EQ(nchecked, 30);
  tmp_clean();
  return 0;
#endif
}

/* libfclib's own reader and ours see the same numbers in every shared file (CSR, CSC and
 * triplet layouts): W, q, mu; H = J^T, w = b, f = A v*, and M = A (mirrored where one
 * triangle is stored, equal to round-off where both are). */
FL_TEST(libfclib_parses_like_us) {
#ifndef FL_HAVE_LIBFCLIB
  SKIP("libfclib not found at configure time");
#else
  char dir[512], path[1024], line[1024];
  if (!fclib_dir(dir, sizeof dir)) SKIP("no %s/fclib", fl_test_shared_dir());
  snprintf(path, sizeof path, "%s/MANIFEST.txt", dir);
  FILE *mf = fopen(path, "r");
  ASSERT(mf != NULL);
  int nfiles = 0;
  while (fgets(line, sizeof line, mf)) {
    char name[256], kind[64];
    if (sscanf(line, "%255s %*d %*s %63s", name, kind) != 2 || !strstr(name, ".hdf5")) continue;
    if (strcmp(kind, "LOCAL") != 0 && strcmp(kind, "GLOBAL") != 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fl_problem *p;
    ASSERT_OK(fl_problem_load_fclib(path, &p));
    fl_csr *ref = NULL;
    if (p->kind == FL_PROBLEM_LOCAL) {
      struct fclib_local *L = fclib_read_local(path);
      ASSERT(L != NULL);
      const struct fclib_matrix *W = L->W;
      ASSERT_EQ(W->m, 3 * p->nc);
      // W entry by entry (no duplicates in these files)
      fl_int cnt   = 0;
      int    ncomp = W->nz == -1 ? W->n : W->nz == -2 ? W->m : 0;
      for (int c = 0; c < ncomp; c++)
        for (int k = W->p[c]; k < W->p[c + 1]; k++, cnt++) {
          int i = W->nz == -1 ? W->i[k] : c, j = W->nz == -1 ? c : W->i[k];
          ASSERT(fl_csr_get(p->W, i, j) == W->x[k]);
        }
      ASSERT(W->nz < 0);
      ASSERT_EQ(p->W->rowptr[p->W->nrow], cnt);
      ASSERT(memcmp(L->q, p->q, sizeof(double) * (size_t)(3 * p->nc)) == 0);
      ASSERT(memcmp(L->mu, p->mu, sizeof(double) * (size_t)p->nc) == 0);
      fclib_delete_local(L);
      free(L);
    } else {
      struct fclib_global *G = fclib_read_global(path);
      ASSERT(G != NULL);
      const struct fclib_matrix *H = G->H, *M = G->M;
      ASSERT(H->nz >= 0 && M->nz >= 0); // these files store triplets
      ASSERT_EQ(H->m, p->nv);
      ASSERT_EQ(H->n, 3 * p->nc);
      // H triplets (i = row, p = column) sum to J^T
      ASSERT_OK(fl_csr_from_triplets(H->n, H->m, H->nz, H->p, H->i, H->x, &ref));
      ASSERT(csr_identical(ref, p->J));
      fl_csr_free(ref);
      // M: every stored entry and its mirror
      double amax  = 0;
      int    ndiag = 0, nlo = 0, nup = 0;
      for (int k = 0; k < M->nz; k++) {
        amax = fmax(amax, fabs(M->x[k]));
        ndiag += M->i[k] == M->p[k];
        nlo += M->i[k] > M->p[k];
        nup += M->i[k] < M->p[k];
      }
      for (int k = 0; k < M->nz; k++) {
        ASSERT_NEAR(fl_csr_get(p->A, M->i[k], M->p[k]), M->x[k], 1e-12 * amax);
        ASSERT_NEAR(fl_csr_get(p->A, M->p[k], M->i[k]), M->x[k], 1e-12 * amax);
      }
      ASSERT_EQ(p->A->rowptr[p->nv], (nlo && nup) ? M->nz : ndiag + 2 * (nlo + nup));
      ASSERT(memcmp(G->w, p->b, sizeof(double) * (size_t)(3 * p->nc)) == 0);
      ASSERT(memcmp(G->mu, p->mu, sizeof(double) * (size_t)p->nc) == 0);
      double *f = calloc((size_t)p->nv, sizeof(double)), fmx = 0, err = 0;
      fl_csr_gemv(p->A, 1.0, p->vstar, 0.0, f);
      for (fl_int k = 0; k < p->nv; k++) {
        fmx = fmax(fmx, fabs(G->f[k]));
        err = fmax(err, fabs(f[k] - G->f[k]));
      }
      ASSERT_LE(err, 1e-9 * fmx);
      free(f);
      fclib_delete_global(G);
      free(G);
    }
    fl_problem_free(p);
    nfiles++;
  }
  fclose(mf);
  ASSERT_EQ(nfiles, 18);
  return 0;
#endif
}

//---- solutions in the shared files ----

/* The shared files hold libfclib's placeholder solutions (r = 0, v = 0): reported as not
 * found, with the file named; files without /solution likewise. */
FL_TEST(shared_solutions_are_placeholders) {
  char dir[512], path[1024];
  if (!fclib_dir(dir, sizeof dir)) SKIP("no %s/fclib", fl_test_shared_dir());
  double r[3 * 356], v[12000], u[3 * 356];
  snprintf(path, sizeof path, "%s/Spheres-i099-356-679.hdf5", dir);
  ASSERT_EQ(fl_fclib_read_solution(path, 12000, 356, v, r, u), FL_ERR_NOT_FOUND);
  ASSERT_STR_CONTAINS(fl_errmsg(), path);
  ASSERT_STR_CONTAINS(fl_errmsg(), "placeholder");
  snprintf(path, sizeof path, "%s/CubeH8.hdf5", dir);
  ASSERT_EQ(fl_fclib_read_solution(path, 162, 1, v, r, NULL), FL_ERR_NOT_FOUND);
  ASSERT_STR_CONTAINS(fl_errmsg(), "/solution");
  // wrong sizes asked for: a format error naming the dataset
  snprintf(path, sizeof path, "%s/local_problem_test.hdf5", dir);
  ASSERT_EQ(fl_fclib_read_solution(path, 0, 47, NULL, r, NULL), FL_ERR_FORMAT);
  ASSERT_STR_CONTAINS(fl_errmsg(), "/solution/r");
  ASSERT_EQ(h5_open_objects(), 0);
  return 0;
}

//---- bad input ----

/* writes the small local problem to name in the temporary directory */
static int make_local(const char *name, char *path, size_t n) {
  fl_problem *p;
  FL_TRY(small_local(&p));
  tmp_path(path, n, name);
  int rc = fl_problem_save_fclib(p, path, NULL, NULL, NULL);
  fl_problem_free(p);
  return rc;
}

static int make_global(const char *name, char *path, size_t n) {
  fl_problem *p;
  FL_TRY(small_global(0, &p));
  tmp_path(path, n, name);
  int rc = fl_problem_save_fclib(p, path, NULL, NULL, NULL);
  fl_problem_free(p);
  return rc;
}

FL_TEST(bad_missing_file) {
  const char *path = "/nonexistent-dir/none.hdf5";
  EXPECT_LOAD_ERROR(path, FL_ERR_IO, "cannot open");
  return 0;
}

FL_TEST(bad_empty_file) {
  char path[512];
  ASSERT(tmp_dir());
  FILE *f = fopen(tmp_path(path, sizeof path, "empty.hdf5"), "w");
  ASSERT(f);
  fclose(f);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "empty file");
  tmp_clean();
  return 0;
}

FL_TEST(bad_not_hdf5) {
  char path[512];
  ASSERT(tmp_dir());
  FILE *f = fopen(tmp_path(path, sizeof path, "text.hdf5"), "w");
  ASSERT(f);
  fprintf(f, "W = [1 0 0; 0 1 0; 0 0 1]\nq = [-1 0 0]\nmu = 0.3\n");
  fclose(f);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "not an HDF5 file");
  tmp_clean();
  return 0;
}

/* a real file cut in half, and one cut to its first 1000 bytes */
FL_TEST(bad_truncated) {
  char good[512], path[512];
  ASSERT(tmp_dir());
  ASSERT_OK(make_global("good.hdf5", good, sizeof good));
  struct stat st;
  ASSERT(stat(good, &st) == 0);
  ASSERT_EQ(copy_file(good, tmp_path(path, sizeof path, "half.hdf5"), (long)st.st_size / 2), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "truncated");
  ASSERT_EQ(copy_file(good, tmp_path(path, sizeof path, "short.hdf5"), 1000), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "truncated");
  char shared[512], big[1024];
  if (fclib_dir(shared, sizeof shared)) {
    snprintf(big, sizeof big, "%s/Capsules-i97-269.hdf5", shared);
    ASSERT_EQ(copy_file(big, tmp_path(path, sizeof path, "caps.hdf5"), 100000), 0);
    EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "truncated");
  }
  tmp_clean();
  return 0;
}

FL_TEST(bad_missing_group) {
  char path[512];
  ASSERT(tmp_dir());
  // no problem group at all
  hid_t f = H5Fcreate(tmp_path(path, sizeof path, "nogroup.hdf5"), H5F_ACC_TRUNC, H5P_DEFAULT,
                      H5P_DEFAULT);
  ASSERT(f >= 0);
  H5Gclose(H5Gcreate2(f, "/something_else", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Fclose(f);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_global or /fclib_local");
  // W removed
  ASSERT_OK(make_local("now.hdf5", path, sizeof path));
  f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT(H5Ldelete(f, "/fclib_local/W", H5P_DEFAULT) >= 0);
  H5Fclose(f);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local/W: missing group");
  // H removed from a global problem
  ASSERT_OK(make_global("noh.hdf5", path, sizeof path));
  f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT(H5Ldelete(f, "/fclib_global/H", H5P_DEFAULT) >= 0);
  H5Fclose(f);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_global/H: missing group");
  // a dataset removed
  ASSERT_OK(make_local("nomu.hdf5", path, sizeof path));
  ASSERT_EQ(h5_replace(path, "/fclib_local/vectors/mu", 0, -1, NULL), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local/vectors/mu: missing dataset");
  tmp_clean();
  return 0;
}

FL_TEST(bad_inconsistent_sizes) {
  char path[512];
  ASSERT(tmp_dir());
  double x[8] = {0};
  int    one;
  // q too short
  ASSERT_OK(make_local("q.hdf5", path, sizeof path));
  ASSERT_EQ(h5_replace(path, "/fclib_local/vectors/q", 0, 5, x), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local/vectors/q: 5 entries, expected 3 nc");
  // mu for 3 contacts
  ASSERT_OK(make_local("mu.hdf5", path, sizeof path));
  ASSERT_EQ(h5_replace(path, "/fclib_local/vectors/mu", 0, 3, x), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local/vectors/mu: 3 entries, expected nc = 2");
  // W not square
  ASSERT_OK(make_local("wm.hdf5", path, sizeof path));
  one = 9;
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/m", 1, 1, &one), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local/W: 9 x 6");
  // W's column pointers one short (n says 6, p has 6 entries)
  ASSERT_OK(make_local("wp.hdf5", path, sizeof path));
  int p6[6] = {0, 2, 4, 5, 7, 9};
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/p", 1, 6, p6), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local/W/p: 6 entries, expected n + 1 = 7");
  // pointers that go down
  ASSERT_OK(make_local("wd.hdf5", path, sizeof path));
  int p7[7] = {0, 2, 4, 3, 7, 9, 10};
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/p", 1, 7, p7), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local/W/p: entry 3 is 3 < entry 2 = 4");
  // pointers past nzmax
  ASSERT_OK(make_local("wz.hdf5", path, sizeof path));
  one = 8;
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/nzmax", 1, 1, &one), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT,
                    "/fclib_local/W/p: last pointer is 10, expected at most nzmax = 8");
  // an unknown layout code
  ASSERT_OK(make_local("wl.hdf5", path, sizeof path));
  one = -3;
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/nz", 1, 1, &one), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local/W/nz: -3");
  // H with the wrong number of rows (5 dofs, M has 6)
  ASSERT_OK(make_global("h.hdf5", path, sizeof path));
  one = 7;
  ASSERT_EQ(h5_replace(path, "/fclib_global/H/m", 1, 1, &one), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT,
                    "/fclib_global/H: 7 x 6, expected ndof x 3 nc with ndof = 6");
  // f too long
  ASSERT_OK(make_global("f.hdf5", path, sizeof path));
  ASSERT_EQ(h5_replace(path, "/fclib_global/vectors/f", 0, 7, x), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_global/vectors/f: 7 entries, expected ndof");
  // m stored as two numbers
  ASSERT_OK(make_global("m2.hdf5", path, sizeof path));
  int two[2] = {6, 6};
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/m", 1, 2, two), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_global/M/m: 2 entries, expected one integer");
  // q stored as integers is fine, stored as a string is not
  ASSERT_OK(make_local("qs.hdf5", path, sizeof path));
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(f, "/fclib_local/vectors/q", H5P_DEFAULT);
  hid_t ty = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
  H5Tset_size(ty, 4);
  hid_t ds = H5Dcreate2(f, "/fclib_local/vectors/q", ty, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(ds, ty, H5S_ALL, H5S_ALL, H5P_DEFAULT, "abc");
  H5Dclose(ds);
  H5Sclose(sp);
  H5Tclose(ty);
  H5Fclose(f);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local/vectors/q: string data");
  tmp_clean();
  return 0;
}

FL_TEST(bad_index_out_of_range) {
  char path[512];
  ASSERT(tmp_dir());
  // a row index 6 in a 6 x 6 W (compressed columns)
  ASSERT_OK(make_local("wi.hdf5", path, sizeof path));
  int I[10];
  ASSERT_EQ(h5_read(path, "/fclib_local/W/i", 1, I, 10), 10);
  I[4] = 6;
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/i", 1, 10, I), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT,
                    "/fclib_local/W/i: entry 4 is 6, expected a row index in [0, 6)");
  // a negative column index in triplets (p = column)
  ASSERT_OK(make_global("ht.hdf5", path, sizeof path));
  int    three = 3, tr_i[3] = {2, 0, 1}, tr_p[3] = {0, 1, -1}, hdr = 3;
  double tr_x[3] = {1, 1, 1};
  ASSERT_EQ(h5_replace(path, "/fclib_global/H/nz", 1, 1, &three), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/H/nzmax", 1, 1, &hdr), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/H/i", 1, 3, tr_i), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/H/p", 1, 3, tr_p), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/H/x", 0, 3, tr_x), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT,
                    "/fclib_global/H/p: entry 2 is -1, expected a column index in [0, 6)");
  // the same triplets with valid indices load, with i = row: H(2, 0) = J(0, 2)
  tr_p[2] = 5;
  ASSERT_EQ(h5_replace(path, "/fclib_global/H/p", 1, 3, tr_p), 0);
  fl_problem *p;
  ASSERT_OK(fl_problem_load_fclib(path, &p));
  ASSERT_EQ(p->J->rowptr[p->J->nrow], 3);
  ASSERT(fl_csr_get(p->J, 0, 2) == 1 && fl_csr_get(p->J, 1, 0) == 1 && fl_csr_get(p->J, 5, 1) == 1);
  fl_problem_free(p);
  // compressed rows (nz = -2) with a column index past n
  ASSERT_OK(make_local("wr.hdf5", path, sizeof path));
  int two = -2;
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/nz", 1, 1, &two), 0);
  ASSERT_EQ(h5_read(path, "/fclib_local/W/i", 1, I, 10), 10);
  I[9] = 100;
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/i", 1, 10, I), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT,
                    "/fclib_local/W/i: entry 9 is 100, expected a column index in [0, 6)");
  tmp_clean();
  return 0;
}

FL_TEST(bad_nan) {
  char path[512];
  ASSERT(tmp_dir());
  double q[6] = {-1, 0.5, NAN, 0.3, -0.1, 0.05};
  ASSERT_OK(make_local("nanq.hdf5", path, sizeof path));
  ASSERT_EQ(h5_replace(path, "/fclib_local/vectors/q", 0, 6, q), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local/vectors/q: entry 2 is nan, expected finite");
  // infinity in W's values
  ASSERT_OK(make_local("infw.hdf5", path, sizeof path));
  double x[10];
  ASSERT_EQ(h5_read(path, "/fclib_local/W/x", 0, x, 10), 10);
  x[7] = -INFINITY;
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/x", 0, 10, x), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local/W/x: entry 7 is -inf, expected finite");
  // NaN in a global w
  ASSERT_OK(make_global("nanw.hdf5", path, sizeof path));
  double w[6] = {0, 0, 0, NAN, 0, 0};
  ASSERT_EQ(h5_replace(path, "/fclib_global/vectors/w", 0, 6, w), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_global/vectors/w: entry 3 is nan");
  tmp_clean();
  return 0;
}

FL_TEST(bad_negative_mu) {
  char path[512];
  ASSERT(tmp_dir());
  double mu[2] = {0.3, -0.2};
  ASSERT_OK(make_local("mu.hdf5", path, sizeof path));
  ASSERT_EQ(h5_replace(path, "/fclib_local/vectors/mu", 0, 2, mu), 0);
  EXPECT_LOAD_ERROR(
      path, FL_ERR_FORMAT,
      "/fclib_local/vectors/mu: entry 1 is -0.2, expected a friction coefficient >= 0");
  ASSERT_OK(make_global("gmu.hdf5", path, sizeof path));
  mu[0] = -1;
  ASSERT_EQ(h5_replace(path, "/fclib_global/vectors/mu", 0, 2, mu), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_global/vectors/mu: entry 0 is -1");
  tmp_clean();
  return 0;
}

/* unsupported content: spacedim 2, mixed local problems (V, R), rolling friction; a mass
 * matrix that is not positive definite or not symmetric */
FL_TEST(bad_unsupported) {
  char path[512];
  ASSERT(tmp_dir());
  int two = 2;
  ASSERT_OK(make_local("dim2.hdf5", path, sizeof path));
  ASSERT_EQ(h5_replace(path, "/fclib_local/spacedim", 1, 1, &two), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_UNSUPPORTED, "/fclib_local/spacedim: spatial dimension 2");
  ASSERT_OK(make_local("mixed.hdf5", path, sizeof path));
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Gclose(H5Gcreate2(f, "/fclib_local/V", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Fclose(f);
  EXPECT_LOAD_ERROR(path, FL_ERR_UNSUPPORTED, "/fclib_local/V");
  // rolling friction, made here (the shared Chute file is checked in load_shared_files)
  f = H5Fcreate(tmp_path(path, sizeof path, "rolling.hdf5"), H5F_ACC_TRUNC, H5P_DEFAULT,
                H5P_DEFAULT);
  H5Gclose(H5Gcreate2(f, "/fclib_global_rolling", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Fclose(f);
  EXPECT_LOAD_ERROR(path, FL_ERR_UNSUPPORTED,
                    "/fclib_global_rolling: rolling-friction problems are unsupported");
  // M with a negative mass
  ASSERT_OK(make_global("negm.hdf5", path, sizeof path));
  double x[10];
  ASSERT_EQ(h5_read(path, "/fclib_global/M/x", 0, x, 10), 10);
  x[0] = -1; // M(0, 0): column 0 holds only the diagonal
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/x", 0, 10, x), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_global/M");
  ASSERT_STR_CONTAINS(fl_errmsg(), "positive definite");
  tmp_clean();
  return 0;
}

/* A mass matrix stored as one triangle is mirrored; one whose two triangles differ beyond
 * round-off is refused. */
FL_TEST(mass_matrix_triangles) {
  char path[512];
  ASSERT(tmp_dir());
  ASSERT_OK(make_global("tri.hdf5", path, sizeof path));
  // M = [2 1; 1 3] on dofs 0, 1 plus the diagonal 1, 2, 2, 2, stored as triplets
  int    nz = 7, nzmax = 7, I[8] = {0, 0, 1, 2, 3, 4, 5, 1}, P[8] = {0, 1, 1, 2, 3, 4, 5, 0};
  double X[8] = {2, 1, 3, 1, 2, 2, 2, 1};
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/nz", 1, 1, &nz), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/nzmax", 1, 1, &nzmax), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/i", 1, 7, I), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/p", 1, 7, P), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/x", 0, 7, X), 0);
  fl_problem *p;
  ASSERT_OK(fl_problem_load_fclib(path, &p));
  ASSERT(fl_csr_get(p->A, 0, 1) == 1 && fl_csr_get(p->A, 1, 0) == 1);
  ASSERT_EQ(p->A->rowptr[6], 8);
  ASSERT_EQ(p->ncl, 2); // particle 0 (dofs 0, 1 coupled, 2 same contacts), particle 1
  fl_problem_free(p);
  // both triangles, unequal
  nz = nzmax = 8;
  X[7]       = 1.5;
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/nz", 1, 1, &nz), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/nzmax", 1, 1, &nzmax), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/i", 1, 8, I), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/p", 1, 8, P), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/x", 0, 8, X), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_global/M: M(0, 1) = 1 but M(1, 0) = 1.5");
  tmp_clean();
  return 0;
}

//---- allocation failures ----

/* Every allocation of a load and of a save may fail: the call returns FL_ERR_NOMEM, leaves no
 * output, no HDF5 handle and no file behind; with enough allocations it succeeds. */
FL_TEST(alloc_failures) {
  char path[512], out[512];
  ASSERT(tmp_dir());
  fl_problem *src;
  ASSERT_OK(small_global(1, &src));
  double v[6] = {0.1, 0.2, 0.3, -0.1, -0.2, -0.3}, g[7] = {1, 0.1, 0.2, 2, 0.3, 0.4, -1};
  ASSERT_OK(fl_problem_save_fclib(src, tmp_path(path, sizeof path, "src.hdf5"), NULL, v, g));
  tmp_path(out, sizeof out, "out.hdf5");
  int nload = -1, nsave = -1;
  for (long n = 0; n < 1000 && (nload < 0 || nsave < 0); n++) {
    fl_problem *p = (fl_problem *)0x1;
    if (nload < 0) {
      fl_alloc_fail_after(n);
      int rc = fl_problem_load_fclib(path, &p);
      fl_alloc_fail_after(-1);
      ASSERT_EQ(h5_open_objects(), 0);
      if (rc == FL_OK) {
        nload = (int)n;
        ASSERT(csr_identical(p->J, src->J));
        fl_problem_free(p);
      } else {
        if (rc != FL_ERR_NOMEM) FL_FAIL_("load with allocation %ld failing: %s", n, fl_errmsg());
        ASSERT(p == NULL);
      }
    }
    if (nsave < 0) {
      fl_alloc_fail_after(n);
      int rc = fl_problem_save_fclib(src, out, NULL, v, g);
      fl_alloc_fail_after(-1);
      ASSERT_EQ(h5_open_objects(), 0);
      if (rc == FL_OK) {
        nsave = (int)n;
      } else {
        if (rc != FL_ERR_NOMEM) FL_FAIL_("save with allocation %ld failing: %s", n, fl_errmsg());
        ASSERT(!file_exists(out));
        ASSERT_EQ(tmp_count(), 1);
      }
    }
  }
  ASSERT(nload > 5);
  ASSERT(nsave > 1);
  fl_problem_free(src);
  tmp_clean();
  return 0;
}

//---- the built-in examples ----

/* Every built-in example with rigid contact goes through a file and back with the same
 * dynamics (A, J or W, mu bit for bit) and the same meaning: its exact solution has the same
 * metrics before and after (the gaps and bilateral errors move into w and b), and the stored
 * solution reads back bit for bit. The compliant example gains one dof per contact. */
FL_TEST(examples_roundtrip) {
  char out[512];
  ASSERT(tmp_dir());
  const char *const *names  = fl_examples_list();
  int                nsaved = 0, ncompliant = 0;
  for (int e = 0; names[e]; e++) {
    fl_problem *a, *b;
    ASSERT_OK(fl_problem_create_example(names[e], &a));
    fl_int  nr = fl_problem_nrows(a), nv = a->nv;
    double *v = calloc((size_t)nv + 1, sizeof(double)), *g = calloc((size_t)nr + 1, sizeof(double));
    double *v2 = calloc((size_t)nv + 1, sizeof(double)),
           *g2 = calloc((size_t)nr + 1, sizeof(double));
    ASSERT_OK(fl_example_solution(names[e], v, g));
    snprintf(out, sizeof out, "%s/%s.hdf5", tmpdir_, names[e]);
    int rc        = fl_problem_save_fclib(a, out, NULL, a->kind == FL_PROBLEM_GLOBAL ? v : NULL, g);
    int compliant = 0;
    for (fl_int i = 0; i < a->nc; i++)
      compliant |= !isinf(a->stiffness[i]);
    if (compliant) {
      // written with one extra dof per compliant contact (roundtrip_compliant checks W);
      // the stored solution is exact on the file as (v, gamma) is on the example
      if (rc != FL_OK) FL_FAIL_("%s: %s", names[e], fl_errmsg());
      ASSERT_OK(fl_problem_load_fclib(out, &b));
      ASSERT_EQ(b->nv, nv + a->nc);
      double    *v3 = calloc((size_t)b->nv, sizeof(double));
      fl_metrics mb;
      ASSERT_OK(fl_fclib_read_solution(out, b->nv, a->nc, v3, g2, NULL));
      ASSERT_OK(fl_problem_metrics(b, v3, g2, FL_NORM_NONE, &mb));
      ASSERT_LE(mb.natmap_raw, 1e-9);
      ASSERT_LE(mb.momentum, 1e-12);
      free(v3);
      fl_problem_free(b);
      ncompliant++;
    } else {
      if (rc != FL_OK) FL_FAIL_("%s: %s", names[e], fl_errmsg());
      ASSERT_OK(fl_problem_load_fclib(out, &b));
      ASSERT_EQ(b->kind, a->kind);
      ASSERT_EQ(b->nv, nv);
      ASSERT_EQ(b->nc, a->nc);
      ASSERT_EQ(b->nh, a->nh);
      ASSERT(strcmp(b->name, names[e]) == 0);
      if (a->kind == FL_PROBLEM_LOCAL) {
        ASSERT(csr_identical(a->W, b->W));
        ASSERT(memcmp(a->q, b->q, sizeof(double) * (size_t)(3 * a->nc)) == 0);
      } else {
        ASSERT(csr_identical(a->A, b->A));
        ASSERT(csr_identical(a->J, b->J));
        for (fl_int k = 0; k < nv; k++)
          ASSERT_NEAR(b->vstar[k], a->vstar[k], 1e-12 * (1 + fabs(a->vstar[k])));
      }
      if (a->nc > 0) ASSERT(memcmp(a->mu, b->mu, sizeof(double) * (size_t)a->nc) == 0);
      fl_metrics ma, mb;
      ASSERT_OK(fl_problem_metrics(a, v, g, FL_NORM_NONE, &ma));
      ASSERT_OK(fl_problem_metrics(b, v, g, FL_NORM_NONE, &mb));
      ASSERT_NEAR(mb.natmap_raw, ma.natmap_raw, 1e-12);
      ASSERT_LE(mb.natmap_raw, 1e-9);
      ASSERT_NEAR(mb.signorini, ma.signorini, 1e-12);
      if (a->nh > 0) {
        ASSERT_NEAR(mb.bilateral, ma.bilateral, 1e-12);
        ASSERT_LE(mb.bilateral, 1e-9);
      }
      ASSERT_OK(fl_fclib_read_solution(out, nv, a->nc, a->kind == FL_PROBLEM_GLOBAL ? v2 : NULL, g2,
                                       NULL));
      ASSERT(memcmp(g, g2, sizeof(double) * (size_t)(3 * a->nc)) == 0);
      if (nv) ASSERT(memcmp(v, v2, sizeof(double) * (size_t)nv) == 0);
      fl_problem_free(b);
      nsaved++;
    }
    free(v);
    free(g);
    free(v2);
    free(g2);
    fl_problem_free(a);
  }
  ASSERT(nsaved >= 5);
  ASSERT(ncompliant >= 1);
  ASSERT_EQ(h5_open_objects(), 0);
  tmp_clean();
  return 0;
}

/* A dataset of `n` entries whose data is never written (a few hundred bytes in the file). */
static int h5_unwritten(const char *file, const char *hp, hsize_t n) {
  hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return -1;
  if (H5Lexists(f, hp, H5P_DEFAULT) > 0) H5Ldelete(f, hp, H5P_DEFAULT);
  hid_t sp = H5Screate_simple(1, &n, NULL);
  hid_t ds = H5Dcreate2(f, hp, H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int   rc = ds < 0 ? -1 : 0;
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(sp);
  H5Fclose(f);
  return rc;
}

/* Inputs that loaded wrongly or asked for huge memory before: each is refused with a message. */
/* A file that reads cleanly but is no friction problem: fl_problem_validate refuses it, so the
 * loader does (a negative W diagonal loaded, and nsn "converged" on it; issue 56, found by
 * fuzz_fclib; the file as found is tests/data/fuzz/fclib-negative-diagonal.hdf5). */
FL_TEST(bad_invalid_problem) {
  char path[512];
  ASSERT(tmp_dir());
  fl_problem *p;
  ASSERT_OK(small_local(&p));
  for (fl_int k = p->W->rowptr[3]; k < p->W->rowptr[4]; k++)
    if (p->W->col[k] == 3) p->W->val[k] = -2.67912e79;
  ASSERT_EQ(fl_csr_get(p->W, 3, 3), -2.67912e79);
  tmp_path(path, sizeof path, "negative_diagonal.hdf5");
  ASSERT_OK(fl_problem_save_fclib(p, path, NULL, NULL, NULL)); // the writer keeps what it is given
  fl_problem_free(p);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local: W(3, 3) = -2.67912e+79, expected a diagonal >= 0");
  // the committed input: W(0, 0) of fclib-local-ok.hdf5 rewritten
  char src[1024];
  snprintf(src, sizeof src, "%s/tests/data/fuzz/fclib-negative-diagonal.hdf5",
           getenv("FL_SOURCE_DIR") ? getenv("FL_SOURCE_DIR") : "..");
  EXPECT_LOAD_ERROR(src, FL_ERR_FORMAT, "/fclib_local: W(0, 0) = -2.67912e+79, expected a diagonal >= 0");
  tmp_clean();
  return 0;
}

FL_TEST(bad_hostile) {
  char path[512];
  ASSERT(tmp_dir());
  // two finite triplets at one place summing to inf: W(0, 0) = 1 + 1e308 + 1e308
  ASSERT_OK(make_local("dup.hdf5", path, sizeof path));
  int    ti[8] = {0, 1, 2, 3, 4, 5, 0, 0}, eight = 8;
  double tx[8] = {1, 1, 1, 1, 1, 1, 1e308, 1e308};
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/nz", 1, 1, &eight), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/nzmax", 1, 1, &eight), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/i", 1, 8, ti), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/p", 1, 8, ti), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/x", 0, 8, tx), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local/W: entry (0, 0) is inf after summing");
  // an empty local problem (W 0 x 0)
  ASSERT_OK(make_local("empty_w.hdf5", path, sizeof path));
  int zero = 0;
  double none = 0;
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/m", 1, 1, &zero), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/n", 1, 1, &zero), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/nz", 1, 1, &zero), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/p", 1, 0, &zero), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/i", 1, 0, &zero), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_local/W/x", 0, 0, &none), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "0 x 0, an empty problem");
  // an empty global problem (M 0 x 0, H 0 x 0)
  ASSERT_OK(make_global("empty_m.hdf5", path, sizeof path));
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/m", 1, 1, &zero), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/n", 1, 1, &zero), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/nz", 1, 1, &zero), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/p", 1, 0, &zero), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/i", 1, 0, &zero), 0);
  ASSERT_EQ(h5_replace(path, "/fclib_global/M/x", 0, 0, &none), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_global/M: 0 x 0, an empty problem");
  // spacedim with 2^31 entries: refused before anything is allocated
  ASSERT_OK(make_local("spacedim.hdf5", path, sizeof path));
  ASSERT_EQ(h5_unwritten(path, "/fclib_local/spacedim", (hsize_t)1 << 31), 0);
  EXPECT_LOAD_ERROR(path, FL_ERR_FORMAT, "/fclib_local/spacedim: 2147483648 entries, expected one integer");
  // q with 1e9 entries: the 8 GB it would take are refused against the memory limit
  ASSERT_OK(make_local("bigq.hdf5", path, sizeof path));
  ASSERT_EQ(h5_unwritten(path, "/fclib_local/vectors/q", 1000000000), 0);
  setenv("FL_MEM_LIMIT_MB", "100", 1);
  EXPECT_LOAD_ERROR(path, FL_ERR_NOMEM, "/fclib_local/vectors/q (1000000000 entries) needs about 8 GB");
  unsetenv("FL_MEM_LIMIT_MB");
  tmp_clean();
  return 0;
}

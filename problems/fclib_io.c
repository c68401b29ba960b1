// SPDX-License-Identifier: Apache-2.0
/* fclib_io.c: FCLIB problem files (HDF5) read and written with libhdf5 directly.
 *
 * Layout (as libfclib 3.1 writes it): a group /fclib_local (W, vectors/q, vectors/mu,
 * spacedim, optional V, R, vectors/s) or /fclib_global (M, H, optional G, vectors/f, w, mu,
 * optional b, spacedim), an optional info group with title, description and math_info
 * strings, and optional /solution (v, u, r, l) and /guesses. A sparse matrix is a group with
 * one-element integer datasets m, n, nz, nzmax and the arrays p, i, x:
 *   nz == -1  compressed columns: p (n+1) column pointers, i row indices, x values;
 *   nz == -2  compressed rows:    p (m+1) row pointers, i column indices, x values;
 *   nz >= 0   nz triplets:        i = row, p = column (libfclib's header says the opposite;
 *             its files and its own merit code use i = row).
 *
 * libfclib itself is not used: it calls exit(1) on any HDF5 error. Here every field is
 * checked and every problem becomes a message naming the file, the HDF5 path and what was
 * expected. HDF5's automatic error printing is switched off around every call and restored.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include "fl_problem.h"

#define HP_MAX 256 /* longest HDF5 path we build */

//---- hdf5 error handling ----

/* saved automatic error printer, restored by h5_loud */
typedef struct h5q {
  H5E_auto2_t fn;
  void       *data;
} h5q;

static void h5_quiet(h5q *q) {
  H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void h5_loud(const h5q *q) {
  H5Eset_auto2(H5E_DEFAULT, q->fn, q->data);
}

/* keeps the first (most specific) description of the error stack */
static herr_t h5_walk(unsigned n, const H5E_error2_t *e, void *ctx) {
  char *buf = (char *)ctx;
  if (buf[0] == 0 && e && e->desc && e->desc[0]) snprintf(buf, 160, "%s", e->desc);
  return 0;
}

/* the innermost HDF5 error message, then the stack is cleared */
static const char *h5_msg(char buf[160]) {
  buf[0] = 0;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_walk, buf);
  H5Eclear2(H5E_DEFAULT);
  if (buf[0] == 0) snprintf(buf, 160, "HDF5 error");
  return buf;
}

//---- small helpers ----

/* problem name: file name without directories and without the last extension */
static void file_stem(const char *path, char *out, size_t n) {
  const char *base = strrchr(path, '/');
  base             = base ? base + 1 : path;
  const char *dot  = strrchr(base, '.');
  size_t      len  = (dot && dot != base) ? (size_t)(dot - base) : strlen(base);
  if (len >= n) len = n - 1;
  memcpy(out, base, len);
  out[len] = 0;
}

static int all_finite(const double *x, fl_int n, fl_int *bad) {
  for (fl_int k = 0; k < n; k++) {
    if (!isfinite(x[k])) {
      *bad = k;
      return 0;
    }
  }
  return 1;
}

//==== reading ====

typedef struct rd {
  const char *path;  /* file name for messages */
  hid_t       f;     /* open file */
  int         probe; /* 1: stop once every dataset has been read (the child's check) */
} rd;

/* 1 if every component of the absolute path hp exists as a link, else 0 */
static int rd_has(const rd *r, const char *hp) {
  char   buf[HP_MAX];
  size_t n = strlen(hp);
  if (n == 0 || n >= sizeof buf) return 0;
  memcpy(buf, hp, n + 1);
  for (size_t k = 1; k <= n; k++) {
    if (buf[k] != '/' && buf[k] != 0) continue;
    char c   = buf[k];
    buf[k]   = 0;
    htri_t e = H5Lexists(r->f, buf, H5P_DEFAULT);
    buf[k]   = c;
    if (e <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return 0;
    }
  }
  return 1;
}

/* Reads the whole dataset hp into a new array: long long when is_int, else double. The
 * dataset must be a vector (rank 0, 1, or 2 with a unit dimension) of integer (is_int) or
 * numeric class, with at most maxn entries (checked with the memory estimate before anything
 * is allocated). *len gets its number of entries. */
static int rd_data_max(const rd *r, const char *hp, int is_int, hsize_t maxn, hsize_t *len,
                       void **out) {
  char hm[160];
  *out             = NULL;
  *len             = 0;
  const char *want = is_int ? "a vector of integers" : "a vector of real numbers";
  if (!rd_has(r, hp))
    return fl_seterr(FL_ERR_FORMAT, "%s: %s: missing dataset, expected %s", r->path, hp, want);
  hid_t ds = H5Dopen2(r->f, hp, H5P_DEFAULT);
  if (ds < 0)
    return fl_seterr(FL_ERR_FORMAT, "%s: %s: not a readable dataset (%s), expected %s", r->path, hp,
                     h5_msg(hm), want);
  hid_t ty = H5Dget_type(ds), sp = H5Dget_space(ds);
  int   rc  = FL_OK;
  void *buf = NULL;
  if (ty < 0 || sp < 0) {
    rc = fl_seterr(FL_ERR_IO, "%s: %s: cannot read type or shape (%s)", r->path, hp, h5_msg(hm));
    goto done;
  }
  // class: integers for index data, integers or floats for values
  H5T_class_t cls = H5Tget_class(ty);
  if (cls != H5T_INTEGER && (is_int || cls != H5T_FLOAT)) {
    rc = fl_seterr(FL_ERR_FORMAT, "%s: %s: %s data, expected %s", r->path, hp,
                   cls == H5T_FLOAT    ? "floating-point"
                   : cls == H5T_STRING ? "string"
                                       : "non-numeric",
                   want);
    goto done;
  }
  // shape: a vector
  int     rank = H5Sget_simple_extent_ndims(sp);
  hsize_t dims[H5S_MAX_RANK];
  if (rank < 0 || rank > 2 || H5Sget_simple_extent_type(sp) == H5S_NULL) {
    rc = fl_seterr(FL_ERR_FORMAT, "%s: %s: dataspace of rank %d, expected %s", r->path, hp, rank,
                   want);
    goto done;
  }
  H5Sget_simple_extent_dims(sp, dims, NULL);
  if (rank == 2 && dims[0] != 1 && dims[1] != 1) {
    rc = fl_seterr(FL_ERR_FORMAT, "%s: %s: shape %llu x %llu, expected %s", r->path, hp,
                   (unsigned long long)dims[0], (unsigned long long)dims[1], want);
    goto done;
  }
  hsize_t n = 1;
  for (int k = 0; k < rank; k++)
    n *= dims[k];
  if (n > maxn) {
    if (maxn == 1)
      rc = fl_seterr(FL_ERR_FORMAT, "%s: %s: %llu entries, expected one integer", r->path, hp,
                     (unsigned long long)n);
    else
      rc = fl_seterr(FL_ERR_FORMAT, "%s: %s: %llu entries, expected at most %llu", r->path, hp,
                     (unsigned long long)n, (unsigned long long)maxn);
    goto done;
  }
  // read, converting to the native type
  size_t es = is_int ? sizeof(long long) : sizeof(double);
  char what[64];
  snprintf(what, sizeof what, "%s (%llu entries)", hp, (unsigned long long)n);
  if ((rc = fl_mem_check(r->path, what, (double)n * (double)es)) < 0) goto done;
  buf       = fl_malloc((n ? (size_t)n : 1) * es);
  if (!buf) {
    rc = fl_seterr(FL_ERR_NOMEM, "%s: %s: out of memory for %llu entries", r->path, hp,
                   (unsigned long long)n);
    goto done;
  }
  if (n > 0 && H5Dread(ds, is_int ? H5T_NATIVE_LLONG : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                       H5P_DEFAULT, buf) < 0) {
    rc = fl_seterr(FL_ERR_IO,
                   "%s: %s: reading %llu entries failed (%s), expected a readable dataset", r->path,
                   hp, (unsigned long long)n, h5_msg(hm));
    fl_free(buf);
    buf = NULL;
    goto done;
  }
  *out = buf;
  *len = n;
done:
  if (sp >= 0) H5Sclose(sp);
  if (ty >= 0) H5Tclose(ty);
  H5Dclose(ds);
  return rc;
}

static int rd_data(const rd *r, const char *hp, int is_int, hsize_t *len, void **out) {
  return rd_data_max(r, hp, is_int, (hsize_t)INT32_MAX, len, out);
}

/* one integer stored as a one-element dataset */
static int rd_int1(const rd *r, const char *hp, long long *v) {
  hsize_t    n;
  long long *b;
  FL_TRY(rd_data_max(r, hp, 1, 1, &n, (void **)&b));
  if (n != 1) {
    fl_free(b);
    return fl_seterr(FL_ERR_FORMAT, "%s: %s: %llu entries, expected one integer", r->path, hp,
                     (unsigned long long)n);
  }
  *v = b[0];
  fl_free(b);
  return FL_OK;
}

/* Reads a real vector of exactly n finite entries into a new array. `what` says where n
 * comes from ("3 nc", "ndof"). */
static int rd_vec(const rd *r, const char *hp, fl_int n, const char *what, double **out) {
  hsize_t len;
  double *b;
  *out = NULL;
  FL_TRY(rd_data(r, hp, 0, &len, (void **)&b));
  if (len != (hsize_t)n) {
    fl_free(b);
    return fl_seterr(FL_ERR_FORMAT, "%s: %s: %llu entries, expected %s = %d", r->path, hp,
                     (unsigned long long)len, what, (int)n);
  }
  fl_int bad;
  if (!all_finite(b, n, &bad)) {
    int rc = fl_seterr(FL_ERR_FORMAT, "%s: %s: entry %d is %g, expected finite values", r->path, hp,
                       (int)bad, b[bad]);
    fl_free(b);
    return rc;
  }
  *out = b;
  return FL_OK;
}

/* a sparse matrix as triplets (row, column, value) */
typedef struct trip {
  fl_int  m, n, nt;
  fl_int *ti, *tj;
  double *tx;
} trip;

static void trip_free(trip *t) {
  fl_free(t->ti);
  fl_free(t->tj);
  fl_free(t->tx);
  memset(t, 0, sizeof *t);
}

/* Checks the entries of an assembled matrix: duplicate triplets are summed and one-triangle
 * mass matrices mirrored after the file's values were checked, and two finite values may sum
 * to an infinite one. */
static int check_assembled(const rd *r, const char *hp, const fl_csr *a) {
  for (fl_int i = 0; i < a->nrow; i++) {
    for (fl_int k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
      if (!isfinite(a->val[k]))
        return fl_seterr(FL_ERR_FORMAT,
                         "%s: %s: entry (%d, %d) is %g after summing duplicate entries, expected "
                         "finite values",
                         r->path, hp, (int)i, (int)a->col[k], a->val[k]);
    }
  }
  return FL_OK;
}

/* Checks that idx[0..cnt) lie in [0, lim); `what` names the index kind. */
static int check_index(const rd *r, const char *hp, const long long *idx, long long cnt,
                       long long lim, const char *what) {
  for (long long k = 0; k < cnt; k++) {
    if (idx[k] < 0 || idx[k] >= lim)
      return fl_seterr(FL_ERR_FORMAT,
                       "%s: %s: entry %lld is %lld, expected a %s index in [0, %lld)", r->path, hp,
                       k, idx[k], what, lim);
  }
  return FL_OK;
}

/* Reads and checks the FCLIB sparse matrix in group grp (any of the three layouts) into
 * triplets. */
static int rd_matrix(const rd *r, const char *grp, trip *t) {
  char       hp[HP_MAX], hi[HP_MAX], hx[HP_MAX];
  long long  m, n, nz, nzmax;
  long long *P = NULL, *I = NULL;
  double    *X  = NULL;
  hsize_t    np = 0, ni = 0, nx = 0;
  int        rc = FL_OK;
  memset(t, 0, sizeof *t);
  if (!rd_has(r, grp))
    return fl_seterr(FL_ERR_FORMAT, "%s: %s: missing group, expected an FCLIB sparse matrix",
                     r->path, grp);

  //---- sizes ----
  static const char *const names[4] = {"m", "n", "nz", "nzmax"};
  long long               *vals[4]  = {&m, &n, &nz, &nzmax};
  for (int k = 0; k < 4; k++) {
    snprintf(hp, sizeof hp, "%s/%s", grp, names[k]);
    FL_TRY(rd_int1(r, hp, vals[k]));
  }
  if (m < 0 || m > INT32_MAX || n < 0 || n > INT32_MAX)
    return fl_seterr(FL_ERR_FORMAT, "%s: %s/m, %s/n: %lld x %lld, expected sizes in [0, 2^31-1]",
                     r->path, grp, grp, m, n);
  if (nzmax < 0 || nzmax > INT32_MAX)
    return fl_seterr(FL_ERR_FORMAT, "%s: %s/nzmax: %lld, expected 0 <= nzmax <= 2^31-1", r->path,
                     grp, nzmax);
  if (nz < -2)
    return fl_seterr(FL_ERR_FORMAT,
                     "%s: %s/nz: %lld, expected -1 (compressed columns), -2 (compressed rows) "
                     "or a triplet count >= 0",
                     r->path, grp, nz);

  //---- arrays ----
  snprintf(hp, sizeof hp, "%s/p", grp);
  snprintf(hi, sizeof hi, "%s/i", grp);
  snprintf(hx, sizeof hx, "%s/x", grp);
  if ((rc = rd_data(r, hp, 1, &np, (void **)&P)) < 0) goto done;
  if ((rc = rd_data(r, hi, 1, &ni, (void **)&I)) < 0) goto done;
  if ((rc = rd_data(r, hx, 0, &nx, (void **)&X)) < 0) goto done;

  long long nnz;
  if (nz >= 0) {
    // triplets: i = row, p = column
    nnz = nz;
    if (nz > nzmax) {
      rc = fl_seterr(FL_ERR_FORMAT, "%s: %s/nz: %lld triplets, expected at most nzmax = %lld",
                     r->path, grp, nz, nzmax);
      goto done;
    }
    const char *hs[3] = {hp, hi, hx};
    hsize_t     ls[3] = {np, ni, nx};
    for (int k = 0; k < 3; k++) {
      if (ls[k] < (hsize_t)nz) {
        rc = fl_seterr(FL_ERR_FORMAT, "%s: %s: %llu entries, expected at least nz = %lld triplets",
                       r->path, hs[k], (unsigned long long)ls[k], nz);
        goto done;
      }
    }
    if ((rc = check_index(r, hi, I, nz, m, "row")) < 0) goto done;
    if ((rc = check_index(r, hp, P, nz, n, "column")) < 0) goto done;
  } else {
    // compressed columns (-1) or rows (-2): p has (n+1) or (m+1) monotone pointers from 0
    int       csc  = nz == -1;
    long long nptr = (csc ? n : m) + 1;
    if (np != (hsize_t)nptr) {
      rc = fl_seterr(FL_ERR_FORMAT, "%s: %s: %llu entries, expected %s + 1 = %lld %s pointers",
                     r->path, hp, (unsigned long long)np, csc ? "n" : "m", nptr,
                     csc ? "column" : "row");
      goto done;
    }
    if (P[0] != 0) {
      rc = fl_seterr(FL_ERR_FORMAT, "%s: %s: entry 0 is %lld, expected 0", r->path, hp, P[0]);
      goto done;
    }
    for (long long k = 1; k < nptr; k++) {
      if (P[k] < P[k - 1]) {
        rc = fl_seterr(FL_ERR_FORMAT,
                       "%s: %s: entry %lld is %lld < entry %lld = %lld, expected non-decreasing "
                       "pointers",
                       r->path, hp, k, P[k], k - 1, P[k - 1]);
        goto done;
      }
    }
    nnz = P[nptr - 1];
    if (nnz > nzmax || (hsize_t)nnz > ni || (hsize_t)nnz > nx) {
      rc = fl_seterr(FL_ERR_FORMAT,
                     "%s: %s: last pointer is %lld, expected at most nzmax = %lld and the lengths "
                     "of %s (%llu) and %s (%llu)",
                     r->path, hp, nnz, nzmax, hi, (unsigned long long)ni, hx,
                     (unsigned long long)nx);
      goto done;
    }
    if ((rc = check_index(r, hi, I, nnz, csc ? m : n, csc ? "row" : "column")) < 0) goto done;
  }
  fl_int bad;
  if (!all_finite(X, (fl_int)nnz, &bad)) {
    rc = fl_seterr(FL_ERR_FORMAT, "%s: %s: entry %d is %g, expected finite values", r->path, hx,
                   (int)bad, X[bad]);
    goto done;
  }

  //---- triplets ----
  t->m       = (fl_int)m;
  t->n       = (fl_int)n;
  t->nt      = (fl_int)nnz;
  size_t cnt = nnz ? (size_t)nnz : 1;
  t->ti      = (fl_int *)fl_malloc(cnt * sizeof(fl_int));
  t->tj      = (fl_int *)fl_malloc(cnt * sizeof(fl_int));
  t->tx      = (double *)fl_malloc(cnt * sizeof(double));
  if (!t->ti || !t->tj || !t->tx) {
    trip_free(t);
    rc = fl_seterr(FL_ERR_NOMEM, "%s: %s: out of memory for %lld entries", r->path, grp, nnz);
    goto done;
  }
  if (nz >= 0) {
    for (long long k = 0; k < nnz; k++) {
      t->ti[k] = (fl_int)I[k];
      t->tj[k] = (fl_int)P[k];
    }
  } else {
    long long nptr = (nz == -1 ? n : m);
    for (long long c = 0; c < nptr; c++) {
      for (long long k = P[c]; k < P[c + 1]; k++) {
        t->ti[k] = (fl_int)(nz == -1 ? I[k] : c);
        t->tj[k] = (fl_int)(nz == -1 ? c : I[k]);
      }
    }
  }
  memcpy(t->tx, X, (size_t)nnz * sizeof(double));
done:
  fl_free(P);
  fl_free(I);
  fl_free(X);
  return rc;
}

/* spacedim must be 3 */
static int rd_spacedim(const rd *r, const char *grp) {
  char      hp[HP_MAX];
  long long d;
  snprintf(hp, sizeof hp, "%s/spacedim", grp);
  FL_TRY(rd_int1(r, hp, &d));
  if (d != 3)
    return fl_seterr(FL_ERR_UNSUPPORTED,
                     "%s: %s: spatial dimension %lld is unsupported, expected 3", r->path, hp, d);
  return FL_OK;
}

/* mu: nc finite entries >= 0 */
static int rd_mu(const rd *r, const char *hp, fl_int nc, double **mu) {
  FL_TRY(rd_vec(r, hp, nc, "nc", mu));
  for (fl_int c = 0; c < nc; c++) {
    if ((*mu)[c] < 0) {
      int rc =
          fl_seterr(FL_ERR_FORMAT, "%s: %s: entry %d is %g, expected a friction coefficient >= 0",
                    r->path, hp, (int)c, (*mu)[c]);
      fl_free(*mu);
      *mu = NULL;
      return rc;
    }
  }
  return FL_OK;
}

/* Checks the basic file properties and opens it read-only (HDF5 printing already off). */
static int rd_open(rd *r, const char *path) {
  char        hm[160];
  struct stat st;
  r->path = path;
  r->f    = -1;
  // a regular file: a FIFO would block libhdf5's open, a folder or device is no HDF5 file (each
  // dataset is checked against fl_mem_limit() before it is read, so no limit on the whole file)
  FL_TRY(fl_check_input(path, "FCLIB .hdf5 file", 0));
  if (stat(path, &st) != 0)
    return fl_seterr(FL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  if (st.st_size == 0)
    return fl_seterr(FL_ERR_FORMAT, "%s: empty file (0 bytes), expected an FCLIB HDF5 file", path);
  htri_t is = H5Fis_hdf5(path);
  if (is < 0) return fl_seterr(FL_ERR_IO, "%s: cannot read (%s)", path, h5_msg(hm));
  if (is == 0)
    return fl_seterr(FL_ERR_FORMAT,
                     "%s: not an HDF5 file (no HDF5 signature in its %lld bytes), expected an "
                     "FCLIB HDF5 file",
                     path, (long long)st.st_size);
  r->f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (r->f < 0)
    return fl_seterr(FL_ERR_FORMAT,
                     "%s: /: HDF5 cannot open the file (%s), expected a complete HDF5 file "
                     "(truncated or corrupt?)",
                     path, h5_msg(hm));
  return FL_OK;
}

static void rd_close(rd *r) {
  if (r->f >= 0) H5Fclose(r->f);
  r->f = -1;
}

//---- local problems ----

static int load_local(const rd *r, fl_problem **out) {
  const char *G = "/fclib_local";
  trip        W = {0};
  double     *q = NULL, *mu = NULL;
  fl_csr     *Wc = NULL;
  fl_problem *p  = NULL;
  int         rc;
  if ((rc = rd_spacedim(r, G)) < 0) return rc;
  if (rd_has(r, "/fclib_local/V") || rd_has(r, "/fclib_local/R"))
    return fl_seterr(FL_ERR_UNSUPPORTED,
                     "%s: /fclib_local/V: mixed local problems (V, R, s) are unsupported, expected "
                     "W, q and mu only",
                     r->path);
  if ((rc = rd_matrix(r, "/fclib_local/W", &W)) < 0) goto fail;
  if (W.m != W.n || W.m % 3 != 0) {
    rc = fl_seterr(FL_ERR_FORMAT,
                   "%s: /fclib_local/W: %d x %d, expected a square 3 nc x 3 nc matrix", r->path,
                   (int)W.m, (int)W.n);
    goto fail;
  }
  fl_int nc = W.m / 3;
  if (nc == 0) {
    rc = fl_seterr(FL_ERR_FORMAT, "%s: /fclib_local/W: 0 x 0, an empty problem: expected at "
                   "least one contact (3 rows)", r->path);
    goto fail;
  }
  if ((rc = rd_vec(r, "/fclib_local/vectors/q", 3 * nc, "3 nc (rows of W)", &q)) < 0) goto fail;
  if ((rc = rd_mu(r, "/fclib_local/vectors/mu", nc, &mu)) < 0) goto fail;
  if (r->probe) goto fail; // every dataset has been read
  if ((rc = fl_csr_from_triplets(W.m, W.n, W.nt, W.ti, W.tj, W.tx, &Wc)) < 0) goto fail;
  if ((rc = check_assembled(r, "/fclib_local/W", Wc)) < 0) goto fail;
  if ((rc = fl_problem_alloc(FL_PROBLEM_LOCAL, 0, nc, 0, 0, &p)) < 0) goto fail;
  p->W = Wc;
  Wc   = NULL;
  if (nc > 0) {
    memcpy(p->q, q, (size_t)(3 * nc) * sizeof(double));
    memcpy(p->mu, mu, (size_t)nc * sizeof(double));
  }
  *out = p;
  p    = NULL;
  rc   = FL_OK;
fail:
  fl_problem_free(p);
  fl_csr_free(Wc);
  trip_free(&W);
  fl_free(q);
  fl_free(mu);
  return rc;
}

//---- global problems ----

/* Makes the mass matrix symmetric with both triangles stored. Files store either one
 * triangle (LMGC90 writes the upper one) or both (then equal up to round-off, which is
 * averaged away); anything else is an error. */
static int mass_matrix(const rd *r, const trip *M, fl_csr **A) {
  fl_int nlo = 0, nup = 0;
  double amax = 0;
  for (fl_int k = 0; k < M->nt; k++) {
    nlo += M->ti[k] > M->tj[k];
    nup += M->ti[k] < M->tj[k];
    amax = fmax(amax, fabs(M->tx[k]));
  }
  *A = NULL;
  // one triangle: mirror it
  if (nlo == 0 || nup == 0) {
    fl_int  nt = M->nt + nlo + nup, k2 = M->nt;
    fl_int *ti = (fl_int *)fl_malloc((size_t)(nt ? nt : 1) * sizeof(fl_int));
    fl_int *tj = (fl_int *)fl_malloc((size_t)(nt ? nt : 1) * sizeof(fl_int));
    double *tx = (double *)fl_malloc((size_t)(nt ? nt : 1) * sizeof(double));
    int     rc = FL_OK;
    if (!ti || !tj || !tx) {
      rc = fl_seterr(FL_ERR_NOMEM, "%s: /fclib_global/M: out of memory", r->path);
    } else {
      memcpy(ti, M->ti, (size_t)M->nt * sizeof(fl_int));
      memcpy(tj, M->tj, (size_t)M->nt * sizeof(fl_int));
      memcpy(tx, M->tx, (size_t)M->nt * sizeof(double));
      for (fl_int k = 0; k < M->nt; k++) {
        if (M->ti[k] == M->tj[k]) continue;
        ti[k2]   = M->tj[k];
        tj[k2]   = M->ti[k];
        tx[k2++] = M->tx[k];
      }
      rc = fl_csr_from_triplets(M->m, M->n, nt, ti, tj, tx, A);
    }
    fl_free(ti);
    fl_free(tj);
    fl_free(tx);
    return rc;
  }
  // both triangles: same pattern, values equal to round-off; average the pairs
  fl_csr *a = NULL, *at = NULL;
  int     rc = fl_csr_from_triplets(M->m, M->n, M->nt, M->ti, M->tj, M->tx, &a);
  if (rc >= 0) rc = fl_csr_transpose(a, &at);
  if (rc < 0) goto done;
  for (fl_int i = 0; i < a->nrow; i++) {
    fl_int k0 = a->rowptr[i], k1 = a->rowptr[i + 1];
    if (at->rowptr[i] != k0 || at->rowptr[i + 1] != k1) {
      rc = fl_seterr(FL_ERR_FORMAT,
                     "%s: /fclib_global/M: row %d and column %d have different patterns, expected "
                     "a symmetric matrix (or one triangle of it)",
                     r->path, (int)i, (int)i);
      goto done;
    }
    for (fl_int k = k0; k < k1; k++) {
      if (a->col[k] != at->col[k]) {
        rc = fl_seterr(FL_ERR_FORMAT,
                       "%s: /fclib_global/M: entry (%d, %d) has no symmetric partner, expected a "
                       "symmetric matrix (or one triangle of it)",
                       r->path, (int)i, (int)(a->col[k] < at->col[k] ? a->col[k] : at->col[k]));
        goto done;
      }
      double x = a->val[k], y = at->val[k];
      if (fabs(x - y) > 1e-10 * amax) {
        rc = fl_seterr(FL_ERR_FORMAT,
                       "%s: /fclib_global/M: M(%d, %d) = %.17g but M(%d, %d) = %.17g, expected a "
                       "symmetric matrix",
                       r->path, (int)i, (int)a->col[k], x, (int)a->col[k], (int)i, y);
        goto done;
      }
      // x + (y - x)/2 is exactly x when x == y
      a->val[k] = x + 0.5 * (y - x);
    }
  }
  *A = a;
  a  = NULL;
done:
  fl_csr_free(a);
  fl_csr_free(at);
  return rc;
}

static int load_global(const rd *r, fl_problem **out) {
  trip         M = {0}, H = {0}, Gm = {0};
  double      *f = NULL, *w = NULL, *mu = NULL, *bg = NULL;
  fl_int      *ti = NULL, *tj = NULL;
  double      *tx = NULL;
  fl_csr      *A = NULL, *J = NULL;
  fl_problem  *p   = NULL;
  fl_dynamics *dyn = NULL;
  int          rc, hasG = rd_has(r, "/fclib_global/G");
  if ((rc = rd_spacedim(r, "/fclib_global")) < 0) return rc;

  //---- matrices and sizes ----
  if ((rc = rd_matrix(r, "/fclib_global/M", &M)) < 0) goto fail;
  if (M.m != M.n) {
    rc = fl_seterr(FL_ERR_FORMAT,
                   "%s: /fclib_global/M: %d x %d, expected a square ndof x ndof matrix", r->path,
                   (int)M.m, (int)M.n);
    goto fail;
  }
  fl_int nv = M.m;
  if (nv == 0) {
    rc = fl_seterr(FL_ERR_FORMAT, "%s: /fclib_global/M: 0 x 0, an empty problem: expected at "
                   "least one degree of freedom", r->path);
    goto fail;
  }
  if ((rc = rd_matrix(r, "/fclib_global/H", &H)) < 0) goto fail;
  if (H.m != nv || H.n % 3 != 0) {
    rc = fl_seterr(
        FL_ERR_FORMAT,
        "%s: /fclib_global/H: %d x %d, expected ndof x 3 nc with ndof = %d (the size of M)",
        r->path, (int)H.m, (int)H.n, (int)nv);
    goto fail;
  }
  fl_int nc = H.n / 3, nh = 0;
  if (hasG) {
    if ((rc = rd_matrix(r, "/fclib_global/G", &Gm)) < 0) goto fail;
    if (Gm.m != nv) {
      rc = fl_seterr(
          FL_ERR_FORMAT,
          "%s: /fclib_global/G: %d x %d, expected ndof x nh with ndof = %d (the size of M)",
          r->path, (int)Gm.m, (int)Gm.n, (int)nv);
      goto fail;
    }
    nh = Gm.n;
  }
  if (nc == 0 && nh == 0) {
    rc = fl_seterr(FL_ERR_FORMAT, "%s: /fclib_global/H: %d x 0 and no G, nothing to solve: "
                   "expected at least one contact (3 columns of H) or bilateral constraint",
                   r->path, (int)nv);
    goto fail;
  }

  //---- vectors ----
  if ((rc = rd_vec(r, "/fclib_global/vectors/f", nv, "ndof (size of M)", &f)) < 0) goto fail;
  if ((rc = rd_vec(r, "/fclib_global/vectors/w", 3 * nc, "3 nc (columns of H)", &w)) < 0) goto fail;
  if ((rc = rd_mu(r, "/fclib_global/vectors/mu", nc, &mu)) < 0) goto fail;
  if (hasG && (rc = rd_vec(r, "/fclib_global/vectors/b", nh, "nh (columns of G)", &bg)) < 0)
    goto fail;

  if (r->probe) goto fail; // every dataset has been read

  //---- A = M (symmetric), J = [H^T; G^T] ----
  if ((rc = mass_matrix(r, &M, &A)) < 0) goto fail;
  if ((rc = check_assembled(r, "/fclib_global/M", A)) < 0) goto fail;
  fl_int nt = H.nt + Gm.nt;
  ti        = (fl_int *)fl_malloc((size_t)(nt ? nt : 1) * sizeof(fl_int));
  tj        = (fl_int *)fl_malloc((size_t)(nt ? nt : 1) * sizeof(fl_int));
  tx        = (double *)fl_malloc((size_t)(nt ? nt : 1) * sizeof(double));
  if (!ti || !tj || !tx) {
    rc = fl_seterr(FL_ERR_NOMEM, "%s: /fclib_global/H: out of memory", r->path);
    goto fail;
  }
  for (fl_int k = 0; k < H.nt; k++) {
    ti[k] = H.tj[k];
    tj[k] = H.ti[k];
    tx[k] = H.tx[k];
  }
  for (fl_int k = 0; k < Gm.nt; k++) {
    ti[H.nt + k] = 3 * nc + Gm.tj[k];
    tj[H.nt + k] = Gm.ti[k];
    tx[H.nt + k] = Gm.tx[k];
  }
  if ((rc = fl_csr_from_triplets(3 * nc + nh, nv, nt, ti, tj, tx, &J)) < 0) goto fail;
  if ((rc = check_assembled(r, hasG ? "/fclib_global/H and G" : "/fclib_global/H", J)) < 0)
    goto fail;

  //---- the problem: rigid contact, no gaps, dt = 1, v0 = 0 ----
  if ((rc = fl_problem_alloc(FL_PROBLEM_GLOBAL, nv, nc, nh, 0, &p)) < 0) goto fail;
  p->A = A;
  p->J = J;
  A = J = NULL;
  if (nc > 0) {
    memcpy(p->b, w, (size_t)(3 * nc) * sizeof(double));
    memcpy(p->mu, mu, (size_t)nc * sizeof(double));
  }
  if (nh > 0) memcpy(p->b + 3 * nc, bg, (size_t)nh * sizeof(double));
  file_stem(r->path, p->name, sizeof p->name);
  if ((rc = fl_problem_find_cliques(p)) < 0) {
    // keep the code (NOMEM, UNSUPPORTED for a contact on more than two cliques), add the file
    if (rc != FL_ERR_NOMEM) rc = fl_seterr(rc, "%s: /fclib_global/H: %s", r->path, fl_errmsg());
    goto fail;
  }

  // v* = M^-1 f
  if ((rc = fl_dynamics_create(p, &dyn)) < 0) {
    if (rc == FL_ERR_NOT_SPD)
      rc = fl_seterr(FL_ERR_FORMAT,
                     "%s: /fclib_global/M: %s, expected a symmetric positive definite matrix",
                     r->path, fl_errmsg());
    else if (rc != FL_ERR_NOMEM)
      rc = fl_seterr(rc, "%s: /fclib_global/M: %s", r->path, fl_errmsg());
    goto fail;
  }
  fl_dynamics_solve_A(dyn, f, p->vstar);
  // the first guess (/guesses/1/r, l: FCLIB's optional starting points) becomes gamma_guess
  if (rd_has(r, "/guesses/1/r") && 3 * nc + nh > 0) {
    double *gr = NULL, *gl = NULL;
    if ((rc = rd_vec(r, "/guesses/1/r", 3 * nc, "3 nc", &gr)) < 0) goto fail;
    if (nh > 0 && rd_has(r, "/guesses/1/l") &&
        (rc = rd_vec(r, "/guesses/1/l", nh, "nh", &gl)) < 0) {
      fl_free(gr);
      goto fail;
    }
    p->gamma_guess = fl_calloc((size_t)(3 * nc + nh), sizeof(double));
    if (!p->gamma_guess) {
      fl_free(gr), fl_free(gl);
      rc = fl_seterr(FL_ERR_NOMEM, "%s: /guesses: out of memory", r->path);
      goto fail;
    }
    memcpy(p->gamma_guess, gr, (size_t)(3 * nc) * sizeof(double));
    if (gl) memcpy(p->gamma_guess + 3 * nc, gl, (size_t)nh * sizeof(double));
    fl_free(gr), fl_free(gl);
  }
  fl_int bad;
  if (!all_finite(p->vstar, nv, &bad)) {
    rc = fl_seterr(FL_ERR_FORMAT,
                   "%s: /fclib_global/M: v* = M^-1 f has entry %d = %g, expected a "
                   "nonsingular M",
                   r->path, (int)bad, p->vstar[bad]);
    goto fail;
  }
  *out = p;
  p    = NULL;
  rc   = FL_OK;
fail:
  fl_dynamics_free(dyn);
  fl_problem_free(p);
  fl_csr_free(A);
  fl_csr_free(J);
  trip_free(&M);
  trip_free(&H);
  trip_free(&Gm);
  fl_free(f);
  fl_free(w);
  fl_free(mu);
  fl_free(bg);
  fl_free(ti);
  fl_free(tj);
  fl_free(tx);
  return rc;
}

static int save_check(const fl_problem *p, const char *path, const double *v, const double *gamma);

/* A loaded problem passes fl_problem_validate and fits the FCLIB form it is saved in; the
 * message names the file and the group, then the entry in the problem's terms (local: W, q;
 * global: A = M, J = [H^T; G^T], b = [w; b]). */
static int loaded_check(const fl_problem *p, const char *path) {
  char where[1200];
  snprintf(where, sizeof where, "%s: %s", path,
           p->kind == FL_PROBLEM_LOCAL ? "/fclib_local"
                                       : "/fclib_global (A = M, J = [H^T; G^T], b = [w; b])");
  FL_TRY(fl_problem_validate(p, where));
  if (p->gamma_guess) {
    fl_int bad;
    if (!all_finite(p->gamma_guess, fl_problem_nrows(p), &bad))
      return fl_seterr(FL_ERR_FORMAT, "%s: /guesses/1: entry %d is %g, expected finite values",
                       path, (int)bad, p->gamma_guess[bad]);
  }
  int rc = save_check(p, path, NULL, NULL);
  if (rc < 0) return fl_seterr(FL_ERR_FORMAT, "%s (loaded, but not an FCLIB problem)", fl_errmsg());
  return FL_OK;
}

/* The whole load, or with probe only the reading of every dataset it needs. */
static int load_fclib(const char *path, int probe, fl_problem **out) {
  h5q q;
  h5_quiet(&q);
  rd          r;
  fl_problem *p  = NULL;
  int         rc = rd_open(&r, path);
  r.probe        = probe;
  if (rc >= 0) {
    // pick the problem group
    if (rd_has(&r, "/fclib_global")) {
      rc = load_global(&r, &p);
    } else if (rd_has(&r, "/fclib_local")) {
      rc = load_local(&r, &p);
    } else if (rd_has(&r, "/fclib_global_rolling") || rd_has(&r, "/fclib_local_rolling")) {
      rc = fl_seterr(FL_ERR_UNSUPPORTED,
                     "%s: %s: rolling-friction problems are unsupported, expected /fclib_global "
                     "or /fclib_local",
                     path,
                     rd_has(&r, "/fclib_global_rolling") ? "/fclib_global_rolling"
                                                         : "/fclib_local_rolling");
    } else {
      rc = fl_seterr(FL_ERR_FORMAT,
                     "%s: /: no FCLIB problem group, expected /fclib_global or /fclib_local", path);
    }
  }
  rd_close(&r);
  H5Eclear2(H5E_DEFAULT);
  h5_loud(&q);
  if (rc < 0 || probe) return rc;
  file_stem(path, p->name, sizeof p->name);
  // what every caller assumes of a problem (a negative W diagonal is no friction problem, yet
  // solvers "converged" on one), and what saving it back needs (issue 56)
  if ((rc = loaded_check(p, path)) < 0) {
    fl_problem_free(p);
    return rc;
  }
  *out = p;
  return FL_OK;
}

/* what the checking child sends back: its status and message */
typedef struct probe_msg {
  int  rc;
  char msg[1024];
} probe_msg;

/* Runs check(path, ctx) in a child process first: libhdf5 1.10 dereferences corrupt metadata
 * (segfaults, aborts) and keeps state that crashes at exit, so a corrupt file must not be read
 * in this process until a child has read all of it. Returns the child's status and message
 * when it failed, FL_ERR_FORMAT naming the signal when it crashed, FL_OK when it read the file
 * cleanly (the caller then reads it for real). FL_FCLIB_NO_CHILD=1 skips the child;
 * FL_FCLIB_CHILD_FAULT=1 makes the child fault at once (what the tests use to check the path
 * of a libhdf5 crash). */
static int probe_in_child(const char *path, int (*check)(const char *, void *), void *ctx) {
  const char *no = getenv("FL_FCLIB_NO_CHILD");
  if (no && strcmp(no, "1") == 0) return FL_OK;
  probe_msg *m = mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return fl_seterr(FL_ERR_NOMEM, "%s: mmap: %s", path, strerror(errno));
  m->rc = 1; // neither FL_OK nor an error code: the child never finished
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    int rc = fl_seterr(FL_ERR_IO, "%s: fork: %s", path, strerror(errno));
    munmap(m, sizeof *m);
    return rc;
  }
  if (pid == 0) {
    // a crash ends the child quietly (no sanitizer report of libhdf5's fault on stderr); the
    // parent names it
    int dn = open("/dev/null", O_WRONLY);
    if (dn >= 0) dup2(dn, 2);
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    signal(SIGFPE, SIG_DFL);
    signal(SIGABRT, SIG_DFL);
    // the tests' stand-in for a corrupt file that crashes libhdf5 (none is at hand to commit)
    const char *fault = getenv("FL_FCLIB_CHILD_FAULT");
    if (fault && strcmp(fault, "1") == 0) raise(SIGSEGV);
    int rc = check(path, ctx);
    snprintf(m->msg, sizeof m->msg, "%s", rc < 0 ? fl_errmsg() : "");
    m->rc = rc < 0 ? rc : FL_OK;
    _exit(0);
  }
  int wst = 0;
  while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {}
  int rc;
  if (WIFEXITED(wst) && WEXITSTATUS(wst) == 0 && m->rc <= 0) {
    rc = m->rc < 0 ? fl_seterr(m->rc, "%s", m->msg) : FL_OK;
  } else if (WIFSIGNALED(wst)) {
    rc = fl_seterr(FL_ERR_FORMAT,
                   "%s: the HDF5 library crashed reading it (signal %d, %s): a corrupt HDF5 "
                   "file, expected a valid FCLIB file",
                   path, WTERMSIG(wst), strsignal(WTERMSIG(wst)));
  } else {
    rc = fl_seterr(FL_ERR_FORMAT,
                   "%s: the HDF5 library failed reading it (exit %d): a corrupt HDF5 file, "
                   "expected a valid FCLIB file",
                   path, WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
  }
  munmap(m, sizeof *m);
  return rc;
}

static int probe_problem(const char *path, void *ctx) {
  (void)ctx;
  return load_fclib(path, 1, NULL);
}

int fl_problem_load_fclib(const char *path, fl_problem **out) {
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_problem_load_fclib: out is NULL");
  *out = NULL;
  if (!path || !path[0]) return fl_seterr(FL_ERR_INVAL, "fl_problem_load_fclib: empty file name");
  FL_TRY(probe_in_child(path, probe_problem, NULL));
  return load_fclib(path, 0, out);
}

static int read_solution(const char *path, fl_int nv, fl_int nc, double *v, double *gamma,
                         double *u) {
  h5q q;
  h5_quiet(&q);
  rd      r;
  double *rr = NULL, *vv = NULL, *uu = NULL;
  int     rc = rd_open(&r, path);
  if (rc < 0) goto done;
  if (!rd_has(&r, "/solution")) {
    rc = fl_seterr(FL_ERR_NOT_FOUND, "%s: /solution: no solution stored", path);
    goto done;
  }
  // r always (to tell a placeholder), v and u when asked for
  if ((rc = rd_vec(&r, "/solution/r", 3 * nc, "3 nc", &rr)) < 0) goto done;
  if (nv > 0 && rd_has(&r, "/solution/v") && (rc = rd_vec(&r, "/solution/v", nv, "ndof", &vv)) < 0)
    goto done;
  if (v && nv > 0 && !vv) {
    rc = fl_seterr(FL_ERR_NOT_FOUND, "%s: /solution/v: missing, expected %d velocities", path,
                   (int)nv);
    goto done;
  }
  if (u && (rc = rd_vec(&r, "/solution/u", 3 * nc, "3 nc", &uu)) < 0) goto done;

  // libfclib writers often store r = 0, v = 0 as a placeholder
  int zero = 1;
  for (fl_int k = 0; k < 3 * nc && zero; k++)
    zero = rr[k] == 0;
  for (fl_int k = 0; vv && k < nv && zero; k++)
    zero = vv[k] == 0;
  if (zero && nc > 0) {
    rc = fl_seterr(FL_ERR_NOT_FOUND,
                   "%s: /solution/r: all zero%s, a placeholder rather than a solution", path,
                   vv ? " (and /solution/v too)" : "");
    goto done;
  }
  if (gamma && nc > 0) memcpy(gamma, rr, (size_t)(3 * nc) * sizeof(double));
  if (v && nv > 0) memcpy(v, vv, (size_t)nv * sizeof(double));
  if (u && nc > 0) memcpy(u, uu, (size_t)(3 * nc) * sizeof(double));
  rc = FL_OK;
done:
  fl_free(rr);
  fl_free(vv);
  fl_free(uu);
  rd_close(&r);
  H5Eclear2(H5E_DEFAULT);
  h5_loud(&q);
  return rc;
}

typedef struct sol_args {
  fl_int nv, nc;
  int    want_v, want_u;
} sol_args;

static int probe_solution(const char *path, void *ctx) {
  const sol_args *a  = ctx;
  size_t          n3 = 3 * (size_t)a->nc + 1, nv = (size_t)a->nv + 1;
  double         *v = fl_malloc(nv * sizeof(double)), *g = fl_malloc(n3 * sizeof(double)),
         *u = fl_malloc(n3 * sizeof(double));
  int rc = v && g && u ? read_solution(path, a->nv, a->nc, a->want_v ? v : NULL, g,
                                       a->want_u ? u : NULL)
                       : fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
  fl_free(v);
  fl_free(g);
  fl_free(u);
  return rc;
}

int fl_fclib_read_solution(const char *path, fl_int nv, fl_int nc, double *v, double *gamma,
                           double *u) {
  if (!path || nv < 0 || nc < 0)
    return fl_seterr(FL_ERR_INVAL, "fl_fclib_read_solution: bad arguments");
  sol_args a = {nv, nc, v != NULL, u != NULL};
  FL_TRY(probe_in_child(path, probe_solution, &a));
  return read_solution(path, nv, nc, v, gamma, u);
}

//==== writing ====

typedef struct wr {
  const char *path; /* final file name, for messages */
  hid_t       f;
} wr;

/* Writes a one-dimensional dataset hp of n entries: fl_int (is_int) or double. */
static int wr_data(const wr *w, const char *hp, int is_int, hsize_t n, const void *buf) {
  char                hm[160];
  static const fl_int zero_i = 0;
  static const double zero_d = 0;
  hid_t               sp = H5Screate_simple(1, &n, NULL), ds = -1;
  int                 rc = FL_OK;
  if (sp >= 0)
    ds = H5Dcreate2(w->f, hp, is_int ? H5T_STD_I32LE : H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                    H5P_DEFAULT);
  if (!buf) buf = is_int ? (const void *)&zero_i : (const void *)&zero_d; // n == 0
  if (sp < 0 || ds < 0 ||
      H5Dwrite(ds, is_int ? H5T_NATIVE_INT32 : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
               buf) < 0)
    rc = fl_seterr(FL_ERR_IO, "%s: %s: writing %llu entries failed (%s)", w->path, hp,
                   (unsigned long long)n, h5_msg(hm));
  if (ds >= 0) H5Dclose(ds);
  if (sp >= 0) H5Sclose(sp);
  return rc;
}

static int wr_int1(const wr *w, const char *hp, fl_int v) {
  return wr_data(w, hp, 1, 1, &v);
}

/* a scalar fixed-length, null-terminated string dataset (as H5LTmake_dataset_string) */
static int wr_string(const wr *w, const char *hp, const char *s) {
  char  hm[160];
  hid_t ty = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), ds = -1;
  int   rc = FL_OK;
  if (ty >= 0 && sp >= 0 && H5Tset_size(ty, strlen(s) + 1) >= 0 &&
      H5Tset_strpad(ty, H5T_STR_NULLTERM) >= 0)
    ds = H5Dcreate2(w->f, hp, ty, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (ds < 0 || H5Dwrite(ds, ty, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) < 0)
    rc = fl_seterr(FL_ERR_IO, "%s: %s: writing a string failed (%s)", w->path, hp, h5_msg(hm));
  if (ds >= 0) H5Dclose(ds);
  if (sp >= 0) H5Sclose(sp);
  if (ty >= 0) H5Tclose(ty);
  return rc;
}

static int wr_group(const wr *w, const char *hp) {
  char  hm[160];
  hid_t g = H5Gcreate2(w->f, hp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0)
    return fl_seterr(FL_ERR_IO, "%s: %s: creating the group failed (%s)", w->path, hp, h5_msg(hm));
  H5Gclose(g);
  return FL_OK;
}

/* Writes an m x n matrix in compressed columns (nz = -1) from column pointers colptr[0..n]
 * (rebased to start at 0), row indices and values indexed by colptr. */
static int wr_csc(const wr *w, const char *grp, fl_int m, fl_int n, const fl_int *colptr,
                  const fl_int *row, const double *val) {
  char    hp[HP_MAX];
  fl_int  base = colptr[0], nnz = colptr[n] - base;
  fl_int *ptr = (fl_int *)fl_malloc((size_t)(n + 1) * sizeof(fl_int));
  if (!ptr) return fl_seterr(FL_ERR_NOMEM, "%s: %s: out of memory", w->path, grp);
  for (fl_int k = 0; k <= n; k++)
    ptr[k] = colptr[k] - base;
  int         rc       = wr_group(w, grp);
  const char *names[4] = {"nzmax", "m", "n", "nz"};
  fl_int      vals[4]  = {nnz, m, n, -1};
  for (int k = 0; k < 4 && rc >= 0; k++) {
    snprintf(hp, sizeof hp, "%s/%s", grp, names[k]);
    rc = wr_int1(w, hp, vals[k]);
  }
  if (rc >= 0) {
    snprintf(hp, sizeof hp, "%s/p", grp);
    rc = wr_data(w, hp, 1, (hsize_t)n + 1, ptr);
  }
  if (rc >= 0) {
    snprintf(hp, sizeof hp, "%s/i", grp);
    rc = wr_data(w, hp, 1, (hsize_t)nnz, row + base);
  }
  if (rc >= 0) {
    snprintf(hp, sizeof hp, "%s/x", grp);
    rc = wr_data(w, hp, 0, (hsize_t)nnz, val + base);
  }
  fl_free(ptr);
  return rc;
}

/* a CSR matrix written as compressed columns: the CSR of its transpose */
static int wr_csr_as_csc(const wr *w, const char *grp, const fl_csr *a) {
  fl_csr *at = NULL;
  FL_TRY(fl_csr_transpose(a, &at));
  int rc = wr_csc(w, grp, a->nrow, a->ncol, at->rowptr, at->col, at->val);
  fl_csr_free(at);
  return rc;
}

/* /info of a problem; ne: extra dofs standing for compliant contacts (see compliant_dofs) */
static int wr_info(const wr *w, const char *grp, const fl_problem *p, const char *title,
                   fl_int ne) {
  char hp[HP_MAX], desc[320];
  snprintf(hp, sizeof hp, "%s/info", grp);
  FL_TRY(wr_group(w, hp));
  snprintf(hp, sizeof hp, "%s/info/title", grp);
  FL_TRY(wr_string(w, hp,
                   title && title[0] ? title
                   : p->name[0]      ? p->name
                                     : "FrictionLab problem"));
  snprintf(
      desc, sizeof desc,
      "written by FrictionLab %s: %s problem, %d contacts, %d dofs, %d bilateral rows, dt = %g s%s",
      fl_version(), p->kind == FL_PROBLEM_LOCAL ? "local" : "global", (int)p->nc, (int)p->nv,
      (int)p->nh, p->dt,
      ne ? "; plus one dof of mass 1/R_n per compliant contact, seen by its normal row only" : "");
  snprintf(hp, sizeof hp, "%s/info/description", grp);
  FL_TRY(wr_string(w, hp, desc));
  snprintf(hp, sizeof hp, "%s/info/math_info", grp);
  return wr_string(w, hp, "");
}

/* FCLIB's w: b minus the normal target velocity vhat_n, so that the gaps are kept */
static void global_w(const fl_problem *p, double *w) {
  for (fl_int i = 0; i < p->nc; i++) {
    double Rn, vhat;
    fl_problem_normal_law(p, i, &Rn, &vhat);
    for (int k = 0; k < 3; k++)
      w[3 * i + k] = p->b[3 * i + k];
    if (vhat != 0) w[3 * i] -= vhat; // keeps b bit-for-bit when there is no gap
  }
}

/* Checks that a problem fits the FCLIB form before a file is created. */
static int save_check(const fl_problem *p, const char *path, const double *v, const double *gamma) {
  if (p->kind == FL_PROBLEM_LOCAL) {
    if (!p->W || (p->nc > 0 && (!p->q || !p->mu)) || p->W->nrow != 3 * p->nc ||
        p->W->ncol != 3 * p->nc)
      return fl_seterr(FL_ERR_INVAL, "%s: local problem '%s' lacks W (3 nc x 3 nc), q or mu", path,
                       p->name);
    if (p->nh > 0)
      return fl_seterr(FL_ERR_UNSUPPORTED,
                       "%s: local problem '%s' has %d bilateral rows, which FCLIB's local form "
                       "cannot hold",
                       path, p->name, (int)p->nh);
    return FL_OK;
  }
  fl_int nr = fl_problem_nrows(p);
  if (!p->A || !p->J || (nr > 0 && !p->b) || (p->nv > 0 && !p->vstar) || (p->nc > 0 && !p->mu) ||
      p->A->nrow != p->nv || p->A->ncol != p->nv || p->J->nrow != nr || p->J->ncol != p->nv)
    return fl_seterr(FL_ERR_INVAL,
                     "%s: global problem '%s' lacks A (nv x nv), J ((3 nc + nh) x nv), b, v* or mu",
                     path, p->name);
  if (gamma && !v)
    return fl_seterr(
        FL_ERR_INVAL,
        "%s: a solution of global problem '%s' needs the velocities v as well as gamma", path,
        p->name);
  for (fl_int i = 0; i < p->nc; i++) {
    double Rn, vhat;
    fl_problem_normal_law(p, i, &Rn, &vhat);
    if (!(Rn >= 0 && Rn < INFINITY))
      return fl_seterr(FL_ERR_INVAL,
                       "%s: contact %d of '%s' has normal compliance R_n = %g; expected a finite "
                       "value >= 0",
                       path, (int)i, p->name, Rn);
  }
  // bilateral rows become G^T v + b = 0: hard and unbounded only
  for (fl_int h = 0; h < p->nh; h++) {
    if (p->compliance[h] != 0 || p->lo[h] != -INFINITY || p->hi[h] != INFINITY)
      return fl_seterr(FL_ERR_UNSUPPORTED,
                       "%s: bilateral row %d of '%s' is compliant or bounded; FCLIB's G holds "
                       "only hard, unbounded equality rows",
                       path, (int)h, p->name);
  }
  return FL_OK;
}

static int save_local(const wr *w, const fl_problem *p, const char *title, const double *gamma) {
  fl_int m = 3 * p->nc;
  FL_TRY(wr_group(w, "/fclib_local"));
  FL_TRY(wr_int1(w, "/fclib_local/spacedim", 3));
  FL_TRY(wr_csr_as_csc(w, "/fclib_local/W", p->W));
  FL_TRY(wr_group(w, "/fclib_local/vectors"));
  FL_TRY(wr_data(w, "/fclib_local/vectors/q", 0, (hsize_t)m, p->q));
  FL_TRY(wr_data(w, "/fclib_local/vectors/mu", 0, (hsize_t)p->nc, p->mu));
  FL_TRY(wr_info(w, "/fclib_local", p, title, 0));
  if (!gamma) return FL_OK;

  // solution: r = gamma, u = W r + q
  double *u = (double *)fl_malloc((size_t)(m ? m : 1) * sizeof(double));
  if (!u) return fl_seterr(FL_ERR_NOMEM, "%s: /solution: out of memory", w->path);
  if (m > 0) memcpy(u, p->q, (size_t)m * sizeof(double));
  fl_csr_gemv(p->W, 1.0, gamma, 1.0, u);
  int rc = wr_group(w, "/solution");
  if (rc >= 0) rc = wr_data(w, "/solution/u", 0, (hsize_t)m, u);
  if (rc >= 0) rc = wr_data(w, "/solution/r", 0, (hsize_t)m, gamma);
  fl_free(u);
  return rc;
}

static int save_global_rest(const wr *w, const fl_problem *p, const char *title, const double *v,
                            const double *gamma, const fl_csr *J, fl_int nv, fl_int nc3,
                            fl_int nr);

/* FCLIB's global form has no compliance. A compliant contact i (R_n > 0) is written as a rigid
 * one with one extra dof e of mass 1/R_n, seen by its normal row only (H_{e,3i} = 1, f_e = 0):
 * M_e v_e = r_n gives v_e = R_n r_n, so u_n = J_n v + w_n + R_n r_n and the file's local form
 * J A^-1 J^T + diag(R_n, 0, 0) equals the problem's to round-off. Builds A' = diag(A, 1/R_n)
 * and J' = [J E] (new CSRs, caller frees both), and, when v and gamma are given, v' = (v, R_n
 * gamma_n) in a new array (caller frees). *ne = 0 leaves the outputs NULL: nothing to add. */
static int compliant_dofs(const fl_problem *p, const double *v, const double *gamma, fl_int *ne,
                          fl_csr **A2, fl_csr **J2, double **v2) {
  fl_int nv = p->nv, nr = fl_problem_nrows(p), n = 0;
  *ne = 0, *A2 = *J2 = NULL, *v2 = NULL;
  for (fl_int i = 0; i < p->nc; i++) {
    double Rn;
    fl_problem_normal_law(p, i, &Rn, NULL);
    n += Rn > 0;
  }
  if (n == 0) return FL_OK;
  int rc = fl_csr_alloc(nv + n, nv + n, p->A->nnz + n, A2);
  if (rc >= 0) rc = fl_csr_alloc(nr, nv + n, p->J->nnz + n, J2);
  if (rc >= 0 && v && gamma) {
    *v2 = (double *)fl_malloc((size_t)(nv + n) * sizeof(double));
    if (!*v2) rc = fl_seterr(FL_ERR_NOMEM, "compliant contacts: out of memory");
  }
  if (rc < 0) {
    fl_csr_free(*A2), fl_csr_free(*J2), fl_free(*v2);
    *A2 = *J2 = NULL, *v2 = NULL;
    return rc;
  }
  fl_csr *a = *A2, *j = *J2;
  memcpy(a->rowptr, p->A->rowptr, (size_t)(nv + 1) * sizeof(fl_int));
  memcpy(a->col, p->A->col, (size_t)p->A->nnz * sizeof(fl_int));
  memcpy(a->val, p->A->val, (size_t)p->A->nnz * sizeof(double));
  if (*v2) memcpy(*v2, v, (size_t)nv * sizeof(double));
  fl_int e = 0, nz = 0;
  for (fl_int r = 0; r < nr; r++) {
    j->rowptr[r] = nz;
    for (fl_int k = p->J->rowptr[r]; k < p->J->rowptr[r + 1]; k++, nz++)
      j->col[nz] = p->J->col[k], j->val[nz] = p->J->val[k];
    double Rn = 0;
    if (r < 3 * p->nc && r % 3 == 0) fl_problem_normal_law(p, r / 3, &Rn, NULL);
    if (Rn > 0) {
      fl_int c = p->A->nnz + e;
      a->rowptr[nv + e] = c, a->col[c] = nv + e, a->val[c] = 1.0 / Rn;
      j->col[nz] = nv + e, j->val[nz] = 1.0, nz++;
      if (*v2) (*v2)[nv + e] = Rn * gamma[r];
      e++;
    }
  }
  j->rowptr[nr]     = nz;
  a->rowptr[nv + n] = p->A->nnz + n;
  *ne               = n;
  return FL_OK;
}

/* The stepper's guess (p->gamma_guess: the previous step's impulses matched by feature, as a
 * simulation warm-starts) as FCLIB's /guesses/1 (v = v* + A^-1 J' r, u = J v + w, r, l);
 * /guesses/number_of_guesses = 1. wv is the file's w (3nc + nh). */
static int save_guess(const wr *w, const fl_problem *p, const fl_csr *J, const double *wv) {
  fl_int nc3 = 3 * p->nc, nv = p->nv;
  fl_dynamics *dyn = NULL;
  // u = J v has a row per contact component and per bilateral row (nc3 + nh): room for all of
  // them, although only the contact part goes to the file
  double *buf = (double *)fl_calloc((size_t)(2 * nv + fl_problem_nrows(p) + 1), sizeof(double));
  if (!buf) return fl_seterr(FL_ERR_NOMEM, "%s: /guesses: out of memory", w->path);
  double *v = buf, *t = buf + nv, *u = t + nv;
  int rc = fl_dynamics_create(p, &dyn);
  if (rc >= 0) {
    fl_csr_gemtv(J, 1.0, p->gamma_guess, 0.0, t);
    fl_dynamics_solve_A(dyn, t, v);
    for (fl_int k = 0; k < nv; k++) v[k] += p->vstar[k];
    fl_csr_gemv(J, 1.0, v, 0.0, u);
    for (fl_int k = 0; k < nc3; k++) u[k] += wv[k];
    rc = wr_group(w, "/guesses");
  }
  if (rc >= 0) rc = wr_int1(w, "/guesses/number_of_guesses", 1);
  if (rc >= 0) rc = wr_group(w, "/guesses/1");
  if (rc >= 0) rc = wr_data(w, "/guesses/1/v", 0, (hsize_t)nv, v);
  if (rc >= 0) rc = wr_data(w, "/guesses/1/u", 0, (hsize_t)nc3, u);
  if (rc >= 0) rc = wr_data(w, "/guesses/1/r", 0, (hsize_t)nc3, p->gamma_guess);
  if (rc >= 0 && p->nh > 0) rc = wr_data(w, "/guesses/1/l", 0, (hsize_t)p->nh, p->gamma_guess + nc3);
  fl_dynamics_free(dyn);
  fl_free(buf);
  return rc;
}

static int save_global(const wr *w, const fl_problem *p, const char *title, const double *v,
                       const double *gamma) {
  fl_int  nc3 = 3 * p->nc, nr = fl_problem_nrows(p), ne;
  fl_csr *A2, *J2;
  double *v2;
  FL_TRY(compliant_dofs(p, v, gamma, &ne, &A2, &J2, &v2));
  const fl_csr *A = ne ? A2 : p->A, *J = ne ? J2 : p->J;
  fl_int        nv = p->nv + ne;
  if (ne && v && gamma) v = v2;
  int rc = wr_group(w, "/fclib_global");
  if (rc >= 0) rc = wr_int1(w, "/fclib_global/spacedim", 3);
  if (rc >= 0) rc = wr_csr_as_csc(w, "/fclib_global/M", A);
  if (rc >= 0) rc = save_global_rest(w, p, title, v, gamma, J, nv, nc3, nr);
  fl_csr_free(A2), fl_csr_free(J2), fl_free(v2);
  return rc;
}

/* The rest of save_global on the (possibly augmented) J (nr x nv). */
static int save_global_rest(const wr *w, const fl_problem *p, const char *title, const double *v,
                            const double *gamma, const fl_csr *J, fl_int nv, fl_int nc3,
                            fl_int nr) {
  int rc;
  // H = J_c^T: column j of H is row j of J, so J's CSR arrays are H's CSC arrays
  FL_TRY(wr_csc(w, "/fclib_global/H", nv, nc3, J->rowptr, J->col, J->val));
  if (p->nh > 0) FL_TRY(wr_csc(w, "/fclib_global/G", nv, p->nh, J->rowptr + nc3, J->col, J->val));

  // vectors: f = A v*, w = b - vhat_n, mu, b_G = b + g0/dt
  double *buf = (double *)fl_calloc((size_t)(nv + nr + nr + 1), sizeof(double));
  if (!buf) return fl_seterr(FL_ERR_NOMEM, "%s: /fclib_global/vectors: out of memory", w->path);
  double *f = buf, *wv = buf + nv, *u = wv + nr;
  fl_csr_gemv(p->A, 1.0, p->vstar, 0.0, f); // the extra dofs' f stays 0
  global_w(p, wv);
  for (fl_int h = 0; h < p->nh; h++) {
    double g    = p->b[nc3 + h];
    wv[nc3 + h] = p->g0[h] != 0 ? g + p->g0[h] / p->dt : g;
  }
  rc = wr_group(w, "/fclib_global/vectors");
  if (rc >= 0) rc = wr_data(w, "/fclib_global/vectors/f", 0, (hsize_t)nv, f);
  if (rc >= 0) rc = wr_data(w, "/fclib_global/vectors/w", 0, (hsize_t)nc3, wv);
  if (rc >= 0) rc = wr_data(w, "/fclib_global/vectors/mu", 0, (hsize_t)p->nc, p->mu);
  if (rc >= 0 && p->nh > 0) rc = wr_data(w, "/fclib_global/vectors/b", 0, (hsize_t)p->nh, wv + nc3);
  if (rc >= 0) rc = wr_info(w, "/fclib_global", p, title, nv - p->nv);

  // solution: v, u = H^T v + w, r = contact impulses, l = bilateral impulses
  if (rc >= 0 && gamma) {
    fl_csr_gemv(J, 1.0, v, 0.0, u);
    for (fl_int k = 0; k < nc3; k++)
      u[k] += wv[k];
    rc = wr_group(w, "/solution");
    if (rc >= 0) rc = wr_data(w, "/solution/v", 0, (hsize_t)nv, v);
    if (rc >= 0) rc = wr_data(w, "/solution/u", 0, (hsize_t)nc3, u);
    if (rc >= 0) rc = wr_data(w, "/solution/r", 0, (hsize_t)nc3, gamma);
    if (rc >= 0 && p->nh > 0) rc = wr_data(w, "/solution/l", 0, (hsize_t)p->nh, gamma + nc3);
  }
  if (rc >= 0 && p->gamma_guess && nv == p->nv) rc = save_guess(w, p, J, wv);
  fl_free(buf);
  return rc;
}

int fl_problem_save_fclib(const fl_problem *p, const char *path, const char *title, const double *v,
                          const double *gamma) {
  if (!p || !path || !path[0])
    return fl_seterr(FL_ERR_INVAL, "fl_problem_save_fclib: NULL problem or empty file name");
  FL_TRY(save_check(p, path, v, gamma));

  // a temporary file beside the target, renamed at the end
  size_t n   = strlen(path);
  char  *tmp = (char *)fl_malloc(n + 40);
  if (!tmp) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
  // exclusive creation with mode 0666 (the umask applies, unlike mkstemp's 0600)
  static unsigned counter;
  int             fd = -1;
  for (int tries = 0; tries < 100 && fd < 0; tries++) {
    snprintf(tmp, n + 40, "%s.tmp%ld.%u", path, (long)getpid(), counter++);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    int rc = fl_seterr(FL_ERR_IO, "%s: cannot create a temporary file beside it: %s", path,
                       strerror(errno));
    fl_free(tmp);
    return rc;
  }

  // the HDF5 file is built in memory (core driver, no backing store) and written here: a
  // failed write (full disk, ulimit -f) is then an ordinary write error, where libhdf5 writing
  // to disk keeps a half-closed file that crashes the program at exit
  h5q q;
  h5_quiet(&q);
  char  hm[160];
  int   rc  = FL_OK;
  void *img = NULL;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0 || H5Pset_fapl_core(fapl, 1 << 20, 0) < 0) {
    rc = fl_seterr(FL_ERR_LIBRARY, "%s: HDF5 in-memory file driver unavailable (%s)", path,
                   h5_msg(hm));
  } else {
    wr w = {path, H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)};
    if (w.f < 0) {
      rc = fl_seterr(FL_ERR_IO, "%s: creating the HDF5 file failed (%s)", path, h5_msg(hm));
    } else {
      rc = p->kind == FL_PROBLEM_LOCAL ? save_local(&w, p, title, gamma)
                                       : save_global(&w, p, title, v, gamma);
      ssize_t len = -1;
      if (rc >= 0 && (H5Fflush(w.f, H5F_SCOPE_GLOBAL) < 0 ||
                      (len = H5Fget_file_image(w.f, NULL, 0)) < 0))
        rc = fl_seterr(FL_ERR_LIBRARY, "%s: HDF5 file image failed (%s)", path, h5_msg(hm));
      if (rc >= 0 && !(img = fl_malloc((size_t)len + 1)))
        rc = fl_seterr(FL_ERR_NOMEM, "%s: out of memory for the %lld-byte file", path,
                       (long long)len);
      if (rc >= 0 && H5Fget_file_image(w.f, img, (size_t)len) != len)
        rc = fl_seterr(FL_ERR_LIBRARY, "%s: HDF5 file image failed (%s)", path, h5_msg(hm));
      if (H5Fclose(w.f) < 0 && rc >= 0)
        rc = fl_seterr(FL_ERR_LIBRARY, "%s: closing the HDF5 file failed (%s)", path, h5_msg(hm));
      // the bytes, then the name
      for (ssize_t off = 0; rc >= 0 && off < len;) {
        ssize_t k = write(fd, (const char *)img + off, (size_t)(len - off));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
          rc = fl_seterr(FL_ERR_IO, "%s: writing %s failed after %lld of %lld bytes: %s", path,
                         tmp, (long long)off, (long long)len, k < 0 ? strerror(errno) : "no space");
        else
          off += k;
      }
    }
  }
  if (fapl >= 0) H5Pclose(fapl);
  H5Eclear2(H5E_DEFAULT);
  h5_loud(&q);
  fl_free(img);
  if (close(fd) != 0 && rc >= 0)
    rc = fl_seterr(FL_ERR_IO, "%s: closing %s failed: %s", path, tmp, strerror(errno));
  if (rc >= 0 && rename(tmp, path) != 0)
    rc = fl_seterr(FL_ERR_IO, "%s: renaming %s to it failed: %s", path, tmp, strerror(errno));
  if (rc < 0) unlink(tmp);
  fl_free(tmp);
  return rc;
}

//==== answers: a solution written into a copy of its problem's file, and read back ====

/* Copies the bytes of src to the new file dst (created exclusively). */
static int copy_file(const char *src, const char *dst, const char *path) {
  int in = open(src, O_RDONLY);
  if (in < 0) return fl_seterr(FL_ERR_IO, "%s: cannot read %s: %s", path, src, strerror(errno));
  int out = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0666);
  if (out < 0) {
    int rc = fl_seterr(FL_ERR_IO, "%s: cannot create %s: %s", path, dst, strerror(errno));
    close(in);
    return rc;
  }
  char buf[1 << 16];
  int  rc = FL_OK;
  for (;;) {
    ssize_t k = read(in, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      rc = fl_seterr(FL_ERR_IO, "%s: reading %s failed: %s", path, src, strerror(errno));
      break;
    }
    if (k == 0) break;
    for (ssize_t off = 0; off < k;) {
      ssize_t w = write(out, buf + off, (size_t)(k - off));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        rc = fl_seterr(FL_ERR_IO, "%s: writing %s failed: %s", path, dst,
                       w < 0 ? strerror(errno) : "no space");
        break;
      }
      off += w;
    }
    if (rc < 0) break;
  }
  close(in);
  if (close(out) != 0 && rc >= 0)
    rc = fl_seterr(FL_ERR_IO, "%s: closing %s failed: %s", path, dst, strerror(errno));
  return rc;
}

/* The sizes of the problem stored in an open FCLIB file: its dofs (0 for a local problem) and
 * contacts, from M's and H's (or W's) sizes. */
static int file_sizes(const rd *r, long long *nv, long long *nc) {
  long long m = 0;
  if (rd_has(r, "/fclib_global")) {
    FL_TRY(rd_int1(r, "/fclib_global/M/n", nv));
    FL_TRY(rd_int1(r, "/fclib_global/H/n", &m));
  } else {
    *nv = 0;
    FL_TRY(rd_int1(r, "/fclib_local/W/n", &m));
  }
  *nc = m / 3;
  return FL_OK;
}

/* /solution of p's answer (v, gamma) into the open file: v (global), u (3nc: J v + b, or
 * W gamma + q), r (3nc), l (nh). */
static int wr_solution(const wr *w, const fl_problem *p, const double *v, const double *gamma) {
  fl_int  nr = fl_problem_nrows(p), nc3 = 3 * p->nc;
  double *u  = (double *)fl_malloc((size_t)(nr + 1) * sizeof(double));
  if (!u) return fl_seterr(FL_ERR_NOMEM, "%s: /solution: out of memory", w->path);
  fl_problem_velocity(p, v, gamma, u);
  int rc = wr_group(w, "/solution");
  if (rc >= 0 && p->kind == FL_PROBLEM_GLOBAL)
    rc = wr_data(w, "/solution/v", 0, (hsize_t)p->nv, v);
  if (rc >= 0) rc = wr_data(w, "/solution/u", 0, (hsize_t)nc3, u);
  if (rc >= 0) rc = wr_data(w, "/solution/r", 0, (hsize_t)nc3, gamma);
  if (rc >= 0 && p->nh > 0) rc = wr_data(w, "/solution/l", 0, (hsize_t)p->nh, gamma + nc3);
  fl_free(u);
  return rc;
}

int fl_solution_save(const fl_problem *p, const char *source, const double *v,
                     const double *gamma, const char *path) {
  if (!p || !path || !path[0] || !gamma)
    return fl_seterr(FL_ERR_INVAL, "fl_solution_save: NULL problem or answer, or empty file name");
  if (p->kind == FL_PROBLEM_GLOBAL && !v && p->nv > 0)
    return fl_seterr(FL_ERR_INVAL, "%s: an answer of global problem '%s' needs its velocities v",
                     path, p->name);
  fl_int nr = fl_problem_nrows(p);
  for (fl_int k = 0; k < nr; k++)
    if (!isfinite(gamma[k]))
      return fl_seterr(FL_ERR_INVAL, "%s: gamma[%d] = %g: FCLIB holds finite answers only", path,
                       (int)k, gamma[k]);
  for (fl_int k = 0; v && p->kind == FL_PROBLEM_GLOBAL && k < p->nv; k++)
    if (!isfinite(v[k]))
      return fl_seterr(FL_ERR_INVAL, "%s: v[%d] = %g: FCLIB holds finite answers only", path,
                       (int)k, v[k]);
  if (!source) return fl_problem_save_fclib(p, path, NULL, v, gamma);

  size_t n   = strlen(path);
  char  *tmp = (char *)fl_malloc(n + 40);
  if (!tmp) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
  static unsigned counter;
  snprintf(tmp, n + 40, "%s.tmp%ld.%u", path, (long)getpid(), counter++);
  int rc = copy_file(source, tmp, path);
  if (rc < 0) {
    fl_free(tmp);
    return rc;
  }
  h5q q;
  h5_quiet(&q);
  char hm[160];
  rd   r = {path, H5Fopen(tmp, H5F_ACC_RDWR, H5P_DEFAULT), 0};
  if (r.f < 0)
    rc = fl_seterr(FL_ERR_FORMAT, "%s: HDF5 cannot open the copy of %s for writing (%s)", path,
                   source, h5_msg(hm));
  long long fnv = -1, fnc = -1;
  if (rc >= 0) rc = file_sizes(&r, &fnv, &fnc);
  if (rc >= 0 && (fnv != (p->kind == FL_PROBLEM_GLOBAL ? p->nv : 0) || fnc != p->nc))
    rc = fl_seterr(FL_ERR_INVAL, "%s: %s holds a problem of %lld dofs and %lld contacts; the "
                   "answer is of '%s', %d dofs and %d contacts", path, source, fnv, fnc,
                   p->name, (int)p->nv, (int)p->nc);
  // an answer already in the file (libfclib's placeholder, an earlier run) is replaced
  if (rc >= 0 && rd_has(&r, "/solution") && H5Ldelete(r.f, "/solution", H5P_DEFAULT) < 0)
    rc = fl_seterr(FL_ERR_IO, "%s: removing the old /solution failed (%s)", path, h5_msg(hm));
  if (rc >= 0) {
    wr w = {path, r.f};
    rc   = wr_solution(&w, p, v, gamma);
  }
  if (r.f >= 0 && H5Fclose(r.f) < 0 && rc >= 0)
    rc = fl_seterr(FL_ERR_IO, "%s: closing the HDF5 file failed (%s)", path, h5_msg(hm));
  H5Eclear2(H5E_DEFAULT);
  h5_loud(&q);
  if (rc >= 0 && rename(tmp, path) != 0)
    rc = fl_seterr(FL_ERR_IO, "%s: renaming %s to it failed: %s", path, tmp, strerror(errno));
  if (rc < 0) unlink(tmp);
  fl_free(tmp);
  return rc;
}

/* reads r (3nc), l (nh) and, when stored, v (nv) of /solution; *have_v says whether v was */
static int read_answer(const char *path, fl_int nv, fl_int nc, fl_int nh, double *v,
                       double *gamma, int *have_v) {
  h5q q;
  h5_quiet(&q);
  rd      r;
  double *rr = NULL, *ll = NULL, *vv = NULL;
  int     rc = rd_open(&r, path);
  *have_v    = 0;
  if (rc < 0) goto done;
  if (!rd_has(&r, "/solution")) {
    rc = fl_seterr(FL_ERR_NOT_FOUND, "%s: /solution: no solution stored", path);
    goto done;
  }
  if ((rc = rd_vec(&r, "/solution/r", 3 * nc, "3 nc", &rr)) < 0) goto done;
  if (nh > 0 && (rc = rd_vec(&r, "/solution/l", nh, "the bilateral rows", &ll)) < 0) goto done;
  if (nv > 0 && rd_has(&r, "/solution/v") && (rc = rd_vec(&r, "/solution/v", nv, "ndof", &vv)) < 0)
    goto done;
  if (gamma) {
    if (nc > 0) memcpy(gamma, rr, (size_t)(3 * nc) * sizeof(double));
    if (nh > 0) memcpy(gamma + 3 * nc, ll, (size_t)nh * sizeof(double));
  }
  if (vv && v) memcpy(v, vv, (size_t)nv * sizeof(double));
  *have_v = vv != NULL;
  rc      = FL_OK;
done:
  fl_free(rr);
  fl_free(ll);
  fl_free(vv);
  rd_close(&r);
  H5Eclear2(H5E_DEFAULT);
  h5_loud(&q);
  return rc;
}

typedef struct answer_args {
  fl_int nv, nc, nh;
} answer_args;

static int probe_answer(const char *path, void *ctx) {
  const answer_args *a = ctx;
  int                have;
  return read_answer(path, a->nv, a->nc, a->nh, NULL, NULL, &have);
}

int fl_solution_read(const fl_problem *p, const char *path, double *v, double *gamma,
                     int *have_v) {
  int dummy;
  if (!have_v) have_v = &dummy;
  *have_v = 0;
  if (!p || !path || !path[0] || !gamma)
    return fl_seterr(FL_ERR_INVAL, "fl_solution_read: NULL problem or answer, or empty file name");
  answer_args a = {p->kind == FL_PROBLEM_GLOBAL ? p->nv : 0, p->nc, p->nh};
  FL_TRY(probe_in_child(path, probe_answer, &a));
  return read_answer(path, a.nv, a.nc, a.nh, v, gamma, have_v);
}

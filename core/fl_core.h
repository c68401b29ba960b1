// SPDX-License-Identifier: Apache-2.0
/* fl_core.h: FrictionLab's core module (libc and libm only).
 *
 * Contents: one index and scalar type, error codes from one list, a scratch arena with marks,
 * small dense math (vec3, mat3, quaternions, small Cholesky and LDL^T), sparse CSR matrices
 * and 3x3 block-sparse matrices, a typed key=value options parser, a monotonic timer and a
 * progress bar that draws only on a terminal.
 *
 * Conventions: every fallible function returns an int status, FL_OK (0) or a negative FL_ERR_*
 * code, and leaves a message for fl_errmsg(). Dense matrices are row-major. Nothing here is
 * thread-safe unless said so; the error message buffer is thread-local.
 */
#ifndef FL_CORE_H
#define FL_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*---- types ----*/

/* One index type everywhere (sizes are checked against INT32_MAX when data is loaded). */
typedef int32_t fl_int;

/*---- errors ----*/

/* The one list of error codes: name, value, message. */
#define FL_ERRNO_MAP(X)                                                      \
  X(OK, 0, "success")                                                        \
  X(NOMEM, -1, "out of memory")                                              \
  X(INVAL, -2, "invalid argument")                                           \
  X(IO, -3, "input/output error")                                            \
  X(FORMAT, -4, "malformed input")                                           \
  X(UNKNOWN_SOLVER, -5, "unknown solver")                                    \
  X(UNKNOWN_OPTION, -6, "unknown option")                                    \
  X(OPTION_TYPE, -7, "option value of the wrong type")                       \
  X(OPTION_RANGE, -8, "option value out of range")                           \
  X(UNSUPPORTED, -9, "unsupported for this problem")                         \
  X(NOT_SPD, -10, "matrix not symmetric positive definite")                  \
  X(LIBRARY, -11, "external library failure")                                \
  X(UNKNOWN_PROBLEM, -12, "unknown problem")                                 \
  X(STATE, -13, "object used in the wrong state")                            \
  X(NOT_FOUND, -14, "not found")

enum {
#define FL_ERR_ENUM_(name, val, msg) FL_ERR_##name = (val),
  FL_ERRNO_MAP(FL_ERR_ENUM_)
#undef FL_ERR_ENUM_
};
#define FL_OK FL_ERR_OK

/* Static description of a code ("out of memory"); never NULL. */
const char *fl_strerror(int code);
/* Static name of a code ("FL_ERR_NOMEM"); never NULL. */
const char *fl_errname(int code);

/* Records `code` with a printf-style message in the thread-local last-error buffer and returns
 * `code`, so that `return fl_seterr(FL_ERR_FORMAT, "%s: ...", path);` reads as one statement.
 * Messages name the file or option, the place, and what was expected. */
int fl_seterr(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The last message set on this thread ("" if none). Valid until the next fl_seterr. */
const char *fl_errmsg(void);
/* The code of the last fl_seterr on this thread (FL_OK if none). */
int fl_errcode(void);
/* Clears the last error. */
void fl_clearerr(void);

/* Propagates a negative status upward. */
#define FL_TRY(expr)                                                        \
  do {                                                                      \
    int fl_try_rc_ = (expr);                                                \
    if (fl_try_rc_ < 0) return fl_try_rc_;                                  \
  } while (0)

/*---- allocation ----*/

/* All heap allocations of the project go through these, so tests can inject faults:
 * fl_alloc_fail_after(n) makes the (n+1)-th following allocation fail (n < 0 disables). */
void *fl_malloc(size_t bytes);
void *fl_calloc(size_t n, size_t size);
void *fl_realloc(void *p, size_t bytes);
void fl_free(void *p);
void fl_alloc_fail_after(long n);
/* Grows the array *arr of *cap elements of `elem` bytes (NULL and 0 at first) to hold at least
 * `need` elements: the capacity doubles from 8, the new elements are zeroed, and *arr and *cap
 * are updated. Returns FL_OK (also when `need` <= *cap, doing nothing), or FL_ERR_NOMEM with
 * "<what>: out of memory (N items)", *arr and *cap then unchanged. */
int fl_grow(void **arr, fl_int *cap, fl_int need, size_t elem, const char *what);

/* The largest memory estimate (bytes) that reading a file or building a mesh may ask for:
 * FL_MEM_LIMIT_MB from the environment when set (a positive number of MiB), else 8 GiB. Inputs
 * whose sizes imply more are refused before anything is allocated. */
double fl_mem_limit(void);
/* FL_OK when `bytes` (an estimate, computed in 64 bits or in double by the caller) is finite and
 * at most fl_mem_limit(); else FL_ERR_NOMEM with "<where>: <what> needs about X GB, above the
 * limit of Y GB (FL_MEM_LIMIT_MB)". */
int fl_mem_check(const char *where, const char *what, double bytes);
/* Parses one decimal integer from s (leading blanks skipped) into *v, in [lo, hi]; *end (may be
 * NULL) gets the first unparsed character. Returns 1 on success; 0 when s holds no integer,
 * overflows long long or falls outside [lo, hi] (*v is then unchanged). Never goes through a
 * double. */
int fl_parse_ll(const char *s, char **end, long long lo, long long hi, long long *v);

/*---- files in and out, names (issue 51) ----*/

/* Opens `path` for reading as an input of kind `what` (e.g. "scene file"): anything but a
 * regular file (a FIFO, folder, device, socket) is refused without blocking on it, and so is a
 * file of more than max_bytes (<= 0: no limit). Returns FL_OK and *out (fclose it), or FL_ERR_IO
 * with "<path>: is a FIFO, not a <what> (expected a regular file)" or "<path>: N bytes, above
 * the limit of M bytes for a <what>". */
int fl_open_input(const char *path, const char *what, double max_bytes, FILE **out);
/* The same check for readers that open by name themselves (libhdf5): FL_OK or FL_ERR_IO. */
int fl_check_input(const char *path, const char *what, double max_bytes);
/* A single-file output is replaced only when it is absent or a regular file: a symlink, FIFO,
 * device, socket or folder at `path` is never replaced (FL_ERR_IO naming what it is). */
int fl_check_output(const char *path, const char *what);
/* Writing a single-file output atomically: open makes a fresh temporary file beside `path`
 * (mkstemp) after fl_check_output; commit closes it and renames it onto `path` (checked again);
 * abort closes and removes it. Each returns FL_OK or FL_ERR_IO (the temporary is then removed). */
typedef struct fl_outfile {
  FILE *f;
  char path[4096], tmp[4200];
} fl_outfile;
int fl_outfile_open(fl_outfile *o, const char *path, const char *what);
int fl_outfile_commit(fl_outfile *o);
void fl_outfile_abort(fl_outfile *o);

/* Names (scenes, bodies, materials, solver variants) are identifiers: 1 to FL_NAME_MAX
 * characters of [A-Za-z0-9_.-], not starting with '.' or '-', so that a name is a safe file name
 * part and a plain CSV cell. FL_OK, or FL_ERR_INVAL with "<where>: <what> '<name>': character
 * N (0xHH) is not allowed; ..." (the name is shown with unprintable bytes escaped). */
#define FL_NAME_MAX 31
int fl_name_check(const char *name, const char *where, const char *what);

/*---- arena: scratch memory with marks (MuJoCo's stack) ----*/

typedef struct fl_arena {
  unsigned char *base; /* owned buffer of `size` bytes */
  size_t size;         /* capacity in bytes */
  size_t used;         /* bytes in use */
  size_t high;         /* high-water mark in bytes */
  const char *high_func; /* function that set the high-water mark */
  int high_line;
} fl_arena;

/* Allocates the buffer. Returns FL_OK or FL_ERR_NOMEM. */
int fl_arena_init(fl_arena *a, size_t bytes);
/* Frees the buffer; the arena may be initialized again. NULL-safe. */
void fl_arena_free(fl_arena *a);
/* Current position, to hand back to fl_arena_release. */
size_t fl_arena_mark(const fl_arena *a);
/* Frees everything allocated after `mark`. */
void fl_arena_release(fl_arena *a, size_t mark);
/* Allocates n*size bytes aligned to `align`; returns NULL and sets FL_ERR_NOMEM (naming
 * func:line) when the arena is exhausted. Memory is not zeroed. */
void *fl_arena_alloc_(fl_arena *a, size_t n, size_t size, size_t align, const char *func, int line);
#define FL_ALLOC(arena, n, type)                                                            \
  ((type *)fl_arena_alloc_((arena), (size_t)(n), sizeof(type), _Alignof(type), __func__, \
                           __LINE__))

/*---- small dense math (row-major; arrays may not alias unless said) ----*/

double fl_v3_dot(const double a[3], const double b[3]);
void fl_v3_cross(const double a[3], const double b[3], double out[3]);
double fl_v3_norm(const double a[3]);
/* Normalizes in place; returns the old norm (leaves a zero vector unchanged). */
double fl_v3_normalize(double a[3]);
/* Two unit tangents t1, t2 such that (n, t1, t2) is a right-handed orthonormal frame. The
 * choice is deterministic in n. */
void fl_v3_tangents(const double n[3], double t1[3], double t2[3]);

void fl_m3_mul(const double a[9], const double b[9], double out[9]);         /* out = a b */
void fl_m3_mulv(const double a[9], const double x[3], double out[3]);        /* out = a x */
void fl_m3_multv(const double a[9], const double x[3], double out[3]);       /* out = a^T x */
void fl_m3_transpose(const double a[9], double out[9]);
/* Inverse of a 3x3 matrix; returns FL_ERR_NOT_SPD (singular) if |det| <= tiny. */
int fl_m3_inv(const double a[9], double out[9]);
/* Skew matrix [w]x such that [w]x y = w x y. */
void fl_m3_skew(const double w[3], double out[9]);

/* Quaternions q = (w, x, y, z), unit for rotations. */
void fl_quat_mul(const double a[4], const double b[4], double out[4]);
void fl_quat_rotate(const double q[4], const double v[3], double out[3]);
void fl_quat_to_mat(const double q[4], double R[9]);
void fl_quat_from_axis_angle(const double axis[3], double angle, double q[4]);
/* q <- normalize(q + dt/2 * (0, w) * q) with w the world-frame angular velocity (rad/s). */
void fl_quat_integrate(double q[4], const double w[3], double dt);
void fl_quat_normalize(double q[4]);

/* In-place Cholesky A = L L^T of an n x n SPD row-major matrix (lower triangle written, upper
 * left as is). Returns FL_ERR_NOT_SPD when a pivot is <= 0. */
int fl_chol_factor(double *A, int n);
/* Solves L L^T x = b in place (b becomes x), L from fl_chol_factor. */
void fl_chol_solve(const double *L, int n, double *b);
/* In-place LDL^T of a symmetric n x n matrix (unit L in the strict lower triangle, D on the
 * diagonal). Returns FL_ERR_NOT_SPD on a zero pivot. */
int fl_ldlt_factor(double *A, int n);
void fl_ldlt_solve(const double *LD, int n, double *b);
/* In-place LU with partial pivoting of the n x n row-major a: unit lower L below the diagonal,
 * U on and above it; piv[k] (n) is the row swapped with row k at step k. last (n, caller's
 * workspace) receives each row's last nonzero column, kept through fill-in, so that the zeros of
 * a block-sparse matrix are skipped (rows with a zero multiplier, updates past the pivot row's
 * last nonzero): the same factors as the full loops, fewer operations; after the call it tells
 * how far each row of the factors reaches. Returns FL_OK, or FL_ERR_NOT_SPD on a zero or
 * non-finite pivot (a is then partly factored). */
int fl_lu_factor(double *a, int n, int *piv, int *last);
/* x <- (L U)^-1 P x in place with the factors and pivots of fl_lu_factor. */
void fl_lu_solve(const double *a, int n, const int *piv, double *x);

/*---- sparse matrices ----*/

/* Compressed sparse rows. A CSC matrix is the CSR of its transpose. Arrays are owned. */
typedef struct fl_csr {
  fl_int nrow, ncol;
  fl_int nnz;
  fl_int *rowptr; /* (nrow + 1) */
  fl_int *col;    /* (nnz) column indices, sorted within each row */
  double *val;    /* (nnz) */
} fl_csr;

/* Allocates an nrow x ncol matrix with room for nnz entries (rowptr zeroed). */
int fl_csr_alloc(fl_int nrow, fl_int ncol, fl_int nnz, fl_csr **out);
/* Builds from triplets (row i, column j, value), duplicates summed, columns sorted. */
int fl_csr_from_triplets(fl_int nrow, fl_int ncol, fl_int nt, const fl_int *i, const fl_int *j,
                         const double *v, fl_csr **out);
/* Converts a compressed-column matrix (colptr, row, val) into CSR. */
int fl_csr_from_csc(fl_int nrow, fl_int ncol, const fl_int *colptr, const fl_int *row,
                    const double *val, fl_csr **out);
int fl_csr_transpose(const fl_csr *a, fl_csr **out);
int fl_csr_copy(const fl_csr *a, fl_csr **out);
void fl_csr_free(fl_csr *a); /* NULL-safe */
/* y = alpha A x + beta y (y not aliasing x). */
void fl_csr_gemv(const fl_csr *a, double alpha, const double *x, double beta, double *y);
/* y = alpha A^T x + beta y. */
void fl_csr_gemtv(const fl_csr *a, double alpha, const double *x, double beta, double *y);
/* Entry (i, j) or 0. Binary search within the row. */
double fl_csr_get(const fl_csr *a, fl_int i, fl_int j);
/* C = A B. */
int fl_csr_matmul(const fl_csr *a, const fl_csr *b, fl_csr **out);

/* 3x3 block-sparse rows (BSR3): block (I, J) is a row-major 3x3 at val + 9*k. */
typedef struct fl_bsr3 {
  fl_int nbrow, nbcol;
  fl_int nnzb;
  fl_int *rowptr; /* (nbrow + 1) */
  fl_int *col;    /* (nnzb) sorted */
  double *val;    /* (9 nnzb) */
} fl_bsr3;

/* Builds from a CSR matrix whose sizes are multiples of 3 (any entry makes its block). */
int fl_bsr3_from_csr(const fl_csr *a, fl_bsr3 **out);
void fl_bsr3_free(fl_bsr3 *a);
/* y = A x + beta y. */
void fl_bsr3_gemv(const fl_bsr3 *a, const double *x, double beta, double *y);
/* Pointer to block (I, J), or NULL if structurally zero. */
const double *fl_bsr3_block(const fl_bsr3 *a, fl_int I, fl_int J);

/*---- options: typed key=value tables ----*/

typedef enum fl_opt_type {
  FL_OPT_INT,    /* int, range [lo, hi] */
  FL_OPT_REAL,   /* double, range [lo, hi]; "inf" and "-inf" accepted when in range */
  FL_OPT_BOOL,   /* int 0/1; accepts 0/1/true/false/yes/no/on/off */
  FL_OPT_ENUM,   /* int index into `choices` ("a|b|c") */
  FL_OPT_STRING  /* char[FL_OPT_STRLEN] */
} fl_opt_type;

#define FL_OPT_STRLEN 256

/* One option: `offset` is the member's offset in the owner's options struct. Tables end with
 * an entry whose key is NULL. For FL_OPT_ENUM, `dflt` is the default index; for FL_OPT_STRING,
 * `choices` holds the default string. */
typedef struct fl_option_desc {
  const char *key;
  fl_opt_type type;
  size_t offset;
  double lo, hi, dflt;
  const char *choices;
  const char *help;
} fl_option_desc;

/* Writes every default into `obj`. */
void fl_options_defaults(const fl_option_desc *table, void *obj);
/* Parses `value` for `key`. Errors: FL_ERR_UNKNOWN_OPTION (message lists the valid keys),
 * FL_ERR_OPTION_TYPE, FL_ERR_OPTION_RANGE; the message names `where` (e.g. "pgs") and key. */
int fl_options_set(const fl_option_desc *table, void *obj, const char *where, const char *key,
                   const char *value);
/* Looks a key up; NULL if absent. */
const fl_option_desc *fl_options_find(const fl_option_desc *table, const char *key);
/* The edit distance (insertions, deletions, substitutions, swaps of neighbours) between a and
 * b, capped at 64. */
int fl_edit_distance(const char *a, const char *b);
/* The key of `table` nearest to `key` when it is a near miss (edit distance at most 2, and less
 * than a third of the key's length rounded up), else NULL. On a tie the first key wins. */
const char *fl_options_suggest(const fl_option_desc *table, const char *key);
/* Formats the current value of one option into buf ("1.5", "true", "pcr"). */
void fl_options_format(const fl_option_desc *d, const void *obj, char *buf, size_t n);
/* Prints "prefix.key = value" lines. */
void fl_options_print(const fl_option_desc *table, const void *obj, const char *prefix, FILE *f);
/* Prints "prefix.key  type  default  range  help" lines. */
void fl_options_help(const fl_option_desc *table, const char *prefix, FILE *f);
/* Splits a comma-separated list ("a=1,b=2"; NULL or "" is empty) into at most `max` entries:
 * the list is copied into buf (n bytes, owned by the caller) and out[k] points into it. Empty
 * entries are dropped. Returns the entry count, or FL_ERR_INVAL (message quotes the list) when
 * it does not fit in buf or has more than max entries. */
int fl_split_list(const char *list, char *buf, size_t n, const char **out, int max);

/* Whether `name` is a whole entry of the comma-separated `list` ("a,b"); a NULL list holds
 * every name. */
int fl_list_has(const char *list, const char *name);

/*---- time and progress ----*/

/* Monotonic wall-clock time in seconds (CLOCK_MONOTONIC). Thread-safe. */
double fl_time_now(void);
/* Process CPU time (s, all threads summed): what a benchmark on a shared machine compares. */
double fl_cpu_now(void);

typedef struct fl_progress {
  const char *label;
  long total, done;
  double t0, last_draw;
  int active; /* 1 when stderr is a terminal */
} fl_progress;

/* Starts a bar on stderr, drawn only when stderr is a terminal and at most 10 times a second. */
void fl_progress_begin(fl_progress *p, const char *label, long total);
void fl_progress_update(fl_progress *p, long done);
void fl_progress_end(fl_progress *p);

/* FrictionLab's version string ("0.3.0"; CHANGELOG.md). */
const char *fl_version(void);

/* The ABI version of libfrictionlab: the number in its SONAME (libfrictionlab.so.1) and the
 * version a plug-in declares it was built for. It changes with every change that breaks a
 * program or plug-in built against the installed headers (docs/api.md, "The ABI rule"). CMake
 * reads this line. */
#define FL_ABI_VERSION 1
/* The ABI version of the library actually loaded (FL_ABI_VERSION of its build). */
int fl_abi_version(void);

#ifdef __cplusplus
}
#endif
#endif /* FL_CORE_H */

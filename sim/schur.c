// SPDX-License-Identifier: Apache-2.0
/* schur.c: the Schur complement S = A_pp - A_pn A_nn^-1 A_np as the trailing block L22 L22^T of
 * a constrained sparse Cholesky factor (fl_schur.h; seed 000 section VI-B).
 *
 * Setup: CAMD orders A with two constraint sets (non-participating rows first, participating
 * last). CHOLMOD's analysis then uses that permutation as given and with no postorder: a
 * weighted postorder of the elimination tree keeps children before parents but may move an
 * n-row subtree after a p-row, so the last np columns would no longer be p. The permutation the
 * factor actually holds is checked against p's set. The numeric factorization is CHOLMOD's
 * choice (supernodal for 3D meshes, simplicial for thin problems), converted at the end to a
 * simplicial, packed, monotonic LL^T, whose trailing np x np columns are L22.
 *
 * Solves and recoveries start their own cholmod_common: they only read the factor, so
 * concurrent calls on one object are safe.
 */
#include <string.h>

#include <cholmod.h>

#include "fl_schur.h"

struct fl_schur {
  fl_int n, np;           /* size of A, participating rows */
  cholmod_factor *L;      /* simplicial LL^T of P A P^T (L->Perm = P) */
  cholmod_common cc;      /* the Common that owns L */
  double *S;              /* (np x np) row-major, order of p; NULL when np = 0 */
  fl_int *pos;            /* (np) trailing row a of L (permuted position m + a) -> index in p */
  int started;            /* cc was started (cholmod_finish due) */
  /* what fl_schur_refactor reuses: the symbolic factor (ordering and analysis) and the
   * structure it was made for (A's pattern, p) */
  cholmod_factor *Lsym;
  fl_int nnz, *rowptr, *col, *p;
};


/* Common settings for every CHOLMOD call here: no printing, stop at the first bad pivot. */
static void schur_common(cholmod_common *cc) {
  cc->print = 0;
  cc->error_handler = NULL;
  cc->quick_return_if_not_posdef = 1;
}


/* A CHOLMOD failure as an FL_ERR_* code with a message. */
static int schur_cmerr(const cholmod_common *cc, const char *what) {
  if (cc->status == CHOLMOD_OUT_OF_MEMORY)
    return fl_seterr(FL_ERR_NOMEM, "fl_schur: %s: out of memory (CHOLMOD)", what);
  if (cc->status == CHOLMOD_TOO_LARGE)
    return fl_seterr(FL_ERR_LIBRARY, "fl_schur: %s: problem too large for 32-bit CHOLMOD", what);
  return fl_seterr(FL_ERR_LIBRARY, "fl_schur: %s failed (CHOLMOD status %d)", what, cc->status);
}


/* A CSR with both triangles is the CSC of the same symmetric matrix; CHOLMOD reads one
 * triangle (stype = 1) and does not write through these pointers. */
static void schur_wrap(const fl_csr *A, cholmod_sparse *W) {
  memset(W, 0, sizeof(*W));
  W->nrow = (size_t)A->nrow;
  W->ncol = (size_t)A->ncol;
  W->nzmax = (size_t)A->nnz;
  W->p = A->rowptr;
  W->i = A->col;
  W->x = A->val;
  W->stype = 1;
  W->itype = CHOLMOD_INT;
  W->xtype = CHOLMOD_REAL;
  W->dtype = CHOLMOD_DOUBLE;
  W->sorted = 1;
  W->packed = 1;
}


static void schur_dense(fl_int n, double *x, cholmod_dense *B) {
  memset(B, 0, sizeof(*B));
  B->nrow = (size_t)n;
  B->ncol = 1;
  B->nzmax = (size_t)n;
  B->d = (size_t)n;
  B->x = x;
  B->xtype = CHOLMOD_REAL;
  B->dtype = CHOLMOD_DOUBLE;
}


void fl_schur_free(fl_schur *s) {
  if (!s) return;
  if (s->started) {
    cholmod_free_factor(&s->L, &s->cc);
    cholmod_free_factor(&s->Lsym, &s->cc);
    cholmod_finish(&s->cc);
  }
  fl_free(s->S);
  fl_free(s->pos);
  fl_free(s->rowptr);
  fl_free(s->col);
  fl_free(s->p);
  fl_free(s);
}


//---- setup ----

/* the checks on A and p */
static int schur_check(const fl_csr *A, fl_int np, const fl_int *p) {
  if (!A || !A->rowptr || (A->nnz > 0 && (!A->col || !A->val)))
    return fl_seterr(FL_ERR_INVAL, "fl_schur_create: A is NULL or has NULL arrays");
  fl_int n = A->nrow;
  if (n < 1 || A->ncol != n)
    return fl_seterr(FL_ERR_INVAL, "fl_schur_create: A is %d x %d, expected square with n >= 1",
                     (int)A->nrow, (int)A->ncol);
  if (A->rowptr[0] != 0 || A->rowptr[n] != A->nnz)
    return fl_seterr(FL_ERR_INVAL, "fl_schur_create: A->rowptr spans [%d, %d], expected [0, %d]",
                     (int)A->rowptr[0], (int)A->rowptr[n], (int)A->nnz);
  for (fl_int i = 0; i < n; i++) {
    if (A->rowptr[i + 1] < A->rowptr[i])
      return fl_seterr(FL_ERR_INVAL, "fl_schur_create: A->rowptr decreases at row %d", (int)i);
    for (fl_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
      if (A->col[k] < 0 || A->col[k] >= n)
        return fl_seterr(FL_ERR_INVAL, "fl_schur_create: A row %d has column %d, outside [0, %d)",
                         (int)i, (int)A->col[k], (int)n);
  }
  if (np < 0 || np > n)
    return fl_seterr(FL_ERR_INVAL, "fl_schur_create: np = %d, expected 0 <= np <= n = %d",
                     (int)np, (int)n);
  if (np > 0 && !p) return fl_seterr(FL_ERR_INVAL, "fl_schur_create: p is NULL with np = %d", (int)np);
  for (fl_int k = 0; k < np; k++) {
    if (p[k] < 0 || p[k] >= n)
      return fl_seterr(FL_ERR_INVAL, "fl_schur_create: p[%d] = %d, outside [0, %d)", (int)k,
                       (int)p[k], (int)n);
    if (k > 0 && p[k] <= p[k - 1])
      return fl_seterr(FL_ERR_INVAL,
                       "fl_schur_create: p not strictly ascending (p[%d] = %d, p[%d] = %d)",
                       (int)(k - 1), (int)p[k - 1], (int)k, (int)p[k]);
  }
  return FL_OK;
}


/* one constrained ordering and its symbolic analysis. cmem (n, NULL when np is 0 or n) is 0 on
 * non-participating rows and 1 on participating ones. method 0: CAMD with these two constraint
 * sets; method 1: METIS nested dissection. Either is followed by a stable partition, non-
 * participating rows first (a no-op after CAMD, kept as a guarantee that does not depend on
 * how CAMD treats dense rows). CHOLMOD then analyzes with the ordering as given and no
 * postorder. Returns the symbolic factor (Common->fl, ->lnz describe it) or NULL with an
 * FL_ERR_* set. */
static cholmod_factor *schur_analyze(fl_schur *s, cholmod_sparse *W, const int *cmem,
                                     int method) {
  fl_int n = s->n;
  int *perm = fl_malloc((size_t)n * sizeof(int)), *tmp = fl_malloc((size_t)n * sizeof(int));
  if (!perm || !tmp) {
    fl_free(perm);
    fl_free(tmp);
    fl_seterr(FL_ERR_NOMEM, "fl_schur_create: out of memory (ordering)");
    return NULL;
  }
  int ok = method == 0 ? cholmod_camd(W, NULL, 0, (int *)cmem, perm, &s->cc)
                       : cholmod_metis(W, NULL, 0, 1, perm, &s->cc);
  cholmod_factor *L = NULL;
  if (!ok) {
    schur_cmerr(&s->cc, method == 0 ? "cholmod_camd" : "cholmod_metis");
  } else {
    if (cmem) {
      fl_int at = 0;
      for (int set = 0; set < 2; set++)
        for (fl_int k = 0; k < n; k++)
          if (cmem[perm[k]] == set) tmp[at++] = perm[k];
      memcpy(perm, tmp, (size_t)n * sizeof(int));
    }
    s->cc.nmethods = 1;
    s->cc.method[0].ordering = CHOLMOD_GIVEN;
    s->cc.postorder = 0;
    s->cc.supernodal = CHOLMOD_AUTO;
    L = cholmod_analyze_p(W, perm, NULL, 0, &s->cc);
    if (!L) schur_cmerr(&s->cc, "cholmod_analyze_p");
  }
  fl_free(perm);
  fl_free(tmp);
  return L;
}


/* S = L22 L22^T in the order of p, from the trailing columns of the simplicial LL^T */
static int schur_form(fl_schur *s, const fl_int *p) {
  fl_int n = s->n, np = s->np, m = n - np;
  const cholmod_factor *L = s->L;
  const int *Lp = L->p, *Li = L->i, *Lnz = L->nz, *Perm = L->Perm;
  const double *Lx = L->x;
  size_t nn = (size_t)np * (size_t)np;
  s->S = fl_malloc(nn * sizeof(double));
  s->pos = fl_malloc((size_t)np * sizeof(fl_int));
  double *T = fl_calloc(nn, sizeof(double));
  fl_int *where = fl_malloc((size_t)n * sizeof(fl_int));
  if (!s->S || !s->pos || !T || !where) {
    fl_free(T);
    fl_free(where);
    return fl_seterr(FL_ERR_NOMEM, "fl_schur_create: out of memory (S is %d x %d)", (int)np,
                     (int)np);
  }
  // trailing row a -> index in p (where[] is -1 off p)
  for (fl_int i = 0; i < n; i++) where[i] = -1;
  for (fl_int k = 0; k < np; k++) where[p[k]] = k;
  for (fl_int a = 0; a < np; a++) s->pos[a] = where[Perm[m + a]];
  fl_free(where);
  // L22 into a dense lower triangle T (row-major): T[a][b] = L(m + a, m + b), a >= b
  for (fl_int j = m; j < n; j++)
    for (int q = Lp[j]; q < Lp[j] + Lnz[j]; q++)
      T[(size_t)(Li[q] - m) * (size_t)np + (size_t)(j - m)] = Lx[q];
  // S[pos a][pos b] = sum_{k <= b} T[a][k] T[b][k] for a >= b, mirrored
  for (fl_int a = 0; a < np; a++) {
    const double *ta = T + (size_t)a * (size_t)np;
    for (fl_int b = 0; b <= a; b++) {
      const double *tb = T + (size_t)b * (size_t)np;
      double sum = 0;
      for (fl_int k = 0; k <= b; k++) sum += ta[k] * tb[k];
      s->S[(size_t)s->pos[a] * (size_t)np + (size_t)s->pos[b]] = sum;
      s->S[(size_t)s->pos[b] * (size_t)np + (size_t)s->pos[a]] = sum;
    }
  }
  fl_free(T);
  return FL_OK;
}


static int schur_numeric(fl_schur *s, cholmod_sparse *Wp, const fl_int *p);


static int schur_setup(fl_schur *s, const fl_csr *A, const fl_int *p) {
  fl_int n = s->n, np = s->np, m = n - np;
  if (!cholmod_start(&s->cc)) return schur_cmerr(&s->cc, "cholmod_start");
  s->started = 1;
  schur_common(&s->cc);
  cholmod_sparse W;
  schur_wrap(A, &W);

  // constrained ordering: CAMD; when its fill is high by CHOLMOD's own rule for trying METIS
  // (flops / nnz(L) >= 500 and nnz(L) / nnz(tril A) >= 5, as in cholmod_analyze), also METIS
  // nested dissection with p moved last, keeping the ordering with fewer flops (3D meshes of
  // 1e5 DoFs: about 2.4x fewer)
  int *cmem = NULL;
  if (np > 0 && np < n) {
    cmem = fl_calloc((size_t)n, sizeof(int));
    if (!cmem) return fl_seterr(FL_ERR_NOMEM, "fl_schur_create: out of memory (ordering)");
    for (fl_int k = 0; k < np; k++) cmem[p[k]] = 1;
  }
  s->L = schur_analyze(s, &W, cmem, 0);
  if (!s->L) {
    fl_free(cmem);
    return fl_errcode();
  }
  double fl0 = s->cc.fl, lnz0 = s->cc.lnz, anz = (double)A->nnz * 0.5 + 0.5 * (double)n;
  if (fl0 >= 500 * lnz0 && lnz0 >= 5 * anz) {
    cholmod_factor *L1 = schur_analyze(s, &W, cmem, 1);
    if (!L1 && fl_errcode() == FL_ERR_NOMEM) {
      fl_free(cmem);
      return FL_ERR_NOMEM;
    }
    // a METIS failure other than memory just leaves CAMD's ordering
    if (!L1) fl_clearerr();
    if (L1 && s->cc.fl < fl0) {
      cholmod_free_factor(&s->L, &s->cc);
      s->L = L1;
    } else {
      cholmod_free_factor(&L1, &s->cc);
    }
  }
  fl_free(cmem);

  // the factor's permutation must end with exactly p's set
  if (np > 0 && np < n) {
    unsigned char *inp = fl_calloc((size_t)n, 1);
    if (!inp) return fl_seterr(FL_ERR_NOMEM, "fl_schur_create: out of memory");
    for (fl_int k = 0; k < np; k++) inp[p[k]] = 1;
    const int *Perm = s->L->Perm;
    fl_int bad = -1;
    for (fl_int k = 0; k < n && bad < 0; k++)
      if (inp[Perm[k]] != (k >= m)) bad = k;
    fl_free(inp);
    if (bad >= 0)
      return fl_seterr(FL_ERR_LIBRARY,
                       "fl_schur_create: CHOLMOD's permutation breaks the constraint (position "
                       "%d holds row %d)",
                       (int)bad, ((const int *)s->L->Perm)[bad]);
  }

  // keep the symbolic factor and the structure it belongs to for fl_schur_refactor
  s->Lsym = cholmod_copy_factor(s->L, &s->cc);
  s->nnz = A->nnz;
  s->rowptr = fl_malloc((size_t)(n + 1) * sizeof(fl_int));
  s->col = fl_malloc((size_t)(A->nnz > 0 ? A->nnz : 1) * sizeof(fl_int));
  s->p = fl_malloc((size_t)(np > 0 ? np : 1) * sizeof(fl_int));
  if (!s->Lsym || !s->rowptr || !s->col || !s->p)
    return fl_seterr(FL_ERR_NOMEM, "fl_schur_create: out of memory (symbolic factor)");
  memcpy(s->rowptr, A->rowptr, (size_t)(n + 1) * sizeof(fl_int));
  if (A->nnz > 0) memcpy(s->col, A->col, (size_t)A->nnz * sizeof(fl_int));
  if (np > 0) memcpy(s->p, p, (size_t)np * sizeof(fl_int));
  return schur_numeric(s, &W, p);
}


/* The numeric part: factorizes W with s->L (symbolic), converts the factor to simplicial,
 * packed, monotonic LL^T and forms S. */
static int schur_numeric(fl_schur *s, cholmod_sparse *Wp, const fl_int *p) {
  fl_int n = s->n, np = s->np;
  // numeric factorization; the result converted to simplicial, packed, monotonic LL^T
  s->cc.final_asis = 0;
  s->cc.final_super = 0;
  s->cc.final_ll = 1;
  s->cc.final_pack = 1;
  s->cc.final_monotonic = 1;
  int ok = cholmod_factorize(Wp, s->L, &s->cc);
  if (!ok || s->cc.status < CHOLMOD_OK) return schur_cmerr(&s->cc, "cholmod_factorize");
  if (s->cc.status == CHOLMOD_NOT_POSDEF || s->L->minor < (size_t)n) {
    size_t k = s->L->minor < (size_t)n ? s->L->minor : 0;
    return fl_seterr(FL_ERR_NOT_SPD,
                     "fl_schur_create: A (n = %d) is not positive definite: the Cholesky pivot "
                     "of row/column %d of A (position %d of the ordering) is not positive",
                     (int)n, ((const int *)s->L->Perm)[k], (int)k);
  }
  if (s->L->is_super || !s->L->is_ll || !s->L->is_monotonic ||
      s->L->xtype != CHOLMOD_REAL) {
    if (!cholmod_change_factor(CHOLMOD_REAL, 1, 0, 1, 1, s->L, &s->cc))
      return schur_cmerr(&s->cc, "cholmod_change_factor");
  }

  // the dense Schur complement from L22
  if (np > 0) FL_TRY(schur_form(s, p));
  return FL_OK;
}


int fl_schur_create(const fl_csr *A, fl_int np, const fl_int *p, fl_schur **out) {
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_schur_create: out is NULL");
  *out = NULL;
  FL_TRY(schur_check(A, np, p));
  fl_schur *s = fl_calloc(1, sizeof(*s));
  if (!s) return fl_seterr(FL_ERR_NOMEM, "fl_schur_create: out of memory");
  s->n = A->nrow;
  s->np = np;
  int rc = schur_setup(s, A, p);
  if (rc < 0) {
    fl_schur_free(s);
    return rc;
  }
  *out = s;
  return FL_OK;
}


int fl_schur_refactor(fl_schur *s, const fl_csr *A, fl_int np, const fl_int *p) {
  if (!s || !s->Lsym || !A || !A->rowptr) return 0;
  if (A->nrow != s->n || A->ncol != s->n || A->nnz != s->nnz || np != s->np) return 0;
  if (np > 0 && (!p || memcmp(p, s->p, (size_t)np * sizeof(fl_int)) != 0)) return 0;
  if (memcmp(A->rowptr, s->rowptr, (size_t)(s->n + 1) * sizeof(fl_int)) != 0) return 0;
  if (A->nnz > 0 && memcmp(A->col, s->col, (size_t)A->nnz * sizeof(fl_int)) != 0) return 0;
  // the same structure: a fresh numeric factor on the kept symbolic one
  fl_free(s->S);
  fl_free(s->pos);
  s->S = NULL;
  s->pos = NULL;
  cholmod_free_factor(&s->L, &s->cc);
  s->L = cholmod_copy_factor(s->Lsym, &s->cc);
  if (!s->L) return fl_seterr(FL_ERR_NOMEM, "fl_schur_refactor: out of memory (factor)");
  cholmod_sparse W;
  schur_wrap(A, &W);
  int rc = schur_numeric(s, &W, p);
  return rc < 0 ? rc : 1;
}


const double *fl_schur_matrix(const fl_schur *s) { return s ? s->S : NULL; }


fl_int fl_schur_np(const fl_schur *s) { return s ? s->np : 0; }


int fl_schur_perm(const fl_schur *s, fl_int *perm) {
  if (!s || !perm) return fl_seterr(FL_ERR_INVAL, "fl_schur_perm: NULL argument");
  const int *Perm = s->L->Perm;
  for (fl_int k = 0; k < s->n; k++) perm[k] = Perm[k];
  return FL_OK;
}


//---- solves ----

/* x = op^-1 b with a private Common (CHOLMOD_A: A^-1 with the permutation; CHOLMOD_Lt: L^-T in
 * the permuted ordering); b is read before x is written */
static int schur_solve_op(const fl_schur *s, int sys, double *b, double *x, const char *what) {
  cholmod_common cc;
  if (!cholmod_start(&cc)) return schur_cmerr(&cc, "cholmod_start");
  schur_common(&cc);
  cholmod_dense B, *X = NULL;
  schur_dense(s->n, b, &B);
  /* the factor is only read by a solve; CHOLMOD's prototype is not const */
  X = cholmod_solve(sys, (cholmod_factor *)s->L, &B, &cc);
  int rc = FL_OK;
  if (!X)
    rc = schur_cmerr(&cc, what);
  else
    memcpy(x, X->x, (size_t)s->n * sizeof(double));
  cholmod_free_dense(&X, &cc);
  cholmod_finish(&cc);
  return rc;
}


int fl_schur_solve(const fl_schur *s, const double *b, double *x) {
  if (!s || !b || !x) return fl_seterr(FL_ERR_INVAL, "fl_schur_solve: NULL argument");
  /* CHOLMOD reads B only, through a non-const pointer */
  return schur_solve_op(s, CHOLMOD_A, (double *)b, x, "fl_schur_solve: cholmod_solve");
}


int fl_schur_recover(const fl_schur *s, const double *dv_p, double *dv) {
  if (!s || !dv || (s->np > 0 && !dv_p))
    return fl_seterr(FL_ERR_INVAL, "fl_schur_recover: NULL argument");
  fl_int n = s->n, np = s->np, m = n - np;
  if (np == 0) {
    memset(dv, 0, (size_t)n * sizeof(double));
    return FL_OK;
  }
  double *w = fl_malloc(((size_t)n + (size_t)np) * sizeof(double));
  if (!w) return fl_seterr(FL_ERR_NOMEM, "fl_schur_recover: out of memory");
  double *y = w + n;
  const cholmod_factor *L = s->L;
  const int *Lp = L->p, *Li = L->i, *Lnz = L->nz, *Perm = L->Perm;
  const double *Lx = L->x;
  // y = dv_p in the trailing (permuted) order
  for (fl_int a = 0; a < np; a++) y[a] = dv_p[s->pos[a]];
  int rc = FL_OK;
  if (m > 0) {
    // w = [-L21^T y; 0], then L^T u = w gives u1 = -L11^-T L21^T y = -A_nn^-1 A_np y and
    // u2 = 0 exactly (back substitution of zeros)
    for (fl_int j = 0; j < m; j++) {
      double sum = 0;
      for (int q = Lp[j]; q < Lp[j] + Lnz[j]; q++)
        if (Li[q] >= m) sum += Lx[q] * y[Li[q] - m];
      w[j] = -sum;
    }
    memset(w + m, 0, (size_t)np * sizeof(double));
    rc = schur_solve_op(s, CHOLMOD_Lt, w, w, "fl_schur_recover: cholmod_solve");
  }
  // dv = P^T [u1; y]
  if (rc == FL_OK) {
    for (fl_int k = 0; k < m; k++) dv[Perm[k]] = w[k];
    for (fl_int a = 0; a < np; a++) dv[Perm[m + a]] = y[a];
  }
  fl_free(w);
  return rc;
}

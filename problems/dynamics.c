// SPDX-License-Identifier: Apache-2.0
/* dynamics.c: shared operators on A and J (apply A, solve with A, J A^-1, Delassus W).
 *
 * A is block diagonal by clique, so everything works clique by clique:
 *   - small cliques (<= 64 dofs): dense Cholesky of the block (row-major, lower triangle);
 *   - larger cliques (FEM bodies): CHOLMOD supernodal Cholesky with an AMD ordering.
 * Solves with one right-hand side reuse per-clique CHOLMOD workspaces (cholmod_solve2) made at
 * creation, so fl_dynamics_solve_A allocates nothing and may sit inside solver loops.
 *
 * B = J A^-1 is stored by rows: row r of B = A^-1 J_r^T restricted to the cliques that row r
 * of J touches (nonzero entries), i.e. every dof of those cliques. W = J A^-1 J^T follows from
 * sparse dot products W_rs = J_r . B_s over the pairs of rows sharing a clique; each entry is
 * averaged with its transpose so that W is symmetric to the last bit.
 *
 * Not thread-safe: solves share per-clique workspaces.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cholmod.h>

#include "fl_problem.h"
#include "fl_rig6.h"

#define DENSE_MAX 64 /* largest clique factorized densely */
#define BATCH 32     /* right-hand sides per CHOLMOD solve when forming J A^-1 */

struct fl_dynamics {
  const fl_problem *p;
  fl_int ncl, nv, nrow;
  fl_int *loc;       /* (nv) index of a dof within its clique */
  fl_int *dense_off; /* (ncl) offset of the clique's dense factor in Ld, -1 for CHOLMOD */
  double *Ld;        /* dense factors, n^2 per dense clique */
  double *work;      /* (nv) gather/scatter buffer */
  /* CHOLMOD cliques */
  cholmod_common *cm;
  cholmod_factor **L;  /* (ncl) NULL for dense cliques */
  cholmod_dense **B1, **X1, **Y1, **E1; /* (ncl) one-column workspaces */
  /* J A^-1 and the row/clique incidence */
  fl_int *rc_ptr, *rc;  /* (nrow + 1), cliques touched by each row of J (ascending) */
  fl_int *cr_ptr, *cr;  /* (ncl + 1), rows touching each clique (ascending) */
  fl_int *cr_k;         /* (rc_ptr[nrow]) incidence index k (into rc) of each entry of cr */
  fl_csr *B;            /* J A^-1, lazily */
  fl_int *boff;         /* (rc_ptr[nrow]) position in B of the first entry of incidence k; its
                           clique's dofs follow contiguously in clique order (B_contig) */
  int B_contig;         /* every row of B is its cliques' dofs concatenated in ascending order */
  unsigned char *rig6;  /* (ncl) 1 where the clique's dense factor has a rigid body's zeros
                           (mass block diagonal, no mass-inertia coupling): fl_rig6_solve */
};


/* test hook: 0 forms J A^-1 of every clique by the batches alone (tests/test_box_pile.c
 * compares both ways to the bit) */
extern int fl__dyn_rows;
int fl__dyn_rows = 1;


//---- creation ----

void fl_dynamics_free(fl_dynamics *d) {
  if (!d) return;
  if (d->cm) {
    for (fl_int c = 0; c < d->ncl; c++) {
      if (d->L && d->L[c]) cholmod_free_factor(&d->L[c], d->cm);
      if (d->B1 && d->B1[c]) cholmod_free_dense(&d->B1[c], d->cm);
      if (d->X1 && d->X1[c]) cholmod_free_dense(&d->X1[c], d->cm);
      if (d->Y1 && d->Y1[c]) cholmod_free_dense(&d->Y1[c], d->cm);
      if (d->E1 && d->E1[c]) cholmod_free_dense(&d->E1[c], d->cm);
    }
    cholmod_finish(d->cm);
    fl_free(d->cm);
  }
  fl_free(d->L);
  fl_free(d->B1);
  fl_free(d->X1);
  fl_free(d->Y1);
  fl_free(d->E1);
  fl_free(d->loc);
  fl_free(d->dense_off);
  fl_free(d->Ld);
  fl_free(d->work);
  fl_free(d->rc_ptr);
  fl_free(d->rc);
  fl_free(d->cr_ptr);
  fl_free(d->cr);
  fl_free(d->cr_k);
  fl_free(d->boff);
  fl_free(d->rig6);
  fl_csr_free(d->B);
  fl_free(d);
}


/* CHOLMOD factorization of clique c (lower triangle, AMD, supernodal) plus its workspaces */
static int factor_sparse(fl_dynamics *d, fl_int c) {
  const fl_problem *p = d->p;
  const fl_csr *A = p->A;
  fl_int c0 = p->clique_ptr[c], n = p->clique_ptr[c + 1] - c0;
  cholmod_common *cm = d->cm;

  // lower triangle in CSC: column j of A = row j of its CSR, keep rows i >= j
  size_t nnz = 0;
  for (fl_int k = 0; k < n; k++) {
    fl_int r = p->clique_dof[c0 + k];
    for (fl_int e = A->rowptr[r]; e < A->rowptr[r + 1]; e++) nnz += A->col[e] >= r;
  }
  cholmod_sparse *S = cholmod_allocate_sparse((size_t)n, (size_t)n, nnz, 1, 1, -1, CHOLMOD_REAL, cm);
  if (!S) return fl_seterr(FL_ERR_NOMEM, "%s: CHOLMOD could not allocate clique %d", p->name, (int)c);
  int *Sp = S->p, *Si = S->i;
  double *Sx = S->x;
  size_t w = 0;
  for (fl_int k = 0; k < n; k++) {
    fl_int r = p->clique_dof[c0 + k];
    Sp[k] = (int)w;
    for (fl_int e = A->rowptr[r]; e < A->rowptr[r + 1]; e++) {
      if (A->col[e] < r) continue;
      Si[w] = (int)d->loc[A->col[e]];
      Sx[w++] = A->val[e];
    }
  }
  Sp[n] = (int)w;

  // analyze (AMD) and factorize
  cholmod_factor *L = cholmod_analyze(S, cm);
  if (!L) {
    cholmod_free_sparse(&S, cm);
    return fl_seterr(FL_ERR_LIBRARY, "%s: CHOLMOD analysis of clique %d failed (status %d)",
                     p->name, (int)c, cm->status);
  }
  cholmod_factorize(S, L, cm);
  cholmod_free_sparse(&S, cm);
  d->L[c] = L;
  if (cm->status == CHOLMOD_NOT_POSDEF || L->minor < L->n) {
    return fl_seterr(FL_ERR_NOT_SPD, "%s: block of A for clique %d (%d dofs) is not SPD (pivot %d)",
                     p->name, (int)c, (int)n, (int)L->minor);
  }
  if (cm->status < CHOLMOD_OK) {
    return fl_seterr(FL_ERR_LIBRARY, "%s: CHOLMOD factorization of clique %d failed (status %d)",
                     p->name, (int)c, cm->status);
  }

  // one-column workspaces, allocated by a first solve so that later solves allocate nothing
  d->B1[c] = cholmod_zeros((size_t)n, 1, CHOLMOD_REAL, cm);
  if (!d->B1[c] ||
      !cholmod_solve2(CHOLMOD_A, L, d->B1[c], NULL, &d->X1[c], NULL, &d->Y1[c], &d->E1[c], cm)) {
    return fl_seterr(FL_ERR_NOMEM, "%s: CHOLMOD workspace for clique %d", p->name, (int)c);
  }
  return FL_OK;
}


/* which cliques each row of J touches (nonzero entries), and the transpose; one pass over J
 * into arrays sized by its entries (an upper bound on the incidences) */
static int incidence(fl_dynamics *d) {
  const fl_problem *p = d->p;
  const fl_csr *J = p->J;
  fl_int nrow = d->nrow, ncl = d->ncl, jn = J->rowptr[nrow];
  d->rc_ptr = fl_calloc((size_t)nrow + 1, sizeof(fl_int));
  d->cr_ptr = fl_calloc((size_t)ncl + 1, sizeof(fl_int));
  d->rc = fl_malloc(((size_t)jn + 1) * sizeof(fl_int));
  d->cr = fl_malloc(((size_t)jn + 1) * sizeof(fl_int));
  fl_int *last = fl_malloc(((size_t)ncl + 1) * sizeof(fl_int));
  if (!d->rc_ptr || !d->cr_ptr || !d->rc || !d->cr || !last) {
    fl_free(last);
    return fl_seterr(FL_ERR_NOMEM, "%s: no memory for the row/clique incidence", p->name);
  }
  for (fl_int c = 0; c < ncl; c++) last[c] = -1;
  fl_int w = 0;
  for (fl_int r = 0; r < nrow; r++) {
    fl_int start = w;
    for (fl_int k = J->rowptr[r]; k < J->rowptr[r + 1]; k++) {
      if (J->col[k] < 0 || J->col[k] >= d->nv) {
        fl_free(last);
        return fl_seterr(FL_ERR_FORMAT, "%s: J has a column index %d outside [0, %d)", p->name,
                         (int)J->col[k], (int)d->nv);
      }
      if (J->val[k] == 0.0) continue;
      fl_int c = p->dof_clique[J->col[k]];
      if (last[c] == r) continue;
      last[c] = r;
      d->rc[w++] = c;
    }
    // few cliques per row: insertion sort keeps them ascending
    for (fl_int a = start + 1; a < w; a++) {
      fl_int v = d->rc[a], b = a - 1;
      while (b >= start && d->rc[b] > v) {
        d->rc[b + 1] = d->rc[b];
        b--;
      }
      d->rc[b + 1] = v;
    }
    d->rc_ptr[r + 1] = w;
  }
  fl_free(last);

  // transpose: rows per clique, ascending because rows are visited in order
  for (fl_int k = 0; k < d->rc_ptr[nrow]; k++) d->cr_ptr[d->rc[k] + 1]++;
  for (fl_int c = 0; c < ncl; c++) d->cr_ptr[c + 1] += d->cr_ptr[c];
  fl_int *next = fl_malloc(((size_t)ncl + 1) * sizeof(fl_int));
  d->cr_k = fl_malloc(((size_t)d->rc_ptr[nrow] + 1) * sizeof(fl_int));
  if (!next || !d->cr_k) {
    fl_free(next);
    return fl_seterr(FL_ERR_NOMEM, "%s: no memory for the row/clique incidence", p->name);
  }
  memcpy(next, d->cr_ptr, (size_t)ncl * sizeof(fl_int));
  for (fl_int r = 0; r < nrow; r++) {
    for (fl_int k = d->rc_ptr[r]; k < d->rc_ptr[r + 1]; k++) {
      fl_int e = next[d->rc[k]]++;
      d->cr[e] = r;
      d->cr_k[e] = k;
    }
  }
  fl_free(next);
  return FL_OK;
}


int fl_dynamics_create(const fl_problem *p, fl_dynamics **out) {
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_dynamics_create: out is NULL");
  *out = NULL;
  if (!p) return fl_seterr(FL_ERR_INVAL, "fl_dynamics_create: problem is NULL");
  if (p->kind != FL_PROBLEM_GLOBAL || !p->A || !p->J) {
    return fl_seterr(FL_ERR_UNSUPPORTED,
                     "%s: shared operators on A need a global problem (this one has only W, q)",
                     p->name);
  }
  if (p->nv > 0 && p->ncl == 0) {
    return fl_seterr(FL_ERR_STATE, "%s: no cliques; call fl_problem_find_cliques first", p->name);
  }
  fl_int nv = p->nv, ncl = p->ncl, nrow = fl_problem_nrows(p);
  if (p->A->nrow != nv || p->A->ncol != nv || p->J->nrow != nrow || p->J->ncol != nv) {
    return fl_seterr(FL_ERR_FORMAT, "%s: A is %d x %d and J %d x %d, expected %d x %d and %d x %d",
                     p->name, (int)p->A->nrow, (int)p->A->ncol, (int)p->J->nrow,
                     (int)p->J->ncol, (int)nv, (int)nv, (int)nrow, (int)nv);
  }
  // indices in range (fl_problem_validate checks more; this keeps bad data from crashing)
  for (fl_int k = 0; k < p->A->rowptr[nv]; k++) {
    if (p->A->col[k] < 0 || p->A->col[k] >= nv) {
      return fl_seterr(FL_ERR_FORMAT, "%s: A has a column index %d outside [0, %d)", p->name,
                       (int)p->A->col[k], (int)nv);
    }
  }
  // (J's column indices: checked where incidence first reads them)
  for (fl_int d = 0; d < nv; d++) {
    if (p->dof_clique[d] < 0 || p->dof_clique[d] >= ncl) {
      return fl_seterr(FL_ERR_FORMAT, "%s: dof %d has clique %d outside [0, %d)", p->name, (int)d,
                       (int)p->dof_clique[d], (int)ncl);
    }
  }
  fl_dynamics *d = fl_calloc(1, sizeof(*d));
  if (!d) return fl_seterr(FL_ERR_NOMEM, "%s: no memory for the dynamics", p->name);
  d->p = p;
  d->nv = nv;
  d->ncl = ncl;
  d->nrow = nrow;
  int rc = FL_OK;

  // local indices and the size of the dense factors
  d->loc = fl_malloc(((size_t)nv + 1) * sizeof(fl_int));
  d->dense_off = fl_malloc(((size_t)ncl + 1) * sizeof(fl_int));
  d->work = fl_malloc(((size_t)nv + 1) * sizeof(double));
  d->L = fl_calloc((size_t)ncl + 1, sizeof(cholmod_factor *));
  d->B1 = fl_calloc((size_t)ncl + 1, sizeof(cholmod_dense *));
  d->X1 = fl_calloc((size_t)ncl + 1, sizeof(cholmod_dense *));
  d->Y1 = fl_calloc((size_t)ncl + 1, sizeof(cholmod_dense *));
  d->E1 = fl_calloc((size_t)ncl + 1, sizeof(cholmod_dense *));
  d->rig6 = fl_calloc((size_t)ncl + 1, 1);
  if (!d->loc || !d->dense_off || !d->work || !d->L || !d->B1 || !d->X1 || !d->Y1 || !d->E1 ||
      !d->rig6) {
    fl_dynamics_free(d);
    return fl_seterr(FL_ERR_NOMEM, "%s: no memory for the dynamics", p->name);
  }
  size_t nd = 0;
  int any_sparse = 0;
  for (fl_int c = 0; c < ncl; c++) {
    fl_int c0 = p->clique_ptr[c], n = p->clique_ptr[c + 1] - c0;
    for (fl_int k = 0; k < n; k++) d->loc[p->clique_dof[c0 + k]] = k;
    if (n <= DENSE_MAX) {
      d->dense_off[c] = (fl_int)nd;
      nd += (size_t)n * (size_t)n;
    } else {
      d->dense_off[c] = -1;
      any_sparse = 1;
    }
  }

  // A must not couple cliques (the solves would ignore such entries)
  for (fl_int r = 0; r < nv && rc == FL_OK; r++) {
    for (fl_int k = p->A->rowptr[r]; k < p->A->rowptr[r + 1]; k++) {
      fl_int col = p->A->col[k];
      if (p->A->val[k] != 0.0 && p->dof_clique[col] != p->dof_clique[r]) {
        rc = fl_seterr(FL_ERR_FORMAT, "%s: A(%d, %d) couples cliques %d and %d", p->name, (int)r,
                       (int)col, (int)p->dof_clique[r], (int)p->dof_clique[col]);
        break;
      }
    }
  }

  // dense factors
  d->Ld = fl_calloc(nd > 0 ? nd : 1, sizeof(double));
  if (rc == FL_OK && !d->Ld) rc = fl_seterr(FL_ERR_NOMEM, "%s: no memory for dense factors", p->name);
  for (fl_int c = 0; c < ncl && rc == FL_OK; c++) {
    if (d->dense_off[c] < 0) continue;
    fl_int c0 = p->clique_ptr[c], n = p->clique_ptr[c + 1] - c0;
    double *Lc = d->Ld + d->dense_off[c];
    for (fl_int k = 0; k < n; k++) {
      fl_int r = p->clique_dof[c0 + k];
      for (fl_int e = p->A->rowptr[r]; e < p->A->rowptr[r + 1]; e++) {
        Lc[k * n + d->loc[p->A->col[e]]] = p->A->val[e];
      }
    }
    if (fl_chol_factor(Lc, (int)n) < 0) {
      rc = fl_seterr(FL_ERR_NOT_SPD, "%s: block of A for clique %d (%d dofs) is not SPD", p->name,
                     (int)c, (int)n);
    } else if (n == 6) {
      int z = Lc[6] == 0.0 && Lc[12] == 0.0 && Lc[13] == 0.0;
      for (int i = 3; i < 6; i++)
        for (int k = 0; k < 3; k++) z = z && Lc[6 * i + k] == 0.0;
      d->rig6[c] = (unsigned char)z;
    }
  }

  // CHOLMOD factors
  if (rc == FL_OK && any_sparse) {
    d->cm = fl_malloc(sizeof(cholmod_common));
    if (!d->cm) {
      rc = fl_seterr(FL_ERR_NOMEM, "%s: no memory for CHOLMOD", p->name);
    } else {
      cholmod_start(d->cm);
      d->cm->print = 0; /* errors come back through cm->status */
      d->cm->nmethods = 1;
      d->cm->method[0].ordering = CHOLMOD_AMD;
      d->cm->postorder = 1;
      d->cm->supernodal = CHOLMOD_SUPERNODAL;
      for (fl_int c = 0; c < ncl && rc == FL_OK; c++) {
        if (d->dense_off[c] < 0) rc = factor_sparse(d, c);
      }
    }
  }
  if (rc == FL_OK) rc = incidence(d);
  if (rc != FL_OK) {
    fl_dynamics_free(d);
    return rc;
  }
  *out = d;
  return FL_OK;
}


//---- apply and solve ----

void fl_dynamics_apply_A(const fl_dynamics *d, const double *x, double *y) {
  fl_csr_gemv(d->p->A, 1.0, x, 0.0, y);
}


/* fl_chol_solve for n = 6 (a rigid body's clique), the same operations in the same order with
 * the loop bounds known to the compiler: identical results, a third of the instructions */
static inline void chol_solve6(const double *L, double *b) {
  for (int i = 0; i < 6; i++) {
    double s = b[i];
    for (int k = 0; k < i; k++) s -= L[i * 6 + k] * b[k];
    b[i] = s / L[i * 6 + i];
  }
  for (int i = 5; i >= 0; i--) {
    double s = b[i];
    for (int k = i + 1; k < 6; k++) s -= L[k * 6 + i] * b[k];
    b[i] = s / L[i * 6 + i];
  }
}


/* solves A_c x_c = y_c in place on the clique-local vector b (length n) */
static void solve_clique(const fl_dynamics *d, fl_int c, double *b) {
  const fl_problem *p = d->p;
  fl_int n = p->clique_ptr[c + 1] - p->clique_ptr[c];
  if (d->dense_off[c] >= 0) {
    if (n == 6)
      chol_solve6(d->Ld + d->dense_off[c], b);
    else
      fl_chol_solve(d->Ld + d->dense_off[c], (int)n, b);
    return;
  }
  double *bx = d->B1[c]->x;
  memcpy(bx, b, (size_t)n * sizeof(double));
  cholmod_solve2(CHOLMOD_A, d->L[c], d->B1[c], NULL, &d->X1[c], NULL, &d->Y1[c], &d->E1[c], d->cm);
  memcpy(b, d->X1[c]->x, (size_t)n * sizeof(double));
}


void fl_dynamics_solve_A(const fl_dynamics *d, const double *y, double *x) {
  const fl_problem *p = d->p;
  // gather a clique, solve, scatter: cliques are disjoint, so x may alias y
  for (fl_int c = 0; c < d->ncl; c++) {
    fl_int c0 = p->clique_ptr[c], n = p->clique_ptr[c + 1] - c0;
    const fl_int *dof = p->clique_dof + c0;
    for (fl_int k = 0; k < n; k++) d->work[k] = y[dof[k]];
    solve_clique(d, c, d->work);
    for (fl_int k = 0; k < n; k++) x[dof[k]] = d->work[k];
  }
}


//---- J A^-1 ----

static int cmp_int(const void *a, const void *b) {
  fl_int x = *(const fl_int *)a, y = *(const fl_int *)b;
  return (x > y) - (x < y);
}


/* position of column col in row r of m (binary search), -1 if absent */
static fl_int find_pos(const fl_csr *m, fl_int r, fl_int col) {
  fl_int lo = m->rowptr[r], hi = m->rowptr[r + 1] - 1;
  while (lo <= hi) {
    fl_int mid = lo + (hi - lo) / 2;
    if (m->col[mid] == col) return mid;
    if (m->col[mid] < col) {
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return -1;
}


static int build_JAinv(fl_dynamics *d) {
  const fl_problem *p = d->p;
  const fl_csr *J = p->J;
  fl_int nrow = d->nrow;

  // pattern: every dof of every clique the row touches
  long nnz = 0;
  for (fl_int r = 0; r < nrow; r++) {
    for (fl_int k = d->rc_ptr[r]; k < d->rc_ptr[r + 1]; k++) {
      fl_int c = d->rc[k];
      nnz += p->clique_ptr[c + 1] - p->clique_ptr[c];
    }
  }
  if (nnz > INT32_MAX) {
    return fl_seterr(FL_ERR_NOMEM, "%s: J A^-1 would have %ld entries (index type limit)", p->name,
                     nnz);
  }
  // solver workspace, estimated before it is allocated (issue 51, item 5): a value and a column
  // an entry
  FL_TRY(fl_mem_check(p->name, "J A^-1", (double)nnz * (sizeof(double) + sizeof(fl_int))));
  fl_csr *B;
  FL_TRY(fl_csr_alloc(nrow, d->nv, (fl_int)nnz, &B));
  d->boff = fl_malloc(((size_t)d->rc_ptr[nrow] + 1) * sizeof(fl_int));
  if (!d->boff) {
    fl_csr_free(B);
    return fl_seterr(FL_ERR_NOMEM, "%s: no memory for J A^-1", p->name);
  }
  // a row's cliques are ascending and their dofs ascending within each: the concatenation is
  // already sorted unless two cliques' dof ranges interleave (then sort, and locate entries
  // by search)
  d->B_contig = 1;
  fl_int w = 0;
  for (fl_int r = 0; r < nrow; r++) {
    B->rowptr[r] = w;
    int sorted = 1;
    for (fl_int k = d->rc_ptr[r]; k < d->rc_ptr[r + 1]; k++) {
      fl_int c = d->rc[k];
      d->boff[k] = w;
      if (w > B->rowptr[r] && p->clique_ptr[c + 1] > p->clique_ptr[c] &&
          B->col[w - 1] > p->clique_dof[p->clique_ptr[c]])
        sorted = 0;
      fl_int ne = p->clique_ptr[c + 1] - p->clique_ptr[c];
      memcpy(B->col + w, p->clique_dof + p->clique_ptr[c], (size_t)ne * sizeof(fl_int));
      w += ne;
    }
    if (!sorted) {
      d->B_contig = 0;
      qsort(B->col + B->rowptr[r], (size_t)(w - B->rowptr[r]), sizeof(fl_int), cmp_int);
    }
  }
  B->rowptr[nrow] = w;

  // dense cliques, row by row, straight into B (contiguous layout): each right-hand side is
  // the row of J on the clique, summed from +0 as the batches below sum it, then solved in place
  int rows_done = d->B_contig && fl__dyn_rows;
  if (rows_done) {
    for (fl_int r = 0; r < nrow; r++) {
      fl_int k0 = d->rc_ptr[r], k1 = d->rc_ptr[r + 1];
      fl_int j0 = J->rowptr[r], jn = J->rowptr[r + 1] - j0, b0 = B->rowptr[r];
      if (jn == B->rowptr[r + 1] - b0 &&
          !memcmp(J->col + j0, B->col + b0, (size_t)jn * sizeof(fl_int))) {
        // the row of J has B's pattern (whole cliques): entry by entry (+0 + x, as summed)
        for (fl_int e = 0; e < jn; e++) B->val[b0 + e] = 0.0 + J->val[j0 + e];
      } else {
        for (fl_int k = k0; k < k1; k++) {
          fl_int c = d->rc[k];
          if (d->dense_off[c] < 0) continue;
          double *x = B->val + d->boff[k];
          for (fl_int e = 0; e < p->clique_ptr[c + 1] - p->clique_ptr[c]; e++) x[e] = 0.0;
        }
        for (fl_int e = j0; e < j0 + jn; e++) {
          fl_int c = p->dof_clique[J->col[e]], k = k0;
          while (k < k1 && d->rc[k] != c) k++;
          if (k < k1 && d->dense_off[c] >= 0) B->val[d->boff[k] + d->loc[J->col[e]]] += J->val[e];
        }
      }
      for (fl_int k = k0; k < k1; k++) {
        fl_int c = d->rc[k];
        if (d->dense_off[c] < 0) continue;
        double *x = B->val + d->boff[k];
        if (d->rig6[c]) fl_rig6_solve(d->Ld + d->dense_off[c], x);
        else solve_clique(d, c, x);
      }
    }
  }

  // values per clique: A_c^-1 J_r|c^T for batches of the rows touching c
  fl_int maxn = 0;
  for (fl_int c = 0; c < d->ncl; c++) {
    fl_int n = p->clique_ptr[c + 1] - p->clique_ptr[c];
    if (n > maxn) maxn = n;
  }
  double *rhs = fl_malloc(((size_t)maxn * BATCH + 1) * sizeof(double));
  if (!rhs) {
    fl_csr_free(B);
    return fl_seterr(FL_ERR_NOMEM, "%s: no memory for J A^-1", p->name);
  }
  int rc = FL_OK;
  for (fl_int c = 0; c < d->ncl && rc == FL_OK; c++) {
    fl_int c0 = p->clique_ptr[c], n = p->clique_ptr[c + 1] - c0;
    if (rows_done && d->dense_off[c] >= 0) continue;
    for (fl_int k0 = d->cr_ptr[c]; k0 < d->cr_ptr[c + 1] && rc == FL_OK; k0 += BATCH) {
      fl_int nb = d->cr_ptr[c + 1] - k0 < BATCH ? d->cr_ptr[c + 1] - k0 : BATCH;
      // right-hand sides: column j = row cr[k0 + j] of J restricted to the clique
      memset(rhs, 0, (size_t)n * (size_t)nb * sizeof(double));
      for (fl_int j = 0; j < nb; j++) {
        fl_int r = d->cr[k0 + j];
        for (fl_int e = J->rowptr[r]; e < J->rowptr[r + 1]; e++) {
          if (p->dof_clique[J->col[e]] == c) rhs[(size_t)j * n + d->loc[J->col[e]]] += J->val[e];
        }
      }
      // solve
      if (d->dense_off[c] >= 0) {
        for (fl_int j = 0; j < nb; j++) solve_clique(d, c, rhs + (size_t)j * n);
      } else {
        cholmod_dense *Bd = cholmod_allocate_dense((size_t)n, (size_t)nb, (size_t)n, CHOLMOD_REAL, d->cm);
        cholmod_dense *X = NULL;
        if (Bd) {
          memcpy(Bd->x, rhs, (size_t)n * (size_t)nb * sizeof(double));
          X = cholmod_solve(CHOLMOD_A, d->L[c], Bd, d->cm);
        }
        if (X) memcpy(rhs, X->x, (size_t)n * (size_t)nb * sizeof(double));
        if (!Bd || !X) rc = fl_seterr(FL_ERR_LIBRARY, "%s: CHOLMOD solve for clique %d failed", p->name, (int)c);
        cholmod_free_dense(&Bd, d->cm);
        cholmod_free_dense(&X, d->cm);
      }
      // scatter into the rows of B
      for (fl_int j = 0; j < nb && rc == FL_OK; j++) {
        fl_int r = d->cr[k0 + j];
        if (d->B_contig) {
          memcpy(B->val + d->boff[d->cr_k[k0 + j]], rhs + (size_t)j * n, (size_t)n * sizeof(double));
          continue;
        }
        for (fl_int k = 0; k < n; k++) {
          fl_int pos = find_pos(B, r, p->clique_dof[c0 + k]);
          B->val[pos] = rhs[(size_t)j * n + k];
        }
      }
    }
  }
  fl_free(rhs);
  if (rc != FL_OK) {
    fl_csr_free(B);
    return rc;
  }
  d->B = B;
  return FL_OK;
}


const fl_csr *fl_dynamics_JAinv(fl_dynamics *d) {
  if (!d) return NULL;
  if (!d->B && build_JAinv(d) < 0) return NULL;
  return d->B;
}


//---- Delassus operator ----

/* J_r . B_s over the columns they share */
static double dot_rows(const fl_csr *J, fl_int r, const fl_csr *B, fl_int s) {
  double sum = 0.0;
  fl_int a = J->rowptr[r], ae = J->rowptr[r + 1], b = B->rowptr[s], be = B->rowptr[s + 1];
  while (a < ae && b < be) {
    if (J->col[a] == B->col[b]) {
      sum += J->val[a++] * B->val[b++];
    } else if (J->col[a] < B->col[b]) {
      a++;
    } else {
      b++;
    }
  }
  return sum;
}


/* sum of a_k b_k, k = 0..n-1, from +0 in order; two rigid bodies' 12 terms written out */
static inline double dot_n(const double *a, const double *b, fl_int n) {
  double s = 0.0;
  if (n == 12) {
    s += a[0] * b[0];
    s += a[1] * b[1];
    s += a[2] * b[2];
    s += a[3] * b[3];
    s += a[4] * b[4];
    s += a[5] * b[5];
    s += a[6] * b[6];
    s += a[7] * b[7];
    s += a[8] * b[8];
    s += a[9] * b[9];
    s += a[10] * b[10];
    s += a[11] * b[11];
    return s;
  }
  for (fl_int k = 0; k < n; k++) s += a[k] * b[k];
  return s;
}


/* symmetric W_rs = (J_r . B_s + J_s . B_r) / 2 */
static double w_entry(const fl_dynamics *d, fl_int r, fl_int s) {
  const fl_csr *J = d->p->J;
  if (r == s) return dot_rows(J, r, d->B, r);
  return 0.5 * (dot_rows(J, r, d->B, s) + dot_rows(J, s, d->B, r));
}


int fl_dynamics_delassus_blocks(fl_dynamics *d, double *Wc, double *Wh) {
  if (!d) return fl_seterr(FL_ERR_INVAL, "fl_dynamics_delassus_blocks: dynamics is NULL");
  if (!fl_dynamics_JAinv(d)) return fl_errcode() < 0 ? fl_errcode() : FL_ERR_NOMEM;
  const fl_problem *p = d->p;
  const fl_csr *J = p->J, *B = d->B;
  if (Wc) {
    for (fl_int i = 0; i < p->nc; i++) {
      // the three rows of a contact usually have one pattern in J and in B (the dofs of its
      // two bodies): then every dot_rows is a plain dot product over the same columns in the
      // same order, the same sums without the merge
      fl_int r0 = 3 * i, j0 = J->rowptr[r0], n = J->rowptr[r0 + 1] - j0;
      int same = 1;
      for (int a = 0; a < 3 && same; a++) {
        fl_int ja = J->rowptr[r0 + a], ba = B->rowptr[r0 + a];
        if (J->rowptr[r0 + a + 1] - ja != n || B->rowptr[r0 + a + 1] - ba != n) same = 0;
        size_t sz = (size_t)n * sizeof(fl_int);
        if (same && (memcmp(J->col + ja, J->col + j0, sz) || memcmp(B->col + ba, J->col + j0, sz)))
          same = 0;
      }
      if (same) {
        for (int a = 0; a < 3; a++) {
          const double *ja = J->val + J->rowptr[r0 + a], *ba = B->val + B->rowptr[r0 + a];
          for (int b = a; b < 3; b++) {
            const double *jb = J->val + J->rowptr[r0 + b], *bb = B->val + B->rowptr[r0 + b];
            double s1 = dot_n(ja, bb, n);
            if (a == b) {
              Wc[9 * i + 4 * a] = s1;
              continue;
            }
            double s2 = dot_n(jb, ba, n);
            double v = 0.5 * (s1 + s2);
            Wc[9 * i + 3 * a + b] = v;
            Wc[9 * i + 3 * b + a] = v;
          }
        }
        continue;
      }
      for (int a = 0; a < 3; a++) {
        for (int b = a; b < 3; b++) {
          double v = w_entry(d, 3 * i + a, 3 * i + b);
          Wc[9 * i + 3 * a + b] = v;
          Wc[9 * i + 3 * b + a] = v;
        }
      }
    }
  }
  if (Wh) {
    for (fl_int h = 0; h < p->nh; h++) Wh[h] = w_entry(d, 3 * p->nc + h, 3 * p->nc + h);
  }
  return FL_OK;
}


/* out = the sorted union of a (na) and b (nb), both ascending; returns its length */
static fl_int merge_union(const fl_int *a, fl_int na, const fl_int *b, fl_int nb, fl_int *out) {
  fl_int i = 0, j = 0, w = 0;
  while (i < na && j < nb) {
    if (a[i] < b[j]) {
      out[w++] = a[i++];
    } else if (b[j] < a[i]) {
      out[w++] = b[j++];
    } else {
      out[w++] = a[i++];
      j++;
    }
  }
  while (i < na) out[w++] = a[i++];
  while (j < nb) out[w++] = b[j++];
  return w;
}


/* build_W when every row of B holds its cliques' blocks contiguously (B_contig): the pattern of
 * row r is the union of the (ascending) row lists of its cliques, merged without sorting, and
 * J_r . B_s accumulates clique by clique over the entries of J_r in the cliques r and s share,
 * in ascending column order: the same products summed in the same order as dot_rows, so W is
 * the same to the last bit. */
static int build_W_blocks(fl_dynamics *d, fl_int m, const double *Rdiag, fl_csr **out) {
  const fl_problem *p = d->p;
  const fl_csr *J = p->J, *B = d->B;
  long bound = 0;
  fl_int maxj = 0;
  for (fl_int r = 0; r < m; r++) {
    bound++;
    for (fl_int k = d->rc_ptr[r]; k < d->rc_ptr[r + 1]; k++)
      bound += d->cr_ptr[d->rc[k] + 1] - d->cr_ptr[d->rc[k]];
    if (J->rowptr[r + 1] - J->rowptr[r] > maxj) maxj = J->rowptr[r + 1] - J->rowptr[r];
  }
  if (bound > INT32_MAX) {
    return fl_seterr(FL_ERR_NOMEM, "%s: W would have up to %ld entries (index type limit)",
                     p->name, bound);
  }
  // W and its pattern's scratch (a value and two columns an entry), before allocating
  FL_TRY(fl_mem_check(p->name, "the Delassus matrix W = J A^-1 J^T",
                      (double)bound * (sizeof(double) + 2 * sizeof(fl_int))));
  fl_int *cols = fl_malloc(((size_t)bound + 1) * sizeof(fl_int));
  fl_int *rowptr = fl_malloc(((size_t)m + 1) * sizeof(fl_int));
  fl_int *lst = fl_malloc(((size_t)m + 1) * 2 * sizeof(fl_int));
  fl_int *pos = fl_malloc(((size_t)m + 1) * sizeof(fl_int));
  fl_int *cur = fl_malloc(((size_t)m + 1) * sizeof(fl_int));
  fl_int *jl = fl_malloc(((size_t)maxj + 1) * sizeof(fl_int));
  double *jv = fl_malloc(((size_t)maxj + 1) * sizeof(double));
  fl_csr *W = NULL;
  int rc = FL_OK;
  if (!cols || !rowptr || !lst || !pos || !cur || !jl || !jv) {
    rc = fl_seterr(FL_ERR_NOMEM, "%s: no memory for W", p->name);
    goto done;
  }

  // pattern: {r} and the rows (< m) of each clique r touches
  fl_int w = 0;
  for (fl_int r = 0; r < m; r++) {
    rowptr[r] = w;
    fl_int *a = lst, *t = lst + m + 1;
    a[0] = r;
    fl_int na = 1;
    for (fl_int k = d->rc_ptr[r]; k < d->rc_ptr[r + 1]; k++) {
      fl_int c = d->rc[k], e0 = d->cr_ptr[c], e1 = d->cr_ptr[c + 1];
      while (e1 > e0 && d->cr[e1 - 1] >= m) e1--; /* cr is ascending */
      fl_int nt = merge_union(a, na, d->cr + e0, e1 - e0, t);
      fl_int *sw = a;
      a = t;
      t = sw;
      na = nt;
    }
    memcpy(cols + w, a, (size_t)na * sizeof(fl_int));
    w += na;
  }
  rowptr[m] = w;
  rc = fl_csr_alloc(m, m, w, &W);
  if (rc < 0) goto done;
  memcpy(W->rowptr, rowptr, ((size_t)m + 1) * sizeof(fl_int));
  memcpy(W->col, cols, (size_t)w * sizeof(fl_int));

  // a_rs = J_r . B_s into val
  for (fl_int s = 0; s < m; s++) pos[s] = -1;
  for (fl_int r = 0; r < m; r++) {
    for (fl_int e = W->rowptr[r]; e < W->rowptr[r + 1]; e++) {
      pos[W->col[e]] = e;
      W->val[e] = 0.0;
    }
    for (fl_int k = d->rc_ptr[r]; k < d->rc_ptr[r + 1]; k++) {
      fl_int c = d->rc[k], nj = 0;
      for (fl_int e = J->rowptr[r]; e < J->rowptr[r + 1]; e++) {
        if (p->dof_clique[J->col[e]] != c) continue;
        jl[nj] = d->loc[J->col[e]];
        jv[nj++] = J->val[e];
      }
      // a rigid body's six dofs in order (the common case): direct indexing, same sums
      int six = nj == 6;
      for (fl_int q = 0; six && q < 6; q++) six = jl[q] == q;
      for (fl_int e = d->cr_ptr[c]; e < d->cr_ptr[c + 1]; e++) {
        fl_int s = d->cr[e];
        if (s >= m) break;
        const double *bs = B->val + d->boff[d->cr_k[e]];
        double sum = W->val[pos[s]];
        if (six) {
          sum += jv[0] * bs[0];
          sum += jv[1] * bs[1];
          sum += jv[2] * bs[2];
          sum += jv[3] * bs[3];
          sum += jv[4] * bs[4];
          sum += jv[5] * bs[5];
        } else {
          for (fl_int q = 0; q < nj; q++) sum += jv[q] * bs[jl[q]];
        }
        W->val[pos[s]] = sum;
      }
    }
    for (fl_int e = W->rowptr[r]; e < W->rowptr[r + 1]; e++) pos[W->col[e]] = -1;
  }

  // symmetric W_rs = (a_rs + a_sr) / 2; the pattern is symmetric and rows are visited in
  // ascending order, so cur[s] walks row s's entries (s, r), r < s, in step
  for (fl_int s = 0; s < m; s++) cur[s] = W->rowptr[s];
  for (fl_int r = 0; r < m; r++) {
    for (fl_int e = W->rowptr[r]; e < W->rowptr[r + 1]; e++) {
      fl_int s = W->col[e];
      if (s <= r) continue;
      fl_int et = cur[s]++;
      if (W->col[et] != r) {
        rc = fl_seterr(FL_ERR_STATE, "%s: W's pattern is not symmetric at (%d, %d)", p->name,
                       (int)r, (int)s);
        goto done;
      }
      double v = 0.5 * (W->val[e] + W->val[et]);
      W->val[e] = v;
      W->val[et] = v;
    }
    fl_int e = cur[r]; /* the diagonal: every (r, t < r) was consumed above */
    if (e >= W->rowptr[r + 1] || W->col[e] != r) {
      rc = fl_seterr(FL_ERR_STATE, "%s: W's pattern misses (%d, %d)", p->name, (int)r, (int)r);
      goto done;
    }
    cur[r]++;
    if (Rdiag) {
      for (fl_int q = W->rowptr[r]; q < W->rowptr[r + 1]; q++)
        W->val[q] = W->val[q] + (W->col[q] == r ? Rdiag[r] : 0.0);
    }
  }

done:
  fl_free(cols);
  fl_free(rowptr);
  fl_free(lst);
  fl_free(pos);
  fl_free(cur);
  fl_free(jl);
  fl_free(jv);
  if (rc < 0) {
    fl_csr_free(W);
    return rc;
  }
  *out = W;
  return FL_OK;
}


/* W over rows [0, m) (m = nrow or 3 nc) plus diag(Rdiag) if given; the diagonal is always
 * stored. Rows interact when they share a clique. */
static int build_W(fl_dynamics *d, fl_int m, const double *Rdiag, fl_csr **out) {
  *out = NULL;
  if (!fl_dynamics_JAinv(d)) return fl_errcode() < 0 ? fl_errcode() : FL_ERR_NOMEM;
  if (d->B_contig) return build_W_blocks(d, m, Rdiag, out);
  const fl_problem *p = d->p;
  fl_int *mark = fl_malloc(((size_t)m + 1) * sizeof(fl_int));
  if (!mark) return fl_seterr(FL_ERR_NOMEM, "%s: no memory for W", p->name);
  for (fl_int s = 0; s < m; s++) mark[s] = -1;

  // count the neighbours of each row (itself included), then fill and sort them
  long nnz = 0;
  for (fl_int r = 0; r < m; r++) {
    mark[r] = r;
    nnz++;
    for (fl_int k = d->rc_ptr[r]; k < d->rc_ptr[r + 1]; k++) {
      fl_int c = d->rc[k];
      for (fl_int e = d->cr_ptr[c]; e < d->cr_ptr[c + 1]; e++) {
        fl_int s = d->cr[e];
        if (s < m && mark[s] != r) {
          mark[s] = r;
          nnz++;
        }
      }
    }
  }
  if (nnz > INT32_MAX) {
    fl_free(mark);
    return fl_seterr(FL_ERR_NOMEM, "%s: W would have %ld entries (index type limit)", p->name, nnz);
  }
  if (fl_mem_check(p->name, "the Delassus matrix W = J A^-1 J^T",
                   (double)nnz * (sizeof(double) + sizeof(fl_int))) < 0) {
    fl_free(mark);
    return fl_errcode();
  }
  fl_csr *W;
  int rc = fl_csr_alloc(m, m, (fl_int)nnz, &W);
  if (rc < 0) {
    fl_free(mark);
    return rc;
  }
  for (fl_int s = 0; s < m; s++) mark[s] = -1;
  fl_int w = 0;
  for (fl_int r = 0; r < m; r++) {
    W->rowptr[r] = w;
    mark[r] = r;
    W->col[w++] = r;
    for (fl_int k = d->rc_ptr[r]; k < d->rc_ptr[r + 1]; k++) {
      fl_int c = d->rc[k];
      for (fl_int e = d->cr_ptr[c]; e < d->cr_ptr[c + 1]; e++) {
        fl_int s = d->cr[e];
        if (s < m && mark[s] != r) {
          mark[s] = r;
          W->col[w++] = s;
        }
      }
    }
    qsort(W->col + W->rowptr[r], (size_t)(w - W->rowptr[r]), sizeof(fl_int), cmp_int);
    for (fl_int e = W->rowptr[r]; e < w; e++) {
      fl_int s = W->col[e];
      W->val[e] = w_entry(d, r, s) + (Rdiag && s == r ? Rdiag[r] : 0.0);
    }
  }
  W->rowptr[m] = w;
  fl_free(mark);
  *out = W;
  return FL_OK;
}


int fl_dynamics_delassus(fl_dynamics *d, fl_csr **W) {
  if (!d || !W) return fl_seterr(FL_ERR_INVAL, "fl_dynamics_delassus: NULL argument");
  return build_W(d, d->nrow, NULL, W);
}


//---- local form ----

int fl_problem_local_form(const fl_problem *p, fl_dynamics *d, fl_csr **W, double *q) {
  if (!p || !W || !q) return fl_seterr(FL_ERR_INVAL, "fl_problem_local_form: NULL argument");
  *W = NULL;
  if (p->kind == FL_PROBLEM_LOCAL) {
    FL_TRY(fl_csr_copy(p->W, W));
    memcpy(q, p->q, (size_t)(3 * p->nc) * sizeof(double));
    return FL_OK;
  }
  if (p->nh != 0) {
    return fl_seterr(FL_ERR_UNSUPPORTED,
                     "%s: the local form (W, q, mu) has no bilateral rows (this problem has %d)",
                     p->name, (int)p->nh);
  }
  fl_dynamics *own = NULL;
  if (!d) {
    FL_TRY(fl_dynamics_create(p, &own));
    d = own;
  }
  fl_int m = 3 * p->nc;
  double *R = fl_calloc((size_t)m + 1, sizeof(double));
  if (!R) {
    fl_dynamics_free(own);
    return fl_seterr(FL_ERR_NOMEM, "%s: no memory for the local form", p->name);
  }
  // W = J A^-1 J^T + diag(R_n, 0, 0);  q = J v* + b - (vhat_n, 0, 0)
  for (fl_int r = 0; r < m; r++) q[r] = p->b ? p->b[r] : 0.0;
  fl_csr_gemv(p->J, 1.0, p->vstar, 1.0, q);
  for (fl_int i = 0; i < p->nc; i++) {
    double vhat;
    fl_problem_normal_law(p, i, &R[3 * i], &vhat);
    q[3 * i] -= vhat;
  }
  int rc = build_W(d, m, R, W);
  fl_free(R);
  fl_dynamics_free(own);
  return rc;
}


int fl_problem_local_problem(const fl_problem *p, fl_dynamics **dyn, fl_problem **out) {
  if (!p || !dyn || !out) return fl_seterr(FL_ERR_INVAL, "fl_problem_local_problem: NULL argument");
  *dyn = NULL;
  *out = NULL;
  if (p->kind != FL_PROBLEM_GLOBAL)
    return fl_seterr(FL_ERR_INVAL, "%s: already a local problem", p->name);
  if (p->nh != 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: the local form (W, q, mu) has no bilateral rows "
                     "(this problem has %d)", p->name, (int)p->nh);
  fl_dynamics *d = NULL;
  fl_problem *l = NULL;
  int rc = fl_dynamics_create(p, &d);
  if (rc == FL_OK && !fl_dynamics_JAinv(d))
    rc = fl_errcode() < 0 ? fl_errcode() : fl_seterr(FL_ERR_NOMEM, "%s: J A^-1", p->name);
  if (rc == FL_OK) rc = fl_problem_alloc(FL_PROBLEM_LOCAL, 0, p->nc, 0, 0, &l);
  if (rc == FL_OK) {
    snprintf(l->name, sizeof l->name, "%s", p->name);
    l->dt = p->dt;
    memcpy(l->mu, p->mu, (size_t)p->nc * sizeof(double));
    rc = fl_problem_local_form(p, d, &l->W, l->q);
  }
  if (rc < 0) {
    fl_problem_free(l);
    fl_dynamics_free(d);
    return rc;
  }
  *dyn = d;
  *out = l;
  return FL_OK;
}

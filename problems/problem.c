// SPDX-License-Identifier: Apache-2.0
/* problem.c: creation, validation and small helpers of fl_problem.
 *
 * One allocation holds every flat array of a problem (MuJoCo's mjModel): a first pass counts
 * the bytes, a second carves the buffer. Doubles come first, then int64, then fl_int, so that
 * every array is naturally aligned. Arrays of length zero are NULL.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fl_contact_ops.h"
#include "fl_problem.h"

//---- buffer layout ----

/* carves `n` items of `size` bytes from `base` at `*off` (base NULL: count only) */
static void *carve(unsigned char *base, size_t *off, size_t n, size_t size) {
  void *ptr = NULL;
  if (n > 0 && base) ptr = base + *off;
  *off += n * size;
  return ptr;
}


/* lays the arrays of p out in base (or only counts when base is NULL); returns the bytes */
static size_t layout(fl_problem *p, unsigned char *base) {
  size_t off = 0, nv = (size_t)p->nv, nc = (size_t)p->nc, nh = (size_t)p->nh;
  size_t nrow = 3 * nc + nh;
  int global = p->kind == FL_PROBLEM_GLOBAL;

  // doubles
  p->v0 = carve(base, &off, global ? nv : 0, sizeof(double));
  p->vstar = carve(base, &off, global ? nv : 0, sizeof(double));
  p->b = carve(base, &off, global ? nrow : 0, sizeof(double));
  p->q = carve(base, &off, global ? 0 : 3 * nc, sizeof(double));
  p->phi0 = carve(base, &off, nc, sizeof(double));
  p->mu = carve(base, &off, nc, sizeof(double));
  p->stiffness = carve(base, &off, nc, sizeof(double));
  p->tau_d = carve(base, &off, nc, sizeof(double));
  p->point = carve(base, &off, 3 * nc, sizeof(double));
  p->frame = carve(base, &off, 9 * nc, sizeof(double));
  p->g0 = carve(base, &off, nh, sizeof(double));
  p->compliance = carve(base, &off, nh, sizeof(double));
  p->lo = carve(base, &off, nh, sizeof(double));
  p->hi = carve(base, &off, nh, sizeof(double));

  // int64
  p->feature = carve(base, &off, nc, sizeof(int64_t));

  // fl_int: clique_ptr has room for nv cliques so that fl_problem_find_cliques fits in place
  p->clique_ptr = carve(base, &off, global ? nv + 1 : 0, sizeof(fl_int));
  p->clique_dof = carve(base, &off, global ? nv : 0, sizeof(fl_int));
  p->dof_clique = carve(base, &off, global ? nv : 0, sizeof(fl_int));
  p->clique_a = carve(base, &off, nc, sizeof(fl_int));
  p->clique_b = carve(base, &off, nc, sizeof(fl_int));
  return off;
}


//---- creation ----

int fl_problem_alloc(fl_problem_kind kind, fl_int nv, fl_int nc, fl_int nh, fl_int ncl,
                     fl_problem **out) {
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_problem_alloc: out is NULL");
  *out = NULL;
  if (kind != FL_PROBLEM_GLOBAL && kind != FL_PROBLEM_LOCAL) {
    return fl_seterr(FL_ERR_INVAL, "fl_problem_alloc: unknown kind %d", (int)kind);
  }
  if (nv < 0 || nc < 0 || nh < 0 || ncl < 0) {
    return fl_seterr(FL_ERR_INVAL, "fl_problem_alloc: negative size (nv %d, nc %d, nh %d, ncl %d)",
                     (int)nv, (int)nc, (int)nh, (int)ncl);
  }
  if (kind == FL_PROBLEM_LOCAL && (nv != 0 || ncl != 0 || nh != 0)) {
    return fl_seterr(FL_ERR_INVAL,
                     "fl_problem_alloc: a local problem has nv = ncl = nh = 0 (got %d, %d, %d)",
                     (int)nv, (int)ncl, (int)nh);
  }
  if (ncl > nv) {
    return fl_seterr(FL_ERR_INVAL, "fl_problem_alloc: %d cliques for %d dofs", (int)ncl, (int)nv);
  }
  if ((int64_t)nc > (INT32_MAX - (int64_t)nh) / 3) {
    return fl_seterr(FL_ERR_INVAL, "fl_problem_alloc: 3 nc + nh overflows (nc %d, nh %d)", (int)nc,
                     (int)nh);
  }

  fl_problem *p = fl_calloc(1, sizeof(*p));
  if (!p) return fl_seterr(FL_ERR_NOMEM, "fl_problem_alloc: no memory for the problem struct");
  p->kind = kind;
  p->nv = nv;
  p->nc = nc;
  p->nh = nh;
  p->ncl = ncl;
  p->dt = 1.0;
  p->max_recovery = INFINITY;

  // count, then carve one zeroed buffer
  size_t bytes = layout(p, NULL);
  p->buffer_ = fl_calloc(1, bytes > 0 ? bytes : 1);
  if (!p->buffer_) {
    fl_free(p);
    return fl_seterr(FL_ERR_NOMEM, "fl_problem_alloc: no memory for %zu bytes of arrays", bytes);
  }
  layout(p, p->buffer_);

  // defaults: rigid contact, no damping, world cliques, no features, unbounded rows
  for (fl_int i = 0; i < nc; i++) {
    p->stiffness[i] = INFINITY;
    p->clique_a[i] = -1;
    p->clique_b[i] = -1;
    p->feature[i] = -1;
  }
  for (fl_int h = 0; h < nh; h++) {
    p->lo[h] = -INFINITY;
    p->hi[h] = INFINITY;
  }
  *out = p;
  return FL_OK;
}


void fl_problem_free(fl_problem *p) {
  if (!p) return;
  fl_csr_free(p->A);
  fl_csr_free(p->J);
  fl_csr_free(p->W);
  fl_free(p->gamma_guess);
  fl_free(p->adiag_hint);
  fl_free(p->buffer_);
  fl_free(p);
}


//---- cliques ----

/* root of x with path halving */
static fl_int uf_find(fl_int *parent, fl_int x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}


/* one component's constraint signature, for sorting */
typedef struct sig_rec {
  uint64_t hash;
  fl_int root, len, size; /* size: dofs in the component */
  const fl_int *s;
} sig_rec;


static int sig_cmp(const void *a, const void *b) {
  const sig_rec *x = a, *y = b;
  if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
  if (x->len != y->len) return x->len < y->len ? -1 : 1;
  for (fl_int k = 0; k < x->len; k++) {
    if (x->s[k] != y->s[k]) return x->s[k] < y->s[k] ? -1 : 1;
  }
  return x->root < y->root ? -1 : (x->root > y->root);
}


/* Joins single-dof components of `parent` (union-find over dofs) into the component that
 * carries the same nonempty set of constraints (contacts, then bilateral rows) touching it
 * with nonzero entries of J. The 6 dofs of a rigid body with a diagonal mass matrix (FCLIB's
 * spheres and box stacks) fall apart into single dofs with that same set. Components of two or
 * more dofs (FEM bodies, full 6x6 blocks) are joined with each other only where single dofs
 * of the same set would otherwise be ambiguous. Two bodies touching only each other become
 * one clique (harmless for the operators; their
 * contacts get clique_b = -1). `lab` is nv scratch. */
static int merge_by_signature(fl_problem *p, fl_int *parent, fl_int *lab) {
  fl_int nv = p->nv, ncon = p->nc + p->nh, nrow = fl_problem_nrows(p);
  const fl_csr *J = p->J;
  if (J->nrow < nrow) return FL_OK; /* reported by the caller */
  fl_int nroot = 0;
  for (fl_int d = 0; d < nv; d++) lab[d] = -1;
  for (fl_int d = 0; d < nv; d++) {
    fl_int r = uf_find(parent, d);
    if (lab[r] < 0) lab[r] = nroot++;
  }
  fl_int *size = fl_calloc((size_t)nroot + 1, sizeof(fl_int));
  fl_int *ptr = fl_calloc((size_t)nroot + 1, sizeof(fl_int));
  fl_int *last = fl_malloc(((size_t)nroot + 1) * sizeof(fl_int));
  fl_int *sig = fl_malloc(((size_t)J->rowptr[nrow] + 1) * sizeof(fl_int));
  sig_rec *rec = fl_malloc(((size_t)nroot + 1) * sizeof(sig_rec));
  if (!size || !ptr || !last || !sig || !rec) {
    fl_free(size);
    fl_free(ptr);
    fl_free(last);
    fl_free(sig);
    fl_free(rec);
    return fl_seterr(FL_ERR_NOMEM, "%s: no memory to find cliques", p->name);
  }

  for (fl_int d = 0; d < nv; d++) size[lab[uf_find(parent, d)]]++;

  // count, then fill, the constraints touching each component (ascending, no repeats)
  for (int pass = 0; pass < 2; pass++) {
    for (fl_int x = 0; x < nroot; x++) last[x] = -1;
    for (fl_int c = 0; c < ncon; c++) {
      fl_int r0 = c < p->nc ? 3 * c : 3 * p->nc + (c - p->nc);
      fl_int r1 = c < p->nc ? r0 + 3 : r0 + 1;
      for (fl_int k = J->rowptr[r0]; k < J->rowptr[r1]; k++) {
        if (J->val[k] == 0.0 || J->col[k] < 0 || J->col[k] >= nv) continue;
        fl_int x = lab[uf_find(parent, J->col[k])];
        if (last[x] == c) continue;
        last[x] = c;
        if (pass == 0) {
          ptr[x + 1]++;
        } else {
          sig[ptr[x]++] = c;
        }
      }
    }
    if (pass == 0) {
      for (fl_int x = 0; x < nroot; x++) ptr[x + 1] += ptr[x];
    } else {
      for (fl_int x = nroot; x > 0; x--) ptr[x] = ptr[x - 1];
      ptr[0] = 0;
    }
  }

  // sort the components by signature (FNV-1a hash first) and join equal neighbours
  fl_int n = 0;
  for (fl_int d = 0; d < nv; d++) {
    fl_int r = uf_find(parent, d);
    if (r != d) continue;
    fl_int x = lab[r];
    sig_rec t = {14695981039346656037ull, r, ptr[x + 1] - ptr[x], size[x], sig + ptr[x]};
    if (t.len == 0) continue;
    for (fl_int k = 0; k < t.len; k++) t.hash = (t.hash ^ (uint64_t)(uint32_t)t.s[k]) * 1099511628211ull;
    rec[n++] = t;
  }
  qsort(rec, (size_t)n, sizeof(sig_rec), sig_cmp);
  for (fl_int k0 = 0, k1; k0 < n; k0 = k1) {
    // a run [k0, k1) of equal signatures
    for (k1 = k0 + 1; k1 < n; k1++) {
      const sig_rec *a = &rec[k0], *b = &rec[k1];
      if (a->hash != b->hash || a->len != b->len ||
          memcmp(a->s, b->s, (size_t)a->len * sizeof(fl_int)) != 0) {
        break;
      }
    }
    // target: the one multi-dof component of the run if there is exactly one, else a single
    // dof. With singles and several multi-dof components (two bodies with 3x3 rotational
    // blocks that touch only each other), the singles could belong to either, so the whole
    // run becomes one clique: a larger block of A, never a wrong one.
    fl_int target = -1, nbig = 0, nsingle = 0;
    for (fl_int k = k0; k < k1; k++) {
      if (rec[k].size > 1) {
        nbig++;
        target = rec[k].root;
      } else {
        nsingle++;
      }
    }
    int join_all = nbig > 1 && nsingle > 0;
    if (nbig != 1) target = -1;
    for (fl_int k = k0; k < k1; k++) {
      if (rec[k].size > 1 && !join_all) continue;
      if (target < 0) {
        target = rec[k].root;
        continue;
      }
      fl_int ra = uf_find(parent, target), rb = uf_find(parent, rec[k].root);
      if (ra != rb) parent[ra > rb ? ra : rb] = ra < rb ? ra : rb;
    }
  }
  fl_free(size);
  fl_free(ptr);
  fl_free(last);
  fl_free(sig);
  fl_free(rec);
  return FL_OK;
}


int fl_problem_find_cliques(fl_problem *p) {
  if (!p) return fl_seterr(FL_ERR_INVAL, "fl_problem_find_cliques: problem is NULL");
  if (p->kind != FL_PROBLEM_GLOBAL || !p->A) {
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: cliques need the matrix A of a global problem",
                     p->name);
  }
  fl_int nv = p->nv;
  if (p->A->nrow != nv || p->A->ncol != nv) {
    return fl_seterr(FL_ERR_FORMAT, "%s: A is %d x %d, expected %d x %d", p->name,
                     (int)p->A->nrow, (int)p->A->ncol, (int)nv, (int)nv);
  }
  fl_int *parent = fl_malloc((size_t)(2 * nv + 1) * sizeof(fl_int));
  if (!parent) return fl_seterr(FL_ERR_NOMEM, "%s: no memory to find cliques", p->name);
  fl_int *label = parent + nv;

  // union the endpoints of every stored entry of A (connected components of its graph)
  for (fl_int d = 0; d < nv; d++) parent[d] = d;
  for (fl_int r = 0; r < nv; r++) {
    for (fl_int k = p->A->rowptr[r]; k < p->A->rowptr[r + 1]; k++) {
      fl_int c = p->A->col[k];
      if (c < 0 || c >= nv) {
        fl_free(parent);
        return fl_seterr(FL_ERR_FORMAT, "%s: A column index %d out of range in row %d", p->name,
                         (int)c, (int)r);
      }
      fl_int a = uf_find(parent, r), b = uf_find(parent, c);
      if (a != b) parent[a > b ? a : b] = a < b ? a : b;
    }
  }

  // rigid bodies with a diagonal A fall apart into single dofs: join components that the
  // same constraint rows touch
  if (p->J && p->J->ncol == nv) {
    int rc = merge_by_signature(p, parent, label);
    if (rc < 0) {
      fl_free(parent);
      return rc;
    }
  }

  // number cliques by their smallest dof
  fl_int ncl = 0;
  for (fl_int d = 0; d < nv; d++) label[d] = -1;
  for (fl_int d = 0; d < nv; d++) {
    fl_int r = uf_find(parent, d);
    if (label[r] < 0) label[r] = ncl++;
    p->dof_clique[d] = label[r];
  }

  // counting sort of dofs by clique (ascending within a clique)
  memset(p->clique_ptr, 0, (size_t)(nv + 1) * sizeof(fl_int));
  for (fl_int d = 0; d < nv; d++) p->clique_ptr[p->dof_clique[d] + 1]++;
  for (fl_int c = 0; c < ncl; c++) p->clique_ptr[c + 1] += p->clique_ptr[c];
  for (fl_int c = 0; c < ncl; c++) label[c] = p->clique_ptr[c];
  for (fl_int d = 0; d < nv; d++) p->clique_dof[label[p->dof_clique[d]]++] = d;
  p->ncl = ncl;
  fl_free(parent);

  // the cliques of each contact from the nonzero columns of its three rows of J
  if (!p->J) return FL_OK;
  if (p->J->ncol != nv || p->J->nrow < 3 * p->nc) {
    return fl_seterr(FL_ERR_FORMAT, "%s: J is %d x %d, expected %d x %d", p->name,
                     (int)p->J->nrow, (int)p->J->ncol, (int)fl_problem_nrows(p), (int)nv);
  }
  for (fl_int i = 0; i < p->nc; i++) {
    fl_int ca = -1, cb = -1;
    for (fl_int r = 3 * i; r < 3 * i + 3; r++) {
      for (fl_int k = p->J->rowptr[r]; k < p->J->rowptr[r + 1]; k++) {
        if (p->J->val[k] == 0.0) continue;
        fl_int c = p->J->col[k];
        if (c < 0 || c >= nv) {
          return fl_seterr(FL_ERR_FORMAT, "%s: J column index %d out of range in row %d",
                           p->name, (int)c, (int)r);
        }
        fl_int cl = p->dof_clique[c];
        if (cl == ca || cl == cb) continue;
        if (ca < 0) {
          ca = cl;
        } else if (cb < 0) {
          cb = cl;
        } else {
          return fl_seterr(FL_ERR_UNSUPPORTED,
                           "%s: contact %d touches more than two cliques (%d, %d, %d)", p->name,
                           (int)i, (int)ca, (int)cb, (int)cl);
        }
      }
    }
    // order the pair: a is the smaller id, b is -1 for contact with the world
    if (cb >= 0 && cb < ca) {
      fl_int t = ca;
      ca = cb;
      cb = t;
    }
    p->clique_a[i] = ca;
    p->clique_b[i] = cb;
  }
  return FL_OK;
}


//---- validation ----

/* structural checks of a CSR matrix: sizes, monotone rowptr, columns in range and sorted,
 * finite values */
static int check_csr(const fl_csr *m, fl_int nrow, fl_int ncol, const char *where,
                     const char *what) {
  if (!m) return fl_seterr(FL_ERR_FORMAT, "%s: matrix %s is missing", where, what);
  if (m->nrow != nrow || m->ncol != ncol) {
    return fl_seterr(FL_ERR_FORMAT, "%s: %s is %d x %d, expected %d x %d", where, what,
                     (int)m->nrow, (int)m->ncol, (int)nrow, (int)ncol);
  }
  if (m->nnz < 0 || !m->rowptr || (m->nnz > 0 && (!m->col || !m->val))) {
    return fl_seterr(FL_ERR_FORMAT, "%s: %s has no storage for %d entries", where, what,
                     (int)m->nnz);
  }
  if (m->rowptr[0] != 0 || m->rowptr[nrow] != m->nnz) {
    return fl_seterr(FL_ERR_FORMAT, "%s: %s row pointers run from %d to %d, expected 0 to %d",
                     where, what, (int)m->rowptr[0], (int)m->rowptr[nrow], (int)m->nnz);
  }
  for (fl_int r = 0; r < nrow; r++) {
    if (m->rowptr[r + 1] < m->rowptr[r]) {
      return fl_seterr(FL_ERR_FORMAT, "%s: %s row pointer decreases at row %d", where, what,
                       (int)r);
    }
    for (fl_int k = m->rowptr[r]; k < m->rowptr[r + 1]; k++) {
      fl_int c = m->col[k];
      if (c < 0 || c >= ncol) {
        return fl_seterr(FL_ERR_FORMAT, "%s: %s(%d, %d): column out of range [0, %d)", where,
                         what, (int)r, (int)c, (int)ncol);
      }
      if (k > m->rowptr[r] && c <= m->col[k - 1]) {
        return fl_seterr(FL_ERR_FORMAT, "%s: %s row %d: columns not strictly increasing", where,
                         what, (int)r);
      }
      if (!isfinite(m->val[k])) {
        return fl_seterr(FL_ERR_FORMAT, "%s: %s(%d, %d) = %g, expected a finite value", where,
                         what, (int)r, (int)c, m->val[k]);
      }
    }
  }
  return FL_OK;
}


/* every entry of x finite */
static int check_finite(const double *x, fl_int n, const char *where, const char *what) {
  if (n > 0 && !x) return fl_seterr(FL_ERR_FORMAT, "%s: array %s is missing", where, what);
  for (fl_int k = 0; k < n; k++) {
    if (!isfinite(x[k])) {
      return fl_seterr(FL_ERR_FORMAT, "%s: %s[%d] = %g, expected a finite value", where, what,
                       (int)k, x[k]);
    }
  }
  return FL_OK;
}


int fl_problem_validate(const fl_problem *p, const char *where) {
  if (!where) where = "problem";
  if (!p) return fl_seterr(FL_ERR_FORMAT, "%s: problem is NULL", where);
  if (p->nv < 0 || p->nc < 0 || p->nh < 0 || p->ncl < 0) {
    return fl_seterr(FL_ERR_FORMAT, "%s: negative size (nv %d, nc %d, nh %d, ncl %d)", where,
                     (int)p->nv, (int)p->nc, (int)p->nh, (int)p->ncl);
  }
  if (!(p->dt > 0.0) || !isfinite(p->dt)) {
    return fl_seterr(FL_ERR_FORMAT, "%s: time step dt = %g, expected a finite value > 0", where,
                     p->dt);
  }
  fl_int nrow = fl_problem_nrows(p);

  if (p->kind == FL_PROBLEM_LOCAL) {
    // local form: W (3nc x 3nc) and q only
    if (p->nv != 0 || p->nh != 0 || p->ncl != 0) {
      return fl_seterr(FL_ERR_FORMAT, "%s: local problem with nv %d, nh %d, ncl %d (expected 0)",
                       where, (int)p->nv, (int)p->nh, (int)p->ncl);
    }
    FL_TRY(check_csr(p->W, 3 * p->nc, 3 * p->nc, where, "W"));
    FL_TRY(check_finite(p->q, 3 * p->nc, where, "q"));
    for (fl_int r = 0; r < 3 * p->nc; r++) {
      double wrr = fl_csr_get(p->W, r, r);
      if (!(wrr >= 0.0)) {
        return fl_seterr(FL_ERR_FORMAT, "%s: W(%d, %d) = %g, expected a diagonal >= 0", where,
                         (int)r, (int)r, wrr);
      }
    }
  } else if (p->kind == FL_PROBLEM_GLOBAL) {
    // dynamics: A square SPD-looking, J rows x nv, vectors finite
    FL_TRY(check_csr(p->A, p->nv, p->nv, where, "A"));
    for (fl_int r = 0; r < p->nv; r++) {
      double arr = fl_csr_get(p->A, r, r);
      if (!(arr > 0.0)) {
        return fl_seterr(FL_ERR_FORMAT,
                         "%s: A(%d, %d) = %g, expected a positive diagonal (A must be SPD)", where,
                         (int)r, (int)r, arr);
      }
    }
    FL_TRY(check_csr(p->J, nrow, p->nv, where, "J"));
    FL_TRY(check_finite(p->v0, p->nv, where, "v0"));
    FL_TRY(check_finite(p->vstar, p->nv, where, "vstar"));
    FL_TRY(check_finite(p->b, nrow, where, "b"));

    // cliques: a partition of the dofs, ascending within each clique
    if (p->ncl > p->nv || (p->nv > 0 && p->ncl == 0)) {
      return fl_seterr(FL_ERR_FORMAT, "%s: %d cliques for %d dofs", where, (int)p->ncl,
                       (int)p->nv);
    }
    if (p->ncl > 0) {
      if (p->clique_ptr[0] != 0 || p->clique_ptr[p->ncl] != p->nv) {
        return fl_seterr(FL_ERR_FORMAT, "%s: clique pointers run from %d to %d, expected 0 to %d",
                         where, (int)p->clique_ptr[0], (int)p->clique_ptr[p->ncl], (int)p->nv);
      }
      for (fl_int c = 0; c < p->ncl; c++) {
        if (p->clique_ptr[c + 1] <= p->clique_ptr[c]) {
          return fl_seterr(FL_ERR_FORMAT, "%s: clique %d is empty", where, (int)c);
        }
        for (fl_int k = p->clique_ptr[c]; k < p->clique_ptr[c + 1]; k++) {
          fl_int d = p->clique_dof[k];
          if (d < 0 || d >= p->nv || p->dof_clique[d] != c) {
            return fl_seterr(FL_ERR_FORMAT,
                             "%s: clique %d lists dof %d, which is out of range or belongs to "
                             "another clique", where, (int)c, (int)d);
          }
          if (k > p->clique_ptr[c] && d <= p->clique_dof[k - 1]) {
            return fl_seterr(FL_ERR_FORMAT, "%s: dofs of clique %d not ascending", where, (int)c);
          }
        }
      }
      // A must not couple two cliques
      for (fl_int r = 0; r < p->nv; r++) {
        for (fl_int k = p->A->rowptr[r]; k < p->A->rowptr[r + 1]; k++) {
          fl_int c = p->A->col[k];
          if (p->dof_clique[c] != p->dof_clique[r] && p->A->val[k] != 0.0) {
            return fl_seterr(FL_ERR_FORMAT,
                             "%s: A(%d, %d) couples cliques %d and %d, expected block diagonal",
                             where, (int)r, (int)c, (int)p->dof_clique[r], (int)p->dof_clique[c]);
          }
        }
      }
    }
  } else {
    return fl_seterr(FL_ERR_FORMAT, "%s: unknown problem kind %d", where, (int)p->kind);
  }

  // per contact
  for (fl_int i = 0; i < p->nc; i++) {
    if (!isfinite(p->mu[i]) || p->mu[i] < 0.0) {
      return fl_seterr(FL_ERR_FORMAT, "%s: contact %d: mu = %g, expected a finite value >= 0",
                       where, (int)i, p->mu[i]);
    }
    if (!isfinite(p->phi0[i])) {
      return fl_seterr(FL_ERR_FORMAT, "%s: contact %d: phi0 = %g, expected a finite value", where,
                       (int)i, p->phi0[i]);
    }
    if (!(p->stiffness[i] > 0.0)) {
      return fl_seterr(FL_ERR_FORMAT,
                       "%s: contact %d: stiffness = %g, expected > 0 (INFINITY for rigid)", where,
                       (int)i, p->stiffness[i]);
    }
    if (!isfinite(p->tau_d[i]) || p->tau_d[i] < 0.0) {
      return fl_seterr(FL_ERR_FORMAT, "%s: contact %d: tau_d = %g, expected a finite value >= 0",
                       where, (int)i, p->tau_d[i]);
    }
    if (p->clique_a[i] < -1 || p->clique_a[i] >= p->ncl || p->clique_b[i] < -1 ||
        p->clique_b[i] >= p->ncl) {
      return fl_seterr(FL_ERR_FORMAT, "%s: contact %d: cliques (%d, %d) out of range [-1, %d)",
                       where, (int)i, (int)p->clique_a[i], (int)p->clique_b[i], (int)p->ncl);
    }
  }

  // per bilateral row
  for (fl_int h = 0; h < p->nh; h++) {
    if (!isfinite(p->g0[h])) {
      return fl_seterr(FL_ERR_FORMAT, "%s: bilateral row %d: g0 = %g, expected a finite value",
                       where, (int)h, p->g0[h]);
    }
    if (!isfinite(p->compliance[h]) || p->compliance[h] < 0.0) {
      return fl_seterr(FL_ERR_FORMAT,
                       "%s: bilateral row %d: compliance = %g, expected a finite value >= 0",
                       where, (int)h, p->compliance[h]);
    }
    if (isnan(p->lo[h]) || isnan(p->hi[h]) || p->lo[h] > p->hi[h]) {
      return fl_seterr(FL_ERR_FORMAT, "%s: bilateral row %d: bounds [%g, %g], expected lo <= hi",
                       where, (int)h, p->lo[h], p->hi[h]);
    }
  }
  if (p->gamma_guess) FL_TRY(check_finite(p->gamma_guess, nrow, where, "gamma_guess"));
  if (p->adiag_hint) FL_TRY(check_finite(p->adiag_hint, p->nv, where, "adiag_hint"));
  return FL_OK;
}


//---- small helpers ----

void fl_problem_normal_law(const fl_problem *p, fl_int i, double *R_n, double *vhat_n) {
  double R = 0.0, vhat = 0.0;
  if (p->kind == FL_PROBLEM_GLOBAL) {
    double k = p->stiffness[i], dt = p->dt, tau = p->tau_d[i];
    // gamma_n/dt = (-k (phi0 + dt u_n) - tau k u_n)_+  <=>  gamma_n = (vhat - u_n)_+ / R
    if (isfinite(k)) R = 1.0 / (dt * k * (dt + tau));
    vhat = -p->phi0[i] / (dt + tau);
    // a capped depenetration speed, as rigid engines have: a deep overlap is undone over
    // several steps (or, capped at 0, left to a position correction) instead of throwing the
    // bodies apart in one
    if (!isfinite(k) && vhat > p->max_recovery) vhat = p->max_recovery;
  }
  if (R_n) *R_n = R;
  if (vhat_n) *vhat_n = vhat;
}


void fl_problem_velocity(const fl_problem *p, const double *v, const double *gamma, double *u) {
  if (p->kind == FL_PROBLEM_LOCAL) {
    // u = W gamma + q
    fl_int n = 3 * p->nc;
    for (fl_int r = 0; r < n; r++) u[r] = p->q[r];
    if (p->W) fl_csr_gemv(p->W, 1.0, gamma, 1.0, u);
    return;
  }
  // u = J v + b
  fl_int n = fl_problem_nrows(p);
  for (fl_int r = 0; r < n; r++) u[r] = p->b ? p->b[r] : 0.0;
  if (p->J) fl_csr_gemv(p->J, 1.0, v, 1.0, u);
}


void fl_cone_project(double mu, const double x[3], double out[3]) {
  fl_hd_cone_project(mu, x, out);
}

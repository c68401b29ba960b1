// SPDX-License-Identifier: Apache-2.0
/* sap_setup.c: SAP's set-up (sap.c describes the solver): the constraints' dense blocks of J,
 * the regularization R and bias vhat of every row, the Newton matrix's pattern and CHOLMOD's
 * symbolic analysis, and destroy.
 */
#include <cholmod.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "local_kit.h"
#include "sap_impl.h"

//---- setup ----

static int cmp_int(const void *a, const void *b) {
  fl_int x = *(const fl_int *)a, y = *(const fl_int *)b;
  return (x > y) - (x < y);
}


/* sorts x (n) ascending and drops repeats; returns the new length. seen (one int per possible
 * value, none equal to tag on entry) marks the values kept under `tag`: the repeats go in one
 * pass and only the distinct values are sorted, by insertion for the short lists of contacts
 * (a contact's three rows repeat the same 6 or 12 dofs; qsort took a quarter of a step) */
static fl_int sort_unique(fl_int *x, fl_int n, fl_int *seen, fl_int tag) {
  fl_int m = 0;
  for (fl_int i = 0; i < n; i++)
    if (seen[x[i]] != tag) {
      seen[x[i]] = tag;
      x[m++] = x[i];
    }
  if (m > 32) {
    qsort(x, (size_t)m, sizeof *x, cmp_int);
    return m;
  }
  for (fl_int i = 1; i < m; i++) {
    fl_int t = x[i], j = i - 1;
    for (; j >= 0 && x[j] > t; j--) x[j + 1] = x[j];
    x[j + 1] = t;
  }
  return m;
}


/* position of row i in column j of the lower CSC pattern, or -1 */
static fl_int hfind(const int *Hp, const int *Hi, fl_int i, fl_int j) {
  int lo = Hp[j], hi = Hp[j + 1] - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (Hi[mid] == i) return mid;
    if (Hi[mid] < i) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}


/* What a setup leaves to the next one (s->keep): the sparse Newton matrix's CHOLMOD objects
 * (pattern, symbolic analysis, workspaces, their common) and the pattern they were made for,
 * A's and every constraint's dof list. A step whose pattern repeats (a resting contact graph)
 * takes them as they are: the same analysis on the same pattern, so the same factors. */
struct sap_keep {
  cholmod_common cm;
  cholmod_sparse *H;
  cholmod_factor *L;
  cholmod_dense *X, *Y, *E;
  fl_int nv, ncon, annz;
  int cholmod;          /* the cholmod option it was analyzed with */
  fl_int *arow, *acol;  /* A's pattern */
  fl_int *dptr, *dof;   /* the constraints' dofs */
  fl_int *apos, *hptr, *hpos;
  int *perm;
  double *prhs;
};


static void keep_free(void *kp) {
  sap_keep *k = kp;
  if (!k) return;
  cholmod_free_sparse(&k->H, &k->cm);
  cholmod_free_factor(&k->L, &k->cm);
  cholmod_free_dense(&k->X, &k->cm);
  cholmod_free_dense(&k->Y, &k->cm);
  cholmod_free_dense(&k->E, &k->cm);
  cholmod_finish(&k->cm);
  fl_free(k->arow);
  fl_free(k->acol);
  fl_free(k->dptr);
  fl_free(k->dof);
  fl_free(k->apos);
  fl_free(k->hptr);
  fl_free(k->hpos);
  fl_free(k->perm);
  fl_free(k->prhs);
  fl_free(k);
}


/* destroy: a complete sparse set-up moves its CHOLMOD objects and their key into s->keep */
static void keep_store(fl_solver *s, sap_data *d) {
  if (!d->cm_on || !d->H || !d->L || !d->karow || !d->kacol || s->keep) return;
  sap_keep *k = fl_calloc(1, sizeof *k);
  if (!k) return;
  k->cm = d->cm;
  k->H = d->H, k->L = d->L, k->X = d->X, k->Y = d->Y, k->E = d->E;
  k->nv = d->nv, k->ncon = d->ncon, k->annz = d->karow[d->nv];
  k->cholmod = SO(s)->cholmod;
  k->arow = d->karow, k->acol = d->kacol, k->dptr = d->dptr, k->dof = d->dof;
  k->apos = d->apos, k->hptr = d->hptr, k->hpos = d->hpos, k->perm = d->perm, k->prhs = d->prhs;
  d->cm_on = 0;
  d->H = NULL, d->L = NULL, d->X = d->Y = d->E = NULL;
  d->karow = d->kacol = d->dptr = d->dof = d->apos = d->hptr = d->hpos = NULL;
  d->perm = NULL, d->prhs = NULL;
  s->keep = k;
  s->keep_free = keep_free;
}


/* setup: takes s->keep when it was made for this pattern (returns 1), else frees it (0) */
static int keep_take(fl_solver *s, sap_data *d, const fl_problem *p, const sap_opts *o) {
  sap_keep *k = s->keep;
  if (!k) return 0;
  s->keep = NULL;
  const fl_csr *A = p->A;
  fl_int nd = d->dptr[d->ncon];
  int same = k->nv == d->nv && k->ncon == d->ncon && k->annz == A->nnz &&
             k->cholmod == o->cholmod && k->dptr[k->ncon] == nd &&
             !memcmp(k->arow, A->rowptr, ((size_t)d->nv + 1) * sizeof(fl_int)) &&
             !memcmp(k->acol, A->col, (size_t)A->nnz * sizeof(fl_int)) &&
             !memcmp(k->dptr, d->dptr, ((size_t)d->ncon + 1) * sizeof(fl_int)) &&
             !memcmp(k->dof, d->dof, (size_t)nd * sizeof(fl_int));
  if (!same) {
    keep_free(k);
    return 0;
  }
  d->cm = k->cm;
  d->cm_on = 1;
  d->H = k->H, d->L = k->L, d->X = k->X, d->Y = k->Y, d->E = k->E;
  d->karow = k->arow, d->kacol = k->acol;
  d->apos = k->apos, d->hptr = k->hptr, d->hpos = k->hpos, d->perm = k->perm, d->prhs = k->prhs;
  fl_free(k->dptr);
  fl_free(k->dof);
  fl_free(k);
  return 1;
}


void fl__sap_destroy(fl_solver *s) {
  sap_data *d = SD(s);
  if (!d) return;
  fl__sap_pcg_free(d);
  keep_store(s, d);
  fl_free(d->karow);
  fl_free(d->kacol);
  fl_free(d->dptr);
  fl_free(d->dof);
  fl_free(d->jptr);
  fl_free(d->Jb);
  fl_free(d->R);
  fl_free(d->vhat);
  fl_free(d->w);
  fl_free(d->n0s);
  fl_free(d->n0);
  fl_free(d->eps);
  fl_free(d->hint);
  fl_free(d->rts);
  fl_free(d->Adiag);
  fl_free(d->Dsc);
  fl_free(d->part);
  fl_free(d->Hd);
  fl_free(d->apos);
  fl_free(d->hptr);
  fl_free(d->hpos);
  fl_free(d->perm);
  fl_free(d->prhs);
  if (d->cm_on) {
    cholmod_free_sparse(&d->H, &d->cm);
    cholmod_free_factor(&d->L, &d->cm);
    cholmod_free_dense(&d->X, &d->cm);
    cholmod_free_dense(&d->Y, &d->cm);
    cholmod_free_dense(&d->E, &d->cm);
    cholmod_finish(&d->cm);
  }
  memset(d, 0, sizeof *d);
}


/* gathers each constraint's dofs and its dense rows of J */
static int setup_blocks(sap_data *d, const fl_problem *p, const char *nm) {
  const fl_csr *J = p->J;
  d->dptr = fl_calloc((size_t)d->ncon + 1, sizeof(fl_int));
  d->jptr = fl_calloc((size_t)d->ncon + 1, sizeof(fl_int));
  if (!d->dptr || !d->jptr) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (constraints)", nm);
  // upper bound of the dof lists: the nonzeros of J
  d->dof = fl_malloc(((size_t)J->nnz + 1) * sizeof(fl_int));
  fl_int *seen = fl_malloc(((size_t)d->nv + 1) * sizeof(fl_int));
  if (!d->dof || !seen) {
    fl_free(seen);
    return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (constraint dofs)", nm);
  }
  for (fl_int i = 0; i < d->nv; i++) seen[i] = -1;
  fl_int nd = 0, nj = 0;
  d->mmax = 0;
  for (fl_int k = 0; k < d->ncon; k++) {
    fl_int r = con_row(d, k), n = con_nrow(d, k);
    fl_int start = nd;
    for (fl_int i = r; i < r + n; i++)
      for (fl_int q = J->rowptr[i]; q < J->rowptr[i + 1]; q++) d->dof[nd++] = J->col[q];
    fl_int m = sort_unique(d->dof + start, nd - start, seen, k);
    nd = start + m;
    d->dptr[k + 1] = nd;
    nj += n * m;
    d->jptr[k + 1] = nj;
    if (m > d->mmax) d->mmax = m;
  }
  d->Jb = fl_calloc((size_t)nj + 1, sizeof(double));
  if (!d->Jb) {
    fl_free(seen);
    return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (J blocks)", nm);
  }
  // seen now maps a dof to its place in the current constraint's sorted list
  for (fl_int k = 0; k < d->ncon; k++) {
    fl_int r = con_row(d, k), n = con_nrow(d, k);
    const fl_int *S = d->dof + d->dptr[k];
    fl_int m = d->dptr[k + 1] - d->dptr[k];
    double *B = d->Jb + d->jptr[k];
    for (fl_int a = 0; a < m; a++) seen[S[a]] = a;
    for (fl_int i = 0; i < n; i++)
      for (fl_int q = J->rowptr[r + i]; q < J->rowptr[r + i + 1]; q++)
        B[i * m + seen[J->col[q]]] += J->val[q];
  }
  fl_free(seen);
  return FL_OK;
}


/* start-of-step normal velocity of contact k: row 3k of J v0 + b (0 without v0) */
static double lagged_vn0(const fl_problem *p, fl_int k) {
  fl_int r = 3 * k;
  double vn = p->b ? p->b[r] : 0.0;
  if (p->v0)
    for (fl_int q = p->J->rowptr[r]; q < p->J->rowptr[r + 1]; q++)
      vn += p->J->val[q] * p->v0[p->J->col[q]];
  return vn;
}


/* R, vhat and w of every constraint (SOLVERS.md section 1, SAP.md 1.2 and 4.1) */
static int setup_regularization(sap_data *d, const fl_problem *p, const sap_opts *o,
                                const char *nm) {
  d->R = fl_malloc(((size_t)d->nr + 1) * sizeof(double));
  d->vhat = fl_malloc(((size_t)d->nr + 1) * sizeof(double));
  d->w = fl_malloc(((size_t)d->ncon + 1) * sizeof(double));
  if (!d->R || !d->vhat || !d->w) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (R)", nm);
  d->model = o->model == MODEL_SAP ? MODEL_CONVEX : o->model;
  d->huber = d->model == MODEL_LAGGED && o->friction == FRIC_HUBER;
  if (d->model != MODEL_CONVEX) {
    d->n0s = fl_malloc(((size_t)d->nc + 1) * sizeof(double));
    d->n0 = fl_malloc(((size_t)d->nc + 1) * sizeof(double));
    d->eps = fl_malloc(((size_t)d->nc + 1) * sizeof(double));
    d->hint = fl_calloc((size_t)d->nc + 1, 1);
    d->rts = fl_malloc(((size_t)d->nc + 1) * sizeof(double));
    if (!d->n0s || !d->n0 || !d->eps || !d->hint || !d->rts)
      return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (n0)", nm);
  }
  double dt = p->dt;
  for (fl_int k = 0; k < d->ncon; k++) {
    fl_int r = con_row(d, k), n = con_nrow(d, k);
    const fl_int *S = d->dof + d->dptr[k];
    fl_int m = d->dptr[k + 1] - d->dptr[k];
    const double *B = d->Jb + d->jptr[k];
    // w = ||J_k diag(A)^-1 J_k^T||_F / n (the Jacobi estimate of the Delassus block), with the
    // unreduced diagonal where A is a Schur complement, so that a condensed body gets the
    // same regularization as the full one
    const double *ad = p->adiag_hint ? p->adiag_hint : d->Adiag;
    // the block is symmetric to the bit (products commute): the upper triangle is computed,
    // and the sum of squares runs in full row order as before
    double wb[9], fro = 0.0;
    for (fl_int i = 0; i < n; i++)
      for (fl_int j = i; j < n; j++) {
        double wij = 0.0;
        for (fl_int a = 0; a < m; a++) wij += B[i * m + a] * B[j * m + a] / ad[S[a]];
        wb[i * n + j] = wb[j * n + i] = wij;
      }
    for (fl_int q = 0; q < n * n; q++) fro += wb[q] * wb[q];
    double w = sqrt(fro) / (double)n;
    d->w[k] = w;
    if (k < d->nc) {
      // contact: R_n = max(beta^2/(4 pi^2) w, 1/(dt k (dt + tau_d))), R_t = sigma w
      // the common law's compliance rc and target vhat_n (with the recovery cap)
      double kk = p->stiffness[k], td = p->tau_d[k], rc, vhat_n;
      fl_problem_normal_law(p, k, &rc, &vhat_n);
      double rnr = o->beta * o->beta / SAP_TWO_PI_SQ * w;
      double Rn = rnr > rc ? rnr : rc, Rt = o->sigma * w;
      if (d->model != MODEL_CONVEX) {
        // similar and lagged: a compliant contact keeps the problem's own normal law (no
        // near-rigid clamp, as Drake's Hunt-Crossley constraint) and n0 is its spring's
        // start-of-step impulse dt k (-(phi0 + tau_d v_n0))_+; a rigid contact keeps the
        // near-rigid law and, having no spring force to lag, takes the last step's normal
        // impulse that the stepper matched (gamma_guess; 0 for a new contact or without one)
        double n0 = 0.0;
        if (rc > 0.0) {
          Rn = rc;
          double f0 = -kk * (p->phi0[k] + td * lagged_vn0(p, k));
          n0 = f0 > 0.0 ? dt * f0 : 0.0;
        } else if (p->gamma_guess && p->gamma_guess[r] > 0.0) {
          n0 = p->gamma_guess[r];
        }
        d->n0s[k] = n0;
        double e = p->mu[k] * o->sigma * w * n0;
        d->eps[k] = e > o->vs ? e : o->vs;
      }
      if (!(Rn > 0.0) || !(Rt > 0.0) || !isfinite(Rn) || !isfinite(Rt))
        return fl_seterr(FL_ERR_UNSUPPORTED,
                         "%s: problem %s contact %d: regularization R_n = %g, R_t = %g (w = %g, "
                         "k = %g, beta = %g): rigid contact needs beta > 0 and a contact with a "
                         "non-zero Jacobian", nm, p->name, (int)k, Rn, Rt, w, kk, o->beta);
      d->R[r] = Rn;
      d->R[r + 1] = d->R[r + 2] = Rt;
      d->vhat[r] = vhat_n;
      d->vhat[r + 1] = d->vhat[r + 2] = 0.0;
    } else {
      // bilateral row J v + b + g0/dt + c gamma = 0: R = max(c, beta_h^2/(4 pi^2) w),
      // vhat = -g0/(dt + tau) with tau = 0, or tau = dt when near-rigid (critical damping)
      fl_int h = k - d->nc;
      double c = p->compliance ? p->compliance[h] : 0.0;
      double rnr = o->beta_h * o->beta_h / SAP_TWO_PI_SQ * w;
      double tau = c < rnr ? dt : 0.0;
      double Rh = c > rnr ? c : rnr;
      if (!(Rh > 0.0) || !isfinite(Rh))
        return fl_seterr(FL_ERR_UNSUPPORTED,
                         "%s: problem %s bilateral row %d: R = %g (w = %g, compliance = %g, "
                         "beta_h = %g): a hard row needs beta_h > 0 and a non-zero Jacobian row",
                         nm, p->name, (int)h, Rh, w, c, o->beta_h);
      d->R[r] = Rh;
      d->vhat[r] = -(p->g0 ? p->g0[h] : 0.0) / (dt + tau);
    }
  }
  return FL_OK;
}


/* A simplicial factorization of the lower H with the fill-reducing permutation P makes
 * CHOLMOD transpose it into the upper triangle of P H P^T at every factorization (a quarter
 * of the factorization's cost on box_pile). Builds that matrix's pattern here once instead
 * (upper, columns sorted, the maps apos and hpos moved into it) and analyzes it in the
 * natural order; newton_solve permutes the right-hand side and the answer itself. The
 * factorization sees the same matrix, its entries in the same order, and the same
 * elimination tree: the same factor and solves to the bit. */
static int prepermute(sap_data *d, const fl_csr *A, const char *nm) {
  fl_int nv = d->nv;
  const int *Hp = d->H->p, *Hi = d->H->i, *P = d->L->Perm;
  size_t nnz = (size_t)Hp[nv];
  int *pinv = fl_malloc(((size_t)nv + 1) * sizeof(int));
  int *cnt = fl_calloc((size_t)nv + 2, sizeof(int));
  int *row = fl_malloc((nnz + 1) * sizeof(int));
  int *col = fl_malloc((nnz + 1) * sizeof(int));
  d->perm = fl_malloc((2 * (size_t)nv + 1) * sizeof(int));
  d->prhs = fl_malloc(((size_t)nv + 1) * sizeof(double));
  int rc = FL_OK;
  cholmod_sparse *U = NULL;
  if (!pinv || !cnt || !row || !col || !d->perm || !d->prhs) {
    rc = fl_seterr(FL_ERR_NOMEM, "%s: out of memory (permuted H)", nm);
    goto out;
  }
  memcpy(d->perm, P, (size_t)nv * sizeof(int));
  for (fl_int k = 0; k < nv; k++) pinv[P[k]] = (int)k;
  memcpy(d->perm + nv, pinv, (size_t)nv * sizeof(int));
  // entry q = (i, j) of the lower H goes to (min, max) of (pinv i, pinv j), in the order of
  // CHOLMOD's own permuted transpose (the columns of P H P^T in turn, each column's entries as
  // H holds them): the factorization's sparse triangular solves visit a column's entries in
  // that order, and so round alike
  for (fl_int j = 0; j < nv; j++) {
    int jold = P[j];
    for (int q = Hp[jold]; q < Hp[jold + 1]; q++) {
      int i = pinv[Hi[q]];
      row[q] = i < (int)j ? i : (int)j;
      col[q] = i < (int)j ? (int)j : i;
      cnt[col[q] + 1]++;
    }
  }
  U = cholmod_allocate_sparse((size_t)nv, (size_t)nv, nnz, 0, 1, 1, CHOLMOD_REAL, &d->cm);
  if (!U) {
    rc = fl_seterr(fl__cholmod_err(d->cm.status), "%s: cholmod_allocate_sparse failed (status %d)",
                   nm, d->cm.status);
    goto out;
  }
  int *Up = U->p, *Ui = U->i;
  for (fl_int k = 0; k < nv; k++) cnt[k + 1] += cnt[k];
  memcpy(Up, cnt, ((size_t)nv + 1) * sizeof(int));
  for (fl_int j = 0; j < nv; j++) {
    int jold = P[j];
    for (int q = Hp[jold]; q < Hp[jold + 1]; q++) {
      int at = cnt[col[q]]++;
      Ui[at] = row[q];
      row[q] = at; // row now holds entry q's position in U
    }
  }
  memset(U->x, 0, nnz * sizeof(double));
  for (fl_int q = 0; q < A->nnz; q++)
    if (d->apos[q] >= 0) d->apos[q] = row[d->apos[q]];
  for (fl_int q = 0; q < d->hptr[d->ncon]; q++) d->hpos[q] = row[d->hpos[q]];
  // the natural order on U: no fill-reducing ordering, no postorder (P has both)
  int nmethods = d->cm.nmethods, ordering = d->cm.method[0].ordering, post = d->cm.postorder;
  int super = d->cm.supernodal;
  d->cm.nmethods = 1;
  d->cm.method[0].ordering = CHOLMOD_NATURAL;
  d->cm.postorder = 0;
  d->cm.supernodal = CHOLMOD_SIMPLICIAL;
  cholmod_factor *L2 = cholmod_analyze(U, &d->cm);
  d->cm.nmethods = nmethods;
  d->cm.method[0].ordering = ordering;
  d->cm.postorder = post;
  d->cm.supernodal = super;
  if (!L2) {
    rc = fl_seterr(fl__cholmod_err(d->cm.status), "%s: cholmod_analyze failed (status %d)", nm,
                   d->cm.status);
    goto out;
  }
  cholmod_free_factor(&d->L, &d->cm);
  cholmod_free_sparse(&d->H, &d->cm);
  d->L = L2;
  d->H = U;
  U = NULL;
out:
  if (U) cholmod_free_sparse(&U, &d->cm);
  if (rc != FL_OK) {
    fl_free(d->perm);
    d->perm = NULL;
  }
  fl_free(pinv);
  fl_free(cnt);
  fl_free(row);
  fl_free(col);
  return rc;
}


/* the lower pattern of H = A + sum_k J_k^T J_k, its CHOLMOD analysis, and the maps from A
 * entries and constraint blocks into H->x */
static int setup_cholmod(fl_solver *s, sap_data *d, const fl_problem *p, const sap_opts *o,
                         const char *nm, int wants_pcg) {
  const fl_csr *A = p->A;
  fl_int nv = d->nv;
  if (keep_take(s, d, p, o)) return FL_OK;
  // the key of what this setup will leave to the next
  d->karow = fl_malloc(((size_t)nv + 1) * sizeof(fl_int));
  d->kacol = fl_malloc(((size_t)A->nnz + 1) * sizeof(fl_int));
  if (!d->karow || !d->kacol) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (A pattern)", nm);
  memcpy(d->karow, A->rowptr, ((size_t)nv + 1) * sizeof(fl_int));
  memcpy(d->kacol, A->col, (size_t)A->nnz * sizeof(fl_int));
  // count entries per column (duplicates included)
  size_t *cnt = fl_calloc((size_t)nv + 1, sizeof(size_t));
  if (!cnt) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (H pattern)", nm);
  for (fl_int i = 0; i < nv; i++)
    for (fl_int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
      if (A->col[q] <= i) cnt[A->col[q] + 1]++;
  for (fl_int k = 0; k < d->ncon; k++) {
    const fl_int *S = d->dof + d->dptr[k];
    fl_int m = d->dptr[k + 1] - d->dptr[k];
    for (fl_int b = 0; b < m; b++) cnt[S[b] + 1] += (size_t)(m - b);
  }
  for (fl_int j = 0; j < nv; j++) cnt[j + 1] += cnt[j];
  size_t tot = cnt[nv];
  if (tot > (size_t)INT32_MAX) {
    fl_free(cnt);
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: Hessian pattern too large (%zu entries)", nm, tot);
  }
  fl_int *rows = fl_malloc((tot + 1) * sizeof(fl_int));
  size_t *fill = fl_malloc(((size_t)nv + 1) * sizeof(size_t));
  if (!rows || !fill) {
    fl_free(cnt);
    fl_free(rows);
    fl_free(fill);
    return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (H pattern)", nm);
  }
  memcpy(fill, cnt, ((size_t)nv + 1) * sizeof(size_t));
  for (fl_int i = 0; i < nv; i++)
    for (fl_int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
      if (A->col[q] <= i) rows[fill[A->col[q]]++] = i;
  for (fl_int k = 0; k < d->ncon; k++) {
    const fl_int *S = d->dof + d->dptr[k];
    fl_int m = d->dptr[k + 1] - d->dptr[k];
    for (fl_int b = 0; b < m; b++)
      for (fl_int a = b; a < m; a++) rows[fill[S[b]]++] = S[a];
  }
  // the diagonal always (CHOLMOD needs it), then sort and compress each column (its length
  // kept in fill)
  size_t nnz = 0;
  fl_int *seen = fl_malloc(((size_t)nv + 1) * sizeof(fl_int));
  if (!seen) {
    fl_free(cnt);
    fl_free(rows);
    fl_free(fill);
    return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (H pattern)", nm);
  }
  for (fl_int j = 0; j < nv; j++) seen[j] = -1;
  for (fl_int j = 0; j < nv; j++) {
    fl_int n = (fl_int)(cnt[j + 1] - cnt[j]);
    fill[j] = (size_t)sort_unique(rows + cnt[j], n, seen, j);
    nnz += fill[j];
  }
  fl_free(seen);
  d->cm_on = 1;
  cholmod_start(&d->cm);
  d->cm.print = 0;
  d->cm.supernodal = o->cholmod == CHOL_SUPERNODAL   ? CHOLMOD_SUPERNODAL
                     : o->cholmod == CHOL_SIMPLICIAL ? CHOLMOD_SIMPLICIAL
                                                     : CHOLMOD_AUTO;
  d->cm.nmethods = 1;
  d->cm.method[0].ordering = CHOLMOD_AMD;
  d->cm.postorder = 1;
  d->H = cholmod_allocate_sparse((size_t)nv, (size_t)nv, nnz + (size_t)nv, 1, 1, -1,
                                 CHOLMOD_REAL, &d->cm);
  if (!d->H) {
    fl_free(cnt);
    fl_free(rows);
    fl_free(fill);
    return fl_seterr(fl__cholmod_err(d->cm.status),
                     "%s: cholmod_allocate_sparse failed (status %d)", nm, d->cm.status);
  }
  int *Hp = d->H->p, *Hi = d->H->i;
  int at = 0;
  for (fl_int j = 0; j < nv; j++) {
    Hp[j] = at;
    fl_int n = (fl_int)fill[j];
    // make sure the diagonal is present
    int has_diag = 0;
    for (fl_int q = 0; q < n; q++) has_diag |= rows[cnt[j] + (size_t)q] == j;
    if (!has_diag) Hi[at++] = j;
    for (fl_int q = 0; q < n; q++) Hi[at++] = rows[cnt[j] + (size_t)q];
    if (!has_diag) qsort(Hi + Hp[j], (size_t)(at - Hp[j]), sizeof(int), cmp_int);
  }
  Hp[nv] = at;
  fl_free(cnt);
  fl_free(rows);
  fl_free(fill);
  memset(d->H->x, 0, (size_t)at * sizeof(double));

  // maps into H->x
  d->apos = fl_malloc(((size_t)A->nnz + 1) * sizeof(fl_int));
  d->hptr = fl_calloc((size_t)d->ncon + 1, sizeof(fl_int));
  if (!d->apos || !d->hptr) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (H maps)", nm);
  for (fl_int i = 0; i < nv; i++)
    for (fl_int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
      d->apos[q] = A->col[q] <= i ? hfind(Hp, Hi, i, A->col[q]) : -1;
  size_t np = 0;
  for (fl_int k = 0; k < d->ncon; k++) {
    fl_int m = d->dptr[k + 1] - d->dptr[k];
    np += (size_t)m * (size_t)(m + 1) / 2;
    if (np > (size_t)INT32_MAX) return fl_seterr(FL_ERR_UNSUPPORTED, "%s: too many pairs", nm);
    d->hptr[k + 1] = (fl_int)np;
  }
  d->hpos = fl_malloc((np + 1) * sizeof(fl_int));
  if (!d->hpos) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (H maps)", nm);
  for (fl_int k = 0; k < d->ncon; k++) {
    const fl_int *S = d->dof + d->dptr[k];
    fl_int m = d->dptr[k + 1] - d->dptr[k];
    fl_int *hp = d->hpos + d->hptr[k];
    for (fl_int b = 0; b < m; b++)
      for (fl_int a = b; a < m; a++) *hp++ = hfind(Hp, Hi, S[a], S[b]);
  }

  // the PCG inner solve works on H itself: no analysis, no factor
  if (wants_pcg) return FL_OK;
  // symbolic analysis once: fill-reducing ordering (AMD), supernodal pattern
  d->L = cholmod_analyze(d->H, &d->cm);
  if (!d->L)
    return fl_seterr(fl__cholmod_err(d->cm.status), "%s: cholmod_analyze failed (status %d)", nm,
                     d->cm.status);
  if (!d->L->is_super && d->L->ordering != CHOLMOD_NATURAL && d->L->Perm)
    return prepermute(d, A, nm);
  return FL_OK;
}


int fl__sap_setup(fl_solver *s, const fl_problem *p) {
  sap_data *d = SD(s);
  const sap_opts *o = SO(s);
  const char *nm = s->ops->name;
  if (p->kind != FL_PROBLEM_GLOBAL || !p->A || !p->J)
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: problem %s has no A and J (SAP is primal)", nm,
                     p->name);
  d->nv = p->nv;
  d->nc = p->nc;
  d->nh = p->nh;
  d->nr = fl_problem_nrows(p);
  d->ncon = p->nc + p->nh;
  if (!(p->dt > 0.0) || !isfinite(p->dt))
    return fl_seterr(FL_ERR_FORMAT, "%s: problem %s has dt = %g, expected > 0", nm, p->name, p->dt);

  // diag(A) and the scaling D = diag(A)^-1/2
  d->Adiag = fl_malloc(((size_t)d->nv + 1) * sizeof(double));
  d->Dsc = fl_malloc(((size_t)d->nv + 1) * sizeof(double));
  d->part = fl_calloc((size_t)d->nv + 1, 1);
  if (!d->Adiag || !d->Dsc || !d->part) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory", nm);
  for (fl_int i = 0; i < d->nv; i++) {
    double a = fl_csr_get(p->A, i, i);
    if (!(a > 0.0) || !isfinite(a))
      return fl_seterr(FL_ERR_NOT_SPD, "%s: problem %s: A(%d,%d) = %g, expected > 0", nm,
                       p->name, (int)i, (int)i, a);
    d->Adiag[i] = a;
    d->Dsc[i] = 1.0 / sqrt(a);
  }

  FL_TRY(setup_blocks(d, p, nm));
  FL_TRY(setup_regularization(d, p, o, nm));

  // participating dofs: every dof of a clique that some constraint touches (others get v*)
  for (fl_int k = 0; k < d->ncon; k++)
    for (fl_int q = d->dptr[k]; q < d->dptr[k + 1]; q++) d->part[d->dof[q]] = 1;
  if (p->ncl > 0 && p->clique_ptr && p->clique_dof && p->dof_clique) {
    for (fl_int c = 0; c < p->ncl; c++) {
      int any = 0;
      for (fl_int q = p->clique_ptr[c]; q < p->clique_ptr[c + 1]; q++)
        any |= d->part[p->clique_dof[q]];
      for (fl_int q = p->clique_ptr[c]; q < p->clique_ptr[c + 1]; q++)
        d->part[p->clique_dof[q]] = (unsigned char)any;
    }
  } else {
    // without a clique partition A may couple any dofs: every dof takes part
    memset(d->part, 1, (size_t)d->nv);
  }

  // linear solver
  // auto: dense for small nv, and also where the constraints couple so many dofs that the
  // sparse path's map of block pairs into H (4 bytes a pair) would outgrow the dense matrix
  // (8 nv^2 bytes) several times over: H is dense then anyway (a lifted local problem, whose
  // J = P L has dense rows, docs/lift.md)
  double npairs = 0.0;
  for (fl_int k = 0; k < d->ncon; k++) {
    double m = (double)(d->dptr[k + 1] - d->dptr[k]);
    npairs += 0.5 * m * (m + 1.0);
  }
  d->dense = o->linear == LIN_DENSE ||
             (o->linear == LIN_AUTO &&
              (d->nv <= o->dense_max || npairs > 4.0 * (double)d->nv * (double)d->nv));
  if (d->dense) {
    d->Hd = fl_malloc(((size_t)d->nv * (size_t)d->nv + 1) * sizeof(double));
    if (!d->Hd)
      return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (dense %d x %d Hessian)", nm,
                       (int)d->nv, (int)d->nv);
  } else {
    // auto: the PCG inner solve from pcg_min dofs on (sap_pcg.c; docs/sap.md section 2.5)
    int pcg = o->linear == LIN_PCG ||
              (o->linear == LIN_AUTO && o->pcg_min > 0 && d->nv >= o->pcg_min);
    FL_TRY(setup_cholmod(s, d, p, o, nm, pcg));
    if (pcg) FL_TRY(fl__sap_pcg_setup(d, o, nm));
  }

  // scratch of one solve: 14 nv + 6 nr + 2 (9 nc + nh) doubles, ncon ints, two block buffers
  size_t nd = 14 * (size_t)d->nv + 6 * (size_t)d->nr + 18 * (size_t)d->nc + 2 * (size_t)d->nh +
              (size_t)d->mmax * (size_t)d->mmax + 3 * (size_t)d->mmax + 64;
  d->arena_bytes = nd * sizeof(double) + 2 * ((size_t)d->ncon + 1) * sizeof(int) + 256;
  // sap.ldl: the row lists of a simplicial factor's pattern (rows' start, each entry's column and
  // position in L) and the factorization's dense vector, made again by each solve
  d->ldl_nnz = 0;
  if (!d->dense && d->L && !d->L->is_super && d->perm && d->L->ColCount) {
    const int *cc = d->L->ColCount;
    size_t lnz = 0;
    for (fl_int j = 0; j < d->nv; j++) lnz += (size_t)cc[j];
    d->ldl_nnz = lnz;
    d->arena_bytes += ((size_t)d->nv + 2 + 2 * lnz) * sizeof(int) +
                      ((size_t)d->nv + 1) * sizeof(double) + 64;
  }
  FL_TRY(fl_solver_arena_reserve(s, d->arena_bytes));
  return FL_OK;
}

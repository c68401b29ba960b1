// SPDX-License-Identifier: Apache-2.0
/* pgs.c: projected Gauss-Seidel on the common contact model (SOLVERS.md section 2), and the
 * relaxation machinery it shares with jacobi.c (relax.h).
 *
 * One iteration is one sweep over the contacts and bilateral rows in the chosen order. Per
 * contact i the local problem on the 3x3 block W_ii (+ R_n on the normal) is relaxed:
 *
 *   "nf" (default), normal then friction:
 *     gamma_n <- max(0, gamma_n - (u_n - vhat_n + R_n gamma_n) / (W_nn + R_n))
 *     u_t     <- u_t + W_tn dgamma_n                     (own effect of the normal change)
 *     gamma_t <- P_disk(mu gamma_n)(gamma_t - u_t / lambda_max(W_tt))
 *   The tangential step is a scalar multiple of u_t: a matrix step W_tt^-1 u_t followed by a
 *   Euclidean projection would have the wrong fixed point (u_t not opposite to gamma_t) when
 *   W_tt is anisotropic. A fixed point is a Coulomb solution (De Saxce residual 0).
 *
 *   "block": gamma <- P_K(gamma - rho_i uhat_i), rho_i = 3 / trace(W_ii + R_n), with De
 *   Saxce's uhat; its fixed points are exactly the zeros of the natural map.
 *
 * Over-relaxation: gamma <- P_K(gamma + omega (gamma_new - gamma)) (P_K is the identity for
 * omega <= 1). Bilateral row h: gamma_h <- clamp(gamma_h - res_h / (W_hh + c_h), lo_h, hi_h),
 * res_h = J_h v + b_h + g0_h/dt + c_h gamma_h, relaxed the same way.
 *
 * After each item, global problems update v += (J A^-1)_r^T dgamma_r (a sweep costs O(nnz of
 * J A^-1)); local problems read u_i = W_i gamma + q_i from W's rows.
 *
 * Own residual (what abs_tol tests): the exact natural-map residual with De Saxce's correction
 * of the iterate after the sweep, ||gamma - P_K(gamma - uhat)||_2 over contacts with rho = 1,
 * plus the bilateral rows' natural map gamma_h - clamp(gamma_h - res_h), normalized as the
 * `norm` option says. It costs one product u = J v + b (or W gamma + q) per sweep. With the
 * same normalization it equals fl_metrics.natmap on problems without bilateral rows.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fl_contact_ops.h"
#include "../problems/fl_rig6.h"
#include "local_kit.h"
#include "relax.h"


// a run of 6 written out (gcc -O2 keeps the loop and its counter otherwise); terms in order
#define DOT6(acc, a, x)                                                                          \
  do {                                                                                           \
    acc += (a)[0] * (x)[0];                                                                      \
    acc += (a)[1] * (x)[1];                                                                      \
    acc += (a)[2] * (x)[2];                                                                      \
    acc += (a)[3] * (x)[3];                                                                      \
    acc += (a)[4] * (x)[4];                                                                      \
    acc += (a)[5] * (x)[5];                                                                      \
  } while (0)
/* x[0..5] += s a[0..5] two entries at a time: each entry gets the same rounded product and
 * sum as the scalar statement x[k] += s * a[k] (no fused multiply-add on either path) */
typedef double v2d __attribute__((vector_size(16), aligned(8), may_alias));
static inline void axpy6(double *x, double s, const double *a) {
  v2d sv = {s, s};
  v2d *xv = (v2d *)x;
  const v2d *av = (const v2d *)a;
  v2d x0 = xv[0] + sv * av[0], x1 = xv[1] + sv * av[1], x2 = xv[2] + sv * av[2];
  xv[0] = x0, xv[1] = x1, xv[2] = x2;
}
#define AXPY6(x, s, a) axpy6((x), (s), (a))


/* u = J v (global problems) as fl_csr_gemv(J, 1, v, 0, u) makes it, to the bit: the rows of the
 * contacts with runs (pgs's find_runs) by DOT6 from +0 in column order, the others by their
 * column indices; alpha s + 0 as the product writes it */
static void relax_Jv(const fl__relax *r, const double *v, double *u) {
  if (!r->run) {
    fl_csr_gemv(r->J, 1.0, v, 0.0, u);
    return;
  }
  const fl_csr *J = r->J;
  for (fl_int i = 0; i < r->nc; i++) {
    fl_int d1 = r->run[2 * i], d2 = r->run[2 * i + 1];
    for (int c = 0; c < 3; c++) {
      fl_int row = 3 * i + c;
      double acc = 0;
      if (d1 < 0) {
        acc = fl__row_dot(J, row, v);
      } else {
        const double *j = J->val + J->rowptr[row];
        DOT6(acc, j, v + d1);
        if (d2 >= 0) DOT6(acc, j + 6, v + d2);
      }
      u[row] = 1.0 * acc + 0.0;
    }
  }
  for (fl_int row = 3 * r->nc; row < r->nrow; row++) u[row] = 1.0 * fl__row_dot(J, row, v) + 0.0;
}


/* v += B^T gamma (global problems) as fl_csr_gemtv(B, 1, gamma, 1, v) makes it, to the bit:
 * rows in order, zero impulses skipped, the runs' rows by AXPY6 */
static void relax_BTg(const fl__relax *r, const double *gamma, double *v) {
  if (!r->run) {
    fl_csr_gemtv(r->B, 1.0, gamma, 1.0, v);
    return;
  }
  const fl_csr *B = r->B;
  for (fl_int k = 0; k < r->nv; k++) v[k] = 1.0 * v[k];
  for (fl_int i = 0; i < r->nc; i++) {
    fl_int d1 = r->run[2 * i], d2 = r->run[2 * i + 1];
    for (int c = 0; c < 3; c++) {
      fl_int row = 3 * i + c;
      double g = 1.0 * gamma[row];
      if (g == 0) continue;
      if (d1 < 0) {
        fl__row_axpy(B, row, g, v);
        continue;
      }
      const double *b = B->val + B->rowptr[row];
      AXPY6(v + d1, g, b);
      if (d2 >= 0) AXPY6(v + d2, g, b + 6);
    }
  }
  for (fl_int row = 3 * r->nc; row < r->nrow; row++) {
    double g = 1.0 * gamma[row];
    if (g != 0) fl__row_axpy(B, row, g, v);
  }
}


//---- shared relaxation machinery ----

/* counts the most constraints sharing a clique: global, per dof the items whose rows of
 * J A^-1 touch it (those rows span whole cliques); local, per block column of W the block rows
 * with a nonzero block there (= blocks per block row, W being symmetric) */
static int count_per_clique(fl_solver *s, fl__relax *r) {
  size_t mark = fl_arena_mark(&s->arena);
  fl_int n = r->global ? r->nv : r->nc;
  fl_int *last = FL_ALLOC(&s->arena, n > 0 ? n : 1, fl_int);
  fl_int *cnt = FL_ALLOC(&s->arena, n > 0 ? n : 1, fl_int);
  if (!last || !cnt) return FL_ERR_NOMEM;
  for (fl_int j = 0; j < n; j++) {
    last[j] = -1;
    cnt[j] = 0;
  }
  const fl_csr *m = r->global ? r->B : r->W;
  fl_int nitem = r->global ? r->nc + r->nh : r->nc;
  int best = 1;
  for (fl_int it = 0; it < nitem; it++) {
    fl_int r0 = it < r->nc ? 3 * it : 3 * r->nc + (it - r->nc);
    fl_int r1 = it < r->nc ? r0 + 3 : r0 + 1;
    for (fl_int row = r0; row < r1; row++) {
      for (fl_int k = m->rowptr[row]; k < m->rowptr[row + 1]; k++) {
        fl_int j = r->global ? m->col[k] : m->col[k] / 3;
        if (last[j] == it || m->val[k] == 0.0) continue;
        last[j] = it;
        if (++cnt[j] > best) best = cnt[j];
      }
    }
  }
  fl_arena_release(&s->arena, mark);
  r->max_per_clique = best;
  return FL_OK;
}


static int row_runs(const fl_csr *m, fl_int r, fl_int *d1, fl_int *d2);


/* Global problems of rigid bodies alone: every clique six contiguous ascending dofs whose
 * Cholesky factor has a rigid body's zeros, every contact's three rows one or two whole
 * cliques (ascending, each with a nonzero entry) with the same columns, no bilateral rows.
 * Then B = J A^-1 has J's pattern and is made here with the operations of fl_dynamics'
 * row-by-row path (each clique's part of +0 + J_r solved with the factor's nonzeros), and
 * the diagonal blocks of W with those of fl_dynamics_delassus_blocks (the symmetrized dots in
 * column order), to the bit, without its incidence tables, and the runs of pgs's find_runs
 * (from the arena). 1 when made (r->Bown, r->B, r->Wd, r->run),
 * 0 when the problem is of another kind (the general set-up then runs and reports any error
 * in it), FL_ERR_NOMEM. */
static int rigid_setup(fl__relax *r, const fl_problem *p, fl_arena *arena) {
  if (!fl__pgs_runs || p->nh > 0 || r->nc == 0 || p->ncl <= 0 || !p->A || !p->J ||
      !p->clique_ptr || !p->clique_dof || !p->dof_clique || p->A->nrow != p->nv ||
      p->J->nrow != r->nrow || p->J->ncol != p->nv)
    return 0;
  const fl_csr *A = p->A, *J = p->J;
  fl_int nv = p->nv, ncl = p->ncl;
  fl_int *first = malloc(sizeof(fl_int) * (size_t)(nv + 1)); // clique starting at a dof, or -1
  double *L = malloc(sizeof(double) * 36 * (size_t)ncl);
  fl_csr *B = NULL;
  int ok = first && L;
  for (fl_int d = 0; ok && d < nv; d++) first[d] = -1;
  // the cliques and their factors
  for (fl_int c = 0; ok && c < ncl; c++) {
    fl_int c0 = p->clique_ptr[c], d0 = c0 >= 0 ? p->clique_dof[c0] : -1;
    ok = p->clique_ptr[c + 1] - c0 == 6 && d0 >= 0 && d0 + 6 <= nv;
    for (int k = 0; ok && k < 6; k++)
      ok = p->clique_dof[c0 + k] == d0 + k && p->dof_clique[d0 + k] == c;
    if (!ok) break;
    first[d0] = c;
    double *Lc = L + 36 * c;
    for (int k = 0; k < 36; k++) Lc[k] = 0.0;
    for (int k = 0; ok && k < 6; k++)
      for (fl_int e = A->rowptr[d0 + k]; ok && e < A->rowptr[d0 + k + 1]; e++) {
        fl_int col = A->col[e];
        ok = col >= d0 && col < d0 + 6;
        if (ok) Lc[6 * k + (col - d0)] = A->val[e];
      }
    if (!ok || fl_chol_factor(Lc, 6) < 0) {
      ok = 0;
      break;
    }
    ok = Lc[6] == 0.0 && Lc[12] == 0.0 && Lc[13] == 0.0;
    for (int i = 3; i < 6; i++)
      for (int k = 0; k < 3; k++) ok = ok && Lc[6 * i + k] == 0.0;
  }
  // the rows: one or two whole cliques, each touched by a nonzero, the same for a contact's three
  for (fl_int i = 0; ok && i < r->nc; i++) {
    fl_int d1, d2, k0 = J->rowptr[3 * i], n = J->rowptr[3 * i + 1] - k0;
    ok = row_runs(J, 3 * i, &d1, &d2) && d1 >= 0 && d1 + 6 <= nv && first[d1] >= 0 &&
         (d2 < 0 || (d2 + 6 <= nv && first[d2] > first[d1]));
    for (int c = 1; ok && c < 3; c++) {
      fl_int e0 = J->rowptr[3 * i + c];
      ok = J->rowptr[3 * i + c + 1] - e0 == n &&
           !memcmp(J->col + e0, J->col + k0, (size_t)n * sizeof(fl_int));
    }
    for (int c = 0; ok && c < 3; c++)
      for (fl_int s0 = 0; ok && s0 < n; s0 += 6) {
        const double *x = J->val + J->rowptr[3 * i + c] + s0;
        ok = x[0] != 0.0 || x[1] != 0.0 || x[2] != 0.0 || x[3] != 0.0 || x[4] != 0.0 ||
             x[5] != 0.0;
      }
  }
  fl_int *run = ok ? FL_ALLOC(arena, 2 * r->nc, fl_int) : NULL;
  ok = ok && run;
  if (ok) {
    fl_int nnz = J->rowptr[r->nrow];
    if (fl_csr_alloc(r->nrow, nv, nnz, &B) < 0) {
      free(first);
      free(L);
      return fl_errcode() < 0 ? fl_errcode() : FL_ERR_NOMEM;
    }
    memcpy(B->rowptr, J->rowptr, sizeof(fl_int) * (size_t)(r->nrow + 1));
    memcpy(B->col, J->col, sizeof(fl_int) * (size_t)nnz);
    // +0 + x two entries at a time (the same sums)
    fl_int e = 0;
    for (v2d z = {0.0, 0.0}; e + 1 < nnz; e += 2)
      *(v2d *)(B->val + e) = z + *(const v2d *)(J->val + e);
    for (; e < nnz; e++) B->val[e] = 0.0 + J->val[e];
    for (fl_int row = 0; row < r->nrow; row++) {
      fl_int k0 = J->rowptr[row], n = J->rowptr[row + 1] - k0;
      for (fl_int s0 = 0; s0 < n; s0 += 6)
        fl_rig6_solve(L + 36 * first[J->col[k0 + s0]], B->val + k0 + s0);
    }
    // W_ii: (J_a . B_b + J_b . B_a) / 2 off the diagonal, sums from +0 in column order
    for (fl_int i = 0; i < r->nc; i++) {
      fl_int n = J->rowptr[3 * i + 1] - J->rowptr[3 * i];
      double *W = r->Wd + 9 * i;
      for (int a = 0; a < 3; a++) {
        const double *ja = J->val + J->rowptr[3 * i + a], *ba = B->val + B->rowptr[3 * i + a];
        for (int b = a; b < 3; b++) {
          const double *jb = J->val + J->rowptr[3 * i + b], *bb = B->val + B->rowptr[3 * i + b];
          double s1 = 0.0;
          DOT6(s1, ja, bb);
          if (n == 12) DOT6(s1, ja + 6, bb + 6);
          if (a == b) {
            W[4 * a] = s1;
            continue;
          }
          double s2 = 0.0;
          DOT6(s2, jb, ba);
          if (n == 12) DOT6(s2, jb + 6, ba + 6);
          double w = 0.5 * (s1 + s2);
          W[3 * a + b] = w;
          W[3 * b + a] = w;
        }
      }
    }
    r->Bown = B;
    r->B = B;
    // every contact's rows are its runs (find_runs keeps them)
    for (fl_int i = 0; i < r->nc; i++) {
      fl_int k0 = J->rowptr[3 * i];
      run[2 * i] = J->col[k0];
      run[2 * i + 1] = J->rowptr[3 * i + 1] - k0 == 12 ? J->col[k0 + 6] : -1;
    }
    r->run = run;
  }
  free(first);
  free(L);
  return ok;
}


/* fl__relax_setup without max_per_clique (which only the Jacobi step needs) */
static int relax_setup_core(fl_solver *s, const fl_problem *p, fl__relax *r, int variant,
                            int norm) {
  memset(r, 0, sizeof *r);
  r->p = p;
  r->global = p->kind == FL_PROBLEM_GLOBAL;
  r->nc = p->nc;
  r->nh = p->nh;
  r->nrow = fl_problem_nrows(p);
  r->nv = p->nv;
  r->variant = variant;
  r->norm = norm;
  const char *nm = s->ops->name;

  if (!r->global && p->nh > 0)
    return fl_seterr(FL_ERR_UNSUPPORTED, "solver %s: local problem %s has bilateral rows", nm,
                     p->name);
  if (r->global && r->nrow > 0 && (!p->J || p->J->nrow != r->nrow || p->J->ncol != p->nv))
    return fl_seterr(FL_ERR_INVAL, "solver %s: problem %s: J missing or not %d x %d", nm,
                     p->name, (int)r->nrow, (int)p->nv);
  if (!r->global && r->nc > 0 && (!p->W || !p->q || p->W->nrow != 3 * r->nc))
    return fl_seterr(FL_ERR_INVAL, "solver %s: local problem %s: W or q missing or not %d rows",
                     nm, p->name, (int)(3 * r->nc));

  // arena: every array of the solve, plus the setup counters, plus alignment slack
  fl_int nn = r->nv > r->nc ? r->nv : r->nc;
  size_t bytes = sizeof(double) * (size_t)(14 * r->nc + r->nh + 2 * r->nrow) +
                 sizeof(int) * (size_t)r->nc + sizeof(fl_int) * (size_t)(r->nc + r->nh) +
                 sizeof(fl_int) * (size_t)(2 * nn + 2) + sizeof(fl_int) * (size_t)(2 * r->nc) +
                 16 * 64;
  FL_TRY(fl_solver_arena_reserve(s, bytes));
  fl_arena *a = &s->arena;
  r->Wd = FL_ALLOC(a, 9 * r->nc + 1, double);
  r->Rn = FL_ALLOC(a, r->nc + 1, double);
  r->vhat = FL_ALLOC(a, r->nc + 1, double);
  r->lt = FL_ALLOC(a, r->nc + 1, double);
  r->rho = FL_ALLOC(a, r->nc + 1, double);
  r->Wh = FL_ALLOC(a, r->nh + 1, double);
  r->u = FL_ALLOC(a, r->nrow + 1, double);
  r->dg = FL_ALLOC(a, r->nrow + 1, double);
  r->mode = FL_ALLOC(a, r->nc + 1, int);
  r->order = FL_ALLOC(a, r->nc + r->nh + 1, fl_int);
  if (!r->Wd || !r->Rn || !r->vhat || !r->lt || !r->rho || !r->Wh || !r->u || !r->dg ||
      !r->mode || !r->order)
    return fl_seterr(FL_ERR_NOMEM, "solver %s: arena too small (%zu bytes)", nm, bytes);

  // the diagonal blocks of W
  if (r->global) {
    int fast = rigid_setup(r, p, a);
    if (fast < 0) return fast;
    if (!fast) {
      FL_TRY(fl_dynamics_create(p, &r->dyn));
      r->B = fl_dynamics_JAinv(r->dyn);
      if (!r->B) return fl_errcode() < 0 ? fl_errcode() : FL_ERR_NOMEM;
      FL_TRY(fl_dynamics_delassus_blocks(r->dyn, r->Wd, r->Wh));
    }
    r->J = p->J;
    r->cq = p->b;
  } else {
    for (fl_int i = 0; i < r->nc; i++)
      for (int a3 = 0; a3 < 3; a3++)
        for (int b3 = 0; b3 < 3; b3++)
          r->Wd[9 * i + 3 * a3 + b3] = fl_csr_get(p->W, 3 * i + a3, 3 * i + b3);
    r->W = p->W;
    r->cq = p->q;
  }

  // normal law, steps
  for (fl_int i = 0; i < r->nc; i++) {
    fl_problem_normal_law(p, i, &r->Rn[i], &r->vhat[i]);
    double *w = r->Wd + 9 * i;
    w[0] += r->Rn[i];
    double lm = fl_hd_eig2max(w[4], 0.5 * (w[5] + w[7]), w[8]);
    r->lt[i] = lm > 0 ? 1.0 / lm : 0.0;
    double tr = w[0] + w[4] + w[8];
    r->rho[i] = tr > 0 ? 3.0 / tr : 0.0;
    r->mode[i] = 0;
  }
  for (fl_int h = 0; h < r->nh; h++) r->Wh[h] += p->compliance ? p->compliance[h] : 0.0;

  // ||q|| of the local form: q = J v* + b - (vhat_n, 0, 0) over contact rows
  double nq = 0;
  if (r->global) {
    if (r->nrow > 0) relax_Jv(r, p->vstar, r->u);
    for (fl_int k = 0; k < 3 * r->nc; k++) {
      double qk = r->u[k] + (r->cq ? r->cq[k] : 0.0) - (k % 3 == 0 ? r->vhat[k / 3] : 0.0);
      nq += qk * qk;
    }
  } else {
    for (fl_int k = 0; k < 3 * r->nc; k++) nq += r->cq[k] * r->cq[k];
  }
  r->norm_q = sqrt(nq);
  for (fl_int k = 0; k < r->nc + r->nh; k++) r->order[k] = k;
  r->max_per_clique = 1;
  return FL_OK;
}


int fl__relax_setup(fl_solver *s, const fl_problem *p, fl__relax *r, int variant, int norm) {
  FL_TRY(relax_setup_core(s, p, r, variant, norm));
  return count_per_clique(s, r);
}


void fl__relax_free(fl__relax *r) {
  if (!r) return;
  free(r->colour_ptr);
  free(r->colour_items);
  r->colour_ptr = r->colour_items = NULL;
  r->ncolour = 0;
  fl_csr_free(r->BT);
  r->BT = NULL;
  fl_dynamics_free(r->dyn);
  r->dyn = NULL;
  fl_csr_free(r->Bown);
  r->Bown = NULL;
  r->B = NULL;
}


int fl__relax_bt(fl__relax *r, const fl_csr **bt) {
  *bt = NULL;
  if (!r->global || r->nrow <= 0 || !r->B) return FL_OK;
  if (!r->BT) FL_TRY(fl_csr_transpose(r->B, &r->BT));
  *bt = r->BT;
  return FL_OK;
}


/* rows of item it: [*r0, *r1) */
static void item_rows(const fl__relax *r, fl_int it, fl_int *r0, fl_int *r1) {
  *r0 = it < r->nc ? 3 * it : 3 * r->nc + (it - r->nc);
  *r1 = it < r->nc ? *r0 + 3 : *r0 + 1;
}


int fl__relax_colour(fl__relax *r) {
  fl_int nitem = r->nc + r->nh;
  free(r->colour_ptr);
  free(r->colour_items);
  r->colour_ptr = r->colour_items = NULL;
  r->ncolour = 0;
  // global: the transpose's pattern gives, per dof, the rows (hence items) touching it
  const fl_csr *bt;
  FL_TRY(fl__relax_bt(r, &bt));
  fl_int *colour = malloc(sizeof(fl_int) * (size_t)(nitem + 1));
  fl_int *mark = malloc(sizeof(fl_int) * (size_t)(nitem + 1));
  fl_int *cnt = calloc((size_t)(nitem + 2), sizeof(fl_int));
  if (!colour || !mark || !cnt) {
    free(colour);
    free(mark);
    free(cnt);
    return fl_seterr(FL_ERR_NOMEM, "colouring %d items: out of memory", (int)nitem);
  }
  int nc = 0;
  for (fl_int it = 0; it < nitem; it++) mark[it] = -1;
  for (fl_int it = 0; it < nitem; it++) {
    fl_int r0, r1;
    item_rows(r, it, &r0, &r1);
    // mark the colours of the neighbours already coloured (items before it)
    for (fl_int row = r0; row < r1; row++) {
      if (r->global) {
        for (fl_int k = r->B->rowptr[row]; k < r->B->rowptr[row + 1]; k++) {
          fl_int j = r->B->col[k];
          for (fl_int q = bt->rowptr[j]; q < bt->rowptr[j + 1]; q++) {
            fl_int row2 = bt->col[q];
            fl_int it2 = row2 < 3 * r->nc ? row2 / 3 : r->nc + (row2 - 3 * r->nc);
            if (it2 < it) mark[colour[it2]] = it;
          }
        }
      } else {
        for (fl_int k = r->W->rowptr[row]; k < r->W->rowptr[row + 1]; k++) {
          fl_int c2 = r->W->col[k];
          fl_int it2 = c2 < 3 * r->nc ? c2 / 3 : r->nc + (c2 - 3 * r->nc);
          if (it2 < it && r->W->val[k] != 0.0) mark[colour[it2]] = it;
        }
      }
    }
    int c = 0;
    while (c < nc && mark[c] == it) c++;
    if (c == nc) nc++;
    colour[it] = c;
    cnt[c + 1]++;
  }
  free(mark);
  r->colour_ptr = malloc(sizeof(fl_int) * (size_t)(nc + 1));
  r->colour_items = malloc(sizeof(fl_int) * (size_t)(nitem + 1));
  if (!r->colour_ptr || !r->colour_items) {
    free(colour);
    free(cnt);
    return fl_seterr(FL_ERR_NOMEM, "colouring %d items: out of memory", (int)nitem);
  }
  for (int c = 0; c < nc; c++) cnt[c + 1] += cnt[c];
  for (int c = 0; c <= nc; c++) r->colour_ptr[c] = cnt[c];
  for (fl_int it = 0; it < nitem; it++) r->colour_items[cnt[colour[it]]++] = it;
  for (fl_int k = 0; k < nitem; k++) r->order[k] = r->colour_items[k];
  r->ncolour = nc;
  free(colour);
  free(cnt);
  return FL_OK;
}


void fl__relax_start(const fl__relax *r, double *v, const double *gamma) {
  if (!r->global) return;
  memcpy(v, r->p->vstar, (size_t)r->nv * sizeof *v);
  if (r->nrow > 0) relax_BTg(r, gamma, v);
}


void fl__relax_contact(const fl__relax *r, fl_int i, const double u[3], const double g[3],
                       double out[3]) {
  double mu = r->p->mu[i];
  if (r->variant == FL_RELAX_BLOCK)
    fl_hd_relax_block(mu, r->Rn[i], r->vhat[i], r->rho[i], u, g, out);
  else
    fl_hd_relax_nf(r->Wd + 9 * i, mu, r->Rn[i], r->vhat[i], r->lt[i], u, g, out);
}


double fl__relax_clamp_row(const fl__relax *r, fl_int h, double x) {
  return fl_hd_clamp(x, r->p->lo ? r->p->lo[h] : -INFINITY, r->p->hi ? r->p->hi[h] : INFINITY);
}


/* res_h = J_h v + b_h + g0_h/dt + c_h gamma_h from u_h = J_h v + b_h */
static double row_res(const fl__relax *r, fl_int h, double u_h, double g_h) {
  const fl_problem *p = r->p;
  double g0 = p->g0 ? p->g0[h] : 0.0, c = p->compliance ? p->compliance[h] : 0.0;
  return u_h + g0 / p->dt + c * g_h;
}


double fl__relax_row(const fl__relax *r, fl_int h, double u_h, double g_h) {
  const fl_problem *p = r->p;
  return fl_hd_relax_row(r->Wh[h], p->g0 ? p->g0[h] / p->dt : 0.0,
                         p->compliance ? p->compliance[h] : 0.0, p->lo ? p->lo[h] : -INFINITY,
                         p->hi ? p->hi[h] : INFINITY, u_h, g_h);
}


void fl__relax_apply_omega(const fl__relax *r, fl_int i, double omega, const double g[3],
                           double nw[3]) {
  fl_hd_apply_omega(r->p->mu[i], omega, g, nw);
}


double fl__relax_normalize(const fl__relax *r, double raw, double ng2, double nw2) {
  return raw / fl__merit_divisor(r->norm, r->norm_q, ng2, nw2);
}


void fl__relax_residual(fl__relax *r, const double *v, const double *gamma, fl_iter_stat *st) {
  // u of every row from the current iterate
  if (r->nrow > 0) {
    if (r->global) relax_Jv(r, v, r->u);
    else fl_csr_gemv(r->W, 1.0, gamma, 0.0, r->u);
    if (r->cq)
      for (fl_int k = 0; k < r->nrow; k++) r->u[k] += r->cq[k];
  }
  double sum = 0, ng = 0, nw = 0;
  int nact = 0, nstick = 0, nslip = 0, nchg = 0;
  for (fl_int i = 0; i < r->nc; i++) {
    const double *g = gamma + 3 * i, *u = r->u + 3 * i;
    double wn;
    int m;
    sum += fl_hd_natmap2(r->p->mu[i], r->Rn[i], r->vhat[i], u, g, &wn, &m);
    ng += g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
    nw += wn * wn + u[1] * u[1] + u[2] * u[2];
    if (m > 0) {
      nact++;
      if (m == 1) nstick++;
      else nslip++;
    }
    if (m != r->mode[i]) nchg++;
    r->mode[i] = m;
  }
  for (fl_int h = 0; h < r->nh; h++) {
    double gh = gamma[3 * r->nc + h];
    double d = gh - fl__relax_clamp_row(r, h, gh - row_res(r, h, r->u[3 * r->nc + h], gh));
    sum += d * d;
  }
  st->error = fl__relax_normalize(r, sqrt(sum), ng, nw);
  st->nactive = nact;
  st->nstick = nstick;
  st->nslip = nslip;
  st->nchange = nchg;
}


//---- pgs ----

enum { ORDER_NATURAL = 0, ORDER_REVERSE = 1, ORDER_SYMMETRIC = 2, ORDER_SHUFFLE = 3, ORDER_COLOUR = 4 };

typedef struct pgs_opts {
  double omega;
  int local;
  int order;
  int residual_every; /* own residual (and the stopping test) every k sweeps and at the last */
  double step_tol;    /* stop when a sweep's ||dgamma|| <= step_tol ||gamma|| (0: never) */
  int accel;          /* ACCEL_NONE, ACCEL_NNCG or ACCEL_ANDERSON */
  int accel_m;        /* Anderson: past iterates kept */
  int accel_guard;    /* GUARD_RESIDUAL, GUARD_STEP or GUARD_NONE */
} pgs_opts;

enum { ACCEL_NONE = 0, ACCEL_NNCG = 1, ACCEL_ANDERSON = 2 };
enum { GUARD_RESIDUAL = 0, GUARD_STEP = 1, GUARD_NONE = 2 };

/* accelerated sweeps' arrays (malloc'd by pgs_setup when accel != none; NULL otherwise);
 * nrow-long: x (the iterate before the sweep), gs (the plain sweep's answer), p (NNCG's
 * direction), f (Anderson: the last sweep step); nv-long (global problems): vx, vs, bp, the
 * velocities of x, of gs and of p (B^T p); Anderson's window: dF, dG (m x nrow), dV
 * (m x nv), their Gram matrix dF^T dF (m x m), rhs (m) and chol (m x m) for its solve */
typedef struct pgs_accel {
  double *x, *gs, *p, *f, *vx, *vs, *bp;
  double *dF, *dG, *dV, *gram, *rhs, *chol;
  int m;
} pgs_accel;

typedef struct pgs_data {
  fl__relax r;
  pgs_accel a;
  long n_extrap, n_refused; /* accel: extrapolations kept, and refused by the guard (or
                               dropped sweeps of the step guard), over the last solve */
  uint64_t rng; /* splitmix64 state for the shuffle, seeded from the common seed */
} pgs_data;

static const fl_option_desc pgs_table[] = {
  {"omega", FL_OPT_REAL, offsetof(pgs_opts, omega), 1e-6, 1.999999, 1.0, NULL,
   "over-relaxation: gamma <- P_K(gamma + omega (gamma_new - gamma)), in (0, 2)"},
  {"local", FL_OPT_ENUM, offsetof(pgs_opts, local), 0, 1, FL_RELAX_NF, "nf|block",
   "local update: nf = normal then friction, block = P_K(gamma - rho uhat), rho = 3/tr W_ii"},
  {"order", FL_OPT_ENUM, offsetof(pgs_opts, order), 0, 4, ORDER_NATURAL,
   "natural|reverse|symmetric|shuffle|colour",
   "sweep order; symmetric = forward then backward in one iteration; shuffle = a new random "
   "permutation every sweep (common seed); colour = by colour of a greedy colouring of the "
   "contact graph (the order pgs-cuda runs in parallel)"},
  {"residual_every", FL_OPT_INT, offsetof(pgs_opts, residual_every), 1, 1000000, 1, NULL,
   "evaluate the own residual, and so test for convergence, after every k-th sweep and the "
   "last of the budget only (the residual costs about one sweep; the iterates are the same, "
   "a converged solve may stop up to k - 1 sweeps later)"},
  {"step_tol", FL_OPT_REAL, offsetof(pgs_opts, step_tol), 0, 1, 0, NULL,
   "stop after a sweep that changed the impulses by at most step_tol times their size "
   "(2-norms; its residual is then evaluated and recorded, reason CONVERGED_STAGNATION_OK); "
   "0 = never (a warm-started step whose impulses settled stops early)"},
  {"accel", FL_OPT_ENUM, offsetof(pgs_opts, accel), 0, 2, ACCEL_NONE, "none|nncg|anderson",
   "acceleration of the sweeps: nncg = nonsmooth nonlinear conjugate gradients (the sweep's "
   "step as the negative gradient, Fletcher-Reeves beta, restart when beta > 1); anderson = "
   "Anderson mixing of the last accel_m sweeps; the extrapolated impulses are projected on "
   "the cones (docs/pgs-accel.md)"},
  {"accel_m", FL_OPT_INT, offsetof(pgs_opts, accel_m), 1, 50, 5, NULL,
   "Anderson: how many past sweeps the mixing uses"},
  {"accel_guard", FL_OPT_ENUM, offsetof(pgs_opts, accel_guard), 0, 2, GUARD_RESIDUAL,
   "residual|step|none",
   "residual = keep an extrapolated iterate only when its own residual is below the last "
   "iterate's, else the plain sweep and a restart (the residual is then evaluated every "
   "sweep, a second time on a refusal; residual_every is not used); step (nncg only) = go "
   "back to the plain sweep's answer when the sweep from an extrapolated iterate made a "
   "larger step than the sweep before it (free; the residual every residual_every sweeps); "
   "none = keep every extrapolation"},
  {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}};


static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}


/* d1 (and d2) when the n columns of row r of m are one run of 6 dofs from d1 (n = 6) or two,
 * from d1 < d2 (n = 12); 0 when not */
static int row_runs(const fl_csr *m, fl_int r, fl_int *d1, fl_int *d2) {
  fl_int k0 = m->rowptr[r], n = m->rowptr[r + 1] - k0;
  if (n != 6 && n != 12) return 0;
  const fl_int *c = m->col + k0;
  for (int k = 1; k < 6; k++)
    if (c[k] != c[0] + k) return 0;
  *d1 = c[0];
  *d2 = -1;
  if (n == 12) {
    for (int k = 7; k < 12; k++)
      if (c[k] != c[6] + k - 6) return 0;
    if (c[6] <= c[0]) return 0;
    *d2 = c[6];
  }
  return 1;
}


/* the contacts whose rows in J and B all are the same runs of 6 dofs (a rigid body or two):
 * their sweeps index v directly */
int fl__pgs_runs = 1;

static int find_runs(fl_solver *s, fl__relax *r) {
  if (!r->global || r->nc == 0 || !fl__pgs_runs || r->run) return FL_OK;
  r->run = FL_ALLOC(&s->arena, 2 * r->nc, fl_int);
  if (!r->run) return fl_seterr(FL_ERR_NOMEM, "solver pgs: arena too small");
  for (fl_int i = 0; i < r->nc; i++) {
    fl_int d1, d2, r0 = 3 * i, k0 = r->J->rowptr[r0], n = r->J->rowptr[r0 + 1] - k0;
    int ok = row_runs(r->J, r0, &d1, &d2);
    // the other five rows: the same columns as the first
    for (int c = 0; c < 3 && ok; c++) {
      const fl_csr *m[2] = {r->J, r->B};
      for (int q = c == 0; q < 2 && ok; q++) {
        fl_int e0 = m[q]->rowptr[r0 + c];
        ok = m[q]->rowptr[r0 + c + 1] - e0 == n &&
             !memcmp(m[q]->col + e0, r->J->col + k0, (size_t)n * sizeof(fl_int));
      }
    }
    r->run[2 * i] = ok ? d1 : -1;
    r->run[2 * i + 1] = ok ? d2 : -1;
  }
  return FL_OK;
}


static void accel_free(pgs_accel *a) {
  double **b[] = {&a->x, &a->gs, &a->p, &a->f, &a->vx, &a->vs, &a->bp,
                  &a->dF, &a->dG, &a->dV, &a->gram, &a->rhs, &a->chol};
  for (size_t k = 0; k < sizeof b / sizeof b[0]; k++) {
    free(*b[k]);
    *b[k] = NULL;
  }
  a->m = 0;
}


/* the accelerated sweeps' arrays (pgs_accel), outside the arena so that the plain solve's
 * memory is unchanged */
static int accel_alloc(pgs_data *d, const pgs_opts *o) {
  pgs_accel *a = &d->a;
  accel_free(a);
  if (o->accel == ACCEL_NONE) return FL_OK;
  const fl__relax *r = &d->r;
  size_t n = (size_t)r->nrow + 1, nv = (size_t)(r->global ? r->nv : 0) + 1;
  size_t m = o->accel == ACCEL_ANDERSON ? (size_t)o->accel_m : 0;
  a->m = (int)m;
  a->x = malloc(n * sizeof(double));
  a->gs = malloc(n * sizeof(double));
  a->p = malloc(n * sizeof(double));
  a->f = malloc(n * sizeof(double));
  a->vx = malloc(nv * sizeof(double));
  a->vs = malloc(nv * sizeof(double));
  a->bp = malloc(nv * sizeof(double));
  int ok = a->x && a->gs && a->p && a->f && a->vx && a->vs && a->bp;
  if (ok && m > 0) {
    a->dF = malloc(m * n * sizeof(double));
    a->dG = malloc(m * n * sizeof(double));
    a->dV = malloc(m * nv * sizeof(double));
    a->gram = malloc(m * m * sizeof(double));
    a->rhs = malloc(m * sizeof(double));
    a->chol = malloc(m * m * sizeof(double));
    ok = a->dF && a->dG && a->dV && a->gram && a->rhs && a->chol;
  }
  if (!ok) {
    accel_free(a);
    return fl_seterr(FL_ERR_NOMEM, "solver pgs: accel: out of memory for %d rows, %d dofs",
                     (int)r->nrow, (int)r->nv);
  }
  return FL_OK;
}


static int pgs_setup(fl_solver *s, const fl_problem *p) {
  pgs_data *d = s->data;
  const pgs_opts *o = s->opts;
  FL_TRY(relax_setup_core(s, p, &d->r, o->local, s->common.norm));
  FL_TRY(find_runs(s, &d->r));
  if (o->accel == ACCEL_ANDERSON && o->accel_guard == GUARD_STEP)
    return fl_seterr(FL_ERR_INVAL, "solver pgs: accel_guard=step is for accel=nncg; "
                                   "anderson takes accel_guard=residual or none");
  FL_TRY(accel_alloc(d, o));
  return o->order == ORDER_COLOUR ? fl__relax_colour(&d->r) : FL_OK;
}




/* pgs_item for a contact with runs (find_runs): the same sums in the same order as
 * fl__row_dot and fl__row_axpy over the runs' columns, without the column indices */
static inline __attribute__((always_inline)) double pgs_contact_runs(fl__relax *r, fl_int it,
                                                                      double omega, double *v,
                                                                      double *gamma) {
  fl_int r0 = 3 * it, d1 = r->run[2 * it], d2 = r->run[2 * it + 1];
  const double *jv = r->J->val, *bv = r->B->val;
  double *v1 = v + d1, *v2 = d2 >= 0 ? v + d2 : NULL;
  double u[3], nw[3];
  for (int c = 0; c < 3; c++) {
    const double *j = jv + r->J->rowptr[r0 + c];
    double acc = 0;
    DOT6(acc, j, v1);
    if (v2) DOT6(acc, j + 6, v2);
    u[c] = acc + (r->cq ? r->cq[r0 + c] : 0.0);
  }
  double *g = gamma + r0;
  // fl__relax_contact and fl__relax_apply_omega, inlined
  double mu = r->p->mu[it];
  if (r->variant == FL_RELAX_BLOCK)
    fl_hd_relax_block(mu, r->Rn[it], r->vhat[it], r->rho[it], u, g, nw);
  else
    fl_hd_relax_nf(r->Wd + 9 * it, mu, r->Rn[it], r->vhat[it], r->lt[it], u, g, nw);
  if (omega != 1.0) fl_hd_apply_omega(mu, omega, g, nw);
  double d2s = 0;
  for (int c = 0; c < 3; c++) {
    double dg = nw[c] - g[c];
    if (dg == 0.0) continue;
    g[c] = nw[c];
    d2s += dg * dg;
    const double *b = bv + r->B->rowptr[r0 + c];
    AXPY6(v1, dg, b);
    if (v2) AXPY6(v2, dg, b + 6);
  }
  return d2s;
}


/* relaxes one item (contact or bilateral row) and keeps v = v* + A^-1 J^T gamma; returns
 * ||dgamma||^2 */
static double pgs_item(fl__relax *r, fl_int it, double omega, double *v, double *gamma) {
  if (it < r->nc && r->run && r->run[2 * it] >= 0) return pgs_contact_runs(r, it, omega, v, gamma);
  if (it < r->nc) {
    fl_int r0 = 3 * it;
    double u[3], nw[3];
    for (int c = 0; c < 3; c++)
      u[c] = (r->global ? fl__row_dot(r->J, r0 + c, v) : fl__row_dot(r->W, r0 + c, gamma)) +
             (r->cq ? r->cq[r0 + c] : 0.0);
    double *g = gamma + r0;
    fl__relax_contact(r, it, u, g, nw);
    fl__relax_apply_omega(r, it, omega, g, nw);
    double d2 = 0;
    for (int c = 0; c < 3; c++) {
      double dg = nw[c] - g[c];
      if (dg == 0.0) continue;
      g[c] = nw[c];
      d2 += dg * dg;
      if (r->global) fl__row_axpy(r->B, r0 + c, dg, v);
    }
    return d2;
  }
  fl_int h = it - r->nc, row = 3 * r->nc + h;
  double uh = (r->global ? fl__row_dot(r->J, row, v) : 0.0) + (r->cq ? r->cq[row] : 0.0);
  double g = gamma[row];
  double nw = fl__relax_row(r, h, uh, g);
  if (omega != 1.0) nw = fl__relax_clamp_row(r, h, g + omega * (nw - g));
  double dg = nw - g;
  if (dg == 0.0) return 0.0;
  gamma[row] = nw;
  if (r->global) fl__row_axpy(r->B, row, dg, v);
  return dg * dg;
}


static int pgs_solve_accel(fl_solver *s, double *v, double *gamma, fl_iter_stat *st0);


static int pgs_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  pgs_data *d = s->data;
  const pgs_opts *o = s->opts;
  fl__relax *r = &d->r;
  fl_int nitem = r->nc + r->nh;
  d->rng = (uint64_t)s->common.seed * 0x2545F4914F6CDD1Dull + 1u;
  for (fl_int k = 0; k < nitem; k++)
    r->order[k] = o->order == ORDER_COLOUR ? r->colour_items[k] : k;
  for (fl_int i = 0; i < r->nc; i++) r->mode[i] = 0;

  //---- iteration 0: the guess ----
  fl__relax_start(r, v, gamma);
  s->cur_v = r->global ? v : NULL;
  s->cur_gamma = gamma;
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  fl__relax_residual(r, v, gamma, &st);
  if (o->accel != ACCEL_NONE) {
    d->n_extrap = d->n_refused = 0;
    return pgs_solve_accel(s, v, gamma, &st);
  }
  if (fl_solver_record(s, &st) != 0) return s->reason == FL_REASON_ABORT ? s->abort_code : FL_OK;

  for (int k = 1;; k++) {
    //---- sweep ----
    double d2 = 0;
    if (o->order == ORDER_SHUFFLE) {
      // Fisher-Yates with the solver's own generator
      for (fl_int a = nitem - 1; a > 0; a--) {
        fl_int b = (fl_int)(splitmix64(&d->rng) % (uint64_t)(a + 1));
        fl_int t = r->order[a];
        r->order[a] = r->order[b];
        r->order[b] = t;
      }
    }
    if (o->order != ORDER_REVERSE)
      for (fl_int a = 0; a < nitem; a++) {
        // a contact with runs here, without the call (pgs_item does the same)
        fl_int it = r->order[a];
        d2 += it < r->nc && r->run && r->run[2 * it] >= 0
                  ? pgs_contact_runs(r, it, o->omega, v, gamma)
                  : pgs_item(r, it, o->omega, v, gamma);
      }
    if (o->order == ORDER_REVERSE || o->order == ORDER_SYMMETRIC)
      for (fl_int a = nitem - 1; a >= 0; a--) d2 += pgs_item(r, r->order[a], o->omega, v, gamma);

    //---- record and test ----
    int settled = 0;
    if (o->step_tol > 0 && !s->common.never_stop) {
      double g2 = 0;
      for (fl_int q = 0; q < r->nrow; q++) g2 += gamma[q] * gamma[q];
      settled = d2 <= o->step_tol * o->step_tol * g2;
    }
    if (!settled && k % o->residual_every != 0 && k < s->common.max_iter) continue;
    fl_iter_stat_init(&st, k);
    fl__relax_residual(r, v, gamma, &st);
    st.step = o->omega;
    st.step_norm = sqrt(d2);
    if (fl_solver_record(s, &st) != 0) break;
    if (settled) {
      s->reason = FL_CONVERGED_STAGNATION_OK;
      break;
    }
  }
  return s->reason == FL_REASON_ABORT ? s->abort_code : FL_OK;
}


//---- accelerated sweeps (accel = nncg | anderson) ----

/* one sweep, as pgs_solve's loop makes it; returns ||dgamma||^2 */
static double pgs_sweep(pgs_data *d, const pgs_opts *o, double *v, double *gamma) {
  fl__relax *r = &d->r;
  fl_int nitem = r->nc + r->nh;
  double d2 = 0;
  if (o->order == ORDER_SHUFFLE)
    for (fl_int a = nitem - 1; a > 0; a--) {
      fl_int b = (fl_int)(splitmix64(&d->rng) % (uint64_t)(a + 1));
      fl_int t = r->order[a];
      r->order[a] = r->order[b];
      r->order[b] = t;
    }
  if (o->order != ORDER_REVERSE)
    for (fl_int a = 0; a < nitem; a++) d2 += pgs_item(r, r->order[a], o->omega, v, gamma);
  if (o->order == ORDER_REVERSE || o->order == ORDER_SYMMETRIC)
    for (fl_int a = nitem - 1; a >= 0; a--) d2 += pgs_item(r, r->order[a], o->omega, v, gamma);
  return d2;
}


/* gamma <- its projection on the cones and the rows' bounds; global problems keep
 * v = v* + B^T gamma by adding the rows of B of the entries that moved */
static void accel_project(const fl__relax *r, double *v, double *gamma) {
  for (fl_int i = 0; i < r->nc; i++) {
    double *g = gamma + 3 * i, z[3], mu = r->p->mu[i];
    // well inside the cone (the most): nothing to do, without hypot
    double mgn = mu * g[0];
    if (g[0] >= 0.0 && g[1] * g[1] + g[2] * g[2] <= 0.999 * mgn * mgn) continue;
    fl_hd_cone_project(mu, g, z);
    for (int c = 0; c < 3; c++) {
      double dz = z[c] - g[c];
      if (dz == 0.0) continue;
      g[c] = z[c];
      if (r->global) fl__row_axpy(r->B, 3 * i + c, dz, v);
    }
  }
  for (fl_int h = 0; h < r->nh; h++) {
    fl_int row = 3 * r->nc + h;
    double z = fl__relax_clamp_row(r, h, gamma[row]), dz = z - gamma[row];
    if (dz == 0.0) continue;
    gamma[row] = z;
    if (r->global) fl__row_axpy(r->B, row, dz, v);
  }
}


static double dot(const double *a, const double *b, fl_int n) {
  double s = 0;
  for (fl_int k = 0; k < n; k++) s += a[k] * b[k];
  return s;
}


/* Anderson (type II) on the sweep map G: with f = G(x) - x and the window's differences
 * dF_j = f_{j+1} - f_j, dG_j = G(x_{j+1}) - G(x_j), gamma <- G(x) - dG c where c minimizes
 * ||f - dF c|| (normal equations, Tikhonov 1e-10 of the trace); v the same with dV. Adds the
 * newest pair first. 1 when gamma and v were extrapolated, 0 when not (empty window or a
 * singular system: gamma and v stay the plain sweep's). */
static int anderson_step(pgs_data *d, fl_int nrow, fl_int nv, int *count, double *v,
                         double *gamma) {
  pgs_accel *a = &d->a;
  int m = a->m;
  size_t n = (size_t)nrow + 1, nvv = (size_t)nv + 1;
  // the newest pair, from the last sweep's f and plain answer (a->f, a->gs, a->vs)
  if (*count >= 0) {
    int slot = *count % m;
    double *df = a->dF + slot * n, *dg = a->dG + slot * n, *dv = a->dV + slot * nvv;
    for (fl_int q = 0; q < nrow; q++) {
      double fq = gamma[q] - a->x[q];
      df[q] = fq - a->f[q];
      dg[q] = gamma[q] - a->gs[q];
    }
    for (fl_int k = 0; k < nv; k++) dv[k] = v[k] - a->vs[k];
    int nvalid = *count + 1 < m ? *count + 1 : m;
    for (int j = 0; j < nvalid; j++) {
      double gj = dot(df, a->dF + j * n, nrow);
      a->gram[slot * m + j] = gj;
      a->gram[j * m + slot] = gj;
    }
  }
  // this sweep's f and plain answer, for the next pair
  for (fl_int q = 0; q < nrow; q++) {
    a->f[q] = gamma[q] - a->x[q];
    a->gs[q] = gamma[q];
  }
  if (nv > 0) memcpy(a->vs, v, (size_t)nv * sizeof *v);
  (*count)++;
  int nvalid = *count < m ? *count : m;
  if (*count <= 0 || nvalid == 0) return 0;
  double tr = 0;
  for (int j = 0; j < nvalid; j++) tr += a->gram[j * m + j];
  if (!(tr > 0) || !isfinite(tr)) return 0;
  for (int i = 0; i < nvalid; i++) {
    for (int j = 0; j < nvalid; j++) a->chol[i * nvalid + j] = a->gram[i * m + j];
    a->chol[i * nvalid + i] += 1e-10 * tr;
    a->rhs[i] = dot(a->dF + i * n, a->f, nrow);
  }
  if (fl_chol_factor(a->chol, nvalid) < 0) return 0;
  fl_chol_solve(a->chol, nvalid, a->rhs);
  for (int j = 0; j < nvalid; j++) {
    double c = a->rhs[j];
    if (!isfinite(c)) return 0;
  }
  for (int j = 0; j < nvalid; j++) {
    double c = a->rhs[j];
    const double *dg = a->dG + j * n, *dv = a->dV + j * nvv;
    for (fl_int q = 0; q < nrow; q++) gamma[q] -= c * dg[q];
    for (fl_int k = 0; k < nv; k++) v[k] -= c * dv[k];
  }
  return 1;
}


/* pgs_solve with accel != none: each iteration is one sweep x -> G(x), then an
 * extrapolation projected on the cones. accel_guard = residual: kept only if the own residual
 * fell below the last iterate's, else the plain sweep G(x) and a restart; step (NNCG): when
 * the next sweep's step grows (beta > 1) after an extrapolation, that sweep is dropped and
 * the iterate goes back to the plain G(x) before the extrapolation, and a restart */
static int pgs_solve_accel(fl_solver *s, double *v, double *gamma, fl_iter_stat *st0) {
  pgs_data *d = s->data;
  const pgs_opts *o = s->opts;
  fl__relax *r = &d->r;
  pgs_accel *a = &d->a;
  fl_int nrow = r->nrow, nv = r->global ? r->nv : 0;
  fl_iter_stat st = *st0; // iteration 0, evaluated by pgs_solve
  if (fl_solver_record(s, &st) != 0) return s->reason == FL_REASON_ABORT ? s->abort_code : FL_OK;
  double err_last = st.error, d2_last = 0;
  int have_dir = 0, count = -1; // NNCG: p holds a direction; Anderson: pairs made (-1: none)
  int guard_res = o->accel_guard == GUARD_RESIDUAL, guard_step = o->accel_guard == GUARD_STEP;
  int prev_extrap = 0; // NNCG: the last iteration kept an extrapolated iterate
  memcpy(a->x, gamma, (size_t)nrow * sizeof *gamma);
  if (nv > 0) memcpy(a->vx, v, (size_t)nv * sizeof *v);
  for (int k = 1;; k++) {
    double d2 = pgs_sweep(d, o, v, gamma);
    int extrap = 0, reverted = 0;
    if (o->accel == ACCEL_NNCG) {
      // Fletcher-Reeves beta on the sweep steps; restart (plain step) when it exceeds 1
      double beta = have_dir && d2_last > 0 ? d2 / d2_last : INFINITY;
      if (guard_step && prev_extrap && beta > 1.0) {
        // the sweep from the extrapolated iterate grew: back to the plain answer before it
        memcpy(gamma, a->gs, (size_t)nrow * sizeof *gamma);
        if (nv > 0) memcpy(v, a->vs, (size_t)nv * sizeof *v);
        reverted = 1;
      } else {
        d2_last = d2;
      }
      prev_extrap = 0;
      if (!reverted && beta <= 1.0) {
        prev_extrap = 1;
        if (guard_res || guard_step) {
          memcpy(a->gs, gamma, (size_t)nrow * sizeof *gamma);
          if (nv > 0) memcpy(a->vs, v, (size_t)nv * sizeof *v);
        }
        for (fl_int q = 0; q < nrow; q++) gamma[q] += beta * a->p[q];
        for (fl_int kk = 0; kk < nv; kk++) v[kk] += beta * a->bp[kk];
        extrap = 1;
      }
    } else {
      extrap = anderson_step(d, nrow, nv, &count, v, gamma);
    }
    if (extrap) accel_project(r, v, gamma);

    //---- record, test, and the guard ----
    int settled = 0; // step_tol on the plain sweep's step, as pgs_solve tests it
    if (o->step_tol > 0 && !s->common.never_stop) {
      double g2 = 0;
      for (fl_int q = 0; q < nrow; q++) g2 += gamma[q] * gamma[q];
      settled = d2 <= o->step_tol * o->step_tol * g2;
    }
    int eval = settled || guard_res || k % o->residual_every == 0 ||
               k >= s->common.max_iter;
    int neval = 0, refused = reverted;
    if (eval) {
      fl_iter_stat_init(&st, k);
      fl__relax_residual(r, v, gamma, &st);
      neval = 1;
      if (extrap && guard_res && !(st.error <= err_last)) {
        // refused: the plain sweep's answer, and a restart
        memcpy(gamma, a->gs, (size_t)nrow * sizeof *gamma);
        if (nv > 0) memcpy(v, a->vs, (size_t)nv * sizeof *v);
        fl_iter_stat_init(&st, k);
        fl__relax_residual(r, v, gamma, &st);
        neval = 2;
        refused = 1;
        extrap = 0;
        count = count > 0 ? 0 : count; // Anderson: the window starts again
      }
    }
    // NNCG's next direction: the step taken (the plain sweep's after a restart or refusal)
    // and the iterate the next sweep starts from (a->x, a->vx)
    if (o->accel == ACCEL_NNCG) {
      for (fl_int q = 0; q < nrow; q++) {
        a->p[q] = gamma[q] - a->x[q];
        a->x[q] = gamma[q];
      }
      for (fl_int kk = 0; kk < nv; kk++) {
        a->bp[kk] = v[kk] - a->vx[kk];
        a->vx[kk] = v[kk];
      }
      have_dir = !refused;
    } else {
      memcpy(a->x, gamma, (size_t)nrow * sizeof *gamma);
      if (nv > 0) memcpy(a->vx, v, (size_t)nv * sizeof *v);
    }
    d->n_extrap += extrap;
    d->n_refused += refused;
    if (!eval) continue;
    err_last = st.error;
    st.step = o->omega;
    st.step_norm = sqrt(d2);
    st.neval = neval;
    st.inner_iters = extrap + 2 * refused; // 1 kept, 2 refused, 0 plain (restart)
    if (fl_solver_record(s, &st) != 0) break;
    if (settled) {
      s->reason = FL_CONVERGED_STAGNATION_OK;
      break;
    }
  }
  return s->reason == FL_REASON_ABORT ? s->abort_code : FL_OK;
}


static void pgs_view(const fl_solver *s, FILE *f) {
  const pgs_data *d = s->data;
  fprintf(f, "  pgs: %s%s, %d contacts, %d bilateral rows, ||q|| = %g\n",
          d->r.global ? "velocity-based on A, J (W never formed)" : "on W, q",
          d->r.Bown ? ", J A^-1 by the rigid bodies' set-up" : "", (int)d->r.nc, (int)d->r.nh,
          d->r.norm_q);
  const pgs_opts *o = s->opts;
  if (o->accel != ACCEL_NONE)
    fprintf(f, "  pgs accel %s: %ld extrapolations kept, %ld refused by the guard\n",
            o->accel == ACCEL_NNCG ? "nncg" : "anderson", d->n_extrap, d->n_refused);
}


static void pgs_destroy(fl_solver *s) {
  pgs_data *d = s->data;
  fl__relax_free(&d->r);
  accel_free(&d->a);
}


const fl_solver_ops fl_pgs_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "pgs",
  .summary = "projected Gauss-Seidel, velocity-based (W never formed); rigid, compliant, "
             "bilateral",
  .opts_size = sizeof(pgs_opts),
  .options = pgs_table,
  .data_size = sizeof(pgs_data),
  .caps = FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_BILATERAL | FL_CAP_LOCAL | FL_CAP_WARMSTART |
          FL_CAP_V_FROM_GAMMA,
  .setup = pgs_setup,
  .solve = pgs_solve,
  .view = pgs_view,
  .destroy = pgs_destroy,
  .common_defaults = NULL,
};

// SPDX-License-Identifier: Apache-2.0
/* relax.c: the projected relaxation library (relax.h) that pgs.c, jacobi.c and gpu/ share:
 * the set-up (diagonal blocks of W, steps, the rigid bodies' own set-up and the runs of 6 dofs),
 * the colouring, the local updates of a contact and of a bilateral row, and the own residual.
 * PGS itself (its sweeps, orders and acceleration) is pgs.c.
 *
 * The local updates (fl__relax_contact, fl__relax_row): per contact i the local problem on
 * the 3x3 block W_ii (+ R_n on the normal) is relaxed:
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
 * Own residual (what abs_tol tests): the exact natural-map residual with De Saxce's correction
 * of the iterate, ||gamma - P_K(gamma - uhat)||_2 over contacts with rho = 1,
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


/* the test hook of relax.h; defined here, not in pgs.c, so that the library needs nothing of
 * the solvers that use it */
int fl__pgs_runs = 1;

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
    ok = fl__relax_row_runs(J, 3 * i, &d1, &d2) && d1 >= 0 && d1 + 6 <= nv &&
         first[d1] >= 0 && (d2 < 0 || (d2 + 6 <= nv && first[d2] > first[d1]));
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


int fl__relax_setup_core(fl_solver *s, const fl_problem *p, fl__relax *r, int variant,
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
  FL_TRY(fl__relax_setup_core(s, p, r, variant, norm));
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


/* d1 (and d2) when the n columns of row r of m are one run of 6 dofs from d1 (n = 6) or two,
 * from d1 < d2 (n = 12); 0 when not */
int fl__relax_row_runs(const fl_csr *m, fl_int r, fl_int *d1, fl_int *d2) {
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

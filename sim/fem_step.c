// SPDX-License-Identifier: Apache-2.0
/* fem_step.c: deformable bodies as a body kind (world_impl.h, fl__body_ops): per body and
 * step (dofs: 3 per vertex, "free" = not held):
 *   elements   R0 = polar(F(q0)) per tet (lagged rotation), f_e(q0) and K(q0), and
 *              A = (1 + alpha dt) M + dt (dt + beta) K assembled over all dofs
 *   residual   r = -m(vbar) = dt (f_e + f_ext) - (A - M) vbar - M (vbar - v0), vbar = v0 on
 *              free dofs and v_held on held ones
 *   factor     A_ff with the participating dofs last (fl_schur): S and the solve
 *   v*         v*_f = v0_f + A_ff^-1 r_f
 * and the queries on a body's state (energy, stress, VTK). fem.c creates the bodies.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fem_impl.h"

//---- per-step assembly ----

/* Positions of tet e's vertices (12). */
static void tet_x(const fl_fem_body *b, const double *x, fl_int e, double xe[12]) {
  const fl_int *t = b->mesh->tet + 4 * e;
  for (int a = 0; a < 4; a++) memcpy(xe + 3 * a, x + 3 * t[a], 3 * sizeof(double));
}


/* The volume term on nodal volumes (average nodal pressure; Bonet and Burton 1998):
 *   J_a = sum_(e around a) vol_e J_e / 4 / V_a,   U = sum_a V_a kappa/2 (J_a - 1)^2,
 *   f = -dU/dx = -sum_e pbar_e vol_e dJ_e/dx,  pbar_e = mean of kappa (J_a - 1) over e's vertices,
 *   K = sum_a kappa / V_a g_a g_a^T,  g_a = sum_(e around a) vol_e / 4 dJ_e/dx,
 * leaving out the term sum_a kappa (J_a - 1) d2(v_a)/dx2 (indefinite; small beside kappa g g^T
 * near J = 1): K stays PSD and the forces are exact. One pressure per vertex instead of one per
 * tet, so nearly incompressible linear tets do not lock. Adds to fe and writes the triplets of
 * c_k K (b->nodal_nnz of them, the z dofs left out in plane strain); returns their number
 * or FL_ERR_NOMEM. */
static fl_int nodal_volume_terms(const fl_fem_body *b, const double *jd, double c_k, double *fe,
                                 fl_int *ti, fl_int *tj, double *tv) {
  const fl_mesh *m = b->mesh;
  fl_int nv = m->nvert;
  double *pn = fl_malloc((size_t)nv * sizeof(double)), *g = fl_calloc((size_t)nv * 3, sizeof(double));
  fl_int *mark = fl_malloc((size_t)nv * sizeof(fl_int)), *patch = fl_malloc((size_t)nv * sizeof(fl_int));
  if (!pn || !g || !mark || !patch) {
    fl_free(pn);
    fl_free(g);
    fl_free(mark);
    fl_free(patch);
    return fl_seterr(FL_ERR_NOMEM, "fem %s: out of memory for the nodal volume term", b->name);
  }
  fl__fem_nodal_pressure(b, jd, 13, pn);
  for (fl_int e = 0; e < m->ntet; e++) {
    const fl_int *t = m->tet + 4 * e;
    double pbar = 0.25 * (pn[t[0]] + pn[t[1]] + pn[t[2]] + pn[t[3]]);
    for (int a = 0; a < 4; a++) {
      for (int i = 0; i < 3; i++) fe[3 * t[a] + i] -= pbar * b->vol[e] * jd[13 * e + 1 + 3 * a + i];
    }
  }
  int nc = b->plane_strain ? 2 : 3;
  fl_int k = 0;
  for (fl_int i = 0; i < nv; i++) mark[i] = -1;
  for (fl_int a = 0; a < nv; a++) {
    fl_int np = fl__fem_vertex_patch(b, a, mark, patch);
    for (fl_int p = 0; p < np; p++) g[3 * patch[p]] = g[3 * patch[p] + 1] = g[3 * patch[p] + 2] = 0;
    for (fl_int q = b->v2t_ptr[a]; q < b->v2t_ptr[a + 1]; q++) {
      fl_int e = b->v2t[q];
      for (int c = 0; c < 4; c++) {
        for (int i = 0; i < 3; i++)
          g[3 * m->tet[4 * e + c] + i] += b->vol[e] / 4 * jd[13 * e + 1 + 3 * c + i];
      }
    }
    double s = c_k * b->model.kappa / b->Vn[a];
    for (fl_int p = 0; p < np; p++) {
      for (int i = 0; i < nc; i++) {
        for (fl_int r = 0; r < np; r++) {
          for (int j = 0; j < nc; j++) {
            ti[k] = 3 * patch[p] + i;
            tj[k] = 3 * patch[r] + j;
            tv[k++] = s * g[3 * patch[p] + i] * g[3 * patch[r] + j];
          }
        }
      }
    }
  }
  fl_free(pn);
  fl_free(g);
  fl_free(mark);
  fl_free(patch);
  return k;
}


/* Elastic forces f_e(q0) (ndof, into fe) and the triplets of A = c_m M_e + c_k K_e. */
static int assemble(fl_fem_body *b, double c_m, double c_k, int allow_inversion, double *fe) {
  fl_fem_step *st = (fl_fem_step *)b->st;
  const fl_mesh *m = b->mesh;
  fl_int nt = 144 * m->ntet, ntot = nt + (b->nodal_volume ? b->nodal_nnz : 0);
  fl_int *ti = fl_malloc((size_t)ntot * sizeof(fl_int)), *tj = fl_malloc((size_t)ntot * sizeof(fl_int));
  double *tv = fl_malloc((size_t)ntot * sizeof(double));
  // nodal volume: per tet J and dJ/dx (13 each); the tets' own model without the volume term
  double *jd = b->nodal_volume ? fl_malloc((size_t)m->ntet * 13 * sizeof(double)) : NULL;
  if (!ti || !tj || !tv || (b->nodal_volume && !jd)) {
    fl_free(ti);
    fl_free(tj);
    fl_free(tv);
    fl_free(jd);
    return fl_seterr(FL_ERR_NOMEM, "fem %s: out of memory assembling", b->name);
  }
  fl_fem_material model = b->model;
  if (b->nodal_volume) model.kappa = 0;
  memset(fe, 0, (size_t)b->ndof * sizeof(double));
  // per-tet forces into their own slots, so the element loop runs in parallel; scattered after
  double *ftet = fl_malloc((size_t)m->ntet * 12 * sizeof(double));
  if (!ftet) {
    fl_free(ti);
    fl_free(tj);
    fl_free(tv);
    fl_free(jd);
    return fl_seterr(FL_ERR_NOMEM, "fem %s: out of memory assembling", b->name);
  }
  int bad = -1;
  double bad_J = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (m->ntet > 2000)
#endif
  for (fl_int e = 0; e < m->ntet; e++) {
    const fl_int *t = m->tet + 4 * e;
    double xe[12], F[9], R0[9], K[144], J = 1;
    tet_x(b, b->x, e, xe);
    fl_fem_tet_F(b->DmInv + 9 * e, xe, b->plane_strain, F);
    // only the lagged model reads R0; the others would pay an SVD per tet for nothing
    if (model.model == FL_FEM_COROTATED_LAGGED) fl_fem_polar_rotation(F, R0);
    fl_fem_tet_eval(&model, b->DmInv + 9 * e, b->vol[e], xe,
                    model.model == FL_FEM_COROTATED_LAGGED ? R0 : NULL, b->plane_strain, 1,
                    ftet + 12 * e, K, &J);
    if (jd) fl_fem_tet_dJ(b->DmInv + 9 * e, xe, b->plane_strain, jd + 13 * e, jd + 13 * e + 1);
    if (!(J > 0)) {
#ifdef _OPENMP
#pragma omp critical(fl_fem_bad)
#endif
      if (bad < 0 || e < bad) {
        bad = (int)e;
        bad_J = J;
      }
    }
    double me = b->density * b->vol[e];
    fl_int k0 = 144 * e;
    for (int i = 0; i < 4; i++) {
      for (int j = 0; j < 4; j++) {
        double mij = b->lumped ? (i == j ? me / 4 : 0) : me * (i == j ? 2.0 : 1.0) / 20;
        for (int r = 0; r < 3; r++) {
          for (int c = 0; c < 3; c++) {
            fl_int q = k0 + 36 * i + 9 * j + 3 * r + c;
            ti[q] = 3 * t[i] + r;
            tj[q] = 3 * t[j] + c;
            tv[q] = c_k * K[(3 * i + r) * 12 + 3 * j + c] + (r == c ? c_m * mij : 0);
          }
        }
      }
    }
  }
  for (fl_int e = 0; e < m->ntet; e++) {
    const fl_int *t = m->tet + 4 * e;
    for (int i = 0; i < 4; i++) {
      for (int c = 0; c < 3; c++) fe[3 * t[i] + c] += ftet[12 * e + 3 * i + c];
    }
  }
  fl_free(ftet);
  fl_int nk = jd ? nodal_volume_terms(b, jd, c_k, fe, ti + nt, tj + nt, tv + nt) : 0;
  fl_free(jd);
  if (nk < 0) {
    fl_free(ti);
    fl_free(tj);
    fl_free(tv);
    return (int)nk;
  }
  nt += nk;
  int rc = FL_OK;
  if (st->A && st->amap && st->namap == nt) {
    memset(st->A->val, 0, (size_t)st->A->nnz * sizeof(double));
    for (fl_int q = 0; q < nt; q++) st->A->val[st->amap[q]] += tv[q];
  } else {
    fl_csr_free(st->A);
    fl_free(st->amap);
    st->A = NULL;
    st->amap = NULL;
    rc = fl_csr_from_triplets(b->ndof, b->ndof, nt, ti, tj, tv, &st->A);
    st->amap = rc >= 0 ? fl_malloc((size_t)(nt > 0 ? nt : 1) * sizeof(fl_int)) : NULL;
    st->namap = nt;
    for (fl_int q = 0; st->amap && q < nt; q++) {
      // rows are sorted: binary search for the column
      const fl_int *c = st->A->col;
      fl_int lo = st->A->rowptr[ti[q]], hi = st->A->rowptr[ti[q] + 1];
      while (lo < hi) {
        fl_int mid = (lo + hi) / 2;
        if (c[mid] < tj[q]) lo = mid + 1;
        else hi = mid;
      }
      if (lo >= st->A->rowptr[ti[q] + 1] || c[lo] != tj[q]) {
        fl_free(st->amap); // not found: no map, sort again next step
        st->amap = NULL;
        break;
      }
      st->amap[q] = lo;
    }
  }
  fl_free(ti);
  fl_free(tj);
  fl_free(tv);
  if (rc < 0) return rc;
  if (bad >= 0 && !allow_inversion)
    return fl_seterr(FL_ERR_STATE, "deformable body %s: tet %d is inverted at the start of the step (det F = %.3g); set "
                     "fem_allow_inversion to continue", b->name, bad, bad_J);
  return FL_OK;
}


/* Rows and columns of A at the free positions. */
static int extract_free(fl_fem_body *b) {
  fl_fem_step *st = (fl_fem_step *)b->st;
  const fl_csr *A = st->A;
  fl_int nnz = 0;
  for (fl_int i = 0; i < st->nfree; i++) {
    fl_int r = st->free[i];
    for (fl_int q = A->rowptr[r]; q < A->rowptr[r + 1]; q++) nnz += st->fidx[A->col[q]] >= 0;
  }
  fl_csr_free(st->Aff);
  st->Aff = NULL;
  FL_TRY(fl_csr_alloc(st->nfree, st->nfree, nnz, &st->Aff));
  fl_csr *B = st->Aff;
  nnz = 0;
  B->rowptr[0] = 0;
  for (fl_int i = 0; i < st->nfree; i++) {
    fl_int r = st->free[i];
    // fidx is increasing in the dof, so columns stay sorted
    for (fl_int q = A->rowptr[r]; q < A->rowptr[r + 1]; q++) {
      fl_int j = st->fidx[A->col[q]];
      if (j < 0) continue;
      B->col[nnz] = j;
      B->val[nnz++] = A->val[q];
    }
    B->rowptr[i + 1] = nnz;
  }
  B->nnz = nnz;
  return FL_OK;
}


static int step_arrays(fl_fem_body *b) {
  fl_fem_step *st = (fl_fem_step *)b->st;
  if (st->fidx) return FL_OK;
  size_t nd = (size_t)b->ndof;
  st->free = fl_malloc(nd * sizeof(fl_int));
  st->fidx = fl_malloc(nd * sizeof(fl_int));
  st->part = fl_malloc(nd * sizeof(fl_int));
  st->ppos = fl_malloc(nd * sizeof(fl_int));
  st->vstar = fl_malloc(nd * sizeof(double));
  st->v0 = fl_malloc(nd * sizeof(double));
  st->wa = fl_malloc(nd * sizeof(double));
  st->wb = fl_malloc(nd * sizeof(double));
  if (!st->free || !st->fidx || !st->part || !st->ppos || !st->vstar || !st->v0 || !st->wa ||
      !st->wb)
    return fl_seterr(FL_ERR_NOMEM, "fem %s: out of memory", b->name);
  return FL_OK;
}


static void mark_side(fl_world *w, const fl__side *s) {
  if (s->kind != FL__KIND_FEM) return;
  fl_fem_body *b = w->fem[s->id];
  fl_fem_step *st = (fl_fem_step *)b->st;
  for (int k = 0; k < s->nvert; k++) {
    if (s->wt[k] == 0) continue;
    for (int c = 0; c < 3; c++) {
      fl_int f = st->fidx[3 * s->vert[k] + c];
      if (f >= 0) st->ppos[f] = 1;
    }
  }
}


/* Per deformable body, for the step about to be assembled: marks participating dofs (from
 * the contacts), assembles A and the elastic forces, factors, computes v*; assigns the
 * body's problem dofs from *nv on (advancing it) and its clique from *ncl on. */
static int fem_prepare(fl_world *w, const fl__contact *ct, fl_int nct, fl_int *nv, fl_int *ncl) {
  double dt = w->dt;
  // free dofs and participating marks
  for (fl_int k = 0; k < w->nfem; k++) {
    fl_fem_body *b = w->fem[k];
    FL_TRY(step_arrays(b));
    fl_fem_step *st = (fl_fem_step *)b->st;
    st->nfree = 0;
    for (fl_int d = 0; d < b->ndof; d++) {
      st->fidx[d] = b->held[d] ? -1 : st->nfree;
      if (!b->held[d]) st->free[st->nfree++] = d;
    }
    for (fl_int i = 0; i < st->nfree; i++) st->ppos[i] = 0;
    st->element_s = st->schur_s = st->recover_s = 0;
  }
  for (fl_int c = 0; c < nct; c++) {
    mark_side(w, &ct[c].a);
    mark_side(w, &ct[c].b);
  }
  for (fl_int k = 0; k < w->nfem; k++) {
    fl_fem_body *b = w->fem[k];
    fl_fem_step *st = (fl_fem_step *)b->st;
    st->np = 0;
    for (fl_int i = 0; i < st->nfree; i++) {
      if (st->ppos[i]) {
        st->ppos[i] = st->np;
        st->part[st->np++] = i;
      } else {
        st->ppos[i] = -1;
      }
    }
    st->schur = w->fem_solve == FL_FEM_SCHUR;

    //---- elements: f_e(q0), A (wall time: CPU time would sum the OpenMP threads) ----
    double c0 = fl_time_now();
    double *fe = st->wa;
    FL_TRY(assemble(b, 1 + b->alpha * dt, dt * (dt + b->beta), w->fem_allow_inversion, fe));
    // r = dt (f_e + f_ext) - (A - M) vbar - M (vbar - v0), vbar = v0 with held dofs at v_held
    double s = fl_force_scale(&(fl_force){.t0 = b->f_t0, .t1 = b->f_t1}, w->t);
    double *vbar = st->wb, *r = fe; /* r overwrites f_e */
    for (fl_int d = 0; d < b->ndof; d++) vbar[d] = b->held[d] ? b->v_held[d] : b->v[d];
    // gravity as M g (consistent nodal loads)
    double *g = st->vstar; /* borrowed as a temporary of ndof */
    for (fl_int i = 0; i < b->mesh->nvert; i++) memcpy(g + 3 * i, w->gravity, 3 * sizeof(double));
    double *Mg = st->v0; /* borrowed */
    fl_csr_gemv(b->M, 1.0, g, 0.0, Mg);
    for (fl_int d = 0; d < b->ndof; d++) r[d] = dt * (r[d] + Mg[d] + s * b->f_node[d]);
    // -(A - M) vbar - M (vbar - v0) = -A vbar + M v0
    fl_csr_gemv(st->A, -1.0, vbar, 1.0, r);
    fl_csr_gemv(b->M, 1.0, b->v, 1.0, r);
    FL_TRY(extract_free(b));
    double c1 = fl_time_now();

    //---- factor with the participating dofs last; v* ----
    fl_int np = st->schur ? st->np : 0;
    // A_ff's pattern is fixed; while the contact dofs stay the same the ordering and
    // symbolic analysis of the last step are reused (the same factor to the bit)
    int rc = st->fac ? fl_schur_refactor(st->fac, st->Aff, np, st->part) : 0;
    if (rc <= 0 && st->fac) {
      fl_schur_free(st->fac);
      st->fac = NULL;
    }
    if (rc == 0) rc = fl_schur_create(st->Aff, np, st->part, &st->fac);
    if (rc < 0) return fl_seterr(rc, "deformable body %s: %s", b->name, fl_errmsg());
    for (fl_int i = 0; i < st->nfree; i++) st->vstar[i] = r[st->free[i]];
    FL_TRY(fl_schur_solve(st->fac, st->vstar, st->vstar));
    for (fl_int i = 0; i < st->nfree; i++) {
      st->v0[i] = b->v[st->free[i]];
      st->vstar[i] += st->v0[i];
    }
    double c2 = fl_time_now();
    st->element_s = c1 - c0;
    st->schur_s = c2 - c1;

    //---- problem dofs ----
    st->nprob = st->schur ? st->np : st->nfree;
    if (st->nprob > 0) {
      st->off = *nv;
      st->clique = (*ncl)++;
      *nv += st->nprob;
    } else {
      st->off = -1;
      st->clique = -1;
    }
  }
  return FL_OK;
}


/* Number of stored entries of the bodies' blocks of A (for sizing the problem's A). */
static fl_int fem_nnz(const fl_world *w) {
  fl_int n = 0;
  for (fl_int k = 0; k < w->nfem; k++) {
    const fl_fem_step *st = (const fl_fem_step *)w->fem[k]->st;
    if (st->nprob == 0) continue;
    n += st->schur ? st->np * st->np : st->Aff->nnz;
  }
  return n;
}


/* Appends the bodies' rows of A (after the rigid rows, which end at *nnz) and fills v0, v*,
 * clique_ptr/clique_dof/dof_clique for their dofs. */
static int fem_fill(const fl_world *w, fl_problem *p, fl_int *nnzp) {
  fl_csr *A = p->A;
  fl_int nnz = *nnzp;
  for (fl_int k = 0; k < w->nfem; k++) {
    const fl_fem_step *st = (const fl_fem_step *)w->fem[k]->st;
    if (st->nprob == 0) continue;
    fl_int o = st->off;
    if (st->schur) {
      const double *S = fl_schur_matrix(st->fac);
      for (fl_int i = 0; i < st->np; i++) {
        if (p->adiag_hint) p->adiag_hint[o + i] = fl_csr_get(st->Aff, st->part[i], st->part[i]);
        for (fl_int j = 0; j < st->np; j++) {
          A->col[nnz] = o + j;
          A->val[nnz++] = S[i * st->np + j];
        }
        A->rowptr[o + i + 1] = nnz;
        p->v0[o + i] = st->v0[st->part[i]];
        p->vstar[o + i] = st->vstar[st->part[i]];
      }
    } else {
      const fl_csr *B = st->Aff;
      for (fl_int i = 0; i < st->nfree; i++) {
        if (p->adiag_hint) p->adiag_hint[o + i] = fl_csr_get(B, i, i);
        for (fl_int q = B->rowptr[i]; q < B->rowptr[i + 1]; q++) {
          A->col[nnz] = o + B->col[q];
          A->val[nnz++] = B->val[q];
        }
        A->rowptr[o + i + 1] = nnz;
        p->v0[o + i] = st->v0[i];
        p->vstar[o + i] = st->vstar[i];
      }
    }
    p->clique_ptr[st->clique] = o;
    for (fl_int i = 0; i < st->nprob; i++) {
      p->clique_dof[o + i] = o + i;
      p->dof_clique[o + i] = st->clique;
    }
  }
  *nnzp = nnz;
  return FL_OK;
}


/* Problem clique of body k for this step, or -1 when it has no dofs in the problem. */
static fl_int fem_clique(const fl_world *w, fl_int k) {
  return ((const fl_fem_step *)w->fem[k]->st)->clique;
}


/* Coefficients of the velocity of side s along d, times sign, as (problem dof, value) pairs
 * appended at cols/vals (returns how many, <= 9), and the contribution of held dofs to the
 * constant term through *bconst. */
static int fem_side_row(const fl_world *w, const fl__side *s, const double x[3],
                        const double d[3], double sign, fl_int *cols, double *vals,
                        double *bconst) {
  const fl_fem_body *b = w->fem[s->id];
  const fl_fem_step *st = (const fl_fem_step *)b->st;
  int n = 0;
  for (int k = 0; k < s->nvert; k++) {
    for (int c = 0; c < 3; c++) {
      double a = sign * s->wt[k] * d[c];
      if (a == 0) continue;
      fl_int dof = 3 * s->vert[k] + c;
      fl_int f = st->fidx[dof];
      if (f < 0) {
        *bconst += a * b->v_held[dof];
        continue;
      }
      fl_int col = st->schur ? st->ppos[f] : f;
      // every free dof of a contact vertex participates (fem_prepare marked it)
      cols[n] = st->off + col;
      vals[n++] = a;
    }
  }
  return n;
}


/* x_f <- A_ff^-1 x_f (full) or x_p <- S^-1 x_p (schur) on body k's slots of x. */
static int fem_apply_Ainv(const fl_world *w, double *x) {
  for (fl_int k = 0; k < w->nfem; k++) {
    const fl_fem_body *b = w->fem[k];
    fl_fem_step *st = (fl_fem_step *)b->st;
    if (st->nprob == 0) continue;
    double *y = st->wa;
    if (st->schur) {
      // A [x_n; x_p] = [0; y] gives S x_p = y
      memset(y, 0, (size_t)st->nfree * sizeof(double));
      for (fl_int i = 0; i < st->np; i++) y[st->part[i]] = x[st->off + i];
      FL_TRY(fl_schur_solve(st->fac, y, y));
      for (fl_int i = 0; i < st->np; i++) x[st->off + i] = y[st->part[i]];
    } else {
      FL_TRY(fl_schur_solve(st->fac, x + st->off, x + st->off));
    }
  }
  return FL_OK;
}


/* After the solve: recovers the non-participating velocities (schur), sets every vertex
 * velocity (held dofs at their prescribed value), integrates x += dt v, checks inversion. */
static int fem_finish(fl_world *w, const double *v) {
  double dt = w->dt;
  for (fl_int k = 0; k < w->nfem; k++) {
    fl_fem_body *b = w->fem[k];
    fl_fem_step *st = (fl_fem_step *)b->st;
    double c0 = fl_cpu_now();
    double *vf = st->wa; /* (nfree) new free velocities */
    if (st->nprob == 0) {
      memcpy(vf, st->vstar, (size_t)st->nfree * sizeof(double));
    } else if (st->schur) {
      // eq. 15: dv_n = -A_nn^-1 A_np dv_p from the factor
      double *dvp = st->wb;
      for (fl_int i = 0; i < st->np; i++) dvp[i] = v[st->off + i] - st->vstar[st->part[i]];
      FL_TRY(fl_schur_recover(st->fac, dvp, vf));
      for (fl_int i = 0; i < st->nfree; i++) vf[i] += st->vstar[i];
      // the solver's own participating velocities, bit for bit
      for (fl_int i = 0; i < st->np; i++) vf[st->part[i]] = v[st->off + i];
    } else {
      memcpy(vf, v + st->off, (size_t)st->nfree * sizeof(double));
    }
    for (fl_int d = 0; d < b->ndof; d++) {
      fl_int f = st->fidx[d];
      b->v[d] = f >= 0 ? vf[f] : b->v_held[d];
      if (!isfinite(b->v[d]))
        return fl_seterr(FL_ERR_STATE, "step %d: deformable body %s: vertex %d has a non-finite velocity",
                         (int)w->step, b->name, (int)(d / 3));
      b->x[d] += dt * b->v[d];
    }
    st->recover_s = fl_cpu_now() - c0;
    // inversion check at the new positions
    if (!w->fem_allow_inversion) {
      const fl_mesh *m = b->mesh;
      for (fl_int e = 0; e < m->ntet; e++) {
        double xe[12], F[9];
        tet_x(b, b->x, e, xe);
        fl_fem_tet_F(b->DmInv + 9 * e, xe, b->plane_strain, F);
        double J = F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) +
                   F[2] * (F[3] * F[7] - F[4] * F[6]);
        if (!(J > 0))
          return fl_seterr(FL_ERR_STATE,
                           "step %d: deformable body %s: tet %d inverted (det F = %.3g); set "
                           "fem_allow_inversion to continue",
                           (int)w->step, b->name, (int)e, J);
      }
    }
  }
  return FL_OK;
}


//---- queries ----

int fl_fem_energy(const fl_world *w, int k, double *kinetic, double *elastic, double *potential) {
  FL_TRY(fl__fem_check_body(w, k, "energy"));
  const fl_fem_body *b = w->fem[k];
  fl_int nd = b->ndof;
  double *Mv = fl_malloc((size_t)nd * sizeof(double));
  if (!Mv) return fl_seterr(FL_ERR_NOMEM, "fem %s: out of memory", b->name);
  fl_csr_gemv(b->M, 1.0, b->v, 0.0, Mv);
  double ke = 0;
  for (fl_int d = 0; d < nd; d++) ke += 0.5 * b->v[d] * Mv[d];
  // potential -x^T M g: M's rows sum to the nodal masses
  double pe = 0;
  double *g = Mv;
  for (fl_int i = 0; i < b->mesh->nvert; i++) memcpy(g + 3 * i, w->gravity, 3 * sizeof(double));
  double *Mg = fl_malloc((size_t)nd * sizeof(double));
  if (!Mg) {
    fl_free(Mv);
    return fl_seterr(FL_ERR_NOMEM, "fem %s: out of memory", b->name);
  }
  fl_csr_gemv(b->M, 1.0, g, 0.0, Mg);
  for (fl_int d = 0; d < nd; d++) pe -= b->x[d] * Mg[d];
  double ee = 0;
  fl_fem_material model = b->model;
  if (b->nodal_volume) model.kappa = 0;
  // nodal volume: det F per tet
  double *Jt = b->nodal_volume ? fl_malloc((size_t)b->mesh->ntet * sizeof(double)) : NULL;
  double *pn = b->nodal_volume ? fl_malloc((size_t)b->mesh->nvert * sizeof(double)) : NULL;
  if (b->nodal_volume && (!Jt || !pn)) {
    fl_free(Jt);
    fl_free(pn);
    fl_free(Mv);
    fl_free(Mg);
    return fl_seterr(FL_ERR_NOMEM, "fem %s: out of memory", b->name);
  }
  for (fl_int e = 0; e < b->mesh->ntet; e++) {
    double xe[12], F[9], R[9];
    tet_x(b, b->x, e, xe);
    fl_fem_tet_F(b->DmInv + 9 * e, xe, b->plane_strain, F);
    fl_fem_polar_rotation(F, R);
    ee += b->vol[e] * fl_fem_psi(&model, F, R, NULL, NULL, 0);
    if (Jt) Jt[e] = F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) +
                    F[2] * (F[3] * F[7] - F[4] * F[6]);
  }
  // the volume term on nodal volumes: sum_a V_a kappa/2 (J_a - 1)^2 = sum_a V_a pn_a^2 / (2 kappa)
  if (pn) {
    fl__fem_nodal_pressure(b, Jt, 1, pn);
    for (fl_int a = 0; a < b->mesh->nvert; a++) ee += b->Vn[a] * pn[a] * pn[a] / (2 * b->model.kappa);
  }
  fl_free(Jt);
  fl_free(pn);
  fl_free(Mv);
  fl_free(Mg);
  if (kinetic) *kinetic = ke;
  if (elastic) *elastic = ee;
  if (potential) *potential = pe;
  return FL_OK;
}


int fl_fem_elastic_forces(fl_world *w, int k, double *f) {
  FL_TRY(fl__fem_check_body(w, k, "elastic forces"));
  return assemble(w->fem[k], 0, 0, 1, f);
}


void fl_fem_momentum(const fl_world *w, int k, double p[3], double com[3]) {
  const fl_fem_body *b = w->fem[k];
  double P[3] = {0, 0, 0}, C[3] = {0, 0, 0}, mt = 0;
  // M's rows sum to the nodal masses, and M v summed per axis is the momentum
  const fl_csr *M = b->M;
  for (fl_int r = 0; r < M->nrow; r++) {
    double mr = 0, mv = 0;
    for (fl_int q = M->rowptr[r]; q < M->rowptr[r + 1]; q++) {
      mr += M->val[q];
      mv += M->val[q] * b->v[M->col[q]];
    }
    P[r % 3] += mv;
    C[r % 3] += mr * b->x[r];
    if (r % 3 == 0) mt += mr;
  }
  for (int c = 0; c < 3; c++) {
    if (p) p[c] = P[c];
    if (com) com[c] = mt > 0 ? C[c] / mt : 0;
  }
}


int fl_fem_von_mises(const fl_world *w, int k, double *vm, double *min_detF) {
  FL_TRY(fl__fem_check_body(w, k, "von Mises"));
  const fl_fem_body *b = w->fem[k];
  double jmin = INFINITY;
  for (fl_int e = 0; e < b->mesh->ntet; e++) {
    double xe[12], F[9], R[9], P[9];
    tet_x(b, b->x, e, xe);
    fl_fem_tet_F(b->DmInv + 9 * e, xe, b->plane_strain, F);
    fl_fem_polar_rotation(F, R);
    fl_fem_psi(&b->model, F, R, P, NULL, 0);
    double J = F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) +
               F[2] * (F[3] * F[7] - F[4] * F[6]);
    if (J < jmin) jmin = J;
    if (vm) vm[e] = fl_fem_stress_von_mises(F, P);
  }
  if (min_detF) *min_detF = jmin;
  return FL_OK;
}


int fl_fem_equivalent_strain(const fl_world *w, int k, double *eps) {
  FL_TRY(fl__fem_check_body(w, k, "strain"));
  const fl_fem_body *b = w->fem[k];
  for (fl_int e = 0; e < b->mesh->ntet; e++) {
    double xe[12], F[9], E[9];
    tet_x(b, b->x, e, xe);
    fl_fem_tet_F(b->DmInv + 9 * e, xe, b->plane_strain, F);
    for (int i = 0; i < 3; i++) // E = (F^T F - I) / 2
      for (int j = 0; j < 3; j++)
        E[3 * i + j] = 0.5 * (F[i] * F[j] + F[3 + i] * F[3 + j] + F[6 + i] * F[6 + j] - (i == j));
    double m = (E[0] + E[4] + E[8]) / 3, s = 0;
    for (int i = 0; i < 9; i++) s += (E[i] - (i % 4 == 0 ? m : 0)) * (E[i] - (i % 4 == 0 ? m : 0));
    eps[e] = sqrt(2.0 / 3.0 * s);
  }
  return FL_OK;
}


int fl_fem_write_vtu(const fl_world *w, int k, const char *path) {
  FL_TRY(fl__fem_check_body(w, k, "vtu"));
  const fl_fem_body *b = w->fem[k];
  fl_int nt = b->mesh->ntet;
  double *vm = fl_malloc(2 * (size_t)(nt > 0 ? nt : 1) * sizeof(double));
  double *u = fl_malloc((size_t)(b->ndof > 0 ? b->ndof : 1) * sizeof(double));
  if (!vm || !u) {
    fl_free(vm);
    fl_free(u);
    return fl_seterr(FL_ERR_NOMEM, "fem %s: out of memory", b->name);
  }
  int rc = fl_fem_von_mises(w, k, vm, NULL);
  if (rc == FL_OK) rc = fl_fem_equivalent_strain(w, k, vm + nt);
  if (rc == FL_OK) {
    // the displacement from the rest shape: ParaView's Warp By Vector exaggerates it
    for (fl_int j = 0; j < b->ndof; j++) u[j] = b->x[j] - b->mesh->X[j];
    fl_vtk_field pf[2] = {{"velocity", 3, b->v}, {"displacement", 3, u}};
    fl_vtk_field cf[2] = {{"von_mises", 1, vm}, {"strain", 1, vm + nt}};
    rc = fl_mesh_write_vtu(b->mesh, b->x, 2, pf, 2, cf, path);
  }
  fl_free(vm);
  fl_free(u);
  return rc;
}


void fl_world_fem_timing(const fl_world *w, fl_fem_timing *t) {
  memset(t, 0, sizeof *t);
  t->geometry_s = w->impl ? w->impl->fem_geometry_s : 0;
  for (fl_int k = 0; k < w->nfem; k++) {
    const fl_fem_step *st = (const fl_fem_step *)w->fem[k]->st;
    if (!st) continue;
    t->element_s += st->element_s;
    t->schur_s += st->schur_s;
    t->recover_s += st->recover_s;
    t->nparticipating += st->nprob;
    t->nfree += st->nfree;
  }
}


//---- the body kind (world_impl.h, fl__body_ops) ----

static fl_int fem_count(const fl_world *w) { return w->nfem; }


static int fem_collide(fl_world *w, double margin, fl__contact **ct, fl_int *nct, fl_int *cap,
                       fl_int *npairs) {
  return fl__fem_collide(w, margin, ct, nct, cap);
}


/* Columns a side can put in one row: 3 per mesh vertex. */
static fl_int fem_side_width(const fl_world *w, const fl__side *s) { return 3 * s->nvert; }


static int fem_side_material(const fl_world *w, const fl__side *s) {
  return w->fem[s->id]->material;
}


static fl_int fem_side_clique(const fl_world *w, const fl__side *s) { return fem_clique(w, s->id); }


static fl_int fem_side_key(const fl_world *w, const fl__side *s) { return fl__fem_key(w, s->id); }


/* x <- v* + A^-1 x on the bodies' dofs [d0, d1) */
static int fem_apply_v(const fl_world *w, const fl_problem *p, fl_int d0, fl_int d1, double *x) {
  FL_TRY(fem_apply_Ainv(w, x));
  for (fl_int i = d0; i < d1; i++) x[i] += p->vstar[i];
  return FL_OK;
}


const fl__body_ops fl__fem_ops = {
  .name = "fem",
  .reduced = 1,
  .count = fem_count,
  .collide = fem_collide,
  .prepare = fem_prepare,
  .nnz = fem_nnz,
  .fill = fem_fill,
  .side_width = fem_side_width,
  .side_material = fem_side_material,
  .side_clique = fem_side_clique,
  .side_key = fem_side_key,
  .side_row = fem_side_row,
  .apply_Ainv = fem_apply_v,
  .finish = fem_finish,
  .nv = fl__fem_nv,
  .reset_start = fl__fem_reset_start,
  .energy = fl__fem_energy,
  .release = fl__fem_release,
};

// SPDX-License-Identifier: Apache-2.0
/* sap_pcg.c: SAP's iterative inner solve (`sap.linear=pcg`, or `auto` from `pcg_min` dofs on):
 * the Newton direction H dv = rhs by conjugate gradients on the assembled lower H (the
 * pattern and maps of sap_setup.c, no CHOLMOD analysis), preconditioned by an incomplete
 * Cholesky factor of H on H's own pattern (IC(0)), to an inexact-Newton tolerance.
 *
 * Why IC(0) written here: CHOLMOD has no incomplete factorization, and the complete one fills
 * in (the heavy cylinder on the granular lattice couples every grain under it: the factor's
 * cost grows with slope 1.5-2.5 in the contacts, docs/bench-world.md). IC(0) costs about the
 * square of a column's length per column (H's cliques: 6 dofs a body, 12 a contact), linear in
 * the bodies; each CG iteration is one product with H and two triangular solves, O(nnz(H)).
 * Block Jacobi (6 x 6 per body) was the other candidate (not built): IC(0) also couples
 * neighbouring bodies, at about the same cost per CG iteration (docs/sap.md 2.5).
 *
 * Tolerance (inexact Newton, Eisenstat and Walker's quadratic forcing term): ||D r|| <= eta
 * ||D rhs|| with eta = min(eta_max, ||D grad|| / scale), scale the momentum scale of SAP's
 * stopping rule (docs/sap.md section 2), D = diag(A)^-1/2. A loose direction costs Newton
 * iterations, each an assembly, an IC(0) and a line search, about ten CG iterations' worth: on
 * 20 steps of the 125-grain lattice eta_max 0.5 took 1759 Newton iterations, 0.01 took 807
 * (sqrt(||D grad||/scale) instead: 832; CHOLMOD's exact directions 672). CG from a guess
 * below the quadratic model's 0 (dv = 0, or the last direction scaled to the model's minimum
 * along it) on an SPD H gives a descent direction at every iteration, so SAP's line search and
 * stopping rules stay as they are. The scaled last direction as guess: on the 343- and
 * 1000-grain lattices' second and third steps 380 and 377 CG iterations became 137 and 186. */
#include <math.h>
#include <string.h>

#include "sap_impl.h"

struct sap_pcg {
  fl_int nv;
  int *Lp, *Li; /* H's lower pattern (borrowed from d->H: columns, rows ascending) */
  double *Lx;   /* (nnz) the incomplete factor L, L L^T ~ H */
  fl_int *pos;  /* (nv) scatter map, -1 */
  double *r, *z, *pd, *q; /* (nv) CG vectors */
  double *prev;  /* (nv) the last direction of this solve (the next one's guess) */
  int have_prev; /* prev holds one */
  double eta_max;  /* forcing term's cap */
  int max_iter;    /* CG iterations a direction */
  double shift; /* diagonal shift of the last factorization (relative; 0 when none) */
  long iters;   /* CG iterations of the last solve (SAP's solve), all Newton directions */
  long solves;  /* directions computed */
};


int fl__sap_pcg_setup(sap_data *d, const sap_opts *o, const char *nm) {
  fl_int nv = d->nv;
  size_t nnz = (size_t)((const int *)d->H->p)[nv];
  sap_pcg *c = fl_calloc(1, sizeof *c);
  if (!c) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (pcg)", nm);
  d->pcg = c;
  c->nv = nv;
  c->eta_max = o->pcg_eta;
  c->max_iter = o->pcg_max_iter;
  c->Lp = d->H->p;
  c->Li = d->H->i;
  c->Lx = fl_malloc((nnz + 1) * sizeof(double));
  c->pos = fl_malloc(((size_t)nv + 1) * sizeof(fl_int));
  c->r = fl_malloc((5 * (size_t)nv + 1) * sizeof(double));
  if (!c->Lx || !c->pos || !c->r) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (pcg)", nm);
  c->z = c->r + nv, c->pd = c->z + nv, c->q = c->pd + nv, c->prev = c->q + nv;
  for (fl_int i = 0; i < nv; i++) c->pos[i] = -1;
  return FL_OK;
}


void fl__sap_pcg_free(sap_data *d) {
  sap_pcg *c = d->pcg;
  if (!c) return;
  fl_free(c->Lx);
  fl_free(c->pos);
  fl_free(c->r);
  fl_free(c);
  d->pcg = NULL;
}


/* IC(0) of Hx (lower, diagonal first in each column) with the diagonal times (1 + shift), right
 * looking: 0, or -1 at a pivot <= 0 */
static int ic0(sap_pcg *c, const double *Hx, double shift) {
  const int *Lp = c->Lp, *Li = c->Li;
  double *Lx = c->Lx;
  fl_int nv = c->nv, *pos = c->pos;
  memcpy(Lx, Hx, (size_t)Lp[nv] * sizeof(double));
  if (shift > 0.0)
    for (fl_int j = 0; j < nv; j++) Lx[Lp[j]] *= 1.0 + shift;
  for (fl_int k = 0; k < nv; k++) {
    int p0 = Lp[k], p1 = Lp[k + 1];
    double dk = Lx[p0];
    if (!(dk > 0.0) || !isfinite(dk)) return -1;
    double lkk = sqrt(dk);
    Lx[p0] = lkk;
    for (int q = p0 + 1; q < p1; q++) Lx[q] /= lkk;
    // column j = Li[q] (j > k) loses L(i,k) L(j,k) for every i >= j in both patterns
    for (int q = p0 + 1; q < p1; q++) {
      fl_int j = Li[q];
      double ljk = Lx[q];
      if (ljk == 0.0) continue;
      for (int t = Lp[j]; t < Lp[j + 1]; t++) pos[Li[t]] = t;
      for (int t = q; t < p1; t++) {
        fl_int at = pos[Li[t]];
        if (at >= 0) Lx[at] -= Lx[t] * ljk;
      }
      for (int t = Lp[j]; t < Lp[j + 1]; t++) pos[Li[t]] = -1;
    }
  }
  return 0;
}


int fl__sap_pcg_factor(sap_data *d) {
  sap_pcg *c = d->pcg;
  const double *Hx = d->H->x;
  // H is SPD, but IC(0) can meet a non-positive pivot: shift the diagonal (Manteuffel) and
  // retry; the preconditioner only steers CG, the answer is H's
  double shift = 0.0;
  for (int t = 0; t < 12; t++) {
    if (ic0(c, Hx, shift) == 0) {
      c->shift = shift;
      return FL_OK;
    }
    shift = shift > 0.0 ? 4.0 * shift : 1e-3;
  }
  return FL_DIVERGED_LINEAR_SOLVER;
}


/* y = H x, H symmetric from its lower triangle */
static void hmul(const sap_pcg *c, const double *Hx, const double *x, double *y) {
  const int *Lp = c->Lp, *Li = c->Li;
  fl_int nv = c->nv;
  memset(y, 0, (size_t)nv * sizeof(double));
  for (fl_int j = 0; j < nv; j++) {
    int p0 = Lp[j], p1 = Lp[j + 1];
    double xj = x[j], s = Hx[p0] * xj;
    for (int q = p0 + 1; q < p1; q++) {
      fl_int i = Li[q];
      y[i] += Hx[q] * xj;
      s += Hx[q] * x[i];
    }
    y[j] += s;
  }
}


/* z = (L L^T)^-1 r */
static void precond(const sap_pcg *c, const double *r, double *z) {
  const int *Lp = c->Lp, *Li = c->Li;
  const double *Lx = c->Lx;
  fl_int nv = c->nv;
  memcpy(z, r, (size_t)nv * sizeof(double));
  for (fl_int j = 0; j < nv; j++) {
    double zj = z[j] / Lx[Lp[j]];
    z[j] = zj;
    for (int q = Lp[j] + 1; q < Lp[j + 1]; q++) z[Li[q]] -= Lx[q] * zj;
  }
  for (fl_int j = nv - 1; j >= 0; j--) {
    double s = z[j];
    for (int q = Lp[j] + 1; q < Lp[j + 1]; q++) s -= Lx[q] * z[Li[q]];
    z[j] = s / Lx[Lp[j]];
  }
}


static int keep_prev(sap_pcg *c, const double *dv) {
  memcpy(c->prev, dv, (size_t)c->nv * sizeof(double));
  c->have_prev = 1;
  return FL_OK;
}


static double dnorm2(const double *D, const double *x, fl_int n) {
  double s = 0.0;
  for (fl_int i = 0; i < n; i++) s += (D[i] * x[i]) * (D[i] * x[i]);
  return s;
}


int fl__sap_pcg_solve(sap_data *d, const double *rhs, const double *g, double scale, double *dv) {
  sap_pcg *c = d->pcg;
  const double *Hx = d->H->x, *D = d->Dsc;
  fl_int nv = d->nv;
  double *r = c->r, *z = c->z, *pd = c->pd, *q = c->q;
  // forcing term: relative to SAP's own measure of the gradient (the rel_tol test)
  double err = sqrt(dnorm2(D, g, nv));
  double eta = c->eta_max;
  int max_iter = c->max_iter;
  if (scale > 0.0 && isfinite(err)) {
    double e = err / scale;
    if (e < eta) eta = e;
  }
  double r0 = dnorm2(D, rhs, nv), tol2 = eta * eta * r0;
  memset(dv, 0, (size_t)nv * sizeof(double));
  c->solves++;
  if (!(r0 > 0.0)) return isfinite(r0) ? FL_OK : FL_DIVERGED_LINEAR_SOLVER;
  memcpy(r, rhs, (size_t)nv * sizeof(double));
  // guess: the last direction scaled to the minimum of the quadratic model along it, when
  // that lowers the model (rhs . prev > 0; predict's second direction differs from the plain
  // one in a few contacts). The model then starts below 0 and CG lowers it further: every
  // iterate descends, as from 0
  int warm = 0;
  if (c->have_prev) {
    hmul(c, Hx, c->prev, q);
    double a = 0.0, b = 0.0;
    for (fl_int i = 0; i < nv; i++) a += rhs[i] * c->prev[i], b += c->prev[i] * q[i];
    if (a > 0.0 && b > 0.0 && isfinite(a / b)) {
      double t = a / b;
      for (fl_int i = 0; i < nv; i++) dv[i] = t * c->prev[i], r[i] -= t * q[i];
      warm = 1;
      if (dnorm2(D, r, nv) <= tol2) return keep_prev(c, dv);
    }
  }
  precond(c, r, z);
  memcpy(pd, z, (size_t)nv * sizeof(double));
  double rz = 0.0;
  for (fl_int i = 0; i < nv; i++) rz += r[i] * z[i];
  for (int it = 0; it < max_iter; it++) {
    hmul(c, Hx, pd, q);
    double pq = 0.0;
    for (fl_int i = 0; i < nv; i++) pq += pd[i] * q[i];
    if (!(pq > 0.0)) // round-off: the iterate so far, if any
      return it > 0 || warm ? keep_prev(c, dv) : FL_DIVERGED_LINEAR_SOLVER;
    double a = rz / pq;
    for (fl_int i = 0; i < nv; i++) {
      dv[i] += a * pd[i];
      r[i] -= a * q[i];
    }
    c->iters++;
    if (dnorm2(D, r, nv) <= tol2) return keep_prev(c, dv);
    precond(c, r, z);
    double rz1 = 0.0;
    for (fl_int i = 0; i < nv; i++) rz1 += r[i] * z[i];
    double b = rz1 / rz;
    rz = rz1;
    for (fl_int i = 0; i < nv; i++) pd[i] = z[i] + b * pd[i];
  }
  // out of iterations: dv still descends (the model is below 0); the line search decides
  return isfinite(dv[0]) ? keep_prev(c, dv) : FL_DIVERGED_LINEAR_SOLVER;
}


void fl__sap_pcg_stats(const sap_data *d, long *iters, long *solves, double *shift) {
  const sap_pcg *c = d->pcg;
  *iters = c ? c->iters : 0;
  *solves = c ? c->solves : 0;
  *shift = c ? c->shift : 0.0;
}


void fl__sap_pcg_reset(sap_data *d) {
  if (d->pcg) d->pcg->iters = d->pcg->solves = 0, d->pcg->have_prev = 0;
}

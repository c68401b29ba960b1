// SPDX-License-Identifier: Apache-2.0
/* local_kit.c: the local-problem pieces prox and admm share (local_kit.h). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "local_kit.h"


double fl__local_residual(const fl_problem *p, const double *gamma, double *u, double *s,
                          double *g2, double *u2) {
  fl_int n = 3 * p->nc;
  fl_csr_gemv(p->W, 1.0, gamma, 0.0, u);
  for (fl_int r = 0; r < n; r++) u[r] += p->q[r];
  return fl__natmap_residual(p->nc, p->mu, gamma, u, s, g2, u2);
}


double fl__natmap_residual(fl_int nc, const double *mu, const double *gamma, const double *u,
                           double *s, double *g2, double *u2) {
  double sum = 0, gg = 0, uu = 0;
  for (fl_int i = 0; i < nc; i++) {
    const double *g = gamma + 3 * i, *ui = u + 3 * i;
    double sn = mu[i] * hypot(ui[1], ui[2]);
    if (s) s[3 * i] = sn, s[3 * i + 1] = 0, s[3 * i + 2] = 0;
    double x[3] = {g[0] - ui[0] - sn, g[1] - ui[1], g[2] - ui[2]}, px[3];
    fl_cone_project(mu[i], x, px);
    for (int k = 0; k < 3; k++) {
      sum += (g[k] - px[k]) * (g[k] - px[k]);
      gg += g[k] * g[k];
      uu += ui[k] * ui[k];
    }
  }
  *g2 = gg;
  *u2 = uu;
  return sqrt(sum);
}


double fl__merit_divisor(int norm, double norm_q, double g2, double u2) {
  double m = 1;
  if (norm == FL_NORM_FCLIB) {
    m = 1 + sqrt(norm_q);
  } else if (norm == FL_NORM_SICONOS) {
    m = fmax(norm_q, fmax(sqrt(g2), sqrt(u2)));
    if (!(m > DBL_EPSILON)) m = 1;
  }
  return m;
}


void fl__global_velocity(const fl_csr *B, const fl_problem *p, const double *gamma, double *v) {
  if (!B || !v) return;
  memcpy(v, p->vstar, (size_t)p->nv * sizeof(double));
  fl_csr_gemtv(B, 1.0, gamma, 1.0, v);
}


void fl__cholmod_view(const fl_csr *K, double *val, cholmod_sparse *A) {
  memset(A, 0, sizeof(*A));
  A->nrow = (size_t)K->nrow;
  A->ncol = (size_t)K->ncol;
  A->nzmax = (size_t)K->nnz;
  A->p = K->rowptr;
  A->i = K->col;
  A->x = val;
  A->stype = 1;
  A->itype = CHOLMOD_INT;
  A->xtype = CHOLMOD_REAL;
  A->dtype = CHOLMOD_DOUBLE;
  A->sorted = 1;
  A->packed = 1;
}


void fl__cholmod_dense_view(fl_int n, double *x, cholmod_dense *B) {
  memset(B, 0, sizeof(*B));
  B->nrow = (size_t)n;
  B->ncol = 1;
  B->nzmax = (size_t)n;
  B->d = (size_t)n;
  B->x = x;
  B->xtype = CHOLMOD_REAL;
  B->dtype = CHOLMOD_DOUBLE;
}


int fl__chol_start(fl__chol *c) {
  if (!cholmod_start(&c->cc)) return -1;
  c->started = 1;
  c->cc.print = 0; /* errors come back as codes, not prints */
  c->cc.quick_return_if_not_posdef = 1;
  return 0;
}


int fl__chol_analyze(fl__chol *c, const fl_csr *K) {
  cholmod_sparse A;
  fl__cholmod_view(K, K->val, &A);
  c->L = cholmod_analyze(&A, &c->cc);
  return c->L ? 0 : -1;
}


int fl__chol_factor(fl__chol *c, const fl_csr *K, double *val, double shift) {
  cholmod_sparse A;
  fl__cholmod_view(K, val, &A);
  double beta[2] = {shift, 0};
  c->cc.status = CHOLMOD_OK;
  return cholmod_factorize_p(&A, beta, NULL, 0, c->L, &c->cc) && c->cc.status == CHOLMOD_OK &&
         c->L->minor == c->L->n;
}


int fl__chol_solve(fl__chol *c, fl_int n, double *b) {
  cholmod_dense B;
  fl__cholmod_dense_view(n, b, &B);
  return cholmod_solve2(CHOLMOD_A, c->L, &B, NULL, &c->X, NULL, &c->Y, &c->E, &c->cc) ? 0 : -1;
}


void fl__chol_free(fl__chol *c) {
  if (!c || !c->started) return;
  cholmod_free_factor(&c->L, &c->cc);
  cholmod_free_dense(&c->X, &c->cc);
  cholmod_free_dense(&c->Y, &c->cc);
  cholmod_free_dense(&c->E, &c->cc);
  cholmod_finish(&c->cc);
  c->started = 0;
}

// SPDX-License-Identifier: Apache-2.0
/* fem_impl.h: what the deformable bodies' files share (fem.c: creation, conditions, loads;
 * fem_step.c: the step and the queries). Never included outside sim/ and tests/.
 */
#ifndef FL_FEM_IMPL_H
#define FL_FEM_IMPL_H
// layer 4: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 4
#error "sim/fem_impl.h is in sim/, layer 4: a lower layer may not include it (docs/layers.md)"
#endif

#include "fl_fem.h"
#include "fl_schur.h"
#include "world_impl.h"

/* Step scratch of one body. */
typedef struct fl_fem_step {
  fl_int nfree;
  fl_int *free;       /* (nfree) dof of each free position */
  fl_int *fidx;       /* (ndof) free position of each dof, -1 if held */
  fl_int np;
  fl_int *part;       /* (np) participating free positions, ascending */
  fl_int *ppos;       /* (nfree) participating position of each free position, -1 if not */
  fl_int off;         /* first problem dof, -1 when the body has none this step */
  fl_int nprob;       /* problem dofs (nfree in full mode, np in schur mode) */
  fl_int clique;
  int schur;          /* presented as a Schur complement this step */
  fl_csr *A;          /* (ndof x ndof) A over all dofs */
  fl_int *amap;       /* (namap) position in A->val of each assembly triplet: the pattern is
                         the same every step, so later steps scatter instead of sorting */
  fl_int namap;
  fl_csr *Aff;        /* (nfree x nfree) */
  fl_schur *fac;      /* factor of Aff, participating last */
  double *vstar;      /* (nfree) */
  double *v0;         /* (nfree) */
  double *wa, *wb;    /* (ndof) work */
  double element_s, schur_s, recover_s;
} fl_fem_step;

/* The vertices of the tets around vertex a (a's patch), each once, into patch (b->v2t must be
 * built); mark (nvert, the caller's) must not hold a before the call. Returns their number. */
fl_int fl__fem_vertex_patch(const fl_fem_body *b, fl_int a, fl_int *mark, fl_int *patch);
/* Nodal pressures pn[a] = kappa (J_a - 1), J_a = sum_(e around a) vol_e J_e / 4 / V_a, from the
 * tets' det F at J[stride * e]. */
void fl__fem_nodal_pressure(const fl_fem_body *b, const double *J, int stride, double *pn);
/* FL_OK when k is a deformable body of w, else FL_ERR_INVAL naming `what`. */
int fl__fem_check_body(const fl_world *w, int k, const char *what);
/* The deformable kind's hooks outside the step (fl__body_ops in world_impl.h; fem.c). */
fl_int fl__fem_nv(const fl_world *w);
void fl__fem_reset_start(fl_world *w);
void fl__fem_energy(const fl_world *w, double *ke, double *pe, double P[3], double L[3]);
void fl__fem_release(fl_world *w);

#endif /* FL_FEM_IMPL_H */

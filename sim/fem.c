// SPDX-License-Identifier: Apache-2.0
/* fem.c: deformable bodies in the world: creation, boundary conditions and loads. fem_step.c
 * holds their step as a body kind: the per-step assembly of A and v* (seed 000 eq. 8-11), the
 * Schur complement of the participating dofs (eq. 14-16) and the recovery and integration
 * after the solve (eq. 15), and the queries. See fl_fem.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fem_impl.h"

//---- creation ----

void fl__fem_free(fl_fem_body *b) {
  if (!b) return;
  fl_fem_step *st = (fl_fem_step *)b->st;
  if (st) {
    fl_free(st->free);
    fl_free(st->fidx);
    fl_free(st->part);
    fl_free(st->ppos);
    fl_csr_free(st->A);
    fl_free(st->amap);
    fl_csr_free(st->Aff);
    fl_schur_free(st->fac);
    fl_free(st->vstar);
    fl_free(st->v0);
    fl_free(st->wa);
    fl_free(st->wb);
    fl_free(st);
  }
  fl_mesh_free(b->mesh);
  fl_free(b->x);
  fl_free(b->v);
  fl_free(b->x_start);
  fl_free(b->held);
  fl_free(b->v_held);
  fl_free(b->f_node);
  fl_free(b->DmInv);
  fl_free(b->vol);
  fl_free(b->Vn);
  fl_free(b->v2t_ptr);
  fl_free(b->v2t);
  fl_csr_free(b->M);
  fl_free(b);
}


//---- the kind's hooks outside the step (fl__body_ops) ----

fl_int fl__fem_nv(const fl_world *w) {
  fl_int nv = 0;
  for (fl_int k = 0; k < w->nfem; k++) {
    const fl_fem_body *b = w->fem[k];
    for (fl_int d = 0; d < b->ndof; d++) nv += !b->held[d];
  }
  return nv;
}


void fl__fem_reset_start(fl_world *w) {
  for (fl_int k = 0; k < w->nfem; k++) {
    fl_fem_body *b = w->fem[k];
    memcpy(b->x_start, b->x, (size_t)b->ndof * sizeof(double));
  }
}


void fl__fem_energy(const fl_world *w, double *ke, double *pe, double P[3], double L[3]) {
  for (fl_int k = 0; k < w->nfem; k++) {
    const fl_fem_body *b = w->fem[k];
    double kf = 0, pf = 0;
    fl_fem_energy(w, (int)k, &kf, NULL, &pf);
    *ke += kf;
    *pe += pf;
    // momentum M v per node and its moment x x M v
    const fl_csr *M = b->M;
    for (fl_int r = 0; r < M->nrow; r += 3) {
      double mv[3] = {0, 0, 0}, xp[3];
      for (int c = 0; c < 3; c++) {
        for (fl_int q = M->rowptr[r + c]; q < M->rowptr[r + c + 1]; q++)
          mv[c] += M->val[q] * b->v[M->col[q]];
      }
      fl_v3_cross(b->x + r, mv, xp);
      for (int c = 0; c < 3; c++) {
        P[c] += mv[c];
        L[c] += xp[c];
      }
    }
  }
}


void fl__fem_release(fl_world *w) {
  for (fl_int k = 0; k < w->nfem; k++) fl__fem_free(w->fem[k]);
  fl_free(w->fem);
  w->fem = NULL;
}


/* Mass matrix of linear tets: consistent rho V/20 (1 + delta_ab) I3 per vertex pair, or its
 * row sums rho V/4 I3 on the diagonal (lumped). */
static int build_mass(fl_fem_body *b) {
  const fl_mesh *m = b->mesh;
  fl_int nt = b->lumped ? 12 * m->ntet : 48 * m->ntet;
  fl_int *ti = fl_malloc((size_t)nt * sizeof(fl_int)), *tj = fl_malloc((size_t)nt * sizeof(fl_int));
  double *tv = fl_malloc((size_t)nt * sizeof(double));
  if (!ti || !tj || !tv) {
    fl_free(ti);
    fl_free(tj);
    fl_free(tv);
    return fl_seterr(FL_ERR_NOMEM, "fem %s: out of memory for the mass matrix", b->name);
  }
  fl_int k = 0;
  b->mass = 0;
  for (fl_int e = 0; e < m->ntet; e++) {
    const fl_int *t = m->tet + 4 * e;
    double me = b->density * b->vol[e];
    b->mass += me;
    for (int i = 0; i < 4; i++) {
      for (int j = 0; j < 4; j++) {
        if (b->lumped && i != j) continue;
        double val = b->lumped ? me / 4 : me * (i == j ? 2.0 : 1.0) / 20;
        for (int c = 0; c < 3; c++) {
          ti[k] = 3 * t[i] + c;
          tj[k] = 3 * t[j] + c;
          tv[k++] = val;
        }
      }
    }
  }
  int rc = fl_csr_from_triplets(b->ndof, b->ndof, k, ti, tj, tv, &b->M);
  fl_free(ti);
  fl_free(tj);
  fl_free(tv);
  return rc;
}


/* The vertices of the tets around vertex a (a's patch), each once, into patch (b->v2t must be
 * built); mark (nvert, the caller's) must not hold a before the call. Returns their number. */
fl_int fl__fem_vertex_patch(const fl_fem_body *b, fl_int a, fl_int *mark, fl_int *patch) {
  fl_int np = 0;
  for (fl_int q = b->v2t_ptr[a]; q < b->v2t_ptr[a + 1]; q++) {
    for (int k = 0; k < 4; k++) {
      fl_int v = b->mesh->tet[4 * b->v2t[q] + k];
      if (mark[v] != a) {
        mark[v] = a;
        patch[np++] = v;
      }
    }
  }
  return np;
}


/* Nodal pressures pn[a] = kappa (J_a - 1), J_a = sum_(e around a) vol_e J_e / 4 / V_a, from the
 * tets' det F at J[stride * e]. */
void fl__fem_nodal_pressure(const fl_fem_body *b, const double *J, int stride, double *pn) {
  for (fl_int a = 0; a < b->mesh->nvert; a++) {
    double v = 0;
    for (fl_int q = b->v2t_ptr[a]; q < b->v2t_ptr[a + 1]; q++)
      v += b->vol[b->v2t[q]] * J[stride * b->v2t[q]] / 4;
    pn[a] = b->model.kappa * (v / b->Vn[a] - 1);
  }
}


/* Nodal volume data: rest volumes V_a = sum_(e around a) vol_e / 4, the tets around each
 * vertex, and the number of stiffness triplets (the (x, y[, z]) dofs of each vertex's patch,
 * all pairs). */
static int build_nodal(fl_fem_body *b) {
  const fl_mesh *m = b->mesh;
  fl_int nv = m->nvert, nt = m->ntet;
  b->nodal_volume = 1;
  b->Vn = fl_calloc((size_t)nv, sizeof(double));
  b->v2t_ptr = fl_calloc((size_t)nv + 1, sizeof(fl_int));
  b->v2t = fl_malloc((size_t)(4 * nt) * sizeof(fl_int));
  fl_int *mark = fl_malloc((size_t)nv * sizeof(fl_int));
  fl_int *patch = fl_malloc((size_t)nv * sizeof(fl_int));
  if (!b->Vn || !b->v2t_ptr || !b->v2t || !mark || !patch) {
    fl_free(mark);
    fl_free(patch);
    return fl_seterr(FL_ERR_NOMEM, "fem %s: out of memory", b->name);
  }
  for (fl_int e = 0; e < nt; e++) {
    for (int a = 0; a < 4; a++) {
      b->Vn[m->tet[4 * e + a]] += b->vol[e] / 4;
      b->v2t_ptr[m->tet[4 * e + a] + 1]++;
    }
  }
  for (fl_int i = 0; i < nv; i++) b->v2t_ptr[i + 1] += b->v2t_ptr[i];
  for (fl_int i = 0; i < nv; i++) mark[i] = b->v2t_ptr[i];
  for (fl_int e = 0; e < nt; e++) {
    for (int a = 0; a < 4; a++) b->v2t[mark[m->tet[4 * e + a]]++] = e;
  }
  int nc = b->plane_strain ? 2 : 3;
  for (fl_int i = 0; i < nv; i++) mark[i] = -1;
  b->nodal_nnz = 0;
  for (fl_int a = 0; a < nv; a++) {
    fl_int np = fl__fem_vertex_patch(b, a, mark, patch);
    b->nodal_nnz += (nc * np) * (nc * np);
  }
  fl_free(mark);
  fl_free(patch);
  return FL_OK;
}


int fl_world_add_fem(fl_world *w, const fl_fem_desc *d, fl_mesh **meshp) {
  fl_mesh *mesh = meshp ? *meshp : NULL;
  if (meshp) *meshp = NULL;
  char nm[32];
  if (d && d->name) snprintf(nm, sizeof nm, "%s", d->name);
  else snprintf(nm, sizeof nm, "fem%d", (int)w->nfem);
  int rc = FL_OK;
  if (d && d->name && fl_name_check(d->name, "fl_world_add_fem", "body name") < 0) {
    fl_mesh_free(mesh);
    return fl_errcode();
  }
  if (!d || !mesh) {
    fl_mesh_free(mesh);
    return fl_seterr(FL_ERR_INVAL, "deformable body %s: no description or mesh", nm);
  }
  char where[64];
  snprintf(where, sizeof where, "deformable body %s", nm);
  {
    // the FEM system (element data, stiffness matrix and its factor) of all deformable bodies
    // together, estimated before anything is built: measured at 8.5-9 kB a tet on Kuhn boxes
    // of 16^3 to 32^3 cells (growing slowly with the factor's fill), so 8 kB is a lower bound
    double tets = (double)mesh->ntet;
    for (fl_int k = 0; k < w->nfem; k++) tets += (double)w->fem[k]->mesh->ntet;
    char what[128];
    snprintf(what, sizeof what, "the FEM system of %.0f tets (about 8 kB a tet)", tets);
    if ((rc = fl_mem_check(where, what, tets * FL_FEM_BYTES_PER_TET)) < 0) goto fail_mesh;
  }
  if ((rc = fl_fem_material_check(&d->model, where)) < 0) goto fail_mesh;
  if (!(d->density > 0) || !isfinite(d->density)) {
    rc = fl_seterr(FL_ERR_INVAL, "%s: density = %g, expected a finite number > 0 (kg/m^3)",
                   where, d->density);
    goto fail_mesh;
  }
  if (!(d->alpha >= 0) || !(d->beta >= 0) || !isfinite(d->alpha) || !isfinite(d->beta)) {
    rc = fl_seterr(FL_ERR_INVAL, "%s: Rayleigh alpha = %g, beta = %g, expected finite numbers >= 0",
                   where, d->alpha, d->beta);
    goto fail_mesh;
  }
  if (d->material < 0 || d->material >= w->nmat) {
    rc = fl_seterr(FL_ERR_INVAL, "%s: material %d out of range [0, %d)", where, d->material,
                   (int)w->nmat);
    goto fail_mesh;
  }
  for (int c = 0; c < 3; c++) {
    if (!isfinite(d->pos[c]) || !isfinite(d->vel[c])) {
      rc = fl_seterr(FL_ERR_INVAL, "%s: pos and vel must be finite", where);
      goto fail_mesh;
    }
  }
  fl_fem_body *b = fl_calloc(1, sizeof *b);
  if (!b) {
    rc = fl_seterr(FL_ERR_NOMEM, "%s: out of memory", where);
    goto fail_mesh;
  }
  snprintf(b->name, sizeof b->name, "%s", nm);
  b->mesh = mesh;
  mesh = NULL;
  b->model = d->model;
  b->density = d->density;
  b->alpha = d->alpha;
  b->beta = d->beta;
  b->material = d->material;
  b->plane_strain = d->plane_strain != 0;
  b->lumped = d->lumped != 0;
  b->f_t0 = b->f_t1 = 0;
  memcpy(b->pos, d->pos, sizeof b->pos);
  fl_mesh *m = b->mesh;
  b->ndof = 3 * m->nvert;
  size_t nd = (size_t)b->ndof;
  b->x = fl_malloc(nd * sizeof(double));
  b->v = fl_malloc(nd * sizeof(double));
  b->x_start = fl_malloc(nd * sizeof(double));
  b->held = fl_calloc(nd, 1);
  b->v_held = fl_calloc(nd, sizeof(double));
  b->f_node = fl_calloc(nd, sizeof(double));
  b->DmInv = fl_malloc((size_t)m->ntet * 9 * sizeof(double));
  b->vol = fl_malloc((size_t)m->ntet * sizeof(double));
  b->st = fl_calloc(1, sizeof(fl_fem_step));
  if (!b->x || !b->v || !b->x_start || !b->held || !b->v_held || !b->f_node || !b->DmInv ||
      !b->vol || !b->st) {
    rc = fl_seterr(FL_ERR_NOMEM, "%s: out of memory", where);
    goto fail_body;
  }
  // rest positions moved by pos; every tet's rest shape checked
  for (fl_int i = 0; i < m->nvert; i++) {
    for (int c = 0; c < 3; c++) {
      m->X[3 * i + c] += d->pos[c];
      b->x[3 * i + c] = b->x_start[3 * i + c] = m->X[3 * i + c];
      b->v[3 * i + c] = d->vel[c];
    }
  }
  for (fl_int e = 0; e < m->ntet; e++) {
    double Xe[12];
    for (int a = 0; a < 4; a++) memcpy(Xe + 3 * a, m->X + 3 * m->tet[4 * e + a], 3 * sizeof(double));
    if ((rc = fl_fem_tet_rest(Xe, b->DmInv + 9 * e, b->vol + e)) < 0) {
      rc = fl_seterr(rc, "%s: tet %d: %s", where, (int)e, fl_errmsg());
      goto fail_body;
    }
  }
  if (b->plane_strain) {
    // out-of-plane velocities held at zero (seed 000: no drift from round-off)
    for (fl_int i = 0; i < m->nvert; i++) {
      b->held[3 * i + 2] = 1;
      b->v[3 * i + 2] = 0;
    }
  }
  if ((rc = build_mass(b)) < 0) goto fail_body;
  if (d->nodal_volume) {
    if (b->model.model != FL_FEM_MOONEY_RIVLIN) {
      rc = fl_seterr(FL_ERR_INVAL, "%s: nodal volume needs the mooney_rivlin model (its volume "
                     "term is separate from the isochoric part)", where);
      goto fail_body;
    }
    if ((rc = build_nodal(b)) < 0) goto fail_body;
  }
  if ((rc = fl_grow((void **)&w->fem, &w->cap_fem, w->nfem + 1, sizeof(fl_fem_body *), "fem")) < 0)
    goto fail_body;
  w->fem[w->nfem] = b;
  return w->nfem++;

fail_body:
  fl__fem_free(b);
  return rc;
fail_mesh:
  fl_mesh_free(mesh);
  return rc;
}


int fl_world_find_fem(const fl_world *w, const char *name) {
  for (fl_int k = 0; k < w->nfem; k++) {
    if (strcmp(w->fem[k]->name, name) == 0) return (int)k;
  }
  return -1;
}


//---- boundary conditions and loads ----

int fl__fem_check_body(const fl_world *w, int k, const char *what) {
  if (k < 0 || k >= w->nfem)
    return fl_seterr(FL_ERR_INVAL, "%s: deformable body %d out of range [0, %d)", what, k,
                     (int)w->nfem);
  return FL_OK;
}


int fl_fem_hold_vertices(fl_world *w, int k, fl_int n, const fl_int *idx, int axes,
                         const double vel[3]) {
  FL_TRY(fl__fem_check_body(w, k, "hold"));
  fl_fem_body *b = w->fem[k];
  if (axes <= 0 || axes > 7)
    return fl_seterr(FL_ERR_INVAL, "deformable body %s: hold axes %d, expected 1..7 (x=1, y=2, z=4)",
                     b->name, axes);
  if (n <= 0)
    return fl_seterr(FL_ERR_INVAL, "deformable body %s: hold selects no vertex", b->name);
  double v[3] = {0, 0, 0};
  if (vel) memcpy(v, vel, sizeof v);
  for (int c = 0; c < 3; c++) {
    if (!isfinite(v[c]))
      return fl_seterr(FL_ERR_INVAL, "deformable body %s: hold velocity must be finite", b->name);
  }
  for (fl_int i = 0; i < n; i++) {
    if (idx[i] < 0 || idx[i] >= b->mesh->nvert)
      return fl_seterr(FL_ERR_INVAL, "deformable body %s: hold vertex %d out of range [0, %d)",
                       b->name, (int)idx[i], (int)b->mesh->nvert);
  }
  for (fl_int i = 0; i < n; i++) {
    for (int c = 0; c < 3; c++) {
      if (!(axes & (1 << c))) continue;
      fl_int dof = 3 * idx[i] + c;
      b->held[dof] = 1;
      b->v_held[dof] = (b->plane_strain && c == 2) ? 0 : v[c];
      b->v[dof] = b->v_held[dof];
    }
  }
  return (int)n;
}


int fl_fem_hold_box(fl_world *w, int k, const double lo[3], const double hi[3], int axes,
                    const double vel[3]) {
  FL_TRY(fl__fem_check_body(w, k, "hold"));
  fl_fem_body *b = w->fem[k];
  fl_int *idx = NULL, n = 0;
  FL_TRY(fl_mesh_select_box(b->mesh, lo, hi, 1e-9, &idx, &n));
  int rc;
  if (n == 0)
    rc = fl_seterr(FL_ERR_INVAL,
                   "deformable body %s: the hold box [%g %g %g]..[%g %g %g] contains no vertex",
                   b->name, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
  else rc = fl_fem_hold_vertices(w, k, n, idx, axes, vel);
  fl_free(idx);
  return rc;
}


int fl_fem_add_nodal_force(fl_world *w, int k, fl_int n, const fl_int *idx, const double f[3],
                           double t0, double t1) {
  FL_TRY(fl__fem_check_body(w, k, "nodal force"));
  fl_fem_body *b = w->fem[k];
  if (!isfinite(f[0]) || !isfinite(f[1]) || !isfinite(f[2]) || !isfinite(t0) || !isfinite(t1))
    return fl_seterr(FL_ERR_INVAL, "deformable body %s: nodal force and ramp must be finite",
                     b->name);
  for (fl_int i = 0; i < n; i++) {
    if (idx[i] < 0 || idx[i] >= b->mesh->nvert)
      return fl_seterr(FL_ERR_INVAL, "deformable body %s: force vertex %d out of range [0, %d)",
                       b->name, (int)idx[i], (int)b->mesh->nvert);
  }
  for (fl_int i = 0; i < n; i++) {
    for (int c = 0; c < 3; c++) b->f_node[3 * idx[i] + c] += f[c];
  }
  b->f_t0 = t0;
  b->f_t1 = t1;
  return FL_OK;
}

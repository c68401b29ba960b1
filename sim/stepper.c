/* stepper.c: collide, assemble fl_problem, solve, integrate.
 *
 * Per step:
 *   collide   AABBs grown by the margin -> fl_broadphase -> fl_collide per pair (phi <= margin;
 *             with fl_world.speculative the margin also covers the gap a pair can close in a step)
 *   assemble  dofs (v, w) per dynamic body in the world frame; A = blockdiag(m I3, R I R^T);
 *             v* = v0 + dt A^-1 (f_ext(t) - (0, w x I w)); contact rows (n, t1, t2) of the
 *             velocity of b relative to a at the contact point, u_n > 0 separating; joint rows;
 *             the velocity of prescribed bodies goes into b; previous impulses matched by
 *             (body pair, feature id) into gamma_guess
 *   deformable bodies (fem.c, fem_collide.c): their contacts come after the rigid ones, their
 *             dofs and cliques after the rigid bodies' (full sparse block or Schur complement)
 *   solve     the named solver through solvers/fl_solver.h, guess v = v* + A^-1 J^T gamma_guess
 *   integrate x += dt v, q <- normalize(q + dt/2 (0, w) q) (fl_quat_integrate)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fl_fem.h"
#include "world_impl.h"

//---- scratch growth ----

static int grow(void **arr, fl_int *cap, fl_int need, size_t elem) {
  if (need <= *cap) return FL_OK;
  fl_int nc = *cap ? *cap : 16;
  while (nc < need) nc *= 2;
  void *p = fl_realloc(*arr, (size_t)nc * elem);
  if (!p) return fl_seterr(FL_ERR_NOMEM, "stepper: out of memory (%d items)", (int)nc);
  *arr = p;
  *cap = nc;
  return FL_OK;
}


//---- collision ----

/* CPU time of this process (s), for benchmarks on a shared machine. */
static int point_before(const fl_manifold_point *a, const fl_manifold_point *b) {
  for (int k = 0; k < 3; k++) {
    double x = floor(a->p[k] * 1e9 + 0.5), y = floor(b->p[k] * 1e9 + 0.5);
    if (x != y) return x < y;
  }
  return 0;
}


/* The fastest a point of body b moves from its spin alone (m/s): |w| r with r its bounding
 * radius, 0 for fixed bodies and unbounded shapes. */
static double spin_reach(const fl_body *b) {
  if (b->kind == FL_BODY_FIXED || !isfinite(b->shape.radius)) return 0;
  return sqrt(b->omega[0] * b->omega[0] + b->omega[1] * b->omega[1] + b->omega[2] * b->omega[2]) *
         b->shape.radius;
}


static double speed(const double v[3]) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }


int fl__collide_all(fl_world *w, double margin, double spec, fl__contact **ctp, fl_int *nctp,
                    fl_int *capp, fl_int *npairs_out) {
  FL_TRY(fl__world_impl(w));
  fl_world_impl *m = w->impl;
  fl_int n = w->nbody;
  if (n > m->cap_aabb) {
    fl_int cap = m->cap_aabb;
    FL_TRY(grow((void **)&m->lo, &cap, n, 3 * sizeof(double)));
    cap = m->cap_aabb;
    FL_TRY(grow((void **)&m->hi, &cap, n, 3 * sizeof(double)));
    cap = m->cap_aabb;
    FL_TRY(grow((void **)&m->skip, &cap, n, 1));
    m->cap_aabb = cap;
  }
  // boxes grown by the margin (and by what the body can travel in a step when speculative:
  // two boxes grown by their own reaches meet whenever the pair can close its gap); pairs of
  // non-dynamic bodies are skipped
  double sdt = spec > 0 ? spec * w->dt : 0;
  for (fl_int i = 0; i < n; i++) {
    const fl_body *b = &w->body[i];
    double g = margin;
    if (sdt > 0 && b->kind != FL_BODY_FIXED) g += sdt * (speed(b->vel) + spin_reach(b));
    fl_shape_aabb(&b->shape, b->pos, b->quat, g, m->lo + 3 * i, m->hi + 3 * i);
    m->skip[i] = b->kind != FL_BODY_DYNAMIC;
  }
  fl_int *pairs = NULL, np = 0;
  FL_TRY(fl_broadphase(n, m->lo, m->hi, m->skip, &pairs, &np));
  *nctp = 0;
  fl_manifold_point mp[FL_MANIFOLD_MAX];
  int rc = FL_OK;
  for (fl_int k = 0; k < np; k++) {
    fl_int i = pairs[2 * k], j = pairs[2 * k + 1];
    const fl_body *a = &w->body[i], *b = &w->body[j];
    if (a->kind != FL_BODY_DYNAMIC && b->kind != FL_BODY_DYNAMIC) continue;
    if (a->hydro_modulus > 0 || b->hydro_modulus > 0) {
      // compliant pressure-field patch (hydroelastic.c); unsupported pairs fall through
      int nh = fl__hydro_collide(w, i, j, margin, ctp, nctp, capp);
      if (nh >= 0) continue;
      if (nh != FL_ERR_UNSUPPORTED) {
        rc = nh;
        break;
      }
    }
    double mg = margin;
    if (sdt > 0) {
      // the gap the pair can close in one step: relative speed of the origins and the spins
      double dv[3] = {a->vel[0] - b->vel[0], a->vel[1] - b->vel[1], a->vel[2] - b->vel[2]};
      if (a->kind == FL_BODY_FIXED) dv[0] = -b->vel[0], dv[1] = -b->vel[1], dv[2] = -b->vel[2];
      if (b->kind == FL_BODY_FIXED) dv[0] = a->vel[0], dv[1] = a->vel[1], dv[2] = a->vel[2];
      mg += sdt * (speed(dv) + spin_reach(a) + spin_reach(b));
    }
    int nm = fl_collide(&a->shape, a->pos, a->quat, &b->shape, b->pos, b->quat, mg, mp);
    if (nm == FL_ERR_UNSUPPORTED) continue;
    if (nm < 0) {
      rc = fl_seterr(nm, "collide %s/%s: %s", a->name, b->name, fl_errmsg());
      break;
    }
    // a canonical order within the manifold (by position, to 1 nm), so that the same geometry
    // gives the same problem whatever the numbering of the hull's faces (scene files)
    for (int c = 1; c < nm; c++) {
      fl_manifold_point t = mp[c];
      int d = c - 1;
      while (d >= 0 && point_before(&t, &mp[d])) {
        mp[d + 1] = mp[d];
        d--;
      }
      mp[d + 1] = t;
    }
    if (*nctp + nm > *capp) {
      rc = grow((void **)ctp, capp, *nctp + nm, sizeof(fl__contact));
      if (rc < 0) break;
    }
    for (int c = 0; c < nm; c++) {
      fl__contact *ct = &(*ctp)[(*nctp)++];
      ct->a = i;
      ct->b = j;
      memcpy(ct->p, mp[c].p, sizeof ct->p);
      memcpy(ct->n, mp[c].n, sizeof ct->n);
      ct->phi = mp[c].phi;
      ct->feature = mp[c].feature;
      ct->k = 0;
    }
  }
  fl_free(pairs);
  if (npairs_out) *npairs_out = np;
  return rc;
}


//---- warm start keys ----

static int key_cmp(const void *pa, const void *pb) {
  const fl__wskey *a = pa, *b = pb;
  if (a->a != b->a) return a->a < b->a ? -1 : 1;
  if (a->b != b->b) return a->b < b->b ? -1 : 1;
  if (a->feature != b->feature) return a->feature < b->feature ? -1 : 1;
  return 0;
}


static const fl__wskey *key_find(const fl_world_impl *m, fl_int a, fl_int b, int64_t f) {
  fl__wskey k = {a, b, f, 0};
  return m->nws ? bsearch(&k, m->ws, (size_t)m->nws, sizeof k, key_cmp) : NULL;
}


//---- assembly ----

/* Velocity of a non-dynamic body seen through row coefficients j (6). */
static double body_rate(const fl_world *w, fl_int k, const double j[6]) {
  if (k < 0) return 0;
  const fl_body *b = &w->body[k];
  if (b->kind != FL_BODY_PRESCRIBED) return 0;
  return j[0] * b->vel[0] + j[1] * b->vel[1] + j[2] * b->vel[2] + j[3] * b->omega[0] +
         j[4] * b->omega[1] + j[5] * b->omega[2];
}


/* Appends one row of J with coefficients ja on body a and jb on body b (dynamic ones only,
 * lower dof first) and returns the constant term of the non-dynamic bodies. */
static double put_row(const fl_world *w, fl_csr *J, fl_int row, fl_int *nnz, fl_int a,
                      const double ja[6], fl_int b, const double jb[6]) {
  fl_int da = (a >= 0) ? w->body[a].dof : -1, db = (b >= 0) ? w->body[b].dof : -1;
  double bconst = 0;
  if (da < 0) bconst += body_rate(w, a, ja);
  if (db < 0) bconst += body_rate(w, b, jb);
  fl_int d1 = da, d2 = db;
  const double *j1 = ja, *j2 = jb;
  if (d2 >= 0 && (d1 < 0 || d2 < d1)) {
    d1 = db;
    d2 = da;
    j1 = jb;
    j2 = ja;
  }
  if (d1 >= 0) {
    for (int k = 0; k < 6; k++) {
      J->col[*nnz] = d1 + k;
      J->val[(*nnz)++] = j1[k];
    }
  }
  if (d2 >= 0) {
    for (int k = 0; k < 6; k++) {
      J->col[*nnz] = d2 + k;
      J->val[(*nnz)++] = j2[k];
    }
  }
  J->rowptr[row + 1] = *nnz;
  return bconst;
}


static int ndyn(const fl_world *w, fl_int a, fl_int b) {
  return (a >= 0 && w->body[a].dof >= 0) + (b >= 0 && w->body[b].dof >= 0);
}


//---- rows of contacts with deformable bodies ----

/* Columns a side can put in one row: 6 for a dynamic rigid body, 3 per mesh vertex. */
static fl_int side_width(const fl_world *w, const fl__side *s) {
  if (s->fem >= 0) return 3 * s->nvert;
  return (s->body >= 0 && w->body[s->body].dof >= 0) ? 6 : 0;
}


static int side_material(const fl_world *w, const fl__side *s) {
  return s->fem >= 0 ? w->fem[s->fem]->material : w->body[s->body].material;
}


static fl_int side_clique(const fl_world *w, const fl__side *s) {
  if (s->fem >= 0) return fl__fem_clique(w, s->fem);
  fl_int d = w->body[s->body].dof;
  return d >= 0 ? d / 6 : -1;
}


/* Warm-start id of a side: the rigid body, or the deformable body after all rigid ones. */
static fl_int side_key(const fl_world *w, const fl__side *s) {
  return s->fem >= 0 ? fl__fem_key(w, s->fem) : s->body;
}


/* Coefficients of side s along d times sign into cols/vals; returns their number. */
static int side_row(const fl_world *w, const fl__side *s, const fl__fcontact *ct,
                    const double d[3], double sign, fl_int *cols, double *vals, double *bconst) {
  if (s->fem >= 0) return fl__fem_side_row(w, s, d, sign, cols, vals, bconst);
  const fl_body *b = &w->body[s->body];
  double r[3], cr[3], j[6];
  for (int k = 0; k < 3; k++) r[k] = ct->p[k] - b->pos[k];
  fl_v3_cross(r, d, cr);
  for (int k = 0; k < 3; k++) {
    j[k] = sign * d[k];
    j[3 + k] = sign * cr[k];
  }
  if (b->dof < 0) {
    *bconst += body_rate(w, s->body, j);
    return 0;
  }
  for (int k = 0; k < 6; k++) {
    cols[k] = b->dof + k;
    vals[k] = j[k];
  }
  return 6;
}


/* Row of J for the velocity of side b minus side a along d (columns sorted, duplicates
 * merged); returns the constant term of prescribed motion. */
static double put_frow(const fl_world *w, fl_csr *J, fl_int row, fl_int *nnz,
                       const fl__fcontact *ct, const double d[3]) {
  fl_int cols[24];
  double vals[24], bconst = 0;
  int n = side_row(w, &ct->a, ct, d, -1.0, cols, vals, &bconst);
  n += side_row(w, &ct->b, ct, d, 1.0, cols + n, vals + n, &bconst);
  for (int i = 1; i < n; i++) {
    fl_int c = cols[i];
    double v = vals[i];
    int k = i - 1;
    while (k >= 0 && cols[k] > c) {
      cols[k + 1] = cols[k];
      vals[k + 1] = vals[k];
      k--;
    }
    cols[k + 1] = c;
    vals[k + 1] = v;
  }
  for (int i = 0; i < n; i++) {
    if (*nnz > J->rowptr[row] && J->col[*nnz - 1] == cols[i]) {
      J->val[*nnz - 1] += vals[i];
      continue;
    }
    J->col[*nnz] = cols[i];
    J->val[(*nnz)++] = vals[i];
  }
  J->rowptr[row + 1] = *nnz;
  return bconst;
}


int fl_world_prepare(fl_world *w, fl_step_info *info) {
  FL_TRY(fl__world_impl(w));
  fl_world_impl *m = w->impl;
  double t0 = fl_time_now(), c0 = w->cpu_times ? fl_cpu_now() : NAN;
  fl_int npairs = 0;
  FL_TRY(fl__collide_all(w, w->margin, w->speculative, &m->ct, &m->nct, &m->cap_ct, &npairs));
  m->nfct = 0;
  if (w->nfem > 0) FL_TRY(fl__fem_collide(w, w->margin, &m->fct, &m->nfct, &m->cap_fct));
  double t1 = fl_time_now(), c1 = w->cpu_times ? fl_cpu_now() : NAN;

  //---- sizes ----
  fl_int nv = 0, ncl = 0;
  for (fl_int i = 0; i < w->nbody; i++) {
    if (w->body[i].dof >= 0) {
      ncl++;
      nv = w->body[i].dof + 6;
    }
  }
  fl_int nv_rigid = nv, ncl_rigid = ncl;
  if (w->nfem > 0) FL_TRY(fl__fem_prepare(w, m->fct, m->nfct, &nv, &ncl));
  fl_int nc = m->nct + m->nfct, nh = 0;
  for (fl_int j = 0; j < w->njoint; j++) nh += fl_joint_nrows(&w->joint[j]);
  fl_problem_free(m->prob);
  m->prob = NULL;
  m->solved = 0;
  fl_problem *p = NULL;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_GLOBAL, nv, nc, nh, ncl, &p));
  m->prob = p;
  p->dt = w->dt;
  if (3 * nc + nh > 0) {
    // owned and freed by the problem (fl_problem.h)
    p->gamma_guess = fl_calloc((size_t)(3 * nc + nh), sizeof(double));
    if (!p->gamma_guess) return fl_seterr(FL_ERR_NOMEM, "stepper: out of memory");
  }
  snprintf(p->name, sizeof p->name, "%s step %d", w->name, (int)w->step);
  if (ncl > 0 && (!p->clique_ptr || !p->clique_dof || !p->dof_clique))
    return fl_seterr(FL_ERR_STATE, "stepper: fl_problem_alloc gave no clique arrays");

  //---- A, v0, v*: one 6x6 clique per dynamic body ----
  int rc = fl_csr_alloc(nv, nv, 12 * ncl_rigid + (w->nfem > 0 ? fl__fem_nnz(w) : 0), &p->A);
  if (rc < 0) return rc;
  fl_csr *A = p->A;
  fl_int nnz = 0, cl = 0;
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    if (b->dof < 0) continue;
    fl_int d = b->dof;
    double Iw[9], Iinv[9], Iwo[3], gyro[3], tq[3] = {0, 0, 0}, f[3];
    fl__body_inertia_world(b, Iw);
    for (int k = 0; k < 3; k++) {
      A->col[nnz] = d + k;
      A->val[nnz++] = b->mass;
      A->rowptr[d + k + 1] = nnz;
    }
    for (int r = 0; r < 3; r++) {
      for (int c = 0; c < 3; c++) {
        A->col[nnz] = d + 3 + c;
        A->val[nnz++] = Iw[3 * r + c];
      }
      A->rowptr[d + 3 + r + 1] = nnz;
    }
    p->clique_ptr[cl] = d;
    for (int k = 0; k < 6; k++) {
      p->clique_dof[d + k] = d + k;
      p->dof_clique[d + k] = cl;
    }
    cl++;
    // free motion with the explicit gyroscopic term
    for (int k = 0; k < 3; k++) f[k] = b->mass * w->gravity[k];
    for (fl_int k = 0; k < w->nforce; k++) {
      const fl_force *F = &w->force[k];
      if (F->body != i) continue;
      double s = fl_force_scale(F, w->t);
      for (int c = 0; c < 3; c++) {
        f[c] += s * F->f[c];
        tq[c] += s * F->tau[c];
      }
    }
    fl_m3_mulv(Iw, b->omega, Iwo);
    fl_v3_cross(b->omega, Iwo, gyro);
    rc = fl_m3_inv(Iw, Iinv);
    if (rc < 0) return fl_seterr(rc, "stepper: body %s has a singular inertia", b->name);
    for (int k = 0; k < 3; k++) tq[k] -= gyro[k];
    double dw[3];
    fl_m3_mulv(Iinv, tq, dw);
    for (int k = 0; k < 3; k++) {
      p->v0[d + k] = b->vel[k];
      p->v0[d + 3 + k] = b->omega[k];
      p->vstar[d + k] = b->vel[k] + w->dt * f[k] / b->mass;
      p->vstar[d + 3 + k] = b->omega[k] + w->dt * dw[k];
    }
  }
  if (w->nfem > 0) {
    // the unreduced diagonal (fl_problem.h) so that SAP regularizes full and Schur alike
    p->adiag_hint = fl_malloc((size_t)(nv > 0 ? nv : 1) * sizeof(double));
    if (!p->adiag_hint) return fl_seterr(FL_ERR_NOMEM, "stepper: out of memory");
    A->nnz = nnz;
    for (fl_int i = 0; i < nv_rigid; i++) p->adiag_hint[i] = fl_csr_get(A, i, i);
    fl__fem_fill(w, p, &nnz);
  }
  A->nnz = nnz;
  if (ncl > 0) p->clique_ptr[ncl] = nv;

  //---- J: 3 rows per contact, then the joints' rows ----
  fl_int jnnz = 0;
  for (fl_int c = 0; c < m->nct; c++) jnnz += 18 * ndyn(w, m->ct[c].a, m->ct[c].b);
  for (fl_int c = 0; c < m->nfct; c++)
    jnnz += 3 * (side_width(w, &m->fct[c].a) + side_width(w, &m->fct[c].b));
  for (fl_int j = 0; j < w->njoint; j++)
    jnnz += 6 * fl_joint_nrows(&w->joint[j]) * ndyn(w, w->joint[j].body_a, w->joint[j].body_b);
  rc = fl_csr_alloc(3 * nc + nh, nv, jnnz, &p->J);
  if (rc < 0) return rc;
  fl_csr *J = p->J;
  J->rowptr[0] = 0;
  nnz = 0;

  // contact law table over material pairs (explicit pairs override the rules)
  fl_int nm = w->nmat;
  double law_small[3 * 64];
  double *law = (nm * nm <= 64) ? law_small : fl_malloc((size_t)(3 * nm * nm) * sizeof(double));
  if (!law) return fl_seterr(FL_ERR_NOMEM, "stepper: out of memory");
  for (fl_int a = 0; a < nm; a++) {
    for (fl_int b = 0; b < nm; b++) {
      double *L = law + 3 * (a * nm + b);
      fl_material_combine(&w->mat[a], &w->mat[b], w->mu_rule, &L[0], &L[1], &L[2]);
    }
  }
  for (fl_int k = 0; k < w->npair; k++) {
    const fl_pair_material *pm = &w->pair[k];
    double *L1 = law + 3 * (pm->mat_a * nm + pm->mat_b), *L2 = law + 3 * (pm->mat_b * nm + pm->mat_a);
    L1[0] = L2[0] = pm->mu;
    L1[1] = L2[1] = pm->stiffness;
    L1[2] = L2[2] = pm->tau_d;
  }

  // test hook (docs/verify.md, tests/cli/verify.sh): FL_TEST_MU_SCALE multiplies every rigid
  // contact's friction coefficient, a deliberate physics bug that `verify` must catch
  static double mu_scale = 0;
  if (mu_scale == 0) {
    const char *ms = getenv("FL_TEST_MU_SCALE");
    mu_scale = ms && atof(ms) > 0 ? atof(ms) : 1;
  }

  int matched = 0;
  for (fl_int c = 0; c < m->nct; c++) {
    const fl__contact *ct = &m->ct[c];
    const fl_body *ba = &w->body[ct->a], *bb = &w->body[ct->b];
    double fr[9], ra[3], rb[3];
    memcpy(fr, ct->n, 3 * sizeof(double));
    fl_v3_tangents(ct->n, fr + 3, fr + 6);
    for (int k = 0; k < 3; k++) {
      ra[k] = ct->p[k] - ba->pos[k];
      rb[k] = ct->p[k] - bb->pos[k];
    }
    // row d: velocity of b minus velocity of a at the point, along d
    for (int r = 0; r < 3; r++) {
      const double *d = fr + 3 * r;
      double ja[6], jb[6], ca[3], cb[3];
      fl_v3_cross(ra, d, ca);
      fl_v3_cross(rb, d, cb);
      for (int k = 0; k < 3; k++) {
        ja[k] = -d[k];
        ja[3 + k] = -ca[k];
        jb[k] = d[k];
        jb[3 + k] = cb[k];
      }
      p->b[3 * c + r] = put_row(w, J, 3 * c + r, &nnz, ct->a, ja, ct->b, jb);
    }
    const double *L = law + 3 * (ba->material * nm + bb->material);
    p->phi0[c] = ct->phi;
    p->mu[c] = mu_scale * L[0];
    p->stiffness[c] = ct->k > 0 ? ct->k : L[1];
    p->tau_d[c] = L[2];
    p->clique_a[c] = ba->dof >= 0 ? ba->dof / 6 : -1;
    p->clique_b[c] = bb->dof >= 0 ? bb->dof / 6 : -1;
    memcpy(p->point + 3 * c, ct->p, 3 * sizeof(double));
    memcpy(p->frame + 9 * c, fr, 9 * sizeof(double));
    p->feature[c] = ct->feature;
    // warm start from the impulse of the same features last step
    const fl__wskey *hit = key_find(m, ct->a, ct->b, ct->feature);
    if (hit && p->gamma_guess) {
      memcpy(p->gamma_guess + 3 * c, m->ws_gamma + 3 * hit->idx, 3 * sizeof(double));
      matched++;
    }
  }
  for (fl_int f = 0; f < m->nfct; f++) {
    fl_int c = m->nct + f;
    const fl__fcontact *ct = &m->fct[f];
    double fr[9];
    memcpy(fr, ct->n, 3 * sizeof(double));
    fl_v3_tangents(ct->n, fr + 3, fr + 6);
    for (int r = 0; r < 3; r++)
      p->b[3 * c + r] = put_frow(w, J, 3 * c + r, &nnz, ct, fr + 3 * r);
    const double *L = law + 3 * (side_material(w, &ct->a) * nm + side_material(w, &ct->b));
    p->phi0[c] = ct->phi;
    p->mu[c] = L[0];
    p->stiffness[c] = L[1];
    p->tau_d[c] = L[2];
    fl_int qa = side_clique(w, &ct->a), qb = side_clique(w, &ct->b);
    p->clique_a[c] = qa < qb ? qa : qb;
    p->clique_b[c] = qa < qb ? qb : qa;
    memcpy(p->point + 3 * c, ct->p, 3 * sizeof(double));
    memcpy(p->frame + 9 * c, fr, 9 * sizeof(double));
    p->feature[c] = ct->feature;
    const fl__wskey *hit = key_find(m, side_key(w, &ct->a), side_key(w, &ct->b), ct->feature);
    if (hit && p->gamma_guess) {
      memcpy(p->gamma_guess + 3 * c, m->ws_gamma + 3 * hit->idx, 3 * sizeof(double));
      matched++;
    }
  }
  if (law != law_small) fl_free(law);

  fl_int row = 3 * nc, h = 0;
  fl__jrow jr[8];
  for (fl_int j = 0; j < w->njoint; j++) {
    const fl_joint *jt = &w->joint[j];
    int nr = fl__joint_rows(w, jt, w->dt, jr);
    for (int r = 0; r < nr; r++, row++, h++) {
      p->b[row] = put_row(w, J, row, &nnz, jt->body_a, jr[r].ja, jt->body_b, jr[r].jb) + jr[r].b;
      p->g0[h] = jr[r].g0;
      p->compliance[h] = jr[r].c;
      p->lo[h] = jr[r].lo;
      p->hi[h] = jr[r].hi;
      if (p->gamma_guess && m->nws_h == nh) p->gamma_guess[row] = m->ws_gh[h];
    }
  }
  J->nnz = nnz;
  double t2 = fl_time_now(), c2 = w->cpu_times ? fl_cpu_now() : NAN;
  if (info) {
    info->collide_cpu_s = c1 - c0;
    info->assemble_cpu_s = c2 - c1;
    info->nbody_pairs = npairs;
    info->nc = nc;
    info->nh = nh;
    info->collide_s = t1 - t0;
    info->assemble_s = t2 - t1;
    info->warm_matched = matched;
  }
  return FL_OK;
}


fl_problem *fl_world_problem(fl_world *w) { return w->impl ? w->impl->prob : NULL; }


void fl_world_solution(const fl_world *w, const double **v, const double **gamma) {
  *v = w->impl ? w->impl->v : NULL;
  *gamma = w->impl ? w->impl->gamma : NULL;
}


int fl_world_contact_sides(const fl_world *w, fl_int c, fl_int body[2], fl_int fem[2]) {
  const fl_world_impl *m = w->impl;
  if (!m || !m->prob || c < 0 || c >= m->prob->nc)
    return fl_seterr(FL_ERR_INVAL, "contact %ld: no such contact in the last prepared problem",
                     (long)c);
  if (c < m->nct) {
    body[0] = m->ct[c].a;
    body[1] = m->ct[c].b;
    fem[0] = fem[1] = -1;
    return FL_OK;
  }
  const fl__fcontact *f = &m->fct[c - m->nct];
  body[0] = f->a.body;
  body[1] = f->b.body;
  fem[0] = f->a.fem;
  fem[1] = f->b.fem;
  return FL_OK;
}


//---- solve and integrate ----

/* First problem dof after the rigid bodies'. */
static fl_int fem_first_dof(const fl_world *w) {
  fl_int nv = 0;
  for (fl_int i = 0; i < w->nbody; i++) {
    if (w->body[i].dof >= 0) nv = w->body[i].dof + 6;
  }
  return nv;
}

int fl_world_finish(fl_world *w, fl_solver *s, fl_step_info *info) {
  fl_world_impl *m = w->impl;
  if (!m || !m->prob)
    return fl_seterr(FL_ERR_STATE, "stepper: fl_world_finish without fl_world_prepare");
  fl_problem *p = m->prob;
  fl_int nv = p->nv, nr = fl_problem_nrows(p);
  FL_TRY(grow((void **)&m->v, &m->cap_v, nv > 0 ? nv : 1, sizeof(double)));
  FL_TRY(grow((void **)&m->gamma, &m->cap_g, nr > 0 ? nr : 1, sizeof(double)));
  fl_result res;
  memset(&res, 0, sizeof res);
  res.reason = FL_CONVERGED_EXACT;
  fl_metrics met;
  met.natmap = met.natmap_raw = met.momentum = met.signorini = met.cone = met.dual = NAN;
  met.dissipation = met.penetration = met.bilateral = met.norm_q = met.norm_u = NAN;
  met.norm_gamma = NAN;
  double t0 = fl_time_now();
  if (nr == 0 || nv == 0) {
    if (nv > 0) memcpy(m->v, p->vstar, (size_t)nv * sizeof(double));
    if (nr > 0) memset(m->gamma, 0, (size_t)nr * sizeof(double));
  } else {
    if (!s) return fl_seterr(FL_ERR_INVAL, "stepper: no solver for a problem with %d rows", (int)nr);
    // the guess: matched impulses and the velocities they give
    if (p->gamma_guess) memcpy(m->gamma, p->gamma_guess, (size_t)nr * sizeof(double));
    else memset(m->gamma, 0, (size_t)nr * sizeof(double));
    memcpy(m->v, p->vstar, (size_t)nv * sizeof(double));
    fl_csr_gemtv(p->J, 1.0, m->gamma, 0.0, m->v);
    for (fl_int i = 0; i < w->nbody; i++) {
      const fl_body *b = &w->body[i];
      if (b->dof < 0) continue;
      double *vb = m->v + b->dof, Iw[9], Iinv[9], dw[3];
      fl__body_inertia_world(b, Iw);
      FL_TRY(fl_m3_inv(Iw, Iinv));
      fl_m3_mulv(Iinv, vb + 3, dw);
      for (int k = 0; k < 3; k++) {
        vb[k] = p->vstar[b->dof + k] + vb[k] / b->mass;
        vb[3 + k] = p->vstar[b->dof + 3 + k] + dw[k];
      }
    }
    if (w->nfem > 0) {
      FL_TRY(fl__fem_apply_Ainv(w, m->v));
      for (fl_int i = fem_first_dof(w); i < nv; i++) m->v[i] += p->vstar[i];
    }
    int rc = fl_solver_setup(s, p);
    if (rc < 0) return rc;
    rc = fl_solver_solve(s, p, m->v, m->gamma, &res);
    if (rc < 0) return rc;
    if (w->compute_metrics) {
      // the solver evaluated the same metrics on the same iterate when its norm is FCLIB's
      const fl_metrics *fm = fl_solver_final_metrics(s);
      char norm[16] = "";
      if (fm && fl_solver_get_option(s, "norm", norm, sizeof norm) >= 0 && !strcmp(norm, "fclib")) {
        met = *fm;
      } else {
        rc = fl_problem_metrics(p, m->v, m->gamma, FL_NORM_FCLIB, &met);
        if (rc < 0) return rc;
      }
    }
  }
  m->solved = 1;
  double t1 = fl_time_now();

  //---- remember impulses for the next step's warm start ----
  FL_TRY(grow((void **)&m->ws, &m->cap_ws, p->nc > 0 ? p->nc : 1, sizeof(fl__wskey)));
  {
    fl_int cap = m->cap_ws;
    double *g = fl_realloc(m->ws_gamma, (size_t)(3 * cap) * sizeof(double));
    if (!g) return fl_seterr(FL_ERR_NOMEM, "stepper: out of memory");
    m->ws_gamma = g;
  }
  for (fl_int c = 0; c < p->nc; c++) {
    if (c < m->nct) {
      m->ws[c] = (fl__wskey){m->ct[c].a, m->ct[c].b, m->ct[c].feature, c};
    } else {
      const fl__fcontact *f = &m->fct[c - m->nct];
      m->ws[c] = (fl__wskey){side_key(w, &f->a), side_key(w, &f->b), f->feature, c};
    }
    memcpy(m->ws_gamma + 3 * c, m->gamma + 3 * c, 3 * sizeof(double));
  }
  m->nws = p->nc;
  qsort(m->ws, (size_t)m->nws, sizeof(fl__wskey), key_cmp);
  if (p->nh > 0) {
    double *g = fl_realloc(m->ws_gh, (size_t)p->nh * sizeof(double));
    if (!g) return fl_seterr(FL_ERR_NOMEM, "stepper: out of memory");
    m->ws_gh = g;
    memcpy(m->ws_gh, m->gamma + 3 * p->nc, (size_t)p->nh * sizeof(double));
  }
  m->nws_h = p->nh;

  //---- integrate: x += dt v, q <- q + dt/2 (0, w) q, renormalized ----
  double dt = w->dt;
  for (fl_int i = 0; i < w->nbody; i++) {
    fl_body *b = &w->body[i];
    if (b->kind == FL_BODY_FIXED) continue;
    if (b->dof >= 0) {
      memcpy(b->vel, m->v + b->dof, 3 * sizeof(double));
      memcpy(b->omega, m->v + b->dof + 3, 3 * sizeof(double));
    }
    for (int k = 0; k < 3; k++) b->pos[k] += dt * b->vel[k];
    fl_quat_integrate(b->quat, b->omega, dt);
  }
  if (w->nfem > 0) FL_TRY(fl__fem_finish(w, m->v));
  w->t += dt;
  double t2 = fl_time_now();
  if (info) {
    info->step = w->step;
    info->t = w->t;
    info->solve_s = t1 - t0;
    info->integrate_s = t2 - t1;
    info->res = res;
    info->met = met;
  }
  w->step++;
  return FL_OK;
}


int fl_world_step(fl_world *w, fl_solver *s, fl_step_info *info) {
  FL_TRY(fl_world_prepare(w, info));
  return fl_world_finish(w, s, info);
}

// SPDX-License-Identifier: Apache-2.0
/* rigid.c: rigid bodies as a body kind (world_impl.h, fl__body_ops): their contacts (broad
 * phase over AABBs grown by the margin, then fl_collide per pair, or a hydroelastic patch),
 * their blocks of the problem and their integration.
 *
 *   dofs      (v, w) per dynamic body in the world frame, at the body's own dof (b->dof, set
 *             when it was added: the rigid kind comes first); one 6x6 clique per body
 *   A         blockdiag(m I3, R I R^T); v* = v0 + dt A^-1 (f_ext(t) - (0, w x I w))
 *   rows      velocity of the contact point x: (d, r x d) . (v, w), r = x - pos; prescribed
 *             bodies contribute their velocity to the constant term, fixed ones nothing
 *   finish    x += dt v, q <- normalize(q + dt/2 (0, w) q) (fl_quat_integrate)
 */
#include <math.h>
#include <string.h>

#include "collide_impl.h"
#include "world_impl.h"

//---- bodies ----

void fl__body_inertia_world(const fl_body *b, double Iw[9]) {
  double R[9], T[9], Rt[9];
  fl_quat_to_mat(b->quat, R);
  fl_m3_mul(R, b->inertia, T);
  fl_m3_transpose(R, Rt);
  fl_m3_mul(T, Rt, Iw);
  // symmetrize against rounding
  for (int r = 0; r < 3; r++) {
    for (int c = r + 1; c < 3; c++) {
      double s = 0.5 * (Iw[3 * r + c] + Iw[3 * c + r]);
      Iw[3 * r + c] = Iw[3 * c + r] = s;
    }
  }
}


void fl__point_velocity(const fl_world *w, fl_int k, const double p[3], double out[3]) {
  if (k < 0 || w->body[k].kind == FL_BODY_FIXED) {
    out[0] = out[1] = out[2] = 0;
    return;
  }
  const fl_body *b = &w->body[k];
  double r[3] = {p[0] - b->pos[0], p[1] - b->pos[1], p[2] - b->pos[2]}, wr[3];
  fl_v3_cross(b->omega, r, wr);
  for (int i = 0; i < 3; i++) out[i] = b->vel[i] + wr[i];
}


/* Velocity of a non-dynamic body seen through row coefficients j (6). */
double fl__body_rate(const fl_world *w, fl_int k, const double j[6]) {
  if (k < 0) return 0;
  const fl_body *b = &w->body[k];
  if (b->kind != FL_BODY_PRESCRIBED) return 0;
  return j[0] * b->vel[0] + j[1] * b->vel[1] + j[2] * b->vel[2] + j[3] * b->omega[0] +
         j[4] * b->omega[1] + j[5] * b->omega[2];
}


//---- collision ----

/* Manifold points in a canonical order: by position, to 1 nm. */
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


/* a shape the polyhedron routine collides (collide.c's rank 3) */
static int is_poly(const fl_shape *s) {
  return s->type != FL_SHAPE_PLANE && s->type != FL_SHAPE_SPHERE && s->type != FL_SHAPE_CAPSULE;
}


#define HULL_PAIRS_MAX (1 << 16) /* table slots at most (about 16 MB) */


static uint64_t pair_hash(fl_int i, fl_int j) {
  return ((uint64_t)(uint32_t)i * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)(uint32_t)j * 0xC2B2AE3D27D4EB4FULL);
}


/* The coherence entry of bodies i < j (collide_impl.h, fl__hull_pair) in the world's table,
 * made on first use (zeroed: no reference) and reset when the shapes are not those it was made
 * for; NULL when out of memory (the pair then runs its whole search). */
static fl__hull_pair *hull_pair(fl_world_impl *m, fl_int i, fl_int j, const fl_shape *a,
                                const fl_shape *b) {
  if (2 * (m->nhp + 1) > m->cap_hp && m->cap_hp >= HULL_PAIRS_MAX) {
    // every pair ever met is kept: past the cap, start again (only costs whole searches)
    memset(m->hp, 0, (size_t)m->cap_hp * sizeof *m->hp);
    m->nhp = 0;
  }
  if (2 * (m->nhp + 1) > m->cap_hp) {
    // grow to keep the table at most half full, rehashing the entries
    fl_int cap = m->cap_hp ? 2 * m->cap_hp : 64;
    fl__hull_pair *t = fl_calloc((size_t)cap, sizeof *t);
    if (!t) return NULL;
    for (fl_int k = 0; k < m->cap_hp; k++) {
      if (!m->hp[k].used) continue;
      uint64_t h = pair_hash(m->hp[k].i, m->hp[k].j) & (uint64_t)(cap - 1);
      while (t[h].used) h = (h + 1) & (uint64_t)(cap - 1);
      t[h] = m->hp[k];
    }
    fl_free(m->hp);
    m->hp = t, m->cap_hp = cap;
  }
  uint64_t h = pair_hash(i, j) & (uint64_t)(m->cap_hp - 1);
  while (m->hp[h].used && !(m->hp[h].i == i && m->hp[h].j == j))
    h = (h + 1) & (uint64_t)(m->cap_hp - 1);
  fl__hull_pair *e = m->hp + h;
  if (!e->used) m->nhp++;
  if (!e->used || e->a != a || e->b != b || e->va != a->vert || e->vb != b->vert ||
      e->nva != a->nvert || e->nvb != b->nvert) {
    memset(e, 0, sizeof *e);
    e->used = 1, e->i = i, e->j = j;
    e->a = a, e->b = b, e->va = a->vert, e->vb = b->vert, e->nva = a->nvert, e->nvb = b->nvert;
  }
  return e;
}


/* Appends the rigid pairs' contacts to *ctp; *np gets the broad-phase pair count. spec: as
 * fl__collide_all's. coherent: the step's collision, which keeps the polyhedron pairs'
 * coherence entries (w->collide_coherence). */
static int collide_pairs(fl_world *w, double margin, double spec, int coherent,
                         fl__contact **ctp, fl_int *nctp, fl_int *capp, fl_int *np_out) {
  fl_world_impl *m = w->impl;
  if (!m) return fl_seterr(FL_ERR_STATE, "collide: the world has no scratch (fl__world_impl)");
  fl_int n = w->nbody;
  if (n > m->cap_aabb) {
    fl_int cap = m->cap_aabb;
    FL_TRY(fl_grow((void **)&m->lo, &cap, n, 3 * sizeof(double), "stepper"));
    cap = m->cap_aabb;
    FL_TRY(fl_grow((void **)&m->hi, &cap, n, 3 * sizeof(double), "stepper"));
    cap = m->cap_aabb;
    FL_TRY(fl_grow((void **)&m->skip, &cap, n, 1, "stepper"));
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
  // each body's pose and spin reach once (fl_collide would make the pose once per pair)
  pose *P = np > 0 ? fl_malloc((sizeof(pose) + sizeof(double) + 1) * (size_t)n) : NULL;
  double *reach = P ? (double *)(P + n) : NULL;
  unsigned char *shape_ok = P ? (unsigned char *)(reach + n) : NULL; // checked once
  if (np > 0 && !P) {
    fl_free(pairs);
    return fl_seterr(FL_ERR_NOMEM, "collide: out of memory for %d poses", (int)n);
  }
  for (fl_int i = 0; P && i < n; i++) {
    // fl_collide's pose checks, once per body
    const fl_body *b = &w->body[i];
    double qn = 0;
    for (int k = 0; k < 4; k++) qn += b->quat[k] * b->quat[k];
    if (!isfinite(b->pos[0]) || !isfinite(b->pos[1]) || !isfinite(b->pos[2]) ||
        !(qn > 1e-200) || !isfinite(qn)) {
      fl_free(pairs);
      fl_free(P);
      return fl_seterr(FL_ERR_INVAL, "collide %s: position (%g, %g, %g) or quaternion not "
                       "finite, or a zero quaternion", b->name, b->pos[0], b->pos[1], b->pos[2]);
    }
    make_pose(b->pos, b->quat, P + i);
    reach[i] = spin_reach(b);
    shape_ok[i] = 0;
  }
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
      mg += sdt * (speed(dv) + reach[i] + reach[j]);
    }
    int nm = FL_OK;
    if (!shape_ok[i]) nm = fl__collide_check_shape(&a->shape, a->name), shape_ok[i] = 1;
    if (nm >= 0 && !shape_ok[j]) nm = fl__collide_check_shape(&b->shape, b->name), shape_ok[j] = 1;
    fl__hull_pair *hc = NULL;
    if (coherent && is_poly(&a->shape) && is_poly(&b->shape) &&
        !(a->shape.type == FL_SHAPE_BOX && b->shape.type == FL_SHAPE_BOX))
      hc = hull_pair(m, i, j, &a->shape, &b->shape);
    if (nm >= 0) nm = fl__collide_posed(&a->shape, P + i, &b->shape, P + j, mg, hc, mp);
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
      rc = fl_grow((void **)ctp, capp, *nctp + nm, sizeof(fl__contact), "stepper");
      if (rc < 0) break;
    }
    for (int c = 0; c < nm; c++) {
      fl__contact *ct = &(*ctp)[(*nctp)++];
      ct->a = fl__rigid_side(i);
      ct->b = fl__rigid_side(j);
      memcpy(ct->p, mp[c].p, sizeof ct->p);
      memcpy(ct->n, mp[c].n, sizeof ct->n);
      ct->phi = mp[c].phi;
      ct->feature = mp[c].feature;
      ct->k = 0;
    }
  }
  fl_free(pairs);
  fl_free(P);
  *np_out = np;
  return rc;
}


int fl__collide_all(fl_world *w, double margin, double spec, fl__contact **ctp, fl_int *nctp,
                    fl_int *capp, fl_int *npairs_out) {
  fl_int np = 0;
  *nctp = 0;
  int rc = collide_pairs(w, margin, spec, 0, ctp, nctp, capp, &np);
  if (npairs_out) *npairs_out = np;
  return rc;
}


static int rigid_collide(fl_world *w, double margin, fl__contact **ct, fl_int *nct, fl_int *cap,
                         fl_int *npairs) {
  fl_int np = 0;
  // the stepper's collision: speculative margins where the world asks for them
  int rc = collide_pairs(w, margin, w->speculative, w->collide_coherence, ct, nct, cap, &np);
  if (npairs) *npairs += np;
  return rc;
}


//---- the body kind ----

static fl_int rigid_count(const fl_world *w) { return w->nbody; }


static int rigid_prepare(fl_world *w, const fl__contact *ct, fl_int nct, fl_int *nv, fl_int *ncl) {
  for (fl_int i = 0; i < w->nbody; i++) {
    if (w->body[i].dof >= 0) {
      (*ncl)++;
      *nv = w->body[i].dof + 6;
    }
  }
  return FL_OK;
}


static fl_int rigid_nnz(const fl_world *w) {
  fl_int n = 0;
  for (fl_int i = 0; i < w->nbody; i++) n += w->body[i].dof >= 0;
  return 12 * n;
}


/* A, v0, v*: one 6x6 clique per dynamic body */
static int rigid_fill(const fl_world *w, fl_problem *p, fl_int *nnzp) {
  fl_csr *A = p->A;
  fl_int nnz = *nnzp, nv = 0;
  int rc;
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    if (b->dof < 0) continue;
    fl_int d = b->dof, cl = d / 6;
    nv = d + 6;
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
  if (p->adiag_hint) {
    // the diagonal of the blocks just written (unreduced, as A holds them)
    A->nnz = nnz;
    for (fl_int i = 0; i < nv; i++) p->adiag_hint[i] = fl_csr_get(A, i, i);
  }
  *nnzp = nnz;
  return FL_OK;
}


static fl_int rigid_side_width(const fl_world *w, const fl__side *s) {
  return w->body[s->id].dof >= 0 ? 6 : 0;
}


static int rigid_side_material(const fl_world *w, const fl__side *s) {
  return w->body[s->id].material;
}


static fl_int rigid_side_clique(const fl_world *w, const fl__side *s) {
  fl_int d = w->body[s->id].dof;
  return d >= 0 ? d / 6 : -1;
}


static fl_int rigid_side_key(const fl_world *w, const fl__side *s) { return s->id; }


static int rigid_side_row(const fl_world *w, const fl__side *s, const double x[3],
                          const double d[3], double sign, fl_int *cols, double *vals,
                          double *bconst) {
  const fl_body *b = &w->body[s->id];
  double r[3], cr[3], j[6];
  for (int k = 0; k < 3; k++) r[k] = x[k] - b->pos[k];
  fl_v3_cross(r, d, cr);
  for (int k = 0; k < 3; k++) {
    j[k] = sign * d[k];
    j[3 + k] = sign * cr[k];
  }
  if (b->dof < 0) {
    *bconst += fl__body_rate(w, s->id, j);
    return 0;
  }
  for (int k = 0; k < 6; k++) {
    cols[k] = b->dof + k;
    vals[k] = j[k];
  }
  return 6;
}


/* x <- v* + A^-1 x per body: x_v / m and (R I R^T)^-1 x_w */
static int rigid_apply_Ainv(const fl_world *w, const fl_problem *p, fl_int d0, fl_int d1,
                            double *x) {
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    if (b->dof < 0) continue;
    double *vb = x + b->dof, Iw[9], Iinv[9], dw[3];
    fl__body_inertia_world(b, Iw);
    FL_TRY(fl_m3_inv(Iw, Iinv));
    fl_m3_mulv(Iinv, vb + 3, dw);
    for (int k = 0; k < 3; k++) {
      vb[k] = p->vstar[b->dof + k] + vb[k] / b->mass;
      vb[3 + k] = p->vstar[b->dof + 3 + k] + dw[k];
    }
  }
  return FL_OK;
}


/* x += dt v, q <- q + dt/2 (0, w) q, renormalized; prescribed bodies move at their velocity */
static int rigid_finish(fl_world *w, const double *v) {
  double dt = w->dt;
  for (fl_int i = 0; i < w->nbody; i++) {
    fl_body *b = &w->body[i];
    if (b->kind == FL_BODY_FIXED) continue;
    if (b->dof >= 0) {
      memcpy(b->vel, v + b->dof, 3 * sizeof(double));
      memcpy(b->omega, v + b->dof + 3, 3 * sizeof(double));
    }
    for (int k = 0; k < 3; k++) b->pos[k] += dt * b->vel[k];
    fl_quat_integrate(b->quat, b->omega, dt);
  }
  return FL_OK;
}


static fl_int rigid_nv(const fl_world *w) {
  fl_int nv = 0;
  for (fl_int i = 0; i < w->nbody; i++) nv += w->body[i].kind == FL_BODY_DYNAMIC ? 6 : 0;
  return nv;
}


static void rigid_reset_start(fl_world *w) {
  for (fl_int i = 0; i < w->nbody; i++) {
    memcpy(w->body[i].pos0, w->body[i].pos, sizeof w->body[i].pos);
    memcpy(w->body[i].quat0, w->body[i].quat, sizeof w->body[i].quat);
  }
}


static void rigid_energy(const fl_world *w, double *ke, double *pe, double P[3], double L[3]) {
  for (fl_int i = 0; i < w->nbody; i++) {
    const fl_body *b = &w->body[i];
    if (b->kind != FL_BODY_DYNAMIC) continue;
    double Iw[9], Iwo[3], xp[3];
    fl__body_inertia_world(b, Iw);
    fl_m3_mulv(Iw, b->omega, Iwo);
    *ke += 0.5 * b->mass * fl_v3_dot(b->vel, b->vel) + 0.5 * fl_v3_dot(b->omega, Iwo);
    *pe -= b->mass * fl_v3_dot(w->gravity, b->pos);
    double mv[3] = {b->mass * b->vel[0], b->mass * b->vel[1], b->mass * b->vel[2]};
    fl_v3_cross(b->pos, mv, xp);
    for (int k = 0; k < 3; k++) {
      P[k] += mv[k];
      L[k] += xp[k] + Iwo[k];
    }
  }
}


static void rigid_release(fl_world *w) {
  for (fl_int i = 0; i < w->nbody; i++) fl_shape_free(&w->body[i].shape);
  fl_free(w->body);
  w->body = NULL;
}


const fl__body_ops fl__rigid_ops = {
  .name = "rigid",
  .reduced = 0,
  .count = rigid_count,
  .collide = rigid_collide,
  .prepare = rigid_prepare,
  .nnz = rigid_nnz,
  .fill = rigid_fill,
  .side_width = rigid_side_width,
  .side_material = rigid_side_material,
  .side_clique = rigid_side_clique,
  .side_key = rigid_side_key,
  .side_row = rigid_side_row,
  .apply_Ainv = rigid_apply_Ainv,
  .finish = rigid_finish,
  .nv = rigid_nv,
  .reset_start = rigid_reset_start,
  .energy = rigid_energy,
  .release = rigid_release,
};

// SPDX-License-Identifier: Apache-2.0
/* stepper.c: collide, assemble fl_problem, solve, integrate.
 *
 * Per step, over the body kinds in order (fl__body_kinds: rigid.c, then fem.c; world_impl.h
 * says what each hook does):
 *   collide   each kind's contacts, appended to one list (rigid pairs first; with
 *             fl_world.speculative a rigid pair's margin also covers the gap it can close in a step)
 *   assemble  each kind's dofs, cliques, blocks of A, v0 and v*; contact rows (n, t1, t2) of the
 *             velocity of side b relative to side a at the contact point, u_n > 0 separating,
 *             from the two sides' kinds; joint rows; the velocity of prescribed or held parts
 *             goes into b; previous impulses matched by (side keys, feature id) into gamma_guess
 *   solve     the named solver through solvers/fl_solver.h, guess v = v* + A^-1 J^T gamma_guess
 *   integrate each kind's new velocities and positions
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "world_impl.h"

const fl__body_ops *const fl__body_kinds[FL__NKIND] = {&fl__rigid_ops, &fl__fem_ops};

//---- warm start keys ----

static int key_cmp(const void *pa, const void *pb) {
  const fl__wskey *a = pa, *b = pb;
  if (a->a != b->a) return a->a < b->a ? -1 : 1;
  if (a->b != b->b) return a->b < b->b ? -1 : 1;
  if (a->feature != b->feature) return a->feature < b->feature ? -1 : 1;
  return 0;
}


static int key_less(const fl__wskey *a, const fl__wskey *b) {
  if (a->a != b->a) return a->a < b->a;
  if (a->b != b->b) return a->b < b->b;
  return a->feature < b->feature;
}


/* sorts k[0..n) by key_cmp, stably (as glibc's qsort, a merge sort, orders equal keys), with
 * the comparison inlined: bottom-up merges through tmp (n entries); FL_OK or FL_ERR_NOMEM */
static int key_sort(fl__wskey *k, fl_int n) {
  if (n < 2) return FL_OK;
  fl__wskey *tmp = fl_malloc((size_t)n * sizeof *tmp);
  if (!tmp) return fl_seterr(FL_ERR_NOMEM, "stepper: out of memory");
  fl__wskey *src = k, *dst = tmp;
  for (fl_int w = 1; w < n; w *= 2) {
    for (fl_int lo = 0; lo < n; lo += 2 * w) {
      fl_int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      fl_int i = lo, j = mid, o = lo;
      while (i < mid && j < hi) dst[o++] = key_less(&src[j], &src[i]) ? src[j++] : src[i++];
      while (i < mid) dst[o++] = src[i++];
      while (j < hi) dst[o++] = src[j++];
    }
    fl__wskey *t = src;
    src = dst;
    dst = t;
  }
  if (src != k) memcpy(k, src, (size_t)n * sizeof *k);
  fl_free(tmp);
  return FL_OK;
}


static const fl__wskey *key_find(const fl_world_impl *m, fl_int a, fl_int b, int64_t f) {
  fl__wskey k = {a, b, f, 0};
  return m->nws ? bsearch(&k, m->ws, (size_t)m->nws, sizeof k, key_cmp) : NULL;
}


//---- assembly ----

/* Appends one joint row of J with coefficients ja on rigid body a and jb on rigid body b
 * (dynamic ones only, lower dof first) and returns the constant term of the non-dynamic bodies. */
static double put_row(const fl_world *w, fl_csr *J, fl_int row, fl_int *nnz, fl_int a,
                      const double ja[6], fl_int b, const double jb[6]) {
  fl_int da = (a >= 0) ? w->body[a].dof : -1, db = (b >= 0) ? w->body[b].dof : -1;
  double bconst = 0;
  if (da < 0) bconst += fl__body_rate(w, a, ja);
  if (db < 0) bconst += fl__body_rate(w, b, jb);
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


//---- contact rows ----

/* Row of J for the velocity of side b minus side a along d at the contact point (columns
 * sorted, duplicates merged); returns the constant term of prescribed or held motion. */
static double put_crow(const fl_world *w, fl_csr *J, fl_int row, fl_int *nnz,
                       const fl__contact *ct, const double d[3]) {
  fl_int cols[24];
  double vals[24], bconst = 0;
  int n = fl__body_kinds[ct->a.kind]->side_row(w, &ct->a, ct->p, d, -1.0, cols, vals, &bconst);
  n += fl__body_kinds[ct->b.kind]->side_row(w, &ct->b, ct->p, d, 1.0, cols + n, vals + n, &bconst);
  // the usual case, columns already strictly increasing (side a's dofs below side b's): the
  // sort and the merge below would leave them as they are
  int inc = 1, q = 1;
  for (; q + 3 < n; q += 4) // branch-free, four at a time: n is small
    inc &= (cols[q - 1] < cols[q]) & (cols[q] < cols[q + 1]) & (cols[q + 1] < cols[q + 2]) &
           (cols[q + 2] < cols[q + 3]);
  for (; q < n; q++) inc &= cols[q - 1] < cols[q];
  if (inc) {
    fl_int at = *nnz;
    memcpy(J->col + at, cols, (size_t)n * sizeof *cols);
    memcpy(J->val + at, vals, (size_t)n * sizeof *vals);
    *nnz = at + n;
    J->rowptr[row + 1] = *nnz;
    return bconst;
  }
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


/* Bytes of J's nonzeros in contact and joint rows (stored in 64 bits: fl_int would overflow). */
static double j_nnz(const fl_world *w) {
  const fl_world_impl *m = w->impl;
  double jnnz = 0;
  for (fl_int c = 0; c < m->nct; c++) {
    const fl__side *a = &m->ct[c].a, *b = &m->ct[c].b;
    jnnz += 3.0 * ((double)fl__body_kinds[a->kind]->side_width(w, a) +
                   (double)fl__body_kinds[b->kind]->side_width(w, b));
  }
  for (fl_int j = 0; j < w->njoint; j++)
    jnnz += 6.0 * fl_joint_nrows(&w->joint[j]) * ndyn(w, w->joint[j].body_a, w->joint[j].body_b);
  return jnnz;
}


/* The contact problem's size, estimated before anything of it is allocated (issue 51, item 5):
 * the problem's per-dof, per-contact and per-row arrays and J (CSR: a value and a column a
 * nonzero, a row pointer a row; a contact's 3 rows hold the columns of both its sides), against
 * fl_mem_limit() with the estimate in the message. The Delassus matrix W = J A^-1 J^T and J A^-1,
 * which only some solvers form, are checked where they are built (problems/dynamics.c). */
static int problem_size_check(const fl_world *w, fl_int nv) {
  const fl_world_impl *m = w->impl;
  double nc = (double)m->nct, nh = 0;
  for (fl_int j = 0; j < w->njoint; j++) nh += fl_joint_nrows(&w->joint[j]);
  double rows = 3 * nc + nh;
  if (rows == 0) return FL_OK;
  double jn = j_nnz(w);
  if (rows > INT32_MAX || jn > INT32_MAX)
    return fl_seterr(FL_ERR_NOMEM, "%s step %ld: the contact problem has %.0f rows and %.3g "
                     "nonzeros in J, above the index type's limit of 2^31 - 1", w->name,
                     (long)w->step, rows, jn);
  double per = (double)(sizeof(double) + sizeof(fl_int));
  double bytes = 8.0 * (3.0 * nv + 25 * nc + 6 * nh) + 4.0 * (3.0 * nv + 2 * nc) + /* arrays */
                 jn * per + 4.0 * (rows + 1);                                      /* J */
  if (bytes <= fl_mem_limit()) return FL_OK;
  char where[96], what[160];
  int n1 = snprintf(where, sizeof where, "%s step %ld", w->name, (long)w->step);
  int n2 = snprintf(what, sizeof what,
                    "the contact problem (%.0f contacts, %.0f rows, J with %.3g nonzeros)", nc,
                    rows, jn);
  if (n1 < 0 || n1 >= (int)sizeof where || n2 < 0 || n2 >= (int)sizeof what)
    return fl_seterr(FL_ERR_NOMEM, "the contact problem needs about %.3g GB, above the limit of "
                     "%.3g GB (raise it with --mem-limit GB or FL_MEM_LIMIT_MB)", bytes / 1e9,
                     fl_mem_limit() / 1e9);
  return fl_mem_check(where, what, bytes);
}


int fl_world_prepare(fl_world *w, fl_step_info *info) {
  FL_TRY(fl__world_impl(w));
  fl_world_impl *m = w->impl;
  double t0 = fl_time_now(), c0 = w->cpu_times ? fl_cpu_now() : NAN;
  fl_int npairs = 0;
  m->nct = 0;
  for (int k = 0; k < FL__NKIND; k++) {
    const fl__body_ops *K = fl__body_kinds[k];
    if (K->count(w) > 0) FL_TRY(K->collide(w, w->margin, &m->ct, &m->nct, &m->cap_ct, &npairs));
  }
  double t1 = fl_time_now(), c1 = w->cpu_times ? fl_cpu_now() : NAN;

  //---- sizes ----
  fl_int nv = 0, ncl = 0, nnzA = 0;
  int reduced = 0;
  for (int k = 0; k < FL__NKIND; k++) {
    const fl__body_ops *K = fl__body_kinds[k];
    m->kind_dof[k] = nv;
    if (K->count(w) == 0) continue;
    FL_TRY(K->prepare(w, m->ct, m->nct, &nv, &ncl));
    nnzA += K->nnz(w);
    reduced |= K->reduced;
  }
  m->kind_dof[FL__NKIND] = nv;
  fl_int nc = m->nct, nh = 0;
  for (fl_int j = 0; j < w->njoint; j++) nh += fl_joint_nrows(&w->joint[j]);
  FL_TRY(problem_size_check(w, nv));
  fl_problem_free(m->prob);
  m->prob = NULL;
  m->solved = 0;
  fl_problem *p = NULL;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_GLOBAL, nv, nc, nh, ncl, &p));
  m->prob = p;
  p->dt = w->dt;
  p->max_recovery = w->max_recovery;
  if (3 * nc + nh > 0) {
    // owned and freed by the problem (fl_problem.h)
    p->gamma_guess = fl_calloc((size_t)(3 * nc + nh), sizeof(double));
    if (!p->gamma_guess) return fl_seterr(FL_ERR_NOMEM, "stepper: out of memory");
  }
  snprintf(p->name, sizeof p->name, "%s step %d", w->name, (int)w->step);
  if (ncl > 0 && (!p->clique_ptr || !p->clique_dof || !p->dof_clique))
    return fl_seterr(FL_ERR_STATE, "stepper: fl_problem_alloc gave no clique arrays");

  //---- A, v0, v*: each kind's cliques ----
  int rc = fl_csr_alloc(nv, nv, nnzA, &p->A);
  if (rc < 0) return rc;
  fl_csr *A = p->A;
  fl_int nnz = 0;
  if (reduced) {
    // the unreduced diagonal (fl_problem.h) so that SAP regularizes full and Schur alike
    p->adiag_hint = fl_malloc((size_t)(nv > 0 ? nv : 1) * sizeof(double));
    if (!p->adiag_hint) return fl_seterr(FL_ERR_NOMEM, "stepper: out of memory");
  }
  for (int k = 0; k < FL__NKIND; k++) {
    const fl__body_ops *K = fl__body_kinds[k];
    if (K->count(w) > 0) FL_TRY(K->fill(w, p, &nnz));
  }
  A->nnz = nnz;
  if (ncl > 0) p->clique_ptr[ncl] = nv;

  //---- J: 3 rows per contact, then the joints' rows ----
  fl_int jnnz = 0;
  for (fl_int c = 0; c < m->nct; c++) {
    const fl__side *a = &m->ct[c].a, *b = &m->ct[c].b;
    jnnz += 3 * (fl__body_kinds[a->kind]->side_width(w, a) +
                 fl__body_kinds[b->kind]->side_width(w, b));
  }
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
    const fl__body_ops *Ka = fl__body_kinds[ct->a.kind], *Kb = fl__body_kinds[ct->b.kind];
    double fr[9];
    memcpy(fr, ct->n, 3 * sizeof(double));
    fl_v3_tangents(ct->n, fr + 3, fr + 6);
    // row d: velocity of side b minus velocity of side a at the point, along d
    for (int r = 0; r < 3; r++) p->b[3 * c + r] = put_crow(w, J, 3 * c + r, &nnz, ct, fr + 3 * r);
    const double *L = law + 3 * (Ka->side_material(w, &ct->a) * nm + Kb->side_material(w, &ct->b));
    int rigid_pair = ct->a.kind == FL__KIND_RIGID && ct->b.kind == FL__KIND_RIGID;
    p->phi0[c] = ct->phi;
    p->mu[c] = rigid_pair ? mu_scale * L[0] : L[0];
    p->stiffness[c] = ct->k > 0 ? ct->k : L[1];
    p->tau_d[c] = L[2];
    fl_int qa = Ka->side_clique(w, &ct->a), qb = Kb->side_clique(w, &ct->b);
    p->clique_a[c] = qa < qb ? qa : qb;
    p->clique_b[c] = qa < qb ? qb : qa;
    memcpy(p->point + 3 * c, ct->p, 3 * sizeof(double));
    memcpy(p->frame + 9 * c, fr, 9 * sizeof(double));
    p->feature[c] = ct->feature;
    // warm start from the impulse of the same features last step
    const fl__wskey *hit =
        key_find(m, Ka->side_key(w, &ct->a), Kb->side_key(w, &ct->b), ct->feature);
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
  const fl__side *sd[2] = {&m->ct[c].a, &m->ct[c].b};
  for (int k = 0; k < 2; k++) {
    body[k] = sd[k]->kind == FL__KIND_RIGID ? sd[k]->id : -1;
    fem[k] = sd[k]->kind == FL__KIND_FEM ? sd[k]->id : -1;
  }
  return FL_OK;
}


//---- solve and integrate ----

int fl_world_finish(fl_world *w, fl_solver *s, fl_step_info *info) {
  fl_world_impl *m = w->impl;
  if (!m || !m->prob)
    return fl_seterr(FL_ERR_STATE, "stepper: fl_world_finish without fl_world_prepare");
  fl_problem *p = m->prob;
  fl_int nv = p->nv, nr = fl_problem_nrows(p);
  FL_TRY(fl_grow((void **)&m->v, &m->cap_v, nv > 0 ? nv : 1, sizeof(double), "stepper"));
  FL_TRY(fl_grow((void **)&m->gamma, &m->cap_g, nr > 0 ? nr : 1, sizeof(double), "stepper"));
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
    // (a solver that makes v from gamma itself never reads this part of the guess)
    if (!(fl_solver_caps(s) & FL_CAP_V_FROM_GAMMA)) {
      fl_csr_gemtv(p->J, 1.0, m->gamma, 0.0, m->v);
      for (int k = 0; k < FL__NKIND; k++) {
        const fl__body_ops *K = fl__body_kinds[k];
        if (K->count(w) > 0)
          FL_TRY(K->apply_Ainv(w, p, m->kind_dof[k], m->kind_dof[k + 1], m->v));
      }
    }
    int rc = fl_solver_setup(s, p);
    if (rc < 0) return rc;
    // nobody reads the solver's final metrics when the step's are off
    fl_solver_skip_final_metrics(s, !w->compute_metrics);
    rc = fl_solver_solve(s, p, m->v, m->gamma, &res);
    fl_solver_skip_final_metrics(s, 0);
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
  FL_TRY(fl_grow((void **)&m->ws, &m->cap_ws, p->nc > 0 ? p->nc : 1, sizeof(fl__wskey), "stepper"));
  {
    fl_int cap = m->cap_ws;
    double *g = fl_realloc(m->ws_gamma, (size_t)(3 * cap) * sizeof(double));
    if (!g) return fl_seterr(FL_ERR_NOMEM, "stepper: out of memory");
    m->ws_gamma = g;
  }
  for (fl_int c = 0; c < p->nc; c++) {
    const fl__contact *ct = &m->ct[c];
    m->ws[c] = (fl__wskey){fl__body_kinds[ct->a.kind]->side_key(w, &ct->a),
                           fl__body_kinds[ct->b.kind]->side_key(w, &ct->b), ct->feature, c};
    memcpy(m->ws_gamma + 3 * c, m->gamma + 3 * c, 3 * sizeof(double));
  }
  m->nws = p->nc;
  FL_TRY(key_sort(m->ws, m->nws));
  if (p->nh > 0) {
    double *g = fl_realloc(m->ws_gh, (size_t)p->nh * sizeof(double));
    if (!g) return fl_seterr(FL_ERR_NOMEM, "stepper: out of memory");
    m->ws_gh = g;
    memcpy(m->ws_gh, m->gamma + 3 * p->nc, (size_t)p->nh * sizeof(double));
  }
  m->nws_h = p->nh;

  //---- integrate: each kind's velocities and positions ----
  double dt = w->dt;
  for (int k = 0; k < FL__NKIND; k++) {
    const fl__body_ops *K = fl__body_kinds[k];
    if (K->count(w) > 0) FL_TRY(K->finish(w, m->v));
  }
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

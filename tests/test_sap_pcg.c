// SPDX-License-Identifier: Apache-2.0
/* test_sap_pcg.c: SAP's PCG inner solve (solvers/sap_pcg.c, `sap.linear=pcg`, and `auto` from
 * `pcg_min` dofs on) against CHOLMOD's direct solve on the touching granular lattice: the same
 * minimizer to the stopping rule's precision, the auto choice by size (bit-identical to the
 * option it picks), no allocation in the Newton loop, and steps that converge.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cholmod.h>

#include "../problems/fl_problem.h"
#include "../sim/fl_world.h"
#include "../solvers/fl_solver.h"
#include "fl_test.h"

/* the touching lattice (docs/bench-world.md): n grains, spread 0, spacing 1 */
static int lattice(const char *n, fl_world **w) {
  const char *set[3] = {n, "spread=0", "spacing=1"};
  fl_register_all();
  ASSERT_OK(fl_scene_create("granular", 3, set, w));
  (*w)->compute_metrics = 0;
  return 0;
}


/* solves p from v* with sap and options (key, value pairs, NULL-ended) into v (nv) */
static int solve_opts(fl_problem *p, const char *const *opts, double *v, fl_result *res) {
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("sap", &s));
  for (int k = 0; opts[k]; k += 2) ASSERT_OK(fl_solver_set_option(s, opts[k], opts[k + 1]));
  double *g = calloc((size_t)fl_problem_nrows(p) + 1, sizeof(double));
  ASSERT(g);
  memcpy(v, p->vstar, (size_t)p->nv * sizeof(double));
  ASSERT_OK(fl_solver_setup(s, p));
  ASSERT_OK(fl_solver_solve(s, p, v, g, res));
  free(g);
  fl_solver_destroy(s);
  return 0;
}


/* largest |a - b| over the largest |a| (at least 1e-3 m/s) */
static double vdiff(const double *a, const double *b, int n) {
  double vm = 1e-3, d = 0.0;
  for (int i = 0; i < n; i++) vm = fmax(vm, fabs(a[i]));
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]) / vm);
  return d;
}


/* granular lattice of 125 grains (nv 756, 425 contacts), steps 0-5 taken with SAP's defaults,
 * every step's problem solved again from v* with linear=cholmod and linear=pcg. One strictly
 * convex problem, one minimizer: the PCG answer converges to CHOLMOD's with the tolerance. At
 * rel_tol 1e-6 both stop inside the momentum-balance test, where the velocity still moves by
 * up to the Hessian's conditioning times 1e-6: they agree to 1e-4 of the largest velocity
 * (measured 2.4e-5); at rel_tol 1e-11 to 1e-10 (measured 4.4e-12) */
FL_TEST(pcg_same_minimizer_as_cholmod_on_the_lattice) {
  if (!fl_scene_find("granular")) SKIP("scene granular not available");
  fl_world *w = NULL;
  ASSERT_OK(lattice("n=125", &w));
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("sap", &s));
  double dmax[2] = {0, 0};
  for (int k = 0; k < 6; k++) {
    fl_step_info info;
    ASSERT_OK(fl_world_step(w, s, &info));
    ASSERT(info.res.reason > 0);
    fl_problem *p = fl_world_problem(w);
    int nv = p->nv;
    ASSERT_EQ(nv, 756);
    double *vc = malloc((size_t)nv * sizeof(double)), *vp = malloc((size_t)nv * sizeof(double));
    ASSERT(vc && vp);
    for (int t = 0; t < 2; t++) {
      const char *tol = t ? "1e-11" : "1e-6";
      const char *const oc[5] = {"linear", "cholmod", "rel_tol", tol, NULL};
      const char *const op[5] = {"linear", "pcg", "rel_tol", tol, NULL};
      fl_result rc, rp;
      ASSERT_OK(solve_opts(p, oc, vc, &rc));
      ASSERT_OK(solve_opts(p, op, vp, &rp));
      ASSERT(rc.reason > 0);
      ASSERT(rp.reason > 0);
      double d = vdiff(vc, vp, nv);
      fprintf(stderr, "step %d rel_tol %s: cholmod %d, pcg %d Newton iterations, |dv| %.2e\n", k,
              tol, rc.iters, rp.iters, d);
      dmax[t] = fmax(dmax[t], d);
    }
    free(vc), free(vp);
  }
  ASSERT(dmax[0] <= 1e-4);
  // at 1e-11 the same minimizer to the loaded steps' conditioning: 4.4e-12 measured before
  // sap.md 2.4's round-off changes, 1.3e-10 after (steps 4-5, the cylinder pressing)
  ASSERT(dmax[1] <= 1e-9);
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}


/* linear=auto picks CHOLMOD below pcg_min dofs and PCG from it on: its answers equal those of
 * the option it picks to the bit (27 grains: nv 168) */
FL_TEST(auto_picks_pcg_from_pcg_min) {
  if (!fl_scene_find("granular")) SKIP("scene granular not available");
  fl_world *w = NULL;
  ASSERT_OK(lattice("n=27", &w));
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("sap", &s));
  for (int k = 0; k < 3; k++) {
    fl_step_info info;
    ASSERT_OK(fl_world_step(w, s, &info));
    ASSERT(info.res.reason > 0);
  }
  fl_problem *p = fl_world_problem(w);
  int nv = p->nv;
  ASSERT_EQ(nv, 168);
  const char *const cfg[4][5] = {{"pcg_min", "169", NULL},
                                 {"linear", "cholmod", NULL},
                                 {"pcg_min", "168", NULL},
                                 {"linear", "pcg", NULL}};
  double *v[4];
  int iters[4];
  for (int c = 0; c < 4; c++) {
    v[c] = malloc((size_t)nv * sizeof(double));
    ASSERT(v[c]);
    fl_result res;
    ASSERT_OK(solve_opts(p, cfg[c], v[c], &res));
    ASSERT(res.reason > 0);
    iters[c] = res.iters;
  }
  ASSERT(!memcmp(v[0], v[1], (size_t)nv * sizeof(double)));
  ASSERT(!memcmp(v[2], v[3], (size_t)nv * sizeof(double)));
  ASSERT_EQ(iters[0], iters[1]);
  ASSERT_EQ(iters[2], iters[3]);
  // the two inner solves are different arithmetic: not the same bits
  ASSERT(memcmp(v[0], v[2], (size_t)nv * sizeof(double)) != 0);
  fprintf(stderr, "cholmod %d, pcg %d Newton iterations, |dv| %.2e\n", iters[0], iters[2],
          vdiff(v[0], v[2], nv));
  ASSERT(vdiff(v[0], v[2], nv) <= 1e-4);
  for (int c = 0; c < 4; c++) free(v[c]);
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}


/* every fl_malloc between the first and the last record fails: PCG's vectors and incomplete
 * factor are made in setup */
static int forbid_alloc(const fl_solver *s, const fl_iter_stat *st, void *ctx) {
  (void)s;
  fl_alloc_fail_after(st->iter == *(int *)ctx ? -1 : 0);
  return 0;
}


FL_TEST(pcg_no_allocation_in_the_newton_loop) {
  if (!fl_scene_find("granular")) SKIP("scene granular not available");
  fl_world *w = NULL;
  ASSERT_OK(lattice("n=27", &w));
  fl_solver *s0 = NULL;
  ASSERT_OK(fl_solver_create("sap", &s0));
  for (int k = 0; k < 3; k++) {
    fl_step_info info;
    ASSERT_OK(fl_world_step(w, s0, &info));
  }
  fl_problem *p = fl_world_problem(w);
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("sap", &s));
  static int last = 4;
  ASSERT_OK(fl_solver_set_option(s, "linear", "pcg"));
  ASSERT_OK(fl_solver_set_option(s, "error_every", "0"));
  ASSERT_OK(fl_solver_set_option(s, "never_stop", "1"));
  ASSERT_OK(fl_solver_set_option(s, "max_iter", "4"));
  ASSERT_OK(fl_solver_monitor_add(s, forbid_alloc, &last, NULL));
  ASSERT_OK(fl_solver_setup(s, p));
  double *v = malloc((size_t)p->nv * sizeof(double));
  double *g = malloc(((size_t)fl_problem_nrows(p) + 1) * sizeof(double));
  memcpy(v, p->vstar, (size_t)p->nv * sizeof(double));
  fl_result res;
  int rc = fl_solver_solve(s, p, v, g, &res);
  fl_alloc_fail_after(-1);
  ASSERT_OK(rc);
  ASSERT_EQ(res.reason, FL_STOPPED_ITS);
  ASSERT_EQ(res.iters, 4);
  free(v), free(g);
  fl_solver_destroy(s);
  fl_solver_destroy(s0);
  fl_world_free(w);
  return 0;
}


/* 12 steps of the 125-grain lattice under linear=pcg (the heavy cylinder lands and the pile
 * flows): every step converges by SAP's own rules, with no fallback to the soft friction */
FL_TEST(pcg_steps_converge_on_the_lattice) {
  if (!fl_scene_find("granular")) SKIP("scene granular not available");
  fl_world *w = NULL;
  ASSERT_OK(lattice("n=125", &w));
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("sap", &s));
  ASSERT_OK(fl_solver_set_option(s, "linear", "pcg"));
  long it = 0;
  for (int k = 0; k < 12; k++) {
    fl_step_info info;
    ASSERT_OK(fl_world_step(w, s, &info));
    ASSERT(info.res.reason > 0);
    ASSERT_EQ(info.res.fallback, 0);
    it += info.res.iters;
  }
  fprintf(stderr, "12 steps: %ld Newton iterations\n", it);
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}


//---- islands (issue 52 item 2) ----

static fl_int uf_find(fl_int *par, fl_int i) {
  while (par[i] != i) i = par[i] = par[par[i]];
  return i;
}


/* the pattern of H = A + J^T J (values 1 + ..., SPD) as an unsymmetric CHOLMOD matrix (both
 * triangles: cholmod_submatrix takes no symmetric one) */
static cholmod_sparse *h_pattern(const fl_problem *p, cholmod_common *cm) {
  const fl_csr *A = p->A, *J = p->J;
  // J^T as a CSC (nv x nr): the CSR of J read by columns
  cholmod_sparse *Jt = cholmod_allocate_sparse((size_t)p->nv, (size_t)J->nrow, (size_t)J->nnz, 1,
                                               1, 0, CHOLMOD_REAL, cm);
  cholmod_sparse *As = cholmod_allocate_sparse((size_t)p->nv, (size_t)p->nv, (size_t)A->nnz, 1, 1,
                                               0, CHOLMOD_REAL, cm);
  if (!Jt || !As) return NULL;
  for (fl_int r = 0; r <= J->nrow; r++) ((int *)Jt->p)[r] = (int)J->rowptr[r];
  for (fl_int q = 0; q < J->nnz; q++) ((int *)Jt->i)[q] = (int)J->col[q], ((double *)Jt->x)[q] = 1.0;
  for (fl_int r = 0; r <= A->nrow; r++) ((int *)As->p)[r] = (int)A->rowptr[r];
  for (fl_int q = 0; q < A->nnz; q++) ((int *)As->i)[q] = (int)A->col[q], ((double *)As->x)[q] = 1.0;
  cholmod_sparse *JtJ = cholmod_aat(Jt, NULL, 0, 1, cm);
  double one[2] = {1, 0};
  cholmod_sparse *H = JtJ ? cholmod_add(As, JtJ, one, one, 1, 1, cm) : NULL;
  cholmod_free_sparse(&Jt, cm);
  cholmod_free_sparse(&As, cm);
  cholmod_free_sparse(&JtJ, cm);
  return H;
}


/* CHOLMOD's simplicial AMD analysis of H's lower triangle: flops and nnz(L) */
static int analyze(cholmod_sparse *H, cholmod_common *cm, double *fl, double *lnz) {
  cholmod_sparse *Hl = cholmod_copy(H, -1, 1, cm);
  ASSERT(Hl);
  cholmod_factor *L = cholmod_analyze(Hl, cm);
  cholmod_free_sparse(&Hl, cm);
  ASSERT(L);
  *fl = cm->fl;
  *lnz = cm->lnz;
  cholmod_free_factor(&L, cm);
  return 0;
}


/* SAP's Newton matrix on table_pile and box_pile, where tables and boxes separate: its connected
 * components (dofs linked through A or a contact) and CHOLMOD's factorization cost, whole
 * (AMD orders it) against the sum over the components analyzed apart. AMD's fill never crosses
 * a component, so the sum equals the whole (within 1 %: AMD's tie-breaks may differ); solving
 * the islands as separate systems saves no factorization flops (docs/sap.md section 2.5) */
FL_TEST(islands_factor_cost_is_additive) {
  const char *scenes[2] = {"table_pile", "box_pile"};
  fl_register_all();
  for (int sc = 0; sc < 2; sc++) {
    if (!fl_scene_find(scenes[sc])) SKIP("scene %s not available", scenes[sc]);
    fl_world *w = NULL;
    ASSERT_OK(fl_scene_create(scenes[sc], 0, NULL, &w));
    w->compute_metrics = 0;
    fl_solver *s = NULL;
    ASSERT_OK(fl_solver_create("sap", &s));
    cholmod_common cm;
    cholmod_start(&cm);
    cm.print = 0;
    cm.supernodal = CHOLMOD_SIMPLICIAL;
    cm.nmethods = 1;
    cm.method[0].ordering = CHOLMOD_AMD;
    cm.postorder = 1;
    for (int k = 0; k < 240; k++) {
      fl_step_info info;
      ASSERT_OK(fl_world_step(w, s, &info));
      if (k % 60 != 59) continue;
      fl_problem *p = fl_world_problem(w);
      if (p->nc == 0) continue;
      cholmod_sparse *H = h_pattern(p, &cm);
      ASSERT(H);
      fl_int nv = p->nv, *par = malloc((size_t)nv * sizeof(fl_int));
      int *cnt = calloc((size_t)nv, sizeof(int)), *set = malloc((size_t)nv * sizeof(int));
      ASSERT(par && cnt && set);
      for (fl_int i = 0; i < nv; i++) par[i] = i;
      const int *Hp = H->p, *Hi = H->i;
      for (fl_int j = 0; j < nv; j++)
        for (int q = Hp[j]; q < Hp[j + 1]; q++) {
          fl_int a = uf_find(par, j), b = uf_find(par, Hi[q]);
          if (a != b) par[a] = b;
        }
      int ncomp = 0, big = 0;
      for (fl_int i = 0; i < nv; i++) cnt[uf_find(par, i)]++;
      for (fl_int i = 0; i < nv; i++)
        if (cnt[i] > 0) ncomp++, big = cnt[i] > big ? cnt[i] : big;
      double fw, lw, fs = 0, ls = 0;
      ASSERT_OK(analyze(H, &cm, &fw, &lw));
      int ncon = 0; // components with a constraint (more than one body's dofs or a contact)
      for (fl_int r = 0; r < nv; r++) {
        if (cnt[r] == 0) continue;
        int n = 0;
        for (fl_int i = 0; i < nv; i++)
          if (uf_find(par, i) == r) set[n++] = (int)i;
        ncon += n > 6;
        cholmod_sparse *S = cholmod_submatrix(H, set, n, set, n, 1, 1, &cm);
        ASSERT(S);
        double f1, l1;
        ASSERT_OK(analyze(S, &cm, &f1, &l1));
        fs += f1, ls += l1;
        cholmod_free_sparse(&S, &cm);
      }
      fprintf(stderr,
              "%s step %d: nv %d, nc %d, %d components (%d of more than one body, largest %d "
              "dofs); flops whole %.6g, sum over components %.6g; nnz(L) %.6g, %.6g\n",
              scenes[sc], k, (int)nv, (int)p->nc, ncomp, ncon, big, fw, fs, lw, ls);
      ASSERT_NEAR(fs, fw, 0.01 * fw);
      ASSERT_NEAR(ls, lw, 0.01 * lw);
      free(par), free(cnt), free(set);
      cholmod_free_sparse(&H, &cm);
    }
    cholmod_finish(&cm);
    fl_solver_destroy(s);
    fl_world_free(w);
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
/* test_conformance.c: every registered solver x every small problem obeys the solver contract.
 *
 * One case per problem (the built-in examples of fl_examples_list and a few hand-made edge
 * cases); each case loops over fl_solver_list(), so solvers added to registry.c later are
 * covered without touching this file. Per (solver, problem):
 *   - setup either works or answers FL_ERR_UNSUPPORTED exactly when the capabilities say so;
 *   - solve returns FL_OK with a reason > 0 within the budget;
 *   - the history holds iters + 1 records with iter = 0, 1, ..., iters and nondecreasing time;
 *   - the common merit of the returned iterate is finite (and, for solvers that do not solve a
 *     regularized model of their own, small: natmap_raw <= 1e-6, bilateral <= 1e-6);
 *   - view() and the options JSON work, a prefixed common key is accepted, an unknown key is
 *     rejected with FL_ERR_UNKNOWN_OPTION.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fl_test.h"
#include "problems/fl_problem.h"
#include "solvers/fl_solver.h"

#define BUDGET "20000"
#define BUDGET_N 20000


/* the capability that makes p unsupported for a solver, or NULL if p is supported */
static const char *why_unsupported(unsigned caps, const fl_problem *p) {
  if (p->kind == FL_PROBLEM_LOCAL) {
    // a solver without FL_CAP_LOCAL runs on the lift (A = I, J = P L: rigid, no bilateral
    // rows), so only rigid contact is needed either way; peers are not lifted
    if ((caps & FL_CAP_PEER) && (caps & FL_CAP_NEEDS_AJ)) return "peer that needs A and J";
    if (p->nc > 0 && !(caps & FL_CAP_RIGID)) return "no rigid contact";
  } else {
    for (fl_int i = 0; i < p->nc; i++) {
      if (isinf(p->stiffness[i]) && !(caps & FL_CAP_RIGID)) return "no rigid contact";
      if (!isinf(p->stiffness[i]) && !(caps & FL_CAP_COMPLIANT)) return "no compliant contact";
    }
  }
  if (p->nh > 0 && !(caps & FL_CAP_BILATERAL)) return "no bilateral rows";
  return NULL;
}


/* checks one solver on one problem; 0 when it conforms */
static int conform(const char *name, const fl_problem *p) {
  fl_solver *s;
  ASSERT_OK(fl_solver_create(name, &s));
  unsigned caps = fl_solver_caps(s);
  const char *why = why_unsupported(caps, p);

  // option errors and prefixes
  ASSERT_EQ(fl_solver_set_option(s, "no_such_option_xyz", "1"), FL_ERR_UNKNOWN_OPTION);
  ASSERT_STR_CONTAINS(fl_errmsg(), "max_iter");
  char key[128];
  snprintf(key, sizeof key, "%s.max_iter", name);
  ASSERT_OK(fl_solver_set_option(s, key, BUDGET));
  ASSERT_EQ(fl_solver_set_option(s, "max_iter", "-1"), FL_ERR_OPTION_RANGE);

  int rc = fl_solver_setup(s, p);
  if (why) {
    if (rc != FL_ERR_UNSUPPORTED)
      FL_FAIL_("%s on %s: expected FL_ERR_UNSUPPORTED (%s), got %d", name, p->name, why, rc);
    ASSERT_STR_CONTAINS(fl_errmsg(), name);
    fl_solver_destroy(s);
    return 0;
  }
  if (rc == FL_ERR_UNSUPPORTED && (caps & FL_CAP_GPU) && strstr(fl_errmsg(), "no CUDA device")) {
    printf("%-16s %-24s (no CUDA device: not run here)\n", name, p->name);
    fl_solver_destroy(s);
    return 0;
  }
  if (rc) FL_FAIL_("%s on %s: setup failed: %d %s", name, p->name, rc, fl_errmsg());

  fl_int nrow = fl_problem_nrows(p);
  double *v = calloc((size_t)p->nv + 1, sizeof *v), *g = calloc((size_t)nrow + 1, sizeof *g);
  fl_result res;
  rc = fl_solver_solve(s, p, p->kind == FL_PROBLEM_GLOBAL ? v : NULL, g, &res);
  if (rc) FL_FAIL_("%s on %s: solve failed: %d %s", name, p->name, rc, fl_errmsg());
  printf("%-16s %-24s %-24s iters %5d  error %.3e\n", name, p->name, fl_reason_name(res.reason),
         res.iters, res.error);
  if (!(res.reason > 0))
    FL_FAIL_("%s on %s: reason %s after %d iterations (error %g)", name, p->name,
             fl_reason_name(res.reason), res.iters, res.error);
  ASSERT(res.iters >= 0 && res.iters <= BUDGET_N);

  // the history contract
  int n;
  const fl_iter_stat *h = fl_solver_history(s, &n);
  ASSERT_EQ(n, res.iters + 1);
  ASSERT_EQ(res.history_len, n);
  ASSERT_EQ(res.history_lost, 0);
  for (int k = 0; k < n; k++) {
    ASSERT_EQ(h[k].iter, k);
    if (k) ASSERT_LE(h[k - 1].t, h[k].t);
  }
  ASSERT(res.solve_s >= 0 && res.setup_s >= 0 && res.monitor_s >= 0);

  // the common merit of the returned iterate
  const fl_metrics *m = fl_solver_final_metrics(s);
  ASSERT(m != NULL);
  ASSERT(isfinite(m->natmap) && isfinite(m->natmap_raw));
  ASSERT(isfinite(h[n - 1].merit));
  for (fl_int k = 0; k < nrow; k++) ASSERT(isfinite(g[k]));
  if (!(caps & FL_CAP_REGULARIZED)) {
    if (!(m->natmap_raw <= 1e-6 && m->bilateral <= 1e-6))
      FL_FAIL_("%s on %s: converged (%s) but the common natural map is %g, bilateral %g", name,
               p->name, fl_reason_name(res.reason), m->natmap_raw, m->bilateral);
  }

  // view and options JSON
  char *buf = calloc(1, 65536);
  FILE *f = fmemopen(buf, 65535, "w");
  fl_solver_view(s, f);
  fclose(f);
  ASSERT_STR_CONTAINS(buf, key);
  memset(buf, 0, 65536);
  f = fmemopen(buf, 65535, "w");
  fl_solver_options_json(s, f);
  fclose(f);
  cJSON *j = cJSON_Parse(buf);
  ASSERT(j != NULL);
  cJSON *mi = cJSON_GetObjectItem(j, "max_iter");
  ASSERT(mi && cJSON_IsString(mi) && strcmp(mi->valuestring, BUDGET) == 0);
  cJSON_Delete(j);
  free(buf);

  free(v);
  free(g);
  fl_solver_destroy(s);
  return 0;
}


/* runs every registered solver on p (owned; freed here) */
static int all_solvers(fl_problem *p) {
  ASSERT(p != NULL);
  ASSERT_OK(fl_register_all());
  const char *const *names = fl_solver_list();
  ASSERT(names[0] != NULL);
  int fails = 0;
  for (int k = 0; names[k]; k++) fails += conform(names[k], p) != 0;
  fl_problem_free(p);
  return fails ? 1 : 0;
}


static int example(const char *name) {
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example(name, &p));
  return all_solvers(p);
}


FL_TEST(examples_listed) {
  // every example has a case below
  const char *const known[] = {"one_contact_slide", "one_contact_stick", "box_on_plane",
                               "box_on_plane_compliant", "box_push_slide", "two_box_stack",
                               "pendulum_bilateral", NULL};
  const char *const *l = fl_examples_list();
  for (int k = 0; l[k]; k++) {
    int found = 0;
    for (int j = 0; known[j]; j++) found |= strcmp(l[k], known[j]) == 0;
    if (!found) FL_FAIL_("example %s has no conformance case: add one", l[k]);
  }
  return 0;
}

FL_TEST(one_contact_slide) { return example("one_contact_slide"); }
FL_TEST(one_contact_stick) { return example("one_contact_stick"); }
FL_TEST(box_on_plane) { return example("box_on_plane"); }
FL_TEST(box_on_plane_compliant) { return example("box_on_plane_compliant"); }
FL_TEST(box_push_slide) { return example("box_push_slide"); }
FL_TEST(two_box_stack) { return example("two_box_stack"); }
FL_TEST(pendulum_bilateral) { return example("pendulum_bilateral"); }


//---- hand-made edge cases ----

/* a point mass (3 dofs, dt 0.01) falling freely, with nc contacts below it and nh rows */
static fl_problem *particle(fl_int nc, fl_int nh, const char *name) {
  fl_problem *p;
  if (fl_problem_alloc(FL_PROBLEM_GLOBAL, 3, nc, nh, 0, &p)) return NULL;
  snprintf(p->name, sizeof p->name, "%s", name);
  p->dt = 0.01;
  fl_int ai[3] = {0, 1, 2}, ti[4], tj[4];
  double av[3] = {1, 1, 1}, tv[4];
  int nt = 0;
  if (nc) {
    ti[nt] = 0, tj[nt] = 2, tv[nt++] = 1.0;
    ti[nt] = 1, tj[nt] = 0, tv[nt++] = 1.0;
    ti[nt] = 2, tj[nt] = 1, tv[nt++] = 1.0;
    p->mu[0] = 0.4;
  }
  if (nh) ti[nt] = 3 * nc, tj[nt] = 2, tv[nt++] = -1.0;
  p->vstar[0] = 0.2;
  p->vstar[2] = -9.81 * p->dt;
  if (fl_csr_from_triplets(3, 3, 3, ai, ai, av, &p->A) ||
      fl_csr_from_triplets(3 * nc + nh, 3, nt, ti, tj, tv, &p->J) || fl_problem_find_cliques(p)) {
    fl_problem_free(p);
    return NULL;
  }
  return p;
}


FL_TEST(free_fall) {
  // no constraint at all: v = v* at once
  return all_solvers(particle(0, 0, "free_fall"));
}


FL_TEST(compliant_particle_sliding) {
  // a sliding particle on a soft, damped contact starting above its static sag
  fl_problem *p = particle(1, 0, "compliant_particle");
  if (!p) return 1;
  p->stiffness[0] = 1e3;
  p->tau_d[0] = 0.02;
  p->phi0[0] = -1e-3;
  return all_solvers(p);
}


FL_TEST(bounded_row) {
  // a rod whose tension impulse is capped: the bound is active at the answer
  fl_problem *p = particle(0, 1, "bounded_row");
  if (!p) return 1;
  p->lo[0] = -0.5 * 9.81 * 0.01;
  return all_solvers(p);
}


FL_TEST(separating_local) {
  // q_n > 0: the answer is gamma = 0
  static const fl_int ij[3] = {0, 1, 2};
  static const double w[3] = {2, 1, 1};
  fl_problem *p;
  ASSERT_OK(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 1, 0, 0, &p));
  snprintf(p->name, sizeof p->name, "separating_local");
  ASSERT_OK(fl_csr_from_triplets(3, 3, 3, ij, ij, w, &p->W));
  p->q[0] = 0.5, p->q[1] = -0.3, p->q[2] = 0.1;
  p->mu[0] = 0.5;
  return all_solvers(p);
}

/* test_pnewton.c: the proximal Alart-Curnier Newton on the global form (solvers/pnewton.c)
 * solves degenerate problems (more contact rows than dofs: W = J A^-1 J' singular) to the
 * common merit 1e-8 in a few Newton iterations, and its answer has the closed form's velocities
 * and total impulse. The solver contract on every example is test_conformance's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fl_test.h"
#include "problems/fl_problem.h"
#include "solvers/fl_solver.h"

/* solves example `name` with pnewton to 1e-8 (Siconos's normalization) within max_iters Newton
 * iterations; checks the cones, v against the closed form and the summed impulse of every
 * coordinate (unique, where the individual impulses are not) */
static int solve_example(const char *name, int max_iters) {
  ASSERT_OK(fl_register_all());
  fl_problem *p = NULL;
  ASSERT_OK(fl_problem_create_example(name, &p));
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("pnewton", &s));
  ASSERT_OK(fl_solver_set_options(s, "abs_tol=1e-8,norm=siconos"));
  ASSERT_OK(fl_solver_setup(s, p));
  fl_int nr = fl_problem_nrows(p);
  double *g = calloc((size_t)nr, sizeof *g), *v = calloc((size_t)p->nv, sizeof *v);
  double *ge = calloc((size_t)nr, sizeof *ge), *ve = calloc((size_t)p->nv, sizeof *ve);
  ASSERT(g && v && ge && ve);
  fl_result res;
  ASSERT_OK(fl_solver_solve(s, p, v, g, &res));
  printf("%s: %s after %d iterations, error %.3e\n", name, fl_reason_name(res.reason), res.iters,
         res.error);
  ASSERT_EQ(res.reason, FL_CONVERGED_ATOL);
  ASSERT(res.iters <= max_iters);
  const fl_metrics *m = fl_solver_final_metrics(s);
  ASSERT(m && m->natmap <= 1e-8);
  // 3 more contact rows than dofs per box: W is singular
  ASSERT(3 * p->nc > p->nv);
  for (fl_int i = 0; i < p->nc; i++) {
    const double *gi = g + 3 * i;
    ASSERT(gi[0] >= 0);
    ASSERT(hypot(gi[1], gi[2]) <= p->mu[i] * gi[0] * (1 + 1e-12) + 1e-300);
  }
  ASSERT_OK(fl_example_solution(name, ve, ge));
  double vs = 0;
  for (fl_int k = 0; k < p->nv; k++) vs = fmax(vs, fabs(ve[k]));
  for (fl_int k = 0; k < p->nv; k++) ASSERT_NEAR(v[k], ve[k], 1e-7 * fmax(vs, 1));
  // J' gamma is unique (A (v - v*) = J' gamma with v unique)
  double *f = calloc((size_t)p->nv, sizeof *f), *fe = calloc((size_t)p->nv, sizeof *fe);
  ASSERT(f && fe);
  fl_csr_gemtv(p->J, 1.0, g, 0.0, f);
  fl_csr_gemtv(p->J, 1.0, ge, 0.0, fe);
  double fs = 0;
  for (fl_int k = 0; k < p->nv; k++) fs = fmax(fs, fabs(fe[k]));
  for (fl_int k = 0; k < p->nv; k++) ASSERT_NEAR(f[k], fe[k], 1e-7 * fmax(fs, 1e-12));
  fl_solver_destroy(s);
  fl_problem_free(p);
  free(g), free(v), free(ge), free(ve), free(f), free(fe);
  return 0;
}


/* a box resting on four corners: 12 contact rows on 6 dofs */
FL_TEST(box_on_plane_degenerate) { return solve_example("box_on_plane", 10); }

/* two stacked boxes: 24 contact rows on 12 dofs, both boxes statically indeterminate */
FL_TEST(two_box_stack_degenerate) { return solve_example("two_box_stack", 10); }

/* a box pushed along the plane, sliding on four corners */
FL_TEST(box_push_slide) { return solve_example("box_push_slide", 10); }


/* a problem with bilateral rows is refused with FL_ERR_UNSUPPORTED, not solved wrongly */
FL_TEST(bilateral_unsupported) {
  ASSERT_OK(fl_register_all());
  fl_problem *p = NULL;
  ASSERT_OK(fl_problem_create_example("pendulum_bilateral", &p));
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("pnewton", &s));
  ASSERT_EQ(fl_solver_setup(s, p), FL_ERR_UNSUPPORTED);
  fl_solver_destroy(s);
  fl_problem_free(p);
  return 0;
}

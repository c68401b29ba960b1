// SPDX-License-Identifier: Apache-2.0
/* answer.c: an answer computed elsewhere (a file, another program, Siconos) scored as the
 * harness scores its own solvers (fl_solution_score in fl_solver.h).
 *
 * The answer goes through the solver spine itself: a table that is never registered, whose
 * solve hands back the given answer as iteration 0 with the common merit as its own residual,
 * run with max_iter = 0, abs_tol = tol and the chosen norm. So the merit, the metrics, the
 * "converged needs finite metrics" rule and the reason are those of solver.c, not a copy of
 * them: CONVERGED_EXACT when the merit is at most tol, DIVERGED_NAN when it is not finite,
 * DIVERGED_MAX_ITER otherwise (a solver stopped at this iterate without reaching tol).
 */
#include <math.h>
#include <string.h>

#include "fl_solver_impl.h"

typedef struct answer_data {
  const double *v, *gamma; /* the answer (v may be NULL) */
  int v_from_gamma;        /* v was made from gamma */
} answer_data;

/* the answer's data is set between create and setup, so it lives outside the zeroed state */
typedef struct answer_in {
  const double *v, *gamma;
} answer_in;

static int answer_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  const answer_in *in = s->keep;
  answer_data *d = s->data;
  fl_int nr = fl_problem_nrows(p);
  if (nr > 0) memcpy(gamma, in->gamma, (size_t)nr * sizeof *gamma);
  if (p->kind == FL_PROBLEM_GLOBAL && p->nv > 0) {
    if (in->v) {
      memcpy(v, in->v, (size_t)p->nv * sizeof *v);
    } else {
      // the velocities the answer's impulses give: v = v* + A^-1 J^T gamma
      fl_dynamics *dyn = NULL;
      FL_TRY(fl_dynamics_create(p, &dyn));
      const fl_csr *B = fl_dynamics_JAinv(dyn);
      if (!B) {
        fl_dynamics_free(dyn);
        return fl_errcode() < 0 ? fl_errcode() : FL_ERR_NOMEM;
      }
      memcpy(v, p->vstar, (size_t)p->nv * sizeof *v);
      fl_csr_gemtv(B, 1.0, gamma, 1.0, v);
      fl_dynamics_free(dyn);
      d->v_from_gamma = 1;
    }
  }
  fl_metrics m;
  FL_TRY(fl_problem_metrics(p, p->kind == FL_PROBLEM_GLOBAL ? v : NULL, gamma,
                            (fl_norm_kind)s->common.norm, &m));
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  st.error = fl_metrics_merit(&m, NAN);
  s->cur_v = p->kind == FL_PROBLEM_GLOBAL ? v : NULL;
  s->cur_gamma = gamma;
  fl_solver_record(s, &st);
  return fl_solver_exit_code(s);
}

static const fl_solver_ops answer_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "answer",
  .summary = "an answer computed elsewhere, scored as a solve stopped at it",
  .data_size = sizeof(answer_data),
  .caps = FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_BILATERAL | FL_CAP_LOCAL,
  .solve = answer_solve,
};

static void no_free(void *p) { (void)p; }

int fl_solution_score(const fl_problem *p, const double *v, const double *gamma,
                      fl_norm_kind norm, double tol, fl_score *out) {
  if (!p || !gamma || !out)
    return fl_seterr(FL_ERR_INVAL, "fl_solution_score: NULL problem, answer or output");
  memset(out, 0, sizeof *out);
  out->merit = NAN;
  if (!(tol >= 0) || (unsigned)norm > FL_NORM_SICONOS)
    return fl_seterr(FL_ERR_INVAL, "fl_solution_score: tolerance %g (expected >= 0) or norm %d",
                     tol, (int)norm);
  static const char *const norms[] = {"none", "fclib", "siconos"};
  char tbuf[64];
  snprintf(tbuf, sizeof tbuf, "%.17g", tol);
  fl_solver *s = NULL;
  FL_TRY(fl__solver_create_ops(&answer_ops, &s));
  answer_in in = {v, gamma};
  s->keep = &in;
  s->keep_free = no_free;
  int rc = fl_solver_set_option(s, "max_iter", "0");
  if (rc >= 0) rc = fl_solver_set_option(s, "abs_tol", tbuf);
  if (rc >= 0) rc = fl_solver_set_option(s, "norm", norms[norm]);
  if (rc >= 0) rc = fl_solver_set_option(s, "error_every", "1");
  double *vv = NULL, *gg = NULL;
  if (rc >= 0) rc = fl_solver_setup(s, p);
  if (rc >= 0) {
    vv = fl_calloc((size_t)p->nv + 1, sizeof *vv);
    gg = fl_calloc((size_t)fl_problem_nrows(p) + 1, sizeof *gg);
    if (!vv || !gg) rc = fl_seterr(FL_ERR_NOMEM, "fl_solution_score(%s): out of memory", p->name);
  }
  fl_result res;
  if (rc >= 0) rc = fl_solver_solve(s, p, p->kind == FL_PROBLEM_GLOBAL ? vv : NULL, gg, &res);
  if (rc >= 0) {
    int n = 0;
    const fl_iter_stat *h = fl_solver_history(s, &n);
    const fl_metrics *m = fl_solver_final_metrics(s);
    out->reason = res.reason;
    out->merit = n > 0 ? h[n - 1].merit : INFINITY;
    if (m) out->metrics = *m;
    out->v_from_gamma = ((const answer_data *)s->data)->v_from_gamma;
  }
  fl_free(vv);
  fl_free(gg);
  fl_solver_destroy(s);
  return rc;
}

int fl_solution_score_file(const fl_problem *p, const char *path, fl_norm_kind norm, double tol,
                           fl_score *out) {
  if (!p || !path || !out)
    return fl_seterr(FL_ERR_INVAL, "fl_solution_score_file: NULL problem, file or output");
  double *v = fl_calloc((size_t)p->nv + 1, sizeof *v);
  double *g = fl_calloc((size_t)fl_problem_nrows(p) + 1, sizeof *g);
  int have_v = 0;
  int rc = v && g ? fl_solution_read(p, path, v, g, &have_v)
                  : fl_seterr(FL_ERR_NOMEM, "%s: out of memory", path);
  if (rc >= 0) rc = fl_solution_score(p, have_v ? v : NULL, g, norm, tol, out);
  fl_free(v);
  fl_free(g);
  return rc;
}

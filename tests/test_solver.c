// SPDX-License-Identifier: Apache-2.0
/* test_solver.c: the solver spine (registry, options, history, reasons, monitors, state).
 *
 * Most cases use "fake" solvers registered here whose own residual follows a known sequence
 * e_k = e0 * rate^k, so that the iteration at which each stopping rule fires is known exactly.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fl_test.h"
#include "problems/fl_problem.h"
#include "solvers/fl_solver_impl.h"

//---- a fake solver with a known residual sequence ----

typedef struct fake_opts {
  double e0, rate;
  int nan_at;
  int lin_max_iter; /* a nested key, "lin.max_iter" */
} fake_opts;

static const fl_option_desc fake_table[] = {
  {"e0", FL_OPT_REAL, offsetof(fake_opts, e0), 0, INFINITY, 1.0, NULL, "residual at iteration 0"},
  {"rate", FL_OPT_REAL, offsetof(fake_opts, rate), 0, 1, 0.5, NULL, "factor per iteration"},
  {"nan_at", FL_OPT_INT, offsetof(fake_opts, nan_at), -1, 1e9, -1, NULL, "NaN at this iteration"},
  {"lin.max_iter", FL_OPT_INT, offsetof(fake_opts, lin_max_iter), 1, 1000, 40, NULL,
   "nested solver's budget"},
  {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}};

static int fake_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  const fake_opts *o = s->opts;
  s->cur_v = v;
  s->cur_gamma = gamma;
  double e = o->e0;
  for (int k = 0;; k++) {
    fl_iter_stat st;
    fl_iter_stat_init(&st, k);
    st.error = k == o->nan_at ? NAN : e;
    if (fl_solver_record(s, &st) != 0) break;
    e *= o->rate;
  }
  return s->reason == FL_REASON_ABORT ? s->abort_code : FL_OK;
}

#define FAKE_OPS(var, nm, capv, defaults)                                                  \
  static const fl_solver_ops var = {.abi_version = FL_SOLVER_ABI,                          \
                                    .name = nm,                                            \
                                    .summary = "test solver",                              \
                                    .opts_size = sizeof(fake_opts),                        \
                                    .options = fake_table,                                 \
                                    .data_size = 8,                                        \
                                    .caps = capv,                                          \
                                    .solve = fake_solve,                                   \
                                    .common_defaults = defaults}

FAKE_OPS(fake_ops, "fake", FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_LOCAL | FL_CAP_BILATERAL, NULL);
FAKE_OPS(fake_aj_ops, "fake-aj", FL_CAP_RIGID | FL_CAP_NEEDS_AJ, NULL);
FAKE_OPS(fake_soft_ops, "fake-soft", FL_CAP_COMPLIANT | FL_CAP_BILATERAL, NULL);
FAKE_OPS(fake_rigid_ops, "fake-rigid", FL_CAP_RIGID | FL_CAP_LOCAL, NULL);
FAKE_OPS(fake_def_ops, "fake-def", FL_CAP_RIGID | FL_CAP_LOCAL, "max_iter=8, rel_tol=1e-6");

static void reg(void) {
  fl_register_all();
  const fl_solver_ops *all[] = {&fake_ops, &fake_aj_ops, &fake_soft_ops, &fake_rigid_ops,
                                &fake_def_ops};
  for (int k = 0; k < 5; k++)
    if (!fl_solver_find(all[k]->name)) fl_solver_register(all[k]);
}

/* one local contact, W = I, q = (-1, 0.5, 0.2), mu = 0.3 */
static fl_problem *local_problem(void) {
  static const fl_int ij[3] = {0, 1, 2};
  static const double one[3] = {1, 1, 1};
  fl_problem *p = NULL;
  if (fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 1, 0, 0, &p)) return NULL;
  snprintf(p->name, sizeof p->name, "slide");
  if (fl_csr_from_triplets(3, 3, 3, ij, ij, one, &p->W)) {
    fl_problem_free(p);
    return NULL;
  }
  p->q[0] = -1, p->q[1] = 0.5, p->q[2] = 0.2;
  p->mu[0] = 0.3;
  return p;
}

/* creates `name`, applies "k=v" options, sets up on p */
static int make(const char *name, const fl_problem *p, const char *const *opts, fl_solver **out) {
  reg();
  FL_TRY(fl_solver_create(name, out));
  for (int k = 0; opts && opts[k]; k++) {
    char key[64];
    const char *eq = strchr(opts[k], '=');
    snprintf(key, sizeof key, "%.*s", (int)(eq - opts[k]), opts[k]);
    FL_TRY(fl_solver_set_option(*out, key, eq + 1));
  }
  return p ? fl_solver_setup(*out, p) : FL_OK;
}

/* checks the history contract: length == iters + 1, iter 0..iters, t nondecreasing */
static int check_history(const fl_solver *s, const fl_result *res) {
  int n;
  const fl_iter_stat *h = fl_solver_history(s, &n);
  ASSERT_EQ(n, res->history_len);
  ASSERT_EQ(n, res->iters + 1);
  ASSERT_EQ(res->history_lost, 0);
  for (int k = 0; k < n; k++) {
    ASSERT_EQ(h[k].iter, k);
    if (k) ASSERT_LE(h[k - 1].t, h[k].t);
  }
  ASSERT_EQ(res->error, h[n - 1].error);
  return 0;
}


//---- reasons and registry ----

FL_TEST(reason_names) {
  struct { int r; const char *n; } t[] = {
    {FL_CONVERGED_ATOL, "CONVERGED_ATOL"}, {FL_CONVERGED_RTOL, "CONVERGED_RTOL"},
    {FL_CONVERGED_STAGNATION_OK, "CONVERGED_STAGNATION_OK"}, {FL_STOPPED_ITS, "STOPPED_ITS"},
    {FL_CONVERGED_EXACT, "CONVERGED_EXACT"}, {FL_ITERATING, "ITERATING"},
    {FL_DIVERGED_MAX_ITER, "DIVERGED_MAX_ITER"}, {FL_DIVERGED_NAN, "DIVERGED_NAN"},
    {FL_DIVERGED_LINEAR_SOLVER, "DIVERGED_LINEAR_SOLVER"},
    {FL_DIVERGED_TIME_LIMIT, "DIVERGED_TIME_LIMIT"},
    {FL_DIVERGED_LINE_SEARCH, "DIVERGED_LINE_SEARCH"},
    {FL_DIVERGED_STAGNATION, "DIVERGED_STAGNATION"},
    {FL_DIVERGED_BREAKDOWN, "DIVERGED_BREAKDOWN"}, {FL_DIVERGED_GROWTH, "DIVERGED_GROWTH"}};
  for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
    ASSERT(strcmp(fl_reason_name(t[k].r), t[k].n) == 0);
  ASSERT(strcmp(fl_reason_name(77), "UNKNOWN_REASON") == 0);
  return 0;
}


FL_TEST(registry) {
  ASSERT_OK(fl_register_all());
  int n1 = 0, n2 = 0;
  const char *const *l = fl_solver_list();
  while (l[n1]) n1++;
  ASSERT_OK(fl_register_all()); /* idempotent */
  l = fl_solver_list();
  while (l[n2]) n2++;
  ASSERT_EQ(n1, n2);
  ASSERT(fl_solver_find("pgs") == &fl_pgs_ops);
  ASSERT(fl_solver_find("jacobi") == &fl_jacobi_ops);
  ASSERT(fl_solver_find("no-such") == NULL);
  ASSERT_EQ(fl_solver_register(&fl_pgs_ops), FL_ERR_INVAL); /* duplicate name */
  fl_solver_ops bad = fake_ops;
  bad.name = "fake-abi";
  bad.abi_version = FL_SOLVER_ABI + 1;
  ASSERT_EQ(fl_solver_register(&bad), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "ABI");
  fl_solver *s;
  ASSERT_EQ(fl_solver_create("pgz", &s), FL_ERR_UNKNOWN_SOLVER);
  ASSERT(s == NULL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "'pgz'");
  ASSERT_STR_CONTAINS(fl_errmsg(), "pgs, jacobi");
  return 0;
}


//---- options ----

FL_TEST(options_unknown) {
  fl_solver *s;
  ASSERT_OK(make("pgs", NULL, NULL, &s));
  ASSERT_EQ(fl_solver_set_option(s, "omgea", "1.2"), FL_ERR_UNKNOWN_OPTION);
  const char *m = fl_errmsg();
  ASSERT_STR_CONTAINS(m, "pgs");
  ASSERT_STR_CONTAINS(m, "'omgea'");
  ASSERT_STR_CONTAINS(m, "max_iter");
  ASSERT_STR_CONTAINS(m, "omega");
  ASSERT_STR_CONTAINS(m, "order");
  char buf[64];
  ASSERT_EQ(fl_solver_get_option(s, "omgea", buf, sizeof buf), FL_ERR_UNKNOWN_OPTION);
  fl_solver_destroy(s);
  return 0;
}


/* A "key=value,..." list sets each option in order; an entry without '=' names itself. */
FL_TEST(options_from_a_list) {
  fl_solver *s;
  ASSERT_OK(make("pgs", NULL, NULL, &s));
  ASSERT_OK(fl_solver_set_options(s, "max_iter=7,pgs.omega=1.25"));
  ASSERT_OK(fl_solver_set_options(s, NULL));
  char buf[64];
  ASSERT_OK(fl_solver_get_option(s, "max_iter", buf, sizeof buf));
  ASSERT(strcmp(buf, "7") == 0);
  ASSERT_OK(fl_solver_get_option(s, "omega", buf, sizeof buf));
  ASSERT(atof(buf) == 1.25);
  ASSERT_EQ(fl_solver_set_options(s, "max_iter=3,omega"), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "'omega' lacks '='");
  ASSERT_EQ(fl_solver_set_options(s, "omgea=1"), FL_ERR_UNKNOWN_OPTION);
  fl_solver_destroy(s);
  return 0;
}


FL_TEST(options_type_errors) {
  fl_solver *s;
  ASSERT_OK(make("pgs", NULL, NULL, &s));
  ASSERT_EQ(fl_solver_set_option(s, "max_iter", "many"), FL_ERR_OPTION_TYPE);
  ASSERT_STR_CONTAINS(fl_errmsg(), "max_iter");
  ASSERT_EQ(fl_solver_set_option(s, "omega", "fast"), FL_ERR_OPTION_TYPE);
  ASSERT_STR_CONTAINS(fl_errmsg(), "omega");
  ASSERT_EQ(fl_solver_set_option(s, "warm_start", "maybe"), FL_ERR_OPTION_TYPE);
  ASSERT_EQ(fl_solver_set_option(s, "max_iter", "1.5"), FL_ERR_OPTION_TYPE);
  // the value is unchanged after an error
  char buf[64];
  ASSERT_OK(fl_solver_get_option(s, "max_iter", buf, sizeof buf));
  ASSERT(strcmp(buf, "100") == 0);
  fl_solver_destroy(s);
  return 0;
}


FL_TEST(options_range_errors) {
  fl_solver *s;
  ASSERT_OK(make("pgs", NULL, NULL, &s));
  ASSERT_EQ(fl_solver_set_option(s, "omega", "2.5"), FL_ERR_OPTION_RANGE);
  ASSERT_STR_CONTAINS(fl_errmsg(), "omega");
  ASSERT_EQ(fl_solver_set_option(s, "omega", "0"), FL_ERR_OPTION_RANGE);
  ASSERT_EQ(fl_solver_set_option(s, "max_iter", "-3"), FL_ERR_OPTION_RANGE);
  ASSERT_EQ(fl_solver_set_option(s, "abs_tol", "-1e-3"), FL_ERR_OPTION_RANGE);
  ASSERT(fl_solver_set_option(s, "order", "diagonal") < 0);
  ASSERT_STR_CONTAINS(fl_errmsg(), "order");
  ASSERT(fl_solver_set_option(s, "norm", "l1") < 0);
  ASSERT_EQ(fl_solver_set_option(s, "monitor", "tcp:9000"), FL_ERR_OPTION_RANGE);
  ASSERT_STR_CONTAINS(fl_errmsg(), "csv:PATH");
  ASSERT_EQ(fl_solver_set_option(s, "monitor", "csv:"), FL_ERR_OPTION_RANGE);
  ASSERT_OK(fl_solver_set_option(s, "time_limit", "inf"));
  ASSERT_OK(fl_solver_set_option(s, "order", "shuffle"));
  ASSERT_OK(fl_solver_set_option(s, "norm", "siconos"));
  fl_solver_destroy(s);
  return 0;
}


FL_TEST(options_prefix) {
  fl_solver *s;
  char buf[64];
  ASSERT_OK(make("pgs", NULL, NULL, &s));
  ASSERT_OK(fl_solver_set_option(s, "pgs.omega", "1.3"));
  ASSERT_OK(fl_solver_get_option(s, "omega", buf, sizeof buf));
  ASSERT_NEAR(atof(buf), 1.3, 1e-15);
  ASSERT_OK(fl_solver_set_option(s, "pgs.max_iter", "7")); /* common key with prefix */
  ASSERT_OK(fl_solver_get_option(s, "max_iter", buf, sizeof buf));
  ASSERT(strcmp(buf, "7") == 0);
  ASSERT_OK(fl_solver_get_option(s, "pgs.max_iter", buf, sizeof buf));
  ASSERT(strcmp(buf, "7") == 0);
  // another solver's prefix is not this solver's option
  ASSERT_EQ(fl_solver_set_option(s, "jacobi.omega", "0.5"), FL_ERR_UNKNOWN_OPTION);
  fl_solver_destroy(s);
  // a nested key is the solver's own table's business, with or without the prefix
  ASSERT_OK(make("fake", NULL, NULL, &s));
  ASSERT_OK(fl_solver_set_option(s, "fake.lin.max_iter", "12"));
  ASSERT_OK(fl_solver_get_option(s, "lin.max_iter", buf, sizeof buf));
  ASSERT(strcmp(buf, "12") == 0);
  ASSERT_EQ(fl_solver_set_option(s, "lin.max_iter", "0"), FL_ERR_OPTION_RANGE);
  ASSERT_EQ(fl_solver_set_option(s, "lin.rtol", "0"), FL_ERR_UNKNOWN_OPTION);
  fl_solver_destroy(s);
  return 0;
}


FL_TEST(options_solver_defaults) {
  // a solver's own defaults for common options ("max_iter=8, rel_tol=1e-6")
  fl_solver *s;
  char buf[64];
  ASSERT_OK(make("fake-def", NULL, NULL, &s));
  ASSERT_OK(fl_solver_get_option(s, "max_iter", buf, sizeof buf));
  ASSERT(strcmp(buf, "8") == 0);
  ASSERT_OK(fl_solver_get_option(s, "rel_tol", buf, sizeof buf));
  ASSERT_NEAR(atof(buf), 1e-6, 1e-20);
  ASSERT_OK(fl_solver_get_option(s, "abs_tol", buf, sizeof buf));
  ASSERT_NEAR(atof(buf), 1e-8, 1e-22);
  fl_solver_destroy(s);
  return 0;
}


FL_TEST(view_and_json) {
  fl_solver *s;
  ASSERT_OK(make("pgs", NULL, (const char *const[]){"omega=1.25", "monitor=csv:a\"b.csv", NULL},
                 &s));
  char buf[8192] = "";
  FILE *f = fmemopen(buf, sizeof buf - 1, "w");
  fl_solver_view(s, f);
  fclose(f);
  ASSERT_STR_CONTAINS(buf, "pgs.max_iter = 100");
  ASSERT_STR_CONTAINS(buf, "pgs.omega = 1.25");
  ASSERT_STR_CONTAINS(buf, "pgs.order = natural");
  memset(buf, 0, sizeof buf);
  f = fmemopen(buf, sizeof buf - 1, "w");
  fl_solver_options_json(s, f);
  fclose(f);
  cJSON *j = cJSON_Parse(buf);
  ASSERT(j != NULL);
  ASSERT(strcmp(cJSON_GetObjectItem(j, "max_iter")->valuestring, "100") == 0);
  ASSERT(strcmp(cJSON_GetObjectItem(j, "norm")->valuestring, "fclib") == 0);
  ASSERT(strcmp(cJSON_GetObjectItem(j, "local")->valuestring, "nf") == 0);
  ASSERT(strcmp(cJSON_GetObjectItem(j, "monitor")->valuestring, "csv:a\"b.csv") == 0);
  ASSERT_NEAR(atof(cJSON_GetObjectItem(j, "omega")->valuestring), 1.25, 0);
  cJSON_Delete(j);
  fl_solver_destroy(s);
  return 0;
}


//---- the iteration contract and the stopping rules ----

/* runs a fake solver on the local problem; *out_s stays alive for inspection */
static int fake_run(const char *const *opts, fl_solver **out_s, fl_result *res, double *g) {
  static fl_problem *p;
  if (!p) p = local_problem();
  if (!p) return FL_ERR_NOMEM;
  FL_TRY(make("fake", p, opts, out_s));
  return fl_solver_solve(*out_s, p, NULL, g, res);
}


FL_TEST(stop_atol) {
  // e_k = 2^-k <= 1e-3 first at k = 10
  fl_solver *s;
  fl_result res;
  double g[3];
  ASSERT_OK(fake_run((const char *const[]){"abs_tol=1e-3", NULL}, &s, &res, g));
  ASSERT_EQ(res.reason, FL_CONVERGED_ATOL);
  ASSERT_EQ(res.iters, 10);
  ASSERT_NEAR(res.error, ldexp(1.0, -10), 0);
  if (check_history(s, &res)) return 1;
  const fl_iter_stat *h = fl_solver_history(s, NULL);
  for (int k = 0; k <= 10; k++) ASSERT(isfinite(h[k].merit)); /* error_every = 1 */
  ASSERT(res.solve_s >= 0 && res.monitor_s >= 0);
  fl_solver_destroy(s);
  return 0;
}


FL_TEST(stop_rtol_exact_nan_maxiter) {
  fl_solver *s;
  fl_result res;
  double g[3];
  // rel_tol 0.25 of e0 = 4: e_2 = 1 <= 0.25 * 4
  ASSERT_OK(fake_run((const char *const[]){"e0=4", "abs_tol=0", "rel_tol=0.25", NULL}, &s,
                     &res, g));
  ASSERT_EQ(res.reason, FL_CONVERGED_RTOL);
  ASSERT_EQ(res.iters, 2);
  if (check_history(s, &res)) return 1;
  fl_solver_destroy(s);
  // the guess already meets abs_tol
  ASSERT_OK(fake_run((const char *const[]){"e0=1e-9", NULL}, &s, &res, g));
  ASSERT_EQ(res.reason, FL_CONVERGED_EXACT);
  ASSERT_EQ(res.iters, 0);
  if (check_history(s, &res)) return 1;
  fl_solver_destroy(s);
  // NaN at iteration 3
  ASSERT_OK(fake_run((const char *const[]){"nan_at=3", NULL}, &s, &res, g));
  ASSERT_EQ(res.reason, FL_DIVERGED_NAN);
  ASSERT_EQ(res.iters, 3);
  if (check_history(s, &res)) return 1;
  fl_solver_destroy(s);
  // budget exhausted: an honest negative reason with the final residual
  ASSERT_OK(fake_run((const char *const[]){"max_iter=5", "abs_tol=0", NULL}, &s, &res, g));
  ASSERT_EQ(res.reason, FL_DIVERGED_MAX_ITER);
  ASSERT_EQ(res.iters, 5);
  ASSERT_NEAR(res.error, 1.0 / 32, 0);
  if (check_history(s, &res)) return 1;
  fl_solver_destroy(s);
  // max_iter = 0: only the guess
  ASSERT_OK(fake_run((const char *const[]){"max_iter=0", NULL}, &s, &res, g));
  ASSERT_EQ(res.reason, FL_DIVERGED_MAX_ITER);
  ASSERT_EQ(res.iters, 0);
  fl_solver_destroy(s);
  return 0;
}


FL_TEST(never_stop) {
  // tolerances are ignored and the whole budget runs
  fl_solver *s;
  fl_result res;
  double g[3];
  ASSERT_OK(fake_run((const char *const[]){"e0=1e-12", "max_iter=6", "never_stop=true", NULL},
                     &s, &res, g));
  ASSERT_EQ(res.reason, FL_STOPPED_ITS);
  ASSERT_EQ(res.iters, 6);
  if (check_history(s, &res)) return 1;
  fl_solver_destroy(s);
  return 0;
}


FL_TEST(error_every) {
  // metrics at 0, 3, 6 and on the returned iterate (7), NaN elsewhere
  fl_solver *s;
  fl_result res;
  double g[3];
  ASSERT_OK(fake_run((const char *const[]){"max_iter=7", "never_stop=1", "error_every=3", NULL},
                     &s, &res, g));
  const fl_iter_stat *h = fl_solver_history(s, NULL);
  for (int k = 0; k <= 7; k++) {
    int want = k % 3 == 0 || k == 7;
    ASSERT_EQ(isfinite(h[k].merit) ? 1 : 0, want);
  }
  // the final metrics are those of the returned gamma (0 here): natmap of W = I, q, gamma = 0
  fl_metrics m;
  fl_problem *p = local_problem();
  ASSERT_OK(fl_problem_metrics(p, NULL, g, FL_NORM_FCLIB, &m));
  ASSERT_NEAR(fl_solver_final_metrics(s)->natmap, m.natmap, 0);
  ASSERT_NEAR(h[7].merit, m.natmap, 0);
  fl_problem_free(p);
  fl_solver_destroy(s);
  return 0;
}


FL_TEST(history_truncation) {
  // 200001 records into a capped history: the overflow is counted and the newest kept last
  fl_solver *s;
  fl_result res;
  double g[3];
  ASSERT_OK(fake_run((const char *const[]){"max_iter=200000", "never_stop=1", "rate=1",
                                           "error_every=0", NULL},
                     &s, &res, g));
  ASSERT_EQ(res.reason, FL_STOPPED_ITS);
  ASSERT_EQ(res.iters, 200000);
  ASSERT(res.history_lost > 0);
  ASSERT_EQ(res.history_len + res.history_lost, res.iters + 1);
  int n;
  const fl_iter_stat *h = fl_solver_history(s, &n);
  ASSERT_EQ(h[n - 1].iter, 200000);
  for (int k = 1; k < n; k++) ASSERT(h[k].iter > h[k - 1].iter);
  fl_solver_destroy(s);
  return 0;
}


FL_TEST(time_limit) {
  // a residual that never decreases, an unbounded budget and 20 ms of solver time
  fl_solver *s;
  fl_result res;
  double g[3];
  ASSERT_OK(fake_run((const char *const[]){"max_iter=2000000000", "rate=1", "time_limit=0.02",
                                           "error_every=0", NULL},
                     &s, &res, g));
  ASSERT_EQ(res.reason, FL_DIVERGED_TIME_LIMIT);
  int n;
  const fl_iter_stat *h = fl_solver_history(s, &n);
  ASSERT_EQ(h[n - 1].iter, res.iters);
  ASSERT(h[n - 1].t > 0.02);
  ASSERT_EQ(res.history_len + res.history_lost, res.iters + 1);
  fl_solver_destroy(s);
  return 0;
}


//---- monitors ----

FL_TEST(monitor_csv) {
  const char *path = "test_solver_monitor.csv";
  remove(path);
  fl_solver *s;
  fl_result res;
  double g[3];
  ASSERT_OK(fake_run((const char *const[]){"abs_tol=1e-2", "monitor=csv:test_solver_monitor.csv",
                                           NULL},
                     &s, &res, g));
  ASSERT_EQ(res.iters, 7);
  FILE *f = fopen(path, "r");
  ASSERT(f != NULL);
  char line[1024];
  ASSERT(fgets(line, sizeof line, f) != NULL);
  ASSERT(strncmp(line, "iter,t,error,merit", 18) == 0);
  int rows = 0;
  while (fgets(line, sizeof line, f)) {
    int it;
    double t, e;
    ASSERT_EQ(sscanf(line, "%d,%lf,%lf", &it, &t, &e), 3);
    ASSERT_EQ(it, rows);
    ASSERT_NEAR(e, ldexp(1.0, -rows), 0);
    rows++;
  }
  fclose(f);
  ASSERT_EQ(rows, res.iters + 1);
  remove(path);
  fl_solver_destroy(s);
  // a path that cannot be opened is an I/O error naming it
  ASSERT_EQ(fake_run((const char *const[]){"monitor=csv:/nonexistent-dir/x.csv", NULL}, &s, &res,
                     g),
            FL_ERR_IO);
  ASSERT_STR_CONTAINS(fl_errmsg(), "/nonexistent-dir/x.csv");
  fl_solver_destroy(s);
  return 0;
}


typedef struct mon_ctx {
  int calls, fail_at;
  double busy;
  fl_solver *self;
  int set_rc;
} mon_ctx;

static int mon_fn(const fl_solver *s, const fl_iter_stat *st, void *ctx) {
  mon_ctx *c = ctx;
  c->calls++;
  if (c->busy > 0) {
    double t0 = fl_time_now();
    while (fl_time_now() - t0 < c->busy) {
    }
  }
  // options cannot change during a solve
  if (c->self) c->set_rc = fl_solver_set_option(c->self, "max_iter", "3");
  if (fl_solver_problem(s) == NULL) return FL_ERR_STATE;
  if (st->iter == c->fail_at) return fl_seterr(FL_ERR_IO, "monitor failed on purpose");
  return 0;
}


FL_TEST(monitor_user_and_timing) {
  fl_problem *p = local_problem();
  fl_solver *s;
  mon_ctx c = {0, -1, 1e-3, NULL, 0};
  ASSERT_OK(make("fake", p, (const char *const[]){"abs_tol=1e-3", NULL}, &s));
  c.self = s;
  ASSERT_OK(fl_solver_monitor_add(s, mon_fn, &c, NULL));
  double g[3];
  fl_result res;
  double t0 = fl_time_now();
  ASSERT_OK(fl_solver_solve(s, p, NULL, g, &res));
  double wall = fl_time_now() - t0;
  ASSERT_EQ(c.calls, 11);
  ASSERT_EQ(c.set_rc, FL_ERR_STATE);
  // 11 calls of 1 ms are monitor time, kept out of the solver time
  ASSERT(res.monitor_s >= 11e-3);
  ASSERT_LE(res.solve_s + res.monitor_s, wall);
  const fl_iter_stat *h = fl_solver_history(s, NULL);
  ASSERT_LE(h[res.iters].t, res.solve_s);
  // a failing monitor aborts the solve with its error
  c.fail_at = 2;
  c.busy = 0;
  c.calls = 0;
  ASSERT_EQ(fl_solver_solve(s, p, NULL, g, &res), FL_ERR_IO);
  ASSERT_EQ(c.calls, 3);
  fl_solver_destroy(s);
  fl_problem_free(p);
  return 0;
}


//---- state and capabilities ----

FL_TEST(state_errors) {
  fl_problem *p = local_problem(), *p2 = local_problem();
  fl_solver *s;
  double g[3];
  fl_result res;
  ASSERT_OK(make("pgs", NULL, NULL, &s));
  ASSERT_EQ(fl_solver_solve(s, p, NULL, g, &res), FL_ERR_STATE); /* no setup */
  ASSERT_OK(fl_solver_setup(s, p));
  ASSERT_EQ(fl_solver_solve(s, p2, NULL, g, &res), FL_ERR_STATE); /* another problem */
  ASSERT_OK(fl_solver_set_option(s, "omega", "1.1"));
  ASSERT_EQ(fl_solver_solve(s, p, NULL, g, &res), FL_ERR_STATE); /* options changed */
  ASSERT_OK(fl_solver_setup(s, p));
  ASSERT_OK(fl_solver_solve(s, p, NULL, g, &res));
  ASSERT(res.reason > 0);
  // a repeated setup on another problem works
  ASSERT_OK(fl_solver_setup(s, p2));
  ASSERT_OK(fl_solver_solve(s, p2, NULL, g, &res));
  ASSERT(res.reason > 0);
  fl_solver_destroy(s);
  fl_problem_free(p);
  fl_problem_free(p2);
  return 0;
}


FL_TEST(capabilities) {
  fl_problem *loc = local_problem(), *rigid, *soft, *pend;
  ASSERT_OK(fl_problem_create_example("box_on_plane", &rigid));
  ASSERT_OK(fl_problem_create_example("box_on_plane_compliant", &soft));
  ASSERT_OK(fl_problem_create_example("pendulum_bilateral", &pend));
  fl_solver *s;
  // a local problem is lifted for a solver that needs A and J (docs/lift.md); the lift is
  // rigid, so a compliant-only solver still refuses it
  ASSERT_OK(make("fake-aj", loc, NULL, &s));
  fl_lift_info li;
  const fl_problem *lifted = fl_solver_lifted(s, &li);
  ASSERT(lifted != NULL && lifted->kind == FL_PROBLEM_GLOBAL && lifted->nv == 3);
  ASSERT_EQ(li.rank, 3);
  double gam[3];
  fl_result res;
  ASSERT_OK(fl_solver_solve(s, loc, NULL, gam, &res));
  ASSERT(res.reason > 0 && res.lift_s >= 0);
  fl_solver_destroy(s);
  ASSERT_EQ(make("fake-soft", loc, NULL, &s), FL_ERR_UNSUPPORTED);
  ASSERT_STR_CONTAINS(fl_errmsg(), "rigid");
  fl_solver_destroy(s);
  ASSERT_EQ(make("fake-soft", rigid, NULL, &s), FL_ERR_UNSUPPORTED);
  ASSERT_STR_CONTAINS(fl_errmsg(), "rigid");
  fl_solver_destroy(s);
  ASSERT_OK(make("fake-soft", soft, NULL, &s));
  fl_solver_destroy(s);
  ASSERT_OK(make("fake-soft", pend, NULL, &s));
  fl_solver_destroy(s);
  ASSERT_EQ(make("fake-rigid", soft, NULL, &s), FL_ERR_UNSUPPORTED);
  ASSERT_STR_CONTAINS(fl_errmsg(), "compliant");
  fl_solver_destroy(s);
  ASSERT_EQ(make("fake-rigid", pend, NULL, &s), FL_ERR_UNSUPPORTED);
  ASSERT_STR_CONTAINS(fl_errmsg(), "bilateral");
  fl_solver_destroy(s);
  ASSERT_OK(make("fake-aj", rigid, NULL, &s));
  fl_solver_destroy(s);
  fl_problem_free(loc);
  fl_problem_free(rigid);
  fl_problem_free(soft);
  fl_problem_free(pend);
  return 0;
}


FL_TEST(fault_injection) {
  // every allocation of create, setup and solve fails in turn: each failure is FL_ERR_NOMEM
  // (or the solve goes through), never a crash or a leak (checked under ASan)
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example("box_push_slide", &p));
  reg();
  const char *names[2] = {"pgs", "jacobi"};
  for (int sv = 0; sv < 2; sv++) {
    int ok = 0;
    for (long n = 0; n < 400 && !ok; n++) {
      fl_solver *s = NULL;
      double v[6], g[12];
      fl_result res;
      fl_alloc_fail_after(n);
      int rc = fl_solver_create(names[sv], &s);
      if (!rc) rc = fl_solver_set_option(s, "monitor", "");
      if (!rc) rc = fl_solver_setup(s, p);
      if (!rc) rc = fl_solver_solve(s, p, v, g, &res);
      fl_alloc_fail_after(-1);
      if (rc && rc != FL_ERR_NOMEM) FL_FAIL_("%s, failure %ld: %d %s", names[sv], n, rc, fl_errmsg());
      if (!rc) {
        ASSERT(res.reason > 0);
        ok = 1;
      }
      fl_solver_destroy(s);
    }
    ASSERT(ok);
  }
  fl_problem_free(p);
  return 0;
}


FL_TEST(lift_fault_injection) {
  // the lift of a local problem for a solver that needs A and J (SAP): every allocation of
  // setup and solve failing in turn gives FL_ERR_NOMEM, never a crash or a leak (ASan)
  fl_problem *p;
  ASSERT_OK(fl_problem_create_example("one_contact_stick", &p));
  reg();
  int ok = 0;
  for (long n = 0; n < 400 && !ok; n++) {
    fl_solver *s = NULL;
    double g[3];
    fl_result res;
    int rc = fl_solver_create("sap", &s);
    fl_alloc_fail_after(n);
    if (!rc) rc = fl_solver_setup(s, p);
    if (!rc) rc = fl_solver_solve(s, p, NULL, g, &res);
    fl_alloc_fail_after(-1);
    if (rc && rc != FL_ERR_NOMEM) FL_FAIL_("sap, failure %ld: %d %s", n, rc, fl_errmsg());
    if (!rc) {
      ASSERT(res.reason > 0);
      ok = 1;
    }
    fl_solver_destroy(s);
  }
  ASSERT(ok);
  fl_problem_free(p);
  return 0;
}


/* A solver whose own residual passes its test is not "converged" when the common merit of what
 * it returns is not finite (here q_n = -1e308 - 1e308 = -inf, as an overflowed file held). */
FL_TEST(no_convergence_with_infinite_merit) {
  fl_problem *p = local_problem();
  ASSERT(p);
  p->q[0] = -1e308;
  p->q[0] -= 1e308;
  fl_solver *s;
  fl_result res;
  double g[3];
  ASSERT_OK(make("fake", p, (const char *const[]){"abs_tol=1e-3", NULL}, &s));
  int rc = fl_solver_solve(s, p, NULL, g, &res);
  ASSERT_OK(rc);
  ASSERT_EQ(res.reason, FL_DIVERGED_NAN);
  fl_solver_destroy(s);
  fl_problem_free(p);
  return 0;
}


/* A problem without rows (nc = 0, nh = 0): admm, prox, ipm and pnewton give the answer of
 * solver.c's fl__solver_answer_empty: v = v*, one record of iteration 0 with error 0, so
 * CONVERGED_EXACT after 0 iterations (global: 6 free dofs, A = 2 I; local: nothing at all). */
FL_TEST(no_rows_answer) {
  static const fl_int ij[6] = {0, 1, 2, 3, 4, 5};
  static const double two[6] = {2, 2, 2, 2, 2, 2};
  fl_problem *pg = NULL, *pl = NULL;
  ASSERT_OK(fl_problem_alloc(FL_PROBLEM_GLOBAL, 6, 0, 0, 0, &pg));
  snprintf(pg->name, sizeof pg->name, "free");
  ASSERT_OK(fl_csr_from_triplets(6, 6, 6, ij, ij, two, &pg->A));
  ASSERT_OK(fl_csr_alloc(0, 6, 0, &pg->J));
  for (int k = 0; k < 6; k++) pg->vstar[k] = 0.25 * (k + 1);
  ASSERT_OK(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 0, 0, 0, &pl));
  snprintf(pl->name, sizeof pl->name, "nothing");
  ASSERT_OK(fl_csr_alloc(0, 0, 0, &pl->W));
  static double q0[1]; // q of no rows: not NULL, as the local solvers ask for W and q
  pl->q = q0;
  const char *names[] = {"admm", "prox", "ipm", "pnewton"};
  for (int n = 0; n < 4; n++) {
    for (int local = 0; local < 2; local++) {
      if (local && n >= 2) continue; // ipm and pnewton need A and J (a local problem is lifted)
      fl_problem *p = local ? pl : pg;
      fl_solver *s;
      fl_result res;
      double v[6] = {9, 9, 9, 9, 9, 9}, g[1] = {7};
      ASSERT_OK(make(names[n], p, NULL, &s));
      ASSERT_OK(fl_solver_solve(s, p, local ? NULL : v, g, &res));
      ASSERT_EQ(res.reason, FL_CONVERGED_EXACT);
      ASSERT_EQ(res.iters, 0);
      ASSERT_EQ(res.history_len, 1);
      ASSERT_EQ(res.error, 0.0);
      ASSERT_EQ(g[0], 7.0);
      for (int k = 0; k < 6 && !local; k++) ASSERT_EQ(v[k], pg->vstar[k]);
      ASSERT_OK(check_history(s, &res));
      fl_solver_destroy(s);
    }
  }
  fl_problem_free(pg);
  fl_problem_free(pl);
  return 0;
}

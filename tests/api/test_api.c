// SPDX-License-Identifier: Apache-2.0
/* test_api.c: libfrictionlab as an outside program sees it (docs/api.md, docs/plugins.md).
 *
 * Built against the public headers alone (build/include/frictionlab/, as installed) and the
 * shared library, never the internals: what compiles here is what a user can write. Cases:
 * the ABI and version, the plug-in loader (the template plug-in solving FCLIB files, every
 * refusal, all-or-nothing registration, the search path, loading twice, a solver table from
 * the program itself), the crash plug-in, and answers (saved in FCLIB's layout, read back by
 * FrictionLab and by libfclib, and scored with the merit the solver printed).
 *
 * Environment (set by CMake): FL_SHARED_DIR (the FCLIB files), FL_BUILD_DIR (plugins/ and
 * test-plugins/ built beside the library), FL_VERSION_EXPECTED.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frictionlab/frictionlab.h"
#include "../fl_test.h"

#ifdef FL_HAVE_LIBFCLIB
#include <fclib.h>
#endif

/* path of a plug-in built in the tree: sub is "plugins" or "test-plugins" */
static const char *plugin(const char *sub, const char *name) {
  static char buf[4][PATH_MAX];
  static int k;
  const char *b = getenv("FL_BUILD_DIR");
  char *out = buf[k++ % 4];
  snprintf(out, PATH_MAX, "%s/%s/%s.so", b ? b : ".", sub, name);
  return out;
}

static const char *fclib(const char *name) {
  static char buf[2][PATH_MAX];
  static int k;
  char *out = buf[k++ % 2];
  snprintf(out, PATH_MAX, "%s/fclib/%s", fl_test_shared_dir(), name);
  return out;
}

static int nsolvers(void) {
  int n = 0;
  for (const char *const *l = fl_solver_list(); *l; l++) n++;
  return n;
}


FL_TEST(abi_and_version) {
  ASSERT_EQ(fl_abi_version(), FL_ABI_VERSION);
  ASSERT_EQ(FL_SOLVER_ABI, FL_ABI_VERSION);
  const char *want = getenv("FL_VERSION_EXPECTED");
  if (want) ASSERT(strcmp(fl_version(), want) == 0);
  return 0;
}


/* The template plug-in: loaded, listed with its origin and options, and solving FCLIB files,
 * local (W, q) and global (A, J), to a small merit with the library's own metrics. */
FL_TEST(template_plugin_solves_fclib) {
  ASSERT_OK(fl_register_all());
  int n0 = nsolvers();
  ASSERT_EQ(fl_plugin_load(plugin("plugins", "damped_jacobi")), 1);
  ASSERT_EQ(nsolvers(), n0 + 1);
  const fl_solver_ops *ops = fl_solver_find("damped-jacobi");
  ASSERT(ops != NULL);
  char real[PATH_MAX];
  ASSERT(realpath(plugin("plugins", "damped_jacobi"), real) != NULL);
  ASSERT(fl_solver_ops_origin(ops) && strcmp(fl_solver_ops_origin(ops), real) == 0);
  ASSERT(fl_solver_ops_origin(fl_solver_find("pgs")) == NULL);
  ASSERT_EQ(fl_plugin_count(), 1);
  ASSERT(strcmp(fl_plugin_path(0), real) == 0);
  const fl_option_desc *t = fl_solver_ops_options(ops);
  ASSERT(t && strcmp(t[0].key, "omega") == 0 && t[0].dflt == 0.5);

  // a local and a global file on which damped Jacobi converges (on most FCLIB files it is
  // slow, and on some it diverges: a plug-in's honest result, not a crash)
  const char *files[2] = {"converted_from_siconos_dat/Rover4396.hdf5",
                          "Box_Stacks-i0035-31-0.hdf5"};
  for (int f = 0; f < 2; f++) {
    fl_problem *p = NULL;
    if (fl_problem_load_fclib(fclib(files[f]), &p) < 0) SKIP("%s", fl_errmsg());
    ASSERT_EQ(p->kind, f == 0 ? FL_PROBLEM_LOCAL : FL_PROBLEM_GLOBAL);
    fl_solver *s = NULL;
    ASSERT_OK(fl_solver_create("damped-jacobi", &s));
    ASSERT_OK(fl_solver_set_options(s, "damped-jacobi.omega=0.8,max_iter=5000,abs_tol=1e-9"));
    char buf[64];
    ASSERT_OK(fl_solver_get_option(s, "omega", buf, sizeof buf));
    ASSERT(strtod(buf, NULL) == 0.8);
    ASSERT_EQ(fl_solver_set_option(s, "omegaa", "1"), FL_ERR_UNKNOWN_OPTION);
    ASSERT_STR_CONTAINS(fl_errmsg(), "did you mean 'omega'");
    ASSERT_EQ(fl_solver_set_option(s, "omega", "2"), FL_ERR_OPTION_RANGE);
    ASSERT_OK(fl_solver_setup(s, p));
    double *v = calloc((size_t)p->nv + 1, sizeof *v), *g = calloc(3 * (size_t)p->nc + p->nh + 1, 8);
    fl_result res;
    ASSERT_OK(fl_solver_solve(s, p, p->nv ? v : NULL, g, &res));
    int nh = 0;
    const fl_iter_stat *h = fl_solver_history(s, &nh);
    fprintf(stderr, "%s: damped-jacobi %d iterations, %s, merit %.3g -> %.3g\n", p->name,
            res.iters, fl_reason_name(res.reason), h[0].merit, h[nh - 1].merit);
    ASSERT(res.reason > 0);
    ASSERT(h[nh - 1].merit < 1e-6);
    ASSERT(h[nh - 1].merit < 1e-3 * h[0].merit);
    // the answer scored from outside gives the merit the solve recorded
    fl_score sc;
    ASSERT_OK(fl_solution_score(p, p->nv ? v : NULL, g, FL_NORM_FCLIB, 1e-8, &sc));
    ASSERT_NEAR(sc.merit, h[nh - 1].merit, 1e-15 + 1e-12 * sc.merit);
    free(v);
    free(g);
    fl_solver_destroy(s);
    fl_problem_free(p);
  }
  return 0;
}


/* Each broken plug-in is refused with a message naming the file and the fault, and adds nothing. */
FL_TEST(plugin_refusals) {
  ASSERT_OK(fl_register_all());
  int n0 = nsolvers();
  struct {
    const char *name;
    int code;
    const char *says;
  } cases[] = {
    {"bad_abi", FL_ERR_UNSUPPORTED, "built for FrictionLab ABI 2; this libfrictionlab"},
    {"no_entry", FL_ERR_FORMAT, "no function fl_plugin_register: not a FrictionLab plug-in"},
    {"missing_symbol", FL_ERR_IO, "fl_no_such_function"},
    {"dup_name", FL_ERR_INVAL, "solver pgs is already registered (built in)"},
    {"bad_table", FL_ERR_INVAL, "option x at offset 8 (8 bytes) lies outside"},
    {"reg_fail", FL_ERR_INVAL, "its registration failed: no licence key found"},
    {"half", FL_ERR_INVAL, "solver name 'half bad': character ' '"},
    {"none", FL_ERR_INVAL, "registered no solver"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const char *path = plugin("test-plugins", cases[k].name);
    int rc = fl_plugin_load(path);
    fprintf(stderr, "%s: %d %s\n", cases[k].name, rc, fl_errmsg());
    ASSERT_EQ(rc, cases[k].code);
    ASSERT_STR_CONTAINS(fl_errmsg(), cases[k].says);
    ASSERT_STR_CONTAINS(fl_errmsg(), path);
    ASSERT_EQ(nsolvers(), n0);
    ASSERT_EQ(fl_plugin_count(), 0);
  }
  ASSERT(fl_solver_find("half-good") == NULL); // all or nothing
  ASSERT_EQ(fl_plugin_load("/nonexistent/x.so"), FL_ERR_IO);
  ASSERT_STR_CONTAINS(fl_errmsg(), "/nonexistent/x.so");
  // a file that is not a shared object
  ASSERT_EQ(fl_plugin_load(fclib("CubeH8.hdf5")), FL_ERR_IO);
  ASSERT_STR_CONTAINS(fl_errmsg(), "cannot be loaded");
  return 0;
}


/* Two solvers from one plug-in; the same file again (also through a link) adds nothing. */
FL_TEST(plugin_twice_and_two_solvers) {
  ASSERT_OK(fl_register_all());
  int n0 = nsolvers();
  ASSERT_EQ(fl_plugin_load(plugin("test-plugins", "two")), 2);
  ASSERT(fl_solver_find("twin-a") && fl_solver_find("twin-b"));
  ASSERT_EQ(nsolvers(), n0 + 2);
  ASSERT_EQ(fl_plugin_load(plugin("test-plugins", "two")), 0);
  char link[] = "/tmp/test_api_link_XXXXXX";
  int fd = mkstemp(link);
  ASSERT(fd >= 0);
  close(fd);
  unlink(link);
  ASSERT(symlink(plugin("test-plugins", "two"), link) == 0);
  int rc = fl_plugin_load(link);
  unlink(link);
  ASSERT_EQ(rc, 0);
  ASSERT_EQ(nsolvers(), n0 + 2);
  ASSERT_EQ(fl_plugin_count(), 1);
  // a plug-in's solver may be removed and its name used again; a built-in one may not
  ASSERT_EQ(fl_solver_unregister("pgs"), FL_ERR_INVAL);
  ASSERT_OK(fl_solver_unregister("twin-a"));
  ASSERT(fl_solver_find("twin-a") == NULL);
  ASSERT_EQ(fl_solver_unregister("twin-a"), FL_ERR_UNKNOWN_SOLVER);
  return 0;
}


/* FL_PLUGIN_PATH: folders in order, missing ones skipped; the installed folder is listed. */
FL_TEST(plugin_search_path) {
  ASSERT_OK(fl_register_all());
  char env[2 * PATH_MAX];
  const char *b = getenv("FL_BUILD_DIR");
  snprintf(env, sizeof env, "/nonexistent-folder:%s/plugins", b ? b : ".");
  setenv("FL_PLUGIN_PATH", env, 1);
  char buf[4 * PATH_MAX];
  fl_plugin_search_path(buf, sizeof buf);
  ASSERT_STR_CONTAINS(buf, env);
  ASSERT_STR_CONTAINS(buf, "/frictionlab/plugins");
  int n = fl_plugin_load_search_path();
  ASSERT(n >= 1);
  ASSERT(fl_solver_find("damped-jacobi") != NULL);
  ASSERT_EQ(fl_plugin_load_search_path(), 0); // already loaded
  // a folder with a refused plug-in stops with its error
  snprintf(env, sizeof env, "%s/test-plugins", b ? b : ".");
  ASSERT(fl_plugin_load_dir(env) < 0);
  ASSERT_STR_CONTAINS(fl_errmsg(), "test-plugins/bad_abi.so");
  ASSERT_EQ(fl_plugin_load_dir("/nonexistent-folder"), FL_ERR_IO);
  return 0;
}


/* A solver table from the program itself: sizes of older and newer headers, and a check of
 * its option table. */
static int noop_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  st.error = 0;
  fl_solver_set_iterate(s, v, gamma);
  fl_solver_record(s, &st);
  return fl_solver_exit_code(s);
}

FL_TEST(register_ops_from_program) {
  ASSERT_OK(fl_register_all());
  fl_solver_ops o;
  memset(&o, 0, sizeof o);
  o.abi_version = FL_SOLVER_ABI;
  o.name = "mine";
  o.caps = FL_CAP_RIGID | FL_CAP_LOCAL;
  o.solve = noop_solve;
  ASSERT_EQ(fl_solver_register_ops(&o, sizeof o + 8, "test"), FL_ERR_UNSUPPORTED);
  ASSERT_STR_CONTAINS(fl_errmsg(), "newer FrictionLab");
  ASSERT_EQ(fl_solver_register_ops(&o, sizeof o - sizeof(char *), "test"), FL_ERR_UNSUPPORTED);
  o.abi_version = FL_SOLVER_ABI + 7;
  ASSERT_EQ(fl_solver_register_ops(&o, sizeof o, "test"), FL_ERR_UNSUPPORTED);
  o.abi_version = FL_SOLVER_ABI;
  o.solve = NULL;
  ASSERT_EQ(fl_solver_register_ops(&o, sizeof o, "test"), FL_ERR_INVAL);
  o.solve = noop_solve;
  o.name = "mine.x";
  ASSERT_EQ(fl_solver_register_ops(&o, sizeof o, "test"), FL_ERR_INVAL);
  o.name = "mine";
  static const fl_option_desc bad_enum[] = {{"k", FL_OPT_ENUM, 0, 0, 0, 2, "a|b", "h"},
                                            {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}};
  o.options = bad_enum;
  o.opts_size = sizeof(int);
  ASSERT_EQ(fl_solver_register_ops(&o, sizeof o, "test"), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "enum option k");
  o.options = NULL;
  o.opts_size = 0;
  ASSERT_OK(fl_solver_register_ops(&o, sizeof o, "test"));
  ASSERT(fl_solver_find("mine") != &o); // a copy
  ASSERT(strcmp(fl_solver_ops_origin(fl_solver_find("mine")), "test") == 0);
  ASSERT_EQ(fl_solver_register_ops(&o, sizeof o, "test"), FL_ERR_INVAL); // twice
  o.name = "pgs";
  ASSERT_EQ(fl_solver_register_ops(&o, sizeof o, "test"), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "built in");
  return 0;
}


/* The crash plug-in fails as it says: an error is an error, a segfault kills its process
 * (here a child: the harness's guard does the same per pair). */
FL_TEST(crash_plugin) {
  ASSERT_OK(fl_register_all());
  ASSERT_EQ(fl_plugin_load(plugin("test-plugins", "crash")), 1);
  fl_problem *p = NULL;
  ASSERT_OK(fl_problem_create_example("box_on_plane", &p));
  double v[64] = {0}, g[64] = {0};
  ASSERT(p->nv <= 64 && fl_problem_nrows(p) <= 64);
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("crash", &s));
  ASSERT_OK(fl_solver_set_option(s, "mode", "error"));
  ASSERT_OK(fl_solver_setup(s, p));
  fl_result res;
  ASSERT_EQ(fl_solver_solve(s, p, v, g, &res), FL_ERR_LIBRARY);
  ASSERT_STR_CONTAINS(fl_errmsg(), "failing on purpose");
  ASSERT_OK(fl_solver_set_option(s, "mode", "segv"));
  ASSERT_OK(fl_solver_setup(s, p));
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGSEGV, SIG_DFL);
    fl_solver_solve(s, p, v, g, &res);
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT(WIFSIGNALED(st));
  fprintf(stderr, "crash: the child ended with signal %d (%s)\n", WTERMSIG(st),
          strsignal(WTERMSIG(st)));
  fl_solver_destroy(s);
  fl_problem_free(p);
  return 0;
}


/* Answers: a solve's answer saved in FCLIB's layout (a copy of the problem's file with
 * /solution), read back exactly, read by libfclib, and scored with the merit the solve gave;
 * what is refused. */
FL_TEST(solution_save_read_score) {
  ASSERT_OK(fl_register_all());
  const char *files[2] = {"Box_Stacks-i0122-82-5.hdf5",
                          "converted_from_siconos_dat/Capsules-i101-404.hdf5"};
  for (int f = 0; f < 2; f++) {
    const char *src = fclib(files[f]);
    fl_problem *p = NULL;
    if (fl_problem_load_fclib(src, &p) < 0) SKIP("%s", fl_errmsg());
    fl_int nr = fl_problem_nrows(p);
    double *v = calloc((size_t)p->nv + 1, 8), *g = calloc((size_t)nr + 1, 8);
    double *v2 = calloc((size_t)p->nv + 1, 8), *g2 = calloc((size_t)nr + 1, 8);
    fl_solver *s = NULL;
    ASSERT_OK(fl_solver_create("nsn", &s));
    ASSERT_OK(fl_solver_set_options(s, "error_every=1,norm=fclib"));
    ASSERT_OK(fl_solver_setup(s, p));
    fl_result res;
    ASSERT_OK(fl_solver_solve(s, p, p->nv ? v : NULL, g, &res));
    int nh;
    const fl_iter_stat *h = fl_solver_history(s, &nh);
    double merit = h[nh - 1].merit;

    char out[] = "/tmp/test_api_sol_XXXXXX";
    int fd = mkstemp(out);
    ASSERT(fd >= 0);
    close(fd);
    ASSERT_OK(fl_solution_save(p, src, p->nv ? v : NULL, g, out));
    int have_v = -1;
    ASSERT_OK(fl_solution_read(p, out, v2, g2, &have_v));
    ASSERT_EQ(have_v, p->kind == FL_PROBLEM_GLOBAL);
    for (fl_int k = 0; k < nr; k++) ASSERT(g2[k] == g[k]);
    for (fl_int k = 0; k < p->nv; k++) ASSERT(v2[k] == v[k]);
    // the copy keeps the problem: it loads to the same sizes and the same answer scores alike
    fl_problem *q = NULL;
    ASSERT_OK(fl_problem_load_fclib(out, &q));
    ASSERT_EQ(q->nv, p->nv);
    ASSERT_EQ(q->nc, p->nc);
    fl_score sc, sq;
    ASSERT_OK(fl_solution_score_file(p, out, FL_NORM_FCLIB, 1e-8, &sc));
    ASSERT_OK(fl_solution_score_file(q, out, FL_NORM_FCLIB, 1e-8, &sq));
    fprintf(stderr, "%s: nsn merit %.17g, %s; scored %.17g, %s\n", p->name, merit,
            fl_reason_name(res.reason), sc.merit, fl_reason_name(sc.reason));
    ASSERT(sc.merit == merit); // the same number, not a near one
    ASSERT(sq.merit == merit);
    ASSERT_EQ(sc.reason, merit <= 1e-8 ? FL_CONVERGED_EXACT : FL_DIVERGED_MAX_ITER);
    ASSERT_EQ(sc.v_from_gamma, 0);
#ifdef FL_HAVE_LIBFCLIB
    // libfclib reads the answer from the file as Siconos does
    struct fclib_solution *fs = fclib_read_solution(out);
    ASSERT(fs != NULL);
    for (fl_int k = 0; k < 3 * p->nc; k++) ASSERT(fs->r[k] == g[k]);
    for (fl_int k = 0; k < p->nv; k++) ASSERT(fs->v[k] == v[k]);
    fclib_delete_solutions(fs, 1);
#endif
    // a global answer without v: v from gamma (the velocities nsn's impulses give)
    if (p->kind == FL_PROBLEM_GLOBAL) {
      ASSERT_OK(fl_solution_score(p, NULL, g, FL_NORM_FCLIB, 1e-8, &sc));
      ASSERT_EQ(sc.v_from_gamma, 1);
      ASSERT(sc.merit < 1e-6);
    }
    // the guess is not an answer; a NaN is a diverged one
    memset(g2, 0, (size_t)nr * 8);
    ASSERT_OK(fl_solution_score(p, p->nv ? p->vstar : NULL, g2, FL_NORM_FCLIB, 1e-8, &sc));
    ASSERT_EQ(sc.reason, FL_DIVERGED_MAX_ITER);
    ASSERT(sc.merit > 1e-3);
    g2[0] = NAN;
    ASSERT_OK(fl_solution_score(p, p->nv ? v : NULL, g2, FL_NORM_FCLIB, 1e-8, &sc));
    ASSERT_EQ(sc.reason, FL_DIVERGED_NAN);
    ASSERT_EQ(fl_solution_save(p, src, p->nv ? v : NULL, g2, out), FL_ERR_INVAL);
    ASSERT_STR_CONTAINS(fl_errmsg(), "gamma[0] = nan");
    ASSERT_EQ(fl_solution_score(p, v, g, FL_NORM_FCLIB, -1, &sc), FL_ERR_INVAL);
    // a file without an answer; another problem's file is refused by size
    ASSERT_OK(fl_problem_save_fclib(p, out, NULL, NULL, NULL));
    ASSERT_EQ(fl_solution_read(p, out, v2, g2, NULL), FL_ERR_NOT_FOUND);
    ASSERT_EQ(fl_solution_save(p, fclib("CubeH8.hdf5"), p->nv ? v : NULL, g, out), FL_ERR_INVAL);
    ASSERT_STR_CONTAINS(fl_errmsg(), "dofs and");
    unlink(out);
    fl_problem_free(q);
    fl_solver_destroy(s);
    free(v), free(g), free(v2), free(g2);
    fl_problem_free(p);
  }
  return 0;
}


/* An answer of a problem that came from no file (a built-in example): the file holds the
 * problem as FrictionLab writes it, and scores the same. */
FL_TEST(solution_of_an_example) {
  ASSERT_OK(fl_register_all());
  fl_problem *p = NULL;
  ASSERT_OK(fl_problem_create_example("box_on_plane", &p));
  fl_int nr = fl_problem_nrows(p);
  double *v = calloc((size_t)p->nv + 1, 8), *g = calloc((size_t)nr + 1, 8);
  ASSERT_OK(fl_example_solution("box_on_plane", v, g));
  fl_score sc;
  ASSERT_OK(fl_solution_score(p, v, g, FL_NORM_FCLIB, 1e-8, &sc));
  ASSERT_EQ(sc.reason, FL_CONVERGED_EXACT);
  ASSERT(sc.merit < 1e-12);
  char out[] = "/tmp/test_api_ex_XXXXXX";
  int fd = mkstemp(out);
  ASSERT(fd >= 0);
  close(fd);
  ASSERT_OK(fl_solution_save(p, NULL, v, g, out));
  fl_problem *q = NULL;
  ASSERT_OK(fl_problem_load_fclib(out, &q));
  fl_score sq;
  ASSERT_OK(fl_solution_score_file(q, out, FL_NORM_FCLIB, 1e-8, &sq));
  ASSERT_EQ(sq.reason, FL_CONVERGED_EXACT);
  ASSERT(sq.merit < 1e-12);
  unlink(out);
  fl_problem_free(q);
  fl_problem_free(p);
  free(v), free(g);
  return 0;
}


/* A plug-in loaded before fl_register_all still cannot take a built-in solver's name. */
FL_TEST(plugin_first_cannot_shadow_builtin) {
  ASSERT_EQ(fl_plugin_load(plugin("test-plugins", "dup_name")), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "solver pgs is already registered (built in)");
  ASSERT(fl_solver_ops_origin(fl_solver_find("pgs")) == NULL);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
/* bad_plugin.c: plug-ins the loader must refuse, one per compile definition (tests/api/test_api.c,
 * built by CMakeLists.txt into build/test-plugins/):
 *   BAD_ABI         declares an ABI version one above the library's
 *   NO_ENTRY        exports no fl_plugin_register
 *   MISSING_SYMBOL  needs a function the library does not have
 *   DUP_NAME        adds a solver named "pgs"
 *   BAD_TABLE       an option outside its options struct
 *   REG_FAIL        its registration returns an error
 *   HALF            adds a good solver, then a bad one: neither may be registered
 *   NONE            adds no solver
 *   TWO             (good) adds "twin-a" and "twin-b"
 */
#include <stddef.h>

#include "frictionlab/frictionlab.h"

typedef struct tiny_opts {
  double x;
} tiny_opts;

__attribute__((unused)) static const fl_option_desc tiny_table[] = {
  {"x", FL_OPT_REAL, offsetof(tiny_opts, x), 0, 1, 0.5, NULL, "a number"},
  {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}};
__attribute__((unused)) static const fl_option_desc outside_table[] = {
  {"x", FL_OPT_REAL, sizeof(tiny_opts), 0, 1, 0.5, NULL, "past the end"},
  {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}};

/* converges at once: gamma = 0 on a problem whose answer it is not does not matter here */
__attribute__((unused)) static int tiny_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  st.error = 0;
  fl_solver_set_iterate(s, v, gamma);
  fl_solver_record(s, &st);
  return fl_solver_exit_code(s);
}

#define TINY(var, nm, table)                                                          \
  static const fl_solver_ops var = {.abi_version = FL_SOLVER_ABI, .name = nm,         \
                                    .summary = "test", .opts_size = sizeof(tiny_opts), \
                                    .options = table, .caps = FL_CAP_RIGID | FL_CAP_LOCAL, \
                                    .solve = tiny_solve}

#if defined(BAD_ABI)
TINY(ops, "bad-abi", tiny_table);
FL_PLUGIN_EXPORT int fl_plugin_register(fl_plugin *pl, int *abi) {
  *abi = FL_ABI_VERSION + 1;
  return pl ? fl_plugin_add_solver(pl, &ops) : FL_OK;
}
#elif defined(NO_ENTRY)
FL_PLUGIN_EXPORT int fl_plugin_init(void);
FL_PLUGIN_EXPORT int fl_plugin_init(void) { return 0; }
#elif defined(MISSING_SYMBOL)
int fl_no_such_function(void);
TINY(ops, "missing-symbol", tiny_table);
static int add(fl_plugin *pl) { return fl_no_such_function() + fl_plugin_add_solver(pl, &ops); }
FL_PLUGIN_REGISTER(add)
#elif defined(DUP_NAME)
TINY(ops, "pgs", tiny_table);
static int add(fl_plugin *pl) { return fl_plugin_add_solver(pl, &ops); }
FL_PLUGIN_REGISTER(add)
#elif defined(BAD_TABLE)
TINY(ops, "bad-table", outside_table);
static int add(fl_plugin *pl) { return fl_plugin_add_solver(pl, &ops); }
FL_PLUGIN_REGISTER(add)
#elif defined(REG_FAIL)
static int add(fl_plugin *pl) { return fl_seterr(FL_ERR_INVAL, "no licence key found"); }
FL_PLUGIN_REGISTER(add)
#elif defined(HALF)
TINY(good, "half-good", tiny_table);
TINY(bad, "half bad", tiny_table);
static int add(fl_plugin *pl) {
  FL_TRY(fl_plugin_add_solver(pl, &good));
  return fl_plugin_add_solver(pl, &bad);
}
FL_PLUGIN_REGISTER(add)
#elif defined(NONE)
static int add(fl_plugin *pl) { return FL_OK; }
FL_PLUGIN_REGISTER(add)
#elif defined(TWO)
TINY(a, "twin-a", tiny_table);
TINY(b, "twin-b", NULL);
static int add(fl_plugin *pl) {
  FL_TRY(fl_plugin_add_solver(pl, &a));
  return fl_plugin_add_solver(pl, &b);
}
FL_PLUGIN_REGISTER(add)
#else
#error "define one of the cases"
#endif

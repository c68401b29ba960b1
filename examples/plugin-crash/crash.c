// SPDX-License-Identifier: Apache-2.0
/* crash.c: a solver plug-in that fails on purpose, "crash" (docs/plugins.md): what a broken
 * research solver does to a campaign. The harness runs plug-in pairs in a guarded child
 * process, so each of these must cost one recorded pair and never the run.
 *
 *   crash.mode = segv    dereferences a null pointer in its first iteration (SIGSEGV)
 *              | abort   calls abort() there (SIGABRT)
 *              | hang    never returns (for --wall-limit)
 *              | error   returns FL_ERR_LIBRARY with a message, the well-behaved failure
 *   crash.at   = solve | setup   where it happens
 */
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include <frictionlab/frictionlab.h>

enum { SEGV, ABORT, HANG, ERROR };

typedef struct crash_opts {
  int mode, at;
} crash_opts;

static const fl_option_desc crash_table[] = {
  {"mode", FL_OPT_ENUM, offsetof(crash_opts, mode), 0, 3, SEGV, "segv|abort|hang|error",
   "how it fails"},
  {"at", FL_OPT_ENUM, offsetof(crash_opts, at), 0, 1, 0, "solve|setup", "where it fails"},
  {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}};

/* volatile: the compiler must not remove the fault */
static volatile int *volatile nowhere;

/* a real invalid read, with SIGSEGV's default action restored first: a sanitizer's handler
 * (or UBSan's null check, kept out of this function) would turn the crash into an exit */
__attribute__((noinline, no_sanitize_address, no_sanitize_undefined)) static int segfault(void) {
  signal(SIGSEGV, SIG_DFL);
  return *nowhere;
}

static int fail(const crash_opts *o) {
  switch (o->mode) {
  case SEGV: return segfault();
  case ABORT: abort();
  case HANG:
    for (;;) pause();
  default: return fl_seterr(FL_ERR_LIBRARY, "crash: failing on purpose (crash.mode=error)");
  }
}

static int crash_setup(fl_solver *s, const fl_problem *p) {
  const crash_opts *o = fl_solver_opts(s);
  return o->at == 1 ? fail(o) : FL_OK;
}

static int crash_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  const crash_opts *o = fl_solver_opts(s);
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  st.error = 1;
  fl_solver_set_iterate(s, v, gamma);
  if (fl_solver_record(s, &st) != 0) return fl_solver_exit_code(s);
  return fail(o);
}

static const fl_solver_ops crash_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "crash",
  .summary = "fails on purpose: segfault, abort, hang or an error (plug-in example)",
  .opts_size = sizeof(crash_opts),
  .options = crash_table,
  .caps = FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_BILATERAL | FL_CAP_LOCAL,
  .setup = crash_setup,
  .solve = crash_solve,
};

static int add_solvers(fl_plugin *pl) { return fl_plugin_add_solver(pl, &crash_ops); }

FL_PLUGIN_REGISTER(add_solvers)

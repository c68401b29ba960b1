// SPDX-License-Identifier: Apache-2.0
/* bench_impl.h: the command line of `frictionlab bench`, shared by its two modes (one fixed
 * problem in bench.c; whole steps, --steps N, in bench_steps.c). Internal to harness/. */
#ifndef FL_BENCH_IMPL_H
#define FL_BENCH_IMPL_H

#include "fl_args.h"

typedef struct fl__bench_cli {
  fl_arg_multi pos;        /* PROBLEM or SCENE */
  fl_arg_multi solver_arg; /* --solver lists */
  fl_arg_multi set_arg, scene_set_arg;
  const char *out, *warmup_solver;
  long warmup, reps, steps; /* steps 0: one fixed problem */
  int force, callgrind, child;
} fl__bench_cli;

/* Whole steps: the command with its arguments parsed (exit status 0, 1 or 2). */
int fl__bench_steps_run(const fl__bench_cli *c);

#endif /* FL_BENCH_IMPL_H */

// SPDX-License-Identifier: Apache-2.0
/* check_impl.h: one case of `frictionlab check` (check_run.c), the record it leaves and the
 * quantities it measures; harness/cli/check.c compares records with the baselines. Internal
 * to harness/. */
#ifndef FL_CHECK_IMPL_H
#define FL_CHECK_IMPL_H
// layer 6: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 6
#error "harness/check/check_impl.h is in harness/, layer 6: a lower layer may not include it (docs/layers.md)"
#endif

#include "../../sim/fl_world.h"

/* the record's quantities, in fl__check_q's order (check_cases.c); MAXSTEPS bounds --steps */
enum { NQ = 11, MAXSTEPS = 1000000, QITERS = 5, QOWN = 8, QSOLVE = 9, QLIMIT = 10 };

enum { MAXLIM = 16 };
typedef struct {
  int status; /* 0 ok, 1 unsupported, 2 error */
  double q[NQ];
  double merit_last; /* the last step's common merit (0 without contact) */
  int nlim;          /* limits of the scene (at most MAXLIM reported) */
  fl_obs_limit lim[MAXLIM];
  int lim_steps[MAXLIM], lim_first[MAXLIM]; /* steps outside each, the first of them */
  double lim_worst[MAXLIM], lim_far[MAXLIM]; /* the value farthest outside, and how far */
} record;


/* what a case runs on: a canonical scene with overrides, or a scene file */
typedef struct {
  const char *scene; /* canonical name, or NULL */
  const char *file;  /* scene file, or NULL */
  const char *set;   /* "k=v,k=v" overrides of the canonical scene, or "" */
} case_input;


/* A scene file's own length: opens it (harness/run/) and reads its duration (s) and dt (s);
 * *own is floor(duration / dt + 0.5), the steps before any cut. Returns FL_OK or the error of
 * opening it (fl_errmsg says). */
int fl__check_file_steps(const char *file, double *own, double *duration, double *dt);


/* Runs one case into *r: `steps` steps of the scene with solver `solver` at options opts
 * ("k=v,k=v" or "") and the nset --set values in set. A solver that cannot take the problem
 * (unsupported) or a step that errs becomes the record's status, not a failure of check
 * itself. Returns FL_OK or the error of creating the scene or the solver, of an option, of a
 * limit of the scene or FL_ERR_NOMEM. */
int fl__check_run_case(const case_input *in, const char *solver, const char *opts, int steps,
                        int nset, char **set, record *r);

#endif /* FL_CHECK_IMPL_H */

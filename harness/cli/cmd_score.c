// SPDX-License-Identifier: Apache-2.0
/* cmd_score.c: `frictionlab score PROBLEM SOLUTION [--norm KIND] [--tol T]`.
 *
 * Scores an answer computed anywhere (solve --save-solution, Siconos, libfclib, h5py: an FCLIB
 * file's /solution) against its problem with fl_solution_score_file, which runs it through the
 * solver spine as a solve that starts and stops at it: the merit is the number `solve` prints
 * for the same answer, and the reason is that of a solve stopped there (docs/usage.md).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fl_args.h"
#include "../fl_harness.h"

#define EXIT_USAGE 2

typedef struct score_cli {
  fl_arg_multi pos;
  const char *norm, *tol;
} score_cli;

#define A(m) offsetof(score_cli, m)
static const fl_arg_desc score_flags[] = {
  {"--norm", FL_ARG_STR, A(norm), 0, 0, "KIND", "fclib",
   "normalization of the merit: fclib, siconos or none (solve's --norm)"},
  {"--tol", FL_ARG_STR, A(tol), 0, 0, "T", "1e-8",
   "the answer is CONVERGED_EXACT when its merit is at most T (the harness's abs_tol)"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef A

static const fl_cmd_spec score_spec = {
  "score", "PROBLEM SOLUTION", 2, offsetof(score_cli, pos),
  "Scores the answer stored in SOLUTION (an FCLIB file with a /solution group: r and l, and v\n"
  "for a global problem, written by `solve --save-solution`, Siconos, libfclib or h5py)\n"
  "against PROBLEM (an FCLIB file, or a built-in example by name), with the merit and reason\n"
  "the harness gives its own solvers: the merit printed is the one `solve` prints for the\n"
  "same answer. SOLUTION may be PROBLEM itself when that file holds its /solution.\n",
  "The reason is CONVERGED_EXACT (merit <= --tol), DIVERGED_MAX_ITER (not solved to --tol) or\n"
  "DIVERGED_NAN. Without /solution/v a global problem's velocities are v* + A^-1 J' gamma.\n",
  score_flags};


// an existing file is an FCLIB file, a bare name a built-in example (solve's rule)
static int load_problem(const char *arg, fl_problem **out) {
  struct stat st;
  if (stat(arg, &st) == 0) return fl_problem_load_fclib(arg, out);
  if (strchr(arg, '/') || strstr(arg, ".hdf5") || strstr(arg, ".h5"))
    return fl_seterr(FL_ERR_IO, "%s: cannot open: %s (expected an FCLIB .hdf5 file)", arg,
                     strerror(errno));
  return fl_problem_create_example(arg, out);
}


int fl_cmd_score(int argc, char **argv) {
  score_cli c;
  memset(&c, 0, sizeof c);
  int rc = fl_args_parse(&score_spec, argc, argv, &c);
  fl_args_free(&score_spec, &c);
  if (rc) return rc == 1 ? 0 : rc < 0 ? 1 : EXIT_USAGE;
  if (c.pos.n != 2) {
    fprintf(stderr, "frictionlab score: expected PROBLEM and SOLUTION (got %d argument%s)\n",
            c.pos.n, c.pos.n == 1 ? "" : "s");
    return EXIT_USAGE;
  }
  fl_norm_kind norm;
  if (!strcmp(c.norm, "fclib")) norm = FL_NORM_FCLIB;
  else if (!strcmp(c.norm, "siconos")) norm = FL_NORM_SICONOS;
  else if (!strcmp(c.norm, "none")) norm = FL_NORM_NONE;
  else {
    fprintf(stderr, "frictionlab score: --norm '%s': unknown normalization; expected one of "
                    "fclib, siconos, none\n", c.norm);
    return EXIT_USAGE;
  }
  char  *end;
  double tol = strtod(c.tol, &end);
  if (end == c.tol || *end || !isfinite(tol) || tol < 0) {
    fprintf(stderr, "frictionlab score: --tol %s: expected a number >= 0\n", c.tol);
    return EXIT_USAGE;
  }

  fl_register_all();
  const char *prob = c.pos.v[0], *file = c.pos.v[1];
  fl_problem *p = NULL;
  if (load_problem(prob, &p) < 0) {
    fprintf(stderr, "frictionlab score: %s\n", fl_errmsg());
    return 1;
  }
  fl_score sc;
  rc = fl_solution_score_file(p, file, norm, tol, &sc);
  if (rc < 0) {
    fprintf(stderr, "frictionlab score: %s\n", fl_errmsg());
    fl_problem_free(p);
    return 1;
  }
  // solve's table: the reason and the merit in the same widths and format
  const char *label = p->name[0] ? p->name : prob;
  int wp = (int)strlen(label) > 7 ? (int)strlen(label) : 7;
  printf("%-*s  %-24s  %10s  %10s\n", wp, "problem", "reason", "merit", "natmap");
  printf("%-*s  %-24s  %10.3e  %10.3e\n", wp, label, fl_reason_name(sc.reason), sc.merit,
         sc.metrics.natmap);
  printf("\nanswer %s scored against %s (norm %s, tol %g)%s\n", file, prob, c.norm, tol,
         sc.v_from_gamma ? "; v = v* + A^-1 J' gamma (the file holds no /solution/v)" : "");
  fl_problem_free(p);
  return 0;
}

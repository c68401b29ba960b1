// SPDX-License-Identifier: Apache-2.0
/* plan.c: `frictionlab plan PROBLEMS... --solver a,b [--set k=v] [--shards N]`, the pair list
 * of a campaign with a size estimate per pair, for any scheduler (docs/campaigns.md).
 *
 * One CSV row per (problem, solver) pair in the serial order: its index, the problem's label
 * (as solve gives it) and source, the solver, the settings hash solve records for the pair
 * (so a scheduler can tell which pairs a folder already holds), the problem file's size in
 * bytes (the estimate by which shards are dealt; a built-in example: 0) and, with --shards N,
 * the shard `solve --shard I/N` gives it. Nothing is loaded or solved.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/fl_args.h"
#include "../fl_harness.h"
#include "../output/fl_run_csv.h"
#include "fl_camp.h"
#include "fl_solve.h"

typedef struct plan_cli {
  fl_arg_list pos;
  fl_arg_multi solver_arg, set_arg;
  const char *out, *norm;
  long shards;
} plan_cli;

#define A(m) offsetof(plan_cli, m)
static const fl_arg_desc plan_flags[] = {
  {"--solver", FL_ARG_MULTI, A(solver_arg), 0, 0, "a,b", NULL, "solvers, as for solve"},
  {"--set", FL_ARG_MULTI, A(set_arg), 0, 0, "key=value", NULL, "solver options, as for solve"},
  {"--norm", FL_ARG_STR, A(norm), 0, 0, "KIND", "fclib", "normalization, as for solve"},
  {"--shards", FL_ARG_INT, A(shards), 1, 1000000, "N", "1",
   "also give each pair's shard of N, as `solve --shard I/N` deals them"},
  {"--out", FL_ARG_STR, A(out), 0, 0, "FILE", NULL, "write the CSV there (default: stdout)"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef A

static const fl_cmd_spec plan_spec = {
  "plan", "[FILE|FOLDER|EXAMPLE]...", -1, offsetof(plan_cli, pos),
  "Writes the (problem, solver) pairs that `solve` with the same arguments would run, one CSV\n"
  "row each: pair,problem,source,solver,settings_hash,bytes,shard. bytes is the problem file's\n"
  "size, the estimate by which --shard deals problems (largest first onto the least loaded\n"
  "shard); settings_hash is the one solve records per pair (solver, options, file content).\n"
  "Feed it to a job array, GNU parallel or xargs -P (docs/campaigns.md).\n",
  NULL, plan_flags};

int fl_cmd_plan(int argc, char **argv) {
  plan_cli c;
  memset(&c, 0, sizeof c);
  int rc = fl_args_parse(&plan_spec, argc, argv, &c);
  if (rc) {
    fl_args_free(&plan_spec, &c);
    return rc == 1 ? 0 : rc < 0 ? 1 : 2;
  }
  fl_register_all();
  int          status = 1, nin = 0;
  char       **in = NULL, **lab = NULL;
  double      *size = NULL;
  int         *owner = NULL;
  uint64_t    *sh = NULL;
  FILE        *out = stdout;
  fl_solve_args a;
  memset(&a, 0, sizeof a);
  a.cmd = "plan";
  // the solvers, --norm and the --set list as solve takes them (one function, solve_pair.c)
  rc = fl_solve_choose(&a, c.solver_arg.n, (const char *const *)c.solver_arg.v, c.set_arg.n,
                       (const char *const *)c.set_arg.v, c.norm);
  if (rc != 0) {
    status = rc < 0 ? 1 : rc;
    goto done;
  }
  int nsol = a.nsolvers;
  const char *const *sol = a.solvers;
  // the problems: folders expanded as solve does; none given: every built-in example
  if (fl_inputs_expand(c.pos.n, c.pos.v, "plan", NULL, &in, &nin) < 0) {
    fprintf(stderr, "frictionlab plan: %s\n", fl_errmsg());
    goto done;
  }
  const char *const *ex = fl_examples_list();
  int nex = 0;
  if (nin == 0)
    while (ex && ex[nex]) nex++;
  int n = nex + nin;
  lab   = calloc((size_t)n + 1, sizeof *lab);
  size  = calloc((size_t)n + 1, sizeof *size);
  owner = calloc((size_t)n + 1, sizeof *owner);
  sh    = calloc((size_t)nsol + 1, sizeof *sh);
  if (!lab || !size || !owner || !sh) goto done;
  // settings hashes per solver, of the solver made as solve makes it
  for (int j = 0; j < nsol; j++) {
    fl_solver *s = NULL;
    rc = fl_solve_make_solver(&a, sol[j], &s);
    if (rc == 0 && fl_pairs_solver_hash(s, &sh[j]) < 0) {
      fprintf(stderr, "frictionlab plan: solver '%s': %s\n", sol[j], fl_errmsg());
      rc = 1;
    }
    fl_solver_destroy(s);
    if (rc != 0) {
      status = rc;
      goto done;
    }
  }
  // labels, sizes and shards as solve gives them
  if (fl_pairs_labels(nex, ex, nin, (const char *const *)in, (int)c.shards, lab, size, owner) < 0) {
    fprintf(stderr, "frictionlab plan: %s\n", fl_errmsg());
    goto done;
  }
  if (c.out && !(out = fopen(c.out, "w"))) {
    fprintf(stderr, "frictionlab plan: %s: cannot create: %s\n", c.out, strerror(errno));
    out = stdout;
    goto done;
  }
  fl_csv_header(out, fl_plan_cols, FL_PLAN_NCOLS);
  long pair = 0;
  for (int k = 0; k < n; k++) {
    const char *src = k < nex ? ex[k] : in[k - nex];
    uint64_t    ph  = 0;
    if (fl_pairs_source_hash(src, &ph) < 0) {
      fprintf(stderr, "frictionlab plan: %s\n", fl_errmsg());
      goto done;
    }
    for (int j = 0; j < nsol; j++) {
      char hex[17];
      fl_pairs_hex(fl_pairs_hash(sh[j], &ph, sizeof ph), hex);
      fl_plan_row row = {pair++, lab[k], src, sol[j], hex, size[k], owner[k]};
      fl_csv_row(out, fl_plan_cols, FL_PLAN_NCOLS, &row);
    }
  }
  status = 0;
done:
  if (status == 1 && !fl_errmsg()[0]) fprintf(stderr, "frictionlab plan: out of memory\n");
  if (out != stdout && fclose(out) != 0 && status == 0) {
    fprintf(stderr, "frictionlab plan: %s: write failed\n", c.out);
    status = 1;
  }
  if (status && c.out && out != stdout) remove(c.out);
  for (int k = 0; lab && k < nex + nin; k++) fl_free(lab[k]);
  free(lab);
  free(size);
  free(owner);
  free(sh);
  fl_solve_args_free(&a);
  fl_inputs_free(in, nin);
  fl_args_free(&plan_spec, &c);
  return status;
}

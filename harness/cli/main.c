// SPDX-License-Identifier: Apache-2.0
/* main.c: the frictionlab command line, git-style sub-commands.
 *
 * Each sub-command is one row of `cmds` below; its function (declared in fl_harness.h) gets
 * the arguments after the sub-command's name and returns the exit status (0 ok, 1 failure,
 * 2 usage error). Adding a sub-command is one line in the table.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE // dladdr, Dl_info
#endif
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/fl_campaign.h"
#include "../fl_harness.h"
#include "../campaign/fl_camp.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

//---- the sub-command table: add a row per sub-command ----

static const fl_subcommand cmds[] = {
  {"help", cmd_help, "show this help, or the help of one sub-command"},
  {"version", cmd_version, "print the version and git revision"},
  {"list", fl_cmd_list, "list solvers (with their options), problems, figures"},
  {"solve", fl_cmd_solve, "solve FCLIB files or built-in examples with solvers; write results"},
  {"reproduce", fl_cmd_reproduce, "regenerate a paper figure (data and pictures) by name"},
  {"profile", fl_cmd_profile, "Dolan-More performance profiles of solvers over problems"},
  {"check", fl_cmd_check, "compare accuracy with the committed baselines (--update rewrites)"},
  {"bench", fl_cmd_bench, "time solvers and scene stages against each other (min, median)"},
  {"run", fl_cmd_run, "simulate a scene or scene file with solvers; write steps, iterations, observables"},
  {"view", fl_cmd_view, "open (or print the path of) the browser viewer of a run's results folder"},
  {"verify", fl_cmd_verify, "run the analytic suite (closed-form motions) with every solver; verdicts per case"},
  {"score", fl_cmd_score, "score an answer (an FCLIB file's /solution) against its problem with solve's merit"},
  {"export", fl_cmd_export, "write steps of a scene as FCLIB files, or a scene as a scene file"},
  {"plan", fl_cmd_plan, "list a campaign's (problem, solver) pairs with size estimates and shards"},
  {"collect", fl_cmd_collect, "merge the results folders of a campaign's shards into one (docs/campaigns.md)"},
  {NULL, NULL, NULL}
};


static const fl_subcommand *find_cmd(const char *name) {
  for (const fl_subcommand *c = cmds; c->name; c++) {
    if (strcmp(c->name, name) == 0) return c;
  }
  return NULL;
}


static void usage(FILE *f) {
  fprintf(f, "usage: frictionlab <command> [arguments]\n\ncommands:\n");
  for (const fl_subcommand *c = cmds; c->name; c++) {
    fprintf(f, "  %-10s %s\n", c->name, c->summary);
  }
  fprintf(f, "\n'frictionlab <command> --help' shows the arguments of a command.\n");
}


static int cmd_help(int argc, char **argv) {
  if (argc < 1) {
    usage(stdout);
    return 0;
  }
  // help CMD is CMD --help
  const fl_subcommand *c = find_cmd(argv[0]);
  if (!c) {
    fprintf(stderr, "frictionlab help: unknown command '%s'\n", argv[0]);
    usage(stderr);
    return 2;
  }
  if (c->fn == cmd_help) {
    usage(stdout);
    return 0;
  }
  char  opt[] = "--help";
  char *args[] = {opt, NULL};
  return c->fn(1, args);
}


/* The BLAS this process runs on (the file that holds dgemm_); OpenBLAS, which the build links
 * ahead of the system's libblas.so.3 (CMake FL_BLAS), is set to one thread unless
 * OPENBLAS_NUM_THREADS asks otherwise: results and timings as on one core, other programs
 * untouched. *threads: OpenBLAS's thread count, 0 for another BLAS. */
static const char *blas_setup(int *threads) {
  void (*set)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
  int (*get)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
  if (set && !getenv("OPENBLAS_NUM_THREADS")) set(1);
  *threads = get ? get() : 0;
  Dl_info di;
  void *f = dlsym(RTLD_DEFAULT, "dgemm_");
  return f && dladdr(f, &di) && di.dli_fname ? di.dli_fname : "unknown";
}


static int cmd_version(int argc, char **argv) {
  if (argc > 0 && strcmp(argv[0], "--help") != 0) {
    fprintf(stderr, "frictionlab version: unexpected argument '%s' (expected none)\n", argv[0]);
    return 2;
  }
  printf("frictionlab %s (git %s)\n", fl_version(), FL_GIT_REVISION);
  int threads;
  const char *blas = blas_setup(&threads);
  if (threads > 0) printf("blas: %s (OpenBLAS, %d thread%s)\n", blas, threads, threads > 1 ? "s" : "");
  else printf("blas: %s\n", blas);
  return 0;
}


int main(int argc, char **argv) {
  fl_harness_set_argv(argc, argv);
  int blas_threads;
  blas_setup(&blas_threads);
  // past a file-size limit (ulimit -f) a write fails with EFBIG and the command reports it and
  // removes what it staged, instead of dying on SIGXFSZ with a temporary file left behind
  signal(SIGXFSZ, SIG_IGN);
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) name = "help";
  if (strcmp(name, "--version") == 0) name = "version";
  const fl_subcommand *c = find_cmd(name);
  if (!c) {
    fprintf(stderr, "frictionlab: unknown command '%s'; expected one of:", argv[1]);
    for (const fl_subcommand *k = cmds; k->name; k++) fprintf(stderr, " %s", k->name);
    fprintf(stderr, "\n");
    return 2;
  }
  // under mpiexec with several ranks: solve and profile split their pairs over the ranks
  // (docs/campaigns.md); other commands would only repeat the same work on every rank
  if (fl_campaign_init() < 0) {
    fprintf(stderr, "frictionlab %s: %s\n", c->name, fl_errmsg());
    return 1;
  }
  if (fl_campaign_size() > 1 && c->fn != fl_cmd_solve && c->fn != fl_cmd_profile) {
    if (fl_campaign_rank() == 0)
      fprintf(stderr, "frictionlab %s: runs on one rank; under mpiexec only solve and profile "
                      "split their work over ranks\n", c->name);
    return 2;
  }
  return c->fn(argc - 2, argv + 2);
}

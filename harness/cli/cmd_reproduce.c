// SPDX-License-Identifier: Apache-2.0
/* cmd_reproduce.c: `frictionlab reproduce FIGURE|all`, the command over the figure registry
 * (harness/figures/): one figure or every available one, at a size (tier), in worker
 * processes with --jobs. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../figures/fl_figure.h"
#include "fl_args.h"

//---- frictionlab reproduce ----

typedef struct reproduce_cli {
  fl_arg_multi pos;
  int quick, medium, full, force;
  long jobs;
  const char *out;
} reproduce_cli;

#define A(m) offsetof(reproduce_cli, m)
static const fl_arg_desc reproduce_flags[] = {
  {"--medium", FL_ARG_FLAG, A(medium), 0, 0, NULL, NULL,
   "(the default) a size that keeps the full figure's conclusion, in minutes; a figure whose "
   "quick size already does runs its quick size"},
  {"--full", FL_ARG_FLAG, A(full), 0, 0, NULL, NULL,
   "the paper's size (han-fig4: hours; `reproduce all --full` prints each figure's estimated "
   "time first)"},
  {"--quick", FL_ARG_FLAG, A(quick), 0, 0, NULL, NULL, "a reduced version small enough for CI"},
  {"--jobs", FL_ARG_INT, A(jobs), 1, 64, "N", "1",
   "independent runs at once, in N worker processes: the figures of `all`, and han-fig4's "
   "meshes; the figures are the same"},
  {"--out", FL_ARG_STR, A(out), 0, 0, "DIR", "results/figures", "where DIR/<figure>/ goes"},
  {"--force", FL_ARG_FLAG, A(force), 0, 0, NULL, NULL, "replace an existing figure folder"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef A

static const fl_cmd_spec reproduce_spec = {
  "reproduce", "FIGURE|all", 1, offsetof(reproduce_cli, pos),
  "Regenerates a paper figure: data (CSV), pictures (gnuplot PNG, matplotlib PNG and PDF) and\n"
  "a manifest under DIR/<figure>/.\n",
  "Every picture names its size in its title. 'frictionlab list figures' lists the figures,\n"
  "the paper each reproduces, and what unavailable ones need.\n",
  reproduce_flags};


static int reproduce_one(const fl_figure_recipe *r, const char *outdir, int tier, int jobs,
                         int force) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/%s", outdir, r->name);
  tier = fl_figure_tier(r, tier);
  printf("%s (%s): %s [%s size]\n", r->name, fl_figure_cite(r), r->what,
         fl_figure_tier_name(tier));
  fl_results *res;
  int rc = fl_results_begin(dir, "reproduce", force, &res);
  if (rc < 0) {
    fprintf(stderr, "frictionlab reproduce: %s\n", fl_errmsg());
    return rc;
  }
  cJSON *man = fl_results_manifest(res);
  cJSON_AddStringToObject(man, "figure", r->name);
  cJSON_AddStringToObject(man, "seed", r->seed);
  cJSON_AddStringToObject(man, "paper", fl_figure_reference(r));
  cJSON_AddBoolToObject(man, "quick", tier == FL_FIG_QUICK);
  cJSON_AddStringToObject(man, "tier", fl_figure_tier_name(tier));
  fl_fig fig;
  memset(&fig, 0, sizeof fig);
  snprintf(fig.title, sizeof fig.title, "%s (%s size): %s", r->name, fl_figure_tier_name(tier),
           r->what);
  fl_fig_ctx ctx = {res, tier == FL_FIG_QUICK, &fig, fl_results_file(res, "summary.txt"), jobs,
                    tier};
  double t0 = fl_time_now();
  rc = ctx.summary ? r->run(&ctx) : fl_errcode();
  if (rc >= 0) rc = fl_fig_viewers(fl_results_staging(res));
  if (rc >= 0) rc = fl_fig_render(&fig, fl_results_staging(res));
  if (rc < 0) {
    fprintf(stderr, "frictionlab reproduce %s: %s\n", r->name, fl_errmsg());
    fl_results_abort(res);
    return rc;
  }
  cJSON_AddNumberToObject(man, "seconds", fl_time_now() - t0);
  rc = fl_results_commit(res);
  if (rc < 0) {
    fprintf(stderr, "frictionlab reproduce %s: %s\n", r->name, fl_errmsg());
    return rc;
  }
  printf("  wrote %s/ (%.1f s)\n", dir, fl_time_now() - t0);
  return FL_OK;
}


/* "95 s", "12 min", "3.3 h" */
static const char *human_s(double s, char *buf, size_t n) {
  if (s < 120) snprintf(buf, n, "%.0f s", s);
  else if (s < 2 * 3600) snprintf(buf, n, "%.0f min", s / 60);
  else snprintf(buf, n, "%.1f h", s / 3600);
  return buf;
}


/* The progress of `reproduce all` on stderr, a terminal or a log alike: each figure as it
 * starts (figures done of n, and the time left from the estimates of the figures not done,
 * scaled by how the finished ones compared with theirs) and as it ends (its time). */
typedef struct all_progress {
  int active, n, done;
  double t0, est_done, est_left;
} all_progress;


static void all_progress_end(const all_progress *p, const char *what, double t0, int ok) {
  if (!p->active) return;
  char a[32], b[32];
  fprintf(stderr, "[reproduce all: %d of %d done, %s elapsed] %s %s in %s\n", p->done, p->n,
          human_s(fl_time_now() - p->t0, a, sizeof a), what, ok ? "ended" : "FAILED",
          human_s(fl_time_now() - t0, b, sizeof b));
  fflush(stderr);
}


static void all_progress_say(const all_progress *p, const char *what) {
  if (!p->active) return;
  double el = fl_time_now() - p->t0, scale = p->est_done > 0 ? el / p->est_done : 1;
  if (scale < 0.5) scale = 0.5;
  if (scale > 3) scale = 3;
  char a[32], b[32];
  fprintf(stderr, "[reproduce all: figure %d of %d, %s elapsed, about %s left] %s\n",
          p->done + 1 > p->n ? p->n : p->done + 1, p->n, human_s(el, a, sizeof a),
          human_s(p->est_left * scale, b, sizeof b), what);
  fflush(stderr);
}


/* Runs the figures idx[0..n) in up to `jobs` worker processes at once, longest estimate first;
 * each worker's output is printed whole when it ends. Returns the count that failed. */
static int reproduce_pool(const fl_figure_recipe *const *figs, int n, const char *outdir,
                          int tier, int jobs, int force, all_progress *prog) {
  pid_t *pid = calloc((size_t)n, sizeof *pid);
  char (*log)[64] = calloc((size_t)n, sizeof *log);
  int *order = calloc((size_t)n, sizeof *order);
  double *t0 = calloc((size_t)n, sizeof *t0);
  if (!pid || !log || !order || !t0) {
    free(pid), free(log), free(order), free(t0);
    fprintf(stderr, "frictionlab reproduce: out of memory\n");
    return n;
  }
  for (int k = 0; k < n; k++) order[k] = k;
  for (int a = 1; a < n; a++) // insertion sort, longest first
    for (int b = a; b > 0 && fl_figure_estimate(figs[order[b]], tier, 1) >
                                 fl_figure_estimate(figs[order[b - 1]], tier, 1); b--) {
      int t = order[b];
      order[b] = order[b - 1];
      order[b - 1] = t;
    }
  int next = 0, running = 0, failed = 0;
  while (next < n || running > 0) {
    while (next < n && running < jobs) {
      int k = order[next++];
      snprintf(log[k], sizeof log[k], "/tmp/frictionlab-reproduce-XXXXXX");
      int fd = mkstemp(log[k]);
      if (fd < 0) {
        fprintf(stderr, "frictionlab reproduce %s: cannot make a log file: %s\n", figs[k]->name,
                strerror(errno));
        failed++;
        continue;
      }
      fflush(NULL);
      pid[k] = fork();
      if (pid[k] == 0) {
        if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0) _exit(3);
        close(fd);
        int rc = reproduce_one(figs[k], outdir, tier, 1, force);
        fflush(NULL);
        _exit(rc < 0 ? 1 : 0);
      }
      close(fd);
      if (pid[k] < 0) {
        fprintf(stderr, "frictionlab reproduce %s: cannot start a worker: %s\n", figs[k]->name,
                strerror(errno));
        unlink(log[k]);
        failed++;
        continue;
      }
      running++;
      t0[k] = fl_time_now();
      all_progress_say(prog, figs[k]->name);
    }
    if (running == 0) break;
    int status;
    pid_t w = waitpid(-1, &status, 0);
    if (w < 0) break;
    for (int k = 0; k < n; k++) {
      if (pid[k] != w) continue;
      running--;
      FILE *f = fopen(log[k], "r");
      if (f) {
        char buf[4096];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, got, stdout);
        fclose(f);
      }
      unlink(log[k]);
      int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok) {
        failed++;
        fprintf(stderr, "frictionlab reproduce %s: the worker failed (%s %d)\n", figs[k]->name,
                WIFSIGNALED(status) ? "signal" : "exit status",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
      }
      double e = fl_figure_estimate(figs[k], tier, 1);
      prog->done++;
      prog->est_done += e;
      prog->est_left -= e;
      fflush(stdout);
      all_progress_end(prog, figs[k]->name, t0[k], ok);
    }
  }
  free(pid), free(log), free(order), free(t0);
  return failed;
}


int fl_cmd_reproduce(int argc, char **argv) {
  const fl_figure_recipe *const *registry = fl_figures();
  reproduce_cli c;
  memset(&c, 0, sizeof c);
  int prc = fl_args_parse(&reproduce_spec, argc, argv, &c);
  if (prc) return prc == 1 ? 0 : 2;
  if (c.quick + c.medium + c.full > 1) {
    fprintf(stderr, "frictionlab reproduce: give one size: --quick, --medium or --full\n");
    return 2;
  }
  const char *which = c.pos.n ? c.pos.v[0] : NULL, *outdir = c.out;
  int tier = c.quick ? FL_FIG_QUICK : c.full ? FL_FIG_FULL : FL_FIG_MEDIUM, force = c.force;
  int jobs = (int)c.jobs;
  if (!which) {
    fl_args_usage(&reproduce_spec, stderr);
    return 2;
  }
  fl_register_all();
  char a[32];
  if (strcmp(which, "all") != 0) {
    const fl_figure_recipe *r = fl_figure_find(which);
    if (!r) {
      fprintf(stderr, "frictionlab reproduce: unknown figure '%s' (valid:", which);
      for (int k = 0; registry[k]; k++) fprintf(stderr, " %s", registry[k]->name);
      fprintf(stderr, ", all)\n");
      return 2;
    }
    const char *why = fl_figure_missing(r);
    if (why) {
      fprintf(stderr, "frictionlab reproduce: %s is unavailable: it needs %s\n", r->name, why);
      return 1;
    }
    double e = fl_figure_estimate(r, tier, jobs);
    if (e >= 60)
      printf("%s at %s size: about %s here\n", r->name,
             fl_figure_tier_name(fl_figure_tier(r, tier)), human_s(e, a, sizeof a));
    return reproduce_one(r, outdir, tier, jobs, force) < 0 ? 1 : 0;
  }
  // the plan: every available figure, its size and estimated time (with --jobs the figures run
  // in workers of one process each, so each figure's own estimate is the one-process one)
  const fl_figure_recipe *plan[64];
  int n = 0, unavailable = 0;
  double total = 0, longest = 0;
  for (int k = 0; registry[k] && n < 64; k++) {
    const char *why = fl_figure_missing(registry[k]);
    if (why) {
      printf("%s: unavailable (needs %s)\n", registry[k]->name, why);
      unavailable++;
      continue;
    }
    plan[n++] = registry[k];
    double e = fl_figure_estimate(registry[k], tier, 1);
    total += e;
    longest = fmax(longest, e);
  }
  printf("reproduce all: %d figures at %s size, estimated %s in one process", n,
         fl_figure_tier_name(tier), human_s(total, a, sizeof a));
  if (jobs > 1) {
    char b[32];
    printf(", about %s with %d workers", human_s(fmax(longest, total / jobs), b, sizeof b), jobs);
  }
  printf(":\n");
  for (int k = 0; k < n; k++)
    printf("  %-20s %-7s %8s\n", plan[k]->name,
           fl_figure_tier_name(fl_figure_tier(plan[k], tier)),
           human_s(fl_figure_estimate(plan[k], tier, 1), a, sizeof a));
  fflush(stdout);
  // the time left: the one-process estimates left, scaled by how the finished figures went
  // (which takes in the speed-up of workers)
  all_progress prog = {1, n, 0, fl_time_now(), 0, total};
  int failed = 0;
  if (jobs > 1) {
    failed = reproduce_pool(plan, n, outdir, tier, jobs, force, &prog);
  } else {
    for (int k = 0; k < n; k++) {
      all_progress_say(&prog, plan[k]->name);
      double t0 = fl_time_now();
      int    ok = reproduce_one(plan[k], outdir, tier, jobs, force) >= 0;
      failed += !ok;
      double e = fl_figure_estimate(plan[k], tier, jobs);
      prog.done++;
      prog.est_done += e;
      prog.est_left -= e;
      fflush(stdout);
      all_progress_end(&prog, plan[k]->name, t0, ok);
    }
  }
  printf("reproduce all: %d written, %d failed, %d unavailable (in %s/, %s)\n", n - failed,
         failed, unavailable, outdir, human_s(fl_time_now() - prog.t0, a, sizeof a));
  return failed ? 1 : 0;
}

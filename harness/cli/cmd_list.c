// SPDX-License-Identifier: Apache-2.0
/* cmd_list.c: `frictionlab list [solvers|problems|figures]`. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../sim/fl_world.h"
#include "../figures/fl_figure.h"
#include "fl_args.h"
#include "../fl_harness.h"
#include "../../peers/fl_peer.h"
#include "../../solvers/fl_plugin.h"

static const char *const sections[] = {"solvers", "problems", "figures", NULL};


// capability bits as words
static void print_caps(unsigned caps, FILE *f) {
  static const struct {
    unsigned bit;
    const char *name;
  } names[] = {{FL_CAP_RIGID, "rigid"},         {FL_CAP_COMPLIANT, "compliant"},
               {FL_CAP_BILATERAL, "bilateral"}, {FL_CAP_LOCAL, "local-problems"},
               {FL_CAP_NEEDS_AJ, "needs-A-and-J"}, {FL_CAP_WARMSTART, "warm-start"},
               {FL_CAP_GPU, "gpu"},             {FL_CAP_MPI, "mpi"},
               {FL_CAP_REGULARIZED, "regularized-model"}, {FL_CAP_PEER, "peer"}};
  int first = 1;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (caps & names[i].bit) {
      fprintf(f, "%s%s", first ? "" : ", ", names[i].name);
      first = 0;
    }
  }
  if (first) fprintf(f, "(none declared)");
}


// the solver's option help, without the "name: summary" line it may open with (printed above)
static void help_body(const fl_solver_ops *ops, const char *name, FILE *f) {
  char  *text = NULL;
  size_t len  = 0;
  FILE  *m    = open_memstream(&text, &len);
  if (!m) {
    fl_solver_ops_help(ops, f);
    return;
  }
  fl_solver_ops_help(ops, m);
  fclose(m);
  const char *body = text ? text : "";
  size_t      n    = strlen(name);
  if (strncmp(body, name, n) == 0 && body[n] == ':') {
    const char *nl = strchr(body, '\n');
    body           = nl ? nl + 1 : body + strlen(body);
  }
  fputs(body, f);
  free(text);
}


/* What the closed-form suite (`verify`, docs/verify.md) found each solver's defaults get wrong,
 * and the setting that is right there; NULL where they pass every case. */
static const char *defaults_advice(const char *solver) {
  static const char *const tab[][2] = {
    {"pgs", "100 sweeps let a box creep at its friction angle and a 1000:1 drop or a standing "
            "arch collapse; max_iter=1000 fixes the slope, nsn the drop and the arch"},
    {"jacobi", "100 iterations: the friction angle, a dragged box's onset and a 1000:1 drop come "
               "out wrong; use nsn there"},
    {"sap", "beta=1 (Drake's near-rigid contact) sinks a 1000:1 stack by centimetres, lets a "
            "rolling ball slip 1.3 mm/s and a semicircular arch sag 7 %: beta=0.01 there (not for "
            "table_pile, whose steps then fail); stick and slip are right at the defaults"},
    {"nsn", "granular piles still fail steps; the Fischer-Burmeister ncp=fb sticks past the cone"},
    {"primal-descent", "penalty friction: boxes stick and slip late, whatever the budget; not "
                       "for closed-form motion"},
    {"dual-descent", "a fixed budget reported as success: creeps below the friction angle and "
                     "lets a 1000:1 drop collapse; max_iter=1000"},
  };
  for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++)
    if (!strcmp(tab[k][0], solver)) return tab[k][1];
  return NULL;
}


static void list_solvers(FILE *f) {
  fl_register_all();
  const char *const *names = fl_solver_list();
  int n = 0;
  while (names && names[n]) n++;
  fprintf(f, "solvers (%d registered; choose with --solver a,b; set options with --set "
             "[solver.]key=value):\n", n);
  for (int i = 0; i < n; i++) {
    const fl_solver_ops *ops = fl_solver_find(names[i]);
    if (!ops) continue;
    fprintf(f, "\n%s: %s\n  capabilities: ", names[i], fl_solver_ops_summary(ops));
    print_caps(fl_solver_ops_caps(ops), f);
    if (fl_solver_ops_origin(ops)) fprintf(f, "\n  plug-in: %s", fl_solver_ops_origin(ops));
    const char *adv = defaults_advice(names[i]);
    if (adv) fprintf(f, "\n  where the defaults are wrong (docs/verify.md): %s", adv);
    fprintf(f, "\n  options (key, type, default, range, help):\n");
    help_body(ops, names[i], f);
  }
  // peer simulators step whole scenes (peers/fl_peer.h, docs/peers.md)
  fprintf(f, "\npeer simulators (whole steps of a scene in `run` and `bench --steps`; options "
             "as mujoco.key=value for MuJoCo 2.2, mujoco4.key=value, drake.key=value; "
             "docs/peers.md): ");
  for (const char *const *pn = fl_peer_list(); *pn; pn++)
    fprintf(f, "%s%s", pn == fl_peer_list() ? "" : ", ", *pn);
  fprintf(f, "\n");
  char path[2048];
  fprintf(f, "plug-in search path ($FL_PLUGIN_PATH, then the installed folder; --plugin PATH "
             "loads one more; docs/plugins.md): %s\n", fl_plugin_search_path(path, sizeof path));
  static const char *const family[][2] = {{"mujoco-newton", "mujoco-pgs, mujoco-cg, mujoco-newton"},
                                          {"drake-sap", "drake-sap, drake-similar, drake-lagged, drake-tamsi"},
                                          {"mujoco4-newton", "mujoco4-pgs, mujoco4-cg, mujoco4-newton"}};
  for (int k = 0; k < 3; k++)
    if (fl_peer_unavailable(family[k][0]))
      fprintf(f, "  %s unavailable: %s\n", family[k][1], fl_peer_unavailable(family[k][0]));
}


static int list_problems(FILE *f) {
  const char *const *names = fl_examples_list();
  fprintf(f, "built-in example problems (solve them by name; FCLIB files by path):\n");
  fprintf(f, "  %-24s %-6s %6s %6s %6s\n", "name", "kind", "nv", "nc", "nh");
  for (int i = 0; names && names[i]; i++) {
    fl_problem *p = NULL;
    if (fl_problem_create_example(names[i], &p) < 0) {
      fprintf(f, "  %-24s (cannot be created: %s)\n", names[i], fl_errmsg());
      continue;
    }
    fprintf(f, "  %-24s %-6s %6ld %6ld %6ld\n", names[i],
            p->kind == FL_PROBLEM_LOCAL ? "local" : "global", (long)p->nv, (long)p->nc,
            (long)p->nh);
    fl_problem_free(p);
  }

  // scenes: simulated over many steps by `run`, each with its own parameters
  const fl_scene_desc *const *scenes = fl_scene_list();
  int nsc = 0;
  while (scenes && scenes[nsc]) nsc++;
  if (nsc > 0) {
    fprintf(f, "\nscenes (%d; simulate with `frictionlab run SCENE`, parameters with --set "
               "key=value or SCENE.key=value):\n", nsc);
    for (int i = 0; i < nsc; i++) {
      fprintf(f, "\n");
      fl_scene_help(scenes[i], f);
    }
  }
  return 0;
}


static void list_figures(FILE *f) {
  const fl_figure_recipe *const *figs = fl_figures();
  int n = 0;
  while (figs && figs[n]) n++;
  if (n == 0) {
    fprintf(f, "figures: no figures registered yet\n");
    return;
  }
  fprintf(f, "figures (%d registered; regenerate with `frictionlab reproduce NAME|all`; name, "
             "paper, what):\n", n);
  for (int i = 0; i < n; i++) {
    const char *why = fl_figure_missing(figs[i]);
    fprintf(f, "  %-18s %-16s %s\n", figs[i]->name, fl_figure_cite(figs[i]),
            figs[i]->what ? figs[i]->what : "");
    if (why) fprintf(f, "  %-18s unavailable: needs %s\n", "", why);
  }
  // the papers, once each, in the order first met
  fprintf(f, "\npapers (the second column above):\n");
  for (int i = 0; i < n; i++) {
    int seen = strcmp(fl_figure_cite(figs[i]), "-") == 0;
    for (int j = 0; j < i && !seen; j++) seen = strcmp(figs[j]->seed, figs[i]->seed) == 0;
    if (!seen) fprintf(f, "  %-16s %s\n", fl_figure_cite(figs[i]), fl_figure_reference(figs[i]));
  }
}


typedef struct list_cli {
  fl_arg_multi pos;
} list_cli;

static const fl_arg_desc list_flags[] = {{NULL, 0, 0, 0, 0, NULL, NULL, NULL}};

static const fl_cmd_spec list_spec = {
  "list", "[solvers|problems|figures]", 1, offsetof(list_cli, pos),
  "Lists the registered solvers with their capabilities and every option (type, default,\n"
  "range, help); the built-in example problems (for `solve`) and the scenes with their\n"
  "parameters (for `run`); and the figures that `reproduce` knows. Without an argument, lists\n"
  "all three.\n",
  NULL, list_flags};


int fl_cmd_list(int argc, char **argv) {
  list_cli c;
  memset(&c, 0, sizeof c);
  int prc = fl_args_parse(&list_spec, argc, argv, &c);
  if (prc) return prc == 1 ? 0 : 2;
  const char *what = c.pos.n ? c.pos.v[0] : NULL;
  if (what) {
    int known = 0;
    for (int i = 0; sections[i]; i++) known |= strcmp(what, sections[i]) == 0;
    if (!known) {
      fprintf(stderr, "frictionlab list: unknown section '%s'; expected one of: solvers, "
                      "problems, figures\n", what);
      return 2;
    }
  }
  if (!what || strcmp(what, "solvers") == 0) list_solvers(stdout);
  if (!what) printf("\n");
  if (!what || strcmp(what, "problems") == 0) list_problems(stdout);
  if (!what) printf("\n");
  if (!what || strcmp(what, "figures") == 0) list_figures(stdout);
  return 0;
}

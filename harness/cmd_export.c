/* cmd_export.c: `frictionlab export PROBLEM|FILE.json --steps A:B --out DIR` writes the contact
 * problems of steps A..B of a scene as FCLIB global files; `--scene-json FILE` writes the scene
 * itself as a scene file instead.
 *
 * Outline: build the world; step it with a solver (default pgs) from step 0; for every step k
 * in [A, B] write the assembled problem together with the solver's solution (v, gamma) to
 * DIR/<scene>-step<k>.hdf5 through fl_problem_save_fclib; the folder is staged and committed
 * like a run's (manifest.json lists the files).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../sim/fl_world.h"
#include "fl_harness.h"

#define EXIT_USAGE 2
#define MAX_SETS 128


static void usage(FILE *f) {
  fprintf(f,
    "usage: frictionlab export PROBLEM|FILE.json --steps A:B --out DIR [--solver NAME]\n"
    "                          [--set key=value]... [--force]\n"
    "       frictionlab export PROBLEM|FILE.json --scene-json FILE [--steps N] [--solver NAME]\n"
    "                          [--set key=value]...\n"
    "\n"
    "Writes the contact problems of steps A to B (inclusive, 0-based; A alone is one step) of\n"
    "a scene as FCLIB global files DIR/<scene>-step<k>.hdf5, each with the solution the solver\n"
    "found (default pgs; its options with --set <solver>.key=value or key=value). Scenes with\n"
    "joints cannot be exported (FCLIB has no bilateral rows). --scene-json writes the scene\n"
    "as a scene file (docs/scene-format.md) instead: its initial state, or with --steps N the\n"
    "state after N steps with the solver; --set key=value sets scene parameters.\n");
}


static int is_json(const char *s) {
  size_t n = strlen(s);
  return n > 5 && strcmp(s + n - 5, ".json") == 0;
}


int fl_cmd_export(int argc, char **argv) {
  fl_register_all();
  const char *input = NULL, *out = NULL, *steps = NULL, *solver = "pgs", *scene_json = NULL;
  const char *scene_sets[MAX_SETS], *solver_sets[MAX_SETS];
  int nscene = 0, nsolver = 0, force = 0;
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(arg, "--force") == 0) {
      force = 1;
      continue;
    }
    if (arg[0] != '-') {
      if (input) {
        fprintf(stderr, "frictionlab export: a second problem '%s' (expected one)\n", arg);
        return EXIT_USAGE;
      }
      input = arg;
      continue;
    }
    static const char *const valued[] = {"--steps", "--out", "--solver", "--set", "--scene-json", NULL};
    const char *name = NULL, *value = NULL;
    if (!fl_harness_valued_arg(valued, argc, argv, &i, &name, &value)) {
      fprintf(stderr, "frictionlab export: unknown argument '%s'; expected --steps, --out, "
                      "--solver, --set, --scene-json, --force, --help, or a problem\n", arg);
      return EXIT_USAGE;
    }
    if (!value || !*value) {
      fprintf(stderr, "frictionlab export: %s needs a value\n", name);
      return EXIT_USAGE;
    }
    if (strcmp(name, "--steps") == 0) steps = value;
    else if (strcmp(name, "--out") == 0) out = value;
    else if (strcmp(name, "--solver") == 0) solver = value;
    else if (strcmp(name, "--scene-json") == 0) scene_json = value;
    else {
      if (!strchr(value, '=') || nscene + nsolver >= MAX_SETS) {
        fprintf(stderr, "frictionlab export: --set '%s': expected key=value\n", value);
        return EXIT_USAGE;
      }
      // scene parameter when the scene knows the key (after a scene./<name>. prefix)
      const char *k = value;
      int scene = 0;
      if (strncmp(k, "scene.", 6) == 0) {
        scene = 1;
        k += 6;
      } else if (input && strncmp(k, input, strlen(input)) == 0 && k[strlen(input)] == '.') {
        scene = 1;
        k += strlen(input) + 1;
      } else if (input && !is_json(input) && fl_scene_find(input)) {
        char key[128];
        size_t kl = (size_t)(strchr(k, '=') - k);
        if (kl < sizeof key) {
          memcpy(key, k, kl);
          key[kl] = 0;
          scene = fl_options_find(fl_scene_find(input)->params, key) != NULL;
        }
      }
      if (scene) scene_sets[nscene++] = k;
      else solver_sets[nsolver++] = value;
    }
  }
  if (!input) {
    fprintf(stderr, "frictionlab export: no problem given (a scene name or FILE.json)\n");
    return EXIT_USAGE;
  }
  if (is_json(input) && nscene > 0) {
    fprintf(stderr, "frictionlab export: --set '%s': scene files take no scene parameters here "
                    "(edit the file)\n", scene_sets[0]);
    return EXIT_USAGE;
  }
  fl_world *w = NULL;
  int rc = is_json(input) ? fl_world_load_json(input, &w)
                          : fl_scene_create(input, nscene, scene_sets, &w);
  if (rc < 0) {
    fprintf(stderr, "frictionlab export: %s\n", fl_errmsg());
    return rc == FL_ERR_UNKNOWN_PROBLEM || rc == FL_ERR_UNKNOWN_OPTION ||
                   rc == FL_ERR_OPTION_TYPE || rc == FL_ERR_OPTION_RANGE
               ? EXIT_USAGE
               : 1;
  }

  //---- the scene as a scene file, at its start or after --steps N ----
  if (scene_json) {
    long n = 0;
    if (steps) {
      char *end;
      n = strtol(steps, &end, 10);
      if (*end || n < 0) {
        fprintf(stderr, "frictionlab export: --steps %s with --scene-json: expected one step count "
                "N >= 0 (the state after N steps is written)\n", steps);
        fl_world_free(w);
        return EXIT_USAGE;
      }
    }
    if (out) {
      fprintf(stderr, "frictionlab export: --out is for FCLIB files; --scene-json names its file\n");
      fl_world_free(w);
      return EXIT_USAGE;
    }
    fl_solver *s = NULL;
    if (n > 0) {
      rc = fl_solver_create(solver, &s);
      if (rc >= 0) rc = fl_solver_set_option(s, "error_every", "0");
      for (int i = 0; rc >= 0 && i < nsolver; i++) {
        char kv[256];
        snprintf(kv, sizeof kv, "%s", solver_sets[i]);
        char *eq = strchr(kv, '=');
        *eq = 0;
        rc = fl_solver_set_option(s, kv, eq + 1);
      }
      if (rc < 0) {
        fprintf(stderr, "frictionlab export: --solver/--set: %s\n", fl_errmsg());
        fl_solver_destroy(s);
        fl_world_free(w);
        return EXIT_USAGE;
      }
    }
    for (long k = 0; rc >= 0 && k < n; k++) rc = fl_world_step(w, s, NULL);
    fl_solver_destroy(s);
    if (rc >= 0) rc = fl_world_save_json(w, scene_json);
    fl_world_free(w);
    if (rc < 0) {
      fprintf(stderr, "frictionlab export: %s\n", fl_errmsg());
      return 1;
    }
    if (n > 0) printf("%s after %ld steps with %s -> %s\n", input, n, solver, scene_json);
    else printf("%s -> %s\n", input, scene_json);
    return 0;
  }

  //---- steps as FCLIB files ----
  long a = -1, b = -1;
  if (steps) {
    char *end;
    a = strtol(steps, &end, 10);
    if (*end == ':') b = strtol(end + 1, &end, 10);
    else b = a;
    if (*end || a < 0 || b < a) a = -1;
  }
  if (a < 0 || !out) {
    fprintf(stderr, "frictionlab export: expected --steps A:B (0 <= A <= B) and --out DIR%s\n",
            steps && a < 0 ? " (bad --steps)" : "");
    fl_world_free(w);
    return EXIT_USAGE;
  }
  fl_solver *s = NULL;
  if (fl_solver_create(solver, &s) < 0) {
    fprintf(stderr, "frictionlab export: --solver: %s\n", fl_errmsg());
    fl_world_free(w);
    return EXIT_USAGE;
  }
  fl_solver_set_option(s, "error_every", "0");
  for (int i = 0; i < nsolver; i++) {
    const char *kv = solver_sets[i], *eq = strchr(kv, '=');
    char key[128];
    size_t kl = (size_t)(eq - kv);
    if (kl >= sizeof key) kl = sizeof key - 1;
    memcpy(key, kv, kl);
    key[kl] = 0;
    if (fl_solver_set_option(s, key, eq + 1) < 0) {
      fprintf(stderr, "frictionlab export: --set '%s': %s\n", kv, fl_errmsg());
      fl_solver_destroy(s);
      fl_world_free(w);
      return EXIT_USAGE;
    }
  }
  fl_results *res = NULL;
  if (fl_results_begin(out, "export", force, &res) < 0) {
    fprintf(stderr, "frictionlab export: %s\n", fl_errmsg());
    fl_solver_destroy(s);
    fl_world_free(w);
    return 1;
  }
  cJSON *man = fl_results_manifest(res);
  cJSON_AddStringToObject(man, "problem", input);
  cJSON_AddNumberToObject(man, "dt", w->dt);
  cJSON *files = cJSON_AddArrayToObject(man, "files");
  fl_results_add_solver(res, s);
  fl_progress bar;
  fl_progress_begin(&bar, "export", b + 1);
  for (long k = 0; rc >= 0 && k <= b; k++) {
    fl_step_info info;
    rc = fl_world_prepare(w, &info);
    if (rc >= 0) rc = fl_world_finish(w, s, &info);
    if (rc >= 0 && k >= a) {
      char path[4096], name[256], title[256];
      snprintf(name, sizeof name, "%s-step%ld.hdf5", w->name, k);
      snprintf(path, sizeof path, "%s/%s", fl_results_staging(res), name);
      snprintf(title, sizeof title, "FrictionLab scene %s, step %ld, t = %g s", w->name, k, w->t - w->dt);
      const double *v, *g;
      fl_world_solution(w, &v, &g);
      rc = fl_problem_save_fclib(fl_world_problem(w), path, title, v, g);
      if (rc >= 0) cJSON_AddItemToArray(files, cJSON_CreateString(name));
    }
    fl_progress_update(&bar, k + 1);
  }
  fl_progress_end(&bar);
  fl_solver_destroy(s);
  fl_world_free(w);
  if (rc < 0) {
    fprintf(stderr, "frictionlab export: %s\n", fl_errmsg());
    fl_results_abort(res);
    return 1;
  }
  if (fl_results_commit(res) < 0) {
    fprintf(stderr, "frictionlab export: %s\n", fl_errmsg());
    return 1;
  }
  printf("%s: steps %ld..%ld -> %s\n", input, a, b, out);
  return 0;
}

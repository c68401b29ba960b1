// SPDX-License-Identifier: Apache-2.0
/* check.c: `frictionlab check`, accuracy regression checks against recorded baselines: the
 * command (its flags, finding, reading and writing baselines, the loop over scenes and
 * solvers). A case is one scene (canonical, or a user's scene file) run for a stated number of
 * steps with one solver at stated options (check_run.c); what runs is the case table of
 * check_cases.c, and how a record is judged against its baseline is check_judge.c. Every
 * quantity is "lower is better"; `--update --spread-from DIR` chooses the tolerances from the
 * spread between this build's record and another build's (DIR, recorded by the other build
 * with `--update --dir DIR`). docs/check.md gives the reasons and the mutation table.
 *
 * Baselines: results/baselines/<scene>.json for canonical scenes, found beside the executable
 * (../results/baselines from the build folder) or in the source tree, or given with
 * --baselines DIR; <file>.baseline.json beside a user's scene file. Missing baselines are an
 * error unless --update.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../../sim/fl_world.h"
#include "fl_args.h"
#include "../check/check_cases.h"

/* the command line as declared (fl_args.h); copied into check_args */
typedef struct check_cli {
  fl_arg_multi pos, set_arg;
  int update;
  long steps;
  const char *only, *solver_list, *dir, *spread_dir;
} check_cli;

#define A(m) offsetof(check_cli, m)
static const fl_arg_desc check_flags[] = {
  {"--update", FL_ARG_FLAG, A(update), 0, 0, NULL, NULL,
   "record the baselines (after a deliberate change), at --steps N if given (default: per "
   "scene, see docs/check.md; a scene file: its duration); with --solver, other solvers' "
   "records in the file are kept"},
  {"--only", FL_ARG_STR, A(only), 0, 0, "LIST", NULL,
   "canonical scenes by name, comma-separated (verify: the analytic suite alone)"},
  {"--solver", FL_ARG_STR, A(solver_list), 0, 0, "a,b", NULL,
   "these solvers only (default: every registered CPU solver)"},
  {"--steps", FL_ARG_INT, A(steps), 1, MAXSTEPS, "N", NULL,
   "steps per case; without --update it must equal the baseline's"},
  {"--set", FL_ARG_MULTI, A(set_arg), 0, 0, "k=v", NULL,
   "a solver option on top of the case's (to see a regression on purpose); docs/usage.md, "
   "\"What --set means\""},
  {"--baselines", FL_ARG_STR, A(dir), 0, 0, "DIR", NULL,
   "where baselines are (--dir is the same); default: results/baselines beside the "
   "executable's folder, else in the source tree; for a scene file, FILE.baseline.json beside it"},
  {"--dir", FL_ARG_STR, A(dir), 0, 0, "DIR", NULL, NULL},
  {"--spread-from", FL_ARG_STR, A(spread_dir), 0, 0, "D", NULL,
   "with --update: set each tolerance from the spread between this build and the records "
   "another build wrote to D (max(floor, 4 x spread))"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef A

static const fl_cmd_spec check_spec = {
  "check", "[SCENE.json]", 1, offsetof(check_cli, pos),
  "Runs every canonical scene (or the scene file given) with every registered CPU solver for a\n"
  "stated number of steps and compares accuracy with the recorded baselines: failed steps,\n"
  "merit quantiles over steps, joint residual, mean iterations, deepest penetration, final\n"
  "drift and steps outside the scene's limits, each with its own tolerance; then the quick\n"
  "analytic suite of `frictionlab verify` (--only verify selects it alone): each quantity's\n"
  "verdict and error against verify.json. Prints what moved; exits 1 on a regression, on a\n"
  "case whose expected outcome changed and on a missing baseline, 2 on bad arguments. A\n"
  "recording warns about a solver failing every step, a last step far from converged (merit\n"
  "above 1e-3) and limits crossed. A scene file runs its own duration (--steps N overrides).\n",
  NULL, check_flags};


static char *read_file(const char *path) {
  FILE *f = NULL;
  // a regular file of at most 64 MiB (a baseline is a few kB)
  if (fl_open_input(path, "baseline (.json)", 64.0 * 1048576, &f) < 0) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = n >= 0 ? fl_malloc((size_t)n + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    fl_free(buf);
    buf = NULL;
  }
  if (buf) buf[n] = '\0';
  fclose(f);
  return buf;
}


/* writes JSON text to path through a temporary file */
static int write_text(const char *path, const char *text) {
  fl_outfile o;
  FL_TRY(fl_outfile_open(&o, path, "baseline"));
  if (fputs(text, o.f) < 0 || fputc('\n', o.f) == EOF) {
    fl_outfile_abort(&o);
    return fl_seterr(FL_ERR_IO, "%s: write failed", path);
  }
  return fl_outfile_commit(&o);
}


static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}


/* Finds the canonical baselines folder: beside the executable's folder (build/frictionlab ->
 * results/baselines), then in the source tree this binary was built from. Writes the places
 * looked into `looked` for the error message. Returns 1 when found (path in out), else 0. */
static int find_baselines(char *out, size_t n, char *looked, size_t nl) {
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  looked[0] = '\0';
  const char *cand[2] = {NULL, FL_SOURCE_DIR "/results/baselines"};
  char buf[4200];
  if (len > 0) {
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(buf, sizeof buf, "%s/../results/baselines", exe);
    cand[0] = buf;
  }
  for (int k = 0; k < 2; k++) {
    if (!cand[k]) continue;
    size_t u = strlen(looked);
    snprintf(looked + u, nl - u, "%s%s", u ? ", " : "", cand[k]);
    if (is_dir(cand[k])) {
      char *real = realpath(cand[k], NULL);
      snprintf(out, n, "%s", real ? real : cand[k]);
      free(real);
      return 1;
    }
  }
  return 0;
}


/* FNV-1a of a file's bytes as 16 hex digits in out (17 bytes); "" when unreadable */
static void file_hash(const char *path, char *out) {
  char *text = read_file(path);
  out[0] = '\0';
  if (!text) return;
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) h = (h ^ *p) * 1099511628211ull;
  snprintf(out, 17, "%016llx", (unsigned long long)h);
  fl_free(text);
}


static cJSON *load_json(const char *path) {
  char *text = read_file(path);
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  fl_free(text);
  return j;
}


typedef struct {
  int update, steps; /* steps 0: per scene */
  const char *only, *solver_list, *dir, *spread_dir, *file;
  int nset;
  char **set;
} check_args;


/* Checks (or records) every solver on one scene; baseline at path. Returns 0, or 2 on an
 * error of check itself (message printed). */
static int check_scene(const check_args *a, const case_input *in, const char *label,
                       const char *path, const char *other_path, check_tally *t) {
  cJSON *base = load_json(path);
  if (!a->update && !base) {
    fl__check_row_begin(t);
    printf("%-22s %-16s %-12s %-10s (no baseline at %s)\n", label, "*", "-", "MISSING", path);
    t->missing++;
    return 0;
  }
  int steps = a->steps;
  if (!a->update) {
    const cJSON *bsteps = cJSON_GetObjectItem(base, "steps");
    int bn = cJSON_IsNumber(bsteps) ? bsteps->valueint : 0;
    if (bn < 1) {
      fprintf(stderr, "frictionlab check: %s: no valid \"steps\" (expected a positive integer)\n", path);
      cJSON_Delete(base);
      return 2;
    }
    if (steps && steps != bn) {
      fprintf(stderr, "frictionlab check: %s was recorded at %d steps, not %d: drop --steps to "
              "compare, or record at %d with --update\n", path, bn, steps, steps);
      cJSON_Delete(base);
      return 2;
    }
    steps = bn;
    const char *bset = cJSON_GetStringValue(cJSON_GetObjectItem(base, "scene_set"));
    if (in->scene && bset && strcmp(bset, in->set)) {
      fprintf(stderr, "frictionlab check: %s was recorded with scene settings '%s', the case "
              "table now says '%s': record again with --update\n", path, bset, in->set);
      cJSON_Delete(base);
      return 2;
    }
    if (in->file) {
      char h[17];
      file_hash(in->file, h);
      const char *bh = cJSON_GetStringValue(cJSON_GetObjectItem(base, "scene_hash"));
      if (bh && strcmp(bh, h)) {
        fprintf(stderr, "frictionlab check: %s changed since its baseline %s was recorded "
                "(content hash %s, baseline %s): record again with --update\n", in->file, path, h, bh);
        cJSON_Delete(base);
        return 2;
      }
    }
  } else if (!steps && in->file) {
    // a user's scene runs its own duration (cut at CHECK_FILE_MAXSTEPS, and said)
    double own, duration, dt;
    if (fl__check_file_steps(in->file, &own, &duration, &dt) < 0) {
      fprintf(stderr, "frictionlab check: %s\n", fl_errmsg());
      cJSON_Delete(base);
      return 2;
    }
    steps = own < 1 ? 1 : own > CHECK_FILE_MAXSTEPS ? CHECK_FILE_MAXSTEPS : (int)own;
    printf("check: %s: %d steps (%s %g s at dt %g s; --steps N for another length)\n", in->file,
           steps, own > CHECK_FILE_MAXSTEPS ? "cut from its duration" : "its duration", duration, dt);
  } else if (!steps) {
    steps = fl__check_scene_steps(in->scene ? in->scene : "*");
  }
  cJSON *other = other_path ? load_json(other_path) : NULL;
  cJSON *out = NULL, *outs = NULL;
  if (a->update) {
    out = cJSON_CreateObject();
    cJSON_AddNumberToObject(out, "format", 2);
    cJSON_AddStringToObject(out, in->scene ? "scene" : "scene_file", in->scene ? in->scene : in->file);
    if (in->file) {
      char h[17];
      file_hash(in->file, h);
      cJSON_AddStringToObject(out, "scene_hash", h);
    }
    cJSON_AddNumberToObject(out, "steps", steps);
    cJSON_AddStringToObject(out, "scene_set", in->set);
    cJSON_AddStringToObject(out, "tolerance_rule",
                            other ? "max(floor, 4 x spread against another build)" : "floors");
    outs = cJSON_AddObjectToObject(out, "solvers");
    // a partial update keeps the other solvers' records when the steps agree
    const cJSON *bsteps = cJSON_GetObjectItem(base, "steps");
    if (a->solver_list && base && cJSON_IsNumber(bsteps) && bsteps->valueint == steps) {
      const cJSON *e;
      cJSON_ArrayForEach(e, cJSON_GetObjectItem(base, "solvers"))
        if (!fl_list_has(a->solver_list, e->string))
          cJSON_AddItemToObject(outs, e->string, cJSON_Duplicate(e, 1));
    }
  }
  const char *const *solvers = fl_solver_list();
  int err = 0;
  for (int k = 0; solvers[k] && !err; k++) {
    if (!fl_list_has(a->solver_list, solvers[k])) continue;
    // GPU solvers are checked against their CPU twins (tests/test_gpu.c), not against
    // baselines, and peer (Siconos) solvers are not FrictionLab's to check: only when named
    if (!a->solver_list &&
        (fl_solver_ops_caps(fl_solver_find(solvers[k])) & (FL_CAP_GPU | FL_CAP_PEER)))
      continue;
    const cJSON *bs = base ? cJSON_GetObjectItem(cJSON_GetObjectItem(base, "solvers"), solvers[k]) : NULL;
    if (!a->update && !bs) {
      fl__check_row_begin(t);
      const char *so = fl_solver_ops_origin(fl_solver_find(solvers[k])); // a plug-in's file
      printf("%-22s %-16s %-12s %-10s (no record of %s in %s; record it with "
             "scripts/record-baselines --solver %s%s%s)\n", label, solvers[k], "-", "MISSING",
             solvers[k], path, solvers[k], so ? " --plugin " : "", so ? so : "");
      t->missing++;
      continue;
    }
    char obuf[512];
    const char *opts = a->update ? (in->scene ? fl__check_solver_opts(in->scene, solvers[k], obuf, sizeof obuf) : "")
                                 : cJSON_GetStringValue(cJSON_GetObjectItem(bs, "options"));
    record r;
    if (fl__check_run_case(in, solvers[k], opts ? opts : "", steps, a->nset, a->set, &r) < 0) {
      fprintf(stderr, "frictionlab check: %s with %s: %s\n", label, solvers[k], fl_errmsg());
      err = 2;
      break;
    }
    t->cases++;
    if (!a->update) {
      fl__check_compare(label, solvers[k], bs, &r, steps,
                        fl__check_budget_cut(solvers[k], a->nset, a->set), t);
      if (t->bar) fl_progress_update(t->bar, t->bar->done + 1);
      continue;
    }
    cJSON *o = cJSON_AddObjectToObject(outs, solvers[k]);
    cJSON_AddStringToObject(o, "options", opts ? opts : "");
    cJSON_AddStringToObject(o, "status", fl__check_status_name(r.status));
    cJSON_AddStringToObject(o, "outcome", fl__check_outcome(&r, steps));
    if (r.status == 0) {
      for (int q = 0; q < NQ; q++) cJSON_AddNumberToObject(o, fl__check_q[q].name, r.q[q]);
      const cJSON *oc = cJSON_GetObjectItem(cJSON_GetObjectItem(other, "solvers"), solvers[k]);
      const cJSON *ost = cJSON_GetObjectItem(other, "steps");
      if (oc && (!cJSON_IsNumber(ost) || ost->valueint != steps)) oc = NULL;
      fl__check_add_tolerance(o, &r, oc);
    }
    fl__check_row_begin(t);
    printf("%-22s %-16s %-12s %-10s %s\n", label, solvers[k], "-", "recorded", fl__check_outcome(&r, steps));
    if (t->bar) fl_progress_update(t->bar, t->bar->done + 1);
    fl__check_warn_record(label, solvers[k], &r, steps);
  }
  if (a->update && !err) {
    char *txt = cJSON_Print(out);
    int rc = txt ? write_text(path, txt) : fl_seterr(FL_ERR_NOMEM, "check: out of memory");
    cJSON_free(txt);
    if (rc < 0) {
      fprintf(stderr, "frictionlab check: %s\n", fl_errmsg());
      err = 2;
    }
  }
  cJSON_Delete(out);
  cJSON_Delete(other);
  cJSON_Delete(base);
  return err;
}


/* Checks (or records) the quick verify suite against dir/verify.json. Returns 0, or 2 on an
 * error of check itself (message printed). */
static int check_verify(const check_args *a, const char *dir, check_tally *t) {
  int regressions_before = t->regressions; // the suite is one case of many quantities
  char path[8800];
  snprintf(path, sizeof path, "%s/verify.json", dir);
  cJSON *base = load_json(path);
  if (!a->update && !base) {
    printf("%-22s %-16s %-12s %-10s (no baseline at %s)\n", "verify", "*", "-", "MISSING", path);
    t->missing++;
    return 0;
  }
  // the suite's CPU solvers, narrowed by --solver
  char list[256] = "", buf[256];
  snprintf(buf, sizeof buf, "%s", fl__check_verify_solvers);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
    if (fl_list_has(a->solver_list, tok) && fl_solver_find(tok)) {
      size_t l = strlen(list);
      snprintf(list + l, sizeof list - l, "%s%s", l ? "," : "", tok);
    }
  if (!*list) {
    cJSON_Delete(base);
    return 0;
  }
  cJSON *out = NULL;
  check_verify_ctx v = {a->update, NULL, base, t, 0};
  if (a->update) {
    out = cJSON_CreateObject();
    cJSON_AddNumberToObject(out, "format", 1);
    cJSON_AddStringToObject(out, "suite", "frictionlab verify --quick (docs/verify.md)");
    cJSON_AddStringToObject(out, "tolerance_rule", fl__check_verify_rule);
    v.solvers = cJSON_AddObjectToObject(out, "solvers");
    // a partial update keeps the other solvers' records
    const cJSON *e;
    if (a->solver_list)
      cJSON_ArrayForEach(e, cJSON_GetObjectItem(base, "solvers"))
        if (!fl_list_has(a->solver_list, e->string))
          cJSON_AddItemToObject(v.solvers, e->string, cJSON_Duplicate(e, 1));
  }
  fl_verify_opts o = {1, NULL, list, a->nset, (const char *const *)a->set};
  int rc = fl__verify_run(&o, fl__check_verify_row, &v);
  if (rc >= 0 && a->update) {
    char *txt = cJSON_Print(out);
    rc = txt ? write_text(path, txt) : fl_seterr(FL_ERR_NOMEM, "check: out of memory");
    cJSON_free(txt);
    if (rc >= 0) printf("%-22s %-16s %-12s %-10s %d quantities of the quick suite\n", "verify", list, "-", "recorded", v.rows);
  }
  cJSON_Delete(out);
  cJSON_Delete(base);
  if (rc < 0) {
    fprintf(stderr, "frictionlab check: verify: %s\n", fl_errmsg());
    return 2;
  }
  t->cases++;
  t->regressed_cases += t->regressions > regressions_before;
  return 0;
}


int fl_cmd_check(int argc, char **argv) {
  check_args a = {0};
  check_cli cli;
  memset(&cli, 0, sizeof cli);
  int prc = fl_args_parse(&check_spec, argc, argv, &cli);
  if (prc) return prc == 1 ? 0 : 2;
  if (cli.pos.n > 0 && fl_scene_kind_of(cli.pos.v[0]) != FL_SCENE_FILE) {
    fprintf(stderr, "frictionlab check: unknown argument '%s' (expected a scene file ending in "
                    ".json)\n", cli.pos.v[0]);
    return 2;
  }
  a.update = cli.update;
  a.steps = (int)cli.steps;
  a.only = cli.only;
  a.solver_list = cli.solver_list;
  a.dir = cli.dir;
  a.spread_dir = cli.spread_dir;
  a.file = cli.pos.n > 0 ? cli.pos.v[0] : NULL;
  a.nset = cli.set_arg.n;
  a.set = (char **)cli.set_arg.v;
  if (a.spread_dir && !a.update) {
    fprintf(stderr, "frictionlab check: --spread-from needs --update\n");
    return 2;
  }
  if (a.file && a.only) {
    fprintf(stderr, "frictionlab check: --only selects canonical scenes; not with a scene file\n");
    return 2;
  }
  fl_register_all();
  if (a.solver_list) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", a.solver_list);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
      if (!fl_solver_find(t)) {
        fprintf(stderr, "frictionlab check: unknown solver '%s'\n", t);
        return 2;
      }
  }
  if (a.only) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", a.only);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
      if (!fl_scene_find(t) && strcmp(t, "verify")) {
        fprintf(stderr, "frictionlab check: unknown scene '%s'\n", t);
        return 2;
      }
  }
  if (a.spread_dir && !is_dir(a.spread_dir)) {
    fprintf(stderr, "frictionlab check: --spread-from %s: not a folder\n", a.spread_dir);
    return 2;
  }

  char dir[4400], looked[8400];
  check_tally t = {0};
  fl_progress bar = {0};
  if (a.file) {
    // a user's scene: its baseline beside it, or DIR/<stem>.json
    if (access(a.file, R_OK) != 0) {
      fprintf(stderr, "frictionlab check: %s: cannot read: %s\n", a.file, strerror(errno));
      return 2;
    }
    const char *base = strrchr(a.file, '/');
    base = base ? base + 1 : a.file;
    char stem[1024], path[4200], other[4200];
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(base) - 5), base);
    if (a.dir) snprintf(path, sizeof path, "%s/%s.json", a.dir, stem);
    else snprintf(path, sizeof path, "%.*s.baseline.json", (int)(strlen(a.file) - 5), a.file);
    if (a.spread_dir) snprintf(other, sizeof other, "%s/%s.json", a.spread_dir, stem);
    if (a.dir && !a.update && !is_dir(a.dir)) {
      fprintf(stderr, "frictionlab check: --baselines %s: not a folder\n", a.dir);
      return 2;
    }
    printf("%-22s %-16s %-12s %-10s %12s %12s %9s\n", "scene", "solver", "quantity", "verdict",
           "baseline", "now", "change");
    case_input in = {NULL, a.file, ""};
    int rc = check_scene(&a, &in, stem, path, a.spread_dir ? other : NULL, &t);
    if (rc) return rc;
    snprintf(dir, sizeof dir, "%s", path);
  } else {
    if (a.dir) {
      snprintf(dir, sizeof dir, "%s", a.dir);
      if (a.update && mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "frictionlab check: %s: cannot create: %s\n", dir, strerror(errno));
        return 2;
      }
      if (!is_dir(dir)) {
        fprintf(stderr, "frictionlab check: --baselines %s: not a folder (record baselines there "
                "with --update)\n", dir);
        return 2;
      }
    } else if (!find_baselines(dir, sizeof dir, looked, sizeof looked)) {
      fprintf(stderr, "frictionlab check: no baselines folder; looked in %s. Give one with "
              "--baselines DIR (record with --update --baselines DIR)\n", looked);
      return 2;
    }
    printf("%-22s %-16s %-12s %-10s %12s %12s %9s\n", "scene", "solver", "quantity", "verdict",
           "baseline", "now", "change");
    fflush(stdout);
    // progress over the (scene, solver) cases, on a terminal
    long ncase = 0;
    for (const fl_scene_desc *const *sc = fl_scene_list(); *sc; sc++) {
      if (!fl_list_has(a.only, (*sc)->name)) continue;
      for (const char *const *sv = fl_solver_list(); *sv; sv++)
        ncase += fl_list_has(a.solver_list, *sv) &&
                 (a.solver_list ||
                  !(fl_solver_ops_caps(fl_solver_find(*sv)) & (FL_CAP_GPU | FL_CAP_PEER)));
    }
    fl_progress_begin(&bar, "check", ncase);
    t.bar = &bar;
    for (const fl_scene_desc *const *sc = fl_scene_list(); *sc; sc++) {
      const char *scene = (*sc)->name;
      if (!fl_list_has(a.only, scene)) continue;
      char path[8800], other[8800];
      snprintf(path, sizeof path, "%s/%s.json", dir, scene);
      if (a.spread_dir) snprintf(other, sizeof other, "%s/%s.json", a.spread_dir, scene);
      case_input in = {scene, NULL, fl__check_scene_set(scene)};
      int rc = check_scene(&a, &in, scene, path, a.spread_dir ? other : NULL, &t);
      if (rc) {
        fl_progress_end(&bar);
        t.bar = NULL;
        return rc;
      }
    }
    fl__check_row_begin(&t);
    bar.active = 0; // the table is complete: no closing bar under it
    t.bar = NULL;
    // the quick analytic suite (its own durations; --steps does not apply)
    if (fl_list_has(a.only, "verify")) {
      int rc = check_verify(&a, dir, &t);
      if (rc) return rc;
    }
  }
  if (a.update) {
    printf("check --update: %d cases recorded in %s\n", t.cases, dir);
    return 0;
  }
  // a case is one solver on one scene; each case compares several quantities
  printf("check: %d case%s, %d quantities against %s: %d regressions in %d case%s, %d changed "
         "outcomes, %d without baseline\n", t.cases, t.cases == 1 ? "" : "s", t.quantities, dir,
         t.regressions, t.regressed_cases, t.regressed_cases == 1 ? "" : "s", t.changed, t.missing);
  if (t.missing)
    printf("check: a case without a baseline fails; record it with scripts/record-baselines "
           "--solver NAME (check's options pass through, --plugin PATH and --only SCENE "
           "included), or in this build alone with frictionlab check --update --solver NAME "
           "(docs/usage.md, \"Adding a solver\")\n");
  return t.regressions || t.changed || t.missing ? 1 : 0;
}

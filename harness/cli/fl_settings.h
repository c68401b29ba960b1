// SPDX-License-Identifier: Apache-2.0
/* fl_settings.h: what `--set key=value` means, for every command that takes it.
 *
 * Each setting is parsed once into (scope, target, key, value). The rule, in order (also in
 * docs/usage.md, "What --set means"):
 *
 *   1. "scene.KEY=V" or "<scene name>.KEY=V": a parameter of the scene (canonical scenes:
 *      their parameter table; scene files: dt, duration, margin, fem_solve). `--scene-set
 *      KEY=V` is the same scope. A command without a scene refuses it.
 *   2. "<solver>.KEY=V" where <solver> is one the command runs: that solver's option.
 *      "mujoco.KEY=V" or "<peer>.KEY=V": the peer simulators' option (fl_peer.h).
 *   3. "<solver>.KEY=V" where <solver> is registered (or a peer) but not run by this command:
 *      ignored, with a note on stderr, so that one list of settings serves several runs.
 *   4. "KEY=V" (or a dotted key whose first part names no solver, e.g. "lin.max_iter"): a scene
 *      parameter when the scene has a parameter KEY, else an option of every solver run.
 *      When KEY is both a scene parameter and an option of a solver run, the setting is
 *      refused as ambiguous: write scene.KEY or <solver>.KEY.
 *
 * Later settings win over earlier ones for the same key and scope.
 */
#ifndef FL_SETTINGS_H
#define FL_SETTINGS_H

#include "../../solvers/fl_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FL_MAX_SETTINGS 128

typedef enum fl_set_scope {
  FL_SET_SCENE,  /* a scene parameter */
  FL_SET_SOLVER, /* one solver's option (target names it) */
  FL_SET_PEER,   /* the peer simulators' option (target: "mujoco" or a peer's name) */
  FL_SET_EVERY,  /* an option of every solver run */
  FL_SET_IGNORED /* for a registered solver or peer this command does not run (target) */
} fl_set_scope;

typedef struct fl_setting {
  fl_set_scope scope;
  const char *text; /* as given ("pgs.omega=1.2"); not owned */
  const char *kv;   /* "KEY=V" after the scope's prefix, inside text */
  char target[64];  /* SOLVER, PEER, IGNORED: the prefix; "" otherwise */
  char key[128];    /* KEY */
  char full[192];   /* the key as written, prefix included ("pgs.omega") */
  const char *value;
} fl_setting;

/* What a command knows when it sorts settings. */
typedef struct fl_settings_ctx {
  const char *cmd;   /* "run": messages start "frictionlab run: " */
  const char *scene; /* a canonical scene's name, a scene file (*.json), or NULL: no scene */
  int nsolvers;      /* the solvers and peers the command runs */
  const char *const *solvers;
  int quiet;         /* 1: no note for ignored settings */
} fl_settings_ctx;

typedef struct fl_settings {
  fl_settings_ctx ctx;
  int n;
  fl_setting s[FL_MAX_SETTINGS];
} fl_settings;

/* Starts an empty list for ctx (copied; its strings must outlive st). */
void fl_settings_init(fl_settings *st, const fl_settings_ctx *ctx);

/* Sorts one setting by the rule above and appends it. scene_only: 1 for --scene-set (the
 * scope is the scene whatever the key). Returns FL_OK; FL_ERR_INVAL (not KEY=V, too many,
 * a scene setting without a scene, an ambiguous key) with a message quoting the setting. */
int fl_settings_add(fl_settings *st, const char *text, int scene_only);

/* The scene's settings as "KEY=V" strings (pointers into the texts), in order: up to max into
 * kv; returns the count. */
int fl_settings_scene(const fl_settings *st, const char **kv, int max);

/* The settings a solver or peer receives (every non-scene, non-ignored one, as given), for
 * fl_peer_create: up to max into out; returns the count. */
int fl_settings_for_peers(const fl_settings *st, const char **out, int max);

/* Applies to solver s the EVERY settings and the SOLVER settings whose target is s's name, in
 * the order given (the key goes to fl_solver_set_option as written, prefix included). Returns
 * FL_OK or fl_solver_set_option's error and message; *failed (may be NULL) gets the index of
 * the refused setting, -1 when none. */
int fl_settings_apply(const fl_settings *st, fl_solver *s, int *failed);

/* For commands that keep two lists (bench: --set and --scene-set): sorts the nset settings in
 * set by the rule, moves those of the scene's scope (their KEY=V) to the end of scene
 * (*nscene of max_scene used) and keeps the others in set, in order (*nset updated). FL_OK or
 * fl_settings_add's error. */
int fl_settings_split(const fl_settings_ctx *ctx, int *nset, const char **set, int *nscene,
                      const char **scene, int max_scene);

/* A scene file's run parameters and their --set: fl_scene_run_params and fl_scene_file_apply
 * (sim/fl_world.h). */

/* 1 when `key` is a parameter of ctx's scene (canonical table or a scene file's keys). */
int fl_settings_scene_has(const char *scene, const char *key);

#ifdef __cplusplus
}
#endif
/* --mem-limit GB of run and export: the limit memory estimates are checked against
 * (fl_mem_limit(); FL_MEM_LIMIT_MB for this process). NULL: unchanged. Returns 0, or 2 after a
 * message on stderr naming `cmd` when gb is not a number in (0, 1e6]. */
int fl_cli_mem_limit(const char *cmd, const char *gb);

#endif /* FL_SETTINGS_H */

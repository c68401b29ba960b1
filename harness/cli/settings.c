// SPDX-License-Identifier: Apache-2.0
/* settings.c: `--set key=value` sorted once into scene, solver, peer and every-solver scopes
 * (the rule is in fl_settings.h and docs/usage.md). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../sim/fl_world.h"
#include "../../peers/fl_peer.h"
#include "../fl_harness.h"
#include "fl_settings.h"

int fl_cli_mem_limit(const char *cmd, const char *gb) {
  if (!gb) return 0;
  char *end;
  double g = strtod(gb, &end);
  if (end == gb || *end || !(g > 0) || !(g <= 1e6)) {
    fprintf(stderr, "frictionlab %s: --mem-limit %s: expected a number of GB in (0, 1e6]\n", cmd,
            gb);
    return 2;
  }
  char mb[64];
  snprintf(mb, sizeof mb, "%.17g", g * 1024);
  setenv("FL_MEM_LIMIT_MB", mb, 1);
  return 0;
}


void fl_settings_init(fl_settings *st, const fl_settings_ctx *ctx) {
  memset(st, 0, sizeof *st);
  st->ctx = *ctx;
}


int fl_settings_scene_has(const char *scene, const char *key) {
  if (!scene) return 0;
  if (fl_scene_kind_of(scene) != FL_SCENE_BUILTIN)
    return fl_options_find(fl_scene_run_params(), key) != NULL;
  const fl_scene_desc *d = fl_scene_find(scene);
  return d && fl_options_find(d->params, key) != NULL;
}


static int runs(const fl_settings_ctx *c, const char *name) {
  for (int i = 0; i < c->nsolvers; i++)
    if (strcmp(c->solvers[i], name) == 0) return 1;
  return 0;
}


/* the first solver run that has an option `key`, or NULL */
static const char *solver_with(const fl_settings_ctx *c, const char *key) {
  for (int i = 0; i < c->nsolvers; i++) {
    fl_solver *s = NULL;
    char buf[FL_OPT_STRLEN];
    if (!fl_solver_find(c->solvers[i]) || fl_solver_create(c->solvers[i], &s) < 0) continue;
    int has = fl_solver_get_option(s, key, buf, sizeof buf) >= 0;
    fl_solver_destroy(s);
    if (has) return c->solvers[i];
  }
  return NULL;
}


int fl_settings_add(fl_settings *st, const char *text, int scene_only) {
  const fl_settings_ctx *c = &st->ctx;
  const char *eq = strchr(text, '=');
  if (!eq || eq == text)
    return fl_seterr(FL_ERR_INVAL, "--set '%s': expected key=value (for example max_iter=200, "
                     "pgs.omega=1.2 or scene.dt=0.01)", text);
  if (st->n == FL_MAX_SETTINGS)
    return fl_seterr(FL_ERR_INVAL, "--set '%s': more than %d settings", text, FL_MAX_SETTINGS);
  fl_setting *t = &st->s[st->n];
  memset(t, 0, sizeof *t);
  t->text = text;
  t->value = eq + 1;
  size_t kl = (size_t)(eq - text);
  if (kl >= sizeof t->full) return fl_seterr(FL_ERR_INVAL, "--set '%s': key too long", text);
  memcpy(t->full, text, kl);
  t->full[kl] = 0;

  // the prefix: the key's part before its first '.'
  char prefix[sizeof t->full];
  snprintf(prefix, sizeof prefix, "%s", t->full);
  char *dot = strchr(prefix, '.');
  if (dot) *dot = 0;
  int scene_prefix = dot && c->scene && (strcmp(prefix, "scene") == 0 || strcmp(prefix, c->scene) == 0);
  if (dot && !c->scene && strcmp(prefix, "scene") == 0)
    return fl_seterr(FL_ERR_INVAL, "--set '%s': no scene here to set", text);
  const char *k = scene_prefix ? fl_scene_key(text, c->scene) : text; // "scene." or "<scene>."

  if (scene_only || scene_prefix) {
    if (!c->scene) return fl_seterr(FL_ERR_INVAL, "--set '%s': no scene here to set", text);
    t->scope = FL_SET_SCENE;
  } else if (dot && (runs(c, prefix) || (fl_peer_prefix(prefix) && c->nsolvers > 0))) {
    // a solver run here, or the peers (whose options they sort themselves, fl_peer.h)
    t->scope = fl_peer_prefix(prefix) ? FL_SET_PEER : FL_SET_SOLVER;
    snprintf(t->target, sizeof t->target, "%.*s", (int)sizeof t->target - 1, prefix);
  } else if (dot && (fl_solver_find(prefix) || fl_peer_prefix(prefix))) {
    t->scope = FL_SET_IGNORED;
    snprintf(t->target, sizeof t->target, "%.*s", (int)sizeof t->target - 1, prefix);
    if (!c->quiet)
      fprintf(stderr, "frictionlab %s: note: --set '%s': %s is not run here; ignored\n", c->cmd,
              text, prefix);
  } else {
    // no solver prefix: the scene's parameter, else every solver's option
    char key[sizeof t->full];
    snprintf(key, sizeof key, "%.*s", (int)(eq - k), k);
    int in_scene = fl_settings_scene_has(c->scene, key);
    const char *solver = in_scene ? solver_with(c, key) : NULL;
    if (solver)
      return fl_seterr(FL_ERR_INVAL, "--set '%s': '%s' is both a parameter of %s and an option "
                       "of %s; write scene.%s or %s.%s", text, key, c->scene, solver, text,
                       solver, text);
    t->scope = in_scene ? FL_SET_SCENE : FL_SET_EVERY;
  }
  t->kv = k;
  snprintf(t->key, sizeof t->key, "%.*s", (int)(eq - k), k);
  st->n++;
  return FL_OK;
}


int fl_settings_scene(const fl_settings *st, const char **kv, int max) {
  int n = 0;
  for (int i = 0; i < st->n && n < max; i++)
    if (st->s[i].scope == FL_SET_SCENE) kv[n++] = st->s[i].kv;
  return n;
}


int fl_settings_for_peers(const fl_settings *st, const char **out, int max) {
  int n = 0;
  for (int i = 0; i < st->n && n < max; i++)
    if (st->s[i].scope != FL_SET_SCENE && st->s[i].scope != FL_SET_IGNORED) out[n++] = st->s[i].text;
  return n;
}


int fl_settings_apply(const fl_settings *st, fl_solver *s, int *failed) {
  const char *name = fl_solver_name(s);
  if (failed) *failed = -1;
  for (int i = 0; i < st->n; i++) {
    const fl_setting *t = &st->s[i];
    if (t->scope != FL_SET_EVERY && !(t->scope == FL_SET_SOLVER && strcmp(t->target, name) == 0))
      continue;
    int rc = fl_solver_set_option(s, t->full, t->value);
    if (rc < 0) {
      if (failed) *failed = i;
      return rc;
    }
  }
  return FL_OK;
}


int fl_settings_split(const fl_settings_ctx *ctx, int *nset, const char **set, int *nscene,
                      const char **scene, int max_scene) {
  static fl_settings st;
  fl_settings_init(&st, ctx);
  int keep = 0;
  for (int i = 0; i < *nset; i++) {
    FL_TRY(fl_settings_add(&st, set[i], 0));
    const fl_setting *t = &st.s[st.n - 1];
    if (t->scope != FL_SET_SCENE) {
      set[keep++] = set[i];
    } else {
      if (*nscene == max_scene) return fl_seterr(FL_ERR_INVAL, "--set '%s': too many", set[i]);
      scene[(*nscene)++] = t->kv;
    }
  }
  *nset = keep;
  return FL_OK;
}


int fl_harness_apply_sets(fl_solver *s, int nset, char *const *set) {
  // one solver, no scene: the rule of fl_settings.h, without notes
  static fl_settings st;
  const char *name = fl_solver_name(s);
  fl_settings_ctx ctx = {"bench", NULL, 1, &name, 1};
  fl_settings_init(&st, &ctx);
  for (int k = 0; k < nset; k++) FL_TRY(fl_settings_add(&st, set[k], 0));
  return fl_settings_apply(&st, s, NULL);
}

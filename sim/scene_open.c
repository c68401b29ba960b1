// SPDX-License-Identifier: Apache-2.0
/* scene_open.c: one way to open a scene by name or file (fl_scene_open), and the one table of
 * run parameters that scene files and MJCF models take (fl_scene_run_params; canonical scenes
 * embed the same rows, FL__COMMON_SPEC in scenes_impl.h, with their own defaults). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "scenes_impl.h"

fl_scene_kind fl_scene_kind_of(const char *name_or_path) {
  size_t n = name_or_path ? strlen(name_or_path) : 0;
  if (n > 5 && strcmp(name_or_path + n - 5, ".json") == 0) return FL_SCENE_FILE;
  if (n > 4 && strcmp(name_or_path + n - 4, ".xml") == 0) return FL_SCENE_MJCF;
  return FL_SCENE_BUILTIN;
}


const char *fl_scene_key(const char *key, const char *scene) {
  if (strncmp(key, "scene.", 6) == 0) return key + 6;
  size_t n = scene ? strlen(scene) : 0;
  if (n && strncmp(key, scene, n) == 0 && key[n] == '.') return key + n + 1;
  return key;
}


/* a scene file's or model's run parameters: the common ones and the FEM solve */
typedef struct run_params {
  fl_scene_common c;
  int fem_solve; /* index into "full|schur" */
} run_params;

static const fl_option_desc run_table[] = {
  FL__COMMON_SPEC(run_params, 1e-3, 1, 1e-3, 0),
  {"fem_solve", FL_OPT_ENUM, offsetof(run_params, fem_solve), 0, 1, 1, "full|schur",
   "deformable bodies: the sparse block of every free dof, or the Schur complement"},
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}};


const fl_option_desc *fl_scene_run_params(void) {
  return run_table;
}


int fl_scene_file_apply(fl_world *w, const char *path, int n, const char *const *kv) {
  if (!w || !path || (n > 0 && !kv))
    return fl_seterr(FL_ERR_INVAL, "fl_scene_file_apply: NULL argument");
  run_params p = {{w->dt, w->duration, w->margin, w->speculative},
                  w->fem_solve == FL_FEM_FULL ? 0 : 1};
  for (int i = 0; i < n; i++) {
    const char *eq = strchr(kv[i], '=');
    char key[128];
    snprintf(key, sizeof key, "%.*s", eq ? (int)(eq - kv[i]) : 0, kv[i]);
    const char *k = fl_scene_key(key, NULL);
    if (eq && fl_options_find(run_table, k)) {
      // a known key: its type or range error as fl_options_set words it
      int rc = fl_options_set(run_table, &p, path, k, eq + 1);
      if (rc < 0) return fl_seterr(rc, "--set scene.%s: %s", kv[i], fl_errmsg());
      continue;
    }
    return fl_seterr(FL_ERR_UNKNOWN_OPTION,
                     "%s: --set scene.%s: expected dt (> 0), duration or margin (>= 0) with a "
                     "number, speculative (0 or 1), or fem_solve=full|schur%s", path, kv[i],
                     strcmp(k, "mu") == 0 ? "; friction is set per body pair in the file "
                     "(docs/scene-format.md)" : "");
  }
  w->dt = p.c.dt;
  w->duration = p.c.duration;
  w->margin = p.c.margin;
  w->speculative = p.c.speculative;
  w->fem_solve = p.fem_solve == 0 ? FL_FEM_FULL : FL_FEM_SCHUR;
  return FL_OK;
}


int fl_scene_open(const char *name_or_path, int n, const char *const *kv,
                  fl_scene_reader read_model, fl_world **out) {
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_scene_open: NULL argument");
  *out = NULL;
  if (!name_or_path || (n > 0 && !kv))
    return fl_seterr(FL_ERR_INVAL, "fl_scene_open: NULL argument");
  fl_scene_kind kind = fl_scene_kind_of(name_or_path);
  if (kind == FL_SCENE_BUILTIN) return fl_scene_create(name_or_path, n, kv, out);
  fl_world *w = NULL;
  if (kind == FL_SCENE_FILE) {
    FL_TRY(fl_world_load_json(name_or_path, &w));
  } else if (!read_model) {
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: an MJCF model needs a reader (fl_world_from_mjcf, "
                     "peers/fl_peer.h)", name_or_path);
  } else {
    FL_TRY(read_model(name_or_path, 0, NULL, &w));
  }
  int rc = fl_scene_file_apply(w, name_or_path, n, kv);
  if (rc < 0) {
    fl_world_free(w);
    return rc;
  }
  *out = w;
  return FL_OK;
}

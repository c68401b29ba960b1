// SPDX-License-Identifier: Apache-2.0
/* scene_json_impl.h: what the scene-file readers and writers share (scene_json.c,
 * scene_json_fem.c, scene_json_kit.c). Never included outside sim/ and tests/.
 */
#ifndef FL_SCENE_JSON_IMPL_H
#define FL_SCENE_JSON_IMPL_H
// layer 4: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 4
#error "sim/scene_json_impl.h is in sim/, layer 4: a lower layer may not include it (docs/layers.md)"
#endif

#include <stddef.h>

#include <cjson/cJSON.h>

#include "world_impl.h"

/* The file being read (for messages) and the world it fills. */
/* The loader's index of body names (rigid and deformable): open addressing over the world's
 * arrays, so that a file of N bodies loads in O(N), not O(N^2) (issue 51). */
typedef struct fl__names {
  long *slot; /* 0 empty; b + 1 rigid body b; -(k + 1) deformable body k */
  size_t cap, n;
} fl__names;

typedef struct jctx {
  const char *file;
  fl_world *w;
  fl__names *names; /* may be NULL: lookups fall back to the world's linear search */
} jctx;

/* the body named `name`: FL_OK and *rigid >= 0 or *fem >= 0 (the other -1), both -1 if none */
void fl__names_find(const jctx *c, const char *name, int *rigid, int *fem);
/* indexes the last rigid (fem = 0) or deformable (fem = 1) body added; FL_OK or FL_ERR_NOMEM */
int fl__names_add_last(const jctx *c, int fem);
void fl__names_free(fl__names *t);

//---- scene_json_kit.c: checked accessors ----

/* FL_ERR_FORMAT with "<file>: <path>: <message>". */
__attribute__((format(printf, 3, 4))) int fl__json_jerr(const jctx *c, const char *path,
                                                        const char *fmt, ...);
int fl__json_name(const jctx *c, const char *path, const char *key, const char *name,
                  const char *what);
/* numbers fl__json_num was given that were inf or nan, since the caller reset it */
extern _Thread_local long fl__json_nonfinite;
int fl__json_jfail(const jctx *c, const char *path, int rc);
void fl__json_sub(char *out, size_t n, const char *path, const char *key);
void fl__json_idx(char *out, size_t n, const char *path, int i);
int fl__json_check_keys(const jctx *c, const cJSON *obj, const char *path,
                        const char *const *allowed);
int fl__json_get_num(const jctx *c, const cJSON *obj, const char *key, const char *path,
                     int required, double dflt, double lo, double hi, int inf_ok, double *out);
int fl__json_get_vec(const jctx *c, const cJSON *obj, const char *key, const char *path, int n,
                     int required, const double *dflt, int positive, double *out);
int fl__json_get_str(const jctx *c, const cJSON *obj, const char *key, const char *path,
                     const char *dflt, const char **out);
int fl__json_get_enum(const jctx *c, const cJSON *obj, const char *key, const char *path,
                      const char *choices, int dflt, int *out);
int fl__json_get_body_ref(const jctx *c, const cJSON *obj, const char *key, const char *path,
                          int allow_world, int *out);
/* The material named by obj.key (default "default") into *out. */
int fl__json_material_ref(const jctx *c, const cJSON *obj, const char *key, const char *path,
                          int *out);
cJSON *fl__json_num(double x);
cJSON *fl__json_vec(const double *x, int n);

//---- scene_json_fem.c: deformable bodies ----

/* Adds the deformable body described by b to c->w. */
int fl__json_parse_deformable(const jctx *c, const cJSON *b, const char *path);
/* Deformable body k of w as a scene-file entry (NULL when out of memory). */
cJSON *fl__json_deformable(const fl_world *w, fl_int k);

#endif /* FL_SCENE_JSON_IMPL_H */

// SPDX-License-Identifier: Apache-2.0
/* scene_json_kit.c: the checked accessors of scene files (scene_json.c, scene_json_fem.c):
 * error messages naming the file and the JSON path, typed getters, material references, and
 * the number writer that reads back to the same double.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fl_fem.h"
#include "scene_json_impl.h"

//---- error context ----

int fl__json_jerr(const jctx *c, const char *path, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return fl_seterr(FL_ERR_FORMAT, "%s: %s: %s", c->file, path[0] ? path : "(top level)", msg);
}


/* The error of a call that failed on an element: FL_ERR_FORMAT naming the path, except out of
 * memory, which keeps its code. */
int fl__json_jfail(const jctx *c, const char *path, int rc) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s", fl_errmsg());
  if (rc == FL_ERR_NOMEM) return fl_seterr(rc, "%s: %s: %s", c->file, path, msg);
  return fl__json_jerr(c, path, "%s", msg);
}


//---- the index of body names ----

static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}


static const char *slot_name(const fl_world *w, long v) {
  return v > 0 ? w->body[v - 1].name : w->fem[-v - 1]->name;
}


void fl__names_find(const jctx *c, const char *name, int *rigid, int *fem) {
  *rigid = *fem = -1;
  const fl__names *t = c->names;
  if (!t) {
    *rigid = fl_world_find_body(c->w, name);
    *fem = fl_world_find_fem(c->w, name);
    return;
  }
  if (!t->cap) return;
  for (size_t i = name_hash(name) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
    long v = t->slot[i];
    if (!v) return;
    if (strcmp(slot_name(c->w, v), name) == 0) {
      if (v > 0) *rigid = (int)(v - 1);
      else *fem = (int)(-v - 1);
      return;
    }
  }
}


static void names_put(fl__names *t, const fl_world *w, long v) {
  for (size_t i = name_hash(slot_name(w, v)) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
    if (!t->slot[i]) {
      t->slot[i] = v;
      t->n++;
      return;
    }
  }
}


int fl__names_add_last(const jctx *c, int fem) {
  fl__names *t = c->names;
  if (!t) return FL_OK;
  if (2 * (t->n + 1) > t->cap) { // load at most 1/2: rebuild at twice the size
    size_t cap = t->cap ? 2 * t->cap : 1024;
    long *old = t->slot;
    size_t ocap = t->cap;
    t->slot = fl_calloc(cap, sizeof(long));
    if (!t->slot) {
      t->slot = old;
      return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (name index)", c->file);
    }
    t->cap = cap;
    t->n = 0;
    for (size_t i = 0; i < ocap; i++)
      if (old[i]) names_put(t, c->w, old[i]);
    fl_free(old);
  }
  names_put(t, c->w, fem ? -(long)c->w->nfem : (long)c->w->nbody);
  return FL_OK;
}


void fl__names_free(fl__names *t) {
  fl_free(t->slot);
  t->slot = NULL;
  t->cap = t->n = 0;
}


/* A name read at path.key is an identifier (fl_name_check): FL_OK or FL_ERR_FORMAT naming the
 * file, the place and the offending character. */
int fl__json_name(const jctx *c, const char *path, const char *key, const char *name,
                  const char *what) {
  char p[256], where[600];
  fl__json_sub(p, sizeof p, path, key);
  snprintf(where, sizeof where, "%s: %s", c->file, p);
  if (fl_name_check(name, where, what) < 0) return fl_seterr(FL_ERR_FORMAT, "%s", fl_errmsg());
  return FL_OK;
}


/* path + "." + key, or path + "[i]" (paths are kept short enough for 256-byte buffers) */
void fl__json_sub(char *out, size_t n, const char *path, const char *key) {
  if (path[0]) snprintf(out, n, "%.190s.%.60s", path, key);
  else snprintf(out, n, "%.60s", key);
}


void fl__json_idx(char *out, size_t n, const char *path, int i) {
  snprintf(out, n, "%.190s[%d]", path, i);
}


/* Rejects keys outside `allowed` (typos would otherwise be silently ignored). */
int fl__json_check_keys(const jctx *c, const cJSON *obj, const char *path,
                        const char *const *allowed) {
  if (!cJSON_IsObject(obj)) return fl__json_jerr(c, path, "expected an object");
  for (const cJSON *it = obj->child; it; it = it->next) {
    int ok = 0;
    for (int k = 0; allowed[k]; k++) ok |= strcmp(it->string, allowed[k]) == 0;
    if (!ok) {
      char list[512] = "";
      for (int k = 0; allowed[k]; k++) {
        strncat(list, k ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, allowed[k], sizeof list - strlen(list) - 1);
      }
      char p[256];
      fl__json_sub(p, sizeof p, path, it->string);
      return fl__json_jerr(c, p, "unknown key; expected one of: %s", list);
    }
  }
  return FL_OK;
}


/* A number (or "inf"/"-inf" when inf_ok) in [lo, hi]; missing: *out = dflt unless required. */
int fl__json_get_num(const jctx *c, const cJSON *obj, const char *key, const char *path,
                     int required, double dflt, double lo, double hi, int inf_ok, double *out) {
  char p[256];
  fl__json_sub(p, sizeof p, path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (required) return fl__json_jerr(c, p, "missing; expected a number in [%g, %g]", lo, hi);
    *out = dflt;
    return FL_OK;
  }
  double x;
  if (cJSON_IsNumber(v)) {
    x = v->valuedouble;
  } else if (inf_ok && cJSON_IsString(v) && strcmp(v->valuestring, "inf") == 0) {
    x = INFINITY;
  } else {
    return fl__json_jerr(c, p, "expected a number%s in [%g, %g]", inf_ok ? " (or \"inf\")" : "", lo,
                         hi);
  }
  if (!(x >= lo && x <= hi) || (isinf(x) && !inf_ok))
    return fl__json_jerr(c, p, "%g is out of range; expected a number in [%g, %g]", x, lo, hi);
  *out = x;
  return FL_OK;
}


/* An array of exactly n finite numbers; missing: dflt (or zeros) unless required. */
int fl__json_get_vec(const jctx *c, const cJSON *obj, const char *key, const char *path, int n,
                     int required, const double *dflt, int positive, double *out) {
  char p[256];
  fl__json_sub(p, sizeof p, path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (required)
      return fl__json_jerr(c, p, "missing; expected an array of %d %snumbers", n,
                           positive ? "positive " : "");
    for (int i = 0; i < n; i++) out[i] = dflt ? dflt[i] : 0;
    return FL_OK;
  }
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n)
    return fl__json_jerr(c, p, "expected an array of %d %snumbers", n, positive ? "positive " : "");
  int i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || (positive && !(e->valuedouble > 0))) {
      char q[256];
      fl__json_idx(q, sizeof q, p, i);
      return fl__json_jerr(c, q, "expected a finite %snumber (an array of %d)",
                           positive ? "positive " : "", n);
    }
    out[i] = e->valuedouble;
  }
  return FL_OK;
}


int fl__json_get_str(const jctx *c, const cJSON *obj, const char *key, const char *path,
                     const char *dflt, const char **out) {
  char p[256];
  fl__json_sub(p, sizeof p, path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (!dflt) return fl__json_jerr(c, p, "missing; expected a string");
    *out = dflt;
    return FL_OK;
  }
  if (!cJSON_IsString(v)) return fl__json_jerr(c, p, "expected a string");
  *out = v->valuestring;
  return FL_OK;
}


/* One of "a|b|c" -> its index. */
int fl__json_get_enum(const jctx *c, const cJSON *obj, const char *key, const char *path,
                      const char *choices, int dflt, int *out) {
  const char *s = NULL;
  char p[256];
  fl__json_sub(p, sizeof p, path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (dflt < 0) return fl__json_jerr(c, p, "missing; expected one of %s", choices);
    *out = dflt;
    return FL_OK;
  }
  if (!cJSON_IsString(v)) return fl__json_jerr(c, p, "expected a string, one of %s", choices);
  s = v->valuestring;
  int k = 0;
  for (const char *t = choices; *t; k++) {
    const char *bar = strchr(t, '|');
    size_t len = bar ? (size_t)(bar - t) : strlen(t);
    if (strlen(s) == len && strncmp(s, t, len) == 0) {
      *out = k;
      return FL_OK;
    }
    if (!bar) break;
    t = bar + 1;
  }
  return fl__json_jerr(c, p, "'%s' is not one of %s", s, choices);
}


/* A body by name or index; null (when allow_world) is -1, the world. */
int fl__json_get_body_ref(const jctx *c, const cJSON *obj, const char *key, const char *path,
                          int allow_world, int *out) {
  char p[256];
  fl__json_sub(p, sizeof p, path, key);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v || cJSON_IsNull(v)) {
    if (allow_world) {
      *out = -1;
      return FL_OK;
    }
    return fl__json_jerr(c, p, "missing; expected a body name or index");
  }
  if (cJSON_IsString(v)) {
    int b, f;
    fl__names_find(c, v->valuestring, &b, &f);
    if (b < 0) return fl__json_jerr(c, p, "no body named '%s'", v->valuestring);
    *out = b;
    return FL_OK;
  }
  if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && v->valuedouble >= 0 &&
      v->valuedouble < c->w->nbody) {
    *out = (int)v->valuedouble;
    return FL_OK;
  }
  return fl__json_jerr(c, p, "expected a body name or an index in [0, %d)%s", (int)c->w->nbody,
              allow_world ? " (or null for the world)" : "");
}


int fl__json_material_ref(const jctx *c, const cJSON *obj, const char *key, const char *path,
                          int *out) {
  const char *name = NULL;
  FL_TRY(fl__json_get_str(c, obj, key, path, "default", &name));
  *out = fl_world_find_material(c->w, name);
  if (*out < 0) {
    char p[256];
    fl__json_sub(p, sizeof p, path, key);
    return fl__json_jerr(c, p, "no material named '%s' (define it in \"materials\")", name);
  }
  return FL_OK;
}


/* A number with 17 significant digits, so that it reads back to the same double (cJSON's own
 * printer accepts a one-ulp difference). */
_Thread_local long fl__json_nonfinite = 0;

cJSON *fl__json_num(double x) {
  char buf[40];
  if (x == 0) return cJSON_CreateNumber(0);
  // inf and nan are not JSON: counted (the writer refuses the scene) and written as null
  if (!isfinite(x)) {
    fl__json_nonfinite++;
    return cJSON_CreateNull();
  }
  snprintf(buf, sizeof buf, "%.17g", x);
  return cJSON_CreateRaw(buf);
}


cJSON *fl__json_vec(const double *x, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, fl__json_num(x[i]));
  return a;
}

// SPDX-License-Identifier: Apache-2.0
/* options.c: typed key=value option tables. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fl_core.h"

static const char *type_name(fl_opt_type t) {
  switch (t) {
  case FL_OPT_INT: return "int";
  case FL_OPT_REAL: return "real";
  case FL_OPT_BOOL: return "bool";
  case FL_OPT_ENUM: return "enum";
  case FL_OPT_STRING: return "string";
  }
  return "?";
}


// index of `value` in "a|b|c", or -1
static int enum_index(const char *choices, const char *value) {
  int idx = 0;
  const char *p = choices;
  size_t n = strlen(value);
  while (p && *p) {
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    if (len == n && strncmp(p, value, n) == 0) return idx;
    idx++;
    p = bar ? bar + 1 : NULL;
  }
  return -1;
}


// copies the idx-th choice into buf
static void enum_name(const char *choices, int idx, char *buf, size_t n) {
  const char *p = choices;
  for (int k = 0; p && k < idx; k++) {
    p = strchr(p, '|');
    if (p) p++;
  }
  if (!p) {
    snprintf(buf, n, "%d", idx);
    return;
  }
  const char *bar = strchr(p, '|');
  size_t len = bar ? (size_t)(bar - p) : strlen(p);
  if (len >= n) len = n - 1;
  memcpy(buf, p, len);
  buf[len] = '\0';
}


void fl_options_defaults(const fl_option_desc *t, void *obj) {
  char *base = obj;
  for (; t->key; t++) {
    switch (t->type) {
    case FL_OPT_INT:
    case FL_OPT_BOOL:
    case FL_OPT_ENUM: *(int *)(base + t->offset) = (int)t->dflt; break;
    case FL_OPT_REAL: *(double *)(base + t->offset) = t->dflt; break;
    case FL_OPT_STRING:
      snprintf(base + t->offset, FL_OPT_STRLEN, "%s", t->choices ? t->choices : "");
      break;
    }
  }
}


const fl_option_desc *fl_options_find(const fl_option_desc *t, const char *key) {
  for (; t && t->key; t++) {
    if (strcmp(t->key, key) == 0) return t;
  }
  return NULL;
}


static int parse_bool(const char *s, int *out) {
  static const char *yes[] = {"1", "true", "yes", "on"}, *no[] = {"0", "false", "no", "off"};
  for (int k = 0; k < 4; k++) {
    if (strcasecmp(s, yes[k]) == 0) {
      *out = 1;
      return 1;
    }
    if (strcasecmp(s, no[k]) == 0) {
      *out = 0;
      return 1;
    }
  }
  return 0;
}


static void range_text(const fl_option_desc *d, char *buf, size_t n) {
  if (d->type == FL_OPT_ENUM) {
    snprintf(buf, n, "one of %s", d->choices);
  } else if (d->type == FL_OPT_BOOL) {
    snprintf(buf, n, "true or false");
  } else if (d->type == FL_OPT_STRING) {
    snprintf(buf, n, "a string");
  } else {
    snprintf(buf, n, "%s in [%g, %g]", d->type == FL_OPT_INT ? "an integer" : "a real", d->lo,
             d->hi);
  }
}


int fl_edit_distance(const char *a, const char *b) {
  enum { M = 64 };
  size_t n = strlen(a), m = strlen(b);
  if (n >= M || m >= M) return M;
  int d[M + 1][M + 1];
  for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < c) c = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < c) c = d[i][j - 1] + 1;
      // a swap of neighbours ("mxa_iter") is one edit
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < c)
        c = d[i - 2][j - 2] + 1;
      d[i][j] = c;
    }
  return d[n][m];
}


const char *fl_options_suggest(const fl_option_desc *table, const char *key) {
  const char *best = NULL;
  int bd = 3, len = (int)strlen(key), lim = (len + 2) / 3 < 2 ? (len + 2) / 3 : 2;
  for (const fl_option_desc *t = table; t && t->key; t++) {
    int e = fl_edit_distance(key, t->key);
    if (e > 0 && e <= lim && e < bd) {
      bd = e;
      best = t->key;
    }
  }
  return best;
}


int fl_options_set(const fl_option_desc *table, void *obj, const char *where, const char *key,
                   const char *value) {
  const fl_option_desc *d = fl_options_find(table, key);
  if (!d) {
    char valid[768] = "";
    size_t len = 0;
    for (const fl_option_desc *t = table; t && t->key; t++) {
      int w = snprintf(valid + len, sizeof valid - len, "%s%s", len ? ", " : "", t->key);
      if (w < 0 || (size_t)w >= sizeof valid - len) break;
      len += (size_t)w;
    }
    const char *near = fl_options_suggest(table, key);
    if (near)
      return fl_seterr(FL_ERR_UNKNOWN_OPTION, "%s: unknown option '%s': did you mean '%s'? "
                       "(valid: %s)", where, key, near, len ? valid : "none");
    return fl_seterr(FL_ERR_UNKNOWN_OPTION, "%s: unknown option '%s' (valid: %s)", where, key,
                     len ? valid : "none");
  }
  char *base = obj, *end = NULL, want[160];
  range_text(d, want, sizeof want);
  if (!value) value = "";
  while (isspace((unsigned char)*value)) value++;
  switch (d->type) {
  case FL_OPT_INT: {
    errno = 0;
    long v = strtol(value, &end, 10);
    if (!*value || *end || errno) {
      return fl_seterr(FL_ERR_OPTION_TYPE, "%s: option %s=%s: expected %s", where, key, value,
                       want);
    }
    if ((double)v < d->lo || (double)v > d->hi) {
      return fl_seterr(FL_ERR_OPTION_RANGE, "%s: option %s=%s is out of range: expected %s",
                       where, key, value, want);
    }
    *(int *)(base + d->offset) = (int)v;
    break;
  }
  case FL_OPT_REAL: {
    double v = strtod(value, &end);
    if (!*value || *end || isnan(v)) {
      return fl_seterr(FL_ERR_OPTION_TYPE, "%s: option %s=%s: expected %s", where, key, value,
                       want);
    }
    if (v < d->lo || v > d->hi) {
      return fl_seterr(FL_ERR_OPTION_RANGE, "%s: option %s=%s is out of range: expected %s",
                       where, key, value, want);
    }
    *(double *)(base + d->offset) = v;
    break;
  }
  case FL_OPT_BOOL: {
    int v;
    if (!parse_bool(value, &v)) {
      return fl_seterr(FL_ERR_OPTION_TYPE, "%s: option %s=%s: expected %s", where, key, value,
                       want);
    }
    *(int *)(base + d->offset) = v;
    break;
  }
  case FL_OPT_ENUM: {
    int v = enum_index(d->choices, value);
    if (v < 0) {
      return fl_seterr(FL_ERR_OPTION_RANGE, "%s: option %s=%s: expected %s", where, key, value,
                       want);
    }
    *(int *)(base + d->offset) = v;
    break;
  }
  case FL_OPT_STRING:
    if (strlen(value) >= FL_OPT_STRLEN) {
      return fl_seterr(FL_ERR_OPTION_RANGE, "%s: option %s: value longer than %d characters",
                       where, key, FL_OPT_STRLEN - 1);
    }
    snprintf(base + d->offset, FL_OPT_STRLEN, "%s", value);
    break;
  }
  return FL_OK;
}


void fl_options_format(const fl_option_desc *d, const void *obj, char *buf, size_t n) {
  const char *base = obj;
  switch (d->type) {
  case FL_OPT_INT: snprintf(buf, n, "%d", *(const int *)(base + d->offset)); break;
  case FL_OPT_REAL: snprintf(buf, n, "%.17g", *(const double *)(base + d->offset)); break;
  case FL_OPT_BOOL:
    snprintf(buf, n, "%s", *(const int *)(base + d->offset) ? "true" : "false");
    break;
  case FL_OPT_ENUM: enum_name(d->choices, *(const int *)(base + d->offset), buf, n); break;
  case FL_OPT_STRING: snprintf(buf, n, "%s", base + d->offset); break;
  }
}


void fl_options_print(const fl_option_desc *t, const void *obj, const char *prefix, FILE *f) {
  char buf[FL_OPT_STRLEN + 32];
  for (; t && t->key; t++) {
    fl_options_format(t, obj, buf, sizeof buf);
    fprintf(f, "%s%s%s = %s\n", prefix ? prefix : "", prefix && *prefix ? "." : "", t->key, buf);
  }
}


void fl_options_help(const fl_option_desc *t, const char *prefix, FILE *f) {
  char want[160], dflt[FL_OPT_STRLEN + 32];
  for (; t && t->key; t++) {
    range_text(t, want, sizeof want);
    if (t->type == FL_OPT_ENUM) {
      enum_name(t->choices, (int)t->dflt, dflt, sizeof dflt);
    } else if (t->type == FL_OPT_STRING) {
      snprintf(dflt, sizeof dflt, "\"%s\"", t->choices ? t->choices : "");
    } else if (t->type == FL_OPT_BOOL) {
      snprintf(dflt, sizeof dflt, "%s", t->dflt != 0 ? "true" : "false");
    } else {
      snprintf(dflt, sizeof dflt, "%g", t->dflt);
    }
    char key[128];
    snprintf(key, sizeof key, "%s%s%s", prefix ? prefix : "", prefix && *prefix ? "." : "",
             t->key);
    fprintf(f, "  %-24s %-6s default %-10s %s; %s\n", key, type_name(t->type), dflt, want,
            t->help ? t->help : "");
  }
}


int fl_list_has(const char *list, const char *name) {
  if (!list) return 1;
  size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)); p += n) {
    int start = p == list || p[-1] == ',', end = p[n] == '\0' || p[n] == ',';
    if (start && end) return 1;
  }
  return 0;
}


int fl_split_list(const char *list, char *buf, size_t n, const char **out, int max) {
  if (!list || !*list) return 0;
  if (!buf || n == 0 || (size_t)snprintf(buf, n, "%s", list) >= n)
    return fl_seterr(FL_ERR_INVAL, "list '%.60s...' is longer than %zu characters", list,
                     n ? n - 1 : 0);
  int k = 0;
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (k == max)
      return fl_seterr(FL_ERR_INVAL, "list '%s' has more than %d entries", list, max);
    out[k++] = tok;
  }
  return k;
}

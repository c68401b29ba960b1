// SPDX-License-Identifier: Apache-2.0
/* args.c: table-driven parsing and help of the sub-commands' flags (see fl_args.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fl_args.h"
#include "../../solvers/fl_plugin.h"
#include "../../solvers/fl_solver.h"

#define HELP_WIDTH 92 /* columns of the generated help */
#define HELP_INDENT 20


static void *member(void *obj, size_t off) {
  return (char *)obj + off;
}


//---- the common options: flags the parser handles itself for every command that runs solvers ----

/* The commands that look solvers up by name, and so take plug-ins (docs/plugins.md). */
static const char *const plugin_cmds[] = {"solve", "run",  "profile", "bench", "verify",
                                          "check", "list", "export",  NULL};

typedef struct common_args {
  fl_arg_multi plugin; /* --plugin values, in order */
} common_args;

static const fl_arg_desc common_flags[] = {
  {"--plugin", FL_ARG_MULTI, offsetof(common_args, plugin), 0, 0, "PATH", NULL,
   "load the solver plug-in PATH (a shared object exporting fl_plugin_register, "
   "docs/plugins.md) before solvers are looked up; the plug-ins in the folders of "
   "$FL_PLUGIN_PATH are loaded first"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};

static int takes_plugins(const fl_cmd_spec *spec) {
  for (int k = 0; plugin_cmds[k]; k++)
    if (strcmp(spec->name, plugin_cmds[k]) == 0) return 1;
  return 0;
}

/* The plug-ins of the search path, then each --plugin in order. 0, or 2 with the loader's
 * message (it names the file and the fault) on stderr: a command never runs with a plug-in
 * half loaded or silently missing. */
static int load_plugins(const fl_cmd_spec *spec, const common_args *c) {
  fl_register_all(); // the built-in names first: a plug-in cannot take them
  if (fl_plugin_load_search_path() < 0) {
    char path[2048];
    fprintf(stderr, "frictionlab %s: a plug-in of the search path (%s): %s\n", spec->name,
            fl_plugin_search_path(path, sizeof path), fl_errmsg());
    return 2;
  }
  for (int k = 0; k < c->plugin.n; k++) {
    if (fl_plugin_load(c->plugin.v[k]) < 0) {
      fprintf(stderr, "frictionlab %s: --plugin: %s\n", spec->name, fl_errmsg());
      return 2;
    }
  }
  return 0;
}


static const fl_arg_desc *find_in(const fl_arg_desc *table, const char *arg, size_t *nlen) {
  for (const fl_arg_desc *d = table; d && d->name; d++) {
    size_t n = strlen(d->name);
    if (strncmp(arg, d->name, n) == 0 && (arg[n] == 0 || (arg[n] == '=' && d->type != FL_ARG_FLAG))) {
      *nlen = n;
      return d;
    }
  }
  return NULL;
}


static const fl_arg_desc *find_flag(const fl_cmd_spec *spec, const char *arg, size_t *nlen) {
  return find_in(spec->args, arg, nlen);
}


static void expected_list(const fl_cmd_spec *spec, FILE *f) {
  for (const fl_arg_desc *d = spec->args; d && d->name; d++)
    if (d->help) fprintf(f, "%s, ", d->name);
  if (takes_plugins(spec))
    for (const fl_arg_desc *d = common_flags; d->name; d++) fprintf(f, "%s, ", d->name);
  fprintf(f, "--help");
  if (spec->max_positional != 0) fprintf(f, ", or %s", spec->positional);
}


static int set_value(const fl_cmd_spec *spec, const fl_arg_desc *d, const char *v, void *obj) {
  switch (d->type) {
  case FL_ARG_STR:
    *(const char **)member(obj, d->offset) = v;
    return 0;
  case FL_ARG_INT: {
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (end == v || *end || errno == ERANGE || n < d->lo || n > d->hi) {
      fprintf(stderr, "frictionlab %s: %s '%s': expected an integer in [%ld, %ld]\n", spec->name,
              d->name, v, d->lo, d->hi);
      return 2;
    }
    *(long *)member(obj, d->offset) = n;
    return 0;
  }
  case FL_ARG_MULTI: {
    fl_arg_multi *m = member(obj, d->offset);
    if (m->n == FL_ARG_MAX_MULTI) {
      fprintf(stderr, "frictionlab %s: %s given more than %d times\n", spec->name, d->name,
              FL_ARG_MAX_MULTI);
      return 2;
    }
    m->v[m->n++] = v;
    return 0;
  }
  case FL_ARG_FLAG:
    break;
  }
  *(int *)member(obj, d->offset) = 1;
  return 0;
}


int fl_args_parse(const fl_cmd_spec *spec, int argc, char **argv, void *obj) {
  // defaults first
  for (const fl_arg_desc *d = spec->args; d && d->name; d++) {
    if (!d->dflt) continue;
    if (d->type == FL_ARG_STR) *(const char **)member(obj, d->offset) = d->dflt;
    if (d->type == FL_ARG_INT) *(long *)member(obj, d->offset) = strtol(d->dflt, NULL, 10);
  }
  fl_arg_list *list = spec->max_positional < 0 ? member(obj, spec->pos_offset) : NULL;
  if (list) {
    list->n = 0;
    list->v = calloc((size_t)argc + 1, sizeof *list->v);
    if (!list->v) {
      fprintf(stderr, "frictionlab %s: out of memory\n", spec->name);
      return -1;
    }
  }
  // the common options' values: static, since what they load lasts as long as the process
  static common_args common_store;
  common_args *common = takes_plugins(spec) ? &common_store : NULL;
  if (common) memset(common, 0, sizeof *common);
  int only_pos = 0;
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    if (!only_pos && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)) {
      fl_args_usage(spec, stdout);
      return 1;
    }
    if (!only_pos && strcmp(arg, "--") == 0 && spec->max_positional != 0) {
      only_pos = 1;
      continue;
    }
    if (only_pos || arg[0] != '-' || strcmp(arg, "-") == 0) {
      if (list) {
        list->v[list->n++] = arg;
        continue;
      }
      fl_arg_multi *m = spec->max_positional ? member(obj, spec->pos_offset) : NULL;
      if (!m) {
        fprintf(stderr, "frictionlab %s: unexpected argument '%s'; expected ", spec->name, arg);
        expected_list(spec, stderr);
        fprintf(stderr, "\n");
        return 2;
      }
      if (spec->max_positional > 0 && m->n >= spec->max_positional) {
        fprintf(stderr, "frictionlab %s: a second %s '%s' (expected one; '%s' is already given)\n",
                spec->name, spec->positional, arg, m->v[0]);
        return 2;
      }
      if (m->n == FL_ARG_MAX_MULTI) {
        fprintf(stderr, "frictionlab %s: more than %d %s\n", spec->name, FL_ARG_MAX_MULTI,
                spec->positional);
        return 2;
      }
      m->v[m->n++] = arg;
      continue;
    }
    size_t n = 0;
    const fl_arg_desc *d = find_flag(spec, arg, &n);
    void *into = obj;
    if (!d && common && (d = find_in(common_flags, arg, &n)) != NULL) into = common;
    if (!d) {
      fprintf(stderr, "frictionlab %s: unknown argument '%s'; expected ", spec->name, arg);
      expected_list(spec, stderr);
      fprintf(stderr, "\n");
      return 2;
    }
    const char *v = NULL;
    if (d->type != FL_ARG_FLAG) {
      v = arg[n] == '=' ? arg + n + 1 : (i + 1 < argc ? argv[++i] : NULL);
      if (!v || !*v) {
        fprintf(stderr, "frictionlab %s: %s needs a value (%s)\n", spec->name, d->name,
                d->value ? d->value : "a value");
        return 2;
      }
    }
    int rc = set_value(spec, d, v, into);
    if (rc) return rc;
  }
  return common ? load_plugins(spec, common) : 0;
}


void fl_args_free(const fl_cmd_spec *spec, void *obj) {
  if (spec->max_positional >= 0 || !obj) return;
  fl_arg_list *list = member(obj, spec->pos_offset);
  free(list->v);
  list->v = NULL;
  list->n = 0;
}


/* writes text from column `col` wrapped at HELP_WIDTH, continuation lines indented by `indent` */
static void wrap(FILE *f, const char *text, int col, int indent) {
  const char *p = text;
  while (*p) {
    // one word (up to a space or newline)
    size_t w = strcspn(p, " \n");
    if (col > indent && col + 1 + (int)w > HELP_WIDTH) {
      fprintf(f, "\n%*s", indent, "");
      col = indent;
    } else if (col > indent) {
      fputc(' ', f);
      col++;
    }
    fwrite(p, 1, w, f);
    col += (int)w;
    p += w;
    while (*p == ' ') p++;
    if (*p == '\n') {
      p++;
      fprintf(f, "\n%*s", indent, "");
      col = indent;
    }
  }
}


static void usage_flag(const fl_arg_desc *d, FILE *f) {
  char head[64];
  snprintf(head, sizeof head, "  %s%s%s", d->name, d->value ? " " : "", d->value ? d->value : "");
  fputs(head, f);
  int col = (int)strlen(head);
  if (col + 2 > HELP_INDENT) {
    fprintf(f, "\n%*s", HELP_INDENT, "");
  } else {
    fprintf(f, "%*s", HELP_INDENT - col, "");
  }
  char text[1024];
  const char *rep = d->type == FL_ARG_MULTI ? "; repeatable" : "";
  if (d->dflt) snprintf(text, sizeof text, "%s (default %s)%s", d->help, d->dflt, rep);
  else snprintf(text, sizeof text, "%s%s", d->help, rep);
  wrap(f, text, HELP_INDENT, HELP_INDENT);
  fputc('\n', f);
}


void fl_args_usage(const fl_cmd_spec *spec, FILE *f) {
  fprintf(f, "usage: frictionlab %s", spec->name);
  if (spec->max_positional != 0) fprintf(f, " %s", spec->positional);
  fprintf(f, " [options]\n\n");
  if (spec->about) fprintf(f, "%s\n", spec->about);
  fprintf(f, "options:\n");
  for (const fl_arg_desc *d = spec->args; d && d->name; d++)
    if (d->help) usage_flag(d, f);
  if (takes_plugins(spec))
    for (const fl_arg_desc *d = common_flags; d->name; d++) usage_flag(d, f);
  fprintf(f, "  --help%*sthis help\n", HELP_INDENT - 8, "");
  if (spec->notes) fprintf(f, "\n%s", spec->notes);
}


int fl_args_names(const fl_arg_multi *m, char *buf, size_t n, const char **out, int max) {
  size_t u = 0;
  buf[0] = 0;
  for (int k = 0; k < m->n; k++) {
    size_t l = strlen(m->v[k]);
    if (u + l + 2 > n) return -1;
    if (k) buf[u++] = ',';
    memcpy(buf + u, m->v[k], l + 1);
    u += l;
  }
  if (m->n == 0) return 0;
  int c = 0;
  for (char *tok = buf, *next; tok; tok = next) {
    next = strchr(tok, ',');
    if (next) *next++ = 0;
    if (c == max) return -1;
    out[c++] = tok;
  }
  return c;
}

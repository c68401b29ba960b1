// SPDX-License-Identifier: Apache-2.0
/* fl_args.h: the command line of every sub-command, declared as a table.
 *
 * A sub-command declares its flags once, in an fl_arg_desc table (name, type, where the value
 * goes in the command's argument struct, range, default, help), the way solvers declare their
 * options in fl_option_desc tables. fl_args_parse fills the struct from argv and refuses bad
 * input with one message; fl_args_usage writes the command's --help from the same table, so
 * the help cannot drift from what is parsed.
 *
 * What `--set key=value` means is the settings module's (fl_settings.h), shared by the
 * commands that take it.
 */
#ifndef FL_ARGS_H
#define FL_ARGS_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FL_ARG_MAX_MULTI 128 /* most values of one repeatable flag, or positionals */

typedef enum fl_arg_type {
  FL_ARG_FLAG,  /* int, 1 when given; takes no value */
  FL_ARG_STR,   /* const char *, the last value given (points into argv) */
  FL_ARG_INT,   /* long in [lo, hi] */
  FL_ARG_MULTI  /* fl_arg_multi: every value given, in order (repeatable) */
} fl_arg_type;

/* The values of a repeatable flag (or the positional arguments), pointing into argv. */
typedef struct fl_arg_multi {
  int n;
  const char *v[FL_ARG_MAX_MULTI];
} fl_arg_multi;

/* Any number of positional arguments (fl_cmd_spec.max_positional -1): v holds n pointers into
 * argv and a NULL, allocated by fl_args_parse and released by fl_args_free. */
typedef struct fl_arg_list {
  int n;
  const char **v;
} fl_arg_list;

/* One flag. Tables end with an entry whose name is NULL. */
typedef struct fl_arg_desc {
  const char *name;   /* "--steps"; a second spelling is another row with the same offset */
  fl_arg_type type;
  size_t offset;      /* offsetof(the command's argument struct, member) */
  long lo, hi;        /* FL_ARG_INT: accepted range */
  const char *value;  /* what the value is, for the help ("N", "DIR"); NULL for flags */
  const char *dflt;   /* default (STR: the string; INT: parsed), shown in the help; NULL none */
  const char *help;   /* one paragraph; wrapped by fl_args_usage. NULL: a hidden alias */
} fl_arg_desc;

/* One sub-command's command line. */
typedef struct fl_cmd_spec {
  const char *name;       /* "run" */
  const char *positional; /* the positional arguments as shown in the usage line ("PROBLEM") */
  int max_positional;     /* 0; up to FL_ARG_MAX_MULTI; or -1 for any number */
  size_t pos_offset;      /* offsetof(..., the member receiving them): an fl_arg_multi, or an
                             fl_arg_list when max_positional is -1 */
  const char *about;      /* text between the usage line and the flags (lines end in '\n') */
  const char *notes;      /* text after the flags, or NULL */
  const fl_arg_desc *args;
} fl_cmd_spec;

/* Fills obj (the command's argument struct, zeroed by the caller) from argv: first every
 * default, then each argument. "--flag VALUE" and "--flag=VALUE" are the same; "--" ends the
 * flags; "-" is a positional argument. Returns 0 when parsed, 1 when --help or -h printed the
 * help to stdout (the command then exits 0), 2 on a usage error, whose message
 * ("frictionlab CMD: ...") is printed to stderr, -1 out of memory. Call fl_args_free after it
 * whatever it returned.
 *
 * The common options: the commands that look solvers up by name (solve, run, profile, bench,
 * verify, check, list, export) also take `--plugin PATH` (repeatable), handled here: once the
 * command line is parsed, the plug-ins of the search path ($FL_PLUGIN_PATH, then the installed
 * folder) and then each PATH are loaded (fl_plugin_load, after fl_register_all), so that every
 * later lookup finds their solvers. A plug-in refused is a usage error (2) whose message names
 * it and the fault. */
int fl_args_parse(const fl_cmd_spec *spec, int argc, char **argv, void *obj);

/* Releases what fl_args_parse allocated in obj (an fl_arg_list); NULL-safe, idempotent. */
void fl_args_free(const fl_cmd_spec *spec, void *obj);

/* Writes the command's help: the usage line, `about`, one entry per flag (value, help,
 * default) and `notes`. */
void fl_args_usage(const fl_cmd_spec *spec, FILE *f);

/* Joins the values of a repeatable comma-list flag ("--solver a,b --solver c") and splits them
 * into names: at most max, into buf (n bytes, the caller's). Empty names are kept as "" so the
 * caller can refuse them. Returns the count, or -1 when the list does not fit. */
int fl_args_names(const fl_arg_multi *m, char *buf, size_t n, const char **out, int max);

#ifdef __cplusplus
}
#endif
#endif /* FL_ARGS_H */

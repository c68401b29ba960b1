// SPDX-License-Identifier: Apache-2.0
/* solver.c: the solver spine (handle, registry, common options, history, monitors, reasons).
 *
 * A solve runs as: fl_solver_create (defaults) -> fl_solver_set_option* -> fl_solver_setup
 * (capabilities, history, arena, the solver's setup) -> fl_solver_solve (guess, the solver's
 * iteration calling fl_solver_record once per iterate, final metrics, result).
 *
 * Timing: st->t and fl_result.solve_s are wall time since the start of solve minus the time
 * spent in metric evaluation and monitors (t_monitor), so observing does not distort curves.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fl_solver_impl.h"

/* records kept at most; further records overwrite the last slot and are counted as lost */
#define FL_HIST_MAX 100001

/* the handle as allocated: the public part first, then the spine's own state */
typedef struct solver_x {
  struct fl_solver s;
  const fl_problem *setup_prob; /* problem of the last successful setup */
  int in_solve;                 /* set_option is refused during solve */
  int data_live;                /* the solver's setup ran (destroy must run before reuse) */
  double setup_s;
  int metrics_valid;            /* last_metrics holds the returned iterate's metrics */
  int metrics_iter;             /* iteration at which last_metrics was evaluated */
  const double *metrics_v, *metrics_gamma; /* the arrays it was evaluated on */
  double raw0;                  /* raw natural map at the first evaluation of this solve */
  int skip_final;               /* fl_solver_skip_final_metrics */
  FILE *mon_file;               /* csv:PATH monitor while solving */
  int mon_stdout;               /* stdout monitor while solving */
  /* a local problem given to a solver without FL_CAP_LOCAL is solved as its lift
     (fl_problem_lift_local): the solver sees `lifted` and iterates on lift_v (its nv) */
  fl_problem *lifted;
  double *lift_v;
  double lift_s;
  fl_lift_info lift_info;
} solver_x;

#define SX(s) ((solver_x *)(s))
#define CSX(s) ((const solver_x *)(s))


//---- reasons ----

const char *fl_reason_name(int reason) {
  switch (reason) {
  case FL_CONVERGED_ATOL: return "CONVERGED_ATOL";
  case FL_CONVERGED_RTOL: return "CONVERGED_RTOL";
  case FL_CONVERGED_STAGNATION_OK: return "CONVERGED_STAGNATION_OK";
  case FL_STOPPED_ITS: return "STOPPED_ITS";
  case FL_DIVERGED_GROWTH: return "DIVERGED_GROWTH";
  case FL_CONVERGED_EXACT: return "CONVERGED_EXACT";
  case FL_ITERATING: return "ITERATING";
  case FL_DIVERGED_MAX_ITER: return "DIVERGED_MAX_ITER";
  case FL_DIVERGED_NAN: return "DIVERGED_NAN";
  case FL_DIVERGED_LINEAR_SOLVER: return "DIVERGED_LINEAR_SOLVER";
  case FL_DIVERGED_TIME_LIMIT: return "DIVERGED_TIME_LIMIT";
  case FL_DIVERGED_LINE_SEARCH: return "DIVERGED_LINE_SEARCH";
  case FL_DIVERGED_STAGNATION: return "DIVERGED_STAGNATION";
  case FL_DIVERGED_BREAKDOWN: return "DIVERGED_BREAKDOWN";
  case FL_REASON_ABORT: return "ABORTED_BY_MONITOR";
  default: return "UNKNOWN_REASON";
  }
}


void fl_iter_stat_init(fl_iter_stat *st, int iter) {
  st->iter = iter;
  st->t = NAN;
  st->error = NAN;
  st->objective = NAN;
  st->step = NAN;
  st->step_norm = NAN;
  st->gradient = NAN;
  st->inner_residual = NAN;
  st->err_normal = NAN;
  st->err_friction = NAN;
  st->merit = NAN;
  st->momentum = NAN;
  st->nactive = st->nstick = st->nslip = st->nchange = -1;
  st->inner_iters = -1;
  st->neval = -1;
}


//---- common options ----

#define CO(m) offsetof(fl_solve_common, m)
static const fl_option_desc common_table[] = {
  {"max_iter", FL_OPT_INT, CO(max_iter), 0, 2147483646.0, 100, NULL,
   "iteration budget (iteration 0 is the guess)"},
  {"abs_tol", FL_OPT_REAL, CO(abs_tol), 0, INFINITY, 1e-8, NULL,
   "stop when the solver's own residual <= abs_tol"},
  {"rel_tol", FL_OPT_REAL, CO(rel_tol), 0, INFINITY, 0, NULL,
   "stop when the own residual <= rel_tol * residual of iteration 0 (0 = off)"},
  {"time_limit", FL_OPT_REAL, CO(time_limit), 0, INFINITY, INFINITY, NULL,
   "seconds of solver time (monitors excluded); inf = none"},
  {"warm_start", FL_OPT_BOOL, CO(warm_start), 0, 1, 0, NULL,
   "start from the incoming v, gamma instead of v*, 0"},
  {"seed", FL_OPT_INT, CO(seed), 0, 2147483646.0, 0, NULL, "seed of randomized orderings"},
  {"error_every", FL_OPT_INT, CO(error_every), 0, 2147483646.0, 1, NULL,
   "evaluate the common metrics every k iterations (0 = only the returned iterate)"},
  {"norm", FL_OPT_ENUM, CO(norm), 0, 2, FL_NORM_FCLIB, "none|fclib|siconos",
   "normalization of the natural-map residual: none = raw, fclib = raw/(1+sqrt(||q||)) "
   "(libfclib 3.1's merit), "
   "siconos = raw/max(||q||,||gamma||,||u||); used by the merit and by own residuals"},
  {"never_stop", FL_OPT_BOOL, CO(never_stop), 0, 1, 0, NULL,
   "ignore tolerances and run the whole budget (reason STOPPED_ITS: neither converged nor failed)"},
  {"monitor", FL_OPT_STRING, CO(monitor), 0, 0, 0, "",
   "built-in monitor: '' (none), 'stdout', or 'csv:PATH' (one row per iteration)"},
  {NULL, FL_OPT_INT, 0, 0, 0, 0, NULL, NULL}};
#undef CO


/* checks the monitor spec: "", "stdout", "csv:PATH" with a non-empty PATH */
static int monitor_spec_ok(const char *m) {
  return m[0] == '\0' || strcmp(m, "stdout") == 0 || (strncmp(m, "csv:", 4) == 0 && m[4]);
}


/* appends the keys of a table to buf as "a, b, c" */
static void keys_cat(const fl_option_desc *t, char *buf, size_t n) {
  for (; t && t->key; t++) {
    size_t len = strlen(buf);
    if (len + 2 >= n) return;
    snprintf(buf + len, n - len, "%s%s", len ? ", " : "", t->key);
  }
}


/* strips "<name>." from key */
static const char *strip_prefix(const fl_solver *s, const char *key) {
  size_t ln = strlen(s->ops->name);
  if (strncmp(key, s->ops->name, ln) == 0 && key[ln] == '.') return key + ln + 1;
  return key;
}


/* finds the table and object holding key (the solver's own table first, so that a nested
 * key like "lin.max_iter" is the solver's business); 0 if absent */
static int locate(const fl_solver *s, const char *key, const fl_option_desc **tab, void **obj) {
  if (s->ops->options && fl_options_find(s->ops->options, key)) {
    *tab = s->ops->options;
    *obj = s->opts;
    return 1;
  }
  if (fl_options_find(common_table, key)) {
    *tab = common_table;
    *obj = (void *)&s->common;
    return 1;
  }
  return 0;
}


static int unknown_option(const fl_solver *s, const char *key) {
  char keys[2048] = "";
  keys_cat(common_table, keys, sizeof keys);
  keys_cat(s->ops->options, keys, sizeof keys);
  const char *near = fl_options_suggest(s->ops->options, key);
  const char *common = fl_options_suggest(common_table, key);
  if (!near || (common && fl_edit_distance(key, common) < fl_edit_distance(key, near)))
    near = common;
  if (near)
    return fl_seterr(FL_ERR_UNKNOWN_OPTION, "solver %s: unknown option '%s': did you mean "
                     "'%s'? Valid keys: %s", s->ops->name, key, near, keys);
  return fl_seterr(FL_ERR_UNKNOWN_OPTION, "solver %s: unknown option '%s'; valid keys: %s",
                   s->ops->name, key, keys);
}


int fl_solver_set_option(fl_solver *s, const char *key, const char *value) {
  if (!s || !key || !value) return fl_seterr(FL_ERR_INVAL, "fl_solver_set_option: NULL argument");
  if (SX(s)->in_solve)
    return fl_seterr(FL_ERR_STATE, "solver %s: option '%s' set during solve", s->ops->name, key);
  const char *k = strip_prefix(s, key);
  const fl_option_desc *tab;
  void *obj;
  if (!locate(s, k, &tab, &obj)) return unknown_option(s, key);

  // the monitor spec is checked here so that a typo fails at once, not at solve
  if (tab == common_table && strcmp(k, "monitor") == 0 && !monitor_spec_ok(value))
    return fl_seterr(FL_ERR_OPTION_RANGE,
                     "solver %s: option 'monitor' = '%s': expected '', 'stdout' or 'csv:PATH'",
                     s->ops->name, value);
  FL_TRY(fl_options_set(tab, obj, s->ops->name, k, value));
  // options changed: a new setup is needed before the next solve
  s->is_setup = 0;
  return FL_OK;
}


int fl_solver_set_options(fl_solver *s, const char *list) {
  if (!s) return fl_seterr(FL_ERR_INVAL, "fl_solver_set_options: NULL solver");
  char buf[2048];
  const char *kv[64];
  int n = fl_split_list(list, buf, sizeof buf, kv, 64);
  for (int k = 0; k < n; k++) {
    char *eq = strchr(kv[k], '=');
    if (!eq)
      return fl_seterr(FL_ERR_INVAL, "solver %s: setting '%s' lacks '=' (expected key=value)",
                       s->ops->name, kv[k]);
    *eq = '\0';
    FL_TRY(fl_solver_set_option(s, kv[k], eq + 1));
  }
  return n < 0 ? n : FL_OK;
}


int fl_solver_get_option(const fl_solver *s, const char *key, char *buf, size_t n) {
  if (!s || !key || !buf) return fl_seterr(FL_ERR_INVAL, "fl_solver_get_option: NULL argument");
  const char *k = strip_prefix(s, key);
  const fl_option_desc *tab;
  void *obj;
  if (!locate(s, k, &tab, &obj)) return unknown_option(s, key);
  fl_options_format(fl_options_find(tab, k), obj, buf, n);
  return FL_OK;
}


//---- registry ----

/* One registered solver: built-in tables by pointer (origin NULL), the others as a copy owned
 * by the registry with their origin. The arrays grow; a removed copy is parked in `retired`
 * (handles made from it keep pointing at it) and never freed. */
typedef struct reg_entry {
  const fl_solver_ops *ops;
  char *origin;
} reg_entry;

static reg_entry *reg;
static const char **reg_names; /* nreg names and a NULL */
static fl_int nreg, cap_reg, cap_names;
static void **retired;
static fl_int nretired, cap_retired;
static const char *const no_names[1] = {NULL};

static int reg_find(const char *name) {
  for (int k = 0; name && k < nreg; k++)
    if (strcmp(reg[k].ops->name, name) == 0) return k;
  return -1;
}

/* appends ops (not checked here) with its origin (copied; NULL for a built-in) */
static int reg_add(const fl_solver_ops *ops, const char *origin) {
  char *o = NULL;
  if (origin) {
    size_t n = strlen(origin) + 1;
    if (!(o = fl_malloc(n))) return fl_seterr(FL_ERR_NOMEM, "registry: out of memory");
    memcpy(o, origin, n);
  }
  if (fl_grow((void **)&reg, &cap_reg, nreg + 1, sizeof *reg, "solver registry") < 0 ||
      fl_grow((void **)&reg_names, &cap_names, nreg + 2, sizeof *reg_names, "solver registry") < 0) {
    fl_free(o);
    return FL_ERR_NOMEM;
  }
  reg[nreg].ops = ops;
  reg[nreg].origin = o;
  reg_names[nreg++] = ops->name;
  reg_names[nreg] = NULL;
  return FL_OK;
}

int fl_solver_register(const fl_solver_ops *ops) {
  if (!ops || !ops->name || !ops->name[0] || !ops->solve)
    return fl_seterr(FL_ERR_INVAL, "fl_solver_register: ops without a name or solve function");
  if (ops->abi_version != FL_SOLVER_ABI)
    return fl_seterr(FL_ERR_INVAL, "fl_solver_register: solver %s has ABI %d, expected %d",
                     ops->name, ops->abi_version, FL_SOLVER_ABI);
  // a solver's name heads CSV columns and folder names: an identifier (issue 51)
  FL_TRY(fl_name_check(ops->name, "fl_solver_register", "solver name"));
  if (fl_solver_find(ops->name))
    return fl_seterr(FL_ERR_INVAL, "fl_solver_register: solver %s is already registered",
                     ops->name);
  return reg_add(ops, NULL);
}

/* the size of an option's member */
static size_t opt_size(fl_opt_type t) {
  return t == FL_OPT_REAL ? sizeof(double) : t == FL_OPT_STRING ? FL_OPT_STRLEN : sizeof(int);
}

int fl__solver_ops_check(const fl_solver_ops *ops, size_t size, const char *origin) {
  const char *from = origin ? origin : "(program)";
  if (!ops) return fl_seterr(FL_ERR_INVAL, "%s: NULL solver table", from);
  if (size < sizeof(int))
    return fl_seterr(FL_ERR_INVAL, "%s: a solver table of %zu bytes (expected %zu)", from, size,
                     sizeof(fl_solver_ops));
  if (ops->abi_version != FL_SOLVER_ABI)
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: a solver table of ABI version %d; this "
                     "libfrictionlab has ABI %d: rebuild it against this FrictionLab "
                     "(docs/api.md)", from, ops->abi_version, FL_SOLVER_ABI);
  // the ABI-1 table ends with common_defaults: every field up to it is required
  size_t need = offsetof(fl_solver_ops, common_defaults) + sizeof ops->common_defaults;
  if (size < need || size > sizeof(fl_solver_ops))
    return fl_seterr(FL_ERR_UNSUPPORTED, "%s: a solver table of %zu bytes; this libfrictionlab "
                     "reads %zu to %zu (%s)", from, size, need, sizeof(fl_solver_ops),
                     size > sizeof(fl_solver_ops) ? "built against a newer FrictionLab of the "
                     "same ABI: fields this library does not know" : "truncated");
  const char *nm = ops->name;
  if (!nm || !nm[0] || strlen(nm) > 63)
    return fl_seterr(FL_ERR_INVAL, "%s: a solver without a name (or longer than 63 characters)",
                     from);
  for (const char *c = nm; *c; c++)
    if (!(isalnum((unsigned char)*c) || *c == '-' || *c == '_'))
      return fl_seterr(FL_ERR_INVAL, "%s: solver name '%s': character '%c' (expected letters, "
                       "digits, '-' and '_')", from, nm, *c);
  if (!ops->solve) return fl_seterr(FL_ERR_INVAL, "%s: solver %s has no solve function", from, nm);
  if (ops->options && !ops->opts_size)
    return fl_seterr(FL_ERR_INVAL, "%s: solver %s has an option table but opts_size 0", from, nm);
  int n = 0;
  for (const fl_option_desc *t = ops->options; t && t->key; t++, n++) {
    if (n >= 512)
      return fl_seterr(FL_ERR_INVAL, "%s: solver %s: more than 512 options (is the table "
                       "terminated by an entry whose key is NULL?)", from, nm);
    const char *k = t->key;
    if (!k[0] || strpbrk(k, "=, \t"))
      return fl_seterr(FL_ERR_INVAL, "%s: solver %s: option %d has key '%s' (expected a "
                       "non-empty key without '=', ',' or blanks)", from, nm, n, k);
    if ((unsigned)t->type > FL_OPT_STRING)
      return fl_seterr(FL_ERR_INVAL, "%s: solver %s: option %s has type %d (expected an "
                       "fl_opt_type)", from, nm, k, (int)t->type);
    size_t sz = opt_size(t->type), al = t->type == FL_OPT_REAL ? _Alignof(double)
                                       : t->type == FL_OPT_STRING ? 1 : _Alignof(int);
    if (t->offset > ops->opts_size || sz > ops->opts_size - t->offset || t->offset % al)
      return fl_seterr(FL_ERR_INVAL, "%s: solver %s: option %s at offset %zu (%zu bytes) lies "
                       "outside its options struct of %zu bytes or is misaligned", from, nm, k,
                       t->offset, sz, ops->opts_size);
    if (t->type == FL_OPT_ENUM) {
      int nchoice = t->choices && t->choices[0] ? 1 : 0;
      for (const char *c = t->choices; c && *c; c++) nchoice += *c == '|';
      if (!nchoice || !(t->dflt >= 0 && t->dflt < nchoice && t->dflt == floor(t->dflt)))
        return fl_seterr(FL_ERR_INVAL, "%s: solver %s: enum option %s needs choices \"a|b|...\" "
                         "and a default index among them (has %d choices, default %g)", from, nm,
                         k, nchoice, t->dflt);
    } else if (t->type != FL_OPT_STRING && !(t->dflt >= t->lo && t->dflt <= t->hi))
      return fl_seterr(FL_ERR_INVAL, "%s: solver %s: option %s has default %g outside its range "
                       "[%g, %g]", from, nm, k, t->dflt, t->lo, t->hi);
  }
  return FL_OK;
}

int fl_solver_register_ops(const fl_solver_ops *ops, size_t ops_size, const char *origin) {
  FL_TRY(fl__solver_ops_check(ops, ops_size, origin));
  int k = reg_find(ops->name);
  if (k >= 0)
    return fl_seterr(FL_ERR_INVAL, "%s: solver %s is already registered (%s)",
                     origin ? origin : "(program)", ops->name,
                     reg[k].origin ? reg[k].origin : "built in");
  fl_solver_ops *copy = fl_calloc(1, sizeof *copy);
  if (!copy) return fl_seterr(FL_ERR_NOMEM, "registry: out of memory");
  memcpy(copy, ops, ops_size);
  int rc = reg_add(copy, origin ? origin : "(program)");
  if (rc < 0) fl_free(copy);
  return rc;
}

int fl_solver_unregister(const char *name) {
  int k = reg_find(name);
  if (k < 0) return fl_seterr(FL_ERR_UNKNOWN_SOLVER, "fl_solver_unregister: no solver '%s'",
                              name ? name : "(null)");
  if (!reg[k].origin)
    return fl_seterr(FL_ERR_INVAL, "fl_solver_unregister: %s is a built-in solver", name);
  if (fl_grow((void **)&retired, &cap_retired, nretired + 2, sizeof *retired, "solver registry") < 0)
    return FL_ERR_NOMEM;
  retired[nretired++] = (void *)reg[k].ops;
  retired[nretired++] = reg[k].origin;
  for (int j = k; j + 1 < nreg; j++) {
    reg[j] = reg[j + 1];
    reg_names[j] = reg_names[j + 1];
  }
  reg_names[--nreg] = NULL;
  return FL_OK;
}


const char *const *fl_solver_list(void) { return reg_names ? reg_names : no_names; }


const fl_solver_ops *fl_solver_find(const char *name) {
  int k = reg_find(name);
  return k >= 0 ? reg[k].ops : NULL;
}


const char *fl_solver_ops_origin(const fl_solver_ops *ops) {
  for (int k = 0; ops && k < nreg; k++)
    if (reg[k].ops == ops) return reg[k].origin;
  return NULL;
}


const char *fl_solver_ops_name(const fl_solver_ops *ops) { return ops && ops->name ? ops->name : ""; }


const fl_option_desc *fl_solver_ops_options(const fl_solver_ops *ops) {
  return ops ? ops->options : NULL;
}


const char *fl_solver_ops_summary(const fl_solver_ops *ops) {
  return ops && ops->summary ? ops->summary : "";
}


unsigned fl_solver_ops_caps(const fl_solver_ops *ops) { return ops ? ops->caps : 0u; }


/* applies "k=v,k=v" common defaults of a solver */
static int apply_common_defaults(const fl_solver_ops *ops, fl_solve_common *c) {
  if (!ops->common_defaults) return FL_OK;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", ops->common_defaults);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ') tok++;
    char *eq = strchr(tok, '=');
    if (!eq)
      return fl_seterr(FL_ERR_INVAL, "solver %s: common_defaults entry '%s' lacks '='", ops->name,
                       tok);
    *eq = '\0';
    FL_TRY(fl_options_set(common_table, c, ops->name, tok, eq + 1));
  }
  return FL_OK;
}


void fl_solver_ops_help(const fl_solver_ops *ops, FILE *f) {
  if (!ops || !f) return;
  fl_solve_common c;
  fl_options_defaults(common_table, &c);
  fprintf(f, "%s: %s\n", ops->name, fl_solver_ops_summary(ops));
  if (ops->common_defaults) fprintf(f, "  common defaults overridden: %s\n", ops->common_defaults);
  // the rows show the defaults that run: the common table with this solver's overrides
  enum { NCOMMON = sizeof common_table / sizeof common_table[0] };
  fl_option_desc eff[NCOMMON];
  memcpy(eff, common_table, sizeof eff);
  if (apply_common_defaults(ops, &c) >= 0) {
    const char *base = (const char *)&c;
    for (fl_option_desc *t = eff; t->key; t++) {
      if (t->type == FL_OPT_REAL) t->dflt = *(const double *)(base + t->offset);
      else if (t->type != FL_OPT_STRING) t->dflt = *(const int *)(base + t->offset);
    }
  }
  fl_options_help(eff, ops->name, f);
  if (ops->options) fl_options_help(ops->options, ops->name, f);
}


//---- handle ----

int fl_solver_create(const char *name, fl_solver **out) {
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_solver_create: NULL output");
  *out = NULL;
  const fl_solver_ops *ops = fl_solver_find(name);
  if (!ops) {
    char names[1024] = "";
    for (int k = 0; k < nreg; k++) {
      size_t len = strlen(names);
      snprintf(names + len, sizeof names - len, "%s%s", k ? ", " : "", reg[k].ops->name);
    }
    return fl_seterr(FL_ERR_UNKNOWN_SOLVER, "unknown solver '%s'; valid names: %s",
                     name ? name : "(null)", nreg ? names : "(none registered: call fl_register_all)");
  }
  return fl__solver_create_ops(ops, out);
}


int fl__solver_create_ops(const fl_solver_ops *ops, fl_solver **out) {
  const char *name = ops->name;
  *out = NULL;
  solver_x *x = fl_calloc(1, sizeof *x);
  if (!x) return fl_seterr(FL_ERR_NOMEM, "fl_solver_create(%s): out of memory", name);
  fl_solver *s = &x->s;
  s->ops = ops;
  s->opts = ops->opts_size ? fl_calloc(1, ops->opts_size) : NULL;
  s->data = ops->data_size ? fl_calloc(1, ops->data_size) : NULL;
  if ((ops->opts_size && !s->opts) || (ops->data_size && !s->data)) {
    fl_solver_destroy(s);
    return fl_seterr(FL_ERR_NOMEM, "fl_solver_create(%s): out of memory", name);
  }
  fl_options_defaults(common_table, &s->common);
  if (ops->options) fl_options_defaults(ops->options, s->opts);
  int rc = apply_common_defaults(ops, &s->common);
  if (rc < 0) {
    fl_solver_destroy(s);
    return rc;
  }
  s->error0 = NAN;
  *out = s;
  return FL_OK;
}


/* drops the lift of a previous setup */
static void lift_free(solver_x *x) {
  fl_problem_free(x->lifted);
  fl_free(x->lift_v);
  x->lifted = NULL;
  x->lift_v = NULL;
  x->lift_s = NAN;
  x->lift_info.rank = -1;
  x->lift_info.exactness = x->lift_info.asymmetry = x->lift_info.psd_error = NAN;
}


void fl_solver_destroy(fl_solver *s) {
  if (!s) return;
  solver_x *x = SX(s);
  if (x->data_live && s->ops->destroy) s->ops->destroy(s);
  if (s->keep && s->keep_free) s->keep_free(s->keep);
  lift_free(x);
  for (int k = 0; k < s->nmon; k++)
    if (s->mon[k].destroy) s->mon[k].destroy(s->mon[k].ctx);
  if (x->mon_file) fclose(x->mon_file);
  fl_arena_free(&s->arena);
  fl_free(s->hist);
  fl_free(s->opts);
  fl_free(s->data);
  fl_free(x);
}


const char *fl_solver_name(const fl_solver *s) { return s ? s->ops->name : ""; }
unsigned fl_solver_caps(const fl_solver *s) { return s ? s->ops->caps : 0u; }


int fl_solver_monitor_add(fl_solver *s, fl_monitor_fn fn, void *ctx, void (*destroy)(void *)) {
  if (!s || !fn) return fl_seterr(FL_ERR_INVAL, "fl_solver_monitor_add: NULL argument");
  if (s->nmon >= FL_MAX_MONITORS)
    return fl_seterr(FL_ERR_INVAL, "solver %s: more than %d monitors", s->ops->name,
                     FL_MAX_MONITORS);
  s->mon[s->nmon].fn = fn;
  s->mon[s->nmon].ctx = ctx;
  s->mon[s->nmon].destroy = destroy;
  s->nmon++;
  return FL_OK;
}


const fl_iter_stat *fl_solver_history(const fl_solver *s, int *n) {
  if (n) *n = s ? s->hist_len : 0;
  return s ? s->hist : NULL;
}


void fl_solver_iterate(const fl_solver *s, const double **v, const double **gamma) {
  if (v) *v = s ? s->cur_v : NULL;
  if (gamma) *gamma = s ? s->cur_gamma : NULL;
}


const fl_problem *fl_solver_problem(const fl_solver *s) {
  return s && CSX(s)->in_solve ? s->prob : NULL;
}


const fl_metrics *fl_solver_final_metrics(const fl_solver *s) {
  return s && CSX(s)->metrics_valid ? &s->last_metrics : NULL;
}


void fl_solver_skip_final_metrics(fl_solver *s, int skip) {
  if (s) SX(s)->skip_final = skip != 0;
}


/* 1 when every entry of x (n) is finite and at most 1e150 in size: products of two such
 * entries with finite problem data stay finite */
static int tame(const double *x, fl_int n) {
  if (!x) return 1;
  for (fl_int k = 0; k < n; k++)
    if (!(fabs(x[k]) <= 1e150)) return 0;
  return 1;
}


const fl_problem *fl_solver_lifted(const fl_solver *s, fl_lift_info *info) {
  const fl_problem *g = s && s->is_setup ? CSX(s)->lifted : NULL;
  if (info) {
    info->rank = -1;
    info->exactness = info->asymmetry = info->psd_error = NAN;
    if (g) *info = CSX(s)->lift_info;
  }
  return g;
}


void *fl_solver_opts(fl_solver *s) { return s ? s->opts : NULL; }
void *fl_solver_data(fl_solver *s) { return s ? s->data : NULL; }
fl_arena *fl_solver_arena(fl_solver *s) { return s ? &s->arena : NULL; }


void fl_solver_set_iterate(fl_solver *s, const double *v, const double *gamma) {
  s->cur_v = v;
  s->cur_gamma = gamma;
}


int fl_solver_exit_code(const fl_solver *s) {
  return s->reason == FL_REASON_ABORT ? (s->abort_code < 0 ? s->abort_code : FL_ERR_STATE) : FL_OK;
}


double fl_solver_elapsed(const fl_solver *s) {
  return fl_time_now() - s->t_start - s->t_monitor;
}


int fl_solver_arena_reserve(fl_solver *s, size_t bytes) {
  if (s->arena.base && s->arena.size >= bytes) return FL_OK;
  fl_arena_free(&s->arena);
  int rc = fl_arena_init(&s->arena, bytes);
  if (rc < 0)
    return fl_seterr(rc, "solver %s: cannot allocate a %zu-byte arena", s->ops->name, bytes);
  return FL_OK;
}


//---- view ----

void fl_solver_view(const fl_solver *s, FILE *f) {
  if (!s || !f) return;
  fprintf(f, "solver %s: %s\n", s->ops->name, fl_solver_ops_summary(s->ops));
  fl_options_print(common_table, &s->common, s->ops->name, f);
  if (s->ops->options) fl_options_print(s->ops->options, s->opts, s->ops->name, f);
  if (s->is_setup)
    fprintf(f, "  set up on '%s': history capacity %d, arena %zu bytes (high water %zu)\n",
            s->prob ? s->prob->name : "", s->hist_cap, s->arena.size, s->arena.high);
  if (s->is_setup && CSX(s)->lifted)
    fprintf(f, "  local problem lifted to A = I_%d, J = P L (%d x %d, %d entries) in %.3g s: "
            "relative error %.3g (asymmetry of W %.3g, factorization %.3g)\n",
            (int)CSX(s)->lifted->nv, (int)CSX(s)->lifted->J->nrow, (int)CSX(s)->lifted->J->ncol,
            (int)CSX(s)->lifted->J->nnz, CSX(s)->lift_s, CSX(s)->lift_info.exactness,
            CSX(s)->lift_info.asymmetry, CSX(s)->lift_info.psd_error);
  if (s->ops->view && SX((fl_solver *)s)->data_live) s->ops->view(s, f);
}


/* writes a JSON string literal */
static void json_str(FILE *f, const char *str) {
  fputc('"', f);
  for (const unsigned char *c = (const unsigned char *)str; *c; c++) {
    if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
    else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
    else fputc(*c, f);
  }
  fputc('"', f);
}


static void json_table(const fl_option_desc *t, const void *obj, FILE *f, int *first) {
  char buf[FL_OPT_STRLEN + 64];
  for (; t && t->key; t++) {
    fl_options_format(t, obj, buf, sizeof buf);
    fputs(*first ? "" : ", ", f);
    *first = 0;
    json_str(f, t->key);
    fputs(": ", f);
    json_str(f, buf);
  }
}


void fl_solver_options_json(const fl_solver *s, FILE *f) {
  if (!s || !f) return;
  int first = 1;
  fputc('{', f);
  json_table(common_table, &s->common, f, &first);
  json_table(s->ops->options, s->opts, f, &first);
  fputc('}', f);
}


//---- setup ----

/* capability check of the problem against the solver; FL_ERR_UNSUPPORTED says why */
static int check_caps(const fl_solver *s, const fl_problem *p) {
  unsigned caps = s->ops->caps;
  const char *nm = s->ops->name;
  if (p->kind == FL_PROBLEM_LOCAL) {
    if (caps & FL_CAP_NEEDS_AJ)
      return fl_seterr(FL_ERR_UNSUPPORTED,
                       "solver %s needs A and J; FCLIB local problem %s has only W, q (local "
                       "problems are lifted for FrictionLab's own solvers, not for peers: use "
                       "the peer's local solvers)", nm, p->name);
    if (!(caps & FL_CAP_LOCAL))
      return fl_seterr(FL_ERR_UNSUPPORTED,
                       "solver %s does not work on local problems (W, q only) such as %s", nm,
                       p->name);
    if (!(caps & FL_CAP_RIGID) && p->nc > 0)
      return fl_seterr(FL_ERR_UNSUPPORTED,
                       "solver %s does not support rigid contact; local problem %s is rigid "
                       "(u = W gamma + q)", nm, p->name);
  } else {
    for (fl_int i = 0; i < p->nc; i++) {
      double k = p->stiffness ? p->stiffness[i] : INFINITY;
      if (isinf(k) && !(caps & FL_CAP_RIGID))
        return fl_seterr(FL_ERR_UNSUPPORTED,
                         "solver %s does not support rigid contact; problem %s contact %d has "
                         "k = inf", nm, p->name, (int)i);
      if (!isinf(k) && !(caps & FL_CAP_COMPLIANT))
        return fl_seterr(FL_ERR_UNSUPPORTED,
                         "solver %s does not support compliant contact; problem %s contact %d "
                         "has k = %g", nm, p->name, (int)i, k);
    }
  }
  if (p->nh > 0 && !(caps & FL_CAP_BILATERAL))
    return fl_seterr(FL_ERR_UNSUPPORTED,
                     "solver %s does not support bilateral rows; problem %s has %d", nm, p->name,
                     (int)p->nh);
  return FL_OK;
}


int fl_solver_setup(fl_solver *s, const fl_problem *p) {
  if (!s || !p) return fl_seterr(FL_ERR_INVAL, "fl_solver_setup: NULL argument");
  solver_x *x = SX(s);
  if (x->in_solve) return fl_seterr(FL_ERR_STATE, "solver %s: setup during solve", s->ops->name);
  double t0 = fl_time_now();
  s->is_setup = 0;
  x->setup_prob = NULL;
  lift_free(x);
  // a local problem for a solver that needs A and J: solve its lift (docs/lift.md). Not for
  // another library's solvers (Siconos's gfc3d-*): most reformulate a global problem back into
  // its local form themselves, and Siconos's local solvers take the local problem directly
  const fl_problem *sp = p;
  if (p->kind == FL_PROBLEM_LOCAL && !(s->ops->caps & FL_CAP_LOCAL) &&
      !(s->ops->caps & FL_CAP_PEER)) {
    fl_lift_info li;
    int rc = fl_problem_lift_local(p, &x->lifted, &li);
    if (rc < 0) {
      char why[512];
      snprintf(why, sizeof why, "%s", fl_errmsg());
      return fl_seterr(rc, "solver %s needs A and J; local problem %s has only W, q and cannot "
                       "be lifted: %s", s->ops->name, p->name, why);
    }
    x->lift_info = li;
    x->lift_v = fl_calloc((size_t)x->lifted->nv + 1, sizeof(double));
    if (!x->lift_v) {
      lift_free(x);
      return fl_seterr(FL_ERR_NOMEM, "solver %s: out of memory (lifted velocities)", s->ops->name);
    }
    x->lift_s = fl_time_now() - t0;
    sp = x->lifted;
  }
  {
    int rc = check_caps(s, sp);
    if (rc < 0) {
      lift_free(x);
      return rc;
    }
  }

  // history: iteration 0 plus max_iter iterations, capped (overflow is counted, not silent)
  int cap = s->common.max_iter < FL_HIST_MAX - 1 ? s->common.max_iter + 1 : FL_HIST_MAX;
  if (cap != s->hist_cap) {
    fl_iter_stat *h = fl_realloc(s->hist, (size_t)cap * sizeof *h);
    if (!h)
      return fl_seterr(FL_ERR_NOMEM, "solver %s: cannot allocate a history of %d records",
                       s->ops->name, cap);
    s->hist = h;
    s->hist_cap = cap;
  }
  s->hist_len = 0;
  s->hist_lost = 0;

  // a repeated setup starts from clean private state
  if (x->data_live && s->ops->destroy) s->ops->destroy(s);
  x->data_live = 0;
  if (s->data) memset(s->data, 0, s->ops->data_size);
  if (s->arena.base) fl_arena_release(&s->arena, 0);

  s->prob = sp;
  x->data_live = 1;
  int rc = s->ops->setup ? s->ops->setup(s, sp) : FL_OK;
  if (rc < 0) {
    if (s->ops->destroy) s->ops->destroy(s);
    x->data_live = 0;
    if (s->data) memset(s->data, 0, s->ops->data_size);
    lift_free(x);
    return rc;
  }
  s->prob = p;
  x->setup_prob = p;
  x->setup_s = fl_time_now() - t0;
  s->is_setup = 1;
  return FL_OK;
}


//---- monitors and recording ----

static void csv_header(FILE *f) {
  fputs("iter,t,error,merit,momentum,objective,step_length,step_norm,gradient,inner_residual,"
        "nactive,nstick,nslip,nchange,inner_iters,neval\n", f);
}


static void csv_row(FILE *f, const fl_iter_stat *st) {
  fprintf(f, "%d,%.9g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%d,%d,%d,%d,%d,%d\n",
          st->iter, st->t, st->error, st->merit, st->momentum, st->objective, st->step,
          st->step_norm, st->gradient, st->inner_residual, st->nactive, st->nstick, st->nslip,
          st->nchange, st->inner_iters, st->neval);
}


/* evaluates the common metrics of the current iterate into last_metrics */
static int eval_metrics(fl_solver *s, const double *v, const double *gamma, int iter) {
  solver_x *x = SX(s);
  int rc = fl_problem_metrics(s->prob, v, gamma, (fl_norm_kind)s->common.norm, &s->last_metrics);
  if (rc < 0) return rc;
  x->metrics_valid = 1;
  if (isnan(x->raw0)) x->raw0 = s->last_metrics.natmap_raw;
  x->metrics_iter = iter;
  x->metrics_v = v;
  x->metrics_gamma = gamma;
  return FL_OK;
}


/* the default convergence test on the own residual (see fl_solver_impl.h) */
static int converged_default(fl_solver *s, const fl_iter_stat *st) {
  const fl_solve_common *c = &s->common;
  if (isnan(st->error) || isinf(st->error)) return FL_DIVERGED_NAN;
  if (st->iter > 0 && s->error0 >= 0 && st->error > FL_GROWTH_MAX * fmax(s->error0, c->abs_tol))
    return FL_DIVERGED_GROWTH;
  if (!c->never_stop) {
    if (st->iter == 0) {
      if (st->error <= c->abs_tol) return FL_CONVERGED_EXACT;
    } else {
      if (st->error <= c->abs_tol) return FL_CONVERGED_ATOL;
      if (c->rel_tol > 0 && st->error <= c->rel_tol * s->error0) return FL_CONVERGED_RTOL;
    }
  }
  if (st->iter >= c->max_iter) return c->never_stop ? FL_STOPPED_ITS : FL_DIVERGED_MAX_ITER;
  if (st->t > c->time_limit) return FL_DIVERGED_TIME_LIMIT;
  return FL_ITERATING;
}


int fl_solver_wants_iterate(const fl_solver *s, int iter) {
  int ee = s->common.error_every;
  return (ee > 0 && iter % ee == 0) || s->nmon > 0;
}


int fl_solver_record(fl_solver *s, fl_iter_stat *st) {
  solver_x *x = SX(s);
  double t_in = fl_time_now();
  st->t = t_in - s->t_start - s->t_monitor;
  if (st->iter == 0) s->error0 = st->error;

  // common metrics every error_every iterations, timed as monitoring
  int ee = s->common.error_every;
  if (ee > 0 && st->iter % ee == 0 && s->cur_gamma) {
    int rc = eval_metrics(s, s->cur_v, s->cur_gamma, st->iter);
    if (rc < 0) {
      s->abort_code = rc;
      s->t_monitor += fl_time_now() - t_in;
      return s->reason = FL_REASON_ABORT;
    }
    st->merit = fl_metrics_merit(&s->last_metrics, x->raw0);
    st->momentum = s->last_metrics.momentum;
  }

  // history: when full, the last slot keeps the newest record and the rest are counted lost
  if (s->hist_len < s->hist_cap) {
    s->hist[s->hist_len++] = *st;
  } else if (s->hist_cap > 0) {
    s->hist[s->hist_cap - 1] = *st;
    s->hist_lost++;
  }

  // monitors: built-in, then user ones
  if (x->mon_stdout)
    printf("%s %s it %4d  t %.3e  error %.6e  merit %.6e\n", s->ops->name,
           s->prob ? s->prob->name : "", st->iter, st->t, st->error, st->merit);
  if (x->mon_file) csv_row(x->mon_file, st);
  for (int k = 0; k < s->nmon; k++) {
    int rc = s->mon[k].fn(s, st, s->mon[k].ctx);
    if (rc < 0) {
      s->abort_code = rc;
      s->t_monitor += fl_time_now() - t_in;
      return s->reason = FL_REASON_ABORT;
    }
  }
  s->t_monitor += fl_time_now() - t_in;

  s->iters = st->iter;
  s->reason = converged_default(s, st);
  return s->reason;
}


//---- solve ----

int fl__solver_answer_empty(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  int global = p->kind == FL_PROBLEM_GLOBAL;
  if (v && global) memcpy(v, p->vstar, (size_t)p->nv * sizeof(double));
  s->cur_v = global ? v : NULL;
  s->cur_gamma = gamma;
  fl_iter_stat st;
  fl_iter_stat_init(&st, 0);
  st.error = 0;
  fl_solver_record(s, &st);
  return FL_OK;
}


static int open_monitors(fl_solver *s) {
  solver_x *x = SX(s);
  const char *m = s->common.monitor;
  x->mon_stdout = strcmp(m, "stdout") == 0;
  if (strncmp(m, "csv:", 4) == 0) {
    // written in place (rows as the solver runs), but never into a device, FIFO or symlink
    if (fl_check_output(m + 4, "monitor file") < 0) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", fl_errmsg()); // fl_seterr rewrites the message buffer
      return fl_seterr(FL_ERR_IO, "solver %s: monitor csv: %s", s->ops->name, msg);
    }
    x->mon_file = fopen(m + 4, "w");
    if (!x->mon_file)
      return fl_seterr(FL_ERR_IO, "solver %s: monitor csv:%s: cannot open for writing: %s",
                       s->ops->name, m + 4, strerror(errno));
    csv_header(x->mon_file);
  }
  return FL_OK;
}


static int close_monitors(fl_solver *s) {
  solver_x *x = SX(s);
  int rc = FL_OK;
  if (x->mon_file && fclose(x->mon_file) != 0)
    rc = fl_seterr(FL_ERR_IO, "solver %s: monitor %s: write failed", s->ops->name,
                   s->common.monitor);
  x->mon_file = NULL;
  x->mon_stdout = 0;
  return rc;
}


int fl_solver_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma, fl_result *res) {
  if (!s || !p || !res) return fl_seterr(FL_ERR_INVAL, "fl_solver_solve: NULL argument");
  solver_x *x = SX(s);
  memset(res, 0, sizeof *res);
  res->error = NAN;
  res->device_s = res->device_bytes = res->lift_s = NAN;
  if (!s->is_setup)
    return fl_seterr(FL_ERR_STATE, "solver %s: solve before setup (or options changed since)",
                     s->ops->name);
  if (p != x->setup_prob)
    return fl_seterr(FL_ERR_STATE, "solver %s: set up on another problem than '%s'",
                     s->ops->name, p->name);
  if (!gamma && fl_problem_nrows(p) > 0)
    return fl_seterr(FL_ERR_INVAL, "solver %s: gamma is NULL", s->ops->name);
  if (p->kind == FL_PROBLEM_GLOBAL && !v && p->nv > 0)
    return fl_seterr(FL_ERR_INVAL, "solver %s: v is NULL on global problem %s", s->ops->name,
                     p->name);

  // a lifted local problem: the solver runs on the lift (sp) with its own velocities (sv);
  // the metrics, monitors and the result stay with the local problem p
  const fl_problem *sp = x->lifted ? x->lifted : p;
  double *sv = x->lifted ? x->lift_v : v;

  // the guess: the incoming one with warm_start, else v = v*, gamma = 0
  if (!s->common.warm_start) {
    if (gamma) memset(gamma, 0, (size_t)fl_problem_nrows(p) * sizeof *gamma);
    if (sv && sp->kind == FL_PROBLEM_GLOBAL && sp->vstar)
      memcpy(sv, sp->vstar, (size_t)sp->nv * sizeof *sv);
  } else if (x->lifted) {
    // the lift's balance at the incoming gamma: v = v* + A^-1 J^T gamma = J^T gamma
    fl_csr_gemtv(sp->J, 1.0, gamma, 0.0, sv);
  }

  s->prob = p;
  s->cur_v = sv;
  s->cur_gamma = gamma;
  s->t_monitor = 0;
  s->reason = FL_ITERATING;
  s->iters = 0;
  s->abort_code = 0;
  s->fallback = 0;
  s->error0 = NAN;
  x->raw0 = NAN;
  s->hist_len = 0;
  s->hist_lost = 0;
  x->metrics_valid = 0;
  FL_TRY(open_monitors(s));

  x->in_solve = 1;
  s->device_s = s->device_bytes = NAN;
  s->t_start = fl_time_now();
  int rc = s->ops->solve(s, sp, sv, gamma);
  double t_end = fl_time_now();
  x->in_solve = 0;

  if (rc >= 0 && s->reason == FL_REASON_ABORT) rc = s->abort_code < 0 ? s->abort_code : FL_ERR_STATE;
  if (rc >= 0 && s->reason == FL_ITERATING)
    rc = fl_seterr(FL_ERR_STATE, "solver %s returned without a reason (contract violation)",
                   s->ops->name);

  double solve_s = (t_end - s->t_start) - s->t_monitor;

  // the final metrics are those of the returned iterate (skipped on request when the iterate
  // is tame: then its metrics are finite when the own residual was)
  int have = x->metrics_valid && x->metrics_iter == s->iters && x->metrics_v == sv &&
             x->metrics_gamma == gamma && s->cur_v == sv && s->cur_gamma == gamma;
  int skipped = rc >= 0 && !have && x->skip_final && tame(gamma, fl_problem_nrows(p)) &&
                tame(sv, sv ? sp->nv : 0);
  if (skipped) x->metrics_valid = 0;
  if (rc >= 0 && !have && !skipped) {
    double tm = fl_time_now();
    rc = eval_metrics(s, sv, gamma, s->iters);
    if (rc >= 0 && s->hist_len > 0 && s->hist[s->hist_len - 1].iter == s->iters) {
      s->hist[s->hist_len - 1].merit = fl_metrics_merit(&s->last_metrics, x->raw0);
      s->hist[s->hist_len - 1].momentum = s->last_metrics.momentum;
    }
    s->t_monitor += fl_time_now() - tm;
  }
  int crc = close_monitors(s);
  if (rc >= 0) rc = crc;
  // a solver's own test can pass on numbers that are not (inf - inf in its residual, an
  // overflowed problem): "converged" needs finite metrics of what it returns (the merit
  // without its growth rule; a problem without contacts has no merit, NaN by definition)
  if (rc >= 0 && !skipped && s->reason > 0 && s->reason != FL_STOPPED_ITS && p->nc > 0 &&
      !isfinite(fl_metrics_merit(&s->last_metrics, NAN)))
    s->reason = FL_DIVERGED_NAN;

  res->reason = s->reason;
  res->iters = s->iters;
  res->error = s->hist_len > 0 ? s->hist[s->hist_len - 1].error : NAN;
  res->solve_s = solve_s > 0 ? solve_s : 0;
  res->setup_s = x->setup_s;
  res->monitor_s = s->t_monitor;
  res->history_len = s->hist_len;
  res->history_lost = s->hist_lost;
  res->device_s = s->device_s;
  res->device_bytes = s->device_bytes;
  res->lift_s = x->lifted ? x->lift_s : NAN;
  res->fallback = s->fallback;
  return rc < 0 ? rc : FL_OK;
}

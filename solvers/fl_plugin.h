// SPDX-License-Identifier: Apache-2.0
/* fl_plugin.h: writing a solver outside FrictionLab, and loading such solvers (plug-ins).
 *
 * A solver is one table, fl_solver_ops: its name, its options (a typed table, as every
 * built-in solver has), its capabilities and four functions. Registered, it is created, set,
 * listed and run by name exactly like a built-in one (fl_solver.h). A plug-in is a shared
 * object that exports one function, fl_plugin_register, which declares the ABI version it was
 * built for and adds its solvers:
 *
 *   #include <frictionlab/frictionlab.h>
 *   static const fl_solver_ops my_ops = {.abi_version = FL_SOLVER_ABI, .name = "mine", ...};
 *   static int add(fl_plugin *pl) { return fl_plugin_add_solver(pl, &my_ops); }
 *   FL_PLUGIN_REGISTER(add)
 *
 * examples/plugin/ is a complete one with its CMake project; docs/plugins.md says how to
 * build, load and test one, and docs/api.md what may change between versions.
 *
 * The iteration contract, the same in every solver (PETSc's cr.c):
 *
 *   fl_iter_stat st; fl_iter_stat_init(&st, 0); ...fill...;
 *   fl_solver_set_iterate(s, v, gamma);
 *   if (fl_solver_record(s, &st) != 0) return fl_solver_exit_code(s); // iteration 0 = guess
 *   for (int k = 1;; k++) {
 *     ...update v, gamma...;
 *     fl_iter_stat_init(&st, k); st.error = ...own residual...;
 *     if (fl_solver_record(s, &st) != 0) break;        // history, monitors, the test
 *   }
 *   return fl_solver_exit_code(s);
 *
 * fl_solver_record stores the record, evaluates the common metrics of the iterate set with
 * fl_solver_set_iterate every `error_every` iterations, runs the monitors (their time is kept
 * out of the solver's), then the convergence test on st.error (abs_tol, rel_tol, max_iter,
 * time_limit, never_stop: the solver never tests these itself), and returns the reason: 0 to go
 * on, else the solve is over. A solver's solve function returns fl_solver_exit_code(s) (FL_OK,
 * or a monitor's error) when the loop ends, or a negative FL_ERR_* when it broke.
 *
 * Lifetime: a registered table (and every string and option table it points to) must stay
 * valid until the program ends; a loaded plug-in is never unloaded. Not thread-safe: register
 * and load before solving on several threads.
 */
#ifndef FL_PLUGIN_H
#define FL_PLUGIN_H
// layer 3: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 3
#error "solvers/fl_plugin.h is in solvers/, layer 3: a lower layer may not include it (docs/layers.md)"
#endif

#include "fl_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version a solver table is written for: the library's (fl_core.h). */
#define FL_SOLVER_ABI FL_ABI_VERSION

/* returned by fl_solver_record when a monitor failed (fl_solver_exit_code gives its error) */
#define FL_REASON_ABORT (-1000)

/* One solver. Fields are only ever appended (docs/api.md): a table built against an older
 * header of the same ABI version is shorter, and the fields it lacks read as zero. */
struct fl_solver_ops {
  int abi_version;        /* FL_SOLVER_ABI */
  const char *name;       /* registry key ("pgs"): letters, digits, '-', '_'; no '.' or ',' */
  const char *summary;    /* one line */
  size_t opts_size;       /* size of the solver's options struct (0: none) */
  const fl_option_desc *options; /* its table (offsets into the options struct), NULL-key
                                    terminated, or NULL */
  size_t data_size;       /* size of private state (fl_solver_data), zeroed before setup */
  unsigned caps;          /* FL_CAP_* */
  /* Sizes scratch (fl_solver_arena_reserve) and precomputes; may be called again with
   * another problem after destroy-less reuse: must release what a previous setup made. NULL:
   * nothing to set up. FL_OK or a negative FL_ERR_* with a message (fl_seterr). */
  int (*setup)(fl_solver *s, const fl_problem *p);
  /* Runs the iteration; see the contract above. v (nv; NULL for local problems) and gamma
   * (3nc+nh) hold the guess on entry and the answer on return. Required. */
  int (*solve)(fl_solver *s, const fl_problem *p, double *v, double *gamma);
  /* Prints solver-specific state beyond the options (may be NULL). */
  void (*view)(const fl_solver *s, FILE *f);
  /* Frees what setup allocated outside the arena (may be NULL). The framework also calls it
   * before a repeated setup and after a failed one, then zeroes the data: keep it NULL-safe. */
  void (*destroy)(fl_solver *s);
  /* The solver's defaults for common options, "key=value,key=value" (e.g. "max_iter=8,
   * rel_tol=1e-6"), applied at create; NULL keeps the common defaults. */
  const char *common_defaults;
};

/*---- what a solver's functions call ----*/

/* The solver's options struct (ops->opts_size bytes, filled from its table) and its private
 * state (ops->data_size bytes, zeroed before each setup); NULL when the size is 0. */
void *fl_solver_opts(fl_solver *s);
void *fl_solver_data(fl_solver *s);
/* The iterate the next fl_solver_record measures and the monitors see: v (nv; NULL for a local
 * problem) and gamma (3nc+nh). The arrays must stay valid until the record. */
void fl_solver_set_iterate(fl_solver *s, const double *v, const double *gamma);
/* Stores, measures, monitors and tests one record; returns the reason (0 = continue). Fills
 * st->t and, every error_every iterations, st->merit and st->momentum. */
int fl_solver_record(fl_solver *s, fl_iter_stat *st);
/* What solve returns once fl_solver_record ended the loop: FL_OK, or the error of a monitor
 * that aborted the solve. */
int fl_solver_exit_code(const fl_solver *s);
/* 1 when the record of iteration `iter` will read the iterate (the common metrics are due or
 * monitors are attached): a solver whose iterate lives elsewhere (a GPU) copies it back first
 * only then. */
int fl_solver_wants_iterate(const fl_solver *s, int iter);
/* Solver time so far in this solve (s), monitors excluded. */
double fl_solver_elapsed(const fl_solver *s);
/* The solver's scratch arena (fl_core.h), owned by the handle and released at each setup;
 * fl_solver_arena_reserve (re)allocates it to at least `bytes` (call from setup; FL_ERR_NOMEM). */
fl_arena *fl_solver_arena(fl_solver *s);
int fl_solver_arena_reserve(fl_solver *s, size_t bytes);

/*---- registering a table ----*/

/* Registers a copy of the first ops_size bytes of *ops (sizeof(fl_solver_ops) of the caller's
 * header; the fields it lacks are zero) under `origin` (copied: the plug-in's path, "python",
 * ...; shown by fl_solver_ops_origin). Checks the table: the ABI version, the size, a name of
 * letters, digits, '-' and '_' not yet registered, a solve function, and every option of the
 * table (a key, a known type, an offset and size inside opts_size, an enum's choices, a default
 * in range). Call fl_register_all first, so that a built-in name cannot be taken. FL_OK, or
 * FL_ERR_INVAL / FL_ERR_UNSUPPORTED (an ABI or a size this library does not know) with a
 * message naming the solver and what is wrong, FL_ERR_NOMEM. */
int fl_solver_register_ops(const fl_solver_ops *ops, size_t ops_size, const char *origin);

/*---- plug-ins ----*/

/* The registration in progress (opaque). */
typedef struct fl_plugin fl_plugin;

/* The one function a plug-in exports, under this name: it sets *abi_version to the
 * FL_ABI_VERSION it was built with; with pl NULL it returns FL_OK doing nothing else (the
 * loader asks the version before anything else runs), otherwise it adds its solvers with
 * fl_plugin_add_solver and returns FL_OK or a negative FL_ERR_* (with fl_seterr's message). */
#define FL_PLUGIN_SYMBOL "fl_plugin_register"
typedef int (*fl_plugin_register_fn)(fl_plugin *pl, int *abi_version);

/* Adds one solver of the plug-in (checked as fl_solver_register_ops does; registered with the
 * others once the registration function has returned FL_OK, so that a plug-in is added whole
 * or not at all). */
int fl_plugin_add_solver_(fl_plugin *pl, const fl_solver_ops *ops, size_t ops_size);
#define fl_plugin_add_solver(pl, ops) fl_plugin_add_solver_((pl), (ops), sizeof *(ops))

#if defined(__GNUC__)
#define FL_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define FL_PLUGIN_EXPORT
#endif

/* Defines the exported registration function around fn, an `int fn(fl_plugin *pl)` of the
 * plug-in that adds its solvers. */
#define FL_PLUGIN_REGISTER(fn)                                                    \
  FL_PLUGIN_EXPORT int fl_plugin_register(fl_plugin *pl, int *abi_version);      \
  FL_PLUGIN_EXPORT int fl_plugin_register(fl_plugin *pl, int *abi_version) {     \
    *abi_version = FL_ABI_VERSION;                                               \
    return pl ? fn(pl) : FL_OK;                                                  \
  }

/* Loads the plug-in at `path` (a shared object) and registers its solvers. Refused, with a
 * message naming the file: a file that cannot be loaded (missing, not a shared object, a
 * symbol it needs that this library lacks: dlopen's own words), one without
 * fl_plugin_register ("not a FrictionLab plug-in"), one built for another ABI version ("built
 * for ABI 2; this libfrictionlab has ABI 1: rebuild it"), one whose registration fails or adds
 * no solver, a solver table fl_solver_register_ops refuses, a solver name already registered
 * (named, with where the first came from). A refused plug-in adds nothing and is unloaded. The
 * same file loaded again (by any path) adds nothing. The built-in solvers are registered first
 * (fl_register_all), so a plug-in cannot take one of their names. Returns the number of solvers added (>= 0)
 * or a negative FL_ERR_*: FL_ERR_IO (cannot load), FL_ERR_FORMAT (no registration function),
 * FL_ERR_UNSUPPORTED (ABI), FL_ERR_INVAL (a table), FL_ERR_NOMEM, or the registration's own. */
int fl_plugin_load(const char *path);
/* Loads every "*.so" file of folder `dir`, in name order, with fl_plugin_load; stops at the
 * first refusal and returns it. Returns the number of solvers added. A missing folder is
 * FL_ERR_IO. */
int fl_plugin_load_dir(const char *dir);
/* Loads the plug-ins of the search path (fl_plugin_search_path): every folder of
 * $FL_PLUGIN_PATH (':'-separated, in order), then the folder installed beside the library,
 * <libdir>/frictionlab/plugins. A folder that does not exist is skipped; a plug-in that is
 * refused stops the loading with its error. Returns the number of solvers added. */
int fl_plugin_load_search_path(void);
/* The folders fl_plugin_load_search_path reads, ':'-separated, into buf (n bytes): for
 * `--help` and `list solvers`. Returns buf. */
const char *fl_plugin_search_path(char *buf, size_t n);
/* The plug-ins loaded so far: their number, and the i-th one's resolved path (NULL when out
 * of range). */
int fl_plugin_count(void);
const char *fl_plugin_path(int i);

#ifdef __cplusplus
}
#endif
#endif /* FL_PLUGIN_H */

// SPDX-License-Identifier: Apache-2.0
/* fl_solver.h: solvers as plug-ins behind one handle (PETSc KSP style).
 *
 * A solver is found by name in an explicit registry, configured with typed key=value options,
 * set up on a problem, and run. Every iteration fills one fl_iter_stat, which goes to a
 * preallocated history and to the monitors. The result carries a signed reason: > 0 converged,
 * < 0 diverged / failed / out of budget, never 0 after a solve. Non-convergence is a result,
 * not an error code; error codes (< 0 return values) mean the solve could not be attempted or
 * broke (bad option, unsupported problem, out of memory).
 *
 *   fl_solver *s;
 *   fl_register_all();
 *   fl_solver_create("pgs", &s);
 *   fl_solver_set_option(s, "omega", "1.2");      // or "pgs.omega", or common "max_iter"
 *   fl_solver_setup(s, prob);
 *   fl_solver_solve(s, prob, v, gamma, &res);     // v (nv), gamma (3nc+nh): in = guess
 *   fl_solver_destroy(s);
 *
 * Handles are not thread-safe; distinct handles may be used from distinct threads. A solver of
 * one's own, in a program or a plug-in: fl_plugin.h.
 */
#ifndef FL_SOLVER_H
#define FL_SOLVER_H
// layer 3: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 3
#error "solvers/fl_solver.h is in solvers/, layer 3: a lower layer may not include it (docs/layers.md)"
#endif

#include "../core/fl_core.h"
#include "../problems/fl_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fl_solver fl_solver;
typedef struct fl_solver_ops fl_solver_ops;

/*---- reasons ----*/

typedef enum fl_reason {
  FL_CONVERGED_ATOL = 1,         /* own residual <= abs_tol */
  FL_CONVERGED_RTOL = 2,         /* own residual <= rel_tol * initial residual */
  FL_CONVERGED_STAGNATION_OK = 3,/* cost stagnated with a full step (SAP) */
  FL_STOPPED_ITS = 4,            /* the fixed budget of the "never stop" test ran out: neither
                                    converged nor failed; its residual says how good it is */
  FL_CONVERGED_EXACT = 5,        /* the guess already satisfied the test (0 iterations) */
  FL_ITERATING = 0,
  FL_DIVERGED_MAX_ITER = -1,     /* budget exhausted before the tolerance */
  FL_DIVERGED_NAN = -2,          /* NaN or Inf in the residual or iterate */
  FL_DIVERGED_LINEAR_SOLVER = -3,/* inner linear solve failed */
  FL_DIVERGED_TIME_LIMIT = -4,   /* time_limit exceeded */
  FL_DIVERGED_LINE_SEARCH = -5,  /* line search failed */
  FL_DIVERGED_STAGNATION = -6,   /* no progress possible (e.g. rank-deficient, stalled) */
  FL_DIVERGED_BREAKDOWN = -7,    /* algorithmic breakdown (e.g. indefinite matrix) */
  FL_DIVERGED_GROWTH = -8        /* own residual above FL_GROWTH_MAX times its start */
} fl_reason;

/* The default convergence test stops a solve whose own residual exceeds this factor times
 * max(its iteration-0 value, abs_tol), whatever never_stop says: it is diverging. */
#define FL_GROWTH_MAX 1e4

/* Static name of a reason ("CONVERGED_ATOL"). */
const char *fl_reason_name(int reason);

/*---- capabilities ----*/

enum {
  FL_CAP_RIGID = 1u << 0,      /* hard (k = INFINITY) contact */
  FL_CAP_COMPLIANT = 1u << 1,  /* finite stiffness and dissipation */
  FL_CAP_BILATERAL = 1u << 2,  /* bilateral rows */
  FL_CAP_LOCAL = 1u << 3,      /* works on local problems (W, q only) */
  FL_CAP_NEEDS_AJ = 1u << 4,   /* needs A and J (global problems only) */
  FL_CAP_WARMSTART = 1u << 5,  /* uses the incoming v, gamma as a guess */
  FL_CAP_GPU = 1u << 6,
  FL_CAP_MPI = 1u << 7,
  FL_CAP_REGULARIZED = 1u << 8, /* solves its own regularized model (SAP, penalty) */
  FL_CAP_PEER = 1u << 9,        /* another library's solver (Siconos): like GPU solvers, left
                                   out of the default solver lists of solve and check, so
                                   their tables do not depend on what is installed */
  FL_CAP_V_FROM_GAMMA = 1u << 10 /* on a global problem it never reads the incoming v: it makes
                                   v from gamma (v* + A^-1 J^T gamma) itself, so a caller's
                                   guess for v may be left at v* */
};

/*---- iteration records ----*/

/* One record per iteration, the same fields for every solver; NAN (or -1 for counts) where a
 * field does not apply, never 0. Iteration 0 is the initial guess. */
typedef struct fl_iter_stat {
  int iter;            /* 0, 1, 2, ... */
  double t;            /* solver wall time since the start of solve (s), monitors excluded */
  double error;        /* the solver's own residual (what its convergence test uses) */
  double objective;    /* cost or merit value, if the method has one */
  double step;         /* step length alpha, or relaxation used */
  double step_norm;    /* ||dv|| or ||dgamma|| of this iteration */
  double gradient;     /* gradient norm (primal methods) */
  double inner_residual; /* final inner linear residual (Newton methods) */
  double err_normal;   /* max normal complementarity error (NSN) */
  double err_friction; /* max friction complementarity error (NSN) */
  double merit;        /* common natural-map residual (fl_metrics.natmap), when evaluated */
  double momentum;     /* common momentum residual, when evaluated */
  int nactive, nstick, nslip, nchange; /* contact mode counts (-1 if n/a) */
  int inner_iters;     /* inner iterations of this iteration (-1 if n/a) */
  int neval;           /* line-search or function evaluations (-1 if n/a) */
} fl_iter_stat;

/* Sets every field to "not applicable" and iter to `iter`. */
void fl_iter_stat_init(fl_iter_stat *st, int iter);

/* Result of a solve. */
typedef struct fl_result {
  int reason;       /* fl_reason */
  int iters;        /* iterations performed */
  double error;     /* final own residual */
  double solve_s;   /* wall time of solve, monitors excluded (s) */
  double setup_s;   /* wall time of setup (s) */
  double monitor_s; /* wall time spent in monitors and metric evaluation (s) */
  int history_len;  /* records in the history */
  long history_lost;/* records dropped because the history was full (0 normally) */
  double device_s;  /* GPU solvers: seconds inside the iteration kernels (CUDA events, summed
                       over the solve, transfers excluded); NAN for CPU solvers */
  double device_bytes; /* GPU solvers: bytes those kernels must move between the device's
                          memory and its cores (the counting of gpu/README.md); NAN otherwise */
  double lift_s;    /* wall time of setup spent lifting a local problem to a global one for a
                       solver without FL_CAP_LOCAL (fl_problem_lift_local; included in
                       setup_s), s; NAN when the solver ran on the problem as given */
  int fallback;     /* extra solves with a fallback law after the solver's own failed (SAP's
                       lagged Huber friction: 1 when the step was solved again with the soft
                       friction); the reason is that of the last solve; 0 for most solvers */
} fl_result;

/* A monitor sees every record after it is stored. Returning < 0 aborts the solve with that
 * error code. */
typedef int (*fl_monitor_fn)(const fl_solver *s, const fl_iter_stat *st, void *ctx);

/*---- registry ----*/

/* The registry holds the built-in solvers and those added at run time: by plug-ins
 * (fl_plugin_load), by a program (fl_solver_register_ops, e.g. a Python solver) (fl_plugin.h).
 * Every lookup by name sees them all. Not thread-safe. */

/* Registers every built-in solver; idempotent. Returns FL_OK. */
int fl_register_all(void);
/* Adds one ops table compiled with this library's headers (kept by pointer; must outlive the
 * program). FL_ERR_INVAL on a duplicate name or an ABI mismatch. Tables from elsewhere go
 * through fl_solver_register_ops (fl_plugin.h), which copies and checks them. */
int fl_solver_register(const fl_solver_ops *ops);
/* Removes a solver registered at run time (not a built-in one: FL_ERR_INVAL) from the
 * registry, so that its name may be registered again; handles already created keep working.
 * FL_ERR_UNKNOWN_SOLVER when no solver has that name. */
int fl_solver_unregister(const char *name);
/* Registered solver names, NULL-terminated, in registration order; valid until the next
 * registration or removal. */
const char *const *fl_solver_list(void);
/* The ops of a name, or NULL. */
const fl_solver_ops *fl_solver_find(const char *name);
/* Name, summary line, capabilities and option table (NULL-key terminated; NULL when the solver
 * has no options of its own) of a registered solver. */
const char *fl_solver_ops_name(const fl_solver_ops *ops);
const char *fl_solver_ops_summary(const fl_solver_ops *ops);
unsigned fl_solver_ops_caps(const fl_solver_ops *ops);
const fl_option_desc *fl_solver_ops_options(const fl_solver_ops *ops);
/* Where a registered solver comes from: NULL for a built-in one, else the origin it was
 * registered with (a plug-in's resolved path, "python", ...). */
const char *fl_solver_ops_origin(const fl_solver_ops *ops);
/* Prints the common and solver-specific options with defaults and help. */
void fl_solver_ops_help(const fl_solver_ops *ops, FILE *f);

/*---- handle ----*/

/* Creates a solver by registered name with default options. FL_ERR_UNKNOWN_SOLVER lists valid
 * names in fl_errmsg(). */
int fl_solver_create(const char *name, fl_solver **out);
void fl_solver_destroy(fl_solver *s); /* NULL-safe */
const char *fl_solver_name(const fl_solver *s);
unsigned fl_solver_caps(const fl_solver *s);

/* Sets a common option (max_iter, abs_tol, rel_tol, time_limit, warm_start, seed, error_every,
 * norm, never_stop, monitor) or a solver option. The key may carry the solver's name as a
 * prefix ("pgs.omega"). Errors: FL_ERR_UNKNOWN_OPTION, FL_ERR_OPTION_TYPE, FL_ERR_OPTION_RANGE,
 * each with a message naming the solver, key and what was expected. Options may not change
 * between setup and solve (FL_ERR_STATE). */
int fl_solver_set_option(fl_solver *s, const char *key, const char *value);
/* Sets every "key=value" of a comma-separated list ("max_iter=1000,sap.model=lagged"; NULL or
 * "" sets nothing), in order, with fl_solver_set_option. Errors: FL_ERR_INVAL for an entry
 * without '=' or a list of more than 64 entries or 2047 characters, else fl_solver_set_option's. */
int fl_solver_set_options(fl_solver *s, const char *list);
/* Formats one option's current value; FL_ERR_UNKNOWN_OPTION if absent. */
int fl_solver_get_option(const fl_solver *s, const char *key, char *buf, size_t n);
/* Prints the resolved configuration ("name.key = value" lines plus the solver's view). */
void fl_solver_view(const fl_solver *s, FILE *f);
/* Writes the resolved options as a JSON object {"key": "value", ...} (no trailing newline). */
void fl_solver_options_json(const fl_solver *s, FILE *f);

/* Checks capabilities against the problem (FL_ERR_UNSUPPORTED with a message saying why),
 * sizes the history and arena, and runs the solver's setup. A local problem given to a solver
 * without FL_CAP_LOCAL (SAP, primal descent; not FL_CAP_PEER solvers) is first lifted to an
 * equivalent global one (fl_problem_lift_local, docs/lift.md), which the solver is set up on
 * and solves; fl_solver_solve still takes and returns the local problem's gamma (v may be
 * NULL), and the history's merit, the final metrics and the monitors see the local problem
 * (u = W gamma + q), so results compare with local solvers'. FL_ERR_UNSUPPORTED also when the
 * lift is impossible (the symmetric part of W not positive semidefinite; the message says by
 * how much). */
int fl_solver_setup(fl_solver *s, const fl_problem *p);
/* Solves. v (nv; may be NULL for local problems) and gamma (3nc+nh) are the guess on entry
 * when warm_start is set (ignored otherwise) and the solution on return. Fills *res. Returns
 * FL_OK whenever a reason was reached (converged or not), < 0 on errors. */
int fl_solver_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma, fl_result *res);

/* Adds a monitor (at most 8). `destroy(ctx)` runs when the solver is destroyed (may be NULL). */
int fl_solver_monitor_add(fl_solver *s, fl_monitor_fn fn, void *ctx, void (*destroy)(void *));
/* History of the last solve: *n records (pointer owned by the solver). */
const fl_iter_stat *fl_solver_history(const fl_solver *s, int *n);
/* The current iterate during a solve (for monitors): v (NULL for local problems solved as
 * given; for a lifted local problem, the lift's velocities, fl_solver_lifted(s)->nv), gamma. */
void fl_solver_iterate(const fl_solver *s, const double **v, const double **gamma);
/* The problem being solved (for monitors), or NULL outside solve. */
const fl_problem *fl_solver_problem(const fl_solver *s);
/* The global problem a solver set up on a local problem actually solves (fl_problem_lift_local),
 * or NULL when it runs on the problem as given or is not set up; *info (may be NULL) receives
 * the lift's rank and errors (rank -1 and NANs without a lift). Owned by the solver, valid
 * until the next setup or destroy. */
const fl_problem *fl_solver_lifted(const fl_solver *s, fl_lift_info *info);
/* The common metrics of the iterate returned by the last solve (evaluated on it with the
 * `norm` option), or NULL before any solve. Pointer owned by the solver. */
const fl_metrics *fl_solver_final_metrics(const fl_solver *s);
/* skip = 1: later solves do not evaluate the common metrics of the returned iterate unless
 * error_every or a monitor already did (a whole-step loop that never reads them saves one
 * fl_problem_metrics per solve); fl_solver_final_metrics then gives NULL and the last history
 * record's merit and momentum stay NaN. The rule that "converged" needs finite metrics then
 * tests the iterate itself: a non-finite or huge (> 1e150) entry of gamma or v evaluates the
 * metrics as before. skip = 0 (the default): always evaluated. */
void fl_solver_skip_final_metrics(fl_solver *s, int skip);

/*---- scoring an answer computed elsewhere ----*/

/* An answer's score, as the harness scores its own solvers' answers. */
typedef struct fl_score {
  int reason;        /* fl_reason of a solve stopped at this answer: FL_CONVERGED_EXACT when
                        merit <= tol, FL_DIVERGED_NAN when the merit is not finite (NaN or Inf
                        in the answer), FL_DIVERGED_MAX_ITER otherwise (not solved to tol) */
  double merit;      /* the common merit (fl_metrics_merit) with the chosen normalization: the
                        number `solve` prints and profile ranks by */
  fl_metrics metrics; /* every metric of the answer */
  int v_from_gamma;  /* 1: a global problem's answer came without v, and v = v* + A^-1 J^T gamma
                        (the velocities its impulses give) was scored */
} fl_score;

/* Scores an answer (v: nv, or NULL for a local problem or to derive it from gamma; gamma:
 * 3nc+nh) of problem p by running it through the solver spine as a solve that starts and stops
 * at it (solvers/answer.c): with the normalization `norm` and tolerance `tol` on the merit (the
 * harness's solvers run with norm fclib and abs_tol 1e-8 unless told otherwise). The answer is
 * only read. FL_OK (also for an answer that is not converged: the reason says so),
 * FL_ERR_INVAL (NULL arguments, tol < 0), FL_ERR_NOT_SPD (deriving v: A not SPD), FL_ERR_NOMEM. */
int fl_solution_score(const fl_problem *p, const double *v, const double *gamma,
                      fl_norm_kind norm, double tol, fl_score *out);
/* The same for the answer stored in an FCLIB file's /solution (fl_solution_read: written by
 * fl_solution_save, Siconos, libfclib or h5py), against problem p. Plus fl_solution_read's
 * errors (FL_ERR_NOT_FOUND: no /solution; FL_ERR_FORMAT: sizes that are not p's). */
int fl_solution_score_file(const fl_problem *p, const char *path, fl_norm_kind norm, double tol,
                           fl_score *out);

#ifdef FL_HAVE_SICONOS
/* Siconos plug-ins (solvers/siconos.c): the BLAS library that Siconos's cblas calls bind to in
 * the child process a Siconos solve runs in (its path, written into buf of n bytes) and
 * OpenBLAS's thread count there (*threads; -1 when that BLAS is not OpenBLAS). Forks a
 * short-lived child, so the harness itself never loads Siconos. FL_OK, or FL_ERR_NOT_FOUND
 * when libsiconos_numerics.so.7 cannot be loaded, FL_ERR_NOMEM. */
int fl_siconos_blas(char *buf, size_t n, int *threads);
#endif

#ifdef __cplusplus
}
#endif
#endif /* FL_SOLVER_H */

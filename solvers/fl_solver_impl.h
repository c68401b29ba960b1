/* fl_solver_impl.h: what a solver implementation sees (never included outside solvers/ and
 * gpu/). A solver is one .c file exporting one const fl_solver_ops.
 *
 * The iteration contract, the same in every solver (PETSc cr.c):
 *
 *   fl_iter_stat st; fl_iter_stat_init(&st, 0); ...fill...;
 *   if ((reason = fl_solver_record(s, &st)) != 0) return FL_OK;     // iteration 0 = guess
 *   for (int k = 1;; k++) {
 *     ...update...;
 *     fl_iter_stat_init(&st, k); ...fill...;
 *     if ((reason = fl_solver_record(s, &st)) != 0) break;            // history, monitors, test
 *   }
 *
 * fl_solver_record stores the record, evaluates the common metrics every `error_every`
 * iterations, runs the monitors (their time is kept out of the solver's time), then the
 * convergence test, and returns the reason (0 to go on). Running out of max_iter or time_limit
 * is decided there, not in each solver. A negative return from a monitor is an error: the
 * solver must return it (fl_solver_record returns FL_REASON_ABORT and s->abort_code holds it).
 */
#ifndef FL_SOLVER_IMPL_H
#define FL_SOLVER_IMPL_H
// layer 3: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 3
#error "solvers/fl_solver_impl.h is in solvers/, layer 3: a lower layer may not include it (docs/layers.md)"
#endif

#include "fl_solver.h"

#define FL_SOLVER_ABI 1
#define FL_MAX_MONITORS 8
#define FL_REASON_ABORT (-1000) /* returned by fl_solver_record when a monitor failed */

struct fl_solver_ops {
  int abi_version;        /* FL_SOLVER_ABI */
  const char *name;       /* registry key ("pgs") */
  const char *summary;    /* one line */
  size_t opts_size;       /* size of the solver's options struct */
  const fl_option_desc *options; /* its table (offsets into the options struct) */
  size_t data_size;       /* size of private state, zeroed before setup */
  unsigned caps;          /* FL_CAP_* */
  /* Sizes scratch (s->arena via fl_solver_arena_reserve) and precomputes; may be called again
   * with another problem after destroy-less reuse: must release what a previous setup made. */
  int (*setup)(fl_solver *s, const fl_problem *p);
  /* Runs the iteration; see the contract above. Returns FL_OK or an error code. */
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

/* Common options, shared by all solvers. */
typedef struct fl_solve_common {
  int max_iter;      /* iteration budget */
  double abs_tol;    /* on the solver's own residual */
  double rel_tol;    /* relative to iteration 0's residual */
  double time_limit; /* seconds, INFINITY = none */
  int warm_start;    /* use incoming v, gamma */
  int seed;          /* for randomized orderings */
  int error_every;   /* evaluate common metrics every k iterations (0 = never; final always) */
  int norm;          /* fl_norm_kind of the merit: none|fclib|siconos */
  int never_stop;    /* run the whole budget (fixed-budget curves) */
  char monitor[FL_OPT_STRLEN]; /* "", "stdout", "csv:PATH" */
} fl_solve_common;

struct fl_solver {
  const fl_solver_ops *ops;
  fl_solve_common common;
  void *opts;              /* ops->opts_size bytes, the solver's own options */
  void *data;              /* ops->data_size bytes, private state */
  void *keep;              /* what the solver keeps from one setup to the next (e.g. a symbolic
                            * factorization, reused while the problem's pattern repeats);
                            * NULL or freed by keep_free in fl_solver_destroy */
  void (*keep_free)(void *keep);
  fl_arena arena;          /* scratch, sized in setup; solve makes no malloc */
  int is_setup;

  /* the solve in progress */
  const fl_problem *prob;
  const double *cur_v, *cur_gamma; /* set by the solver before each record */
  double t_start;          /* fl_time_now() at the start of solve */
  double t_monitor;        /* accumulated monitor time */
  double error0;           /* residual of iteration 0 */
  int reason;
  int iters;
  int abort_code;
  int fallback;            /* solves of this step with a fallback law (fl_result.fallback) */
  double device_s, device_bytes; /* GPU solvers fill these during solve (NAN before) */

  /* history */
  fl_iter_stat *hist;
  int hist_cap, hist_len;
  long hist_lost;

  /* monitors */
  struct {
    fl_monitor_fn fn;
    void *ctx;
    void (*destroy)(void *);
  } mon[FL_MAX_MONITORS];
  int nmon;

  /* common metrics workspace */
  fl_metrics last_metrics;
};

/* Stores, measures, monitors and tests one record; returns the reason (0 = continue). Fills
 * st->t and, every error_every iterations, st->merit and st->momentum from cur_v/cur_gamma. */
int fl_solver_record(fl_solver *s, fl_iter_stat *st);

/* 1 when the record of iteration `iter` will read the host iterate (cur_v, cur_gamma): the
 * common metrics are due or monitors are attached. Device solvers copy their iterate back
 * before fl_solver_record only then. */
int fl_solver_wants_iterate(const fl_solver *s, int iter);

/* Solver time so far (monitors excluded), seconds. */
double fl_solver_elapsed(const fl_solver *s);

/* (Re)allocates the arena to at least `bytes` (call from setup). FL_ERR_NOMEM on failure. */
int fl_solver_arena_reserve(fl_solver *s, size_t bytes);

/* Error helper for solvers: records the message and returns code. */
#define FL_SOLVER_ERR(s, code, ...) fl_seterr((code), __VA_ARGS__)

/* Ops tables of the built-in solvers (defined in their own files). */
extern const fl_solver_ops fl_pgs_ops;
extern const fl_solver_ops fl_jacobi_ops;
extern const fl_solver_ops fl_primal_descent_ops;
extern const fl_solver_ops fl_dual_descent_ops;
extern const fl_solver_ops fl_sap_ops;
extern const fl_solver_ops fl_nsn_ops;
extern const fl_solver_ops fl_prox_ops; /* solvers/prox.c */
extern const fl_solver_ops fl_admm_ops; /* solvers/admm.c */
extern const fl_solver_ops fl_pnewton_ops; /* solvers/pnewton.c */
extern const fl_solver_ops fl_ipm_ops; /* solvers/ipm.c */
#ifdef FL_HAVE_SICONOS /* solvers/siconos.c */
extern const fl_solver_ops fl_siconos_nsgs_ops, fl_siconos_nsn_ac_ops, fl_siconos_nsn_fb_ops,
  fl_siconos_prox_ops, fl_siconos_admm_ops, fl_siconos_vi_eg_ops, fl_siconos_gfc3d_nsgs_wr_ops,
  fl_siconos_gfc3d_prox_wr_ops, fl_siconos_gfc3d_admm_ops;
/* Siconos's own error (fc3d_compute_error with norm ||q||, or gfc3d_compute_error with ||q||,
 * ||b||) of the answer (v: nv, used by global solvers only; gamma: 3nc) on the problem a
 * Siconos solver s was set up on, evaluated in a child process (tests compare it with
 * FrictionLab's metrics). FL_OK, FL_ERR_STATE (not set up, child failed), FL_ERR_NOMEM. */
int fl__siconos_error(fl_solver *s, const fl_problem *p, const double *v, const double *gamma,
                      double *err);
#endif
#ifdef FL_HAVE_CUDA
extern const fl_solver_ops fl_jacobi_cuda_ops; /* gpu/relax_gpu.c */
extern const fl_solver_ops fl_pgs_cuda_ops;
#endif

/* Primal descent's objective g(v) and gradient d (nv) at v, with gamma(v) (3nc+nh), for a
 * solver created as "primal-descent" and set up on p (tests check d against finite
 * differences of g). */
double fl__primal_descent_eval(fl_solver *s, const fl_problem *p, const double *v,
                               double *gamma, double *grad);

#endif /* FL_SOLVER_IMPL_H */

// SPDX-License-Identifier: Apache-2.0
/* fl_solver_impl.h: what a built-in solver sees (never included outside solvers/ and gpu/).
 * A solver is one .c file exporting one const fl_solver_ops (fl_plugin.h). Built-in solvers
 * reach into struct fl_solver below; a plug-in uses fl_plugin.h's calls instead, so that the
 * struct may change without breaking it.
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

#include "fl_plugin.h" /* struct fl_solver_ops, the calls a solver makes */

#define FL_MAX_MONITORS 8

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

/* Checks a solver table from outside the library (fl_solver_register_ops, fl_plugin_add_solver)
 * of `size` bytes; `origin` names it in messages. FL_OK or the refusal. */
int fl__solver_ops_check(const fl_solver_ops *ops, size_t size, const char *origin);

/* A handle on a table that need not be registered (solvers/answer.c scores an answer with
 * one); otherwise as fl_solver_create. */
/* plugin.c: the folder of the file holding libfrictionlab's code followed by tail (e.g.
 * "/frictionlab/plugins") into buf (n bytes); 1 on success, 0 when unknown or too long. */
int fl__lib_dir(char *buf, size_t n, const char *tail);
int fl__solver_create_ops(const fl_solver_ops *ops, fl_solver **out);

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

/* The answer to a problem without rows (nc = 0, nh = 0), the same for every solver that has
 * none of its own to give: v = v* on a global problem (when v is given), gamma empty, one
 * record of iteration 0 with error 0 (so CONVERGED_EXACT, the common metrics of that iterate
 * on error_every). Called from a solver's solve; returns what that solve returns. */
int fl__solver_answer_empty(fl_solver *s, const fl_problem *p, double *v, double *gamma);

#endif /* FL_SOLVER_IMPL_H */

// SPDX-License-Identifier: Apache-2.0
/* fl_problem.h: the one problem interface, its shared operators and solver-independent metrics.
 *
 * An fl_problem is one time step's contact problem at the velocity level (the form shared by
 * Drake's SAP and FCLIB's "global" format):
 *
 *     A (v - v*) = J^T gamma,        u = J v + b,
 *
 * with 3 rows of J per contact in the contact frame, normal first (n, t1, t2), u_n > 0 when
 * the bodies separate, followed by nh bilateral rows. The unknowns are impulses gamma (N s).
 * Every contact i carries phi0 (m, signed distance, < 0 overlapping), mu, stiffness k (N/m,
 * INFINITY = rigid) and tau_d (s, dissipation time scale). The compliant normal law is
 * gamma_n/dt = (-k (phi0 + dt u_n) - tau_d k u_n)_+, i.e. gamma_n = (vhat_n - u_n)_+ / R_n with
 * R_n = 1/(dt k (dt + tau_d)), vhat_n = -phi0/(dt + tau_d); rigid contact has R_n = 0.
 * Bilateral row h: J_h v + b_h + g0_h/dt + c_h gamma_h = 0, lo_h <= gamma_h <= hi_h.
 *
 * Rigid bodies (problems/examples.c and scenes): a body's generalized velocities are
 * (v_x, v_y, v_z, w_x, w_y, w_z) of its centre of mass in the world frame, and its block of A
 * is the 6x6 world-frame mass matrix diag(m, m, m) (+) R I_body R^T; a contact row for the
 * frame direction d at point p is [d^T, ((p - c) x d)^T] on body b's dofs and the negative of
 * that on body a's, the normal pointing from a to b.
 *
 * A problem loaded from an FCLIB *local* file has no A and J: kind == FL_PROBLEM_LOCAL, nv == 0,
 * and the contact problem is u = W gamma + q directly (W already includes any regularization).
 *
 * The struct is plain, flat data owned by whoever created it (free with fl_problem_free) and
 * read-only for solvers.
 */
#ifndef FL_PROBLEM_H
#define FL_PROBLEM_H
// layer 2: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 2
#error "problems/fl_problem.h is in problems/, layer 2: a lower layer may not include it (docs/layers.md)"
#endif

#include <math.h>

#include "../core/fl_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fl_problem_kind {
  FL_PROBLEM_GLOBAL = 0, /* A, J, v*, b known (scenes, FCLIB global files) */
  FL_PROBLEM_LOCAL = 1   /* only W, q, mu (FCLIB local files) */
} fl_problem_kind;

typedef struct fl_problem {
  /*---- sizes ----*/
  fl_problem_kind kind;
  fl_int nv;  /* generalized velocities (0 for local problems) */
  fl_int nc;  /* contacts, 3 rows each */
  fl_int nh;  /* bilateral rows */
  fl_int ncl; /* cliques: independent diagonal blocks of A (0 for local problems) */
  double dt;  /* time step (s); 1 for FCLIB problems, which carry no time step */
  double max_recovery; /* m/s, cap on a rigid contact's target separation speed vhat_n (the
                          penetration recovery -phi0/dt); INFINITY (default): no cap */
  char name[128]; /* label for reports (file stem, scene name, ...) */

  /*---- dynamics (global problems; NULL for local) ----*/
  double *v0;     /* (nv) start-of-step velocities */
  double *vstar;  /* (nv) free-motion velocities */
  fl_csr *A;      /* (nv x nv) SPD, both triangles stored; block diagonal by clique */
  fl_int *clique_ptr; /* (ncl + 1) clique c owns clique_dof[clique_ptr[c] .. clique_ptr[c+1]) */
  fl_int *clique_dof; /* (nv) dofs grouped by clique, ascending within a clique */
  fl_int *dof_clique; /* (nv) clique of each dof */
  fl_csr *J;      /* ((3 nc + nh) x nv) contact rows (normal first), then bilateral rows */
  double *b;      /* (3 nc + nh) constant term of u = J v + b (FCLIB's w); zeros for scenes */

  /*---- local form (local problems; NULL for global until computed by a shared operator) ----*/
  fl_csr *W;      /* (3 nc x 3 nc) Delassus matrix incl. regularization, local problems only */
  double *q;      /* (3 nc) */

  /*---- per contact ----*/
  double *phi0;      /* (nc) signed distance at the start of the step (m) */
  double *mu;        /* (nc) friction coefficient >= 0 */
  double *stiffness; /* (nc) k (N/m); INFINITY for rigid contact */
  double *tau_d;     /* (nc) dissipation time scale (s) >= 0 */
  fl_int *clique_a;  /* (nc) first clique, -1 for the world (ground) */
  fl_int *clique_b;  /* (nc) second clique, -1 for the world */
  double *point;     /* (nc x 3) world contact point, for plots and observables only */
  double *frame;     /* (nc x 9) rows n, t1, t2 of the contact frame (world), for plots only */
  int64_t *feature;  /* (nc) feature id for matching impulses across steps; -1 if none */
  double *gamma_guess; /* (3 nc + nh) warm-start impulses offered by the stepper, or NULL;
                          NULL after fl_problem_alloc; if set, allocated with fl_malloc and
                          owned (freed) by the problem */
  double *adiag_hint;  /* (nv) or NULL: the diagonal of the unreduced dynamics matrix at each
                          dof, where A is a Schur complement (deformable bodies, sim/fl_fem.h),
                          for estimates that must not depend on how a body is condensed (SAP's
                          Delassus estimate); NULL means diag(A). Owned like gamma_guess */

  /*---- per bilateral row ----*/
  double *g0;         /* (nh) constraint error at the start of the step (m or rad) */
  double *compliance; /* (nh) c >= 0 (0 = hard) */
  double *lo, *hi;    /* (nh) impulse bounds; -INFINITY/INFINITY when unbounded */

  /*---- storage ----*/
  void *buffer_;      /* one allocation holding the flat arrays above (not A, J, W) */
} fl_problem;

/*---- creation ----*/

/* Allocates a zeroed problem with all per-contact, per-row and per-dof arrays for the given
 * sizes in one buffer; A, J, W, q stay NULL for the caller to set (the problem takes
 * ownership of whatever fl_csr it is given). Defaults: stiffness INFINITY, tau_d 0,
 * clique_a/b -1, feature -1, lo -INFINITY, hi INFINITY, dt 1. For kind LOCAL, nv and ncl must
 * be 0 and `q` is allocated. Returns FL_OK or FL_ERR_NOMEM / FL_ERR_INVAL. */
int fl_problem_alloc(fl_problem_kind kind, fl_int nv, fl_int nc, fl_int nh, fl_int ncl,
                     fl_problem **out);
/* Frees the problem and every matrix it owns. NULL-safe. */
void fl_problem_free(fl_problem *p);
/* Number of constraint rows, 3 nc + nh. */
static inline fl_int fl_problem_nrows(const fl_problem *p) { return 3 * p->nc + p->nh; }

/* Computes the clique partition (clique_ptr, clique_dof, dof_clique, ncl) from the sparsity
 * of A (connected components, numbered by their smallest dof) and fills clique_a/clique_b of
 * each contact from the nonzero columns of its rows of J (clique_a < clique_b, -1 for the
 * world; a contact touching more than two cliques gets FL_ERR_UNSUPPORTED). The arrays live
 * in the problem's buffer, which fl_problem_alloc sizes for up to nv cliques, so any earlier
 * partition is overwritten. Local problems: FL_ERR_UNSUPPORTED. */
int fl_problem_find_cliques(fl_problem *p);

/* Checks sizes, finiteness, mu >= 0, SPD-looking A (positive diagonal), index ranges.
 * Returns FL_OK or FL_ERR_FORMAT with a message that starts with `where`. */
int fl_problem_validate(const fl_problem *p, const char *where);

/* Per-contact normal regularization of the common model: R_n = 1/(dt k (dt + tau_d)) (0 for
 * rigid) and vhat_n = -phi0/(dt + tau_d), for rigid contacts at most p->max_recovery (m/s).
 * Local problems: R_n = vhat_n = 0. */
void fl_problem_normal_law(const fl_problem *p, fl_int i, double *R_n, double *vhat_n);

/*---- a local problem as a global one (problems/lift.c, docs/lift.md) ----*/

/* Largest relative error max_ij |sym(W)_ij - (J A^-1 J^T)_ij| / max_ij |W_ij| that the lift
 * accepts, sym(W) = (W + W^T)/2; above it sym(W) is not positive semidefinite (to that
 * accuracy) and no A, J exist. */
#define FL_LIFT_MAX_ERROR 1e-9
/* Largest nc the (dense) lift takes: 3 nc x 3 nc matrices of doubles, two of them at once. */
#define FL_LIFT_MAX_CONTACTS 8192

/* What a lift reproduces, every error relative to max_ij |W_ij| (dimensionless). */
typedef struct fl_lift_info {
  fl_int rank;      /* r = nv of the lift: the numerical rank of sym(W) */
  double exactness; /* max_ij |W_ij - (J A^-1 J^T)_ij|: the lift's whole error */
  double asymmetry; /* max_ij |W_ij - W_ji| / 2: the skew part of W, which no lift represents
                       (J A^-1 J^T is symmetric); exactness >= asymmetry - psd_error */
  double psd_error; /* max_ij |sym(W)_ij - (J A^-1 J^T)_ij|: round-off and dropped pivots */
} fl_lift_info;

/* Lifts a local problem (W, q, mu) to a global one with the same contact problem, so that
 * primal solvers (which need A and J) run on it:
 *
 *     A = I_r (r x r, one clique),  J = P L (3nc x r),  v* = v0 = 0,  b = q,
 *     phi0 = 0, rigid contact (k = INFINITY, tau_d = 0), dt = 1, mu, feature and name copied,
 *
 * from LAPACK's pivoted Cholesky P^T sym(W) P = L L^T + S (dpstrf), stopped at the rank r
 * where every pivot left is <= 3nc u max_i W_ii (u = DBL_EPSILON / 2), so |S_ij| <= that too.
 * Then J A^-1 J^T = sym(W) - P S P^T, and for every gamma the lifted u = J v + b at the balance
 * v = v* + A^-1 J^T gamma = J^T gamma differs from the local u = W gamma + q by
 * -(skew(W) + P S P^T) gamma, |.| <= 3nc max|W_ij| exactness ||gamma||: the gamma of a lifted
 * solution is the local problem's gamma, to be judged with u = W gamma + q.
 * *global (caller-owned, free with fl_problem_free) has nv = r (0 when sym(W) = 0: every row of
 * J empty), nh = 0, ncl = 1 (0 when r = 0), clique_a = 0 for contacts whose rows of J are not
 * all zero (-1 otherwise), clique_b = -1, frames the identity. info may be NULL.
 * Cost: O(nc^2) memory (two dense 3nc x 3nc matrices), O(nc r^2) flops for the factorization
 * and O(nc^2 r) for the error measurement.
 * Returns FL_OK; FL_ERR_INVAL (NULL argument, or not a local problem with W and q);
 * FL_ERR_FORMAT (W of the wrong size or not finite); FL_ERR_UNSUPPORTED when psd_error exceeds
 * FL_LIFT_MAX_ERROR (the message gives the rank and the error) or nc > FL_LIFT_MAX_CONTACTS;
 * FL_ERR_NOMEM; FL_ERR_LIBRARY (LAPACK refused). On error *global is NULL; info holds the
 * measured errors when the factorization ran (else rank -1 and NANs). */
int fl_problem_lift_local(const fl_problem *local, fl_problem **global, fl_lift_info *info);

/*---- shared operators on A (global problems) ----*/

/* Cached factorization of A per clique (dense Cholesky for cliques of <= 64 dofs, CHOLMOD
 * supernodal with AMD otherwise) and of J A^-1 by rows. Created from a problem that must
 * outlive it and whose cliques are set (ncl > 0 when nv > 0; loaders call
 * fl_problem_find_cliques, else FL_ERR_STATE). Solves reuse workspaces made at creation and
 * allocate nothing; not thread-safe (one fl_dynamics per thread). */
typedef struct fl_dynamics fl_dynamics;

/* Returns FL_ERR_UNSUPPORTED for local problems, FL_ERR_NOT_SPD if a block is not SPD. */
int fl_dynamics_create(const fl_problem *p, fl_dynamics **out);
void fl_dynamics_free(fl_dynamics *d); /* NULL-safe */
/* y = A x (nv). */
void fl_dynamics_apply_A(const fl_dynamics *d, const double *x, double *y);
/* x = A^-1 y (nv); x may alias y. */
void fl_dynamics_solve_A(const fl_dynamics *d, const double *y, double *x);
/* B = J A^-1 as a sparse ((3nc+nh) x nv) matrix whose row r has entries on every dof of the
 * cliques that row r of J touches. Owned by d; computed on first call. NULL on failure. */
const fl_csr *fl_dynamics_JAinv(fl_dynamics *d);
/* Diagonal 3x3 blocks W_ii = J_i A^-1 J_i^T, (nc x 9) row-major, and the diagonal of the
 * bilateral rows (nh). Either output may be NULL. */
int fl_dynamics_delassus_blocks(fl_dynamics *d, double *Wc, double *Wh);
/* Full W = J A^-1 J^T over all (3nc+nh) rows, as a new CSR owned by the caller. */
int fl_dynamics_delassus(fl_dynamics *d, fl_csr **W);

/* The local form of the contact rows of a problem: W = J A^-1 J^T + diag(R_n, 0, 0) and
 * q = J v* + b - (vhat_n, 0, 0) (3nc, caller-allocated), over contact rows only. For local
 * problems W and q are copies of the problem's. Bilateral rows must be absent (nh == 0), or
 * FL_ERR_UNSUPPORTED. W is a new CSR owned by the caller. */
int fl_problem_local_form(const fl_problem *p, fl_dynamics *d, fl_csr **W, double *q);
/* The local form of a global problem p (no bilateral rows) as a problem of its own: a new
 * local fl_problem *out (name, dt, mu, W and q of fl_problem_local_form) and the dynamics *dyn
 * it was formed with, whose fl_dynamics_JAinv gives back the velocities v = v* + A^-1 J^T gamma
 * of an answer gamma. Both are owned by the caller (fl_problem_free, fl_dynamics_free) and left
 * NULL on error. Errors: FL_ERR_UNSUPPORTED for bilateral rows, FL_ERR_INVAL for a local p,
 * FL_ERR_NOMEM. */
int fl_problem_local_problem(const fl_problem *p, fl_dynamics **dyn, fl_problem **out);

/*---- solver-independent metrics ----*/

/* Normalization of the natural-map residual. q, u below are the local form's (q = J v* + b -
 * (vhat_n, 0, 0), u = W gamma + q, i.e. (u_n - vhat_n + R_n gamma_n, u_t) with u = J v + b),
 * over the 3 nc contact rows.
 * - FL_NORM_FCLIB reproduces libfclib 3.1's fclib_merit_local(MERIT_1) exactly (checked in
 *   tests/test_metrics.c): it divides by 1 + sqrt(||q||_2), the square root of the norm, not
 *   the norm. (That function recomputes u = W r + q from r, ignoring the stored u, and its
 *   product is silently skipped unless W is stored compressed-column; fclib_merit_global
 *   returns 0.)
 * - FL_NORM_SICONOS: Siconos 4.4 fc3d_compute_error divides by whatever norm its caller passes
 *   and not at all when that norm is <= DBL_EPSILON (releases before 4.2 divided by 1 + ||q||);
 *   we pass max(||q||, ||gamma||, ||u||) as ENVIRONMENT.md records, with the same guard. */
typedef enum fl_norm_kind {
  FL_NORM_NONE = 0,   /* raw ||gamma - P_K(gamma - uhat)||_2 */
  FL_NORM_FCLIB = 1,  /* as libfclib 3.1's merit: raw / (1 + sqrt(||q||)) */
  FL_NORM_SICONOS = 2 /* raw / max(||q||, ||gamma||, ||u||), raw when that is <= DBL_EPSILON */
} fl_norm_kind;

typedef struct fl_metrics {
  double natmap;      /* natural-map residual with De Saxce's correction, normalized */
  double natmap_raw;  /* the same, unnormalized (N s) */
  double momentum;    /* ||D (A (v - v*) - J^T gamma)|| / max(||D A v||, ||D A v*||,
                         ||D J^T gamma||), D = diag(A)^-1/2; NAN for local problems */
  double signorini;   /* max_i |min(gamma_n, u_n - vhat_n + R_n gamma_n)|, complementarity of
                         the normal law (without De Saxce's term, which is > 0 when sliding) */
  double cone;        /* max_i of (||gamma_t|| - mu gamma_n)_+ and (-gamma_n)_+ */
  double dual;        /* max_i (mu ||u_t|| - uhat_n)_+, dual-cone violation of uhat; equals
                         (-(u_n - vhat_n + R_n gamma_n))_+ */
  double dissipation; /* max_i |gamma_t . u_t + mu gamma_n ||u_t|||, maximum-dissipation term */
  double penetration; /* max_i (-(phi0 + dt u_n))_+ (m) for global problems; 0 for local ones */
  double bilateral;   /* max_h |gamma_h - clamp(gamma_h - e_h, lo_h, hi_h)| with
                         e_h = J_h v + b_h + g0_h/dt + c_h gamma_h: |e_h| for unbounded rows,
                         0 where a row sits at a bound that the sign of e_h allows */
  double norm_q, norm_u, norm_gamma; /* raw 2-norms used by the normalizations (fl_norm_kind) */
} fl_metrics;

/* The common convergence measure ("merit"), the one definition behind `solve`, `profile`,
 * `check` and the figures: the normalized natural map for local problems, and for global ones
 * max(natural map, relative momentum residual), since a global iterate must also satisfy
 * A (v - v*) = J^T gamma (Siconos's gfc3d error combines the same two). NaN or Inf in either
 * gives INFINITY (never solved). raw0 > 0: the raw natural map at the solve's start; an
 * iterate whose raw natural map exceeds FL_MERIT_GROWTH_MAX raw0 is diverging and gets
 * INFINITY whatever its normalized value (a normalization by ||gamma|| hides a blow-up);
 * raw0 <= 0 or NaN: no such test. */
#define FL_MERIT_GROWTH_MAX 1e4
double fl_metrics_merit(const fl_metrics *m, double raw0);

/* Evaluates every metric of (v, gamma) (v: nv, gamma: 3nc+nh). For local problems v is ignored
 * (may be NULL) and u = W gamma + q. Uses A and J directly (no factorization); allocates and
 * frees its own temporaries, so call it outside timed loops. Returns FL_OK, FL_ERR_INVAL (NULL
 * argument, or v NULL for a global problem) or FL_ERR_NOMEM. */
int fl_problem_metrics(const fl_problem *p, const double *v, const double *gamma,
                       fl_norm_kind norm, fl_metrics *out);

/* u = J v + b (global) or W gamma + q (local) over all rows (3nc+nh). */
void fl_problem_velocity(const fl_problem *p, const double *v, const double *gamma, double *u);

/* Projection of x onto the cone ||x_t|| <= mu x_n (Euclidean). */
void fl_cone_project(double mu, const double x[3], double out[3]);

/*---- built-in example problems (problems/examples.c) ----*/

/* Names of the hand-made example problems, NULL-terminated. */
const char *const *fl_examples_list(void);
/* Creates one example by name; FL_ERR_UNKNOWN_PROBLEM lists valid names in the message. */
int fl_problem_create_example(const char *name, fl_problem **out);
/* One exact solution of an example, from its closed form: v (nv; ignored for local examples,
 * may be NULL) and gamma (3nc+nh, may be NULL), caller-allocated. Where the impulses are not
 * unique (rigid boxes on four corners: statically indeterminate normals) the symmetric one is
 * given; v and the sums of the impulses are unique. FL_ERR_UNKNOWN_PROBLEM for other names. */
int fl_example_solution(const char *name, double *v, double *gamma);

/*---- FCLIB files (problems/fclib_io.c), read and written with libhdf5 directly ----*/

/* Loads an FCLIB file ("/fclib_global" or "/fclib_local" group). Every field is validated:
 * groups present, sizes consistent, indices in range, values finite, mu >= 0; the three sparse
 * layouts are accepted (CSC, CSR, triplet with i = row). A global problem becomes A = M,
 * J = H^T, b = w, v* = M^-1 f, v0 = 0, phi0 = 0, rigid contact, dt = 1; a local problem keeps
 * W, q, mu. The problem's name is the file stem. A mass matrix stored as one triangle is
 * mirrored (both triangles with round-off differences are averaged); an optional G becomes nh
 * hard, unbounded bilateral rows (rows G^T of J, b = FCLIB's b). On error returns FL_ERR_IO or
 * FL_ERR_FORMAT (FL_ERR_UNSUPPORTED for rolling friction, spacedim != 3, mixed local problems
 * with V, R) with a message naming the file, the HDF5 path and what was expected; *out is
 * NULL. No HDF5 handle stays open and HDF5 prints nothing. */
int fl_problem_load_fclib(const char *path, fl_problem **out);

/* Reads the solution stored in an FCLIB file, if any: v (nv, may be NULL), r = gamma (3nc),
 * u (3nc, may be NULL). Returns FL_ERR_NOT_FOUND when the file holds no solution, or only
 * libfclib's placeholder (r, and v if stored, all zero), and FL_ERR_FORMAT when the stored
 * sizes differ from nv, nc. */
int fl_fclib_read_solution(const char *path, fl_int nv, fl_int nc, double *v, double *gamma,
                           double *u);

/* Writes a problem as an FCLIB file (global form for global problems, with M = A, H = J^T
 * over contact rows, f = A v*, w = b - (vhat_n, 0, 0) so that the gaps are kept; local form
 * for local problems), and optionally a solution (v may be NULL for local problems). The file
 * is written to a temporary name and renamed, so no half-written file is left on error.
 * Matrices are written as compressed columns (nz = -1). Hard, unbounded bilateral rows are
 * written as G with b = b_h + g0_h/dt (and the solution's l). A compliant contact (R_n > 0 in
 * fl_problem_normal_law) is written as a rigid one plus one extra dof of mass 1/R_n that only
 * its normal row sees (H entry 1, f 0, solution v_e = R_n r_n), so the file's local form equals
 * the problem's W = J A^-1 J^T + diag(R_n, 0, 0) to round-off; the file then has nv + (number
 * of compliant contacts) dofs. Compliant or bounded bilateral rows are not representable:
 * FL_ERR_UNSUPPORTED. A global solution needs v (FL_ERR_INVAL otherwise). */
int fl_problem_save_fclib(const fl_problem *p, const char *path, const char *title,
                          const double *v, const double *gamma);

/*---- answers: saved in FCLIB's solution layout and read back ----*/

/* Writes an answer of p, v (nv; may be NULL for a local problem) and gamma (3nc+nh), as an
 * FCLIB file at `path` whose /solution group holds v (global problems), u (3nc: J v + b, or
 * W gamma + q for a local problem), r (the 3nc contact impulses) and l (the nh bilateral ones),
 * the layout libfclib's fclib_read_solution, Siconos and h5py read. The file also holds the
 * problem, as FCLIB wants: with `source` (the FCLIB file p was loaded from) a byte copy of it,
 * so the problem is kept exactly, with its /solution replaced; with source NULL (a scene's
 * step, a built-in example) the problem as fl_problem_save_fclib writes it. Written to a
 * temporary name and renamed: no half-written file on error. Errors: FL_ERR_INVAL (NULL
 * arguments, v missing for a global problem, a non-finite entry, a source whose sizes are not
 * p's), FL_ERR_IO, FL_ERR_FORMAT (the source is no HDF5 file), fl_problem_save_fclib's. */
int fl_solution_save(const fl_problem *p, const char *source, const double *v,
                     const double *gamma, const char *path);
/* Reads the answer stored in FCLIB file `path` (/solution, written by anyone) for problem p:
 * gamma (3nc+nh: r, then l) and, when the file stores /solution/v and p is global, v (nv; may
 * be NULL); *have_v (may be NULL) says whether it did. Every size is checked against p and
 * every value must be finite. FL_ERR_NOT_FOUND (no /solution), FL_ERR_FORMAT (sizes, values,
 * a corrupt file; read first in a child process as fl_problem_load_fclib does), FL_ERR_IO. */
int fl_solution_read(const fl_problem *p, const char *path, double *v, double *gamma,
                     int *have_v);

#ifdef __cplusplus
}
#endif
#endif /* FL_PROBLEM_H */

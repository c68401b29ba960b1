// SPDX-License-Identifier: Apache-2.0
/* fl_world.h: the rigid-body world: bodies, materials, joints, forces, the time stepper,
 * observables, canonical scenes and scene files.
 *
 * A world holds rigid bodies (dynamic, fixed, or with prescribed motion), their materials and
 * the rules that combine two materials, bilateral joints, applied forces and a state (poses and
 * velocities at time t). Each step the stepper
 *
 *   1. collides (broad phase over AABBs grown by the speculative margin, then fl_collide),
 *   2. assembles one fl_problem (A = blockdiag(m I3, R I_body R^T) per dynamic body, one clique
 *      per body; v* = v0 + dt A^-1 (f_ext - w x I w); 3 rows of J per contact in the contact
 *      frame (n, t1, t2), u_n > 0 separating; then the joints' bilateral rows),
 *   3. solves it with a solver from the registry (solvers/fl_solver.h),
 *   4. integrates q = q0 + dt N(q0) v (x += dt v; fl_quat_integrate, which renormalizes).
 *
 * Units are SI. Frames: z is up in the built-in scenes, but gravity is a free vector. Poses are
 * the world position of the body's centre of mass (the body frame origin) and a unit quaternion
 * (w, x, y, z) rotating body vectors into the world. Velocities are world-frame: linear
 * velocity of the centre of mass (m/s) and angular velocity (rad/s). The generalized velocities
 * of dynamic body k are v[6k .. 6k+5] = (v_x, v_y, v_z, w_x, w_y, w_z) (in body order, counting
 * only dynamic bodies); fixed and prescribed bodies have no generalized velocities.
 *
 * Material combination (documented in docs/scenes.md and docs/scene-format.md): a contact
 * between materials a and b uses an explicit per-pair entry when the world has one, otherwise
 *   mu        = rule(mu_a, mu_b), rule one of harmonic 2 mu_a mu_b/(mu_a + mu_b) (Drake's,
 *               the default; 0 when both are 0), min, geometric sqrt(mu_a mu_b), max, mean;
 *   stiffness = k_a k_b/(k_a + k_b) (springs in series; INFINITY is rigid, so a rigid
 *               material takes the other's stiffness and two rigid materials are rigid);
 *   tau_d     = tau_a + tau_b (dissipation time scales add, as in Drake).
 *
 * Ownership: a world owns every array and shape in it; free it with fl_world_free. Functions
 * return FL_OK or a negative FL_ERR_* code with a message in fl_errmsg(). Not thread-safe.
 */
#ifndef FL_WORLD_H
#define FL_WORLD_H
// layer 4: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 4
#error "sim/fl_world.h is in sim/, layer 4: a lower layer may not include it (docs/layers.md)"
#endif

#include <stdint.h>
#include <stdio.h>

#include "../core/fl_core.h"
#include "../solvers/fl_solver.h"
#include "fl_geometry.h"
#include "../problems/fl_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- materials ----*/

typedef struct fl_material {
  char name[32];
  double mu;        /* Coulomb friction coefficient >= 0 */
  double stiffness; /* normal contact stiffness k (N/m); INFINITY = rigid */
  double tau_d;     /* dissipation time scale (s) >= 0 (damping d = tau_d k) */
} fl_material;

/* An explicit contact law for one pair of materials (either order), overriding the rules. */
typedef struct fl_pair_material {
  int mat_a, mat_b; /* material indices */
  double mu, stiffness, tau_d;
} fl_pair_material;

typedef enum fl_mu_rule {
  FL_MU_HARMONIC = 0, /* 2 a b/(a + b), Drake's rule (default) */
  FL_MU_MIN = 1,
  FL_MU_GEOMETRIC = 2, /* sqrt(a b) */
  FL_MU_MAX = 3,
  FL_MU_MEAN = 4 /* (a + b)/2 */
} fl_mu_rule;

/* "harmonic|min|geometric|max|mean", the order of fl_mu_rule (for option tables). */
#define FL_MU_RULE_CHOICES "harmonic|min|geometric|max|mean"

/* Combined contact law of materials a and b under the world's rules (see above). */
void fl_material_combine(const fl_material *a, const fl_material *b, fl_mu_rule rule, double *mu,
                         double *stiffness, double *tau_d);

/*---- bodies ----*/

typedef enum fl_body_kind {
  FL_BODY_DYNAMIC = 0,   /* moved by the solver: 6 generalized velocities */
  FL_BODY_FIXED = 1,     /* never moves (ground, walls) */
  FL_BODY_PRESCRIBED = 2 /* moves with its given (constant) velocity and angular velocity */
} fl_body_kind;

typedef struct fl_body {
  char name[32];
  fl_body_kind kind;
  fl_shape shape;     /* owned; centred on the centre of mass for dynamic bodies */
  int material;       /* index into the world's materials */
  double density;     /* kg/m^3 the mass came from, or 0 when mass and inertia were given */
  double mass;        /* kg (dynamic bodies; 0 otherwise) */
  double inertia[9];  /* kg m^2, body frame, about the centre of mass (row-major) */
  double pos[3];      /* m, world position of the centre of mass (body origin) */
  double quat[4];     /* unit quaternion (w, x, y, z), body -> world */
  double vel[3];      /* m/s, world frame */
  double omega[3];    /* rad/s, world frame */
  double pos0[3];     /* pose when the world was started (for drift observables) */
  double quat0[4];
  double size;        /* characteristic length (m): twice the bounding radius (INFINITY for planes) */
  fl_int dof;         /* first generalized velocity, -1 for fixed and prescribed bodies */
  /* extension (sim/fl_hydro.h): E_h > 0 makes a cylinder a compliant hydroelastic body
   * whose contact with a plane is a pressure-field patch; set after fl_world_add_body */
  double hydro_modulus; /* hydroelastic modulus E_h (Pa); 0: ordinary point contact */
  int hydro_mesh;       /* patch tessellation (fl_hydro_disk_mesh): n > 0 fan, n < 0 rings */
} fl_body;

/* Body description passed to fl_world_add_body. */
typedef struct fl_body_desc {
  const char *name;   /* NULL: "body<k>" */
  fl_body_kind kind;
  int material;       /* index (0 = the default material every world has) */
  double density;     /* kg/m^3 (> 0) to compute mass and inertia from the shape, or 0 */
  double mass;        /* kg when density == 0 (dynamic bodies) */
  const double *inertia; /* 9 values, body frame about the COM, when density == 0; NULL: from
                            the shape with the density mass/volume */
  double pos[3];      /* m: position of the shape's frame origin (see fl_world_add_body) */
  double quat[4];     /* (w,x,y,z); all zero means identity */
  double vel[3], omega[3];
} fl_body_desc;

/*---- joints (bilateral rows) ----*/

typedef enum fl_joint_type {
  FL_JOINT_WELD = 0,      /* 3 linear + 3 angular rows */
  FL_JOINT_BALL = 1,      /* 3 linear rows: anchors coincide */
  FL_JOINT_DISTANCE = 2,  /* 1 row: |pb - pa| = rest_length, hard or a spring */
  FL_JOINT_PRISMATIC = 3, /* 2 linear rows across the axis + 3 angular rows (+1 drive) */
  FL_JOINT_REVOLUTE = 4   /* 3 linear rows + 2 angular rows across the axis (+1 drive) */
} fl_joint_type;

#define FL_JOINT_TYPE_CHOICES "weld|ball|distance|prismatic|revolute"

typedef struct fl_joint {
  fl_joint_type type;
  int body_a, body_b;  /* body indices; body_a may be -1 for the world */
  double anchor_a[3];  /* m, in a's body frame (world frame when body_a == -1) */
  double anchor_b[3];  /* m, in b's body frame */
  double axis[3];      /* unit axis in a's frame (world when body_a == -1): prismatic, revolute */
  double rest_length;  /* m, distance joint */
  double stiffness;    /* N/m, distance joint; INFINITY = a hard rod */
  double damping;      /* N s/m, distance spring (tau = damping/stiffness) */
  int driven;          /* prismatic/revolute: 1 adds a row holding the relative velocity along
                          the axis at drive_velocity (m/s or rad/s) */
  double drive_velocity;
  double drive_max_force; /* N (or N m) bound on the drive's force; INFINITY = unbounded */
  double qrel[4];      /* rest relative rotation conj(q_a) q_b, set when the joint is added */
  double axis_b[3];    /* the axis in b's frame at rest, set when the joint is added */
} fl_joint;

/* Constraint rows of one joint: 3, 1, 5 or 6, plus one when driven. */
int fl_joint_nrows(const fl_joint *j);

/*---- applied forces ----*/

/* A force and torque at a body's centre of mass (world frame), scaled by a ramp s(t):
 * s = 1 when t1 <= t0 (constant from t0 on; 0 before), else 0 before t0, (t - t0)/(t1 - t0)
 * between, 1 after. */
typedef struct fl_force {
  int body;
  double f[3];   /* N */
  double tau[3]; /* N m */
  double t0, t1; /* s */
} fl_force;

/* The ramp factor of a force at time t (inline: the body kinds use it without world.c). */
static inline double fl_force_scale(const fl_force *f, double t) {
  if (t < f->t0) return 0;
  if (f->t1 <= f->t0 || t >= f->t1) return 1;
  return (t - f->t0) / (f->t1 - f->t0);
}

/*---- scene observables ----*/

typedef enum fl_obs_kind {
  FL_OBS_STACK = 1,   /* bodies bottom to top (first: the support): per interface penetration
                         pen_<k> (m), tilt_max (deg), lateral drift (m), collapsed (0/1) */
  FL_OBS_ARCH = 2,    /* stones: disp_<k> (m, largest vertex displacement), disp_max,
                         disp_rel_max (over each stone's size), stands (0/1: all below 1 %) */
  FL_OBS_SLOPE = 3,   /* one ball: u_x along the slope (m), u_ref (analytic), param: downhill
                         unit vector (3), theta (rad), mu, g (m/s^2) */
  FL_OBS_CHAIN = 4,   /* bodies linked by joints: stretch (sum of the distances between
                         consecutive bodies over the same sum at the start, minus 1), tip height */
  FL_OBS_COIN = 5,    /* one disk sliding and spinning on the ground: v (m/s, speed across up),
                         omega (rad/s, spin about up), eps = v/(|omega| R); param: R */
  FL_OBS_FORCE = 6,   /* rigid bodies: the total contact force on each from the last solved
                         step (N, world frame: <body>_fx, _fy, _fz), gamma / dt summed over its
                         contacts with rigid and deformable bodies (the one observable taken
                         from the solver's impulses, since a force has no other measure) */
  FL_OBS_PRESS = 7,   /* one pressing plate: press_force (N/m: the contact force resisting the
                         push, per unit length), press_approach (m: the plate's travel along
                         the push since the start), press_overlap (m: the deepest overlap of
                         the plate's contacts plus that of the support's, at the end of the
                         last solved step, -(phi0 + dt u_n); the travel the contacts' give
                         accounts for); param: length L (m), push direction (3, unit), travel
                         limit (m, > 0: observing beyond it is an error, the plate has passed
                         through what it presses), support body index + 1 (0: none) */
  FL_OBS_POSE = 8     /* rigid bodies whose pose and velocity are written: <body>.x .y .z
                         (centre of mass, m), .qw .qx .qy .qz (orientation), .vx .vy .vz (m/s),
                         .wx .wy .wz (rad/s), world frame. Without such a group every dynamic
                         body has them in worlds of at most 32 dynamic bodies */
} fl_obs_kind;

typedef struct fl_obs_group {
  fl_obs_kind kind;
  fl_int n;       /* bodies */
  fl_int *body;   /* (n) owned: indices of rigid bodies, or of deformable ones (deformable) */
  int deformable; /* 1: body[] indexes w->fem (fl_world_add_fem_group; arch groups only) */
  double param[8];
} fl_obs_group;

/* An allowed range of one observable. `run` flags every step whose value lies outside
 * [lo, hi] (-inf / inf for an open end) under `label` ("collapse", "slip", "penetration"),
 * in steps.csv and in its summary. Scenes declare their own (scene files: "limits"); the
 * world adds automatic ones (fl_world_limits). */
typedef struct fl_obs_limit {
  char obs[40];   /* observable name (fl_world_obs_name) */
  double lo, hi;  /* allowed range, in the observable's unit */
  char label[24]; /* what crossing it means */
} fl_obs_limit;

/*---- the world ----*/

typedef struct fl_world_impl fl_world_impl; /* stepper scratch (world.c, stepper.c) */
typedef struct fl_fem_body fl_fem_body;     /* a deformable body (sim/fl_fem.h) */

/* How deformable bodies are presented to solvers (sim/fl_fem.h). */
typedef enum fl_fem_solve {
  FL_FEM_FULL = 0, /* the sparse block of every free dof */
  FL_FEM_SCHUR = 1 /* the Schur complement on the participating dofs (seed 000 sec. VI) */
} fl_fem_solve;
#define FL_FEM_SOLVE_CHOICES "full|schur"

typedef struct fl_world {
  char name[64];
  double gravity[3]; /* m/s^2 */
  double dt;         /* s, time step */
  double duration;   /* s, default run length (steps = round(duration/dt)) */
  double margin;     /* m, speculative contact margin (contacts with phi <= margin are kept) */
  double speculative; /* 0 (default) or 1: a pair's margin also grows by the distance its two
                         bodies can close in one step, dt (|v_a - v_b| + |w_a| r_a + |w_b| r_b)
                         (r: bounding radius), so a fast body meets an obstacle as a speculative
                         contact before it passes into it */
  double max_recovery; /* m/s, cap on a rigid contact's penetration recovery speed -phi/dt in
                          each step's problem (fl_problem.max_recovery); INFINITY (default): none */
  fl_mu_rule mu_rule;
  double t;          /* s, current time */
  fl_int step;       /* steps taken */

  fl_int nbody, cap_body;
  fl_body *body;
  fl_int nmat, cap_mat;
  fl_material *mat;      /* mat[0] is "default": mu 0.5, rigid, tau_d 0 */
  fl_int npair, cap_pair;
  fl_pair_material *pair;
  fl_int njoint, cap_joint;
  fl_joint *joint;
  fl_int nforce, cap_force;
  fl_force *force;
  fl_int ngroup, cap_group;
  fl_obs_group *group;
  fl_int nfem, cap_fem;
  fl_fem_body **fem;     /* deformable bodies (sim/fl_fem.h), owned */
  fl_int nlimit, cap_limit;
  fl_obs_limit *limit;   /* declared limits on observables */

  /* stepper settings */
  int compute_metrics;  /* 1 (default): fill fl_step_info.met after each solve */
  int observe_geometry; /* 1 (default): observables run a narrow phase for penetrations */
  int collide_coherence; /* 1 (default): the step's polyhedron pairs reuse what the last whole
                            separating-axis search found where a bound on the relative motion
                            proves the outcome unchanged (the same contacts to the bit;
                            docs/bench-world.md); 0: every search in full. fl_world_create
                            reads 0 from the environment variable FL_COLLIDE_COHERENCE=0 */
  int cpu_times;        /* 1: fl_step_info's collide_cpu_s and assemble_cpu_s from the process
                           CPU clock, a system call of about 3 us on a virtual machine (three
                           per step); 0 (default): NAN, and the step does not pay for them */
  fl_fem_solve fem_solve; /* FL_FEM_SCHUR (default) or FL_FEM_FULL */
  int start_separated;  /* 1: the scene file declares that no two rigid bodies overlap at t = 0
                           (loading refuses one that does; fl_world_overlaps) */
  int fem_allow_inversion; /* 0 (default): a tet with det F <= 0 after a step stops the run
                             with FL_ERR_STATE naming step, body and element; 1: continue */

  fl_world_impl *impl;  /* stepper state, allocated on first use */
} fl_world;

/* A world with gravity (0, 0, -9.81), dt 1e-3, duration 1, margin 1e-3, the harmonic mu rule
 * and the default material. FL_OK or FL_ERR_NOMEM. */
int fl_world_create(fl_world **out);
void fl_world_free(fl_world *w); /* NULL-safe */

/* Adds a material; returns its index (>= 0) or a negative error (FL_ERR_INVAL: mu < 0,
 * stiffness <= 0, tau_d < 0, NaN). */
int fl_world_add_material(fl_world *w, const char *name, double mu, double stiffness,
                          double tau_d);
/* Index of a material by name or -1. */
int fl_world_find_material(const fl_world *w, const char *name);
/* Sets (or replaces) the explicit law of a pair of materials. */
int fl_world_set_pair(fl_world *w, int mat_a, int mat_b, double mu, double stiffness,
                      double tau_d);

/* Adds a body and takes ownership of *shape (the caller's struct is zeroed). Mass and inertia:
 * from the shape and density > 0, or mass and inertia as given (dynamic bodies need mass > 0
 * and an SPD inertia). A convex shape is recentred on its centre of volume and the body's
 * position moved by R shift, so desc->pos is where the shape's original frame origin goes.
 * Returns the body index (>= 0) or a negative error (FL_ERR_INVAL names the body and field). */
int fl_world_add_body(fl_world *w, const fl_body_desc *desc, fl_shape *shape);
/* Index of a body by name or -1. */
int fl_world_find_body(const fl_world *w, const char *name);

/* Adds a joint (copied). qrel and axis_b are computed from the current poses. The axis is
 * normalized. Returns the joint index or FL_ERR_INVAL (bad body index, zero axis, ...). */
int fl_world_add_joint(fl_world *w, const fl_joint *j);
/* Adds an applied force (copied). Returns its index or FL_ERR_INVAL. */
int fl_world_add_force(fl_world *w, const fl_force *f);
/* Adds an observable group over n rigid bodies (indices copied). Returns its index or an
 * error. */
int fl_world_add_group(fl_world *w, fl_obs_kind kind, fl_int n, const fl_int *body,
                       const double *param, int nparam);
/* The same over n deformable bodies (indices into w->fem, copied); only FL_OBS_ARCH reads
 * deformable bodies (each stone's largest vertex displacement). Returns its index,
 * FL_ERR_INVAL (another kind, an index out of range) or FL_ERR_NOMEM. */
int fl_world_add_fem_group(fl_world *w, fl_obs_kind kind, fl_int n, const fl_int *fem,
                           const double *param, int nparam);

/* Records the current poses as the start poses (pos0, quat0), sets t = 0 and step = 0 and
 * forgets warm-start data. Scenes call it when they are built. */
void fl_world_reset_start(fl_world *w);

/* Number of generalized velocities of the full problem (6 per dynamic body, plus the free
 * dofs of deformable bodies). */
fl_int fl_world_nv(const fl_world *w);

/*---- stepper ----*/

typedef struct fl_step_info {
  fl_int step;         /* index of the step just taken (0-based) */
  double t;            /* time at its end (s) */
  fl_int nbody_pairs;  /* broad-phase pairs */
  fl_int nc, nh;       /* contacts, bilateral rows */
  double collide_s;    /* wall time of broad + narrow phase (s) */
  double assemble_s;   /* wall time of building fl_problem (s) */
  double solve_s;      /* wall time of setup + solve (s) */
  double integrate_s;  /* wall time of the position update (s) */
  double collide_cpu_s, assemble_cpu_s; /* process CPU time of the same stages (s) when the
                                          world's cpu_times is set (else NAN): what a benchmark
                                          on a shared machine should compare */
  int warm_matched;    /* contacts whose impulse was found in the previous step */
  fl_result res;       /* the solver's result (reason FL_CONVERGED_EXACT, 0 iterations, when
                          there was nothing to solve) */
  fl_metrics met;      /* metrics of (v, gamma) when compute_metrics (else NAN) */
} fl_step_info;

/* Collides and assembles the problem of the next step from the current state; afterwards
 * fl_world_problem returns it (owned by the world, valid until the next prepare or free),
 * with gamma_guess holding the previous step's impulses matched by (body pair, feature id)
 * for contacts and by row for joints (0 where none). info may be NULL. */
int fl_world_prepare(fl_world *w, fl_step_info *info);
/* The problem of the last fl_world_prepare, or NULL. */
fl_problem *fl_world_problem(fl_world *w);
/* Solves the prepared problem with s (set up here on every step; the guess is gamma_guess and
 * the matching v, used by the solver when its warm_start option is set), then integrates the
 * state by dt. s may be NULL only when the problem has no rows. */
int fl_world_finish(fl_world *w, fl_solver *s, fl_step_info *info);
/* One whole step: fl_world_prepare then fl_world_finish. */
int fl_world_step(fl_world *w, fl_solver *s, fl_step_info *info);
/* The solution of the last solve: v (nv) and gamma (3 nc + nh); pointers owned by the world. */
void fl_world_solution(const fl_world *w, const double **v, const double **gamma);

/* The two sides of contact c (0 <= c < nc) of the last prepared problem, whose normal points
 * from side 0 to side 1: rigid body indices body[0..1] (-1 where a side is a deformable body
 * or the world) and deformable body indices fem[0..1] (-1 where a side is rigid). The contact's
 * point, frame, phi0 and mu are in fl_world_problem, its impulse in fl_world_solution. Returns
 * FL_OK, or FL_ERR_INVAL when there is no prepared problem or c is out of range. */
int fl_world_contact_sides(const fl_world *w, fl_int c, fl_int body[2], fl_int fem[2]);

/*---- observables (measured from the geometry) ----*/

/* Number of observables of this world (fixed once the world is built). Their names are
 * t, contacts, pen_max, drift_max, kinetic, potential, energy, px, py, pz, Lx, Ly, Lz,
 * joint_err, drift_<body name> for each dynamic body (worlds with at most 32 of them),
 * elastic_<body> and mindetF_<body> per deformable body (at most 32), each group's (see
 * fl_obs_kind), liftoff_ratio and liftoff_speed (see FL_LIFTOFF_SLOPE), then the 13 pose and
 * velocity columns of each posed body (FL_OBS_POSE). */
/* Lift-off, from the poses and velocities any stepper leaves (FrictionLab's solvers and peers
 * alike): after each step, over the rigid pairs within the margin plus 1 % of the smallest
 * dynamic body, at each pair's deepest point: pressed when the pair's relative acceleration
 * over the step, less gravity's, pushes it apart along the normal by more than 1e-3 |g|;
 * sliding when the point's relative tangential speed |u_t| exceeds V = |g| dt (1e-6 m/s
 * without gravity); s = min(phi/dt, u_n) - sum of rho |omega|^2 dt over the dynamic sides
 * (m/s: the gap the step opened and is still opening, less what a corner at rho from a
 * turning body's centre opens by the rotation alone; 0 for an exact rigid contact, negative
 * for a compliant one). liftoff_ratio is the largest s/|u_t| over such pairs (0 when none, on
 * the first observed step, and without observe_geometry), liftoff_speed that pair's s.
 * The automatic limit flags liftoff_ratio > FL_LIFTOFF_SLOPE ("liftoff"): the body leaves the
 * surface it slides on at more than 0.57 deg. */
#define FL_LIFTOFF_SLOPE 0.01
/* Declares a limit on observable `obs` (copied; at most 39 characters) with its label (at most
 * 23). Checked against the observable names when fl_world_limits is called. Returns the
 * limit's index, FL_ERR_INVAL (empty or long name or label, NaN, lo > hi; named in the
 * message) or FL_ERR_NOMEM. */
int fl_world_add_limit(fl_world *w, const char *obs, double lo, double hi, const char *label);
/* Every limit of the world: the declared ones, then automatic ones for observables without a
 * declared limit: pen_max <= 1 % of the smallest dynamic body's size ("penetration"; a
 * deformable body's size is its rest mesh's bounding-box diagonal), liftoff_ratio <=
 * FL_LIFTOFF_SLOPE ("liftoff"),
 * <stack>_collapsed <= 0.5 and <arch>_stands >= 0.5 ("collapse"). *lim points into the
 * world's own storage (valid until the next call or the world's end); index[k] is limit k's
 * observable index. Returns FL_OK, FL_ERR_INVAL when a declared limit names no observable (the
 * message names it), or FL_ERR_NOMEM. */
int fl_world_limits(fl_world *w, const fl_obs_limit **lim, const fl_int **index, fl_int *n);
fl_int fl_world_nobs(const fl_world *w);
/* Name of observable i (static storage of the world) or NULL when out of range. */
const char *fl_world_obs_name(const fl_world *w, fl_int i);
/* Evaluates every observable of the current state into val (nobs). pen_max and the stack's
 * per-interface penetrations come from the narrow phase on the current poses (margin 0), not
 * from the solver; contacts is the count of the last prepared problem. */
int fl_world_observe(fl_world *w, double *val);
/* A peer simulator that steps the world's state itself (harness/fl_peer.h) reports its
 * contact count here: the `contacts` observable of a world that never prepared a problem.
 * FL_OK or FL_ERR_NOMEM. */
int fl_world_set_peer_contacts(fl_world *w, fl_int nc);
/* Largest penetration (m, >= 0) between any two bodies at the current poses: rigid pairs and
 * the contacts of deformable bodies (their vertex queries, docs/fem.md), at margin 0. */
int fl_world_penetration(fl_world *w, double *pen);

/* Two rigid bodies that overlap at the current poses, by depth (m): their deepest contact of
 * the narrow phase with no margin. */
typedef struct fl_overlap {
  fl_int a, b;
  double depth;
} fl_overlap;
/* Overlaps deeper than FL_OVERLAP_TOL (m): round-off of bodies placed exactly touching. */
#define FL_OVERLAP_TOL 1e-6

/* The largest scene file fl_world_load_json reads (bytes): 1 GiB, about 5 million bodies. */
#define FL_SCENE_FILE_MAX 1073741824.0
/* The pairs of rigid bodies overlapping by more than tol (m) at the current poses, deepest
 * first: the first max of them into out (may be NULL when max is 0), their number into *n.
 * Hydroelastic patches (whose penetration is their model) are left out, and so are deformable
 * bodies. FL_OK or FL_ERR_NOMEM. */
int fl_world_overlaps(fl_world *w, double tol, fl_overlap *out, int max, int *n);
/* Kinetic and potential energy (J), linear momentum (kg m/s), angular momentum about the
 * world origin (kg m^2/s); any output may be NULL. */
void fl_world_energy_momentum(const fl_world *w, double *kinetic, double *potential,
                              double p[3], double L[3]);

/*---- canonical scenes ----*/

/* Parameters every scene has first in its parameter struct. */
typedef struct fl_scene_common {
  double dt;       /* s */
  double duration; /* s */
  double margin;   /* m */
  double speculative; /* 0 or 1, fl_world.speculative */
} fl_scene_common;

typedef struct fl_scene_desc {
  const char *name;    /* "heavy_stack" */
  const char *summary; /* one line */
  const char *check;   /* the scene's pass/fail check, one sentence */
  size_t params_size;  /* size of its parameter struct (starts with fl_scene_common) */
  const fl_option_desc *params; /* its parameter table, including dt, duration, margin */
  int (*build)(const void *params, fl_world *w); /* fills an empty world */
} fl_scene_desc;

/* Every scene, NULL-terminated. */
const fl_scene_desc *const *fl_scene_list(void);
/* A scene by name or NULL. */
const fl_scene_desc *fl_scene_find(const char *name);
/* Builds scene `name` with nset overrides "key=value" (key may be prefixed by "scene." or by
 * the scene's name). FL_ERR_UNKNOWN_PROBLEM lists the scene names; option errors name the
 * scene and key. *out is NULL on error. */
int fl_scene_create(const char *name, int nset, const char *const *set, fl_world **out);
/* Prints the scenes with their parameters, defaults and checks. */
void fl_scene_help(const fl_scene_desc *d, FILE *f);

/*---- scene files (JSON, docs/scene-format.md) ----*/

/* Loads a scene file. Every field is validated: errors are FL_ERR_IO (cannot read) or
 * FL_ERR_FORMAT with a message "FILE: JSON.PATH: what was expected", e.g.
 * "s.json: bodies[3].shape.size: expected an array of 3 positive numbers". *out is NULL on
 * error. */
int fl_world_load_json(const char *path, fl_world **out);
/* The same from a string; `where` names it in messages. */
int fl_world_parse_json(const char *text, const char *where, fl_world **out);
/* Writes the world (its current state as the initial state) as a scene file that loads back
 * to the same world: shapes in body frames, masses and inertias explicitly, doubles with 17
 * significant digits. Written to a temporary name then renamed. */
int fl_world_save_json(const fl_world *w, const char *path);

/*---- one way to open a scene: by name or file (sim/scene_open.c) ----*/

/* What a name or path opens, by its ending alone: "*.json" a scene file, "*.xml" an MJCF model,
 * anything else a canonical scene's name. */
typedef enum fl_scene_kind { FL_SCENE_BUILTIN, FL_SCENE_FILE, FL_SCENE_MJCF } fl_scene_kind;
fl_scene_kind fl_scene_kind_of(const char *name_or_path);
/* A setting's key without its scene prefix: "scene.dt" -> "dt", and "<scene>.dt" -> "dt" when
 * `scene` (may be NULL) is given; otherwise key itself. Points into key. */
const char *fl_scene_key(const char *key, const char *scene);
/* The run parameters a scene file or MJCF model takes with --set (dt s, duration s, margin m,
 * speculative 0..1, fem_solve full|schur), with the ranges canonical scenes and scene files
 * also check; static, NULL-terminated. */
const fl_option_desc *fl_scene_run_params(void);
/* Applies n "key=value" settings of the table above (key may start with "scene.") to a world
 * read from `path` (which names it in messages). Errors: FL_ERR_UNKNOWN_OPTION (names the file,
 * the key and the keys taken), or fl_options_set's type or range error (names the key and its
 * range); the world is unchanged on error. */
int fl_scene_file_apply(fl_world *w, const char *path, int n, const char *const *kv);
/* Reads an MJCF model: fl_world_from_mjcf (peers/fl_peer.h), given by a caller above sim/. */
typedef int (*fl_scene_reader)(const char *path, int nset, const char *const *set,
                               fl_world **out);
/* Opens a scene by its kind (fl_scene_kind_of): a canonical scene through fl_scene_create, a
 * scene file through fl_world_load_json, an MJCF model through read_model (NULL: the model is
 * refused with FL_ERR_UNSUPPORTED); then applies the n settings kv (a scene's parameters, or
 * fl_scene_run_params for a file or model). The caller owns *out (fl_world_free); *out is NULL
 * on error, whose message names the scene or file, the key and what was expected. */
int fl_scene_open(const char *name_or_path, int n, const char *const *kv,
                  fl_scene_reader read_model, fl_world **out);

/*---- bindings ----*/

/* sizeof of a public struct as this library was built ("fl_problem", "fl_result",
 * "fl_iter_stat", "fl_metrics", "fl_score", "fl_option_desc", "fl_solver_ops", "fl_csr",
 * "fl_step_info", "fl_stepper", "fl_body", "fl_shape"), 0 for another name: a binding that
 * lays the structs out itself (the Python module) checks its layout against it. */
size_t fl_api_sizeof(const char *type);

#ifdef __cplusplus
}
#endif
#endif /* FL_WORLD_H */

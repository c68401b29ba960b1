// SPDX-License-Identifier: Apache-2.0
/* fl_peer.h: whole simulators stepped beside FrictionLab's own stepper ("peers").
 *
 * A peer replaces the whole world step (collision, constraint set-up, solve, integration), not
 * the fl_problem solve, so it is not a registered solver: `run` and `bench` accept its name in
 * --solver beside the registered solvers and step the world with fl_peer_step instead of
 * fl_world_step. After each step the peer's poses and velocities are copied back into the
 * fl_world, so every observable (penetration, drift, energy, ...) is computed by FrictionLab
 * from the poses, exactly as for its own solvers.
 *
 * Three modules (peers/peer.c finds a name's): MuJoCo 2.2 through its C library (when the build
 * found it, FL_HAVE_MUJOCO): `mujoco-pgs`, `mujoco-cg` and `mujoco-newton`, its three constraint
 * solvers; the world is written as MJCF (fl_mjcf_write) and loaded with mj_loadXML; each step is
 * one mj_step with the Euler integrator at the world's dt and gravity. Drake (`drake-sap`,
 * `drake-similar`, `drake-lagged`, `drake-tamsi`) and MuJoCo 4 (`mujoco4-pgs`, `-cg`,
 * `-newton`) through one Python process of the project's environment (.venv, or $FL_VENV; made
 * by scripts/setup) per peer, which runs steps ahead (fl_peer_expect) and times them inside the
 * simulator (fl_peer_own_clock). docs/peers.md gives the mappings and their limits.
 *
 * Options ("key=value", as given to --set; key prefixed by the peer's name, by the family
 * ("mujoco." for MuJoCo 2.2, "mujoco4.", "drake.") or bare; a bare key that is no peer key is
 * left to the registered solvers). MuJoCo's (both versions; Drake's in docs/peers.md):
 *   cone=pyramidal|elliptic    friction cone (default pyramidal, MuJoCo's default)
 *   solref=TIMECONST,DAMPRATIO contact reference (default 0.02,1; spaces also separate)
 *   solimp=D0,DWIDTH,WIDTH[,MIDPOINT,POWER] contact impedance (default 0.9,0.95,0.001,0.5,2)
 *   iterations=N               solver iterations (default 100)
 *   tolerance=TOL              solver tolerance (default 1e-8)
 *
 * Errors: functions return FL_OK or a negative FL_ERR_* with a message in fl_errmsg().
 * A world MuJoCo cannot express is refused with FL_ERR_UNSUPPORTED and the reason (deformable
 * bodies, hydroelastic patches, compliant contact laws, joints, moving prescribed bodies,
 * planes on dynamic bodies). Not thread-safe (MuJoCo's callbacks are process-wide).
 */
#ifndef FL_PEER_H
#define FL_PEER_H
// layer 5: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 5
#error "harness/fl_peer.h is in harness/, layer 5: a lower layer may not include it (docs/layers.md)"
#endif

#include <stdio.h>

#include "../sim/fl_loop.h"
#include "../sim/fl_world.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fl_peer fl_peer;

/* 1 when this build can run peer `name` ("mujoco-newton"), else 0. */
int fl_peer_find(const char *name);
/* Names of the peers this build can run, NULL-terminated (static storage). */
const char *const *fl_peer_list(void);
/* 1 when `prefix` (an option key's part before its first '.') addresses peers: "mujoco" or a
 * peer's name, whether or not this build has MuJoCo. Lets the harness keep peer options away
 * from registered solvers. */
int fl_peer_prefix(const char *prefix);
/* Why peer `name` cannot run in this build ("built without MuJoCo ..."), or NULL when it can
 * or when `name` is no peer's name. Static storage. */
const char *fl_peer_unavailable(const char *name);

/* Creates peer `name` for world w (not modified; its current state is the initial state),
 * applying the nset settings in set (see above). mjcf_path: where the MJCF is written (kept,
 * e.g. in a results folder), or NULL for a temporary file removed after loading. Returns
 * FL_OK; FL_ERR_UNKNOWN_SOLVER (no such peer in this build), FL_ERR_UNSUPPORTED (the world
 * has a feature MuJoCo cannot express; the message says which), FL_ERR_UNKNOWN_OPTION /
 * FL_ERR_OPTION_RANGE (a bad setting), FL_ERR_IO (the MJCF could not be written), FL_ERR_FORMAT
 * (MuJoCo refused the model; its message is kept), FL_ERR_NOMEM. *out is NULL on error. */
int fl_peer_create(const char *name, const fl_world *w, int nset, const char *const *set,
                   const char *mjcf_path, fl_peer **out);
void fl_peer_free(fl_peer *p); /* NULL-safe */

/* One step of dt: applies the world's forces at time w->t, steps the peer, copies poses and
 * velocities back into w's dynamic bodies, advances w->t and w->step and reports the contact
 * count to w (the `contacts` observable). info (may be NULL) gets nc (fl_peer_contacts), nh = 0, the
 * iterations and a reason (FL_CONVERGED_EXACT without constraints, FL_CONVERGED_ATOL when the
 * solver stopped before its iteration limit, FL_DIVERGED_MAX_ITER at it), error = the last
 * iteration's improvement, the stage times (collide_s, assemble_s, solve_s = set-up and
 * solve, integrate_s; wall s from MuJoCo's own timers) and NAN metrics. FL_ERR_STATE when
 * MuJoCo raised a warning (contact or constraint buffer full, bad accelerations: it would
 * reset or drop constraints); its text is in the message. */
int fl_peer_step(fl_peer *p, fl_world *w, fl_step_info *info);

/* Peer p (not owned) as the stepping loop's stepper (sim/fl_loop.h): fl_peer_step, and
 * fl_peer_history as the step's iteration records. */
fl_stepper fl_peer_stepper(fl_peer *p);

/* 1 when peer p's step call does not time its step (it plays back steps the peer ran ahead in
 * another process): its own time per step is then fl_peer_stages_last's step_s; 0 otherwise. */
int fl_peer_own_clock(const fl_peer *p);

/* Tells peer p that about `steps` more steps will be taken (a hint: a peer that runs steps ahead
 * in another process runs that many at once, and more if asked for more). */
void fl_peer_expect(fl_peer *p, long steps);

/* Stage times of the last step (wall s), from MuJoCo's timers: collision; assembly (kinematics,
 * inertia and its factorization, velocity-dependent and applied forces, unconstrained
 * acceleration); solver set-up (making the constraint rows and projecting them: J M^-1 J^T);
 * solve (the constraint solver); integration (step minus forward dynamics); step (all). */
typedef struct fl_peer_stages {
  double collide_s, assemble_s, setup_s, solve_s, integrate_s, step_s;
} fl_peer_stages;
void fl_peer_stages_last(const fl_peer *p, fl_peer_stages *st);

/* Per-iteration statistics of the last step's solve (n records, owned by the peer, valid
 * until the next step): iter from 1; error = improvement (MuJoCo's cost reduction, scaled by
 * 1/trace(M(qpos0)), its own convergence quantity); gradient = the scaled gradient norm (CG
 * and Newton; NAN for PGS); step = the line search's slope (CG, Newton; NAN for PGS);
 * nactive, nchange; neval = cost evaluations in the line search; inner_iters = Cholesky
 * updates in it (Newton); every other field NAN or -1. */
const fl_iter_stat *fl_peer_history(const fl_peer *p, int *n);

/* Contacts of the last step (those MuJoCo made constraints of: distance below zero; touching
 * pairs at exactly zero distance are found but left out) and their total normal impulse (N s): the sum over contacts of
 * the normal component of the contact force times dt. For the elliptic cone the normal force
 * is the normal row's force; for the pyramidal cone it is the sum of the contact's pyramid
 * edge forces (each edge direction n +- mu t has unit normal component), which is what
 * mj_contactForce returns as the frame's first component. */
int fl_peer_contacts(const fl_peer *p);
double fl_peer_normal_impulse(const fl_peer *p);
/* One of those contacts, as FrictionLab records its own (docs/recording.md): point (m, world:
 * MuJoCo's contact position, midway between the surfaces), normal (unit, from body[0] to
 * body[1]), impulse on body[1] (N s, world: MuJoCo's contact force times dt), dist (m, signed
 * distance: negative is penetration), body[2] (FrictionLab body indices; -1 where a geom is no
 * body of the world), sliding (1: the tangential force is within 1 % of the cone's edge). */
typedef struct fl_peer_contact_info {
  double point[3], normal[3], impulse[3], dist;
  int body[2], sliding;
} fl_peer_contact_info;
/* Contact i (0 <= i < fl_peer_contacts) of the last step into *out. FL_OK or FL_ERR_INVAL. */
int fl_peer_contact(const fl_peer *p, int i, fl_peer_contact_info *out);

/* Writes the resolved options and MuJoCo's version, one line. */
void fl_peer_view(const fl_peer *p, FILE *f);
/* The resolved options as a JSON object text ("{...}", owned by the peer), for manifests. */
const char *fl_peer_options_json(const fl_peer *p);
/* The same without a world: peer `name`'s options resolved from the settings, as JSON text
 * into buf (n bytes). FL_OK, or fl_peer_create's option and name errors. */
int fl_peer_options_resolve(const char *name, int nset, const char *const *set, char *buf,
                            size_t n);

/*---- MJCF ----*/

typedef struct fl_mjcf_opts {
  const char *solver;  /* "PGS", "CG" or "Newton" */
  int elliptic;        /* 0 pyramidal, 1 elliptic cone */
  double solref[2];    /* time constant (s), damping ratio */
  double solimp[5];    /* d0, dwidth, width (m), midpoint, power */
  int iterations;
  double tolerance;
  int modern;          /* 1: no <size> element (MuJoCo 3 and later size their buffers as they go) */
} fl_mjcf_opts;

/* MuJoCo's defaults: Newton, pyramidal, solref 0.02 1, solimp 0.9 0.95 0.001 0.5 2, 100
 * iterations, tolerance 1e-8. */
void fl_mjcf_opts_default(fl_mjcf_opts *o);

/* FL_OK when MJCF can express w, else FL_ERR_UNSUPPORTED naming the first feature that it
 * cannot (and the body or material). Needs no MuJoCo. */
int fl_mjcf_check(const fl_world *w);

/* Writes w (its current state as the initial state) as MJCF to f: option (timestep = w->dt,
 * gravity, integrator Euler, cone, solver, iterations, tolerance), one free body per dynamic
 * body with its mass and full inertia about the centre of mass (the body frame is FrictionLab's:
 * origin at the centre of mass), fixed bodies as world geoms, planes, boxes, spheres, capsules,
 * cylinders (exact) and convex hulls (meshes of the hull's vertices); friction per geom from its
 * material when the world's combination rule gives max(mu_a, mu_b) for every pair of materials
 * that meet (MuJoCo's own rule), otherwise explicit contact pairs with the combined mu; condim
 * 3, margin 0, solref and solimp on every geom and pair. Doubles with 17 significant digits.
 * Returns fl_mjcf_check's refusal, FL_ERR_INVAL (f or o NULL), FL_ERR_IO or FL_ERR_NOMEM. */
int fl_mjcf_write(const fl_world *w, const fl_mjcf_opts *o, FILE *f);

/* A world built from an MJCF model file read by MuJoCo's own parser (mj_loadXML) and the
 * compiled model (docs/mjcf.md): free bodies (one free joint, one colliding geom: plane on
 * fixed bodies only, sphere, capsule, cylinder, box, mesh as its convex hull) with the compiled
 * masses and inertias, fixed bodies for the world's geoms and for bodies without joints, one
 * rigid material per sliding friction coefficient combined by the max rule (MuJoCo's), gravity
 * and time step from <option>. nset settings "dt=S", "duration=S", "margin=M" (and the other
 * run parameters of a scene file, fl_scene_run_params) override them.
 * What FrictionLab cannot represent is refused with FL_ERR_UNSUPPORTED naming the element
 * (tendons, actuators, equality constraints, contact pairs and exclusions, joints other than a
 * free one, nested or mocap bodies, height fields, ellipsoids, condim > 3, contype/conaffinity
 * filtering, several colliding geoms on a body, a centre of mass off its geom's centre).
 * FL_ERR_IO (cannot read), FL_ERR_FORMAT (MuJoCo's parser refused it: its message), FL_ERR_INVAL
 * / FL_ERR_UNKNOWN_OPTION / FL_ERR_OPTION_TYPE / FL_ERR_OPTION_RANGE (a setting), FL_ERR_UNSUPPORTED also in a build without MuJoCo. *out
 * is NULL on error. */
int fl_world_from_mjcf(const char *path, int nset, const char *const *set, fl_world **out);

#ifdef __cplusplus
}
#endif
#endif /* FL_PEER_H */

// SPDX-License-Identifier: Apache-2.0
/* world_impl.h: what the world's own files share (world.c, joints.c, stepper.c,
 * observables.c, scenes*.c, scene_json.c). Never included outside sim/ and tests/.
 */
#ifndef FL_WORLD_IMPL_H
#define FL_WORLD_IMPL_H
// layer 4: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 4
#error "sim/world_impl.h is in sim/, layer 4: a lower layer may not include it (docs/layers.md)"
#endif

#include "fl_world.h"

/*---- body kinds ----*/

/* The kinds of bodies, in the order of their dofs, cliques and contacts in the problem: rigid
 * bodies (rigid.c, the world's fl_body), deformable FEM bodies (fem_step.c, fl_fem_body). A new
 * kind is one file with its fl__body_ops and one entry here and in fl__body_kinds. */
typedef enum fl__kind { FL__KIND_RIGID = 0, FL__KIND_FEM = 1, FL__NKIND = 2 } fl__kind;

/* One side of a contact: a body of some kind (id indexes that kind's bodies: w->body[id],
 * w->fem[id]) and, on a mesh, up to 3 vertices with barycentric weights (the side's velocity is
 * sum_k wt[k] v[vert[k]]; nvert = 0 for a rigid body). */
typedef struct fl__side {
  int kind;     /* fl__kind */
  fl_int id;
  int nvert;
  fl_int vert[3];
  double wt[3];
} fl__side;

/* One contact between two bodies of any kinds: normal from side a to side b. Rigid pairs have
 * a.id < b.id; contacts with a deformable body come from sim/fem_collide.c. */
typedef struct fl__contact {
  fl__side a, b;
  double p[3], n[3]; /* world point (midway between the surfaces), unit normal a -> b */
  double phi;        /* signed distance (m) */
  int64_t feature;   /* feature id, stable across steps (warm start) */
  double k;  /* > 0: this contact's own stiffness (N/m, hydroelastic patch); else the materials' */
} fl__contact;

/* A rigid side: body k. */
static inline fl__side fl__rigid_side(fl_int k) {
  return (fl__side){.kind = FL__KIND_RIGID, .id = k, .nvert = 0};
}

/* Warm-start key of a contact: the body pair and the feature id. */
typedef struct fl__wskey {
  fl_int a, b;
  int64_t feature;
  fl_int idx; /* index into the impulse array it came from */
} fl__wskey;

/* What the stepper asks of every body kind, in this order each step (stepper.c):
 *   collide       appends the kind's contacts with the kinds before it and itself (phi <=
 *                 margin) to *ct (count *nct, capacity *cap, grown with fl_grow); npairs (may
 *                 be NULL) gets the broad-phase pairs it tested
 *   prepare       from all the step's contacts: assigns the kind's problem dofs from *nv on and
 *                 its cliques from *ncl on (advancing both), and whatever fill needs
 *   nnz           stored entries of the kind's blocks of A
 *   fill          the kind's rows of A (from *nnz on, advancing it), v0, v*, clique_ptr,
 *                 clique_dof, dof_clique, and adiag_hint when the problem has one
 *   side_*        of one side of this kind: its columns in a row (width, an upper bound), its
 *                 material, its problem clique (-1: none), its warm-start key; side_row appends
 *                 the coefficients of the side's velocity at point x along d, times sign, as
 *                 (dof, value) pairs and returns their number, adding the velocity of held or
 *                 prescribed parts to *bconst
 *   apply_Ainv    x <- v* + A^-1 x on the kind's dofs [d0, d1) (the solver's starting guess)
 *   finish        after the solve, from the problem's velocities v: the kind's new velocities
 *                 and positions
 * and, outside the step (world.c):
 *   nv            the kind's unknown velocity dofs (held ones excluded)
 *   reset_start   the current positions become the start that displacements are measured from
 *   energy        adds the kind's kinetic and gravitational energy (J), momentum (kg m/s) and
 *                 its moment about the origin (kg m^2/s) to *ke, *pe, P, L (elastic energy is
 *                 the kind's own query: fl_fem_energy)
 *   release       frees the kind's bodies (fl_world_free) */
typedef struct fl__body_ops {
  const char *name;
  int reduced;  /* its blocks of A may be reduced (Schur): the problem carries adiag_hint */
  fl_int (*count)(const fl_world *w);
  int (*collide)(fl_world *w, double margin, fl__contact **ct, fl_int *nct, fl_int *cap,
                 fl_int *npairs);
  int (*prepare)(fl_world *w, const fl__contact *ct, fl_int nct, fl_int *nv, fl_int *ncl);
  fl_int (*nnz)(const fl_world *w);
  int (*fill)(const fl_world *w, fl_problem *p, fl_int *nnz);
  fl_int (*side_width)(const fl_world *w, const fl__side *s);
  int (*side_material)(const fl_world *w, const fl__side *s);
  fl_int (*side_clique)(const fl_world *w, const fl__side *s);
  fl_int (*side_key)(const fl_world *w, const fl__side *s);
  int (*side_row)(const fl_world *w, const fl__side *s, const double x[3], const double d[3],
                  double sign, fl_int *cols, double *vals, double *bconst);
  int (*apply_Ainv)(const fl_world *w, const fl_problem *p, fl_int d0, fl_int d1, double *x);
  int (*finish)(fl_world *w, const double *v);
  fl_int (*nv)(const fl_world *w);
  void (*reset_start)(fl_world *w);
  void (*energy)(const fl_world *w, double *ke, double *pe, double P[3], double L[3]);
  void (*release)(fl_world *w);
} fl__body_ops;

extern const fl__body_ops fl__rigid_ops; /* rigid.c */
extern const fl__body_ops fl__fem_ops;   /* fem_step.c */
/* Every kind, indexed by fl__kind (stepper.c). */
extern const fl__body_ops *const fl__body_kinds[FL__NKIND];

struct fl_world_impl {
  /* collision scratch, grown as needed */
  fl_int cap_aabb;
  double *lo, *hi;        /* (nbody x 3) */
  unsigned char *skip;    /* (nbody) */
  fl_int nct, cap_ct;
  fl__contact *ct;        /* contacts of the prepared problem */
  /* the prepared problem and its solution */
  fl_problem *prob;
  double *v, *gamma;      /* (nv), (3 nc + nh) */
  fl_int cap_v, cap_g;
  int solved;             /* the last prepared problem was solved */
  /* warm start: keys of the last solved step (sorted) and its impulses */
  fl_int nws, cap_ws;
  fl__wskey *ws;
  double *ws_gamma;       /* (3 nws) */
  fl_int nws_h;
  double *ws_gh;          /* (nws_h) joint impulses by row */
  /* observable names */
  fl_int nobs;
  char (*obs_name)[40];
  fl_obs_limit *all_limit; /* fl_world_limits: declared and automatic */
  fl_int *limit_index;     /* observable index of each */
  fl_int peer_nc;         /* contacts reported by a peer simulator (fl_world_set_peer_contacts) */
  fl_int nobs_ct, cap_obs_ct;
  fl__contact *obs_ct;    /* contacts found by the observables (margin 0) */
  /* lift-off from poses (observables.c): the velocities observed after step lift_step (-1:
   * none), the contacts found within the lift margin, and that step's values */
  long lift_step;
  double *lift_v;         /* (3 nbody) */
  fl_int nlift_ct, cap_lift_ct;
  fl__contact *lift_ct;
  double lift_ratio, lift_speed;
  fl_int nobs_fct, cap_obs_fct;
  fl__contact *obs_fct;   /* deformable contacts found by the observables (margin 0) */
  fl_int npose;
  fl_int *pose_body;      /* rigid bodies with pose and velocity columns, in column order */
  fl_int kind_dof[FL__NKIND + 1]; /* problem dofs of kind k: [kind_dof[k], kind_dof[k + 1]) */
  double fem_geometry_s;  /* CPU time of the last fl__fem_collide */
  /* temporal coherence of the step's polyhedron pairs (rigid.c, collide_poly.c): an open
   * addressing table on the body pair, cap_hp a power of two (0: none yet) */
  fl_int nhp, cap_hp;
  struct fl__hull_pair *hp;
};

/* Makes sure w->impl exists. */
int fl__world_impl(fl_world *w);
/* Rotation matrix and world inertia R I R^T of a body (rigid.c). */
static inline void fl__body_rot(const fl_body *b, double R[9]) { fl_quat_to_mat(b->quat, R); }
void fl__body_inertia_world(const fl_body *b, double Iw[9]);
/* World velocity of a point p of body k (k < 0: the world, zero). */
void fl__point_velocity(const fl_world *w, fl_int k, const double p[3], double out[3]);
/* Velocity of a prescribed body k seen through row coefficients j (6) on (v, w); 0 for a fixed
 * or dynamic body and for k < 0 (rigid.c). */
double fl__body_rate(const fl_world *w, fl_int k, const double j[6]);

/* One bilateral row of a joint, in terms of the two bodies' 6 velocities:
 * row . v = ja . (v_a, w_a) + jb . (v_b, w_b), error g0, compliance c, extra b, bounds. */
typedef struct fl__jrow {
  double ja[6], jb[6];
  double g0;   /* constraint error (m or rad) */
  double b;    /* constant term (drives, spring damping) */
  double c;    /* compliance */
  double lo, hi;
  int positional; /* 1 for rows whose g0 is a length error (observables) */
} fl__jrow;

/* Rows of joint j at the current poses for time step dt; returns their count (<= 7). */
int fl__joint_rows(const fl_world *w, const fl_joint *j, double dt, fl__jrow *rows);

/* Narrow phase on all pairs of rigid bodies with the given margin into *ct (count *nct, from 0;
 * capacity *cap, grown with fl_grow). spec in [0, 1]: each pair's margin grows by spec times
 * the distance the two bodies can close in one step w->dt (fl_world.speculative; 0 for the
 * poses as they are). npairs, if not NULL, gets the broad-phase pair count. w->impl must
 * exist (fl__world_impl). */
int fl__collide_all(fl_world *w, double margin, double spec, fl__contact **ct, fl_int *nct,
                    fl_int *cap, fl_int *npairs);

/* Hydroelastic patch of bodies i and j (hydroelastic.c, fl_hydro.h): appends its contacts (with
 * their own stiffness k) to *ct and returns their number, FL_ERR_UNSUPPORTED when the pair is
 * not a hydroelastic cylinder against a plane, or another error. */
int fl__hydro_collide(fl_world *w, fl_int i, fl_int j, double margin, fl__contact **ct,
                      fl_int *nct, fl_int *cap);

/*---- deformable bodies (fem.c, fem_collide.c) ----*/

/* Warm-start id of a deformable body k in contact keys (after every rigid body). */
static inline fl_int fl__fem_key(const fl_world *w, fl_int k) { return w->nbody + k; }

/* Contacts of deformable bodies with rigid bodies and with each other (phi <= margin) appended
 * to *ct (count *nct, capacity *cap, grown with fl_grow). w->impl must exist. */
int fl__fem_collide(fl_world *w, double margin, fl__contact **ct, fl_int *nct, fl_int *cap);

/* Frees body k and its scratch. */
void fl__fem_free(fl_fem_body *b);

#endif /* FL_WORLD_IMPL_H */

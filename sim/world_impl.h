/* world_impl.h: what the world's own files share (world.c, joints.c, stepper.c,
 * observables.c, scenes*.c, scene_json.c). Never included outside sim/ and tests/.
 */
#ifndef FL_WORLD_IMPL_H
#define FL_WORLD_IMPL_H

#include "fl_world.h"

/* One contact point found by the narrow phase: bodies a < b, normal from a to b. */
typedef struct fl__contact {
  fl_int a, b;
  double p[3], n[3];
  double phi;
  int64_t feature;
  double k;  /* > 0: this contact's own stiffness (N/m, hydroelastic patch); else the materials' */
} fl__contact;

/* Warm-start key of a contact: the body pair and the feature id. */
typedef struct fl__wskey {
  fl_int a, b;
  int64_t feature;
  fl_int idx; /* index into the impulse array it came from */
} fl__wskey;

/* One side of a contact with a deformable body: a rigid body, or up to 3 vertices of a mesh
 * with barycentric weights (the side's velocity is sum_k wt[k] v[vert[k]]). */
typedef struct fl__side {
  fl_int body;  /* rigid body index, or -1 */
  fl_int fem;   /* deformable body index, or -1 */
  int nvert;
  fl_int vert[3];
  double wt[3];
} fl__side;

/* A contact involving a deformable body (sim/fem_collide.c): normal from side a to side b. */
typedef struct fl__fcontact {
  fl__side a, b;
  double p[3], n[3]; /* world point midway between the surfaces, unit normal a -> b */
  double phi;        /* signed distance (m) */
  int64_t feature;   /* the vertex of side b (stable across steps) */
} fl__fcontact;

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
  fl_int nobs_fct, cap_obs_fct;
  fl__fcontact *obs_fct;  /* deformable contacts found by the observables (margin 0) */
  fl_int npose;
  fl_int *pose_body;      /* rigid bodies with pose and velocity columns, in column order */
  /* deformable bodies: their contacts of the prepared problem (after the rigid ones) */
  fl_int nfct, cap_fct;
  fl__fcontact *fct;
  double fem_geometry_s;  /* CPU time of the last fl__fem_collide */
};

/* Makes sure w->impl exists. */
int fl__world_impl(fl_world *w);
/* Rotation matrix and world inertia R I R^T of a body. */
void fl__body_rot(const fl_body *b, double R[9]);
void fl__body_inertia_world(const fl_body *b, double Iw[9]);
/* World velocity of a point p of body k (k < 0: the world, zero). */
void fl__point_velocity(const fl_world *w, fl_int k, const double p[3], double out[3]);

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

/* Narrow phase on all pairs with the given margin into *ct (count *nct, capacity *cap, grown
 * with fl_realloc). spec in [0, 1]: each pair's margin grows by spec times the distance the two
 * bodies can close in one step w->dt (fl_world.speculative; 0 for the poses as they are).
 * npairs, if not NULL, gets the broad-phase pair count. */
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

/* Contacts of deformable bodies with rigid bodies and with each other (phi <= margin) into
 * *ct (count *nct, capacity *cap, grown with fl_realloc). */
int fl__fem_collide(fl_world *w, double margin, fl__fcontact **ct, fl_int *nct, fl_int *cap);

/* Per deformable body, for the step about to be assembled: marks participating dofs (from
 * the contacts), assembles A and the elastic forces, factors, computes v*; assigns the
 * body's problem dofs from *nv on (advancing it) and its clique from *ncl on. */
int fl__fem_prepare(fl_world *w, const fl__fcontact *ct, fl_int nct, fl_int *nv, fl_int *ncl);
/* Number of stored entries of the bodies' blocks of A (for sizing the problem's A). */
fl_int fl__fem_nnz(const fl_world *w);
/* Appends the bodies' rows of A (after the rigid rows, which end at *nnz) and fills v0, v*,
 * clique_ptr/clique_dof/dof_clique for their dofs. */
void fl__fem_fill(const fl_world *w, fl_problem *p, fl_int *nnz);
/* Problem clique of body k for this step, or -1 when it has no dofs in the problem. */
fl_int fl__fem_clique(const fl_world *w, fl_int k);
/* Coefficients of the velocity of side s along d, times sign, as (problem dof, value) pairs
 * appended at cols/vals (returns how many, <= 9), and the contribution of held dofs to the
 * constant term through *bconst. */
int fl__fem_side_row(const fl_world *w, const fl__side *s, const double d[3], double sign,
                     fl_int *cols, double *vals, double *bconst);
/* In place on the bodies' slots of x (nv): x <- A^-1 x (their blocks of the problem's A). */
int fl__fem_apply_Ainv(const fl_world *w, double *x);
/* After the solve: recovers the non-participating velocities (schur), sets every vertex
 * velocity (held dofs at their prescribed value), integrates x += dt v, checks inversion. */
int fl__fem_finish(fl_world *w, const double *v);
/* Frees body k and its scratch. */
void fl__fem_free(fl_fem_body *b);

#endif /* FL_WORLD_IMPL_H */

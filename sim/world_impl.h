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
  fl_int nobs_ct, cap_obs_ct;
  fl__contact *obs_ct;    /* contacts found by the observables (margin 0) */
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
 * with fl_realloc). npairs, if not NULL, gets the broad-phase pair count. */
int fl__collide_all(fl_world *w, double margin, fl__contact **ct, fl_int *nct, fl_int *cap,
                    fl_int *npairs);

/* Hydroelastic patch of bodies i and j (hydroelastic.c, fl_hydro.h): appends its contacts (with
 * their own stiffness k) to *ct and returns their number, FL_ERR_UNSUPPORTED when the pair is
 * not a hydroelastic cylinder against a plane, or another error. */
int fl__hydro_collide(fl_world *w, fl_int i, fl_int j, double margin, fl__contact **ct,
                      fl_int *nct, fl_int *cap);


#endif /* FL_WORLD_IMPL_H */

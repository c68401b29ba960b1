// SPDX-License-Identifier: Apache-2.0
/* fl_hydro.h: hydroelastic contact patches (seed 002, Masterjohn et al. 2022), the spinning
 * coin and its exact reference (Farkas, Bartels, Unger, Wolf, PRL 2003).
 *
 * Hydroelastic patch (sim/hydroelastic.c). A body with hydro_modulus E_h > 0 is compliant:
 * it carries a pressure field that is zero on its surface and E_h on its medial axis, linear
 * along the normal in between. For a cylinder (radius R, half length h) the region next to a
 * cap has the field p(x) = E_h d(x)/hf, d the depth of x below the cap plane and hf = min(h, R)
 * the cap's distance to the medial axis (the mid-plane disk of a coin); the rim band of width
 * hf, where the medial axis bends to the rim edge, is given the cap's field too (see
 * docs/coin.md). Against a rigid plane the contact surface is the plane clipped by the
 * cylinder; it is tessellated by projecting the cap's triangles onto the plane along the axis
 * and clipping them where the cap lies below the plane. Each polygon becomes one compliant
 * point contact at its centroid with
 *   p0 = p(centroid) (Pa), g = grad p . n (Pa/m, the rigid plane's gradient is infinite),
 *   k = g A (N/m), phi0 = -p0/g (m),
 * so the elastic force k (-phi0) = A p0 is the exact integral of the linear pressure over the
 * polygon (seed 002 eqs. 12-16). Polygons with g <= 0 (a cap not facing the plane) or area
 * <= 1e-14 m^2 are skipped. The stepper calls fl__hydro_collide (world_impl.h) for every pair
 * with a hydroelastic body; a hydroelastic cylinder against a rigid plane and a hydroelastic
 * sphere against a rigid plane or polyhedron (box, convex hull, the cylinder's prism) get
 * patches (fl_hydro_patch); other pairs, two hydroelastic bodies included, fall back to point
 * contact.
 *
 * Units are SI. Arrays returned are allocated with fl_malloc/fl_realloc and owned by the
 * caller (fl_free). Functions return FL_OK or a negative FL_ERR_* with a message.
 */
#ifndef FL_HYDRO_H
#define FL_HYDRO_H
// layer 4: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 4
#error "sim/fl_hydro.h is in sim/, layer 4: a lower layer may not include it (docs/layers.md)"
#endif

#include "fl_world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default patch: a fan of 152 triangles about the cap centre (seed 002 section V-A). */
#define FL_HYDRO_FAN_DEFAULT 152
/* The spinning_coin scene's default patch: 12 rings (864 triangles), whose eps (read at 10 mu
 * g dt) and stop time from 1 m/s, eps0 = 1, are within 0.3 % of the published uniform disk's
 * from the same start, where the 152-triangle fan's are 3.4 % and 3.5 % off (docs/coin.md,
 * issue 50). */
#define FL_COIN_RINGS_DEFAULT 12
/* Default patch of a sphere: 6 rings (216 triangles) over the immersed disk. */
#define FL_HYDRO_SPHERE_RINGS 6

/* Triangles of a disk of radius R (m) in its own plane: mesh n > 0 is a fan of n triangles about
 * the centre (rim vertices at angles 2 pi k/n); mesh n < 0 is |n| concentric rings of width
 * R/|n| with 6 i vertices on ring i (6 n^2 triangles, mesh size about R/|n|); mesh 0 means the
 * default fan. *tri gets ntri x 6 coordinates (x0 y0 x1 y1 x2 y2, counter-clockwise). n is
 * limited to 3..100000 (fan) and 1..200 (rings): FL_ERR_INVAL otherwise; FL_ERR_NOMEM. */
int fl_hydro_disk_mesh(double R, int mesh, double **tri, fl_int *ntri);

/* One polygon of a patch: its compliant point contact. */
typedef struct fl_hydro_face {
  double p[3];  /* centroid on the rigid surface (m, world) */
  double n[3];  /* unit normal from the rigid body into the compliant one (world) */
  double area;  /* m^2 */
  double p0;    /* pressure at the centroid (Pa; < 0 in the speculative margin) */
  double g;     /* effective pressure gradient along n (Pa/m) */
  double k;     /* g area (N/m) */
  double phi0;  /* -p0/g (m) */
  int tri;      /* index of the cap triangle it came from (feature id) */
} fl_hydro_face;

/* The patch between a rigid body (`plane`: a plane, or for a sphere also a polyhedron) and a
 * hydroelastic body at their current poses.
 * Cylinder: the cap facing the plane is meshed (hydro_mesh), its triangles projected onto the
 * plane along the axis and clipped where the cap lies deeper than -margin below the plane
 * (margin >= 0, m; polygons in the margin carry negative p0, i.e. phi0 > 0); the field is linear
 * there, so A p0 is exact. Sphere (radius r): on the plane, or on every face of a polyhedron,
 * the disk of the face's plane within r + margin of the centre, meshed with hydro_mesh (0:
 * FL_HYDRO_SPHERE_RINGS rings) and clipped to the face, the radial field p = E_h (1 - |x - C|/r)
 * at the centroids (second order in the mesh size); nothing from a face whose plane has the
 * centre at or behind it (no positive gradient). Faces are appended to *faces (count
 * *nface, capacity *cap, grown with fl_realloc; start with NULL, 0, 0). Returns the number
 * appended (>= 0), FL_ERR_UNSUPPORTED for other pairs (no message) or a polyhedron face of
 * more than 248 vertices (with one), FL_ERR_INVAL, FL_ERR_NOMEM. */
int fl_hydro_patch(const fl_body *plane, const fl_body *body, double margin, fl_hydro_face **faces,
                   fl_int *nface, fl_int *cap);

/*---- Farkas reference (sim/farkas.c) ----*/

/* Complete elliptic integrals of the first and second kind, K(k) and E(k), of modulus
 * 0 <= k < 1 by the arithmetic-geometric mean (to rounding); k = 1 gives K = INFINITY, E = 1.
 * FL_ERR_INVAL for k outside [0, 1] or NaN. */
int fl_elliptic_ke(double k, double *K, double *E);

/* Friction force f = F/(mu N) and torque t = T/(mu N R) of a uniformly loaded Coulomb disk
 * sliding at v and spinning at omega, eps = v/(omega R) >= 0 (eps = INFINITY: pure sliding,
 * f = 1, t = 0). The closed forms of shared/reference/README.md. */
void fl_farkas_ft(double eps, double *f, double *t);

/* The fixed point eps* of the uniform disk (f(eps)/eps = 2 t(eps), I = m R^2/2): 0.6530018. */
double fl_farkas_eps_star(void);

/* The fixed point eps* of a disk of radius R (m) whose load is carried by n point loads of
 * weights wgt at xy (n x 2, m, about the centre), Coulomb friction at each, I = m R^2/2: the
 * root of f - 2 eps t in [0.02, 5] by bisection; NAN when there is none. The 152-triangle fan
 * under uniform pressure (loads at the centroids, weights the areas) gives 0.644153. */
double fl_patch_eps_star(const double *xy, const double *wgt, int n, double R);

/* Integrates dv/dt = -mu g f(eps), domega/dt = -(2 mu g/R) t(eps) from (v0, omega0) (> 0) and
 * samples v (m/s) and omega (rad/s) at times k dt_out, k = 0..nout-1 (zero after the disk has
 * stopped). Adaptive RK4 with steps 1e-3 of the remaining time scale. *t_stop gets the time
 * the disk stops (s) and *eps_end eps when the speed has fallen to 1e-15 of its start (may be
 * NULL). FL_ERR_INVAL for bad arguments. */
int fl_farkas_integrate(double v0, double omega0, double R, double mu, double g, double dt_out,
                        int nout, double *v, double *omega, double *t_stop, double *eps_end);

/*---- the spinning coin (sim/scene_coin.c) ----*/

/* A coin run: the scene spinning_coin with `scene_set` overrides ("key=value,..." or NULL),
 * stepped with solver `solver` (options `solver_set` likewise) until it has stopped or the
 * scene's duration has passed. */
typedef struct fl_coin_run {
  int steps;        /* steps taken */
  int nfail;        /* steps whose solver ended with a negative reason */
  long iters;       /* iterations summed */
  double solve_s;   /* solver wall time (s) */
  double t_stop;    /* time at which v and omega R both fell below the rest threshold (s) */
  double eps0;      /* v/(omega R) at the start */
  double eps_star;  /* terminal eps (see fl_coin_eps_star) */
  double s_min;     /* the threshold used for eps_star (m/s) */
  int nsample;      /* samples kept in t, v, wr (at most the capacity given) */
} fl_coin_run;

/* Runs the coin. If t, v, wr (capacity cap each) are given, the state after each step is
 * stored: time (s), speed v (m/s), omega R (m/s). Returns FL_OK or the scene/solver error. */
int fl_coin_simulate(const char *scene_set, const char *solver, const char *solver_set,
                     fl_coin_run *out, double *t, double *v, double *wr, int cap);

/* Called by fl_coin_simulate_observed with the initial state (step 0, info NULL) and after
 * every step (step = steps taken): the world may be read, not changed. A negative return stops
 * the run and is returned. */
typedef int (*fl_step_observer)(void *ctx, fl_world *w, long step, const fl_step_info *info);
/* fl_coin_simulate with an observer (NULL: none) given ctx. */
int fl_coin_simulate_observed(const char *scene_set, const char *solver, const char *solver_set,
                              fl_coin_run *out, double *t, double *v, double *wr, int cap,
                              fl_step_observer observe, void *ctx);

/* Terminal eps from a sampled trajectory (n samples of v and omega R, m/s): the ratio
 * v/(omega R) at the last sample where v + omega R > s_min. Returns NAN when no sample is. */
double fl_coin_eps_star(const double *v, const double *wr, int n, double s_min);

#ifdef __cplusplus
}
#endif
#endif /* FL_HYDRO_H */

// SPDX-License-Identifier: Apache-2.0
/* scenes_more.c: the further scenes of PROBLEMS.md section 5 (pendulums, chain, cylinder
 * stack, leaning capsule, table pile, granular pile). The thesis (seed 004) describes these
 * only in words; the constructions below are ours and documented in docs/scenes.md.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scenes_impl.h"

//---- a small deterministic generator (placements only) ----

static double rnd(unsigned long long *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0; // [0, 1)
}


static int add_sphere(fl_world *w, const char *name, fl_body_kind kind, int mat, double r,
                      const double pos[3], double density, double mass) {
  fl_shape s;
  FL_TRY(fl_shape_make_sphere(r, &s));
  fl_body_desc d = fl__desc(name, kind, mat);
  d.density = density;
  d.mass = mass;
  memcpy(d.pos, pos, sizeof d.pos);
  return fl__add_shape(w, &d, &s);
}


static int add_rod(fl_world *w, int a, int b, double stiffness) {
  fl_joint j;
  memset(&j, 0, sizeof j);
  j.type = FL_JOINT_DISTANCE;
  j.body_a = a;
  j.body_b = b;
  double d[3];
  const double *pa = a >= 0 ? w->body[a].pos : j.anchor_a;
  for (int k = 0; k < 3; k++) d[k] = w->body[b].pos[k] - pa[k];
  j.rest_length = fl_v3_norm(d);
  j.stiffness = stiffness;
  return fl_world_add_joint(w, &j);
}


//---- pendulum_mass_ratio (thesis Fig. 26) and pendulum_stiffness_ratio (Fig. 27) ----

typedef struct pendulum_params {
  fl_scene_common c;
  double length;    /* m, each link */
  double radius;    /* m, of the spheres */
  double mass;      /* kg, upper sphere */
  double ratio;     /* lower/upper mass (mass ratio) or lower/upper stiffness */
  double stiffness; /* N/m, upper spring (stiffness ratio); inf for rods */
  double angle;     /* deg, upper link from the downward vertical at the start */
  double angle2;    /* deg, lower link from the downward vertical at the start */
} pendulum_params;

typedef pendulum_params pendulum_mass_ratio_params;
typedef pendulum_params pendulum_stiffness_ratio_params;

/* dt: the light sphere between the pivot and the heavy one has a fast mode of about
 * sqrt(g (m1 + m2)/(m1 L)) = 313 rad/s at ratio 1e4; the linearized rods are stable only for
 * dt well below 2/313 s, so the default is 1 ms (at 10 ms every solver's run blows up). */
static const fl_option_desc pendulum_mass_ratio_opts[] = {
  FL__COMMON(pendulum_params, 0.001, 2.0, 1e-3),
  FL__REAL(pendulum_params, length, 1e-3, 1e3, 1.0, "length of each link (m)"),
  FL__REAL(pendulum_params, radius, 1e-4, 1e2, 0.05, "sphere radius (m)"),
  FL__REAL(pendulum_params, mass, 1e-9, 1e9, 1.0, "upper sphere mass (kg)"),
  FL__REAL(pendulum_params, ratio, 1e-9, 1e12, 1e4, "lower/upper mass ratio"),
  FL__REAL(pendulum_params, stiffness, 1e-9, INFINITY, INFINITY,
           "link stiffness (N/m); inf: rigid rods"),
  FL__REAL(pendulum_params, angle, 0, 180, 90, "upper link's start angle from the downward vertical (deg)"),
  FL__REAL(pendulum_params, angle2, 0, 180, 0,
           "lower link's start angle (deg); two aligned links (angle2 = angle) are a singular "
           "configuration that the linearized rods cannot hold at large mass ratios"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

static const fl_option_desc pendulum_stiffness_ratio_opts[] = {
  FL__COMMON(pendulum_params, 0.01, 5.0, 1e-3),
  FL__REAL(pendulum_params, length, 1e-3, 1e3, 1.0, "rest length of each spring (m)"),
  FL__REAL(pendulum_params, radius, 1e-4, 1e2, 0.05, "sphere radius (m)"),
  FL__REAL(pendulum_params, mass, 1e-9, 1e9, 1.0, "mass of each sphere (kg)"),
  FL__REAL(pendulum_params, ratio, 1e-9, 1e12, 1e4, "lower/upper spring stiffness ratio"),
  FL__REAL(pendulum_params, stiffness, 1e-9, 1e15, 1e4, "upper spring stiffness (N/m)"),
  FL__REAL(pendulum_params, angle, 0, 180, 90, "upper link's start angle from the downward vertical (deg)"),
  FL__REAL(pendulum_params, angle2, 0, 180, 0,
           "lower link's start angle (deg); two aligned links (angle2 = angle) are a singular "
           "configuration that the linearized rods cannot hold at large mass ratios"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

/* A fixed pivot at the origin, the upper sphere at `angle` from the downward vertical, the
 * lower one at `angle2` below it, linked pivot-upper and upper-lower by distance joints. */
static int pendulum_build(const pendulum_params *p, fl_world *w, double m2, double k1, double k2) {
  double s = sin(p->angle * M_PI / 180), c = -cos(p->angle * M_PI / 180);
  double s2 = sin(p->angle2 * M_PI / 180), c2 = -cos(p->angle2 * M_PI / 180);
  double o[3] = {0, 0, 0}, x1[3] = {p->length * s, 0, p->length * c};
  double x2[3] = {x1[0] + p->length * s2, 0, x1[2] + p->length * c2};
  fl_int ids[3];
  ids[0] = add_sphere(w, "pivot", FL_BODY_FIXED, 0, 0.2 * p->radius, o, 0, 0);
  FL_TRY(ids[0]);
  ids[1] = add_sphere(w, "upper", FL_BODY_DYNAMIC, 0, p->radius, x1, 0, p->mass);
  FL_TRY(ids[1]);
  ids[2] = add_sphere(w, "lower", FL_BODY_DYNAMIC, 0, p->radius, x2, 0, m2);
  FL_TRY(ids[2]);
  FL_TRY(add_rod(w, ids[0], ids[1], k1));
  FL_TRY(add_rod(w, ids[1], ids[2], k2));
  FL_TRY(fl_world_add_group(w, FL_OBS_CHAIN, 3, ids, NULL, 0));
  return FL_OK;
}


static int pendulum_mass_ratio_build(const void *pp, fl_world *w) {
  const pendulum_params *p = pp;
  return pendulum_build(p, w, p->mass * p->ratio, p->stiffness, p->stiffness);
}


static int pendulum_stiffness_ratio_build(const void *pp, fl_world *w) {
  const pendulum_params *p = pp;
  return pendulum_build(p, w, p->mass, p->stiffness, p->stiffness * p->ratio);
}


//---- chain (thesis Fig. 28) ----

typedef struct chain_params {
  fl_scene_common c;
  int n;            /* particles */
  double link;      /* m */
  double radius;    /* m */
  double mass;      /* kg per particle */
  double end_ratio; /* mass of the end weight / particle mass */
  double stiffness; /* N/m of every link; inf = rods */
} chain_params;

static const fl_option_desc chain_opts[] = {
  FL__COMMON(chain_params, 0.01, 2.0, 1e-3),
  FL__INT(chain_params, n, 1, 10000, 10, "particles below the pivot (the last is the weight)"),
  FL__REAL(chain_params, link, 1e-3, 1e3, 0.2, "link length (m)"),
  FL__REAL(chain_params, radius, 1e-4, 1e2, 0.02, "particle radius (m)"),
  FL__REAL(chain_params, mass, 1e-9, 1e9, 1.0, "particle mass (kg)"),
  FL__REAL(chain_params, end_ratio, 1e-9, 1e12, 1e3, "end weight / particle mass"),
  FL__REAL(chain_params, stiffness, 1e-9, INFINITY, INFINITY, "link stiffness (N/m); inf: rods"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

/* A vertical chain hanging at rest from a fixed pivot; the last particle is the heavy weight. */
static int chain_build(const void *pp, fl_world *w) {
  const chain_params *p = pp;
  fl_int *ids = fl_malloc((size_t)(p->n + 1) * sizeof(fl_int));
  if (!ids) return fl_seterr(FL_ERR_NOMEM, "chain: out of memory");
  double o[3] = {0, 0, 0};
  int rc = ids[0] = add_sphere(w, "pivot", FL_BODY_FIXED, 0, p->radius, o, 0, 0);
  for (int k = 1; rc >= 0 && k <= p->n; k++) {
    double x[3] = {0, 0, -k * p->link};
    char name[32];
    snprintf(name, sizeof name, "p%d", k);
    double m = (k == p->n) ? p->mass * p->end_ratio : p->mass;
    rc = ids[k] = add_sphere(w, name, FL_BODY_DYNAMIC, 0, p->radius, x, 0, m);
    if (rc >= 0) rc = add_rod(w, ids[k - 1], ids[k], p->stiffness);
  }
  if (rc >= 0) rc = fl_world_add_group(w, FL_OBS_CHAIN, p->n + 1, ids, NULL, 0);
  fl_free(ids);
  return rc < 0 ? rc : FL_OK;
}


//---- cylinder_stack (thesis Fig. 30) ----

typedef struct cylinder_stack_params {
  fl_scene_common c;
  int n;
  double radius, half_length; /* m */
  double base_mass, ratio;    /* kg; mass ratio per level */
  double mu, stiffness;       /* stiffness N/m (inf = rigid) */
  int segments;               /* sides of the polyhedral cylinder */
} cylinder_stack_params;

static const fl_option_desc cylinder_stack_opts[] = {
  FL__COMMON(cylinder_stack_params, 1.0 / 60, 5.0, 5e-3),
  FL__INT(cylinder_stack_params, n, 1, 64, 5, "cylinders"),
  FL__REAL(cylinder_stack_params, radius, 1e-4, 1e3, 0.5, "radius (m)"),
  FL__REAL(cylinder_stack_params, half_length, 1e-4, 1e3, 0.25, "half height (m)"),
  FL__REAL(cylinder_stack_params, base_mass, 1e-9, 1e12, 8, "bottom (lightest) mass (kg)"),
  FL__REAL(cylinder_stack_params, ratio, 1e-6, 1e6, 8, "mass ratio per level (8^4 = 4096)"),
  FL__REAL(cylinder_stack_params, mu, 0, 100, 0.5, "friction coefficient"),
  FL__REAL(cylinder_stack_params, stiffness, 1e-3, INFINITY, 1e8,
           "contact stiffness k_n (N/m); inf: rigid"),
  // at most 256: separating-axis tests between n-sided prisms grow as n^2; measured 1.2 s a
  // step at 1024 sides against 0.03 s at 256 (issue 51)
  FL__INT(cylinder_stack_params, segments, 3, 256, FL_CYL_SEGMENTS_DEFAULT,
          "sides of the polyhedral cylinder (at most 256: a step costs about n^2)"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

/* Upright cylinders (axis z) stacked on the ground, heavier upwards. */
static int cylinder_stack_build(const void *pp, fl_world *w) {
  const cylinder_stack_params *p = pp;
  int mat = fl_world_add_material(w, "cyl", p->mu, p->stiffness, 0);
  FL_TRY(mat);
  fl_int ids[65];
  ids[0] = fl__add_ground(w, mat, 0);
  FL_TRY(ids[0]);
  for (int k = 0; k < p->n; k++) {
    fl_shape s;
    FL_TRY(fl_shape_make_cylinder(p->radius, p->half_length, p->segments, &s));
    char name[32];
    snprintf(name, sizeof name, "cyl%d", k + 1);
    fl_body_desc d = fl__desc(name, FL_BODY_DYNAMIC, mat);
    d.mass = p->base_mass * pow(p->ratio, k);
    d.pos[2] = (2 * k + 1) * p->half_length;
    ids[k + 1] = fl__add_shape(w, &d, &s);
    FL_TRY(ids[k + 1]);
  }
  FL_TRY(fl_world_add_group(w, FL_OBS_STACK, p->n + 1, ids, NULL, 0));
  return FL_OK;
}


//---- capsule_lean (thesis Fig. 31) ----

typedef struct capsule_lean_params {
  fl_scene_common c;
  double radius, half_length; /* m */
  double angle;               /* deg from vertical */
  double density;
  double mu, stiffness;
} capsule_lean_params;

static const fl_option_desc capsule_lean_opts[] = {
  FL__COMMON(capsule_lean_params, 1.0 / 60, 5.0, 5e-3),
  FL__REAL(capsule_lean_params, radius, 1e-4, 1e3, 0.1, "capsule radius (m)"),
  FL__REAL(capsule_lean_params, half_length, 1e-4, 1e3, 1.0, "half length of the segment (m)"),
  FL__REAL(capsule_lean_params, angle, 0, 80, 30, "lean from the vertical (deg)"),
  FL__REAL(capsule_lean_params, density, 1e-3, 1e6, 1000, "density (kg/m^3)"),
  FL__REAL(capsule_lean_params, mu, 0, 100, 0.7, "friction coefficient (floor and wall)"),
  FL__REAL(capsule_lean_params, stiffness, 1e-3, INFINITY, 1e8,
           "contact stiffness k_n (N/m); inf: rigid"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

/* A capsule whose lower end rests on the floor and upper end touches a vertical wall (the
 * plane x = x_wall, normal -x), leaning by `angle`; a ladder that friction must hold. */
static int capsule_lean_build(const void *pp, fl_world *w) {
  const capsule_lean_params *p = pp;
  int mat = fl_world_add_material(w, "lean", p->mu, p->stiffness, 0);
  FL_TRY(mat);
  FL_TRY(fl__add_ground(w, mat, 0));
  double a = p->angle * M_PI / 180, r = p->radius, h = p->half_length;
  double ax[3] = {sin(a), 0, cos(a)};
  double xb[3] = {0, 0, r};
  double centre[3] = {xb[0] + h * ax[0], 0, xb[2] + h * ax[2]};
  double xwall = xb[0] + 2 * h * ax[0] + r;
  fl_shape s;
  FL_TRY(fl_shape_make_plane(&s));
  fl_body_desc d = fl__desc("wall", FL_BODY_FIXED, mat);
  double ey[3] = {0, 1, 0};
  fl_quat_from_axis_angle(ey, -M_PI / 2, d.quat); // +z -> -x
  d.pos[0] = xwall;
  FL_TRY(fl__add_shape(w, &d, &s));
  FL_TRY(fl_shape_make_capsule(r, h, &s));
  d = fl__desc("capsule", FL_BODY_DYNAMIC, mat);
  d.density = p->density;
  fl_quat_from_axis_angle(ey, a, d.quat); // body z -> the capsule's axis
  memcpy(d.pos, centre, sizeof d.pos);
  fl_int id = fl__add_shape(w, &d, &s);
  FL_TRY(id);
  fl_int ids[2] = {0, id};
  FL_TRY(fl_world_add_group(w, FL_OBS_STACK, 2, ids, NULL, 0));
  return FL_OK;
}


//---- table_pile (thesis Fig. 18 middle, Table 2) ----

typedef struct table_pile_params {
  fl_scene_common c;
  int n;
  double mass, mu;
  double lx, ly, lz; /* m, table (box) dimensions */
  int seed;
} table_pile_params;

static const fl_option_desc table_pile_opts[] = {
  FL__COMMON(table_pile_params, 0.0083, 3.0, 5e-3),
  FL__INT(table_pile_params, n, 1, 100000, 20, "tables"),
  FL__REAL(table_pile_params, mass, 1e-6, 1e6, 4.7, "mass of a table (kg)"),
  FL__REAL(table_pile_params, mu, 0, 100, 0.7, "friction coefficient"),
  FL__REAL(table_pile_params, lx, 1e-3, 1e3, 0.8, "table length (m)"),
  FL__REAL(table_pile_params, ly, 1e-3, 1e3, 0.5, "table width (m)"),
  FL__REAL(table_pile_params, lz, 1e-3, 1e3, 0.05, "table thickness (m)"),
  FL__INT(table_pile_params, seed, 0, 1000000, 1, "placement seed"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

/* Tables (flat boxes) dropped one above the other with random yaw, a small random tilt and
 * offsets up to a quarter of their length, forming an unstructured pile. */
static int table_pile_build(const void *pp, fl_world *w) {
  const table_pile_params *p = pp;
  int mat = fl_world_add_material(w, "table", p->mu, INFINITY, 0);
  FL_TRY(mat);
  FL_TRY(fl__add_ground(w, mat, 0));
  unsigned long long s = 0x9E3779B97F4A7C15ULL ^ (unsigned long long)p->seed;
  double half[3] = {p->lx / 2, p->ly / 2, p->lz / 2};
  double rad = sqrt(half[0] * half[0] + half[1] * half[1] + half[2] * half[2]);
  for (int k = 0; k < p->n; k++) {
    double yaw = 2 * M_PI * rnd(&s), tilt = 0.3 * (rnd(&s) - 0.5);
    double qz[4], qx[4], q[4], ez[3] = {0, 0, 1}, ex[3] = {1, 0, 0};
    fl_quat_from_axis_angle(ez, yaw, qz);
    fl_quat_from_axis_angle(ex, tilt, qx);
    fl_quat_mul(qz, qx, q);
    double pos[3] = {0.5 * half[0] * (rnd(&s) - 0.5), 0.5 * half[0] * (rnd(&s) - 0.5),
                     rad + k * (2 * rad + 0.02)};
    char name[32];
    snprintf(name, sizeof name, "table%d", k + 1);
    FL_TRY(fl__add_box(w, name, mat, half, pos, q, 0, p->mass));
  }
  return FL_OK;
}


//---- granular (thesis Fig. 23) ----

typedef struct granular_params {
  fl_scene_common c;
  int n;             /* grains */
  double radius;     /* m, mean grain radius */
  double spread;     /* relative radius spread */
  double grain_mass; /* kg */
  double ratio;      /* cylinder mass / grain mass */
  double mu, stiffness;
  int seed;
  double spacing;    /* lattice pitch over the largest diameter */
  double max_recovery_speed; /* m/s, fl_world.max_recovery */
} granular_params;

static const fl_option_desc granular_opts[] = {
  FL__COMMON(granular_params, 0.0083, 1.0, 1e-3),
  FL__INT(granular_params, n, 1, 2000000, 1000, "number of grains N"),
  FL__REAL(granular_params, radius, 1e-5, 10, 0.005, "mean grain radius (m)"),
  FL__REAL(granular_params, spread, 0, 0.5, 0.2, "radii uniform in radius (1 +- spread)"),
  FL__REAL(granular_params, grain_mass, 1e-9, 1e6, 0.005, "mass of a grain of mean radius (kg)"),
  FL__REAL(granular_params, ratio, 1e-3, 1e9, 80000, "cylinder mass / grain mass"),
  FL__REAL(granular_params, mu, 0, 100, 0.3, "friction coefficient"),
  FL__REAL(granular_params, stiffness, 1e-3, INFINITY, INFINITY,
           "contact stiffness (N/m); inf: rigid"),
  FL__INT(granular_params, seed, 0, 1000000, 1, "placement seed"),
  FL__REAL(granular_params, spacing, 1, 10, 1.1,
           "lattice pitch / largest grain diameter (1 with spread=0: every grain touches its "
           "lattice neighbours at the start, 3 contacts per grain; used by the benchmark)"),
  FL__REAL(granular_params, max_recovery_speed, 0, INFINITY, INFINITY,
           "cap on a contact's penetration recovery speed -phi0/dt (m/s) in every step's "
           "problem and its FCLIB export; inf: none"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

/* N spheres on a jittered cubic lattice (pitch 2 r_max spacing; jitter a quarter of the free
 * space) inside a square box (ground and four wall planes), a heavy cylinder above them. */
static int granular_build(const void *pp, fl_world *w) {
  const granular_params *p = pp;
  w->max_recovery = p->max_recovery_speed;
  int mat = fl_world_add_material(w, "grain", p->mu, p->stiffness, 0);
  FL_TRY(mat);
  FL_TRY(fl__add_ground(w, mat, 0));
  double rmax = p->radius * (1 + p->spread), h = 2 * rmax * p->spacing;
  int nx = (int)ceil(cbrt((double)p->n));
  if (nx < 1) nx = 1;
  double half = 0.5 * nx * h;
  // four walls: planes at x = +-half, y = +-half facing inwards
  double ey[3] = {0, 1, 0}, ex[3] = {1, 0, 0};
  struct { const double *axis; double ang; double pos[3]; } walls[4] = {
    {ey, -M_PI / 2, {half, 0, 0}}, {ey, M_PI / 2, {-half, 0, 0}},
    {ex, M_PI / 2, {0, half, 0}}, {ex, -M_PI / 2, {0, -half, 0}}};
  for (int k = 0; k < 4; k++) {
    fl_shape s;
    FL_TRY(fl_shape_make_plane(&s));
    char name[32];
    snprintf(name, sizeof name, "wall%d", k + 1);
    fl_body_desc d = fl__desc(name, FL_BODY_FIXED, mat);
    fl_quat_from_axis_angle(walls[k].axis, walls[k].ang, d.quat);
    memcpy(d.pos, walls[k].pos, sizeof d.pos);
    FL_TRY(fl__add_shape(w, &d, &s));
  }
  unsigned long long s = 0x2545F4914F6CDD1DULL ^ (unsigned long long)p->seed;
  double rho = p->grain_mass / (4.0 / 3.0 * M_PI * pow(p->radius, 3));
  double top = 0;
  for (int k = 0; k < p->n; k++) {
    int ix = k % nx, iy = (k / nx) % nx, iz = k / (nx * nx);
    double r = p->radius * (1 + p->spread * (2 * rnd(&s) - 1));
    double jit = 0.25 * (h - 2 * rmax); // horizontal jitter within the lattice's free space
    double pos[3] = {-half + (ix + 0.5) * h + jit * (2 * rnd(&s) - 1),
                     -half + (iy + 0.5) * h + jit * (2 * rnd(&s) - 1), rmax + iz * h};
    if (pos[2] + r > top) top = pos[2] + r;
    fl_shape sh;
    FL_TRY(fl_shape_make_sphere(r, &sh));
    fl_body_desc d = fl__desc(NULL, FL_BODY_DYNAMIC, mat);
    d.density = rho;
    memcpy(d.pos, pos, sizeof d.pos);
    FL_TRY(fl__add_shape(w, &d, &sh));
  }
  // the weight: a flat cylinder a little above the grains
  double cr = 0.8 * half, chl = 0.25 * cr;
  fl_shape sh;
  FL_TRY(fl_shape_make_cylinder(cr, chl, 0, &sh));
  fl_body_desc d = fl__desc("weight", FL_BODY_DYNAMIC, mat);
  d.mass = p->ratio * p->grain_mass;
  d.pos[2] = top + chl + 0.5 * h;
  int iw = fl__add_shape(w, &d, &sh);
  FL_TRY(iw);
  // pose and velocity columns for the weight only (the grains are too many for a CSV row)
  fl_int ids[1] = {iw};
  FL_TRY(fl_world_add_group(w, FL_OBS_POSE, 1, ids, NULL, 0));
  return FL_OK;
}


//---- descriptors ----

#define SCENE(nm, summ, chk)                                                                  \
  const fl_scene_desc fl__##nm##_scene = {#nm, summ, chk, sizeof(nm##_params), nm##_opts,    \
                                          nm##_build}

SCENE(pendulum_mass_ratio, "double pendulum of two spheres, mass ratio 1e4 (thesis Fig. 26)",
      "chain_stretch stays small (a solver that struggles with mass ratios stretches it)");
SCENE(pendulum_stiffness_ratio,
      "double spring pendulum, lower spring 1e4 times stiffer (thesis Fig. 27)",
      "chain_stretch near the static spring stretch (a solver that struggles with stiffness ratios "
      "stretches more)");
SCENE(chain, "vertical chain of particles with a heavy end weight (thesis Fig. 28)",
      "hangs at rest: chain_stretch stays near 0");
SCENE(cylinder_stack, "five upright cylinders, mass ratio 4096:1, k_n = 1e8 (thesis Fig. 30)",
      "stack_collapsed = 0 and stack_pen small after the run");
SCENE(capsule_lean, "capsule leaning on a wall, k_n = 1e8 (thesis Fig. 31)",
      "the foot does not slip: stack_lateral_drift stays below 1 mm");
SCENE(table_pile, "unstructured pile of 4.7 kg tables, mu 0.7 (thesis Fig. 18 middle)",
      "the pile comes to rest (kinetic energy near 0) with small penetration");
SCENE(granular, "N spheres in a box with a heavy cylinder on top (thesis Fig. 23)",
      "the grains carry the weight with small penetration (pen_max)");

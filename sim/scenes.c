// SPDX-License-Identifier: Apache-2.0
/* scenes.c: the canonical scenes' registry, parameters, and the scenes of PROBLEMS.md sections 1
 * and 2 plus the ball on a slope (scenes_more.c holds the rest).
 *
 * A scene is a documented function that fills an empty world from a parameter struct (which
 * starts with fl_scene_common: dt, duration, margin). Every parameter has a default and is
 * overridable with `--set key=value` (or scene.key, or <scene>.key). z is up, gravity 9.81.
 * docs/scenes.md describes every scene, its parameters, observables and check.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "scenes_impl.h"

//---- ball_slope (seed 003 Fig. 3) ----

typedef struct ball_slope_params {
  fl_scene_common c;
  double theta;   /* slope angle (deg) */
  double mu;      /* friction of ball and slope */
  double radius;  /* m */
  double density; /* kg/m^3 */
} ball_slope_params;

static const fl_option_desc ball_slope_opts[] = {
  FL__COMMON(ball_slope_params, 1e-3, 1.0, 1e-3),
  FL__REAL(ball_slope_params, theta, 0, 89, 45, "slope angle (deg)"),
  FL__REAL(ball_slope_params, mu, 0, 100, 0.2, "friction coefficient (rigid contact)"),
  FL__REAL(ball_slope_params, radius, 1e-6, 1e6, 0.5, "ball radius (m)"),
  FL__REAL(ball_slope_params, density, 1e-6, 1e9, 1000, "ball density (kg/m^3)"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

/* A plane through the origin tilted by theta about y (normal (sin, 0, cos)), so that downhill
 * is d = (cos, 0, -sin); a ball tangent to it at the origin, at rest. */
static int ball_slope_build(const void *pp, fl_world *w) {
  const ball_slope_params *p = pp;
  double th = p->theta * M_PI / 180;
  int mat = fl_world_add_material(w, "slope", p->mu, INFINITY, 0);
  FL_TRY(mat);
  fl_shape s;
  FL_TRY(fl_shape_make_plane(&s));
  fl_body_desc d = fl__desc("slope", FL_BODY_FIXED, mat);
  double ey[3] = {0, 1, 0};
  fl_quat_from_axis_angle(ey, th, d.quat);
  FL_TRY(fl__add_shape(w, &d, &s));
  FL_TRY(fl_shape_make_sphere(p->radius, &s));
  d = fl__desc("ball", FL_BODY_DYNAMIC, mat);
  d.density = p->density;
  d.pos[0] = p->radius * sin(th);
  d.pos[2] = p->radius * cos(th);
  fl_int ball = fl__add_shape(w, &d, &s);
  FL_TRY(ball);
  double par[6] = {cos(th), 0, -sin(th), th, p->mu, fl_v3_norm(w->gravity)};
  FL_TRY(fl_world_add_group(w, FL_OBS_SLOPE, 1, &ball, par, 6));
  return FL_OK;
}


//---- heavy_stack (PROBLEMS.md section 1) ----

typedef struct heavy_stack_params {
  fl_scene_common c;
  int n;            /* boxes */
  double mu;
  double base_mass; /* kg, the lightest box */
  double ratio;     /* mass ratio between neighbours */
  double edge;      /* m, cube edge (sizes = equal) */
  int sizes;        /* equal | scaled */
  int order;        /* light-bottom | heavy-bottom */
  double gap;       /* m, initial gap between boxes */
} heavy_stack_params;

static const fl_option_desc heavy_stack_opts[] = {
  FL__COMMON(heavy_stack_params, 1.0 / 120, 10.0, 5e-3),
  FL__INT(heavy_stack_params, n, 1, 64, 5, "number of boxes"),
  FL__REAL(heavy_stack_params, mu, 0, 100, 0.5, "friction coefficient (rigid contact)"),
  FL__REAL(heavy_stack_params, base_mass, 1e-9, 1e12, 8, "mass of the lightest box (kg)"),
  FL__REAL(heavy_stack_params, ratio, 1e-6, 1e6, 8, "mass ratio between neighbouring boxes"),
  FL__REAL(heavy_stack_params, edge, 1e-6, 1e6, 0.5, "cube edge with sizes=equal (m)"),
  FL__ENUM(heavy_stack_params, sizes, "equal|scaled", 0,
           "equal: cubes of `edge` with masses set; scaled: 1000 kg/m^3 cubes of the same masses"),
  FL__ENUM(heavy_stack_params, order, "light-bottom|heavy-bottom", 0,
           "light-bottom: the light box carries the heavy ones (the hard order)"),
  FL__REAL(heavy_stack_params, gap, 0, 1, 0, "initial gap between boxes (m)"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

static int heavy_stack_build(const void *pp, fl_world *w) {
  const heavy_stack_params *p = pp;
  int mat = fl_world_add_material(w, "box", p->mu, INFINITY, 0);
  FL_TRY(mat);
  fl_int ids[65];
  ids[0] = fl__add_ground(w, mat, 0);
  FL_TRY(ids[0]);
  double z = 0;
  for (int k = 0; k < p->n; k++) {
    int level = p->order == 0 ? k : p->n - 1 - k;
    double m = p->base_mass * pow(p->ratio, level);
    double e = p->sizes == 0 ? p->edge : cbrt(m / 1000.0);
    double half[3] = {e / 2, e / 2, e / 2}, pos[3] = {0, 0, z + p->gap + e / 2};
    char name[32];
    snprintf(name, sizeof name, "box%d", k + 1);
    ids[k + 1] = fl__add_box(w, name, mat, half, pos, NULL, 0, m);
    FL_TRY(ids[k + 1]);
    z += p->gap + e;
  }
  FL_TRY(fl_world_add_group(w, FL_OBS_STACK, p->n + 1, ids, NULL, 0));
  return FL_OK;
}


//---- arch_parabolic (PROBLEMS.md section 2a) ----

typedef struct arch_parabolic_params {
  fl_scene_common c;
  int n;           /* voussoirs */
  double mu;
  double a_in, h_in;   /* intrados z = h_in (1 - (x/a_in)^2) (m) */
  double a_out, h_out; /* extrados z = h_out (1 - (x/a_out)^2) (m) */
  double density;      /* kg/m^3 */
  double springing_mass; /* kg: sets the depth */
} arch_parabolic_params;

static const fl_option_desc arch_parabolic_opts[] = {
  FL__COMMON(arch_parabolic_params, 0.0083, 10.0, 5e-3),
  FL__INT(arch_parabolic_params, n, 3, 200, 20, "number of voussoirs"),
  FL__REAL(arch_parabolic_params, mu, 0, 100, 0.6, "friction coefficient (rigid contact)"),
  FL__REAL(arch_parabolic_params, a_in, 1e-3, 1e3, 2.0, "intrados half span (m)"),
  FL__REAL(arch_parabolic_params, h_in, 1e-3, 1e3, 3.0, "intrados rise (m)"),
  FL__REAL(arch_parabolic_params, a_out, 1e-3, 1e3, 2.8, "extrados half span (m), > a_in"),
  FL__REAL(arch_parabolic_params, h_out, 1e-3, 1e3, 3.08, "extrados rise (m), > h_in"),
  FL__REAL(arch_parabolic_params, density, 1e-3, 1e6, 2300, "stone density (kg/m^3)"),
  FL__REAL(arch_parabolic_params, springing_mass, 1e-6, 1e9, 110,
           "mass of each springing voussoir (kg); sets the depth"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

#define ARCH_SAMPLES 4096

/* n + 1 points at equal arc length along z = h (1 - (x/a)^2) from x = a to x = -a. */
static void parabola_split(double a, double h, int n, double *x, double *z) {
  double L[ARCH_SAMPLES + 1], px = a, pz = 0;
  L[0] = 0;
  for (int k = 1; k <= ARCH_SAMPLES; k++) {
    double xx = a * (1 - 2.0 * k / ARCH_SAMPLES), zz = h * (1 - (xx / a) * (xx / a));
    L[k] = L[k - 1] + hypot(xx - px, zz - pz);
    px = xx;
    pz = zz;
  }
  int j = 0;
  for (int i = 0; i <= n; i++) {
    double t = L[ARCH_SAMPLES] * i / n;
    while (j < ARCH_SAMPLES - 1 && L[j + 1] < t) j++;
    double f = (L[j + 1] > L[j]) ? (t - L[j]) / (L[j + 1] - L[j]) : 0;
    double s = (j + f) / ARCH_SAMPLES; // fraction of the x range
    x[i] = a * (1 - 2 * s);
    z[i] = h * (1 - (x[i] / a) * (x[i] / a));
  }
  x[0] = a;
  z[0] = 0;
  x[n] = -a;
  z[n] = 0;
}


static int arch_parabolic_build(const void *pp, fl_world *w) {
  const arch_parabolic_params *p = pp;
  if (!(p->a_out > p->a_in) || !(p->h_out > p->h_in))
    return fl_seterr(FL_ERR_INVAL, "arch_parabolic: expected a_out > a_in and h_out > h_in");
  int mat = fl_world_add_material(w, "stone", p->mu, INFINITY, 0);
  FL_TRY(mat);
  FL_TRY(fl__add_ground(w, mat, 0));
  int n = p->n;
  double xi[201], zi[201], xo[201], zo[201];
  parabola_split(p->a_in, p->h_in, n, xi, zi);
  parabola_split(p->a_out, p->h_out, n, xo, zo);
  // depth from the springing voussoir's area (shoelace on I0, O0, O1, I1)
  double qx[4] = {xi[0], xo[0], xo[1], xi[1]}, qz[4] = {zi[0], zo[0], zo[1], zi[1]}, A = 0;
  for (int k = 0; k < 4; k++) A += qx[k] * qz[(k + 1) % 4] - qx[(k + 1) % 4] * qz[k];
  A = fabs(A) / 2;
  double depth = p->springing_mass / (p->density * A);
  fl_int ids[200];
  for (int i = 0; i < n; i++) {
    double pts[24];
    double cx[4] = {xi[i], xo[i], xo[i + 1], xi[i + 1]}, cz[4] = {zi[i], zo[i], zo[i + 1], zi[i + 1]};
    for (int k = 0; k < 4; k++) {
      for (int s = 0; s < 2; s++) {
        double *q = pts + 3 * (2 * k + s);
        q[0] = cx[k];
        q[1] = s ? depth / 2 : -depth / 2;
        q[2] = cz[k];
      }
    }
    fl_shape sh;
    FL_TRY(fl_shape_make_convex(pts, 8, &sh));
    char name[32];
    snprintf(name, sizeof name, "voussoir%d", i + 1);
    fl_body_desc d = fl__desc(name, FL_BODY_DYNAMIC, mat);
    d.density = p->density;
    ids[i] = fl__add_shape(w, &d, &sh);
    FL_TRY(ids[i]);
  }
  FL_TRY(fl_world_add_group(w, FL_OBS_ARCH, n, ids, NULL, 0));
  return FL_OK;
}


//---- arch_masonry (PROBLEMS.md section 2b; data in scenes_arch_data.c) ----

typedef struct arch_masonry_params {
  fl_scene_common c;
  int stones;     /* 25 | 101 */
  double mu;
  double density; /* kg/m^3 */
  int gaps;       /* closed | as-is */
  int kind;       /* rigid | deformable */
  double E, nu, beta;
  int cells;
  int base;       /* flat | edges */
  double edge_at; /* 0 intrados .. 1 extrados */
} arch_masonry_params;

static const fl_option_desc arch_masonry_opts[] = {
  FL__COMMON(arch_masonry_params, 0.04, 10.0, 1e-2),
  FL__ENUM(arch_masonry_params, stones, "25|101", 0, "which arch of Ferguson et al. 2021"),
  FL__REAL(arch_masonry_params, mu, 0, 100, 1.0, "friction coefficient (rigid contact)"),
  FL__REAL(arch_masonry_params, density, 1e-3, 1e6, 2300, "stone density (kg/m^3)"),
  FL__ENUM(arch_masonry_params, kind, "rigid|deformable", 0,
           "rigid stones, or tetrahedral FEM stones (seed 000 sec. VII-C)"),
  FL__REAL(arch_masonry_params, E, 1, 1e13, 20e9, "deformable stones: Young's modulus (Pa)"),
  FL__REAL(arch_masonry_params, nu, 0, 0.49, 0.3, "deformable stones: Poisson ratio"),
  FL__REAL(arch_masonry_params, beta, 0, 10, 0.01, "deformable stones: Rayleigh beta (s)"),
  FL__INT(arch_masonry_params, cells, 1, 8, 1,
          "deformable stones: cells per edge of each stone (6 tets each)"),
  FL__ENUM(arch_masonry_params, gaps, "closed|as-is", 0,
           "the data leaves 0.12-0.14 m between the (parallel) joint faces; closed: each joint "
           "face is moved by half its gap so that neighbours touch"),
  FL__ENUM(arch_masonry_params, base, "flat|edges", 0,
           "flat: springers on the ground plane, as in the data; edges: each on the ridge of a "
           "fixed prism (seed 000's knife edges), the ground 1 m below"),
  FL__REAL(arch_masonry_params, edge_at, 0, 1, 0.5,
           "base=edges: where the ridge meets the springer's base, 0 at the intrados corner, 1 "
           "at the extrados corner"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

/* Closes the gaps of the data: stone i's vertices 0,1 (intrados) and 4,5 (extrados) form its
 * face towards stone i-1, vertices 2,3 and 6,7 its face towards stone i+1; neighbouring faces
 * are parallel (to 1e-5 deg) and 0.12-0.14 m apart. Each face moves by half the gap along the
 * joint's normal (in the x-y plane of the data), which keeps every face of the hexahedron
 * planar. V is (ns x 8 x 3), modified in place. */
static int arch_masonry_stones(const arch_masonry_params *p, fl_world *w, int ns, const double *V);


static void arch_close_gaps(int ns, double *V) {
  for (int i = 0; i + 1 < ns; i++) {
    double *a = V + 24 * i, *b = V + 24 * (i + 1);
    double d[2] = {a[3 * 6] - a[3 * 2], a[3 * 6 + 1] - a[3 * 2 + 1]}, L = hypot(d[0], d[1]);
    double n[2] = {-d[1] / L, d[0] / L}, ca[2] = {0, 0}, cb[2] = {0, 0};
    for (int k = 0; k < 8; k++) {
      for (int c = 0; c < 2; c++) {
        ca[c] += a[3 * k + c] / 8;
        cb[c] += b[3 * k + c] / 8;
      }
    }
    if (n[0] * (cb[0] - ca[0]) + n[1] * (cb[1] - ca[1]) < 0) {
      n[0] = -n[0];
      n[1] = -n[1];
    }
    double g = n[0] * (b[0] - a[3 * 2]) + n[1] * (b[1] - a[3 * 2 + 1]);
    static const int top[4] = {2, 3, 6, 7}, bottom[4] = {0, 1, 4, 5};
    for (int k = 0; k < 4; k++) {
      for (int c = 0; c < 2; c++) {
        a[3 * top[k] + c] += 0.5 * g * n[c];
        b[3 * bottom[k] + c] -= 0.5 * g * n[c];
      }
    }
  }
}


/* The stones' vertices are y-up in the data; they are turned to z-up by (x, y, z) -> (x, -z, y)
 * and the ground plane is put at the lowest vertex (z = 0.1 m), so the springings rest on it
 * (base=flat, the data's scene), or 1 m below it with the springings on knife edges
 * (base=edges, seed 000's "base balanced on sharp edges"). */
static int arch_masonry_build(const void *pp, fl_world *w) {
  const arch_masonry_params *p = pp;
  int ns = p->stones == 0 ? fl__arch25_nstones : fl__arch101_nstones;
  const double *V0 = p->stones == 0 ? fl__arch25_vert : fl__arch101_vert;
  double *V = fl_malloc((size_t)(24 * ns) * sizeof(double));
  if (!V) return fl_seterr(FL_ERR_NOMEM, "arch_masonry: out of memory");
  memcpy(V, V0, (size_t)(24 * ns) * sizeof(double));
  if (p->gaps == 0) arch_close_gaps(ns, V);
  int rc = arch_masonry_stones(p, w, ns, V);
  fl_free(V);
  return rc;
}


/* Two fixed triangular prisms, 1 m tall, their ridges along the arch's depth at height zmin,
 * under the springers (stones 1 and ns) at edge_at across each springer's base (the arch is
 * centred on x = 0, so the intrados corner is the base corner nearer it). A ridge is 0.95 of
 * the springer's depth long, so that its end points lie on a deformable springer's face. */
static int arch_knife_edges(const arch_masonry_params *p, fl_world *w, int mat, int ns,
                            const double *V, double zmin) {
  for (int f = 0; f < 2; f++) {
    const double *s = V + 24 * (f == 0 ? 0 : ns - 1);
    double xin = NAN, xout = NAN, depth = 0; /* base corners at zmin: intrados and extrados */
    for (int k = 0; k < 8; k++) {
      const double *v = s + 3 * k;
      depth = fmax(depth, fabs(v[2]));
      if (fabs(v[1] - zmin) > 1e-6) continue;
      if (isnan(xin) || fabs(v[0]) < fabs(xin)) xin = v[0];
      if (isnan(xout) || fabs(v[0]) > fabs(xout)) xout = v[0];
    }
    if (isnan(xin)) return fl_seterr(FL_ERR_INVAL, "arch_masonry: springer has no base face");
    double xr = xin + p->edge_at * (xout - xin), Y = 0.95 * depth, pts[18];
    const double off[3][2] = {{0, 0}, {-1, -1}, {1, -1}};
    for (int k = 0; k < 6; k++) {
      pts[3 * k] = xr + off[k % 3][0];
      pts[3 * k + 1] = k < 3 ? -Y : Y;
      pts[3 * k + 2] = zmin + off[k % 3][1];
    }
    fl_shape sh;
    FL_TRY(fl_shape_make_convex(pts, 6, &sh));
    fl_body_desc d = fl__desc(f == 0 ? "edge1" : "edge2", FL_BODY_FIXED, mat);
    FL_TRY(fl__add_shape(w, &d, &sh));
  }
  return FL_OK;
}


static int arch_masonry_stones(const arch_masonry_params *p, fl_world *w, int ns, const double *V) {
  int mat = fl_world_add_material(w, "stone", p->mu, INFINITY, 0);
  FL_TRY(mat);
  double zmin = INFINITY;
  for (int k = 0; k < 8 * ns; k++) zmin = fmin(zmin, V[3 * k + 1]);
  FL_TRY(fl__add_ground(w, mat, p->base == 1 ? zmin - 1.0 : zmin));
  if (p->base == 1) FL_TRY(arch_knife_edges(p, w, mat, ns, V, zmin));
  if (p->kind == 1) return fl__arch_fem_stones(w, mat, ns, V, p->density, p->E, p->nu, p->beta,
                                               p->cells);
  fl_int ids[101];
  for (int i = 0; i < ns; i++) {
    double pts[24];
    for (int k = 0; k < 8; k++) {
      const double *v = V + 3 * (8 * i + k);
      pts[3 * k] = v[0];
      pts[3 * k + 1] = -v[2];
      pts[3 * k + 2] = v[1];
    }
    fl_shape sh;
    FL_TRY(fl_shape_make_convex(pts, 8, &sh));
    char name[32];
    snprintf(name, sizeof name, "stone%d", i + 1);
    fl_body_desc d = fl__desc(name, FL_BODY_DYNAMIC, mat);
    d.density = p->density;
    ids[i] = fl__add_shape(w, &d, &sh);
    FL_TRY(ids[i]);
  }
  FL_TRY(fl_world_add_group(w, FL_OBS_ARCH, ns, ids, NULL, 0));
  return FL_OK;
}


//---- registry ----

#define SCENE(nm, summ, chk)                                                                  \
  static const fl_scene_desc nm##_scene = {#nm, summ, chk, sizeof(nm##_params), nm##_opts,   \
                                           nm##_build}

SCENE(ball_slope, "rolling ball on a slope (seed 003 Fig. 3)",
      "slope_ux within 1 % of the closed form (slope_ux_ref) at the end");
SCENE(heavy_stack, "five boxes of mass ratio 8 per level, 4096:1 overall (thesis Fig. 20)",
      "stands 10 s with stack_pen below 1 mm (NSN-PCR); PGS at 20 sweeps does not");
SCENE(arch_parabolic, "20 voussoirs between two parabolas, 15-110 kg (thesis Fig. 20)",
      "every voussoir within 1 mm of its start for 10 s (NSN-PCR)");
SCENE(arch_masonry, "25-stone catenary arch of Ferguson et al. 2021 (seed 000 Fig. 5)",
      "on knife edges (base=edges, seed 000's setup): stands at mu = 1 (arch_stands = 1 "
      "throughout), collapses at mu = 0.2; on the data's flat plane (default) stands down to "
      "mu 0.11");

static const fl_scene_desc *const scenes[] = {
  &ball_slope_scene, &heavy_stack_scene, &arch_parabolic_scene, &arch_masonry_scene,
  &fl__pendulum_mass_ratio_scene, &fl__pendulum_stiffness_ratio_scene, &fl__chain_scene,
  &fl__cylinder_stack_scene, &fl__capsule_lean_scene, &fl__table_pile_scene,
  &fl__granular_scene, &fl__spinning_coin_scene, &fl__elastic_cube_scene,
  &fl__cylinder_press_scene, &fl__box_pile_scene, NULL
};


const fl_scene_desc *const *fl_scene_list(void) { return scenes; }


const fl_scene_desc *fl_scene_find(const char *name) {
  for (int i = 0; scenes[i]; i++) {
    if (strcmp(scenes[i]->name, name) == 0) return scenes[i];
  }
  return NULL;
}


void fl_scene_help(const fl_scene_desc *d, FILE *f) {
  fprintf(f, "%s: %s\n  check: %s\n", d->name, d->summary, d->check);
  fl_options_help(d->params, d->name, f);
}


int fl_scene_create(const char *name, int nset, const char *const *set, fl_world **out) {
  *out = NULL;
  const fl_scene_desc *d = fl_scene_find(name);
  if (!d) {
    char list[512] = "";
    for (int i = 0; scenes[i]; i++) {
      strncat(list, " ", sizeof list - strlen(list) - 1);
      strncat(list, scenes[i]->name, sizeof list - strlen(list) - 1);
    }
    return fl_seterr(FL_ERR_UNKNOWN_PROBLEM, "unknown scene '%s'; expected one of:%s", name, list);
  }
  // parameters: defaults, then the overrides
  unsigned char params[1024];
  if (d->params_size > sizeof params)
    return fl_seterr(FL_ERR_STATE, "scene %s: parameter struct too large", name);
  memset(params, 0, sizeof params);
  fl_options_defaults(d->params, params);
  for (int i = 0; i < nset; i++) {
    const char *eq = strchr(set[i], '=');
    if (!eq)
      return fl_seterr(FL_ERR_OPTION_TYPE, "scene %s: '%s': expected key=value", name, set[i]);
    char key[128];
    size_t kl = (size_t)(eq - set[i]);
    if (kl >= sizeof key) kl = sizeof key - 1;
    memcpy(key, set[i], kl);
    key[kl] = 0;
    FL_TRY(fl_options_set(d->params, params, name, fl_scene_key(key, name), eq + 1));
  }
  fl_world *w = NULL;
  FL_TRY(fl_world_create(&w));
  const fl_scene_common *c = (const fl_scene_common *)params;
  snprintf(w->name, sizeof w->name, "%s", name);
  w->dt = c->dt;
  w->duration = c->duration;
  w->margin = c->margin;
  w->speculative = c->speculative;
  int rc = d->build(params, w);
  if (rc < 0) {
    fl_world_free(w);
    return rc;
  }
  fl_world_reset_start(w);
  *out = w;
  return FL_OK;
}

// SPDX-License-Identifier: Apache-2.0
/* verify_cases.c: the cases of `frictionlab verify` (verify_run.c runs them) as one table: a row is
 * a case's name, its scene built from the row's parameters (or a canonical scene), its judge
 * (verify_judge.c), dt and durations, and the bodies the judge reads. The scenes are scene
 * files (docs/scene-format.md) built as cJSON trees: the text verify parses and writes into
 * its results folder (cases/NAME.json) is that tree printed. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../core/fl_core.h"
#include "fl_verify.h"
#include "verify_impl.h"

//---- building a scene file ----

/* a number in the fewest digits that read back as the same double (cJSON's own writer may
 * drop the last bit) */
static cJSON *num(double x) {
  char b[32];
  for (int d = 1; d <= 17; d++) {
    snprintf(b, sizeof b, "%.*g", d, x);
    if (strtod(b, NULL) == x) break;
  }
  return cJSON_CreateRaw(b);
}


static cJSON *vecn(const double *x, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, num(x[i]));
  return a;
}


/* an object of (key, value) pairs, ended by a NULL key */
static cJSON *obj(const char *key, ...) {
  cJSON *o = cJSON_CreateObject();
  va_list ap;
  va_start(ap, key);
  for (const char *k = key; k; k = va_arg(ap, const char *))
    cJSON_AddItemToObject(o, k, va_arg(ap, cJSON *));
  va_end(ap);
  return o;
}

/* V(x, y, z): an array of numbers; O(key, value, ...): an object; S("s"): a string */
#define V(...)                                                                                     \
  vecn((const double[]){__VA_ARGS__}, (int)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double)))
#define O(...) obj(__VA_ARGS__, (const char *)NULL)
#define S(s) cJSON_CreateString(s)
static void push(cJSON *a, cJSON *item) { cJSON_AddItemToArray(a, item); }

static const double DOWN[3] = {0, 0, -G};


/* the scene's head: format, name, dt, duration, gravity g */
static cJSON *head(const vcase *c, double dur, const double g[3]) {
  return O("format", S("frictionlab-scene"), "name", S(c->name), "dt", num(c->dt), "duration",
           num(dur), "gravity", V(g[0], g[1], g[2]));
}


/* one material "m" of friction mu; returns the bodies' list that follows it */
static cJSON *mu_bodies(cJSON *s, double mu) {
  push(cJSON_AddArrayToObject(s, "materials"), O("name", S("m"), "mu", num(mu)));
  return cJSON_AddArrayToObject(s, "bodies");
}


/* a numbered name, "b3" */
static cJSON *numbered(const char *prefix, int k) {
  char name[16];
  snprintf(name, sizeof name, "%s%d", prefix, k);
  return S(name);
}


/* the fixed ground plane z = 0, of material mat (NULL: the default) */
static cJSON *ground(const char *mat) {
  cJSON *b = O("name", S("ground"), "kind", S("fixed"), "shape", O("type", S("plane")));
  if (mat) cJSON_AddItemToObject(b, "material", S(mat));
  return b;
}


/* a box shape of half sizes hx, hy, hz (m) */
static cJSON *box(double hx, double hy, double hz) {
  return O("type", S("box"), "size", V(hx, hy, hz));
}


/* p: mu, v0 (box 0.2 x 0.2 x 0.1 m, 1 kg, sliding along x) */
static cJSON *scene_slide(const vcase *c, double dur) {
  cJSON *s = head(c, dur, DOWN), *b = mu_bodies(s, c->p[0]);
  push(b, ground("m"));
  push(b, O("name", S("box"), "material", S("m"), "shape", box(0.1, 0.1, 0.05), "mass", num(1),
            "position", V(0, 0, 0.05), "velocity", V(c->p[1], 0, 0)));
  return s;
}


/* p: mu, theta (rad), mode (0 gravity tilted, 1 plane and box tilted) */
static cJSON *scene_slope(const vcase *c, double dur) {
  double th = c->p[1], qw = cos(th / 2), qy = sin(th / 2), h = 0.05;
  const double gt[3] = {G * sin(th), 0, -G * cos(th)};
  cJSON *s = head(c, dur, c->p[2] == 0 ? gt : DOWN), *b = mu_bodies(s, c->p[0]), *gr = ground("m");
  cJSON *bx = O("name", S("box"), "material", S("m"), "shape", box(0.1, 0.1, 0.05), "mass", num(1));
  push(b, gr);
  push(b, bx);
  if (c->p[2] == 0) {
    cJSON_AddItemToObject(bx, "position", V(0, 0, h));
    return s;
  }
  // rotation by theta about y: normal (sin, 0, cos), downhill (cos, 0, -sin)
  cJSON_AddItemToObject(gr, "orientation", V(qw, 0, qy, 0));
  cJSON_AddItemToObject(bx, "position", V(h * sin(th), 0, h * cos(th)));
  cJSON_AddItemToObject(bx, "orientation", V(qw, 0, qy, 0));
  return s;
}


/* p: mu, t_on (s): force along x ramped from 0 at t = 0 through mu m g at t_on, 2 mu m g at
 * 2 t_on */
static cJSON *scene_drag(const vcase *c, double dur) {
  cJSON *s = head(c, dur, DOWN), *b = mu_bodies(s, c->p[0]);
  push(b, ground("m"));
  push(b, O("name", S("box"), "material", S("m"), "shape", box(0.1, 0.1, 0.05), "mass", num(1),
            "position", V(0, 0, 0.05)));
  push(cJSON_AddArrayToObject(s, "forces"),
       O("body", S("box"), "force", V(2 * c->p[0] * G, 0, 0), "ramp", V(0, 2 * c->p[1])));
  return s;
}


/* p: mu, v0, theta (rad; gravity tilted), R: sphere of 1 kg */
static cJSON *scene_sphere(const vcase *c, double dur) {
  double th = c->p[2], R = c->p[3];
  const double g[3] = {G * sin(th), 0, -G * cos(th)};
  cJSON *s = head(c, dur, g), *b = mu_bodies(s, c->p[0]);
  push(b, ground("m"));
  push(b, O("name", S("ball"), "material", S("m"), "shape", O("type", S("sphere"), "size", V(R)),
            "mass", num(1), "position", V(0, 0, R), "velocity", V(c->p[1], 0, 0)));
  return s;
}


/* p: mu, v0, theta (rad; gravity tilted), R, shape (0 sphere, 1 cylinder of half length R on
 * its side, axis along y; 2 the cylinder on a fixed box's top face), 1 kg; starts rolling at
 * v0 (w_y = v0/R) */
static cJSON *scene_roll(const vcase *c, double dur) {
  double th = c->p[2], R = c->p[3], v0 = c->p[1];
  const double g[3] = {G * sin(th), 0, -G * cos(th)};
  cJSON *s = head(c, dur, g), *b = mu_bodies(s, c->p[0]), *bd;
  if (c->p[4] == 2) // a fixed box whose top face is the plane z = 0, 10 m long
    push(b, O("name", S("ground"), "kind", S("fixed"), "material", S("m"), "shape", box(5, 1, 0.5),
              "position", V(0, 0, -0.5)));
  else
    push(b, ground("m"));
  if (c->p[4] == 0)
    bd = O("name", S("body"), "material", S("m"), "shape", O("type", S("sphere"), "size", V(R)),
           "mass", num(1));
  else // body z (the axis) turned onto world y: -90 deg about x
    bd = O("name", S("body"), "material", S("m"), "shape",
           O("type", S("cylinder"), "size", V(R, R)), "mass", num(1), "orientation",
           V(sqrt(0.5), -sqrt(0.5), 0, 0));
  cJSON_AddItemToObject(bd, "position", V(0, 0, R));
  cJSON_AddItemToObject(bd, "velocity", V(v0, 0, 0));
  cJSON_AddItemToObject(bd, "angular_velocity", V(0, v0 / R, 0));
  push(b, bd);
  return s;
}


/* p: mu, omega (rad/s), r/r_c, kind: a 2 cm cube co-rotating at r on a table turning at
 * omega about z. Kind 0: the table a prescribed plane. Kind 1 (the driven turntable, issue
 * 50): a 1 m square table, 0.1 m thick, 20 kg, its top at z = 0, on a revolute joint about z
 * whose drive holds omega (unbounded torque: one bilateral row, with the joint's five),
 * spinning at omega from the start. */
static cJSON *scene_turntable(const vcase *c, double dur) {
  double mu = c->p[0], om = c->p[1], r = c->p[2] * mu * G / (om * om), h = 0.01;
  cJSON *s = head(c, dur, DOWN), *b = mu_bodies(s, mu);
  if (c->p[3] == 0)
    push(b, O("name", S("table"), "kind", S("prescribed"), "material", S("m"), "shape",
              O("type", S("plane")), "angular_velocity", V(0, 0, om)));
  else
    push(b, O("name", S("table"), "material", S("m"), "shape", box(0.5, 0.5, 0.05), "mass", num(20),
              "position", V(0, 0, -0.05), "angular_velocity", V(0, 0, om)));
  push(b, O("name", S("block"), "material", S("m"), "shape", box(h, h, h), "mass", num(0.1),
            "position", V(r, 0, h), "velocity", V(0, om * r, 0), "angular_velocity", V(0, 0, om)));
  if (c->p[3] == 1)
    push(cJSON_AddArrayToObject(s, "joints"),
         O("type", S("revolute"), "body_a", cJSON_CreateNull(), "body_b", S("table"), "anchor_a",
           V(0, 0, -0.05), "anchor_b", V(0, 0, 0), "axis", V(0, 0, 1), "drive",
           O("velocity", num(om))));
  return s;
}


/* p: mu0 (ground), mu1 (between), m1 (lower), m2 (upper), F (N, on the lower block along x):
 * a 1.2 x 0.4 x 0.1 m lower block on the plane, a 0.2 x 0.2 x 0.1 m upper block on it 0.45 m
 * ahead of its centre (the lower block runs ahead: 0.95 m of slip before the upper block's
 * rear edge reaches the lower one's) */
static cJSON *scene_blocks(const vcase *c, double dur) {
  cJSON *s = head(c, dur, DOWN), *m = cJSON_AddArrayToObject(s, "materials");
  cJSON *pr = cJSON_AddArrayToObject(s, "pairs"), *b = cJSON_AddArrayToObject(s, "bodies");
  const char *names[3] = {"g", "lo", "up"};
  for (int k = 0; k < 3; k++) push(m, O("name", S(names[k]), "mu", num(0.5)));
  const char *pair[3][2] = {{"g", "lo"}, {"lo", "up"}, {"g", "up"}};
  for (int k = 0; k < 3; k++)
    push(pr, O("materials", cJSON_CreateStringArray(pair[k], 2), "mu", num(c->p[k ? 1 : 0])));
  push(b, ground("g"));
  push(b, O("name", S("lower"), "material", S("lo"), "shape", box(0.6, 0.2, 0.05), "mass",
            num(c->p[2]), "position", V(0, 0, 0.05)));
  push(b, O("name", S("upper"), "material", S("up"), "shape", box(0.1, 0.1, 0.05), "mass",
            num(c->p[3]), "position", V(0.45, 0, 0.15)));
  push(cJSON_AddArrayToObject(s, "forces"), O("body", S("lower"), "force", V(c->p[4], 0, 0)));
  return s;
}


/* p: mu, Fmax/(m g), T (s), h (m), half width, half height: a 1 kg box of 2 hw x 0.2 x 2 hh m
 * on the plane pushed along x by F(t) = Fmax min(t/T, 1) at height h: the force at the centre
 * of mass and its moment F (h - hh) about y (the pair is that force while the box stands
 * upright; the moment stays world-fixed once it tips) */
static cJSON *scene_tip(const vcase *c, double dur) {
  double F = c->p[1] * G, hh = c->p[5];
  cJSON *s = head(c, dur, DOWN), *b = mu_bodies(s, c->p[0]);
  push(b, ground("m"));
  push(b, O("name", S("box"), "material", S("m"), "shape", box(c->p[4], 0.1, hh), "mass", num(1),
            "position", V(0, 0, hh)));
  push(cJSON_AddArrayToObject(s, "forces"), O("body", S("box"), "force", V(F, 0, 0), "torque",
                                              V(0, F * (c->p[3] - hh), 0), "ramp", V(0, c->p[2])));
  return s;
}


/* p: layout (0: a stack of five 0.2 x 0.2 x 0.1 m boxes; 1: a 3-2-1 pyramid of 0.2 m cubes,
 * 1 cm apart in a row, each upper cube centred over a gap), circumradius (m): 1 kg bodies
 * b1, b2, ... placed exactly touching, at rest, default material (mu 0.5) */
static cJSON *scene_rest(const vcase *c, double dur) {
  cJSON *s = head(c, dur, DOWN), *b = cJSON_AddArrayToObject(s, "bodies");
  push(b, ground(NULL));
  int k = 0;
  if (c->p[0] == 0) {
    for (k = 0; k < 5; k++)
      push(b, O("name", numbered("b", k + 1), "shape", box(0.1, 0.1, 0.05), "mass", num(1),
                "position", V(0, 0, 0.05 + 0.1 * k)));
  } else {
    for (int row = 0; row < 3; row++)
      for (int j = 0; j < 3 - row; j++, k++)
        push(b, O("name", numbered("b", k + 1), "shape", box(0.1, 0.1, 0.1), "mass", num(1),
                  "position", V(0.21 * (j - 0.5 * (2 - row)), 0, 0.1 + 0.2 * row)));
  }
  return s;
}


/* p: mu, v0 (m/s), E (Pa), nu, cells per edge, beta (s): a deformable 0.1 m cube of 1 kg
 * (1000 kg/m^3, the linear model, Rayleigh beta) resting on the rigid plane, every vertex
 * started at v0 along x */
static cJSON *scene_fem_slide(const vcase *c, double dur) {
  double nc = c->p[4];
  cJSON *s = head(c, dur, DOWN), *b = mu_bodies(s, c->p[0]);
  push(b, ground("m"));
  push(b, O("name", S("block"), "kind", S("deformable"), "material", S("m"), "mesh",
            O("type", S("box"), "size", V(0.1, 0.1, 0.1), "cells", V(nc, nc, nc)), "model",
            O("type", S("linear"), "E", num(c->p[2]), "nu", num(c->p[3])), "density", num(1000),
            "damping", O("alpha", num(0), "beta", num(c->p[5])), "position", V(0, 0, 0.05),
            "velocity", V(c->p[1], 0, 0)));
  return s;
}


/* p: heavy mass (kg), gap (m): a 0.2 m cube of 1 kg on the ground, a 0.2 m cube of p0 kg
 * released p1 above it */
static cJSON *scene_heavy(const vcase *c, double dur) {
  cJSON *s = head(c, dur, DOWN), *b = cJSON_AddArrayToObject(s, "bodies");
  push(b, ground(NULL));
  push(b, O("name", S("light"), "shape", box(0.1, 0.1, 0.1), "mass", num(1), "position",
            V(0, 0, 0.1)));
  push(b, O("name", S("heavy"), "shape", box(0.1, 0.1, 0.1), "mass", num(c->p[0]), "position",
            V(0, 0, 0.3 + c->p[1])));
  return s;
}


/* p: stiffness k (N/m), tau_d (s), mass (kg): a 5 cm sphere on the ground */
static cJSON *scene_sink(const vcase *c, double dur) {
  cJSON *s = head(c, dur, DOWN);
  push(cJSON_AddArrayToObject(s, "materials"),
       O("name", S("soft"), "mu", num(0.5), "stiffness", num(c->p[0]), "tau_d", num(c->p[1])));
  cJSON *b = cJSON_AddArrayToObject(s, "bodies");
  push(b, ground(NULL));
  push(b, O("name", S("ball"), "material", S("soft"), "shape",
            O("type", S("sphere"), "size", V(0.05)), "mass", num(c->p[2]), "position",
            V(0, 0, 0.05)));
  return s;
}


/* p: mu, n (odd), mean radius (m), thickness (m), depth (m): a semicircular arch of n
 * voussoirs with radial joints on a fixed plane (the springers' bases on it), 2300 kg/m^3.
 * Vertices are given in the world frame (body position 0: the loader recentres them). */
static cJSON *scene_semiarch(const vcase *c, double dur) {
  int ns = (int)c->p[1];
  double R = c->p[2], t = c->p[3], dp = c->p[4];
  cJSON *s = head(c, dur, DOWN), *b = mu_bodies(s, c->p[0]), *names = cJSON_CreateArray();
  push(b, ground("m"));
  for (int i = 0; i < ns; i++) {
    cJSON *vs = cJSON_CreateArray();
    for (int k = 0; k < 8; k++) {
      // joints at angles i pi/ns and (i+1) pi/ns from the +x springing; the springers' joints
      // (0 and pi) are horizontal, on the plane
      double th = (i + (k & 1)) * PI / ns, r = R + ((k & 2) ? 0.5 : -0.5) * t;
      double x = r * cos(th), z = r * sin(th);
      if (i + (k & 1) == 0 || i + (k & 1) == ns) z = 0; /* exact, not 1e-17 */
      push(vs, V(x, (k & 4) ? 0.5 * dp : -0.5 * dp, z));
    }
    push(b, O("name", numbered("v", i + 1), "material", S("m"), "density", num(2300), "shape",
              O("type", S("convex"), "vertices", vs)));
    push(names, numbered("v", i + 1));
  }
  push(cJSON_AddArrayToObject(s, "observe"), O("kind", S("arch"), "bodies", names));
  return s;
}


char *fl__verify_scene_text(const vcase *c, double duration) {
  if (!c->scene) return NULL;
  cJSON *s = c->scene(c, duration);
  char *txt = s ? cJSON_Print(s) : NULL;
  size_t n = txt ? strlen(txt) : 0;
  char *out = txt ? fl_malloc(n + 2) : NULL;
  if (out) {
    memcpy(out, txt, n);
    memcpy(out + n, "\n", 2); /* a text file ends with a newline */
  } else {
    fl_seterr(FL_ERR_NOMEM, "verify: out of memory building case %s", c->name);
  }
  cJSON_free(txt);
  cJSON_Delete(s);
  return out;
}

//---- the cases ----

/* The friction below which a complete semicircular arch with radial joints has no equilibrium
 * under its own weight, whatever its thickness (Cocchetti and Rizzi 2020, Table 3: mu_ms =
 * 0.309215; docs/verify.md derives it) */
#define MU_SLIDE 0.309215
#define DEG (PI / 180)
/* the coin comes to rest below a twentieth of one step's friction deceleration, as
 * fl_coin_simulate */
#define COIN_REST (0.05 * 0.2 * G * 0.001)

/* name, what it shows; scene (from p) or NULL (.canonical), judge, p; quick, dt, full and quick
 * durations (s); the bodies the judge reads; a canonical scene's settings; a tracked
 * observable; a rest speed that ends the run early */
const vcase fl__verify_cases[] = {
  {"slide", "box sliding to rest on a plane: d = v0^2/(2 mu g), t = v0/(mu g)",
   scene_slide, fl__vj_slide, {0.5, 2.0}, 1, 0.01, 1.5, 0.6, .probe = {"box"}},
  {"slope_below_g", "box on a 20 deg slope, mu 0.5 (gravity tilted): sticks",
   scene_slope, fl__vj_slope, {0.5, 20 * DEG, 0}, 1, 0.01, 2.0, 0.5, .probe = {"box"}},
  {"slope_at_g", "box at its friction angle atan(mu) (gravity tilted): stays",
   scene_slope, fl__vj_slope, {0.5, 0.46364760900080609, 0}, 1, 0.01, 2.0, 0.5, .probe = {"box"}},
  {"slope_above_g", "box on a 35 deg slope (gravity tilted): a = g (sin - mu cos)",
   scene_slope, fl__vj_slope, {0.5, 35 * DEG, 0}, 1, 0.01, 2.0, 0.5, .probe = {"box"}},
  {"slope_below_tilt", "box on a 20 deg slope (plane and box tilted): sticks",
   scene_slope, fl__vj_slope, {0.5, 20 * DEG, 1}, 1, 0.01, 2.0, 0.5, .probe = {"box"}},
  {"slope_at_tilt", "box at its friction angle (plane and box tilted): stays",
   scene_slope, fl__vj_slope, {0.5, 0.46364760900080609, 1}, 1, 0.01, 2.0, 0.5, .probe = {"box"}},
  {"slope_above_tilt", "box on a 35 deg slope (plane and box tilted): a = g (sin - mu cos)",
   scene_slope, fl__vj_slope, {0.5, 35 * DEG, 1}, 1, 0.01, 2.0, 0.5, .probe = {"box"}},
  {"drag", "box dragged by F = mu m g t/t_on, t_on = 0.505 s: onset, distance, speed",
   scene_drag, fl__vj_drag, {0.5, 0.505}, 1, 0.01, 1.5, 0.8, .probe = {"box"}},
  {"sphere_slide", "sphere released sliding: rolls at 2 v0/(7 mu g), speed 5 v0/7",
   scene_sphere, fl__vj_sphere_slide, {0.2, 3.0, 0, 0.1}, 1, 0.01, 1.5, 0.6, .probe = {"ball"}},
  {"sphere_roll", "sphere rolling down a 30 deg slope, mu 0.5: a = 5/7 g sin",
   scene_sphere, fl__vj_sphere_roll, {0.5, 0, 30 * DEG, 0.1}, 1, 0.01, 2.0, 0.5, .probe = {"ball"}},
  {"roll_cyl", "cylinder on its side rolling down a 40 deg slope, mu 0.5: a = 2/3 g sin",
   scene_roll, fl__vj_roll, {0.5, 0, 40 * DEG, 0.1, 1}, 1, 0.01, 2.0, 0.5, .probe = {"body"}},
  {"roll_cyl_slip", "the cylinder at mu 0.15 < tan(40 deg)/3: slips, a = g (sin - mu cos)",
   scene_roll, fl__vj_roll, {0.15, 0, 40 * DEG, 0.1, 1}, 1, 0.01, 2.0, 0.5, .probe = {"body"}},
  {"roll_cyl_flat", "cylinder rolling at 1 m/s on flat ground: no hop, energy kept",
   scene_roll, fl__vj_roll, {0.5, 1.0, 0, 0.1, 1}, 1, 0.01, 2.0, 0.5, .probe = {"body"}},
  {"roll_cyl_box", "the cylinder rolling at 1 m/s on a box's face (full suite only)",
   scene_roll, fl__vj_roll, {0.5, 1.0, 0, 0.1, 2}, 0, 0.01, 2.0, 0.5, .probe = {"body"}},
  {"roll_sphere_slip", "sphere at mu 0.15 < 2/7 tan(40 deg): slips, a = g (sin - mu cos)",
   scene_roll, fl__vj_roll, {0.15, 0, 40 * DEG, 0.1, 0}, 1, 0.01, 2.0, 0.5, .probe = {"body"}},
  {"turntable_stick", "block at 0.9 r_c on a turntable at 2 pi rad/s: sticks",
   scene_turntable, fl__vj_turntable, {0.5, 2 * PI, 0.9, 0}, 1, 0.001, 2.0, 0.4,
   .probe = {"block"}},
  {"turntable_slip", "block at 1.1 r_c (r_c = mu g/omega^2): slips outward",
   scene_turntable, fl__vj_turntable, {0.5, 2 * PI, 1.1, 0}, 1, 0.001, 2.0, 0.4,
   .probe = {"block"}},
  {"turntable_driven", "block at 0.95 r_c on a table driven at 2 pi rad/s by a revolute joint: "
   "releases at the recursion's step (full suite only)",
   scene_turntable, fl__vj_turntable_driven, {0.5, 2 * PI, 0.95, 1}, 0, 0.001, 3.0, 3.0,
   .probe = {"block", "table"}},
  {"turntable_coarse", "the driven turntable at dt 0.01 (full suite only)",
   scene_turntable, fl__vj_turntable_driven, {0.5, 2 * PI, 0.95, 1}, 0, 0.01, 1.0, 1.0,
   .probe = {"block", "table"}},
  {"block_on_block_stick", "block on a block pulled by 9 N (mu 0.1 below, 0.3 between): moves "
   "together, a = (F - mu0 (m1 + m2) g)/(m1 + m2)",
   scene_blocks, fl__vj_blocks, {0.1, 0.3, 2, 1, 9}, 1, 0.01, 1.0, 0.4,
   .probe = {"lower", "upper"}},
  {"block_on_block_slip", "the same pulled by 14 N: the upper block slips, a2 = mu1 g, a1 = (F - "
   "mu1 m2 g - mu0 (m1 + m2) g)/m1",
   scene_blocks, fl__vj_blocks, {0.1, 0.3, 2, 1, 14}, 1, 0.01, 1.0, 0.4,
   .probe = {"lower", "upper"}},
  {"tip_vs_slide_slides", "0.2 x 0.2 x 0.4 m box pushed at its top by F ramped to 0.3 m g, mu 0.1 "
   "< (w/2)/h = 0.25: slides upright",
   scene_tip, fl__vj_tip, {0.1, 0.3, 1.0, 0.4, 0.1, 0.2}, 1, 0.01, 1.0, 0.6, .probe = {"box"}},
  {"tip_vs_slide_tips", "the same box, mu 0.5 > 0.25, F ramped to 0.35 m g: tips about its front "
   "edge at F h = m g w/2, no slip",
   scene_tip, fl__vj_tip, {0.5, 0.35, 1.0, 0.4, 0.1, 0.2}, 1, 0.01, 1.2, 1.0, .probe = {"box"}},
  {"stack_rest", "five 0.1 m thick boxes stacked at rest: no body moves 0.1 mm or 1 mm/s",
   scene_rest, fl__vj_rest, {0, 0.15}, 1, 0.01, 2.0, 0.5, .probe = {"b1", "b2", "b3", "b4", "b5"}},
  {"pyramid_rest", "a 3-2-1 pyramid of 0.2 m cubes at rest: no body moves 0.1 mm or 1 mm/s",
   scene_rest, fl__vj_rest, {1, 0.17320508075688773}, 1, 0.01, 2.0, 0.5,
   .probe = {"b1", "b2", "b3", "b4", "b5", "b6"}},
  {"fem_slide", "deformable 0.1 m cube (FEM, E 1e6 Pa) sliding to rest from 2 m/s, mu 0.5: its "
   "centre of mass as the rigid slide (full suite only)",
   scene_fem_slide, fl__vj_fem_slide, {0.5, 2.0, 1e6, 0.3, 2, 0.01}, 0, 0.01, 1.0, 0.6,
   .probe = {"block"}},
  {"heavy_on_light", "1000 kg cube dropped 1 cm onto a 1 kg cube: rests, no tunnelling",
   scene_heavy, fl__vj_heavy, {1000, 0.01}, 1, 0.01, 2.0, 0.5, .probe = {"light", "heavy"}},
  {"compliant_sink", "1 kg sphere on a contact of k = 1e5 N/m: sinks m g/k",
   scene_sink, fl__vj_sink, {1e5, 0.005, 1.0}, 1, 0.001, 0.5, 0.25, .probe = {"ball"}},
  {"coin_eps", "spinning coin from 1 m/s, eps0 = 1, default patch: the published disk's eps and "
   "stop time (full suite only)",
   NULL, fl__vj_coin, {0.01213, 0.2, 1, 1}, 0, 0.001, 0.8, 0.8, .probe = {"coin"},
   .canonical = "spinning_coin", .canonical_set = "eps0=1,speed=1", .rest_R = 0.01213,
   .rest_speed = COIN_REST},
  {"coin_fan", "the same coin on the seed's 152-triangle fan (fan=152, the default before issue "
   "50): misses both (full suite only)",
   NULL, fl__vj_coin, {0.01213, 0.2, 1, 1}, 0, 0.001, 0.8, 0.8, .probe = {"coin"},
   .canonical = "spinning_coin", .canonical_set = "eps0=1,speed=1,fan=152", .rest_R = 0.01213,
   .rest_speed = COIN_REST},
  {"arch_stand", "25-stone arch on knife edges, mu 1.0: stands, no stone moves 1 % of its size "
   "(full suite)",
   NULL, fl__vj_arch_stand, {0}, 0, 0.04, 2.0, 2.0, .probe = {NULL}, .canonical = "arch_masonry",
   .canonical_set = "base=edges,mu=1", .track = "arch_disp_rel_max"},
  {"arch_fall", "the same arch at mu 0.2: falls, a stone moves over 5 % of its size in 2 s (full "
   "suite)",
   NULL, fl__vj_arch_fall, {0}, 0, 0.04, 2.0, 2.0, .probe = {NULL}, .canonical = "arch_masonry",
   .canonical_set = "base=edges,mu=0.2", .track = "arch_disp_rel_max"},
  {"hertz_line", "plane-strain FEM cylinder (12 rings) pressed by 4833 N/m: Hertz approach (full "
   "suite)",
   NULL, fl__vj_hertz, {4833, 2.8e6, 0.3, 0.2}, 0, 0.01, 0.8, 0.8, .probe = {NULL},
   .canonical = "cylinder_press",
   .canonical_set = "rings=12,force=4833,model=linear,E=2.8e6,nu=0.3,ramp=0.3,beta=0.05,dt=0.01",
   .track = "press_approach"},
  {"semiarch_stand", "semicircular arch, 25 voussoirs, t/R 0.3, at 1.2 mu_s (mu_s = 0.309215): "
   "stands (full suite)",
   scene_semiarch, fl__vj_arch_stand, {1.2 * MU_SLIDE, 25, 1.0, 0.3, 0.3}, 0, 0.02, 2.0, 2.0,
   .probe = {NULL, NULL}, .track = "arch_disp_rel_max"},
  {"semiarch_fall", "the same arch at 0.8 mu_s: no equilibrium, falls (full suite)",
   scene_semiarch, fl__vj_arch_fall, {0.8 * MU_SLIDE, 25, 1.0, 0.3, 0.3}, 0, 0.02, 2.0, 2.0,
   .probe = {NULL, NULL}, .track = "arch_disp_rel_max"},
  {"cube_hang", "zong-fig6's FEM cube held by friction between panels pushed with 10 N: forces 10 "
   "N and m g/2",
   NULL, fl__vj_cube_hang, {10, 0.4, 0.1, 1e5, 0.4}, 1, 0.01, 0.5, 0.3, .probe = {NULL},
   .canonical = "elastic_cube", .canonical_set = "dt=0.01", .quick_set = "cells=2"},
  {"cube_compress", "the same cube, frictionless, no gravity: e_x = F/(E a^2), e_y = e_z = nu e_x",
   NULL, fl__vj_cube_compress, {10, 0.4, 0.1, 1e5, 0.4}, 1, 0.01, 0.5, 0.3, .probe = {NULL},
   .canonical = "elastic_cube", .canonical_set = "dt=0.01,mu=0,gravity=0", .quick_set = "cells=2"},
};
const int fl__verify_ncases = (int)(sizeof fl__verify_cases / sizeof fl__verify_cases[0]);
_Static_assert(sizeof fl__verify_cases / sizeof fl__verify_cases[0] <= FL_VERIFY_MAXCASES,
               "FL_VERIFY_MAXCASES holds every case");

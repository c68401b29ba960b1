// SPDX-License-Identifier: Apache-2.0
/* scene_fem.c: canonical scenes with deformable bodies.
 *
 * elastic_cube (seed 003 Fig. 6, with FEM instead of MPM): an elastic cube of edge 0.1 m and
 * mass 0.4 kg (E 1e5 Pa, nu 0.4) hangs between two rigid panels, each pushed against it with
 * 10 N along x and free to slide along x only (a prismatic joint to the world takes the rest).
 * No ground: friction (mu 0.8) holds the cube. At steady state each panel carries a normal
 * force of 10 N and a vertical friction force of m g / 2 = 1.962 N (the observables
 * left_fx/right_fx and left_fz/right_fz, the contact force on each panel).
 */
#include <math.h>
#include <string.h>

#include "fl_fem.h"
#include "scenes_impl.h"

typedef struct elastic_cube_params {
  fl_scene_common c;
  double edge, mass, E, nu, mu, force;
  int cells, model, solve;
  double beta, panel_mass, stiffness, gravity;
} elastic_cube_params;

static const fl_option_desc elastic_cube_opts[] = {
  FL__COMMON(elastic_cube_params, 1e-3, 0.5, 1e-3),
  FL__REAL(elastic_cube_params, edge, 1e-4, 1e3, 0.1, "cube edge (m)"),
  FL__REAL(elastic_cube_params, mass, 1e-6, 1e6, 0.4, "cube mass (kg)"),
  FL__REAL(elastic_cube_params, E, 1, 1e12, 1e5, "Young's modulus (Pa)"),
  FL__REAL(elastic_cube_params, nu, 0, 0.49, 0.4, "Poisson ratio"),
  FL__REAL(elastic_cube_params, mu, 0, 100, 0.8, "friction coefficient cube-panel"),
  FL__REAL(elastic_cube_params, force, 0, 1e6, 10, "push on each panel (N)"),
  FL__INT(elastic_cube_params, cells, 1, 64, 4, "cells per edge (6 tets each)"),
  FL__ENUM(elastic_cube_params, model, FL_FEM_MODEL_CHOICES, FL_FEM_COROTATED_LAGGED,
           "constitutive model"),
  FL__ENUM(elastic_cube_params, solve, FL_FEM_SOLVE_CHOICES, FL_FEM_SCHUR,
           "deformable bodies in the problem: full block or Schur complement"),
  FL__REAL(elastic_cube_params, beta, 0, 10, 0.01, "Rayleigh stiffness damping (s)"),
  FL__REAL(elastic_cube_params, panel_mass, 1e-6, 1e6, 0.1, "mass of each panel (kg)"),
  FL__REAL(elastic_cube_params, stiffness, 1e-3, INFINITY, INFINITY,
           "contact stiffness per vertex contact (N/m); inf: rigid"),
  // 0 with mu = 0: a uniaxial compression test (the `cube_compress` case of verify)
  FL__REAL(elastic_cube_params, gravity, 0, 1e3, 9.81, "gravity along -z (m/s^2)"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};


static int elastic_cube_build(const void *pp, fl_world *w) {
  const elastic_cube_params *p = pp;
  w->fem_solve = (fl_fem_solve)p->solve;
  w->gravity[2] = -p->gravity;
  int mat = fl_world_add_material(w, "cube", p->mu, p->stiffness, 0);
  FL_TRY(mat);
  double a = p->edge, size[3] = {a, a, a};
  fl_mesh *mesh = NULL;
  FL_TRY(fl_mesh_box(size, p->cells, p->cells, p->cells, &mesh));
  fl_fem_desc d;
  memset(&d, 0, sizeof d);
  d.name = "cube";
  d.model.model = p->model;
  d.model.E = p->E;
  d.model.nu = p->nu;
  // Mooney-Rivlin with the same small-strain moduli: mu = 2 (c1 + c2), kappa = lambda + 2 mu / 3
  double lmu, llam;
  fl_fem_lame(p->E, p->nu, &lmu, &llam);
  d.model.c1 = 0.25 * lmu;
  d.model.c2 = 0.25 * lmu;
  d.model.kappa = llam + 2 * lmu / 3;
  d.density = p->mass / (a * a * a);
  d.beta = p->beta;
  d.material = mat;
  int k = fl_world_add_fem(w, &d, &mesh);
  FL_TRY(k);
  fl_fem_mesh_src *src = &w->fem[k]->src;
  snprintf(src->type, sizeof src->type, "box");
  memcpy(src->size, size, sizeof size);
  src->n[0] = src->n[1] = src->n[2] = p->cells;
  // panels: thin boxes sliding along x, pushed towards the cube
  double half[3] = {0.05 * a, 0.75 * a, 0.75 * a};
  fl_int ids[2];
  for (int s = 0; s < 2; s++) {
    double sign = s == 0 ? -1 : 1;
    double pos[3] = {sign * (0.5 * a + half[0]), 0, 0};
    ids[s] = fl__add_box(w, s == 0 ? "left" : "right", mat, half, pos, NULL, 0, p->panel_mass);
    FL_TRY(ids[s]);
    fl_joint j;
    memset(&j, 0, sizeof j);
    j.type = FL_JOINT_PRISMATIC;
    j.body_a = -1;
    j.body_b = ids[s];
    memcpy(j.anchor_a, pos, sizeof pos);
    j.axis[0] = 1;
    FL_TRY(fl_world_add_joint(w, &j));
    fl_force f;
    memset(&f, 0, sizeof f);
    f.body = ids[s];
    f.f[0] = -sign * p->force;
    FL_TRY(fl_world_add_force(w, &f));
  }
  FL_TRY(fl_world_add_group(w, FL_OBS_FORCE, 2, ids, NULL, 0));
  return FL_OK;
}


const fl_scene_desc fl__elastic_cube_scene = {
  "elastic_cube",
  "elastic FEM cube squeezed between two pushed panels (seed 003 Fig. 6, FEM instead of MPM)",
  "left_fx = -force and right_fx = +force, left_fz = right_fz = -m g / 2 within 1 % at the end",
  sizeof(elastic_cube_params), elastic_cube_opts, elastic_cube_build};


/* cylinder_press (seed 000 section VII-A, Fig. 3-4; PROBLEMS.md section 3): a rubber cylinder
 * of radius 0.2 m, axis z, plane strain with two layers of tets along z, between a fixed
 * ground box (below, y < -R) and a top plate (above, y > R) that slides along y on a prismatic
 * joint and is pushed down by a force per unit length ramped from 0 to `force` over `ramp`
 * seconds. Both plates are frictionless and rigid. No gravity. The observables press_force
 * (N/m: the cylinder's push on the top plate per unit length) and press_approach (m: the top
 * plate's travel, the total approach since the ground does not move) give seed 000 Fig. 4.
 *
 * Meshes (`mesh` 1..4): hex-ring disks of 4, 6, 8 and 11 rings, 36 rings^2 tets
 * (576, 1296, 2304, 4356; seed 000's finest has 4151). `rings` overrides the level. */
typedef struct cylinder_press_params {
  fl_scene_common c;
  int mesh, rings, model, solve, pin, volume;
  double radius, length, force, ramp, c1, c2, kappa, E, nu, density, alpha, beta;
  double plate_mass, stiffness;
} cylinder_press_params;

static const int press_rings[4] = {4, 6, 8, 11};

static const fl_option_desc cylinder_press_opts[] = {
  FL__COMMON(cylinder_press_params, 0.01, 500, 1e-3),
  FL__INT(cylinder_press_params, mesh, 1, 4, 1, "mesh level: 4, 6, 8, 11 rings (576 to 4356 tets)"),
  FL__INT(cylinder_press_params, rings, 0, 200, 0, "rings of the disk mesh; 0: from mesh"),
  FL__ENUM(cylinder_press_params, model, FL_FEM_MODEL_CHOICES, FL_FEM_MOONEY_RIVLIN,
           "constitutive model"),
  FL__ENUM(cylinder_press_params, solve, FL_FEM_SOLVE_CHOICES, FL_FEM_SCHUR,
           "deformable bodies in the problem: full block or Schur complement"),
  FL__ENUM(cylinder_press_params, volume, "element|nodal", 1,
           "mooney_rivlin's volume term per tet (element: locks, docs/fem.md) or on nodal "
           "volumes (nodal)"),
  FL__INT(cylinder_press_params, pin, 0, 1, 1,
           "1: the vertical diameter's vertices held at x = 0 (no sliding or rolling)"),
  FL__REAL(cylinder_press_params, radius, 1e-3, 1e3, 0.2, "cylinder radius (m)"),
  FL__REAL(cylinder_press_params, length, 1e-4, 1e3, 0.04,
           "cylinder length along z (m; plane strain: results are per unit length)"),
  FL__REAL(cylinder_press_params, force, 0, 1e10, 1.4e6,
           "final push on the top plate per unit length (N/m)"),
  FL__REAL(cylinder_press_params, ramp, 0, 1e7, 500,
           "time over which the push grows linearly from 0 (s); 0: applied at once"),
  FL__REAL(cylinder_press_params, c1, 0, 1e12, 0.293e6, "Mooney-Rivlin c1 (Pa)"),
  FL__REAL(cylinder_press_params, c2, 0, 1e12, 0.177e6, "Mooney-Rivlin c2 (Pa)"),
  FL__REAL(cylinder_press_params, kappa, 1, 1e13, 1410e6, "Mooney-Rivlin bulk modulus (Pa)"),
  FL__REAL(cylinder_press_params, E, 1, 1e13, 2.8e6,
           "Young's modulus of the linear and corotated models (Pa)"),
  FL__REAL(cylinder_press_params, nu, 0, 0.4999, 0.3,
           "Poisson ratio of the linear and corotated models"),
  FL__REAL(cylinder_press_params, density, 1e-3, 1e6, 1000, "density (kg/m^3)"),
  FL__REAL(cylinder_press_params, alpha, 0, 1e3, 0, "Rayleigh mass damping (1/s)"),
  FL__REAL(cylinder_press_params, beta, 0, 1e3, 0.5, "Rayleigh stiffness damping (s)"),
  FL__REAL(cylinder_press_params, plate_mass, 1e-6, 1e9, 1, "mass of the top plate (kg)"),
  FL__REAL(cylinder_press_params, stiffness, 1e-3, INFINITY, INFINITY,
           "contact stiffness per vertex contact (N/m); inf: rigid"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};


static int cylinder_press_build(const void *pp, fl_world *w) {
  const cylinder_press_params *p = pp;
  w->fem_solve = (fl_fem_solve)p->solve;
  w->gravity[0] = w->gravity[1] = w->gravity[2] = 0;
  int mat = fl_world_add_material(w, "plate", 0.0, p->stiffness, 0);
  FL_TRY(mat);
  int rings = p->rings > 0 ? p->rings : press_rings[p->mesh - 1];
  double R = p->radius, L = p->length;
  fl_mesh *mesh = NULL;
  FL_TRY(fl_mesh_cylinder(R, L, rings, 2, &mesh));
  // the polygon's lowest and highest points (a vertex, or an edge when 6 rings is not
  // a multiple of 4): the plates start there, touching
  double ylo = INFINITY, yhi = -INFINITY;
  for (fl_int i = 0; i < mesh->nvert; i++) {
    if (mesh->X[3 * i + 1] < ylo) ylo = mesh->X[3 * i + 1];
    if (mesh->X[3 * i + 1] > yhi) yhi = mesh->X[3 * i + 1];
  }
  fl_fem_desc d;
  memset(&d, 0, sizeof d);
  d.name = "cylinder";
  d.model.model = p->model;
  d.model.E = p->E;
  d.model.nu = p->nu;
  d.model.c1 = p->c1;
  d.model.c2 = p->c2;
  d.model.kappa = p->kappa;
  d.density = p->density;
  d.alpha = p->alpha;
  d.beta = p->beta;
  d.material = mat;
  d.plane_strain = 1;
  d.nodal_volume = p->volume == 1 && p->model == FL_FEM_MOONEY_RIVLIN;
  int k = fl_world_add_fem(w, &d, &mesh);
  FL_TRY(k);
  fl_fem_mesh_src *src = &w->fem[k]->src;
  snprintf(src->type, sizeof src->type, "cylinder");
  src->size[0] = R;
  src->size[1] = L;
  src->n[0] = rings;
  src->n[1] = 2;
  // Frictionless plates leave the cylinder free to slide along x and roll about z; the
  // symmetric solution has the vertical diameter's points at x = 0, so hold them there
  // (VM201's quarter model has the same symmetry condition).
  if (p->pin) {
    double lo[3] = {0, -2 * R, -L}, hi[3] = {0, 2 * R, L}, zero[3] = {0, 0, 0};
    FL_TRY(fl_fem_hold_box(w, k, lo, hi, 1, zero));
  }
  // plates: wide thin boxes covering the cylinder's length
  double half[3] = {2 * R, 0.1 * R, L};
  fl_shape s;
  FL_TRY(fl_shape_make_box(half[0], half[1], half[2], &s));
  fl_body_desc g = fl__desc("ground", FL_BODY_FIXED, mat);
  g.pos[1] = ylo - half[1];
  FL_TRY(fl__add_shape(w, &g, &s));
  double pos[3] = {0, yhi + half[1], 0};
  int top = fl__add_box(w, "plate", mat, half, pos, NULL, 0, p->plate_mass);
  FL_TRY(top);
  fl_joint j;
  memset(&j, 0, sizeof j);
  j.type = FL_JOINT_PRISMATIC;
  j.body_a = -1;
  j.body_b = top;
  memcpy(j.anchor_a, pos, sizeof pos);
  j.axis[1] = 1;
  FL_TRY(fl_world_add_joint(w, &j));
  fl_force f;
  memset(&f, 0, sizeof f);
  f.body = top;
  f.f[1] = -p->force * L;
  f.t0 = 0;
  f.t1 = p->ramp;
  FL_TRY(fl_world_add_force(w, &f));
  fl_int ids[1] = {top};
  // per unit length, pushing along -y; the plate may not travel more than the diameter; the
  // ground is the support whose contact overlap press_overlap adds to the plate's
  double par[6] = {L, 0, -1, 0, 2 * R, (double)fl_world_find_body(w, "ground") + 1};
  FL_TRY(fl_world_add_group(w, FL_OBS_PRESS, 1, ids, par, 6));
  return FL_OK;
}


const fl_scene_desc fl__cylinder_press_scene = {
  "cylinder_press",
  "rubber cylinder pressed between two frictionless plates, plane strain (seed 000 Fig. 3-4)",
  "force per unit length against approach: 0.25 MN/m at 0.1 m and 1.40 MN/m at 0.2 m (VM201) "
  "within 5 % on the finest mesh",
  sizeof(cylinder_press_params), cylinder_press_opts, cylinder_press_build};


int fl__arch_fem_stones(fl_world *w, int mat, int ns, const double *V, double density, double E,
                        double nu, double beta, int cells) {
  fl_int ids[101];
  if (ns > 101) return fl_seterr(FL_ERR_INVAL, "arch: %d stones (at most 101)", ns);
  for (int i = 0; i < ns; i++) {
    // corners z-up; vertex k of the data is (bit 2, bit 1, bit 0) of a unit cube
    double c[8][3];
    for (int k = 0; k < 8; k++) {
      const double *v = V + 3 * (8 * i + k);
      c[k][0] = v[0];
      c[k][1] = -v[2];
      c[k][2] = v[1];
    }
    double size[3] = {1, 1, 1};
    fl_mesh *mesh = NULL;
    FL_TRY(fl_mesh_box(size, cells, cells, cells, &mesh));
    // trilinear map; mirrored along the bit-0 axis when it would turn the tets inside out
    double dd[3][3];
    for (int a = 0; a < 3; a++) {
      for (int k = 0; k < 3; k++) dd[a][k] = c[1 << (2 - a)][k] - c[0][k];
    }
    double det = dd[0][0] * (dd[1][1] * dd[2][2] - dd[1][2] * dd[2][1]) -
                 dd[0][1] * (dd[1][0] * dd[2][2] - dd[1][2] * dd[2][0]) +
                 dd[0][2] * (dd[1][0] * dd[2][1] - dd[1][1] * dd[2][0]);
    for (fl_int q = 0; q < mesh->nvert; q++) {
      double s = mesh->X[3 * q] + 0.5, t = mesh->X[3 * q + 1] + 0.5, u = mesh->X[3 * q + 2] + 0.5;
      if (det < 0) u = 1 - u;
      double x[3] = {0, 0, 0};
      for (int k = 0; k < 8; k++) {
        double wgt = ((k >> 2) & 1 ? s : 1 - s) * ((k >> 1) & 1 ? t : 1 - t) * (k & 1 ? u : 1 - u);
        for (int m = 0; m < 3; m++) x[m] += wgt * c[k][m];
      }
      memcpy(mesh->X + 3 * q, x, sizeof x);
    }
    fl_fem_desc d;
    memset(&d, 0, sizeof d);
    char name[32];
    snprintf(name, sizeof name, "stone%d", i + 1);
    d.name = name;
    d.model.model = FL_FEM_COROTATED_LAGGED;
    d.model.E = E;
    d.model.nu = nu;
    d.density = density;
    d.beta = beta;
    d.material = mat;
    int k = fl_world_add_fem(w, &d, &mesh);
    FL_TRY(k);
    ids[i] = k;
  }
  FL_TRY(fl_world_add_fem_group(w, FL_OBS_ARCH, ns, ids, NULL, 0));
  return FL_OK;
}

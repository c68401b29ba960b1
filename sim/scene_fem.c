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
  double beta, panel_mass, stiffness;
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
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};


static int elastic_cube_build(const void *pp, fl_world *w) {
  const elastic_cube_params *p = pp;
  w->fem_solve = (fl_fem_solve)p->solve;
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

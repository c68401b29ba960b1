// SPDX-License-Identifier: Apache-2.0
/* scene_box_pile.c: box_pile, a hundred boxes dropped into a heap (the benchmark's moving
 * scene of many box-box contacts; docs/scenes.md, docs/bench-world.md).
 *
 * Boxes of 20 x 15 x 10 cm (half extents 0.10, 0.075, 0.05 m by default), 2 kg, mu 0.5, on a
 * rigid ground. They start on a square lattice, `columns` x `columns` per layer, layers one
 * bounding sphere apart (so no two overlap at the start), each with a random yaw, a small
 * random tilt and a small horizontal offset; they fall, collide and come to rest as a heap a
 * little wider than the lattice. Speculative contacts are on by default: the top layer lands
 * at about 5 m/s, 4 cm a step at dt = 1/120 s, most of a box's half thickness.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scenes_impl.h"

typedef struct box_pile_params {
  fl_scene_common c;
  int n;            /* boxes */
  int columns;      /* lattice columns per side */
  double hx, hy, hz; /* m, half extents */
  double mass, mu;
  int seed;
} box_pile_params;

static const fl_option_desc box_pile_opts[] = {
  FL__COMMON_SPEC(box_pile_params, 1.0 / 120, 3.0, 5e-3, 1),
  FL__INT(box_pile_params, n, 1, 100000, 100, "boxes"),
  FL__INT(box_pile_params, columns, 1, 1000, 5, "lattice columns per side of a layer"),
  FL__REAL(box_pile_params, hx, 1e-3, 1e3, 0.10, "half length of a box (m)"),
  FL__REAL(box_pile_params, hy, 1e-3, 1e3, 0.075, "half width of a box (m)"),
  FL__REAL(box_pile_params, hz, 1e-3, 1e3, 0.05, "half height of a box (m)"),
  FL__REAL(box_pile_params, mass, 1e-6, 1e6, 2.0, "mass of a box (kg)"),
  FL__REAL(box_pile_params, mu, 0, 100, 0.5, "friction coefficient"),
  FL__INT(box_pile_params, seed, 0, 1000000, 1, "placement seed"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

/* a small deterministic generator (placements only): [0, 1) */
static double rnd(unsigned long long *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0;
}


static int box_pile_build(const void *pp, fl_world *w) {
  const box_pile_params *p = pp;
  int mat = fl_world_add_material(w, "box", p->mu, INFINITY, 0);
  FL_TRY(mat);
  FL_TRY(fl__add_ground(w, mat, 0));
  double half[3] = {p->hx, p->hy, p->hz};
  double rad = sqrt(p->hx * p->hx + p->hy * p->hy + p->hz * p->hz);
  double pitch = 2 * rad + 0.01; // bounding spheres 1 cm apart: no overlap at the start
  int nc = p->columns;
  unsigned long long s = 0xD1B54A32D192ED03ULL ^ (unsigned long long)p->seed;
  for (int k = 0; k < p->n; k++) {
    int ix = k % nc, iy = (k / nc) % nc, iz = k / (nc * nc);
    double yaw = 2 * M_PI * rnd(&s), tilt = 0.3 * (rnd(&s) - 0.5);
    double qz[4], qx[4], q[4], ez[3] = {0, 0, 1}, ex[3] = {1, 0, 0};
    fl_quat_from_axis_angle(ez, yaw, qz);
    fl_quat_from_axis_angle(ex, tilt, qx);
    fl_quat_mul(qz, qx, q);
    double jx = 0.005 * (2 * rnd(&s) - 1), jy = 0.005 * (2 * rnd(&s) - 1);
    double pos[3] = {(ix - 0.5 * (nc - 1)) * pitch + jx, (iy - 0.5 * (nc - 1)) * pitch + jy,
                     rad + 0.01 + iz * pitch};
    char name[32];
    snprintf(name, sizeof name, "box%d", k + 1);
    FL_TRY(fl__add_box(w, name, mat, half, pos, q, 0, p->mass));
  }
  return FL_OK;
}


const fl_scene_desc fl__box_pile_scene = {
  "box_pile", "a hundred boxes dropped on a lattice fall into a heap (many box-box contacts)",
  "the heap comes to rest (kinetic energy near 0) with small penetration (pen_max)",
  sizeof(box_pile_params), box_pile_opts, box_pile_build};

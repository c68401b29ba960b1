// SPDX-License-Identifier: Apache-2.0
/* scenes_impl.h: what the scene files share (scene_kit.c, scenes.c, scenes_more.c, scene_coin.c,
 * scene_fem.c, scenes_arch_data.c).
 * Never included outside sim/ and tests/.
 */
#ifndef FL_SCENES_IMPL_H
#define FL_SCENES_IMPL_H
// layer 4: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 4
#error "sim/scenes_impl.h is in sim/, layer 4: a lower layer may not include it (docs/layers.md)"
#endif

#include <stddef.h>

#include "world_impl.h"

/* Option-table rows of a scene's parameter struct: the member's name is the key. */
#define FL__REAL(st, m, lo, hi, d, help) {#m, FL_OPT_REAL, offsetof(st, m), lo, hi, d, NULL, help}
#define FL__INT(st, m, lo, hi, d, help) {#m, FL_OPT_INT, offsetof(st, m), lo, hi, d, NULL, help}
#define FL__ENUM(st, m, choices, d, help) {#m, FL_OPT_ENUM, offsetof(st, m), 0, 0, d, choices, help}
/* The one range of each run parameter (s, s, m, 0..1): canonical scenes (FL__COMMON_SPEC), scene
 * files as read (scene_json.c) and their --set (fl_scene_run_params) all check these. */
#define FL__DT_MIN 1e-12
#define FL__DT_MAX 10
#define FL__DURATION_MAX 1e9
#define FL__MARGIN_MAX 1e6
/* dt, duration, margin, speculative with the scene's defaults. */
#define FL__COMMON(st, d_dt, d_dur, d_marg) FL__COMMON_SPEC(st, d_dt, d_dur, d_marg, 0)
#define FL__COMMON_SPEC(st, d_dt, d_dur, d_marg, d_spec)                                          \
  {"dt", FL_OPT_REAL, offsetof(st, c.dt), FL__DT_MIN, FL__DT_MAX, d_dt, NULL, "time step (s)"},  \
  {"duration", FL_OPT_REAL, offsetof(st, c.duration), 0, FL__DURATION_MAX, d_dur, NULL,        \
   "default run length (s); --steps overrides"},                                              \
  {"margin", FL_OPT_REAL, offsetof(st, c.margin), 0, FL__MARGIN_MAX, d_marg, NULL,             \
   "speculative contact margin (m)"},                                                          \
  {"speculative", FL_OPT_REAL, offsetof(st, c.speculative), 0, 1, d_spec, NULL,               \
   "1: each pair's margin also grows by the distance its bodies can close in one step (fast "  \
   "bodies meet obstacles as speculative contacts instead of passing into them); 0: off"}

/* A body description with identity orientation and zero velocity. */
fl_body_desc fl__desc(const char *name, fl_body_kind kind, int mat);
/* Adds a fixed ground plane z = z0 (normal +z); returns its index. */
int fl__add_ground(fl_world *w, int mat, double z0);
/* fl_world_add_body that frees the shape on failure. */
int fl__add_shape(fl_world *w, const fl_body_desc *d, fl_shape *s);
/* A dynamic box of half extents `half` (density > 0, or mass). */
int fl__add_box(fl_world *w, const char *name, int mat, const double half[3], const double pos[3],
                const double quat[4], double density, double mass);

/* Masonry arch data (scenes_arch_data.c): 8 vertices per stone, y up, metres. */
extern const int fl__arch25_nstones;
extern const double fl__arch25_vert[];
extern const int fl__arch101_nstones;
extern const double fl__arch101_vert[];

/* Scenes of scenes_more.c. */
extern const fl_scene_desc fl__pendulum_mass_ratio_scene;
extern const fl_scene_desc fl__pendulum_stiffness_ratio_scene;
extern const fl_scene_desc fl__chain_scene;
extern const fl_scene_desc fl__cylinder_stack_scene;
extern const fl_scene_desc fl__capsule_lean_scene;
extern const fl_scene_desc fl__table_pile_scene;
extern const fl_scene_desc fl__granular_scene;
extern const fl_scene_desc fl__box_pile_scene;      /* scene_box_pile.c */
extern const fl_scene_desc fl__spinning_coin_scene; /* scene_coin.c */
extern const fl_scene_desc fl__elastic_cube_scene;  /* scene_fem.c */
extern const fl_scene_desc fl__cylinder_press_scene; /* scene_fem.c */
/* The arch's stones as deformable bodies (scene_fem.c): V holds 8 vertices per stone as in
 * scenes_arch_data.c (y up; turned to z up here), each stone a box mesh of cells^3 cells mapped
 * trilinearly onto its hexahedron; corotated_lagged model. Adds the arch observable. */
int fl__arch_fem_stones(fl_world *w, int mat, int ns, const double *V, double density, double E,
                        double nu, double beta, int cells);

#endif /* FL_SCENES_IMPL_H */

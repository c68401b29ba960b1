// SPDX-License-Identifier: Apache-2.0
/* scene_kit.c: the helpers that every scene file shares (bodies with defaults, ground, boxes),
 * apart from the scenes' registry so that the scene files depend on it and not on each other.
 */
#include <string.h>

#include "scenes_impl.h"

fl_body_desc fl__desc(const char *name, fl_body_kind kind, int mat) {
  fl_body_desc d;
  memset(&d, 0, sizeof d);
  d.name = name;
  d.kind = kind;
  d.material = mat;
  d.quat[0] = 1;
  return d;
}


int fl__add_ground(fl_world *w, int mat, double z) {
  fl_shape s;
  FL_TRY(fl_shape_make_plane(&s));
  fl_body_desc d = fl__desc("ground", FL_BODY_FIXED, mat);
  d.pos[2] = z;
  int rc = fl_world_add_body(w, &d, &s);
  if (rc < 0) fl_shape_free(&s);
  return rc;
}


int fl__add_shape(fl_world *w, const fl_body_desc *d, fl_shape *s) {
  int rc = fl_world_add_body(w, d, s);
  if (rc < 0) fl_shape_free(s);
  return rc;
}


int fl__add_box(fl_world *w, const char *name, int mat, const double half[3], const double pos[3],
                const double quat[4], double density, double mass) {
  fl_shape s;
  FL_TRY(fl_shape_make_box(half[0], half[1], half[2], &s));
  fl_body_desc d = fl__desc(name, FL_BODY_DYNAMIC, mat);
  d.density = density;
  d.mass = mass;
  memcpy(d.pos, pos, sizeof d.pos);
  if (quat) memcpy(d.quat, quat, sizeof d.quat);
  return fl__add_shape(w, &d, &s);
}

// SPDX-License-Identifier: Apache-2.0
/* test_mjcf.c: MJCF models read through MuJoCo's parser (peers/mjcf_in.c, fl_world_from_mjcf;
 * docs/mjcf.md): masses, inertias and poses of tests/data/boxes_spheres.xml, the first step's
 * contacts with sap, pgs and MuJoCo's Newton on the same model, the shapes (capsule, cylinder,
 * mesh as a hull), and each refusal naming its element. Cases skip (77) without MuJoCo.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fl_test.h"
#include "peers/fl_peer.h"
#include "sim/fl_world.h"

#ifdef FL_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#endif

static const char *data(const char *name) {
  static char buf[1024];
  const char *src = getenv("FL_SOURCE_DIR");
  snprintf(buf, sizeof buf, "%s/tests/data/%s", src ? src : "..", name);
  return buf;
}

/* writes an MJCF text to a temporary file; the caller unlinks path */
static int write_tmp(const char *text, char *path) {
  strcpy(path, "/tmp/test_mjcf_XXXXXX.xml");
  int fd = mkstemps(path, 4);
  if (fd < 0) return -1;
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  return 0;
}

#define NEED_MUJOCO()                                                        \
  do {                                                                       \
    fl_world *w_ = NULL;                                                     \
    if (fl_world_from_mjcf(data("boxes_spheres.xml"), 0, NULL, &w_) ==       \
            FL_ERR_UNSUPPORTED &&                                            \
        strstr(fl_errmsg(), "no MuJoCo"))                                    \
      SKIP("built without MuJoCo");                                          \
    fl_world_free(w_);                                                       \
  } while (0)


FL_TEST(boxes_spheres_masses_and_poses) {
  NEED_MUJOCO();
  fl_world *w = NULL;
  ASSERT_OK(fl_world_from_mjcf(data("boxes_spheres.xml"), 0, NULL, &w));
  ASSERT_EQ(w->nbody, 6); // floor, ledge, two boxes, two balls
  ASSERT_NEAR(w->dt, 0.002, 0);
  ASSERT_NEAR(w->gravity[2], -9.81, 0);
  ASSERT_EQ(w->mu_rule, FL_MU_MAX);
  int a = fl_world_find_body(w, "box_a"), b = fl_world_find_body(w, "box_b");
  int s = fl_world_find_body(w, "ball_a"), t = fl_world_find_body(w, "ball_b");
  int fl = fl_world_find_body(w, "floor"), le = fl_world_find_body(w, "ledge");
  ASSERT(a >= 0 && b >= 0 && s >= 0 && t >= 0 && fl >= 0 && le >= 0);
  ASSERT_EQ(w->body[fl].kind, FL_BODY_FIXED);
  ASSERT_EQ(w->body[fl].shape.type, FL_SHAPE_PLANE);
  ASSERT_EQ(w->body[le].kind, FL_BODY_FIXED);
  ASSERT_EQ(w->body[le].shape.type, FL_SHAPE_BOX);
  ASSERT_NEAR(w->body[le].pos[2], 0.05, 1e-15);
  // masses: density x volume, as MuJoCo compiled them
  ASSERT_NEAR(w->body[a].mass, 1000 * 0.2 * 0.2 * 0.2, 1e-9);
  ASSERT_NEAR(w->body[b].mass, 500 * 0.4 * 0.3 * 0.3, 1e-9);
  ASSERT_NEAR(w->body[s].mass, 500 * 4.0 / 3.0 * M_PI * 1e-3, 1e-9);
  ASSERT_NEAR(w->body[t].mass, 2000 * 4.0 / 3.0 * M_PI * 1e-3, 1e-9);
  // inertias in the box's own axes (MuJoCo keeps them in its principal frame, which may be
  // the box's axes permuted): m/3 (b^2 + c^2), ...
  const double *I = w->body[b].inertia, m = w->body[b].mass;
  ASSERT_NEAR(I[0], m / 3 * (0.15 * 0.15 + 0.15 * 0.15), 1e-12);
  ASSERT_NEAR(I[4], m / 3 * (0.2 * 0.2 + 0.15 * 0.15), 1e-12);
  ASSERT_NEAR(I[8], m / 3 * (0.2 * 0.2 + 0.15 * 0.15), 1e-12);
  ASSERT_NEAR(I[1], 0, 1e-12);
  ASSERT_NEAR(I[2], 0, 1e-12);
  ASSERT_NEAR(I[5], 0, 1e-12);
  ASSERT_NEAR(w->body[s].inertia[0], 0.4 * w->body[s].mass * 0.01, 1e-12);
  // poses: box_b at (0.5, 0, 0.1499) turned 30 degrees about z
  ASSERT_NEAR(w->body[b].pos[0], 0.5, 1e-15);
  ASSERT_NEAR(w->body[b].pos[2], 0.1499, 1e-15);
  ASSERT_NEAR(fabs(w->body[b].quat[0]), cos(M_PI / 12), 1e-12);
  ASSERT_NEAR(fabs(w->body[b].quat[3]), sin(M_PI / 12), 1e-12);
  ASSERT_NEAR(w->body[b].shape.size[0], 0.2, 0);
  // friction: one rigid material per coefficient, MuJoCo's max rule
  double mu, k, tau;
  fl_material_combine(&w->mat[w->body[a].material], &w->mat[w->body[fl].material], w->mu_rule,
                      &mu, &k, &tau);
  ASSERT_NEAR(mu, 0.8, 0);
  ASSERT(isinf(k));
  fl_material_combine(&w->mat[w->body[s].material], &w->mat[w->body[fl].material], w->mu_rule,
                      &mu, &k, &tau);
  ASSERT_NEAR(mu, 1.0, 0); // MuJoCo's default friction
  fl_world_free(w);
  return 0;
}


/* The first step's contacts from FrictionLab with sap and pgs and from MuJoCo's Newton on the
 * same model: 4 per box on the floor, 1 per ball (on the floor, on the ledge). */
FL_TEST(boxes_spheres_first_step_contacts) {
  NEED_MUJOCO();
  fl_register_all();
  const char *solvers[2] = {"sap", "pgs"};
  int nc[3];
  for (int k = 0; k < 2; k++) {
    fl_world *w = NULL;
    ASSERT_OK(fl_world_from_mjcf(data("boxes_spheres.xml"), 0, NULL, &w));
    fl_solver *s = NULL;
    ASSERT_OK(fl_solver_create(solvers[k], &s));
    fl_step_info info;
    ASSERT_OK(fl_world_step(w, s, &info));
    ASSERT(info.res.reason > 0);
    nc[k] = (int)info.nc;
    // and a second of motion: everything stays where it rests
    for (int st = 1; st < 500; st++) ASSERT_OK(fl_world_step(w, s, &info));
    int b = fl_world_find_body(w, "ball_b");
    ASSERT_NEAR(w->body[b].pos[2], 0.2, 1e-3);
    fl_solver_destroy(s);
    fl_world_free(w);
  }
  fl_world *w = NULL;
  ASSERT_OK(fl_world_from_mjcf(data("boxes_spheres.xml"), 0, NULL, &w));
  fl_peer *p = NULL;
  ASSERT_OK(fl_peer_create("mujoco-newton", w, 0, NULL, NULL, &p));
  fl_step_info pi;
  ASSERT_OK(fl_peer_step(p, w, &pi));
  nc[2] = fl_peer_contacts(p);
  fprintf(stderr, "first-step contacts: sap %d, pgs %d, mujoco-newton %d\n", nc[0], nc[1], nc[2]);
  ASSERT_EQ(nc[0], 10);
  ASSERT_EQ(nc[1], 10);
  ASSERT_EQ(nc[2], 10);
  fl_peer_free(p);
  fl_world_free(w);
  return 0;
}


FL_TEST(shapes_capsule_cylinder_mesh) {
  NEED_MUJOCO();
  char path[64];
  ASSERT_EQ(write_tmp(
    "<mujoco><asset><mesh name='tet' vertex='0 0 0  1 0 0  0 1 0  0 0 1'/></asset>"
    "<worldbody><geom type='plane' size='1 1 1'/>"
    "<body name='cap' pos='0 0 1'><freejoint/><geom type='capsule' size='0.1 0.3' density='1000'/></body>"
    "<body name='cyl' pos='1 0 1'><freejoint/><geom type='cylinder' size='0.2 0.1' density='1000'/></body>"
    "<body name='tet' pos='2 0 1'><freejoint/><geom type='mesh' mesh='tet' density='600'/></body>"
    "<geom name='eye' type='sphere' size='0.05' pos='0 0 3' contype='0' conaffinity='0'/>"
    "</worldbody></mujoco>", path), 0);
  fl_world *w = NULL;
  int rc = fl_world_from_mjcf(path, 1, (const char *const[]){"duration=2"}, &w);
  unlink(path);
  ASSERT_OK(rc);
  ASSERT_EQ(w->nbody, 4); // the drawn-only sphere is left out
  ASSERT_NEAR(w->duration, 2, 0);
  int c = fl_world_find_body(w, "cap"), y = fl_world_find_body(w, "cyl"), t = fl_world_find_body(w, "tet");
  ASSERT_EQ(w->body[c].shape.type, FL_SHAPE_CAPSULE);
  ASSERT_NEAR(w->body[c].shape.size[1], 0.3, 0);
  ASSERT_NEAR(w->body[c].mass, 1000 * (M_PI * 0.01 * 0.6 + 4.0 / 3.0 * M_PI * 1e-3), 1e-9);
  ASSERT_EQ(w->body[y].shape.type, FL_SHAPE_CYLINDER);
  ASSERT_NEAR(w->body[y].mass, 1000 * M_PI * 0.04 * 0.2, 1e-9);
  ASSERT_EQ(w->body[t].shape.type, FL_SHAPE_CONVEX);
  ASSERT_EQ(w->body[t].shape.nvert, 4);
  // the mesh's mass and centre of mass are MuJoCo's (its compiled model), and the hull's
  // centroid, where FrictionLab puts the body, is the tetrahedron's: (2, 0, 1) + (1/4)(1,1,1)
  ASSERT_NEAR(w->body[t].pos[0], 2.25, 1e-6); // MuJoCo keeps mesh vertices as floats
  ASSERT_NEAR(w->body[t].pos[1], 0.25, 1e-6);
  ASSERT_NEAR(w->body[t].pos[2], 1.25, 1e-6);
#ifdef FL_HAVE_MUJOCO
  {
    char err[512];
    ASSERT_EQ(write_tmp(
      "<mujoco><asset><mesh name='tet' vertex='0 0 0  1 0 0  0 1 0  0 0 1'/></asset><worldbody>"
      "<body name='tet' pos='2 0 1'><freejoint/><geom type='mesh' mesh='tet' density='600'/></body>"
      "</worldbody></mujoco>", path), 0);
    mjModel *m = mj_loadXML(path, NULL, err, sizeof err);
    unlink(path);
    ASSERT(m != NULL);
    fprintf(stderr, "tet: MuJoCo's mass %.17g (density x volume %.17g)\n", m->body_mass[1],
            600.0 / 6.0);
    ASSERT_NEAR(w->body[t].mass, m->body_mass[1], 1e-12 * m->body_mass[1]);
    mj_deleteModel(m);
  }
#endif
  fl_world_free(w);
  return 0;
}


/* Everything FrictionLab cannot represent is refused by element name. */
FL_TEST(refusals_name_the_element) {
  NEED_MUJOCO();
  static const struct {
    const char *xml, *says;
  } cases[] = {
    {"<worldbody><body name='arm'><joint name='elbow' type='hinge'/><geom size='0.1'/></body>"
     "</worldbody>", "joint 'elbow' (hinge) of body 'arm'"},
    {"<worldbody><body name='b'><freejoint/><geom size='0.1'/></body></worldbody>"
     "<actuator><motor name='m1' joint='b_free'/></actuator>", NULL},
    {"<worldbody><body name='b'><joint name='j' type='slide'/><geom size='0.1'/></body>"
     "</worldbody><actuator><motor name='push' joint='j'/></actuator>", "actuator 'push'"},
    {"<worldbody><site name='s1'/><body name='b' pos='0 0 1'><freejoint/><geom size='0.1'/>"
     "<site name='s2'/></body></worldbody><tendon><spatial name='rope'><site site='s1'/>"
     "<site site='s2'/></spatial></tendon>", "tendon 'rope'"},
    {"<worldbody><body name='b' pos='0 0 1'><freejoint/><geom size='0.1'/></body></worldbody>"
     "<equality><weld name='glue' body1='b'/></equality>", "equality 'glue'"},
    {"<worldbody><body name='outer'><freejoint/><geom size='0.1'/><body name='inner' pos='0 0 1'>"
     "<geom size='0.1'/></body></body></worldbody>", "body 'inner' is nested in body 'outer'"},
    {"<worldbody><body name='egg'><freejoint/><geom name='shell' type='ellipsoid' size='0.1 0.2 0.3'/>"
     "</body></worldbody>", "geom 'shell': type ellipsoid"},
    {"<worldbody><body name='roll'><freejoint/><geom name='wheel' size='0.1' condim='6'/></body>"
     "</worldbody>", "geom 'wheel': condim 6"},
    {"<worldbody><body name='dumbbell'><freejoint/><geom size='0.1'/><geom size='0.1' pos='0 0 1'/>"
     "</body></worldbody>", "body 'dumbbell' has 2 colliding geoms"},
    {"<worldbody><body name='b'><freejoint/><geom name='g' size='0.1' contype='2'/></body>"
     "</worldbody>", "geom 'g': contype 2"},
    {"<worldbody><geom type='sphere' size='0.1'/><body name='b'><freejoint/><geom size='0.1'/>"
     "</body></worldbody><contact><exclude body1='world' body2='b'/></contact>", "exclude"},
    {"<worldbody><body name='b'><freejoint/><geom size='0.1' pos='0.5 0 0'/>"
     "<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/></body></worldbody>", "centre of mass"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    if (!cases[k].says) continue; // (a motor on a free joint: MuJoCo itself refuses it)
    char text[2048], path[64];
    snprintf(text, sizeof text, "<mujoco>%s</mujoco>", cases[k].xml);
    ASSERT_EQ(write_tmp(text, path), 0);
    fl_world *w = NULL;
    int rc = fl_world_from_mjcf(path, 0, NULL, &w);
    fprintf(stderr, "%d: %s\n", rc, fl_errmsg());
    unlink(path);
    ASSERT_EQ(rc, FL_ERR_UNSUPPORTED);
    ASSERT(w == NULL);
    ASSERT_STR_CONTAINS(fl_errmsg(), cases[k].says);
    ASSERT_STR_CONTAINS(fl_errmsg(), path);
  }
  // MuJoCo's own parser errors come back as FL_ERR_FORMAT with its message
  char path[64];
  ASSERT_EQ(write_tmp("<mujoco><worldbody><geom type='box'/></worldbody", path), 0);
  fl_world *w = NULL;
  int rc = fl_world_from_mjcf(path, 0, NULL, &w);
  unlink(path);
  ASSERT_EQ(rc, FL_ERR_FORMAT);
  ASSERT_STR_CONTAINS(fl_errmsg(), "MuJoCo's parser refused the model");
  ASSERT_EQ(fl_world_from_mjcf("/nonexistent.xml", 0, NULL, &w), FL_ERR_IO);
  ASSERT_EQ(fl_world_from_mjcf(data("boxes_spheres.xml"), 1, (const char *const[]){"gravity=1"}, &w),
            FL_ERR_UNKNOWN_OPTION);
  return 0;
}

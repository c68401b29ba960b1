// SPDX-License-Identifier: Apache-2.0
/* test_peer.c: MuJoCo as a peer simulator (peers/fl_peer.h): the MJCF writer, its
 * refusals, the model loading in MuJoCo, and the first step of the five-box stack from both
 * systems. Cases that need MuJoCo skip (77) in a build without it.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "fl_test.h"
#include "harness/figures/fl_figure.h"
#include "peers/fl_peer.h"
#include "sim/fl_world.h"

#ifdef FL_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#endif

/* The MJCF of world w with default options, as a string (caller frees). */
static char *mjcf_text(const fl_world *w) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  fl_mjcf_opts o;
  fl_mjcf_opts_default(&o);
  int rc = fl_mjcf_write(w, &o, f);
  fclose(f);
  if (rc < 0) {
    free(text);
    return NULL;
  }
  return text;
}


static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}


FL_TEST(mjcf_heavy_stack_text) {
  fl_world *w = NULL;
  ASSERT_OK(fl_scene_create("heavy_stack", 0, NULL, &w));
  char *t = mjcf_text(w);
  ASSERT(t != NULL);
  ASSERT_EQ(count(t, "<freejoint"), 5);
  ASSERT_EQ(count(t, "type=\"box\""), 5);
  ASSERT_EQ(count(t, "type=\"plane\""), 1);
  ASSERT_STR_CONTAINS(t, "integrator=\"Euler\"");
  ASSERT_STR_CONTAINS(t, "timestep=\"0.0083333333333333332\"");
  // masses written exactly: 8 * 8^4 for the top box
  ASSERT_STR_CONTAINS(t, "mass=\"32768\"");
  // one material: per-geom friction, no explicit pairs
  ASSERT_EQ(count(t, "<pair"), 0);
  ASSERT_EQ(count(t, "friction=\"0.5 0 0\""), 6);
  free(t);
  fl_world_free(w);
  return 0;
}


FL_TEST(mjcf_explicit_pairs_for_harmonic_rule) {
  // two materials under the harmonic rule: MuJoCo's max would be wrong, so explicit pairs
  fl_world *w = NULL;
  ASSERT_OK(fl_scene_create("heavy_stack", 1, (const char *const[]){"n=2"}, &w));
  int m2 = fl_world_add_material(w, "slippery", 0.1, INFINITY, 0);
  ASSERT(m2 > 0);
  w->body[2].material = m2;
  char *t = mjcf_text(w);
  ASSERT(t != NULL);
  // box2 (mu 0.1) meets box1 (mu 0.5): 2 0.5 0.1 / 0.6; ground and box1 keep 0.5 (max rule)
  // box2 (mu 0.1) meets box1 and the ground (mu 0.5): 2 0.5 0.1 / 0.6 on both pairs; ground
  // and box1 keep per-geom friction (the max rule is right for them)
  ASSERT_EQ(count(t, "<pair"), 2);
  ASSERT_STR_CONTAINS(t, "<pair geom1=\"g0\" geom2=\"g2\" condim=\"3\" friction=\"0.16666666666666669");
  ASSERT_STR_CONTAINS(t, "<pair geom1=\"g1\" geom2=\"g2\" condim=\"3\" friction=\"0.16666666666666669");
  free(t);
#ifdef FL_HAVE_MUJOCO
  // MuJoCo takes an explicit pair instead of, not beside, its own: 4 contacts per interface
  for (int k = 1; k <= 2; k++) w->body[k].pos[2] -= k * 1e-7;
  fl_peer *p = NULL;
  ASSERT_OK(fl_peer_create("mujoco-newton", w, 0, NULL, NULL, &p));
  ASSERT_OK(fl_peer_step(p, w, NULL));
  ASSERT_EQ(fl_peer_contacts(p), 8);
  fl_peer_free(p);
#endif
  fl_world_free(w);
  return 0;
}


FL_TEST(mjcf_refuses_what_it_cannot_express) {
  fl_world *w = NULL;
  // compliant contact law
  ASSERT_OK(fl_scene_create("granular", 2, (const char *const[]){"n=8", "stiffness=1e5"}, &w));
  ASSERT_EQ(fl_mjcf_check(w), FL_ERR_UNSUPPORTED);
  ASSERT_STR_CONTAINS(fl_errmsg(), "compliant");
  fl_world_free(w);
  // joints
  ASSERT_OK(fl_scene_create("heavy_stack", 1, (const char *const[]){"n=2"}, &w));
  fl_joint j;
  memset(&j, 0, sizeof j);
  j.type = FL_JOINT_BALL;
  j.body_a = 1;
  j.body_b = 2;
  ASSERT(fl_world_add_joint(w, &j) >= 0);
  ASSERT_EQ(fl_mjcf_check(w), FL_ERR_UNSUPPORTED);
  ASSERT_STR_CONTAINS(fl_errmsg(), "joints");
  fl_world_free(w);
  // hydroelastic patches
  ASSERT_OK(fl_scene_create("heavy_stack", 1, (const char *const[]){"n=1"}, &w));
  w->body[1].hydro_modulus = 1e6;
  ASSERT_EQ(fl_mjcf_check(w), FL_ERR_UNSUPPORTED);
  ASSERT_STR_CONTAINS(fl_errmsg(), "hydroelastic");
  fl_world_free(w);
  return 0;
}


FL_TEST(peer_names_without_mujoco) {
  // the names are known as peers either way; without MuJoCo they say why they cannot run
  ASSERT(fl_peer_prefix("mujoco"));
  ASSERT(fl_peer_prefix("mujoco-newton"));
  ASSERT(!fl_peer_prefix("sap"));
  const fl_figure_recipe *fig = fl_figure_find("peers-heavy-stack");
  ASSERT(fig != NULL);
#ifdef FL_HAVE_MUJOCO
  ASSERT(fl_peer_find("mujoco-cg"));
  ASSERT(fl_peer_unavailable("mujoco-cg") == NULL);
  ASSERT(fl_figure_missing(fig) == NULL);
#else
  ASSERT_STR_CONTAINS(fl_figure_missing(fig), "MuJoCo");
  ASSERT(!fl_peer_find("mujoco-cg"));
  ASSERT_STR_CONTAINS(fl_peer_unavailable("mujoco-cg"), "no MuJoCo");
  ASSERT(fl_peer_list()[0] == NULL);
#endif
  return 0;
}


#ifdef FL_HAVE_MUJOCO
/* Writes scene `name` (nset settings) as MJCF to a file and loads it with mj_loadXML. */
static int load_scene(const char *name, int nset, const char *const *set, int *nbody_dyn) {
  fl_world *w = NULL;
  ASSERT_OK(fl_scene_create(name, nset, set, &w));
  char path[] = "/tmp/test_peer_XXXXXX";
  int fd = mkstemp(path);
  ASSERT(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fl_mjcf_opts o;
  fl_mjcf_opts_default(&o);
  ASSERT_OK(fl_mjcf_write(w, &o, f));
  fclose(f);
  char err[1024] = "";
  mjModel *m = mj_loadXML(path, NULL, err, sizeof err);
  remove(path);
  if (!m) FL_FAIL_("%s: mj_loadXML: %s", name, err);
  // one MuJoCo body per dynamic body (plus the world), with FrictionLab's mass and timestep
  int ndyn = 0;
  double mass = 0, mjmass = 0;
  for (fl_int i = 0; i < w->nbody; i++) {
    if (w->body[i].kind != FL_BODY_DYNAMIC) continue;
    ndyn++;
    mass += w->body[i].mass;
  }
  for (int b = 1; b < m->nbody; b++) mjmass += m->body_mass[b];
  ASSERT_EQ(m->nbody, ndyn + 1);
  ASSERT_EQ(m->nv, 6 * ndyn);
  ASSERT_NEAR(mjmass, mass, 1e-12 * mass);
  ASSERT_NEAR(m->opt.timestep, w->dt, 0);
  // the state at t = 0: MuJoCo's body positions are FrictionLab's centres of mass
  mjData *d = mj_makeData(m);
  mj_forward(m, d);
  int b = 1;
  for (fl_int i = 0; i < w->nbody; i++, b += 0) {
    if (w->body[i].kind != FL_BODY_DYNAMIC) continue;
    for (int k = 0; k < 3; k++) ASSERT_NEAR(d->xipos[3 * b + k], w->body[i].pos[k], 1e-12);
    b++;
  }
  // every geom where FrictionLab has its shape: the same world box (meshes: MuJoCo keeps the
  // vertices in single precision, recentred on the mesh's own centroid and axes)
  for (int g = 0; g < m->ngeom; g++) {
    int i = atoi(mj_id2name(m, mjOBJ_GEOM, g) + 1); // geoms are named g<body index>
    const fl_body *fb = &w->body[i];
    if (fb->shape.type == FL_SHAPE_PLANE) continue;
    double lo[3], hi[3], mlo[3] = {INFINITY, INFINITY, INFINITY}, mhi[3] = {-INFINITY, -INFINITY, -INFINITY};
    fl_shape_aabb(&fb->shape, fb->pos, fb->quat, 0, lo, hi);
    const mjtNum *xp = d->geom_xpos + 3 * g, *xm = d->geom_xmat + 9 * g;
    if (m->geom_type[g] == mjGEOM_MESH) {
      int id = m->geom_dataid[g];
      for (int v = 0; v < m->mesh_vertnum[id]; v++) {
        const float *mv = m->mesh_vert + 3 * (m->mesh_vertadr[id] + v);
        for (int k = 0; k < 3; k++) {
          double x = xp[k] + xm[3 * k] * mv[0] + xm[3 * k + 1] * mv[1] + xm[3 * k + 2] * mv[2];
          mlo[k] = fmin(mlo[k], x);
          mhi[k] = fmax(mhi[k], x);
        }
      }
    } else {
      for (int k = 0; k < 3; k++) {
        mlo[k] = mhi[k] = xp[k]; // primitives: their centre
        lo[k] = hi[k] = 0.5 * (lo[k] + hi[k]);
      }
    }
    double tol = 1e-6 * (1 + fb->size);
    for (int k = 0; k < 3; k++) {
      ASSERT_NEAR(mlo[k], lo[k], tol);
      ASSERT_NEAR(mhi[k], hi[k], tol);
    }
  }
  mj_deleteData(d);
  mj_deleteModel(m);
  fl_world_free(w);
  *nbody_dyn = ndyn;
  return 0;
}
#endif


FL_TEST(mjcf_loads_in_mujoco) {
#ifndef FL_HAVE_MUJOCO
  SKIP("built without MuJoCo");
#else
  int n = 0;
  ASSERT_EQ(load_scene("heavy_stack", 0, NULL, &n), 0);
  ASSERT_EQ(n, 5);
  ASSERT_EQ(load_scene("table_pile", 0, NULL, &n), 0);
  ASSERT_EQ(n, 20);
  ASSERT_EQ(load_scene("granular", 1, (const char *const[]){"n=27"}, &n), 0);
  ASSERT_EQ(n, 28); // 27 grains and the cylinder
  ASSERT_EQ(load_scene("arch_masonry", 0, NULL, &n), 0); // convex hulls as meshes
  ASSERT(n > 0);
  return 0;
#endif
}


#ifdef FL_HAVE_MUJOCO
/* First step of the five-box heavy_stack (mass ratio `ratio` per level) from FrictionLab (NSN,
 * rigid) and MuJoCo Newton (cone 0 pyramidal, 1 elliptic; impedance 0.9999, its largest, at
 * every depth, so that its soft contact is as near rigid as it goes). Every interface overlaps
 * by 1e-7 m, so that MuJoCo makes constraints of its contacts (at exactly zero distance it
 * finds them but leaves them out). Gives both contact counts and total normal impulses. */
static int first_step(const char *ratio, int elliptic, int *nc_fl, int *nc_mj, double *imp_fl,
                      double *imp_mj, double *weights) {
  const double overlap = 1e-7;
  const char *const hs[1] = {ratio};
  fl_world *w = NULL, *wm = NULL;
  ASSERT_OK(fl_scene_create("heavy_stack", 1, hs, &w));
  ASSERT_OK(fl_scene_create("heavy_stack", 1, hs, &wm));
  for (int k = 1; k <= 5; k++) {
    w->body[k].pos[2] -= k * overlap;
    wm->body[k].pos[2] -= k * overlap;
  }
  fl_register_all();
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("nsn", &s));
  ASSERT_OK(fl_solver_set_option(s, "abs_tol", "1e-12"));
  fl_step_info info;
  ASSERT_OK(fl_world_step(w, s, &info));
  const double *v, *g;
  fl_world_solution(w, &v, &g);
  *imp_fl = 0;
  for (fl_int c = 0; c < info.nc; c++) *imp_fl += g[3 * c];
  *nc_fl = (int)info.nc;
  const char *sets[3] = {"solimp=0.9999,0.9999,0.001", "tolerance=1e-12",
                         elliptic ? "cone=elliptic" : "cone=pyramidal"};
  fl_peer *p = NULL;
  ASSERT_OK(fl_peer_create("mujoco-newton", wm, 3, sets, NULL, &p));
  fl_step_info pi;
  ASSERT_OK(fl_peer_step(p, wm, &pi));
  ASSERT(pi.res.reason > 0);
  ASSERT_EQ(pi.nc, fl_peer_contacts(p));
  *imp_mj = fl_peer_normal_impulse(p);
  *nc_mj = fl_peer_contacts(p);
  // the weight of the boxes above each interface, over one step
  double above = 0;
  *weights = 0;
  for (int k = 5; k >= 1; k--) {
    above += wm->body[k].mass;
    *weights += above * 9.81 * wm->dt;
  }
  fprintf(stderr, "%s %s: contacts FrictionLab %d MuJoCo %d; normal impulse FrictionLab %.9g "
                  "MuJoCo %.9g N s (weights %.9g)\n", ratio, elliptic ? "elliptic" : "pyramidal",
          *nc_fl, *nc_mj, *imp_fl, *imp_mj, *weights);
  fl_peer_free(p);
  fl_solver_destroy(s);
  fl_world_free(w);
  fl_world_free(wm);
  return 0;
}
#endif


FL_TEST(heavy_stack_first_step_agrees) {
#ifndef FL_HAVE_MUJOCO
  SKIP("built without MuJoCo");
#else
  // mass ratios 1 and 2 per level (1:1 and 16:1 overall): the same contacts and, within 1 %,
  // the same total normal impulse, which is the weight above each interface times dt
  const char *ratios[2] = {"ratio=1", "ratio=2"};
  for (int r = 0; r < 2; r++)
    for (int e = 0; e < 2; e++) {
      int nf, nm;
      double jf, jm, wt;
      ASSERT_EQ(first_step(ratios[r], e, &nf, &nm, &jf, &jm, &wt), 0);
      ASSERT_EQ(nf, 20); // four corners per face
      ASSERT_EQ(nm, nf);
      ASSERT_NEAR(jm, jf, 0.01 * jf);
      ASSERT_NEAR(jf, wt, 0.01 * wt);
    }
  return 0;
#endif
}


FL_TEST(heavy_stack_4096_first_step) {
#ifndef FL_HAVE_MUJOCO
  SKIP("built without MuJoCo");
#else
  // The default 4096:1 stack: the same 20 contacts, but MuJoCo's soft constraint carries
  // less than the weight even at its largest impedance: its regularizer R = (1 - d)/d
  // diag(A) times the contact force is an acceleration that grows with the weight over the
  // light bottom box's mass (measured: 96.0 % pyramidal, 78.9 % elliptic; docs/peers.md).
  // FrictionLab's rigid step carries the weight. The ratios are MuJoCo 2.2.2's.
  if (mj_version() != 222) SKIP("measured with MuJoCo 2.2.2, this is %s", mj_versionString());
  for (int e = 0; e < 2; e++) {
    int nf, nm;
    double jf, jm, wt;
    ASSERT_EQ(first_step("ratio=8", e, &nf, &nm, &jf, &jm, &wt), 0);
    ASSERT_EQ(nf, 20);
    ASSERT_EQ(nm, nf);
    ASSERT_NEAR(jf, wt, 0.01 * wt);
    ASSERT_NEAR(jm / jf, e ? 0.7896 : 0.9605, 0.002);
  }
  return 0;
#endif
}



/* Runs the frictionlab binary ($FL_BINARY) with `args`; returns its exit status. */
static int run_cli(const char *args) {
  const char *bin = getenv("FL_BINARY");
  if (!bin) return -1;
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s %s > /dev/null", bin, args);
  int st = system(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}


FL_TEST(bench_steps_csv) {
  if (!getenv("FL_BINARY")) SKIP("FL_BINARY not set (run through ctest)");
  char dir[] = "/tmp/test_peer_bench_XXXXXX";
  ASSERT(mkdtemp(dir) != NULL);
  char args[1024], path[1100];
#ifdef FL_HAVE_MUJOCO
  const char *solvers = "sap,mujoco-newton";
  int nrow_expect = 2;
#else
  const char *solvers = "sap,pgs";
  int nrow_expect = 2;
#endif
  snprintf(args, sizeof args, "bench heavy_stack --steps 10 --reps 1 --solver %s --out %s/b "
           "--force", solvers, dir);
  ASSERT_EQ(run_cli(args), 0);
  snprintf(path, sizeof path, "%s/b/bench.csv", dir);
  FILE *f = fopen(path, "r");
  ASSERT(f != NULL);
  char line[4096];
  ASSERT(fgets(line, sizeof line, f) != NULL);
  // the columns, by name
  const char *want[] = {"problem", "solver", "steps", "reps", "nc_mean", "iters_mean",
                        "step_min_s", "step_median_s", "collide_s", "assemble_s", "setup_s",
                        "solve_s", "integrate_s", "other_s", "pen_max", "instr_per_step",
                        "ratio_median", "ratio_instr", "instr_collide", "instr_assemble",
                        "instr_setup", "instr_solve", "instr_other"};
  enum { NWANT = sizeof want / sizeof want[0] };
  int col[NWANT], ncol = 0;
  char *names[64];
  for (char *t = strtok(line, ",\n"); t && ncol < 64; t = strtok(NULL, ",\n")) names[ncol++] = t;
  for (int k = 0; k < NWANT; k++) {
    col[k] = -1;
    for (int c = 0; c < ncol; c++)
      if (!strcmp(names[c], want[k])) col[k] = c;
    if (col[k] < 0) FL_FAIL_("bench.csv has no column %s", want[k]);
  }
  int nrow = 0;
  while (fgets(line, sizeof line, f)) {
    double v[64];
    int n = 0;
    char *p = line;
    // numeric fields by position (empty ones read as NaN)
    while (n < 64) {
      char *comma = strchr(p, ',');
      v[n++] = (*p && *p != ',' && *p != '\n') ? strtod(p, NULL) : NAN;
      if (!comma) break;
      p = comma + 1;
    }
    ASSERT_EQ(n, ncol);
    ASSERT_NEAR(v[col[2]], 10, 0);
    // about the five boxes' 20 contacts (MuJoCo: none at the first step, where the boxes
    // touch at exactly zero distance; PGS: a few more speculative ones while they settle)
    ASSERT(v[col[4]] >= 10 && v[col[4]] <= 28);
    // with one repetition the stages and the step are one run's means: the stages fit in it
    double sum = 0;
    for (int k = 8; k <= 12; k++) {
      ASSERT(v[col[k]] >= 0);
      sum += v[col[k]];
    }
    ASSERT_LE(sum, v[col[7]]);
    ASSERT_NEAR(v[col[6]], v[col[7]], 0); // one repetition: min = median
    ASSERT(v[col[14]] >= 0);
    nrow++;
  }
  fclose(f);
  ASSERT_EQ(nrow, nrow_expect);
  snprintf(args, sizeof args, "rm -rf %s", dir);
  ASSERT_EQ(system(args), 0);
  return 0;
}

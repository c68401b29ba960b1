// SPDX-License-Identifier: Apache-2.0
/* test_box_pile.c: the box_pile scene (a hundred boxes falling into a heap) and speculative
 * contacts (fl_world.speculative): a fast box meets the ground as a speculative contact and
 * stops on it, where the plain margin lets it pass into the ground.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/fl_world.h"
#include "../solvers/fl_solver.h"
#include "fl_test.h"

static fl_solver *pgs(int sweeps, int warm) {
  fl_solver *s = NULL;
  fl_register_all();
  if (fl_solver_create("pgs", &s) < 0) return NULL;
  char buf[32];
  snprintf(buf, sizeof buf, "%d", sweeps);
  fl_solver_set_option(s, "max_iter", buf);
  fl_solver_set_option(s, "warm_start", warm ? "true" : "false");
  fl_solver_set_option(s, "error_every", "0");
  return s;
}


/* The default scene: 100 boxes of 2 kg above the ground, none overlapping at the start, and
 * speculative contacts on. */
FL_TEST(geometry) {
  fl_world *w;
  ASSERT_OK(fl_scene_create("box_pile", 0, NULL, &w));
  ASSERT_EQ(w->nbody, 101);
  for (int i = 1; i <= 100; i++) {
    ASSERT_NEAR(w->body[i].mass, 2.0, 1e-12);
    ASSERT_NEAR(w->body[i].shape.size[0], 0.10, 1e-15);
    ASSERT(w->body[i].pos[2] > w->body[i].shape.radius); // above the ground
  }
  ASSERT_NEAR(w->speculative, 1, 0);
  int n = -1;
  ASSERT_OK(fl_world_overlaps(w, 0, NULL, 0, &n));
  ASSERT_EQ(n, 0);
  fl_world_free(w);
  return 0;
}


/* One flat box 5 cm above the ground falling at 30 m/s (25 cm per step at dt = 1/120 s).
 * Closed form with the speculative contact (phi = 0.05 m): the rigid contact lets the gap
 * close and no more, u_n = -phi/dt, so after one step the box touches the ground (z = hz) and
 * after the next it rests (v = 0). With the plain 5 mm margin there is no contact in the
 * first step and the box ends 0.2 m inside the ground. */
static int drop(int speculative, double *z1, double *pen1, double *vz2) {
  fl_world *w;
  char spec[32];
  snprintf(spec, sizeof spec, "speculative=%d", speculative);
  const char *set[4] = {"n=1", "columns=1", spec, "seed=3"};
  FL_TRY(fl_scene_create("box_pile", 4, set, &w));
  fl_body *b = &w->body[1];
  double hz = b->shape.size[2];
  b->quat[0] = 1, b->quat[1] = b->quat[2] = b->quat[3] = 0;
  b->pos[0] = b->pos[1] = 0;
  b->pos[2] = hz + 0.05;
  b->vel[2] = -30;
  fl_solver *s = pgs(200, 0);
  fl_step_info info;
  int rc = fl_world_step(w, s, &info);
  if (rc >= 0) {
    *z1 = w->body[1].pos[2] - hz;
    rc = fl_world_penetration(w, pen1);
  }
  if (rc >= 0) rc = fl_world_step(w, s, &info);
  *vz2 = w->body[1].vel[2];
  fl_solver_destroy(s);
  fl_world_free(w);
  return rc;
}


FL_TEST(speculative_stops_fast_box) {
  double z1, pen1, vz2;
  ASSERT_OK(drop(1, &z1, &pen1, &vz2));
  ASSERT_NEAR(z1, 0, 1e-6);
  ASSERT_LE(pen1, 1e-6);
  ASSERT_NEAR(vz2, 0, 1e-4);
  ASSERT_OK(drop(0, &z1, &pen1, &vz2));
  ASSERT_NEAR(z1, 0.05 - 0.25 - 9.81 / (120.0 * 120.0), 1e-9); // free fall, no contact
  ASSERT(pen1 > 0.19);
  return 0;
}


/* The heap: 200 steps (1.67 s) with warm-started PGS of 20 sweeps. The boxes land from up to
 * 1.2 m (potential energy released about 1 kJ); the run must stay free of deep overlaps and
 * come nearly to rest: after the last step the kinetic energy is under 2 J and the deepest
 * overlap under 1 mm. */
FL_TEST(slow_settles) {
  fl_world *w;
  ASSERT_OK(fl_scene_create("box_pile", 0, NULL, &w));
  w->compute_metrics = 0;
  fl_solver *s = pgs(20, 1);
  ASSERT(s);
  double deepest = 0, ke0 = 0, pe0 = 0, ke = 0, pe = 0, pen = 0;
  fl_world_energy_momentum(w, &ke0, &pe0, NULL, NULL);
  for (int k = 0; k < 200; k++) {
    fl_step_info info;
    int rc = fl_world_step(w, s, &info);
    if (rc < 0) FL_FAIL_("step %d: %s", k, fl_errmsg());
    ASSERT_OK(fl_world_penetration(w, &pen));
    deepest = fmax(deepest, pen);
  }
  fl_world_energy_momentum(w, &ke, &pe, NULL, NULL);
  printf("box_pile: released %.1f J, kinetic %.3g J at the end, deepest overlap %.3g m over the "
         "run, %.3g m at the end\n", pe0 - pe, ke, deepest, pen);
  ASSERT(pe0 - pe > 500);
  ASSERT_LE(ke, 2.0);
  ASSERT_LE(pen, 1e-3);
  ASSERT_LE(deepest, 0.1);
  fl_solver_destroy(s);
  fl_world_free(w);
  return 0;
}


/* PGS's residual_every skips the residual between sweeps, not the sweeps: on a step of the
 * landing heap (about 100 contacts) 9 sweeps give the same impulses to the bit whether the
 * residual is evaluated after every sweep or after every 4th and the last. */
FL_TEST(pgs_residual_every_same_iterates) {
  fl_world *w;
  ASSERT_OK(fl_scene_create("box_pile", 0, NULL, &w));
  w->compute_metrics = 0;
  fl_solver *s = pgs(20, 1);
  ASSERT(s);
  for (int k = 0; k < 24; k++) {
    fl_step_info info;
    ASSERT_OK(fl_world_step(w, s, &info));
  }
  fl_solver_destroy(s);
  ASSERT_OK(fl_world_prepare(w, NULL));
  fl_problem *p = fl_world_problem(w);
  ASSERT(p->nc >= 50);
  fl_int nr = 3 * p->nc + p->nh;
  double *v[2], *g[2];
  int iters[2];
  for (int c = 0; c < 2; c++) {
    v[c] = calloc((size_t)p->nv, sizeof(double));
    g[c] = calloc((size_t)nr, sizeof(double));
    ASSERT(v[c] && g[c]);
    fl_solver *t = pgs(9, 0);
    ASSERT(t);
    ASSERT_OK(fl_solver_set_option(t, "abs_tol", "0"));
    ASSERT_OK(fl_solver_set_option(t, "residual_every", c ? "4" : "1"));
    fl_result res;
    ASSERT_OK(fl_solver_setup(t, p));
    ASSERT_OK(fl_solver_solve(t, p, v[c], g[c], &res));
    iters[c] = res.iters;
    fl_solver_destroy(t);
  }
  ASSERT_EQ(iters[0], 9);
  ASSERT_EQ(iters[1], 9);
  ASSERT(memcmp(g[0], g[1], (size_t)nr * sizeof(double)) == 0);
  ASSERT(memcmp(v[0], v[1], (size_t)p->nv * sizeof(double)) == 0);
  double gn = 0;
  for (fl_int i = 0; i < p->nc; i++) gn += g[0][3 * i];
  ASSERT(gn > 0); // the heap pushes
  for (int c = 0; c < 2; c++) {
    free(v[c]);
    free(g[c]);
  }
  fl_world_free(w);
  return 0;
}


extern int fl__pgs_runs, fl__dyn_rows;

/* a step of the landing heap (some 300 contacts, between two boxes or a box and the ground) */
static fl_world *landing_heap(void) {
  fl_world *w;
  if (fl_scene_create("box_pile", 0, NULL, &w) < 0) return NULL;
  w->compute_metrics = 0;
  fl_solver *s = pgs(20, 1);
  for (int k = 0; k < 40 && s; k++)
    if (fl_world_step(w, s, NULL) < 0) break;
  fl_solver_destroy(s);
  if (fl_world_prepare(w, NULL) < 0) {
    fl_world_free(w);
    return NULL;
  }
  return w;
}


/* J A^-1 of rigid cliques row by row (fl__dyn_rows) gives the entries of the batched solves
 * to the bit, each row is A^-1 J_r^T (fl_dynamics_solve_A on the row, to the bit), and the
 * Delassus blocks are the same too. */
FL_TEST(jainv_rows_same_as_batches) {
  fl_world *w = landing_heap();
  ASSERT(w);
  fl_problem *p = fl_world_problem(w);
  ASSERT(p->nc >= 50);
  fl_int nr = 3 * p->nc + p->nh;
  fl_csr *B[2] = {NULL, NULL};
  double *Wc[2];
  for (int c = 0; c < 2; c++) {
    fl__dyn_rows = c == 0;
    fl_dynamics *d = NULL;
    ASSERT_OK(fl_dynamics_create(p, &d));
    const fl_csr *b = fl_dynamics_JAinv(d);
    ASSERT(b);
    ASSERT_OK(fl_csr_copy(b, &B[c]));
    Wc[c] = calloc((size_t)(9 * p->nc), sizeof(double));
    ASSERT(Wc[c]);
    ASSERT_OK(fl_dynamics_delassus_blocks(d, Wc[c], NULL));
    if (c == 0) {
      // row r of B against A^-1 J_r^T from a dense right-hand side
      double *y = calloc((size_t)p->nv, sizeof(double)), *x = calloc((size_t)p->nv, sizeof(double));
      ASSERT(y && x);
      for (fl_int r = 0; r < nr; r++) {
        for (fl_int k = 0; k < p->nv; k++) y[k] = 0.0;
        for (fl_int k = p->J->rowptr[r]; k < p->J->rowptr[r + 1]; k++) y[p->J->col[k]] += p->J->val[k];
        fl_dynamics_solve_A(d, y, x);
        for (fl_int k = b->rowptr[r]; k < b->rowptr[r + 1]; k++)
          ASSERT(memcmp(&b->val[k], &x[b->col[k]], sizeof(double)) == 0);
      }
      free(y);
      free(x);
    }
    fl_dynamics_free(d);
  }
  fl__dyn_rows = 1;
  ASSERT_EQ(B[0]->rowptr[nr], B[1]->rowptr[nr]);
  ASSERT(memcmp(B[0]->col, B[1]->col, (size_t)B[0]->rowptr[nr] * sizeof(fl_int)) == 0);
  ASSERT(memcmp(B[0]->val, B[1]->val, (size_t)B[0]->rowptr[nr] * sizeof(double)) == 0);
  ASSERT(memcmp(Wc[0], Wc[1], (size_t)(9 * p->nc) * sizeof(double)) == 0);
  for (fl_int i = 0; i < p->nc; i++) ASSERT(Wc[0][9 * i] > 0); // W_nn > 0
  for (int c = 0; c < 2; c++) {
    fl_csr_free(B[c]);
    free(Wc[c]);
  }
  fl_world_free(w);
  return 0;
}


/* PGS sweeps a contact of rigid bodies by its runs of 6 dofs (fl__pgs_runs) with the same
 * impulses and velocities, to the bit, as through the column indices; and so do its own
 * residual (J v by the runs) and a warm start (v* + B^T gamma by the runs) */
FL_TEST(pgs_runs_same_iterates) {
  fl_world *w = landing_heap();
  ASSERT(w);
  fl_problem *p = fl_world_problem(w);
  ASSERT(p->nc >= 50);
  fl_int nr = 3 * p->nc + p->nh, n12 = 0;
  for (fl_int i = 0; i < p->nc; i++) n12 += p->J->rowptr[3 * i + 1] - p->J->rowptr[3 * i] == 12;
  ASSERT(n12 > 0); // box-box contacts: two runs
  double *v[2], *g[2], err[2][3];
  for (int c = 0; c < 2; c++) {
    fl__pgs_runs = c == 0;
    v[c] = calloc((size_t)p->nv, sizeof(double));
    g[c] = calloc((size_t)nr, sizeof(double));
    ASSERT(v[c] && g[c]);
    fl_solver *t = pgs(9, 0);
    ASSERT(t);
    ASSERT_OK(fl_solver_set_option(t, "abs_tol", "0"));
    fl_result res;
    ASSERT_OK(fl_solver_setup(t, p));
    // runs on: J A^-1 and W's blocks by the rigid bodies' own set-up; off: by fl_dynamics
    static char view[8192];
    memset(view, 0, sizeof view);
    FILE *vf = fmemopen(view, sizeof view - 1, "w");
    ASSERT(vf);
    fl_solver_view(t, vf);
    fclose(vf);
    ASSERT((strstr(view, "rigid bodies' set-up") != NULL) == (c == 0));
    ASSERT_OK(fl_solver_solve(t, p, v[c], g[c], &res));
    ASSERT_EQ(res.iters, 9);
    int nh = 0;
    const fl_iter_stat *h = fl_solver_history(t, &nh);
    ASSERT_EQ(nh, 10);
    err[c][0] = h[9].error;
    fl_solver_destroy(t);
    // three more sweeps warm-started from those impulses
    t = pgs(3, 1);
    ASSERT(t);
    ASSERT_OK(fl_solver_set_option(t, "abs_tol", "0"));
    ASSERT_OK(fl_solver_setup(t, p));
    ASSERT_OK(fl_solver_solve(t, p, v[c], g[c], &res));
    h = fl_solver_history(t, &nh);
    ASSERT_EQ(nh, 4);
    err[c][1] = h[0].error, err[c][2] = h[3].error;
    fl_solver_destroy(t);
  }
  fl__pgs_runs = 1;
  for (int k = 0; k < 3; k++) ASSERT(memcmp(&err[0][k], &err[1][k], sizeof(double)) == 0);
  ASSERT(err[0][1] > 0 && err[0][1] < err[0][0] * 2);
  ASSERT(memcmp(g[0], g[1], (size_t)nr * sizeof(double)) == 0);
  ASSERT(memcmp(v[0], v[1], (size_t)p->nv * sizeof(double)) == 0);
  double gn = 0;
  for (fl_int i = 0; i < p->nc; i++) gn += g[0][3 * i];
  ASSERT(gn > 0);
  for (int c = 0; c < 2; c++) {
    free(v[c]);
    free(g[c]);
  }
  fl_world_free(w);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
/* check_cases.c: what `frictionlab check` runs (docs/check.md): the quantities of a record with
 * their tolerance floors, and one table of cases. Adding a case is a row here; the command
 * (harness/cli/check.c) runs every canonical scene with every registered CPU solver, at the
 * row's settings. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_cases.h"

/* Floors (rel, abs) absorb round-off on another compiler or BLAS without hiding a 1 % change in
 * accuracy; solve_s is informative only. */
const check_quantity fl__check_q[NQ] = {
  {"nfail", 0, 0},            {"merit_p50", 0.01, 1e-12}, {"merit_p90", 0.01, 1e-12},
  {"merit_max", 0.01, 1e-12}, {"joint_p90", 0.01, 1e-12}, {"iters_mean", 0.02, 0.05},
  {"pen_max", 0.01, 1e-10},   {"drift_max", 0.01, 1e-9},  {"own_p90", 0.1, 1e-14},
  {"solve_s", INFINITY, INFINITY}, {"limit_steps", 0, 0},
};

/* Enough steps for contact to happen and the solver to matter, scene settings keeping a case
 * small, and solver options so that a case's solver converges where a modest budget allows it
 * (a case that fails every step can only regress in its merit). */
static const check_case cases[] = {
  /* every scene: NSN's 8-iteration default fails every step; ADMM's 1e5 is sized for single
   * FCLIB problems (on world steps a failing step would take 1e5 iterations) */
  {"*", .steps = 20, .opts = {{"nsn", "max_iter=30"}, {"admm", "max_iter=2000"}}},
  /* 60 grains: contact from step 0, 238 contacts by step 200 */
  {"granular", .set = "n=60", .steps = 20},
  /* the first contact is at step 35 */
  {"table_pile", .steps = 60},
  /* the bottom layer lands from step 16, the second follows */
  {"box_pile", .steps = 30},
  /* not the default 12 rings: the one coin couples every triangle, so NSN's Alart-Curnier
   * Jacobian (3 nc rows) is dense and its LU grows like rows^2.5: 1.2 s a step at 8 rings
   * (1152 rows), 7-9 s at 12 (2592), 0.1 s on the fan (3 Newton iterations each; docs/coin.md) */
  {"spinning_coin", .set = "rings=8", .steps = 20},
  /* PGS converges in 1354 sweeps on average */
  {"cylinder_press", .opts = {{"pgs", "max_iter=5000"}}},
};
enum { NCASES = (int)(sizeof cases / sizeof cases[0]) };

const char fl__check_verify_solvers[] = "pgs,jacobi,primal-descent,dual-descent,sap,nsn,prox";


static const check_case *find(const char *scene) {
  for (int i = 0; i < NCASES; i++)
    if (!strcmp(cases[i].scene, scene)) return &cases[i];
  return NULL;
}


const char *fl__check_scene_set(const char *scene) {
  const check_case *c = find(scene);
  return c && c->set ? c->set : "";
}


int fl__check_scene_steps(const char *scene) {
  const check_case *c = find(scene);
  return c && c->steps ? c->steps : find("*")->steps;
}


const char *fl__check_solver_opts(const char *scene, const char *solver, char *buf, size_t n) {
  const check_case *rows[2] = {find("*"), find(scene)};
  buf[0] = '\0';
  for (int i = 0; i < 2; i++)
    for (int k = 0; rows[i] && k < CHECK_MAXOPTS && rows[i]->opts[k][0]; k++) {
      if (strcmp(rows[i]->opts[k][0], solver)) continue;
      size_t len = strlen(buf);
      snprintf(buf + len, n - len, "%s%s", len ? "," : "", rows[i]->opts[k][1]);
    }
  return buf;
}

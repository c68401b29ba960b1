// SPDX-License-Identifier: Apache-2.0
/* coin_run.c: the runner of the sliding and spinning coin (scene_coin.c) that measures its
 * terminal ratio eps* = lim v/(omega R); apart from the scene so that the scene registry
 * (scenes.c) and the runner, which builds the scene through it, do not depend on each other.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fl_hydro.h"
#include "fl_loop.h"
#include "scenes_impl.h"

//---- runner ----

double fl_coin_eps_star(const double *v, const double *wr, int n, double s_min) {
  for (int k = n - 1; k >= 0; k--)
    if (v[k] + wr[k] > s_min) return wr[k] > 0 ? v[k] / wr[k] : INFINITY;
  return NAN;
}


/* the coin's measurement after each step (fl_loop each) */
typedef struct coin_step_ctx {
  fl_coin_run *out;
  fl_int coin;
  double R, s_rest; /* coin radius (m); rest threshold on v + omega R (m/s) */
  double last_eps;  /* v/(omega R) where v + omega R last exceeded s_min */
  double *t, *v, *wr;
  int cap;
  fl_step_observer observe; /* the caller's observer and its context */
  void *observe_ctx;
} coin_step_ctx;


static int coin_frame(void *ctx, fl_world *w, long step, const fl_step_info *info) {
  coin_step_ctx *c = ctx;
  return c->observe(c->observe_ctx, w, step, info);
}


static int coin_each(void *ctx, fl_world *w, long k, const fl_step_info *info, const double *val) {
  (void)k;
  (void)val;
  coin_step_ctx *c = ctx;
  fl_coin_run *out = c->out;
  out->solve_s += info->solve_s;
  const fl_body *b = &w->body[c->coin];
  double vv = hypot(b->vel[0], b->vel[1]), ww = fabs(b->omega[2]) * c->R;
  if (c->t && out->nsample < c->cap) {
    c->t[out->nsample] = w->t;
    c->v[out->nsample] = vv;
    c->wr[out->nsample] = ww;
    out->nsample++;
  }
  if (vv + ww > out->s_min) c->last_eps = ww > 0 ? vv / ww : INFINITY;
  if (vv + ww < c->s_rest) {
    out->t_stop = w->t;
    return FL_LOOP_STOP;
  }
  return FL_OK;
}


int fl_coin_simulate(const char *scene_set, const char *solver, const char *solver_set,
                     fl_coin_run *out, double *t, double *v, double *wr, int cap) {
  return fl_coin_simulate_observed(scene_set, solver, solver_set, out, t, v, wr, cap, NULL, NULL);
}


int fl_coin_simulate_observed(const char *scene_set, const char *solver, const char *solver_set,
                              fl_coin_run *out, double *t, double *v, double *wr, int cap,
                              fl_step_observer observe, void *ctx) {
  char sbuf[1024];
  const char *sset[32];
  int ns = fl_split_list(scene_set, sbuf, sizeof sbuf, sset, 32);
  memset(out, 0, sizeof *out);
  out->t_stop = out->eps_star = NAN;
  fl_world *w = NULL;
  fl_solver *s = NULL;
  if (ns < 0) return ns;
  int rc = fl_scene_create("spinning_coin", ns, sset, &w);
  if (rc < 0) return rc;
  rc = fl_solver_create(solver, &s);
  if (rc >= 0) rc = fl_solver_set_options(s, solver_set);
  fl_int coin = fl_world_find_body(w, "coin");
  if (rc >= 0 && coin < 0) rc = fl_seterr(FL_ERR_STATE, "coin: scene has no body 'coin'");
  double R = 0, mug = 0;
  if (rc >= 0) {
    R = w->body[coin].shape.size[0];
    mug = w->mat[w->body[coin].material].mu * fl_v3_norm(w->gravity);
    const fl_body *b = &w->body[coin];
    out->eps0 = b->omega[2] != 0 ? hypot(b->vel[0], b->vel[1]) / (fabs(b->omega[2]) * R) : INFINITY;
  }
  // rest: v + omega R below a twentieth of one step's friction deceleration
  double s_rest = 0.05 * mug * (w ? w->dt : 0);
  int steps = w ? (int)lround(w->duration / w->dt) : 0;
  // eps* is read where v + omega R last exceeded s_min = 10 mu g dt (docs/coin.md)
  out->s_min = 10 * mug * (w ? w->dt : 0);
  coin_step_ctx c = {out, coin, R, s_rest, NAN, t, v, wr, cap, observe, ctx};
  // the observer sees the start and every step (a recording filters its own frames)
  fl_loop loop = {.stepper = fl_stepper_solver(s), .steps = steps, .frame_every = 1,
                  .frame = observe ? coin_frame : NULL, .each = coin_each, .ctx = &c};
  if (rc >= 0) rc = fl_loop_run(&loop, w);
  out->steps = (int)loop.taken;
  out->nfail = (int)loop.failed;
  out->iters = loop.iters;
  double last_eps = c.last_eps;
  out->eps_star = last_eps;
  fl_solver_destroy(s);
  fl_world_free(w);
  return rc < 0 ? rc : FL_OK;
}

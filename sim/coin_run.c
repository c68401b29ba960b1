/* coin_run.c: the runner of the sliding and spinning coin (scene_coin.c) that measures its
 * terminal ratio eps* = lim v/(omega R); apart from the scene so that the scene registry
 * (scenes.c) and the runner, which builds the scene through it, do not depend on each other.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fl_hydro.h"
#include "scenes_impl.h"

//---- runner ----

double fl_coin_eps_star(const double *v, const double *wr, int n, double s_min) {
  for (int k = n - 1; k >= 0; k--)
    if (v[k] + wr[k] > s_min) return wr[k] > 0 ? v[k] / wr[k] : INFINITY;
  return NAN;
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
  double last_eps = NAN;
  if (rc >= 0 && observe) rc = observe(ctx, w, 0, NULL);
  for (int k = 0; rc >= 0 && k < steps; k++) {
    fl_step_info info;
    rc = fl_world_step(w, s, &info);
    if (rc >= 0 && observe) rc = observe(ctx, w, k + 1, &info);
    if (rc < 0) break;
    out->steps++;
    if (info.res.reason < 0) out->nfail++;
    out->iters += info.res.iters;
    out->solve_s += info.solve_s;
    const fl_body *b = &w->body[coin];
    double vv = hypot(b->vel[0], b->vel[1]), ww = fabs(b->omega[2]) * R;
    if (t && out->nsample < cap) {
      t[out->nsample] = w->t;
      v[out->nsample] = vv;
      wr[out->nsample] = ww;
      out->nsample++;
    }
    if (vv + ww > out->s_min) last_eps = ww > 0 ? vv / ww : INFINITY;
    if (vv + ww < s_rest) {
      out->t_stop = w->t;
      break;
    }
  }
  out->eps_star = last_eps;
  fl_solver_destroy(s);
  fl_world_free(w);
  return rc < 0 ? rc : FL_OK;
}

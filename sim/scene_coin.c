/* scene_coin.c: the sliding and spinning coin (seed 002 section V-A, PROBLEMS.md section 4)
 * and a runner that measures its terminal ratio eps* = lim v/(omega R).
 *
 * A US quarter (R 1.213 cm, thickness 1.75 mm, 5.67 g, mu 0.2) lies flat on a rigid plane; it is
 * a hydroelastic cylinder (E_h 1 GPa) whose patch is a fan of 152 triangles by default
 * (hydroelastic.c). It starts at its static penetration with speed v0 along x and spin omega0
 * about z such that v0/(omega0 R) = eps0 and sqrt(v0^2 + (omega0 R)^2) = speed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fl_hydro.h"
#include "scenes_impl.h"

typedef struct coin_params {
  fl_scene_common c;
  double radius, thickness, mass, mu;
  double modulus; /* E_h (Pa) */
  double tau_d;   /* dissipation time scale (s) */
  int fan;        /* triangles of the fan patch */
  int rings;      /* > 0: a ring mesh of this many rings instead of the fan */
  double eps0;    /* v0/(omega0 R) */
  double speed;   /* sqrt(v0^2 + (omega0 R)^2) (m/s) */
} coin_params;

static const fl_option_desc coin_opts[] = {
  FL__COMMON(coin_params, 1e-3, 3.0, 1e-4),
  FL__REAL(coin_params, radius, 1e-6, 1e3, 0.01213, "coin radius R (m)"),
  FL__REAL(coin_params, thickness, 1e-7, 1e3, 0.00175, "coin thickness (m)"),
  FL__REAL(coin_params, mass, 1e-9, 1e6, 0.00567, "coin mass (kg)"),
  FL__REAL(coin_params, mu, 1e-6, 100, 0.2, "friction coefficient"),
  FL__REAL(coin_params, modulus, 1, 1e15, 1e9, "hydroelastic modulus E_h (Pa)"),
  FL__REAL(coin_params, tau_d, 0, 1e3, 0, "dissipation time scale of the contact (s)"),
  FL__INT(coin_params, fan, 3, 100000, FL_HYDRO_FAN_DEFAULT,
          "patch: a fan of this many triangles about the centre"),
  FL__INT(coin_params, rings, 0, 200, 0,
          "> 0: patch of this many concentric rings (6 rings^2 triangles, size R/rings) instead"),
  FL__REAL(coin_params, eps0, 0, 1e12, 1, "initial v/(omega R)"),
  FL__REAL(coin_params, speed, 0, 1e3, 1, "initial sqrt(v^2 + (omega R)^2) (m/s)"),
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}
};

static int coin_build(const void *pp, fl_world *w) {
  const coin_params *p = pp;
  int mat = fl_world_add_material(w, "coin", p->mu, INFINITY, p->tau_d);
  FL_TRY(mat);
  FL_TRY(fl__add_ground(w, mat, 0));
  double R = p->radius, h = p->thickness / 2, m = p->mass;
  fl_shape s;
  FL_TRY(fl_shape_make_cylinder(R, h, 0, &s));
  // the round cylinder's inertia about its centre
  double I[9] = {m * (3 * R * R + 4 * h * h) / 12, 0, 0, 0, m * (3 * R * R + 4 * h * h) / 12, 0,
                 0, 0, m * R * R / 2};
  fl_body_desc d = fl__desc("coin", FL_BODY_DYNAMIC, mat);
  d.mass = m;
  d.inertia = I;
  // static penetration: the patch (an inscribed polygon of nside sides) carries m g at a
  // uniform pressure E_h delta/hf
  int mesh = p->rings > 0 ? -p->rings : p->fan;
  int nside = p->rings > 0 ? 6 * p->rings : p->fan;
  double area = 0.5 * nside * R * R * sin(2 * M_PI / nside), hf = h < R ? h : R;
  double delta = m * fl_v3_norm(w->gravity) * hf / (p->modulus * area);
  d.pos[2] = h - delta;
  double e = p->eps0, sp = p->speed;
  d.vel[0] = sp * e / sqrt(1 + e * e);
  d.omega[2] = sp / sqrt(1 + e * e) / R;
  fl_int k = fl__add_shape(w, &d, &s);
  FL_TRY(k);
  w->body[k].hydro_modulus = p->modulus;
  w->body[k].hydro_mesh = mesh;
  double par[1] = {R};
  FL_TRY(fl_world_add_group(w, FL_OBS_COIN, 1, &k, par, 1));
  return FL_OK;
}

const fl_scene_desc fl__spinning_coin_scene = {
  "spinning_coin", "sliding and spinning coin on hydroelastic patches (seed 002 Fig. 5-6)",
  "eps = v/(omega R) tends to 0.644 (152-triangle fan; 0.653 for the exact disk) as it stops",
  sizeof(coin_params), coin_opts, coin_build};


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

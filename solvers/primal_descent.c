// SPDX-License-Identifier: Apache-2.0
/* primal_descent.c: preconditioned gradient descent on the primal (velocity) problem with
 * relaxed contact (Macklin et al. 2020; thesis chapter 5, eqs. 105-136).
 *
 * Minimize over v
 *
 *   g(v) = 1/2 (v - v*)^T A (v - v*) + sum_i U_n,i(v) + U_f,i(v) + sum_h U_h(v)
 *
 * with impulses (N s) derived from the potentials, gamma = -dU/du:
 *
 *   normal      C = phi0 + (dt + tau_d) u_n,          gamma_n = dt k |min(0, C)|^(p-1)
 *               (p = 2 is exactly the common compliant law gamma_n/dt = (-k phi - tau_d k u_n)_+,
 *               so on a compliant problem this solver converges to the problem's own model);
 *   friction    slip displacement s = dt u_t and the lagged normal impulse gamma_n:
 *               gamma_t = -min(dt^2 k_f, mu gamma_n / |u_t|) u_t     (relaxed Coulomb, eq. 133)
 *               or, with friction=smooth, the pseudo-Huber law
 *               gamma_t = -mu gamma_n u_t / sqrt(|u_t|^2 + eps^2), eps = mu gamma_n/(dt^2 k_f),
 *               which has the same slope at zero and is C-infinity;
 *   bilateral   a stiff spring: gamma_h = -(u_h + g0/dt)/c, c = compliance or 1/(dt^2 k_h).
 *
 * Step: v <- v - alpha P d, d = A (v - v*) - J^T gamma(v), P = diag(1/(A_dd + sum_r L_r J_rd^2))
 * with L_r the scalar Hessian of each row (eq. 116 and the scalar friction Hessian of eq. 136).
 * Rigid contacts (k = INFINITY) use the option k_n; k_f defaults to the contact's k_n.
 * The friction potential treats gamma_n as a constant (lagged normal force), which is why the
 * iteration is a descent method on a sequence of convex problems rather than on one.
 */
#include <math.h>
#include <string.h>

#include "fl_solver_impl.h"

typedef struct {
  double k_n;   /* normal stiffness for rigid contacts (N/m) */
  double k_f;   /* friction stiffness (N/m); 0 = the contact's normal stiffness */
  double k_h;   /* stiffness of hard bilateral rows (N/m or N m/rad) */
  double p;     /* penalty exponent >= 2 (C^(p-2) continuity of the force) */
  double alpha; /* step length */
  int friction; /* 0 relaxed (eq. 132), 1 smooth (pseudo-Huber) */
} pd_opts;

static const fl_option_desc pd_table[] = {
  {"k_n", FL_OPT_REAL, offsetof(pd_opts, k_n), 1e-12, INFINITY, 1e8, NULL,
   "normal stiffness used for rigid contacts (N/m)"},
  {"k_f", FL_OPT_REAL, offsetof(pd_opts, k_f), 0, INFINITY, 0, NULL,
   "friction stiffness (N/m); 0 = the contact's normal stiffness"},
  {"k_h", FL_OPT_REAL, offsetof(pd_opts, k_h), 1e-12, INFINITY, 1e8, NULL,
   "stiffness of bilateral rows with zero compliance"},
  {"p", FL_OPT_REAL, offsetof(pd_opts, p), 2, 8, 2, NULL, "exponent of the normal penalty"},
  {"alpha", FL_OPT_REAL, offsetof(pd_opts, alpha), 1e-6, 2, 0.5, NULL, "step length"},
  {"friction", FL_OPT_ENUM, offsetof(pd_opts, friction), 0, 0, 0, "relaxed|smooth",
   "friction law: relaxed Coulomb (quadratic stick region) or smooth pseudo-Huber"},
  {NULL, 0, 0, 0, 0, 0, NULL, NULL}};

typedef struct {
  double *adiag; /* (nv) diag(A) */
  double *dv;    /* (nv) v - v* */
  double *Adv;   /* (nv) */
  double *d;     /* (nv) gradient */
  double *prec;  /* (nv) sum_r L_r J_rd^2 accumulator, then P */
  double *u;     /* (m) */
  double *lam;   /* (m) scalar Hessian of each row */
  double *kn;    /* (nc) normal stiffness used per contact */
  double *jtg;   /* (nv) J^T gamma */
  double *avs;   /* (nv) A v*, constant over the solve */
} pd_data;


static int pd_setup(fl_solver *s, const fl_problem *p) {
  pd_data *w = s->data;
  const pd_opts *o = s->opts;
  fl_int nv = p->nv, m = fl_problem_nrows(p);
  size_t bytes = (size_t)(7 * nv + 2 * m + p->nc + 64) * sizeof(double) + 256;
  FL_TRY(fl_solver_arena_reserve(s, bytes));
  fl_arena *a = &s->arena;
  w->adiag = FL_ALLOC(a, nv, double);
  w->dv = FL_ALLOC(a, nv, double);
  w->Adv = FL_ALLOC(a, nv, double);
  w->d = FL_ALLOC(a, nv, double);
  w->prec = FL_ALLOC(a, nv, double);
  w->jtg = FL_ALLOC(a, nv, double);
  w->avs = FL_ALLOC(a, nv, double);
  w->u = FL_ALLOC(a, m, double);
  w->lam = FL_ALLOC(a, m, double);
  w->kn = FL_ALLOC(a, p->nc, double);
  if (!w->adiag || !w->dv || !w->Adv || !w->d || !w->prec || !w->jtg || !w->avs || !w->u ||
      !w->lam || !w->kn)
    return FL_ERR_NOMEM;
  for (fl_int i = 0; i < nv; i++) {
    w->adiag[i] = fl_csr_get(p->A, i, i);
    if (!(w->adiag[i] > 0))
      return fl_seterr(FL_ERR_NOT_SPD, "primal-descent: problem %s: A[%d][%d] = %g is not > 0",
                       p->name, (int)i, (int)i, w->adiag[i]);
  }
  for (fl_int i = 0; i < p->nc; i++) w->kn[i] = isinf(p->stiffness[i]) ? o->k_n : p->stiffness[i];
  fl_csr_gemv(p->A, 1, p->vstar, 0, w->avs);
  return FL_OK;
}


/* impulses gamma(v) and scalar row Hessians from u = J v + b; returns the potential energy */
static double pd_impulses(const fl_problem *p, const pd_opts *o, const pd_data *w,
                          const double *u, double *gamma, double *lam) {
  double dt = p->dt, energy = 0;
  for (fl_int i = 0; i < p->nc; i++) {
    const double *ui = u + 3 * i;
    double *gi = gamma + 3 * i, *li = lam + 3 * i;
    double k = w->kn[i], tau = p->tau_d[i], h = dt + tau;
    // normal: gamma_n = dt k |min(0, C)|^(p-1)
    // a rigid contact's recovery capped as the common law's (fl_problem.max_recovery)
    double phi = p->phi0[i];
    if (isinf(p->stiffness[i]) && phi < -p->max_recovery * h) phi = -p->max_recovery * h;
    double C = phi + h * ui[0], pen = C < 0 ? -C : 0;
    double gn = dt * k * pow(pen, o->p - 1);
    gi[0] = gn;
    li[0] = pen > 0 ? dt * h * k * (o->p - 1) * pow(pen, o->p - 2) : 0;
    energy += dt * k / (h * o->p) * pow(pen, o->p);
    // friction with gamma_n held fixed
    double kf = (o->k_f > 0 ? o->k_f : k) * dt * dt, mgn = p->mu[i] * gn;
    double ut = sqrt(ui[1] * ui[1] + ui[2] * ui[2]), c;
    if (mgn <= 0) {
      c = 0;
      li[1] = li[2] = 0;
    } else if (o->friction == 1) {
      double eps = mgn / kf, r = sqrt(ut * ut + eps * eps);
      c = mgn / r;
      li[1] = li[2] = c;
      energy += mgn * (r - eps);
    } else if (kf * ut < mgn) {
      c = kf; // stick: quadratic region
      li[1] = li[2] = kf;
      energy += 0.5 * kf * ut * ut;
    } else {
      c = mgn / ut; // slip: Coulomb magnitude
      li[1] = li[2] = c;
      energy += mgn * ut - 0.5 * mgn * mgn / kf;
    }
    gi[1] = -c * ui[1];
    gi[2] = -c * ui[2];
  }
  for (fl_int r = 0; r < p->nh; r++) {
    fl_int row = 3 * p->nc + r;
    double c = p->compliance[r] > 0 ? p->compliance[r] : 1 / (dt * dt * o->k_h);
    double e = u[row] + p->g0[r] / dt;
    double g = -e / c;
    if (g < p->lo[r]) g = p->lo[r];
    if (g > p->hi[r]) g = p->hi[r];
    gamma[row] = g;
    lam[row] = (g > p->lo[r] && g < p->hi[r]) ? 1 / c : 0;
    energy += 0.5 * e * e / c;
  }
  return energy;
}


/* gradient d, objective, own residual at v; fills gamma */
static double pd_eval(const fl_problem *p, const pd_opts *o, pd_data *w, const double *v,
                      double *gamma, double *objective, double *gnorm) {
  fl_int nv = p->nv;
  fl_problem_velocity(p, v, gamma, w->u);
  double energy = pd_impulses(p, o, w, w->u, gamma, w->lam);
  for (fl_int i = 0; i < nv; i++) w->dv[i] = v[i] - p->vstar[i];
  fl_csr_gemv(p->A, 1, w->dv, 0, w->Adv);
  fl_csr_gemtv(p->J, 1, gamma, 0, w->jtg);
  // d = A (v - v*) - J^T gamma; residual ||D d|| / max(||D A v||, ||D J^T gamma||), D = diag(A)^-1/2
  double kin = 0, nd = 0, nav = 0, njg = 0;
  for (fl_int i = 0; i < nv; i++) {
    w->d[i] = w->Adv[i] - w->jtg[i];
    kin += w->dv[i] * w->Adv[i];
    double di = 1 / w->adiag[i];
    nd += w->d[i] * w->d[i] * di;
    njg += w->jtg[i] * w->jtg[i] * di;
  }
  // ||D A v|| with A v = A (v - v*) + A v*
  for (fl_int i = 0; i < nv; i++) {
    double av = w->Adv[i] + w->avs[i];
    nav += av * av / w->adiag[i];
  }
  *objective = 0.5 * kin + energy;
  *gnorm = sqrt(nd);
  double scale = fmax(sqrt(nav), sqrt(njg));
  return scale > 0 ? sqrt(nd) / scale : sqrt(nd);
}


static int pd_solve(fl_solver *s, const fl_problem *p, double *v, double *gamma) {
  pd_data *w = s->data;
  const pd_opts *o = s->opts;
  fl_int nv = p->nv;
  const fl_csr *J = p->J;
  double last_step = NAN;
  for (int k = 0;; k++) {
    //---- evaluate at the current iterate and record it ----
    fl_iter_stat st;
    fl_iter_stat_init(&st, k);
    double obj, gnorm;
    st.error = pd_eval(p, o, w, v, gamma, &obj, &gnorm);
    st.objective = obj;
    st.gradient = gnorm;
    st.step = k > 0 ? o->alpha : NAN;
    st.step_norm = last_step;
    int nact = 0, nstick = 0, nslip = 0;
    for (fl_int i = 0; i < p->nc; i++) {
      if (gamma[3 * i] <= 0) continue;
      nact++;
      double kf = (o->k_f > 0 ? o->k_f : w->kn[i]) * p->dt * p->dt;
      double ut = hypot(w->u[3 * i + 1], w->u[3 * i + 2]);
      if (kf * ut < p->mu[i] * gamma[3 * i]) {
        nstick++;
      } else {
        nslip++;
      }
    }
    st.nactive = nact;
    st.nstick = nstick;
    st.nslip = nslip;
    s->cur_v = v;
    s->cur_gamma = gamma;
    if (fl_solver_record(s, &st) != 0) break;

    //---- preconditioner P_dd = 1/(A_dd + sum_r L_r J_rd^2) and step ----
    memcpy(w->prec, w->adiag, (size_t)nv * sizeof(double));
    for (fl_int r = 0; r < J->nrow; r++) {
      double l = w->lam[r];
      if (l == 0) continue;
      for (fl_int q = J->rowptr[r]; q < J->rowptr[r + 1]; q++)
        w->prec[J->col[q]] += l * J->val[q] * J->val[q];
    }
    double sn = 0;
    for (fl_int i = 0; i < nv; i++) {
      double dvi = o->alpha * w->d[i] / w->prec[i];
      v[i] -= dvi;
      sn += dvi * dvi;
    }
    last_step = sqrt(sn);
  }
  return FL_OK;
}


static void pd_view(const fl_solver *s, FILE *f) {
  const pd_opts *o = s->opts;
  fprintf(f, "  primal descent: normal penalty p = %g, friction %s, step %g\n", o->p,
          o->friction ? "smooth (pseudo-Huber)" : "relaxed Coulomb", o->alpha);
}


const fl_solver_ops fl_primal_descent_ops = {
  .abi_version = FL_SOLVER_ABI,
  .name = "primal-descent",
  .summary = "preconditioned gradient descent on relaxed (penalty) contact (Macklin 2020)",
  .opts_size = sizeof(pd_opts),
  .options = pd_table,
  .data_size = sizeof(pd_data),
  .caps = FL_CAP_RIGID | FL_CAP_COMPLIANT | FL_CAP_BILATERAL | FL_CAP_NEEDS_AJ |
          FL_CAP_WARMSTART | FL_CAP_REGULARIZED,
  .setup = pd_setup,
  .solve = pd_solve,
  .view = pd_view,
  .destroy = NULL,
  .common_defaults = "max_iter=20,never_stop=true",
};


double fl__primal_descent_eval(fl_solver *s, const fl_problem *p, const double *v,
                               double *gamma, double *grad) {
  pd_data *w = s->data;
  double obj, gnorm;
  pd_eval(p, s->opts, w, v, gamma, &obj, &gnorm);
  if (grad) memcpy(grad, w->d, (size_t)p->nv * sizeof(double));
  return obj;
}

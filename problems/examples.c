// SPDX-License-Identifier: Apache-2.0
/* examples.c: small hand-made problems with closed-form answers.
 *
 * Used by the conformance test, the metrics tests and `frictionlab solve` without a file.
 * Conventions (fl_problem.h): a rigid body has the generalized velocities
 * (v_x, v_y, v_z, w_x, w_y, w_z) of its centre of mass, all in the world frame, and the 6x6
 * world-frame mass matrix diag(m, m, m, I). A contact between body a (or the world) and body b
 * has its normal n pointing from a to b; the row of J for a direction d of the contact frame is
 *     u_d = d . (v_b + w_b x r_b) - d . (v_a + w_a x r_a),   r = p - c,
 * i.e. [d^T, (r_b x d)^T] on b's dofs and minus [d^T, (r_a x d)^T] on a's. Gravity is
 * g = 9.81 m/s^2 along -z, so v* = v0 + dt (f/m - g e_z) for translation. Frames are (n, t1, t2)
 * = (e_z, e_x, e_y) for every example, right-handed.
 *
 * The closed forms are written above each builder and returned by fl_example_solution().
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fl_problem.h"

#define EX_G 9.81

static const char *const ex_names[] = {
    "one_contact_slide", "one_contact_stick", "box_on_plane", "box_on_plane_compliant",
    "box_push_slide",    "two_box_stack",     "pendulum_bilateral", NULL};

const char *const *fl_examples_list(void) { return ex_names; }


//---- a tiny scene builder (at most a few bodies and contacts) ----

#define EX_MAXB 4
#define EX_MAXT 1024

typedef struct ex_scene {
  int nb;
  double mass[EX_MAXB], inertia[EX_MAXB]; /* isotropic inertia about the centre (kg m^2) */
  double center[EX_MAXB][3];
  double v0[EX_MAXB][6];
  double force[EX_MAXB][3]; /* applied force besides gravity (N) */
  fl_int nt;                /* triplets of J */
  fl_int ti[EX_MAXT], tj[EX_MAXT];
  double tv[EX_MAXT];
} ex_scene;


static int ex_body(ex_scene *s, double m, double inertia, double cx, double cy, double cz) {
  int b = s->nb++;
  s->mass[b] = m;
  s->inertia[b] = inertia;
  s->center[b][0] = cx;
  s->center[b][1] = cy;
  s->center[b][2] = cz;
  memset(s->v0[b], 0, sizeof(s->v0[b]));
  memset(s->force[b], 0, sizeof(s->force[b]));
  return b;
}


static void ex_trip(ex_scene *s, fl_int row, fl_int col, double val) {
  if (val == 0.0 || s->nt >= EX_MAXT) return;
  s->ti[s->nt] = row;
  s->tj[s->nt] = col;
  s->tv[s->nt++] = val;
}


/* adds the row u_d = d . (velocity of point p on b) - d . (velocity of p on a); -1 = world */
static void ex_row(ex_scene *s, fl_int row, int a, int b, const double p[3], const double d[3]) {
  int bodies[2] = {a, b};
  double sign[2] = {-1.0, 1.0};
  for (int k = 0; k < 2; k++) {
    int body = bodies[k];
    if (body < 0) continue;
    double r[3] = {p[0] - s->center[body][0], p[1] - s->center[body][1],
                   p[2] - s->center[body][2]};
    double rxd[3];
    fl_v3_cross(r, d, rxd);
    for (int c = 0; c < 3; c++) {
      ex_trip(s, row, 6 * body + c, sign[k] * d[c]);
      ex_trip(s, row, 6 * body + 3 + c, sign[k] * rxd[c]);
    }
  }
}


/* a contact at p between a and b with frame (e_z, e_x, e_y): three rows of J, point, frame */
static void ex_contact(ex_scene *s, fl_problem *pr, fl_int i, int a, int b, const double p[3],
                       double mu) {
  static const double fr[9] = {0, 0, 1, 1, 0, 0, 0, 1, 0};
  for (int k = 0; k < 3; k++) ex_row(s, 3 * i + k, a, b, p, fr + 3 * k);
  memcpy(pr->point + 3 * i, p, 3 * sizeof(double));
  memcpy(pr->frame + 9 * i, fr, 9 * sizeof(double));
  pr->mu[i] = mu;
  pr->feature[i] = i;
  // cliques are the bodies: the smaller id first, -1 (world) second
  pr->clique_a[i] = (a >= 0 && a < b) ? a : b;
  pr->clique_b[i] = (a >= 0 && a < b) ? b : a;
}


/* A, v0, v*, J and the cliques of a global problem from the scene */
static int ex_finish(ex_scene *s, fl_problem *p) {
  fl_int ti[6 * EX_MAXB], tj[6 * EX_MAXB];
  double tv[6 * EX_MAXB];
  for (int b = 0; b < s->nb; b++) {
    for (int k = 0; k < 6; k++) {
      fl_int d = 6 * b + k;
      ti[d] = tj[d] = d;
      tv[d] = k < 3 ? s->mass[b] : s->inertia[b];
      p->v0[d] = s->v0[b][k];
      p->vstar[d] = s->v0[b][k];
    }
    // v* = v0 + dt A^-1 f with gravity and the applied force
    for (int k = 0; k < 3; k++) p->vstar[6 * b + k] += p->dt * s->force[b][k] / s->mass[b];
    p->vstar[6 * b + 2] -= p->dt * EX_G;
  }
  FL_TRY(fl_csr_from_triplets(p->nv, p->nv, p->nv, ti, tj, tv, &p->A));
  FL_TRY(fl_csr_from_triplets(fl_problem_nrows(p), p->nv, s->nt, s->ti, s->tj, s->tv, &p->J));
  // one clique per body, its six dofs in order
  p->ncl = s->nb;
  for (int b = 0; b <= s->nb; b++) p->clique_ptr[b] = 6 * b;
  for (fl_int d = 0; d < p->nv; d++) {
    p->clique_dof[d] = d;
    p->dof_clique[d] = d / 6;
  }
  return FL_OK;
}


//---- the examples ----

/* one_contact_slide: local, W = I, q = (-1, 0.5, 0.2), mu = 0.3. Sliding: u_n = 0 gives
 * gamma_n = 1 and gamma_t = -mu gamma_n q_t/||q_t|| = (-0.278543, -0.111417) (||q_t|| =
 * sqrt(0.29)); u_t = q_t (1 - mu/||q_t||) stays parallel to q_t, so the answer is unique. */
static int ex_slide(fl_problem **out) {
  static const fl_int ij[3] = {0, 1, 2};
  static const double one[3] = {1, 1, 1};
  fl_problem *p;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 1, 0, 0, &p));
  int rc = fl_csr_from_triplets(3, 3, 3, ij, ij, one, &p->W);
  p->q[0] = -1.0;
  p->q[1] = 0.5;
  p->q[2] = 0.2;
  p->mu[0] = 0.3;
  *out = p;
  return rc;
}


/* one_contact_stick: local, W = [[2, 0.5, 0], [0.5, 1, 0], [0, 0, 1]], q = (-2, 0.3, 0.1),
 * mu = 1. Sticking: u = 0 gives gamma = -W^-1 q = (43/35, -32/35, -1/10); ||gamma_t|| =
 * 0.91974 < mu gamma_n = 1.22857, so gamma is inside the cone and, W being SPD, unique. */
static int ex_stick(fl_problem **out) {
  static const fl_int ti[5] = {0, 0, 1, 1, 2}, tj[5] = {0, 1, 0, 1, 2};
  static const double tv[5] = {2, 0.5, 0.5, 1, 1};
  fl_problem *p;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_LOCAL, 0, 1, 0, 0, &p));
  int rc = fl_csr_from_triplets(3, 3, 5, ti, tj, tv, &p->W);
  p->q[0] = -2.0;
  p->q[1] = 0.3;
  p->q[2] = 0.1;
  p->mu[0] = 1.0;
  *out = p;
  return rc;
}


/* the four bottom corners of a cube of half edge h centred at (0, 0, zc), in the order
 * (+,+), (+,-), (-,+), (-,-) of (x, y) */
static void ex_corners(double h, double zc, double pts[4][3]) {
  for (int k = 0; k < 4; k++) {
    pts[k][0] = (k < 2) ? h : -h;
    pts[k][1] = (k % 2 == 0) ? h : -h;
    pts[k][2] = zc - h;
  }
}


/* box_on_plane: a rigid 1 kg cube of edge 0.5 m (I = m a^2/6) resting on the ground, four
 * rigid corner contacts, mu = 0.5, dt = 0.01, v0 = 0, v* = -g dt e_z. Answer: v = 0, no
 * friction, normal impulses summing to m g dt = 0.0981 N s with zero moment. The split is not
 * unique (four normals, three equations: the pattern (1, -1, -1, 1) is free); the symmetric
 * answer is m g dt/4 per corner. */
static int ex_box(const char *name, double k, double tau, double push, double v0x,
                  fl_problem **out) {
  fl_problem *p;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_GLOBAL, 6, 4, 0, 0, &p));
  snprintf(p->name, sizeof(p->name), "%s", name);
  p->dt = 0.01;
  ex_scene s;
  memset(&s, 0, sizeof(s));
  double m = 1.0, a = 0.5, h = 0.25, pts[4][3];
  int b = ex_body(&s, m, m * a * a / 6.0, 0, 0, h);
  s.v0[b][0] = v0x;
  s.force[b][0] = push;
  ex_corners(h, h, pts);
  for (fl_int i = 0; i < 4; i++) {
    ex_contact(&s, p, i, -1, b, pts[i], 0.5);
    p->stiffness[i] = k;
    p->tau_d[i] = tau;
    // compliant: start at the static sag so that the springs carry the weight exactly
    p->phi0[i] = isfinite(k) ? -m * EX_G / (4.0 * k) : 0.0;
  }
  int rc = ex_finish(&s, p);
  *out = p;
  return rc;
}


/* two_box_stack: rigid cubes of edge 0.5 m, 1 kg below on the ground and 10 kg on top (mass
 * ratio 10), four rigid corner contacts per interface (contacts 0-3 ground/lower, 4-7
 * lower/upper), mu = 0.5, dt = 0.01, at rest. Answer: v = 0, no friction, the ground normals
 * sum to (m1 + m2) g dt = 1.0791 N s and the interface normals to m2 g dt = 0.981 N s (each
 * split symmetric up to the free pattern of box_on_plane). */
static int ex_stack(fl_problem **out) {
  fl_problem *p;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_GLOBAL, 12, 8, 0, 0, &p));
  snprintf(p->name, sizeof(p->name), "two_box_stack");
  p->dt = 0.01;
  ex_scene s;
  memset(&s, 0, sizeof(s));
  double a = 0.5, h = 0.25, pts[4][3];
  int lo = ex_body(&s, 1.0, 1.0 * a * a / 6.0, 0, 0, h);
  int up = ex_body(&s, 10.0, 10.0 * a * a / 6.0, 0, 0, 3 * h);
  ex_corners(h, h, pts);
  for (fl_int i = 0; i < 4; i++) ex_contact(&s, p, i, -1, lo, pts[i], 0.5);
  ex_corners(h, 3 * h, pts);
  for (fl_int i = 0; i < 4; i++) ex_contact(&s, p, 4 + i, lo, up, pts[i], 0.5);
  int rc = ex_finish(&s, p);
  *out = p;
  return rc;
}


/* pendulum_bilateral: a rigid ball (m = 1 kg, radius 0.1 m, I_c = 2/5 m r^2 = 0.004) whose
 * centre is at (L, 0, 0), L = 1 m, hinged to the world at the origin by a ball joint: three
 * hard bilateral rows "velocity of the anchor point (origin) on the ball = 0", no contacts,
 * dt = 0.01, released at rest. The step is a linear solve with the closed form (I_p = I_c +
 * m L^2 about the pivot): w_y = m g L dt / I_p, v = w x c = (0, 0, -m g L^2 dt / I_p), and the
 * joint impulse on the ball gamma = m (v - v*) = (0, 0, m g dt I_c / I_p). */
static int ex_pendulum(fl_problem **out) {
  fl_problem *p;
  FL_TRY(fl_problem_alloc(FL_PROBLEM_GLOBAL, 6, 0, 3, 0, &p));
  snprintf(p->name, sizeof(p->name), "pendulum_bilateral");
  p->dt = 0.01;
  ex_scene s;
  memset(&s, 0, sizeof(s));
  double m = 1.0, r = 0.1, L = 1.0;
  int b = ex_body(&s, m, 0.4 * m * r * r, L, 0, 0);
  static const double origin[3] = {0, 0, 0}, e[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (int k = 0; k < 3; k++) ex_row(&s, k, -1, b, origin, e[k]);
  int rc = ex_finish(&s, p);
  *out = p;
  return rc;
}


int fl_problem_create_example(const char *name, fl_problem **out) {
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_problem_create_example: out is NULL");
  *out = NULL;
  if (!name) name = "(null)";
  fl_problem *p = NULL;
  int rc;
  if (strcmp(name, "one_contact_slide") == 0) {
    rc = ex_slide(&p);
  } else if (strcmp(name, "one_contact_stick") == 0) {
    rc = ex_stick(&p);
  } else if (strcmp(name, "box_on_plane") == 0) {
    rc = ex_box(name, INFINITY, 0.0, 0.0, 0.0, &p);
  } else if (strcmp(name, "box_on_plane_compliant") == 0) {
    rc = ex_box(name, 1e4, 0.01, 0.0, 0.0, &p);
  } else if (strcmp(name, "box_push_slide") == 0) {
    rc = ex_box(name, INFINITY, 0.0, 9.81, 0.5, &p);
  } else if (strcmp(name, "two_box_stack") == 0) {
    rc = ex_stack(&p);
  } else if (strcmp(name, "pendulum_bilateral") == 0) {
    rc = ex_pendulum(&p);
  } else {
    char list[512] = "";
    for (int k = 0; ex_names[k]; k++) {
      strncat(list, k ? ", " : "", sizeof(list) - strlen(list) - 1);
      strncat(list, ex_names[k], sizeof(list) - strlen(list) - 1);
    }
    return fl_seterr(FL_ERR_UNKNOWN_PROBLEM, "unknown example problem '%s'; valid names: %s",
                     name, list);
  }
  if (rc == FL_OK && p) {
    snprintf(p->name, sizeof(p->name), "%s", name);
    rc = fl_problem_validate(p, name);
  }
  if (rc != FL_OK) {
    fl_problem_free(p);
    return rc;
  }
  *out = p;
  return FL_OK;
}


//---- closed-form answers ----

int fl_example_solution(const char *name, double *v, double *gamma) {
  double g = EX_G, dt = 0.01;
  if (!name) return fl_seterr(FL_ERR_INVAL, "fl_example_solution: name is NULL");
  if (strcmp(name, "one_contact_slide") == 0) {
    double nt = sqrt(0.29);
    if (gamma) {
      gamma[0] = 1.0;
      gamma[1] = -0.3 * 0.5 / nt;
      gamma[2] = -0.3 * 0.2 / nt;
    }
  } else if (strcmp(name, "one_contact_stick") == 0) {
    if (gamma) {
      gamma[0] = 43.0 / 35.0;
      gamma[1] = -32.0 / 35.0;
      gamma[2] = -0.1;
    }
  } else if (strcmp(name, "box_on_plane") == 0 || strcmp(name, "box_on_plane_compliant") == 0) {
    if (v) memset(v, 0, 6 * sizeof(double));
    if (gamma) {
      for (int i = 0; i < 4; i++) {
        gamma[3 * i] = 1.0 * g * dt / 4.0;
        gamma[3 * i + 1] = gamma[3 * i + 2] = 0.0;
      }
    }
  } else if (strcmp(name, "box_push_slide") == 0) {
    // m = 1, mu = 0.5, F = 9.81 N along x, v0 = 0.5 m/s: v_x = v0 + (F/m - mu g) dt, w = 0;
    // the friction moment -h (-mu N) about y shifts load forward: n_front - n_back = mu N
    double m = 1.0, mu = 0.5, N = m * g * dt;
    if (v) {
      memset(v, 0, 6 * sizeof(double));
      v[0] = 0.5 + (9.81 / m - mu * g) * dt;
    }
    if (gamma) {
      for (int i = 0; i < 4; i++) {
        double n = (i < 2) ? N * (1.0 + mu) / 4.0 : N * (1.0 - mu) / 4.0;
        gamma[3 * i] = n;
        gamma[3 * i + 1] = -mu * n;
        gamma[3 * i + 2] = 0.0;
      }
    }
  } else if (strcmp(name, "two_box_stack") == 0) {
    if (v) memset(v, 0, 12 * sizeof(double));
    if (gamma) {
      for (int i = 0; i < 8; i++) {
        gamma[3 * i] = (i < 4 ? 11.0 : 10.0) * g * dt / 4.0;
        gamma[3 * i + 1] = gamma[3 * i + 2] = 0.0;
      }
    }
  } else if (strcmp(name, "pendulum_bilateral") == 0) {
    double m = 1.0, L = 1.0, Ic = 0.4 * m * 0.01, Ip = Ic + m * L * L;
    double wy = m * g * L * dt / Ip;
    if (v) {
      memset(v, 0, 6 * sizeof(double));
      v[2] = -wy * L;
      v[4] = wy;
    }
    if (gamma) {
      gamma[0] = gamma[1] = 0.0;
      gamma[2] = m * g * dt * Ic / Ip;
    }
  } else {
    return fl_seterr(FL_ERR_UNKNOWN_PROBLEM, "no closed-form answer for '%s'", name);
  }
  return FL_OK;
}

// SPDX-License-Identifier: Apache-2.0
/* joints.c: bilateral rows of the joints (weld, ball, distance, prismatic, revolute, drives).
 *
 * Every row is C(q) = g0 with rate dC/dt = ja . (v_a, w_a) + jb . (v_b, w_b), so that the
 * problem's row reads J_h v + b_h + g0/dt + c gamma_h = 0 (fl_problem.h). For a point row along
 * the world direction d between anchors pa (on a) and pb (on b):
 *     jb = (d, rb x d), ja = -(d, ra x d), g0 = d . (pb - pa),   r = anchor - centre of mass
 * (since d . (w x r) = w . (r x d)). Angular rows along e: jb = (0, e), ja = (0, -e), with the
 * small-angle error of the relative rotation (2 vec(q_err)) or of the axis alignment (a_a x a_b).
 * A distance spring of stiffness k and damping d = tau k is the compliant row of SAP's holonomic
 * model: c = 1/(dt (dt + tau) k) and g0/(dt + tau) in place of g0/dt (the difference goes into
 * b). A drive holds the relative velocity along the axis: b = -drive_velocity, g0 = 0, impulse
 * bounds +-drive_max_force dt.
 */
#include <math.h>
#include <string.h>

#include "world_impl.h"

//---- helpers ----

typedef struct jpose {
  double x[3];    /* centre of mass */
  double q[4];    /* orientation */
  double R[9];
  double p[3];    /* world anchor */
  double r[3];    /* anchor - centre of mass */
} jpose;


static void pose_of(const fl_world *w, int k, const double anchor[3], jpose *o) {
  if (k < 0) {
    memset(o, 0, sizeof *o);
    o->q[0] = 1;
    o->R[0] = o->R[4] = o->R[8] = 1;
    memcpy(o->p, anchor, 3 * sizeof(double));
    return;
  }
  const fl_body *b = &w->body[k];
  memcpy(o->x, b->pos, sizeof o->x);
  memcpy(o->q, b->quat, sizeof o->q);
  fl_quat_to_mat(b->quat, o->R);
  fl_m3_mulv(o->R, anchor, o->r);
  for (int i = 0; i < 3; i++) o->p[i] = o->x[i] + o->r[i];
}


static void row_init(fl__jrow *r) {
  memset(r, 0, sizeof *r);
  r->lo = -INFINITY;
  r->hi = INFINITY;
}


static void point_row(const jpose *a, const jpose *b, const double d[3], fl__jrow *r) {
  row_init(r);
  double ca[3], cb[3];
  fl_v3_cross(a->r, d, ca);
  fl_v3_cross(b->r, d, cb);
  for (int i = 0; i < 3; i++) {
    r->jb[i] = d[i];
    r->jb[3 + i] = cb[i];
    r->ja[i] = -d[i];
    r->ja[3 + i] = -ca[i];
  }
  double dp[3] = {b->p[0] - a->p[0], b->p[1] - a->p[1], b->p[2] - a->p[2]};
  r->g0 = fl_v3_dot(d, dp);
  r->positional = 1;
}


static void angular_row(const double e[3], double g0, fl__jrow *r) {
  row_init(r);
  for (int i = 0; i < 3; i++) {
    r->jb[3 + i] = e[i];
    r->ja[3 + i] = -e[i];
  }
  r->g0 = g0;
}


// small-angle rotation vector of q_b conj(q_a q_rel): zero at rest, rate w_b - w_a
static void rot_error(const jpose *a, const jpose *b, const double qrel[4], double th[3]) {
  double t[4], tc[4], e[4];
  fl_quat_mul(a->q, qrel, t);
  tc[0] = t[0];
  tc[1] = -t[1];
  tc[2] = -t[2];
  tc[3] = -t[3];
  fl_quat_mul(b->q, tc, e);
  double s = e[0] < 0 ? -2.0 : 2.0;
  for (int i = 0; i < 3; i++) th[i] = s * e[1 + i];
}


//---- rows of one joint ----

int fl__joint_rows(const fl_world *w, const fl_joint *j, double dt, fl__jrow *rows) {
  jpose a, b;
  pose_of(w, j->body_a, j->anchor_a, &a);
  pose_of(w, j->body_b, j->anchor_b, &b);
  static const double E[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  double aw[3], p1[3], p2[3], th[3];
  fl_m3_mulv(a.R, j->axis, aw);
  fl_v3_tangents(aw, p1, p2);
  int n = 0;
  switch (j->type) {
  case FL_JOINT_WELD:
    for (int k = 0; k < 3; k++) point_row(&a, &b, E[k], &rows[n++]);
    rot_error(&a, &b, j->qrel, th);
    for (int k = 0; k < 3; k++) angular_row(E[k], th[k], &rows[n++]);
    break;
  case FL_JOINT_BALL:
    for (int k = 0; k < 3; k++) point_row(&a, &b, E[k], &rows[n++]);
    break;
  case FL_JOINT_DISTANCE: {
    double d[3] = {b.p[0] - a.p[0], b.p[1] - a.p[1], b.p[2] - a.p[2]};
    double L = fl_v3_normalize(d);
    if (!(L > 1e-12)) {
      d[0] = d[1] = 0;
      d[2] = 1;
    }
    point_row(&a, &b, d, &rows[n]);
    rows[n].g0 = L - j->rest_length;
    if (isfinite(j->stiffness)) {
      double tau = j->damping / j->stiffness;
      rows[n].c = 1.0 / (dt * (dt + tau) * j->stiffness);
      rows[n].b = rows[n].g0 * (1.0 / (dt + tau) - 1.0 / dt);
    }
    n++;
    break;
  }
  case FL_JOINT_PRISMATIC:
    point_row(&a, &b, p1, &rows[n++]);
    point_row(&a, &b, p2, &rows[n++]);
    rot_error(&a, &b, j->qrel, th);
    for (int k = 0; k < 3; k++) angular_row(E[k], th[k], &rows[n++]);
    if (j->driven) {
      point_row(&a, &b, aw, &rows[n]);
      rows[n].g0 = 0;
      rows[n].positional = 0;
      rows[n].b = -j->drive_velocity;
      rows[n].lo = -j->drive_max_force * dt;
      rows[n].hi = j->drive_max_force * dt;
      n++;
    }
    break;
  case FL_JOINT_REVOLUTE: {
    for (int k = 0; k < 3; k++) point_row(&a, &b, E[k], &rows[n++]);
    double bw[3], cr[3];
    fl_m3_mulv(b.R, j->axis_b, bw);
    fl_v3_cross(aw, bw, cr);
    angular_row(p1, fl_v3_dot(p1, cr), &rows[n++]);
    angular_row(p2, fl_v3_dot(p2, cr), &rows[n++]);
    if (j->driven) {
      angular_row(aw, 0, &rows[n]);
      rows[n].b = -j->drive_velocity;
      rows[n].lo = -j->drive_max_force * dt;
      rows[n].hi = j->drive_max_force * dt;
      n++;
    }
    break;
  }
  }
  return n;
}

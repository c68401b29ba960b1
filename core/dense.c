// SPDX-License-Identifier: Apache-2.0
/* dense.c: vec3, mat3, quaternions and small dense factorizations (row-major). */
#include <math.h>
#include <string.h>

#include "fl_core.h"

//---- vec3 ----

double fl_v3_dot(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}


void fl_v3_cross(const double a[3], const double b[3], double out[3]) {
  double c0 = a[1] * b[2] - a[2] * b[1];
  double c1 = a[2] * b[0] - a[0] * b[2];
  double c2 = a[0] * b[1] - a[1] * b[0];
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
}


double fl_v3_norm(const double a[3]) { return sqrt(fl_v3_dot(a, a)); }


double fl_v3_normalize(double a[3]) {
  double n = fl_v3_norm(a);
  if (n > 0 && !(n > 1e-150 && n < 1e150)) {
    // the squares over- or underflow: scale by the largest component first
    double m = fmax(fabs(a[0]), fmax(fabs(a[1]), fabs(a[2])));
    if (!(m > 0) || !isfinite(m)) return n;
    for (int k = 0; k < 3; k++) a[k] /= m;
    double r = fl_v3_norm(a);
    for (int k = 0; k < 3; k++) a[k] /= r;
    return m * r;
  }
  if (n > 0) {
    a[0] /= n;
    a[1] /= n;
    a[2] /= n;
  }
  return n;
}


void fl_v3_tangents(const double n[3], double t1[3], double t2[3]) {
  // t1 from the world axis least aligned with n, so the frame is continuous in n almost
  // everywhere and exact for axis-aligned normals (t1 = x for n = z)
  double ax[3] = {0, 0, 0};
  double fx = fabs(n[0]), fy = fabs(n[1]), fz = fabs(n[2]);
  if (fx <= fy && fx <= fz) {
    ax[0] = 1;
  } else if (fy <= fz) {
    ax[1] = 1;
  } else {
    ax[2] = 1;
  }
  // t1 = normalize(ax - (ax.n) n); t2 = n x t1 (right-handed)
  double d = fl_v3_dot(ax, n);
  for (int k = 0; k < 3; k++) t1[k] = ax[k] - d * n[k];
  fl_v3_normalize(t1);
  fl_v3_cross(n, t1, t2);
}


//---- mat3 ----

void fl_m3_mul(const double a[9], const double b[9], double out[9]) {
  double r[9];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      r[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    }
  }
  memcpy(out, r, sizeof r);
}


void fl_m3_mulv(const double a[9], const double x[3], double out[3]) {
  double r[3];
  for (int i = 0; i < 3; i++) r[i] = a[3 * i] * x[0] + a[3 * i + 1] * x[1] + a[3 * i + 2] * x[2];
  memcpy(out, r, sizeof r);
}


void fl_m3_multv(const double a[9], const double x[3], double out[3]) {
  double r[3];
  for (int i = 0; i < 3; i++) r[i] = a[i] * x[0] + a[3 + i] * x[1] + a[6 + i] * x[2];
  memcpy(out, r, sizeof r);
}


void fl_m3_transpose(const double a[9], double out[9]) {
  double r[9];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) r[3 * j + i] = a[3 * i + j];
  }
  memcpy(out, r, sizeof r);
}


int fl_m3_inv(const double a[9], double out[9]) {
  double c[9];
  c[0] = a[4] * a[8] - a[5] * a[7];
  c[1] = a[2] * a[7] - a[1] * a[8];
  c[2] = a[1] * a[5] - a[2] * a[4];
  c[3] = a[5] * a[6] - a[3] * a[8];
  c[4] = a[0] * a[8] - a[2] * a[6];
  c[5] = a[2] * a[3] - a[0] * a[5];
  c[6] = a[3] * a[7] - a[4] * a[6];
  c[7] = a[1] * a[6] - a[0] * a[7];
  c[8] = a[0] * a[4] - a[1] * a[3];
  double det = a[0] * c[0] + a[1] * c[3] + a[2] * c[6];
  double scale = 0;
  for (int k = 0; k < 9; k++) scale = fmax(scale, fabs(a[k]));
  if (!(fabs(det) > 1e-300 && fabs(det) > 1e-14 * scale * scale * scale)) {
    return fl_seterr(FL_ERR_NOT_SPD, "3x3 inverse: singular matrix (det %g)", det);
  }
  for (int k = 0; k < 9; k++) out[k] = c[k] / det;
  return FL_OK;
}


void fl_m3_skew(const double w[3], double out[9]) {
  out[0] = 0;
  out[1] = -w[2];
  out[2] = w[1];
  out[3] = w[2];
  out[4] = 0;
  out[5] = -w[0];
  out[6] = -w[1];
  out[7] = w[0];
  out[8] = 0;
}


//---- quaternions (w, x, y, z) ----

void fl_quat_mul(const double a[4], const double b[4], double out[4]) {
  double r[4];
  r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  memcpy(out, r, sizeof r);
}


void fl_quat_to_mat(const double q[4], double R[9]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z);
  R[1] = 2 * (x * y - w * z);
  R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);
  R[4] = 1 - 2 * (x * x + z * z);
  R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);
  R[7] = 2 * (y * z + w * x);
  R[8] = 1 - 2 * (x * x + y * y);
}


void fl_quat_rotate(const double q[4], const double v[3], double out[3]) {
  double R[9];
  fl_quat_to_mat(q, R);
  fl_m3_mulv(R, v, out);
}


void fl_quat_from_axis_angle(const double axis[3], double angle, double q[4]) {
  double a[3] = {axis[0], axis[1], axis[2]};
  fl_v3_normalize(a);
  double s = sin(0.5 * angle);
  q[0] = cos(0.5 * angle);
  q[1] = s * a[0];
  q[2] = s * a[1];
  q[3] = s * a[2];
}


void fl_quat_normalize(double q[4]) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(n > 1e-150 && n < 1e150)) {
    // the squares over- or underflow: scale by the largest component first
    double m = fmax(fmax(fabs(q[0]), fabs(q[1])), fmax(fabs(q[2]), fabs(q[3])));
    if (m > 0 && isfinite(m)) {
      for (int k = 0; k < 4; k++) q[k] /= m;
      n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    }
  }
  if (n > 0 && isfinite(n)) {
    for (int k = 0; k < 4; k++) q[k] /= n;
  } else {
    q[0] = 1;
    q[1] = q[2] = q[3] = 0;
  }
}


void fl_quat_integrate(double q[4], const double w[3], double dt) {
  // q' = 1/2 (0, w) q for a world-frame angular velocity
  double wq[4] = {0, w[0], w[1], w[2]}, dq[4];
  fl_quat_mul(wq, q, dq);
  for (int k = 0; k < 4; k++) q[k] += 0.5 * dt * dq[k];
  fl_quat_normalize(q);
}


//---- small dense factorizations ----

int fl_chol_factor(double *A, int n) {
  for (int j = 0; j < n; j++) {
    double d = A[j * n + j];
    for (int k = 0; k < j; k++) d -= A[j * n + k] * A[j * n + k];
    if (!(d > 0)) {
      return fl_seterr(FL_ERR_NOT_SPD, "Cholesky: pivot %d is %g (matrix not SPD)", j, d);
    }
    d = sqrt(d);
    A[j * n + j] = d;
    for (int i = j + 1; i < n; i++) {
      double s = A[i * n + j];
      for (int k = 0; k < j; k++) s -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = s / d;
    }
  }
  return FL_OK;
}


void fl_chol_solve(const double *L, int n, double *b) {
  // forward L y = b, then backward L^T x = y
  for (int i = 0; i < n; i++) {
    double s = b[i];
    for (int k = 0; k < i; k++) s -= L[i * n + k] * b[k];
    b[i] = s / L[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double s = b[i];
    for (int k = i + 1; k < n; k++) s -= L[k * n + i] * b[k];
    b[i] = s / L[i * n + i];
  }
}


int fl_ldlt_factor(double *A, int n) {
  for (int j = 0; j < n; j++) {
    double d = A[j * n + j];
    for (int k = 0; k < j; k++) d -= A[j * n + k] * A[j * n + k] * A[k * n + k];
    if (d == 0 || !isfinite(d)) {
      return fl_seterr(FL_ERR_NOT_SPD, "LDL^T: pivot %d is %g", j, d);
    }
    A[j * n + j] = d;
    for (int i = j + 1; i < n; i++) {
      double s = A[i * n + j];
      for (int k = 0; k < j; k++) s -= A[i * n + k] * A[j * n + k] * A[k * n + k];
      A[i * n + j] = s / d;
    }
  }
  return FL_OK;
}


void fl_ldlt_solve(const double *LD, int n, double *b) {
  for (int i = 0; i < n; i++) {
    double s = b[i];
    for (int k = 0; k < i; k++) s -= LD[i * n + k] * b[k];
    b[i] = s;
  }
  for (int i = 0; i < n; i++) b[i] /= LD[i * n + i];
  for (int i = n - 1; i >= 0; i--) {
    double s = b[i];
    for (int k = i + 1; k < n; k++) s -= LD[k * n + i] * b[k];
    b[i] = s;
  }
}


/* y -= l x over m entries, four per loop trip (the compiler pairs them into vector operations) */
static inline void sub_scaled(int m, double l, const double *restrict x, double *restrict y) {
  int j = 0;
  for (; j + 4 <= m; j += 4) {
    y[j] -= l * x[j];
    y[j + 1] -= l * x[j + 1];
    y[j + 2] -= l * x[j + 2];
    y[j + 3] -= l * x[j + 3];
  }
  for (; j < m; j++) y[j] -= l * x[j];
}


int fl_lu_factor(double *a, int n, int *piv, int *last) {
  for (int i = 0; i < n; i++) {
    const double *ri = a + (size_t)i * n;
    int j = n - 1;
    while (j > i && ri[j] == 0) j--;
    last[i] = j;
  }
  for (int k = 0; k < n; k++) {
    int p = k;
    double best = fabs(a[(size_t)k * n + k]);
    for (int i = k + 1; i < n; i++) {
      double v = fabs(a[(size_t)i * n + k]);
      if (v > best) best = v, p = i;
    }
    if (!(best > 0) || !isfinite(best))
      return fl_seterr(FL_ERR_NOT_SPD, "LU: no usable pivot in column %d (largest %g)", k, best);
    piv[k] = p;
    double *rk = a + (size_t)k * n;
    if (p != k) {
      double *rp = a + (size_t)p * n;
      for (int j = 0; j < n; j++) {
        double t = rk[j];
        rk[j] = rp[j];
        rp[j] = t;
      }
      int t = last[k];
      last[k] = last[p];
      last[p] = t;
    }
    double inv = 1.0 / rk[k];
    int lk = last[k];
    for (int i = k + 1; i < n; i++) {
      double *ri = a + (size_t)i * n;
      if (ri[k] == 0) continue;
      double l = ri[k] * inv;
      ri[k] = l;
      sub_scaled(lk - k, l, rk + k + 1, ri + k + 1);
      if (lk > last[i]) last[i] = lk;
    }
  }
  return FL_OK;
}


void fl_lu_solve(const double *a, int n, const int *piv, double *x) {
  for (int k = 0; k < n; k++)
    if (piv[k] != k) {
      double t = x[k];
      x[k] = x[piv[k]];
      x[piv[k]] = t;
    }
  for (int i = 1; i < n; i++) {
    const double *ri = a + (size_t)i * n;
    double t = x[i];
    for (int j = 0; j < i; j++) t -= ri[j] * x[j];
    x[i] = t;
  }
  for (int i = n - 1; i >= 0; i--) {
    const double *ri = a + (size_t)i * n;
    double t = x[i];
    for (int j = i + 1; j < n; j++) t -= ri[j] * x[j];
    x[i] = t / ri[i];
  }
}

// SPDX-License-Identifier: Apache-2.0
/* fem_material.c: energy densities, stresses and stiffness of the linear tetrahedron
 * (seed 000 sections V-VI, appendix). See fl_fem_material.h for the models.
 *
 * Derivatives:
 *   - linear and corotated_lagged are quadratic in F: P and dP/dF in closed form.
 *   - corotated: P = 2 mu (F - R) + lambda (J - 1) cof F, the first term because
 *     (F - R) : dR = R (S - I) : R W = (S - I) : W = 0 for S symmetric, W skew. dP/dF needs dR/dF:
 *     with W = R^T dR, R^T dF - dF^T R = W S + S W = [(tr S I - S) w]x, solved for w in the
 *     eigenbasis V of S (denominators s_j + s_k; a mode with s_j + s_k ~ 0 is dropped).
 *   - mooney_rivlin is a function of the invariants (I1, I2, J): the chain rule
 *     dP/dF = sum_ab d2Psi/da db  da/dF (x) db/dF + sum_a dPsi/da d2a/dF2.
 *   - the tet: dF_ij/dx_(a,k) = delta_ik G_aj with G the rows of DmInv (row 0 = -sum of the
 *     others); in plane strain column 2 of F is constant, so G_a2 = 0.
 * PSD projection: negative eigenvalues of the symmetric 9x9 set to 0, the eigenproblem split into
 * blocks in the singular frame of F (isotropic energies), cyclic Jacobi on the 9x9 as fallback.
 */
#include <math.h>
#include <string.h>

#include "fl_fem_material.h"

//---- names and parameters ----

static const char *const fem_names[] = {"linear", "corotated_lagged", "corotated", "mooney_rivlin"};
#define FEM_NMODEL ((int)(sizeof(fem_names) / sizeof(fem_names[0])))


const char *fl_fem_model_name(int model) {
  return (model >= 0 && model < FEM_NMODEL) ? fem_names[model] : "unknown";
}


int fl_fem_model_parse(const char *s) {
  for (int k = 0; s && k < FEM_NMODEL; k++) {
    if (strcmp(s, fem_names[k]) == 0) return k;
  }
  return fl_seterr(FL_ERR_INVAL, "unknown material model '%s' (choices: %s)", s ? s : "(null)",
                   FL_FEM_MODEL_CHOICES);
}


void fl_fem_lame(double E, double nu, double *mu, double *lambda) {
  *mu = E / (2 * (1 + nu));
  *lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
}


int fl_fem_material_check(const fl_fem_material *m, const char *where) {
  const char *w = where ? where : "material";
  if (!m) return fl_seterr(FL_ERR_INVAL, "%s: no material given", w);
  switch (m->model) {
  case FL_FEM_LINEAR:
  case FL_FEM_COROTATED_LAGGED:
  case FL_FEM_COROTATED:
    if (!(m->E > 0) || !isfinite(m->E))
      return fl_seterr(FL_ERR_INVAL, "%s: E = %g out of range; expected 0 < E < inf (Pa)", w, m->E);
    // nu -> 0.5 makes lambda infinite: these compressible models cannot be incompressible
    if (!(m->nu > -1 && m->nu < 0.5))
      return fl_seterr(FL_ERR_INVAL,
                       "%s: nu = %g out of range; expected -1 < nu < 0.5 (nu >= 0.5 is "
                       "incompressible, which the compressible %s model cannot represent)",
                       w, m->nu, fl_fem_model_name(m->model));
    return FL_OK;
  case FL_FEM_MOONEY_RIVLIN:
    if (!(m->c1 >= 0) || !isfinite(m->c1))
      return fl_seterr(FL_ERR_INVAL, "%s: c1 = %g out of range; expected c1 >= 0 (Pa)", w, m->c1);
    if (!(m->c2 >= 0) || !isfinite(m->c2))
      return fl_seterr(FL_ERR_INVAL, "%s: c2 = %g out of range; expected c2 >= 0 (Pa)", w, m->c2);
    if (!(m->c1 + m->c2 > 0))
      return fl_seterr(FL_ERR_INVAL,
                       "%s: c1 + c2 = 0; expected c1 + c2 > 0 (shear modulus 2(c1+c2))", w);
    if (!(m->kappa > 0) || !isfinite(m->kappa))
      return fl_seterr(FL_ERR_INVAL, "%s: kappa = %g out of range; expected 0 < kappa < inf (Pa)",
                       w, m->kappa);
    return FL_OK;
  default:
    return fl_seterr(FL_ERR_INVAL, "%s: unknown material model %d (choices: %s)", w, m->model,
                     FL_FEM_MODEL_CHOICES);
  }
}

//---- small dense helpers ----

static double det3(const double A[9]) {
  return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
         A[2] * (A[3] * A[7] - A[4] * A[6]);
}


// cofactor matrix: G = d det(A) / dA = det(A) A^-T
static void cof3(const double A[9], double G[9]) {
  G[0] = A[4] * A[8] - A[5] * A[7];
  G[1] = A[5] * A[6] - A[3] * A[8];
  G[2] = A[3] * A[7] - A[4] * A[6];
  G[3] = A[2] * A[7] - A[1] * A[8];
  G[4] = A[0] * A[8] - A[2] * A[6];
  G[5] = A[1] * A[6] - A[0] * A[7];
  G[6] = A[1] * A[5] - A[2] * A[4];
  G[7] = A[2] * A[3] - A[0] * A[5];
  G[8] = A[0] * A[4] - A[1] * A[3];
}


static int levi(int i, int j, int k) {
  return (i == j || j == k || i == k) ? 0 : ((j - i + 3) % 3 == 1 ? 1 : -1);
}


// d2 det / dF_ij dF_kl = eps_ikb eps_jld F_bd, added with weight c
static void add_hess_det(double c, const double F[9], double H[81]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      for (int k = 0; k < 3; k++) {
        for (int l = 0; l < 3; l++) {
          int b = 3 - i - k, d = 3 - j - l; // the only index left when i != k, j != l
          if (i == k || j == l) continue;
          H[(3 * i + j) * 9 + 3 * k + l] += c * levi(i, k, b) * levi(j, l, d) * F[3 * b + d];
        }
      }
    }
  }
}


// cyclic Jacobi eigen-decomposition of a symmetric n x n A (destroyed): w eigenvalues,
// V (n x n, row-major) eigenvectors as columns
static void jacobi_eig(double *A, int n, double *w, double *V) {
  for (int i = 0; i < n * n; i++) V[i] = 0;
  for (int i = 0; i < n; i++) V[i * n + i] = 1;
  double total = 0;
  for (int i = 0; i < n * n; i++) total += A[i] * A[i];
  for (int sweep = 0; sweep < 60; sweep++) {
    double off = 0;
    for (int p = 0; p < n; p++) {
      for (int q = p + 1; q < n; q++) off += A[p * n + q] * A[p * n + q];
    }
    if (off <= 1e-32 * total || off == 0) break;
    for (int p = 0; p < n; p++) {
      for (int q = p + 1; q < n; q++) {
        double apq = A[p * n + q];
        if (fabs(apq) < 1e-300) continue;
        // rotation by t = tan(phi) that zeroes A_pq: A <- J^T A J
        double theta = (A[q * n + q] - A[p * n + p]) / (2 * apq);
        double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + hypot(1.0, theta));
        double c = 1 / sqrt(1 + t * t), s = c * t;
        for (int k = 0; k < n; k++) {
          double akp = A[k * n + p], akq = A[k * n + q];
          A[k * n + p] = c * akp - s * akq;
          A[k * n + q] = s * akp + c * akq;
        }
        for (int k = 0; k < n; k++) {
          double apk = A[p * n + k], aqk = A[q * n + k];
          A[p * n + k] = c * apk - s * aqk;
          A[q * n + k] = s * apk + c * aqk;
        }
        for (int k = 0; k < n; k++) {
          double vkp = V[k * n + p], vkq = V[k * n + q];
          V[k * n + p] = c * vkp - s * vkq;
          V[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  for (int i = 0; i < n; i++) w[i] = A[i * n + i];
}


// nearest PSD matrix (Frobenius) of the symmetric part of H; H untouched when already PSD.
// Non-static for the test that compares it with the singular-frame projection below.
void fl__fem_project_psd9_jacobi(double H[81]);
void fl__fem_project_psd9_jacobi(double H[81]) {
  double A[81], V[81], w[9];
  for (int i = 0; i < 9; i++) {
    for (int j = 0; j < 9; j++) A[i * 9 + j] = 0.5 * (H[i * 9 + j] + H[j * 9 + i]);
  }
  jacobi_eig(A, 9, w, V);
  // a PSD matrix with zero eigenvalues (the rotational modes at rest) must not be touched for
  // rounding-level negatives: project only below -1e-12 of the largest eigenvalue magnitude
  double wmax = 0, wmin = 0;
  for (int i = 0; i < 9; i++) wmax = fmax(wmax, fabs(w[i])), wmin = fmin(wmin, w[i]);
  if (!(wmin < -1e-12 * wmax)) return;
  // H = V max(w, 0) V^T
  for (int i = 0; i < 9; i++) {
    for (int j = 0; j < 9; j++) {
      double h = 0;
      for (int k = 0; k < 9; k++) {
        if (w[k] > 0) h += V[i * 9 + k] * w[k] * V[j * 9 + k];
      }
      H[i * 9 + j] = h;
    }
  }
}

//---- polar decomposition ----


// F = U diag(s) V^T with U, V proper rotations, |s0| >= |s1| >= |s2|, s2 < 0 iff det F < 0
static void svd3(const double F[9], double U[9], double s[3], double V[9]) {
  double A[9];
  memcpy(A, F, sizeof A);
  for (int i = 0; i < 9; i++) V[i] = (i % 4 == 0);
  // one-sided Jacobi (Hestenes): rotate column pairs of A = F V until they are orthogonal
  static const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int sweep = 0; sweep < 40; sweep++) {
    int rotated = 0;
    for (int r = 0; r < 3; r++) {
      int p = pairs[r][0], q = pairs[r][1];
      double alpha = 0, beta = 0, gamma = 0;
      for (int i = 0; i < 3; i++) {
        alpha += A[3 * i + p] * A[3 * i + p];
        beta += A[3 * i + q] * A[3 * i + q];
        gamma += A[3 * i + p] * A[3 * i + q];
      }
      if (gamma == 0 || fabs(gamma) <= 1e-15 * sqrt(alpha * beta)) continue;
      rotated = 1;
      double zeta = (beta - alpha) / (2 * gamma);
      double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + hypot(1.0, zeta));
      double c = 1 / sqrt(1 + t * t), sn = c * t;
      for (int i = 0; i < 3; i++) {
        double ap = A[3 * i + p], aq = A[3 * i + q];
        A[3 * i + p] = c * ap - sn * aq;
        A[3 * i + q] = sn * ap + c * aq;
        double vp = V[3 * i + p], vq = V[3 * i + q];
        V[3 * i + p] = c * vp - sn * vq;
        V[3 * i + q] = sn * vp + c * vq;
      }
    }
    if (!rotated) break;
  }
  // sort the columns by norm, descending
  double nrm[3];
  for (int j = 0; j < 3; j++) {
    nrm[j] = sqrt(A[j] * A[j] + A[3 + j] * A[3 + j] + A[6 + j] * A[6 + j]);
  }
  for (int a = 0; a < 2; a++) {
    for (int b = a + 1; b < 3; b++) {
      if (nrm[b] > nrm[a]) {
        double tmp = nrm[a];
        nrm[a] = nrm[b];
        nrm[b] = tmp;
        for (int i = 0; i < 3; i++) {
          tmp = A[3 * i + a], A[3 * i + a] = A[3 * i + b], A[3 * i + b] = tmp;
          tmp = V[3 * i + a], V[3 * i + a] = V[3 * i + b], V[3 * i + b] = tmp;
        }
      }
    }
  }
  // make V proper: flipping v2 flips a2 = F v2 with it
  if (det3(V) < 0) {
    for (int i = 0; i < 3; i++) V[3 * i + 2] = -V[3 * i + 2], A[3 * i + 2] = -A[3 * i + 2];
  }
  if (!(nrm[0] > 0)) { // F = 0 (or not finite): R = I
    memcpy(U, V, 9 * sizeof(double));
    s[0] = s[1] = s[2] = 0;
    return;
  }
  // U: u0, u1 by Gram-Schmidt on a0, a1 (deterministic completion when rank-deficient),
  // u2 = u0 x u1 keeps det U = +1, so s2 = u2 . a2 carries the sign of det F
  double u0[3], u1[3], u2[3], a1[3], a2[3];
  for (int i = 0; i < 3; i++) {
    u0[i] = A[3 * i] / nrm[0];
    a1[i] = A[3 * i + 1];
    a2[i] = A[3 * i + 2];
  }
  double d01 = u0[0] * a1[0] + u0[1] * a1[1] + u0[2] * a1[2];
  for (int i = 0; i < 3; i++) u1[i] = a1[i] - d01 * u0[i];
  double n1 = sqrt(u1[0] * u1[0] + u1[1] * u1[1] + u1[2] * u1[2]);
  if (n1 > 1e-14 * nrm[0]) {
    for (int i = 0; i < 3; i++) u1[i] /= n1;
  } else {
    // the axis least aligned with u0, made orthogonal to it
    int k = 0;
    for (int i = 1; i < 3; i++) k = fabs(u0[i]) < fabs(u0[k]) ? i : k;
    for (int i = 0; i < 3; i++) u1[i] = (i == k) - u0[k] * u0[i];
    n1 = sqrt(u1[0] * u1[0] + u1[1] * u1[1] + u1[2] * u1[2]);
    for (int i = 0; i < 3; i++) u1[i] /= n1;
    n1 = 0;
  }
  u2[0] = u0[1] * u1[2] - u0[2] * u1[1];
  u2[1] = u0[2] * u1[0] - u0[0] * u1[2];
  u2[2] = u0[0] * u1[1] - u0[1] * u1[0];
  for (int i = 0; i < 3; i++) U[3 * i] = u0[i], U[3 * i + 1] = u1[i], U[3 * i + 2] = u2[i];
  s[0] = nrm[0];
  s[1] = n1;
  s[2] = u2[0] * a2[0] + u2[1] * a2[1] + u2[2] * a2[2];
}


static void rot_from_svd(const double U[9], const double V[9], double R[9]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      R[3 * i + j] =
          U[3 * i] * V[3 * j] + U[3 * i + 1] * V[3 * j + 1] + U[3 * i + 2] * V[3 * j + 2];
    }
  }
}


void fl_fem_polar_rotation(const double F[9], double R[9]) {
  double U[9], s[3], V[9];
  svd3(F, U, s, V);
  rot_from_svd(U, V, R);
}


/* The same projection for the dP/dF of an isotropic energy, in the singular frame of F. With
 * F = U diag(s) V^T and the basis Q_ab = U e_a e_b^T V^T of 3x3 matrices, such a dP/dF is block
 * diagonal: one 3x3 block on the stretches Q_aa and one 2x2 block on each pair {Q_ab, Q_ba}
 * (the twist and flip modes of Smith, de Goes and Kim 2019). So the 9x9 eigenproblem splits into
 * a 3x3 and three 2x2 ones; about five times cheaper than cyclic Jacobi on the 9x9 (the
 * cylinder press projects every tet's dP/dF every step). Returns 0 (H untouched: already PSD),
 * 1 (projected) or -1 when H is not block diagonal in that frame (then nothing is written and
 * the caller falls back to Jacobi). */
static int project_psd9_isotropic(const double F[9], double H[81]) {
  // the basis indices 3a + b of each block: the stretches, then the pairs {01,10}, {02,20}, {12,21}
  static const int idx[4][3] = {{0, 4, 8}, {1, 3, -1}, {2, 6, -1}, {5, 7, -1}};
  double U[9], sv[3], V[9], Q[81], Hs[81], T[81];
  svd3(F, U, sv, V);
  // Q[(3i+j), (3a+b)] = U_ia V_jb: column 3a+b is vec(U e_a e_b^T V^T), Q orthogonal
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) Q[(3 * i + j) * 9 + 3 * a + b] = U[3 * i + a] * V[3 * j + b];
  double hn2 = 0;
  for (int r = 0; r < 9; r++)
    for (int c = 0; c < 9; c++) {
      Hs[r * 9 + c] = 0.5 * (H[r * 9 + c] + H[c * 9 + r]);
      hn2 += Hs[r * 9 + c] * Hs[r * 9 + c];
    }
  for (int r = 0; r < 9; r++)
    for (int c = 0; c < 9; c++) {
      double t = 0;
      for (int k = 0; k < 9; k++) t += Hs[r * 9 + k] * Q[k * 9 + c];
      T[r * 9 + c] = t;
    }
  // the blocks of Q^T Hs Q, their eigenpairs (w, vectors Z in the block's indices) and how much
  // of ||Hs||_F they hold: what they miss lies off the blocks (Q is orthogonal)
  double w[9], Z[4][9], bn2 = 0;
  int k0 = 0;
  for (int g = 0; g < 4; g++) {
    int n = g == 0 ? 3 : 2;
    double A[9];
    for (int p = 0; p < n; p++)
      for (int q = 0; q < n; q++) {
        double t = 0;
        for (int k = 0; k < 9; k++) t += Q[k * 9 + idx[g][p]] * T[k * 9 + idx[g][q]];
        A[p * n + q] = t;
        bn2 += t * t;
      }
    jacobi_eig(A, n, w + k0, Z[g]);
    k0 += n;
  }
  if (!(hn2 - bn2 <= 1e-12 * hn2)) return -1;
  double wmax = 0, wmin = 0;
  for (int i = 0; i < 9; i++) wmax = fmax(wmax, fabs(w[i])), wmin = fmin(wmin, w[i]);
  if (!(wmin < -1e-12 * wmax)) return 0;
  // H = Hs - sum over negative w_k of w_k u_k u_k^T, u_k = Q (block eigenvector k)
  memcpy(H, Hs, sizeof Hs);
  k0 = 0;
  for (int g = 0; g < 4; g++) {
    int n = g == 0 ? 3 : 2;
    for (int q = 0; q < n; q++, k0++) {
      if (!(w[k0] < 0)) continue;
      double u[9];
      for (int r = 0; r < 9; r++) {
        double t = 0;
        for (int p = 0; p < n; p++) t += Q[r * 9 + idx[g][p]] * Z[g][p * n + q];
        u[r] = t;
      }
      for (int r = 0; r < 9; r++)
        for (int c = 0; c < 9; c++) H[r * 9 + c] -= w[k0] * u[r] * u[c];
    }
  }
  return 1;
}

//---- energy densities ----

// linear and corotated_lagged: Psi = mu |E|^2 + lambda/2 tr(E)^2, E = sym(Q^T F) - I (Q = I or R0)
static double psi_quadratic(double mu, double lambda, const double *Q, const double F[9],
                            double P[9], double dPdF[81]) {
  double Fh[9], E[9], Ph[9];
  if (Q) {
    for (int a = 0; a < 3; a++) {
      for (int b = 0; b < 3; b++) {
        Fh[3 * a + b] = Q[a] * F[b] + Q[3 + a] * F[3 + b] + Q[6 + a] * F[6 + b];
      }
    }
  } else {
    memcpy(Fh, F, sizeof Fh);
  }
  double tr = 0, ee = 0;
  for (int a = 0; a < 3; a++) {
    for (int b = 0; b < 3; b++) {
      E[3 * a + b] = 0.5 * (Fh[3 * a + b] + Fh[3 * b + a]) - (a == b);
    }
    tr += E[4 * a];
  }
  for (int i = 0; i < 9; i++) ee += E[i] * E[i];
  // Ph = dPsi/dFh = 2 mu E + lambda tr(E) I, P = Q Ph
  for (int i = 0; i < 9; i++) Ph[i] = 2 * mu * E[i] + (i % 4 == 0 ? lambda * tr : 0);
  if (P) {
    if (Q) {
      fl_m3_mul(Q, Ph, P);
    } else {
      memcpy(P, Ph, sizeof Ph);
    }
  }
  if (dPdF) {
    // dP_ij/dF_kl = mu (Q Q^T)_ik delta_jl + mu Q_il Q_kj + lambda Q_ij Q_kl
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const double *q = Q ? Q : I3;
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) {
        for (int k = 0; k < 3; k++) {
          double qqik =
              q[3 * i] * q[3 * k] + q[3 * i + 1] * q[3 * k + 1] + q[3 * i + 2] * q[3 * k + 2];
          for (int l = 0; l < 3; l++) {
            dPdF[(3 * i + j) * 9 + 3 * k + l] = mu * qqik * (j == l) +
                                                mu * q[3 * i + l] * q[3 * k + j] +
                                                lambda * q[3 * i + j] * q[3 * k + l];
          }
        }
      }
    }
  }
  return mu * ee + 0.5 * lambda * tr * tr;
}

// dR/dF (9x9) at F = U diag(s) V^T, R = U V^T: for dF = e_k e_l^T,
// w = (tr S I - S)^-1 axial(R^T dF - dF^T R), dR = R [w]x
static void drot_dF(const double s[3], const double V[9], const double R[9], double dR[81]) {
  // 1/(s_j + s_k); where s_j + s_k ~ 0 (rank <= 1, or inverted with |s_j| = |s_k|) R is not
  // differentiable: that rotational mode is dropped (pseudo-inverse) instead of blowing up
  double d[3] = {s[1] + s[2], s[0] + s[2], s[0] + s[1]}, dinv[3];
  double dmin = 1e-8 * fabs(s[0]);
  for (int i = 0; i < 3; i++) dinv[i] = fabs(d[i]) > dmin ? 1 / d[i] : 0;
  for (int k = 0; k < 3; k++) {
    for (int l = 0; l < 3; l++) {
      // M = R^T e_k e_l^T: M_ab = R_ka delta_lb; w = (M21 - M12, M02 - M20, M10 - M01)
      double M[9] = {0};
      for (int a = 0; a < 3; a++) M[3 * a + l] = R[3 * k + a];
      double w[3] = {M[7] - M[5], M[2] - M[6], M[3] - M[1]};
      // solve in the eigenbasis of S: S = V diag(s) V^T
      double wv[3], ws[3];
      fl_m3_multv(V, w, wv);
      for (int i = 0; i < 3; i++) wv[i] *= dinv[i];
      fl_m3_mulv(V, wv, ws);
      double Wx[9], dRkl[9];
      fl_m3_skew(ws, Wx);
      fl_m3_mul(R, Wx, dRkl);
      for (int ij = 0; ij < 9; ij++) dR[ij * 9 + 3 * k + l] = dRkl[ij];
    }
  }
}

static double psi_corotated(double mu, double lambda, const double F[9], double P[9],
                            double dPdF[81]) {
  double U[9], s[3], V[9], R[9], G[9];
  svd3(F, U, s, V);
  rot_from_svd(U, V, R);
  double J = det3(F), fr = 0;
  for (int i = 0; i < 9; i++) fr += (F[i] - R[i]) * (F[i] - R[i]);
  cof3(F, G);
  if (P) {
    for (int i = 0; i < 9; i++) P[i] = 2 * mu * (F[i] - R[i]) + lambda * (J - 1) * G[i];
  }
  if (dPdF) {
    // 2 mu (Id - dR/dF) + lambda G (x) G + lambda (J - 1) d2J/dF2
    drot_dF(s, V, R, dPdF);
    for (int a = 0; a < 9; a++) {
      for (int b = 0; b < 9; b++) {
        dPdF[a * 9 + b] = 2 * mu * ((a == b) - dPdF[a * 9 + b]) + lambda * G[a] * G[b];
      }
    }
    add_hess_det(lambda * (J - 1), F, dPdF);
  }
  return mu * fr + 0.5 * lambda * (J - 1) * (J - 1);
}

static double psi_mooney_rivlin(double c1, double c2, double kappa, const double F[9], double P[9],
                                double dPdF[81]) {
  double C[9], FC[9], G[9];
  double J = det3(F);
  double FT[9];
  fl_m3_transpose(F, FT);
  fl_m3_mul(FT, F, C);
  fl_m3_mul(F, C, FC);
  double I1 = C[0] + C[4] + C[8], CC = 0;
  for (int i = 0; i < 9; i++) CC += C[i] * C[i];
  double I2 = 0.5 * (I1 * I1 - CC);
  cof3(F, G);
  // a = Jc^(-2/3) and its J-derivatives (frozen below FL_FEM_MR_JMIN)
  double Jc = J > FL_FEM_MR_JMIN ? J : FL_FEM_MR_JMIN;
  double a = pow(Jc, -2.0 / 3.0);
  double a1 = J > FL_FEM_MR_JMIN ? -2.0 / 3.0 * a / Jc : 0;
  double a2 = J > FL_FEM_MR_JMIN ? 10.0 / 9.0 * a / (Jc * Jc) : 0;
  double psi = c1 * (a * I1 - 3) + c2 * (a * a * I2 - 3) + 0.5 * kappa * (J - 1) * (J - 1);
  // Psi(I1, I2, J): gradient g and Hessian H in the invariants
  double g1 = c1 * a, g2 = c2 * a * a, gJ = c1 * I1 * a1 + 2 * c2 * I2 * a * a1 + kappa * (J - 1);
  double h1J = c1 * a1, h2J = 2 * c2 * a * a1;
  double hJJ = c1 * I1 * a2 + 2 * c2 * I2 * (a1 * a1 + a * a2) + kappa;
  // invariant gradients: dI1/dF = 2F, dI2/dF = 2 (I1 F - F C), dJ/dF = G
  double v1[9], v2[9];
  for (int i = 0; i < 9; i++) {
    v1[i] = 2 * F[i];
    v2[i] = 2 * (I1 * F[i] - FC[i]);
  }
  if (P) {
    for (int i = 0; i < 9; i++) P[i] = g1 * v1[i] + g2 * v2[i] + gJ * G[i];
  }
  if (dPdF) {
    double FFT[9];
    fl_m3_mul(F, FT, FFT);
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) {
        for (int k = 0; k < 3; k++) {
          for (int l = 0; l < 3; l++) {
            int r = 3 * i + j, c = 3 * k + l;
            double dik = i == k, djl = j == l;
            // d2I2/dF_ij dF_kl = 2 (2 F_ij F_kl + I1 d_ik d_jl - d_ik C_lj - F_il F_kj - (FF^T)_ik
            // d_jl)
            double hI2 = 2 * (2 * F[r] * F[c] + I1 * dik * djl - dik * C[3 * l + j] -
                              F[3 * i + l] * F[3 * k + j] - FFT[3 * i + k] * djl);
            dPdF[r * 9 + c] = g1 * 2 * dik * djl + g2 * hI2 + h1J * (v1[r] * G[c] + G[r] * v1[c]) +
                              h2J * (v2[r] * G[c] + G[r] * v2[c]) + hJJ * G[r] * G[c];
          }
        }
      }
    }
    add_hess_det(gJ, F, dPdF);
  }
  return psi;
}


/* Projects dP/dF (H, 9x9) at F to PSD: in F's singular frame, or with Jacobi on the 9x9 when H
 * is not block diagonal there. Returns 0 (H already PSD, untouched), 1 (projected in the
 * singular frame) or 2 (Jacobi). Non-static for the tests. */
int fl__fem_project_psd9(const double F[9], double H[81]);
int fl__fem_project_psd9(const double F[9], double H[81]) {
  int r = project_psd9_isotropic(F, H);
  if (r >= 0) return r;
  fl__fem_project_psd9_jacobi(H);
  return 2;
}


double fl_fem_psi(const fl_fem_material *m, const double F[9], const double R0[9], double P[9],
                  double dPdF[81], int project_psd) {
  double mu, lambda, psi;
  switch (m->model) {
  case FL_FEM_LINEAR:
    fl_fem_lame(m->E, m->nu, &mu, &lambda);
    return psi_quadratic(mu, lambda, NULL, F, P, dPdF);
  case FL_FEM_COROTATED_LAGGED:
    fl_fem_lame(m->E, m->nu, &mu, &lambda);
    return psi_quadratic(mu, lambda, R0, F, P, dPdF);
  case FL_FEM_COROTATED:
    fl_fem_lame(m->E, m->nu, &mu, &lambda);
    psi = psi_corotated(mu, lambda, F, P, dPdF);
    break;
  case FL_FEM_MOONEY_RIVLIN:
    psi = psi_mooney_rivlin(m->c1, m->c2, m->kappa, F, P, dPdF);
    break;
  default:
    if (P) memset(P, 0, 9 * sizeof(double));
    if (dPdF) memset(dPdF, 0, 81 * sizeof(double));
    return NAN;
  }
  if (dPdF && project_psd) fl__fem_project_psd9(F, dPdF);
  return psi;
}

//---- the tetrahedron ----

int fl_fem_tet_rest(const double X[12], double DmInv[9], double *vol) {
  double Dm[9], lmax = 0;
  for (int i = 0; i < 3; i++) {
    for (int m = 0; m < 3; m++) Dm[3 * i + m] = X[3 * (m + 1) + i] - X[i];
  }
  for (int a = 0; a < 4; a++) {
    for (int b = a + 1; b < 4; b++) {
      double dx = X[3 * b] - X[3 * a], dy = X[3 * b + 1] - X[3 * a + 1],
             dz = X[3 * b + 2] - X[3 * a + 2];
      double l = sqrt(dx * dx + dy * dy + dz * dz);
      lmax = l > lmax ? l : lmax;
    }
  }
  double det = det3(Dm);
  *vol = det / 6;
  // DmInv = cof(Dm)^T / det (zero when singular)
  double G[9];
  cof3(Dm, G);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) DmInv[3 * i + j] = det != 0 ? G[3 * j + i] / det : 0;
  }
  if (!(*vol > 1e-15 * lmax * lmax * lmax) || !isfinite(*vol))
    return fl_seterr(FL_ERR_INVAL, "degenerate or inverted tetrahedron (volume %g m^3)", *vol);
  return FL_OK;
}


// dF_ij/dx_(a,k) = delta_ik G[a][j]
static void tet_grad(const double DmInv[9], int plane_strain, double G[4][3]) {
  for (int j = 0; j < 3; j++) {
    G[0][j] = 0;
    for (int m = 0; m < 3; m++) {
      G[m + 1][j] = DmInv[3 * m + j];
      G[0][j] -= DmInv[3 * m + j];
    }
  }
  if (plane_strain) {
    for (int a = 0; a < 4; a++) G[a][2] = 0;
  }
}


void fl_fem_tet_F(const double DmInv[9], const double x[12], int plane_strain, double F[9]) {
  double Ds[9];
  for (int i = 0; i < 3; i++) {
    for (int m = 0; m < 3; m++) Ds[3 * i + m] = x[3 * (m + 1) + i] - x[i];
  }
  fl_m3_mul(Ds, DmInv, F);
  if (plane_strain) {
    F[2] = 0;
    F[5] = 0;
    F[8] = 1;
  }
}

void fl_fem_tet_eval(const fl_fem_material *m, const double DmInv[9], double vol,
                     const double x[12], const double R0[9], int plane_strain, int project_psd,
                     double f[12], double K[144], double *J) {
  double F[9], P[9], dPdF[81], G[4][3];
  fl_fem_tet_F(DmInv, x, plane_strain, F);
  if (J) *J = det3(F);
  if (!f && !K) return;
  fl_fem_psi(m, F, R0, P, K ? dPdF : NULL, project_psd);
  tet_grad(DmInv, plane_strain, G);
  // f_(a,k) = -vol sum_j P_kj G_aj
  if (f) {
    for (int a = 0; a < 4; a++) {
      for (int k = 0; k < 3; k++) {
        f[3 * a + k] =
            -vol * (P[3 * k] * G[a][0] + P[3 * k + 1] * G[a][1] + P[3 * k + 2] * G[a][2]);
      }
    }
  }
  // K_(a,k),(b,l) = vol sum_jn dP_kj/dF_ln G_aj G_bn
  if (K) {
    for (int a = 0; a < 4; a++) {
      for (int k = 0; k < 3; k++) {
        for (int b = 0; b < 4; b++) {
          for (int l = 0; l < 3; l++) {
            double h = 0;
            for (int j = 0; j < 3; j++) {
              for (int n = 0; n < 3; n++)
                h += dPdF[(3 * k + j) * 9 + 3 * l + n] * G[a][j] * G[b][n];
            }
            K[(3 * a + k) * 12 + 3 * b + l] = vol * h;
          }
        }
      }
    }
  }
}

void fl_fem_tet_dJ(const double DmInv[9], const double x[12], int plane_strain, double *J,
                   double dJ[12]) {
  double F[9], G[4][3], C[9];
  fl_fem_tet_F(DmInv, x, plane_strain, F);
  *J = det3(F);
  // cof(F)_ij = dJ/dF_ij
  C[0] = F[4] * F[8] - F[5] * F[7];
  C[1] = F[5] * F[6] - F[3] * F[8];
  C[2] = F[3] * F[7] - F[4] * F[6];
  C[3] = F[2] * F[7] - F[1] * F[8];
  C[4] = F[0] * F[8] - F[2] * F[6];
  C[5] = F[1] * F[6] - F[0] * F[7];
  C[6] = F[1] * F[5] - F[2] * F[4];
  C[7] = F[2] * F[3] - F[0] * F[5];
  C[8] = F[0] * F[4] - F[1] * F[3];
  tet_grad(DmInv, plane_strain, G);
  for (int a = 0; a < 4; a++) {
    for (int i = 0; i < 3; i++)
      dJ[3 * a + i] = C[3 * i] * G[a][0] + C[3 * i + 1] * G[a][1] + C[3 * i + 2] * G[a][2];
  }
}


double fl_fem_stress_von_mises(const double F[9], const double P[9]) {
  double J = det3(F);
  if (!(J > 0)) return NAN;
  // sigma = sym(P F^T) / J
  double s[9];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      s[3 * i + j] =
          (P[3 * i] * F[3 * j] + P[3 * i + 1] * F[3 * j + 1] + P[3 * i + 2] * F[3 * j + 2]) / J;
    }
  }
  double sxx = s[0], syy = s[4], szz = s[8];
  double sxy = 0.5 * (s[1] + s[3]), syz = 0.5 * (s[5] + s[7]), szx = 0.5 * (s[2] + s[6]);
  double q =
      0.5 * ((sxx - syy) * (sxx - syy) + (syy - szz) * (syy - szz) + (szz - sxx) * (szz - sxx)) +
      3 * (sxy * sxy + syz * syz + szx * szx);
  return sqrt(q);
}

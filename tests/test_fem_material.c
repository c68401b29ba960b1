// SPDX-License-Identifier: Apache-2.0
/* test_fem_material.c: FEM constitutive models and the linear tet against finite differences,
 * closed forms and invariants (rest, rotations, small-strain limit, translation). */
#include <math.h>
#include <string.h>

#include "../core/fl_core.h"
#include "../sim/fl_fem_material.h"
#include "fl_test.h"

// LAPACK, as an eigen solver independent of the library's Jacobi
extern void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
                   double *w, double *work, const int *lwork, int *info);

//---- helpers ----

static unsigned long long rng_state = 12345;
static double urand(void) { // uniform in [-1, 1)
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) / 9007199254740992.0 * 2 - 1;
}

static double det3(const double A[9]) {
  return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
         A[2] * (A[3] * A[7] - A[4] * A[6]);
}

static void rot_axis(const double axis[3], double angle, double R[9]) {
  double q[4], a[3] = {axis[0], axis[1], axis[2]};
  fl_v3_normalize(a);
  fl_quat_from_axis_angle(a, angle, q);
  fl_quat_to_mat(q, R);
}

// max |a - b| / max |b|
static double rel_err(const double *a, const double *b, int n) {
  double d = 0, s = 0;
  for (int i = 0; i < n; i++) {
    d = fmax(d, fabs(a[i] - b[i]));
    s = fmax(s, fabs(b[i]));
  }
  return d / s;
}

static double max_abs(const double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(a[i]));
  return s;
}

// eigenvalues (ascending) and, if V != NULL, eigenvectors (columns of the column-major V) of the
// symmetric part of the n x n A
static int sym_eig(const double *A, int n, double *w, double *V) {
  double a[144], work[1024];
  int lwork = 1024, info = 0;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) a[i * n + j] = 0.5 * (A[i * n + j] + A[j * n + i]);
  }
  dsyev_(V ? "V" : "N", "U", &n, a, &n, w, work, &lwork, &info);
  if (V) memcpy(V, a, (size_t)(n * n) * sizeof(double));
  return info;
}

// the four models with moderate, comparable stiffness (MR: kappa not dominating the shear)
static fl_fem_material mat(int model) {
  fl_fem_material m = {model, 1e6, 0.3, 0.293e6, 0.177e6, 3e6};
  return m;
}

// a non-trivial F: rotation times a moderately large stretch/shear, det > 0
static void random_F(double F[9]) {
  double R[9], A[9], ax[3] = {urand(), urand(), urand()};
  for (;;) {
    for (int i = 0; i < 9; i++) A[i] = (i % 4 == 0) + 0.35 * urand();
    if (det3(A) > 0.4) break;
  }
  rot_axis(ax, 2.0 * urand(), R);
  fl_m3_mul(R, A, F);
}

static const double R0_test[9] = {0.36, 0.48, -0.8, -0.8, 0.6, 0, 0.48, 0.64, 0.6};

//---- names and checks ----

FL_TEST(names_round_trip) {
  for (int k = 0; k < 4; k++) ASSERT_EQ(fl_fem_model_parse(fl_fem_model_name(k)), k);
  ASSERT_EQ(fl_fem_model_parse("neo_hookean"), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), FL_FEM_MODEL_CHOICES);
  ASSERT_EQ(fl_fem_model_parse(NULL), FL_ERR_INVAL);
  ASSERT(strcmp(fl_fem_model_name(7), "unknown") == 0);
  return 0;
}

FL_TEST(material_check) {
  fl_fem_material m = {FL_FEM_COROTATED, 1e6, 0.5, 0, 0, 0};
  ASSERT_EQ(fl_fem_material_check(&m, "deformable body cyl"), FL_ERR_INVAL);
  ASSERT(strncmp(fl_errmsg(), "deformable body cyl", 19) == 0);
  ASSERT_STR_CONTAINS(fl_errmsg(), "nu");
  ASSERT_STR_CONTAINS(fl_errmsg(), "0.5");
  m.nu = 0.49;
  ASSERT_OK(fl_fem_material_check(&m, "b"));
  m.nu = -1;
  ASSERT_EQ(fl_fem_material_check(&m, "b"), FL_ERR_INVAL);
  m.nu = 0.3;
  m.E = 0;
  ASSERT_EQ(fl_fem_material_check(&m, "b"), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "E = 0");
  m.E = INFINITY;
  ASSERT_EQ(fl_fem_material_check(&m, "b"), FL_ERR_INVAL);
  m.model = 9;
  ASSERT_EQ(fl_fem_material_check(&m, "b"), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "unknown material model");
  // Mooney-Rivlin: seed 000's rubber passes, a zero shear or bulk modulus does not
  fl_fem_material mr = {FL_FEM_MOONEY_RIVLIN, 0, 0, 0.293e6, 0.177e6, 1410e6};
  ASSERT_OK(fl_fem_material_check(&mr, "cyl"));
  mr.c1 = mr.c2 = 0;
  ASSERT_EQ(fl_fem_material_check(&mr, "cyl"), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "c1 + c2");
  mr.c1 = 1e5;
  mr.kappa = 0;
  ASSERT_EQ(fl_fem_material_check(&mr, "cyl"), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "kappa");
  mr.kappa = 1e6;
  mr.c2 = -1;
  ASSERT_EQ(fl_fem_material_check(&mr, "cyl"), FL_ERR_INVAL);
  ASSERT_EQ(fl_fem_material_check(NULL, "cyl"), FL_ERR_INVAL);
  return 0;
}

FL_TEST(lame) {
  double mu, lambda;
  fl_fem_lame(1e6, 0.25, &mu, &lambda);
  ASSERT_NEAR(mu, 4e5, 1e-9);
  ASSERT_NEAR(lambda, 4e5, 1e-9);
  return 0;
}

//---- energy, stress and tangent against finite differences ----

// P against central differences of Psi, unprojected dPdF against central differences of P
static int check_fd(int model, const double F[9], double tol) {
  fl_fem_material m = mat(model);
  const double *R0 = model == FL_FEM_COROTATED_LAGGED ? R0_test : NULL;
  double P[9], dPdF[81], Pfd[9], Hfd[81];
  fl_fem_psi(&m, F, R0, P, dPdF, 0);
  double h = 1e-6;
  for (int c = 0; c < 9; c++) {
    double Fp[9], Fm[9], Pp[9], Pm[9];
    memcpy(Fp, F, sizeof Fp);
    memcpy(Fm, F, sizeof Fm);
    Fp[c] += h;
    Fm[c] -= h;
    double psip = fl_fem_psi(&m, Fp, R0, Pp, NULL, 0), psim = fl_fem_psi(&m, Fm, R0, Pm, NULL, 0);
    Pfd[c] = (psip - psim) / (2 * h);
    for (int r = 0; r < 9; r++) Hfd[r * 9 + c] = (Pp[r] - Pm[r]) / (2 * h);
  }
  double eP = rel_err(P, Pfd, 9), eH = rel_err(dPdF, Hfd, 81);
  if (!(eP <= tol) || !(eH <= tol)) {
    fprintf(stderr, "%s: P rel err %.3g, dPdF rel err %.3g (tol %.3g)\n", fl_fem_model_name(model),
            eP, eH, tol);
    return 1;
  }
  return 0;
}

FL_TEST(derivatives_fd) {
  double F[9];
  for (int trial = 0; trial < 5; trial++) {
    random_F(F);
    for (int model = 0; model < 4; model++) ASSERT(check_fd(model, F, 1e-6) == 0);
  }
  // compression and large stretch, where the non-linear models are indefinite
  double Fc[9] = {0.55, 0.1, 0.0, -0.05, 0.7, 0.1, 0.02, 0.0, 1.6};
  for (int model = 0; model < 4; model++) ASSERT(check_fd(model, Fc, 1e-6) == 0);
  // Mooney-Rivlin with seed 000's nearly incompressible rubber
  fl_fem_material m = {FL_FEM_MOONEY_RIVLIN, 0, 0, 0.293e6, 0.177e6, 1410e6};
  double P[9], Pfd[9], h = 1e-7;
  random_F(F);
  fl_fem_psi(&m, F, NULL, P, NULL, 0);
  for (int c = 0; c < 9; c++) {
    double Fp[9], Fm[9];
    memcpy(Fp, F, sizeof Fp);
    memcpy(Fm, F, sizeof Fm);
    Fp[c] += h;
    Fm[c] -= h;
    Pfd[c] = (fl_fem_psi(&m, Fp, NULL, NULL, NULL, 0) - fl_fem_psi(&m, Fm, NULL, NULL, NULL, 0)) /
             (2 * h);
  }
  ASSERT_LE(rel_err(P, Pfd, 9), 1e-6);
  return 0;
}

FL_TEST(tangent_symmetric) {
  double F[9], H[81];
  random_F(F);
  for (int model = 0; model < 4; model++) {
    fl_fem_material m = mat(model);
    fl_fem_psi(&m, F, R0_test, NULL, H, 0);
    double asym = 0;
    for (int a = 0; a < 9; a++) {
      for (int b = 0; b < 9; b++) asym = fmax(asym, fabs(H[a * 9 + b] - H[b * 9 + a]));
    }
    ASSERT_LE(asym, 1e-9 * max_abs(H, 81));
  }
  return 0;
}

FL_TEST(projection_psd) {
  // compressed and twisted: the corotated and Mooney-Rivlin tangents have negative eigenvalues
  double Fc[9] = {0.55, 0.1, 0.0, -0.05, 0.7, 0.1, 0.02, 0.0, 1.6};
  for (int model = FL_FEM_COROTATED; model <= FL_FEM_MOONEY_RIVLIN; model++) {
    fl_fem_material m = mat(model);
    double H[81], Hp[81], w[9], wp[9], V[81];
    fl_fem_psi(&m, Fc, NULL, NULL, H, 0);
    fl_fem_psi(&m, Fc, NULL, NULL, Hp, 1);
    ASSERT_EQ(sym_eig(H, 9, w, V), 0);
    ASSERT_EQ(sym_eig(Hp, 9, wp, NULL), 0);
    double nrm = max_abs(H, 81);
    ASSERT(w[0] < -1e-3 * nrm); // the projection has something to do
    ASSERT(wp[0] >= -1e-9 * nrm);
    // it is the nearest PSD matrix: V max(w, 0) V^T (LAPACK's eigenvectors, column-major)
    double ref[81];
    for (int i = 0; i < 9; i++) {
      for (int j = 0; j < 9; j++) {
        double s = 0;
        for (int k = 0; k < 9; k++) s += V[k * 9 + i] * fmax(w[k], 0) * V[k * 9 + j];
        ref[i * 9 + j] = s;
      }
    }
    ASSERT_LE(rel_err(Hp, ref, 81), 1e-9);
    // symmetric
    for (int a = 0; a < 9; a++) {
      for (int b = 0; b < 9; b++) ASSERT_NEAR(Hp[a * 9 + b], Hp[b * 9 + a], 1e-10 * nrm);
    }
  }
  // an already-PSD tangent (at rest, and under mild stretch) comes back unchanged, bit for bit
  double Fs[9] = {1.05, 0.01, 0, 0, 1.03, 0, 0, 0.01, 1.02};
  const double *Fl[2] = {NULL, Fs};
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (int t = 0; t < 2; t++) {
    const double *F = Fl[t] ? Fl[t] : I3;
    for (int model = FL_FEM_COROTATED; model <= FL_FEM_MOONEY_RIVLIN; model++) {
      fl_fem_material m = mat(model);
      double H[81], Hp[81], w[9];
      fl_fem_psi(&m, F, NULL, NULL, H, 0);
      ASSERT_EQ(sym_eig(H, 9, w, NULL), 0);
      ASSERT(w[0] >= -1e-12 * max_abs(H, 81));
      fl_fem_psi(&m, F, NULL, NULL, Hp, 1);
      ASSERT(memcmp(H, Hp, sizeof H) == 0);
    }
  }
  // linear and the lagged model are PSD for every F
  double F[9];
  random_F(F);
  for (int model = FL_FEM_LINEAR; model <= FL_FEM_COROTATED_LAGGED; model++) {
    fl_fem_material m = mat(model);
    double H[81], w[9];
    fl_fem_psi(&m, F, R0_test, NULL, H, 0);
    ASSERT_EQ(sym_eig(H, 9, w, NULL), 0);
    ASSERT(w[0] >= -1e-9 * max_abs(H, 81));
  }
  return 0;
}

// the projection's two paths (sim/fem_material.c)
int fl__fem_project_psd9(const double F[9], double H[81]);
void fl__fem_project_psd9_jacobi(double H[81]);

// nearest PSD matrix of sym(H) from LAPACK's eigenpairs
static void psd_reference(const double H[81], double ref[81]) {
  double w[9], V[81];
  sym_eig(H, 9, w, V);
  for (int i = 0; i < 9; i++) {
    for (int j = 0; j < 9; j++) {
      double s = 0;
      for (int k = 0; k < 9; k++) s += V[k * 9 + i] * fmax(w[k], 0) * V[k * 9 + j];
      ref[i * 9 + j] = s;
    }
  }
}

FL_TEST(projection_singular_frame_equals_jacobi) {
  // An isotropic energy's dP/dF is block diagonal in F's singular frame, so the projection
  // splits into a 3x3 and three 2x2 eigenproblems. Over random F, plane-strain compressions and
  // repeated singular values (F = I, uniform and uniaxial scalings, where the frame is not
  // unique) it must equal Jacobi on the 9x9 and LAPACK's nearest PSD matrix.
  int projected = 0;
  for (int t = 0; t < 400; t++) {
    double F[9];
    if (t < 100) {
      random_F(F);
    } else if (t < 300) { // plane strain: rotation and stretch in xy, F33 = 1
      double th = 3.2 * urand(), a = 0.85 + 0.25 * urand(), b = 0.85 + 0.25 * urand();
      double sh = 0.15 * urand(), c = cos(th), s = sin(th);
      double Fp[9] = {c * a, -s * b + c * sh, 0, s * a, c * b + s * sh, 0, 0, 0, 1};
      memcpy(F, Fp, sizeof F);
    } else { // repeated singular values, rotated
      double s1 = 0.7 + 0.1 * (t % 4), s3 = t % 3 == 0 ? s1 : 1.0, R[9];
      double D[9] = {s1, 0, 0, 0, s1, 0, 0, 0, s3}, ax[3] = {urand(), urand(), urand()};
      if (t % 5 == 0) D[0] = D[4] = D[8] = 1;
      rot_axis(ax, 2.0 * urand(), R);
      fl_m3_mul(R, D, F);
    }
    for (int model = FL_FEM_COROTATED; model <= FL_FEM_MOONEY_RIVLIN; model++) {
      fl_fem_material m = mat(model);
      double H[81], Hb[81], Hj[81], ref[81];
      fl_fem_psi(&m, F, NULL, NULL, H, 0);
      memcpy(Hb, H, sizeof H);
      memcpy(Hj, H, sizeof H);
      int path = fl__fem_project_psd9(F, Hb);
      fl__fem_project_psd9_jacobi(Hj);
      ASSERT(path == 0 || path == 1); // isotropic: never the fallback
      projected += path == 1;
      if (path == 0) ASSERT(memcmp(Hb, H, sizeof H) == 0);
      psd_reference(H, ref);
      double nrm = max_abs(H, 81);
      for (int i = 0; i < 81; i++) {
        ASSERT_NEAR(Hb[i], Hj[i], 1e-11 * nrm);
        if (path == 1) ASSERT_NEAR(Hb[i], ref[i], 1e-9 * nrm);
      }
    }
  }
  printf("projected %d of 800 tangents in the singular frame\n", projected);
  ASSERT(projected > 300);
  // a symmetric matrix with no such structure goes to Jacobi, and is still projected exactly
  double F[9], H[81], ref[81];
  random_F(F);
  for (int i = 0; i < 9; i++) {
    for (int j = 0; j <= i; j++) H[i * 9 + j] = H[j * 9 + i] = urand();
  }
  psd_reference(H, ref);
  ASSERT_EQ(fl__fem_project_psd9(F, H), 2);
  ASSERT_LE(rel_err(H, ref, 81), 1e-9);
  return 0;
}

//---- rest state and rotations ----

FL_TEST(rest_and_rotation_stress_free) {
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double P[9], R[9], ax[3] = {0.3, -1.0, 0.5};
  for (int model = 0; model < 4; model++) {
    fl_fem_material m = mat(model);
    ASSERT_NEAR(fl_fem_psi(&m, I3, NULL, P, NULL, 0), 0, 1e-9);
    ASSERT_LE(max_abs(P, 9), 1e-9);
  }
  // seed 000's rubber is stress-free at rest too (no offset needed)
  fl_fem_material mr = {FL_FEM_MOONEY_RIVLIN, 0, 0, 0.293e6, 0.177e6, 1410e6};
  ASSERT_NEAR(fl_fem_psi(&mr, I3, NULL, P, NULL, 0), 0, 1e-9);
  ASSERT_LE(max_abs(P, 9), 1e-9);
  for (int t = 0; t < 4; t++) {
    rot_axis(ax, 0.7 + 0.8 * t, R);
    for (int model = FL_FEM_COROTATED; model <= FL_FEM_MOONEY_RIVLIN; model++) {
      fl_fem_material m = mat(model);
      ASSERT_NEAR(fl_fem_psi(&m, R, NULL, P, NULL, 0), 0, 1e-6);
      ASSERT_LE(max_abs(P, 9), 1e-6); // Pa, against moduli of 1e6
    }
    fl_fem_material ml = mat(FL_FEM_COROTATED_LAGGED);
    ASSERT_NEAR(fl_fem_psi(&ml, R, R, P, NULL, 0), 0, 1e-6);
    ASSERT_LE(max_abs(P, 9), 1e-6);
    // while linear elasticity is not rotation invariant, and the lagged model needs R0 = R
    fl_fem_material mlin = mat(FL_FEM_LINEAR);
    ASSERT(fl_fem_psi(&mlin, R, NULL, P, NULL, 0) > 1e3);
    ASSERT(fl_fem_psi(&ml, R, NULL, P, NULL, 0) > 1e3);
  }
  return 0;
}

FL_TEST(small_strain_limit) {
  double H[9], F[9], P[9], Plin[9], mu, lambda;
  for (int i = 0; i < 9; i++) H[i] = urand();
  for (int i = 0; i < 9; i++) F[i] = (i % 4 == 0) + 1e-6 * H[i];
  fl_fem_material lin = mat(FL_FEM_LINEAR);
  fl_fem_psi(&lin, F, NULL, Plin, NULL, 0);
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (int model = FL_FEM_COROTATED_LAGGED; model <= FL_FEM_COROTATED; model++) {
    fl_fem_material m = mat(model);
    fl_fem_psi(&m, F, I3, P, NULL, 0);
    ASSERT_LE(rel_err(P, Plin, 9), 1e-4);
  }
  // Mooney-Rivlin against linear elasticity with mu = 2 (c1 + c2), lambda = kappa - 2 mu / 3
  double kap[2] = {3e6, 1410e6};
  for (int t = 0; t < 2; t++) {
    fl_fem_material mr = {FL_FEM_MOONEY_RIVLIN, 0, 0, 0.293e6, 0.177e6, kap[t]};
    mu = 2 * (mr.c1 + mr.c2);
    lambda = mr.kappa - 2 * mu / 3;
    fl_fem_material l2 = {FL_FEM_LINEAR, mu * (3 * lambda + 2 * mu) / (lambda + mu),
                          lambda / (2 * (lambda + mu)), 0, 0, 0};
    double m2, l2b;
    fl_fem_lame(l2.E, l2.nu, &m2, &l2b);
    ASSERT_NEAR(m2, mu, 1e-6 * mu);
    fl_fem_psi(&l2, F, NULL, Plin, NULL, 0);
    fl_fem_psi(&mr, F, NULL, P, NULL, 0);
    ASSERT_LE(rel_err(P, Plin, 9), 1e-4);
    // pure shear isolates mu even when kappa dominates
    double Fs[9] = {1, 1e-6, 0, 1e-6, 1, 0, 0, 0, 1};
    fl_fem_psi(&mr, Fs, NULL, P, NULL, 0);
    ASSERT_NEAR(P[1], mu * 2e-6, 1e-4 * mu * 2e-6);
    ASSERT_NEAR(P[3], mu * 2e-6, 1e-4 * mu * 2e-6);
  }
  // a model with the wrong shear modulus would fail: linear with mu halved differs by ~50 %
  fl_fem_material soft = mat(FL_FEM_LINEAR);
  soft.E *= 0.5;
  fl_fem_psi(&soft, F, NULL, P, NULL, 0);
  fl_fem_psi(&lin, F, NULL, Plin, NULL, 0);
  ASSERT(rel_err(P, Plin, 9) > 0.1);
  return 0;
}

FL_TEST(mooney_rivlin_inverted_finite) {
  fl_fem_material m = mat(FL_FEM_MOONEY_RIVLIN);
  double F[9] = {-0.8, 0, 0, 0, 1, 0, 0, 0, 1}, P[9], H[81];
  double psi = fl_fem_psi(&m, F, NULL, P, H, 1);
  ASSERT(isfinite(psi));
  for (int i = 0; i < 9; i++) ASSERT(isfinite(P[i]));
  for (int i = 0; i < 81; i++) ASSERT(isfinite(H[i]));
  // the energy decreases along dF = cof(F), the direction that raises J = det F towards 1
  double G[9] = {1, 0, 0, 0, -0.8, 0, 0, 0, -0.8}, d = 0;
  for (int i = 0; i < 9; i++) d += P[i] * G[i];
  ASSERT(d < 0);
  return 0;
}

FL_TEST(degenerate_F_finite) {
  // inverted, flat, rank one and zero F: every model gives finite Psi, P and projected dP/dF
  double Fd[5][9] = {{-0.8, 0, 0, 0, 1, 0, 0, 0, 1},
                     {1, 0.1, 0, 0, 1, 0, 0, 0, 0},
                     {0.5, 0.3, 0.1, 1.0, 0.6, 0.2, 1.5, 0.9, 0.3},
                     {0, 0, 0, 0, 0, 0, 0, 0, 0},
                     {-1, 0, 0, 0, 1, 0, 0, 0, 1}};
  for (int t = 0; t < 5; t++) {
    for (int model = 0; model < 4; model++) {
      fl_fem_material m = mat(model);
      double P[9], H[81], w[9];
      double psi = fl_fem_psi(&m, Fd[t], R0_test, P, H, 1);
      ASSERT(isfinite(psi));
      for (int i = 0; i < 9; i++) ASSERT(isfinite(P[i]));
      for (int i = 0; i < 81; i++) ASSERT(isfinite(H[i]));
      ASSERT_EQ(sym_eig(H, 9, w, NULL), 0);
      ASSERT(w[0] >= -1e-9 * max_abs(H, 81));
    }
  }
  return 0;
}

//---- polar decomposition ----

static int check_polar(const double F[9], int psd) {
  double R[9], RT[9], RTR[9], S[9], w[3];
  fl_fem_polar_rotation(F, R);
  for (int i = 0; i < 9; i++) {
    if (!isfinite(R[i])) FL_FAIL_("R not finite");
  }
  fl_m3_transpose(R, RT);
  fl_m3_mul(RT, R, RTR);
  for (int i = 0; i < 9; i++) ASSERT_NEAR(RTR[i], i % 4 == 0, 1e-12);
  ASSERT_NEAR(det3(R), 1, 1e-12);
  fl_m3_mul(RT, F, S);
  double nF = max_abs(F, 9);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) ASSERT_NEAR(S[3 * i + j], S[3 * j + i], 1e-12 * nF + 1e-300);
  }
  if (psd) {
    ASSERT_EQ(sym_eig(S, 3, w, NULL), 0);
    ASSERT(w[0] >= -1e-12 * nF);
  }
  return 0;
}

FL_TEST(polar_rotation) {
  double F[9];
  for (int t = 0; t < 50; t++) {
    random_F(F);
    ASSERT(check_polar(F, 1) == 0);
    // the rotation of R F is R times that of F
    double Rr[9], RF[9], R1[9], R2[9], RR1[9], ax[3] = {urand(), urand(), urand()};
    rot_axis(ax, 3 * urand(), Rr);
    fl_m3_mul(Rr, F, RF);
    fl_fem_polar_rotation(F, R1);
    fl_fem_polar_rotation(RF, R2);
    fl_m3_mul(Rr, R1, RR1);
    for (int i = 0; i < 9; i++) ASSERT_NEAR(R2[i], RR1[i], 1e-12);
  }
  // a pure rotation is its own polar rotation
  double R[9], Rp[9], ax[3] = {1, 2, 3};
  rot_axis(ax, 2.5, R);
  fl_fem_polar_rotation(R, Rp);
  for (int i = 0; i < 9; i++) ASSERT_NEAR(Rp[i], R[i], 1e-14);
  // near-singular and rank-deficient: flattened to a plane, a line, a point
  double Fn[5][9] = {
      {1, 0.2, 0, 0.1, 1, 0, 0, 0, 1e-9},
      {1, 0.2, 0, 0.1, 1, 0, 0, 0, 0},
      {0.5, 0.3, 0.1, 1.0, 0.6, 0.2, 1.5, 0.9, 0.3}, // rank 1 (rows proportional)
      {0, 0, 0, 0, 0, 0, 0, 0, 0},
      {1e-20, 0, 0, 0, 1e-20, 0, 0, 0, 1e-20},
  };
  for (int k = 0; k < 5; k++) ASSERT(check_polar(Fn[k], 1) == 0);
  // det F < 0 (inverted): R is still a proper rotation, S symmetric
  double Fi[9] = {-0.9, 0.1, 0.0, 0.2, 1.1, 0.1, 0.0, 0.3, 0.8};
  ASSERT(det3(Fi) < 0);
  ASSERT(check_polar(Fi, 0) == 0);
  double Fr[9] = {1, 0, 0, 0, 1, 0, 0, 0, -1};
  ASSERT(check_polar(Fr, 0) == 0);
  return 0;
}

//---- the tetrahedron ----

static const double X_ref[12] = {0, 0, 0, 0.1, 0, 0, 0.02, 0.12, 0, 0.03, 0.01, 0.09};

FL_TEST(tet_rest) {
  double DmInv[9], vol, Dm[9], I[9];
  ASSERT_OK(fl_fem_tet_rest(X_ref, DmInv, &vol));
  ASSERT_NEAR(vol, 0.1 * 0.12 * 0.09 / 6, 1e-15);
  for (int i = 0; i < 3; i++) {
    for (int m = 0; m < 3; m++) Dm[3 * i + m] = X_ref[3 * (m + 1) + i] - X_ref[i];
  }
  fl_m3_mul(Dm, DmInv, I);
  for (int i = 0; i < 9; i++) ASSERT_NEAR(I[i], i % 4 == 0, 1e-12);
  // flat: the fourth vertex in the plane of the others
  double Xf[12];
  memcpy(Xf, X_ref, sizeof Xf);
  Xf[11] = 0;
  ASSERT_EQ(fl_fem_tet_rest(Xf, DmInv, &vol), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "degenerate");
  // nearly flat (below 1e-15 of the longest edge cubed)
  Xf[11] = 1e-17;
  ASSERT_EQ(fl_fem_tet_rest(Xf, DmInv, &vol), FL_ERR_INVAL);
  // inverted: two vertices swapped
  double Xi[12];
  memcpy(Xi, X_ref, sizeof Xi);
  for (int k = 0; k < 3; k++) Xi[3 + k] = X_ref[6 + k], Xi[6 + k] = X_ref[3 + k];
  ASSERT_EQ(fl_fem_tet_rest(Xi, DmInv, &vol), FL_ERR_INVAL);
  ASSERT_STR_CONTAINS(fl_errmsg(), "inverted");
  ASSERT(vol < 0);
  double Xn[12];
  memcpy(Xn, X_ref, sizeof Xn);
  Xn[4] = NAN;
  ASSERT_EQ(fl_fem_tet_rest(Xn, DmInv, &vol), FL_ERR_INVAL);
  return 0;
}

FL_TEST(tet_F_plane_strain) {
  double DmInv[9], vol, x[12], F[9], A[9] = {1.1, 0.2, 0.3, -0.1, 0.9, 0.4, 0.05, 0.02, 1.0};
  ASSERT_OK(fl_fem_tet_rest(X_ref, DmInv, &vol));
  for (int a = 0; a < 4; a++) fl_m3_mulv(A, X_ref + 3 * a, x + 3 * a);
  fl_fem_tet_F(DmInv, x, 0, F);
  for (int i = 0; i < 9; i++) ASSERT_NEAR(F[i], A[i], 1e-12);
  fl_fem_tet_F(DmInv, x, 1, F);
  for (int i = 0; i < 9; i++) {
    double e = (i == 2 || i == 5) ? 0 : i == 8 ? 1 : A[i];
    ASSERT_NEAR(F[i], e, 1e-12);
  }
  return 0;
}

// f and K against central differences of vol Psi(F(x)) over the 12 coordinates
static int check_tet_fd(int model, int plane_strain, const double x[12]) {
  fl_fem_material m = mat(model);
  double DmInv[9], vol, f[12], K[144], ffd[12], Kfd[144], J;
  if (fl_fem_tet_rest(X_ref, DmInv, &vol) != FL_OK) FL_FAIL_("rest");
  fl_fem_tet_eval(&m, DmInv, vol, x, R0_test, plane_strain, 0, f, K, &J);
  double h = 1e-8; // m, the tet is 0.1 m across
  for (int c = 0; c < 12; c++) {
    double xp[12], xm[12], F[9], fp[12], fm[12];
    memcpy(xp, x, sizeof xp);
    memcpy(xm, x, sizeof xm);
    xp[c] += h;
    xm[c] -= h;
    fl_fem_tet_F(DmInv, xp, plane_strain, F);
    double Ep = vol * fl_fem_psi(&m, F, R0_test, NULL, NULL, 0);
    fl_fem_tet_F(DmInv, xm, plane_strain, F);
    double Em = vol * fl_fem_psi(&m, F, R0_test, NULL, NULL, 0);
    ffd[c] = -(Ep - Em) / (2 * h);
    fl_fem_tet_eval(&m, DmInv, vol, xp, R0_test, plane_strain, 0, fp, NULL, NULL);
    fl_fem_tet_eval(&m, DmInv, vol, xm, R0_test, plane_strain, 0, fm, NULL, NULL);
    for (int r = 0; r < 12; r++) Kfd[r * 12 + c] = -(fp[r] - fm[r]) / (2 * h);
  }
  double ef = rel_err(f, ffd, 12), eK = rel_err(K, Kfd, 144);
  if (!(ef <= 1e-6) || !(eK <= 1e-6)) {
    fprintf(stderr, "%s plane_strain %d: f rel err %.3g, K rel err %.3g\n",
            fl_fem_model_name(model), plane_strain, ef, eK);
    return 1;
  }
  // translation invariance: the forces sum to zero
  double nf = max_abs(f, 12);
  for (int k = 0; k < 3; k++) ASSERT_NEAR(f[k] + f[3 + k] + f[6 + k] + f[9 + k], 0, 1e-12 * nf);
  double F[9];
  fl_fem_tet_F(DmInv, x, plane_strain, F);
  ASSERT_NEAR(J, det3(F), 1e-14);
  return 0;
}

FL_TEST(tet_forces_stiffness_fd) {
  double x[12], A[9], b[3] = {0.3, -0.2, 0.1};
  for (int trial = 0; trial < 3; trial++) {
    random_F(A);
    for (int a = 0; a < 4; a++) {
      fl_m3_mulv(A, X_ref + 3 * a, x + 3 * a);
      for (int k = 0; k < 3; k++) x[3 * a + k] += b[k] + 0.01 * urand();
    }
    for (int model = 0; model < 4; model++) {
      ASSERT(check_tet_fd(model, 0, x) == 0);
      ASSERT(check_tet_fd(model, 1, x) == 0);
    }
  }
  return 0;
}

FL_TEST(tet_rest_force_free) {
  double DmInv[9], vol, f[12], K[144], J, w[12], x[12], R[9], ax[3] = {0.2, 0.5, -1};
  ASSERT_OK(fl_fem_tet_rest(X_ref, DmInv, &vol));
  for (int model = 0; model < 4; model++) {
    fl_fem_material m = mat(model);
    for (int ps = 0; ps < 2; ps++) {
      fl_fem_tet_eval(&m, DmInv, vol, X_ref, NULL, ps, 1, f, K, &J);
      ASSERT_NEAR(J, 1, 1e-14);
      ASSERT_LE(max_abs(f, 12), 1e-9);
      // K at rest: PSD with the 6 rigid modes in its null space (3 in plane strain... at least)
      ASSERT_EQ(sym_eig(K, 12, w, NULL), 0);
      ASSERT(w[0] >= -1e-9 * max_abs(K, 144));
      ASSERT(w[11] > 0);
    }
  }
  // rigidly moved: force-free for the rotation-invariant models (lagged: with R0 = R)
  rot_axis(ax, 1.2, R);
  for (int a = 0; a < 4; a++) {
    fl_m3_mulv(R, X_ref + 3 * a, x + 3 * a);
    x[3 * a] += 1.0;
  }
  for (int model = FL_FEM_COROTATED_LAGGED; model <= FL_FEM_MOONEY_RIVLIN; model++) {
    fl_fem_material m = mat(model);
    fl_fem_tet_eval(&m, DmInv, vol, x, R, 0, 1, f, NULL, NULL);
    ASSERT_LE(max_abs(f, 12), 1e-7); // N, against vol E ~ 0.2 N per unit strain
  }
  // a stretched tet pulls back: along x the force on the +x vertex is negative
  fl_fem_material m = mat(FL_FEM_COROTATED);
  memcpy(x, X_ref, sizeof x);
  for (int a = 0; a < 4; a++) x[3 * a] *= 1.1;
  fl_fem_tet_eval(&m, DmInv, vol, x, NULL, 0, 0, f, NULL, NULL);
  ASSERT(f[3] < 0 && f[0] > 0);
  return 0;
}

FL_TEST(tet_projected_stiffness_psd) {
  double DmInv[9], vol, K[144], w[12], x[12];
  double A[9] = {0.55, 0.1, 0.0, -0.05, 0.7, 0.1, 0.02, 0.0, 1.6};
  ASSERT_OK(fl_fem_tet_rest(X_ref, DmInv, &vol));
  for (int a = 0; a < 4; a++) fl_m3_mulv(A, X_ref + 3 * a, x + 3 * a);
  for (int model = FL_FEM_COROTATED; model <= FL_FEM_MOONEY_RIVLIN; model++) {
    fl_fem_material m = mat(model);
    fl_fem_tet_eval(&m, DmInv, vol, x, NULL, 0, 0, NULL, K, NULL);
    ASSERT_EQ(sym_eig(K, 12, w, NULL), 0);
    double nK = max_abs(K, 144);
    ASSERT(w[0] < -1e-6 * nK); // indefinite unprojected
    fl_fem_tet_eval(&m, DmInv, vol, x, NULL, 0, 1, NULL, K, NULL);
    ASSERT_EQ(sym_eig(K, 12, w, NULL), 0);
    ASSERT(w[0] >= -1e-9 * nK);
  }
  return 0;
}

//---- stress measure ----

FL_TEST(von_mises_uniaxial) {
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double s = -2.5e6, P[9] = {s, 0, 0, 0, 0, 0, 0, 0, 0};
  ASSERT_NEAR(fl_fem_stress_von_mises(I3, P), fabs(s), 1e-9 * fabs(s));
  // the same Cauchy stress through a deformed F: P = J sigma F^-T
  double F[9] = {1.2, 0.1, 0, 0, 0.9, 0.05, 0.02, 0, 1.1}, Finv[9], FinvT[9], sig[9] = {0};
  sig[0] = s;
  ASSERT_OK(fl_m3_inv(F, Finv));
  fl_m3_transpose(Finv, FinvT);
  fl_m3_mul(sig, FinvT, P);
  for (int i = 0; i < 9; i++) P[i] *= det3(F);
  ASSERT_NEAR(fl_fem_stress_von_mises(F, P), fabs(s), 1e-9 * fabs(s));
  // pure shear tau: sqrt(3) tau; hydrostatic: 0
  double Ps[9] = {0, 1e5, 0, 1e5, 0, 0, 0, 0, 0}, Ph[9] = {7e5, 0, 0, 0, 7e5, 0, 0, 0, 7e5};
  ASSERT_NEAR(fl_fem_stress_von_mises(I3, Ps), sqrt(3) * 1e5, 1e-6);
  ASSERT_NEAR(fl_fem_stress_von_mises(I3, Ph), 0, 1e-6);
  double Fi[9] = {-1, 0, 0, 0, 1, 0, 0, 0, 1};
  ASSERT(isnan(fl_fem_stress_von_mises(Fi, Ph)));
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
/* fl_fem_material.h: constitutive models and the linear tetrahedron of deformable FEM bodies
 * (seed 000, Han et al., sections V-VI and the appendix).
 *
 * Energy densities Psi(F) (J/m^3) of the deformation gradient F, their first Piola-Kirchhoff
 * stress P = dPsi/dF (Pa) and its derivative dP/dF (Pa), and the per-tetrahedron elastic
 * forces and stiffness built from them. Four models:
 *
 *   linear            Psi = mu eps:eps + lambda/2 tr(eps)^2, eps = (F + F^T)/2 - I.
 *                     Not rotation invariant; a reference for the small-strain limit.
 *   corotated_lagged  seed 000 eq. 7: Fh = R0^T F with R0 the rotation of the polar
 *                     decomposition of the previous step's F (given by the caller),
 *                     E = (Fh + Fh^T)/2 - I, Psi = mu |E|_F^2 + lambda/2 tr(E)^2. For fixed R0
 *                     Psi is quadratic in F, dP/dF is constant and PSD (appendix, Prop. 1): one
 *                     linear solve per step is exact.
 *   corotated         fixed corotated (Stomakhin et al. 2012): Psi = mu |F - R(F)|_F^2 +
 *                     lambda/2 (J - 1)^2, R(F) the rotation of F's own polar decomposition.
 *                     Non-linear; dP/dF indefinite under compression, projected on request.
 *                     Where two singular values sum to ~0 (rank <= 1) R is not differentiable
 *                     and dP/dF drops that rotational mode.
 *   mooney_rivlin     the compressible Mooney-Rivlin energy with isochoric invariants
 *                       Psi = c1 (I1b - 3) + c2 (I2b - 3) + kappa/2 (J - 1)^2,
 *                       I1b = J^(-2/3) tr(C), I2b = J^(-4/3) (tr(C)^2 - tr(C^2))/2,
 *                       C = F^T F, J = det F,
 *                     the decoupled form of seed 000's reference [41] (Kim and Eberle,
 *                     "Dynamic deformables", SIGGRAPH 2020 course) and of the ANSYS VM201
 *                     benchmark the cylinder press is compared against.
 *                     Rest stability: I1b and I2b are invariant under F -> s F, so their
 *                     gradients at F = I are orthogonal to I and, being isotropic, vanish:
 *                     dI1b/dF(I) = 2 I - (2/3) 3 I = 0, dI2b/dF(I) = 2(3 I - I) - (4/3) 3 I = 0;
 *                     the volume term kappa (J - 1) cof(F) is 0 at J = 1. So P(I) = 0 (and
 *                     P(R) = 0 for every rotation R) without a log barrier or an offset.
 *                     Small-strain limit: linear elasticity with shear modulus
 *                     mu = 2 (c1 + c2) and bulk modulus kappa, i.e. lambda = kappa - 2 mu/3.
 *                     Seed 000's rubber (c1 = 0.293 MPa, c2 = 0.177 MPa, bulk 1410 MPa) is
 *                     c1, c2, kappa here as given: mu = 0.94 MPa, lambda = 1409.37 MPa,
 *                     nu = (3 kappa - 2 mu)/(2 (3 kappa + mu)) = 0.49967 (nearly incompressible).
 *                     J^(-2/3) has no meaning for J <= 0: the isochoric factors use
 *                     max(J, FL_FEM_MR_JMIN), constant below it, so an inverted element stays
 *                     finite and is pushed back by the volume term, and P, dP/dF remain the
 *                     exact derivatives of the (clamped) energy away from J = FL_FEM_MR_JMIN.
 *
 * Conventions: SI units; 3x3 matrices are row-major double[9]; a 9x9 derivative dP/dF is
 * row-major with index (3 i + j) * 9 + 3 k + l = d P_ij / d F_kl. A tet's vertex arrays are
 * 4 x 3 (x0 y0 z0 x1 ...). Nothing here allocates; every function is reentrant (errors go to
 * the thread-local fl_errmsg()).
 */
#ifndef FL_FEM_MATERIAL_H
#define FL_FEM_MATERIAL_H
// layer 4: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 4
#error "sim/fl_fem_material.h is in sim/, layer 4: a lower layer may not include it (docs/layers.md)"
#endif

#include "../core/fl_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fl_fem_model {
  FL_FEM_LINEAR = 0,           /* small-strain linear elasticity */
  FL_FEM_COROTATED_LAGGED = 1, /* seed 000 eq. 7, rotation R0 lagged (given) */
  FL_FEM_COROTATED = 2,        /* fixed corotated, R from the polar decomposition of F */
  FL_FEM_MOONEY_RIVLIN = 3     /* compressible Mooney-Rivlin, isochoric invariants (above) */
} fl_fem_model;
#define FL_FEM_MODEL_CHOICES "linear|corotated_lagged|corotated|mooney_rivlin"

/* Below this J the Mooney-Rivlin isochoric factors J^(-2/3), J^(-4/3) are frozen (see above). */
#define FL_FEM_MR_JMIN 1e-6

typedef struct fl_fem_material {
  int model;            /* fl_fem_model */
  double E, nu;         /* Young's modulus (Pa) and Poisson ratio: linear and both corotated */
  double c1, c2, kappa; /* Mooney-Rivlin constants and bulk modulus (Pa); unused otherwise */
} fl_fem_material;

/* Static name of a model ("corotated_lagged"), or "unknown" for a value outside the enum. */
const char *fl_fem_model_name(int model);

/* The model named `s` (one of FL_FEM_MODEL_CHOICES, exact match), or FL_ERR_INVAL with a
 * message listing the choices when `s` is NULL or unknown. */
int fl_fem_model_parse(const char *s);

/* Lame parameters (Pa) from Young's modulus E (Pa) and Poisson ratio nu:
 * mu = E / (2 (1 + nu)), lambda = E nu / ((1 + nu)(1 - 2 nu)). No checks (see
 * fl_fem_material_check); mu and lambda must not be NULL. */
void fl_fem_lame(double E, double nu, double *mu, double *lambda);

/* Checks a material before use: a known model; for linear and both corotated models
 * E > 0 finite and -1 < nu < 0.5 (nu = 0.5 is incompressible, which these displacement-only
 * compressible models cannot represent: lambda is infinite); for Mooney-Rivlin c1, c2 >= 0
 * finite with c1 + c2 > 0 and kappa > 0 finite. `where` (may be NULL) starts the message, e.g.
 * "deformable body cyl: nu = 0.5 out of range ...", which names the field and its range.
 * Returns FL_OK or FL_ERR_INVAL (also for m == NULL). */
int fl_fem_material_check(const fl_fem_material *m, const char *where);

/* Rest data of the tet with vertices X (4 x 3, m): DmInv (3x3, 1/m) = inverse of
 * Dm = [X1-X0, X2-X0, X3-X0] (as columns) and *vol = det(Dm)/6 (m^3). The vertex order must
 * give det(Dm) > 0. Returns FL_OK, or FL_ERR_INVAL with the message "degenerate or inverted
 * tetrahedron (volume %g m^3)" when vol <= 1e-15 (longest edge)^3 or is not finite; DmInv and
 * *vol are still written then (vol signed, DmInv zero when Dm is singular). */
int fl_fem_tet_rest(const double X[12], double DmInv[9], double *vol);

/* Deformation gradient F = Ds DmInv (3x3), Ds = [x1-x0, x2-x0, x3-x0] from the current vertex
 * positions x (4 x 3, m). plane_strain != 0: the body is a mesh extruded along z with
 * d/dz = 0, so F's third column is (0, 0, 1) (F[2] = F[5] = 0, F[8] = 1). */
void fl_fem_tet_F(const double DmInv[9], const double x[12], int plane_strain, double F[9]);

/* Rotation R (3x3) of the polar decomposition F = R S: a proper rotation (det R = +1) with
 * S = R^T F symmetric; S is positive semi-definite when det F >= 0 and has one negative
 * eigenvalue (the smallest in magnitude) when det F < 0. Computed from a one-sided Jacobi SVD
 * F = U diag(s) V^T with U, V rotations, R = U V^T; a rank-deficient F (singular values below
 * 1e-14 of the largest) gets a deterministic completion, F = 0 gives R = I. Never NaN for
 * finite F. */
void fl_fem_polar_rotation(const double F[9], double R[9]);

/* Energy density Psi(F) (J/m^3) of material m (assumed checked) at F (3x3).
 *   R0          the lagged rotation (3x3) of corotated_lagged; NULL means identity; ignored by
 *               the other models.
 *   P           if not NULL, receives the first Piola-Kirchhoff stress dPsi/dF (3x3, Pa).
 *   dPdF        if not NULL, receives dP/dF (9x9, Pa, layout above); symmetric.
 *   project_psd if != 0, dPdF is replaced by its nearest PSD matrix (negative eigenvalues set
 *               to 0; the eigenproblem split into blocks in the singular frame of F, Jacobi on
 *               the 9x9 where dPdF is not block diagonal there) when its smallest eigenvalue is below -1e-12
 *               times the largest magnitude, and left exactly as is otherwise (so the zero
 *               rotational modes at rest are not disturbed by rounding). linear and
 *               corotated_lagged are PSD already (skipped).
 * An unknown model returns NAN and zeros P and dPdF. */
double fl_fem_psi(const fl_fem_material *m, const double F[9], const double R0[9], double P[9],
                  double dPdF[81], int project_psd);

/* Elastic response of one tet:
 *   m            material (assumed checked)
 *   DmInv, vol   rest data from fl_fem_tet_rest (1/m, m^3)
 *   x            current vertex positions (4 x 3, m)
 *   R0           lagged rotation for corotated_lagged (3x3, NULL = identity)
 *   plane_strain F from fl_fem_tet_F(..., plane_strain, ...); the third column of F is then
 *                constant, so only columns 0 and 1 depend on x and f, K are the exact
 *                derivatives of vol Psi(F(x)) in plane strain as in 3D.
 *   project_psd  project dP/dF to PSD before assembling K (so K is PSD)
 *   f            if not NULL, the 12 elastic forces (N) on the 4 vertices, -d(vol Psi)/dx
 *   K            if not NULL, the 12x12 stiffness (N/m, row-major) d^2(vol Psi)/dx^2 = -df/dx,
 *                symmetric
 *   J            if not NULL, det F
 * The forces sum to zero (translation invariance). */
void fl_fem_tet_eval(const fl_fem_material *m, const double DmInv[9], double vol,
                     const double x[12], const double R0[9], int plane_strain, int project_psd,
                     double f[12], double K[144], double *J);

/* det F of a tet (J) and its gradient with respect to the 12 vertex coordinates (dJ, 1/m),
 * F as in fl_fem_tet_F (plane strain: the z components of dJ are 0). Used by the nodal volume
 * term of sim/fem.c. */
void fl_fem_tet_dJ(const double DmInv[9], const double x[12], int plane_strain, double *J,
                   double dJ[12]);

/* Von Mises equivalent stress (Pa) of the Cauchy stress sigma = P F^T / det F (its symmetric
 * part; the linear and lagged models give a slightly non-symmetric P F^T):
 * sqrt(3/2 s:s), s the deviator of sigma. F, P are 3x3; returns NAN when det F <= 0. */
double fl_fem_stress_von_mises(const double F[9], const double P[9]);

#ifdef __cplusplus
}
#endif

#endif /* FL_FEM_MATERIAL_H */

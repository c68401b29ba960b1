// SPDX-License-Identifier: Apache-2.0
/* fl_fem.h: deformable bodies in the world: linear tetrahedral FEM (seed 000 sections V-VI).
 *
 * A deformable body is a tetrahedral mesh (sim/fl_mesh.h) with a constitutive model
 * (sim/fl_fem_material.h), a density, Rayleigh damping D = alpha M + beta K, boundary
 * conditions (degrees of freedom held at a prescribed velocity, 0 for fixed) and applied nodal
 * forces. Its generalized velocities are the 3 velocity components of every free vertex dof.
 *
 * The time step (seed 000 eq. 8-11 with theta = theta_vq = 1). With q = q0 + dt v,
 *   m(v) = M (v - v0) - dt (f_e(q0) - dt K v - (alpha M + beta K) v + f_ext),
 * K = K(q0) the stiffness at the start of the step (exact for the lagged corotational model,
 * whose elastic force is linear in q for a fixed R0; one linearization for the others), so
 *   A = (1 + alpha dt) M + dt (dt + beta) K,   v* = v0 - A^-1 m(v0)
 * over the free dofs (held dofs enter m at their prescribed velocity). The contact problem
 * A (v - v*) = J^T gamma is the body's clique of fl_problem.
 *
 * Two ways to present a body to the solvers (fl_world.fem_schur):
 *   full   the sparse block A_ff of all free dofs;
 *   schur  only the participating dofs p (free dofs of vertices that some contact row touches)
 *          with the dense Schur complement S = A_pp - A_pn A_nn^-1 A_np (seed eq. 14-16),
 *          read from the Cholesky factor of A ordered with p last (sim/fl_schur.h); after the
 *          solve dv_n = -A_nn^-1 A_np dv_p (eq. 15) from the same factor.
 * Both give the same velocities to round-off.
 *
 * Contact (sim/fem_collide.c): every boundary vertex of a mesh against rigid shapes (signed
 * distance to the exact shape), and every boundary vertex of one mesh against the boundary
 * triangles of another (barycentric weights on the triangle's vertices); see docs/fem.md for
 * what this misses.
 *
 * Units SI. Ownership: the world owns its deformable bodies and their meshes. Functions return
 * FL_OK (or an index >= 0) or a negative FL_ERR_* code with a message in fl_errmsg().
 */
#ifndef FL_FEM_H
#define FL_FEM_H
// layer 4: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 4
#error "sim/fl_fem.h is in sim/, layer 4: a lower layer may not include it (docs/layers.md)"
#endif

#include "fl_fem_material.h"
#include "fl_mesh.h"
#include "fl_world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a body's mesh came from, so that a scene file written back regenerates it exactly
 * (sim/scene_json.c). type "" means the mesh was given as arrays (written inline). */
typedef struct fl_fem_mesh_src {
  char type[12];   /* "box", "cylinder", "sphere", "file" or "" */
  double size[3];  /* box: edge lengths; cylinder: radius, length; sphere: radius (m) */
  int n[3];        /* box: cells; cylinder: rings, layers; sphere: resolution */
  char path[512];  /* file: the mesh file as resolved when loaded */
} fl_fem_mesh_src;

/* Description of a deformable body for fl_world_add_fem. */
typedef struct fl_fem_desc {
  const char *name;      /* NULL: "fem<k>" */
  fl_fem_material model; /* constitutive model and its parameters */
  double density;        /* kg/m^3 (> 0) */
  double alpha, beta;    /* Rayleigh damping (1/s and s), >= 0; seed 000's defaults 0, 0.01 */
  int material;          /* contact material index (friction, stiffness, tau_d) */
  int plane_strain;      /* 1: d/dz = 0 in F and z velocities held at 0 (seed 000 sec. VII-A) */
  int lumped;            /* 0: consistent mass of linear tets (default), 1: row-sum lumped */
  int nodal_volume;      /* 1: mooney_rivlin's volume term kappa/2 (J - 1)^2 on nodal volumes
                            (average nodal pressure, docs/fem.md) instead of per tet; 0: per tet */
  double pos[3];         /* m: translation applied to the mesh's rest positions */
  double vel[3];         /* m/s: initial velocity of every vertex */
} fl_fem_desc;

/* A deformable body (w->fem[k]). Fields are read-only outside sim/. */
typedef struct fl_fem_body {
  char name[32];
  fl_mesh *mesh;         /* owned; rest positions X (with desc->pos added) */
  fl_fem_material model;
  double density, alpha, beta;
  int material, plane_strain, lumped, nodal_volume;
  double *Vn;            /* (nvert) nodal rest volumes sum_e vol_e / 4 (nodal_volume only) */
  fl_int *v2t_ptr, *v2t; /* (nvert + 1), (4 ntet): the tets around each vertex (nodal_volume) */
  fl_int nodal_nnz;      /* triplets of the nodal volume stiffness per step */
  fl_int ndof;           /* 3 nvert */
  double *x;             /* (ndof) current positions (m) */
  double *v;             /* (ndof) current velocities (m/s) */
  double *x_start;       /* (ndof) positions at fl_world_reset_start */
  unsigned char *held;   /* (ndof) 1: the dof moves at v_held (boundary condition) */
  double *v_held;        /* (ndof) prescribed velocity of held dofs (m/s) */
  double *f_node;        /* (ndof) applied nodal forces (N), scaled by the ramp of fl_force */
  double f_t0, f_t1;     /* ramp of f_node (fl_force_scale's convention) */
  double *DmInv, *vol;   /* (ntet x 9), (ntet): rest data */
  double mass;           /* kg */
  fl_csr *M;             /* (ndof x ndof) mass matrix */
  double pos[3];         /* m: the translation applied to the mesh (fl_fem_desc.pos) */
  fl_fem_mesh_src src;   /* provenance of the mesh (for scene files) */
  struct fl_fem_step *st;/* step scratch (sim/fem.c) */
} fl_fem_body;

/* Adds a deformable body and takes ownership of *mesh (NULL-ed on success and on error).
 * Validates the description (model through fl_fem_material_check, density > 0, damping >= 0,
 * material index) and every tet's rest shape. Returns the body's index (>= 0) or an error
 * whose message names the body and field. */
int fl_world_add_fem(fl_world *w, const fl_fem_desc *d, fl_mesh **mesh);
/* Index of a deformable body by name or -1. */
int fl_world_find_fem(const fl_world *w, const char *name);

/* Holds the dofs selected by axes (bit 0 x, bit 1 y, bit 2 z) of the vertices whose rest
 * position lies in [lo, hi] (tolerance 1e-9 m) at the velocity vel (m/s; zero = fixed).
 * Returns the number of vertices selected (0 is an error: FL_ERR_INVAL naming the body). */
int fl_fem_hold_box(fl_world *w, int k, const double lo[3], const double hi[3], int axes,
                    const double vel[3]);
/* The same for a list of vertex indices (checked against the mesh). */
int fl_fem_hold_vertices(fl_world *w, int k, fl_int n, const fl_int *idx, int axes,
                         const double vel[3]);
/* Adds the force f (N, world frame) to each of the n listed vertices, ramped over [t0, t1]
 * like fl_force (the ramp is shared by all nodal forces of the body). */
int fl_fem_add_nodal_force(fl_world *w, int k, fl_int n, const fl_int *idx, const double f[3],
                           double t0, double t1);

/* Kinetic energy (J, 1/2 v^T M v), elastic energy (J, at the current positions with R0 from
 * the current F for the lagged model, i.e. its small-strain energy about the current
 * rotation) and gravitational potential (J, -x^T M g). Any output may be NULL. */
int fl_fem_energy(const fl_world *w, int k, double *kinetic, double *elastic, double *potential);
/* The elastic forces f_e = -dU/dx (N, ndof, caller-allocated) of body k at its current
 * positions, U its elastic energy as fl_fem_energy gives it (for corotated_lagged, about the
 * current rotation). Not to be called between fl_world_prepare and the end of its step (it
 * rebuilds the step's matrix). FL_OK or an error. */
int fl_fem_elastic_forces(fl_world *w, int k, double *f);
/* Total momentum M v (kg m/s) and the centre of mass (m). */
void fl_fem_momentum(const fl_world *w, int k, double p[3], double com[3]);
/* Von Mises stress (Pa) of every tet at the current positions (ntet, caller-allocated), and
 * the smallest det F (for inversion checks); either output may be NULL. */
int fl_fem_von_mises(const fl_world *w, int k, double *vm, double *min_detF);
/* Equivalent (von Mises) strain sqrt(2/3 dev(E):dev(E)) of the Green-Lagrange strain
 * E = (F^T F - I) / 2 of every tet at the current positions (ntet, caller-allocated;
 * dimensionless, 0 for a rigid motion). FL_OK or FL_ERR_INVAL (no such body). */
int fl_fem_equivalent_strain(const fl_world *w, int k, double *eps);
/* Writes body k's current mesh as VTK (.vtu) with point velocity and displacement from the
 * rest shape (m; for ParaView's Warp By Vector), cell von Mises stress (Pa) and equivalent
 * strain. */
int fl_fem_write_vtu(const fl_world *w, int k, const char *path);

/* Timing of the last prepared step's FEM work (s): element computations (stress, stiffness,
 * assembly), Schur complement (ordering, factorization, complement, v*), and geometry
 * (vertex queries). Summed over bodies; wall time for the element and Schur stages (their
 * loops may run on several threads), CPU time for geometry and recovery. */
typedef struct fl_fem_timing {
  double element_s, schur_s, geometry_s, recover_s;
  fl_int nparticipating; /* participating dofs over all bodies (schur mode), else free dofs */
  fl_int nfree;          /* free dofs over all bodies */
} fl_fem_timing;
void fl_world_fem_timing(const fl_world *w, fl_fem_timing *t);

/* The memory a deformable body's FEM system takes per tet (bytes), used to refuse a mesh before
 * it is built (fl_world_add_fem checks all bodies' tets against fl_mem_limit()). */
#define FL_FEM_BYTES_PER_TET 8192.0

#ifdef __cplusplus
}
#endif
#endif /* FL_FEM_H */

// SPDX-License-Identifier: Apache-2.0
/* registry.c: the explicit list of built-in solvers (PETSc KSPRegisterAll).
 *
 * A new solver adds one line below; GPU solvers go inside #ifdef FL_HAVE_CUDA, Siconos's
 * (solvers/siconos.c) inside #ifdef FL_HAVE_SICONOS. No solver
 * registers itself. */
#include "fl_solver_impl.h"


int fl_register_all(void) {
  static const fl_solver_ops *const builtin[] = {
    &fl_pgs_ops,
    &fl_jacobi_ops,
    &fl_primal_descent_ops,
    &fl_dual_descent_ops,
    &fl_sap_ops,
    &fl_nsn_ops,
    &fl_prox_ops,
    &fl_admm_ops,
    &fl_pnewton_ops,
    &fl_ipm_ops,
#ifdef FL_HAVE_SICONOS
    &fl_siconos_nsgs_ops,
    &fl_siconos_nsn_ac_ops,
    &fl_siconos_nsn_fb_ops,
    &fl_siconos_prox_ops,
    &fl_siconos_admm_ops,
    &fl_siconos_vi_eg_ops,
    &fl_siconos_gfc3d_nsgs_wr_ops,
    &fl_siconos_gfc3d_prox_wr_ops,
    &fl_siconos_gfc3d_admm_ops,
#endif
#ifdef FL_HAVE_CUDA
    &fl_jacobi_cuda_ops,
    &fl_pgs_cuda_ops,
#endif
  };
  // idempotent: a name already present is skipped
  for (size_t k = 0; k < sizeof builtin / sizeof builtin[0]; k++)
    if (!fl_solver_find(builtin[k]->name)) FL_TRY(fl_solver_register(builtin[k]));
  return FL_OK;
}

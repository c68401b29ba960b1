/* registry.c: the explicit list of built-in solvers (PETSc KSPRegisterAll).
 *
 * A new solver adds one line below; GPU solvers go inside #ifdef FL_HAVE_CUDA. No solver
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

// SPDX-License-Identifier: Apache-2.0
/* api_sizes.c: the sizes of the public structs as this library was built (fl_api_sizeof), so
 * that a binding that lays them out itself (python/frictionlab, ctypes) can check its layout
 * against the library it loaded instead of reading garbage. */
#include <string.h>

#include "fl_loop.h"
#include "fl_world.h"
#include "../solvers/fl_plugin.h"

size_t fl_api_sizeof(const char *type) {
  static const struct {
    const char *name;
    size_t size;
  } sizes[] = {
    {"fl_csr", sizeof(fl_csr)},
    {"fl_option_desc", sizeof(fl_option_desc)},
    {"fl_problem", sizeof(fl_problem)},
    {"fl_metrics", sizeof(fl_metrics)},
    {"fl_iter_stat", sizeof(fl_iter_stat)},
    {"fl_result", sizeof(fl_result)},
    {"fl_score", sizeof(fl_score)},
    {"fl_solver_ops", sizeof(fl_solver_ops)},
    {"fl_step_info", sizeof(fl_step_info)},
    {"fl_stepper", sizeof(fl_stepper)},
    {"fl_body", sizeof(fl_body)},
    {"fl_shape", sizeof(fl_shape)},
  };
  for (size_t k = 0; type && k < sizeof sizes / sizeof sizes[0]; k++)
    if (strcmp(sizes[k].name, type) == 0) return sizes[k].size;
  return 0;
}

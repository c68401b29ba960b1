/* fl_harness.h: the frictionlab command line and the results folders it writes.
 *
 * Each sub-command is one function taking the arguments after its name; it returns the
 * process exit status (0 success, 1 failure, 2 usage error) and prints its own messages.
 */
#ifndef FL_HARNESS_H
#define FL_HARNESS_H

#include "../core/fl_core.h"
#include "../problems/fl_problem.h"
#include "../solvers/fl_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

int fl_cmd_list(int argc, char **argv);   /* frictionlab list [solvers|problems|figures] */
int fl_cmd_solve(int argc, char **argv);  /* frictionlab solve FILE... --solver a,b ... */

#ifdef __cplusplus
}
#endif
#endif /* FL_HARNESS_H */

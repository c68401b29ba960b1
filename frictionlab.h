// SPDX-License-Identifier: Apache-2.0
/* frictionlab.h: the public C API of libfrictionlab, all of it (docs/api.md).
 *
 *   #include <frictionlab/frictionlab.h>      cc prog.c $(pkg-config --cflags --libs frictionlab)
 *
 * core/fl_core.h         errors, allocation, sparse matrices, typed option tables, versions
 * problems/fl_problem.h  the contact problem, its operators and metrics, FCLIB files, answers
 * solvers/fl_solver.h    the solver registry, options, solving, histories
 * solvers/fl_plugin.h    a solver of one's own (fl_solver_ops) and plug-ins
 * sim/fl_world.h         worlds, bodies, stepping, observables, scenes and scene files
 * sim/fl_geometry.h      shapes and collision
 * sim/fl_loop.h          the stepping loop
 * peers/fl_peer.h        MuJoCo as a peer, MJCF written and read
 *
 * Every function returns FL_OK or a negative FL_ERR_* code with a message in fl_errmsg().
 * The ABI version is FL_ABI_VERSION (the library's SONAME number); what changes it: docs/api.md.
 */
#ifndef FRICTIONLAB_H
#define FRICTIONLAB_H

#include "core/fl_core.h"
#include "problems/fl_problem.h"
#include "solvers/fl_solver.h"
#include "solvers/fl_plugin.h"
#include "sim/fl_world.h"
#include "sim/fl_geometry.h"
#include "sim/fl_loop.h"
#include "peers/fl_peer.h"

#endif /* FRICTIONLAB_H */

// SPDX-License-Identifier: Apache-2.0
/* fl_campaign.h: campaigns over MPI ranks (docs/campaigns.md).
 *
 * `mpiexec -n N frictionlab solve|profile ...` splits the (problem, solver) pairs over the
 * ranks: pair k (problems outer, solvers inner, the serial order) runs on rank k mod N, and
 * rank 0 gathers every pair's rows in the serial order and alone writes the results folder.
 * MPI is started only when the process was launched by an MPI launcher with more than one
 * rank (OpenMPI's OMPI_COMM_WORLD_SIZE, or PMI_SIZE / PMIX_SIZE), so a plain run never
 * touches MPI. MPI comes with the PETSc build (FL_HAVE_PETSC); a build without it refuses a
 * multi-rank launch instead of letting every rank write the same folder.
 *
 * All functions are collective where they say so: every rank must call them in the same
 * order. Serial (one rank) they are cheap no-ops with the obvious results.
 */
#ifndef FL_CAMPAIGN_H
#define FL_CAMPAIGN_H

#include <stddef.h>

/* Starts MPI when launched with more than one rank. Returns FL_OK (serial or started), or
 * FL_ERR_UNSUPPORTED (launched with several ranks by a build without MPI; message set). Safe
 * to call more than once. MPI is finalized at exit. */
int fl_campaign_init(void);

/* This process's rank, 0 when serial. */
int fl_campaign_rank(void);

/* Number of ranks, 1 when serial or before fl_campaign_init. */
int fl_campaign_size(void);

/* Collective: rank 0's value of `v`, on every rank. */
int fl_campaign_bcast_int(int v);

/* Collective: the sum of `v` over the ranks, on every rank. */
long fl_campaign_sum_long(long v);

/* Rank r > 0: sends n bytes of buf to rank 0 (blocking; messages from one rank arrive in the
 * order sent). Returns FL_OK or FL_ERR_LIBRARY. */
int fl_campaign_send(const void *buf, size_t n);

/* Rank 0: receives the next message from rank `from` into a new buffer (*buf, caller frees
 * with fl_free; NUL-terminated one byte past *n). Returns FL_OK, FL_ERR_NOMEM or
 * FL_ERR_LIBRARY. */
int fl_campaign_recv(int from, char **buf, size_t *n);

/* The dynamic deal (docs/campaigns.md): sends n bytes of buf to rank `to` (blocking), and
 * receives the next such message from any rank (*from gets its rank; *buf as for
 * fl_campaign_recv). Point to point, not collective; messages of one rank arrive in order.
 * FL_OK, FL_ERR_NOMEM or FL_ERR_LIBRARY. */
int fl_campaign_send_to(int to, const void *buf, size_t n);
int fl_campaign_recv_any(int *from, char **buf, size_t *n);

#endif

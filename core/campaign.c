// SPDX-License-Identifier: Apache-2.0
/* campaign.c: MPI ranks for campaigns (fl_campaign.h). */
#include "fl_campaign.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "fl_core.h"

#ifdef FL_HAVE_PETSC
#include <mpi.h>
#endif

static int rank_ = 0, size_ = 1, started_ = 0;

/* ranks announced by the launcher (OpenMPI, MPICH/Hydra, PMIx); 1 when none */
static int launched_size(void) {
  const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", NULL};
  for (int k = 0; vars[k]; k++) {
    const char *v = getenv(vars[k]);
    if (v && *v) {
      long n = strtol(v, NULL, 10);
      if (n > 1) return (int)n;
    }
  }
  return 1;
}


#ifdef FL_HAVE_PETSC
static void finalize_at_exit(void) {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}
#endif


int fl_campaign_init(void) {
  if (started_ || launched_size() <= 1) return FL_OK;
#ifdef FL_HAVE_PETSC
  int init = 0;
  MPI_Initialized(&init);
  if (!init) {
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
      return fl_seterr(FL_ERR_LIBRARY, "campaign: MPI_Init failed");
    // registered before PETSc's own handler (PETSc starts later, lazily), so it runs after it
    atexit(finalize_at_exit);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  started_ = 1;
  return FL_OK;
#else
  return fl_seterr(FL_ERR_UNSUPPORTED,
                   "launched on %d MPI ranks, but this build has no MPI (it comes with PETSc: "
                   "install petsc-dev and rebuild); run without mpiexec",
                   launched_size());
#endif
}


int fl_campaign_rank(void) { return rank_; }

int fl_campaign_size(void) { return size_; }


int fl_campaign_bcast_int(int v) {
#ifdef FL_HAVE_PETSC
  if (size_ > 1) MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
  return v;
}


long fl_campaign_sum_long(long v) {
#ifdef FL_HAVE_PETSC
  if (size_ > 1) {
    long s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return s;
  }
#endif
  return v;
}


// messages: an 8-byte length, then the bytes in pieces below INT_MAX (MPI counts are int)
#define PIECE ((size_t)1 << 30)

int fl_campaign_send(const void *buf, size_t n) {
#ifdef FL_HAVE_PETSC
  if (size_ <= 1) return fl_seterr(FL_ERR_STATE, "campaign: send without ranks");
  uint64_t len = n;
  if (MPI_Send(&len, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
    return fl_seterr(FL_ERR_LIBRARY, "campaign: MPI_Send failed on rank %d", rank_);
  for (size_t off = 0; off < n; off += PIECE) {
    size_t m = n - off < PIECE ? n - off : PIECE;
    if (MPI_Send((const char *)buf + off, (int)m, MPI_CHAR, 0, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
      return fl_seterr(FL_ERR_LIBRARY, "campaign: MPI_Send failed on rank %d", rank_);
  }
  return FL_OK;
#else
  (void)buf;
  (void)n;
  return fl_seterr(FL_ERR_STATE, "campaign: send without MPI");
#endif
}


int fl_campaign_recv(int from, char **buf, size_t *n) {
  *buf = NULL;
  *n   = 0;
#ifdef FL_HAVE_PETSC
  if (size_ <= 1) return fl_seterr(FL_ERR_STATE, "campaign: receive without ranks");
  uint64_t len = 0;
  if (MPI_Recv(&len, 1, MPI_UINT64_T, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return fl_seterr(FL_ERR_LIBRARY, "campaign: MPI_Recv from rank %d failed", from);
  char *b = fl_malloc((size_t)len + 1);
  if (!b) return fl_seterr(FL_ERR_NOMEM, "campaign: no memory for %llu bytes from rank %d",
                           (unsigned long long)len, from);
  for (size_t off = 0; off < len; off += PIECE) {
    size_t m = len - off < PIECE ? len - off : PIECE;
    if (MPI_Recv(b + off, (int)m, MPI_CHAR, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS) {
      fl_free(b);
      return fl_seterr(FL_ERR_LIBRARY, "campaign: MPI_Recv from rank %d failed", from);
    }
  }
  b[len] = '\0';
  *buf   = b;
  *n     = (size_t)len;
  return FL_OK;
#else
  (void)from;
  return fl_seterr(FL_ERR_STATE, "campaign: receive without MPI");
#endif
}


// the dynamic deal's messages (tag 1): any rank to any rank, the same framing as above
int fl_campaign_send_to(int to, const void *buf, size_t n) {
#ifdef FL_HAVE_PETSC
  if (size_ <= 1) return fl_seterr(FL_ERR_STATE, "campaign: send without ranks");
  uint64_t len = n;
  if (MPI_Send(&len, 1, MPI_UINT64_T, to, 1, MPI_COMM_WORLD) != MPI_SUCCESS)
    return fl_seterr(FL_ERR_LIBRARY, "campaign: MPI_Send to rank %d failed", to);
  for (size_t off = 0; off < n; off += PIECE) {
    size_t m = n - off < PIECE ? n - off : PIECE;
    if (MPI_Send((const char *)buf + off, (int)m, MPI_CHAR, to, 1, MPI_COMM_WORLD) != MPI_SUCCESS)
      return fl_seterr(FL_ERR_LIBRARY, "campaign: MPI_Send to rank %d failed", to);
  }
  return FL_OK;
#else
  (void)to;
  (void)buf;
  (void)n;
  return fl_seterr(FL_ERR_STATE, "campaign: send without MPI");
#endif
}


int fl_campaign_recv_any(int *from, char **buf, size_t *n) {
  *buf = NULL;
  *n   = 0;
#ifdef FL_HAVE_PETSC
  if (size_ <= 1) return fl_seterr(FL_ERR_STATE, "campaign: receive without ranks");
  uint64_t   len = 0;
  MPI_Status st;
  if (MPI_Recv(&len, 1, MPI_UINT64_T, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st) != MPI_SUCCESS)
    return fl_seterr(FL_ERR_LIBRARY, "campaign: MPI_Recv failed on rank %d", rank_);
  *from   = st.MPI_SOURCE;
  char *b = fl_malloc((size_t)len + 1);
  if (!b) return fl_seterr(FL_ERR_NOMEM, "campaign: no memory for %llu bytes from rank %d",
                           (unsigned long long)len, *from);
  for (size_t off = 0; off < len; off += PIECE) {
    size_t m = len - off < PIECE ? len - off : PIECE;
    // the rest of the message from the same rank (messages of one rank keep their order)
    if (MPI_Recv(b + off, (int)m, MPI_CHAR, *from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS) {
      fl_free(b);
      return fl_seterr(FL_ERR_LIBRARY, "campaign: MPI_Recv from rank %d failed", *from);
    }
  }
  b[len] = '\0';
  *buf   = b;
  *n     = (size_t)len;
  return FL_OK;
#else
  (void)from;
  return fl_seterr(FL_ERR_STATE, "campaign: receive without MPI");
#endif
}

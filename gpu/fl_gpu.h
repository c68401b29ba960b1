// SPDX-License-Identifier: Apache-2.0
/* fl_gpu.h: the plain-C face of the CUDA relaxation kernels (relax_kernels.cu), used by the
 * solver plug-ins of relax_gpu.c. Private to gpu/.
 *
 * One fl_gpu_relax holds, on the device, everything a projected Jacobi or a coloured
 * Gauss-Seidel iteration reads (layout in gpu/README.md): J (or W) and B^T in sliced ELL
 * (sell.h), B in CSR for the coloured scatter, the per-contact
 * constants precomputed on the host by solvers/pgs.c's fl__relax_setup, the iterate (v, gamma),
 * the contact velocities u and the impulse change dg. The per-contact arithmetic is
 * core/fl_contact_ops.h, the same statements the CPU solvers run.
 *
 * Return codes: 0 on success; < 0 with a message in `err` (create) or from
 * fl_gpu_last_error() (the rest). Sizes are counts of doubles or ints; every pointer passed in
 * is a host pointer the caller keeps; nothing is retained after the call returns.
 */
#ifndef FL_GPU_H
#define FL_GPU_H
// layer 3: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 3
#error "gpu/fl_gpu.h is in gpu/ (built with solvers/), layer 3: a lower layer may not include it (docs/layers.md)"
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The host data of one problem, as fl__relax holds it. CSR arrays are 0-based, columns sorted
 * within a row. */
typedef struct fl_gpu_relax_desc {
  int global;                 /* 1: velocity-based on J, B = J A^-1; 0: on W, q */
  int nc, nh, nrow, nv;       /* contacts, bilateral rows, rows = 3nc + nh, velocity dofs */
  int variant;                /* 0 = nf, 1 = block (relax.h) */
  /* global: J (nrow x nv); local: W (nrow x nrow) */
  const int32_t *A_ptr, *A_col;
  const double *A_val;
  int A_nnz;
  /* global only: B = J A^-1 (nrow x nv) and its transpose (nv x nrow) */
  const int32_t *B_ptr, *B_col, *BT_ptr, *BT_col;
  const double *B_val, *BT_val;
  int B_nnz;
  const double *cq;           /* (nrow) b (global) or q (local); NULL = 0 */
  const double *vstar;        /* (nv) global only */
  const double *Wd;           /* (9 nc) diagonal blocks with R_n on the normal */
  const double *Rn, *vhat, *lt, *rho, *mu; /* (nc) */
  const double *Wh, *g0dt, *comp, *lo, *hi; /* (nh) */
  /* colouring (pgs-cuda): ncolour colours, items of colour c at items[ptr[c] .. ptr[c+1]) */
  int ncolour;
  const int32_t *colour_ptr, *colour_items;
} fl_gpu_relax_desc;

typedef struct fl_gpu_relax fl_gpu_relax;

/* Sums of one residual evaluation (fixed-order reduction: equal run to run). */
typedef struct fl_gpu_sums {
  double natmap2;  /* sum of squared natural-map terms, contacts and bilateral rows */
  double ng2, nw2; /* |gamma|^2 and |(w_n, u_t)|^2 over contacts (Siconos norm) */
  double dg2;      /* |dg|^2 of the last sweep */
  int nact, nstick, nslip, nchange;
} fl_gpu_sums;

/* Number of CUDA devices (0 without a driver or a device; never fails). */
int fl_gpu_device_count(void);
/* Name of device 0 and its peak memory bandwidth in bytes/s (from its memory clock and bus
 * width); returns 0, or < 0 without a device. */
int fl_gpu_device_info(char *name, size_t n, double *peak_bytes_per_s);
/* The message of the last failure in this module (static storage). */
const char *fl_gpu_last_error(void);

/* Copies d to the device. Returns 0 or < 0 with a message in err (n bytes). *out owned by the
 * caller: free with fl_gpu_relax_free. */
int fl_gpu_relax_create(const fl_gpu_relax_desc *d, fl_gpu_relax **out, char *err, size_t n);
void fl_gpu_relax_free(fl_gpu_relax *g); /* NULL-safe */
/* Copies the iterate to the device (v (nv) may be NULL for local problems; gamma (nrow)). */
int fl_gpu_relax_upload(fl_gpu_relax *g, const double *v, const double *gamma);
/* Copies the device iterate back (v may be NULL). */
int fl_gpu_relax_download(fl_gpu_relax *g, double *v, double *gamma);
/* Global: v = v* + B^T gamma on the device. */
int fl_gpu_relax_start(fl_gpu_relax *g);
/* u = J v + b (or W gamma + q), then the residual sums of the iterate into *out; the mode of
 * each contact is kept for the next nchange. */
int fl_gpu_relax_residual(fl_gpu_relax *g, fl_gpu_sums *out);
/* One Jacobi sweep from the u of the last residual: dg = omega-relaxed local updates,
 * gamma += dg, v += B^T dg. */
int fl_gpu_relax_jacobi(fl_gpu_relax *g, double omega);
/* One Gauss-Seidel sweep colour by colour (items of a colour in parallel); dg holds each
 * item's change. */
int fl_gpu_relax_pgs(fl_gpu_relax *g, double omega);
/* Kernel seconds (CUDA events) and bytes moved since create or the last reset. */
void fl_gpu_relax_counters(const fl_gpu_relax *g, double *kernel_s, double *bytes);
void fl_gpu_relax_reset_counters(fl_gpu_relax *g);
/* The counters split by kind: which = 0 start (v = v* + B^T gamma), 1 sweeps, 2 residuals
 * (u = J v + b and the sums): seconds, bytes and calls since the last reset. */
void fl_gpu_relax_split(const fl_gpu_relax *g, int which, double *s, double *bytes, int *calls);
/* Device memory held by g (bytes). */
size_t fl_gpu_relax_bytes(const fl_gpu_relax *g);

#ifdef __cplusplus
}
#endif
#endif /* FL_GPU_H */

// SPDX-License-Identifier: Apache-2.0
/* relax_kernels.cu: projected Jacobi and coloured Gauss-Seidel iterations on the device.
 *
 * One thread per contact (or bilateral row) for the local updates and the residual, one thread
 * per velocity dof for v += B^T dg (a row of the stored transpose, so every v entry is summed in
 * the CPU's order without atomics). The local arithmetic is core/fl_contact_ops.h; the build
 * turns off fused multiply-add contraction (-fmad=false) so the products and sums are rounded
 * as the CPU rounds them, and sums over rows run in the CPU's order: the iterates equal the CPU
 * solvers' up to the last bit of hypot (CUDA's is within 2 ulp, glibc's within 1).
 *
 * Reductions (residual sums) go block by block in a fixed tree, then one block sums the block
 * partials in a fixed order: the same result on every run.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/fl_contact_ops.h"
#include "fl_gpu.h"
#include "sell.h"

#define NT 256   /* threads per block */
#define NSUM 8   /* sums per residual: natmap2, ng2, nw2, dg2, nact, nstick, nslip, nchange */

static char g_err[512];

const char *fl_gpu_last_error(void) { return g_err; }

static int fail(cudaError_t e, const char *what) {
  snprintf(g_err, sizeof g_err, "CUDA: %s: %s", what, cudaGetErrorString(e));
  return -1;
}

#define CK(call, what)                      \
  do {                                      \
    cudaError_t e_ = (call);                \
    if (e_ != cudaSuccess) return fail(e_, what); \
  } while (0)

struct fl_gpu_relax {
  int global, nc, nh, nrow, nv, nitem, variant, ncolour;
  int *colour_ptr;                  /* host copy (ncolour + 1) */
  /* J (or W) and B^T in sliced ELL, 32 rows a slice: entry k of row r at
   * sp[r / 32] + 32 k + r % 32, len[r] entries (threads of a warp read consecutive words) */
  int *A_sp, *A_len, *A_col, *BT_sp, *BT_len, *BT_col;
  int *B_ptr, *B_col, *items, *mode; /* B = J A^-1 in CSR: pgs-cuda's scatter */
  double *A_val, *B_val, *BT_val, *cq, *vstar, *w3, *Rn, *vhat, *lt, *rho, *mu;
  double *Wh, *g0dt, *comp, *lo, *hi;
  double *v, *gamma, *u, *dg, *part, *sums;
  int nblk;                         /* blocks of the residual over items */
  cudaEvent_t e0, e1;
  double kernel_s, bytes;           /* counters */
  double part_s[3], part_b[3];      /* the same split: start, sweeps, residuals */
  int part_n[3];
  double bytes_res, bytes_jac, bytes_pgs, bytes_start; /* compulsory bytes per call */
  size_t mem;
};

//---- kernels ----

/* the velocity u of item `it`'s rows from the current iterate */
__device__ static void item_u(const fl_gpu_relax g, int r0, int nr, double *u) {
  for (int c = 0; c < nr; c++) {
    double s = fl_sell_dot(g.A_sp, g.A_len, g.A_col, g.A_val, r0 + c, g.global ? g.v : g.gamma);
    u[c] = g.cq ? s + g.cq[r0 + c] : s;
  }
}

__device__ static void local_update(const fl_gpu_relax g, int i, const double *u,
                                    const double *gm, double omega, double *nw) {
  if (g.variant == 1) {
    fl_hd_relax_block(g.mu[i], g.Rn[i], g.vhat[i], g.rho[i], u, gm, nw);
  } else {
    double W[9] = {g.w3[3 * i], 0, 0, g.w3[3 * i + 1], 0, 0, g.w3[3 * i + 2], 0, 0};
    fl_hd_relax_nf(W, g.mu[i], g.Rn[i], g.vhat[i], g.lt[i], u, gm, nw);
  }
  fl_hd_apply_omega(g.mu[i], omega, gm, nw);
}

/* relaxed row update; `always`: relax even for omega = 1 (jacobi.c does, pgs.c does not) */
__device__ static double row_update(const fl_gpu_relax g, int h, double uh, double gh,
                                    double omega, int always) {
  double nw = fl_hd_relax_row(g.Wh[h], g.g0dt[h], g.comp[h], g.lo[h], g.hi[h], uh, gh);
  if (always || omega != 1.0) nw = fl_hd_clamp(gh + omega * (nw - gh), g.lo[h], g.hi[h]);
  return nw;
}

/* Jacobi: every item from the same u (the last residual's) */
__global__ static void k_jacobi(const fl_gpu_relax g, double omega) {
  int it = blockIdx.x * blockDim.x + threadIdx.x;
  if (it >= g.nitem) return;
  if (it < g.nc) {
    double gm[3] = {g.gamma[3 * it], g.gamma[3 * it + 1], g.gamma[3 * it + 2]}, nw[3];
    local_update(g, it, g.u + 3 * it, gm, omega, nw);
    for (int c = 0; c < 3; c++) {
      double d = nw[c] - gm[c];
      g.dg[3 * it + c] = d;
      g.gamma[3 * it + c] = gm[c] + d;
    }
  } else {
    int h = it - g.nc, row = 3 * g.nc + h;
    double gh = g.gamma[row], nw = row_update(g, h, g.u[row], gh, omega, 1);
    g.dg[row] = nw - gh;
    g.gamma[row] = gh + (nw - gh);
  }
}

/* v[j] += sum_r BT[j, r] x[r] over nonzero x[r], in increasing r (the CPU's scatter order) */
__global__ static void k_vupdate(const fl_gpu_relax g, const double *x) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= g.nv) return;
  g.v[j] = fl_sell_add_nonzero(g.BT_sp, g.BT_len, g.BT_col, g.BT_val, j, x, g.v[j]);
}

/* v = v* (then k_vupdate with gamma) */
__global__ static void k_vstar(const fl_gpu_relax g) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < g.nv) g.v[j] = g.vstar[j];
}

/* Gauss-Seidel on the items of one colour: no two share a dof (or a block of W) */
__global__ static void k_pgs_colour(const fl_gpu_relax g, int first, int n, double omega) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int it = g.items[first + t];
  if (it < g.nc) {
    int r0 = 3 * it;
    double u[3], nw[3], gm[3] = {g.gamma[r0], g.gamma[r0 + 1], g.gamma[r0 + 2]};
    item_u(g, r0, 3, u);
    local_update(g, it, u, gm, omega, nw);
    for (int c = 0; c < 3; c++) {
      double d = nw[c] - gm[c];
      g.dg[r0 + c] = d;
      if (d == 0.0) continue;
      g.gamma[r0 + c] = nw[c];
      if (g.global)
        for (int k = g.B_ptr[r0 + c]; k < g.B_ptr[r0 + c + 1]; k++)
          g.v[g.B_col[k]] += d * g.B_val[k];
    }
  } else {
    int h = it - g.nc, row = 3 * g.nc + h;
    double uh;
    item_u(g, row, 1, &uh);
    double gh = g.gamma[row], nw = row_update(g, h, uh, gh, omega, 0), d = nw - gh;
    g.dg[row] = d;
    if (d == 0.0) return;
    g.gamma[row] = nw;
    if (g.global)
      for (int k = g.B_ptr[row]; k < g.B_ptr[row + 1]; k++) g.v[g.B_col[k]] += d * g.B_val[k];
  }
}

/* u = J v + b (or W gamma + q), one thread per row */
__global__ static void k_u(const fl_gpu_relax g) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < g.nrow) item_u(g, r, 1, g.u + r);
}

/* the NSUM sums q of the block's threads into sh[k][0], in a fixed tree (same bits every run) */
__device__ static void block_sum(double (*sh)[NT], const double *q) {
  for (int k = 0; k < NSUM; k++) sh[k][threadIdx.x] = q[k];
  __syncthreads();
  for (int s = NT / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      for (int k = 0; k < NSUM; k++) sh[k][threadIdx.x] += sh[k][threadIdx.x + s];
    __syncthreads();
  }
}

/* the residual terms of u (k_u's), block sums into part[blockIdx.x * NSUM + q] */
__global__ static void k_residual(const fl_gpu_relax g) {
  __shared__ double sh[NSUM][NT];
  int it = blockIdx.x * blockDim.x + threadIdx.x;
  double q[NSUM] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (it < g.nc) {
    int r0 = 3 * it;
    double u[3] = {g.u[r0], g.u[r0 + 1], g.u[r0 + 2]};
    double gm[3] = {g.gamma[r0], g.gamma[r0 + 1], g.gamma[r0 + 2]}, wn;
    int m;
    q[0] = fl_hd_natmap2(g.mu[it], g.Rn[it], g.vhat[it], u, gm, &wn, &m);
    q[1] = gm[0] * gm[0] + gm[1] * gm[1] + gm[2] * gm[2];
    q[2] = wn * wn + u[1] * u[1] + u[2] * u[2];
    for (int c = 0; c < 3; c++) q[3] += g.dg[r0 + c] * g.dg[r0 + c];
    q[4] = m > 0;
    q[5] = m == 1;
    q[6] = m == 2;
    q[7] = m != g.mode[it];
    g.mode[it] = m;
  } else if (it < g.nitem) {
    int h = it - g.nc, row = 3 * g.nc + h;
    double uh = g.u[row], gh = g.gamma[row];
    double d = gh - fl_hd_clamp(gh - (uh + g.g0dt[h] + g.comp[h] * gh), g.lo[h], g.hi[h]);
    q[0] = d * d;
    q[3] = g.dg[row] * g.dg[row];
  }
  block_sum(sh, q);
  if (threadIdx.x == 0)
    for (int k = 0; k < NSUM; k++) g.part[blockIdx.x * NSUM + k] = sh[k][0];
}

/* one block: sums the block partials in a fixed order */
__global__ static void k_sum_parts(const fl_gpu_relax g) {
  __shared__ double sh[NSUM][NT];
  double q[NSUM] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int b = threadIdx.x; b < g.nblk; b += NT)
    for (int k = 0; k < NSUM; k++) q[k] += g.part[b * NSUM + k];
  block_sum(sh, q);
  if (threadIdx.x == 0)
    for (int k = 0; k < NSUM; k++) g.sums[k] = sh[k][0];
}

//---- host side ----

extern "C" int fl_gpu_device_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); /* clear the sticky "no driver" state */
    return 0;
  }
  return n;
}

extern "C" int fl_gpu_device_info(char *name, size_t n, double *peak) {
  if (fl_gpu_device_count() < 1) return -1;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
  if (name && n) snprintf(name, n, "%s", p.name);
  int clk_khz = 0, bus = 0;
  cudaDeviceGetAttribute(&clk_khz, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0);
  /* double data rate: 2 transfers per clock, bus width in bits */
  if (peak) *peak = 2.0 * clk_khz * 1e3 * (bus / 8.0);
  return 0;
}

template <typename T>
static int up(T **dst, const T *src, size_t n, size_t *mem, const char *what) {
  *dst = NULL;
  if (n == 0 || !src) return 0;
  CK(cudaMalloc((void **)dst, n * sizeof(T)), what);
  *mem += n * sizeof(T);
  CK(cudaMemcpy(*dst, src, n * sizeof(T), cudaMemcpyHostToDevice), what);
  return 0;
}

template <typename T>
static int alloc0(T **dst, size_t n, size_t *mem, const char *what) {
  *dst = NULL;
  if (n == 0) n = 1;
  CK(cudaMalloc((void **)dst, n * sizeof(T)), what);
  *mem += n * sizeof(T);
  CK(cudaMemset(*dst, 0, n * sizeof(T)), what);
  return 0;
}

/* CSR (nrow rows) to sliced ELL (sell.h) on the device: *dsp, *dlen, *dcol, *dval */
static int up_sell(int nrow, const int32_t *ptr, const int32_t *col, const double *val,
                   int **dsp, int **dlen, int **dcol, double **dval, size_t *mem,
                   const char *what) {
  *dsp = *dlen = *dcol = NULL;
  *dval = NULL;
  if (nrow <= 0) return 0;
  fl_sell h;
  if (fl_sell_from_csr(nrow, ptr, col, val, &h)) {
    snprintf(g_err, sizeof g_err, "%s: out of host memory (or over 2^31 padded entries)", what);
    return -1;
  }
  int rc = up(dsp, h.sp, (size_t)h.nslice + 1, mem, what);
  if (!rc) rc = up(dlen, h.len, (size_t)nrow, mem, what);
  if (!rc) rc = up(dcol, h.col, h.nent + 1, mem, what);
  if (!rc) rc = up(dval, h.val, h.nent + 1, mem, what);
  fl_sell_free(&h);
  return rc;
}

extern "C" void fl_gpu_relax_free(fl_gpu_relax *g) {
  if (!g) return;
  void *p[] = {g->A_sp, g->A_len, g->A_col, g->BT_sp, g->BT_len, g->BT_col, g->B_ptr,
               g->B_col, g->items, g->mode,
               g->A_val, g->B_val, g->BT_val, g->cq, g->vstar, g->w3, g->Rn, g->vhat, g->lt,
               g->rho, g->mu, g->Wh, g->g0dt, g->comp, g->lo, g->hi, g->v, g->gamma, g->u,
               g->dg, g->part, g->sums};
  for (size_t k = 0; k < sizeof p / sizeof p[0]; k++)
    if (p[k]) cudaFree(p[k]);
  if (g->e0) cudaEventDestroy(g->e0);
  if (g->e1) cudaEventDestroy(g->e1);
  free(g->colour_ptr);
  free(g);
}

extern "C" int fl_gpu_relax_create(const fl_gpu_relax_desc *d, fl_gpu_relax **out, char *err,
                                   size_t n) {
  *out = NULL;
  if (fl_gpu_device_count() < 1) {
    snprintf(err, n, "no CUDA device");
    return -1;
  }
  fl_gpu_relax *g = (fl_gpu_relax *)calloc(1, sizeof *g);
  if (!g) {
    snprintf(err, n, "out of host memory");
    return -1;
  }
  g->global = d->global;
  g->nc = d->nc;
  g->nh = d->nh;
  g->nrow = d->nrow;
  g->nv = d->global ? d->nv : 0;
  g->nitem = d->nc + d->nh;
  g->variant = d->variant;
  g->nblk = (g->nitem + NT - 1) / NT;
  if (g->nblk < 1) g->nblk = 1;
  size_t m = 0, nc = (size_t)d->nc, nh = (size_t)d->nh, nr = (size_t)d->nrow;
  // nf reads W[0], W[3], W[6] of each diagonal block: kept contiguous
  double *w3 = (double *)malloc(sizeof(double) * (3 * nc + 1));
  int rc = w3 ? 0 : -1;
  for (size_t i = 0; w3 && i < nc; i++) {
    w3[3 * i] = d->Wd[9 * i];
    w3[3 * i + 1] = d->Wd[9 * i + 3];
    w3[3 * i + 2] = d->Wd[9 * i + 6];
  }
  size_t annz = (size_t)d->A_nnz, bnnz = (size_t)d->B_nnz;
  if (!rc && annz)
    rc = up_sell(d->nrow, d->A_ptr, d->A_col, d->A_val, &g->A_sp, &g->A_len, &g->A_col,
                 &g->A_val, &m, "J/W");
  if (d->global) {
    if (d->ncolour > 0) {
      if (!rc) rc = up(&g->B_ptr, d->B_ptr, nr + 1, &m, "B row pointers");
      if (!rc) rc = up(&g->B_col, d->B_col, bnnz, &m, "B columns");
      if (!rc) rc = up(&g->B_val, d->B_val, bnnz, &m, "B values");
    }
    if (!rc && bnnz)
      rc = up_sell(d->nv, d->BT_ptr, d->BT_col, d->BT_val, &g->BT_sp, &g->BT_len, &g->BT_col,
                   &g->BT_val, &m, "B^T");
    if (!rc) rc = up(&g->vstar, d->vstar, (size_t)d->nv, &m, "v*");
    if (!rc) rc = alloc0(&g->v, (size_t)d->nv, &m, "v");
  }
  if (!rc) rc = up(&g->cq, d->cq, nr, &m, "b/q");
  if (!rc) rc = up(&g->w3, w3, 3 * nc, &m, "W blocks");
  if (!rc) rc = up(&g->Rn, d->Rn, nc, &m, "R_n");
  if (!rc) rc = up(&g->vhat, d->vhat, nc, &m, "vhat");
  if (!rc) rc = up(&g->lt, d->lt, nc, &m, "tangential steps");
  if (!rc) rc = up(&g->rho, d->rho, nc, &m, "block steps");
  if (!rc) rc = up(&g->mu, d->mu, nc, &m, "mu");
  if (!rc) rc = up(&g->Wh, d->Wh, nh, &m, "W_hh");
  if (!rc) rc = up(&g->g0dt, d->g0dt, nh, &m, "g0/dt");
  if (!rc) rc = up(&g->comp, d->comp, nh, &m, "compliance");
  if (!rc) rc = up(&g->lo, d->lo, nh, &m, "lo");
  if (!rc) rc = up(&g->hi, d->hi, nh, &m, "hi");
  if (!rc) rc = alloc0(&g->gamma, nr, &m, "gamma");
  if (!rc) rc = alloc0(&g->u, nr, &m, "u");
  if (!rc) rc = alloc0(&g->dg, nr, &m, "dgamma");
  if (!rc) rc = alloc0(&g->mode, nc, &m, "modes");
  if (!rc) rc = alloc0(&g->part, (size_t)g->nblk * NSUM, &m, "partial sums");
  if (!rc) rc = alloc0(&g->sums, NSUM, &m, "sums");
  if (!rc && d->ncolour > 0) {
    g->ncolour = d->ncolour;
    g->colour_ptr = (int *)malloc(sizeof(int) * (size_t)(d->ncolour + 1));
    if (!g->colour_ptr) rc = -1;
    else memcpy(g->colour_ptr, d->colour_ptr, sizeof(int) * (size_t)(d->ncolour + 1));
    if (!rc) rc = up(&g->items, d->colour_items, (size_t)g->nitem, &m, "colour items");
  }
  if (!rc && cudaEventCreate(&g->e0) != cudaSuccess) rc = fail(cudaGetLastError(), "event");
  if (!rc && cudaEventCreate(&g->e1) != cudaSuccess) rc = fail(cudaGetLastError(), "event");
  free(w3);
  if (rc) {
    snprintf(err, n, "%s", g_err[0] ? g_err : "out of host memory");
    fl_gpu_relax_free(g);
    return -1;
  }
  g->mem = m;

  // compulsory bytes of one call: every array read or written once, matrices as CSR (values,
  // columns, one int per row), gathers of v and gamma counted once (gpu/README.md)
  double D = 8, I = 4, nv = g->nv;
  double Ab = annz * (D + I) + (nr + 1) * I, Bb = bnnz * (D + I);
  double per_c = d->variant == 1 ? 6 : 8; /* rho | w3 (3) + lt; with Rn, vhat, mu */
  g->bytes_res = Ab + (g->global ? nv : nr) * D + nr * D /* cq */ + 2 * nr * D /* u w+r */ +
                 nr * D /* gamma */ + nr * D /* dg */ + 3 * nc * D + 2 * nc * I + nh * 4 * D;
  g->bytes_jac = nc * (3 + 3 + per_c + 3 + 3) * D + nh * 9 * D +
                 (g->global ? Bb + (nv + 1) * I + nr * D + 2 * nv * D : 0);
  g->bytes_pgs = Ab + nr * D /* cq */ + nc * (3 + per_c + 3 + 3) * D + nh * 9 * D +
                 (g->global ? Bb + (nr + 1) * I + 2 * nv * D + nv * D : nr * D);
  g->bytes_start = g->global ? Bb + (nv + 1) * I + nr * D + 3 * nv * D : 0;
  *out = g;
  return 0;
}

extern "C" int fl_gpu_relax_upload(fl_gpu_relax *g, const double *v, const double *gamma) {
  if (g->global && v) CK(cudaMemcpy(g->v, v, sizeof(double) * g->nv, cudaMemcpyHostToDevice), "upload v");
  if (g->nrow) CK(cudaMemcpy(g->gamma, gamma, sizeof(double) * g->nrow, cudaMemcpyHostToDevice), "upload gamma");
  CK(cudaMemset(g->dg, 0, sizeof(double) * (g->nrow ? g->nrow : 1)), "clear dgamma");
  CK(cudaMemset(g->mode, 0, sizeof(int) * (g->nc ? g->nc : 1)), "clear modes");
  return 0;
}

extern "C" int fl_gpu_relax_download(fl_gpu_relax *g, double *v, double *gamma) {
  if (g->global && v) CK(cudaMemcpy(v, g->v, sizeof(double) * g->nv, cudaMemcpyDeviceToHost), "download v");
  if (g->nrow) CK(cudaMemcpy(gamma, g->gamma, sizeof(double) * g->nrow, cudaMemcpyDeviceToHost), "download gamma");
  return 0;
}

static int blocks(int n) { return n > 0 ? (n + NT - 1) / NT : 1; }

static int timed_begin(fl_gpu_relax *g) {
  CK(cudaEventRecord(g->e0), "event");
  return 0;
}

static int timed_end(fl_gpu_relax *g, double bytes, int which) {
  CK(cudaGetLastError(), "kernel launch");
  CK(cudaEventRecord(g->e1), "event");
  CK(cudaEventSynchronize(g->e1), "kernel");
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, g->e0, g->e1), "event time");
  g->kernel_s += 1e-3 * ms;
  g->bytes += bytes;
  g->part_s[which] += 1e-3 * ms;
  g->part_b[which] += bytes;
  g->part_n[which]++;
  return 0;
}

extern "C" int fl_gpu_relax_start(fl_gpu_relax *g) {
  if (!g->global) return 0;
  if (timed_begin(g)) return -1;
  k_vstar<<<blocks(g->nv), NT>>>(*g);
  if (g->nrow) k_vupdate<<<blocks(g->nv), NT>>>(*g, g->gamma);
  return timed_end(g, g->bytes_start, 0);
}

extern "C" int fl_gpu_relax_residual(fl_gpu_relax *g, fl_gpu_sums *out) {
  if (timed_begin(g)) return -1;
  if (g->nrow) k_u<<<blocks(g->nrow), NT>>>(*g);
  k_residual<<<g->nblk, NT>>>(*g);
  k_sum_parts<<<1, NT>>>(*g);
  if (timed_end(g, g->bytes_res, 2)) return -1;
  double s[NSUM];
  CK(cudaMemcpy(s, g->sums, sizeof s, cudaMemcpyDeviceToHost), "download sums");
  out->natmap2 = s[0];
  out->ng2 = s[1];
  out->nw2 = s[2];
  out->dg2 = s[3];
  out->nact = (int)s[4];
  out->nstick = (int)s[5];
  out->nslip = (int)s[6];
  out->nchange = (int)s[7];
  return 0;
}

extern "C" int fl_gpu_relax_jacobi(fl_gpu_relax *g, double omega) {
  if (timed_begin(g)) return -1;
  k_jacobi<<<blocks(g->nitem), NT>>>(*g, omega);
  if (g->global && g->nrow) k_vupdate<<<blocks(g->nv), NT>>>(*g, g->dg);
  return timed_end(g, g->bytes_jac, 1);
}

extern "C" int fl_gpu_relax_pgs(fl_gpu_relax *g, double omega) {
  if (g->ncolour < 1 && g->nitem > 0) {
    snprintf(g_err, sizeof g_err, "pgs on the device needs a colouring");
    return -1;
  }
  if (timed_begin(g)) return -1;
  for (int c = 0; c < g->ncolour; c++) {
    int first = g->colour_ptr[c], n = g->colour_ptr[c + 1] - first;
    k_pgs_colour<<<blocks(n), NT>>>(*g, first, n, omega);
  }
  return timed_end(g, g->bytes_pgs, 1);
}

extern "C" void fl_gpu_relax_counters(const fl_gpu_relax *g, double *kernel_s, double *bytes) {
  if (kernel_s) *kernel_s = g->kernel_s;
  if (bytes) *bytes = g->bytes;
}

extern "C" void fl_gpu_relax_reset_counters(fl_gpu_relax *g) {
  g->kernel_s = 0;
  g->bytes = 0;
  for (int k = 0; k < 3; k++) {
    g->part_s[k] = g->part_b[k] = 0;
    g->part_n[k] = 0;
  }
}

extern "C" void fl_gpu_relax_split(const fl_gpu_relax *g, int which, double *s, double *bytes,
                                   int *calls) {
  *s = g->part_s[which];
  *bytes = g->part_b[which];
  *calls = g->part_n[which];
}

extern "C" size_t fl_gpu_relax_bytes(const fl_gpu_relax *g) { return g->mem; }

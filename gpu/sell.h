// SPDX-License-Identifier: Apache-2.0
/* sell.h: sliced ELL (SELL-32), the device layout of J (or W) and B^T (gpu/README.md).
 *
 * Rows are cut into slices of 32; a slice stores its rows' entries column-major, padded to the
 * slice's longest row, so entry k of row r sits at sp[r / 32] + 32 k + r % 32 and the 32 threads
 * of a warp, one per row, read 32 consecutive words at every k. A row's entries keep their CSR
 * order, so a row's sum is accumulated in the CPU's order and rounds as the CPU rounds.
 *
 * The packing is plain C on the host (sell.c), the row operations below are compiled for both
 * the host (tests) and the device (kernels): one index formula, tested on the CPU.
 */
#ifndef FL_SELL_H
#define FL_SELL_H
// layer 3: a source of a lower layer that includes this fails to build (docs/layers.md)
#if defined(FL_LAYER) && FL_LAYER < 3
#error "gpu/sell.h is in gpu/ (built with solvers/), layer 3: a lower layer may not include it (docs/layers.md)"
#endif

#include <stddef.h>
#include <stdint.h>

#include "../core/fl_contact_ops.h" /* FL_HD */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fl_sell {
  int nrow, nslice;
  size_t nent;      /* stored entries, padding included (a multiple of 32) */
  int *sp;          /* (nslice + 1) first entry of each slice */
  int *len;         /* (nrow) entries of each row */
  int *col;         /* (nent) column of each entry; padding: 0 */
  double *val;      /* (nent) value of each entry; padding: 0 */
} fl_sell;

/* Packs a CSR matrix of nrow rows (0-based ptr (nrow + 1), col and val (ptr[nrow])) into *out,
 * whose arrays the caller owns (fl_sell_free). Returns 0, or -1 when out of memory or when the
 * padded size does not fit an int index (*out then holds nothing). */
int fl_sell_from_csr(int nrow, const int32_t *ptr, const int32_t *col, const double *val,
                     fl_sell *out);
void fl_sell_free(fl_sell *s); /* NULL-safe; leaves *s empty */

/* Row `row` times x (x indexed by column), summed in CSR order. */
FL_HD double fl_sell_dot(const int *sp, const int *len, const int *col, const double *val,
                         int row, const double *x) {
  int base = sp[row >> 5] + (row & 31), n = len[row];
  double acc = 0;
  for (int k = 0; k < n; k++) acc += val[base + 32 * k] * x[col[base + 32 * k]];
  return acc;
}

/* acc plus row `row` times x over the entries whose x is nonzero, in CSR order: the sum a CPU
 * scatter of x's nonzero entries in increasing order builds (v += B^T dg). */
FL_HD double fl_sell_add_nonzero(const int *sp, const int *len, const int *col,
                                 const double *val, int row, const double *x, double acc) {
  int base = sp[row >> 5] + (row & 31), n = len[row];
  for (int k = 0; k < n; k++) {
    double xr = x[col[base + 32 * k]];
    if (xr != 0) acc += val[base + 32 * k] * xr;
  }
  return acc;
}

#ifdef __cplusplus
}
#endif
#endif /* FL_SELL_H */

// SPDX-License-Identifier: Apache-2.0
/* sell.c: CSR to sliced ELL on the host (sell.h). */
#include "sell.h"

#include <limits.h>
#include <stdlib.h>

void fl_sell_free(fl_sell *s) {
  if (!s) return;
  free(s->sp);
  free(s->len);
  free(s->col);
  free(s->val);
  *s = (fl_sell){0};
}

int fl_sell_from_csr(int nrow, const int32_t *ptr, const int32_t *col, const double *val,
                     fl_sell *out) {
  *out = (fl_sell){0};
  if (nrow < 0) return -1;
  int ns = (nrow + 31) / 32;
  out->nrow = nrow;
  out->nslice = ns;
  out->sp = malloc(sizeof(int) * ((size_t)ns + 1));
  out->len = malloc(sizeof(int) * ((size_t)nrow + 1));
  if (!out->sp || !out->len) goto fail;
  size_t tot = 0;
  for (int sl = 0; sl < ns; sl++) {
    int w = 0;
    for (int r = 32 * sl; r < nrow && r < 32 * sl + 32; r++) {
      out->len[r] = ptr[r + 1] - ptr[r];
      if (out->len[r] > w) w = out->len[r];
    }
    if (tot > (size_t)INT_MAX) goto fail;
    out->sp[sl] = (int)tot;
    tot += 32 * (size_t)w;
  }
  if (tot > (size_t)INT_MAX) goto fail;
  out->sp[ns] = (int)tot;
  out->nent = tot;
  // one spare entry: a matrix with no entries still gets valid pointers
  out->col = calloc(tot + 1, sizeof(int));
  out->val = calloc(tot + 1, sizeof(double));
  if (!out->col || !out->val) goto fail;
  for (int r = 0; r < nrow; r++)
    for (int k = 0; k < out->len[r]; k++) {
      size_t at = (size_t)out->sp[r / 32] + 32 * (size_t)k + (size_t)(r % 32);
      out->col[at] = col[ptr[r] + k];
      out->val[at] = val[ptr[r] + k];
    }
  return 0;
fail:
  fl_sell_free(out);
  return -1;
}

// SPDX-License-Identifier: Apache-2.0
/* broadphase.c: pairs of overlapping axis-aligned boxes with a uniform grid.
 *
 * A sweep along one axis costs O(n^(5/3)) for bodies filling a volume (every box meets the
 * whole slab of boxes at its abscissa), so the bulk goes into a uniform grid instead:
 *   1. the cell size c is 1.5 times the 95th percentile of the boxes' largest side, so a typical
 *      box covers at most 2 cells per axis and under 5 % of the boxes are "wide";
 *   2. (cell, box) entries of the small boxes are sorted by cell (radix sort, O(n)); boxes of
 *      one cell are tested pairwise, and a pair is reported only from the cell holding the low
 *      corner of the two boxes' intersection, so it is found once;
 *   3. a wide box queries the grid over the cells it covers (the same rule removes repeats),
 *      or tests every small box when it covers more cells than there are entries;
 *   4. wide boxes among themselves: sweep and prune along x;
 *   5. boxes with an infinite side (planes) are tested against every other box.
 * Cost O(n + k) for k candidate pairs when the boxes have similar sizes (the percentile by
 * quickselect, the grid by radix sort, the pairs by counting sort on i). Up to
 * fl__bp_sweep_max boxes, one sweep along x over all of them is cheaper and gives the same
 * pairs.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fl_geometry.h"

/* cell size over the 95th percentile of the boxes' largest side (>= 1: boxes up to that
 * size cover at most 2 cells per axis) */
#ifndef CELL_FACTOR
#define CELL_FACTOR 1.5
#endif

/* at most this many boxes go through one sweep along x instead of the grid (tests set it to
 * compare the two) */
extern fl_int fl__bp_sweep_max;
fl_int fl__bp_sweep_max = 128;

#define FL_BP_BYTES_PER_PAIR 1536.0

typedef struct plist {
  fl_int *p;
  size_t n, cap;
} plist;


static int push(plist *L, fl_int i, fl_int j) {
  if (L->n == L->cap) {
    size_t cap = L->cap ? 2 * L->cap : 1024;
    // every candidate pair costs far more downstream (narrow phase, contact rows, the problem):
    // 1.5 kB a pair measured (1000 spheres with margin 1e6: 5e5 pairs, 780 MB); refuse before
    // allocating when that estimate passes the memory limit (issue 51)
    if (cap > 65536) {
      char what[96];
      snprintf(what, sizeof what, "more than %zu candidate pairs (about 1.5 kB a pair)", L->n);
      FL_TRY(fl_mem_check("broad phase", what, (double)cap * FL_BP_BYTES_PER_PAIR));
    }
    fl_int *p = fl_realloc(L->p, sizeof(fl_int) * 2 * cap);
    if (!p) return fl_seterr(FL_ERR_NOMEM, "broad phase: out of memory for %zu pairs", cap);
    L->p = p;
    L->cap = cap;
  }
  L->p[2 * L->n] = i < j ? i : j;
  L->p[2 * L->n + 1] = i < j ? j : i;
  L->n++;
  return FL_OK;
}


static inline int overlap(const double *lo, const double *hi, fl_int i, fl_int j) {
  for (int k = 0; k < 3; k++)
    if (lo[3 * i + k] > hi[3 * j + k] || lo[3 * j + k] > hi[3 * i + k]) return 0;
  return 1;
}


typedef struct key {
  double lo;
  fl_int i;
} key;


static int cmp_key(const void *pa, const void *pb) {
  const key *a = pa, *b = pb;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}


/* one grid entry: the cell's linear index and the box */
typedef struct entry {
  uint64_t cell;
  fl_int box;
} entry;


/* stable LSD radix sort on the cell index, 11 bits a pass (the count array stays in L1;
 * the passes above the largest index are skipped) */
#define RADIX_BITS 11
#define RADIX_SIZE (1 << RADIX_BITS)
static int radix_sort(entry *e, size_t n, uint64_t maxkey) {
  if (n <= 64) {
    // a few bodies: a stable insertion sort gives the same order without the 2048-bucket
    // passes (most of a five-box step's broad phase)
    for (size_t k = 1; k < n; k++) {
      entry t = e[k];
      size_t j = k;
      for (; j > 0 && e[j - 1].cell > t.cell; j--) e[j] = e[j - 1];
      e[j] = t;
    }
    return FL_OK;
  }
  entry *tmp = fl_malloc(sizeof(entry) * (n ? n : 1));
  if (!tmp) return fl_seterr(FL_ERR_NOMEM, "broad phase: out of memory for %zu grid entries", n);
  size_t cnt[RADIX_SIZE];
  entry *src = e, *dst = tmp;
  for (int shift = 0; shift < 64 && (shift == 0 || (maxkey >> shift) != 0); shift += RADIX_BITS) {
    memset(cnt, 0, sizeof(cnt));
    for (size_t k = 0; k < n; k++) cnt[(src[k].cell >> shift) & (RADIX_SIZE - 1)]++;
    size_t sum = 0;
    for (int b = 0; b < RADIX_SIZE; b++) {
      size_t c = cnt[b];
      cnt[b] = sum;
      sum += c;
    }
    for (size_t k = 0; k < n; k++) dst[cnt[(src[k].cell >> shift) & (RADIX_SIZE - 1)]++] = src[k];
    entry *t = src;
    src = dst, dst = t;
  }
  if (src != e) memcpy(e, src, sizeof(entry) * n);
  fl_free(tmp);
  return FL_OK;
}


/* the k-th smallest of x[0..n) (Wirth's selection; reorders x) */
static double select_kth(double *x, size_t n, size_t k) {
  ptrdiff_t l = 0, m = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
  while (l < m) {
    double piv = x[kk];
    ptrdiff_t i = l, j = m;
    do {
      while (x[i] < piv) i++;
      while (piv < x[j]) j--;
      if (i <= j) {
        double t = x[i];
        x[i] = x[j], x[j] = t;
        i++, j--;
      }
    } while (i <= j);
    if (j < kk) l = i;
    if (kk < i) m = j;
  }
  return x[kk];
}


typedef struct grid {
  double org[3], c;  /* origin and cell size */
  int64_t dim[3];    /* cells per axis */
} grid;


static inline int64_t cell_of(const grid *g, double x, int k) {
  int64_t i = (int64_t)floor((x - g->org[k]) / g->c);
  return i < 0 ? 0 : i >= g->dim[k] ? g->dim[k] - 1 : i;
}


static inline uint64_t cell_index(const grid *g, int64_t ix, int64_t iy, int64_t iz) {
  return ((uint64_t)ix * (uint64_t)g->dim[1] + (uint64_t)iy) * (uint64_t)g->dim[2] + (uint64_t)iz;
}


/* the cell of the low corner of the intersection of boxes i and j */
static inline uint64_t pair_cell(const grid *g, const double *lo, fl_int i, fl_int j) {
  int64_t c[3];
  for (int k = 0; k < 3; k++) c[k] = cell_of(g, fmax(lo[3 * i + k], lo[3 * j + k]), k);
  return cell_index(g, c[0], c[1], c[2]);
}


int fl_broadphase(fl_int n, const double *lo, const double *hi, const unsigned char *skip,
                  fl_int **pairs, fl_int *npairs) {
  if (!pairs || !npairs) return fl_seterr(FL_ERR_INVAL, "fl_broadphase: NULL output");
  *pairs = NULL;
  *npairs = 0;
  if (n < 0 || (n > 0 && (!lo || !hi)))
    return fl_seterr(FL_ERR_INVAL, "fl_broadphase: n = %d with %s bounds", (int)n,
                     (!lo || !hi) ? "NULL" : "given");
  if (n < 2) return FL_OK;
  for (fl_int i = 0; i < 3 * n; i++)
    if (isnan(lo[i]) || isnan(hi[i]))
      return fl_seterr(FL_ERR_INVAL, "fl_broadphase: box %d has a NaN bound (axis %d)",
                       (int)(i / 3), (int)(i % 3));

  int rc = FL_OK;
  plist L = {NULL, 0, 0};
  double *side = fl_malloc(sizeof(double) * (size_t)n);
  unsigned char *cls = fl_malloc((size_t)n); // 0 small, 1 wide, 2 unbounded
  fl_int *small = fl_malloc(sizeof(fl_int) * (size_t)n), *wide = fl_malloc(sizeof(fl_int) * (size_t)n);
  fl_int *inf = fl_malloc(sizeof(fl_int) * (size_t)n);
  entry *ent = NULL;
  key *keys = NULL;
  if (!side || !cls || !small || !wide || !inf) {
    rc = fl_seterr(FL_ERR_NOMEM, "broad phase: out of memory for %d boxes", (int)n);
    goto done;
  }

  if (n <= fl__bp_sweep_max) {
    // a few boxes: sweep and prune along x over all of them (the grid's set-up costs more
    // than the candidate pairs at this size); the same pairs, sorted the same way below
    keys = fl_malloc(sizeof(key) * (size_t)n);
    if (!keys) {
      rc = fl_seterr(FL_ERR_NOMEM, "broad phase: out of memory");
      goto done;
    }
    for (fl_int i = 0; i < n; i++) keys[i].lo = lo[3 * i], keys[i].i = i;
    qsort(keys, (size_t)n, sizeof(key), cmp_key);
    for (fl_int a = 0; a < n; a++) {
      fl_int i = keys[a].i;
      for (fl_int b = a + 1; b < n && keys[b].lo <= hi[3 * i]; b++) {
        fl_int j = keys[b].i;
        if (skip && skip[i] && skip[j]) continue;
        if (overlap(lo, hi, i, j) && (rc = push(&L, i, j)) < 0) goto done;
      }
    }
    goto found;
  }

  // classify: unbounded boxes apart; cell size from the finite boxes' largest sides
  fl_int nfin = 0, nsmall = 0, nwide = 0, ninf = 0;
  for (fl_int i = 0; i < n; i++) {
    double s = 0;
    int fin = 1;
    for (int k = 0; k < 3; k++) {
      fin &= isfinite(lo[3 * i + k]) && isfinite(hi[3 * i + k]);
      s = fmax(s, hi[3 * i + k] - lo[3 * i + k]);
    }
    cls[i] = fin ? 0 : 2;
    if (fin) side[nfin++] = s;
    else inf[ninf++] = i;
  }
  grid g = {{0, 0, 0}, 1, {1, 1, 1}};
  if (nfin > 0) {
    double p95 = select_kth(side, (size_t)nfin, (size_t)(0.95 * (double)(nfin - 1)));
    g.c = CELL_FACTOR * p95;
    double glo[3] = {INFINITY, INFINITY, INFINITY}, ghi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (fl_int i = 0; i < n; i++)
      if (cls[i] == 0)
        for (int k = 0; k < 3; k++)
          glo[k] = fmin(glo[k], lo[3 * i + k]), ghi[k] = fmax(ghi[k], hi[3 * i + k]);
    // keep the cell count sane: at most about 2^60 cells and 4n per axis
    double span = fmax(ghi[0] - glo[0], fmax(ghi[1] - glo[1], ghi[2] - glo[2]));
    if (!(g.c > 0)) g.c = span > 0 ? span : 1;
    double maxdim = fmin(4.0 * (double)n, 2e6);
    if (span / g.c > maxdim) g.c = span / maxdim;
    for (int k = 0; k < 3; k++) {
      g.org[k] = glo[k];
      g.dim[k] = (int64_t)floor((ghi[k] - glo[k]) / g.c) + 1;
    }
    for (fl_int i = 0; i < n; i++) {
      if (cls[i] != 0) continue;
      double s = 0;
      for (int k = 0; k < 3; k++) s = fmax(s, hi[3 * i + k] - lo[3 * i + k]);
      if (s > g.c) cls[i] = 1, wide[nwide++] = i;
      else small[nsmall++] = i;
    }
  }

  // grid entries of the small boxes (at most 8 each; counted first)
  size_t nent = 0;
  for (fl_int a = 0; a < nsmall; a++) {
    fl_int i = small[a];
    size_t m = 1;
    for (int k = 0; k < 3; k++)
      m *= (size_t)(cell_of(&g, hi[3 * i + k], k) - cell_of(&g, lo[3 * i + k], k) + 1);
    nent += m;
  }
  ent = fl_malloc(sizeof(entry) * (nent > 0 ? nent : 1));
  nent = 0;
  if (!ent) {
    rc = fl_seterr(FL_ERR_NOMEM, "broad phase: out of memory for the grid");
    goto done;
  }
  for (fl_int a = 0; a < nsmall; a++) {
    fl_int i = small[a];
    int64_t c0[3], c1[3];
    for (int k = 0; k < 3; k++) c0[k] = cell_of(&g, lo[3 * i + k], k), c1[k] = cell_of(&g, hi[3 * i + k], k);
    for (int64_t x = c0[0]; x <= c1[0]; x++)
      for (int64_t y = c0[1]; y <= c1[1]; y++)
        for (int64_t z = c0[2]; z <= c1[2]; z++) {
          ent[nent].cell = cell_index(&g, x, y, z);
          ent[nent++].box = i;
        }
  }
  uint64_t maxkey = cell_index(&g, g.dim[0] - 1, g.dim[1] - 1, g.dim[2] - 1);
  if ((rc = radix_sort(ent, nent, maxkey)) < 0) goto done;

  // pairs within each cell, reported from the cell of their intersection's low corner
  for (size_t s0 = 0; s0 < nent;) {
    size_t s1 = s0 + 1;
    while (s1 < nent && ent[s1].cell == ent[s0].cell) s1++;
    for (size_t a = s0; a < s1; a++)
      for (size_t b = a + 1; b < s1; b++) {
        fl_int i = ent[a].box, j = ent[b].box;
        if (skip && skip[i] && skip[j]) continue;
        if (!overlap(lo, hi, i, j) || pair_cell(&g, lo, i, j) != ent[s0].cell) continue;
        if ((rc = push(&L, i, j)) < 0) goto done;
      }
    s0 = s1;
  }

  // wide boxes against the small ones: through the grid, or directly when that is cheaper
  for (fl_int w = 0; w < nwide; w++) {
    fl_int i = wide[w];
    int64_t c0[3], c1[3];
    double ncell = 1;
    for (int k = 0; k < 3; k++) {
      c0[k] = cell_of(&g, lo[3 * i + k], k), c1[k] = cell_of(&g, hi[3 * i + k], k);
      ncell *= (double)(c1[k] - c0[k] + 1);
    }
    if (ncell > (double)nent) {
      for (fl_int a = 0; a < nsmall; a++) {
        fl_int j = small[a];
        if (skip && skip[i] && skip[j]) continue;
        if (overlap(lo, hi, i, j) && (rc = push(&L, i, j)) < 0) goto done;
      }
      continue;
    }
    for (int64_t x = c0[0]; x <= c1[0]; x++)
      for (int64_t y = c0[1]; y <= c1[1]; y++) {
        // the cells (x, y, c0[2] .. c1[2]) are consecutive: one binary search
        uint64_t k0 = cell_index(&g, x, y, c0[2]), k1 = cell_index(&g, x, y, c1[2]);
        size_t l = 0, h = nent;
        while (l < h) {
          size_t m = l + (h - l) / 2;
          if (ent[m].cell < k0) l = m + 1;
          else h = m;
        }
        for (size_t e = l; e < nent && ent[e].cell <= k1; e++) {
          fl_int j = ent[e].box;
          if (skip && skip[i] && skip[j]) continue;
          if (!overlap(lo, hi, i, j) || pair_cell(&g, lo, i, j) != ent[e].cell) continue;
          if ((rc = push(&L, i, j)) < 0) goto done;
        }
      }
  }

  // wide boxes among themselves: sweep and prune along x
  keys = fl_malloc(sizeof(key) * (size_t)(nwide > 0 ? nwide : 1));
  if (!keys) {
    rc = fl_seterr(FL_ERR_NOMEM, "broad phase: out of memory");
    goto done;
  }
  for (fl_int w = 0; w < nwide; w++) keys[w].lo = lo[3 * wide[w]], keys[w].i = wide[w];
  qsort(keys, (size_t)nwide, sizeof(key), cmp_key);
  for (fl_int a = 0; a < nwide; a++) {
    fl_int i = keys[a].i;
    for (fl_int b = a + 1; b < nwide && keys[b].lo <= hi[3 * i]; b++) {
      fl_int j = keys[b].i;
      if (skip && skip[i] && skip[j]) continue;
      if (overlap(lo, hi, i, j) && (rc = push(&L, i, j)) < 0) goto done;
    }
  }

  // unbounded boxes against everything (a pair of them once, from the lower index)
  for (fl_int u = 0; u < ninf; u++) {
    fl_int i = inf[u];
    for (fl_int j = 0; j < n; j++) {
      if (j == i || (cls[j] == 2 && j < i)) continue;
      if (skip && skip[i] && skip[j]) continue;
      if (overlap(lo, hi, i, j) && (rc = push(&L, i, j)) < 0) goto done;
    }
  }

found:
  if (L.n > (size_t)INT32_MAX) {
    rc = fl_seterr(FL_ERR_NOMEM, "broad phase: %zu pairs exceed the index range", L.n);
    goto done;
  }
  // sort the pairs by (i, j): counting sort on i, then insertion sort of each row's j (rows
  // hold a body's few neighbours)
  if (L.n > 1) {
    fl_int *rowp = fl_calloc((size_t)n + 1, sizeof(fl_int));
    fl_int *out = fl_malloc(sizeof(fl_int) * 2 * L.n);
    if (!rowp || !out) {
      fl_free(rowp);
      fl_free(out);
      rc = fl_seterr(FL_ERR_NOMEM, "broad phase: out of memory for %zu pairs", L.n);
      goto done;
    }
    for (size_t k = 0; k < L.n; k++) rowp[L.p[2 * k] + 1]++;
    for (fl_int i = 0; i < n; i++) rowp[i + 1] += rowp[i];
    for (size_t k = 0; k < L.n; k++) {
      fl_int at = rowp[L.p[2 * k]]++;
      out[2 * at] = L.p[2 * k], out[2 * at + 1] = L.p[2 * k + 1];
    }
    for (fl_int i = n; i > 0; i--) rowp[i] = rowp[i - 1];
    rowp[0] = 0;
    for (fl_int i = 0; i < n; i++)
      for (fl_int a = rowp[i] + 1; a < rowp[i + 1]; a++)
        for (fl_int b = a; b > rowp[i] && out[2 * b + 1] < out[2 * b - 1]; b--) {
          fl_int t = out[2 * b + 1];
          out[2 * b + 1] = out[2 * b - 1], out[2 * b - 1] = t;
        }
    fl_free(L.p);
    fl_free(rowp);
    L.p = out;
  }
  *pairs = L.p;
  *npairs = (fl_int)L.n;
  L.p = NULL;

done:
  fl_free(side);
  fl_free(cls);
  fl_free(small);
  fl_free(wide);
  fl_free(inf);
  fl_free(ent);
  fl_free(keys);
  fl_free(L.p);
  return rc;
}

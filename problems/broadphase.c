/* broadphase.c: sweep and prune over axis-aligned boxes.
 *
 * The sweep axis is the one along which the finite box centres spread most (largest
 * variance), so few boxes overlap along it. Boxes sorted by their lower bound on that axis are
 * swept once; each box is tested against the following boxes until their lower bound passes
 * its upper bound: O(n log n) for the sort plus the pairs that overlap along the axis. Boxes
 * unbounded along the axis (planes) are kept apart and tested against every other box.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fl_geometry.h"

typedef struct key {
  double lo;
  fl_int i;
} key;


static int cmp_key(const void *pa, const void *pb) {
  const key *a = pa, *b = pb;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}


static int cmp_pair(const void *pa, const void *pb) {
  const fl_int *a = pa, *b = pb;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return (a[1] > b[1]) - (a[1] < b[1]);
}


typedef struct plist {
  fl_int *p;
  size_t n, cap;
} plist;


static int push(plist *L, fl_int i, fl_int j) {
  if (L->n == L->cap) {
    size_t cap = L->cap ? 2 * L->cap : 1024;
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

  // axis of largest spread of the finite centres
  double s1[3] = {0, 0, 0}, s2[3] = {0, 0, 0};
  fl_int nfin = 0;
  for (fl_int i = 0; i < n; i++) {
    int fin = 1;
    for (int k = 0; k < 3; k++) fin &= isfinite(lo[3 * i + k]) && isfinite(hi[3 * i + k]);
    if (!fin) continue;
    nfin++;
    for (int k = 0; k < 3; k++) {
      double c = 0.5 * (lo[3 * i + k] + hi[3 * i + k]);
      s1[k] += c, s2[k] += c * c;
    }
  }
  int ax = 0;
  double best = -1;
  for (int k = 0; k < 3 && nfin > 0; k++) {
    double m = s1[k] / (double)nfin, var = s2[k] / (double)nfin - m * m;
    if (var > best) best = var, ax = k;
  }

  key *keys = fl_malloc(sizeof(key) * (size_t)n);
  fl_int *wide = fl_malloc(sizeof(fl_int) * (size_t)n);
  plist L = {NULL, 0, 0};
  int rc = FL_OK;
  if (!keys || !wide) {
    rc = fl_seterr(FL_ERR_NOMEM, "broad phase: out of memory for %d boxes", (int)n);
    goto done;
  }
  fl_int nk = 0, nw = 0;
  for (fl_int i = 0; i < n; i++) {
    if (isfinite(lo[3 * i + ax]) && isfinite(hi[3 * i + ax])) {
      keys[nk].lo = lo[3 * i + ax];
      keys[nk++].i = i;
    } else {
      wide[nw++] = i;
    }
  }
  qsort(keys, (size_t)nk, sizeof(key), cmp_key);

  // sweep
  for (fl_int a = 0; a < nk; a++) {
    fl_int i = keys[a].i;
    double top = hi[3 * i + ax];
    for (fl_int b = a + 1; b < nk && keys[b].lo <= top; b++) {
      fl_int j = keys[b].i;
      if (skip && skip[i] && skip[j]) continue;
      if (overlap(lo, hi, i, j) && (rc = push(&L, i, j)) < 0) goto done;
    }
  }
  // unbounded boxes against everything
  for (fl_int w = 0; w < nw; w++) {
    fl_int i = wide[w];
    for (fl_int j = 0; j < n; j++) {
      if (j == i) continue;
      // a pair of unbounded boxes is found once, from its lower index
      int jwide = !(isfinite(lo[3 * j + ax]) && isfinite(hi[3 * j + ax]));
      if (jwide && j < i) continue;
      if (skip && skip[i] && skip[j]) continue;
      if (overlap(lo, hi, i, j) && (rc = push(&L, i, j)) < 0) goto done;
    }
  }
  if (L.n > (size_t)INT32_MAX) {
    rc = fl_seterr(FL_ERR_NOMEM, "broad phase: %zu pairs exceed the index range", L.n);
    goto done;
  }
  qsort(L.p, L.n, sizeof(fl_int) * 2, cmp_pair);
  *pairs = L.p;
  *npairs = (fl_int)L.n;
  L.p = NULL;

done:
  fl_free(keys);
  fl_free(wide);
  fl_free(L.p);
  return rc;
}

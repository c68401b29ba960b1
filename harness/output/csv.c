// SPDX-License-Identifier: Apache-2.0
/* csv.c: the one CSV writer: one quoting rule (fl_csv_str), one number format (fl_csv_num),
 * and the column tables (fl_csv_col) from which every CSV's header and rows are written. */

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../fl_harness.h"


void fl_csv_str(FILE *f, const char *s) {
  if (!s) s = "";
  if (strpbrk(s, ",\"\n\r") == NULL) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (const char *c = s; *c; c++) {
    if (*c == '"') fputc('"', f);
    fputc(*c, f);
  }
  fputc('"', f);
}


void fl_csv_num(FILE *f, double x) {
  if (isnan(x)) fputs("nan", f);
  else if (isinf(x)) fputs(x > 0 ? "inf" : "-inf", f);
  else fprintf(f, "%.10g", x);
}


void fl_csv_header(FILE *f, const fl_csv_col *c, int n) {
  for (int i = 0; i < n; i++) {
    if (i) fputc(',', f);
    fl_csv_str(f, c[i].name);
  }
  fputc('\n', f);
}


void fl_csv_row(FILE *f, const fl_csv_col *c, int n, const void *row) {
  const char *r = row;
  for (int i = 0; i < n; i++) {
    if (i) fputc(',', f);
    const char *at   = r + c[i].off;
    int         kind = (int)c[i].kind & ~FL_CSV_IF;
    if (((int)c[i].kind & FL_CSV_IF) && !*(const int *)(r + c[i].idx)) continue; // empty cell
    switch (kind) {
    case FL_CSV_REAL: fl_csv_num(f, *(const double *)at); break;
    case FL_CSV_REALS: fl_csv_num(f, (*(const double *const *)at)[c[i].idx]); break;
    case FL_CSV_INT: fprintf(f, "%d", *(const int *)at); break;
    case FL_CSV_LONG: fprintf(f, "%ld", *(const long *)at); break;
    case FL_CSV_STR: fl_csv_str(f, *(const char *const *)at); break;
    case FL_CSV_G4: fprintf(f, "%.4g", *(const double *)at); break;
    case FL_CSV_G6: fprintf(f, "%.6g", *(const double *)at); break;
    case FL_CSV_F0: fprintf(f, "%.0f", *(const double *)at); break;
    case FL_CSV_G: fprintf(f, "%.*g", c[i].idx, *(const double *)at); break;
    case FL_CSV_F: fprintf(f, "%.*f", c[i].idx, *(const double *)at); break;
    }
  }
  fputc('\n', f);
}


int fl_csv_cols_join(fl_csv_col *dst, int n, const fl_csv_col *src, int nsrc, size_t base) {
  for (int i = 0; i < nsrc; i++) {
    dst[n + i] = src[i];
    dst[n + i].off += base;
    if ((int)src[i].kind & FL_CSV_IF) dst[n + i].idx += (int)base; // the gate moves along
  }
  return n + nsrc;
}


#define I(m) offsetof(fl_iter_stat, m)
const fl_csv_col fl_csv_iter_cols[FL_CSV_NITER] = {
  {"iter", FL_CSV_INT, I(iter), 0},          {"time", FL_CSV_REAL, I(t), 0},
  {"error", FL_CSV_REAL, I(error), 0},       {"merit", FL_CSV_REAL, I(merit), 0},
  {"momentum", FL_CSV_REAL, I(momentum), 0}, {"objective", FL_CSV_REAL, I(objective), 0},
  {"step_length", FL_CSV_REAL, I(step), 0},  {"inner_iters", FL_CSV_INT, I(inner_iters), 0}};
#undef I


#define M(m) offsetof(fl_metrics, m)
const fl_csv_col fl_csv_metrics_cols[FL_CSV_NMETRICS] = {
  {"natmap", FL_CSV_REAL, M(natmap), 0},       {"natmap_raw", FL_CSV_REAL, M(natmap_raw), 0},
  {"momentum", FL_CSV_REAL, M(momentum), 0},   {"signorini", FL_CSV_REAL, M(signorini), 0},
  {"cone", FL_CSV_REAL, M(cone), 0},           {"dual", FL_CSV_REAL, M(dual), 0},
  {"dissipation", FL_CSV_REAL, M(dissipation), 0},
  {"penetration", FL_CSV_REAL, M(penetration), 0},
  {"bilateral", FL_CSV_REAL, M(bilateral), 0}};
#undef M


void fl_csv_metrics_nan(fl_metrics *m) {
  for (int i = 0; i < FL_CSV_NMETRICS; i++)
    *(double *)((char *)m + fl_csv_metrics_cols[i].off) = NAN;
}

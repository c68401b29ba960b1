// SPDX-License-Identifier: Apache-2.0
/* util.c: monotonic timer, terminal progress bar, version, memory limit, integer parsing. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "fl_core.h"

#ifndef FL_VERSION_STRING
#define FL_VERSION_STRING "0.3.0"
#endif

const char *fl_version(void) { return FL_VERSION_STRING; }
int fl_abi_version(void) { return FL_ABI_VERSION; }


double fl_mem_limit(void) {
  const char *e = getenv("FL_MEM_LIMIT_MB");
  if (e && *e) {
    char *end;
    double mb = strtod(e, &end);
    if (*end == 0 && mb > 0 && isfinite(mb)) return mb * 1048576.0;
  }
  return 8.0 * 1073741824.0;
}


int fl_mem_check(const char *where, const char *what, double bytes) {
  double lim = fl_mem_limit();
  if (bytes >= 0 && bytes <= lim) return FL_OK;
  return fl_seterr(FL_ERR_NOMEM, "%s: %s needs about %.3g GB, above the limit of %.3g GB "
                   "(raise it with --mem-limit GB or FL_MEM_LIMIT_MB)", where, what, bytes / 1e9,
                   lim / 1e9);
}


int fl_parse_ll(const char *s, char **end, long long lo, long long hi, long long *v) {
  char *e;
  errno = 0;
  long long x = strtoll(s, &e, 10);
  if (end) *end = e;
  if (e == s || errno == ERANGE || x < lo || x > hi) return 0;
  *v = x;
  return 1;
}


double fl_time_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


double fl_cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


static void progress_draw(fl_progress *p) {
  const int width = 30;
  double frac = p->total > 0 ? (double)p->done / (double)p->total : 0;
  if (frac > 1) frac = 1;
  int fill = (int)(frac * width);
  double el = fl_time_now() - p->t0;
  fprintf(stderr, "\r%s [", p->label ? p->label : "");
  for (int k = 0; k < width; k++) fputc(k < fill ? '#' : '.', stderr);
  fprintf(stderr, "] %ld/%ld %.1fs", p->done, p->total, el);
  if (frac > 0 && frac < 1) fprintf(stderr, " (%.0fs left)  ", el / frac - el);
  fflush(stderr);
}


void fl_progress_begin(fl_progress *p, const char *label, long total) {
  p->label = label;
  p->total = total;
  p->done = 0;
  p->t0 = fl_time_now();
  p->last_draw = 0;
  p->active = isatty(fileno(stderr));
  if (p->active) progress_draw(p);
}


void fl_progress_update(fl_progress *p, long done) {
  p->done = done;
  if (!p->active) return;
  double now = fl_time_now();
  // at most ten redraws a second so a fast loop is not slowed by the terminal
  if (now - p->last_draw < 0.1 && done < p->total) return;
  p->last_draw = now;
  progress_draw(p);
}


void fl_progress_end(fl_progress *p) {
  if (!p->active) return;
  p->done = p->total;
  progress_draw(p);
  fputc('\n', stderr);
  p->active = 0;
}

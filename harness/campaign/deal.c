// SPDX-License-Identifier: Apache-2.0
/* deal.c: the dynamic deal of a campaign over MPI ranks (fl_camp.h, docs/campaigns.md).
 *
 * Rank 0 deals and writes; ranks 1..N-1 solve. A worker asks for work with "H", then sends
 * each result as "R k broke sig\ninfo\nrecord" (or "S k 0 sig\nmessage\n" when it could not
 * load the problem); rank 0 answers each message with the next pair's index, or -1 when there
 * is none left, a signal arrived, or the campaign failed. One message in flight per worker, so
 * a slow pair holds one rank while the others take the rest.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/fl_campaign.h"
#include "../../core/fl_core.h"
#include "fl_camp.h"

static int send_int(int to, long v) {
  char b[32];
  int  n = snprintf(b, sizeof b, "%ld", v);
  return fl_campaign_send_to(to, b, (size_t)n);
}


static long deal_rank0(const fl_camp_deal *d) {
  int  size = fl_campaign_size(), active = size - 1, stop = 0, rc = FL_OK;
  long next = 0, done = fl_pairs_ndone(d->store), failed = fl_pairs_nfailed(d->store);
  fl_progress bar;
  fl_pairs_progress lines;
  fl_progress_begin(&bar, d->label, d->npairs);
  fl_pairs_progress_begin(&lines, d->label, d->npairs, done);
  // the test hook of fl_camp_run (loop.c): FL_CAMPAIGN_KILL_AFTER=N[:SIG] on rank 0
  long kill_after = -1, ran = 0;
  int  kill_sig   = SIGTERM;
  const char *ka  = getenv("FL_CAMPAIGN_KILL_AFTER");
  if (ka && *ka) {
    char *end;
    kill_after = strtol(ka, &end, 10);
    if (*end == ':') kill_sig = (int)strtol(end + 1, NULL, 10);
  }
  while (active > 0) {
    int    from = 0;
    char  *msg  = NULL;
    size_t n    = 0;
    if (fl_campaign_recv_any(&from, &msg, &n) < 0) return fl_errcode();
    char type = msg[0];
    long k = -1;
    int  broke = 0, sig = 0;
    char *info = strchr(msg, '\n'), *rec = NULL;
    if (type != 'H' && (sscanf(msg + 1, "%ld %d %d", &k, &broke, &sig) != 3 || !info ||
                        k < 0 || k >= d->npairs)) {
      fl_free(msg);
      fprintf(stderr, "%s: malformed message from rank %d\n", d->label, from);
      return fl_seterr(FL_ERR_FORMAT, "campaign: malformed message from rank %d", from);
    }
    if (info) {
      *info++ = '\0';
      rec     = strchr(info, '\n');
      if (rec) *rec++ = '\0';
    }
    if (type == 'R' && rc >= 0) {
      rc = d->got(d->ctx, k, info, 0) < 0 ? -1 : fl_pairs_put(d->store, k, rec ? rec : "", broke);
      if (rc < 0) stop = 1;
      else {
        done++;
        failed += broke != 0;
        if (++ran == kill_after) raise(kill_sig);
        fl_progress_update(&bar, done);
        fl_pairs_progress_update(&lines, done, failed);
      }
    } else if (type == 'S' && rc >= 0 && d->got(d->ctx, k, info, 1) < 0) {
      rc = -1;
      stop = 1;
    }
    fl_free(msg);
    if (sig || fl_pairs_signalled()) stop = 1;
    while (next < d->npairs &&
           (fl_pairs_done(d->store, d->order[next]) || d->skipped(d->ctx, d->order[next])))
      next++;
    if (!stop && next < d->npairs) {
      if (send_int(from, d->order[next++]) < 0) return fl_errcode();
    } else {
      if (send_int(from, -1) < 0) return fl_errcode();
      active--;
    }
  }
  fl_progress_end(&bar);
  fl_pairs_progress_end(&lines, done, failed);
  return rc < 0 ? (fl_errcode() < 0 ? fl_errcode() : FL_ERR_INVAL) : done;
}


static long deal_worker(const fl_camp_deal *d) {
  if (fl_campaign_send_to(0, "H", 1) < 0) return fl_errcode();
  for (;;) {
    int    from = 0;
    char  *msg  = NULL;
    size_t n    = 0;
    if (fl_campaign_recv_any(&from, &msg, &n) < 0) return fl_errcode();
    long k = strtol(msg, NULL, 10);
    fl_free(msg);
    if (k < 0) return 0;
    char  info[1024] = "";
    int   broke = 0, skip = 0;
    char *rec = d->work(d->ctx, k, &broke, info, sizeof info, &skip);
    if (!rec && !skip) {
      skip = 1;
      snprintf(info, sizeof info, "out of memory on rank %d", fl_campaign_rank());
    }
    for (char *c = info; *c; c++)
      if (*c == '\n') *c = ' ';
    char  *out = NULL;
    size_t len = 0;
    FILE  *f   = open_memstream(&out, &len);
    if (!f) {
      free(rec);
      return fl_seterr(FL_ERR_NOMEM, "campaign: out of memory");
    }
    fprintf(f, "%c %ld %d %d\n%s\n%s", skip ? 'S' : 'R', k, broke, fl_pairs_signalled(), info,
            rec && !skip ? rec : "");
    fclose(f);
    free(rec);
    int rc = fl_campaign_send_to(0, out, len);
    free(out);
    if (rc < 0) return rc;
  }
}


long fl_camp_deal_run(const fl_camp_deal *d) {
  long r = fl_campaign_rank() == 0 ? deal_rank0(d) : deal_worker(d);
  // every rank learns rank 0's count (or its failure)
  long all = fl_campaign_sum_long(fl_campaign_rank() == 0 ? r : 0);
  long bad = fl_campaign_sum_long(r < 0);
  return bad ? (r < 0 ? r : FL_ERR_LIBRARY) : all;
}


static const double *order_size; /* for by_size (qsort has no context) */
static int order_ns;
static int by_size(const void *x, const void *y) {
  long   a = *(const long *)x, b = *(const long *)y;
  double sa = order_size[a / order_ns], sb = order_size[b / order_ns];
  return sa > sb ? -1 : sa < sb ? 1 : (a > b) - (a < b);
}

void fl_camp_order_by_size(const double *size, int nsolvers, long npairs, long *order) {
  for (long k = 0; k < npairs; k++) order[k] = k;
  order_size = size;
  order_ns   = nsolvers;
  qsort(order, (size_t)npairs, sizeof *order, by_size);
}

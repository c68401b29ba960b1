// SPDX-License-Identifier: Apache-2.0
/* loop.c: the pair loop of a campaign and its state file (fl_camp.h, docs/campaigns.md). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../core/fl_core.h"
#include "fl_camp.h"

long fl_camp_run(const fl_camp_loop *L) {
  long done = fl_pairs_ndone(L->store), failed = fl_pairs_nfailed(L->store), ran = 0;
  fl_progress bar;
  fl_pairs_progress lines;
  fl_progress_begin(&bar, L->label, L->npairs);
  fl_pairs_progress_begin(&lines, L->label, L->npairs, done);
  int rc = FL_OK;
  // a test hook (tests/cli/campaign_resume.sh): FL_CAMPAIGN_KILL_AFTER=N[:SIG] sends this
  // process SIG (default SIGTERM) once N pairs were committed by this run, as a scheduler would
  long kill_after = -1;
  int  kill_sig   = SIGTERM;
  const char *ka  = getenv("FL_CAMPAIGN_KILL_AFTER");
  if (ka && *ka) {
    char *end;
    kill_after = strtol(ka, &end, 10);
    if (*end == ':') kill_sig = (int)strtol(end + 1, NULL, 10);
  }
  for (long k = 0; k < L->npairs && !fl_pairs_signalled(); k++) {
    if (fl_pairs_done(L->store, k)) continue;
    int   broke = 0;
    char *rec   = L->run(L->ctx, k, &broke);
    rc = rec ? fl_pairs_put(L->store, k, rec, broke)
             : fl_seterr(FL_ERR_NOMEM, "campaign: out of memory for pair %ld's record", k);
    free(rec);
    if (rc < 0) break;
    ran++;
    done++;
    if (ran == kill_after) raise(kill_sig);
    failed += broke != 0;
    fl_progress_update(&bar, done);
    fl_pairs_progress_update(&lines, done, failed);
  }
  fl_progress_end(&bar);
  fl_pairs_progress_end(&lines, done, failed);
  return rc < 0 ? rc : ran;
}


int fl_camp_state(const char *dir, cJSON *man, const fl_pairs *ps, long resumed, int sig,
                  int shard_i, int shard_n, char *const *labels, int nlabels) {
  cJSON *c = cJSON_CreateObject();
  if (!c) return fl_seterr(FL_ERR_NOMEM, "campaign: out of memory");
  long done = fl_pairs_ndone(ps);
  cJSON_AddStringToObject(c, "state", sig ? "interrupted" : "complete");
  if (sig) cJSON_AddNumberToObject(c, "signal", sig);
  cJSON_AddNumberToObject(c, "pairs", (double)fl_pairs_npairs(ps));
  cJSON_AddNumberToObject(c, "done", (double)done);
  cJSON_AddNumberToObject(c, "failed", (double)fl_pairs_nfailed(ps));
  cJSON_AddNumberToObject(c, "resumed", (double)resumed);
  if (shard_n > 1) {
    char sh[48];
    snprintf(sh, sizeof sh, "%d/%d", shard_i, shard_n);
    cJSON_AddStringToObject(c, "shard", sh);
  } else {
    cJSON_AddNullToObject(c, "shard");
  }
  cJSON *order = cJSON_AddArrayToObject(c, "order");
  for (int k = 0; k < nlabels; k++)
    if (labels[k]) cJSON_AddItemToArray(order, cJSON_CreateString(labels[k]));
  if (sig)
    cJSON_AddStringToObject(c, "resume", "run the same command with --resume: the pairs done "
                                         "are taken over, the others solved");
  char *text = cJSON_Print(c);
  char  path[4200];
  snprintf(path, sizeof path, "%s/campaign.json", dir);
  FILE *f  = text ? fopen(path, "w") : NULL;
  int   ok = f && fprintf(f, "%s\n", text) > 0;
  if (f && fclose(f) != 0) ok = 0;
  cJSON_free(text);
  if (man) cJSON_AddItemToObject(man, "campaign", c);
  else cJSON_Delete(c);
  return ok ? FL_OK : fl_seterr(FL_ERR_IO, "%s: cannot write", path);
}

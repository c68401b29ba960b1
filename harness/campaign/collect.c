// SPDX-License-Identifier: Apache-2.0
/* collect.c: `frictionlab collect DIR... --out DIR`, shards of a campaign merged into one
 * results folder (docs/campaigns.md).
 *
 * Each DIR is a `solve` folder with per-pair records (pairs/) and campaign.json. The folders
 * must come from one build (frictionlab version, git revision, build flags) with the same
 * solvers, options and normalization; every record of a pair must carry the same settings
 * hash; a set of shards I/N must be complete. The merged folder is what one serial run
 * writes: steps.csv and iters.csv in the serial order (campaign.json's "order", solvers in
 * the manifest's order), the records, and a manifest that lists the shards.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../cli/fl_args.h"
#include "../fl_harness.h"
#include "fl_camp.h"

typedef struct collect_cli {
  fl_arg_list pos;
  const char *out;
  int force;
} collect_cli;

#define A(m) offsetof(collect_cli, m)
static const fl_arg_desc collect_flags[] = {
  {"--out", FL_ARG_STR, A(out), 0, 0, "DIR", NULL, "the merged results folder (required)"},
  {"--force", FL_ARG_FLAG, A(force), 0, 0, NULL, NULL, "replace an existing --out folder"},
  {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef A

static const fl_cmd_spec collect_spec = {
  "collect", "SOLVE_DIR...", -1, offsetof(collect_cli, pos),
  "Merges the results folders of shards (`solve --shard I/N`) or of separate solves of one\n"
  "campaign into one folder, as one serial `solve` would have written it: steps.csv and\n"
  "iters.csv in the serial order, pairs/, and a manifest listing the shards. Refuses folders\n"
  "of other builds, solvers, options or normalization, a pair solved under two settings, an\n"
  "interrupted folder (resume it first) and an incomplete set of shards.\n",
  NULL, collect_flags};

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char  *buf = NULL;
  size_t len = 0, cap = 0, r;
  do {
    if (len + 65537 > cap) {
      cap = cap ? 2 * cap : 1 << 17;
      char *nb = fl_realloc(buf, cap);
      if (!nb) {
        fl_free(buf);
        fclose(f);
        return NULL;
      }
      buf = nb;
    }
    r = fread(buf + len, 1, cap - len - 1, f);
    len += r;
  } while (r > 0);
  fclose(f);
  buf[len] = '\0';
  return buf;
}

static cJSON *read_json(const char *dir, const char *name) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  char  *t = read_text(path);
  cJSON *j = t ? cJSON_Parse(t) : NULL;
  fl_free(t);
  return j;
}

// the first line of DIR/NAME (a CSV header), into buf
static int header_of(const char *dir, const char *name, char *buf, size_t n) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  int   ok = f && fgets(buf, (int)n, f);
  if (f) fclose(f);
  return ok ? 0 : -1;
}

// the keys two folders of one campaign must share
static const char *const same_keys[][2] = {{"frictionlab", "version"},
                                           {"frictionlab", "git_revision"},
                                           {"build", NULL},
                                           {"compiler", NULL},
                                           {"norm", NULL},
                                           {"solvers", NULL}};

static const cJSON *key_of(const cJSON *m, const char *const k[2]) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, k[0]);
  return k[1] ? cJSON_GetObjectItemCaseSensitive(v, k[1]) : v;
}

/* a label -> index table (open addressing over FNV hashes) */
typedef struct {
  const char **key;
  int *val;
  size_t cap;
} lmap;

static int lmap_init(lmap *m, size_t n) {
  m->cap = 16;
  while (m->cap < 2 * n + 2) m->cap *= 2;
  m->key = fl_calloc(m->cap, sizeof *m->key);
  m->val = fl_calloc(m->cap, sizeof *m->val);
  return m->key && m->val ? 0 : -1;
}

static size_t lmap_slot(const lmap *m, const char *k) {
  size_t i = (size_t)fl_pairs_hash(FL_PAIRS_HASH0, k, strlen(k)) & (m->cap - 1);
  while (m->key[i] && strcmp(m->key[i], k)) i = (i + 1) & (m->cap - 1);
  return i;
}

static void lmap_free(lmap *m) {
  fl_free(m->key);
  fl_free(m->val);
}

typedef struct slot {
  int dir;        /* folder index, -1 when no record */
  uint64_t hash;
  int broke;
  char file[40];  /* record file name in DIR/pairs */
} slot;

int fl_cmd_collect(int argc, char **argv) {
  collect_cli c;
  memset(&c, 0, sizeof c);
  int rc = fl_args_parse(&collect_spec, argc, argv, &c);
  if (rc) {
    fl_args_free(&collect_spec, &c);
    return rc == 1 ? 0 : rc < 0 ? 1 : 2;
  }
  int         status = 1, nd = c.pos.n, np = 0, ns = 0;
  cJSON     **man = NULL, **camp = NULL, *order = NULL;
  slot       *tab = NULL;
  lmap        lm  = {0};
  fl_results *res = NULL;
  char        shdr[8192], ihdr[8192], h2[8192];
  const char *err = "frictionlab collect";
  if (!c.out || nd < 1) {
    fprintf(stderr, "%s: expected one or more solve folders and --out DIR\n", err);
    fl_args_free(&collect_spec, &c);
    return 2;
  }
  const char *const *dirs = c.pos.v;
  man  = fl_calloc((size_t)nd, sizeof *man);
  camp = fl_calloc((size_t)nd, sizeof *camp);
  if (!man || !camp) goto nomem;

  //---- every folder: a finished campaign of the same build and solvers ----
  int shard_n = 0;
  char *seen_shard = NULL;
  for (int d = 0; d < nd; d++) {
    man[d]  = read_json(dirs[d], "manifest.json");
    camp[d] = read_json(dirs[d], "campaign.json");
    if (!man[d] || !camp[d]) {
      fprintf(stderr, "%s: %s: not a campaign's results folder (expected manifest.json and "
                      "campaign.json that parse; folders of `solve` since per-pair records)\n",
              err, dirs[d]);
      goto fail;
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(camp[d], "state");
    if (!cJSON_IsString(st) || strcmp(st->valuestring, "complete")) {
      fprintf(stderr, "%s: %s: campaign.json says \"%s\": finish it first (the same command "
                      "with --resume)\n", err, dirs[d], cJSON_IsString(st) ? st->valuestring : "?");
      goto fail;
    }
    if (header_of(dirs[d], "steps.csv", d ? h2 : shdr, sizeof shdr) < 0 ||
        (d && strcmp(h2, shdr)) || header_of(dirs[d], "iters.csv", d ? h2 : ihdr, sizeof ihdr) < 0 ||
        (d && strcmp(h2, ihdr))) {
      fprintf(stderr, "%s: %s: steps.csv or iters.csv is missing or has other columns than %s's\n",
              err, dirs[d], dirs[0]);
      goto fail;
    }
    for (size_t k = 0; d && k < sizeof same_keys / sizeof same_keys[0]; k++) {
      const cJSON *a = key_of(man[0], same_keys[k]), *b = key_of(man[d], same_keys[k]);
      if (!cJSON_Compare(a, b, 1)) {
        char *ta = a ? cJSON_PrintUnformatted(a) : NULL, *tb = b ? cJSON_PrintUnformatted(b) : NULL;
        fprintf(stderr, "%s: %s and %s differ in the manifest's %s%s%s (%.300s vs %.300s): not "
                        "one campaign (other build, solvers or options)\n", err, dirs[0], dirs[d],
                same_keys[k][0], same_keys[k][1] ? "." : "", same_keys[k][1] ? same_keys[k][1] : "",
                ta ? ta : "absent", tb ? tb : "absent");
        cJSON_free(ta);
        cJSON_free(tb);
        goto fail;
      }
    }
    const cJSON *ord = cJSON_GetObjectItemCaseSensitive(camp[d], "order");
    if (!cJSON_IsArray(ord)) {
      fprintf(stderr, "%s: %s/campaign.json: no \"order\" array\n", err, dirs[d]);
      goto fail;
    }
    if (!order) order = (cJSON *)ord;
    else if (!cJSON_Compare(order, ord, 1)) {
      fprintf(stderr, "%s: %s and %s solved different lists of problems (campaign.json "
                      "\"order\"): not shards of one campaign\n", err, dirs[0], dirs[d]);
      goto fail;
    }
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(camp[d], "shard");
    int si = 0, sn = 0;
    if (cJSON_IsString(sh) && sscanf(sh->valuestring, "%d/%d", &si, &sn) == 2 && sn > 0 &&
        si >= 0 && si < sn) {
      if (!shard_n) {
        shard_n    = sn;
        seen_shard = calloc((size_t)sn, 1);
        if (!seen_shard) goto nomem;
      } else if (sn != shard_n) {
        fprintf(stderr, "%s: %s is shard %s, others are of %d shards\n", err, dirs[d],
                sh->valuestring, shard_n);
        free(seen_shard);
        goto fail;
      }
      seen_shard[si] = 1;
    }
  }
  for (int k = 0; k < shard_n; k++) {
    if (!seen_shard[k]) {
      fprintf(stderr, "%s: shard %d/%d is missing (give every shard's folder)\n", err, k, shard_n);
      free(seen_shard);
      goto fail;
    }
  }
  free(seen_shard);

  //---- the pair table: problems in the campaign's order, solvers in the manifest's ----
  np = cJSON_GetArraySize(order);
  const cJSON *solvers = cJSON_GetObjectItemCaseSensitive(man[0], "solvers");
  ns = cJSON_GetArraySize(solvers);
  const char **snames = fl_calloc((size_t)ns + 1, sizeof *snames);
  char *present = fl_calloc((size_t)np + 1, 1); // problems some folder solved (not skipped)
  tab = fl_calloc((size_t)np * (size_t)ns + 1, sizeof *tab);
  if (!snames || !present || !tab || lmap_init(&lm, (size_t)np) < 0) {
    fl_free(snames);
    fl_free(present);
    goto nomem;
  }
  {
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, solvers) snames[k++] = e->string;
    k = 0;
    cJSON_ArrayForEach(e, order) {
      if (cJSON_IsString(e)) {
        size_t i = lmap_slot(&lm, e->valuestring);
        lm.key[i] = e->valuestring;
        lm.val[i] = k;
      }
      k++;
    }
  }
  for (long k = 0; k < (long)np * ns; k++) tab[k].dir = -1;
  long nrec = 0, ndup = 0;
  for (int d = 0; d < nd; d++) {
    const cJSON *pr, *ps = cJSON_GetObjectItemCaseSensitive(man[d], "problems");
    cJSON_ArrayForEach(pr, ps) {
      const cJSON *nm = cJSON_GetObjectItemCaseSensitive(pr, "name");
      size_t i = cJSON_IsString(nm) ? lmap_slot(&lm, nm->valuestring) : 0;
      if (cJSON_IsString(nm) && lm.key[i]) present[lm.val[i]] = 1;
    }
    char pdir[4200];
    snprintf(pdir, sizeof pdir, "%s/pairs", dirs[d]);
    DIR *dh = opendir(pdir);
    if (!dh) {
      fprintf(stderr, "%s: %s: cannot read: %s\n", err, pdir, strerror(errno));
      fl_free(snames);
      fl_free(present);
      goto fail;
    }
    struct dirent *e;
    while ((e = readdir(dh)) != NULL) {
      size_t len = strlen(e->d_name);
      if (len < 6 || len >= sizeof tab[0].file || strcmp(e->d_name + len - 5, ".json")) continue;
      char path[4300];
      if (snprintf(path, sizeof path, "%s/%s", pdir, e->d_name) >= (int)sizeof path) continue;
      char  *t = read_text(path);
      cJSON *r = t ? cJSON_Parse(t) : NULL;
      fl_free(t);
      const cJSON *rp = cJSON_GetObjectItemCaseSensitive(r, "problem"),
                  *rs = cJSON_GetObjectItemCaseSensitive(r, "solver"),
                  *rh = cJSON_GetObjectItemCaseSensitive(r, "hash"),
                  *rb = cJSON_GetObjectItemCaseSensitive(r, "broke");
      int p = -1, s = -1;
      if (cJSON_IsString(rp) && cJSON_IsString(rs) && cJSON_IsString(rh)) {
        size_t i = lmap_slot(&lm, rp->valuestring);
        p = lm.key[i] ? lm.val[i] : -1;
        for (int j = 0; j < ns; j++)
          if (!strcmp(snames[j], rs->valuestring)) s = j;
      }
      if (p < 0 || s < 0) {
        fprintf(stderr, "%s: %s: not a record of this campaign's problems and solvers\n", err,
                path);
        cJSON_Delete(r);
        closedir(dh);
        fl_free(snames);
        fl_free(present);
        goto fail;
      }
      slot    *t2 = &tab[(long)p * ns + s];
      uint64_t h  = strtoull(rh->valuestring, NULL, 16);
      if (t2->dir >= 0 && t2->hash != h) {
        fprintf(stderr, "%s: %s / %s was solved under other settings in %s and %s (settings "
                        "hash %016llx vs %016llx): refused\n", err, rp->valuestring,
                rs->valuestring, dirs[t2->dir], dirs[d], (unsigned long long)t2->hash,
                (unsigned long long)h);
        cJSON_Delete(r);
        closedir(dh);
        fl_free(snames);
        fl_free(present);
        goto fail;
      }
      if (t2->dir >= 0) ndup++;
      else {
        t2->dir   = d;
        t2->hash  = h;
        t2->broke = cJSON_IsNumber(rb) && rb->valueint;
        memcpy(t2->file, e->d_name, len + 1); /* len < sizeof file, checked above */
        nrec++;
      }
      cJSON_Delete(r);
    }
    closedir(dh);
  }
  for (int p = 0; p < np; p++) {
    for (int s = 0; present[p] && s < ns; s++) {
      if (tab[(long)p * ns + s].dir < 0) {
        fprintf(stderr, "%s: no folder holds %s / %s\n", err,
                cJSON_GetArrayItem(order, p)->valuestring, snames[s]);
        fl_free(snames);
        fl_free(present);
        goto fail;
      }
    }
  }

  //---- the merged folder ----
  if (fl_results_begin(c.out, "collect", c.force, &res) < 0) {
    fprintf(stderr, "%s: %s\n", err, fl_errmsg());
    fl_free(snames);
    fl_free(present);
    goto fail;
  }
  {
    cJSON *m = fl_results_manifest(res);
    // what the shards share, from the first; the lists merged in the campaign's order
    const char *copy[] = {"solvers", "norm", "settings", "ranks", NULL};
    for (int k = 0; copy[k]; k++) {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(man[0], copy[k]);
      if (!v) continue;
      cJSON_DeleteItemFromObjectCaseSensitive(m, copy[k]);
      cJSON_AddItemToObject(m, copy[k], cJSON_Duplicate(v, 1));
    }
    cJSON *probs = cJSON_AddArrayToObject(m, "problems"), *skipped = cJSON_AddArrayToObject(m, "skipped");
    for (int p = 0; p < np; p++) {
      const char *lab = cJSON_GetArrayItem(order, p)->valuestring;
      for (int d = 0; d < nd; d++) {
        const cJSON *pr;
        cJSON_ArrayForEach(pr, cJSON_GetObjectItemCaseSensitive(man[d], "problems")) {
          const cJSON *nm = cJSON_GetObjectItemCaseSensitive(pr, "name");
          if (cJSON_IsString(nm) && !strcmp(nm->valuestring, lab)) {
            cJSON_AddItemToArray(probs, cJSON_Duplicate(pr, 1));
            d = nd; // one entry per problem
            break;
          }
        }
      }
    }
    for (int d = 0; d < nd; d++) {
      const cJSON *sk;
      cJSON_ArrayForEach(sk, cJSON_GetObjectItemCaseSensitive(man[d], "skipped"))
        cJSON_AddItemToArray(skipped, cJSON_Duplicate(sk, 1));
    }
    cJSON *notes = cJSON_AddArrayToObject(m, "notes");
    cJSON *shards = cJSON_AddArrayToObject(m, "shards");
    for (int d = 0; d < nd; d++) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "folder", dirs[d]);
      const char *keys[] = {"shard", "pairs", "done", "failed", "resumed", NULL};
      for (int k = 0; keys[k]; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(camp[d], keys[k]);
        if (v) cJSON_AddItemToObject(o, keys[k], cJSON_Duplicate(v, 1));
      }
      const cJSON *dt = cJSON_GetObjectItemCaseSensitive(man[d], "date"),
                  *mc = cJSON_GetObjectItemCaseSensitive(man[d], "machine");
      if (dt) cJSON_AddItemToObject(o, "date", cJSON_Duplicate(dt, 1));
      if (mc) cJSON_AddItemToObject(o, "hostname",
                                    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(mc, "hostname"), 1));
      cJSON_AddItemToArray(shards, o);
    }
    FILE *fs = fl_results_file(res, "steps.csv"), *fi = fl_results_file(res, "iters.csv");
    fl_pairs *store = NULL;
    if (!fs || !fi || fl_pairs_open(fl_results_staging(res), (long)np * ns, &store) < 0) {
      fprintf(stderr, "%s: %s\n", err, fl_errmsg());
      fl_free(snames);
      fl_free(present);
      goto fail;
    }
    fputs(shdr, fs);
    fputs(ihdr, fi);
    long nfailed = 0;
    for (long k = 0; k < (long)np * ns; k++) {
      slot *t = &tab[k];
      if (t->dir < 0) continue;
      char from[4400], to[4400];
      snprintf(from, sizeof from, "%s/pairs/%s", dirs[t->dir], t->file);
      snprintf(to, sizeof to, "%s/pairs/%s", fl_results_staging(res), t->file);
      char  *txt = read_text(from);
      cJSON *r   = txt ? cJSON_Parse(txt) : NULL;
      const cJSON *rec = cJSON_GetObjectItemCaseSensitive(r, "record");
      const cJSON *st = cJSON_GetObjectItemCaseSensitive(rec, "steps"),
                  *it = cJSON_GetObjectItemCaseSensitive(rec, "iters"),
                  *nt = cJSON_GetObjectItemCaseSensitive(rec, "notes");
      FILE *fo = NULL;
      int   ok = cJSON_IsString(st) && cJSON_IsString(it) &&
               (link(from, to) == 0 || ((fo = fopen(to, "w")) && fputs(txt, fo) >= 0));
      if (fo && fclose(fo) != 0) ok = 0;
      if (ok) {
        fputs(st->valuestring, fs);
        fputs(it->valuestring, fi);
        const cJSON *n;
        cJSON_ArrayForEach(n, nt) cJSON_AddItemToArray(notes, cJSON_Duplicate(n, 1));
        nfailed += t->broke;
      }
      cJSON_Delete(r);
      fl_free(txt);
      if (!ok) {
        fprintf(stderr, "%s: %s: unreadable record, or %s not written\n", err, from, to);
        fl_pairs_close(store);
        fl_free(snames);
        fl_free(present);
        goto fail;
      }
    }
    fl_pairs_close(store);
    // campaign.json of the merged folder: complete, every pair collected
    cJSON *cj = cJSON_CreateObject();
    cJSON_AddStringToObject(cj, "state", "complete");
    cJSON_AddNumberToObject(cj, "pairs", (double)nrec);
    cJSON_AddNumberToObject(cj, "done", (double)nrec);
    cJSON_AddNumberToObject(cj, "failed", (double)nfailed);
    cJSON_AddNumberToObject(cj, "resumed", 0);
    cJSON_AddNullToObject(cj, "shard");
    cJSON_AddNumberToObject(cj, "collected_from", nd);
    cJSON_AddItemToObject(cj, "order", cJSON_Duplicate(order, 1));
    char *text = cJSON_Print(cj);
    FILE *fc   = fl_results_file(res, "campaign.json");
    if (text && fc) fprintf(fc, "%s\n", text);
    cJSON_free(text);
    cJSON_AddItemToObject(m, "campaign", cj);
    if (fl_results_commit(res) < 0) {
      res = NULL;
      fprintf(stderr, "%s: %s\n", err, fl_errmsg());
      fl_free(snames);
      fl_free(present);
      goto fail;
    }
    res = NULL;
    printf("collected %ld pair(s) of %d problem(s) x %d solver(s) from %d folder(s)%s into %s "
           "(manifest.json, steps.csv, iters.csv, pairs/)\n", nrec, np, ns, nd,
           ndup ? " (pairs found twice with the same settings taken once)" : "", c.out);
    status = 0;
  }
  fl_free(snames);
  fl_free(present);
  goto fail;

nomem:
  fprintf(stderr, "%s: out of memory\n", err);
fail:
  fl_results_abort(res);
  for (int d = 0; man && d < nd; d++) cJSON_Delete(man[d]);
  for (int d = 0; camp && d < nd; d++) cJSON_Delete(camp[d]);
  fl_free(man);
  fl_free(camp);
  fl_free(tab);
  lmap_free(&lm);
  fl_args_free(&collect_spec, &c);
  return status;
}

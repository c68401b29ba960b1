// SPDX-License-Identifier: Apache-2.0
/* pairs.c: per-pair records, identity, shards, signals and progress lines of campaigns
 * (fl_camp.h, docs/campaigns.md). */
#define _GNU_SOURCE
#include "fl_camp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../../core/fl_core.h"

//---- identity ----

uint64_t fl_pairs_hash(uint64_t h, const void *data, size_t n) {
  const unsigned char *c = data;
  for (size_t k = 0; k < n; k++) {
    h ^= c[k];
    h *= 0x100000001b3ULL;
  }
  return h;
}


int fl_pairs_source_hash(const char *src, uint64_t *h) {
  *h = FL_PAIRS_HASH0;
  struct stat st;
  if (stat(src, &st) != 0 || !S_ISREG(st.st_mode)) {
    *h = fl_pairs_hash(*h, "example:", 8);
    *h = fl_pairs_hash(*h, src, strlen(src));
    return FL_OK;
  }
  FILE *f = fopen(src, "rb");
  if (!f) return fl_seterr(FL_ERR_IO, "%s: cannot read: %s", src, strerror(errno));
  unsigned char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) *h = fl_pairs_hash(*h, buf, n);
  int bad = ferror(f);
  fclose(f);
  return bad ? fl_seterr(FL_ERR_IO, "%s: read error", src) : FL_OK;
}


int fl_pairs_solver_hash(const fl_solver *s, uint64_t *h) {
  char  *text = NULL;
  size_t len  = 0;
  FILE  *f    = open_memstream(&text, &len);
  if (!f) return fl_seterr(FL_ERR_NOMEM, "campaign: out of memory");
  fl_solver_options_json(s, f);
  fclose(f);
  const char *name = fl_solver_name(s);
  *h = fl_pairs_hash(FL_PAIRS_HASH0, name, strlen(name) + 1);
  *h = fl_pairs_hash(*h, text, len);
  free(text);
  return FL_OK;
}


void fl_pairs_hex(uint64_t h, char *buf) { snprintf(buf, 17, "%016llx", (unsigned long long)h); }


void fl_pairs_label_base(const char *src, char *buf, size_t n) {
  struct stat st;
  int file = stat(src, &st) == 0 || strchr(src, '/') || strstr(src, ".hdf5") || strstr(src, ".h5");
  if (!file) {
    snprintf(buf, n, "%s", src);
    return;
  }
  // the stem, as the FCLIB reader names a problem
  const char *base = strrchr(src, '/');
  base             = base ? base + 1 : src;
  const char *dot  = strrchr(base, '.');
  size_t      len  = (dot && dot != base) ? (size_t)(dot - base) : strlen(base);
  if (len >= n) len = n - 1;
  memcpy(buf, base, len);
  buf[len] = '\0';
}


//---- shards ----

int fl_pairs_parse_shard(const char *text, int *i, int *n) {
  char *end = NULL;
  errno     = 0;
  long a    = strtol(text, &end, 10);
  if (errno || end == text || *end != '/')
    return fl_seterr(FL_ERR_INVAL, "--shard %s: expected I/N (shard I of N, 0 <= I < N)", text);
  const char *t = end + 1;
  long b = strtol(t, &end, 10);
  if (errno || end == t || *end || b < 1 || a < 0 || a >= b || b > 1000000)
    return fl_seterr(FL_ERR_INVAL, "--shard %s: expected I/N with 0 <= I < N", text);
  *i = (int)a;
  *n = (int)b;
  return FL_OK;
}


double fl_pairs_source_size(const char *src) {
  struct stat st;
  return stat(src, &st) == 0 && S_ISREG(st.st_mode) ? (double)st.st_size : 0;
}


void fl_pairs_deal(int np, const double *size, int nshards, int *owner) {
  double *load = calloc((size_t)nshards, sizeof *load);
  char   *used = calloc((size_t)np + 1, 1);
  for (int step = 0; step < np; step++) {
    int best = -1; // the largest item left, the earliest among equals
    for (int k = 0; k < np; k++)
      if (!used[k] && (best < 0 || size[k] > size[best])) best = k;
    int s = 0;
    for (int j = 1; load && j < nshards; j++)
      if (load[j] < load[s]) s = j;
    // without memory for the loads: round robin, still the same in every shard
    if (!load || !used) {
      owner[step] = step % nshards;
      continue;
    }
    used[best]  = 1;
    owner[best] = s;
    // every item costs at least a little: a list of examples (size 0) is still spread
    load[s] += size[best] + 1;
  }
  free(load);
  free(used);
}


int fl_pairs_labels(int nex, const char *const *ex, int nin, const char *const *in, int nshards,
                    char **lab, double *size, int *owner) {
  for (int k = 0; k < nex + nin; k++) {
    const char *src = k < nex ? ex[k] : in[k - nex];
    char base[128]; // as fl_problem's name
    fl_pairs_label_base(src, base, sizeof base);
    int dup = 1;
    for (int j = 0; j < k; j++) {
      if (strncmp(lab[j], base, strlen(base)) == 0 &&
          (lab[j][strlen(base)] == '\0' || lab[j][strlen(base)] == '~')) {
        dup++;
      }
    }
    size_t len = strlen(base) + 16;
    if (!(lab[k] = fl_malloc(len))) return fl_seterr(FL_ERR_NOMEM, "out of memory");
    if (dup > 1) snprintf(lab[k], len, "%s~%d", base, dup);
    else snprintf(lab[k], len, "%s", base);
    size[k]  = fl_pairs_source_size(src);
    owner[k] = 0;
  }
  if (nshards > 1) fl_pairs_deal(nex + nin, size, nshards, owner);
  return FL_OK;
}


//---- the store ----

typedef struct pair_ent {
  char *problem, *solver;
  uint64_t hash;
  signed char done, broke;
} pair_ent;

struct fl_pairs {
  char *dir; /* <folder>/pairs */
  long n;
  pair_ent *p;
};


int fl_pairs_open(const char *dir, long npairs, fl_pairs **out) {
  *out = NULL;
  fl_pairs *ps = fl_calloc(1, sizeof *ps);
  size_t    len = strlen(dir) + 8;
  if (ps) ps->dir = fl_malloc(len);
  if (ps) ps->p = fl_calloc((size_t)npairs + 1, sizeof *ps->p);
  if (!ps || !ps->dir || !ps->p) {
    fl_pairs_close(ps);
    return fl_seterr(FL_ERR_NOMEM, "campaign: out of memory for %ld pairs", npairs);
  }
  snprintf(ps->dir, len, "%s/pairs", dir);
  ps->n = npairs;
  if (mkdir(ps->dir, 0777) != 0 && errno != EEXIST) {
    int rc = fl_seterr(FL_ERR_IO, "%s: cannot create folder: %s", ps->dir, strerror(errno));
    fl_pairs_close(ps);
    return rc;
  }
  *out = ps;
  return FL_OK;
}


static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char  *d = fl_malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}


int fl_pairs_define(fl_pairs *ps, long k, const char *problem, const char *solver,
                    uint64_t hash) {
  pair_ent *e = &ps->p[k];
  fl_free(e->problem);
  fl_free(e->solver);
  e->problem = dupstr(problem);
  e->solver  = dupstr(solver);
  e->hash    = hash;
  return e->problem && e->solver ? FL_OK : fl_seterr(FL_ERR_NOMEM, "campaign: out of memory");
}


// the record's file name: pairs/<FNV of problem NUL solver>.json
static void rec_path(const char *pairs_dir, const pair_ent *e, char *buf, size_t n) {
  uint64_t h = fl_pairs_hash(FL_PAIRS_HASH0, e->problem, strlen(e->problem) + 1);
  h          = fl_pairs_hash(h, e->solver, strlen(e->solver));
  char hex[17];
  fl_pairs_hex(h, hex);
  snprintf(buf, n, "%s/%s.json", pairs_dir, hex);
}


static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char  *buf = NULL;
  size_t len = 0, cap = 0, r;
  for (;;) {
    if (len + 65536 + 1 > cap) {
      cap = cap ? 2 * cap : 65536 * 2;
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
    if (r == 0) break;
  }
  fclose(f);
  buf[len] = '\0';
  return buf;
}


// parses a record file; 1 when it is pair e's (same problem and solver), *hash and *broke set
static cJSON *rec_load(const char *path, const pair_ent *e, uint64_t *hash, int *broke) {
  char *text = read_all(path);
  cJSON *m = text ? cJSON_Parse(text) : NULL;
  fl_free(text);
  const cJSON *pr = cJSON_GetObjectItemCaseSensitive(m, "problem"),
              *so = cJSON_GetObjectItemCaseSensitive(m, "solver"),
              *ha = cJSON_GetObjectItemCaseSensitive(m, "hash"),
              *br = cJSON_GetObjectItemCaseSensitive(m, "broke");
  if (!cJSON_IsString(pr) || !cJSON_IsString(so) || !cJSON_IsString(ha) ||
      strcmp(pr->valuestring, e->problem) || strcmp(so->valuestring, e->solver) ||
      !cJSON_GetObjectItemCaseSensitive(m, "record")) {
    cJSON_Delete(m);
    return NULL;
  }
  *hash  = strtoull(ha->valuestring, NULL, 16);
  *broke = cJSON_IsNumber(br) && br->valueint != 0;
  return m;
}


static int copy_file(const char *from, const char *to) {
  if (link(from, to) == 0) return 0;
  char *text = read_all(from);
  if (!text) return -1;
  FILE *f = fopen(to, "wb");
  int   ok = f && fputs(text, f) >= 0;
  if (f && fclose(f) != 0) ok = 0;
  fl_free(text);
  return ok ? 0 : -1;
}


long fl_pairs_adopt(fl_pairs *ps, const char *from, int retry_failed, long *nstale) {
  char fromdir[4096], src[4600], dst[4600], tmp[4700];
  long taken = 0;
  if (nstale) *nstale = 0;
  if (snprintf(fromdir, sizeof fromdir, "%s/pairs", from) >= (int)sizeof fromdir) return 0;
  struct stat st;
  if (stat(fromdir, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
  for (long k = 0; k < ps->n; k++) {
    pair_ent *e = &ps->p[k];
    if (e->done || !e->problem) continue;
    rec_path(fromdir, e, src, sizeof src);
    uint64_t h = 0;
    int broke = 0;
    cJSON *m = rec_load(src, e, &h, &broke);
    if (!m) continue;
    cJSON_Delete(m);
    if (h != e->hash) {
      if (nstale) (*nstale)++;
      continue;
    }
    if (broke && retry_failed) continue;
    rec_path(ps->dir, e, dst, sizeof dst);
    snprintf(tmp, sizeof tmp, "%s.adopt-%ld", dst, (long)getpid());
    unlink(tmp);
    if (copy_file(src, tmp) != 0 || rename(tmp, dst) != 0) {
      unlink(tmp);
      return fl_seterr(FL_ERR_IO, "%s: cannot take over %s: %s", dst, src, strerror(errno));
    }
    e->done  = 1;
    e->broke = (signed char)broke;
    taken++;
  }
  return taken;
}


int fl_pairs_done(const fl_pairs *ps, long k) { return ps->p[k].done; }


int fl_pairs_put(fl_pairs *ps, long k, const char *record, int broke) {
  pair_ent *e = &ps->p[k];
  char      path[4600], tmp[4700], hex[17];
  cJSON    *m = cJSON_CreateObject();
  cJSON    *r = cJSON_Parse(record);
  if (!m || !r) {
    cJSON_Delete(m);
    cJSON_Delete(r);
    return fl_seterr(FL_ERR_NOMEM, "campaign: pair %s / %s: unreadable record", e->problem,
                     e->solver);
  }
  fl_pairs_hex(e->hash, hex);
  cJSON_AddStringToObject(m, "problem", e->problem);
  cJSON_AddStringToObject(m, "solver", e->solver);
  cJSON_AddStringToObject(m, "hash", hex);
  cJSON_AddNumberToObject(m, "broke", broke != 0);
  cJSON_AddItemToObject(m, "record", r);
  char *text = cJSON_PrintUnformatted(m);
  cJSON_Delete(m);
  if (!text) return fl_seterr(FL_ERR_NOMEM, "campaign: out of memory");
  rec_path(ps->dir, e, path, sizeof path);
  // a temporary name, then rename: a reader (or a resume after a kill) sees all or nothing
  snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
  FILE *f  = fopen(tmp, "wb");
  int   ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
  if (f && fclose(f) != 0) ok = 0;
  cJSON_free(text);
  if (!ok || rename(tmp, path) != 0) {
    int rc = fl_seterr(FL_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    unlink(tmp);
    return rc;
  }
  e->done  = 1;
  e->broke = broke != 0;
  return FL_OK;
}


char *fl_pairs_get(const fl_pairs *ps, long k) {
  const pair_ent *e = &ps->p[k];
  if (!e->done) return NULL;
  char path[4600];
  rec_path(ps->dir, e, path, sizeof path);
  uint64_t h;
  int broke;
  cJSON *m = rec_load(path, e, &h, &broke);
  if (!m) {
    fl_seterr(FL_ERR_FORMAT, "%s: not the record of %s / %s", path, e->problem, e->solver);
    return NULL;
  }
  char *t = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(m, "record"));
  cJSON_Delete(m);
  if (!t) return NULL;
  char *out = dupstr(t);
  cJSON_free(t);
  return out;
}


long fl_pairs_npairs(const fl_pairs *ps) { return ps->n; }


long fl_pairs_ndone(const fl_pairs *ps) {
  long n = 0;
  for (long k = 0; k < ps->n; k++) n += ps->p[k].done;
  return n;
}


long fl_pairs_nfailed(const fl_pairs *ps) {
  long n = 0;
  for (long k = 0; k < ps->n; k++) n += ps->p[k].done && ps->p[k].broke;
  return n;
}


void fl_pairs_close(fl_pairs *ps) {
  if (!ps) return;
  for (long k = 0; ps->p && k < ps->n; k++) {
    fl_free(ps->p[k].problem);
    fl_free(ps->p[k].solver);
  }
  fl_free(ps->p);
  fl_free(ps->dir);
  fl_free(ps);
}


static void host_name(char *buf, size_t n) {
  if (gethostname(buf, n) != 0 || !buf[0]) snprintf(buf, n, "localhost");
  buf[n - 1] = '\0';
  for (char *c = buf; *c; c++)
    if (*c == '/') *c = '_';
}


int fl_pairs_orphans(const char *target, char ***out, int *n) {
  *out = NULL;
  *n   = 0;
  char parent[4096], prefix[600], host[256];
  snprintf(parent, sizeof parent, "%s", target);
  size_t len = strlen(parent);
  while (len > 1 && parent[len - 1] == '/') parent[--len] = '\0';
  char *slash = strrchr(parent, '/');
  const char *base = slash ? slash + 1 : parent;
  host_name(host, sizeof host);
  if (snprintf(prefix, sizeof prefix, ".%s.staging-%s-", base, host) >= (int)sizeof prefix)
    return FL_OK; /* unreachable: base and host are each at most 255 bytes */
  char pdir[4096];
  snprintf(pdir, sizeof pdir, "%s", slash ? (slash == parent ? "/" : parent) : ".");
  if (slash && slash != parent) pdir[slash - parent] = '\0';
  DIR *d = opendir(pdir);
  if (!d) return FL_OK;
  struct dirent *e;
  int rc = FL_OK;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
    const char *num = e->d_name + strlen(prefix);
    char *end;
    long pid = strtol(num, &end, 10);
    // this host's, not a replacement's leftover, and its process gone
    if (end == num || *end || pid <= 0 || pid == (long)getpid() ||
        kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue;
    char **grown = fl_realloc(*out, (size_t)(*n + 1) * sizeof *grown);
    size_t plen = strlen(pdir) + strlen(e->d_name) + 2;
    char *path = grown ? fl_malloc(plen) : NULL;
    if (grown) *out = grown;
    if (!path) {
      rc = fl_seterr(FL_ERR_NOMEM, "campaign: out of memory");
      break;
    }
    snprintf(path, plen, "%s/%s", pdir, e->d_name);
    (*out)[(*n)++] = path;
  }
  closedir(d);
  return rc;
}


static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}


int fl_pairs_rmtree(const char *path) { return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS); }


//---- signals ----

static volatile sig_atomic_t g_signal = 0;
static struct sigaction g_old_term, g_old_int;
static int g_installed = 0;

static void on_signal(int sig) {
  if (g_signal) { // the second: stop now, as without a handler
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  g_signal = sig;
}


void fl_pairs_signals_on(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART; // reads and writes in progress go on; the loop checks the flag
  g_signal    = 0;
  sigaction(SIGTERM, &sa, &g_old_term);
  sigaction(SIGINT, &sa, &g_old_int);
  g_installed = 1;
}


int fl_pairs_signalled(void) { return g_signal; }


void fl_pairs_signals_off(void) {
  if (!g_installed) return;
  sigaction(SIGTERM, &g_old_term, NULL);
  sigaction(SIGINT, &g_old_int, NULL);
  g_installed = 0;
}


//---- progress lines ----

static void fmt_dur(double s, char *buf, size_t n) {
  if (!isfinite(s) || s < 0) snprintf(buf, n, "?");
  else if (s < 120) snprintf(buf, n, "%.0fs", s);
  else if (s < 7200) snprintf(buf, n, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
  else snprintf(buf, n, "%.0fh%02.0fm", floor(s / 3600), floor(fmod(s, 3600) / 60));
}


static void progress_line(fl_pairs_progress *p, long done, long failed, int end) {
  double el = fl_time_now() - p->t0;
  char   e[32], l[32];
  fmt_dur(el, e, sizeof e);
  long ran = done - p->skipped, left = p->total - done;
  fmt_dur(ran > 0 ? el / (double)ran * (double)left : NAN, l, sizeof l);
  fprintf(stderr, "%s: %ld/%ld pairs done", p->label, done, p->total);
  if (p->skipped) fprintf(stderr, " (%ld resumed)", p->skipped);
  fprintf(stderr, ", %ld failed, %s elapsed", failed, e);
  if (!end) fprintf(stderr, ", ~%s left", l);
  fputc('\n', stderr);
  fflush(stderr);
}


void fl_pairs_progress_begin(fl_pairs_progress *p, const char *label, long total,
                             long skipped) {
  memset(p, 0, sizeof *p);
  p->label   = label;
  p->total   = total;
  p->skipped = skipped;
  p->t0 = p->last = fl_time_now();
  p->every        = 5;
  const char *ev  = getenv("FL_PROGRESS_EVERY");
  if (ev && *ev) p->every = strtod(ev, NULL);
  p->on = !isatty(fileno(stderr)) && p->every > 0;
}


void fl_pairs_progress_update(fl_pairs_progress *p, long done, long failed) {
  if (!p->on) return;
  double now = fl_time_now();
  if (now - p->last < p->every) return;
  p->last = now;
  progress_line(p, done, failed, 0);
}


void fl_pairs_progress_end(fl_pairs_progress *p, long done, long failed) {
  // a closing line only after periodic ones: a short command stays quiet
  if (!p->on || p->last == p->t0) return;
  progress_line(p, done, failed, 1);
  p->on = 0;
}

// SPDX-License-Identifier: Apache-2.0
/* fig_viewers.c: the viewer pages of a figure's folder, one per scene run: the recordings that
 * fl_fig_record_end left there (<stem>.flrec, one per solver run) grouped by scene and settings
 * (fl_record_scene_key), each group on one page with its solvers side by side.
 *
 * Done once after the recipe (whose runs may be in worker processes), from the files alone.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fl_figure.h"
#include "../output/fl_record.h"

#define MAX_REC 512

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}


/* the longest common suffix of the group's stems, without leading '_', '-' or '.', else their
 * longest common prefix */
static void common_suffix(char *const *stem, const int *member, int n, char *out, size_t cap) {
  const char *s0 = stem[member[0]];
  size_t l0 = strlen(s0), k = 0;
  for (;; k++) {
    int same = k < l0;
    for (int j = 1; same && j < n; j++) {
      const char *s = stem[member[j]];
      size_t l = strlen(s);
      same = k < l && s[l - 1 - k] == s0[l0 - 1 - k];
    }
    if (!same) break;
  }
  const char *suf = s0 + l0 - k;
  while (*suf == '_' || *suf == '-' || *suf == '.') suf++;
  snprintf(out, cap, "%s", suf);
  if (out[0]) return;
  // none: the common prefix (masterjohn-fig5's traj_<solver>), without trailing separators
  for (k = 0; s0[k]; k++) {
    int same = 1;
    for (int j = 1; same && j < n; j++) same = stem[member[j]][k] == s0[k];
    if (!same) break;
  }
  while (k > 0 && (s0[k - 1] == '_' || s0[k - 1] == '-' || s0[k - 1] == '.')) k--;
  snprintf(out, cap, "%.*s", (int)(k < cap ? k : cap - 1), s0);
}


int fl_fig_viewers(const char *dir) {
  if (!fl_viewer_available()) return FL_OK;
  DIR *d = opendir(dir);
  if (!d) return fl_seterr(FL_ERR_IO, "%s: cannot list", dir);
  char *stem[MAX_REC];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < MAX_REC) {
    size_t l = strlen(e->d_name);
    if (l > 6 && e->d_name[0] != '.' && strcmp(e->d_name + l - 6, ".flrec") == 0) {
      stem[n] = strndup(e->d_name, l - 6);
      if (stem[n]) n++;
    }
  }
  closedir(d);
  qsort(stem, (size_t)n, sizeof stem[0], by_name);
  char *key[MAX_REC];
  int group[MAX_REC], rc = FL_OK;
  for (int i = 0; i < n; i++) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s.flrec", dir, stem[i]);
    key[i] = fl_record_scene_key(p);
    group[i] = -1;
  }
  for (int i = 0; rc >= 0 && i < n; i++) {
    if (group[i] >= 0 || !key[i]) continue;
    int member[MAX_REC], m = 0;
    for (int j = i; j < n; j++)
      if (group[j] < 0 && key[j] && strcmp(key[i], key[j]) == 0) {
        group[j] = i;
        member[m++] = j;
      }
    char rp[1200], vp[1200];
    if (m == 1) { // a run alone: its page beside it, as its stem
      snprintf(rp, sizeof rp, "%s/%s.flrec", dir, stem[i]);
      snprintf(vp, sizeof vp, "%s/%s.html", dir, stem[i]);
      rc = fl_viewer_write(rp, vp, NULL);
      continue;
    }
    // several solvers on one scene: one page named after what their stems share
    char suf[200];
    common_suffix(stem, member, m, suf, sizeof suf);
    snprintf(vp, sizeof vp, "%s/viewer%s%s.html", dir, suf[0] ? "_" : "", suf);
    snprintf(rp, sizeof rp, "%s/.viewer_%d.flrec.tmp", dir, i);
    const char *paths[MAX_REC], *names[MAX_REC];
    char *buf = malloc((size_t)m * 1200);
    if (!buf) {
      rc = fl_seterr(FL_ERR_NOMEM, "figure: out of memory");
      break;
    }
    for (int j = 0; j < m; j++) {
      snprintf(buf + 1200 * j, 1200, "%s/%s.flrec", dir, stem[member[j]]);
      paths[j] = buf + 1200 * j;
      names[j] = stem[member[j]]; // the CSV's name: says the solver and the settings
    }
    rc = fl_record_merge(paths, names, m, rp);
    if (rc >= 0) rc = fl_viewer_write(rp, vp, NULL);
    remove(rp);
    free(buf);
  }
  for (int i = 0; i < n; i++) {
    free(key[i]);
    free(stem[i]);
  }
  return rc;
}

// SPDX-License-Identifier: Apache-2.0
/* inputs.c: folder arguments of `solve`, `profile` and `plan`, expanded into the FCLIB files
 * under them (see fl_harness.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../fl_harness.h"

typedef struct walk {
  char **list;
  int n, cap;
  int files_in_sub, skipped;
  char skipped_names[160]; /* the first few skipped names, for the report */
  char subdirs[160];       /* the subfolders that held files */
} walk;


static int has_ext(const char *name, const char *ext) {
  size_t n = strlen(name), e = strlen(ext);
  return n > e && strcmp(name + n - e, ext) == 0;
}


static void note(char *buf, size_t cap, const char *name) {
  size_t u = strlen(buf);
  if (u + strlen(name) + 8 >= cap) {
    if (u + 4 < cap && !strstr(buf, "...")) strcat(buf, ", ...");
    return;
  }
  snprintf(buf + u, cap - u, "%s%s", u ? ", " : "", name);
}


static int push(walk *w, const char *path) {
  if (w->n + 2 >= w->cap) {
    int cap = 2 * w->cap + 16;
    char **t = realloc(w->list, (size_t)cap * sizeof *t);
    if (!t) return fl_seterr(FL_ERR_NOMEM, "out of memory");
    w->list = t;
    w->cap = cap;
  }
  w->list[w->n] = strdup(path);
  if (!w->list[w->n]) return fl_seterr(FL_ERR_NOMEM, "out of memory");
  w->n++;
  return FL_OK;
}


/* every .hdf5 / .h5 file under dir, sorted by name within each folder, subfolders included */
static int walk_dir(walk *w, const char *dir, const char *rel, int depth) {
  if (depth > 16) return fl_seterr(FL_ERR_INVAL, "%s: folders nested too deep", dir);
  struct dirent **ent;
  int m = scandir(dir, &ent, NULL, alphasort);
  if (m < 0) return fl_seterr(FL_ERR_IO, "%s: cannot list folder: %s", dir, strerror(errno));
  int rc = FL_OK, before = w->n;
  for (int k = 0; k < m; k++) {
    const char *nm = ent[k]->d_name;
    if (rc >= 0 && nm[0] != '.') {
      char path[4096], sub[1024];
      snprintf(path, sizeof path, "%s/%s", dir, nm);
      snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", nm);
      struct stat st;
      if (stat(path, &st) != 0) {
        w->skipped++;
        note(w->skipped_names, sizeof w->skipped_names, sub);
      } else if (S_ISDIR(st.st_mode)) {
        rc = walk_dir(w, path, sub, depth + 1);
      } else if (has_ext(nm, ".hdf5") || has_ext(nm, ".h5")) {
        rc = push(w, path);
        w->files_in_sub += depth > 0;
      } else {
        w->skipped++;
        note(w->skipped_names, sizeof w->skipped_names, sub);
      }
    }
    free(ent[k]);
  }
  free(ent);
  if (rc >= 0 && depth > 0 && w->n > before) note(w->subdirs, sizeof w->subdirs, rel);
  return rc;
}


int fl_inputs_expand(int n, const char *const *args, const char *cmd, FILE *report,
                     char ***out, int *nout) {
  walk w = {0};
  int rc = FL_OK;
  for (int k = 0; k < n && rc >= 0; k++) {
    struct stat st;
    if (stat(args[k], &st) != 0 || !S_ISDIR(st.st_mode)) {
      rc = push(&w, args[k]);
      continue;
    }
    int before = w.n;
    w.files_in_sub = w.skipped = 0;
    w.skipped_names[0] = w.subdirs[0] = '\0';
    rc = walk_dir(&w, args[k], "", 0);
    if (rc < 0) break;
    if (w.n == before)
      rc = fl_seterr(FL_ERR_IO, "%s: no FCLIB file (.hdf5, .h5) in this folder or below", args[k]);
    else if (report) {
      fprintf(report, "%s: %s: %d FCLIB files", cmd, args[k], w.n - before);
      if (w.files_in_sub) fprintf(report, " (%d in subfolders: %s)", w.files_in_sub, w.subdirs);
      if (w.skipped) fprintf(report, "; skipped %d other entr%s: %s", w.skipped,
                             w.skipped == 1 ? "y" : "ies", w.skipped_names);
      fputc('\n', report);
    }
  }
  if (rc < 0) {
    fl_inputs_free(w.list, w.n);
    return rc;
  }
  if (!w.list && !(w.list = calloc(1, sizeof *w.list)))
    return fl_seterr(FL_ERR_NOMEM, "out of memory");
  w.list[w.n] = NULL; // push leaves room for it
  *out = w.list;
  *nout = w.n;
  return FL_OK;
}


void fl_inputs_free(char **list, int n) {
  for (int k = 0; list && k < n; k++) free(list[k]);
  free(list);
}

// SPDX-License-Identifier: Apache-2.0
/* test_results.c: results folders (staging, commit, refusal to overwrite, abort, allocation
 * failures) and the CSV helpers. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../harness/fl_harness.h"
#include "fl_test.h"

static char g_tmp[256];


// a fresh temporary folder per case
static const char *tmpdir(void) {
  snprintf(g_tmp, sizeof g_tmp, "%s/fl-results-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  return mkdtemp(g_tmp);
}


static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}


// number of entries of `dir` whose name contains `needle`
static int count_named(const char *dir, const char *needle) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) n += strstr(e->d_name, needle) != NULL;
  closedir(d);
  return n;
}


static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (s) s[n] = '\0';
  fclose(f);
  return s;
}


static void rm_rf(const char *path) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", path);
}


// a CSV field written to a memory stream
static const char *csv_of(double x, const char *s) {
  static char buf[256];
  FILE       *f = fmemopen(buf, sizeof buf, "w");
  if (s) fl_csv_str(f, s);
  else fl_csv_num(f, x);
  fclose(f);
  return buf;
}


FL_TEST(csv_fields) {
  ASSERT(strcmp(csv_of(NAN, NULL), "nan") == 0);
  ASSERT(strcmp(csv_of(-NAN, NULL), "nan") == 0);
  ASSERT(strcmp(csv_of(INFINITY, NULL), "inf") == 0);
  ASSERT(strcmp(csv_of(-INFINITY, NULL), "-inf") == 0);
  ASSERT(strcmp(csv_of(0.1, NULL), "0.1") == 0);
  ASSERT(strcmp(csv_of(1.0 / 3.0, NULL), "0.3333333333") == 0);
  ASSERT(strcmp(csv_of(-2.5e-300, NULL), "-2.5e-300") == 0);
  ASSERT(strcmp(csv_of(0, "plain"), "plain") == 0);
  ASSERT(strcmp(csv_of(0, "a,b"), "\"a,b\"") == 0);
  ASSERT(strcmp(csv_of(0, "say \"hi\""), "\"say \"\"hi\"\"\"") == 0);
  // the column tables' headers and rows (harness/output/csv.c)
  char  buf[1024];
  FILE *f = fmemopen(buf, sizeof buf, "w");
  fl_csv_header(f, fl_csv_iter_cols, FL_CSV_NITER);
  fl_csv_header(f, fl_csv_metrics_cols, FL_CSV_NMETRICS);
  fclose(f);
  ASSERT(strcmp(buf, "iter,time,error,merit,momentum,objective,step_length,inner_iters\n"
                     "natmap,natmap_raw,momentum,signorini,cone,dual,dissipation,penetration,"
                     "bilateral\n") == 0);
  fl_iter_stat st;
  fl_iter_stat_init(&st, 3);
  st.t = 0.5;
  st.error = 1e-3;
  f = fmemopen(buf, sizeof buf, "w");
  fl_csv_row(f, fl_csv_iter_cols, FL_CSV_NITER, &st);
  fclose(f);
  int commas_row = 0;
  for (const char *c = buf; *c; c++) commas_row += *c == ',';
  ASSERT_EQ(commas_row, FL_CSV_NITER - 1);
  ASSERT(strncmp(buf, "3,0.5,0.001,nan,", 16) == 0);
  fl_metrics m;
  fl_csv_metrics_nan(&m);
  f = fmemopen(buf, sizeof buf, "w");
  fl_csv_row(f, fl_csv_metrics_cols, FL_CSV_NMETRICS, &m);
  fclose(f);
  ASSERT(strcmp(buf, "nan,nan,nan,nan,nan,nan,nan,nan,nan\n") == 0);
  // the printf kinds and a gated (empty) cell
  typedef struct grow {
    double x;
    int on, off;
    const char *s;
  } grow;
  grow r = {1.0 / 3.0, 1, 0, "a,b"};
  const fl_csv_col gc[] = {
    {"g4", FL_CSV_G4, offsetof(grow, x), 0},
    {"g6", FL_CSV_G6, offsetof(grow, x), 0},
    {"f0", FL_CSV_F0, offsetof(grow, x), 0},
    {"shown", FL_CSV_G4 | FL_CSV_IF, offsetof(grow, x), offsetof(grow, on)},
    {"empty", FL_CSV_G4 | FL_CSV_IF, offsetof(grow, x), offsetof(grow, off)},
    {"s,t", FL_CSV_STR, offsetof(grow, s), 0}};
  f = fmemopen(buf, sizeof buf, "w");
  fl_csv_header(f, gc, 6);
  fl_csv_row(f, gc, 6, &r);
  fclose(f);
  ASSERT(strcmp(buf, "g4,g6,f0,shown,empty,\"s,t\"\n0.3333,0.333333,0,0.3333,,\"a,b\"\n") == 0);
  // the kinds that carry a figure's precision in idx: "%.*g", "%.*f"
  const fl_csv_col pc[] = {{"g9", FL_CSV_G, offsetof(grow, x), 9},
                           {"g10", FL_CSV_G, offsetof(grow, x), 10},
                           {"f1", FL_CSV_F, offsetof(grow, x), 1},
                           {"f3", FL_CSV_F, offsetof(grow, x), 3}};
  f = fmemopen(buf, sizeof buf, "w");
  fl_csv_header(f, pc, 4);
  fl_csv_row(f, pc, 4, &r);
  fclose(f);
  ASSERT(strcmp(buf, "g9,g10,f1,f3\n0.333333333,0.3333333333,0.3,0.333\n") == 0);
  return 0;
}


FL_TEST(commit_writes_folder_and_manifest) {
  const char *tmp = tmpdir();
  ASSERT(tmp);
  char target[512];
  snprintf(target, sizeof target, "%s/a/b/run", tmp);
  fl_results *r = NULL;
  ASSERT_OK(fl_results_begin(target, "solve", 0, &r));
  // nothing under the target's name until commit
  ASSERT(!exists(target));
  ASSERT(exists(fl_results_staging(r)));
  FILE *f = fl_results_file(r, "steps.csv");
  ASSERT(f);
  ASSERT(fl_results_file(r, "steps.csv") == f);
  fprintf(f, "x,y\n1,2\n");
  ASSERT(fl_results_file(r, "../escape.csv") == NULL);
  ASSERT_EQ(fl_errcode(), FL_ERR_INVAL);
  cJSON_AddStringToObject(fl_results_manifest(r), "extra", "value");

  fl_register_all();
  fl_solver *s = NULL;
  ASSERT_OK(fl_solver_create("pgs", &s));
  ASSERT_OK(fl_solver_set_option(s, "max_iter", "7"));
  ASSERT_OK(fl_results_add_solver(r, s));
  fl_solver_destroy(s);

  ASSERT_OK(fl_results_commit(r));
  char path[600];
  snprintf(path, sizeof path, "%s/steps.csv", target);
  char *text = slurp(path);
  ASSERT(text && strcmp(text, "x,y\n1,2\n") == 0);
  free(text);
  snprintf(path, sizeof path, "%s/manifest.json", target);
  text = slurp(path);
  ASSERT(text);
  cJSON *m = cJSON_Parse(text);
  free(text);
  ASSERT(m);
  ASSERT(strcmp(cJSON_GetObjectItem(m, "command")->valuestring, "solve") == 0);
  ASSERT(strcmp(cJSON_GetObjectItem(m, "extra")->valuestring, "value") == 0);
  cJSON *fl = cJSON_GetObjectItem(m, "frictionlab");
  ASSERT(strcmp(cJSON_GetObjectItem(fl, "version")->valuestring, fl_version()) == 0);
  ASSERT(cJSON_GetObjectItem(fl, "git_revision"));
  ASSERT(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "libraries"), "cholmod"));
  ASSERT(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "libraries"), "hdf5"));
  ASSERT(cJSON_GetObjectItem(m, "date"));
  /* the machine's load at the start: three non-negative numbers (1, 5, 15 minutes) */
  cJSON *load = cJSON_GetObjectItem(cJSON_GetObjectItem(m, "machine"), "load_average");
  ASSERT(cJSON_IsArray(load) && cJSON_GetArraySize(load) == 3);
  ASSERT(cJSON_GetArrayItem(load, 0)->valuedouble >= 0);
  cJSON *pgs = cJSON_GetObjectItem(cJSON_GetObjectItem(m, "solvers"), "pgs");
  ASSERT(pgs);
  cJSON *mi = cJSON_GetObjectItem(pgs, "max_iter");
  if (!mi) mi = cJSON_GetObjectItem(pgs, "pgs.max_iter");
  ASSERT(mi);
  ASSERT(cJSON_IsString(mi) ? strcmp(mi->valuestring, "7") == 0 : mi->valuedouble == 7);
  cJSON_Delete(m);
  snprintf(path, sizeof path, "%s/a/b", tmp);
  ASSERT_EQ(count_named(path, "staging"), 0);
  rm_rf(tmp);
  return 0;
}


FL_TEST(refuses_nonempty_target_without_force) {
  const char *tmp = tmpdir();
  ASSERT(tmp);
  char target[512], keep[600];
  snprintf(target, sizeof target, "%s/out", tmp);
  snprintf(keep, sizeof keep, "%s/keep.txt", target);
  ASSERT(mkdir(target, 0777) == 0);
  FILE *f = fopen(keep, "w");
  fputs("precious", f);
  fclose(f);

  fl_results *r = NULL;
  ASSERT_EQ(fl_results_begin(target, "solve", 0, &r), FL_ERR_INVAL);
  ASSERT(r == NULL);
  ASSERT_STR_CONTAINS(fl_errmsg(), target);
  ASSERT_STR_CONTAINS(fl_errmsg(), "--force");
  ASSERT(exists(keep));
  ASSERT_EQ(count_named(tmp, "staging"), 0);

  // with force the old folder is replaced, and only at commit
  ASSERT_OK(fl_results_begin(target, "solve", 1, &r));
  ASSERT(exists(keep));
  ASSERT(fl_results_file(r, "iters.csv"));
  ASSERT_OK(fl_results_commit(r));
  ASSERT(!exists(keep));
  char path[600];
  snprintf(path, sizeof path, "%s/iters.csv", target);
  ASSERT(exists(path));
  ASSERT_EQ(count_named(tmp, "staging"), 0);
  ASSERT_EQ(count_named(tmp, ".old-"), 0);

  // an empty folder may be filled without force
  char empty[512];
  snprintf(empty, sizeof empty, "%s/empty", tmp);
  ASSERT(mkdir(empty, 0777) == 0);
  ASSERT_OK(fl_results_begin(empty, "solve", 0, &r));
  ASSERT_OK(fl_results_commit(r));
  snprintf(path, sizeof path, "%s/manifest.json", empty);
  ASSERT(exists(path));
  rm_rf(tmp);
  return 0;
}


FL_TEST(abort_leaves_nothing) {
  const char *tmp = tmpdir();
  ASSERT(tmp);
  char target[512];
  snprintf(target, sizeof target, "%s/out", tmp);
  fl_results *r = NULL;
  ASSERT_OK(fl_results_begin(target, "solve", 0, &r));
  FILE *f = fl_results_file(r, "steps.csv");
  ASSERT(f);
  fprintf(f, "half-written\n");
  fl_results_abort(r);
  ASSERT(!exists(target));
  ASSERT_EQ(count_named(tmp, "staging"), 0);
  fl_results_abort(NULL);
  // names that cannot be folders
  ASSERT_EQ(fl_results_begin("", "solve", 0, &r), FL_ERR_INVAL);
  ASSERT_EQ(fl_results_begin(".", "solve", 0, &r), FL_ERR_INVAL);
  rm_rf(tmp);
  return 0;
}


// every allocation of begin/file/commit failing in turn: an error, and no folder left
FL_TEST(allocation_failures_leave_nothing) {
  const char *tmp = tmpdir();
  ASSERT(tmp);
  char target[512];
  snprintf(target, sizeof target, "%s/out", tmp);
  int succeeded = 0;
  for (long n = 0; n < 200 && !succeeded; n++) {
    fl_alloc_fail_after(n);
    fl_results *r  = NULL;
    int         rc = fl_results_begin(target, "solve", 0, &r);
    if (rc == FL_OK) {
      FILE *f = fl_results_file(r, "steps.csv");
      if (f) {
        fputs("a\n", f);
        rc = fl_results_commit(r);
      } else {
        rc = fl_errcode();
        fl_results_abort(r);
      }
    }
    fl_alloc_fail_after(-1);
    if (rc == FL_OK) {
      succeeded = 1;
      ASSERT(exists(target));
    } else {
      ASSERT(rc < 0);
      ASSERT(!exists(target));
    }
    ASSERT_EQ(count_named(tmp, "staging"), 0);
  }
  ASSERT(succeeded);
  rm_rf(tmp);
  return 0;
}


// a staging folder left by a killed run (its process gone) is removed by the next begin; one
// of a live process is left alone
FL_TEST(stale_staging_removed) {
  const char *tmp = tmpdir();
  ASSERT(tmp);
  // a pid that is not running: a child that has exited and been reaped
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT(dead > 0);
  int st = 0;
  ASSERT(waitpid(dead, &st, 0) == dead);
  char stale[600], live[600], target[512];
  snprintf(stale, sizeof stale, "%s/.old.staging-%ld", tmp, (long)dead);
  snprintf(live, sizeof live, "%s/.other.staging-%ld", tmp, (long)getppid());
  ASSERT(mkdir(stale, 0777) == 0);
  ASSERT(mkdir(live, 0777) == 0);
  snprintf(target, sizeof target, "%s/out", tmp);
  fl_results *r = NULL;
  ASSERT_OK(fl_results_begin(target, "solve", 0, &r));
  fl_results_abort(r);
  ASSERT(!exists(stale));
  ASSERT(exists(live));
  rm_rf(tmp);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
/* results.c: results folders (staged, then renamed into place), and their manifest (the CSV
 * writer is csv.c).
 *
 * A folder is built in "<parent>/.<name>.staging-<host>-<pid>" and renamed to "<parent>/<name>" only
 * when everything was written, so an error or a crash never leaves a half-written results
 * folder under the target's name.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cholmod.h>
#include <cjson/cJSON.h>
#include <hdf5.h>
#ifdef FL_HAVE_PETSC
#include <petscversion.h>
#endif

#include "../fl_harness.h"

#define MAX_FILES 256 /* streams stay open until commit; figure recipes write one CSV per run */

struct fl_results {
  char *target;  /* final folder */
  char *staging; /* folder being written */
  int force;
  cJSON *manifest;
  struct {
    char *name;
    FILE *f;
  } files[MAX_FILES];
  int nfiles;
};

static int g_argc;
static char **g_argv;


void fl_harness_set_argv(int argc, char **argv) {
  g_argc = argc;
  g_argv = argv;
}


//---- small file-system helpers ----

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char  *d = fl_malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}


// printf into a new fl_malloc'd string
static char *fmtstr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmtstr(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *s = fl_malloc((size_t)n + 1);
  if (!s) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}


// removes a file or a folder tree (symbolic links are removed, never followed); allocates
// nothing, so that cleaning up after an allocation failure cannot fail the same way
static int rmtree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode)) return unlink(path);
  DIR *d = opendir(path);
  if (!d) return -1;
  int            rc = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char sub[4096];
    if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub || rmtree(sub) != 0) {
      rc = -1;
    }
  }
  closedir(d);
  if (rmdir(path) != 0) rc = -1;
  return rc;
}


// 1 if `path` is a folder holding nothing, 0 if it holds something, -1 if not a folder
static int dir_empty(const char *path) {
  DIR *d = opendir(path);
  if (!d) return -1;
  struct dirent *e;
  int            empty = 1;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
      empty = 0;
      break;
    }
  }
  closedir(d);
  return empty;
}


// 1 if process pid is gone (not merely someone else's)
static int pid_gone(long pid) {
  return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}


// this machine's name as staging folders carry it: gethostname with '/' (impossible in a
// file name) made '_'; "localhost" when it has none
static void host_name(char *buf, size_t n) {
  if (gethostname(buf, n) != 0 || !buf[0]) snprintf(buf, n, "localhost");
  buf[n - 1] = '\0';
  for (char *c = buf; *c; c++)
    if (*c == '/') *c = '_';
}


/* Parses what follows ".staging-" in a staging folder's name: "HOST-PID" (this version) or
 * "PID" (older ones, taken as this host's), then "" or ".old-PID". Sets *pid and *old and
 * returns 1 when the folder is this host's, 0 when another host's or not a staging name. */
static int staging_tag(const char *r, long *pid, int *old) {
  char host[256], mine[256];
  const char *dot = strstr(r, ".old-");
  size_t len = dot ? (size_t)(dot - r) : strlen(r);
  if (len == 0 || len >= sizeof host) return 0;
  memcpy(host, r, len);
  host[len] = '\0';
  char *dash = strrchr(host, '-');
  const char *num = dash ? dash + 1 : host;
  char *end = NULL;
  errno = 0;
  *pid = strtol(num, &end, 10);
  if (errno || end == num || *end) return 0;
  *old = dot != NULL;
  if (!dash) return 1; // an older binary's name: the host was not recorded
  *dash = '\0';
  host_name(mine, sizeof mine);
  // another machine's (or container's) process ids mean nothing here: never judge them
  return strcmp(host, mine) == 0;
}


// 1 when a staging folder holds per-pair records of a campaign (harness/campaign/): those are
// finished work that `solve --resume` takes over, never removed as stale
static int holds_pairs(const char *parent, const char *name) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s/%s/pairs", parent, name) >= (int)sizeof path) return 0;
  DIR *d = opendir(path);
  if (!d) return 0;
  // a committed record is "<id>.json"; "<id>.json.tmp-PID" is a pair cut off while written
  struct dirent *e;
  int            found = 0;
  while (!found && (e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    found    = e->d_name[0] != '.' && n > 5 && strcmp(e->d_name + n - 5, ".json") == 0;
  }
  closedir(d);
  return found;
}


// Cleans up after commands that were killed, in `parent`, and says what it did on stderr:
//   ".NAME.staging-HOST-PID" of a dead process of this host: a folder never finished, removed
//     (unless it holds a campaign's finished pairs: kept for `solve --resume`, and said so);
//   ".NAME.staging-HOST-PID.old-PID" of a dead process of this host: killed while replacing
//     NAME under --force, after the old folder was moved aside. The staging folder beside it
//     was complete (the manifest is written before anything is moved), so it becomes NAME and
//     the old one goes; without it, the old folder goes back to NAME when NAME is missing.
// Another host's staging folders are left alone: its process ids cannot be checked here.
static void remove_stale_staging(const char *parent) {
  DIR *d = opendir(parent);
  if (!d) return;
  enum { MAXSTALE = 64 };
  char names[MAXSTALE][256];
  long pids[MAXSTALE];
  int old[MAXSTALE], n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < MAXSTALE) {
    const char *tag = e->d_name[0] == '.' ? strstr(e->d_name, ".staging-") : NULL;
    if (!tag || strlen(e->d_name) >= sizeof names[0]) continue;
    long pid = 0;
    if (!staging_tag(tag + 9, &pid, &old[n]) || !pid_gone(pid)) continue;
    if (!old[n] && holds_pairs(parent, e->d_name)) {
      fprintf(stderr, "results: kept %s/%s: it holds finished pairs of process %ld (gone); "
              "`frictionlab solve ... --resume --out` on its folder takes them over\n", parent,
              e->d_name, pid);
      continue;
    }
    snprintf(names[n], sizeof names[n], "%s", e->d_name);
    pids[n++] = pid;
  }
  closedir(d);
  // interrupted replacements first: their staging folder is the finished result
  for (int k = 0; k < n; k++) {
    if (!old[k]) continue;
    const char *tag = strstr(names[k], ".staging-");
    char oldp[4096], stage[4096], target[4096];
    if (snprintf(oldp, sizeof oldp, "%s/%s", parent, names[k]) >= (int)sizeof oldp ||
        snprintf(stage, sizeof stage, "%s/%.*s", parent, (int)(strstr(tag, ".old-") - names[k]),
                 names[k]) >= (int)sizeof stage ||
        snprintf(target, sizeof target, "%s/%.*s", parent, (int)(tag - names[k] - 1),
                 names[k] + 1) >= (int)sizeof target)
      continue;
    struct stat st;
    int have_target = lstat(target, &st) == 0, have_stage = lstat(stage, &st) == 0;
    if (!have_target && have_stage && rename(stage, target) == 0) {
      fprintf(stderr, "results: %s: finished its replacement, which process %ld began and did not "
              "end (the new folder is in place, the old one removed)\n", target, pids[k]);
      rmtree(oldp);
    } else if (!have_target && rename(oldp, target) == 0) {
      fprintf(stderr, "results: %s: put the old folder back, which process %ld had moved aside "
              "to replace it\n", target, pids[k]);
    } else if (rmtree(oldp) == 0) {
      fprintf(stderr, "results: removed %s, an old folder that process %ld (gone) had replaced\n",
              oldp, pids[k]);
    }
  }
  for (int k = 0; k < n; k++) {
    if (old[k]) continue;
    char path[4096];
    struct stat st;
    if (snprintf(path, sizeof path, "%s/%s", parent, names[k]) >= (int)sizeof path ||
        lstat(path, &st) != 0)
      continue; // moved into place above
    if (rmtree(path) == 0)
      fprintf(stderr, "results: removed %s, an unfinished results folder of process %ld (gone)\n",
              path, pids[k]);
  }
}


// mkdir -p of every folder above and including `path`
static int mkdirs(const char *path) {
  char *p = dupstr(path);
  if (!p) return fl_seterr(FL_ERR_NOMEM, "results: out of memory");
  for (char *c = p + 1;; c++) {
    if (*c == '/' || *c == '\0') {
      char keep = *c;
      *c        = '\0';
      if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        int rc = fl_seterr(FL_ERR_IO, "%s: cannot create folder: %s", p, strerror(errno));
        fl_free(p);
        return rc;
      }
      *c = keep;
      if (keep == '\0') break;
    }
  }
  fl_free(p);
  return FL_OK;
}


//---- what goes into every manifest ----

// output of a short shell command, trailing newline removed, or NULL
static char *run_capture(const char *cmd) {
  FILE *f = popen(cmd, "r");
  if (!f) return NULL;
  char   buf[256];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  int    st = pclose(f);
  if (st != 0) return NULL;
  buf[n] = '\0';
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = '\0';
  return dupstr(buf);
}


static void add_git(cJSON *fl) {
  // the revision the binary was configured at, and the source tree's state now (it may have
  // moved on since configure, and may hold uncommitted changes)
  cJSON_AddStringToObject(fl, "git_revision", FL_GIT_REVISION);
#ifdef FL_SOURCE_DIR
  if (strchr(FL_SOURCE_DIR, '\'') == NULL) {
    char *head = run_capture("git -C '" FL_SOURCE_DIR "' rev-parse --short HEAD 2>/dev/null");
    char *dirty =
      head ? run_capture("git -C '" FL_SOURCE_DIR
                         "' status --porcelain --untracked-files=no 2>/dev/null | head -c 1")
           : NULL;
    if (head) {
      cJSON_AddStringToObject(fl, "source_git_head", head);
      if (dirty) cJSON_AddBoolToObject(fl, "source_git_dirty", dirty[0] != '\0');
    }
    fl_free(head);
    fl_free(dirty);
  }
#endif
}


static void add_machine(cJSON *root) {
  cJSON         *m = cJSON_AddObjectToObject(root, "machine");
  struct utsname u;
  if (uname(&u) == 0) {
    cJSON_AddStringToObject(m, "system", u.sysname);
    cJSON_AddStringToObject(m, "release", u.release);
    cJSON_AddStringToObject(m, "arch", u.machine);
    cJSON_AddStringToObject(m, "hostname", u.nodename);
  }
  cJSON_AddNumberToObject(m, "cpus_online", (double)sysconf(_SC_NPROCESSORS_ONLN));
  // the load when the run started (1, 5, 15 minutes): a time is read against it
  double load[3];
  if (getloadavg(load, 3) == 3) {
    for (int k = 0; k < 3; k++) load[k] = round(load[k] * 100) / 100;
    cJSON_AddItemToObject(m, "load_average", cJSON_CreateDoubleArray(load, 3));
  }
  // the first "model name" line of /proc/cpuinfo, when there is one
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "model name", 10) == 0) {
        char *v = strchr(line, ':');
        if (v) {
          v++;
          while (*v == ' ' || *v == '\t') v++;
          v[strcspn(v, "\n")] = '\0';
          cJSON_AddStringToObject(m, "cpu", v);
        }
        break;
      }
    }
    fclose(f);
  }
}


static void add_libraries(cJSON *root) {
  cJSON *l = cJSON_AddObjectToObject(root, "libraries");
  char   buf[64];
  snprintf(buf, sizeof buf, "%d.%d.%d", CHOLMOD_MAIN_VERSION, CHOLMOD_SUB_VERSION,
           CHOLMOD_SUBSUB_VERSION);
  cJSON_AddStringToObject(l, "cholmod", buf);
  snprintf(buf, sizeof buf, "%d.%d.%d", SUITESPARSE_MAIN_VERSION, SUITESPARSE_SUB_VERSION,
           SUITESPARSE_SUBSUB_VERSION);
  cJSON_AddStringToObject(l, "suitesparse", buf);
  // HDF5: the library linked at run time
  unsigned maj = 0, min = 0, rel = 0;
  if (H5get_libversion(&maj, &min, &rel) >= 0) {
    snprintf(buf, sizeof buf, "%u.%u.%u", maj, min, rel);
    cJSON_AddStringToObject(l, "hdf5", buf);
  }
#ifdef FL_HAVE_PETSC
  snprintf(buf, sizeof buf, "%d.%d.%d", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR,
           PETSC_VERSION_SUBMINOR);
  cJSON_AddStringToObject(l, "petsc", buf);
#else
  cJSON_AddNullToObject(l, "petsc");
#endif
  cJSON_AddStringToObject(l, "cjson", cJSON_Version());
  // the BLAS this process (CHOLMOD, LAPACK, PETSc) resolves dgemm_ to: scripts/setup pins the
  // reference one, and a change here explains a change in round-off
  Dl_info di;
  void *dg = dlsym(RTLD_DEFAULT, "dgemm_");
  char real[4096];
  const char *bl = dg && dladdr(dg, &di) && di.dli_fname ? di.dli_fname : "?";
  cJSON_AddStringToObject(l, "blas", realpath(bl, real) ? real : bl);
  // OpenBLAS (scripts/benchmark --blas openblas) says how many threads it runs
  int (*nth)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
  if (nth) cJSON_AddNumberToObject(l, "blas_threads", nth());
#ifdef FL_HAVE_SICONOS
  // Siconos runs in child processes with its own BLAS binding (docs/siconos.md)
  char sb[256];
  int sth = -1;
  if (fl_siconos_blas(sb, sizeof sb, &sth) == FL_OK) {
    cJSON *sj = cJSON_AddObjectToObject(l, "siconos");
    cJSON_AddStringToObject(sj, "library", "libsiconos_numerics.so.7");
    cJSON_AddStringToObject(sj, "blas", sb);
    cJSON_AddNumberToObject(sj, "blas_threads", sth);
  } else {
    cJSON_AddNullToObject(l, "siconos");
  }
#else
  cJSON_AddNullToObject(l, "siconos");
#endif
#ifdef FL_HAVE_CUDA
  cJSON_AddBoolToObject(l, "cuda", 1);
#else
  cJSON_AddBoolToObject(l, "cuda", 0);
#endif
}


static void add_build(cJSON *root) {
#if defined(__clang__)
  cJSON_AddStringToObject(root, "compiler", "clang " __clang_version__);
#elif defined(__GNUC__)
  cJSON_AddStringToObject(root, "compiler", "gcc " __VERSION__);
#else
  cJSON_AddStringToObject(root, "compiler", "unknown");
#endif
  cJSON *b = cJSON_AddObjectToObject(root, "build");
#ifdef NDEBUG
  cJSON_AddBoolToObject(b, "assertions", 0);
#else
  cJSON_AddBoolToObject(b, "assertions", 1);
#endif
#if defined(__SANITIZE_ADDRESS__)
  cJSON_AddBoolToObject(b, "sanitizers", 1);
#else
  cJSON_AddBoolToObject(b, "sanitizers", 0);
#endif
#ifdef __OPTIMIZE__
  cJSON_AddBoolToObject(b, "optimized", 1);
#else
  cJSON_AddBoolToObject(b, "optimized", 0);
#endif
}


static cJSON *make_manifest(const char *command) {
  cJSON *root = cJSON_CreateObject();
  if (!root) return NULL;
  cJSON_AddStringToObject(root, "command", command);
  cJSON *argv = cJSON_AddArrayToObject(root, "argv");
  for (int i = 0; i < g_argc; i++) cJSON_AddItemToArray(argv, cJSON_CreateString(g_argv[i]));
  // the same as one shell line, quoted where needed, to run again by copy and paste
  char  *line = NULL;
  size_t len  = 0;
  FILE  *f    = open_memstream(&line, &len);
  if (f) {
    for (int i = 0; i < g_argc; i++) {
      const char *a = g_argv[i];
      if (i) fputc(' ', f);
      if (*a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                          "_-+=.,/:@%") == strlen(a)) {
        fputs(a, f);
        continue;
      }
      fputc('\'', f);
      for (; *a; a++) {
        if (*a == '\'') fputs("'\\''", f);
        else fputc(*a, f);
      }
      fputc('\'', f);
    }
    fclose(f);
    if (line) cJSON_AddStringToObject(root, "command_line", line);
    free(line);
  }
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd)) cJSON_AddStringToObject(root, "cwd", cwd);

  cJSON *fl = cJSON_AddObjectToObject(root, "frictionlab");
  cJSON_AddStringToObject(fl, "version", fl_version());
  add_git(fl);
  add_libraries(root);
  add_build(root);
  add_machine(root);

  // date in UTC, ISO 8601
  char      date[64];
  time_t    now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  cJSON_AddStringToObject(root, "date", date);
  cJSON_AddObjectToObject(root, "solvers");
  return root;
}


//---- the results folder ----

void fl_results_default_dir(const char *prefix, char *buf, size_t n) {
  char stamp[32];
  time_t now = time(NULL);
  struct tm tm;
  localtime_r(&now, &tm);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  snprintf(buf, n, "%s-%s", prefix, stamp);
  struct stat st;
  for (int k = 2; stat(buf, &st) == 0 && k < 1000; k++) snprintf(buf, n, "%s-%s-%d", prefix, stamp, k);
}


int fl_results_begin(const char *dir, const char *command, int force, fl_results **out) {
  if (!out) return fl_seterr(FL_ERR_INVAL, "fl_results_begin: out is NULL");
  *out = NULL;
  if (!dir || !*dir) return fl_seterr(FL_ERR_INVAL, "results: empty output folder name");

  // split "a/b/name/" into parent "a/b" and base "name"
  char *target = dupstr(dir);
  if (!target) return fl_seterr(FL_ERR_NOMEM, "results: out of memory");
  size_t n = strlen(target);
  while (n > 1 && target[n - 1] == '/') target[--n] = '\0';
  char *slash = strrchr(target, '/');
  char *parent = slash ? (slash == target ? dupstr("/") : fmtstr("%.*s", (int)(slash - target), target))
                       : dupstr(".");
  const char *base = slash ? slash + 1 : target;
  if (!parent) {
    fl_free(target);
    return fl_seterr(FL_ERR_NOMEM, "results: out of memory");
  }
  if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || strcmp(base, "/") == 0) {
    fl_free(parent);
    fl_free(target);
    return fl_seterr(FL_ERR_INVAL, "results: '%s' cannot be a results folder (name a new folder)",
                     dir);
  }

  // the target must be new, or an empty folder, unless --force
  struct stat st;
  if (lstat(target, &st) == 0) {
    int empty = S_ISDIR(st.st_mode) ? dir_empty(target) : 0;
    if (empty != 1 && !force) {
      int rc = fl_seterr(FL_ERR_INVAL,
                         "%s: already exists and is not an empty folder; pass --force to "
                         "replace it or choose another --out",
                         target);
      fl_free(parent);
      fl_free(target);
      return rc;
    }
  }

  int rc = mkdirs(parent);
  if (rc < 0) {
    fl_free(parent);
    fl_free(target);
    return rc;
  }
  remove_stale_staging(parent);
  fl_results *r = fl_calloc(1, sizeof *r);
  char host[256];
  host_name(host, sizeof host);
  char       *staging = fmtstr("%s/.%s.staging-%s-%ld", parent, base, host, (long)getpid());
  fl_free(parent);
  if (!r || !staging) {
    fl_free(r);
    fl_free(staging);
    fl_free(target);
    return fl_seterr(FL_ERR_NOMEM, "results: out of memory");
  }
  r->target  = target;
  r->staging = staging;
  r->force   = force;

  // a stale staging folder of a dead process with our pid is ours to replace
  rmtree(staging);
  if (mkdir(staging, 0777) != 0) {
    rc = fl_seterr(FL_ERR_IO, "%s: cannot create folder: %s", staging, strerror(errno));
    fl_free(r->staging);
    fl_free(r->target);
    fl_free(r);
    return rc;
  }
  r->manifest = make_manifest(command ? command : "");
  if (!r->manifest) {
    fl_results_abort(r);
    return fl_seterr(FL_ERR_NOMEM, "results: out of memory building the manifest");
  }
  *out = r;
  return FL_OK;
}


const char *fl_results_staging(const fl_results *r) { return r ? r->staging : NULL; }
const char *fl_results_target(const fl_results *r) { return r ? r->target : NULL; }
struct cJSON *fl_results_manifest(fl_results *r) { return r ? r->manifest : NULL; }


int fl_results_add_solver(fl_results *r, const fl_solver *s) {
  if (!r || !s) return fl_seterr(FL_ERR_INVAL, "fl_results_add_solver: NULL argument");
  // the solver writes its options as JSON text; parse it back into the manifest
  char  *text = NULL;
  size_t len  = 0;
  FILE  *f    = open_memstream(&text, &len);
  if (!f) return fl_seterr(FL_ERR_NOMEM, "results: out of memory");
  fl_solver_options_json(s, f);
  fclose(f);
  cJSON *opts = cJSON_ParseWithLength(text, len);
  if (!opts) {
    int rc = fl_seterr(FL_ERR_FORMAT,
                       "solver '%s': its resolved options are not valid JSON near offset %ld: %.200s",
                       fl_solver_name(s), text ? (long)(cJSON_GetErrorPtr() - text) : 0L,
                       text ? text : "");
    free(text);
    return rc;
  }
  free(text);
  cJSON *solvers = cJSON_GetObjectItemCaseSensitive(r->manifest, "solvers");
  cJSON_DeleteItemFromObjectCaseSensitive(solvers, fl_solver_name(s));
  cJSON_AddItemToObject(solvers, fl_solver_name(s), opts);
  return FL_OK;
}


FILE *fl_results_file(fl_results *r, const char *name) {
  if (!r || !name || !*name || strchr(name, '/')) {
    fl_seterr(FL_ERR_INVAL, "results: '%s' is not a plain file name", name ? name : "(null)");
    return NULL;
  }
  for (int i = 0; i < r->nfiles; i++) {
    if (strcmp(r->files[i].name, name) == 0) return r->files[i].f;
  }
  if (r->nfiles == MAX_FILES) {
    fl_seterr(FL_ERR_INVAL, "results: more than %d open files in %s", MAX_FILES, r->staging);
    return NULL;
  }
  char *path = fmtstr("%s/%s", r->staging, name);
  char *nm   = dupstr(name);
  FILE *f    = path ? fopen(path, "w") : NULL;
  if (!f || !nm) {
    if (path && !f) fl_seterr(FL_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    else fl_seterr(FL_ERR_NOMEM, "results: out of memory");
    if (f) fclose(f);
    fl_free(path);
    fl_free(nm);
    return NULL;
  }
  fl_free(path);
  r->files[r->nfiles].name = nm;
  r->files[r->nfiles].f    = f;
  r->nfiles++;
  return f;
}


// closes every file; the first write error wins
static int close_files(fl_results *r) {
  int rc = FL_OK;
  for (int i = 0; i < r->nfiles; i++) {
    int bad = ferror(r->files[i].f);
    if (fclose(r->files[i].f) != 0) bad = 1;
    if (bad && rc == FL_OK) {
      rc = fl_seterr(FL_ERR_IO, "%s/%s: write failed: %s", r->staging, r->files[i].name,
                     strerror(errno));
    }
    fl_free(r->files[i].name);
  }
  r->nfiles = 0;
  return rc;
}


static void results_free(fl_results *r) {
  cJSON_Delete(r->manifest);
  fl_free(r->staging);
  fl_free(r->target);
  fl_free(r);
}


void fl_results_abort(fl_results *r) {
  if (!r) return;
  int saved = fl_errcode();
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", fl_errmsg());
  close_files(r);
  rmtree(r->staging);
  // keep the error that made us abort, not a close error
  if (saved != FL_OK) fl_seterr(saved, "%s", msg);
  results_free(r);
}


int fl_results_commit(fl_results *r) {
  if (!r) return fl_seterr(FL_ERR_INVAL, "fl_results_commit: NULL handle");
  int rc = FL_OK;

  // manifest.json
  char *text = cJSON_Print(r->manifest);
  FILE *f    = text ? fl_results_file(r, "manifest.json") : NULL;
  if (!text) rc = fl_seterr(FL_ERR_NOMEM, "results: out of memory printing the manifest");
  else if (!f) rc = fl_errcode() < 0 ? fl_errcode() : FL_ERR_IO;
  else fprintf(f, "%s\n", text);
  cJSON_free(text);
  if (rc == FL_OK) rc = close_files(r);

  // move an existing target aside (force), put the new folder in place, drop the old one
  char       *old = NULL;
  struct stat st;
  if (rc == FL_OK && lstat(r->target, &st) == 0) {
    if (S_ISDIR(st.st_mode) && dir_empty(r->target) == 1) {
      if (rmdir(r->target) != 0) {
        rc = fl_seterr(FL_ERR_IO, "%s: cannot replace: %s", r->target, strerror(errno));
      }
    } else if (!r->force) {
      rc = fl_seterr(FL_ERR_INVAL,
                     "%s: appeared while the results were written; pass --force to replace it",
                     r->target);
    } else {
      old = fmtstr("%s.old-%ld", r->staging, (long)getpid());
      if (!old) rc = fl_seterr(FL_ERR_NOMEM, "results: out of memory");
      else if (rename(r->target, old) != 0) {
        rc = fl_seterr(FL_ERR_IO, "%s: cannot move aside: %s", r->target, strerror(errno));
      }
    }
  }
  if (rc == FL_OK && rename(r->staging, r->target) != 0) {
    rc = fl_seterr(FL_ERR_IO, "%s: cannot rename %s into place: %s", r->target, r->staging,
                   strerror(errno));
    if (old) rename(old, r->target); // put the old folder back
  } else if (old) {
    rmtree(old);
  }
  fl_free(old);
  if (rc < 0) {
    fl_results_abort(r);
    return rc;
  }
  results_free(r);
  return FL_OK;
}

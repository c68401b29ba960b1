// SPDX-License-Identifier: Apache-2.0
/* plugin.c: solver plug-ins, shared objects loaded with dlopen (fl_plugin.h, docs/plugins.md).
 *
 * A plug-in exports fl_plugin_register. The loader asks it for the ABI version it was built for
 * (pl NULL) before anything else of it runs, then lets it add its solvers into a staging list,
 * checks them all (tables, names against the registry and each other) and registers them
 * together, so that a refused plug-in adds nothing and is unloaded again. A loaded plug-in stays
 * loaded: the registry's tables point into it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fl_solver_impl.h"

struct fl_plugin {
  const char *path;      /* as resolved, for messages */
  fl_solver_ops *ops;    /* staged copies */
  fl_int n, cap;
};

/* the plug-ins loaded: resolved paths, kept for fl_plugin_path and to load each once */
static char **loaded;
static fl_int nloaded, cap_loaded;


int fl_plugin_add_solver_(fl_plugin *pl, const fl_solver_ops *ops, size_t ops_size) {
  if (!pl) return fl_seterr(FL_ERR_INVAL, "fl_plugin_add_solver: no registration in progress");
  FL_TRY(fl__solver_ops_check(ops, ops_size, pl->path));
  for (fl_int k = 0; k < pl->n; k++)
    if (strcmp(pl->ops[k].name, ops->name) == 0)
      return fl_seterr(FL_ERR_INVAL, "%s: adds solver %s twice", pl->path, ops->name);
  FL_TRY(fl_grow((void **)&pl->ops, &pl->cap, pl->n + 1, sizeof *pl->ops, "plug-in solvers"));
  memset(&pl->ops[pl->n], 0, sizeof pl->ops[pl->n]);
  memcpy(&pl->ops[pl->n], ops, ops_size);
  pl->n++;
  return FL_OK;
}


int fl_plugin_count(void) { return (int)nloaded; }


const char *fl_plugin_path(int i) { return i >= 0 && i < nloaded ? loaded[i] : NULL; }


int fl_plugin_load(const char *path) {
  if (!path || !path[0]) return fl_seterr(FL_ERR_INVAL, "fl_plugin_load: empty file name");
  // the built-in solvers first: a plug-in may not take one of their names, whatever the order
  // of the caller's calls
  FL_TRY(fl_register_all());
  char real[PATH_MAX];
  struct stat st;
  if (!realpath(path, real) || stat(real, &st) != 0)
    return fl_seterr(FL_ERR_IO, "plug-in %s: %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fl_seterr(FL_ERR_IO, "plug-in %s: not a file (expected a shared object, *.so)", path);
  for (fl_int k = 0; k < nloaded; k++)
    if (strcmp(loaded[k], real) == 0) return 0; // the same file again: nothing new

  // RTLD_NOW: a symbol the plug-in needs and this library lacks is refused here, by name,
  // rather than crashing in the middle of a solve
  dlerror();
  void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    return fl_seterr(FL_ERR_IO, "plug-in %s: cannot be loaded: %s", path, e ? e : "(no reason)");
  }
  int rc;
  union {
    void *p;
    fl_plugin_register_fn fn;
  } entry;
  entry.p = dlsym(h, FL_PLUGIN_SYMBOL);
  fl_plugin pl = {real, NULL, 0, 0};
  if (!entry.p) {
    rc = fl_seterr(FL_ERR_FORMAT, "plug-in %s: no function %s: not a FrictionLab plug-in "
                   "(docs/plugins.md)", path, FL_PLUGIN_SYMBOL);
    goto refuse;
  }
  int abi = -1;
  fl_clearerr();
  rc = entry.fn(NULL, &abi);
  if (abi != FL_ABI_VERSION) {
    rc = fl_seterr(FL_ERR_UNSUPPORTED, "plug-in %s was built for FrictionLab ABI %d; this "
                   "libfrictionlab (%s) has ABI %d: rebuild it against this FrictionLab "
                   "(docs/api.md)", path, abi, fl_version(), FL_ABI_VERSION);
    goto refuse;
  }
  fl_clearerr();
  rc = entry.fn(&pl, &abi);
  if (rc < 0) {
    char why[512];
    snprintf(why, sizeof why, "%s", fl_errmsg()[0] ? fl_errmsg() : fl_strerror(rc));
    rc = fl_seterr(rc, "plug-in %s: its registration failed: %s", path, why);
    goto refuse;
  }
  if (pl.n == 0) {
    rc = fl_seterr(FL_ERR_INVAL, "plug-in %s: registered no solver (expected at least one "
                   "fl_plugin_add_solver)", path);
    goto refuse;
  }
  for (fl_int k = 0; k < pl.n; k++) {
    const fl_solver_ops *old = fl_solver_find(pl.ops[k].name);
    if (old) {
      const char *o = fl_solver_ops_origin(old);
      rc = fl_seterr(FL_ERR_INVAL, "plug-in %s: solver %s is already registered (%s)", path,
                     pl.ops[k].name, o ? o : "built in");
      goto refuse;
    }
  }
  // a place in the list of loaded plug-ins first, so that nothing after a registration fails
  {
    size_t len = strlen(real) + 1;
    char *copy = fl_malloc(len);
    if (!copy || fl_grow((void **)&loaded, &cap_loaded, nloaded + 1, sizeof *loaded,
                         "plug-in list") < 0) {
      fl_free(copy);
      rc = fl_seterr(FL_ERR_NOMEM, "plug-in %s: out of memory", path);
      goto refuse;
    }
    memcpy(copy, real, len);
    loaded[nloaded++] = copy;
  }
  for (fl_int k = 0; k < pl.n; k++) {
    rc = fl_solver_register_ops(&pl.ops[k], sizeof pl.ops[k], real);
    if (rc < 0) {
      // only out of memory can get here (everything else was checked): take back the rest
      for (fl_int j = k - 1; j >= 0; j--) fl_solver_unregister(pl.ops[j].name);
      fl_free(loaded[--nloaded]);
      goto refuse;
    }
  }
  rc = (int)pl.n;
  fl_free(pl.ops);
  return rc;

refuse:
  fl_free(pl.ops);
  dlclose(h);
  return rc < 0 ? rc : fl_seterr(FL_ERR_STATE, "plug-in %s: refused", path);
}


static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}


int fl_plugin_load_dir(const char *dir) {
  if (!dir || !dir[0]) return fl_seterr(FL_ERR_INVAL, "fl_plugin_load_dir: empty folder name");
  DIR *d = opendir(dir);
  if (!d) return fl_seterr(FL_ERR_IO, "plug-in folder %s: %s", dir, strerror(errno));
  char **names = NULL;
  fl_int n = 0, cap = 0;
  int rc = FL_OK;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0 || e->d_name[0] == '.') continue;
    char *p = fl_malloc(strlen(dir) + len + 2);
    if (!p || fl_grow((void **)&names, &cap, n + 1, sizeof *names, "plug-in folder") < 0) {
      fl_free(p);
      rc = fl_seterr(FL_ERR_NOMEM, "plug-in folder %s: out of memory", dir);
      break;
    }
    sprintf(p, "%s/%s", dir, e->d_name);
    names[n++] = p;
  }
  closedir(d);
  if (n > 1) qsort(names, (size_t)n, sizeof *names, cmp_str);
  int added = 0;
  for (fl_int k = 0; k < n && rc >= 0; k++) {
    int r = fl_plugin_load(names[k]);
    if (r < 0) rc = r;
    else added += r;
  }
  for (fl_int k = 0; k < n; k++) fl_free(names[k]);
  fl_free(names);
  return rc < 0 ? rc : added;
}


/* The folder of the file that holds libfrictionlab's code (the shared library installed, the
 * program or test linked statically), followed by `tail`; 0 when unknown or too long. */
int fl__lib_dir(char *buf, size_t n, const char *tail) {
  Dl_info info;
  if (!dladdr((void *)&fl__lib_dir, &info) || !info.dli_fname) return 0;
  const char *slash = strrchr(info.dli_fname, '/');
  if (!slash) return 0;
  int len = snprintf(buf, n, "%.*s%s", (int)(slash - info.dli_fname), info.dli_fname, tail);
  return len > 0 && (size_t)len < n;
}


const char *fl_plugin_search_path(char *buf, size_t n) {
  if (!buf || n == 0) return buf;
  const char *env = getenv("FL_PLUGIN_PATH");
  char inst[PATH_MAX];
  int have = fl__lib_dir(inst, sizeof inst, "/frictionlab/plugins");
  snprintf(buf, n, "%s%s%s", env && env[0] ? env : "", env && env[0] && have ? ":" : "",
           have ? inst : "");
  return buf;
}


int fl_plugin_load_search_path(void) {
  size_t n = 0;
  const char *env = getenv("FL_PLUGIN_PATH");
  n = (env ? strlen(env) : 0) + PATH_MAX + 2;
  char *list = fl_malloc(n);
  if (!list) return fl_seterr(FL_ERR_NOMEM, "FL_PLUGIN_PATH: out of memory");
  fl_plugin_search_path(list, n);
  int added = 0, rc = FL_OK;
  for (char *save = NULL, *dir = strtok_r(list, ":", &save); dir && rc >= 0;
       dir = strtok_r(NULL, ":", &save)) {
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) continue; // a folder not made (yet)
    int r = fl_plugin_load_dir(dir);
    if (r < 0) rc = r;
    else added += r;
  }
  fl_free(list);
  return rc < 0 ? rc : added;
}

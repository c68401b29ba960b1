// SPDX-License-Identifier: Apache-2.0
/* guard.c: a pair in a child process, under a wall-time and an address-space limit
 * (fl_camp.h; solve's --wall-limit, --mem-limit and plug-in solvers). The child runs the
 * caller's function and sends its text through a pipe; the parent reads it until the deadline
 * and says how the child ended. What that means for the pair is the caller's to decide. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/fl_core.h"
#include "fl_camp.h"

/* OpenMP's thread pool does not survive fork(): libgomp in a child believes the parent's
 * worker threads exist and waits for them in its first parallel region. CHOLMOD's supernodal
 * factorization opens such regions (4 threads, fixed when CHOLMOD was built), in the harness
 * when it loads a problem (fl_dynamics) and in the children. So a guarded run makes every
 * parallel region of the harness process inactive (one thread, no pool) and each child gives
 * them back. The setters are looked up at run time: libgomp is there only as CHOLMOD's
 * dependency in builds without OpenMP of their own (the sanitizer builds). */
static int guard_omp_levels = -1; /* the harness's max active levels before the run; -1 none */

static void guard_omp_set(int levels) {
  void (*set)(int) = NULL;
  *(void **)&set   = dlsym(RTLD_DEFAULT, "omp_set_max_active_levels");
  if (set) set(levels);
}

/* In the harness, before anything is loaded: parallel regions inactive from here on. */
void fl_camp_guard_begin(void) {
  int (*get)(void) = NULL;
  *(void **)&get   = dlsym(RTLD_DEFAULT, "omp_get_max_active_levels");
  if (!get || guard_omp_levels >= 0) return;
  guard_omp_levels = get();
  guard_omp_set(0);
}

/* In a child right after the fork: the levels the harness had. */
static void guard_omp_child(void) {
  if (guard_omp_levels >= 0) guard_omp_set(guard_omp_levels);
}


/* The process's address space in bytes (VmSize of /proc/self/status), 0 when unreadable. */
static double address_space(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char  line[256];
  double kb = 0;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmSize:", 7)) kb = strtod(line + 7, NULL);
  if (f) fclose(f);
  return kb * 1024.0;
}

fl_camp_child_end fl_camp_guard_run(double wall_limit, double mem_limit,
                                    char *(*make)(void *ctx), void *ctx, char **text,
                                    int *wstatus) {
  int fd[2];
  *text    = NULL;
  *wstatus = 0;
  fflush(NULL); // the child must not write out the parent's buffered output again
  if (pipe(fd) < 0) return FL_CAMP_CHILD_NOPIPE;
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return FL_CAMP_CHILD_NOFORK;
  }
  if (pid == 0) {
    close(fd[0]);
    guard_omp_child();
    setpgid(0, 0);                        // a group, so that its own children die with it
    prctl(PR_SET_PDEATHSIG, SIGKILL);     // and it dies with the harness
    // the fork's copy-on-write is paid here, before any clock starts, so that a guarded solve
    // is timed as an unguarded one (locking the writable pages copies them; best effort).
    // Only for a harness under 1 GB resident (the copy doubles it) and not under ASan, whose
    // shadow memory is terabytes of writable address space
#ifndef __SANITIZE_ADDRESS__
    long pages = 0;
    FILE *sm = fopen("/proc/self/statm", "r");
    if (sm) {
      long size = 0;
      if (fscanf(sm, "%ld %ld", &size, &pages) != 2) pages = -1;
      fclose(sm);
    }
    if (pages > 0 && (double)pages * (double)sysconf(_SC_PAGESIZE) < 1e9 && mlockall(MCL_CURRENT) == 0)
      munlockall();
#endif
    if (mem_limit > 0) {
      // the pair's budget comes on top of what the harness holds (the loaded problems)
      struct rlimit rl;
      rl.rlim_cur = rl.rlim_max = (rlim_t)(address_space() + mem_limit * 1073741824.0);
      setrlimit(RLIMIT_AS, &rl);
    }
    char *txt  = make(ctx);
    int   code = 3;
    if (txt) {
      size_t n = strlen(txt), off = 0;
      while (off < n) {
        ssize_t w = write(fd[1], txt + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
      }
      code = off == n ? 0 : 3;
    }
    fflush(stdout);
    fflush(stderr);
    _exit(code); // no atexit handlers: the results folder is the parent's
  }

  // parent: read until end of file or the deadline
  close(fd[1]);
  setpgid(pid, pid); // also here, so that the group exists before any kill
  char  *buf = NULL;
  size_t len = 0, cap = 0;
  int    killed = 0, ioerr = 0;
  double t0 = fl_time_now();
  for (;;) {
    int wait_ms = -1;
    if (wall_limit > 0) {
      double left = wall_limit - (fl_time_now() - t0);
      if (left <= 0) {
        killed = 1;
        break;
      }
      wait_ms = left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
    }
    struct pollfd pf = {fd[0], POLLIN, 0};
    int           pr = poll(&pf, 1, wait_ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) {
      ioerr = 1;
      break;
    }
    if (pr == 0) continue; // the deadline is tested at the top
    if (len + 65536 + 1 > cap) {
      size_t nc = cap ? 2 * cap : 1 << 20;
      while (nc < len + 65536 + 1) nc *= 2;
      char *nb = realloc(buf, nc);
      if (!nb) {
        ioerr = 1;
        break;
      }
      buf = nb, cap = nc;
    }
    ssize_t r = read(fd[0], buf + len, cap - len - 1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      ioerr = 1;
      break;
    }
    if (r == 0) break; // the child closed its end: done (or died)
    len += (size_t)r;
  }
  close(fd[0]);
  if (killed || ioerr) kill(-pid, SIGKILL);
  int wst = 0;
  while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {}
  *wstatus = wst;
  if (killed) {
    free(buf);
    return FL_CAMP_CHILD_KILLED;
  }
  if (!ioerr && WIFEXITED(wst) && WEXITSTATUS(wst) == 0 && buf) {
    buf[len] = '\0';
    *text    = buf;
    return FL_CAMP_CHILD_SENT;
  }
  free(buf);
  return FL_CAMP_CHILD_ENDED;
}


int fl_camp_guard_verdict(fl_camp_child_end end, int wstatus, double wall_limit_s,
                          double mem_limit_gb, fl_camp_verdict *v) {
  if (end == FL_CAMP_CHILD_SENT) return 0;
  v->reason = "CRASHED";
  v->code   = FL_ERR_IO;
  v->broke  = 1;
  if (end == FL_CAMP_CHILD_NOPIPE) {
    snprintf(v->msg, sizeof v->msg, "could not create a pipe for the child process");
  } else if (end == FL_CAMP_CHILD_NOFORK) {
    snprintf(v->msg, sizeof v->msg, "could not fork a child process");
  } else if (end == FL_CAMP_CHILD_KILLED) {
    // the limit was asked for: not a failure
    v->reason = "WALL_LIMIT";
    v->code   = FL_DIVERGED_TIME_LIMIT;
    v->broke  = 0;
    snprintf(v->msg, sizeof v->msg, "killed after the wall limit of %g s (--wall-limit)",
             wall_limit_s);
  } else if (WIFSIGNALED(wstatus)) {
    snprintf(v->msg, sizeof v->msg, "the child process died of signal %d (%s)%s",
             WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)),
             mem_limit_gb > 0 ? " (under --mem-limit)" : "");
  } else {
    snprintf(v->msg, sizeof v->msg,
             "the child process ended with status %d before sending its rows",
             WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
  }
  return 1;
}

// SPDX-License-Identifier: Apache-2.0
/* files.c: inputs that must be regular files of a bounded size, single-file outputs written
 * through a temporary and never onto a device, FIFO or symlink, and the rule for names
 * (issue 51). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fl_core.h"

static const char *kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a folder";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}


/* opens without blocking (a FIFO with no writer would block open and read), then checks */
static int open_checked(const char *path, const char *what, double max_bytes, int *fd_out) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return fl_seterr(FL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return fl_seterr(FL_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return fl_seterr(FL_ERR_IO, "%s: is %s, not a %s (expected a regular file)", path,
                     kind_of(st.st_mode), what);
  }
  if (max_bytes > 0 && (double)st.st_size > max_bytes) {
    close(fd);
    return fl_seterr(FL_ERR_IO, "%s: %lld bytes, above the limit of %.0f bytes for a %s", path,
                     (long long)st.st_size, max_bytes, what);
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  *fd_out = fd;
  return FL_OK;
}


int fl_open_input(const char *path, const char *what, double max_bytes, FILE **out) {
  *out = NULL;
  int fd;
  FL_TRY(open_checked(path, what, max_bytes, &fd));
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return fl_seterr(FL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  }
  *out = f;
  return FL_OK;
}


int fl_check_input(const char *path, const char *what, double max_bytes) {
  int fd;
  FL_TRY(open_checked(path, what, max_bytes, &fd));
  close(fd);
  return FL_OK;
}


int fl_check_output(const char *path, const char *what) {
  struct stat st;
  if (lstat(path, &st) != 0) {
    if (errno == ENOENT) return FL_OK;
    return fl_seterr(FL_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
  }
  if (S_ISREG(st.st_mode)) return FL_OK;
  return fl_seterr(FL_ERR_IO, "%s: is %s; a %s replaces only a regular file (choose another "
                   "name)", path, kind_of(st.st_mode), what);
}


int fl_outfile_open(fl_outfile *o, const char *path, const char *what) {
  memset(o, 0, sizeof *o);
  FL_TRY(fl_check_output(path, what));
  if (snprintf(o->path, sizeof o->path, "%s", path) >= (int)sizeof o->path)
    return fl_seterr(FL_ERR_IO, "%.100s...: file name too long", path);
  snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(o->tmp);
  if (fd < 0) {
    o->tmp[0] = 0;
    return fl_seterr(FL_ERR_IO, "%s: cannot write beside it: %s", path, strerror(errno));
  }
  // mkstemp makes 0600; an output gets the mode a plain fopen would give it (0666 & ~umask)
  mode_t um = umask(0);
  umask(um);
  fchmod(fd, 0666 & ~um);
  o->f = fdopen(fd, "wb");
  if (!o->f) {
    close(fd);
    unlink(o->tmp);
    o->tmp[0] = 0;
    return fl_seterr(FL_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  }
  return FL_OK;
}


void fl_outfile_abort(fl_outfile *o) {
  if (o->f) fclose(o->f);
  if (o->tmp[0]) unlink(o->tmp);
  o->f = NULL;
  o->tmp[0] = 0;
}


int fl_outfile_commit(fl_outfile *o) {
  int bad = ferror(o->f);
  if (fclose(o->f) != 0) bad = 1;
  o->f = NULL;
  if (bad) {
    fl_outfile_abort(o);
    return fl_seterr(FL_ERR_IO, "%s: write error", o->path);
  }
  // the target may have changed while writing: check again just before the rename
  int rc = fl_check_output(o->path, "single-file output");
  if (rc >= 0 && rename(o->tmp, o->path) != 0)
    rc = fl_seterr(FL_ERR_IO, "%s: cannot rename into place: %s", o->path, strerror(errno));
  if (rc < 0) fl_outfile_abort(o);
  o->tmp[0] = 0;
  return rc;
}


int fl_name_check(const char *name, const char *where, const char *what) {
  if (!name) return fl_seterr(FL_ERR_INVAL, "%s: %s: missing name", where, what);
  size_t n = strlen(name);
  char shown[80];
  size_t k = 0;
  for (size_t i = 0; i < n && k + 5 < sizeof shown; i++) {
    unsigned char c = (unsigned char)name[i];
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') shown[k++] = (char)c;
    else k += (size_t)snprintf(shown + k, sizeof shown - k, "\\x%02x", c);
  }
  shown[k] = 0;
  if (n == 0) return fl_seterr(FL_ERR_INVAL, "%s: %s: empty name", where, what);
  if (n > FL_NAME_MAX)
    return fl_seterr(FL_ERR_INVAL, "%s: %s '%s...': %zu characters, at most %d allowed", where,
                     what, shown, n, FL_NAME_MAX);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)name[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '-' || c == '.';
    if (ok && i == 0 && (c == '.' || c == '-')) ok = 0;
    if (!ok) {
      char ch[16];
      if (c >= 0x20 && c < 0x7f) snprintf(ch, sizeof ch, "0x%02x, '%c'", c, c);
      else snprintf(ch, sizeof ch, "0x%02x", c);
      return fl_seterr(FL_ERR_INVAL, "%s: %s '%s': character %zu (%s) is not allowed; names are "
                       "1 to %d of A-Z a-z 0-9 _ . - (not starting with . or -)",
                       where, what, shown, i + 1, ch, FL_NAME_MAX);
    }
  }
  return FL_OK;
}

// SPDX-License-Identifier: Apache-2.0
/* error.c: error codes, thread-local messages, fault-injectable allocation. */
#include <stdlib.h>
#include <string.h>

#include "fl_core.h"

static _Thread_local char errmsg_[1024];
static _Thread_local int errcode_;

const char *fl_strerror(int code) {
  switch (code) {
#define FL_ERR_STR_(name, val, msg) \
  case (val): return msg;
    FL_ERRNO_MAP(FL_ERR_STR_)
#undef FL_ERR_STR_
  default: return "unknown error";
  }
}


const char *fl_errname(int code) {
  switch (code) {
#define FL_ERR_NAME_(name, val, msg) \
  case (val): return "FL_ERR_" #name;
    FL_ERRNO_MAP(FL_ERR_NAME_)
#undef FL_ERR_NAME_
  default: return "FL_ERR_UNKNOWN";
  }
}


int fl_seterr(int code, const char *fmt, ...) {
  // formatted aside first: callers may pass fl_errmsg() itself to wrap the previous message
  char    buf[sizeof errmsg_];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  memcpy(errmsg_, buf, sizeof buf);
  errcode_ = code;
  return code;
}


const char *fl_errmsg(void) { return errmsg_; }
int fl_errcode(void) { return errcode_; }


void fl_clearerr(void) {
  errmsg_[0] = '\0';
  errcode_ = FL_OK;
}


//---- allocation with fault injection (CHOLMOD my_tries, SQLite faultsim) ----

static long fail_after_ = -1;

static int should_fail(void) {
  if (fail_after_ < 0) return 0;
  if (fail_after_ == 0) return 1;
  fail_after_--;
  return 0;
}


void fl_alloc_fail_after(long n) { fail_after_ = n; }


void *fl_malloc(size_t bytes) {
  if (should_fail()) return NULL;
  return malloc(bytes ? bytes : 1);
}


void *fl_calloc(size_t n, size_t size) {
  if (should_fail()) return NULL;
  return calloc(n ? n : 1, size ? size : 1);
}


void *fl_realloc(void *p, size_t bytes) {
  if (should_fail()) return NULL;
  return realloc(p, bytes ? bytes : 1);
}


void fl_free(void *p) { free(p); }


int fl_grow(void **arr, fl_int *cap, fl_int need, size_t elem, const char *what) {
  if (need <= *cap) return FL_OK;
  fl_int nc = *cap > 0 ? *cap : 8;
  while (nc < need) nc *= 2;
  void *p = fl_realloc(*arr, (size_t)nc * elem);
  if (!p) return fl_seterr(FL_ERR_NOMEM, "%s: out of memory (%d items)", what, (int)nc);
  memset((char *)p + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
  *arr = p;
  *cap = nc;
  return FL_OK;
}

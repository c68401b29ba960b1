// SPDX-License-Identifier: Apache-2.0
/* arena.c: scratch memory with marks and a high-water mark (MuJoCo's stack). */
#include <string.h>

#include "fl_core.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

int fl_arena_init(fl_arena *a, size_t bytes) {
  memset(a, 0, sizeof *a);
  a->base = fl_malloc(bytes);
  if (!a->base) return fl_seterr(FL_ERR_NOMEM, "arena: cannot allocate %zu bytes", bytes);
  a->size = bytes;
  POISON(a->base, a->size);
  return FL_OK;
}


void fl_arena_free(fl_arena *a) {
  if (!a) return;
  if (a->base) UNPOISON(a->base, a->size);
  fl_free(a->base);
  memset(a, 0, sizeof *a);
}


size_t fl_arena_mark(const fl_arena *a) { return a->used; }


void fl_arena_release(fl_arena *a, size_t mark) {
  if (mark > a->used) return;
  // poison what is handed back so that a use after release is caught under ASan
  POISON(a->base + mark, a->used - mark);
  a->used = mark;
}


void *fl_arena_alloc_(fl_arena *a, size_t n, size_t size, size_t align, const char *func,
                      int line) {
  if (size && n > (SIZE_MAX - 64) / size) {
    fl_seterr(FL_ERR_NOMEM, "arena: %zu x %zu bytes overflow (%s:%d)", n, size, func, line);
    return NULL;
  }
  size_t bytes = n * size;
  uintptr_t at = (uintptr_t)a->base + a->used;
  size_t pad = (align - at % align) % align;
  if (!a->base || a->used + pad + bytes > a->size) {
    fl_seterr(FL_ERR_NOMEM, "arena exhausted: %zu bytes asked at %s:%d, %zu of %zu in use",
              bytes, func, line, a->used, a->size);
    return NULL;
  }
  void *p = a->base + a->used + pad;
  a->used += pad + bytes;
  UNPOISON(p, bytes);
  if (a->used > a->high) {
    a->high = a->used;
    a->high_func = func;
    a->high_line = line;
  }
  return p;
}

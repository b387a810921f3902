/* cxx.c — C++'s operator new and delete, served by the shim itself.
 *
 * A C++ program's `new` otherwise reaches the shim through the C++ runtime
 * (libstdc++'s operator new calls malloc through the PLT, its delete calls
 * free): two calls and a PLT jump for every object. Here the operators are
 * the shim's: new is malloc's fast path inlined (alloc_fast.h), delete is
 * free itself (aliases of free, in free.c: an alias must sit beside its
 * target). Every form the Itanium C++ ABI names is covered —
 * plain, array, nothrow, sized delete (C++14), aligned (C++17) — so no
 * object is ever made by one allocator and deleted by another (those the
 * runtime would still serve end in the shim's malloc and free anyway).
 *
 * Failure. Only when the shim has no memory does the language ask for more
 * than malloc: call the new-handler and try again, then throw
 * std::bad_alloc (or, for nothrow forms, return NULL). That is the C++
 * runtime's own code, so the request goes to the next definition of the
 * same operator (the C++ runtime's, found with dlsym(RTLD_NEXT) at each
 * failure), which allocates through the shim's malloc again and runs
 * the handler loop and the throw exactly as the language says. Its call is
 * the operator's last act (a tail call), so the exception unwinds from the
 * runtime's frame straight to the program's. A process without a C++
 * runtime behind the shim (a C++ library loaded privately) cannot throw: a
 * throwing form aborts there, naming the failure, and a nothrow form
 * returns NULL.
 *
 * A program (or library) that defines its own operator new keeps it: the
 * executable comes before a preloaded library in symbol lookup. */
#define _GNU_SOURCE              /* RTLD_NEXT */
#include "internal.h"
#include "alloc_fast.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

/* The C++ forms' names (Itanium ABI, size_t = unsigned long). */
#define NEW             _Znwm
#define NEW_ARRAY       _Znam
#define NEW_NOTHROW     _ZnwmRKSt9nothrow_t
#define NEW_ARRAY_NOTHROW _ZnamRKSt9nothrow_t
#define NEW_ALIGNED     _ZnwmSt11align_val_t
#define NEW_ARRAY_ALIGNED _ZnamSt11align_val_t
#define NEW_ALIGNED_NOTHROW _ZnwmSt11align_val_tRKSt9nothrow_t
#define NEW_ARRAY_ALIGNED_NOTHROW _ZnamSt11align_val_tRKSt9nothrow_t
#define NAME_(x) #x
#define NAME(x) NAME_(x)

typedef void* (*new_fn)(size_t);
typedef void* (*new_nothrow_fn)(size_t, const void*);
typedef void* (*new_aligned_fn)(size_t, size_t);
typedef void* (*new_aligned_nothrow_fn)(size_t, size_t, const void*);

/* The next definition of `name` after the shim, or NULL (none). Looked up
 * on every failure: failures are rare, and a C++ runtime loaded after the
 * first one is found then. */
static void* next_definition(const char* name) {
  return dlsym(RTLD_NEXT, name);
}

static PA_COLD __attribute__((noreturn)) void no_runtime(const char* name, size_t n) {
  char num[24];
  pa_warn("operator new (", name, "): no memory for ", pa_fmt_u64(num, n),
          " bytes, and no C++ runtime after libpinarena.so to call the new-handler or throw std::bad_alloc", (char*)NULL);
  abort();
}

/* ---------------------------------------------------------------------------
   Failure: the C++ runtime's operator does what the language asks
--------------------------------------------------------------------------- */

static PA_NOINLINE PA_COLD void* new_failed(size_t n, const char* name) {
  new_fn next = (new_fn)next_definition(name);
  if (next == NULL) no_runtime(name, n);
  return next(n);
}

static PA_NOINLINE PA_COLD void* new_nothrow_failed(size_t n, const void* tag, const char* name) {
  new_nothrow_fn next = (new_nothrow_fn)next_definition(name);
  return next == NULL ? NULL : next(n, tag);
}

/* malloc's slow way, then the failure's (out of line: the fast path keeps
 * no frame). */
static PA_NOINLINE void* new_slow(size_t n, const char* name) {
  void* p = pa_malloc_generic(n, pa_heap);
  if (likely(p != NULL)) return p;
  return new_failed(n, name);
}

static PA_NOINLINE void* new_nothrow_slow(size_t n, const void* tag, const char* name) {
  void* p = pa_malloc_generic(n, pa_heap);
  if (likely(p != NULL)) return p;
  return new_nothrow_failed(n, tag, name);
}

static PA_NOINLINE PA_COLD void* new_aligned_failed(size_t n, size_t align, const char* name) {
  new_aligned_fn next = (new_aligned_fn)next_definition(name);
  if (next == NULL) no_runtime(name, n);
  return next(n, align);
}

static PA_NOINLINE PA_COLD void* new_aligned_nothrow_failed(size_t n, size_t align, const void* tag, const char* name) {
  new_aligned_nothrow_fn next = (new_aligned_nothrow_fn)next_definition(name);
  return next == NULL ? NULL : next(n, align, tag);
}

/* ---------------------------------------------------------------------------
   new: malloc's fast path, a tail call when it fails
--------------------------------------------------------------------------- */

/* An alignment above the default goes the way of aligned_alloc. The
 * language allows only powers of two here; anything else fails (EINVAL) and
 * so reaches the C++ runtime's operator, whose aligned_alloc refuses it the
 * same way: std::bad_alloc. */
static inline void* aligned(size_t n, size_t align) {
  if (align <= PA_ALIGN_MIN) return pa_malloc(n);
  if (unlikely(align & (align - 1))) { errno = EINVAL; return NULL; }
  return pa_malloc_aligned(n, align);
}

PA_EXPORT PA_ENTRY_ALIGNED void* NEW(size_t n) {
  pa_span_t* s = pa_fast_span(pa_heap, n);
  if (likely(s != NULL)) return pa_span_pop(s);
  return new_slow(n, NAME(NEW));
}

PA_EXPORT PA_ENTRY_ALIGNED void* NEW_ARRAY(size_t n) {
  pa_span_t* s = pa_fast_span(pa_heap, n);
  if (likely(s != NULL)) return pa_span_pop(s);
  return new_slow(n, NAME(NEW_ARRAY));
}

PA_EXPORT void* NEW_NOTHROW(size_t n, const void* tag) {
  pa_span_t* s = pa_fast_span(pa_heap, n);
  if (likely(s != NULL)) return pa_span_pop(s);
  return new_nothrow_slow(n, tag, NAME(NEW_NOTHROW));
}

PA_EXPORT void* NEW_ARRAY_NOTHROW(size_t n, const void* tag) {
  pa_span_t* s = pa_fast_span(pa_heap, n);
  if (likely(s != NULL)) return pa_span_pop(s);
  return new_nothrow_slow(n, tag, NAME(NEW_ARRAY_NOTHROW));
}

PA_EXPORT void* NEW_ALIGNED(size_t n, size_t align) {
  void* p = aligned(n, align);
  if (likely(p != NULL)) return p;
  return new_aligned_failed(n, align, NAME(NEW_ALIGNED));
}

PA_EXPORT void* NEW_ARRAY_ALIGNED(size_t n, size_t align) {
  void* p = aligned(n, align);
  if (likely(p != NULL)) return p;
  return new_aligned_failed(n, align, NAME(NEW_ARRAY_ALIGNED));
}

PA_EXPORT void* NEW_ALIGNED_NOTHROW(size_t n, size_t align, const void* tag) {
  void* p = aligned(n, align);
  if (likely(p != NULL)) return p;
  return new_aligned_nothrow_failed(n, align, tag, NAME(NEW_ALIGNED_NOTHROW));
}

PA_EXPORT void* NEW_ARRAY_ALIGNED_NOTHROW(size_t n, size_t align, const void* tag) {
  void* p = aligned(n, align);
  if (likely(p != NULL)) return p;
  return new_aligned_nothrow_failed(n, align, tag, NAME(NEW_ARRAY_ALIGNED_NOTHROW));
}

/* delete, every form: free itself, aliases beside free's own name (free.c). */

/* alloc_fast.h — malloc's fast path, inline: a pop from the current span of
 * the size class. Two callers inline it, so neither pays a call: malloc
 * itself (alloc.c) and C++'s operator new (cxx.c). Everything else is
 * alloc.c's. */
#ifndef PA_SHIM_ALLOC_FAST_H
#define PA_SHIM_ALLOC_FAST_H

#include "internal.h"

/* A listed block that failed the fast test (alloc.c). */
PA_HIDDEN void* pa_span_pop_checked(pa_span_t* s, pa_block_t* b);

/* No malloc counter here: the count of small mallocs is derived from
 * `used` (see pa_heap_t, pa_small_counts). */
static inline void* pa_span_pop(pa_span_t* s) {
  pa_block_t* b = s->free;
  /* every listed block carries its mark: one without it was taken before
     (a second copy, freed twice) or written after free (free.c); and its
     link is checked before anyone follows it. Both in one test: the mark,
     decoded, must lie in the link's 64 KiB slice (internal.h, free-list
     links): two xors and a compare that fuses with its branch, the same
     micro-ops as the mark test alone (a shift instead of the compare costs
     one more: measured, README). The rest (the list's end, a damaged block,
     a link into another slice of a bigger span) is a tail call, so the fast
     path needs no frame */
  pa_block_t* next = pa_link_raw(b);
  if (unlikely((b->mark ^ pa_secrets.key ^ (uintptr_t)next) > PA_SLICE - 1)) return pa_span_pop_checked(s, b);
  s->free = next;
  /* the next malloc of this class reads that block's line: start loading
     it now, while the caller works (a prefetch of NULL is harmless) */
  __builtin_prefetch(next, 1, 3);
  b->mark = 0;                           /* out: no longer marked free (same line as the link) */
  s->used++;
  return b;
}

/* Sizes up to 1 KiB: one table load for the class. The span the fast path
 * pops from for n, or NULL: everything else (bigger sizes, an empty span, the
 * first malloc of a thread — its heap is pa_heap_empty, whose spans are all
 * empty) is malloc's slow way. */
static inline pa_span_t* pa_fast_span(pa_heap_t* h, size_t n) {
  if (likely(n <= 1024)) {
    pa_span_t* s = h->direct[(n + 15) >> 4];
    if (likely(s->free != NULL)) return s;
  }
  return NULL;
}

/* malloc: the pop, else pa_malloc_generic. C++'s operator new (cxx.c) uses
 * pa_fast_span itself: its slow way is more than pa_malloc_generic, and
 * stays out of line so that the pop keeps no frame. */
static inline void* pa_malloc_inline(size_t n) {
  pa_heap_t* h = pa_heap;
  pa_span_t* s = pa_fast_span(h, n);
  if (likely(s != NULL)) return pa_span_pop(s);
  return pa_malloc_generic(n, h);
}

#endif

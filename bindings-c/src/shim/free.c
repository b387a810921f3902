/* free.c — free: validate in O(1), push on the span's local list when the
 * calling thread owns it, else on the span's thread_free list with a CAS.
 *
 * Validation: the owner table must know the address, the span descriptor
 * (check word + kind, one load) must be an intact small span, and the
 * allocated bit of p's granule (see pa_bit_word) must be set. Only block
 * starts ever get a bit, so a set bit proves p is a live block; a clear bit
 * is an invalid pointer (not a block start, never handed out) or a double
 * free, told apart out of line by the block geometry and the bump pointer.
 * Remote freers check the geometry and the bump pointer (they never read the
 * owner's bits); double frees involving another thread are caught when the
 * owner takes the remote frees in (pa_span_collect) — at the owner's next
 * free into that span or its next refill, whichever comes first. The block
 * itself is only written (its next pointer), never read.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

/* ---------------------------------------------------------------------------
   Errors: one line naming the pointer, then abort
--------------------------------------------------------------------------- */

static PA_COLD __attribute__((noreturn)) void bad_pointer(const void* p, const char* who) {
  char msg[96];
  char* m = msg;
  for (const char* s = who; *s; s++) *m++ = *s;
  for (const char* s = "(): invalid pointer"; *s; s++) *m++ = *s;
  *m = 0;
  pa_fatal_ptr(msg, p);
}

static PA_COLD __attribute__((noreturn)) void corrupt_chunk(const void* p) {
  pa_fatal_ptr("free(): corrupted chunk header for pointer", p);
}

static PA_COLD __attribute__((noreturn)) void double_free(const void* p) {
  pa_fatal_ptr("free(): double free detected for pointer", p);
}

/* Everything but a block of a small span. */
static PA_COLD void free_other(pa_chunk* c, void* p) {
  if (unlikely(c->magic != PA_CHUNK_MAGIC)) corrupt_chunk(p);
  if (c->kind == PA_CHUNK_HUGE) {
    void* obj = atomic_load_explicit((_Atomic(void*)*)&c->huge_obj, memory_order_acquire);
    if (obj == NULL) {
      if ((uintptr_t)p >= (uintptr_t)c + PA_HUGE_HDR) double_free(p);
      bad_pointer(p, "free");
    }
    if (obj != p) bad_pointer(p, "free");
    pa_huge_release(c);
    return;
  }
  pa_span_t* s = pa_span_of(c, p);
  if (s->kind == PA_SPAN_LARGE && s->obj == p) { s->obj = NULL; pa_span_release(s); return; }
  if (s->kind == PA_SPAN_FREE && ((uintptr_t)p & (PA_SLICE - 1)) == 0) double_free(p);
  bad_pointer(p, "free");
}

/* ---------------------------------------------------------------------------
   Remote free
--------------------------------------------------------------------------- */

PA_HIDDEN void pa_bit_check_clear(pa_span_t* s, void* b) {
  _Atomic(uint64_t)* w = pa_bit_word(s, b);
  uint64_t v = atomic_load_explicit(w, memory_order_relaxed), m = pa_bit_mask(b);
  if (unlikely((v & m) == 0)) double_free(b);
  atomic_store_explicit(w, v & ~m, memory_order_relaxed);
}

static PA_NOINLINE void free_remote(pa_span_t* s, pa_block_t* b) {
  pa_heap->n_remote++;
  uintptr_t tf = atomic_load_explicit(&s->thread_free, memory_order_relaxed);
  for (;;) {
    if (unlikely(tf & PA_TF_DELAYED)) {
      /* The owner parked this span as full. Win the tag (only one freer
         does), then hand the block to the owning heap's delayed list: its
         owner frees it locally and moves the span back into use. The block
         is still counted in s->used, so the span cannot be released before
         the owner sees it. */
      if (!atomic_compare_exchange_weak(&s->thread_free, &tf, tf & ~PA_TF_DELAYED)) continue;
      pa_heap_t* h = s->heap;
      pa_block_t* d = atomic_load_explicit(&h->delayed, memory_order_relaxed);
      do { b->next = d; }
      while (!atomic_compare_exchange_weak_explicit(&h->delayed, &d, b, memory_order_release, memory_order_relaxed));
      return;
    }
    b->next = (pa_block_t*)tf;
    /* release: b->next (and the caller's writes) happen before the owner's
       acquire in pa_span_collect */
    if (atomic_compare_exchange_weak_explicit(&s->thread_free, &tf, (uintptr_t)b,
                                              memory_order_release, memory_order_relaxed)) return;
  }
}

/* ---------------------------------------------------------------------------
   Fast path
--------------------------------------------------------------------------- */

/* The small span holding p, with p checked to be a block start below the
 * bump pointer (not that it is allocated). NULL: not in a small span (large,
 * huge, ...: free_other). Aborts on what is not ours at all. */
static inline pa_span_t* small_span_checked(void* p, const char* who) {
  uintptr_t a = (uintptr_t)p;
  if (unlikely(a >> PA_ADDR_BITS)) bad_pointer(p, who);
  uint8_t t = atomic_load_explicit(&pa_table[a >> PA_TABLE_SHIFT], memory_order_acquire);
  if (unlikely(t == 0)) bad_pointer(p, who);
  if (unlikely(t & PA_TABLE_HUGE)) return NULL;
  pa_chunk* c = (pa_chunk*)(a & ~(((uintptr_t)1 << t) - 1));
  /* the span descriptor is found by address arithmetic alone */
  pa_span_t* s = &c->spans[(a - (uintptr_t)c) >> PA_SLICE_SHIFT];
  if (unlikely(s->check != PA_SPAN_CHECK)) corrupt_chunk(p);
  if (unlikely(s->kind != PA_SPAN_SMALL)) {
    if (s->kind != PA_SPAN_TAIL) return NULL;
    s = &c->spans[c->slice_head[(a - (uintptr_t)c) >> PA_SLICE_SHIFT]];
    if (unlikely(s->check != PA_SPAN_CHECK)) corrupt_chunk(p);
    if (s->kind != PA_SPAN_SMALL) return NULL;
  }
  uint64_t off = (uint64_t)((char*)p - s->start);
  size_t i = (size_t)((off * s->bdiv) >> 40);
  if (unlikely(i * s->bsize != off || (char*)p >= atomic_load_explicit(&s->bump, memory_order_relaxed)))
    bad_pointer(p, who);
  return s;
}

/* The allocated bit of p is clear: either p is no block of s at all (an
 * invalid pointer) or a block that is not out (freed twice). */
static PA_COLD __attribute__((noreturn)) void free_bit_clear(pa_span_t* s, void* p) {
  uint64_t off = (uint64_t)((char*)p - s->start);
  size_t i = (size_t)((off * s->bdiv) >> 40);
  if (i * s->bsize != off || (char*)p >= atomic_load_explicit(&s->bump, memory_order_relaxed))
    bad_pointer(p, "free");
  double_free(p);
}

/* Local free of a block of s, the owner being the calling thread h. */
static inline void free_local(pa_heap_t* h, pa_span_t* s, pa_block_t* b) {
  _Atomic(uint64_t)* w = pa_bit_word(s, b);
  uint64_t v = atomic_load_explicit(w, memory_order_relaxed);
  unsigned bit = (unsigned)((uintptr_t)b >> 4) & 63;     /* bt / btr */
  if (unlikely(((v >> bit) & 1) == 0)) free_bit_clear(s, b);
  atomic_store_explicit(w, v ^ (1ULL << bit), memory_order_relaxed);   /* known set: clear */
  b->next = s->free;
  s->free = b;
  h->n_free++;
  /* one test: the span just emptied (0), or it is parked full (PA_USED_FULL) */
  if (unlikely((int32_t)--s->used <= 0)) pa_free_local_slow(h, s);
}

/* Remote frees are pending on a span of ours: take them in first, so a
 * block another thread already freed is caught here as a double free
 * (collect clears the bits). */
static PA_NOINLINE void free_local_collect(pa_heap_t* h, pa_span_t* s, pa_block_t* b) {
  pa_span_collect(s);
  free_local(h, s, b);
}

/* Another thread's block (span found by the fast path, which saw its tag
 * intact): a remote freer cannot read the owner's bits, so it checks that p
 * is a block start below the bump pointer, then pushes. */
static PA_NOINLINE void free_remote_checked(pa_span_t* s, void* p) {
  uint64_t off = (uint64_t)((char*)p - s->start);
  size_t i = (size_t)((off * s->bdiv) >> 40);
  if (unlikely(i * s->bsize != off || (char*)p >= atomic_load_explicit(&s->bump, memory_order_relaxed)))
    bad_pointer(p, "free");
  free_remote(s, (pa_block_t*)p);
}

/* Everything the fast path does not take: NULL, pointers that are not ours,
 * huge / large objects, tails of multi-slice spans, unaligned pointers. Full
 * validation first. */
static PA_NOINLINE void free_generic(void* p) {
  if (p == NULL) return;
  pa_span_t* s = small_span_checked(p, "free");
  if (unlikely(s == NULL)) { free_other(pa_chunk_of(p), p); return; }
  pa_heap_t* h = pa_heap;
  if (s->heap != h) { free_remote(s, (pa_block_t*)p); return; }
  if (atomic_load_explicit(&s->thread_free, memory_order_relaxed) > PA_TF_DELAYED) pa_span_collect(s);
  free_local(h, s, (pa_block_t*)p);
}

/* A block of a small span the calling thread owns: table, span tag, owner,
 * pending remote frees, allocated bit, push. Anything else leaves through
 * one of the out-of-line calls (all tail calls: no frame here). */
PA_HIDDEN void pa_free(void* p) {
  uintptr_t a = (uintptr_t)p;
  /* above the address space, or not 16-aligned (blocks start on granules;
     the bit of p's granule below would vouch for p - p % 16): one test */
  if (unlikely(a & (~(((uintptr_t)1 << PA_ADDR_BITS) - 1) | (PA_ALIGN_MIN - 1)))) { free_generic(p); return; }
  uint8_t t = atomic_load_explicit(&pa_table[a >> PA_TABLE_SHIFT], memory_order_acquire);
  /* t == 0 (not ours, NULL included) or a huge chunk: one compare */
  if (unlikely((uint8_t)(t - 1) >= PA_TABLE_HUGE - 1)) { free_generic(p); return; }
  uintptr_t c = a & ((uintptr_t)-1 << t);
  /* &c->spans[(a - c) >> PA_SLICE_SHIFT], the shift and the scaling folded
     into one shift and a mask */
  _Static_assert(sizeof(pa_span_t) == 128, "span descriptor: 128 bytes");
  pa_span_t* s = (pa_span_t*)((char*)((pa_chunk*)c)->spans + (((a - c) >> (PA_SLICE_SHIFT - 7)) & ~(uintptr_t)127));
  /* intact check word and kind SMALL in one compare; tails of multi-slice
     spans, large spans and damaged headers all go the generic way */
  if (unlikely(s->tag != PA_SPAN_TAG_SMALL)) { free_generic(p); return; }
  pa_heap_t* h = pa_heap;
  if (unlikely(s->heap != h)) { free_remote_checked(s, p); return; }
  if (unlikely(atomic_load_explicit(&s->thread_free, memory_order_relaxed) > PA_TF_DELAYED)) {
    free_local_collect(h, s, (pa_block_t*)p);
    return;
  }
  free_local(h, s, (pa_block_t*)p);
}

PA_API void free(void* p) __attribute__((alias("pa_free")));

/* Local free emptied the span, or hit a full one. */
PA_HIDDEN PA_NOINLINE void pa_free_local_slow(pa_heap_t* h, pa_span_t* s) {
  if (s->used & PA_USED_FULL) pa_span_unfull(h, s);
  if (s->used != 0 || h->cur[s->cls] == s) return;
  /* empty and not the class's current span: back to the chunk */
  pa_queue_remove(h, s);
  atomic_store_explicit(&s->thread_free, 0, memory_order_relaxed);
  pa_span_release(s);
}

/* Blocks other threads freed into our full spans. */
PA_HIDDEN void pa_heap_collect_delayed(pa_heap_t* h) {
  pa_block_t* b = atomic_exchange_explicit(&h->delayed, NULL, memory_order_acquire);
  while (b != NULL) {
    pa_block_t* next = b->next;
    pa_span_t* s = pa_span_of(pa_chunk_of(b), b);
    pa_bit_check_clear(s, b);
    b->next = s->free;
    s->free = b;
    --s->used;
    h->n_collected++;
    pa_free_local_slow(h, s);
    b = next;
  }
}

PA_HIDDEN size_t pa_usable_size(const void* cp, const char* who) {
  void* p = (void*)cp;
  pa_span_t* s = small_span_checked(p, who);
  if (s != NULL) {
    if (!pa_bit_get(s, p)) bad_pointer(p, who);
    return s->bsize;
  }
  pa_chunk* c = pa_chunk_of(p);
  if (unlikely(c->magic != PA_CHUNK_MAGIC)) corrupt_chunk(p);
  if (c->kind == PA_CHUNK_HUGE) {
    if (c->huge_obj != p) bad_pointer(p, who);
    return (size_t)((char*)c + ((size_t)1 << c->shift) - (char*)p);
  }
  s = pa_span_of(c, p);
  if (s->kind != PA_SPAN_LARGE || s->obj != p) bad_pointer(p, who);
  return (size_t)(s->end - (char*)p);
}

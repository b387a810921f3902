/* free.c — free: validate in O(1), push on the span's local list when the
 * calling thread owns it, else on the span's thread_free list with a CAS.
 *
 * Validation: the owner table must know the address, the chunk header's
 * magic must be intact, the span must be in use, and the pointer must be the
 * start of a block that was handed out, and its allocated bit (span
 * metadata, see pa_bit_set) must be set: a clear bit is a double free. The
 * block itself is not read, so a free costs no cache miss on cold memory.
 * Double frees involving another thread are caught when the owner takes the
 * remote frees in (pa_span_collect) — at the owner's next free into that
 * span or its next refill, whichever comes first. */
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
  size_t i = pa_block_index(s, b);
  _Atomic(uint64_t)* w = &s->bits[i >> 6];
  uint64_t v = atomic_load_explicit(w, memory_order_relaxed), m = 1ULL << (i & 63);
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

static inline pa_span_t* small_span_checked(void* p, const char* who, size_t* idx) {
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
  *idx = i;
  return s;
}

PA_HIDDEN void pa_free(void* p) {
  if (p == NULL) return;
  size_t i;
  pa_span_t* s = small_span_checked(p, "free", &i);
  if (unlikely(s == NULL)) { free_other(pa_chunk_of(p), p); return; }
  pa_block_t* b = (pa_block_t*)p;
  pa_heap_t* h = pa_heap;
  if (likely(s->heap == h)) {
    /* Remote frees pending: take them first, so a block another thread
       already freed is caught here as a double free (collect clears bits). */
    if (unlikely(atomic_load_explicit(&s->thread_free, memory_order_relaxed) > PA_TF_DELAYED)) pa_span_collect(s);
    _Atomic(uint64_t)* w = &s->bits[i >> 6];
    uint64_t v = atomic_load_explicit(w, memory_order_relaxed), m = 1ULL << (i & 63);
    if (unlikely((v & m) == 0)) double_free(p);
    atomic_store_explicit(w, v & ~m, memory_order_relaxed);
    b->next = s->free;
    s->free = b;
    h->n_free++;
    if (unlikely(--s->used == 0 || s->in_full)) pa_free_local_slow(h, s);
    return;
  }
  free_remote(s, b);
}

/* Local free emptied the span, or hit a full one. */
PA_HIDDEN PA_NOINLINE void pa_free_local_slow(pa_heap_t* h, pa_span_t* s) {
  if (s->in_full) pa_span_unfull(h, s);
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
    pa_free_local_slow(h, s);
    b = next;
  }
}

PA_HIDDEN size_t pa_usable_size(const void* cp, const char* who) {
  void* p = (void*)cp;
  size_t i;
  pa_span_t* s = small_span_checked(p, who, &i);
  if (s != NULL) {
    if ((atomic_load_explicit(&s->bits[i >> 6], memory_order_relaxed) & (1ULL << (i & 63))) == 0) bad_pointer(p, who);
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

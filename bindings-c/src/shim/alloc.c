/* alloc.c — malloc: the fast path (a pop from the current span of the size
 * class, inline in alloc_fast.h, which C++'s operator new shares) and, out
 * of line, everything else: thread heap set-up, collecting remote frees,
 * carving fresh blocks, new spans, large and huge objects, aligned
 * allocation. */
#include "internal.h"
#include "alloc_fast.h"

#include <errno.h>
#include <string.h>


/* ---------------------------------------------------------------------------
   Fast path
--------------------------------------------------------------------------- */

/* pa_span_pop (alloc_fast.h) of a block that failed the fast test: its mark, checked exactly
 * (abort), or its link, checked against the span (pa_link_next: the list's
 * end, another slice of a bigger span, else abort). */
PA_HIDDEN PA_NOINLINE void* pa_span_pop_checked(pa_span_t* s, pa_block_t* b) {
  if ((b->mark ^ pa_free_mark(b)) > 1) pa_free_list_corrupt(b);
  s->free = pa_link_next(s, b);
  b->mark = 0;
  s->used++;
  return b;
}

/* Sizes up to 1 KiB: alloc_fast.h. The exported name is the fast path
 * itself (no call in between). */
PA_HIDDEN PA_ENTRY_ALIGNED void* pa_malloc(size_t n) { return pa_malloc_inline(n); }

PA_EXPORT void* malloc(size_t n) __attribute__((alias("pa_malloc")));

/* ---------------------------------------------------------------------------
   Slow path: spans of a size class
--------------------------------------------------------------------------- */

/* Move remote frees (thread_free) to the local free list. Owner only.
 * Keeps the DELAYED tag as it is. Returns the number of blocks moved (the
 * list's count, types.h); a count of none or above the blocks out means a
 * block counted back twice (or a list damaged): abort.
 *
 * An empty local list (malloc's case: span_find) takes the remote list as
 * it is, unread. The blocks are checked as every listed block is, by the pop
 * that takes them (alloc_fast.h: the mark, remote or local, and the link
 * before it is followed), so none is handed out unchecked; reading them here
 * first was a chain of dependent loads, a cache miss each for blocks the
 * freeing thread wrote last (figures: README). A block the owner freed again
 * after the remote free is caught there too: the owner's free put it on the
 * local list, its malloc cleared the mark, and the pop that reaches it again
 * on the remote list aborts (double free).
 *
 * Behind a non-empty local list the remote list is walked to its tail, and
 * each block checked on the way: every block must carry the remote mark (one
 * with the local mark was freed by the owner too, after the remote free:
 * pa_check_remote_block aborts), and the walk must find the count. */
PA_HIDDEN size_t pa_span_collect(pa_span_t* s) {
  uintptr_t tf = atomic_load_explicit(&s->thread_free, memory_order_relaxed);
  if ((tf & ~PA_TF_DELAYED) == 0) return 0;
  /* acquire: pairs with the freer's release CAS, so the blocks' links and
     marks written before the push are visible here and to the pops after */
  while (!atomic_compare_exchange_weak_explicit(&s->thread_free, &tf, tf & PA_TF_DELAYED,
                                                memory_order_acquire, memory_order_relaxed)) {}
  pa_block_t* head = pa_tf_head(tf);
  size_t n = pa_tf_count(tf);
  /* more blocks back than out: a block on both this list and the local one */
  if (unlikely(n == 0 || n > (s->used & ~PA_USED_FULL))) pa_free_list_corrupt(head);
  if (s->free != NULL) {
    pa_block_t* tail = head;
    size_t walked = 1;
    pa_check_remote_block(tail);           /* before following its link */
    for (;;) {
      /* pa_link_next with the list's end tested once: the loop needs that
         test anyway, so a link is then only checked for leaving its slice */
      pa_block_t* next = pa_link_raw(tail);
      if (next == NULL) break;
      if (unlikely((((uintptr_t)next ^ (uintptr_t)tail) >> PA_SLICE_SHIFT) != 0)) next = pa_link_far(s, tail);
      tail = next;
      pa_check_remote_block(tail);
      if (unlikely(++walked > n)) pa_free_list_corrupt(tail);
    }
    if (unlikely(walked != n)) pa_free_list_corrupt(head);
    pa_link_set(tail, s->free);
  }
  s->free = head;
  s->used -= (uint32_t)n;
  s->heap->n_collected += n;       /* the owner's own heap: owner only */
  return n;
}

/* Carve up to ~4 KiB of never-used blocks, the next after the carved ones. */
static void span_extend(pa_span_t* s) {
  size_t bs = s->bsize, carved = s->carved;       /* the owner's own field */
  char* bump = s->start + carved * bs;
  size_t avail = pa_span_capacity(s) - carved;
  size_t n = 4096 / bs;
  if (n < 4) n = 4;
  if (n > avail) n = avail;
  if (n == 0) return;
  pa_block_t* first = (pa_block_t*)bump;
  char* p = bump;
  for (size_t i = 1; i < n; i++, p += bs) {
    pa_link_set((pa_block_t*)p, (pa_block_t*)(p + bs));
    ((pa_block_t*)p)->mark = pa_free_mark(p);
  }
  pa_link_set((pa_block_t*)p, s->free);
  ((pa_block_t*)p)->mark = pa_free_mark(p);
  s->free = first;
  __atomic_store_n(&s->carved, carved + n, __ATOMIC_RELAXED);    /* remote freers read it (block_in_span) */
}

static inline void list_unlink(pa_span_t** list, pa_span_t* s) {
  if (s->prev) s->prev->next = s->next; else *list = s->next;
  if (s->next) s->next->prev = s->prev;
  s->prev = s->next = NULL;
}

static inline void list_push(pa_span_t** list, pa_span_t* s) {
  s->prev = NULL;
  s->next = *list;
  if (*list) (*list)->prev = s;
  *list = s;
}

/* Span has no room: park it on the full list. From now on the first remote
 * free clears the DELAYED tag and reports its block through heap->delayed.
 * Returns 0 if parked, 1 if remote frees arrived meanwhile (span stays). */
static int span_to_full(pa_heap_t* h, pa_span_t* s) {
  uintptr_t expect = 0;
  /* seq_cst: either we tag an empty list, or we see the block a freer pushed */
  if (!atomic_compare_exchange_strong(&s->thread_free, &expect, PA_TF_DELAYED)) return 1;
  pa_queue_remove(h, s);
  list_push(&h->full, s);
  s->used |= PA_USED_FULL;
  if (h->cur[s->cls] == s) pa_set_cur(h, s->cls, &pa_span_empty);
  return 0;
}

/* Back from the full list to the class queue; clear the tag if still set. */
PA_HIDDEN void pa_span_unfull(pa_heap_t* h, pa_span_t* s) {
  if (!(s->used & PA_USED_FULL)) return;
  list_unlink(&h->full, s);
  pa_queue_push_back(h, s);
  s->used &= ~PA_USED_FULL;
  uintptr_t tf = atomic_load_explicit(&s->thread_free, memory_order_relaxed);
  while ((tf & PA_TF_DELAYED) &&
         !atomic_compare_exchange_weak(&s->thread_free, &tf, tf & ~PA_TF_DELAYED)) {}
}

static pa_span_t* span_new(pa_heap_t* h, size_t cls) {
  size_t bs = pa_class_size[cls];
  size_t bytes = (4 * bs + PA_SLICE - 1) & ~(PA_SLICE - 1);      /* one slice, or room for 4 blocks */
  pa_reclaim_orphans_if_freed();             /* memory freed into dead threads' heaps first */
  pa_span_t* s = pa_span_alloc(bytes >> PA_SLICE_SHIFT, 0, PA_SPAN_SMALL, h);
  if (s == NULL) return NULL;
  s->cls = (uint8_t)cls;
  s->bsize = (uint32_t)bs;
  s->shift = (uint8_t)__builtin_ctz((unsigned)bs);   /* see block_in_span (free.c) */
  uint64_t odd = bs >> s->shift, inv = odd;      /* odd * inv == 1 (mod 2^64): Newton, 3 -> 6 -> ... -> 96 bits */
  for (int i = 0; i < 5; i++) inv *= 2 - odd * inv;
  s->inv = inv;
  if (unlikely(s->scar)) {
    /* Large objects started in this slice once (scar bit k: k pages in).
       Their pointers may still be freed by mistake (a stale free); were a
       small block to start at such an address, that free would free a live
       block and malloc would hand it out twice. Blocks begin one block past
       the last such address that falls on the block grid: those pointers lie
       before the span's first block and free rejects them as invalid; the
       others fall inside a block, which free rejects as well. At most
       PA_LARGE_COLOURS - 1 pages and a block are left out, so the span keeps
       a block (one slice holds 4 blocks of up to 16 KiB, a bigger span 4 of
       its own blocks); the pages left out are never touched. */
    size_t skip = 0;
    for (size_t k = 0; k < PA_LARGE_COLOURS; k++)
      if ((s->scar >> k & 1) && k * PA_PAGE >= skip && k * PA_PAGE % bs == 0) skip = k * PA_PAGE + bs;
    s->start += skip;                        /* nothing carved yet: carved stays 0 */
  }
  pa_queue_push_front(h, s);
  s->owner = h;                              /* last: free's fast path may take it from here */
  return s;
}

static PA_NOINLINE pa_span_t* span_find(pa_heap_t* h, size_t cls) {
  if (atomic_load_explicit(&h->delayed, memory_order_relaxed) != NULL) pa_heap_collect_delayed(h);
  pa_span_t* s = h->queue[cls];
  while (s != NULL) {
    pa_span_t* next = s->next;
    if (s->free == NULL) pa_span_collect(s);
    if (s->free == NULL) span_extend(s);
    if (s->free != NULL) { pa_set_cur(h, cls, s); return s; }
    if (span_to_full(h, s) != 0) continue;      /* remote frees arrived: look again */
    s = next;
  }
  s = span_new(h, cls);
  if (s == NULL) return NULL;
  span_extend(s);
  pa_set_cur(h, cls, s);
  return s;
}

static void* malloc_large(size_t n, size_t align);

PA_HIDDEN PA_NOINLINE void* pa_malloc_generic(size_t n, pa_heap_t* h) {
  if (unlikely(h == &pa_heap_empty)) {
    h = pa_heap_init_thread();
    if (h == &pa_heap_empty) { errno = ENOMEM; return NULL; }
  }
  if (n > PA_SMALL_MAX) return malloc_large(n, PA_ALIGN_MIN);
  size_t cls = pa_size_class(n);
  pa_span_t* s = h->cur[cls];
  if (s->free == NULL) {
    s = span_find(h, cls);
    if (s == NULL) return NULL;
  }
  return pa_span_pop(s);
}

/* ---------------------------------------------------------------------------
   Large (span of slices, one object) and huge (own chunk)
--------------------------------------------------------------------------- */

/* Where a large object starts in its span: 0..PA_LARGE_COLOURS-1 pages in.
 * Spans start at slices (64 KiB) and the first large span of every chunk at
 * the same slice, so without it arrays a program streams side by side (three
 * 2 MB vectors, FFT work arrays) sat at equal addresses modulo 4 MiB: the
 * caches' linear-address structures (the L1's way predictor, the TLB) then
 * map their i-th lines to the same entries (a triad over three such vectors:
 * 10-45 % slower than at glibc's addresses). A slice a large object started
 * in before keeps that page (colour), so an object freed and taken again
 * lands where it was, as with glibc (registration caches keyed by address
 * keep hitting); a slice never used so gets the next colour in turn, so
 * objects taken one after another differ. Pages, like huge objects (chunk.c,
 * huge_offset): requests aligned up to a page keep their alignment. Every
 * span has room for the largest colour: at most one more slice of address
 * space, whose pages outside the object are never touched. A stale free of
 * the object after its slice went to small blocks stays caught (span_new,
 * scar). */
static _Atomic unsigned large_colour_next;

static size_t large_colour(pa_span_t* s) {
  if (s->colour == 0)
    s->colour = (uint8_t)(1 + atomic_fetch_add_explicit(&large_colour_next, 1, memory_order_relaxed) % PA_LARGE_COLOURS);
  return (size_t)(s->colour - 1) * PA_PAGE;
}

/* The largest alignment a large span is placed at; above it the object is
 * huge. Half a chunk where regular chunks take 4 KiB pages as touched: a
 * chunk of size N has a free run at N/2 (its header sits at 0), a grown
 * chunk (chunk.c, regular_chunk_size) one at every multiple of the
 * alignment. At a quarter, posix_memalign(2 MiB, 4 KiB) took a huge chunk
 * each: 64 MiB of address space, and the chunk's header page and the object
 * in two 2 MiB regions, two page-table pages (perf/native `aligned`: 1.009 x
 * mimalloc over 56 rounds); in regular chunks they share regions with each
 * other and with other spans. With PINARENA_PAGES=thp or hugetlb a regular
 * chunk's 2 MiB regions become huge pages, so such an object would hold one
 * (100 of them: 400 MiB); a huge chunk of its own touches 4 KiB pages. */
static inline size_t large_align_max(void) {
  int huge_pages = pa_opts.pages == PA_PAGES_THP || pa_opts.pages == PA_PAGES_HUGETLB;
  return huge_pages ? pa_opts.chunk_size / 4 : pa_opts.chunk_size / 2;
}

/* A large object (a span of slices), or a huge one (a chunk of its own). */
static PA_NOINLINE void* malloc_large(size_t n, size_t align) {
  if (n > (size_t)PTRDIFF_MAX) { errno = ENOMEM; return NULL; }
  pa_ensure_init();
  if (n <= pa_large_max() && align <= large_align_max()) {
    int coloured = align <= PA_PAGE;
    size_t room = coloured ? PA_LARGE_ROOM : 0;
    size_t ns = (room + n + PA_SLICE - 1) >> PA_SLICE_SHIFT;
    if (ns == 0) ns = 1;                 /* a zero-byte aligned request still owns its slice */
    pa_reclaim_orphans_if_freed();
    pa_span_t* s = pa_span_alloc(ns, align, PA_SPAN_LARGE, pa_heap);
    if (s == NULL) return NULL;
    if (coloured) s->obj = s->start + large_colour(s);   /* not handed out yet: nobody else reads it */
    atomic_fetch_add(&pa_gstats.large_allocs, 1);
    return s->obj;
  }
  pa_chunk_t* c = pa_huge_alloc(n, align, 0);
  return c ? c->huge_obj : NULL;
}


/* Power-of-two alignment > 16. Small: a size class whose block size is a
 * multiple of the alignment (spans start slice aligned, so every block is
 * aligned). Otherwise a large span or huge chunk aligned as asked. */
PA_HIDDEN void* pa_malloc_aligned(size_t n, size_t align) {
  if (align <= PA_ALIGN_MIN) return pa_malloc(n);
  if (n > (size_t)PTRDIFF_MAX) { errno = ENOMEM; return NULL; }
  if (n <= PA_SMALL_MAX && align <= PA_SLICE) {
    pa_ensure_init();
    size_t want = n < align ? align : n;
    for (size_t cls = pa_size_class(want); cls < PA_NCLASS; cls++) {
      if (pa_class_size[cls] % align != 0) continue;
      pa_heap_t* h = pa_heap;
      pa_span_t* s = h->cur[cls];
      if (s->free == NULL) {
        if (h == &pa_heap_empty) {
          h = pa_heap_init_thread();
          if (h == &pa_heap_empty) { errno = ENOMEM; return NULL; }
        }
        s = h->cur[cls];
        if (s->free == NULL) s = span_find(h, cls);
        if (s == NULL) return NULL;
      }
      return pa_span_pop(s);
    }
  }
  return malloc_large(n, align);
}

PA_HIDDEN void* pa_malloc_moving_up(size_t n) {
  return malloc_large(n, PA_ALIGN_MIN);     /* a span of slices up to pa_large_max(), else a huge chunk */
}

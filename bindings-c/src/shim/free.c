/* free.c — free: validate in O(1), push on the span's local list when the
 * calling thread owns it, else on the span's thread_free list with a CAS.
 *
 * Validation at free: the owner table must know the address; the first line
 * of the span descriptor (check word and kind in one load, block geometry,
 * count of carved blocks) must show an intact small span with p the start of
 * one of its carved blocks. So a pointer the allocator never gave out aborts
 * here.
 *
 * Double frees. Every block on a free list carries its free mark
 * (pa_free_mark, internal.h); malloc checks and clears it as it takes the
 * block. A local free writes the block (link and mark) but does not read it
 * — reading would wait for the block's cache line, which the store buffer
 * otherwise absorbs — so the owner catches a double free:
 *   - at free, when the block is the head of the span's free list (freed
 *     twice in a row);
 *   - at free, when the span's count of blocks out would drop below zero;
 *   - when the owner takes remote frees in behind blocks of its own: a
 *     block another thread freed and the owner freed again meanwhile carries
 *     the owner's mark, not the remote one (pa_remote_mark). A remote list
 *     taken in whole (onto an empty local list, unread) leaves the block to
 *     the last case below;
 *   - when the span empties and goes back to its chunk (every carved
 *     block must carry a mark: a duplicate on the list leaves another block
 *     out, unmarked, though the count says none is);
 *   - at the latest when malloc reaches the second copy of the block, whose
 *     mark the first copy's malloc cleared — before the block could be
 *     handed out twice.
 * A remote freer reads the mark (the line moves to its core for the link
 * write anyway) and aborts at once on a marked block: the owner's lists are
 * not its to walk, and the mark is only ever written into free blocks.
 */
#include "internal.h"

/* Spans of a size class a heap keeps, empty or not, before an emptied one
 * goes back to its chunk (pa_free_local_slow); only one-slice spans (64 KiB,
 * blocks up to 16 KiB) are kept: bigger blocks come in spans of 4 and more
 * slices. pinarena_trim() gives the calling thread's empty ones back. */
#define PA_KEEP_EMPTY 8

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
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

/* In a forked child, memory another thread of the parent owned, or freed
 * last (heap.c, "fork"): its page may have been copied at another moment
 * than the program's pointer to it, so what free would find wrong there is
 * not trusted: the free is ignored and the memory stays out of use in the
 * child. The span's (or huge chunk's) heap field names that thread's heap. */
static PA_COLD int fork_ignores_free(const pa_span_t* s) {
  return pa_forked_child && s->heap != NULL && s->heap->left_in_parent;
}

static PA_COLD int fork_ignores_huge(const pa_chunk_t* c) {
  return pa_forked_child && c->huge_heap != NULL && c->huge_heap->left_in_parent;
}

/* The fast path's ways out to an abort. noipa: the compiler must not learn
 * that they never return, so they stay tail jumps and free needs no frame. */
static __attribute__((noinline, noipa, cold)) void free_bad(void* p) {
  if (pa_forked_child) {                  /* a block carved after its span's page was copied */
    pa_span_t* s = pa_span_of(pa_chunk_of(p), p);
    if (fork_ignores_free(s)) return;
  }
  bad_pointer(p, "free");
}
static __attribute__((noinline, noipa, cold)) void free_twice_in_a_row(void* p) { double_free(p); }

PA_HIDDEN PA_COLD __attribute__((noreturn)) void pa_free_list_corrupt(const void* b) {
  pa_fatal_ptr("malloc(): double free (or a write after free) detected for pointer", b);
}

PA_HIDDEN PA_COLD __attribute__((noreturn)) void pa_free_link_corrupt(const void* b) {
  pa_fatal_ptr("malloc(): corrupted free list (an overflow or a write after free) at the free block", b);
}

/* pa_link_next's slow half: the link leaves b's slice. NULL (the end of the
 * list) or a block address inside the span; anything else aborts. */
PA_HIDDEN PA_COLD pa_block_t* pa_link_far(const pa_span_t* s, const pa_block_t* b) {
  pa_block_t* next = pa_link_raw(b);
  if (next == NULL || (uintptr_t)next - (uintptr_t)s->start < (uintptr_t)(s->end - s->start)) return next;
  pa_free_link_corrupt(b);
}

/* A link on a heap's delayed list (blocks of any of its spans): NULL or an
 * address in one of our chunks, which its mark then checks. */
static pa_block_t* delayed_next(const pa_block_t* b) {
  pa_block_t* next = pa_link_raw(b);
  if (next != NULL && (((uintptr_t)next & (PA_ALIGN_MIN - 1)) || pa_chunk_of(next) == NULL)) pa_free_link_corrupt(b);
  return next;
}

/* Everything but a block of a small span. */
static PA_COLD void free_other(pa_chunk_t* c, void* p) {
  if (unlikely(c->magic != PA_CHUNK_MAGIC)) corrupt_chunk(p);
  if (c->kind == PA_CHUNK_HUGE) {
    void* obj = atomic_load_explicit((_Atomic(void*)*)&c->huge_obj, memory_order_acquire);
    if (obj != p && fork_ignores_huge(c)) return;
    if (obj == NULL) {
      if ((uintptr_t)p >= (uintptr_t)c + PA_HUGE_HDR) double_free(p);
      bad_pointer(p, "free");
    }
    if (obj != p) bad_pointer(p, "free");
    if (pa_huge_release(c)) pa_reclaim_free_dirty();
    return;
  }
  pa_span_t* s = pa_span_of(c, p);
  if (s->kind == PA_SPAN_LARGE && s->obj == p) {
    size_t at = (size_t)((char*)p - s->start);
    if (at < PA_SLICE) s->scar |= (uint8_t)(1u << (at / PA_PAGE));   /* see span_new */
    s->heap = pa_heap;                       /* the last to touch it: see fork_ignores_free */
    s->obj = NULL;
    if (pa_span_release(s)) pa_reclaim_free_dirty();
    return;
  }
  if (fork_ignores_free(s)) return;
  size_t at = (uintptr_t)p & (PA_SLICE - 1);      /* a large object started here once: freed twice */
  if (s->kind == PA_SPAN_FREE && at % PA_PAGE == 0 && at / PA_PAGE < PA_LARGE_COLOURS && (s->scar >> (at / PA_PAGE) & 1)) double_free(p);
  bad_pointer(p, "free");
}

/* ---------------------------------------------------------------------------
   The free mark's secret
--------------------------------------------------------------------------- */

PA_HIDDEN pa_secrets_t pa_secrets;

static uint64_t mix(uint64_t r) { r ^= r >> 31; r *= 0xbf58476d1ce4e5b9ULL; r ^= r >> 29; return r; }

/* Random per process (see pa_free_mark and the free-list links, internal.h).
 * getrandom does not allocate; without entropy yet (early boot) the kernel's
 * per-exec random bytes, spread by a multiply-xorshift, stand in. Set once
 * at init, before any block exists, and inherited by a forked child with the
 * heap. Bit 63 set: a mark is never a valid pointer, and a cleared mark (0)
 * never passes malloc's fused test (the key's bit 63 survives the xor with
 * a user-space link). */
PA_HIDDEN void pa_free_mark_init(void) {
  uint64_t r = 0;
  if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
    const unsigned char* at = (const unsigned char*)getauxval(AT_RANDOM);
    uint64_t a = 0, b = 0;
    if (at != NULL) { memcpy(&a, at, 8); memcpy(&b, at + 8, 8); }
    r = mix(a ^ (b * 0x9e3779b97f4a7c15ULL) ^ (uintptr_t)&r);
  }
  pa_secrets.key = (uintptr_t)(r | (1ULL << 63));
}

/* ---------------------------------------------------------------------------
   Validation helpers
--------------------------------------------------------------------------- */

/* The index of the block starting at p when p is the start of a block of s
 * (at or above s->start), else a number above every block count: one
 * multiply, one rotate, no divide. With bsize = odd << shift and inv the
 * inverse of odd modulo 2^64, off = p - start (modulo 2^64) times inv is
 * (off / bsize) << shift when bsize divides off — the rotate gives back
 * off / bsize — and otherwise the rotate leaves a number above
 * (2^64 - 1) / bsize: either odd does not divide off (then off * inv, a
 * multiple of 2^shift or not, lies above (2^64 - 1) / odd), or odd does but
 * 2^shift does not (the rotate moves nonzero low bits to the top). A p below
 * start (off = 2^64 minus less than a slice) is never a block either. */
static inline uint64_t block_index(const pa_span_t* s, const void* p) {
  uint64_t q = ((uint64_t)(uintptr_t)p - (uint64_t)(uintptr_t)s->start) * s->inv;
  return q >> s->shift | q << (-s->shift & 63);
}

/* p is the start of a block of s carved at least once: one compare. Any
 * thread. */
static inline int block_in_span(const pa_span_t* s, const void* p) {
  return block_index(s, p) < __atomic_load_n(&s->carved, __ATOMIC_RELAXED);
}

/* The same in the thread that owns s, the only writer of `carved`. */
static inline int block_in_own_span(const pa_span_t* s, const void* p) {
  return block_index(s, p) < s->carved;
}


/* Is b on one of the free lists of its span s? Owner only. Walks the local
 * list, and snapshots of the span's thread_free list and of the heap's
 * delayed list: remote freers only ever prepend to those two, and the nodes
 * already on them do not change until the owner takes them in. */
static PA_COLD int owner_finds_free(pa_heap_t* h, const pa_span_t* s, const pa_block_t* b) {
  size_t most = pa_span_capacity(s), n = 0;
  for (const pa_block_t* f = s->free; f != NULL && n <= most; f = pa_link_next(s, f), n++)
    if (f == b) return 1;
  n = 0;
  uintptr_t tf = atomic_load_explicit(&((pa_span_t*)s)->thread_free, memory_order_acquire);
  for (const pa_block_t* f = pa_tf_head(tf); f != NULL && n <= most; f = pa_link_next(s, f), n++)
    if (f == b) return 1;
  for (const pa_block_t* f = atomic_load_explicit(&h->delayed, memory_order_acquire); f != NULL; f = delayed_next(f))
    if (f == b) return 1;
  return 0;
}

/* A valid block start of s (block_in_span): is it free right now? */
static int block_is_free(pa_span_t* s, const pa_block_t* b) {
  if (!pa_marked(b)) return 0;
  pa_heap_t* h = pa_heap;
  return s->heap != h || owner_finds_free(h, s, b);
}

/* ---------------------------------------------------------------------------
   Remote free
--------------------------------------------------------------------------- */


static PA_NOINLINE void free_remote(pa_span_t* s, pa_block_t* b) {
  if (unlikely(pa_forked_child) && fork_ignores_free(s)) return;
  if (unlikely(pa_marked(b))) double_free(b);         /* the owner's lists are not ours to walk */
  b->mark = pa_remote_mark(b);
  /* Nothing is counted here: the owner counts what it takes in
     (n_collected). A count here would land, for every thread without a
     heap (one that only frees), on pa_heap_empty, one line all such
     threads share: it bounced between them on every free (xmalloc-test,
     whose releasers never malloc: the CAS below waited on that line). */
  if (unlikely(pa_heap == &pa_heap_empty)) pa_adopt_hint = s->heap;   /* no heap yet: see heap.c */
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
      do { pa_link_set(b, d); }
      while (!atomic_compare_exchange_weak_explicit(&h->delayed, &d, b, memory_order_release, memory_order_relaxed));
      break;
    }
    pa_link_set(b, pa_tf_head(tf));
    /* b first, the count one up (types.h); release: b's link, b->mark (and
       the caller's writes) happen before the owner's acquire in
       pa_span_collect */
    if (atomic_compare_exchange_weak_explicit(&s->thread_free, &tf, (uintptr_t)b | ((tf & ~PA_TF_LIST) + PA_TF_ONE),
                                              memory_order_release, memory_order_relaxed)) break;
  }
  /* No thread owns the span's heap: say so, after the push (release: the
     reclaiming thread's acquire exchange sees the push, see heap.c) */
  if (unlikely(s->orphan) && !atomic_load_explicit(&pa_orphan_frees, memory_order_relaxed))
    atomic_store_explicit(&pa_orphan_frees, 1, memory_order_release);
}

/* ---------------------------------------------------------------------------
   Local free
--------------------------------------------------------------------------- */

/* Local free of a valid block start of s, the owner being the calling
 * thread h. The block is written, not read (see the top of the file). */
static inline void free_local(pa_heap_t* h, pa_span_t* s, pa_block_t* b) {
  pa_block_t* head = s->free;
  if (unlikely(b == head)) { free_twice_in_a_row(b); return; }

  pa_link_set(b, head);
  b->mark = pa_free_mark(b);
  s->free = b;
  h->n_free++;
  /* --used, and one test of the count before, as a signed number, <= 1: the
     span just emptied (1), is parked full (PA_USED_FULL set: negative), or
     more blocks came back than went out (0 or below: a double free) */
#if defined(__x86_64__)
  /* one subtract on memory and a branch on its flags: the compiler would
     load, subtract, store and test (5 instructions, not 2) */
  __asm__ goto("subl $1, %0\n\tjle %l[slow]" : "+m"(s->used) : : "cc" : slow);
  return;
slow:
  pa_free_local_slow(h, s, b);
#else
  uint32_t used = s->used;
  s->used = used - 1;
  if (unlikely((int32_t)used <= 1)) pa_free_local_slow(h, s, b);
#endif
}

/* A block taken in from a remote list without the remote mark
 * (pa_check_remote_block, internal.h): the local mark means the owner freed
 * it again after the remote free; neither mark, a write after free (or a
 * block handed out while still listed). */
PA_HIDDEN PA_COLD void pa_remote_block_unmarked(const pa_block_t* b) {
  if (b->mark == pa_free_mark(b)) double_free(b);
  pa_free_list_corrupt(b);
}

/* ---------------------------------------------------------------------------
   Fast path
--------------------------------------------------------------------------- */

/* The small span holding p, with p checked to be the start of a carved
 * block (not that it is out). NULL: not in a small span (large,
 * huge, ...: free_other). Aborts on what is not ours at all. */
static inline pa_span_t* small_span_checked(void* p, const char* who) {
  uintptr_t a = (uintptr_t)p;
  if (unlikely(a >> PA_ADDR_BITS)) bad_pointer(p, who);
  uint8_t t = atomic_load_explicit(&pa_table[a >> PA_TABLE_SHIFT], memory_order_acquire);
  if (unlikely(t == 0)) bad_pointer(p, who);
  if (unlikely(t & PA_TABLE_HUGE)) return NULL;
  pa_chunk_t* c = (pa_chunk_t*)(a & ~(((uintptr_t)1 << t) - 1));
  /* the span descriptor is found by address arithmetic alone */
  pa_span_t* s = &c->spans[(a - (uintptr_t)c) >> PA_SLICE_SHIFT];
  if (unlikely(s->check != PA_SPAN_CHECK)) corrupt_chunk(p);
  if (unlikely(s->kind != PA_SPAN_SMALL)) {
    if (s->kind != PA_SPAN_TAIL) return NULL;
    s = &c->spans[c->slice_head[(a - (uintptr_t)c) >> PA_SLICE_SHIFT]];
    if (unlikely(s->check != PA_SPAN_CHECK)) corrupt_chunk(p);
    if (s->kind != PA_SPAN_SMALL) return NULL;
  }
  if (unlikely(!block_in_span(s, p))) bad_pointer(p, who);
  return s;
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
  free_local(h, s, (pa_block_t*)p);
}


/* free's way for a pointer whose slice descriptor does not name the calling
 * thread's heap as its owner: a block of another thread's small span (a
 * remote free), or anything else (free_generic: large, huge, tails of
 * multi-slice spans, damaged headers, not ours). */
static PA_NOINLINE void free_not_local(pa_span_t* s, void* p) {
  /* intact check word and kind SMALL in one compare */
  if (unlikely(s->tag != PA_SPAN_TAG_SMALL)) { free_generic(p); return; }
  if (unlikely(!block_in_span(s, p))) { free_bad(p); return; }
  /* a small span in use names its heap in `owner`, so this is another
     thread's (were it the calling thread's own, with `owner` damaged, the
     remote way would still be right: its owner takes the block in later) */
  free_remote(s, (pa_block_t*)p);
}

/* A block of a small span the calling thread owns: span table, owner,
 * block geometry, list head, push — all on the first line of the span
 * descriptor and the block's own line. Anything else leaves through one of
 * the out-of-line calls (all tail calls: no frame here). */
PA_HIDDEN uintptr_t pa_free_fast_mask = ~(((uintptr_t)1 << PA_ADDR_BITS) - 1) | (PA_ALIGN_MIN - 1);

/* The descriptor of the slice holding p, by the span table alone (any
 * slice: the first of a small span, a tail, a large span, a header), or
 * NULL: p above the address space or not 16-aligned, no span table, or not
 * in a regular chunk of ours (NULL included). */
static inline pa_span_t* slice_span(const void* p) {
  uintptr_t a = (uintptr_t)p;
  /* above the address space, or not 16-aligned (blocks start on 16-byte
     boundaries), or no span table (all ones): one test */
  uintptr_t mask = pa_free_fast_mask;
  /* a register: the compiler would and with the memory operand, a µop more
     than a test that fuses with its branch (about 1.5 % on churn, README) */
  __asm__("" : "+r"(mask));
  if (unlikely(a & mask)) return NULL;
  uintptr_t first = atomic_load_explicit(&pa_span_table[a >> PA_TABLE_SHIFT], memory_order_acquire);
  /* 0: not ours (NULL included), or a huge chunk */
  if (unlikely(first == 0)) return NULL;
  _Static_assert(sizeof(pa_span_t) == 128, "span descriptor: 128 bytes");
  pa_span_t* s = (pa_span_t*)(first + ((a >> (PA_SLICE_SHIFT - 7)) & ((((uintptr_t)1 << (PA_TABLE_SHIFT - PA_SLICE_SHIFT)) - 1) << 7)));
  if (s == NULL) __builtin_unreachable();   /* a descriptor's address: the callers' NULL test is the two above */
  return s;
}

/* The bytes p may use in place when p is a carved block of a small span of
 * the calling thread's heap that carries no free mark (its block size), or
 * the object of a large span (up to the span's end); else 0. */
static inline size_t realloc_room(const void* p) {
  pa_span_t* s = slice_span(p);
  if (s == NULL) return 0;
  if (s->owner == pa_heap) return block_in_own_span(s, p) && !pa_marked((const pa_block_t*)p) ? s->bsize : 0;
  if (s->tag == PA_SPAN_TAG_LARGE && s->obj == p) return (size_t)(s->end - (const char*)p);
  return 0;
}

/* realloc's fast way (p not NULL, n not 0): p stays where it is when it
 * still fits its room and uses at least half of it (a string grown in small
 * steps, most of the time), checked as free checks it, without the full
 * validation; anything else is pa_realloc_moving's (glibc.c), which
 * validates p the full way (a free block, another thread's block, a huge
 * object, not ours) and grows, moves or shrinks it. A tail call: no frame. */
PA_HIDDEN void* pa_realloc_fast(void* p, size_t n) {
  size_t room = realloc_room(p);
  if (n <= room && n >= room / 2) return p;         /* n >= 1: room 0 never passes */
  return pa_realloc_moving(p, n);
}

PA_HIDDEN PA_ENTRY_ALIGNED void pa_free(void* p) {
  pa_span_t* s = slice_span(p);
  if (unlikely(s == NULL)) { free_generic(p); return; }
  /* one compare: a small span (its owner is set, in the first slice's
     descriptor only), whose header is intact there (a damaged header, like
     the descriptor of a tail slice, a large span or a free slice, names no
     heap: free_not_local checks its tag), and the calling thread's (a thread
     without a heap has pa_heap_empty, which owns nothing) */
  pa_heap_t* h = pa_heap;
  if (unlikely(s->owner != h)) { free_not_local(s, p); return; }
  if (unlikely(!block_in_own_span(s, p))) { free_bad(p); return; }
  free_local(h, s, (pa_block_t*)p);
}

PA_EXPORT void free(void* p) __attribute__((alias("pa_free")));

/* C++'s operator delete, every form the Itanium ABI names (new is cxx.c's):
 * free itself. The extra arguments (size, alignment, nothrow tag) change
 * nothing: free finds an object's size and alignment from its address, and
 * validates the pointer as it validates any (an invalid one aborts with
 * free's message). */
#define DELETE_IS_FREE(name) PA_EXPORT void name(void*) __attribute__((alias("pa_free")))
DELETE_IS_FREE(_ZdlPv);                              /* delete p */
DELETE_IS_FREE(_ZdaPv);                              /* delete[] p */
DELETE_IS_FREE(_ZdlPvm);                             /* sized (C++14) */
DELETE_IS_FREE(_ZdaPvm);
DELETE_IS_FREE(_ZdlPvRKSt9nothrow_t);                /* nothrow */
DELETE_IS_FREE(_ZdaPvRKSt9nothrow_t);
DELETE_IS_FREE(_ZdlPvSt11align_val_t);               /* aligned (C++17) */
DELETE_IS_FREE(_ZdaPvSt11align_val_t);
DELETE_IS_FREE(_ZdlPvmSt11align_val_t);              /* sized, aligned */
DELETE_IS_FREE(_ZdaPvmSt11align_val_t);
DELETE_IS_FREE(_ZdlPvSt11align_val_tRKSt9nothrow_t); /* aligned, nothrow */
DELETE_IS_FREE(_ZdaPvSt11align_val_tRKSt9nothrow_t);

/* A block freed twice whose second copy malloc has not reached yet makes
 * the span's local list a cycle (its link points back to a block before
 * it). The block where the cycle closes, the one freed twice, or NULL: the
 * list ends. Cold: error paths only. */
static PA_COLD pa_block_t* local_list_duplicate(const pa_span_t* s) {
  size_t carved = pa_span_carved(s), n = 0;
  for (pa_block_t* f = s->free; f != NULL; f = pa_link_next(s, f)) {
    if (++n <= carved) continue;
    pa_block_t *slow = s->free, *fast = s->free;            /* Floyd: meet in the cycle */
    do {
      slow = pa_link_next(s, slow);
      fast = pa_link_next(s, fast);
      if (fast != NULL) fast = pa_link_next(s, fast);
    } while (fast != NULL && slow != fast);
    if (fast == NULL) return NULL;    /* more blocks than carved but no cycle: the list ends */
    for (slow = s->free; slow != fast; slow = pa_link_next(s, slow), fast = pa_link_next(s, fast)) {}
    return slow;
  }
  return NULL;
}

/* Abort naming the block freed twice; without a cycle, `fallback`. */
static PA_COLD __attribute__((noreturn)) void local_list_double_free(const pa_span_t* s, const void* fallback) {
  pa_block_t* twice = local_list_duplicate(s);
  double_free(twice != NULL ? twice : fallback);
}

/* A local free (of b) emptied the span, hit a full one, or took the count
 * of blocks out below zero. 1: the span went back to its chunk and a
 * reclaim pass is due (pa_span_release). */
static int free_local_settle(pa_heap_t* h, pa_span_t* s, const void* b) {
  if ((s->used & ~PA_USED_FULL) > PA_SPAN_MAX_BLOCKS) local_list_double_free(s, b);   /* below zero */
  if (s->used & PA_USED_FULL) pa_span_unfull(h, s);
  /* Empty. A one-slice span stays while it is the class's current one or
     the class has few: a program that fills and empties a few spans over
     and over keeps them, carved, instead of returning and re-carving them.
     The rest go back to the chunk, for any class or large object; so does
     an emptied span of several slices (blocks above 16 KiB), current or not:
     kept, every thread would hold one per class it ever used, pages and all
     (CPython's test_asyncio.test_ssl: 26 threads, 8 classes of 18-229 KiB,
     75 MiB of empty spans at the peak). */
  if (s->used != 0) return 0;
  if (s->nslices == 1 && h->cur[s->cls] == s) return 0;
  if (s->nslices == 1 && h->nqueued[s->cls] <= PA_KEEP_EMPTY) { h->kept_empty++; return 0; }   /* pa_span_alloc */
  pa_span_check_empty(s);
  pa_queue_remove(h, s);
  if (h->cur[s->cls] == s) pa_set_cur(h, s->cls, &pa_span_empty);
  atomic_store_explicit(&s->thread_free, 0, memory_order_relaxed);
  return pa_span_release(s);
}

/* free's way out for the above: the pass runs here, with no lock of ours
 * held (free's callers hold none). */
PA_HIDDEN PA_NOINLINE void pa_free_local_slow(pa_heap_t* h, pa_span_t* s, const void* b) {
  if (free_local_settle(h, s, b)) pa_reclaim_free_dirty();
}

/* An empty span's block without a free mark: out though the count says
 * none is (another block came back twice: the list holds it twice), or
 * free and written since (its mark overwritten). */
static PA_COLD __attribute__((noreturn)) void empty_span_block_unmarked(const pa_span_t* s, const pa_block_t* b) {
  pa_block_t* twice = local_list_duplicate(s);
  if (twice != NULL) double_free(twice);
  pa_free_list_corrupt(b);
}

/* A span with no block out: each carved block must be free, so carry its
 * mark (the local one, or the remote one of a list taken in whole). Called
 * before an empty span goes back to its chunk, so no double free outlives
 * its span: a block freed twice makes the count reach zero while another
 * block is still out, and that one has no mark (malloc cleared it). The
 * marks are read in address order rather than by walking the list (a
 * duplicate there makes it a cycle): the loads do not wait for each other,
 * where a walk waits for every link in turn, a cache miss each in a span
 * freed long ago (phased, README). The walk stays for the error: it names
 * the block freed twice. */
PA_HIDDEN void pa_span_check_empty(pa_span_t* s) {
  /* remote frees pending with none out: a block counted back twice; taking
     them in names it (pa_span_collect) */
  if (atomic_load_explicit(&s->thread_free, memory_order_acquire) > PA_TF_DELAYED) pa_span_collect(s);
  size_t carved = pa_span_carved(s), bs = s->bsize;
  const char* b = s->start;
  for (size_t i = 0; i < carved; i++, b += bs)
    if (unlikely(!pa_marked((const pa_block_t*)b))) empty_span_block_unmarked(s, (const pa_block_t*)b);
}

/* Blocks other threads freed into our full spans. A pass due from the
 * releases is left to the next free: this runs under pa_heap_lock too
 * (heap.c, the orphans' collect). */
PA_HIDDEN void pa_heap_collect_delayed(pa_heap_t* h) {
  pa_block_t* b = atomic_exchange_explicit(&h->delayed, NULL, memory_order_acquire);
  while (b != NULL) {
    pa_check_remote_block(b);          /* before following its link */
    pa_block_t* next = delayed_next(b);
    pa_span_t* s = pa_span_of(pa_chunk_of(b), b);
    pa_link_set(b, s->free);           /* keeps its mark: still free */
    s->free = b;
    --s->used;
    h->n_collected++;
    free_local_settle(h, s, b);
    b = next;
  }
}

PA_HIDDEN size_t pa_usable_size(const void* cp, const char* who) {
  void* p = (void*)cp;
  pa_span_t* s = small_span_checked(p, who);
  if (s != NULL) {
    if (block_is_free(s, (const pa_block_t*)p)) bad_pointer(p, who);
    return s->bsize;
  }
  pa_chunk_t* c = pa_chunk_of(p);
  if (unlikely(c->magic != PA_CHUNK_MAGIC)) corrupt_chunk(p);
  if (c->kind == PA_CHUNK_HUGE) {
    if (c->huge_obj != p) bad_pointer(p, who);
    return pa_huge_extent(c) - (size_t)((char*)p - (char*)c);   /* the request, page-rounded */
  }
  s = pa_span_of(c, p);
  if (s->kind != PA_SPAN_LARGE || s->obj != p) bad_pointer(p, who);
  return (size_t)(s->end - (char*)p);
}

/* internal.h — the malloc shim's prototypes and its inline fast-path
 * helpers; the structures, their layout and the Java <-> C glossary are in
 * types.h. One idea per file:
 *   chunk.c     size-aligned chunks, the flat owner table, slices -> spans, huge chunks
 *   heap.c      per-thread heaps: TLS, thread exit (hand back), adoption, fork
 *   alloc.c     malloc fast path (inline in alloc_fast.h) + generic slow path, aligned, realloc
 *   free.c      free fast path, validation (invalid / double free), cross-thread free; delete's names
 *   cxx.c       C++'s operator new, every form (malloc's fast path; failures to the C++ runtime's own)
 *   register.c  registration of chunks (verbs via dlopen, io_uring, mlock, none)
 *   remote.c    remote-scope chunks: pinarena_alloc_remote and the keys of exactly one buffer
 *   reclaim.c   memory changes kind: free memory of one kind gives unregistered pages back for another
 *   window.c    the memory-window pool and the QP of the shim's own that binds windows
 *   program.c   what the program does to shim memory: its madvise, mprotect, mlock, unmaps (program.h)
 *   api.c       pinarena.h: lookup, PD adoption, release callback, trim, stats
 *   cache.c     pinarena_cache_*: a registration cache for memory the shim does not own
 *   stack_events.c  the RDMA stacks hear of unmaps from the shim (UCX's event handler)
 *   stack_ofi.c     libfabric's MR cache takes the shim as its memory monitor (fi_fabric)
 *   stack_watch.c   with PINARENA_UFFD=1, what the stacks register is watched (ibv_reg_mr)
 *   classes.c   the size-class tables (classes.h)
 *   options.c   the PINARENA_* environment, read without allocating
 *   init.c      process start-up, constructor, destructor
 *   message.c   messages and fatal aborts, written with write(2)
 *   stats.c     the counters, as a line and as pinarena_stats_t
 *   glibc.c     the exported malloc family and glibc-only entry points
 */
#ifndef PA_SHIM_INTERNAL_H
#define PA_SHIM_INTERNAL_H

#include <pthread.h>
#include <time.h>
#include "types.h"

#define PA_COLD    __attribute__((noinline, cold))
#define PA_NOINLINE __attribute__((noinline))
/* The entry points a program calls millions of times (malloc, free, C++'s
 * new and new[]) start on a cache line: their fast paths, 50-90 bytes, then
 * take the same lines and decode windows whatever code around them changes;
 * at the compiler's 16-byte alignment an unrelated change moved malloc within
 * its line, and with it a malloc-bound program's time (figures: README,
 * "Where the entry points sit"). */
#define PA_ENTRY_ALIGNED __attribute__((aligned(64)))

/* ------------------------------------------------------------------------- */
/* globals */

extern PA_HIDDEN pa_opts_t pa_opts;
extern PA_HIDDEN _Atomic(uint8_t)* pa_table;
extern PA_HIDDEN _Atomic(uintptr_t)* pa_span_table;
/* Pointers with a bit of this set skip free's span-table way: above the
 * address space, unaligned, or every pointer when the span table is not
 * mapped (init.c). */
extern PA_HIDDEN uintptr_t pa_free_fast_mask;
extern PA_HIDDEN int pa_inited;
extern PA_HIDDEN pa_heap_t pa_heap_empty;
extern PA_HIDDEN pa_span_t pa_span_empty;
extern PA_HIDDEN __thread pa_heap_t* pa_heap __attribute__((tls_model("initial-exec")));
/* A thread without a heap yet: the heap that owns the block it freed last (heap.c) */
extern PA_HIDDEN __thread pa_heap_t* pa_adopt_hint __attribute__((tls_model("initial-exec")));
extern PA_HIDDEN pthread_mutex_t pa_chunk_lock;
extern PA_HIDDEN pthread_mutex_t pa_heap_lock;
extern PA_HIDDEN pthread_mutex_t pa_reg_lock;
extern PA_HIDDEN pa_chunk_t* pa_chunks;        /* regular chunks */
extern PA_HIDDEN size_t pa_slices_used;        /* slices in spans, every regular chunk (pa_chunk_lock) */
extern PA_HIDDEN size_t pa_slices_free_dirty;  /* free slices that may hold resident pages (pa_chunk_lock) */
/* A free huge chunk and what choosing it reads (huge_free.c). dirty: the
 * chunk's huge_dirty, kept equal to it while the chunk is free. */
typedef struct { pa_chunk_t* chunk; size_t cap; size_t dirty; } pa_huge_free_t;
extern PA_HIDDEN pa_huge_free_t* pa_huge_free; /* the free huge chunks, oldest first (pa_chunk_lock) */
extern PA_HIDDEN size_t pa_huge_free_n;
PA_HIDDEN int  pa_huge_free_reserve(void);      /* room for one more huge chunk's entry; -1: ENOMEM */
PA_HIDDEN void pa_huge_free_unreserve(void);    /* a huge chunk went, or was never made */
PA_HIDDEN void pa_huge_free_push(pa_chunk_t* c);
PA_HIDDEN pa_chunk_t* pa_huge_free_take(size_t need);   /* best fit, taken off; NULL: none fits */
extern PA_HIDDEN pa_chunk_t* pa_huge_all;      /* every huge chunk (next) */
extern PA_HIDDEN pa_heap_t* pa_heaps;        /* every heap ever made */
extern PA_HIDDEN int pa_forked_child;        /* this process is a forked child (heap.c, "fork") */

extern PA_HIDDEN pa_gstats_t pa_gstats;

static inline pa_chunk_t* pa_chunk_of(const void* p) {
  uintptr_t a = (uintptr_t)p;
  if (unlikely(a >> PA_ADDR_BITS)) return NULL;
  uint8_t t = atomic_load_explicit(&pa_table[a >> PA_TABLE_SHIFT], memory_order_acquire);
  if (unlikely(t == 0)) return NULL;
  return (pa_chunk_t*)(a & ~(((uintptr_t)1 << (t & PA_TABLE_SHIFT_MASK)) - 1));
}

/* The descriptor of the span holding p: the slice's own entry when p is in
 * the first slice of its span (one load), else through slice_head. */
static inline pa_span_t* pa_span_of(pa_chunk_t* c, const void* p) {
  size_t sl = ((uintptr_t)p - (uintptr_t)c) >> PA_SLICE_SHIFT;
  pa_span_t* s = &c->spans[sl];
  if (unlikely(s->kind == PA_SPAN_TAIL)) s = &c->spans[c->slice_head[sl]];
  return s;
}

/* The free mark. A block on any free list (carved from the span,
 * freed locally, pushed by a remote freer, parked on a heap's delayed list)
 * holds pa_free_mark(b) = secret ^ b in its second word; malloc checks it
 * and clears it when it takes the block. A listed block without its mark
 * was taken already (a second copy of a block freed twice) or written after
 * free; a block that reaches free() with its mark is free already. How free
 * and malloc use this to catch double frees: free.c. The secret is random
 * per process with bit 63 set, so the mark is never a valid pointer (a
 * self-pointing list head is not mistaken for it); program data equals it
 * by chance with probability 2^-63, and only a read of freed memory can
 * learn it. The mark shares the block's first cache line with the link, so
 * it costs no extra memory access. */
extern PA_HIDDEN pa_secrets_t pa_secrets;
static inline uintptr_t pa_free_mark(const void* b) { return pa_secrets.key ^ (uintptr_t)b; }
/* Remote freers write the mark with bit 0 flipped, so the owner taking
 * remote frees in can tell a block it has freed itself since. */
static inline uintptr_t pa_remote_mark(const void* b) { return pa_free_mark(b) ^ 1; }
/* b carries a free mark, local or remote. */
static inline int pa_marked(const pa_block_t* b) { return (b->mark ^ pa_free_mark(b)) <= 1; }

/* Free-list links. A block's first word is the address of the next block on
 * its list (or NULL), and no reader follows it unchecked: a link must stay
 * in the span of the list it belongs to, where every block a link can reach
 * has its own free mark checked before malloc hands it out. So an overflow
 * out of a neighbour or a write after free that lands on a link either
 * aborts (`malloc(): corrupted free list`) or, if it happens to point into
 * the same span, leads to a word that must be that block's free mark — which
 * takes the secret — else malloc aborts there; a damaged link is never
 * followed out of its span, and a block is never handed out twice.
 *
 * malloc's pop tests the mark and the link with one compare and branch, no
 * more instructions than the mark test alone: mark ^ key ^ next < 2^16
 * exactly when the mark decodes to an address in next's 64 KiB slice;
 * with b's own mark that address is b (or b ^ 1), so next lies in b's slice
 * (always so within a one-slice span). A mark that is not b's — the block was
 * taken already (mark 0, the key's bit 63 survives) or written after free —
 * fails, except for program data that equals the key within 16 bits: chance
 * 2^-48. What fails goes out of line (span_pop_checked), which checks the
 * mark exactly and the link against the span's bounds: the list's end (NULL
 * is not in b's slice), a link into another slice of a bigger span, or
 * damage. A remote list the owner takes in whole becomes the local list and
 * meets the same pops; the delayed list, and a remote list taken in behind
 * local blocks, are checked the same way as the owner takes them in. Links
 * are stored plain, not encoded with a key: a key would put one more xor on
 * the chain from one malloc of a class to the next (measured +2 to +3 %,
 * README), and the span bound plus the keyed mark on every block a link
 * reaches already keep a forged link from handing out anything. Cost and
 * figures: README. */
static inline void pa_link_set(pa_block_t* b, const pa_block_t* next) {
  uintptr_t v = (uintptr_t)next;
  /* scalar: paired with the mark's store, the compiler would otherwise build
     both words in a vector register, slower than two stores on the free path */
  __asm__("" : "+r"(v));
  b->link = v;
}
/* The link, not checked: only where the caller checks it. */
static inline pa_block_t* pa_link_raw(const pa_block_t* b) { return (pa_block_t*)b->link; }
PA_HIDDEN pa_block_t* pa_link_far(const struct pa_span_s* s, const pa_block_t* b);   /* free.c */
/* next leaves b's 64 KiB slice and is not the list's end: one branch, not
 * two (in a program that frees and allocates a class by turns the list
 * often holds one block, so "in the slice" and "the end" alternate). */
static inline int pa_link_leaves_slice(const pa_block_t* b, const pa_block_t* next) {
  unsigned char far = (((uintptr_t)next ^ (uintptr_t)b) >> PA_SLICE_SHIFT) != 0, more = next != NULL;
  __asm__("" : "+r"(far));               /* keep it a flag: the compiler would split the & into branches */
  return far & more;
}
/* The link of b, a block on a list of span s: NULL or a block address in s
 * (else abort naming b). */
static inline pa_block_t* pa_link_next(const struct pa_span_s* s, const pa_block_t* b) {
  pa_block_t* next = pa_link_raw(b);
  if (unlikely(pa_link_leaves_slice(b, next))) return pa_link_far(s, b);
  return next;
}

/* Blocks a small span holds, and those carved so far (from start on). */
static inline size_t pa_span_capacity(const pa_span_t* s) { return (size_t)(s->end - s->start) / s->bsize; }
static inline size_t pa_span_carved(const pa_span_t* s) {
  return (size_t)__atomic_load_n(&s->carved, __ATOMIC_RELAXED);
}

/* Class queues (owner only). New spans go to the front (they become the
 * current span); spans coming back from the full list go to the back, so
 * they gather more free blocks before the fast path uses them again. */
static inline void pa_queue_remove(pa_heap_t* h, pa_span_t* s) {
  if (s->prev) s->prev->next = s->next; else h->queue[s->cls] = s->next;
  if (s->next) s->next->prev = s->prev; else h->qlast[s->cls] = s->prev;
  s->prev = s->next = NULL;
  h->nqueued[s->cls]--;
}
static inline void pa_queue_push_front(pa_heap_t* h, pa_span_t* s) {
  s->prev = NULL; s->next = h->queue[s->cls];
  if (s->next) s->next->prev = s; else h->qlast[s->cls] = s;
  h->queue[s->cls] = s;
  h->nqueued[s->cls]++;
}
static inline void pa_queue_push_back(pa_heap_t* h, pa_span_t* s) {
  s->next = NULL; s->prev = h->qlast[s->cls];
  if (s->prev) s->prev->next = s; else h->queue[s->cls] = s;
  h->qlast[s->cls] = s;
  h->nqueued[s->cls]++;
}

/* The class's current span, and the malloc fast path's copies of it: one
 * per 16-byte size step the class serves (pa_class_1k), so malloc finds
 * its span in one load. Owner only. */
static inline void pa_set_cur(pa_heap_t* h, size_t cls, pa_span_t* s) {
  h->cur[cls] = s;
  if (cls < PA_NCLASS && pa_class_size[cls] <= 1024) {
    size_t first = cls == 1 ? 0 : pa_class_size[cls - 1] / 16 + 1;
    for (size_t i = first; i <= pa_class_size[cls] / 16; i++) h->direct[i] = s;
  }
}

/* ------------------------------------------------------------------------- */
/* cross-file functions */

/* init.c */
PA_HIDDEN void  pa_init_slow(void);
static inline void pa_ensure_init(void) { if (unlikely(!pa_inited)) pa_init_slow(); }

/* options.c */
PA_HIDDEN const char* pa_getenv(const char* name);
PA_HIDDEN void  pa_read_options(void);

/* message.c: pa_warn always, pa_notice with PINARENA_VERBOSE; both only while
   fd 2 is the stderr the program started with (pa_stderr_remember, at init);
   the arguments are strings ending with NULL, written as one line */
PA_HIDDEN void  pa_stderr_remember(void);
PA_HIDDEN void  pa_warn(const char* first, ...) __attribute__((sentinel));
PA_HIDDEN void  pa_notice(const char* first, ...) __attribute__((sentinel));
PA_HIDDEN void  pa_write_str(int fd, const char* s);
PA_HIDDEN char* pa_fmt_u64(char* buf, uint64_t v);      /* buf >= 21 bytes */
__attribute__((noreturn)) PA_HIDDEN void pa_fatal_ptr(const char* what, const void* p);

/* stats.c */
PA_HIDDEN void  pa_write_stats(int fd);

/* chunk.c */
PA_HIDDEN pa_span_t* pa_span_alloc(size_t nslices, size_t align, uint8_t kind, struct pa_heap_s* heap);  /* under no lock; NULL + errno */
PA_HIDDEN int   pa_span_release(pa_span_t* s);                    /* 1: a reclaim pass is due (pa_reclaim_free_dirty) */
PA_HIDDEN int   pa_span_grow(pa_span_t* s, size_t nslices);       /* large in place; 0 ok */
PA_HIDDEN pa_chunk_t* pa_huge_alloc(size_t size, size_t align, int fresh);
PA_HIDDEN int   pa_huge_resize(pa_chunk_t* c, size_t n);           /* in place; 0 ok */
PA_HIDDEN void* pa_huge_move(pa_chunk_t* c, size_t n);            /* its pages into a fresh chunk; NULL: not moved */
PA_HIDDEN size_t pa_huge_extent(const pa_chunk_t* c);              /* chunk start to the object's page-rounded end */
/* A huge chunk follows the system's THP policy unless PINARENA_PAGES chose
 * pages for every chunk (thp asks for huge pages, 4k refuses them). */
static inline int pa_huge_system_thp(void) { return pa_opts.pages != PA_PAGES_THP && pa_opts.pages != PA_PAGES_4K; }
PA_HIDDEN void  pa_huge_refuse_edges(pa_chunk_t* c);               /* huge_thp.c */
PA_HIDDEN int   pa_thp_always(void);                              /* huge_thp.c: the system's THP mode is "always" */
PA_HIDDEN int   pa_regular_keeps_thp(void);                       /* regular_thp.c; pa_chunk_lock held */
PA_HIDDEN int   pa_regular_fills(void);                           /* its last answer, without a read; the same lock */
PA_HIDDEN int   pa_large_keeps_thp(size_t nslices);               /* regular_thp.c: a large span's chunks keep it */
PA_HIDDEN int   pa_huge_release(pa_chunk_t* c);                   /* 1: a reclaim pass is due */
PA_HIDDEN size_t pa_trim_chunks(void);
PA_HIDDEN pa_chunk_t* pa_chunk_by_span(pa_span_t* s);
PA_HIDDEN void  pa_small_counts(uint64_t* mallocs, uint64_t* frees, uint64_t* remote);

/* No registration of the shim's covers c, none is pending or was ever
 * refused: its free pages may go back to the OS (reclaim.c). pa_reg_lock held. */
static inline int pa_chunk_recyclable(const pa_chunk_t* c) {
  return atomic_load_explicit(&((pa_chunk_t*)c)->reg, memory_order_relaxed) == NULL && c->nrecs == 0 &&
         !c->pending && !c->unregistered && !c->refused;
}

/* reclaim.c: free memory of other kinds gives back up to `want` bytes of pages
   before memory of `kind` (PA_CHUNK_REGULAR or PA_CHUNK_HUGE) takes new ones; no lock held */
PA_HIDDEN void  pa_reclaim_for(int kind, size_t want);
/* reclaim.c: a span just took slices without pages, or memory was just freed; 1 when free slices hold more
   pages than their budget (or free huge chunks may hold some) and a pass is due (pa_chunk_lock held); the
   pass gives back the idle ones (no lock of ours held) */
PA_HIDDEN int   pa_reclaim_over_budget(void);
PA_HIDDEN void  pa_reclaim_free_dirty(void);
/* reclaim.c: the process's CPU time in milliseconds, read again at most every 4 ms of pa_coarse_ms()
   (pa_chunk_lock held): when free memory was released, against which reclaim.c tells idle memory from what
   a churn takes back at once, whether or not the process waited for a CPU meanwhile. */
PA_HIDDEN uint32_t pa_busy_ms(void);
/* Milliseconds of the coarse monotonic clock (a vDSO read of the last tick, no system call). */
static inline uint64_t pa_coarse_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}
/* register.c: libibverbs was in the process before the shim's registrar opened it (the program's own). */
PA_HIDDEN int   pa_verbs_loaded_by_program(void);

/* heap.c */
PA_HIDDEN pa_heap_t* pa_heap_init_thread(void);
PA_HIDDEN void  pa_heap_collect_delayed(pa_heap_t* h);
PA_HIDDEN void  pa_atfork_install(void);
PA_HIDDEN void  pa_heap_give_back(void);               /* the calling thread's empty spans, to their chunks */
PA_HIDDEN void  pa_heap_give_back_kept(struct pa_heap_s* h);  /* owner: the empty spans free.c kept, but current ones */
/* Set by a free into a span of an abandoned heap; the next thread that needs
 * a span (or trims) takes the freed memory back (pa_heap_reclaim_orphans). */
extern PA_HIDDEN _Atomic int pa_orphan_frees;
PA_HIDDEN void  pa_heap_reclaim_orphans(void);
PA_HIDDEN void  pa_heap_give_back_abandoned(void);     /* trim: dead threads' heaps give back their empty spans */
static inline void pa_reclaim_orphans_if_freed(void) {
  if (unlikely(atomic_load_explicit(&pa_orphan_frees, memory_order_relaxed))) pa_heap_reclaim_orphans();
}

/* alloc.c */
/* n first: it stays in the register malloc received it in (no move on the fast path) */
PA_HIDDEN void* pa_malloc_generic(size_t n, pa_heap_t* h);
PA_HIDDEN void* pa_malloc_aligned(size_t n, size_t align);
PA_HIDDEN void* pa_malloc_moving_up(size_t n);          /* realloc: a large object outgrew its place */
/* The largest large object (a span of slices in a regular chunk); above it
 * an object is huge (a chunk of its own). Half a chunk, less the slice the
 * chunk's header takes and the colour room (alloc.c, large_colour): two of
 * the largest share a chunk of the default size. At half a chunk itself the
 * room made such an object one slice too big for two to fit, so each took a
 * chunk's fresh half (hpcc's MPIFFT work arrays, exactly 2 MiB: 1024 page
 * faults inside the timed phase); as huge objects they take a free huge
 * chunk's touched pages (chunk.c, huge_take_free). */
static inline size_t pa_large_max(void) {
  return pa_opts.chunk_size / 2 - PA_SLICE - PA_LARGE_ROOM;
}
PA_HIDDEN size_t pa_span_collect(pa_span_t* s);

/* free.c */
PA_HIDDEN void  pa_free_mark_init(void);              /* the secrets; before the first block is carved */
__attribute__((noreturn)) PA_HIDDEN void pa_free_list_corrupt(const void* b);
__attribute__((noreturn)) PA_HIDDEN void pa_free_link_corrupt(const void* b);   /* b's link is not a block of its list */
PA_HIDDEN void  pa_free_local_slow(pa_heap_t* h, pa_span_t* s, const void* b);
PA_HIDDEN void  pa_span_check_empty(pa_span_t* s);   /* before an empty small span is released */
__attribute__((noreturn)) PA_HIDDEN void pa_remote_block_unmarked(const pa_block_t* b);
/* A block taken in from a remote list (thread_free, delayed) must carry the
 * remote mark. Inline: the owner runs this once per block another thread
 * freed, so a call per block (frame, register saves) cost more than the test
 * itself (prodcons: ~8 instructions of ~25 per collected block). */
static inline void pa_check_remote_block(const pa_block_t* b) {
  if (unlikely(b->mark != pa_remote_mark(b))) pa_remote_block_unmarked(b);
}
PA_HIDDEN void  pa_span_unfull(pa_heap_t* h, pa_span_t* s);
PA_HIDDEN size_t pa_usable_size(const void* p, const char* who);
PA_HIDDEN void* pa_realloc_fast(void* p, size_t n);  /* realloc's fast way: p, or pa_realloc_moving's */
PA_HIDDEN void* pa_realloc_moving(void* p, size_t n); /* glibc.c: realloc validating p, growing or moving it */

/* register.c */
PA_HIDDEN void  pa_register_chunk(pa_chunk_t* c);           /* eager mode: when mapped (or handed out: huge) */
PA_HIDDEN int   pa_register_cover(pa_chunk_t* c, size_t len); /* registered over [c, c + len) now; 0 or -errno */
PA_HIDDEN size_t pa_register_len(const pa_chunk_t* c);      /* what a registration of c covers */
/* A refused chunk whose refusal may pass (a page the program made read-only, the pin budget) is tried
   again once the epoch moved: the program made shim memory writable or had its attributes reset, or pinned
   memory was released (register.c, "refusals that may pass"). */
extern PA_HIDDEN _Atomic uint32_t pa_reg_retry_epoch;
static inline void pa_register_retry_later(void) {
  atomic_fetch_add_explicit(&pa_reg_retry_epoch, 1, memory_order_release);
}
/* c was refused, and something that may lift the refusal happened since: worth a lookup's try. No lock. */
static inline int pa_register_retry_may_help(const pa_chunk_t* c) {
  pa_chunk_t* m = (pa_chunk_t*)c;
  return atomic_load_explicit(&m->retry, memory_order_relaxed) &&
         atomic_load_explicit(&m->retry_epoch, memory_order_relaxed) !=
         atomic_load_explicit(&pa_reg_retry_epoch, memory_order_acquire);
}
PA_HIDDEN void  pa_register_ready(void);              /* constructors ran: register what is pending */
PA_HIDDEN void  pa_register_release(pa_chunk_t* c);      /* deregister before unmapping (trim) */
PA_HIDDEN void  pa_register_atfork_prepare(void);     /* locks held: unpin io_uring chunks */
PA_HIDDEN void  pa_register_atfork_parent(void);      /* locks held: pin them again, same keys */
PA_HIDDEN void  pa_register_atfork_child(void);
PA_HIDDEN void  pa_remote_atfork_prepare(void);       /* remote.c: its lock, held across fork */
PA_HIDDEN void  pa_remote_atfork_parent(void);
PA_HIDDEN void  pa_remote_atfork_child(void);
PA_HIDDEN const char* pa_registrar_name(void);
PA_HIDDEN void  pa_register_check(void);              /* notice a lost io_uring ring (stats) */
PA_HIDDEN int   pa_register_set_pd(void* pd);
PA_HIDDEN void* pa_register_pd(void);
PA_HIDDEN void  pa_register_choose(void);             /* pick the registrar if nothing made it pick yet */
PA_HIDDEN int   pa_register_heap_remote(void);        /* PINARENA_HEAP_REMOTE=1: heap keys reach remotely */
PA_HIDDEN void  pa_register_notify_release(pa_chunk_t* c);

/* The release callback (pinarena_set_release_callback) */
typedef void (*pa_release_fn)(void* base, size_t len, void* arg);
extern PA_HIDDEN pa_release_fn pa_release_cb;
extern PA_HIDDEN void* pa_release_arg;

/* remote.c */
struct pinarena_region;
PA_HIDDEN int   pa_remote_lookup(const void* p, size_t len, struct pinarena_region* out);
PA_HIDDEN size_t pa_remote_trim(void);                 /* pinarena_trim: free remote chunks to the OS */
PA_HIDDEN size_t pa_remote_reclaim(size_t want);      /* reclaim.c: free unregistered remote chunks to the OS */
PA_HIDDEN int   pa_remote_owns(uintptr_t a);          /* a lies in a remote chunk; no lock, any context */
PA_HIDDEN void  pa_stack_watch(const void* addr, size_t len);   /* stack_watch.c: uffd watches a stack's range */
/* the stacks fed with unmaps, for the stats line (-1: that stack is not fed) */
long pinarena_stack_events_ucm(void);              /* stack_events.c: ranges forwarded to UCX */
long pinarena_stack_events_ofi(void);              /* stack_ofi.c: libfabric subscriptions voided by unmaps */
long pinarena_stack_events_ofi_subscribed(void);   /* stack_ofi.c: ranges libfabric's cache subscribed */

/* the fast paths, shared by glibc.c */
PA_HIDDEN void* pa_malloc(size_t n);
PA_HIDDEN void  pa_free(void* p);

#endif

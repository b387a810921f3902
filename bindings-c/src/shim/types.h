/* types.h — the malloc shim's structures and their layout; the prototypes
 * and the inline fast paths that use them are in internal.h.
 *
 * Glossary. The shim (after mimalloc) and the Java arena (allocator/, the
 * package dev.pinarena.allocator) name the same ideas with their own words,
 * one to one:
 *   Java                                  C (this folder)
 *   ArenaChunk, a shared chunk            pa_chunk_t, kind PA_CHUNK_REGULAR
 *   arena page (8 KiB, SizeClasses)       slice (64 KiB, PA_SLICE)
 *   Slab                                  span of a small size class (pa_span_t, PA_SPAN_SMALL)
 *   run (ArenaChunk.RUN_HEAD / RUN_BODY)  large span (PA_SPAN_LARGE: one object, up to pa_large_max())
 *   dedicated chunk (ArenaChunk)          huge chunk (PA_CHUNK_HUGE: one huge object)
 *   ThreadHeap                            pa_heap_t
 *   Slab.remoteFreed + ThreadHeap's       a span's thread_free list + the heap's delayed list
 *     pending stack (cross-thread free)
 *   adoption (ThreadHeaps)                abandoned-heap adoption (heap.c)
 *   PagePool (free pages, one lock)       chunk.c (free slices, pa_chunk_lock)
 *   ExposedKeys (remote scope)            remote.c, window.c
 * Neither side's chunk is the kernel's page; a chunk is mapped lazily here
 * (pages come at first touch or when a registration pins them) where the
 * Java arena populates it up front.
 *
 * Layout. A chunk is N bytes aligned to N (N = 2^shift, default 4 MiB). A
 * regular chunk is cut into 64 KiB slices; the first slice(s) hold the
 * chunk header (pa_chunk_t: magic, registration, slice bitmap, one span
 * descriptor per slice). A span is a run of slices: either a page of equal
 * blocks of one size class (owned by one heap), or one large object. A huge
 * object gets a chunk of its own (kind PA_CHUNK_HUGE), kept for reuse.
 *
 * Owner lookup, two flat tables indexed by addr >> 21 (one entry per 2 MiB,
 * the smallest chunk), both mapped NORESERVE and touched only where chunks
 * are: pa_table[] is 0 for addresses that are not ours, else log2 of the
 * size of the chunk that covers them (bit 7 set for a huge chunk), so the
 * chunk is addr & ~(2^shift - 1); pa_span_table[] is, for a regular chunk,
 * the address of the span descriptor of the granule's first slice (else 0),
 * so free finds the descriptor with one load and one add, the add not
 * waiting on the load's value to be shifted (64 MiB and 512 MiB of address
 * space). The first cache line of the span descriptor (check word, kind,
 * block geometry, count of carved blocks) then validates the pointer in O(1), and the
 * free mark in the block's second word (see pa_free_mark) tells a block
 * that is out from one already free; free reads no other line of the chunk
 * header.
 */
#ifndef PA_SHIM_TYPES_H
#define PA_SHIM_TYPES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "../common.h"
#include "../os.h"
#include "../uring.h"
#include "classes.h"

#define PA_SLICE_SHIFT 16
#define PA_SLICE       ((size_t)1 << PA_SLICE_SHIFT)          /* 64 KiB */
#define PA_TABLE_SHIFT 21                                     /* table granule = 2 MiB = smallest chunk */
#define PA_ADDR_BITS   47
#define PA_MAX_SLICES  4096                                   /* regular chunks up to 256 MiB */
#define PA_CHUNK_GROWN_MAX ((size_t)32 << 20)                 /* regular chunks grow up to 32 MiB (chunk.c) */
#define PA_ALIGN_MIN   16
#define PA_HUGE_HDR    4096                                   /* a huge chunk's header; the object follows */
#define PA_LARGE_COLOURS 8                                    /* page offsets a large object starts at (alloc.c) */
#define PA_LARGE_ROOM  ((PA_LARGE_COLOURS - 1) * PA_PAGE)     /* a large span's bytes beyond its object, at most */

#define PA_CHUNK_MAGIC 0x70696e6172656e61ULL                 /* "pinarena" */
#define PA_SPAN_CHECK  0x7370616eu                            /* "span" */
#define PA_SPAN_TAG_SMALL ((uint64_t)PA_SPAN_CHECK | ((uint64_t)1 << 32))  /* check + kind SMALL */
#define PA_SPAN_TAG_LARGE ((uint64_t)PA_SPAN_CHECK | ((uint64_t)2 << 32))  /* check + kind LARGE */
#define PA_TABLE_HUGE  0x80                                   /* table byte: chunk of one huge object */
#define PA_TABLE_SHIFT_MASK 0x3f

/* ------------------------------------------------------------------------- */

/* A free block (every block is at least 16 bytes): the list link (checked
 * before it is followed, pa_link_next), and the free mark while it sits on
 * any free list (pa_free_mark). */
typedef struct pa_block_s {
  uintptr_t          link;
  uintptr_t          mark;
} pa_block_t;

struct pa_heap_s;

enum { PA_SPAN_FREE = 0, PA_SPAN_SMALL, PA_SPAN_LARGE, PA_SPAN_HEADER, PA_SPAN_TAIL /* not the first slice */ };

/* thread_free, one word: the list of blocks other threads freed into the
 * span, how many there are, and a tag.
 *   bits 4..46  — the list's first block (blocks are 16-byte aligned, and
 *                 below 2^47: PA_ADDR_BITS);
 *   bits 48..63 — the count of blocks on the list: each push adds one in the
 *                 same CAS, so the owner takes the list in without walking it
 *                 to count (alloc.c, pa_span_collect). A span holds at most
 *                 PA_SPAN_MAX_BLOCKS blocks, far below 2^16;
 *   bit 0       — USE_DELAYED, set only on an empty list: the owner moved the
 *                 span to its full list; the next remote freer clears the tag
 *                 and pushes its block onto the owning heap's `delayed` list
 *                 instead, which tells the owner the span has room again.
 *                 Only one freer can win the tag (CAS). */
#define PA_TF_DELAYED    ((uintptr_t)1)
#define PA_TF_ONE        ((uintptr_t)1 << 48)                   /* one more block on the list */
#define PA_TF_LIST       (PA_TF_ONE - 1 - PA_TF_DELAYED)        /* the first block's bits */
static inline pa_block_t* pa_tf_head(uintptr_t tf) { return (pa_block_t*)(tf & PA_TF_LIST); }
static inline size_t pa_tf_count(uintptr_t tf) { return (size_t)(tf / PA_TF_ONE); }
#define PA_USED_FULL  ((uint32_t)1 << 31)
#define PA_SPAN_MAX_BLOCKS (PA_SLICE / PA_ALIGN_MIN)   /* most blocks a small span has */

typedef struct pa_span_s {
  /* first cache line: everything malloc and a local free touch (nothing a
     remote freer writes: thread_free lives on the second line, so the
     producer/consumer pattern does not bounce the owner's line) */
  pa_block_t*        free;     /* local free list */
  struct pa_heap_s*  owner;    /* a small span in use: its heap (= heap), else NULL. Set in the first
                                  slice's descriptor only, and the only word free's fast path compares:
                                  equal to the calling thread's heap means a small span, its header
                                  intact there, and a local free (pa_free) */
  uint32_t           used;     /* blocks out (incl. those sitting on thread_free), plus
                                  PA_USED_FULL while on the heap's full list (owner only):
                                  a local free tests "emptied or full" as (int32_t)used <= 0 */
  uint8_t            cls;
  uint8_t            scar;     /* bit k: a large object once started k pages into this slice
                                  (alloc.c, large_colour): a small span starting here leaves out
                                  its blocks up to each such address (span_new), so a stale
                                  free of that object cannot free a live block */
  uint8_t            orphan;   /* its heap is abandoned (no thread owns it): a remote free
                                  raises pa_orphan_frees (heap.c) */
  uint8_t            shift;    /* bsize = odd << shift (block_in_span, free.c) */
  union {                      /* free compares check and kind in one load */
    struct {
      uint32_t       check;    /* PA_SPAN_CHECK: the header around it is intact */
      uint8_t        kind;     /* PA_SPAN_* */
      uint8_t        pad1_[3]; /* always 0 */
    };
    uint64_t         tag;
  };
  uint32_t           bsize;    /* block size */
  uint32_t           nslices;
  uint64_t           inv;      /* the inverse of bsize's odd part modulo 2^64 (block_in_span, free.c) */
  char*              start;
  uint64_t           carved;   /* blocks carved from start on (the first `carved` blocks have been on a free
                                  list): written by the owner only, atomically (__atomic, relaxed: remote
                                  freers read it); the owner reads its own writes plainly */
  /* second line */
  _Atomic(uintptr_t) thread_free; /* remote frees (tagged, see above) */
  struct pa_heap_s*  heap;     /* owner (of any kind of span); immutable while the span is in use */
  char*              end;
  struct pa_span_s*  prev;
  struct pa_span_s*  next;
  void*              obj;      /* LARGE: the pointer handed out (aligned allocations) */
  uint8_t            colour;   /* 1 + the page a large object last started at in this slice (0: none yet);
                                  kept like scar, so a large object freed and taken again lands
                                  where it was (alloc.c, large_colour) */
} __attribute__((aligned(64))) pa_span_t;

enum { PA_CHUNK_REGULAR = 1, PA_CHUNK_HUGE = 2 };

/* One registration record. Published by pointer (release) so the lookup
 * reads a consistent record without locks; records are never freed. */
typedef struct pa_regrec_s {
  uintptr_t base;
  size_t    len;
  uint32_t  lkey, rkey;
  int       backend;           /* PA_REG_* */
  void*     mr;                /* verbs: struct ibv_mr* */
  pa_uring_reg_t ureg;         /* io_uring */
} pa_regrec_t;

enum { PA_REG_NONE = 0, PA_REG_VERBS, PA_REG_URING, PA_REG_MLOCK };

#define PA_CHUNK_RECS 6

typedef struct pa_chunk_s {
  uint64_t           magic;
  uint8_t            shift;
  uint8_t            kind;     /* PA_CHUNK_* */
  uint8_t            unregistered; /* registration refused (cap, RLIMIT_MEMLOCK, a read-only page, none) */
  uint8_t            pending;  /* registration deferred (before constructors / during registrar init) */
  _Atomic uint8_t    retry;    /* unregistered, but the refusal may pass: tried again later (register.c,
                                  "refusals that may pass") */
  uint8_t            refused;  /* registered after a refusal: a stack may have registered its pages itself
                                  meanwhile, so they never go back to the OS but through trim */
  uint8_t            thp_system; /* mapped keeping the system's THP policy (regular chunks: regular_thp.c) */
  uint32_t           nslices;
  uint32_t           hdr_slices;
  uint32_t           free_slices;
  uint32_t           free_dirty; /* REGULAR: free slices that may hold pages (dirty_map, chunk.c's placement) */
  pa_mapping_t       os;       /* mapping as the OS layer reports it */
  _Atomic(pa_regrec_t*) reg;   /* NULL: not registered; else the newest (widest) record */
  uint32_t           nrecs;    /* records made; all but the live one are kept registered until the chunk goes
                                  (keys handed out stay valid while a huge object's registration widens) */
  _Atomic uint32_t   retry_epoch; /* pa_reg_retry_epoch when the refusal happened */
  size_t             refused_len; /* the bytes unregistered_bytes counts for it */
  pa_regrec_t        recs[PA_CHUNK_RECS]; /* a new record never rewrites a published one */
  struct pa_chunk_s* next;     /* all chunks (regular list or huge list) */
  struct pa_chunk_s* next_free;/* trim: the chunks it releases (free huge chunks: huge_free.c) */
  struct pa_chunk_s* next_pending; /* registration deferred */
  void*              huge_obj; /* HUGE: pointer handed out, NULL when free */
  struct pa_heap_s*  huge_heap;/* HUGE: the heap of the thread that took or freed it last (a forked child ignores
                                  what another thread of the parent did to it around fork: heap.c, "fork") */
  size_t             huge_req; /* HUGE: bytes requested */
  size_t             huge_dirty; /* HUGE: bytes from the chunk's start that may have been written (pages above are
                                  untouched, still zero); only grows: touched pages are never given back */
  size_t             huge_clean; /* HUGE: huge_dirty before the current object was handed out (calloc) */
  uint32_t           huge_freed_ms; /* HUGE: when its last object was freed, pa_busy_ms() (reclaim.c) */
  uintptr_t          huge_nh_from; /* HUGE, THP "always": refuses transparent huge pages from here to its end (its
                                  end: nowhere but its first 2 MiB and its islands; 0: not set yet; huge_thp.c) */
  uintptr_t          huge_nh_tail; /* HUGE, THP "always": the last 2 MiB region refused alone (an island), or 0 */
  uint32_t           huge_nh_islands; /* HUGE, THP "always": regions refused alone so far */
  uint64_t           used_map[PA_MAX_SLICES / 64];
  uint64_t           dirty_map[PA_MAX_SLICES / 64]; /* REGULAR: slices handed out since they were last discarded:
                                  their pages may be resident (reclaim.c counts the free ones) */
  uint32_t*          freed_ms; /* REGULAR: slice -> when it was last released, pa_busy_ms() (reclaim.c) */
  uint16_t*          slice_head; /* slice -> index of the first slice of its span */
  pa_span_t          spans[];  /* one per slice; only the first of a span is meaningful */
} pa_chunk_t;

typedef struct pa_heap_s {
  pa_span_t*         direct[PA_DIRECT]; /* by (n + 15) / 16: cur[] of that size's class (pa_set_cur) */
  pa_span_t*         cur[PA_NCLASS];    /* span the fast path allocates from */
  pa_span_t*         queue[PA_NCLASS];  /* spans of that class that may have room (first) */
  pa_span_t*         qlast[PA_NCLASS];  /* ... and the last: spans back from the full list queue up here */
  uint32_t           nqueued[PA_NCLASS]; /* spans on queue[] (owner only; free.c keeps emptied ones while few) */
  pa_span_t*         full;              /* spans with no room (thread_free tagged DELAYED) */
  _Atomic(pa_block_t*) delayed;         /* blocks freed by others into full spans */
  /* Statistics, exact but kept off the malloc fast path (pa_small_counts):
     small mallocs = n_free + n_collected + the blocks still out (the sum of
     `used` over all small spans), since `used` goes up once per small malloc
     and down once per block coming back, either through a local free
     (n_free, on the free fast path) or when the owner takes remote frees in
     (n_collected, slow path only: pa_span_collect, delayed blocks). Remote
     frees are counted there too, as the owner takes them in, not by the
     freer (free.c, free_remote). */
  uint64_t           n_free, n_collected;
  struct pa_heap_s*  next_all;
  struct pa_heap_s*  next_abandoned;
  int                live;              /* owned by a thread */
  int                exit_collect;      /* abandoned by its thread's exit, not looked at since (heap.c) */
  int                left_in_parent;    /* in a forked child: owned by another thread of the parent
                                           (heap.c, "fork"): never owned here, frees into it ignored */
  uint64_t           kept_empty;        /* owner only: empty spans free.c kept (PA_KEEP_EMPTY) since the last
                                           pa_heap_give_back_kept, not counting current ones; a hint */
} pa_heap_t;

/* ------------------------------------------------------------------------- */
/* settings and counters */

typedef struct pa_opts_s {
  size_t  chunk_size;
  size_t  chunk_first;         /* size of the first regular chunk (PA_CHUNK_MIN by default) */
  int     chunk_grow;          /* no PINARENA_CHUNK_SIZE: regular chunks grow with the heap (chunk.c) */
  uint8_t chunk_shift;
  int     registrar;           /* PA_REGSEL_* */
  char    ib_device[64];
  pa_backing_t prefs[PA_BACK_COUNT]; /* PA_PAGES_HUGETLB: the populated backings to try, in order */
  size_t  nprefs;
  int     pages;               /* PA_PAGES_* */
  int     reg_eager;           /* register chunks when mapped (else on their first lookup) */
  int     reclaim;             /* freed memory of one kind serves others (reclaim.c; PINARENA_RECLAIM):
                                  0 never, 1 while no RDMA stack is loaded (default), 2 always */
  int     stack_events_off;    /* PINARENA_STACK_EVENTS=0: UCX and libfabric are not fed (stack_events.c,
                                  stack_ofi.c) */
  uint64_t max_pinned;         /* 0 = no cap of our own */
  char    stats_path[256];
  int     verbose;
} pa_opts_t;

enum { PA_PAGES_AUTO = 0, PA_PAGES_THP, PA_PAGES_4K, PA_PAGES_HUGETLB };
enum { PA_REGSEL_AUTO = 0, PA_REGSEL_VERBS, PA_REGSEL_URING, PA_REGSEL_MLOCK, PA_REGSEL_NONE };

typedef struct pa_gstats_s {
  _Atomic uint64_t chunks, chunk_bytes, huge_chunks, huge_bytes;
  _Atomic uint64_t reg_chunks, reg_bytes, unreg_chunks, unreg_bytes;
  _Atomic uint64_t large_allocs, huge_allocs, released_bytes, released_chunks;
  _Atomic uint64_t os_refusals;
  _Atomic uint64_t huge_live;   /* live huge objects' extents, summed: reclaim's memory in use (reclaim.c) */
  _Atomic uint64_t thp_chunk_bytes; /* regular chunks mapped keeping the system's THP policy (regular_thp.c) */
} pa_gstats_t;

/* The free mark's secret (pa_free_mark, internal.h). */
typedef struct pa_secrets_s {
  uintptr_t key;               /* the free mark's secret (pa_free_mark) */
} pa_secrets_t;

#endif

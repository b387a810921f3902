/* chunk.c — size-aligned chunks from the OS layer, the flat owner table,
 * slice runs (spans) inside regular chunks, and dedicated huge chunks.
 *
 * Chunks are never unmapped, mremapped or madvised away by the allocator;
 * only pinarena_trim() releases wholly free chunks, after the release
 * callback and the deregistration (see api.c); pa_os_unmap_chunk posts the
 * range to the invalidation sinks, for caches that registered part of it.
 *
 * Memory is populated lazily: a chunk is address space until the program
 * touches a page or somebody pins it (a registration populates what it
 * covers). A page once touched stays (it may be registered by anyone), so
 * laziness never gives a page back; it only never takes one for nothing.
 * Backing (PINARENA_PAGES): by default a regular chunk refuses transparent
 * huge pages (see chunk_map) unless the program is seen to fill what it
 * maps (regular_thp.c), and huge pages are asked for (MADV_HUGEPAGE)
 * only where a registration is about to pin: there the whole range gets
 * populated anyway, and 2 MiB pages cut the device's translation entries.
 * A huge chunk follows the system's THP policy. hugetlb pool pages are used only when
 * asked, and only for regular chunks: they are taken (reserved) at mmap time
 * whether touched or not, and a fork must copy every pinned one from the
 * free pool (fork fails with ENOMEM when the pool is short).
 *
 * A huge object gets a chunk of its own, aligned to a power of two so the
 * owner table finds it, with the address space above the object reserved
 * (MAP_NORESERVE, untouched): a realloc grows into it in place, and a freed
 * huge chunk serves any later object up to its capacity, reusing the pages
 * the last one touched. So a huge object costs its page-rounded size in
 * memory, whatever the power of two around it. */
#include "internal.h"
#include "program.h"

#include <errno.h>
#include <string.h>

PA_HIDDEN pthread_mutex_t pa_chunk_lock = PTHREAD_MUTEX_INITIALIZER;
PA_HIDDEN pa_chunk_t* pa_chunks;
PA_HIDDEN pa_chunk_t* pa_huge_all;      /* every huge chunk, by next */
PA_HIDDEN _Atomic(uint8_t)* pa_table;
PA_HIDDEN _Atomic(uintptr_t)* pa_span_table;
PA_HIDDEN pa_gstats_t pa_gstats;
PA_HIDDEN size_t pa_slices_used;
PA_HIDDEN size_t pa_slices_free_dirty;

static unsigned log2_ceil(size_t x) {
  if (x <= 1) return 0;
  return 64u - (unsigned)__builtin_clzl(x - 1);
}

/* Publish (shift != 0) or withdraw (shift == 0) a chunk in the owner table.
 * Release order: the header is fully written before any thread can find it.
 * The span table only has entries for regular chunks (it is 0 everywhere
 * else), so a huge chunk's granules leave it alone: a reservation of many
 * GiB touches one table byte per 2 MiB, not eight. */
static void table_set(pa_chunk_t* c, size_t size, uint8_t shift, int regular) {
  uintptr_t g0 = (uintptr_t)c >> PA_TABLE_SHIFT, g1 = ((uintptr_t)c + size) >> PA_TABLE_SHIFT;
  for (uintptr_t g = g0; g < g1; g++) {
    if (regular && pa_free_fast_mask != ~(uintptr_t)0) {
      /* the span descriptors of the granule's first slice: free's fast path adds the slice's index */
      uintptr_t first = shift != 0 ? (uintptr_t)&c->spans[((g - g0) << PA_TABLE_SHIFT) >> PA_SLICE_SHIFT] : 0;
      atomic_store_explicit(&pa_span_table[g], first, memory_order_release);
    }
    atomic_store_explicit(&pa_table[g], shift, memory_order_release);
  }
}

PA_HIDDEN pa_chunk_t* pa_chunk_by_span(pa_span_t* s) { return pa_chunk_of(s); }

/* The mapping of one chunk: lazily populated, except regular chunks from
 * the hugetlb pool when PINARENA_PAGES=hugetlb asked for it. By default a
 * regular chunk refuses transparent huge pages (MADV_NOHUGEPAGE) until a
 * registration asks for them on the range it pins: under THP "always" every
 * first touch of a chunk's 2 MiB-aligned regions would otherwise take a
 * whole huge page, a small object's span included (mimalloc-bench's
 * glibc-thread: 13.8 MiB peak against glibc's 2.0), but for a program that
 * is seen to fill what it maps and for large objects of half a huge page or
 * more (system_thp: regular_thp.c). A huge chunk
 * holds one object, as dense as glibc's own mmap of it: the system's
 * policy, but for the regions at the object's edges (huge_thp.c). */
static int chunk_map(size_t size, uint8_t kind, int system_thp, pa_mapping_t* os) {
  if (kind == PA_CHUNK_REGULAR && pa_opts.pages == PA_PAGES_HUGETLB)
    return pa_os_map_chunk(size, pa_opts.prefs, pa_opts.nprefs, os);
  pa_backing_t b = pa_opts.pages == PA_PAGES_THP ? PA_BACK_THP : PA_BACK_4K;
  int flags = system_thp ? PA_LAZY_SYSTEM_THP : 0;
  if (kind == PA_CHUNK_HUGE) flags |= PA_LAZY_NORESERVE;    /* reserved room to grow: no commit charge */
  return pa_os_map_lazy(size, size, b, flags, os);
}

/* Map and set up one chunk. No lock held: registration may call malloc. */
static PA_COLD pa_chunk_t* chunk_new(size_t size, uint8_t kind, int system_thp) {
  pa_mapping_t os;
  int saved = errno;
  int rc = chunk_map(size, kind, system_thp, &os);
  errno = saved;                       /* fallbacks (hugetlb -> thp) are not the caller's error */
  if (rc != 0) {
    atomic_fetch_add(&pa_gstats.os_refusals, 1);
    errno = ENOMEM;
    return NULL;
  }
  pa_chunk_t* c = (pa_chunk_t*)os.addr;   /* fresh, zero */
  c->magic = PA_CHUNK_MAGIC;
  c->shift = (uint8_t)log2_ceil(size);
  c->kind = kind;
  c->thp_system = (uint8_t)system_thp;
  c->os = os;
  if (kind == PA_CHUNK_REGULAR) {
    size_t n = size >> PA_SLICE_SHIFT;
    size_t hdr = sizeof(pa_chunk_t) + n * sizeof(pa_span_t);
    c->freed_ms = (uint32_t*)((char*)c + hdr);
    hdr += n * sizeof(uint32_t);
    c->slice_head = (uint16_t*)((char*)c + hdr);
    hdr += n * sizeof(uint16_t);
    c->nslices = (uint32_t)n;
    c->hdr_slices = (uint32_t)((hdr + PA_SLICE - 1) >> PA_SLICE_SHIFT);
    c->free_slices = c->nslices - c->hdr_slices;
    c->spans[0].kind = PA_SPAN_HEADER;
    c->spans[0].nslices = c->hdr_slices;
    for (size_t i = 0; i < n; i++) {
      c->spans[i].check = PA_SPAN_CHECK;
      if (i < c->hdr_slices) {
        c->slice_head[i] = 0; c->used_map[i / 64] |= 1ULL << (i % 64);
        if (i > 0) c->spans[i].kind = PA_SPAN_TAIL;
      }
      else { c->slice_head[i] = (uint16_t)i; c->spans[i].kind = PA_SPAN_FREE; }
    }
    atomic_fetch_add(&pa_gstats.chunks, 1);
    atomic_fetch_add(&pa_gstats.chunk_bytes, size);
    if (system_thp) atomic_fetch_add(&pa_gstats.thp_chunk_bytes, size);
  } else {
    c->huge_dirty = PA_HUGE_HDR;
    atomic_fetch_add(&pa_gstats.huge_chunks, 1);
    atomic_fetch_add(&pa_gstats.huge_bytes, size);
  }
  table_set(c, size, (uint8_t)(c->shift | (kind == PA_CHUNK_HUGE ? PA_TABLE_HUGE : 0)), kind == PA_CHUNK_REGULAR);
  if (kind == PA_CHUNK_REGULAR && pa_opts.reg_eager) pa_register_chunk(c);   /* huge: once its object is known */
  return c;
}

/* ---------------------------------------------------------------------------
   Slice runs inside regular chunks (under pa_chunk_lock)
--------------------------------------------------------------------------- */

static inline int slice_used(const pa_chunk_t* c, size_t i) { return (int)((c->used_map[i / 64] >> (i % 64)) & 1); }

static inline int slice_dirty(const pa_chunk_t* c, size_t i) { return (int)((c->dirty_map[i / 64] >> (i % 64)) & 1); }

/* Slice k of c leaves the free slices (pa_chunk_lock held): its pages, if
   it had any, are no longer free memory. Returns 1 when it had none (the
   program may now add pages). */
static inline size_t slice_take(pa_chunk_t* c, size_t k) {
  uint64_t bit = 1ULL << (k % 64);
  size_t fresh = !(c->dirty_map[k / 64] & bit);
  c->used_map[k / 64] |= bit;
  pa_slices_free_dirty -= 1 - fresh;
  c->free_dirty -= (uint32_t)(1 - fresh);
  pa_slices_used++;
  return fresh;
}

/* Bits set in map[] over slices [i, i + n). */
static size_t count_bits(const uint64_t* map, size_t i, size_t n) {
  size_t got = 0;
  while (n > 0) {
    size_t b = i % 64, k = 64 - b < n ? 64 - b : n;
    uint64_t m = k == 64 ? ~0ULL : ((1ULL << k) - 1) << b;
    got += (size_t)__builtin_popcountll(map[i / 64] & m);
    i += k; n -= k;
  }
  return got;
}

/* The first slice at or after i that is free (`free_dirty`: free with pages)
 * when `in`, or is not when !in; c->nslices if none. */
static size_t next_slice(const pa_chunk_t* c, size_t i, int in, int free_dirty) {
  while (i < c->nslices) {
    uint64_t w = ~c->used_map[i / 64];
    if (free_dirty) w &= c->dirty_map[i / 64];
    if (!in) w = ~w;
    w &= ~0ULL << (i % 64);
    if (w != 0) { i = (i & ~(size_t)63) + (size_t)__builtin_ctzll(w); break; }
    i = (i & ~(size_t)63) + 64;
  }
  return i < c->nslices ? i : c->nslices;
}

/* The first run of n slices (aligned to `as`) among the free ones, or among
 * the free ones with pages (`free_dirty`); -1 if none. */
static long first_run(const pa_chunk_t* c, size_t n, size_t as, int free_dirty) {
  for (size_t a = next_slice(c, c->hdr_slices, 1, free_dirty); a < c->nslices;) {
    size_t b = next_slice(c, a, 0, free_dirty), lo = (a + as - 1) & ~(as - 1);
    if (lo + n <= b) return (long)lo;
    a = next_slice(c, b, 1, free_dirty);
  }
  return -1;
}

/* Where a run of n slices goes: on slices whose pages a freed span left
 * resident, else on as many of them as one free run offers (at its start or
 * its end), and only then on untouched slices; first fit, newest chunk
 * first, within each step. Before (first fit, no regard for pages) objects
 * that came and went on many threads kept landing on untouched slices while
 * freed ones sat resident in holes (CPython's test_asyncio.test_ssl). The
 * second step walks every chunk with free pages, but only for a span about
 * to add pages, which cost more than the walk. pa_chunk_lock held. */
typedef struct { pa_chunk_t* c; size_t i, fresh; } place_t;

static void fewest_fresh(pa_chunk_t* c, size_t n, size_t as, place_t* best) {
  for (size_t a = next_slice(c, c->hdr_slices, 1, 0); a < c->nslices;) {
    size_t b = next_slice(c, a, 0, 0), lo = (a + as - 1) & ~(as - 1);
    if (lo + n <= b) {
      size_t hi = (b - n) & ~(as - 1);
      size_t f = n - count_bits(c->dirty_map, lo, n), at = lo;
      if (hi != lo) { size_t g = n - count_bits(c->dirty_map, hi, n); if (g < f) { f = g; at = hi; } }
      if (f < best->fresh) *best = (place_t){ c, at, f };
    }
    a = next_slice(c, b, 1, 0);
  }
}

/* Which chunks a span may take slices of: under THP "always" a large span
 * of half a huge page or more (thp) only those keeping the system's policy,
 * any other only those refusing it until the heap is seen to fill what it
 * maps (fills). Elsewhere every chunk refuses and thp, fills are 0. */
static inline int serves(const pa_chunk_t* c, int thp, int fills) {
  return thp ? c->thp_system : !c->thp_system || fills;
}

/* The first run of n slices with pages in the chunks that serve the span
 * (others: 0), or in the rest (others: 1). */
static int place_dirty(size_t n, size_t as, int thp, int fills, int others, place_t* p) {
  for (pa_chunk_t* c = pa_chunks; c != NULL; c = c->next) {
    if (serves(c, thp, fills) == others) continue;
    long i = c->free_dirty >= n ? first_run(c, n, as, 1) : -1;
    if (i >= 0) { *p = (place_t){ c, (size_t)i, 0 }; return 1; }
  }
  return 0;
}

static int place_serving(size_t n, size_t as, int thp, int fills, place_t* p) {
  if (pa_slices_free_dirty > 0) {
    if (place_dirty(n, as, thp, fills, 0, p)) return 1;
    *p = (place_t){ NULL, 0, n };
    for (pa_chunk_t* c = pa_chunks; c != NULL; c = c->next)
      if (c->free_slices >= n && c->free_dirty != 0 && serves(c, thp, fills)) fewest_fresh(c, n, as, p);
    if (p->c != NULL) return 1;
  }
  for (pa_chunk_t* c = pa_chunks; c != NULL; c = c->next) {
    if (!serves(c, thp, fills)) continue;
    long i = c->free_slices >= n ? first_run(c, n, as, 0) : -1;
    if (i >= 0) { *p = (place_t){ c, (size_t)i, n }; return 1; }
  }
  return 0;
}

/* Where a span goes (above); when the chunks that serve it have no room, a
 * smaller span takes a run a freed big object left resident in a chunk
 * keeping the policy before a new chunk is mapped: no new page, and the
 * memory big objects freed is not held while small ones map more (with an
 * RDMA stack loaded nothing is reclaimed, reclaim.c). Only then: small
 * spans there would split the runs big objects come back to, and hpcc's FFT
 * over rxe0 (its 1 MiB arrays freed and allocated again for each
 * transform) ran at the rate of 4 KiB pages, 0.88 x glibc's, when they took
 * them first. A big span never takes a refusing chunk's run: it would hold
 * those 4 KiB pages as long as it lives (the same FFT, 0.88 x). */
static int place(size_t n, size_t as, int thp, int fills, place_t* p) {
  if (place_serving(n, as, thp, fills, p)) return 1;
  if (thp || fills || pa_slices_free_dirty == 0 ||
      atomic_load_explicit(&pa_gstats.thp_chunk_bytes, memory_order_relaxed) == 0) return 0;   /* every chunk served */
  return place_dirty(n, as, thp, fills, 1, p);
}

static pa_span_t* take_run(pa_chunk_t* c, size_t i, size_t n, uint8_t kind, pa_heap_t* heap, size_t* fresh) {
  for (size_t k = i; k < i + n; k++) {
    *fresh += slice_take(c, k);
    c->slice_head[k] = (uint16_t)i;
    if (k > i) c->spans[k].kind = PA_SPAN_TAIL;
  }
  c->free_slices -= (uint32_t)n;
  pa_span_t* s = &c->spans[i];
  uint8_t scar = s->scar, colour = s->colour;   /* outlive every use of the slice */
  memset(s, 0, sizeof(*s));
  s->scar = scar;
  s->colour = colour;
  s->check = PA_SPAN_CHECK;
  /* kind and owner under the lock: fork holds it, so a forked child never
     sees a span taken but not yet marked (heap.c, "fork") */
  s->kind = kind;
  s->heap = heap;
  s->nslices = (uint32_t)n;
  if (kind == PA_SPAN_LARGE) s->obj = (char*)c + (i << PA_SLICE_SHIFT);
  s->start = (char*)c + (i << PA_SLICE_SHIFT);
  s->end = s->start + (n << PA_SLICE_SHIFT);
  return s;                            /* carved: 0 (memset) */
}

static unsigned small_made;           /* chunks made at pa_opts.chunk_first (under pa_chunk_lock) */

/* The size of the next regular chunk. With the default size (no
 * PINARENA_CHUNK_SIZE) chunks grow with the heap: an eighth of the regular
 * chunks already mapped, a power of two from pa_opts.chunk_size up to
 * PA_CHUNK_GROWN_MAX. A chunk's tail that no run fits in, and its header,
 * are address space no object uses, and each 2 MiB of address space a
 * program touches at all costs a page-table page that fork copies and exit
 * frees: 1 GiB of 1 MiB objects took 342 chunks of 4 MiB (three objects
 * each), 1.34 GiB of address space and 2784 kB of page tables against
 * glibc's 2108, and fork + exit 8-18 % longer than glibc's (perf/native
 * `fork`). An eighth keeps what growth can cost small beside what the
 * program holds already: the unused tail of the newest chunk, and for a
 * lookup (registration is per chunk) the pages of one chunk pinned. Not
 * with hugetlb pages: a regular chunk takes its pool pages whole. */
static size_t regular_chunk_size(void) {
  size_t size = pa_opts.chunk_size;
  if (!pa_opts.chunk_grow || pa_opts.pages == PA_PAGES_HUGETLB) return size;
  size_t eighth = (size_t)atomic_load_explicit(&pa_gstats.chunk_bytes, memory_order_relaxed) / 8;
  while (size < PA_CHUNK_GROWN_MAX && size * 2 <= eighth) size *= 2;
  return size;
}

/* Empty spans the calling thread's heap kept (free.c, PA_KEEP_EMPTY) that
 * make it give them back before a span takes untouched slices: a walk of
 * its class queues, worth it once they hold a MiB. */
#define PA_GIVE_BACK_KEPT 16

/* Before a span takes untouched slices (fresh: new pages) or a new chunk,
 * the calling thread's own kept empty spans go back to their chunks, once,
 * and the span is placed again. Only the owner may do it: heap is the
 * caller's (pa_heap), or the hint is not read. pa_chunk_lock held; dropped
 * and taken again around the give-back (its releases take it). */
static int give_back_kept_first(pa_heap_t* heap, int* done) {
  if (*done || heap != pa_heap || heap->kept_empty < PA_GIVE_BACK_KEPT) return 0;
  *done = 1;
  pthread_mutex_unlock(&pa_chunk_lock);
  pa_heap_give_back_kept(heap);
  pthread_mutex_lock(&pa_chunk_lock);
  return 1;
}

PA_HIDDEN pa_span_t* pa_span_alloc(size_t n, size_t align, uint8_t kind, pa_heap_t* heap) {
  size_t as = align > PA_SLICE ? align >> PA_SLICE_SHIFT : 1;
  int gave_back = 0;
  int thp = kind == PA_SPAN_LARGE && pa_large_keeps_thp(n);
  pthread_mutex_lock(&pa_chunk_lock);
  for (;;) {
    place_t p;
    int fills = pa_regular_fills();
    int placed = place(n, as, thp, fills, &p);
    if ((!placed || p.fresh != 0) && give_back_kept_first(heap, &gave_back)) continue;
    if (placed) {
      size_t fresh = 0;
      pa_span_t* s = take_run(p.c, p.i, n, kind, heap, &fresh);
      int over = fresh != 0 && pa_reclaim_over_budget();
      pthread_mutex_unlock(&pa_chunk_lock);
      if (unlikely(over)) pa_reclaim_free_dirty();
      return s;
    }
    /* The first two chunks are pa_opts.chunk_first (2 MiB by default) when
       the run fits in half of one: a small program pins 2 MiB, not 4, and a
       bigger one never pins more than with full-size chunks only
       (2 + 2 + 4 + ... <= 4 + 4 + ...). A run that does not fit makes a
       full-size chunk. */
    size_t size = regular_chunk_size();
    if (small_made < 2 && (n + as) << PA_SLICE_SHIFT <= pa_opts.chunk_first / 2) { size = pa_opts.chunk_first; small_made++; }
    int system_thp = thp || pa_regular_keeps_thp();   /* the heap's residency is read here, with its chunks full */
    pthread_mutex_unlock(&pa_chunk_lock);
    pa_reclaim_for(PA_CHUNK_REGULAR, size);   /* free huge chunks' pages make room for it */
    pa_chunk_t* c = chunk_new(size, PA_CHUNK_REGULAR, system_thp);
    if (c == NULL) return NULL;
    pthread_mutex_lock(&pa_chunk_lock);
    c->next = pa_chunks;               /* newest first: it has the most room */
    pa_chunks = c;
  }
}

/* Memory just freed may be what brings free memory over its budget, and a
 * program whose next spans all fit on freed slices never takes slices
 * without pages, the other time a pass is looked for: its freed memory
 * would stay resident however long it sat idle (CPython's test_asyncio:
 * 180 MiB of free slices beside 15 MiB in use for 19 s, while its own
 * mmap'd object arenas grew by 27 MiB: the peak held both). So a release
 * says when a pass is due; the pass gives back what has sat idle since an
 * earlier free (PA_IDLE_MS), not what was freed a moment ago. The callers in
 * free's paths (no lock of ours held) run it; those under pa_heap_lock
 * leave it to the next. */
PA_HIDDEN int pa_span_release(pa_span_t* s) {
  pa_chunk_t* c = pa_chunk_of(s);
  pa_prog_released(s->start, (size_t)(s->end - s->start));
  pthread_mutex_lock(&pa_chunk_lock);
  uint32_t now = pa_busy_ms();
  size_t i = (size_t)(s - c->spans), n = s->nslices;
  uint8_t kind = s->kind;
  s->kind = PA_SPAN_FREE;
  s->owner = NULL;                     /* free's fast path: no longer a small span */
  for (size_t k = i; k < i + n; k++) {
    c->used_map[k / 64] &= ~(1ULL << (k % 64));
    c->slice_head[k] = (uint16_t)k;
    c->spans[k].kind = PA_SPAN_FREE;
  }
  c->free_slices += (uint32_t)n;
  pa_slices_used -= n;
  /* the slices the span may have touched hold pages now: a small span's up
     to the end of its carved blocks (blocks are carved as needed), a large
     one's all */
  size_t touched = n;
  if (kind == PA_SPAN_SMALL) {
    char* carved = s->start + pa_span_carved(s) * s->bsize;
    touched = ((size_t)(carved - (char*)c) + PA_SLICE - 1) / PA_SLICE - i;
    if (touched > n) touched = n;
  }
  for (size_t k = i; k < i + n; k++) {
    c->freed_ms[k] = now;
    if (k < i + touched || slice_dirty(c, k)) {
      c->dirty_map[k / 64] |= 1ULL << (k % 64);
      pa_slices_free_dirty++;            /* its pages may serve other kinds (reclaim.c) */
      c->free_dirty++;
    }
  }
  int due = pa_reclaim_over_budget();
  pthread_mutex_unlock(&pa_chunk_lock);
  return due;
}

/* Small-object counters (see pa_heap_t): local frees are counted as they
 * happen, remote frees as their owners take them in (a remote free still
 * waiting on its span's list is not counted yet); mallocs are the blocks
 * that came back (both kinds) plus the blocks still out, i.e. the `used` of
 * every small span (without the full-list flag). Released spans have
 * used == 0, so only live spans contribute; pa_chunk_lock keeps spans from
 * being taken or released during the walk. */
PA_HIDDEN void pa_small_counts(uint64_t* mallocs, uint64_t* frees, uint64_t* remote) {
  uint64_t m = 0, f = 0, r = 0;
  for (pa_heap_t* h = pa_heaps; h != NULL; h = h->next_all) { f += h->n_free; r += h->n_collected; }
  m = f + r;
  pthread_mutex_lock(&pa_chunk_lock);
  for (pa_chunk_t* c = pa_chunks; c != NULL; c = c->next)
    for (size_t i = c->hdr_slices; i < c->nslices; i++)
      if (c->spans[i].kind == PA_SPAN_SMALL) m += c->spans[i].used & ~PA_USED_FULL;
  pthread_mutex_unlock(&pa_chunk_lock);
  *mallocs = m; *frees = f; *remote = r;
}

/* Grow a large span in place when the slices after it are free. */
PA_HIDDEN int pa_span_grow(pa_span_t* s, size_t n) {
  pa_chunk_t* c = pa_chunk_of(s);
  int ok = 0, over = 0;
  size_t fresh = 0;
  pthread_mutex_lock(&pa_chunk_lock);
  size_t i = (size_t)(s - c->spans), old = s->nslices;
  if (i + n <= c->nslices) {
    size_t k = i + old;
    while (k < i + n && !slice_used(c, k)) k++;
    if (k == i + n) {
      for (k = i + old; k < i + n; k++) {
        fresh += slice_take(c, k);
        c->slice_head[k] = (uint16_t)i;
        c->spans[k].kind = PA_SPAN_TAIL;
      }
      c->free_slices -= (uint32_t)(n - old);
      s->nslices = (uint32_t)n;
      s->end = s->start + (n << PA_SLICE_SHIFT);
      ok = 1;
      over = fresh != 0 && pa_reclaim_over_budget();
    }
  }
  pthread_mutex_unlock(&pa_chunk_lock);
  if (unlikely(over)) pa_reclaim_free_dirty();
  return ok ? 0 : -1;
}

/* ---------------------------------------------------------------------------
   Huge objects: a chunk each, kept for reuse
--------------------------------------------------------------------------- */

_Static_assert(sizeof(pa_chunk_t) <= PA_HUGE_HDR, "a huge chunk header must fit before the object");

#define PAGE_ROUND(x) (((x) + 4095) & ~(size_t)4095)

/* Capacity of a new huge chunk: 16 times the object's power of two, so that
 * a realloc growing it stays in place (a vector grown step by step to 1 GiB
 * moves twice, not at every doubling, and leaves little touched memory
 * behind), and a freed chunk serves the next, bigger object on the pages the
 * last one touched instead of touching new ones. Address space only
 * (MAP_NORESERVE, never touched above the object; one owner-table byte per
 * 2 MiB): when the OS refuses it (RLIMIT_AS, strict overcommit), less, down
 * to the object's own power of two. */
#define PA_HUGE_ROOM_SHIFT 4

static pa_chunk_t* huge_new(unsigned sh) {
  unsigned want = sh + PA_HUGE_ROOM_SHIFT;
  if (want >= PA_ADDR_BITS - 2) want = PA_ADDR_BITS - 2;
  for (unsigned s = want; s + 1 > sh; s--) {
    pa_chunk_t* c = chunk_new((size_t)1 << s, PA_CHUNK_HUGE, pa_huge_system_thp());
    if (c != NULL) return c;
  }
  return NULL;
}

PA_HIDDEN size_t pa_huge_extent(const pa_chunk_t* c) {
  uintptr_t obj = (uintptr_t)c->huge_obj;
  return PAGE_ROUND((size_t)(obj - (uintptr_t)c) + (c->huge_req ? c->huge_req : 1));
}

/* Where a huge chunk's object starts when no alignment above a page is asked
 * for: after the header page and 0..PA_HUGE_COLOURS-1 more pages, the count
 * read from the chunk's address. Chunks are aligned to their power-of-two
 * size, so without it every huge object would start at the same offset
 * modulo 128 MiB or more: arrays streamed side by side (STREAM's a[i] =
 * b[i] + s*c[i], DGEMM's panels) would then map their i-th lines to the same
 * cache sets and evict each other (hpcc's STREAM triad ran at 1/3 of glibc's
 * rate). Pages, not lines: the object stays page aligned, so page moves
 * (pa_huge_move) still work, and a chunk keeps its colour when reused. */
#define PA_HUGE_COLOURS 16

static size_t huge_offset(const pa_chunk_t* c) {
  uint32_t n = (uint32_t)((uintptr_t)c >> c->shift);
  return PA_HUGE_HDR + (size_t)((n * 0x9e3779b1u) >> 28) * 4096;   /* top 4 bits of a multiplicative hash */
}

/* The object of a huge chunk just taken (under pa_chunk_lock): at its
 * coloured offset, or at the first multiple of align above the header. */
static void huge_publish(pa_chunk_t* c, size_t size, size_t align) {
  uintptr_t obj = (uintptr_t)c + huge_offset(c);
  if (align > PA_HUGE_HDR) obj = ((uintptr_t)c + PA_HUGE_HDR + align - 1) & ~(uintptr_t)(align - 1);
  c->huge_req = size;
  c->huge_clean = c->huge_dirty;
  c->huge_heap = pa_heap;
  atomic_store_explicit((_Atomic(void*)*)&c->huge_obj, (void*)obj, memory_order_release);
  /* pa_gstats.huge_live changes where an object's extent does: published
     here and released or moved out (pa_chunk_lock), resized in place by its
     owner (no lock: hence atomic). Relaxed: reclaim reads it as an estimate
     under pa_chunk_lock; nothing else is published through it. */
  atomic_fetch_add_explicit(&pa_gstats.huge_live, pa_huge_extent(c), memory_order_relaxed);
}

/* A chunk taken off the free list (or new) is out of trim's reach: trim
 * only releases chunks on the free list, under pa_chunk_lock, so nothing
 * here races with it. */
PA_HIDDEN pa_chunk_t* pa_huge_alloc(size_t size, size_t align, int fresh) {
  /* the object starts at its coloured offset (at most PA_HUGE_COLOURS pages
     in), or at the first multiple of align; even a zero-byte object owns a
     byte (its page) inside the chunk */
  size_t need = (align > PA_HUGE_HDR ? align : PA_HUGE_HDR * PA_HUGE_COLOURS) + (size ? size : 1);
  if (need < size) { errno = ENOMEM; return NULL; }
  unsigned sh = log2_ceil(need);
  if (sh < PA_TABLE_SHIFT) sh = PA_TABLE_SHIFT;
  if (sh >= PA_ADDR_BITS - 2) { errno = ENOMEM; return NULL; }
  /* fresh: the target of pa_huge_move, whose pages must be untouched. The
     object is published under the lock: fork holds it, so a forked child
     never sees a chunk taken but its object not yet set (heap.c, "fork"). */
  pa_chunk_t* c = NULL;
  if (!fresh) {
    pthread_mutex_lock(&pa_chunk_lock);
    c = pa_huge_free_take(need);
    if (c != NULL) huge_publish(c, size, align);
    pthread_mutex_unlock(&pa_chunk_lock);
  }
  if (c == NULL) {
    pthread_mutex_lock(&pa_chunk_lock);
    int room = pa_huge_free_reserve();   /* its entry for when it is free: a release cannot fail */
    pthread_mutex_unlock(&pa_chunk_lock);
    if (room != 0) return NULL;
    c = huge_new(sh);
    if (c == NULL) {
      pthread_mutex_lock(&pa_chunk_lock);
      pa_huge_free_unreserve();
      pthread_mutex_unlock(&pa_chunk_lock);
      return NULL;
    }
    pthread_mutex_lock(&pa_chunk_lock);
    c->next = pa_huge_all;
    pa_huge_all = c;
    huge_publish(c, size, align);
    pthread_mutex_unlock(&pa_chunk_lock);
  }
  size_t ext = pa_huge_extent(c);
  if (ext > c->huge_dirty) {
    if (!fresh) pa_reclaim_for(PA_CHUNK_HUGE, ext - c->huge_dirty);   /* free slices' pages make room */
    c->huge_dirty = ext;
  }
  /* before any registration asks for huge pages; fresh: pa_huge_move does it once the pages are in (a move
     brings the flags of the mapping they came from) */
  if (!fresh) pa_huge_refuse_edges(c);
  if (pa_opts.reg_eager && !fresh) pa_register_cover(c, ext);     /* fresh: pa_huge_move registers after the move */
  atomic_fetch_add(&pa_gstats.huge_allocs, 1);
  return c;
}

/* The live object of c (the caller's) to n bytes, in place when it fits
 * the chunk's capacity. */
PA_HIDDEN int pa_huge_resize(pa_chunk_t* c, size_t n) {
  size_t off = (size_t)((uintptr_t)c->huge_obj - (uintptr_t)c);
  if (n > ((size_t)1 << c->shift) - off) return -1;
  size_t before = pa_huge_extent(c);
  c->huge_req = n;
  size_t ext = pa_huge_extent(c);
  atomic_fetch_add_explicit(&pa_gstats.huge_live, ext - before, memory_order_relaxed);   /* modulo 2^64: a shrink subtracts */
  if (ext > c->huge_dirty) {
    pa_reclaim_for(PA_CHUNK_HUGE, ext - c->huge_dirty);
    c->huge_dirty = ext;
  }
  pa_huge_refuse_edges(c);
  if (pa_opts.reg_eager) pa_register_cover(c, ext);
  return 0;
}

/* The live object of c outgrew the chunk: move it into a fresh chunk for n
 * bytes by moving its pages, not copying them (realloc of a huge object, as
 * glibc's mremap, but the old address range is never used again: no later
 * object lands on an address a cache may know with other frames). Only
 * when the object's pages are all the chunk ever touched (else the pages
 * above it would be stranded: the copy path reuses the chunk instead) and
 * the object starts at its coloured offset (huge_offset). c is retired: out of the owner
 * table and the lists, its registration gone, its header page kept (never
 * handed out, so never the program's to register). NULL: not moved. */
/* Chunks whose object moved out (pa_huge_move), by next, under
 * pa_chunk_lock: each holds its header page and the PROT_NONE range the
 * object had — addresses once handed out, which nobody may map again before
 * pinarena_trim() has told the program (the release callback) and given them
 * back. The room above the object was never handed out and never registered
 * (the chunk's own registration is gone): it goes back to the OS at once.
 * So a retired chunk costs two VMAs and its object's old size in address
 * space until the next trim, and a program that never trims never retires
 * twice for the same memory: the moved object's new chunk (16 times its size)
 * is kept and serves the next objects up to that size in place. */
static pa_chunk_t* huge_retired;

static void huge_retire(pa_chunk_t* c, size_t keep) {
  size_t cap = (size_t)1 << c->shift;
  if (keep < cap) {
    pa_mapping_t room = { .addr = (char*)c + keep, .size = cap - keep };
    int saved = errno;
    pa_os_unmap_chunk(&room);          /* never handed out; the registration of c is released */
    errno = saved;
  }
  c->os.size = keep;                   /* what trim gives back */
  pthread_mutex_lock(&pa_chunk_lock);
  c->next = huge_retired;
  huge_retired = c;
  pthread_mutex_unlock(&pa_chunk_lock);
}

PA_HIDDEN void* pa_huge_move(pa_chunk_t* c, size_t n) {
  char* obj = c->huge_obj;
  size_t off = huge_offset(c);
  if (obj != (char*)c + off || c->huge_dirty > pa_huge_extent(c)) return NULL;
  pa_chunk_t* d = pa_huge_alloc(n, PA_ALIGN_MIN, 1);
  if (d == NULL) return NULL;
  size_t len = pa_huge_extent(c) - off;
  size_t cap = (size_t)1 << c->shift;
  pa_register_notify_release(c);           /* the old range leaves: caches drop it */
  pa_register_release(c);
  int relock = pa_prog_unlock_for_move(obj, len);
  if (pa_os_move_pages(obj, len, d->huge_obj) != 0) {
    if (relock) pa_prog_relock(obj, len);
    (void)pa_huge_release(d);                /* an error path: no reclaim pass from here */
    return NULL;
  }
  pa_prog_moved(obj, d->huge_obj, len);   /* what the program set on the pages went with them */
  if (relock) pa_prog_relock(d->huge_obj, len);
  pa_huge_refuse_edges(d);                 /* after the move: its pages brought their mapping's flags */
  if (pa_opts.reg_eager) pa_register_cover(d, pa_huge_extent(d));   /* only now: d's pages are the moved ones */
  pthread_mutex_lock(&pa_chunk_lock);
  for (pa_chunk_t** pp = &pa_huge_all; *pp != NULL; pp = &(*pp)->next)
    if (*pp == c) { *pp = c->next; break; }
  pa_huge_free_unreserve();                /* retired: never free again */
  pthread_mutex_unlock(&pa_chunk_lock);
  table_set(c, cap, 0, 0);
  atomic_fetch_sub_explicit(&pa_gstats.huge_live, pa_huge_extent(c), memory_order_relaxed);
  c->huge_obj = NULL;
  atomic_fetch_sub(&pa_gstats.huge_chunks, 1);
  atomic_fetch_sub(&pa_gstats.huge_bytes, cap);
  huge_retire(c, PAGE_ROUND(off + len));
  return d->huge_obj;
}

PA_HIDDEN int pa_huge_release(pa_chunk_t* c) {
  if (c->huge_dirty > PA_HUGE_HDR) pa_prog_released((char*)c + PA_HUGE_HDR, c->huge_dirty - PA_HUGE_HDR);
  pthread_mutex_lock(&pa_chunk_lock);
  c->huge_freed_ms = pa_busy_ms();
  c->huge_heap = pa_heap;              /* the last to touch it: see free.c, fork_ignores_free */
  atomic_fetch_sub_explicit(&pa_gstats.huge_live, pa_huge_extent(c), memory_order_relaxed);
  c->huge_obj = NULL;
  pa_huge_free_push(c);
  int due = pa_reclaim_over_budget();  /* as pa_span_release */
  pthread_mutex_unlock(&pa_chunk_lock);
  return due;
}

/* Release wholly free chunks to the OS: callback, deregister, withdraw from
 * the table, unmap. Returns the bytes released. Only chunks that are free
 * under pa_chunk_lock qualify: regular chunks with every slice free, huge
 * chunks on the free list (a huge chunk being handed out has left the list
 * under the lock before its object is set). */
PA_HIDDEN size_t pa_trim_chunks(void) {
  pa_chunk_t* victims = NULL;          /* chained by next_free */
  pthread_mutex_lock(&pa_chunk_lock);
  for (pa_chunk_t** pp = &pa_chunks; *pp != NULL;) {
    pa_chunk_t* c = *pp;
    if (c->free_slices == c->nslices - c->hdr_slices) {
      for (size_t k = c->hdr_slices; k < c->nslices; k++) pa_slices_free_dirty -= (c->dirty_map[k / 64] >> (k % 64)) & 1;
      *pp = c->next; c->next_free = victims; victims = c;
    }
    else pp = &c->next;
  }
  for (size_t i = 0; i < pa_huge_free_n; i++) {
    pa_chunk_t* f = pa_huge_free[i].chunk;
    for (pa_chunk_t** pp = &pa_huge_all; *pp != NULL; pp = &(*pp)->next)
      if (*pp == f) { *pp = f->next; break; }
    pa_huge_free_unreserve();
    f->next_free = victims;
    victims = f;
  }
  pa_huge_free_n = 0;
  pa_chunk_t* retired = huge_retired;
  huge_retired = NULL;
  pthread_mutex_unlock(&pa_chunk_lock);
  size_t total = 0;
  while (retired != NULL) {            /* moved-out ranges: the program hears it again, then they go */
    pa_chunk_t* c = retired;
    retired = c->next;
    pa_register_notify_release(c);
    pa_mapping_t os = { .addr = c, .size = c->os.size };
    int saved = errno;
    pa_os_unmap_chunk(&os);            /* its registration went at the move */
    errno = saved;
  }
  while (victims != NULL) {
    pa_chunk_t* c = victims;
    victims = c->next_free;
    size_t size = (size_t)1 << c->shift;
    pa_register_notify_release(c);   /* the application hears it first */
    pa_register_release(c);          /* then the pin goes */
    table_set(c, size, 0, c->kind == PA_CHUNK_REGULAR);
    pa_mapping_t os = c->os;
    if (c->kind == PA_CHUNK_HUGE) { atomic_fetch_sub(&pa_gstats.huge_chunks, 1); atomic_fetch_sub(&pa_gstats.huge_bytes, size); }
    else {
      atomic_fetch_sub(&pa_gstats.chunks, 1);
      atomic_fetch_sub(&pa_gstats.chunk_bytes, size);
      if (c->thp_system) atomic_fetch_sub(&pa_gstats.thp_chunk_bytes, size);
    }
    int saved = errno;
    pa_os_unmap_chunk(&os);          /* not registered any more (invariant in os.h) */
    errno = saved;
    atomic_fetch_add(&pa_gstats.released_bytes, size);
    atomic_fetch_add(&pa_gstats.released_chunks, 1);
    total += size;
  }
  return total;
}

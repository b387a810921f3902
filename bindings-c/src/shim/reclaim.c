/* reclaim.c — memory changes kind: the pages that freed memory of one kind
 * holds (free huge chunks, free slices of regular chunks, which freed small
 * and large spans leave, free remote chunks) serve the other kinds, so a
 * program whose phases move from huge objects to small ones and back holds
 * its peak, not the sum of its phases, without ever calling pinarena_trim().
 *
 * The rule that keeps addresses meaning the same frames: only memory no
 * registration of the shim's can cover gives its pages back — a chunk never
 * registered, never pending registration and never refused one (a chunk
 * that was looked up keeps every frame it has until pinarena_trim() and the
 * release callback). Pages go with MADV_DONTNEED (pa_os_discard): the
 * address range stays the shim's and reads as zero, so a free huge chunk
 * still serves the next huge object in place and a regular chunk's slices
 * still serve spans. Remote chunks without any registration (no verbs, or
 * per-buffer MR keys, all deregistered at free) are unmapped.
 *
 * What it cannot see: a registration the program (or its MPI) made itself
 * of heap memory the shim never looked up — an MPI's cache keeps the
 * registration of a freed buffer, and a discard would give that address new
 * frames: the seed's hazard. So by default (PINARENA_RECLAIM unset) reclaim
 * runs only while no library that registers memory of its own is loaded in
 * the process (an MPI, UCX, libfabric, librdmacm, or libibverbs loaded by the
 * program rather than by the shim's own registrar): a program without an RDMA
 * stack changes kinds freely, an MPI job keeps every touched page until
 * pinarena_trim() and its callback. PINARENA_RECLAIM=1 reclaims whatever is
 * loaded (every discard is still posted to the invalidation sinks, which feed
 * UCX's cache, stack_events.c), PINARENA_RECLAIM=0 never. A program that pins
 * its own malloc memory with io_uring fixed buffers is not seen either: it
 * sets PINARENA_RECLAIM=0.
 *
 * When: a regular chunk about to be mapped takes its size from free huge
 * chunks; a huge object about to use pages its chunk never had takes as
 * much from other free huge chunks, free slices with pages and free remote
 * chunks — between kinds idle memory first, memory freed moments ago only
 * while freed memory of that kind outweighs all in use (pa_reclaim_for); a
 * span about to take slices without
 * pages while freed memory holds more than its budget gives back what has
 * sat idle for PA_IDLE_MS (free slices, free huge chunks: see
 * pa_reclaim_over_budget). Cold paths only; the registration
 * lock is only tried (a nested malloc inside the registrar skips the
 * reclaim), taken before the chunk lock as everywhere, so no registration
 * can start on a chunk between the check and the discard. */
#define _GNU_SOURCE 1   /* dl_iterate_phdr */
#include "internal.h"

#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

/* The libraries that register memory themselves (their own caches keyed by
   address). libibverbs counts only when the program loaded it: the shim's
   registrar opens its own handle (register.c, pa_verbs_loaded_by_program). */
static int registers_memory(const char* path) {
  static const char* const stacks[] = { "/libmpi.so", "/libucp.so", "/libuct.so", "/libfabric.so",
                                        "/librdmacm.so", "/libmpich.so" };
  for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++)
    if (strstr(path, stacks[i]) != NULL) return 1;
  return strstr(path, "/libibverbs.so") != NULL && pa_verbs_loaded_by_program();
}

/* The loader's count of objects ever loaded when the list was last walked and held no stack. Once a
   stack is seen reclaim stays off for good (an unload is rare; off is the safe side). Races between
   threads only repeat a walk. */
struct walk { int first; unsigned long long adds; };
static unsigned long long walked_adds;
static int stack_loaded;

static int stack_seen(struct dl_phdr_info* info, size_t size, void* arg) {
  struct walk* w = arg;
  if (w->first) {                     /* the count read before this walk looks at any object */
    w->first = 0;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs)) {
      w->adds = info->dlpi_adds;
      if (w->adds != 0 && w->adds == __atomic_load_n(&walked_adds, __ATOMIC_RELAXED)) return 1;   /* unchanged */
    }
  }
  return info->dlpi_name != NULL && registers_memory(info->dlpi_name) ? 2 : 0;
}

/* Reclaim allowed now? dl_iterate_phdr allocates nothing; it is called before
   any lock of ours is taken (it takes the loader's list lock, recursive for a
   thread inside dlopen that mallocs). */
static int reclaim_allowed(void) {
  if (pa_opts.reclaim == 0) return 0;
  if (pa_opts.reclaim == 2) return 1;
  if (__atomic_load_n(&stack_loaded, __ATOMIC_RELAXED)) return 0;
  struct walk w = { 1, 0 };
  int r = dl_iterate_phdr(stack_seen, &w);
  if (r == 1) return 1;               /* nothing loaded since a walk that found no stack */
  if (r == 2) { __atomic_store_n(&stack_loaded, 1, __ATOMIC_RELAXED); return 0; }
  __atomic_store_n(&walked_adds, w.adds, __ATOMIC_RELAXED);
  return 1;
}

static inline int free_dirty(const pa_chunk_t* c, size_t k) {
  return (int)(((c->dirty_map[k / 64] & ~c->used_map[k / 64]) >> (k % 64)) & 1);
}

/* Free memory whose pages have sat unused while the process ran for
 * PA_IDLE_MS of CPU time (free slices, free huge chunks): a program that
 * frees and takes back its runs at once (a churn of large objects,
 * perf/native `big`: within a millisecond) never sees its pages go, even
 * when it waits for a CPU on a loaded machine (a wall clock would call its
 * memory idle then: `big` took 3-10 times the page faults); one whose freed
 * runs lie where no later object fits (threads that each had their
 * buffers, CPython's test_asyncio.test_ssl) gives them back. 64 ms: at 32
 * test_ssl's peak was 1.12-1.20 times glibc's, not 1.22-1.26, but `big`
 * took 8 % more CPU time; at 16 more page faults than with no discard. */
#define PA_IDLE_MS 64

static uint64_t busy_read_at;          /* pa_coarse_ms() of the last read (pa_chunk_lock) */
static uint32_t busy_ms;

PA_HIDDEN uint32_t pa_busy_ms(void) {
  uint64_t now = pa_coarse_ms();
  if (now - busy_read_at >= 4) {        /* one system call per 4 ms at most: staler means later discards */
    struct timespec t;
    int saved = errno;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0)
      busy_ms = (uint32_t)((uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u);
    errno = saved;
    busy_read_at = now;
  }
  return busy_ms;
}

/* Free huge chunks' pages above the header, up to `want` bytes, each
 * chunk's from the top of what it touched (its lower pages serve the next
 * object in place); with `now` != 0 only those of chunks free for
 * PA_IDLE_MS. Both locks held. */
static size_t from_huge(size_t want, uint32_t now) {
  size_t got = 0;
  for (size_t i = pa_huge_free_n; i-- > 0 && got < want;) {   /* the last freed first, as the list did */
    pa_huge_free_t* f = &pa_huge_free[i];
    pa_chunk_t* c = f->chunk;
    if (f->dirty <= PA_HUGE_HDR || !pa_chunk_recyclable(c)) continue;
    if (now != 0 && (uint32_t)(now - c->huge_freed_ms) < PA_IDLE_MS) continue;
    size_t len = c->huge_dirty - PA_HUGE_HDR, rest = want - got;
    if (len > rest) len = (rest + PA_PAGE - 1) & ~(size_t)(PA_PAGE - 1);   /* still <= len: pages */
    if (pa_os_discard((char*)c + c->huge_dirty - len, len) != 0) continue;
    c->huge_dirty -= len;                 /* untouched above again: calloc zeroes nothing there */
    f->dirty = c->huge_dirty;
    got += len;
  }
  return got;
}

static inline int idle(const pa_chunk_t* c, size_t k, uint32_t now) {
  return free_dirty(c, k) && (uint32_t)(now - c->freed_ms[k]) >= PA_IDLE_MS;
}

/* Runs of free slices of c that may hold pages given back until `want`
 * bytes went, the last run cut to what is still wanted; with `now` != 0
 * only those idle for PA_IDLE_MS. Untouched free slices are neither
 * discarded nor counted: a huge object that asks for 2 MiB of room takes
 * 2 MiB of pages, not the whole freed run (up to a chunk) they lie in,
 * which the next spans would fault in again. Both locks held. */
static size_t discard_free(pa_chunk_t* c, size_t want, uint32_t now) {
  size_t got = 0;
  for (size_t i = c->hdr_slices; i < c->nslices && got < want;) {
    if (now ? !idle(c, i, now) : !free_dirty(c, i)) { i++; continue; }
    size_t j = i, cap = i + ((want - got + ((size_t)1 << PA_SLICE_SHIFT) - 1) >> PA_SLICE_SHIFT);
    while (j < c->nslices && j < cap && (now ? idle(c, j, now) : free_dirty(c, j))) j++;
    size_t len = (j - i) << PA_SLICE_SHIFT;
    if (pa_os_discard((char*)c + (i << PA_SLICE_SHIFT), len) == 0) {
      for (size_t k = i; k < j; k++) c->dirty_map[k / 64] &= ~(1ULL << (k % 64));
      pa_slices_free_dirty -= j - i;
      c->free_dirty -= (uint32_t)(j - i);
      got += len;
    }
    i = j;
  }
  return got;
}

/* Free slices of regular chunks that hold pages, up to `want` bytes. Both
 * locks held. */
static size_t from_slices(size_t want, uint32_t now) {
  size_t got = 0;
  for (pa_chunk_t* c = pa_chunks; c != NULL && got < want; c = c->next)
    if (c->free_dirty != 0 && pa_chunk_recyclable(c)) got += discard_free(c, want - got, now);
  return got;
}

/* Free slices that keep their pages: at most 1/32 of the slices in use, at
 * least 4 MiB, plus those registered chunks hold (`kept`: they keep every
 * page, the rule at the top). Freed memory stays resident for the next span
 * of any kind (chunk.c places spans on it first); but when a span has to
 * land on slices without pages while freed slices hold more than the budget,
 * or while free huge chunks may hold pages, the idle ones go back (and the
 * idle free huge chunks' pages), at most one pass per PA_IDLE_MS / 4: the
 * program adds pages where its live memory grows, not because its freed
 * memory lies where the next run does not fit. */
#define PA_FREE_DIRTY_MIN ((size_t)(4u << 20) >> PA_SLICE_SHIFT)
static size_t kept;                    /* free dirty slices the last pass could not give back (pa_chunk_lock) */
static uint64_t next_pass;             /* pa_coarse_ms() before which no pass runs (pa_chunk_lock) */

static size_t free_budget(void) {
  size_t b = pa_slices_used / 32;
  return b < PA_FREE_DIRTY_MIN ? PA_FREE_DIRTY_MIN : b;
}

PA_HIDDEN int pa_reclaim_over_budget(void) {
  if (pa_opts.reclaim == 0) return 0;
  if (kept > pa_slices_free_dirty) kept = pa_slices_free_dirty;
  if (pa_slices_free_dirty <= kept + free_budget() && pa_huge_free_n == 0) return 0;
  uint64_t now = pa_coarse_ms();
  if (now < next_pass) return 0;
  next_pass = now + PA_IDLE_MS / 4;
  return 1;
}

PA_HIDDEN void pa_reclaim_free_dirty(void) {
  int allowed = reclaim_allowed();
  if (allowed && pthread_mutex_trylock(&pa_reg_lock) != 0) return;   /* a registration runs: next time */
  int saved = errno;
  pthread_mutex_lock(&pa_chunk_lock);
  uint32_t now = pa_busy_ms() | 1;     /* 0 asks discard_free for every free slice */
  size_t budget = free_budget(), left = 0;   /* left: in chunks that keep their pages */
  for (pa_chunk_t* c = pa_chunks; c != NULL; c = c->next) {
    if (!allowed || !pa_chunk_recyclable(c)) {
      for (size_t k = c->hdr_slices; k < c->nslices; k++) left += free_dirty(c, k);
      continue;
    }
    if (pa_slices_free_dirty > budget + left)
      discard_free(c, (pa_slices_free_dirty - budget - left) << PA_SLICE_SHIFT, now);
  }
  kept = left;
  if (allowed) from_huge(SIZE_MAX, now);
  pthread_mutex_unlock(&pa_chunk_lock);
  if (allowed) pthread_mutex_unlock(&pa_reg_lock);
  errno = saved;
}

/* Free huge chunks' pages in bytes, the recyclable ones. Both locks held. */
static size_t huge_free_dirty(void) {
  size_t n = 0;
  for (size_t i = 0; i < pa_huge_free_n; i++)
    if (pa_huge_free[i].dirty > PA_HUGE_HDR && pa_chunk_recyclable(pa_huge_free[i].chunk)) n += pa_huge_free[i].dirty - PA_HUGE_HDR;
  return n;
}

/* Bytes in use: slices in spans and the extents of live huge objects (a
 * sum kept where they change: a walk over every huge chunk here cost a
 * cache and TLB miss per chunk at every new huge object — perf/native
 * `aligned`, 100 huge chunks: 1.1 % of its samples). Both locks held. */
static size_t in_use(void) {
  return (pa_slices_used << PA_SLICE_SHIFT) + atomic_load_explicit(&pa_gstats.huge_live, memory_order_relaxed);
}

/* Free huge chunks' pages a huge object in need leaves alone when they were
 * freed moments ago: up to this part of the memory in use. A program that
 * replaces huge objects at random keeps a few MiB of them between a free and
 * the next malloc (perf/native `big`: 2-18 MiB beside 100 MiB in use); taking
 * those made the chunks they lay in fault them in again at their next object
 * (5.5 k more page faults than mimalloc's 49 k). */
#define PA_HUGE_RESERVE_PART 8

/* Room for `want` bytes of new pages of one kind from freed memory. A huge
 * object takes free huge chunks' pages first: the idle ones, then those freed
 * a moment ago beyond the reserve above. They serve only huge objects, and
 * this one landed elsewhere (CPython's StringIO grows a buffer by realloc to
 * 89 MB and shrinks it to 4 KiB; the next buffer started in a smaller free
 * chunk, moved to a chunk of its own past that chunk's size and took new
 * pages while the first one's sat free: test_email held 230 MiB to glibc's
 * 168; there the free huge pages, 29-87 MB, are 1/4 to 1.7 times the memory
 * in use at every such step). Between kinds (free slices
 * for a huge object, free huge chunks for a regular chunk) idle memory goes
 * first, unused for PA_IDLE_MS (a program that frees an object and takes
 * another of the other kind within moments — perf/native `big`: objects of
 * 64 KiB to 4 MiB replaced at random — would fault its own pages back in:
 * 80 k minor faults instead of 52 k, for 2 % of peak); memory freed moments
 * ago only while the other kind's freed pages outweigh all memory in use: a
 * phase change (160 MiB of huge objects freed, then 160 MiB of small ones,
 * test_mem.c's cgroup) must not hold both phases at once. */
PA_HIDDEN void pa_reclaim_for(int kind, size_t want) {
  if (!reclaim_allowed()) return;
  size_t got = 0;
  if (pthread_mutex_trylock(&pa_reg_lock) == 0) {
    int saved = errno;
    pthread_mutex_lock(&pa_chunk_lock);
    uint32_t now = pa_busy_ms() | 1;
    if (kind == PA_CHUNK_REGULAR) {
      got = from_huge(want, now);
      if (got < want && huge_free_dirty() > in_use()) got += from_huge(want - got, 0);
    } else {
      got = from_huge(want, now);
      size_t used = in_use();              /* discards leave it alone: one walk serves both tests */
      size_t spare = huge_free_dirty(), reserve = used / PA_HUGE_RESERVE_PART;
      if (got < want && spare > reserve) {
        size_t over = spare - reserve;
        got += from_huge(want - got < over ? want - got : over, 0);
      }
      if (got < want) got += from_slices(want - got, now);
      if (got < want && (pa_slices_free_dirty << PA_SLICE_SHIFT) > used) got += from_slices(want - got, 0);
    }
    pthread_mutex_unlock(&pa_chunk_lock);
    pthread_mutex_unlock(&pa_reg_lock);
    errno = saved;
  }
  if (got < want) pa_remote_reclaim(want - got);
}

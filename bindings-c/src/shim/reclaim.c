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
 * much from free slices (only chunks where a span was released since the
 * last discard) and free remote chunks. Cold paths only; the registration
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

/* Free huge chunks' pages above the header, up to `want` bytes. Both locks held. */
static size_t from_huge(size_t want) {
  size_t got = 0;
  for (pa_chunk_t* c = pa_huge_chunks; c != NULL && got < want; c = c->next_free) {
    if (!pa_chunk_recyclable(c) || c->huge_dirty <= PA_HUGE_HDR) continue;
    size_t len = c->huge_dirty - PA_HUGE_HDR;
    if (pa_os_discard((char*)c + PA_HUGE_HDR, len) != 0) continue;
    c->huge_dirty = PA_HUGE_HDR;          /* untouched again: calloc zeroes nothing above the header */
    got += len;
  }
  return got;
}

/* Free slice runs of regular chunks, up to `want` bytes. Both locks held. */
static size_t from_slices(size_t want) {
  size_t got = 0;
  for (pa_chunk_t* c = pa_chunks; c != NULL && got < want; c = c->next) {
    if (!c->dirty_free || !pa_chunk_recyclable(c)) continue;
    size_t i = c->hdr_slices;
    while (i < c->nslices) {
      if ((c->used_map[i / 64] >> (i % 64)) & 1) { i++; continue; }
      size_t j = i;
      while (j < c->nslices && !((c->used_map[j / 64] >> (j % 64)) & 1)) j++;
      size_t len = (j - i) << PA_SLICE_SHIFT;
      if (pa_os_discard((char*)c + (i << PA_SLICE_SHIFT), len) == 0) got += len;
      i = j;
    }
    c->dirty_free = 0;
  }
  return got;
}

PA_HIDDEN void pa_reclaim_for(int kind, size_t want) {
  if (!reclaim_allowed()) return;
  size_t got = 0;
  if (pthread_mutex_trylock(&pa_reg_lock) == 0) {
    int saved = errno;
    pthread_mutex_lock(&pa_chunk_lock);
    got = kind == PA_CHUNK_REGULAR ? from_huge(want) : from_slices(want);
    pthread_mutex_unlock(&pa_chunk_lock);
    pthread_mutex_unlock(&pa_reg_lock);
    errno = saved;
  }
  if (got < want) pa_remote_reclaim(want - got);
}

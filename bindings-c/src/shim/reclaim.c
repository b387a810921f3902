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
 * of heap memory the shim never looked up. Each discard is posted to the
 * invalidation sinks (an address-keyed cache on them drops the range), but a
 * cache that hooks libc symbols does not hear a system call; such a program
 * either takes its keys from pinarena_lookup (which makes the chunk
 * registered, so kept) or sets PINARENA_RECLAIM=0 (every touched page kept
 * until pinarena_trim, as before).
 *
 * When: a regular chunk about to be mapped takes its size from free huge
 * chunks; a huge object about to use pages its chunk never had takes as
 * much from free slices (only chunks where a span was released since the
 * last discard) and free remote chunks. Cold paths only; the registration
 * lock is only tried (a nested malloc inside the registrar skips the
 * reclaim), taken before the chunk lock as everywhere, so no registration
 * can start on a chunk between the check and the discard. */
#include "internal.h"

#include <errno.h>

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
  if (!pa_opts.reclaim) return;
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

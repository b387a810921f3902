/* program.h — what the program does to the shim's memory (program.c).
 *
 * The shim's promise is that an address it handed out keeps its frames. The
 * program's own calls on shim memory — malloc'd memory and the remote
 * buffers of pinarena_alloc_remote alike — keep it too:
 *   - madvise that would drop pages (MADV_DONTNEED, DONTNEED_LOCKED) zeroes
 *     the range in place instead, which is what a private anonymous mapping
 *     promises; MADV_FREE keeps the bytes (allowed: freed pages may keep
 *     them); over pages the program locked (mlock, mlock2) DONTNEED and
 *     FREE fail with EINVAL as the kernel's do; MADV_REMOVE fails with
 *     EINVAL as on any private anonymous mapping; MADV_GUARD_INSTALL fails
 *     with EINVAL (as the kernel's own answer on mappings it cannot guard)
 *     since it would drop the pages;
 *   - munmap, mremap and mmap(MAP_FIXED) over shim memory abort with a
 *     message naming the call, whose memory and the address (glibc's
 *     malloc'd memory gives no defined behaviour there either: its free
 *     would then walk unmapped or foreign memory);
 *   - attributes the program sets (mprotect, pkey_mprotect, mlock, mlock2,
 *     MADV_DONTFORK, MADV_WIPEONFORK, MADV_DONTDUMP) are recorded per 64 KiB
 *     slice and reset when the memory goes back to the shim (a span
 *     released to its chunk, a huge chunk to the free list, a remote
 *     buffer freed: the pages it touches), so the next owner gets default
 *     pages; a huge object moved by realloc takes its marks along. A
 *     program that never changes attributes of shim memory pays one load
 *     per release.
 * The madvise and mmap-family hooks live in memhooks.c and call in here
 * through weak references (libpinarena-hooks.so has no shim memory); the
 * mprotect and mlock hooks live here. */
#ifndef PA_SHIM_PROGRAM_H
#define PA_SHIM_PROGRAM_H

#include <stdatomic.h>
#include <stddef.h>
#include "../common.h"

/* Set once the program changed an attribute of shim memory. */
extern PA_HIDDEN _Atomic int pa_prog_changed;

PA_HIDDEN void pa_prog_reset_slow(void* addr, size_t len);

/* [addr, addr + len) (page-aligned) goes back to the shim: undo what the
 * program set on it. */
static inline void pa_prog_released(void* addr, size_t len) {
  if (unlikely(atomic_load_explicit(&pa_prog_changed, memory_order_relaxed))) pa_prog_reset_slow(addr, len);
}

PA_HIDDEN void pa_prog_moved_slow(const void* from, const void* to, size_t len);

/* The pages of [from, from + len) now live at `to` (pa_huge_move; from and
 * to alike within their 64 KiB slices): what the program set on them moved
 * with them, and is undone at to's release. */
static inline void pa_prog_moved(const void* from, const void* to, size_t len) {
  if (unlikely(atomic_load_explicit(&pa_prog_changed, memory_order_relaxed))) pa_prog_moved_slow(from, to, len);
}

PA_HIDDEN int  pa_prog_unlock_slow(const void* from, size_t len);
PA_HIDDEN void pa_prog_relock(const void* at, size_t len);

/* Before pa_huge_move moves [from, from + len): 1 when the program locked it,
 * its lock then taken off; pa_prog_relock puts it back where the pages are
 * after the move (or at from if they did not move). */
static inline int pa_prog_unlock_for_move(const void* from, size_t len) {
  return unlikely(atomic_load_explicit(&pa_prog_changed, memory_order_relaxed)) ? pa_prog_unlock_slow(from, len) : 0;
}

/* memhooks.c's entry points (weak there). */
/* madvise over a range that holds shim memory: 1 with *ret (and errno) set
 * when handled here, 0 to make the call as it is. */
PA_HIDDEN int  pa_prog_madvise(void* addr, size_t len, int advice, long* ret);
/* A call that would unmap or replace [addr, addr + len): aborts if the range
 * holds shim memory ("pinarena: <who> memory of malloc at 0x…", or of
 * pinarena_alloc_remote). */
PA_HIDDEN void pa_prog_unmaps(const char* who, const void* addr, size_t len);

#endif

/* huge_free.c — the free huge chunks, as a compact array.
 *
 * A huge object takes the free chunk that serves it touching the fewest new
 * pages (chunk.c). Each chunk's header is a page of its own, far from the
 * others: a list through the headers cost a cache and TLB miss per chunk at
 * every huge malloc (perf/native `big`: 14 free chunks walked on average, up
 * to 29, 4 % of the run in that walk). Here what the choice reads — the
 * chunk, its capacity and how far it was written — lies in one array, three
 * entries to two lines.
 *
 * Room is reserved before a huge chunk is made (pa_huge_free_reserve), so a
 * release never fails for want of an entry: there is one entry's room for
 * every huge chunk that exists or is being made. Everything under
 * pa_chunk_lock; the array is the library's own memory (raw_map.h). */
#include "internal.h"
#include "../raw_map.h"

#include <errno.h>
#include <string.h>

PA_HIDDEN pa_huge_free_t* pa_huge_free;   /* the free huge chunks, [0, pa_huge_free_n) */
PA_HIDDEN size_t pa_huge_free_n;
static size_t room;                       /* entries mapped */
static size_t promised;                   /* huge chunks that exist or are being made */

/* One more huge chunk may come: room for its entry, or -1 (ENOMEM). */
PA_HIDDEN int pa_huge_free_reserve(void) {
  if (promised < room) { promised++; return 0; }
  size_t more = room ? room * 2 : 4096 / sizeof(pa_huge_free_t);
  pa_huge_free_t* a = pa_raw_map(more * sizeof(pa_huge_free_t));
  if (a == NULL) { errno = ENOMEM; return -1; }
  if (pa_huge_free_n) memcpy(a, pa_huge_free, pa_huge_free_n * sizeof(pa_huge_free_t));
  if (room) pa_raw_unmap(pa_huge_free, room * sizeof(pa_huge_free_t));
  pa_huge_free = a;
  room = more;
  promised++;
  return 0;
}

/* A huge chunk is gone (unmapped, retired) or was never made. */
PA_HIDDEN void pa_huge_free_unreserve(void) { promised--; }

/* c is free: listed, with what the choice reads copied beside it. */
PA_HIDDEN void pa_huge_free_push(pa_chunk_t* c) {
  pa_huge_free[pa_huge_free_n++] = (pa_huge_free_t){ .chunk = c, .cap = (size_t)1 << c->shift, .dirty = c->huge_dirty };
}

/* Entry i leaves the array. The rest keep their order, the order they were
 * freed in: among equal choices the last freed wins (its pages are the
 * likeliest still cached), as it did when this was a list. */
static pa_chunk_t* take_at(size_t i) {
  pa_chunk_t* c = pa_huge_free[i].chunk;
  memmove(&pa_huge_free[i], &pa_huge_free[i + 1], (--pa_huge_free_n - i) * sizeof(pa_huge_free_t));
  return c;
}

/* The free chunk that serves `need` bytes touching the fewest new pages (the
 * most already-written memory reused), the smallest capacity among equals;
 * taken off the array. NULL: none is big enough. */
PA_HIDDEN pa_chunk_t* pa_huge_free_take(size_t need) {
  size_t best = SIZE_MAX, best_new = SIZE_MAX, best_cap = SIZE_MAX;
  for (size_t i = pa_huge_free_n; i-- > 0;) {          /* the last freed first */
    const pa_huge_free_t* f = &pa_huge_free[i];
    if (f->cap < need) continue;
    size_t fresh = need > f->dirty ? need - f->dirty : 0;
    if (fresh < best_new || (fresh == best_new && f->cap < best_cap)) { best = i; best_new = fresh; best_cap = f->cap; }
  }
  return best == SIZE_MAX ? NULL : take_at(best);
}

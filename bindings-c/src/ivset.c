/* ivset.c — see ivset.h for the encoding and the post/drain protocol. */
#include "ivset.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>

#define PAGE_SHIFT  12
#define SPAN_SHIFT  21                     /* overflow granularity: 2 MiB */
#define ADDR_BITS   47
#define CNT_BITS    29
#define CNT_MAX     (((uint64_t)1 << CNT_BITS) - 1)
#define SPAN_BITS   (ADDR_BITS - SPAN_SHIFT)   /* 26 */
#define SPAN_MASK   (((uint64_t)1 << SPAN_BITS) - 1)
#define SPAN_ALL    (((uint64_t)SPAN_MASK << SPAN_BITS) | 0)  /* lo 0, hi max */

typedef struct sink_s {
  _Atomic uint64_t open;
  _Atomic uint64_t pending;
  _Atomic uint64_t overflow;
  _Atomic uint64_t slot[PA_IV_SLOTS];
  _Atomic uint64_t n_posted, n_contained, n_merged, n_overflowed, n_drained;
} __attribute__((aligned(64))) sink_t;

static sink_t sinks[PA_IV_SINKS];
static _Atomic uint64_t holders;
static _Atomic(pa_iv_tap_fn) taps[PA_IV_TAPS];

#define RLX memory_order_relaxed
#define SC  memory_order_seq_cst

/* slot word <-> [first page, last page + 1) */
static inline uint64_t slot_pack(uint64_t p0, uint64_t p1) { return (p0 << CNT_BITS) | (p1 - p0); }
static inline uint64_t slot_p0(uint64_t w) { return w >> CNT_BITS; }
static inline uint64_t slot_p1(uint64_t w) { return (w >> CNT_BITS) + (w & CNT_MAX); }
/* overflow word: hi in the upper 26 bits, lo below; 0 = empty (hi > lo when set) */
static inline uint64_t span_pack(uint64_t lo, uint64_t hi) { return (hi << SPAN_BITS) | lo; }
static inline uint64_t span_lo(uint64_t w) { return w & SPAN_MASK; }
static inline uint64_t span_hi(uint64_t w) { return w >> SPAN_BITS; }

int pa_iv_open(void) {
  for (int i = 0; i < PA_IV_SINKS; i++) {
    uint64_t z = 0;
    if (atomic_compare_exchange_strong(&sinks[i].open, &z, 1)) {
      atomic_store(&sinks[i].overflow, 0);
      for (int s = 0; s < PA_IV_SLOTS; s++) atomic_store(&sinks[i].slot[s], 0);
      atomic_store(&sinks[i].pending, 0);
      return i;
    }
  }
  return -ENOSPC;
}

void pa_iv_close(int sink) {
  if (sink >= 0 && sink < PA_IV_SINKS) atomic_store(&sinks[sink].open, 0);
}

_Atomic uint64_t* pa_iv_pending(int sink) {
  return &sinks[sink].pending;
}

static void post_span(sink_t* s, uint64_t lo, uint64_t hi) {
  uint64_t w = atomic_load(&s->overflow);
  for (;;) {
    uint64_t nlo = lo, nhi = hi;
    if (w != 0) {
      if (span_lo(w) < nlo) nlo = span_lo(w);
      if (span_hi(w) > nhi) nhi = span_hi(w);
      if (nlo == span_lo(w) && nhi == span_hi(w)) return;
    }
    if (atomic_compare_exchange_weak(&s->overflow, &w, span_pack(nlo, nhi))) return;
  }
}

static void post_one(sink_t* s, uint64_t p0, uint64_t p1) {
  atomic_fetch_add_explicit(&s->n_posted, 1, RLX);
  if (p1 > ((uint64_t)1 << (ADDR_BITS - PAGE_SHIFT))) {     /* beyond 47-bit: everything */
    post_span(s, 0, SPAN_MASK);
    atomic_fetch_add_explicit(&s->n_overflowed, 1, RLX);
    return;
  }
  /* (1) contained / (2) widen a neighbour. A widened slot may not exceed CNT_MAX pages. */
  for (int i = 0; i < PA_IV_SLOTS; i++) {
    uint64_t w = atomic_load(&s->slot[i]);
    while (w != 0) {
      uint64_t q0 = slot_p0(w), q1 = slot_p1(w);
      if (q0 <= p0 && p1 <= q1) { atomic_fetch_add_explicit(&s->n_contained, 1, RLX); return; }
      if (p1 < q0 || q1 < p0) break;                          /* neither overlaps nor touches */
      uint64_t n0 = p0 < q0 ? p0 : q0, n1 = p1 > q1 ? p1 : q1;
      if (n1 - n0 > CNT_MAX) break;
      if (atomic_compare_exchange_weak(&s->slot[i], &w, slot_pack(n0, n1))) {
        atomic_fetch_add_explicit(&s->n_merged, 1, RLX);
        return;
      }
    }
  }
  if (p1 - p0 <= CNT_MAX) {                                   /* (3) an empty slot */
    uint64_t nw = slot_pack(p0, p1);
    for (int i = 0; i < PA_IV_SLOTS; i++) {
      uint64_t z = 0;
      if (atomic_load_explicit(&s->slot[i], RLX) == 0 && atomic_compare_exchange_strong(&s->slot[i], &z, nw)) return;
    }
  }
  /* (4) the overflow span, rounded outwards to 2 MiB */
  post_span(s, p0 >> (SPAN_SHIFT - PAGE_SHIFT),
            (p1 + ((1u << (SPAN_SHIFT - PAGE_SHIFT)) - 1)) >> (SPAN_SHIFT - PAGE_SHIFT));
  atomic_fetch_add_explicit(&s->n_overflowed, 1, RLX);
}

void pa_iv_post(uintptr_t start, uintptr_t end) {
  if (end <= start) return;
  for (int i = 0; i < PA_IV_TAPS; i++) {
    pa_iv_tap_fn t = atomic_load(&taps[i]);
    if (t != NULL) t(start, end);
  }
  uint64_t p0 = (uint64_t)start >> PAGE_SHIFT;
  uint64_t p1 = ((uint64_t)end + ((1u << PAGE_SHIFT) - 1)) >> PAGE_SHIFT;
  for (int i = 0; i < PA_IV_SINKS; i++) {
    sink_t* s = &sinks[i];
    if (atomic_load(&s->open) == 0) continue;
    post_one(s, p0, p1);
    atomic_store(&s->pending, 1);     /* after the range is visible (seq_cst) */
  }
}

int pa_iv_add_tap(pa_iv_tap_fn fn) {
  for (int i = 0; i < PA_IV_TAPS; i++) {
    pa_iv_tap_fn t = atomic_load(&taps[i]);
    if (t == fn) return 0;
    if (t == NULL && atomic_compare_exchange_strong(&taps[i], &t, fn)) return 0;
    if (t == fn) return 0;
  }
  return -ENOSPC;
}

void pa_iv_hold(void) {
  atomic_fetch_add(&holders, 1);
  for (int i = 0; i < PA_IV_SINKS; i++)
    if (atomic_load(&sinks[i].open)) atomic_store(&sinks[i].pending, 1);
}

void pa_iv_release(void) {
  atomic_fetch_sub(&holders, 1);
}

int pa_iv_drain(int sink, pa_iv_range_t* out, int max) {
  sink_t* s = &sinks[sink];
  if (atomic_load_explicit(&s->pending, RLX) == 0) return 0;
  while (atomic_load(&holders) != 0) sched_yield();   /* a monitor is posting: short */
  /* FIRST, before the slots are read: a later post sets it to 1 again, so
   * nothing is lost. But NOT to 0: the ranges taken below are not applied
   * yet. With 0 here, this interleaving would hand out stale registrations
   * (the scenarios RegistrationCacheScenarios#threadsRegisterWhileAnotherUnmaps
   * and rc_threads_register_while_others_unmap exercise it):
   *   U  (holds buffer b's lock): munmap hook posts b (slot, pending = 1),
   *      munmaps, posts again, maps fresh pages at b, drops b's lock.
   *   T1 (get for another buffer, slow path, under the cache lock): this
   *      drain: pending = 0, exchanges the slots, so b's range is now only in
   *      T1's out[] — the region R that pinned b's OLD pages is still in the
   *      published index, state 0, until T1 runs its invalidation.
   *   T2 (takes b's lock, fills b, get(b), hit path): reads pending == 0,
   *      finds R in the index, CASes a reference (R is not INVALID yet),
   *      sends the old pages.
   *   T1: invalidates R: already in use, so only marked INVALID.
   * So pending stays nonzero (PA_IV_DRAINING) through the drain and the
   * consumer clears it with pa_iv_drain_done() only once every drained range
   * is out of its index: a hit path that reads 0 now also sees that index. */
  atomic_exchange(&s->pending, PA_IV_DRAINING);
  int n = 0;
  if (n < max && atomic_load_explicit(&s->overflow, RLX) != 0) {
    uint64_t w = atomic_exchange(&s->overflow, 0);
    if (w != 0) {
      out[n].start = (uintptr_t)(span_lo(w) << SPAN_SHIFT);
      out[n].end = span_hi(w) >= SPAN_MASK ? UINTPTR_MAX : (uintptr_t)(span_hi(w) << SPAN_SHIFT);
      n++;
    }
  }
  for (int i = 0; i < PA_IV_SLOTS && n < max; i++) {
    if (atomic_load_explicit(&s->slot[i], RLX) == 0) continue;
    uint64_t w = atomic_exchange(&s->slot[i], 0);
    if (w == 0) continue;
    out[n].start = (uintptr_t)(slot_p0(w) << PAGE_SHIFT);
    out[n].end = (uintptr_t)(slot_p1(w) << PAGE_SHIFT);
    n++;
  }
  if (n == max) atomic_store(&s->pending, 1);   /* maybe more left */
  atomic_fetch_add_explicit(&s->n_drained, (uint64_t)n, RLX);
  return n;
}

void pa_iv_drain_done(int sink) {
  sink_t* s = &sinks[sink];
  /* Only DRAINING -> 0: a post since the drain (1), or a drain that stopped at
   * max (1), keeps pending set. seq_cst (so release): the consumer's index
   * updates are visible to a hit path that reads the 0 with acquire. */
  uint64_t want = PA_IV_DRAINING;
  if (atomic_load_explicit(&s->pending, RLX) == PA_IV_DRAINING)
    atomic_compare_exchange_strong(&s->pending, &want, 0);
}

int pa_iv_queued(int sink) {
  sink_t* s = &sinks[sink];
  int n = atomic_load(&s->overflow) != 0;
  for (int i = 0; i < PA_IV_SLOTS; i++) n += atomic_load_explicit(&s->slot[i], RLX) != 0;
  return n;
}

void pa_iv_counters(int sink, pa_iv_counters_t* out) {
  sink_t* s = &sinks[sink];
  out->posted = atomic_load(&s->n_posted);
  out->contained = atomic_load(&s->n_contained);
  out->merged = atomic_load(&s->n_merged);
  out->overflowed = atomic_load(&s->n_overflowed);
  out->drained = atomic_load(&s->n_drained);
}

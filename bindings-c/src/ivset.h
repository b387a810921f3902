/* ivset.h — invalidation sinks: bounded, merging sets of address ranges that
 * the memory hooks (or the userfaultfd monitor) post into and a registration
 * cache drains on its next call.
 *
 * Process-wide table of PA_IV_SINKS sinks (one per cache: C caches and the
 * Java cache each open their own). A post goes to every open sink, so no
 * consumer can steal another's events.
 *
 * A sink is PA_IV_SLOTS words plus one overflow word plus a pending flag.
 * Every word is one atomic uint64, so posting is lock-free, allocation-free
 * and async-signal-safe (only loads, CAS and exchange; no locks, no errno):
 *   slot     = start page (35 bits, addresses < 2^47) | page count (29 bits)
 *   overflow = [lo, hi) in 2 MiB units, 26 + 26 bits (covers 2^47)
 * Post: (1) if a slot already contains the range, done; (2) CAS-widen a slot
 * that overlaps or touches it; (3) CAS an empty slot; (4) else widen the
 * overflow span (coarse but bounded: it may invalidate more than needed,
 * never less). Ranges outside 47-bit space set the overflow to "everything".
 * Then pending = 1.
 *
 * Drain (one consumer per sink, under that consumer's lock): pending ->
 * PA_IV_DRAINING FIRST, then exchange every slot and the overflow with 0. A
 * post that lands after the exchange of pending sets it to 1 again, so
 * nothing is lost; a post that finds its range already inside a slot relies
 * on the drain's exchange happening after its own load, which the order
 * above guarantees. The consumer applies the ranges (takes the regions out of
 * its index), then calls pa_iv_drain_done(), which moves DRAINING -> 0 only if
 * no post came since. So pending == 0 means "nothing queued AND nothing
 * drained but not yet applied": a lock-free hit path that reads 0 (acquire)
 * then reads an index with every drained range already removed. (Clearing to
 * 0 at the start of the drain let a hit path find a region whose range sat
 * in the drainer's buffer: see pa_iv_drain.)
 */
#ifndef PA_IVSET_H
#define PA_IVSET_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#define PA_IV_SINKS 8
#define PA_IV_SLOTS 64

/* pending word: 0 = nothing queued or in flight, 1 = posted, PA_IV_DRAINING =
 * a drain took ranges that its consumer has not applied yet. */
#define PA_IV_DRAINING 2

typedef struct pa_iv_range_s { uintptr_t start, end; } pa_iv_range_t;

typedef struct pa_iv_counters_s {
  uint64_t posted;       /* ranges posted to this sink */
  uint64_t contained;    /* already inside a queued range */
  uint64_t merged;       /* widened a queued range */
  uint64_t overflowed;   /* went to the coarse overflow span */
  uint64_t drained;      /* ranges handed to the consumer */
} pa_iv_counters_t;

/* Open a sink: returns its index (0..PA_IV_SINKS-1) or -ENOSPC. */
PA_EXPORT int  pa_iv_open(void);
PA_EXPORT void pa_iv_close(int sink);

/* Post [start, end) to every open sink. Async-signal-safe. */
PA_EXPORT void pa_iv_post(uintptr_t start, uintptr_t end);

/* Address of the sink's pending word (nonzero = something to drain, or a
 * drain in flight); a hit path reads it with one acquire load (a plain load
 * on x86) before it reads its index. Java reads it from native memory. */
PA_EXPORT _Atomic uint64_t* pa_iv_pending(int sink);

/* Move queued ranges into out[0..max); returns the count (0 when empty).
 * When more than max are queued the rest stay queued (pending is set again). */
PA_EXPORT int  pa_iv_drain(int sink, pa_iv_range_t* out, int max);

/* After the consumer has applied every range it drained (they are out of the
 * index its hit path reads): pending DRAINING -> 0, unless a post came since.
 * Call it under the same lock as pa_iv_drain, after the last drain call. */
PA_EXPORT void pa_iv_drain_done(int sink);

/* Synchronous listeners besides the sinks: pa_iv_post calls each with every
 * range, before the sinks see it, from whatever thread posts (a memory hook,
 * the shim's own unmap, the userfaultfd monitor). For a consumer that must
 * hear of an unmap while it happens, not at its next drain: UCX's
 * registration cache (src/shim/stack_events.c; libfabric's pulls through a
 * sink, src/shim/stack_ofi_subs.c). A tap runs in the unmapping thread,
 * whatever locks it holds, even in a signal handler. A tap stays for the process's
 * life. Returns 0 (also when fn is already a tap), -ENOSPC when PA_IV_TAPS
 * are taken. */
#define PA_IV_TAPS 4
typedef void (*pa_iv_tap_fn)(uintptr_t start, uintptr_t end);
PA_EXPORT int pa_iv_add_tap(pa_iv_tap_fn fn);

/* For a poster that learns of ranges asynchronously (the userfaultfd
 * monitor): hold() before reading events marks every sink pending and makes
 * drains wait until release(), so a thread whose munmap the kernel has just
 * let return cannot drain before its range is posted. */
PA_EXPORT void pa_iv_hold(void);
PA_EXPORT void pa_iv_release(void);

/* Queued ranges now (slots in use + overflow), for the "bounded" tests. */
PA_EXPORT int  pa_iv_queued(int sink);
PA_EXPORT void pa_iv_counters(int sink, pa_iv_counters_t* out);

#endif

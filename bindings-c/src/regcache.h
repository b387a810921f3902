/* regcache.h — registration cache for memory the arena does not own (stack
 * arrays, static data, other libraries' mappings, file mappings).
 *
 *   pa_rc_get(addr, len, access) -> region with a use reference
 *   pa_rc_put(region)            -> releases it
 *
 * Lookup (hit path: no lock, no system call, no allocation): a sorted array
 * of region starts with a running maximum of ends, read under a sequence
 * counter (seqlock read side). Regions live in a fixed, type-stable pool, so
 * a reader holding a pointer to a region that was evicted and reused reads
 * valid memory; it takes its use reference with a CAS on the region's state
 * word (refused once the region is invalid or dead) and re-checks the range
 * afterwards. Everything else (miss, eviction, invalidation) runs under one
 * mutex.
 *
 * Overlap policy — CONTAIN, and MERGE on a miss: a hit needs one region that
 * contains the whole page-rounded request with at least the requested
 * access. A miss registers the union of the request and every IDLE region
 * that overlaps or touches it (access bits OR'ed), up to PA_RC_MERGE_MAX
 * bytes; the merged regions are deregistered after the union is registered
 * (their pages never go unpinned in between); if the union fails to register
 * (e.g. EFAULT: a neighbour is being unmapped) the request alone is retried.
 * In-use regions are never
 * merged: the new region may overlap them.
 *
 * Eviction: least recently released (put stores a tick from a per-cache
 * clock it advances) among idle regions, when the count or byte limit would
 * be passed and when registration fails with ENOMEM/EAGAIN/ENOSPC (evict one,
 * retry). In-use regions are never evicted; when nothing is idle the limit
 * holds and get fails with -ENOSPC.
 *
 * Invalidation: every call first checks its sink's pending word (one acquire
 * load, a plain load on x86) and drains the queued ranges (ivset.h) on the
 * slow path: regions overlapping a range leave the index at once; idle ones
 * are deregistered, in-use ones on their last put. The word stays nonzero
 * until the drained ranges are out of the index (pa_iv_drain_done), so a hit
 * never finds a region whose invalidation is being drained.
 *
 * With the userfaultfd monitor running (ufd_monitor.h), every new region is
 * also watched there, best effort (stats.unwatched counts refusals, e.g.
 * private file mappings). Ranges are never unwatched: a leftover watch only
 * produces spurious invalidations, while unwatching could drop the watch of
 * an overlapping live region.
 *
 * Stale check (config.verify): at registration the cache records a hash of
 * the region's physical frames (pagemap); each hit re-reads them and a
 * mismatch makes get return -ESTALE with one line on stderr, and invalidates
 * the region (the next get re-registers). Needs root for PFNs (-EPERM at init
 * otherwise). This mode makes system calls on the hit path by nature.
 *
 * Counters are plain relaxed stores on the hit path: exact single-threaded,
 * approximate under concurrent hits. */
#ifndef PA_REGCACHE_H
#define PA_REGCACHE_H

#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PA_RC_MAX_REGIONS 1024             /* pool size (hard) */
#define PA_RC_MERGE_MAX   ((size_t)1 << 30)

/* Registration backend. Called under the cache mutex only. Return 0 or -errno. */
typedef struct pa_rc_ops_s {
  void* ctx;
  int (*reg)(void* ctx, uintptr_t addr, size_t len, int access, uint64_t* handle, uint32_t* lkey, uint32_t* rkey);
  int (*dereg)(void* ctx, uintptr_t addr, size_t len, uint64_t handle);
} pa_rc_ops_t;

typedef struct pa_rc_config_s {
  size_t max_regions;    /* 0 = PA_RC_MAX_REGIONS */
  size_t max_bytes;      /* 0 = unlimited */
  int    verify;         /* stale check on every hit */
  int    no_merge;       /* contain only */
} pa_rc_config_t;

typedef struct pa_rc_region_s {
  uintptr_t addr;
  size_t    len;
  int       access;
  uint32_t  lkey, rkey;
  uint64_t  handle;
  /* private */
  _Atomic uint64_t state;     /* use references (low 32 bits) | PA_RC_INVALID | PA_RC_DEAD */
  _Atomic uint64_t last_use;
  uint64_t  frames;           /* hash of PFNs at registration (verify mode) */
  uint32_t  next_free;
} pa_rc_region_t;

typedef struct pa_rc_stats_s {
  uint64_t gets, hits, misses, evictions, invalidations, stale;
  uint64_t queued;           /* ranges queued in the sink now */
  uint64_t drained;          /* ranges drained so far */
  uint64_t unwatched;        /* regions the userfaultfd monitor could not watch */
  uint64_t regions, bytes_pinned;
} pa_rc_stats_t;

typedef struct pa_rc_s {
  /* read side */
  _Atomic uint64_t seq;
  _Atomic uint32_t n;
  _Atomic uint64_t* pending;
  int verify;
  _Atomic uintptr_t start[PA_RC_MAX_REGIONS];
  _Atomic uintptr_t maxend[PA_RC_MAX_REGIONS];
  _Atomic(pa_rc_region_t*) ent[PA_RC_MAX_REGIONS];
  _Atomic uint64_t hits, stale;            /* fast-path hits */
  _Atomic uint64_t gets, slow_hits;        /* slow-path entries */
  /* slow side, under mu */
  pthread_mutex_t mu;
  pa_rc_ops_t ops;
  pa_rc_config_t cfg;
  int sink, pagemap_fd;
  _Atomic uint64_t clock;     /* advanced by put without mu (lossy, like the counters) */
  uint32_t free_head, live;
  uint64_t bytes, misses, evictions, invalidations, unwatched;
  pid_t owner;                /* the process whose registrations these are (a forked child's copy never deregisters) */
  pa_rc_region_t pool[PA_RC_MAX_REGIONS];
} pa_rc_t;

/* Returns 0; -ENOSPC (no free invalidation sink); -EPERM (verify without
 * PFN access). `c` is large (~100 KiB): static or mmap it. */
PA_EXPORT int  pa_rc_init(pa_rc_t* c, const pa_rc_ops_t* ops, const pa_rc_config_t* cfg);
/* Deregisters every region (in-use ones too) and closes the sink. In a forked
 * child (any process but the one that called pa_rc_init) the regions are the
 * parent's registrations, shared through the backend (an io_uring ring, a verbs
 * context): the child's copy forgets them and never deregisters. */
PA_EXPORT void pa_rc_destroy(pa_rc_t* c);

/* A region containing [addr, addr+len) with at least `access`, holding one
 * use reference. Returns 0 or -errno: -EINVAL, -ESTALE (verify mode found
 * other frames), -ENOSPC (limits reached and everything in use), or the
 * backend's error after eviction could not make room. */
PA_EXPORT int  pa_rc_get(pa_rc_t* c, const void* addr, size_t len, int access, pa_rc_region_t** out);
PA_EXPORT void pa_rc_put(pa_rc_t* c, pa_rc_region_t* r);

/* Invalidate [addr, addr+len) now (what a drained range does). */
PA_EXPORT void pa_rc_invalidate(pa_rc_t* c, const void* addr, size_t len);
/* Deregister every idle region. */
PA_EXPORT void pa_rc_flush(pa_rc_t* c);
PA_EXPORT void pa_rc_stats(pa_rc_t* c, pa_rc_stats_t* out);

/* Which invalidation sources feed this process: "hooks", "userfaultfd",
 * "hooks+userfaultfd" or "none" (then only verify mode and explicit
 * pa_rc_invalidate protect the cache). */
PA_EXPORT const char* pa_rc_sources(void);

#endif

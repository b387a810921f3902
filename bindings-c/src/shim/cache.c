/* cache.c — pinarena.h's registration cache: a thin, opaque face on
 * src/regcache.h (pa_rc_*), whose invalidations come from the memory hooks
 * this library exports (src/memhooks.c). The cache object is large
 * (~100 KiB): it gets its own mapping, not a heap block. */
#include "internal.h"
#include "regcache.h"
#include "../raw_map.h"
#include "../../include/pinarena.h"

#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The public region is the leading part of pa_rc_region_t. */
_Static_assert(offsetof(pinarena_cache_region_t, addr) == offsetof(pa_rc_region_t, addr), "addr");
_Static_assert(offsetof(pinarena_cache_region_t, length) == offsetof(pa_rc_region_t, len), "length");
_Static_assert(offsetof(pinarena_cache_region_t, access) == offsetof(pa_rc_region_t, access), "access");
_Static_assert(offsetof(pinarena_cache_region_t, lkey) == offsetof(pa_rc_region_t, lkey), "lkey");
_Static_assert(offsetof(pinarena_cache_region_t, rkey) == offsetof(pa_rc_region_t, rkey), "rkey");
_Static_assert(offsetof(pinarena_cache_region_t, handle) == offsetof(pa_rc_region_t, handle), "handle");

struct pinarena_cache { pa_rc_t rc; };

PA_EXPORT int pinarena_cache_open(const pinarena_cache_ops_t* ops, size_t max_regions, size_t max_bytes, int flags,
                               pinarena_cache_t** out) {
  if (ops == NULL || ops->reg == NULL || ops->dereg == NULL || out == NULL) return -EINVAL;
  /* raw: a fresh anonymous mapping, nothing to invalidate */
  void* m = pa_raw_map(sizeof(pinarena_cache_t));
  if (m == NULL) return -ENOMEM;
  pinarena_cache_t* c = m;
  pa_rc_ops_t o = { ops->ctx, ops->reg, ops->dereg };
  pa_rc_config_t cfg = { .max_regions = max_regions, .max_bytes = max_bytes,
                         .verify = (flags & PINARENA_CACHE_VERIFY) != 0,
                         .no_merge = (flags & PINARENA_CACHE_NO_MERGE) != 0 };
  int rc = pa_rc_init(&c->rc, &o, &cfg);
  if (rc != 0) { pa_raw_unmap(m, sizeof(pinarena_cache_t)); return rc; }
  *out = c;
  return 0;
}

PA_EXPORT void pinarena_cache_close(pinarena_cache_t* c) {
  if (c == NULL) return;
  pa_rc_destroy(&c->rc);
  pa_raw_unmap(c, sizeof(pinarena_cache_t));   /* never registered: raw */
}

PA_EXPORT int pinarena_cache_get(pinarena_cache_t* c, const void* addr, size_t length, int access,
                              const pinarena_cache_region_t** out) {
  pa_rc_region_t* r = NULL;
  int rc = pa_rc_get(&c->rc, addr, length, access, &r);
  *out = rc == 0 ? (const pinarena_cache_region_t*)r : NULL;
  return rc;
}

PA_EXPORT void pinarena_cache_put(pinarena_cache_t* c, const pinarena_cache_region_t* r) {
  pa_rc_put(&c->rc, (pa_rc_region_t*)(uintptr_t)r);
}

PA_EXPORT void pinarena_cache_invalidate(pinarena_cache_t* c, const void* addr, size_t length) {
  pa_rc_invalidate(&c->rc, addr, length);
}

PA_EXPORT void pinarena_cache_stats(pinarena_cache_t* c, pinarena_cache_stats_t* out) {
  pa_rc_stats_t s;
  pa_rc_stats(&c->rc, &s);
  out->gets = s.gets; out->hits = s.hits; out->misses = s.misses; out->evictions = s.evictions;
  out->invalidations = s.invalidations; out->stale = s.stale;
  out->regions = s.regions; out->bytes_pinned = s.bytes_pinned;
}

PA_EXPORT const char* pinarena_cache_sources(void) { return pa_rc_sources(); }

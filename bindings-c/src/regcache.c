/* regcache.c — see regcache.h. Hit path first, everything else under mu.
 * Twin: registration/.../cache/RegistrationCache.java implements the same rules
 * in Java; change both (shared scenario list: docs/ARCHITECTURE.md, "Twins"). */
#define _GNU_SOURCE
#include "regcache.h"
#include "nocancel.h"
#include "ivset.h"
#include "pagemap.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define INVALID   ((uint64_t)1 << 32)    /* out of the index; deregister on the last put */
#define DEAD      ((uint64_t)1 << 33)    /* deregistered or claimed by the slow path */
#define REFS      ((uint64_t)0xffffffffu)
#define NONE      0xffffffffu
#define RLX       memory_order_relaxed
#define ACQ       memory_order_acquire
#define REL       memory_order_release
/* A field of the public region struct read racily on the hit path (the slow
 * path rewrites it only under mu, and the seqlock discards a torn view). */
#define LD(field) atomic_load_explicit((_Atomic __typeof__(field)*)&(field), RLX)

static inline void bump(_Atomic uint64_t* ctr) {   /* lossy under concurrency, no RMW */
  atomic_store_explicit(ctr, atomic_load_explicit(ctr, RLX) + 1, RLX);
}

/* ---- hit path ---------------------------------------------------------- */

/* Seqlock read of the index: the last start <= a, walking left while the
 * running max of ends still reaches e. Returns a candidate or NULL. Ordering:
 * seq (acquire) -> relaxed reads of the arrays -> acquire fence -> seq again;
 * a writer bumps seq to odd, release fence, edits, then even with release. */
static inline pa_rc_region_t* index_find(pa_rc_t* c, uintptr_t a, uintptr_t e, int access) {
  for (;;) {
    uint64_t s = atomic_load_explicit(&c->seq, ACQ);
    if (unlikely(s & 1)) { __builtin_ia32_pause(); continue; }
    uint32_t n = atomic_load_explicit(&c->n, RLX);
    if (n > PA_RC_MAX_REGIONS) n = PA_RC_MAX_REGIONS;        /* torn read: retried below */
    /* branchless search: lo = number of starts <= a */
    uint32_t lo = 0;
    while (n > 1) {
      uint32_t half = n >> 1;
      lo = atomic_load_explicit(&c->start[lo + half - 1], RLX) <= a ? lo + half : lo;
      n -= half;
    }
    if (n == 1 && atomic_load_explicit(&c->start[lo], RLX) <= a) lo++;
    pa_rc_region_t* found = NULL;
    for (uint32_t i = lo; i-- > 0 && atomic_load_explicit(&c->maxend[i], RLX) >= e;) {
      pa_rc_region_t* r = atomic_load_explicit(&c->ent[i], RLX);
      if (r && LD(r->addr) <= a && LD(r->addr) + LD(r->len) >= e && (LD(r->access) & access) == access) {
        found = r;
        break;
      }
    }
    atomic_thread_fence(ACQ);
    if (likely(atomic_load_explicit(&c->seq, RLX) == s)) return found;
  }
}

/* Take a use reference unless the region is invalid or dead; then re-check
 * the range, because a pooled region may have been reused meanwhile. */
static inline int try_ref(pa_rc_t* c, pa_rc_region_t* r, uintptr_t a, uintptr_t e, int access) {
  uint64_t st = atomic_load_explicit(&r->state, RLX);
  do {
    if (st & (INVALID | DEAD)) return 0;
  } while (!atomic_compare_exchange_weak_explicit(&r->state, &st, st + 1, ACQ, RLX));
  if (likely(r->addr <= a && r->addr + r->len >= e && (r->access & access) == access)) return 1;
  pa_rc_put(c, r);
  return 0;
}

static int get_slow(pa_rc_t* c, uintptr_t a, uintptr_t e, int access, pa_rc_region_t** out);
static int verify_hit(pa_rc_t* c, pa_rc_region_t* r);

int pa_rc_get(pa_rc_t* c, const void* addr, size_t len, int access, pa_rc_region_t** out) {
  uintptr_t a = (uintptr_t)addr & ~(PA_PAGE - 1), e = ((uintptr_t)addr + len + PA_PAGE - 1) & ~(PA_PAGE - 1);
  if (unlikely(len == 0 || e <= a)) return -EINVAL;
  /* acquire: pending 0 (set by pa_iv_drain_done after the drained ranges left
     the index, see ivset.h) must not be read after the index. */
  if (likely(atomic_load_explicit(c->pending, ACQ) == 0)) {
    pa_rc_region_t* r = index_find(c, a, e, access);
    if (likely(r != NULL) && likely(try_ref(c, r, a, e, access))) {
      if (unlikely(c->verify)) {
        int rc = verify_hit(c, r);
        if (rc != 0) return rc;
      }
      bump(&c->hits);
      *out = r;
      return 0;
    }
  }
  return get_slow(c, a, e, access, out);
}

/* ---- slow path: everything below runs under c->mu ------------------------ */

static void release_region(pa_rc_t* c, pa_rc_region_t* r);
static void drain_locked(pa_rc_t* c);
/* Weak: the core archive links without them. PA_EXPORT: a hidden reference
   would make the symbol hidden in libpinarena.so (most constraining wins). */
extern PA_EXPORT int pa_ufd_active(void) __attribute__((weak));
extern PA_EXPORT int pa_ufd_watch(const void* addr, size_t len) __attribute__((weak));

void pa_rc_put(pa_rc_t* c, pa_rc_region_t* r) {
  /* LRU tick: a plain increment (no locked RMW on the hot line); concurrent
     puts may store the same tick, which only blurs the order between them. */
  uint64_t tick = atomic_load_explicit(&c->clock, RLX) + 1;   /* lossy, like bump() */
  atomic_store_explicit(&c->clock, tick, RLX);
  atomic_store_explicit(&r->last_use, tick, RLX);
  uint64_t st = atomic_fetch_sub_explicit(&r->state, 1, memory_order_acq_rel) - 1;
  if (unlikely(st == INVALID)) {                  /* last user of an invalidated region */
    pthread_mutex_lock(&c->mu);
    uint64_t want = INVALID;
    if (atomic_compare_exchange_strong(&r->state, &want, DEAD)) release_region(c, r);
    drain_locked(c);
    pthread_mutex_unlock(&c->mu);
  } else if (unlikely(atomic_load_explicit(c->pending, RLX) != 0) && pthread_mutex_trylock(&c->mu) == 0) {
    /* Unmaps are queued: drain them now, so an idle cache does not keep their
       frames pinned until its next get. One load when nothing is queued; never
       waits (a thread holding the lock is draining or will drain). */
    drain_locked(c);
    pthread_mutex_unlock(&c->mu);
  }
}

static inline void index_write_begin(pa_rc_t* c) {
  atomic_store_explicit(&c->seq, atomic_load_explicit(&c->seq, RLX) + 1, RLX);
  atomic_thread_fence(REL);
}
static inline void index_write_end(pa_rc_t* c) {
  atomic_store_explicit(&c->seq, atomic_load_explicit(&c->seq, RLX) + 1, REL);
}

static void index_fix_maxend(pa_rc_t* c, uint32_t from) {
  uint32_t n = atomic_load_explicit(&c->n, RLX);
  uintptr_t m = from ? atomic_load_explicit(&c->maxend[from - 1], RLX) : 0;
  for (uint32_t i = from; i < n; i++) {
    pa_rc_region_t* r = atomic_load_explicit(&c->ent[i], RLX);
    if (r->addr + r->len > m) m = r->addr + r->len;
    atomic_store_explicit(&c->maxend[i], m, RLX);
  }
}

static void index_insert(pa_rc_t* c, pa_rc_region_t* r) {
  uint32_t n = atomic_load_explicit(&c->n, RLX), pos = n;
  while (pos > 0 && atomic_load_explicit(&c->start[pos - 1], RLX) > r->addr) pos--;
  index_write_begin(c);
  for (uint32_t i = n; i > pos; i--) {
    atomic_store_explicit(&c->start[i], atomic_load_explicit(&c->start[i - 1], RLX), RLX);
    atomic_store_explicit(&c->ent[i], atomic_load_explicit(&c->ent[i - 1], RLX), RLX);
  }
  atomic_store_explicit(&c->start[pos], r->addr, RLX);
  atomic_store_explicit(&c->ent[pos], r, RLX);
  atomic_store_explicit(&c->n, n + 1, RLX);
  index_fix_maxend(c, pos);
  index_write_end(c);
}

static void index_remove(pa_rc_t* c, pa_rc_region_t* r) {
  uint32_t n = atomic_load_explicit(&c->n, RLX), pos;
  for (pos = 0; pos < n && atomic_load_explicit(&c->ent[pos], RLX) != r; pos++) {}
  if (pos == n) return;
  index_write_begin(c);
  for (uint32_t i = pos; i + 1 < n; i++) {
    atomic_store_explicit(&c->start[i], atomic_load_explicit(&c->start[i + 1], RLX), RLX);
    atomic_store_explicit(&c->ent[i], atomic_load_explicit(&c->ent[i + 1], RLX), RLX);
  }
  atomic_store_explicit(&c->n, n - 1, RLX);
  index_fix_maxend(c, pos);
  index_write_end(c);
}

/* Deregister a DEAD region (already out of the index) and return it to the
   pool. A forked child's copy of the cache only forgets it: the registration
   is the parent's (pa_rc_destroy). */
static void release_region(pa_rc_t* c, pa_rc_region_t* r) {
  if (c->owner == getpid()) {
    int nc = pa_nc_hold();                 /* the program's callback, under c->mu: no cancel acts in it */
    c->ops.dereg(c->ops.ctx, r->addr, r->len, r->handle);
    pa_nc_restore(nc);
  }
  c->bytes -= r->len;
  c->live--;
  r->next_free = c->free_head;
  c->free_head = (uint32_t)(r - c->pool);
}

/* Evict the least recently released idle region. Returns 1 if one went. */
static int evict_one(pa_rc_t* c) {
  uint32_t n = atomic_load_explicit(&c->n, RLX);
  pa_rc_region_t* best = NULL;
  uint64_t best_tick = UINT64_MAX;
  for (uint32_t i = 0; i < n; i++) {
    pa_rc_region_t* r = atomic_load_explicit(&c->ent[i], RLX);
    if (atomic_load_explicit(&r->state, RLX) == 0 && atomic_load_explicit(&r->last_use, RLX) < best_tick) {
      best = r;
      best_tick = atomic_load_explicit(&r->last_use, RLX);
    }
  }
  while (best) {
    uint64_t zero = 0;
    if (atomic_compare_exchange_strong(&best->state, &zero, DEAD)) {   /* a reader may have won */
      index_remove(c, best);
      release_region(c, best);
      c->evictions++;
      return 1;
    }
    return evict_one(c);                     /* it went in use: pick again */
  }
  return 0;
}

static void invalidate_locked(pa_rc_t* c, uintptr_t a, uintptr_t b) {
  for (uint32_t i = 0; i < atomic_load_explicit(&c->n, RLX);) {
    pa_rc_region_t* r = atomic_load_explicit(&c->ent[i], RLX);
    if (r->addr >= b) break;                 /* sorted by start */
    if (r->addr + r->len <= a) { i++; continue; }
    index_remove(c, r);                      /* readers can no longer find it */
    uint64_t st = atomic_fetch_or(&r->state, INVALID);
    c->invalidations++;
    uint64_t want = INVALID;
    if ((st & REFS) == 0 && atomic_compare_exchange_strong(&r->state, &want, DEAD)) release_region(c, r);
    /* else: in use; pa_rc_put deregisters it on the last release */
  }
}

static void drain_locked(pa_rc_t* c) {
  pa_iv_range_t rs[PA_IV_SLOTS + 1];
  int n;
  do {
    n = pa_iv_drain(c->sink, rs, PA_IV_SLOTS + 1);
    for (int i = 0; i < n; i++) invalidate_locked(c, rs[i].start, rs[i].end);
  } while (n == PA_IV_SLOTS + 1);
  pa_iv_drain_done(c->sink);               /* applied: hit paths may trust the index */
}

static int frames_hash(pa_rc_t* c, uintptr_t a, size_t len, uint64_t* out) {
  uint64_t buf[512], h = 1469598103934665603ull;
  size_t np = len / PA_PAGE;
  for (size_t i = 0; i < np; i += 512) {
    size_t k = np - i < 512 ? np - i : 512;
    int rc = pa_pagemap_pfns(c->pagemap_fd, (void*)(a + i * PA_PAGE), k, buf);
    if (rc < 0 && rc != -ENODATA) return rc;
    for (size_t j = 0; j < k; j++) h = (h ^ buf[j]) * 1099511628211ull;
  }
  *out = h;
  return 0;
}

static void say_stale(const pa_rc_region_t* r) {
  char line[160], hex[24];
  size_t n = 0;
  const char* parts[] = { "pinarena regcache: STALE registration ", pa_fmt_hex_digits(hex, r->addr, 12),
                          ": physical frames changed since registration (an invalidation was missed); entry dropped\n" };
  for (size_t i = 0; i < 3; i++)
    for (const char* p = parts[i]; *p && n < sizeof line; p++) line[n++] = *p;
  ssize_t w = pa_nc_write(2, line, n);
  (void)w;
}

/* Verify mode, holding a reference: frames unchanged, or drop the region. */
static int verify_hit(pa_rc_t* c, pa_rc_region_t* r) {
  uint64_t h;
  int rc = frames_hash(c, r->addr, r->len, &h);
  if (rc == 0 && h == r->frames) return 0;
  bump(&c->stale);
  say_stale(r);
  pthread_mutex_lock(&c->mu);
  if (!(atomic_load(&r->state) & INVALID)) {
    index_remove(c, r);
    atomic_fetch_or(&r->state, INVALID);
    c->invalidations++;
  }
  pthread_mutex_unlock(&c->mu);
  pa_rc_put(c, r);
  return -ESTALE;
}

#define MERGE_MAX 64

static int get_slow(pa_rc_t* c, uintptr_t a, uintptr_t e, int access, pa_rc_region_t** out) {
  bump(&c->gets);                            /* slow entries; stats add the fast hits */
  pthread_mutex_lock(&c->mu);
  drain_locked(c);
  pa_rc_region_t* r = index_find(c, a, e, access);
  if (r && try_ref(c, r, a, e, access)) {    /* another thread registered it, or a drain raced */
    pthread_mutex_unlock(&c->mu);
    if (c->verify) { int rc = verify_hit(c, r); if (rc) return rc; }
    bump(&c->slow_hits);
    *out = r;
    return 0;
  }
  c->misses++;

  /* MERGE: claim idle neighbours (state 0 -> DEAD); readers then skip them. */
  pa_rc_region_t* claimed[MERGE_MAX];
  int nclaimed = 0;
  uintptr_t ua = a, ue = e;
  int uacc = access;
  size_t cbytes = 0;
  if (!c->cfg.no_merge) {
    uint32_t n = atomic_load_explicit(&c->n, RLX);
    for (uint32_t i = 0; i < n && nclaimed < MERGE_MAX; i++) {
      pa_rc_region_t* x = atomic_load_explicit(&c->ent[i], RLX);
      if (x->addr > e || x->addr + x->len < a) continue;
      uintptr_t na = x->addr < ua ? x->addr : ua, ne = x->addr + x->len > ue ? x->addr + x->len : ue;
      if (ne - na > PA_RC_MERGE_MAX) continue;
      uint64_t zero = 0;
      if (!atomic_compare_exchange_strong(&x->state, &zero, DEAD)) continue;   /* in use */
      claimed[nclaimed++] = x;
      ua = na; ue = ne; uacc |= x->access;
      cbytes += x->len;
    }
  }

  int rc;
  for (;;) {
    size_t len = ue - ua;
    /* limits, counting the claimed regions as already gone */
    while ((c->live - (uint32_t)nclaimed + 1 > c->cfg.max_regions || c->free_head == NONE ||
            (c->cfg.max_bytes && c->bytes - cbytes + len > c->cfg.max_bytes)) && evict_one(c)) {}
    int over = c->live - (uint32_t)nclaimed + 1 > c->cfg.max_regions || c->free_head == NONE ||
               (c->cfg.max_bytes && c->bytes - cbytes + len > c->cfg.max_bytes);
    if (!over) {
      pa_rc_region_t* nr = &c->pool[c->free_head];
      uint64_t h;
      uint32_t lk, rk;
      int nc = pa_nc_hold();               /* the program's callback, under c->mu (nocancel.h) */
      rc = c->ops.reg(c->ops.ctx, ua, len, uacc, &h, &lk, &rk);
      pa_nc_restore(nc);
      if (rc == 0) {
        c->free_head = nr->next_free;
        nr->addr = ua; nr->len = len; nr->access = uacc; nr->handle = h; nr->lkey = lk; nr->rkey = rk;
        nr->frames = 0;
        if (c->verify) frames_hash(c, ua, len, &nr->frames);
        atomic_store_explicit(&nr->last_use, atomic_load_explicit(&c->clock, RLX), RLX);
        atomic_store_explicit(&nr->state, 1, REL);          /* publish fields, then the index */
        c->live++;
        c->bytes += len;
        if (pa_ufd_active && pa_ufd_active() && pa_ufd_watch((void*)ua, len) != 0) c->unwatched++;
        index_insert(c, nr);
        for (int i = 0; i < nclaimed; i++) {                /* the union pins them now */
          index_remove(c, claimed[i]);
          release_region(c, claimed[i]);
        }
        pthread_mutex_unlock(&c->mu);
        *out = nr;
        return 0;
      }
      /* a failed union (e.g. EFAULT: a merged neighbour is being unmapped) falls
         back to the request alone below; only the request's own failure is final */
      if (!nclaimed && rc != -ENOMEM && rc != -EAGAIN && rc != -ENOSPC) break;
    } else {
      rc = -ENOSPC;
    }
    /* Make room: first give up the merge (the claimed regions become evictable),
       then evict one idle region per retry. */
    if (nclaimed) {
      for (int i = 0; i < nclaimed; i++) atomic_store(&claimed[i]->state, 0);
      nclaimed = 0; cbytes = 0; ua = a; ue = e; uacc = access;
      continue;
    }
    if (!over && evict_one(c)) continue;
    break;
  }
  for (int i = 0; i < nclaimed; i++) atomic_store(&claimed[i]->state, 0);
  pthread_mutex_unlock(&c->mu);
  return rc;
}

/* ---- lifecycle, maintenance, stats -------------------------------------- */

int pa_rc_init(pa_rc_t* c, const pa_rc_ops_t* ops, const pa_rc_config_t* cfg) {
  memset(c, 0, sizeof *c);
  c->ops = *ops;
  c->owner = getpid();
  if (cfg) c->cfg = *cfg;
  if (c->cfg.max_regions == 0 || c->cfg.max_regions > PA_RC_MAX_REGIONS) c->cfg.max_regions = PA_RC_MAX_REGIONS;
  c->pagemap_fd = -1;
  if (c->cfg.verify) {
    int fd = pa_pagemap_open();
    if (fd < 0) return fd;
    uint64_t pfn;
    int rc = pa_pagemap_pfn(fd, &pfn, &pfn);                 /* a present stack page */
    if (rc < 0) { pa_nc_close(fd); return rc; }
    c->pagemap_fd = fd;
    c->verify = 1;
  }
  int s = pa_iv_open();
  if (s < 0) { if (c->pagemap_fd >= 0) pa_nc_close(c->pagemap_fd); return s; }
  c->sink = s;
  c->pending = pa_iv_pending(s);
  pthread_mutex_init(&c->mu, NULL);
  for (uint32_t i = 0; i < PA_RC_MAX_REGIONS; i++) {
    c->pool[i].next_free = i + 1 < PA_RC_MAX_REGIONS ? i + 1 : NONE;
    atomic_store(&c->pool[i].state, DEAD);
  }
  c->free_head = 0;
  return 0;
}

void pa_rc_destroy(pa_rc_t* c) {
  pthread_mutex_lock(&c->mu);
  while (atomic_load_explicit(&c->n, RLX) > 0) {
    pa_rc_region_t* r = atomic_load_explicit(&c->ent[0], RLX);
    index_remove(c, r);
    atomic_store(&r->state, DEAD);
    release_region(c, r);
  }
  pa_iv_close(c->sink);
  if (c->pagemap_fd >= 0) pa_nc_close(c->pagemap_fd);
  pthread_mutex_unlock(&c->mu);
}

void pa_rc_invalidate(pa_rc_t* c, const void* addr, size_t len) {
  pthread_mutex_lock(&c->mu);
  drain_locked(c);
  invalidate_locked(c, (uintptr_t)addr & ~(PA_PAGE - 1), (uintptr_t)addr + len);
  pthread_mutex_unlock(&c->mu);
}

void pa_rc_flush(pa_rc_t* c) {
  pthread_mutex_lock(&c->mu);
  drain_locked(c);
  while (evict_one(c)) {}
  pthread_mutex_unlock(&c->mu);
}

void pa_rc_stats(pa_rc_t* c, pa_rc_stats_t* o) {
  pthread_mutex_lock(&c->mu);
  pa_iv_counters_t ic;
  pa_iv_counters(c->sink, &ic);
  o->gets = atomic_load(&c->gets) + atomic_load(&c->hits);
  o->hits = atomic_load(&c->hits) + atomic_load(&c->slow_hits);
  o->stale = atomic_load(&c->stale);
  o->misses = c->misses;
  o->evictions = c->evictions;
  o->invalidations = c->invalidations;
  o->queued = (uint64_t)pa_iv_queued(c->sink);
  o->drained = ic.drained;
  o->unwatched = c->unwatched;
  o->regions = c->live;
  o->bytes_pinned = c->bytes;
  pthread_mutex_unlock(&c->mu);
}

extern PA_EXPORT int pa_memhooks_interposing(void) __attribute__((weak));

const char* pa_rc_sources(void) {
  int h = pa_memhooks_interposing && pa_memhooks_interposing();
  int u = pa_ufd_active && pa_ufd_active();
  return h && u ? "hooks+userfaultfd" : h ? "hooks" : u ? "userfaultfd" : "none";
}

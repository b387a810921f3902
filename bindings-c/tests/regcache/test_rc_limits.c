/* test_rc_limits.c — count/size limits, RLIMIT_MEMLOCK and a bounded set of
 * queued invalidations: in-use regions are never evicted, a pin's ENOMEM
 * evicts and retries. */
#define _GNU_SOURCE
#include "wire.h"

#include <sys/resource.h>

#define LEN (1 * PA_MiB)

TEST(rc_count_and_size_limits_protect_in_use) {
  pa_rc_config_t cfg = { .max_regions = 4, .max_bytes = 6 * PG, .no_merge = 1 };
  rcw_t* t = rcw_open(&cfg);
  char* p = map_at(NULL, 32 * PG, 'A');
  pa_rc_region_t* h[4];
  for (int i = 0; i < 4; i++) h[i] = rcw_get(t, p + (size_t)i * 2 * PG, PG);   /* 4 regions, in use */
  pa_rc_region_t* r = NULL;
  CHECK_ERR(pa_rc_get(&t->c, p + 20 * PG, PG, RCW_ACCESS, &r), ENOSPC);      /* count: all in use */
  pa_rc_put(&t->c, h[2]);
  pa_rc_put(&t->c, h[0]);
  pa_rc_put(&t->c, h[1]);                                    /* release order: 2, 0, 1 */
  rcw_expect(t, p + 20 * PG, PG, "5th evicts the least recently released (2)");
  CHECK(rcw_stats(t).evictions == 1 && t->deregs == 1, "one eviction");
  memset(p, 'B', 32 * PG);
  rcw_expect(t, p, PG, "0 still cached");
  rcw_expect(t, p + 2 * PG, PG, "1 still cached");
  CHECK(rcw_stats(t).hits == 2, "0 and 1 hit (2 was the LRU victim)");
  CHECK(rcw_send(t, h[3], p + 6 * PG, PG) == PG, "the held region still sends");
  /* size: 6 pages max; 4 held pages + 3 more needs evictions of idle ones only */
  rcw_expect(t, p + 24 * PG, 3 * PG, "3 pages within 6");
  CHECK(rcw_stats(t).bytes_pinned <= 6 * PG, "size limit holds: %llu",
        (unsigned long long)rcw_stats(t).bytes_pinned);
  CHECK_ERR(pa_rc_get(&t->c, p, 7 * PG, RCW_ACCESS, &r), ENOSPC);           /* larger than the limit */
  pa_rc_put(&t->c, h[3]);
}

TEST(rc_memlock_exhaustion_evicts_and_retries) {
  rcw_drop_ipc_lock();
  struct rlimit rl = { 8 * PA_MiB, 8 * PA_MiB };
  CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0, "setrlimit");
  rcw_t* t = rcw_open_dst(NULL, 1 * PA_MiB);                 /* a verbs destination MR counts too: 1 MiB */
  char* p = map_at(NULL, 32 * PA_MiB, 'A');
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 16; i++) {                           /* 32 MiB of 2 MiB buffers through 8 MiB */
      char* b = p + (size_t)i * 2 * PA_MiB;
      memset(b, 'a' + i + round, 2 * PA_MiB);
      rcw_expect(t, b, 2 * PA_MiB, "buffer");
      CHECK(tu_status_kb("VmPin") <= 8 * 1024, "VmPin within the limit");
    }
  pa_rc_stats_t s = rcw_stats(t);
  NOTE("32 gets of 2 MiB under an 8 MiB RLIMIT_MEMLOCK without CAP_IPC_LOCK (%s): %llu evictions, %llu regions, "
       "VmPin %llu kB", rcw_binding, (unsigned long long)s.evictions, (unsigned long long)s.regions,
       (unsigned long long)tu_status_kb("VmPin"));
  CHECK(s.evictions >= 26 && s.misses == 32 && s.bytes_pinned <= 8 * PA_MiB, "evict-and-retry on every miss past the limit");
  /* everything in use: nothing to evict, the backend's ENOMEM comes through */
  pa_rc_region_t* h[5];
  int n = 0, rc = 0;
  for (; n < 5; n++)
    if ((rc = pa_rc_get(&t->c, p + (size_t)n * 2 * PA_MiB, 2 * PA_MiB, RCW_ACCESS, &h[n])) != 0) break;
  NOTE("%d regions of 2 MiB in use before the pin failed", n);
  CHECK(rc == -ENOMEM && n >= 3, "with everything in use the pin fails with ENOMEM (got %d after %d)", rc, n);
  for (int i = 0; i < n; i++) pa_rc_put(&t->c, h[i]);
}

TEST(rc_40000_unmap_cycles_keep_the_set_bounded) {
  rcw_t* t = rcw_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  rcw_expect(t, p, LEN, "first");
  int maxq = 0;
  for (int i = 0; i < 40000; i++) {
    size_t off = (size_t)((i * 7919u) % 256) * PG;            /* many distinct addresses */
    char* q = mmap(NULL, PG * (1 + i % 3), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(q, PG * (1 + i % 3));
    munmap(p + off, PG);
    map_at(p + off, PG, 'A');
    int q2 = pa_iv_queued(t->c.sink);
    if (q2 > maxq) maxq = q2;
  }
  pa_rc_stats_t s = rcw_stats(t);
  NOTE("queued at most %d ranges (bound %d) over 40000 cycles; regions %llu before the drain",
       maxq, PA_IV_SLOTS + 1, (unsigned long long)s.regions);
  CHECK(maxq <= PA_IV_SLOTS + 1, "bounded");
  memset(p, 'N', LEN);
  rcw_expect(t, p, LEN, "after the cycles");
  CHECK(pa_iv_queued(t->c.sink) == 0, "drained");
}

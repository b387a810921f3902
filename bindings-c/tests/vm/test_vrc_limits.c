/* test_vrc_limits.c — count/size limits and RLIMIT_MEMLOCK over verbs pins:
 * in-use regions are never evicted, ibv_reg_mr's ENOMEM evicts and retries. */
#define _GNU_SOURCE
#include "vrc.h"

#include <sys/resource.h>

TEST(vrc_count_and_size_limits_protect_in_use) {
  pa_rc_config_t cfg = { .max_regions = 4, .max_bytes = 6 * PG, .no_merge = 1 };
  vrc_t* t = vrc_open(&cfg);
  char* p = map_at(NULL, 32 * PG, 'A');
  pa_rc_region_t* h[4];
  for (int i = 0; i < 4; i++) h[i] = vrc_get(t, p + (size_t)i * 2 * PG, PG);   /* 4 regions, in use */
  pa_rc_region_t* r = NULL;
  CHECK_ERR(pa_rc_get(&t->c, p + 20 * PG, PG, IBV_ACCESS_LOCAL_WRITE, &r), ENOSPC);
  pa_rc_put(&t->c, h[2]);
  pa_rc_put(&t->c, h[0]);
  pa_rc_put(&t->c, h[1]);                                    /* release order: 2, 0, 1 */
  vrc_expect(t, p + 20 * PG, PG, "5th evicts the least recently released (2)");
  CHECK(vrc_stats(t).evictions == 1 && t->deregs == 1, "one eviction");
  memset(p, 'B', 32 * PG);
  vrc_expect(t, p, PG, "0 still cached");
  vrc_expect(t, p + 2 * PG, PG, "1 still cached");
  CHECK(vrc_stats(t).hits == 2, "0 and 1 hit");
  CHECK(vrc_send(t, h[3], p + 6 * PG, PG) == PG, "the held region still sends");
  vrc_expect(t, p + 24 * PG, 3 * PG, "3 pages within 6");
  CHECK(vrc_stats(t).bytes_pinned <= 6 * PG, "size limit holds");
  CHECK_ERR(pa_rc_get(&t->c, p, 7 * PG, IBV_ACCESS_LOCAL_WRITE, &r), ENOSPC);
  pa_rc_put(&t->c, h[3]);
}

TEST(vrc_memlock_exhaustion_evicts_and_retries) {
  vrc_drop_ipc_lock();
  struct rlimit rl = { 8 * PA_MiB, 8 * PA_MiB };
  CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0, "setrlimit");
  vrc_t* t = vrc_open_dst(NULL, 1 * PA_MiB);                 /* the destination MR counts too: 1 MiB */
  char* p = map_at(NULL, 32 * PA_MiB, 'A');
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 16; i++) {                           /* 32 MiB of 2 MiB buffers through 8 MiB */
      char* b = p + (size_t)i * 2 * PA_MiB;
      memset(b, 'a' + i + round, 2 * PA_MiB);
      vrc_expect(t, b, 2 * PA_MiB, "buffer");
      CHECK(tu_status_kb("VmPin") <= 8 * 1024, "VmPin within the limit");
    }
  pa_rc_stats_t s = vrc_stats(t);
  NOTE("32 gets of 2 MiB under an 8 MiB RLIMIT_MEMLOCK without CAP_IPC_LOCK: %llu evictions, %llu regions, VmPin %llu kB",
       (unsigned long long)s.evictions, (unsigned long long)s.regions, (unsigned long long)tu_status_kb("VmPin"));
  CHECK(s.evictions >= 26 && s.misses == 32, "evict-and-retry on every miss past the limit");
  /* everything in use: nothing to evict, ibv_reg_mr's ENOMEM comes through */
  pa_rc_region_t* h[4];
  int n = 0, rc = 0;
  for (; n < 4; n++) if ((rc = pa_rc_get(&t->c, p + (size_t)n * 2 * PA_MiB, 2 * PA_MiB, IBV_ACCESS_LOCAL_WRITE, &h[n])) != 0) break;
  CHECK(rc == -ENOMEM && n == 3, "with 3 regions in use the 4th fails with ENOMEM (got %d after %d)", rc, n);
  for (int i = 0; i < n; i++) pa_rc_put(&t->c, h[i]);
}

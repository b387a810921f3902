/* test_vrc_unmap.c — the cache over verbs when the memory behind a cached
 * region changes: every scenario ends with an RDMA WRITE from the cached
 * region compared with the buffer's current bytes. The first test is the
 * control: an unmap nobody reports makes the check fail the way it should. */
#define _GNU_SOURCE
#include "vrc.h"

#include <malloc.h>
#include <stdlib.h>
#include <sys/syscall.h>

#define LEN (1 * PA_MiB)

TEST(vrc_hooks_are_interposing) {
  CHECK(pa_memhooks_interposing(), "munmap in this process is not the hook");
  NOTE("invalidation sources: %s", pa_rc_sources());
}

/* glibc free() unmaps with its internal __munmap, which no hook sees: the
   cache hits and the NIC sends the old frames. Proves the data check bites. */
TEST(vrc_control_glibc_free_unseen_sends_old_bytes) {
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  vrc_t* t = vrc_open(NULL);
  char* a = malloc(4 * LEN);
  memset(a, 'A', 4 * LEN);
  vrc_expect(t, a, 4 * LEN, "first");
  free(a);
  char* b = malloc(4 * LEN);
  CHECK(b == a, "malloc did not return the same address");
  memset(b, 'B', 4 * LEN);
  pa_rc_region_t* r = vrc_get(t, b, 4 * LEN);
  size_t good = vrc_send(t, r, b, 4 * LEN);
  size_t old = tu_count(t->dst, t->dst_len, 'A');
  pa_rc_put(&t->c, r);
  NOTE("stale hit: %zu current bytes, %zu old 'A' bytes in the last %zu delivered", good, old, t->dst_len);
  CHECK(vrc_stats(t).hits == 1 && good == 0 && old == t->dst_len, "expected a stale hit sending only old bytes");
  free(b);
}

TEST(vrc_glibc_free_malloc_same_address_userfaultfd) {
  int rc = pa_ufd_start();
  if (rc == -EPERM || rc == -ENOSYS) SKIP("userfaultfd unavailable: %s", pa_errno_name(-rc));
  CHECK_OK("pa_ufd_start", rc);
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  vrc_t* t = vrc_open(NULL);
  char* a = malloc(4 * LEN);
  memset(a, 'A', 4 * LEN);
  vrc_expect(t, a, 4 * LEN, "first");
  free(a);
  char* b = malloc(4 * LEN);
  CHECK(b == a, "malloc did not return the same address");
  memset(b, 'B', 4 * LEN);
  vrc_expect(t, b, 4 * LEN, "same address after glibc free + malloc");
  pa_rc_stats_t s = vrc_stats(t);
  NOTE("mode %s: misses %llu invalidations %llu", pa_ufd_mode(), (unsigned long long)s.misses,
       (unsigned long long)s.invalidations);
  CHECK(s.misses == 2 && s.invalidations >= 1 && s.unwatched == 0, "userfaultfd invalidated the region");
  free(b);
  pa_ufd_stop();
}

TEST(vrc_glibc_free_malloc_same_address_verify) {
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  pa_rc_config_t cfg = { .verify = 1 };
  vrc_t* t = vrc_open(&cfg);
  char* a = malloc(4 * LEN);
  memset(a, 'A', 4 * LEN);
  vrc_expect(t, a, 4 * LEN, "first");
  free(a);
  char* b = malloc(4 * LEN);
  CHECK(b == a, "malloc did not return the same address");
  memset(b, 'B', 4 * LEN);
  pa_rc_region_t* r = NULL;
  CHECK_ERR(pa_rc_get(&t->c, b, 4 * LEN, IBV_ACCESS_LOCAL_WRITE, &r), ESTALE);
  vrc_expect(t, b, 4 * LEN, "after verify dropped the stale entry");
  CHECK(vrc_stats(t).stale == 1, "one stale entry");
  free(b);
}

TEST(vrc_munmap_whole_region_then_map_same_address) {
  vrc_t* t = vrc_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  vrc_expect(t, p, LEN, "first");
  CHECK(munmap(p, LEN) == 0, "munmap");
  pa_rc_region_t* r = NULL;
  CHECK_ERR(pa_rc_get(&t->c, p, LEN, IBV_ACCESS_LOCAL_WRITE, &r), EFAULT);   /* drained; nothing mapped */
  map_at(p, LEN, 'B');
  vrc_expect(t, p, LEN, "same address, new pages");
  pa_rc_stats_t s = vrc_stats(t);
  CHECK(s.invalidations == 1 && s.regions == 1, "invalidations %llu regions %llu",
        (unsigned long long)s.invalidations, (unsigned long long)s.regions);
}

TEST(vrc_munmap_middle_of_overlapping_in_use_regions) {
  vrc_t* t = vrc_open(NULL);
  char* p = map_at(NULL, 12 * PG, 'A');
  pa_rc_region_t* r1 = vrc_get(t, p, 8 * PG);               /* held: not merged */
  pa_rc_region_t* r2 = vrc_get(t, p + 4 * PG, 8 * PG);
  CHECK(r1 != r2 && vrc_stats(t).regions == 2, "two overlapping regions");
  CHECK(munmap(p + 5 * PG, 2 * PG) == 0, "munmap");
  map_at(p + 5 * PG, 2 * PG, 'B');
  memset(p, 'B', 12 * PG);
  pa_rc_flush(&t->c);                                        /* a cache call: drains */
  pa_rc_stats_t s = vrc_stats(t);
  CHECK(s.invalidations == 2 && s.regions == 2, "both invalidated, both pinned while in use");
  CHECK(vrc_send(t, r1, p + 5 * PG, PG) == 0 && tu_count(t->dst, PG, 'A') == PG,
        "the in-flight region still sends its pinned (old) page");
  CHECK(vrc_send(t, r2, p + 8 * PG, PG) == PG, "r2's untouched pages are current");
  pa_rc_put(&t->c, r1);
  pa_rc_put(&t->c, r2);
  CHECK(vrc_stats(t).regions == 0 && t->deregs == 2, "deregistered on the last put");
  vrc_expect(t, p, 12 * PG, "after the hole was refilled");
}

TEST(vrc_mremap_grow_shrink_move) {
  vrc_t* t = vrc_open(NULL);
  char* p = map_at(NULL, 4 * PG, 'A');
  vrc_expect(t, p, 4 * PG, "first");
  char* g = mremap(p, 4 * PG, 8 * PG, MREMAP_MAYMOVE);
  CHECK(g != MAP_FAILED, "mremap grow");
  memset(g, 'G', 8 * PG);
  vrc_expect(t, g, 8 * PG, "grown");
  char* s = mremap(g, 8 * PG, 2 * PG, 0);
  CHECK(s == g, "mremap shrink");
  char* tail = map_at(g + 2 * PG, 2 * PG, 'T');             /* new pages where the tail was */
  memset(s, 'S', 2 * PG);
  vrc_expect(t, s, 2 * PG, "shrunk");
  vrc_expect(t, tail, 2 * PG, "old tail, new pages");
  char* dst = map_at(NULL, 2 * PG, 'x');
  char* m = mremap(s, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
  CHECK(m == dst, "mremap move");
  map_at(s, 2 * PG, 'N');                                   /* the old address gets new pages */
  vrc_expect(t, s, 2 * PG, "old address after move");
  vrc_expect(t, m, 2 * PG, "moved pages at their new address");
  NOTE("invalidations %llu", (unsigned long long)vrc_stats(t).invalidations);
}

TEST(vrc_mmap_fixed_over_registered) {
  vrc_t* t = vrc_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  vrc_expect(t, p, LEN, "first");
  map_over(p + LEN / 4, LEN / 2, 'F');                   /* over live pages: one atomic call */
  vrc_expect(t, p, LEN, "after MAP_FIXED over the middle");
  CHECK(vrc_stats(t).invalidations == 1, "one invalidation");
}

TEST(vrc_madvise_dontneed) {
  vrc_t* t = vrc_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  vrc_expect(t, p, LEN, "first");
  CHECK(madvise(p, LEN, MADV_DONTNEED) == 0, "madvise");
  memset(p, 'Z', LEN);                                       /* faults in new pages */
  vrc_expect(t, p, LEN, "after DONTNEED");
  CHECK(vrc_stats(t).invalidations == 1, "one invalidation");
}

TEST(vrc_brk_shrink) {
  vrc_t* t = vrc_open(NULL);
  char* top = (char*)(((uintptr_t)sbrk(0) + PG - 1) & ~(PG - 1));
  CHECK(brk(top + LEN) == 0, "brk grow");
  memset(top, 'A', LEN);
  vrc_expect(t, top, LEN, "heap");
  CHECK(sbrk(-(intptr_t)LEN) != (void*)-1 && sbrk((intptr_t)LEN) != (void*)-1, "sbrk shrink + grow");
  memset(top, 'B', LEN);
  vrc_expect(t, top, LEN, "after sbrk shrink + grow");
  CHECK(brk(top) == 0 && brk(top + LEN) == 0, "brk shrink + grow");
  memset(top, 'C', LEN);
  vrc_expect(t, top, LEN, "after brk shrink + grow");
  CHECK(vrc_stats(t).invalidations == 2, "two invalidations");
}

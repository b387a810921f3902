/* test_rc_life.c — a region's life: hit, contain and merge, fork, a failed
 * registration, a free while a region is in use, what put drains. Every send
 * is checked against the buffer's current bytes (wire.h). */
#define _GNU_SOURCE
#include "wire.h"

#include <sys/wait.h>

#define LEN (1 * PA_MiB)

TEST(rc_hit_after_miss_and_contained_request) {
  rcw_t* t = rcw_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  rcw_expect(t, p, LEN, "miss");
  rcw_expect(t, p + 4096, 8192, "contained hit");
  rcw_expect(t, p + 100, 10, "unaligned hit");
  pa_rc_stats_t s = rcw_stats(t);
  CHECK(s.misses == 1 && s.hits == 2 && s.gets == 3 && s.regions == 1 && s.bytes_pinned == LEN,
        "gets %llu hits %llu misses %llu", (unsigned long long)s.gets, (unsigned long long)s.hits,
        (unsigned long long)s.misses);
}

TEST(rc_fork_parent_registration_stays_valid) {
  rcw_t* t = rcw_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  rcw_expect(t, p, LEN, "before fork");
  pid_t pid = fork();
  if (pid == 0) {                      /* the child writes and unmaps its copy */
    memset(p, 'C', LEN);
    munmap(p, LEN);
    _exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child");
  memset(p, 'P', LEN);
  rcw_expect(t, p, LEN, "parent after fork");
  CHECK(rcw_stats(t).misses == 1, "still a hit: the child's unmap touched no parent state");
}

/* The registrations a forked child inherits (an io_uring ring, a verbs
   context) are the parent's: the child closing its copy of the cache, which
   deregisters every idle region, must not drop or change them. */
TEST(rc_fork_child_closing_the_cache_keeps_the_parents_registrations) {
  rcw_t* t = rcw_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  char* q = map_at(NULL, LEN, 'Q');
  rcw_expect(t, p, LEN, "idle region before fork");
  pa_rc_region_t* held = rcw_get(t, q, LEN);               /* and one in use across the fork */
  int regs = t->regs;
  pid_t pid = fork();
  if (pid == 0) {
    pa_rc_put(&t->c, held);
    pa_rc_destroy(&t->c);
    _exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child (status %d)", st);
  memset(p, 'P', LEN);
  memset(q, 'R', LEN);
  CHECK(rcw_send(t, held, q, LEN) == LEN, "the held region still sends the current bytes");
  pa_rc_put(&t->c, held);
  rcw_expect(t, p, LEN, "the idle region after the child closed its cache");
  pa_rc_stats_t s = rcw_stats(t);
  CHECK(s.misses == 2 && t->regs == regs, "both are still hits, nothing registered again (misses %llu)",
        (unsigned long long)s.misses);
}

TEST(rc_overlap_merge_and_in_use) {
  rcw_t* t = rcw_open(NULL);
  char* p = map_at(NULL, 16 * PG, 'A');
  rcw_expect(t, p, 4 * PG, "a");
  rcw_expect(t, p + 2 * PG, 4 * PG, "overlapping b (merges with idle a)");
  pa_rc_stats_t s = rcw_stats(t);
  CHECK(s.regions == 1 && s.bytes_pinned == 6 * PG, "merged into one region of 6 pages (%llu, %llu)",
        (unsigned long long)s.regions, (unsigned long long)s.bytes_pinned);
  rcw_expect(t, p + 6 * PG, 2 * PG, "adjacent c (merges too)");
  CHECK(rcw_stats(t).regions == 1 && rcw_stats(t).bytes_pinned == 8 * PG, "adjacent merged");
  memset(p, 'M', 8 * PG);
  rcw_expect(t, p, 8 * PG, "hit on the union sends the new bytes");
  CHECK(rcw_stats(t).hits == 1 && t->deregs == 2, "hit; merged parts deregistered");
  pa_rc_region_t* held = rcw_get(t, p, 8 * PG);
  pa_rc_region_t* r2 = rcw_get(t, p + 7 * PG, 2 * PG);      /* overlaps an in-use region: not merged */
  CHECK(r2 != held && rcw_stats(t).regions == 2, "in-use region left alone");
  CHECK(rcw_send(t, r2, p + 7 * PG, 2 * PG) == 2 * PG, "overlapping region sends current bytes");
  pa_rc_put(&t->c, r2);
  pa_rc_put(&t->c, held);
}

TEST(rc_registration_failure_leaves_nothing) {
  rcw_t* t = rcw_open(NULL);
  char* p = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  pa_rc_region_t* r = NULL;
  int rc = pa_rc_get(&t->c, p, LEN, RCW_ACCESS, &r);
  NOTE("%s registration of PROT_NONE memory: %s", rcw_binding, rc ? pa_errno_name(-rc) : "ok");
  CHECK(rc == -EFAULT || rc == -EPERM, "PROT_NONE registration should fail, got %d", rc);
  t->fail_next = EIO;
  char* q = map_at(NULL, LEN, 'A');
  CHECK_ERR(pa_rc_get(&t->c, q, LEN, RCW_ACCESS, &r), EIO);
  pa_rc_stats_t s = rcw_stats(t);
  CHECK(s.regions == 0 && s.bytes_pinned == 0 && s.misses == 2 && t->regs == 0, "nothing cached");
  rcw_expect(t, q, LEN, "works afterwards");
}

TEST(rc_free_while_in_use) {
  rcw_t* t = rcw_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  uint64_t pin0 = tu_status_kb("VmPin");
  pa_rc_region_t* r = rcw_get(t, p, LEN);
  munmap(p, LEN);
  map_at(p, LEN, 'B');
  pa_rc_region_t* r2 = rcw_get(t, p, LEN);                   /* drains: r invalid, still in use */
  CHECK(r2 != r, "a new region for the new pages");
  CHECK(rcw_send(t, r, p, LEN) == 0 && tu_count(t->dst, LEN, 'A') == LEN,
        "the in-flight region still pins (and sends) the old pages");
  CHECK(rcw_send(t, r2, p, LEN) == LEN, "the new region sends the new pages");
  CHECK(tu_status_kb("VmPin") - pin0 == 2 * LEN / 1024, "VmPin = both regions");
  pa_rc_put(&t->c, r);                                       /* last put deregisters the invalid one */
  pa_rc_stats_t s = rcw_stats(t);
  CHECK(s.regions == 1 && s.bytes_pinned == LEN, "invalid region deregistered on put");
  pa_rc_put(&t->c, r2);
  CHECK(tu_status_kb("VmPin") - pin0 == LEN / 1024, "VmPin = one region");
}

/* An idle cache must not keep unmapped memory pinned until its next get: a
   put drains what the hooks queued, so the old frames are unpinned then. */
TEST(rc_put_drains_pending_invalidations) {
  rcw_t* t = rcw_open(NULL);
  char* p = map_at(NULL, 3 * LEN, 'A');
  char* q = p + 2 * LEN;                                     /* not adjacent to p: never merged with it */
  uint64_t pin0 = tu_status_kb("VmPin");
  rcw_expect(t, p, LEN, "p cached, idle");
  pa_rc_region_t* held = rcw_get(t, q, LEN);
  CHECK(tu_status_kb("VmPin") - pin0 == 2 * LEN / 1024, "VmPin = both regions");
  CHECK(munmap(p, LEN) == 0, "munmap");                      /* queued by the hook, not yet drained */
  pa_rc_put(&t->c, held);                                    /* the cache's only call from here on */
  pa_rc_stats_t s = rcw_stats(t);
  CHECK(s.invalidations == 1 && s.regions == 1, "put drained the unmap (invalidations %llu regions %llu)",
        (unsigned long long)s.invalidations, (unsigned long long)s.regions);
  CHECK(tu_status_kb("VmPin") - pin0 == LEN / 1024, "the unmapped region's frames are unpinned");
}

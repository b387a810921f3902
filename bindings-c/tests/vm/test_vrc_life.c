/* test_vrc_life.c — region life cycle over verbs: fork, overlap and merge, a
 * failed registration, a free while a region is in use. Every send is an
 * RDMA WRITE from the cached region checked against the current bytes. */
#define _GNU_SOURCE
#include "vrc.h"

#include <sys/wait.h>

#define LEN (1 * PA_MiB)

TEST(vrc_fork_parent_registration_stays_valid) {
  vrc_t* t = vrc_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  vrc_expect(t, p, LEN, "before fork");
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
  vrc_expect(t, p, LEN, "parent after fork");
  CHECK(vrc_stats(t).misses == 1, "still a hit: the child's unmap touched no parent state");
}

TEST(vrc_overlap_merge_and_in_use) {
  vrc_t* t = vrc_open(NULL);
  char* p = map_at(NULL, 16 * PG, 'A');
  vrc_expect(t, p, 4 * PG, "a");
  vrc_expect(t, p + 2 * PG, 4 * PG, "overlapping b (merges with idle a)");
  pa_rc_stats_t s = vrc_stats(t);
  CHECK(s.regions == 1 && s.bytes_pinned == 6 * PG, "merged into 6 pages");
  vrc_expect(t, p + 6 * PG, 2 * PG, "adjacent c (merges too)");
  CHECK(vrc_stats(t).regions == 1 && vrc_stats(t).bytes_pinned == 8 * PG, "adjacent merged");
  memset(p, 'M', 8 * PG);
  vrc_expect(t, p, 8 * PG, "hit on the union sends the new bytes");
  CHECK(vrc_stats(t).hits == 1 && t->deregs == 2, "hit; merged parts deregistered");
  pa_rc_region_t* held = vrc_get(t, p, 8 * PG);
  pa_rc_region_t* r2 = vrc_get(t, p + 7 * PG, 2 * PG);      /* overlaps an in-use region: not merged */
  CHECK(r2 != held && vrc_stats(t).regions == 2, "in-use region left alone");
  CHECK(vrc_send(t, r2, p + 7 * PG, 2 * PG) == 2 * PG, "overlapping region sends current bytes");
  pa_rc_put(&t->c, r2);
  pa_rc_put(&t->c, held);
}

TEST(vrc_registration_failure_leaves_nothing) {
  vrc_t* t = vrc_open(NULL);
  char* p = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  pa_rc_region_t* r = NULL;
  int rc = pa_rc_get(&t->c, p, LEN, IBV_ACCESS_LOCAL_WRITE, &r);
  NOTE("ibv_reg_mr of PROT_NONE memory: %s", rc ? pa_errno_name(-rc) : "ok");
  CHECK(rc == -EFAULT || rc == -EPERM, "PROT_NONE registration should fail, got %d", rc);
  t->fail_next = EIO;
  char* q = map_at(NULL, LEN, 'A');
  CHECK_ERR(pa_rc_get(&t->c, q, LEN, IBV_ACCESS_LOCAL_WRITE, &r), EIO);
  pa_rc_stats_t s = vrc_stats(t);
  CHECK(s.regions == 0 && s.bytes_pinned == 0 && s.misses == 2 && t->regs == 0, "nothing cached");
  vrc_expect(t, q, LEN, "works afterwards");
}

TEST(vrc_free_while_in_use) {
  vrc_t* t = vrc_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  uint64_t pin0 = tu_status_kb("VmPin");
  pa_rc_region_t* r = vrc_get(t, p, LEN);
  munmap(p, LEN);
  map_at(p, LEN, 'B');
  pa_rc_region_t* r2 = vrc_get(t, p, LEN);                   /* drains: r invalid, still in use */
  CHECK(r2 != r, "a new region for the new pages");
  CHECK(vrc_send(t, r, p, LEN) == 0 && tu_count(t->dst, LEN, 'A') == LEN,
        "the in-flight region still pins (and sends) the old pages");
  CHECK(vrc_send(t, r2, p, LEN) == LEN, "the new region sends the new pages");
  CHECK(tu_status_kb("VmPin") - pin0 == 2 * LEN / 1024, "VmPin = both regions");
  pa_rc_put(&t->c, r);                                       /* last put deregisters the invalid one */
  pa_rc_stats_t s = vrc_stats(t);
  CHECK(s.regions == 1 && s.bytes_pinned == LEN, "invalid region deregistered on put");
  pa_rc_put(&t->c, r2);
  CHECK(tu_status_kb("VmPin") - pin0 == LEN / 1024, "VmPin = one region");
}

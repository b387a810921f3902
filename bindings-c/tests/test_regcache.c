/* test_regcache.c — the registration cache against the known failure scenarios,
 * with real io_uring pins and the memory hooks linked into this program.
 * Every scenario checks the bytes the kernel sends from the pinned pages. */
#define _GNU_SOURCE
#include "test_regcache.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define LEN (1 * PA_MiB)

TEST(rc_hooks_are_interposing) {
  CHECK(pa_memhooks_interposing(), "munmap in this process is not the hook");
  NOTE("invalidation sources: %s", pa_rc_sources());
}

TEST(rc_hit_after_miss_and_contained_request) {
  trc_t* t = trc_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  trc_expect(t, p, LEN, 'A', "miss");
  trc_expect(t, p + 4096, 8192, 'A', "contained hit");
  trc_expect(t, p + 100, 10, 'A', "unaligned hit");
  pa_rc_stats_t s = trc_stats(t);
  CHECK(s.misses == 1 && s.hits == 2 && s.gets == 3 && s.regions == 1 && s.bytes_pinned == LEN,
        "gets %llu hits %llu misses %llu", (unsigned long long)s.gets, (unsigned long long)s.hits,
        (unsigned long long)s.misses);
}

/* The seed scenario through hooks: munmap -> mmap returns the same address. */
TEST(rc_free_then_map_same_address_via_hooks) {
  trc_t* t = trc_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  trc_expect(t, p, LEN, 'A', "first");
  CHECK(munmap(p, LEN) == 0, "munmap");
  char* q = map_at(NULL, LEN, 'B');
  if (q != p) { munmap(q, LEN); q = map_at(p, LEN, 'B'); }
  trc_expect(t, q, LEN, 'B', "same address, new pages");
  pa_rc_stats_t s = trc_stats(t);
  CHECK(s.misses == 2 && s.invalidations == 1, "misses %llu invalidations %llu",
        (unsigned long long)s.misses, (unsigned long long)s.invalidations);
}

/* glibc free() unmaps with its internal __munmap: symbol interposition cannot
   see it. Verify mode catches the stale entry instead of sending old bytes. */
TEST(rc_glibc_free_malloc_missed_by_hooks_caught_by_verify) {
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  pa_rc_config_t cfg = { .verify = 1 };
  trc_t* t = trc_open(&cfg);
  char* a = malloc(4 * LEN);
  memset(a, 'A', 4 * LEN);
  trc_expect(t, a, 4 * LEN, 'A', "first");
  uint64_t drained0 = trc_stats(t).drained;
  uintptr_t old = (uintptr_t)a;
  free(a);
  char* b = malloc(4 * LEN);
  CHECK((uintptr_t)b == old, "malloc did not return the same address");
  memset(b, 'B', 4 * LEN);
  pa_rc_region_t* r = NULL;
  int rc = pa_rc_get(&t->c, b, 4 * LEN, 1, &r);
  pa_rc_stats_t s = trc_stats(t);
  NOTE("hooks queued %llu ranges for glibc's free (internal __munmap); verify -> %d", 
       (unsigned long long)(s.drained - drained0), rc);
  CHECK(rc == -ESTALE, "expected -ESTALE from the frame check, got %d", rc);
  CHECK(s.stale == 1, "stale counter");
  trc_expect(t, b, 4 * LEN, 'B', "after the stale entry was dropped");
  free(b);
}

TEST(rc_munmap_middle_of_overlapping_in_use_regions) {
  trc_t* t = trc_open(NULL);
  char* p = map_at(NULL, 12 * PG, 'A');
  pa_rc_region_t* r1 = trc_get(t, p, 8 * PG);              /* held: not merged */
  pa_rc_region_t* r2 = trc_get(t, p + 4 * PG, 8 * PG);
  CHECK(r1 != r2 && trc_stats(t).regions == 2, "two overlapping regions");
  CHECK(munmap(p + 5 * PG, 2 * PG) == 0, "munmap");
  map_at(p + 5 * PG, 2 * PG, 'B');                         /* new pages in the hole */
  memset(p, 'B', 12 * PG);
  pa_rc_flush(&t->c);                                       /* a cache call: drains the queued ranges */
  pa_rc_stats_t s = trc_stats(t);
  CHECK(s.invalidations == 2 && s.regions == 2 && s.bytes_pinned == 16 * PG,
        "both invalidated, both still pinned while in use (invalidations %llu regions %llu)",
        (unsigned long long)s.invalidations, (unsigned long long)s.regions);
  CHECK(trc_send(t, r1, p + 5 * PG, PG, 'A') == PG, "the in-flight region still sends its pinned (old) page");
  pa_rc_put(&t->c, r1);
  pa_rc_put(&t->c, r2);
  s = trc_stats(t);
  CHECK(s.regions == 0 && s.bytes_pinned == 0, "deregistered on the last put");
  trc_expect(t, p, 12 * PG, 'B', "after the hole was refilled");
}

TEST(rc_munmap_whole_region) {
  trc_t* t = trc_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  trc_expect(t, p, LEN, 'A', "first");
  munmap(p, LEN);
  CHECK(trc_stats(t).regions == 1, "nothing deregistered inside the hook");
  pa_rc_region_t* r = NULL;
  CHECK_ERR(pa_rc_get(&t->c, p, LEN, 1, &r), EFAULT);     /* drained, then the range is gone */
  pa_rc_stats_t s = trc_stats(t);
  CHECK(s.regions == 0 && s.invalidations == 1, "invalidated on the next call");
}

TEST(rc_mremap_grow_shrink_move) {
  trc_t* t = trc_open(NULL);
  char* p = map_at(NULL, 4 * PG, 'A');
  /* reserve room so growing in place is possible */
  munmap(p + 4 * PG, 0);
  trc_expect(t, p, 4 * PG, 'A', "first");
  char* g = mremap(p, 4 * PG, 8 * PG, MREMAP_MAYMOVE);
  CHECK(g != MAP_FAILED, "mremap grow");
  memset(g, 'G', 8 * PG);
  trc_expect(t, g, 8 * PG, 'G', "grown");
  char* s = mremap(g, 8 * PG, 2 * PG, 0);
  CHECK(s == g, "mremap shrink");
  char* tail = map_at(g + 2 * PG, 2 * PG, 'T');             /* new pages where the tail was */
  memset(s, 'S', 2 * PG);
  trc_expect(t, s, 2 * PG, 'S', "shrunk");
  trc_expect(t, tail, 2 * PG, 'T', "old tail, new pages");
  char* dst = map_at(NULL, 2 * PG, 'x');
  char* m = mremap(s, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
  CHECK(m == dst, "mremap move");
  map_at(s, 2 * PG, 'N');                                  /* the old address gets new pages */
  trc_expect(t, s, 2 * PG, 'N', "old address after move");
  trc_expect(t, m, 2 * PG, 'S', "moved pages at their new address");
  NOTE("invalidations %llu", (unsigned long long)trc_stats(t).invalidations);
}

TEST(rc_mmap_fixed_over_registered) {
  trc_t* t = trc_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  trc_expect(t, p, LEN, 'A', "first");
  map_over(p + LEN / 4, LEN / 2, 'F');                  /* over live pages: one atomic call */
  memset(p, 'F', LEN);
  trc_expect(t, p, LEN, 'F', "after MAP_FIXED");
}

TEST(rc_madvise_dontneed) {
  trc_t* t = trc_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  trc_expect(t, p, LEN, 'A', "first");
  CHECK(madvise(p, LEN, MADV_DONTNEED) == 0, "madvise");
  memset(p, 'Z', LEN);                                      /* faults in new zero pages */
  trc_expect(t, p, LEN, 'Z', "after DONTNEED");
  CHECK(trc_stats(t).invalidations == 1, "one invalidation");
}

TEST(rc_brk_shrink) {
  trc_t* t = trc_open(NULL);
  char* base = sbrk(0);
  char* top = (char*)(((uintptr_t)base + PG - 1) & ~(PG - 1));
  CHECK(brk(top + LEN) == 0, "brk grow");
  memset(top, 'A', LEN);
  trc_expect(t, top, LEN, 'A', "heap");
  CHECK(sbrk(-(intptr_t)LEN) != (void*)-1, "sbrk shrink");
  CHECK(sbrk((intptr_t)LEN) != (void*)-1, "sbrk grow again");
  memset(top, 'B', LEN);
  trc_expect(t, top, LEN, 'B', "after sbrk shrink + grow");
  CHECK(brk(top) == 0, "brk shrink");
  CHECK(brk(top + LEN) == 0, "brk grow again");
  memset(top, 'C', LEN);
  trc_expect(t, top, LEN, 'C', "after brk shrink + grow");
  CHECK(trc_stats(t).invalidations == 2, "two invalidations");
}

TEST(rc_fork_parent_registration_stays_valid) {
  trc_t* t = trc_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  trc_expect(t, p, LEN, 'A', "before fork");
  pid_t pid = fork();
  if (pid == 0) {                     /* child: its own copy; unmapping it touches no parent state */
    memset(p, 'C', LEN);
    munmap(p, LEN);
    _exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child");
  memset(p, 'P', LEN);
  trc_expect(t, p, LEN, 'P', "parent after fork");
  CHECK(trc_stats(t).misses == 1, "the parent's region is still a hit (no invalidation from the child)");
}

TEST(rc_overlap_merge_and_in_use) {
  trc_t* t = trc_open(NULL);
  char* p = map_at(NULL, 16 * PG, 'A');
  trc_expect(t, p, 4 * PG, 'A', "a");
  trc_expect(t, p + 2 * PG, 4 * PG, 'A', "overlapping b");   /* merges with idle a */
  pa_rc_stats_t s = trc_stats(t);
  CHECK(s.regions == 1 && s.bytes_pinned == 6 * PG, "merged into one region of 6 pages (%llu, %llu)",
        (unsigned long long)s.regions, (unsigned long long)s.bytes_pinned);
  trc_expect(t, p + 6 * PG, 2 * PG, 'A', "adjacent c");     /* touches: merges too */
  CHECK(trc_stats(t).regions == 1 && trc_stats(t).bytes_pinned == 8 * PG, "adjacent merged");
  trc_expect(t, p, 8 * PG, 'A', "hit on the union");
  CHECK(trc_stats(t).hits == 1, "hit");
  pa_rc_region_t* held = trc_get(t, p, 8 * PG);
  pa_rc_region_t* r2 = trc_get(t, p + 7 * PG, 2 * PG);      /* overlaps an in-use region: not merged */
  CHECK(r2 != held && trc_stats(t).regions == 2, "in-use region left alone");
  pa_rc_put(&t->c, r2);
  pa_rc_put(&t->c, held);
}

TEST(rc_registration_failure_leaves_nothing) {
  trc_t* t = trc_open(NULL);
  char* p = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  pa_rc_region_t* r = NULL;
  int rc = pa_rc_get(&t->c, p, LEN, 1, &r);
  CHECK(rc == -EFAULT, "PROT_NONE registration should fail with EFAULT, got %d", rc);
  t->fail_next = EIO;
  char* q = map_at(NULL, LEN, 'A');
  CHECK_ERR(pa_rc_get(&t->c, q, LEN, 1, &r), EIO);
  pa_rc_stats_t s = trc_stats(t);
  CHECK(s.regions == 0 && s.bytes_pinned == 0 && s.misses == 2, "nothing cached");
  trc_expect(t, q, LEN, 'A', "works afterwards");
}

TEST(rc_free_while_in_use) {
  trc_t* t = trc_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  uint64_t pin0 = tu_status_kb("VmPin");
  pa_rc_region_t* r = trc_get(t, p, LEN);
  munmap(p, LEN);
  map_at(p, LEN, 'B');
  pa_rc_region_t* r2 = trc_get(t, p, LEN);                  /* drains: r invalid, still in use */
  CHECK(r2 != r, "a new region for the new pages");
  CHECK(trc_send(t, r, p, LEN, 'A') == LEN, "the in-flight region still pins (and sends) the old pages");
  CHECK(trc_send(t, r2, p, LEN, 'B') == LEN, "the new region sends the new pages");
  CHECK(trc_stats(t).regions == 2, "both registered");
  pa_rc_put(&t->c, r);                                      /* last put deregisters the invalid one */
  pa_rc_stats_t s = trc_stats(t);
  CHECK(s.regions == 1 && s.bytes_pinned == LEN, "invalid region deregistered on put");
  pa_rc_put(&t->c, r2);
  CHECK(tu_status_kb("VmPin") - pin0 == LEN / 1024, "VmPin = one region");
}

TEST(rc_count_and_size_limits_protect_in_use) {
  pa_rc_config_t cfg = { .max_regions = 4, .max_bytes = 6 * PG, .no_merge = 1 };
  trc_t* t = trc_open(&cfg);
  char* p = map_at(NULL, 32 * PG, 'A');
  pa_rc_region_t* h[4];
  for (int i = 0; i < 4; i++) h[i] = trc_get(t, p + (size_t)i * 2 * PG, PG);   /* 4 regions, in use */
  pa_rc_region_t* r = NULL;
  CHECK_ERR(pa_rc_get(&t->c, p + 20 * PG, PG, 1, &r), ENOSPC);               /* count: all in use */
  pa_rc_put(&t->c, h[2]);
  pa_rc_put(&t->c, h[0]);
  pa_rc_put(&t->c, h[1]);                                   /* release order: 2, 0, 1 */
  trc_expect(t, p + 20 * PG, PG, 'A', "5th");               /* evicts the least recently released: 2 */
  pa_rc_stats_t s = trc_stats(t);
  CHECK(s.evictions == 1 && s.regions == 4, "one eviction");
  trc_expect(t, p, PG, 'A', "0 still cached");
  trc_expect(t, p + 2 * PG, PG, 'A', "1 still cached");
  CHECK(trc_stats(t).hits == 2, "0 and 1 hit (2 was the LRU victim)");
  /* size: 6 pages max; 4 held pages + 3 more needs evictions of idle ones only */
  trc_expect(t, p + 24 * PG, 3 * PG, 'A', "3 pages");
  s = trc_stats(t);
  CHECK(s.bytes_pinned <= 6 * PG, "size limit holds: %llu", (unsigned long long)s.bytes_pinned);
  CHECK_ERR(pa_rc_get(&t->c, p, 7 * PG, 1, &r), ENOSPC);   /* larger than the limit */
  pa_rc_put(&t->c, h[3]);
}

static void drop_cap_ipc_lock(void) {
  struct __user_cap_header_struct { uint32_t version; int pid; } hdr = { 0x20080522, 0 };
  struct { uint32_t eff, perm, inh; } d[2];
  memset(d, 0, sizeof d);
  CHECK(syscall(SYS_capget, &hdr, d) == 0, "capget");
  d[0].eff &= ~(1u << 14); d[0].perm &= ~(1u << 14); d[0].inh &= ~(1u << 14);
  CHECK(syscall(SYS_capset, &hdr, d) == 0, "capset");
}

TEST(rc_memlock_exhaustion_evicts_and_retries) {
  drop_cap_ipc_lock();
  struct rlimit { unsigned long cur, max; } rl = { 8 * PA_MiB, 8 * PA_MiB };
  CHECK(syscall(SYS_setrlimit, 8 /* RLIMIT_MEMLOCK */, &rl) == 0, "setrlimit");
  trc_t* t = trc_open(NULL);
  char* p = map_at(NULL, 32 * PA_MiB, 'A');
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 16; i++) {                          /* 32 MiB of 2 MiB buffers through an 8 MiB limit */
      char* b = p + (size_t)i * 2 * PA_MiB;
      memset(b, 'a' + i, 2 * PA_MiB);
      trc_expect(t, b, 2 * PA_MiB, 'a' + i, "buffer");
      CHECK(tu_status_kb("VmPin") <= 8 * 1024, "VmPin within the limit");
    }
  pa_rc_stats_t s = trc_stats(t);
  NOTE("32 gets of 2 MiB under an 8 MiB RLIMIT_MEMLOCK: %llu evictions, %llu regions, VmPin %llu kB",
       (unsigned long long)s.evictions, (unsigned long long)s.regions,
       (unsigned long long)tu_status_kb("VmPin"));
  CHECK(s.evictions >= 28 && s.bytes_pinned <= 8 * PA_MiB, "evict-and-retry");
  /* all in use: nothing evictable -> the backend's ENOMEM comes through */
  pa_rc_region_t* h[4];
  int n = 0, rc = 0;
  for (; n < 4; n++) if ((rc = pa_rc_get(&t->c, p + (size_t)n * 2 * PA_MiB, 2 * PA_MiB, 1, &h[n])) != 0) break;
  pa_rc_region_t* r = NULL;
  if (rc == 0) rc = pa_rc_get(&t->c, p + 24 * PA_MiB, 2 * PA_MiB, 1, &r);
  CHECK(rc == -ENOMEM, "with everything in use the pin fails with ENOMEM, got %d", rc);
  for (int i = 0; i < n; i++) pa_rc_put(&t->c, h[i]);
}

TEST(rc_40000_unmap_cycles_keep_the_set_bounded) {
  trc_t* t = trc_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  trc_expect(t, p, LEN, 'A', "first");
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
  pa_rc_stats_t s = trc_stats(t);
  NOTE("queued at most %d ranges (bound %d) over 40000 cycles; regions %llu before the drain",
       maxq, PA_IV_SLOTS + 1, (unsigned long long)s.regions);
  CHECK(maxq <= PA_IV_SLOTS + 1, "bounded");
  memset(p, 'N', LEN);
  trc_expect(t, p, LEN, 'N', "after the cycles");
  CHECK(pa_iv_queued(t->c.sink) == 0, "drained");
}

/* ---- threads registering while another thread unmaps --------------------- */
#define NBUF 8
typedef struct mt_s {
  trc_t* t;
  char* base;
  pthread_mutex_t buf_mu[NBUF];
  pthread_mutex_t ring_mu;                  /* io_uring sends are single-threaded */
  _Atomic int stop;
  _Atomic long sends, bad;
} mt_t;

static void* mt_worker(void* arg) {
  mt_t* m = arg;
  unsigned seed = (unsigned)(uintptr_t)pthread_self();
  for (int it = 0; it < 1500; it++) {
    int b = (int)(rand_r(&seed) % NBUF);
    char* p = m->base + (size_t)b * 4 * PG;
    unsigned char pat = (unsigned char)('a' + it % 26);
    pthread_mutex_lock(&m->buf_mu[b]);
    memset(p, pat, 4 * PG);
    pa_rc_region_t* r = NULL;
    int rc = pa_rc_get(&m->t->c, p, 4 * PG, 1, &r);
    if (rc == 0) {
      pthread_mutex_lock(&m->ring_mu);
      pa_uring_reg_t ur = { r->addr, r->len, (unsigned)r->handle, (unsigned)(r->handle >> 32) };
      int slot = pa_uring_slot_for(&ur, p, 4 * PG);
      unsigned char out[4 * PG];
      int w = pa_uring_rw_fixed(&m->t->u, 1, m->t->fd, p, 4 * PG, 0, (unsigned)slot);
      ssize_t rd = pread(m->t->fd, out, sizeof out, 0);
      pthread_mutex_unlock(&m->ring_mu);
      if (w != (int)(4 * PG) || rd != (ssize_t)sizeof out || tu_count(out, sizeof out, pat) != sizeof out) m->bad++;
      m->sends++;
      pa_rc_put(&m->t->c, r);
    } else {
      m->bad++;
    }
    pthread_mutex_unlock(&m->buf_mu[b]);
  }
  return NULL;
}

static void* mt_unmapper(void* arg) {
  mt_t* m = arg;
  unsigned seed = 7;
  while (!m->stop) {
    int b = (int)(rand_r(&seed) % NBUF);
    char* p = m->base + (size_t)b * 4 * PG;
    pthread_mutex_lock(&m->buf_mu[b]);
    switch (rand_r(&seed) % 3) {
    /* The whole buffer gets new pages in ONE mmap(MAP_FIXED) (the hook posts it), never munmap +
       MAP_FIXED: the hole in between could be taken by another thread's mapping, which MAP_FIXED
       would then silently replace. munmap's own invalidation is tested single-threaded. */
    case 0: mmap(p, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0); break;
    case 1: mmap(p + PG, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0); break;
    default: madvise(p, 4 * PG, MADV_DONTNEED); break;
    }
    pthread_mutex_unlock(&m->buf_mu[b]);
  }
  return NULL;
}

TEST(rc_threads_register_while_others_unmap) {
  static mt_t m;
  m.t = trc_open(NULL);
  m.base = map_at(NULL, NBUF * 4 * PG, 'x');
  for (int i = 0; i < NBUF; i++) pthread_mutex_init(&m.buf_mu[i], NULL);
  pthread_mutex_init(&m.ring_mu, NULL);
  pthread_t w[3], u;
  pthread_create(&u, NULL, mt_unmapper, &m);
  for (int i = 0; i < 3; i++) pthread_create(&w[i], NULL, mt_worker, &m);
  for (int i = 0; i < 3; i++) pthread_join(w[i], NULL);
  m.stop = 1;
  pthread_join(u, NULL);
  pa_rc_stats_t s = trc_stats(m.t);
  NOTE("%ld sends, %ld bad; hits %llu misses %llu invalidations %llu",
       (long)m.sends, (long)m.bad, (unsigned long long)s.hits, (unsigned long long)s.misses,
       (unsigned long long)s.invalidations);
  CHECK(m.bad == 0 && m.sends == 4500, "every send carried the current bytes");
  CHECK(s.invalidations > 0 && s.hits > 0, "both paths exercised");
}

/* test_rc_threads.c — workers register and send while another thread
 * unmaps, remaps and discards the same buffers through the hooks. */
#define _GNU_SOURCE
#include "wire.h"

#include <stdlib.h>

#define NBUF 8

typedef struct mt_s {
  rcw_t* t;
  char* base;
  pthread_mutex_t buf_mu[NBUF];
  _Atomic int stop;
  _Atomic long sends, bad;
} mt_t;

static void* worker(void* arg) {
  mt_t* m = arg;
  unsigned seed = (unsigned)(uintptr_t)pthread_self();
  for (int it = 0; it < rcw_thread_iters; it++) {
    int b = (int)(rand_r(&seed) % NBUF);
    char* p = m->base + (size_t)b * 4 * PG;
    pthread_mutex_lock(&m->buf_mu[b]);
    memset(p, 'a' + it % 26, 4 * PG);
    pa_rc_region_t* r = NULL;
    if (pa_rc_get(&m->t->c, p, 4 * PG, RCW_ACCESS, &r) == 0) {
      if (rcw_send(m->t, r, p, 4 * PG) != 4 * PG) m->bad++;
      m->sends++;
      pa_rc_put(&m->t->c, r);
    } else {
      m->bad++;
    }
    pthread_mutex_unlock(&m->buf_mu[b]);
  }
  return NULL;
}

static void* unmapper(void* arg) {
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
  m.t = rcw_open(NULL);
  m.base = map_at(NULL, NBUF * 4 * PG, 'x');
  for (int i = 0; i < NBUF; i++) pthread_mutex_init(&m.buf_mu[i], NULL);
  pthread_t w[3], u;
  pthread_create(&u, NULL, unmapper, &m);
  for (int i = 0; i < 3; i++) pthread_create(&w[i], NULL, worker, &m);
  for (int i = 0; i < 3; i++) pthread_join(w[i], NULL);
  m.stop = 1;
  pthread_join(u, NULL);
  pa_rc_stats_t s = rcw_stats(m.t);
  NOTE("%ld %s sends, %ld stale or failed; hits %llu misses %llu invalidations %llu",
       (long)m.sends, rcw_binding, (long)m.bad, (unsigned long long)s.hits, (unsigned long long)s.misses,
       (unsigned long long)s.invalidations);
  CHECK(m.bad == 0 && m.sends == 3 * rcw_thread_iters, "every send carried the current bytes");
  CHECK(s.invalidations > 0 && s.hits > 0, "both paths exercised");
}

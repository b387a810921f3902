/* test_thread_reuse.c — a dead thread's heap, and the pages its spans
 * touched, serve the next thread: a program that keeps starting threads
 * does not keep growing. */
#include "child.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TR_THREADS 4000
#define TR_CLASSES 8
#define TR_ROUNDS  4

static pthread_barrier_t tr_alive;

/* One block of each of TR_CLASSES size classes, written, held until every
 * thread of the round is alive, then freed. */
static void* tr_thread(void* arg) {
  (void)arg;
  void* v[TR_CLASSES];
  for (int i = 0; i < TR_CLASSES; i++) {
    size_t n = 16 + (size_t)i * 200;
    v[i] = malloc(n);
    if (v[i] != NULL) memset(v[i], 1, n);
  }
  pthread_barrier_wait(&tr_alive);
  for (int i = 0; i < TR_CLASSES; i++) free(v[i]);
  return NULL;
}

static long tr_rss_kib(void) {
  FILE* f = fopen("/proc/self/statm", "r");
  long size = 0, res = 0;
  if (f != NULL) {
    if (fscanf(f, "%ld %ld", &size, &res) != 2) res = 0;
    fclose(f);
  }
  return res * 4;
}

/* Rounds of TR_THREADS threads alive at once. The first round makes the
 * heaps and touches their spans' pages; every later round's threads adopt
 * the dead ones' heaps and must find their spans where they left them.
 * Before, each heap gave its empty spans back at thread exit and the next
 * thread's spans landed on other slices: +9 to +11 MiB RSS a round (2 GiB of
 * slices to wander over). */
TEST(shim_threads_dead_heap_serves_the_next_thread) {
  const char* v = getenv("PINARENA_REGISTER");
  if (v != NULL && strcmp(v, "eager") == 0)
    SKIP("PINARENA_REGISTER=eager pins (populates) each chunk it maps: 4000 threads' spans would pin 2 GiB");
  pthread_t* t = calloc(TR_THREADS, sizeof(*t));
  CHECK(t != NULL, "calloc");
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  long rss[TR_ROUNDS];
  for (int r = 0; r < TR_ROUNDS; r++) {
    CHECK(pthread_barrier_init(&tr_alive, NULL, TR_THREADS + 1) == 0, "barrier");
    for (int i = 0; i < TR_THREADS; i++) CHECK(pthread_create(&t[i], &attr, tr_thread, NULL) == 0, "thread %d", i);
    pthread_barrier_wait(&tr_alive);
    for (int i = 0; i < TR_THREADS; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&tr_alive);
    rss[r] = tr_rss_kib();
  }
  pthread_attr_destroy(&attr);
  free(t);
  long grown = rss[TR_ROUNDS - 1] - rss[0];
  NOTE("%d rounds of %d threads x %d classes: RSS after each round %ld / %ld / %ld / %ld KiB (+%ld KiB after the first)",
       TR_ROUNDS, TR_THREADS, TR_CLASSES, rss[0], rss[1], rss[2], rss[3], grown);
  CHECK(grown < 4096, "RSS grew %ld KiB over %d rounds after the first: the dead threads' pages were not reused",
        grown, TR_ROUNDS - 1);
}

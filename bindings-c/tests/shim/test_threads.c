/* test_threads.c — cross-thread frees, thread exit, fork. */
#include "child.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Producer/consumer: producers allocate and fill, consumers check and free.
 * Ring of slots handed over with atomics. */
#define PC_SLOTS 4096
#define PC_ITEMS 400000
static _Atomic(unsigned char*) slots[PC_SLOTS];
static _Atomic long produced, consumed, bad;

static void* producer(void* arg) {
  unsigned seed = (unsigned)(uintptr_t)arg;
  for (;;) {
    long k = atomic_fetch_add(&produced, 1);
    if (k >= PC_ITEMS) return NULL;
    seed = seed * 1103515245u + 12345u;
    size_t n = 8 + (seed >> 8) % 3000;
    unsigned char* p = malloc(n);
    p[0] = (unsigned char)(n & 0xff); p[1] = (unsigned char)(n >> 8);
    memset(p + 2, (int)(n & 0x7f), n - 2);
    size_t s = (size_t)k % PC_SLOTS;
    unsigned char* expect = NULL;
    while (!atomic_compare_exchange_weak(&slots[s], &expect, p)) { expect = NULL; sched_yield(); }
  }
}

static void* consumer(void* arg) {
  (void)arg;
  for (;;) {
    long k = atomic_fetch_add(&consumed, 1);
    if (k >= PC_ITEMS) return NULL;
    size_t s = (size_t)k % PC_SLOTS;
    unsigned char* p;
    while ((p = atomic_exchange(&slots[s], NULL)) == NULL) sched_yield();
    size_t n = (size_t)p[0] | ((size_t)p[1] << 8);
    for (size_t i = 2; i < n; i += 61) if (p[i] != (unsigned char)(n & 0x7f)) atomic_fetch_add(&bad, 1);
    free(p);
  }
}

TEST(shim_threads_producer_consumer) {
  pthread_t t[4];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, producer, (void*)(uintptr_t)(i + 1));
  for (int i = 2; i < 4; i++) pthread_create(&t[i], NULL, consumer, NULL);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  CHECK(bad == 0, "%ld corrupted items", (long)bad);
  pinarena_stats_t st;
  pinarena_get_stats(&st);
  CHECK(st.remote_frees > 0, "no cross-thread frees counted");
  NOTE("%d items, %llu remote frees, %llu chunks (%llu MiB)", PC_ITEMS, (unsigned long long)st.remote_frees,
       (unsigned long long)st.chunks, (unsigned long long)(st.chunk_bytes >> 20));
  CHECK(st.chunk_bytes <= ((uint64_t)256 << 20), "memory not reused: %llu MiB", (unsigned long long)(st.chunk_bytes >> 20));
}

/* Remote frees carry their count in the span's list word (types.h), and the
 * owner takes a list in whole, unread, when its local list is empty
 * (alloc.c, pa_span_collect). The owner fills spans of one class (parked
 * full), another thread frees every block (the first into each full span
 * goes by the heap's delayed list, the rest onto the span's list); taking
 * them back must count each block once — the stats' remote frees grow by
 * exactly the blocks freed — and hand out the same slices, no new span;
 * freed again locally, the spans empty and go back to their chunks (whose
 * check walks every list: a block counted twice or lost aborts there). */
#define WHOLE_SIZE 1000                         /* a class no other test of this process fills */
#define WHOLE_N 400                             /* 65 blocks a one-slice span: 7 spans */
static void* free_all(void* arg) {
  void** v = arg;
  for (int i = 0; i < WHOLE_N; i++) free(v[i]);
  return NULL;
}

static int same_slice_as_one_of(void* const* v, const void* p) {
  for (int i = 0; i < WHOLE_N; i++)
    if ((uintptr_t)v[i] >> 16 == (uintptr_t)p >> 16) return 1;
  return 0;
}

TEST(shim_threads_remote_frees_taken_in_whole_count_once) {
  static void* first[WHOLE_N];
  static void* again[WHOLE_N];
  for (int i = 0; i < WHOLE_N; i++) { first[i] = malloc(WHOLE_SIZE); memset(first[i], 0x5a, WHOLE_SIZE); }
  pinarena_stats_t a, b;
  pinarena_get_stats(&a);
  pthread_t t;
  pthread_create(&t, NULL, free_all, first);
  pthread_join(t, NULL);
  int outside = 0;
  for (int i = 0; i < WHOLE_N; i++) {
    again[i] = malloc(WHOLE_SIZE);
    if (!same_slice_as_one_of(first, again[i])) outside++;
    memset(again[i], 0x3c, WHOLE_SIZE);
  }
  pinarena_get_stats(&b);
  CHECK(b.remote_frees - a.remote_frees == WHOLE_N, "remote frees taken in: %llu, freed: %d",
        (unsigned long long)(b.remote_frees - a.remote_frees), WHOLE_N);
  CHECK(outside == 0, "%d of %d blocks from slices the freed blocks were not in (a new span)", outside, WHOLE_N);
  for (int i = 0; i < WHOLE_N; i++) free(again[i]);
  NOTE("%d blocks freed remotely, all taken back, in the same slices", WHOLE_N);
}

/* Threads come and go; their heaps are handed back and adopted, so memory
 * does not grow with the number of threads. Objects outlive their thread. */
static void* short_lived(void* arg) {
  void** keep = arg;
  void* tmp[200];
  for (int i = 0; i < 200; i++) tmp[i] = malloc(64 + (size_t)i * 8);
  for (int i = 0; i < 200; i++) free(tmp[i]);
  *keep = malloc(100);                         /* survives the thread */
  memset(*keep, 0x33, 100);
  return NULL;
}

TEST(shim_threads_exit_hand_back) {
  void* keep[300];
  pinarena_stats_t a, b;
  for (int i = 0; i < 300; i++) {
    pthread_t t;
    pthread_create(&t, NULL, short_lived, &keep[i]);
    pthread_join(t, NULL);
    if (i == 9) pinarena_get_stats(&a);
  }
  pinarena_get_stats(&b);
  for (int i = 0; i < 300; i++) { CHECK(((unsigned char*)keep[i])[99] == 0x33, "survivor %d", i); free(keep[i]); }
  CHECK(b.chunks <= a.chunks + 2, "chunks grew with threads: %llu -> %llu", (unsigned long long)a.chunks, (unsigned long long)b.chunks);
  NOTE("chunks after 10 threads %llu, after 300 threads %llu", (unsigned long long)a.chunks, (unsigned long long)b.chunks);
}

/* A thread that exits holding many empty spans (it freed all it made:
 * up to PA_KEEP_EMPTY + 1 a class stay with its heap) leaves them to the
 * next thread that needs a span, not to its own exit (heap.c,
 * heap_thread_done): they must still come back. Here the next need is
 * another thread's objects of another class (one-slice spans too), which
 * must find those slices instead of mapping new chunks (with the exit's
 * reclaim flag left out: 40 -> 48 MiB of chunks). The thread fills every
 * class before it frees any: a span it needed after its frees would take
 * its kept spans back itself first (chunk.c, give_back_kept_first). */
#define EMPTY_CLASSES 60                        /* 16..960 bytes, step 16 */
#define EMPTY_SPANS 9                           /* one-slice spans a class: all kept once empty */
static void* fill_and_empty(void* arg) {
  (void)arg;
  enum { MAX_BLOCKS = EMPTY_CLASSES * EMPTY_SPANS * 65536 / 16 };
  static void* v[MAX_BLOCKS];
  size_t k = 0;
  for (int c = 1; c <= EMPTY_CLASSES; c++) {
    size_t n = (size_t)c * 16, count = (size_t)EMPTY_SPANS * 65536 / n;
    for (size_t i = 0; i < count && k < MAX_BLOCKS; i++) { v[k] = malloc(n); memset(v[k], c, 16); k++; }
  }
  for (size_t i = 0; i < k; i++) free(v[i]);
  return NULL;
}

/* The next need comes from a thread with a heap of its own (a thread with
 * none would adopt the dead one's heap, spans and all): it must reclaim. */
typedef struct { _Atomic int has_heap, go; uint64_t before, after; } next_need_t;
static void* need_after_exit(void* arg) {
  next_need_t* x = arg;
  free(malloc(16));                                    /* this thread's own heap */
  atomic_store(&x->has_heap, 1);
  while (!atomic_load(&x->go)) sched_yield();
  pinarena_stats_t st;
  pinarena_get_stats(&st);
  x->before = st.chunk_bytes;
  enum { OTHER = 2000, NOTHER = (32 << 20) / OTHER };   /* 32 MiB of a class the thread never used */
  static void* other[NOTHER];
  for (int i = 0; i < NOTHER; i++) { other[i] = malloc(OTHER); memset(other[i], 7, OTHER); }
  pinarena_get_stats(&st);
  x->after = st.chunk_bytes;
  for (int i = 0; i < NOTHER; i++) free(other[i]);
  return NULL;
}

TEST(shim_threads_exit_leaves_empty_spans_to_the_next_need) {
  next_need_t x = { 0 };
  pthread_t t, n;
  CHECK(pthread_create(&n, NULL, need_after_exit, &x) == 0, "pthread_create");
  while (!atomic_load(&x.has_heap)) sched_yield();
  CHECK(pthread_create(&t, NULL, fill_and_empty, NULL) == 0, "pthread_create");
  pthread_join(t, NULL);
  atomic_store(&x.go, 1);
  pthread_join(n, NULL);
  NOTE("chunk bytes after the thread emptied %d classes x ~%d spans and exited: %llu MiB; after another "
       "thread's 32 MiB of 2000-byte objects: %llu MiB", EMPTY_CLASSES, EMPTY_SPANS,
       (unsigned long long)(x.before >> 20), (unsigned long long)(x.after >> 20));
  CHECK(x.after <= x.before + ((uint64_t)4 << 20),
        "the dead thread's empty spans were not given back: chunk bytes %llu -> %llu MiB",
        (unsigned long long)(x.before >> 20), (unsigned long long)(x.after >> 20));
}

enum { ADOPT_N = 1000 };
typedef struct { void** v; _Atomic int ready, go; } holder_t;
static void* alloc_and_hold(void* arg) {
  holder_t* h = arg;
  for (int i = 0; i < ADOPT_N; i++) { h->v[i] = malloc(96); memset(h->v[i], 0x5a, 96); }
  atomic_store(&h->ready, 1);
  while (!atomic_load(&h->go)) sched_yield();
  return NULL;
}
static void* free_then_malloc(void* arg) {
  void** v = arg;
  free(v[0]);                                  /* no heap yet: a remote free into the dead thread's heap */
  void* p = malloc(32);                        /* gets a heap: the one v came from */
  for (int i = 1; i < ADOPT_N; i++) free(v[i]);
  free(p);
  return NULL;
}

TEST(shim_threads_new_thread_adopts_the_heap_it_frees_into) {
  static void* from_x[ADOPT_N];
  static void* from_y[ADOPT_N];
  holder_t x = { .v = from_x }, y = { .v = from_y };
  pthread_t tx, ty, t;
  /* both alive at once, so they have two heaps; x's is abandoned first, y's last (adopted next by default) */
  pthread_create(&tx, NULL, alloc_and_hold, &x);
  pthread_create(&ty, NULL, alloc_and_hold, &y);
  while (!atomic_load(&x.ready) || !atomic_load(&y.ready)) sched_yield();
  atomic_store(&x.go, 1); pthread_join(tx, NULL);
  atomic_store(&y.go, 1); pthread_join(ty, NULL);
  pinarena_stats_t a, b;
  pinarena_get_stats(&a);
  pthread_create(&t, NULL, free_then_malloc, from_x); pthread_join(t, NULL);
  pinarena_get_stats(&b);
  uint64_t remote = b.remote_frees - a.remote_frees;
  NOTE("remote frees while a new thread freed %d blocks of a dead thread: %llu", ADOPT_N, (unsigned long long)remote);
  CHECK(remote <= 1, "the new thread adopted another heap: %llu of %d frees were remote", (unsigned long long)remote, ADOPT_N);
  for (int i = 0; i < ADOPT_N; i++) free(from_y[i]);
}

static _Atomic int stop_churn;
static void* churn(void* arg) {
  (void)arg;
  while (!atomic_load(&stop_churn)) { void* p = malloc(200); free(p); void* q = malloc(70000); free(q); }
  return NULL;
}

TEST(shim_fork_child_uses_heap) {
  pthread_t t;
  pthread_create(&t, NULL, churn, NULL);       /* another thread allocating across the fork */
  char* pre = malloc(6 << 20);                 /* a chunk of this process (eager: not one inherited from the runner) */
  memset(pre, 'p', 5000);
  pinarena_region_t r0;                        /* registered in the parent (lazy: on this lookup) */
  CHECK(pinarena_lookup(pre, 1, &r0) == 0, "parent lookup");
  for (int round = 0; round < 20; round++) {
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
      for (int i = 0; i < 5000; i++) if (pre[i] != 'p') _exit(2);
      void* v[1000];
      for (int i = 0; i < 1000; i++) { v[i] = malloc((size_t)(i % 50) * 100 + 1); memset(v[i], 1, (size_t)(i % 50) * 100 + 1); }
      for (int i = 0; i < 1000; i++) free(v[i]);
      pinarena_region_t r;
      if (pinarena_lookup(pre, 1, &r) != -ENODATA) _exit(3);   /* inherited: the pin is the parent's */
      void* big = malloc(6 << 20);                /* a new chunk (pre still holds its own): registered by the child */
      memset(big, 2, 6 << 20);
      if (pinarena_lookup(big, 1, &r) != 0) _exit(4);
      free(big);
      free(pre);
      _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child round %d: status %x", round, st);
  }
  atomic_store(&stop_churn, 1);
  pthread_join(t, NULL);
  CHECK(pre[4999] == 'p', "parent data");
  free(pre);
}

/* test_trim.c — pinarena_trim() against every allocation path at once: one
 * thread trims in a loop while 8 threads allocate small, large, huge and
 * aligned objects, grow and shrink them with realloc and free each other's,
 * every object's contents checked before it is freed. Runs
 * PINARENA_STRESS_SECONDS (default 30) seconds; any fault ends the test
 * child (the runner reports the signal), any changed byte fails it. */
#include "child.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKERS 8
#define SLOTS   32
#define SHARED  64

typedef struct { unsigned char* p; size_t n; } obj_t;

static _Atomic int stop;
static _Atomic long bad, ops, trims;
static _Atomic int bad_line;          /* where the last one was found */
#define BAD() do { atomic_fetch_add(&bad, 1); atomic_store(&bad_line, __LINE__); } while (0)
static obj_t shared[SHARED];                      /* handed between threads: freed by whoever takes it */
static pthread_mutex_t shared_lock[SHARED];

static inline uint64_t rnd(uint64_t* s) { *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return *s; }

/* A byte pattern of the object: its first and last 256 bytes and one byte per 4 KiB. */
static unsigned char tag(const unsigned char* p, size_t n, size_t i) { return (unsigned char)(((uintptr_t)p >> 4) ^ n ^ (i * 131)); }
static void fill(unsigned char* p, size_t n) {
  for (size_t i = 0; i < n && i < 256; i++) p[i] = tag(p, n, i);
  for (size_t i = n > 256 ? n - 256 : 0; i < n; i++) p[i] = tag(p, n, i);
  for (size_t i = 4096; i < n; i += 4096) p[i] = tag(p, n, i);
}
static int intact(const unsigned char* p, size_t n) {
  for (size_t i = 0; i < n && i < 256; i++) if (p[i] != tag(p, n, i)) return 0;
  for (size_t i = n > 256 ? n - 256 : 0; i < n; i++) if (p[i] != tag(p, n, i)) return 0;
  for (size_t i = 4096; i < n; i += 4096) if (p[i] != tag(p, n, i)) return 0;
  return 1;
}
static void check_free(unsigned char* p, size_t n) {
  if (p == NULL) return;
  if (!intact(p, n)) BAD();
  free(p);
}

/* Every size class: small (16 B..256 KiB), large (to 2 MiB), huge (2..12 MiB), weighted to small. */
static size_t pick_size(uint64_t* s) {
  unsigned k = (unsigned)(rnd(s) % 100);
  if (k < 70) return 1 + rnd(s) % (k < 50 ? 1024 : 256 * 1024);
  if (k < 90) return 256 * 1024 + rnd(s) % (2 << 20);
  return (2 << 20) + rnd(s) % (10 << 20);
}

static void* worker(void* arg) {
  uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(uintptr_t)arg + 1;
  obj_t mine[SLOTS] = {{0}};
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    size_t k = rnd(&s) % SLOTS;
    obj_t* o = &mine[k];
    unsigned what = (unsigned)(rnd(&s) % 10);
    if (what < 5) {                                    /* malloc (calloc now and then) */
      check_free(o->p, o->n);
      o->n = pick_size(&s);
      o->p = (what == 0) ? calloc(1, o->n) : malloc(o->n);
      if (o->p == NULL) { BAD(); o->n = 0; continue; }
      if (what == 0) for (size_t i = 0; i < o->n; i += 4093) if (o->p[i] != 0) BAD();
      fill(o->p, o->n);
    } else if (what < 7) {                             /* aligned */
      check_free(o->p, o->n);
      size_t align = (size_t)1 << (4 + rnd(&s) % 19);  /* 16 B .. 4 MiB */
      o->n = rnd(&s) % 3 == 0 ? 0 : pick_size(&s);
      void* p = NULL;
      if (posix_memalign(&p, align, o->n) != 0 || ((uintptr_t)p & (align - 1)) != 0) { BAD(); o->p = NULL; continue; }
      o->p = p;
      fill(o->p, o->n);
    } else if (what < 9) {                             /* realloc, both ways */
      if (o->p == NULL) continue;
      if (!intact(o->p, o->n)) BAD();
      size_t n = rnd(&s) % 2 ? o->n + o->n / 2 + 1 : pick_size(&s);
      unsigned char* q = realloc(o->p, n);
      if (q == NULL) { BAD(); continue; }
      size_t keep = n < o->n ? n : o->n;
      /* the kept prefix must be the old bytes: check the first 256 and the page marks */
      for (size_t i = 0; i < keep && i < 256; i++) if (q[i] != tag(o->p, o->n, i)) { BAD(); break; }
      o->p = q; o->n = n;
      fill(q, n);
    } else {                                           /* hand one over, take one: cross-thread frees */
      size_t j = rnd(&s) % SHARED;
      pthread_mutex_lock(&shared_lock[j]);
      obj_t theirs = shared[j];
      shared[j] = *o;
      pthread_mutex_unlock(&shared_lock[j]);
      check_free(theirs.p, theirs.n);
      o->p = NULL; o->n = 0;
    }
    atomic_fetch_add_explicit(&ops, 1, memory_order_relaxed);
  }
  for (size_t k = 0; k < SLOTS; k++) check_free(mine[k].p, mine[k].n);
  return NULL;
}

static void* trimmer(void* arg) {
  (void)arg;
  while (!atomic_load(&stop)) { pinarena_trim(); atomic_fetch_add(&trims, 1); }
  return NULL;
}

TEST(shim_trim_races_every_allocation_path) {
  const char* e = getenv("PINARENA_STRESS_SECONDS");
  double secs = e ? atof(e) : 30.0;
  pthread_t w[WORKERS], t;
  for (size_t j = 0; j < SHARED; j++) pthread_mutex_init(&shared_lock[j], NULL);
  pthread_create(&t, NULL, trimmer, NULL);
  for (long i = 0; i < WORKERS; i++) pthread_create(&w[i], NULL, worker, (void*)(i + 1));
  double t0 = pa_test_now();
  while (pa_test_now() - t0 < secs) usleep(100000);
  atomic_store(&stop, 1);
  for (int i = 0; i < WORKERS; i++) pthread_join(w[i], NULL);
  pthread_join(t, NULL);
  for (size_t j = 0; j < SHARED; j++) check_free(shared[j].p, shared[j].n);
  NOTE("%.0f s: %ld operations by %d threads, %ld trims, %ld bad", secs, atomic_load(&ops), WORKERS,
       atomic_load(&trims), atomic_load(&bad));
  CHECK(atomic_load(&bad) == 0, "%ld objects changed, failed or misaligned (last at line %d)", atomic_load(&bad),
        atomic_load(&bad_line));
  CHECK(atomic_load(&trims) > 100, "the trimmer ran (%ld trims)", atomic_load(&trims));
}

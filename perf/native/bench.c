/* bench.c — allocator workloads, run once per allocator under LD_PRELOAD.
 *   pinarena-bench churn|prodcons|larson|realloc
 * Prints: workload seconds peak_kb, where peak_kb = VmHWM + HugetlbPages
 * (hugetlb memory is not in RSS; pinarena's chunks may live there). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Each thread of a two-thread workload on its own CPU: left to the scheduler
 * on a 2-CPU machine, producer and consumer sometimes share one CPU and the
 * run takes 5-10x longer (bimodal timings). CPU k modulo the CPUs this
 * process may use; without affinity support the call just fails. */
static void pin_to(int k) {
  cpu_set_t allowed, one;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  int n = CPU_COUNT(&allowed);
  if (n < 2) return;
  for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (seen++ == k % n) { CPU_ZERO(&one); CPU_SET(cpu, &one); pthread_setaffinity_np(pthread_self(), sizeof(one), &one); return; }
  }
}

static inline uint64_t rnd(uint64_t* s) { *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return *s; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (double)t.tv_sec + (double)t.tv_nsec * 1e-9; }

static long status_kb(const char* key) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256]; long v = 0; size_t k = strlen(key);
  while (fgets(line, sizeof(line), f)) if (!strncmp(line, key, k) && line[k] == ':') v = atol(line + k + 1);
  fclose(f);
  return v;
}

/* 1. small-object churn, one thread: 20 M random replace ops over 20 000 live objects of 8..512 B
 *    (`churn N` runs N ops instead: a short run for valgrind --tool=callgrind instruction counts) */
static long churn_ops = 20000000;
static void churn(void) {
  enum { LIVE = 20000 };
  static char* slot[LIVE];
  uint64_t s = 88172645463325252ULL;
  for (long i = 0; i < churn_ops; i++) {
    size_t k = rnd(&s) % LIVE;
    free(slot[k]);
    size_t n = 8 + rnd(&s) % 505;
    slot[k] = malloc(n);
    slot[k][0] = (char)n;
  }
  for (int k = 0; k < LIVE; k++) free(slot[k]);
}

/* 2. producer/consumer: one thread allocates 10 M objects of 16..256 B, the other frees them */
#define RING 8192
static _Atomic(void*) ring[RING];
static void* consumer(void* a) {
  long n = (long)(intptr_t)a;
  pin_to(1);
  for (long i = 0; i < n; i++) {
    void* p;
    for (int spin = 0; (p = atomic_exchange_explicit(&ring[i % RING], NULL, memory_order_acquire)) == NULL;)
      if (++spin > 64) { sched_yield(); spin = 0; }   /* 2 cores, maybe shared: do not burn a time slice */
    free(p);
  }
  return NULL;
}
static void prodcons(void) {
  const long n = 10000000;
  pthread_t t;
  pin_to(0);
  pthread_create(&t, NULL, consumer, (void*)(intptr_t)n);
  uint64_t s = 1234567;
  for (long i = 0; i < n; i++) {
    char* p = malloc(16 + rnd(&s) % 241);
    p[0] = 1;
    for (int spin = 0; atomic_load_explicit(&ring[i % RING], memory_order_relaxed) != NULL;)
      if (++spin > 64) { sched_yield(); spin = 0; }
    atomic_store_explicit(&ring[i % RING], p, memory_order_release);
  }
  pthread_join(t, NULL);
}

/* 3. larson-like server: 2 worker threads, each owns 10 000 slots of 16..1024 B and replaces random
 *    ones; every round each worker's slots are inherited by a NEW thread (frees of objects another,
 *    exited thread allocated) — 20 rounds x 2 threads x 1 M ops. */
/* One cache line per worker: the two workers' descriptors side by side on the main thread's stack would
 * share a line (false sharing: 2-3x slower, depending on where ASLR put the stack). The seed lives in a
 * local while the worker runs. */
typedef struct { char** slot; uint64_t seed; long ops; int cpu; } __attribute__((aligned(64))) lw_t;
static void* larson_worker(void* a) {
  lw_t* w = a;
  pin_to(w->cpu);
  uint64_t seed = w->seed;
  char** slot = w->slot;
  for (long i = 0; i < w->ops; i++) {
    size_t k = rnd(&seed) % 10000;
    free(slot[k]);
    slot[k] = malloc(16 + rnd(&seed) % 1009);
    slot[k][0] = 1;
  }
  w->seed = seed;
  return NULL;
}
static void larson(void) {
  lw_t w[2];
  for (int j = 0; j < 2; j++) { w[j].slot = calloc(10000, sizeof(char*)); w[j].seed = 99 + (uint64_t)j; w[j].ops = 1000000; w[j].cpu = j; }
  for (int round = 0; round < 20; round++) {
    pthread_t t[2];
    for (int j = 0; j < 2; j++) pthread_create(&t[j], NULL, larson_worker, &w[j]);
    for (int j = 0; j < 2; j++) pthread_join(t[j], NULL);
    char** tmp = w[0].slot; w[0].slot = w[1].slot; w[1].slot = tmp;   /* hand the objects over */
  }
  for (int j = 0; j < 2; j++) { for (int k = 0; k < 10000; k++) free(w[j].slot[k]); free(w[j].slot); }
}

/* 4. realloc growth: 20 000 buffers each grown from 16 B by ~1/4 steps to 16 KiB .. 4 MiB */
static void realloc_growth(void) {
  uint64_t s = 42;
  static char* keep[8];
  for (int b = 0; b < 20000; b++) {
    size_t cap = (size_t)16384 << (rnd(&s) % 9);
    char* p = NULL;
    for (size_t n = 16; n < cap; n += n / 4 + 16) { p = realloc(p, n); p[n - 1] = 1; }
    free(keep[b % 8]);
    keep[b % 8] = p;                  /* a few stay alive while others grow */
  }
  for (int i = 0; i < 8; i++) free(keep[i]);
}

int main(int argc, char** argv) {
  const char* w = argc > 1 ? argv[1] : "churn";
  if (argc > 2) churn_ops = atol(argv[2]);
  double t0 = now();
  if (!strcmp(w, "churn")) churn();
  else if (!strcmp(w, "prodcons")) prodcons();
  else if (!strcmp(w, "larson")) larson();
  else if (!strcmp(w, "realloc")) realloc_growth();
  else { fprintf(stderr, "unknown workload %s\n", w); return 2; }
  double t = now() - t0;
  printf("%s %.3f %ld\n", w, t, status_kb("VmHWM") + status_kb("HugetlbPages"));
  return 0;
}

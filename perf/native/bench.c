/* bench.c — allocator workloads, run once per allocator under LD_PRELOAD.
 *   pinarena-bench churn|prodcons|prodcons-1cpu|larson|realloc   (small objects: time)
 *   pinarena-bench big|huge|aligned|regrow|strgrow|calloc|phased|fork (what a program holds: memory)
 * Prints: workload seconds peak_kb, where peak_kb = VmHWM + HugetlbPages
 * (hugetlb memory is not in RSS; pinarena's chunks may live there).
 * PINARENA_BENCH_PERCENT=P (1..100, default 100): every workload that repeats one step (churn, prodcons*,
 * larson, realloc, big, huge, strgrow, calloc, fork) makes P % of its repetitions, at least one; the ones
 * that build up to a size (aligned, regrow, phased) run whole. The quick bench's shorter rounds. */
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
 * process may use, as main saw them before any thread was pinned: a thread
 * inherits its creator's mask, so the consumer, created by the pinned
 * producer, would otherwise see one CPU and stay beside it (it did, until
 * this was read once at start). Without affinity support the call just fails. */
static cpu_set_t process_cpus;
static int process_cpus_known;
static void pin_to(int k) {
  cpu_set_t one;
  int n = process_cpus_known ? CPU_COUNT(&process_cpus) : 0;
  if (n < 2) return;
  for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
    if (!CPU_ISSET(cpu, &process_cpus)) continue;
    if (seen++ == k % n) { CPU_ZERO(&one); CPU_SET(cpu, &one); pthread_setaffinity_np(pthread_self(), sizeof(one), &one); return; }
  }
}

static inline uint64_t rnd(uint64_t* s) { *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return *s; }
static long percent = 100;
static long reps(long n) { long k = n * percent / 100; return k > 0 ? k : 1; }
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
  for (long i = 0, ops = reps(churn_ops); i < ops; i++) {
    size_t k = rnd(&s) % LIVE;
    free(slot[k]);
    size_t n = 8 + rnd(&s) % 505;
    slot[k] = malloc(n);
    slot[k][0] = (char)n;
  }
  for (int k = 0; k < LIVE; k++) free(slot[k]);
}

/* 2. producer/consumer: one thread allocates 10 M objects of 16..256 B, the other frees them.
 *    prodcons: each on its own CPU (every free a remote one, racing the producer's collects);
 *    prodcons-1cpu: both on one CPU, taking turns a ring at a time (what a busy machine makes of it:
 *    each turn the producer takes back 8192 blocks freed while it waited). Until the affinity fix
 *    above, `prodcons` ran as prodcons-1cpu does now. */
#define RING 8192
static _Atomic(void*) ring[RING];
static int consumer_cpu;
static void* consumer(void* a) {
  long n = (long)(intptr_t)a;
  pin_to(consumer_cpu);
  for (long i = 0; i < n; i++) {
    void* p;
    for (int spin = 0; (p = atomic_exchange_explicit(&ring[i % RING], NULL, memory_order_acquire)) == NULL;)
      if (++spin > 64) { sched_yield(); spin = 0; }   /* 2 cores, maybe shared: do not burn a time slice */
    free(p);
  }
  return NULL;
}
static void prodcons(int one_cpu) {
  const long n = reps(10000000);
  pthread_t t;
  consumer_cpu = one_cpu ? 0 : 1;
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
  for (int j = 0; j < 2; j++) { w[j].slot = calloc(10000, sizeof(char*)); w[j].seed = 99 + (uint64_t)j; w[j].ops = reps(1000000); w[j].cpu = j; }
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
  for (long b = 0, nb = reps(20000); b < nb; b++) {
    size_t cap = (size_t)16384 << (rnd(&s) % 9);
    char* p = NULL;
    for (size_t n = 16; n < cap; n += n / 4 + 16) { p = realloc(p, n); p[n - 1] = 1; }
    free(keep[b % 8]);
    keep[b % 8] = p;                  /* a few stay alive while others grow */
  }
  for (int i = 0; i < 8; i++) free(keep[i]);
}

/* Memory workloads: what an allocator makes a program hold (peak RSS + hugetlb pages) for objects from
 * 64 KiB to 1 GiB. Each touches what a real program would: the bytes it writes, no more. */

/* Write one byte in every page of [p, p + n): the program uses the whole object. */
static void touch(char* p, size_t n) { for (size_t o = 0; o < n; o += 4096) p[o] = 1; if (n) p[n - 1] = 1; }

/* 5. big: 64 live objects of 64 KiB..4 MiB (log-uniform), 200 000 random replacements, each new object
 *    written in every page. */
static void big(void) {
  enum { LIVE = 64 };
  static char* slot[LIVE];
  uint64_t s = 7;
  for (long i = 0, ops = reps(200000); i < ops; i++) {
    size_t k = rnd(&s) % LIVE;
    free(slot[k]);
    size_t n = (size_t)65536 << (rnd(&s) % 7);
    n += rnd(&s) % n;                          /* 64 KiB .. 8 MiB, capped below */
    if (n > ((size_t)4 << 20)) n = (size_t)4 << 20;
    slot[k] = malloc(n);
    touch(slot[k], n);
  }
  for (int k = 0; k < LIVE; k++) free(slot[k]);
}

/* 6. huge: objects of 5 MiB, 96 MiB, 300 MiB and 1 GiB, one live at a time, only their first 1 MiB
 *    written (a buffer sized for the worst case). */
static void huge(void) {
  const size_t sizes[] = { (size_t)5 << 20, (size_t)96 << 20, (size_t)300 << 20, (size_t)1 << 30 };
  for (long r = 0, nr = reps(3); r < nr; r++)
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
      char* p = malloc(sizes[i]);
      if (p == NULL) { perror("huge: malloc"); exit(1); }
      touch(p, (size_t)1 << 20);
      free(p);
    }
}

/* 7. aligned: 100 x posix_memalign(2 MiB, 4 KiB) and 2000 page-aligned objects of 4..64 KiB, all
 *    written, all live at the end. */
static void aligned(void) {
  static void* a[100];
  static void* b[2000];
  uint64_t s = 3;
  for (int i = 0; i < 100; i++) { if (posix_memalign(&a[i], (size_t)2 << 20, 4096) != 0) exit(1); touch(a[i], 4096); }
  for (int i = 0; i < 2000; i++) {
    size_t n = 4096 * (1 + rnd(&s) % 16);
    b[i] = aligned_alloc(4096, n);
    if (b[i] == NULL) exit(1);
    touch(b[i], n);
  }
  for (int i = 0; i < 100; i++) free(a[i]);
  for (int i = 0; i < 2000; i++) free(b[i]);
}

/* 8. regrow: one buffer grown by realloc x1.5 from 1 KiB to 1 GiB, the new part written each time
 *    (a vector being filled). */
static void regrow(void) {
  char* p = NULL;
  size_t have = 0;
  for (size_t n = 1024; n <= ((size_t)1 << 30); n = n + n / 2) {
    p = realloc(p, n);
    if (p == NULL) { perror("regrow: realloc"); exit(1); }
    memset(p + have, 1, n - have);
    have = n;
  }
  free(p);
}

/* 9. strgrow: a 4 KiB string grown by realloc in 1..97 byte steps to ~97 KiB, 30 000 times (~58 M
 *    reallocs: a run of 3000 took ~10 ms, too short for its time to be compared). */
static void strgrow(void) {
  uint64_t s = 11;
  for (long r = 0, nr = reps(30000); r < nr; r++) {
    size_t n = 4096;
    char* p = malloc(n);
    p[0] = 1;
    while (n < 97 * 1024) {
      size_t m = n + 1 + rnd(&s) % 97;
      p = realloc(p, m);
      p[m - 1] = (char)m;
      n = m;
    }
    free(p);
  }
}

/* 10. calloc: zeroed arrays of 64 MiB, 256 MiB and 1 GiB, each written sparsely (one page in 64),
 *     freed; three rounds (a sparse matrix, a bitmap). */
static void calloc_huge(void) {
  const size_t sizes[] = { (size_t)64 << 20, (size_t)256 << 20, (size_t)1 << 30 };
  for (long r = 0, nr = reps(3); r < nr; r++)
    for (size_t i = 0; i < 3; i++) {
      char* p = calloc(1, sizes[i]);
      if (p == NULL) { perror("calloc"); exit(1); }
      for (size_t o = 0; o < sizes[i]; o += 64 * 4096) { if (p[o] != 0) { fprintf(stderr, "calloc: not zero\n"); exit(1); } p[o] = 1; }
      free(p);
    }
}

/* 11. phased: build 256 MiB of objects of 16 B..1 MiB, free them all, build again with another size
 *     mix; four phases. */
static void phased(void) {
  enum { MAXN = 400000 };
  static char* obj[MAXN];
  uint64_t s = 5;
  for (int phase = 0; phase < 4; phase++) {
    size_t total = 0, n = 0;
    unsigned maxlog = phase % 2 ? 20 : 12;       /* small-object phases and mixed phases */
    while (total < ((size_t)256 << 20) && n < MAXN) {
      size_t sz = (size_t)16 << (rnd(&s) % (maxlog - 3));
      sz += rnd(&s) % sz;
      obj[n] = malloc(sz);
      touch(obj[n], sz);
      total += sz; n++;
    }
    for (size_t i = 0; i < n; i++) free(obj[i]);
  }
}

/* 12. fork: a 1 GiB heap of 1 MiB objects, written; 20 x fork + child exits at once + wait (system()). */
#include <sys/wait.h>
#include <unistd.h>
static void fork_heap(void) {
  enum { N = 1024 };
  static char* o[N];
  for (int i = 0; i < N; i++) { o[i] = malloc((size_t)1 << 20); if (o[i] == NULL) exit(1); touch(o[i], (size_t)1 << 20); }
  for (long r = 0, nr = reps(20); r < nr; r++) {
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(1); }
    if (pid == 0) _exit(o[r][0] == 1 ? 0 : 1);
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) { fprintf(stderr, "fork: child failed\n"); exit(1); }
  }
  for (int i = 0; i < N; i++) free(o[i]);
}

int main(int argc, char** argv) {
  const char* w = argc > 1 ? argv[1] : "churn";
  process_cpus_known = sched_getaffinity(0, sizeof(process_cpus), &process_cpus) == 0;
  if (argc > 2) churn_ops = atol(argv[2]);
  const char* share = getenv("PINARENA_BENCH_PERCENT");
  if (share != NULL) {
    percent = atol(share);
    if (percent < 1 || percent > 100) { fprintf(stderr, "PINARENA_BENCH_PERCENT=%s: not 1..100\n", share); return 2; }
  }
  double t0 = now();
  if (!strcmp(w, "churn")) churn();
  else if (!strcmp(w, "prodcons")) prodcons(0);
  else if (!strcmp(w, "prodcons-1cpu")) prodcons(1);
  else if (!strcmp(w, "larson")) larson();
  else if (!strcmp(w, "realloc")) realloc_growth();
  else if (!strcmp(w, "big")) big();
  else if (!strcmp(w, "huge")) huge();
  else if (!strcmp(w, "aligned")) aligned();
  else if (!strcmp(w, "regrow")) regrow();
  else if (!strcmp(w, "strgrow")) strgrow();
  else if (!strcmp(w, "calloc")) calloc_huge();
  else if (!strcmp(w, "phased")) phased();
  else if (!strcmp(w, "fork")) fork_heap();
  else { fprintf(stderr, "unknown workload %s\n", w); return 2; }
  double t = now() - t0;
  /* microseconds: the shortest workloads (huge, calloc, aligned) take 1-30 ms, where a millisecond
     would be a 3-100 % step in their ratios */
  printf("%s %.6f %ld\n", w, t, status_kb("VmHWM") + status_kb("HugetlbPages"));
  return 0;
}

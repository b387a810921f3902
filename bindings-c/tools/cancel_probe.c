/* cancel_probe.c — one shim entry point called by a thread with a pending
 * cancel (deferred type), then fork and allocate (run under LD_PRELOAD of
 * the shim by tests/shim/test_cancel.c).
 *
 *   pinarena-cancel-probe SCENARIO
 *
 * glibc's malloc family is never a cancellation point, and neither may the
 * shim be: the call must come back (the cancel stays pending and acts at
 * the thread's next cancellation point), and every lock it took must be
 * free again, so that fork, a lookup and a remote allocation from the main
 * thread and from a forked child still work. Prints "returned" when the
 * call came back, "ok" at the end; exit 0 only when both. A hang ends by
 * SIGALRM after 20 s. */
#define _GNU_SOURCE
#include "pinarena.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define HUGE_BYTES ((size_t)64 << 20)

static const char* scenario;
static volatile int returned;
static void* reused;                  /* calloc_huge: the freed huge object the thread's calloc reuses */

/* cache_get: the program's registration callback has a cancellation point
   of its own; pinarena_cache_get calls it under the cache's lock. */
static pinarena_cache_t* cache;
static int cb_reg(void* ctx, uintptr_t addr, size_t length, int access, uint64_t* handle, uint32_t* lkey, uint32_t* rkey) {
  (void)ctx; (void)addr; (void)length; (void)access;
  usleep(1);
  *handle = 1; *lkey = *rkey = 7;
  return 0;
}
static int cb_dereg(void* ctx, uintptr_t addr, size_t length, uint64_t handle) {
  (void)ctx; (void)addr; (void)length; (void)handle;
  usleep(1);
  return 0;
}
static const pinarena_cache_ops_t cache_ops = { NULL, cb_reg, cb_dereg };
static char cache_buf[3][8192] __attribute__((aligned(4096)));

static void cache_use(int i) {
  const pinarena_cache_region_t* r = NULL;
  if (pinarena_cache_get(cache, cache_buf[i], sizeof cache_buf[i], 0, &r) == 0) pinarena_cache_put(cache, r);
  pinarena_cache_invalidate(cache, cache_buf[i], sizeof cache_buf[i]);   /* dereg callback */
}

static void call_entry(void) {
  if (strcmp(scenario, "calloc_huge") == 0) {
    unsigned char* p = calloc(1, HUGE_BYTES);
    if (p == NULL || p != reused) { printf("calloc did not reuse the freed huge chunk (%p, %p)\n", (void*)p, reused); return; }
    for (size_t i = 0; i < HUGE_BYTES; i += 4096) if (p[i] != 0) { printf("calloc: byte %zu not zero\n", i); return; }
    free(p);
  } else if (strcmp(scenario, "malloc_chunks") == 0) {      /* new regular chunks (hugetlb: smaps is read) */
    for (int i = 0; i < 24; i++) { char* p = malloc(1 << 20); if (p == NULL) { printf("malloc: NULL\n"); return; } p[0] = 1; }
  } else if (strcmp(scenario, "malloc_family") == 0) {
    void* p = malloc(100);
    p = realloc(p, 100000);
    void* q = NULL;
    if (posix_memalign(&q, 4096, 5000) != 0) { printf("posix_memalign failed\n"); return; }
    void* r = aligned_alloc(64, 640);
    void* s = calloc(10, 1000);
    void* t = valloc(100);
    if (p == NULL || r == NULL || s == NULL || t == NULL) { printf("an allocation failed\n"); return; }
    free(p); free(q); free(r); free(s); free(t);
  } else if (strcmp(scenario, "lookup_first") == 0) {
    pinarena_region_t reg;
    void* p = malloc(1000);
    (void)pinarena_lookup(p, 1000, &reg);
    free(p);
  } else if (strcmp(scenario, "alloc_remote_first") == 0) {
    void* p = pinarena_alloc_remote(65536, PINARENA_REMOTE_READ);
    if (p != NULL) pinarena_free_remote(p);
  } else if (strcmp(scenario, "pd_first") == 0) {
    (void)pinarena_pd();
    (void)pinarena_remote_keys();
  } else if (strcmp(scenario, "trim_stats") == 0) {
    pinarena_stats_t st;
    (void)pinarena_trim();
    (void)pinarena_get_stats(&st);
    (void)pinarena_registrar();
    pinarena_write_stats(1);
  } else if (strcmp(scenario, "cache_get") == 0) {
    cache_use(0);
  } else if (strcmp(scenario, "mmap_family") == 0) {
    char* m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) { printf("mmap failed\n"); return; }
    m[0] = 1;
    madvise(m, 1 << 20, MADV_DONTNEED);
    m = mremap(m, 1 << 20, 2 << 20, MREMAP_MAYMOVE);
    if (m == MAP_FAILED) { printf("mremap failed\n"); return; }
    munmap(m, 2 << 20);
  } else {
    printf("unknown scenario %s\n", scenario);
    return;
  }
  returned = 1;
}

static void* thread_main(void* arg) {
  (void)arg;
  pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
  pthread_cancel(pthread_self());     /* pending from here on */
  call_entry();
  return NULL;                        /* a pending cancel acts at the next cancellation point, not before */
}

/* What must still work: allocate, look up, allocate remote. */
static void use_everything(const char* who) {
  pinarena_region_t reg;
  char* p = malloc(4096);
  if (p == NULL) { printf("%s: malloc NULL\n", who); exit(1); }
  memset(p, 7, 4096);
  (void)pinarena_lookup(p, 4096, &reg);
  void* r = pinarena_alloc_remote(65536, PINARENA_REMOTE_READ);
  if (r != NULL) pinarena_free_remote(r);
  free(p);
  free(malloc(HUGE_BYTES));
  if (cache != NULL) cache_use(strcmp(who, "child") == 0 ? 1 : 2);
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s SCENARIO\n", argv[0]); return 2; }
  scenario = argv[1];
  alarm(20);
  setvbuf(stdout, NULL, _IONBF, 0);
  if (strcmp(scenario, "calloc_huge") == 0) {
    char* p = malloc(HUGE_BYTES);
    memset(p, 0x5a, HUGE_BYTES);      /* touched: calloc of the reused chunk must zero it */
    reused = p;
    free(p);
  }
  if (strcmp(scenario, "cache_get") == 0 && pinarena_cache_open(&cache_ops, 0, 0, 0, &cache) != 0) {
    printf("pinarena_cache_open failed\n");
    return 1;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, thread_main, NULL) != 0) { printf("pthread_create failed\n"); return 1; }
  void* res = NULL;
  pthread_join(t, &res);
  if (!returned)                      /* go on: what the cancel left behind (a held lock) shows below */
    printf("%s: the call did not come back (the thread was %s inside the shim)\n", scenario,
           res == PTHREAD_CANCELED ? "cancelled" : "stopped");
  else
    printf("returned\n");
  pid_t pid = fork();
  if (pid < 0) { printf("fork: %s\n", strerror(errno)); return 1; }
  if (pid == 0) { alarm(20); use_everything("child"); _exit(0); }   /* the alarm is not inherited */
  int st;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) { printf("child ended with status %#x\n", st); return 1; }
  use_everything("parent");
  printf("ok\n");
  return returned ? 0 : 1;
}

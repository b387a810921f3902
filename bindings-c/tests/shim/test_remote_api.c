/* test_remote_api.c — pinarena_alloc_remote / _free_remote without an RDMA
 * device (host: keys "none"): argument checks, zeroed memory, reuse, the
 * lookup of a remote buffer, bad pointers. What a peer can reach is tested
 * over rxe0 (tests/remote/test_remote.c). */
#include "child.h"
#include "diag.h"
#include "kernel_view.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define RW (PINARENA_REMOTE_READ | PINARENA_REMOTE_WRITE)

static void do_free_remote(void* p) { pinarena_free_remote(p); }
static void do_free(void* p) { free(p); }

TEST(shim_remote_bad_arguments) {
  errno = 0;
  CHECK(pinarena_alloc_remote(0, RW) == NULL && errno == EINVAL, "size 0: EINVAL");
  errno = 0;
  CHECK(pinarena_alloc_remote(64, 0) == NULL && errno == EINVAL, "no access: EINVAL");
  errno = 0;
  CHECK(pinarena_alloc_remote(64, RW | 1) == NULL && errno == EINVAL, "local write is not a remote access: EINVAL");
  CHECK(pinarena_free_remote(NULL) == 0, "free of NULL");
}

static void alloc_remote_over_rlimit_as(void* arg) {
  (void)arg;
  struct rlimit lim = { (rlim_t)1 << 30, (rlim_t)1 << 30 };
  if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
  errno = 0;
  void* p = pinarena_alloc_remote((size_t)4 << 30, RW);
  _exit(p == NULL && errno == ENOMEM ? 0 : p == NULL ? 10 + (errno & 0x7f) : 2);
}

/* Every failure sets the errno the header gives: a size no chunk can hold
   (above 1 TiB) or memory the OS will not map is ENOMEM, as malloc's, not
   EINVAL (2 TiB was EINVAL). */
TEST(shim_remote_errno_as_documented) {
  errno = 0;
  CHECK(pinarena_alloc_remote((size_t)2 << 40, RW) == NULL && errno == ENOMEM, "2 TiB: ENOMEM, got %s", pa_errno_name(errno));
  errno = 0;
  CHECK(pinarena_alloc_remote(((size_t)1 << 40) + 1, RW) == NULL && errno == ENOMEM, "1 TiB + 1: ENOMEM, got %s",
        pa_errno_name(errno));
  errno = 0;
  CHECK(pinarena_alloc_remote(SIZE_MAX, RW) == NULL && errno == ENOMEM, "SIZE_MAX: ENOMEM, got %s", pa_errno_name(errno));
  errno = 0;
  CHECK(pinarena_alloc_remote(SIZE_MAX, 0) == NULL && errno == EINVAL, "bad access first: EINVAL, got %s",
        pa_errno_name(errno));
  su_result_t r = su_run(alloc_remote_over_rlimit_as, NULL);
  CHECK(!r.signaled && r.status == 0, "4 GiB under a 1 GiB RLIMIT_AS: NULL with ENOMEM (status %d: 2 = not NULL, "
        "10 + errno otherwise) %s", r.status, r.err);
}

TEST(shim_remote_memory_zeroed_reused_and_looked_up) {
  char* p = pinarena_alloc_remote(1000, RW);
  CHECK(p != NULL, "alloc: %s", strerror(errno));
  CHECK(((uintptr_t)p & 255) == 0, "256-byte aligned: %p", p);
  for (int i = 0; i < 1000; i++) CHECK(p[i] == 0, "fresh byte %d not zero", i);
  const char* keys = pinarena_remote_keys();
  NOTE("registrar %s, remote keys %s (%s)", pinarena_registrar(), keys, pinarena_remote_keys_why());
  pinarena_region_t r;
  int rc = pinarena_lookup(p + 10, 990, &r);
  CHECK(r.base == p && r.length == 1000, "lookup: the buffer (%p + %zu)", r.base, r.length);
  if (strcmp(keys, "none") == 0) CHECK(rc == -ENODATA && !r.registered, "no keys without verbs: %d", rc);
  CHECK_ERR(pinarena_lookup(p, 1001, &r), ERANGE);
  memset(p, 0x77, 1000);
  char* q = pinarena_alloc_remote(1000, RW);
  CHECK(q != NULL && q != p, "a second buffer");
  CHECK_OK("free", pinarena_free_remote(p));
  CHECK_ERR(pinarena_lookup(p, 1, &r), ENOENT);
  char* again = pinarena_alloc_remote(1000, RW);
  CHECK(again == p, "freed bytes handed out again (%p, was %p)", again, p);
  for (int i = 0; i < 1024; i++) CHECK(again[i] == 0, "reused byte %d not zero", i);
  char* big = pinarena_alloc_remote(3 << 20, RW);
  CHECK(big != NULL, "a buffer bigger than a remote chunk");
  big[(3 << 20) - 1] = 1;
  CHECK_OK("free big", pinarena_free_remote(big));
  CHECK_OK("free q", pinarena_free_remote(q));
  CHECK_OK("free again", pinarena_free_remote(again));
}

TEST(shim_remote_bad_frees_abort) {
  char* p = pinarena_alloc_remote(600, RW);
  CHECK(p != NULL, "alloc");
  su_expect_abort(do_free_remote, p + 256, "pinarena_free_remote(): invalid pointer", p + 256);
  char* h = malloc(64);
  su_expect_abort(do_free_remote, h, "pinarena_free_remote(): invalid pointer", h);
  su_expect_abort(do_free, p, "free(): invalid pointer", p);
  CHECK_OK("free", pinarena_free_remote(p));
  su_expect_abort(do_free_remote, p, "pinarena_free_remote(): invalid pointer", p);   /* twice */
}

/* fork while other threads are inside pinarena_alloc_remote / _free_remote
 * (their lock is held while a buffer is zeroed): the child must be able to
 * allocate and free remote memory, not wait forever for a lock a thread
 * that does not exist in it held at fork. Each child has 5 s. */
static _Atomic int remote_stop;

static void* remote_churn(void* arg) {
  (void)arg;
  while (!atomic_load_explicit(&remote_stop, memory_order_relaxed)) {
    char* p = pinarena_alloc_remote(1 << 20, RW);     /* freeing zeroes 1 MiB under the lock */
    if (p == NULL) break;
    p[0] = 1;
    pinarena_free_remote(p);
  }
  return NULL;
}

TEST(shim_remote_fork_while_threads_hold_the_remote_lock) {
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, remote_churn, NULL);
  int forks = 0, hung = 0, failed = 0;
  for (; forks < 200 && hung == 0 && failed == 0; forks++) {
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
      alarm(5);
      char* q = pinarena_alloc_remote(4096, RW);
      if (q == NULL) _exit(3);
      q[4095] = 1;
      _exit(pinarena_free_remote(q) == 0 ? 0 : 4);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) hung = 1;
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = status;
  }
  atomic_store(&remote_stop, 1);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  CHECK(hung == 0, "fork %d: the child hung in pinarena_alloc_remote (a lock held at fork by another thread)", forks);
  CHECK(failed == 0, "fork %d: the child's remote alloc/free failed (status 0x%x)", forks, failed);
  NOTE("%d forks while two threads allocated and freed remote memory", forks);
}

/* Freed remote memory of every size is used again, and pinarena_trim()
 * gives free remote chunks back. In a child: the RSS is its own. */
static void remote_reuse(void* arg) {
  size_t size = *(size_t*)arg;
  uint64_t rss0 = tu_status_kb("VmRSS");
  void* seen[64];
  int distinct = 0;
  for (int r = 0; r < 64; r++) {
    char* p = pinarena_alloc_remote(size, RW);
    if (p == NULL) { fprintf(stderr, "pinarena_alloc_remote(%zu): %s\n", size, strerror(errno)); _exit(1); }
    memset(p, 'r', size);
    int old = 0;
    for (int i = 0; i < distinct; i++) old |= seen[i] == p;
    if (!old) seen[distinct++] = p;
    if (pinarena_free_remote(p) != 0) { fprintf(stderr, "pinarena_free_remote failed\n"); _exit(1); }
  }
  uint64_t rss1 = tu_status_kb("VmRSS");
  fprintf(stderr, "64 rounds of %zu KiB remote buffers: %d addresses, RSS +%llu KiB\n", size >> 10, distinct,
          (unsigned long long)(rss1 - rss0));
  if (distinct > 2) _exit(2);
  if (rss1 - rss0 > 2 * (size >> 10) + 8192) _exit(3);
  pinarena_trim();
  uint64_t rss2 = tu_status_kb("VmRSS");
  unsigned char vec;
  int mapped = mincore((void*)((uintptr_t)seen[0] & ~(uintptr_t)4095), 4096, &vec) == 0;
  fprintf(stderr, "after pinarena_trim(): RSS %+lld KiB, the buffer's range %s\n",
          (long long)rss2 - (long long)rss0, mapped ? "still mapped" : "unmapped");
  if (mapped || rss2 > rss0 + 4096) _exit(4);
}

static void check_reuse(size_t size) {
  su_result_t r = su_run(remote_reuse, &size);
  CHECK(!r.signaled && r.status == 0, "%zu KiB: child %s %d: %s", size >> 10, r.signaled ? "killed by signal" : "exit",
        r.signaled ? r.sig : r.status, r.err);
}

TEST(shim_remote_big_buffers_reused_and_trimmed) { check_reuse((size_t)4 << 20); }
TEST(shim_remote_small_buffers_reused_and_trimmed) { check_reuse((size_t)64 << 10); }

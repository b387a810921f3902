/* test_cancel.c — no shim entry point acts on a pending cancel: each
 * scenario of tools/cancel_probe.c (a thread with a pending deferred cancel
 * calls one entry point; then fork, malloc, lookup, remote allocation) in a
 * fresh process under the shim, so the first call of each really is the
 * first. A hang ends by the probe's alarm (exit 128 + SIGALRM). */
#include "child.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char out[16384];

static char* cancel_probe(void) {
  static char path[512];
  snprintf(path, sizeof(path), "%s/pinarena-cancel-probe", getenv("PINARENA_BUILD") ? getenv("PINARENA_BUILD") : ".");
  return path;
}

static void expect_returns(const char* scenario, const char* const env[]) {
  char* argv[] = { cancel_probe(), (char*)scenario, NULL };
  int rc = su_exec(argv, env, out, sizeof(out));
  CHECK(rc == 0 && strstr(out, "returned\n") != NULL && strstr(out, "ok\n") != NULL,
        "%s with a pending cancel: exit %d%s: %s", scenario, rc, rc == 128 + 14 ? " (hung: SIGALRM)" : "", out);
}

/* calloc of a freed huge chunk zeroes the pages it touched, reading
   /proc/self/pagemap (pread was a cancellation point: the thread died in
   calloc, the descriptor and the object leaked). */
TEST(shim_cancel_calloc_of_a_reused_huge_chunk) {
  expect_returns("calloc_huge", NULL);
}

/* New regular chunks with PINARENA_PAGES=hugetlb read /proc/self/smaps. */
TEST(shim_cancel_malloc_hugetlb_chunks) {
  const char* env[] = { "PINARENA_PAGES=hugetlb", NULL };
  expect_returns("malloc_chunks", env);
}

TEST(shim_cancel_malloc_family) {
  expect_returns("malloc_family", NULL);
  expect_returns("malloc_chunks", NULL);
}

/* The first lookup picks the registrar (the RDMA device directory, verbs,
   io_uring) under pa_reg_lock: cancelled there, the lock stayed held and the
   later fork hung. */
TEST(shim_cancel_first_lookup) {
  expect_returns("lookup_first", NULL);
  const char* eager[] = { "PINARENA_REGISTER=eager", NULL };
  expect_returns("malloc_chunks", eager);
}

/* The first remote allocation picks the key mode under remote_lock. */
TEST(shim_cancel_first_remote_allocation) {
  expect_returns("alloc_remote_first", NULL);
}

TEST(shim_cancel_pd_trim_stats) {
  expect_returns("pd_first", NULL);
  const char* verbose[] = { "PINARENA_VERBOSE=1", NULL };
  expect_returns("trim_stats", verbose);
}

/* The program's registration callback runs under the cache's lock: a
   cancellation point in it (usleep) killed the thread there with the lock
   held, and the next get hung. */
TEST(shim_cancel_cache_callback) {
  expect_returns("cache_get", NULL);
}

TEST(shim_cancel_mmap_family) {
  expect_returns("mmap_family", NULL);
}

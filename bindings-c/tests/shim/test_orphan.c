/* test_orphan.c — memory of threads that are gone: a thread builds many
 * small objects and exits; another thread frees them. That memory must be
 * reusable by the live thread and releasable by pinarena_trim(), as it is
 * under glibc, not stranded in the dead thread's heap. */
#include "child.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BUILT  ((size_t)64 << 20)
#define OBJ    1000                           /* a small class: spans owned by the building thread */
#define NOBJ   (BUILT / OBJ)

static char** objs;

static void* build(void* arg) {
  (void)arg;
  for (size_t i = 0; i < NOBJ; i++) { objs[i] = malloc(OBJ); memset(objs[i], (int)(i & 0xff), OBJ); }
  return NULL;
}

static void build_in_a_thread_that_exits(void) {
  objs = malloc(NOBJ * sizeof(char*));
  pthread_t t;
  CHECK(pthread_create(&t, NULL, build, NULL) == 0, "pthread_create");
  pthread_join(t, NULL);
  for (size_t i = 0; i < NOBJ; i++) CHECK(objs[i][0] == (char)(i & 0xff), "object %zu intact", i);
}

static uint64_t chunk_bytes(void) {
  pinarena_stats_t st;
  pinarena_get_stats(&st);
  return st.chunk_bytes;
}

TEST(shim_orphan_freed_memory_is_reused_by_live_threads) {
  build_in_a_thread_that_exits();
  uint64_t built = chunk_bytes();
  for (size_t i = 0; i < NOBJ; i++) free(objs[i]);           /* frees into the dead thread's heap */
  for (size_t i = 0; i < NOBJ; i++) { objs[i] = malloc(OBJ); memset(objs[i], 1, OBJ); }
  uint64_t rebuilt = chunk_bytes();
  NOTE("chunk bytes: %llu MiB after the dead thread's build, %llu MiB after the live thread freed and rebuilt it",
       (unsigned long long)(built >> 20), (unsigned long long)(rebuilt >> 20));
  CHECK(rebuilt <= built + built / 8, "the dead thread's memory was not reused: %llu MiB -> %llu MiB",
        (unsigned long long)(built >> 20), (unsigned long long)(rebuilt >> 20));
}

TEST(shim_orphan_freed_memory_is_trimmable) {
  build_in_a_thread_that_exits();
  uint64_t built = chunk_bytes();
  for (size_t i = 0; i < NOBJ; i++) free(objs[i]);
  size_t released = pinarena_trim();
  uint64_t after = chunk_bytes();
  NOTE("chunk bytes: %llu MiB built, pinarena_trim released %zu MiB, %llu MiB left",
       (unsigned long long)(built >> 20), released >> 20, (unsigned long long)(after >> 20));
  CHECK(after <= built / 8, "pinarena_trim left the dead thread's memory mapped: %llu of %llu MiB",
        (unsigned long long)(after >> 20), (unsigned long long)(built >> 20));
}

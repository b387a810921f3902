/* test_bad.c — bad pointers abort with one line naming the pointer. Each
 * case runs in its own child process. */
#include "shim_util.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void do_free(void* p) { free(p); }

TEST(shim_bad_free_stack_pointer) {
  int local = 0;
  su_expect_abort(do_free, &local, "free(): invalid pointer", &local);
}

TEST(shim_bad_free_mmap_memory) {
  void* m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  su_expect_abort(do_free, m, "free(): invalid pointer", m);
  munmap(m, 1 << 20);
}

TEST(shim_bad_free_static_and_interior) {
  static char data[64];
  su_expect_abort(do_free, data, "free(): invalid pointer", data);
  char* p = malloc(100);
  su_expect_abort(do_free, p + 16, "free(): invalid pointer", p + 16);
  su_expect_abort(do_free, p + 1, "free(): invalid pointer", p + 1);
  char* l = malloc(500 << 10);
  su_expect_abort(do_free, l + 4096, "free(): invalid pointer", l + 4096);
  char* h = malloc(10 << 20);
  su_expect_abort(do_free, h + 64, "free(): invalid pointer", h + 64);
}

TEST(shim_bad_free_never_handed_out) {
  char* p = malloc(48);                     /* block after p in the same span was never given out */
  char* never = p + 48 * 200;
  su_expect_abort(do_free, never, "free(): invalid pointer", never);
  free(p);
}

static void twice(void* p) { free(p); free(p); }

TEST(shim_bad_double_free_small) {
  void* p = malloc(32);
  su_expect_abort(twice, p, "double free", p);
  void* q = malloc(3000);
  su_expect_abort(twice, q, "double free", q);
}

static void* thread_free(void* p) { free(p); return NULL; }
static void twice_cross_thread(void* p) {
  pthread_t t;
  pthread_create(&t, NULL, thread_free, p);   /* first free from another thread */
  pthread_join(t, NULL);
  free(p);                                     /* second from the owner */
}

TEST(shim_bad_double_free_cross_thread) {
  void* p = malloc(40);
  su_expect_abort(twice_cross_thread, p, "double free", p);
}

TEST(shim_bad_double_free_large_and_huge) {
  void* l = malloc(700 << 10);
  su_expect_abort(twice, l, "double free", l);
  void* h = malloc(9 << 20);
  su_expect_abort(twice, h, "double free", h);
}

static void corrupt_then_free(void* p) {
  pinarena_region_t r;
  pinarena_lookup(p, 1, &r);
  memset(r.base, 0x41, 16384);              /* the chunk header: magic and span descriptors */
  free(p);
}

TEST(shim_bad_corrupted_chunk_header) {
  void* p = malloc(24);
  su_expect_abort(corrupt_then_free, p, "corrupted chunk header", p);
}

static void bad_realloc(void* p) { void* r = realloc(p, 100); (void)r; }
static void bad_usable(void* p) { (void)malloc_usable_size(p); }

TEST(shim_bad_realloc_and_usable_size) {
  int local = 0;
  su_expect_abort(bad_realloc, &local, "realloc(): invalid pointer", &local);
  su_expect_abort(bad_usable, &local, "malloc_usable_size(): invalid pointer", &local);
}

static void twice_remote(void* p) {
  pthread_t t;
  pthread_create(&t, NULL, thread_free, p);   /* two frees, both from other threads */
  pthread_join(t, NULL);
  pthread_create(&t, NULL, thread_free, p);
  pthread_join(t, NULL);
  for (int i = 0; i < 200000; i++) { void* q = malloc(40); (void)q; }   /* owner refills: collects them */
}

TEST(shim_bad_double_free_remote_remote) {
  /* Remote frees do not touch the owner's metadata; the owner catches the
     duplicate when it takes the remote frees in. */
  void* p = malloc(40);
  su_expect_abort(twice_remote, p, "double free", p);
}

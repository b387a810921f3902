/* test_bad.c — bad pointers abort with one line naming the pointer. Each
 * case runs in its own child process. */
#include "child.h"

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

/* a, b, a: not in a row, with a third block still out, so neither the head
   check nor the count catches it at free; malloc does when it reaches the
   second copy of a (the first copy's malloc cleared its mark). */
static void twice_not_in_a_row(void* a) {
  void* b = malloc(64);
  void* keep = malloc(64);
  free(a); free(b); free(a);
  for (int i = 0; i < 8; i++) { void* q = malloc(64); (void)q; }
  free(keep);
}

TEST(shim_bad_double_free_not_in_a_row) {
  void* a = malloc(64);
  su_expect_abort(twice_not_in_a_row, a, "double free", a);
}

/* A full span (not the current one) gets every block back while one is
   still out, because one was freed twice: the count says empty. The heap
   keeps a few empty spans; pinarena_trim() gives them back, and the check
   before a span goes back to its chunk finds the duplicate. */
enum { SPAN_FILL = 3000 };                    /* > 65536 / 48 blocks of 48 bytes */
static void* span_blocks[SPAN_FILL];

/* How many of span_blocks lie in the first one's span (its 64 KiB slice). */
static size_t first_span_blocks(void) {
  size_t k = 0;
  while (k < SPAN_FILL && (uintptr_t)span_blocks[k] >> 16 == (uintptr_t)span_blocks[0] >> 16) k++;
  return k;
}

static void twice_then_span_empties(void* unused) {
  (void)unused;
  size_t k = first_span_blocks();
  free(span_blocks[0]);
  for (size_t i = 2; i < k; i++) free(span_blocks[i]);   /* block 1 stays out */
  free(span_blocks[0]);                       /* the second free of block 0: count reaches 0 */
  pinarena_trim();
}

TEST(shim_bad_double_free_found_when_span_goes_back) {
  for (size_t i = 0; i < SPAN_FILL; i++) span_blocks[i] = malloc(48);
  CHECK((uintptr_t)span_blocks[SPAN_FILL - 1] >> 16 != (uintptr_t)span_blocks[0] >> 16, "expected a second span");
  su_expect_abort(twice_then_span_empties, NULL, "double free", span_blocks[0]);
  for (size_t i = 0; i < SPAN_FILL; i++) free(span_blocks[i]);
}

/* The same span, every block back and none freed twice, but one free block
   written after its free over its mark (the word after the link): the
   check before the span goes back to its chunk reads every block's mark and
   names that block. */
static void written_after_free_then_span_empties(void* unused) {
  (void)unused;
  size_t k = first_span_blocks();
  for (size_t i = 0; i < k; i++) free(span_blocks[i]);
  memset((char*)span_blocks[k / 2] + 8, 0x5a, 8);   /* a write after free, over the mark */
  pinarena_trim();
}

TEST(shim_bad_write_after_free_found_when_span_goes_back) {
  for (size_t i = 0; i < SPAN_FILL; i++) span_blocks[i] = malloc(48);
  CHECK((uintptr_t)span_blocks[SPAN_FILL - 1] >> 16 != (uintptr_t)span_blocks[0] >> 16, "expected a second span");
  su_expect_abort(written_after_free_then_span_empties, NULL, "write after free", span_blocks[first_span_blocks() / 2]);
  for (size_t i = 0; i < SPAN_FILL; i++) free(span_blocks[i]);
}

static void* thread_free(void* p) { free(p); return NULL; }
static void twice_cross_thread(void* p) {
  pthread_t t;
  pthread_create(&t, NULL, thread_free, p);   /* first free from another thread */
  pthread_join(t, NULL);
  free(p);                                     /* second from the owner */
  for (int i = 0; i < 200000; i++) { void* q = malloc(40); (void)q; }   /* owner refills: collects */
}

TEST(shim_bad_double_free_cross_thread) {
  /* The owner's free does not read the block; the owner catches the
     duplicate when it takes the remote free in (the block carries the
     owner's mark there, not the remote one). */
  void* p = malloc(40);
  su_expect_abort(twice_cross_thread, p, "double free", p);
}

TEST(shim_bad_double_free_large_and_huge) {
  for (int i = 0; i < 8; i++) {              /* every page a large object may start at (alloc.c, large_colour) */
    void* l = malloc(700 << 10);
    su_expect_abort(twice, l, "double free", l);
  }
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

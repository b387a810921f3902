/* test_corrupt.c — memory errors that would hand a block out twice or make
 * the allocator follow a wild pointer: each must end in an abort with one
 * line naming the pointer, never in a second owner or a SIGSEGV. Each case
 * runs in its own child process. */
#include "child.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LARGE (1u << 20)

/* A large object is freed, small blocks take its memory, then the program
 * frees the large object again (a stale pointer). The small block that
 * starts where the large object started, if one does, is live: freeing it
 * would let the next malloc hand it out a second time. */
static size_t stale_small = 40;              /* the class of the small blocks laid over the slice */
static void stale_large_free(void* arg) {
  char* large = arg;
  free(large);
  char* hit = NULL;
  for (int i = 0; i < 400000 && hit == NULL; i++) {
    char* b = malloc(stale_small);
    memset(b, 0x5a, stale_small);
    if ((((uintptr_t)b ^ (uintptr_t)large) & ~(uintptr_t)0xffff) == 0) hit = b;   /* the same 64 KiB slice */
  }
  if (hit == NULL) _exit(3);                  /* the slice was never reused: nothing to test */
  free(large);                                /* stale */
  char* again = malloc(stale_small);
  char* again2 = malloc(stale_small);
  if (again == large || again2 == large) _exit(4);   /* a live block handed out twice */
  _exit(5);
}

/* Large objects start 0..7 pages into their first slice (alloc.c,
 * large_colour), eight taken in a row at several of them; the 48-byte
 * blocks that reuse a slice start at 0, 3 and 6 pages in (a stale pointer
 * elsewhere falls inside a block). */
TEST(shim_corrupt_stale_free_of_large_after_small_reuse) {
  enum { N = 8 };
  char* large[N];
  for (int i = 0; i < N; i++) {
    large[i] = malloc(LARGE);
    CHECK(large[i] != NULL && ((uintptr_t)large[i] & 0xffff) % 4096 == 0 && ((uintptr_t)large[i] & 0xffff) < 8 * 4096,
          "a large object starts in the first 8 pages of a slice: %p", (void*)large[i]);
  }
  for (int i = 0; i < N; i++) {
    su_result_t r = su_run(stale_large_free, large[i]);
    CHECK(!(r.status == 3), "small blocks never reused the slice of the large object at %p", (void*)large[i]);
    CHECK(r.status != 4, "stale free of %p after reuse freed a live block, then malloc handed it out again: err='%s'",
          (void*)large[i], r.err);
    su_expect_abort(stale_large_free, large[i], "free(): invalid pointer", large[i]);
  }
}

/* The same with blocks of a power-of-two size: the stale pointer lies a
 * whole number of blocks before the span's first block, an offset that is a multiple of the
 * block size modulo 2^64, so the block test must reject offsets below the
 * span's start as well as above its carved blocks. */
TEST(shim_corrupt_stale_free_of_large_after_small_reuse_pow2) {
  char* large = malloc(LARGE);
  CHECK(large != NULL && ((uintptr_t)large & 0xffff) % 4096 == 0 && ((uintptr_t)large & 0xffff) < 8 * 4096,
        "a large object starts in the first 8 pages of a slice: %p", (void*)large);
  stale_small = 64;
  su_result_t r = su_run(stale_large_free, large);
  CHECK(!(r.status == 3), "small blocks never reused the large object's slice");
  CHECK(r.status != 4 && r.status != 5, "stale free of %p (64-byte blocks over it) was taken as a block: status %d",
        (void*)large, r.status);
  su_expect_abort(stale_large_free, large, "free(): invalid pointer", large);
  stale_small = 40;
}

/* An 8-byte overflow out of a live block into the link of the free block
 * after it. The first malloc takes the damaged block; the link it leaves
 * behind is garbage, and the second malloc would follow it. */
static char* victim;
static void overflow_into_link(void* arg) {
  char* p = arg;
  memset(p, 'A', 48 + 8);                     /* the 8 bytes after p's 48 are victim's link */
  void* a = malloc(48);
  void* b = malloc(48);
  (void)a; (void)b;
  _exit(0);
}

TEST(shim_corrupt_overflow_into_free_link) {
  char* p = malloc(48);
  victim = malloc(48);
  char* keep = malloc(48);
  CHECK(victim == p + 48, "consecutive blocks of one class: %p then %p", (void*)p, (void*)victim);
  free(victim);                               /* head of the span's free list, link to the rest */
  su_result_t r = su_run(overflow_into_link, p);
  CHECK(!(r.signaled && r.sig == 11), "the wild link was followed: SIGSEGV, no message");
  su_expect_abort(overflow_into_link, p, "corrupted free list", victim);
  free(keep);
}

/* The overflow writes a pointer that stays inside the span: the address of
 * a live block of the same span (what a program's own data often holds).
 * The link passes the bounds, so malloc's second pop reaches the live
 * block; its words are program data, not a free mark, and malloc must abort
 * there instead of handing the live block out a second time. */
static char* live;
static void overflow_link_into_own_span(void* arg) {
  char* p = arg;
  memset(live, 'C', 48);                      /* the live block's words: program data */
  memset(p, 'A', 48);
  memcpy(p + 48, &live, sizeof(live));        /* victim's link := a live block of the span */
  void* a = malloc(48);
  void* b = malloc(48);
  if (a == live || b == live) _exit(4);       /* a live block handed out twice */
  _exit(0);
}

TEST(shim_corrupt_overflow_link_into_own_span) {
  char* p = malloc(48);
  victim = malloc(48);
  live = malloc(48);
  CHECK(victim == p + 48 && live == victim + 48, "consecutive blocks of one class: %p %p %p",
        (void*)p, (void*)victim, (void*)live);
  free(victim);
  su_result_t r = su_run(overflow_link_into_own_span, p);
  CHECK(r.status != 4 || r.signaled, "the live block %p was handed out a second time", (void*)live);
  CHECK(!(r.signaled && r.sig == 11), "SIGSEGV, no message");
  CHECK(r.signaled && r.sig == 6, "expected an abort, got signaled=%d sig=%d status=%d", r.signaled, r.sig, r.status);
  /* malloc stops at the link (corrupted free list, naming victim) or at the
     block it leads to (its mark is program data: write after free, naming live) */
  char want_live[32], want_victim[32];
  snprintf(want_live, sizeof(want_live), "%p", (void*)live);
  snprintf(want_victim, sizeof(want_victim), "%p", (void*)victim);
  CHECK((strstr(r.err, "write after free") != NULL && strstr(r.err, want_live) != NULL) ||
        (strstr(r.err, "corrupted free list") != NULL && strstr(r.err, want_victim) != NULL), "message: '%s'", r.err);
  NOTE("%s", strtok(r.err, "\n"));
  free(live);
}

/* The same overflow into a block freed by another thread (on the span's
 * remote list): the owner must not follow the damaged link when it takes
 * the remote frees in. */
static void* free_it(void* b) { free(b); return NULL; }
#include <pthread.h>
/* All in the child: a forked child forgets the remote frees its heap had
 * not taken in at fork (heap.c, "fork"), so they are made after the fork. */
static void overflow_into_remote_link(void* arg) {
  (void)arg;
  char* p = malloc(48);
  char* v = malloc(48);
  char* w = malloc(48);
  if (v != p + 48) _exit(3);                  /* consecutive blocks of one class */
  pthread_t t;
  pthread_create(&t, NULL, free_it, w);       /* remote frees: w, then v on top (v links to w) */
  pthread_join(t, NULL);
  pthread_create(&t, NULL, free_it, v);
  pthread_join(t, NULL);
  memset(p, 'B', 48 + 8);
  for (int i = 0; i < 100000; i++) { void* a = malloc(48); (void)a; }
  _exit(0);
}

TEST(shim_corrupt_overflow_into_remote_free_link) {
  su_result_t r = su_run(overflow_into_remote_link, NULL);
  CHECK(!(r.signaled && r.sig == 11), "the wild link was followed: SIGSEGV, no message");
  CHECK(r.signaled && r.sig == 6, "expected an abort, got signaled=%d sig=%d status=%d", r.signaled, r.sig, r.status);
  CHECK(strstr(r.err, "corrupted free list") != NULL || strstr(r.err, "write after free") != NULL, "message: '%s'", r.err);
  NOTE("%s", strtok(r.err, "\n"));
}

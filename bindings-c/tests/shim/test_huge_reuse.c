/* test_huge_reuse.c — what freed huge chunks serve: hundreds free at once
 * (more than the first page of the free chunks' array holds), each taken
 * back by an object it fits without a new chunk, and pinarena_trim()
 * releasing them all. */
#include "child.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MiB ((size_t)1 << 20)
#define MANY 600                      /* free huge chunks at once: the array grows 170 -> 340 -> 680 */

static size_t huge_chunks(void) {
  pinarena_stats_t s;
  CHILD_CHECK(pinarena_get_stats(&s) == 0, "pinarena_get_stats failed");
  return (size_t)s.huge_chunks;
}

static void many_freed_then_taken_again(void* arg) {
  (void)arg;
  static unsigned char* p[MANY];
  size_t before = huge_chunks();
  for (int i = 0; i < MANY; i++) {
    size_t n = 3 * MiB + (size_t)(i % 7) * 4096;
    p[i] = malloc(n);
    CHILD_CHECK(p[i] != NULL, "malloc(%zu) #%d failed", n, i);
    p[i][0] = (unsigned char)i;
    p[i][n - 1] = (unsigned char)~i;
  }
  size_t made = huge_chunks() - before;
  CHILD_CHECK(made == MANY, "%d huge objects made %zu huge chunks", MANY, made);
  for (int i = 0; i < MANY; i++) free(p[i]);
  /* the same sizes again: every one fits a free chunk, so no chunk is made */
  for (int i = 0; i < MANY; i++) {
    size_t n = 3 * MiB + (size_t)((i + 3) % 7) * 4096;
    p[i] = malloc(n);
    CHILD_CHECK(p[i] != NULL, "malloc(%zu) #%d after the frees failed", n, i);
    memset(p[i], 0xa5, 4096);
    p[i][n - 1] = 0x5a;
  }
  size_t now = huge_chunks() - before;
  CHILD_CHECK(now == MANY, "the second %d huge objects left %zu huge chunks (%d expected: each takes a free one)",
              MANY, now, MANY);
  for (int i = 0; i < MANY; i++) for (int j = i + 1; j < MANY && j < i + 8; j++)
    CHILD_CHECK(p[i] != p[j], "objects #%d and #%d share the address %p", i, j, (void*)p[i]);
  for (int i = 0; i < MANY; i++) free(p[i]);
  pinarena_trim();
  size_t left = huge_chunks() - before;
  CHILD_CHECK(left == 0, "pinarena_trim() left %zu of %d free huge chunks mapped", left, MANY);
}

TEST(shim_huge_many_free_chunks_serve_again_and_trim) {
  su_child_ok(many_freed_then_taken_again, "600 free huge chunks: taken again, then trimmed");
}

/* huge_live_bytes of the stats line: the live huge objects' extents, kept
 * where they change (reclaim reads it as the memory in use). */
static size_t huge_live(void) {
  int fd[2];
  CHILD_CHECK(pipe(fd) == 0, "pipe failed");
  pinarena_write_stats(fd[1]);
  close(fd[1]);
  char line[4096];
  ssize_t n = read(fd[0], line, sizeof(line) - 1);
  close(fd[0]);
  CHILD_CHECK(n > 0, "the stats line is empty");
  line[n] = 0;
  const char* v = strstr(line, " huge_live_bytes=");
  CHILD_CHECK(v != NULL, "no huge_live_bytes in the stats line: %s", line);
  return (size_t)strtoull(v + strlen(" huge_live_bytes="), NULL, 10);
}

/* An object's extent: its bytes from the chunk's start, page-rounded: the
 * header page, up to 15 colour pages (or an alignment's offset), the object. */
#define PAGE 4096
#define EXTENT_MAX(n, off) ((off) + (n) + 16 * PAGE + PAGE - 1)

static void live_bytes_follow_objects(void* arg) {
  (void)arg;
  enum { N = 40 };
  static unsigned char* p[N];
  size_t base = huge_live();
  CHILD_CHECK(base == 0, "no huge object yet, but huge_live_bytes=%zu", base);
  const size_t n = 3 * MiB + 123;
  const size_t SHRUNK = n - MiB / 2;   /* above pa_large_max (under 2 MiB): a huge object still, shrunk in place */
  for (int i = 0; i < N; i++) { p[i] = malloc(n); CHILD_CHECK(p[i] != NULL, "malloc #%d failed", i); p[i][0] = 1; }
  size_t live = huge_live();
  CHILD_CHECK(live >= N * n && live <= N * EXTENT_MAX(n, 0), "%d objects of %zu B: huge_live_bytes=%zu", N, n, live);
  /* in place: grown (the chunk has 16 times room), shrunk */
  for (int i = 0; i < N / 2; i++) CHILD_CHECK(realloc(p[i], 2 * n) == p[i], "realloc #%d to %zu moved", i, 2 * n);
  for (int i = N / 2; i < N; i++) CHILD_CHECK(realloc(p[i], SHRUNK) == p[i], "realloc #%d to %zu moved", i, SHRUNK);
  live = huge_live();
  size_t lo = N / 2 * (2 * n) + N / 2 * SHRUNK, hi = N / 2 * EXTENT_MAX(2 * n, 0) + N / 2 * EXTENT_MAX(SHRUNK, 0);
  CHILD_CHECK(live >= lo && live <= hi, "after in-place reallocs huge_live_bytes=%zu, not in [%zu, %zu]", live, lo, hi);
  /* moved out of its chunk (past 16 times its room): the old extent leaves, the new one counts */
  const size_t big = 200 * MiB;
  unsigned char* q = realloc(p[0], big);
  CHILD_CHECK(q != NULL, "realloc to %zu failed", big);
  p[0] = q;
  q[big - 1] = 2;
  live = huge_live();
  lo = big + (N / 2 - 1) * (2 * n) + N / 2 * SHRUNK;
  hi = EXTENT_MAX(big, 0) + (N / 2 - 1) * EXTENT_MAX(2 * n, 0) + N / 2 * EXTENT_MAX(SHRUNK, 0);
  CHILD_CHECK(live >= lo && live <= hi, "after a move huge_live_bytes=%zu, not in [%zu, %zu]", live, lo, hi);
  /* aligned: the extent starts at the chunk, so it holds the alignment's offset */
  void* a = NULL;
  CHILD_CHECK(posix_memalign(&a, 8 * MiB, n) == 0, "posix_memalign(8 MiB, %zu) failed", n);
  size_t with_a = huge_live();
  CHILD_CHECK(with_a - live >= n && with_a - live <= EXTENT_MAX(n, 8 * MiB),
              "an 8 MiB-aligned object of %zu B added %zu to huge_live_bytes", n, with_a - live);
  free(a);
  CHILD_CHECK(huge_live() == live, "freeing the aligned object left huge_live_bytes=%zu, not %zu", huge_live(), live);
  for (int i = 0; i < N; i++) free(p[i]);
  live = huge_live();
  CHILD_CHECK(live == 0, "every huge object freed, but huge_live_bytes=%zu", live);
  /* taken again from the free chunks: counted again */
  for (int i = 0; i < N; i++) { p[i] = malloc(n); CHILD_CHECK(p[i] != NULL, "malloc #%d again failed", i); }
  live = huge_live();
  CHILD_CHECK(live >= N * n && live <= N * EXTENT_MAX(n, 0), "%d objects again: huge_live_bytes=%zu", N, live);
  for (int i = 0; i < N; i++) free(p[i]);
  CHILD_CHECK(huge_live() == 0, "freed again, but huge_live_bytes=%zu", huge_live());
}

TEST(shim_huge_live_bytes_follow_every_extent_change) {
  su_child_ok(live_bytes_follow_objects, "huge_live_bytes through malloc, realloc in place and moved, aligned, free");
}

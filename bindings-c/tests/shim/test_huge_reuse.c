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

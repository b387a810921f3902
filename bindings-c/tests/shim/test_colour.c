/* test_colour.c — huge and large objects allocated side by side start at
 * different offsets within their chunks' or slices' alignment, so arrays a
 * program streams together (STREAM's a[i] = b[i] + s*c[i]) do not map their
 * i-th lines to the same cache entries (src/shim/chunk.c, huge_offset;
 * src/shim/alloc.c, large_colour). */
#include "../runner.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MiB ((size_t)1 << 20)

/* Eight 5 MiB arrays (hpcc's STREAM vectors at N=2000 are 5.1 MiB): at
 * least four distinct start offsets modulo 64 KiB (the span of a 2 MiB,
 * 16-way L2's set index above the page), every one page aligned (page moves
 * keep working) and still past the chunk's header page. */
TEST(shim_huge_objects_start_at_different_colours) {
  enum { N = 8 };
  void* v[N];
  uintptr_t seen[N];
  int distinct = 0;
  for (int i = 0; i < N; i++) {
    v[i] = malloc(5 * MiB);
    CHECK(v[i] != NULL, "malloc(5 MiB) failed");
    memset(v[i], i, 4096);
    uintptr_t off = (uintptr_t)v[i] & (64 * 1024 - 1);
    CHECK(off % 4096 == 0, "object %d at %p: not page aligned", i, v[i]);
    int known = 0;
    for (int j = 0; j < distinct; j++) known |= seen[j] == off;
    if (!known) seen[distinct++] = off;
  }
  for (int i = 0; i < N; i++) free(v[i]);
  CHECK(distinct >= 4, "%d huge objects start at only %d distinct offsets modulo 64 KiB (first at %p)", N, distinct,
        v[0]);
}

/* Eight large objects (spans of slices) of each size: hpcc's 2,000,000-byte
 * vectors, and 1 MiB, whose last slice has no room to spare: at least four
 * distinct start offsets modulo 64 KiB (a slice), every one page aligned. */
TEST(shim_large_objects_start_at_different_colours) {
  enum { N = 8 };
  static const size_t sizes[] = { 2000000, MiB };
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
    void* v[N];
    uintptr_t seen[N];
    int distinct = 0;
    for (int i = 0; i < N; i++) {
      v[i] = malloc(sizes[z]);
      CHECK(v[i] != NULL, "malloc(%zu) failed", sizes[z]);
      memset(v[i], i, sizes[z]);
      uintptr_t off = (uintptr_t)v[i] & (64 * 1024 - 1);
      CHECK(off % 4096 == 0, "object %d of %zu bytes at %p: not page aligned", i, sizes[z], v[i]);
      int known = 0;
      for (int j = 0; j < distinct; j++) known |= seen[j] == off;
      if (!known) seen[distinct++] = off;
    }
    for (int i = 0; i < N; i++) free(v[i]);
    CHECK(distinct >= 4, "%d large objects of %zu bytes start at only %d distinct offsets modulo 64 KiB (first at %p)",
          N, sizes[z], distinct, v[0]);
  }
}

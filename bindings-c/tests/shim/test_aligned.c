/* test_aligned.c — every aligned entry point (memalign, aligned_alloc,
 * posix_memalign) over every power-of-two alignment 2^0..2^27 and sizes 0,
 * 1, A-1, A, A+1 and several chunks: each pointer aligned, all live ones
 * distinct and not overlapping (every byte of each written and checked), a
 * usable size that covers the request and is not a chunk for a zero-byte
 * request. */
#include "child.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

enum { EP_MEMALIGN, EP_ALIGNED_ALLOC, EP_POSIX_MEMALIGN, EP_COUNT };
static const char* ep_name[EP_COUNT] = { "memalign", "aligned_alloc", "posix_memalign" };

static void* aligned(int ep, size_t a, size_t n) {
  if (ep == EP_MEMALIGN) return memalign(a, n);
  if (ep == EP_ALIGNED_ALLOC) return aligned_alloc(a, n);
  void* p = NULL;
  int rc = posix_memalign(&p, a, n);
  return rc == 0 ? p : NULL;
}

#define NSIZES 6
typedef struct { unsigned char* p; size_t n, usable; } live_t;

TEST(shim_aligned_every_entry_point_alignment_and_size) {
  const size_t several = ((size_t)3 << 22) + 5;     /* three default chunks and a bit */
  long checked = 0;
  for (int ep = 0; ep < EP_COUNT; ep++) {
    for (unsigned sh = 0; sh <= 27; sh++) {
      size_t a = (size_t)1 << sh;
      if (ep == EP_POSIX_MEMALIGN && a < sizeof(void*)) {
        void* p = (void*)1;
        CHECK(posix_memalign(&p, a, 8) == EINVAL && p == (void*)1, "posix_memalign(%zu): EINVAL, *out untouched", a);
        continue;
      }
      size_t sizes[NSIZES] = { 0, 1, a - 1, a, a + 1, several };
      live_t live[NSIZES];
      size_t nl = 0;
      for (size_t i = 0; i < NSIZES; i++) {
        size_t n = sizes[i];
        if (i >= 2 && i <= 4 && a == 1 && n == 0) continue;
        unsigned char* p = aligned(ep, a, n);
        CHECK(p != NULL, "%s(%zu, %zu) failed", ep_name[ep], a, n);
        CHECK(((uintptr_t)p & (a - 1)) == 0, "%s(%zu, %zu) = %p: misaligned", ep_name[ep], a, n, (void*)p);
        size_t u = malloc_usable_size(p);
        CHECK(u >= n, "%s(%zu, %zu): usable %zu < request", ep_name[ep], a, n, u);
        /* a zero-byte (or tiny) request must not cost a chunk: at most the
           request doubled plus one 64 KiB slice and a page */
        size_t most = 2 * (n > 16 ? n : 16) + (64 << 10) + 4096;
        CHECK(u <= most, "%s(%zu, %zu): usable size %zu (more than %zu)", ep_name[ep], a, n, u, most);
        memset(p, (int)(i + 1 + sh), u);                /* all of it is ours: a live neighbour would be overwritten */
        live[nl++] = (live_t){ p, n, u };
        checked++;
      }
      for (size_t i = 0; i < nl; i++) {
        for (size_t j = 0; j < nl; j++) {
          if (i == j) continue;
          uintptr_t pi = (uintptr_t)live[i].p, pj = (uintptr_t)live[j].p;
          CHECK(pi + live[i].usable <= pj || pj + live[j].usable <= pi,
                "%s(%zu): [%p, +%zu) overlaps [%p, +%zu) (sizes %zu, %zu)", ep_name[ep], a, (void*)live[i].p,
                live[i].usable, (void*)live[j].p, live[j].usable, live[i].n, live[j].n);
        }
        unsigned char want = live[i].p[0];
        for (size_t k = 0; k < live[i].usable; k += (live[i].usable > 65536 ? 4093 : 1))
          CHECK(live[i].p[k] == want, "%s(%zu, %zu): byte %zu changed by a neighbour", ep_name[ep], a, live[i].n, k);
      }
      for (size_t i = 0; i < nl; i++) free(live[i].p);
    }
  }
  NOTE("%ld aligned allocations checked", checked);
}

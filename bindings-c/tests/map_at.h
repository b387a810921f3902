/* map_at.h — test memory at a given address, without ever clobbering a mapping
 * that is not the test's own. Shared by the host and VM registration-cache tests
 * and the shim's hook tests. */
#ifndef PA_TEST_MAP_AT_H
#define PA_TEST_MAP_AT_H

#include "runner.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* Anonymous RW mapping, filled. at == NULL: anywhere. Otherwise new pages in
 * the HOLE at `at` (after munmap, mremap shrink/move): MAP_FIXED_NOREPLACE,
 * never MAP_FIXED. Between the unmap and this call any other thread's mmap
 * (glibc arena, a library, the userfaultfd monitor) may have taken the hole;
 * MAP_FIXED would silently replace that mapping and crash the process later.
 * EEXIST fails the test loudly instead. To replace a range that is mapped
 * now, in one call, use map_over. */
static inline void* map_at(void* at, size_t len, unsigned char fill) {
  void* p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);
  if (at && p != at) {
    int e = errno;
    if (p != MAP_FAILED) munmap(p, len);                    /* a kernel without NOREPLACE took it as a hint */
    CHECK(p == at, "re-map of the hole at %p (+%zu): %s — another mapping took the hole after the unmap "
          "(not clobbering it)", at, len, p == MAP_FAILED ? pa_errno_name(e) : "placed elsewhere");
  }
  CHECK(p != MAP_FAILED, "mmap: %s", pa_errno_name(errno));
  memset(p, fill, len);
  return p;
}

/* MAP_FIXED over [at, at+len), which is mapped now: one atomic replacement
 * with new pages (no hole in between), seen by the mmap hook. Filled. */
static inline void* map_over(void* at, size_t len, unsigned char fill) {
  void* p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  CHECK(p == at, "mmap(MAP_FIXED) over %p: %s", at, pa_errno_name(errno));
  memset(p, fill, len);
  return p;
}

#endif

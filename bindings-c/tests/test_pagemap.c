/* test_pagemap.c — virtual -> physical frames. */
#include "kernel_view.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

TEST(pagemap_pfns_stable_and_distinct) {
  const size_t n = 64;
  char* p = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  CHECK(p != MAP_FAILED, "mmap");
  for (size_t i = 0; i < n; i++) p[i * 4096] = (char)i;
  uint64_t a[64], b[64];
  tu_pfns(p, n, a);
  for (size_t i = 0; i < n; i++) p[i * 4096 + 1] = 'x';   /* writes must not move the page */
  tu_pfns(p, n, b);
  for (size_t i = 0; i < n; i++) {
    CHECK(a[i] != 0, "page %zu: PFN 0", i);
    CHECK(a[i] == b[i], "page %zu: PFN moved %llx -> %llx", i, (unsigned long long)a[i], (unsigned long long)b[i]);
    for (size_t j = 0; j < i; j++) CHECK(a[i] != a[j], "pages %zu and %zu share PFN %llx", i, j, (unsigned long long)a[i]);
  }
  /* a page that is not present reports -ENODATA */
  char* q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  int fd = pa_pagemap_open();
  CHECK_OK("pagemap open", fd);
  uint64_t pfn;
  CHECK_ERR(pa_pagemap_pfn(fd, q, &pfn), ENODATA);
  close(fd);
  munmap(q, 4096);
  munmap(p, n * 4096);
}

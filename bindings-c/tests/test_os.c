/* test_os.c — chunk mapping: backings, fallback, alignment, page size read back. */
#include "kernel_view.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void check_chunk_basics(const pa_mapping_t* c) {
  CHECK(((uintptr_t)c->addr % c->size) == 0, "chunk %p not aligned to %zu", c->addr, c->size);
  volatile char* p = c->addr;
  p[0] = 1; p[c->size - 1] = 2;
  CHECK(p[0] == 1 && p[c->size - 1] == 2, "chunk not writable end to end");
}

TEST(os_chunk_hugetlb_2m) {
  uint64_t free2m = tu_hugetlb_free(2048);
  if (free2m < 4) SKIP("only %llu free 2 MiB hugepages (reserve them: echo 512 > /proc/sys/vm/nr_hugepages)",
                       (unsigned long long)free2m);
  pa_mapping_t c;
  CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(2 * PA_MiB, NULL, 0, &c));
  check_chunk_basics(&c);
  pa_vma_info_t v;
  CHECK_OK("pa_os_vma_info", pa_os_vma_info(c.addr, &v));
  NOTE("2 MiB chunk: backing %s, page %zu, smaps KernelPageSize %llu kB", pa_backing_name(c.backing),
       c.page_size, (unsigned long long)v.kernel_page_kb);
  CHECK(c.backing == PA_BACK_HUGETLB_2M, "got %s with %llu free hugepages", pa_backing_name(c.backing),
        (unsigned long long)free2m);
  CHECK(v.kernel_page_kb == 2048 && c.page_size == 2 * PA_MiB, "KernelPageSize %llu kB, reported %zu",
        (unsigned long long)v.kernel_page_kb, c.page_size);
  pa_mapping_t d;   /* 8 MiB: four hugepages, populated */
  CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(8 * PA_MiB, NULL, 0, &d));
  check_chunk_basics(&d);
  CHECK(d.backing == PA_BACK_HUGETLB_2M && d.page_size == 2 * PA_MiB, "8 MiB chunk got %s/%zu",
        pa_backing_name(d.backing), d.page_size);
  CHECK_OK("pa_os_unmap_chunk", pa_os_unmap_chunk(&c));
  CHECK_OK("pa_os_unmap_chunk", pa_os_unmap_chunk(&d));
}

/* Force "no free hugepages" by holding the whole pool ourselves, then ask again. */
TEST(os_chunk_hugetlb_fallback) {
  static pa_mapping_t held[64];
  size_t nheld = 0;
  const pa_backing_t only2m[] = { PA_BACK_HUGETLB_2M };
  uint64_t start_free = tu_hugetlb_free(2048);
  for (int guard = 0; guard < 64; guard++) {
    uint64_t fr = tu_hugetlb_free(2048);
    if (fr == 0) break;
    size_t n = 2 * PA_MiB;                           /* largest power of two of free pages */
    while (n * 2 <= fr * 2 * PA_MiB) n *= 2;
    int rc = pa_os_map_chunk(n, only2m, 1, &held[nheld]);
    if (rc != 0) break;                              /* someone else took pages meanwhile */
    nheld++;
  }
  NOTE("held %zu hugetlb chunks, %llu free 2 MiB pages at start, %llu now", nheld,
       (unsigned long long)start_free, (unsigned long long)tu_hugetlb_free(2048));
  CHECK(tu_hugetlb_free(2048) == 0, "could not drain the hugetlb pool");

  pa_mapping_t c;
  CHECK_ERR(pa_os_map_chunk(2 * PA_MiB, only2m, 1, &c), ENOMEM);  /* hugetlb only: refused */

  /* default list: falls back to THP */
  CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(4 * PA_MiB, NULL, 0, &c));
  check_chunk_basics(&c);
  pa_vma_info_t v;
  CHECK_OK("pa_os_vma_info", pa_os_vma_info(c.addr, &v));
  NOTE("fallback: backing %s, page %zu, KernelPageSize %llu kB, AnonHugePages %llu kB, Rss %llu kB",
       pa_backing_name(c.backing), c.page_size, (unsigned long long)v.kernel_page_kb,
       (unsigned long long)v.anon_huge_kb, (unsigned long long)v.rss_kb);
  CHECK(c.backing == PA_BACK_THP, "expected thp fallback, got %s", pa_backing_name(c.backing));
  CHECK(v.kernel_page_kb == 4, "THP VMA must report KernelPageSize 4 kB, got %llu", (unsigned long long)v.kernel_page_kb);
  CHECK(c.page_size == (v.anon_huge_kb * PA_KiB >= c.size ? 2 * PA_MiB : 4096),
        "reported page size %zu disagrees with AnonHugePages %llu kB", c.page_size, (unsigned long long)v.anon_huge_kb);

  /* hugetlb then 4k: falls to 4k */
  const pa_backing_t to4k[] = { PA_BACK_HUGETLB_2M, PA_BACK_4K };
  pa_mapping_t d;
  CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(4 * PA_MiB, to4k, 2, &d));
  CHECK_OK("pa_os_vma_info", pa_os_vma_info(d.addr, &v));
  CHECK(d.backing == PA_BACK_4K && d.page_size == 4096 && v.kernel_page_kb == 4 && v.anon_huge_kb == 0,
        "expected 4k fallback, got %s/%zu (AnonHugePages %llu kB)", pa_backing_name(d.backing), d.page_size,
        (unsigned long long)v.anon_huge_kb);
  pa_os_unmap_chunk(&c);
  pa_os_unmap_chunk(&d);
  for (size_t i = 0; i < nheld; i++) pa_os_unmap_chunk(&held[i]);
  CHECK(tu_hugetlb_free(2048) >= start_free, "hugepages not returned to the pool");
}

/* THP: report what we got and check it against /proc/kpageflags, page by page. */
TEST(os_chunk_thp) {
  const pa_backing_t thp[] = { PA_BACK_THP };
  pa_mapping_t c;
  CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(16 * PA_MiB, thp, 1, &c));
  check_chunk_basics(&c);
  pa_vma_info_t v;
  CHECK_OK("pa_os_vma_info", pa_os_vma_info(c.addr, &v));
  NOTE("THP chunk 16 MiB: reported page %zu, thp_bytes %zu; smaps AnonHugePages %llu kB of Rss %llu kB, VMA %zu KiB",
       c.page_size, c.thp_bytes, (unsigned long long)v.anon_huge_kb, (unsigned long long)v.rss_kb,
       (size_t)(v.end - v.start) / 1024);
  /* independent answer: the THP bit of each 2 MiB block's frames */
  size_t huge_blocks = 0;
  for (size_t off = 0; off < c.size; off += 2 * PA_MiB) {
    uint64_t pfn, fl;
    tu_pfns((char*)c.addr + off, 1, &pfn);
    int rc = pa_kpageflags(pfn, &fl);
    if (rc != 0) pa_fail_call(__FILE__, __LINE__, "read /proc/kpageflags", -rc);
    huge_blocks += (fl >> PA_KPF_THP) & 1;
  }
  NOTE("kpageflags: %zu of %zu blocks are THP", huge_blocks, c.size / (2 * PA_MiB));
  CHECK(v.start == (uintptr_t)c.addr && v.end == (uintptr_t)c.addr + c.size, "chunk VMA merged with a neighbour");
  CHECK(huge_blocks * 2 * PA_MiB == v.anon_huge_kb * PA_KiB, "kpageflags says %zu huge blocks, smaps %llu kB",
        huge_blocks, (unsigned long long)v.anon_huge_kb);
  CHECK(c.thp_bytes == huge_blocks * 2 * PA_MiB, "thp_bytes %zu", c.thp_bytes);
  CHECK(c.page_size == (huge_blocks * 2 * PA_MiB == c.size ? 2 * PA_MiB : 4096), "page_size %zu", c.page_size);
  pa_os_unmap_chunk(&c);
}

TEST(os_chunk_4k) {
  const pa_backing_t k4[] = { PA_BACK_4K };
  pa_mapping_t c;
  CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(8 * PA_MiB, k4, 1, &c));
  check_chunk_basics(&c);
  pa_vma_info_t v;
  CHECK_OK("pa_os_vma_info", pa_os_vma_info(c.addr, &v));
  CHECK(c.page_size == 4096 && v.kernel_page_kb == 4 && v.anon_huge_kb == 0,
        "4k chunk: page %zu, AnonHugePages %llu kB", c.page_size, (unsigned long long)v.anon_huge_kb);
  CHECK(v.rss_kb * PA_KiB >= c.size, "not populated: Rss %llu kB", (unsigned long long)v.rss_kb);
  pa_os_unmap_chunk(&c);
}

TEST(os_chunk_alignment) {
  static const size_t sizes[] = { 2 * PA_MiB, 4 * PA_MiB, 8 * PA_MiB, 64 * PA_MiB, 256 * PA_MiB, PA_GiB };
  const pa_backing_t lists[][1] = { { PA_BACK_4K }, { PA_BACK_THP } };
  for (size_t l = 0; l < 2; l++)
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
      pa_mapping_t c;
      CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(sizes[i], lists[l], 1, &c));
      check_chunk_basics(&c);
      pa_os_unmap_chunk(&c);
    }
  if (tu_hugetlb_free(2048) >= 4) {
    const pa_backing_t h[] = { PA_BACK_HUGETLB_2M };
    for (size_t n = 2 * PA_MiB; n <= 8 * PA_MiB; n *= 2) {
      pa_mapping_t c;
      CHECK_OK("mmap hugetlb", pa_os_map_chunk(n, h, 1, &c));
      check_chunk_basics(&c);
      pa_os_unmap_chunk(&c);
    }
  }
  pa_mapping_t c;
  CHECK_ERR(pa_os_map_chunk(0, NULL, 0, &c), EINVAL);
  CHECK_ERR(pa_os_map_chunk(PA_MiB, NULL, 0, &c), EINVAL);
  CHECK_ERR(pa_os_map_chunk(3 * PA_MiB, NULL, 0, &c), EINVAL);
}

/* The process's address space in bytes (VmSize), read without malloc. */
static size_t vm_size(void) {
  char buf[64] = { 0 };
  FILE* f = fopen("/proc/self/statm", "r");
  CHECK(f != NULL, "open /proc/self/statm: %s", strerror(errno));
  size_t pages = 0;
  CHECK(fgets(buf, sizeof buf, f) != NULL && sscanf(buf, "%zu", &pages) == 1, "statm unreadable: '%s'", buf);
  fclose(f);
  return pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* A lazy chunk is one aligned, writable mapping of exactly its size, whether
 * the kernel's first pick was aligned or not (a page mapped just above the
 * pick makes it unaligned: then the aligned hint below is taken); nothing of
 * a first pick, hint or reservation is left mapped beside it. */
TEST(os_map_lazy_aligned_whatever_the_first_pick) {
  static const size_t sizes[] = { 4 * PA_MiB, 64 * PA_MiB };
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
    for (int unaligned_pick = 0; unaligned_pick < 2; unaligned_pick++)
      for (int noreserve = 0; noreserve < 2; noreserve++) {
        void* guard = MAP_FAILED;
        if (unaligned_pick) {
          guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
          CHECK(guard != MAP_FAILED, "mmap guard: %s", strerror(errno));
        }
        size_t before = vm_size();
        pa_mapping_t c;
        CHECK_OK("pa_os_map_lazy", pa_os_map_lazy(sizes[i], sizes[i], PA_BACK_4K, noreserve ? PA_LAZY_NORESERVE : 0, &c));
        size_t grown = vm_size() - before;
        CHECK(c.size == sizes[i] && grown == sizes[i],
              "size %zu (pick %s): chunk %zu bytes, address space grew by %zu", sizes[i],
              unaligned_pick ? "unaligned" : "free", c.size, grown);
        check_chunk_basics(&c);
        pa_vma_info_t v;
        CHECK_OK("pa_os_vma_info", pa_os_vma_info(c.addr, &v));
        CHECK(v.rss_kb * PA_KiB <= 2 * 4096, "lazy chunk populated: Rss %llu kB", (unsigned long long)v.rss_kb);
        pa_os_unmap_chunk(&c);
        CHECK(vm_size() == before, "after unmap: %zu bytes left of %zu", vm_size() - before, sizes[i]);
        if (guard != MAP_FAILED) munmap(guard, 4096);
      }
  pa_mapping_t c;
  CHECK_ERR(pa_os_map_lazy(3 * PA_MiB, 4 * PA_MiB, PA_BACK_4K, 0, &c), EINVAL);
  CHECK_ERR(pa_os_map_lazy(4 * PA_MiB, 3 * PA_MiB, PA_BACK_4K, 0, &c), EINVAL);
}

/* 1 GiB hugetlb: uses a free 1 GiB page, or reserves one for the test and gives it back. */
TEST(os_chunk_hugetlb_1g) {
  static const char nr_path[] = "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages";
  uint64_t before = 0;
  if (tu_sysfs_read(nr_path, &before) != 0) SKIP("kernel has no 1 GiB hugepage size");
  int raised = 0;
  if (tu_hugetlb_free(1048576) == 0) {
    if (tu_sysfs_write(nr_path, before + 1) != 0 || tu_hugetlb_free(1048576) == 0) {
      tu_sysfs_write(nr_path, before);
      SKIP("no free 1 GiB hugepage and none could be reserved (needs root and 1 GiB of unfragmented memory)");
    }
    raised = 1;
  }
  pa_mapping_t c;
  int rc = pa_os_map_chunk(PA_GiB, NULL, 0, &c);
  pa_vma_info_t v;
  memset(&v, 0, sizeof(v));
  int vrc = (rc == 0 ? pa_os_vma_info(c.addr, &v) : rc);
  int aligned = (rc == 0 && ((uintptr_t)c.addr % PA_GiB) == 0);
  pa_backing_t b = (rc == 0 ? c.backing : PA_BACK_COUNT);
  size_t page = (rc == 0 ? c.page_size : 0);
  if (rc == 0) pa_os_unmap_chunk(&c);
  if (raised) tu_sysfs_write(nr_path, before);     /* restore before asserting */
  CHECK_OK("pa_os_map_chunk", rc);
  CHECK_OK("pa_os_vma_info", vrc);
  NOTE("1 GiB chunk: %s, page %zu, KernelPageSize %llu kB", pa_backing_name(b), page,
       (unsigned long long)v.kernel_page_kb);
  CHECK(aligned, "1 GiB chunk not 1 GiB-aligned");
  CHECK(b == PA_BACK_HUGETLB_1G && page == PA_GiB && v.kernel_page_kb == 1048576, "expected a 1 GiB page");
}

/* test_hazard.c — the stale-registration hazard, reproduced, and pinarena's answer.
 *
 * malloc -> register -> free -> malloc returns the SAME address backed by NEW
 * physical pages; the registration still points at the OLD ones, so a send
 * through it transmits stale data. A pinarena chunk is registered once and
 * never returned to the OS, so "free + malloc" reuses the same pages. */
#include "sent_bytes.h"
#include "kernel_view.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HZ_LEN   (16 * PA_MiB)
#define HZ_PAGES 16            /* sampled pages, one per MiB */

static void sample_pfns(const char* p, uint64_t* out) {
  for (int i = 0; i < HZ_PAGES; i++) tu_pfns(p + (size_t)i * PA_MiB, 1, &out[i]);
}

TEST(hazard_malloc_free_malloc_goes_stale) {
  /* A fixed mmap threshold: glibc serves 16 MiB with mmap and does not raise
     the threshold after free (which would move the next malloc to the heap). */
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  pa_uring_t u;
  tu_uring(&u);
  char* a = malloc(HZ_LEN);
  CHECK(a != NULL, "malloc");
  pa_uring_reg_t r;
  CHECK_OK("io_uring_register", pa_uring_register(&u, a, HZ_LEN, &r));
  memset(a, 'A', HZ_LEN);
  uint64_t pfn_a[HZ_PAGES], pfn_b[HZ_PAGES];
  sample_pfns(a, pfn_a);
  /* Keep the address as a number: after free it is only an address the
     registration remembers, exactly like an MPI registration cache does. */
  const uintptr_t old = r.addr;              /* == a, as the registration recorded it */
  free(a);                                   /* munmap: the registration still pins the old pages */
  a = NULL;

  char* b = NULL;
  void* keep[8];
  int nkeep = 0;
  for (int tries = 0; tries < 8; tries++) {  /* the same address normally comes back at once */
    b = malloc(HZ_LEN);
    CHECK(b != NULL, "malloc");
    if ((uintptr_t)b == old) break;
    keep[nkeep++] = b;
    b = NULL;
  }
  if (b == NULL) {                           /* last resort: map the old range ourselves */
    char* base = (char*)(old & ~(uintptr_t)4095);
    char* m = mmap(base, HZ_LEN + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(m == base, "could not get the freed address back");
    b = (char*)old;
  }
  NOTE("malloc(16 MiB) = %p, after free + malloc = %p (%d misses)", (void*)old, (void*)b, nkeep);
  memset(b, 'B', HZ_LEN);
  sample_pfns(b, pfn_b);

  int fd = tu_tmpfile();
  tu_write_fixed(&u, &r, fd, (void*)old, HZ_LEN);  /* "send" through the OLD registration */
  tu_pread(fd, tu_scratch, HZ_LEN, 0);
  size_t na = tu_count(tu_scratch, HZ_LEN, 'A'), nb = tu_count(tu_scratch, HZ_LEN, 'B');
  int same = 0;
  for (int i = 0; i < HZ_PAGES; i++) same += (pfn_a[i] == pfn_b[i]);
  NOTE("stale send: %zu 'A' bytes, %zu 'B' bytes; %d of %d sampled PFNs unchanged (e.g. %llx -> %llx)",
       na, nb, same, HZ_PAGES, (unsigned long long)pfn_a[0], (unsigned long long)pfn_b[0]);
  CHECK(na == HZ_LEN, "the hazard was NOT observed: the old registration sent %zu new bytes", nb);
  CHECK(same == 0, "PFNs should all differ after free + malloc");
  CHECK_OK("unregister", pa_uring_unregister(&u, &r));
  close(fd);
  pa_uring_exit(&u);
  for (int i = 0; i < nkeep; i++) free(keep[i]);
}

TEST(hazard_pinarena_chunk_stays_fresh) {
  pa_uring_t u;
  tu_uring(&u);
  pa_mapping_t c;
  CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(HZ_LEN, NULL, 0, &c));
  pa_uring_reg_t r;
  CHECK_OK("io_uring_register", pa_uring_register(&u, c.addr, c.size, &r));   /* once */
  char* a = c.addr;                          /* "malloc" */
  memset(a, 'A', HZ_LEN);
  uint64_t pfn_a[HZ_PAGES], pfn_b[HZ_PAGES];
  sample_pfns(a, pfn_a);
  /* "free": the chunk stays mapped and registered; "malloc" hands it out again */
  char* b = c.addr;
  memset(b, 'B', HZ_LEN);
  sample_pfns(b, pfn_b);
  int fd = tu_tmpfile();
  tu_write_fixed(&u, &r, fd, a, HZ_LEN);
  tu_pread(fd, tu_scratch, HZ_LEN, 0);
  long bad = tu_first_not(tu_scratch, HZ_LEN, 'B');
  CHECK(bad < 0, "byte %ld of the send is '%c', not the current 'B'", bad, tu_scratch[bad < 0 ? 0 : bad]);
  CHECK(memcmp(pfn_a, pfn_b, sizeof(pfn_a)) == 0, "chunk PFNs changed");
  NOTE("chunk (%s): same PFNs, the send carries the current bytes", pa_backing_name(c.backing));
  CHECK_OK("unregister", pa_uring_unregister(&u, &r));
  close(fd);
  pa_uring_exit(&u);
  pa_os_unmap_chunk(&c);                     /* unregistered first: allowed */
}

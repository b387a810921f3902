/* pagemap.c — /proc/self/pagemap and /proc/kpageflags readers (pread, no heap).
 * Twin: registration/.../os/PageMap.java (pagemap) and PageSizes.java
 * (kpageflags) in Java; change both (shared scenario list: docs/ARCHITECTURE.md,
 * "Twins"). */
#include "pagemap.h"
#include "nocancel.h"
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int pa_pagemap_open(void) {
  int fd = pa_nc_open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  return (fd < 0 ? -errno : fd);
}

static int pread_full(int fd, void* buf, size_t len, off_t off) {
  char* p = buf;
  while (len > 0) {
    ssize_t n = pa_nc_pread(fd, p, len, off);
    if (n < 0) { if (errno == EINTR) continue; return -errno; }
    if (n == 0) return -EIO;
    p += n; len -= (size_t)n; off += n;
  }
  return 0;
}

int pa_pagemap_pfns(int fd, const void* addr, size_t npages, uint64_t* out) {
  const uintptr_t vpn = (uintptr_t)addr / PA_PAGE;
  uint64_t ent[64];                       /* batch of entries on the stack */
  int absent = 0, hidden = 0;
  for (size_t done = 0; done < npages; ) {
    size_t n = npages - done;
    if (n > 64) n = 64;
    int rc = pread_full(fd, ent, n * sizeof(uint64_t), (off_t)((vpn + done) * sizeof(uint64_t)));
    if (rc != 0) return rc;
    for (size_t i = 0; i < n; i++) {
      uint64_t e = ent[i];
      uint64_t pfn = e & PA_PM_PFN_MASK;
      if (!(e & PA_PM_PRESENT) || (e & PA_PM_SWAPPED)) { absent = 1; pfn = 0; }
      else if (pfn == 0) hidden = 1;
      out[done + i] = pfn;
    }
    done += n;
  }
  if (hidden) return -EPERM;
  if (absent) return -ENODATA;
  return 0;
}

int pa_kpageflags(uint64_t pfn, uint64_t* flags) {
  int fd = pa_nc_open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int rc = pread_full(fd, flags, sizeof(*flags), (off_t)(pfn * sizeof(uint64_t)));
  pa_nc_close(fd);
  return rc;
}

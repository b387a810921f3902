/* pagemap.h — virtual address -> physical frame number (PFN).
 *
 * /proc/self/pagemap holds one 64-bit entry per 4 KiB virtual page:
 *   bit 63 present, bit 62 swapped, bits 0..54 PFN (when present).
 * Since Linux 4.2 the PFN field reads as 0 unless the reader has
 * CAP_SYS_ADMIN (root): a present page with PFN 0 therefore means
 * "no privilege", reported as -EPERM, never as a real frame 0.
 *
 * The tests use PFNs to show which physical pages a registration pinned
 * and whether a virtual address still maps them.
 */
#ifndef PA_PAGEMAP_H
#define PA_PAGEMAP_H

#include <stddef.h>
#include <stdint.h>

#define PA_PM_PRESENT  ((uint64_t)1 << 63)
#define PA_PM_SWAPPED  ((uint64_t)1 << 62)
#define PA_PM_PFN_MASK (((uint64_t)1 << 55) - 1)

/* /proc/kpageflags bit for pages that belong to a transparent huge page. */
#define PA_KPF_THP 22

/* Open /proc/self/pagemap. Returns an fd or -errno. */
int pa_pagemap_open(void);

/* PFNs of `npages` consecutive 4 KiB pages starting at the page holding
 * `addr`. Returns 0; -ENODATA if a page is not present (out[i] = 0 there and
 * the rest is still filled); -EPERM if pages are present but PFNs read 0
 * (missing CAP_SYS_ADMIN); or -errno. */
int pa_pagemap_pfns(int fd, const void* addr, size_t npages, uint64_t* out);

/* One page; same returns. */
static inline int pa_pagemap_pfn(int fd, const void* addr, uint64_t* pfn) {
  return pa_pagemap_pfns(fd, addr, 1, pfn);
}

/* Flags word of one physical frame from /proc/kpageflags (root only). */
int pa_kpageflags(uint64_t pfn, uint64_t* flags);

#endif

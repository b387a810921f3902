/* kernel_view.h — what the kernel reports, for the C tests: this process's
 * /proc/self/status fields, the hugetlb pool, sysfs knobs, and the physical
 * frames behind a range (pagemap). */
#ifndef PA_TEST_KERNEL_VIEW_H
#define PA_TEST_KERNEL_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include "runner.h"
#include "diag.h"
#include "os.h"
#include "pagemap.h"
#include "procfs.h"

/* Status field in kB, fail on error. */
uint64_t tu_status_kb(const char* key);
/* free_hugepages - resv_hugepages for that page size; 0 when unknown. */
uint64_t tu_hugetlb_free(size_t page_kb);
int  tu_sysfs_read(const char* path, uint64_t* v);
int  tu_sysfs_write(const char* path, uint64_t v);
/* A knob's first line (NUL-terminated, without its newline) into buf; 0 or -errno (-EIO: empty or too long). */
int  tu_sysfs_read_line(const char* path, char* buf, size_t cap);
/* Write text as it is; 0 or -errno. */
int  tu_sysfs_write_text(const char* path, const char* text);
/* PFNs of npages pages (4 KiB each); skip the test if PFNs are hidden. */
void tu_pfns(const void* addr, size_t npages, uint64_t* out);

#endif

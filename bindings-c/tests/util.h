/* util.h — helpers shared by the C tests. */
#ifndef PA_TEST_UTIL_H
#define PA_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include "runner.h"
#include "diag.h"
#include "os.h"
#include "pagemap.h"
#include "procfs.h"
#include "uring.h"

/* Anonymous temp file (O_TMPFILE in /tmp, else mkstemp + unlink). */
int  tu_tmpfile(void);
/* Read len bytes at off; fail the test on error. */
void tu_pread(int fd, void* buf, size_t len, uint64_t off);
/* Does buf consist only of byte c? Returns index of the first other byte, or -1. */
long tu_first_not(const void* buf, size_t len, unsigned char c);
/* Count of bytes equal to c. */
size_t tu_count(const void* buf, size_t len, unsigned char c);
/* /proc/meminfo or sysfs numbers. */
uint64_t tu_meminfo(const char* key);
uint64_t tu_hugetlb_free(size_t page_kb);   /* free_hugepages - resv_hugepages for that size */
int  tu_sysfs_read(const char* path, uint64_t* v);
int  tu_sysfs_write(const char* path, uint64_t v);
/* PFNs of npages pages (4 KiB each); skip the test if PFNs are hidden. */
void tu_pfns(const void* addr, size_t npages, uint64_t* out);
/* Init a ring or fail the test with the diagnostic. */
void tu_uring(pa_uring_t* u);
/* WRITE_FIXED `len` bytes at `addr` (inside reg) to file offset 0 of fd, fail on error. */
void tu_write_fixed(pa_uring_t* u, const pa_uring_reg_t* reg, int fd, const void* addr, size_t len);
/* Status field in kB, fail on error. */
uint64_t tu_status_kb(const char* key);
double tu_now(void);

/* Large static scratch for reading files back, so tests need not malloc. */
#define TU_SCRATCH (64u << 20)
extern unsigned char tu_scratch[TU_SCRATCH];

#endif

/* sent_bytes.h — what a pin actually sends, for the C tests: an io_uring
 * WRITE_FIXED from registered memory into a temporary file, read back and
 * scanned byte by byte. */
#ifndef PA_TEST_SENT_BYTES_H
#define PA_TEST_SENT_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include "runner.h"
#include "diag.h"
#include "uring.h"

/* Anonymous temp file (O_TMPFILE in /tmp, else mkstemp + unlink). */
int  tu_tmpfile(void);
/* Read len bytes at off; fail the test on error. */
void tu_pread(int fd, void* buf, size_t len, uint64_t off);
/* Init a ring or fail the test with the diagnostic. */
void tu_uring(pa_uring_t* u);
/* WRITE_FIXED `len` bytes at `addr` (inside reg) to file offset 0 of fd, fail on error. */
void tu_write_fixed(pa_uring_t* u, const pa_uring_reg_t* reg, int fd, const void* addr, size_t len);
/* Does buf consist only of byte c? Returns index of the first other byte, or -1. */
long tu_first_not(const void* buf, size_t len, unsigned char c);
/* Count of bytes equal to c. */
size_t tu_count(const void* buf, size_t len, unsigned char c);

/* Large static scratch for reading files back, so tests need not malloc. */
#define TU_SCRATCH (64u << 20)
extern unsigned char tu_scratch[TU_SCRATCH];

#endif

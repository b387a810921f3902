#define _GNU_SOURCE
#include "sent_bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned char tu_scratch[TU_SCRATCH];

int tu_tmpfile(void) {
  int fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  char path[] = "/tmp/pa-test-XXXXXX";
  fd = mkstemp(path);
  if (fd < 0) pa_fail(__FILE__, __LINE__, "mkstemp: %s", strerror(errno));
  unlink(path);
  return fd;
}

void tu_pread(int fd, void* buf, size_t len, uint64_t off) {
  char* p = buf;
  while (len > 0) {
    ssize_t n = pread(fd, p, len, (off_t)off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) pa_fail(__FILE__, __LINE__, "pread: %s", n < 0 ? strerror(errno) : "short file");
    p += n; len -= (size_t)n; off += (uint64_t)n;
  }
}

void tu_uring(pa_uring_t* u) {
  int rc = pa_uring_init(u, 8);
  if (rc != 0) pa_fail_call(__FILE__, __LINE__, "io_uring_setup", -rc);
}

void tu_write_fixed(pa_uring_t* u, const pa_uring_reg_t* reg, int fd, const void* addr, size_t len) {
  int slot = pa_uring_slot_for(reg, addr, len);
  if (slot < 0) pa_fail(__FILE__, __LINE__, "pa_uring_slot_for: range not inside one piece");
  int r = pa_uring_rw_fixed(u, 1, fd, addr, (unsigned)len, 0, (unsigned)slot);
  if (r < 0) pa_fail_call(__FILE__, __LINE__, "IORING_OP_WRITE_FIXED", -r);
  if ((size_t)r != len) pa_fail(__FILE__, __LINE__, "WRITE_FIXED wrote %d of %zu bytes", r, len);
}

long tu_first_not(const void* buf, size_t len, unsigned char c) {
  const unsigned char* p = buf;
  for (size_t i = 0; i < len; i++) if (p[i] != c) return (long)i;
  return -1;
}

size_t tu_count(const void* buf, size_t len, unsigned char c) {
  const unsigned char* p = buf;
  size_t n = 0;
  for (size_t i = 0; i < len; i++) n += (p[i] == c);
  return n;
}

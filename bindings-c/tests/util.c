#define _GNU_SOURCE
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

uint64_t tu_meminfo(const char* key) {
  uint64_t v = 0;
  int rc = pa_proc_field("/proc/meminfo", key, &v);
  if (rc != 0) pa_fail_call(__FILE__, __LINE__, "read /proc/meminfo", -rc);
  return v;
}

int tu_sysfs_read(const char* path, uint64_t* v) {
  pa_linereader_t lr;
  int rc = pa_lr_open(&lr, path);
  if (rc != 0) return rc;
  char* line;
  rc = (pa_lr_next(&lr, &line) >= 0 && pa_parse_u64(line, v) > 0) ? 0 : -EIO;
  pa_lr_close(&lr);
  return rc;
}

int tu_sysfs_write(const char* path, uint64_t v) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  char buf[32];
  int n = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)v);
  int rc = (write(fd, buf, (size_t)n) == n) ? 0 : -errno;
  close(fd);
  return rc;
}

uint64_t tu_hugetlb_free(size_t page_kb) {
  char path[128];
  uint64_t fr = 0, rs = 0;
  snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%zukB/free_hugepages", page_kb);
  if (tu_sysfs_read(path, &fr) != 0) return 0;
  snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%zukB/resv_hugepages", page_kb);
  if (tu_sysfs_read(path, &rs) != 0) return 0;
  return fr > rs ? fr - rs : 0;
}

void tu_pfns(const void* addr, size_t npages, uint64_t* out) {
  int fd = pa_pagemap_open();
  if (fd < 0) pa_fail_call(__FILE__, __LINE__, "pagemap open", -fd);
  int rc = pa_pagemap_pfns(fd, addr, npages, out);
  close(fd);
  if (rc == -EPERM) SKIP("PFNs read as 0 from /proc/self/pagemap: needs CAP_SYS_ADMIN (run the tests as root)");
  if (rc != 0) pa_fail_call(__FILE__, __LINE__, "pagemap", -rc);
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

uint64_t tu_status_kb(const char* key) {
  uint64_t v = 0;
  int rc = pa_proc_status_kb(key, &v);
  if (rc != 0) pa_fail_call(__FILE__, __LINE__, "read /proc/self/status", -rc);
  return v;
}

double tu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

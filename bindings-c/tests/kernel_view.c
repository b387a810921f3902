#define _GNU_SOURCE
#include "kernel_view.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

uint64_t tu_status_kb(const char* key) {
  uint64_t v = 0;
  int rc = pa_proc_status_kb(key, &v);
  if (rc != 0) pa_fail_call(__FILE__, __LINE__, "read /proc/self/status", -rc);
  return v;
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

int tu_sysfs_read(const char* path, uint64_t* v) {
  pa_linereader_t lr;
  int rc = pa_lr_open(&lr, path);
  if (rc != 0) return rc;
  char* line;
  rc = (pa_lr_next(&lr, &line) >= 0 && pa_parse_u64(line, v) > 0) ? 0 : -EIO;
  pa_lr_close(&lr);
  return rc;
}

int tu_sysfs_read_line(const char* path, char* buf, size_t cap) {
  pa_linereader_t lr;
  int rc = pa_lr_open(&lr, path);
  if (rc != 0) return rc;
  char* line;
  ssize_t n = pa_lr_next(&lr, &line);
  rc = n >= 0 && (size_t)n < cap ? 0 : -EIO;
  if (rc == 0) memcpy(buf, line, (size_t)n + 1);
  pa_lr_close(&lr);
  return rc;
}

int tu_sysfs_write_text(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t n = (ssize_t)strlen(text);
  int rc = (write(fd, text, (size_t)n) == n) ? 0 : -errno;
  close(fd);
  return rc;
}

int tu_sysfs_write(const char* path, uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)v);
  return tu_sysfs_write_text(path, buf);
}

void tu_pfns(const void* addr, size_t npages, uint64_t* out) {
  int fd = pa_pagemap_open();
  if (fd < 0) pa_fail_call(__FILE__, __LINE__, "pagemap open", -fd);
  int rc = pa_pagemap_pfns(fd, addr, npages, out);
  close(fd);
  if (rc == -EPERM) SKIP("PFNs read as 0 from /proc/self/pagemap: needs CAP_SYS_ADMIN (run the tests as root)");
  if (rc != 0) pa_fail_call(__FILE__, __LINE__, "pagemap", -rc);
}

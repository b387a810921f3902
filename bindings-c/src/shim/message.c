/* message.c — words for the user, written with write(2) only (no stdio, no
 * malloc: they may be needed inside malloc), and the fatal abort. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

PA_HIDDEN void pa_write_str(int fd, const char* s) {
  size_t n = strlen(s);
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w <= 0) { if (w < 0 && errno == EINTR) continue; return; }
    s += w; n -= (size_t)w;
  }
}

PA_HIDDEN char* pa_fmt_u64(char* buf, uint64_t v) {
  char tmp[20];
  int n = 0;
  do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
  char* p = buf;
  while (n) *p++ = tmp[--n];
  *p = 0;
  return buf;
}

PA_HIDDEN void pa_fatal_ptr(const char* what, const void* p) {
  char h[24];
  int saved = errno;
  pa_write_str(2, "pinarena: ");
  pa_write_str(2, what);
  pa_write_str(2, " ");
  pa_write_str(2, pa_fmt_hex(h, (uintptr_t)p));
  pa_write_str(2, "\n");
  errno = saved;
  abort();
}

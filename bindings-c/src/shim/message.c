/* message.c — words for the user, written with write(2) only (no stdio, no
 * malloc: they may be needed inside malloc), and the fatal abort.
 *
 * Three kinds: fatal aborts (a bad pointer, damaged metadata) go to fd 2
 * whatever it is, as glibc's do; warnings (a setting that makes no sense)
 * and notices (registration refused, the registrar chosen; only with
 * PINARENA_VERBOSE) go to fd 2 only while it is still the stderr the
 * program started with: a program that closed it and got the number back
 * for a data file must not find our words in its data. */
#include "internal.h"
#include "../nocancel.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct { dev_t dev; ino_t ino; int known; } err_id;

PA_HIDDEN void pa_stderr_remember(void) {
  struct stat st;
  int saved = errno;
  if (fstat(2, &st) == 0) { err_id.dev = st.st_dev; err_id.ino = st.st_ino; err_id.known = 1; }
  errno = saved;
}

static int stderr_is_the_programs(void) {
  struct stat st;
  int saved = errno;
  int same = err_id.known && fstat(2, &st) == 0 && st.st_dev == err_id.dev && st.st_ino == err_id.ino;
  errno = saved;
  return same;
}

/* "pinarena: " and the parts (up to a NULL), as one write. */
static void say(va_list ap, const char* first) {
  if (!stderr_is_the_programs()) return;
  char line[512];
  size_t n = 0;
  for (const char* p = "pinarena: "; *p; p++) line[n++] = *p;
  for (const char* part = first; part != NULL; part = va_arg(ap, const char*))
    for (const char* p = part; *p && n < sizeof(line) - 1; p++) line[n++] = *p;
  line[n++] = '\n';
  int saved = errno;
  for (size_t off = 0; off < n;) {
    ssize_t w = pa_nc_write(2, line + off, n - off);
    if (w <= 0) { if (w < 0 && errno == EINTR) continue; break; }
    off += (size_t)w;
  }
  errno = saved;
}

PA_HIDDEN void pa_warn(const char* first, ...) {
  va_list ap;
  va_start(ap, first);
  say(ap, first);
  va_end(ap);
}

PA_HIDDEN void pa_notice(const char* first, ...) {
  if (!pa_opts.verbose) return;
  va_list ap;
  va_start(ap, first);
  say(ap, first);
  va_end(ap);
}

PA_HIDDEN void pa_write_str(int fd, const char* s) {
  size_t n = strlen(s);
  while (n > 0) {
    ssize_t w = pa_nc_write(fd, s, n);
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

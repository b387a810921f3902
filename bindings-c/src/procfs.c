/* procfs.c — line reader over /proc files: fixed buffer, raw read(). */
#include "procfs.h"
#include "nocancel.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int pa_lr_open(pa_linereader_t* lr, const char* path) {
  lr->eof = 0; lr->skipping = 0; lr->err = 0; lr->pos = 0; lr->len = 0;
  lr->fd = pa_nc_open(path, O_RDONLY | O_CLOEXEC);
  return (lr->fd < 0 ? -errno : 0);
}

void pa_lr_close(pa_linereader_t* lr) {
  if (lr->fd >= 0) pa_nc_close(lr->fd);
  lr->fd = -1;
}

/* Refill: move unread bytes to the front, then read more. Returns bytes read,
 * 0 at EOF, -1 on error. */
static ssize_t lr_fill(pa_linereader_t* lr) {
  if (lr->pos > 0) {
    memmove(lr->buf, lr->buf + lr->pos, lr->len - lr->pos);
    lr->len -= lr->pos;
    lr->pos = 0;
  }
  ssize_t n;
  do { n = pa_nc_read(lr->fd, lr->buf + lr->len, PA_LR_BUFSIZE - lr->len); } while (n < 0 && errno == EINTR);
  if (n < 0) { lr->err = errno; return -1; }
  if (n == 0) lr->eof = 1;
  lr->len += (size_t)n;
  return n;
}

ssize_t pa_lr_next(pa_linereader_t* lr, char** line) {
  for (;;) {
    char*  start = lr->buf + lr->pos;
    size_t avail = lr->len - lr->pos;
    char*  nl    = memchr(start, '\n', avail);
    if (lr->skipping) {                       /* tail of a truncated line */
      if (nl != NULL) { lr->skipping = 0; lr->pos += (size_t)(nl - start) + 1; continue; }
      lr->pos = lr->len;
    }
    else if (nl != NULL) {                    /* fast path: a whole line is buffered */
      *nl = 0;
      lr->pos += (size_t)(nl - start) + 1;
      *line = start;
      return nl - start;
    }
    else if (lr->eof) {                       /* last line without '\n' */
      if (avail == 0) return -1;
      start[avail] = 0;
      lr->pos = lr->len;
      *line = start;
      return (ssize_t)avail;
    }
    else if (lr->pos == 0 && lr->len == PA_LR_BUFSIZE) {  /* line longer than the buffer */
      lr->buf[PA_LR_BUFSIZE] = 0;
      lr->pos = lr->len;
      lr->skipping = 1;
      *line = lr->buf;
      return PA_LR_BUFSIZE;
    }
    if (lr->eof) return -1;
    if (lr_fill(lr) < 0) return -1;
  }
}

size_t pa_parse_u64(const char* s, uint64_t* out) {
  const char* p = s;
  while (*p == ' ' || *p == '\t') p++;
  const char* digits = p;
  uint64_t v = 0;
  while (*p >= '0' && *p <= '9') { v = v * 10 + (uint64_t)(*p - '0'); p++; }
  if (p == digits) return 0;
  *out = v;
  return (size_t)(p - s);
}

static inline int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

size_t pa_parse_hex(const char* s, uint64_t* out) {
  const char* p = s;
  while (*p == ' ' || *p == '\t') p++;
  const char* digits = p;
  uint64_t v = 0;
  int d;
  while ((d = hexval(*p)) >= 0) { v = (v << 4) | (uint64_t)d; p++; }
  if (p == digits) return 0;
  *out = v;
  return (size_t)(p - s);
}

size_t pa_parse_maps_range(const char* line, uint64_t* start, uint64_t* end) {
  size_t n = pa_parse_hex(line, start);
  if (n == 0 || line[n] != '-') return 0;
  size_t m = pa_parse_hex(line + n + 1, end);
  return m == 0 ? 0 : n + 1 + m;
}

int pa_proc_field(const char* path, const char* key, uint64_t* out) {
  pa_linereader_t lr;
  int rc = pa_lr_open(&lr, path);
  if (rc != 0) return rc;
  size_t klen = strlen(key);
  char*  line;
  rc = -ENOENT;
  while (pa_lr_next(&lr, &line) >= 0) {
    if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
      rc = (pa_parse_u64(line + klen + 1, out) > 0 ? 0 : -EINVAL);
      break;
    }
  }
  if (rc == -ENOENT && lr.err != 0) rc = -lr.err;
  pa_lr_close(&lr);
  return rc;
}

/* procfs.h — read /proc files line by line without malloc or stdio.
 *
 * A pinarena malloc shim may call these while it is itself the allocator, so
 * the reader keeps its whole state in a caller-owned struct (usually on the
 * stack) and talks to the kernel with open/read/close only.
 */
#ifndef PA_PROCFS_H
#define PA_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PA_LR_BUFSIZE 4096

typedef struct pa_linereader_s {
  int    fd;
  int    eof;
  int    skipping;              /* discarding the rest of an over-long line */
  int    err;                   /* positive errno of a failed read, else 0 */
  size_t pos;                   /* start of unread data in buf */
  size_t len;                   /* end of valid data in buf */
  char   buf[PA_LR_BUFSIZE + 1];/* +1 for the terminating NUL of the last line */
} pa_linereader_t;

/* Open `path` read-only. Returns 0 or -errno. */
int pa_lr_open(pa_linereader_t* lr, const char* path);

/* Next line, NUL-terminated in place, without its '\n'. Returns the line
 * length, or -1 at end of file or on error (then lr->err is set). A line
 * longer than PA_LR_BUFSIZE is returned truncated; its rest is skipped. */
ssize_t pa_lr_next(pa_linereader_t* lr, char** line);

void pa_lr_close(pa_linereader_t* lr);

/* Parse helpers: skip blanks, then digits. Return the number of characters
 * consumed (0 when there is no number). */
size_t pa_parse_u64(const char* s, uint64_t* out);
size_t pa_parse_hex(const char* s, uint64_t* out);

/* The "start-end" that opens a mapping's line in /proc/PID/maps or smaps.
 * Returns the characters consumed (0 when the line is not a mapping's). */
size_t pa_parse_maps_range(const char* line, uint64_t* start, uint64_t* end);

/* Value of "Key:   <number> [kB]" in a /proc file such as /proc/self/status
 * (`key` without the colon). The number is returned as written: in kB for
 * kB fields, a count for HugePages_Free. Returns 0, -ENOENT when the key is
 * absent, or -errno. */
int pa_proc_field(const char* path, const char* key, uint64_t* out);

/* Convenience: a kB field of /proc/self/status (VmPin, VmLck, VmRSS...). */
static inline int pa_proc_status_kb(const char* key, uint64_t* kb) {
  return pa_proc_field("/proc/self/status", key, kb);
}

#endif

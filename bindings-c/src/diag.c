/* diag.c — errno names and fixes, written without stdio. */
#include "diag.h"
#include "nocancel.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

const char* pa_errno_name(int err) {
  switch (err) {
    case EPERM: return "EPERM";     case ENOENT: return "ENOENT";   case EINTR: return "EINTR";
    case EIO: return "EIO";         case EBADF: return "EBADF";     case EAGAIN: return "EAGAIN";
    case ENOMEM: return "ENOMEM";   case EACCES: return "EACCES";   case EFAULT: return "EFAULT";
    case EBUSY: return "EBUSY";     case EEXIST: return "EEXIST";   case EINVAL: return "EINVAL";
    case EMFILE: return "EMFILE";   case ENOSPC: return "ENOSPC";   case ENOSYS: return "ENOSYS";
    case ENODATA: return "ENODATA"; case EOVERFLOW: return "EOVERFLOW"; case EOPNOTSUPP: return "EOPNOTSUPP";
    default: return "E?";
  }
}

static int starts(const char* s, const char* p) { return strncmp(s, p, strlen(p)) == 0; }

const char* pa_diag_hint(const char* call, int err) {
  if (starts(call, "io_uring_register") || starts(call, "pa_uring_register")) {
    if (err == ENOMEM) return "pinned bytes exceed RLIMIT_MEMLOCK: raise ulimit -l or grant CAP_IPC_LOCK";
    if (err == EFAULT) return "range not mapped (or a piece > 1 GiB): register only mapped, populated memory";
    if (err == ENOSPC) return "no run of free fixed-buffer slots: unregister unused ranges";
    if (err == EOPNOTSUPP) return "memory type cannot be long-term pinned (file-backed / DAX?)";
  }
  if (starts(call, "io_uring_setup") || starts(call, "pa_uring_init")) {
    if (err == ENOSYS) return "kernel built without io_uring";
    if (err == EPERM) return "io_uring disabled: sysctl kernel.io_uring_disabled=0 (or seccomp in a container)";
    if (err == ENOMEM) return "ring memory over RLIMIT_MEMLOCK: raise ulimit -l";
  }
  if (starts(call, "mmap hugetlb") || starts(call, "pa_os_map_chunk")) {
    if (err == ENOMEM) return "hugetlb pool short: echo 512 > /proc/sys/vm/nr_hugepages (or let it fall back)";
    if (err == EINVAL) return "size must be a power of two >= 2 MiB";
  }
  if (starts(call, "pagemap")) {
    if (err == EPERM) return "PFNs read as 0: reading /proc/self/pagemap PFNs needs CAP_SYS_ADMIN (run as root)";
    if (err == ENODATA) return "page not present: populate it first";
  }
  if (starts(call, "mlock") || starts(call, "pa_mlock")) {
    if (err == ENOMEM || err == EAGAIN) return "over RLIMIT_MEMLOCK: raise ulimit -l or grant CAP_IPC_LOCK";
    if (err == EPERM) return "RLIMIT_MEMLOCK is 0 and no CAP_IPC_LOCK";
  }
  if (starts(call, "capset") && err == EPERM) return "need CAP_SETPCAP or only dropping is allowed";
  return "";
}

static char* put(char* p, char* end, const char* s) {
  while (*s != 0 && p < end) *p++ = *s++;
  return p;
}

void pa_diag(int fd, const char* call, int err) {
  char buf[512];
  char* end = buf + sizeof(buf) - 1;
  char num[12];
  int  n = 0;
  unsigned v = (unsigned)(err < 0 ? -err : err);
  do { num[n++] = (char)('0' + v % 10); v /= 10; } while (v != 0 && n < 11);
  char rev[12];
  for (int i = 0; i < n; i++) rev[i] = num[n - 1 - i];
  rev[n] = 0;
  const int e = (err < 0 ? -err : err);
  char* p = put(buf, end, call);
  p = put(p, end, ": ");
  p = put(p, end, pa_errno_name(e));
  p = put(p, end, " (");
  p = put(p, end, rev);
  p = put(p, end, ")");
  const char* hint = pa_diag_hint(call, e);
  if (*hint != 0) { p = put(p, end, ": "); p = put(p, end, hint); }
  *p++ = '\n';
  ssize_t w = pa_nc_write(fd, buf, (size_t)(p - buf));
  (void)w;
}

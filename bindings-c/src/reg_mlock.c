/* reg_mlock.c — residency via mlock (see reg_mlock.h for what it does not give). */
#include "reg_mlock.h"
/* system calls: in the shim, mlock and munlock are the program-facing hooks (shim/program.c) */
#include <sys/syscall.h>
#include <unistd.h>

#include <errno.h>
#include <sys/mman.h>

int pa_mlock_register(void* addr, size_t len) {
  if (len == 0) return -EINVAL;
  return (syscall(SYS_mlock, addr, len) == 0 ? 0 : -errno);
}

int pa_mlock_unregister(void* addr, size_t len) {
  if (len == 0) return -EINVAL;
  return (syscall(SYS_munlock, addr, len) == 0 ? 0 : -errno);
}

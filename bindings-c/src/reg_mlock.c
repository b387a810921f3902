/* reg_mlock.c — residency via mlock (see reg_mlock.h for what it does not give). */
#include "reg_mlock.h"

#include <errno.h>
#include <sys/mman.h>

int pa_mlock_register(void* addr, size_t len) {
  if (len == 0) return -EINVAL;
  return (mlock(addr, len) == 0 ? 0 : -errno);
}

int pa_mlock_unregister(void* addr, size_t len) {
  if (len == 0) return -EINVAL;
  return (munlock(addr, len) == 0 ? 0 : -errno);
}

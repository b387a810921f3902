/* nocancel.h — the library is never a cancellation point.
 *
 * glibc's malloc family is not a cancellation point, and neither is any
 * entry point of the shim (malloc family, pinarena_*, the interposed mmap
 * family): a thread with a pending cancel (deferred type) that calls one
 * must come back from it, or a lock it took stays held and a descriptor or
 * an object it was making leaks. Two means, both off the fast paths:
 *   - the library's own I/O goes through raw system calls (pa_nc_*: the
 *     libc wrappers of open, read, pread, write and close act on a pending
 *     cancel, syscall(2) does not);
 *   - code that calls into other libraries that may do I/O (libibverbs:
 *     sysfs, the command descriptor) runs with cancellation disabled, as
 *     do the sections under the registration and remote locks
 *     (pa_nc_lock / pa_nc_unlock).
 * A cancel that is pending stays pending: it acts at the program's next
 * cancellation point, as it would with glibc. */
#ifndef PA_NOCANCEL_H
#define PA_NOCANCEL_H

#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* -1 with errno set on failure, as the wrappers they replace */
static inline int pa_nc_open_mode(const char* path, int flags, mode_t mode) {
  return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}
static inline int pa_nc_open(const char* path, int flags) { return pa_nc_open_mode(path, flags, 0); }
static inline ssize_t pa_nc_read(int fd, void* buf, size_t len) { return syscall(SYS_read, fd, buf, len); }
static inline ssize_t pa_nc_pread(int fd, void* buf, size_t len, off_t off) {
  return syscall(SYS_pread64, fd, buf, len, off);
}
static inline ssize_t pa_nc_write(int fd, const void* buf, size_t len) { return syscall(SYS_write, fd, buf, len); }
static inline int pa_nc_close(int fd) { return (int)syscall(SYS_close, fd); }

/* Cancellation off for a section; returns what to restore. */
static inline int pa_nc_hold(void) {
  int old = PTHREAD_CANCEL_ENABLE;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  return old;
}
static inline void pa_nc_restore(int old) {
  int ignored;
  pthread_setcancelstate(old, &ignored);
}

/* A lock whose section may do I/O or call other libraries. */
static inline int pa_nc_lock(pthread_mutex_t* m) {
  int old = pa_nc_hold();
  pthread_mutex_lock(m);
  return old;
}
static inline void pa_nc_unlock(pthread_mutex_t* m, int old) {
  pthread_mutex_unlock(m);
  pa_nc_restore(old);
}

#endif

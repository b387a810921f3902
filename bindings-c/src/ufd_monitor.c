/* ufd_monitor.c — see ufd_monitor.h. */
#define _GNU_SOURCE
#include "ufd_monitor.h"
#include "nocancel.h"
#include "ivset.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>


static int ufd = -1, stop_fd = -1;
static uint64_t reg_mode;
static pthread_t monitor;
static _Atomic int active;

static void* monitor_main(void* arg) {
  (void)arg;
  struct uffd_msg msg[16];
  for (;;) {
    struct pollfd p[2] = { { .fd = ufd, .events = POLLIN }, { .fd = stop_fd, .events = POLLIN } };
    if (poll(p, 2, -1) < 0) { if (errno == EINTR) continue; break; }
    if (p[1].revents) break;
    /* hold before read: reading is what lets the unmapping thread go on */
    pa_iv_hold();
    ssize_t n = read(ufd, msg, sizeof msg);
    if (n < 0) { pa_iv_release(); if (errno == EAGAIN || errno == EINTR) continue; break; }
    for (size_t i = 0; i < (size_t)n / sizeof msg[0]; i++) {
      struct uffd_msg* m = &msg[i];
      switch (m->event) {
      case UFFD_EVENT_UNMAP:
        pa_iv_post(m->arg.remove.start, m->arg.remove.end);
        break;
      case UFFD_EVENT_REMOVE:
        pa_iv_post(m->arg.remove.start, m->arg.remove.end);
        break;
      case UFFD_EVENT_REMAP:
        pa_iv_post(m->arg.remap.from, m->arg.remap.from + m->arg.remap.len);
        pa_iv_post(m->arg.remap.to, m->arg.remap.to + m->arg.remap.len);
        break;
      case UFFD_EVENT_PAGEFAULT: {           /* MISSING mode: a dropped page was touched */
        struct uffdio_zeropage z = { .range = { .start = m->arg.pagefault.address & ~(PA_PAGE - 1), .len = PA_PAGE } };
        if (ioctl(ufd, UFFDIO_ZEROPAGE, &z) < 0 && errno != EEXIST) {
          struct uffdio_range w = { .start = z.range.start, .len = PA_PAGE };
          ioctl(ufd, UFFDIO_WAKE, &w);
        }
        break;
      }
      default:
        break;
      }
    }
    pa_iv_release();
  }
  return NULL;
}

int pa_ufd_start(void) {
  if (atomic_load(&active)) return 0;
  int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
  if (fd < 0 && errno == EINVAL) fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -errno;
  struct uffdio_api api = { .api = UFFD_API,
    .features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMAP | UFFD_FEATURE_EVENT_REMOVE };
  if (ioctl(fd, UFFDIO_API, &api) < 0) { int e = errno; pa_nc_close(fd); return -e; }
  /* WP mode where anonymous write-protect exists: registering it delivers no faults. */
  reg_mode = (api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP) ? UFFDIO_REGISTER_MODE_WP : UFFDIO_REGISTER_MODE_MISSING;
  int sfd = eventfd(0, EFD_CLOEXEC);
  if (sfd < 0) { int e = errno; pa_nc_close(fd); return -e; }
  ufd = fd;
  stop_fd = sfd;
  int rc = pthread_create(&monitor, NULL, monitor_main, NULL);
  if (rc != 0) { pa_nc_close(fd); pa_nc_close(sfd); ufd = stop_fd = -1; return -rc; }
  atomic_store(&active, 1);
  return 0;
}

void pa_ufd_stop(void) {
  if (!atomic_exchange(&active, 0)) return;
  uint64_t one = 1;
  ssize_t w = pa_nc_write(stop_fd, &one, sizeof one);
  (void)w;
  pthread_join(monitor, NULL);
  pa_nc_close(ufd);
  pa_nc_close(stop_fd);
  ufd = stop_fd = -1;
}

int pa_ufd_active(void) { return atomic_load(&active); }

void pa_ufd_atfork_child(void) {
  if (!atomic_exchange(&active, 0)) return;
  pa_nc_close(ufd);
  pa_nc_close(stop_fd);
  ufd = stop_fd = -1;
}

const char* pa_ufd_mode(void) { return reg_mode == UFFDIO_REGISTER_MODE_WP ? "wp" : "missing"; }

int pa_ufd_watch(const void* addr, size_t len) {
  if (!atomic_load(&active)) return -ENODEV;
  uintptr_t a = (uintptr_t)addr & ~(PA_PAGE - 1), e = ((uintptr_t)addr + len + PA_PAGE - 1) & ~(PA_PAGE - 1);
  struct uffdio_register r = { .range = { .start = a, .len = e - a }, .mode = reg_mode };
  if (ioctl(ufd, UFFDIO_REGISTER, &r) == 0) return 0;
  if (errno == EINVAL && reg_mode == UFFDIO_REGISTER_MODE_WP) {   /* e.g. a mapping type without WP */
    r.mode = UFFDIO_REGISTER_MODE_MISSING;
    if (ioctl(ufd, UFFDIO_REGISTER, &r) == 0) return 0;
  }
  return -errno;
}

int pa_ufd_unwatch(const void* addr, size_t len) {
  if (!atomic_load(&active)) return -ENODEV;
  uintptr_t a = (uintptr_t)addr & ~(PA_PAGE - 1), e = ((uintptr_t)addr + len + PA_PAGE - 1) & ~(PA_PAGE - 1);
  struct uffdio_range r = { .start = a, .len = e - a };
  return ioctl(ufd, UFFDIO_UNREGISTER, &r) == 0 ? 0 : -errno;
}

/* test_rc_ufd.c — userfaultfd as the invalidation source. Unmaps here go
 * through raw syscalls or glibc internals, so the hooks cannot see them:
 * whatever the cache learns comes from the kernel's events. (glibc free +
 * malloc at the same address with userfaultfd: test_rc_unmap.c.) */
#define _GNU_SOURCE
#include "wire.h"

#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define LEN (1 * PA_MiB)

static rcw_t* ufd_open(void) {
  int rc = pa_ufd_start();
  if (rc == -EPERM || rc == -ENOSYS) SKIP("userfaultfd unavailable: %s", pa_errno_name(-rc));
  CHECK_OK("pa_ufd_start", rc);
  NOTE("userfaultfd monitor active, mode %s; sources: %s", pa_ufd_mode(), pa_rc_sources());
  return rcw_open(NULL);
}

TEST(rc_ufd_raw_munmap_madvise_mremap_brk) {
  rcw_t* t = ufd_open();
  char* p = map_at(NULL, LEN, 'A');
  rcw_expect(t, p, LEN, "first");
  CHECK(syscall(SYS_madvise, p, LEN, MADV_DONTNEED) == 0, "madvise");
  memset(p, 'D', LEN);
  rcw_expect(t, p, LEN, "after raw madvise(DONTNEED)");
  CHECK(syscall(SYS_munmap, p + PG, PG) == 0, "munmap");
  map_at(p + PG, PG, 'D');
  rcw_expect(t, p, LEN, "after raw munmap of one page");
  char* m = map_at(NULL, LEN, 'M');                        /* one VMA, as mremap needs */
  rcw_expect(t, m, LEN, "before mremap");
  char* dst = map_at(NULL, LEN, 'x');
  CHECK((char*)syscall(SYS_mremap, m, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED, dst) == dst, "mremap");
  map_at(m, LEN, 'N');
  rcw_expect(t, m, LEN, "old address after raw mremap move");
  rcw_expect(t, dst, LEN, "moved pages");
  /* brk shrink by raw syscall */
  char* cur = (char*)syscall(SYS_brk, 0);
  char* top = (char*)(((uintptr_t)cur + PG - 1) & ~(PG - 1));
  CHECK((char*)syscall(SYS_brk, top + LEN) == top + LEN, "brk grow");
  memset(top, 'H', LEN);
  rcw_expect(t, top, LEN, "heap");
  uint64_t inv = rcw_stats(t).invalidations;
  syscall(SYS_brk, top);
  syscall(SYS_brk, top + LEN);
  memset(top, 'I', LEN);
  rcw_expect(t, top, LEN, "after raw brk shrink + grow");
  CHECK(rcw_stats(t).invalidations > inv, "brk shrink seen");
  NOTE("invalidations %llu, all from userfaultfd events", (unsigned long long)rcw_stats(t).invalidations);
  pa_ufd_stop();
}

TEST(rc_ufd_fork_child_unmap_does_not_block) {
  rcw_t* t = ufd_open();
  char* p = map_at(NULL, LEN, 'A');
  rcw_expect(t, p, LEN, "first");
  pid_t pid = fork();
  if (pid == 0) {                            /* no monitor in the child; its VMAs lost the uffd */
    alarm(5);
    syscall(SYS_munmap, p, LEN);
    _exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child blocked or died (status %d)", st);
  rcw_expect(t, p, LEN, "parent still hits");
  CHECK(rcw_stats(t).hits == 1, "no invalidation from the child");
  pa_ufd_stop();
}

static char static_buf[16 * 4096] __attribute__((aligned(4096))) = { 1 };

TEST(rc_ufd_what_cannot_be_watched) {
  rcw_t* t = ufd_open();
  memset(static_buf, 'S', sizeof static_buf);
  rcw_expect(t, static_buf, sizeof static_buf, ".data (private file mapping)");
  int fd = tu_tmpfile();
  CHECK(ftruncate(fd, LEN) == 0, "ftruncate");
  char* f = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  memset(f, 'F', LEN);
  pa_rc_region_t* r = NULL;
  int frc = pa_rc_get(&t->c, f, LEN, RCW_ACCESS, &r);
  if (frc == 0) pa_rc_put(&t->c, r);
  char stackbuf[8 * 4096];
  memset(stackbuf, 'K', sizeof stackbuf);
  rcw_expect(t, stackbuf + 4096, 4 * 4096, "stack");
  pa_rc_stats_t s = rcw_stats(t);
  NOTE(".data, a shared /tmp file mapping (pin: %s) and the stack: %llu of %llu regions could not be watched",
       frc == 0 ? "ok" : pa_errno_name(-frc), (unsigned long long)s.unwatched, (unsigned long long)s.misses);
  CHECK(s.unwatched >= 1, ".data cannot be watched by userfaultfd");
  pa_ufd_stop();
}

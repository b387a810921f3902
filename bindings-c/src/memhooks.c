/* memhooks.c — see memhooks.h. Every hook: pre-post, raw syscall, post-post. */
#define _GNU_SOURCE
#include "memhooks.h"
#include "ivset.h"
#include "procfs.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PUBLIC __attribute__((visibility("default")))
#define PA_MADV_GUARD_INSTALL 102      /* linux/mman.h, 6.13+; glibc 2.36 does not name it */

/* The malloc shim's rules for its own memory (shim/program.h); absent (NULL)
   in libpinarena-hooks.so and the test programs, which hold no shim memory. */
extern int  pa_prog_madvise(void* addr, size_t len, int advice, long* ret) __attribute__((weak, visibility("hidden")));
extern void pa_prog_unmaps(const char* who, const void* addr, size_t len) __attribute__((weak, visibility("hidden")));

extern void* __curbrk;                 /* glibc's cached break, exported */
extern void* __sbrk(intptr_t incr);    /* glibc's sbrk, exported */

static inline void post(uintptr_t a, size_t len) {
  uintptr_t s = a & ~(PA_PAGE - 1);
  pa_iv_post(s, a + len);
}

/* Local name for the munmap hook: pa_memhooks_interposing compares against
   it (a plain &munmap would go through the GOT to the global winner). */
static int hook_munmap(void* addr, size_t len) {
  if (pa_prog_unmaps) pa_prog_unmaps("munmap(): would unmap", addr, len);
  post((uintptr_t)addr, len);
  long r = syscall(SYS_munmap, addr, len);
  if (r == 0) post((uintptr_t)addr, len);
  return (int)r;
}
PUBLIC int munmap(void* addr, size_t len) __attribute__((alias("hook_munmap")));

static void* do_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  int fixed = (flags & MAP_FIXED) != 0;     /* MAP_FIXED_NOREPLACE alone never replaces */
  if (fixed && pa_prog_unmaps) pa_prog_unmaps("mmap(): MAP_FIXED would replace", addr, len);
  if (fixed) post((uintptr_t)addr, len);
  long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
  if (fixed && r != -1) post((uintptr_t)r, len);
  return (void*)r;
}

PUBLIC void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return do_mmap(addr, len, prot, flags, fd, off);
}
PUBLIC void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return do_mmap(addr, len, prot, flags, fd, off);
}

PUBLIC void* pa_memhooks_replace_anon(void* addr, size_t len) {
  return do_mmap(addr, len, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

PUBLIC void* mremap(void* old, size_t old_len, size_t new_len, int flags, ...) {
  void* want = NULL;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    want = va_arg(ap, void*);
    va_end(ap);
    if (pa_prog_unmaps) pa_prog_unmaps("mremap(): MREMAP_FIXED would replace", want, new_len);
    post((uintptr_t)want, new_len);
  }
  if (pa_prog_unmaps) pa_prog_unmaps("mremap(): would move", old, old_len ? old_len : new_len);
  post((uintptr_t)old, old_len);
  long r = syscall(SYS_mremap, old, old_len, new_len, flags, want);
  if (r != -1) {
    /* old range: gone, shrunk or moved; new range: new pages (grow) or
       pages that now live at another address (move). Both invalidate. */
    post((uintptr_t)old, old_len);
    post((uintptr_t)r, new_len);
  }
  return (void*)r;
}

PUBLIC int madvise(void* addr, size_t len, int advice) {
  /* MADV_GUARD_INSTALL (Linux 6.13+) zaps the range's pages like DONTNEED; after
     MADV_GUARD_REMOVE the next touch faults in new ones. */
  int drops = advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE || advice == PA_MADV_GUARD_INSTALL
#ifdef MADV_DONTNEED_LOCKED
              || advice == MADV_DONTNEED_LOCKED
#endif
              ;
  if (drops) post((uintptr_t)addr, len);
  long r;
  /* the shim's memory keeps its frames (shim/program.h) */
  if (!pa_prog_madvise || !pa_prog_madvise(addr, len, advice, &r)) r = syscall(SYS_madvise, addr, len, advice);
  if (drops && r == 0) post((uintptr_t)addr, len);
  return (int)r;
}

PUBLIC int brk(void* addr) {
  uintptr_t cur = (uintptr_t)syscall(SYS_brk, 0);
  if ((uintptr_t)addr < cur) post((uintptr_t)addr, cur - (uintptr_t)addr);
  void* now = (void*)syscall(SYS_brk, addr);
  __curbrk = now;
  if ((uintptr_t)now < (uintptr_t)addr) { errno = ENOMEM; return -1; }
  if ((uintptr_t)addr < cur) post((uintptr_t)addr, cur - (uintptr_t)addr);
  return 0;
}

PUBLIC void* sbrk(intptr_t incr) {
  if (incr >= 0) return __sbrk(incr);
  uintptr_t cur = (uintptr_t)syscall(SYS_brk, 0);
  post(cur + (uintptr_t)incr, (size_t)-incr);
  void* old = __sbrk(incr);
  if (old != (void*)-1) post((uintptr_t)old + (uintptr_t)incr, (size_t)-incr);
  return old;
}

/* Length of the attached segment at addr: the VMAs from /proc/self/maps that
 * start at addr and continue it (mprotect may have split it). 0 if unknown. */
static size_t shm_len(uintptr_t addr) {
  pa_linereader_t lr;
  if (pa_lr_open(&lr, "/proc/self/maps") != 0) return 0;
  uintptr_t end = addr;
  char* line;
  while (pa_lr_next(&lr, &line) >= 0) {
    uint64_t s, e;
    if (pa_parse_maps_range(line, &s, &e) == 0) continue;
    if ((uintptr_t)s == end) end = (uintptr_t)e;
  }
  pa_lr_close(&lr);
  return end - addr;
}

PUBLIC int shmdt(const void* addr) {
  size_t len = shm_len((uintptr_t)addr);
  if (len == 0) len = PA_PAGE;
  post((uintptr_t)addr, len);
  long r = syscall(SYS_shmdt, addr);
  if (r == 0) post((uintptr_t)addr, len);
  return (int)r;
}

int pa_memhooks_interposing(void) {
  return dlsym(RTLD_DEFAULT, "munmap") == (void*)&hook_munmap;
}

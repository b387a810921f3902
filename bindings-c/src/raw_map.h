/* raw_map.h — private anonymous memory for the library's own structures,
 * mapped and unmapped by system call: never through an interposed mmap (the
 * memory hooks, a program's wrappers), never seen by a registration cache as
 * the program's memory, and never from the heap the structures serve. */
#ifndef PA_RAW_MAP_H
#define PA_RAW_MAP_H

#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* len bytes of zeroed memory, or NULL. Never transparent huge pages: the
 * structures are touched sparsely, and under THP "always" each touched 2 MiB
 * region would be a whole huge page (errno is left as it was). Self-contained
 * (not os.c's pa_os_refuse_huge): libpinarena-windows.so includes it without os.c. */
static inline void* pa_raw_map(size_t len) {
  void* p = (void*)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  int saved = errno;
  syscall(SYS_madvise, p, len, MADV_NOHUGEPAGE);
  errno = saved;
  return p;
}

static inline void pa_raw_unmap(void* p, size_t len) { syscall(SYS_munmap, p, len); }

#endif

/* raw_map.h — private anonymous memory for the library's own structures,
 * mapped and unmapped by system call: never through an interposed mmap (the
 * memory hooks, a program's wrappers), never seen by a registration cache as
 * the program's memory, and never from the heap the structures serve. */
#ifndef PA_RAW_MAP_H
#define PA_RAW_MAP_H

#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* len bytes of zeroed memory, or NULL. */
static inline void* pa_raw_map(size_t len) {
  void* p = (void*)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static inline void pa_raw_unmap(void* p, size_t len) { syscall(SYS_munmap, p, len); }

#endif

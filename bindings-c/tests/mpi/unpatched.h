/* unpatched.h — proof that no stack rewrote libc's code: the first bytes of libc's mmap, munmap, mremap,
 * madvise and brk in this process against the same bytes of the file on disk (libc's own definitions, found
 * through a handle on libc itself, not the process-wide winner, which under the shim is the shim's hook).
 * A code-patching hook (UCM's bistro, libfabric's memhooks, Open MPI's patcher) writes a jump there.
 *
 *   unpatched_report(rank): prints "unpatched rank=R mmap=1 munmap=1 mremap=1 madvise=1 brk=1 all=1"
 *   (1: the bytes equal the file's; 0: changed; -1: could not be read) and returns all's value. */
#ifndef PA_MPI_UNPATCHED_H
#define PA_MPI_UNPATCHED_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define UNPATCHED_BYTES 16

/* 1 / 0 / -1 for one libc function (see above). */
static int unpatched_one(void* libc, const char* name) {
  void* fn = dlsym(libc, name);
  Dl_info info;
  if (fn == NULL || dladdr(fn, &info) == 0 || info.dli_fname == NULL || strstr(info.dli_fname, "libc.so") == NULL)
    return -1;
  /* The virtual address relative to the load base, turned into a file offset through its PT_LOAD. */
  const ElfW(Ehdr)* eh = (const ElfW(Ehdr)*)info.dli_fbase;
  const ElfW(Phdr)* ph = (const ElfW(Phdr)*)((const char*)eh + eh->e_phoff);
  uintptr_t vaddr = (uintptr_t)fn - (uintptr_t)info.dli_fbase;
  long off = -1;
  for (int i = 0; i < eh->e_phnum; i++)
    if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr && vaddr < ph[i].p_vaddr + ph[i].p_filesz)
      off = (long)(vaddr - ph[i].p_vaddr + ph[i].p_offset);
  if (off < 0) return -1;
  unsigned char disk[UNPATCHED_BYTES];
  int fd = open(info.dli_fname, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = pread(fd, disk, sizeof disk, off);
  close(fd);
  if (n != (ssize_t)sizeof disk) return -1;
  return memcmp(disk, fn, sizeof disk) == 0;
}

static int unpatched_report(int rank) {
  static const char* const names[] = {"mmap", "munmap", "mremap", "madvise", "brk"};
  void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  char line[256];
  int len = snprintf(line, sizeof line, "unpatched rank=%d", rank), all = 1;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    int r = libc != NULL ? unpatched_one(libc, names[i]) : -1;
    if (r != 1) all = r < 0 && all != 0 ? -1 : 0;
    len += snprintf(line + len, sizeof line - (size_t)len, " %s=%d", names[i], r);
  }
  printf("%s all=%d\n", line, all);
  fflush(stdout);
  return all;
}

#endif

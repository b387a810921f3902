/* memhooks.h — interposed munmap, mremap, mmap(MAP_FIXED), madvise
 * (DONTNEED/FREE/REMOVE), brk/sbrk shrink and shmdt.
 *
 * Built only into the preload libraries (libpinarena.so, the malloc shim, and
 * libpinarena-hooks.so, the hooks alone) or linked directly into a test program: never into
 * libpinarena-core.a, where the archive would silently pull it in to satisfy
 * every munmap.
 *
 * Each hook makes the real call with a raw syscall (no dlsym, so nothing can
 * recurse through malloc), and posts the affected range to the invalidation
 * sinks (ivset.h) before AND after the call:
 *   before: a thread that maps the same address right after the unmap cannot
 *           hit the old entry in the window before the after-post;
 *   after:  a registration made (wrongly) of the dying pages between the
 *           before-post's drain and the unmap is invalidated too.
 * Hooks never deregister, never allocate, never lock: pa_iv_post only.
 *
 * What interposition cannot see: calls that do not go through the dynamic
 * symbol — glibc's own malloc/free use internal aliases (__munmap,
 * __madvise, __sbrk), raw syscalls, and a dlsym(<libc handle>, "munmap")
 * binding such as jnr-ffi's. Those need the shim (which replaces malloc) or
 * the userfaultfd monitor (ufd_monitor.h). */
#ifndef PA_MEMHOOKS_H
#define PA_MEMHOOKS_H

#include <stddef.h>
#include "common.h"

/* 1 when the process-wide definition of munmap (RTLD_DEFAULT) is this
 * library's hook, i.e. the library was preloaded or linked into the program;
 * 0 when it was dlopen'ed after libc (the hooks then see nothing). */
PA_EXPORT int pa_memhooks_interposing(void);

/* mmap(addr, len, PROT_READ|PROT_WRITE, MAP_FIXED|MAP_PRIVATE|MAP_ANONYMOUS,
 * -1, 0) through this library's mmap hook: replaces whatever is mapped at
 * [addr, addr+len) with fresh zero pages in ONE call (no hole in between)
 * and posts the range like any MAP_FIXED. Returns addr, or MAP_FAILED with
 * errno set. For bindings that cannot make a six-argument call (jnr-ffi
 * 2.2.17 passes a garbage 6th argument when all six are primitives): the
 * Java tests use it where "unmap, then new pages at the same address" must
 * not leave a hole another thread's mmap could take and MAP_FIXED would then
 * silently clobber. */
void* pa_memhooks_replace_anon(void* addr, size_t len);

#endif

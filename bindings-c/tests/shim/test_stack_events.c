/* test_stack_events.c — the shim as UCX's memory-event source
 * (src/shim/stack_events.c), against the host's real libucm (Debian's
 * libucx0): a subscription to UCM_EVENT_VM_UNMAPPED reaches the shim first,
 * UCM installs no hook for it, and every munmap the shim sees arrives at the
 * subscriber through ucm_vm_munmap — a raw system call only with the
 * userfaultfd monitor, which this test does not start. */
#define _GNU_SOURCE
#include "child.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UCM_EVENT_VM_UNMAPPED (1 << 17)      /* ucm/api/ucm.h */
#define LEN ((size_t)1 << 20)

typedef int (*set_handler_fn)(int events, int priority, void* cb, void* arg);
typedef int (*test_external_fn)(int events);

/* ucm_event_t's vm_unmapped member: address, size (ucm/api/ucm.h) */
struct vm_unmapped { void* address; size_t size; };

static uintptr_t want;
static size_t hits, others;

static void on_event(int type, void* event, void* arg) {
  (void)arg;
  const struct vm_unmapped* e = event;
  if (type != UCM_EVENT_VM_UNMAPPED) return;
  uintptr_t a = (uintptr_t)e->address;
  if (a <= want && want < a + e->size) hits++;
  else others++;
}

static int in_lib(void* fn, const char* lib) {
  Dl_info i;
  return dladdr(fn, &i) != 0 && i.dli_fname != NULL && strstr(i.dli_fname, lib) != NULL;
}

TEST(stack_events_ucm_unmaps_come_from_the_shim) {
  /* libucs first: libucm binds some of its symbols */
  if (dlopen("libucs.so.0", RTLD_NOW | RTLD_GLOBAL) == NULL) SKIP("no libucs.so.0 (libucx0): %s", dlerror());
  set_handler_fn set = (set_handler_fn)dlsym(RTLD_DEFAULT, "ucm_set_event_handler");
  CHECK(set != NULL && in_lib((void*)set, "libpinarena.so"),
        "ucm_set_event_handler resolves outside libpinarena.so: UCX would subscribe to UCM's own hooks");
  long (*forwarded)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_events_ucm");
  CHECK(forwarded != NULL && forwarded() == -1, "fed before UCX subscribed");
  CHECK(set(UCM_EVENT_VM_UNMAPPED, 1000, (void*)on_event, NULL) == 0, "subscription refused");
  CHECK(forwarded() == 0, "the shim did not take UCX's unmap events (forwarded %ld)", forwarded());

  char* p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED, "mmap");
  want = (uintptr_t)p + LEN / 2;
  CHECK(munmap(p, LEN) == 0, "munmap");
  CHECK(hits >= 1, "munmap of %p reached UCX's subscriber %zu times", (void*)p, hits);
  CHECK(forwarded() >= 1, "forwarded %ld", forwarded());

  /* UCM's own check that the external source reports (it maps and unmaps a page itself) */
  test_external_fn test = (test_external_fn)dlsym(RTLD_DEFAULT, "ucm_test_external_events");
  CHECK(test != NULL && in_lib((void*)test, "libucm"), "ucm_test_external_events not found in libucm");
  CHECK(test(UCM_EVENT_VM_UNMAPPED) == 0, "UCM says its external VM_UNMAPPED events are not reported");

  /* Nothing patched: libc's munmap starts as on disk would need ELF parsing; here it is enough that a raw
     system call (no symbol) is NOT reported — UCM hooked nothing below the symbol. */
  size_t before = hits;
  p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED, "mmap");
  want = (uintptr_t)p;
  CHECK(syscall(SYS_munmap, p, LEN) == 0, "raw munmap");
  CHECK(hits == before, "a raw munmap was reported (hits %zu -> %zu)", before, hits);
  NOTE("ucm_vm_munmap calls: %ld, hits %zu, other ranges %zu", forwarded(), hits, others);
}

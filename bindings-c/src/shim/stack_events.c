/* stack_events.c — the shim as UCX's memory-event source.
 *
 * UCX's registration cache must hear of every unmap of memory it may have
 * registered. It normally learns that from UCM's code-patching hooks; run
 * with those off (UCX_MEM_MMAP_HOOK_MODE=none, UCX_MEM_MALLOC_HOOKS=no), UCM
 * offers external events instead: a process that declares UCM_EVENT_VM_UNMAPPED
 * external (ucm_set_external_event) before the cache subscribes reports each
 * range that leaves with ucm_vm_munmap(addr, len), and UCM installs no hook for
 * it.
 *
 * The shim sees every unmap already: its interposed munmap & co., its own chunk
 * releases and, with PINARENA_UFFD=1, the userfaultfd monitor all post to the
 * invalidation sinks (ivset.h). So: the shim exports ucm_set_event_handler,
 * which every UCX library's subscription reaches first (a preloaded
 * definition wins the lookup). On the first subscription it binds libucm (the
 * caller's library has it loaded), declares VM_UNMAPPED external and taps
 * pa_iv_post, then hands the subscription to UCM's own function. From then on
 * every posted range goes to ucm_vm_munmap, before the unmap (the hooks post
 * before and after the system call; UCX's cache queues each and drops the
 * overlapping regions at its next use).
 *
 * PINARENA_STACK_EVENTS=0 leaves UCM alone (its own hooks, as configured). */
#define _GNU_SOURCE
#include "internal.h"
#include "ivset.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define UCM_EVENT_VM_UNMAPPED (1 << 17)      /* ucm/api/ucm.h */
#define UCS_ERR_UNSUPPORTED   (-22)          /* ucs/type/status.h */

typedef int (*ucm_set_handler_fn)(int events, int priority, void* cb, void* arg);
typedef void (*ucm_external_fn)(int events);
typedef void (*ucm_vm_munmap_fn)(void* addr, size_t length);

static pthread_once_t ucm_once = PTHREAD_ONCE_INIT;
static ucm_set_handler_fn ucm_real_set_handler;
static ucm_vm_munmap_fn ucm_real_vm_munmap;
static _Atomic uint64_t ucm_forwarded = (uint64_t)-1;   /* -1: UCX not fed by the shim */

static void ucm_tap(uintptr_t start, uintptr_t end) {
  ucm_real_vm_munmap((void*)start, end - start);
  atomic_fetch_add_explicit(&ucm_forwarded, 1, memory_order_relaxed);
}

static void ucm_bind(void) {
  void* h = dlopen("libucm.so.0", RTLD_LAZY | RTLD_NOLOAD);
  void* from = h != NULL ? h : RTLD_NEXT;
  ucm_real_set_handler = (ucm_set_handler_fn)dlsym(from, "ucm_set_event_handler");
  ucm_external_fn external = (ucm_external_fn)dlsym(from, "ucm_set_external_event");
  ucm_real_vm_munmap = (ucm_vm_munmap_fn)dlsym(from, "ucm_vm_munmap");
  pa_ensure_init();                          /* pa_opts: read at the shim's first use */
  int off = pa_opts.stack_events_off;
  if (ucm_real_set_handler == NULL) {
    pa_write_str(2, "pinarena: ucm_set_event_handler called but libucm's own is not loaded\n");
  } else if (!off && external != NULL && ucm_real_vm_munmap != NULL) {
    external(UCM_EVENT_VM_UNMAPPED);
    atomic_store(&ucm_forwarded, 0);
    pa_iv_add_tap(ucm_tap);
  }
}

PA_EXPORT int ucm_set_event_handler(int events, int priority, void* cb, void* arg) {
  pthread_once(&ucm_once, ucm_bind);
  if (ucm_real_set_handler == NULL) return UCS_ERR_UNSUPPORTED;
  return ucm_real_set_handler(events, priority, cb, arg);
}

/* Ranges forwarded to ucm_vm_munmap so far; -1 when the shim does not feed UCX
 * (UCX never subscribed, or PINARENA_STACK_EVENTS=0). For tests (dlsym). */
PA_EXPORT long pinarena_stack_events_ucm(void) { return (long)atomic_load(&ucm_forwarded); }

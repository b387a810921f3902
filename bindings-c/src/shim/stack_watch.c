/* stack_watch.c — the userfaultfd monitor watches what the stacks register.
 *
 * With PINARENA_UFFD=1 the monitor (ufd_monitor.h) reports unmaps that no
 * symbol hook sees (a raw system call), but only of ranges it watches: those
 * the shim's own cache registered. An MPI's registration cache registers the
 * program's own memory with verbs itself (UCX through ibv_reg_mr_iova2,
 * libfabric through ibv_reg_mr and ibv_reg_mr_iova2), so a raw munmap of such
 * memory went unreported and the stack's cache kept a registration of pages
 * that had left. The shim defines both (a preloaded definition wins every
 * caller's lookup; its own registrar reaches libibverbs through its dlopen
 * handle, never through these): each range registered while the monitor runs
 * is watched, and its unmap, however made, reaches the sinks and the taps
 * (stack_events.c, stack_ofi.c). Without the monitor they only pass the call
 * on. A watch is never dropped: the shim's cache may watch the same pages, and
 * a watch ends with the mapping anyway. */
#define _GNU_SOURCE
#include "internal.h"
#include "ufd_monitor.h"

#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <pthread.h>

#undef ibv_reg_mr

typedef struct ibv_mr* (*reg_mr_fn)(struct ibv_pd* pd, void* addr, size_t length, int access);
typedef struct ibv_mr* (*reg_mr_iova2_fn)(struct ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                                          unsigned int access);

static pthread_once_t watch_once = PTHREAD_ONCE_INIT;
static reg_mr_fn real_reg_mr;
static reg_mr_iova2_fn real_reg_mr_iova2;

/* libibverbs' own: the caller has it loaded (it holds a PD). The symbol versions are those of the calls'
 * current ABI (ibv_reg_mr 1.1, ibv_reg_mr_iova2 1.8). */
static void watch_bind(void) {
  void* h = dlopen("libibverbs.so.1", RTLD_LAZY | RTLD_NOLOAD);
  void* from = h != NULL ? h : RTLD_NEXT;
  real_reg_mr = (reg_mr_fn)dlvsym(from, "ibv_reg_mr", "IBVERBS_1.1");
  real_reg_mr_iova2 = (reg_mr_iova2_fn)dlvsym(from, "ibv_reg_mr_iova2", "IBVERBS_1.8");
}

/* A range a stack registered (or subscribed, stack_ofi.c) is watched while the
 * monitor runs. EINVAL (a file mapping) / EBUSY (the program's own
 * userfaultfd): the symbol hooks still report it. */
PA_HIDDEN void pa_stack_watch(const void* addr, size_t length) {
  if (length != 0 && pa_ufd_active()) (void)pa_ufd_watch(addr, length);
}

static void watch(const struct ibv_mr* mr, void* addr, size_t length) {
  if (mr != NULL) pa_stack_watch(addr, length);
}

PA_EXPORT struct ibv_mr* ibv_reg_mr(struct ibv_pd* pd, void* addr, size_t length, int access) {
  pthread_once(&watch_once, watch_bind);
  if (real_reg_mr == NULL) { errno = ENOSYS; return NULL; }
  struct ibv_mr* mr = real_reg_mr(pd, addr, length, access);
  watch(mr, addr, length);
  return mr;
}

PA_EXPORT struct ibv_mr* ibv_reg_mr_iova2(struct ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                                          unsigned int access) {
  pthread_once(&watch_once, watch_bind);
  if (real_reg_mr_iova2 == NULL) { errno = ENOSYS; return NULL; }
  struct ibv_mr* mr = real_reg_mr_iova2(pd, addr, length, iova, access);
  watch(mr, addr, length);
  return mr;
}

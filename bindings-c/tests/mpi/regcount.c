/* regcount.c — a preload library that counts the memory registrations a process makes (ibv_reg_mr and its
 * iova variants) and drops (ibv_dereg_mr), whatever library makes them: libfabric's and UCX's registration
 * caches call these for every miss and every invalidation or eviction.
 *
 *   LD_PRELOAD=libpinarena-regcount.so[:libpinarena.so] PROGRAM
 *
 * A program reads the counts at any moment through regcount_read (found with dlsym, so it runs without this
 * library too). The shim's own chunk registrations are not counted: it calls libibverbs through a dlopen
 * handle, never through the global scope this library interposes on.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <stdint.h>

#include "regcount.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

static uint64_t regs, reg_bytes, deregs;

/* The real function. RTLD_NEXT finds it when libibverbs is in the global scope; a library dlopen'ed
 * without RTLD_GLOBAL (UCX's transports, the shim's registrar) is not, so ask libibverbs itself. */
static void* real(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f) return f;
  void* verbs = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
  return verbs ? dlsym(verbs, name) : NULL;
}

static void count_reg(const struct ibv_mr* mr, size_t length) {
  if (!mr) return;
  __atomic_add_fetch(&regs, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&reg_bytes, length, __ATOMIC_RELAXED);
}

__attribute__((visibility("default"))) struct ibv_mr* ibv_reg_mr(struct ibv_pd* pd, void* addr, size_t length,
                                                                 int access) {
  static struct ibv_mr* (*next)(struct ibv_pd*, void*, size_t, int);
  if (!next) next = (struct ibv_mr * (*)(struct ibv_pd*, void*, size_t, int)) real("ibv_reg_mr");
  struct ibv_mr* mr = next(pd, addr, length, access);
  count_reg(mr, length);
  return mr;
}

__attribute__((visibility("default"))) struct ibv_mr* ibv_reg_mr_iova(struct ibv_pd* pd, void* addr, size_t length,
                                                                      uint64_t iova, int access) {
  static struct ibv_mr* (*next)(struct ibv_pd*, void*, size_t, uint64_t, int);
  if (!next)
    next = (struct ibv_mr * (*)(struct ibv_pd*, void*, size_t, uint64_t, int)) real("ibv_reg_mr_iova");
  struct ibv_mr* mr = next(pd, addr, length, iova, access);
  count_reg(mr, length);
  return mr;
}

__attribute__((visibility("default"))) struct ibv_mr* ibv_reg_mr_iova2(struct ibv_pd* pd, void* addr, size_t length,
                                                                       uint64_t iova, unsigned int access) {
  static struct ibv_mr* (*next)(struct ibv_pd*, void*, size_t, uint64_t, unsigned int);
  if (!next)
    next = (struct ibv_mr * (*)(struct ibv_pd*, void*, size_t, uint64_t, unsigned int)) real("ibv_reg_mr_iova2");
  struct ibv_mr* mr = next(pd, addr, length, iova, access);
  count_reg(mr, length);
  return mr;
}

__attribute__((visibility("default"))) int ibv_dereg_mr(struct ibv_mr* mr) {
  static int (*next)(struct ibv_mr*);
  if (!next) next = (int (*)(struct ibv_mr*))real("ibv_dereg_mr");
  int rc = next(mr);
  if (rc == 0) __atomic_add_fetch(&deregs, 1, __ATOMIC_RELAXED);
  return rc;
}

__attribute__((visibility("default"))) void regcount_read(struct regcount* out) {
  out->regs = __atomic_load_n(&regs, __ATOMIC_RELAXED);
  out->reg_bytes = __atomic_load_n(&reg_bytes, __ATOMIC_RELAXED);
  out->deregs = __atomic_load_n(&deregs, __ATOMIC_RELAXED);
}

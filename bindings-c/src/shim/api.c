/* api.c — include/pinarena.h: registration lookup, PD, release callback,
 * trim (the stats: stats.c). */
#include "internal.h"
#include "../../include/pinarena.h"

#include <errno.h>
#include <string.h>

PA_EXPORT int pinarena_lookup(const void* p, size_t len, pinarena_region_t* out) {
  pa_chunk_t* c = pa_chunk_of(p);
  if (c == NULL) return pa_remote_lookup(p, len, out);     /* a remote-scope buffer, or not ours */
  if (c->magic != PA_CHUNK_MAGIC) return -ENOENT;
  size_t off = (size_t)((uintptr_t)p - (uintptr_t)c);
  /* the range a registration may cover: the whole regular chunk; a huge
     chunk's object, page-rounded (the reserved room above it is nobody's) */
  size_t limit = (size_t)1 << c->shift;
  if (c->kind == PA_CHUNK_HUGE) {
    if (atomic_load_explicit((_Atomic(void*)*)&c->huge_obj, memory_order_acquire) == NULL) return -ENOENT;
    limit = pa_huge_extent(c);
    if (off >= limit) return -ENOENT;
  }
  if (len > limit - off) return -ERANGE;
  /* acquire: pairs with the release store that published the record */
  pa_regrec_t* r = atomic_load_explicit(&c->reg, memory_order_acquire);
  /* not registered: the first lookup (lazy), past a huge object's record, or
     refused before by a cause that may have passed since (register.c) */
  if ((r == NULL || r->len < off + len) && (!c->unregistered || pa_register_retry_may_help(c))) {
    pa_ensure_init();
    pa_register_cover(c, off + len);
    r = atomic_load_explicit(&c->reg, memory_order_acquire);
  }
  out->base = c;
  if (r == NULL || r->len < off + len) {
    out->length = r != NULL ? r->len : limit;
    out->lkey = out->rkey = 0;
    out->registered = 0;
    out->backend = PINARENA_BACKEND_NONE;
    return -ENODATA;
  }
  out->length = r->len;
  out->lkey = r->lkey;
  /* heap memory is registered for local access only (register.c): no key to give a peer */
  out->rkey = r->backend != PA_REG_VERBS || pa_register_heap_remote() ? r->rkey : PINARENA_RKEY_NONE;
  out->registered = 1;
  out->backend = r->backend == PA_REG_VERBS ? PINARENA_BACKEND_VERBS
               : r->backend == PA_REG_URING ? PINARENA_BACKEND_IO_URING
               : PINARENA_BACKEND_MLOCK;
  return 0;
}

PA_EXPORT void* pinarena_pd(void) {
  pa_ensure_init();
  return pa_register_pd();
}

PA_EXPORT int pinarena_set_pd(void* pd) {
  pa_ensure_init();
  return pa_register_set_pd(pd);
}

PA_EXPORT void pinarena_set_release_callback(pinarena_release_fn fn, void* arg) {
  pa_release_arg = arg;
  pa_release_cb = fn;
}

PA_EXPORT size_t pinarena_trim(void) {
  pa_ensure_init();
  pa_heap_give_back();               /* this thread's empty spans first: they may be all a chunk holds */
  pa_heap_give_back_abandoned();     /* and dead threads' heaps: what was freed into them, their warm spans */
  size_t heap = pa_trim_chunks();
  return heap + pa_remote_trim();
}

PA_EXPORT const char* pinarena_registrar(void) { pa_register_check(); return pa_registrar_name(); }

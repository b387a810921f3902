/* api.c — include/pinarena.h: registration lookup, PD, release callback,
 * trim, stats. */
#include "internal.h"
#include "../../include/pinarena.h"

#include <errno.h>
#include <string.h>

typedef void (*pa_release_fn)(void* base, size_t len, void* arg);
extern PA_HIDDEN pa_release_fn pa_release_cb;
extern PA_HIDDEN void* pa_release_arg;

PA_API int pinarena_lookup(const void* p, size_t len, pinarena_region_t* out) {
  pa_chunk* c = pa_chunk_of(p);
  if (c == NULL || c->magic != PA_CHUNK_MAGIC) return -ENOENT;
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
  if ((r == NULL || r->len < off + len) && !c->unregistered) {
    pa_ensure_init();
    pa_register_cover(c, off + len);     /* first lookup (lazy), or past a huge object's record */
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
  out->rkey = r->rkey;
  out->registered = 1;
  out->backend = r->backend == PA_REG_VERBS ? PINARENA_BACKEND_VERBS
               : r->backend == PA_REG_URING ? PINARENA_BACKEND_IO_URING
               : PINARENA_BACKEND_MLOCK;
  return 0;
}

PA_API void* pinarena_pd(void) {
  pa_ensure_init();
  return pa_register_pd();
}

PA_API int pinarena_set_pd(void* pd) {
  pa_ensure_init();
  return pa_register_set_pd(pd);
}

PA_API void pinarena_set_release_callback(pinarena_release_fn fn, void* arg) {
  pa_release_arg = arg;
  pa_release_cb = fn;
}

PA_API size_t pinarena_trim(void) {
  pa_ensure_init();
  pa_heap_give_back();               /* this thread's empty spans first: they may be all a chunk holds */
  return pa_trim_chunks();
}

PA_API int pinarena_get_stats(pinarena_stats_t* s) {
  memset(s, 0, sizeof(*s));
  pa_small_counts(&s->small_mallocs, &s->small_frees, &s->remote_frees);
  s->large_allocs = atomic_load(&pa_gstats.large_allocs);
  s->huge_allocs = atomic_load(&pa_gstats.huge_allocs);
  s->chunks = atomic_load(&pa_gstats.chunks);
  s->chunk_bytes = atomic_load(&pa_gstats.chunk_bytes);
  s->huge_chunks = atomic_load(&pa_gstats.huge_chunks);
  s->huge_bytes = atomic_load(&pa_gstats.huge_bytes);
  s->registered_chunks = atomic_load(&pa_gstats.reg_chunks);
  s->registered_bytes = atomic_load(&pa_gstats.reg_bytes);
  s->unregistered_chunks = atomic_load(&pa_gstats.unreg_chunks);
  s->unregistered_bytes = atomic_load(&pa_gstats.unreg_bytes);
  s->released_bytes = atomic_load(&pa_gstats.released_bytes);
  const char* n = pa_registrar_name();
  size_t i = 0;
  for (; n[i] && i + 1 < sizeof(s->registrar); i++) s->registrar[i] = n[i];
  s->registrar[i] = 0;
  return 0;
}

PA_API void pinarena_write_stats(int fd) { pa_write_stats(fd); }

PA_API const char* pinarena_registrar(void) { return pa_registrar_name(); }

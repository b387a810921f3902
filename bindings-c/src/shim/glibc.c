/* glibc.c — the exported malloc family with glibc's semantics, and the
 * glibc-only entry points a preloaded allocator has to answer. */
#include "internal.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* realloc growth from here up moves an object into a span that can grow in place */
#define PA_REALLOC_SPAN_MIN ((size_t)32 << 10)
/* ... and from here up, a realloc'd block in the size classes gets half again the room */
#define PA_REALLOC_ROOM_MIN ((size_t)1 << 10)

static inline int is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }


PA_EXPORT void* calloc(size_t n, size_t m) {
  size_t t;
  if (__builtin_mul_overflow(n, m, &t)) { errno = ENOMEM; return NULL; }
  void* p = pa_malloc(t);
  if (p == NULL) return NULL;
  if (t > PA_SMALL_MAX) {
    /* A huge chunk's pages above what it ever handed out were never
       touched: still zero. Below, only the pages that were populated need
       zeroing: a zeroed array costs what the program writes, not its size. */
    pa_chunk_t* c = pa_chunk_of(p);
    if (c->kind == PA_CHUNK_HUGE) {
      size_t off = (size_t)((char*)p - (char*)c);
      size_t dirty = c->huge_clean > off ? c->huge_clean - off : 0;
      pa_os_zero_touched(p, dirty < t ? dirty : t);
      return p;
    }
  }
  memset(p, 0, t);
  return p;
}

PA_EXPORT void* realloc(void* p, size_t n) {
  if (p == NULL) return pa_malloc(n);
  if (n == 0) { pa_free(p); return NULL; }             /* glibc: free, return NULL */
  return pa_realloc_fast(p, n);                        /* free.c: in place, else pa_realloc_moving */
}

PA_HIDDEN PA_NOINLINE void* pa_realloc_moving(void* p, size_t n) {
  size_t have = pa_usable_size(p, "realloc");          /* validates p (aborts on a bad pointer) */
  if (n > (size_t)PTRDIFF_MAX) { errno = ENOMEM; return NULL; }
  pa_chunk_t* c = pa_chunk_of(p);
  if (c->kind == PA_CHUNK_HUGE) {
    /* in place within the chunk's capacity, both ways (a shrunk huge object
       keeps its pages: touched pages are never given back anyway) */
    if (n > pa_large_max() && pa_huge_resize(c, n) == 0) return p;
    if (n > have) {
      void* q = pa_huge_move(c, n);                  /* its pages, not a copy */
      if (q != NULL) { pa_huge_resize(pa_chunk_of(q), n); return q; }
    }
  } else if (n > have && n <= pa_large_max()) {
    /* a large span grows in place into the free slices after it */
    pa_span_t* s = pa_span_of(c, p);
    if (s->kind == PA_SPAN_LARGE) {
      size_t ns = ((size_t)((char*)p - s->start) + n + PA_SLICE - 1) >> PA_SLICE_SHIFT;
      if (pa_span_grow(s, ns) == 0) return p;
    }
  }
  if (n <= have && n >= have / 2) return p;            /* fits, not worth moving */
  /* Growing past PA_REALLOC_SPAN_MIN: into a span of its own (slices, or a
     huge chunk with room), which the next growth extends in place, instead
     of a size class it would leave again at the next 12.5 % step. */
  void* q;
  if (n > have && n >= PA_REALLOC_SPAN_MIN && c->kind != PA_CHUNK_HUGE) q = pa_malloc_moving_up(n);
  else if (n > have && n >= PA_REALLOC_ROOM_MIN) {
    /* growing in the size classes: a block with half again the room, so a
       string grown in small steps moves every 50 %, not at every 12.5 % class */
    q = pa_malloc(n + n / 2 < PA_REALLOC_SPAN_MIN ? n + n / 2 : n);
  } else q = pa_malloc(n);
  if (q == NULL) return NULL;                          /* p untouched */
  memcpy(q, p, n < have ? n : have);
  pa_free(p);
  return q;
}

PA_EXPORT void* reallocarray(void* p, size_t n, size_t m) {
  size_t t;
  if (__builtin_mul_overflow(n, m, &t)) { errno = ENOMEM; return NULL; }
  return realloc(p, t);
}

/* glibc memalign: alignment <= 16 is malloc; not a power of two is rounded
 * up to one; above SIZE_MAX/2 + 1 is EINVAL. aligned_alloc is the same in
 * glibc 2.36. */
PA_EXPORT void* memalign(size_t align, size_t n) {
  if (align <= PA_ALIGN_MIN) return pa_malloc(n);
  if (align > SIZE_MAX / 2 + 1) { errno = EINVAL; return NULL; }
  if (!is_pow2(align)) align = (size_t)1 << (64 - __builtin_clzl(align));
  return pa_malloc_aligned(n, align);
}

PA_EXPORT void* aligned_alloc(size_t align, size_t n) { return memalign(align, n); }

PA_EXPORT int posix_memalign(void** out, size_t align, size_t n) {
  if (align % sizeof(void*) != 0 || !is_pow2(align)) return EINVAL;
  int saved = errno;
  void* p = align <= PA_ALIGN_MIN ? pa_malloc(n) : pa_malloc_aligned(n, align);
  if (p == NULL) { errno = saved; return ENOMEM; }
  *out = p;
  return 0;
}

PA_EXPORT void* valloc(size_t n) { return memalign(PA_PAGE, n); }

PA_EXPORT void* pvalloc(size_t n) {
  size_t r;
  if (__builtin_add_overflow(n, PA_PAGE - 1, &r)) { errno = ENOMEM; return NULL; }
  r &= ~(PA_PAGE - 1);
  return memalign(PA_PAGE, r == 0 ? PA_PAGE : r);
}

PA_EXPORT size_t malloc_usable_size(void* p) { return p == NULL ? 0 : pa_usable_size(p, "malloc_usable_size"); }

PA_EXPORT void cfree(void* p) { pa_free(p); }
PA_EXPORT void free_sized(void* p, size_t n) { (void)n; pa_free(p); }
PA_EXPORT void free_aligned_sized(void* p, size_t a, size_t n) { (void)a; (void)n; pa_free(p); }

/* ---------------------------------------------------------------------------
   glibc-only entry points
--------------------------------------------------------------------------- */

/* Tunables of ptmalloc mean nothing here; accept them (glibc returns 1). */
PA_EXPORT int mallopt(int param, int value) { (void)param; (void)value; return 1; }

/* Registered chunks are never given back by malloc_trim (only pinarena_trim
 * releases, after the release callback). 0 = nothing released. */
PA_EXPORT int malloc_trim(size_t pad) { (void)pad; return 0; }

static void fill_info(size_t* arena, size_t* hblks, size_t* hblkhd, size_t* used, size_t* freeb) {
  size_t free_bytes = 0;
  pthread_mutex_lock(&pa_chunk_lock);
  for (pa_chunk_t* c = pa_chunks; c != NULL; c = c->next) free_bytes += (size_t)c->free_slices << PA_SLICE_SHIFT;
  pthread_mutex_unlock(&pa_chunk_lock);
  *arena = atomic_load(&pa_gstats.chunk_bytes);
  *hblks = atomic_load(&pa_gstats.huge_chunks);
  *hblkhd = atomic_load(&pa_gstats.huge_bytes);
  *freeb = free_bytes;
  *used = *arena - free_bytes;
}

PA_EXPORT struct mallinfo2 mallinfo2(void) {
  struct mallinfo2 m;
  memset(&m, 0, sizeof(m));
  size_t a, hb, hh, u, f;
  fill_info(&a, &hb, &hh, &u, &f);
  m.arena = a; m.hblks = hb; m.hblkhd = hh; m.uordblks = u; m.fordblks = f; m.keepcost = 0;
  return m;
}

PA_EXPORT struct mallinfo mallinfo(void) {
  struct mallinfo m;
  memset(&m, 0, sizeof(m));
  size_t a, hb, hh, u, f;
  fill_info(&a, &hb, &hh, &u, &f);
  m.arena = (int)a; m.hblks = (int)hb; m.hblkhd = (int)hh; m.uordblks = (int)u; m.fordblks = (int)f;
  return m;
}

PA_EXPORT void malloc_stats(void) { pa_write_stats(2); }

PA_EXPORT int malloc_info(int options, FILE* fp) {
  if (options != 0) { errno = EINVAL; return -1; }
  size_t a, hb, hh, u, f;
  fill_info(&a, &hb, &hh, &u, &f);
  fprintf(fp, "<malloc version=\"pinarena-1\">\n<system type=\"current\" size=\"%zu\"/>\n"
              "<total type=\"mmap\" count=\"%zu\" size=\"%zu\"/>\n<registrar name=\"%s\"/>\n</malloc>\n",
          a + hh, hb, hh, pa_registrar_name());
  return 0;
}

/* Internal glibc names some programs call directly. */
PA_EXPORT void* __libc_malloc(size_t n) { return pa_malloc(n); }
PA_EXPORT void  __libc_free(void* p) { pa_free(p); }
PA_EXPORT void* __libc_calloc(size_t n, size_t m) { return calloc(n, m); }
PA_EXPORT void* __libc_realloc(void* p, size_t n) { return realloc(p, n); }
PA_EXPORT void* __libc_memalign(size_t a, size_t n) { return memalign(a, n); }
PA_EXPORT void* __libc_valloc(size_t n) { return valloc(n); }
PA_EXPORT void* __libc_pvalloc(size_t n) { return pvalloc(n); }
PA_EXPORT int   __posix_memalign(void** o, size_t a, size_t n) { return posix_memalign(o, a, n); }

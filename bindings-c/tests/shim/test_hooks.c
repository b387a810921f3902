/* test_hooks.c — the memory hooks inside libpinarena.so: this runner links the
 * shim, so its munmap & co. are the shim's, and a C registration cache
 * (regcache.h, bound to the shim's exported copy — see the Makefile's link
 * order) must see every unmap. Each check sends through the cached region
 * with io_uring WRITE_FIXED: the bytes of the pages the kernel pinned. */
#define _GNU_SOURCE
#include "child.h"
#include "sent_bytes.h"
#include "regcache/wire.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/syscall.h>

#define LEN (1 * PA_MiB)

static int in_shim(void* fn) {
  Dl_info i;
  return dladdr(fn, &i) != 0 && i.dli_fname != NULL && strstr(i.dli_fname, "libpinarena.so") != NULL;
}

TEST(hooks_shim_is_the_interposer_and_owns_the_sinks) {
  CHECK(pa_memhooks_interposing(), "munmap in this process is not the shim's hook");
  CHECK(in_shim(dlsym(RTLD_DEFAULT, "munmap")), "munmap resolves outside libpinarena.so");
  CHECK(in_shim((void*)&pa_iv_post) && in_shim((void*)&pa_rc_get) && in_shim((void*)&pa_rc_init),
        "the sink table / cache are a private copy, not libpinarena.so's");
  CHECK(!strcmp(pinarena_cache_sources(), "hooks"), "sources %s", pinarena_cache_sources());
}

TEST(hooks_shim_munmap_then_new_pages_at_same_address) {
  rcw_t* t = rcw_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  rcw_expect(t, p, LEN, "first");
  CHECK(munmap(p, LEN) == 0, "munmap");
  /* raw: only the munmap hook may have told the cache */
  char* q = (char*)syscall(SYS_mmap, p, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  CHECK(q == p, "remap");
  memset(q, 'B', LEN);
  rcw_expect(t, q, LEN, "same address, new pages");
  pa_rc_stats_t s = rcw_stats(t);
  CHECK(s.misses == 2 && s.invalidations == 1, "misses %llu invalidations %llu",
        (unsigned long long)s.misses, (unsigned long long)s.invalidations);
}

TEST(hooks_shim_madvise_dontneed) {
  rcw_t* t = rcw_open(NULL);
  char* p = map_at(NULL, LEN, 'A');
  rcw_expect(t, p, LEN, "first");
  CHECK(madvise(p, LEN, MADV_DONTNEED) == 0, "madvise");
  memset(p, 'Z', LEN);
  rcw_expect(t, p, LEN, "after DONTNEED");
  CHECK(rcw_stats(t).invalidations == 1, "one invalidation");
}

TEST(hooks_shim_mremap_shrink_and_move) {
  rcw_t* t = rcw_open(NULL);
  char* p = map_at(NULL, 4 * PG, 'A');
  rcw_expect(t, p, 4 * PG, "first");
  CHECK(mremap(p, 4 * PG, 2 * PG, 0) == p, "mremap shrink");
  char* tail = (char*)syscall(SYS_mmap, p + 2 * PG, 2 * PG, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  CHECK(tail == p + 2 * PG, "raw remap of the tail");
  memset(tail, 'T', 2 * PG);
  rcw_expect(t, tail, 2 * PG, "old tail, new pages");
  char* dst = map_at(NULL, 2 * PG, 'x');
  CHECK(mremap(p, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst) == dst, "mremap move");
  CHECK(syscall(SYS_mmap, p, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == (long)p,
        "raw remap of the old address");
  memset(p, 'N', 2 * PG);
  rcw_expect(t, p, 2 * PG, "old address after the move");
  rcw_expect(t, dst, 2 * PG, "moved pages at their new address");
}

TEST(hooks_shim_brk_shrink) {
  rcw_t* t = rcw_open(NULL);
  char* base = sbrk(0);
  char* top = (char*)(((uintptr_t)base + PG - 1) & ~(PG - 1));
  CHECK(brk(top + LEN) == 0, "brk grow");
  memset(top, 'A', LEN);
  rcw_expect(t, top, LEN, "heap");
  CHECK(brk(top) == 0, "brk shrink");
  CHECK(brk(top + LEN) == 0, "brk grow again");
  memset(top, 'C', LEN);
  rcw_expect(t, top, LEN, "after brk shrink + grow");
  CHECK(rcw_stats(t).invalidations == 1, "one invalidation");
}

/* The shim's own release of memory it handed out (pinarena_trim unmaps a
 * wholly free chunk) posts too: a cache that registered a malloc'd buffer
 * must not keep the old pages once the chunk is gone. */
TEST(hooks_shim_trim_posts_the_released_chunk) {
  rcw_t* t = rcw_open(NULL);
  size_t n = 16 * PA_MiB;                                  /* a dedicated (huge) chunk */
  char* a = malloc(n);
  CHECK(a != NULL, "malloc");
  memset(a, 'A', LEN);
  rcw_expect(t, a, LEN, "malloc'd buffer in a C cache");
  free(a);
  CHECK(pinarena_trim() >= n, "trim released the chunk");
  char* q = (char*)syscall(SYS_mmap, a, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  CHECK(q == a, "raw remap");
  memset(q, 'N', LEN);
  rcw_expect(t, q, LEN, "after pinarena_trim");
  CHECK(rcw_stats(t).invalidations == 1, "one invalidation");
  syscall(SYS_munmap, q, LEN);
}

/* pinarena.h's cache (the same cache behind an opaque handle), over the wire's io_uring binding. */
static int pc_reg(void* ctx, uintptr_t a, size_t len, int access, uint64_t* h, uint32_t* lk, uint32_t* rk) {
  return rcw_binding_reg(ctx, a, len, access, h, lk, rk);
}
static int pc_dereg(void* ctx, uintptr_t a, size_t len, uint64_t h) { return rcw_binding_dereg(ctx, a, len, h); }

TEST(hooks_shim_pinarena_cache_api_sees_munmap) {
  rcw_t* t = rcw_open(NULL);                               /* its binding and wire only */
  pinarena_cache_ops_t ops = { t, pc_reg, pc_dereg };
  pinarena_cache_t* c = NULL;
  CHECK_OK("pinarena_cache_open", pinarena_cache_open(&ops, 0, 0, 0, &c));
  char* p = map_at(NULL, LEN, 'A');
  const pinarena_cache_region_t* r = NULL;
  CHECK_OK("get", pinarena_cache_get(c, p, LEN, 1, &r));
  CHECK(r->addr <= (uintptr_t)p && r->addr + r->length >= (uintptr_t)p + LEN, "contains");
  pinarena_cache_put(c, r);
  CHECK_OK("hit", pinarena_cache_get(c, p + PG, PG, 1, &r));
  pinarena_cache_put(c, r);
  CHECK(munmap(p, LEN) == 0, "munmap");
  CHECK(syscall(SYS_mmap, p, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == (long)p,
        "raw remap");
  memset(p, 'B', LEN);
  CHECK_OK("get after munmap", pinarena_cache_get(c, p, LEN, 1, &r));
  pa_rc_region_t sent = { .addr = r->addr, .len = r->length, .lkey = r->lkey, .handle = r->handle };
  size_t good = rcw_send(t, &sent, p, LEN);
  pinarena_cache_put(c, r);
  pinarena_cache_stats_t s;
  pinarena_cache_stats(c, &s);
  CHECK(good == LEN, "the send carried %zu of %zu current bytes (stale registration)", good, (size_t)LEN);
  CHECK(s.gets == 3 && s.hits == 1 && s.misses == 2 && s.invalidations == 1,
        "gets %llu hits %llu misses %llu invalidations %llu", (unsigned long long)s.gets,
        (unsigned long long)s.hits, (unsigned long long)s.misses, (unsigned long long)s.invalidations);
  pinarena_cache_close(c);
}

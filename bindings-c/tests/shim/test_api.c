/* test_api.c — the malloc family's semantics through libpinarena.so (this
 * test binary links it, so every allocation below is the shim's). */
#include "child.h"
#include "kernel_view.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void owned(const void* p) {
  pinarena_region_t r;
  int rc = pinarena_lookup(p, 1, &r);
  CHECK(rc == 0 || rc == -ENODATA, "pointer %p is not the shim's (lookup %d)", p, rc);
}

TEST(shim_malloc_sizes_alignment_usable) {
  static const size_t sizes[] = { 0, 1, 8, 15, 16, 17, 100, 128, 129, 1000, 4096, 8191, 65536, 200000,
                                  262144, 262145, 1 << 20, 3 << 20, 16 << 20 };
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    size_t n = sizes[i];
    unsigned char* p = malloc(n);
    CHECK(p != NULL, "malloc(%zu)", n);
    CHECK(((uintptr_t)p & 15) == 0, "malloc(%zu) = %p not 16-aligned", n, (void*)p);
    size_t u = malloc_usable_size(p);
    CHECK(u >= n && u >= 16, "usable %zu < %zu", u, n);
    memset(p, 0xab, u);
    owned(p);
    free(p);
  }
  void* a = malloc(0), *b = malloc(0);
  CHECK(a && b && a != b, "malloc(0) must give distinct pointers");
  free(a); free(b);
  CHECK(malloc_usable_size(NULL) == 0, "usable(NULL)");
  free(NULL);
}

TEST(shim_size_classes_spacing) {
  /* usable size of each request is at most 12.5 % above it beyond 128 B */
  for (size_t n = 129; n <= 262144; n += 7) {
    void* p = malloc(n);
    size_t u = malloc_usable_size(p);
    CHECK(u >= n && (double)u <= (double)n * 1.125 + 16, "n=%zu usable=%zu", n, u);
    free(p);
  }
}

TEST(shim_calloc_zero_and_overflow) {
  for (int r = 0; r < 3; r++) {              /* reuse dirty blocks: calloc must zero them */
    unsigned char* d = malloc(4000);
    memset(d, 0x5a, 4000);
    free(d);
    unsigned char* c = calloc(1000, 4);
    CHECK(c != NULL, "calloc");
    for (size_t i = 0; i < 4000; i++) CHECK(c[i] == 0, "calloc byte %zu = %u", i, c[i]);
    free(c);
  }
  errno = 0;
  CHECK(calloc(SIZE_MAX / 2, 3) == NULL && errno == ENOMEM, "calloc overflow: errno %d", errno);
  errno = 0;
  CHECK(calloc((size_t)1 << 32, (size_t)1 << 32) == NULL && errno == ENOMEM, "calloc overflow 2^64");
  void* z = calloc(0, 10);
  CHECK(z != NULL, "calloc(0, n)");
  free(z);
}

TEST(shim_errno_left_alone_on_success) {
  void* keep[64];
  for (int i = 0; i < 64; i++) {
    errno = 4242;
    keep[i] = malloc((size_t)(i + 1) * 131072);   /* new spans, new chunks, huge chunks */
    CHECK(keep[i] != NULL && errno == 4242, "errno changed to %d on success", errno);
  }
  for (int i = 0; i < 64; i++) { errno = 4242; free(keep[i]); CHECK(errno == 4242, "free changed errno"); }
  errno = 4242;
  void* p = NULL;
  CHECK(posix_memalign(&p, 4096, 100) == 0 && errno == 4242, "posix_memalign errno");
  free(p);
}

TEST(shim_over_ptrdiff_max_fails) {
  errno = 0;
  CHECK(malloc((size_t)PTRDIFF_MAX + 1) == NULL && errno == ENOMEM, "malloc > PTRDIFF_MAX");
  errno = 0;
  CHECK(malloc(SIZE_MAX) == NULL && errno == ENOMEM, "malloc(SIZE_MAX)");
  char* p = malloc(10);
  strcpy(p, "keepme");
  errno = 0;
  CHECK(realloc(p, (size_t)PTRDIFF_MAX + 1) == NULL && errno == ENOMEM, "realloc > PTRDIFF_MAX");
  CHECK(strcmp(p, "keepme") == 0, "realloc failure must keep the block");
  free(p);
  void* q = (void*)1;
  CHECK(posix_memalign(&q, 64, SIZE_MAX) == ENOMEM && q == (void*)1, "posix_memalign huge");
  errno = 0;
  CHECK(aligned_alloc(64, SIZE_MAX) == NULL && errno == ENOMEM, "aligned_alloc huge");
}

TEST(shim_realloc_semantics) {
  char* p = realloc(NULL, 10);                       /* NULL: malloc */
  CHECK(p != NULL, "realloc(NULL)");
  strcpy(p, "abcdefghi");
  errno = 77;
  CHECK(realloc(p, 0) == NULL && errno == 77, "realloc(p, 0) frees and returns NULL (glibc)");
  unsigned char* q = NULL;
  size_t n = 1;
  for (int i = 0; i < 26; i++) {                     /* grow from 1 B to 64 MiB, content kept */
    unsigned char* r = realloc(q, n * 2);
    CHECK(r != NULL, "realloc to %zu", n * 2);
    for (size_t k = 0; k < n && i > 0; k += 997) CHECK(r[k] == (unsigned char)(k * 7), "byte %zu lost at %zu", k, n * 2);
    for (size_t k = n / 2; k < n * 2; k++) r[k] = (unsigned char)(k * 7);
    if (i == 0) r[0] = 0;
    q = r; n *= 2;
  }
  unsigned char* s = realloc(q, 100);                /* shrink */
  CHECK(s != NULL && s[99] == (unsigned char)(99 * 7) && s[1] == 7, "shrink keeps the head");
  free(s);
  /* large in place: a 300 KiB block grows into free slices after it */
  void* big = malloc(300 << 10);
  void* big2 = realloc(big, 600 << 10);
  NOTE("large realloc 300K -> 600K: %s", big2 == big ? "in place" : "moved");
  free(big2);
}

TEST(shim_reallocarray) {
  errno = 0;
  CHECK(reallocarray(NULL, SIZE_MAX / 2, 4) == NULL && errno == ENOMEM, "overflow");
  int* a = reallocarray(NULL, 100, sizeof(int));
  for (int i = 0; i < 100; i++) a[i] = i;
  a = reallocarray(a, 1000, sizeof(int));
  CHECK(a[99] == 99, "content");
  free(a);
}

TEST(shim_aligned_family) {
  void* p = (void*)1;
  CHECK(posix_memalign(&p, 0, 8) == EINVAL && p == (void*)1, "align 0");
  CHECK(posix_memalign(&p, 3, 8) == EINVAL, "align 3");
  CHECK(posix_memalign(&p, 24, 8) == EINVAL, "align 24");
  CHECK(posix_memalign(&p, 4, 8) == EINVAL, "align 4 < sizeof(void*)");
  for (size_t a = 8; a <= ((size_t)8 << 20); a <<= 1) {
    static const size_t ns[] = { 1, 24, 100, 5000, 70000, 300000, 5 << 20 };
    for (size_t i = 0; i < 7; i++) {
      CHECK(posix_memalign(&p, a, ns[i]) == 0, "posix_memalign(%zu, %zu)", a, ns[i]);
      CHECK(((uintptr_t)p & (a - 1)) == 0, "posix_memalign(%zu, %zu) = %p", a, ns[i], p);
      CHECK(malloc_usable_size(p) >= ns[i], "usable");
      memset(p, 1, ns[i]);
      free(p);
      void* m = memalign(a, ns[i]);
      CHECK(m && ((uintptr_t)m & (a - 1)) == 0, "memalign(%zu)", a);
      free(m);
      void* q = aligned_alloc(a, ns[i]);
      CHECK(q && ((uintptr_t)q & (a - 1)) == 0, "aligned_alloc(%zu)", a);
      free(q);
    }
  }
  void* m = memalign(48, 10);                         /* glibc: not a power of two -> next one */
  CHECK(m && ((uintptr_t)m & 63) == 0, "memalign(48) rounds to 64");
  free(m);
  errno = 0;
  CHECK(memalign(SIZE_MAX / 2 + 2, 8) == NULL && errno == EINVAL, "memalign absurd alignment");
  long pg = sysconf(_SC_PAGESIZE);
  void* v = valloc(10);
  CHECK(v && ((uintptr_t)v & (uintptr_t)(pg - 1)) == 0, "valloc");
  free(v);
  void* pv = pvalloc(0);
  CHECK(pv && ((uintptr_t)pv & (uintptr_t)(pg - 1)) == 0 && malloc_usable_size(pv) >= (size_t)pg, "pvalloc(0)");
  free(pv);
  pv = pvalloc(5000);
  CHECK(pv && malloc_usable_size(pv) >= 8192, "pvalloc rounds up to pages");
  free(pv);
}

TEST(shim_glibc_extras) {
  CHECK(mallopt(M_MMAP_THRESHOLD, 1 << 20) == 1, "mallopt");
  CHECK(malloc_trim(0) == 0, "malloc_trim releases nothing");
  void* p = malloc(1000);
  struct mallinfo2 mi = mallinfo2();
  CHECK(mi.arena > 0 && mi.uordblks > 0, "mallinfo2 arena %zu", mi.arena);
  char* buf = NULL; size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  CHECK(malloc_info(0, f) == 0, "malloc_info");
  fclose(f);
  CHECK(strstr(buf, "pinarena") != NULL, "malloc_info: %s", buf);
  free(buf);
  free(p);
}

TEST(shim_lookup_registration) {
  void* ps[3] = { malloc(64), malloc(500 << 10), malloc(12 << 20) };
  for (int i = 0; i < 3; i++) {
    pinarena_region_t r;
    int rc = pinarena_lookup(ps[i], 64, &r);
    /* The runner forks each test: chunks inherited from the runner are the
       parent's registrations (unregistered here, -ENODATA); the huge chunk
       is mapped in this process and must be registered. */
    CHECK(rc == 0 || (rc == -ENODATA && i < 2), "lookup %p: %d", ps[i], rc);
    CHECK(rc != 0 || (r.registered == 1 && r.backend != PINARENA_BACKEND_NONE), "registered");
    CHECK(rc == 0 || r.registered == 0, "unregistered reported as such");
    CHECK((char*)ps[i] >= (char*)r.base && (char*)ps[i] + 64 <= (char*)r.base + r.length, "covers");
    CHECK(((uintptr_t)r.base & (r.length - 1)) == 0, "chunk aligned to its size");
    NOTE("%p: base %p len %zu lkey %u rkey %u backend %d (%s)", ps[i], r.base, r.length, r.lkey, r.rkey, r.backend, pinarena_registrar());
  }
  pinarena_region_t r;
  int local;
  CHECK(pinarena_lookup(&local, 4, &r) == -ENOENT, "stack is not ours");
  CHECK(pinarena_lookup(ps[0], (size_t)1 << 40, &r) == -ERANGE, "range leaving the chunk");
  pinarena_stats_t st;
  pinarena_get_stats(&st);
  CHECK(st.small_mallocs > 0 && st.registered_chunks > 0 && st.huge_allocs > 0, "stats");
  uint64_t pin = tu_status_kb("VmPin");
  NOTE("registrar %s: registered %llu bytes in %llu chunks; VmPin %llu kB", st.registrar,
       (unsigned long long)st.registered_bytes, (unsigned long long)st.registered_chunks, (unsigned long long)pin);
  if (strcmp(st.registrar, "io_uring") == 0) CHECK(pin * 1024 >= st.registered_bytes, "VmPin covers the chunks");
  for (int i = 0; i < 3; i++) free(ps[i]);
}

TEST(shim_same_address_same_frames) {
  /* free + malloc of the same size returns the same address, backed by the
     same physical frames: the registration can never go stale. */
  static const size_t sizes[] = { 64, 4096, 100000, 400 << 10, 8 << 20 };
  for (int i = 0; i < 5; i++) {
    size_t n = sizes[i];
    char* a = malloc(n);
    memset(a, 'A', n);
    uint64_t pa[4], pb[4];
    size_t np = n >= 16384 ? 4 : 1;
    tu_pfns(a, np, pa);
    uintptr_t old = (uintptr_t)a;
    free(a);
    char* b = malloc(n);
    memset(b, 'B', n);
    CHECK((uintptr_t)b == old, "size %zu: address changed %p -> %p", n, (void*)old, (void*)b);
    tu_pfns(b, np, pb);
    for (size_t k = 0; k < np; k++) CHECK(pa[k] == pb[k], "size %zu page %zu: frame %llx -> %llx", n, k,
                                          (unsigned long long)pa[k], (unsigned long long)pb[k]);
    NOTE("%zu B: %p frame %llx before and after free+malloc", n, b, (unsigned long long)pb[0]);
    free(b);
  }
}

static int released;
static void* released_base;
static void on_release(void* base, size_t len, void* arg) { (void)len; released++; released_base = base; *(int*)arg = 1; }

TEST(shim_trim_calls_release_callback) {
  int flag = 0;
  pinarena_set_release_callback(on_release, &flag);
  void* h = malloc(20 << 20);                         /* a huge chunk of its own */
  pinarena_region_t r;
  CHECK(pinarena_lookup(h, 1, &r) == 0, "lookup");
  free(h);
  CHECK(released == 0, "free alone must not release");
  size_t got = pinarena_trim();
  CHECK(got >= r.length && released >= 1 && flag == 1, "trim released %zu, callbacks %d", got, released);
  CHECK(pinarena_lookup(h, 1, &r) == -ENOENT, "released chunk is no longer ours");
  pinarena_stats_t st;
  pinarena_get_stats(&st);
  CHECK(st.released_bytes >= got, "stats released");
  NOTE("trim released %zu bytes, callback saw base %p", got, released_base);
  pinarena_set_release_callback(NULL, NULL);
}

/* A heap keeps a class's emptied spans while the class has few (no return
   and re-carve per fill/empty cycle); more go back to the chunk at once;
   pinarena_trim() gives the calling thread's empty ones back. In a thread
   of its own: a fresh heap, 48-byte blocks in no other span. */
enum { KEEP_BLOCKS = 65536 / 48 * 3, MANY_BLOCKS = 65536 / 48 * 14 };
static void* fill_empty_trim(void* arg) {
  size_t* used = arg;                          /* mallinfo2().uordblks at each step */
  static void* v[MANY_BLOCKS];
  size_t k = 0;
  used[k++] = mallinfo2().uordblks;
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < KEEP_BLOCKS; i++) v[i] = malloc(48);
    used[k++] = mallinfo2().uordblks;
    for (int i = 0; i < KEEP_BLOCKS; i++) free(v[i]);
    used[k++] = mallinfo2().uordblks;
  }
  for (int i = 0; i < MANY_BLOCKS; i++) v[i] = malloc(48);
  used[k++] = mallinfo2().uordblks;
  for (int i = 0; i < MANY_BLOCKS; i++) free(v[i]);
  used[k++] = mallinfo2().uordblks;
  pinarena_trim();
  used[k++] = mallinfo2().uordblks;
  return NULL;
}

TEST(shim_emptied_spans_kept_while_few_given_back_by_trim) {
  size_t u[8];
  pthread_t t;
  pthread_create(&t, NULL, fill_empty_trim, u);
  pthread_join(t, NULL);
  const size_t span = 65536;
  NOTE("bytes in use: start %zu, 3 spans %zu, emptied %zu, again %zu, emptied %zu, 14 spans %zu, emptied %zu, trimmed %zu",
       u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7]);
  CHECK(u[1] >= u[0] + 3 * span, "three spans taken: %zu -> %zu", u[0], u[1]);
  CHECK(u[2] == u[1], "emptied spans of a class with few are kept: %zu -> %zu", u[1], u[2]);
  CHECK(u[3] == u[2] && u[4] == u[3], "the second fill reuses them: %zu, %zu", u[3], u[4]);
  CHECK(u[6] + 5 * span <= u[5], "with many, emptied spans go back at once: %zu -> %zu", u[5], u[6]);
  CHECK(u[7] + 3 * span <= u[6], "trim gives the kept ones back: %zu -> %zu", u[6], u[7]);
}

TEST(shim_set_pd_needs_verbs) {
  if (!su_rdma_device_present()) {
    CHECK(pinarena_set_pd(NULL) == -EINVAL, "NULL pd");
    CHECK(pinarena_pd() == NULL, "no verbs registrar on this host");
    SKIP("no RDMA device on this host: PD adoption is exercised in the Soft-RoCE VM (tools/shim_probe verbs)");
  }
  CHECK(pinarena_set_pd(NULL) == -EINVAL, "NULL pd");
}

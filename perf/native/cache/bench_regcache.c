/* bench_regcache.c — registration cache hit and miss cost against raw io_uring
 * registration, in one run. Prints one line per figure and the ratios.
 *   hit:  pa_rc_get + pa_rc_put of a cached range (the whole fast path)
 *   miss: pa_rc_get + put + pa_rc_invalidate (register + deregister through the cache)
 *   raw:  pa_uring_register + pa_uring_unregister of the same range */
#define _GNU_SOURCE
#include "regcache.h"
#include "uring.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static pa_uring_t ring;
static pa_rc_t cache;

static int reg(void* ctx, uintptr_t a, size_t len, int acc, uint64_t* h, uint32_t* lk, uint32_t* rk) {
  (void)ctx; (void)acc;
  pa_uring_reg_t r;
  int rc = pa_uring_register(&ring, (void*)a, len, &r);
  if (rc) return rc;
  *h = (uint64_t)r.first | ((uint64_t)r.count << 32);
  *lk = *rk = r.first;
  return 0;
}
static int dereg(void* ctx, uintptr_t a, size_t len, uint64_t h) {
  (void)ctx;
  pa_uring_reg_t r = { a, len, (unsigned)h, (unsigned)(h >> 32) };
  return pa_uring_unregister(&ring, &r);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(void) {
  if (pa_uring_init(&ring, 8) != 0) { fprintf(stderr, "io_uring unavailable\n"); return 2; }
  pa_rc_ops_t ops = { NULL, reg, dereg };
  if (pa_rc_init(&cache, &ops, NULL) != 0) return 2;
  size_t sizes[] = { 4096, 65536, 1 << 20 };
  char* buf = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  /* 64 cached neighbours so the binary search is not trivial */
  for (int i = 0; i < 64; i++) {
    pa_rc_region_t* r;
    pa_rc_get(&cache, buf + (32 << 20) + (size_t)i * 8192, 4096, 1, &r);
    pa_rc_put(&cache, r);
  }
  printf("# regcache bench (io_uring backend, 64 other regions cached, sources: %s)\n", pa_rc_sources());
  printf("%-8s %12s %12s %12s %12s %12s\n", "size", "hit_ns", "miss_ns", "raw_reg_ns", "miss/raw", "raw/hit");
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    size_t len = sizes[k];
    pa_rc_region_t* r;
    pa_rc_get(&cache, buf, len, 1, &r);
    pa_rc_put(&cache, r);
    const int nh = 5000000;
    double best_hit = 1e18;
    for (int rep = 0; rep < 3; rep++) {
      double t0 = now();
      for (int i = 0; i < nh; i++) {
        pa_rc_get(&cache, buf + (i & 7) * 64, len - 512, 1, &r);
        pa_rc_put(&cache, r);
      }
      double d = (now() - t0) / nh;
      if (d < best_hit) best_hit = d;
    }
    const int nm = len >= (1 << 20) ? 300 : 2000;
    double t0 = now();
    for (int i = 0; i < nm; i++) {
      pa_rc_get(&cache, buf, len, 1, &r);
      pa_rc_put(&cache, r);
      pa_rc_invalidate(&cache, buf, len);
    }
    double miss = (now() - t0) / nm;
    t0 = now();
    for (int i = 0; i < nm; i++) {
      pa_uring_reg_t ur;
      pa_uring_register(&ring, buf, len, &ur);
      pa_uring_unregister(&ring, &ur);
    }
    double raw = (now() - t0) / nm;
    printf("%-8zu %12.1f %12.0f %12.0f %12.2f %12.0f\n", len, best_hit, miss, raw, miss / raw, raw / best_hit);
  }
  pa_rc_destroy(&cache);
  return 0;
}

/* stale_demo.c — part (b) of `pinarena demo` for native programs: the seed
 * scenario with plain malloc/free and an address-keyed registration cache,
 * where every "send" is an io_uring WRITE_FIXED through the cached
 * registration (the kernel sends the bytes of the pages it pinned, as an HCA
 * would DMA them).
 *
 *   pinarena-stale-demo                     glibc malloc: same address, new frames, OLD bytes go out
 *   LD_PRELOAD=libpinarena.so pinarena-stale-demo
 *                                           pinarena: same address, same frames, NEW bytes go out
 *
 * Exit: 0 new bytes sent; 1 stale bytes sent; 2 the address did not come
 * back (nothing shown); 3 setup error. */
#include "uring.h"
#include "pagemap.h"
#include "diag.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF   ((size_t)32 << 20)     /* glibc serves this with mmap and munmaps it on free */
#define MSG   4096
#define PAGES 8                      /* frames sampled, one per 4 MiB */

/* The MPI-style cache: one entry, keyed by address. */
static struct { uintptr_t addr; size_t len; pa_uring_reg_t reg; int valid; } cache;

static void frames(int pm, const char* p, uint64_t* out) {
  for (int i = 0; i < PAGES; i++) {
    if (pa_pagemap_pfn(pm, p + (size_t)i * (BUF / PAGES), &out[i]) != 0) out[i] = 0;
  }
}

static int send_and_read(pa_uring_t* u, int fd, const char* p, char* back) {
  int slot = pa_uring_slot_for(&cache.reg, p, MSG);
  int rc = pa_uring_rw_fixed(u, 1, fd, p, MSG, 0, (unsigned)slot);
  if (rc != MSG) { pa_diag(2, "io_uring WRITE_FIXED", rc < 0 ? -rc : 5); return -1; }
  if (pread(fd, back, MSG, 0) != MSG) return -1;
  return 0;
}

int main(void) {
  const char* who = dlsym(RTLD_DEFAULT, "pinarena_lookup") ? "pinarena (LD_PRELOAD=libpinarena.so)" : "glibc malloc";
  printf("stale-registration demo with %s\n", who);
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  pa_uring_t u;
  int rc = pa_uring_init(&u, 8);
  if (rc != 0) { pa_diag(2, "io_uring_setup", -rc); return 3; }
  int pm = pa_pagemap_open();
  char tmpl[] = "/tmp/pinarena-demo-XXXXXX";
  int fd = mkstemp(tmpl);
  unlink(tmpl);
  static char back[MSG];
  uint64_t fa[PAGES], fb[PAGES];

  /* 1. malloc, fill, register (cache miss), send */
  char* a = malloc(BUF);
  memset(a, 'A', BUF);
  rc = pa_uring_register(&u, a, BUF, &cache.reg);
  if (rc != 0) { pa_diag(2, "io_uring_register", -rc); return 3; }
  cache.addr = (uintptr_t)a; cache.len = BUF; cache.valid = 1;
  frames(pm, a, fa);
  if (send_and_read(&u, fd, a, back) != 0) return 3;
  printf("  malloc(32 MiB) = %p, registered, sent '%c...' (frame %llx)\n", (void*)a, back[0], (unsigned long long)fa[0]);

  /* 2. free, malloc again at the same address, write new bytes */
  const uintptr_t old = (uintptr_t)a;
  free(a);
  char* b = NULL;
  void* keep[8];
  int nkeep = 0;
  for (int i = 0; i < 8; i++) {
    char* t = malloc(BUF);
    if ((uintptr_t)t == old) { b = t; break; }
    keep[nkeep++] = t;
  }
  if (b == NULL) { printf("  the address did not come back after free: nothing to show\n"); return 2; }
  memset(b, 'B', BUF);
  frames(pm, b, fb);
  int same_frames = 1;
  for (int i = 0; i < PAGES; i++) if (fa[i] != fb[i]) same_frames = 0;

  /* 3. the cache hits on the address: send through the old registration */
  if (!(cache.valid && cache.addr == (uintptr_t)b)) return 3;
  if (send_and_read(&u, fd, b, back) != 0) return 3;
  int fresh = (back[0] == 'B');
  printf("  free + malloc        = %p (%s address)\n", (void*)b, (uintptr_t)b == old ? "same" : "different");
  printf("  physical frames      : %s (frame %llx -> %llx)\n", same_frames ? "same" : "DIFFERENT",
         (unsigned long long)fa[0], (unsigned long long)fb[0]);
  printf("  wrote 'B', cache hit, sent through the cached registration: '%c...' = %s\n", back[0],
         fresh ? "the NEW bytes" : "STALE bytes (the old frames)");
  for (int i = 0; i < nkeep; i++) free(keep[i]);
  pa_uring_unregister(&u, &cache.reg);
  free(b);
  pa_uring_exit(&u);
  return fresh ? 0 : 1;
}

/* shim_probe.c — run under LD_PRELOAD=libpinarena.so: allocate `MiB` in
 * 1 MiB blocks, print the registration of each (through pinarena.h, found
 * with dlsym so the probe runs without the shim too), then the stats line.
 *   pinarena-shim-probe MiB [verbs | reopen-stderr FILE]
 * With "reopen-stderr": close fd 2 after the first allocation and open FILE
 * in its place (a program reusing the number for data), write "probe data"
 * into it, then allocate.
 * With "verbs": open the first RDMA device, allocate a PD, adopt it with
 * pinarena_set_pd and check that the keys of a malloc'ed buffer belong to it
 * (an ibv_post_send-free check: the lkey must differ from none).
 * With "trim-retry" (at most 256 MiB): then free the blocks that were
 * registered, pinarena_trim() (their chunks go, and their pins with them),
 * and look the unregistered ones up again: "after_trim_registered=N" (a chunk
 * the pin cap refused registers once there is room). */
#include "pinarena.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  int (*lookup)(const void*, size_t, pinarena_region_t*) = (int (*)(const void*, size_t, pinarena_region_t*))dlsym(RTLD_DEFAULT, "pinarena_lookup");
  void (*wstats)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "pinarena_write_stats");
  if (lookup == NULL) { printf("shim not loaded\n"); return 2; }
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 16;
  if (argc > 2 && strcmp(argv[2], "verbs") == 0) {
    /* The application's PD, adopted by the shim: chunks registered before are
       registered again under it, later ones directly. */
    void* early = malloc(1000);                        /* registered before the adoption */
    void* ib = dlopen("libibverbs.so.1", RTLD_NOW);
    if (ib == NULL) { printf("probe: no libibverbs\n"); return 4; }
    void** (*get_list)(int*) = (void** (*)(int*))dlsym(ib, "ibv_get_device_list");
    void* (*open_dev)(void*) = (void* (*)(void*))dlsym(ib, "ibv_open_device");
    void* (*alloc_pd)(void*) = (void* (*)(void*))dlsym(ib, "ibv_alloc_pd");
    int n = 0;
    void** list = get_list(&n);
    if (list == NULL || n == 0) { printf("probe: no RDMA device\n"); return 4; }
    void* ctx = open_dev(list[0]);
    void* pd = ctx ? alloc_pd(ctx) : NULL;
    int (*set_pd)(void*) = (int (*)(void*))dlsym(RTLD_DEFAULT, "pinarena_set_pd");
    void* (*get_pd)(void) = (void* (*)(void))dlsym(RTLD_DEFAULT, "pinarena_pd");
    int rc = set_pd(pd);
    pinarena_region_t r;
    int lr = lookup(early, 1000, &r);
    printf("probe: set_pd=%d pd_adopted=%s early_lookup=%d backend=%d lkey=%u rkey=%u\n", rc,
           get_pd() == pd ? "yes" : "no", lr, r.backend, r.lkey, r.rkey);
    if (rc != 0 || get_pd() != pd || lr != 0 || r.backend != PINARENA_BACKEND_VERBS) return 5;
  }
  if (argc > 3 && strcmp(argv[2], "reopen-stderr") == 0) {
    free(malloc(100));                                 /* the shim is running */
    close(2);
    int fd = open(argv[3], O_WRONLY | O_APPEND);
    if (fd != 2) { printf("probe: reopened stderr as %d\n", fd); return 6; }
    if (write(2, "probe data\n", 11) != 11) return 7;
  }
  int reg = 0, unreg = 0;
  enum { KEPT = 256 };
  char* block[KEPT];
  int refused[KEPT];
  for (size_t i = 0; i < mib; i++) {
    char* p = malloc(1 << 20);
    memset(p, (int)i, 1 << 20);
    pinarena_region_t r;
    int rc = lookup(p, 1 << 20, &r);
    if (rc == 0) reg++; else if (rc == -ENODATA) unreg++;
    else { printf("lookup %p: %d\n", (void*)p, rc); return 3; }
    if (i < KEPT) { block[i] = p; refused[i] = rc != 0; }
  }
  printf("probe: registered_blocks=%d unregistered_blocks=%d\n", reg, unreg);
  if (argc > 2 && strcmp(argv[2], "trim-retry") == 0) {
    size_t (*trim)(void) = (size_t (*)(void))dlsym(RTLD_DEFAULT, "pinarena_trim");
    size_t n = mib < KEPT ? mib : KEPT;
    for (size_t i = 0; i < n; i++) if (!refused[i]) free(block[i]);
    size_t trimmed = trim();
    int now = 0;
    for (size_t i = 0; i < n; i++) {
      pinarena_region_t r;
      if (refused[i] && lookup(block[i], 1 << 20, &r) == 0) now++;
    }
    printf("probe: trimmed=%zu after_trim_registered=%d\n", trimmed, now);
  }
  fflush(stdout);
  wstats(1);
  return 0;
}

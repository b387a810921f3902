/* shim_probe.c — run under LD_PRELOAD=libpinarena.so: allocate `MiB` in
 * 1 MiB blocks, print the registration of each (through pinarena.h, found
 * with dlsym so the probe runs without the shim too), then the stats line.
 *   pinarena-shim-probe MiB [verbs]
 * With "verbs": open the first RDMA device, allocate a PD, adopt it with
 * pinarena_set_pd and check that the keys of a malloc'ed buffer belong to it
 * (an ibv_post_send-free check: the lkey must differ from none). */
#include "pinarena.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  int (*lookup)(const void*, size_t, pinarena_region_t*) = (int (*)(const void*, size_t, pinarena_region_t*))dlsym(RTLD_DEFAULT, "pinarena_lookup");
  void (*wstats)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "pinarena_write_stats");
  if (lookup == NULL) { printf("shim not loaded\n"); return 2; }
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 16;
  int reg = 0, unreg = 0;
  for (size_t i = 0; i < mib; i++) {
    char* p = malloc(1 << 20);
    memset(p, (int)i, 1 << 20);
    pinarena_region_t r;
    int rc = lookup(p, 1 << 20, &r);
    if (rc == 0) reg++; else if (rc == -ENODATA) unreg++;
    else { printf("lookup %p: %d\n", (void*)p, rc); return 3; }
  }
  printf("probe: registered_blocks=%d unregistered_blocks=%d\n", reg, unreg);
  fflush(stdout);
  wstats(1);
  return 0;
}

/* ofi_valid_cost.c — the cost of the shim's libfabric monitor at a cache hit
 * (valid() with N ranges subscribed) and at an unmap (src/shim/stack_ofi_subs.c).
 *
 *   LD_PRELOAD=libpinarena.so FI_PROVIDER=tcp pinarena-ofi-valid-cost N CALLS [unmap]
 *
 * Opens a fabric (the shim's fi_fabric imports its monitor), subscribes N
 * page-sized ranges of one mapping as libfabric's cache would, then plays
 * CALLS cache hits: valid() on each range in turn, every answer checked
 * (true: nothing was unmapped). With `unmap`, each call unmaps one range
 * first, so valid() drains that unmap and voids the range (every answer
 * checked false), and the page is mapped and subscribed again. Prints
 *   ofi_valid n=N calls=CALLS ns_per_call=T          (or ofi_unmap ...)
 * For instruction counts run it under callgrind and collect only valid():
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=pa_ofi_subs_valid ...
 * (Ir collected / CALLS = instructions per valid(); with `unmap`, per drained
 * unmap; --toggle-collect=pa_ofi_subs_add for the subscribe after it). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <rdma/fabric.h>
#include <rdma/fi_ext.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE 4096

int main(int argc, char** argv) {
  bool unmap = argc == 4 && strcmp(argv[3], "unmap") == 0;
  if (argc != 3 && !unmap) { fprintf(stderr, "usage: %s N CALLS [unmap]\n", argv[0]); return 2; }
  long n = atol(argv[1]), calls = atol(argv[2]);
  if (n <= 0 || calls <= 0) { fprintf(stderr, "ofi_valid_cost: N and CALLS must be > 0\n"); return 2; }
  setenv("FI_PROVIDER", "tcp", 0);
  setenv("FI_MR_CACHE_MONITOR", "disabled", 0);
  struct fid_mem_monitor* (*held)(void) =
    (struct fid_mem_monitor * (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_ofi_monitor");
  if (held == NULL) { fprintf(stderr, "ofi_valid_cost: no libpinarena.so preloaded\n"); return 2; }
  struct fi_info* info = NULL;
  int rc = fi_getinfo(FI_VERSION(1, 13), NULL, NULL, 0, NULL, &info);
  if (rc != 0 || info == NULL) { fprintf(stderr, "ofi_valid_cost: fi_getinfo found no provider (%d)\n", rc); return 2; }
  struct fid_fabric* fabric = NULL;
  rc = fi_fabric(info->fabric_attr, &fabric, NULL);
  long (*fed)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_events_ofi");
  if (rc != 0 || fed == NULL || fed() < 0) { fprintf(stderr, "ofi_valid_cost: the shim's monitor was not imported (%d)\n", rc); return 2; }

  struct fid_mem_monitor* m = held();
  char* p = mmap(NULL, (size_t)n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) { perror("mmap"); return 2; }
  for (long i = 0; i < n; i++) m->export_ops->subscribe(m, p + i * PAGE, PAGE);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  long wrong = 0;
  for (long c = 0; c < calls; c++) {
    char* r = p + (c % n) * PAGE;
    if (unmap && munmap(r, PAGE) != 0) { perror("munmap"); return 2; }
    if (m->export_ops->valid(m, r, PAGE) == unmap) wrong++;
    if (unmap) {
      if (mmap(r, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != r) { perror("mmap"); return 2; }
      m->export_ops->subscribe(m, r, PAGE);
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (wrong != 0) { fprintf(stderr, "ofi_valid_cost: %ld of %ld answers were %s\n", wrong, calls, unmap ? "valid after an unmap" : "not valid"); return 1; }
  double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)calls;
  printf("%s n=%ld calls=%ld ns_per_call=%.1f\n", unmap ? "ofi_unmap" : "ofi_valid", n, calls, ns);
  fi_close(&fabric->fid);
  fi_freeinfo(info);
  return 0;
}

/* bench_remote.c — the cost of giving a peer a key to one buffer and taking
 * it back, per buffer: allocate + expose (key) + free, in one run, against
 * the alternatives a program has today. Runs on a verbs device (the
 * Soft-RoCE VM: emulated, so only the ratios mean anything). Linked against
 * libpinarena.so; each way runs in a child of its own, since the key mode is
 * chosen once per process (PINARENA_REMOTE_KEYS).
 *
 *   window    pinarena_alloc_remote + pinarena_lookup + pinarena_free_remote, type-1 window keys
 *   mr        the same with a per-buffer ibv_reg_mr / ibv_dereg_mr
 *   chunk     the same with the remote chunk's one key (nothing per buffer)
 *   heap      malloc + pinarena_lookup + free: today's per-chunk rkey of the
 *             heap (what the shim handed out before; reaches the whole chunk)
 *   reg_mr    malloc + ibv_reg_mr of just the buffer + ibv_dereg_mr + free
 *   zero      malloc + memset + free: what zeroing on free costs (every remote way does it)
 * window runs with PINARENA_REMOTE_WINDOW_PROBE=0: it measures the window
 * mechanism also on a device that fails the bounds probe (rxe).
 *
 * Usage: pinarena-remote-bench [ITERATIONS [SIZE...]]   prints CSV
 * "way,size,iterations,ns_per_buffer" then the ratios to reg_mr and heap. */
#define _GNU_SOURCE
#include "pinarena.h"

#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { W_WINDOW, W_MR, W_CHUNK, W_HEAP, W_REGMR, W_ZERO, W_COUNT };
static const char* names[W_COUNT] = { "window", "mr", "chunk", "heap", "reg_mr", "zero" };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ns per buffer, or a negative value on failure. Runs in its own child. */
static double run(int way, size_t size, long iters) {
  if (way <= W_CHUNK) setenv("PINARENA_REMOTE_KEYS", names[way], 1);
  /* the window mechanism's cost, also where the device fails the bounds probe (rxe) */
  if (way == W_WINDOW) setenv("PINARENA_REMOTE_WINDOW_PROBE", "0", 1);
  for (int i = 0; i < 100000; i++) {                 /* a registered chunk: the registrar and PD exist */
    pinarena_region_t r;
    void* p = malloc(64);
    if (pinarena_lookup(p, 64, &r) == 0) break;
  }
  struct ibv_pd* pd = pinarena_pd();
  if (pd == NULL) { fprintf(stderr, "no verbs PD (registrar %s)\n", pinarena_registrar()); return -1; }
  const int acc = PINARENA_REMOTE_READ | PINARENA_REMOTE_WRITE;
  volatile uint32_t sink = 0;
  void* first = NULL;
  long moved = 0;                                    /* buffers not at the first one's address */
  double t0 = 0;
  for (long i = -iters / 10 - 1; i < iters; i++) {    /* a tenth as warm-up */
    if (i == 0) t0 = now();
    pinarena_region_t r;
    if (way <= W_CHUNK) {
      void* p = pinarena_alloc_remote(size, acc);
      if (p == NULL || pinarena_lookup(p, size, &r) != 0) { perror("pinarena_alloc_remote"); return -1; }
      sink += r.rkey;
      if (first == NULL) first = p;
      moved += p != first;
      if (pinarena_free_remote(p) != 0) return -1;
    } else if (way == W_HEAP) {
      void* p = malloc(size);
      if (pinarena_lookup(p, size, &r) != 0) {       /* a fresh chunk first: the inherited ones are not registered */
        for (int k = 0; k < 4096 && pinarena_lookup(p, size, &r) != 0; k++) p = malloc(size);
        if (pinarena_lookup(p, size, &r) != 0) { fprintf(stderr, "heap block not registered\n"); return -1; }
      }
      sink += r.rkey;
      free(p);
    } else if (way == W_ZERO) {
      char* p = malloc(size);
      memset(p, 0, size);
      sink += (uint32_t)p[size - 1];
      free(p);
    } else {
      void* p = malloc(size);
      struct ibv_mr* mr = ibv_reg_mr(pd, p, size, IBV_ACCESS_LOCAL_WRITE | acc);
      if (mr == NULL) { perror("ibv_reg_mr"); return -1; }
      sink += mr->rkey;
      ibv_dereg_mr(mr);
      free(p);
    }
  }
  (void)sink;
  if (moved != 0) fprintf(stderr, "%s %zu: %ld of the buffers were not at the first one's address\n", names[way], size, moved);
  if (way <= W_CHUNK && strcmp(pinarena_remote_keys(), names[way]) != 0) {
    fprintf(stderr, "asked for %s keys, got %s\n", names[way], pinarena_remote_keys());
    return -1;
  }
  return (now() - t0) * 1e9 / (double)iters;
}

int main(int argc, char** argv) {
  long iters = argc > 1 ? atol(argv[1]) : 2000;
  size_t sizes[16] = { 64, 4096, 65536 };
  int nsizes = 3;
  if (argc > 2) { nsizes = 0; for (int i = 2; i < argc && nsizes < 16; i++) sizes[nsizes++] = (size_t)atol(argv[i]); }
  printf("way,size,iterations,ns_per_buffer\n");
  int failed = 0;
  for (int s = 0; s < nsizes; s++) {
    double ns[W_COUNT];
    for (int w = 0; w < W_COUNT; w++) {
      int fd[2];
      if (pipe(fd) != 0) return 2;
      pid_t pid = fork();
      if (pid == 0) {
        close(fd[0]);
        double v = run(w, sizes[s], iters);
        if (write(fd[1], &v, sizeof v) != sizeof v) _exit(3);
        _exit(v < 0);
      }
      close(fd[1]);
      double v = -1;
      if (read(fd[0], &v, sizeof v) != sizeof v) v = -1;
      close(fd[0]);
      int st;
      waitpid(pid, &st, 0);
      ns[w] = v;
      if (v < 0) failed = 1;
      printf("%s,%zu,%ld,%.0f\n", names[w], sizes[s], iters, v);
      fflush(stdout);
    }
    /* every remote way zeroes the buffer on free (chunk: that is all it does per buffer); the key's own
       cost is the way minus chunk */
    printf("# size %zu: window/reg_mr %.3f, mr/reg_mr %.3f, chunk/reg_mr %.3f, window/chunk %.2f; "
           "key alone (minus chunk): window %.0f ns, mr %.0f ns, window/(reg_mr) %.3f\n",
           sizes[s], ns[W_WINDOW] / ns[W_REGMR], ns[W_MR] / ns[W_REGMR], ns[W_CHUNK] / ns[W_REGMR],
           ns[W_WINDOW] / ns[W_CHUNK], ns[W_WINDOW] - ns[W_CHUNK], ns[W_MR] - ns[W_CHUNK],
           (ns[W_WINDOW] - ns[W_CHUNK]) / ns[W_REGMR]);
  }
  return failed;
}

/* test_retire.c — what a huge object's move (realloc beyond its chunk's
 * room) leaves behind: never another thread's mapping replaced, and the
 * retired address ranges bounded (given back by pinarena_trim, after the
 * release callback). */
#include "child.h"
#include "kernel_view.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)


/* ---- another thread's mmap during the move ---- */

#define B_LEN   (44 * MiB)
#define B_MAX   4096
#define B_MAGIC 0x5a17c0deu

static void* b_maps[B_MAX];
static atomic_int b_count, b_go, b_idle, b_stop;

/* Thread B: while allowed, maps 44 MiB after 44 MiB (its own, written). */
static void* mapper(void* arg) {
  (void)arg;
  while (!atomic_load(&b_stop)) {
    if (!atomic_load(&b_go)) { atomic_store(&b_idle, 1); continue; }
    atomic_store(&b_idle, 0);
    int n = atomic_load(&b_count);
    if (n >= B_MAX) continue;
    void* m = mmap(NULL, B_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) continue;
    *(volatile uint32_t*)m = B_MAGIC;
    b_maps[n] = m;
    atomic_store(&b_count, n + 1);
  }
  return NULL;
}

/* B's mapping still B's: readable (write(2) from it fails with EFAULT on
 * PROT_NONE) and holding what B wrote. */
static int b_intact(const void* m, int fd) {
  uint32_t v = 0;
  if (write(fd, m, sizeof v) != (ssize_t)sizeof v) return 0;
  memcpy(&v, m, sizeof v);
  return v == B_MAGIC;
}

/* A fault while the mappings are B's own can only come from a mapping that
 * became PROT_NONE under B. */
static void on_segv(int sig) {
  (void)sig;
  static const char m[] = "SIGSEGV touching thread B's own fresh mapping: realloc's move replaced it (PROT_NONE)\n";
  if (write(2, m, sizeof m - 1) < 0) { }
  _exit(2);
}

static void move_race(void* arg) {
  (void)arg;
  signal(SIGSEGV, on_segv);
  int pfd[2];
  CHILD_CHECK(pipe(pfd) == 0, "pipe");
  pthread_t t;
  CHILD_CHECK(pthread_create(&t, NULL, mapper, NULL) == 0, "pthread_create");
  int rounds = 150, broken = 0, moved = 0;
  for (int r = 0; r < rounds && broken == 0; r++) {
    char* p = malloc(60 * MiB);
    CHILD_CHECK(p != NULL, "malloc(60 MiB)");
    p[0] = 'a';
    atomic_store(&b_go, 1);
    while (atomic_load(&b_count) < 4) { }                  /* B is mapping */
    char* q = realloc(p, 1024 * MiB + MiB);                /* beyond the chunk's room: its pages move */
    CHILD_CHECK(q != NULL && q[0] == 'a', "realloc");
    moved += q != p;
    atomic_store(&b_go, 0);
    atomic_store(&b_idle, 0);
    while (!atomic_load(&b_idle)) { }
    int n = atomic_load(&b_count);
    for (int i = 0; i < n; i++) {
      char c;
      if (!b_intact(b_maps[i], pfd[1])) broken++;
      if (read(pfd[0], &c, 1) < 0) { }                      /* drain what b_intact wrote */
      if (read(pfd[0], &c, 1) < 0) { }
      if (read(pfd[0], &c, 1) < 0) { }
      if (read(pfd[0], &c, 1) < 0) { }
    }
    for (int i = 0; i < n; i++) munmap(b_maps[i], B_LEN);
    atomic_store(&b_count, 0);
    free(q);
    pinarena_trim();                                       /* the next round's object moves again */
    if (broken) fprintf(stderr, "round %d: %d of thread B's %d mappings replaced (no longer readable with its bytes)\n", r, broken, n);
  }
  atomic_store(&b_stop, 1);
  pthread_join(t, NULL);
  CHILD_CHECK(moved > 0, "no realloc moved its object");
  CHILD_CHECK(broken == 0, "realloc's move replaced %d mapping(s) of another thread", broken);
}

TEST(shim_retire_move_never_replaces_another_mapping) { su_child_ok(move_race, "move race"); }

/* ---- retired ranges stay bounded ---- */

static int vma_count(void) {
  FILE* f = fopen("/proc/self/maps", "r");
  if (f == NULL) return -1;
  int n = 0, ch;
  while ((ch = fgetc(f)) != EOF) n += ch == '\n';
  fclose(f);
  return n;
}

static void move_rounds(void* arg) {
  (void)arg;
  int v0 = vma_count();
  uint64_t vm0 = tu_status_kb("VmSize");
  int rounds = 3000, moved = 0;
  for (int r = 0; r < rounds; r++) {
    char* p = malloc(3 * MiB);
    CHILD_CHECK(p != NULL, "malloc");
    p[0] = 'x'; p[3 * MiB - 1] = 'y';
    char* q = realloc(p, 65 * MiB);
    CHILD_CHECK(q != NULL && q[0] == 'x' && q[3 * MiB - 1] == 'y', "realloc kept the contents");
    moved += q != p;
    free(q);
    pinarena_trim();
  }
  int v1 = vma_count();
  uint64_t vm1 = tu_status_kb("VmSize");
  fprintf(stderr, "%d rounds (%d moved): VMAs %d -> %d, VmSize %llu -> %llu MiB\n", rounds, moved, v0, v1,
          (unsigned long long)(vm0 >> 10), (unsigned long long)(vm1 >> 10));
  CHILD_CHECK(moved == rounds, "only %d of %d reallocs moved", moved, rounds);
  CHILD_CHECK(v1 - v0 < 64, "%d rounds of malloc/realloc(move)/free/trim left %d more VMAs", rounds, v1 - v0);
  CHILD_CHECK(vm1 < vm0 + 1024 * 1024, "%d rounds left VmSize +%llu MiB", rounds, (unsigned long long)((vm1 - vm0) >> 10));
  void* h = malloc(1000);                                   /* the process can still map */
  CHILD_CHECK(h != NULL, "malloc after the rounds");
  free(h);
}

TEST(shim_retire_moved_ranges_stay_bounded) { su_child_ok(move_rounds, "move rounds"); }

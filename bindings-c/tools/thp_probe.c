/* thp_probe.c — run under LD_PRELOAD=libpinarena.so: what transparent huge
 * pages the shim's chunks may take, for tests/shim/test_thp.c.
 *   pinarena-thp-probe heap dense|sparse
 * builds a heap of regular chunks and prints one line,
 *   first_nh=0|1 last_nh=0|1
 * for the mappings holding its first and last object: dense, 360 objects
 * of 928 KiB (large spans of 15 slices, under half a huge page), every
 * page written (a program that fills what it maps); sparse, 160 objects of 4 KiB on 2 MiB
 * boundaries (posix_memalign), written (one page in each 2 MiB region: 320
 * MiB of chunks, 2 % of them touched).
 *   pinarena-thp-probe heap mixed
 * 16 objects of 600 KiB written and freed (their slices keep their pages),
 * then a 1 MiB object, a 600 KiB one and a 100-byte one, each written, then
 * the same three again; prints
 *   big_nh=0|1 mid_nh=0|1 small_nh=0|1
 * where each nh is 1 if any of that size's two objects lies in a mapping
 * that refuses huge pages (nh), and 0 if none does.
 *   pinarena-thp-probe BYTES [GROWN...] [mlock]
 * mallocs BYTES (a huge object: its own chunk), writes every page, and
 * prints one line; for each GROWN, reallocs it to GROWN (in place when the
 * chunk has room, else its pages move to a new chunk), writes every page and
 * prints another; with "mlock", locks the object before the first realloc:
 *   moved=0|1 head_nh=0|1 interior_nh=0|1 tail_nh=0|1 one_mapping=0|1 rss_kb=N object_kb=N vmlck_kb=N
 * head: the mapping holding the object's first byte (its 2 MiB region holds
 * the chunk's header page too); interior: the one holding its middle byte
 * (that region lies wholly inside the object when it is 6 MiB or more);
 * tail: the one holding its last byte; nh: "nh" in its VmFlags;
 * one_mapping: first and last byte in one mapping; rss_kb: Rss of every
 * mapping from the object's 2 MiB region to 2 MiB past its end (so the
 * header page and any huge page at the end count); object_kb: its pages;
 * vmlck_kb: the process's VmLck. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define REGION ((uintptr_t)2 << 20)

typedef struct { uintptr_t start, end; int nh; } vma_t;

/* The mapping holding a, or start == end == 0. */
static vma_t vma_at(uintptr_t a) {
  vma_t v = {0, 0, 0}, cur = {0, 0, 0};
  char line[512];
  FILE* f = fopen("/proc/self/smaps", "r");
  if (f == NULL) { perror("thp-probe: /proc/self/smaps"); exit(2); }
  while (fgets(line, sizeof line, f) != NULL) {
    unsigned long s, e;
    if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) { cur.start = s; cur.end = e; }
    else if (strncmp(line, "VmFlags:", 8) == 0 && a >= cur.start && a < cur.end) {
      cur.nh = strstr(line, " nh") != NULL;
      v = cur;
      break;
    }
  }
  fclose(f);
  return v;
}

/* Rss (kB) of the mappings that meet [from, to). */
static unsigned long rss_kb(uintptr_t from, uintptr_t to) {
  char line[512];
  unsigned long s = 0, e = 0, kb, sum = 0;
  FILE* f = fopen("/proc/self/smaps", "r");
  if (f == NULL) { perror("thp-probe: /proc/self/smaps"); exit(2); }
  while (fgets(line, sizeof line, f) != NULL) {
    unsigned long a, b;
    if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) { s = a; e = b; }
    else if (sscanf(line, "Rss: %lu kB", &kb) == 1 && s < to && e > from) sum += kb;
  }
  fclose(f);
  return sum;
}

static unsigned long vmlck_kb(void) {
  char line[256];
  unsigned long kb = 0;
  FILE* f = fopen("/proc/self/status", "r");
  if (f == NULL) { perror("thp-probe: /proc/self/status"); exit(2); }
  while (fgets(line, sizeof line, f) != NULL) if (sscanf(line, "VmLck: %lu kB", &kb) == 1) break;
  fclose(f);
  return kb;
}

static void report(const char* p, size_t n, int moved) {
  uintptr_t a = (uintptr_t)p, last = a + n - 1;
  vma_t head = vma_at(a), in = vma_at(a + n / 2), tail = vma_at(last);
  if (head.end == 0 || in.end == 0 || tail.end == 0) { fprintf(stderr, "thp-probe: the object is not mapped\n"); exit(2); }
  printf("moved=%d head_nh=%d interior_nh=%d tail_nh=%d one_mapping=%d rss_kb=%lu object_kb=%zu vmlck_kb=%lu\n", moved,
         head.nh, in.nh, tail.nh, head.start == tail.start, rss_kb(a & ~(REGION - 1), last + REGION), (n + 4095) / 4096 * 4,
         vmlck_kb());
}

/* Objects of 1 MiB, 600 KiB and 100 bytes, twice over, after 600 KiB ones came and went: which sizes lie in a
   mapping refusing huge pages. */
static int mixed(void) {
  static const size_t len[3] = { (size_t)1 << 20, 600 << 10, 100 };
  char* obj[6];
  int nh[3] = {0, 0, 0};
  char* freed[16];
  for (int i = 0; i < 16; i++) {
    freed[i] = malloc(len[1]);
    if (freed[i] == NULL) { perror("thp-probe: malloc"); return 2; }
    memset(freed[i], 1, len[1]);
  }
  for (int i = 0; i < 16; i++) free(freed[i]);
  for (int i = 0; i < 6; i++) {
    obj[i] = malloc(len[i % 3]);
    if (obj[i] == NULL) { perror("thp-probe: malloc"); return 2; }
    memset(obj[i], 1, len[i % 3]);
  }
  for (int i = 0; i < 6; i++) {
    vma_t v = vma_at((uintptr_t)obj[i]);
    if (v.end == 0) { fprintf(stderr, "thp-probe: an object is not mapped\n"); return 2; }
    nh[i % 3] |= v.nh;
  }
  printf("big_nh=%d mid_nh=%d small_nh=%d\n", nh[0], nh[1], nh[2]);
  for (int i = 0; i < 6; i++) free(obj[i]);
  return 0;
}

static int heap(const char* how) {
  enum { DENSE = 360, SPARSE = 160 };
  static char* obj[DENSE];
  if (strcmp(how, "mixed") == 0) return mixed();
  int dense = strcmp(how, "dense") == 0, n = dense ? DENSE : SPARSE;
  if (!dense && strcmp(how, "sparse") != 0) { fprintf(stderr, "thp-probe: heap dense|sparse|mixed, not %s\n", how); return 2; }
  for (int i = 0; i < n; i++) {
    size_t len = dense ? (size_t)928 << 10 : 4096;
    if (dense) obj[i] = malloc(len);
    else if (posix_memalign((void**)&obj[i], REGION, len) != 0) obj[i] = NULL;
    if (obj[i] == NULL) { perror("thp-probe: malloc"); return 2; }
    for (size_t k = 0; k < len; k += 4096) obj[i][k] = 1;
  }
  vma_t first = vma_at((uintptr_t)obj[0]), last = vma_at((uintptr_t)obj[n - 1]);
  if (first.end == 0 || last.end == 0) { fprintf(stderr, "thp-probe: an object is not mapped\n"); return 2; }
  printf("first_nh=%d last_nh=%d\n", first.nh, last.nh);
  for (int i = 0; i < n; i++) free(obj[i]);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: pinarena-thp-probe heap dense|sparse|mixed | BYTES [GROWN...] [mlock]\n"); return 2; }
  if (strcmp(argv[1], "heap") == 0) return argc == 3 ? heap(argv[2]) : 2;
  int lock = strcmp(argv[argc - 1], "mlock") == 0;
  size_t n = strtoul(argv[1], NULL, 0);
  char* p = malloc(n);
  if (p == NULL) { perror("thp-probe: malloc"); return 2; }
  for (size_t i = 0; i < n; i += 4096) p[i] = 1;
  p[n - 1] = 1;
  report(p, n, 0);
  if (lock && argc > 3 && mlock(p, n) != 0) { perror("thp-probe: mlock"); return 2; }
  for (int k = 2; k < argc - lock; k++) {
    size_t g = strtoul(argv[k], NULL, 0);
    char* q = realloc(p, g);
    if (q == NULL) { perror("thp-probe: realloc"); return 2; }
    for (size_t i = 0; i < g; i += 4096) q[i] = (char)k;
    q[g - 1] = (char)k;
    report(q, g, q != p);
    p = q;
  }
  free(p);
  return 0;
}

/* test_mem.c — the shim holds what the program uses: untouched memory costs
 * nothing, a huge object costs its page-rounded size, realloc grows in
 * place, calloc does not populate, a memory cgroup that holds the program
 * under glibc holds it under the shim, and nothing is pinned for a program
 * that never asks for a key. Memory is VmRSS + HugetlbPages (hugetlb pages
 * are not in RSS). */
#include "child.h"
#include "kernel_view.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)

static uint64_t held_kb(void) { return tu_status_kb("VmRSS") + tu_status_kb("HugetlbPages"); }

/* Eager registration pins (so populates) every chunk it registers: these
 * figures are the default's, lazy registration. */
static void lazy_only(void) {
  const char* v = getenv("PINARENA_REGISTER");
  if (v != NULL && strcmp(v, "eager") == 0) SKIP("PINARENA_REGISTER=eager pins (populates) each chunk it maps: measured for lazy");
}

/* Under THP "always" the kernel gives each touched 2 MiB region of a plain
 * mapping a whole huge page, whoever mapped it (glibc's calloc of 1 GiB with
 * one page in 64 written holds all of it there), and the runner's own static
 * buffers count too. A check of what the shim itself populates turns THP off
 * for its child (PR_SET_THP_DISABLE: this process and no other), so the
 * figure is the shim's under every system mode; huge_thp.c's own behaviour
 * under "always" is test_thp.c's. */
static void shim_pages_only(void) {
  CHILD_CHECK(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0, "prctl(PR_SET_THP_DISABLE): %s", strerror(errno));
}

/* Each check runs in a child so the heap it measures is its own. */
static void run_child(void (*fn)(void*), const char* what) {
  lazy_only();
  su_child_ok(fn, what);
}


static void huge_untouched(void* arg) {
  (void)arg;
  uint64_t before = held_kb();
  char* p = malloc((size_t)1 << 30);
  CHILD_CHECK(p != NULL, "malloc(1 GiB) failed");
  p[0] = 1;
  uint64_t after = held_kb();
  fprintf(stderr, "malloc(1 GiB), one byte written: +%llu KiB\n", (unsigned long long)(after - before));
  CHILD_CHECK(after - before < 8 * 1024, "malloc(1 GiB) with one byte written holds %llu KiB",
              (unsigned long long)(after - before));
  free(p);
}

TEST(shim_mem_huge_untouched_costs_nothing) { run_child(huge_untouched, "1 GiB"); }

static void aligned_pages(void* arg) {
  (void)arg;
  void* v[100];
  uint64_t before = held_kb();
  for (int i = 0; i < 100; i++) {
    CHILD_CHECK(posix_memalign(&v[i], 2 * MiB, 4096) == 0, "posix_memalign");
    memset(v[i], i, 4096);
  }
  uint64_t after = held_kb();
  fprintf(stderr, "100 x posix_memalign(2 MiB, 4 KiB): +%llu KiB\n", (unsigned long long)(after - before));
  CHILD_CHECK(after - before < 4 * 1024, "100 page-sized objects hold %llu KiB", (unsigned long long)(after - before));
  for (int i = 0; i < 100; i++) { CHILD_CHECK(((unsigned char*)v[i])[4095] == (unsigned char)i, "contents"); free(v[i]); }
}

TEST(shim_mem_page_aligned_objects_cost_pages) {
  const char* pages = getenv("PINARENA_PAGES");
  if (pages != NULL && strcmp(pages, "thp") == 0)
    SKIP("PINARENA_PAGES=thp: every chunk asks for huge pages, so each object's 2 MiB region is one (by design)");
  run_child(aligned_pages, "aligned");
}

/* Objects aligned to half a chunk (2 MiB with the default 4 MiB chunks)
 * share regular chunks (src/shim/alloc.c, malloc_large). When each took a
 * huge chunk of its own, 100 of them took 6400 MiB of address space and
 * 824 kB of page tables (the chunk's header page and the object in two
 * 2 MiB regions); now 288 MiB and 536 kB (glibc: 200 MiB, 400 kB). With
 * PINARENA_PAGES=thp or hugetlb they still do (alloc.c, large_align_max). */
static void half_chunk_aligned(void* arg) {
  (void)arg;
  void* v[100];
  uint64_t size0 = tu_status_kb("VmSize"), pte0 = tu_status_kb("VmPTE");
  for (int i = 0; i < 100; i++) {
    CHILD_CHECK(posix_memalign(&v[i], 2 * MiB, 4096) == 0, "posix_memalign");
    CHILD_CHECK(((uintptr_t)v[i] & (2 * MiB - 1)) == 0, "posix_memalign(2 MiB) = %p", v[i]);
    memset(v[i], i, 4096);
  }
  uint64_t size = tu_status_kb("VmSize") - size0, pte = tu_status_kb("VmPTE") - pte0;
  fprintf(stderr, "100 x posix_memalign(2 MiB, 4 KiB): +%llu MiB of address space, +%llu kB of page tables\n",
          (unsigned long long)(size >> 10), (unsigned long long)pte);
  CHILD_CHECK(size < 1024 * 1024, "100 page-sized objects take %llu MiB of address space", (unsigned long long)(size >> 10));
  CHILD_CHECK(pte < 700, "100 page-sized objects take %llu kB of page tables", (unsigned long long)pte);
  for (int i = 0; i < 100; i++) { CHILD_CHECK(((unsigned char*)v[i])[4095] == (unsigned char)i, "contents"); free(v[i]); }
}

TEST(shim_mem_half_chunk_aligned_objects_share_chunks) {
  const char* pages = getenv("PINARENA_PAGES");
  if (pages != NULL && (strcmp(pages, "thp") == 0 || strcmp(pages, "hugetlb") == 0))
    SKIP("PINARENA_PAGES=thp/hugetlb: such objects take huge chunks of their own (a regular chunk's region would be a huge page)");
  if (getenv("PINARENA_CHUNK_SIZE") != NULL) SKIP("PINARENA_CHUNK_SIZE set: the figures are for the default 4 MiB chunks");
  run_child(half_chunk_aligned, "half-chunk aligned");
}

/* Regular chunks grow with the heap (src/shim/chunk.c): 512 MiB of 1 MiB
 * objects, each page written once, take address space and page-table pages
 * close to what the objects need. With 4 MiB chunks only, three such objects
 * share a chunk and the rest of it stays unused: 1.33 times the address
 * space, and as many page-table pages (each 2 MiB touched costs one, which
 * fork copies and exit frees). */
static void chunks_grow(void* arg) {
  (void)arg;
  enum { N = 512 };
  static char* o[N];
  pinarena_stats_t s0, s1;
  CHILD_CHECK(pinarena_get_stats(&s0) == 0, "pinarena_get_stats");
  uint64_t pte0 = tu_status_kb("VmPTE");
  for (int i = 0; i < N; i++) {
    o[i] = malloc(MiB);
    CHILD_CHECK(o[i] != NULL, "malloc(1 MiB) #%d", i);
    for (size_t j = 0; j < MiB; j += 4096) o[i][j] = 1;
  }
  CHILD_CHECK(pinarena_get_stats(&s1) == 0, "pinarena_get_stats");
  double space = (double)(s1.chunk_bytes - s0.chunk_bytes) / ((double)N * MiB);
  double tables = (double)(tu_status_kb("VmPTE") - pte0) / (N / 2 * 4.0);   /* one 4 KiB table per 2 MiB */
  fprintf(stderr, "512 x 1 MiB: %llu chunks, %.3f x the address space, %.3f x the page tables the objects need\n",
          (unsigned long long)(s1.chunks - s0.chunks), space, tables);
  CHILD_CHECK(space <= 1.2, "regular chunks take %.3f times the objects' address space", space);
  CHILD_CHECK(tables <= 1.2, "page tables: %.3f times what the objects need", tables);
  for (int i = 0; i < N; i++) free(o[i]);
}

TEST(shim_mem_chunks_grow_with_the_heap) {
  if (getenv("PINARENA_CHUNK_SIZE") != NULL) SKIP("PINARENA_CHUNK_SIZE set: every regular chunk has that size");
  if (getenv("PINARENA_PAGES") != NULL && strcmp(getenv("PINARENA_PAGES"), "hugetlb") == 0)
    SKIP("PINARENA_PAGES=hugetlb: regular chunks take their pool pages whole and do not grow");
  run_child(chunks_grow, "chunk growth");
}

/* Small objects of 40 classes, mixed, then all freed: free keeps some
 * emptied one-slice spans of each class with the heap (free.c,
 * PA_KEEP_EMPTY), pages resident, slices taken, scattered over what the
 * objects used. Objects of several slices that come next must land on those
 * pages (chunk.c, give_back_kept_first), not on new ones. Before, the kept
 * spans cut the freed slices into runs too short for them: +15.4 MiB here
 * (what that did to perf/native's phased: bindings-c/README.md). */
static void kept_spans_serve(void* arg) {
  (void)arg;
  shim_pages_only();
  enum { SMALL_BYTES = 24 << 20, MAXN = SMALL_BYTES / 16 };
  static void* v[MAXN];
  uint64_t x = 5;
  size_t total = 0, k = 0;
  while (total < SMALL_BYTES && k < MAXN) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    size_t n = 16 + 16 * (size_t)(x % 40);             /* 16..640 bytes */
    v[k] = malloc(n);
    CHILD_CHECK(v[k] != NULL, "malloc");
    memset(v[k], 1, n);
    total += n; k++;
  }
  for (size_t i = 0; i < k; i++) free(v[i]);
  enum { BIG = 256 << 10, NBIG = (20 << 20) / BIG };   /* 20 MiB of objects of 4+ slices */
  static void* big[NBIG];
  uint64_t before = held_kb();
  for (int i = 0; i < NBIG; i++) { big[i] = malloc(BIG); CHILD_CHECK(big[i] != NULL, "malloc"); memset(big[i], i, BIG); }
  uint64_t after = held_kb();
  fprintf(stderr, "24 MiB of 16-640 byte objects freed, then 20 MiB of 256 KiB objects: +%llu KiB\n",
          (unsigned long long)(after - before));
  CHILD_CHECK(after - before < 6 * 1024, "the emptied spans' pages did not serve the objects: +%llu KiB",
              (unsigned long long)(after - before));
  for (int i = 0; i < NBIG; i++) free(big[i]);
}

TEST(shim_mem_kept_empty_spans_serve_bigger_objects) { run_child(kept_spans_serve, "kept spans"); }

static void realloc_in_place(void* arg) {
  (void)arg;
  char* p = malloc(8 * MiB);
  memset(p, 'x', 8 * MiB);
  char* q = realloc(p, 100 * MiB);
  CHILD_CHECK(q == p, "realloc(8 MiB -> 100 MiB) moved the object: %p -> %p", (void*)p, (void*)q);
  CHILD_CHECK(q[0] == 'x' && q[8 * MiB - 1] == 'x', "contents");
  free(q);
  /* a vector grown x1.5 to 512 MiB, the new part written each time: holds little more than the vector */
  uint64_t before = held_kb();
  char* v = NULL;
  size_t have = 0, n = 1024;
  for (; n <= 512 * MiB; n += n / 2) {
    v = realloc(v, n);
    CHILD_CHECK(v != NULL, "realloc(%zu)", n);
    memset(v + have, 7, n - have);
    have = n;
  }
  uint64_t after = held_kb();
  fprintf(stderr, "realloc x1.5 to %zu MiB: +%llu MiB\n", have >> 20, (unsigned long long)((after - before) >> 10));
  CHILD_CHECK((after - before) * 1024 <= have + have / 4, "growing to %zu MiB holds %llu MiB", have >> 20,
              (unsigned long long)((after - before) >> 10));
  CHILD_CHECK(v[0] == 7 && v[have - 1] == 7, "contents");
  free(v);
}

TEST(shim_mem_realloc_grows_huge_in_place) { run_child(realloc_in_place, "realloc"); }

static void calloc_lazy(void* arg) {
  (void)arg;
  shim_pages_only();
  /* dirty memory reused by calloc reads as zero */
  char* p = malloc(64 * MiB);
  memset(p, 0xab, 64 * MiB);
  free(p);
  unsigned char* z = calloc(1, 64 * MiB);
  for (size_t i = 0; i < 64 * MiB; i++) CHILD_CHECK(z[i] == 0, "calloc byte %zu is %#x", i, z[i]);
  memset(z, 0xcd, 64 * MiB);
  free(z);
  /* a zeroed array costs what the program writes */
  uint64_t before = held_kb();
  unsigned char* a = calloc(1024, MiB);
  CHILD_CHECK(a != NULL, "calloc(1 GiB)");
  for (size_t i = 0; i < ((size_t)1 << 30); i += 64 * 4096) { CHILD_CHECK(a[i] == 0, "calloc(1 GiB) byte %zu", i); a[i] = 1; }
  uint64_t after = held_kb();
  fprintf(stderr, "calloc(1 GiB), one page in 64 written: +%llu KiB\n", (unsigned long long)(after - before));
  CHILD_CHECK(after - before < 32 * 1024, "calloc(1 GiB) holds %llu KiB", (unsigned long long)(after - before));
  free(a);
}

TEST(shim_mem_calloc_zeroes_without_populating) { run_child(calloc_lazy, "calloc"); }

/* A memory cgroup of 256 MiB: v2 (memory.max) or v1 (memory.limit_in_bytes). */
static int cg_make(char* dir, size_t cap) {
  const char* roots[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup", "/sys/fs/cgroup/memory" };
  for (size_t i = 0; i < 3; i++) {
    char probe[256];
    snprintf(probe, sizeof(probe), "%s/cgroup.controllers", roots[i]);
    int v2 = access(probe, R_OK) == 0;
    if (v2) {
      FILE* f = fopen(probe, "r");
      char line[256] = "";
      if (f) { if (!fgets(line, sizeof(line), f)) line[0] = 0; fclose(f); }
      if (strstr(line, "memory") == NULL) continue;
      char sub[256];
      snprintf(sub, sizeof(sub), "%s/cgroup.subtree_control", roots[i]);
      int fd = open(sub, O_WRONLY);
      if (fd >= 0) { if (write(fd, "+memory", 7) < 0) { /* maybe on already */ } close(fd); }
    } else {
      snprintf(probe, sizeof(probe), "%s/memory.limit_in_bytes", roots[i]);
      if (access(probe, W_OK) != 0) continue;
    }
    snprintf(dir, 256, "%s/pinarena-test-%d", roots[i], (int)getpid());
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) continue;
    char file[320], val[32];
    snprintf(file, sizeof(file), "%s/%s", dir, v2 ? "memory.max" : "memory.limit_in_bytes");
    snprintf(val, sizeof(val), "%zu", cap);
    int fd = open(file, O_WRONLY);
    if (fd < 0 || write(fd, val, strlen(val)) < 0) { if (fd >= 0) close(fd); rmdir(dir); continue; }
    close(fd);
    if (!v2) {                                    /* no swap escape hatch when memsw is accounted */
      snprintf(file, sizeof(file), "%s/memory.memsw.limit_in_bytes", dir);
      fd = open(file, O_WRONLY);
      if (fd >= 0) { if (write(fd, val, strlen(val)) < 0) { /* not accounted */ } close(fd); }
    } else {
      snprintf(file, sizeof(file), "%s/memory.swap.max", dir);
      fd = open(file, O_WRONLY);
      if (fd >= 0) { if (write(fd, "0", 1) < 0) { /* no swap controller */ } close(fd); }
    }
    return 0;
  }
  return -1;
}

static void cg_join(const char* dir) {
  char file[320], pid[24];
  snprintf(file, sizeof(file), "%s/cgroup.procs", dir);
  snprintf(pid, sizeof(pid), "%d", (int)getpid());
  int fd = open(file, O_WRONLY);
  if (fd < 0 || write(fd, pid, strlen(pid)) < 0) _exit(90);
  close(fd);
}

/* In the cgroup: touch `touch` bytes of a `size`-byte object. */
static int cg_child(const char* dir, size_t size, size_t touch) {
  pid_t pid = fork();
  if (pid == 0) {
    cg_join(dir);
    char* p = malloc(size);
    if (p == NULL) _exit(91);
    for (size_t o = 0; o < touch; o += 4096) p[o] = 1;
    char* q = malloc(size / 2);
    if (q == NULL) _exit(92);
    q[0] = 1;
    free(q);
    free(p);
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return st;
}

TEST(shim_mem_cgroup_malloc_of_untouched_memory_lives) {
  char dir[256];
  lazy_only();
  if (cg_make(dir, 256 * MiB) != 0) SKIP("no writable memory cgroup (v1 or v2) on this host: needs root and a mounted memory controller");
  /* the limit holds: touching 512 MiB in it is killed (or refused) */
  int over = cg_child(dir, 512 * MiB, 512 * MiB);
  /* malloc(1 GiB) + malloc(512 MiB), 1 MiB written: lives, as under glibc */
  int st = cg_child(dir, 1024 * MiB, MiB);
  rmdir(dir);
  CHECK(over != 0, "the cgroup does not limit memory (touching 512 MiB under 256 MiB ended %#x)", over);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "malloc(1 GiB) with 1 MiB written in a 256 MiB cgroup ended %s %d",
        WIFSIGNALED(st) ? "by signal" : "with exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

/* Memory changes kind: in the cgroup, 160 MiB of huge objects written and
 * freed, then 160 MiB of small ones written (huge_first), or the other way
 * round. The sum (320 MiB) does not fit in 256 MiB; glibc peaks at ~165 MiB. */
#define PHASE (160 * MiB)

static void phase_huge(void) {
  char* v[PHASE / (8 * MiB)];
  for (size_t i = 0; i < PHASE / (8 * MiB); i++) {
    v[i] = malloc(8 * MiB);
    if (v[i] == NULL) _exit(93);
    memset(v[i], 'h', 8 * MiB);
  }
  for (size_t i = 0; i < PHASE / (8 * MiB); i++) free(v[i]);
}

static void phase_small(void) {
  size_t n = PHASE / 256;
  char** v = mmap(NULL, n * sizeof(char*), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (v == MAP_FAILED) _exit(94);
  for (size_t i = 0; i < n; i++) {
    v[i] = malloc(256);
    if (v[i] == NULL) _exit(95);
    memset(v[i], 's', 256);
  }
  for (size_t i = 0; i < n; i++) free(v[i]);
  munmap(v, n * sizeof(char*));
}

static int cg_phases(const char* dir, int huge_first) {
  pid_t pid = fork();
  if (pid == 0) {
    cg_join(dir);
    if (huge_first) { phase_huge(); phase_small(); }
    else { phase_small(); phase_huge(); }
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return st;
}

TEST(shim_mem_cgroup_memory_changes_kind) {
  char dir[256];
  lazy_only();
  if (cg_make(dir, 256 * MiB) != 0) SKIP("no writable memory cgroup (v1 or v2) on this host: needs root and a mounted memory controller");
  int over = cg_child(dir, 512 * MiB, 512 * MiB);
  int hs = cg_phases(dir, 1);
  int sh = cg_phases(dir, 0);
  rmdir(dir);
  CHECK(over != 0, "the cgroup does not limit memory (touching 512 MiB under 256 MiB ended %#x)", over);
  int hs_ok = WIFEXITED(hs) && WEXITSTATUS(hs) == 0, sh_ok = WIFEXITED(sh) && WEXITSTATUS(sh) == 0;
  CHECK(hs_ok && sh_ok, "in a 256 MiB cgroup: 160 MiB huge, freed, then 160 MiB small %s %d; "
        "160 MiB small, freed, then 160 MiB huge %s %d",
        hs_ok ? "lived" : WIFSIGNALED(hs) ? "killed by signal" : "exit", WIFSIGNALED(hs) ? WTERMSIG(hs) : WEXITSTATUS(hs),
        sh_ok ? "lived" : WIFSIGNALED(sh) ? "killed by signal" : "exit", WIFSIGNALED(sh) ? WTERMSIG(sh) : WEXITSTATUS(sh));
}

static void rlimit_enomem(void* arg) {
  (void)arg;
  struct rlimit rl;
  uint64_t vm = tu_status_kb("VmSize") * 1024;
  rl.rlim_cur = rl.rlim_max = vm + ((uint64_t)3 << 30);
  CHILD_CHECK(setrlimit(RLIMIT_AS, &rl) == 0, "setrlimit");
  errno = 0;
  void* p = malloc((size_t)8 << 30);
  CHILD_CHECK(p == NULL && errno == ENOMEM, "malloc(8 GiB) over RLIMIT_AS: %p errno %d", p, errno);
  char* q = malloc((size_t)1 << 30);
  CHILD_CHECK(q != NULL, "malloc(1 GiB) under RLIMIT_AS of VmSize + 3 GiB failed");
  q[0] = 1; q[((size_t)1 << 30) - 1] = 1;
  free(q);
}

TEST(shim_mem_rlimit_as_enomem_not_a_crash) { run_child(rlimit_enomem, "RLIMIT_AS"); }

/* Every " key=" in out is followed by want (want_zero) or by something else. */
static int every_value(const char* out, const char* key, const char* want, int equal) {
  int n = 0;
  for (const char* at = strstr(out, key); at != NULL; at = strstr(at + 1, key), n++)
    if ((strncmp(at + strlen(key), want, strlen(want)) == 0) != equal) return 0;
  return n > 0;
}

/* What a program that never asks for a key pins: nothing, and no registrar
 * is opened (its RLIMIT_MEMLOCK budget, its descriptors are its own). */
TEST(shim_mem_lazy_registration_pins_nothing) {
  char out[16384];
  lazy_only();
  /* bash reads its own status (coreutils close stderr before the shim's exit line) */
  char* const argv[] = { "/bin/bash", "-c", "x=$(seq 1 20000); while read -r k v; do case $k in VmLck:|VmPin:) echo \"$k $v\";; esac; "
                         "done < /proc/self/status", NULL };
  const char* lazy[] = { "PINARENA_STATS=stderr", NULL };
  CHECK(su_exec(argv, lazy, out, sizeof(out)) == 0, "sh: %s", out);
  CHECK(every_value(out, " registered_bytes=", "0 ", 1) && every_value(out, " registrar=", "pending ", 1),
        "default: nothing registered, no registrar opened: %s", out);
  CHECK(strstr(out, "VmPin: 0 kB") && strstr(out, "VmLck: 0 kB"), "default: nothing pinned: %s", out);
  const char* eager[] = { "PINARENA_STATS=stderr", "PINARENA_REGISTER=eager", NULL };
  CHECK(su_exec(argv, eager, out, sizeof(out)) == 0, "sh eager: %s", out);
  CHECK(every_value(out, " registered_bytes=", "0 ", 0), "eager: chunks registered when mapped: %s", out);
}

static void lookup_registers(void* arg) {
  (void)arg;
  pinarena_stats_t a, b;
  char* p = malloc(5 * MiB);
  memset(p, 1, 5 * MiB);
  pinarena_get_stats(&a);
  pinarena_region_t r;
  int rc = pinarena_lookup(p + 100, 4 * MiB, &r);
  pinarena_get_stats(&b);
  if (rc == -ENODATA) { fprintf(stderr, "registrar %s refused\n", b.registrar); _exit(0); }
  CHILD_CHECK(rc == 0 && r.registered, "lookup: %d", rc);
  CHILD_CHECK(b.registered_bytes > a.registered_bytes, "the lookup registered the chunk");
  CHILD_CHECK(r.length >= 5 * MiB && r.length <= 8 * MiB, "a huge object's registration covers it, page-rounded up to "
              "a power of two: %zu", r.length);
  pinarena_region_t r2;
  CHILD_CHECK(pinarena_lookup(p, 1, &r2) == 0 && r2.lkey == r.lkey, "second lookup: same keys");
  pinarena_stats_t c;
  pinarena_get_stats(&c);
  CHILD_CHECK(c.registered_bytes == b.registered_bytes, "second lookup registered nothing more");
  CHILD_CHECK(pinarena_lookup(p + 5 * MiB + 4096, 1, &r2) == -ENOENT, "past the object's pages: not the shim's");
  free(p);
}

TEST(shim_mem_lookup_registers_lazily) { run_child(lookup_registers, "lookup"); }

static void eager_registers(void* arg) {
  (void)arg;
  char* p = malloc(5 * MiB);
  pinarena_region_t r;
  pinarena_stats_t a, b;
  pinarena_get_stats(&a);
  int rc = pinarena_lookup(p, 1, &r);
  pinarena_get_stats(&b);
  if (rc == -ENODATA) { fprintf(stderr, "registrar %s refused\n", b.registrar); _exit(0); }
  CHILD_CHECK(rc == 0 && b.registered_bytes == a.registered_bytes, "eager: registered when handed out, not on lookup");
  free(p);
}

TEST(shim_mem_eager_registers_when_mapped) {
  const char* v = getenv("PINARENA_REGISTER");
  if (v == NULL || strcmp(v, "eager") != 0) SKIP("run with PINARENA_REGISTER=eager (the lazy default is shim_mem_lookup_registers_lazily)");
  su_result_t r = su_run(eager_registers, NULL);
  CHECK(!r.signaled && r.status == 0, "eager: %s", r.err);
}

/* The program's own pin budget: without CAP_IPC_LOCK and with RLIMIT_MEMLOCK
 * of 3 MiB, a program that mlocks a 2 MiB buffer itself gets it under the
 * shim (lazy: the shim pins nothing it was not asked to). The shim's
 * registrar is mlock here so its pins are charged per process, as the
 * program's are (io_uring charges the user, whom other processes share).
 * Eager registration takes the budget first: the program's mlock fails. */
#include <sys/prctl.h>
#include <linux/capability.h>
static void drop_pin_privilege(void) {
  if (prctl(PR_CAPBSET_DROP, CAP_IPC_LOCK, 0, 0, 0) != 0) _exit(120);   /* gone after exec */
  struct rlimit rl = { 3 << 20, 3 << 20 };
  if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0) _exit(121);
}

static int mlock_program(const char* policy, char* out, size_t cap) {
  /* PINARENA_PAGES=4k: mlock of hugetlb pages is not charged, so ordinary pages */
  const char* lazy[] = { "PINARENA_REGISTRAR=mlock", "PINARENA_REGISTER=lazy", "PINARENA_PAGES=4k", NULL };
  const char* eager[] = { "PINARENA_REGISTRAR=mlock", "PINARENA_REGISTER=eager", "PINARENA_PAGES=4k", NULL };
  char* const argv[] = { "python3", "-c",
    "import ctypes, mmap, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "junk = [bytearray(100000) for _ in range(100)]\n"          /* a few chunks of heap */
    "m = mmap.mmap(-1, 2 << 20)\n"
    "a = ctypes.addressof(ctypes.c_char.from_buffer(m))\n"
    "rc = libc.mlock(ctypes.c_void_p(a), ctypes.c_size_t(2 << 20))\n"
    "print('mlock', rc, ctypes.get_errno())\n"
    "sys.exit(0 if rc == 0 else 3)\n", NULL };
  return su_exec_prepared(argv, strcmp(policy, "eager") == 0 ? eager : lazy, drop_pin_privilege, out, cap);
}

TEST(shim_mem_program_pin_budget_left_alone) {
  lazy_only();
  char out[4096];
  int rc = mlock_program("lazy", out, sizeof(out));
  if (rc == 127) SKIP("python3 is not installed");
  CHECK(rc == 0, "lazy: the program's own mlock(2 MiB) under RLIMIT_MEMLOCK 3 MiB failed (exit %d): %s", rc, out);
  rc = mlock_program("eager", out, sizeof(out));
  CHECK(rc == 3, "eager registration should have taken the budget first (exit %d): %s", rc, out);
}

/* fork and system() with a heap of 1 MiB objects (600 MiB, or three
 * quarters of the free 2 MiB hugetlb pool if more), as under glibc: nothing
 * pinned (lazy), no hugetlb pages for the child to copy. A heap of pinned
 * pool pages bigger than what is left free in the pool cannot fork. */
static void system_with_heap(void* arg) {
  (void)arg;
  size_t N = (size_t)tu_hugetlb_free(2048) * 2 * 3 / 4;
  if (N < 600) N = 600;
  if (N > 4096) N = 4096;
  char** o = mmap(NULL, N * sizeof(char*), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHILD_CHECK(o != MAP_FAILED, "mmap");
  fprintf(stderr, "heap of %zu MiB\n", N);
  for (size_t i = 0; i < N; i++) { o[i] = malloc(MiB); CHILD_CHECK(o[i] != NULL, "malloc"); memset(o[i], (int)i, MiB); }
  for (int r = 0; r < 3; r++) {
    int rc = system("exit 7");
    CHILD_CHECK(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 7, "system() with a %zu MiB heap: %d (errno %d)", N, rc, errno);
  }
  for (size_t i = 0; i < N; i++) { CHILD_CHECK(o[i][MiB - 1] == (char)i, "contents"); free(o[i]); }
}

TEST(shim_mem_system_with_a_big_heap) { run_child(system_with_heap, "system()"); }

/* test_thp.c — what the shim's memory says to transparent huge pages.
 *
 * Under THP "always" (the kernel's build default on Debian, the
 * distribution default on RHEL) the first touch of any 2 MiB-aligned region
 * of an ordinary mapping takes a whole huge page. The shim's regular chunks
 * are 2 MiB-aligned and its owner and span tables are touched sparsely, so
 * there a few small objects held megabytes (mimalloc-bench's glibc-thread,
 * peak: 13.8 MiB against glibc's 2.0 and mimalloc's 4.8). So they refuse
 * huge pages (MADV_NOHUGEPAGE, "nh" in smaps' VmFlags) until a registration
 * asks for them on the range it pins; a huge object's chunk, one dense
 * object, keeps the system's policy, as glibc's own mmap of it does. The
 * flags are checked, not the pages: they do not depend on the machine's THP
 * mode. */
#include "child.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB ((size_t)1 << 20)

/* One mapping of /proc/self/smaps: its range and whether its VmFlags hold
 * "nh" (no huge pages) and "nr" (MAP_NORESERVE). */
typedef struct { uintptr_t start, end; int nh, nr; } vma_t;

/* Calls fn for each mapping of an smaps text; stops early when fn returns nonzero. */
static void each_vma(FILE* f, int (*fn)(const vma_t*, void*), void* arg) {
  char line[512];
  vma_t v = {0, 0, 0, 0};
  int open = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    unsigned long s, e;
    if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      v.start = s; v.end = e; v.nh = v.nr = 0; open = 1;
    } else if (open && strncmp(line, "VmFlags:", 8) == 0) {
      v.nh = strstr(line, " nh") != NULL;
      v.nr = strstr(line, " nr") != NULL;
      open = 0;
      if (fn(&v, arg)) break;
    }
  }
}

typedef struct { uintptr_t addr; vma_t found; int seen; } find_t;

static int find_addr(const vma_t* v, void* arg) {
  find_t* f = arg;
  if (f->addr < v->start || f->addr >= v->end) return 0;
  f->found = *v; f->seen = 1;
  return 1;
}

static vma_t vma_of(const void* p) {
  find_t f = { (uintptr_t)p, {0, 0, 0, 0}, 0 };
  FILE* smaps = fopen("/proc/self/smaps", "r");
  CHILD_CHECK(smaps != NULL, "/proc/self/smaps cannot be read");
  each_vma(smaps, find_addr, &f);
  fclose(smaps);
  CHILD_CHECK(f.seen, "no mapping in /proc/self/smaps holds %p", p);
  return f.found;
}

typedef struct { int noreserve, refusing; uintptr_t bad; } count_t;

static int count_noreserve(const vma_t* v, void* arg) {
  count_t* c = arg;
  if (!v->nr) return 0;
  c->noreserve++;
  if (v->nh) c->refusing++; else if (c->bad == 0) c->bad = v->start;
  return 0;
}

static void small_objects_refuse(void* arg) {
  (void)arg;
  char* small[64];
  for (int i = 0; i < 64; i++) {
    small[i] = malloc(16 + 48 * (size_t)i);
    CHILD_CHECK(small[i] != NULL, "malloc");
    small[i][0] = 1;
  }
  vma_t chunk = vma_of(small[0]);
  CHILD_CHECK(chunk.nh, "the regular chunk of a small object (%p, mapping %#lx-%#lx) does not refuse huge pages "
              "(no \"nh\" in its VmFlags): under THP \"always\" each 2 MiB region it touches is a whole huge page",
              (void*)small[0], (unsigned long)chunk.start, (unsigned long)chunk.end);
  char* huge = malloc(64 * MiB);
  CHILD_CHECK(huge != NULL, "malloc(64 MiB)");
  huge[0] = 1;
  vma_t h = vma_of(huge);
  CHILD_CHECK(!h.nh, "a huge object's chunk (%p) refuses huge pages: it should keep the system's policy", (void*)huge);
  free(huge);
  for (int i = 0; i < 64; i++) free(small[i]);
}

static void skip_unless_default(void) {
  const char* pages = getenv("PINARENA_PAGES");
  if (pages != NULL && strcmp(pages, "auto") != 0)
    SKIP("PINARENA_PAGES set: thp asks every chunk for huge pages, hugetlb takes pool pages, 4k refuses everywhere");
  const char* reg = getenv("PINARENA_REGISTER");
  if (reg != NULL && strcmp(reg, "eager") == 0)
    SKIP("PINARENA_REGISTER=eager: each chunk is registered when mapped, and so asks for huge pages");
}

TEST(shim_thp_small_object_chunks_refuse_huge_pages) {
  skip_unless_default();
  su_child_ok(small_objects_refuse, "THP flags");
}

/* The owner and span tables are a fresh process's only MAP_NORESERVE
 * mappings (huge chunks are the others, and a program without huge objects
 * has none): a program run under the shim (cat, printing its own smaps)
 * shows them, and each must refuse huge pages. In this process earlier
 * tests' huge chunks would be among them. */
TEST(shim_thp_sparse_tables_refuse_huge_pages) {                 /* in every PINARENA_PAGES mode */
  static char out[1 << 20];
  char* argv[] = { "cat", "/proc/self/smaps", NULL };
  CHECK(su_exec(argv, NULL, out, sizeof out) == 0, "cat /proc/self/smaps under the shim: %.300s", out);
  FILE* f = fmemopen(out, strlen(out), "r");
  CHECK(f != NULL, "fmemopen");
  count_t c = {0, 0, 0};
  each_vma(f, count_noreserve, &c);
  fclose(f);
  CHECK(c.noreserve >= 1, "no MAP_NORESERVE mapping in cat's smaps under the shim: where are the owner and span tables?");
  CHECK(c.refusing == c.noreserve, "%d of %d sparse (MAP_NORESERVE) mappings of a program under the shim refuse huge "
        "pages; the first that does not starts at %#lx: under THP \"always\" each 2 MiB region it touches is a whole "
        "huge page", c.refusing, c.noreserve, (unsigned long)c.bad);
}

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
 * object, keeps the system's policy, as glibc's own mmap of it does, but
 * under "always" the 2 MiB regions at the object's edges refuse (the
 * header's, the end's: glibc's mapping ends with the object). The flags are
 * checked, and where the machine's THP mode matters the test sets it (as
 * root) for one program, pinarena-thp-probe, and restores it. */
#include "child.h"
#include "kernel_view.h"

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
  huge[32 * MiB] = 1;
  vma_t h = vma_of(huge + 32 * MiB);
  CHILD_CHECK(!h.nh, "a huge object's chunk refuses huge pages inside the object (%p): it should keep the system's "
              "policy there", (void*)(huge + 32 * MiB));
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

/* ---- a huge object's edges, with the system's THP mode set -------------- */

#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

/* The mode the brackets mark in THP_ENABLED ("always [madvise] never"): 0, or -1. */
static int thp_mode_read(char* mode, size_t cap) {
  char line[128];
  if (tu_sysfs_read_line(THP_ENABLED, line, sizeof line) != 0) return -1;
  char* open_ = strchr(line, '[');
  char* close_ = open_ ? strchr(open_, ']') : NULL;
  if (close_ == NULL || (size_t)(close_ - open_) > cap) return -1;
  memcpy(mode, open_ + 1, (size_t)(close_ - open_ - 1));
  mode[close_ - open_ - 1] = 0;
  return 0;
}

typedef struct { int moved, head_nh, interior_nh, tail_nh, one_mapping; unsigned long rss_kb, object_kb, vmlck_kb; } probe_t;

static int probe_parse(const char* line, probe_t* p) {
  return sscanf(line, "moved=%d head_nh=%d interior_nh=%d tail_nh=%d one_mapping=%d rss_kb=%lu object_kb=%lu vmlck_kb=%lu",
                &p->moved, &p->head_nh, &p->interior_nh, &p->tail_nh, &p->one_mapping, &p->rss_kb, &p->object_kb,
                &p->vmlck_kb) == 8;
}

/* pinarena-thp-probe ARGS under the shim, with the system's THP mode set
 * to `mode` for it (and back): what it printed. A machine where the mode
 * cannot be set (no THP in the kernel, not root) skips, saying so. */
static const char* probe_exec(const char* mode, char* const* args) {
  static char out[8192];
  char was[32];
  if (thp_mode_read(was, sizeof was) != 0) SKIP("no " THP_ENABLED ": the kernel has no transparent huge pages");
  int wrote = tu_sysfs_write_text(THP_ENABLED, mode);
  if (wrote != 0)
    SKIP("cannot write " THP_ENABLED " (%s): the test sets the system's THP mode for one program, as root", strerror(-wrote));
  char path[512];
  snprintf(path, sizeof path, "%s/pinarena-thp-probe", getenv("PINARENA_BUILD") ? getenv("PINARENA_BUILD") : ".");
  char* argv[8] = { path };
  for (int i = 0; args[i] != NULL && i < 6; i++) argv[i + 1] = args[i];
  int rc = su_exec(argv, NULL, out, sizeof out);
  wrote = tu_sysfs_write_text(THP_ENABLED, was);
  CHECK(wrote == 0, "could not set " THP_ENABLED " back to %s: %s", was, strerror(-wrote));
  CHECK(rc == 0, "%s under THP \"%s\": exit %d: %.300s", path, mode, rc, out);
  return out;
}

/* pinarena-thp-probe with sizes (then "mlock" or nothing): one line per size into lines[]. */
static void probe_sizes(const char* mode, char* const* args, probe_t* lines, int nlines) {
  const char* out = probe_exec(mode, args);
  const char* line = out;
  for (int i = 0; i < nlines; i++) {
    CHECK(line != NULL && probe_parse(line, &lines[i]), "pinarena-thp-probe printed: %.300s", out);
    line = strchr(line, '\n');
    if (line != NULL) line++;
  }
}

/* 9 MiB + 100 KiB (not on a 2 MiB boundary), then GROWN [mlock]: two lines. */
static void probe_run(const char* mode, char* grown_bytes, char* lock, probe_t* first, probe_t* grown) {
  char* args[] = { "9539584", grown_bytes, lock, NULL };
  probe_t lines[2];
  probe_sizes(mode, args, lines, 2);
  *first = lines[0];
  *grown = lines[1];
}

/* The same, grown in place to 13 MiB + 300 KiB (the chunk has room). */
static void probe_under(const char* mode, probe_t* first, probe_t* grown) {
  probe_run(mode, "13938688", NULL, first, grown);
  CHECK(!grown->moved, "realloc moved the object, which its chunk had room for");
}

/* Under "always" the regions at the object's edges refuse: its first (with
 * the header page) and the one holding its end, before and after a growth
 * in place; the regions it fills keep the system's policy. What the chunk
 * holds near the object is the object's pages and the header's, not a huge
 * page past its end (seen before: 1.9 MiB more for each). */
TEST(shim_thp_huge_object_edges_refuse_under_always) {
  skip_unless_default();
  probe_t a, b;
  probe_under("always", &a, &b);
  CHECK(a.head_nh && a.tail_nh, "under THP \"always\" a huge object's first region (nh %d) and last (nh %d) must refuse "
        "huge pages: the header page and the room past its end would take a whole huge page each", a.head_nh, a.tail_nh);
  CHECK(!a.interior_nh, "under THP \"always\" the region 2 MiB into a 9 MiB object refuses huge pages: it lies inside "
        "the object and should keep the system's policy");
  CHECK(b.tail_nh, "after realloc grew it in place, the region holding the object's end does not refuse huge pages");
  CHECK(a.rss_kb <= a.object_kb + 64, "a 9 MiB object holds %lu kB around it against its %lu kB of pages", a.rss_kb, a.object_kb);
  CHECK(b.rss_kb <= b.object_kb + 64, "grown to 13 MiB, the object holds %lu kB around it against its %lu kB of pages",
        b.rss_kb, b.object_kb);
  NOTE("9 MiB object: %lu kB held for %lu kB; grown to 13 MiB: %lu kB for %lu kB", a.rss_kb, a.object_kb, b.rss_kb, b.object_kb);
}

/* Under "always" a huge object that starts within the chunk's first two
 * regions (1.1 MiB, then 2.9 MiB: moved into a chunk with room) refuses
 * only its edges too, so grown in place to 13 MiB it keeps the system's
 * policy in the regions it now fills. Before: such a chunk refused huge
 * pages whole, and perf/native `regrow` under "always" faulted 4 KiB pages
 * up to 58 MiB (17 930 faults against glibc's 7 813, 1.06 x its time). */
TEST(shim_thp_small_huge_object_grown_keeps_policy_inside) {
  skip_unless_default();
  char* args[] = { "1153433", "3000000", "13938688", NULL };
  probe_t l[3];
  probe_sizes("always", args, l, 3);
  CHECK(l[1].moved && !l[2].moved, "want 2.9 MiB moved into a chunk with room and 13 MiB grown in place: moved %d, %d",
        l[1].moved, l[2].moved);
  CHECK(!l[2].interior_nh, "under THP \"always\" a 1.1 MiB object grown to 13 MiB refuses huge pages in its middle: its "
        "chunk refused them whole while the object was small");
  CHECK(l[2].head_nh && l[2].tail_nh, "grown to 13 MiB, the object's edges (nh %d, %d) no longer refuse", l[2].head_nh,
        l[2].tail_nh);
  CHECK(l[2].rss_kb <= l[2].object_kb + 64, "grown to 13 MiB, the object holds %lu kB around it against its %lu kB",
        l[2].rss_kb, l[2].object_kb);
}

/* Under "madvise" no region of a huge chunk gets a huge page unasked: its
 * edges are left alone, and the chunk stays one mapping (a split would
 * cost two system calls, two of the process's mappings, and a realloc
 * that moves the object an mremap across three of them). */
TEST(shim_thp_huge_object_one_mapping_under_madvise) {
  skip_unless_default();
  probe_t a, b;
  probe_under("madvise", &a, &b);
  CHECK(a.one_mapping && !a.head_nh && !a.tail_nh && b.one_mapping,
        "under THP \"madvise\" a huge object's chunk was split (one mapping %d / %d, head nh %d, tail nh %d)",
        a.one_mapping, b.one_mapping, a.head_nh, a.tail_nh);
}

/* Under "always" a huge object spans several mappings (its refused edges).
 * Locked by the program and grown past its chunk's room (300 MiB), its
 * pages move (mremap): the lock goes with them and is counted once, as with
 * one mapping (before: the unlock for the move wanted a single mapping, and
 * VmLck counted the 9 MiB twice). */
TEST(shim_thp_split_huge_object_moves_locked_once) {
  skip_unless_default();
  if (!strcmp(pinarena_registrar(), "mlock")) SKIP("the mlock registrar locks the heap itself: VmLck is its own");
  probe_t a, b;
  probe_run("always", "314572800", "mlock", &a, &b);
  CHECK(!a.one_mapping, "under THP \"always\" the 9 MiB object is one mapping: its edges do not refuse huge pages");
  CHECK(b.moved, "realloc to 300 MiB did not move the object's pages");
  CHECK(b.vmlck_kb == a.vmlck_kb + a.object_kb, "after the move VmLck is %lu kB, want %lu (%lu before, the object %lu): "
        "the lock is lost or counted twice", b.vmlck_kb, a.vmlck_kb + a.object_kb, a.vmlck_kb, a.object_kb);
}

/* ---- a heap of regular chunks, with the system's THP mode set ----------- */

/* pinarena-thp-probe heap HOW under `mode`: whether the mappings of the
 * heap's first and last object refuse huge pages. */
static void heap_probe(const char* mode, char* how, int* first_nh, int* last_nh) {
  char* args[] = { "heap", how, NULL };
  const char* out = probe_exec(mode, args);
  CHECK(sscanf(out, "first_nh=%d last_nh=%d", first_nh, last_nh) == 2, "pinarena-thp-probe heap %s printed: %.300s",
        how, out);
}

/* A program that fills what it maps (326 MiB of 928 KiB objects, every
 * page written; under half a huge page, so they take refusing chunks):
 * under "always", once its regular chunks span 64 MiB with 7/8 of the
 * refusing ones' pages resident, new chunks keep the
 * system's policy (perf/native `phased` under "always": 0.171 s -> 0.085,
 * mimalloc 0.059); its first chunk still refuses. Fails on a build whose
 * regular chunks all refuse. */
TEST(shim_thp_dense_heap_keeps_policy_under_always) {
  skip_unless_default();
  int first_nh, last_nh;
  heap_probe("always", "dense", &first_nh, &last_nh);
  CHECK(first_nh, "under THP \"always\" the first chunk of a heap refuses no huge pages: a small program's spans "
        "would each make a 2 MiB region resident");
  CHECK(!last_nh, "under THP \"always\" a heap of 326 MiB, every page written, still refuses huge pages in its "
        "newest chunk");
}

/* Every chunk of the heap pinarena-thp-probe builds (`how`) under `mode`
 * refuses huge pages, its first and its newest. */
static void heap_refuses(const char* mode, char* how, const char* why) {
  skip_unless_default();
  int first_nh, last_nh;
  heap_probe(mode, how, &first_nh, &last_nh);
  CHECK(first_nh && last_nh, "under THP \"%s\" a %s heap's chunks keep the system's policy (first nh %d, newest nh "
        "%d): %s", mode, how, first_nh, last_nh, why);
}

/* A sparse program (one written 4 KiB object per 2 MiB region, 320 MiB of
 * chunks): every chunk refuses, or each object would hold a whole huge
 * page (perf/native `aligned` under "always": 226 MiB against 69 with a
 * rule on the sheer size of the heap). */
TEST(shim_thp_sparse_heap_refuses_under_always) {
  heap_refuses("always", "sparse", "2 % of its pages are written, each 4 KiB object would hold a 2 MiB page");
}

/* Under "madvise" no region gets a huge page unasked: the dense heap's
 * chunks refuse as before, without a read of their residency. */
TEST(shim_thp_dense_heap_refuses_under_madvise) {
  heap_refuses("madvise", "dense", "under \"madvise\" the advice was to stay as it was");
}

/* pinarena-thp-probe heap mixed under `mode`: whether its 1 MiB, 600 KiB
 * and 100-byte objects lie in mappings refusing huge pages. */
static void mixed_probe(const char* mode, int* big_nh, int* mid_nh, int* small_nh) {
  skip_unless_default();
  char* args[] = { "heap", "mixed", NULL };
  const char* out = probe_exec(mode, args);
  CHECK(sscanf(out, "big_nh=%d mid_nh=%d small_nh=%d", big_nh, mid_nh, small_nh) == 3,
        "pinarena-thp-probe heap mixed printed: %.300s", out);
}

/* Under "always" a large object of half a huge page or more takes chunks
 * that keep the system's policy from the first one, as glibc's heap gives
 * its arrays huge pages: it fills at least half of each region it takes
 * (hpcc's FFT over rxe0, whose 1 MiB arrays sat on 4 KiB pages: 1.09 x
 * glibc's time). Smaller objects still take refusing chunks, never the
 * untouched slices of those (a 100-byte object there would have made a
 * 2 MiB region resident); and a big object does not take the slices freed
 * objects left resident in a refusing chunk (the probe frees 16 of 600 KiB
 * first): it would keep their 4 KiB pages as long as it lives. Fails on a
 * build where a large object of 1 MiB takes a refusing chunk, fresh or
 * freed, and on one where a small span takes a chunk keeping the policy. */
TEST(shim_thp_big_large_objects_keep_policy_under_always) {
  int big_nh, mid_nh, small_nh;
  mixed_probe("always", &big_nh, &mid_nh, &small_nh);
  CHECK(!big_nh, "under THP \"always\" a 1 MiB object lies in a chunk refusing huge pages");
  CHECK(mid_nh, "under THP \"always\" a 600 KiB object (under half a huge page) lies in a chunk keeping the policy");
  CHECK(small_nh, "under THP \"always\" a 100-byte object lies in a chunk keeping the policy: each such object "
        "could make a 2 MiB region resident");
}

/* Under "madvise" every regular chunk refuses, whatever its objects' size. */
TEST(shim_thp_mixed_heap_refuses_under_madvise) {
  int big_nh, mid_nh, small_nh;
  mixed_probe("madvise", &big_nh, &mid_nh, &small_nh);
  CHECK(big_nh && mid_nh && small_nh, "under THP \"madvise\" a regular chunk keeps the system's policy (nh 1 MiB %d, "
        "600 KiB %d, 100 B %d)", big_nh, mid_nh, small_nh);
}

/* test_own_memory.c — what the program does to its malloc'd memory (src/shim/program.h):
 * its madvise keeps the frames (pagemap) with the contents glibc's memory
 * would have, unmapping or replacing malloc'd memory aborts with a message,
 * and page attributes it set (mprotect, DONTFORK, WIPEONFORK, mlock) do not
 * outlive free: the next owner of the memory gets default pages. */
#define _GNU_SOURCE
#include "child.h"
#include "kernel_view.h"
#include "sent_bytes.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)
#define PGS (MiB / 4096)
#define GUARD_INSTALL 102                  /* MADV_GUARD_INSTALL, Linux 6.13+ */


static uint64_t pf_before[PGS], pf_after[PGS];

/* A 1 MiB page-aligned object filled with 'O', registered by a lookup (so
 * a device would hold its frames), and its frames. */
static char* filled_object(void) {
  char* p = aligned_alloc(4096, MiB);
  CHECK(p != NULL, "aligned_alloc");
  memset(p, 'O', MiB);
  pinarena_region_t r;
  int rc = pinarena_lookup(p, MiB, &r);
  NOTE("lookup: %d (registrar %s)", rc, pinarena_registrar());
  tu_pfns(p, PGS, pf_before);
  return p;
}

static void same_frames(char* p, const char* after) {
  memset(p, 'N', MiB);
  tu_pfns(p, PGS, pf_after);
  size_t moved = 0;
  for (size_t i = 0; i < PGS; i++) moved += pf_before[i] != pf_after[i];
  CHECK(moved == 0, "after %s %zu of %zu pages have new frames (a registration keeps the old ones)", after, moved, PGS);
}

TEST(shim_own_madvise_dontneed_zeroes_in_place) {
  char* p = filled_object();
  CHECK(madvise(p, MiB, MADV_DONTNEED) == 0, "madvise(DONTNEED): %s", strerror(errno));
  CHECK(tu_count(p, MiB, 0) == MiB, "after DONTNEED the range reads as zeroes (as glibc's memory): first non-zero at %ld",
        tu_first_not(p, MiB, 0));
  same_frames(p, "MADV_DONTNEED");
  free(p);
}

TEST(shim_own_madvise_free_remove_guard_keep_frames) {
  char* p = filled_object();
  CHECK(madvise(p, MiB, MADV_FREE) == 0, "madvise(FREE): %s", strerror(errno));
  long z = tu_first_not(p, MiB, 'O');
  size_t zeroes = tu_count(p, MiB, 0);
  CHECK(z < 0 || zeroes == MiB, "after FREE the bytes are kept or zero (as glibc's memory), not a mix: %zu zero bytes", zeroes);
  errno = 0;
  CHECK(madvise(p, MiB, MADV_REMOVE) == -1 && errno == EINVAL, "madvise(REMOVE): EINVAL as on private anonymous memory, "
        "got %s", strerror(errno));
  errno = 0;
  int g = madvise(p, MiB, GUARD_INSTALL);
  CHECK(g == -1 && errno == EINVAL, "madvise(GUARD_INSTALL) over malloc'd memory: %d (%s), want -1 EINVAL (it drops the pages)",
        g, strerror(errno));
  same_frames(p, "MADV_FREE, MADV_REMOVE, MADV_GUARD_INSTALL");
  free(p);
}

static char* object_for_abort(void) {
  char* p = aligned_alloc(4096, MiB);
  CHECK(p != NULL, "aligned_alloc");
  memset(p, 'O', MiB);
  return p;
}

TEST(shim_own_munmap_of_malloc_memory_aborts) {
  char* p = object_for_abort();
  su_expect_abort(su_munmap_mib, p, "munmap(): would unmap memory of malloc at", p);
}

TEST(shim_own_mmap_fixed_over_malloc_memory_aborts) {
  char* p = object_for_abort();
  su_expect_abort(su_mmap_fixed_mib, p, "mmap(): MAP_FIXED would replace memory of malloc at", p);
}

TEST(shim_own_mremap_of_malloc_memory_aborts) {
  char* p = object_for_abort();
  su_expect_abort(su_mremap_mib, p, "mremap(): would move memory of malloc at", p);
}

/* ---- attributes do not outlive free ------------------------------------- */

#define BIG (8 * MiB)

/* A page-aligned buffer of `size` that covers `old` (the memory freed
 * before): the shim hands freed memory out again; the others are kept. */
static char* again(char* old, size_t size, int zeroed) {
  for (int i = 0; i < 16; i++) {
    char* q = zeroed ? calloc(1, size) : aligned_alloc(4096, size);
    CHILD_CHECK(q != NULL, "allocation %d failed", i);
    if (q <= old && old < q + size) return q;
  }
  CHILD_CHECK(0, "16 allocations of %zu bytes: none reuses the freed memory at %p", size, (void*)old);
  return NULL;
}

static void readonly_page(void* arg) {
  (void)arg;
  char* p = aligned_alloc(4096, BIG);
  memset(p, 1, BIG);
  CHILD_CHECK(mprotect(p + 5 * 4096, 4096, PROT_READ) == 0, "mprotect");
  free(p);
  char* q = again(p, BIG, 0);
  memset(q, 2, BIG);                       /* the next owner writes all of it */
}
TEST(shim_attr_readonly_page_reset_on_free) { su_child_ok(readonly_page, "PROT_READ page, freed, reused"); }

static void guard_page(void* arg) {
  (void)arg;
  char* p = aligned_alloc(4096, BIG);
  memset(p, 1, BIG);
  CHILD_CHECK(mprotect(p + BIG - 4096, 4096, PROT_NONE) == 0, "mprotect");
  free(p);
  char* q = again(p, BIG, 1);
  CHILD_CHECK(tu_count(q, BIG, 0) == BIG, "calloc: not zero at %ld", tu_first_not(q, BIG, 0));
  memset(q, 2, BIG);
}
TEST(shim_attr_guard_page_reset_on_free) { su_child_ok(guard_page, "PROT_NONE guard page, freed, calloc"); }

static void dontfork(void* arg) {
  (void)arg;
  char* p = aligned_alloc(4096, BIG);
  memset(p, 1, BIG);
  CHILD_CHECK(madvise(p, BIG, MADV_DONTFORK) == 0, "madvise(DONTFORK)");
  free(p);
  su_fork_reads(again(p, BIG, 0), BIG, 'D');
}
TEST(shim_attr_dontfork_reset_on_free) { su_child_ok(dontfork, "MADV_DONTFORK, freed, reused, fork"); }

static void wipeonfork(void* arg) {
  (void)arg;
  char* p = aligned_alloc(4096, BIG);
  memset(p, 1, BIG);
  CHILD_CHECK(madvise(p, BIG, MADV_WIPEONFORK) == 0, "madvise(WIPEONFORK)");
  free(p);
  su_fork_reads(again(p, BIG, 0), BIG, 'W');
}
TEST(shim_attr_wipeonfork_reset_on_free) { su_child_ok(wipeonfork, "MADV_WIPEONFORK, freed, reused, fork"); }

static void mlocked(void* arg) {
  (void)arg;
  uint64_t base = tu_status_kb("VmLck");
  char* p = aligned_alloc(4096, BIG);
  memset(p, 1, BIG);
  CHILD_CHECK(mlock(p, BIG) == 0, "mlock: %s", strerror(errno));
  uint64_t locked = tu_status_kb("VmLck");
  CHILD_CHECK(locked >= base + BIG / 1024, "mlock: VmLck %llu kB from %llu", (unsigned long long)locked, (unsigned long long)base);
  free(p);
  uint64_t after = tu_status_kb("VmLck");
  fprintf(stderr, "VmLck %llu kB, mlocked %llu kB, after free %llu kB\n", (unsigned long long)base,
          (unsigned long long)locked, (unsigned long long)after);
  CHILD_CHECK(after == base, "VmLck after free %llu kB, before the buffer %llu kB: the freed buffer stays locked",
              (unsigned long long)after, (unsigned long long)base);
}
TEST(shim_attr_mlock_reset_on_free) {
  if (!strcmp(pinarena_registrar(), "mlock")) SKIP("the mlock registrar locks the heap itself: VmLck is its own");
  su_child_ok(mlocked, "mlock, freed");
}

static void readonly_large(void* arg) {
  (void)arg;
  char* p = aligned_alloc(4096, MiB);
  memset(p, 1, MiB);
  CHILD_CHECK(mprotect(p, MiB, PROT_READ) == 0, "mprotect");
  free(p);
  /* small objects over the freed slices (2 MiB of 48-byte blocks), then a large one again */
  for (int i = 0; i < 45000; i++) {
    char* b = malloc(48);
    CHILD_CHECK(b != NULL, "malloc(48)");
    memset(b, 3, 48);
  }
  char* q = malloc(MiB);
  memset(q, 4, MiB);
}
TEST(shim_attr_readonly_large_buffer_reset_on_free) { su_child_ok(readonly_large, "read-only 1 MiB buffer, freed, malloc(48)"); }

/* DONTNEED over a page the program made read-only: zero, as on glibc's memory, and still read-only. */
static void dontneed_readonly(void* arg) {
  (void)arg;
  char* p = aligned_alloc(4096, MiB);
  memset(p, 'O', MiB);
  CHILD_CHECK(mprotect(p + 4096, 4096, PROT_READ) == 0, "mprotect");
  CHILD_CHECK(madvise(p, MiB, MADV_DONTNEED) == 0, "madvise: %s", strerror(errno));
  CHILD_CHECK(tu_count(p, MiB, 0) == MiB, "not zero at %ld", tu_first_not(p, MiB, 0));
  pid_t pid = fork();
  if (pid == 0) { p[4096] = 1; _exit(0); }   /* must fault: the page stays read-only */
  int st;
  CHILD_CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
              "a write to the read-only page after DONTNEED did not fault");
  free(p);
}
TEST(shim_own_madvise_dontneed_over_readonly_page) { su_child_ok(dontneed_readonly, "DONTNEED over a read-only page"); }

/* ---- DONTNEED and FREE over pages the program locked: the kernel's answer -- */

/* Pages 4..7 of an 8-page range locked, then DONTNEED, FREE and
 * DONTNEED_LOCKED over all of it: the return, errno and which pages read
 * as zero after each, in one word per call. */
typedef struct { int ret, err; uint32_t zero_pages; } locked_answer_t;

static uint32_t zero_pages(const char* p) {
  uint32_t z = 0;
  for (int i = 0; i < 8; i++) if (tu_count(p + i * 4096, 4096, 0) == 4096) z |= 1u << i;
  return z;
}

static void advise_locked(char* p, int advice, locked_answer_t* out) {
  memset(p, 'O', 8 * 4096);
  errno = 0;
  out->ret = madvise(p, 8 * 4096, advice);
  out->err = errno;
  out->zero_pages = zero_pages(p);
}

TEST(shim_own_madvise_over_mlocked_pages_as_the_kernel) {
  if (!strcmp(pinarena_registrar(), "mlock")) SKIP("the mlock registrar locks the heap itself: its lock hides the program's");
  static const int advice[3] = { MADV_DONTNEED, MADV_FREE, MADV_DONTNEED_LOCKED };
  static const char* name[3] = { "DONTNEED", "FREE", "DONTNEED_LOCKED" };
  /* the kernel's answer, on a private anonymous mapping (what glibc's memory is) */
  char* k = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(k != MAP_FAILED, "mmap");
  char* p = aligned_alloc(4096, MiB);
  CHECK(p != NULL, "aligned_alloc");
  CHECK(mlock(k + 4 * 4096, 4 * 4096) == 0 && mlock(p + 4 * 4096, 4 * 4096) == 0, "mlock: %s", strerror(errno));
  for (int i = 0; i < 3; i++) {
    locked_answer_t want, got;
    advise_locked(k, advice[i], &want);
    advise_locked(p, advice[i], &got);
    NOTE("%s: kernel %d (%s) zero pages 0x%02x; shim %d (%s) zero pages 0x%02x", name[i], want.ret,
         strerror(want.err), want.zero_pages, got.ret, strerror(got.err), got.zero_pages);
    CHECK(got.ret == want.ret && (want.ret == 0 || got.err == want.err) && got.zero_pages == want.zero_pages,
          "madvise(%s) over malloc'd memory with pages 4-7 locked: %d (%s), zero pages 0x%02x; the kernel on private "
          "anonymous memory: %d (%s), zero pages 0x%02x", name[i], got.ret, strerror(got.err), got.zero_pages,
          want.ret, strerror(want.err), want.zero_pages);
  }
  munlock(p, MiB);
  free(p);
}

/* ---- a huge object moved by realloc takes its attributes' reset along ---- */

#define HUGE_OLD (8 * MiB)
#define HUGE_NEW (257 * MiB)            /* past the room of the old object's chunk (16 times its size: chunk.c) */

/* A huge object changed by `change`, grown by realloc past its chunk: its
 * pages move (same frames at the new address, checked), with what the
 * program set on them. */
static char* moved_huge(int (*change)(char*, size_t)) {
  char* p = malloc(HUGE_OLD);
  CHILD_CHECK(p != NULL && ((uintptr_t)p & 4095) == 0, "malloc(8 MiB): %p", (void*)p);
  memset(p, 1, HUGE_OLD);
  CHILD_CHECK(change(p, HUGE_OLD) == 0, "changing the object's pages: %s", strerror(errno));
  uint64_t f0, f1;
  tu_pfns(p, 1, &f0);
  char* q = realloc(p, HUGE_NEW);
  CHILD_CHECK(q != NULL && q != p, "realloc to 257 MiB did not move the object (%p -> %p)", (void*)p, (void*)q);
  tu_pfns(q, 1, &f1);
  CHILD_CHECK(f0 == f1, "realloc copied the object (frame 0x%llx -> 0x%llx): its pages did not move",
              (unsigned long long)f0, (unsigned long long)f1);
  return q;
}

static int set_dontfork(char* p, size_t n) { return madvise(p, n, MADV_DONTFORK); }
static int set_mlock(char* p, size_t n) { return mlock(p, n); }

static void moved_dontfork(void* arg) {
  (void)arg;
  char* q = moved_huge(set_dontfork);
  free(q);
  char* r = malloc(HUGE_NEW);
  CHILD_CHECK(r == q, "malloc(257 MiB) after free did not reuse the moved object's chunk (%p, was %p)", (void*)r, (void*)q);
  su_fork_reads(r, BIG, 'M');
}
TEST(shim_attr_moved_huge_dontfork_reset_on_free) {
  su_child_ok(moved_dontfork, "MADV_DONTFORK, realloc moved the object, freed, reused, fork");
}

static void moved_mlock(void* arg) {
  (void)arg;
  uint64_t base = tu_status_kb("VmLck");
  char* q = moved_huge(set_mlock);
  uint64_t locked = tu_status_kb("VmLck");
  free(q);
  uint64_t after = tu_status_kb("VmLck");
  fprintf(stderr, "VmLck %llu kB, moved and locked %llu kB, after free %llu kB\n", (unsigned long long)base,
          (unsigned long long)locked, (unsigned long long)after);
  CHILD_CHECK(locked == base + HUGE_OLD / 1024, "after the move VmLck is %llu kB, want %llu: the lock is lost or counted "
              "twice", (unsigned long long)locked, (unsigned long long)(base + HUGE_OLD / 1024));
  CHILD_CHECK(after == base, "VmLck after free of the moved object %llu kB, before it %llu kB: it stays locked",
              (unsigned long long)after, (unsigned long long)base);
}
TEST(shim_attr_moved_huge_mlock_reset_on_free) {
  if (!strcmp(pinarena_registrar(), "mlock")) SKIP("the mlock registrar locks the heap itself: VmLck is its own");
  su_child_ok(moved_mlock, "mlock, realloc moved the object, freed");
}

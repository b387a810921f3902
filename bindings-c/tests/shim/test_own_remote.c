/* test_own_remote.c — what the program does to its remote buffers
 * (pinarena_alloc_remote; src/shim/program.h): the same rules as for its
 * malloc'd memory (test_own_memory.c). Its madvise keeps the frames
 * (pagemap) with the contents glibc's memory would have, unmapping or
 * replacing a remote buffer aborts with a message, and page attributes it
 * set do not outlive pinarena_free_remote. On the host the remote buffers
 * have no keys (registrar io_uring or none); what a peer receives after the
 * madvise is tested on rxe0 (tests/remote/test_remote.c). */
#define _GNU_SOURCE
#include "child.h"
#include "kernel_view.h"
#include "sent_bytes.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)
#define PGS (MiB / 4096)
#define RW (PINARENA_REMOTE_READ | PINARENA_REMOTE_WRITE)

static uint64_t pf_before[PGS], pf_after[PGS];

static char* remote_filled(void) {
  char* p = pinarena_alloc_remote(MiB, RW);
  CHECK(p != NULL, "pinarena_alloc_remote: %s", strerror(errno));
  CHECK(((uintptr_t)p & 4095) == 0, "a 1 MiB remote buffer starts a page: %p", (void*)p);
  memset(p, 'O', MiB);
  return p;
}

TEST(shim_own_remote_madvise_dontneed_zeroes_in_place) {
  char* p = remote_filled();
  NOTE("registrar %s, remote keys %s", pinarena_registrar(), pinarena_remote_keys());
  tu_pfns(p, PGS, pf_before);
  CHECK(madvise(p, MiB, MADV_DONTNEED) == 0, "madvise(DONTNEED): %s", strerror(errno));
  CHECK(tu_count(p, MiB, 0) == MiB, "after DONTNEED the buffer reads as zeroes (as glibc's memory): first non-zero at %ld",
        tu_first_not(p, MiB, 0));
  memset(p, 'N', MiB);
  tu_pfns(p, PGS, pf_after);
  size_t moved = 0;
  for (size_t i = 0; i < PGS; i++) moved += pf_before[i] != pf_after[i];
  CHECK(moved == 0, "after MADV_DONTNEED %zu of %zu pages of the remote buffer have new frames (its key keeps the old "
        "ones)", moved, PGS);
  errno = 0;
  CHECK(madvise(p, MiB, MADV_REMOVE) == -1 && errno == EINVAL, "madvise(REMOVE): EINVAL as on private anonymous "
        "memory, got %s", strerror(errno));
  CHECK_OK("pinarena_free_remote", pinarena_free_remote(p));
}

/* munmap, mmap(MAP_FIXED) and mremap over a remote buffer, each in a child of its own. */
TEST(shim_own_remote_unmaps_abort) {
  static const struct { void (*call)(void*); const char* want; } calls[] = {
    { su_munmap_mib, "munmap(): would unmap memory of pinarena_alloc_remote at" },
    { su_mmap_fixed_mib, "mmap(): MAP_FIXED would replace memory of pinarena_alloc_remote at" },
    { su_mremap_mib, "mremap(): would move memory of pinarena_alloc_remote at" },
  };
  char* p = remote_filled();
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) su_expect_abort(calls[i].call, p, calls[i].want, p);
}

/* ---- attributes do not outlive pinarena_free_remote --------------------- */

/* The buffer freed, then the next one of that size: the same memory. */
static char* freed_and_again(char* p) {
  CHILD_CHECK(pinarena_free_remote(p) == 0, "pinarena_free_remote: %s", strerror(errno));
  char* q = pinarena_alloc_remote(MiB, RW);
  CHILD_CHECK(q == p, "the freed remote buffer %p was not reused (got %p)", (void*)p, (void*)q);
  CHILD_CHECK(tu_count(q, MiB, 0) == MiB, "the reused buffer is not zero at %ld", tu_first_not(q, MiB, 0));
  return q;
}

static void readonly_page(void* arg) {
  (void)arg;
  char* p = remote_filled();
  CHILD_CHECK(mprotect(p + 5 * 4096, 4096, PROT_READ) == 0, "mprotect: %s", strerror(errno));
  memset(freed_and_again(p), 2, MiB);        /* the next owner writes all of it */
}
TEST(shim_own_remote_readonly_page_reset_on_free) {
  su_child_ok(readonly_page, "PROT_READ page of a remote buffer, freed, allocated again");
}

static void dontfork(void* arg) {
  (void)arg;
  char* p = remote_filled();
  CHILD_CHECK(madvise(p, MiB, MADV_DONTFORK) == 0, "madvise(DONTFORK): %s", strerror(errno));
  su_fork_reads(freed_and_again(p), MiB, 'D');
}
TEST(shim_own_remote_dontfork_reset_on_free) {
  su_child_ok(dontfork, "MADV_DONTFORK on a remote buffer, freed, allocated again, fork");
}

static void mlocked(void* arg) {
  (void)arg;
  uint64_t base = tu_status_kb("VmLck");
  char* p = remote_filled();
  CHILD_CHECK(mlock(p, MiB) == 0, "mlock: %s", strerror(errno));
  uint64_t locked = tu_status_kb("VmLck");
  CHILD_CHECK(pinarena_free_remote(p) == 0, "pinarena_free_remote: %s", strerror(errno));
  uint64_t after = tu_status_kb("VmLck");
  fprintf(stderr, "VmLck %llu kB, mlocked %llu kB, after free %llu kB\n", (unsigned long long)base,
          (unsigned long long)locked, (unsigned long long)after);
  CHILD_CHECK(locked >= base + MiB / 1024, "mlock did not lock the remote buffer");
  CHILD_CHECK(after == base, "VmLck after pinarena_free_remote %llu kB, before the buffer %llu kB: the freed buffer "
              "stays locked", (unsigned long long)after, (unsigned long long)base);
}
TEST(shim_own_remote_mlock_reset_on_free) { su_child_ok(mlocked, "mlock of a remote buffer, freed"); }

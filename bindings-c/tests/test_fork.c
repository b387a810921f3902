/* test_fork.c — what fork does to registered memory.
 *
 * Question: MADV_DONTFORK on registered chunks, or rely on the kernel, which
 * (anonymous memory since about 5.9, hugetlb shortly after) gives the child a
 * COPY of any page that may be DMA-pinned instead of sharing it copy-on-write?
 * The tests below answer it on the running kernel; see FORK.md. */
#include "sent_bytes.h"
#include "kernel_view.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define FK_LEN (4 * PA_MiB)
#define FK_PAGES (FK_LEN / 4096)

static uint64_t fk_pfn_parent[FK_PAGES], fk_pfn_now[FK_PAGES], fk_pfn_child[FK_PAGES];

static void wait_byte(int fd) { char c; CHECK(read(fd, &c, 1) == 1, "pipe"); }
static void send_byte(int fd) { char c = 1; CHECK(write(fd, &c, 1) == 1, "pipe"); }

static int child_exit_status(pid_t pid) {
  int st;
  CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
  return st;
}

/* pinned (io_uring) chunk: fork, parent writes while the child lives, child checks its snapshot */
static void fork_pinned(pa_backing_t backing) {
  pa_mapping_t c;
  int rc = pa_os_map_chunk(FK_LEN, &backing, 1, &c);
  if (rc != 0 && backing == PA_BACK_HUGETLB_2M)
    SKIP("no free 2 MiB hugepages (echo 512 > /proc/sys/vm/nr_hugepages)");
  CHECK_OK("pa_os_map_chunk", rc);
  pa_uring_t u;
  tu_uring(&u);
  pa_uring_reg_t r;
  CHECK_OK("io_uring_register", pa_uring_register(&u, c.addr, c.size, &r));
  memset(c.addr, 'P', FK_LEN);
  tu_pfns(c.addr, FK_PAGES, fk_pfn_parent);

  int go[2];
  CHECK(pipe(go) == 0, "pipe");
  double t0 = pa_test_now();
  pid_t pid = fork();
  CHECK(pid >= 0, "fork");
  if (pid == 0) {
    wait_byte(go[0]);                              /* parent has written 'Q' by now */
    long bad = tu_first_not(c.addr, FK_LEN, 'P');  /* the child sees the fork-time bytes */
    if (bad >= 0) _exit(10);
    tu_pfns(c.addr, FK_PAGES, fk_pfn_child);
    for (size_t i = 0; i < FK_PAGES; i++) if (fk_pfn_child[i] == fk_pfn_parent[i]) _exit(11);  /* shares a pinned page */
    memset(c.addr, 'c', FK_LEN);
    if (tu_first_not(c.addr, FK_LEN, 'c') >= 0) _exit(12);
    _exit(0);
  }
  double fork_ms = (pa_test_now() - t0) * 1e3;
  memset(c.addr, 'Q', FK_LEN);                     /* parent writes while the child is alive */
  tu_pfns(c.addr, FK_PAGES, fk_pfn_now);
  send_byte(go[1]);
  int st = child_exit_status(pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
        "child failed (status %#x: 10 = saw parent's post-fork bytes, 11 = shares a pinned frame, 12 = own write lost)", st);
  CHECK(memcmp(fk_pfn_parent, fk_pfn_now, sizeof(fk_pfn_now)) == 0, "parent's PFNs changed across fork + write");
  long bad = tu_first_not(c.addr, FK_LEN, 'Q');
  CHECK(bad < 0, "parent byte %ld changed by the child", bad);
  tu_pfns(c.addr, FK_PAGES, fk_pfn_now);
  CHECK(memcmp(fk_pfn_parent, fk_pfn_now, sizeof(fk_pfn_now)) == 0, "parent's PFNs changed after the child ran");
  int fd = tu_tmpfile();
  tu_write_fixed(&u, &r, fd, c.addr, FK_LEN);      /* the pin still covers what the parent sees */
  tu_pread(fd, tu_scratch, FK_LEN, 0);
  bad = tu_first_not(tu_scratch, FK_LEN, 'Q');
  CHECK(bad < 0, "WRITE_FIXED after fork sent byte %ld = '%c', not the parent's 'Q'", bad, tu_scratch[bad < 0 ? 0 : bad]);
  NOTE("%s: fork %.2f ms with %zu MiB pinned; parent kept its frames, child got copies",
       pa_backing_name(c.backing), fork_ms, FK_LEN >> 20);
  close(fd);
  CHECK_OK("unregister", pa_uring_unregister(&u, &r));
  pa_uring_exit(&u);
  pa_os_unmap_chunk(&c);
}

TEST(fork_pinned_4k_parent_keeps_frames) { fork_pinned(PA_BACK_4K); }
TEST(fork_pinned_hugetlb_parent_keeps_frames) { fork_pinned(PA_BACK_HUGETLB_2M); }

/* mlock only (no pin): after fork the pages are shared copy-on-write, so the
   PARENT's write while the child lives moves the parent to new frames. */
TEST(fork_mlock_only_parent_write_moves_frames) {
  const pa_backing_t k4 = PA_BACK_4K;
  pa_mapping_t c;
  CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(FK_LEN, &k4, 1, &c));
  CHECK(mlock(c.addr, c.size) == 0, "mlock");
  memset(c.addr, 'P', FK_LEN);
  tu_pfns(c.addr, FK_PAGES, fk_pfn_parent);
  int go[2];
  CHECK(pipe(go) == 0, "pipe");
  pid_t pid = fork();
  CHECK(pid >= 0, "fork");
  if (pid == 0) {
    wait_byte(go[0]);
    _exit(tu_first_not(c.addr, FK_LEN, 'P') >= 0 ? 10 : 0);
  }
  memset(c.addr, 'Q', FK_LEN);
  tu_pfns(c.addr, FK_PAGES, fk_pfn_now);
  send_byte(go[1]);
  int st = child_exit_status(pid);
  size_t moved = 0;
  for (size_t i = 0; i < FK_PAGES; i++) moved += (fk_pfn_now[i] != fk_pfn_parent[i]);
  NOTE("mlock-only 4k chunk: %zu of %zu parent pages moved to new frames on write after fork", moved, (size_t)FK_PAGES);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child did not see its fork-time bytes (status %#x)", st);
  CHECK(moved == FK_PAGES, "expected every written page to be copied (COW) in the parent");
  munlock(c.addr, c.size);
  pa_os_unmap_chunk(&c);
}

/* The alternative, MADV_DONTFORK: the child has no mapping at all there. */
TEST(fork_dontfork_child_cannot_read) {
  const pa_backing_t k4 = PA_BACK_4K;
  pa_mapping_t c;
  CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(FK_LEN, &k4, 1, &c));
  CHECK(madvise(c.addr, c.size, MADV_DONTFORK) == 0, "madvise(MADV_DONTFORK)");
  memset(c.addr, 'P', FK_LEN);
  pid_t pid = fork();
  CHECK(pid >= 0, "fork");
  if (pid == 0) {
    volatile char x = *(volatile char*)c.addr;    /* SIGSEGV expected */
    (void)x;
    _exit(0);
  }
  int st = child_exit_status(pid);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "child reading a DONTFORK range: status %#x, expected SIGSEGV", st);
  pa_os_unmap_chunk(&c);
}

/* Pinned hugetlb pages are copied for the child from the hugetlb POOL. With
   the pool empty, fork() itself fails; vfork/posix_spawn (shared address
   space, nothing copied) still works. */
TEST(fork_pinned_hugetlb_empty_pool_fork_fails) {
  const pa_backing_t h = PA_BACK_HUGETLB_2M;
  pa_mapping_t c;
  if (pa_os_map_chunk(FK_LEN, &h, 1, &c) != 0)
    SKIP("no free 2 MiB hugepages (echo 512 > /proc/sys/vm/nr_hugepages)");
  pa_uring_t u;
  tu_uring(&u);
  pa_uring_reg_t r;
  CHECK_OK("io_uring_register", pa_uring_register(&u, c.addr, c.size, &r));
  static pa_mapping_t held[64];
  size_t nheld = 0;
  for (size_t n = PA_GiB; n >= 2 * PA_MiB && nheld < 64; n /= 2)   /* take the rest of the pool */
    while (nheld < 64 && pa_os_map_chunk(n, &h, 1, &held[nheld]) == 0) nheld++;
  CHECK(tu_hugetlb_free(2048) == 0, "pool not drained");
  pid_t pid = fork();
  int fork_errno = errno;
  if (pid == 0) _exit(0);
  if (pid > 0) child_exit_status(pid);
  pid_t vpid = vfork();
  if (vpid == 0) _exit(0);
  int vst = (vpid > 0 ? child_exit_status(vpid) : -1);
  for (size_t i = 0; i < nheld; i++) pa_os_unmap_chunk(&held[i]);
  NOTE("pool empty, %zu MiB hugetlb pinned: fork() -> %s; vfork() -> %s", FK_LEN >> 20,
       pid < 0 ? pa_errno_name(fork_errno) : "ok", vpid > 0 ? "ok" : "failed");
  CHECK(pid < 0 && fork_errno == ENOMEM, "fork with pinned hugetlb pages and an empty pool: expected ENOMEM");
  CHECK(vpid > 0 && WIFEXITED(vst), "vfork must not need to copy anything");
  /* and with pool pages back, fork works again */
  pid = fork();
  if (pid == 0) _exit(0);
  CHECK(pid > 0, "fork after the pool was refilled: %s", pa_errno_name(errno));
  child_exit_status(pid);
  CHECK_OK("unregister", pa_uring_unregister(&u, &r));
  pa_uring_exit(&u);
  pa_os_unmap_chunk(&c);
}

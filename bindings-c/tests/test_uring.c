/* test_uring.c — io_uring sparse fixed buffers as a pin backend. */
#include "sent_bytes.h"
#include "kernel_view.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

TEST(uring_register_write_fixed_roundtrip) {
  pa_uring_t u;
  tu_uring(&u);
  const pa_backing_t k4[] = { PA_BACK_4K };
  pa_mapping_t c;
  CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(4 * PA_MiB, k4, 1, &c));
  pa_uring_reg_t r;
  CHECK_OK("io_uring_register", pa_uring_register(&u, c.addr, c.size, &r));
  CHECK(r.count == 1, "4 MiB took %u slots", r.count);
  unsigned char* p = c.addr;
  for (size_t i = 0; i < c.size; i++) p[i] = (unsigned char)(i * 131 + (i >> 12));
  int fd = tu_tmpfile();
  tu_write_fixed(&u, &r, fd, c.addr, c.size);
  tu_pread(fd, tu_scratch, c.size, 0);
  CHECK(memcmp(tu_scratch, p, c.size) == 0, "file differs from the registered memory");
  /* and back: READ_FIXED into the second half from the file's first half */
  int rd = pa_uring_rw_fixed(&u, 0, fd, p + c.size / 2, (unsigned)(c.size / 2), 0, r.first);
  CHECK(rd == (int)(c.size / 2), "READ_FIXED: %d", rd);
  CHECK(memcmp(p + c.size / 2, tu_scratch, c.size / 2) == 0, "READ_FIXED data differs");
  /* an I/O outside the registered range is refused by the kernel */
  int bad = pa_uring_rw_fixed(&u, 1, fd, p + c.size - 4096, 8192, 0, r.first);
  CHECK(bad == -EFAULT, "WRITE_FIXED past the buffer end returned %d", bad);
  CHECK_OK("unregister", pa_uring_unregister(&u, &r));
  /* the slot is empty now: fixed I/O on it fails */
  bad = pa_uring_rw_fixed(&u, 1, fd, p, 4096, 0, r.first);
  CHECK(bad < 0, "WRITE_FIXED through an emptied slot returned %d", bad);
  close(fd);
  pa_uring_exit(&u);
  pa_os_unmap_chunk(&c);
}

/* > 1 GiB: one slot per 1 GiB piece, consecutive, both usable. */
TEST(uring_register_splits_over_1g) {
  pa_uring_t u;
  tu_uring(&u);
  const size_t len = PA_GiB + 4 * PA_MiB;
  char* p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  CHECK(p != MAP_FAILED, "mmap");
  pa_uring_reg_t r;
  double t0 = pa_test_now();
  CHECK_OK("io_uring_register", pa_uring_register(&u, p, len, &r));   /* pins = faults in all pages */
  NOTE("registered %zu MiB (4 KiB pages, faulted by the pin) in %.0f ms", len >> 20, (pa_test_now() - t0) * 1e3);
  CHECK(r.count == 2, "1 GiB + 4 MiB took %u slots, want 2", r.count);
  CHECK(pa_uring_slot_for(&r, p, 4096) == (int)r.first, "first piece slot");
  CHECK(pa_uring_slot_for(&r, p + PA_GiB, 4096) == (int)r.first + 1, "second piece slot");
  CHECK(pa_uring_slot_for(&r, p + PA_GiB - 4096, 8192) < 0, "an I/O across the piece boundary must be refused");
  memset(p + PA_GiB - 4096, 'x', 4096);
  memset(p + PA_GiB + 4096, 'y', 4096);
  int fd = tu_tmpfile();
  tu_write_fixed(&u, &r, fd, p + PA_GiB - 4096, 4096);
  tu_pread(fd, tu_scratch, 4096, 0);
  CHECK(tu_first_not(tu_scratch, 4096, 'x') < 0, "piece 1 data");
  tu_write_fixed(&u, &r, fd, p + PA_GiB + 4096, 4096);
  tu_pread(fd, tu_scratch, 4096, 0);
  CHECK(tu_first_not(tu_scratch, 4096, 'y') < 0, "piece 2 data");
  CHECK_OK("unregister", pa_uring_unregister(&u, &r));
  close(fd);
  pa_uring_exit(&u);
  munmap(p, len);
}

TEST(uring_unregister_frees_slots_for_reuse) {
  pa_uring_t u;
  tu_uring(&u);
  const pa_backing_t k4[] = { PA_BACK_4K };
  pa_mapping_t c;
  CHECK_OK("pa_os_map_chunk", pa_os_map_chunk(8 * PA_MiB, k4, 1, &c));
  char* p = c.addr;
  pa_uring_reg_t a, b, d, e;
  CHECK_OK("io_uring_register", pa_uring_register(&u, p, 2 * PA_MiB, &a));
  CHECK_OK("io_uring_register", pa_uring_register(&u, p + 2 * PA_MiB, 2 * PA_MiB, &b));
  CHECK(a.first == 0 && b.first == 1, "slots %u, %u", a.first, b.first);
  CHECK_OK("unregister", pa_uring_unregister(&u, &a));
  CHECK_OK("io_uring_register", pa_uring_register(&u, p + 4 * PA_MiB, 2 * PA_MiB, &d));
  CHECK(d.first == 0, "freed slot 0 not reused (got %u)", d.first);
  CHECK_OK("io_uring_register", pa_uring_register(&u, p + 6 * PA_MiB, 2 * PA_MiB, &e));
  CHECK(e.first == 2, "next free slot should be 2, got %u", e.first);
  /* the reused slot really holds the new range */
  memset(p + 4 * PA_MiB, 'd', 4096);
  int fd = tu_tmpfile();
  tu_write_fixed(&u, &d, fd, p + 4 * PA_MiB, 4096);
  tu_pread(fd, tu_scratch, 4096, 0);
  CHECK(tu_first_not(tu_scratch, 4096, 'd') < 0, "slot 0 still points at the old range");
  CHECK_OK("unregister", pa_uring_unregister(&u, &b));
  CHECK_OK("unregister", pa_uring_unregister(&u, &d));
  CHECK_OK("unregister", pa_uring_unregister(&u, &e));
  close(fd);
  pa_uring_exit(&u);
  pa_os_unmap_chunk(&c);
}

TEST(uring_bad_input) {
  pa_uring_t u;
  tu_uring(&u);
  pa_uring_reg_t r;
  char* p = mmap(NULL, 4 * PA_MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  CHECK(p != MAP_FAILED, "mmap");
  CHECK_ERR(pa_uring_register(&u, p, 0, &r), EINVAL);                /* zero length */
  munmap(p + 2 * PA_MiB, 2 * PA_MiB);
  CHECK_ERR(pa_uring_register(&u, p + 2 * PA_MiB, PA_MiB, &r), EFAULT);   /* unmapped */
  CHECK_ERR(pa_uring_register(&u, p + PA_MiB, 2 * PA_MiB, &r), EFAULT);   /* runs into the hole */
  CHECK(u.slot_used[0] == 0, "a failed register left slots marked used");
  char* ro = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK_ERR(pa_uring_register(&u, ro, 4096, &r), EFAULT);              /* PROT_NONE */
  CHECK_OK("io_uring_register", pa_uring_register(&u, p, PA_MiB, &r));
  CHECK_OK("unregister", pa_uring_unregister(&u, &r));
  CHECK_ERR(pa_uring_unregister(&u, &r), ENOENT);                      /* double unregister */
  pa_uring_reg_t bogus = { (uintptr_t)p, PA_MiB, 5, 1 };
  CHECK_ERR(pa_uring_unregister(&u, &bogus), ENOENT);                  /* never registered */
  /* a registration cannot be unregistered in part */
  pa_uring_reg_t big;
  CHECK_OK("io_uring_register", pa_uring_register(&u, p, PA_MiB, &big));
  pa_uring_reg_t wrong = big; wrong.count = 2;
  CHECK_ERR(pa_uring_unregister(&u, &wrong), ENOENT);
  CHECK_OK("unregister", pa_uring_unregister(&u, &big));
  pa_uring_exit(&u);
  munmap(p, 2 * PA_MiB);
  munmap(ro, 4096);
}

/* Cost of pinning, per MiB, for each backing (informational; fails only on errors). */
TEST(uring_register_cost_per_backing) {
  pa_uring_t u;
  tu_uring(&u);
  const size_t len = 256 * PA_MiB;
  const pa_backing_t order[] = { PA_BACK_4K, PA_BACK_THP, PA_BACK_HUGETLB_2M };
  for (size_t i = 0; i < 3; i++) {
    pa_mapping_t c;
    int rc = pa_os_map_chunk(len, &order[i], 1, &c);
    if (rc != 0) { NOTE("%s: not available (%s)", pa_backing_name(order[i]), pa_errno_name(-rc)); continue; }
    pa_uring_reg_t r;
    double best_reg = 1e9, best_unreg = 1e9;
    for (int k = 0; k < 3; k++) {
      double t0 = pa_test_now();
      CHECK_OK("io_uring_register", pa_uring_register(&u, c.addr, c.size, &r));
      double t1 = pa_test_now();
      CHECK_OK("unregister", pa_uring_unregister(&u, &r));
      double t2 = pa_test_now();
      if (t1 - t0 < best_reg) best_reg = t1 - t0;
      if (t2 - t1 < best_unreg) best_unreg = t2 - t1;
    }
    NOTE("%-10s (page %7zu): register %7.1f us/MiB, unregister %6.1f us/MiB", pa_backing_name(c.backing),
         c.page_size, best_reg * 1e6 / 256, best_unreg * 1e6 / 256);
    pa_os_unmap_chunk(&c);
  }
  pa_uring_exit(&u);
}

/* A forked child shares the ring and its table: what the child does with the
   slots it inherited (unregister them, as the shim's pinarena_trim() does for
   a chunk the child freed; tear its ring down and exit) must leave the
   parent's registration, and what a WRITE_FIXED through it sends, unchanged. */
TEST(uring_forked_child_cannot_drop_the_parents_registration) {
  pa_uring_t u;
  tu_uring(&u);
  const size_t len = 2 * PA_MiB;
  unsigned char* p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  CHECK(p != MAP_FAILED, "mmap");
  memset(p, 'A', len);
  pa_uring_reg_t r;
  CHECK_OK("io_uring_register", pa_uring_register(&u, p, len, &r));
  pid_t pid = fork();
  if (pid == 0) {
    int rc = pa_uring_unregister(&u, &r);
    pa_uring_exit(&u);
    _exit(rc == 0 ? 0 : 3);
  }
  int st;
  CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0, "child (status %d)", st);
  memset(p, 'P', len);
  int fd = tu_tmpfile();
  tu_write_fixed(&u, &r, fd, p, len);
  tu_pread(fd, tu_scratch, len, 0);
  CHECK(tu_count(tu_scratch, len, 'P') == len, "the parent's WRITE_FIXED sent the parent's current bytes");
  CHECK_OK("parent unregister", pa_uring_unregister(&u, &r));
  close(fd);
  munmap(p, len);
  pa_uring_exit(&u);
}

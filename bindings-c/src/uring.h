/* uring.h — io_uring by raw syscall, used as a registration (pin) backend.
 *
 * The ring owns a SPARSE fixed-buffer table of PA_URING_SLOTS slots. A range
 * is registered into free consecutive slots, one slot per <= 1 GiB piece
 * (the kernel refuses a single fixed buffer larger than 1 GiB). Registering
 * pins the pages (FOLL_PIN | FOLL_LONGTERM), like an RDMA memory region:
 * the kernel keeps the PHYSICAL pages that were mapped at registration time,
 * whatever later happens to the virtual range.
 *
 * READ_FIXED / WRITE_FIXED through a slot make the kernel read/write those
 * pinned pages, which is how the tests prove what is actually pinned.
 *
 * Not thread-safe: one thread (or an external lock) per pa_uring_t.
 * No malloc, no stdio; the struct is plain and caller-owned.
 */
#ifndef PA_URING_H
#define PA_URING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/io_uring.h>   /* kernel ABI: installed headers carry all we need */

#define PA_URING_SLOTS      16384u              /* kernel maximum of fixed buffers */
#define PA_URING_PIECE_MAX  ((size_t)1 << 30)  /* kernel maximum per fixed buffer */

typedef struct pa_uring_s {
  int       fd;
  unsigned  features;
  unsigned  sq_entries, cq_entries;
  /* SQ ring (shared with the kernel) */
  void*     sq_map;  size_t sq_map_len;
  unsigned* sq_head; unsigned* sq_tail; unsigned* sq_mask; unsigned* sq_array;
  struct io_uring_sqe* sqes; size_t sqes_len;
  /* CQ ring */
  void*     cq_map;  size_t cq_map_len;     /* == sq_map with IORING_FEAT_SINGLE_MMAP */
  unsigned* cq_head; unsigned* cq_tail; unsigned* cq_mask;
  struct io_uring_cqe* cqes;
  /* slot bookkeeping: used = holds a piece, head = first piece of a registration */
  uint64_t  slot_used[PA_URING_SLOTS / 64];
  uint64_t  slot_head[PA_URING_SLOTS / 64];
  /* the process that set the ring up: a forked child shares the ring, and with it the parent's table */
  pid_t     owner;
} pa_uring_t;

/* One registered range: slots [first, first + count). */
typedef struct pa_uring_reg_s {
  uintptr_t addr;
  size_t    len;
  unsigned  first;
  unsigned  count;
} pa_uring_reg_t;

/* Set up a ring with `entries` SQEs and register the sparse table.
 * Returns 0 or -errno (ENOSYS/EPERM: io_uring unavailable or disabled). */
int  pa_uring_init(pa_uring_t* u, unsigned entries);
void pa_uring_exit(pa_uring_t* u);

/* Register [addr, addr+len) into consecutive free slots.
 * Returns 0; -EINVAL (len 0), -ENOSPC (no run of free slots), -EFAULT
 * (unmapped or unpinnable range), -ENOMEM (RLIMIT_MEMLOCK without
 * CAP_IPC_LOCK), or another -errno. On error nothing stays registered. */
int pa_uring_register(pa_uring_t* u, const void* addr, size_t len, pa_uring_reg_t* out);

/* Unregister (unpin) a registration. -ENOENT if it is not registered
 * (e.g. a double unregister). */
int pa_uring_unregister(pa_uring_t* u, const pa_uring_reg_t* reg);

/* Unpin a registration but keep its slots (empty) for it; resume pins the
 * same range into the same slots again, so its indexes do not change.
 * Resume returns -errno and frees the slots if the range cannot be pinned
 * again. For fork (the shim): pinned pages are copied into the child while
 * other threads write them; unpinned ones are shared copy-on-write. */
int pa_uring_suspend(pa_uring_t* u, const pa_uring_reg_t* reg);
int pa_uring_resume(pa_uring_t* u, const pa_uring_reg_t* reg);

/* Slot that covers `addr` inside `reg`, or -EINVAL. An I/O must not cross
 * a piece boundary (every PA_URING_PIECE_MAX bytes from reg->addr). */
int pa_uring_slot_for(const pa_uring_reg_t* reg, const void* addr, size_t len);

/* Submit one IORING_OP_WRITE_FIXED (write != 0: memory -> fd) or
 * IORING_OP_READ_FIXED (fd -> memory) and wait for it.
 * Returns the CQE result: bytes transferred or -errno. */
int pa_uring_rw_fixed(pa_uring_t* u, int write, int fd, const void* buf, unsigned len,
                      uint64_t off, unsigned slot);

#endif

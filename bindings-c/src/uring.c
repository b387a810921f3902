/* uring.c — io_uring setup, sparse fixed-buffer slots, one-shot fixed I/O.
 * Twin: registration/.../uring/IoUring.java implements the same rules in Java;
 * change both (shared scenario list: docs/ARCHITECTURE.md, "Twins"). */
#include "uring.h"
#include "nocancel.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------
   Raw syscalls (glibc has no wrappers; no liburing)
--------------------------------------------------------------------------- */

static inline int sys_setup(unsigned entries, struct io_uring_params* p) {
  long r = syscall(__NR_io_uring_setup, entries, p);
  return (r < 0 ? -errno : (int)r);
}
static inline int sys_enter(int fd, unsigned submit, unsigned wait, unsigned flags) {
  long r = syscall(__NR_io_uring_enter, fd, submit, wait, flags, NULL, 0);
  return (r < 0 ? -errno : (int)r);
}
static inline int sys_register(int fd, unsigned op, void* arg, unsigned nr) {
  long r = syscall(__NR_io_uring_register, fd, op, arg, nr);
  return (r < 0 ? -errno : (int)r);
}

/* ---------------------------------------------------------------------------
   Slot bitmap
--------------------------------------------------------------------------- */

static inline int  bit_get(const uint64_t* m, unsigned i) { return (int)((m[i / 64] >> (i % 64)) & 1); }
static inline void bit_set(uint64_t* m, unsigned i)       { m[i / 64] |= (uint64_t)1 << (i % 64); }
static inline void bit_clr(uint64_t* m, unsigned i)       { m[i / 64] &= ~((uint64_t)1 << (i % 64)); }

/* First fit: start of `n` consecutive free slots, or -1. */
static int slots_find(const pa_uring_t* u, unsigned n) {
  unsigned run = 0;
  for (unsigned i = 0; i < PA_URING_SLOTS; i++) {
    if (run == 0 && (i % 64) == 0 && u->slot_used[i / 64] == ~(uint64_t)0) { i += 63; continue; }
    run = bit_get(u->slot_used, i) ? 0 : run + 1;
    if (run == n) return (int)(i + 1 - n);
  }
  return -1;
}

/* ---------------------------------------------------------------------------
   Setup / teardown
--------------------------------------------------------------------------- */

int pa_uring_init(pa_uring_t* u, unsigned entries) {
  memset(u, 0, sizeof(*u));
  u->fd = -1;
  struct io_uring_params p;
  memset(&p, 0, sizeof(p));
  int fd = sys_setup(entries, &p);
  if (fd < 0) return fd;
  u->fd = fd;
  u->owner = getpid();
  u->features = p.features;
  u->sq_entries = p.sq_entries;
  u->cq_entries = p.cq_entries;

  u->sq_map_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  u->cq_map_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  const int single = (p.features & IORING_FEAT_SINGLE_MMAP) != 0;
  if (single) {  /* SQ and CQ rings share one mapping: map the larger size once */
    if (u->cq_map_len > u->sq_map_len) u->sq_map_len = u->cq_map_len;
    u->cq_map_len = u->sq_map_len;
  }
  int err;
  u->sq_map = mmap(NULL, u->sq_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
  if (u->sq_map == MAP_FAILED) { u->sq_map = NULL; err = -errno; goto fail; }
  if (single) u->cq_map = u->sq_map;
  else {
    u->cq_map = mmap(NULL, u->cq_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_CQ_RING);
    if (u->cq_map == MAP_FAILED) { u->cq_map = NULL; err = -errno; goto fail; }
  }
  u->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
  u->sqes = mmap(NULL, u->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
  if (u->sqes == MAP_FAILED) { u->sqes = NULL; err = -errno; goto fail; }

  char* sq = u->sq_map;
  char* cq = u->cq_map;
  u->sq_head  = (unsigned*)(sq + p.sq_off.head);
  u->sq_tail  = (unsigned*)(sq + p.sq_off.tail);
  u->sq_mask  = (unsigned*)(sq + p.sq_off.ring_mask);
  u->sq_array = (unsigned*)(sq + p.sq_off.array);
  u->cq_head  = (unsigned*)(cq + p.cq_off.head);
  u->cq_tail  = (unsigned*)(cq + p.cq_off.tail);
  u->cq_mask  = (unsigned*)(cq + p.cq_off.ring_mask);
  u->cqes     = (struct io_uring_cqe*)(cq + p.cq_off.cqes);

  /* The sparse table: all PA_URING_SLOTS slots exist but are empty; ranges
     are later placed with IORING_REGISTER_BUFFERS_UPDATE. */
  struct io_uring_rsrc_register rr;
  memset(&rr, 0, sizeof(rr));
  rr.nr = PA_URING_SLOTS;
  rr.flags = IORING_RSRC_REGISTER_SPARSE;
  err = sys_register(fd, IORING_REGISTER_BUFFERS2, &rr, sizeof(rr));
  if (err < 0) goto fail;
  return 0;

fail:
  pa_uring_exit(u);
  return err;
}

void pa_uring_exit(pa_uring_t* u) {
  if (u->sqes != NULL) munmap(u->sqes, u->sqes_len);
  if (u->cq_map != NULL && u->cq_map != u->sq_map) munmap(u->cq_map, u->cq_map_len);
  if (u->sq_map != NULL) munmap(u->sq_map, u->sq_map_len);
  if (u->fd >= 0) pa_nc_close(u->fd);   /* the kernel drops remaining pins when the ring dies */
  u->sqes = NULL; u->sq_map = u->cq_map = NULL; u->fd = -1;
}

/* ---------------------------------------------------------------------------
   Register / unregister
--------------------------------------------------------------------------- */

#define PA_UPDATE_BATCH 16   /* iovecs per update call (16 GiB), kept on the stack */

/* Put iov[0..n) into slots [first, first+n). Returns 0 or -errno. The kernel
   returns how many it updated; a short count means the next one failed, so
   we ask again from there to learn why. */
static int slots_update(pa_uring_t* u, unsigned first, struct iovec* iov, unsigned n) {
  unsigned done = 0;
  while (done < n) {
    struct io_uring_rsrc_update2 up;
    memset(&up, 0, sizeof(up));
    up.offset = first + done;
    up.data = (uint64_t)(uintptr_t)(iov + done);
    up.nr = n - done;
    int r = sys_register(u->fd, IORING_REGISTER_BUFFERS_UPDATE, &up, sizeof(up));
    if (r < 0) return r;
    if (r == 0) return -EIO;
    done += (unsigned)r;
  }
  return 0;
}

static void slots_clear(pa_uring_t* u, unsigned first, unsigned n) {
  struct iovec empty[PA_UPDATE_BATCH];
  memset(empty, 0, sizeof(empty));       /* {NULL, 0} = empty slot in a sparse table */
  for (unsigned i = 0; i < n; i += PA_UPDATE_BATCH) {
    unsigned k = (n - i < PA_UPDATE_BATCH ? n - i : PA_UPDATE_BATCH);
    slots_update(u, first + i, empty, k);
  }
  for (unsigned i = 0; i < n; i++) { bit_clr(u->slot_used, first + i); bit_clr(u->slot_head, first + i); }
}

int pa_uring_register(pa_uring_t* u, const void* addr, size_t len, pa_uring_reg_t* out) {
  if (len == 0) return -EINVAL;
  if (addr == NULL) return -EFAULT;
  const size_t pieces = (len + PA_URING_PIECE_MAX - 1) / PA_URING_PIECE_MAX;
  if (pieces > PA_URING_SLOTS) return -ENOSPC;
  int first = slots_find(u, (unsigned)pieces);
  if (first < 0) return -ENOSPC;

  struct iovec iov[PA_UPDATE_BATCH];
  size_t   off = 0;
  unsigned placed = 0;
  while (placed < pieces) {
    unsigned k = 0;
    for (; k < PA_UPDATE_BATCH && placed + k < pieces; k++) {
      size_t piece = len - off;
      if (piece > PA_URING_PIECE_MAX) piece = PA_URING_PIECE_MAX;
      iov[k].iov_base = (char*)addr + off;
      iov[k].iov_len  = piece;
      off += piece;
    }
    int rc = slots_update(u, (unsigned)first + placed, iov, k);
    if (rc != 0) {
      /* Roll back what this call pinned (pieces already placed + any of this
         batch the kernel accepted before failing). */
      slots_clear(u, (unsigned)first, placed + k);
      return rc;
    }
    for (unsigned i = 0; i < k; i++) bit_set(u->slot_used, (unsigned)first + placed + i);
    placed += k;
  }
  bit_set(u->slot_head, (unsigned)first);
  out->addr = (uintptr_t)addr; out->len = len;
  out->first = (unsigned)first; out->count = (unsigned)pieces;
  return 0;
}

/* The iovecs of reg's pieces k0.. (at most PA_UPDATE_BATCH), empty or not. */
static unsigned reg_pieces(const pa_uring_reg_t* reg, unsigned k0, int empty, struct iovec* iov) {
  unsigned k = 0;
  for (; k < PA_UPDATE_BATCH && k0 + k < reg->count; k++) {
    size_t off = (size_t)(k0 + k) * PA_URING_PIECE_MAX, piece = reg->len - off;
    if (piece > PA_URING_PIECE_MAX) piece = PA_URING_PIECE_MAX;
    iov[k].iov_base = empty ? NULL : (char*)reg->addr + off;
    iov[k].iov_len = empty ? 0 : piece;
  }
  return k;
}

int pa_uring_suspend(pa_uring_t* u, const pa_uring_reg_t* reg) {
  struct iovec iov[PA_UPDATE_BATCH];
  for (unsigned k0 = 0, k; k0 < reg->count; k0 += k) {
    k = reg_pieces(reg, k0, 1, iov);
    int rc = slots_update(u, reg->first + k0, iov, k);
    if (rc != 0) return rc;
  }
  return 0;
}

int pa_uring_resume(pa_uring_t* u, const pa_uring_reg_t* reg) {
  struct iovec iov[PA_UPDATE_BATCH];
  for (unsigned k0 = 0, k; k0 < reg->count; k0 += k) {
    k = reg_pieces(reg, k0, 0, iov);
    int rc = slots_update(u, reg->first + k0, iov, k);
    if (rc != 0) { slots_clear(u, reg->first, reg->count); return rc; }
  }
  return 0;
}

int pa_uring_unregister(pa_uring_t* u, const pa_uring_reg_t* reg) {
  const unsigned first = reg->first, n = reg->count;
  if (n == 0 || first >= PA_URING_SLOTS || n > PA_URING_SLOTS - first) return -EINVAL;
  /* Must be exactly one live registration: head at first, all used, and the
     next slot (if any) not a continuation. */
  if (!bit_get(u->slot_head, first)) return -ENOENT;
  for (unsigned i = 0; i < n; i++) {
    if (!bit_get(u->slot_used, first + i)) return -ENOENT;
    if (i > 0 && bit_get(u->slot_head, first + i)) return -ENOENT;
  }
  const unsigned next = first + n;
  if (next < PA_URING_SLOTS && bit_get(u->slot_used, next) && !bit_get(u->slot_head, next)) return -ENOENT;
  /* A forked child shares the ring, so the slots it inherited hold the parent's
     registrations: the child forgets them in its own bookkeeping and leaves the
     kernel's table alone (the pins end when the parent unregisters, or when the
     last descriptor of the ring closes). */
  if (u->owner != getpid()) {
    for (unsigned i = 0; i < n; i++) { bit_clr(u->slot_used, first + i); bit_clr(u->slot_head, first + i); }
    return 0;
  }
  slots_clear(u, first, n);
  return 0;
}

int pa_uring_slot_for(const pa_uring_reg_t* reg, const void* addr, size_t len) {
  const uintptr_t a = (uintptr_t)addr;
  if (a < reg->addr || len > reg->len || a - reg->addr > reg->len - len) return -EINVAL;
  const size_t off = a - reg->addr;
  const size_t piece = off / PA_URING_PIECE_MAX;
  if (len > 0 && (off + len - 1) / PA_URING_PIECE_MAX != piece) return -EINVAL;
  return (int)(reg->first + piece);
}

/* ---------------------------------------------------------------------------
   One fixed read/write, submitted and reaped
--------------------------------------------------------------------------- */

int pa_uring_rw_fixed(pa_uring_t* u, int write, int fd, const void* buf, unsigned len,
                      uint64_t off, unsigned slot) {
  /* We are the only producer, so our own tail needs no ordering; the head
     is advanced by the kernel: acquire, so the slot it freed is ours. */
  const unsigned tail = *u->sq_tail;
  const unsigned head = __atomic_load_n(u->sq_head, __ATOMIC_ACQUIRE);
  if (tail - head >= u->sq_entries) return -EBUSY;
  const unsigned idx = tail & *u->sq_mask;
  struct io_uring_sqe* sqe = &u->sqes[idx];
  memset(sqe, 0, sizeof(*sqe));
  sqe->opcode    = write ? IORING_OP_WRITE_FIXED : IORING_OP_READ_FIXED;
  sqe->fd        = fd;
  sqe->addr      = (uint64_t)(uintptr_t)buf;
  sqe->len       = len;
  sqe->off       = off;
  sqe->buf_index = (uint16_t)slot;
  sqe->user_data = ((uint64_t)tail << 1) | (write ? 1 : 0);
  u->sq_array[idx] = idx;
  /* RELEASE store of the tail: every store to the SQE and sq_array above
     must be visible before the kernel can see the new tail; otherwise it
     could consume a half-written SQE. */
  __atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);

  int r;
  do { r = sys_enter(u->fd, 1, 1, IORING_ENTER_GETEVENTS); } while (r == -EINTR && *u->sq_head == head);
  if (r < 0 && r != -EINTR) return r;

  for (;;) {
    const unsigned chead = *u->cq_head;             /* only we move the CQ head */
    /* ACQUIRE load of the CQ tail: pairs with the kernel's release when it
       posts a CQE, so the CQE contents read below are complete. */
    const unsigned ctail = __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE);
    if (chead != ctail) {
      const struct io_uring_cqe* cqe = &u->cqes[chead & *u->cq_mask];
      const int res = cqe->res;
      /* RELEASE store of the CQ head: we are done reading this CQE before the
         kernel may reuse its slot. */
      __atomic_store_n(u->cq_head, chead + 1, __ATOMIC_RELEASE);
      return res;
    }
    r = sys_enter(u->fd, 0, 1, IORING_ENTER_GETEVENTS);
    if (r < 0 && r != -EINTR) return r;
  }
}

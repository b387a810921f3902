/* wire_uring.c — the scenario wire over io_uring fixed buffers (the host's
 * real long-term pin): a region's key is its first fixed-buffer slot, a send
 * is a WRITE_FIXED into a temp file, read back into the destination. */
#define _GNU_SOURCE
#include "wire.h"

struct rcw_backend_s {
  pa_uring_t u;
  int        fd;               /* the "wire": a temp file */
};

const char rcw_binding[] = "io_uring";
const int rcw_thread_iters = 1500;

void rcw_binding_open(rcw_t* t) {
  t->be = mmap(NULL, sizeof *t->be, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(t->be != MAP_FAILED, "mmap");
  tu_uring(&t->be->u);
  t->be->fd = tu_tmpfile();
}

int rcw_binding_reg(rcw_t* t, uintptr_t a, size_t len, int access, uint64_t* h, uint32_t* lk, uint32_t* rk) {
  (void)access;
  pa_uring_reg_t r;
  int rc = pa_uring_register(&t->be->u, (void*)a, len, &r);
  if (rc) return rc;
  *h = (uint64_t)r.first | ((uint64_t)r.count << 32);
  *lk = *rk = r.first;
  return 0;
}

int rcw_binding_dereg(rcw_t* t, uintptr_t a, size_t len, uint64_t h) {
  pa_uring_reg_t r = { a, len, (unsigned)h, (unsigned)(h >> 32) };
  return pa_uring_unregister(&t->be->u, &r);
}

void rcw_binding_write(rcw_t* t, const pa_rc_region_t* r, const void* src, size_t n) {
  pa_uring_reg_t ur = { r->addr, r->len, (unsigned)r->handle, (unsigned)(r->handle >> 32) };
  tu_write_fixed(&t->be->u, &ur, t->be->fd, src, n);
  tu_pread(t->be->fd, t->dst, n, 0);
}

/* loopback_ffi.c — libpinarena-verbs-loopback.so: the RDMA data check for
 * callers that register through an FFI (the Java VerbsRegistrar), which
 * cannot post work requests themselves (ibv_post_send is inline).
 *
 *   h = pa_vl_open(pd, dst_len)    RC loopback pair on the caller's PD and a
 *                                  registered destination buffer of dst_len
 *   pa_vl_write(h, src, len, lkey) RDMA WRITE src (lkey from the caller's MR)
 *                                  into the destination; 0 or -errno
 *   pa_vl_rdma(h, op, len, remote, rkey)
 *                                  as a peer holding rkey: RDMA READ (op 0) of
 *                                  len bytes at remote into the destination
 *                                  buffer, or RDMA WRITE (op 1) of its first
 *                                  len bytes to remote; the completion status
 *                                  (0 = success, 10 = remote access error) or
 *                                  -errno
 *   pa_vl_dst(h)                   the destination's address (compare there)
 *   pa_vl_close(h)
 *
 * A failed completion leaves the QPs in the error state; the next write
 * or rdma reconnects a fresh pair first. */
#include "verbs_pair.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct pa_vl_s {
  pa_vp_t        vp;
  struct ibv_pd* pd;
  struct ibv_mr* dst_mr;
  void*          dst;
  size_t         dst_len;
  int            broken;
} pa_vl_t;

EXPORT void pa_vl_close(pa_vl_t* h) {
  if (h == NULL) return;
  pa_vp_close(&h->vp);
  if (h->dst_mr) ibv_dereg_mr(h->dst_mr);
  if (h->dst && h->dst != MAP_FAILED) munmap(h->dst, h->dst_len);
  free(h);
}

EXPORT pa_vl_t* pa_vl_open(struct ibv_pd* pd, size_t dst_len) {
  pa_vl_t* h = calloc(1, sizeof *h);
  if (h == NULL) return NULL;
  h->pd = pd;
  h->dst_len = dst_len;
  h->dst = mmap(NULL, dst_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  int err = h->dst == MAP_FAILED ? errno : 0;
  if (!err) {
    h->dst_mr = ibv_reg_mr(pd, h->dst, dst_len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    err = h->dst_mr ? 0 : errno;
  }
  if (!err) err = -pa_vp_open_on(&h->vp, pd);
  if (err) { pa_vl_close(h); errno = err; return NULL; }
  return h;
}

static int reconnect_if_broken(pa_vl_t* h) {
  if (!h->broken) return 0;
  pa_vp_close(&h->vp);
  int rc = pa_vp_open_on(&h->vp, h->pd);
  if (rc) return rc;
  h->broken = 0;
  return 0;
}

EXPORT void* pa_vl_dst(pa_vl_t* h) { return h->dst; }

EXPORT int pa_vl_write(pa_vl_t* h, const void* src, uint32_t len, uint32_t lkey) {
  if (len > h->dst_len) return -EINVAL;
  int rc = reconnect_if_broken(h);
  if (rc) return rc;
  memset(h->dst, 0xEE, len);                        /* poison: a write that moves nothing cannot pass */
  rc = pa_vp_write(&h->vp, src, len, lkey, h->dst, h->dst_mr->rkey);
  if (rc == -EIO) h->broken = 1;
  return rc;
}

EXPORT int pa_vl_rdma(pa_vl_t* h, int op, uint32_t len, uint64_t remote, uint32_t rkey) {
  if (len > h->dst_len || (op != 0 && op != 1)) return -EINVAL;
  int rc = reconnect_if_broken(h);
  if (rc) return rc;
  int st = pa_vp_rdma(&h->vp, op == 0 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, h->dst, len, h->dst_mr->lkey, remote, rkey);
  if (st != IBV_WC_SUCCESS) h->broken = 1;
  return st;
}

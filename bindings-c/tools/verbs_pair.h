/* verbs_pair.h — two RC queue pairs on one port, connected to each other
 * (loopback), for moving bytes over real RDMA between two buffers of this
 * process. Shared by rdma_loopback.c, the cache's verbs tests and the FFI
 * helper the Java tests load (loopback_ffi.c).
 *
 * ibv_post_send / ibv_poll_cq are inline functions in verbs.h: an FFI
 * cannot call them, so every data path over verbs goes through here. */
#ifndef PA_VERBS_PAIR_H
#define PA_VERBS_PAIR_H

#include <infiniband/verbs.h>
#include <stdint.h>

typedef struct pa_vp_s {
  struct ibv_context* ctx;
  struct ibv_pd*      pd;
  struct ibv_cq*      cq;
  struct ibv_qp*      sender;
  struct ibv_qp*      receiver;
  union ibv_gid       gid;
  int                 gid_index;
  int                 own_pd;     /* opened the device and PD itself (closes them) */
  const char*         device;
} pa_vp_t;

/* Opens DEVICE (NULL: the first), a PD, a CQ and the connected pair. 0 or
 * -errno; prints the reason on stderr. pa_vp_close is safe after a failure. */
int  pa_vp_open(pa_vp_t* p, const char* device);
/* The pair on someone else's PD (and its context), e.g. a registrar's, so
 * memory regions registered there can be sent from. */
int  pa_vp_open_on(pa_vp_t* p, struct ibv_pd* pd);
void pa_vp_close(pa_vp_t* p);

/* RDMA WRITE len bytes from src (lkey) to dst (rkey), signaled, and wait for
 * the completion. 0 or -errno (-EIO: failed completion; the QP is then in
 * the error state and the pair must be reopened). */
int  pa_vp_write(pa_vp_t* p, const void* src, uint32_t len, uint32_t lkey, void* dst, uint32_t rkey);
/* One RDMA READ or WRITE (op: IBV_WR_RDMA_READ / IBV_WR_RDMA_WRITE) of len
 * bytes between local (lkey) and the peer address remote (rkey), as a peer
 * holding that key would post it. Returns the completion's status
 * (IBV_WC_SUCCESS, IBV_WC_REM_ACCESS_ERR, ...) or -errno when nothing
 * completed. After a failed completion the pair is in the error state:
 * close and reopen it. Prints nothing. */
int  pa_vp_rdma(pa_vp_t* p, int op, void* local, uint32_t len, uint32_t lkey, uint64_t remote, uint32_t rkey);
/* SEND src (lkey) into a receive posted on dst (dst_lkey). */
int  pa_vp_send(pa_vp_t* p, const void* src, uint32_t len, uint32_t lkey, void* dst, uint32_t dst_lkey);

#endif

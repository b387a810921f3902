/* peer_qp.h — one RC queue pair to a queue pair in another process (another MPI rank), on rxe0's port 1.
 * The two sides swap their pa_peer_addr (over MPI here) and connect; then one side posts RDMA WRITEs. */
#ifndef PINARENA_MPI_PEER_QP_H
#define PINARENA_MPI_PEER_QP_H

#include <infiniband/verbs.h>
#include <stdint.h>

typedef struct pa_peer_addr {
  uint32_t      qpn;
  union ibv_gid gid;
} pa_peer_addr_t;

typedef struct pa_peer_qp {
  struct ibv_context* ctx;
  struct ibv_pd*      pd;
  struct ibv_cq*      cq;
  struct ibv_qp*      qp;
  int                 gid_index;
  pa_peer_addr_t      self;   /* what the other side needs */
} pa_peer_qp_t;

/* Opens DEVICE, a PD, a CQ and an RC QP (still unconnected). 0 or -errno, the reason on stderr. */
int  pa_peer_open(pa_peer_qp_t* q, const char* device);
/* INIT -> RTR -> RTS towards the peer's address. 0 or -errno. */
int  pa_peer_connect(pa_peer_qp_t* q, const pa_peer_addr_t* peer);
/* RDMA WRITE len bytes from src (lkey) to remote (rkey), signaled; waits for its completion. 0 or -errno. */
int  pa_peer_write(pa_peer_qp_t* q, const void* src, uint32_t len, uint32_t lkey, uint64_t remote, uint32_t rkey);
void pa_peer_close(pa_peer_qp_t* q);

#endif

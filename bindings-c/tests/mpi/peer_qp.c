/* peer_qp.c — an RC queue pair between two processes (see peer_qp.h). rxe ports are Ethernet (RoCEv2):
 * the peer is addressed by GID, an IPv4-mapped one preferred, and the path MTU is 1024 (rxe over a 1500-byte
 * link). */
#include "peer_qp.h"
#include "rc_connect.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { PORT = 1, DEPTH = 8 };
static const long long COMPLETION_BUDGET_NS = 10LL * 1000 * 1000 * 1000;

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int fail(const char* what) {
  int e = errno ? errno : EIO;
  fprintf(stderr, "peer_qp: %s: %s\n", what, strerror(e));
  return -e;
}

static int choose_gid(pa_peer_qp_t* q) {
  struct ibv_port_attr port;
  if (ibv_query_port(q->ctx, PORT, &port)) return fail("ibv_query_port");
  q->gid_index = -1;
  for (int i = 0; i < port.gid_tbl_len; i++) {
    union ibv_gid gid;
    if (ibv_query_gid(q->ctx, PORT, i, &gid) || (gid.global.subnet_prefix == 0 && gid.global.interface_id == 0))
      continue;
    const int v4 = gid.raw[10] == 0xff && gid.raw[11] == 0xff;
    if (q->gid_index < 0 || v4) { q->gid_index = i; q->self.gid = gid; }
    if (v4) break;
  }
  if (q->gid_index < 0) { errno = ENOENT; return fail("no usable GID on port 1"); }
  return 0;
}

int pa_peer_open(pa_peer_qp_t* q, const char* device) {
  memset(q, 0, sizeof *q);
  int n = 0;
  struct ibv_device** list = ibv_get_device_list(&n);
  if (!list) return fail("ibv_get_device_list");
  for (int i = 0; i < n && !q->ctx; i++)
    if (!strcmp(ibv_get_device_name(list[i]), device)) q->ctx = ibv_open_device(list[i]);
  ibv_free_device_list(list);
  if (!q->ctx) { errno = ENODEV; return fail(device); }
  if (!(q->pd = ibv_alloc_pd(q->ctx))) return fail("ibv_alloc_pd");
  int rc = choose_gid(q);
  if (rc) return rc;
  if (!(q->cq = ibv_create_cq(q->ctx, 2 * DEPTH, NULL, NULL, 0))) return fail("ibv_create_cq");
  struct ibv_qp_init_attr init = {
    .send_cq = q->cq, .recv_cq = q->cq, .qp_type = IBV_QPT_RC,
    .cap = {.max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1, .max_recv_sge = 1},
  };
  if (!(q->qp = ibv_create_qp(q->pd, &init))) return fail("ibv_create_qp");
  q->self.qpn = q->qp->qp_num;
  return 0;
}

int pa_peer_connect(pa_peer_qp_t* q, const pa_peer_addr_t* peer) {
  static const char* const step[] = { "", "QP to INIT", "QP to RTR", "QP to RTS" };
  int rc = pa_rc_connect(ibv_modify_qp, q->qp, PORT, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
                         peer->qpn, &peer->gid, q->gid_index);
  return rc == 0 ? 0 : fail(step[rc]);
}

int pa_peer_write(pa_peer_qp_t* q, const void* src, uint32_t len, uint32_t lkey, uint64_t remote, uint32_t rkey) {
  struct ibv_sge sge = {.addr = (uintptr_t)src, .length = len, .lkey = lkey};
  struct ibv_send_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                           .send_flags = IBV_SEND_SIGNALED, .wr.rdma = {.remote_addr = remote, .rkey = rkey}};
  struct ibv_send_wr* bad = NULL;
  if (ibv_post_send(q->qp, &wr, &bad)) return fail("ibv_post_send");
  const long long deadline = now_ns() + COMPLETION_BUDGET_NS;
  struct ibv_wc wc;
  int n;
  while ((n = ibv_poll_cq(q->cq, 1, &wc)) == 0)
    if (now_ns() > deadline) { errno = ETIMEDOUT; return fail("RDMA WRITE completion"); }
  if (n < 0) return fail("ibv_poll_cq");
  if (wc.status != IBV_WC_SUCCESS) {
    fprintf(stderr, "peer_qp: RDMA WRITE failed: %s\n", ibv_wc_status_str(wc.status));
    return -EIO;
  }
  return 0;
}

void pa_peer_close(pa_peer_qp_t* q) {
  if (q->qp) ibv_destroy_qp(q->qp);
  if (q->cq) ibv_destroy_cq(q->cq);
  /* A PD the shim registers its chunks on stays busy (EBUSY) until the process ends: keep it and its device. */
  if (q->pd && ibv_dealloc_pd(q->pd) == 0 && q->ctx) ibv_close_device(q->ctx);
  memset(q, 0, sizeof *q);
}

/* verbs_pair.c — RC loopback queue pairs (see verbs_pair.h). Soft-RoCE ports
 * are Ethernet: the pair is addressed by GID, an IPv4-mapped one preferred. */
#include "verbs_pair.h"
#include "rc_connect.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define PORT        1
#define QUEUE_DEPTH 16
#define POLL_BUDGET_NS (10LL * 1000 * 1000 * 1000)

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct ibv_context* open_device(const char* name) {
  int n = 0;
  struct ibv_device** list = ibv_get_device_list(&n);
  if (list == NULL) {
    fprintf(stderr, "ibv_get_device_list failed: %s%s\n", strerror(errno),
            errno == ENOSYS ? " — this kernel has no RDMA support (run under testbed/softroce)" : "");
    return NULL;
  }
  struct ibv_context* ctx = NULL;
  for (int i = 0; i < n && ctx == NULL; i++) {
    if (name == NULL || strcmp(ibv_get_device_name(list[i]), name) == 0) ctx = ibv_open_device(list[i]);
  }
  if (ctx == NULL) fprintf(stderr, "no RDMA device %s%s (found %d)\n", name ? "named " : "", name ? name : "", n);
  ibv_free_device_list(list);
  return ctx;
}

static int pick_gid(pa_vp_t* p) {
  struct ibv_port_attr port;
  if (ibv_query_port(p->ctx, PORT, &port) != 0) return -errno;
  if (port.state != IBV_PORT_ACTIVE) {
    fprintf(stderr, "port %d of %s is not active (state %d)\n", PORT, p->device, port.state);
    return -ENETDOWN;
  }
  int best = -1;
  for (int i = 0; i < port.gid_tbl_len; i++) {
    union ibv_gid gid;
    if (ibv_query_gid(p->ctx, PORT, i, &gid) != 0) continue;
    if (gid.global.subnet_prefix == 0 && gid.global.interface_id == 0) continue;
    int v4mapped = gid.raw[10] == 0xff && gid.raw[11] == 0xff;
    if (best < 0 || v4mapped) { best = i; p->gid = gid; }
    if (v4mapped) break;
  }
  if (best < 0) { fprintf(stderr, "no usable GID on %s port %d\n", p->device, PORT); return -ENOENT; }
  p->gid_index = best;
  return 0;
}

static struct ibv_qp* create_qp(pa_vp_t* p) {
  struct ibv_qp_init_attr init = {
    .send_cq = p->cq, .recv_cq = p->cq, .qp_type = IBV_QPT_RC,
    .cap = { .max_send_wr = QUEUE_DEPTH, .max_recv_wr = QUEUE_DEPTH, .max_send_sge = 1, .max_recv_sge = 1 },
  };
  return ibv_create_qp(p->pd, &init);
}

static int connect_qp(pa_vp_t* p, struct ibv_qp* qp, uint32_t remote_qpn) {
  /* loopback: the peer is this port */
  if (pa_rc_connect(ibv_modify_qp, qp, PORT, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
                    remote_qpn, &p->gid, p->gid_index) != 0) return -errno;
  return 0;
}

static int pair_connect(pa_vp_t* p) {
  p->device = ibv_get_device_name(p->ctx->device);
  int rc = pick_gid(p);
  if (rc) return rc;
  p->cq = ibv_create_cq(p->ctx, 2 * QUEUE_DEPTH, NULL, NULL, 0);
  p->sender = p->cq ? create_qp(p) : NULL;
  p->receiver = p->sender ? create_qp(p) : NULL;
  if (p->receiver == NULL) { rc = -errno; fprintf(stderr, "verbs setup failed: %s\n", strerror(-rc)); return rc; }
  if ((rc = connect_qp(p, p->sender, p->receiver->qp_num)) || (rc = connect_qp(p, p->receiver, p->sender->qp_num))) {
    fprintf(stderr, "ibv_modify_qp failed: %s\n", strerror(-rc));
    return rc;
  }
  return 0;
}

int pa_vp_open(pa_vp_t* p, const char* device) {
  memset(p, 0, sizeof *p);
  p->own_pd = 1;
  p->ctx = open_device(device);
  if (p->ctx == NULL) return -ENODEV;
  p->pd = ibv_alloc_pd(p->ctx);
  if (p->pd == NULL) { int e = errno; fprintf(stderr, "ibv_alloc_pd failed: %s\n", strerror(e)); return -e; }
  return pair_connect(p);
}

int pa_vp_open_on(pa_vp_t* p, struct ibv_pd* pd) {
  memset(p, 0, sizeof *p);
  p->pd = pd;
  p->ctx = pd->context;
  return pair_connect(p);
}

void pa_vp_close(pa_vp_t* p) {
  if (p->receiver) ibv_destroy_qp(p->receiver);
  if (p->sender) ibv_destroy_qp(p->sender);
  if (p->cq) ibv_destroy_cq(p->cq);
  if (p->own_pd && p->pd) ibv_dealloc_pd(p->pd);
  if (p->own_pd && p->ctx) ibv_close_device(p->ctx);
  memset(p, 0, sizeof *p);
}

static int wait_completions(pa_vp_t* p, int count) {
  int64_t deadline = now_ns() + POLL_BUDGET_NS;
  int rc = 0;
  while (count > 0) {
    struct ibv_wc wc;
    int n = ibv_poll_cq(p->cq, 1, &wc);
    if (n < 0) return -EIO;
    if (n == 0) {
      if (now_ns() > deadline) { fprintf(stderr, "timed out waiting for a completion\n"); return -ETIMEDOUT; }
      continue;
    }
    if (wc.status != IBV_WC_SUCCESS) {
      fprintf(stderr, "work completion failed: %s (opcode %d)\n", ibv_wc_status_str(wc.status), wc.opcode);
      rc = -EIO;                     /* keep reaping: the other completion of a SEND may follow */
    }
    count--;
  }
  return rc;
}

int pa_vp_write(pa_vp_t* p, const void* src, uint32_t len, uint32_t lkey, void* dst, uint32_t rkey) {
  struct ibv_sge sge = { .addr = (uintptr_t)src, .length = len, .lkey = lkey };
  struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
    .send_flags = IBV_SEND_SIGNALED, .wr.rdma = { .remote_addr = (uintptr_t)dst, .rkey = rkey } };
  struct ibv_send_wr* bad = NULL;
  if (ibv_post_send(p->sender, &wr, &bad)) return -errno;
  return wait_completions(p, 1);
}

int pa_vp_send(pa_vp_t* p, const void* src, uint32_t len, uint32_t lkey, void* dst, uint32_t dst_lkey) {
  struct ibv_sge rsge = { .addr = (uintptr_t)dst, .length = len, .lkey = dst_lkey };
  struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 };
  struct ibv_recv_wr* rbad = NULL;
  if (ibv_post_recv(p->receiver, &rwr, &rbad)) return -errno;
  struct ibv_sge sge = { .addr = (uintptr_t)src, .length = len, .lkey = lkey };
  struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
    .send_flags = IBV_SEND_SIGNALED };
  struct ibv_send_wr* bad = NULL;
  if (ibv_post_send(p->sender, &wr, &bad)) return -errno;
  return wait_completions(p, 2);
}

int pa_vp_rdma(pa_vp_t* p, int op, void* local, uint32_t len, uint32_t lkey, uint64_t remote, uint32_t rkey) {
  struct ibv_sge sge = { .addr = (uintptr_t)local, .length = len, .lkey = lkey };
  struct ibv_send_wr wr = { .wr_id = 4, .sg_list = &sge, .num_sge = 1, .opcode = (enum ibv_wr_opcode)op,
    .send_flags = IBV_SEND_SIGNALED, .wr.rdma = { .remote_addr = remote, .rkey = rkey } };
  struct ibv_send_wr* bad = NULL;
  if (ibv_post_send(p->sender, &wr, &bad)) return -errno;
  int64_t deadline = now_ns() + POLL_BUDGET_NS;
  for (;;) {
    struct ibv_wc wc;
    int n = ibv_poll_cq(p->cq, 1, &wc);
    if (n < 0) return -EIO;
    if (n == 1) return (int)wc.status;
    if (now_ns() > deadline) return -ETIMEDOUT;
  }
}

/* window.c — a pool of memory windows on one protection domain, and the
 * queue pair of the shim's own that binds and revokes them.
 *
 * The queue pair. Binding a window is a work request, so it needs a QP in
 * the ready-to-send state. The shim creates one RC QP on the PD it
 * registers with, connected to itself (its own GID and QP number as the
 * destination: it never sends a packet, a bind and a revoke are executed by
 * the device locally), with a completion queue of its own. No thread: the
 * caller that posts a bind or a revoke (pinarena_alloc_remote /
 * pinarena_free_remote, under the remote lock, so one at a time) polls that
 * CQ until its own completion is there. A revoke is therefore complete —
 * the device has dropped the window — before free returns and before the
 * bytes are zeroed and can be handed out again.
 *
 * Window types. A type-1 window is reachable through every QP of the PD:
 * bound here, its key works on the connections the program makes to its
 * peers; it is revoked by binding it to nothing (length 0). A type-2 window
 * is, by the InfiniBand rules rdma_rxe follows (type 2B), reachable only
 * through the QP that bound it: bound on this private QP no peer's QP can
 * use it. Type 2 is kept as a mode (PINARENA_REMOTE_KEYS=window2, revoked
 * with IBV_WR_LOCAL_INV) so that this can be seen and measured; the default
 * is type 1.
 *
 * Keys. Each bind gives the window a new key: the same index with the low
 * 8 bits advanced (ibv_inc_rkey), and every use binds twice (bind, revoke):
 * a window's key comes back after 128 uses of it. Free windows are reused
 * oldest first (a FIFO ring), and the pool grows rather than reuse a window
 * while fewer than WP_MIN_FREE are free: between two uses of one window at
 * least WP_MIN_FREE other allocations happen, so a freed buffer's key is
 * issued again only after 128 x 4096 = 2^19 allocations, 2^20 binds — or
 * fewer where the device has fewer windows (max_mw below 4096 plus the live
 * ones: the pool stops growing at the device's limit and reuses sooner). */
#define _GNU_SOURCE
#include "internal.h"
#include "remote.h"
#include "../raw_map.h"
#include "rc_connect.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WP_PORT      1
#define WP_DEPTH     16
#define WP_RING      65536          /* most windows one pool holds (live + free) */
#define WP_GROW      16             /* windows allocated at a time */
#define WP_MIN_FREE  4096           /* free windows kept ahead of any reuse (the key distance above) */

struct pa_wpool_s {
  const pa_rv_t*  rv;
  struct ibv_pd*  pd;
  struct ibv_cq*  cq;
  struct ibv_qp*  qp;
  int             type;             /* IBV_MW_TYPE_1 or IBV_MW_TYPE_2 */
  uint64_t        seq;              /* wr_id of the last request posted */
  uint32_t        head, tail;       /* free windows: ring[head % WP_RING] .. ring[tail % WP_RING] */
  uint32_t        total;            /* windows allocated */
  uint32_t        cap;              /* most windows: WP_RING or the device's max_mw, the smaller */
  struct ibv_mw** ring;
};

static int pick_gid(const pa_rv_t* rv, struct ibv_context* ctx, union ibv_gid* gid, int* index) {
  struct ibv_port_attr port;
  memset(&port, 0, sizeof port);
  if (rv->query_port(ctx, WP_PORT, &port) != 0) return -EIO;
  if (port.state != IBV_PORT_ACTIVE) return -ENETDOWN;
  int best = -1;
  for (int i = 0; i < port.gid_tbl_len && i < 256; i++) {
    union ibv_gid g;
    if (rv->query_gid(ctx, WP_PORT, i, &g) != 0) continue;
    if (g.global.subnet_prefix == 0 && g.global.interface_id == 0) continue;
    if (best < 0) { best = i; *gid = g; }
    if (g.raw[10] == 0xff && g.raw[11] == 0xff) { best = i; *gid = g; break; }   /* IPv4-mapped: RoCEv2 */
  }
  if (best < 0) return -ENOENT;
  *index = best;
  return 0;
}

/* RESET -> RTS, addressed to QP number dest on this port. */
static int connect_to(const pa_rv_t* rv, struct ibv_qp* qp, uint32_t dest) {
  union ibv_gid gid;
  int gid_index = 0;
  int rc = pick_gid(rv, qp->context, &gid, &gid_index);
  if (rc != 0) return rc;
  int access = dest == qp->qp_num ? 0          /* the window QP: nothing reaches memory through it */
             : IBV_ACCESS_REMOTE_READ;          /* the probe's target */
  return pa_rc_connect(rv->modify_qp, qp, WP_PORT, access, dest, &gid, gid_index) == 0 ? 0 : -EIO;
}

/* One RDMA READ of len bytes from remote (rkey) into local (lkey) on a QP
 * connected to itself; the completion's status, or -1 if none came. */
static int self_read(pa_wpool_t* w, struct ibv_qp* qp, void* local, uint32_t lkey, void* remote, uint32_t rkey, uint32_t len) {
  struct ibv_sge sge = { .addr = (uintptr_t)local, .length = len, .lkey = lkey };
  struct ibv_send_wr wr, *bad = NULL;
  memset(&wr, 0, sizeof wr);
  wr.wr_id = ++w->seq; wr.sg_list = &sge; wr.num_sge = 1; wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED; wr.wr.rdma.remote_addr = (uintptr_t)remote; wr.wr.rdma.rkey = rkey;
  if (ibv_post_send(qp, &wr, &bad) != 0) return -1;
  for (long spins = 0; spins < 100000000L; spins++) {
    struct ibv_wc wc;
    int n = ibv_poll_cq(w->cq, 1, &wc);
    if (n < 0) return -1;
    if (n == 1 && wc.wr_id == wr.wr_id) return (int)wc.status;
    if (n == 0) sched_yield();
  }
  return -1;
}

/* Does the device keep a peer inside a window's bounds? Bind a window to
 * 64 bytes of a probe buffer, then READ through a second QP of the PD: the
 * 64 bytes must arrive, the byte after them must be refused. (rdma_rxe up
 * to at least 6.x checks a window access against the bounds of the MR under
 * it, not of the window: there a window key reaches the whole chunk, and
 * per-buffer registrations are used instead.) 0: bounds hold. */
static int probe_bounds(pa_wpool_t* w, const char** why) {
  const size_t len = 2 * 4096;
  char* buf = pa_raw_map(len);
  if (buf == NULL) { *why = "no memory for the window probe"; return -ENOMEM; }
  int verdict = -EIO;
  struct ibv_mr* mr = w->rv->reg_mr(w->pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
  struct ibv_qp_init_attr init;
  memset(&init, 0, sizeof init);
  init.send_cq = w->cq; init.recv_cq = w->cq; init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = 4; init.cap.max_recv_wr = 1; init.cap.max_send_sge = 1; init.cap.max_recv_sge = 1;
  /* two QPs connected to each other: the peer (qp) reads, the target answers */
  struct ibv_qp* qp = mr ? w->rv->create_qp(w->pd, &init) : NULL;
  struct ibv_qp* target = qp ? w->rv->create_qp(w->pd, &init) : NULL;
  struct ibv_mw* mw = NULL;
  uint32_t rkey = 0;
  if (target == NULL || connect_to(w->rv, qp, target->qp_num) != 0 || connect_to(w->rv, target, qp->qp_num) != 0)
    *why = "window probe: no pair of QPs";
  else if (pa_wpool_bind(w, mr, buf, 64, IBV_ACCESS_REMOTE_READ, &mw, &rkey) != 0) *why = "window probe: bind failed";
  else {
    memset(buf, 0x5a, 64);
    if (self_read(w, qp, buf + 4096, mr->lkey, buf, rkey, 64) != IBV_WC_SUCCESS || buf[4096] != 0x5a)
      *why = "window probe: a bound window could not be read";
    else if (self_read(w, qp, buf + 4096 + 64, mr->lkey, buf + 64, rkey, 1) == IBV_WC_SUCCESS)
      *why = "the device does not enforce window bounds (a window key reached past its window)";
    else verdict = 0;
    if (pa_wpool_revoke(w, mw, mr, rkey) != 0 && verdict == 0) { verdict = -EIO; *why = "window probe: revoke failed"; }
  }
  if (target) w->rv->destroy_qp(target);
  if (qp) w->rv->destroy_qp(qp);
  for (struct ibv_wc wc; ibv_poll_cq(w->cq, 1, &wc) > 0;) {}   /* flushed requests of the probe QP */
  if (mr == NULL || w->rv->dereg_mr(mr) == 0) pa_raw_unmap(buf, len);   /* else it stays: still registered */
  return verdict;
}

int pa_wpool_open(pa_wpool_t** out, const pa_rv_t* rv, struct ibv_pd* pd, int type, int probe, const char** why) {
  struct ibv_device_attr dev;
  memset(&dev, 0, sizeof dev);
  if (rv->query_device(pd->context, &dev) != 0) { *why = "ibv_query_device failed"; return -EIO; }
  uint64_t need = type == IBV_MW_TYPE_1 ? IBV_DEVICE_MEM_WINDOW
                                        : (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B);
  if (dev.max_mw == 0 || !(dev.device_cap_flags & need)) { *why = "the device has no memory windows of that type"; return -EOPNOTSUPP; }
  pa_wpool_t* w = pa_raw_map(sizeof(*w));
  struct ibv_mw** ring = pa_raw_map(WP_RING * sizeof(*ring));    /* untouched pages cost nothing */
  if (w == NULL || ring == NULL) { *why = "no memory for the window pool"; return -ENOMEM; }
  w->rv = rv; w->pd = pd; w->type = type; w->ring = ring;
  w->cap = dev.max_mw < WP_RING ? (uint32_t)dev.max_mw : WP_RING;
  w->cq = rv->create_cq(pd->context, 2 * WP_DEPTH, NULL, NULL, 0);
  if (w->cq == NULL) { *why = "ibv_create_cq failed"; return -EIO; }
  struct ibv_qp_init_attr init;
  memset(&init, 0, sizeof init);
  init.send_cq = w->cq; init.recv_cq = w->cq; init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = WP_DEPTH; init.cap.max_recv_wr = 1; init.cap.max_send_sge = 1; init.cap.max_recv_sge = 1;
  w->qp = rv->create_qp(pd, &init);
  if (w->qp == NULL) { *why = "ibv_create_qp failed"; rv->destroy_cq(w->cq); return -EIO; }
  int rc = connect_to(rv, w->qp, w->qp->qp_num);
  if (rc != 0) {
    *why = "the window QP could not be brought to RTS";
    rv->destroy_qp(w->qp); rv->destroy_cq(w->cq);
    return rc;
  }
  if (probe && type == IBV_MW_TYPE_1 && (rc = probe_bounds(w, why)) != 0) {
    /* The probe's window is back in the ring (revoked) or destroyed: the
       pool goes whole, so nothing of it is left on the caller's PD (a PD
       with a window on it cannot be deallocated). */
    pa_wpool_close(w);
    return rc;
  }
  *out = w;
  return 0;
}

uint32_t pa_wpool_qpn(const pa_wpool_t* w) { return w->qp->qp_num; }

/* Poll until the completion of request `id`. Earlier ones were all reaped
 * (one request in flight at a time). 0, or -EIO for a failed completion. */
static int wait_for(pa_wpool_t* w, uint64_t id) {
  for (;;) {
    struct ibv_wc wc;
    int n = ibv_poll_cq(w->cq, 1, &wc);
    if (n < 0) return -EIO;
    if (n == 0) { sched_yield(); continue; }   /* a bind completes in the device's own time */
    if (wc.wr_id != id) continue;
    return wc.status == IBV_WC_SUCCESS ? 0 : -EIO;
  }
}

static struct ibv_mw* take(pa_wpool_t* w) {
  /* Grow before reusing a recent window. New windows go in at the head, ahead of the freed ones (the
     ring's indices wrap modulo 2^32, a multiple of WP_RING), so a freed window waits behind every window
     still unused and is bound again only once WP_MIN_FREE windows stand ahead of it. */
  if (w->tail - w->head < WP_MIN_FREE && w->total < w->cap) {
    for (int i = 0; i < WP_GROW && w->total < w->cap; i++) {
      struct ibv_mw* mw = ibv_alloc_mw(w->pd, (enum ibv_mw_type)w->type);
      if (mw == NULL) break;
      w->ring[--w->head % WP_RING] = mw;
      w->total++;
    }
  }
  if (w->head == w->tail) return NULL;
  return w->ring[w->head++ % WP_RING];
}

static void give_back(pa_wpool_t* w, struct ibv_mw* mw) { w->ring[w->tail++ % WP_RING] = mw; }

/* A window whose state is unknown (its request failed) is not reused. */
static void discard(pa_wpool_t* w, struct ibv_mw* mw) { ibv_dealloc_mw(mw); w->total--; }

int pa_wpool_bind(pa_wpool_t* w, struct ibv_mr* mr, void* addr, size_t len, int access,
                  struct ibv_mw** out, uint32_t* rkey) {
  struct ibv_mw* mw = take(w);
  if (mw == NULL) return -ENOMEM;
  uint64_t id = ++w->seq;
  struct ibv_mw_bind_info info = { .mr = mr, .addr = (uintptr_t)addr, .length = len, .mw_access_flags = (unsigned)access };
  int rc;
  if (w->type == IBV_MW_TYPE_1) {
    struct ibv_mw_bind b = { .wr_id = id, .send_flags = IBV_SEND_SIGNALED, .bind_info = info };
    rc = ibv_bind_mw(w->qp, mw, &b);            /* the provider gives mw its next key */
    if (rc != 0) { give_back(w, mw); return -rc; }
  } else {
    struct ibv_send_wr wr, *bad = NULL;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = id; wr.opcode = IBV_WR_BIND_MW; wr.send_flags = IBV_SEND_SIGNALED;
    wr.bind_mw.mw = mw; wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey); wr.bind_mw.bind_info = info;
    rc = ibv_post_send(w->qp, &wr, &bad);
    if (rc != 0) { give_back(w, mw); return -rc; }
    mw->rkey = wr.bind_mw.rkey;
  }
  if (wait_for(w, id) != 0) { discard(w, mw); return -EIO; }
  *out = mw;
  *rkey = mw->rkey;
  return 0;
}

int pa_wpool_revoke(pa_wpool_t* w, struct ibv_mw* mw, struct ibv_mr* mr, uint32_t rkey) {
  uint64_t id = ++w->seq;
  int rc;
  if (w->type == IBV_MW_TYPE_1) {
    /* Bound to zero bytes, under a new key: no access passes a window of
       length 0. The MR is named although no byte of it is bound (rxe's
       provider reads its lkey; a NULL MR crashes there). */
    struct ibv_mw_bind b = { .wr_id = id, .send_flags = IBV_SEND_SIGNALED,
                             .bind_info = { .mr = mr, .addr = 0, .length = 0, .mw_access_flags = 0 } };
    rc = ibv_bind_mw(w->qp, mw, &b);
  } else {
    struct ibv_send_wr wr, *bad = NULL;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = id; wr.opcode = IBV_WR_LOCAL_INV; wr.send_flags = IBV_SEND_SIGNALED;
    wr.invalidate_rkey = rkey;
    rc = ibv_post_send(w->qp, &wr, &bad);
  }
  if (rc != 0 || wait_for(w, id) != 0) { discard(w, mw); return rc != 0 ? -rc : -EIO; }
  give_back(w, mw);
  return 0;
}

void pa_wpool_close(pa_wpool_t* w) {
  while (w->head != w->tail) ibv_dealloc_mw(w->ring[w->head++ % WP_RING]);
  w->rv->destroy_qp(w->qp);
  w->rv->destroy_cq(w->cq);
  pa_raw_unmap(w->ring, WP_RING * sizeof(*w->ring));
  pa_raw_unmap(w, sizeof(*w));
}

void pa_wpool_drop(pa_wpool_t* w, struct ibv_mw* mw) { discard(w, mw); }

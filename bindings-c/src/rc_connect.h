/* rc_connect.h — the one sequence every RC queue pair of this project goes
 * through to reach ready-to-send: RESET -> INIT -> RTR -> RTS, addressed to
 * one QP (its number and GID) on `port` (the shim's window QP, connected to
 * itself; the tools' loopback pair; the MPI tests' peer QP). Settings are
 * those every caller used: path MTU 1024, one outstanding RDMA READ each
 * way, RNR timer 12, timeout 14, 7 retries, PSN 0, hop limit 1.
 *
 * modify is ibv_modify_qp, or the shim's copy of it resolved with dlsym
 * (the shim does not link libibverbs). Returns 0, or the step that failed
 * (PA_RC_INIT, PA_RC_RTR, PA_RC_RTS) with errno from the provider. */
#ifndef PA_RC_CONNECT_H
#define PA_RC_CONNECT_H

#include <infiniband/verbs.h>
#include <stdint.h>
#include <string.h>

enum { PA_RC_INIT = 1, PA_RC_RTR, PA_RC_RTS };

typedef int (*pa_modify_qp_fn)(struct ibv_qp*, struct ibv_qp_attr*, int);

static inline int pa_rc_connect(pa_modify_qp_fn modify, struct ibv_qp* qp, uint8_t port, int access,
                                uint32_t dest_qpn, const union ibv_gid* dgid, int sgid_index) {
  struct ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_INIT;
  a.port_num = port;
  a.qp_access_flags = (unsigned)access;
  if (modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) return PA_RC_INIT;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = dest_qpn;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = *dgid;
  a.ah_attr.grh.sgid_index = (uint8_t)sgid_index;
  a.ah_attr.grh.hop_limit = 1;
  a.ah_attr.port_num = port;
  if (modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) return PA_RC_RTR;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 1;
  if (modify(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                     IBV_QP_MAX_QP_RD_ATOMIC)) return PA_RC_RTS;
  return 0;
}

#endif

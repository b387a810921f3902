/* vrc.h — the registration cache over real verbs pins (ibv_reg_mr on rxe0),
 * for the Soft-RoCE tests. The cache's register/deregister callbacks are
 * ibv_reg_mr / ibv_dereg_mr; a "send" is an RDMA WRITE over an RC loopback
 * queue pair from the cached region (its lkey) into a registered
 * destination buffer, compared with the source buffer's CURRENT bytes: a
 * stale registration delivers the bytes of the frames it pinned, not what
 * the address shows now. */
#ifndef PA_TEST_VRC_H
#define PA_TEST_VRC_H

#include "sent_bytes.h"
#include "kernel_view.h"
#include "map_at.h"
#include "regcache.h"
#include "ivset.h"
#include "memhooks.h"
#include "ufd_monitor.h"
#include "verbs_pair.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096ul
#define VRC_DST_DEFAULT (4 * PA_MiB)

typedef struct vrc_s {
  pa_vp_t         vp;
  struct ibv_mr*  dst_mr;
  unsigned char*  dst;          /* the "wire": where RDMA WRITEs land */
  size_t          dst_len;
  pthread_mutex_t qp_mu;        /* one send (write + completion + compare) at a time */
  int             fail_next;    /* inject: the next registration returns -fail_next */
  _Atomic int     regs, deregs;
  pa_rc_t         c;
} vrc_t;

/* A cache over verbs with a dst_len destination (0: VRC_DST_DEFAULT). Skips
 * the test without an RDMA device, unless PINARENA_REQUIRE_RDMA=1. */
vrc_t* vrc_open_dst(const pa_rc_config_t* cfg, size_t dst_len);
static inline vrc_t* vrc_open(const pa_rc_config_t* cfg) { return vrc_open_dst(cfg, 0); }

/* get that must succeed and contain the request. */
pa_rc_region_t* vrc_get(vrc_t* t, const void* a, size_t len);
/* RDMA WRITE [a, a+len) through r (lkey) in pieces of dst_len; returns how
 * many bytes arrived equal to the buffer's current bytes. On return t->dst
 * holds the last piece as delivered. A failed completion fails the test. */
size_t vrc_send(vrc_t* t, const pa_rc_region_t* r, const void* a, size_t len);
/* get + send + put; every byte must be current. */
void vrc_expect(vrc_t* t, const void* a, size_t len, const char* what);
pa_rc_stats_t vrc_stats(vrc_t* t);
/* Drop CAP_IPC_LOCK from this process (the test child), so RLIMIT_MEMLOCK binds. */
void vrc_drop_ipc_lock(void);

#endif

/* wire.h — the registration cache's scenario suite (test_rc_*.c) is written
 * once against this small wire: register, deregister, and send-and-compare.
 * It is bound twice: wire_uring.c (io_uring fixed buffers on the host: a send
 * is a WRITE_FIXED into a temp file, read back) and wire_verbs.c (ibv_reg_mr
 * on rxe0 in the Soft-RoCE VM: a send is an RDMA WRITE over an RC loopback
 * queue pair into a registered destination). Either way a send delivers the
 * bytes of the frames the registration pinned, and is compared with what the
 * source address shows NOW: a stale registration cannot pass. */
#ifndef PA_TEST_RC_WIRE_H
#define PA_TEST_RC_WIRE_H

#include "sent_bytes.h"
#include "kernel_view.h"
#include "map_at.h"
#include "regcache.h"
#include "ivset.h"
#include "memhooks.h"
#include "ufd_monitor.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096ul
#define RCW_DST_DEFAULT (4 * PA_MiB)
/* The access bits every scenario registers with: local write (IBV_ACCESS_LOCAL_WRITE is 1; io_uring ignores them). */
#define RCW_ACCESS 1

struct rcw_backend_s;

typedef struct rcw_s {
  pa_rc_t                c;
  unsigned char*         dst;        /* what the last send delivered (its last piece) */
  size_t                 dst_len;
  pthread_mutex_t        send_mu;    /* one send (write + compare) at a time */
  int                    fail_next;  /* inject: the next registration returns -fail_next */
  _Atomic int            regs, deregs;
  struct rcw_backend_s*  be;         /* the binding's state */
} rcw_t;

/* ---- what a binding provides (wire_uring.c, wire_verbs.c) ---------------- */
/* Its name, for notes. */
extern const char rcw_binding[];
/* Iterations per worker of the threaded scenario (the VM emulates its CPUs). */
extern const int rcw_thread_iters;
/* Sets up t->be after t->dst is mapped; skips the test when the binding's
 * resource is absent (unless PINARENA_REQUIRE_RDMA=1 makes that a failure). */
void rcw_binding_open(rcw_t* t);
/* The cache's register / deregister callbacks (wire.c adds the counting and
 * the injected failure): 0 or -errno. */
int  rcw_binding_reg(rcw_t* t, uintptr_t a, size_t len, int access, uint64_t* h, uint32_t* lk, uint32_t* rk);
int  rcw_binding_dereg(rcw_t* t, uintptr_t a, size_t len, uint64_t h);
/* Delivers n bytes at src through r into t->dst; fails the test on an error. */
void rcw_binding_write(rcw_t* t, const pa_rc_region_t* r, const void* src, size_t n);

/* ---- the wire (wire.c) --------------------------------------------------- */
/* A cache over the binding with a dst_len destination (0: RCW_DST_DEFAULT). */
rcw_t* rcw_open_dst(const pa_rc_config_t* cfg, size_t dst_len);
static inline rcw_t* rcw_open(const pa_rc_config_t* cfg) { return rcw_open_dst(cfg, 0); }
/* get that must succeed and contain the request. */
pa_rc_region_t* rcw_get(rcw_t* t, const void* a, size_t len);
/* Send [a, a+len) through r in pieces of dst_len; returns how many delivered
 * bytes equal the buffer's current bytes. On return t->dst holds the last
 * piece as delivered. */
size_t rcw_send(rcw_t* t, const pa_rc_region_t* r, const void* a, size_t len);
/* get + send + put; every byte must be current. */
void rcw_expect(rcw_t* t, const void* a, size_t len, const char* what);
pa_rc_stats_t rcw_stats(rcw_t* t);
/* Drop CAP_IPC_LOCK from this process (the test child), so RLIMIT_MEMLOCK binds. */
void rcw_drop_ipc_lock(void);

#endif

/* remote.h — remote-scope memory: buffers a program exposes to RDMA peers,
 * and the keys that reach exactly them (remote.c), bound through a pool of
 * memory windows on a queue pair of the shim's own (window.c).
 *
 * The heap is registered for local access only (register.c): a key of the
 * heap reaches nothing remotely. Remote access exists only for memory taken
 * with pinarena_alloc_remote, from remote-scope chunks that hold no
 * allocator metadata (their bookkeeping lives in a separate mapping) and are
 * zeroed when a buffer is freed, after its key was revoked.
 *
 * libibverbs is dlopen'ed by register.c; the entry points used here are
 * resolved from the same handle (pa_rv). The data-path verbs (post_send,
 * poll_cq, bind_mw, alloc_mw) are inline in verbs.h and go through the
 * context's ops table, so they need no symbol. */
#ifndef PA_SHIM_REMOTE_H
#define PA_SHIM_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>   /* types and inline ops only */

/* How a remote buffer's key is made (PINARENA_REMOTE_KEYS). */
enum {
  PA_RKEYS_NONE = 0,   /* registrar is not verbs: memory without keys */
  PA_RKEYS_WINDOW,     /* a type-1 memory window bound to exactly the buffer (default where supported) */
  PA_RKEYS_WINDOW2,    /* a type-2 window bound on the shim's own QP (reachable only through that QP) */
  PA_RKEYS_MR,         /* ibv_reg_mr of exactly the buffer */
  PA_RKEYS_CHUNK       /* the remote chunk's key: reaches every remote buffer of the chunk */
};

/* The verbs entry points (non-inline ones), resolved once. */
typedef struct pa_rv_s {
  struct ibv_mr* (*reg_mr)(struct ibv_pd*, void*, size_t, int);
  int (*dereg_mr)(struct ibv_mr*);
  int (*query_device)(struct ibv_context*, struct ibv_device_attr*);
  int (*query_port)(struct ibv_context*, uint8_t, struct ibv_port_attr*);
  int (*query_gid)(struct ibv_context*, uint8_t, int, union ibv_gid*);
  struct ibv_cq* (*create_cq)(struct ibv_context*, int, void*, struct ibv_comp_channel*, int);
  int (*destroy_cq)(struct ibv_cq*);
  struct ibv_qp* (*create_qp)(struct ibv_pd*, struct ibv_qp_init_attr*);
  int (*destroy_qp)(struct ibv_qp*);
  int (*modify_qp)(struct ibv_qp*, struct ibv_qp_attr*, int);
} pa_rv_t;

/* window.c: the window pool of one PD and the QP binds are posted on.
 * Called with the remote lock held (remote.c): one caller at a time. */
typedef struct pa_wpool_s pa_wpool_t;
/* 0, or -errno when windows cannot be used on this PD (no MW support,
 * no active port for the QP, with probe: a window key reaches past its
 * window on this device); *why names the reason. After a failed probe
 * nothing of the pool is left on the PD. */
int  pa_wpool_open(pa_wpool_t** out, const pa_rv_t* rv, struct ibv_pd* pd, int type, int probe, const char** why);
/* Bind a window to exactly [addr, addr + len) of mr with access: *mw and
 * *rkey (the window's new key). 0 or -errno. */
int  pa_wpool_bind(pa_wpool_t* w, struct ibv_mr* mr, void* addr, size_t len, int access,
                   struct ibv_mw** mw, uint32_t* rkey);
/* Revoke the window (type 1: bind to zero bytes of mr; type 2: LOCAL_INV of rkey) and
 * wait for the completion: when this returns 0 no peer can reach the old
 * range with the old key. The window goes back to the pool. */
int  pa_wpool_revoke(pa_wpool_t* w, struct ibv_mw* mw, struct ibv_mr* mr, uint32_t rkey);
/* A bound window, destroyed rather than revoked (teardown: its key dies with it). */
void pa_wpool_drop(pa_wpool_t* w, struct ibv_mw* mw);
/* Destroy the free windows, the QP, the CQ and the pool (every window must be back or dropped). */
void pa_wpool_close(pa_wpool_t* w);
/* The QP binds are posted on (for tests and the doctor). */
uint32_t pa_wpool_qpn(const pa_wpool_t* w);

#endif

/* windows_ffi.c — libpinarena-windows.so: the shim's memory-window pool
 * (src/shim/window.c) for callers that reach verbs through an FFI (the Java
 * arena), which cannot post a bind themselves: ibv_bind_mw, ibv_post_send
 * and ibv_poll_cq are inline in verbs.h.
 *
 *   w  = pa_mw_open(pd, probe)       a pool of type-1 windows on the caller's
 *                                    PD and the self-connected QP that binds
 *                                    them; with probe (1), checks once that
 *                                    the device keeps a peer inside a
 *                                    window's bounds (0: for measurement and
 *                                    tests only). NULL with errno, nothing
 *                                    left on the PD; pa_mw_why() says why.
 *   mw = pa_mw_bind(w, mr, addr, len, access)
 *                                    a window bound to exactly [addr, addr+len)
 *                                    of mr (registered MW_BIND); NULL + errno
 *   pa_mw_rkey(mw)                   its key (a new one at every bind)
 *   pa_mw_revoke(w, mw, mr)          rebinds it to zero bytes and waits for the
 *                                    device: on 0 the key reaches nothing
 *   pa_mw_close(w)                   after every window was revoked
 *
 * One call per buffer, never per access. Not thread-safe: the caller holds a
 * lock around every call on one pool (a bind and its completion are one at a
 * time on the pool's QP). Every function takes a pointer first (the FFI's
 * argument passing is then the plain one). */
#define _GNU_SOURCE
#include "shim/remote.h"

#include <errno.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

static const char* last_why = "";

/* The non-inline entry points, linked directly (the shim resolves the same
 * ones with dlsym). ibv_query_port is exported with the compat port struct,
 * which is a prefix-compatible layout of struct ibv_port_attr. */
static const pa_rv_t rv = {
  .reg_mr = (struct ibv_mr* (*)(struct ibv_pd*, void*, size_t, int))ibv_reg_mr,
  .dereg_mr = ibv_dereg_mr,
  .query_device = ibv_query_device,
  .query_port = (int (*)(struct ibv_context*, uint8_t, struct ibv_port_attr*))ibv_query_port,
  .query_gid = ibv_query_gid,
  .create_cq = ibv_create_cq,
  .destroy_cq = ibv_destroy_cq,
  .create_qp = ibv_create_qp,
  .destroy_qp = ibv_destroy_qp,
  .modify_qp = ibv_modify_qp,
};

EXPORT pa_wpool_t* pa_mw_open(struct ibv_pd* pd, int probe) {
  if (pd == NULL) { last_why = "no protection domain"; errno = EINVAL; return NULL; }
  pa_wpool_t* w = NULL;
  const char* why = "";
  int rc = pa_wpool_open(&w, &rv, pd, IBV_MW_TYPE_1, probe != 0, &why);
  last_why = why;
  if (rc != 0) { errno = -rc; return NULL; }
  return w;
}

EXPORT const char* pa_mw_why(void) { return last_why; }

EXPORT struct ibv_mw* pa_mw_bind(pa_wpool_t* w, struct ibv_mr* mr, uint64_t addr, uint64_t len, int access) {
  struct ibv_mw* mw = NULL;
  uint32_t rkey = 0;
  int rc = pa_wpool_bind(w, mr, (void*)(uintptr_t)addr, (size_t)len, access, &mw, &rkey);
  if (rc != 0) { errno = -rc; return NULL; }
  return mw;
}

EXPORT uint32_t pa_mw_rkey(struct ibv_mw* mw) { return mw->rkey; }

EXPORT int pa_mw_revoke(pa_wpool_t* w, struct ibv_mw* mw, struct ibv_mr* mr) {
  return pa_wpool_revoke(w, mw, mr, mw->rkey);
}

EXPORT void pa_mw_close(pa_wpool_t* w) { pa_wpool_close(w); }

/* wire_verbs.c — the scenario wire over verbs (ibv_reg_mr on rxe0 in the
 * Soft-RoCE VM): a send is an RDMA WRITE over an RC loopback queue pair from
 * the cached region (its lkey) into the registered destination. */
#define _GNU_SOURCE
#include "wire.h"
#include "verbs_pair.h"

#include <stdlib.h>

struct rcw_backend_s {
  pa_vp_t        vp;
  struct ibv_mr* dst_mr;
};

const char rcw_binding[] = "verbs";
const int rcw_thread_iters = 400;

void rcw_binding_open(rcw_t* t) {
  t->be = mmap(NULL, sizeof *t->be, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(t->be != MAP_FAILED, "mmap");
  int rc = pa_vp_open(&t->be->vp, getenv("PINARENA_RDMA_DEVICE"));
  if (rc != 0) {
    const char* req = getenv("PINARENA_REQUIRE_RDMA");
    if (req == NULL || strcmp(req, "1") != 0) SKIP("no usable RDMA device (%s): run under testbed/softroce", strerror(-rc));
    pa_fail_call(__FILE__, __LINE__, "verbs loopback pair", -rc);
  }
  t->be->dst_mr = ibv_reg_mr(t->be->vp.pd, t->dst, t->dst_len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (t->be->dst_mr == NULL) pa_fail_call(__FILE__, __LINE__, "ibv_reg_mr (destination)", errno);
}

int rcw_binding_reg(rcw_t* t, uintptr_t a, size_t len, int access, uint64_t* h, uint32_t* lk, uint32_t* rk) {
  struct ibv_mr* mr = ibv_reg_mr(t->be->vp.pd, (void*)a, len, access | IBV_ACCESS_LOCAL_WRITE);
  if (mr == NULL) return errno ? -errno : -EIO;
  *h = (uint64_t)(uintptr_t)mr;
  *lk = mr->lkey;
  *rk = mr->rkey;
  return 0;
}

int rcw_binding_dereg(rcw_t* t, uintptr_t a, size_t len, uint64_t h) {
  (void)t; (void)a; (void)len;
  int rc = ibv_dereg_mr((struct ibv_mr*)(uintptr_t)h);
  return rc ? -rc : 0;
}

void rcw_binding_write(rcw_t* t, const pa_rc_region_t* r, const void* src, size_t n) {
  int rc = pa_vp_write(&t->be->vp, src, (uint32_t)n, r->lkey, t->dst, t->be->dst_mr->rkey);
  if (rc != 0) pa_fail_call(__FILE__, __LINE__, "RDMA WRITE from the cached region", -rc);
}

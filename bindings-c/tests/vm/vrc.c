/* vrc.c — verbs backend for the C cache and the RDMA data check (vrc.h). */
#define _GNU_SOURCE
#include "vrc.h"

#include <stdlib.h>
#include <sys/syscall.h>

static int vrc_reg(void* ctx, uintptr_t a, size_t len, int access, uint64_t* h, uint32_t* lk, uint32_t* rk) {
  vrc_t* t = ctx;
  if (t->fail_next) { int e = t->fail_next; t->fail_next = 0; return -e; }
  struct ibv_mr* mr = ibv_reg_mr(t->vp.pd, (void*)a, len, access | IBV_ACCESS_LOCAL_WRITE);
  if (mr == NULL) return errno ? -errno : -EIO;
  *h = (uint64_t)(uintptr_t)mr;
  *lk = mr->lkey;
  *rk = mr->rkey;
  t->regs++;
  return 0;
}

static int vrc_dereg(void* ctx, uintptr_t a, size_t len, uint64_t h) {
  vrc_t* t = ctx;
  (void)a; (void)len;
  t->deregs++;
  int rc = ibv_dereg_mr((struct ibv_mr*)(uintptr_t)h);
  return rc ? -rc : 0;
}

vrc_t* vrc_open_dst(const pa_rc_config_t* cfg, size_t dst_len) {
  vrc_t* t = mmap(NULL, sizeof(vrc_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(t != MAP_FAILED, "mmap");
  int rc = pa_vp_open(&t->vp, getenv("PINARENA_RDMA_DEVICE"));
  if (rc != 0) {
    const char* req = getenv("PINARENA_REQUIRE_RDMA");
    if (req == NULL || strcmp(req, "1") != 0) SKIP("no usable RDMA device (%s): run under testbed/softroce", strerror(-rc));
    pa_fail_call(__FILE__, __LINE__, "verbs loopback pair", -rc);
  }
  t->dst_len = dst_len ? dst_len : VRC_DST_DEFAULT;
  t->dst = mmap(NULL, t->dst_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  CHECK(t->dst != MAP_FAILED, "mmap dst");
  t->dst_mr = ibv_reg_mr(t->vp.pd, t->dst, t->dst_len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (t->dst_mr == NULL) pa_fail_call(__FILE__, __LINE__, "ibv_reg_mr (destination)", errno);
  pthread_mutex_init(&t->qp_mu, NULL);
  pa_rc_ops_t ops = { t, vrc_reg, vrc_dereg };
  CHECK_OK("pa_rc_init", pa_rc_init(&t->c, &ops, cfg));
  return t;
}

pa_rc_region_t* vrc_get(vrc_t* t, const void* a, size_t len) {
  pa_rc_region_t* r = NULL;
  CHECK_OK("pa_rc_get", pa_rc_get(&t->c, a, len, IBV_ACCESS_LOCAL_WRITE, &r));
  CHECK(r->addr <= (uintptr_t)a && r->addr + r->len >= (uintptr_t)a + len, "region does not contain the request");
  return r;
}

static size_t same_bytes(const unsigned char* x, const unsigned char* y, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += x[i] == y[i];
  return k;
}

size_t vrc_send(vrc_t* t, const pa_rc_region_t* r, const void* a, size_t len) {
  const unsigned char* src = a;
  size_t good = 0;
  pthread_mutex_lock(&t->qp_mu);
  for (size_t off = 0; off < len; off += t->dst_len) {
    size_t n = len - off < t->dst_len ? len - off : t->dst_len;
    memset(t->dst, 0xEE, n);                          /* poison: a write that moves nothing cannot pass */
    int rc = pa_vp_write(&t->vp, src + off, (uint32_t)n, r->lkey, t->dst, t->dst_mr->rkey);
    if (rc != 0) {
      pthread_mutex_unlock(&t->qp_mu);
      pa_fail_call(__FILE__, __LINE__, "RDMA WRITE from the cached region", -rc);
    }
    good += same_bytes(t->dst, src + off, n);
  }
  pthread_mutex_unlock(&t->qp_mu);
  return good;
}

void vrc_expect(vrc_t* t, const void* a, size_t len, const char* what) {
  pa_rc_region_t* r = vrc_get(t, a, len);
  size_t good = vrc_send(t, r, a, len);
  pa_rc_put(&t->c, r);
  CHECK(good == len, "%s: RDMA WRITE delivered %zu of %zu bytes equal to the buffer's current bytes "
        "(stale registration; first delivered byte 0x%02x, current 0x%02x)",
        what, good, len, t->dst[0], *(const unsigned char*)a);
}

pa_rc_stats_t vrc_stats(vrc_t* t) {
  pa_rc_stats_t s;
  pa_rc_stats(&t->c, &s);
  return s;
}

void vrc_drop_ipc_lock(void) {
  struct { uint32_t version; int pid; } hdr = { 0x20080522, 0 };
  struct { uint32_t eff, perm, inh; } d[2];
  memset(d, 0, sizeof d);
  CHECK(syscall(SYS_capget, &hdr, d) == 0, "capget");
  d[0].eff &= ~(1u << 14); d[0].perm &= ~(1u << 14); d[0].inh &= ~(1u << 14);   /* CAP_IPC_LOCK */
  CHECK(syscall(SYS_capset, &hdr, d) == 0, "capset");
}

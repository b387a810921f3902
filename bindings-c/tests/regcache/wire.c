/* wire.c — the binding-independent half of the scenario wire (wire.h). */
#define _GNU_SOURCE
#include "wire.h"

#include <sys/syscall.h>

static int rcw_reg(void* ctx, uintptr_t a, size_t len, int access, uint64_t* h, uint32_t* lk, uint32_t* rk) {
  rcw_t* t = ctx;
  if (t->fail_next) { int e = t->fail_next; t->fail_next = 0; return -e; }
  int rc = rcw_binding_reg(t, a, len, access, h, lk, rk);
  if (rc == 0) t->regs++;
  return rc;
}

static int rcw_dereg(void* ctx, uintptr_t a, size_t len, uint64_t h) {
  rcw_t* t = ctx;
  t->deregs++;
  return rcw_binding_dereg(t, a, len, h);
}

rcw_t* rcw_open_dst(const pa_rc_config_t* cfg, size_t dst_len) {
  rcw_t* t = mmap(NULL, sizeof(rcw_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(t != MAP_FAILED, "mmap");
  t->dst_len = dst_len ? dst_len : RCW_DST_DEFAULT;
  t->dst = mmap(NULL, t->dst_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  CHECK(t->dst != MAP_FAILED, "mmap dst");
  pthread_mutex_init(&t->send_mu, NULL);
  rcw_binding_open(t);
  pa_rc_ops_t ops = { t, rcw_reg, rcw_dereg };
  CHECK_OK("pa_rc_init", pa_rc_init(&t->c, &ops, cfg));
  return t;
}

pa_rc_region_t* rcw_get(rcw_t* t, const void* a, size_t len) {
  pa_rc_region_t* r = NULL;
  CHECK_OK("pa_rc_get", pa_rc_get(&t->c, a, len, RCW_ACCESS, &r));
  CHECK(r->addr <= (uintptr_t)a && r->addr + r->len >= (uintptr_t)a + len, "region does not contain the request");
  return r;
}

static size_t same_bytes(const unsigned char* x, const unsigned char* y, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += x[i] == y[i];
  return k;
}

size_t rcw_send(rcw_t* t, const pa_rc_region_t* r, const void* a, size_t len) {
  const unsigned char* src = a;
  size_t good = 0;
  pthread_mutex_lock(&t->send_mu);
  for (size_t off = 0; off < len; off += t->dst_len) {
    size_t n = len - off < t->dst_len ? len - off : t->dst_len;
    memset(t->dst, 0xEE, n);                          /* poison: a send that moves nothing cannot pass */
    rcw_binding_write(t, r, src + off, n);
    good += same_bytes(t->dst, src + off, n);
  }
  pthread_mutex_unlock(&t->send_mu);
  return good;
}

void rcw_expect(rcw_t* t, const void* a, size_t len, const char* what) {
  pa_rc_region_t* r = rcw_get(t, a, len);
  size_t good = rcw_send(t, r, a, len);
  pa_rc_put(&t->c, r);
  CHECK(good == len, "%s: the %s send delivered %zu of %zu bytes equal to the buffer's current bytes "
        "(stale registration; first delivered byte 0x%02x, current 0x%02x)",
        what, rcw_binding, good, len, t->dst[0], *(const unsigned char*)a);
}

pa_rc_stats_t rcw_stats(rcw_t* t) {
  pa_rc_stats_t s;
  pa_rc_stats(&t->c, &s);
  return s;
}

void rcw_drop_ipc_lock(void) {
  struct { uint32_t version; int pid; } hdr = { 0x20080522, 0 };
  struct { uint32_t eff, perm, inh; } d[2];
  memset(d, 0, sizeof d);
  CHECK(syscall(SYS_capget, &hdr, d) == 0, "capget");
  d[0].eff &= ~(1u << 14); d[0].perm &= ~(1u << 14); d[0].inh &= ~(1u << 14);   /* CAP_IPC_LOCK */
  CHECK(syscall(SYS_capset, &hdr, d) == 0, "capset");
}

/* test_regcache.h — a registration cache over real io_uring pins, for the tests.
 * Every "send" is a WRITE_FIXED through the cached region, so a test sees the
 * bytes of the pages the kernel pinned, not what the address shows now. */
#ifndef PA_TEST_REGCACHE_H
#define PA_TEST_REGCACHE_H

#include "sent_bytes.h"
#include "kernel_view.h"
#include "map_at.h"
#include "regcache.h"
#include "ivset.h"
#include "memhooks.h"
#include "ufd_monitor.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096ul

typedef struct trc_s {
  pa_uring_t u;
  pa_rc_t    c;
  int        fd;              /* the "wire": a temp file */
  int        fail_next;       /* inject: next reg returns -fail_next */
  int        regs, deregs;
} trc_t;

static inline int trc_reg(void* ctx, uintptr_t a, size_t len, int access, uint64_t* h, uint32_t* lk, uint32_t* rk) {
  trc_t* t = ctx;
  (void)access;
  if (t->fail_next) { int e = t->fail_next; t->fail_next = 0; return -e; }
  pa_uring_reg_t r;
  int rc = pa_uring_register(&t->u, (void*)a, len, &r);
  if (rc) return rc;
  *h = (uint64_t)r.first | ((uint64_t)r.count << 32);
  *lk = *rk = r.first;
  t->regs++;
  return 0;
}

static inline int trc_dereg(void* ctx, uintptr_t a, size_t len, uint64_t h) {
  trc_t* t = ctx;
  pa_uring_reg_t r = { a, len, (unsigned)h, (unsigned)(h >> 32) };
  t->deregs++;
  return pa_uring_unregister(&t->u, &r);
}

static inline trc_t* trc_open(const pa_rc_config_t* cfg) {
  trc_t* t = mmap(NULL, sizeof(trc_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(t != MAP_FAILED, "mmap");
  tu_uring(&t->u);
  pa_rc_ops_t ops = { t, trc_reg, trc_dereg };
  CHECK_OK("pa_rc_init", pa_rc_init(&t->c, &ops, cfg));
  t->fd = tu_tmpfile();
  return t;
}

static inline pa_rc_region_t* trc_get(trc_t* t, const void* a, size_t len) {
  pa_rc_region_t* r = NULL;
  CHECK_OK("pa_rc_get", pa_rc_get(&t->c, a, len, 1, &r));
  CHECK(r->addr <= (uintptr_t)a && r->addr + r->len >= (uintptr_t)a + len, "region does not contain the request");
  return r;
}

/* Send [a, a+len) through region r; return how many bytes equal `want`. */
static inline size_t trc_send(trc_t* t, pa_rc_region_t* r, const void* a, size_t len, unsigned char want) {
  pa_uring_reg_t ur = { r->addr, r->len, (unsigned)r->handle, (unsigned)(r->handle >> 32) };
  tu_write_fixed(&t->u, &ur, t->fd, a, len);
  tu_pread(t->fd, tu_scratch, len, 0);
  return tu_count(tu_scratch, len, want);
}

/* get + send + put; the whole send must carry `want`. */
static inline void trc_expect(trc_t* t, const void* a, size_t len, unsigned char want, const char* what) {
  pa_rc_region_t* r = trc_get(t, a, len);
  size_t n = trc_send(t, r, a, len, want);
  pa_rc_put(&t->c, r);
  CHECK(n == len, "%s: the send carried %zu of %zu current '%c' bytes (stale registration)", what, n, len, want);
}

static inline pa_rc_stats_t trc_stats(trc_t* t) {
  pa_rc_stats_t s;
  pa_rc_stats(&t->c, &s);
  return s;
}

#endif

/* test_remote.c — what a peer holding a key can reach, over real verbs
 * (rxe0 in the Soft-RoCE VM). The test process is linked against
 * libpinarena.so; the "peer" is one QP of a loopback RC pair on the shim's
 * PD, the program's side is the other. Every denied access is checked three
 * ways: the completion is a remote access error, the target's bytes are
 * unchanged, and (READ) nothing arrived in the peer's buffer.
 *
 * The remote API is resolved with dlsym so the heap test also runs against
 * a library without it (it fails there: the heap is open to peers). */
#define _GNU_SOURCE
#include "runner.h"
#include "verbs_pair.h"
#include "pinarena.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PEER_BUF (64 * 1024)
#define SZ 1000                         /* not a multiple of anything: bounds are byte-exact */

typedef struct peer_s {
  pa_vp_t        vp;
  struct ibv_pd* pd;
  char*          buf;
  struct ibv_mr* mr;
} peer_t;

static peer_t P;
static char snap[PEER_BUF];

static void* (*alloc_remote)(size_t, int);
static int (*free_remote)(void*);
static const char* (*remote_keys)(void);
static const char* (*keys_why)(void);

static void resolve_api(void) {
  alloc_remote = (void* (*)(size_t, int))dlsym(RTLD_DEFAULT, "pinarena_alloc_remote");
  free_remote = (int (*)(void*))dlsym(RTLD_DEFAULT, "pinarena_free_remote");
  remote_keys = (const char* (*)(void))dlsym(RTLD_DEFAULT, "pinarena_remote_keys");
  keys_why = (const char* (*)(void))dlsym(RTLD_DEFAULT, "pinarena_remote_keys_why");
  CHECK(alloc_remote && free_remote && remote_keys && keys_why,
        "the library has no pinarena_alloc_remote / _free_remote / _remote_keys / _remote_keys_why");
}

/* A heap block the shim registered (the test child starts with inherited,
 * unregistered chunks: allocate until a block lands in a fresh chunk). */
static char* registered_block(size_t n, pinarena_region_t* r) {
  for (int i = 0; i < 400000; i++) {
    char* p = malloc(n);
    CHECK(p != NULL, "malloc");
    if (pinarena_lookup(p, n, r) == 0) return p;
  }
  pa_fail(__FILE__, __LINE__, "no registered heap block (registrar %s)", pinarena_registrar());
}

static void peer_connect(void) {
  CHECK_OK("pa_vp_open_on", pa_vp_open_on(&P.vp, P.pd));
}

static void peer_open(void) {
  pinarena_region_t r;
  registered_block(64, &r);            /* makes the shim choose its registrar and PD */
  P.pd = (struct ibv_pd*)pinarena_pd();
  CHECK(P.pd != NULL, "the shim has no verbs PD (registrar %s)", pinarena_registrar());
  P.buf = mmap(NULL, PEER_BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(P.buf != MAP_FAILED, "mmap");
  P.mr = ibv_reg_mr(P.pd, P.buf, PEER_BUF, IBV_ACCESS_LOCAL_WRITE);
  CHECK(P.mr != NULL, "ibv_reg_mr of the peer's buffer: %s", strerror(errno));
  peer_connect();
}

static const char* op_name(int op) { return op == IBV_WR_RDMA_READ ? "READ" : "WRITE"; }

/* The peer's access succeeds and moves the bytes. */
static void expect_allowed(int op, void* target, uint32_t len, uint32_t rkey, const char* what) {
  if (op == IBV_WR_RDMA_WRITE) for (uint32_t i = 0; i < len; i++) P.buf[i] = (char)(0x40 + i % 31);
  else memset(P.buf, 'X', len);
  int st = pa_vp_rdma(&P.vp, op, P.buf, len, P.mr->lkey, (uintptr_t)target, rkey);
  CHECK(st == IBV_WC_SUCCESS, "%s %s with its key: %s", op_name(op), what,
        st < 0 ? strerror(-st) : ibv_wc_status_str((enum ibv_wc_status)st));
  CHECK(memcmp(P.buf, target, len) == 0, "%s %s: bytes differ", op_name(op), what);
}

/* The peer's access fails with a remote access error and changes nothing. */
static void expect_denied(int op, void* target, uint32_t len, uint32_t rkey, const char* what) {
  memcpy(snap, target, len);
  memset(P.buf, op == IBV_WR_RDMA_WRITE ? 'W' : 'X', len);
  int st = pa_vp_rdma(&P.vp, op, P.buf, len, P.mr->lkey, (uintptr_t)target, rkey);
  /* compare before anything else runs: reopening the pair allocates */
  int target_same = memcmp(snap, target, len) == 0;
  int peer_clean = 1;
  for (uint32_t i = 0; i < len; i++) if (P.buf[i] != (op == IBV_WR_RDMA_WRITE ? 'W' : 'X')) { peer_clean = 0; break; }
  CHECK(st != IBV_WC_SUCCESS, "the peer's %s of %s (%u bytes, rkey 0x%x) succeeded", op_name(op), what, len, rkey);
  CHECK(st == IBV_WC_REM_ACCESS_ERR, "%s of %s: expected a remote access error, got %s", op_name(op), what,
        st < 0 ? strerror(-st) : ibv_wc_status_str((enum ibv_wc_status)st));
  CHECK(target_same, "%s of %s was denied but the target's bytes changed", op_name(op), what);
  CHECK(peer_clean, "%s of %s was denied but bytes arrived at the peer", op_name(op), what);
  pa_vp_close(&P.vp);                  /* the failed request left the pair in the error state */
  peer_connect();
}

static void expect_denied_rw(void* target, uint32_t len, uint32_t rkey, const char* what) {
  expect_denied(IBV_WR_RDMA_READ, target, len, rkey, what);
  expect_denied(IBV_WR_RDMA_WRITE, target, len, rkey, what);
}

static char* remote(size_t n, uint32_t* rkey, pinarena_region_t* r) {
  char* p = alloc_remote(n, PINARENA_REMOTE_READ | PINARENA_REMOTE_WRITE);
  CHECK(p != NULL, "pinarena_alloc_remote(%zu): %s", n, strerror(errno));
  CHECK_OK("pinarena_lookup(remote buffer)", pinarena_lookup(p, n, r));
  *rkey = r->rkey;
  return p;
}

/* ------------------------------------------------------------------------- */

TEST(remote_heap_keys_reach_nothing) {
  peer_open();
  pinarena_region_t r, r2;
  char* mine = registered_block(64, &r);
  char* secret = NULL;
  for (int i = 0; i < 1000 && secret == NULL; i++) {
    char* s = malloc(64);
    if (pinarena_lookup(s, 64, &r2) == 0 && r2.base == r.base) secret = s;
  }
  CHECK(secret != NULL, "no second block in the same chunk");
  memset(secret, 'S', 64);
  memset(mine, 'M', 64);
  NOTE("heap chunk %p: lookup lkey 0x%x rkey 0x%x", r.base, r.lkey, r.rkey);
  /* the key lookup reported for my block, against another object and the
     allocator's header; then the local key a peer could guess (on rxe an MR
     with remote rights has rkey == lkey) */
  expect_denied_rw(secret, 64, r.rkey, "another object of the chunk, with the rkey lookup gave for mine");
  expect_denied_rw(r.base, 256, r.rkey, "the chunk header (allocator metadata), with lookup's rkey");
  expect_denied_rw(mine, 64, r.rkey, "the block itself, with lookup's rkey");
  expect_denied_rw(secret, 64, r.lkey, "another object of the chunk, with the chunk's lkey as rkey");
  expect_denied_rw(r.base, 256, r.lkey, "the chunk header, with the lkey as rkey");
  CHECK(r.rkey == PINARENA_RKEY_NONE, "pinarena_lookup reported rkey 0x%x for heap memory", r.rkey);
}

TEST(remote_exposed_buffer_is_all_a_key_reaches) {
  resolve_api();
  peer_open();
  pinarena_region_t h, r1, r2;
  char* secret = registered_block(64, &h);
  memset(secret, 'S', 64);
  uint32_t k1, k2;
  char* b1 = remote(SZ, &k1, &r1);
  char* b2 = remote(SZ, &k2, &r2);
  NOTE("remote keys: %s (%s); b1 %p rkey 0x%x, b2 %p rkey 0x%x", remote_keys(), keys_why(), b1, k1, b2, k2);
  CHECK(strcmp(remote_keys(), "window") == 0 || strcmp(remote_keys(), "mr") == 0,
        "default keys reach one buffer: window or mr, got %s", remote_keys());
  CHECK(r1.base == b1 && r1.length == SZ, "lookup: exactly the buffer (%p + %zu)", r1.base, r1.length);
  CHECK(b2 > b1 && b2 - b1 < (ptrdiff_t)(2 << 20), "two buffers of one remote chunk");
  memset(b2, 'N', SZ);
  expect_allowed(IBV_WR_RDMA_WRITE, b1, SZ, k1, "the exposed buffer");
  expect_allowed(IBV_WR_RDMA_READ, b1, SZ, k1, "the exposed buffer");
  expect_denied_rw(secret, 64, k1, "ordinary heap memory");
  expect_denied_rw(h.base, 256, k1, "the heap chunk's header (allocator metadata)");
  expect_denied_rw(b2, SZ, k1, "the neighbouring exposed buffer");
  expect_denied_rw(b1, SZ, k2, "the first buffer with its neighbour's key");
  for (int i = 0; i < SZ; i++) CHECK(b2[i] == 'N', "neighbour byte %d changed", i);
}

/* Bounds, revocation on free, reuse: for window and mr keys. */
static void bounds_and_revocation(const char* keys) {
  setenv("PINARENA_REMOTE_KEYS", keys, 1);
  resolve_api();
  peer_open();
  uint32_t k0, k, k2;
  pinarena_region_t r;
  char* before = remote(SZ, &k0, &r);          /* something real in the granule before */
  char* b = remote(SZ, &k, &r);
  char* other = remote(SZ, &k2, &r);
  NOTE("asked for %s keys: %s%s%s", keys, remote_keys(), *keys_why() ? " — " : "", keys_why());
  /* window keys only where the device keeps a peer inside the window (the probe); else mr */
  CHECK(strcmp(remote_keys(), keys) == 0 || (strcmp(keys, "window") == 0 && strcmp(remote_keys(), "mr") == 0 && *keys_why()),
        "keys are %s, asked for %s", remote_keys(), keys);
  memset(before, 'B', SZ);
  memset(other, 'O', SZ);
  expect_allowed(IBV_WR_RDMA_WRITE, b, SZ, k, "exactly the buffer");
  expect_allowed(IBV_WR_RDMA_READ, b, SZ, k, "exactly the buffer");
  expect_allowed(IBV_WR_RDMA_READ, b + SZ - 1, 1, k, "its last byte");
  expect_denied_rw(b - 1, 1, k, "one byte before the buffer");
  expect_denied_rw(b + SZ, 1, k, "one byte after the buffer");
  expect_denied_rw(b - 1, SZ, k, "the buffer shifted one byte down");
  expect_denied_rw(b, SZ + 1, k, "the buffer and one byte more");
  expect_denied_rw(other, SZ, k, "another exposed buffer of the chunk");
  expect_denied_rw(b, SZ, k2, "the buffer with the other buffer's key");
  /* free: the key dies before the bytes can be reused */
  CHECK_OK("pinarena_free_remote", free_remote(b));
  for (int i = 0; i < SZ; i++) CHECK(b[i] == 0, "freed buffer not zeroed at %d", i);
  expect_denied_rw(b, SZ, k, "a freed buffer with its old key");
  uint32_t kn;
  char* again = remote(SZ, &kn, &r);
  CHECK(again == b, "the freed bytes are handed out again (%p, was %p)", again, b);
  CHECK(kn != k, "a new key for the new buffer");
  for (int i = 0; i < SZ; i++) CHECK(again[i] == 0, "reused buffer not zero at %d", i);
  memset(again, 'A', SZ);
  expect_denied_rw(again, SZ, k, "the reused bytes with the old owner's key");
  expect_allowed(IBV_WR_RDMA_READ, again, SZ, kn, "the reused bytes with the new key");
  for (int i = 0; i < SZ; i++) CHECK(before[i] == 'B' && other[i] == 'O', "a neighbour changed at %d", i);
}

TEST(remote_window_key_bounds_and_revocation) { bounds_and_revocation("window"); }
TEST(remote_mr_key_bounds_and_revocation) { bounds_and_revocation("mr"); }

/* Window keys without the bounds probe: revocation on free and on reuse
 * hold on every device; whether the bounds hold is the device's (noted; on
 * rdma_rxe they do not, which is why the probe exists). */
TEST(remote_window_key_dies_on_free_and_reuse) {
  setenv("PINARENA_REMOTE_KEYS", "window", 1);
  setenv("PINARENA_REMOTE_WINDOW_PROBE", "0", 1);
  resolve_api();
  peer_open();
  uint32_t k, kn;
  pinarena_region_t r;
  char* b = remote(SZ, &k, &r);
  char* after = remote(SZ, &kn, &r);
  CHECK(strcmp(remote_keys(), "window") == 0, "keys are %s (%s)", remote_keys(), keys_why());
  memset(after, 'Z', SZ);
  expect_allowed(IBV_WR_RDMA_WRITE, b, SZ, k, "the window's buffer");
  expect_allowed(IBV_WR_RDMA_READ, b, SZ, k, "the window's buffer");
  memset(P.buf, 'X', 1);
  int st = pa_vp_rdma(&P.vp, IBV_WR_RDMA_READ, P.buf, 1, P.mr->lkey, (uintptr_t)(b + SZ), k);
  NOTE("READ one byte past the window with its key: %s (the device %s window bounds)",
       st < 0 ? strerror(-st) : ibv_wc_status_str((enum ibv_wc_status)st),
       st == IBV_WC_SUCCESS ? "does NOT enforce" : "enforces");
  if (st != IBV_WC_SUCCESS) { pa_vp_close(&P.vp); peer_connect(); }
  CHECK_OK("pinarena_free_remote (window revoked)", free_remote(b));
  expect_denied_rw(b, SZ, k, "a freed buffer with its revoked window key");
  expect_denied_rw(b, 1, k, "the first byte of a freed buffer with its revoked window key");
  char* again = remote(SZ, &kn, &r);
  CHECK(again == b, "the freed bytes are handed out again (%p, was %p)", again, b);
  CHECK(kn != k, "a fresh key (0x%x, old 0x%x)", kn, k);
  memset(again, 'A', SZ);
  expect_denied_rw(again, SZ, k, "the reused bytes with the old owner's revoked key");
  expect_allowed(IBV_WR_RDMA_READ, again, SZ, kn, "the reused bytes with the new key");
}

/* Keys that come back: a freed buffer's window key is not issued again for 2^20 binds. Counted: over
 * 12,000 allocate/free rounds (24,000 binds) no key repeats (the pool of 16 windows with 8-bit keys repeated
 * one after 2048), and a window comes back only after >= 4096 other allocations with its key advanced by
 * the two binds of each use — 128 uses to wrap its 8 bits: >= 4096 x 128 allocations = 2^20 binds. */
#define KR_ROUNDS 12000
#define KR_SLOTS  32768
TEST(remote_window_key_not_reissued_for_2p20_binds) {
  setenv("PINARENA_REMOTE_KEYS", "window", 1);
  setenv("PINARENA_REMOTE_WINDOW_PROBE", "0", 1);
  resolve_api();
  static uint32_t key_seen[KR_SLOTS], at_round[KR_SLOTS], last_key[KR_SLOTS];
  static uint8_t used[KR_SLOTS];
  uint32_t min_gap = UINT32_MAX, reuses = 0;
  pinarena_region_t r;
  for (uint32_t i = 0; i < KR_ROUNDS; i++) {
    uint32_t k;
    char* b = remote(SZ, &k, &r);
    if (i == 0) CHECK(strcmp(remote_keys(), "window") == 0, "keys are %s (%s)", remote_keys(), keys_why());
    /* every key seen so far, in an open-addressed set */
    uint32_t h = (k * 2654435761u) % KR_SLOTS;
    while (key_seen[h] != 0 && key_seen[h] != k + 1) h = (h + 1) % KR_SLOTS;
    CHECK(key_seen[h] == 0, "round %u: key 0x%x issued again (it was issued before in this run)", i, k);
    key_seen[h] = k + 1;
    /* per window index (the key's upper 24 bits): rounds since its last use and the key step */
    uint32_t idx = k >> 8, s = (idx * 2654435761u) % KR_SLOTS;
    while (used[s] && (last_key[s] >> 8) != idx) s = (s + 1) % KR_SLOTS;
    if (used[s]) {
      uint32_t gap = i - at_round[s];
      if (gap < min_gap) min_gap = gap;
      CHECK(((k - last_key[s]) & 0xff) == 2, "window 0x%x: key 0x%x after 0x%x (want two binds' step)", idx, k, last_key[s]);
      reuses++;
    }
    used[s] = 1; at_round[s] = i; last_key[s] = k;
    CHECK_OK("pinarena_free_remote", free_remote(b));
  }
  NOTE("%u rounds: no key repeated; %u window reuses, the closest %u allocations apart (key distance >= %u x 128 "
       "allocations = %llu binds)", KR_ROUNDS, reuses, min_gap, min_gap, (unsigned long long)min_gap * 256);
  CHECK(reuses > 0, "no window was reused in %u rounds: the distance was not exercised", KR_ROUNDS);
  CHECK((uint64_t)min_gap * 256 >= (1u << 20), "a window came back after %u allocations: its key recurs after %llu "
        "binds, fewer than 2^20", min_gap, (unsigned long long)min_gap * 256);
}

/* The chunk key's price: neighbours in the remote chunk are reachable, the heap is not. */
TEST(remote_chunk_key_reaches_neighbours_not_heap) {
  setenv("PINARENA_REMOTE_KEYS", "chunk", 1);
  resolve_api();
  peer_open();
  pinarena_region_t h, r;
  char* secret = registered_block(64, &h);
  memset(secret, 'S', 64);
  uint32_t k1, k2;
  char* b1 = remote(SZ, &k1, &r);
  CHECK(strcmp(remote_keys(), "chunk") == 0, "keys are %s", remote_keys());
  char* b2 = remote(SZ, &k2, &r);
  CHECK(k1 == k2, "one key per remote chunk");
  expect_allowed(IBV_WR_RDMA_WRITE, b1, SZ, k1, "the buffer itself");
  expect_allowed(IBV_WR_RDMA_WRITE, b2, SZ, k1, "the neighbour, with a chunk key (documented)");
  expect_denied_rw(secret, 64, k1, "ordinary heap memory");
  expect_denied_rw(h.base, 256, k1, "the heap chunk's header");
}

/* A type-2 window bound on the shim's own QP: the InfiniBand rules (rxe:
 * type 2B) let only that QP use it, so a peer's QP is refused — why the
 * default is type 1. */
TEST(remote_type2_window_on_own_qp_unreachable_from_peer_qp) {
  setenv("PINARENA_REMOTE_KEYS", "window2", 1);
  resolve_api();
  peer_open();
  uint32_t k;
  pinarena_region_t r;
  char* b = remote(SZ, &k, &r);
  CHECK(strcmp(remote_keys(), "window2") == 0, "keys are %s (type-2 windows unavailable?)", remote_keys());
  memset(b, 'T', SZ);
  expect_denied_rw(b, SZ, k, "a type-2 window's buffer through a QP that did not bind it");
  CHECK_OK("pinarena_free_remote (LOCAL_INV)", free_remote(b));
}

/* The program's own madvise(MADV_DONTNEED) over registered memory (issue
 * 21, item 1): the lookup's lkey still sends the buffer's bytes, the ones
 * written after the madvise, because the shim zeroed the range in place
 * instead of letting the kernel give it new frames. */
static void lkey_sends_new_bytes_after_dontneed(char* p, size_t n, const char* what) {
  peer_open();
  char* dst = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(dst != MAP_FAILED, "mmap");
  struct ibv_mr* dmr = ibv_reg_mr(P.pd, dst, n, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  CHECK(dmr != NULL, "ibv_reg_mr of the peer's destination: %s", strerror(errno));
  memset(p, 'O', n);
  pinarena_region_t r;
  CHECK_OK("pinarena_lookup", pinarena_lookup(p, n, &r));
  CHECK(madvise(p, n, MADV_DONTNEED) == 0, "madvise(DONTNEED): %s", strerror(errno));
  for (size_t i = 0; i < n; i++) CHECK(p[i] == 0, "after DONTNEED byte %zu is %d, not 0", i, p[i]);
  memset(p, 'N', n);
  memset(dst, '-', n);
  int st = pa_vp_rdma(&P.vp, IBV_WR_RDMA_WRITE, p, (uint32_t)n, r.lkey, (uintptr_t)dst, dmr->rkey);
  CHECK(st == IBV_WC_SUCCESS, "RDMA WRITE from the %s with lookup's lkey 0x%x: %s", what, r.lkey,
        st < 0 ? strerror(-st) : ibv_wc_status_str((enum ibv_wc_status)st));
  size_t news = 0, olds = 0;
  for (size_t i = 0; i < n; i++) { news += dst[i] == 'N'; olds += dst[i] == 'O'; }
  NOTE("%s: peer received %zu 'N' (written after the madvise), %zu 'O' (before)", what, news, olds);
  CHECK(news == n, "the peer received %zu of %zu new bytes ('N') from the %s, %zu old ones ('O'): the lkey reaches "
        "stale frames", news, n, what, olds);
  ibv_dereg_mr(dmr);
}

TEST(remote_heap_lkey_sends_new_bytes_after_madvise_dontneed) {
  const size_t n = (size_t)1 << 20;
  char* p = aligned_alloc(4096, n);
  CHECK(p != NULL, "aligned_alloc");
  lkey_sends_new_bytes_after_dontneed(p, n, "heap object");
  free(p);
}

/* The same over a remote buffer (pinarena_alloc_remote): its lkey is the
 * remote chunk's (window keys) or the buffer's own MR. */
TEST(remote_buffer_lkey_sends_new_bytes_after_madvise_dontneed) {
  const size_t n = (size_t)1 << 20;
  resolve_api();
  char* p = alloc_remote(n, PINARENA_REMOTE_READ | PINARENA_REMOTE_WRITE);
  CHECK(p != NULL, "pinarena_alloc_remote(%zu): %s", n, strerror(errno));
  NOTE("remote keys: %s", remote_keys());
  lkey_sends_new_bytes_after_dontneed(p, n, "remote buffer");
  CHECK_OK("pinarena_free_remote", free_remote(p));
}

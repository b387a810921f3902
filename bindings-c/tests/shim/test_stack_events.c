/* test_stack_events.c — the shim as UCX's memory-event source
 * (src/shim/stack_events.c), against the host's real libucm (Debian's
 * libucx0): a subscription to UCM_EVENT_VM_UNMAPPED reaches the shim first,
 * UCM installs no hook for it, and every munmap the shim sees arrives at the
 * subscriber through ucm_vm_munmap — a raw system call only with the
 * userfaultfd monitor, which this test does not start. */
#define _GNU_SOURCE
#include "child.h"

#include <dlfcn.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UCM_EVENT_VM_UNMAPPED (1 << 17)      /* ucm/api/ucm.h */
#define LEN ((size_t)1 << 20)

typedef int (*set_handler_fn)(int events, int priority, void* cb, void* arg);
typedef int (*test_external_fn)(int events);

/* ucm_event_t's vm_unmapped member: address, size (ucm/api/ucm.h) */
struct vm_unmapped { void* address; size_t size; };

static uintptr_t want;
static size_t hits, others;

static void on_event(int type, void* event, void* arg) {
  (void)arg;
  const struct vm_unmapped* e = event;
  if (type != UCM_EVENT_VM_UNMAPPED) return;
  uintptr_t a = (uintptr_t)e->address;
  if (a <= want && want < a + e->size) hits++;
  else others++;
}

/* The stats line (PINARENA_STATS), as the shim writes it now. */
static const char* stats_line(void) {
  static char line[4096];
  int fd[2];
  CHECK(pipe(fd) == 0, "pipe");
  pinarena_write_stats(fd[1]);
  close(fd[1]);
  ssize_t n = read(fd[0], line, sizeof(line) - 1);
  close(fd[0]);
  line[n > 0 ? n : 0] = 0;
  return line;
}

/* The line says " key=value" (value -1: the key must be absent). */
static void stats_say(const char* key, long value) {
  const char* line = stats_line();
  char want_kv[64];
  snprintf(want_kv, sizeof want_kv, " %s=", key);
  if (value < 0) { CHECK(strstr(line, want_kv) == NULL, "the stats line has%s while the stack is not fed: %s", want_kv, line); return; }
  snprintf(want_kv, sizeof want_kv, " %s=%ld", key, value);
  const char* at = strstr(line, want_kv);
  CHECK(at != NULL && (at[strlen(want_kv)] == ' ' || at[strlen(want_kv)] == '\n'), "the stats line lacks%s: %s", want_kv, line);
}

static int in_lib(void* fn, const char* lib) {
  Dl_info i;
  return dladdr(fn, &i) != 0 && i.dli_fname != NULL && strstr(i.dli_fname, lib) != NULL;
}

TEST(stack_events_ucm_unmaps_come_from_the_shim) {
  /* libucs first: libucm binds some of its symbols */
  if (dlopen("libucs.so.0", RTLD_NOW | RTLD_GLOBAL) == NULL) SKIP("no libucs.so.0 (libucx0): %s", dlerror());
  set_handler_fn set = (set_handler_fn)dlsym(RTLD_DEFAULT, "ucm_set_event_handler");
  CHECK(set != NULL && in_lib((void*)set, "libpinarena.so"),
        "ucm_set_event_handler resolves outside libpinarena.so: UCX would subscribe to UCM's own hooks");
  long (*forwarded)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_events_ucm");
  CHECK(forwarded != NULL && forwarded() == -1, "fed before UCX subscribed");
  stats_say("ucm_unmaps", -1);
  CHECK(set(UCM_EVENT_VM_UNMAPPED, 1000, (void*)on_event, NULL) == 0, "subscription refused");
  CHECK(forwarded() == 0, "the shim did not take UCX's unmap events (forwarded %ld)", forwarded());

  char* p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED, "mmap");
  want = (uintptr_t)p + LEN / 2;
  CHECK(munmap(p, LEN) == 0, "munmap");
  CHECK(hits >= 1, "munmap of %p reached UCX's subscriber %zu times", (void*)p, hits);
  CHECK(forwarded() >= 1, "forwarded %ld", forwarded());
  stats_say("ucm_unmaps", forwarded());

  /* UCM's own check that the external source reports (it maps and unmaps a page itself) */
  test_external_fn test = (test_external_fn)dlsym(RTLD_DEFAULT, "ucm_test_external_events");
  CHECK(test != NULL && in_lib((void*)test, "libucm"), "ucm_test_external_events not found in libucm");
  CHECK(test(UCM_EVENT_VM_UNMAPPED) == 0, "UCM says its external VM_UNMAPPED events are not reported");

  /* Nothing patched: libc's munmap starts as on disk would need ELF parsing; here it is enough that a raw
     system call (no symbol) is NOT reported — UCM hooked nothing below the symbol. */
  size_t before = hits;
  p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED, "mmap");
  want = (uintptr_t)p;
  CHECK(syscall(SYS_munmap, p, LEN) == 0, "raw munmap");
  CHECK(hits == before, "a raw munmap was reported (hits %zu -> %zu)", before, hits);
  NOTE("ucm_vm_munmap calls: %ld, hits %zu, other ranges %zu", forwarded(), hits, others);
}

/* libfabric (Debian's libfabric1): the shim's fi_fabric imports its memory monitor into libfabric once a
 * fabric is open, and every munmap the shim sees voids the cached ranges it overlaps (valid() says so). The provider is tcp
 * (the host has no RDMA device); the monitor is process-wide, whatever provider caches. */
typedef int (*getinfo_fn)(uint32_t, const char*, const char*, uint64_t, const struct fi_info*, struct fi_info**);
typedef int (*open_fn)(uint32_t, const char*, void*, size_t, uint64_t, struct fid**, void*);

static int other_start(struct fid_mem_monitor* m) { (void)m; return 0; }
static void other_stop(struct fid_mem_monitor* m) { (void)m; }
static int other_subscribe(struct fid_mem_monitor* m, const void* a, size_t l) { (void)m; (void)a; (void)l; return 0; }
static void other_unsubscribe(struct fid_mem_monitor* m, const void* a, size_t l) { (void)m; (void)a; (void)l; }
static bool other_valid(struct fid_mem_monitor* m, const void* a, size_t l) { (void)m; (void)a; (void)l; return true; }

/* A tcp fabric opened through fi_fabric as the process resolves it (the shim's: it imports its monitor). */
static struct fid_fabric* ofi_open_fabric(void* fab, void* fabric_fn, struct fi_info** info) {
  getinfo_fn getinfo = (getinfo_fn)dlvsym(fab, "fi_getinfo", "FABRIC_1.3");
  CHECK(getinfo != NULL && getinfo(FI_VERSION(1, 13), NULL, NULL, 0, NULL, info) == 0 && *info != NULL,
        "fi_getinfo found no tcp provider");
  struct fid_fabric* fabric = NULL;
  int rc = ((int (*)(struct fi_fabric_attr*, struct fid_fabric**, void*))fabric_fn)((*info)->fabric_attr, &fabric, NULL);
  CHECK(rc == 0, "fi_fabric: %d", rc);
  return fabric;
}

TEST(stack_events_ofi_unmaps_come_from_the_shim) {
  void* fab = dlopen("libfabric.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (fab == NULL) SKIP("no libfabric.so.1 (libfabric1): %s", dlerror());
  setenv("FI_PROVIDER", "tcp", 1);           /* before libfabric initialises (its first fi_getinfo) */
  setenv("FI_MR_CACHE_MONITOR", "disabled", 1);
  void* fabric_fn = dlsym(RTLD_DEFAULT, "fi_fabric");
  CHECK(fabric_fn != NULL && in_lib(fabric_fn, "libpinarena.so"),
        "fi_fabric resolves outside libpinarena.so: libfabric would keep its own memory monitor");
  long (*forwarded)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_events_ofi");
  CHECK(forwarded != NULL && forwarded() == -1, "fed before a fabric was opened");
  stats_say("ofi_voided", -1);
  stats_say("ofi_subscribed", -1);

  struct fi_info* info = NULL;
  struct fid_fabric* fabric = ofi_open_fabric(fab, fabric_fn, &info);
  CHECK(forwarded() == 0, "the shim did not hand libfabric its monitor (forwarded %ld)", forwarded());

  /* libfabric holds the shim's monitor: it refuses a second one */
  struct fi_ops_mem_monitor ops = {sizeof ops, other_start, other_stop, other_subscribe, other_unsubscribe,
                                   other_valid};
  struct fid_mem_monitor other = {.fid = {.fclass = FI_CLASS_MEM_MONITOR}, .export_ops = &ops};
  struct fid* door = NULL;
  CHECK(((open_fn)dlvsym(fab, "fi_open", "FABRIC_1.5"))(FI_VERSION(1, 13), "mr_cache", NULL, 0, 0, &door, NULL) == 0,
        "fi_open(mr_cache)");
  int rc = fi_import_fid(door, &other.fid, 0);
  fi_close(door);
  CHECK(rc == -FI_EBUSY, "libfabric took a second monitor (%d): it does not hold the shim's", rc);

  /* libfabric's part, played through the monitor it holds: a cached range stays valid until it is unmapped,
     then valid() says no (libfabric drops the entry and registers again), until it is subscribed again. */
  struct fid_mem_monitor* (*held)(void) = (struct fid_mem_monitor * (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_ofi_monitor");
  CHECK(held != NULL, "pinarena_stack_ofi_monitor not exported");
  struct fid_mem_monitor* m = held();
  char* p = mmap(NULL, 2 * LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED, "mmap");
  CHECK(m->export_ops->subscribe(m, p, LEN) == 0 && m->export_ops->subscribe(m, p + LEN, LEN) == 0, "subscribe");
  CHECK(m->export_ops->valid(m, p, LEN), "a cached range nothing unmapped is not valid");
  long before = forwarded();
  CHECK(munmap(p, LEN) == 0, "munmap");
  CHECK(!m->export_ops->valid(m, p, LEN), "the range at %p is still valid after its munmap: libfabric would hit it", (void*)p);
  CHECK(m->export_ops->valid(m, p + LEN, LEN), "the range next to it was voided too");
  CHECK(forwarded() == before + 1, "voided subscriptions %ld -> %ld (expected one more)", before, forwarded());
  /* new pages at the address: libfabric's next use asks valid() (no), registers them and subscribes */
  CHECK(mmap(p, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p, "mmap again");
  CHECK(!m->export_ops->valid(m, p, LEN), "valid before the pages were registered again");
  CHECK(m->export_ops->subscribe(m, p, LEN) == 0 && m->export_ops->valid(m, p, LEN), "registered again: not valid");
  CHECK(munmap(p, 2 * LEN) == 0, "munmap both");
  CHECK(!m->export_ops->valid(m, p, LEN) && !m->export_ops->valid(m, p + LEN, LEN), "valid after the last munmap");
  NOTE("subscriptions voided by unmaps: %ld", forwarded());
  long (*subscribed)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_events_ofi_subscribed");
  CHECK(subscribed != NULL && subscribed() >= 3, "subscriptions counted: %ld of at least 3", subscribed ? subscribed() : -1L);
  stats_say("ofi_subscribed", subscribed());
  stats_say("ofi_voided", forwarded());
  fi_close(&fabric->fid);
  ((void (*)(struct fi_info*))dlvsym(fab, "fi_freeinfo", "FABRIC_1.3"))(info);
}

/* libfabric's cache at the shim's monitor with a full table (OFI_SUBS_MAX, 4096, in src/shim/stack_ofi_subs.c):
 * thousands of subscriptions each found again, unsubscribes that leave the others found, an unmap that voids
 * exactly the ranges it overlaps (not those that only touch it), and subscriptions past a full table that
 * each take one range's place — never more held than the table, never a range valid after its unmap. */
#define OFI_TABLE 4096
#define PG 4096
#define BASE (OFI_TABLE - 96)                /* one-page ranges first: room left for the odd shapes */
#define EXTRA 200                            /* one-page ranges past the full table */

static long ofi_valid_count(struct fid_mem_monitor* m, char* p, long from, long to) {
  long n = 0;
  for (long i = from; i < to; i++) n += m->export_ops->valid(m, p + i * PG, PG);
  return n;
}

TEST(stack_events_ofi_many_subscriptions_reuse_and_exact_voids) {
  void* fab = dlopen("libfabric.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (fab == NULL) SKIP("no libfabric.so.1 (libfabric1): %s", dlerror());
  setenv("FI_PROVIDER", "tcp", 1);
  setenv("FI_MR_CACHE_MONITOR", "disabled", 1);
  struct fi_info* info = NULL;
  struct fid_fabric* fabric = ofi_open_fabric(fab, dlsym(RTLD_DEFAULT, "fi_fabric"), &info);
  long (*voided)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_events_ofi");
  struct fid_mem_monitor* (*held)(void) = (struct fid_mem_monitor * (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_ofi_monitor");
  CHECK(voided != NULL && voided() == 0 && held != NULL, "the shim's monitor was not imported");
  struct fid_mem_monitor* m = held();
  const struct fi_ops_mem_monitor* ops = m->export_ops;
  char* p = mmap(NULL, (size_t)(BASE + EXTRA) * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED, "mmap");

  for (long i = 0; i < BASE; i++) CHECK(ops->subscribe(m, p + i * PG, PG) == 0, "subscribe %ld", i);
  long n = ofi_valid_count(m, p, 0, BASE);
  CHECK(n == BASE, "%ld of %d subscribed ranges valid", n, BASE);
  for (long i = 0; i < BASE; i += 3) ops->unsubscribe(m, p + i * PG, PG);
  for (long i = 0; i < BASE; i++)
    CHECK(ops->valid(m, p + i * PG, PG) == (i % 3 != 0), "range %ld: valid %d after every third was unsubscribed",
          i, (int)ops->valid(m, p + i * PG, PG));
  for (long i = 0; i < BASE; i += 3) ops->subscribe(m, p + i * PG, PG);
  n = ofi_valid_count(m, p, 0, BASE);
  CHECK(n == BASE, "%ld of %d valid after the unsubscribed ones came back", n, BASE);

  /* The unmap of pages [1000, 1010) overlaps ranges 1000..1009 and three odd shapes; [998, 1000) and the
     pages either side only touch it. */
  struct { long from, len; bool overlaps; } shape[] = {
    {999 * PG + PG / 2, PG, true}, {1009 * PG + PG / 2, PG, true}, {990 * PG, 30 * PG, true}, {998 * PG, 2 * PG, false},
  };
  for (size_t k = 0; k < sizeof shape / sizeof shape[0]; k++) ops->subscribe(m, p + shape[k].from, (size_t)shape[k].len);
  long before = voided();
  CHECK(munmap(p + 1000 * PG, 10 * PG) == 0, "munmap");
  for (long i = 0; i < BASE; i++)
    CHECK(ops->valid(m, p + i * PG, PG) == (i < 1000 || i >= 1010), "range %ld: valid %d after the unmap of [1000, 1010)",
          i, (int)ops->valid(m, p + i * PG, PG));
  for (size_t k = 0; k < sizeof shape / sizeof shape[0]; k++)
    CHECK(ops->valid(m, p + shape[k].from, (size_t)shape[k].len) == !shape[k].overlaps,
          "range [%ld, +%ld) in pages: valid %d after the unmap of [1000, 1010)", shape[k].from / PG, shape[k].len / PG,
          (int)ops->valid(m, p + shape[k].from, (size_t)shape[k].len));
  CHECK(voided() == before + 13, "the unmap voided %ld subscriptions (expected 13)", voided() - before);

  /* Past the full table: each new range takes one held range's place. */
  long held_now = BASE - 10 + 1;
  for (long i = BASE; i < BASE + EXTRA; i++) CHECK(ops->subscribe(m, p + i * PG, PG) == 0, "subscribe %ld", i);
  n = ofi_valid_count(m, p, BASE, BASE + EXTRA);
  CHECK(n == EXTRA, "%ld of the %d ranges subscribed past the full table are valid", n, EXTRA);
  n = ofi_valid_count(m, p, 0, BASE) + ops->valid(m, p + 998 * PG, 2 * PG);
  CHECK(n == OFI_TABLE - EXTRA, "%ld older ranges still valid (%ld held, table %d, %d new)", n, held_now, OFI_TABLE, EXTRA);
  ops->subscribe(m, p, PG);                  /* valid again; if it had left, another range leaves */
  CHECK(ops->valid(m, p, PG), "a range subscribed again is not valid");
  n = ofi_valid_count(m, p, 0, BASE + EXTRA) + ops->valid(m, p + 998 * PG, 2 * PG);
  CHECK(n == OFI_TABLE, "%ld ranges valid with the table full (%d)", n, OFI_TABLE);

  CHECK(munmap(p, (size_t)(BASE + EXTRA) * PG) == 0, "munmap all");
  n = ofi_valid_count(m, p, 0, BASE + EXTRA) + ops->valid(m, p + 998 * PG, 2 * PG);
  CHECK(n == 0, "%ld ranges valid after their unmap: libfabric would hit them", n);
  NOTE("subscriptions voided by unmaps: %ld", voided());
  fi_close(&fabric->fid);
  ((void (*)(struct fi_info*))dlvsym(fab, "fi_freeinfo", "FABRIC_1.3"))(info);
}

/* Ranges that nest and overlap each other, as libfabric's cache holds them (a large buffer, pieces of it,
 * odd byte offsets), against unmaps of a few pages: each unmap voids every held range it overlaps — one
 * starting far before it, one inside it, two that each cross one of its ends — and none that only touch it.
 * Rounds of subscribes and unmaps checked against a model of the table (random shapes, fixed seed). */
#define SHAPES 300
#define SPAN_PAGES 256

static uint64_t shape_rng = 0x2545f4914f6cdd1dull;
static uint64_t shape_next(uint64_t bound) {
  shape_rng ^= shape_rng << 13;
  shape_rng ^= shape_rng >> 7;
  shape_rng ^= shape_rng << 17;
  return shape_rng % bound;
}

TEST(stack_events_ofi_unmap_voids_every_overlapping_range_of_many_shapes) {
  void* fab = dlopen("libfabric.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (fab == NULL) SKIP("no libfabric.so.1 (libfabric1): %s", dlerror());
  setenv("FI_PROVIDER", "tcp", 1);
  setenv("FI_MR_CACHE_MONITOR", "disabled", 1);
  struct fi_info* info = NULL;
  struct fid_fabric* fabric = ofi_open_fabric(fab, dlsym(RTLD_DEFAULT, "fi_fabric"), &info);
  long (*voided)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_events_ofi");
  struct fid_mem_monitor* (*held_fn)(void) = (struct fid_mem_monitor * (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_ofi_monitor");
  CHECK(voided != NULL && voided() == 0 && held_fn != NULL, "the shim's monitor was not imported");
  struct fid_mem_monitor* m = held_fn();
  const struct fi_ops_mem_monitor* ops = m->export_ops;
  char* p = mmap(NULL, (size_t)SPAN_PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED, "mmap");

  /* The fixed shapes first: the unmap of pages [100, 104) overlaps the first five, not the last two. */
  static struct { long from, len; bool held; } shape[SHAPES] = {
    {0, SPAN_PAGES * PG, true},   {101 * PG, PG, true},     {90 * PG, 11 * PG, true},   {103 * PG + 7, 40 * PG, true},
    {60 * PG, 60 * PG, true},     {96 * PG, 4 * PG, true},  {104 * PG, PG / 2, true},
  };
  int fixed = 7;
  for (int k = fixed; k < SHAPES; k++) {      /* mostly a page or a few, some large, some at odd bytes */
    long pages = shape_next(4) == 0 ? 1 + (long)shape_next(SPAN_PAGES / 2) : 1 + (long)shape_next(4);
    long from = (long)shape_next((uint64_t)(SPAN_PAGES - pages)) * PG + (shape_next(3) == 0 ? (long)shape_next(PG) : 0);
    shape[k].from = from;
    shape[k].len = pages * PG - (from % PG);
    for (int j = 0; j < k; j++)               /* each range once: the table holds a range once */
      if (shape[j].from == from && shape[j].len == shape[k].len) { k--; break; }
  }
  for (int k = 0; k < fixed; k++) ops->subscribe(m, p + shape[k].from, (size_t)shape[k].len);
  long before = voided();
  CHECK(munmap(p + 100 * PG, 4 * PG) == 0, "munmap");
  for (int k = 0; k < fixed; k++)
    CHECK(ops->valid(m, p + shape[k].from, (size_t)shape[k].len) == (k >= 5),
          "range [%ld, +%ld) bytes: valid %d after the unmap of pages [100, 104)", shape[k].from, shape[k].len,
          (int)ops->valid(m, p + shape[k].from, (size_t)shape[k].len));
  CHECK(voided() == before + 5, "the unmap voided %ld subscriptions (expected 5)", voided() - before);
  CHECK(mmap(p + 100 * PG, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p + 100 * PG,
        "mmap again");
  ops->valid(m, p, 1);                       /* drains the MAP_FIXED mapping's own unmap event */
  for (int k = 0; k < fixed; k++) ops->unsubscribe(m, p + shape[k].from, (size_t)shape[k].len);
  for (int k = 0; k < SHAPES; k++) shape[k].held = false;

  for (int round = 0; round < 150; round++) {
    for (int k = 0; k < SHAPES; k++)
      if (shape_next(3) == 0) {
        ops->subscribe(m, p + shape[k].from, (size_t)shape[k].len);
        shape[k].held = true;
      }
    long u = (long)shape_next(SPAN_PAGES - 8), ul = 1 + (long)shape_next(8), expect = 0;
    for (int k = 0; k < SHAPES; k++)
      if (shape[k].held && shape[k].from < (u + ul) * PG && u * PG < shape[k].from + shape[k].len) {
        shape[k].held = false;
        expect++;
      }
    before = voided();
    CHECK(munmap(p + u * PG, (size_t)ul * PG) == 0, "munmap");
    for (int k = 0; k < SHAPES; k++)
      CHECK(ops->valid(m, p + shape[k].from, (size_t)shape[k].len) == shape[k].held,
            "round %d: range [%ld, +%ld) bytes: valid %d after the unmap of pages [%ld, %ld), expected %d", round,
            shape[k].from, shape[k].len, (int)!shape[k].held, u, u + ul, (int)shape[k].held);
    CHECK(voided() == before + expect, "round %d: the unmap of pages [%ld, %ld) voided %ld subscriptions (expected %ld)",
          round, u, u + ul, voided() - before, expect);
    CHECK(mmap(p + u * PG, (size_t)ul * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p + u * PG,
          "mmap again");
    ops->valid(m, p, 1);                     /* drains the MAP_FIXED mapping's own unmap event: nothing held there */
  }
  CHECK(munmap(p, (size_t)SPAN_PAGES * PG) == 0, "munmap all");
  long n = 0;
  for (int k = 0; k < SHAPES; k++) n += ops->valid(m, p + shape[k].from, (size_t)shape[k].len);
  CHECK(n == 0, "%ld ranges valid after their unmap: libfabric would hit them", n);
  NOTE("subscriptions voided by unmaps: %ld", voided());
  fi_close(&fabric->fid);
  ((void (*)(struct fi_info*))dlvsym(fab, "fi_freeinfo", "FABRIC_1.3"))(info);
}

/* A program bound to libfabric's oldest fi_fabric (FABRIC_1.0: attributes without api_version) reaches the
 * shim's wrapper of that version, which passes it to libfabric's 1.0 entry point: the fabric opens with
 * api_version 1.0 and the shim's monitor is imported. Reaching the wrapper of the current version instead,
 * its old struct would be read as the new one (api_version from the bytes after it) and refused. */
TEST(stack_events_ofi_old_abi_caller_reaches_its_own_fi_fabric) {
  if (dlopen("libfabric.so.1", RTLD_LAZY | RTLD_NOLOAD) == NULL && dlopen("libfabric.so.1", RTLD_LAZY) == NULL)
    SKIP("no libfabric.so.1 (libfabric1): %s", dlerror());
  static char path[512], out[4096];
  snprintf(path, sizeof path, "%s/pinarena-fabric-old-abi", getenv("PINARENA_BUILD") ? getenv("PINARENA_BUILD") : ".");
  char* argv[] = {path, NULL};
  const char* env[] = {"FI_PROVIDER=tcp", "FI_MR_CACHE_MONITOR=disabled", NULL};
  int rc = su_exec(argv, env, out, sizeof out);
  CHECK(rc == 0, "%s exited %d: %s", path, rc, out);
  CHECK(strstr(out, "fabric rc=0 ") != NULL, "the FABRIC_1.0 caller's fabric did not open: %s", out);
  CHECK(strstr(out, " api_version=0x10000 ") != NULL, "not opened through libfabric's 1.0 entry point: %s", out);
  CHECK(strstr(out, " fed=0") != NULL, "the shim's monitor was not imported at the old fi_fabric: %s", out);
  NOTE("%s", strtok(out, "\n"));
}

/* An unmap from a signal handler that interrupted libfabric while it held its mutex (the probe raises the
 * signal right after libfabric takes one during an unmap, and the handler unmaps a page): the shim's monitor
 * must not call libfabric from the unmap path, where the handler would wait on the lock its own thread holds. */
TEST(stack_events_ofi_unmap_under_libfabric_lock_does_not_deadlock) {
  if (dlopen("libfabric.so.1", RTLD_LAZY | RTLD_NOLOAD) == NULL && dlopen("libfabric.so.1", RTLD_LAZY) == NULL)
    SKIP("no libfabric.so.1 (libfabric1): %s", dlerror());
  static char path[512], out[4096];
  snprintf(path, sizeof path, "%s/pinarena-fabric-signal-unmap", getenv("PINARENA_BUILD") ? getenv("PINARENA_BUILD") : ".");
  char* argv[] = {path, "10", NULL};
  const char* env[] = {"FI_PROVIDER=tcp", "FI_MR_CACHE_MONITOR=disabled", NULL};
  int rc = su_exec(argv, env, out, sizeof out);
  CHECK(rc == 0 && strstr(out, "signal_unmap done ") != NULL,
        "the unmap deadlocked (no result in 10 s; status %d): %s", rc, out);
  CHECK(strstr(out, " libfabric_locks=0 ") != NULL, "the unmap path took libfabric's locks: %s", out);
  NOTE("%s", strtok(out, "\n"));
}

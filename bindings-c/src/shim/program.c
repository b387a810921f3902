/* program.c — see program.h: the program's own madvise, mprotect, mlock and
 * unmaps over the shim's memory. System calls only (never the hooks). */
#define _GNU_SOURCE
#include "internal.h"
#include "program.h"
#include "../procfs.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PUBLIC __attribute__((visibility("default")))
#define GRANULE ((uintptr_t)1 << PA_TABLE_SHIFT)
#define PROG_MADV_GUARD_INSTALL 102      /* linux/mman.h, 6.13+ */
#define RW (PROT_READ | PROT_WRITE)

PA_HIDDEN _Atomic int pa_prog_changed;

/* One bit per 64 KiB slice of the address space (256 MiB, NORESERVE, mapped
 * at the first change: a page is touched per 2 GiB of marked memory). When
 * it cannot be mapped every release resets (all_marked). */
#define MAP_BYTES (((size_t)1 << PA_ADDR_BITS) >> PA_SLICE_SHIFT >> 3)
static _Atomic(_Atomic(uint8_t)*) marks;
static _Atomic int all_marked;

static int ours(uintptr_t a) {
  if (pa_table == NULL || (a >> PA_ADDR_BITS) != 0) return 0;
  return atomic_load_explicit(&pa_table[a >> PA_TABLE_SHIFT], memory_order_acquire) != 0;
}

static uintptr_t granule_end(uintptr_t g, uintptr_t e) {
  uintptr_t n = (g | (GRANULE - 1)) + 1;
  return n == 0 || n > e ? e : n;
}

/* The end of [a, e), page-rounded; e < a (overflow): a, nothing. */
static uintptr_t range_end(const void* addr, size_t len) {
  uintptr_t a = (uintptr_t)addr, e = a + ((len + PA_PAGE - 1) & ~(PA_PAGE - 1));
  return e < a ? a : e;
}

static int holds_ours(uintptr_t a, uintptr_t e) {
  for (uintptr_t g = a; g < e; g = granule_end(g, e))
    if (ours(g)) return 1;
  return 0;
}

static _Atomic(uint8_t)* marks_map(void) {
  _Atomic(uint8_t)* m = atomic_load_explicit(&marks, memory_order_acquire);
  if (m != NULL) return m;
  void* p = (void*)syscall(SYS_mmap, NULL, MAP_BYTES, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return NULL;
  _Atomic(uint8_t)* none = NULL;
  if (atomic_compare_exchange_strong(&marks, &none, (_Atomic(uint8_t)*)p)) return p;
  syscall(SYS_munmap, p, MAP_BYTES);
  return none;
}

/* Record that the program changed attributes of the shim memory in [a, e). */
static void mark(uintptr_t a, uintptr_t e) {
  _Atomic(uint8_t)* m = marks_map();
  if (m == NULL) atomic_store(&all_marked, 1);
  for (uintptr_t g = a; g < e; g = granule_end(g, e)) {
    if (!ours(g) || m == NULL) continue;
    uintptr_t ge = granule_end(g, e);
    for (uintptr_t s = g >> PA_SLICE_SHIFT; s <= (ge - 1) >> PA_SLICE_SHIFT; s++)
      atomic_fetch_or_explicit(&m[s >> 3], (uint8_t)(1u << (s & 7)), memory_order_relaxed);
  }
  atomic_store_explicit(&pa_prog_changed, 1, memory_order_release);
}

/* Any slice of [a, e) marked; clear the marks of the slices wholly inside. */
static int take_marks(uintptr_t a, uintptr_t e) {
  if (atomic_load_explicit(&all_marked, memory_order_relaxed)) return 1;
  _Atomic(uint8_t)* m = atomic_load_explicit(&marks, memory_order_acquire);
  if (m == NULL || e <= a) return 0;
  int any = 0;
  for (uintptr_t s = a >> PA_SLICE_SHIFT; s <= (e - 1) >> PA_SLICE_SHIFT; s++) {
    uint8_t bit = (uint8_t)(1u << (s & 7));
    if (!(atomic_load_explicit(&m[s >> 3], memory_order_relaxed) & bit)) continue;
    any = 1;
    uintptr_t ss = s << PA_SLICE_SHIFT;
    if (ss >= a && ss + PA_SLICE <= e) atomic_fetch_and_explicit(&m[s >> 3], (uint8_t)~bit, memory_order_relaxed);
  }
  return any;
}

/* A chunk the mlock registrar locked keeps its lock: it is the shim's, not
 * the program's. */
static int shim_locked(const void* p) {
  pa_chunk_t* c = pa_chunk_of(p);
  pa_regrec_t* r = c != NULL ? atomic_load_explicit(&c->reg, memory_order_acquire) : NULL;
  return r != NULL && r->backend == PA_REG_MLOCK;
}

PA_HIDDEN void pa_prog_reset_slow(void* addr, size_t len) {
  uintptr_t a = (uintptr_t)addr, e = range_end(addr, len);
  if (!take_marks(a, e)) return;
  int saved = errno;
  syscall(SYS_mprotect, addr, e - a, RW);
  syscall(SYS_madvise, addr, e - a, MADV_DOFORK);
  syscall(SYS_madvise, addr, e - a, MADV_KEEPONFORK);
  syscall(SYS_madvise, addr, e - a, MADV_DODUMP);
  if (!shim_locked(addr)) syscall(SYS_munlock, addr, e - a);
  errno = saved;
}

/* ---- madvise ------------------------------------------------------------ */

/* Any slice of [a, e) marked (the marks stay). */
static int has_marks(uintptr_t a, uintptr_t e) {
  if (atomic_load_explicit(&all_marked, memory_order_relaxed)) return 1;
  _Atomic(uint8_t)* m = atomic_load_explicit(&marks, memory_order_acquire);
  if (m == NULL || e <= a) return 0;
  for (uintptr_t s = a >> PA_SLICE_SHIFT; s <= (e - 1) >> PA_SLICE_SHIFT; s++)
    if (atomic_load_explicit(&m[s >> 3], memory_order_relaxed) & (1u << (s & 7))) return 1;
  return 0;
}

/* Zero [a, e) as DONTNEED would, whatever protection the program gave its
 * pages: where it changed attributes, the mappings it made unwritable
 * (/proc/self/maps) are made writable for the zeroing and then given their
 * protection back. */
static void zero_in_place(uintptr_t a, uintptr_t e) {
  pa_linereader_t lr;
  if (!has_marks(a, e) || pa_lr_open(&lr, "/proc/self/maps") != 0) { pa_os_zero_touched((void*)a, e - a); return; }
  char* line;
  while (pa_lr_next(&lr, &line) >= 0) {
    uint64_t s, t;
    size_t n = pa_parse_hex(line, &s);
    if (n == 0 || line[n] != '-') continue;
    size_t m = pa_parse_hex(line + n + 1, &t);
    if (m == 0 || t <= a || s >= e) continue;
    const char* perm = line + n + 1 + m + 1;
    uintptr_t from = s > a ? s : a, to = t < e ? t : e;
    if (perm[1] == 'w') { pa_os_zero_touched((void*)from, to - from); continue; }
    int prot = (perm[0] == 'r' ? PROT_READ : 0) | (perm[2] == 'x' ? PROT_EXEC : 0);
    if (syscall(SYS_mprotect, (void*)from, to - from, RW) != 0) continue;
    pa_os_zero_touched((void*)from, to - from);
    syscall(SYS_mprotect, (void*)from, to - from, prot);
  }
  pa_lr_close(&lr);
}

/* What madvise does to a run of shim memory: 1 handled (*r set), 0 the
 * system call is right for it (the advice keeps the frames). */
static int advise_ours(uintptr_t a, uintptr_t e, int advice, long* r) {
  switch (advice) {
    case MADV_DONTNEED:
#ifdef MADV_DONTNEED_LOCKED
    case MADV_DONTNEED_LOCKED:
#endif
      /* the frames stay; the range reads as zeroes, as after the kernel's DONTNEED */
      zero_in_place(a, e);
      *r = 0;
      return 1;
    case MADV_FREE:                    /* freed pages may keep their bytes */
      *r = 0;
      return 1;
    case MADV_REMOVE:                  /* the kernel's answer on private anonymous memory */
    case PROG_MADV_GUARD_INSTALL:      /* would drop the pages */
      errno = EINVAL;
      *r = -1;
      return 1;
    case MADV_DONTFORK:
    case MADV_WIPEONFORK:
    case MADV_DONTDUMP:
      mark(a, e);
      return 0;
    default:
      return 0;
  }
}

PA_HIDDEN int pa_prog_madvise(void* addr, size_t len, int advice, long* ret) {
  uintptr_t a = (uintptr_t)addr, e = range_end(addr, len);
  if ((a & (PA_PAGE - 1)) != 0 || !holds_ours(a, e)) return 0;   /* the kernel answers (EINVAL for a) */
  /* runs of ours and not ours, each as its own call; the first failure is the answer */
  long first = 0;
  int err = 0;
  for (uintptr_t s = a; s < e;) {
    int mine = ours(s);
    uintptr_t t = granule_end(s, e);
    while (t < e && ours(t) == mine) t = granule_end(t, e);
    long r;
    if (!mine || !advise_ours(s, t, advice, &r)) r = syscall(SYS_madvise, (void*)s, t - s, advice);
    if (r != 0 && first == 0) { first = r; err = errno; }
    s = t;
  }
  if (first != 0) errno = err;
  *ret = first;
  return 1;
}

/* ---- unmaps ------------------------------------------------------------- */

PA_HIDDEN void pa_prog_unmaps(const char* who, const void* addr, size_t len) {
  uintptr_t a = (uintptr_t)addr & ~(PA_PAGE - 1), e = range_end(addr, len + ((uintptr_t)addr - a));
  for (uintptr_t g = a; g < e; g = granule_end(g, e))
    if (ours(g)) pa_fatal_ptr(who, (const void*)(g > (uintptr_t)addr ? g : (uintptr_t)addr));
}

/* ---- attributes: mprotect, mlock ---------------------------------------- */

static void note(const void* addr, size_t len) {
  uintptr_t a = (uintptr_t)addr & ~(PA_PAGE - 1), e = range_end(addr, len + ((uintptr_t)addr - a));
  if (holds_ours(a, e)) mark(a, e);
}

PUBLIC int mprotect(void* addr, size_t len, int prot) {
  if (prot != RW) note(addr, len);
  return (int)syscall(SYS_mprotect, addr, len, prot);
}

PUBLIC int pkey_mprotect(void* addr, size_t len, int prot, int pkey) {
  note(addr, len);
  return (int)syscall(SYS_pkey_mprotect, addr, len, prot, pkey);
}

PUBLIC int mlock(const void* addr, size_t len) {
  note(addr, len);
  return (int)syscall(SYS_mlock, addr, len);
}

PUBLIC int mlock2(const void* addr, size_t len, unsigned int flags) {
  note(addr, len);
  return (int)syscall(SYS_mlock2, addr, len, flags);
}

/* The program's munlock must not undo the mlock registrar's lock of a chunk:
 * what the registrar locked is locked again. */
PUBLIC int munlock(const void* addr, size_t len) {
  int r = (int)syscall(SYS_munlock, addr, len);
  uintptr_t a = (uintptr_t)addr & ~(PA_PAGE - 1), e = range_end(addr, len + ((uintptr_t)addr - a));
  if (r != 0) return r;
  for (uintptr_t g = a; g < e; g = granule_end(g, e)) {
    if (!ours(g) || !shim_locked((void*)g)) continue;
    pa_regrec_t* rec = atomic_load_explicit(&pa_chunk_of((void*)g)->reg, memory_order_acquire);
    uintptr_t s = g > rec->base ? g : rec->base, t = granule_end(g, e);
    if (t > rec->base + rec->len) t = rec->base + rec->len;
    if (s < t) syscall(SYS_mlock, (void*)s, t - s);
  }
  return 0;
}

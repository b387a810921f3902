/* program.c — see program.h: the program's own madvise, mprotect, mlock and
 * unmaps over the shim's memory. System calls only (never the hooks). */
#define _GNU_SOURCE
#include "internal.h"
#include "program.h"
#include "../procfs.h"

#include <errno.h>
#include <string.h>
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
/* Set once the program locked shim memory (mlock, mlock2): madvise then asks
 * the kernel which mappings are locked (drop). */
static _Atomic int prog_locked;

/* a is in a chunk of the heap (malloc's memory). */
static int heap_ours(uintptr_t a) {
  if (pa_table == NULL || (a >> PA_ADDR_BITS) != 0) return 0;
  return atomic_load_explicit(&pa_table[a >> PA_TABLE_SHIFT], memory_order_acquire) != 0;
}

/* a is shim memory: the heap's or a remote chunk's (pinarena_alloc_remote).
 * Both queries take no lock: this runs inside the program's madvise & co.,
 * from any context (remote.c, "owned"). */
static int ours(uintptr_t a) { return heap_ours(a) || pa_remote_owns(a); }

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

static void mark_slices(_Atomic(uint8_t)* m, uintptr_t a, uintptr_t e) {
  for (uintptr_t s = a >> PA_SLICE_SHIFT; s <= (e - 1) >> PA_SLICE_SHIFT; s++)
    atomic_fetch_or_explicit(&m[s >> 3], (uint8_t)(1u << (s & 7)), memory_order_relaxed);
}

/* Record that the program changed attributes of the shim memory in [a, e). */
static void mark(uintptr_t a, uintptr_t e) {
  _Atomic(uint8_t)* m = marks_map();
  if (m == NULL) atomic_store(&all_marked, 1);
  for (uintptr_t g = a; g < e; g = granule_end(g, e))
    if (ours(g) && m != NULL) mark_slices(m, g, granule_end(g, e));
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

/* The pages of [from, from + len) moved to `to` with what the program set on
 * them (mremap keeps a mapping's attributes): the marks go with them, so the
 * release at the new address undoes it. The old range is retired (never
 * handed out again): its marks go. */
PA_HIDDEN void pa_prog_moved_slow(const void* from, const void* to, size_t len) {
  uintptr_t a = (uintptr_t)from, e = a + len, d = (uintptr_t)to;
  _Atomic(uint8_t)* m = atomic_load_explicit(&marks, memory_order_acquire);
  if (m == NULL || e <= a) return;         /* nothing marked, or all_marked: every release resets */
  for (uintptr_t s = a >> PA_SLICE_SHIFT; s <= (e - 1) >> PA_SLICE_SHIFT; s++) {
    if (!(atomic_load_explicit(&m[s >> 3], memory_order_relaxed) & (1u << (s & 7)))) continue;
    uintptr_t ss = s << PA_SLICE_SHIFT, se = ss + PA_SLICE;
    if (ss < a) ss = a;
    if (se > e) se = e;
    mark_slices(m, d + (ss - a), d + (se - a));
  }
  take_marks(a, e);
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
  pa_register_retry_later();               /* writable again (register.c, "refusals that may pass") */
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

/* The mappings over [a, e), in address order, clipped to it: from
 * /proc/self/maps, or with `locks` from /proc/self/smaps, which also says
 * whether each is locked (dearer: the kernel counts every mapping's pages;
 * read only when the program has locked shim memory). */
typedef struct vmawalk_s {
  pa_linereader_t lr;
  uintptr_t a, e;
  int locks, pending;
  uintptr_t from, to;                      /* the current mapping */
  int prot, locked;
} vmawalk_t;

static int walk_open(vmawalk_t* w, uintptr_t a, uintptr_t e, int locks) {
  w->a = a; w->e = e; w->locks = locks; w->pending = 0;
  return pa_lr_open(&w->lr, locks ? "/proc/self/smaps" : "/proc/self/maps");
}

/* "VmFlags: rd wr mr mw me lo ac" holds the two letters f. */
static int vm_flag(const char* flags, const char* f) {
  for (const char* t = flags; *t; t++)
    if (t[0] == f[0] && t[1] == f[1] && t[-1] == ' ' && (t[2] == ' ' || t[2] == 0)) return 1;
  return 0;
}

/* The next mapping: 1, or 0 at the end. */
static int walk_next(vmawalk_t* w) {
  char* line;
  while (pa_lr_next(&w->lr, &line) >= 0) {
    uint64_t s, t;
    size_t n = pa_parse_maps_range(line, &s, &t);
    if (n != 0) {                                                     /* a mapping's first line */
      if (s >= w->e) return 0;
      w->pending = t > w->a;
      if (!w->pending) continue;
      const char* perm = line + n + 1;
      w->from = s > w->a ? s : w->a;
      w->to = t < w->e ? t : w->e;
      w->prot = (perm[0] == 'r' ? PROT_READ : 0) | (perm[1] == 'w' ? PROT_WRITE : 0) | (perm[2] == 'x' ? PROT_EXEC : 0);
      w->locked = 0;
      if (!w->locks) return 1;
    } else if (w->pending && strncmp(line, "VmFlags:", 8) == 0) {   /* smaps: its last line */
      w->pending = 0;
      w->locked = vm_flag(line + 8, "lo");
      return 1;
    }
  }
  return 0;
}

/* Zero one mapping's part as DONTNEED would, whatever protection the
 * program gave it: an unwritable one is made writable for the zeroing and
 * then given its protection back. */
static void zero_mapping(uintptr_t from, uintptr_t to, int prot) {
  if (prot & PROT_WRITE) { pa_os_zero_touched((void*)from, to - from); return; }
  if (syscall(SYS_mprotect, (void*)from, to - from, RW) != 0) return;
  pa_os_zero_touched((void*)from, to - from);
  syscall(SYS_mprotect, (void*)from, to - from, prot);
}

#ifdef MADV_DONTNEED_LOCKED
#define DONTNEED_LOCKED MADV_DONTNEED_LOCKED
#else
#define DONTNEED_LOCKED (-1)
#endif

/* DONTNEED, DONTNEED_LOCKED and FREE over a run of shim memory: the
 * kernel's answer on private anonymous memory, but the frames stay.
 * DONTNEED zeroes in place (what the kernel's DONTNEED promises), FREE
 * keeps the bytes (freed pages may keep them). A mapping the program
 * locked stops DONTNEED and FREE with EINVAL, the mappings before it done,
 * as the kernel does; DONTNEED_LOCKED goes through. Where the program
 * changed no attribute the run is one writable, unlocked mapping for this
 * purpose (a lock of the mlock registrar is the shim's, not the program's). */
static long drop(uintptr_t a, uintptr_t e, int advice) {
  int zero = advice != MADV_FREE;
  int locks = advice != DONTNEED_LOCKED && atomic_load_explicit(&prog_locked, memory_order_relaxed);
  vmawalk_t w;
  if (!has_marks(a, e) || walk_open(&w, a, e, locks) != 0) {
    if (zero) pa_os_zero_touched((void*)a, e - a);
    return 0;
  }
  long r = 0;
  while (walk_next(&w)) {
    if (w.locked && !shim_locked((void*)w.from)) { errno = EINVAL; r = -1; break; }
    if (zero) zero_mapping(w.from, w.to, w.prot);
  }
  pa_lr_close(&w.lr);
  return r;
}

/* ---- a huge object's move (pa_huge_move) -------------------------------- */

/* mremap with MREMAP_DONTUNMAP takes VM_LOCKED off the old range but leaves
 * its pages counted in VmLck (and RLIMIT_MEMLOCK) for good (seen on 6.18):
 * so a range the program locked, all of it (its mappings: one, or several
 * where a huge chunk's regions refuse huge pages, huge_thp.c), is unlocked for
 * the move and locked again at its new address (pa_prog_relock), as glibc's
 * mremap of an mmapped chunk keeps the lock. */
PA_HIDDEN int pa_prog_unlock_slow(const void* from, size_t len) {
  uintptr_t a = (uintptr_t)from, e = a + len;
  vmawalk_t w;
  if (!atomic_load_explicit(&prog_locked, memory_order_relaxed) || !has_marks(a, e) || walk_open(&w, a, e, 1) != 0)
    return 0;
  int n = 0, locked = 0;
  while (walk_next(&w)) { n++; locked += w.locked && !shim_locked((void*)w.from); }
  pa_lr_close(&w.lr);
  if (n == 0 || locked != n) return 0;
  syscall(SYS_munlock, from, len);
  return 1;
}

PA_HIDDEN void pa_prog_relock(const void* at, size_t len) { syscall(SYS_mlock, at, len); }

/* What madvise does to a run of shim memory: 1 handled (*r set), 0 the
 * system call is right for it (the advice keeps the frames). */
static int advise_ours(uintptr_t a, uintptr_t e, int advice, long* r) {
  switch (advice) {
    case MADV_DONTNEED:
#ifdef MADV_DONTNEED_LOCKED
    case MADV_DONTNEED_LOCKED:
#endif
    case MADV_FREE:
      *r = drop(a, e, advice);
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
  /* runs of ours and not ours, each as its own call, in address order as the
     kernel walks its mappings: a hole (ENOMEM) is reported at the end, any
     other failure ends the call there */
  long first = 0;
  int err = 0;
  for (uintptr_t s = a; s < e;) {
    int mine = ours(s);
    uintptr_t t = granule_end(s, e);
    while (t < e && ours(t) == mine) t = granule_end(t, e);
    long r;
    if (!mine || !advise_ours(s, t, advice, &r)) r = syscall(SYS_madvise, (void*)s, t - s, advice);
    if (r != 0 && (first == 0 || errno != ENOMEM)) { first = r; err = errno; }
    if (r != 0 && errno != ENOMEM) break;
    s = t;
  }
  if (first != 0) errno = err;
  *ret = first;
  return 1;
}

/* ---- unmaps ------------------------------------------------------------- */

/* "pinarena: <who> memory of <whose> at <p>", then abort. */
static void __attribute__((noreturn)) unmaps_fatal(const char* who, const char* whose, const void* p) {
  char msg[192];
  size_t n = 0;
  for (const char* s = who; *s && n < 96; s++) msg[n++] = *s;
  for (const char* s = whose; *s && n < sizeof msg - 1; s++) msg[n++] = *s;
  msg[n] = 0;
  pa_fatal_ptr(msg, p);
}

PA_HIDDEN void pa_prog_unmaps(const char* who, const void* addr, size_t len) {
  uintptr_t a = (uintptr_t)addr & ~(PA_PAGE - 1), e = range_end(addr, len + ((uintptr_t)addr - a));
  for (uintptr_t g = a; g < e; g = granule_end(g, e)) {
    const void* at = (const void*)(g > (uintptr_t)addr ? g : (uintptr_t)addr);
    if (heap_ours(g)) unmaps_fatal(who, " memory of malloc at", at);
    if (pa_remote_owns(g)) unmaps_fatal(who, " memory of pinarena_alloc_remote at", at);
  }
}

/* ---- attributes: mprotect, mlock ---------------------------------------- */

static void note(const void* addr, size_t len, int lock) {
  uintptr_t a = (uintptr_t)addr & ~(PA_PAGE - 1), e = range_end(addr, len + ((uintptr_t)addr - a));
  if (!holds_ours(a, e)) return;
  if (lock) atomic_store_explicit(&prog_locked, 1, memory_order_relaxed);
  mark(a, e);
}

/* Shim memory made writable again: chunks refused for a read-only page may
 * register now (register.c, "refusals that may pass"). */
static void writable_again(const void* addr, size_t len, int prot, int r) {
  if (r != 0 || !(prot & PROT_WRITE)) return;
  uintptr_t a = (uintptr_t)addr & ~(PA_PAGE - 1);
  if (holds_ours(a, range_end(addr, len + ((uintptr_t)addr - a)))) pa_register_retry_later();
}

PUBLIC int mprotect(void* addr, size_t len, int prot) {
  if (prot != RW) note(addr, len, 0);
  int r = (int)syscall(SYS_mprotect, addr, len, prot);
  writable_again(addr, len, prot, r);
  return r;
}

PUBLIC int pkey_mprotect(void* addr, size_t len, int prot, int pkey) {
  note(addr, len, 0);
  int r = (int)syscall(SYS_pkey_mprotect, addr, len, prot, pkey);
  writable_again(addr, len, prot, r);
  return r;
}

PUBLIC int mlock(const void* addr, size_t len) {
  note(addr, len, 1);
  return (int)syscall(SYS_mlock, addr, len);
}

PUBLIC int mlock2(const void* addr, size_t len, unsigned int flags) {
  note(addr, len, 1);
  return (int)syscall(SYS_mlock2, addr, len, flags);
}

/* The program's munlock must not undo the mlock registrar's lock of a chunk:
 * what the registrar locked is locked again. */
PUBLIC int munlock(const void* addr, size_t len) {
  int r = (int)syscall(SYS_munlock, addr, len);
  uintptr_t a = (uintptr_t)addr & ~(PA_PAGE - 1), e = range_end(addr, len + ((uintptr_t)addr - a));
  if (r != 0) return r;
  for (uintptr_t g = a; g < e; g = granule_end(g, e)) {
    if (!heap_ours(g) || !shim_locked((void*)g)) continue;
    pa_regrec_t* rec = atomic_load_explicit(&pa_chunk_of((void*)g)->reg, memory_order_acquire);
    uintptr_t s = g > rec->base ? g : rec->base, t = granule_end(g, e);
    if (t > rec->base + rec->len) t = rec->base + rec->len;
    if (s < t) syscall(SYS_mlock, (void*)s, t - s);
  }
  return 0;
}

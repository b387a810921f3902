/* stack_ofi_subs.c — libfabric's subscriptions, and the unmaps that void them.
 *
 * The shim's memory monitor for libfabric (stack_ofi.c) must not call into
 * libfabric when memory leaves: its notify takes libfabric's monitor locks
 * (mm_list_rwlock, mm_lock), and an unmap can come while the thread already
 * holds them — from a signal handler that interrupted libfabric, or from an
 * allocation libfabric makes under its lock — and would wait on itself. So
 * unmaps go where every other consumer of the shim's events gets them: a sink
 * (ivset.h), posted lock-free and async-signal-safe. libfabric pulls: its MR
 * cache asks the monitor's valid() at every hit and subscribe() at every new
 * entry, both under its own lock, in a thread that holds no shim lock. There
 * the sink is drained and each drained range voids every subscription it
 * overlaps; valid() answers false for a voided one, and libfabric drops that
 * entry and registers the pages again.
 *
 * libfabric (1.17) never unsubscribes: it drops an entry and keeps the
 * subscription. So the table holds only live ranges: a voided one leaves at
 * once (valid() answers false for a range it does not hold), a range
 * subscribed again is kept once, and when the table is full the next
 * subscription takes a slot round the table — that range's next valid() is
 * false, costing one registration, never a stale hit. A subscription is
 * inserted before the drain that follows it, so an unmap still queued when a
 * range is subscribed voids it: again at worst one extra registration.
 *
 * Every function here runs under subs_lock, which no unmap path takes. */
#define _GNU_SOURCE
#include "internal.h"
#include "ivset.h"
#include "stack_ofi_subs.h"

#include <pthread.h>
#include <stdatomic.h>

#define OFI_SUBS_MAX   4096
#define OFI_SLOT_BITS  13                        /* 2 slots per subscription: probes stay short */
#define OFI_SLOTS      (1u << OFI_SLOT_BITS)
#define OFI_SLOT_MASK  (OFI_SLOTS - 1)
#define OFI_DRAIN_MAX  64
_Static_assert(OFI_SLOTS >= 2 * OFI_SUBS_MAX && OFI_SUBS_MAX < UINT16_MAX, "index sized for the table");

struct ofi_sub { uintptr_t start, end; };

/* The table: subs[0, nsubs) dense (a drain scans it for overlaps), and an
 * open-addressing index on the exact range (valid(), subscribe and
 * unsubscribe look a range up in it): slots[i] = k + 1 for subs[k], 0 for
 * an empty slot; linear probing, at most half full, so every probe sequence
 * ends at an empty slot. A removal shifts the rest of its probe sequence back
 * (no tombstones: probes stay as short after any number of removals). */
static pthread_mutex_t subs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ofi_sub subs[OFI_SUBS_MAX];
static uint16_t slots[OFI_SLOTS];
static int nsubs, victim;
static int subs_sink = -1;
static _Atomic int64_t subs_voided;              /* subscriptions voided by an unmap */

static unsigned slot_home(uintptr_t s, uintptr_t e) {
  uint64_t h = ((uint64_t)s ^ ((uint64_t)e * 0x9e3779b97f4a7c15u)) * 0xc2b2ae3d27d4eb4fu;
  return (unsigned)(h >> (64 - OFI_SLOT_BITS));
}

/* The slot indexing [s, e), or the empty slot where its probe sequence ends. */
static unsigned slot_of(uintptr_t s, uintptr_t e) {
  unsigned i = slot_home(s, e);
  for (int k; (k = slots[i] - 1) >= 0 && (subs[k].start != s || subs[k].end != e); i = (i + 1) & OFI_SLOT_MASK) {}
  return i;
}

/* Empty slot i: each later entry of the probe run moves back into the hole
 * unless that would put it before its home slot. */
static void slot_clear(unsigned i) {
  for (unsigned j = (i + 1) & OFI_SLOT_MASK; slots[j] != 0; j = (j + 1) & OFI_SLOT_MASK) {
    const struct ofi_sub* o = &subs[slots[j] - 1];
    if (((j - slot_home(o->start, o->end)) & OFI_SLOT_MASK) >= ((j - i) & OFI_SLOT_MASK)) {
      slots[i] = slots[j];
      i = j;
    }
  }
  slots[i] = 0;
}

static void sub_put(int k, uintptr_t s, uintptr_t e) {
  subs[k] = (struct ofi_sub){s, e};
  slots[slot_of(s, e)] = (uint16_t)(k + 1);
}

/* subs[k] leaves; the last entry takes its place (re-indexed while its old
 * copy is still in place for slot_of to match). */
static void sub_remove(int k) {
  slot_clear(slot_of(subs[k].start, subs[k].end));
  if (k != --nsubs) {
    slots[slot_of(subs[nsubs].start, subs[nsubs].end)] = (uint16_t)(k + 1);
    subs[k] = subs[nsubs];
  }
}

static int subs_find(uintptr_t s, uintptr_t e) { return slots[slot_of(s, e)] - 1; }

/* Drained ranges void (remove) the subscriptions they overlap. Under subs_lock. */
static void subs_drain(void) {
  if (atomic_load(pa_iv_pending(subs_sink)) == 0) return;
  pa_iv_range_t r[OFI_DRAIN_MAX];
  int n;
  while ((n = pa_iv_drain(subs_sink, r, OFI_DRAIN_MAX)) > 0) {
    for (int i = 0; i < n; i++)
      for (int k = 0; k < nsubs; k++)
        if (subs[k].start < r[i].end && r[i].start < subs[k].end) {
          sub_remove(k--);
          atomic_fetch_add_explicit(&subs_voided, 1, memory_order_relaxed);
        }
  }
  pa_iv_drain_done(subs_sink);
}

PA_HIDDEN int pa_ofi_subs_open(void) {
  pthread_mutex_lock(&subs_lock);
  if (subs_sink < 0) subs_sink = pa_iv_open();
  int rc = subs_sink;
  pthread_mutex_unlock(&subs_lock);
  return rc < 0 ? rc : 0;
}

PA_HIDDEN void pa_ofi_subs_add(const void* addr, size_t len) {
  uintptr_t s = (uintptr_t)addr, e = s + len;
  pthread_mutex_lock(&subs_lock);
  if (subs_find(s, e) < 0) {
    int k = nsubs;
    if (k < OFI_SUBS_MAX) nsubs++;
    else {                                       /* full: the victim's range leaves */
      k = victim;
      victim = (victim + 1) % OFI_SUBS_MAX;
      slot_clear(slot_of(subs[k].start, subs[k].end));
    }
    sub_put(k, s, e);
  }
  subs_drain();                                  /* after the insert: see the file's comment */
  pthread_mutex_unlock(&subs_lock);
}

PA_HIDDEN void pa_ofi_subs_remove(const void* addr, size_t len) {
  pthread_mutex_lock(&subs_lock);
  int k = subs_find((uintptr_t)addr, (uintptr_t)addr + len);
  if (k >= 0) sub_remove(k);
  pthread_mutex_unlock(&subs_lock);
}

PA_HIDDEN bool pa_ofi_subs_valid(const void* addr, size_t len) {
  pthread_mutex_lock(&subs_lock);
  subs_drain();
  bool held = subs_find((uintptr_t)addr, (uintptr_t)addr + len) >= 0;
  pthread_mutex_unlock(&subs_lock);
  return held;
}

PA_HIDDEN long pa_ofi_subs_voided(void) { return (long)atomic_load(&subs_voided); }

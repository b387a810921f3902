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
 * overlaps (an interval tree finds them: a drain never looks at the others);
 * valid() answers false for a voided one, and libfabric drops that
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

/* A held range, and its node in the interval tree. */
struct ofi_sub {
  uintptr_t start, end;
  uintptr_t max_end;                             /* the largest end in this node's subtree */
  uint32_t prio;                                 /* heap order: a parent's prio >= its children's */
  uint16_t left, right;                          /* the children's ids, 0 for none */
};

/* The table: subs[id - 1] for ids 1..OFI_SUBS_MAX (0 is "none"), each range
 * held once, in two indexes:
 * - an open-addressing index on the exact range (valid(), subscribe and
 *   unsubscribe look a range up in it): slots[i] = id, 0 for an empty slot;
 *   linear probing, at most half full, so every probe sequence ends at an
 *   empty slot. A removal shifts the rest of its probe sequence back (no
 *   tombstones: probes stay as short after any number of removals).
 * - an interval tree (a drain finds the ranges an unmap overlaps): a treap
 *   in (start, end) order, each node carrying its subtree's largest end, so a
 *   search skips every subtree that ends at or before the unmapped range and
 *   stops at the first start past it. Random priorities keep it O(log n)
 *   deep in whatever order ranges come.
 * Ids never used are taken in turn (fresh), freed ones from a stack. */
static pthread_mutex_t subs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ofi_sub subs[OFI_SUBS_MAX];
static uint16_t slots[OFI_SLOTS];
static uint16_t free_ids[OFI_SUBS_MAX];
static uint16_t hits[OFI_SUBS_MAX];             /* one drained range's overlaps, removed after the search */
static uint16_t root;
static int fresh, nfree, victim;
static uint32_t prio_state = 0x9e3779b9u;
static int subs_sink = -1;
static _Atomic int64_t subs_voided;              /* subscriptions voided by an unmap */

#define SUB(id) (&subs[(id) - 1])

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

static bool sub_before(const struct ofi_sub* a, const struct ofi_sub* b) {
  return a->start < b->start || (a->start == b->start && a->end < b->end);
}

static void tree_pull(uint16_t t) {
  struct ofi_sub* n = SUB(t);
  n->max_end = n->end;
  if (n->left != 0 && SUB(n->left)->max_end > n->max_end) n->max_end = SUB(n->left)->max_end;
  if (n->right != 0 && SUB(n->right)->max_end > n->max_end) n->max_end = SUB(n->right)->max_end;
}

/* Tree t's nodes before x into *l, the others into *r. */
static void tree_split(uint16_t t, const struct ofi_sub* x, uint16_t* l, uint16_t* r) {
  if (t == 0) { *l = *r = 0; return; }
  if (sub_before(SUB(t), x)) { tree_split(SUB(t)->right, x, &SUB(t)->right, r); *l = t; }
  else { tree_split(SUB(t)->left, x, l, &SUB(t)->left); *r = t; }
  tree_pull(t);
}

/* One tree of a's nodes then b's (every range of a before every range of b). */
static uint16_t tree_merge(uint16_t a, uint16_t b) {
  if (a == 0 || b == 0) return a != 0 ? a : b;
  if (SUB(a)->prio >= SUB(b)->prio) {
    SUB(a)->right = tree_merge(SUB(a)->right, b);
    tree_pull(a);
    return a;
  }
  SUB(b)->left = tree_merge(a, SUB(b)->left);
  tree_pull(b);
  return b;
}

/* Node id goes in where its priority ranks it on its path; the subtree there splits round it. */
static uint16_t tree_insert(uint16_t t, uint16_t id) {
  struct ofi_sub* x = SUB(id);
  if (t == 0 || x->prio > SUB(t)->prio) {
    tree_split(t, x, &x->left, &x->right);
    tree_pull(id);
    return id;
  }
  if (sub_before(x, SUB(t))) SUB(t)->left = tree_insert(SUB(t)->left, id);
  else SUB(t)->right = tree_insert(SUB(t)->right, id);
  tree_pull(t);
  return t;
}

static uint16_t tree_erase(uint16_t t, uint16_t id) {
  if (t == id) return tree_merge(SUB(t)->left, SUB(t)->right);
  if (sub_before(SUB(id), SUB(t))) SUB(t)->left = tree_erase(SUB(t)->left, id);
  else SUB(t)->right = tree_erase(SUB(t)->right, id);
  tree_pull(t);
  return t;
}

/* Appends to hits[n..] each node of tree t overlapping [s, e); the new n. */
static int tree_overlaps(uint16_t t, uintptr_t s, uintptr_t e, int n) {
  while (t != 0 && SUB(t)->max_end > s) {        /* else nothing in t ends after s */
    n = tree_overlaps(SUB(t)->left, s, e, n);
    if (SUB(t)->start >= e) break;               /* t and all after it start at or past e */
    if (SUB(t)->end > s) hits[n++] = t;
    t = SUB(t)->right;
  }
  return n;
}

static void sub_put(uintptr_t s, uintptr_t e) {
  uint16_t id = nfree > 0 ? free_ids[--nfree] : (uint16_t)++fresh;
  prio_state ^= prio_state << 13;                /* xorshift32 */
  prio_state ^= prio_state >> 17;
  prio_state ^= prio_state << 5;
  *SUB(id) = (struct ofi_sub){.start = s, .end = e, .prio = prio_state};
  slots[slot_of(s, e)] = id;
  root = tree_insert(root, id);
}

/* Range id leaves both indexes; its id is free again. */
static void sub_remove(uint16_t id) {
  slot_clear(slot_of(SUB(id)->start, SUB(id)->end));
  root = tree_erase(root, id);
  free_ids[nfree++] = id;
}

static uint16_t subs_find(uintptr_t s, uintptr_t e) { return slots[slot_of(s, e)]; }

/* Drained ranges void (remove) the subscriptions they overlap. Under subs_lock. */
static void subs_drain(void) {
  if (atomic_load(pa_iv_pending(subs_sink)) == 0) return;
  pa_iv_range_t r[OFI_DRAIN_MAX];
  int n;
  while ((n = pa_iv_drain(subs_sink, r, OFI_DRAIN_MAX)) > 0) {
    for (int i = 0; i < n; i++) {
      int h = tree_overlaps(root, r[i].start, r[i].end, 0);
      for (int k = 0; k < h; k++) sub_remove(hits[k]);
      atomic_fetch_add_explicit(&subs_voided, h, memory_order_relaxed);
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
  if (subs_find(s, e) == 0) {
    if (fresh == OFI_SUBS_MAX && nfree == 0) {   /* full: the victim's range leaves */
      sub_remove((uint16_t)(victim + 1));
      victim = (victim + 1) % OFI_SUBS_MAX;
    }
    sub_put(s, e);
  }
  subs_drain();                                  /* after the insert: see the file's comment */
  pthread_mutex_unlock(&subs_lock);
}

PA_HIDDEN void pa_ofi_subs_remove(const void* addr, size_t len) {
  pthread_mutex_lock(&subs_lock);
  uint16_t id = subs_find((uintptr_t)addr, (uintptr_t)addr + len);
  if (id != 0) sub_remove(id);
  pthread_mutex_unlock(&subs_lock);
}

PA_HIDDEN bool pa_ofi_subs_valid(const void* addr, size_t len) {
  pthread_mutex_lock(&subs_lock);
  subs_drain();
  bool held = subs_find((uintptr_t)addr, (uintptr_t)addr + len) != 0;
  pthread_mutex_unlock(&subs_lock);
  return held;
}

PA_HIDDEN long pa_ofi_subs_voided(void) { return (long)atomic_load(&subs_voided); }

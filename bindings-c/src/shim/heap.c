/* heap.c — per-thread heaps.
 *
 * A thread's heap is found through one initial-exec TLS pointer. It starts
 * as &pa_heap_empty, whose spans have no free blocks, so the first malloc of
 * a thread falls into the slow path, which gives it a heap: an abandoned one
 * (whole, with all its spans) if any, else a new one.
 *
 * Thread exit (pthread key destructor) hands the heap back: the heap joins
 * the abandoned list as it is, and the next thread that needs a span (or
 * pinarena_trim) gives its empty spans back to their chunks, as it does for
 * memory freed into abandoned heaps (pa_heap_reclaim_orphans). A new thread
 * adopts an abandoned heap whole: the heap that owns the
 * last block the thread freed before it had a heap, if that heap is
 * abandoned (a thread taking over another's objects frees them locally from
 * then on), else the one abandoned last. Because heaps are
 * adopted whole and never freed, span->heap never changes while a span is in
 * use, and a remote freer can always push onto that heap's `delayed` list.
 */
#include "internal.h"
#include "ufd_monitor.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

PA_HIDDEN pa_span_t pa_span_empty;     /* free == NULL: the fast path always misses */
PA_HIDDEN pa_heap_t pa_heap_empty = {
  .direct = { [0 ... PA_DIRECT - 1] = &pa_span_empty },
  .cur = { [0 ... PA_NCLASS - 1] = &pa_span_empty },
};
PA_HIDDEN __thread pa_heap_t* pa_heap __attribute__((tls_model("initial-exec"))) = &pa_heap_empty;
PA_HIDDEN __thread pa_heap_t* pa_adopt_hint __attribute__((tls_model("initial-exec")));
PA_HIDDEN pthread_mutex_t pa_heap_lock = PTHREAD_MUTEX_INITIALIZER;
PA_HIDDEN pa_heap_t* pa_heaps;
static pa_heap_t* abandoned;
static pthread_key_t heap_key;
static int heap_key_made;

/* Heaps come from small anonymous mappings; they are metadata, never
 * registered and never freed (an abandoned heap is reused whole). */
static char* meta_cur;
static char* meta_end;

static pa_heap_t* meta_heap(void) {
  size_t sz = (sizeof(pa_heap_t) + 63) & ~(size_t)63;
  if (meta_cur == NULL || meta_cur + sz > meta_end) {
    size_t len = 64 * 1024;
    char* p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    pa_os_refuse_huge(p, len);        /* neighbours merge into one mapping, which THP "always" would fill */
    meta_cur = p; meta_end = p + len;
  }
  pa_heap_t* h = (pa_heap_t*)meta_cur;
  meta_cur += sz;
  return h;
}

static void heap_thread_done(void* arg);
static void heap_mark_orphan(pa_heap_t* h, uint8_t orphan);

PA_HIDDEN pa_heap_t* pa_heap_init_thread(void) {
  pa_ensure_init();
  pthread_mutex_lock(&pa_heap_lock);
  if (!heap_key_made) {                       /* lazily; pthread_key_create does not allocate */
    if (pthread_key_create(&heap_key, heap_thread_done) == 0) heap_key_made = 1;
  }
  pa_heap_t* h = NULL;
  for (pa_heap_t** link = &abandoned; *link != NULL; link = &(*link)->next_abandoned) {
    if (*link == pa_adopt_hint) { h = *link; *link = h->next_abandoned; break; }
  }
  pa_adopt_hint = NULL;
  if (h == NULL && (h = abandoned) != NULL) abandoned = h->next_abandoned;
  if (h == NULL) {
    h = meta_heap();
    if (h != NULL) {
      memset(h, 0, sizeof(*h));
      for (size_t i = 0; i < PA_NCLASS; i++) h->cur[i] = &pa_span_empty;
      for (size_t i = 0; i < PA_DIRECT; i++) h->direct[i] = &pa_span_empty;
      h->next_all = pa_heaps;
      pa_heaps = h;
    }
  }
  if (h != NULL) { h->live = 1; h->exit_collect = 0; h->next_abandoned = NULL; heap_mark_orphan(h, 0); }
  pthread_mutex_unlock(&pa_heap_lock);
  if (h == NULL) return &pa_heap_empty;
  pa_heap = h;                                /* set first: setspecific may calloc (keys >= 32) */
  if (heap_key_made) pthread_setspecific(heap_key, h);
  return h;
}

static void release_if_empty(pa_heap_t* h, pa_span_t* s) {
  pa_span_collect(s);
  if (s->used != 0) return;
  pa_queue_remove(h, s);
  if (h->cur[s->cls] == s) pa_set_cur(h, s->cls, &pa_span_empty);
  pa_span_check_empty(s);
  atomic_store_explicit(&s->thread_free, 0, memory_order_relaxed);
  /* a pass due is left to the next free: callers may hold pa_heap_lock
     (the orphans' collect), and a pass takes the loader's lock */
  (void)pa_span_release(s);
}

/* Give back what is free now; keep the rest with the heap. With `warm`
 * (the first look at a heap its thread's exit abandoned), keep up to
 * PA_HEAP_WARM empty spans, one per class, the first of its queue: the next
 * thread adopts the heap with them and
 * allocates from the pages the dead thread touched. Were they given back,
 * the next thread's spans would land on other slices and touch pages of
 * their own, and a program that keeps starting threads would keep growing
 * (4000 threads of 8 classes: +9 to +11 MiB RSS each round, README,
 * "Threads"). What an abandoned heap keeps is bounded by what the thread
 * held alive; pinarena_trim and the orphan reclaim give it back. */
#define PA_HEAP_WARM 16

static void heap_collect_all(pa_heap_t* h, int warm) {
  pa_heap_collect_delayed(h);
  int keep = warm ? PA_HEAP_WARM : 0;
  for (size_t c = 1; c < PA_NCLASS; c++) {
    for (pa_span_t* s = h->queue[c], *n; s != NULL; s = n) {
      n = s->next;
      if (keep > 0 && s == h->queue[c]) {
        pa_span_collect(s);
        if (s->used == 0) { keep--; continue; }
      }
      release_if_empty(h, s);
    }
    pa_set_cur(h, c, h->queue[c] ? h->queue[c] : &pa_span_empty);
  }
  for (pa_span_t* s = h->full, *n; s != NULL; s = n) {
    n = s->next;
    uintptr_t tf = atomic_load_explicit(&s->thread_free, memory_order_acquire);
    if ((tf & ~PA_TF_DELAYED) != 0 || (s->used & ~PA_USED_FULL) == 0) { pa_span_unfull(h, s); release_if_empty(h, s); }
  }
  for (size_t c = 1; c < PA_NCLASS; c++) pa_set_cur(h, c, h->queue[c] ? h->queue[c] : &pa_span_empty);
}

/* The orphan flag of every span a heap holds (its class queues and its
 * full list). Under pa_heap_lock. */
static void heap_mark_orphan(pa_heap_t* h, uint8_t orphan) {
  for (size_t c = 1; c < PA_NCLASS; c++)
    for (pa_span_t* s = h->queue[c]; s != NULL; s = s->next) s->orphan = orphan;
  for (pa_span_t* s = h->full; s != NULL; s = s->next) s->orphan = orphan;
}

/* Memory freed into abandoned heaps. A heap nobody owns never takes its
 * remote frees in, so their spans would stay out of use however much of
 * them is free. Whoever needs a span (or trims) acts as the owner of every
 * abandoned heap for a moment, under pa_heap_lock so none is adopted
 * meanwhile, and gives back what is free now: empty spans return to their
 * chunks for any thread and for pinarena_trim(). Remote freers go on pushing
 * with CAS as they would with a live owner. Ordering: a freer pushes, then
 * raises the flag with release; the exchange here is acquire, so the pushes
 * before a flag it clears are seen by the collect; a push after it raises
 * the flag again for the next reclaim. */
PA_HIDDEN _Atomic int pa_orphan_frees;

PA_HIDDEN PA_COLD void pa_heap_reclaim_orphans(void) {
  if (!atomic_exchange_explicit(&pa_orphan_frees, 0, memory_order_acquire)) return;
  pthread_mutex_lock(&pa_heap_lock);
  for (pa_heap_t* h = abandoned; h != NULL; h = h->next_abandoned) {
    heap_collect_all(h, h->exit_collect);       /* just abandoned: what its exit used to give back */
    h->exit_collect = 0;
  }
  pthread_mutex_unlock(&pa_heap_lock);
}

/* pinarena_trim: the empty spans dead threads' heaps keep warm (and what
 * was freed into them) back to their chunks. */
PA_HIDDEN void pa_heap_give_back_abandoned(void) {
  atomic_exchange_explicit(&pa_orphan_frees, 0, memory_order_acquire);   /* as pa_heap_reclaim_orphans */
  pthread_mutex_lock(&pa_heap_lock);
  for (pa_heap_t* h = abandoned; h != NULL; h = h->next_abandoned) { heap_collect_all(h, 0); h->exit_collect = 0; }
  pthread_mutex_unlock(&pa_heap_lock);
}

/* The empty spans free.c kept (PA_KEEP_EMPTY) but each class's current
 * one, back to their chunks. Called by the owner when a span is about to
 * take slices no span ever touched (pa_span_alloc): the pages the kept
 * spans hold serve it instead of new ones, and their slices join the free
 * runs around them, so a large object fits there too (perf/native's
 * phased: small objects built and freed, then large ones). */
PA_HIDDEN void pa_heap_give_back_kept(pa_heap_t* h) {
  uint64_t left = h->kept_empty;     /* at most that many: the walk ends when they are found */
  h->kept_empty = 0;
  for (size_t c = 1; c < PA_NCLASS && left != 0; c++)
    for (pa_span_t* s = h->queue[c], *n; s != NULL && left != 0; s = n) {
      n = s->next;
      if (s->used == 0 && s != h->cur[c] && s->nslices == 1) { release_if_empty(h, s); left--; }
    }
}

PA_HIDDEN void pa_heap_give_back(void) {
  pa_heap_t* h = pa_heap;
  if (h != &pa_heap_empty) heap_collect_all(h, 0);
}

/* The exiting thread gives nothing back itself: the releases take
 * pa_chunk_lock once a span, and a thread in its exit shares the CPUs with
 * the thread it may just have started; preempted holding the lock, it kept
 * the other threads waiting for it (larson, which starts a thread for every
 * one that ends, left the CPUs idle: README, "Threads").
 * The next thread that needs a span does it instead (exit_collect: keeping
 * the warm spans, as the exit did), or adopts the heap first and keeps all. */
static void heap_thread_done(void* arg) {
  pa_heap_t* h = (pa_heap_t*)arg;
  if (h == NULL || h == &pa_heap_empty) return;
  pa_heap = &pa_heap_empty;                   /* a later malloc in this thread gets a heap again */
  pthread_mutex_lock(&pa_heap_lock);
  h->live = 0;
  h->exit_collect = 1;
  heap_mark_orphan(h, 1);
  h->next_abandoned = abandoned;
  abandoned = h;
  pthread_mutex_unlock(&pa_heap_lock);
  /* release: the reclaiming thread's acquire exchange sees the heap on the
     abandoned list (it takes pa_heap_lock anyway) */
  atomic_store_explicit(&pa_orphan_frees, 1, memory_order_release);
}

/* ---------------------------------------------------------------------------
   fork: hold every lock across fork; the child keeps only its own heap
--------------------------------------------------------------------------- */


static void fork_prepare(void) {
  pa_remote_atfork_prepare();           /* first: held while the locks below are taken */
  pthread_mutex_lock(&pa_reg_lock);
  pthread_mutex_lock(&pa_heap_lock);
  pthread_mutex_lock(&pa_chunk_lock);
  pa_register_atfork_prepare();
}

static void fork_parent(void) {
  pa_register_atfork_parent();
  pthread_mutex_unlock(&pa_chunk_lock);
  pthread_mutex_unlock(&pa_heap_lock);
  pthread_mutex_unlock(&pa_reg_lock);
  pa_remote_atfork_parent();
}

/* The child's view of memory other threads were writing at the moment of
 * fork. Pages nobody pinned are shared copy-on-write and the child sees
 * them as of one moment, as under glibc. Pages somebody pinned — a verbs
 * memory region (ours, or one the program or its MPI made over malloc
 * memory), an io_uring buffer the program registered itself — the kernel
 * copies into the child one by one during fork while those threads go on
 * writing them (FORK.md), so the child may see each such page as of a
 * different moment. The shim cannot stop that copy, so the child trusts
 * nothing another thread could have been writing without a lock:
 *   - the other threads' heaps (live or abandoned: a remote free may have
 *     been half-way into an abandoned one) are never owned, adopted or
 *     reclaimed in the child, and a free of a block of theirs is ignored
 *     without reading the block (free.c, fork_ignores_free): its mark
 *     and its span may be as of another moment than the program's pointer;
 *   - the forking thread's own heap keeps its local lists (only it wrote
 *     them, and it was in fork) but forgets the blocks other threads had
 *     pushed back to it and it had not taken in yet (thread_free lists and
 *     the delayed list: a push's link and its list head may be copied at
 *     different moments). Those blocks stay counted as out: never handed
 *     out, merely lost to the child.
 * Everything else the child reads is guarded by the locks fork_prepare
 * holds across fork. The memory left out is the child's whole loss; it
 * usually execs. */
PA_HIDDEN int pa_forked_child;

static void forget_pushed_blocks(pa_heap_t* h) {
  atomic_store_explicit(&h->delayed, NULL, memory_order_relaxed);
  for (size_t c = 1; c < PA_NCLASS; c++)
    for (pa_span_t* s = h->queue[c]; s != NULL; s = s->next)
      atomic_store_explicit(&s->thread_free, 0, memory_order_relaxed);
  /* a full span keeps its tag unless a freer took it (its blocks were on
     `delayed`): without the tag it stays on the full list for good */
  for (pa_span_t* s = h->full; s != NULL; s = s->next)
    atomic_store_explicit(&s->thread_free, atomic_load_explicit(&s->thread_free, memory_order_relaxed) & PA_TF_DELAYED,
                          memory_order_relaxed);
}

static void fork_child(void) {
  pa_remote_atfork_child();
  pthread_mutex_init(&pa_chunk_lock, NULL);
  pthread_mutex_init(&pa_heap_lock, NULL);
  pthread_mutex_init(&pa_reg_lock, NULL);
  pa_forked_child = 1;
  for (pa_heap_t* h = pa_heaps; h != NULL; h = h->next_all) {
    if (h == pa_heap) continue;
    h->live = 0;
    h->left_in_parent = 1;
  }
  abandoned = NULL;
  atomic_store_explicit(&pa_orphan_frees, 0, memory_order_relaxed);
  if (pa_heap != &pa_heap_empty) forget_pushed_blocks(pa_heap);
  pa_register_atfork_child();
  pa_ufd_atfork_child();
}

PA_HIDDEN void pa_atfork_install(void) {
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}

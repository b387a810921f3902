/* remote.c — pinarena_alloc_remote / pinarena_free_remote: buffers exposed
 * to RDMA peers, each with a key that reaches exactly its bytes.
 *
 * Remote-scope chunks are mappings of their own (pa_os_map_chunk, never in
 * the heap's owner table): nothing but exposed buffers lives in them. Their
 * bookkeeping — a bitmap of 256-byte granules, the first granule of each
 * buffer, one record per buffer — sits in a separate anonymous mapping
 * that is never registered, so no key of any kind reaches it.
 *
 * Keys, by PINARENA_REMOTE_KEYS (default: window where the device has
 * memory windows, else mr):
 *   window   the chunk is registered LOCAL_WRITE | MW_BIND (its own rkey
 *            reaches nothing); each buffer gets a type-1 window bound to
 *            exactly [p, p + size) (window.c); free revokes it and waits for
 *            the device before the bytes are zeroed and reused.
 *   window2  the same with type-2 windows on the shim's QP (see window.c:
 *            reachable only through that QP; for tests and measurement).
 *   mr       ibv_reg_mr of exactly [p, p + size) per buffer; free deregisters.
 *   chunk    the chunk registered with remote access, one key for all of its
 *            buffers: a peer with one buffer's key reaches its neighbours
 *            (never the heap, never allocator metadata). Cheapest.
 * Without the verbs registrar (io_uring, mlock, none) the memory is served
 * with no keys (lookup: -ENODATA).
 *
 * One lock (remote_lock) serialises everything here, lookups of remote
 * buffers included: remote allocation is a set-up path, not a per-message
 * one. The window QP is used under this lock only. The one exception is
 * pa_remote_owns (the program's madvise & co. ask it), which takes no lock:
 * see "owned" below. */
#define _GNU_SOURCE
#include "internal.h"
#include "../nocancel.h"
#include "program.h"
#include "remote.h"
#include "../raw_map.h"
#include "../../include/pinarena.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RG_SHIFT  8                       /* granule: 256 bytes */
#define RG        ((size_t)1 << RG_SHIFT)
#define RC_SIZE   PA_CHUNK_MIN            /* a remote chunk; bigger requests get one of their own */

typedef struct rbuf_s {                   /* one exposed buffer, at its first granule */
  size_t         size;                    /* bytes the key covers */
  struct ibv_mw* mw;                      /* window modes */
  struct ibv_mr* mr;                      /* mr mode */
  uint32_t       lkey, rkey;
} rbuf_t;

typedef struct rchunk_s {
  char*            base;
  size_t           size;
  uint32_t         ngran, free_gran;
  pa_mapping_t     os;
  struct ibv_mr*   mr;                    /* window / chunk modes */
  uint64_t*        map;                   /* granule in use */
  uint32_t*        head;                  /* granule -> first granule of its buffer */
  rbuf_t*          bufs;                  /* by first granule */
  struct rchunk_s* next;
} rchunk_t;

static pthread_mutex_t remote_lock = PTHREAD_MUTEX_INITIALIZER;
static int mode = -1;                     /* PA_RKEYS_*, -1 until the first call */
static const char* why_mode = "";
static struct ibv_pd* rpd;                /* the PD remote chunks are registered with */
static pa_rv_t rv;
static pa_wpool_t* wpool;
static rchunk_t* chunks;
static pid_t owner;                       /* the process whose verbs objects these are */

/* Which 2 MiB granules of the address space remote chunks cover, one bit
 * each (2^26 bits: 8 MiB of NORESERVE address space, mapped at the first
 * remote chunk and never unmapped). The program's madvise, mprotect, mlock,
 * munmap, mremap and mmap(MAP_FIXED) ask it through pa_remote_owns from any
 * context: a signal handler, a thread that holds remote_lock (the verbs
 * library's own madvise inside ibv_reg_mr), a forked child whose copy of
 * remote_lock was taken by a thread that is not there. So it takes no lock:
 * one acquire load of the map, one of the byte.
 * Ordering. A chunk's bits are set (release) after it is mapped and
 * registered and before any buffer of it is handed out: the program only
 * learns an address from pinarena_alloc_remote, which returns after the
 * store, so any thread that holds the address (through the program's own
 * synchronisation) sees the bits; madvise made by the verbs library while
 * it registers the chunk is not mistaken for the program's. The bits are
 * cleared (under remote_lock) before the chunk is unmapped: a query racing
 * with that concerns a chunk with no live buffer, memory the program no
 * longer holds. A forked child inherits the map with the chunks. */
#define OWN_BITS (((size_t)1 << PA_ADDR_BITS) >> PA_TABLE_SHIFT)
static _Atomic(_Atomic(uint8_t)*) owned;

/* Set or clear the bits of [base, base + size) (remote_lock held). 0, or
 * -1 when the map cannot be had (the chunk is not used then). */
static int own(const char* base, size_t size, int set) {
  _Atomic(uint8_t)* m = atomic_load_explicit(&owned, memory_order_relaxed);
  if (m == NULL) {
    if (!set) return 0;
    m = (_Atomic(uint8_t)*)syscall(SYS_mmap, NULL, OWN_BITS / 8, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == (_Atomic(uint8_t)*)MAP_FAILED) return -1;
    atomic_store_explicit(&owned, m, memory_order_release);
  }
  for (uintptr_t g = (uintptr_t)base >> PA_TABLE_SHIFT; g < ((uintptr_t)base + size) >> PA_TABLE_SHIFT; g++) {
    uint8_t bit = (uint8_t)(1u << (g & 7));
    if (set) atomic_fetch_or_explicit(&m[g >> 3], bit, memory_order_release);
    else atomic_fetch_and_explicit(&m[g >> 3], (uint8_t)~bit, memory_order_release);
  }
  return 0;
}

PA_HIDDEN int pa_remote_owns(uintptr_t a) {
  _Atomic(uint8_t)* m = atomic_load_explicit(&owned, memory_order_acquire);
  if (m == NULL || (a >> PA_ADDR_BITS) != 0) return 0;
  uintptr_t g = a >> PA_TABLE_SHIFT;
  return (atomic_load_explicit(&m[g >> 3], memory_order_acquire) >> (g & 7)) & 1;
}

/* In a forked child the registrations, windows and QP are the parent's:
 * forget them (never touch them), and serve remote memory without keys. */
static void forget_if_forked(void) {
  if (mode <= PA_RKEYS_NONE || owner == getpid()) return;
  for (rchunk_t* c = chunks; c != NULL; c = c->next) {
    c->mr = NULL;
    for (size_t g = 0; g < c->ngran; g++) { c->bufs[g].mw = NULL; c->bufs[g].mr = NULL; c->bufs[g].lkey = c->bufs[g].rkey = 0; }
  }
  wpool = NULL;
  mode = PA_RKEYS_NONE;
  why_mode = "a forked child: the registrations are the parent's";
}

static int resolve(void) {
  void* h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);   /* register.c opened it */
  if (h == NULL) return -ENOENT;
  rv.reg_mr = (struct ibv_mr* (*)(struct ibv_pd*, void*, size_t, int))dlsym(h, "ibv_reg_mr");
  rv.dereg_mr = (int (*)(struct ibv_mr*))dlsym(h, "ibv_dereg_mr");
  rv.query_device = (int (*)(struct ibv_context*, struct ibv_device_attr*))dlsym(h, "ibv_query_device");
  rv.query_port = (int (*)(struct ibv_context*, uint8_t, struct ibv_port_attr*))dlsym(h, "ibv_query_port");
  rv.query_gid = (int (*)(struct ibv_context*, uint8_t, int, union ibv_gid*))dlsym(h, "ibv_query_gid");
  rv.create_cq = (struct ibv_cq* (*)(struct ibv_context*, int, void*, struct ibv_comp_channel*, int))dlsym(h, "ibv_create_cq");
  rv.destroy_cq = (int (*)(struct ibv_cq*))dlsym(h, "ibv_destroy_cq");
  rv.create_qp = (struct ibv_qp* (*)(struct ibv_pd*, struct ibv_qp_init_attr*))dlsym(h, "ibv_create_qp");
  rv.destroy_qp = (int (*)(struct ibv_qp*))dlsym(h, "ibv_destroy_qp");
  rv.modify_qp = (int (*)(struct ibv_qp*, struct ibv_qp_attr*, int))dlsym(h, "ibv_modify_qp");
  dlclose(h);                              /* still held by register.c */
  if (!rv.reg_mr || !rv.dereg_mr || !rv.query_device || !rv.query_port || !rv.query_gid || !rv.create_cq ||
      !rv.destroy_cq || !rv.create_qp || !rv.destroy_qp || !rv.modify_qp) return -ENOSYS;
  return 0;
}

/* The first call decides how keys are made (remote_lock held). */
static void choose(void) {
  pa_ensure_init();
  owner = getpid();
  pa_register_choose();
  rpd = (struct ibv_pd*)pa_register_pd();
  if (rpd == NULL) { mode = PA_RKEYS_NONE; why_mode = "the registrar is not verbs"; return; }
  if (resolve() != 0) { mode = PA_RKEYS_NONE; why_mode = "libibverbs entry points missing"; return; }
  const char* v = pa_getenv("PINARENA_REMOTE_KEYS");
  int want = PA_RKEYS_WINDOW;
  if (v != NULL && *v) {
    if (strcmp(v, "window") == 0) want = PA_RKEYS_WINDOW;
    else if (strcmp(v, "window2") == 0) want = PA_RKEYS_WINDOW2;
    else if (strcmp(v, "mr") == 0) want = PA_RKEYS_MR;
    else if (strcmp(v, "chunk") == 0) want = PA_RKEYS_CHUNK;
    else pa_warn("PINARENA_REMOTE_KEYS=window|window2|mr|chunk; using window", NULL);
  }
  mode = want;
  if (want == PA_RKEYS_WINDOW || want == PA_RKEYS_WINDOW2) {
    /* PINARENA_REMOTE_WINDOW_PROBE=0 skips the bounds probe: for measuring
       and for tests only — on a device that fails it a window key reaches
       its whole chunk. */
    const char* pv = pa_getenv("PINARENA_REMOTE_WINDOW_PROBE");
    int probe = !(pv != NULL && pv[0] == '0');
    int rc = pa_wpool_open(&wpool, &rv, rpd, want == PA_RKEYS_WINDOW ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2, probe, &why_mode);
    if (rc != 0) {
      mode = PA_RKEYS_MR;                 /* still exactly the buffer, at the price of a registration */
      pa_notice("memory windows unavailable (", why_mode, "); remote keys are per-buffer registrations", NULL);
    }
  }
}

/* The bookkeeping mapping of a chunk of ngran granules. */
static size_t meta_size(size_t ngran) {
  return sizeof(rchunk_t) + ngran / 8 + ngran * sizeof(uint32_t) + ngran * sizeof(rbuf_t) + 64;
}

static rchunk_t* chunk_new(size_t size) {
  size_t ngran = size >> RG_SHIFT;
  size_t meta = meta_size(ngran);
  char* m = pa_raw_map(meta);
  if (m == NULL) return NULL;
  pa_mapping_t os;
  int saved = errno;
  /* PINARENA_PAGES=hugetlb lists its backings; otherwise (auto, thp, 4k) the
     heap's chunks are lazy mappings, which a remote chunk is not: it is
     pinned as soon as a key covers it, so it maps as THP, else 4 KiB. */
  static const pa_backing_t remote_prefs[] = { PA_BACK_THP, PA_BACK_4K };
  const pa_backing_t* prefs = pa_opts.nprefs ? pa_opts.prefs : remote_prefs;
  size_t nprefs = pa_opts.nprefs ? pa_opts.nprefs : sizeof remote_prefs / sizeof remote_prefs[0];
  if (pa_os_map_chunk(size, prefs, nprefs, &os) != 0) {
    pa_raw_unmap(m, meta);
    errno = saved;
    return NULL;
  }
  errno = saved;
  rchunk_t* c = (rchunk_t*)m;
  c->base = os.addr; c->size = size; c->os = os;
  c->ngran = c->free_gran = (uint32_t)ngran;
  c->map = (uint64_t*)(m + sizeof(rchunk_t));
  c->head = (uint32_t*)((char*)c->map + ngran / 8);
  c->bufs = (rbuf_t*)(((uintptr_t)(c->head + ngran) + 63) & ~(uintptr_t)63);
  int access = 0;
  if (mode == PA_RKEYS_WINDOW || mode == PA_RKEYS_WINDOW2) access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
  else if (mode == PA_RKEYS_CHUNK) access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
  if (access != 0) c->mr = rv.reg_mr(rpd, c->base, size, access);
  if ((access != 0 && c->mr == NULL) || own(c->base, size, 1) != 0) {
    if (c->mr != NULL) rv.dereg_mr(c->mr);
    pa_os_unmap_chunk(&c->os);             /* not registered (any more) */
    pa_raw_unmap(m, meta);
    errno = ENOMEM;
    return NULL;
  }
  c->next = chunks;
  __atomic_store_n(&chunks, c, __ATOMIC_RELEASE);   /* lookup's unlocked "any at all?" test */
  return c;
}

static inline int gran_used(const rchunk_t* c, size_t g) { return (int)((c->map[g >> 6] >> (g & 63)) & 1); }

/* First fit of n free granules; -1 if none. */
static long find_run(const rchunk_t* c, size_t n) {
  if (c->free_gran < n) return -1;
  size_t g = 0;
  while (g + n <= c->ngran) {
    if (c->map[g >> 6] == ~0ULL && (g & 63) == 0) { g += 64; continue; }
    size_t j = 0;
    while (j < n && !gran_used(c, g + j)) j++;
    if (j == n) return (long)g;
    g += j + 1;
  }
  return -1;
}

static void mark(rchunk_t* c, size_t g, size_t n, int used) {
  for (size_t k = g; k < g + n; k++) {
    if (used) c->map[k >> 6] |= 1ULL << (k & 63); else c->map[k >> 6] &= ~(1ULL << (k & 63));
    c->head[k] = (uint32_t)g;
  }
  if (used) c->free_gran -= (uint32_t)n; else c->free_gran += (uint32_t)n;
}

static rchunk_t* chunk_of(const void* p) {
  for (rchunk_t* c = chunks; c != NULL; c = c->next)
    if ((const char*)p >= c->base && (const char*)p < c->base + c->size) return c;
  return NULL;
}

/* The key for a fresh buffer (remote_lock held). 0 or -errno. */
static int key_make(rchunk_t* c, rbuf_t* b, char* p, size_t size, int access) {
  b->size = size; b->mw = NULL; b->mr = NULL;
  switch (mode) {
    case PA_RKEYS_WINDOW: case PA_RKEYS_WINDOW2:
      b->lkey = c->mr->lkey;
      return pa_wpool_bind(wpool, c->mr, p, size, access, &b->mw, &b->rkey);
    case PA_RKEYS_MR:
      b->mr = rv.reg_mr(rpd, p, size, IBV_ACCESS_LOCAL_WRITE | access);
      if (b->mr == NULL) return -(errno ? errno : ENOMEM);
      b->lkey = b->mr->lkey; b->rkey = b->mr->rkey;
      return 0;
    case PA_RKEYS_CHUNK:
      b->lkey = c->mr->lkey; b->rkey = c->mr->rkey;
      return 0;
    default:
      b->lkey = b->rkey = 0;
      return 0;
  }
}

/* Revoke the key; 0 when no peer can reach the bytes with it any more. */
static int key_revoke(rchunk_t* c, rbuf_t* b) {
  if (b->mw != NULL) { int rc = pa_wpool_revoke(wpool, b->mw, c->mr, b->rkey); b->mw = NULL; return rc; }
  if (b->mr != NULL) { int rc = rv.dereg_mr(b->mr); b->mr = NULL; return rc == 0 ? 0 : -EIO; }
  return 0;
}

PA_EXPORT void* pinarena_alloc_remote(size_t size, int access) {
  if (size == 0 || (access & ~(PINARENA_REMOTE_READ | PINARENA_REMOTE_WRITE)) != 0 || access == 0) {
    errno = EINVAL;
    return NULL;
  }
  if (size > ((size_t)1 << 40)) { errno = ENOMEM; return NULL; }   /* more than a chunk can be: as malloc */
  int nc = pa_nc_lock(&remote_lock);
  if (mode < 0) choose();
  forget_if_forked();
  if (mode > PA_RKEYS_NONE && (struct ibv_pd*)pa_register_pd() != rpd) {
    pa_nc_unlock(&remote_lock, nc);
    errno = EXDEV;                          /* pinarena_set_pd after the first remote allocation */
    return NULL;
  }
  size_t n = (size + RG - 1) >> RG_SHIFT;
  /* Freed memory of every size serves again (its key was revoked, its bytes
     zeroed at free): the smallest chunk with room, so a big chunk stays
     whole for big buffers while small ones fit elsewhere. */
  rchunk_t* c = NULL;
  long g = -1;
  for (rchunk_t* f = chunks; f != NULL; f = f->next) {
    if (c != NULL && f->size >= c->size) continue;
    long at = find_run(f, n);
    if (at >= 0) { c = f; g = at; }
  }
  if (c == NULL) {
    size_t cs = RC_SIZE;
    while (cs < size) cs <<= 1;
    c = chunk_new(cs);
    if (c == NULL) { pa_nc_unlock(&remote_lock, nc); errno = ENOMEM; return NULL; }
    g = 0;
  }
  mark(c, (size_t)g, n, 1);
  char* p = c->base + ((size_t)g << RG_SHIFT);
  int rc = key_make(c, &c->bufs[g], p, size, access);
  if (rc != 0) {
    mark(c, (size_t)g, n, 0);
    pa_nc_unlock(&remote_lock, nc);
    errno = rc == -ENOMEM ? ENOMEM : EIO;   /* the header's two: no memory, or the device refused the key */
    return NULL;
  }
  pa_nc_unlock(&remote_lock, nc);
  return p;
}

PA_EXPORT int pinarena_free_remote(void* p) {
  if (p == NULL) return 0;
  int nc = pa_nc_lock(&remote_lock);
  forget_if_forked();
  rchunk_t* c = chunk_of(p);
  size_t g = c ? (size_t)((char*)p - c->base) >> RG_SHIFT : 0;
  if (c == NULL || ((uintptr_t)p & (RG - 1)) != 0 || !gran_used(c, g) || c->head[g] != g) {
    pa_nc_unlock(&remote_lock, nc);
    pa_fatal_ptr("pinarena_free_remote(): invalid pointer", p);
  }
  rbuf_t* b = &c->bufs[g];
  size_t n = (b->size + RG - 1) >> RG_SHIFT;
  int rc = key_revoke(c, b);
  if (rc != 0) {
    /* The device did not confirm the key is dead: these bytes are never
       handed out again (kept out of the bitmap), and the caller hears it. */
    b->size = 0;
    pa_nc_unlock(&remote_lock, nc);
    return rc;
  }
  /* what the program set on the buffer's pages goes (a page it shares with
     another buffer too: attributes are per page), then its bytes */
  uintptr_t pg = (uintptr_t)p & ~(PA_PAGE - 1);
  pa_prog_released((void*)pg, (uintptr_t)p + (n << RG_SHIFT) - pg);
  memset(p, 0, n << RG_SHIFT);              /* nothing of the old owner reaches the next one */
  b->size = 0;
  mark(c, g, n, 0);
  pa_nc_unlock(&remote_lock, nc);
  return 0;
}

/* Free remote chunks back to the OS, up to `want` bytes (remote_lock held):
 * with dereg, registered ones too, their registration first (every key of
 * their buffers was revoked at free; a buffer whose revocation failed keeps
 * its granules, so its chunk stays); without, only chunks no registration
 * covers (no verbs, or per-buffer MR keys, all deregistered at free). */
static size_t release_free(size_t want, int dereg) {
  size_t got = 0;
  forget_if_forked();
  for (rchunk_t** pp = &chunks; *pp != NULL && got < want;) {
    rchunk_t* c = *pp;
    if (c->free_gran != c->ngran || (c->mr != NULL && (!dereg || rv.dereg_mr(c->mr) != 0))) { pp = &c->next; continue; }
    c->mr = NULL;
    *pp = c->next;
    got += c->size;
    own(c->base, c->size, 0);                /* before the unmap: see "owned" */
    int saved = errno;
    pa_os_unmap_chunk(&c->os);               /* not registered (any more) */
    pa_raw_unmap((char*)c, meta_size(c->ngran));
    errno = saved;
  }
  return got;
}

/* pinarena_trim(): every wholly free remote chunk. Returns the bytes released. */
PA_HIDDEN size_t pa_remote_trim(void) {
  if (__atomic_load_n(&chunks, __ATOMIC_ACQUIRE) == NULL) return 0;
  pthread_mutex_lock(&remote_lock);
  size_t got = release_free(SIZE_MAX, 1);
  pthread_mutex_unlock(&remote_lock);
  return got;
}

/* Memory changing kind (reclaim.c): the unregistered ones only. The lock is
 * only tried: a heap allocation made under it (inside the verbs library)
 * skips this. */
PA_HIDDEN size_t pa_remote_reclaim(size_t want) {
  if (__atomic_load_n(&chunks, __ATOMIC_ACQUIRE) == NULL || pthread_mutex_trylock(&remote_lock) != 0) return 0;
  size_t got = release_free(want, 0);
  pthread_mutex_unlock(&remote_lock);
  return got;
}

/* fork (heap.c's handlers): the remote lock is held across fork, taken
 * first (a remote allocation takes the registrar's and the chunk locks
 * under it), so no other thread is inside a remote call when the child is
 * made; the child gets a fresh lock and, at its first remote call, forgets
 * the parent's keys (forget_if_forked). */
PA_HIDDEN void pa_remote_atfork_prepare(void) { pthread_mutex_lock(&remote_lock); }
PA_HIDDEN void pa_remote_atfork_parent(void) { pthread_mutex_unlock(&remote_lock); }
PA_HIDDEN void pa_remote_atfork_child(void) { pthread_mutex_init(&remote_lock, NULL); }

/* pinarena_lookup for an address outside the heap: a remote buffer's key.
 * -ENOENT when p is not in a live remote buffer. */
PA_HIDDEN int pa_remote_lookup(const void* p, size_t len, pinarena_region_t* out) {
  if (__atomic_load_n(&chunks, __ATOMIC_ACQUIRE) == NULL) return -ENOENT;   /* none yet: no lock */
  int nc = pa_nc_lock(&remote_lock);
  forget_if_forked();
  rchunk_t* c = chunk_of(p);
  size_t g = c ? (size_t)((const char*)p - c->base) >> RG_SHIFT : 0;
  if (c == NULL || !gran_used(c, g)) { pa_nc_unlock(&remote_lock, nc); return -ENOENT; }
  size_t first = c->head[g];
  const rbuf_t* b = &c->bufs[first];
  char* start = c->base + (first << RG_SHIFT);
  int rc = 0;
  if (b->size == 0) rc = -ENOENT;                          /* revocation failed: not a live buffer */
  else if (len > (size_t)(start + b->size - (const char*)p)) rc = -ERANGE;
  else {
    int whole = mode == PA_RKEYS_CHUNK;
    out->base = whole ? c->base : start;
    out->length = whole ? c->size : b->size;
    out->lkey = b->lkey;
    out->rkey = b->rkey;
    out->registered = mode != PA_RKEYS_NONE;
    out->backend = mode != PA_RKEYS_NONE ? PINARENA_BACKEND_VERBS : PINARENA_BACKEND_NONE;
    if (mode == PA_RKEYS_NONE) rc = -ENODATA;
  }
  pa_nc_unlock(&remote_lock, nc);
  return rc;
}

PA_EXPORT const char* pinarena_remote_keys(void) {
  switch (mode) {
    case PA_RKEYS_WINDOW:  return "window";
    case PA_RKEYS_WINDOW2: return "window2";
    case PA_RKEYS_MR:      return "mr";
    case PA_RKEYS_CHUNK:   return "chunk";
    case PA_RKEYS_NONE:    return "none";
    default:               return "pending";
  }
}

PA_EXPORT const char* pinarena_remote_keys_why(void) { return why_mode; }

/* At exit: every key dies and every verbs object made here is destroyed in
 * order — windows, then the registrations under them, then the QP — rather
 * than left to the kernel's clean-up of the process (rdma_rxe 6.1 was seen
 * to lock a CPU up cleaning up a process that exited with windows bound).
 * Remote buffers keep their bytes; they are simply unreachable from now on. */
__attribute__((destructor)) static void remote_teardown(void) {
  int nc = pa_nc_lock(&remote_lock);
  forget_if_forked();
  if (mode > PA_RKEYS_NONE) {
    for (rchunk_t* c = chunks; c != NULL; c = c->next) {
      for (size_t g = 0; g < c->ngran; g++) {
        rbuf_t* b = &c->bufs[g];
        if (!gran_used(c, g) || c->head[g] != g || b->size == 0) continue;
        if (b->mw != NULL) { pa_wpool_drop(wpool, b->mw); b->mw = NULL; }
        if (b->mr != NULL) { rv.dereg_mr(b->mr); b->mr = NULL; }
        b->rkey = 0;
      }
      if (c->mr != NULL) { rv.dereg_mr(c->mr); c->mr = NULL; }
    }
    if (wpool != NULL) { pa_wpool_close(wpool); wpool = NULL; }
    mode = PA_RKEYS_NONE;                   /* from here on: memory without keys */
    why_mode = "torn down at exit";
  }
  pa_nc_unlock(&remote_lock, nc);
}

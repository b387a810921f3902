/* register.c — registration of chunks with the chosen backend.
 *
 * When (PINARENA_REGISTER): lazy (the default) registers a chunk on the
 * first pinarena_lookup into it; eager registers a regular chunk when it is
 * mapped and a huge chunk when its object is handed out. Either way a chunk
 * stays registered until pinarena_trim() releases it. A program that never
 * looks a key up pins nothing (no RLIMIT_MEMLOCK budget taken, no registrar
 * opened, no pinned pages for fork to copy); one that does registers each
 * chunk once and then finds its keys without a lock. A regular chunk is
 * registered whole; a huge chunk over its object (page-rounded, widened to a
 * power of two so a growing object re-registers a few times, not at every
 * step), earlier records of it kept registered until the chunk goes. Registration runs under
 * pa_reg_lock, never under the chunk lock, because the verbs backend calls
 * into libibverbs, which allocates — through us. Such nested allocations
 * (and all chunks mapped before our constructor ran, when dlopen is not safe
 * yet) are queued as pending and registered by whoever holds the lock next.
 *
 * Publication for the lock-free lookup: the record is filled in first, then
 * its pointer is stored into chunk->reg with release order; the lookup loads
 * it with acquire, so it never sees a half-written record.
 */
#include "internal.h"
#include "../nocancel.h"
#include "../reg_mlock.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <infiniband/verbs.h>   /* types only: libibverbs is dlopen'ed */

PA_HIDDEN pthread_mutex_t pa_reg_lock = PTHREAD_MUTEX_INITIALIZER;

static int kind = -1;                  /* PA_REG_* once chosen, -1 before */
static int ready;                      /* constructors ran */
static __thread int in_reg __attribute__((tls_model("initial-exec")));
static pa_chunk_t* pending;
static uint64_t pinned;
static int warned_unreg;
static const char* why_fallback = "";

static pa_uring_t ring;
static int ring_ok;
/* The ring's descriptor is the program's to close: daemons close every
 * descriptor >= 3, and a number we held may come back as the program's
 * file. Its identity (device, inode: one inode per ring) is checked before
 * every use; when it is gone, ring_lose() withdraws every io_uring record
 * (lookups stop reporting those keys) and then ends the ring by unmapping
 * it (the kernel unpins), and the registrar reports "io_uring(lost)". */
static struct { dev_t dev; ino_t ino; } ring_id;
static int ring_lost;
static void record_lost(pa_chunk_t* c, size_t len);

/* verbs, resolved with dlsym */
static void* ibv_lib;
static struct ibv_device** (*p_get_device_list)(int*);
static void (*p_free_device_list)(struct ibv_device**);
static const char* (*p_get_device_name)(struct ibv_device*);
static struct ibv_context* (*p_open_device)(struct ibv_device*);
static struct ibv_pd* (*p_alloc_pd)(struct ibv_context*);
static struct ibv_mr* (*p_reg_mr)(struct ibv_pd*, void*, size_t, int);
static int (*p_dereg_mr)(struct ibv_mr*);
static struct ibv_pd* pd;              /* the PD we register with (ours or adopted) */
static int pd_adopted;

PA_HIDDEN pa_release_fn pa_release_cb;
PA_HIDDEN void* pa_release_arg;

/* Heap chunks are registered for local access only: a peer holding any key
 * of the heap reaches nothing. Remote access is for remote-scope buffers
 * (remote.c). PINARENA_HEAP_REMOTE=1 restores the whole heap's remote access
 * for programs that hand peers keys of ordinary malloc memory — and with
 * them every object and every allocator structure of the chunk: a peer can
 * read any secret there and corrupt the heap. Off by default. */
#define VERBS_ACCESS_LOCAL  IBV_ACCESS_LOCAL_WRITE
#define VERBS_ACCESS_REMOTE (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
static int heap_remote = -1;           /* read once, before the first registration */

PA_HIDDEN int pa_register_heap_remote(void) {
  if (heap_remote < 0) {
    const char* v = pa_getenv("PINARENA_HEAP_REMOTE");
    heap_remote = v != NULL && v[0] == '1' && v[1] == 0;
  }
  return heap_remote;
}

/* ---------------------------------------------------------------------------
   Backend selection
--------------------------------------------------------------------------- */

/* Any entry under /sys/class/infiniband? getdents64 on a stack buffer: no malloc. */
static int rdma_device_present(void) {
  int fd = pa_nc_open("/sys/class/infiniband", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  int found = 0;
  long n;
  while (!found && (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
    for (long off = 0; off < n;) {
      unsigned short reclen = *(unsigned short*)(buf + off + 16);
      const char* name = buf + off + 19;
      if (name[0] != '.') { found = 1; break; }
      off += reclen;
    }
  }
  pa_nc_close(fd);
  return found;
}

/* 1 once libibverbs is seen in the process before the registrar opened it: the program (or its MPI) has
   it, and may register malloc'd memory itself (reclaim.c). */
static int verbs_of_program = -1;

PA_HIDDEN int pa_verbs_loaded_by_program(void) {
  return ibv_lib == NULL ? 1 : verbs_of_program == 1;
}

static int verbs_load(void) {
  if (ibv_lib != NULL) return 0;
  void* had = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
  verbs_of_program = had != NULL;
  if (had != NULL) dlclose(had);
  void* h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) { why_fallback = "libibverbs.so.1 not loadable"; return -ENOENT; }
  p_get_device_list = (struct ibv_device** (*)(int*))dlsym(h, "ibv_get_device_list");
  p_free_device_list = (void (*)(struct ibv_device**))dlsym(h, "ibv_free_device_list");
  p_get_device_name = (const char* (*)(struct ibv_device*))dlsym(h, "ibv_get_device_name");
  p_open_device = (struct ibv_context* (*)(struct ibv_device*))dlsym(h, "ibv_open_device");
  p_alloc_pd = (struct ibv_pd* (*)(struct ibv_context*))dlsym(h, "ibv_alloc_pd");
  p_reg_mr = (struct ibv_mr* (*)(struct ibv_pd*, void*, size_t, int))dlsym(h, "ibv_reg_mr");
  p_dereg_mr = (int (*)(struct ibv_mr*))dlsym(h, "ibv_dereg_mr");
  if (!p_get_device_list || !p_free_device_list || !p_get_device_name || !p_open_device ||
      !p_alloc_pd || !p_reg_mr || !p_dereg_mr) { why_fallback = "libibverbs lacks a symbol"; return -ENOSYS; }
  ibv_lib = h;
  return 0;
}

static int verbs_init(void) {
  int rc = verbs_load();
  if (rc != 0) return rc;
  if (pd != NULL) return 0;                          /* adopted before first use */
  int n = 0;
  struct ibv_device** list = p_get_device_list(&n);
  if (list == NULL || n == 0) { if (list) p_free_device_list(list); why_fallback = "no RDMA device"; return -ENODEV; }
  struct ibv_device* dev = NULL;
  for (int i = 0; i < n; i++) {
    if (pa_opts.ib_device[0] == 0 || strcmp(p_get_device_name(list[i]), pa_opts.ib_device) == 0) { dev = list[i]; break; }
  }
  struct ibv_context* ctx = dev ? p_open_device(dev) : NULL;
  p_free_device_list(list);
  if (dev == NULL) { why_fallback = "PINARENA_IB_DEVICE not found"; return -ENODEV; }
  if (ctx == NULL) { why_fallback = "ibv_open_device failed"; return -ENODEV; }
  pd = p_alloc_pd(ctx);
  if (pd == NULL) { why_fallback = "ibv_alloc_pd failed"; return -ENOMEM; }
  return 0;
}

static int uring_init(void) {
  if (ring_ok) return 0;
  int rc = pa_uring_init(&ring, 4);
  if (rc != 0) { why_fallback = "io_uring unavailable"; return rc; }
  /* Out of the way of programs that expect low descriptor numbers: 512 and
     up, or the top quarter below a lower RLIMIT_NOFILE; close-on-exec. */
  struct rlimit nf;
  int from = 512;
  if (getrlimit(RLIMIT_NOFILE, &nf) == 0 && nf.rlim_cur != RLIM_INFINITY && nf.rlim_cur < 1024) from = (int)(nf.rlim_cur * 3 / 4);
  int hi = fcntl(ring.fd, F_DUPFD_CLOEXEC, from);
  if (hi >= 0) { close(ring.fd); ring.fd = hi; }
  else fcntl(ring.fd, F_SETFD, FD_CLOEXEC);
  struct stat st;
  if (fstat(ring.fd, &st) != 0) { pa_uring_exit(&ring); why_fallback = "io_uring ring descriptor unusable"; return -EBADF; }
  ring_id.dev = st.st_dev; ring_id.ino = st.st_ino;
  ring_ok = 1;
  return 0;
}

static int ring_alive(void) {
  struct stat st;
  return fstat(ring.fd, &st) == 0 && st.st_dev == ring_id.dev && st.st_ino == ring_id.ino;
}

static void withdraw_uring_records(pa_chunk_t* head) {
  for (pa_chunk_t* c = head; c != NULL; c = c->next) {
    pa_regrec_t* r = atomic_load(&c->reg);
    if (r == NULL || r->backend != PA_REG_URING) continue;
    record_lost(c, r->len);
    pinned -= r->len;
    atomic_fetch_sub(&pa_gstats.reg_chunks, 1);
    atomic_fetch_sub(&pa_gstats.reg_bytes, r->len);
  }
}

/* pa_reg_lock held. The descriptor no longer names our ring: records first
 * (no lookup reports a key from here on), then the ring ends with its last
 * mapping. The number is the program's now: never closed here. */
static void ring_check(void) {
  if (!ring_ok || ring_alive()) return;
  pthread_mutex_lock(&pa_chunk_lock);
  pa_chunk_t* reg = pa_chunks;
  pa_chunk_t* huge = pa_huge_all;
  pthread_mutex_unlock(&pa_chunk_lock);
  withdraw_uring_records(reg);       /* lists only grow at the head; trim needs pa_reg_lock to unmap */
  withdraw_uring_records(huge);
  if (ring.sqes != NULL) munmap(ring.sqes, ring.sqes_len);
  if (ring.cq_map != NULL && ring.cq_map != ring.sq_map) munmap(ring.cq_map, ring.cq_map_len);
  if (ring.sq_map != NULL) munmap(ring.sq_map, ring.sq_map_len);
  ring.sqes = NULL; ring.cq_map = ring.sq_map = NULL;
  ring_ok = 0;
  ring_lost = 1;
  pa_notice("the io_uring ring's descriptor was closed or replaced by the program: its registrations are "
            "withdrawn, later chunks are served unregistered", NULL);
}

/* Before the stats are read: a lost ring shows there (pa_registrar_name). */
PA_HIDDEN void pa_register_check(void) {
  if (kind != PA_REG_URING) return;
  int nc = pa_nc_lock(&pa_reg_lock);
  ring_check();
  pa_nc_unlock(&pa_reg_lock, nc);
}

static void choose(void) {
  int sel = pa_opts.registrar;
  if (sel == PA_REGSEL_NONE) kind = PA_REG_NONE;
  else if (sel == PA_REGSEL_MLOCK) kind = PA_REG_MLOCK;
  else if (sel == PA_REGSEL_VERBS) kind = verbs_init() == 0 ? PA_REG_VERBS : PA_REG_NONE;
  else if (sel == PA_REGSEL_URING) kind = uring_init() == 0 ? PA_REG_URING : PA_REG_NONE;
  else {
    if (pd == NULL && !rdma_device_present()) why_fallback = "no RDMA device in /sys/class/infiniband";
    if ((pd != NULL || rdma_device_present()) && verbs_init() == 0) kind = PA_REG_VERBS;
    else if (uring_init() == 0) kind = PA_REG_URING;
    else kind = PA_REG_MLOCK;
  }
  pa_notice("registrar ", pa_registrar_name(), *why_fallback ? " (" : "", why_fallback, *why_fallback ? ")" : "", NULL);
}

PA_HIDDEN const char* pa_registrar_name(void) {
  switch (kind) {
    case PA_REG_VERBS: return "verbs";
    case PA_REG_URING: return ring_lost ? "io_uring(lost)" : "io_uring";
    case PA_REG_MLOCK: return "mlock";
    case PA_REG_NONE:  return "none";
    default:           return "pending";
  }
}

/* ---------------------------------------------------------------------------
   One chunk (pa_reg_lock held)
--------------------------------------------------------------------------- */

PA_HIDDEN size_t pa_register_len(const pa_chunk_t* c) {
  size_t cap = (size_t)1 << c->shift;
  if (c->kind != PA_CHUNK_HUGE) return cap;
  size_t ext = c->huge_obj != NULL ? pa_huge_extent(c) : c->huge_dirty;
  size_t len = PA_CHUNK_MIN;
  while (len < ext) len <<= 1;
  return len < cap ? len : cap;
}

/* Refusals that may pass. A pin fails with EFAULT over a page the program
 * made read-only (verbs and io_uring pin for writing, and the shim does not
 * lift the program's protection: another thread's write would then succeed
 * where the program expects a fault), with ENOMEM or EAGAIN past
 * RLIMIT_MEMLOCK; PINARENA_MAX_PINNED refuses past its cap. Such a chunk is
 * not refused for good: a later lookup tries it again once something
 * happened that may lift the cause (pa_reg_retry_epoch moved: the program
 * made shim memory writable, memory went back to the shim and had the
 * program's attributes reset, or pinned memory was released): one try per
 * such change, so a lookup of a chunk still refused costs no pin, and a
 * program that flips protections between its lookups pays at most one
 * failed pin per refused chunk per flip. Other refusals (registrar none, a
 * ring or device gone) stay. */
PA_HIDDEN _Atomic uint32_t pa_reg_retry_epoch = 1;

static int may_pass(int err) { return err == EFAULT || err == ENOMEM || err == EAGAIN; }

/* Whether c's refusal (err: the backend's errno, 0 if none) may pass, and
 * the epoch it happened at. */
static void refusal_cause(pa_chunk_t* c, int err, uint32_t epoch) {
  atomic_store_explicit(&c->retry_epoch, epoch, memory_order_relaxed);
  atomic_store_explicit(&c->retry, (uint8_t)may_pass(err), memory_order_relaxed);
}

/* c refused over len bytes for `why` (err: the backend's errno, 0 if none);
 * epoch: pa_reg_retry_epoch as read before the attempt, so a change made
 * during it still counts as news. */
static void mark_unregistered(pa_chunk_t* c, size_t len, const char* why, int err, uint32_t epoch) {
  if (!c->unregistered) {
    c->unregistered = 1;
    c->refused_len = len;
    atomic_fetch_add(&pa_gstats.unreg_chunks, 1);
    atomic_fetch_add(&pa_gstats.unreg_bytes, len);
  }
  refusal_cause(c, err, epoch);
  if (kind != PA_REG_NONE && !warned_unreg) {
    warned_unreg = 1;
    /* the one notice says what the first refusal means: one that may pass
       is tried again (see "refusals that may pass"), the others stay */
    pa_notice("could not register a chunk (", why, may_pass(err)
              ? "); serving it unregistered for now — tried again at a lookup once pages are made writable or pinned "
                "memory is released"
              : "); serving unregistered memory from here on", " — it stays mapped, never returned to the OS", NULL);
  }
}

/* A refused chunk registered after all. It stays `refused`: pages a stack
 * may have registered itself while the shim had no key for them never go
 * back to the OS but through trim. */
static void registered_after_refusal(pa_chunk_t* c) {
  c->unregistered = 0;
  c->refused = 1;
  atomic_store_explicit(&c->retry, 0, memory_order_relaxed);
  atomic_fetch_sub(&pa_gstats.unreg_chunks, 1);
  atomic_fetch_sub(&pa_gstats.unreg_bytes, c->refused_len);
}

/* c's live record r is gone (its ring was lost, or its pin failed after
 * fork): counted as unregistered from here on. */
static void record_lost(pa_chunk_t* c, size_t len) {
  atomic_store_explicit(&c->reg, NULL, memory_order_release);   /* no key for what is not pinned */
  c->unregistered = 1;
  c->refused_len = len;
  atomic_fetch_add(&pa_gstats.unreg_chunks, 1);
  atomic_fetch_add(&pa_gstats.unreg_bytes, len);
}

/* 0, or -errno with *why set (-ENODEV: no registrar to ask). */
static int backend_register(int k, pa_chunk_t* c, size_t len, pa_regrec_t* r, const char** why) {
  memset(r, 0, sizeof(*r));
  r->base = (uintptr_t)c;
  r->len = len;
  r->backend = k;
  /* the pin populates what nobody touched yet: with huge pages, where the
     system's policy allows them (not for hugetlb chunks: they have them) */
  if (pa_opts.pages == PA_PAGES_AUTO && c->os.backing != PA_BACK_HUGETLB_2M && c->os.backing != PA_BACK_HUGETLB_1G)
    pa_os_prefer_huge(c, len);
  if (k == PA_REG_VERBS) {
    struct ibv_mr* mr = p_reg_mr(pd, c, len, pa_register_heap_remote() ? VERBS_ACCESS_REMOTE : VERBS_ACCESS_LOCAL);
    if (mr == NULL) { int err = errno; *why = "ibv_reg_mr failed"; return err > 0 ? -err : -EIO; }
    r->mr = mr; r->lkey = mr->lkey; r->rkey = mr->rkey;
    return 0;
  }
  if (k == PA_REG_URING) {
    ring_check();
    if (!ring_ok) { *why = "io_uring ring descriptor closed by the program"; return -EBADF; }
    int rc = pa_uring_register(&ring, c, len, &r->ureg);
    if (rc != 0) {
      *why = rc == -ENOMEM ? "io_uring: RLIMIT_MEMLOCK" : rc == -EFAULT ? "io_uring: a page is not writable"
           : "io_uring_register failed";
      return rc;
    }
    r->lkey = r->rkey = r->ureg.first;           /* fixed-buffer index */
    return 0;
  }
  if (k == PA_REG_MLOCK) {
    int rc = pa_mlock_register(c, len);
    if (rc != 0) { *why = "mlock: RLIMIT_MEMLOCK"; return rc; }
    return 0;
  }
  *why = "registrar none";
  return -ENODEV;
}

static void backend_release(pa_regrec_t* r) {
  if (r->backend == PA_REG_VERBS) p_dereg_mr((struct ibv_mr*)r->mr);
  else if (r->backend == PA_REG_URING && ring_ok) { ring_check(); if (ring_ok) pa_uring_unregister(&ring, &r->ureg); }
  else if (r->backend == PA_REG_MLOCK) pa_mlock_unregister((void*)r->base, r->len);
}

static void account(pa_regrec_t* r, int sign) {
  if (sign > 0) { pinned += r->len; atomic_fetch_add(&pa_gstats.reg_chunks, 1); atomic_fetch_add(&pa_gstats.reg_bytes, r->len); }
  else {
    pinned -= r->len;
    atomic_fetch_sub(&pa_gstats.reg_chunks, 1);
    atomic_fetch_sub(&pa_gstats.reg_bytes, r->len);
    pa_register_retry_later();         /* room under the budget: chunks refused for it may fit now */
  }
}

/* A free record slot of c: the next unused one, else (every slot made) the
 * oldest retired record is released to make room. */
static pa_regrec_t* record_slot(pa_chunk_t* c) {
  if (c->nrecs < PA_CHUNK_RECS) return &c->recs[c->nrecs++];
  pa_regrec_t* live = atomic_load_explicit(&c->reg, memory_order_relaxed);
  for (size_t i = 0; i < PA_CHUNK_RECS; i++) {
    pa_regrec_t* r = &c->recs[i];
    if (r == live || r->len == 0) { if (r != live) return r; continue; }
    backend_release(r);
    account(r, -1);
    r->len = 0;
    return r;
  }
  return NULL;
}

/* Register c over `len` bytes from its start (pa_reg_lock held, in_reg set).
 * A record already covering len is kept; a narrower one stays registered
 * (its keys were handed out) and the wider one is published over it. */
static int reg_one(pa_chunk_t* c, size_t len) {
  int saved = errno;
  if (kind < 0) choose();                     /* may allocate: nested chunks go pending */
  pa_regrec_t* old = atomic_load_explicit(&c->reg, memory_order_relaxed);
  if (old != NULL && old->len >= len) { errno = saved; return 0; }
  if (c->unregistered && !pa_register_retry_may_help(c)) { errno = saved; return -ENODATA; }
  uint32_t epoch = atomic_load_explicit(&pa_reg_retry_epoch, memory_order_acquire);
  const char* why = "";
  if (kind == PA_REG_NONE) { mark_unregistered(c, len, "registrar none", 0, epoch); errno = saved; return -ENODATA; }
  if (pa_opts.max_pinned != 0 && pinned + len > pa_opts.max_pinned) {
    mark_unregistered(c, len, "PINARENA_MAX_PINNED reached", ENOMEM, epoch);
    errno = saved;
    return -ENODATA;
  }
  pa_regrec_t* r = record_slot(c);
  int rc = r == NULL ? -ENOSPC : backend_register(kind, c, len, r, &why);
  if (rc != 0) {
    if (r != NULL) r->len = 0;
    if (old == NULL) mark_unregistered(c, len, r == NULL ? "no record slot" : why, -rc, epoch);
    errno = saved;
    return old == NULL ? -ENODATA : -ENOMEM;
  }
  if (c->unregistered) registered_after_refusal(c);
  account(r, 1);
  atomic_store_explicit(&c->reg, r, memory_order_release);   /* publish: record complete */
  errno = saved;
  return 0;
}

static void drain_pending(void) {
  while (pending != NULL) {
    pa_chunk_t* c = pending;
    pending = c->next_pending;
    c->next_pending = NULL;
    c->pending = 0;
    reg_one(c, pa_register_len(c));
  }
}

static void push_pending(pa_chunk_t* c) {
  if (c->pending) return;
  c->pending = 1; c->next_pending = pending; pending = c;
}

PA_HIDDEN void pa_register_chunk(pa_chunk_t* c) {
  pa_register_cover(c, pa_register_len(c));
}

PA_HIDDEN int pa_register_cover(pa_chunk_t* c, size_t len) {
  if (in_reg) { push_pending(c); return -EAGAIN; }   /* nested, from inside the registrar: lock held */
  int nc = pa_nc_lock(&pa_reg_lock);
  int rc = -EAGAIN;
  if (!ready) push_pending(c);                       /* before constructors: registered at start-up */
  else {
    in_reg = 1;
    drain_pending();
    size_t want = pa_register_len(c);
    rc = reg_one(c, want > len ? want : len);
    drain_pending();
    in_reg = 0;
  }
  pa_nc_unlock(&pa_reg_lock, nc);
  return rc;
}

PA_HIDDEN void pa_register_ready(void) {
  int nc = pa_nc_lock(&pa_reg_lock);
  ready = 1;
  in_reg = 1;
  if (kind < 0 && pending != NULL) choose();
  drain_pending();
  in_reg = 0;
  pa_nc_unlock(&pa_reg_lock, nc);
}

PA_HIDDEN void pa_register_release(pa_chunk_t* c) {
  int nc = pa_nc_lock(&pa_reg_lock);
  pa_regrec_t* live = atomic_exchange(&c->reg, NULL);
  in_reg = 1;
  for (size_t i = 0; i < c->nrecs; i++) {
    pa_regrec_t* r = &c->recs[i];
    if (r->len == 0) continue;
    backend_release(r);
    account(r, -1);
    r->len = 0;
  }
  in_reg = 0;
  if (live == NULL && c->unregistered) {
    atomic_fetch_sub(&pa_gstats.unreg_chunks, 1);
    atomic_fetch_sub(&pa_gstats.unreg_bytes, c->refused_len);
  }
  c->nrecs = 0;
  pa_nc_unlock(&pa_reg_lock, nc);
}

PA_HIDDEN void pa_register_notify_release(pa_chunk_t* c) {
  pa_release_fn cb = pa_release_cb;
  if (cb != NULL) cb(c, (size_t)1 << c->shift, pa_release_arg);
}

/* ---------------------------------------------------------------------------
   The application's protection domain
--------------------------------------------------------------------------- */

/* Every record of every registered chunk again under the new PD; the old
 * registrations go (keys from earlier lookups become invalid, as the header
 * says). The live record is the widest: only it is made again. */
static void reregister_list(pa_chunk_t* head) {
  for (pa_chunk_t* c = head; c != NULL; c = c->next) {
    pa_regrec_t* old = atomic_load(&c->reg);
    if (old == NULL) continue;
    pa_regrec_t fresh;
    const char* why = "";
    if (backend_register(PA_REG_VERBS, c, old->len, &fresh, &why) != 0) continue;   /* keep the old ones */
    for (size_t i = 0; i < c->nrecs; i++) {
      pa_regrec_t* r = &c->recs[i];
      if (r == old || r->len == 0) continue;
      backend_release(r);
      account(r, -1);
      r->len = 0;
    }
    /* the new record goes into a slot that is not the live one, then is published */
    pa_regrec_t* slot = NULL;
    for (size_t i = 0; i < PA_CHUNK_RECS && slot == NULL; i++)
      if (&c->recs[i] != old && (i >= c->nrecs || c->recs[i].len == 0)) slot = &c->recs[i];
    if (slot == NULL) { backend_release(&fresh); continue; }
    if ((size_t)(slot - c->recs) >= c->nrecs) c->nrecs = (uint32_t)(slot - c->recs) + 1;
    *slot = fresh;
    account(slot, 1);
    atomic_store_explicit(&c->reg, slot, memory_order_release);
    backend_release(old);
    account(old, -1);
    old->len = 0;
  }
}

PA_HIDDEN int pa_register_set_pd(void* newpd) {
  if (newpd == NULL) return -EINVAL;
  int sel = pa_opts.registrar;
  if (sel != PA_REGSEL_AUTO && sel != PA_REGSEL_VERBS) return -EPERM;
  int nc = pa_nc_lock(&pa_reg_lock);
  in_reg = 1;
  int rc = verbs_load();
  if (rc == 0) {
    pd = (struct ibv_pd*)newpd;
    pd_adopted = 1;
    if (kind >= 0) {
      /* Already registering: move every registered chunk to the new PD. */
      pthread_mutex_lock(&pa_chunk_lock);
      pa_chunk_t* reg = pa_chunks;
      pa_chunk_t* huge = pa_huge_all;
      pthread_mutex_unlock(&pa_chunk_lock);
      kind = PA_REG_VERBS;
      reregister_list(reg);          /* lists only grow at the head: safe to walk unlocked */
      reregister_list(huge);
    }
  }
  in_reg = 0;
  pa_nc_unlock(&pa_reg_lock, nc);
  return rc;
}

/* Pick the registrar now if no chunk has made it pick yet (a forked child,
 * or before the first chunk): remote.c needs to know whether there is a PD. */
PA_HIDDEN void pa_register_choose(void) {
  int nc = pa_nc_lock(&pa_reg_lock);
  if (kind < 0 && ready) { in_reg = 1; choose(); in_reg = 0; }
  pa_nc_unlock(&pa_reg_lock, nc);
}

PA_HIDDEN void* pa_register_pd(void) {
  if (kind < 0 && !in_reg) {
    /* lazy registration has not chosen yet: a program asking for the PD
       is about to communicate, so choose now (as its first lookup would) */
    int nc = pa_nc_lock(&pa_reg_lock);
    if (kind < 0 && ready) { in_reg = 1; choose(); in_reg = 0; }
    pa_nc_unlock(&pa_reg_lock, nc);
  }
  return kind == PA_REG_VERBS ? (void*)pd : NULL;
}

/* ---------------------------------------------------------------------------
   fork: the child's copies of our chunks are not pinned by anything
--------------------------------------------------------------------------- */

/* fork from a program whose other threads go on writing. The kernel copies
 * pinned pages into the child one by one during fork while those threads
 * write them, so the child would see each page as of a different moment (a
 * block taken from a free list on one page, the list head on another still
 * pointing at it). Pages that are not pinned are shared copy-on-write and
 * the child sees them as of one moment, as under glibc. So the io_uring
 * registrations are suspended around fork (pa_reg_lock and pa_chunk_lock
 * held by the fork handler) and resumed in the parent into the same slots:
 * the keys do not change. The cost is one unpin and one pin of every
 * registered chunk per fork (README). Verbs memory regions cannot be
 * suspended without new keys: see FORK.md. */
static int suspended;

/* Every io_uring record made (the live one and the narrower ones a huge
 * object's widening kept registered). */
static void for_each_uring_record(void (*fn)(pa_chunk_t*, pa_regrec_t*)) {
  pa_chunk_t* lists[2] = { pa_chunks, pa_huge_all };
  for (int l = 0; l < 2; l++)
    for (pa_chunk_t* c = lists[l]; c != NULL; c = c->next)
      for (uint32_t i = 0; i < c->nrecs; i++) {
        pa_regrec_t* r = &c->recs[i];
        if (r->len != 0 && r->backend == PA_REG_URING) fn(c, r);
      }
}

static void suspend_one(pa_chunk_t* c, pa_regrec_t* r) { (void)c; pa_uring_suspend(&ring, &r->ureg); }

/* A pin that fails again after fork (EFAULT: a page the program made
 * read-only since the chunk was registered) leaves the chunk unregistered
 * until the refusal may pass (above): a later lookup registers it again,
 * under new keys. */
static void resume_one(pa_chunk_t* c, pa_regrec_t* r) {
  int rc = pa_uring_resume(&ring, &r->ureg);
  if (rc == 0) return;
  int live = atomic_load(&c->reg) == r;
  size_t len = r->len;
  account(r, -1);
  r->len = 0;
  if (live) {
    record_lost(c, len);
    refusal_cause(c, -rc, atomic_load(&pa_reg_retry_epoch));
  }
}

PA_HIDDEN void pa_register_atfork_prepare(void) {
  if (kind != PA_REG_URING || !ring_ok) return;
  ring_check();
  if (!ring_ok) return;
  for_each_uring_record(suspend_one);
  suspended = 1;
}

PA_HIDDEN void pa_register_atfork_parent(void) {
  if (!suspended) return;
  suspended = 0;
  if (ring_ok) for_each_uring_record(resume_one);
}

PA_HIDDEN void pa_register_atfork_child(void) {
  suspended = 0;
  /* Registrations (ring, verbs context) belong to the parent. The child
     starts over: inherited chunks report unregistered, new chunks register
     with a registrar of the child's own. */
  if (ring_ok) { close(ring.fd); ring_ok = 0; }
  pd = NULL; pd_adopted = 0;
  kind = -1;
  pinned = 0;
  in_reg = 0;
  pending = NULL;
  pa_chunk_t* lists[2] = { pa_chunks, pa_huge_all };
  for (int l = 0; l < 2; l++) {
    for (pa_chunk_t* c = lists[l]; c != NULL; c = c->next) {
      if (atomic_load(&c->reg) != NULL) record_lost(c, pa_register_len(c));
      atomic_store_explicit(&c->retry, 0, memory_order_relaxed);   /* inherited: never registered here */
      c->nrecs = 0;
      c->pending = 0; c->next_pending = NULL;
    }
  }
  atomic_store(&pa_gstats.reg_chunks, 0);
  atomic_store(&pa_gstats.reg_bytes, 0);
}

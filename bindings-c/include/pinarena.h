/* pinarena.h — what a program (typically an MPI library) can ask the
 * pinarena malloc shim (libpinarena.so, usually LD_PRELOADed).
 *
 * Every heap allocation is served from chunks that are registered once and
 * never returned to the OS while registered, so "free + malloc at the same
 * address" always means the same physical frames: an address-keyed
 * registration cache cannot go stale. With this header the cache can be
 * skipped entirely: ask for the keys.
 *
 * Calling from code that does not link libpinarena: resolve the functions
 * with dlsym(RTLD_DEFAULT, "pinarena_lookup") and treat NULL as "not loaded".
 *
 * Cancellation: no function here is a cancellation point, and neither is
 * any of the malloc family or the mmap family the shim interposes (as with
 * glibc). A thread with a pending deferred cancel comes back from every
 * call; the cancel acts at its next cancellation point.
 *
 * What the program may do to malloc'd memory and to remote buffers
 * (pinarena_alloc_remote), through the library calls, which the shim
 * interposes:
 *   madvise  MADV_DONTNEED / MADV_DONTNEED_LOCKED: the range reads as zeroes
 *            afterwards (as on glibc's memory) and keeps its frames, so keys
 *            and registrations stay valid; MADV_FREE keeps the bytes;
 *            over pages the program locked (mlock, mlock2) DONTNEED and
 *            FREE fail with EINVAL, the pages before them done, as the
 *            kernel's do (DONTNEED_LOCKED zeroes them);
 *            MADV_REMOVE fails with EINVAL (as on any private anonymous
 *            memory); MADV_GUARD_INSTALL fails with EINVAL; other advice
 *            goes to the kernel.
 *   munmap, mremap, mmap(MAP_FIXED) over it: abort with a message naming
 *            the call, the memory's kind and the address ("pinarena:
 *            munmap(): would unmap memory of malloc at 0x…", "... of
 *            pinarena_alloc_remote at 0x…"; glibc's malloc has no defined
 *            outcome there either).
 *   mprotect, pkey_mprotect, mlock, mlock2, MADV_DONTFORK, MADV_WIPEONFORK,
 *            MADV_DONTDUMP: allowed; the attributes are reset when the
 *            memory goes back to the shim (a large or huge object's free, a
 *            small span's release, pinarena_free_remote: every page the
 *            buffer touches, a page shared with another remote buffer too),
 *            so the next owner gets default pages. A huge object realloc
 *            moves keeps them (and its lock) at its new address, reset at
 *            its free. munlock never undoes the mlock registrar's own lock.
 * What a raw system call (syscall(2), or a binding that resolves these in
 * libc's own handle) can still do: the kernel acts unseen. SYS_madvise
 * DONTNEED/FREE or SYS_munmap/SYS_mremap/SYS_mmap MAP_FIXED give the address
 * new frames (the stale-registration hazard: a key keeps the old ones) and
 * may break the allocator's own metadata; attributes set by SYS_mprotect or
 * SYS_mlock outlive free (and SYS_mlock's lock is not seen by madvise:
 * DONTNEED then zeroes where the kernel would refuse); mlockall/munlockall
 * (not interposed) act on the whole heap, munlockall included the mlock
 * registrar's lock. The same holds for remote buffers.
 */
#ifndef PINARENA_H
#define PINARENA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PINARENA_API_VERSION 2

enum pinarena_backend {
  PINARENA_BACKEND_NONE = 0,   /* not registered */
  PINARENA_BACKEND_VERBS,      /* ibv_reg_mr: lkey/rkey are the MR keys */
  PINARENA_BACKEND_IO_URING,   /* io_uring fixed buffers: lkey == rkey == first buffer index (one per GiB) */
  PINARENA_BACKEND_MLOCK       /* resident only: no keys */
};

/* The rkey of memory no peer may reach: ordinary heap memory (registered
 * for local access only) reports rkey == PINARENA_RKEY_NONE. Never send it
 * to a peer; with verbs, an access with it fails (remote access error). */
#define PINARENA_RKEY_NONE 0u

typedef struct pinarena_region {
  void*    base;               /* the registered range: a whole chunk, or a huge object's chunk up to the
                                  object's end (page-rounded, widened to a power of two); for a remote
                                  buffer exactly the buffer */
  size_t   length;
  uint32_t lkey;
  uint32_t rkey;               /* PINARENA_RKEY_NONE for heap memory (see "Remote access" below) */
  int      registered;         /* 1: keys valid; 0: memory is pinarena's and stays mapped, but is not registered */
  int      backend;            /* enum pinarena_backend */
} pinarena_region_t;

/* The registration covering [p, p + len) for a pointer the shim handed out.
 * With PINARENA_REGISTER=lazy (the default) the first lookup into a chunk
 * registers it (takes a lock, may allocate: not from a signal handler);
 * every later lookup into it is O(1), lock-free, callable from any thread
 * and from signal handlers (with PINARENA_REGISTER=eager, every lookup).
 * A chunk once looked up keeps its frames, freed or not, until
 * pinarena_trim(); freed memory nobody looked up may give its pages back
 * (MADV_DONTNEED, posted to the invalidation sinks) when another kind of
 * memory needs pages — the huge objects of one phase becoming the small
 * ones of the next — only while no library that registers memory itself
 * (an MPI, UCX, libfabric, the program's own libibverbs) is loaded, whose
 * cache could hold a freed buffer's registration. PINARENA_RECLAIM=1
 * reclaims regardless, PINARENA_RECLAIM=0 never.
 * Heap memory: lkey is usable, rkey is PINARENA_RKEY_NONE (the heap is
 * registered for local access only, unless PINARENA_HEAP_REMOTE=1). A
 * buffer from pinarena_alloc_remote: base/length are the exposed buffer
 * (the whole remote chunk with PINARENA_REMOTE_KEYS=chunk) and rkey its
 * key; this case takes a lock (not for signal handlers).
 * Returns 0 (registered, *out filled); -ENODATA: the memory is the shim's
 * but not registered (pin cap, RLIMIT_MEMLOCK, registrar none, inherited
 * across fork, or a page of its chunk the program made read-only: verbs
 * and io_uring pin for writing, and the shim never lifts the program's
 * protection to pin), *out filled with registered = 0; -ENOENT: not the shim's
 * memory (a huge object's reserved room above its pages included); -ERANGE:
 * the range leaves the chunk or the huge object (len too large). */
int pinarena_lookup(const void* p, size_t len, pinarena_region_t* out);

/* ---------------------------------------------------------------------------
 * Remote access: exactly what the program exposes.
 *
 * The heap is registered LOCAL_WRITE only: no key of it lets a peer read or
 * write anything, so a peer can never reach another object, a free block or
 * the allocator's own structures. Memory for peers comes from
 * pinarena_alloc_remote: remote-scope chunks that hold nothing but exposed
 * buffers (their bookkeeping is elsewhere, never registered), zeroed when a
 * buffer is freed. Its key (pinarena_lookup) reaches exactly
 * [p, p + size) — byte-exact bounds, one byte before or after fails with a
 * remote access error — and dies in pinarena_free_remote before the bytes
 * are zeroed and handed out again. How the key is made, and what it costs
 * (PINARENA_REMOTE_KEYS; bindings-c/README.md has the measured figures):
 *   window  (default where the device has memory windows that keep a peer
 *           inside their bounds: checked once, at the first remote
 *           allocation, by a probe READ one byte past a window; rdma_rxe
 *           fails it — it checks window accesses against the MR under the
 *           window — so there the keys are mr) a type-1 memory
 *           window bound to exactly the buffer, posted on a QP of the
 *           shim's own on the same PD, which the calling thread reaps itself
 *           (no thread). Reachable through every QP of the PD. Costs two
 *           work requests per buffer (bind, revoke), no system call on
 *           hardware, no pinning. Needs the shim's PD (pinarena_pd(), or
 *           pinarena_set_pd before the first remote allocation).
 *           Key reuse: a freed buffer's window key is not issued again for
 *           at least 2^20 binds (2^19 allocations) in the process: 4096 free
 *           windows stand ahead of any reuse, and a window's 8-bit key wraps
 *           after 128 uses. A device with fewer windows (max_mw below 4096
 *           plus the live ones) reuses sooner: 256 x its free windows binds.
 *   mr      (fallback: no memory windows) ibv_reg_mr of exactly the buffer:
 *           same reach, costs a registration (system call, page pinning) per
 *           buffer and one per free.
 *   chunk   one key per remote chunk (2 MiB): no cost per buffer, but a
 *           peer with one buffer's key reaches every remote buffer of that
 *           chunk (never the heap, never allocator metadata).
 * With io_uring, mlock or no registrar there are no remote keys at all: the
 * buffers are plain memory and pinarena_lookup returns -ENODATA for them.
 * A forked child must not use the keys: registrations are the parent's.
 * With io_uring the parent's keys stay but its registered pages get new
 * frames at fork (the shim unpins them around fork and pins them again,
 * which copies pages the child still shares): they hold the parent's bytes,
 * yet fixed-buffer I/O in flight across fork completes on the old frames,
 * now the child's (bindings-c/FORK.md).
 * ------------------------------------------------------------------------- */

#define PINARENA_REMOTE_READ  4        /* == IBV_ACCESS_REMOTE_READ */
#define PINARENA_REMOTE_WRITE 2        /* == IBV_ACCESS_REMOTE_WRITE */

/* size bytes (zero-filled, 256-byte aligned) that peers may access as
 * `access` (PINARENA_REMOTE_READ | PINARENA_REMOTE_WRITE) with the key
 * pinarena_lookup reports. NULL with errno: EINVAL (size 0, bad access),
 * ENOMEM (above 1 TiB, or the memory or a key's resources cannot be had), EXDEV (pinarena_set_pd was called after the first remote
 * allocation), EIO (the device refused the key). Release with
 * pinarena_free_remote, never free(). */
void* pinarena_alloc_remote(size_t size, int access);
/* Revoke the buffer's key (waits until the device confirms no peer can use
 * it), zero the bytes, make them reusable by any later remote buffer (of
 * any size that fits); pinarena_trim() gives wholly free remote chunks back. 0; -EIO if the device did not
 * confirm the revocation (the bytes are then never reused). Aborts with
 * "pinarena_free_remote(): invalid pointer" for anything else. */
int pinarena_free_remote(void* p);
/* How remote keys are made in this process: "window", "window2", "mr",
 * "chunk", "none" (no verbs), "pending" (no remote allocation yet). */
const char* pinarena_remote_keys(void);
/* Why windows are not used ("" when they are, or were not asked for), e.g.
 * "the device does not enforce window bounds ...". */
const char* pinarena_remote_keys_why(void);

/* The protection domain (struct ibv_pd*) chunks are registered with, or
 * NULL when the registrar is not verbs. With lazy registration the first
 * call chooses the registrar (as the first lookup would). */
void* pinarena_pd(void);

/* Register with the application's protection domain (struct ibv_pd*) so its
 * queue pairs can use the keys. Best called before the first key is used:
 * chunks already registered are registered again under `pd` and their old
 * registrations dropped (keys from earlier lookups become invalid).
 * Returns 0, -EINVAL (NULL), -EPERM (PINARENA_REGISTRAR is not auto/verbs),
 * -ENOENT (libibverbs.so.1 cannot be loaded). */
int pinarena_set_pd(void* ibv_pd);

/* Called before any registered memory leaves the process, with the range
 * about to be deregistered and unmapped. Only pinarena_trim() releases
 * memory, and only chunks with nothing allocated in them: this is the
 * notification an MPI registration cache needs to drop its entries. Also
 * called from inside realloc when a huge object outgrows its chunk and its
 * pages move to a new address (as glibc's realloc calls mremap): the old
 * address range is kept PROT_NONE (no object and no mapping of the
 * program's lands there) until the next pinarena_trim(), which calls the
 * callback for it again and unmaps it; the frames are the object's at its
 * new address. */
typedef void (*pinarena_release_fn)(void* base, size_t length, void* arg);
void pinarena_set_release_callback(pinarena_release_fn fn, void* arg);

/* Release wholly free chunks to the OS (callback, deregister, unmap), the
 * address ranges huge objects moved out of (see above), and remote chunks
 * with no buffer left (pinarena_alloc_remote; deregistered, their keys died
 * at free). Returns the bytes released (moved-out ranges not counted).
 * malloc_trim() does NOT do this. */
size_t pinarena_trim(void);

typedef struct pinarena_stats {
  uint64_t small_mallocs, small_frees, remote_frees;  /* summed over thread heaps (approximate while threads run);
                                                        remote_frees: those the owning threads took back so far */
  uint64_t large_allocs, huge_allocs;
  uint64_t chunks, chunk_bytes;                      /* regular chunks mapped */
  uint64_t huge_chunks, huge_bytes;                  /* dedicated huge chunks mapped */
  uint64_t registered_chunks, registered_bytes;
  uint64_t unregistered_chunks, unregistered_bytes;  /* served although they could not be registered */
  uint64_t released_bytes;                           /* by pinarena_trim */
  char     registrar[16];                            /* verbs, io_uring, mlock, none, pending */
} pinarena_stats_t;

int pinarena_get_stats(pinarena_stats_t* out);

/* The stats line (as written at exit with PINARENA_STATS) to a descriptor. */
void pinarena_write_stats(int fd);

/* Registrar in use: "verbs", "io_uring", "mlock", "none", or "pending"
 * (nothing registered yet). */
const char* pinarena_registrar(void);

/* ---------------------------------------------------------------------------
 * Registration cache for memory the shim does NOT own: stack arrays, static
 * data, other libraries' mappings, file and shared-memory mappings (for the
 * shim's own memory use pinarena_lookup). An address-keyed cache with
 * registrations made by YOUR callbacks (e.g. ibv_reg_mr on your PD), kept
 * correct by the memory hooks libpinarena.so carries: it exports munmap,
 * mmap/mmap64 (MAP_FIXED), mremap, madvise (DONTNEED/FREE/REMOVE), brk/sbrk
 * (shrink) and shmdt (on the shim's own memory: the rules above), and every such call made through the dynamic symbol
 * invalidates the cached registrations it touches before the next get.
 * Not seen: raw syscalls, glibc-internal unmaps, bindings that resolve munmap
 * in libc's handle; PINARENA_UFFD=1 adds the userfaultfd monitor, which sees
 * those for anonymous/shmem/hugetlb memory. Design and limits:
 * bindings-c/REGCACHE.md (this is pa_rc_* of src/regcache.h, also exported).
 * ------------------------------------------------------------------------- */

typedef struct pinarena_cache pinarena_cache_t;          /* opaque */

/* What get returns (read-only). handle/lkey/rkey are what reg() returned. */
typedef struct pinarena_cache_region {
  uintptr_t addr;                  /* the registered range: contains the request, page-aligned */
  size_t    length;
  int       access;
  uint32_t  lkey, rkey;
  uint64_t  handle;
} pinarena_cache_region_t;

/* Called under the cache's lock, never from a hook. Return 0 or -errno;
 * -ENOMEM/-EAGAIN/-ENOSPC from reg make the cache evict an idle region and retry. */
typedef struct pinarena_cache_ops {
  void* ctx;
  int (*reg)(void* ctx, uintptr_t addr, size_t length, int access, uint64_t* handle, uint32_t* lkey, uint32_t* rkey);
  int (*dereg)(void* ctx, uintptr_t addr, size_t length, uint64_t handle);
} pinarena_cache_ops_t;

#define PINARENA_CACHE_VERIFY   1  /* re-check the physical frames on every hit (root; -ESTALE on change) */
#define PINARENA_CACHE_NO_MERGE 2  /* contain only: never merge neighbours on a miss */

/* max_regions 0 = 1024 (the most), max_bytes 0 = unlimited. Returns 0,
 * -ENOSPC (every invalidation sink taken: 8 per process), -ENOMEM, -EPERM
 * (VERIFY without access to PFNs). */
int  pinarena_cache_open(const pinarena_cache_ops_t* ops, size_t max_regions, size_t max_bytes, int flags,
                         pinarena_cache_t** out);
/* Deregisters everything (regions still in use too). */
void pinarena_cache_close(pinarena_cache_t* c);
/* A registered region containing [addr, addr + length) with at least `access`,
 * held until put. Hit path: no lock, no system call. Returns 0 or -errno
 * (-ESTALE in VERIFY mode, -ENOSPC: limits reached with every region held,
 * else reg's error). */
int  pinarena_cache_get(pinarena_cache_t* c, const void* addr, size_t length, int access,
                        const pinarena_cache_region_t** out);
void pinarena_cache_put(pinarena_cache_t* c, const pinarena_cache_region_t* r);
/* Invalidate [addr, addr + length) now, e.g. before an unmap the hooks cannot see. */
void pinarena_cache_invalidate(pinarena_cache_t* c, const void* addr, size_t length);

typedef struct pinarena_cache_stats {
  uint64_t gets, hits, misses, evictions, invalidations, stale;
  uint64_t regions, bytes_pinned;
} pinarena_cache_stats_t;
void pinarena_cache_stats(pinarena_cache_t* c, pinarena_cache_stats_t* out);

/* What feeds the caches of this process: "hooks", "userfaultfd",
 * "hooks+userfaultfd" or "none" (hooks: libpinarena.so's munmap is the
 * process-wide one, i.e. it was preloaded or linked, not dlopen'ed late). */
const char* pinarena_cache_sources(void);

#ifdef __cplusplus
}
#endif
#endif

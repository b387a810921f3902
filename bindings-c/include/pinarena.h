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
 */
#ifndef PINARENA_H
#define PINARENA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PINARENA_API_VERSION 1

enum pinarena_backend {
  PINARENA_BACKEND_NONE = 0,   /* not registered */
  PINARENA_BACKEND_VERBS,      /* ibv_reg_mr: lkey/rkey are the MR keys */
  PINARENA_BACKEND_IO_URING,   /* io_uring fixed buffers: lkey == rkey == first buffer index (one per GiB) */
  PINARENA_BACKEND_MLOCK       /* resident only: no keys */
};

typedef struct pinarena_region {
  void*    base;               /* the registered range (a whole chunk) */
  size_t   length;
  uint32_t lkey;
  uint32_t rkey;
  int      registered;         /* 1: keys valid; 0: memory is pinarena's and stays mapped, but is not registered */
  int      backend;            /* enum pinarena_backend */
} pinarena_region_t;

/* The registration covering [p, p + len) for a pointer the shim handed out.
 * O(1), lock-free, callable from any thread and from signal handlers.
 * Returns 0 (registered, *out filled); -ENODATA: the memory is the shim's
 * but not registered (pin cap, RLIMIT_MEMLOCK, registrar none, inherited
 * across fork), *out filled with registered = 0; -ENOENT: not the shim's
 * memory; -ERANGE: the range leaves the chunk (len too large). */
int pinarena_lookup(const void* p, size_t len, pinarena_region_t* out);

/* The protection domain (struct ibv_pd*) chunks are registered with, or
 * NULL when the registrar is not verbs. */
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
 * notification an MPI registration cache needs to drop its entries. */
typedef void (*pinarena_release_fn)(void* base, size_t length, void* arg);
void pinarena_set_release_callback(pinarena_release_fn fn, void* arg);

/* Release wholly free chunks to the OS (callback, deregister, unmap).
 * Returns the bytes released. malloc_trim() does NOT do this. */
size_t pinarena_trim(void);

typedef struct pinarena_stats {
  uint64_t small_mallocs, small_frees, remote_frees;  /* summed over thread heaps (approximate while threads run) */
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

#ifdef __cplusplus
}
#endif
#endif

/* stack_ofi.c — the shim as libfabric's memory monitor.
 *
 * libfabric's registration cache (util's MR cache, used by the verbs provider
 * under ofi_rxm) must hear of every unmap of memory it registered. Its own
 * monitors patch function entries (memhooks) or need userfaultfd; with
 * FI_MR_CACHE_MONITOR=disabled it has none and caches nothing. libfabric
 * (1.13 and later) also takes an imported monitor: an application opens the
 * "mr_cache" fid (fi_open) and binds a struct fid_mem_monitor to it
 * (fi_import_fid); libfabric then calls the monitor's export ops to start it
 * and to subscribe each registered range, and the monitor reports unmaps
 * through the import ops libfabric filled in (notify). The imported monitor
 * replaces the default one as long as no cache has started the default yet,
 * whatever FI_MR_CACHE_MONITOR says; but libfabric's initialisation (at the
 * first fi_getinfo) sets the default from that variable, overwriting an
 * import made before it. So the import must come after fi_getinfo and before
 * the first domain opens its cache: at fi_fabric.
 *
 * The shim exports fi_fabric, at both of libfabric's versions (each wrapper
 * calls the same version); a preloaded definition wins the lookup of every
 * caller (Open MPI's mtl ofi, any program). It calls libfabric's own, then,
 * once per process, imports its monitor. The monitor never calls libfabric
 * back when memory leaves (notify takes libfabric's locks, which the
 * unmapping thread may hold): the unmaps the shim's hooks, its own releases
 * and its userfaultfd monitor post go to a sink, and libfabric's cache pulls
 * them through the monitor's valid() at each hit (stack_ofi_subs.c). With
 * PINARENA_UFFD=1 the monitor also watches each range libfabric subscribes,
 * so an unmap by raw system call is reported too. PINARENA_STACK_EVENTS=0
 * imports nothing. */
#define _GNU_SOURCE
#include "internal.h"
#include "stack_ofi_subs.h"

#include <dlfcn.h>
#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The libfabric versions this file was written against: fi_fabric's two
 * symbol versions (exports.map gives the shim's wrappers the same), and the
 * first API version with the "mr_cache" fid. */
#define OFI_FABRIC_SYMVER     "FABRIC_1.1"
#define OFI_FABRIC_OLD_SYMVER "FABRIC_1.0"
#define OFI_OPEN_SYMVER       "FABRIC_1.5"
#define OFI_MR_CACHE_API      FI_VERSION(1, 13)

/* ABI 1.0's attributes: no api_version (libfabric's 1.0 entry point fills it
 * in); a caller bound to FABRIC_1.0 passes this, never the current struct. */
struct fi_fabric_attr_1_0 {
  struct fid_fabric* fabric;
  char* name;
  char* prov_name;
  uint32_t prov_version;
};

typedef int (*fi_fabric_fn)(struct fi_fabric_attr* attr, struct fid_fabric** fabric, void* context);
typedef int (*fi_fabric_1_0_fn)(struct fi_fabric_attr_1_0* attr, struct fid_fabric** fabric, void* context);
typedef int (*fi_open_fn)(uint32_t version, const char* name, void* attr, size_t attr_len, uint64_t flags,
                          struct fid** fid, void* context);

static pthread_once_t ofi_once = PTHREAD_ONCE_INIT;
static fi_fabric_fn ofi_real_fabric;
static fi_fabric_1_0_fn ofi_real_fabric_1_0;
static fi_open_fn ofi_real_open;
static int ofi_imported;                                    /* under fabric_lock */
static pthread_mutex_t fabric_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int ofi_fed;                                 /* the monitor was imported */
static _Atomic uint64_t ofi_subscribed;

static int monitor_start(struct fid_mem_monitor* m) { (void)m; return 0; }
static void monitor_stop(struct fid_mem_monitor* m) { (void)m; }

/* libfabric calls these under its own lock (mm_lock). A subscription is
 * also watched by the userfaultfd monitor when it runs (never unwatched: the
 * shim's own cache may watch the same pages, and a watch ends with the
 * mapping anyway). */
static int monitor_subscribe(struct fid_mem_monitor* m, const void* addr, size_t len) {
  (void)m;
  atomic_fetch_add_explicit(&ofi_subscribed, 1, memory_order_relaxed);
  pa_stack_watch(addr, len);
  pa_ofi_subs_add(addr, len);
  return 0;
}

static void monitor_unsubscribe(struct fid_mem_monitor* m, const void* addr, size_t len) {
  (void)m;
  pa_ofi_subs_remove(addr, len);
}

/* At every cache hit: false when the range was unmapped since it was cached. */
static bool monitor_valid(struct fid_mem_monitor* m, const void* addr, size_t len) {
  (void)m;
  return pa_ofi_subs_valid(addr, len);
}

static int monitor_close(struct fid* fid) { (void)fid; return 0; }

static struct fi_ops_mem_monitor monitor_export_ops = {
  .size = sizeof(struct fi_ops_mem_monitor),
  .start = monitor_start,
  .stop = monitor_stop,
  .subscribe = monitor_subscribe,
  .unsubscribe = monitor_unsubscribe,
  .valid = monitor_valid,
};

/* libfabric replaces fid.ops and fills import_ops when it takes the monitor. */
static struct fi_ops monitor_fid_ops = {.size = sizeof(struct fi_ops), .close = monitor_close};
static struct fid_mem_monitor monitor = {
  .fid = {.fclass = FI_CLASS_MEM_MONITOR, .ops = &monitor_fid_ops},
  .export_ops = &monitor_export_ops,
};

/* libfabric's own functions. The handle keeps libfabric loaded for good
 * (RTLD_NODELETE): it holds the monitor after an MPI has closed the component
 * that loaded it. */
static void ofi_bind(void) {
  void* h = dlopen("libfabric.so.1", RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
  void* from = h != NULL ? h : RTLD_NEXT;
  ofi_real_fabric = (fi_fabric_fn)dlvsym(from, "fi_fabric", OFI_FABRIC_SYMVER);
  ofi_real_fabric_1_0 = (fi_fabric_1_0_fn)dlvsym(from, "fi_fabric", OFI_FABRIC_OLD_SYMVER);
  ofi_real_open = (fi_open_fn)dlvsym(from, "fi_open", OFI_OPEN_SYMVER);
  if (ofi_real_fabric == NULL) pa_write_str(2, "pinarena: fi_fabric called but libfabric's own is not loaded\n");
}

/* Once per process, after the first fabric opened: hand libfabric the monitor. */
static void ofi_import(void) {
  pa_ensure_init();                          /* pa_opts: read at the shim's first use */
  if (pa_opts.stack_events_off || ofi_real_open == NULL) return;
  if (pa_ofi_subs_open() != 0) {
    pa_write_str(2, "pinarena: no invalidation sink left for libfabric's monitor; not imported\n");
    return;
  }
  struct fid* cache = NULL;
  int rc = ofi_real_open(OFI_MR_CACHE_API, "mr_cache", NULL, 0, 0, &cache, NULL);
  if (rc == 0) {
    rc = fi_import_fid(cache, &monitor.fid, 0);
    fi_close(cache);                  /* only the door: the import outlives it */
  }
  if (rc != 0 || monitor.import_ops == NULL || monitor.import_ops->notify == NULL) {
    /* -FI_EBUSY: another monitor already imported (Open MPI's, with its patcher on) or one running. */
    char msg[160];
    snprintf(msg, sizeof msg, "pinarena: libfabric took no memory monitor from the shim (%d: %s); "
             "its MR cache keeps its own monitor or none\n", rc, rc < 0 ? strerror(-rc) : "no notify");
    pa_write_str(2, msg);
    return;
  }
  atomic_store(&ofi_fed, 1);
}

/* After a fabric opened (rc 0): the import, once. The lock, not a once: the
 * import must wait for a fabric that opened (libfabric initialised). */
static int ofi_opened(int rc) {
  if (rc != 0) return rc;
  pthread_mutex_lock(&fabric_lock);
  if (!ofi_imported) { ofi_imported = 1; ofi_import(); }
  pthread_mutex_unlock(&fabric_lock);
  return rc;
}

/* fi_fabric@@FABRIC_1.1, the default: what programs built today call. */
PA_EXPORT int pa_ofi_fabric(struct fi_fabric_attr* attr, struct fid_fabric** fabric, void* context) {
  pthread_once(&ofi_once, ofi_bind);
  if (ofi_real_fabric == NULL) return -FI_ENOSYS;
  return ofi_opened(ofi_real_fabric(attr, fabric, context));
}
__asm__(".symver pa_ofi_fabric, fi_fabric@@" OFI_FABRIC_SYMVER);

/* fi_fabric@FABRIC_1.0: a program built against libfabric 1.0-1.4 passes the
 * old attributes, which only libfabric's 1.0 entry point reads right. */
PA_EXPORT int pa_ofi_fabric_1_0(struct fi_fabric_attr_1_0* attr, struct fid_fabric** fabric, void* context) {
  pthread_once(&ofi_once, ofi_bind);
  if (ofi_real_fabric_1_0 == NULL) return -FI_ENOSYS;
  return ofi_opened(ofi_real_fabric_1_0(attr, fabric, context));
}
__asm__(".symver pa_ofi_fabric_1_0, fi_fabric@" OFI_FABRIC_OLD_SYMVER);

/* Subscriptions voided by an unmap so far (each makes libfabric register
 * those pages again at its next use); -1 when the shim does not feed
 * libfabric (no fabric opened, libfabric refused the monitor,
 * PINARENA_STACK_EVENTS=0). */
PA_EXPORT long pinarena_stack_events_ofi(void) { return atomic_load(&ofi_fed) ? pa_ofi_subs_voided() : -1L; }

/* The monitor libfabric holds, for tests that play libfabric's part (subscribe, valid). */
PA_EXPORT struct fid_mem_monitor* pinarena_stack_ofi_monitor(void) { return &monitor; }

/* Ranges libfabric's cache subscribed (one per registration it cached). */
PA_EXPORT long pinarena_stack_events_ofi_subscribed(void) { return (long)atomic_load(&ofi_subscribed); }

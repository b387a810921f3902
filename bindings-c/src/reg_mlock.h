/* reg_mlock.h — mlock/munlock as a residency backend.
 *
 * What mlock GUARANTEES: the pages of the range stay resident (no swap-out,
 * no reclaim) and are faulted in up front; VmLck accounts them, bounded by
 * RLIMIT_MEMLOCK unless the process has CAP_IPC_LOCK.
 *
 * What it does NOT guarantee — why it is not a DMA pin:
 *  - the virtual->physical mapping may change: compaction, NUMA balancing,
 *    memory hot-unplug and THP collapse may MIGRATE a locked page to another
 *    frame (the new frame is locked too; the device would still use the old);
 *  - copy-on-write after fork: when the parent writes a page the child still
 *    shares, the parent gets a NEW frame (observed in the fork tests);
 *  - the lock is not inherited by a child, and munmap/free drops it silently.
 * A device that was told a physical address needs a pin (FOLL_PIN |
 * FOLL_LONGTERM: io_uring fixed buffers, ibv_reg_mr), which this is not.
 */
#ifndef PA_REG_MLOCK_H
#define PA_REG_MLOCK_H

#include <stddef.h>

/* Lock [addr, addr+len) resident. Returns 0 or -errno (-ENOMEM/-EAGAIN when
 * over RLIMIT_MEMLOCK without CAP_IPC_LOCK). */
int pa_mlock_register(void* addr, size_t len);

/* Unlock. Returns 0 or -errno. */
int pa_mlock_unregister(void* addr, size_t len);

#endif

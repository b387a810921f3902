/* ufd_monitor.h — userfaultfd as the hook-free invalidation source.
 *
 * One userfaultfd with UFFD_FEATURE_EVENT_UNMAP | EVENT_REMAP | EVENT_REMOVE
 * and one monitor thread that turns its events into pa_iv_post() ranges.
 * The kernel reports these for munmap, mremap, MADV_DONTNEED/REMOVE, brk
 * shrink and mmap(MAP_FIXED) over a watched range WHOEVER makes the call
 * (glibc's internal free() included), and makes the unmapping thread wait
 * until the monitor has read the event: the range is queued before munmap
 * returns.
 *
 * Limits (see the tests): only anonymous, shmem and hugetlbfs ranges can be
 * watched (not private file mappings such as .data); a range belongs to at
 * most one userfaultfd (an application's own uffd wins: EBUSY); ranges are
 * watched in WP mode where the kernel offers it (no faults are ever
 * delivered, since nothing is write-protected), else in MISSING mode, where
 * the monitor answers faults on dropped pages with a zero page; MADV_FREE
 * produces no event.
 */
#ifndef PA_UFD_MONITOR_H
#define PA_UFD_MONITOR_H

#include "common.h"

#include <stddef.h>

/* Open the userfaultfd and start the monitor. 0 or -errno (EPERM: not
 * allowed, see vm.unprivileged_userfaultfd; EINVAL: features missing). */
PA_EXPORT int  pa_ufd_start(void);
PA_EXPORT void pa_ufd_stop(void);
PA_EXPORT int  pa_ufd_active(void);

/* Watch / stop watching [addr, addr+len) (page-rounded). 0 or -errno:
 * -EINVAL for an unsupported mapping type, -EBUSY if another uffd has it. */
PA_EXPORT int  pa_ufd_watch(const void* addr, size_t len);
PA_EXPORT int  pa_ufd_unwatch(const void* addr, size_t len);

/* In a forked child (pthread_atfork child handler; the shim calls it): the
 * monitor thread did not survive and the descriptor still names the parent's
 * mm, so forget both; the child has no monitor (pa_ufd_active() == 0). */
void pa_ufd_atfork_child(void);

/* "wp" or "missing": the registration mode in use (after pa_ufd_start). */
PA_EXPORT const char* pa_ufd_mode(void);

#endif

/* stack_ofi_subs.h — libfabric's subscriptions to the shim's monitor and the
 * unmaps that void them (stack_ofi_subs.c; used by stack_ofi.c). */
#ifndef PA_STACK_OFI_SUBS_H
#define PA_STACK_OFI_SUBS_H
#include "common.h"

#include <stdbool.h>
#include <stddef.h>

/* Open the sink the unmaps are posted to (once): 0, or -ENOSPC. */
PA_HIDDEN int  pa_ofi_subs_open(void);
/* libfabric cached [addr, addr+len). */
PA_HIDDEN void pa_ofi_subs_add(const void* addr, size_t len);
PA_HIDDEN void pa_ofi_subs_remove(const void* addr, size_t len);
/* The cached range is still backed by the pages registered (subscribed, no unmap since). */
PA_HIDDEN bool pa_ofi_subs_valid(const void* addr, size_t len);
/* Subscriptions voided by an unmap so far. */
PA_HIDDEN long pa_ofi_subs_voided(void);
#endif

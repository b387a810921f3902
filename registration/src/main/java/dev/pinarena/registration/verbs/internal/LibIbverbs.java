package dev.pinarena.registration.verbs.internal;

import jnr.ffi.Pointer;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.types.intptr_t;
import jnr.ffi.types.size_t;

/**
 * The exported libibverbs (rdma-core) functions this backend calls, bound with jnr-ffi.
 * <p>
 * Only real exported symbols are bound: several names in {@code verbs.h} are macros or static inline
 * wrappers ({@code ibv_reg_mr} expands to the inline {@code __ibv_reg_mr}, {@code ibv_query_port} to the
 * inline {@code ___ibv_query_port}) that end up calling the exported symbols of the same name, which
 * {@code dlsym} resolves to their default version ({@code IBVERBS_1.1}).
 * <p>
 * Functions returning a pointer report failure with NULL and {@code errno}, hence {@link SaveError}; the
 * {@code int}-returning ones return 0 or a positive errno value themselves.
 */
public interface LibIbverbs
{
    /**
     * {@code struct ibv_device **ibv_get_device_list(int *num_devices)}.
     *
     * @param numDevices receives the number of devices.
     * @return NULL-terminated array of device pointers, or NULL with errno set.
     */
    @SaveError
    Pointer ibv_get_device_list(@Out int[] numDevices);

    /**
     * {@code void ibv_free_device_list(struct ibv_device **list)}.
     *
     * @param list a list from {@link #ibv_get_device_list(int[])}.
     */
    void ibv_free_device_list(Pointer list);

    /**
     * {@code const char *ibv_get_device_name(struct ibv_device *device)}.
     *
     * @param device an entry of a device list.
     * @return the kernel device name, e.g. {@code rxe0}.
     */
    String ibv_get_device_name(Pointer device);

    /**
     * {@code struct ibv_context *ibv_open_device(struct ibv_device *device)}.
     *
     * @param device an entry of a device list.
     * @return the context, or NULL with errno set.
     */
    @SaveError
    Pointer ibv_open_device(Pointer device);

    /**
     * {@code int ibv_close_device(struct ibv_context *context)}.
     *
     * @param context an open context.
     * @return 0, or an errno value.
     */
    int ibv_close_device(Pointer context);

    /**
     * {@code int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)}.
     *
     * @param context an open context.
     * @param attr    at least {@code VerbsLayout.DEVICE_ATTR_SIZE} bytes.
     * @return 0, or an errno value.
     */
    @SaveError
    int ibv_query_device(Pointer context, @Out Pointer attr);

    /**
     * The exported {@code int ibv_query_port(struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *)}.
     * It writes a full {@code struct ibv_port_attr}, so the buffer must be at least
     * {@code VerbsLayout.PORT_ATTR_SIZE} bytes.
     *
     * @param context an open context.
     * @param portNum port number, from 1.
     * @param attr    the buffer to fill.
     * @return 0, or an errno value.
     */
    @SaveError
    int ibv_query_port(Pointer context, byte portNum, @Out Pointer attr);

    /**
     * {@code struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)}.
     *
     * @param context an open context.
     * @return the protection domain, or NULL with errno set.
     */
    @SaveError
    Pointer ibv_alloc_pd(Pointer context);

    /**
     * {@code int ibv_dealloc_pd(struct ibv_pd *pd)}.
     *
     * @param pd a protection domain with nothing left on it.
     * @return 0, or an errno value.
     */
    @SaveError
    int ibv_dealloc_pd(Pointer pd);

    /**
     * The exported {@code struct ibv_mr *ibv_reg_mr(struct ibv_pd *, void *, size_t, int)}, with every pointer
     * as a raw address: a registration per buffer must not allocate a jnr {@code Pointer} per argument and
     * result.
     *
     * @param pd      the {@code struct ibv_pd *}.
     * @param address first byte.
     * @param length  bytes.
     * @param access  {@code ibv_access_flags}.
     * @return the {@code struct ibv_mr *}, or 0 with errno set.
     */
    @SaveError
    @intptr_t long ibv_reg_mr(@intptr_t long pd, @intptr_t long address, @size_t long length, int access);

    /**
     * {@code int ibv_dereg_mr(struct ibv_mr *mr)}, the region as a raw address (no {@code Pointer} per call).
     *
     * @param mr the {@code struct ibv_mr *} of a registered memory region.
     * @return 0, or an errno value.
     */
    @SaveError
    int ibv_dereg_mr(@intptr_t long mr);
}

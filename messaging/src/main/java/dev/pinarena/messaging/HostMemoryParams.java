package dev.pinarena.messaging;

import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpRequestParams;
import org.openucx.jucx.ucs.UcsConstants;

/**
 * Request parameters that always name the memory type: host.
 * <p>
 * JUCX 1.16 passes its own {@code UCS_MEMORY_TYPE_UNKNOWN} when a request names no memory type. In UCX 1.16's
 * enumeration that value is 6 (1.16 added {@code UCS_MEMORY_TYPE_RDMA}); UCX 1.13 (Debian's libucx0) ends its
 * enumeration at 5 and rejects every such tagged, stream and active-message request with
 * {@code invalid memory type parameter: 6} ({@code UcxException: Invalid parameter}). Naming host memory
 * explicitly is correct for arena buffers and works with both libraries.
 * <p>
 * One instance is reused for every request of one thread: {@link #with(UcpMemory)} and {@link #unregistered()}
 * only set fields, so the hot path allocates nothing here. Not thread-safe.
 */
public final class HostMemoryParams
{
    private final UcpRequestParams registered = host();
    private final UcpRequestParams unregistered = host();

    /**
     * Parameters with no memory type default.
     */
    public HostMemoryParams()
    {
    }

    /**
     * @param memory the registered memory the request's local buffer lies in.
     * @return the shared parameters, naming host memory and that memory handle.
     */
    public UcpRequestParams with(final UcpMemory memory)
    {
        return registered.setMemoryHandle(memory);
    }

    /**
     * @return the shared parameters, naming host memory and no memory handle: UCX registers the buffer itself
     * (through its registration cache) when a protocol needs it.
     */
    public UcpRequestParams unregistered()
    {
        return unregistered;
    }

    private static UcpRequestParams host()
    {
        return new UcpRequestParams().setMemoryType(UcsConstants.MEMORY_TYPE.UCS_MEMORY_TYPE_HOST);
    }
}

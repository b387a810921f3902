package dev.pinarena.messaging;

import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;

import java.nio.ByteBuffer;

/**
 * A connection to one peer that sends from, and puts or gets with, arena buffers: every request carries the
 * memory handle of the buffer's chunk and names host memory, so UCX neither registers nor detects anything
 * per message.
 * <p>
 * Same threading as {@link ArenaNode}: use it on the thread that progresses the node's worker.
 */
public final class ArenaEndpoint implements AutoCloseable
{
    private final ArenaNode node;
    private final UcpEndpoint endpoint;

    ArenaEndpoint(final ArenaNode node, final UcpEndpoint endpoint)
    {
        this.node = node;
        this.endpoint = endpoint;
    }

    /**
     * Sends an active message whose data is an arena buffer.
     *
     * @param id           active-message id the peer handles.
     * @param header       address of the header (any memory; UCX copies it), or 0.
     * @param headerLength header bytes, at most the worker's maximum header size.
     * @param address      arena buffer.
     * @param length       data bytes.
     * @param callback     completion, or null to poll the request.
     * @return the request.
     */
    public UcpRequest send(
        final int id, final long header, final long headerLength, final long address, final long length,
        final UcxCallback callback)
    {
        return endpoint.sendAmNonBlocking(
            id, header, headerLength, address, length, 0, callback, node.params().with(node.memoryOf(address)));
    }

    /**
     * Sends an active message from memory that is not in the arena: UCX registers it itself when its protocol
     * needs a registration (through its cache). For comparison with {@link #send}.
     *
     * @param id           active-message id.
     * @param header       header address, or 0.
     * @param headerLength header bytes.
     * @param address      any readable memory.
     * @param length       data bytes.
     * @param callback     completion, or null.
     * @return the request.
     */
    public UcpRequest sendUnregistered(
        final int id, final long header, final long headerLength, final long address, final long length,
        final UcxCallback callback)
    {
        return endpoint.sendAmNonBlocking(
            id, header, headerLength, address, length, 0, callback, node.params().unregistered());
    }

    /**
     * RDMA write of an arena buffer into a peer's remote-scope buffer.
     *
     * @param address       local arena buffer.
     * @param length        bytes.
     * @param remoteAddress address in the peer's buffer.
     * @param key           the peer's unpacked remote key.
     * @param callback      completion (local: the buffer may be reused), or null.
     * @return the request.
     */
    public UcpRequest put(
        final long address, final long length, final long remoteAddress, final UcpRemoteKey key, final UcxCallback callback)
    {
        return endpoint.putNonBlocking(
            address, length, remoteAddress, key, callback, node.params().with(node.memoryOf(address)));
    }

    /**
     * RDMA read from a peer's remote-scope buffer into an arena buffer.
     *
     * @param remoteAddress address in the peer's buffer.
     * @param key           the peer's unpacked remote key.
     * @param address       local arena buffer.
     * @param length        bytes.
     * @param callback      completion, or null.
     * @return the request.
     */
    public UcpRequest get(
        final long remoteAddress, final UcpRemoteKey key, final long address, final long length, final UcxCallback callback)
    {
        return endpoint.getNonBlocking(
            remoteAddress, key, address, length, callback, node.params().with(node.memoryOf(address)));
    }

    /**
     * Completes every put issued so far at the peer (remote completion).
     *
     * @param callback completion, or null.
     * @return the request.
     */
    public UcpRequest flush(final UcxCallback callback)
    {
        return endpoint.flushNonBlocking(callback);
    }

    /**
     * @param packedKey a key packed by the peer's {@code UcxRegistrar.packedRemoteKey}.
     * @return the key for puts and gets to that peer over this endpoint.
     */
    public UcpRemoteKey unpackRemoteKey(final ByteBuffer packedKey)
    {
        if (!packedKey.isDirect())
        {
            final ByteBuffer direct = ByteBuffer.allocateDirect(packedKey.remaining());
            direct.put(packedKey.duplicate()).flip();
            return endpoint.unpackRemoteKey(direct);
        }
        return endpoint.unpackRemoteKey(packedKey);
    }

    /**
     * @return the UCX endpoint, for what this class does not wrap.
     */
    public UcpEndpoint endpoint()
    {
        return endpoint;
    }

    /**
     * Closes the endpoint without flushing or waiting for the peer (outstanding requests fail), progressing the
     * local worker until UCX has released it. Flush first ({@link #flush}) for an orderly close.
     *
     * @throws IllegalStateException if UCX fails the close.
     */
    public void close()
    {
        try
        {
            node.await(endpoint.closeNonBlockingForce());
        }
        catch (final Exception ex)
        {
            throw new IllegalStateException("closing the endpoint failed: " + ex.getMessage(), ex);
        }
    }
}

package dev.pinarena.messaging;

import org.agrona.DirectBuffer;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucs.UcsConstants;

/**
 * A connection to one peer that sends from, and puts or gets with, arena buffers: every request carries the
 * memory handle of the buffer's chunk and names host memory, so UCX neither registers nor detects anything
 * per message.
 * <p>
 * A peer that fails (dies, closes, resets the connection) fails this endpoint only: UCX's error handler of the
 * endpoint records it and calls the node's {@link PeerFailureHandler}, the endpoint's outstanding requests
 * complete with an error status (their callbacks' {@code onError}), and new requests throw
 * {@link PeerFailedException}. {@link ArenaNode#progress()} goes on serving the other endpoints.
 * <p>
 * Same threading as {@link ArenaNode}: use it on the thread that progresses the node's worker.
 */
public final class ArenaEndpoint implements AutoCloseable
{
    private final ArenaNode node;
    private final UcpEndpoint endpoint;
    private int failureStatus = UcsConstants.STATUS.UCS_OK;
    private String failureMessage;

    ArenaEndpoint(final ArenaNode node, final UcpEndpointParams params)
    {
        this.node = node;
        this.endpoint = node.worker().newEndpoint(
            params.setPeerErrorHandlingMode().setErrorHandler((ep, status, message) -> onPeerError(status, message)));
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
     * @throws PeerFailedException if the peer failed.
     */
    public UcpRequest send(
        final int id, final long header, final long headerLength, final long address, final long length,
        final UcxCallback callback)
    {
        ensureAlive();
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
     * @throws PeerFailedException if the peer failed.
     */
    public UcpRequest sendUnregistered(
        final int id, final long header, final long headerLength, final long address, final long length,
        final UcxCallback callback)
    {
        ensureAlive();
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
     * @throws PeerFailedException if the peer failed.
     */
    public UcpRequest put(
        final long address, final long length, final long remoteAddress, final UcpRemoteKey key, final UcxCallback callback)
    {
        ensureAlive();
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
     * @throws PeerFailedException if the peer failed.
     */
    public UcpRequest get(
        final long remoteAddress, final UcpRemoteKey key, final long address, final long length, final UcxCallback callback)
    {
        ensureAlive();
        return endpoint.getNonBlocking(
            remoteAddress, key, address, length, callback, node.params().with(node.memoryOf(address)));
    }

    /**
     * Completes every put issued so far at the peer (remote completion).
     *
     * @param callback completion, or null.
     * @return the request.
     * @throws PeerFailedException if the peer failed.
     */
    public UcpRequest flush(final UcxCallback callback)
    {
        ensureAlive();
        return endpoint.flushNonBlocking(callback);
    }

    /**
     * Decodes a {@link RemoteBuffer} this endpoint's peer sent (its HELLO, or any message carrying one), checking
     * every field: only descriptors decoded here can have their key unpacked on this endpoint.
     *
     * @param message the bytes received from this endpoint's peer.
     * @param offset  where the descriptor starts.
     * @return the descriptor, bound to this endpoint.
     * @throws MalformedPeerInputException if the bytes do not hold a well-formed descriptor.
     */
    public RemoteBuffer decodeRemote(final DirectBuffer message, final int offset)
    {
        return RemoteBuffer.decode(message, offset, this);
    }

    /**
     * Unpacks the key of a descriptor this endpoint's peer sent. UCX parses a packed key without checking it
     * (bytes that are not a key it packed can crash the process inside UCX), so only what can be checked here
     * reaches it: the key's length was bounded when it was decoded, and it came from this endpoint's peer.
     *
     * @param remote a descriptor from {@link #decodeRemote(DirectBuffer, int)} on this endpoint.
     * @return the key for puts and gets to that peer over this endpoint.
     * @throws ForeignRemoteKeyException if the descriptor was made locally or decoded on another endpoint.
     * @throws PeerFailedException       if the peer failed.
     */
    public UcpRemoteKey unpackRemoteKey(final RemoteBuffer remote)
    {
        if (remote.origin() != this)
        {
            throw new ForeignRemoteKeyException(remote + " was not received from this endpoint's peer (" +
                (remote.origin() == null ? "made or decoded locally" : "decoded on another endpoint") +
                "): decode the peer's bytes with decodeRemote on the endpoint they arrived from");
        }
        ensureAlive();
        return endpoint.unpackRemoteKey(remote.packedKey());
    }

    /**
     * @return whether UCX reported this endpoint's peer failed.
     */
    public boolean failed()
    {
        return failureStatus != UcsConstants.STATUS.UCS_OK;
    }

    /**
     * @return the UCX status the peer failed with, or {@code UCS_OK}.
     */
    public int failureStatus()
    {
        return failureStatus;
    }

    /**
     * @return UCX's description of the failure, or null.
     */
    public String failureMessage()
    {
        return failureMessage;
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

    private void ensureAlive()
    {
        if (failureStatus != UcsConstants.STATUS.UCS_OK)
        {
            throw new PeerFailedException(failureStatus, "the peer of this endpoint failed (UCX status " +
                failureStatus + ": " + failureMessage + "): close the endpoint");
        }
    }

    private void onPeerError(final int status, final String message)
    {
        if (failureStatus != UcsConstants.STATUS.UCS_OK)
        {
            return;
        }
        failureStatus = status == UcsConstants.STATUS.UCS_OK ? UcsConstants.STATUS.UCS_ERR_CONNECTION_RESET : status;
        failureMessage = message;
        node.peerFailed(this, failureStatus, message);
    }
}

package dev.pinarena.messaging;

import org.agrona.concurrent.UnsafeBuffer;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucs.UcsConstants;

/**
 * The receiving side of {@link CheckProtocol} on one node: checks every byte of what arrives and acknowledges.
 * Runs on the node's progress thread.
 */
final class CheckingReceiver
{
    private final ArenaNode node;
    private final long remote;
    private final long receive;
    private final long header;
    private final long hello;
    private final UnsafeBuffer headerBuffer;
    private ArenaEndpoint peer;
    private UcpRequest inFlight;
    private boolean ackPending;
    private long ackSequence;
    private long ackResult;
    private boolean finished;
    private long messages;

    CheckingReceiver(final ArenaNode node)
    {
        this.node = node;
        this.remote = node.arena().allocateRemote(CheckProtocol.MAX_MESSAGE);
        this.receive = node.arena().allocate(CheckProtocol.MAX_MESSAGE);
        this.header = node.arena().allocate(CheckProtocol.HEADER_LENGTH);
        this.hello = node.arena().allocate(256);
        this.headerBuffer = new UnsafeBuffer(header, CheckProtocol.HEADER_LENGTH);
        node.onMessage(CheckProtocol.DATA, this::onData);
        node.onMessage(CheckProtocol.CHECK_PUT, (h, hl, data, ep) -> onCheckPut(h));
        node.onMessage(CheckProtocol.FILL, (h, hl, data, ep) -> onFill(h));
        node.onMessage(CheckProtocol.BYE, (h, hl, data, ep) ->
        {
            finished = true;
            return UcsConstants.STATUS.UCS_OK;
        });
    }

    /**
     * Sends the remote buffer's descriptor to the peer that connected.
     */
    void greet(final ArenaEndpoint endpoint)
    {
        peer = endpoint;
        final RemoteBuffer buffer = RemoteBuffer.of(node, remote, CheckProtocol.MAX_MESSAGE);
        final int length = buffer.encode(new UnsafeBuffer(hello, 256), 0);
        inFlight = peer.send(CheckProtocol.HELLO, 0, 0, hello, length, null);
    }

    /**
     * Sends the pending acknowledgement, if any; call after each progress.
     */
    void poll()
    {
        if (inFlight != null && !inFlight.isCompleted())
        {
            return;
        }
        if (inFlight != null && inFlight.getStatus() != UcsConstants.STATUS.UCS_OK)
        {
            throw new IllegalStateException("send to the sender failed with UCX status " + inFlight.getStatus());
        }
        inFlight = null;
        if (ackPending)
        {
            ackPending = false;
            headerBuffer.putLong(0, ackSequence);
            headerBuffer.putLong(8, ackResult);
            headerBuffer.putLong(16, node.registrar().memMapCalls());
            headerBuffer.putLong(24, VerbsRegistrationCounter.registrations());
            inFlight = peer.send(CheckProtocol.ACK, header, CheckProtocol.HEADER_LENGTH, header, 0, null);
        }
    }

    boolean finished()
    {
        return finished;
    }

    long messages()
    {
        return messages;
    }

    private int onData(final long h, final long headerLength, final UcpAmData data, final org.openucx.jucx.ucp.UcpEndpoint ep)
    {
        final UnsafeBuffer in = new UnsafeBuffer(h, CheckProtocol.HEADER_LENGTH);
        final long sequence = in.getLong(0);
        final int length = (int)in.getLong(8);
        final long seed = in.getLong(16);
        if (data.getLength() != length)
        {
            acknowledge(sequence, Long.MAX_VALUE);
        }
        else if (data.isDataValid())
        {
            acknowledge(sequence, BytePattern.firstMismatch(data.getDataAddress(), length, seed));
        }
        else
        {
            node.receiveInto(data.getDataHandle(), receive, length, new UcxCallback()
            {
                public void onSuccess(final UcpRequest request)
                {
                    acknowledge(sequence, BytePattern.firstMismatch(receive, length, seed));
                }

                public void onError(final int status, final String message)
                {
                    acknowledge(sequence, Long.MIN_VALUE);
                }
            });
        }
        return UcsConstants.STATUS.UCS_OK;
    }

    private int onCheckPut(final long h)
    {
        final UnsafeBuffer in = new UnsafeBuffer(h, CheckProtocol.HEADER_LENGTH);
        acknowledge(in.getLong(0), BytePattern.firstMismatch(remote, (int)in.getLong(8), in.getLong(16)));
        return UcsConstants.STATUS.UCS_OK;
    }

    private int onFill(final long h)
    {
        final UnsafeBuffer in = new UnsafeBuffer(h, CheckProtocol.HEADER_LENGTH);
        BytePattern.fill(remote, (int)in.getLong(8), in.getLong(16));
        acknowledge(in.getLong(0), CheckProtocol.OK);
        return UcsConstants.STATUS.UCS_OK;
    }

    private void acknowledge(final long sequence, final long result)
    {
        messages++;
        ackSequence = sequence;
        ackResult = result;
        ackPending = true;
    }
}

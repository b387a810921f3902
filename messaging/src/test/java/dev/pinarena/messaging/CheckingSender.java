package dev.pinarena.messaging;

import org.agrona.concurrent.UnsafeBuffer;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucs.UcsConstants;

import java.util.concurrent.TimeUnit;

/**
 * The sending side of {@link CheckProtocol}: per size, an active message, a put and a get, each checked byte by
 * byte (the receiver checks data and puts, this side checks gets).
 */
final class CheckingSender
{
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(120);

    private final ArenaNode node;
    private final Runnable progressPeer;
    private final long send;
    private final long receive;
    private final long header;
    private final UnsafeBuffer headerBuffer;
    private ArenaEndpoint peer;
    private RemoteBuffer remote;
    private UcpRemoteKey key;
    private boolean acked;
    private long ackSequence;
    private long ackResult;
    private long peerMemMapCalls;
    private long peerVerbsRegistrations;
    private long sequence;
    private long bytesMoved;

    /**
     * @param progressPeer progresses the receiver when it shares this thread, else a no-op.
     */
    CheckingSender(final ArenaNode node, final Runnable progressPeer)
    {
        this.node = node;
        this.progressPeer = progressPeer;
        this.send = node.arena().allocate(CheckProtocol.MAX_MESSAGE);
        this.receive = node.arena().allocate(CheckProtocol.MAX_MESSAGE);
        this.header = node.arena().allocate(CheckProtocol.HEADER_LENGTH);
        this.headerBuffer = new UnsafeBuffer(header, CheckProtocol.HEADER_LENGTH);
        node.onMessage(CheckProtocol.HELLO, (h, hl, data, ep) ->
        {
            remote = peer.decodeRemote(new UnsafeBuffer(data.getDataAddress(), (int)data.getLength()), 0);
            return UcsConstants.STATUS.UCS_OK;
        });
        node.onMessage(CheckProtocol.ACK, (h, hl, data, ep) ->
        {
            final UnsafeBuffer in = new UnsafeBuffer(h, CheckProtocol.HEADER_LENGTH);
            ackSequence = in.getLong(0);
            ackResult = in.getLong(8);
            peerMemMapCalls = in.getLong(16);
            peerVerbsRegistrations = in.getLong(24);
            acked = true;
            return UcsConstants.STATUS.UCS_OK;
        });
    }

    /**
     * Connects and waits for the receiver's remote buffer.
     */
    void connect(final java.net.InetSocketAddress address) throws Exception
    {
        peer = node.connect(address);
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        while (remote == null)
        {
            progress(deadline, "the receiver's remote buffer (HELLO)");
        }
        key = peer.unpackRemoteKey(remote);
    }

    /**
     * One round: every size of {@link CheckProtocol#SIZES}, sent, put and got.
     *
     * @param seedBase makes this round's bytes differ from the last round's.
     */
    void round(final long seedBase) throws Exception
    {
        for (final int size : CheckProtocol.SIZES)
        {
            final long dataSeed = seedBase * 31 + size;
            BytePattern.fill(send, size, dataSeed);
            final long s1 = request(CheckProtocol.DATA, size, dataSeed, true);
            expectOk(s1, "active message of " + size + " B");

            final long putSeed = dataSeed + 1;
            BytePattern.fill(send, size, putSeed);
            await(peer.put(send, size, remote.address(), key, null));
            await(peer.flush(null));
            expectOk(request(CheckProtocol.CHECK_PUT, size, putSeed, false), "put of " + size + " B");

            final long getSeed = dataSeed + 2;
            expectOk(request(CheckProtocol.FILL, size, getSeed, false), "fill before get of " + size + " B");
            new UnsafeBuffer(receive, size).setMemory(0, size, (byte)0);
            await(peer.get(remote.address(), key, receive, size, null));
            final long mismatch = BytePattern.firstMismatch(receive, size, getSeed);
            if (mismatch != CheckProtocol.OK)
            {
                throw new AssertionError("get of " + size + " B: byte " + mismatch + " differs");
            }
            bytesMoved += 3L * size;
        }
    }

    void bye() throws Exception
    {
        headerBuffer.putLong(0, ++sequence);
        await(peer.send(CheckProtocol.BYE, header, CheckProtocol.HEADER_LENGTH, header, 0, null));
        await(peer.flush(null));
    }

    void close()
    {
        peer.close();
    }

    long peerMemMapCalls()
    {
        return peerMemMapCalls;
    }

    long peerVerbsRegistrations()
    {
        return peerVerbsRegistrations;
    }

    long bytesMoved()
    {
        return bytesMoved;
    }

    RemoteBuffer remote()
    {
        return remote;
    }

    private long request(final int id, final int size, final long seed, final boolean withData) throws Exception
    {
        final long s = ++sequence;
        headerBuffer.putLong(0, s);
        headerBuffer.putLong(8, size);
        headerBuffer.putLong(16, seed);
        acked = false;
        await(peer.send(id, header, CheckProtocol.HEADER_LENGTH, send, withData ? size : 0, null));
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        while (!acked)
        {
            progress(deadline, "ACK of request " + s);
        }
        if (ackSequence != s)
        {
            throw new AssertionError("ACK for request " + ackSequence + ", expected " + s);
        }
        return ackResult;
    }

    private static void expectOk(final long result, final String what)
    {
        if (result == Long.MAX_VALUE)
        {
            throw new AssertionError(what + ": the receiver saw a different length");
        }
        if (result == Long.MIN_VALUE)
        {
            throw new AssertionError(what + ": the receiver's data receive failed");
        }
        if (result != CheckProtocol.OK)
        {
            throw new AssertionError(what + ": byte " + result + " differs at the receiver");
        }
    }

    private void await(final UcpRequest request) throws Exception
    {
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        while (request != null && !request.isCompleted())
        {
            progress(deadline, "request completion");
        }
        if (request != null && request.getStatus() != UcsConstants.STATUS.UCS_OK)
        {
            throw new AssertionError("request failed with UCX status " + request.getStatus());
        }
    }

    private void progress(final long deadline, final String waitingFor) throws Exception
    {
        node.progress();
        progressPeer.run();
        if (System.nanoTime() > deadline)
        {
            throw new AssertionError("timed out waiting for " + waitingFor);
        }
    }
}

package dev.pinarena.messaging;

import org.agrona.concurrent.UnsafeBuffer;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucs.UcsConstants;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Two nodes in one JVM over UCX's tcp transport on lo, connected both ways, progressed from the test's thread:
 * the server published a remote-scope buffer to the client in a HELLO (id {@link #HELLO}), as the check
 * protocol does.
 */
final class LoopbackPair implements AutoCloseable
{
    static final int HELLO = 1;
    static final int REMOTE_LENGTH = 1 << 20;
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(60);

    final ArenaNode server;
    final ArenaNode client;
    final ArenaEndpoint toServer;
    ArenaEndpoint toClient;
    final long exposed;
    private UnsafeBuffer hello;
    private boolean serverClosed;

    LoopbackPair() throws Exception
    {
        final NodeConfig config = NodeConfig.defaults().withTransports("tcp").withNetDevices("lo");
        server = ArenaNode.open(config);
        client = ArenaNode.open(config);
        exposed = server.arena().allocateRemote(REMOTE_LENGTH);
        final long helloBuffer = server.arena().allocate(256);
        final InetSocketAddress address = new InetSocketAddress("127.0.0.1", freePort());
        server.listen(address, request ->
        {
            toClient = server.accept(request);
            final int n = RemoteBuffer.of(server, exposed, REMOTE_LENGTH).encode(new UnsafeBuffer(helloBuffer, 256), 0);
            toClient.send(HELLO, 0, 0, helloBuffer, n, null);
        });
        client.onMessage(HELLO, (h, hl, data, ep) ->
        {
            final UnsafeBuffer copy = new UnsafeBuffer(new byte[(int)data.getLength()]);
            copy.putBytes(0, new UnsafeBuffer(data.getDataAddress(), (int)data.getLength()), 0, (int)data.getLength());
            hello = copy;
            return UcsConstants.STATUS.UCS_OK;
        });
        toServer = client.connect(address);
        progressUntil(() -> hello != null, "the server's HELLO");
    }

    /**
     * @return the HELLO's bytes as the client received them.
     */
    UnsafeBuffer hello()
    {
        return hello;
    }

    void progressUntil(final BooleanSupplier done, final String what) throws Exception
    {
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        while (!done.getAsBoolean())
        {
            client.progress();
            if (!serverClosed)
            {
                server.progress();
            }
            if (System.nanoTime() > deadline)
            {
                throw new AssertionError("timed out waiting for " + what);
            }
        }
    }

    void await(final UcpRequest request, final String what) throws Exception
    {
        progressUntil(() -> request == null || request.isCompleted(), what);
    }

    /**
     * Closes the server node as a crashing peer would leave it: no flush, no goodbye, its sockets closed.
     */
    void killServer()
    {
        serverClosed = true;
        server.close();
    }

    public void close()
    {
        if (!serverClosed)
        {
            serverClosed = true;
            server.close();
        }
        client.close();
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }
}

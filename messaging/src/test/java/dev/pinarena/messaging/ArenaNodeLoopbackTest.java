package dev.pinarena.messaging;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two nodes in one JVM over UCX's tcp transport on the loopback interface (the host has no RDMA device): the
 * same checks as the two-JVM Soft-RoCE test, here to catch protocol and registration mistakes on every build.
 */
class ArenaNodeLoopbackTest
{
    private static final int ROUNDS = 3;

    @Test
    void movesCheckedBytesAndMapsNothingAfterWarmUp() throws Exception
    {
        final NodeConfig config = NodeConfig.defaults().withTransports("tcp").withNetDevices("lo");
        try (ArenaNode receiverNode = ArenaNode.open(config); ArenaNode senderNode = ArenaNode.open(config))
        {
            final CheckingReceiver receiver = new CheckingReceiver(receiverNode);
            final AtomicReference<ArenaEndpoint> accepted = new AtomicReference<>();
            final InetSocketAddress address = new InetSocketAddress("127.0.0.1", freePort());
            receiverNode.listen(address, request -> accepted.set(receiverNode.accept(request)));
            final boolean[] greeted = {false};
            final CheckingSender sender = new CheckingSender(senderNode, () ->
            {
                try
                {
                    receiverNode.progress();
                    if (accepted.get() != null && !greeted[0])
                    {
                        greeted[0] = true;
                        receiver.greet(accepted.get());
                    }
                    receiver.poll();
                }
                catch (final Exception ex)
                {
                    throw new IllegalStateException(ex);
                }
            });
            sender.connect(address);

            sender.round(0);
            final long senderMaps = senderNode.registrar().memMapCalls();
            final long receiverMaps = sender.peerMemMapCalls();
            for (int round = 1; round <= ROUNDS; round++)
            {
                sender.round(round);
            }

            assertEquals(senderMaps, senderNode.registrar().memMapCalls(), "sender mapped memory after warm-up");
            assertEquals(receiverMaps, sender.peerMemMapCalls(), "receiver mapped memory after warm-up");
            assertEquals(receiverMaps, receiverNode.registrar().memMapCalls());
            assertTrue(senderMaps >= 1 && receiverMaps >= 2, "local and remote chunks are mapped: " +
                senderMaps + ", " + receiverMaps);
            assertEquals(receiverNode.arena().region(sender.remote().address()).address(),
                receiverNode.memoryOf(sender.remote().address()).getAddress());
            sender.bye();
            sender.close();
            accepted.get().close();
        }
    }

    private static int freePort() throws java.io.IOException
    {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }
}

package dev.pinarena.messaging;

import org.agrona.concurrent.UnsafeBuffer;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucs.UcsConstants;

import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The sender/receiver pair shown in messaging/README.md, kept here so it always compiles.
 */
final class ReadmeExample
{
    private ReadmeExample()
    {
    }

    static void receiver(final AtomicBoolean running) throws Exception
    {
        try (ArenaNode node = ArenaNode.open(NodeConfig.softRoce()))                 // UCX on rxe0:1, rc_verbs
        {
            final long inbox = node.arena().allocate(1 << 20);                        // local scope: receives land here
            final long exposed = node.arena().allocateRemote(1 << 20);                // remote scope: peers put/get here
            final long hello = node.arena().allocate(256);
            node.onMessage(1, (header, headerLength, data, replyEp) ->
            {
                if (data.isDataValid())                                               // eager: bytes in UCX's buffer
                {
                    System.out.println("got " + data.getLength() + " B");
                }
                else                                                                  // rendezvous: RDMA into the arena
                {
                    node.receiveInto(data.getDataHandle(), inbox, data.getLength(), null);
                }
                return UcsConstants.STATUS.UCS_OK;
            });
            node.listen(new InetSocketAddress("10.0.2.15", 13337), request ->
            {
                final ArenaEndpoint peer = node.accept(request);
                final int n = RemoteBuffer.of(node, exposed, 1 << 20).encode(new UnsafeBuffer(hello, 256), 0);
                peer.send(2, 0, 0, hello, n, null);                                   // address, length, packed rkey
            });
            while (running.get())
            {
                node.progress();
            }
        }
    }

    static void sender() throws Exception
    {
        try (ArenaNode node = ArenaNode.open(NodeConfig.softRoce()))
        {
            final long out = node.arena().allocate(1 << 20);
            final RemoteBuffer[] target = new RemoteBuffer[1];
            final ArenaEndpoint peer = node.connect(new InetSocketAddress("10.0.2.15", 13337));
            node.onMessage(2, (header, headerLength, data, replyEp) ->                 // checked: bounds, key length
            {
                target[0] = peer.decodeRemote(new UnsafeBuffer(data.getDataAddress(), (int)data.getLength()), 0);
                return UcsConstants.STATUS.UCS_OK;
            });
            while (target[0] == null)
            {
                node.progress();
            }
            new UnsafeBuffer(out, 1 << 20).setMemory(0, 1 << 20, (byte)7);
            node.await(peer.send(1, 0, 0, out, 1 << 20, null));                       // the chunk's memh: no registration
            final UcpRemoteKey key = peer.unpackRemoteKey(target[0]);          // only keys from this peer
            node.await(peer.put(out, 4096, target[0].address(), key, null));          // RDMA WRITE into `exposed`
            node.await(peer.flush(null));
        }
    }
}

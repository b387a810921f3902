package dev.pinarena.messaging;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The second JVM of the Soft-RoCE check: listens, publishes a remote buffer, checks what the sender moves, and
 * exits 0 after the sender's goodbye (1 on a timeout or failure).
 * <p>
 * Usage: {@code ReceiverMain HOST PORT}. Prints {@code LISTENING} once the listener is up and
 * {@code RECEIVER DONE messages=N memMapCalls=M} at the end.
 */
public final class ReceiverMain
{
    private static final long TIMEOUT_NS = TimeUnit.MINUTES.toNanos(10);

    private ReceiverMain()
    {
    }

    /**
     * @param args host and port to listen on.
     * @throws Exception on failure.
     */
    public static void main(final String[] args) throws Exception
    {
        if (args.length != 2)
        {
            System.err.println("usage: ReceiverMain HOST PORT");
            System.exit(2);
        }
        try (ArenaNode node = ArenaNode.open(NodeConfig.softRoce()))
        {
            final CheckingReceiver receiver = new CheckingReceiver(node);
            final AtomicReference<ArenaEndpoint> peer = new AtomicReference<>();
            node.listen(new InetSocketAddress(args[0], Integer.parseInt(args[1])), request ->
            {
                final ArenaEndpoint endpoint = node.accept(request);
                peer.set(endpoint);
                receiver.greet(endpoint);
            });
            System.out.println("LISTENING");
            System.out.flush();
            final long deadline = System.nanoTime() + TIMEOUT_NS;
            while (!receiver.finished())
            {
                node.progress();
                receiver.poll();
                if (System.nanoTime() > deadline)
                {
                    System.err.println("receiver: timed out after " + receiver.messages() + " messages");
                    System.exit(1);
                }
            }
            System.out.println("RECEIVER DONE messages=" + receiver.messages() +
                " memMapCalls=" + node.registrar().memMapCalls());
            System.out.flush();
            peer.get().close();
        }
    }
}

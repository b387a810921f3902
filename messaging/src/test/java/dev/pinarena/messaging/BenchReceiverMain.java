package dev.pinarena.messaging;

import org.agrona.concurrent.UnsafeBuffer;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucs.UcsConstants;

import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The receiving JVM of {@link MessageRateBench}: receives active messages into one arena buffer (the same for
 * every sender mode, so only the sender's registration path differs) and answers each SYNC once it has received
 * as many messages as the SYNC names. Usage: {@code BenchReceiverMain HOST PORT}.
 */
public final class BenchReceiverMain
{
    static final int DATA = 10;
    static final int SYNC = 11;
    static final int SYNCED = 12;
    static final int STOP = 13;

    private static long received;
    private static long syncTarget = -1;
    private static boolean stop;

    private BenchReceiverMain()
    {
    }

    /**
     * @param args host and port.
     * @throws Exception on failure.
     */
    public static void main(final String[] args) throws Exception
    {
        try (ArenaNode node = ArenaNode.open(NodeConfig.softRoce()))
        {
            final long receive = node.arena().allocate(CheckProtocol.MAX_MESSAGE);
            final long header = node.arena().allocate(8);
            final AtomicReference<ArenaEndpoint> peer = new AtomicReference<>();
            final UcxCallback counted = new UcxCallback()
            {
                public void onSuccess(final UcpRequest request)
                {
                    received++;
                }
            };
            node.onMessage(DATA, (h, hl, data, ep) ->
            {
                if (data.isDataValid())
                {
                    received++;
                }
                else
                {
                    node.receiveInto(data.getDataHandle(), receive, data.getLength(), counted);
                }
                return UcsConstants.STATUS.UCS_OK;
            });
            node.onMessage(SYNC, (h, hl, data, ep) ->
            {
                syncTarget = new UnsafeBuffer(h, 8).getLong(0);
                return UcsConstants.STATUS.UCS_OK;
            });
            node.onMessage(STOP, (h, hl, data, ep) ->
            {
                stop = true;
                return UcsConstants.STATUS.UCS_OK;
            });
            node.listen(new InetSocketAddress(args[0], Integer.parseInt(args[1])), request -> peer.set(node.accept(request)));
            System.out.println("LISTENING");
            System.out.flush();
            while (!stop)
            {
                node.progress();
                if (syncTarget >= 0 && received >= syncTarget)
                {
                    syncTarget = -1;
                    new UnsafeBuffer(header, 8).putLong(0, received);
                    node.await(peer.get().send(SYNCED, header, 8, header, 0, null));
                }
            }
            System.out.println("BENCH RECEIVER DONE received=" + received + " memMapCalls=" +
                node.registrar().memMapCalls());
            peer.get().close();
        }
    }
}

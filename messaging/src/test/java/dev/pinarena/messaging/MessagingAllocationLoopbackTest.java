package dev.pinarena.messaging;

import org.junit.jupiter.api.Test;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpRequestParams;
import org.openucx.jucx.ucs.UcsConstants;

import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Java heap per message of {@link ArenaEndpoint#send}, {@link ArenaEndpoint#put} and {@link ArenaEndpoint#get}
 * (64 B, over tcp on lo), counted with the JVM's per-thread allocation counter (what JMH's {@code -prof gc}
 * reads) around the issuing call alone, after a warm-up, beside the same JUCX call made directly with
 * prebuilt parameters. JUCX allocates a {@code UcpRequest} per request, which no caller can avoid; the test
 * asserts the endpoint adds nothing to it, and prints both with the whole round (completion included).
 */
class MessagingAllocationLoopbackTest
{
    private static final int WARM_UP = 20_000;
    private static final int MEASURED = 5_000;
    private static final int SIZE = 64;
    private static final int DATA = 9;

    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();

    /** One way of issuing one message. */
    @FunctionalInterface
    private interface Issue
    {
        UcpRequest issue();
    }

    @Test
    void sendPutAndGetAllocateNoMoreThanJucxItself() throws Exception
    {
        try (LoopbackPair pair = new LoopbackPair())
        {
            pair.server.onMessage(DATA, (h, hl, data, ep) -> UcsConstants.STATUS.UCS_OK);
            final ArenaEndpoint peer = pair.toServer;
            final RemoteBuffer remote = peer.decodeRemote(pair.hello(), 0);
            final UcpRemoteKey key = peer.unpackRemoteKey(remote);
            final long local = pair.client.arena().allocate(SIZE);
            final UcpEndpoint raw = peer.endpoint();
            final UcpRequestParams params = new HostMemoryParams().with(pair.client.memoryOf(local));

            final double[][] perOp = {
                measure(pair, () -> peer.send(DATA, 0, 0, local, SIZE, null)),
                measure(pair, () -> raw.sendAmNonBlocking(DATA, 0, 0, local, SIZE, 0, null, params)),
                measure(pair, () -> peer.put(local, SIZE, remote.address(), key, null)),
                measure(pair, () -> raw.putNonBlocking(local, SIZE, remote.address(), key, null, params)),
                measure(pair, () -> peer.get(remote.address(), key, local, SIZE, null)),
                measure(pair, () -> raw.getNonBlocking(remote.address(), key, local, SIZE, null, params)),
            };
            final String[] names = {"send", "put", "get"};
            final StringBuilder report = new StringBuilder();
            for (int i = 0; i < names.length; i++)
            {
                report.append(String.format("%s %d B: endpoint %.1f B/op, JUCX directly %.1f B/op; whole round %.1f B/op%n",
                    names[i], SIZE, perOp[2 * i][0], perOp[2 * i + 1][0], perOp[2 * i][1]));
            }
            System.out.print(report);
            for (int i = 0; i < names.length; i++)
            {
                assertEquals(perOp[2 * i + 1][0], perOp[2 * i][0], 0.5,
                    names[i] + ": the endpoint allocates beyond JUCX's own request\n" + report);
            }
            key.close();
            peer.close();
            pair.toClient.close();
        }
    }

    /**
     * @return bytes per message allocated by the issuing call, and by the whole round (issue + completion).
     */
    private static double[] measure(final LoopbackPair pair, final Issue issue) throws Exception
    {
        round(pair, issue, WARM_UP, null);
        final long[] issued = new long[1];
        final long before = THREADS.getCurrentThreadAllocatedBytes();
        round(pair, issue, MEASURED, issued);
        final long whole = THREADS.getCurrentThreadAllocatedBytes() - before;
        final long probe = probeCost();
        return new double[] {(double)(issued[0] - probe * MEASURED) / MEASURED, (double)whole / MEASURED};
    }

    private static void round(final LoopbackPair pair, final Issue issue, final int count, final long[] issued)
        throws Exception
    {
        for (int i = 0; i < count; i++)
        {
            final long t0 = THREADS.getCurrentThreadAllocatedBytes();
            final UcpRequest request = issue.issue();
            final long t1 = THREADS.getCurrentThreadAllocatedBytes();
            if (issued != null)
            {
                issued[0] += t1 - t0;
            }
            while (request != null && !request.isCompleted())
            {
                pair.client.progress();
                pair.server.progress();
            }
            assertTrue(request == null || request.getStatus() == UcsConstants.STATUS.UCS_OK, "request failed");
        }
        pair.server.progress();
    }

    /** @return what reading the counter twice allocates by itself (subtracted from every sample). */
    private static long probeCost()
    {
        long min = Long.MAX_VALUE;
        for (int i = 0; i < 1000; i++)
        {
            final long t0 = THREADS.getCurrentThreadAllocatedBytes();
            final long t1 = THREADS.getCurrentThreadAllocatedBytes();
            min = Math.min(min, t1 - t0);
        }
        return min;
    }
}

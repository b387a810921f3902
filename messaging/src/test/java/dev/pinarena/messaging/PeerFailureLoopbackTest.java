package dev.pinarena.messaging;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucs.UcsConstants;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer that dies mid-transfer fails its endpoint, not the node: {@link ArenaNode#progress()} keeps running,
 * the transfer's request completes with an error status (and its callback's onError), the node's
 * {@link PeerFailureHandler} hears of that endpoint once, and new requests on it are refused.
 */
class PeerFailureLoopbackTest
{
    private static final int LARGE = 4 << 20;

    @Test
    void aPeerDyingMidTransferFailsThatEndpointsRequestsNotProgress() throws Exception
    {
        try (LoopbackPair pair = new LoopbackPair())
        {
            final List<ArenaEndpoint> failed = new ArrayList<>();
            pair.client.onPeerFailure((endpoint, status, message) -> failed.add(endpoint));
            final RemoteBuffer remote = pair.toServer.decodeRemote(pair.hello(), 0);
            final UcpRemoteKey key = pair.toServer.unpackRemoteKey(remote);
            final long local = pair.client.arena().allocate(LARGE);
            new UnsafeBuffer(local, LARGE).setMemory(0, LARGE, (byte)3);

            final AtomicInteger errors = new AtomicInteger();
            final UcxCallback counting = new UcxCallback()
            {
                public void onError(final int status, final String message)
                {
                    errors.incrementAndGet();
                }
            };
            // Rendezvous: the server must fetch the data, and it never progresses again.
            final UcpRequest send = pair.toServer.send(7, 0, 0, local, LARGE, counting);
            final UcpRequest get = pair.toServer.get(remote.address(), key, local, LoopbackPair.REMOTE_LENGTH, counting);
            for (int i = 0; i < 20; i++)
            {
                pair.client.progress();
            }
            pair.killServer();

            pair.progressUntil(() -> send.isCompleted() && get.isCompleted() && pair.toServer.failed(),
                "the transfer to fail after the peer died");

            assertNotEquals(UcsConstants.STATUS.UCS_OK, send.getStatus(), "the send to the dead peer");
            assertTrue(errors.get() >= 1, "onError of the outstanding requests: " + errors.get());
            assertEquals(1, failed.size(), "the failure handler heard of the endpoint once");
            assertSame(pair.toServer, failed.get(0));
            assertNotEquals(UcsConstants.STATUS.UCS_OK, pair.toServer.failureStatus());
            final PeerFailedException refused = assertThrows(PeerFailedException.class,
                () -> pair.toServer.put(local, 64, remote.address(), key, null));
            assertEquals(pair.toServer.failureStatus(), refused.status());
            for (int i = 0; i < 100; i++)
            {
                pair.client.progress();
            }
            key.close();
            pair.toServer.close();
        }
    }
}

package dev.pinarena.messaging;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.openucx.jucx.ucp.UcpRemoteKey;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Only a key that arrived from an endpoint's own peer, through {@link ArenaEndpoint#decodeRemote}, reaches UCX's
 * unpack on that endpoint; 64 random bytes dressed as a descriptor, a locally made descriptor and one decoded
 * on another endpoint are refused before UCX sees them (UCX parses a packed key unchecked).
 */
class RemoteKeyTrustLoopbackTest
{
    @Test
    void unpacksOnlyKeysFromTheConnectedPeersHello() throws Exception
    {
        try (LoopbackPair pair = new LoopbackPair())
        {
            final RemoteBuffer fromPeer = pair.toServer.decodeRemote(pair.hello(), 0);
            final UcpRemoteKey key = pair.toServer.unpackRemoteKey(fromPeer);
            new UnsafeBuffer(pair.exposed, 64).setMemory(0, 64, (byte)0x5a);
            final long local = pair.client.arena().allocate(64);
            pair.await(pair.toServer.get(fromPeer.address(), key, local, 64, null), "a get with the peer's key");
            assertEquals((byte)0x5a, new UnsafeBuffer(local, 64).getByte(63), "the key from the HELLO reaches the buffer");

            final byte[] random = new byte[64];
            new SplittableRandom(23).nextBytes(random);
            final UnsafeBuffer forged = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
            forged.putBytes(0, random);
            forged.putLong(RemoteBuffer.ADDRESS_OFFSET, fromPeer.address());
            forged.putLong(RemoteBuffer.LENGTH_OFFSET, 64);
            forged.putInt(RemoteBuffer.KEY_LENGTH_OFFSET, 64 - RemoteBuffer.KEY_OFFSET);
            final RemoteBuffer randomKey = RemoteBuffer.decode(forged, 0);
            final ForeignRemoteKeyException refused =
                assertThrows(ForeignRemoteKeyException.class, () -> pair.toServer.unpackRemoteKey(randomKey));
            assertTrue(refused.getMessage().contains("not received from this endpoint's peer"), refused.getMessage());

            final RemoteBuffer madeHere = RemoteBuffer.of(pair.server, pair.exposed, 64);
            assertThrows(ForeignRemoteKeyException.class, () -> pair.toServer.unpackRemoteKey(madeHere));

            final UnsafeBuffer wire = new UnsafeBuffer(ByteBuffer.allocateDirect(madeHere.encodedLength()));
            madeHere.encode(wire, 0);
            final RemoteBuffer otherEndpoint = pair.toClient.decodeRemote(wire, 0);
            assertThrows(ForeignRemoteKeyException.class, () -> pair.toServer.unpackRemoteKey(otherEndpoint));

            key.close();
            pair.toServer.close();
            pair.toClient.close();
        }
    }
}

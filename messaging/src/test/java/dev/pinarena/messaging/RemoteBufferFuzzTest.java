package dev.pinarena.messaging;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Random and truncated peer bytes thrown at {@link RemoteBuffer#decode}, the decoder every descriptor from a peer
 * goes through ({@link ArenaEndpoint#decodeRemote} included): it either returns a descriptor that lies wholly
 * inside the bytes it was given, or throws {@link MalformedPeerInputException}; never another exception, never
 * an allocation the bytes did not pay for.
 *
 * <p>Inputs come from a {@link SplittableRandom} whose seed every failure message names; rerun one with
 * {@code -Dpinarena.fuzz.seed=SEED}. Each case also tries the edges (empty input, offsets just outside).
 */
class RemoteBufferFuzzTest
{
    private static final long SEED = Long.getLong("pinarena.fuzz.seed", System.nanoTime());

    @Test
    void randomBytesDecodeWithinBoundsOrAreRefused()
    {
        final SplittableRandom random = new SplittableRandom(SEED);
        for (int i = 0; i < 3000; i++)
        {
            final byte[] bytes = new byte[random.nextInt(161)];
            random.nextBytes(bytes);
            if (bytes.length >= RemoteBuffer.KEY_OFFSET && random.nextBoolean())
            {
                // a plausible header half the time, so that decoding gets past the first checks
                final UnsafeBuffer header = new UnsafeBuffer(bytes);
                header.putInt(RemoteBuffer.KEY_LENGTH_OFFSET, random.nextInt(-2, bytes.length + 2));
            }
            randomBytesCase(bytes, random.nextInt(-8, 171), "seed " + SEED + " case " + i);
        }
    }

    private static void randomBytesCase(final byte[] bytes, final int offset, final String where)
    {
        final UnsafeBuffer wire = new UnsafeBuffer(ByteBuffer.allocateDirect(bytes.length));
        wire.putBytes(0, bytes);
        final RemoteBuffer decoded;
        try
        {
            decoded = RemoteBuffer.decode(wire, offset);
        }
        catch (final MalformedPeerInputException refused)
        {
            return;
        }
        catch (final RuntimeException | OutOfMemoryError other)
        {
            fail(where + ": decoding " + bytes.length + " peer bytes at offset " + offset + " threw " + other);
            return;
        }
        assertTrue(offset >= 0 && (long)offset + decoded.encodedLength() <= bytes.length,
            where + ": " + decoded + " at " + offset);
        assertTrue(decoded.packedKey().remaining() <= RemoteBuffer.MAX_KEY_LENGTH);
        assertTrue(decoded.length() > 0 && Long.compareUnsigned(decoded.address() + decoded.length(), decoded.address()) > 0);
        final UnsafeBuffer again = new UnsafeBuffer(ByteBuffer.allocateDirect(decoded.encodedLength()));
        decoded.encode(again, 0);
        final byte[] original = new byte[decoded.encodedLength()];
        final byte[] reencoded = new byte[decoded.encodedLength()];
        wire.getBytes(offset, original);
        again.getBytes(0, reencoded);
        assertArrayEquals(original, reencoded, where + ": the descriptor is exactly the bytes it came from");
    }

    @Test
    void everyTruncationOfAValidDescriptorIsRefused()
    {
        final SplittableRandom random = new SplittableRandom(SEED);
        for (int i = 0; i < 300; i++)
        {
            final int keyLength = 1 + random.nextInt(300);
            final long address = 1 + random.nextLong(1L << 47);
            final long length = 1 + random.nextLong(1L << 40);
            truncationCase(keyLength, address, length, "seed " + SEED + " case " + i);
        }
    }

    private static void truncationCase(final int keyLength, final long address, final long length, final String where)
    {
        final RemoteBuffer original = new RemoteBuffer(address, length, ByteBuffer.allocateDirect(keyLength));
        final UnsafeBuffer full = new UnsafeBuffer(ByteBuffer.allocateDirect(original.encodedLength()));
        original.encode(full, 0);
        assertEquals(original.address(), RemoteBuffer.decode(full, 0).address(), where + ": the whole descriptor decodes");

        for (int kept = 0; kept < original.encodedLength(); kept++)
        {
            final UnsafeBuffer truncated = new UnsafeBuffer(full, 0, kept);
            final int k = kept;
            assertThrows(MalformedPeerInputException.class, () -> RemoteBuffer.decode(truncated, 0),
                where + ": " + k + " of " + original.encodedLength() + " bytes");
        }
    }

    @Test
    void anyClaimedKeyLengthInAShortHelloIsBounded()
    {
        final SplittableRandom random = new SplittableRandom(SEED);
        final int[] edges = { Integer.MIN_VALUE, -1, 0, 1, 64 - RemoteBuffer.KEY_OFFSET, 65 - RemoteBuffer.KEY_OFFSET,
            RemoteBuffer.MAX_KEY_LENGTH, RemoteBuffer.MAX_KEY_LENGTH + 1, 2147483639, Integer.MAX_VALUE };
        for (final int edge : edges)
        {
            claimedKeyLengthCase(edge, "edge");
        }
        for (int i = 0; i < 1000; i++)
        {
            claimedKeyLengthCase(random.nextInt(), "seed " + SEED + " case " + i);
        }
    }

    private static void claimedKeyLengthCase(final int claimedKeyLength, final String where)
    {
        final UnsafeBuffer hello = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
        hello.putLong(RemoteBuffer.ADDRESS_OFFSET, 0x7f00_0000_0000L);
        hello.putLong(RemoteBuffer.LENGTH_OFFSET, 4096);
        hello.putInt(RemoteBuffer.KEY_LENGTH_OFFSET, claimedKeyLength);
        if (claimedKeyLength >= 1 && claimedKeyLength <= 64 - RemoteBuffer.KEY_OFFSET)
        {
            assertEquals(claimedKeyLength, RemoteBuffer.decode(hello, 0).packedKey().remaining(), where);
        }
        else
        {
            assertThrows(MalformedPeerInputException.class, () -> RemoteBuffer.decode(hello, 0),
                where + ": claimed key length " + claimedKeyLength);
        }
    }
}

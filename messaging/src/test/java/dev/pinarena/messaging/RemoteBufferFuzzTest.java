package dev.pinarena.messaging;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;

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
 */
class RemoteBufferFuzzTest
{
    @Property(tries = 3000)
    void randomBytesDecodeWithinBoundsOrAreRefused(
        @ForAll @Size(max = 160) final byte[] bytes, @ForAll @IntRange(min = -8, max = 170) final int offset)
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
            fail("decoding " + bytes.length + " peer bytes at offset " + offset + " threw " + other);
            return;
        }
        assertTrue(offset >= 0 && (long)offset + decoded.encodedLength() <= bytes.length, decoded + " at " + offset);
        assertTrue(decoded.packedKey().remaining() <= RemoteBuffer.MAX_KEY_LENGTH);
        assertTrue(decoded.length() > 0 && Long.compareUnsigned(decoded.address() + decoded.length(), decoded.address()) > 0);
        final UnsafeBuffer again = new UnsafeBuffer(ByteBuffer.allocateDirect(decoded.encodedLength()));
        decoded.encode(again, 0);
        final byte[] original = new byte[decoded.encodedLength()];
        final byte[] reencoded = new byte[decoded.encodedLength()];
        wire.getBytes(offset, original);
        again.getBytes(0, reencoded);
        assertArrayEquals(original, reencoded, "the descriptor is exactly the bytes it came from");
    }

    @Property(tries = 1000)
    void everyTruncationOfAValidDescriptorIsRefused(
        @ForAll @IntRange(min = 1, max = 300) final int keyLength,
        @ForAll @LongRange(min = 1, max = 1L << 47) final long address,
        @ForAll @LongRange(min = 1, max = 1L << 40) final long length,
        @ForAll @IntRange(min = 0, max = 1 << 20) final int cut)
    {
        final RemoteBuffer original = new RemoteBuffer(address, length, ByteBuffer.allocateDirect(keyLength));
        final UnsafeBuffer full = new UnsafeBuffer(ByteBuffer.allocateDirect(original.encodedLength()));
        original.encode(full, 0);
        assertEquals(original.address(), RemoteBuffer.decode(full, 0).address(), "the whole descriptor decodes");

        final int kept = cut % original.encodedLength();
        final UnsafeBuffer truncated = new UnsafeBuffer(full, 0, kept);
        assertThrows(MalformedPeerInputException.class, () -> RemoteBuffer.decode(truncated, 0),
            kept + " of " + original.encodedLength() + " bytes");
    }

    @Property(tries = 1000)
    void anyClaimedKeyLengthInAShortHelloIsBounded(@ForAll final int claimedKeyLength)
    {
        final UnsafeBuffer hello = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
        hello.putLong(RemoteBuffer.ADDRESS_OFFSET, 0x7f00_0000_0000L);
        hello.putLong(RemoteBuffer.LENGTH_OFFSET, 4096);
        hello.putInt(RemoteBuffer.KEY_LENGTH_OFFSET, claimedKeyLength);
        if (claimedKeyLength >= 1 && claimedKeyLength <= 64 - RemoteBuffer.KEY_OFFSET)
        {
            assertEquals(claimedKeyLength, RemoteBuffer.decode(hello, 0).packedKey().remaining());
        }
        else
        {
            assertThrows(MalformedPeerInputException.class, () -> RemoteBuffer.decode(hello, 0),
                "claimed key length " + claimedKeyLength);
        }
    }
}

package dev.pinarena.messaging;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RemoteBufferTest
{
    @Test
    void roundTripsAddressLengthAndKey()
    {
        final ByteBuffer key = ByteBuffer.allocateDirect(37);
        for (int i = 0; i < 37; i++)
        {
            key.put(i, (byte)(i * 7 + 1));
        }
        final RemoteBuffer original = new RemoteBuffer(0x7f00_1234_0000L, 4 << 20, key);
        final UnsafeBuffer wire = new UnsafeBuffer(ByteBuffer.allocateDirect(128));
        final int written = original.encode(wire, 8);
        assertEquals(original.encodedLength(), written);

        final RemoteBuffer decoded = RemoteBuffer.decode(wire, 8);
        assertEquals(original.address(), decoded.address());
        assertEquals(original.length(), decoded.length());
        assertEquals(key.duplicate().clear(), decoded.packedKey());
        assertTrue(decoded.packedKey().isDirect(), "JUCX unpacks keys from direct buffers only");
    }

    @Test
    void refusesAKeyLengthThatDoesNotFit()
    {
        final UnsafeBuffer wire = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
        wire.putInt(RemoteBuffer.KEY_LENGTH_OFFSET, 1000);
        final IllegalArgumentException refused =
            assertThrows(IllegalArgumentException.class, () -> RemoteBuffer.decode(wire, 0));
        assertTrue(refused.getMessage().contains("1000"), refused.getMessage());
        wire.putInt(RemoteBuffer.KEY_LENGTH_OFFSET, 0);
        assertThrows(IllegalArgumentException.class, () -> RemoteBuffer.decode(wire, 0));
    }

    @Test
    void refusesAHelloClaimingATwoGibKeyBeforeAllocatingIt()
    {
        final UnsafeBuffer hello = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
        hello.putLong(RemoteBuffer.ADDRESS_OFFSET, 0x7f00_0000_0000L);
        hello.putLong(RemoteBuffer.LENGTH_OFFSET, 4096);
        hello.putInt(RemoteBuffer.KEY_LENGTH_OFFSET, 2147483639);
        final MalformedPeerInputException refused =
            assertThrows(MalformedPeerInputException.class, () -> RemoteBuffer.decode(hello, 0));
        assertTrue(refused.getMessage().contains("2147483639"), refused.getMessage());
    }

    @Test
    void refusesTruncatedHeadersNegativeOffsetsAndWrappingRanges()
    {
        final UnsafeBuffer wire = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
        wire.putInt(RemoteBuffer.KEY_LENGTH_OFFSET, 8);
        wire.putLong(RemoteBuffer.ADDRESS_OFFSET, -4096);
        wire.putLong(RemoteBuffer.LENGTH_OFFSET, 8192);
        assertThrows(MalformedPeerInputException.class, () -> RemoteBuffer.decode(wire, 0), "wraps");
        wire.putLong(RemoteBuffer.ADDRESS_OFFSET, 4096);
        wire.putLong(RemoteBuffer.LENGTH_OFFSET, -1);
        assertThrows(MalformedPeerInputException.class, () -> RemoteBuffer.decode(wire, 0), "negative length");
        wire.putLong(RemoteBuffer.LENGTH_OFFSET, 8192);
        assertEquals(8192, RemoteBuffer.decode(wire, 0).length());
        assertThrows(MalformedPeerInputException.class, () -> RemoteBuffer.decode(wire, -1), "negative offset");
        assertThrows(MalformedPeerInputException.class, () -> RemoteBuffer.decode(wire, 50), "header past the end");
        assertThrows(MalformedPeerInputException.class,
            () -> RemoteBuffer.decode(wire, Integer.MAX_VALUE - 4), "offset near the int limit");
    }

    @Test
    void refusesAnEmptyBuffer()
    {
        assertThrows(IllegalArgumentException.class, () -> new RemoteBuffer(4096, 0, ByteBuffer.allocateDirect(8)));
    }
}

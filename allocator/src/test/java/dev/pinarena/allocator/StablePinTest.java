package dev.pinarena.allocator;

import dev.pinarena.registration.Region;
import dev.pinarena.registration.os.PageMap;
import dev.pinarena.registration.uring.FixedBufferProbe;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The seed hazard, closed: an address the arena hands out again means the same physical frames, the
 * registration count does not move after warm-up, and what the kernel sends through the registration is
 * what was just written.
 */
class StablePinTest extends ArenaFixture
{
    private static final long[] SIZES = {64, 4096, 64 * 1024, 1 << 20, 6L << 20};

    @Test
    void sameAddressSameFramesAndConstantRegistrationsAcrossCycles()
    {
        try (PageMap pageMap = PageMap.open())
        {
            for (final long size : SIZES)
            {
                final long first = arena.allocate(size);
                final long[] frames = pageMap.frames(first, size);
                arena.free(first);
                final long registrations = arena.stats().registrations();
                final long pinned = registrar.pinnedBytes();
                for (int cycle = 0; cycle < 100; cycle++)
                {
                    final long again = arena.allocate(size);
                    assertEquals(first, again, "LIFO reuse of the same address for size " + size);
                    if (cycle % 25 == 0)
                    {
                        assertArrayEquals(frames, pageMap.frames(again, size), "same frames for size " + size);
                    }
                    arena.free(again);
                }
                assertEquals(registrations, arena.stats().registrations(), "no registration after warm-up");
                assertEquals(pinned, registrar.pinnedBytes());
            }
        }
    }

    @Test
    void bytesSentThroughTheRegionAreTheBytesJustWritten()
    {
        for (final long size : SIZES)
        {
            for (int cycle = 0; cycle < 3; cycle++)
            {
                final long address = arena.allocate(size);
                final Region region = arena.region(address);
                assertSame(region, arena.region(address + size - 1), "one region covers the whole buffer");
                assertTrue(region.covers(address, size));
                assertEquals(region.lkey(), arena.lkey(address));
                final byte[] message = ("cycle " + cycle + " of " + size + " bytes, written just now")
                    .getBytes(StandardCharsets.US_ASCII);
                final UnsafeBuffer view = new UnsafeBuffer(address, (int)Math.min(size, Integer.MAX_VALUE));
                view.putBytes(0, message);
                final byte[] sent = FixedBufferProbe.send(registrar, region, address, message.length);
                assertEquals(new String(message, StandardCharsets.US_ASCII), new String(sent, StandardCharsets.US_ASCII));
                // And the last bytes of the buffer too (the far end of a run or dedicated chunk).
                final long tail = address + size - message.length;
                new UnsafeBuffer(tail, message.length).putBytes(0, message);
                assertArrayEquals(message, FixedBufferProbe.send(registrar, region, tail, message.length));
                Arrays.fill(message, (byte)0);
                arena.free(address);
            }
        }
    }
}

package dev.pinarena.allocator;

import dev.pinarena.registration.uring.IoUringRegistrar;
import org.agrona.MutableDirectBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PinnedBufferTest
{
    @Test
    void flyweightWrapsViewsAndReleasesWithTryWithResources()
    {
        try (IoUringRegistrar registrar = TestArenas.registrar())
        {
            final PinnedArena arena = PinnedArena.open(registrar, TestArenas.config(16L << 20));
            final PinnedBuffer buffer = new PinnedBuffer();
            long address;
            try (PinnedBuffer b = arena.allocate(1000, buffer))
            {
                final MutableDirectBuffer agrona = b;
                address = b.addressOffset();
                assertEquals(1000, agrona.capacity());
                agrona.putInt(996, 7);
                assertEquals(arena.lkey(address), b.lkey());
                assertSame(arena.region(address), b.region());
                assertThrows(NotRemoteBufferException.class, b::rkey);
                final ByteBuffer view = b.asByteBuffer();
                assertTrue(view.isDirect());
                assertEquals(1000, view.remaining());
                assertEquals(ByteOrder.nativeOrder(), view.order());
                assertEquals(7, view.getInt(996));
                view.putLong(0, 99);
                assertEquals(99, b.getLong(0));
                assertSame(view, b.asByteBuffer(), "one view per flyweight, re-aimed");
                assertThrows(IllegalStateException.class, () -> arena.allocate(10, b), "still holds a buffer");
            }
            assertFalse(buffer.isAttached());
            assertEquals(0, arena.stats().buffersInUse());
            buffer.close(); // idempotent
            try (PinnedBuffer b = arena.allocateRemote(64, buffer))
            {
                assertThrows(NoRemoteKeyException.class, b::rkey, "io_uring makes no keys for peers");
            }
            assertEquals(address, arena.allocate(1000), "the flyweight's buffer was freed");
            arena.close(true);
        }
    }

    @Test
    void anyPowerOfTwoAlignmentUpToTheArenaPage()
    {
        try (IoUringRegistrar registrar = TestArenas.registrar())
        {
            final PinnedArena arena = PinnedArena.open(registrar, TestArenas.config(32L << 20));
            for (int alignment = 1; alignment <= SizeClasses.ARENA_PAGE_SIZE; alignment <<= 1)
            {
                for (final long size : new long[]{1, 100, 3000, 70_000, 200_000})
                {
                    final long address = arena.allocate(size, alignment);
                    assertEquals(0, address % Math.max(alignment, 64), size + " aligned to " + alignment);
                    assertTrue(arena.usableSize(address) >= size);
                    arena.free(address);
                }
            }
            arena.close();
        }
    }
}

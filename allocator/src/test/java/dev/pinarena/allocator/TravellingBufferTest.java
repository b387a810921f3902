package dev.pinarena.allocator;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Buffers that travel between threads keep their keys, and a PinnedBuffer never lies about its memory.
 */
class TravellingBufferTest extends ArenaFixture
{
    @Test
    void anOwnedBufferTravelsToAConsumerThatUsesAndFreesIt() throws Exception
    {
        final BlockingQueue<PinnedBuffer> queue = new ArrayBlockingQueue<>(1);
        final int[] seen = new int[2];
        final Thread consumer = new Thread(() ->
        {
            try (PinnedBuffer b = queue.take())
            {
                seen[0] = b.getInt(0);
                seen[1] = b.lkey();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        });
        consumer.start();
        final PinnedBuffer buffer = arena.allocateBuffer(4096);
        buffer.putInt(0, 77);
        final int lkey = buffer.lkey();
        queue.put(buffer);
        consumer.join();
        assertEquals(77, seen[0]);
        assertEquals(lkey, seen[1]);
        assertFalse(buffer.isAttached());
        final ArenaStats stats = arena.stats();
        assertEquals(0, stats.buffersInUse());
        assertEquals(1, stats.crossThreadFrees(), "the consumer's close freed it back to the producer's heap");
    }

    @Test
    void anAddressWrapsIntoAFlyweightWithKeysAndCloseFreesIt() throws Exception
    {
        final long address = arena.allocateRemote(1000);
        final long[] keys = new long[3];
        final Thread consumer = new Thread(() ->
        {
            try (PinnedBuffer b = arena.wrap(address, new PinnedBuffer()))
            {
                keys[0] = b.lkey();
                try
                {
                    keys[1] = b.rkey();
                }
                catch (final NoRemoteKeyException ex)
                {
                    keys[1] = -1; // io_uring pins but makes no keys for peers: said, not a dead key handed out
                }
                keys[2] = b.capacity();
            }
        });
        consumer.start();
        consumer.join();
        assertEquals(arena.lkey(address), keys[0]);
        assertEquals(-1, keys[1], "the flyweight's rkey on an io_uring arena names the missing key");
        assertEquals(1024, keys[2], "the usable size of the 1024-byte block");
        assertEquals(0, arena.stats().buffersInUse());
        // Freed now: wrapping it again is refused, as is an interior pointer or a foreign address.
        assertThrows(UnknownAddressException.class, () -> arena.wrap(address, new PinnedBuffer()));
        final long run = arena.allocate(300_000);
        assertThrows(UnknownAddressException.class, () -> arena.wrap(run + 64, new PinnedBuffer()));
        assertThrows(UnknownAddressException.class, () -> arena.wrap(0x1000, new PinnedBuffer()));
        try (PinnedBuffer b = arena.wrap(run, new PinnedBuffer()))
        {
            assertEquals(arena.usableSize(run), b.capacity());
        }
    }

    @Test
    void byteBufferViewsAreArenaMemoryAndOnlyTheArenasOwnAreReAimed()
    {
        final long first = arena.allocate(64);
        final long second = arena.allocate(128);
        final ByteBuffer view = arena.byteBuffer(first, 64);
        assertEquals(first, org.agrona.BufferUtil.address(view));
        assertEquals(64, view.capacity());
        assertEquals(java.nio.ByteOrder.BIG_ENDIAN, view.order());
        final ByteBuffer again = arena.byteBuffer(second, 128, view);
        assertTrue(again == view, "re-aimed, not a new object");
        assertEquals(second, org.agrona.BufferUtil.address(view));
        assertEquals(128, view.capacity());
        assertThrows(IllegalArgumentException.class, () -> arena.byteBuffer(first, 64, ByteBuffer.allocate(64)));
        assertThrows(IllegalArgumentException.class, () -> arena.byteBuffer(first, 64, ByteBuffer.allocateDirect(64)));
        assertThrows(IllegalArgumentException.class, () -> arena.byteBuffer(first, (int)TestArenas.CHUNK + 1, view));
        assertThrows(UnknownAddressException.class, () -> arena.byteBuffer(0x1000, 8));
    }

    @Test
    void theInheritedWrapMethodsAreRefusedAndTheBufferKeepsItsMemory()
    {
        final PinnedBuffer buffer = arena.allocate(256, new PinnedBuffer());
        final long address = buffer.addressOffset();
        final int lkey = buffer.lkey();
        assertThrows(UnsupportedOperationException.class, () -> buffer.wrap(new byte[16]));
        assertThrows(UnsupportedOperationException.class, () -> buffer.wrap(new byte[16], 0, 8));
        assertThrows(UnsupportedOperationException.class, () -> buffer.wrap(ByteBuffer.allocateDirect(16)));
        assertThrows(UnsupportedOperationException.class, () -> buffer.wrap(ByteBuffer.allocateDirect(16), 0, 8));
        assertThrows(UnsupportedOperationException.class, () -> buffer.wrap(new org.agrona.concurrent.UnsafeBuffer(new byte[8])));
        assertThrows(UnsupportedOperationException.class, () -> buffer.wrap(new org.agrona.concurrent.UnsafeBuffer(new byte[8]), 0, 4));
        assertThrows(UnsupportedOperationException.class, () -> buffer.wrap(address + 64, 64));
        assertTrue(buffer.isAttached());
        assertEquals(address, buffer.addressOffset());
        assertEquals(256, buffer.capacity());
        assertEquals(lkey, buffer.lkey());
        buffer.close();
        assertEquals(0, buffer.capacity(), "a closed flyweight has no memory");
        assertThrows(IndexOutOfBoundsException.class, () -> buffer.putLong(0, 1));
    }

    @Test
    void afterAForcedCloseAHeldBufferReachesNoFreedMemory()
    {
        final PinnedBuffer small = arena.allocate(64, new PinnedBuffer());
        final PinnedBuffer large = arena.allocate(3 << 20, new PinnedBuffer());
        final long bare = arena.allocate(8 << 20); // a dedicated chunk, held as an address
        arena.close(true);
        // The chunks are deregistered and their pages released; the addresses stay mapped to scratch memory.
        small.putLong(0, 1);
        large.putLong((3 << 20) - 8, 2);
        org.agrona.UnsafeApi.putLong(bare, 3);
        assertEquals(2, large.getLong((3 << 20) - 8));
        assertThrows(ArenaClosedException.class, small::lkey);
        assertEquals(0, registrar.regionCount(), "nothing stays registered");
        small.close(); // detaches quietly: the forced close released the memory already
        assertFalse(small.isAttached());
        large.close();
    }
}

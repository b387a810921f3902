package dev.pinarena.allocator;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every kind of bad input gets its own exception naming the address and the reason, and the arena keeps
 * working afterwards.
 */
class BadInputTest extends ArenaFixture
{
    @Override
    protected long capBytes()
    {
        return 16L << 20;
    }

    private <T extends ArenaException> T expect(final Class<T> type, final long address, final Runnable call)
    {
        final T ex = assertThrows(type, call::run);
        assertEquals(address, ex.address());
        if (address != 0)
        {
            assertTrue(ex.getMessage().contains(Long.toHexString(address)), ex.getMessage());
        }
        return ex;
    }

    private void stillWorks()
    {
        final long a = arena.allocate(100);
        final long b = arena.allocate(50_000);
        final long c = arena.allocate(300_000);
        arena.free(a);
        arena.free(b);
        arena.free(c);
        assertEquals(0, arena.stats().buffersInUse());
    }

    @Test
    void doubleFreeOfABlockARunAndADedicatedBuffer()
    {
        for (final long size : new long[]{64, 4096, 1 << 20, 6L << 20})
        {
            final long address = arena.allocate(size);
            arena.free(address);
            expect(DoubleFreeException.class, address, () -> arena.free(address));
        }
        // 2 MiB: a run too long for the thread's cache, back in the pool, its pages free.
        final long uncached = arena.allocate(2L << 20);
        arena.free(uncached);
        expect(DoubleFreeException.class, uncached, () -> arena.free(uncached));
        // With the run cached by this thread the double free is named as such.
        final long run = arena.allocate(200_000);
        arena.free(run);
        expect(DoubleFreeException.class, run, () -> arena.free(run));
        final long block = arena.allocate(100);
        arena.free(block);
        expect(DoubleFreeException.class, block, () -> arena.free(block)).getMessage().contains("double free");
        stillWorks();
    }

    @Test
    void doubleFreeOfABlockWhoseSlabWasReleased()
    {
        final long[] blocks = new long[2048]; // 2 MiB of 1 KiB blocks: several slabs, the first one not current
        for (int i = 0; i < blocks.length; i++)
        {
            blocks[i] = arena.allocate(1024);
        }
        for (final long block : blocks)
        {
            arena.free(block);
        }
        expect(DoubleFreeException.class, blocks[0], () -> arena.free(blocks[0]));
        stillWorks();
    }

    @Test
    void freeInsideAFreedDedicatedBufferIsADoubleFree()
    {
        final long dedicated = arena.allocate(5L << 20);
        arena.free(dedicated);
        expect(DoubleFreeException.class, dedicated + (4L << 20), () -> arena.free(dedicated + (4L << 20)));
        stillWorks();
    }

    @Test
    void doubleFreeFromAnotherThreadIsCaught() throws Exception
    {
        final long block = arena.allocate(256);
        final Throwable[] second = new Throwable[1];
        final Thread other = new Thread(() ->
        {
            arena.free(block);
            try
            {
                arena.free(block);
            }
            catch (final Throwable t)
            {
                second[0] = t;
            }
        });
        other.start();
        other.join();
        assertTrue(second[0] instanceof DoubleFreeException, String.valueOf(second[0]));
        expect(DoubleFreeException.class, block, () -> arena.free(block)); // the owner, while the free is pending
        stillWorks();
    }

    @Test
    void addressesNeverGivenOut()
    {
        expect(UnknownAddressException.class, 0x1000, () -> arena.free(0x1000));
        expect(UnknownAddressException.class, 0, () -> arena.free(0));
        final long heapAddress = org.agrona.BufferUtil.address(java.nio.ByteBuffer.allocateDirect(64));
        expect(UnknownAddressException.class, heapAddress, () -> arena.free(heapAddress));
        final long block = arena.allocate(64);
        final long chunkBase = block & ~(TestArenas.CHUNK - 1);
        final long freePage = chunkBase + TestArenas.CHUNK - SizeClasses.ARENA_PAGE_SIZE;
        expect(UnknownAddressException.class, freePage, () -> arena.free(freePage));
        expect(UnknownAddressException.class, 0x1000, () -> arena.lkey(0x1000));
        arena.free(block);
        stillWorks();
    }

    @Test
    void interiorPointers()
    {
        final long block = arena.allocate(1000);
        expect(InteriorPointerException.class, block + 8, () -> arena.free(block + 8));
        final long run = arena.allocate(500_000);
        expect(InteriorPointerException.class, run + 64, () -> arena.free(run + 64));
        expect(InteriorPointerException.class, run + SizeClasses.ARENA_PAGE_SIZE,
            () -> arena.free(run + SizeClasses.ARENA_PAGE_SIZE));
        final long dedicated = arena.allocate(5L << 20);
        expect(InteriorPointerException.class, dedicated + (4L << 20), () -> arena.free(dedicated + (4L << 20)));
        arena.free(block);
        arena.free(run);
        arena.free(dedicated);
        stillWorks();
    }

    @Test
    void badSizesAndAlignments()
    {
        expect(InvalidSizeException.class, 0, () -> arena.allocate(0));
        expect(InvalidSizeException.class, 0, () -> arena.allocate(-5));
        expect(InvalidSizeException.class, 0, () -> arena.allocate(17L << 20));
        expect(InvalidSizeException.class, 0, () -> arena.allocate(Long.MAX_VALUE));
        expect(InvalidAlignmentException.class, 0, () -> arena.allocate(64, 48));
        expect(InvalidAlignmentException.class, 0, () -> arena.allocate(64, 0));
        expect(InvalidAlignmentException.class, 0, () -> arena.allocate(1 << 20, 1 << 16));
        stillWorks();
    }

    @Test
    void capReachedIsItsOwnErrorAndNothingLeaks()
    {
        final long first = arena.allocate(3L << 20);
        final long second = arena.allocate(3L << 20);
        final long third = arena.allocate(3L << 20);
        final long fourth = arena.allocate(3L << 20);
        final ArenaExhaustedException ex = expect(ArenaExhaustedException.class, 0, () -> arena.allocate(3L << 20));
        assertTrue(ex.getMessage().contains("cap"), ex.getMessage());
        assertEquals(16L << 20, arena.stats().pinnedBytes());
        arena.free(first);
        final long again = arena.allocate(3L << 20);
        assertEquals(first, again, "the freed run is reused");
        arena.free(again);
        arena.free(second);
        arena.free(third);
        arena.free(fourth);
        stillWorks();
    }

    @Test
    void closeRefusesWithBuffersOutstandingThenUseAfterClose()
    {
        final long block = arena.allocate(64);
        final BuffersOutstandingException ex = assertThrows(BuffersOutstandingException.class, () -> arena.close());
        assertTrue(ex.getMessage().contains("1 buffers"), ex.getMessage());
        arena.free(block);
        final long pinnedBefore = registrar.pinnedBytes();
        assertTrue(pinnedBefore > 0);
        arena.close();
        assertEquals(0, registrar.pinnedBytes(), "close deregisters every chunk");
        expect(ArenaClosedException.class, 0, () -> arena.allocate(64));
        expect(ArenaClosedException.class, block, () -> arena.free(block));
    }

    @Test
    void forcedCloseReleasesEverything()
    {
        arena.allocate(64);
        arena.allocate(1 << 20);
        arena.close(true);
        assertEquals(0, registrar.pinnedBytes());
        assertEquals(0, registrar.regionCount());
    }
}

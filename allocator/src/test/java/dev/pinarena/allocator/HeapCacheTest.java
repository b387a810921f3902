package dev.pinarena.allocator;

import org.junit.jupiter.api.Test;

import java.util.concurrent.SynchronousQueue;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The arena's last-heap cache never hands one thread another thread's heap, and the byte counts derived from
 * the per-class counters stay exact.
 */
class HeapCacheTest extends ArenaFixture
{
    @Test
    void threadsTakingTurnsEachUseTheirOwnHeap() throws Exception
    {
        final int rounds = 2000; // well past HEAP_CACHE_CLAIM_MISSES, so both threads claim the cache many times
        final SynchronousQueue<Long> toOther = new SynchronousQueue<>();
        final SynchronousQueue<Long> toMain = new SynchronousQueue<>();
        final Thread other = new Thread(() ->
        {
            try
            {
                for (int i = 0; i < rounds; i++)
                {
                    toOther.take();
                    for (int j = 0; j < ThreadHeaps.HEAP_CACHE_CLAIM_MISSES + 1; j++)
                    {
                        arena.free(arena.allocate(64 + (j & 3) * 64));
                    }
                    toMain.put(0L);
                }
            }
            catch (final InterruptedException ex)
            {
                throw new IllegalStateException(ex);
            }
        });
        other.start();
        for (int i = 0; i < rounds; i++)
        {
            for (int j = 0; j < ThreadHeaps.HEAP_CACHE_CLAIM_MISSES + 1; j++)
            {
                arena.free(arena.allocate(64 + (j & 3) * 64));
            }
            toOther.put(0L);
            toMain.take();
        }
        other.join();
        final ArenaStats stats = arena.stats();
        // A heap served to the wrong thread would turn its frees into cross-thread frees.
        assertEquals(0, stats.crossThreadFrees());
        assertEquals(2, stats.liveHeaps() + stats.adoptedHeaps());
        assertEquals(0, stats.bytesInUse());
    }

    @Test
    void bytesInUseCountsBlocksRunsAndDedicatedChunks() throws Exception
    {
        final long small = arena.allocate(100);         // 128-byte class
        final long medium = arena.allocate(4096);       // 4096-byte class
        final long run = arena.allocate(300 * 1024);    // a run of 38 arena pages
        final long dedicated = arena.allocate(TestArenas.CHUNK + 1); // a dedicated chunk of 2 chunk sizes
        final long usable = arena.usableSize(small) + arena.usableSize(medium) + arena.usableSize(run) +
            arena.usableSize(dedicated);
        assertEquals(usable, arena.stats().bytesInUse());

        final Thread freer = new Thread(() -> arena.free(medium)); // a cross-thread free of a block
        freer.start();
        freer.join();
        assertEquals(usable - 4096, arena.stats().bytesInUse());
        arena.free(small);
        arena.free(run);
        arena.free(dedicated);
        assertEquals(0, arena.stats().bytesInUse());
        assertEquals(4, arena.stats().classAllocations(arena.sizeClasses().classOf(100)) +
            arena.stats().classAllocations(arena.sizeClasses().classOf(4096)) +
            arena.stats().runAllocations() + arena.stats().dedicatedAllocations());
    }
}

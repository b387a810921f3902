package dev.pinarena.allocator;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Many short threads: what a dead thread leaves behind is bounded, whatever the number of threads before it,
 * and its blocks, freed locally, by a long-lived freer thread meanwhile (cross-thread, into slabs whose owner
 * may be dead, or adopted while the free is under way) or at the end, all come back.
 */
class ShortThreadsTest extends ArenaFixture
{
    private static final int THREADS = 20_000;
    private static final int WARM_UP = 2_000;
    /** Java heap the 18,000 threads after warm-up may leave retained: under 1 KiB each. */
    private static final long RETAINED_BOUND = 16L << 20;

    @Test
    void twentyThousandShortThreadsRetainABoundedJavaHeap() throws Exception
    {
        final long[] keptToTheEnd = new long[THREADS];
        final BlockingQueue<Long> handedOn = new ArrayBlockingQueue<>(1024);
        final Thread freer = new Thread(() ->
        {
            try
            {
                for (long block = handedOn.take(); block != 0; block = handedOn.take())
                {
                    arena.free(block);
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        });
        freer.start();
        long baseline = 0;
        for (int t = 0; t < THREADS; t++)
        {
            final int index = t;
            final Thread thread = new Thread(() ->
            {
                final long local = arena.allocate(64);
                final long other = arena.allocate(256);
                keptToTheEnd[index] = arena.allocate(1024);
                arena.free(local);
                handedOn.add(other); // freed by the freer thread, maybe after this thread died
            });
            thread.start();
            thread.join();
            if (t + 1 == WARM_UP)
            {
                baseline = usedHeapAfterGc();
            }
        }
        final long retained = usedHeapAfterGc() - baseline;
        assertTrue(retained < RETAINED_BOUND, "Java heap retained by " + (THREADS - WARM_UP) +
            " dead threads: " + retained + " B (" + retained / (THREADS - WARM_UP) + " B each), bound " +
            RETAINED_BOUND + " B");

        handedOn.put(0L);
        freer.join();
        for (final long block : keptToTheEnd)
        {
            arena.free(block);
        }
        arena.reclaimDeadThreads();
        final ArenaStats stats = arena.stats();
        assertEquals(0, stats.buffersInUse());
        assertTrue(stats.crossThreadFrees() >= THREADS / 2, "cross-thread frees: " + stats.crossThreadFrees());
        assertEquals(stats.crossThreadFrees(), stats.crossThreadFreesCollected());
        assertTrue(stats.liveHeaps() <= 16, "heaps still listed: " + stats.liveHeaps());
    }

    private static long usedHeapAfterGc() throws InterruptedException
    {
        final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++)
        {
            System.gc();
            Thread.sleep(20);
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}

package dev.pinarena.allocator;

import org.junit.jupiter.api.Test;

import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Metrics and statistics are read without the arena's lock, and the MXBean shows them over JMX.
 */
class MetricsTest extends ArenaFixture
{
    @Test
    void metricsAndStatsAreReadWhileAnotherThreadHoldsThePoolLock() throws Exception
    {
        final long address = arena.allocate(4096);
        final CountDownLatch locked = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final Thread holder = new Thread(() ->
        {
            synchronized (arena.pool)
            {
                locked.countDown();
                try
                {
                    release.await();
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            }
        });
        holder.start();
        locked.await();
        try
        {
            final CompletableFuture<long[]> read = CompletableFuture.supplyAsync(() -> new long[]{
                arena.metrics().getBuffersInUse(), arena.metrics().getPinnedBytes(), arena.metrics().getChunks(),
                arena.stats().buffersInUse()});
            final long[] values = read.get(10, TimeUnit.SECONDS); // would time out if a read took the lock
            assertEquals(1, values[0]);
            assertEquals(TestArenas.CHUNK, values[1]);
            assertEquals(1, values[2]);
            assertEquals(1, values[3]);
        }
        finally
        {
            release.countDown();
            holder.join();
        }
        arena.free(address);
        assertEquals(0, arena.metrics().getBuffersInUse());
    }

    @Test
    void theMXBeanIsPublishedAndGoneWhenTheArenaCloses() throws Exception
    {
        final ObjectName name = arena.metrics().register("metrics-test");
        final long address = arena.allocate(100);
        final Object inUse = ManagementFactory.getPlatformMBeanServer().getAttribute(name, "BuffersInUse");
        assertEquals(1L, inUse);
        final Object mix = ManagementFactory.getPlatformMBeanServer().getAttribute(name, "BackingMix");
        assertFalse("none".equals(mix), String.valueOf(mix));
        arena.free(address);
        arena.close();
        assertFalse(ManagementFactory.getPlatformMBeanServer().isRegistered(name));
        assertTrue(name.toString().startsWith(ArenaMetrics.DOMAIN + ":"), name.toString());
    }
}

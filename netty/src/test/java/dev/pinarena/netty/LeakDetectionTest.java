package dev.pinarena.netty;

import dev.pinarena.allocator.ArenaConfig;
import dev.pinarena.allocator.BufferScope;
import dev.pinarena.allocator.PinnedArena;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.uring.IoUringRegistrar;
import io.netty.buffer.ByteBuf;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import org.junit.jupiter.api.Test;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Buffers dropped without release are reported by Netty's leak detector, naming where they were allocated.
 * <p>
 * Runs in a JVM of its own (a Surefire execution for this class alone, with
 * {@code io.netty.leakDetection.level=paranoid}): the detector of every ByteBuf is made when Netty's buffer
 * classes load, so the factory that records the reports must be installed before, here in the static
 * initializer.
 */
class LeakDetectionTest
{
    private static final int DROPPED = 200;
    private static final Queue<String> REPORTS = new ConcurrentLinkedQueue<>();

    static
    {
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
    }

    @Test
    void buffersDroppedWithoutReleaseAreReportedWithWhereTheyWereAllocated() throws Exception
    {
        assertEquals(ResourceLeakDetector.Level.PARANOID, ResourceLeakDetector.getLevel(),
            "this class runs with -Dio.netty.leakDetection.level=paranoid (see netty/pom.xml)");
        final IoUringRegistrar registrar = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED));
        final PinnedArena arena =
            PinnedArena.open(registrar, ArenaConfig.defaults().withChunkSize(4L << 20).withCapBytes(64L << 20));
        try
        {
            final PinnedByteBufAllocator alloc = new PinnedByteBufAllocator(arena, BufferScope.LOCAL);
            dropUnreleased(alloc);
            assertEquals(DROPPED, arena.stats().buffersInUse());
            final long deadline = System.nanoTime() + 30_000_000_000L;
            while (REPORTS.isEmpty() && System.nanoTime() < deadline)
            {
                System.gc();
                Thread.sleep(10);
                alloc.directBuffer(64).release(); // the detector looks for collected buffers when it tracks one
            }
            assertFalse(REPORTS.isEmpty(), "no leak report for " + DROPPED + " dropped buffers");
            for (final String report : REPORTS)
            {
                assertTrue(report.contains("LeakDetectionTest.dropUnreleased"), "names the allocation: " + report);
            }
            // The leaked blocks stay allocated: their memory may still be used through a view or a NIC.
            assertEquals(DROPPED, arena.stats().buffersInUse());
        }
        finally
        {
            arena.close(true);
            registrar.close();
        }
    }

    private static void dropUnreleased(final PinnedByteBufAllocator alloc)
    {
        for (int i = 0; i < DROPPED; i++)
        {
            final ByteBuf buffer = alloc.directBuffer(256);
            buffer.writeLong(i);
        }
    }

    /** Makes detectors that keep every report they would log. */
    private static final class RecordingFactory extends ResourceLeakDetectorFactory
    {
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(
            final Class<T> resource, final int samplingInterval, final long maxActive)
        {
            return new ResourceLeakDetector<T>(resource, samplingInterval)
            {
                protected boolean needReport()
                {
                    return true; // whatever the logging backend's level
                }

                protected void reportTracedLeak(final String resourceType, final String records)
                {
                    REPORTS.add(records);
                    super.reportTracedLeak(resourceType, records);
                }

                protected void reportUntracedLeak(final String resourceType)
                {
                    REPORTS.add("untraced " + resourceType);
                    super.reportUntracedLeak(resourceType);
                }
            };
        }
    }
}

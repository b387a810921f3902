package dev.pinarena.allocator;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Test helper: runs hot loops on threads of their own until told to stop, and measures the Java heap bytes
 * those threads allocate (HotSpot's per-thread counter) over windows of time while they run.
 * <p>
 * A real per-operation allocation shows in every window (at least 16 bytes times the operations done); a
 * JIT transition (recompilation, deoptimization) can allocate a few bytes once. So the steady state is the
 * best window after a warm-up, and it must be exactly 0 bytes, with operations done in it.
 */
final class HotLoops implements AutoCloseable
{
    /** One iteration of a hot loop; returns a value so the work is not dead code. */
    interface Step
    {
        long run();
    }

    private static final long WARM_UP_MILLIS = 1_500;
    private static final long WINDOW_MILLIS = 150;
    private static final int WINDOWS = 12;

    private final com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<Thread> workers = new ArrayList<>();
    private final List<AtomicLong> counts = new ArrayList<>();
    private final List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * Starts a thread that runs {@code step} until {@link #close()}.
     */
    HotLoops start(final String name, final Step step)
    {
        final AtomicLong count = new AtomicLong();
        final Thread thread = new Thread(() ->
        {
            long sink = 0;
            try
            {
                long n = 0;
                while (running.getPlain())
                {
                    sink += step.run();
                    count.setRelease(++n);
                }
            }
            catch (final Throwable ex)
            {
                failures.add(ex);
            }
            if (sink == 42)
            {
                System.out.print("");
            }
        }, name);
        workers.add(thread);
        counts.add(count);
        thread.start();
        return this;
    }

    /**
     * Warms up, then asserts that the best window allocated nothing on any of the threads.
     *
     * @param pattern named in the failure message.
     */
    void assertNoGarbage(final String pattern) throws InterruptedException
    {
        Thread.sleep(WARM_UP_MILLIS);
        long bestBytes = Long.MAX_VALUE;
        long bestOps = 0;
        for (int window = 0; window < WINDOWS && bestBytes != 0; window++)
        {
            final long bytesBefore = allocated();
            final long opsBefore = ops();
            Thread.sleep(WINDOW_MILLIS);
            final long bytes = allocated() - bytesBefore;
            final long ops = ops() - opsBefore;
            if (ops > 0 && bytes < bestBytes)
            {
                bestBytes = bytes;
                bestOps = ops;
            }
        }
        assertTrue(failures.isEmpty(), () -> pattern + ": a loop failed: " + failures);
        assertTrue(bestOps > 0, pattern + ": no operation completed in any window");
        assertEquals(0, bestBytes, pattern + ": heap bytes allocated by the hot loops in the best window of " +
            WINDOW_MILLIS + " ms (" + bestOps + " operations)");
    }

    private long allocated()
    {
        long sum = 0;
        for (final Thread thread : workers)
        {
            sum += threads.getThreadAllocatedBytes(thread.getId());
        }
        return sum;
    }

    private long ops()
    {
        long sum = 0;
        for (final AtomicLong count : counts)
        {
            sum += count.getAcquire();
        }
        return sum;
    }

    /**
     * Stops and joins every loop.
     */
    public void close()
    {
        running.set(false);
        for (final Thread thread : workers)
        {
            try
            {
                thread.join();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
    }
}

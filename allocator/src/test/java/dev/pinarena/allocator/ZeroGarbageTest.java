package dev.pinarena.allocator;

import dev.pinarena.registration.uring.IoUringRegistrar;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The steady-state paths allocate nothing on the Java heap: measured with the JVM's per-thread allocation
 * counter (HotSpot's ThreadMXBean#getThreadAllocatedBytes).
 */
class ZeroGarbageTest
{
    private static final int WARM_UP = 200_000; // past C2 compilation of the loop
    private static final int MEASURED = 100_000;
    private static final int ROUNDS = 10;

    @Test
    void allocateAndFreeOfEverySizeKindAllocateNothing()
    {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final long self = Thread.currentThread().getId();
        try (IoUringRegistrar registrar = TestArenas.registrar())
        {
            final PinnedArena arena = PinnedArena.open(registrar, TestArenas.config(64L << 20));
            final PinnedBuffer buffer = new PinnedBuffer();
            for (final long size : new long[]{64, 4096, 64 * 1024, 1 << 20})
            {
                cycle(arena, size, WARM_UP, buffer);
                // A real per-operation allocation (16 bytes or more) shows in every round, at least
                // MEASURED x 16 bytes; a JIT transition on a loaded machine (recompilation, deoptimization)
                // can allocate a few bytes once. The steady state is the best round, and it must be 0.
                long least = Long.MAX_VALUE;
                for (int round = 0; round < ROUNDS && least != 0; round++)
                {
                    threads.getThreadAllocatedBytes(self);
                    final long before = threads.getThreadAllocatedBytes(self);
                    cycle(arena, size, MEASURED, buffer);
                    least = Math.min(least, threads.getThreadAllocatedBytes(self) - before);
                }
                assertEquals(0, least, "heap bytes allocated by " + MEASURED + " cycles of " + size +
                    " B (best of up to " + ROUNDS + " rounds)");
            }
            arena.close();
        }
    }

    private static long cycle(final PinnedArena arena, final long size, final int times, final PinnedBuffer buffer)
    {
        long sum = 0;
        for (int i = 0; i < times; i++)
        {
            final long address = arena.allocate(size);
            sum += arena.lkey(address);
            arena.free(address);
            try (PinnedBuffer b = arena.allocate((int)size, buffer))
            {
                b.putLong(0, i);
                final ByteBuffer view = b.asByteBuffer();
                sum += view.getLong(0) + view.capacity();
            }
        }
        return sum;
    }
}

package dev.pinarena.allocator;

import dev.pinarena.registration.uring.IoUringRegistrar;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two threads each allocate, hand the buffer to the other and free what the other handed over, as fast as
 * they can: nearly every free is cross-thread, slabs empty and go back to the pool while late remote frees
 * are still in flight. (The JMH cross-thread benchmark found a reuse race this way; this keeps it found.)
 */
class CrossThreadStressTest
{
    private static final int ROUNDS = 1_000_000;
    private static final int RING = 1024;

    @Test
    void pingPongFreesBalanceAndNothingIsHandedOutTwice() throws Exception
    {
        try (IoUringRegistrar registrar = TestArenas.registrar())
        {
            final PinnedArena arena = PinnedArena.open(registrar, TestArenas.config(256L << 20));
            final LongRing[] rings = {new LongRing(RING), new LongRing(RING)};
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final Thread[] threads = new Thread[2];
            final java.util.concurrent.atomic.AtomicInteger done = new java.util.concurrent.atomic.AtomicInteger();
            for (int t = 0; t < 2; t++)
            {
                final int mine = t;
                threads[t] = new Thread(() ->
                {
                    try
                    {
                        final long[] sizes = {64, 4096, 100, 65536, 700};
                        for (int i = 0; i < ROUNDS && failure.get() == null; i++)
                        {
                            final long size = sizes[i % sizes.length];
                            final long address = arena.allocate(size);
                            // The first word carries the address itself: a block handed out twice shows here.
                            org.agrona.UnsafeApi.putLong(address, address);
                            // Wait for room while the peer runs (freeing what it sends meanwhile), so that
                            // nearly every free is cross-thread; once the peer is done, free locally.
                            while (!rings[mine].offer(address))
                            {
                                if (done.get() != 0 || !drain(arena, rings[1 - mine]))
                                {
                                    if (done.get() != 0)
                                    {
                                        check(address);
                                        arena.free(address);
                                        break;
                                    }
                                    Thread.onSpinWait();
                                }
                            }
                            drain(arena, rings[1 - mine]);
                        }
                        done.incrementAndGet();
                    }
                    catch (final Throwable ex)
                    {
                        failure.compareAndSet(null, ex);
                        done.incrementAndGet();
                    }
                }, "ping-pong-" + t);
            }
            for (final Thread thread : threads)
            {
                thread.start();
            }
            for (final Thread thread : threads)
            {
                thread.join();
            }
            if (failure.get() != null)
            {
                throw new AssertionError("a ping-pong thread failed", failure.get());
            }
            for (final LongRing ring : rings)
            {
                long address;
                while ((address = ring.poll()) != 0)
                {
                    arena.free(address);
                }
            }
            arena.reclaimDeadThreads();
            final ArenaStats stats = arena.stats();
            assertEquals(0, stats.buffersInUse(), stats.toString());
            assertTrue(stats.crossThreadFrees() > ROUNDS / 2, stats.toString());
            System.out.println(stats);
            assertEquals(stats.crossThreadFrees(), stats.crossThreadFreesCollected());
            arena.close();
        }
    }

    private static boolean drain(final PinnedArena arena, final LongRing ring)
    {
        final long other = ring.poll();
        if (other == 0)
        {
            return false;
        }
        check(other);
        arena.free(other);
        return true;
    }

    private static void check(final long address)
    {
        final long stored = org.agrona.UnsafeApi.getLong(address);
        if (stored != address)
        {
            throw new AssertionError("block 0x" + Long.toHexString(address) + " was overwritten by the user of 0x" +
                Long.toHexString(stored) + ": handed out twice");
        }
    }
}

package dev.pinarena.allocator;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Frees from other threads go back to the owner; heaps of dead threads are adopted, never lost.
 */
class CrossThreadTest extends ArenaFixture
{
    @Test
    void blocksFreedByAnotherThreadAreReusedByTheOwner() throws Exception
    {
        final int count = 1024; // whole slabs of 256-byte blocks: no never-used block is left to hand out first
        final long[] blocks = new long[count];
        for (int i = 0; i < count; i++)
        {
            blocks[i] = arena.allocate(256);
        }
        final Thread freer = new Thread(() ->
        {
            for (final long block : blocks)
            {
                arena.free(block);
            }
        });
        freer.start();
        freer.join();
        ArenaStats stats = arena.stats();
        assertEquals(count, stats.crossThreadFrees());
        final long chunks = stats.chunks();

        final Set<Long> before = new HashSet<>();
        for (final long block : blocks)
        {
            before.add(block);
        }
        for (int i = 0; i < count; i++)
        {
            assertTrue(before.contains(arena.allocate(256)), "the owner reuses what other threads freed");
        }
        stats = arena.stats();
        assertEquals(count, stats.crossThreadFreesCollected());
        assertEquals(chunks, stats.chunks());
    }

    @Test
    void aDeadThreadsHeapIsAdoptedAndItsMemoryReused() throws Exception
    {
        final long[] blocks = new long[500];
        final long[] run = new long[1];
        final Thread worker = new Thread(() ->
        {
            for (int i = 0; i < blocks.length; i++)
            {
                blocks[i] = arena.allocate(1024);
            }
            run[0] = arena.allocate(200_000);
            arena.free(run[0]);                    // stays in the worker's run cache
            for (int i = 0; i < blocks.length; i += 2)
            {
                arena.free(blocks[i]);             // half freed by the owner before it dies
            }
        });
        worker.start();
        worker.join();
        for (int i = 1; i < blocks.length; i += 2)
        {
            arena.free(blocks[i]);                 // the rest freed from here, after the owner died
        }
        final long pinned = arena.stats().pinnedBytes();
        arena.reclaimDeadThreads(); // this thread's heap, made by its first free above, adopted the worker's
        assertEquals(0, arena.stats().buffersInUse());
        assertEquals(1, arena.stats().adoptedHeaps());

        final Set<Long> workers = new HashSet<>();
        for (final long block : blocks)
        {
            workers.add(block);
        }
        final long[] mine = new long[blocks.length];
        int reused = 0;
        for (int i = 0; i < mine.length; i++)
        {
            mine[i] = arena.allocate(1024);
            reused += workers.contains(mine[i]) ? 1 : 0;
        }
        assertEquals(blocks.length, reused, "the dead thread's blocks are all reused");
        assertEquals(run[0], arena.allocate(200_000), "its cached run went back to the pool");
        assertEquals(pinned, arena.stats().pinnedBytes(), "nothing new was mapped");
    }

    @Test
    void remoteFreesToADeadOwnerAfterAdoptionStillArrive() throws Exception
    {
        final long[] blocks = new long[300];
        final Thread worker = new Thread(() ->
        {
            for (int i = 0; i < blocks.length; i++)
            {
                blocks[i] = arena.allocate(64);
            }
        });
        worker.start();
        worker.join();
        assertEquals(1, arena.reclaimDeadThreads());
        final Thread freer = new Thread(() ->
        {
            for (final long block : blocks)
            {
                arena.free(block);
            }
        });
        freer.start();
        freer.join();
        arena.reclaimDeadThreads();
        final ArenaStats stats = arena.stats();
        assertEquals(0, stats.buffersInUse());
        assertEquals(stats.crossThreadFrees(), stats.crossThreadFreesCollected());
    }
}

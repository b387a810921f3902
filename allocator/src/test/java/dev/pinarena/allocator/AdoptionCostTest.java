package dev.pinarena.allocator;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Adopting a dead thread's heap visits that heap's own slabs, not the arena: its cost does not grow with the
 * chunks and pages other threads hold.
 */
class AdoptionCostTest extends ArenaFixture
{
    private static final int RUNS = 40;
    private static final long RUN_BYTES = 1L << 20;

    @Test
    void adoptionVisitsOnlyTheDeadHeapsSlabs() throws Exception
    {
        // A live thread (this one) holds 40 MiB of runs: about ten 4 MiB chunks of pages for a scan to cross.
        final long[] runs = new long[RUNS];
        for (int i = 0; i < RUNS; i++)
        {
            runs[i] = arena.allocate(RUN_BYTES);
        }
        arena.allocate(64); // this thread's own slab

        final long[] kept = new long[3];
        final Thread shortLived = new Thread(() ->
        {
            kept[0] = arena.allocate(64); // three classes: three slabs
            kept[1] = arena.allocate(256);
            kept[2] = arena.allocate(1024);
        });
        shortLived.start();
        shortLived.join();

        final AtomicLong slabsVisited = new AtomicLong();
        arena.heaps.probeAdoptions((dead, slabs) -> slabsVisited.addAndGet(slabs));
        assertEquals(1, arena.reclaimDeadThreads());
        final long visited = slabsVisited.get();
        assertEquals(3, visited, "adopting a heap of 3 slabs visited " + visited + " (slabs or pages) in an arena of " +
            arena.stats().chunks() + " chunks");

        for (final long block : kept)
        {
            arena.free(block); // rehomed to this thread: freed as its own
        }
        for (final long run : runs)
        {
            arena.free(run);
        }
        assertEquals(1, arena.stats().buffersInUse());
    }
}

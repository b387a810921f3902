package dev.pinarena.allocator;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.os.HugePagePools;
import dev.pinarena.registration.os.MemlockLimit;
import dev.pinarena.registration.os.PageBacking;
import dev.pinarena.registration.uring.IoUringRegistrar;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ArenaCapacityTest
{
    private static final long MIB = 1L << 20;

    @Test
    void theHugetlbPoolDoesNotMoveTheCap()
    {
        // With CAP_IPC_LOCK on a 24 GiB host: 0, 7 or 8 free 2 MiB pages give one cap, half of memory.
        for (final long freePages : new long[]{0, 7, 8, 512})
        {
            final ArenaCapacity capacity = ArenaCapacity.compute(16 * MIB, PinBudget.UNLIMITED, true, freePages * 2 * MIB, 24L << 30);
            assertEquals(12L << 30, capacity.capBytes(), capacity.reason());
            assertTrue(capacity.reason().contains("MemTotal"), capacity.reason());
        }
    }

    @Test
    void aMemlockLimitBelowHalfOfMemoryWinsInWholeChunks()
    {
        final ArenaCapacity capacity = ArenaCapacity.compute(4 * MIB, 66 * MIB, false, 0, 24L << 30);
        assertEquals(64 * MIB, capacity.capBytes());
        assertTrue(capacity.reason().contains("from RLIMIT_MEMLOCK"), capacity.reason());
        final ArenaCapacity above = ArenaCapacity.compute(4 * MIB, 20L << 30, false, 0, 24L << 30);
        assertEquals(12L << 30, above.capBytes(), "never more than half of memory: " + above.reason());
    }

    @Test
    void statsShowTheBackingMix()
    {
        try (IoUringRegistrar registrar = TestArenas.registrar())
        {
            final PinnedArena arena = PinnedArena.open(registrar, TestArenas.config(64 * MIB));
            arena.allocate(64);
            arena.allocate(8 * MIB); // a dedicated chunk
            final ArenaStats stats = arena.stats();
            long sum = 0;
            for (final PageBacking backing : PageBacking.values())
            {
                sum += stats.pinnedBytes(backing);
            }
            assertEquals(stats.pinnedBytes(), sum, "every pinned byte has a backing: " + stats);
            assertFalse(stats.backingMix().equals("none"), stats.backingMix());
            assertTrue(stats.toString().contains(stats.backingMix()), stats.toString());
            assertFalse(stats.toString().contains("\n"), "one line: " + stats);
            arena.close(true);
        }
    }

    /**
     * Changes the hugetlb pool (root): runs within the suite's heavy lock, like every test that does.
     */
    @Test
    void chunksFallBackToTransparentHugePagesWhenThePoolRunsOut() throws Exception
    {
        final java.nio.file.Path nr = java.nio.file.Path.of("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
        final long total = Long.parseLong(java.nio.file.Files.readString(nr).trim());
        final long free = freeTwoMegabytePages();
        // Leave exactly two free 2 MiB pages: one 4 MiB chunk's worth.
        java.nio.file.Files.writeString(nr, Long.toString(total - free + 2));
        try (IoUringRegistrar registrar = TestArenas.registrar())
        {
            final PinnedArena arena = PinnedArena.open(registrar, TestArenas.config(64 * MIB));
            for (int i = 0; i < 3; i++)
            {
                arena.allocate(TestArenas.CHUNK); // one whole chunk each
            }
            final ArenaStats stats = arena.stats();
            assertEquals(12 * MIB, stats.pinnedBytes(), stats.toString());
            assertEquals(4 * MIB, stats.pinnedBytes(PageBacking.HUGETLB_2M), "the pool's last pages: " + stats);
            assertEquals(8 * MIB, stats.pinnedBytes(PageBacking.THP), "then THP: " + stats);
            arena.close(true);
        }
        finally
        {
            java.nio.file.Files.writeString(nr, Long.toString(total));
        }
    }

    private static long freeTwoMegabytePages()
    {
        for (final HugePagePools.Pool pool : HugePagePools.pools())
        {
            if (pool.pageSize() == 2 * MIB)
            {
                return pool.free();
            }
        }
        throw new AssertionError("no 2 MiB hugetlb pool on this host");
    }

    @Test
    void hostCapIsComputable()
    {
        final ArenaCapacity capacity = ArenaCapacity.ofHost(ArenaConfig.DEFAULT_CHUNK_SIZE);
        assertEquals(0, capacity.capBytes() % ArenaConfig.DEFAULT_CHUNK_SIZE);
        assertTrue(capacity.reason().startsWith("pinnable "), capacity.reason());
    }
}

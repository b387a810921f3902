package dev.pinarena.allocator;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.os.HugePagePools;
import dev.pinarena.registration.os.MemlockLimit;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ArenaCapacityTest
{
    private static final long MIB = 1L << 20;

    @Test
    void capIsTheSmallestLimitInWholeChunksAndSaysWhy()
    {
        final MemlockLimit limit = MemlockLimit.read();
        final long pinnable = limit.pinnableBytes();
        final List<HugePagePools.Pool> pools = List.of(new HugePagePools.Pool(2 * MIB, 512, 101));
        final ArenaCapacity capacity = ArenaCapacity.compute(4 * MIB, limit, pools, 24L << 30);
        final long expected = Math.min(pinnable == PinBudget.UNLIMITED ? Long.MAX_VALUE : pinnable, 202 * MIB);
        assertEquals(expected / (4 * MIB) * (4 * MIB), capacity.capBytes());
        assertTrue(capacity.reason().contains("free hugetlb pages"), capacity.reason());
        assertEquals(0, capacity.capBytes() % (4 * MIB));
    }

    @Test
    void withoutHugePagesAnUnlimitedPinIsCappedAtHalfOfMemory()
    {
        final MemlockLimit limit = MemlockLimit.read();
        final ArenaCapacity capacity = ArenaCapacity.compute(16 * MIB, limit, List.of(), 24L << 30);
        if (limit.pinnableBytes() == PinBudget.UNLIMITED)
        {
            assertEquals(12L << 30, capacity.capBytes());
            assertTrue(capacity.reason().contains("MemTotal"), capacity.reason());
        }
        else
        {
            assertEquals(limit.pinnableBytes() / (16 * MIB) * (16 * MIB), capacity.capBytes());
        }
    }

    @Test
    void hostCapIsComputable()
    {
        final ArenaCapacity capacity = ArenaCapacity.ofHost(ArenaConfig.DEFAULT_CHUNK_SIZE);
        assertEquals(0, capacity.capBytes() % ArenaConfig.DEFAULT_CHUNK_SIZE);
        assertTrue(capacity.reason().startsWith("pinnable "), capacity.reason());
    }
}

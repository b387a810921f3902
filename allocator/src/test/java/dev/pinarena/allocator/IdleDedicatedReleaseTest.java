package dev.pinarena.allocator;

import dev.pinarena.registration.Region;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * At its cap the arena releases freed dedicated chunks of other sizes instead of refusing with nothing in
 * use: deregistered before they are unmapped, and a late free there is still named a double free.
 */
class IdleDedicatedReleaseTest extends ArenaFixture
{
    private static final long MIB = 1L << 20;

    @Override
    protected long capBytes()
    {
        return 24 * MIB;
    }

    @Test
    void freedChunksOfAnotherSizeMakeRoomAtTheCap()
    {
        final long first = arena.allocate(5 * MIB); // an 8 MiB dedicated chunk
        final long second = arena.allocate(5 * MIB);
        final Region firstRegion = arena.region(first);
        final Region secondRegion = arena.region(second);
        arena.free(first);
        arena.free(second);
        assertEquals(16 * MIB, arena.stats().pinnedBytes());

        final long large = arena.allocate(9 * MIB); // a 16 MiB chunk: fits once one idle 8 MiB chunk goes
        assertEquals(0, large & (16 * MIB - 1));
        assertTrue(firstRegion.isLive() != secondRegion.isLive(), "exactly one idle chunk released (deregistered)");
        assertEquals(24 * MIB, arena.stats().pinnedBytes());
        assertEquals(24 * MIB, registrar.pinnedBytes());
        assertEquals(2, arena.stats().dedicatedChunks());
        final long gone = firstRegion.isLive() ? second : first;
        if (gone < large || gone >= large + 16 * MIB)
        {
            assertThrows(DoubleFreeException.class, () -> arena.free(gone), "a late free in a released chunk");
        }
        arena.free(large);
        final long again = arena.allocate(5 * MIB); // the idle 8 MiB chunk that stayed
        assertEquals(firstRegion.isLive() ? first : second, again);
        arena.free(again);
        assertEquals(0, arena.stats().buffersInUse());
    }

    @Test
    void releasesNothingWhenThatWouldNotBeEnough()
    {
        final long idle = arena.allocate(5 * MIB); // 8 MiB
        final long held = arena.allocate(9 * MIB); // 16 MiB: the cap is reached
        arena.free(idle);
        final Region idleRegion = arena.region(idle);
        assertThrows(ArenaExhaustedException.class, () -> arena.allocate(17 * MIB)); // 32 MiB, over the cap anyway
        assertTrue(idleRegion.isLive(), "nothing released for a request that cannot fit");
        assertEquals(24 * MIB, arena.stats().pinnedBytes());
        arena.free(held);
    }
}

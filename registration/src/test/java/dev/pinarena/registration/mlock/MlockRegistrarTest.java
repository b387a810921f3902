package dev.pinarena.registration.mlock;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.RegistrationException;
import dev.pinarena.registration.UnknownRegionException;
import dev.pinarena.registration.os.ChunkMapper;
import dev.pinarena.registration.os.MappedChunk;
import dev.pinarena.registration.os.MemlockLimit;
import dev.pinarena.registration.os.PageBacking;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MlockRegistrarTest
{
    private static final long MIB = 1L << 20;

    @Test
    void locksAndUnlocksWithTheKernelsCount()
    {
        final long lockedBefore = MemlockLimit.statusBytes("VmLck");
        final MappedChunk chunk = ChunkMapper.map(4 * MIB, List.of(PageBacking.SMALL));
        try (MlockRegistrar registrar = MlockRegistrar.open(new PinBudget(PinBudget.UNLIMITED)))
        {
            final Region region = registrar.register(chunk.address(), chunk.size());
            assertEquals(lockedBefore + 4 * MIB, MemlockLimit.statusBytes("VmLck"));
            assertEquals(0, region.lkey(), "mlock has no keys");
            registrar.deregister(region);
            assertEquals(lockedBefore, MemlockLimit.statusBytes("VmLck"));
            assertThrows(UnknownRegionException.class, () -> registrar.deregister(region));
        }
        finally
        {
            chunk.unmap();
        }
    }

    @Test
    void anUnmappedRangeIsNamed()
    {
        // Just past the x86-64 user address space: nothing can be mapped there.
        final long hole = 1L << 47;
        try (MlockRegistrar registrar = MlockRegistrar.open(new PinBudget(PinBudget.UNLIMITED)))
        {
            final RegistrationException ex =
                assertThrows(RegistrationException.class, () -> registrar.register(hole, 2 * MIB));
            assertTrue(ex.getMessage().startsWith("mlock("), ex.getMessage());
            assertTrue(ex.getMessage().contains("ENOMEM"), ex.getMessage());
            assertTrue(ex.getMessage().contains("not wholly mapped"), ex.getMessage());
            assertEquals(0, registrar.pinnedBytes());
        }
    }
}

package dev.pinarena.registration.verbs;

import dev.pinarena.registration.Access;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.os.ChunkMapper;
import dev.pinarena.registration.os.MappedChunk;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The per-buffer key path ({@link VerbsRegistrar#registerExact}, {@link VerbsRegistrar#exactRkey},
 * {@link VerbsRegistrar#deregisterExact}) allocates no Java heap once compiled: every pointer crosses into
 * libibverbs as a raw address and the keys are read straight from the {@code struct ibv_mr}. Counted with the
 * JVM's per-thread allocation counter over many calls after a warm-up; runs where verbs exist (the VM stage).
 */
@Tag("softroce")
final class ExactRegistrationAllocationTest
{
    private static final int WARM_UP = 30_000;
    private static final int MEASURED = 10_000;
    private static final int BUFFER = 64;
    private static final int RIGHTS = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;

    @Test
    void registerTakeKeyAndDeregisterAllocateNothing()
    {
        final String device = RdmaDevice.require();
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final MappedChunk chunk = ChunkMapper.map(2 << 20);
        try (VerbsRegistrar registrar = VerbsRegistrar.open(device, new PinBudget(PinBudget.UNLIMITED)))
        {
            final Region region = registrar.register(chunk.address(), chunk.size(), RIGHTS);
            assertNotEquals(0, region.rkey(), "the chunk's own registration still works");

            int keys = cycle(registrar, chunk.address(), WARM_UP);
            final long before = threads.getCurrentThreadAllocatedBytes();
            keys += cycle(registrar, chunk.address(), MEASURED);
            final long allocated = threads.getCurrentThreadAllocatedBytes() - before;

            registrar.deregister(region);
            assertTrue(keys != 0, "keys were read");
            assertEquals(0.0, (double)allocated / MEASURED, 0.5,
                allocated + " B allocated over " + MEASURED + " register/rkey/deregister cycles (" +
                (double)allocated / MEASURED + " B/op)");
        }
        finally
        {
            chunk.unmap();
        }
    }

    private static int cycle(final VerbsRegistrar registrar, final long address, final int count)
    {
        int keys = 0;
        for (int i = 0; i < count; i++)
        {
            final long mr = registrar.registerExact(address + (i & 63) * BUFFER, BUFFER, RIGHTS);
            keys |= registrar.exactRkey(mr) | registrar.exactLkey(mr);
            registrar.deregisterExact(mr);
        }
        return keys;
    }
}

package dev.pinarena.registration.verbs;

import dev.pinarena.registration.Access;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.os.ChunkMapper;
import dev.pinarena.registration.os.MappedChunk;

import java.lang.management.ManagementFactory;

/**
 * Child JVM of {@link ExactRegistrationAllocationTest}: registers a 64-byte buffer with its own key, reads its
 * keys and deregisters it, 30,000 times to warm up, then counts the Java heap this thread allocates over
 * 10,000 more. Prints {@code cycles=}, {@code allocated=} (bytes) and {@code keys=} (the keys OR-ed, so the
 * reads are used).
 */
public final class ExactKeyCycles
{
    private static final int WARM_UP = 30_000;
    private static final int MEASURED = 10_000;
    private static final int BUFFER = 64;
    private static final int RIGHTS = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;

    private ExactKeyCycles()
    {
    }

    /**
     * @param args the RDMA device's name.
     */
    public static void main(final String[] args)
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final MappedChunk chunk = ChunkMapper.map(2 << 20);
        try (VerbsRegistrar registrar = VerbsRegistrar.open(args[0], new PinBudget(PinBudget.UNLIMITED)))
        {
            // The chunk's own registration first, as an arena makes it; the buffers' keys lie inside it.
            final Region region = registrar.register(chunk.address(), chunk.size(), RIGHTS);
            int keys = cycle(registrar, chunk.address(), WARM_UP);
            final long before = threads.getCurrentThreadAllocatedBytes();
            keys |= cycle(registrar, chunk.address(), MEASURED);
            final long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            registrar.deregister(region);
            System.out.println("cycles=" + MEASURED);
            System.out.println("allocated=" + allocated);
            System.out.println("keys=" + keys);
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

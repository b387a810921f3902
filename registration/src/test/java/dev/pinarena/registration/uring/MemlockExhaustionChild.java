package dev.pinarena.registration.uring;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.RegistrationException;
import dev.pinarena.registration.os.ChunkMapper;
import dev.pinarena.registration.os.MappedChunk;
import dev.pinarena.registration.os.MemlockLimit;
import dev.pinarena.registration.os.PageBacking;

import java.util.ArrayList;
import java.util.List;

/**
 * Child process of {@link MemlockExhaustionTest}: runs without CAP_IPC_LOCK under a small RLIMIT_MEMLOCK,
 * registers 1 MiB pieces until the kernel refuses, then deregisters and reports, one {@code key=value}
 * line each, what the parent asserts.
 */
public final class MemlockExhaustionChild
{
    private MemlockExhaustionChild()
    {
    }

    /**
     * @param args unused.
     */
    public static void main(final String[] args)
    {
        final MemlockLimit limit = MemlockLimit.read();
        System.out.println("cap_ipc_lock=" + limit.capIpcLock());
        System.out.println("limit=" + limit.softBytes());
        final MappedChunk chunk = ChunkMapper.map(64L << 20, List.of(PageBacking.SMALL));
        final List<Region> regions = new ArrayList<>();
        // No budget of our own: the kernel's RLIMIT_MEMLOCK is what must refuse.
        try (IoUringRegistrar registrar = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED)))
        {
            try
            {
                for (long offset = 0; offset < chunk.size(); offset += 1L << 20)
                {
                    regions.add(registrar.register(chunk.address() + offset, 1L << 20));
                }
                System.out.println("refused=never");
            }
            catch (final RegistrationException ex)
            {
                System.out.println("refused_after=" + registrar.pinnedBytes());
                System.out.println("message=" + ex.getMessage());
                System.out.println("errno=" + ex.errno());
            }
            System.out.println("vmpin_at_failure=" + MemlockLimit.statusBytes("VmPin"));
            System.out.println("regions_live=" + registrar.regionCount());
            for (final Region region : regions)
            {
                registrar.deregister(region);
            }
            System.out.println("vmpin_after=" + MemlockLimit.statusBytes("VmPin"));
            System.out.println("pinned_after=" + registrar.pinnedBytes());
        }
        chunk.unmap();
        System.out.println("done=true");
    }
}

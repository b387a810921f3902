package dev.pinarena.registration.mlock;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.RegistrationException;
import dev.pinarena.registration.os.internal.Linux;
import dev.pinarena.registration.os.MemlockLimit;

/**
 * "Pins" with mlock(2): the fallback for hosts with neither RDMA nor io_uring.
 * <p>
 * What it guarantees: the pages stay resident (never swapped out) and are charged to RLIMIT_MEMLOCK.
 * What it does NOT guarantee: that a page keeps its physical frame. The kernel may still migrate locked
 * pages (compaction, NUMA balancing, memory hot-unplug), and after fork() the first write by the parent to
 * a copy-on-write page moves the parent to a new frame. No device may DMA into mlock'ed memory on the
 * strength of this registrar; it has no keys ({@code lkey} = {@code rkey} = 0).
 */
public final class MlockRegistrar extends Registrar
{
    /** Registrar name. */
    public static final String NAME = "mlock";

    private MlockRegistrar(final PinBudget budget)
    {
        super(NAME, budget);
    }

    /**
     * @return a registrar with a budget from RLIMIT_MEMLOCK.
     */
    public static MlockRegistrar open()
    {
        return open(MemlockLimit.read().defaultBudget());
    }

    /**
     * @param budget cap on locked bytes.
     * @return the registrar.
     */
    public static MlockRegistrar open(final PinBudget budget)
    {
        return new MlockRegistrar(budget);
    }

    public String description()
    {
        return "mlock residency only (no DMA pin, no keys)";
    }

    protected Region pin(final long address, final long length, final int access)
    {
        if (Linux.libc().mlock(address, length) != 0)
        {
            final int errno = Linux.errno();
            throw new RegistrationException("mlock(0x" + Long.toHexString(address) + ", " + length + ")", errno,
                errno == 12 ? "the range is not wholly mapped, or locking it would pass RLIMIT_MEMLOCK: " +
                    "raise ulimit -l or grant CAP_IPC_LOCK" :
                    errno == 1 || errno == 11 ? "raise ulimit -l or grant CAP_IPC_LOCK" : null);
        }
        return newRegion(address, length, 0, 0, access, 0, 1);
    }

    protected void unpin(final Region region)
    {
        if (Linux.libc().munlock(region.address(), region.length()) != 0)
        {
            throw new RegistrationException("munlock of " + region, Linux.errno(), null);
        }
    }

    protected void release()
    {
    }
}

package dev.pinarena.allocator;

import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.os.HugePagePools;
import dev.pinarena.registration.os.MemlockLimit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The default cap of an arena and why: the bytes this process may pin (RLIMIT_MEMLOCK, lifted by
 * CAP_IPC_LOCK), further limited to the free hugetlbfs pages when any are reserved (chunks should be huge
 * pages), or to half of RAM when nothing else limits it; rounded down to whole chunks.
 * Public so that {@code pinarena doctor} can print the same computation.
 *
 * @param capBytes  the cap: a multiple of the chunk size, possibly 0 when not even one chunk may be pinned.
 * @param chunkSize the chunk size it was computed for.
 * @param reason    one line naming each limit and which one won.
 */
public record ArenaCapacity(long capBytes, long chunkSize, String reason)
{
    /**
     * @param chunkSize chunk size the cap is rounded to.
     * @return the cap for this host now.
     */
    public static ArenaCapacity ofHost(final long chunkSize)
    {
        return compute(chunkSize, MemlockLimit.read(), HugePagePools.pools(), memTotalBytes());
    }

    /**
     * The computation itself, from explicit inputs.
     *
     * @param chunkSize     chunk size the cap is rounded to.
     * @param limit         RLIMIT_MEMLOCK and CAP_IPC_LOCK.
     * @param pools         hugetlbfs pools.
     * @param memTotalBytes physical memory, or 0 if unknown.
     * @return the cap and the reason.
     */
    public static ArenaCapacity compute(
        final long chunkSize, final MemlockLimit limit, final List<HugePagePools.Pool> pools, final long memTotalBytes)
    {
        final long pinnable = limit.pinnableBytes();
        long freeHuge = 0;
        for (final HugePagePools.Pool pool : pools)
        {
            if (pool.pageSize() <= chunkSize)
            {
                freeHuge += pool.free() * pool.pageSize();
            }
        }
        final StringBuilder reason = new StringBuilder("pinnable ")
            .append(MemlockLimit.format(pinnable))
            .append(limit.capIpcLock() ? " (CAP_IPC_LOCK)" : " (RLIMIT_MEMLOCK)")
            .append(", free hugetlb pages ").append(MemlockLimit.format(freeHuge));
        long cap = pinnable;
        String winner = "RLIMIT_MEMLOCK";
        if (freeHuge > 0 && freeHuge < cap)
        {
            cap = freeHuge;
            winner = "free hugetlb pages";
        }
        if (cap == PinBudget.UNLIMITED && memTotalBytes > 0)
        {
            cap = memTotalBytes / 2;
            winner = "half of MemTotal (" + MemlockLimit.format(memTotalBytes) + ")";
        }
        final long rounded = cap == PinBudget.UNLIMITED ? cap & ~(chunkSize - 1) : (cap / chunkSize) * chunkSize;
        reason.append(" -> cap ").append(MemlockLimit.format(rounded)).append(" from ").append(winner)
            .append(", in whole ").append(MemlockLimit.format(chunkSize)).append(" chunks");
        return new ArenaCapacity(rounded, chunkSize, reason.toString());
    }

    private static long memTotalBytes()
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/meminfo")))
            {
                if (line.startsWith("MemTotal:"))
                {
                    return Long.parseLong(line.substring(9).trim().split("\\s+")[0]) * 1024;
                }
            }
        }
        catch (final IOException | NumberFormatException ex)
        {
            return 0;
        }
        return 0;
    }
}

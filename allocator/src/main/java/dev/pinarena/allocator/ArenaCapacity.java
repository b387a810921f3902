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
 * CAP_IPC_LOCK), and at most half of physical memory; rounded down to whole chunks. The hugetlb pool does not
 * limit it: chunks are huge pages while the pool has free ones and transparent huge pages after (see
 * {@link ArenaConfig#backings()}), so the cap does not change with what other processes take from the pool.
 * Public so that {@code pinarena doctor} can print the same computation.
 *
 * @param capBytes  the cap: a multiple of the chunk size, possibly 0 when not even one chunk may be pinned.
 * @param chunkSize the chunk size it was computed for.
 * @param reason    one line naming each limit and which one won.
 */
public record ArenaCapacity(long capBytes, long chunkSize, String reason)
{
    /**
     * @param config an arena's settings.
     * @return the cap they ask for (or the host's), which must allow at least one chunk.
     * @throws IllegalStateException if it allows none.
     */
    static ArenaCapacity of(final ArenaConfig config)
    {
        final long chunkSize = config.chunkSize();
        final ArenaCapacity capacity = config.capBytes() == ArenaConfig.CAP_FROM_HOST ?
            ofHost(chunkSize) :
            new ArenaCapacity(config.capBytes(), chunkSize, "configured: " + config.capBytes() + " bytes");
        if (capacity.capBytes() < chunkSize)
        {
            throw new IllegalStateException("the arena cap allows not even one chunk: " + capacity.reason() +
                " — raise ulimit -l or grant CAP_IPC_LOCK");
        }
        return capacity;
    }

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
     * @param pools         hugetlbfs pools: named in the reason, never a limit.
     * @param memTotalBytes physical memory, or 0 if unknown.
     * @return the cap and the reason.
     */
    public static ArenaCapacity compute(
        final long chunkSize, final MemlockLimit limit, final List<HugePagePools.Pool> pools, final long memTotalBytes)
    {
        long freeHuge = 0;
        for (final HugePagePools.Pool pool : pools)
        {
            if (pool.pageSize() <= chunkSize)
            {
                freeHuge += pool.free() * pool.pageSize();
            }
        }
        return compute(chunkSize, limit.pinnableBytes(), limit.capIpcLock(), freeHuge, memTotalBytes);
    }

    /**
     * @param chunkSize     chunk size the cap is rounded to.
     * @param pinnable      bytes this process may pin, or {@link PinBudget#UNLIMITED}.
     * @param capIpcLock    whether CAP_IPC_LOCK lifted the limit.
     * @param freeHugeBytes free hugetlb pages now (for the reason only).
     * @param memTotalBytes physical memory, or 0 if unknown.
     * @return the cap and the reason.
     */
    public static ArenaCapacity compute(
        final long chunkSize, final long pinnable, final boolean capIpcLock, final long freeHugeBytes,
        final long memTotalBytes)
    {
        final StringBuilder reason = new StringBuilder("pinnable ")
            .append(MemlockLimit.format(pinnable))
            .append(capIpcLock ? " (CAP_IPC_LOCK)" : " (RLIMIT_MEMLOCK)");
        long cap = pinnable;
        String winner = capIpcLock ? "CAP_IPC_LOCK" : "RLIMIT_MEMLOCK";
        if (memTotalBytes > 0 && (cap == PinBudget.UNLIMITED || cap > memTotalBytes / 2))
        {
            cap = memTotalBytes / 2;
            winner = "half of MemTotal (" + MemlockLimit.format(memTotalBytes) + ")";
        }
        final long rounded = cap == PinBudget.UNLIMITED ? cap & ~(chunkSize - 1) : (cap / chunkSize) * chunkSize;
        reason.append(" -> cap ").append(MemlockLimit.format(rounded)).append(" from ").append(winner)
            .append(", in whole ").append(MemlockLimit.format(chunkSize)).append(" chunks; free hugetlb pages ")
            .append(MemlockLimit.format(freeHugeBytes)).append(" (chunks beyond them fall back to THP)");
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

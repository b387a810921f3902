package dev.pinarena.registration.os;

import dev.pinarena.registration.os.internal.Linux;

import dev.pinarena.registration.PinBudget;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What the kernel lets this process pin: RLIMIT_MEMLOCK, and whether CAP_IPC_LOCK lifts it.
 * <p>
 * ibv_reg_mr and io_uring fixed buffers charge pinned pages against RLIMIT_MEMLOCK unless the process holds
 * CAP_IPC_LOCK; mlock charges locked pages the same way.
 *
 * @param soft       the soft limit as the kernel reports it ({@code RLIM_INFINITY} for none).
 * @param hard       the hard limit as the kernel reports it.
 * @param capIpcLock true if the process holds CAP_IPC_LOCK, which exempts it from the limit.
 */
public record MemlockLimit(long soft, long hard, boolean capIpcLock)
{
    /** Capability number of CAP_IPC_LOCK. */
    public static final int CAP_IPC_LOCK = 14;

    /**
     * @return the limits in force for this process now.
     */
    public static MemlockLimit read()
    {
        final java.nio.ByteBuffer rlimit = java.nio.ByteBuffer.allocateDirect(16).order(java.nio.ByteOrder.nativeOrder());
        if (Linux.libc().getrlimit(Linux.RLIMIT_MEMLOCK, org.agrona.BufferUtil.address(rlimit)) != 0)
        {
            throw new IllegalStateException("getrlimit(RLIMIT_MEMLOCK) failed: errno " + Linux.errno());
        }
        return new MemlockLimit(rlimit.getLong(0), rlimit.getLong(8), hasCapability(CAP_IPC_LOCK));
    }

    /**
     * @return the soft limit in bytes, or {@link PinBudget#UNLIMITED}.
     */
    public long softBytes()
    {
        return soft == Linux.RLIM_INFINITY ? PinBudget.UNLIMITED : soft;
    }

    /**
     * @return the hard limit in bytes, or {@link PinBudget#UNLIMITED}.
     */
    public long hardBytes()
    {
        return hard == Linux.RLIM_INFINITY ? PinBudget.UNLIMITED : hard;
    }

    /**
     * @return bytes this process may pin: unlimited with CAP_IPC_LOCK, else the soft limit.
     */
    public long pinnableBytes()
    {
        return capIpcLock ? PinBudget.UNLIMITED : softBytes();
    }

    /**
     * @return a budget capped at what the kernel allows this process.
     */
    public PinBudget defaultBudget()
    {
        return new PinBudget(pinnableBytes());
    }

    /**
     * @param capability capability number.
     * @return true if it is in this process's effective set.
     */
    public static boolean hasCapability(final int capability)
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/self/status")))
            {
                if (line.startsWith("CapEff:"))
                {
                    final long bits = Long.parseUnsignedLong(line.substring(7).trim(), 16);
                    return (bits & (1L << capability)) != 0;
                }
            }
            return false;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * @param field e.g. {@code VmPin} or {@code VmLck}.
     * @return that field of /proc/self/status in bytes.
     */
    public static long statusBytes(final String field)
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/self/status")))
            {
                if (line.startsWith(field + ":"))
                {
                    return Long.parseLong(line.substring(field.length() + 1).trim().split("\\s+")[0]) * 1024;
                }
            }
            throw new IllegalStateException("/proc/self/status has no " + field);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * @param bytes a byte count or {@link PinBudget#UNLIMITED}.
     * @return e.g. {@code 8 MiB} or {@code unlimited}.
     */
    public static String format(final long bytes)
    {
        if (bytes == PinBudget.UNLIMITED)
        {
            return "unlimited";
        }
        if (bytes >= (1L << 30) && bytes % (1L << 30) == 0)
        {
            return (bytes >> 30) + " GiB";
        }
        if (bytes >= (1L << 20) && bytes % (1L << 20) == 0)
        {
            return (bytes >> 20) + " MiB";
        }
        if (bytes >= 1024 && bytes % 1024 == 0)
        {
            return (bytes >> 10) + " KiB";
        }
        return bytes + " B";
    }

    @Override
    public String toString()
    {
        return "RLIMIT_MEMLOCK soft=" + format(softBytes()) + " hard=" + format(hardBytes()) +
            (capIpcLock ? " (CAP_IPC_LOCK held: not enforced)" : "");
    }
}

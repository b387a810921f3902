package dev.pinarena.registration.os;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Test access to the 2 MiB hugetlbfs pool: how many pages are free, and setting the pool size (root); and the
 * hugetlb memory this process holds, which, unlike the pool's free count, no other process on the machine moves.
 */
public final class HugePagePool
{
    private static final Path NR = Path.of("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
    private static final Path FREE = Path.of("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages");

    private static final Path STATUS = Path.of("/proc/self/status");
    private static final String HELD = "HugetlbPages:";

    private HugePagePool()
    {
    }

    /**
     * @return free 2 MiB pages.
     */
    public static long free()
    {
        return read(FREE);
    }

    /**
     * @return bytes of hugetlb pages this process has mapped and faulted in ({@code HugetlbPages} of
     *         {@code /proc/self/status}).
     */
    public static long heldByThisProcess()
    {
        try
        {
            for (final String line : Files.readAllLines(STATUS))
            {
                if (line.startsWith(HELD))
                {
                    return 1024 * Long.parseLong(line.substring(HELD.length()).trim().split("\\s+")[0]);
                }
            }
            throw new IllegalStateException(STATUS + " has no " + HELD + " line (kernel older than 4.4?)");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * @return reserved 2 MiB pages.
     */
    public static long total()
    {
        return read(NR);
    }

    /**
     * @param pages new pool size.
     */
    public static void setTotal(final long pages)
    {
        try
        {
            Files.writeString(NR, Long.toString(pages));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("writing " + NR + " (needs root)", ex);
        }
    }

    private static long read(final Path path)
    {
        try
        {
            return Long.parseLong(Files.readString(path).trim());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }
}

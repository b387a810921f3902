package dev.pinarena.registration.os;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Test access to the 2 MiB hugetlbfs pool: how many pages are free, and setting the pool size (root).
 */
public final class HugePagePool
{
    private static final Path NR = Path.of("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
    private static final Path FREE = Path.of("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages");

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

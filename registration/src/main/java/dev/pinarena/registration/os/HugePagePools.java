package dev.pinarena.registration.os;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The hugetlbfs page pools the kernel offers (one per page size, under /sys/kernel/mm/hugepages) and the
 * transparent huge page mode.
 */
public final class HugePagePools
{
    private static final Path POOLS = Path.of("/sys/kernel/mm/hugepages");
    private static final Path THP_ENABLED = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");

    private HugePagePools()
    {
    }

    /**
     * One pool of huge pages of one size.
     *
     * @param pageSize bytes per page.
     * @param total    pages reserved (nr_hugepages).
     * @param free     pages not in use (free_hugepages).
     */
    public record Pool(long pageSize, long total, long free)
    {
        /**
         * @return the sysfs file an administrator writes to reserve pages of this size.
         */
        public String reserveFile()
        {
            return POOLS.resolve("hugepages-" + (pageSize >> 10) + "kB").resolve("nr_hugepages").toString();
        }
    }

    /**
     * @return every pool the kernel offers, smallest page first; empty if the kernel has no hugetlbfs.
     */
    public static List<Pool> pools()
    {
        final List<Pool> pools = new ArrayList<>();
        if (!Files.isDirectory(POOLS))
        {
            return pools;
        }
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(POOLS, "hugepages-*kB"))
        {
            for (final Path dir : dirs)
            {
                final String name = dir.getFileName().toString();
                final long kib = Long.parseLong(name.substring("hugepages-".length(), name.length() - 2));
                pools.add(new Pool(kib << 10, readLong(dir.resolve("nr_hugepages")), readLong(dir.resolve("free_hugepages"))));
            }
        }
        catch (final IOException ex)
        {
            return pools;
        }
        pools.sort(Comparator.comparingLong(Pool::pageSize));
        return pools;
    }

    /**
     * @return the transparent huge page mode in force ({@code always}, {@code madvise} or {@code never}), or
     * {@code unsupported} if the kernel has none.
     */
    public static String transparentHugePageMode()
    {
        try
        {
            final String line = Files.readString(THP_ENABLED).trim();
            final int open = line.indexOf('[');
            final int close = line.indexOf(']');
            return open >= 0 && close > open ? line.substring(open + 1, close) : line;
        }
        catch (final IOException ex)
        {
            return "unsupported";
        }
    }

    private static long readLong(final Path path) throws IOException
    {
        return Long.parseLong(Files.readString(path).trim());
    }
}

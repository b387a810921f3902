package dev.pinarena.registration.os;

import dev.pinarena.registration.os.internal.Linux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * Reads back from the kernel which page sizes back a range: never assumed from what was asked.
 * <ul>
 *   <li>{@code /proc/self/smaps}: KernelPageSize of the mapping (hugetlbfs pages show as 2048 or 1048576 kB).</li>
 *   <li>{@code /proc/kpageflags} (root): the KPF_HUGE and KPF_THP bits of each 2 MiB block's first frame, so
 *   transparent huge pages are counted per range even when the kernel merged the mapping with its
 *   neighbours into one VMA.</li>
 * </ul>
 * <p>
 * <b>Twin</b>: {@code bindings-c/src/os.c and procfs.c (the page size read back)} implements the same rules in C. Change both, and keep the shared
 * scenario list in docs/ARCHITECTURE.md ("Twins") true of both test suites.
 */
public final class PageSizes
{
    /** /proc/kpageflags bit: the frame is part of a huge page (hugetlbfs or THP). */
    public static final int KPF_HUGE = 17;
    /** /proc/kpageflags bit: the frame is part of a transparent huge page. */
    public static final int KPF_THP = 22;

    private static final Path SMAPS = Path.of("/proc/self/smaps");
    private static final Path KPAGEFLAGS = Path.of("/proc/kpageflags");
    private static final long HUGE_BLOCK = 2L << 20;

    private PageSizes()
    {
    }

    /**
     * @param address any address of a mapping.
     * @return KernelPageSize of the mapping that contains it, in bytes.
     * @throws IllegalStateException if no mapping contains it.
     */
    public static long kernelPageSize(final long address)
    {
        final String value = smapsField(address, "KernelPageSize:");
        return Long.parseLong(value) * 1024;
    }

    /**
     * @param address first byte.
     * @param length  bytes.
     * @return bytes of the range backed by huge pages, or -1 if the kernel does not tell this process.
     */
    public static long hugeBytes(final long address, final long length)
    {
        final long pageSize = kernelPageSize(address);
        if (pageSize > Linux.BASE_PAGE_SIZE)
        {
            return length; // hugetlbfs: every page of the mapping is huge.
        }
        if (!Files.isReadable(KPAGEFLAGS))
        {
            return -1;
        }
        try (PageMap pageMap = PageMap.open();
            FileChannel flags = FileChannel.open(KPAGEFLAGS, StandardOpenOption.READ))
        {
            final ByteBuffer entry = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
            long huge = 0;
            final long first = (address + HUGE_BLOCK - 1) & ~(HUGE_BLOCK - 1);
            for (long block = first; block + HUGE_BLOCK <= address + length; block += HUGE_BLOCK)
            {
                final long frame = pageMap.frameOrMinusOne(block);
                if (frame <= 0)
                {
                    continue;
                }
                entry.clear();
                flags.read(entry, frame * 8);
                final long bits = entry.getLong(0);
                if ((bits & ((1L << KPF_THP) | (1L << KPF_HUGE))) != 0)
                {
                    huge += HUGE_BLOCK;
                }
            }
            return huge;
        }
        catch (final IOException | UnsupportedOperationException ex)
        {
            return -1;
        }
    }

    private static String smapsField(final long address, final String field)
    {
        final List<String> lines;
        try
        {
            lines = Files.readAllLines(SMAPS);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("reading " + SMAPS, ex);
        }
        boolean inside = false;
        for (final String line : lines)
        {
            final int dash = line.indexOf('-');
            final int space = line.indexOf(' ');
            if (dash > 0 && space > dash && isHex(line, 0, dash))
            {
                final long start = Long.parseUnsignedLong(line.substring(0, dash), 16);
                final long end = Long.parseUnsignedLong(line.substring(dash + 1, space), 16);
                inside = Long.compareUnsigned(address, start) >= 0 && Long.compareUnsigned(address, end) < 0;
            }
            else if (inside && line.startsWith(field))
            {
                return line.substring(field.length()).trim().split("\\s+")[0];
            }
        }
        throw new IllegalStateException("no mapping contains 0x" + Long.toHexString(address) + " in " + SMAPS);
    }

    private static boolean isHex(final String s, final int from, final int to)
    {
        for (int i = from; i < to; i++)
        {
            if (Character.digit(s.charAt(i), 16) < 0)
            {
                return false;
            }
        }
        return true;
    }
}

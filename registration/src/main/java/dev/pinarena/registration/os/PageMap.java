package dev.pinarena.registration.os;

import dev.pinarena.registration.os.internal.Linux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Virtual address → physical frame number, from {@code /proc/self/pagemap}.
 * <p>
 * Each 4 KiB virtual page has a 64-bit entry: bits 0–54 the frame number, bit 63 "present". Since Linux
 * 4.2 the frame number reads as 0 unless the reader has CAP_SYS_ADMIN, which this class reports as
 * {@link UnsupportedOperationException} rather than returning a misleading zero.
 * <p>
 * <b>Twin</b>: {@code bindings-c/src/pagemap.c} implements the same rules in C. Change both, and keep the shared
 * scenario list in docs/ARCHITECTURE.md ("Twins") true of both test suites.
 */
public final class PageMap implements AutoCloseable
{
    /** Bits of a pagemap entry that hold the frame number. */
    public static final long PFN_MASK = (1L << 55) - 1;
    /** Bit of a pagemap entry set when the page is present in RAM. */
    public static final long PRESENT = 1L << 63;

    private static final Path PAGEMAP = Path.of("/proc/self/pagemap");

    private final FileChannel channel;
    private final ByteBuffer entry = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());

    private PageMap(final FileChannel channel)
    {
        this.channel = channel;
    }

    /**
     * @return a reader of this process's page map.
     */
    public static PageMap open()
    {
        try
        {
            return new PageMap(FileChannel.open(PAGEMAP, StandardOpenOption.READ));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("opening " + PAGEMAP, ex);
        }
    }

    /**
     * @param address any byte of a page that must be present.
     * @return its physical frame number.
     * @throws IllegalStateException        if the page is not present (never touched, or swapped).
     * @throws UnsupportedOperationException if the kernel hides frame numbers from this process.
     */
    public long frame(final long address)
    {
        final long frame = frameOrMinusOne(address);
        if (frame < 0)
        {
            throw new IllegalStateException("page at 0x" + Long.toHexString(address) + " is not present in RAM");
        }
        return frame;
    }

    /**
     * @param address first byte.
     * @param length  bytes.
     * @return the frame of every 4 KiB page of the range.
     */
    public long[] frames(final long address, final long length)
    {
        final long first = address & ~(Linux.BASE_PAGE_SIZE - 1);
        final int pages = (int)((address + length - first + Linux.BASE_PAGE_SIZE - 1) / Linux.BASE_PAGE_SIZE);
        final long[] frames = new long[pages];
        for (int i = 0; i < pages; i++)
        {
            frames[i] = frame(first + i * Linux.BASE_PAGE_SIZE);
        }
        return frames;
    }

    long frameOrMinusOne(final long address)
    {
        final long raw = rawEntry(address);
        if ((raw & PRESENT) == 0)
        {
            return -1;
        }
        final long frame = raw & PFN_MASK;
        if (frame == 0)
        {
            throw new UnsupportedOperationException(
                "/proc/self/pagemap hides physical frame numbers from this process: run as root (CAP_SYS_ADMIN)");
        }
        return frame;
    }

    /**
     * @param address any byte of a page.
     * @return the raw 64-bit pagemap entry.
     */
    public long rawEntry(final long address)
    {
        try
        {
            entry.clear();
            final long position = Long.divideUnsigned(address, Linux.BASE_PAGE_SIZE) * 8;
            while (entry.hasRemaining())
            {
                if (channel.read(entry, position + entry.position()) < 0)
                {
                    throw new IllegalStateException("short read of " + PAGEMAP + " at 0x" + Long.toHexString(address));
                }
            }
            return entry.getLong(0);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("reading " + PAGEMAP, ex);
        }
    }

    public void close()
    {
        try
        {
            channel.close();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }
}

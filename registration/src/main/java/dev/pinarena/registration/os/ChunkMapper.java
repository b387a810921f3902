package dev.pinarena.registration.os;

import dev.pinarena.registration.os.internal.LibC;

import dev.pinarena.registration.os.internal.Linux;

import dev.pinarena.registration.internal.Errno;
import org.agrona.UnsafeApi;

import java.util.ArrayList;
import java.util.List;

/**
 * Maps chunks: anonymous memory aligned to its own size (so the chunk of any address is
 * {@code address & ~(size - 1)}), populated up front, backed by the first page kind of a preference list
 * that the kernel grants.
 * <p>
 * How an aligned mapping is made: reserve twice the size as PROT_NONE address space, map the aligned half
 * over it with MAP_FIXED and the wanted backing, then unmap the unused head and tail of the reservation.
 * Nothing is registered yet at that point, so trimming does not touch the invariant.
 * <p>
 * <b>Twin</b>: {@code bindings-c/src/os.c (pa_os_map_chunk)} implements the same rules in C. Change both, and keep the shared
 * scenario list in docs/ARCHITECTURE.md ("Twins") true of both test suites.
 */
public final class ChunkMapper
{
    /** Smallest chunk: one 2 MiB huge page. */
    public static final long MIN_CHUNK_SIZE = 2L << 20;

    private ChunkMapper()
    {
    }

    /**
     * Maps a chunk with the default preference (hugetlb 1 GiB, hugetlb 2 MiB, THP, 4 KiB).
     *
     * @param size power of two, at least {@link #MIN_CHUNK_SIZE}.
     * @return the chunk.
     */
    public static MappedChunk map(final long size)
    {
        return map(size, PageBacking.DEFAULT_PREFERENCE);
    }

    /**
     * Maps a chunk with the first backing of {@code preference} that works. A backing whose page is larger
     * than the chunk is passed over.
     *
     * @param size       power of two, at least {@link #MIN_CHUNK_SIZE}.
     * @param preference backings to try, in order.
     * @return the chunk, with the page size the kernel reports and why earlier backings were passed over.
     * @throws IllegalArgumentException if the size is not a power of two of at least 2 MiB.
     * @throws MappingFailedException if every backing failed (the message lists each failure).
     */
    public static MappedChunk map(final long size, final List<PageBacking> preference)
    {
        if (size < MIN_CHUNK_SIZE || Long.bitCount(size) != 1)
        {
            throw new IllegalArgumentException("chunk size must be a power of two of at least 2 MiB: " + size);
        }
        if (preference.isEmpty())
        {
            throw new IllegalArgumentException("no page backing to try");
        }

        final List<String> fallbacks = new ArrayList<>();
        for (final PageBacking backing : preference)
        {
            if (backing.pageSize() > size)
            {
                fallbacks.add(backing.label() + ": page larger than the " + (size >> 20) + " MiB chunk");
                continue;
            }
            final long reservation = reserve(size);
            final long aligned = (reservation + size - 1) & ~(size - 1);
            final String failure = mapFixed(aligned, size, backing);
            if (failure == null)
            {
                trim(reservation, aligned, size);
                return new MappedChunk(
                    aligned,
                    size,
                    backing,
                    PageSizes.kernelPageSize(aligned),
                    PageSizes.hugeBytes(aligned, size),
                    List.copyOf(fallbacks));
            }
            Linux.libc().munmap(reservation, 2 * size);
            fallbacks.add(backing.label() + ": " + failure);
        }
        throw new MappingFailedException("could not map a " + size + "-byte chunk with any backing: " + fallbacks);
    }

    private static long reserve(final long size)
    {
        final long address = Linux.mmap(
            0, 2 * size, Linux.PROT_NONE, Linux.MAP_PRIVATE | Linux.MAP_ANONYMOUS | Linux.MAP_NORESERVE, -1, 0);
        if (address == Linux.MAP_FAILED)
        {
            final int errno = Linux.errno();
            throw new MappingFailedException("mmap of " + 2 * size + " bytes of address space failed: " + Errno.describe(errno));
        }
        return address;
    }

    /**
     * @return null on success, else why the backing failed.
     */
    private static String mapFixed(final long address, final long size, final PageBacking backing)
    {
        final LibC libc = Linux.libc();
        final int rw = Linux.PROT_READ | Linux.PROT_WRITE;
        final int fixed = Linux.MAP_PRIVATE | Linux.MAP_ANONYMOUS | Linux.MAP_FIXED;
        switch (backing)
        {
            case HUGETLB_1G:
            case HUGETLB_2M:
            {
                final int log2 = Long.numberOfTrailingZeros(backing.pageSize());
                final int flags = fixed | Linux.MAP_HUGETLB | (log2 << Linux.MAP_HUGE_SHIFT) | Linux.MAP_POPULATE;
                if (Linux.mmap(address, size, rw, flags, -1, 0) == Linux.MAP_FAILED)
                {
                    final int errno = Linux.errno();
                    return "mmap(MAP_HUGETLB) failed: " + Errno.describe(errno) +
                        " — reserve pages: echo N > /sys/kernel/mm/hugepages/hugepages-" +
                        (backing.pageSize() >> 10) + "kB/nr_hugepages";
                }
                return null;
            }
            case THP:
            {
                if (Linux.mmap(address, size, rw, fixed, -1, 0) == Linux.MAP_FAILED)
                {
                    return "mmap failed with errno " + Linux.errno();
                }
                if (libc.madvise(address, size, Linux.MADV_HUGEPAGE) != 0)
                {
                    return "madvise(MADV_HUGEPAGE) failed with errno " + Linux.errno() +
                        " — transparent huge pages are disabled (see /sys/kernel/mm/transparent_hugepage/enabled)";
                }
                populate(address, size);
                return null;
            }
            case SMALL:
            {
                if (Linux.mmap(address, size, rw, fixed, -1, 0) == Linux.MAP_FAILED)
                {
                    return "mmap failed with errno " + Linux.errno();
                }
                // Keep 4 KiB pages even where THP is in "always" mode: the caller asked for them.
                libc.madvise(address, size, Linux.MADV_NOHUGEPAGE);
                populate(address, size);
                return null;
            }
            default:
                throw new IllegalStateException("unhandled backing " + backing);
        }
    }

    private static void populate(final long address, final long size)
    {
        if (Linux.libc().madvise(address, size, Linux.MADV_POPULATE_WRITE) == 0)
        {
            return;
        }
        // Kernels before 5.14 lack MADV_POPULATE_WRITE: fault each page in by writing to it.
        for (long offset = 0; offset < size; offset += Linux.BASE_PAGE_SIZE)
        {
            UnsafeApi.putByte(address + offset, (byte)0);
        }
    }

    private static void trim(final long reservation, final long aligned, final long size)
    {
        final long head = aligned - reservation;
        if (head > 0)
        {
            Linux.libc().munmap(reservation, head);
        }
        final long tail = reservation + 2 * size - (aligned + size);
        if (tail > 0)
        {
            Linux.libc().munmap(aligned + size, tail);
        }
    }
}

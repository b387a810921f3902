package dev.pinarena.registration.os;

import dev.pinarena.registration.os.internal.Linux;

import dev.pinarena.registration.internal.RegisteredRanges;
import dev.pinarena.registration.Region;

import java.util.List;

/**
 * An anonymous mapping aligned to its own size, populated, with the page size the kernel actually gave.
 * <p>
 * {@link #unmap()} enforces the project's invariant: it refuses while any registration still covers a byte
 * of the chunk, so a registered page is never returned to the OS.
 */
public final class MappedChunk
{
    private final long address;
    private final long size;
    private final PageBacking requested;
    private final long kernelPageSize;
    private final long hugeBytes;
    private final List<String> fallbacks;
    private boolean unmapped;

    MappedChunk(
        final long address,
        final long size,
        final PageBacking requested,
        final long kernelPageSize,
        final long hugeBytes,
        final List<String> fallbacks)
    {
        this.address = address;
        this.size = size;
        this.requested = requested;
        this.kernelPageSize = kernelPageSize;
        this.hugeBytes = hugeBytes;
        this.fallbacks = fallbacks;
    }

    /**
     * @return first byte; a multiple of {@link #size()}.
     */
    public long address()
    {
        return address;
    }

    /**
     * @return bytes mapped.
     */
    public long size()
    {
        return size;
    }

    /**
     * @return the backing the mapping was made with (the first of the preference list that succeeded).
     */
    public PageBacking backing()
    {
        return requested;
    }

    /**
     * @return KernelPageSize of the mapping as the kernel reports it in smaps: 1 GiB or 2 MiB for hugetlbfs,
     * 4 KiB for everything else (transparent huge pages included; see {@link #hugeBytes()}).
     */
    public long kernelPageSize()
    {
        return kernelPageSize;
    }

    /**
     * @return bytes of the chunk the kernel backs with huge pages (hugetlbfs or transparent), as read back
     * from the kernel; equal to {@link #size()} when every page is huge, or -1 if it could not be read.
     */
    public long hugeBytes()
    {
        return hugeBytes;
    }

    /**
     * @return the page size that backs every byte of the chunk: the hugetlbfs page size, 2 MiB when
     * transparent huge pages cover the whole chunk, else 4 KiB.
     */
    public long effectivePageSize()
    {
        if (kernelPageSize > Linux.BASE_PAGE_SIZE)
        {
            return kernelPageSize;
        }
        return hugeBytes == size ? PageBacking.THP.pageSize() : Linux.BASE_PAGE_SIZE;
    }

    /**
     * @return why each preferred backing before {@link #backing()} was not used (empty if the first worked).
     */
    public List<String> fallbacks()
    {
        return fallbacks;
    }

    /**
     * @return true once unmapped.
     */
    public synchronized boolean isUnmapped()
    {
        return unmapped;
    }

    /**
     * Returns the chunk to the OS.
     *
     * @throws IllegalStateException if a registration still covers any byte of it, or it was unmapped.
     */
    public synchronized void unmap()
    {
        checkReleasable("unmap");
        if (Linux.libc().munmap(address, size) != 0)
        {
            throw new IllegalStateException("munmap of chunk " + this + " failed: errno " + Linux.errno());
        }
        unmapped = true;
    }

    /**
     * Instead of unmapping: maps fresh, unpinned anonymous memory over the chunk (MAP_FIXED, MAP_NORESERVE),
     * which releases its pages (huge pages go back to their pool) but keeps the address range taken until
     * the process ends. For an owner that must give the memory up while stale pointers into it may still be
     * used (a forced close): such an access touches scratch memory that belongs to nobody, never a fault and
     * never memory handed to someone else.
     *
     * @throws IllegalStateException if a registration still covers any byte of it, or it was unmapped.
     */
    public synchronized void retire()
    {
        checkReleasable("retire");
        final int flags = Linux.MAP_PRIVATE | Linux.MAP_ANONYMOUS | Linux.MAP_FIXED | Linux.MAP_NORESERVE;
        if (Linux.mmap(address, size, Linux.PROT_READ | Linux.PROT_WRITE, flags, -1, 0) == Linux.MAP_FAILED)
        {
            throw new IllegalStateException("mmap(MAP_FIXED) over chunk " + this + " failed: errno " + Linux.errno());
        }
        unmapped = true;
    }

    /**
     * @throws IllegalStateException if unmapped already, or a registration still covers any byte.
     */
    private void checkReleasable(final String operation)
    {
        if (unmapped)
        {
            throw new IllegalStateException("chunk " + this + " is already unmapped");
        }
        final Region registered = RegisteredRanges.firstOverlapping(address, size);
        if (registered != null)
        {
            throw new IllegalStateException("refusing to " + operation + " chunk " + this + ": " + registered +
                " still covers it (deregister first: a registered page is never returned to the OS)");
        }
    }

    public String toString()
    {
        return "chunk 0x" + Long.toHexString(address) + "+" + (size >> 20) + "MiB " + requested.label() +
            " (page " + (effectivePageSize() >> 10) + "KiB)";
    }
}

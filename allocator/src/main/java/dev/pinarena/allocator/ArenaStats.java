package dev.pinarena.allocator;

import dev.pinarena.registration.os.MemlockLimit;
import dev.pinarena.registration.os.PageBacking;

/**
 * A snapshot of an arena's counters. Immutable; {@link #toString()} prints it for humans.
 * <p>
 * {@code registrations} counts every chunk registration the arena made: it grows with chunks, never with
 * allocations, so on a steady-state path it is constant.
 */
public final class ArenaStats
{
    private final String registrar;
    private final long pinnedBytes;
    private final long capBytes;
    private final int chunks;
    private final int dedicatedChunks;
    private final long registrations;
    private final long bytesInUse;
    private final int[] classSizes;
    private final long[] classAllocs;
    private final long[] classFrees;
    private final long runAllocs;
    private final long runFrees;
    private final long dedicatedAllocs;
    private final long dedicatedFrees;
    private final long crossThreadFrees;
    private final long crossThreadFreesCollected;
    private final int liveHeaps;
    private final long adoptedHeaps;
    private final long[] bytesByBacking;

    ArenaStats(
        final String registrar, final long pinnedBytes, final long capBytes, final int chunks, final int dedicatedChunks,
        final long registrations, final long bytesInUse, final int[] classSizes, final long[] classAllocs,
        final long[] classFrees, final long runAllocs, final long runFrees, final long dedicatedAllocs,
        final long dedicatedFrees, final long crossThreadFrees, final long crossThreadFreesCollected,
        final int liveHeaps, final long adoptedHeaps, final long[] bytesByBacking)
    {
        this.bytesByBacking = bytesByBacking;
        this.registrar = registrar;
        this.pinnedBytes = pinnedBytes;
        this.capBytes = capBytes;
        this.chunks = chunks;
        this.dedicatedChunks = dedicatedChunks;
        this.registrations = registrations;
        this.bytesInUse = bytesInUse;
        this.classSizes = classSizes;
        this.classAllocs = classAllocs;
        this.classFrees = classFrees;
        this.runAllocs = runAllocs;
        this.runFrees = runFrees;
        this.dedicatedAllocs = dedicatedAllocs;
        this.dedicatedFrees = dedicatedFrees;
        this.crossThreadFrees = crossThreadFrees;
        this.crossThreadFreesCollected = crossThreadFreesCollected;
        this.liveHeaps = liveHeaps;
        this.adoptedHeaps = adoptedHeaps;
    }

    /** @return bytes mapped and registered (every chunk, shared and dedicated). */
    public long pinnedBytes()
    {
        return pinnedBytes;
    }

    /** @return the cap on pinned bytes. */
    public long capBytes()
    {
        return capBytes;
    }

    /** @return shared chunks (both scopes). */
    public int chunks()
    {
        return chunks;
    }

    /** @return dedicated chunks (in use or idle). */
    public int dedicatedChunks()
    {
        return dedicatedChunks;
    }

    /** @return registrations made since the arena opened. */
    public long registrations()
    {
        return registrations;
    }

    /** @return bytes handed out and not freed (block, run and dedicated sizes, not requested sizes). */
    public long bytesInUse()
    {
        return bytesInUse;
    }

    /** @return buffers handed out and not freed. */
    public long buffersInUse()
    {
        long live = runAllocs - runFrees + dedicatedAllocs - dedicatedFrees;
        for (int i = 0; i < classAllocs.length; i++)
        {
            live += classAllocs[i] - classFrees[i];
        }
        return live;
    }

    /** @return number of size classes. */
    public int classCount()
    {
        return classSizes.length;
    }

    /** @param cls a class. @return its block size. */
    public int classSize(final int cls)
    {
        return classSizes[cls];
    }

    /** @param cls a class. @return blocks of that class allocated so far. */
    public long classAllocations(final int cls)
    {
        return classAllocs[cls];
    }

    /** @param cls a class. @return blocks of that class freed so far. */
    public long classFrees(final int cls)
    {
        return classFrees[cls];
    }

    /** @return page runs allocated so far. */
    public long runAllocations()
    {
        return runAllocs;
    }

    /** @return page runs freed so far. */
    public long runFrees()
    {
        return runFrees;
    }

    /** @return dedicated buffers allocated so far. */
    public long dedicatedAllocations()
    {
        return dedicatedAllocs;
    }

    /** @return dedicated buffers freed so far. */
    public long dedicatedFrees()
    {
        return dedicatedFrees;
    }

    /** @return block frees made by a thread other than the block's owner. */
    public long crossThreadFrees()
    {
        return crossThreadFrees;
    }

    /** @return cross-thread frees their owners have taken back; the rest are pending. */
    public long crossThreadFreesCollected()
    {
        return crossThreadFreesCollected;
    }

    /** @return heaps of live threads. */
    public int liveHeaps()
    {
        return liveHeaps;
    }

    /** @return heaps of dead threads adopted by live ones. */
    public long adoptedHeaps()
    {
        return adoptedHeaps;
    }

    /**
     * @param backing a page backing.
     * @return bytes of chunks mapped with it: the mix shows how many chunks got huge pages.
     */
    public long pinnedBytes(final PageBacking backing)
    {
        return bytesByBacking[backing.ordinal()];
    }

    /**
     * @return the backing mix, e.g. {@code hugetlb-2M 48 MiB + thp 16 MiB}, or {@code none}.
     */
    public String backingMix()
    {
        return backingMix(bytesByBacking);
    }

    static String backingMix(final long[] bytesByBacking)
    {
        final StringBuilder sb = new StringBuilder();
        for (final PageBacking backing : PageBacking.values())
        {
            if (bytesByBacking[backing.ordinal()] != 0)
            {
                sb.append(sb.length() == 0 ? "" : " + ").append(backing.label()).append(' ')
                    .append(MemlockLimit.format(bytesByBacking[backing.ordinal()]));
            }
        }
        return sb.length() == 0 ? "none" : sb.toString();
    }

    /**
     * @return one line per size class that was used: allocated, freed, live.
     */
    public String classTable()
    {
        final StringBuilder sb = new StringBuilder();
        for (int i = 0; i < classSizes.length; i++)
        {
            if (classAllocs[i] != 0 || classFrees[i] != 0)
            {
                sb.append("class ").append(classSizes[i]).append(" B: ").append(classAllocs[i]).append(" allocated, ")
                    .append(classFrees[i]).append(" freed, ").append(classAllocs[i] - classFrees[i]).append(" live\n");
            }
        }
        return sb.toString();
    }

    /**
     * @return one line: pinned bytes, the backing mix, what is in use, cross-thread frees and heaps
     * ({@link #classTable()} has the per-class detail).
     */
    public String toString()
    {
        return "arena (" + registrar + "): pinned " + MemlockLimit.format(pinnedBytes) + " of " +
            MemlockLimit.format(capBytes) + " in " + chunks + " chunks + " + dedicatedChunks + " dedicated (" +
            backingMix() + "), " + registrations + " registrations; in use " + bytesInUse + " B in " +
            buffersInUse() + " buffers; runs " + runAllocs + "/" + runFrees + ", dedicated " + dedicatedAllocs + "/" +
            dedicatedFrees + " allocated/freed; cross-thread frees " + crossThreadFrees + " (" +
            crossThreadFreesCollected + " collected); heaps " + liveHeaps + " live, " + adoptedHeaps + " adopted";
    }
}

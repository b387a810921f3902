package dev.pinarena.allocator;

/**
 * The last dedicated chunks the pool released to make room at its cap ({@link PagePool}), remembered so that
 * a late free of a buffer that was there is refused as the double free it is, not as an address the arena
 * never gave out. A range is forgotten when the arena maps a new chunk over it (the directory then answers)
 * and when more than {@link #CAPACITY} releases came after it.
 * <p>
 * Thread safety: written under the pool lock, read by the error path of a free on any thread; every
 * method is synchronized (neither is a hot path).
 */
final class ReleasedChunks
{
    static final int CAPACITY = 64;

    private final long[] bases = new long[CAPACITY];
    private final long[] sizes = new long[CAPACITY];
    private int next;

    synchronized void add(final long base, final long size)
    {
        bases[next] = base;
        sizes[next] = size;
        next = (next + 1) % CAPACITY;
    }

    /** The arena mapped [base, base + size) again: its own directory names what is there now. */
    synchronized void forgetOverlapping(final long base, final long size)
    {
        for (int i = 0; i < CAPACITY; i++)
        {
            if (sizes[i] != 0 && bases[i] < base + size && base < bases[i] + sizes[i])
            {
                sizes[i] = 0;
            }
        }
    }

    /**
     * @return the base of the released chunk that held {@code address}, or 0.
     */
    synchronized long chunkHolding(final long address)
    {
        for (int i = 0; i < CAPACITY; i++)
        {
            if (sizes[i] != 0 && address >= bases[i] && address < bases[i] + sizes[i])
            {
                return bases[i];
            }
        }
        return 0;
    }
}

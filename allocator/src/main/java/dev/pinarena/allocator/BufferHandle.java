package dev.pinarena.allocator;

/**
 * A buffer named by address and generation in one {@code long}: the low 48 bits are the address, the high
 * 16 bits how many times that block, run or dedicated chunk had been handed out when this handle was made.
 * {@link PinnedArena#freeHandle(long)} compares the generation before freeing, so freeing a handle whose
 * buffer was freed and handed out again throws {@link StaleHandleException} instead of freeing the new
 * owner's buffer.
 * <p>
 * Limits: the generation counts modulo 2^16, so a stale handle goes undetected only if its buffer was
 * handed out again a multiple of 65,536 times since; a stale free that races with the very allocation that
 * reuses the buffer, on another thread, may be missed (a data race in the caller). A slab reformatted for
 * another size class keeps its counters but its blocks move, so a handle into it fails as an interior
 * pointer, a stale handle, or (one chance in 65,536) is taken as live.
 */
public final class BufferHandle
{
    /** Bits of the address: user-space addresses on x86-64 and AArch64 with 4-level page tables. */
    public static final int ADDRESS_BITS = 48;
    /** The address part. */
    public static final long ADDRESS_MASK = (1L << ADDRESS_BITS) - 1;
    /** The generation part, once shifted down. */
    public static final int GENERATION_MASK = 0xFFFF;

    private BufferHandle()
    {
    }

    /**
     * @param handle a handle.
     * @return the buffer's address.
     */
    public static long address(final long handle)
    {
        return handle & ADDRESS_MASK;
    }

    /**
     * @param handle a handle.
     * @return its generation.
     */
    public static int generation(final long handle)
    {
        return (int)(handle >>> ADDRESS_BITS);
    }

    static long of(final long address, final int generation)
    {
        return ((long)(generation & GENERATION_MASK) << ADDRESS_BITS) | address;
    }
}

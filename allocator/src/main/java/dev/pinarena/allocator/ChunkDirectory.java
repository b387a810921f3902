package dev.pinarena.allocator;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The O(1) map from any address to its chunk: chunks are aligned to the chunk size, so
 * {@code address >>> log2(chunkSize)} is a chunk index, looked up in a two-level radix table (a top array
 * over 48-bit user addresses, leaves of 2^14 entries allocated when a chunk lands in them). Two array loads,
 * no search, no hashing. A dedicated chunk larger than the chunk size fills every index it covers.
 * <p>
 * Ordering: entries are written under the pool lock with release stores after the chunk's metadata is
 * complete, and read without a lock with acquire loads, so a reader that finds a chunk sees its fields.
 */
final class ChunkDirectory
{
    /** User-space addresses below this are covered (x86-64 and AArch64 with 4-level page tables). */
    static final int ADDRESS_BITS = 48;
    private static final int LEAF_BITS = 14;
    private static final VarHandle TOP = MethodHandles.arrayElementVarHandle(ArenaChunk[][].class);
    private static final VarHandle LEAF = MethodHandles.arrayElementVarHandle(ArenaChunk[].class);

    private final int chunkShift;
    private final ArenaChunk[][] top;

    ChunkDirectory(final long chunkSize)
    {
        chunkShift = Long.numberOfTrailingZeros(chunkSize);
        final int indexBits = ADDRESS_BITS - chunkShift;
        top = new ArenaChunk[1 << Math.max(0, indexBits - LEAF_BITS)][];
    }

    /**
     * @param address any address.
     * @return the chunk that holds it, or null.
     */
    ArenaChunk chunkOf(final long address)
    {
        final long index = address >>> chunkShift;
        final long topIndex = index >>> LEAF_BITS;
        if (topIndex >= top.length)
        {
            return null;
        }
        final ArenaChunk[] leaf = (ArenaChunk[])TOP.getAcquire(top, (int)topIndex);
        if (leaf == null)
        {
            return null;
        }
        return (ArenaChunk)LEAF.getAcquire(leaf, (int)(index & ((1 << LEAF_BITS) - 1)));
    }

    /**
     * Under the pool lock: makes every chunk index of [chunk.base, chunk.base + chunk.size) resolve to chunk.
     */
    void add(final ArenaChunk chunk)
    {
        set(chunk, chunk);
    }

    /**
     * Under the pool lock: forgets the chunk's indexes.
     */
    void remove(final ArenaChunk chunk)
    {
        set(chunk, null);
    }

    private void set(final ArenaChunk chunk, final ArenaChunk value)
    {
        if (chunk.base + chunk.size > 1L << ADDRESS_BITS)
        {
            throw new IllegalStateException(chunk + " lies above the " + ADDRESS_BITS + "-bit address space this directory covers");
        }
        final long first = chunk.base >>> chunkShift;
        final long last = (chunk.base + chunk.size - 1) >>> chunkShift;
        for (long index = first; index <= last; index++)
        {
            final int topIndex = (int)(index >>> LEAF_BITS);
            ArenaChunk[] leaf = (ArenaChunk[])TOP.getAcquire(top, topIndex);
            if (leaf == null)
            {
                leaf = new ArenaChunk[1 << LEAF_BITS];
                TOP.setRelease(top, topIndex, leaf);
            }
            LEAF.setRelease(leaf, (int)(index & ((1 << LEAF_BITS) - 1)), value);
        }
    }

    /**
     * @param operation named in the error.
     * @param address   any address.
     * @return the chunk that holds it.
     * @throws UnknownAddressException if none does.
     */
    ArenaChunk chunkOrThrow(final String operation, final long address)
    {
        final ArenaChunk chunk = chunkOf(address);
        if (chunk == null)
        {
            throw ArenaErrors.notInArena(operation, address);
        }
        return chunk;
    }

    /**
     * @return the registration of the chunk, which must still be live.
     * @throws RegistrationGoneException if it was deregistered behind the arena's back.
     */
    static dev.pinarena.registration.Region liveRegion(final long address, final ArenaChunk chunk)
    {
        final dev.pinarena.registration.Region region = chunk.region;
        if (!region.isLive())
        {
            throw ArenaErrors.registrationGone(address, region);
        }
        return region;
    }

    /**
     * @param address the start of a buffer.
     * @return its usable bytes: the block, run or dedicated size.
     * @throws UnknownAddressException if no chunk holds it or no buffer starts there.
     */
    long usableSize(final long address)
    {
        final ArenaChunk chunk = chunkOrThrow("usableSize", address);
        if (chunk.dedicated)
        {
            return chunk.size;
        }
        final int page = chunk.pageOf(address);
        switch (chunk.state(page))
        {
            case ArenaChunk.SLAB:
                return chunk.slab(page).blockSize;
            case ArenaChunk.RUN_HEAD:
                return (long)chunk.runPages(page) << SizeClasses.ARENA_PAGE_SHIFT;
            default:
                throw ArenaErrors.noBufferStartsThere("usableSize", address);
        }
    }

    /**
     * @param operation named in the error.
     * @param address   the start of an allocated buffer, perhaps handed out on another thread.
     * @return its usable bytes.
     * @throws UnknownAddressException if no allocated buffer starts there (freed, interior, never handed out).
     */
    long allocatedSize(final String operation, final long address)
    {
        final ArenaChunk chunk = chunkOrThrow(operation, address);
        if (chunk.dedicated)
        {
            if (address == chunk.base && chunk.dedicatedInUse)
            {
                return chunk.size;
            }
        }
        else
        {
            final int page = chunk.pageOf(address);
            final byte state = chunk.state(page);
            if (state == ArenaChunk.SLAB)
            {
                final Slab slab = chunk.slab(page);
                final int index = slab.blockIndex(address);
                if (index >= 0 && slab.isAllocatedByRemoteView(index))
                {
                    return slab.blockSize;
                }
            }
            else if (state == ArenaChunk.RUN_HEAD && (address & (SizeClasses.ARENA_PAGE_SIZE - 1)) == 0)
            {
                return (long)chunk.runPages(page) << SizeClasses.ARENA_PAGE_SHIFT;
            }
        }
        throw ArenaErrors.noAllocatedBuffer(operation, address);
    }

    /**
     * @return the usable bytes of the allocated buffer at {@code address}, for a flyweight over it.
     * @throws UnknownAddressException  if no allocated buffer starts there.
     * @throws IllegalArgumentException if they do not fit an {@code int}.
     */
    int wrappableSize(final long address)
    {
        final long usable = allocatedSize("wrap", address);
        if (usable > Integer.MAX_VALUE)
        {
            throw ArenaErrors.tooLargeToWrap(address, usable);
        }
        return (int)usable;
    }
}

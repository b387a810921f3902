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
}

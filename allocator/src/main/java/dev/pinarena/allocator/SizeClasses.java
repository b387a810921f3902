package dev.pinarena.allocator;

import java.util.ArrayList;
import java.util.List;

/**
 * The table of block sizes for small and medium requests, and how many arena pages a slab of each spans.
 * <p>
 * Sizes are multiples of the <em>granule</em> (the default alignment, 64 bytes unless configured): every
 * block of a slab starts at {@code slabBase + index * size}, so a block is aligned to the granule only if its
 * size is a multiple of it; a finer class would occupy the same memory stride anyway. Within each power of
 * two {@code [2^k, 2^(k+1))} the table steps by {@code max(granule, 2^k / 8)}: from {@code 8 * granule} up
 * the spacing between neighbouring classes is at most 12.5 %, and below that it is one granule. With a
 * 16-byte granule that makes the spacing at most 12.5 % above 128 bytes. A block wastes less than
 * {@code max(granule, size / 8)} bytes of its request.
 * <p>
 * A slab of class {@code s} spans the fewest arena pages holding at least {@link #MIN_BLOCKS_PER_SLAB}
 * blocks, so the unusable tail of a slab is under one block, at most 12.5 % of the slab.
 * <p>
 * Requests above {@link #MAX_SLAB_BLOCK} are served as runs of whole arena pages, wasting less than one
 * arena page: under 6.25 % there. Lookup of the class of a size is one array load.
 */
public final class SizeClasses
{
    /** Bytes of one arena page: the unit of page runs and of slab spans (not the kernel's page). */
    public static final int ARENA_PAGE_SIZE = 8 * 1024;
    /** log2 of {@link #ARENA_PAGE_SIZE}. */
    public static final int ARENA_PAGE_SHIFT = Integer.numberOfTrailingZeros(ARENA_PAGE_SIZE);
    /** Largest block served from a slab; larger requests take a run of arena pages. */
    public static final int MAX_SLAB_BLOCK = 128 * 1024;
    /** A slab holds at least this many blocks. */
    public static final int MIN_BLOCKS_PER_SLAB = 8;
    /** Classes per doubling once the granule no longer dominates the step: a 12.5 % step. */
    public static final int STEPS_PER_DOUBLING = 8;

    /** Shift that turns a block offset times {@link #reciprocal(int)} into its block index. */
    static final int RECIPROCAL_SHIFT = 40;

    private final int granule;
    private final int granuleShift;
    private final int[] blockSize;
    private final int[] slabPages;
    private final long[] reciprocal;
    private final short[] classByGranules;

    /**
     * @param granule smallest block and alignment of every block: a power of two from 16 to 4096.
     */
    SizeClasses(final int granule)
    {
        if (granule < 16 || granule > 4096 || Integer.bitCount(granule) != 1)
        {
            throw new IllegalArgumentException("granule must be a power of two from 16 to 4096: " + granule);
        }
        this.granule = granule;
        this.granuleShift = Integer.numberOfTrailingZeros(granule);

        final List<Integer> sizes = new ArrayList<>();
        for (int size = granule; size <= MAX_SLAB_BLOCK; )
        {
            sizes.add(size);
            final int powerOfTwoBelow = Integer.highestOneBit(size);
            size += Math.max(granule, powerOfTwoBelow / STEPS_PER_DOUBLING);
        }
        final int count = sizes.size();
        blockSize = new int[count];
        slabPages = new int[count];
        reciprocal = new long[count];
        for (int i = 0; i < count; i++)
        {
            final int size = sizes.get(i);
            blockSize[i] = size;
            final long slabBytes = (long)size * MIN_BLOCKS_PER_SLAB;
            slabPages[i] = (int)Math.max(1, (slabBytes + ARENA_PAGE_SIZE - 1) / ARENA_PAGE_SIZE);
            reciprocal[i] = ((1L << RECIPROCAL_SHIFT) + size - 1) / size;
        }

        classByGranules = new short[(MAX_SLAB_BLOCK >> granuleShift) + 1];
        int cls = 0;
        for (int units = 0; units < classByGranules.length; units++)
        {
            while (blockSize[cls] < units << granuleShift)
            {
                cls++;
            }
            classByGranules[units] = (short)cls;
        }
    }

    /**
     * @return the granule: the smallest block and the alignment every block has.
     */
    public int granule()
    {
        return granule;
    }

    /**
     * @return number of classes.
     */
    public int count()
    {
        return blockSize.length;
    }

    /**
     * @param size bytes, 1 to {@link #MAX_SLAB_BLOCK}.
     * @return the smallest class whose blocks hold {@code size} bytes.
     */
    public int classOf(final long size)
    {
        return classByGranules[(int)((size + granule - 1) >>> granuleShift)];
    }

    /**
     * @param cls a class.
     * @return the block size of the class.
     */
    public int blockSize(final int cls)
    {
        return blockSize[cls];
    }

    /**
     * @param cls a class.
     * @return arena pages one slab of the class spans.
     */
    public int slabPages(final int cls)
    {
        return slabPages[cls];
    }

    /**
     * @param cls a class.
     * @return blocks in one slab of the class.
     */
    public int blocksPerSlab(final int cls)
    {
        return (int)(((long)slabPages[cls] << ARENA_PAGE_SHIFT) / blockSize[cls]);
    }

    /**
     * Division by a block size without a divide instruction: for a slab offset {@code o} (below 2^21, so
     * {@code o * size < 2^40}), {@code (o * reciprocal(cls)) >>> 40} is exactly {@code o / size}.
     *
     * @param cls a class.
     * @return {@code ceil(2^40 / blockSize(cls))}.
     */
    long reciprocal(final int cls)
    {
        return reciprocal[cls];
    }

    /**
     * @param cls       the class that fits the size.
     * @param alignment a power of two not above {@link #ARENA_PAGE_SIZE}.
     * @return the first class from {@code cls} up whose blocks are all {@code alignment}-aligned (its size is
     * a multiple of the alignment; slabs start on an arena page), or -1 if only a page run would do.
     */
    public int alignedClass(final int cls, final int alignment)
    {
        for (int c = cls; c < blockSize.length; c++)
        {
            if ((blockSize[c] & (alignment - 1)) == 0)
            {
                return c;
            }
        }
        return -1;
    }

    public String toString()
    {
        final StringBuilder sb = new StringBuilder("SizeClasses{granule=").append(granule).append(", classes=");
        for (int i = 0; i < blockSize.length; i++)
        {
            sb.append(i == 0 ? "" : ",").append(blockSize[i]);
        }
        return sb.append('}').toString();
    }
}

package dev.pinarena.allocator;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A span of arena pages carved into equal blocks of one size class, owned by one {@link ThreadHeap}.
 * <p>
 * The owner allocates and frees with plain loads and stores: a stack of free block indexes and an
 * {@code inUse} bit per block (which makes double-free detection O(1)). Nothing is written into the blocks.
 * <p>
 * Cross-thread free protocol (any other thread):
 * <ol>
 * <li>check the block's {@code inUse} bit (acquire load; it was set before the block was handed over) and
 *     its {@code remoteFreed} bit: either says "already free" → double free, nothing changed;</li>
 * <li>zero the block if the scope asks for it;</li>
 * <li>set the block's {@code remoteFreed} bit with an atomic OR (a full fence: the zeroing is visible before
 *     the bit); if the bit was already set another free won → double free;</li>
 * <li>CAS {@code pending} 0 → 1; the winner pushes the slab onto its owner heap's pending stack.</li>
 * </ol>
 * The owner drains its pending stack: for each slab it first resets {@code pending} to 0, then takes each
 * {@code remoteFreed} word with an atomic exchange to 0 and returns those blocks to the free stack. A free
 * whose bit lands after the exchange finds {@code pending} already 0 and pushes the slab again, so no free
 * is ever lost; one that lands before is collected now and its push is a harmless spare.
 * <p>
 * Release: an empty slab goes back to the pool only after the owner wins the same {@code pending} CAS
 * ({@link #claimForRelease()}), so a free still between its bit and its CAS can no longer push it; that
 * free's push can only land once the slab is reformatted, on its new owner's stack, as a spare push of a
 * slab that is on no stack. A spare push can bring a slab with nothing to collect to its owner, which
 * must therefore never treat "drained" as "has free blocks".
 * <p>
 * A double free racing with itself on two threads (no ordering between the two frees) is a data race in
 * the caller; the protocol still never puts a block on the free stack twice (collection skips a block whose
 * {@code inUse} bit is already clear).
 */
final class Slab
{
    private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle PENDING;

    static
    {
        try
        {
            PENDING = MethodHandles.lookup().findVarHandle(Slab.class, "pending", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    ArenaChunk chunk;
    int firstPage;
    int pages;
    long base;
    int cls;
    int slot;
    int blockSize;
    long reciprocal;
    int blocks;
    BufferScope scope;

    /** Owner heap; changes when formatted and when a dead thread's heap is adopted (both under the pool lock). */
    volatile ThreadHeap heap;

    // Owner-only state.
    private int[] freeStack = new int[0];
    /**
     * Per block: how many times it was handed out, modulo 2^16 ({@link BufferHandle}). Written by the owner
     * when it hands the block out, before the block (and its handle) can reach any other thread; never
     * reset, so a reformatted slab goes on counting.
     */
    private char[] generations = new char[0];
    int top;
    private long[] inUse = new long[0];
    int used;
    Slab prevPartial;
    Slab nextPartial;
    boolean inPartial;

    // Shared with remote freers.
    private long[] remoteFreed = new long[0];
    @SuppressWarnings("unused") // accessed through PENDING
    private volatile int pending;
    Slab nextPending;

    /**
     * Under the pool lock: (re)formats this object for a span of pages. Arrays are reused when large enough,
     * so a steady state formats without allocating.
     */
    void format(
        final ArenaChunk chunk, final int firstPage, final SizeClasses classes, final int cls, final int slot,
        final ThreadHeap heap)
    {
        this.chunk = chunk;
        this.firstPage = firstPage;
        this.pages = classes.slabPages(cls);
        this.base = chunk.pageAddress(firstPage);
        this.cls = cls;
        this.slot = slot;
        this.scope = chunk.scope;
        this.blockSize = classes.blockSize(cls);
        this.reciprocal = classes.reciprocal(cls);
        this.blocks = classes.blocksPerSlab(cls);
        final int words = (blocks + 63) >>> 6;
        if (freeStack.length < blocks)
        {
            freeStack = new int[blocks];
            generations = java.util.Arrays.copyOf(generations, blocks);
        }
        if (inUse.length < words)
        {
            inUse = new long[words];
            remoteFreed = new long[words];
        }
        for (int w = 0; w < words; w++)
        {
            inUse[w] = 0;
            WORDS.setVolatile(remoteFreed, w, 0L);
        }
        for (int i = 0; i < blocks; i++)
        {
            freeStack[i] = blocks - 1 - i; // lowest address is handed out first
        }
        top = blocks;
        used = 0;
        prevPartial = null;
        nextPartial = null;
        inPartial = false;
        nextPending = null;
        // The owner first, then pending = 0: a late freer (see claimForRelease) whose CAS succeeds from here
        // on reads the new owner, never null.
        this.heap = heap;
        PENDING.setVolatile(this, 0);
    }

    /**
     * @param address an address inside the slab's pages.
     * @return the block index, or -1 if the address is inside a block but not its first byte, or -2 if it
     * lies in the slab's tail that holds no block.
     */
    int blockIndex(final long address)
    {
        final long offset = address - base;
        final int index = (int)((offset * reciprocal) >>> SizeClasses.RECIPROCAL_SHIFT);
        if (index >= blocks)
        {
            return -2;
        }
        return (long)index * blockSize == offset ? index : -1;
    }

    /**
     * @param index block index.
     * @return first byte of the block.
     */
    long blockAddress(final int index)
    {
        return base + (long)index * blockSize;
    }

    /**
     * Owner only; the caller checked {@code top > 0}.
     *
     * @return the address of a block now in use.
     */
    long allocate()
    {
        return base + (long)take() * blockSize;
    }

    /**
     * Owner only; the caller checked {@code top > 0}.
     *
     * @return the {@link BufferHandle} of a block now in use.
     */
    long allocateHandle()
    {
        final int index = take();
        return BufferHandle.of(base + (long)index * blockSize, generations[index]);
    }

    private int take()
    {
        final int index = freeStack[--top];
        inUse[index >>> 6] |= 1L << index;
        generations[index]++;
        used++;
        return index;
    }

    /**
     * @param index block index.
     * @return the block's generation: its hand-outs so far, modulo 2^16.
     */
    int generation(final int index)
    {
        return generations[index];
    }

    /**
     * Owner only.
     *
     * @return true if the block is in use and no remote free of it is pending.
     */
    boolean isAllocatedByOwnerView(final int index)
    {
        final int word = index >>> 6;
        final long bit = 1L << index;
        return (inUse[word] & bit) != 0 && ((long)WORDS.getOpaque(remoteFreed, word) & bit) == 0;
    }

    /**
     * Owner only; the caller checked {@link #isAllocatedByOwnerView(int)}.
     */
    void freeLocal(final int index)
    {
        inUse[index >>> 6] &= ~(1L << index);
        freeStack[top++] = index;
        used--;
    }

    /**
     * Any thread: step 1 of the cross-thread protocol.
     *
     * @return true if the block looks allocated from this thread's view.
     */
    boolean isAllocatedByRemoteView(final int index)
    {
        final int word = index >>> 6;
        final long bit = 1L << index;
        return ((long)WORDS.getAcquire(inUse, word) & bit) != 0 &&
            ((long)WORDS.getVolatile(remoteFreed, word) & bit) == 0;
    }

    /**
     * Any thread: steps 3 and 4 of the cross-thread protocol.
     *
     * @return 1 if the caller must push this slab onto its owner's pending stack, 0 if not, -1 if the block
     * was already remotely freed (double free).
     */
    int markRemoteFree(final int index)
    {
        final long bit = 1L << index;
        final long previous = (long)WORDS.getAndBitwiseOr(remoteFreed, index >>> 6, bit);
        if ((previous & bit) != 0)
        {
            return -1;
        }
        return (int)PENDING.getVolatile(this) == 0 && PENDING.compareAndSet(this, 0, 1) ? 1 : 0;
    }

    /**
     * Owner, while draining its pending stack: allow the next remote free to push this slab again. Must
     * come before {@link #collectRemoteFrees()}.
     */
    void clearPending()
    {
        PENDING.setVolatile(this, 0);
    }

    /**
     * @return true if the slab is on (or about to be pushed onto) a pending stack.
     */
    boolean isPending()
    {
        return (int)PENDING.getVolatile(this) != 0;
    }

    /**
     * Owner, when the slab is empty and about to go back to the pool: sets {@code pending} 0 → 1 so no
     * cross-thread free can push the slab any more. Without it a free whose bit the owner already collected,
     * but whose CAS of step 4 is still to come, could push the slab after it was released — and once it is
     * reformatted for another heap, onto a stack it is already on. Released slabs keep {@code pending} = 1
     * until {@link #format} resets it.
     *
     * @return true if claimed (release it); false if a push is pending (it will be drained first).
     */
    boolean claimForRelease()
    {
        return PENDING.compareAndSet(this, 0, 1);
    }

    /**
     * Owner: returns every remotely freed block to the free stack.
     *
     * @return blocks collected.
     */
    int collectRemoteFrees()
    {
        int collected = 0;
        final int words = (blocks + 63) >>> 6;
        for (int w = 0; w < words; w++)
        {
            if ((long)WORDS.getVolatile(remoteFreed, w) == 0)
            {
                continue;
            }
            long bits = (long)WORDS.getAndSet(remoteFreed, w, 0L);
            while (bits != 0)
            {
                final int bitIndex = Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                final int index = (w << 6) + bitIndex;
                if ((inUse[w] & (1L << bitIndex)) != 0)
                {
                    freeLocal(index);
                    collected++;
                }
            }
        }
        return collected;
    }

    public String toString()
    {
        return "slab 0x" + Long.toHexString(base) + " class " + blockSize + "B " + used + "/" + blocks + " used";
    }
}

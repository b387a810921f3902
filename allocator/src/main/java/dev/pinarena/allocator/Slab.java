package dev.pinarena.allocator;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Consecutive arena pages carved into equal blocks of one size class, owned by one {@link ThreadHeap}.
 * <p>
 * C counterpart: a span of a small size class in the malloc shim ({@code pa_span_t} of kind
 * {@code PA_SPAN_SMALL}, {@code bindings-c/src/shim/types.h}, where "span" means a run of 64 KiB slices);
 * the {@code remoteFreed} bits and the pending stack below are its {@code thread_free} and delayed lists.
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
final class Slab extends SlabPadAfterOwner
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

    // Shared with remote freers, written by them: on a cache line of its own (see SlabOwnerState).
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

/**
 * What a slab is: set when formatted (under the pool lock) and read by every thread that frees into it.
 * Written rarely, so it may share cache lines with anything that is also rarely written.
 */
abstract class SlabFormat
{
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
    /** Per block: in use, as the owner sees it (contents written by the owner, read by remote freers). */
    long[] inUse = new long[0];
    /** Per block: freed by another thread and not yet collected (contents written by remote freers). */
    long[] remoteFreed = new long[0];
    /** Per block: hand-outs so far modulo 2^16 ({@link BufferHandle}); never reset, see Slab#format. */
    char[] generations = new char[0];

    /** Owner heap; changes when formatted and when a dead thread's heap is adopted (both under the pool lock). */
    volatile ThreadHeap heap;
    /**
     * Neighbours on the owner heap's list of every slab it owns ({@link ThreadHeap#linkOwned}), so adopting a
     * dead heap visits its own slabs only. Guarded by the pool lock; written on slow paths only.
     */
    Slab prevOwned;
    Slab nextOwned;
}

/**
 * Padding: keeps the owner's hot fields off the format's cache line (and its adjacent-line prefetch pair).
 * Bytes, not longs: the JVM fills holes a superclass leaves with a subclass's fields that fit, and bytes fill
 * every hole here before any later field could.
 */
@SuppressWarnings("unused")
abstract class SlabPadAfterFormat extends SlabFormat
{
    private byte p000, p001, p002, p003, p004, p005, p006, p007, p008, p009, p010, p011, p012, p013, p014, p015;
    private byte p016, p017, p018, p019, p020, p021, p022, p023, p024, p025, p026, p027, p028, p029, p030, p031;
    private byte p032, p033, p034, p035, p036, p037, p038, p039, p040, p041, p042, p043, p044, p045, p046, p047;
    private byte p048, p049, p050, p051, p052, p053, p054, p055, p056, p057, p058, p059, p060, p061, p062, p063;
    private byte p064, p065, p066, p067, p068, p069, p070, p071, p072, p073, p074, p075, p076, p077, p078, p079;
    private byte p080, p081, p082, p083, p084, p085, p086, p087, p088, p089, p090, p091, p092, p093, p094, p095;
    private byte p096, p097, p098, p099, p100, p101, p102, p103, p104, p105, p106, p107, p108, p109, p110, p111;
    private byte p112, p113, p114, p115, p116, p117, p118, p119, p120, p121, p122, p123, p124, p125, p126, p127;
}

/**
 * Written by the owner on every allocation and free: on cache lines that remote freers neither write (the
 * pending flag, {@link Slab}) nor read (the format, {@link SlabFormat}), so an owner allocating from a slab
 * others free into does not bounce a line with them.
 */
abstract class SlabOwnerState extends SlabPadAfterFormat
{
    int[] freeStack = new int[0];
    int top;
    int used;
    Slab prevPartial;
    Slab nextPartial;
    boolean inPartial;
}

/** Padding: keeps the pending flag off the owner's cache lines (bytes, as above). */
@SuppressWarnings("unused")
abstract class SlabPadAfterOwner extends SlabOwnerState
{
    private byte q000, q001, q002, q003, q004, q005, q006, q007, q008, q009, q010, q011, q012, q013, q014, q015;
    private byte q016, q017, q018, q019, q020, q021, q022, q023, q024, q025, q026, q027, q028, q029, q030, q031;
    private byte q032, q033, q034, q035, q036, q037, q038, q039, q040, q041, q042, q043, q044, q045, q046, q047;
    private byte q048, q049, q050, q051, q052, q053, q054, q055, q056, q057, q058, q059, q060, q061, q062, q063;
    private byte q064, q065, q066, q067, q068, q069, q070, q071, q072, q073, q074, q075, q076, q077, q078, q079;
    private byte q080, q081, q082, q083, q084, q085, q086, q087, q088, q089, q090, q091, q092, q093, q094, q095;
    private byte q096, q097, q098, q099, q100, q101, q102, q103, q104, q105, q106, q107, q108, q109, q110, q111;
    private byte q112, q113, q114, q115, q116, q117, q118, q119, q120, q121, q122, q123, q124, q125, q126, q127;
}

package dev.pinarena.allocator;

import dev.pinarena.registration.Region;
import dev.pinarena.registration.os.MappedChunk;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.BitSet;

/**
 * Metadata of one chunk the arena owns: its mapping, its one registration, its scope, and for a shared
 * chunk the state of each arena page (never used, part of a slab, head or body of a run, head of a cached
 * run, freed).
 * <p>
 * A <em>dedicated</em> chunk holds exactly one buffer larger than the chunk size; it is kept for reuse when
 * freed; unmapped while the arena is open only when the pool releases it, idle, at its cap.
 * <p>
 * C counterpart: the malloc shim's {@code pa_chunk_t} ({@code bindings-c/src/shim/types.h}): a shared chunk
 * is a regular chunk ({@code PA_CHUNK_REGULAR}, cut into 64 KiB slices where this one has 8 KiB arena pages;
 * a run is a large span there), a dedicated chunk a huge chunk ({@code PA_CHUNK_HUGE}). This chunk is
 * populated up front; the shim's are mapped lazily.
 * <p>
 * Ordering: page states and slab references change under the pool lock (a run's head also between
 * {@link #RUN_HEAD} and {@link #RUN_CACHED} by the thread freeing or reusing it) and are read without a lock
 * by {@code free} on any thread. Writers publish with a release store after the slab or run is fully set up;
 * readers load with acquire, so a thread that sees a page's state sees the slab behind it.
 */
final class ArenaChunk
{
    /** Page has never held a buffer. */
    static final byte FREE = 0;
    /** Page belongs to a slab of equal blocks. */
    static final byte SLAB = 1;
    /** First page of a run handed out. */
    static final byte RUN_HEAD = 2;
    /** A later page of a run (handed out or cached). */
    static final byte RUN_BODY = 3;
    /** First page of a freed run kept in a thread's run cache. */
    static final byte RUN_CACHED = 4;
    /**
     * Page holds no buffer now but held one before: a free there is a double free, not an address the
     * arena never gave out. Free for every allocation purpose, like {@link #FREE}.
     */
    static final byte FREED = 5;

    private static final VarHandle STATE = MethodHandles.arrayElementVarHandle(byte[].class);
    private static final VarHandle SLABS = MethodHandles.arrayElementVarHandle(Slab[].class);

    final MappedChunk mapping;
    final Region region;
    final BufferScope scope;
    final long base;
    final long size;
    final boolean dedicated;
    final int pageCount;

    /** Guarded by the pool lock: pages taken by slabs and runs (shared chunks only). */
    final BitSet usedPages;
    private final byte[] pageState;
    private final int[] runPages;
    private final Slab[] slabByPage;

    /** Dedicated chunks: true while its buffer is handed out. Guarded by the pool lock. */
    boolean dedicatedInUse;
    /** Dedicated chunks: hand-outs so far, modulo 2^16 ({@link BufferHandle}). Guarded by the pool lock. */
    int dedicatedGeneration;
    /** Shared chunks: per run head page, hand-outs of a run starting there, modulo 2^16. */
    private final char[] runGenerations;

    ArenaChunk(final MappedChunk mapping, final Region region, final BufferScope scope, final boolean dedicated)
    {
        this.mapping = mapping;
        this.region = region;
        this.scope = scope;
        this.base = mapping.address();
        this.size = mapping.size();
        this.dedicated = dedicated;
        this.pageCount = dedicated ? 0 : (int)(size >>> SizeClasses.ARENA_PAGE_SHIFT);
        this.usedPages = dedicated ? null : new BitSet(pageCount);
        this.pageState = dedicated ? null : new byte[pageCount];
        this.runPages = dedicated ? null : new int[pageCount];
        this.slabByPage = dedicated ? null : new Slab[pageCount];
        this.runGenerations = dedicated ? null : new char[pageCount];
    }

    /**
     * @param address an address inside this chunk.
     * @return its arena page index.
     */
    int pageOf(final long address)
    {
        return (int)((address - base) >>> SizeClasses.ARENA_PAGE_SHIFT);
    }

    /**
     * @param page arena page index.
     * @return first byte of the page.
     */
    long pageAddress(final int page)
    {
        return base + ((long)page << SizeClasses.ARENA_PAGE_SHIFT);
    }

    byte state(final int page)
    {
        return (byte)STATE.getAcquire(pageState, page);
    }

    void state(final int page, final byte state)
    {
        STATE.setRelease(pageState, page, state);
    }

    Slab slab(final int page)
    {
        return (Slab)SLABS.getAcquire(slabByPage, page);
    }

    /**
     * By the thread handing the run out, before it reaches any other thread.
     *
     * @return the run's new generation.
     */
    int nextRunGeneration(final int headPage)
    {
        return ++runGenerations[headPage];
    }

    /**
     * @return the generation of the run that starts at {@code headPage}.
     */
    int runGeneration(final int headPage)
    {
        return runGenerations[headPage];
    }

    /**
     * Error path, without the lock: the head page of the run that {@code page} (a {@link #RUN_BODY}) belongs
     * to, by walking back; a snapshot that a concurrent free or reuse may outdate.
     */
    int runHeadOf(final int page)
    {
        int head = page;
        while (head > 0 && state(head) == RUN_BODY)
        {
            head--;
        }
        return head;
    }

    int runPages(final int headPage)
    {
        return runPages[headPage];
    }

    /**
     * Under the pool lock: marks pages as one slab. The slab reference is stored before the state, and the
     * state with release, so a reader that sees {@link #SLAB} sees the slab.
     */
    void markSlab(final int first, final int pages, final Slab slab)
    {
        for (int p = first; p < first + pages; p++)
        {
            slabByPage[p] = slab;
            state(p, SLAB);
        }
    }

    /**
     * Under the pool lock: marks pages as a run handed out.
     */
    void markRun(final int first, final int pages)
    {
        runPages[first] = pages;
        for (int p = first + 1; p < first + pages; p++)
        {
            state(p, RUN_BODY);
        }
        state(first, RUN_HEAD);
    }

    /**
     * Under the pool lock: marks pages free again ({@link #FREED}: they held a buffer).
     */
    void markFree(final int first, final int pages)
    {
        for (int p = first; p < first + pages; p++)
        {
            state(p, FREED);
            slabByPage[p] = null;
        }
        runPages[first] = 0;
    }

    /**
     * @param pages wanted run length.
     * @return first page of a free run of that length, or -1. Guarded by the pool lock.
     */
    int findFreeRun(final int pages)
    {
        int from = 0;
        while (from + pages <= pageCount)
        {
            final int start = usedPages.nextClearBit(from);
            if (start + pages > pageCount)
            {
                return -1;
            }
            int end = usedPages.nextSetBit(start);
            if (end < 0)
            {
                end = pageCount;
            }
            if (end - start >= pages)
            {
                return start;
            }
            from = end;
        }
        return -1;
    }

    public String toString()
    {
        return (dedicated ? "dedicated " : "") + scope + " chunk 0x" + Long.toHexString(base) + "+" + size;
    }
}

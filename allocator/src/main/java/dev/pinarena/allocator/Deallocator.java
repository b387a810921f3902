package dev.pinarena.allocator;

/**
 * The free path of an arena: from an address to its chunk, then to the slab, run or dedicated chunk that
 * holds it, with every check that makes a bad free an exception instead of a corruption. Errors are built
 * out of line ({@link ArenaErrors}); zeroing is decided in one place ({@link ZeroOnFree}).
 */
final class Deallocator
{
    /** A plain address names no generation: nothing to compare. */
    static final int ANY_GENERATION = -1;

    private final ChunkDirectory directory;
    private final ThreadHeaps heaps;
    private final PagePool pool;
    private final ZeroOnFree zeroOnFree;

    Deallocator(final ChunkDirectory directory, final ThreadHeaps heaps, final PagePool pool, final ZeroOnFree zeroOnFree)
    {
        this.directory = directory;
        this.heaps = heaps;
        this.pool = pool;
        this.zeroOnFree = zeroOnFree;
    }

    /**
     * The free of a plain address: a block of a slab is freed here, everything else (runs, dedicated
     * chunks, bad frees) in {@link #freeOther}.
     *
     * @param address an address the arena handed out and not freed since.
     */
    void free(final long address)
    {
        final Slab slab = slabHolding(address);
        final int index = slab == null ? -1 : slab.blockIndex(address);
        if (index < 0)
        {
            freeOther(address, ANY_GENERATION);
            return;
        }
        freeBlock(slab, index, address);
    }

    /**
     * The free of a {@link BufferHandle}: as {@link #free(long)}, after comparing the handle's generation
     * with the block's. Kept apart from {@link #free(long)} and as small: each has its own profile and
     * always inlines into the caller's loop; a stale handle, like every other refusal, is out of line.
     *
     * @param handle a handle the arena handed out.
     */
    void freeHandle(final long handle)
    {
        final long address = BufferHandle.address(handle);
        final Slab slab = slabHolding(address);
        final int index = slab == null ? -1 : slab.blockIndex(address);
        if (index < 0 || slab.generation(index) != BufferHandle.generation(handle))
        {
            freeOther(address, BufferHandle.generation(handle));
            return;
        }
        freeBlock(slab, index, address);
    }

    /** @return the slab of the page holding {@code address}, or null for anything else (even no chunk). */
    private Slab slabHolding(final long address)
    {
        final ArenaChunk chunk = directory.chunkOf(address);
        if (chunk == null || chunk.dedicated)
        {
            return null;
        }
        final int page = chunk.pageOf(address);
        return chunk.state(page) == ArenaChunk.SLAB ? chunk.slab(page) : null;
    }

    /**
     * Everything but a good free of a slab block: runs, dedicated chunks, stale handles and bad frees.
     *
     * @param address    an address the arena handed out and not freed since.
     * @param generation the generation the caller's {@link BufferHandle} names, or {@link #ANY_GENERATION}.
     */
    private void freeOther(final long address, final int generation)
    {
        final ArenaChunk chunk = directory.chunkOf(address);
        if (chunk == null)
        {
            final long released = pool.releasedChunkHolding(address);
            throw released != 0 ? ArenaErrors.inReleasedChunk(address, released) : ArenaErrors.notInArena(address);
        }
        if (chunk.dedicated)
        {
            if (generation != ANY_GENERATION && generation != chunk.dedicatedGeneration)
            {
                throw ArenaErrors.staleHandle(address, generation, chunk.dedicatedGeneration);
            }
            freeDedicated(chunk, address);
            return;
        }
        final int page = chunk.pageOf(address);
        final byte state = chunk.state(page);
        if (state == ArenaChunk.SLAB)
        {
            // A slab block that the fast path turned away: inside a block, in the slab's tail, or stale.
            final Slab slab = chunk.slab(page);
            final int index = slab.blockIndex(address);
            if (index < 0)
            {
                throw index == -1 ? insideBlock(slab, address) : ArenaErrors.inSlabTail(address, slab);
            }
            if (generation != ANY_GENERATION && generation != slab.generation(index))
            {
                throw ArenaErrors.staleHandle(address, generation, slab.generation(index));
            }
            freeBlock(slab, index, address);
            return;
        }
        switch (state)
        {
            case ArenaChunk.RUN_HEAD:
                if (generation != ANY_GENERATION && generation != chunk.runGeneration(page))
                {
                    throw ArenaErrors.staleHandle(address, generation, chunk.runGeneration(page));
                }
                freeRun(chunk, page, address);
                return;
            case ArenaChunk.RUN_BODY:
                throw insideRunBody(chunk, page, address);
            case ArenaChunk.RUN_CACHED:
                throw ArenaErrors.runAlreadyFree(address);
            case ArenaChunk.FREED:
                throw ArenaErrors.inFreedPage(address, chunk);
            default:
                throw ArenaErrors.inFreePage(address, chunk);
        }
    }

    /*
     * The refusals below run only for a bad free. They tell the three apart as free()'s Javadoc does: an
     * address inside a buffer handed out now is an interior pointer; one in memory that held a buffer and
     * holds none now (a freed page, a cached run, a free block, an idle dedicated chunk) is a double free;
     * one in memory that never held a buffer was never given out.
     */

    private static ArenaException insideRunBody(final ArenaChunk chunk, final int page, final long address)
    {
        final int head = chunk.runHeadOf(page);
        return chunk.state(head) == ArenaChunk.RUN_CACHED ?
            ArenaErrors.insideFreeRun(address, chunk.pageAddress(head)) : ArenaErrors.insideRun(address);
    }

    private static ArenaException insideBlock(final Slab slab, final long address)
    {
        final int containing = (int)((address - slab.base) / slab.blockSize);
        return slab.isAllocatedByRemoteView(containing) ?
            ArenaErrors.insideBlock(address, slab) : ArenaErrors.insideFreeBlock(address, slab);
    }

    private void freeBlock(final Slab slab, final int index, final long address)
    {
        final ThreadHeap owner = slab.heap;
        if (owner != null && owner.thread == Thread.currentThread())
        {
            owner.freeLocal(slab, index, address);
            return;
        }
        // Cross-thread free: steps 1-4 of the protocol described on Slab.
        if (!slab.isAllocatedByRemoteView(index))
        {
            throw ArenaErrors.blockNotAllocated(address, slab);
        }
        zeroOnFree.freed(slab.scope, address, slab.blockSize);
        // Read before the bit is set: from then on the owner may collect the block, empty the slab and
        // release it, and the pool may reformat it for another class.
        final int cls = slab.cls;
        final int outcome = slab.markRemoteFree(index);
        if (outcome < 0)
        {
            throw ArenaErrors.blockNotAllocated(address, slab);
        }
        heaps.current().countRemoteFree(cls);
        if (outcome > 0)
        {
            // Read the owner after winning the pending flag: an adoption in between rehomed the slab, and
            // pushing onto the new owner spares it a detour (the old owner's stack would also be drained).
            slab.heap.pushPending(slab);
        }
    }

    private void freeRun(final ArenaChunk chunk, final int page, final long address)
    {
        if ((address & (SizeClasses.ARENA_PAGE_SIZE - 1)) != 0)
        {
            throw ArenaErrors.insideRun(address, chunk.pageAddress(page));
        }
        final int pages = chunk.runPages(page);
        final long bytes = (long)pages << SizeClasses.ARENA_PAGE_SHIFT;
        zeroOnFree.freed(chunk.scope, address, bytes);
        final ThreadHeap heap = heaps.current();
        heap.countRunFree(bytes);
        if (heap.cacheRun(chunk.scope, address, pages))
        {
            chunk.state(page, ArenaChunk.RUN_CACHED);
        }
        else
        {
            pool.releaseRun(chunk, page, pages);
        }
    }

    private void freeDedicated(final ArenaChunk chunk, final long address)
    {
        if (address != chunk.base)
        {
            throw chunk.dedicatedInUse ? ArenaErrors.insideDedicated(address, chunk) :
                ArenaErrors.insideFreeDedicated(address, chunk);
        }
        if (chunk.dedicatedInUse)
        {
            zeroOnFree.freed(chunk.scope, address, chunk.size);
        }
        if (!pool.releaseDedicated(chunk))
        {
            throw ArenaErrors.dedicatedAlreadyFree(address, chunk);
        }
        heaps.current().countDedicatedFree(chunk.size);
    }
}

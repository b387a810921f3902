package dev.pinarena.allocator;

import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;
import org.agrona.UnsafeApi;

import java.util.ArrayList;
import java.util.List;

/**
 * Off-heap buffers that are always registered, never stale, and cost no garbage: the pinned arena.
 * <p>
 * The arena maps chunks (aligned to the chunk size, huge pages when the kernel grants them), registers each
 * once with one {@link Registrar}, and hands out buffers from them. A chunk is never deregistered or
 * unmapped while the arena is open, so an address it handed out always means the same physical frames and
 * the region of any address is simply the region of its chunk: {@code address & ~(chunkSize - 1)}.
 * <p>
 * Sizes: small and medium requests (up to {@link SizeClasses#MAX_SLAB_BLOCK}) come from slabs of equal
 * blocks ({@link SizeClasses}); larger ones up to the chunk size from runs of arena pages; larger still from
 * a dedicated chunk, kept for reuse when freed. Every buffer is aligned to the configured default alignment
 * (64 bytes), or to any power of two up to {@link SizeClasses#ARENA_PAGE_SIZE} on request.
 * <p>
 * Threads: each thread allocates from its own {@link ThreadHeap} without locks or atomics; a free on the
 * owning thread is equally plain, a free from another thread goes back to the owner through a lock-free
 * protocol ({@link Slab}). Heaps of threads that died are adopted by live ones, so no memory is lost.
 * <p>
 * Scopes: {@link #allocate(long)} serves local-only buffers; {@link #allocateRemote(long)} serves buffers
 * from chunks registered with remote access, optionally zeroed on free.
 * <p>
 * Bad input throws a specific {@link ArenaException} naming the address and the reason, and leaves the arena
 * consistent. {@link #close()} requires that every buffer was freed (or {@link #close(boolean) forced}) and
 * that no thread uses the arena any more.
 */
public final class PinnedArena implements AutoCloseable
{
    /** Every how many slow-path pool visits a heap looks for dead threads' heaps to adopt. */
    static final int DEAD_THREAD_CHECK_INTERVAL = 64;
    /**
     * After how many slow-path heap lookups a thread claims the last-heap cache: at once would have threads
     * that take turns rewrite the shared field on every operation.
     */
    static final int HEAP_CACHE_CLAIM_MISSES = 16;

    final SizeClasses classes;
    final PagePool pool;
    final boolean zeroRemoteOnFree;
    final long runCacheLimit;

    private final Registrar registrar;
    private final ArenaConfig config;
    private final ArenaCapacity capacity;
    /** {@code capacity.capBytes()}, one load less on every allocation. */
    private final long capBytes;
    private final ChunkDirectory directory;
    private final long chunkSize;
    private final int granule;
    private final int classCount;
    private final ThreadLocal<ThreadHeap> heaps;
    /**
     * The heap of the thread that last claimed it (see {@link #heap()}): a plain field, read and written racily
     * by every thread. A hit needs {@code lastHeap.creator == Thread.currentThread()}; {@code creator} is final,
     * so whichever heap a thread reads here it sees that heap's true creator, and only the calling thread's own
     * heap (the one its ThreadLocal holds) can match. A stale or foreign heap is just a miss.
     */
    private ThreadHeap lastHeap;
    /** Every heap ever made, live or adopted; guarded by the pool lock. */
    private final List<ThreadHeap> allHeaps = new ArrayList<>();
    private int heapArrivals;
    private long adoptions;
    private volatile boolean closed;

    private PinnedArena(final Registrar registrar, final ArenaConfig config)
    {
        this.registrar = registrar;
        this.config = config;
        this.chunkSize = config.chunkSize();
        this.classes = new SizeClasses(config.defaultAlignment());
        this.granule = classes.granule();
        this.classCount = classes.count();
        this.capacity = config.capBytes() == ArenaConfig.CAP_FROM_HOST ?
            ArenaCapacity.ofHost(chunkSize) :
            new ArenaCapacity(config.capBytes(), chunkSize, "configured: " + config.capBytes() + " bytes");
        this.capBytes = capacity.capBytes();
        if (capBytes < chunkSize)
        {
            throw new IllegalStateException("the arena cap allows not even one chunk: " + capacity.reason() +
                " — raise ulimit -l, grant CAP_IPC_LOCK or reserve huge pages");
        }
        this.directory = new ChunkDirectory(chunkSize);
        this.pool = new PagePool(registrar, config, classes, directory, capacity.capBytes());
        this.zeroRemoteOnFree = config.zeroRemoteOnFree();
        this.runCacheLimit = config.runCacheBytes();
        this.heaps = new ThreadLocal<>()
        {
            protected ThreadHeap initialValue()
            {
                return newHeap();
            }
        };
    }

    /**
     * @param registrar registers every chunk; stays owned by the caller (close it after the arena).
     * @return an arena with {@link ArenaConfig#defaults()}.
     */
    public static PinnedArena open(final Registrar registrar)
    {
        return open(registrar, ArenaConfig.defaults());
    }

    /**
     * Opens an arena. No chunk is mapped until the first allocation of each scope.
     *
     * @param registrar registers every chunk; stays owned by the caller (close it after the arena).
     * @param config    settings.
     * @return the arena.
     */
    public static PinnedArena open(final Registrar registrar, final ArenaConfig config)
    {
        return new PinnedArena(registrar, config);
    }

    /**
     * @param size bytes, positive.
     * @return address of a local-only buffer, aligned to the default alignment.
     */
    public long allocate(final long size)
    {
        return allocate(BufferScope.LOCAL, size, granule);
    }

    /**
     * @param size      bytes, positive.
     * @param alignment power of two up to {@link SizeClasses#ARENA_PAGE_SIZE}.
     * @return address of a local-only buffer aligned to {@code alignment} (or the default, if larger).
     */
    public long allocate(final long size, final int alignment)
    {
        return allocate(BufferScope.LOCAL, size, alignment);
    }

    /**
     * @param size bytes, positive.
     * @return address of a buffer in a chunk registered with remote access.
     */
    public long allocateRemote(final long size)
    {
        return allocate(BufferScope.REMOTE, size, granule);
    }

    /**
     * @param size      bytes, positive.
     * @param alignment power of two up to {@link SizeClasses#ARENA_PAGE_SIZE}.
     * @return address of a buffer in a chunk registered with remote access.
     */
    public long allocateRemote(final long size, final int alignment)
    {
        return allocate(BufferScope.REMOTE, size, alignment);
    }

    /**
     * @param scope     local or remote.
     * @param size      bytes, positive.
     * @param alignment power of two up to {@link SizeClasses#ARENA_PAGE_SIZE}.
     * @return the address of the buffer.
     * @throws InvalidSizeException      for a size that is not positive or above the cap.
     * @throws InvalidAlignmentException for a bad alignment.
     * @throws ArenaExhaustedException   if the cap is reached.
     * @throws ArenaClosedException      after close.
     */
    public long allocate(final BufferScope scope, final long size, final int alignment)
    {
        if (closed)
        {
            throw new ArenaClosedException(0, "allocate(" + size + ") after the arena was closed");
        }
        if (size <= 0 || size > capBytes)
        {
            throw new InvalidSizeException(0, "cannot allocate " + size + " bytes: " +
                (size <= 0 ? "size must be positive" : "larger than the arena cap of " + capBytes));
        }
        final ThreadHeap heap = heap();
        if (size <= SizeClasses.MAX_SLAB_BLOCK)
        {
            int cls = classes.classOf(size);
            if (alignment != granule)
            {
                checkAlignment(size, alignment);
                if (alignment > granule)
                {
                    cls = classes.alignedClass(cls, alignment);
                }
            }
            if (cls >= 0)
            {
                return heap.allocateBlock(scope.ordinal() * classCount + cls, cls);
            }
        }
        else if (alignment != granule)
        {
            checkAlignment(size, alignment);
        }
        if (size <= chunkSize)
        {
            return allocateRun(heap, scope, (int)((size + SizeClasses.ARENA_PAGE_SIZE - 1) >>> SizeClasses.ARENA_PAGE_SHIFT));
        }
        final ArenaChunk chunk = pool.takeDedicated(scope, size);
        heap.dedicatedAllocs++;
        heap.bytesAllocated += chunk.size;
        return chunk.base;
    }

    /**
     * @return the calling thread's heap: from the last-heap cache if this thread claimed it, else from the
     * ThreadLocal (creating it on the thread's first use).
     */
    private ThreadHeap heap()
    {
        final ThreadHeap cached = lastHeap;
        if (cached != null && cached.creator == Thread.currentThread())
        {
            return cached;
        }
        return heapSlow(cached);
    }

    private ThreadHeap heapSlow(final ThreadHeap cached)
    {
        final ThreadHeap heap = heaps.get();
        if (cached == null || ++heap.heapCacheMisses >= HEAP_CACHE_CLAIM_MISSES)
        {
            heap.heapCacheMisses = 0;
            lastHeap = heap;
        }
        return heap;
    }

    private long allocateRun(final ThreadHeap heap, final BufferScope scope, final int pages)
    {
        long address = heap.takeCachedRun(scope, pages);
        if (address != 0)
        {
            final ArenaChunk chunk = directory.chunkOf(address);
            chunk.state(chunk.pageOf(address), ArenaChunk.RUN_HEAD);
        }
        else
        {
            address = pool.takeRun(scope, pages);
        }
        heap.runAllocs++;
        heap.bytesAllocated += (long)pages << SizeClasses.ARENA_PAGE_SHIFT;
        return address;
    }

    /**
     * Frees a buffer. On the thread that allocated it: no lock, no atomic. From another thread: the block
     * goes back to its owner through the lock-free protocol of {@link Slab}.
     *
     * @param address an address returned by an allocate method and not freed since.
     * @throws DoubleFreeException       if it is not allocated now.
     * @throws InteriorPointerException  if it points inside a buffer.
     * @throws UnknownAddressException   if this arena never gave it out.
     * @throws ArenaClosedException      after close.
     */
    public void free(final long address)
    {
        if (closed)
        {
            throw new ArenaClosedException(address, "free(0x" + Long.toHexString(address) + ") after the arena was closed");
        }
        final ArenaChunk chunk = directory.chunkOf(address);
        if (chunk == null)
        {
            throw new UnknownAddressException(address, "free(0x" + Long.toHexString(address) +
                "): not inside any chunk of this arena — never allocated here");
        }
        if (chunk.dedicated)
        {
            freeDedicated(chunk, address);
            return;
        }
        final int page = chunk.pageOf(address);
        final byte state = chunk.state(page);
        if (state == ArenaChunk.SLAB)
        {
            freeBlock(chunk.slab(page), address);
            return;
        }
        switch (state)
        {
            case ArenaChunk.RUN_HEAD:
                freeRun(chunk, page, address);
                return;
            case ArenaChunk.RUN_BODY:
                throw new InteriorPointerException(address, "free(0x" + Long.toHexString(address) +
                    "): an interior pointer into a page run, not its first byte");
            case ArenaChunk.RUN_CACHED:
                throw new DoubleFreeException(address, "free(0x" + Long.toHexString(address) +
                    "): a page run that is already free (double free)");
            default:
                throw new UnknownAddressException(address, "free(0x" + Long.toHexString(address) +
                    "): in " + chunk + " but in a free page that holds no buffer — double free or never allocated");
        }
    }

    private void freeBlock(final Slab slab, final long address)
    {
        final int index = slab.blockIndex(address);
        if (index < 0)
        {
            if (index == -1)
            {
                throw new InteriorPointerException(address, "free(0x" + Long.toHexString(address) +
                    "): an interior pointer " + (address - slab.base) % slab.blockSize + " bytes into the " +
                    slab.blockSize + "-byte block at 0x" + Long.toHexString(address - (address - slab.base) % slab.blockSize));
            }
            throw new UnknownAddressException(address, "free(0x" + Long.toHexString(address) +
                "): in the unused tail of a slab of " + slab.blockSize + "-byte blocks — never allocated");
        }
        final ThreadHeap owner = slab.heap;
        if (owner != null && owner.thread == Thread.currentThread())
        {
            owner.freeLocal(slab, index, address);
            return;
        }
        // Cross-thread free: steps 1-4 of the protocol described on Slab.
        if (!slab.isAllocatedByRemoteView(index))
        {
            throw doubleFree(address, slab);
        }
        if (slab.scope == BufferScope.REMOTE && zeroRemoteOnFree)
        {
            zero(address, slab.blockSize);
        }
        // Read before the bit is set: from then on the owner may collect the block, empty the slab and
        // release it, and the pool may reformat it for another class.
        final int cls = slab.cls;
        final int outcome = slab.markRemoteFree(index);
        if (outcome < 0)
        {
            throw doubleFree(address, slab);
        }
        heap().countRemoteFree(cls);
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
            throw new InteriorPointerException(address, "free(0x" + Long.toHexString(address) +
                "): an interior pointer into the page run at 0x" + Long.toHexString(chunk.pageAddress(page)));
        }
        final int pages = chunk.runPages(page);
        final long bytes = (long)pages << SizeClasses.ARENA_PAGE_SHIFT;
        if (chunk.scope == BufferScope.REMOTE && zeroRemoteOnFree)
        {
            zero(address, bytes);
        }
        final ThreadHeap heap = heap();
        heap.runFrees++;
        heap.bytesFreed += bytes;
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
            throw new InteriorPointerException(address, "free(0x" + Long.toHexString(address) +
                "): an interior pointer into the dedicated buffer at 0x" + Long.toHexString(chunk.base));
        }
        if (chunk.scope == BufferScope.REMOTE && zeroRemoteOnFree && chunk.dedicatedInUse)
        {
            zero(address, chunk.size);
        }
        if (!pool.releaseDedicated(chunk))
        {
            throw new DoubleFreeException(address, "free(0x" + Long.toHexString(address) +
                "): the dedicated " + chunk.size + "-byte buffer is already free (double free)");
        }
        final ThreadHeap heap = heap();
        heap.dedicatedFrees++;
        heap.bytesFreed += chunk.size;
    }

    DoubleFreeException doubleFree(final long address, final Slab slab)
    {
        return new DoubleFreeException(address, "free(0x" + Long.toHexString(address) + "): the " + slab.blockSize +
            "-byte block is not allocated — freed twice (double free), or never handed out");
    }

    void zero(final long address, final long bytes)
    {
        UnsafeApi.setMemory(address, bytes, (byte)0);
    }

    private static void checkAlignment(final long size, final int alignment)
    {
        if (alignment <= 0 || Integer.bitCount(alignment) != 1 || alignment > SizeClasses.ARENA_PAGE_SIZE)
        {
            throw new InvalidAlignmentException(0, "cannot allocate " + size + " bytes aligned to " + alignment +
                ": alignment must be a power of two up to the " + SizeClasses.ARENA_PAGE_SIZE + "-byte arena page");
        }
    }

    /**
     * @param address any address inside a chunk of this arena.
     * @return the registration that covers it (its chunk's), in O(1).
     * @throws UnknownAddressException if no chunk of this arena holds it.
     */
    public Region region(final long address)
    {
        return chunkOrThrow(address).region;
    }

    /**
     * @param address any address inside a chunk of this arena.
     * @return the local key of its registration.
     */
    public int lkey(final long address)
    {
        return chunkOrThrow(address).region.lkey();
    }

    /**
     * @param address any address inside a remote-scope chunk of this arena.
     * @return the remote key of its registration.
     * @throws NotRemoteBufferException for an address of a local-only chunk.
     */
    public int rkey(final long address)
    {
        final ArenaChunk chunk = chunkOrThrow(address);
        if (chunk.scope != BufferScope.REMOTE)
        {
            throw new NotRemoteBufferException(address, "rkey(0x" + Long.toHexString(address) +
                "): the buffer is local-only (allocate it with allocateRemote to expose it to peers)");
        }
        return chunk.region.rkey();
    }

    /**
     * @param address any address inside a chunk of this arena.
     * @return the scope of its chunk.
     */
    public BufferScope scopeOf(final long address)
    {
        return chunkOrThrow(address).scope;
    }

    /**
     * @param address an address returned by an allocate method and not freed since.
     * @return the bytes usable at that address (at least what was asked): the block, run or dedicated size.
     */
    public long usableSize(final long address)
    {
        final ArenaChunk chunk = chunkOrThrow(address);
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
                throw new UnknownAddressException(address, "usableSize(0x" + Long.toHexString(address) + "): no buffer starts there");
        }
    }

    private ArenaChunk chunkOrThrow(final long address)
    {
        final ArenaChunk chunk = directory.chunkOf(address);
        if (chunk == null)
        {
            throw new UnknownAddressException(address, "0x" + Long.toHexString(address) + " is not inside any chunk of this arena");
        }
        return chunk;
    }

    /**
     * Wraps a new buffer of {@code size} bytes into a flyweight; close the flyweight to free it.
     *
     * @param size   bytes, 1 to {@link Integer#MAX_VALUE}.
     * @param buffer the flyweight to (re)wrap.
     * @return {@code buffer}.
     */
    public PinnedBuffer allocate(final int size, final PinnedBuffer buffer)
    {
        checkDetached(buffer);
        buffer.attach(this, allocate(BufferScope.LOCAL, size, granule), size);
        return buffer;
    }

    /**
     * As {@link #allocate(int, PinnedBuffer)}, from remote-scope chunks.
     *
     * @param size   bytes, 1 to {@link Integer#MAX_VALUE}.
     * @param buffer the flyweight to (re)wrap.
     * @return {@code buffer}.
     */
    public PinnedBuffer allocateRemote(final int size, final PinnedBuffer buffer)
    {
        checkDetached(buffer);
        buffer.attach(this, allocate(BufferScope.REMOTE, size, granule), size);
        return buffer;
    }

    /**
     * Adopts the heaps of threads that have died into the calling thread's heap. The arena also does this by
     * itself on slow paths; this call is for callers that know threads just ended.
     *
     * @return how many heaps were adopted.
     */
    public int reclaimDeadThreads()
    {
        final long before;
        synchronized (pool)
        {
            before = adoptions;
        }
        final ThreadHeap heap = heaps.get(); // a thread's first heap adopts on creation
        adoptDeadHeaps(heap);
        heap.drainPending();
        synchronized (pool)
        {
            return (int)(adoptions - before);
        }
    }

    private ThreadHeap newHeap()
    {
        final ThreadHeap heap = new ThreadHeap(this, classCount, Thread.currentThread());
        synchronized (pool)
        {
            allHeaps.add(heap);
        }
        adoptDeadHeaps(heap);
        return heap;
    }

    private static void checkDetached(final PinnedBuffer buffer)
    {
        if (buffer.isAttached())
        {
            throw new IllegalStateException("PinnedBuffer still holds 0x" + Long.toHexString(buffer.addressOffset()) +
                ": close it before wrapping a new buffer");
        }
    }

    /**
     * Called by a heap on the pool's slow path, now and then.
     */
    void maybeAdoptDeadHeaps(final ThreadHeap heap)
    {
        if (++heapArrivals % DEAD_THREAD_CHECK_INTERVAL == 0)
        {
            adoptDeadHeaps(heap);
        }
    }

    private int adoptDeadHeaps(final ThreadHeap adopter)
    {
        int adopted = 0;
        synchronized (pool)
        {
            for (final ThreadHeap heap : allHeaps)
            {
                if (heap == adopter || heap.adopted || heap.thread.isAlive())
                {
                    continue;
                }
                // isAlive() == false: everything the dead thread did happens-before this point.
                adopt(adopter, heap);
                adopted++;
            }
            adoptions += adopted;
        }
        return adopted;
    }

    private void adopt(final ThreadHeap adopter, final ThreadHeap dead)
    {
        dead.adopted = true;
        dead.thread = adopter.thread;
        for (int index = 0; index < dead.runCache.length; index++)
        {
            for (int i = 0; i < dead.runCacheCount[index]; i++)
            {
                pool.releaseCachedRun(dead.runCache[index][i]);
            }
            dead.runCacheCount[index] = 0;
        }
        dead.runCacheBytes = 0;
        for (final Slab slab : pool.slabsOf(dead))
        {
            dead.unlinkPartial(slab);
            slab.heap = adopter;
            if (slab.used == 0 && slab.claimForRelease())
            {
                pool.releaseSlab(slab);
            }
            else if (slab.top > 0)
            {
                adopter.linkPartial(slab);
            }
        }
        java.util.Arrays.fill(dead.current, null);
        java.util.Arrays.fill(dead.partialHead, null);
        adopter.drainAlso(dead);
    }

    /**
     * @return a consistent-enough snapshot of the counters (other threads' counters are read without a lock).
     */
    public ArenaStats stats()
    {
        synchronized (pool)
        {
            final long[] allocs = new long[classCount];
            final long[] frees = new long[classCount];
            long runAllocs = 0, runFrees = 0, dedicatedAllocs = 0, dedicatedFrees = 0;
            long bytesAllocated = 0, bytesFreed = 0, crossSent = 0, crossCollected = 0;
            int liveHeaps = 0;
            for (final ThreadHeap heap : allHeaps)
            {
                for (int i = 0; i < classCount; i++)
                {
                    allocs[i] += heap.classAllocs[i];
                    frees[i] += heap.classFrees[i];
                }
                runAllocs += heap.runAllocs;
                runFrees += heap.runFrees;
                dedicatedAllocs += heap.dedicatedAllocs;
                dedicatedFrees += heap.dedicatedFrees;
                bytesAllocated += heap.bytesAllocated;
                bytesFreed += heap.bytesFreed;
                crossSent += heap.crossThreadFreesSent;
                crossCollected += heap.crossThreadFreesCollected;
                liveHeaps += heap.adopted ? 0 : 1;
            }
            final int[] sizes = new int[classCount];
            for (int i = 0; i < classCount; i++)
            {
                sizes[i] = classes.blockSize(i);
                // Slab blocks are counted per class only (see ThreadHeap): their bytes follow exactly.
                bytesAllocated += allocs[i] * sizes[i];
                bytesFreed += frees[i] * sizes[i];
            }
            return new ArenaStats(
                registrar.name(), pool.mappedBytes(), capacity.capBytes(), pool.chunkCount(false), pool.chunkCount(true),
                pool.registrations(), bytesAllocated - bytesFreed, sizes, allocs, frees, runAllocs, runFrees,
                dedicatedAllocs, dedicatedFrees, crossSent, crossCollected, liveHeaps, adoptions);
        }
    }

    /**
     * @return the cap in force and how it was derived.
     */
    public ArenaCapacity capacity()
    {
        return capacity;
    }

    /**
     * @return the settings.
     */
    public ArenaConfig config()
    {
        return config;
    }

    /**
     * @return the size class table.
     */
    public SizeClasses sizeClasses()
    {
        return classes;
    }

    /**
     * @return the registrar every chunk is registered with.
     */
    public Registrar registrar()
    {
        return registrar;
    }

    /**
     * @return true once closed.
     */
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * Deregisters and unmaps every chunk; refuses while buffers are outstanding.
     *
     * @throws BuffersOutstandingException if any buffer is still allocated (nothing is released then).
     */
    public void close()
    {
        close(false);
    }

    /**
     * Deregisters and unmaps every chunk. No thread may use the arena during or after this call; buffers
     * still held become invalid memory when forced.
     *
     * @param force release even with buffers outstanding.
     * @throws BuffersOutstandingException if not forced and any buffer is still allocated.
     */
    public void close(final boolean force)
    {
        synchronized (pool)
        {
            if (closed)
            {
                return;
            }
            long outstanding = 0;
            for (final ThreadHeap heap : allHeaps)
            {
                outstanding += heap.buffersInUse();
            }
            if (outstanding != 0 && !force)
            {
                throw new BuffersOutstandingException(0, "close(): " + outstanding +
                    " buffers are still allocated; free them first, or close(true) to release the memory anyway");
            }
            closed = true;
            pool.closeAll();
        }
    }

    public String toString()
    {
        return "PinnedArena{" + registrar.name() + ", " + config + ", cap " + capacity.reason() + '}';
    }
}

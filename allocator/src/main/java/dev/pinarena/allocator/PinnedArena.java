package dev.pinarena.allocator;

import dev.pinarena.registration.AgronaAccess;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;

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
 * from remote-scope chunks, each with a key for peers ({@link #rkey(long)}) that reaches exactly the buffer
 * and is revoked when it is freed (see {@link RemoteKeyMode}), zeroed on free by default.
 * <p>
 * Bad input throws a specific {@link ArenaException} naming the address and the reason, and leaves the arena
 * consistent. {@link #close()} requires that every buffer was freed (or {@link #close(boolean) forced}) and
 * that no thread uses the arena any more.
 */
public final class PinnedArena implements AutoCloseable
{
    final SizeClasses classes;
    final PagePool pool;

    private final Registrar registrar;
    private final ArenaConfig config;
    private final ArenaCapacity capacity;
    /** {@code capacity.capBytes()}, one load less on every allocation. */
    private final long capBytes;
    private final ChunkDirectory directory;
    private final long chunkSize;
    private final int granule;
    private final int classCount;
    private final ThreadHeaps heaps;
    private final Deallocator deallocator;
    private final ExposedKeys keys;
    private final ArenaMetrics metrics;
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
                " — raise ulimit -l or grant CAP_IPC_LOCK");
        }
        this.directory = new ChunkDirectory(chunkSize);
        this.keys = new ExposedKeys(registrar, config);
        this.pool = new PagePool(registrar, config, classes, directory, capacity.capBytes(), keys);
        final ZeroOnFree zeroOnFree = new ZeroOnFree(config.zeroRemoteOnFree(), keys);
        this.heaps = new ThreadHeaps(pool, zeroOnFree, classCount, config.runCacheBytes());
        this.deallocator = new Deallocator(directory, heaps, pool, zeroOnFree);
        this.metrics = new ArenaMetrics(registrar.name(), capBytes, pool, heaps, classes);
        registrar.addUser(this); // the registrar refuses to close while this arena is open
    }

    /**
     * @param registrar registers every chunk; stays owned by the caller, who closes it after the arena (it
     *                  refuses to close before).
     * @return an arena with {@link ArenaConfig#defaults()}.
     */
    public static PinnedArena open(final Registrar registrar)
    {
        return open(registrar, ArenaConfig.defaults());
    }

    /**
     * Opens an arena. No chunk is mapped until the first allocation of each scope.
     *
     * @param registrar registers every chunk; stays owned by the caller, who closes it after the arena (it
     *                  refuses to close before: {@link dev.pinarena.registration.RegistrarInUseException}).
     * @param config    settings.
     * @return the arena.
     */
    public static PinnedArena open(final Registrar registrar, final ArenaConfig config)
    {
        AgronaAccess.require();
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
     * A buffer peers may access with {@link #rkey(long)}. With a verbs registrar its key reaches exactly
     * [address, address + size) and is revoked when the buffer is freed, before the bytes are zeroed or reused:
     * a type-1 memory window bound to the buffer where the device keeps a peer inside a window's bounds
     * (probed once), else — on rdma_rxe, or without {@code libpinarena-windows.so} — a registration of exactly
     * the buffer ({@link #remoteKeyMode()}, {@link #remoteKeyReason()} say which and why). With io_uring,
     * mlock or UCX registrars there is no per-buffer key ({@link RemoteKeyMode#NONE}: {@link #rkey(long)}
     * throws {@link NoRemoteKeyException}); the buffer is still pinned and zeroed on free.
     *
     * @param size bytes, positive.
     * @return address of a buffer in a remote-scope chunk.
     * @throws dev.pinarena.registration.RegistrationException when the device refuses the buffer's key.
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
        final long address = place(scope, size, alignment);
        if (scope == BufferScope.REMOTE && keys.perBuffer())
        {
            expose(address, size);
        }
        return address;
    }

    /** The remote key of a new remote buffer, reaching exactly its size; the buffer is freed if that fails. */
    private void expose(final long address, final long size)
    {
        try
        {
            keys.expose(address, size, directory.chunkOf(address).region);
        }
        catch (final RuntimeException ex)
        {
            deallocator.free(address, Deallocator.ANY_GENERATION);
            throw ex;
        }
    }

    private long place(final BufferScope scope, final long size, final int alignment)
    {
        if (closed)
        {
            throw ArenaErrors.allocateAfterClose(size);
        }
        if (size <= 0 || size > capBytes)
        {
            throw ArenaErrors.invalidSize(size, capBytes);
        }
        final ThreadHeap heap = heaps.current();
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
                return heap.allocateBlock(scope.ordinal() * classCount + cls, cls, size);
            }
        }
        else if (alignment != granule)
        {
            checkAlignment(size, alignment);
        }
        if (size <= chunkSize)
        {
            return allocateRun(heap, scope, (int)((size + SizeClasses.ARENA_PAGE_SIZE - 1) >>> SizeClasses.ARENA_PAGE_SHIFT), size);
        }
        final ArenaChunk chunk = pool.takeDedicated(scope, size);
        heap.lastGeneration = chunk.dedicatedGeneration;
        heap.dedicatedAllocs++;
        heap.bytesAllocated += chunk.size;
        return chunk.base;
    }

    private long allocateRun(final ThreadHeap heap, final BufferScope scope, final int pages, final long size)
    {
        long address = heap.takeCachedRun(scope, pages);
        final ArenaChunk chunk;
        if (address != 0)
        {
            chunk = directory.chunkOf(address);
            chunk.state(chunk.pageOf(address), ArenaChunk.RUN_HEAD);
        }
        else
        {
            address = pool.takeRun(scope, pages, size);
            chunk = directory.chunkOf(address);
        }
        heap.lastGeneration = chunk.nextRunGeneration(chunk.pageOf(address));
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
            throw ArenaErrors.closed("free", address);
        }
        deallocator.free(address, Deallocator.ANY_GENERATION);
    }

    /**
     * @param size bytes, positive.
     * @return a {@link BufferHandle} (address and generation) of a local-only buffer.
     */
    public long allocateHandle(final long size)
    {
        return allocateHandle(BufferScope.LOCAL, size);
    }

    /**
     * @param size bytes, positive.
     * @return a {@link BufferHandle} of a buffer in a chunk registered with remote access.
     */
    public long allocateRemoteHandle(final long size)
    {
        return allocateHandle(BufferScope.REMOTE, size);
    }

    private long allocateHandle(final BufferScope scope, final long size)
    {
        if (size > 0 && size <= SizeClasses.MAX_SLAB_BLOCK && !closed)
        {
            final int cls = classes.classOf(size);
            final long handle = heaps.current().allocateBlockHandle(scope.ordinal() * classCount + cls, cls, size);
            if (scope == BufferScope.REMOTE && keys.perBuffer())
            {
                expose(BufferHandle.address(handle), size);
            }
            return handle;
        }
        final long address = allocate(scope, size, granule); // checks, then a run or a dedicated chunk
        return BufferHandle.of(address, heaps.current().lastGeneration);
    }

    /**
     * Frees the buffer a handle names, after checking that it is the same hand-out of that memory.
     *
     * @param handle from {@link #allocateHandle(long)} or {@link #allocateRemoteHandle(long)}.
     * @throws StaleHandleException if the buffer was freed and handed out again since (nothing is freed).
     * @throws DoubleFreeException  if it is free now.
     */
    public void freeHandle(final long handle)
    {
        final long address = BufferHandle.address(handle);
        if (closed)
        {
            throw ArenaErrors.closed("freeHandle", address);
        }
        deallocator.free(address, BufferHandle.generation(handle));
    }

    private static void checkAlignment(final long size, final int alignment)
    {
        if (alignment <= 0 || Integer.bitCount(alignment) != 1 || alignment > SizeClasses.ARENA_PAGE_SIZE)
        {
            throw ArenaErrors.invalidAlignment(size, alignment);
        }
    }

    /**
     * @param address any address inside a chunk of this arena.
     * @return the registration that covers it (its chunk's), in O(1).
     * @throws UnknownAddressException if no chunk of this arena holds it.
     */
    public Region region(final long address)
    {
        return liveRegion(address, chunkOrThrow("region", address));
    }

    /**
     * @param address any address inside a chunk of this arena.
     * @return the local key of its registration.
     */
    public int lkey(final long address)
    {
        return liveRegion(address, chunkOrThrow("lkey", address)).lkey();
    }

    /**
     * The key a peer uses to reach a remote buffer, as {@link #remoteKeyMode()} makes it:
     * <ul>
     * <li>{@link RemoteKeyMode#WINDOW} (the default where the device keeps a peer inside a memory window's
     * bounds) and {@link RemoteKeyMode#MR} (the fallback: a registration of exactly the buffer): the key
     * reaches exactly [address, address + size) of the allocation — one byte before or after fails at the
     * peer with a remote access error — and is revoked when the buffer is freed, before its bytes are zeroed
     * or handed out again. {@code address} must be the start of a live remote buffer.</li>
     * <li>{@link RemoteKeyMode#CHUNK} (asked for): the chunk's key; any address inside a remote chunk. It
     * reaches every remote buffer of that chunk and stays valid after free.</li>
     * <li>{@link RemoteKeyMode#NONE} (io_uring, mlock, UCX registrars): no key; throws
     * {@link NoRemoteKeyException}.</li>
     * </ul>
     *
     * @param address a remote buffer: its first byte (any byte of a remote chunk with chunk keys).
     * @return the remote key.
     * @throws NotRemoteBufferException for an address of a local-only chunk.
     * @throws NoRemoteKeyException     without keys, or for an address that does not start a live remote buffer.
     */
    public int rkey(final long address)
    {
        final ArenaChunk chunk = chunkOrThrow("rkey", address);
        if (chunk.scope != BufferScope.REMOTE)
        {
            throw new NotRemoteBufferException(address, "rkey(0x" + Long.toHexString(address) +
                "): the buffer is local-only (allocate it with allocateRemote to expose it to peers)");
        }
        final Region region = liveRegion(address, chunk); // the chunk's registration must be live in every mode
        switch (keys.mode())
        {
            case CHUNK:
                return region.rkey();
            case NONE:
                throw new NoRemoteKeyException(address, "rkey(0x" + Long.toHexString(address) + "): no remote keys: " +
                    keys.reason() + " (use a verbs registrar to expose buffers to peers)");
            default:
                final long key = keys.rkey(address);
                if (key < 0)
                {
                    throw new NoRemoteKeyException(address, "rkey(0x" + Long.toHexString(address) +
                        "): not the start of a live remote buffer (each remote buffer has a key of its own)");
                }
                return (int)key;
        }
    }

    /**
     * @return how this arena makes remote keys (decided at the first remote chunk; this call decides it if
     * none was made yet).
     */
    public RemoteKeyMode remoteKeyMode()
    {
        return keys.mode();
    }

    /**
     * @return why {@link #remoteKeyMode()} is what it is, e.g. why memory windows are not used; empty when
     * windows are used as asked.
     */
    public String remoteKeyReason()
    {
        return keys.reason();
    }

    /**
     * @param address any address inside a chunk of this arena.
     * @return the scope of its chunk.
     */
    public BufferScope scopeOf(final long address)
    {
        return chunkOrThrow("scopeOf", address).scope;
    }

    /**
     * @param address an address returned by an allocate method and not freed since.
     * @return the bytes usable at that address (at least what was asked): the block, run or dedicated size.
     */
    public long usableSize(final long address)
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

    private ArenaChunk chunkOrThrow(final String operation, final long address)
    {
        if (closed)
        {
            throw ArenaErrors.closed(operation, address);
        }
        final ArenaChunk chunk = directory.chunkOf(address);
        if (chunk == null)
        {
            throw ArenaErrors.notInArena(operation, address);
        }
        return chunk;
    }

    private static Region liveRegion(final long address, final ArenaChunk chunk)
    {
        final Region region = chunk.region;
        if (!region.isLive())
        {
            throw ArenaErrors.registrationGone(address, region);
        }
        return region;
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
        return heaps.reclaimDeadThreads();
    }

    /**
     * A new direct {@link java.nio.ByteBuffer} over arena memory (big-endian, as {@code allocateDirect} makes
     * them), for code that needs a ByteBuffer object per buffer (a Netty buffer): one allocation per call. It
     * has no cleaner: dropping it frees nothing, and it is valid until the memory is freed.
     *
     * @param address first byte, inside a chunk of this arena.
     * @param length  bytes, not past the chunk.
     * @return the view.
     */
    public java.nio.ByteBuffer byteBuffer(final long address, final int length)
    {
        return byteBuffer(address, length, ByteBufferView.newView());
    }

    /**
     * As {@link #byteBuffer(long, int)}, re-aiming a view this method made earlier instead of making one: no
     * allocation. The caller must be done with the view's old memory.
     *
     * @param address first byte, inside a chunk of this arena.
     * @param length  bytes, not past the chunk.
     * @param view    a view from {@link #byteBuffer(long, int)} of this arena.
     * @return {@code view}, aimed at the new memory.
     * @throws IllegalArgumentException if {@code view} is not a writable direct buffer over this arena's memory.
     */
    public java.nio.ByteBuffer byteBuffer(final long address, final int length, final java.nio.ByteBuffer view)
    {
        final ArenaChunk chunk = chunkOrThrow("byteBuffer", address);
        if (length < 0 || address + length > chunk.base + chunk.size)
        {
            throw new IllegalArgumentException("byteBuffer(0x" + Long.toHexString(address) + ", " + length +
                "): the range leaves its chunk " + chunk);
        }
        final long previous = org.agrona.BufferUtil.address(view);
        if (!view.isDirect() || view.isReadOnly() || (view.capacity() != 0 && directory.chunkOf(previous) == null))
        {
            throw new IllegalArgumentException("byteBuffer: only a view this arena made can be re-aimed: " + view);
        }
        return ByteBufferView.aim(view, address, length).order(java.nio.ByteOrder.BIG_ENDIAN);
    }

    /**
     * A new flyweight that owns a new buffer: for a buffer that travels to another thread (which closes it,
     * freeing the buffer). Allocates the flyweight object; {@link #allocate(int, PinnedBuffer)} does not.
     *
     * @param size bytes, 1 to {@link Integer#MAX_VALUE}.
     * @return the buffer.
     */
    public PinnedBuffer allocateBuffer(final int size)
    {
        return allocate(size, new PinnedBuffer());
    }

    /**
     * As {@link #allocateBuffer(int)}, from remote-scope chunks.
     *
     * @param size bytes, 1 to {@link Integer#MAX_VALUE}.
     * @return the buffer.
     */
    public PinnedBuffer allocateRemoteBuffer(final int size)
    {
        return allocateRemote(size, new PinnedBuffer());
    }

    /**
     * Wraps a buffer this arena handed out as an address (perhaps on another thread) into a flyweight with its
     * keys; closing the flyweight frees the buffer. The capacity is the buffer's usable size.
     *
     * @param address an address returned by an allocate method and not freed since.
     * @param buffer  a detached flyweight.
     * @return {@code buffer}.
     * @throws UnknownAddressException  if no allocated buffer starts at {@code address}.
     * @throws IllegalArgumentException if the buffer is larger than {@link Integer#MAX_VALUE}.
     */
    public PinnedBuffer wrap(final long address, final PinnedBuffer buffer)
    {
        checkDetached(buffer);
        final long usable = allocatedSize(address);
        if (usable > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException("wrap(0x" + Long.toHexString(address) + "): " + usable +
                " bytes do not fit a PinnedBuffer");
        }
        buffer.attach(this, address, (int)usable);
        return buffer;
    }

    /**
     * @return the usable size of the allocated buffer that starts at {@code address}.
     * @throws UnknownAddressException if none does (free, interior, or never handed out).
     */
    private long allocatedSize(final long address)
    {
        final ArenaChunk chunk = chunkOrThrow("wrap", address);
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
        throw new UnknownAddressException(address, "wrap(0x" + Long.toHexString(address) +
            "): no allocated buffer starts there (freed, interior, or never handed out)");
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
     * @return a consistent-enough snapshot of the counters, taken without the arena's lock (other threads'
     * counters are read racily).
     */
    public ArenaStats stats()
    {
        final HeapCounters sum = new HeapCounters(classCount);
        heaps.sumInto(sum);
        final int[] sizes = new int[classCount];
        for (int i = 0; i < classCount; i++)
        {
            sizes[i] = classes.blockSize(i);
        }
        return new ArenaStats(
            registrar.name(), pool.mappedBytes(), capacity.capBytes(), pool.chunkCount(false), pool.chunkCount(true),
            pool.registrations(), sum.bytesInUse(classes), sizes, sum.classAllocs, sum.classFrees, sum.runAllocs,
            sum.runFrees, sum.dedicatedAllocs, sum.dedicatedFrees, sum.crossThreadFreesSent,
            sum.crossThreadFreesCollected, sum.liveHeaps, sum.adoptions, pool.bytesByBacking());
    }

    /**
     * @return the arena's counters, readable without its lock; {@link ArenaMetrics#register(String)} publishes
     * them as a platform MXBean.
     */
    public ArenaMetrics metrics()
    {
        return metrics;
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
     * Deregisters and unmaps every chunk. No thread may use the arena during or after this call. Forced with
     * buffers still held, the chunks are deregistered and their pages released, but their address ranges
     * stay mapped to scratch memory until the process ends: a stale access reaches nobody's memory and never
     * faults, and every key lookup throws {@link ArenaClosedException}.
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
            final long outstanding = heaps.buffersInUse();
            if (outstanding != 0 && !force)
            {
                throw new BuffersOutstandingException(0, "close(): " + outstanding +
                    " buffers are still allocated; free them first, or close(true) to release the memory anyway");
            }
            closed = true;
            try
            {
                try
                {
                    keys.close(); // every window and per-buffer registration, before the chunks under them
                }
                finally
                {
                    pool.closeAll(outstanding != 0);
                }
            }
            finally
            {
                metrics.unregister();
                registrar.removeUser(this);
            }
        }
    }

    public String toString()
    {
        return "PinnedArena{" + registrar.name() + ", " + config + ", cap " + capacity.reason() + '}';
    }
}

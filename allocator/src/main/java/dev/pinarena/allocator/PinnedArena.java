package dev.pinarena.allocator;

import dev.pinarena.registration.AgronaAccess;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;

/**
 * Off-heap buffers that are always registered, never stale, and cost no garbage: the pinned arena, a façade
 * over its parts. Chunks, aligned to the chunk size, are registered once with one {@link Registrar} and kept
 * while the arena is open, so an address always means the same frames and its region is its chunk's
 * ({@link ChunkDirectory}). Allocation ({@link Allocator}) serves slab blocks, runs of arena pages and dedicated
 * chunks from each thread's own {@link ThreadHeap}, without locks; free ({@link Deallocator}) is plain on the
 * owning thread and lock-free from others ({@link Slab}). Remote buffers carry a key of their own
 * ({@link #rkey(long)}, {@link ExposedKeys}), revoked when freed, and are zeroed on free by default.
 * <p>
 * Bad input throws a specific {@link ArenaException} naming the address and the reason ({@link ArenaErrors})
 * and leaves the arena consistent. {@link #close()} requires every buffer freed (or {@link #close(boolean)
 * forced}) and no thread using the arena any more.
 */
public final class PinnedArena implements AutoCloseable
{
    final SizeClasses classes;
    final PagePool pool;

    private final Registrar registrar;
    private final ArenaConfig config;
    private final ArenaCapacity capacity;
    private final ChunkDirectory directory;
    final ThreadHeaps heaps;
    private final Deallocator deallocator;
    private final Allocator allocator;
    private final ExposedKeys keys;
    private final ArenaMetrics metrics;
    private volatile boolean closed;

    private PinnedArena(final Registrar registrar, final ArenaConfig config)
    {
        this.registrar = registrar;
        this.config = config;
        final long chunkSize = config.chunkSize();
        this.classes = new SizeClasses(config.defaultAlignment());
        this.capacity = ArenaCapacity.of(config);
        this.directory = new ChunkDirectory(chunkSize);
        this.keys = new ExposedKeys(registrar, config);
        this.pool = new PagePool(registrar, config, classes, directory, capacity.capBytes(), keys);
        final ZeroOnFree zeroOnFree = new ZeroOnFree(config.zeroRemoteOnFree(), keys);
        this.heaps = new ThreadHeaps(pool, zeroOnFree, classes.count(), config.runCacheBytes());
        this.deallocator = new Deallocator(directory, heaps, pool, zeroOnFree);
        this.allocator = new Allocator(classes, pool, directory, heaps, deallocator, keys, capacity.capBytes(), chunkSize);
        this.metrics = new ArenaMetrics(registrar.name(), capacity.capBytes(), pool, heaps, classes);
        registrar.addUser(this); // the registrar refuses to close while this arena is open
    }

    /** @return {@link #open(Registrar, ArenaConfig)} with {@link ArenaConfig#defaults()}. */
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
        return allocate(BufferScope.LOCAL, size, classes.granule());
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
     * A buffer peers may access with {@link #rkey(long)}: with a verbs registrar its key reaches exactly
     * [address, address + size) and is revoked when it is freed ({@link RemoteKeyMode}; {@link #remoteKeyMode()}
     * and {@link #remoteKeyReason()} say which kind and why). Without keys it is still pinned and zeroed on free.
     *
     * @param size bytes, positive.
     * @return address of a buffer in a remote-scope chunk.
     * @throws dev.pinarena.registration.RegistrationException when the device refuses the buffer's key.
     */
    public long allocateRemote(final long size)
    {
        return allocate(BufferScope.REMOTE, size, classes.granule());
    }

    /** @return as {@link #allocate(long, int)}, the address of a buffer from remote-scope chunks. */
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
        return openAllocator(size).allocate(scope, size, alignment);
    }

    private Allocator openAllocator(final long size)
    {
        if (closed)
        {
            throw ArenaErrors.allocateAfterClose(size);
        }
        return allocator;
    }

    /**
     * Frees a buffer: plain on the thread that allocated it, lock-free from another ({@link Slab}).
     *
     * @param address an address returned by an allocate method and not freed since.
     * @throws DoubleFreeException       if it is not allocated now.
     * @throws InteriorPointerException  if it points inside a buffer.
     * @throws UnknownAddressException   if this arena never gave it out.
     * @throws ArenaClosedException      after close.
     */
    public void free(final long address)
    {
        checkOpen("free", address);
        deallocator.free(address);
    }

    /**
     * @param size bytes, positive.
     * @return a {@link BufferHandle} (address and generation) of a local-only buffer.
     */
    public long allocateHandle(final long size)
    {
        return openAllocator(size).allocateHandle(BufferScope.LOCAL, size);
    }

    /** @return as {@link #allocateHandle(long)}, a {@link BufferHandle} of a buffer from remote-scope chunks. */
    public long allocateRemoteHandle(final long size)
    {
        return openAllocator(size).allocateHandle(BufferScope.REMOTE, size);
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
        checkOpen("freeHandle", BufferHandle.address(handle));
        deallocator.freeHandle(handle);
    }

    /**
     * @param address any address inside a chunk of this arena.
     * @return the registration that covers it (its chunk's), in O(1).
     * @throws UnknownAddressException if no chunk of this arena holds it.
     */
    public Region region(final long address)
    {
        return ChunkDirectory.liveRegion(address, chunkOrThrow("region", address));
    }

    /**
     * @param address any address inside a chunk of this arena.
     * @return the local key of its registration.
     */
    public int lkey(final long address)
    {
        return ChunkDirectory.liveRegion(address, chunkOrThrow("lkey", address)).lkey();
    }

    /**
     * The key a peer uses to reach a remote buffer, as {@link #remoteKeyMode()} makes it ({@link RemoteKeyMode}):
     * with {@code WINDOW} and {@code MR} it reaches exactly the buffer's bytes and is revoked when the buffer is
     * freed, before they are zeroed or handed out again; with {@code CHUNK} it is the chunk's and stays valid.
     *
     * @param address a remote buffer: its first byte (any byte of a remote chunk with chunk keys).
     * @return the remote key.
     * @throws NotRemoteBufferException for an address of a local-only chunk.
     * @throws NoRemoteKeyException     without keys, or if no live remote buffer starts at {@code address}.
     */
    public int rkey(final long address)
    {
        return keys.peerKey(address, chunkOrThrow("rkey", address));
    }

    /** @return how this arena makes remote keys (decided at the first remote chunk, or by this call). */
    public RemoteKeyMode remoteKeyMode()
    {
        return keys.mode();
    }

    /** @return why {@link #remoteKeyMode()} is what it is (why windows are not used); empty if as asked. */
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
        checkOpen("usableSize", address);
        return directory.usableSize(address);
    }

    private void checkOpen(final String operation, final long address)
    {
        if (closed)
        {
            throw ArenaErrors.closed(operation, address);
        }
    }

    private ArenaChunk chunkOrThrow(final String operation, final long address)
    {
        checkOpen(operation, address);
        return directory.chunkOrThrow(operation, address);
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
        return attachNew(BufferScope.LOCAL, size, buffer);
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
        return attachNew(BufferScope.REMOTE, size, buffer);
    }

    private PinnedBuffer attachNew(final BufferScope scope, final int size, final PinnedBuffer buffer)
    {
        buffer.requireDetached();
        buffer.attach(this, allocate(scope, size, classes.granule()), size);
        return buffer;
    }

    /**
     * Adopts the heaps of dead threads into the calling thread's (as slow paths also do), for callers that know
     * threads just ended.
     *
     * @return how many heaps were adopted.
     */
    public int reclaimDeadThreads()
    {
        return heaps.reclaimDeadThreads();
    }

    /**
     * A new big-endian direct {@link java.nio.ByteBuffer} over arena memory (one allocation per call) for code
     * that needs a ByteBuffer object per buffer; without a cleaner, valid until the memory is freed.
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
     * As {@link #byteBuffer(long, int)}, re-aiming a view it made (no allocation; its old memory is let go).
     *
     * @param address first byte, inside a chunk of this arena.
     * @param length  bytes, not past the chunk.
     * @param view    a view from {@link #byteBuffer(long, int)} of this arena.
     * @return {@code view}, aimed at the new memory.
     * @throws IllegalArgumentException if {@code view} is not a writable direct buffer over this arena's memory.
     */
    public java.nio.ByteBuffer byteBuffer(final long address, final int length, final java.nio.ByteBuffer view)
    {
        return ByteBufferView.reaim(directory, chunkOrThrow("byteBuffer", address), address, length, view);
    }

    /**
     * A new flyweight owning a new buffer, for one that travels to another thread (which closes it to free it).
     *
     * @param size bytes, 1 to {@link Integer#MAX_VALUE}.
     * @return the buffer.
     */
    public PinnedBuffer allocateBuffer(final int size)
    {
        return allocate(size, new PinnedBuffer());
    }

    /** @return as {@link #allocateBuffer(int)}, a buffer of {@code size} bytes from remote-scope chunks. */
    public PinnedBuffer allocateRemoteBuffer(final int size)
    {
        return allocateRemote(size, new PinnedBuffer());
    }

    /**
     * Wraps a buffer handed out as an address (perhaps on another thread) into a flyweight of its usable size;
     * closing the flyweight frees the buffer.
     *
     * @param address an address returned by an allocate method and not freed since.
     * @param buffer  a detached flyweight.
     * @return {@code buffer}.
     * @throws UnknownAddressException  if no allocated buffer starts at {@code address}.
     * @throws IllegalArgumentException if the buffer is larger than {@link Integer#MAX_VALUE}.
     */
    public PinnedBuffer wrap(final long address, final PinnedBuffer buffer)
    {
        buffer.requireDetached();
        checkOpen("wrap", address);
        buffer.attach(this, address, directory.wrappableSize(address));
        return buffer;
    }

    /** @return a snapshot of the counters, taken without a lock (other threads' counters read racily). */
    public ArenaStats stats()
    {
        return metrics.snapshot();
    }

    /** @return the counters, readable without a lock; {@link ArenaMetrics#register(String)} publishes them. */
    public ArenaMetrics metrics()
    {
        return metrics;
    }

    /** @return the cap in force and how it was derived. */
    public ArenaCapacity capacity()
    {
        return capacity;
    }

    /** @return the settings. */
    public ArenaConfig config()
    {
        return config;
    }

    /** @return the size class table. */
    public SizeClasses sizeClasses()
    {
        return classes;
    }

    /** @return the registrar every chunk is registered with. */
    public Registrar registrar()
    {
        return registrar;
    }

    /** @return true once closed. */
    public boolean isClosed()
    {
        return closed;
    }

    /** {@link #close(boolean) close(false)}: throws {@link BuffersOutstandingException} while any is held. */
    public void close()
    {
        close(false);
    }

    /**
     * Deregisters and unmaps every chunk; no thread may use the arena during or after this call. Forced with
     * buffers still held, their ranges stay mapped to scratch memory until the process ends (a stale access
     * reaches nobody's memory and never faults) and every lookup throws {@link ArenaClosedException}.
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
                throw ArenaErrors.buffersOutstanding(outstanding);
            }
            closed = true;
            try
            {
                pool.closeAll(outstanding != 0); // the remote keys first, then the chunks under them
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

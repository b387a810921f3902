package dev.pinarena.allocator;

/**
 * The allocate path of an arena, beside {@link Deallocator}: from a size, scope and alignment to a slab
 * block, a run of arena pages or a dedicated chunk, and the remote key of a remote buffer. The arena checks
 * that it is open before calling; everything else — size, alignment, the cap — is checked here, with the
 * errors built out of line ({@link ArenaErrors}).
 */
final class Allocator
{
    private final SizeClasses classes;
    private final PagePool pool;
    private final ChunkDirectory directory;
    private final ThreadHeaps heaps;
    private final Deallocator deallocator;
    private final ExposedKeys keys;
    private final long capBytes;
    private final long chunkSize;
    private final int granule;
    private final int classCount;

    Allocator(
        final SizeClasses classes, final PagePool pool, final ChunkDirectory directory, final ThreadHeaps heaps,
        final Deallocator deallocator, final ExposedKeys keys, final long capBytes, final long chunkSize)
    {
        this.classes = classes;
        this.pool = pool;
        this.directory = directory;
        this.heaps = heaps;
        this.deallocator = deallocator;
        this.keys = keys;
        this.capBytes = capBytes;
        this.chunkSize = chunkSize;
        this.granule = classes.granule();
        this.classCount = classes.count();
    }

    /**
     * @return the address of a new buffer, with its remote key when it is a remote buffer with keys of its own.
     */
    long allocate(final BufferScope scope, final long size, final int alignment)
    {
        final long address = place(scope, size, alignment);
        if (scope == BufferScope.REMOTE && keys.perBuffer())
        {
            expose(address, size);
        }
        return address;
    }

    /**
     * @return a {@link BufferHandle} of a new buffer of the default alignment.
     */
    long allocateHandle(final BufferScope scope, final long size)
    {
        if (size > 0 && size <= SizeClasses.MAX_SLAB_BLOCK)
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

    /** The remote key of a new remote buffer, reaching exactly its size; the buffer is freed if that fails. */
    private void expose(final long address, final long size)
    {
        try
        {
            keys.expose(address, size, directory.chunkOf(address).region);
        }
        catch (final RuntimeException ex)
        {
            deallocator.free(address);
            throw ex;
        }
    }

    private long place(final BufferScope scope, final long size, final int alignment)
    {
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
        heap.countDedicated(chunk);
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
        heap.countRun(chunk.nextRunGeneration(chunk.pageOf(address)), pages);
        return address;
    }

    private static void checkAlignment(final long size, final int alignment)
    {
        if (alignment <= 0 || Integer.bitCount(alignment) != 1 || alignment > SizeClasses.ARENA_PAGE_SIZE)
        {
            throw ArenaErrors.invalidAlignment(size, alignment);
        }
    }
}

package dev.pinarena.allocator;

import dev.pinarena.registration.Access;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.RegistrationException;
import dev.pinarena.registration.os.ChunkMapper;
import dev.pinarena.registration.os.MappedChunk;
import dev.pinarena.registration.os.MappingFailedException;
import dev.pinarena.registration.os.PageBacking;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The shared pool behind every heap: the chunks of each scope, their free arena pages, idle dedicated chunks
 * and spare slab objects. Every method runs under this object's monitor — the arena's one lock, taken only
 * on slow paths (a heap needs a new slab, a run misses the thread's cache, a chunk is mapped).
 * <p>
 * Chunks are mapped and registered here, once, and are deregistered and unmapped by {@link #closeAll}, and
 * before a request is refused at the cap, idle dedicated chunks no key reaches ({@link #releaseIdleDedicated}).
 */
final class PagePool
{
    private final Registrar registrar;
    private final ArenaConfig config;
    private final SizeClasses classes;
    private final ChunkDirectory directory;
    private final long capBytes;
    private final List<List<ArenaChunk>> chunksByScope = new ArrayList<>();
    private final List<ArenaChunk> dedicatedChunks = new ArrayList<>();
    private final ArrayDeque<Slab> spareSlabs = new ArrayDeque<>();
    private final ReleasedChunks released = new ReleasedChunks();

    // Counters: written under the lock, read without it (statistics and metrics never wait for the lock).
    private volatile long mappedBytes;
    /** Bytes mapped per {@link PageBacking}, by ordinal: the backing mix the kernel granted. */
    private final AtomicLongArray bytesByBacking = new AtomicLongArray(PageBacking.values().length);
    private volatile long registrations;
    private volatile long chunkCount;
    private volatile int sharedChunks;
    private volatile int idleOrBusyDedicatedChunks;

    private final ExposedKeys keys;

    PagePool(
        final Registrar registrar, final ArenaConfig config, final SizeClasses classes,
        final ChunkDirectory directory, final long capBytes, final ExposedKeys keys)
    {
        this.keys = keys;
        this.registrar = registrar;
        this.config = config;
        this.classes = classes;
        this.directory = directory;
        this.capBytes = capBytes;
        for (int i = 0; i < BufferScope.COUNT; i++)
        {
            chunksByScope.add(new ArrayList<>());
        }
    }

    /**
     * @param size the request that needs the slab, for the message if the cap is reached.
     */
    synchronized Slab takeSlab(final ThreadHeap heap, final int slot, final int cls, final long size)
    {
        final BufferScope scope = BufferScope.of(slot / classes.count());
        final int pages = classes.slabPages(cls);
        final ArenaChunk chunk = chunkWithRun(scope, pages, size);
        final int first = chunk.findFreeRun(pages);
        chunk.usedPages.set(first, first + pages);
        final Slab slab = spareSlabs.isEmpty() ? new Slab() : spareSlabs.pop();
        slab.format(chunk, first, classes, cls, slot, heap);
        heap.linkOwned(slab);
        chunk.markSlab(first, pages, slab);
        return slab;
    }

    synchronized void releaseSlab(final Slab slab)
    {
        final ArenaChunk chunk = slab.chunk;
        chunk.markFree(slab.firstPage, slab.pages);
        chunk.usedPages.clear(slab.firstPage, slab.firstPage + slab.pages);
        slab.heap.unlinkOwned(slab);
        slab.heap = null;
        spareSlabs.push(slab);
    }

    synchronized long takeRun(final BufferScope scope, final int pages, final long size)
    {
        final ArenaChunk chunk = chunkWithRun(scope, pages, size);
        final int first = chunk.findFreeRun(pages);
        chunk.usedPages.set(first, first + pages);
        chunk.markRun(first, pages);
        return chunk.pageAddress(first);
    }

    synchronized void releaseRun(final ArenaChunk chunk, final int first, final int pages)
    {
        chunk.markFree(first, pages);
        chunk.usedPages.clear(first, first + pages);
    }

    /**
     * @param size bytes above the chunk size.
     * @return an idle dedicated chunk of the same power-of-two size, or a new one.
     */
    synchronized ArenaChunk takeDedicated(final BufferScope scope, final long size)
    {
        final long chunkBytes = Long.highestOneBit(size - 1) << 1;
        for (int i = 0; i < dedicatedChunks.size(); i++) // indexed: no iterator on a path taken per buffer
        {
            final ArenaChunk chunk = dedicatedChunks.get(i);
            if (!chunk.dedicatedInUse && chunk.scope == scope && chunk.size == chunkBytes)
            {
                chunk.dedicatedInUse = true;
                chunk.dedicatedGeneration = (chunk.dedicatedGeneration + 1) & BufferHandle.GENERATION_MASK;
                return chunk;
            }
        }
        final ArenaChunk chunk = mapAndRegister(scope, chunkBytes, true, size);
        dedicatedChunks.add(chunk);
        idleOrBusyDedicatedChunks++;
        chunk.dedicatedInUse = true;
        chunk.dedicatedGeneration = 1;
        return chunk;
    }

    /**
     * @return true if it was in use and is now idle; false if it was idle already (double free).
     */
    synchronized boolean releaseDedicated(final ArenaChunk chunk)
    {
        if (!chunk.dedicatedInUse)
        {
            return false;
        }
        chunk.dedicatedInUse = false;
        return true;
    }

    /**
     * Under the lock (callers hold it): sets a cached run's pages back to free.
     */
    synchronized void releaseCachedRun(final long address)
    {
        final ArenaChunk chunk = directory.chunkOf(address);
        final int first = chunk.pageOf(address);
        releaseRun(chunk, first, chunk.runPages(first));
    }

    private ArenaChunk chunkWithRun(final BufferScope scope, final int pages, final long request)
    {
        final List<ArenaChunk> chunks = chunksByScope.get(scope.ordinal());
        for (int i = 0; i < chunks.size(); i++) // indexed: no iterator on a path taken per slab or run
        {
            final ArenaChunk chunk = chunks.get(i);
            if (chunk.findFreeRun(pages) >= 0)
            {
                return chunk;
            }
        }
        final ArenaChunk chunk = mapAndRegister(scope, config.chunkSize(), false, request);
        chunksByScope.get(scope.ordinal()).add(chunk);
        sharedChunks++;
        return chunk;
    }

    private ArenaChunk mapAndRegister(final BufferScope scope, final long size, final boolean dedicated, final long request)
    {
        if (size > capBytes - mappedBytes && !releaseIdleDedicated(size))
        {
            throw new ArenaExhaustedException(0, "cannot allocate " + request + " bytes (" + scope +
                "): a new " + size + "-byte chunk would pin " + (mappedBytes + size) + " bytes, over the arena cap of " +
                capBytes + " (" + mappedBytes + " pinned in " + chunkCount + " chunks)");
        }
        final MappedChunk mapping;
        try
        {
            mapping = ChunkMapper.map(size, config.backings());
        }
        catch (final MappingFailedException ex)
        {
            throw new ArenaExhaustedException(0, "cannot allocate " + request + " bytes (" + scope +
                "): mapping a " + size + "-byte chunk failed: " + ex.getMessage(), ex);
        }
        final Region region;
        try
        {
            region = registrar.register(mapping.address(), mapping.size(), accessOf(scope));
        }
        catch (final RegistrationException ex)
        {
            mapping.unmap();
            throw new ArenaExhaustedException(0, "cannot allocate " + request + " bytes (" + scope +
                "): registering a new " + size + "-byte chunk failed: " + ex.getMessage(), ex);
        }
        catch (final RuntimeException ex)
        {
            mapping.unmap();
            throw ex;
        }
        registrations++;
        final ArenaChunk chunk = new ArenaChunk(mapping, region, scope, dedicated);
        released.forgetOverlapping(chunk.base, chunk.size);
        directory.add(chunk);
        mappedBytes += size;
        bytesByBacking.getAndAdd(mapping.backing().ordinal(), size);
        chunkCount++;
        return chunk;
    }

    /**
     * Under the lock, at the cap: a freed dedicated chunk waits for a request of its own size, so chunks of
     * other sizes could fill the cap with nothing in use. Releases idle dedicated chunks that no key reaches
     * ({@link ExposedKeys#reaches}) until {@code size} more bytes fit — deregistered first, then out of the
     * directory, then unmapped, so no registration ever covers memory handed back — if together they make
     * enough room; otherwise releases nothing.
     *
     * @return true if {@code size} more bytes fit under the cap now.
     */
    private boolean releaseIdleDedicated(final long size)
    {
        long releasable = 0;
        for (final ArenaChunk chunk : dedicatedChunks)
        {
            if (!chunk.dedicatedInUse && !keys.reaches(chunk))
            {
                releasable += chunk.size;
            }
        }
        if (size > capBytes - mappedBytes + releasable)
        {
            return false;
        }
        for (int i = dedicatedChunks.size() - 1; i >= 0 && size > capBytes - mappedBytes; i--)
        {
            final ArenaChunk chunk = dedicatedChunks.get(i);
            if (!chunk.dedicatedInUse && !keys.reaches(chunk))
            {
                releaseDedicatedChunk(chunk);
                dedicatedChunks.remove(i);
            }
        }
        return true;
    }

    private void releaseDedicatedChunk(final ArenaChunk chunk)
    {
        // A failed deregistration throws with the chunk untouched: still idle, listed and pinned.
        registrar.deregister(chunk.region);
        released.add(chunk.base, chunk.size);
        directory.remove(chunk);
        mappedBytes -= chunk.size;
        bytesByBacking.getAndAdd(chunk.mapping.backing().ordinal(), -chunk.size);
        chunkCount--;
        idleOrBusyDedicatedChunks--;
        chunk.mapping.unmap();
    }

    /**
     * Any thread, error path of a free outside every chunk.
     *
     * @return the base of a dedicated chunk released at the cap that held {@code address}, or 0.
     */
    long releasedChunkHolding(final long address)
    {
        return released.chunkHolding(address);
    }

    private int accessOf(final BufferScope scope)
    {
        return scope == BufferScope.REMOTE ? keys.chunkAccess() : Access.LOCAL_WRITE;
    }

    /** Without the lock. @return bytes mapped and registered. */
    long mappedBytes()
    {
        return mappedBytes;
    }

    /** Without the lock. @return bytes mapped per backing, by {@link PageBacking} ordinal (a copy). */
    long[] bytesByBacking()
    {
        final long[] copy = new long[bytesByBacking.length()];
        for (int i = 0; i < copy.length; i++)
        {
            copy[i] = bytesByBacking.get(i);
        }
        return copy;
    }

    /** Without the lock. @return registrations made. */
    long registrations()
    {
        return registrations;
    }

    /**
     * Without the lock.
     *
     * @param dedicated which kind.
     * @return dedicated chunks (in use or idle), or shared chunks of both scopes.
     */
    int chunkCount(final boolean dedicated)
    {
        return dedicated ? idleOrBusyDedicatedChunks : sharedChunks;
    }

    synchronized long capBytes()
    {
        return capBytes;
    }

    /**
     * Revokes every remote key (windows and per-buffer registrations, before the chunks under them), then
     * deregisters and unmaps every chunk. The first failure is rethrown after all were tried.
     *
     * @param retire map scratch memory over each chunk instead of unmapping it ({@link MappedChunk#retire()}):
     *               for a forced close while buffers are still held, so a stale access never faults.
     */
    synchronized void closeAll(final boolean retire)
    {
        try
        {
            keys.close();
        }
        finally
        {
            closeChunks(retire);
        }
    }

    private void closeChunks(final boolean retire)
    {
        final List<ArenaChunk> all = new ArrayList<>(dedicatedChunks);
        for (final List<ArenaChunk> chunks : chunksByScope)
        {
            all.addAll(chunks);
            chunks.clear();
        }
        dedicatedChunks.clear();
        RuntimeException first = null;
        for (final ArenaChunk chunk : all)
        {
            try
            {
                directory.remove(chunk);
                if (!registrar.isClosed() && chunk.region.isLive())
                {
                    registrar.deregister(chunk.region);
                }
                if (retire)
                {
                    chunk.mapping.retire();
                }
                else
                {
                    chunk.mapping.unmap();
                }
            }
            catch (final RuntimeException ex)
            {
                if (first == null)
                {
                    first = ex;
                }
            }
        }
        mappedBytes = 0;
        sharedChunks = 0;
        idleOrBusyDedicatedChunks = 0;
        for (int i = 0; i < bytesByBacking.length(); i++)
        {
            bytesByBacking.set(i, 0);
        }
        if (first != null)
        {
            throw first;
        }
    }
}

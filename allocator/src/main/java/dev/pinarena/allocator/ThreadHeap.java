package dev.pinarena.allocator;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * One thread's view of the arena: per scope and size class a current slab and a list of partly free slabs,
 * a cache of freed page runs, a stack of its slabs that other threads freed blocks into, and its counters.
 * <p>
 * C counterpart: the malloc shim's {@code pa_heap_t} ({@code bindings-c/src/shim/types.h}; adoption of a
 * dead thread's heap in {@code heap.c}).
 * <p>
 * Everything except {@link #pendingHead} is touched only by {@link #thread}: allocation and free on the
 * owning thread take no lock and no atomic instruction. Counters are plain fields read racily by
 * {@link ThreadHeaps}.
 * <p>
 * When a thread dies its heap is <em>adopted</em> by a live one (under the pool lock; usually by the next
 * new thread, see {@link ThreadHeaps}): {@link #thread} is set to the adopter's thread (a thread that observed
 * {@code isAlive() == false} happens-after everything the dead thread did), its slabs are rehomed to the
 * adopter, its cached runs go back to the pool, and its pending stack <em>forwards</em> to the adopter (see
 * {@link #adopt} and {@link #pushPending}): a remote free that read the old owner may still push there, and
 * the pusher itself hands such a push on. Nothing keeps an adopted heap, so a dead thread costs O(1).
 */
final class ThreadHeap
{
    /** Runs of up to this many arena pages (1 MiB) may be cached per thread. */
    static final int MAX_CACHED_RUN_PAGES = (1 << 20) >>> SizeClasses.ARENA_PAGE_SHIFT;
    /** Cached runs per scope and length. */
    static final int RUN_CACHE_DEPTH = 4;

    private static final VarHandle PENDING_HEAD;

    static
    {
        try
        {
            PENDING_HEAD = MethodHandles.lookup().findVarHandle(ThreadHeap.class, "pendingHead", Slab.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final PagePool pool;
    private final ThreadHeaps heaps;
    private final ZeroOnFree zeroOnFree;
    private final long runCacheLimit;
    final int classCount;
    /**
     * The thread that created this heap, for life (unlike {@link #thread}, which an adoption rewrites). Final,
     * so a thread that reads this heap through a racy reference (the arena's last-heap cache) still sees the
     * value written here: {@code creator == Thread.currentThread()} proves that this is the calling thread's
     * own heap, alive and never adopted.
     */
    final Thread creator;
    volatile Thread thread;
    /**
     * Set once, by {@link #adopt} under the pool lock, after this heap's slabs are rehomed: a push that lands
     * on this heap's stack from then on is handed on by its pusher (see {@link #pushPending}). A flag, not a
     * link to the adopter: a link would chain every adopted heap to the next, and one stale reference to an
     * old heap (the last-heap cache) would keep them all.
     */
    volatile boolean adopted;

    final Slab[] current;
    final Slab[] partialHead;
    @SuppressWarnings("unused") // accessed through PENDING_HEAD
    private volatile Slab pendingHead;
    /** First of every slab this heap owns, current, partial or full ({@link Slab#nextOwned}). Pool lock. */
    private Slab ownedSlabs;
    /** Neighbours on {@link ThreadHeaps}' list of heaps not adopted. Guarded by the pool lock. */
    ThreadHeap prevHeap;
    /** Written under the pool lock, read without it by the sums over heaps. */
    volatile ThreadHeap nextHeap;

    final long[][] runCache;
    final int[] runCacheCount;
    long runCacheBytes;

    // Counters, written by the owner thread only. Bytes of slab blocks are not counted here but derived from
    // the per-class counts (times the class's block size) by HeapCounters: one store less per operation.
    final long[] classAllocs;
    final long[] classFrees;
    long runAllocs;
    long runFrees;
    long dedicatedAllocs;
    long dedicatedFrees;
    /** Bytes of runs and dedicated chunks handed out (slab blocks excluded, see above). */
    long bytesAllocated;
    /** Bytes of runs and dedicated chunks freed (slab blocks excluded, see above). */
    long bytesFreed;
    /** The generation of this thread's latest run or dedicated allocation, for {@link PinnedArena#allocateHandle}. */
    int lastGeneration;
    /** Slow-path heap lookups by this thread since it last claimed the arena's last-heap cache. */
    int heapCacheMisses;
    long crossThreadFreesSent;
    long crossThreadFreesCollected;

    ThreadHeap(
        final PagePool pool, final ThreadHeaps heaps, final ZeroOnFree zeroOnFree, final int classCount,
        final long runCacheLimit, final Thread thread)
    {
        this.pool = pool;
        this.heaps = heaps;
        this.zeroOnFree = zeroOnFree;
        this.runCacheLimit = runCacheLimit;
        this.classCount = classCount;
        this.creator = thread;
        this.thread = thread;
        current = new Slab[BufferScope.COUNT * classCount];
        partialHead = new Slab[BufferScope.COUNT * classCount];
        runCache = new long[BufferScope.COUNT * (MAX_CACHED_RUN_PAGES + 1)][];
        runCacheCount = new int[BufferScope.COUNT * (MAX_CACHED_RUN_PAGES + 1)];
        classAllocs = new long[classCount];
        classFrees = new long[classCount];
    }

    /**
     * Owner thread: a block of class {@code cls} in {@code scope}.
     */
    long allocateBlock(final int slot, final int cls, final long size)
    {
        return slabToAllocateFrom(slot, cls, size).allocate();
    }

    /**
     * Owner thread: as {@link #allocateBlock}, returning the block's {@link BufferHandle}.
     */
    long allocateBlockHandle(final int slot, final int cls, final long size)
    {
        return slabToAllocateFrom(slot, cls, size).allocateHandle();
    }

    /**
     * Owner thread: the current slab of the slot, refilled if it has no free block; counts the allocation
     * the caller is about to make from it.
     */
    private Slab slabToAllocateFrom(final int slot, final int cls, final long size)
    {
        Slab slab = current[slot];
        if (slab == null || slab.top == 0)
        {
            slab = refill(slot, cls, size);
        }
        classAllocs[cls]++;
        return slab;
    }

    /**
     * Owner thread: frees a block of a slab this heap owns. The caller checked ownership and the index.
     */
    void freeLocal(final Slab slab, final int index, final long address)
    {
        if (!slab.isAllocatedByOwnerView(index))
        {
            throw ArenaErrors.blockNotAllocated(address, slab);
        }
        zeroOnFree.freed(slab.scope, address, slab.blockSize);
        slab.freeLocal(index);
        classFrees[slab.cls]++;
        afterFree(slab);
    }

    /**
     * Any thread: the bookkeeping of a cross-thread free this heap's thread made.
     */
    void countRemoteFree(final int cls)
    {
        classFrees[cls]++;
        crossThreadFreesSent++;
    }

    /**
     * Owner thread: the bookkeeping of a run of {@code pages} arena pages just handed out.
     */
    void countRun(final int generation, final int pages)
    {
        lastGeneration = generation;
        runAllocs++;
        bytesAllocated += (long)pages << SizeClasses.ARENA_PAGE_SHIFT;
    }

    /**
     * Owner thread: the bookkeeping of a dedicated chunk just handed out.
     */
    void countDedicated(final ArenaChunk chunk)
    {
        lastGeneration = chunk.dedicatedGeneration;
        dedicatedAllocs++;
        bytesAllocated += chunk.size;
    }

    /**
     * The calling thread's heap: the bookkeeping of a run of {@code bytes} it freed.
     */
    void countRunFree(final long bytes)
    {
        runFrees++;
        bytesFreed += bytes;
    }

    /**
     * The calling thread's heap: the bookkeeping of a dedicated chunk of {@code bytes} it freed.
     */
    void countDedicatedFree(final long bytes)
    {
        dedicatedFrees++;
        bytesFreed += bytes;
    }

    /**
     * Any thread: step 4 of the cross-thread protocol (see {@link Slab}); a Treiber push. The slab's link is
     * written before the CAS that publishes it; the owner's exchange in {@link #drainPending()} reads it after.
     * There is no single pop, only take-all, so the stack has no ABA problem.
     * <p>
     * Adopted heaps: the pusher read this heap as the slab's owner before an adoption rehomed the slab, so
     * the push may land after the adopter emptied this stack for the last time. Hence, after its CAS, the
     * pusher reads {@link #adopted}. The adopter writes {@code adopted} before its take-all
     * ({@link #handOnPending()}); the pusher's CAS comes before its read of {@code adopted}. All are volatile
     * accesses, so in their total order either the push precedes the adopter's take-all (the adopter takes
     * it) or it follows it, and then the pusher's read follows the write of {@code adopted} and sees it: the
     * pusher takes the stack itself and hands it on. Either way the slab reaches a heap that drains it.
     */
    void pushPending(final Slab slab)
    {
        Slab head;
        do
        {
            head = (Slab)PENDING_HEAD.getVolatile(this);
            slab.nextPending = head;
        }
        while (!PENDING_HEAD.compareAndSet(this, head, slab));
        if (adopted)
        {
            handOnPending();
        }
    }

    /**
     * Any thread, on an adopted heap: takes this heap's whole pending stack and pushes each slab onto its
     * present owner (the rehome of every slab of this heap happened before {@link #adopted} was written, and
     * a slab on a stack keeps {@code pending} = 1, so it is neither released nor reformatted meanwhile). Take-
     * all is atomic, so concurrent callers take disjoint lists; each owns the links of what it took.
     */
    private void handOnPending()
    {
        Slab slab = (Slab)PENDING_HEAD.getAndSet(this, null);
        while (slab != null)
        {
            final Slab next = slab.nextPending; // read before the push rewrites the link
            slab.heap.pushPending(slab); // a heap adopted again forwards again
            slab = next;
        }
    }

    private void afterFree(final Slab slab)
    {
        if (slab == current[slab.slot])
        {
            return;
        }
        if (slab.used == 0 && slab.claimForRelease())
        {
            unlinkPartial(slab);
            pool.releaseSlab(slab);
        }
        else if (!slab.inPartial && slab.top > 0)
        {
            // top > 0: a drain may bring a slab with nothing collected (a spare push, see Slab), and a full
            // slab must never sit on the partial list.
            linkPartial(slab);
        }
    }

    private Slab refill(final int slot, final int cls, final long size)
    {
        drainPending();
        Slab slab = current[slot];
        if (slab != null && slab.top > 0)
        {
            return slab;
        }
        slab = partialHead[slot];
        if (slab != null)
        {
            unlinkPartial(slab);
            current[slot] = slab;
            return slab;
        }
        heaps.maybeAdoptDeadHeaps(this);
        slab = pool.takeSlab(this, slot, cls, size);
        current[slot] = slab;
        return slab;
    }

    /**
     * Owner thread: collects every remote free pending on this heap (adopted heaps forward theirs here).
     */
    void drainPending()
    {
        if ((Slab)PENDING_HEAD.getVolatile(this) == null)
        {
            return;
        }
        Slab slab = (Slab)PENDING_HEAD.getAndSet(this, null);
        while (slab != null)
        {
            final Slab next = slab.nextPending; // read before clearPending: a new push rewrites the link
            if (slab.heap != this)
            {
                // Rehomed since the push (its dead owner was adopted elsewhere): hand it on, still pending.
                slab.heap.pushPending(slab);
                slab = next;
                continue;
            }
            slab.nextPending = null;
            slab.clearPending();
            crossThreadFreesCollected += slab.collectRemoteFrees();
            afterFree(slab);
            slab = next;
        }
    }

    void linkPartial(final Slab slab)
    {
        final Slab head = partialHead[slab.slot];
        slab.prevPartial = null;
        slab.nextPartial = head;
        if (head != null)
        {
            head.prevPartial = slab;
        }
        partialHead[slab.slot] = slab;
        slab.inPartial = true;
    }

    void unlinkPartial(final Slab slab)
    {
        if (!slab.inPartial)
        {
            return;
        }
        if (slab.prevPartial != null)
        {
            slab.prevPartial.nextPartial = slab.nextPartial;
        }
        else
        {
            partialHead[slab.slot] = slab.nextPartial;
        }
        if (slab.nextPartial != null)
        {
            slab.nextPartial.prevPartial = slab.prevPartial;
        }
        slab.prevPartial = null;
        slab.nextPartial = null;
        slab.inPartial = false;
    }

    /**
     * Owner thread: a run from this thread's cache, or 0.
     */
    long takeCachedRun(final BufferScope scope, final int pages)
    {
        if (pages > MAX_CACHED_RUN_PAGES)
        {
            return 0;
        }
        final int index = scope.ordinal() * (MAX_CACHED_RUN_PAGES + 1) + pages;
        final int count = runCacheCount[index];
        if (count == 0)
        {
            return 0;
        }
        runCacheCount[index] = count - 1;
        runCacheBytes -= (long)pages << SizeClasses.ARENA_PAGE_SHIFT;
        return runCache[index][count - 1];
    }

    /**
     * Owner thread: keeps a freed run for reuse if the cache has room.
     *
     * @return true if cached.
     */
    boolean cacheRun(final BufferScope scope, final long address, final int pages)
    {
        final long bytes = (long)pages << SizeClasses.ARENA_PAGE_SHIFT;
        if (pages > MAX_CACHED_RUN_PAGES || runCacheBytes + bytes > runCacheLimit)
        {
            return false;
        }
        final int index = scope.ordinal() * (MAX_CACHED_RUN_PAGES + 1) + pages;
        long[] stack = runCache[index];
        if (stack == null)
        {
            stack = new long[RUN_CACHE_DEPTH]; // once per scope and run length
            runCache[index] = stack;
        }
        final int count = runCacheCount[index];
        if (count == RUN_CACHE_DEPTH)
        {
            return false;
        }
        stack[count] = address;
        runCacheCount[index] = count + 1;
        runCacheBytes += bytes;
        return true;
    }

    /**
     * Under the pool lock, on the adopter: takes over the heap of a thread that died. Its cached runs go back
     * to the pool, its slabs are rehomed here (empty ones released, partly free ones linked as partial), and
     * then its pending stack forwards here: {@link #adopted} is written after every rehome (so whoever
     * follows it finds each slab's new owner) and before the take-all of what is pending (the order
     * {@link #pushPending} relies on). The dead heap is referenced by nothing of the arena afterwards.
     *
     * Only the dead heap's own slabs are visited (its owned list), however large the arena.
     *
     * @param dead a heap whose thread is observed dead (so everything it did happens-before this call).
     * @return how many slabs were visited: the dead heap's.
     */
    int adopt(final ThreadHeap dead)
    {
        dead.thread = thread;
        for (int index = 0; index < dead.runCache.length; index++)
        {
            for (int i = 0; i < dead.runCacheCount[index]; i++)
            {
                pool.releaseCachedRun(dead.runCache[index][i]);
            }
            dead.runCacheCount[index] = 0;
        }
        dead.runCacheBytes = 0;
        int visited = 0;
        Slab slab = dead.ownedSlabs;
        dead.ownedSlabs = null;
        while (slab != null)
        {
            final Slab next = slab.nextOwned; // read before linkOwned rewrites the link
            visited++;
            dead.unlinkPartial(slab);
            slab.heap = this;
            linkOwned(slab);
            if (slab.used == 0 && slab.claimForRelease())
            {
                pool.releaseSlab(slab);
            }
            else if (slab.top > 0)
            {
                linkPartial(slab);
            }
            slab = next;
        }
        Arrays.fill(dead.current, null);
        Arrays.fill(dead.partialHead, null);
        dead.adopted = true;
        dead.handOnPending();
        return visited;
    }

    /**
     * Under the pool lock: {@code slab}, just formatted for this heap or rehomed to it, joins its owned list.
     */
    void linkOwned(final Slab slab)
    {
        slab.prevOwned = null;
        slab.nextOwned = ownedSlabs;
        if (ownedSlabs != null)
        {
            ownedSlabs.prevOwned = slab;
        }
        ownedSlabs = slab;
    }

    /**
     * Under the pool lock: {@code slab}, about to go back to the pool, leaves this heap's owned list.
     */
    void unlinkOwned(final Slab slab)
    {
        if (slab.prevOwned != null)
        {
            slab.prevOwned.nextOwned = slab.nextOwned;
        }
        else
        {
            ownedSlabs = slab.nextOwned;
        }
        if (slab.nextOwned != null)
        {
            slab.nextOwned.prevOwned = slab.prevOwned;
        }
        slab.prevOwned = null;
        slab.nextOwned = null;
    }

    long buffersInUse()
    {
        long live = runAllocs - runFrees + dedicatedAllocs - dedicatedFrees;
        for (int i = 0; i < classCount; i++)
        {
            live += classAllocs[i] - classFrees[i];
        }
        return live;
    }

    public String toString()
    {
        return "heap of " + thread.getName() + (adopted ? " (adopted)" : "");
    }
}

package dev.pinarena.allocator;

import java.util.Arrays;

/**
 * Every {@link ThreadHeap} of one arena: the calling thread's heap (a last-heap cache in front of a
 * ThreadLocal), the list of all heaps ever made, the adoption of dead threads' heaps, and the sums over all
 * heaps that statistics and close need.
 * <p>
 * The list and the adoption counters are guarded by the pool's lock (the arena's one lock), because adoption
 * rehomes slabs the pool also walks.
 */
final class ThreadHeaps
{
    /** Every how many slow-path pool visits a heap looks for dead threads' heaps to adopt. */
    static final int DEAD_THREAD_CHECK_INTERVAL = 64;
    /**
     * After how many slow-path heap lookups a thread claims the last-heap cache: at once would have threads
     * that take turns rewrite the shared field on every operation.
     */
    static final int HEAP_CACHE_CLAIM_MISSES = 16;

    private final PagePool pool;
    private final ZeroOnFree zeroOnFree;
    private final int classCount;
    private final long runCacheLimit;
    private final ThreadLocal<ThreadHeap> heaps;
    /**
     * The heap of the thread that last claimed it (see {@link #current()}): a plain field, read and written
     * racily by every thread. A hit needs {@code lastHeap.creator == Thread.currentThread()}; {@code creator}
     * is final, so whichever heap a thread reads here it sees that heap's true creator, and only the calling
     * thread's own heap (the one its ThreadLocal holds) can match. A stale or foreign heap is just a miss.
     */
    private ThreadHeap lastHeap;
    /**
     * Every heap ever made, live or adopted: copied on write (under the pool lock, once per thread), so
     * sums over all heaps read it without a lock.
     */
    private volatile ThreadHeap[] allHeaps = new ThreadHeap[0];
    private int heapArrivals;
    /** Written under the pool lock, read without it. */
    private volatile long adoptions;

    ThreadHeaps(final PagePool pool, final ZeroOnFree zeroOnFree, final int classCount, final long runCacheLimit)
    {
        this.pool = pool;
        this.zeroOnFree = zeroOnFree;
        this.classCount = classCount;
        this.runCacheLimit = runCacheLimit;
        this.heaps = ThreadLocal.withInitial(this::newHeap);
    }

    /**
     * @return the calling thread's heap: from the last-heap cache if this thread claimed it, else from the
     * ThreadLocal (creating it on the thread's first use).
     */
    ThreadHeap current()
    {
        final ThreadHeap cached = lastHeap;
        if (cached != null && cached.creator == Thread.currentThread())
        {
            return cached;
        }
        return currentSlow(cached);
    }

    private ThreadHeap currentSlow(final ThreadHeap cached)
    {
        final ThreadHeap heap = heaps.get();
        if (cached == null || ++heap.heapCacheMisses >= HEAP_CACHE_CLAIM_MISSES)
        {
            heap.heapCacheMisses = 0;
            lastHeap = heap;
        }
        return heap;
    }

    private ThreadHeap newHeap()
    {
        final ThreadHeap heap = new ThreadHeap(pool, this, zeroOnFree, classCount, runCacheLimit, Thread.currentThread());
        synchronized (pool)
        {
            final ThreadHeap[] grown = Arrays.copyOf(allHeaps, allHeaps.length + 1);
            grown[grown.length - 1] = heap;
            allHeaps = grown;
        }
        adoptDeadHeaps(heap);
        return heap;
    }

    /**
     * Adopts the heaps of dead threads into the calling thread's heap and collects what is pending on it.
     *
     * @return how many heaps were adopted.
     */
    int reclaimDeadThreads()
    {
        final long before = adoptions;
        final ThreadHeap heap = heaps.get(); // a thread's first heap adopts on creation
        adoptDeadHeaps(heap);
        heap.drainPending();
        return (int)(adoptions - before);
    }

    /**
     * Called by a heap on its slow path to the pool, now and then.
     */
    void maybeAdoptDeadHeaps(final ThreadHeap heap)
    {
        if (++heapArrivals % DEAD_THREAD_CHECK_INTERVAL == 0)
        {
            adoptDeadHeaps(heap);
        }
    }

    private void adoptDeadHeaps(final ThreadHeap adopter)
    {
        synchronized (pool)
        {
            int adopted = 0;
            for (final ThreadHeap heap : allHeaps)
            {
                if (heap == adopter || heap.adopted || heap.thread.isAlive())
                {
                    continue;
                }
                // isAlive() == false: everything the dead thread did happens-before this point.
                adopter.adopt(heap);
                adopted++;
            }
            adoptions += adopted;
        }
    }

    /**
     * Without a lock: buffers handed out and not freed, over every heap (other threads' counters are read
     * racily; exact when no thread is allocating or freeing).
     */
    long buffersInUse()
    {
        long outstanding = 0;
        for (final ThreadHeap heap : allHeaps)
        {
            outstanding += heap.buffersInUse();
        }
        return outstanding;
    }

    /**
     * Without a lock: adds every heap's counters into {@code sum} (read racily, as above).
     */
    void sumInto(final HeapCounters sum)
    {
        for (final ThreadHeap heap : allHeaps)
        {
            sum.add(heap);
        }
        sum.adoptions = adoptions;
    }
}

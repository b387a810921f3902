package dev.pinarena.allocator;

/**
 * Every live {@link ThreadHeap} of one arena: the calling thread's heap (a last-heap cache in front of a
 * ThreadLocal), an intrusive list of the heaps not yet adopted, the adoption of dead threads' heaps, and the
 * sums over all heaps that statistics and close need.
 * <p>
 * A dead thread costs O(1) and leaves a bounded trace: each new heap (and each heap's slow path, now and then)
 * looks at the next {@link #DEAD_THREAD_SCAN} heaps of the list from a rotating cursor and adopts the dead
 * ones; an adopted heap leaves the list, its counters are folded into {@link #retired}, and nothing of the
 * arena keeps it (its slabs are rehomed, its pending stack forwards, see {@link ThreadHeap#adopt}). With
 * threads arriving, the cursor laps the list, so a dead heap is found within a lap.
 * <p>
 * The list, the cursor, the retired sums and the adoption probe are guarded by the pool's lock (the arena's
 * one lock), because adoption rehomes slabs the pool also walks; sums over heaps read them without it.
 */
final class ThreadHeaps
{
    /**
     * Told of each adoption, under the pool lock, on the adopting thread: the heap adopted and how many slabs
     * adopting it visited (what adoption costs beyond a constant per heap). The arena's probe watches nothing;
     * a test installs its own to see that cost.
     */
    interface AdoptionProbe
    {
        /** Watches nothing: the arena's. */
        AdoptionProbe NONE = (dead, slabsVisited) ->
        {
        };

        /**
         * @param dead         the heap just adopted.
         * @param slabsVisited slabs its adoption visited.
         */
        void adopted(ThreadHeap dead, int slabsVisited);
    }

    /** Every how many slow-path pool visits a heap looks for dead threads' heaps to adopt. */
    static final int DEAD_THREAD_CHECK_INTERVAL = 64;
    /** How many listed heaps one look for dead threads examines (a new thread's and a slow path's). */
    static final int DEAD_THREAD_SCAN = 4;
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
     * First heap of the list of heaps not adopted: written under the pool lock, walked without it by the sums
     * (volatile, as is each heap's {@code nextHeap}, so a walker sees each heap it reaches fully made).
     */
    private volatile ThreadHeap first;
    /** Where the next look for dead threads starts (null: at {@link #first}). Guarded by the pool lock. */
    private ThreadHeap cursor;
    /** Heaps on the list: written under the pool lock, read without it. */
    private volatile int listed;
    /** The counters of every adopted heap, folded in when it was adopted. Guarded by the pool lock. */
    private final HeapCounters retired;
    private int heapArrivals;
    /** Written under the pool lock, read without it. */
    private volatile long adoptions;
    /** Guarded by the pool lock. */
    private AdoptionProbe adoptionProbe = AdoptionProbe.NONE;

    ThreadHeaps(final PagePool pool, final ZeroOnFree zeroOnFree, final int classCount, final long runCacheLimit)
    {
        this.pool = pool;
        this.zeroOnFree = zeroOnFree;
        this.classCount = classCount;
        this.runCacheLimit = runCacheLimit;
        this.retired = new HeapCounters(classCount);
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
            heap.nextHeap = first;
            if (first != null)
            {
                first.prevHeap = heap;
            }
            first = heap;
            listed++;
            adoptDeadHeaps(heap, DEAD_THREAD_SCAN); // the new thread takes over what died before it
        }
        return heap;
    }

    /**
     * Adopts the heaps of all dead threads into the calling thread's heap and collects what is pending on it.
     *
     * @return how many heaps were adopted.
     */
    int reclaimDeadThreads()
    {
        final long before = adoptions;
        final ThreadHeap heap = heaps.get(); // a thread's first heap adopts on creation
        synchronized (pool)
        {
            adoptDeadHeaps(heap, listed);
        }
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
            synchronized (pool)
            {
                adoptDeadHeaps(heap, DEAD_THREAD_SCAN);
            }
        }
    }

    /**
     * Under the pool lock: examines up to {@code scan} listed heaps from the cursor and adopts the dead ones.
     */
    private int adoptDeadHeaps(final ThreadHeap adopter, final int scan)
    {
        int adopted = 0;
        ThreadHeap heap = cursor != null ? cursor : first;
        for (int examined = 0; examined < scan && heap != null; examined++)
        {
            final ThreadHeap next = heap.nextHeap; // read before unlink clears it
            if (heap != adopter && !heap.thread.isAlive())
            {
                // isAlive() == false: everything the dead thread did happens-before this point.
                adoptionProbe.adopted(heap, adopter.adopt(heap));
                unlink(heap);
                retired.add(heap); // its counters are final now: the adopter counts what it frees of them
                adopted++;
            }
            heap = next != null ? next : first;
        }
        cursor = heap;
        adoptions += adopted;
        return adopted;
    }

    /**
     * @param probe told of every adoption from now on ({@link AdoptionProbe#NONE}: none).
     */
    void probeAdoptions(final AdoptionProbe probe)
    {
        synchronized (pool)
        {
            adoptionProbe = probe;
        }
    }

    private void unlink(final ThreadHeap heap)
    {
        if (heap.prevHeap != null)
        {
            heap.prevHeap.nextHeap = heap.nextHeap;
        }
        else
        {
            first = heap.nextHeap;
        }
        if (heap.nextHeap != null)
        {
            heap.nextHeap.prevHeap = heap.prevHeap;
        }
        if (cursor == heap)
        {
            cursor = heap.nextHeap;
        }
        // nextHeap is kept: a reader walking the list without the lock may stand on this heap and must go on.
        heap.prevHeap = null;
        listed--;
    }

    /**
     * Without a lock: buffers handed out and not freed, over every heap (other threads' counters, the list
     * and the retired sums are read racily: an adoption racing with the read may count a heap twice or not
     * at all; exact when no thread is allocating or freeing, and under the pool lock, as close reads it).
     */
    long buffersInUse()
    {
        long outstanding = retired.buffersInUse();
        for (ThreadHeap heap = first; heap != null; heap = heap.nextHeap)
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
        sum.add(retired);
        for (ThreadHeap heap = first; heap != null; heap = heap.nextHeap)
        {
            sum.add(heap);
        }
        sum.liveHeaps = listed;
        sum.adoptions = adoptions;
    }
}

package dev.pinarena.allocator;

/**
 * A sum of the counters of many {@link ThreadHeap}s, for statistics and metrics. Reusable: {@link #clear()}
 * and sum again, so periodic metrics readers need not allocate.
 */
final class HeapCounters
{
    final long[] classAllocs;
    final long[] classFrees;
    long runAllocs;
    long runFrees;
    long dedicatedAllocs;
    long dedicatedFrees;
    /** Bytes of runs and dedicated chunks only; slab blocks are derived from the class counts. */
    long bytesAllocated;
    long bytesFreed;
    long crossThreadFreesSent;
    long crossThreadFreesCollected;
    int liveHeaps;
    long adoptions;

    HeapCounters(final int classCount)
    {
        classAllocs = new long[classCount];
        classFrees = new long[classCount];
    }

    void clear()
    {
        java.util.Arrays.fill(classAllocs, 0);
        java.util.Arrays.fill(classFrees, 0);
        runAllocs = runFrees = dedicatedAllocs = dedicatedFrees = 0;
        bytesAllocated = bytesFreed = crossThreadFreesSent = crossThreadFreesCollected = 0;
        liveHeaps = 0;
        adoptions = 0;
    }

    void add(final ThreadHeap heap)
    {
        for (int i = 0; i < classAllocs.length; i++)
        {
            classAllocs[i] += heap.classAllocs[i];
            classFrees[i] += heap.classFrees[i];
        }
        runAllocs += heap.runAllocs;
        runFrees += heap.runFrees;
        dedicatedAllocs += heap.dedicatedAllocs;
        dedicatedFrees += heap.dedicatedFrees;
        bytesAllocated += heap.bytesAllocated;
        bytesFreed += heap.bytesFreed;
        crossThreadFreesSent += heap.crossThreadFreesSent;
        crossThreadFreesCollected += heap.crossThreadFreesCollected;
        liveHeaps += heap.adopted ? 0 : 1;
    }

    /**
     * Adds another sum (of adopted heaps) into this one; its heap and adoption counts are not added.
     */
    void add(final HeapCounters other)
    {
        for (int i = 0; i < classAllocs.length; i++)
        {
            classAllocs[i] += other.classAllocs[i];
            classFrees[i] += other.classFrees[i];
        }
        runAllocs += other.runAllocs;
        runFrees += other.runFrees;
        dedicatedAllocs += other.dedicatedAllocs;
        dedicatedFrees += other.dedicatedFrees;
        bytesAllocated += other.bytesAllocated;
        bytesFreed += other.bytesFreed;
        crossThreadFreesSent += other.crossThreadFreesSent;
        crossThreadFreesCollected += other.crossThreadFreesCollected;
    }

    /**
     * @param classes the arena's size classes.
     * @return bytes handed out and not freed: slab blocks by class count times block size, plus runs and
     * dedicated chunks.
     */
    long bytesInUse(final SizeClasses classes)
    {
        long inUse = bytesAllocated - bytesFreed;
        for (int i = 0; i < classAllocs.length; i++)
        {
            inUse += (classAllocs[i] - classFrees[i]) * classes.blockSize(i);
        }
        return inUse;
    }

    long buffersInUse()
    {
        long live = runAllocs - runFrees + dedicatedAllocs - dedicatedFrees;
        for (int i = 0; i < classAllocs.length; i++)
        {
            live += classAllocs[i] - classFrees[i];
        }
        return live;
    }
}

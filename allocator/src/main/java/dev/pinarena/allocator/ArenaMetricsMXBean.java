package dev.pinarena.allocator;

/**
 * An arena's counters for JMX: every attribute is read without the arena's lock, so a monitoring thread
 * never waits for (or delays) a thread that maps a chunk. Counters of other threads' heaps are read racily:
 * exact when the arena is quiet, within a few operations while it is busy.
 */
public interface ArenaMetricsMXBean
{
    /** @return the registrar's backend name. */
    String getRegistrar();

    /** @return bytes mapped and registered (every chunk, shared and dedicated). */
    long getPinnedBytes();

    /** @return the cap on pinned bytes. */
    long getCapBytes();

    /** @return shared chunks (both scopes). */
    int getChunks();

    /** @return dedicated chunks (in use or idle). */
    int getDedicatedChunks();

    /** @return registrations made since the arena opened. */
    long getRegistrations();

    /** @return the page backings of the pinned bytes, e.g. {@code hugetlb-2M 48 MiB + thp 16 MiB}. */
    String getBackingMix();

    /** @return bytes handed out and not freed. */
    long getBytesInUse();

    /** @return buffers handed out and not freed. */
    long getBuffersInUse();

    /** @return block frees made by a thread other than the block's owner. */
    long getCrossThreadFrees();

    /** @return cross-thread frees their owners have taken back. */
    long getCrossThreadFreesCollected();

    /** @return heaps of live threads. */
    int getLiveHeaps();

    /** @return heaps of dead threads adopted by live ones. */
    long getAdoptedHeaps();
}

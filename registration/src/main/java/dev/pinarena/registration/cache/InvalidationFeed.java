package dev.pinarena.registration.cache;

/**
 * Where a {@link RegistrationCache} learns that address ranges changed behind its back (unmapped,
 * remapped, madvised away). {@link #pending()} is on the hit path and must be a plain memory read;
 * {@link #drain(long[])} runs on the slow path under the cache's lock.
 */
public interface InvalidationFeed extends AutoCloseable
{
    /**
     * @return true when ranges may be queued.
     */
    boolean pending();

    /**
     * Moves queued ranges into {@code out} as (start, end) pairs.
     *
     * @param out even-length array.
     * @return pairs written; {@code out.length / 2} means more may remain.
     */
    int drain(long[] out);

    /**
     * @return ranges queued now (for monitoring).
     */
    int queued();

    /**
     * @return which source feeds it, e.g. {@code hooks (LD_PRELOAD)}.
     */
    String source();

    /**
     * Stops receiving ranges.
     */
    void close();
}

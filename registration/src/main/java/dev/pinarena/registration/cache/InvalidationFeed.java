package dev.pinarena.registration.cache;

/**
 * Where a {@link RegistrationCache} learns that address ranges changed behind its back (unmapped,
 * remapped, madvised away). {@link #pending()} is on the hit path and must be a plain memory read;
 * {@link #drain(long[])} runs on the slow path under the cache's lock.
 */
public interface InvalidationFeed extends AutoCloseable
{
    /**
     * @return true when ranges may be queued, or a drain took ranges that {@link #drainDone()} has not
     *         yet confirmed as applied.
     */
    boolean pending();

    /**
     * Moves queued ranges into {@code out} as (start, end) pairs. {@link #pending()} stays true until
     * {@link #drainDone()}.
     *
     * @param out even-length array.
     * @return pairs written; {@code out.length / 2} means more may remain.
     */
    int drain(long[] out);

    /**
     * Called after the last {@link #drain} of a round, once every drained range has been applied (its
     * regions are out of the index the hit path reads): {@link #pending()} turns false unless a range was
     * queued since. A hit path that sees {@code pending() == false} must not be able to find a region whose
     * invalidation has been drained but not applied yet.
     */
    void drainDone();

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

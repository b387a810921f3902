package dev.pinarena.registration.cache;

import dev.pinarena.registration.PinLimitExceededException;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.RegistrationException;
import dev.pinarena.registration.os.PageMap;

import java.util.ArrayList;
import java.util.List;

/**
 * A registration cache for memory the arena does not own: {@link #get} returns a registered region
 * containing a range (registering it on a miss) and takes a use reference; {@link #put} releases it.
 * <p>
 * <b>Hit path</b> (no lock, no system call, no allocation): one volatile read of the feed's pending word,
 * one volatile read of the current {@link CacheIndex} snapshot, a binary search, and a CAS on the region's
 * state. Everything else runs under one lock and publishes a new snapshot.
 * <p>
 * <b>Overlap policy: contain, merge on a miss.</b> A hit needs one region containing the whole page-rounded
 * range with at least the requested access bits. A miss registers the union of the range and every
 * <i>idle</i> region that overlaps or touches it (access bits OR'ed, up to {@link #MERGE_MAX} bytes), then
 * deregisters those (their pages stay pinned throughout). In-use regions are never merged; the new region
 * may overlap them.
 * <p>
 * <b>Eviction</b>: the least recently released idle region goes when {@code maxRegions} or
 * {@code maxBytes} would be passed, and when registration fails for lack of memory
 * ({@link PinLimitExceededException}, ENOMEM, EAGAIN, ENOSPC): evict one, retry. In-use regions are never
 * evicted; when nothing is idle, the limit holds ({@link CacheFullException}) or the registrar's error comes
 * through.
 * <p>
 * <b>Invalidation</b>: with an {@link InvalidationFeed}, every call checks {@code pending()} and drains on
 * the slow path; regions overlapping a drained range leave the index, idle ones are deregistered at once,
 * in-use ones on their last {@link #put}. {@link #invalidate} does the same for a range the caller knows
 * about (e.g. memory it unmaps through jnr, which no hook sees).
 * <p>
 * <b>Verify mode</b>: the registration records a hash of the region's physical frames; each hit re-reads
 * them from /proc/self/pagemap (a system call by nature) and throws {@link StaleRegistrationException}
 * instead of returning a region whose frames changed.
 * <p>
 * Counters are plain opaque stores on the hit path: exact single-threaded, approximate under contention.
 * <p>
 * <b>Twin</b>: {@code bindings-c/src/regcache.c} implements the same rules in C. Change both, and keep the shared
 * scenario list in docs/ARCHITECTURE.md ("Twins") true of both test suites.
 */
public final class RegistrationCache implements AutoCloseable
{
    /** Largest merged region. */
    public static final long MERGE_MAX = 1L << 30;

    private static final long PAGE = Registrar.PAGE_SIZE;
    private static final int ENOMEM = 12;
    private static final int EAGAIN = 11;
    private static final int ENOSPC = 28;

    private final Registrar registrar;
    private final int maxRegions;
    private final long maxBytes;
    private final InvalidationFeed feed;
    private final PageMap pageMap;
    private final Object lock = new Object();
    private final long[] drained = new long[2 * NativeInvalidationFeed.DRAIN_MAX];

    private volatile CacheIndex index = CacheIndex.EMPTY;

    // hit path counters (opaque, racy increments)
    private long hits;
    private long fastGets;
    // slow path, under lock
    private long slowGets;
    private long misses;
    private long evictions;
    private long invalidations;
    private long stale;
    private long bytes;
    private long clock;

    /**
     * @param registrar  the backend that pins.
     * @param maxRegions most regions kept (in-use ones included).
     * @param maxBytes   most bytes kept registered.
     * @param verify     re-check physical frames on every hit (needs root for frame numbers).
     * @param feed       invalidation events, or null (then only {@link #invalidate} and verify mode protect).
     */
    public RegistrationCache(
        final Registrar registrar, final int maxRegions, final long maxBytes, final boolean verify, final InvalidationFeed feed)
    {
        if (maxRegions <= 0 || maxBytes <= 0)
        {
            throw new IllegalArgumentException("limits must be positive: " + maxRegions + ", " + maxBytes);
        }
        this.registrar = registrar;
        this.maxRegions = maxRegions;
        this.maxBytes = maxBytes;
        this.feed = feed;
        this.pageMap = verify ? PageMap.open() : null;
    }

    /**
     * A registered region containing [address, address + length) with at least {@code access}, holding a
     * use reference that {@link #put} releases.
     *
     * @throws StaleRegistrationException in verify mode, when the frames changed (the entry is dropped).
     * @throws CacheFullException         when the limits are reached and every region is in use.
     * @throws RegistrationException      when the registrar refuses and eviction cannot help.
     */
    public CachedRegion get(final long address, final long length, final int access)
    {
        if (length <= 0)
        {
            throw new IllegalArgumentException("length must be positive: " + length);
        }
        final long start = address & -PAGE;
        final long end = (address + length + PAGE - 1) & -PAGE;
        final InvalidationFeed feed = this.feed;
        if (feed == null || !feed.pending())
        {
            // The snapshot read is the only ordering point: a region reachable from it was fully built
            // before the volatile store that published the snapshot. tryAcquire refuses regions that the
            // slow path has since invalidated or claimed (their flags are set before they are deregistered).
            // pending() is read first and stays true from the drain until drainLocked has published the
            // index without the drained ranges (feed.drainDone()), so a false here means the snapshot read
            // next already lacks every region whose invalidation was posted before this call.
            final CachedRegion r = index.find(start, end, access);
            if (r != null && r.tryAcquire())
            {
                if (pageMap != null)
                {
                    verify(r);
                }
                hits++;
                fastGets++;
                return r;
            }
        }
        return getSlow(start, end, access);
    }

    /**
     * Releases a use reference from {@link #get}; the last release of an invalidated region deregisters it.
     * Unmaps queued since the last cache call are drained here too, so an idle cache does not keep their
     * frames pinned until its next get (one volatile load when nothing is queued).
     */
    public void put(final CachedRegion r)
    {
        r.lastUse = ++clock;
        final boolean lastOfInvalid = r.release() == CachedRegion.INVALID;
        final InvalidationFeed feed = this.feed;
        if (lastOfInvalid || (feed != null && feed.pending()))
        {
            synchronized (lock)
            {
                if (lastOfInvalid && r.invalidToDead())
                {
                    deregister(r);
                }
                drainLocked();
            }
        }
    }

    /**
     * Invalidates every region overlapping [address, address + length) now.
     */
    public void invalidate(final long address, final long length)
    {
        synchronized (lock)
        {
            drainLocked();
            invalidateLocked(address & -PAGE, address + length);
        }
    }

    /**
     * Deregisters every idle region.
     */
    public void flush()
    {
        synchronized (lock)
        {
            drainLocked();
            while (evictOne())
            {
            }
        }
    }

    /**
     * Deregisters every region (in use or not) and closes the feed and page map.
     */
    public void close()
    {
        synchronized (lock)
        {
            for (final CachedRegion r : index.regions)
            {
                r.markInvalid();
                deregister(r);
            }
            index = CacheIndex.EMPTY;
            if (feed != null)
            {
                feed.close();
            }
            if (pageMap != null)
            {
                pageMap.close();
            }
        }
    }

    /** @return calls to get. */
    public long gets()
    {
        return fastGets + slowGets;
    }

    /** @return gets answered from the cache. */
    public long hits()
    {
        return hits;
    }

    /** @return gets that registered. */
    public long misses()
    {
        synchronized (lock)
        {
            return misses;
        }
    }

    /** @return idle regions deregistered to make room. */
    public long evictions()
    {
        synchronized (lock)
        {
            return evictions;
        }
    }

    /** @return regions dropped because their range changed. */
    public long invalidations()
    {
        synchronized (lock)
        {
            return invalidations;
        }
    }

    /** @return stale entries found by verify mode. */
    public long staleDetected()
    {
        synchronized (lock)
        {
            return stale;
        }
    }

    /** @return ranges queued in the feed and not yet drained. */
    public int queuedRanges()
    {
        return feed == null ? 0 : feed.queued();
    }

    /** @return bytes registered through this cache now. */
    public long bytesPinned()
    {
        synchronized (lock)
        {
            return bytes;
        }
    }

    /** @return regions held now. */
    public int regions()
    {
        return index.size();
    }

    /** @return the feed's source, or {@code none}. */
    public String invalidationSource()
    {
        return feed == null ? "none" : feed.source();
    }

    private CachedRegion getSlow(final long start, final long end, final int access)
    {
        synchronized (lock)
        {
            slowGets++;
            drainLocked();
            final CachedRegion found = index.find(start, end, access);
            if (found != null && found.tryAcquire())
            {
                if (pageMap != null)
                {
                    verify(found);
                }
                hits++;
                return found;
            }
            misses++;
            long uStart = start;
            long uEnd = end;
            int uAccess = access;
            long claimedBytes = 0;
            final List<CachedRegion> claimed = new ArrayList<>();
            for (final CachedRegion x : index.regions)
            {
                if (x.address > end || x.end < start)
                {
                    continue;
                }
                final long ns = Math.min(uStart, x.address);
                final long ne = Math.max(uEnd, x.end);
                if (ne - ns <= MERGE_MAX && x.claimIdle())
                {
                    claimed.add(x);
                    uStart = ns;
                    uEnd = ne;
                    uAccess |= x.access;
                    claimedBytes += x.end - x.address;
                }
            }
            while (true)
            {
                final long len = uEnd - uStart;
                while (over(claimed.size(), claimedBytes, len) && evictOne())
                {
                }
                RuntimeException failure;
                if (!over(claimed.size(), claimedBytes, len))
                {
                    try
                    {
                        final Region region = registrar.register(uStart, len, uAccess);
                        final CachedRegion r = new CachedRegion(region, pageMap != null ? frameHash(uStart, len) : 0);
                        r.lastUse = clock;
                        bytes += len;
                        CacheIndex next = index.with(r);
                        for (final CachedRegion x : claimed)
                        {
                            next = next.without(x);
                        }
                        index = next;                       // publish: the region is complete
                        for (final CachedRegion x : claimed)
                        {
                            deregister(x);
                        }
                        return r;
                    }
                    catch (final PinLimitExceededException ex)
                    {
                        failure = ex;
                    }
                    catch (final RegistrationException ex)
                    {
                        // A failed union (e.g. EFAULT: a merged neighbour is being unmapped) falls back to
                        // the request alone below; only a failure of the request itself is final.
                        if (claimed.isEmpty() && ex.errno() != ENOMEM && ex.errno() != EAGAIN && ex.errno() != ENOSPC)
                        {
                            unclaim(claimed);
                            throw ex;
                        }
                        failure = ex;
                    }
                }
                else
                {
                    failure = new CacheFullException(index.size(), maxRegions, bytes, maxBytes);
                }
                if (!claimed.isEmpty())
                {
                    unclaim(claimed);           // give up the merge: the claimed regions become evictable
                    claimed.clear();
                    claimedBytes = 0;
                    uStart = start;
                    uEnd = end;
                    uAccess = access;
                    continue;
                }
                if (!(failure instanceof CacheFullException) && evictOne())
                {
                    continue;
                }
                throw failure;
            }
        }
    }

    private boolean over(final int claimedCount, final long claimedBytes, final long len)
    {
        return index.size() - claimedCount + 1 > maxRegions || bytes - claimedBytes + len > maxBytes;
    }

    private static void unclaim(final List<CachedRegion> claimed)
    {
        for (final CachedRegion x : claimed)
        {
            x.unclaim();
        }
    }

    private boolean evictOne()
    {
        while (true)
        {
            CachedRegion best = null;
            for (final CachedRegion r : index.regions)
            {
                if (r.state() == 0 && (best == null || r.lastUse < best.lastUse))
                {
                    best = r;
                }
            }
            if (best == null)
            {
                return false;
            }
            if (best.claimIdle())
            {
                index = index.without(best);
                deregister(best);
                evictions++;
                return true;
            }
        }
    }

    private void drainLocked()
    {
        if (feed == null || !feed.pending())
        {
            return;
        }
        int n;
        do
        {
            n = feed.drain(drained);
            for (int i = 0; i < n; i++)
            {
                invalidateLocked(drained[2 * i], drained[2 * i + 1]);
            }
        }
        while (n == drained.length / 2);
        // Only now, with every drained range out of the published index, may pending() read false.
        // Were pending cleared at the start of the drain, this interleaving would send stale bytes (the
        // scenario threadsRegisterWhileAnotherUnmaps exercises it):
        //   U  (holds buffer b's lock): hooked munmap posts b (pending = 1), munmaps, posts b again,
        //      maps fresh pages at b, fills them, releases b's lock.
        //   T1 (get for another buffer, slow path, holds this.lock): feed.drain clears pending and takes
        //      b's range out of the sink; it is now only in drained[] while T1 is in jnr / the loop above.
        //      The region R that pinned b's OLD pages is still in the published index with state 0.
        //   T2 (takes b's lock, fills b, get(b), hit path): pending() == false, index.find -> R,
        //      tryAcquire succeeds (R is not INVALID yet); T2 sends R's pinned pages: the old bytes.
        //   T1: invalidateLocked(b): R is in use, so it is only marked INVALID; the send already went.
        // The test's locking is sufficient: b's lock orders U's posts before T2's get, and T2 sends only
        // b's bytes. Regions whose union covers b are covered the same way (they overlap b's range).
        feed.drainDone();
    }

    private void invalidateLocked(final long start, final long end)
    {
        for (final CachedRegion r : index.regions)
        {
            if (Long.compareUnsigned(r.address, end) >= 0 || Long.compareUnsigned(r.end, start) <= 0)
            {
                continue;
            }
            index = index.without(r);               // readers can no longer find it
            final long before = r.markInvalid();
            invalidations++;
            if ((before & CachedRegion.REFS) == 0 && (before & CachedRegion.DEAD) == 0 && r.invalidToDead())
            {
                deregister(r);
            }
        }
    }

    private void deregister(final CachedRegion r)
    {
        registrar.deregister(r.region);
        bytes -= r.end - r.address;
    }

    private void verify(final CachedRegion r)
    {
        if (frameHash(r.address, r.end - r.address) == r.frameHash)
        {
            return;
        }
        System.err.println("pinarena RegistrationCache: STALE registration 0x" + Long.toHexString(r.address) +
            "+" + (r.end - r.address) + ": physical frames changed since registration; entry dropped");
        synchronized (lock)
        {
            stale++;
            if ((r.state() & CachedRegion.INVALID) == 0)
            {
                index = index.without(r);
                r.markInvalid();
                invalidations++;
            }
        }
        put(r);
        throw new StaleRegistrationException(r.address, r.end - r.address);
    }

    private long frameHash(final long address, final long length)
    {
        long h = 0xcbf29ce484222325L;
        for (long a = address; a < address + length; a += PAGE)
        {
            final long raw = pageMap.rawEntry(a);
            h = (h ^ ((raw & PageMap.PRESENT) != 0 ? raw & PageMap.PFN_MASK : 0)) * 0x100000001b3L;
        }
        return h;
    }
}

package dev.pinarena.registration.cache;

import java.util.Arrays;

/**
 * An immutable snapshot of the cached regions, sorted by start, with the running maximum of their ends so
 * that a lookup can walk left past regions that end too early while overlapping regions exist. The cache
 * publishes a new snapshot through a volatile field on every change (slow path only); readers search the
 * one they read, without locks or allocation.
 */
final class CacheIndex
{
    static final CacheIndex EMPTY = new CacheIndex(new CachedRegion[0]);

    final CachedRegion[] regions;
    private final long[] starts;
    private final long[] maxEnds;

    CacheIndex(final CachedRegion[] sorted)
    {
        regions = sorted;
        starts = new long[sorted.length];
        maxEnds = new long[sorted.length];
        long max = 0;
        for (int i = 0; i < sorted.length; i++)
        {
            starts[i] = sorted[i].address;
            max = Math.max(max, sorted[i].end);
            maxEnds[i] = max;
        }
    }

    /**
     * @return a region containing [start, end) with the access bits, or null.
     */
    CachedRegion find(final long start, final long end, final int access)
    {
        final long[] starts = this.starts;
        int lo = 0;
        int hi = starts.length;
        while (lo < hi)
        {
            final int mid = (lo + hi) >>> 1;
            if (starts[mid] <= start)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }
        for (int i = lo - 1; i >= 0 && maxEnds[i] >= end; i--)
        {
            final CachedRegion r = regions[i];
            if (r.contains(start, end, access))
            {
                return r;
            }
        }
        return null;
    }

    CacheIndex with(final CachedRegion added)
    {
        final CachedRegion[] next = Arrays.copyOf(regions, regions.length + 1);
        int i = regions.length;
        while (i > 0 && next[i - 1].address > added.address)
        {
            next[i] = next[i - 1];
            i--;
        }
        next[i] = added;
        return new CacheIndex(next);
    }

    CacheIndex without(final CachedRegion removed)
    {
        for (int i = 0; i < regions.length; i++)
        {
            if (regions[i] == removed)
            {
                final CachedRegion[] next = new CachedRegion[regions.length - 1];
                System.arraycopy(regions, 0, next, 0, i);
                System.arraycopy(regions, i + 1, next, i, regions.length - i - 1);
                return new CacheIndex(next);
            }
        }
        return this;
    }

    int size()
    {
        return regions.length;
    }
}

package dev.pinarena.registration.internal;

import dev.pinarena.registration.Region;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every live registration in the process, by start address, whatever registrar made it.
 * <p>
 * It exists for the project's one invariant: a registered page is never returned to the OS while
 * registered. The OS layer asks {@link #firstOverlapping(long, long)} before it unmaps anything and refuses
 * if a registration still covers a byte of the range. Registration and unmapping are slow paths (system
 * calls), so one lock guards the index.
 */
public final class RegisteredRanges
{
    private static final TreeMap<Long, List<Region>> BY_START = new TreeMap<>();

    private RegisteredRanges()
    {
    }

    /**
     * Record a live registration; only {@code Registrar} calls this, after the backend pinned the region.
     *
     * @param region the region just registered.
     */
    public static synchronized void add(final Region region)
    {
        BY_START.computeIfAbsent(region.address(), k -> new ArrayList<>(1)).add(region);
    }

    /**
     * Forget a registration; only {@code Registrar} calls this, once the backend unpinned the region.
     *
     * @param region the region no longer registered.
     */
    public static synchronized void remove(final Region region)
    {
        final List<Region> list = BY_START.get(region.address());
        if (list != null)
        {
            list.removeIf(r -> r == region);
            if (list.isEmpty())
            {
                BY_START.remove(region.address());
            }
        }
    }

    /**
     * @param address first byte of a range.
     * @param length  bytes.
     * @return a live region that shares at least one byte with the range, or null.
     */
    public static synchronized Region firstOverlapping(final long address, final long length)
    {
        final long end = address + length;
        // Regions are few (about one per chunk), so scanning those that start before `end` is cheap.
        for (final Map.Entry<Long, List<Region>> e : BY_START.headMap(end, false).entrySet())
        {
            for (final Region region : e.getValue())
            {
                if (region.end() > address)
                {
                    return region;
                }
            }
        }
        return null;
    }

    /**
     * @return number of live registrations in the process.
     */
    public static synchronized int count()
    {
        int n = 0;
        for (final List<Region> list : BY_START.values())
        {
            n += list.size();
        }
        return n;
    }
}

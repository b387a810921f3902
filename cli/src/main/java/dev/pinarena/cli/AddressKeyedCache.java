package dev.pinarena.cli;

import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The registration cache the seed message describes, on purpose without invalidation: look the range up by
 * virtual address; on a miss, register the page-rounded range and remember it. It cannot know that the
 * memory behind an address was freed and mapped again, which is the hazard the demo shows.
 */
final class AddressKeyedCache
{
    private final Registrar registrar;
    private final TreeMap<Long, Region> byStart = new TreeMap<>();
    private int misses;
    private int hits;

    AddressKeyedCache(final Registrar registrar)
    {
        this.registrar = registrar;
    }

    Region get(final long address, final long length)
    {
        final Map.Entry<Long, Region> floor = byStart.floorEntry(address);
        if (floor != null && floor.getValue().covers(address, length))
        {
            hits++;
            return floor.getValue();
        }
        misses++;
        final long start = address & ~(Registrar.PAGE_SIZE - 1);
        final long end = (address + length + Registrar.PAGE_SIZE - 1) & ~(Registrar.PAGE_SIZE - 1);
        final Region region = registrar.register(start, end - start);
        byStart.put(start, region);
        return region;
    }

    int hits()
    {
        return hits;
    }

    int misses()
    {
        return misses;
    }

    void clear()
    {
        final List<Region> regions = new ArrayList<>(byStart.values());
        byStart.clear();
        for (final Region region : regions)
        {
            registrar.deregister(region);
        }
    }
}

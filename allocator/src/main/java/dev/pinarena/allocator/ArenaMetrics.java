package dev.pinarena.allocator;

import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.MBeanRegistrationException;
import javax.management.MalformedObjectNameException;
import javax.management.NotCompliantMBeanException;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;

/**
 * The lock-free counters of one arena ({@link PinnedArena#metrics()}), readable at any time from any thread
 * and publishable as a platform MXBean ({@link #register(String)}), as Netty's allocator metrics are.
 * Each read sums the heaps' counters afresh (a small allocation per read, never on the arena's paths).
 */
public final class ArenaMetrics implements ArenaMetricsMXBean
{
    /** JMX domain of every arena's MXBean. */
    public static final String DOMAIN = "dev.pinarena";

    private final String registrar;
    private final long capBytes;
    private final PagePool pool;
    private final ThreadHeaps heaps;
    private final SizeClasses classes;
    private volatile ObjectName registeredAs;

    ArenaMetrics(
        final String registrar, final long capBytes, final PagePool pool, final ThreadHeaps heaps, final SizeClasses classes)
    {
        this.registrar = registrar;
        this.capBytes = capBytes;
        this.pool = pool;
        this.heaps = heaps;
        this.classes = classes;
    }

    /**
     * @return a snapshot of every counter, for {@link PinnedArena#stats()}: other threads' counters are read racily.
     */
    ArenaStats snapshot()
    {
        final int classCount = classes.count();
        final HeapCounters sum = new HeapCounters(classCount);
        heaps.sumInto(sum);
        final int[] sizes = new int[classCount];
        for (int i = 0; i < classCount; i++)
        {
            sizes[i] = classes.blockSize(i);
        }
        return new ArenaStats(
            registrar, pool.mappedBytes(), capBytes, pool.chunkCount(false), pool.chunkCount(true),
            pool.registrations(), sum.bytesInUse(classes), sizes, sum.classAllocs, sum.classFrees, sum.runAllocs,
            sum.runFrees, sum.dedicatedAllocs, sum.dedicatedFrees, sum.crossThreadFreesSent,
            sum.crossThreadFreesCollected, sum.liveHeaps, sum.adoptions, pool.bytesByBacking());
    }

    /**
     * Registers this arena's metrics with the platform MBean server as
     * {@code dev.pinarena:type=PinnedArena,name=<name>}; the arena unregisters them when it closes.
     *
     * @param name a name unique among this process's arenas (quoted if it needs to be).
     * @return the name registered.
     * @throws IllegalStateException if the name is taken or not valid.
     */
    public synchronized ObjectName register(final String name)
    {
        try
        {
            final ObjectName objectName = new ObjectName(DOMAIN + ":type=PinnedArena,name=" + ObjectName.quote(name));
            ManagementFactory.getPlatformMBeanServer().registerMBean(this, objectName);
            registeredAs = objectName;
            return objectName;
        }
        catch (final MalformedObjectNameException | InstanceAlreadyExistsException | MBeanRegistrationException |
            NotCompliantMBeanException ex)
        {
            throw new IllegalStateException("cannot register arena metrics as " + name + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * Unregisters from the platform MBean server, if registered. Idempotent.
     */
    public synchronized void unregister()
    {
        final ObjectName objectName = registeredAs;
        if (objectName == null)
        {
            return;
        }
        registeredAs = null;
        try
        {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(objectName);
        }
        catch (final InstanceNotFoundException | MBeanRegistrationException ex)
        {
            // Someone unregistered it already: the goal is reached.
        }
    }

    private HeapCounters sum()
    {
        final HeapCounters sum = new HeapCounters(classes.count());
        heaps.sumInto(sum);
        return sum;
    }

    public String getRegistrar()
    {
        return registrar;
    }

    public long getPinnedBytes()
    {
        return pool.mappedBytes();
    }

    public long getCapBytes()
    {
        return capBytes;
    }

    public int getChunks()
    {
        return pool.chunkCount(false);
    }

    public int getDedicatedChunks()
    {
        return pool.chunkCount(true);
    }

    public long getRegistrations()
    {
        return pool.registrations();
    }

    public String getBackingMix()
    {
        return ArenaStats.backingMix(pool.bytesByBacking());
    }

    public long getBytesInUse()
    {
        return sum().bytesInUse(classes);
    }

    public long getBuffersInUse()
    {
        return sum().buffersInUse();
    }

    public long getCrossThreadFrees()
    {
        return sum().crossThreadFreesSent;
    }

    public long getCrossThreadFreesCollected()
    {
        return sum().crossThreadFreesCollected;
    }

    public int getLiveHeaps()
    {
        return sum().liveHeaps;
    }

    public long getAdoptedHeaps()
    {
        return sum().adoptions;
    }
}

package dev.pinarena.perf;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A bounded single-producer single-consumer ring of raw addresses, garbage-free, that never blocks: the
 * benchmarks hand an arena address to another thread so that thread frees it. The object handoffs use
 * JCTools' {@code SpscArrayQueue}; JCTools has no queue of primitive longs, and boxing an address would
 * allocate on the measured path. 0 means "empty"; the arena never hands out address 0.
 * <p>
 * Ordering: the producer writes the slot, then publishes the new tail with a release store; the consumer
 * reads the tail with acquire, takes the slot, clears it, then publishes the new head with release, which
 * the producer reads with acquire before reusing the slot.
 */
final class LongHandoff
{
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;

    static
    {
        try
        {
            HEAD = MethodHandles.lookup().findVarHandle(LongHandoff.class, "head", long.class);
            TAIL = MethodHandles.lookup().findVarHandle(LongHandoff.class, "tail", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final long[] slots;
    private final int mask;
    @SuppressWarnings("unused")
    private long p1, p2, p3, p4, p5, p6, p7;
    private volatile long head;
    @SuppressWarnings("unused")
    private long q1, q2, q3, q4, q5, q6, q7;
    private volatile long tail;

    /**
     * @param capacity a power of two.
     */
    LongHandoff(final int capacity)
    {
        slots = new long[capacity];
        mask = capacity - 1;
    }

    /**
     * Producer only.
     *
     * @return false if full.
     */
    boolean offer(final long value)
    {
        final long t = (long)TAIL.getOpaque(this);
        if (t - (long)HEAD.getAcquire(this) == slots.length)
        {
            return false;
        }
        slots[(int)t & mask] = value;
        TAIL.setRelease(this, t + 1);
        return true;
    }

    /**
     * Consumer only.
     *
     * @return the oldest address, or 0 if empty.
     */
    long poll()
    {
        final long h = (long)HEAD.getOpaque(this);
        if (h == (long)TAIL.getAcquire(this))
        {
            return 0;
        }
        final long value = slots[(int)h & mask];
        HEAD.setRelease(this, h + 1);
        return value;
    }
}

package dev.pinarena.perf;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A bounded single-producer single-consumer ring of references, garbage-free, that never blocks: the
 * benchmarks' way of handing a buffer to another thread so that thread frees it.
 * <p>
 * Ordering: the producer writes the slot, then publishes the new tail with a release store; the consumer
 * reads the tail with acquire, takes the slot, clears it, then publishes the new head with release, which
 * the producer reads with acquire before reusing the slot.
 *
 * @param <T> element type.
 */
final class Handoff<T>
{
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;

    static
    {
        try
        {
            HEAD = MethodHandles.lookup().findVarHandle(Handoff.class, "head", long.class);
            TAIL = MethodHandles.lookup().findVarHandle(Handoff.class, "tail", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final Object[] slots;
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
    Handoff(final int capacity)
    {
        slots = new Object[capacity];
        mask = capacity - 1;
    }

    /**
     * Producer only.
     *
     * @return false if full.
     */
    boolean offer(final T value)
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
     * @return the oldest element, or null if empty.
     */
    @SuppressWarnings("unchecked")
    T poll()
    {
        final long h = (long)HEAD.getOpaque(this);
        if (h == (long)TAIL.getAcquire(this))
        {
            return null;
        }
        final int index = (int)h & mask;
        final T value = (T)slots[index];
        slots[index] = null;
        HEAD.setRelease(this, h + 1);
        return value;
    }
}

package dev.pinarena.allocator;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Test helper: a bounded single-producer single-consumer ring of addresses (0 = empty), so handing an
 * address to another thread boxes nothing.
 */
final class LongRing
{
    private final AtomicLongArray slots;
    private final int mask;
    private final AtomicLong head = new AtomicLong();
    private final AtomicLong tail = new AtomicLong();

    LongRing(final int capacity)
    {
        slots = new AtomicLongArray(capacity);
        mask = capacity - 1;
    }

    boolean offer(final long value)
    {
        final long t = tail.getPlain();
        if (t - head.getAcquire() == slots.length())
        {
            return false;
        }
        slots.setPlain((int)t & mask, value);
        tail.setRelease(t + 1);
        return true;
    }

    long poll()
    {
        final long h = head.getPlain();
        if (h == tail.getAcquire())
        {
            return 0;
        }
        final long value = slots.getPlain((int)h & mask);
        head.setRelease(h + 1);
        return value;
    }
}

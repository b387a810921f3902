package dev.pinarena.netty;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;

import java.util.concurrent.atomic.LongAdder;

/**
 * Netty's unpooled heap buffer, counting the bytes of its array into its allocator's
 * {@link PinnedAllocatorMetric#usedHeapMemory()} while it holds one.
 */
final class CountedHeapByteBuf extends UnpooledHeapByteBuf
{
    private final LongAdder heapBytes;

    CountedHeapByteBuf(
        final ByteBufAllocator alloc, final LongAdder heapBytes, final int initialCapacity, final int maxCapacity)
    {
        super(alloc, new byte[0], maxCapacity); // the counted array is taken below, once the counter is set
        this.heapBytes = heapBytes;
        capacity(initialCapacity);
    }

    protected byte[] allocateArray(final int initialCapacity)
    {
        final byte[] array = super.allocateArray(initialCapacity);
        heapBytes.add(array.length);
        return array;
    }

    protected void freeArray(final byte[] array)
    {
        heapBytes.add(-array.length);
        super.freeArray(array);
    }
}

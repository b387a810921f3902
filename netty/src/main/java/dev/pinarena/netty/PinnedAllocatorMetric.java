package dev.pinarena.netty;

import dev.pinarena.allocator.PinnedArena;
import io.netty.buffer.ByteBufAllocatorMetric;

import java.util.concurrent.atomic.LongAdder;

/**
 * The memory a {@link PinnedByteBufAllocator} uses, as Netty's allocators report it: direct memory is the
 * arena's bytes in use (each buffer counted at its block's size, as a pooled allocator counts what it holds),
 * heap memory the arrays of its live heap buffers; and beside them the pinned bytes the arena has mapped and
 * registered, which stay pinned after the buffers are freed.
 */
public final class PinnedAllocatorMetric implements ByteBufAllocatorMetric
{
    private final PinnedArena arena;
    private final LongAdder heapBytes = new LongAdder();

    PinnedAllocatorMetric(final PinnedArena arena)
    {
        this.arena = arena;
    }

    LongAdder heapBytes()
    {
        return heapBytes;
    }

    /** @return bytes of the arrays of live heap buffers. */
    public long usedHeapMemory()
    {
        return heapBytes.sum();
    }

    /** @return bytes of arena buffers in use (over the whole arena, read without a lock). */
    public long usedDirectMemory()
    {
        return arena.metrics().getBytesInUse();
    }

    /** @return bytes the arena has mapped and registered (pinned), in use or free. */
    public long pinnedMemory()
    {
        return arena.metrics().getPinnedBytes();
    }

    public String toString()
    {
        return "PinnedAllocatorMetric{usedDirectMemory: " + usedDirectMemory() + ", usedHeapMemory: " +
            usedHeapMemory() + ", pinnedMemory: " + pinnedMemory() + '}';
    }
}

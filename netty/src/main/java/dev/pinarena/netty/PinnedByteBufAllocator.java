package dev.pinarena.netty;

import dev.pinarena.allocator.ArenaConfig;
import dev.pinarena.allocator.BufferScope;
import dev.pinarena.allocator.PinnedArena;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.util.Recycler;
import org.agrona.BufferUtil;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * A Netty {@link io.netty.buffer.ByteBufAllocator} whose direct buffers are pinned arena memory: every
 * direct (and I/O) buffer Netty asks for is allocated from one {@link PinnedArena}, {@code release()} to
 * reference count 0 frees it back to the arena (from whichever thread), and its registration keys are a
 * lookup away ({@link #lkey(ByteBuf)}, {@link #rkey(ByteBuf)}, or {@link PinnedByteBuf#lkey()}), for slices
 * and duplicates too. Heap buffers are Netty's unpooled ones. {@link #metric()} reports the memory used as
 * Netty's allocators do, with the pinned bytes beside ({@link PinnedAllocatorMetric}).
 * <pre>{@code
 * ByteBufAllocator alloc = new PinnedByteBufAllocator(arena, BufferScope.LOCAL);
 * bootstrap.option(ChannelOption.ALLOCATOR, alloc).childOption(ChannelOption.ALLOCATOR, alloc);
 * }</pre>
 * The arena must outlive every buffer, and every channel that uses the allocator.
 * <p>
 * No garbage on the hot path: the {@link PinnedByteBuf} objects are recycled (Netty's {@link Recycler}: a
 * pool per thread, a buffer released on another thread goes back to the pool of the thread that took it), and
 * so are the ByteBuffer views Netty holds (per thread, up to {@link #SPARE_VIEWS}).
 * <p>
 * Leaks: direct buffers go through Netty's {@code ResourceLeakDetector} as {@code PooledByteBufAllocator}'s
 * do, so a buffer collected without {@code release()} is reported with where it was allocated (and, at
 * ADVANCED or PARANOID, where it was last touched). Its arena memory is not freed: the report comes after the
 * buffer object is collected, but a ByteBuffer from its {@code nioBuffer()}, or an address passed to a NIC,
 * may still be in use, and freeing under them would be a use-after-free of pinned memory. The block stays
 * counted in the arena's buffers in use until the arena is closed.
 */
public final class PinnedByteBufAllocator extends AbstractByteBufAllocator implements ByteBufAllocatorMetricProvider
{
    /** Spare ByteBuffer views kept per thread: a freed buffer's view serves the next buffer. */
    static final int SPARE_VIEWS = 64;

    private final PinnedArena arena;
    private final BufferScope scope;
    private final PinnedAllocatorMetric metric;
    private final ThreadLocal<ArrayDeque<ByteBuffer>> spareViews =
        ThreadLocal.withInitial(() -> new ArrayDeque<>(SPARE_VIEWS));
    private final Recycler<PinnedByteBuf> buffers = new Recycler<PinnedByteBuf>()
    {
        protected PinnedByteBuf newObject(final Handle<PinnedByteBuf> handle)
        {
            return new PinnedByteBuf(PinnedByteBufAllocator.this, handle);
        }
    };

    /**
     * @param arena the arena every direct buffer comes from.
     * @param scope {@link BufferScope#REMOTE} to expose the buffers to peers (an rkey), else LOCAL.
     */
    public PinnedByteBufAllocator(final PinnedArena arena, final BufferScope scope)
    {
        super(true); // direct by default: buffer() and ioBuffer() are arena memory
        this.arena = arena;
        this.scope = scope;
        this.metric = new PinnedAllocatorMetric(arena);
    }

    /** @return the memory this allocator uses: direct (arena), heap, and the arena's pinned bytes. */
    public PinnedAllocatorMetric metric()
    {
        return metric;
    }

    /**
     * @return the arena.
     */
    public PinnedArena arena()
    {
        return arena;
    }

    /**
     * @return the scope of every direct buffer.
     */
    public BufferScope scope()
    {
        return scope;
    }

    /**
     * A recycled arena buffer, through Netty's leak detection as the pooled allocator's: at the detector's
     * level ({@code io.netty.leakDetection.level}) a sampled buffer (every buffer at PARANOID) is returned in a
     * leak-aware wrapper that records where it was allocated and reports it if it is collected unreleased.
     * A leaked buffer's arena memory stays allocated (see the class comment).
     */
    protected ByteBuf newDirectBuffer(final int initialCapacity, final int maxCapacity)
    {
        return toLeakAwareBuffer(buffers.get().reuse(initialCapacity, maxCapacity));
    }

    protected ByteBuf newHeapBuffer(final int initialCapacity, final int maxCapacity)
    {
        return new CountedHeapByteBuf(this, metric.heapBytes(), initialCapacity, maxCapacity);
    }

    public boolean isDirectBufferPooled()
    {
        return true;
    }

    /**
     * @param buffer a direct buffer of this allocator, or a slice or duplicate of one.
     * @return the local key of the memory at its first byte.
     * @throws IllegalArgumentException if the buffer has no memory address.
     */
    public int lkey(final ByteBuf buffer)
    {
        return arena.lkey(addressOf(buffer));
    }

    /**
     * @param buffer a direct buffer of this allocator (remote scope); with per-buffer keys (the arena's default
     *               over verbs) its key reaches exactly the buffer, so a slice has no key of its own.
     * @return the remote key of the memory at its first byte ({@link PinnedArena#rkey(long)}).
     */
    public int rkey(final ByteBuf buffer)
    {
        return arena.rkey(addressOf(buffer));
    }

    private static long addressOf(final ByteBuf buffer)
    {
        if (!buffer.hasMemoryAddress())
        {
            throw new IllegalArgumentException("not a direct buffer with a memory address: " + buffer);
        }
        return buffer.memoryAddress();
    }

    /**
     * @return a ByteBuffer view over new arena memory of {@code capacity} bytes: a spare view re-aimed if the
     * calling thread has one (no allocation), else a new one.
     */
    ByteBuffer allocate(final int capacity)
    {
        final long address = arena.allocate(scope, capacity, ArenaConfig.DEFAULT_ALIGNMENT);
        final ByteBuffer spare = spareViews.get().pollLast();
        return spare == null ? arena.byteBuffer(address, capacity) : arena.byteBuffer(address, capacity, spare);
    }

    /**
     * @return a view over the same memory as {@code view}, {@code capacity} bytes long (within its arena block):
     * a spare view re-aimed if the calling thread has one, else a new one. {@code view} stays valid.
     */
    ByteBuffer extend(final ByteBuffer view, final int capacity)
    {
        final long address = BufferUtil.address(view);
        final ByteBuffer spare = spareViews.get().pollLast();
        return spare == null ? arena.byteBuffer(address, capacity) : arena.byteBuffer(address, capacity, spare);
    }

    /**
     * Frees the memory under {@code view} and keeps the view as a spare of the calling thread. Netty holds no
     * reference to it any more (it lets go of a buffer's ByteBuffer before freeing it).
     */
    void free(final ByteBuffer view)
    {
        arena.free(BufferUtil.address(view));
        keepSpare(view);
    }

    /**
     * Keeps {@code view}, whose memory is already freed, as a spare of the calling thread (up to
     * {@link #SPARE_VIEWS}).
     */
    void keepSpare(final ByteBuffer view)
    {
        final ArrayDeque<ByteBuffer> spares = spareViews.get();
        if (spares.size() < SPARE_VIEWS)
        {
            spares.addLast(view);
        }
    }
}

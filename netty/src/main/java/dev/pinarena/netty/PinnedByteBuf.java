package dev.pinarena.netty;

import dev.pinarena.allocator.PinnedArena;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import io.netty.util.Recycler;
import org.agrona.BufferUtil;

import java.nio.ByteBuffer;

/**
 * A reference-counted Netty buffer over arena memory, recycled: the object outlives its memory. Netty's unsafe
 * direct buffer does the byte access; this class only says where the memory comes from and where it goes:
 * {@link #allocateDirect(int)} takes it from the arena (also when the capacity grows), {@link #freeDirect}
 * frees it there when the old memory of a resized buffer is let go, and {@link #deallocate()} (reference count
 * 0) frees the memory and hands the object back to its allocator's {@link Recycler}.
 * <p>
 * Growth within the block: the arena rounds each buffer up to its block (a slab block or a run of pages), and
 * a capacity up to that size is served in place — the same memory under a longer view, nothing freed — which
 * {@link #maxFastWritableBytes()} reports, so {@code ensureWritable} grows in place before it moves.
 * <p>
 * Lifetime of one object, in order:
 * <ol>
 * <li>{@link #reuse(int, int)} (allocating thread): reference count 1, the view of the memory freed in the
 * previous life is let go ({@code capacity(0)}), new arena memory is taken ({@code capacity(n)}).</li>
 * <li>Use, on any thread, as any Netty buffer.</li>
 * <li>{@link #deallocate()} (releasing thread, once the count reached 0): the arena memory is freed first,
 * then the object is recycled. The recycler publishes it to its owner thread (its queue is the
 * happens-before edge), so the next owner's {@link #reuse} sees every field written here.</li>
 * </ol>
 * While the object waits in the recycler its reference count is 0: every access, {@code retain()} and
 * {@code release()} through a stale reference throws {@code IllegalReferenceCountException}, and the memory
 * is already back in the arena. Once reused, a stale reference cannot be told from the new owner's (as with
 * Netty's pooled buffers): release exactly once.
 */
public final class PinnedByteBuf extends UnpooledUnsafeDirectByteBuf
{
    /** Shared zero-byte memory; each buffer takes a duplicate of its own so no position is written twice. */
    private static final ByteBuffer NO_MEMORY = ByteBuffer.allocateDirect(0);

    private final Recycler.Handle<PinnedByteBuf> handle;

    // Written during Netty's constructor (allocateDirect runs inside super(...)): no initializers, so the
    // values it sets stay.
    /** The view Netty holds of a zero-capacity buffer: no arena memory, never freed. */
    private ByteBuffer placeholder;
    /** The view most recently handed to Netty: the one Netty holds. */
    private ByteBuffer liveView;
    /** The view whose memory {@link #deallocate()} freed: Netty lets go of it in the next {@link #reuse}. */
    private ByteBuffer freedView;

    PinnedByteBuf(final PinnedByteBufAllocator alloc, final Recycler.Handle<PinnedByteBuf> handle)
    {
        super(alloc, 0, Integer.MAX_VALUE);
        this.handle = handle;
    }

    /**
     * Readies this buffer, new or recycled, for its next owner.
     */
    PinnedByteBuf reuse(final int initialCapacity, final int maxCapacity)
    {
        resetRefCnt();
        capacity(0); // Netty lets go of the freed view (freeDirect) and holds the placeholder
        maxCapacity(maxCapacity);
        capacity(initialCapacity);
        setIndex(0, 0);
        markReaderIndex();
        markWriterIndex();
        return this;
    }

    private PinnedByteBufAllocator pinnedAlloc()
    {
        // alloc() is set by Netty's constructor before it first calls allocateDirect.
        return (PinnedByteBufAllocator)alloc();
    }

    @SuppressWarnings("deprecation")
    protected ByteBuffer allocateDirect(final int initialCapacity)
    {
        final ByteBuffer view;
        if (initialCapacity == 0)
        {
            if (placeholder == null)
            {
                placeholder = NO_MEMORY.duplicate();
            }
            view = placeholder;
        }
        else if (liveView != null && liveView != placeholder && initialCapacity > liveView.capacity() &&
            initialCapacity <= blockBytes(liveView))
        {
            view = pinnedAlloc().extend(liveView, initialCapacity); // grows in place: same memory, longer view
        }
        else
        {
            view = pinnedAlloc().allocate(initialCapacity);
        }
        liveView = view;
        return view;
    }

    @SuppressWarnings("deprecation")
    protected void freeDirect(final ByteBuffer buffer)
    {
        if (buffer == placeholder)
        {
            return;
        }
        if (buffer != liveView && liveView != placeholder && BufferUtil.address(buffer) == BufferUtil.address(liveView))
        {
            pinnedAlloc().keepSpare(buffer); // the view before an in-place growth: its memory is still in use
            return;
        }
        if (buffer == freedView)
        {
            freedView = null;
            pinnedAlloc().keepSpare(buffer); // its memory went back to the arena in deallocate()
            return;
        }
        pinnedAlloc().free(buffer);
    }

    /**
     * @return the bytes writable without moving the memory: up to the end of the arena block (or the maximum
     * capacity, if lower).
     */
    public int maxFastWritableBytes()
    {
        final ByteBuffer view = liveView;
        final long block = view == placeholder || view == null ? capacity() : blockBytes(view);
        return (int)Math.max(0, Math.min(block, maxCapacity()) - writerIndex());
    }

    private long blockBytes(final ByteBuffer view)
    {
        return pinnedAlloc().arena().usableSize(BufferUtil.address(view));
    }

    protected void deallocate()
    {
        // Netty's own deallocate would drop the view; the object keeps it until reuse, at count 0.
        final ByteBuffer view = liveView;
        if (view != placeholder)
        {
            pinnedAlloc().arena().free(BufferUtil.address(view));
            freedView = view;
        }
        handle.recycle(this); // last: from here on another thread may reuse this object
    }

    /**
     * @return the local key to post this buffer with.
     */
    public int lkey()
    {
        return pinnedAlloc().arena().lkey(memoryAddress());
    }

    /**
     * @return the remote key a peer uses for this buffer (remote scope only).
     */
    public int rkey()
    {
        return pinnedAlloc().arena().rkey(memoryAddress());
    }

    /**
     * @return the arena the memory belongs to.
     */
    public PinnedArena arena()
    {
        return pinnedAlloc().arena();
    }
}

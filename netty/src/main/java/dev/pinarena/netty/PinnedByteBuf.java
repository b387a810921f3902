package dev.pinarena.netty;

import dev.pinarena.allocator.PinnedArena;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;

import java.nio.ByteBuffer;

/**
 * A reference-counted Netty buffer over arena memory. Netty's unsafe direct buffer does the byte access;
 * this class only says where the memory comes from and where it goes: {@link #allocateDirect(int)} takes it
 * from the arena (also when the capacity grows), {@link #freeDirect(ByteBuffer)} frees it there, when the
 * reference count reaches 0 or the old memory of a grown buffer is let go.
 */
public final class PinnedByteBuf extends UnpooledUnsafeDirectByteBuf
{
    PinnedByteBuf(final PinnedByteBufAllocator alloc, final int initialCapacity, final int maxCapacity)
    {
        super(alloc, initialCapacity, maxCapacity);
    }

    private PinnedByteBufAllocator pinnedAlloc()
    {
        // alloc() is set by Netty's constructor before it first calls allocateDirect.
        return (PinnedByteBufAllocator)alloc();
    }

    @SuppressWarnings("deprecation")
    protected ByteBuffer allocateDirect(final int initialCapacity)
    {
        return pinnedAlloc().allocate(initialCapacity);
    }

    @SuppressWarnings("deprecation")
    protected void freeDirect(final ByteBuffer buffer)
    {
        pinnedAlloc().free(buffer);
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

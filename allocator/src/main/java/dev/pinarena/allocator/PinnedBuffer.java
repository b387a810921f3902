package dev.pinarena.allocator;

import dev.pinarena.registration.Region;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;

/**
 * A re-wrappable flyweight over one arena buffer: Agrona's {@link org.agrona.MutableDirectBuffer} (through
 * {@link UnsafeBuffer}) plus the buffer's registration keys and a {@link ByteBuffer} view; closing it frees
 * the buffer, so try-with-resources releases it.
 * <pre>{@code
 * final PinnedBuffer buffer = new PinnedBuffer();      // once per thread or per connection
 * try (PinnedBuffer b = arena.allocate(4096, buffer))  // no allocation per use
 * {
 *     b.putLong(0, 42);
 *     post(b.addressOffset(), b.capacity(), b.lkey());
 * }
 * }</pre>
 * Not thread-safe; one flyweight serves one buffer at a time.
 */
public final class PinnedBuffer extends UnsafeBuffer implements AutoCloseable
{
    private static final byte[] DETACHED = new byte[0];

    private PinnedArena arena;
    private long blockAddress;
    private ByteBuffer view;

    /**
     * A detached flyweight; attach it with {@link PinnedArena#allocate(int, PinnedBuffer)}.
     */
    public PinnedBuffer()
    {
        super(DETACHED);
    }

    void attach(final PinnedArena arena, final long address, final int length)
    {
        if (this.arena != null)
        {
            throw new IllegalStateException("PinnedBuffer still holds 0x" + Long.toHexString(blockAddress) +
                ": close it before wrapping a new buffer");
        }
        this.arena = arena;
        this.blockAddress = address;
        wrap(address, length);
    }

    /**
     * @return true while wrapping a buffer that has not been freed.
     */
    public boolean isAttached()
    {
        return arena != null;
    }

    /**
     * @return the registration of this buffer's chunk.
     */
    public Region region()
    {
        return attachedArena().region(blockAddress);
    }

    /**
     * @return the local key to post this buffer with.
     */
    public int lkey()
    {
        return attachedArena().lkey(blockAddress);
    }

    /**
     * @return the remote key a peer uses for this buffer.
     * @throws NotRemoteBufferException for a local-only buffer.
     */
    public int rkey()
    {
        return attachedArena().rkey(blockAddress);
    }

    /**
     * A {@link ByteBuffer} over this buffer (native byte order, position 0, limit = capacity). One view
     * object is made per flyweight, the first time, and re-aimed on each later call: no allocation after
     * that. The view is valid until this flyweight is closed or wraps another buffer.
     *
     * @return the view.
     */
    public ByteBuffer asByteBuffer()
    {
        attachedArena();
        if (view == null)
        {
            view = ByteBufferView.newView();
        }
        return ByteBufferView.aim(view, addressOffset(), capacity());
    }

    /**
     * Frees the buffer and detaches the flyweight. Idempotent.
     */
    public void close()
    {
        final PinnedArena owner = arena;
        if (owner == null)
        {
            return;
        }
        arena = null;
        if (view != null)
        {
            ByteBufferView.aim(view, 0, 0);
        }
        wrap(DETACHED);
        owner.free(blockAddress);
    }

    private PinnedArena attachedArena()
    {
        if (arena == null)
        {
            throw new IllegalStateException("PinnedBuffer is not attached to a buffer");
        }
        return arena;
    }
}

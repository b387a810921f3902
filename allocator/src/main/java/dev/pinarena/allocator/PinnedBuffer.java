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
 * Not thread-safe; one flyweight serves one buffer at a time. A buffer may travel: hand the flyweight (or the
 * address, see {@link PinnedArena#wrap(long, PinnedBuffer)}) to another thread through a safe publication (a
 * queue); that thread may use it and close it, which frees the buffer back to its owner heap.
 * <p>
 * It never lies about its memory: the {@code wrap(...)} methods inherited from {@link UnsafeBuffer} throw
 * (a PinnedBuffer holds arena memory or nothing), a closed flyweight is detached (capacity 0), and after a
 * forced {@link PinnedArena#close(boolean)} the memory it still points at is retired scratch memory, never
 * unmapped or reused, so a stale access reads or writes nothing that belongs to anyone, and its keys throw
 * {@link ArenaClosedException}.
 */
public final class PinnedBuffer extends UnsafeBuffer implements AutoCloseable
{
    private static final byte[] DETACHED = new byte[0];

    private PinnedArena arena;
    private long blockAddress;
    private ByteBuffer view;
    /** Set when construction is done: from then on only the arena's attach may re-aim the buffer. */
    private final boolean sealed;
    /** True only inside {@link #aim}, the one way this class re-aims itself. */
    private boolean aiming;

    /**
     * A detached flyweight; attach it with {@link PinnedArena#allocate(int, PinnedBuffer)} or
     * {@link PinnedArena#wrap(long, PinnedBuffer)}.
     */
    public PinnedBuffer()
    {
        super(DETACHED);
        sealed = true;
    }

    void attach(final PinnedArena arena, final long address, final int length)
    {
        requireDetached();
        this.arena = arena;
        this.blockAddress = address;
        aim(address, length);
    }

    /**
     * Checked before the arena allocates for this flyweight, so that a refused wrap leaks nothing.
     *
     * @throws IllegalStateException if it still holds a buffer.
     */
    void requireDetached()
    {
        if (arena != null)
        {
            throw ArenaErrors.stillAttached(blockAddress);
        }
    }

    private void aim(final long address, final int length)
    {
        aiming = true;
        try
        {
            if (address == 0)
            {
                super.wrap(DETACHED);
            }
            else
            {
                super.wrap(address, length);
            }
        }
        finally
        {
            aiming = false;
        }
    }

    private void refuseWrap()
    {
        if (sealed && !aiming)
        {
            throw new UnsupportedOperationException("a PinnedBuffer holds arena memory or nothing: attach it with " +
                "PinnedArena.allocate(size, buffer) or PinnedArena.wrap(address, buffer), or use an UnsafeBuffer");
        }
    }

    /** @throws UnsupportedOperationException always: see the class comment. */
    public void wrap(final byte[] buffer)
    {
        refuseWrap();
        super.wrap(buffer);
    }

    /** @throws UnsupportedOperationException always: see the class comment. */
    public void wrap(final byte[] buffer, final int offset, final int length)
    {
        refuseWrap();
        super.wrap(buffer, offset, length);
    }

    /** @throws UnsupportedOperationException always: see the class comment. */
    public void wrap(final ByteBuffer buffer)
    {
        refuseWrap();
        super.wrap(buffer);
    }

    /** @throws UnsupportedOperationException always: see the class comment. */
    public void wrap(final ByteBuffer buffer, final int offset, final int length)
    {
        refuseWrap();
        super.wrap(buffer, offset, length);
    }

    /** @throws UnsupportedOperationException always: see the class comment. */
    public void wrap(final org.agrona.DirectBuffer buffer)
    {
        refuseWrap();
        super.wrap(buffer);
    }

    /** @throws UnsupportedOperationException always: see the class comment. */
    public void wrap(final org.agrona.DirectBuffer buffer, final int offset, final int length)
    {
        refuseWrap();
        super.wrap(buffer, offset, length);
    }

    /** @throws UnsupportedOperationException always: see the class comment. */
    public void wrap(final long address, final int length)
    {
        refuseWrap();
        super.wrap(address, length);
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
     * @return the remote key a peer uses for this buffer ({@link PinnedArena#rkey(long)}: with a verbs registrar
     * it reaches exactly this buffer and dies when it is freed).
     * @throws NotRemoteBufferException for a local-only buffer.
     * @throws NoRemoteKeyException     when the arena makes no keys for peers (io_uring, mlock, UCX registrars).
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
     * Frees the buffer and detaches the flyweight. Idempotent. After a forced close of the arena it only
     * detaches: the arena released the memory already.
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
        aim(0, 0);
        if (!owner.isClosed())
        {
            owner.free(blockAddress);
        }
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

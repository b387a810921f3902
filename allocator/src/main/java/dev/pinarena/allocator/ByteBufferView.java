package dev.pinarena.allocator;

import org.agrona.BufferUtil;
import org.agrona.UnsafeApi;

import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A direct {@link ByteBuffer} that can be re-aimed at any address and length without allocating: a duplicate
 * of a zero-length direct buffer whose {@code address} and {@code capacity} fields are rewritten. The
 * duplicate has no cleaner, so dropping it never frees arena memory.
 */
final class ByteBufferView
{
    private static final long CAPACITY_OFFSET = UnsafeApi.objectFieldOffset(Buffer.class, "capacity");
    private static final ByteBuffer TEMPLATE = ByteBuffer.allocateDirect(0);

    private ByteBufferView()
    {
    }

    /**
     * @return a new view object (one allocation; re-aim it with {@link #aim}).
     */
    static ByteBuffer newView()
    {
        return TEMPLATE.duplicate().order(ByteOrder.nativeOrder());
    }

    /**
     * Points the view at [address, address + length): position 0, limit and capacity {@code length}.
     */
    static ByteBuffer aim(final ByteBuffer view, final long address, final int length)
    {
        UnsafeApi.putLong(view, BufferUtil.BYTE_BUFFER_ADDRESS_FIELD_OFFSET, address);
        UnsafeApi.putInt(view, CAPACITY_OFFSET, length);
        view.clear();
        return view;
    }

    /**
     * Re-aims a view the arena made at [address, address + length) of {@code chunk}, big-endian.
     *
     * @throws IllegalArgumentException if the range leaves the chunk or the view is not one of the arena's.
     */
    static ByteBuffer reaim(
        final ChunkDirectory directory, final ArenaChunk chunk, final long address, final int length, final ByteBuffer view)
    {
        if (length < 0 || address + length > chunk.base + chunk.size)
        {
            throw ArenaErrors.viewLeavesChunk(address, length, chunk);
        }
        final long previous = BufferUtil.address(view);
        if (!view.isDirect() || view.isReadOnly() || (view.capacity() != 0 && directory.chunkOf(previous) == null))
        {
            throw ArenaErrors.notArenaView(view);
        }
        return aim(view, address, length).order(ByteOrder.BIG_ENDIAN);
    }
}

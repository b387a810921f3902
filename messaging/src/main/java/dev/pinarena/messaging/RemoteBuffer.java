package dev.pinarena.messaging;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteBuffer;

/**
 * What a peer needs to put into or get from one of our remote-scope arena buffers: its address, its length and
 * its chunk's packed UCX remote key, in a flat little-endian layout:
 * {@code address:8 length:8 keyLength:4 key:keyLength}.
 */
public final class RemoteBuffer
{
    /** Offset of the buffer address. */
    public static final int ADDRESS_OFFSET = 0;
    /** Offset of the buffer length. */
    public static final int LENGTH_OFFSET = 8;
    /** Offset of the packed key's length. */
    public static final int KEY_LENGTH_OFFSET = 16;
    /** Offset of the packed key. */
    public static final int KEY_OFFSET = 20;

    private final long address;
    private final long length;
    private final ByteBuffer packedKey;

    /**
     * @param address   first byte of the buffer.
     * @param length    bytes.
     * @param packedKey packed remote key of its chunk (position to limit).
     */
    public RemoteBuffer(final long address, final long length, final ByteBuffer packedKey)
    {
        if (length <= 0)
        {
            throw new IllegalArgumentException("length must be positive: " + length);
        }
        this.address = address;
        this.length = length;
        this.packedKey = packedKey.asReadOnlyBuffer();
    }

    /**
     * @param node    the node whose arena holds the buffer.
     * @param address a remote-scope arena buffer.
     * @param length  bytes of it to expose.
     * @return its descriptor.
     * @throws IllegalArgumentException if the buffer is local-only.
     */
    public static RemoteBuffer of(final ArenaNode node, final long address, final long length)
    {
        return new RemoteBuffer(address, length,
            node.registrar().packedRemoteKey(node.arena().region(address)));
    }

    /**
     * @param buffer holds an encoded descriptor.
     * @param offset where it starts.
     * @return the descriptor, its key copied out.
     * @throws IllegalArgumentException if the encoded key length does not fit the buffer.
     */
    public static RemoteBuffer decode(final DirectBuffer buffer, final int offset)
    {
        final int keyLength = buffer.getInt(offset + KEY_LENGTH_OFFSET);
        if (keyLength <= 0 || offset + KEY_OFFSET + keyLength > buffer.capacity())
        {
            throw new IllegalArgumentException("encoded remote key length " + keyLength + " does not fit " +
                (buffer.capacity() - offset - KEY_OFFSET) + " bytes");
        }
        final ByteBuffer key = ByteBuffer.allocateDirect(keyLength);
        buffer.getBytes(offset + KEY_OFFSET, key, keyLength);
        key.flip();
        return new RemoteBuffer(buffer.getLong(offset + ADDRESS_OFFSET), buffer.getLong(offset + LENGTH_OFFSET), key);
    }

    /**
     * @param buffer destination.
     * @param offset where to start.
     * @return bytes written.
     */
    public int encode(final MutableDirectBuffer buffer, final int offset)
    {
        final int keyLength = packedKey.remaining();
        buffer.putLong(offset + ADDRESS_OFFSET, address);
        buffer.putLong(offset + LENGTH_OFFSET, length);
        buffer.putInt(offset + KEY_LENGTH_OFFSET, keyLength);
        buffer.putBytes(offset + KEY_OFFSET, packedKey.duplicate(), keyLength);
        return KEY_OFFSET + keyLength;
    }

    /**
     * @return encoded size in bytes.
     */
    public int encodedLength()
    {
        return KEY_OFFSET + packedKey.remaining();
    }

    /**
     * @return first byte of the buffer in the peer's address space.
     */
    public long address()
    {
        return address;
    }

    /**
     * @return bytes.
     */
    public long length()
    {
        return length;
    }

    /**
     * @return the packed key, read-only, position 0.
     */
    public ByteBuffer packedKey()
    {
        return packedKey.duplicate();
    }

    public String toString()
    {
        return "RemoteBuffer{0x" + Long.toHexString(address) + "+" + length + ", key " + packedKey.remaining() + " B}";
    }
}

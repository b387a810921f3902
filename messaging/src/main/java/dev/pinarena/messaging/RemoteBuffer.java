package dev.pinarena.messaging;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteBuffer;

/**
 * What a peer needs to put into or get from one of our remote-scope arena buffers: its address, its length and
 * its chunk's packed UCX remote key, in a flat little-endian layout:
 * {@code address:8 length:8 keyLength:4 key:keyLength}.
 * <p>
 * Decoding reads bytes a peer sent: every field is checked, in {@code long} arithmetic, before anything is
 * allocated ({@link MalformedPeerInputException}). A descriptor decoded by {@link ArenaEndpoint#decodeRemote}
 * remembers that endpoint, and only that endpoint unpacks its key; see the package documentation for what is
 * and is not trusted.
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
    /**
     * The longest packed key accepted from a peer. UCX packs a key per memory domain of a few tens of bytes;
     * this bound leaves room for many domains while keeping a claimed length from costing more than 4 KiB.
     */
    public static final int MAX_KEY_LENGTH = 4096;

    private final long address;
    private final long length;
    private final ByteBuffer packedKey;
    private final ArenaEndpoint origin;

    /**
     * @param address   first byte of the buffer.
     * @param length    bytes.
     * @param packedKey packed remote key of its chunk (position to limit).
     */
    public RemoteBuffer(final long address, final long length, final ByteBuffer packedKey)
    {
        this(address, length, packedKey, null);
    }

    private RemoteBuffer(final long address, final long length, final ByteBuffer packedKey, final ArenaEndpoint origin)
    {
        if (length <= 0)
        {
            throw new IllegalArgumentException("length must be positive: " + length);
        }
        this.address = address;
        this.length = length;
        this.packedKey = packedKey.asReadOnlyBuffer();
        this.origin = origin;
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
     * Decodes a descriptor that belongs to no endpoint: its key cannot be unpacked (use
     * {@link ArenaEndpoint#decodeRemote} for bytes from a peer).
     *
     * @param buffer holds an encoded descriptor.
     * @param offset where it starts.
     * @return the descriptor, its key copied out.
     * @throws MalformedPeerInputException if the bytes do not hold a whole, well-formed descriptor.
     */
    public static RemoteBuffer decode(final DirectBuffer buffer, final int offset)
    {
        return decode(buffer, offset, null);
    }

    static RemoteBuffer decode(final DirectBuffer buffer, final int offset, final ArenaEndpoint origin)
    {
        final long capacity = buffer.capacity();
        if (offset < 0 || (long)offset + KEY_OFFSET > capacity)
        {
            throw new MalformedPeerInputException("a remote buffer descriptor at offset " + offset + " needs " +
                KEY_OFFSET + " header bytes; the message has " + capacity);
        }
        final long keyLength = buffer.getInt(offset + KEY_LENGTH_OFFSET);
        if (keyLength <= 0 || keyLength > MAX_KEY_LENGTH)
        {
            throw new MalformedPeerInputException("encoded remote key length " + keyLength +
                " is outside 1.." + MAX_KEY_LENGTH);
        }
        final long available = capacity - offset - KEY_OFFSET;
        if (keyLength > available)
        {
            throw new MalformedPeerInputException("encoded remote key length " + keyLength + " does not fit " +
                available + " bytes");
        }
        final long address = buffer.getLong(offset + ADDRESS_OFFSET);
        final long length = buffer.getLong(offset + LENGTH_OFFSET);
        if (address == 0 || length <= 0 || Long.compareUnsigned(address + length, address) <= 0)
        {
            throw new MalformedPeerInputException("encoded remote range 0x" + Long.toHexString(address) + "+" +
                length + " is empty, null or wraps around the address space");
        }
        final ByteBuffer key = ByteBuffer.allocateDirect((int)keyLength);
        buffer.getBytes(offset + KEY_OFFSET, key, (int)keyLength);
        key.flip();
        return new RemoteBuffer(address, length, key, origin);
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

    /**
     * @return the endpoint whose peer sent this descriptor, or null when it was made locally or decoded without
     * one.
     */
    ArenaEndpoint origin()
    {
        return origin;
    }

    public String toString()
    {
        return "RemoteBuffer{0x" + Long.toHexString(address) + "+" + length + ", key " + packedKey.remaining() + " B}";
    }
}

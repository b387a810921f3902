package dev.pinarena.messaging;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * A byte pattern that differs by seed and by position, so a shifted, truncated or stale buffer is caught.
 */
final class BytePattern
{
    private BytePattern()
    {
    }

    static byte at(final long index, final long seed)
    {
        final long mixed = (index + 1) * 0x9E3779B97F4A7C15L ^ seed * 0xC2B2AE3D27D4EB4FL;
        return (byte)(mixed >>> 56 ^ index);
    }

    static void fill(final long address, final int length, final long seed)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(address, length);
        for (int i = 0; i < length; i++)
        {
            buffer.putByte(i, at(i, seed));
        }
    }

    /**
     * @return the first index that does not hold the pattern, or -1 when every byte does.
     */
    static long firstMismatch(final long address, final int length, final long seed)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(address, length);
        for (int i = 0; i < length; i++)
        {
            if (buffer.getByte(i) != at(i, seed))
            {
                return i;
            }
        }
        return -1;
    }
}

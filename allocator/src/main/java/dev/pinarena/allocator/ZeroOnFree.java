package dev.pinarena.allocator;

import org.agrona.UnsafeApi;

/**
 * The one place that decides whether a freed buffer is zeroed: buffers of the remote scope, when the arena
 * was configured to ({@link ArenaConfig#zeroRemoteOnFree()}), so a peer that still holds the rkey reads
 * zeros, never the next owner's data. Every free path (owner, cross-thread, run, dedicated) calls it before
 * the buffer can be handed out again.
 */
final class ZeroOnFree
{
    private final boolean zeroRemote;

    ZeroOnFree(final boolean zeroRemote)
    {
        this.zeroRemote = zeroRemote;
    }

    /**
     * @param scope   the freed buffer's scope.
     * @param address its first byte.
     * @param bytes   its usable size.
     */
    void freed(final BufferScope scope, final long address, final long bytes)
    {
        if (zeroRemote && scope == BufferScope.REMOTE)
        {
            UnsafeApi.setMemory(address, bytes, (byte)0);
        }
    }
}

package dev.pinarena.allocator;

import org.agrona.UnsafeApi;

/**
 * The one place every free path (owner, cross-thread, run, dedicated) calls before a buffer can be handed out
 * again. For a buffer of the remote scope, in this order: its own remote key is revoked and the device has
 * confirmed it ({@link ExposedKeys#revoke(long)}, which throws, before anything changes, if it could not);
 * then the bytes are zeroed when the arena was configured to ({@link ArenaConfig#zeroRemoteOnFree()}), so a
 * peer that still holds a chunk-wide key reads zeros, never the next owner's data.
 */
final class ZeroOnFree
{
    private final boolean zeroRemote;
    private final ExposedKeys keys;

    ZeroOnFree(final boolean zeroRemote, final ExposedKeys keys)
    {
        this.zeroRemote = zeroRemote;
        this.keys = keys;
    }

    /**
     * @param scope   the freed buffer's scope.
     * @param address its first byte.
     * @param bytes   its usable size.
     */
    void freed(final BufferScope scope, final long address, final long bytes)
    {
        if (scope == BufferScope.REMOTE)
        {
            keys.revoke(address);
            if (zeroRemote)
            {
                UnsafeApi.setMemory(address, bytes, (byte)0);
            }
        }
    }
}

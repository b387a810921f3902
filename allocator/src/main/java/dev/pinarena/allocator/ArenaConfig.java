package dev.pinarena.allocator;

import dev.pinarena.registration.Access;
import dev.pinarena.registration.os.ChunkMapper;
import dev.pinarena.registration.os.PageBacking;

import java.util.List;

/**
 * Settings of a {@link PinnedArena}. Immutable; {@code with...} methods return a changed copy. Start from
 * {@link #defaults()}; the canonical constructor checks every component like the withers do.
 *
 * @param chunkSize        bytes per chunk: a power of two, at least 2 MiB.
 * @param capBytes         most bytes the arena maps and pins, or {@link #CAP_FROM_HOST}.
 * @param defaultAlignment alignment (and granule) of every buffer: a power of two from 16 to 4096.
 * @param remoteAccess     {@link Access} bits of remote-scope chunks; must include a remote right.
 * @param zeroRemoteOnFree whether a remote-scope buffer is zeroed when freed.
 * @param runCacheBytes    bytes of freed page runs one thread may keep for reuse without a lock.
 * @param backings         page backings to try for each chunk, in order.
 * @param remoteKeys       how remote buffers' keys are made (see {@link RemoteKeyMode}); the default,
 *                         {@link RemoteKeyMode#WINDOW}, falls back to {@link RemoteKeyMode#MR} where windows do
 *                         not keep a peer inside their bounds.
 */
public record ArenaConfig(
    long chunkSize,
    long capBytes,
    int defaultAlignment,
    int remoteAccess,
    boolean zeroRemoteOnFree,
    long runCacheBytes,
    List<PageBacking> backings,
    RemoteKeyMode remoteKeys)
{
    /** Default chunk: 16 MiB, eight 2 MiB huge pages, room for 1 MiB slabs and runs. */
    public static final long DEFAULT_CHUNK_SIZE = 16L << 20;
    /** Default granule: every buffer starts on a 64-byte cache line. */
    public static final int DEFAULT_ALIGNMENT = 64;
    /** Default access of remote-scope chunks. */
    public static final int DEFAULT_REMOTE_ACCESS = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;
    /** Default bytes of freed page runs a thread keeps for itself before returning them to the shared pool. */
    public static final long DEFAULT_RUN_CACHE_BYTES = 8L << 20;
    /** Marker for "compute the cap from RLIMIT_MEMLOCK and free huge pages" ({@link ArenaCapacity}). */
    public static final long CAP_FROM_HOST = -1;

    /**
     * Checks every component.
     */
    public ArenaConfig
    {
        if (chunkSize < ChunkMapper.MIN_CHUNK_SIZE || Long.bitCount(chunkSize) != 1)
        {
            throw new IllegalArgumentException("chunk size must be a power of two of at least 2 MiB: " + chunkSize);
        }
        if (capBytes != CAP_FROM_HOST && capBytes < chunkSize)
        {
            throw new IllegalArgumentException("cap " + capBytes + " is below one chunk of " + chunkSize);
        }
        Access.validate(remoteAccess);
        if (!Access.isRemote(remoteAccess))
        {
            throw new IllegalArgumentException("remote access needs a remote right: " + Access.describe(remoteAccess));
        }
        if (runCacheBytes < 0)
        {
            throw new IllegalArgumentException("run cache bytes must not be negative: " + runCacheBytes);
        }
        backings = List.copyOf(backings);
        if (remoteKeys == null)
        {
            throw new IllegalArgumentException("remoteKeys is null");
        }
        new SizeClasses(defaultAlignment); // validates the granule
    }

    /**
     * @return the defaults: 16 MiB chunks, cap from the host, 64-byte alignment, remote buffers zeroed on free.
     */
    public static ArenaConfig defaults()
    {
        return new ArenaConfig(DEFAULT_CHUNK_SIZE, CAP_FROM_HOST, DEFAULT_ALIGNMENT, DEFAULT_REMOTE_ACCESS, true,
            DEFAULT_RUN_CACHE_BYTES, PageBacking.DEFAULT_PREFERENCE, RemoteKeyMode.WINDOW);
    }

    /**
     * @param chunkSize bytes per chunk: a power of two, at least 2 MiB.
     * @return a copy with that chunk size.
     */
    public ArenaConfig withChunkSize(final long chunkSize)
    {
        return new ArenaConfig(chunkSize, capBytes, defaultAlignment, remoteAccess, zeroRemoteOnFree, runCacheBytes, backings, remoteKeys);
    }

    /**
     * @param capBytes most bytes the arena maps and pins, or {@link #CAP_FROM_HOST}.
     * @return a copy with that cap.
     */
    public ArenaConfig withCapBytes(final long capBytes)
    {
        return new ArenaConfig(chunkSize, capBytes, defaultAlignment, remoteAccess, zeroRemoteOnFree, runCacheBytes, backings, remoteKeys);
    }

    /**
     * @param alignment alignment (and granule) of every buffer: a power of two from 16 to 4096.
     * @return a copy with that default alignment.
     */
    public ArenaConfig withDefaultAlignment(final int alignment)
    {
        return new ArenaConfig(chunkSize, capBytes, alignment, remoteAccess, zeroRemoteOnFree, runCacheBytes, backings, remoteKeys);
    }

    /**
     * @param access {@link Access} bits of remote-scope chunks; must include a remote right.
     * @return a copy with that access.
     */
    public ArenaConfig withRemoteAccess(final int access)
    {
        return new ArenaConfig(chunkSize, capBytes, defaultAlignment, access, zeroRemoteOnFree, runCacheBytes, backings, remoteKeys);
    }

    /**
     * @param zero whether a remote-scope buffer is zeroed when freed, so no peer reads a previous user's bytes.
     * @return a copy with that setting.
     */
    public ArenaConfig withZeroRemoteOnFree(final boolean zero)
    {
        return new ArenaConfig(chunkSize, capBytes, defaultAlignment, remoteAccess, zero, runCacheBytes, backings, remoteKeys);
    }

    /**
     * @param bytes freed page runs one thread may keep for reuse without a lock.
     * @return a copy with that run cache size.
     */
    public ArenaConfig withRunCacheBytes(final long bytes)
    {
        return new ArenaConfig(chunkSize, capBytes, defaultAlignment, remoteAccess, zeroRemoteOnFree, bytes, backings, remoteKeys);
    }

    /**
     * @param backings page backings to try for each chunk, in order.
     * @return a copy with that preference.
     */
    public ArenaConfig withBackings(final List<PageBacking> backings)
    {
        return new ArenaConfig(chunkSize, capBytes, defaultAlignment, remoteAccess, zeroRemoteOnFree, runCacheBytes, backings, remoteKeys);
    }

    /**
     * @param mode how remote buffers' keys are made: {@link RemoteKeyMode#WINDOW} (default; per-buffer
     *             registrations where windows do not hold their bounds), {@link RemoteKeyMode#MR},
     *             {@link RemoteKeyMode#CHUNK}, or {@link RemoteKeyMode#NONE}.
     * @return a copy with that mode.
     */
    public ArenaConfig withRemoteKeys(final RemoteKeyMode mode)
    {
        return new ArenaConfig(chunkSize, capBytes, defaultAlignment, remoteAccess, zeroRemoteOnFree, runCacheBytes, backings,
            mode);
    }

    public String toString()
    {
        return "ArenaConfig{chunk=" + (chunkSize >> 20) + "MiB, cap=" +
            (capBytes == CAP_FROM_HOST ? "from host" : capBytes + "B") + ", alignment=" + defaultAlignment +
            ", remoteAccess=" + Access.describe(remoteAccess) + ", zeroRemoteOnFree=" + zeroRemoteOnFree +
            ", runCache=" + runCacheBytes + "B, backings=" + backings + ", remoteKeys=" + remoteKeys + '}';
    }
}

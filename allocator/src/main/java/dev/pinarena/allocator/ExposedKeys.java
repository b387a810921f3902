package dev.pinarena.allocator;

import dev.pinarena.registration.Access;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.RegistrationException;
import dev.pinarena.registration.verbs.MemoryWindows;
import dev.pinarena.registration.verbs.VerbsRegistrar;
import dev.pinarena.registration.verbs.WindowsUnavailableException;
import org.agrona.collections.Long2LongHashMap;

/**
 * The keys of an arena's remote-scope buffers: one per buffer reaching exactly its bytes
 * ({@link RemoteKeyMode#WINDOW}, {@link RemoteKeyMode#MR}), or the chunk's ({@link RemoteKeyMode#CHUNK}), or
 * none ({@link RemoteKeyMode#NONE}).
 * <p>
 * The mode is decided once, when the first remote chunk is registered (it decides that chunk's access:
 * {@code LOCAL_WRITE | MW_BIND} for windows, {@code LOCAL_WRITE} for per-buffer registrations — the chunk's
 * own key then reaches nothing remotely — and the configured remote access for chunk keys).
 * <p>
 * Ordering on free: {@link #revoke(long)} runs first on every free path of a remote buffer
 * ({@link ZeroOnFree}); it returns only once the device confirmed the key dead (the window rebound to
 * nothing and its completion reaped, or {@code ibv_dereg_mr} returned), and only then are the bytes zeroed
 * and the buffer released for reuse. A failed revocation throws before anything else happens.
 * <p>
 * Thread safety: every method that touches a key is synchronized (the window pool serves one bind at a time,
 * and frees arrive from any thread). This is the remote-allocation path: a bind or a registration per
 * buffer; the local path never comes here.
 */
final class ExposedKeys
{
    /**
     * System property: {@code false} skips the check that the device keeps a peer inside a window's bounds.
     * For measuring and testing only: on a device that fails it (rdma_rxe) a window's key reaches its chunk.
     */
    static final String WINDOW_PROBE_PROPERTY = "pinarena.remoteWindowProbe";
    private static final long NONE = -1;
    private static final int REMOTE_RIGHTS = Access.REMOTE_READ | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC;

    private final Registrar registrar;
    private final RemoteKeyMode wanted;
    private final int configuredAccess;
    /** Written once under the lock; read without it on every remote allocation and free. */
    private volatile RemoteKeyMode mode;
    private String reason = "";
    private MemoryWindows windows;
    /** Buffer address to its window ({@code struct ibv_mw *}) or registration ({@code struct ibv_mr *}). */
    private final Long2LongHashMap handles = new Long2LongHashMap(NONE);
    /** Buffer address to its key. */
    private final Long2LongHashMap keys = new Long2LongHashMap(NONE);
    /** Buffer address to the registration its window is bound to (window mode). */
    private final Long2LongHashMap windowMrs = new Long2LongHashMap(NONE);

    ExposedKeys(final Registrar registrar, final ArenaConfig config)
    {
        this.registrar = registrar;
        this.wanted = config.remoteKeys();
        this.configuredAccess = config.remoteAccess();
    }

    /**
     * @return the mode, deciding it on the first call.
     */
    RemoteKeyMode mode()
    {
        final RemoteKeyMode m = mode;
        return m != null ? m : decide();
    }

    synchronized String reason()
    {
        mode();
        return reason;
    }

    private synchronized RemoteKeyMode decide()
    {
        if (mode != null)
        {
            return mode;
        }
        RemoteKeyMode m;
        if (!(registrar instanceof VerbsRegistrar))
        {
            m = RemoteKeyMode.NONE;
            reason = "the " + registrar.name() + " registrar makes no keys for peers";
        }
        else if (wanted == RemoteKeyMode.WINDOW)
        {
            try
            {
                windows = MemoryWindows.open((VerbsRegistrar)registrar,
                    !"false".equals(System.getProperty(WINDOW_PROBE_PROPERTY)));
                m = RemoteKeyMode.WINDOW;
            }
            catch (final WindowsUnavailableException | RegistrationException ex)
            {
                m = RemoteKeyMode.MR;
                reason = ex.getMessage() + "; per-buffer registrations instead";
            }
        }
        else
        {
            m = wanted;
            reason = "asked for " + wanted;
        }
        mode = m;
        return m;
    }

    /**
     * @return the access a new remote-scope chunk is registered with.
     */
    int chunkAccess()
    {
        switch (mode())
        {
            case WINDOW:
                return Access.LOCAL_WRITE | Access.MW_BIND;
            case MR:
                return Access.LOCAL_WRITE;
            default:
                return configuredAccess;
        }
    }

    /**
     * @return true when each remote buffer gets a key of its own.
     */
    boolean perBuffer()
    {
        final RemoteKeyMode m = mode();
        return m == RemoteKeyMode.WINDOW || m == RemoteKeyMode.MR;
    }

    /**
     * Makes the key of a new remote buffer, reaching exactly [address, address + size).
     *
     * @param chunk the registration of the chunk holding it.
     * @throws RegistrationException when the device refuses.
     */
    synchronized void expose(final long address, final long size, final Region chunk)
    {
        final int rights = configuredAccess & REMOTE_RIGHTS;
        if (mode == RemoteKeyMode.WINDOW)
        {
            final long mw = windows.bind(chunk.handle(), address, size, rights);
            handles.put(address, mw);
            windowMrs.put(address, chunk.handle());
            keys.put(address, windows.rkey(mw) & 0xFFFF_FFFFL);
        }
        else
        {
            final VerbsRegistrar verbs = (VerbsRegistrar)registrar;
            final long mr = verbs.registerExact(address, size, rights | Access.LOCAL_WRITE);
            handles.put(address, mr);
            keys.put(address, verbs.exactRkey(mr) & 0xFFFF_FFFFL);
        }
    }

    /**
     * Kills the key of a remote buffer being freed, and returns once the device confirmed it; a buffer
     * without a key of its own (chunk or no keys) returns at once.
     *
     * @throws RemoteKeyRevocationException when the device did not confirm (the key stays recorded).
     */
    void revoke(final long address)
    {
        if (perBuffer())
        {
            revokeExposed(address);
        }
    }

    private synchronized void revokeExposed(final long address)
    {
        final long handle = handles.get(address);
        if (handle == NONE)
        {
            return;
        }
        try
        {
            if (mode == RemoteKeyMode.WINDOW)
            {
                windows.revoke(handle, windowMrs.get(address));
            }
            else
            {
                ((VerbsRegistrar)registrar).deregisterExact(handle);
            }
        }
        catch (final RegistrationException ex)
        {
            if (mode == RemoteKeyMode.WINDOW)
            {
                forget(address); // the pool destroyed the window: its key died with it, yet nothing is reused
            }
            throw new RemoteKeyRevocationException(address, "free(" + ArenaException.hex(address) +
                "): the buffer's remote key could not be revoked; the buffer stays allocated", ex);
        }
        forget(address);
    }

    private void forget(final long address)
    {
        handles.remove(address);
        keys.remove(address);
        windowMrs.remove(address);
    }

    /**
     * @return true if a key a peer may hold still reaches the chunk: the chunk's own with chunk keys, or a
     * buffer's recorded at its base (a revocation that failed). Such a chunk is never released.
     */
    synchronized boolean reaches(final ArenaChunk chunk)
    {
        if (chunk.scope != BufferScope.REMOTE)
        {
            return false;
        }
        return mode() == RemoteKeyMode.CHUNK || handles.get(chunk.base) != NONE;
    }

    /**
     * @return the key of the live remote buffer starting at address, or -1 if there is none.
     */
    synchronized long rkey(final long address)
    {
        return keys.get(address);
    }

    /**
     * The key a peer uses for {@code address}, as {@link #mode()} makes it (see {@link PinnedArena#rkey(long)}).
     *
     * @param address a remote buffer's first byte (any byte of a remote chunk with chunk keys).
     * @param chunk   the chunk that holds it.
     * @return the remote key.
     */
    int peerKey(final long address, final ArenaChunk chunk)
    {
        if (chunk.scope != BufferScope.REMOTE)
        {
            throw ArenaErrors.notRemote(address);
        }
        final Region region = ChunkDirectory.liveRegion(address, chunk); // live in every mode
        switch (mode())
        {
            case CHUNK:
                return region.rkey();
            case NONE:
                throw ArenaErrors.noRemoteKeys(address, reason());
            default:
                final long key = rkey(address);
                if (key < 0)
                {
                    throw ArenaErrors.notLiveRemoteBuffer(address);
                }
                return (int)key;
        }
    }

    /**
     * @return how many buffers hold a key of their own.
     */
    synchronized int exposedCount()
    {
        return handles.size();
    }

    /**
     * Revokes every key still live and closes the window pool: before the chunks are deregistered (a
     * registration with windows bound to it cannot be).
     */
    synchronized void close()
    {
        RuntimeException first = null;
        final Long2LongHashMap.KeyIterator it = handles.keySet().iterator();
        final long[] live = new long[handles.size()];
        int n = 0;
        while (it.hasNext())
        {
            live[n++] = it.nextValue();
        }
        for (final long address : live)
        {
            try
            {
                revokeExposed(address);
            }
            catch (final RuntimeException ex)
            {
                first = first == null ? ex : first;
            }
        }
        if (windows != null)
        {
            windows.close();
            windows = null;
        }
        if (first != null)
        {
            throw first;
        }
    }
}

package dev.pinarena.registration.verbs;

import dev.pinarena.registration.RegistrationException;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;

import java.io.File;

/**
 * A pool of type-1 memory windows on a {@link VerbsRegistrar}'s protection domain, through bindings-c's
 * {@code libpinarena-windows.so} (the C shim's window pool): {@code ibv_bind_mw} and the completion it waits
 * for are inline verbs calls, which jnr-ffi cannot make, so each bind and each revoke is one call into C.
 * <p>
 * A window is bound to exactly one range of a registration made with {@code Access.MW_BIND}; its key reaches
 * that range and, once {@link #revoke} returned, nothing (the window is rebound to zero bytes and the device
 * confirmed it). The binds are posted on a queue pair of the pool's own, connected to itself, whose
 * completions the calling thread reaps: no thread. {@link #open} checks once that the device keeps a peer
 * inside a window's bounds (a READ one byte past a window must fail) and refuses a device that does not
 * (rdma_rxe checks window accesses against the registration under the window).
 * <p>
 * The library is found at the system property {@value #LIBRARY_PROPERTY} (a path), else in the directory
 * {@code pinarena.native.dir}, else by name ({@code pinarena-windows}) on the library path.
 * <p>
 * Not thread-safe: the caller serialises every call on one pool.
 */
public final class MemoryWindows implements AutoCloseable
{
    /** System property naming the library file. */
    public static final String LIBRARY_PROPERTY = "pinarena.windows.lib";
    /** The file bindings-c builds. */
    public static final String LIBRARY_FILE = "libpinarena-windows.so";

    /** The C functions; every one takes a pointer first. */
    public interface Native
    {
        @SaveError
        Pointer pa_mw_open(Pointer pd, int probe);

        String pa_mw_why();

        @SaveError
        Pointer pa_mw_bind(Pointer pool, Pointer mr, long address, long length, int access);

        int pa_mw_rkey(Pointer mw);

        int pa_mw_revoke(Pointer pool, Pointer mw, Pointer mr);

        void pa_mw_close(Pointer pool);
    }

    private final Native lib;
    private final Runtime runtime;
    private final Pointer pool;
    private boolean closed;

    private MemoryWindows(final Native lib, final Pointer pool)
    {
        this.lib = lib;
        this.runtime = Runtime.getRuntime(lib);
        this.pool = pool;
    }

    /**
     * Opens a window pool on the registrar's protection domain, after checking that the device keeps a peer
     * inside a window's bounds.
     *
     * @param registrar the registrar whose registrations the windows will be bound to.
     * @return the pool.
     * @throws WindowsUnavailableException naming why windows cannot be used here.
     */
    public static MemoryWindows open(final VerbsRegistrar registrar)
    {
        return open(registrar, true);
    }

    /**
     * Opens a window pool on the registrar's protection domain.
     *
     * @param registrar   the registrar whose registrations the windows will be bound to.
     * @param probeBounds check that the device keeps a peer inside a window's bounds; false is for measuring
     *                    and testing only: on a device that fails the check a window's key reaches the whole
     *                    registration under it.
     * @return the pool.
     * @throws WindowsUnavailableException naming why windows cannot be used here: the library is missing, the
     *                                     device has no memory windows, no port is active, or the device does
     *                                     not keep a peer inside a window's bounds.
     */
    public static MemoryWindows open(final VerbsRegistrar registrar, final boolean probeBounds)
    {
        final Native lib = library();
        final Runtime runtime = Runtime.getRuntime(lib);
        final Pointer pool = lib.pa_mw_open(
            runtime.getMemoryManager().newPointer(registrar.protectionDomain()), probeBounds ? 1 : 0);
        if (pool == null)
        {
            final int errno = runtime.getLastError();
            throw new WindowsUnavailableException(lib.pa_mw_why() + " (errno " + errno + ")");
        }
        return new MemoryWindows(lib, pool);
    }

    private static Native library()
    {
        final String explicit = System.getProperty(LIBRARY_PROPERTY);
        final String dir = System.getProperty("pinarena.native.dir");
        final String name;
        if (explicit != null)
        {
            name = explicit;
        }
        else if (dir != null && new File(dir, LIBRARY_FILE).isFile())
        {
            name = new File(dir, LIBRARY_FILE).getPath();
        }
        else
        {
            name = "pinarena-windows";
        }
        try
        {
            return LibraryLoader.create(Native.class).failImmediately().load(name);
        }
        catch (final LinkageError ex)
        {
            throw new WindowsUnavailableException(LIBRARY_FILE + " not found (" + name + "): build bindings-c and " +
                "set -D" + LIBRARY_PROPERTY + "=PATH; " + String.valueOf(ex.getMessage()).split("\n", 2)[0]);
        }
    }

    /**
     * Binds a window to exactly [address, address + length) of a registration.
     *
     * @param mr      the {@code struct ibv_mr *} (a region's handle) covering the range, registered with
     *                {@code Access.MW_BIND}.
     * @param address first byte.
     * @param length  bytes, positive.
     * @param access  remote rights of the window ({@code Access.REMOTE_READ | Access.REMOTE_WRITE}).
     * @return the window ({@code struct ibv_mw *}); its key is {@link #rkey(long)}.
     * @throws RegistrationException when the device refuses the bind.
     */
    public long bind(final long mr, final long address, final long length, final int access)
    {
        final Pointer mw = lib.pa_mw_bind(pool, pointer(mr), address, length, access);
        if (mw == null)
        {
            throw new RegistrationException("ibv_bind_mw", runtime.getLastError(),
                "binding a window to 0x" + Long.toHexString(address) + "+" + length);
        }
        return mw.address();
    }

    /**
     * @param mw a bound window.
     * @return its current key.
     */
    public int rkey(final long mw)
    {
        return lib.pa_mw_rkey(pointer(mw));
    }

    /**
     * Revokes a window: rebinds it to zero bytes and waits for the device's completion; on return no peer
     * reaches anything with its old key. The window goes back to the pool.
     *
     * @param mw the window.
     * @param mr the registration it was bound to.
     * @throws RegistrationException when the device did not confirm (the window is then destroyed).
     */
    public void revoke(final long mw, final long mr)
    {
        final int rc = lib.pa_mw_revoke(pool, pointer(mw), pointer(mr));
        if (rc != 0)
        {
            throw new RegistrationException("revoking a memory window", -rc, "the device did not confirm it");
        }
    }

    /**
     * Destroys the free windows and the pool's queue pair. Every window must have been revoked.
     */
    public void close()
    {
        if (!closed)
        {
            closed = true;
            lib.pa_mw_close(pool);
        }
    }

    private Pointer pointer(final long address)
    {
        return runtime.getMemoryManager().newPointer(address);
    }
}

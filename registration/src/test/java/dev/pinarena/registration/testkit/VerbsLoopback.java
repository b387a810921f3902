package dev.pinarena.registration.testkit;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;

/**
 * The Java tests' one binding of bindings-c's {@code libpinarena-verbs-loopback.so}
 * ({@code bindings-c/tools/loopback_ffi.c}): RC loopback queue pairs on a registrar's protection domain and a
 * registered buffer of their own ({@link #local()}). Java cannot post work requests itself
 * ({@code ibv_post_send} is an inline function in {@code verbs.h}), so each request is one C call that posts
 * it and waits for its completion.
 * <ul>
 * <li>The data check ({@link #send}): an RDMA WRITE from the caller's buffer with its lkey into the local
 *     buffer, compared here with the source's current bytes. A stale registration delivers the bytes of the
 *     frames it pinned, not what the address shows now.</li>
 * <li>A peer holding keys ({@link #read}, {@link #write}): RDMA READ and WRITE to an address with a key
 *     exactly as a remote peer's would arrive, landing in or sent from the local buffer.</li>
 * </ul>
 * Not thread-safe: one request at a time (the methods are synchronized).
 */
public final class VerbsLoopback implements AutoCloseable
{
    /** Completion status of a successful request ({@code IBV_WC_SUCCESS}). */
    public static final int SUCCESS = 0;
    /** Completion status of a request the responder refused for its key or range ({@code IBV_WC_REM_ACCESS_ERR}). */
    public static final int REMOTE_ACCESS_ERROR = 10;
    private static final int READ = 0;
    private static final int WRITE = 1;

    /** The C functions. */
    public interface Native
    {
        @SaveError
        Pointer pa_vl_open(long pd, long dstLength);

        int pa_vl_write(Pointer handle, long src, int length, int lkey);

        int pa_vl_rdma(Pointer handle, int op, int length, long remote, int rkey);

        long pa_vl_dst(Pointer handle);

        void pa_vl_close(Pointer handle);
    }

    private static Native lib;

    private final Pointer handle;
    private final UnsafeBuffer local;

    private VerbsLoopback(final Pointer handle, final long localAddress, final int capacity)
    {
        this.handle = handle;
        this.local = new UnsafeBuffer(localAddress, capacity);
    }

    /**
     * @return the helper library bindings-c's build makes ({@code libpinarena-verbs-loopback.so}).
     * @throws IllegalStateException when it has not been built (see {@link NativeBuild}).
     */
    public static synchronized Native library() throws IOException
    {
        if (lib == null)
        {
            lib = LibraryLoader.create(Native.class).failImmediately()
                .load(NativeBuild.file("libpinarena-verbs-loopback.so"));
        }
        return lib;
    }

    /**
     * @param protectionDomain the registrar's {@code struct ibv_pd *}; the lkeys sent from must belong to it.
     * @param capacity         bytes of the local buffer: the largest request.
     * @return the connected pair.
     * @throws IOException           if the library cannot be found.
     * @throws IllegalStateException if the device refuses the pair.
     */
    public static VerbsLoopback open(final long protectionDomain, final int capacity) throws IOException
    {
        final Native n = library();
        final Pointer h = n.pa_vl_open(protectionDomain, capacity);
        if (h == null)
        {
            throw new IllegalStateException("pa_vl_open failed: errno " + Runtime.getRuntime(n).getLastError());
        }
        return new VerbsLoopback(h, n.pa_vl_dst(h), capacity);
    }

    /** @return the pair's own registered buffer: where {@link #send} and {@link #read} land, what {@link #write} sends. */
    public UnsafeBuffer local()
    {
        return local;
    }

    /**
     * RDMA WRITE {@code length} bytes at {@code address} through {@code lkey} into {@link #local()}.
     *
     * @return how many delivered bytes equal the source's current bytes.
     * @throws IllegalStateException when the write or its completion fails.
     */
    public synchronized int send(final long address, final int length, final int lkey)
    {
        if (length > local.capacity())
        {
            throw new IllegalArgumentException("send of " + length + " > capacity " + local.capacity());
        }
        final int rc = lib.pa_vl_write(handle, address, length, lkey);
        if (rc != 0)
        {
            throw new IllegalStateException("RDMA WRITE from 0x" + Long.toHexString(address) + " lkey 0x" +
                Integer.toHexString(lkey) + " failed: " + rc);
        }
        final UnsafeBuffer src = new UnsafeBuffer(address, length);
        int same = 0;
        for (int i = 0; i < length; i++)
        {
            same += src.getByte(i) == local.getByte(i) ? 1 : 0;
        }
        return same;
    }

    /**
     * @return how many of the first {@code length} delivered bytes equal {@code b}.
     */
    public synchronized int delivered(final int length, final byte b)
    {
        int n = 0;
        for (int i = 0; i < length; i++)
        {
            n += local.getByte(i) == b ? 1 : 0;
        }
        return n;
    }

    /**
     * RDMA READ {@code length} bytes at {@code remote} with {@code rkey} into {@link #local()}.
     *
     * @return the completion status ({@link #SUCCESS}, {@link #REMOTE_ACCESS_ERROR}, ...).
     */
    public synchronized int read(final long remote, final int length, final int rkey)
    {
        return lib.pa_vl_rdma(handle, READ, length, remote, rkey);
    }

    /**
     * RDMA WRITE the first {@code length} bytes of {@link #local()} to {@code remote} with {@code rkey}.
     *
     * @return the completion status.
     */
    public synchronized int write(final long remote, final int length, final int rkey)
    {
        return lib.pa_vl_rdma(handle, WRITE, length, remote, rkey);
    }

    public void close()
    {
        lib.pa_vl_close(handle);
    }
}

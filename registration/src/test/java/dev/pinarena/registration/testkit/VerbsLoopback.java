package dev.pinarena.registration.cache;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;

/**
 * The RDMA data check for the Java tests: RC loopback queue pairs on a registrar's protection domain and a
 * registered destination buffer, from the C helper {@code libpinarena-verbs-loopback.so}
 * ({@code bindings-c/tools/loopback_ffi.c}). Java cannot post work requests itself ({@code ibv_post_send} is
 * an inline function in {@code verbs.h}), so {@link #send} calls one C function that posts an RDMA WRITE with
 * the caller's lkey and waits for its completion; the comparison with the source's current bytes is done
 * here. A stale registration delivers the bytes of the frames it pinned, not what the address shows now.
 * <p>
 * Not thread-safe: one send at a time ({@link #send} is synchronized).
 */
final class VerbsLoopback implements AutoCloseable
{
    /** The C functions. */
    public interface Native
    {
        @SaveError
        Pointer pa_vl_open(long pd, long dstLength);

        int pa_vl_write(Pointer handle, long src, int length, int lkey);

        long pa_vl_dst(Pointer handle);

        void pa_vl_close(Pointer handle);
    }

    private static Native lib;

    private final Pointer handle;
    private final UnsafeBuffer dst;
    private final int capacity;

    private VerbsLoopback(final Pointer handle, final long dstAddress, final int capacity)
    {
        this.handle = handle;
        this.capacity = capacity;
        this.dst = new UnsafeBuffer(dstAddress, capacity);
    }

    /**
     * @return the helper library bindings-c's build makes ({@code libpinarena-verbs-loopback.so}).
     * @throws IllegalStateException when it has not been built.
     */
    static synchronized Native library() throws IOException
    {
        if (lib == null)
        {
            lib = LibraryLoader.create(Native.class).load(NativeBuild.file("libpinarena-verbs-loopback.so"));
        }
        return lib;
    }

    /**
     * @param protectionDomain the registrar's {@code struct ibv_pd *}; the lkeys sent from must belong to it.
     * @param capacity         largest send, in bytes (the destination is registered once, this size).
     */
    static VerbsLoopback open(final long protectionDomain, final int capacity) throws IOException
    {
        final Native n = library();
        final Pointer h = n.pa_vl_open(protectionDomain, capacity);
        if (h == null)
        {
            throw new IllegalStateException("pa_vl_open failed: errno " + Runtime.getRuntime(n).getLastError());
        }
        return new VerbsLoopback(h, n.pa_vl_dst(h), capacity);
    }

    /**
     * RDMA WRITE {@code length} bytes at {@code address} through {@code lkey} into the destination.
     *
     * @return how many delivered bytes equal the source's current bytes.
     * @throws IllegalStateException when the write or its completion fails.
     */
    synchronized int send(final long address, final int length, final int lkey)
    {
        if (length > capacity)
        {
            throw new IllegalArgumentException("send of " + length + " > capacity " + capacity);
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
            same += src.getByte(i) == dst.getByte(i) ? 1 : 0;
        }
        return same;
    }

    /**
     * @return how many of the first {@code length} delivered bytes equal {@code b}.
     */
    synchronized int delivered(final int length, final byte b)
    {
        int n = 0;
        for (int i = 0; i < length; i++)
        {
            n += dst.getByte(i) == b ? 1 : 0;
        }
        return n;
    }

    public void close()
    {
        lib.pa_vl_close(handle);
    }
}

package dev.pinarena.allocator;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.File;

/**
 * A peer holding keys, in the same process: an RC queue pair connected to a second one on the registrar's
 * protection domain (bindings-c's {@code libpinarena-verbs-loopback.so}), posting RDMA READ and WRITE to an
 * address with a key exactly as a remote peer's would arrive. Its own buffer ({@link #local()}) is where a READ
 * lands and what a WRITE sends.
 */
final class RdmaPeer implements AutoCloseable
{
    /** Completion status of a successful request ({@code IBV_WC_SUCCESS}). */
    static final int SUCCESS = 0;
    /** Completion status of a request the responder refused for its key or range ({@code IBV_WC_REM_ACCESS_ERR}). */
    static final int REMOTE_ACCESS_ERROR = 10;
    private static final int READ = 0;
    private static final int WRITE = 1;

    /** The C functions. */
    public interface Native
    {
        @SaveError
        Pointer pa_vl_open(long pd, long dstLength);

        int pa_vl_rdma(Pointer handle, int op, int length, long remote, int rkey);

        long pa_vl_dst(Pointer handle);

        void pa_vl_close(Pointer handle);
    }

    private final Native lib;
    private final Pointer handle;
    private final UnsafeBuffer local;

    RdmaPeer(final long protectionDomain, final int capacity)
    {
        final String dir = System.getProperty("pinarena.native.dir");
        if (dir == null)
        {
            throw new IllegalStateException("pinarena.native.dir is not set: run through Maven (testbed/run-junit)");
        }
        lib = LibraryLoader.create(Native.class).failImmediately()
            .load(new File(dir, "libpinarena-verbs-loopback.so").getPath());
        handle = lib.pa_vl_open(protectionDomain, capacity);
        if (handle == null)
        {
            throw new IllegalStateException("pa_vl_open failed: errno " + Runtime.getRuntime(lib).getLastError());
        }
        local = new UnsafeBuffer(lib.pa_vl_dst(handle), capacity);
    }

    /** @return the peer's own buffer. */
    UnsafeBuffer local()
    {
        return local;
    }

    /** RDMA READ {@code length} bytes at {@code remote} with {@code rkey} into {@link #local()}: the completion status. */
    int read(final long remote, final int length, final int rkey)
    {
        return lib.pa_vl_rdma(handle, READ, length, remote, rkey);
    }

    /** RDMA WRITE the first {@code length} bytes of {@link #local()} to {@code remote} with {@code rkey}. */
    int write(final long remote, final int length, final int rkey)
    {
        return lib.pa_vl_rdma(handle, WRITE, length, remote, rkey);
    }

    public void close()
    {
        lib.pa_vl_close(handle);
    }
}

package dev.pinarena.registration.cache;

import jnr.ffi.LibraryLoader;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The C side's invalidation sinks ({@code bindings-c/src/ivset.h}) as seen from Java: the memory hooks of
 * the malloc shim {@code libpinarena.so} (or of the hooks-only {@code libpinarena-hooks.so}) and their
 * userfaultfd monitor post every
 * munmap, mremap, mmap(MAP_FIXED), madvise(DONTNEED/FREE/REMOVE), brk shrink and shmdt into each open
 * sink, so a Java cache gets the same events as a C one.
 * <p>
 * Protocol: {@link #open} opens a sink of its own (no other consumer can take its events) and learns the
 * address of the sink's {@code pending} word. {@link #pending()} reads that word with a volatile load from
 * native memory — no JNI call on the hit path. {@link #drain(long[])} is one jnr call, made only when
 * {@code pending} is set, which copies up to 65 ranges into a native buffer; it leaves {@code pending}
 * nonzero ({@code PA_IV_DRAINING}) until {@link #drainDone()} (one more jnr call per drain round), so the
 * hit path never trusts the index while drained ranges are still being applied.
 * <p>
 * Run the JVM with {@code LD_PRELOAD=.../libpinarena.so} (or {@code libpinarena-hooks.so}) for the hooks to
 * see the unmaps of native
 * libraries (and the JDK's own, e.g. {@code MappedByteBuffer} unmapping). Loaded without LD_PRELOAD the
 * library still works, but its hooks only see calls made into it directly ({@link #source()} says which).
 * Calls bound to libc by handle — jnr-ffi's {@code LibC}, hence {@code Linux.libc().munmap} — and raw
 * syscalls bypass interposition in both cases.
 */
public final class NativeInvalidationFeed implements InvalidationFeed
{
    /** Ranges per drain call: the sink's slots plus its overflow span. */
    static final int DRAIN_MAX = 65;

    /** The part of the C library this class uses; ≤ 5 arguments per call (see {@code os/Linux}). */
    public interface Hooks
    {
        int pa_iv_open();

        void pa_iv_close(int sink);

        long pa_iv_pending(int sink);

        int pa_iv_drain(int sink, long out, int max);

        void pa_iv_drain_done(int sink);

        int pa_iv_queued(int sink);

        int pa_memhooks_interposing();

        int pa_ufd_active();

        int munmap(long address, long length);

        int madvise(long address, long length, int advice);

        /**
         * mmap(address, length, RW, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) through the mmap hook: fresh
         * zero pages over a range that is mapped now, in one call (no hole another thread could take), posted
         * like any MAP_FIXED. Two arguments because jnr-ffi 2.2.17 garbles the 6th of six primitive arguments.
         *
         * @return {@code address}, or -1 (MAP_FAILED).
         */
        long pa_memhooks_replace_anon(long address, long length);
    }

    private final Hooks hooks;
    private final int sink;
    private final UnsafeBuffer pendingWord;
    private final UnsafeBuffer drainBuffer;
    private final String source;
    private boolean closed;

    private NativeInvalidationFeed(final Hooks hooks, final int sink, final String source)
    {
        this.hooks = hooks;
        this.sink = sink;
        this.source = source;
        this.pendingWord = new UnsafeBuffer(hooks.pa_iv_pending(sink), 8);
        final ByteBuffer buffer = ByteBuffer.allocateDirect(DRAIN_MAX * 16).order(ByteOrder.nativeOrder());
        this.drainBuffer = new UnsafeBuffer(buffer);
    }

    /**
     * Opens a sink in the hooks library of this process.
     *
     * @param library path of {@code libpinarena.so} or {@code libpinarena-hooks.so}; null: the first
     *                LD_PRELOAD entry that is one of them (the first is the one whose hooks and sink table
     *                the process uses), else the {@code pinarena.hooks} system property.
     * @return the feed.
     * @throws IllegalStateException if no library is found or every sink is taken.
     */
    public static NativeInvalidationFeed open(final String library)
    {
        final String path = library != null ? library : locate();
        if (path == null || !Files.exists(Path.of(path)))
        {
            throw new IllegalStateException(
                "libpinarena.so / libpinarena-hooks.so not found (" + path +
                "): preload it (LD_PRELOAD) or set -Dpinarena.hooks=PATH");
        }
        final Hooks hooks = LibraryLoader.create(Hooks.class).load(path);
        final int sink = hooks.pa_iv_open();
        if (sink < 0)
        {
            throw new IllegalStateException("no free invalidation sink (errno " + -sink + ")");
        }
        final boolean interposing = hooks.pa_memhooks_interposing() != 0;
        final boolean ufd = hooks.pa_ufd_active() != 0;
        final String source = (interposing ? "hooks (LD_PRELOAD)" : "hooks (loaded, not interposing: direct calls only)") +
            (ufd ? " + userfaultfd" : "");
        return new NativeInvalidationFeed(hooks, sink, source);
    }

    /**
     * @return the native functions, e.g. for tests that unmap through the hooks.
     */
    public Hooks hooks()
    {
        return hooks;
    }

    static String locate()
    {
        return locate(System.getenv("LD_PRELOAD"), System.getProperty("pinarena.hooks"));
    }

    /**
     * @param preload  the LD_PRELOAD value (entries separated by ':' or spaces), or null.
     * @param fallback returned when no entry names a library with the hooks.
     * @return the first entry whose file name is {@code libpinarena.so} or {@code libpinarena-hooks.so}
     * (optionally with a version suffix: {@code libpinarena.so.1}); other {@code libpinarena-*} libraries
     * (e.g. the verbs loopback helper) carry no hooks.
     */
    static String locate(final String preload, final String fallback)
    {
        if (preload != null)
        {
            for (final String entry : preload.split("[: ]"))
            {
                final String name = entry.substring(entry.lastIndexOf('/') + 1);
                if (name.startsWith("libpinarena.so") || name.startsWith("libpinarena-hooks.so"))
                {
                    return entry;
                }
            }
        }
        return fallback;
    }

    public boolean pending()
    {
        return pendingWord.getLongVolatile(0) != 0;
    }

    public int drain(final long[] out)
    {
        final int max = Math.min(DRAIN_MAX, out.length / 2);
        final int n = hooks.pa_iv_drain(sink, drainBuffer.addressOffset(), max);
        for (int i = 0; i < n; i++)
        {
            out[2 * i] = drainBuffer.getLong(i * 16);
            out[2 * i + 1] = drainBuffer.getLong(i * 16 + 8);
        }
        return n;
    }

    public void drainDone()
    {
        hooks.pa_iv_drain_done(sink);
    }

    public int queued()
    {
        return hooks.pa_iv_queued(sink);
    }

    public String source()
    {
        return source;
    }

    public synchronized void close()
    {
        if (!closed)
        {
            closed = true;
            hooks.pa_iv_close(sink);
        }
    }
}

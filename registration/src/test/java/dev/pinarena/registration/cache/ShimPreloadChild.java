package dev.pinarena.registration.cache;

import dev.pinarena.registration.Access;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.os.internal.Linux;
import dev.pinarena.registration.uring.FixedBufferProbe;
import dev.pinarena.registration.uring.IoUringRegistrar;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The child JVM of {@link ShimPreloadFeedTest}, run with {@code LD_PRELOAD=.../libpinarena.so}: a Java
 * registration cache fed by the malloc shim's own hooks, found through LD_PRELOAD. The unmap is the JDK's
 * (a {@link MappedByteBuffer} released through its cleaner: libnio calls munmap through the PLT), and the
 * new pages at the same address come from a jnr mmap bound to libc by handle, which the hooks do not see:
 * so only the JDK's munmap, seen by the shim, can tell the cache. Exits non-zero on any failed check.
 */
public final class ShimPreloadChild
{
    static final int LEN = 1 << 20;

    private ShimPreloadChild()
    {
    }

    /**
     * @param args unused.
     * @throws Exception on any failure (the JVM then exits with status 1).
     */
    public static void main(final String[] args) throws Exception
    {
        final NativeInvalidationFeed feed = NativeInvalidationFeed.open(null);
        final String library = NativeInvalidationFeed.locate();
        check(library != null && library.endsWith("/libpinarena.so"), "feed library " + library);
        check(feed.source().startsWith("hooks (LD_PRELOAD)"), "source " + feed.source());

        final IoUringRegistrar registrar = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED));
        final RegistrationCache cache = new RegistrationCache(registrar, 1024, Long.MAX_VALUE, false, feed);
        final Path file = Files.createTempFile(Path.of("/dev/shm"), "pinarena-shim-feed", ".bin");
        try
        {
            final MappedByteBuffer mapped;
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
            {
                mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, LEN);     /* MAP_SHARED shmem: pinnable */
            }
            final long address = BufferUtil.address(mapped);
            fill(address, 'A');
            expect(cache, registrar, address, 'A', "first get (miss)");
            expect(cache, registrar, address, 'A', "second get (hit)");
            check(cache.misses() == 1 && cache.hits() == 1 && cache.invalidations() == 0,
                "before the unmap: " + counters(cache));

            invokeCleaner(mapped);                                          /* the JDK's munmap */
            check(feed.pending(), "the JDK's munmap was not posted to the sink");
            final int flags = Linux.MAP_PRIVATE | Linux.MAP_ANONYMOUS | Linux.MAP_FIXED;
            final long again = Linux.mmap(address, LEN, Linux.PROT_READ | Linux.PROT_WRITE, flags, -1, 0);
            check(again == address, "new pages at the same address");
            fill(address, 'B');

            expect(cache, registrar, address, 'B', "after the JDK unmapped and new pages came");
            check(cache.invalidations() == 1 && cache.misses() == 2, "after the unmap: " + counters(cache));
            System.out.println("OK source=" + feed.source() + " library=" + library + " " + counters(cache));
        }
        finally
        {
            cache.close();
            registrar.close();
            Files.deleteIfExists(file);
        }
    }

    static void expect(
        final RegistrationCache cache, final IoUringRegistrar registrar, final long address, final char want,
        final String what)
    {
        final CachedRegion r = cache.get(address, LEN, Access.LOCAL_WRITE);
        try
        {
            final byte[] sent = FixedBufferProbe.send(registrar, r.region(), address, LEN);
            int good = 0;
            for (final byte b : sent)
            {
                good += b == (byte)want ? 1 : 0;
            }
            check(good == LEN, what + ": the send carried " + good + " current '" + want + "' bytes of " + LEN);
        }
        finally
        {
            cache.put(r);
        }
    }

    static void fill(final long address, final char c)
    {
        new UnsafeBuffer(address, LEN).setMemory(0, LEN, (byte)c);
    }

    static String counters(final RegistrationCache cache)
    {
        return "gets=" + cache.gets() + " hits=" + cache.hits() + " misses=" + cache.misses() +
            " invalidations=" + cache.invalidations();
    }

    /** sun.misc.Unsafe#invokeCleaner by reflection: unmaps a mapped buffer now. */
    static void invokeCleaner(final ByteBuffer buffer) throws Exception
    {
        final Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
        final Field field = unsafeClass.getDeclaredField("theUnsafe");
        field.setAccessible(true);
        unsafeClass.getMethod("invokeCleaner", ByteBuffer.class).invoke(field.get(null), buffer);
    }

    static void check(final boolean ok, final String what)
    {
        if (!ok)
        {
            throw new AssertionError(what);
        }
    }
}

package dev.pinarena.registration.cache;

import dev.pinarena.registration.Access;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.os.Linux;
import dev.pinarena.registration.verbs.VerbsProbe;
import dev.pinarena.registration.verbs.VerbsRegistrar;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static dev.pinarena.registration.cache.RegistrationCacheTest.MIB;
import static dev.pinarena.registration.cache.RegistrationCacheTest.PAGE;
import static dev.pinarena.registration.cache.RegistrationCacheTest.fill;
import static dev.pinarena.registration.cache.RegistrationCacheTest.map;
import static dev.pinarena.registration.cache.RegistrationCacheTest.replace;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The registration cache over real verbs pins ({@link VerbsRegistrar} on {@code rxe0} in
 * {@code testbed/softroce}): a representative subset of the failure scenarios of
 * {@link RegistrationCacheTest}, each ending with an RDMA WRITE over an RC loopback queue pair from the cached
 * region (its lkey) into a registered destination, compared byte for byte with the source's current bytes
 * ({@link VerbsLoopback}). Unmaps go through the C hooks library's functions, which post to the cache's sink.
 * The full list runs in C ({@code bindings-c/tests/vm}).
 */
@Tag("softroce")
final class RegistrationCacheVerbsTest
{
    private static final int M_MMAP_THRESHOLD = -3;
    private static final int SEND_MAX = 4 * (int)MIB;

    private static String device;
    private static String hooksPath;

    private VerbsRegistrar registrar;
    private RegistrationCache cache;
    private NativeInvalidationFeed feed;
    private VerbsLoopback wire;

    @BeforeAll
    static void requireRdma() throws IOException
    {
        final VerbsProbe probe = VerbsProbe.probe();
        if (!probe.available())
        {
            if ("1".equals(System.getenv("PINARENA_REQUIRE_RDMA")))
            {
                fail("PINARENA_REQUIRE_RDMA=1 but " + probe);
            }
            assumeTrue(false, "no RDMA here (run in testbed/softroce): " + probe.reason());
        }
        device = probe.deviceNames().contains("rxe0") ? "rxe0" : probe.deviceNames().get(0);
        hooksPath = NativeBuild.file("libpinarena-hooks.so");
        VerbsLoopback.library();
    }

    void open(final int maxRegions, final long maxBytes, final boolean verify, final long budget) throws IOException
    {
        registrar = VerbsRegistrar.open(device, new PinBudget(budget));
        feed = NativeInvalidationFeed.open(hooksPath);
        cache = new RegistrationCache(registrar, maxRegions, maxBytes, verify, feed);
        wire = VerbsLoopback.open(registrar.protectionDomain(), SEND_MAX);
    }

    void open() throws IOException
    {
        open(1024, Long.MAX_VALUE, false, PinBudget.UNLIMITED);
    }

    @AfterEach
    void close()
    {
        if (wire != null)
        {
            wire.close();
        }
        if (cache != null)
        {
            cache.close();
        }
        if (registrar != null)
        {
            registrar.close();
        }
    }

    /** get, RDMA WRITE through the region, put: every delivered byte must equal the current byte. */
    void expect(final long address, final long length, final String what)
    {
        final CachedRegion r = cache.get(address, length, Access.LOCAL_WRITE);
        try
        {
            assertCurrent(r, address, length, what);
        }
        finally
        {
            cache.put(r);
        }
    }

    void assertCurrent(final CachedRegion r, final long address, final long length, final String what)
    {
        final int same = wire.send(address, (int)length, r.lkey());
        assertEquals(length, same, what + ": RDMA WRITE delivered " + same + " of " + length +
            " bytes equal to the buffer's current bytes (stale registration)");
    }

    /** glibc free + malloc at the same address; fills the new block with {@code 'B'}. 0 if glibc moved it. */
    static long freeAndMallocAgain(final long a, final long length)
    {
        Linux.libc().free(a);
        final long b = Linux.libc().malloc(length);
        if (b != a)
        {
            Linux.libc().free(b);
            return 0;
        }
        fill(b, length, 'B');
        return b;
    }

    /** The control: glibc's free unmaps with its internal __munmap, no hook sees it, the cache hits stale. */
    @Test
    void glibcFreeUnseenByTheHooksSendsOldBytes() throws IOException
    {
        open();
        Linux.libc().mallopt(M_MMAP_THRESHOLD, (int)MIB);
        for (int attempt = 0; attempt < 3; attempt++)
        {
            final long a = Linux.libc().malloc(SEND_MAX);
            fill(a, SEND_MAX, 'A');
            expect(a, SEND_MAX, "first");
            final long b = freeAndMallocAgain(a, SEND_MAX);
            if (b == 0)
            {
                cache.invalidate(a, SEND_MAX);
                continue;                                   // another JVM thread mapped there first
            }
            final CachedRegion r = cache.get(b, SEND_MAX, Access.LOCAL_WRITE);
            final int current = wire.send(b, SEND_MAX, r.lkey());
            final int old = wire.delivered(SEND_MAX, (byte)'A');
            cache.put(r);
            Linux.libc().free(b);
            assertEquals(0, current, "a stale hit sends none of the new bytes");
            assertEquals(SEND_MAX, old, "it sends the old frames' bytes");
            return;
        }
        fail("glibc never returned the same address");
    }

    @Test
    void verifyModeCatchesGlibcFreeAndMalloc() throws IOException
    {
        open(1024, Long.MAX_VALUE, true, PinBudget.UNLIMITED);
        Linux.libc().mallopt(M_MMAP_THRESHOLD, (int)MIB);
        for (int attempt = 0; attempt < 3; attempt++)
        {
            final long a = Linux.libc().malloc(SEND_MAX);
            fill(a, SEND_MAX, 'A');
            expect(a, SEND_MAX, "first");
            final long b = freeAndMallocAgain(a, SEND_MAX);
            if (b == 0)
            {
                cache.invalidate(a, SEND_MAX);
                continue;
            }
            assertThrows(StaleRegistrationException.class, () -> cache.get(b, SEND_MAX, Access.LOCAL_WRITE));
            expect(b, SEND_MAX, "after verify dropped the stale entry");
            assertEquals(1, cache.staleDetected());
            Linux.libc().free(b);
            return;
        }
        fail("glibc never returned the same address");
    }

    @Test
    void munmapInTheMiddleOfOverlappingInUseRegions() throws IOException
    {
        open();
        final long p = map(0, 12 * PAGE, 'A');
        final CachedRegion r1 = cache.get(p, 8 * PAGE, Access.LOCAL_WRITE);
        final CachedRegion r2 = cache.get(p + 4 * PAGE, 8 * PAGE, Access.LOCAL_WRITE);
        assertNotSame(r1, r2);
        assertEquals(0, feed.hooks().munmap(p + 5 * PAGE, 2 * PAGE));
        map(p + 5 * PAGE, 2 * PAGE, 'B');
        fill(p, 12 * PAGE, 'B');
        cache.flush();                                      // a cache call: drains
        assertEquals(2, cache.invalidations());
        assertEquals(0, wire.send(p + 5 * PAGE, (int)PAGE, r1.lkey()), "in-flight region: old page");
        assertEquals(PAGE, wire.delivered((int)PAGE, (byte)'A'), "in-flight region keeps sending its pinned page");
        assertCurrent(r2, p + 8 * PAGE, 4 * PAGE, "r2's untouched pages");
        cache.put(r1);
        cache.put(r2);
        assertEquals(0, cache.bytesPinned(), "deregistered on the last put");
        expect(p, 12 * PAGE, "after the hole was refilled");
    }

    @Test
    void madviseDontNeed() throws IOException
    {
        open();
        final long p = map(0, MIB, 'A');
        expect(p, MIB, "first");
        assertEquals(0, feed.hooks().madvise(p, MIB, 4 /* MADV_DONTNEED */));
        fill(p, MIB, 'Z');
        expect(p, MIB, "after DONTNEED");
        assertEquals(1, cache.invalidations());
    }

    @Test
    void countAndSizeLimitsProtectInUseRegions() throws IOException
    {
        open(4, 6 * PAGE, false, PinBudget.UNLIMITED);
        final long p = map(0, 32 * PAGE, 'A');
        final CachedRegion[] held = new CachedRegion[4];
        for (int i = 0; i < 4; i++)
        {
            held[i] = cache.get(p + i * 2 * PAGE, PAGE, Access.LOCAL_WRITE);
        }
        assertThrows(CacheFullException.class, () -> cache.get(p + 20 * PAGE, PAGE, Access.LOCAL_WRITE));
        cache.put(held[2]);
        cache.put(held[0]);
        cache.put(held[1]);
        expect(p + 20 * PAGE, PAGE, "5th evicts the least recently released (2)");
        assertEquals(1, cache.evictions());
        fill(p, 32 * PAGE, 'B');
        final long hits = cache.hits();
        expect(p, PAGE, "0 cached");
        expect(p + 2 * PAGE, PAGE, "1 cached");
        assertEquals(hits + 2, cache.hits());
        assertCurrent(held[3], p + 6 * PAGE, PAGE, "the held region still sends");
        expect(p + 24 * PAGE, 3 * PAGE, "3 pages within 6");
        assertTrue(cache.bytesPinned() <= 6 * PAGE);
        cache.put(held[3]);
    }

    @Test
    void pinBudgetExhaustionEvictsAndRetries() throws IOException
    {
        open(1024, Long.MAX_VALUE, false, 8 * MIB);
        final long p = map(0, 32 * MIB, 'A');
        for (int i = 0; i < 16; i++)
        {
            fill(p + i * 2 * MIB, 2 * MIB, (char)('a' + i));
            expect(p + i * 2 * MIB, 2 * MIB, "buffer " + i);
            assertTrue(registrar.pinnedBytes() <= 8 * MIB);
        }
        assertTrue(cache.evictions() >= 11, "evictions " + cache.evictions());
    }

    @Test
    void threadsRegisterWhileAnotherUnmaps() throws Exception
    {
        open();
        final int buffers = 8;
        final long base = map(0, buffers * 4 * PAGE, 'x');
        final Object[] locks = new Object[buffers];
        for (int i = 0; i < buffers; i++)
        {
            locks[i] = new Object();
        }
        final AtomicLong bad = new AtomicLong();
        final AtomicLong sends = new AtomicLong();
        final Thread unmapper = new Thread(() ->
        {
            int i = 0;
            while (!Thread.currentThread().isInterrupted())
            {
                final int b = (i++ * 5) % buffers;
                synchronized (locks[b])
                {
                    if ((i & 1) == 0)
                    {
                        // new pages in one MAP_FIXED through the hooks, never munmap + MAP_FIXED (the hole in
                        // between can be taken by a JVM thread's mapping, which MAP_FIXED would clobber)
                        replace(feed, base + b * 4 * PAGE, 4 * PAGE, 'u');
                    }
                    else
                    {
                        feed.hooks().madvise(base + b * 4 * PAGE, 4 * PAGE, 4 /* MADV_DONTNEED */);
                    }
                }
            }
        });
        final Thread[] workers = new Thread[2];
        for (int w = 0; w < workers.length; w++)
        {
            final int seed = w;
            workers[w] = new Thread(() ->
            {
                for (int it = 0; it < 300; it++)
                {
                    final int b = (it * 3 + seed) % buffers;
                    synchronized (locks[b])
                    {
                        final long a = base + b * 4 * PAGE;
                        fill(a, 4 * PAGE, (char)('a' + it % 26));
                        final CachedRegion r = cache.get(a, 4 * PAGE, Access.LOCAL_WRITE);
                        try
                        {
                            if (wire.send(a, (int)(4 * PAGE), r.lkey()) != 4 * PAGE)
                            {
                                bad.incrementAndGet();
                            }
                        }
                        finally
                        {
                            cache.put(r);
                        }
                        sends.incrementAndGet();
                    }
                }
            });
        }
        final AtomicReference<Throwable> unmapperFailure = new AtomicReference<>();
        unmapper.setUncaughtExceptionHandler((t, e) -> unmapperFailure.set(e));
        unmapper.start();
        for (final Thread w : workers)
        {
            w.start();
        }
        for (final Thread w : workers)
        {
            w.join();
        }
        unmapper.interrupt();
        unmapper.join();
        if (unmapperFailure.get() != null)
        {
            throw new AssertionError("the unmapper thread failed", unmapperFailure.get());
        }
        assertEquals(600, sends.get());
        assertEquals(0, bad.get(), "stale RDMA WRITEs");
        assertTrue(cache.invalidations() > 0 && cache.hits() > 0);
    }
}

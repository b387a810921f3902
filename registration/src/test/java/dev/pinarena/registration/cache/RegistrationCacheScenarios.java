package dev.pinarena.registration.cache;

import dev.pinarena.registration.Access;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.os.internal.Linux;
import dev.pinarena.registration.testkit.NativeBuild;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The registration cache against the known failure scenarios, written once against a small wire
 * ({@link CacheWire}: a registrar, and a send through a cached region compared with the source's current
 * bytes) and bound twice: {@link RegistrationCacheUringTest} (io_uring pins on the host) and
 * {@link RegistrationCacheVerbsTest} (verbs pins in the Soft-RoCE VM). Every check sends the region's bytes
 * through what the kernel pinned, not only counters. Unmaps go through the C hooks library
 * ({@code libpinarena-hooks.so}, loaded by path, so the same code a preloaded library runs), which posts to
 * this cache's sink. The C suite is the twin: {@code bindings-c/tests/regcache/}.
 */
abstract class RegistrationCacheScenarios
{
    static final long PAGE = 4096;
    static final long MIB = 1 << 20;
    static final int EEXIST = 17;
    static final int MADV_DONTNEED = 4;
    /** glibc mallopt parameter: blocks from 1 MiB up are mmapped, and unmapped by free. */
    static final int M_MMAP_THRESHOLD = -3;
    /** The glibc scenarios' block: above the threshold, within one verbs send. */
    static final int GLIBC_BLOCK = 4 * (int)MIB;
    static String hooksPath;

    CacheWire wire;
    RegistrationCache cache;
    NativeInvalidationFeed feed;

    @BeforeAll
    static void findHooks() throws IOException
    {
        hooksPath = NativeBuild.file("libpinarena-hooks.so");
    }

    /** @return the binding's wire, its registrar limited to {@code budget} pinned bytes. */
    abstract CacheWire openWire(long budget) throws IOException;

    void open(final int maxRegions, final long maxBytes, final boolean verify, final long budget) throws IOException
    {
        wire = openWire(budget);
        feed = NativeInvalidationFeed.open(hooksPath);
        cache = new RegistrationCache(wire.registrar(), maxRegions, maxBytes, verify, feed);
    }

    void open() throws IOException
    {
        open(1024, Long.MAX_VALUE, false, PinBudget.UNLIMITED);
    }

    @AfterEach
    void close()
    {
        if (cache != null)
        {
            cache.close();
        }
        if (wire != null)
        {
            wire.close();
        }
    }

    /**
     * An anonymous RW mapping, filled (raw syscall: no hook sees it). {@code at == 0}: anywhere. Otherwise new
     * pages in the HOLE at {@code at}, left by an unmap the test just made, with MAP_FIXED_NOREPLACE — never
     * MAP_FIXED: between the unmap and this call any other JVM thread (JIT, GC, jffi, malloc) may have got the
     * hole for a mapping of its own, which MAP_FIXED would silently replace (a SIGSEGV later, anywhere). Here
     * the test fails loudly instead. To give a range that is mapped now new pages, use {@link #replace}.
     */
    static long map(final long at, final long length, final char fill)
    {
        final int flags = Linux.MAP_PRIVATE | Linux.MAP_ANONYMOUS | (at != 0 ? Linux.MAP_FIXED_NOREPLACE : 0);
        final long a = Linux.mmap(at, length, Linux.PROT_READ | Linux.PROT_WRITE, flags, -1, 0);
        if (at != 0 && a != at)
        {
            final int errno = Linux.errno();
            if (a != Linux.MAP_FAILED)
            {
                Linux.libc().munmap(a, length);             // a kernel without NOREPLACE took it as a hint
            }
            fail(String.format("re-map of the hole at 0x%x (+%d): %s; another mapping took the hole after the " +
                "unmap (not clobbering it)", at, length, a == Linux.MAP_FAILED ? "errno " + errno +
                (errno == EEXIST ? " (EEXIST)" : "") : "placed elsewhere"));
        }
        assertTrue(a != Linux.MAP_FAILED, "mmap: errno " + Linux.errno());
        fill(a, length, fill);
        return a;
    }

    /**
     * New pages over {@code [at, at + length)}, which is mapped now, in ONE mmap(MAP_FIXED) through the hooks
     * library (which posts the range to the sinks, as for munmap): no hole in between for another thread to take.
     */
    static void replace(final NativeInvalidationFeed feed, final long at, final long length, final char fill)
    {
        final long a = feed.hooks().pa_memhooks_replace_anon(at, length);
        assertEquals(at, a, "mmap(MAP_FIXED) through the hooks");
        fill(at, length, fill);
    }

    static void fill(final long address, final long length, final char c)
    {
        new UnsafeBuffer(address, (int)length).setMemory(0, (int)length, (byte)c);
    }

    /** get, send through the region, put: every delivered byte must equal the current byte. */
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
        final int same = wire.send(r, address, (int)length);
        assertEquals(length, same, what + ": the send delivered " + same + " of " + length +
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

    /**
     * A glibc block of {@link #GLIBC_BLOCK} cached and sent, freed (glibc's internal munmap) and allocated
     * again at the same address, filled with {@code 'B'}; a few attempts, as another thread may map there.
     */
    long glibcFreeThenMallocAgain()
    {
        Linux.libc().mallopt(M_MMAP_THRESHOLD, (int)MIB);
        for (int attempt = 0; attempt < 3; attempt++)
        {
            final long a = Linux.libc().malloc(GLIBC_BLOCK);
            fill(a, GLIBC_BLOCK, 'A');
            expect(a, GLIBC_BLOCK, "first");
            final long b = freeAndMallocAgain(a, GLIBC_BLOCK);
            if (b != 0)
            {
                return b;
            }
            cache.invalidate(a, GLIBC_BLOCK);               // another JVM thread mapped there first
        }
        return fail("glibc never returned the same address");
    }

    @Test
    void hitContainAndMerge() throws IOException
    {
        open();
        final long p = map(0, 16 * PAGE, 'A');
        expect(p, 4 * PAGE, "miss");
        expect(p + PAGE + 10, 100, "contained hit");
        expect(p + 2 * PAGE, 4 * PAGE, "overlap: merged");
        assertEquals(1, cache.regions());
        assertEquals(6 * PAGE, cache.bytesPinned());
        expect(p, 6 * PAGE, "hit on the union");
        final CachedRegion held = cache.get(p, 6 * PAGE, Access.LOCAL_WRITE);
        final CachedRegion other = cache.get(p + 5 * PAGE, 4 * PAGE, Access.LOCAL_WRITE);
        assertNotSame(held, other, "in-use region not merged");
        assertCurrent(other, p + 5 * PAGE, 4 * PAGE, "the overlapping region");
        cache.put(other);
        cache.put(held);
        assertEquals(6, cache.gets());
        assertEquals(3, cache.hits());
        assertEquals(3, cache.misses());
    }

    @Test
    void freeThenMapAtTheSameAddress() throws IOException
    {
        open();
        final long p = map(0, MIB, 'A');
        expect(p, MIB, "first");
        assertEquals(0, feed.hooks().munmap(p, MIB));
        map(p, MIB, 'B');
        expect(p, MIB, "same address, new pages");
        assertEquals(2, cache.misses());
        assertEquals(1, cache.invalidations());
    }

    /** The control: glibc's free unmaps with its internal __munmap, no hook sees it, the cache hits stale. */
    @Test
    void glibcFreeUnseenByTheHooksSendsOldBytes() throws IOException
    {
        open();
        final long b = glibcFreeThenMallocAgain();
        final CachedRegion r = cache.get(b, GLIBC_BLOCK, Access.LOCAL_WRITE);
        final int current = wire.send(r, b, GLIBC_BLOCK);
        final int old = wire.delivered(GLIBC_BLOCK, (byte)'A');
        cache.put(r);
        Linux.libc().free(b);
        assertEquals(0, current, "a stale hit sends none of the new bytes");
        assertEquals(GLIBC_BLOCK, old, "it sends the old frames' bytes");
    }

    @Test
    void verifyModeCatchesGlibcFreeAndMalloc() throws IOException
    {
        open(1024, Long.MAX_VALUE, true, PinBudget.UNLIMITED);
        final long b = glibcFreeThenMallocAgain();
        assertThrows(StaleRegistrationException.class, () -> cache.get(b, GLIBC_BLOCK, Access.LOCAL_WRITE));
        expect(b, GLIBC_BLOCK, "after verify dropped the stale entry");
        assertEquals(1, cache.staleDetected());
        Linux.libc().free(b);
    }

    @Test
    void verifyModeReportsWhatNoHookSaw() throws IOException
    {
        open(1024, Long.MAX_VALUE, true, PinBudget.UNLIMITED);
        final long p = map(0, MIB, 'A');
        expect(p, MIB, "first");
        assertEquals(0, Linux.libc().munmap(p, MIB));       // bound to libc by handle: no hook sees it
        map(p, MIB, 'B');
        final StaleRegistrationException ex = assertThrows(
            StaleRegistrationException.class, () -> cache.get(p, MIB, Access.LOCAL_WRITE));
        assertEquals(p, ex.address());
        assertEquals(1, cache.staleDetected());
        expect(p, MIB, "after the stale entry was dropped");
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
        assertEquals(16 * PAGE, cache.bytesPinned(), "in use: still pinned");
        assertEquals(0, wire.send(r1, p + 5 * PAGE, (int)PAGE), "in-flight region: old page");
        assertEquals(PAGE, wire.delivered((int)PAGE, (byte)'A'), "in-flight region keeps sending its pinned page");
        assertCurrent(r2, p + 8 * PAGE, 4 * PAGE, "r2's untouched pages");
        cache.put(r1);
        cache.put(r2);
        assertEquals(0, cache.bytesPinned(), "deregistered on the last put");
        expect(p, 12 * PAGE, "after the hole was refilled");
    }

    /** An idle cache must not keep unmapped memory pinned until its next get: put drains what was queued. */
    @Test
    void putDrainsPendingInvalidations() throws IOException
    {
        open();
        final long p = map(0, 3 * MIB, 'A');
        final long q = p + 2 * MIB;                         // not adjacent to p: the two regions never merge
        expect(p, MIB, "p cached, idle");
        final CachedRegion held = cache.get(q, MIB, Access.LOCAL_WRITE);
        assertEquals(2 * MIB, wire.registrar().pinnedBytes());
        assertEquals(0, feed.hooks().munmap(p, MIB));       // queued by the hook, not yet drained
        cache.put(held);                                    // the cache's only call from here on
        assertEquals(1, cache.invalidations(), "put drained the unmap");
        assertEquals(1, cache.regions());
        assertEquals(MIB, wire.registrar().pinnedBytes(), "the unmapped region's frames are unpinned");
    }

    @Test
    void madviseDontNeed() throws IOException
    {
        open();
        final long p = map(0, MIB, 'A');
        expect(p, MIB, "first");
        assertEquals(0, feed.hooks().madvise(p, MIB, MADV_DONTNEED));
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
            assertTrue(wire.registrar().pinnedBytes() <= 8 * MIB);
        }
        assertTrue(cache.evictions() >= 11, "evictions " + cache.evictions());   // 11 when a merge attempt freed one
    }

    @Test
    void fortyThousandUnmapCyclesKeepTheQueueBounded() throws IOException
    {
        open();
        final long p = map(0, MIB, 'A');
        expect(p, MIB, "first");
        int maxQueued = 0;
        for (int i = 0; i < 40_000; i++)
        {
            final long off = (i * 7919L % 256) * PAGE;
            // One MAP_FIXED through the hooks (the kernel unmaps the old page; the hook posts the range as
            // munmap's does), not munmap + MAP_FIXED: 40 000 holes are 40 000 chances for a JVM thread's mmap
            // to land in one and be clobbered. munmap's own invalidation: the single-shot tests above.
            replace(feed, p + off, PAGE, 'A');
            if ((i & 255) == 0)
            {
                maxQueued = Math.max(maxQueued, cache.queuedRanges());
            }
        }
        assertTrue(maxQueued <= NativeInvalidationFeed.DRAIN_MAX, "queued " + maxQueued);
        fill(p, MIB, 'N');
        expect(p, MIB, "after the cycles");
        assertEquals(0, cache.queuedRanges());
    }

    @Test
    void threadsRegisterWhileAnotherUnmaps() throws Exception
    {
        open();
        final int buffers = 8;
        final int iterations = wire.threadIterations();
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
                        feed.hooks().madvise(base + b * 4 * PAGE, 4 * PAGE, MADV_DONTNEED);
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
                for (int it = 0; it < iterations; it++)
                {
                    final int b = (it * 3 + seed) % buffers;
                    synchronized (locks[b])
                    {
                        final long a = base + b * 4 * PAGE;
                        fill(a, 4 * PAGE, (char)('a' + it % 26));
                        final CachedRegion r = cache.get(a, 4 * PAGE, Access.LOCAL_WRITE);
                        try
                        {
                            if (wire.send(r, a, (int)(4 * PAGE)) != 4 * PAGE)
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
        assertEquals(2L * iterations, sends.get());
        assertEquals(0, bad.get(), "stale sends");
        assertTrue(cache.invalidations() > 0 && cache.hits() > 0);
    }

    @Test
    void sourceIsReported() throws IOException
    {
        open();
        assertTrue(cache.invalidationSource().startsWith("hooks"), cache.invalidationSource());
        final long p = map(0, PAGE, 'A');
        final CachedRegion a = cache.get(p, PAGE, Access.LOCAL_WRITE);
        final CachedRegion b = cache.get(p, PAGE, Access.LOCAL_WRITE);
        assertSame(a, b);
        cache.put(a);
        cache.put(b);
    }
}

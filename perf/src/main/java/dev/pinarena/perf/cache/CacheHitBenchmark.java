package dev.pinarena.perf.cache;

import dev.pinarena.registration.AgronaAccess;
import dev.pinarena.registration.Access;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.cache.CachedRegion;
import dev.pinarena.registration.cache.RegistrationCache;
import dev.pinarena.registration.os.internal.Linux;
import dev.pinarena.registration.uring.IoUringRegistrar;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * {@link RegistrationCache} cost on one thread, io_uring registrar, no invalidation feed, 64 other regions
 * in the index: {@code hit} (get of a contained, unaligned range + put), {@code miss} (get that registers,
 * then an invalidation that deregisters) and {@code rawRegistration} (register + deregister without the
 * cache), per buffer size.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {AgronaAccess.EXPORTS_OPTION, AgronaAccess.EXPORTS_VALUE})
public class CacheHitBenchmark
{
    private static final long MAPPING = 64L << 20;

    /** Region size in bytes. */
    @Param({"4096", "65536", "1048576"})
    public int size;

    private IoUringRegistrar registrar;
    private RegistrationCache cache;
    private long buffer;
    private int next;

    /** Maps and populates the memory, fills the index, registers the hit region. */
    @Setup
    public void open()
    {
        registrar = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED));
        cache = new RegistrationCache(registrar, 1024, Long.MAX_VALUE, false, null);
        buffer = Linux.mmap(0, MAPPING, Linux.PROT_READ | Linux.PROT_WRITE,
            Linux.MAP_PRIVATE | Linux.MAP_ANONYMOUS | Linux.MAP_POPULATE, -1, 0);
        if (buffer == Linux.MAP_FAILED)
        {
            throw new IllegalStateException("mmap of " + MAPPING + " bytes failed");
        }
        for (int i = 0; i < 64; i++)
        {
            cache.put(cache.get(buffer + (32L << 20) + i * 8192L, 4096, Access.LOCAL_WRITE));
        }
        cache.put(cache.get(buffer, size, Access.LOCAL_WRITE));
    }

    /** Deregisters and unmaps. */
    @TearDown
    public void close()
    {
        cache.close();
        registrar.close();
        Linux.libc().munmap(buffer, MAPPING);
    }

    /** @return the lkey, so the work is not dead code. */
    @Benchmark
    public int hit()
    {
        final CachedRegion r = cache.get(buffer + (next++ & 7) * 64L, size - 512, Access.LOCAL_WRITE);
        final int lkey = r.lkey();
        cache.put(r);
        return lkey;
    }

    /** @return the lkey, so the work is not dead code. */
    @Benchmark
    public int miss()
    {
        final long at = buffer + (16L << 20);
        final CachedRegion r = cache.get(at, size, Access.LOCAL_WRITE);
        final int lkey = r.lkey();
        cache.put(r);
        cache.invalidate(at, size);
        return lkey;
    }

    /** @return the lkey, so the work is not dead code. */
    @Benchmark
    public int rawRegistration()
    {
        final Region r = registrar.register(buffer + (16L << 20), size, Access.LOCAL_WRITE);
        final int lkey = r.lkey();
        registrar.deregister(r);
        return lkey;
    }
}

package dev.pinarena.perf;

import dev.pinarena.registration.AgronaAccess;
import dev.pinarena.registration.Access;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.cache.CachedRegion;
import dev.pinarena.registration.cache.RegistrationCache;
import dev.pinarena.registration.os.ChunkMapper;
import dev.pinarena.registration.os.MappedChunk;
import dev.pinarena.registration.os.PageBacking;
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

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The memory handling one send needs before the work request can be posted — a buffer and its lkey — with
 * each strategy an RDMA stack can take:
 * <ul>
 *   <li>{@code registerPerSend}: the buffer exists; register its pages, send, deregister.</li>
 *   <li>{@code registrationCacheHit}: the buffer exists and its registration is cached (the best case of an
 *   MPI-style cache): look it up, send, release the use reference.</li>
 *   <li>{@code arenaBuffer}: take a buffer from the pinned arena, read its lkey, free it: nothing to
 *   register, ever.</li>
 * </ul>
 * All three use the same io_uring registrar (this host's real long-term pin).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {AgronaAccess.EXPORTS_OPTION, AgronaAccess.EXPORTS_VALUE})
public class SendMemoryBenchmark
{
    /** Message size in bytes. */
    @Param({"4096", "65536", "1048576"})
    public int size;

    private Contenders contenders;
    private MappedChunk userMemory;
    private RegistrationCache cache;

    /** Opens the contenders, maps the application's own buffer and warms the cache with it. */
    @Setup
    public void open()
    {
        contenders = new Contenders();
        userMemory = ChunkMapper.map(4L << 20, List.of(PageBacking.SMALL));
        cache = new RegistrationCache(contenders.registrar, 1024, Long.MAX_VALUE, false, null);
        cache.put(cache.get(userMemory.address(), size, Access.LOCAL_WRITE));
    }

    /** Releases everything. */
    @TearDown
    public void close()
    {
        cache.close();
        userMemory.unmap();
        contenders.close();
    }

    /** @return the key a work request would carry. */
    @Benchmark
    public int registerPerSend()
    {
        final Region region = contenders.registrar.register(userMemory.address(), size, Access.LOCAL_WRITE);
        final int lkey = region.lkey();
        contenders.registrar.deregister(region);
        return lkey;
    }

    /** @return the key a work request would carry. */
    @Benchmark
    public int registrationCacheHit()
    {
        final CachedRegion region = cache.get(userMemory.address(), size, Access.LOCAL_WRITE);
        final int lkey = region.lkey();
        cache.put(region);
        return lkey;
    }

    /** @return the key a work request would carry. */
    @Benchmark
    public int arenaBuffer()
    {
        final long address = contenders.arena.allocate(size);
        final int lkey = contenders.arena.lkey(address);
        contenders.arena.free(address);
        return lkey;
    }
}

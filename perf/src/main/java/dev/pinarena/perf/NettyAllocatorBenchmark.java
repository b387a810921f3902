package dev.pinarena.perf;

import dev.pinarena.registration.AgronaAccess;
import dev.pinarena.allocator.BufferScope;
import dev.pinarena.netty.PinnedByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
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
 * Netty's own path on one thread: {@code directBuffer(size)}, write a long, {@code release()}; the arena's
 * {@link PinnedByteBufAllocator} against Netty's {@code PooledByteBufAllocator}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {AgronaAccess.EXPORTS_OPTION, AgronaAccess.EXPORTS_VALUE})
public class NettyAllocatorBenchmark
{
    /** Buffer size in bytes. */
    @Param({"64", "4096", "65536"})
    public int size;

    private Contenders contenders;
    private ByteBufAllocator pinned;

    /** Opens the contenders. */
    @Setup
    public void open()
    {
        contenders = new Contenders();
        pinned = new PinnedByteBufAllocator(contenders.arena, BufferScope.LOCAL);
    }

    /** Releases everything. */
    @TearDown
    public void close()
    {
        contenders.close();
    }

    /** @return the long read back, so the work is not dead code. */
    @Benchmark
    public long pinnedAllocator()
    {
        return cycle(pinned);
    }

    /** @return the long read back, so the work is not dead code. */
    @Benchmark
    public long nettyPooled()
    {
        return cycle(contenders.netty);
    }

    private long cycle(final ByteBufAllocator alloc)
    {
        final ByteBuf buffer = alloc.directBuffer(size);
        buffer.writeLong(size);
        final long value = buffer.readLong();
        buffer.release();
        return value;
    }
}

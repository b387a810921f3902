package dev.pinarena.perf;

import dev.pinarena.registration.AgronaAccess;
import dev.pinarena.registration.Region;
import io.netty.buffer.ByteBuf;
import org.agrona.BufferUtil;
import org.agrona.UnsafeApi;
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

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * Allocate + free of one buffer on one thread: the pinned arena against {@code ByteBuffer.allocateDirect}
 * (freed through its cleaner at once), Netty's pooled direct buffers, and malloc + register per buffer.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {AgronaAccess.EXPORTS_OPTION, AgronaAccess.EXPORTS_VALUE})
public class AllocateFreeBenchmark
{
    /** Buffer size in bytes. */
    @Param({"64", "4096", "65536", "1048576"})
    public int size;

    private Contenders contenders;

    /** Opens the contenders. */
    @Setup
    public void open()
    {
        contenders = new Contenders();
    }

    /** Releases everything. */
    @TearDown
    public void close()
    {
        contenders.close();
    }

    /** @return the address, so the work is not dead code. */
    @Benchmark
    public long pinnedArena()
    {
        final long address = contenders.arena.allocate(size);
        contenders.arena.free(address);
        return address;
    }

    /**
     * The handle form: address plus generation, checked on free (its cost is the difference to
     * {@link #pinnedArena()}; {@link dev.pinarena.perf.suite.PairedForks} measures it on a busy machine).
     *
     * @return the handle, so the work is not dead code.
     */
    @Benchmark
    public long pinnedArenaHandle()
    {
        final long handle = contenders.arena.allocateHandle(size);
        contenders.arena.freeHandle(handle);
        return handle;
    }

    /** @return the buffer, so the work is not dead code. */
    @Benchmark
    public ByteBuffer allocateDirect()
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(size);
        BufferUtil.free(buffer);
        return buffer;
    }

    /** @return the buffer, so the work is not dead code. */
    @Benchmark
    public ByteBuf nettyPooled()
    {
        final ByteBuf buffer = contenders.netty.directBuffer(size, size);
        buffer.release();
        return buffer;
    }

    /** @return the key, so the work is not dead code. */
    @Benchmark
    public int registerEach()
    {
        final long raw = UnsafeApi.allocateMemory(size + Contenders.PAGE);
        final Region region = contenders.registerEach(raw, size);
        contenders.registrar.deregister(region);
        UnsafeApi.freeMemory(raw);
        return region.lkey();
    }
}

package dev.pinarena.perf;

import dev.pinarena.registration.AgronaAccess;
import io.netty.buffer.ByteBuf;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * A batch on one thread: {@value #BATCH} buffers allocated, then all freed, as a sender that fills a window
 * of messages does. One op = one buffer allocated and freed (the score is per buffer, not per batch).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {AgronaAccess.EXPORTS_OPTION, AgronaAccess.EXPORTS_VALUE})
public class BatchBenchmark
{
    /** Buffers per batch. */
    public static final int BATCH = 256;

    /** Buffer size in bytes. */
    @Param({"64", "4096", "65536"})
    public int size;

    private Contenders contenders;
    private final long[] addresses = new long[BATCH];
    private final ByteBuf[] nettyBuffers = new ByteBuf[BATCH];

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

    /** @return the last address, so the work is not dead code. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long pinnedArena()
    {
        for (int i = 0; i < BATCH; i++)
        {
            addresses[i] = contenders.arena.allocate(size);
        }
        for (int i = 0; i < BATCH; i++)
        {
            contenders.arena.free(addresses[i]);
        }
        return addresses[BATCH - 1];
    }

    /** @return the last buffer's capacity, so the work is not dead code. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int nettyPooled()
    {
        for (int i = 0; i < BATCH; i++)
        {
            nettyBuffers[i] = contenders.netty.directBuffer(size, size);
        }
        int capacity = 0;
        for (int i = 0; i < BATCH; i++)
        {
            capacity += nettyBuffers[i].capacity();
            nettyBuffers[i].release();
            nettyBuffers[i] = null;
        }
        return capacity;
    }
}

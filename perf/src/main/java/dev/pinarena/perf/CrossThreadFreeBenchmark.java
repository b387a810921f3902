package dev.pinarena.perf;

import dev.pinarena.registration.AgronaAccess;
import dev.pinarena.registration.Region;
import io.netty.buffer.ByteBuf;
import org.agrona.BufferUtil;
import org.agrona.UnsafeApi;
import org.jctools.queues.SpscArrayQueue;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Two threads, each allocating a buffer, handing it to the other through an SPSC ring, and freeing the
 * buffer the other handed over: almost every free is a cross-thread free. When a ring is full the buffer is
 * freed locally instead (the benchmark never blocks). One op = one allocate and one free on each thread.
 * Each thread runs on a CPU of its own ({@link CpuAffinity}).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Threads(2)
@Fork(value = 1, jvmArgsAppend = {AgronaAccess.EXPORTS_OPTION, AgronaAccess.EXPORTS_VALUE})
public class CrossThreadFreeBenchmark
{
    /** Buffers in flight per direction stay under this many bytes (and 1024 buffers). */
    static final long IN_FLIGHT_BYTES = 32L << 20;

    /** Shared by both threads. */
    @State(Scope.Benchmark)
    public static class Shared
    {
        /** Buffer size in bytes. */
        @Param({"64", "4096", "65536", "1048576"})
        public int size;

        Contenders contenders;
        final AtomicInteger sides = new AtomicInteger();
        final LongHandoff[] addresses = new LongHandoff[2];
        final LongHandoff[] rawAddresses = new LongHandoff[2];
        @SuppressWarnings("unchecked")
        final SpscArrayQueue<ByteBuffer>[] byteBuffers = new SpscArrayQueue[2];
        @SuppressWarnings("unchecked")
        final SpscArrayQueue<ByteBuf>[] nettyBuffers = new SpscArrayQueue[2];
        @SuppressWarnings("unchecked")
        final SpscArrayQueue<Region>[] regions = new SpscArrayQueue[2];

        /** Opens the contenders and the rings. */
        @Setup
        public void open()
        {
            contenders = new Contenders();
            final int capacity = Integer.highestOneBit((int)Math.max(4, Math.min(1024, IN_FLIGHT_BYTES / size)));
            for (int i = 0; i < 2; i++)
            {
                addresses[i] = new LongHandoff(capacity);
                rawAddresses[i] = new LongHandoff(capacity);
                byteBuffers[i] = new SpscArrayQueue<>(capacity);
                nettyBuffers[i] = new SpscArrayQueue<>(capacity);
                regions[i] = new SpscArrayQueue<>(capacity);
            }
        }

        /** Frees whatever is still in the rings, then releases everything. */
        @TearDown
        public void close()
        {
            for (int i = 0; i < 2; i++)
            {
                long address;
                while ((address = addresses[i].poll()) != 0)
                {
                    contenders.arena.free(address);
                }
                ByteBuffer buffer;
                while ((buffer = byteBuffers[i].poll()) != null)
                {
                    BufferUtil.free(buffer);
                }
                ByteBuf nettyBuffer;
                while ((nettyBuffer = nettyBuffers[i].poll()) != null)
                {
                    nettyBuffer.release();
                }
                Region region;
                while ((region = regions[i].poll()) != null)
                {
                    contenders.registrar.deregister(region);
                    UnsafeApi.freeMemory(rawAddresses[i].poll());
                }
            }
            contenders.close();
        }
    }

    /** Which ring a thread produces into (its own) and consumes from (the other's). */
    @State(Scope.Thread)
    public static class Side
    {
        int mine;
        int theirs;

        /**
         * Numbers the side and pins this benchmark thread to a CPU of its own.
         *
         * @param shared the shared state that numbers the sides.
         */
        @Setup
        public void pick(final Shared shared)
        {
            mine = shared.sides.getAndIncrement() & 1;
            theirs = 1 - mine;
            CpuAffinity.pinCallingThread(mine);
        }
    }

    /** @return the address, so the work is not dead code. */
    @Benchmark
    public long pinnedArena(final Shared shared, final Side side)
    {
        final long address = shared.contenders.arena.allocate(shared.size);
        if (!shared.addresses[side.mine].offer(address))
        {
            shared.contenders.arena.free(address);
        }
        final long other = shared.addresses[side.theirs].poll();
        if (other != 0)
        {
            shared.contenders.arena.free(other);
        }
        return address;
    }

    /** @return the buffer, so the work is not dead code. */
    @Benchmark
    public ByteBuffer allocateDirect(final Shared shared, final Side side)
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(shared.size);
        if (!shared.byteBuffers[side.mine].offer(buffer))
        {
            BufferUtil.free(buffer);
        }
        final ByteBuffer other = shared.byteBuffers[side.theirs].poll();
        if (other != null)
        {
            BufferUtil.free(other);
        }
        return buffer;
    }

    /** @return the buffer, so the work is not dead code. */
    @Benchmark
    public ByteBuf nettyPooled(final Shared shared, final Side side)
    {
        final ByteBuf buffer = shared.contenders.netty.directBuffer(shared.size, shared.size);
        if (!shared.nettyBuffers[side.mine].offer(buffer))
        {
            buffer.release();
        }
        final ByteBuf other = shared.nettyBuffers[side.theirs].poll();
        if (other != null)
        {
            other.release();
        }
        return buffer;
    }

    /** @return the region, so the work is not dead code. */
    @Benchmark
    public Region registerEach(final Shared shared, final Side side)
    {
        final long raw = UnsafeApi.allocateMemory(shared.size + Contenders.PAGE);
        final Region region = shared.contenders.registerEach(raw, shared.size);
        // The raw address goes first and the region second; the consumer takes the region first. So a region
        // seen means its raw address is already published, and the region ring never holds more than the
        // raw ring: when the raw offer succeeds the region offer does too.
        if (shared.rawAddresses[side.mine].offer(raw))
        {
            shared.regions[side.mine].offer(region);
        }
        else
        {
            shared.contenders.registrar.deregister(region);
            UnsafeApi.freeMemory(raw);
        }
        final Region other = shared.regions[side.theirs].poll();
        if (other != null)
        {
            shared.contenders.registrar.deregister(other);
            UnsafeApi.freeMemory(shared.rawAddresses[side.theirs].poll());
        }
        return region;
    }
}

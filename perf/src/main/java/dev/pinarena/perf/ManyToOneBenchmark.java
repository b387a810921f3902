package dev.pinarena.perf;

import dev.pinarena.registration.AgronaAccess;
import io.netty.buffer.ByteBuf;
import org.jctools.queues.SpscArrayQueue;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
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
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Many producers, one consumer: {@value #PRODUCERS} threads allocate buffers and hand them to one thread
 * that frees them all (every free is a cross-thread free, into two owners' slabs). Each producer has an SPSC
 * ring of its own; the consumer polls them in turn. A producer whose ring is full frees locally, so nobody
 * blocks. The score is per operation of either side (a producer's allocate, a consumer's poll-and-free).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {AgronaAccess.EXPORTS_OPTION, AgronaAccess.EXPORTS_VALUE})
public class ManyToOneBenchmark
{
    /** Producer threads. */
    public static final int PRODUCERS = 2;

    /** Shared by the group. */
    @State(Scope.Group)
    public static class Shared
    {
        /** Buffer size in bytes. */
        @Param({"64", "4096", "65536"})
        public int size;

        Contenders contenders;
        final AtomicInteger producers = new AtomicInteger();
        final LongHandoff[] addresses = new LongHandoff[PRODUCERS];
        @SuppressWarnings("unchecked")
        final SpscArrayQueue<ByteBuf>[] nettyBuffers = new SpscArrayQueue[PRODUCERS];

        /** Opens the contenders and the rings. */
        @Setup
        public void open()
        {
            contenders = new Contenders();
            final int capacity = Integer.highestOneBit(
                (int)Math.max(4, Math.min(1024, CrossThreadFreeBenchmark.IN_FLIGHT_BYTES / size)));
            for (int i = 0; i < PRODUCERS; i++)
            {
                addresses[i] = new LongHandoff(capacity);
                nettyBuffers[i] = new SpscArrayQueue<>(capacity);
            }
        }

        /** Frees whatever is still in the rings, then releases everything. */
        @TearDown
        public void close()
        {
            for (int i = 0; i < PRODUCERS; i++)
            {
                long address;
                while ((address = addresses[i].poll()) != 0)
                {
                    contenders.arena.free(address);
                }
                ByteBuf buffer;
                while ((buffer = nettyBuffers[i].poll()) != null)
                {
                    buffer.release();
                }
            }
            contenders.close();
        }
    }

    /** A producer's ring. */
    @State(Scope.Thread)
    public static class Producer
    {
        int ring;

        /**
         * @param shared numbers the producers.
         */
        @Setup
        public void pick(final Shared shared)
        {
            ring = shared.producers.getAndIncrement() % PRODUCERS;
        }
    }

    /** The consumer's turn. */
    @State(Scope.Thread)
    public static class Consumer
    {
        int next;
    }

    /** @return the address, so the work is not dead code. */
    @Benchmark
    @Group("pinnedArena")
    @GroupThreads(PRODUCERS)
    public long pinnedArenaProduce(final Shared shared, final Producer producer)
    {
        final long address = shared.contenders.arena.allocate(shared.size);
        if (!shared.addresses[producer.ring].offer(address))
        {
            shared.contenders.arena.free(address);
        }
        return address;
    }

    /** @return the address freed, or 0. */
    @Benchmark
    @Group("pinnedArena")
    @GroupThreads(1)
    public long pinnedArenaConsume(final Shared shared, final Consumer consumer)
    {
        consumer.next = (consumer.next + 1) % PRODUCERS;
        final long address = shared.addresses[consumer.next].poll();
        if (address != 0)
        {
            shared.contenders.arena.free(address);
        }
        return address;
    }

    /** @return the buffer, so the work is not dead code. */
    @Benchmark
    @Group("nettyPooled")
    @GroupThreads(PRODUCERS)
    public ByteBuf nettyPooledProduce(final Shared shared, final Producer producer)
    {
        final ByteBuf buffer = shared.contenders.netty.directBuffer(shared.size, shared.size);
        if (!shared.nettyBuffers[producer.ring].offer(buffer))
        {
            buffer.release();
        }
        return buffer;
    }

    /** @return the buffer freed, or null. */
    @Benchmark
    @Group("nettyPooled")
    @GroupThreads(1)
    public ByteBuf nettyPooledConsume(final Shared shared, final Consumer consumer)
    {
        consumer.next = (consumer.next + 1) % PRODUCERS;
        final ByteBuf buffer = shared.nettyBuffers[consumer.next].poll();
        if (buffer != null)
        {
            buffer.release();
        }
        return buffer;
    }
}

package dev.pinarena.netty;

import dev.pinarena.allocator.ArenaConfig;
import dev.pinarena.allocator.BufferScope;
import dev.pinarena.allocator.NoRemoteKeyException;
import dev.pinarena.allocator.PinnedArena;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.uring.IoUringRegistrar;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The allocator in real Netty pipelines: its direct buffers are arena memory with keys, release frees them to
 * the arena, and a TCP echo on loopback moves every byte through arena buffers and leaves none behind.
 */
class PinnedByteBufAllocatorTest
{
    private IoUringRegistrar registrar;
    private PinnedArena arena;
    private PinnedByteBufAllocator alloc;

    @BeforeEach
    void open()
    {
        registrar = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED));
        arena = PinnedArena.open(registrar, ArenaConfig.defaults().withChunkSize(4L << 20).withCapBytes(128L << 20));
        alloc = new PinnedByteBufAllocator(arena, BufferScope.REMOTE);
    }

    @AfterEach
    void close()
    {
        arena.close(true);
        registrar.close();
    }

    @Test
    void theMetricReportsDirectHeapAndPinnedMemoryAsBuffersComeAndGo()
    {
        final ByteBufAllocatorMetric metric = ((ByteBufAllocatorMetricProvider)alloc).metric();
        assertEquals(0, metric.usedDirectMemory());
        assertEquals(0, metric.usedHeapMemory());

        final ByteBuf direct = alloc.directBuffer(1024, 8192);
        assertEquals(arena.usableSize(direct.memoryAddress()), metric.usedDirectMemory());
        direct.capacity(4096); // past the block: moves, the old block is freed
        assertEquals(arena.usableSize(direct.memoryAddress()), metric.usedDirectMemory(), direct.toString());
        final long pinned = ((PinnedAllocatorMetric)metric).pinnedMemory();
        assertTrue(pinned >= 4L << 20, "at least the chunk is pinned: " + pinned);
        assertTrue(direct.release());
        assertEquals(0, metric.usedDirectMemory());
        assertEquals(pinned, ((PinnedAllocatorMetric)metric).pinnedMemory(), "freed memory stays pinned");

        final ByteBuf heap = alloc.heapBuffer(1024, 8192);
        assertEquals(1024, metric.usedHeapMemory());
        heap.capacity(2048);
        assertEquals(2048, metric.usedHeapMemory());
        assertTrue(heap.release());
        assertEquals(0, metric.usedHeapMemory());
        assertEquals(0, metric.usedDirectMemory());
    }

    @Test
    void ensureWritableGrowsInPlaceUpToTheBlockAndMovesBeyondIt()
    {
        final ByteBuf buffer = alloc.directBuffer(150);
        final long address = buffer.memoryAddress();
        final long block = arena.usableSize(address);
        assertTrue(block > 150 && block < 256, "a 150-byte buffer sits in a block between 150 and 256 bytes: " + block);
        for (int i = 0; i < 100; i++)
        {
            buffer.writeByte(i);
        }
        assertEquals(block - 100, buffer.maxFastWritableBytes(), "writable without moving: up to the block's end");

        buffer.ensureWritable((int)(block - 100)); // exactly to the block's end
        assertEquals(address, buffer.memoryAddress(), "grown in place, not moved");
        assertEquals(block, buffer.capacity());
        for (int i = 0; i < 100; i++)
        {
            assertEquals((byte)i, buffer.getByte(i), "bytes kept at " + i);
        }
        final long inUse = arena.stats().bytesInUse();

        buffer.writerIndex((int)block);
        assertEquals(0, buffer.maxFastWritableBytes());
        buffer.ensureWritable(1); // past the block: moves
        assertFalse(address == buffer.memoryAddress(), "beyond the block the buffer moves");
        assertEquals((byte)99, buffer.getByte(99));
        assertTrue(buffer.release());
        assertEquals(0, arena.stats().bytesInUse(), "the block it grew in and the one it moved to are both freed");
        assertTrue(inUse > 0);
    }

    @Test
    void directBuffersAreArenaMemoryWithKeysAndReleaseFreesThem()
    {
        final ByteBuf buffer = alloc.directBuffer(1000);
        assertTrue(buffer.isDirect());
        assertEquals(BufferScope.REMOTE, arena.scopeOf(buffer.memoryAddress()));
        assertEquals(arena.lkey(buffer.memoryAddress()), alloc.lkey(buffer));
        // io_uring pins but makes no keys for peers: the remote scope says so instead of handing out a dead key
        assertThrows(NoRemoteKeyException.class, () -> alloc.rkey(buffer));
        assertEquals(alloc.lkey(buffer), alloc.lkey(buffer.slice(100, 10)), "a slice is the same registration");
        buffer.writeLong(0x0102030405060708L).writeInt(9);
        assertEquals(0x0102030405060708L, buffer.readLong());
        assertEquals(1, arena.stats().buffersInUse());

        buffer.retain();
        assertFalse(buffer.release(), "still referenced");
        assertEquals(1, arena.stats().buffersInUse());
        assertTrue(buffer.release());
        assertEquals(0, arena.stats().buffersInUse(), "release to 0 freed the arena buffer");
        assertThrows(Exception.class, () -> buffer.getByte(0), "a released buffer refuses access");
    }

    @Test
    void aReleasedBufferIsRecycledAndRefusesEveryUseWhileItWaits()
    {
        final ByteBuf first = alloc.directBuffer(4096, 8192);
        final long firstAddress = first.memoryAddress();
        first.writerIndex(100).readerIndex(10).markReaderIndex();
        assertTrue(first.release());
        assertEquals(0, arena.stats().buffersInUse(), "the memory went back to the arena on release");
        assertEquals(0, first.refCnt());
        assertThrows(IllegalReferenceCountException.class, () -> first.getByte(0));
        assertThrows(IllegalReferenceCountException.class, () -> first.writeLong(1));
        assertThrows(IllegalReferenceCountException.class, first::memoryAddress);
        assertThrows(IllegalReferenceCountException.class, first::retain);
        assertThrows(IllegalReferenceCountException.class, first::release);
        assertThrows(IllegalReferenceCountException.class, () -> first.capacity(10));
        assertEquals(0, arena.stats().buffersInUse(), "a refused release freed nothing");

        final ByteBuf second = alloc.directBuffer(64, 1000);
        assertSame(pinned(first), pinned(second), "the object was recycled");
        assertEquals(1, second.refCnt());
        assertEquals(0, second.readerIndex());
        assertEquals(0, second.writerIndex());
        assertEquals(64, second.capacity());
        assertEquals(1000, second.maxCapacity());
        second.writerIndex(20);
        second.resetReaderIndex();
        assertEquals(0, second.readerIndex(), "the old life's mark is gone");
        assertEquals(BufferScope.REMOTE, arena.scopeOf(second.memoryAddress()));
        assertEquals(1, arena.stats().buffersInUse());
        assertTrue(firstAddress != 0);
        assertTrue(second.release());
        assertEquals(0, arena.stats().buffersInUse());
    }

    @Test
    void buffersReleasedOnAnotherThreadAreFreedThereAndServeTheirOwnerAgain() throws Exception
    {
        final java.util.concurrent.BlockingQueue<ByteBuf> handoff = new java.util.concurrent.ArrayBlockingQueue<>(64);
        final Thread consumer = new Thread(() ->
        {
            try
            {
                for (int i = 0; i < 20_000; i++)
                {
                    final ByteBuf in = handoff.take();
                    if (in.getInt(0) != i)
                    {
                        throw new AssertionError("message " + i + " read " + in.getInt(0));
                    }
                    in.release();
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }, "consumer");
        final java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        consumer.setUncaughtExceptionHandler((t, ex) -> failure.set(ex));
        consumer.start();
        for (int i = 0; i < 20_000; i++)
        {
            final ByteBuf out = alloc.directBuffer(64 << (i % 8));
            assertEquals(1, out.refCnt());
            assertEquals(0, out.writerIndex());
            handoff.put(out.writeInt(i));
        }
        consumer.join(30_000);
        assertEquals(null, failure.get());
        assertEquals(0, arena.stats().buffersInUse(), arena.stats().toString());
    }

    @Test
    void aZeroCapacityBufferHoldsNoArenaMemoryUntilItGrows()
    {
        final ByteBuf buffer = alloc.directBuffer(0);
        assertEquals(0, buffer.capacity());
        assertEquals(0, arena.stats().buffersInUse());
        buffer.writeLong(42);
        assertEquals(1, arena.stats().buffersInUse());
        assertEquals(BufferScope.REMOTE, arena.scopeOf(buffer.memoryAddress()));
        assertEquals(42, buffer.readLong());
        buffer.capacity(0);
        assertEquals(0, arena.stats().buffersInUse(), "shrinking to 0 gave the memory back");
        assertTrue(buffer.release());
        assertEquals(0, arena.stats().buffersInUse());
    }

    @Test
    void theAllocateWriteReleaseLoopAllocatesNothingOnTheHeap() throws Exception
    {
        // Leak detection samples 1 buffer in 128 and wraps it (garbage by design); it is a debugging aid,
        // so the loop is measured without it.
        final ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        try
        {
            final int[] sizes = {64, 4096, 65536, 100, 1 << 20};
            final long[] result = new long[2];
            final Thread loop = new Thread(() ->
            {
                final com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
                long sink = 0;
                long best = Long.MAX_VALUE;
                for (int window = 0; window < 40 && best != 0; window++)
                {
                    final long before = threads.getCurrentThreadAllocatedBytes();
                    for (int i = 0; i < 50_000; i++)
                    {
                        final ByteBuf buffer = alloc.directBuffer(sizes[i % sizes.length]);
                        buffer.writeLong(i);
                        sink += buffer.readLong() + alloc.lkey(buffer);
                        buffer.release();
                    }
                    final long bytes = threads.getCurrentThreadAllocatedBytes() - before;
                    if (window >= 10) // after the JIT warmed up
                    {
                        best = Math.min(best, bytes);
                    }
                }
                result[0] = best;
                result[1] = sink;
            }, "netty-hot-loop");
            loop.start();
            loop.join();
            assertEquals(0, result[0], "heap bytes allocated by 50,000 allocate-write-release cycles (best window)");
            assertEquals(0, arena.stats().buffersInUse());
        }
        finally
        {
            ResourceLeakDetector.setLevel(level);
        }
    }

    @Test
    void growingABufferMovesItToALargerArenaBufferAndFreesTheOld()
    {
        final ByteBuf buffer = alloc.directBuffer(64);
        for (int i = 0; i < 10_000; i++)
        {
            buffer.writeInt(i);
        }
        assertTrue(buffer.capacity() >= 40_000);
        assertEquals(BufferScope.REMOTE, arena.scopeOf(buffer.memoryAddress()));
        for (int i = 0; i < 10_000; i++)
        {
            assertEquals(i, buffer.readInt());
        }
        assertEquals(1, arena.stats().buffersInUse(), "every outgrown buffer went back to the arena");
        buffer.release();
        assertEquals(0, arena.stats().buffersInUse());
    }

    @Test
    void anEmbeddedPipelineAllocatesFromTheArena()
    {
        final EmbeddedChannel channel = new EmbeddedChannel();
        channel.config().setAllocator(alloc);
        channel.pipeline().addLast(new ChannelInboundHandlerAdapter()
        {
            public void channelRead(final ChannelHandlerContext ctx, final Object msg)
            {
                final ByteBuf in = (ByteBuf)msg;
                final ByteBuf reply = ctx.alloc().directBuffer(in.readableBytes() + 4);
                reply.writeInt(alloc.lkey(reply)).writeBytes(in);
                in.release();
                ctx.writeAndFlush(reply);
            }
        });
        final ByteBuf request = alloc.directBuffer(16).writeLong(7).writeLong(8);
        channel.writeInbound(request);
        final ByteBuf reply = channel.readOutbound();
        assertEquals(BufferScope.REMOTE, arena.scopeOf(reply.memoryAddress()), "arena memory");
        assertEquals(alloc.lkey(reply), reply.readInt(), "the handler saw the same key");
        assertEquals(7, reply.readLong());
        assertEquals(8, reply.readLong());
        assertEquals(1, arena.stats().buffersInUse(), "the request was released by the handler");
        reply.release();
        assertFalse(channel.finish());
        assertEquals(0, arena.stats().buffersInUse());
    }

    @Test
    void aTcpEchoOnLoopbackRunsOnArenaBuffersAndLeavesNoneBehind() throws Exception
    {
        final int total = 4 << 20;
        final EventLoopGroup group = new NioEventLoopGroup(2);
        final AtomicInteger serverReads = new AtomicInteger();
        final AtomicInteger notArena = new AtomicInteger();
        try
        {
            final Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.ALLOCATOR, alloc)
                .childHandler(new ChannelInitializer<SocketChannel>()
                {
                    protected void initChannel(final SocketChannel ch)
                    {
                        ch.pipeline().addLast(new ChannelInboundHandlerAdapter()
                        {
                            public void channelRead(final ChannelHandlerContext ctx, final Object msg)
                            {
                                serverReads.incrementAndGet();
                                if (!isArenaMemory((ByteBuf)msg))
                                {
                                    notArena.incrementAndGet();
                                }
                                ctx.writeAndFlush(msg); // echoed, then released by the transport
                            }
                        });
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();

            final CompletableFuture<Long> received = new CompletableFuture<>();
            final Channel client = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.ALLOCATOR, alloc)
                .handler(new ChannelInboundHandlerAdapter()
                {
                    private long count;
                    private long checksum;

                    public void channelRead(final ChannelHandlerContext ctx, final Object msg)
                    {
                        final ByteBuf in = (ByteBuf)msg;
                        if (!isArenaMemory(in))
                        {
                            notArena.incrementAndGet();
                        }
                        while (in.isReadable())
                        {
                            checksum += (in.readByte() & 0xFF) * (count % 251 + 1);
                            count++;
                        }
                        in.release();
                        if (count == total)
                        {
                            received.complete(checksum);
                        }
                    }
                }).connect(server.localAddress()).sync().channel();

            long expected = 0;
            for (int sent = 0, size = 1; sent < total; size = size * 3 % 70_000 + 1)
            {
                final int n = Math.min(size, total - sent);
                final ByteBuf out = client.alloc().directBuffer(n);
                for (int i = 0; i < n; i++)
                {
                    final int b = (sent + i) * 31 & 0xFF;
                    out.writeByte(b);
                    expected += b * ((sent + i) % 251 + 1);
                }
                sent += n;
                client.writeAndFlush(out);
            }
            assertEquals(expected, received.get(60, TimeUnit.SECONDS), "every byte came back in order");
            assertTrue(serverReads.get() > 0);
            assertEquals(0, notArena.get(), "every buffer a socket read into was an arena buffer");
            client.close().sync();
            server.close().sync();
        }
        finally
        {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
        assertEquals(0, arena.stats().buffersInUse(), "every buffer went back to the arena: " + arena.stats());
    }

    /** True for a buffer over this arena's memory (a leak-detector wrapper included). */
    private boolean isArenaMemory(final ByteBuf buffer)
    {
        try
        {
            return buffer.hasMemoryAddress() && arena.scopeOf(buffer.memoryAddress()) == BufferScope.REMOTE;
        }
        catch (final dev.pinarena.allocator.UnknownAddressException ex)
        {
            return false;
        }
    }

    /**
     * @return the allocator's own buffer under a leak detector's wrapper (the detector samples buffers at
     * every level but DISABLED).
     */
    private static ByteBuf pinned(final ByteBuf buffer)
    {
        return buffer instanceof PinnedByteBuf ? buffer : buffer.unwrap();
    }
}

package dev.pinarena.netty;

import dev.pinarena.allocator.ArenaConfig;
import dev.pinarena.allocator.BufferScope;
import dev.pinarena.allocator.PinnedArena;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.uring.IoUringRegistrar;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
    void directBuffersAreArenaMemoryWithKeysAndReleaseFreesThem()
    {
        final ByteBuf buffer = alloc.directBuffer(1000);
        assertTrue(buffer.isDirect());
        assertEquals(BufferScope.REMOTE, arena.scopeOf(buffer.memoryAddress()));
        assertEquals(arena.lkey(buffer.memoryAddress()), alloc.lkey(buffer));
        assertEquals(arena.rkey(buffer.memoryAddress()), alloc.rkey(buffer));
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
}

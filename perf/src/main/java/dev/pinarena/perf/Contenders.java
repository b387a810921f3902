package dev.pinarena.perf;

import dev.pinarena.allocator.ArenaConfig;
import dev.pinarena.allocator.PinnedArena;
import dev.pinarena.registration.Access;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.uring.IoUringRegistrar;
import io.netty.buffer.PooledByteBufAllocator;
import org.agrona.UnsafeApi;

/**
 * What the benchmarks compare, opened the same way for each: the pinned arena and the naive path share one
 * io_uring registrar (the host's real long-term pin); Netty's pooled allocator and
 * {@code ByteBuffer.allocateDirect} register nothing.
 */
final class Contenders implements AutoCloseable
{
    /** Kernel page: the naive path registers whole pages. */
    static final long PAGE = Registrar.PAGE_SIZE;
    /** Bytes the arena may pin during a benchmark. */
    static final long ARENA_CAP = 512L << 20;

    final IoUringRegistrar registrar;
    final PinnedArena arena;
    final PooledByteBufAllocator netty;

    Contenders()
    {
        registrar = IoUringRegistrar.open(new PinBudget(PinBudget.UNLIMITED));
        arena = PinnedArena.open(registrar, ArenaConfig.defaults().withCapBytes(ARENA_CAP));
        netty = PooledByteBufAllocator.DEFAULT;
    }

    /**
     * The naive path: malloc, then register the pages of the buffer.
     *
     * @param raw  from {@link UnsafeApi#allocateMemory(long)} with {@code size + PAGE} bytes.
     * @param size bytes of the buffer.
     * @return the region registered for it.
     */
    Region registerEach(final long raw, final int size)
    {
        final long aligned = (raw + PAGE - 1) & ~(PAGE - 1);
        return registrar.register(aligned, (size + PAGE - 1) & ~(PAGE - 1), Access.LOCAL_WRITE);
    }

    public void close()
    {
        arena.close(true);
        registrar.close();
    }
}

package dev.pinarena.allocator;

import dev.pinarena.registration.uring.IoUringRegistrar;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

/**
 * Every steady-state pattern allocates nothing on the Java heap, on any thread taking part: one thread
 * cycling through every size class, runs and dedicated chunks; a batch allocated then freed; a producer
 * handing buffers to a consumer that frees them; many producers to one consumer. Measured with the JVM's
 * per-thread allocation counter while the loops run ({@link HotLoops}).
 */
class ZeroGarbageTest
{
    /** Sizes crossing threads: blocks of three classes and a page run. */
    private static final long[] TRAVELLING_SIZES = {64, 4096, 65536, 256 * 1024};
    private static final int RING = 64;

    private IoUringRegistrar registrar;
    private PinnedArena arena;

    @BeforeEach
    void open()
    {
        registrar = TestArenas.registrar();
        arena = PinnedArena.open(registrar, TestArenas.config(256L << 20));
    }

    @AfterEach
    void close()
    {
        arena.close(true);
        registrar.close();
    }

    @Test
    void oneThreadThroughEverySizeClassRunsAndDedicatedChunks() throws Exception
    {
        final SizeClasses classes = arena.sizeClasses();
        final long[] sizes = new long[classes.count() + 4];
        for (int i = 0; i < classes.count(); i++)
        {
            sizes[i] = classes.blockSize(i);
        }
        sizes[classes.count()] = SizeClasses.MAX_SLAB_BLOCK + 1;  // shortest run
        sizes[classes.count() + 1] = 1 << 20;                     // a cached run
        sizes[classes.count() + 2] = TestArenas.CHUNK;            // a whole-chunk run
        sizes[classes.count() + 3] = 2 * TestArenas.CHUNK;        // a dedicated chunk
        final PinnedBuffer buffer = new PinnedBuffer();
        final int[] next = new int[1];
        try (HotLoops loops = new HotLoops())
        {
            loops.start("every-size", () ->
            {
                final long size = sizes[next[0]];
                next[0] = next[0] + 1 == sizes.length ? 0 : next[0] + 1;
                final long address = arena.allocate(size);
                long sum = arena.lkey(address);
                arena.free(address);
                if (size <= Integer.MAX_VALUE)
                {
                    try (PinnedBuffer b = arena.allocate((int)size, buffer))
                    {
                        b.putLong(0, size);
                        final ByteBuffer view = b.asByteBuffer();
                        sum += view.getLong(0) + view.capacity();
                    }
                }
                return sum;
            }).assertNoGarbage("one thread, every size");
        }
    }

    @Test
    void handlesOfBlocksRunsAndDedicatedChunks() throws Exception
    {
        final long[] sizes = {64, 4096, 65536, 1 << 20, 2 * TestArenas.CHUNK};
        final int[] next = new int[1];
        try (HotLoops loops = new HotLoops())
        {
            loops.start("handles", () ->
            {
                final long size = sizes[next[0]];
                next[0] = (next[0] + 1) % sizes.length;
                final long handle = arena.allocateHandle(size);
                arena.freeHandle(handle);
                return handle;
            }).assertNoGarbage("handles");
        }
    }

    @Test
    void batchAllocatedThenFreed() throws Exception
    {
        final long[] sizes = {64, 4096, 65536};
        final long[] batch = new long[256];
        final int[] next = new int[1];
        try (HotLoops loops = new HotLoops())
        {
            loops.start("batch", () ->
            {
                final long size = sizes[next[0]];
                next[0] = (next[0] + 1) % sizes.length;
                for (int i = 0; i < batch.length; i++)
                {
                    batch[i] = arena.allocate(size);
                }
                for (final long address : batch)
                {
                    arena.free(address);
                }
                return batch[0];
            }).assertNoGarbage("batch of 256");
        }
    }

    @Test
    void producerToConsumer() throws Exception
    {
        final LongRing ring = new LongRing(RING);
        try (HotLoops loops = new HotLoops())
        {
            loops.start("producer", producer(ring)).start("consumer", consumer(ring))
                .assertNoGarbage("producer to consumer");
        }
    }

    @Test
    void manyProducersToOneConsumer() throws Exception
    {
        final LongRing first = new LongRing(RING);
        final LongRing second = new LongRing(RING);
        try (HotLoops loops = new HotLoops())
        {
            loops.start("producer-1", producer(first)).start("producer-2", producer(second))
                .start("consumer", consumer(first, second))
                .assertNoGarbage("two producers to one consumer");
        }
    }

    /** Allocates sizes in turn and hands each buffer over; a full ring means a local free. */
    private HotLoops.Step producer(final LongRing ring)
    {
        final int[] next = new int[1];
        return () ->
        {
            final long size = TRAVELLING_SIZES[next[0]];
            next[0] = (next[0] + 1) % TRAVELLING_SIZES.length;
            final long address = arena.allocate(size);
            if (!ring.offer(address))
            {
                arena.free(address);
            }
            return address;
        };
    }

    /** Frees whatever the rings bring, in turn. */
    private HotLoops.Step consumer(final LongRing... rings)
    {
        final int[] next = new int[1];
        return () ->
        {
            final LongRing ring = rings[next[0]];
            next[0] = (next[0] + 1) % rings.length;
            final long address = ring.poll();
            if (address != 0)
            {
                arena.free(address);
            }
            return address;
        };
    }
}

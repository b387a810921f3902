package dev.pinarena.allocator;

import dev.pinarena.registration.uring.IoUringRegistrar;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random allocate / write / verify / free sequences on several threads, checked against a model: the set of
 * live buffers (no two may overlap), the bytes each holds, and buffers handed to other threads to be freed
 * there. At the end every cross-thread free is reclaimed and the statistics balance.
 */
class RandomizedModelTest
{
    private static final int THREADS = 4;
    private static final int OPS_PER_THREAD = 300_000;
    private static final int MAX_OWNED = 64;
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    /** A live buffer in the model. */
    private record Live(long address, long size, long seed)
    {
    }

    @Test
    void millionsOfOperationsAgainstAModel() throws Exception
    {
        try (IoUringRegistrar registrar = TestArenas.registrar())
        {
            final PinnedArena arena = PinnedArena.open(registrar, TestArenas.config(512L << 20));
            final ConcurrentSkipListMap<Long, Long> liveRanges = new ConcurrentSkipListMap<>();
            final ConcurrentLinkedQueue<Live> handoff = new ConcurrentLinkedQueue<>();
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final long[] ops = new long[THREADS];

            final List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++)
            {
                final int id = t;
                threads.add(new Thread(() ->
                {
                    try
                    {
                        ops[id] = run(arena, liveRanges, handoff, new SplittableRandom(1000 + id));
                    }
                    catch (final Throwable ex)
                    {
                        failure.compareAndSet(null, ex);
                    }
                }, "model-" + t));
            }
            threads.forEach(Thread::start);
            for (final Thread thread : threads)
            {
                thread.join();
            }
            if (failure.get() != null)
            {
                throw new AssertionError("a model thread failed", failure.get());
            }

            final UnsafeBuffer view = new UnsafeBuffer(0, 0);
            Live left;
            while ((left = handoff.poll()) != null)
            {
                verifyAndForget(view, left, liveRanges);
                arena.free(left.address);
            }
            arena.reclaimDeadThreads();
            assertEquals(THREADS, arena.stats().adoptedHeaps(), "every dead thread's heap is adopted");
            assertTrue(liveRanges.isEmpty());

            long total = 0;
            for (final long count : ops)
            {
                total += count;
            }
            assertTrue(total >= 1_000_000, "operations: " + total);

            final ArenaStats stats = arena.stats();
            System.out.println(total + " operations\n" + stats);
            assertEquals(0, stats.buffersInUse());
            assertEquals(0, stats.bytesInUse());
            for (int c = 0; c < stats.classCount(); c++)
            {
                assertEquals(stats.classAllocations(c), stats.classFrees(c), "class " + stats.classSize(c));
            }
            assertEquals(stats.runAllocations(), stats.runFrees());
            assertTrue(stats.crossThreadFrees() > 10_000, "cross-thread frees: " + stats.crossThreadFrees());
            assertEquals(stats.crossThreadFrees(), stats.crossThreadFreesCollected(), "every cross-thread free reclaimed");
            assertEquals(registrar.regionCount(), stats.chunks() + stats.dedicatedChunks());
            arena.close();
            assertEquals(0, registrar.pinnedBytes());
        }
    }

    private static long run(
        final PinnedArena arena,
        final ConcurrentSkipListMap<Long, Long> liveRanges,
        final ConcurrentLinkedQueue<Live> handoff,
        final SplittableRandom random)
    {
        final List<Live> owned = new ArrayList<>();
        final UnsafeBuffer view = new UnsafeBuffer(0, 0);
        long ops = 0;
        for (int i = 0; i < OPS_PER_THREAD; i++)
        {
            final int dice = random.nextInt(100);
            if (dice < 45 && owned.size() < MAX_OWNED || owned.isEmpty() && dice < 80)
            {
                final long size = randomSize(random);
                final int alignment = random.nextInt(10) == 0 ? 64 << random.nextInt(8) : 0;
                final long address = alignment == 0 ? arena.allocate(size) : arena.allocate(size, alignment);
                assertEquals(0, address & ((alignment == 0 ? 64 : alignment) - 1), "alignment " + alignment);
                final long usable = arena.usableSize(address);
                assertTrue(usable >= size);
                final Map.Entry<Long, Long> below = liveRanges.floorEntry(address + usable - 1);
                assertTrue(below == null || below.getValue() <= address,
                    () -> "0x" + Long.toHexString(address) + "+" + usable + " overlaps a live buffer at 0x" +
                        Long.toHexString(below.getKey()));
                assertNull(liveRanges.put(address, address + usable));
                final Live live = new Live(address, size, random.nextLong());
                write(view, live);
                owned.add(live);
            }
            else if (dice < 80 && !owned.isEmpty())
            {
                final Live live = owned.remove(random.nextInt(owned.size()));
                verifyAndForget(view, live, liveRanges);
                arena.free(live.address);
            }
            else if (dice < 90 && !owned.isEmpty())
            {
                handoff.add(owned.remove(random.nextInt(owned.size())));
            }
            else
            {
                final Live live = handoff.poll();
                if (live != null)
                {
                    verifyAndForget(view, live, liveRanges);
                    arena.free(live.address);
                }
            }
            ops++;
        }
        for (final Live live : owned)
        {
            verifyAndForget(view, live, liveRanges);
            arena.free(live.address);
            ops++;
        }
        return ops;
    }

    private static long randomSize(final SplittableRandom random)
    {
        final int kind = random.nextInt(1000);
        if (kind < 700)
        {
            return 1 + random.nextInt(1024);
        }
        if (kind < 930)
        {
            return 1 + random.nextInt(128 * 1024);
        }
        if (kind < 995)
        {
            return 1 + random.nextInt(1 << 20);
        }
        if (kind < 999)
        {
            return 1 + random.nextInt(4 << 20);
        }
        return (4L << 20) + 1 + random.nextInt(4 << 20); // dedicated chunk
    }

    /** Small buffers are filled; larger ones get their head, tail and a stride of samples (as the rule model). */
    private static void write(final UnsafeBuffer view, final Live live)
    {
        view.wrap(live.address, (int)live.size);
        RuleModel.forEachCheckedOffset(live.size, offset -> view.putByte((int)offset, pattern(live, (int)offset)));
    }

    private static void verifyAndForget(final UnsafeBuffer view, final Live live, final ConcurrentSkipListMap<Long, Long> liveRanges)
    {
        view.wrap(live.address, (int)live.size);
        RuleModel.forEachCheckedOffset(live.size, offset ->
        {
            if (view.getByte((int)offset) != pattern(live, (int)offset))
            {
                throw new AssertionError("buffer 0x" + Long.toHexString(live.address) + "+" + live.size +
                    " corrupted at offset " + offset);
            }
        });
        assertTrue(liveRanges.remove(live.address) != null);
    }

    private static byte pattern(final Live live, final int offset)
    {
        return (byte)((live.seed + offset * GOLDEN) >>> 56);
    }
}

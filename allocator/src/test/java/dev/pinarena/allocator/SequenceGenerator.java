package dev.pinarena.allocator;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Random operation sequences that {@link RuleModel} accepts: allocations of every kind of size (small size
 * classes, runs or large spans, dedicated chunks or huge objects, boundary sizes), aligned and remote, frees on
 * the main and the helper thread, lookups, double frees (Java) and realloc, madvise, mprotect, trim and fork
 * (C). One seed gives one sequence on every machine.
 */
final class SequenceGenerator
{
    /** Live bytes a sequence may hold at once (both sides run several sequences in a modest memory budget). */
    static final long MAX_LIVE_BYTES = 48L << 20;

    private SequenceGenerator()
    {
    }

    static List<ModelOp> generate(final long seed, final boolean cSide)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        final RuleModel model = new RuleModel(cSide);
        final int length = 4 + random.nextInt(random.nextInt(8) == 0 ? 160 : 40);
        final List<ModelOp> ops = new ArrayList<>();
        int attempts = 0;
        while (ops.size() < length && attempts++ < length * 20)
        {
            final ModelOp op = next(random, model, cSide);
            if (model.legal(op) && liveBytesAfter(model, op) <= MAX_LIVE_BYTES)
            {
                model.apply(op, ops.size());
                ops.add(op);
            }
        }
        return ops;
    }

    private static ModelOp next(final SplittableRandom random, final RuleModel model, final boolean cSide)
    {
        // Few slots per sequence make reuse of freed memory (the interesting case) likely.
        final int slots = 2 + random.nextInt(RuleModel.SLOTS - 2);
        final int id = random.nextInt(Math.min(slots, 6 + random.nextInt(RuleModel.SLOTS - 5)));
        final int dice = random.nextInt(100);
        if (dice < 38)
        {
            final boolean remote = random.nextInt(8) == 0;
            final int align = !remote && random.nextInt(6) == 0 ? alignment(random, cSide) : 0;
            return new ModelOp('a', id, size(random), align, remote, random.nextInt(6) == 0);
        }
        if (dice < 60)
        {
            return new ModelOp('f', id, 0, 0, false, false);
        }
        if (dice < 68)
        {
            return new ModelOp('x', id, 0, 0, false, false);
        }
        if (dice < 80)
        {
            return new ModelOp('k', id, 0, 0, false, false);
        }
        if (!cSide)
        {
            return dice < 84 ? new ModelOp('d', id, 0, 0, false, false) : new ModelOp('t', -1, 0, 0, false, false);
        }
        if (dice < 88)
        {
            return new ModelOp('z', id, size(random), 0, false, false);
        }
        if (dice < 91)
        {
            return new ModelOp('m', id, 0, 0, false, false);
        }
        if (dice < 93)
        {
            return new ModelOp('p', id, 0, 0, false, false);
        }
        if (dice < 95)
        {
            return new ModelOp('d', id, 0, 0, false, false);
        }
        if (dice < 99)
        {
            return new ModelOp('t', -1, 0, 0, false, false);
        }
        return new ModelOp('F', -1, 0, 0, false, false);
    }

    /** Sizes across every class of both allocators, and the edges between them. */
    static long size(final SplittableRandom random)
    {
        final int kind = random.nextInt(100);
        if (kind < 12)
        {
            // a power of two, or one byte either side: class and kind boundaries
            final long power = 1L << random.nextInt(24);
            return Math.max(1, power + random.nextInt(3) - 1);
        }
        if (kind < 45)
        {
            return 1 + random.nextInt(1024);
        }
        if (kind < 75)
        {
            return 1 + random.nextInt(128 << 10);
        }
        if (kind < 88)
        {
            return 1 + random.nextInt(2 << 20);
        }
        if (kind < 96)
        {
            return 1 + random.nextInt(6 << 20);
        }
        return (4L << 20) + random.nextInt(8 << 20);
    }

    private static int alignment(final SplittableRandom random, final boolean cSide)
    {
        // Java: up to the arena page (8 KiB); C: posix_memalign up to 1 MiB.
        return 32 << random.nextInt(cSide ? 16 : 9);
    }

    private static long liveBytesAfter(final RuleModel model, final ModelOp op)
    {
        long live = 0;
        for (int id = 0; id < RuleModel.SLOTS; id++)
        {
            final RuleModel.Slot slot = model.slot(id);
            if (slot.state == RuleModel.State.LIVE && id != op.id())
            {
                live += slot.size;
            }
        }
        return live + (op.kind() == 'a' || op.kind() == 'z' ? op.size() : 0);
    }
}

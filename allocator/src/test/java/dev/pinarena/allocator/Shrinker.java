package dev.pinarena.allocator;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Shrinks a failing sequence while it keeps failing: deletes runs of operations (halves, quarters, ... single
 * ones, delta debugging), dropping what becomes illegal ({@link RuleModel#normalize}), then halves sizes.
 */
final class Shrinker
{
    private final Predicate<List<ModelOp>> fails;
    private final boolean cSide;
    private final int maxTries;
    private int tries;

    /**
     * @param fails    runs a candidate; true if it still fails (the same way or another: any broken rule).
     * @param cSide    which side's model decides legality.
     * @param maxTries candidates run at most.
     */
    Shrinker(final Predicate<List<ModelOp>> fails, final boolean cSide, final int maxTries)
    {
        this.fails = fails;
        this.cSide = cSide;
        this.maxTries = maxTries;
    }

    List<ModelOp> shrink(final List<ModelOp> failing)
    {
        List<ModelOp> best = failing;
        boolean progress = true;
        while (progress && tries < maxTries)
        {
            progress = false;
            for (int chunk = Math.max(1, best.size() / 2); chunk >= 1 && tries < maxTries; chunk /= 2)
            {
                for (int start = 0; start < best.size() && tries < maxTries; )
                {
                    final List<ModelOp> candidate = new ArrayList<>(best.subList(0, start));
                    candidate.addAll(best.subList(Math.min(best.size(), start + chunk), best.size()));
                    final List<ModelOp> legal = RuleModel.normalize(candidate, cSide);
                    if (legal.size() < best.size() && stillFails(legal))
                    {
                        best = legal;
                        progress = true;
                    }
                    else
                    {
                        start += chunk;
                    }
                }
            }
            for (int i = 0; i < best.size() && tries < maxTries; i++)
            {
                final ModelOp op = best.get(i);
                if ((op.kind() == 'a' || op.kind() == 'z') && op.size() > 1)
                {
                    final List<ModelOp> candidate = new ArrayList<>(best);
                    candidate.set(i, op.withSize(op.size() / 2));
                    if (RuleModel.normalize(candidate, cSide).size() == candidate.size() && stillFails(candidate))
                    {
                        best = candidate;
                        progress = true;
                        i--;
                    }
                }
            }
        }
        return best;
    }

    private boolean stillFails(final List<ModelOp> candidate)
    {
        tries++;
        return !candidate.isEmpty() && fails.test(candidate);
    }
}

package dev.pinarena.perf.suite;

/**
 * A step's time budget shared out over its runs: the runs done so far and the next ones may take their
 * share, {@code budget × runs / total}, so time the early runs leave unused goes to the later ones. The
 * same rule as {@code perf/native/collect.sh}'s rounds: the next batch starts in full only if, at the pace
 * seen so far, it ends within its share; otherwise the caller runs it cut short (fewer or shorter
 * iterations), never leaves it out.
 */
public final class RunBudget
{
    private final long budgetNanos;
    private final int totalRuns;
    private final long startNanos;

    /**
     * @param budgetNanos the step's budget, 0 for none.
     * @param totalRuns   the runs the step makes, positive.
     * @param startNanos  {@link System#nanoTime()} when the step began.
     */
    public RunBudget(final long budgetNanos, final int totalRuns, final long startNanos)
    {
        if (budgetNanos < 0 || totalRuns <= 0)
        {
            throw new IllegalArgumentException("budget " + budgetNanos + " ns over " + totalRuns + " runs");
        }
        this.budgetNanos = budgetNanos;
        this.totalRuns = totalRuns;
        this.startNanos = startNanos;
    }

    /**
     * @param runsDone     runs made so far.
     * @param nextRuns     runs in the next batch.
     * @param nanosPerRun  the pace of one full run, as seen so far (0 before any run: nothing to judge by).
     * @param nowNanos     {@link System#nanoTime()} now.
     * @return true if the next batch, made in full at that pace, would end after its share of the budget.
     */
    public boolean mustCut(final int runsDone, final int nextRuns, final double nanosPerRun, final long nowNanos)
    {
        if (budgetNanos == 0 || nanosPerRun <= 0)
        {
            return false;
        }
        final double shareEnd = startNanos + (double)budgetNanos * Math.min(totalRuns, runsDone + nextRuns) / totalRuns;
        return nowNanos + nextRuns * nanosPerRun > shareEnd;
    }
}

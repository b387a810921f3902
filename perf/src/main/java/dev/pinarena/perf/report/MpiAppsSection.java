package dev.pinarena.perf.report;

import java.nio.file.Path;
import java.util.Locale;

/**
 * "Is a real MPI application slower under the shim?" — hpcc's phases and NetPIPE under glibc, under glibc with
 * the stacks' hooks-off settings ({@code pinarena exec --no-shim}) and under libpinarena.so ({@code pinarena
 * exec}), interleaved round by round, on the host (shared memory) and over rxe0 in the Soft-RoCE guest; each
 * figure as the median of the per-round shim ÷ glibc ratios in time terms, with their spread as its noise, split
 * into the settings' factor and the allocator's.
 */
public final class MpiAppsSection implements ReportSection
{
    /**
     * Rounds below which no verdict is given: the fewest in which every pair on one side is less likely than
     * {@link SignTest#SIGNIFICANCE} from noise alone (2^-5 = 0.03; at 4 rounds 0.06).
     */
    static final int MIN_ROUNDS_FOR_VERDICT = 5;

    private final MpiAppRuns runs;

    /**
     * @param runs the measured metrics.
     */
    public MpiAppsSection(final MpiAppRuns runs)
    {
        this.runs = runs;
    }

    public void write(final StringBuilder md, final Path reportDir)
    {
        md.append("## Is a real MPI application slower under the shim?\n\n");
        if (runs.metrics().isEmpty())
        {
            md.append("Not measured in this run (`perf/mpi-apps/run.sh` wrote no rows: hpcc or NetPIPE missing, ")
                .append("or its runs failed).\n\n");
            return;
        }
        md.append("hpcc (HPC Challenge 1.5, Debian's, `perf/mpi-apps/hpccinf*.txt`) and NetPIPE (`NPopenmpi`), two ")
            .append("ranks, under glibc and under the shim launched as its README says (`pinarena exec [--mpi ofi] -- ")
            .append("mpirun ...`: every rank preloads libpinarena.so, the stacks' memory hooks off). `host`: shared ")
            .append("memory on this machine; `rxe0`: Open MPI `pml cm`/`mtl ofi` over Soft-RoCE in the emulated ")
            .append("guest, one host thread per guest CPU (`--mttcg`: on a single emulation thread the computing rank ")
            .append("and the polling one take turns, and a phase measures the turns), only ratios mean anything ")
            .append("there. Each round runs every configuration back to back, ")
            .append("the order rotated each round. **shim ÷ glibc** is the median of the per-round ratios, in ")
            .append("time terms (rates inverted): below 1.0 the shim is faster. The pair range is the smallest and ")
            .append("largest ratio of one round's pair: the noise of this machine, where one round swings by 10 % ")
            .append("and more (hpcc's wall over 8 idle rounds: 0.89–1.10). `slower` (`faster`) only from at least ")
            .append(MIN_ROUNDS_FOR_VERDICT).append(" rounds, when so many pairs were above (below) 1.0 that a fair ")
            .append("coin would give as many less often than ")
            .append(SignTest.percent()).append(" times in 100 (a ")
            .append("sign test; pairs of exactly 1.0 left out): 5 of 5, 7 of 7, 7 of 8; 3 of 3 happens 1 time in 8 ")
            .append("by chance. `SECTION_wall` rows are where hpcc's ")
            .append("wall time goes: each section's seconds between its own clock stamps (set-up and checks included, ")
            .append("1 s steps).\n\n");
        md.append("The shim's launch does two things, so a third configuration runs beside them in the same ")
            .append("rotation: **glibc+settings**, glibc with exactly the settings `pinarena exec` applies ")
            .append("(`pinarena exec --no-shim`, nothing preloaded). **settings ÷ glibc** is what the hooks-off ")
            .append("settings cost: the price of hooks off, paid by any launch that turns the stacks' memory hooks ")
            .append("off, with or without the shim. ")
            .append("**shim ÷ settings** is what the shim's allocator costs on top (over rxe0 it also holds the ")
            .append("gain of libfabric's cache, which the shim's monitor turns back on: without the shim ")
            .append("`FI_MR_CACHE_MONITOR=disabled` leaves it off). Both are medians of the per-round ratios, in ")
            .append("time terms.\n\n");
        md.append("| where | app | phase | metric | glibc | glibc+settings | shim | shim ÷ glibc | pair range | ")
            .append("settings ÷ glibc | shim ÷ settings | rounds | |\n");
        md.append("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        int judged = 0;
        int verdicts = 0;
        double byChance = 0;
        for (final MpiAppRuns.Metric m : runs.metrics())
        {
            final Samples glibc = m.samples(MpiAppRuns.GLIBC);
            final Samples settings = m.samples(MpiAppRuns.SETTINGS);
            final Samples shim = m.samples(MpiAppRuns.SHIM);
            final Samples pairs = m.pairedTimeRatios();
            final String factors = factor(m.pairedTimeRatios(MpiAppRuns.SETTINGS, MpiAppRuns.GLIBC)) + " | " +
                factor(m.pairedTimeRatios(MpiAppRuns.SHIM, MpiAppRuns.SETTINGS));
            md.append("| ").append(m.where()).append(" | ").append(m.app()).append(" | ").append(m.phase())
                .append(" | ").append(m.metric()).append(" (").append(m.unit()).append(") | ")
                .append(glibc == null ? "–" : figure(glibc.median())).append(" | ")
                .append(settings == null ? "–" : figure(settings.median())).append(" | ")
                .append(shim == null ? "–" : figure(shim.median())).append(" | ");
            if (glibc == null || shim == null || pairs == null)
            {
                md.append("– | – | ").append(factors)
                    .append(" | 0 | not measured under both (or 0: hpcc's section clock has 1 s steps) |\n");
                continue;
            }
            if (glibc.median() == 0 || shim.median() == 0)
            {
                /* a section that took under a second in most rounds: its median is 0 s, and a ratio of it
                   (0, infinite or 0/0) would say nothing */
                md.append(String.format(Locale.ROOT, "– | %.2f–%.2f | %s | %d | a median is 0 (hpcc's section " +
                    "clock has 1 s steps) |%n", pairs.min(), pairs.max(), factors, pairs.count()));
                continue;
            }
            /* the median of the per-round pairs, as the factors beside it: a ratio of medians pairs rounds that
               ran apart, and one of an application with two states (NetPIPE on the host: 0.6 or 1.0-1.6 s for
               every allocator) could divide one state by the other */
            final String verdict = verdict(pairs);
            md.append(String.format(Locale.ROOT, "**%.2f** | %.2f–%.2f | %s | %d | %s |%n", pairs.median(),
                pairs.min(), pairs.max(), factors, pairs.count(), verdict));
            if (pairs.count() >= MIN_ROUNDS_FOR_VERDICT)
            {
                judged++;
                verdicts += "slower".equals(verdict) || "faster".equals(verdict) ? 1 : 0;
                byChance += SignTest.chanceOfVerdict(SignTest.above(pairs) + SignTest.below(pairs));
            }
        }
        md.append('\n');
        if (judged > 0)
        {
            /* each row is its own test at the same significance: over dozens of rows some get a verdict from
               noise alone, and which ones changes from run to run */
            md.append(String.format(Locale.ROOT, "%d of the %d rows with enough rounds got a verdict; noise alone " +
                "would give about %.1f (each row's chance of as lopsided a count either way, summed), so a lone " +
                "`slower` or `faster` that the next run does not repeat is most likely one of those.%n%n",
                verdicts, judged, byChance));
        }
    }

    /**
     * @param pairs per-round shim ÷ glibc time ratios.
     * @return with fewer than {@link #MIN_ROUNDS_FOR_VERDICT} pairs, that there are too few; else {@code slower}
     *         ({@code faster}) when the sign test puts the pairs above (below) 1.0 at
     *         {@link SignTest#SIGNIFICANCE}, else {@code within noise}.
     */
    static String verdict(final Samples pairs)
    {
        if (pairs.count() < MIN_ROUNDS_FOR_VERDICT)
        {
            return "too few rounds to tell";
        }
        if (SignTest.pAbove(pairs) < SignTest.SIGNIFICANCE)
        {
            return "slower";
        }
        return SignTest.pBelow(pairs) < SignTest.SIGNIFICANCE ? "faster" : "within noise";
    }

    /**
     * @param pairs per-round time ratios, or null.
     * @return their median, or a dash when no round measured both configurations.
     */
    private static String factor(final Samples pairs)
    {
        return pairs == null ? "–" : String.format(Locale.ROOT, "%.2f", pairs.median());
    }

    private static String figure(final double v)
    {
        if (v == 0)
        {
            return "0";
        }
        final double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 100 ? "%.0f" : a >= 1 ? "%.2f" : "%.3g", v);
    }
}

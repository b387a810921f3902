package dev.pinarena.perf.report;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * "Is the shim ever slower than mimalloc or glibc on programs written by others?" — the programs of mimalloc-bench
 * under glibc, mimalloc and libpinarena.so, interleaved: time ratios and peak memory against the goal (time at most
 * 1.0 × mimalloc and under 1.0 × glibc, peak at most 1.25 × the larger of the two), with CPU seconds per work beside
 * the time.
 */
public final class MimallocBenchSection implements ReportSection
{
    static final double PEAK_LIMIT = 1.25;
    private static final String SHIM = "pinarena";

    private final MimallocBenchRuns runs;

    /**
     * @param runs the measured runs.
     */
    public MimallocBenchSection(final MimallocBenchRuns runs)
    {
        this.runs = runs;
    }

    public void write(final StringBuilder md, final Path reportDir)
    {
        md.append("## Is the shim slower than mimalloc or glibc on mimalloc-bench's programs?\n\n");
        if (runs.isEmpty())
        {
            md.append("Not measured in this run (`perf/mimalloc-bench/run.sh` had no sources or failed: see the ")
                .append("bench log).\n\n");
            return;
        }
        md.append("The programs of [mimalloc-bench](https://github.com/daanx/mimalloc-bench) (pinned in ")
            .append("`perf/mimalloc-bench/run.sh`, built from its sources, run with its arguments and nproc threads; ")
            .append("cache-scratch with `-fno-allocation-dce -fno-tree-dce`, without which g++ removes its object's ")
            .append("new/delete and writes and its timed loop touches only the stack, whatever the allocator), ")
            .append("each under glibc, Debian's mimalloc and libpinarena.so (LD_PRELOAD), interleaved: every round ")
            .append("runs each allocator once, in an order that rotates per round. Time: wall seconds, or for the ")
            .append("programs that run a fixed time (larson, xmalloc-test, glibc-thread, rptest) the time per fixed ")
            .append("work they print. A ratio is the median of the per-round ratios (each round's runs lie close ")
            .append("together in time). CPU: user + system seconds per the same work (for a fixed-duration program ")
            .append("its time per work × CPU ÷ wall; rptest prints its figure per CPU second already), steadier ")
            .append("than time when other work shares the machine. A program whose runs take under a second ")
            .append("(mstress: 0.1 s) swings by more than the allocators differ: it runs more rounds, about a ")
            .append("second of its runs per round of the others. `rounds above mimalloc`: in how many of its rounds ")
            .append("the shim took longer than mimalloc; a program past mimalloc in so many that a fair coin would ")
            .append("give as many less often than ").append(SignTest.percent()).append(" times in 100 (the sign ")
            .append("test of the MPI table) is slower beyond this machine's noise. ")
            .append("Peak: largest RSS + HugetlbPages, median. Goal: time ≤ 1.0 × mimalloc and ")
            .append("< 1.0 × glibc, peak ≤ ").append(PEAK_LIMIT).append(" × the larger of glibc's and mimalloc's; ")
            .append("a ratio past its goal is in bold.\n\n");
        md.append("| program | glibc s | mimalloc s | pinarena s | ÷ mimalloc time | ÷ glibc time | ÷ mimalloc CPU |")
            .append(" ÷ glibc CPU | peak MiB glibc / mimalloc / pinarena | peak ÷ larger | rounds above mimalloc |\n")
            .append("|---|").append("---:|".repeat(10)).append('\n');
        final List<String> missed = new ArrayList<>();
        final List<String> beyondNoise = new ArrayList<>();
        for (final String program : runs.programs())
        {
            final Samples pairs = roundRatios(program, "mimalloc", MimallocBenchRuns.Run::seconds);
            final double toMimalloc = pairs == null ? Double.NaN : pairs.median();
            final double toGlibc = roundRatio(program, "glibc", MimallocBenchRuns.Run::seconds);
            final double peakGlibc = median(program, "glibc", run -> run.peakKib());
            final double peakMimalloc = median(program, "mimalloc", run -> run.peakKib());
            final double peakShim = median(program, SHIM, run -> run.peakKib());
            final double peakRatio = peakShim / Math.max(peakGlibc, peakMimalloc);
            md.append("| ").append(program).append(" |")
                .append(seconds(program, "glibc")).append(seconds(program, "mimalloc")).append(seconds(program, SHIM))
                .append(cell(toMimalloc, toMimalloc > 1.0)).append(cell(toGlibc, toGlibc >= 1.0))
                .append(cell(roundRatio(program, "mimalloc", MimallocBenchRuns.Run::cpuPerWork), false))
                .append(cell(roundRatio(program, "glibc", MimallocBenchRuns.Run::cpuPerWork), false))
                .append(String.format(Locale.ROOT, " %.1f / %.1f / %.1f |", peakGlibc / 1024, peakMimalloc / 1024,
                    peakShim / 1024))
                .append(cell(peakRatio, peakRatio > PEAK_LIMIT))
                .append(pairs == null ? " – |" : " " + SignTest.above(pairs) + " of " + pairs.count() + " |")
                .append('\n');
            if (toMimalloc > 1.0 || toGlibc >= 1.0 || peakRatio > PEAK_LIMIT)
            {
                missed.add(program);
            }
            if (pairs != null && SignTest.pAbove(pairs) < SignTest.SIGNIFICANCE)
            {
                beyondNoise.add(program);
            }
        }
        md.append('\n').append(missed.isEmpty() ? "Every program within the goal in this run." :
            "Past the goal in this run: " + String.join(", ", missed) + ".")
            .append(" Slower than mimalloc beyond this machine's noise (sign test): ")
            .append(beyondNoise.isEmpty() ? "none" : String.join(", ", beyondNoise)).append(".\n\n");
    }

    /** The median over rounds of this round's shim value ÷ this round's other allocator's value. */
    private double roundRatio(final String program, final String other,
        final ToDoubleFunction<MimallocBenchRuns.Run> value)
    {
        final Samples ratios = roundRatios(program, other, value);
        return ratios == null ? Double.NaN : ratios.median();
    }

    /** Per round, the shim's value ÷ the other allocator's; null when no round measured both. */
    private Samples roundRatios(final String program, final String other,
        final ToDoubleFunction<MimallocBenchRuns.Run> value)
    {
        final List<Double> ratios = new ArrayList<>();
        for (final MimallocBenchRuns.Run shim : runs.runs(program))
        {
            final MimallocBenchRuns.Run base = shim.allocator().equals(SHIM) ?
                runs.find(program, other, shim.round()) : null;
            if (base != null && value.applyAsDouble(base) > 0)
            {
                ratios.add(value.applyAsDouble(shim) / value.applyAsDouble(base));
            }
        }
        return ratios.isEmpty() ? null : Samples.of(ratios);
    }

    private double median(final String program, final String allocator,
        final ToDoubleFunction<MimallocBenchRuns.Run> value)
    {
        final double[] values = runs.runs(program).stream().filter(run -> run.allocator().equals(allocator))
            .mapToDouble(value).toArray();
        return values.length == 0 ? Double.NaN : new Samples(values).median();
    }

    private String seconds(final String program, final String allocator)
    {
        return String.format(Locale.ROOT, " %.3f |", median(program, allocator, MimallocBenchRuns.Run::seconds));
    }

    private static String cell(final double ratio, final boolean pastGoal)
    {
        if (Double.isNaN(ratio))
        {
            return " – |";
        }
        final String text = String.format(Locale.ROOT, "%.2f", ratio);
        return pastGoal ? " **" + text + "** |" : " " + text + " |";
    }
}

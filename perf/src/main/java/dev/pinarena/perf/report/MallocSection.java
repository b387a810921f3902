package dev.pinarena.perf.report;

import org.knowm.xchart.CategoryChart;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * "How does the shim compare with other mallocs, in time and in peak memory?" — every workload of the
 * native benchmark under glibc, jemalloc, mimalloc, tcmalloc and libpinarena.so, all loaded with LD_PRELOAD.
 */
public final class MallocSection implements ReportSection
{
    private static final String SHIM = "pinarena";
    private static final List<String> BASELINES = List.of("glibc", "mimalloc", "jemalloc", "tcmalloc");
    /** The contenders measured against most: their own spread says how noisy a workload's rounds were. */
    private static final List<String> REFERENCES = List.of("glibc", "mimalloc");
    /**
     * Slowest over fastest run of one allocator in one workload above which its rounds are called noisy. On this
     * machine, idle, glibc's and mimalloc's single-thread workloads stay within 1.16 (most within 1.05), while
     * prodcons and larson (threads) and mimalloc's regrow have two states and pass it even then; a burst of load
     * from elsewhere passes it in many workloads at once (aligned, huge, calloc: 1.4-1.7).
     */
    static final double NOISY_SPREAD = 1.25;

    private final MallocRuns runs;

    /**
     * @param runs the measured runs.
     */
    public MallocSection(final MallocRuns runs)
    {
        this.runs = runs;
    }

    public void write(final StringBuilder md, final Path reportDir) throws IOException
    {
        md.append("## How does the C malloc shim compare with other mallocs, in time and in peak memory?\n\n");
        if (runs.isEmpty())
        {
            md.append("Not measured in this run.\n\n");
            return;
        }
        md.append("`perf/native` workloads (small-object churn, producer/consumer across threads on two CPUs ")
            .append("(prodcons) and taking turns on one (prodcons-1cpu), a larson-like ")
            .append("server, realloc growth; then what a program holds: 64 KiB-4 MiB objects churned (big), objects ")
            .append("of 5 MiB-1 GiB partly written (huge), page-aligned objects (aligned), a vector grown to 1 GiB ")
            .append("(regrow), a string grown in small steps (strgrow), sparse zeroed arrays (calloc), a heap built ")
            .append("and freed in phases (phased), fork of a 1 GiB heap (fork)), each allocator loaded with ")
            .append("LD_PRELOAD, runs interleaved. Peak memory is VmHWM + HugetlbPages (hugetlb pages do not show in ")
            .append("RSS). Time: min / median / max seconds.\n\n");
        final List<String> workloads = runs.workloads();
        final List<String> allocators = runs.allocators(workloads.get(0));

        md.append("| workload |");
        for (final String allocator : allocators)
        {
            md.append(' ').append(allocator).append(" |");
        }
        md.append('\n').append("|---|").append("---:|".repeat(allocators.size())).append('\n');
        for (final String workload : workloads)
        {
            md.append("| ").append(workload).append(" time |");
            for (final String allocator : allocators)
            {
                final Samples s = runs.seconds(workload, allocator);
                md.append(String.format(Locale.ROOT, " %.3f / %.3f / %.3f |", s.min(), s.median(), s.max()));
            }
            md.append('\n').append("| ").append(workload).append(" peak MiB |");
            for (final String allocator : allocators)
            {
                md.append(String.format(Locale.ROOT, " %.1f |", runs.peakKib(workload, allocator).median() / 1024));
            }
            md.append('\n');
        }
        md.append('\n');

        md.append("pinarena ÷ other: time as the median of the per-round ratios (min–max over the rounds; each round ")
            .append("runs every allocator once, back to back), peak as the ratio of the medians; below 1 means pinarena ")
            .append("is faster or smaller. A workload whose runs take under a second swings by more than the ")
            .append("allocators differ: it runs more rounds, about a second of its runs per allocator per round of ")
            .append("the others. `rounds above mimalloc`: in how many rounds the shim took longer than mimalloc:\n\n");
        md.append("| workload |");
        for (final String baseline : BASELINES)
        {
            md.append(" ÷ ").append(baseline).append(" time |");
        }
        md.append(" ÷ mimalloc peak | ÷ larger of glibc, mimalloc peak | rounds above mimalloc |\n|---|")
            .append("---:|".repeat(BASELINES.size() + 3))
            .append('\n');
        final List<String> beyondNoise = new ArrayList<>();
        for (final String workload : workloads)
        {
            md.append("| ").append(workload).append(" |");
            for (final String baseline : BASELINES)
            {
                md.append(' ').append(ratioCell(runs.timeRatios(workload, SHIM, baseline))).append(" |");
            }
            md.append(' ').append(String.format(Locale.ROOT, "%.2f",
                runs.peakKib(workload, SHIM).median() / runs.peakKib(workload, "mimalloc").median())).append(" |");
            final Samples toMimalloc = runs.timeRatios(workload, SHIM, "mimalloc");
            md.append(' ').append(String.format(Locale.ROOT, "%.2f", peakOverLarger(workload, SHIM))).append(" | ")
                .append(SignTest.above(toMimalloc)).append(" of ").append(toMimalloc.count()).append(" |\n");
            if (SignTest.pAbove(toMimalloc) < SignTest.SIGNIFICANCE)
            {
                beyondNoise.add(workload);
            }
        }
        md.append('\n').append("Slower than mimalloc beyond this machine's noise (so many rounds above it that a fair ")
            .append("coin would give as many less often than ").append(SignTest.percent())
            .append(" times in 100: the sign test of the MPI table): ")
            .append(beyondNoise.isEmpty() ? "none" : String.join(", ", beyondNoise)).append(".\n\n");
        final List<String> noisy = noisyWorkloads(runs);
        if (noisy.isEmpty())
        {
            md.append("Every workload's rounds were steady: glibc's and mimalloc's own slowest run within ")
                .append(NOISY_SPREAD).append(" × their fastest.\n\n");
        }
        else
        {
            md.append("Noisy rounds (glibc's or mimalloc's own slowest run past ").append(NOISY_SPREAD)
                .append(" × their fastest: load from elsewhere, or a workload with two states): ")
                .append(String.join("; ", noisy))
                .append(". Their ratios are less certain; `./pinarena bench --step malloc` measures the step again.\n\n");
        }

        final CategoryChart time = Charts.bars("Time relative to glibc (lower is better)", "workload",
            "median of per-round time ÷ glibc's", false);
        final CategoryChart peak = Charts.bars("Peak memory relative to the larger of glibc and mimalloc (lower is better)",
            "workload", "median peak ÷ max(glibc, mimalloc)", false);
        for (final String allocator : allocators)
        {
            final List<Double> relative = new ArrayList<>();
            final List<Double> peakRatio = new ArrayList<>();
            for (final String workload : workloads)
            {
                relative.add(runs.timeRatios(workload, allocator, "glibc").median());
                peakRatio.add(peakOverLarger(workload, allocator));
            }
            time.addSeries(allocator, workloads, relative);
            peak.addSeries(allocator, workloads, peakRatio);
        }
        Charts.savePng(time, reportDir.resolve("malloc-time.png"));
        Charts.savePng(peak, reportDir.resolve("malloc-peak.png"));
        md.append("![malloc time](malloc-time.png)\n\n![malloc peak memory](malloc-peak.png)\n\n");
    }

    private double peakOverLarger(final String workload, final String allocator)
    {
        final double larger = Math.max(runs.peakKib(workload, "glibc").median(), runs.peakKib(workload, "mimalloc").median());
        return runs.peakKib(workload, allocator).median() / larger;
    }

    /**
     * @param runs the step's runs.
     * @return per workload whose glibc or mimalloc runs spread past {@link #NOISY_SPREAD}, its name and those
     *         spreads (slowest ÷ fastest), e.g. {@code aligned (glibc 1.03×, mimalloc 1.36×)}; empty when none did.
     */
    static List<String> noisyWorkloads(final MallocRuns runs)
    {
        final List<String> noisy = new ArrayList<>();
        for (final String workload : runs.workloads())
        {
            boolean past = false;
            final StringBuilder spreads = new StringBuilder();
            for (final String reference : REFERENCES)
            {
                if (!runs.has(workload, reference))
                {
                    continue;
                }
                final Samples s = runs.seconds(workload, reference);
                final double spread = s.max() / s.min();
                past |= spread > NOISY_SPREAD;
                spreads.append(spreads.length() == 0 ? "" : ", ")
                    .append(String.format(Locale.ROOT, "%s %.2f×", reference, spread));
            }
            if (past)
            {
                noisy.add(workload + " (" + spreads + ")");
            }
        }
        return noisy;
    }

    static String ratioCell(final Samples ratios)
    {
        return String.format(Locale.ROOT, "%.2f (%.2f–%.2f)", ratios.median(), ratios.min(), ratios.max());
    }
}

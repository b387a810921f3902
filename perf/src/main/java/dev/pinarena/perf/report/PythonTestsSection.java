package dev.pinarena.perf.report;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * "What does a real program hold under the shim?" — the peak memory of CPython's own regression tests under
 * libpinarena.so against glibc, with CPython's small-object allocator and with every object from malloc, and
 * whether each test passed under both.
 */
public final class PythonTestsSection implements ReportSection
{
    /** The peak the issue allows the shim: at most this times glibc's. */
    static final double PEAK_BOUND = 1.25;

    private static final List<String> MODES = List.of("pymalloc", "malloc");

    private final PythonTestRuns runs;

    /**
     * @param runs the runs of {@code perf/python/run.sh}.
     */
    public PythonTestsSection(final PythonTestRuns runs)
    {
        this.runs = runs;
    }

    public void write(final StringBuilder md, final Path reportDir)
    {
        md.append("## What does a real program hold under the shim (CPython's regression tests)?\n\n");
        if (runs.runs().isEmpty())
        {
            md.append("Not measured in this run (`perf/python/run.sh` wrote no results: is ")
                .append("`libpython3.11-testsuite` installed?).\n\n");
            return;
        }
        md.append("`python3 -m test TEST` in one process (no worker subprocess), under glibc and under ")
            .append("`LD_PRELOAD=libpinarena.so`, with CPython's small-object allocator (`pymalloc`, objects up to ")
            .append("512 bytes from its own mmap'd arenas) and with `PYTHONMALLOC=malloc` (every object from malloc); ")
            .append("rounds interleaved, each round's four runs with the same random seed (`--randseed`, ")
            .append("`PYTHONHASHSEED`: the same work). Peak = VmHWM + HugetlbPages of the process that ran the test, ")
            .append("median of the ")
            .append("rounds; ratio = median of the per-round ratios pinarena ÷ glibc (each round's runs lie close ")
            .append("together in time), with its smallest and largest. The shim should stay within ")
            .append(String.format(Locale.ROOT, "%.2f", PEAK_BOUND)).append("× glibc's peak.\n\n");
        md.append("| test | objects | rounds | glibc peak MiB | pinarena peak MiB | pinarena ÷ glibc peak | ")
            .append("pinarena ÷ glibc time | passed (glibc / pinarena) |\n");
        md.append("|---|---|---:|---:|---:|---:|---:|---|\n");
        for (final String test : runs.tests())
        {
            for (final String mode : MODES)
            {
                final List<PythonTestRuns.Run> glibc = runs.of(test, mode, "glibc");
                final List<PythonTestRuns.Run> shim = runs.of(test, mode, "pinarena");
                if (glibc.isEmpty() && shim.isEmpty())
                {
                    continue;
                }
                md.append("| ").append(test).append(" | ").append(mode).append(" | ")
                    .append(Math.min(glibc.size(), shim.size())).append(" | ")
                    .append(mib(glibc)).append(" | ").append(mib(shim)).append(" | ");
                final double[] peak = perRound(glibc, shim, true);
                final double[] time = perRound(glibc, shim, false);
                md.append(peak == null ? "–" : cell(peak) + (peak[1] > PEAK_BOUND ? " **over**" : ""))
                    .append(" | ").append(time == null ? "–" : cell(time)).append(" | ")
                    .append(passed(glibc)).append(" / ").append(passed(shim)).append(" |\n");
            }
        }
        md.append('\n');
    }

    /**
     * pinarena ÷ glibc per round in which both ran: {min, median, max}, or null if no round has both.
     */
    static double[] perRound(final List<PythonTestRuns.Run> glibc, final List<PythonTestRuns.Run> shim,
        final boolean peak)
    {
        final Map<Integer, PythonTestRuns.Run> byRound = new HashMap<>();
        glibc.forEach(r -> byRound.put(r.round(), r));
        final List<Double> ratios = new ArrayList<>();
        for (final PythonTestRuns.Run s : shim)
        {
            final PythonTestRuns.Run g = byRound.get(s.round());
            if (g != null)
            {
                ratios.add(peak ? (double)s.peakKib() / g.peakKib() : s.seconds() / g.seconds());
            }
        }
        if (ratios.isEmpty())
        {
            return null;
        }
        final Samples samples = Samples.of(ratios);
        return new double[] {samples.min(), samples.median(), samples.max()};
    }

    private static String mib(final List<PythonTestRuns.Run> runs)
    {
        if (runs.isEmpty())
        {
            return "–";
        }
        final Samples peaks = new Samples(runs.stream().mapToDouble(r -> r.peakKib() / 1024.0).toArray());
        return String.format(Locale.ROOT, "%.1f", peaks.median());
    }

    private static String cell(final double[] ratio)
    {
        return String.format(Locale.ROOT, "%.2f (%.2f–%.2f)", ratio[1], ratio[0], ratio[2]);
    }

    private static String passed(final List<PythonTestRuns.Run> runs)
    {
        final long ok = runs.stream().filter(PythonTestRuns.Run::passed).count();
        return ok == runs.size() ? "yes" : "**" + (runs.size() - ok) + " of " + runs.size() + " failed**";
    }
}

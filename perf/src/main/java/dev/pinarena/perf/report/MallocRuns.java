package dev.pinarena.perf.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The native allocator benchmark's runs ({@code perf/native/collect.sh}):
 * {@code workload,allocator,run,seconds,peak_kib}.
 */
public final class MallocRuns
{
    private final Map<String, Map<String, List<double[]>>> byWorkload = new LinkedHashMap<>();

    private MallocRuns()
    {
    }

    /**
     * @param file the CSV; a missing file gives no runs.
     * @return the runs.
     * @throws IOException if the file cannot be read.
     * @throws CsvFormatException for a row that is not of the format, naming the file, line and column.
     */
    public static MallocRuns read(final Path file) throws IOException
    {
        final MallocRuns runs = new MallocRuns();
        for (final CsvRows.Row row : CsvRows.read(file))
        {
            runs.byWorkload.computeIfAbsent(row.text("workload"), k -> new LinkedHashMap<>())
                .computeIfAbsent(row.text("allocator"), k -> new ArrayList<>())
                .add(new double[] {row.doubleValue("seconds"), row.doubleValue("peak_kib"), row.doubleValue("run")});
        }
        return runs;
    }

    /**
     * @return true if nothing was measured.
     */
    public boolean isEmpty()
    {
        return byWorkload.isEmpty();
    }

    /**
     * @return workloads in file order.
     */
    public List<String> workloads()
    {
        return new ArrayList<>(byWorkload.keySet());
    }

    /**
     * @param workload a workload.
     * @return allocators measured on it, in file order.
     */
    public List<String> allocators(final String workload)
    {
        return new ArrayList<>(byWorkload.get(workload).keySet());
    }

    /**
     * @return run times in seconds.
     */
    public Samples seconds(final String workload, final String allocator)
    {
        return column(workload, allocator, 0);
    }

    /**
     * collect.sh runs every allocator once per round, back to back, so a round's runs share the machine's state: a
     * burst of load from elsewhere lands on one round, not on one allocator.
     *
     * @return per round that measured both, {@code a}'s seconds ÷ {@code b}'s; NaN samples when no round did.
     */
    public Samples timeRatios(final String workload, final String a, final String b)
    {
        final List<Double> ratios = new ArrayList<>();
        for (final double[] runA : byWorkload.get(workload).get(a))
        {
            for (final double[] runB : byWorkload.get(workload).get(b))
            {
                if (runA[2] == runB[2])
                {
                    ratios.add(runA[0] / runB[0]);
                }
            }
        }
        return ratios.isEmpty() ? new Samples(Double.NaN) : Samples.of(ratios);
    }

    /**
     * @return peak memory in KiB (VmHWM + HugetlbPages).
     */
    public Samples peakKib(final String workload, final String allocator)
    {
        return column(workload, allocator, 1);
    }

    /**
     * @return true if that pair was measured.
     */
    public boolean has(final String workload, final String allocator)
    {
        return byWorkload.containsKey(workload) && byWorkload.get(workload).containsKey(allocator);
    }

    private Samples column(final String workload, final String allocator, final int index)
    {
        final List<double[]> runs = byWorkload.get(workload).get(allocator);
        final double[] values = new double[runs.size()];
        for (int i = 0; i < values.length; i++)
        {
            values[i] = runs.get(i)[index];
        }
        return new Samples(values);
    }
}

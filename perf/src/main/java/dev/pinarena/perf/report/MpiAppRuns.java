package dev.pinarena.perf.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Real MPI applications under glibc, glibc with the stacks' hooks-off settings and the shim, interleaved
 * ({@code perf/mpi-apps/run.sh}): {@code where,app,phase,metric,unit,better,round,allocator,value}, one row per
 * measurement.
 */
public final class MpiAppRuns
{
    /** The allocator every ratio compares against. */
    public static final String GLIBC = "glibc";
    /** The shim's allocator name in the CSV. */
    public static final String SHIM = "pinarena";
    /** glibc launched with the settings the shim's launch applies ({@code pinarena exec --no-shim}), no preload. */
    public static final String SETTINGS = "glibc+settings";

    /**
     * One metric of one application at one place, every round's value per allocator.
     *
     * @param where        {@code host} (shared memory) or {@code rxe0} (Soft-RoCE guest).
     * @param app          {@code hpcc} or {@code netpipe}.
     * @param phase        the application's phase (HPL, DGEMM, STREAM, ...; {@code all} for the wall time).
     * @param metric       the application's own name for the figure.
     * @param unit         its unit.
     * @param higherBetter true for rates, false for times.
     * @param rounds       round number → allocator → value.
     */
    public record Metric(String where, String app, String phase, String metric, String unit, boolean higherBetter,
        Map<Integer, Map<String, Double>> rounds)
    {
        /**
         * @param allocator an allocator name.
         * @return its values over the rounds, or null if none.
         */
        public Samples samples(final String allocator)
        {
            final List<Double> values = new ArrayList<>();
            for (final Map<String, Double> round : rounds.values())
            {
                final Double v = round.get(allocator);
                if (v != null)
                {
                    values.add(v);
                }
            }
            return values.isEmpty() ? null : Samples.of(values);
        }

        /**
         * The shim's cost against glibc in time terms: {@link #pairedTimeRatios(String, String)} of the shim
         * over glibc.
         *
         * @return the per-round ratios, sorted; null if no round measured both.
         */
        public Samples pairedTimeRatios()
        {
            return pairedTimeRatios(SHIM, GLIBC);
        }

        /**
         * One configuration's cost against another in time terms, one per round that measured both (rounds
         * interleave the configurations, so a pair shares the machine's load): {@code of ÷ against} for times,
         * {@code against ÷ of} for rates. Above 1.0: {@code of} is slower.
         *
         * @param of      the allocator name measured.
         * @param against the allocator name it is compared with.
         * @return the per-round ratios, sorted; null if no round measured both.
         */
        public Samples pairedTimeRatios(final String of, final String against)
        {
            final List<Double> ratios = new ArrayList<>();
            for (final Map<String, Double> round : rounds.values())
            {
                final Double base = round.get(against);
                final Double value = round.get(of);
                if (base != null && value != null && base > 0 && value > 0)
                {
                    ratios.add(higherBetter ? base / value : value / base);
                }
            }
            return ratios.isEmpty() ? null : Samples.of(ratios);
        }
    }

    private final Map<String, Metric> metrics = new LinkedHashMap<>();

    private MpiAppRuns()
    {
    }

    /**
     * @param files CSVs as {@code run.sh} writes them (host and rxe0); missing files give no rows.
     * @return the metrics in file order.
     * @throws IOException if a file cannot be read.
     * @throws CsvFormatException for a row that is not of the format, naming the file, line and column.
     */
    public static MpiAppRuns read(final List<Path> files) throws IOException
    {
        final MpiAppRuns runs = new MpiAppRuns();
        for (final Path file : files)
        {
            for (final CsvRows.Row row : CsvRows.read(file))
            {
                final String better = row.text("better");
                if (!("lower".equals(better) || "higher".equals(better)))
                {
                    throw row.error("better", "not lower or higher: '" + better + "'");
                }
                final String where = row.text("where");
                final String app = row.text("app");
                final String metric = row.text("metric");
                final Metric m = runs.metrics.computeIfAbsent(where + "/" + app + "/" + metric,
                    k -> new Metric(where, app, row.text("phase"), metric, row.text("unit"), "higher".equals(better),
                        new TreeMap<>()));
                m.rounds().computeIfAbsent(row.intValue("round"), k -> new LinkedHashMap<>())
                    .put(row.text("allocator"), row.doubleValue("value"));
            }
        }
        return runs;
    }

    /**
     * @return every metric, in file order.
     */
    public List<Metric> metrics()
    {
        return new ArrayList<>(metrics.values());
    }

    /**
     * @param where  host or rxe0.
     * @param app    hpcc or netpipe.
     * @param metric the metric's name.
     * @return the metric, or null if not measured.
     */
    public Metric find(final String where, final String app, final String metric)
    {
        return metrics.get(where + "/" + app + "/" + metric);
    }
}

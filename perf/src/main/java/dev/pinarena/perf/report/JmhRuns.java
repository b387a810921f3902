package dev.pinarena.perf.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every measured JMH iteration of one run, as {@code JmhSuite} writes them:
 * {@code benchmark,method,threads,size,fork,iteration,ns_per_op,alloc_bytes_per_op}.
 */
public final class JmhRuns
{
    private final Map<String, List<double[]>> byKey = new LinkedHashMap<>();

    private JmhRuns()
    {
    }

    /**
     * @param file the CSV; a missing file gives no runs.
     * @return the iterations.
     * @throws IOException if the file cannot be read.
     * @throws CsvFormatException for a row that is not of the format, naming the file, line and column.
     */
    public static JmhRuns read(final Path file) throws IOException
    {
        final JmhRuns runs = new JmhRuns();
        for (final CsvRows.Row row : CsvRows.read(file))
        {
            runs.byKey.computeIfAbsent(key(row.text("benchmark"), row.text("method"), row.text("size")),
                k -> new ArrayList<>()).add(new double[] {row.doubleValue("ns_per_op"), row.doubleOrNaN("alloc_bytes_per_op")});
        }
        return runs;
    }

    /**
     * @return true if nothing was measured.
     */
    public boolean isEmpty()
    {
        return byKey.isEmpty();
    }

    /**
     * @return true if that benchmark method was measured at that size.
     */
    public boolean has(final String benchmark, final String method, final String size)
    {
        return byKey.containsKey(key(benchmark, method, size));
    }

    /**
     * @return its iterations' ns/op.
     */
    public Samples nanos(final String benchmark, final String method, final String size)
    {
        return column(benchmark, method, size, 0);
    }

    /**
     * @return its iterations' heap bytes allocated per op (JMH's gc profiler).
     */
    public Samples allocatedBytes(final String benchmark, final String method, final String size)
    {
        return column(benchmark, method, size, 1);
    }

    /**
     * @return the sizes measured for a benchmark class, in file order.
     */
    public List<String> sizes(final String benchmark)
    {
        final List<String> sizes = new ArrayList<>();
        for (final String key : byKey.keySet())
        {
            final String[] parts = key.split("/");
            if (parts[0].equals(benchmark) && !sizes.contains(parts[2]))
            {
                sizes.add(parts[2]);
            }
        }
        sizes.sort((a, b) -> Long.compare(Long.parseLong(a), Long.parseLong(b)));
        return sizes;
    }

    private Samples column(final String benchmark, final String method, final String size, final int index)
    {
        final List<double[]> rows = byKey.get(key(benchmark, method, size));
        final double[] values = new double[rows.size()];
        for (int i = 0; i < values.length; i++)
        {
            values[i] = rows.get(i)[index];
        }
        return new Samples(values);
    }

    private static String key(final String benchmark, final String method, final String size)
    {
        return benchmark + "/" + method + "/" + size;
    }
}

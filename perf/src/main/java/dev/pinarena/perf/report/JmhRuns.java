package dev.pinarena.perf.report;

import java.io.IOException;
import java.nio.file.Files;
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
     */
    public static JmhRuns read(final Path file) throws IOException
    {
        final JmhRuns runs = new JmhRuns();
        if (!Files.isRegularFile(file))
        {
            return runs;
        }
        for (final String line : Files.readAllLines(file))
        {
            final String[] f = line.split(",", -1);
            if (f.length != 8 || f[0].equals("benchmark"))
            {
                continue;
            }
            runs.byKey.computeIfAbsent(key(f[0], f[1], f[3]), k -> new ArrayList<>())
                .add(new double[] {Double.parseDouble(f[6]), f[7].isEmpty() ? Double.NaN : Double.parseDouble(f[7])});
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

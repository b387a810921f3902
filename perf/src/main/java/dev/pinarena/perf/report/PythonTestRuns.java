package dev.pinarena.perf.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * CPython's regression tests run under glibc and under the shim ({@code perf/python/run.sh}):
 * {@code test,pythonmalloc,allocator,run,seconds,peak_kib,passed}, one row per run.
 */
public final class PythonTestRuns
{
    /**
     * One run of one test.
     *
     * @param test         the regression test ({@code test_dict}).
     * @param pythonMalloc {@code pymalloc} (CPython's default) or {@code malloc} ({@code PYTHONMALLOC=malloc}).
     * @param allocator    {@code glibc} or {@code pinarena}.
     * @param round        the round, 1-based; the runs of one round lie close together in time.
     * @param seconds      wall time.
     * @param peakKib      VmHWM + HugetlbPages of the process that ran the test.
     * @param passed       the test passed.
     */
    public record Run(String test, String pythonMalloc, String allocator, int round, double seconds, long peakKib,
        boolean passed)
    {
    }

    private final List<Run> runs = new ArrayList<>();

    private PythonTestRuns()
    {
    }

    /**
     * @param file the CSV; a missing file gives no runs.
     * @return the runs in file order.
     * @throws IOException if the file cannot be read.
     * @throws IllegalArgumentException if a row has the wrong number of fields.
     */
    public static PythonTestRuns read(final Path file) throws IOException
    {
        final PythonTestRuns result = new PythonTestRuns();
        if (!Files.isRegularFile(file))
        {
            return result;
        }
        for (final String line : Files.readAllLines(file))
        {
            if (line.isBlank() || line.startsWith("test,"))
            {
                continue;
            }
            final String[] f = line.split(",");
            if (f.length != 7)
            {
                throw new IllegalArgumentException(file + ": expected 7 fields, got " + f.length + ": " + line);
            }
            result.runs.add(new Run(f[0], f[1], f[2], Integer.parseInt(f[3]), Double.parseDouble(f[4]),
                Long.parseLong(f[5]), "1".equals(f[6])));
        }
        return result;
    }

    /**
     * @return every run, in file order.
     */
    public List<Run> runs()
    {
        return runs;
    }

    /**
     * @return the tests in file order.
     */
    public Set<String> tests()
    {
        final Set<String> tests = new LinkedHashSet<>();
        runs.forEach(r -> tests.add(r.test()));
        return tests;
    }

    /**
     * @param test         a test.
     * @param pythonMalloc {@code pymalloc} or {@code malloc}.
     * @param allocator    {@code glibc} or {@code pinarena}.
     * @return its runs, in round order of the file.
     */
    public List<Run> of(final String test, final String pythonMalloc, final String allocator)
    {
        final List<Run> of = new ArrayList<>();
        for (final Run r : runs)
        {
            if (r.test().equals(test) && r.pythonMalloc().equals(pythonMalloc) && r.allocator().equals(allocator))
            {
                of.add(r);
            }
        }
        return of;
    }
}

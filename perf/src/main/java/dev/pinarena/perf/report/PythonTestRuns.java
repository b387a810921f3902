package dev.pinarena.perf.report;

import java.io.IOException;
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
     * @throws CsvFormatException for a row that is not of the format, naming the file, line and column.
     */
    public static PythonTestRuns read(final Path file) throws IOException
    {
        final PythonTestRuns result = new PythonTestRuns();
        for (final CsvRows.Row row : CsvRows.read(file))
        {
            result.runs.add(new Run(row.text("test"), row.text("pythonmalloc"), row.text("allocator"),
                row.intValue("run"), row.doubleValue("seconds"), row.longValue("peak_kib"), "1".equals(row.text("passed"))));
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

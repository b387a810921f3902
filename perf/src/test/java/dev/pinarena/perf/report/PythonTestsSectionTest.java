package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CPython table: peaks are medians of the rounds, the ratio is the median of per-round ratios (a round's
 * glibc run against the same round's shim run, not medians of unpaired runs), a peak over the bound is
 * flagged, a failed run is counted, and a missing CSV is reported as not measured.
 */
class PythonTestsSectionTest
{
    private static final String HEADER = "test,pythonmalloc,allocator,run,seconds,peak_kib,passed";

    @Test
    void peaksAndRatiosPairedByRound(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("python-tests.csv");
        // pymalloc: three rounds; malloc: two rounds whose unpaired medians are equal but whose paired ratios are not
        Files.write(csv, List.of(HEADER,
            "test_dict,pymalloc,glibc,1,1.0,102400,1",
            "test_dict,pymalloc,pinarena,1,1.0,102400,1",
            "test_dict,pymalloc,glibc,2,1.0,204800,1",
            "test_dict,pymalloc,pinarena,2,2.0,409600,1",
            "test_dict,pymalloc,glibc,3,1.0,409600,1",
            "test_dict,pymalloc,pinarena,3,1.5,614400,1",
            "test_dict,malloc,glibc,1,2.0,409600,1",
            "test_dict,malloc,pinarena,1,1.0,102400,0",
            "test_dict,malloc,glibc,2,2.0,102400,1",
            "test_dict,malloc,pinarena,2,1.0,409600,1"));
        final StringBuilder md = new StringBuilder();
        new PythonTestsSection(PythonTestRuns.read(csv)).write(md, dir);
        final String text = md.toString();
        // pymalloc: glibc median 200 MiB, shim median 400 MiB; per-round ratios 1.0, 2.0, 1.5 -> 1.50 (1.00-2.00)
        assertTrue(text.contains("| test_dict | pymalloc | 3 | 200.0 | 400.0 | 1.50 (1.00–2.00) **over** | " +
            "1.50 (1.00–2.00) | yes / yes |"), text);
        // malloc: unpaired medians would be 250 / 250 = 1.00; per-round ratios 0.25 and 4.0 -> median 2.125
        assertTrue(text.contains("| test_dict | malloc | 2 | 250.0 | 250.0 | 2.13 (0.25–4.00) **over** | " +
            "0.50 (0.50–0.50) | yes / **1 of 2 failed** |"), text);
    }

    @Test
    void withinTheBoundIsNotFlagged(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("python-tests.csv");
        Files.write(csv, List.of(HEADER,
            "test_email,malloc,glibc,1,7.0,400000,1",
            "test_email,malloc,pinarena,1,7.0,480000,1"));
        final StringBuilder md = new StringBuilder();
        new PythonTestsSection(PythonTestRuns.read(csv)).write(md, dir);
        assertTrue(md.toString().contains("| 1.20 (1.20–1.20) | 1.00 (1.00–1.00) | yes / yes |"), md.toString());
    }

    @Test
    void malformedRowIsRefusedByName(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("python-tests.csv");
        Files.write(csv, List.of(HEADER, "test_dict,malloc,glibc,1,2.0,409600"));
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PythonTestRuns.read(csv));
        assertTrue(e.getMessage().contains("expected 7 fields, got 6"), e.getMessage());
    }

    @Test
    void missingResultsSayNotMeasured(@TempDir final Path dir) throws Exception
    {
        final StringBuilder md = new StringBuilder();
        new PythonTestsSection(PythonTestRuns.read(dir.resolve("absent.csv"))).write(md, dir);
        assertTrue(md.toString().contains("Not measured in this run"), md.toString());
    }
}

package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mimalloc-bench table: ratios are medians of per-round ratios (not ratios of medians), a fixed-duration
 * program's CPU per work is its time per work scaled by CPU ÷ wall, and a ratio past its goal is bold and named; a
 * missing CSV is reported as not measured.
 */
class MimallocBenchSectionTest
{
    private static final String HEADER = "program,allocator,round,seconds,wall_s,cpu_s,peak_kib";

    @Test
    void ratiosPerRoundAndGoals(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("mimalloc-bench.csv");
        Files.write(csv, List.of(HEADER,
            // round 3 has a burst of load on mimalloc's run: a ratio of medians would say 0.50
            "cfrac,glibc,1,1.0,1.0,0.5,2048", "cfrac,mimalloc,1,1.0,1.0,0.5,3072", "cfrac,pinarena,1,0.9,0.9,0.45,3072",
            "cfrac,pinarena,2,1.9,1.9,0.95,3072", "cfrac,glibc,2,2.0,2.0,1.0,2048", "cfrac,mimalloc,2,2.0,2.0,1.0,3072",
            "cfrac,mimalloc,3,3.0,3.0,1.5,3072", "cfrac,pinarena,3,1.0,1.0,0.5,3072", "cfrac,glibc,3,1.1,1.1,0.55,2048",
            // larson runs a fixed time and prints its time per fixed work
            "larson,glibc,1,700,5.0,1.0,10240", "larson,mimalloc,1,80,5.0,1.9,20480",
            "larson,pinarena,1,96,5.0,1.9,30720"));
        final MimallocBenchRuns runs = MimallocBenchRuns.read(csv);
        assertEquals(List.of("cfrac", "larson"), runs.programs());
        assertFalse(runs.find("larson", "glibc", 1).fixedWork());
        assertEquals(140.0, runs.find("larson", "glibc", 1).cpuPerWork(), 1e-9);

        final StringBuilder md = new StringBuilder();
        new MimallocBenchSection(runs).write(md, dir);
        final String text = md.toString();
        assertTrue(text.contains("| cfrac | 1.100 | 2.000 | 1.000 | 0.90 | 0.91 | 0.90 | 0.91 | 2.0 / 3.0 / 3.0 | 1.00 |"),
            text);
        assertTrue(text.contains(
            "| larson | 700.000 | 80.000 | 96.000 | **1.20** | 0.14 | 1.20 | 0.26 | 10.0 / 20.0 / 30.0 | **1.50** |"), text);
        assertTrue(text.contains("Past the goal in this run: larson."), text);
    }

    @Test
    void missingResultsSayNotMeasured(@TempDir final Path dir) throws Exception
    {
        final StringBuilder md = new StringBuilder();
        new MimallocBenchSection(MimallocBenchRuns.read(dir.resolve("absent.csv"))).write(md, dir);
        assertTrue(md.toString().contains("Not measured in this run"), md.toString());
    }
}

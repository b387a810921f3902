package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mimalloc-bench table: ratios are medians of per-round ratios (not ratios of medians), CPU per work follows
 * what a program's time is (wall, per work over a fixed duration, per CPU second), and a ratio past its goal is bold
 * and named; a missing CSV is reported as not measured.
 */
class MimallocBenchSectionTest
{
    private static final String HEADER = "program,allocator,round,seconds,wall_s,cpu_s,peak_kib,time_is";

    @Test
    void ratiosPerRoundAndGoals(@TempDir final Path dir) throws Exception
    {
        final Path csv = dir.resolve("mimalloc-bench.csv");
        Files.write(csv, List.of(HEADER,
            // round 3 has a burst of load on mimalloc's run: a ratio of medians would say 0.50
            "cfrac,glibc,1,1.0,1.0,0.5,2048,wall", "cfrac,mimalloc,1,1.0,1.0,0.5,3072,wall",
            "cfrac,pinarena,1,0.9,0.9,0.45,3072,wall",
            "cfrac,pinarena,2,1.9,1.9,0.95,3072,wall", "cfrac,glibc,2,2.0,2.0,1.0,2048,wall",
            "cfrac,mimalloc,2,2.0,2.0,1.0,3072,wall",
            "cfrac,mimalloc,3,3.0,3.0,1.5,3072,wall", "cfrac,pinarena,3,1.0,1.0,0.5,3072,wall",
            "cfrac,glibc,3,1.1,1.1,0.55,2048,wall",
            // larson runs a fixed time and prints its time per fixed work
            "larson,glibc,1,700,5.0,1.0,10240,per_work", "larson,mimalloc,1,80,5.0,1.9,20480,per_work",
            "larson,pinarena,1,96,5.0,1.9,30720,per_work",
            // rptest prints operations per CPU second: its time is CPU per work already
            "rptest,glibc,1,2.0,9.0,0.5,1024,per_cpu", "rptest,mimalloc,1,4.0,9.0,0.5,1024,per_cpu",
            "rptest,pinarena,1,3.0,9.0,0.1,1024,per_cpu"));
        final MimallocBenchRuns runs = MimallocBenchRuns.read(csv);
        assertEquals(List.of("cfrac", "larson", "rptest"), runs.programs());
        assertEquals(140.0, runs.find("larson", "glibc", 1).cpuPerWork(), 1e-9);

        final StringBuilder md = new StringBuilder();
        new MimallocBenchSection(runs).write(md, dir);
        final String text = md.toString();
        assertTrue(text.contains("| cfrac | 1.100 | 2.000 | 1.000 | 0.90 | 0.91 | 0.90 | 0.91 | 2.0 / 3.0 / 3.0 | 1.00 | 0 of 3 |"),
            text);
        assertTrue(text.contains(
            "| larson | 700.000 | 80.000 | 96.000 | **1.20** | 0.14 | 1.20 | 0.26 | 10.0 / 20.0 / 30.0 | **1.50** | 1 of 1 |"), text);
        assertTrue(text.contains("| rptest | 2.000 | 4.000 | 3.000 | 0.75 | **1.50** | 0.75 | 1.50 | 1.0 / 1.0 / 1.0 | 1.00 | 0 of 1 |"),
            text);
        assertTrue(text.contains("Past the goal in this run: larson, rptest. Slower than mimalloc beyond this " +
            "machine's noise (sign test): none."), text);
    }

    @Test
    void slowerBeyondNoiseOnlyWhenTheSignTestSaysSo(@TempDir final Path dir) throws Exception
    {
        final List<String> rows = new java.util.ArrayList<>(List.of(HEADER));
        // espresso: 1 % past mimalloc in all 5 rounds (1 in 32 by chance); barnes: 20 % past in 4 of 5 (6 in 32)
        final double[] barnes = {1.2, 1.2, 1.2, 1.2, 0.9};
        for (int r = 1; r <= 5; r++)
        {
            rows.add("espresso,mimalloc," + r + ",1.0,1.0,1.0,1024,wall");
            rows.add("espresso,pinarena," + r + ",1.01,1.01,1.01,1024,wall");
            rows.add("espresso,glibc," + r + ",2.0,2.0,2.0,1024,wall");
            rows.add("barnes,mimalloc," + r + ",1.0,1.0,1.0,1024,wall");
            rows.add("barnes,pinarena," + r + "," + barnes[r - 1] + ",1.0,1.0,1024,wall");
            rows.add("barnes,glibc," + r + ",2.0,2.0,2.0,1024,wall");
        }
        final Path csv = dir.resolve("mimalloc-bench.csv");
        Files.write(csv, rows);
        final StringBuilder md = new StringBuilder();
        new MimallocBenchSection(MimallocBenchRuns.read(csv)).write(md, dir);
        final String text = md.toString();
        assertTrue(text.contains("| **1.01** | 0.51 |"), text);
        assertTrue(text.contains("| 5 of 5 |"), text);
        assertTrue(text.contains("| 4 of 5 |"), text);
        assertTrue(text.contains("Past the goal in this run: espresso, barnes. Slower than mimalloc beyond this " +
            "machine's noise (sign test): espresso."), text);
    }

    @Test
    void missingResultsSayNotMeasured(@TempDir final Path dir) throws Exception
    {
        final StringBuilder md = new StringBuilder();
        new MimallocBenchSection(MimallocBenchRuns.read(dir.resolve("absent.csv"))).write(md, dir);
        assertTrue(md.toString().contains("Not measured in this run"), md.toString());
    }
}

package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The run's time per step against its budget, and the cuts, as perf/bench and the steps write them. */
class RunTimeSectionTest
{
    @Test
    void stepsOverTheirBudgetAndEveryCutAreShown(@TempDir final Path dir) throws Exception
    {
        Files.write(dir.resolve("steps.csv"), List.of("step,budget_s,seconds",
            "build (mvn, package),15,9", "JMH suite (quick),80,95"));
        Files.write(dir.resolve("cuts.csv"), List.of("malloc,big,1 of 3 rounds",
            "jmh,SendMemoryBenchmark,100 ms of warmup and 2 iterations of 50 ms"));
        final StringBuilder md = new StringBuilder();
        RunTimeSection.read(dir).write(md, dir);
        final String text = md.toString();
        assertTrue(text.contains("| build (mvn, package) | 9 | 15 |"), text);
        assertTrue(text.contains("| JMH suite (quick) | 95 | 80 (over) |"), text);
        assertTrue(text.contains("| all steps but the report | 104 | |"), text);
        assertTrue(text.contains("- malloc, big: 1 of 3 rounds"), text);
        assertTrue(text.contains("- jmh, SendMemoryBenchmark: 100 ms of warmup and 2 iterations of 50 ms"), text);
    }

    @Test
    void aRunWithoutCutsSaysSo(@TempDir final Path dir) throws Exception
    {
        Files.write(dir.resolve("steps.csv"), List.of("step,budget_s,seconds", "report,0,3"));
        final StringBuilder md = new StringBuilder();
        RunTimeSection.read(dir).write(md, dir);
        assertTrue(md.toString().contains("No step cut a round"), md.toString());
        assertFalse(md.toString().contains("(over)"), md.toString());
        assertTrue(md.toString().contains("| report | 3 | none |"), md.toString());
    }
}

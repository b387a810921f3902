package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
    void stepsRunAgainAreCountedTheBuildAside(@TempDir final Path dir) throws Exception
    {
        Files.write(dir.resolve("steps.csv"), List.of("step,budget_s,seconds",
            "JMH suite (full): arena, Netty,0,1114",
            "build (mvn)" + RunTimeSection.RUN_AGAIN + "2026-12-05 08:10 UTC on 8cafef3,0,4",
            "C malloc benchmark (7 rounds)" + RunTimeSection.RUN_AGAIN + "2026-12-05 08:10 UTC on 8cafef3,0,400"));
        final RunTimeSection section = RunTimeSection.read(dir);
        assertEquals(1, section.stepsRunAgain());
        final StringBuilder md = new StringBuilder();
        section.write(md, dir);
        assertTrue(md.toString().contains("| C malloc benchmark (7 rounds) — run again 2026-12-05 08:10 UTC on 8cafef3 | 400 |"),
            md.toString());
        Files.write(dir.resolve("steps.csv"), List.of("step,budget_s,seconds", "JMH suite (full),0,1114"));
        assertEquals(0, RunTimeSection.read(dir).stepsRunAgain());
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

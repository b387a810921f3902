package dev.pinarena.perf;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@code perf/step-results.sh}: a step run again ({@code perf/bench --step}) that measured nothing keeps the last
 * run's files and cuts; in a whole run the step's files are left out; a step that measured keeps what it measured.
 */
class StepResultsTest
{
    @TempDir
    Path dir;

    private String run(final String steps, final String body) throws IOException, InterruptedException
    {
        final Path script = Path.of("step-results.sh").toAbsolutePath();
        assertTrue(Files.isRegularFile(script), "perf/step-results.sh not found from " + Path.of("").toAbsolutePath());
        final String program = "set -euo pipefail; source \"$1\"; results_set_aside \"$2\" \"$3\"; " + body;
        final Process p = new ProcessBuilder(List.of("bash", "-c", program, "test", script.toString(),
            dir.resolve("results").toString(), steps)).redirectErrorStream(true).start();
        if (!p.waitFor(30, TimeUnit.SECONDS))
        {
            p.destroyForcibly();
            fail("the script did not return");
        }
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    private void lastRun() throws IOException
    {
        final Path results = Files.createDirectories(dir.resolve("results"));
        Files.writeString(results.resolve("mimalloc-bench.csv"), "program,allocator\ncfrac,glibc\n");
        Files.writeString(results.resolve("malloc.csv"), "workload\nchurn\n");
        Files.writeString(results.resolve("cuts.csv"), "malloc,churn,3 of 7\nmimalloc-bench,rptest,2 of 5\n");
    }

    private String read(final String name) throws IOException
    {
        return Files.readString(dir.resolve("results").resolve(name));
    }

    /** The last run's results, then STEP (run again with --step STEPS) writes part of FILE and measures nothing. */
    private void failedLeavingNothing(final String steps, final String step, final String file) throws Exception
    {
        lastRun();
        final String out = run(steps, "printf 'partial\\n' > \"$2/" + file + "\"; " +
            "results_unmeasured " + step + " " + file + "; echo kept=$results_kept; results_done");
        assertTrue(out.contains("kept=0"), out);
        assertFalse(Files.exists(dir.resolve("results").resolve(file)), "a partial file stayed");
    }

    @Test
    void aStepRunAgainThatMeasuredNothingKeepsTheLastFiguresAndCuts() throws Exception
    {
        lastRun();
        final String out = run("mimalloc-bench",
            // the failed run wrote part of a file and its step's cuts were cleared, as perf/bench does
            "printf 'program\\n' > \"$2/mimalloc-bench.csv\"; printf 'malloc,churn,3 of 7\\n' > \"$2/cuts.csv\"; " +
            "results_unmeasured mimalloc-bench mimalloc-bench.csv; echo kept=$results_kept; results_done");
        assertTrue(out.contains("kept=1"), out);
        assertEquals("program,allocator\ncfrac,glibc\n", read("mimalloc-bench.csv"));
        assertEquals("malloc,churn,3 of 7\nmimalloc-bench,rptest,2 of 5\n", read("cuts.csv"));
        assertEquals("workload\nchurn\n", read("malloc.csv"));
        assertFalse(Files.exists(dir.resolve("results.last")), "results_done leaves the copy behind");
    }

    @Test
    void aWholeRunLeavesOutWhatAStepDidNotMeasure() throws Exception
    {
        failedLeavingNothing("", "mimalloc-bench", "mimalloc-bench.csv");
        assertFalse(Files.exists(dir.resolve("results.last")), "a whole run set a copy aside");
    }

    @Test
    void aStepNeverMeasuredBeforeHasNothingToKeep() throws Exception
    {
        failedLeavingNothing("python", "python", "python-tests.csv");
        assertEquals("malloc,churn,3 of 7\nmimalloc-bench,rptest,2 of 5\n", read("cuts.csv"));
    }

    @Test
    void aStepThatMeasuredKeepsItsNewFigures() throws Exception
    {
        lastRun();
        run("mimalloc-bench", "printf 'program,allocator\\nespresso,glibc\\n' > \"$2/mimalloc-bench.csv\"; results_done");
        assertEquals("program,allocator\nespresso,glibc\n", read("mimalloc-bench.csv"));
        assertFalse(Files.exists(dir.resolve("results.last")), "results_done leaves the copy behind");
    }
}

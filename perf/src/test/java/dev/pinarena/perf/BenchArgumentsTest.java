package dev.pinarena.perf;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@code perf/bench}'s arguments: what it refuses, it refuses before it builds, measures or touches the last
 * run's results (exit 2, naming the problem and the steps there are), and its help names every step.
 */
class BenchArgumentsTest
{
    private record Result(int exit, String output)
    {
    }

    private static Result bench(final String... args) throws IOException, InterruptedException
    {
        final Path script = Path.of("bench").toAbsolutePath();
        assertTrue(Files.isRegularFile(script), "perf/bench not found from " + Path.of("").toAbsolutePath());
        final List<String> command = new ArrayList<>(List.of("bash", script.toString()));
        command.addAll(List.of(args));
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        if (!p.waitFor(30, TimeUnit.SECONDS))
        {
            p.descendants().forEach(ProcessHandle::destroyForcibly);   // it went on to build and measure
            p.destroyForcibly();
            fail("perf/bench did not return at once: it accepted " + List.of(args));
        }
        return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    @Test
    void anUnknownStepIsRefusedNamingTheSteps() throws Exception
    {
        final Result r = bench("--step", "malloc,nope");
        assertEquals(2, r.exit(), r.output());
        assertTrue(r.output().contains("no step 'nope' (steps: jmh malloc mimalloc-bench python curve apps guest)"),
            r.output());
    }

    @Test
    void stepWithoutNamesAndUnknownArgumentsAreRefused() throws Exception
    {
        final Result none = bench("--step");
        assertEquals(2, none.exit(), none.output());
        assertTrue(none.output().contains("--step needs step names"), none.output());
        final Result unknown = bench("--fast");
        assertEquals(2, unknown.exit(), unknown.output());
        assertTrue(unknown.output().contains("unknown argument '--fast'"), unknown.output());
    }

    @Test
    void helpNamesEveryStep() throws Exception
    {
        final Result r = bench("--help");
        assertEquals(0, r.exit(), r.output());
        assertTrue(r.output().contains("Steps: jmh, malloc, mimalloc-bench,"), r.output());
        assertTrue(r.output().contains("--step"), r.output());
    }
}

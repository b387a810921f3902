package dev.pinarena.perf;

import dev.pinarena.perf.cache.CacheHitBenchmark;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.util.Collection;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Keeps the benchmarks from rotting: each runs once, in one fork, for one tiny iteration. No timing is
 * asserted, only that every benchmark ran and produced a score.
 */
class BenchmarkSmokeTest
{
    @Test
    void everyBenchmarkRunsOnce() throws Exception
    {
        final Options options = new OptionsBuilder()
            .include(AllocateFreeBenchmark.class.getSimpleName())
            .include(CrossThreadFreeBenchmark.class.getSimpleName())
            .param("size", "4096", "1048576")
            .forks(1)
            .warmupIterations(0)
            .measurementIterations(1)
            .measurementTime(TimeValue.milliseconds(50))
            .shouldFailOnError(true)
            .build();
        final Collection<RunResult> results = new Runner(options).run();
        assertEquals(16, results.size(), "4 contenders x 2 sizes x (one thread, two threads)");
        for (final RunResult result : results)
        {
            final double score = result.getPrimaryResult().getScore();
            if (!(score > 0))
            {
                throw new AssertionError(result.getParams().getBenchmark() + " produced no score: " + score);
            }
        }
    }

    @Test
    void cacheBenchmarkRunsOnce() throws Exception
    {
        final Options options = new OptionsBuilder()
            .include(CacheHitBenchmark.class.getSimpleName())
            .param("size", "65536")
            .forks(1)
            .warmupIterations(0)
            .measurementIterations(1)
            .measurementTime(TimeValue.milliseconds(50))
            .shouldFailOnError(true)
            .build();
        final Collection<RunResult> results = new Runner(options).run();
        assertEquals(3, results.size(), "hit, miss, rawRegistration");
        for (final RunResult result : results)
        {
            assertEquals(true, result.getPrimaryResult().getScore() > 0, result.getParams().getBenchmark());
        }
    }
}

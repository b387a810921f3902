package dev.pinarena.perf;

import dev.pinarena.perf.cache.CacheHitBenchmark;
import dev.pinarena.perf.cache.JnrCrossingBenchmark;
import dev.pinarena.perf.report.ReportMain;
import dev.pinarena.perf.suite.JmhSuite;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.util.Collection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Keeps the benchmarks from rotting: each runs once, in one fork, for one tiny iteration. No timing is
 * asserted, only that every benchmark ran and produced a score.
 */
class BenchmarkSmokeTest
{
    @Test
    void everyBenchmarkRunsOnceAndFeedsTheReport(@TempDir final Path dir) throws Exception
    {
        final Collection<RunResult> results = runOnce(new OptionsBuilder()
            .include(AllocateFreeBenchmark.class.getSimpleName())
            .include(CrossThreadFreeBenchmark.class.getSimpleName())
            .include(SendMemoryBenchmark.class.getSimpleName())
            .param("size", "4096", "1048576"));
        assertEquals(24, results.size(),
            "(5 one-thread + 4 two-thread contenders) x 2 sizes + 3 send strategies x 2 sizes");

        // The suite's CSV and the report sections read what JMH produced.
        JmhSuite.write(results, dir.resolve("jmh.csv"));
        ReportMain.main(new String[] {dir.toString(), dir.resolve("report").toString(), "quick"});
        final String markdown = Files.readString(dir.resolve("report").resolve("REPORT.md"));
        assertTrue(markdown.contains("## How much faster is allocate + free (Java, one thread)?"), markdown);
        assertTrue(markdown.contains("| 4 KiB |"), markdown);
        assertTrue(markdown.contains("registerPerSend ÷ arenaBuffer"), markdown);
        assertTrue(Files.size(dir.resolve("report").resolve("send-cost.png")) > 1000);
    }

    @Test
    void batchManyToOneAndNettyBenchmarksRunOnceAndFeedTheReport(@TempDir final Path dir) throws Exception
    {
        final Collection<RunResult> results = runOnce(new OptionsBuilder()
            .include(BatchBenchmark.class.getSimpleName())
            .include(ManyToOneBenchmark.class.getSimpleName())
            .include(NettyAllocatorBenchmark.class.getSimpleName())
            .param("size", "4096"));
        assertEquals(6, results.size(), "pinarena and Netty pooled in each of the three");
        JmhSuite.write(results, dir.resolve("jmh.csv"));
        ReportMain.main(new String[] {dir.toString(), dir.resolve("report").toString(), "quick"});
        final String markdown = Files.readString(dir.resolve("report").resolve("REPORT.md"));
        assertTrue(markdown.contains("## How much faster are many producers to one consumer"), markdown);
        assertTrue(markdown.contains("## How much faster is Netty's own allocator interface"), markdown);
    }

    @Test
    void cacheBenchmarkRunsOnce() throws Exception
    {
        final Collection<RunResult> results = runOnce(new OptionsBuilder()
            .include(CacheHitBenchmark.class.getSimpleName())
            .param("size", "65536"));
        assertEquals(3, results.size(), "hit, miss, rawRegistration");
    }

    @Test
    void jnrCrossingBenchmarkRunsOnce() throws Exception
    {
        final Collection<RunResult> results = runOnce(new OptionsBuilder()
            .include(JnrCrossingBenchmark.class.getSimpleName()));
        assertEquals(4, results.size(), "downcall, downcallWithPointer, qsortCallsC, qsortCallsJava");
    }

    /** One short measured iteration of each selected benchmark, in one fork; every one must give a score. */
    private static Collection<RunResult> runOnce(final ChainedOptionsBuilder selection) throws Exception
    {
        final Options options = selection
            .forks(1)
            .warmupIterations(0)
            .measurementIterations(1)
            .measurementTime(TimeValue.milliseconds(50))
            .shouldFailOnError(true)
            .build();
        final Collection<RunResult> results = new Runner(options).run();
        for (final RunResult result : results)
        {
            final double score = result.getPrimaryResult().getScore();
            if (!(score > 0))
            {
                throw new AssertionError(result.getParams().getBenchmark() + " produced no score: " + score);
            }
        }
        return results;
    }
}

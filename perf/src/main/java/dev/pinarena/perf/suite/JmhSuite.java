package dev.pinarena.perf.suite;

import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Locale;

/**
 * Runs the Java benchmark suite (allocate + free on one and two threads, batches, many producers to one
 * consumer, Netty's allocator interface, the memory handling of one send)
 * and writes every measured iteration, so the report can give min / median / max and ratios from the same
 * run: {@code benchmark,method,threads,size,fork,iteration,ns_per_op,alloc_bytes_per_op}.
 * <p>
 * Usage: {@code JmhSuite quick|full OUT.csv}.
 */
public final class JmhSuite
{
    /** CSV header. */
    public static final String HEADER = "benchmark,method,threads,size,fork,iteration,ns_per_op,alloc_bytes_per_op";
    /** The benchmarks the suite runs, by class name. */
    public static final String[] BENCHMARKS = {
        "AllocateFreeBenchmark", "CrossThreadFreeBenchmark", "BatchBenchmark", "ManyToOneBenchmark",
        "NettyAllocatorBenchmark", "SendMemoryBenchmark"};

    private static final String ALLOC_NORM = "gc.alloc.rate.norm";

    private JmhSuite()
    {
    }

    /**
     * @param args mode and output file.
     * @throws RunnerException if JMH fails.
     * @throws IOException     if the output cannot be written.
     */
    public static void main(final String[] args) throws RunnerException, IOException
    {
        if (args.length != 2 || !(args[0].equals("quick") || args[0].equals("full")))
        {
            System.err.println("usage: JmhSuite quick|full OUT.csv");
            System.exit(2);
        }
        final boolean quick = args[0].equals("quick");
        final ChainedOptionsBuilder options = new OptionsBuilder()
            .forks(quick ? 1 : 2)
            .warmupIterations(quick ? 2 : 3)
            .warmupTime(TimeValue.milliseconds(quick ? 400 : 1000))
            .measurementIterations(quick ? 3 : 5)
            .measurementTime(TimeValue.milliseconds(quick ? 400 : 1000))
            .addProfiler(GCProfiler.class)
            .shouldFailOnError(true);
        for (final String benchmark : BENCHMARKS)
        {
            options.include("dev\\.pinarena\\.perf\\." + benchmark + "\\.");
        }
        final Collection<RunResult> results = new Runner(options.build()).run();
        write(results, Path.of(args[1]));
    }

    /**
     * @param results JMH's results.
     * @param out     the CSV to write.
     * @throws IOException if it cannot be written.
     */
    public static void write(final Collection<RunResult> results, final Path out) throws IOException
    {
        try (PrintStream csv = new PrintStream(Files.newOutputStream(out), true, StandardCharsets.UTF_8))
        {
            csv.println(HEADER);
            for (final RunResult run : results)
            {
                final String label = run.getParams().getBenchmark();
                final int dot = label.lastIndexOf('.');
                final String method = label.substring(dot + 1);
                final String benchmark = label.substring(label.lastIndexOf('.', dot - 1) + 1, dot);
                final String size = run.getParams().getParam("size");
                final int threads = run.getParams().getThreads();
                int fork = 0;
                for (final BenchmarkResult forkResult : run.getBenchmarkResults())
                {
                    fork++;
                    int iteration = 0;
                    for (final IterationResult it : forkResult.getIterationResults())
                    {
                        iteration++;
                        final Result<?> alloc = it.getSecondaryResults().get(ALLOC_NORM);
                        csv.println(String.format(Locale.ROOT, "%s,%s,%d,%s,%d,%d,%.3f,%s", benchmark, method, threads,
                            size == null ? "" : size, fork, iteration, it.getPrimaryResult().getScore(),
                            alloc == null ? "" : String.format(Locale.ROOT, "%.4f", alloc.getScore())));
                    }
                }
            }
        }
    }
}

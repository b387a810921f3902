package dev.pinarena.perf.suite;

import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.BenchmarkList;
import org.openjdk.jmh.runner.BenchmarkListEntry;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs the Java benchmark suite (allocate + free on one and two threads, batches, many producers to one
 * consumer, Netty's allocator interface, the memory handling of one send)
 * and writes every measured iteration, so the report can give min / median / max and ratios from the same
 * run: {@code benchmark,method,threads,size,fork,iteration,ns_per_op,alloc_bytes_per_op}.
 * <p>
 * Usage: {@code JmhSuite quick|full OUT.csv [BUDGET_SECONDS CUTS.csv]}: with a budget, a class that would overrun
 * its share ({@link RunBudget}) runs with short iterations, and a line {@code jmh,CLASS,what it kept} goes
 * to CUTS.csv for the report.
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
    /** What a class that would overrun its share runs with: on a busy machine a fork's start alone takes seconds. */
    private static final String CUT = "100 ms of warmup and 2 iterations of 50 ms, in the suite's JVM (no fork of its own)";

    private JmhSuite()
    {
    }

    /**
     * @param args mode, output file, and optionally a budget in seconds and the file cuts are appended to.
     * @throws RunnerException if JMH fails.
     * @throws IOException     if the output cannot be written.
     */
    public static void main(final String[] args) throws RunnerException, IOException
    {
        if (!(args.length == 2 || args.length == 4) || !(args[0].equals("quick") || args[0].equals("full")))
        {
            System.err.println("usage: JmhSuite quick|full OUT.csv [BUDGET_SECONDS CUTS.csv]");
            System.exit(2);
        }
        final boolean quick = args[0].equals("quick");
        final long budgetSeconds = args.length == 4 ? Long.parseLong(args[2]) : 0;
        final int[] runs = new int[BENCHMARKS.length];
        int total = 0;
        for (int i = 0; i < BENCHMARKS.length; i++)
        {
            runs[i] = runsOf(BENCHMARKS[i]);
            total += runs[i];
        }
        // One JMH run per class: between them the budget is checked, and a class that would overrun its
        // share runs with the short iterations (all of its methods and sizes still run).
        final long start = System.nanoTime();
        final RunBudget budget = new RunBudget(budgetSeconds * 1_000_000_000L, total, start);
        final List<RunResult> results = new ArrayList<>();
        int done = 0;
        for (int i = 0; i < BENCHMARKS.length; i++)
        {
            final double pace = done == 0 ? 0 : (double)(System.nanoTime() - start) / done;
            final boolean cut = budget.mustCut(done, runs[i], pace, System.nanoTime());
            if (cut)
            {
                System.err.printf(Locale.ROOT, "JmhSuite: %s cut to %s: at %.1f s a run it would overrun its share " +
                    "of the %d s budget%n", BENCHMARKS[i], CUT, pace / 1e9, budgetSeconds);
                Files.writeString(Path.of(args[3]), "jmh," + BENCHMARKS[i] + "," + CUT + "\n",
                    StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            }
            results.addAll(new Runner(options(quick, cut).include(pattern(BENCHMARKS[i])).build()).run());
            done += runs[i];
        }
        write(results, Path.of(args[1]));
    }

    /**
     * The iterations: the full run's, the quick run's, or a cut's (no fork: the class shares the JIT's
     * profiles with what ran before it in this JVM, which the report's cut list says).
     */
    private static ChainedOptionsBuilder options(final boolean quick, final boolean cut)
    {
        return new OptionsBuilder()
            .forks(cut ? 0 : quick ? 1 : 2)
            .warmupIterations(quick ? 1 : 3)
            .warmupTime(TimeValue.milliseconds(cut ? 100 : quick ? 200 : 1000))
            .measurementIterations(cut ? 2 : quick ? 3 : 5)
            .measurementTime(TimeValue.milliseconds(cut ? 50 : quick ? 100 : 1000))
            .addProfiler(GCProfiler.class)
            .shouldFailOnError(true);
    }

    private static String pattern(final String benchmark)
    {
        return "dev\\.pinarena\\.perf\\." + benchmark + "\\.";
    }

    /** @return the runs JMH makes of a class: each method (or group) times each combination of parameters. */
    private static int runsOf(final String benchmark)
    {
        final OutputFormat silent = OutputFormatFactory.createFormatInstance(System.out, VerboseMode.SILENT);
        int runs = 0;
        for (final BenchmarkListEntry entry : BenchmarkList.defaultList().find(silent, List.of(pattern(benchmark)), List.of()))
        {
            int combinations = 1;
            for (final String[] values : entry.getParams().orElse(Map.of()).values())
            {
                combinations *= values.length;
            }
            runs += combinations;
        }
        if (runs == 0)
        {
            throw new IllegalStateException("no benchmark of " + benchmark + " in JMH's list");
        }
        return runs;
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

package dev.pinarena.perf.suite;

import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * Two methods of one JMH benchmark measured in interleaved forks, A B, B A, A B, ...: on a machine that
 * other work shares, load that changes during the run falls on both alike, and each round gives one paired
 * difference. Each fork warms up for 5 × 500 ms and measures 200 iterations of 2 ms: some of them run
 * without being preempted. Two figures per fork: JMH's score (the mean over its iterations) and the 10th
 * percentile of its iterations, which a busy machine disturbs least (preemption only ever adds time; the
 * percentile rather than the fastest one, so one lucky iteration does not decide). Prints every fork's
 * figures, then
 * for each figure the mean difference B − A with its 95 % confidence interval (Student's t over the
 * rounds), the median difference (one disturbed fork moves it little) and the ratio of the means, with
 * the load average before and after.
 * <p>
 * Usage: {@code PairedForks BENCHMARK_CLASS METHOD_A METHOD_B ROUNDS [PARAM=VALUE ...]}, the class by simple
 * name in {@code dev.pinarena.perf}, each parameter given one value. The stale-free check of a handle:
 * {@code PairedForks AllocateFreeBenchmark pinnedArena pinnedArenaHandle 16 size=64}.
 */
public final class PairedForks
{
    /** Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom. */
    private static final double[] T95 = {
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};

    private PairedForks()
    {
    }

    /**
     * @param args benchmark class, method A, method B, rounds.
     * @throws RunnerException if JMH fails.
     * @throws IOException     if the load average cannot be read.
     */
    public static void main(final String[] args) throws RunnerException, IOException
    {
        if (args.length < 4 || Integer.parseInt(args[3]) < 2)
        {
            System.err.println("usage: PairedForks BENCHMARK_CLASS METHOD_A METHOD_B ROUNDS [PARAM=VALUE ...] (ROUNDS >= 2)");
            System.exit(2);
        }
        final String[] params = Arrays.copyOfRange(args, 4, args.length);
        final String prefix = "dev\\.pinarena\\.perf\\." + args[0] + "\\.";
        final int rounds = Integer.parseInt(args[3]);
        final double[][] a = new double[2][rounds];
        final double[][] b = new double[2][rounds];
        final String loadBefore = loadAverage();
        for (int round = 0; round < rounds; round++)
        {
            final double[] first;
            final double[] second;
            if (round % 2 == 0)
            {
                first = score(prefix + args[1], params);
                second = score(prefix + args[2], params);
            }
            else
            {
                second = score(prefix + args[2], params);
                first = score(prefix + args[1], params);
            }
            for (int figure = 0; figure < 2; figure++)
            {
                a[figure][round] = first[figure];
                b[figure][round] = second[figure];
            }
            System.out.printf(Locale.ROOT, "round %d: %s %.3f (p10 %.3f)  %s %.3f (p10 %.3f)%n",
                round + 1, args[1], first[0], first[1], args[2], second[0], second[1]);
        }
        report("score", args[1], args[2], a[0], b[0]);
        report("10th percentile of iterations", args[1], args[2], a[1], b[1]);
        System.out.println("load average before: " + loadBefore + "; after: " + loadAverage());
    }

    private static void report(final String figure, final String nameA, final String nameB, final double[] a, final double[] b)
    {
        final int rounds = a.length;
        final double t = T95[Math.min(rounds - 1, T95.length) - 1];
        final double[] difference = new double[rounds];
        for (int round = 0; round < rounds; round++)
        {
            difference[round] = b[round] - a[round];
        }
        System.out.printf(Locale.ROOT, "%s: %s %.3f ± %.3f, %s %.3f ± %.3f; %s - %s %.3f ± %.3f (paired), " +
            "median %.3f; ratio of means %.4f (95%% CI over %d rounds)%n",
            figure, nameA, mean(a), t * deviation(a) / Math.sqrt(rounds), nameB, mean(b),
            t * deviation(b) / Math.sqrt(rounds), nameB, nameA, mean(difference),
            t * deviation(difference) / Math.sqrt(rounds), median(difference), mean(b) / mean(a), rounds);
    }

    /** @return JMH's score of one fork and the 10th percentile of its iterations. */
    private static double[] score(final String include, final String[] params) throws RunnerException
    {
        final ChainedOptionsBuilder options = new OptionsBuilder()
            .include(include + "$")
            .forks(1)
            .warmupIterations(5)
            .warmupTime(TimeValue.milliseconds(500))
            .measurementIterations(200)
            .measurementTime(TimeValue.milliseconds(2))
            .shouldFailOnError(true);
        for (final String param : params)
        {
            final int eq = param.indexOf('=');
            if (eq <= 0)
            {
                throw new IllegalArgumentException("a parameter is NAME=VALUE, not " + param);
            }
            options.param(param.substring(0, eq), param.substring(eq + 1));
        }
        final Collection<RunResult> results = new Runner(options.build()).run();
        if (results.size() != 1)
        {
            throw new IllegalStateException(include + " matched " + results.size() + " benchmarks, expected 1");
        }
        final RunResult result = results.iterator().next();
        final List<Double> iterations = new ArrayList<>();
        for (final BenchmarkResult fork : result.getBenchmarkResults())
        {
            for (final IterationResult iteration : fork.getIterationResults())
            {
                iterations.add(iteration.getPrimaryResult().getScore());
            }
        }
        Collections.sort(iterations);
        return new double[] {result.getPrimaryResult().getScore(), iterations.get(iterations.size() / 10)};
    }

    private static double mean(final double[] values)
    {
        double sum = 0;
        for (final double value : values)
        {
            sum += value;
        }
        return sum / values.length;
    }

    private static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        final int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }

    private static double deviation(final double[] values)
    {
        final double mean = mean(values);
        double sum = 0;
        for (final double value : values)
        {
            sum += (value - mean) * (value - mean);
        }
        return Math.sqrt(sum / (values.length - 1));
    }

    private static String loadAverage() throws IOException
    {
        return Files.readString(Path.of("/proc/loadavg")).trim();
    }
}

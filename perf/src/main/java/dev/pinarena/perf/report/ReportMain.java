package dev.pinarena.perf.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes {@code REPORT.md} and its PNG charts from one run's results directory.
 * <p>
 * Usage: {@code ReportMain RESULTS_DIR REPORT_DIR [MODE]}. Every section reads its own files from RESULTS_DIR
 * and says so when they are missing, so a partial run still gives an honest report.
 */
public final class ReportMain
{
    private ReportMain()
    {
    }

    /**
     * @param args results dir, report dir, optional mode label (quick/full).
     * @throws IOException if reading or writing fails.
     */
    public static void main(final String[] args) throws IOException
    {
        if (args.length < 2)
        {
            System.err.println("usage: ReportMain RESULTS_DIR REPORT_DIR [quick|full]");
            System.exit(2);
        }
        System.setProperty("java.awt.headless", "true");
        final Path results = Path.of(args[0]);
        final Path report = Path.of(args[1]);
        final String mode = args.length > 2 ? args[2] : "full";
        Files.createDirectories(report);

        final List<ReportSection> sections = new ArrayList<>();
        final JmhRuns jmh = JmhRuns.read(results.resolve("jmh.csv"));
        final List<String> javaAlternatives = List.of("nettyPooled", "allocateDirect", "registerEach");
        sections.add(new JmhComparisonSection(jmh, "How much faster is allocate + free (Java, one thread)?",
            "One thread allocates and frees one buffer: the pinned arena (`pinnedArena`: registered memory, lkey ready) " +
            "against Netty's `PooledByteBufAllocator` direct buffers, `ByteBuffer.allocateDirect` (freed at once) and " +
            "malloc + register per buffer with the same io_uring registrar (`registerEach`, the naive path).",
            "AllocateFreeBenchmark", "pinnedArena", javaAlternatives, "allocate-free-1thread.png"));
        sections.add(new JmhComparisonSection(jmh, "How much faster is allocate + free across threads (Java, two threads)?",
            "Two threads each allocate a buffer, hand it to the other and free the one they were handed: almost " +
            "every free is a cross-thread free. One op = one allocate and one free on each thread.",
            "CrossThreadFreeBenchmark", "pinnedArena", javaAlternatives, "allocate-free-2threads.png"));
        sections.add(new JmhComparisonSection(jmh, "How much faster is a batch (Java, one thread)?",
            "One thread allocates 256 buffers, then frees them all, as a sender filling a window does; one op = one " +
            "buffer allocated and freed.",
            "BatchBenchmark", "pinnedArena", List.of("nettyPooled"), "batch.png"));
        sections.add(new JmhComparisonSection(jmh, "How much faster are many producers to one consumer (Java, three threads)?",
            "Two threads allocate buffers and hand them to one thread that frees them all (every free a cross-thread " +
            "free); one op = a producer's allocate or the consumer's poll-and-free.",
            "ManyToOneBenchmark", "pinnedArena", List.of("nettyPooled"), "many-to-one.png"));
        sections.add(new JmhComparisonSection(jmh, "How much faster is Netty's own allocator interface on arena memory?",
            "`ByteBufAllocator.directBuffer(size)`, write and read a long, `release()`: pinarena's " +
            "`PinnedByteBufAllocator` (arena memory, registered) against Netty's `PooledByteBufAllocator`.",
            "NettyAllocatorBenchmark", "pinnedAllocator", List.of("nettyPooled"), "netty-allocator.png"));
        sections.add(new JmhComparisonSection(jmh, "What does one send's memory handling cost with each strategy?",
            "Before a work request can be posted the sender needs a registered buffer and its lkey: register the " +
            "application's buffer per send (`registerPerSend`), find it in a registration cache (`registrationCacheHit`, " +
            "the cache's best case, a hit with no invalidation pending), or take a buffer from the arena " +
            "(`arenaBuffer`: allocate + lkey + free, nothing to register).",
            "SendMemoryBenchmark", "arenaBuffer", List.of("registrationCacheHit", "registerPerSend"), "send-cost.png"));
        sections.add(new RegistrationCostSection(CostCurves.read(List.of(
            results.resolve("reg-cost-io_uring.csv"), results.resolve("reg-cost-verbs.csv")))));
        sections.add(new MallocSection(MallocRuns.read(results.resolve("malloc.csv"))));
        sections.add(new MimallocBenchSection(MimallocBenchRuns.read(results.resolve("mimalloc-bench.csv"))));
        sections.add(new PythonTestsSection(PythonTestRuns.read(results.resolve("python-tests.csv"))));
        sections.add(new MpiSavingsSection(MpiLoops.read(results.resolve("mpi-savings.csv"))));
        sections.add(new MpiAppsSection(MpiAppRuns.read(List.of(
            results.resolve("mpi-apps-host.csv"), results.resolve("mpi-apps-rxe0.csv")))));
        final RunTimeSection runTime = RunTimeSection.read(results);
        sections.add(runTime);

        final StringBuilder md = new StringBuilder();
        md.append("# pinarena performance report\n\n");
        md.append("Measured by `./pinarena bench").append("quick".equals(mode) ? " --quick" : "")
            .append("` in a ").append(mode).append(" run started ").append(runStarted(results)).append(". ");
        if (runTime.stepsRunAgain() == 0)
        {
            md.append("Every ratio compares measurements taken in this same run.\n\n");
        }
        else
        {
            md.append(runTime.stepsRunAgain()).append(" of its steps were run again after it (`--step`; the run-time ")
                .append("table at the end says when, on which commit): every ratio compares measurements taken in ")
                .append("one run of its step.\n\n");
        }
        md.append("Machine:\n\n");
        for (final String line : Machine.describe())
        {
            md.append("- ").append(line).append('\n');
        }
        md.append('\n');
        for (final ReportSection section : sections)
        {
            section.write(md, report);
        }
        Files.writeString(report.resolve("REPORT.md"), md.toString(), StandardCharsets.UTF_8);
        System.err.println("wrote " + report.resolve("REPORT.md"));
    }

    /**
     * When the whole run began: its results' {@code mode} file is written at its start, and only then (a step run
     * again with {@code --step}, or the report written again from the same results, leaves it alone); now when
     * there is none (results put together by hand).
     */
    static String runStarted(final Path results) throws IOException
    {
        final Path mode = results.resolve("mode");
        final Instant started = Files.exists(mode) ? Files.getLastModifiedTime(mode).toInstant() : Instant.now();
        return started.truncatedTo(ChronoUnit.SECONDS).toString();
    }
}

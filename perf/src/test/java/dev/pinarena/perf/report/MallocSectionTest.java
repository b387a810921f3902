package dev.pinarena.perf.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The malloc section names the workloads whose reference allocators' own runs spread past
 * {@link MallocSection#NOISY_SPREAD}, with those spreads, and says so when none did; the shim's own spread does not
 * count (it is what is measured).
 */
class MallocSectionTest
{
    private static final String HEADER = "workload,allocator,run,seconds,peak_kib";
    private static final List<String> ALLOCATORS = List.of("glibc", "jemalloc", "mimalloc", "tcmalloc", "pinarena");

    /** Three runs of every allocator at these seconds, one workload. */
    private static List<String> rows(final String workload, final double[] glibc, final double[] mimalloc,
        final double[] pinarena)
    {
        final List<String> rows = new ArrayList<>();
        for (int run = 0; run < 3; run++)
        {
            for (final String allocator : ALLOCATORS)
            {
                final double seconds = switch (allocator)
                {
                    case "glibc" -> glibc[run];
                    case "mimalloc" -> mimalloc[run];
                    case "pinarena" -> pinarena[run];
                    default -> 1.0;
                };
                rows.add(workload + "," + allocator + "," + (run + 1) + "," + seconds + ",1024");
            }
        }
        return rows;
    }

    /** Runs read back from a CSV of these workloads' rows, as collect.sh writes it. */
    @SafeVarargs
    private static MallocRuns runs(final Path dir, final List<String>... workloads) throws IOException
    {
        final List<String> lines = new ArrayList<>(List.of(HEADER));
        for (final List<String> workload : workloads)
        {
            lines.addAll(workload);
        }
        final Path csv = dir.resolve("malloc.csv");
        Files.write(csv, lines);
        return MallocRuns.read(csv);
    }

    /** The section as written from these runs. */
    private static String section(final MallocRuns runs, final Path dir) throws IOException
    {
        final StringBuilder md = new StringBuilder();
        new MallocSection(runs).write(md, dir);
        return md.toString();
    }

    @Test
    void namesNoisyWorkloadsByTheReferencesSpread(@TempDir final Path dir) throws Exception
    {
        final MallocRuns runs = runs(dir,
            rows("steady", new double[] {1.0, 1.1, 1.2}, new double[] {0.5, 0.52, 0.55},
                new double[] {0.4, 0.9, 2.0}),                                     // the shim's spread is not noise
            rows("aligned", new double[] {0.036, 0.037, 0.06}, new double[] {0.027, 0.03, 0.028},
                new double[] {0.03, 0.03, 0.03}),
            rows("regrow", new double[] {0.5, 0.5, 0.5}, new double[] {1.6, 3.2, 1.7},
                new double[] {0.5, 0.5, 0.5}));

        assertEquals(List.of("aligned (glibc 1.67×, mimalloc 1.11×)", "regrow (glibc 1.00×, mimalloc 2.00×)"),
            MallocSection.noisyWorkloads(runs));
        final String md = section(runs, dir);
        assertTrue(md.contains("Noisy rounds (glibc's or mimalloc's own slowest run past 1.25 × their fastest"
            + ": load from elsewhere, or a workload with two states): aligned (glibc 1.67×, mimalloc 1.11×); regrow"
            + " (glibc 1.00×, mimalloc 2.00×). Their ratios are less certain; `./pinarena bench --step malloc`"), md);
    }

    @Test
    void timeRatiosAreMediansOfPerRoundRatios(@TempDir final Path dir) throws Exception
    {
        // round 3 has a burst of load on mimalloc's run... and the machine is slower in rounds 2-3 for everyone
        // but the shim's round 3: a ratio of medians would say 1.0 / 2.0 = 0.50
        final MallocRuns runs = runs(dir, rows("churn", new double[] {2.0, 2.0, 2.0}, new double[] {1.0, 2.0, 3.0},
            new double[] {0.9, 1.9, 1.0}));

        final Samples r = runs.timeRatios("churn", "pinarena", "mimalloc");
        assertEquals(0.90, r.median(), 1e-9);
        final String md = section(runs, dir);
        assertTrue(md.contains("| churn | 0.50 (0.45–0.95) | 0.90 (0.33–0.95) |"), md);
        // the rounds the shim's ratios come from: a short workload runs more than the others
        assertTrue(md.contains("| churn | 0.50 (0.45–0.95) | 0.90 (0.33–0.95) | 1.00 (0.90–1.90) | 1.00 (0.90–1.90) | "
            + "1.00 | 1.00 | 0 of 3 |"), md);
        assertTrue(md.contains("Slower than mimalloc beyond this machine's noise (so many rounds above it"), md);
        assertTrue(md.contains("the sign test of the MPI table): none."), md);
    }

    @Test
    void slowerBeyondNoiseWhenAboveMimallocInEnoughRounds(@TempDir final Path dir) throws Exception
    {
        // aligned: 1 % past mimalloc in all 5 rounds (1 in 32 by chance); churn: 5 % past in 4 of 5 (6 in 32)
        final List<String> rows = new ArrayList<>();
        final double[] churn = {1.05, 1.05, 1.05, 1.05, 0.95};
        for (int run = 1; run <= 5; run++)
        {
            for (final String allocator : ALLOCATORS)
            {
                final boolean shim = allocator.equals("pinarena");
                rows.add("aligned," + allocator + "," + run + "," + (shim ? 1.01 : 1.0) + ",1024");
                rows.add("churn," + allocator + "," + run + "," + (shim ? churn[run - 1] : 1.0) + ",1024");
            }
        }
        final String md = section(runs(dir, rows), dir);
        assertTrue(md.contains("| 1.00 | 1.00 | 5 of 5 |"), md);
        assertTrue(md.contains("| 1.00 | 1.00 | 4 of 5 |"), md);
        assertTrue(md.contains("the sign test of the MPI table): aligned."), md);
    }

    @Test
    void steadyRoundsAreSaidSteady(@TempDir final Path dir) throws Exception
    {
        final MallocRuns runs = runs(dir, rows("churn", new double[] {0.50, 0.51, 0.52},
            new double[] {0.21, 0.22, 0.22}, new double[] {0.21, 0.22, 0.25}));

        assertTrue(MallocSection.noisyWorkloads(runs).isEmpty());
        final String md = section(runs, dir);
        assertTrue(md.contains("Every workload's rounds were steady: glibc's and mimalloc's own slowest run "
            + "within 1.25 × their fastest."), md);
    }
}
